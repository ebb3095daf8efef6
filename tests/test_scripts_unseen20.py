"""A twentieth set of realistic batch scripts (tests/fixtures/scripts_unseen20/<dialect>/),
written as users at real sites write them: an ARCHER2-style Slurm job (--qos=standard,
--hint=nomultithread, --time=0:20:0), a job name and a comment holding what a shell or a
submit command would read as options or commands, output paths with blanks (double and
single quoted), --mem-per-cpu in M beside --cpus-per-task, --gpus-per-node=h100:4 with
--mem=0 and --exclusive, a 1000-task array throttled to 50 writing to /dev/null, CRLF line
ends, unicode names, comments and mail users, a hetjob of two partitions, --ntasks with
--ntasks-per-node (the node count derived), --export=ALL with values, --time=0:0:45 with
a reservation, --gpus-per-task with --cpus-per-gpu and --mem-per-gpu; PBS Pro (NCAR-style
gpu_type= in select, -N "my run", -a with seconds, -v quoted, -o $PBS_O_WORKDIR, many
options on one line, -p with -r y and two mail users) and Torque/Moab (walltime with a
days field, -l prologue/epilogue, -W x=FLAGS:ADVRES, -t list with singletons, -l procs
with a CJK name, -l gres= and -l partition=); LSF (LSF 9's rusage[ngpus_excl_p=N], the
process limits -S -F -D -C, -g job groups, quoted paths with blanks, select[mem>N && type]
with -M, -ar with -rnc, -freq, a CRLF array throttle, numended(), -gpu mode=shared:aff=yes,
unicode names and projects, -env none with -cwd, -x -r -N with ptile); Grid Engine
(h_fsize, Sheffield's rmem, -dl, -@ option files, -l joined by commas with a gpu count,
-q all.q@@hostgroup, a CRLF array with $TASK_ID outputs, unicode names, -p -500 -notify,
s_cpu/h_cpu, arch=lx-amd64, -sync y with -a); flux (-t 0.5d, --begin-time=+30m,
gpu-affinity=off, --input, --requires=hosts:..., a quoted name with a blank, --rlimit and
--env-file, CRLF with --gpus-per-task, {{id}} outputs with --bank, --nslots and
--cores-per-slot with a unicode name, --quiet, --urgency=0 with --exclusive).

Each is parsed and compared with its EXPECTED row, its needs read, and translated into
every dialect (its own too) and read back (tests/scripts_unseen_check.py). Faults found,
each fixed and shown by a test here that failed before: flux's `--requires=hosts:LIST`
(the spelling flux's own manual gives; `hostlist:` and `ranks:` are read too) was taken
for a node property, so its hosts reached no other scheduler (Slurm got no --nodelist)
and placement read no host terms; LSF 9's GPU usages (`rusage[ngpus_excl_p=N]`,
`ngpus_excl_t`, `ngpus_shared`) were kept unread, so the job's GPUs reached no other
scheduler and placement sent it to sites without GPUs (now read as GPUs per host, as
ngpus_physical is, the mode said LSF's alone, and written back as written for LSF); an
LSF `-w` naming a job id without a condition (bsub's done()) kept the whole -w unread, so
no other scheduler waited for any of its jobs; srun after variables set for it
(`OMP_NUM_THREADS=4 srun`) or after another command (`cd post && srun`), and TACC's ibrun,
reached schedulers without them unsaid; an unquoted `#` inside an #SBATCH value (pyxis'
`--container-image=nvcr.io#nvidia/...`), which ends the line for sbatch, cut the value
unsaid; an array of evenly stepped indexes (`1,3,5,7`) reached Grid Engine as its first
index alone (`-t 1`), though `-t 1-7:2` is the same tasks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.node_lists import named_hosts, requires_terms
from diamond_jupyter.dialects.translate import SCRIPT_DIALECTS, get_script_dialect, translate
from diamond_jupyter.model import BadInput
from diamond_jupyter.needs import needs_of
from tests.scripts_unseen_check import (
    ALL_STRICT,
    COMPARED_FIELDS,
    directive_lines,
    parse_lines,
    read_fixture,
    sweep_tests,
    translated,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen20"
_SENTINELS = {"slurm": "#SBATCH", "pbs": "#PBS", "lsf": "#BSUB", "sge": "#$", "flux": "#flux:"}

# As in the earlier sweeps (tests/scripts_unseen_check.py names the keys): whole-job
# totals, walltime seconds, array, deps, the options kept as unknown directives (in order),
# JobSpec fields; needs_gpus/needs_mem per node. Output paths are in the neutral form.
EXPECTED: dict[str, dict[str, Any]] = {
    # ------------------------------------------------------------ flux
    "flux/begin_time_relative_minutes.flux": dict(
        tasks=1, cpus=1, walltime=300, name="soon", begin="now+1800"),
    "flux/crlf_tasks_per_node_gpus_per_task.flux": dict(
        nodes=2, tasks=8, cpus=8, walltime=10800, unknown=["--gpus-per-task"], name="crlfgpu"),
    "flux/exclusive_nodes_urgency_zero.flux": dict(
        nodes=2, tasks=2, cpus=2, walltime=14400, name="held", hold=True, exclusive=True),
    "flux/gpu_affinity_off_queue.flux": dict(
        nodes=1, tasks=4, cpus=4, gpus=4, walltime=3600, name="gaff", queue="pbatch", needs_gpus=4),
    "flux/input_file_stdin.flux": dict(
        tasks=1, cpus=1, walltime=600, unknown=["--input"], name="stdin"),
    "flux/name_with_spaces_quoted.flux": dict(
        tasks=1, cpus=1, walltime=300, name="two words"),
    "flux/nslots_cores_per_slot_nodes_unicode_name.flux": dict(
        nodes=2, tasks=4, cpus=32, walltime=2700, name="σ_run"),
    "flux/output_error_paths_with_id.flux": dict(
        tasks=2, cpus=2, walltime=600, name="logs", account="astro", stdout="logs/%j.out",
        stderr="logs/%j.err"),
    "flux/quiet_wait_event.flux": dict(
        tasks=1, cpus=1, walltime=60, unknown=["--quiet"], name="qw"),
    "flux/requires_hosts_list.flux": dict(
        nodes=4, tasks=4, cpus=4, walltime=1200, unknown=["--requires"], name="hostreq",
        exclusive=True),
    "flux/rlimit_env_file.flux": dict(
        tasks=1, cpus=1, walltime=900, unknown=["--rlimit", "--env-file"], name="rl"),
    "flux/time_limit_half_day.flux": dict(
        nodes=1, tasks=4, cpus=4, walltime=43200, name="halfday"),
    # ------------------------------------------------------------ lsf
    "lsf/autoresize_rnc.lsf": dict(
        tasks=4, cpus=4, walltime=7200, unknown=["-n", "-ar", "-rnc"], name="elastic"),
    "lsf/crlf_array_throttle.lsf": dict(
        tasks=1, cpus=1, walltime=1800, array="1-20%4", name="crlf_arr", stdout="logs/%j_%a.out"),
    "lsf/env_none_cwd_uppercase_mem_unit.lsf": dict(
        tasks=2, cpus=2, memory_mb=4096, walltime=2700, name="envnone",
        working_directory="/work/u/run1", per_cpu=2048, export_all=False),
    "lsf/freq_smt.lsf": dict(
        tasks=32, cpus=32, walltime=3600, unknown=["-freq"], name="freqjob", queue="normal"),
    "lsf/gpu_num_mode_shared_aff_yes.lsf": dict(
        nodes=1, tasks=4, cpus=4, gpus=4, walltime=28800, unknown=["-gpu mode"], name="gpuaff",
        queue="gpu_p100", needs_gpus=4),
    "lsf/job_group_g_path.lsf": dict(
        tasks=1, cpus=1, walltime=1800, unknown=["-g"], name="grouped", account="finance"),
    "lsf/limits_stack_file_data_core.lsf": dict(
        tasks=1, cpus=1, walltime=3600, unknown=["-S", "-F", "-D", "-C"], name="limits"),
    "lsf/output_dir_with_spaces_quoted.lsf": dict(
        tasks=1, cpus=1, walltime=600, name="sp job", stdout="/scratch/my runs/%j.out",
        stderr="/scratch/my runs/%j.err"),
    "lsf/rerunnable_exclusive_ptile_nodes.lsf": dict(
        nodes=2, tasks=96, cpus=96, walltime=43200, name="mpi_big", queue="hpc", requeue=True,
        mail_events=["end"], mail_user="me@site.example", exclusive=True),
    "lsf/rusage_ngpus_excl_p_legacy.lsf": dict(
        nodes=1, tasks=2, cpus=2, gpus=1, memory_mb=8192, walltime=14400,
        unknown=["-R rusage (other usages)"], name="legacy_gpu", queue="gpu", stdout="%j.out",
        per_cpu=4096, needs_gpus=1),
    "lsf/select_mem_gt_rusage_type.lsf": dict(
        nodes=1, tasks=8, cpus=8, memory_mb=512000, walltime=86400, unknown=["-R select", "-M"],
        name="bigmem", per_cpu=64000),
    "lsf/unicode_name_project.lsf": dict(
        tasks=1, cpus=1, walltime=300, name="café_run", account="proj_é"),
    "lsf/w_bare_job_ids_and.lsf": dict(
        tasks=1, cpus=1, walltime=1200, deps=[("afterok", ["7301"]), ("afterany", ["7302"])],
        name="merge_parts", queue="short"),
    "lsf/w_numended_array.lsf": dict(
        tasks=1, cpus=1, walltime=900, unknown=["-w"], name="gather"),
    # ------------------------------------------------------------ pbs
    "pbs/a_full_datetime_seconds.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=300, name="later", begin="2027-01-15T12:30:45"),
    "pbs/casper_select_gpu_type_custom.pbs": dict(
        nodes=1, tasks=1, cpus=8, gpus=1, memory_mb=65536, walltime=7200,
        unknown=["-l select:gpu_type"], name="casper_gpu", queue="casper", account="UABC0001",
        gpu_type="v100", needs_gpus=1, needs_mem=65536),
    "pbs/crlf_select_ngpus_scatter.pbs": dict(
        nodes=2, tasks=4, cpus=32, gpus=4, walltime=5400, unknown=["-l place:scatter"],
        name="crlfgpu", needs_gpus=2),
    "pbs/moab_advres_x_flags.pbs": dict(
        nodes=2, tasks=32, cpus=32, walltime=28800, unknown=["-W"], name="resv"),
    "pbs/moab_partition_gres.pbs": dict(
        nodes=1, tasks=8, cpus=8, walltime=7200, unknown=["-l", "-l"], name="licensed"),
    "pbs/name_with_space_quoted.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, name="my run"),
    "pbs/o_workdir_variable.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=300, name="wdvar", stdout="$PBS_O_WORKDIR/out.log"),
    "pbs/priority_rerun_y_mail_list.pbs": dict(
        nodes=1, tasks=1, cpus=4, memory_mb=4000, walltime=10800, unknown=["-p"], name="prio",
        requeue=True, mail_events=["fail", "end"], mail_user="a@x.example,b@y.example",
        needs_mem=4000),
    "pbs/select_one_line_many_l.pbs": dict(
        nodes=2, tasks=96, cpus=96, memory_mb=368640, walltime=43200, name="oneline",
        queue="regular", account="proj42", needs_mem=184320),
    "pbs/torque_prologue_epilogue.pbs": dict(
        nodes=1, tasks=2, cpus=2, walltime=3600, unknown=["-l", "-l"], name="pe"),
    "pbs/torque_t_list_with_singletons.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=1200, array="1-5,7,9", name="picks"),
    "pbs/torque_walltime_days_field.pbs": dict(
        nodes=1, tasks=4, cpus=4, memory_mb=8192, walltime=216000, name="dd", needs_mem=8192),
    "pbs/unicode_name_torque_procs.pbs": dict(
        tasks=24, cpus=24, walltime=21600, name="模拟"),
    "pbs/v_quoted_value_with_comma.pbs": dict(
        nodes=1, tasks=1, cpus=2, walltime=1800, name="vq",
        variables={"INPUT": "/data/in.txt", "LABEL": "run_a"}),
    # ------------------------------------------------------------ sge
    "sge/arch_lx_amd64_h_vmem_per_slot.sge": dict(
        nodes=1, cpus=6, memory_mb=18432, walltime=14400, name="archjob", per_cpu=3072,
        export_all=True),
    "sge/comma_joined_rt_vmem_gpu.sge": dict(
        gpus=2, memory_mb=16384, walltime=43200, name="joined_gpu", queue="gpu.q", per_cpu=16384,
        needs_gpus=2),
    "sge/crlf_array_tc_task_id_output.sge": dict(
        walltime=900, array="1-50%5", name="crlf_arr", stdout="logs/%x.%a.out"),
    "sge/deadline_dl.sge": dict(
        walltime=1800, unknown=["-dl"], name="dl"),
    "sge/h_fsize_limit.sge": dict(
        walltime=3600, unknown=["-l h_fsize"], name="fsize"),
    "sge/option_file_at.sge": dict(
        walltime=600, unknown=["-@"], name="opts"),
    "sge/priority_negative_notify.sge": dict(
        tasks=16, cpus=16, walltime=7200, unknown=["-p", "-notify"], name="lowprio"),
    "sge/queue_hostgroup_at_at.sge": dict(
        nodes=1, cpus=2, walltime=1200, name="hg", queue="all.q"),
    "sge/rmem_sheffield_smp.sge": dict(
        nodes=1, cpus=4, walltime=28800, unknown=["-l rmem", "-P"], name="rmem"),
    "sge/s_cpu_h_cpu.sge": dict(
        walltime=10800, unknown=["-l s_cpu"], name="cpulim"),
    "sge/sync_y_a_datetime.sge": dict(
        walltime=600, unknown=["-sync"], name="waited", begin="2027-01-01T06:00:00"),
    "sge/unicode_name_mail.sge": dict(
        walltime=300, name="Ångström", mail_events=["begin", "end", "fail"],
        mail_user="forsker@uni.example"),
    # ------------------------------------------------------------ slurm
    "slurm/archer2_standard_qos_nomultithread.sbatch": dict(
        nodes=4, tasks=512, cpus=512, walltime=1200, unknown=["--hint"], name="cp2k_md",
        queue="standard", account="e123-abc", qos="standard"),
    "slurm/array_even_index_list_to_range.sbatch": dict(
        tasks=1, cpus=1, memory_mb=1500, walltime=2700, array="1,3,5,7,9,11%3",
        name="odd_seeds", stdout="seeds_%A_%a.log", per_cpu=1500),
    "slurm/array_large_throttle_dev_null.sbatch": dict(
        tasks=1, cpus=1, memory_mb=2048, walltime=1800, array="0-999%50", name="sweep",
        stdout="/dev/null", stderr="err/%A_%a.err", needs_mem=2048),
    "slurm/comment_with_shell_metachars.sbatch": dict(
        tasks=1, cpus=1, walltime=300, name="meta",
        comment="run 7; rm -rf ~ && echo `id` $(whoami)"),
    "slurm/crlf_gres_typed_v100.sbatch": dict(
        tasks=2, cpus=2, gpus=2, memory_mb=32768, walltime=14400, name="crlf_gpu", gpu_type="v100",
        needs_gpus=2, needs_mem=32768),
    "slurm/export_quoted_comma_value.sbatch": dict(
        tasks=1, cpus=1, walltime=300, name="expq", export_all=True,
        variables={"OMP_NUM_THREADS": "4", "MODE": "fast"}),
    "slurm/gpus_and_gres_both.sbatch": dict(
        nodes=1, tasks=2, cpus=16, gpus=2, memory_mb=81920, walltime=21600, name="both",
        account="ml-lab", needs_gpus=2, needs_mem=81920),
    "slurm/gpus_per_node_typed_h100_mem0_exclusive.sbatch": dict(
        nodes=2, tasks=8, cpus=128, gpus=8, walltime=43200, name="llama_pt", queue="gpu-h100",
        qos="big", gpu_type="h100", exclusive=True, needs_gpus=4),
    "slurm/hetjob_two_partitions_accounts.sbatch": dict(
        nodes=3, tasks=68, cpus=68, gpus=4, walltime=3600, name="coupled", queue="cpu",
        needs_gpus=4),
    "slurm/job_name_with_dash_o_injection.sbatch": dict(
        tasks=1, cpus=1, walltime=300, name="x -o /etc/cron.d/pwn"),
    "slurm/mem_per_cpu_m_suffix_cpus_per_task.sbatch": dict(
        tasks=1, cpus=12, memory_mb=46800, walltime=172800, name="bwa", queue="long", per_cpu=3900),
    "slurm/ntasks_and_per_node_derive_nodes.sbatch": dict(
        nodes=4, tasks=64, cpus=64, walltime=10800, name="derive", features=["ib"]),
    "slurm/output_path_with_spaces_quoted.sbatch": dict(
        tasks=1, cpus=1, walltime=600, name="spaced", stdout="/scratch/my project/logs/%x-%j.out",
        stderr="/scratch/my project/logs/%x-%j.err"),
    "slurm/pyxis_container_image_unescaped_hash.sbatch": dict(
        nodes=1, tasks=8, cpus=8, gpus=8, walltime=14400,
        unknown=["--container-image", "--container-mounts"], name="ngc_pt", needs_gpus=8,
        notes=["sbatch reads an unquoted # as the start of a comment"]),
    "slurm/srun_after_env_assignment_and_cd.sbatch": dict(
        nodes=2, tasks=16, cpus=64, walltime=3600, name="hybrid", queue="compute"),
    "slurm/tacc_ibrun_skx_normal.sbatch": dict(
        nodes=4, tasks=192, cpus=192, walltime=7200, name="wrf_tacc", queue="skx-normal",
        account="TG-ATM123456", stdout="wrf.o%j", stderr="wrf.e%j", mail_events=["all"],
        mail_user="user@utexas.example"),
    "slurm/time_seconds_only_colon_form.sbatch": dict(
        tasks=1, cpus=1, walltime=45, name="short", queue="debug", reservation="training_2026"),
    "slurm/unicode_name_comment_mail_list.sbatch": dict(
        tasks=1, cpus=1, walltime=900, name="Größe_α", mail_events=["begin", "end", "fail"],
        mail_user="jörg@uni.example", comment="Messreihe für Prüfung"),
}

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=COMPARED_FIELDS, strict=ALL_STRICT, at_least=60)


# ------------------------------------------------------------ faults found, now fixed

@pytest.mark.parametrize("operator", ["host", "hosts", "hostlist"])
def test_every_flux_spelling_of_a_host_term_is_read_as_hosts(operator: str):
    """flux's --requires takes `host:`, `hosts:` (its manual's example) and RFC 31's own
    `hostlist:` alike. `hosts:` was read as a node property: Slurm got no --nodelist, the
    other schedulers no hosts, and placement no host terms."""
    text = f"#!/bin/bash\n#flux: -N 4\n#flux: --requires={operator}:node[1-4]\nflux run ./a\n"
    spec = get_script_dialect("flux").parse_script(text)
    named = named_hosts(spec)
    assert named is not None and named.among == "node[1-4]" and named.why_not is None
    script, warnings, _ = translate(text, "slurm", "flux")
    assert "#SBATCH --nodelist=node[1-4]" in script.splitlines()
    assert f"kept: #flux: --requires={operator}:node[1-4] as --nodelist=node[1-4]" in warnings
    script, _, _ = translate(text, "sge", "flux")
    assert "#$ -l hostname=node1|node2|node3|node4" in script.splitlines()


def test_flux_hosts_and_ranks_terms_read_by_kind():
    terms = list(requires_terms("-hosts:n[1-2] ranks:0-3 and hostlist:n5 gpu"))
    assert [(neg, kind, value) for neg, kind, value, _ in terms] == [
        (True, "host", "n[1-2]"), (False, "rank", "0-3"), (False, "host", "n5"),
        (False, "gpu", "")]
    # a ranks: term is said for what it is (no other scheduler numbers brokers), not taken
    # for a property among host terms
    spec = parse_lines("flux", "#flux: -N 2\n#flux: --requires=ranks:0-1")
    named = named_hosts(spec)
    assert named is not None and named.why_not.startswith("rank: names brokers")


@pytest.mark.parametrize("operator", ["hosts", "hostlist", "ranks"])
def test_placement_reads_every_spelling_of_a_host_or_rank_term(operator: str):
    """f2 drained: `hosts:f2` (as `host:f2`, and rank 2 is f2) leaves the job no node.
    Before, `hosts:`/`hostlist:`/`ranks:` were read as properties no node has."""
    from test_placement_cases import reasons, run
    from test_placement_cases7 import flux4

    cfg, snap = flux4()  # f0-f3, 16 cores and one A100 each
    next(n for n in snap.nodes if n.name == "f2").state = "drained"
    value = "2" if operator == "ranks" else "f2"
    p = run(f"#flux: -N 1\n#flux: -n 1\n#flux: --requires={operator}:{value}", (cfg, snap))
    assert reasons(p, "flux") == (f"--requires {operator}:{value} leaves f2: needs 1 node, 0 "
                                  "of them usable (f2 drained)")


def test_the_fixture_hosts_term_reaches_every_scheduler():
    rel = "flux/requires_hosts_list.flux"
    for target, line in (("slurm", "#SBATCH --nodelist=node[1-4]"),
                         ("lsf", '#BSUB -m "node1 node2 node3 node4"'),
                         ("sge", "#$ -l hostname=node1|node2|node3|node4")):
        script, warnings = translated(HERE, rel, target)
        assert line in script.splitlines(), target
        assert not any(w.startswith("dropped: #flux: --requires") for w in warnings)
    script, _ = translated(HERE, "flux/requires_hosts_list.flux", "pbs")
    assert ":host=node4" in directive_lines(script, "#PBS -l select")[0]


@pytest.mark.parametrize(("usage", "mode"), [
    ("ngpus_excl_p", "exclusive process"), ("ngpus_excl_t", "exclusive thread"),
    ("ngpus_shared", "shared")])
def test_lsf9_gpu_usages_are_gpus_per_host(usage: str, mode: str):
    """LSF 9's GPU resources were kept unread: Slurm got no GPUs and placement looked for
    none. Now read per host, as ngpus_physical, the mode said LSF's alone."""
    text = f'#!/bin/bash\n#BSUB -n 2\n#BSUB -W 10\n#BSUB -R "rusage[{usage}=2] span[hosts=1]"' \
           "\n./a\n"
    spec = get_script_dialect("lsf").parse_script(text)
    assert spec.resources.gpus_per_node == 2 and needs_of(spec).gpus == 2
    assert spec.unknown == []
    script, warnings, _ = translate(text, "slurm", "lsf")
    assert "#SBATCH --gpus-per-node=2" in script.splitlines()
    assert f"line 4: rusage[{usage}=2] read as 2 GPUs per host (LSF 9's GPU resource); " \
           f"their {mode} mode is LSF's alone: other schedulers get the GPUs in their " \
           "default mode" in warnings
    script, _, _ = translate(text, "lsf", "lsf")  # LSF gets it back as written
    assert f'#BSUB -R "span[hosts=1] rusage[{usage}=2]"' in script.splitlines()


def test_the_fixture_legacy_gpu_with_memory_keeps_both():
    """`rusage[mem=4096,ngpus_excl_p=1]`: the memory per slot and one GPU per host."""
    rel = "lsf/rusage_ngpus_excl_p_legacy.lsf"
    script, _ = translated(HERE, rel, "slurm")
    assert {"#SBATCH --gpus-per-node=1", "#SBATCH --mem-per-cpu=4G"} <= set(
        script.splitlines())
    script, _ = translated(HERE, rel, "pbs")
    assert "ngpus=1" in directive_lines(script, "#PBS -l select")[0]
    script, _ = translated(HERE, rel, "lsf")
    assert '#BSUB -R "span[hosts=1] rusage[mem=4GB, ngpus_excl_p=1]"' in script.splitlines()


def test_a_bare_lsf_job_id_in_w_is_done():
    """bsub tests a job named without a condition for DONE: `-w "7301 && ended(7302)"`
    waits for 7301 to succeed. The whole -w was kept unread, so no other scheduler waited
    for either job."""
    rel = "lsf/w_bare_job_ids_and.lsf"
    script, warnings = translated(HERE, rel, "slurm", dependency_ids="target")
    assert "#SBATCH --dependency=afterok:7301,afterany:7302" in script.splitlines()
    assert "line 5: -w 7301 read as done(7301) (bsub's condition for a job named without " \
           "one)" in warnings
    script, _ = translated(HERE, rel, "lsf")
    assert '#BSUB -w "done(7301) && ended(7302)"' in script.splitlines()
    spec = parse_lines("lsf", '#BSUB -n 1\n#BSUB -w "7301[4]"')
    assert [(d.kind, d.job_ids) for d in spec.dependencies] == [("afterok", ["7301_4"])]


@pytest.mark.parametrize("target", ["pbs", "lsf", "flux"])  # sge: refused (16 tasks)
def test_srun_after_variables_or_another_command_is_said(target: str):
    """`OMP_NUM_THREADS=4 srun ./app` and `cd post && srun ./reduce`: srun was looked for
    only first on its line, so these reached PBS, LSF and Grid Engine unsaid, and flux the
    first unconverted and unsaid, where no srun runs."""
    script, warnings = translated(HERE, "slurm/srun_after_env_assignment_and_cd.sbatch",
                                  target)
    lines = script.splitlines()
    if target == "flux":  # --cpu-bind has no flux run form: kept, now said
        assert "OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK srun --cpu-bind=cores ./hybrid_app" in lines
        assert "kept: line 10: srun options without a flux run equivalent; the line is " \
               "unchanged" in warnings
    else:
        assert any(w.startswith(f"kept: line 10: srun has no {target} equivalent")
                   for w in warnings)
    assert any(w.startswith(f"kept: line 11: srun has no {target} equivalent")
               for w in warnings)
    text = "#!/bin/bash\n#SBATCH -n 4\nOMP_NUM_THREADS=2 srun -n 4 ./a\n"
    script, _, _ = translate(text, "flux", "slurm")
    assert script.splitlines()[-1] == "OMP_NUM_THREADS=2 flux run -n 4 ./a"


@pytest.mark.parametrize("target", ["pbs", "lsf", "flux", "sge"])
def test_tacc_ibrun_is_said(target: str):
    """ibrun is TACC's launcher: elsewhere the line fails, and was kept unsaid."""
    _, warnings = translated(HERE, "slurm/tacc_ibrun_skx_normal.sbatch", target)
    assert any(w.startswith(f"kept: line 13: ibrun (TACC's MPI launcher) has no {target} "
                            "equivalent") for w in warnings)
    _, warnings = translated(HERE, "slurm/tacc_ibrun_skx_normal.sbatch", "slurm")
    assert not any("ibrun" in w for w in warnings)


def test_an_unquoted_hash_inside_a_slurm_value_is_said():
    """pyxis' `--container-image=nvcr.io#nvidia/pytorch:24.01-py3`: sbatch ends the line
    at the unquoted `#` (inside a word too), so the image is `nvcr.io`; read the same way,
    said nowhere. Now said with the word cut, and how to keep it."""
    spec = parse_lines("slurm", "#SBATCH -n 1\n#SBATCH --container-image=nvcr.io#nvidia/pt:1")
    assert [(d.option, d.value) for d in spec.unknown] == [("--container-image", "nvcr.io")]
    assert spec.metadata["parse_notes"] == [
        "line 3: `--container-image=nvcr.io#nvidia/pt:1`: sbatch reads an unquoted # as the "
        "start of a comment, inside a word too, so the value ends before it (quote the "
        "value, or write \\# to keep it)"]
    _, warnings = translated(HERE, "slurm/pyxis_container_image_unescaped_hash.sbatch", "pbs")
    assert any(w.startswith("line 7: `--container-image=nvcr.io#nvidia/pytorch:24.01-py3`: ")
               for w in warnings)
    # quoted, escaped, or a comment after a blank: nothing to say
    for line in ('--comment="a#b"', "--comment=a\\#b", "-J x # the name"):
        assert not parse_lines("slurm", f"#SBATCH {line}").metadata.get("parse_notes")


def test_an_evenly_stepped_index_list_reaches_grid_engine_whole():
    """`--array=1,3,5,7,9,11%3` is `-t 1-11:2`: Grid Engine got `-t 1` (its first index),
    one task of six, while PBS Pro got the whole range. Now the same range, and where a
    list has none, its largest part with the indexes left out named."""
    rel = "slurm/array_even_index_list_to_range.sbatch"
    script, warnings = translated(HERE, rel, "sge")
    assert directive_lines(script, "#$ -t") == ["#$ -t 1-11:2", "#$ -tc 3"]
    assert not any("array" in w for w in warnings)
    script, _ = translated(HERE, rel, "pbs")
    assert "#PBS -J 1-11:2%3" in script.splitlines()
    text = "#!/bin/bash\n#SBATCH -n 1\n#SBATCH --array=1,3,5-9\n./a\n"
    script, warnings, _ = translate(text, "sge", "slurm")
    assert directive_lines(script, "#$ -t") == ["#$ -t 5-9"]
    assert "approximated: array 1,3,5-9 as 5-9 (qsub -t takes one n[-m[:s]] range; indexes " \
           "1,3 left out)" in warnings


# ------------------------------------------------------------ what held, kept holding

@pytest.mark.parametrize("target", list(SCRIPT_DIALECTS))
def test_a_job_name_holding_an_option_stays_a_name(target: str):
    """`--job-name="x -o /etc/cron.d/pwn"`: no translation lets the target read an output
    path (or any other option) out of it."""
    script, _ = translated(HERE, "slurm/job_name_with_dash_o_injection.sbatch", target)
    back = get_script_dialect(target).parse_script(script)
    assert back.stdout is None and back.stderr is None and back.unknown == []
    assert back.name in ("x -o /etc/cron.d/pwn", get_script_dialect(target).job_name(
        "x -o /etc/cron.d/pwn"))


@pytest.mark.parametrize("target", ["slurm", "lsf"])
def test_a_comment_with_shell_words_is_one_quoted_value(target: str):
    script, _ = translated(HERE, "slurm/comment_with_shell_metachars.sbatch", target)
    back = get_script_dialect(target).parse_script(script)
    assert back.comment == "run 7; rm -rf ~ && echo `id` $(whoami)"
    assert [x for x in script.splitlines() if "rm -rf" in x] == [
        directive_lines(script, _SENTINELS[target] + (" --comment" if target == "slurm"
                                                      else " -Jd"))[0]]


@pytest.mark.parametrize("rel", ["slurm/output_path_with_spaces_quoted.sbatch",
                                 "lsf/output_dir_with_spaces_quoted.lsf"])
@pytest.mark.parametrize("target", list(SCRIPT_DIALECTS))
def test_an_output_path_with_a_blank_is_read_back_whole(rel: str, target: str):
    """Grid Engine's qsub splits #$ lines at blanks, quotes or not: refused there, naming
    the path (test_sge_blank_values)."""
    if target == "sge":
        with pytest.raises(BadInput, match=r"stdout path '/scratch/my .*\(#\$ -o\)"):
            translated(HERE, rel, target)
        return
    script, _ = translated(HERE, rel, target)
    back = get_script_dialect(target).parse_script(script)
    assert back.stdout is not None and back.stdout.startswith("/scratch/my ")
    assert back.stderr is not None and back.stderr.startswith("/scratch/my ")


def test_a_grid_engine_name_with_blanks_is_bad_input_naming_the_line():
    """qsub refuses `-N "a -o /tmp/evil"`: said with the line and a name it takes."""
    with pytest.raises(BadInput) as err:
        parse_lines("sge", '#$ -N "a -o /tmp/evil"\n#$ -l h_rt=00:05:00')
    msg = str(err.value)
    assert msg.startswith("line 2: bad job name 'a -o /tmp/evil'") and "a_-o__tmp_evil" in msg


def test_a_flux_time_limit_of_two_units_is_bad_input():
    """flux's FSD takes one unit (`2.5h`); `2h30m` is refused by flux batch, said here."""
    with pytest.raises(BadInput) as err:
        parse_lines("flux", "#flux: -n 1\n#flux: -t 2h30m")
    assert str(err.value) == ("line 3: bad time limit '2h30m' in `#flux: -t 2h30m`; expected "
                              "minutes or an FSD such as 30m, 2h, 1d, 90s")


def test_a_hetjob_second_partition_is_said_dropped_where_one_queue_is_kept():
    rel = "slurm/hetjob_two_partitions_accounts.sbatch"
    for target, name in (("pbs", "PBS"), ("lsf", "LSF"), ("flux", "flux"),
                         ("sge", "Grid Engine")):
        _, warnings = translated(HERE, rel, target)
        assert f"dropped: partition gpu of component 1 ({name} has one queue per job: the " \
               "whole job goes to cpu)" in warnings
    script, _ = translated(HERE, rel, "slurm")
    assert directive_lines(script, "#SBATCH --partition") == [
        "#SBATCH --partition=cpu", "#SBATCH --partition=gpu"]


def test_a_torque_array_list_reaches_grid_engine_as_its_range_said():
    _, warnings = translated(HERE, "pbs/torque_t_list_with_singletons.pbs", "sge")
    assert "approximated: array 1-5,7,9 as 1-5 (qsub -t takes one n[-m[:s]] range; indexes " \
           "7,9 left out)" in warnings
    script, _ = translated(HERE, "pbs/torque_t_list_with_singletons.pbs", "lsf")
    assert "#BSUB -J picks[1-5,7,9]" in script.splitlines()


@pytest.mark.parametrize("rel", [r for r in EXPECTED if "crlf" in r])
@pytest.mark.parametrize("target", list(SCRIPT_DIALECTS))
def test_crlf_scripts_come_out_with_lf_and_say_so(rel: str, target: str):
    try:
        script, warnings = translated(HERE, rel, target)
    except BadInput as exc:  # a request the target cannot express exactly: one line
        assert "cannot express" in str(exc) and target not in ("slurm", rel.split("/")[0])
        return
    assert "\r" not in script
    assert any(w.startswith("approximated: CRLF line endings converted to LF") for w in warnings)


@pytest.mark.parametrize("rel", [r for r in EXPECTED if "unicode" in r])
def test_unicode_names_survive_their_own_dialect(rel: str):
    source, text = read_fixture(HERE, rel)
    spec = get_script_dialect(source).parse_script(text)
    script, _, _ = translate(text, source, source)
    back = get_script_dialect(source).parse_script(script)
    assert not back.name.isascii()
    # qsub takes a name whose first character is an ASCII letter: renamed, and said
    assert back.name == (f"j{spec.name}" if rel == "pbs/unicode_name_torque_procs.pbs"
                         else spec.name)
    assert (back.comment, back.account, back.mail_user) == (
        spec.comment, spec.account, spec.mail_user)


def test_a_begin_time_with_seconds_reaches_lsf_said():
    script, warnings = translated(HERE, "pbs/a_full_datetime_seconds.pbs", "lsf")
    assert "#BSUB -b 2027:01:15:12:30" in script.splitlines()
    assert "approximated: begin time 2027-01-15T12:30:45 as -b 2027:01:15:12:30 (bsub -b " \
           "takes no seconds)" in warnings
    script, _ = translated(HERE, "pbs/a_full_datetime_seconds.pbs", "pbs")
    assert "#PBS -a 202701151230.45" in script.splitlines()
