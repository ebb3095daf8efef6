"""A twenty-fifth set of realistic batch scripts (tests/fixtures/scripts_unseen25/<dialect>/).

Each is parsed and compared with its EXPECTED row, its needs read, and translated into
every dialect (its own too) and read back (tests/scripts_unseen_check.py), then the
translations a user would look at are checked line by line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, translate
from diamond_jupyter.model import BadInput
from tests.scripts_unseen_check import (
    ALL_STRICT,
    COMPARED_FIELDS,
    sweep_tests,
    translated,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen25"

# As in the earlier sweeps (tests/scripts_unseen_check.py names the keys).
EXPECTED: dict[str, dict[str, Any]] = {
    "flux/conf_noverify_exclusive_queue.flux": dict(
        nodes=8, tasks=8, cpus=8, walltime=21600, unknown=["--conf"], queue="pbatch",
        exclusive=True),
    "flux/crlf_tabs_chinese_name.flux": dict(
        tasks=4, cpus=4, walltime=2700, name="模拟"),
    "flux/dependency_after_start.flux": dict(
        tasks=1, cpus=1, walltime=600, deps=[("after", ["fA1b2C3d4"])], name="follower"),
    "flux/env_set_and_env_remove.flux": dict(
        tasks=4, cpus=4, walltime=1800, unknown=["--env-remove"],
        variables={"OMP_NUM_THREADS": "4"}),
    "flux/gpus_per_slot_cores_per_slot_bank_queue.flux": dict(
        nodes=2, tasks=4, cpus=32, gpus=8, walltime=10800, queue="pgpu", account="ml",
        needs_gpus=4),
    "flux/heredoc_flux_lines_inside.flux": dict(
        tasks=1, cpus=1, walltime=300, ignored=2),
    "flux/injection_in_name_and_cwd.flux": dict(
        tasks=1, cpus=1, walltime=300, name="x;id", working_directory="/tmp/$(id)"),
    "flux/output_error_id_label_io.flux": dict(
        nodes=1, tasks=2, cpus=2, walltime=1200, unknown=["--label-io"], stdout="out.%j.log",
        stderr="err.%j.log"),
    "flux/requires_properties_and_signal.flux": dict(
        nodes=1, tasks=16, cpus=16, walltime=5400, unknown=["--requires", "--signal"]),
    "flux/setattr_requires_hosts_conf.flux": dict(
        nodes=2, tasks=8, cpus=32, gpus=8, walltime=7200, unknown=["--requires", "--conf"],
        account="abc", needs_gpus=4),
    "flux/urgency_zero_is_a_hold.flux": dict(
        tasks=2, cpus=2, walltime=3600, name="parked", hold=True),
    "lsf/R_select_rusage_duration_span_order_same.lsf": dict(
        nodes=4, tasks=32, cpus=32, memory_mb=128000, walltime=28800,
        unknown=["-R select", "-R rusage", "-R order", "-R same"], name="resreq_all",
        queue="normal", stdout="out.%j", per_cpu=4000),
    "lsf/W_We_mem_rusage_ptile24.lsf": dict(
        nodes=2, tasks=48, cpus=48, memory_mb=96000, walltime=86400, unknown=["-We", "-M"],
        name="est_long", per_cpu=2000),
    "lsf/affinity_distribute_balance_x.lsf": dict(
        tasks=8, cpus=32, walltime=10800, unknown=["-R affinity"], name="bal", exclusive=True),
    "lsf/array_index_list_throttle_quoted.lsf": dict(
        tasks=1, cpus=1, walltime=1800, array="1,3,5-9%2", name="scan",
        stdout="logs/scan.%j.%a.out"),
    "lsf/b_full_date_and_mail_B_N.lsf": dict(
        tasks=1, cpus=1, walltime=600, name="newyear", mail_events=["begin", "end"],
        mail_user="ops@site.example", begin="2026-12-31T23:30:00"),
    "lsf/compound_gpu_and_cpu_parts.lsf": dict(
        tasks=10, cpus=10, gpus=1, walltime=14400, unknown=["-R{1} select", "-R{2} select"],
        name="hybrid_parts", needs_gpus=1),
    "lsf/crlf_tabs_comment_after_spanish.lsf": dict(
        nodes=1, tasks=12, cpus=12, walltime=3600, name="cálculo", stdout="%j_%a.out"),
    "lsf/env_none_with_value_L_shell.lsf": dict(
        tasks=2, cpus=2, walltime=1200, unknown=["-L"], name="env_none", export_all=False,
        variables={"RUN_MODE": "fast"}),
    "lsf/gpu_bare_num_and_queue_project_outdir.lsf": dict(
        tasks=1, cpus=1, gpus=1, walltime=21600, name="one_gpu", queue="gpu_v100",
        account="AI_TEAM", stdout="logs/%j.out", stderr="logs/%j.err", needs_gpus=1),
    "lsf/gpu_num2_exclusive_mps_span_hosts1.lsf": dict(
        nodes=1, tasks=4, cpus=4, gpus=2, walltime=7200, unknown=["-gpu mode", "-gpu mps"],
        name="mps_pair", queue="gpu", needs_gpus=2),
    "lsf/heredoc_bsub_lines_then_bsub.lsf": dict(
        tasks=1, cpus=1, walltime=300, name="spawner", ignored=3),
    "lsf/select_type_ncpus_exclusive_project.lsf": dict(
        nodes=2, tasks=64, cpus=64, walltime=43200, unknown=["-R select"], name="big_x86",
        queue="normal", account="proj_cfd", exclusive=True),
    "lsf/w_done_or_exit.lsf": dict(
        tasks=1, cpus=1, walltime=900, deps=[("afterok", ["6001"]), ("afternotok", ["6002"])],
        name="either"),
    "pbs/array_thousand_small_rerun.pbs": dict(
        nodes=1, tasks=1, cpus=1, memory_mb=500, walltime=900, array="1-1000", name="many_small",
        stdout="logs/", requeue=True, needs_mem=500),
    "pbs/comments_after_and_directive_after_command.pbs": dict(
        nodes=1, tasks=1, cpus=8, walltime=5400, name="trailing", ignored=1),
    "pbs/crlf_tabs_greek_name.pbs": dict(
        nodes=1, tasks=1, cpus=4, memory_mb=16384, walltime=7200, name="εργασία", needs_mem=16384),
    "pbs/depend_afterany_array_parent_server.pbs": dict(
        nodes=1, tasks=1, cpus=2, memory_mb=8192, walltime=1800,
        deps=[("afterany", ["77120[].pbs-srv01"])], name="gather", needs_mem=8192),
    "pbs/heredoc_pbs_lines_inside_after_command.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, name="maker", ignored=3),
    "pbs/jobwide_ncpus_mem_walltime_seconds_module.pbs": dict(
        cpus=24, memory_mb=98304, walltime=5400, unknown=["-P"], name="jobwide", needs_mem=98304),
    "pbs/mail_two_users_abe_join_dir.pbs": dict(
        nodes=1, tasks=1, cpus=8, memory_mb=20480, walltime=10800, name="notify_me",
        stdout="/scratch/proj/logs", mail_events=["fail", "begin", "end"],
        mail_user="a.user@lab.example,b.user@lab.example", needs_mem=20480),
    "pbs/place_scatter_group_rack_nodetype.pbs": dict(
        nodes=4, tasks=128, cpus=128, walltime=36000,
        unknown=["-l select:nodetype", "-l place:scatter", "-l place:group=rack"],
        name="rack_local"),
    "pbs/select_gpus_ompthreads_scatter_excl_array.pbs": dict(
        nodes=2, tasks=64, cpus=128, gpus=8, memory_mb=983040, walltime=21600, array="1-9:2",
        unknown=["-l select:ompthreads", "-l place:scatter"], name="md_replicas", queue="gpu",
        account="MAT2026", exclusive=True, needs_gpus=4, needs_mem=491520),
    "pbs/select_host_chunk_plus_gpu_chunk_pack.pbs": dict(
        nodes=1, tasks=3, cpus=36, gpus=4, memory_mb=139264, walltime=14400,
        unknown=["-l place:pack"], name="head_gpu", needs_gpus=4, needs_mem=139264),
    "pbs/torque_gpus_pmem_array_throttle_afterokarray.pbs": dict(
        nodes=1, tasks=8, cpus=8, gpus=2, memory_mb=32768, walltime=18000, array="1-10%2",
        deps=[("afterok", ["40211[]"])], name="tq_gpu_arr", needs_gpus=2, per_cpu=4096),
    "pbs/uppercase_GB_queue_at_server_long.pbs": dict(
        nodes=3, tasks=3, cpus=48, memory_mb=196608, walltime=360000, unknown=["-l place:scatter"],
        name="longrun", queue="long", needs_mem=65536),
    "pbs/v_quoted_commas_and_V.pbs": dict(
        nodes=1, tasks=1, cpus=4, walltime=3600, name="envy",
        variables={"CASE": "alpha", "NSTEPS": "500"}),
    "sge/crlf_tabs_german_comment.sge": dict(
        nodes=1, cpus=2, walltime=1800, name="Messung_äöü"),
    "sge/dev_null_out_err_dir_j_n.sge": dict(
        walltime=300, name="quietish", stdout="/dev/null", stderr="logs/"),
    "sge/exclusive_pe_orte_128.sge": dict(
        tasks=128, cpus=128, walltime=86400, unknown=["-P"], name="wide", exclusive=True),
    "sge/gpu_two_pe_smp_h_rt.sge": dict(
        nodes=1, cpus=8, gpus=2, memory_mb=65536, walltime=43200, name="gpu2", queue="gpu.q",
        needs_gpus=2, per_cpu=8192),
    "sge/h_rt_seconds_s_rt_notify.sge": dict(
        nodes=1, cpus=4, walltime=86400, unknown=["-l s_rt", "-notify"], name="softlimit"),
    "sge/hold_jid_ids_and_a_seconds.sge": dict(
        walltime=600, deps=[("afterany", ["123", "456"])], name="after_two",
        begin="2026-12-31T12:00:30"),
    "sge/mem_free_h_vmem_threaded_short_fields.sge": dict(
        nodes=1, cpus=8, memory_mb=32768, walltime=3600, unknown=["-l mem_free"], name="thr8",
        per_cpu=4096),
    "sge/pe_mpi_h_rt_h_vmem_binding_R_y.sge": dict(
        tasks=64, cpus=64, memory_mb=131072, walltime=172800, unknown=["-binding", "-R"],
        name="mpi64", queue="all.q", per_cpu=2048),
    "sge/project_account_mail_bea.sge": dict(
        nodes=1, cpus=16, walltime=7200, unknown=["-P"], name="mailer", account="acct_bio",
        mail_events=["begin", "end", "fail"], mail_user="me@bio.example"),
    "sge/t_step_tc_hold_jid_ad_name.sge": dict(
        walltime=2400, array="1-500:5%20", unknown=["-hold_jid_ad"], name="stage_b",
        stdout="logs/%x.%a.out"),
    "sge/v_list_vars_and_V_module.sge": dict(
        walltime=3600, name="vvars", variables={"OMP_NUM_THREADS": "4", "DATA": "/data/set1"}),
    "slurm/array_step_throttle_gpus_per_task_mem_per_gpu.sbatch": dict(
        tasks=2, cpus=16, gpus=2, memory_mb=81920, walltime=12600, array="2-30:4%3",
        name="hpo_sweep", queue="gpu", stdout="hpo_%A_%a.out", needs_gpus=1, per_cpu=5120),
    "slurm/bigmem_constraint_brackets_days.sbatch": dict(
        nodes=1, tasks=1, cpus=128, memory_mb=512000, walltime=172800, name="assembly",
        queue="bigmem", features=["[rome|milan]"], needs_mem=512000),
    "slurm/crlf_tabs_unicode_mail_dhm.sbatch": dict(
        tasks=6, cpus=6, memory_mb=12288, walltime=14400, name="Übung_ß",
        mail_events=["end", "fail"], mail_user="jörg@uni.example", needs_mem=12288),
    "slurm/dependency_array_element_notok_kill_no.sbatch": dict(
        tasks=1, cpus=1, walltime=1200,
        deps=[("afternotok", ["9100233_7"]), ("afterany", ["9100240"])],
        unknown=["--kill-on-invalid-dep"], name="retry_failed"),
    "slurm/export_list_without_all.sbatch": dict(
        tasks=12, cpus=12, walltime=1800, name="clean_env", export_all=False,
        variables={"NPROC": "12"}, passed=["HOME", "USER", "TERM"]),
    "slurm/glued_short_options_gpus_total.sbatch": dict(
        nodes=2, tasks=8, cpus=32, gpus=8, walltime=3600, name="glued", stdout="%x-%j.out",
        needs_gpus=4),
    "slurm/gres_typed_a100_mem_per_cpu_mb.sbatch": dict(
        nodes=2, tasks=2, cpus=32, gpus=4, memory_mb=112000, walltime=43200, name="a100pair",
        gpu_type="a100", needs_gpus=2, per_cpu=3500),
    "slurm/heredoc_child_job_sbatch_lines.sbatch": dict(
        tasks=1, cpus=1, walltime=300, name="parent", ignored=3),
    "slurm/hetjob_licenses_dependency_afterok.sbatch": dict(
        nodes=5, tasks=257, cpus=264, memory_mb=519168, walltime=7200,
        deps=[("afterok", ["7781203"])], unknown=["--licenses"], name="coupled", account="cfd_lab",
        needs_mem=121600),
    "slurm/mem0_exclusive_gpus_per_node_typed_bind.sbatch": dict(
        nodes=4, tasks=16, cpus=384, gpus=16, walltime=129600, name="llm_ft", gpu_type="h100",
        exclusive=True, needs_gpus=4),
    "slurm/module_loads_then_late_directive.sbatch": dict(
        tasks=64, cpus=64, walltime=21600, name="late", ignored=1),
    "slurm/option_injection_in_values.sbatch": dict(
        tasks=2, cpus=2, walltime=600, unknown=["-rf"], name="inj;rm", account="$(whoami)",
        stdout="out`id`.log"),
    "slurm/partition_qos_account_licenses_multi.sbatch": dict(
        tasks=16, cpus=16, walltime=28800, unknown=["--licenses"], name="cfx_big",
        queue="gpu-a100-80g", account="abc123", qos="high"),
    "slurm/quoted_name_comment_hash_trailing.sbatch": dict(
        tasks=4, cpus=4, walltime=2700, name="mesh refine", stdout="logs/mesh %j.out",
        comment="run #3 of 5"),
    "slurm/time_min_array_list_throttle.sbatch": dict(
        tasks=1, cpus=1, memory_mb=2048, walltime=14400, array="1,4,9,16%2",
        unknown=["--time-min"], name="backfill", per_cpu=2048),
    "slurm/tres_per_task_gres_flags_mem_bind.sbatch": dict(
        nodes=2, tasks=8, cpus=48, gpus=8, walltime=3600, unknown=["--gres-flags", "--mem-bind"],
        name="tres24", needs_gpus=4),
}

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=COMPARED_FIELDS, strict=ALL_STRICT, at_least=60)


# ------------------------------------------------------------ faults found, now fixed

@pytest.mark.parametrize(("line", "said"), [
    ("-A -x", "sets the account to '-x', which starts with '-' (qsub takes it as the account; "
              "but a job here holds only what every scheduler could be given, and bsub reads a "
              "word starting with '-' as an option of its own); an account is a name, and no "
              "scheduler's starts with '-'; give the name"),
    ("-M -u", "sets the mail user to '-u', which starts with '-' (qsub takes it as the mail "
              "user; but a job here holds only what every scheduler could be given, and bsub "
              "reads a word starting with '-' as an option of its own); a mail user is an "
              "address or a user name, and no scheduler's starts with '-'; give the name"),
    ("-q -x", "a queue is a name"),
])
@pytest.mark.parametrize("target", ["slurm", "lsf", "sge"])
def test_a_dash_value_is_refused_in_words_that_fit_it(line: str, said: str, target: str):
    """`#PBS -A -x` was refused saying "a account is a name", `-M -u` "a mail_user is a
    name" (an address is no name). Since sweep 26 refused as the script is read, naming
    its line."""
    text = f"#!/bin/bash\n#PBS -l select=1:ncpus=1\n#PBS {line}\n#PBS -m e\n./a\n"
    with pytest.raises(BadInput) as exc:
        translate(text, target, "pbs")
    assert said in str(exc.value)


@pytest.mark.parametrize(("value", "mb"), [
    # sge_types(1): k, m, g, t multiply by powers of 1000, K, M, G, T by powers of 1024
    ("4g", 3815), ("512m", 489), ("2000000k", 1908), ("1t", 953675),
    ("4G", 4096), ("512M", 512), ("1024K", 1), ("1.5G", 1536), ("4294967296", 4096),
])
def test_grid_engine_lowercase_memory_units_are_powers_of_1000(value: str, mb: int):
    """`-l h_vmem=4g` (the Broad's UGER writes it so) was read as 4096MB, as 4G is: other
    schedulers were asked 7% more than the job asked (Slurm --mem-per-cpu=4G)."""
    spec = get_script_dialect("sge").parse_script(
        f"#!/bin/bash\n#$ -pe smp 2\n#$ -l h_vmem={value}\n./a\n")
    assert spec.resources.memory_per_cpu_mb == mb


def test_grid_engine_lowercase_memory_reaches_slurm_no_larger():
    script, _, _ = translate("#!/bin/bash\n#$ -pe smp 2\n#$ -l h_vmem=4g\n./a\n", "slurm",
                             "sge")
    assert "#SBATCH --mem-per-cpu=3815M" in script.splitlines()


@pytest.mark.parametrize(("source", "lines", "said"), [
    ("pbs", "#PBS -l select=2:ncpus=4:mem=0", "line 2: mem=0"),
    ("pbs", "#PBS -l select=1:ncpus=4:mem=0gb+1:ncpus=2", "line 2: mem=0gb"),
    ("pbs", "#PBS -l ncpus=4\n#PBS -l mem=0", "line 3: mem=0"),
    ("pbs", "#PBS -l nodes=1:ppn=4\n#PBS -l pmem=0kb", "line 3: pmem=0kb"),
    ("lsf", '#BSUB -n 4\n#BSUB -R "rusage[mem=0]"', "line 3: rusage[mem=0]"),
    ("sge", "#$ -pe smp 4\n#$ -l h_vmem=0", "line 3: h_vmem=0"),
])
def test_a_memory_of_0_outside_slurm_is_no_request_not_the_whole_node(source, lines, said):
    """PBS's `mem=0`, LSF's `rusage[mem=0]` and Grid Engine's `h_vmem=0` reserve no memory,
    yet were read as Slurm's `--mem=0` (all memory of each node): Slurm was asked for whole
    nodes' memory (`--mem=0M`, `--mem-per-cpu=0M`), and every other scheduler was told
    "dropped: memory 0 (Slurm's 'all memory of the node')", the script's own too."""
    text = f"#!/bin/bash\n{lines}\n./a\n"
    spec = get_script_dialect(source).parse_script(text)
    assert spec.resources.memory_mb is None and spec.resources.memory_per_cpu_mb is None
    assert any(n.startswith(f"{said} reserves no memory: read as no memory request")
               for n in spec.metadata.get("parse_notes", [])), spec.metadata
    slurm, _, _ = translate(text, "slurm", source)
    assert "--mem" not in slurm
    for target in ("pbs", "lsf", "flux", "sge"):
        try:
            _, warnings, _ = translate(text, target, source)
        except BadInput as exc:  # Grid Engine: no PE gives 4 CPUs to each of 2 tasks
            assert "cannot express" in str(exc)
            continue
        assert not any("all memory of the node" in w for w in warnings), (target, warnings)


def test_slurm_mem_0_is_still_the_whole_node():
    text = "#!/bin/bash\n#SBATCH -N 1\n#SBATCH --mem=0\n./a\n"
    assert get_script_dialect("slurm").parse_script(text).resources.memory_mb == 0
    _, warnings, _ = translate(text, "pbs", "slurm")
    assert "dropped: memory 0 (Slurm's 'all memory of the node'; no pbs form)" in warnings


def test_a_chunks_notes_reach_the_job():
    """A note made while one chunk of several was read (its `mpiprocs=0`) was lost with the
    chunk's own spec."""
    spec = get_script_dialect("pbs").parse_script(
        "#!/bin/bash\n#PBS -l select=1:ncpus=4:mpiprocs=0+2:ncpus=8:mpiprocs=8\n./a\n")
    assert any(n.startswith("line 2: mpiprocs=0: a count of 0 read as not given")
               for n in spec.metadata["parse_notes"]), spec.metadata


@pytest.mark.parametrize("target", ["pbs", "lsf", "flux", "sge"])
@pytest.mark.parametrize("line", ["--mem-per-cpu=0", "--gpus-per-task=1 --mem-per-gpu=0"])
def test_slurm_memory_0_per_cpu_is_said_dropped(target: str, line: str):
    """`--mem-per-cpu=0` reached every other scheduler as no memory at all, unsaid."""
    _, warnings, _ = translate(f"#!/bin/bash\n#SBATCH -n 1\n#SBATCH {line}\n./a\n", target,
                               "slurm")
    assert "dropped: memory 0 per CPU (Slurm's --mem-per-cpu=0; no " \
           f"{target} form)" in warnings, warnings


# ------------------------------------------------------------ what a user sees, carried

@pytest.mark.parametrize(("rel", "target", "lines"), [
    ("slurm/array_step_throttle_gpus_per_task_mem_per_gpu.sbatch", "pbs",
     ["#PBS -l select=2:ncpus=8:mpiprocs=1:ngpus=1:mem=40gb", "#PBS -J 2-30:4%3"]),
    ("slurm/array_step_throttle_gpus_per_task_mem_per_gpu.sbatch", "lsf",
     ["#BSUB -J hpo_sweep[2-30:4]%3", '#BSUB -gpu "num=1/task"']),
    ("slurm/gres_typed_a100_mem_per_cpu_mb.sbatch", "lsf",
     ['#BSUB -gpu "num=2:gmodel=a100"',
      '#BSUB -R "span[ptile=1] rusage[mem=56000MB] affinity[core(16)]"']),
    ("slurm/tres_per_task_gres_flags_mem_bind.sbatch", "flux",
     ["#flux: --nodes=2", "#flux: --nslots=8", "#flux: --cores-per-slot=6",
      "#flux: --gpus-per-slot=1"]),
    ("slurm/mem0_exclusive_gpus_per_node_typed_bind.sbatch", "lsf",
     ['#BSUB -gpu "num=4:gmodel=h100:aff=yes"', "#BSUB -x"]),
    ("slurm/export_list_without_all.sbatch", "flux",
     ["#flux: --env=-*", "#flux: --env=HOME", "#flux: --env=NPROC=12"]),
    ("slurm/export_list_without_all.sbatch", "lsf", ['#BSUB -env "HOME, USER, TERM, NPROC=12"']),
    ("slurm/hetjob_licenses_dependency_afterok.sbatch", "pbs",
     ["#PBS -l select=1:ncpus=8:mpiprocs=1:mem=32gb+4:ncpus=64:mpiprocs=64:mem=121600mb"]),
    ("slurm/time_min_array_list_throttle.sbatch", "lsf", ["#BSUB -J backfill[1,4,9,16]%2"]),
    ("pbs/torque_gpus_pmem_array_throttle_afterokarray.pbs", "slurm",
     ["#SBATCH --gpus-per-node=2", "#SBATCH --mem-per-cpu=4G", "#SBATCH --array=1-10%2"]),
    ("pbs/select_gpus_ompthreads_scatter_excl_array.pbs", "slurm",
     ["#SBATCH --ntasks-per-node=32", "#SBATCH --cpus-per-task=2", "#SBATCH --gpus-per-node=4",
      "#SBATCH --exclusive", "#SBATCH --array=1-9:2"]),
    ("pbs/v_quoted_commas_and_V.pbs", "slurm", ["#SBATCH --export=ALL,CASE=alpha,NSTEPS=500"]),
    ("pbs/mail_two_users_abe_join_dir.pbs", "lsf",
     ["#BSUB -u a.user@lab.example,b.user@lab.example", "#BSUB -B", "#BSUB -N"]),
    ("lsf/gpu_num2_exclusive_mps_span_hosts1.lsf", "slurm",
     ["#SBATCH --nodes=1", "#SBATCH --gpus-per-node=2"]),
    ("lsf/b_full_date_and_mail_B_N.lsf", "pbs", ["#PBS -a 202612312330", "#PBS -m be"]),
    ("lsf/env_none_with_value_L_shell.lsf", "slurm", ["#SBATCH --export=RUN_MODE=fast"]),
    ("lsf/w_done_or_exit.lsf", "lsf", ['#BSUB -w "done(6001) || exit(6002)"']),
    ("flux/gpus_per_slot_cores_per_slot_bank_queue.flux", "slurm",
     ["#SBATCH --account=ml", "#SBATCH --gpus-per-task=2", "#SBATCH --cpus-per-task=8"]),
    ("flux/setattr_requires_hosts_conf.flux", "lsf", ['#BSUB -m "node1 node2 node3 node4"']),
    ("flux/urgency_zero_is_a_hold.flux", "slurm", ["#SBATCH --hold"]),
    ("flux/requires_properties_and_signal.flux", "lsf", ["#BSUB -wa USR2", "#BSUB -wt 10"]),
    ("sge/t_step_tc_hold_jid_ad_name.sge", "slurm",
     ["#SBATCH --array=1-500:5%20", "#SBATCH --output=logs/%x.%a.out"]),
    ("sge/gpu_two_pe_smp_h_rt.sge", "pbs", ["#PBS -l select=1:ncpus=8:ngpus=2:mem=64gb"]),
    ("sge/h_rt_seconds_s_rt_notify.sge", "slurm", ["#SBATCH --signal=USR1@1400"]),
    ("sge/hold_jid_ids_and_a_seconds.sge", "flux", ['#flux: --begin-time="2026-12-31 12:00:30"']),
])
def test_carried_as_a_user_would_write_it(rel: str, target: str, lines: list[str]):
    script, _ = translated(HERE, rel, target)
    for line in lines:
        assert line in script.splitlines(), (line, script)


@pytest.mark.parametrize(("rel", "target", "said"), [
    ("slurm/partition_qos_account_licenses_multi.sbatch", "pbs",
     ["dropped: QOS high", "dropped: #SBATCH -L ansys:2,ansys_hpc:16"]),
    ("slurm/tres_per_task_gres_flags_mem_bind.sbatch", "lsf",
     ["dropped: #SBATCH --gres-flags=allow-task-sharing",
      "dropped: #SBATCH --mem-bind=prefer,local"]),
    ("slurm/dependency_array_element_notok_kill_no.sbatch", "flux",
     ["dropped: dependency afternotok:9100233_7", "dropped: #SBATCH --kill-on-invalid-dep=no"]),
    ("slurm/time_min_array_list_throttle.sbatch", "sge",
     ["approximated: array 1,4,9,16%2 as 1-4:3", "dropped: #SBATCH --time-min=01:00:00"]),
    ("slurm/mem0_exclusive_gpus_per_node_typed_bind.sbatch", "pbs",
     ["dropped: memory 0 (Slurm's 'all memory of the node'", "dropped: GPU type h100",
      "dropped: GPU binding closest"]),
    ("slurm/heredoc_child_job_sbatch_lines.sbatch", "pbs",
     ["line 8: ignored `#SBATCH --ntasks=128` (after the first command"]),
    ("pbs/place_scatter_group_rack_nodetype.pbs", "slurm",
     ["dropped: #PBS -l select=4:ncpus=32:mpiprocs=32:nodetype=skylake",
      "dropped: #PBS -l place=scatter:group=rack"]),
    ("pbs/uppercase_GB_queue_at_server_long.pbs", "lsf",
     ["approximated: line 6: -q long@pbs-srv02: other schedulers get the queue long"]),
    ("pbs/jobwide_ncpus_mem_walltime_seconds_module.pbs", "slurm", ["dropped: #PBS -P proj_x"]),
    ("lsf/R_select_rusage_duration_span_order_same.lsf", "slurm",
     ["dropped: #BSUB -R \"select[mem>64000] rusage[mem=4000:duration=10] span[ptile=8] "
      "order[-slots] same[model]\" (-R same same[model]"]),
    ("lsf/W_We_mem_rusage_ptile24.lsf", "sge",
     ["dropped: #BSUB -We 12:00", "dropped: #BSUB -M 2000"]),
    ("lsf/gpu_num2_exclusive_mps_span_hosts1.lsf", "flux",
     ['dropped: #BSUB -gpu "num=2:mode=exclusive_process:mps=yes" (-gpu mps mps=yes']),
    ("lsf/affinity_distribute_balance_x.lsf", "flux", ["dropped: exclusive node use"]),
    ("flux/conf_noverify_exclusive_queue.flux", "slurm",
     ["dropped: #flux: --conf=resource.noverify=true"]),
    ("flux/env_set_and_env_remove.flux", "sge", ["dropped: #flux: --env-remove=LD_PRELOAD"]),
    ("flux/output_error_id_label_io.flux", "pbs", ["dropped: #flux: --label-io"]),
    ("sge/pe_mpi_h_rt_h_vmem_binding_R_y.sge", "lsf",
     ["dropped: #$ -binding linear:1", "dropped: #$ -R y"]),
    ("sge/h_rt_seconds_s_rt_notify.sge", "pbs",
     ["dropped: #$ -l s_rt=85000", "dropped: #$ -notify"]),
    ("sge/t_step_tc_hold_jid_ad_name.sge", "lsf", ["dropped: #$ -hold_jid_ad stage_a"]),
    ("sge/exclusive_pe_orte_128.sge", "flux",
     ["dropped: exclusive node use", "dropped: #$ -P physics"]),
])
def test_not_carried_is_said_by_its_line(rel: str, target: str, said: list[str]):
    _, warnings = translated(HERE, rel, target)
    for words in said:
        assert any(w.startswith(words) for w in warnings), (words, warnings)


@pytest.mark.parametrize("target", ["slurm", "pbs", "lsf", "flux", "sge"])
def test_shell_text_in_values_stays_in_directives_quoted(target: str):
    """`$(whoami)`, a backquote and `;` in a name, an account and an output path: written
    quoted on directive lines (which no shell runs), never as a body command."""
    script, warnings = translated(HERE, "slurm/option_injection_in_values.sbatch", target)
    body = [x for x in script.splitlines()[1:] if not x.startswith("#")]
    # (a PBS job starts in the home: the translation enters the submit directory first)
    assert body == ['cd "${PBS_O_WORKDIR:-.}"'] * (target == "pbs") + [
        "flux run hostname" if target == "flux" else "srun hostname"], body
    assert not any(x.startswith("#") and "-rf ~" in x for x in script.splitlines()) \
        or target == "slurm", script  # only its own sbatch gets the stray words back


def test_flux_cwd_with_shell_text_reaches_pbs_as_a_single_quoted_cd():
    script, warnings = translated(HERE, "flux/injection_in_name_and_cwd.flux", "pbs")
    assert "cd '/tmp/$(id)'" in script.splitlines()
    assert any(w.startswith("approximated: working directory /tmp/$(id) (PBS Pro has no -d")
               for w in warnings)


@pytest.mark.parametrize(("letters", "back"), [("s", "#$ -m s"), ("es", "#$ -m es"),
                                               ("bas", "#$ -m bas")])
def test_grid_engine_mail_on_suspend_is_kept_for_grid_engine(letters: str, back: str):
    """`#$ -m s` (mail when the job is suspended) was lost from Grid Engine's own script:
    `-m es` came back as `-m e`, `-m s` as nothing."""
    script, warnings, _ = translate(f"#!/bin/bash\n#$ -m {letters}\n#$ -M a@b.example\n./a\n",
                                    "sge", "sge")
    assert back in script.splitlines(), script


@pytest.mark.parametrize(("source", "lines"), [
    ("sge", "#$ -m s\n#$ -M a@b.example"),
    ("slurm", "#SBATCH -n 1\n#SBATCH --mail-type=TIME_LIMIT_90,REQUEUE\n"
              "#SBATCH --mail-user=a@b.example"),
])
def test_mail_only_on_events_pbs_lacks_is_no_mail_on_abort(source: str, lines: str):
    """Mail asked only on events PBS has no letter for (Grid Engine's suspend, Slurm's
    TIME_LIMIT_90): PBS got no -m, so qsub mailed on abort (-m a, its default), which the
    job never asked; now `-m n`, each event said not carried."""
    script, warnings, _ = translate(f"#!/bin/bash\n{lines}\n./a\n", "pbs", source)
    assert "#PBS -m n" in script.splitlines(), script
    assert "#PBS -M a@b.example" in script.splitlines()
    assert any("suspend" in w or "time_limit_90" in w for w in warnings), warnings


def test_mail_events_pbs_has_still_get_their_letters():
    script, _, _ = translate("#!/bin/bash\n#$ -m ebs\n#$ -M a@b.example\n./a\n", "pbs", "sge")
    assert "#PBS -m eb" in script.splitlines() and "#PBS -m n" not in script


@pytest.mark.parametrize(("rel", "target", "said"), [
    ("slurm/export_list_without_all.sbatch", "lsf",
     "approximated: stdout: no output file is named; slurm writes it to its default file, "
     "slurm-%j.out, lsf mails it to the submitter (no -o)"),
    ("lsf/w_done_or_exit.lsf", "sge",
     "approximated: stdout: no output file is named; lsf mails it to the submitter (no -o), "
     "sge writes it to its default file, <job name>.o<job id>"),
])
def test_no_output_file_between_lsf_and_a_file_writer_is_said(rel: str, target: str,
                                                             said: str):
    """A script naming no output file: Slurm writes slurm-%j.out, bsub mails the output.
    Only a script naming an error file alone was told so; one naming neither moved its
    output between a file and a mail unsaid."""
    _, warnings = translated(HERE, rel, target)
    assert said in warnings, warnings


def test_no_output_file_within_file_writers_says_nothing_of_it():
    _, warnings = translated(HERE, "slurm/export_list_without_all.sbatch", "pbs")
    assert not any(w.startswith("approximated: stdout") for w in warnings), warnings
