"""A twenty-third set of realistic batch scripts (tests/fixtures/scripts_unseen23/<dialect>/):
Slurm (Anvil's --mem-per-cpu in the default MB beside whole-node tasks, Great Lakes'
--gpus=a40:2 with --cpus-per-gpu and --mem-per-gpu, the old `#SBATCH packjob` separator,
--dependency with a +delay and `?` (any of), aftercorr on an array, `##SBATCH` and
`# SBATCH` lines that sbatch does not read, #SBATCH lines after the first command and inside
a here-document, --nodes=2-4, 10 tasks at 4 per node, a matching-OR constraint with
--switches, --export=NONE under `#!/bin/bash --login`, --export=ALL with values and a bare
name, Slurm 24's --tres-bind and --oom-kill-step, --begin=now+2hours, --gres of a typed GPU
beside mps, --sockets-per-node with --ntasks-per-socket, tab-separated CRLF directives with a
Spanish name, an array from index 0); PBS Pro and Torque (two chunk shapes each with its own
mem, place=scatter:group=switch, -J with a step and a throttle, -W depend of two kinds,
nodes/walltime/mem on one -l, Torque gpus=N:exclusive_process with pmem, -d with -m n,
mem in kb beside ompthreads, CRLF with a French name and -W group_list, comments after
directives, -W depend=on:N, -a HHMM with -r n, a here-document holding a #PBS line, a
nodes= list of named hosts, chunks naming quoted hosts); LSF (rusage[ngpus_physical] with
select[ngpus>0] and
span[hosts=1], -gpu with mode, j_exclusive and gmem, -n MIN,MAX, -M and rusage in GB, a
quoted array with a step and throttle, -w with && and started(), affinity[] with cpubind
and membind, -outdir/-oo/-eo with -app and -sla, -b HH:MM with -env, a compound -R, CRLF
tabs with Portuguese names); flux (-N/-n/-c/-g, an F58 dependency with its `ƒ`, a quoted
--begin-time with --urgency, the --env forms with --cwd, -q/-B/--exclusive with a {{id}}
output, --tasks-per-node with --gpus-per-node, --requires=-host:, --cc copies, -t 1.5h with a
--setattr, a directive after the first command); Grid Engine (-pe orte with h_rt, s_rt and
h_vmem on one -l, -t with a step, -tc and -hold_jid_ad, -pe smp 4-16 with mem_free, h_rt in
seconds with -binding, -q queue@host with -l exclusive=true and -l gpu, -V with -v, -a with
seconds, -soft/-hard lists, CRLF with a German name and trailing comments, -hold_jid of ids
and a pattern with -p, -l gpu beside -pe smp and h_vmem).

Each is parsed and compared with its EXPECTED row, its needs read, and translated into
every dialect (its own too) and read back (tests/scripts_unseen_check.py). Faults found,
each fixed and shown by tests here that failed before: an array holding index 0 (Slurm's
common `--array=0-63%8`, PBS's `-J 0-990:10`) reached Grid Engine as `-t 0-63` and LSF as
`name[0-63]`, which qsub (task ids 1 <= n) and bsub (positive indexes) refuse at submission;
now the translation is refused, saying why and what to do, and a Grid Engine `-t 0-9` or an
LSF `name[0-9]` is bad input naming the line and the form accepted. A job whose GPUs reach
flux per node (Grid Engine's `-l gpu=2 -l exclusive=true`) was written `--nodes=1` yet lost
its --exclusive, said "the job asks for no node count"; now kept. PBS's and Grid Engine's
`-m n` (no mail at all) reached PBS, its own script too, without -m, so qsub mailed on
abort (its default, -m a); now `-m n`. A one-chunk PBS select's quoted host
(`host="cn-0107"`) was read as a host of no name: Slurm got `--nodelist=""` (said kept),
LSF, flux and Grid Engine no host (said "the 0 host(s) named"); now the host, and a value
that is no host name (`host="n1 -q x"`) is said dropped as such."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, translate
from diamond_jupyter.model import BadInput
from tests.scripts_unseen_check import (
    ALL_STRICT,
    COMPARED_FIELDS,
    directive_lines,
    parse_lines,
    read_fixture,
    sweep_tests,
    translated,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen23"

# As in the earlier sweeps (tests/scripts_unseen_check.py names the keys): whole-job
# totals, walltime seconds, array, deps, the options kept as unknown directives (in order),
# JobSpec fields; needs_gpus/needs_mem per node. Output paths are in the neutral form.
EXPECTED: dict[str, dict[str, Any]] = {
    "flux/N_n_c_g_per_task.flux": dict(
        nodes=2, tasks=8, cpus=32, gpus=8, walltime=7200, name="fx_gpu", needs_gpus=4),
    "flux/begin_time_iso_and_urgency.flux": dict(
        tasks=4, cpus=4, walltime=1800, unknown=["--urgency"], begin="2026-12-31T23:00:00"),
    # --cc copies: an array of those indexes ($FLUX_JOB_CC its index)
    "flux/cc_copies_array.flux": dict(
        tasks=1, cpus=1, walltime=300, array="1-10", name="copies"),
    "flux/directives_after_command_flux.flux": dict(
        tasks=2, cpus=2, walltime=600, ignored=1),
    "flux/env_forms_and_cwd.flux": dict(
        tasks=2, cpus=2, walltime=600, working_directory="/p/lustre1/user/run", export_all=False,
        variables={"OMP_NUM_THREADS": "4"}, passed=["PATH"]),
    "flux/queue_bank_exclusive_output_template.flux": dict(
        nodes=4, tasks=4, cpus=4, walltime=3600, queue="pbatch", account="guests",
        stdout="job-%j.out", exclusive=True),
    "flux/requires_negated_host_and_property.flux": dict(
        nodes=1, tasks=1, cpus=1, walltime=1200, unknown=["--requires"], name="avoid_bad",
        exclusive=True),
    "flux/tasks_per_node_and_gpus_per_node.flux": dict(
        nodes=2, tasks=8, cpus=8, gpus=8, walltime=5400, needs_gpus=4),
    "flux/time_seconds_and_fraction.flux": dict(
        tasks=1, cpus=1, walltime=5400, unknown=["--setattr"], name="frac"),
    "flux/unicode_f58_dependency.flux": dict(
        tasks=1, cpus=1, walltime=300, deps=[("afterok", ["ƒ2bQpWrN3u"])], name="post"),
    "lsf/M_with_unit_and_rusage_gb.lsf": dict(
        nodes=1, tasks=4, cpus=4, memory_mb=32768, walltime=7200, unknown=["-M"], name="memjob",
        per_cpu=8192),
    "lsf/affinity_core_cpubind.lsf": dict(
        nodes=1, tasks=4, cpus=16, walltime=3600, unknown=["-R affinity"], name="affine",
        account="proj_x"),
    "lsf/array_step_throttle_quoted.lsf": dict(
        tasks=1, cpus=1, walltime=900, array="1-100:5%10", name="scan",
        stdout="logs/scan.%j.%a.out", stderr="logs/scan.%j.%a.err"),
    "lsf/compound_resreq_two_parts.lsf": dict(
        nodes=3, tasks=17, cpus=17, walltime=10800, unknown=["-R{1} select"], name="compound"),
    "lsf/crlf_tabs_unicode_project.lsf": dict(
        nodes=2, tasks=16, cpus=16, walltime=7200, name="análise", account="projeto_ç"),
    "lsf/env_all_minus_var_and_b_time.lsf": dict(
        tasks=1, cpus=1, walltime=600, name="envb", begin="22:30:00", export_all=True,
        variables={"OMP_NUM_THREADS": "2", "MODE": "prod"}),
    "lsf/gpu_exclusive_process_gmem_j_exclusive.lsf": dict(
        tasks=1, cpus=1, gpus=2, walltime=7200,
        unknown=["-gpu mode", "-gpu j_exclusive", "-gpu gmem"], name="gmem", queue="gpu_p",
        needs_gpus=2),
    "lsf/n_min_max_slots.lsf": dict(
        tasks=4, cpus=4, walltime=1800, unknown=["-n"], name="flexible", stdout="%j.log"),
    "lsf/outdir_oo_eo_app_sla.lsf": dict(
        tasks=2, cpus=2, walltime=2700, unknown=["-outdir", "-app", "-sla"], name="prof",
        stdout="/scratch/%%U/%j/out.txt", stderr="/scratch/%%U/%j/err.txt"),
    "lsf/rusage_ngpus_physical_span_hosts1.lsf": dict(
        nodes=1, tasks=8, cpus=8, gpus=2, memory_mb=64000, walltime=14400, unknown=["-R select"],
        name="gpu_one_host", queue="gpu", stdout="out.%j", per_cpu=8000, needs_gpus=2),
    "lsf/w_and_or_conditions.lsf": dict(
        tasks=1, cpus=1, walltime=1200, deps=[("afterok", ["3001"]), ("afterany", ["3002"])],
        name="joiner"),
    "lsf/w_post_done_and_started.lsf": dict(
        tasks=1, cpus=1, walltime=1200, deps=[("after", ["3101"])], name="watcher"),
    "pbs/array_step_throttle.pbs": dict(
        nodes=1, tasks=1, cpus=1, memory_mb=2048, walltime=1200, array="0-990:10%20", name="swp",
        stdout="sweep.%a.out", needs_mem=2048),
    "pbs/beforeany_and_on_depend.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=600, unknown=["-W"], name="first_of_chain"),
    "pbs/comments_after_directives_and_v.pbs": dict(
        nodes=1, tasks=1, cpus=8, memory_mb=32768, walltime=10800, name="commented",
        variables={"INPUT": "case1", "NITER": "100"}, needs_mem=32768),
    "pbs/crlf_unicode_name_group_list.pbs": dict(
        nodes=2, tasks=48, cpus=48, walltime=7200, unknown=["-W", "-P"], name="café_run"),
    "pbs/depend_two_kinds_comma.pbs": dict(
        nodes=1, tasks=1, cpus=2, walltime=1800,
        deps=[("afterok", ["5001.pbs01", "5002.pbs01"]), ("afternotok", ["5003.pbs01"])],
        name="join"),
    "pbs/pbs_a_time_and_r_n.pbs": dict(
        nodes=1, tasks=1, cpus=4, walltime=14400, name="at_night", requeue=False,
        mail_events=["fail", "begin", "end"], mail_user="ops@example.org", begin="23:00:00"),
    "pbs/pbs_kb_memory_and_ompthreads.pbs": dict(
        nodes=1, tasks=1, cpus=16, memory_mb=4096, walltime=2700,
        unknown=["-l select:ompthreads"], name="kbmem", needs_mem=4096),
    "pbs/place_free_group_switch.pbs": dict(
        nodes=8, tasks=384, cpus=384, walltime=43200,
        unknown=["-l place:scatter", "-l place:group=switch"], name="sw_group", account="proj01"),
    "pbs/select_ngpus_mem_place_pack_heredoc.pbs": dict(
        nodes=1, tasks=1, cpus=32, gpus=4, memory_mb=491520, walltime=36000,
        unknown=["-l place:pack"], name="gpu_pack", queue="gpu", ignored=1, needs_gpus=4,
        needs_mem=491520),
    "pbs/select_quoted_host_values.pbs": dict(
        nodes=2, tasks=32, cpus=32, walltime=7200, unknown=["-l select:host", "-l select:host"],
        name="on_two_hosts", queue="workq"),
    "pbs/torque_d_dir_and_m_n.pbs": dict(
        nodes=1, tasks=4, cpus=4, walltime=3600, unknown=["-S"], name="quiet",
        working_directory="/scratch/user/run7"),
    "pbs/torque_gpus_exclusive_process.pbs": dict(
        nodes=2, tasks=16, cpus=16, gpus=4, memory_mb=49152, walltime=28800,
        unknown=["-l nodes:exclusive_process"], name="torque_gpu", queue="gpu", per_cpu=3072,
        needs_gpus=2),
    "pbs/torque_nodes_named_hosts_plus.pbs": dict(
        nodes=2, tasks=16, cpus=16, walltime=1800, name="pinned"),
    "pbs/two_shapes_select_mem_per_chunk.pbs": dict(
        nodes=3, tasks=73, cpus=76, memory_mb=409600, walltime=21600, name="mixed_chunks",
        queue="workq", needs_mem=204800),
    "pbs/walltime_and_mem_one_l.pbs": dict(
        nodes=1, tasks=12, cpus=12, memory_mb=65536, walltime=129600, name="onel", queue="long",
        needs_mem=65536),
    "sge/a_datetime_and_m_e_M.sge": dict(
        walltime=300, name="later", mail_events=["end"], mail_user="me@uni.example",
        begin="2026-12-31T23:59:30"),
    "sge/crlf_unicode_comment_after.sge": dict(
        tasks=8, cpus=8, memory_mb=8192, walltime=3600, name="größe", per_cpu=1024),
    "sge/gpu_pe_and_mem_per_slot_hvmem_upper.sge": dict(
        nodes=1, cpus=8, gpus=1, memory_mb=49152, walltime=28800, unknown=["-P"], name="gpupe",
        queue="gpu.q", per_cpu=6144, needs_gpus=1),
    "sge/h_rt_seconds_only_and_binding.sge": dict(
        nodes=1, cpus=4, walltime=86400, unknown=["-binding"], name="bind4"),
    "sge/hold_jid_list_and_p_priority.sge": dict(
        walltime=1200, deps=[("afterany", ["811", "812"])], unknown=["-hold_jid", "-p"],
        name="collect", stderr="/dev/null"),
    "sge/pe_orte_h_vmem_s_rt.sge": dict(
        tasks=32, cpus=32, memory_mb=131072, walltime=86400, unknown=["-l s_rt"], name="orte32",
        per_cpu=4096),
    "sge/pe_smp_range.sge": dict(
        nodes=1, cpus=4, memory_mb=8192, walltime=7200, unknown=["-pe"], name="smp_range",
        per_cpu=2048),
    "sge/queue_at_host_and_exclusive.sge": dict(
        gpus=2, walltime=3600, name="hostq", queue="gpu.q", exclusive=True, needs_gpus=2),
    "sge/soft_hard_resource_lists.sge": dict(
        memory_mb=8192, walltime=14400, unknown=["-soft", "-soft -l", "-hard"], name="softhard",
        per_cpu=8192),
    "sge/t_step_tc_hold_jid_ad.sge": dict(
        walltime=1800, array="1-1000:10%20", unknown=["-hold_jid_ad"], name="post_tasks",
        stdout="logs/post.%a.out"),
    "sge/v_list_and_V.sge": dict(
        walltime=600, name="envs", export_all=True,
        variables={"OMP_NUM_THREADS": "4", "SCRATCH": "/tmp/me"}),
    "slurm/array_from_zero_python_sweep.sbatch": dict(
        cpus=4, memory_mb=12288, walltime=2400, array="0-63%8", name="hp_sweep",
        stdout="logs/%x_%A_%a.out", per_cpu=3072),
    "slurm/begin_now_plus_and_deadline.sbatch": dict(
        tasks=1, cpus=1, walltime=600, unknown=["--kill-on-invalid-dep"], name="nightly",
        begin="now+2hours"),
    "slurm/constraint_matching_or_brackets.sbatch": dict(
        nodes=4, walltime=7200, unknown=["--switches"], name="samerack",
        features=["[rack1|rack2|rack3]"]),
    "slurm/dependency_aftercorr_array.sbatch": dict(
        tasks=1, cpus=2, memory_mb=4096, walltime=7200, array="1-50%5",
        deps=[("afterok", ["81234"])], name="stage2", stdout="stage2_%A_%a.log", needs_mem=4096),
    "slurm/dependency_plus_delay_and_or.sbatch": dict(
        tasks=1, cpus=1, walltime=600, unknown=["--dependency"], name="after_delay"),
    "slurm/directive_after_first_command.sbatch": dict(
        tasks=2, cpus=2, walltime=1200, name="late", ignored=2),
    "slurm/double_hash_disabled_directives.sbatch": dict(
        tasks=8, cpus=8, walltime=2700, name="commented"),
    "slurm/export_all_with_values_and_bare_names.sbatch": dict(
        tasks=1, cpus=1, walltime=300, name="envpass", export_all=True,
        variables={"OMP_NUM_THREADS": "8", "INPUT": "/data/run1"}, passed=["HOME"]),
    "slurm/export_none_then_module_loads.sbatch": dict(
        tasks=32, cpus=32, walltime=3600, name="clean_env", queue="standard", account="ec12",
        qos="standard", shell="/bin/bash --login", export_all=False),
    "slurm/gres_typed_two_kinds_with_mps.sbatch": dict(
        nodes=1, tasks=2, cpus=2, gpus=1, walltime=3600, unknown=["--gres"], name="mps_share",
        gpu_type="v100", needs_gpus=1),
    "slurm/heredoc_with_sbatch_lines_inside.sbatch": dict(
        tasks=1, cpus=1, walltime=300, name="gen_child", ignored=2),
    "slurm/nodes_range_min_max.sbatch": dict(
        nodes=2, tasks=32, cpus=32, walltime=10800, unknown=["--nodes"], name="elastic",
        queue="standard"),
    "slurm/ntasks_not_divisible_by_per_node.sbatch": dict(
        nodes=3, tasks=10, cpus=10, walltime=900, name="ragged"),
    "slurm/ntasks_per_socket_sockets_per_node.sbatch": dict(
        nodes=2, cpus=12, walltime=2400, unknown=["--sockets-per-node", "--ntasks-per-socket"],
        name="sockets"),
    "slurm/packjob_old_spelling_two_components.sbatch": dict(
        nodes=2, tasks=5, cpus=5, gpus=2, walltime=1800, name="oldpack", queue="compute",
        needs_gpus=2),
    "slurm/purdue_anvil_wholenode_mem_per_cpu_mb.sbatch": dict(
        nodes=2, tasks=256, cpus=256, memory_mb=486400, walltime=14400, name="anvil_mpi",
        queue="wholenode", account="cis230000", per_cpu=1900),
    "slurm/tres_bind_and_oom_kill_step.sbatch": dict(
        nodes=1, tasks=4, cpus=4, gpus=4, walltime=1800,
        unknown=["--tres-bind", "--oom-kill-step"], name="slurm24", needs_gpus=4),
    "slurm/umich_greatlakes_gpu_cpus_per_gpu_mem_per_gpu.sbatch": dict(
        cpus=8, gpus=2, memory_mb=90112, walltime=129600, name="gl_train", queue="spgpu",
        account="prof0", mail_events=["begin", "end", "time_limit_80"],
        mail_user="uniq@umich.edu", gpu_type="a40", needs_gpus=2, needs_mem=90112),
    "slurm/unicode_name_crlf_tabs.sbatch": dict(
        tasks=4, cpus=4, memory_mb=8192, walltime=5400, name="simulación_ñ",
        stdout="salida_%j.txt", per_cpu=2048),
}

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=COMPARED_FIELDS, strict=ALL_STRICT, at_least=60)


# ------------------------------------------------------------ faults found, now fixed

ZERO_ARRAY = "slurm/array_from_zero_python_sweep.sbatch"


@pytest.mark.parametrize(("target", "scheduler", "variable"), [
    ("sge", "Grid Engine", "SGE_TASK_ID"), ("lsf", "LSF", "LSB_JOBINDEX")])
def test_an_array_from_index_0_is_refused_where_indexes_start_at_1(target: str, scheduler: str,
                                                                    variable: str):
    """`--array=0-63%8` reached Grid Engine as `-t 0-63` and LSF as `hp_sweep[0-63]%8`,
    which qsub and bsub refuse at submission; now refused here, saying why and what to do."""
    with pytest.raises(BadInput) as e:
        translated(HERE, ZERO_ARRAY, target)
    msg = str(e.value)
    assert msg.startswith(f"{target} cannot express the array 0-63%8: {scheduler} starts "
                          "array indexes at 1"), msg
    assert f"${{{variable}}} less one" in msg and "\n" not in msg


@pytest.mark.parametrize(("source", "lines"), [
    ("pbs", "#PBS -l select=1:ncpus=1\n#PBS -J 0-990:10%20"),
    ("slurm", "#SBATCH -n 1\n#SBATCH --array=0,5,10"),
    ("slurm", "#SBATCH -n 1\n#SBATCH --array=0"),
    ("slurm", "#SBATCH -n 1\n#SBATCH --array=3,0-2"),
])
@pytest.mark.parametrize("target", ["sge", "lsf"])
def test_every_array_holding_index_0_is_refused_for_grid_engine_and_lsf(source: str, lines: str,
                                                                        target: str):
    text = f"#!/bin/bash\n{lines}\n./a\n"
    with pytest.raises(BadInput, match=rf"^{target} cannot express the array .*starts array "
                                       "indexes at 1"):
        translate(text, target, source)


@pytest.mark.parametrize(("target", "line"), [
    ("slurm", "#SBATCH --array=0-63%8"), ("pbs", "#PBS -J 0-63%8")])
def test_an_array_from_index_0_still_reaches_slurm_and_pbs_as_written(target: str, line: str):
    script, _ = translated(HERE, ZERO_ARRAY, target)
    assert line in script.splitlines()


@pytest.mark.parametrize(("target", "line"), [
    ("sge", "#$ -t 1-64"), ("lsf", "#BSUB -J hp_sweep[1-64]%8")])
def test_the_same_array_numbered_from_1_reaches_grid_engine_and_lsf(target: str, line: str):
    _, text = read_fixture(HERE, ZERO_ARRAY)
    script, _, _ = translate(text.replace("0-63%8", "1-64%8"), target, "slurm")
    assert line in script.splitlines()


@pytest.mark.parametrize(("dialect", "lines", "said"), [
    ("sge", "#$ -t 0-9", "line 2: bad task range '0-9' in `#$ -t 0-9`; expected n[-m[:s]] "
                         "with 1 <= n <= m (Grid Engine's task ids start at 1)"),
    ("sge", "#$ -N x\n#$ -t 0", "line 3: bad task range '0' in `#$ -t 0`"),
    ("lsf", '#BSUB -J "a[0-9]"', "line 2: bad job array 'a[0-9]' in `#BSUB -J \"a[0-9]\"`; "
                                 "expected NAME[X-Y[:STEP],...] with 1 <= X <= Y (LSF's array "
                                 "indexes start at 1)"),
    ("lsf", "#BSUB -J sweep[1-4,0]%2", "line 2: bad job array 'sweep[1-4,0]%2'"),
])
def test_a_grid_engine_or_lsf_array_from_0_is_bad_input_naming_the_line(dialect: str, lines: str,
                                                                        said: str):
    """qsub and bsub refuse these; they were read, placed and translated as arrays."""
    with pytest.raises(BadInput) as e:
        parse_lines(dialect, lines)
    assert str(e.value).startswith(said), str(e.value)


@pytest.mark.parametrize(("dialect", "lines", "array"), [
    ("sge", "#$ -t 10-100:10", "10-100:10"), ("lsf", "#BSUB -J a[1,3,10-20]%4", "1,3,10-20%4")])
def test_arrays_from_1_or_later_are_read_as_before(dialect: str, lines: str, array: str):
    spec = parse_lines(dialect, lines)
    assert spec.array is not None and spec.array.expression == array


GE_EXCLUSIVE_GPUS = "sge/queue_at_host_and_exclusive.sge"


def test_exclusive_gpus_per_node_reach_flux_with_exclusive():
    """Grid Engine's `-l gpu=2 -l exclusive=true` reached flux as `--nodes=1
    --gpus-per-node=2` without --exclusive, said dropped "the job asks for no node count"."""
    script, warnings = translated(HERE, GE_EXCLUSIVE_GPUS, "flux")
    lines = directive_lines(script, "#flux:")
    assert {"#flux: --nodes=1", "#flux: --gpus-per-node=2", "#flux: --exclusive"} <= set(lines)
    assert not [w for w in warnings if "exclusive" in w], warnings
    back = get_script_dialect("flux").parse_script(script)
    assert back.constraints.exclusive and back.resources.nodes == 1


@pytest.mark.parametrize(("source", "rel_or_lines"), [
    ("pbs", "pbs/torque_d_dir_and_m_n.pbs"),
    ("pbs", "#PBS -l select=1:ncpus=1\n#PBS -m abe\n#PBS -m n"),
    ("sge", "#$ -l h_rt=600\n#$ -m n"),
])
def test_no_mail_asked_reaches_pbs_as_no_mail(source: str, rel_or_lines: str):
    """`-m n` (no mail at all) was read as no mail events and so reached PBS, its own
    script too, without -m: qsub then mails on abort, its default (-m a)."""
    text = read_fixture(HERE, rel_or_lines)[1] if rel_or_lines.endswith(".pbs") \
        else f"#!/bin/bash\n{rel_or_lines}\n./a\n"
    script, _, spec = translate(text, "pbs", source)
    assert spec.mail_events == []
    assert "#PBS -m n" in directive_lines(script, "#PBS")
    assert get_script_dialect("pbs").parse_script(script).mail_events == []


@pytest.mark.parametrize("lines", ["#PBS -m n\n#PBS -m ae", "#PBS -m ae"])
def test_mail_asked_after_or_without_m_n_is_kept(lines: str):
    script, _, _ = translate(f"#!/bin/bash\n#PBS -l select=1:ncpus=1\n{lines}\n./a\n", "pbs",
                             "pbs")
    assert "#PBS -m ae" in directive_lines(script, "#PBS")
    assert "#PBS -m n" not in script


QUOTED_HOSTS = "pbs/select_quoted_host_values.pbs"


@pytest.mark.parametrize(("target", "line"), [
    ("slurm", "#SBATCH --nodelist=cn-0107,cn-0108"), ("lsf", '#BSUB -m "cn-0107 cn-0108"'),
    ("flux", "#flux: --requires=host:cn-0107,cn-0108"),
    ("sge", "#$ -l hostname=cn-0107|cn-0108")])
def test_quoted_select_hosts_reach_every_scheduler(target: str, line: str):
    script, warnings = translated(HERE, QUOTED_HOSTS, target)
    assert line in script.splitlines()
    assert not [w for w in warnings if "0 host(s)" in w or w.startswith("dropped")], warnings


@pytest.mark.parametrize(("target", "line"), [
    ("slurm", "#SBATCH --nodelist=cn-0107"), ("lsf", "#BSUB -m cn-0107"),
    ("flux", "#flux: --requires=host:cn-0107"), ("sge", "#$ -l hostname=cn-0107")])
def test_the_quoted_host_of_one_chunk_reaches_every_scheduler(target: str, line: str):
    """One chunk's `host="cn-0107"` (a quoted select value; qsub drops the quotes) was read
    as a host of no name: Slurm got `--nodelist=""`, said kept, and LSF, flux and Grid
    Engine no host, said "the 0 host(s) named"."""
    _, text = read_fixture(HERE, QUOTED_HOSTS)
    one = text.replace('+1:ncpus=16:mpiprocs=16:host="cn-0108"', "")
    script, warnings, _ = translate(one, target, "pbs")
    assert line in script.splitlines()
    assert not [w for w in warnings if "0 host(s)" in w or w.startswith("dropped")], warnings


@pytest.mark.parametrize("host", ['""', '"n1 -q x"', "'a b'"])
def test_a_select_host_that_is_no_host_name_is_said_dropped(host: str):
    text = f"#!/bin/bash\n#PBS -l select=1:ncpus=1:host={host}\n#PBS -l walltime=1:00\n./a\n"
    for target in ("slurm", "lsf", "flux", "sge"):
        script, warnings, _ = translate(text, target, "pbs")
        assert "--nodelist" not in script and "hostname=" not in script, script
        assert "host:" not in script and "#BSUB -m" not in script, script
        if host != '""':  # (an empty value is no host: nothing to say)
            assert any(w.startswith("dropped: #PBS -l select=1:ncpus=1:host=")
                       and "is not a host name" in w for w in warnings), warnings


# ------------------------------------------------------------ what a user would expect

def test_directives_sbatch_does_not_read_are_not_read():
    """`##SBATCH --ntasks=64` and `# SBATCH --mem=900G` are comments to sbatch."""
    script, warnings = translated(HERE, "slurm/double_hash_disabled_directives.sbatch", "pbs")
    assert "#PBS -l select=8:ncpus=1:mpiprocs=1" in script.splitlines()
    assert not [w for w in warnings if "900G" in w or "64" in w or "bigmem" in w], warnings


def test_a_child_script_in_a_here_document_stays_the_childs():
    """The #SBATCH lines of a here-document are after the first command: not the job's,
    said, and kept in the body for the child job sbatch submits."""
    script, warnings = translated(HERE, "slurm/heredoc_with_sbatch_lines_inside.sbatch",
                                  "slurm")
    head, _, body = script.partition("cat > child.sbatch")
    assert "--nodes=16" not in head and "#SBATCH --nodes=16" in body.splitlines()
    assert "#SBATCH --time=00:05:00" in head.splitlines()
    assert any("ignored `#SBATCH --nodes=16`" in w for w in warnings), warnings


def test_the_old_packjob_separator_keeps_each_components_partition():
    script, _ = translated(HERE, "slurm/packjob_old_spelling_two_components.sbatch", "slurm")
    lines = directive_lines(script, "#SBATCH")
    assert lines.index("#SBATCH hetjob") < lines.index("#SBATCH --partition=gpu")
    assert "#SBATCH --partition=compute" in lines[:lines.index("#SBATCH hetjob")]


def test_a_task_by_task_dependency_reaches_lsf_one_to_one():
    """aftercorr: task n waits for task n; LSF's done(ID[*]) on an array is one-to-one."""
    _, text = read_fixture(HERE, "slurm/dependency_aftercorr_array.sbatch")
    script, _, _ = translate(text, "lsf", "slurm", dependency_ids="target")
    assert '#BSUB -w "done(81234[*])"' in script.splitlines()


def test_a_dependency_with_a_delay_or_any_of_is_said_dropped_by_name():
    """`afterok:7001+30?afterany:7002` (30 minutes after, or either) has no other form."""
    for target in ("pbs", "lsf", "flux", "sge"):
        script, warnings = translated(HERE, "slurm/dependency_plus_delay_and_or.sbatch", target)
        assert "7001" not in script.partition("./collect.sh")[0]
        assert any(w.startswith("dropped: #SBATCH --dependency=afterok:7001+30?afterany:7002")
                   for w in warnings), (target, warnings)
