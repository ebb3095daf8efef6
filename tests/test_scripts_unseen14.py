"""A fourteenth set of realistic batch scripts (tests/fixtures/scripts_unseen14/<dialect>/),
written in the styles centers' user guides show, favouring options the earlier sweeps held
few of: Slurm --mem-bind, --cpu-freq, --profile, --acctg-freq, --prefer with --spread-job
and --use-min-nodes, -B 2:8:1 and the long socket/core/thread options, --gpu-freq with
--gpu-bind=map_gpu, --tres-per-task=cpu=6,gres/gpu=1, --mincpus, --tmp, -L licenses,
--kill-on-invalid-dep, --array=0-99:4%5, --wckey, --comment, --batch, --clusters, late
#SBATCH lines, --exclusive=user, --gres-flags, --ntasks-per-core with --core-spec, --gpus
beside --gpus-per-node; PBS Pro walltime in plain seconds and as MM:SS, mem in kb, mw
(words) and tb, select with mpiprocs and ompthreads, -J 1-100:2, -W depend=afterany on
two jobs, -r n, -k oed, -V, -v lists, -W block=true; Torque procs= with pmem, pvmem,
named hosts without ppn; LSF -n 4,8, rusage with a duration, multi-phase rusage, -W 1:30
with -We, -x, -U, -P, a quoted array with a step and a limit, done() && ended(), -outdir
with -oo/-eo, select[] with -M, -G, -sla and -Jd, -gpu per task with j_exclusive; Grid
Engine s_vmem beside h_vmem, h_stack, -pe smp 1-8, -masterq, -soft/-hard, -ckpt with
-notify, -wd with directory outputs, -t 1-10:2, -hold_jid lists with -S and -m n, a
$PE_HOSTFILE; flux --exclusive, --nslots with --cores-per-slot and --gpus-per-slot,
--time-limit=1.5h, {{id}} outputs, --dependency=afterok:f..., --bank and --env,
--setattr=system.duration.

Each is parsed and compared with its EXPECTED row, its needs read, and translated into
every dialect (its own too) and read back (tests/scripts_unseen_check.py). Faults found,
each fixed and shown by a test here: a scheduler's list of the job's hosts reached another
as that one's list in another form ($PBS_NODEFILE, a file, became $SLURM_JOB_NODELIST, a
hostlist expression, so `cat $PBS_NODEFILE` read no file; LSF's $LSB_HOSTS and Grid
Engine's $PE_HOSTFILE alike): each is now kept and said; flux's
--setattr=system.duration=SECONDS (the jobspec's own time limit, which flux applies after
-t) was kept unread, the job said to have no time limit; LSF's multi-phase rusage
(`rusage[mem=(8000 2000):duration=(20 30)]`) was refused as a bad memory; Slurm's --gpus
(the job's total) beside --gpus-per-node or --gres=gpu:N was replaced by the later one
(`--gpus=16 --gpus-per-node=4` read as 4 GPUs on one node): sbatch keeps both, so the job
is read as the nodes that hold both, else the total is kept as written. A flux file name
with the job id in another of flux's forms (`{{id.dec}}`, `{{id.hex}}`) reached the others
as those characters, unsaid: every job wrote the same file; now their own job id, said
(and `{{id.f58}}`, flux's default form, is `{{id}}`). Grid Engine's times
with a zero field left empty (`h_rt=2::`, `1::1`, `::90`, as sge_types(1) allows) were
refused as bad. `-hard` and `-soft` were said dropped as if the requests on their line went
with them; now said to be the switches they are. A reservation's name (LSF -U, Slurm
--reservation) was written as Grid Engine's `-ar`, which takes an AR's id: said dropped.
A flux translation of a job with mail
events and no address said `( fail,end`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.body import translate_body
from diamond_jupyter.dialects.translate import get_script_dialect, translate
from diamond_jupyter.model import BadInput
from diamond_jupyter.needs import needs_of
from tests.scripts_unseen_check import (
    ALL_STRICT,
    COMPARED_FIELDS,
    parse_lines,
    read_fixture,
    sweep_tests,
    translated,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen14"
G = 1024  # MB in a GB

# As in the earlier sweeps: whole-job totals (every one checked, None when left out),
# walltime seconds, array, deps, the options kept as unknown directives (in order), JobSpec
# fields; `needs_gpus`/`needs_mem` per node (needs_of); `per_cpu` memory per CPU; `notes`
# words a parse note holds; `ignored` how many directives were noted as ignored.
EXPECTED: dict[str, dict[str, Any]] = {
    # ------------------------------------------------------- Slurm
    "slurm/B_sockets_cores_threads_short.sbatch": dict(
        nodes=1, tasks=1, cpus=16, memory_mb=60 * G, needs_mem=60 * G, walltime=5400,
        name="omp_pinned", unknown=["--extra-node-info"]),
    "slurm/array_step_and_limit.sbatch": dict(
        tasks=1, cpus=1, memory_mb=2 * G, needs_mem=2 * G, walltime=600, array="0-99:4%5",
        name="sweep4", stdout="sweep_%A_%a.out"),
    "slurm/batch_feature_first_node.sbatch": dict(
        nodes=4, tasks=128, cpus=128, walltime=21600, features=["bigmem|standard"],
        name="batch_on_big", unknown=["--batch"]),
    "slurm/clusters_option.sbatch": dict(
        tasks=1, cpus=1, walltime=1800, name="any_cluster", unknown=["--clusters"]),
    "slurm/gpu_freq_gpu_bind_map.sbatch": dict(
        nodes=1, tasks=4, cpus=32, gpus=4, needs_gpus=4, walltime=3600, name="energy_aware",
        queue="gpu", gpu_bind="map_gpu:0,1,2,3", unknown=["--gpu-freq"]),
    "slurm/gpus_total_with_gpus_per_node.sbatch": dict(
        nodes=4, tasks=16, cpus=256, gpus=16, needs_gpus=4, gpu_type="a100", walltime=86400,
        name="llm_finetune", queue="gpu",
        notes=["--gpus=a100:16 (the job's) with 4 GPUs per node (line 4) read as 4 nodes"]),
    "slurm/gres_flags_enforce_binding_gpus_typed.sbatch": dict(
        nodes=1, tasks=2, cpus=20, gpus=2, needs_gpus=2, gpu_type="v100", walltime=28800,
        name="bound_gpus", qos="gpu_long", unknown=["--gres-flags"]),
    "slurm/kill_on_invalid_dep_requeue.sbatch": dict(
        tasks=1, cpus=4, walltime=2700, deps=[("afterok", ["88123", "88124"])], name="stage3",
        requeue=True, unknown=["--kill-on-invalid-dep"]),
    "slurm/mem_bind_cpu_freq_profile.sbatch": dict(
        nodes=2, tasks=128, cpus=256, walltime=1200, name="stream_bw", queue="standard",
        unknown=["--mem-bind", "--cpu-freq", "--profile", "--acctg-freq"]),
    "slurm/mincpus_tmp_licenses.sbatch": dict(
        nodes=1, tasks=16, cpus=16, walltime=43200, name="fluent_case", stdout="fluent-%j.log",
        unknown=["--mincpus", "--tmp", "--licenses"]),
    "slurm/ntasks_per_core_core_spec_overcommit.sbatch": dict(
        nodes=2, tasks=512, cpus=512, walltime=10800, name="smt_run",
        unknown=["--ntasks-per-core", "--core-spec", "--overcommit"]),
    "slurm/prefer_spread_job_use_min_nodes.sbatch": dict(
        tasks=32, cpus=32, memory_mb=96 * G, per_cpu=3 * G, walltime=14400, features=["ib"],
        name="spread_test", unknown=["--prefer", "--spread-job", "--use-min-nodes"]),
    "slurm/sbatch_line_after_first_command.sbatch": dict(
        tasks=2, cpus=2, walltime=900, name="late_opts", ignored=2,
        notes=["line 6: ignored `#SBATCH --time=02:00:00`",
               "line 7: ignored `#SBATCH --mem=64G`"]),
    "slurm/sockets_cores_threads_long.sbatch": dict(
        nodes=8, tasks=64, cpus=256, walltime=172800, name="wrf_hybrid", account="atmos01",
        unknown=["--sockets-per-node", "--cores-per-socket", "--threads-per-core"]),
    "slurm/time_minutes_seconds_time_min_nice.sbatch": dict(
        tasks=1, cpus=1, memory_mb=1500, per_cpu=1500, walltime=1800, name="backfill",
        unknown=["--time-min", "--nice", "--exclusive"]),
    "slurm/tres_per_task_cpu_gpu.sbatch": dict(
        tasks=4, cpus=24, gpus=4, memory_mb=96000, per_cpu=4000, needs_gpus=1, walltime=10800,
        name="tres_tasks"),
    "slurm/wckey_comment_no_requeue.sbatch": dict(
        tasks=8, cpus=8, walltime=3600, name="nightly", mail_events=["time_limit_90", "fail"],
        mail_user="ops@lab.example", requeue=False, comment="nightly run, see ticket 42",
        unknown=["--wckey"]),
    # -------------------------------------------- PBS Pro / Torque
    "pbs/pro_J_odd_indices_rerun.pbs": dict(
        nodes=1, tasks=1, cpus=1, memory_mb=2 * G, needs_mem=2 * G, walltime=1200,
        array="1-100:2", name="odd_frames", stdout="frames.out", stderr="frames.err",
        requeue=True),
    "pbs/pro_W_block_true.pbs": dict(
        nodes=1, tasks=1, cpus=2, walltime=600, name="wait_for_me", unknown=["-W"]),
    "pbs/pro_depend_afterany_two_rerun_n.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=300,
        deps=[("afterany", ["5501.pbssrv", "5502.pbssrv"])], name="cleanup", requeue=False),
    "pbs/pro_koed_V_join.pbs": dict(
        nodes=2, tasks=72, cpus=72, walltime=43200, name="keep_direct", export_all=True,
        unknown=["-k", "-P"]),
    "pbs/pro_mem_megawords.pbs": dict(
        nodes=1, tasks=1, cpus=4, memory_mb=4 * G, needs_mem=4 * G, walltime=1800,
        name="words_mem"),
    "pbs/pro_mem_tb_hugemem.pbs": dict(
        nodes=1, tasks=1, cpus=64, memory_mb=2048 * G, needs_mem=2048 * G, walltime=259200,
        name="assembly", queue="hugemem", mail_events=["fail", "end"]),
    "pbs/pro_select_mpiprocs_ompthreads.pbs": dict(
        nodes=4, tasks=32, cpus=512, memory_mb=1920 * G, needs_mem=480 * G, walltime=21600,
        name="cesm_hybrid", queue="main", account="UCSD0042",
        mail_events=["fail", "begin", "end"], mail_user="modeler@ucar.example",
        unknown=["-l select:ompthreads"]),
    "pbs/pro_v_vars_quoted.pbs": dict(
        nodes=1, tasks=1, cpus=16, memory_mb=32 * G, needs_mem=32 * G, walltime=7200,
        name="params", variables={"INFILE": "/data/case1/a.in", "NITER": "100", "MODE": "fast"}),
    "pbs/pro_walltime_minutes_seconds.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=90, name="tiny_test", queue="debug"),
    "pbs/pro_walltime_seconds_mem_kb.pbs": dict(
        nodes=1, tasks=1, cpus=8, memory_mb=15625, needs_mem=15625, walltime=7200, name="kb_mem",
        queue="workq"),
    "pbs/torque_named_hosts_no_ppn.pbs": dict(
        nodes=3, walltime=3600, name="three_hosts",
        notes=["nodes=n001+n002+n003: hosts named here: n001, n002, n003"]),
    "pbs/torque_nodes_ppn_pvmem.pbs": dict(
        nodes=2, tasks=16, cpus=16, walltime=18000, name="vmem_limited", account="chem_alloc",
        unknown=["-l"]),
    "pbs/torque_procs_pmem.pbs": dict(
        tasks=24, cpus=24, memory_mb=48 * G, per_cpu=2 * G, walltime=36000, name="procs_job",
        queue="batch"),
    # --------------------------------------------------------- LSF
    "lsf/M_limit_select_mem_G_group.lsf": dict(
        nodes=1, tasks=16, cpus=16, memory_mb=250 * G, per_cpu=16000, walltime=172800,
        name="bigmem_select", comment="genome assembly for batch 7",
        unknown=["-R select", "-G", "-sla", "-M"]),
    "lsf/W_hours_minutes_We_estimate.lsf": dict(
        nodes=1, tasks=12, cpus=12, walltime=5400, name="est_runtime", stdout="est.%j.out",
        stderr="est.%j.err", unknown=["-We"]),
    "lsf/array_step_limit_quoted.lsf": dict(
        tasks=1, cpus=1, walltime=1200, array="1-10:2%3", name="arr", stdout="out.%j.%a",
        stderr="err.%j.%a"),
    "lsf/gpu_num_per_task_j_exclusive_process.lsf": dict(
        nodes=1, tasks=4, cpus=28, gpus=4, needs_gpus=4, walltime=21600, name="gpu_per_task",
        queue="gpu_p100", unknown=["-gpu mode", "-gpu j_exclusive"]),
    "lsf/n_min_max_span_hosts.lsf": dict(
        nodes=1, tasks=4, cpus=4, walltime=7200, name="elastic_smp", stdout="%j.out",
        unknown=["-n"], notes=["line 3: slot range 4,8 kept as minimum 4"]),
    "lsf/outdir_oo_eo_patterns.lsf": dict(
        tasks=8, cpus=8, walltime=14400, name="out_managed",
        # -o/-e expand %J and %I only (bsub(1)): %U stays in the name as written
        stdout="/scratch/%%U/lsf/%j/stdout.txt", stderr="/scratch/%%U/lsf/%j/stderr.txt",
        unknown=["-outdir"]),
    "lsf/rusage_mem_duration_only.lsf": dict(
        tasks=2, cpus=2, memory_mb=8000, per_cpu=4000, walltime=1800, name="burst_mem",
        queue="short", unknown=["-R rusage"]),
    "lsf/rusage_multi_phase_mem.lsf": dict(
        tasks=4, cpus=4, walltime=7200, name="phased_mem", stdout="phased.%j.log",
        unknown=["-R rusage"], notes=["reserves memory in phases"]),
    "lsf/w_done_and_ended.lsf": dict(
        tasks=1, cpus=1, walltime=900, deps=[("afterok", ["31200"]), ("afterany", ["31201"])],
        name="combine"),
    "lsf/x_U_resv_P_project.lsf": dict(
        nodes=1, tasks=40, cpus=40, walltime=10800, exclusive=True, name="in_resv",
        account="GEO042", reservation="training_resv"),
    # -------------------------------------------------------- flux
    "flux/bank_queue_urgency_env.flux": dict(
        nodes=1, tasks=4, cpus=8, walltime=7200, queue="pdebug", account="physics",
        variables={"OMP_NUM_THREADS": "2"}),
    "flux/dependency_afterok_fluid.flux": dict(
        tasks=1, cpus=1, walltime=600, deps=[("afterok", ["fBq2XsHaw7Z"])], name="post"),
    "flux/exclusive_nodes_tasks.flux": dict(
        nodes=2, tasks=8, cpus=8, walltime=1800, exclusive=True, name="excl_pair"),
    "flux/nslots_cores_gpus_per_slot.flux": dict(
        tasks=4, cpus=32, gpus=8, needs_gpus=2, walltime=3600, name="slot_gpus", queue="pgpu"),
    # {{id.dec}} reached other schedulers as those characters (every job one file)
    "flux/output_id_dec_error_f58.flux": dict(
        nodes=1, tasks=4, cpus=4, walltime=2700, name="id_forms",
        stdout="logs/%x-{{id.dec}}.out", stderr="logs/%x-%j.err"),
    "flux/time_limit_float_hours_output_id.flux": dict(
        tasks=16, cpus=16, walltime=5400, name="float_time", stdout="job-%j.out",
        stderr="job-%j.err"),
    "flux/unbuffered_cwd_setattr_duration.flux": dict(
        nodes=2, tasks=2, cpus=32, walltime=3600, working_directory="/p/lustre2/bob/run5",
        unknown=["--unbuffered"]),
    # ------------------------------------------------- Grid Engine
    "sge/ckpt_notify_r_y.sge": dict(
        nodes=1, cpus=4, walltime=86400, name="ckpt_run", requeue=True,
        unknown=["-ckpt", "-notify"]),
    # h_rt=2:: is two hours (a zero field left empty, its colon kept): it was refused
    "sge/h_rt_empty_fields_s_rt.sge": dict(
        nodes=1, cpus=8, walltime=7200, name="two_hours", unknown=["-l s_rt"]),
    "sge/hold_jid_list_m_n_S.sge": dict(
        walltime=600, deps=[("afterany", ["7001", "7002"])], name="after_two", shell="/bin/bash",
        mail_events=[]),
    "sge/masterq_pe_mpi.sge": dict(
        tasks=32, cpus=32, walltime=28800, name="master_on_fat", queue="fat.q,all.q",
        export_all=True, unknown=["-masterq"]),
    "sge/pe_orte_pe_hostfile_machinefile.sge": dict(
        tasks=24, cpus=24, memory_mb=48 * G, per_cpu=2 * G, walltime=21600, name="hostfile_mpi"),
    "sge/pe_smp_range_1_8.sge": dict(
        nodes=1, cpus=1, walltime=7200, name="flex_threads", unknown=["-pe"],
        notes=["slot range smp 1-8 read as at least 1 slot"]),
    "sge/s_vmem_h_vmem_h_stack.sge": dict(
        memory_mb=5 * G, per_cpu=5 * G, walltime=14400, name="stack_hungry",
        unknown=["-l s_vmem", "-l h_stack"]),
    "sge/soft_hard_resources.sge": dict(
        memory_mb=2 * G, per_cpu=2 * G, walltime=3600, name="soft_pref",
        unknown=["-hard", "-soft", "-soft -l", "-hard"],
        notes=["-soft -l arch=lx-amd64 is a preference"]),
    "sge/t_step_two.sge": dict(
        memory_mb=1 * G, per_cpu=1 * G, walltime=900, array="1-10:2", name="odd_tasks",
        stdout="logs/%x.%j.%a.out", notes=["-l mem_free=1G read as the job's memory per slot"]),
    "sge/wd_explicit_o_e_dirs.sge": dict(
        walltime=1800, name="in_scratch", stdout="/scratch/alice/run12/logs/",
        stderr="/scratch/alice/run12/logs/", working_directory="/scratch/alice/run12"),
}

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=COMPARED_FIELDS, strict=ALL_STRICT, at_least=40)


@pytest.mark.parametrize("source, line, variable", [
    ("pbs", "cat $PBS_NODEFILE", "$PBS_NODEFILE (node file)"),
    ("pbs", "mpirun -machinefile ${PBS_NODEFILE} ./a", "$PBS_NODEFILE (node file)"),
    ("lsf", "echo $LSB_HOSTS", "$LSB_HOSTS (hosts, one per slot)"),
    ("lsf", "echo $LSB_MCPU_HOSTS", "$LSB_MCPU_HOSTS (hosts with slot counts)"),
    ("sge", "cat $PE_HOSTFILE", "$PE_HOSTFILE (PE host file)"),
    ("slurm", "scontrol show hostnames $SLURM_JOB_NODELIST", "$SLURM_JOB_NODELIST (node list)"),
])
def test_host_lists_are_kept_not_swapped_for_another_form(source, line, variable):
    """Each scheduler gives the job's hosts in a form of its own: Slurm a hostlist
    expression (n[001-003]), PBS a file of one host per slot, LSF the hosts inline, Grid
    Engine a file of host, slots, queue lines. $PBS_NODEFILE became $SLURM_JOB_NODELIST
    (`cat n[001-003]` reads no file) and $LSB_HOSTS, $PE_HOSTFILE the same: a line that
    ran wrong, unsaid. Now kept as written and said, into every other scheduler."""
    for target in {"slurm", "pbs", "lsf", "flux", "sge"} - {source}:
        body, notes = translate_body(line, source, target)
        assert body == line, (target, body)
        assert notes[0] == f"kept: line 1: {variable} has no {target} equivalent", notes
    rel = "pbs/torque_named_hosts_no_ppn.pbs"
    script, warnings = translated(HERE, rel, "slurm")
    assert "cat $PBS_NODEFILE\n" in script and "NODELIST" not in script
    assert "kept: line 6: $PBS_NODEFILE (node file) has no slurm equivalent" in warnings
    # the meanings that are one across schedulers still are
    assert translate_body("cd $PBS_O_WORKDIR", "pbs", "slurm")[0] == "cd $SLURM_SUBMIT_DIR"


def test_flux_setattr_duration_is_the_time_limit():
    """`--setattr=system.duration=3600` (or `duration=`, `.system.duration=`: flux implies
    `system.`) sets the jobspec's time limit, after -t/--time-limit: it was kept unread,
    the job read as having no limit and reaching Slurm without --time."""
    rel = "flux/unbuffered_cwd_setattr_duration.flux"
    script, warnings = translated(HERE, rel, "slurm")
    assert "#SBATCH --time=01:00:00\n" in script
    assert not any("duration" in w for w in warnings), warnings
    assert "#flux: --time-limit=1h\n" in translated(HERE, rel, "flux")[0]
    for lines in ("#flux: --setattr=duration=90.5\n#flux: -t 2h",
                  "#flux: -t 2h\n#flux: -S .system.duration=90.5"):
        spec = parse_lines("flux", lines)
        assert spec.resources.walltime_s == 91, lines  # a whole second up: never less
        assert any("flux sets it after -t/--time-limit, which asked 7200 s" in n
                   for n in spec.metadata["parse_notes"])
    no_limit = parse_lines("flux", "#flux: -t 1h\n#flux: --setattr=system.duration=0")
    assert no_limit.resources.walltime_s is None
    assert [(d.option, d.value) for d in no_limit.unknown] == [
        ("--setattr", "system.duration=0")]
    # what is no number of seconds (flux judges it), and another namespace: kept
    for value in ("system.duration=1h", "user.duration=60"):
        spec = parse_lines("flux", f"#flux: --setattr={value}")
        assert spec.resources.walltime_s is None
        assert [d.value for d in spec.unknown] == [value]


def test_lsf_multi_phase_rusage_is_kept_not_refused():
    """`rusage[mem=(8000 2000):duration=(20 30):decay=(1 0)]` reserves 8000 MB for 20
    minutes, then 2000: LSF's multi-phase form. It was refused as a bad rusage mem; now
    kept as written (LSF gets it back), said, no memory read from it."""
    rel = "lsf/rusage_multi_phase_mem.lsf"
    script, _ = translated(HERE, rel, "lsf")
    assert '#BSUB -R "rusage[mem=(8000 2000):duration=(20 30):decay=(1 0)]"\n' in script
    _, warnings = translated(HERE, rel, "slurm")
    assert any(w.startswith('dropped: #BSUB -R "rusage[mem=(8000 2000)') for w in warnings)
    source, text = read_fixture(HERE, rel)
    assert needs_of(get_script_dialect(source).parse_script(text)).memory_mb is None


@pytest.mark.parametrize("lines, nodes, per_node, kept", [
    ("--gpus=a100:16\n#SBATCH --gpus-per-node=4", 4, 4, False),
    ("--gpus-per-node=4\n#SBATCH --gpus=8", 2, 4, False),
    ("--gres=gpu:v100:2 --gpus=8", 4, 2, False),
    ("-N 2 --gpus=8 --gpus-per-node=4", 2, 4, False),
    ("-N 3 --gpus=8 --gpus-per-node=4", 3, 4, True),  # 3 x 4 is no 8
    ("--gpus=6 --gpus-per-node=4", None, 4, True),  # no whole number of nodes
])
def test_slurm_gpus_total_beside_a_per_node_count(lines, nodes, per_node, kept):
    """sbatch keeps --gpus (the job's) and --gpus-per-node (each node's) both; the later
    replaced the earlier, so `--gpus=16 --gpus-per-node=4` was 4 GPUs on one node and a
    Slurm round trip asked a quarter of the job. Read as the nodes that hold both, else
    the total kept as written, said."""
    spec = parse_lines("slurm", f"#SBATCH {lines}")
    r = spec.resources
    assert (r.nodes, r.gpus_per_node) == (nodes, per_node)
    assert [d.value for d in spec.unknown if d.option == "--gpus"] == (
        [lines.split("--gpus=")[1].split()[0]] if kept else [])
    script, _ = translated(HERE, "slurm/gpus_total_with_gpus_per_node.sbatch", "slurm")
    assert "#SBATCH --nodes=4\n" in script and "#SBATCH --gpus-per-node=a100:4\n" in script


def test_flux_mail_warning_without_an_address():
    _, warnings = translated(HERE, "pbs/pro_mem_tb_hugemem.pbs", "flux")
    assert "dropped: mail notification (fail,end; flux has none)" in warnings


@pytest.mark.parametrize("value, seconds", [
    ("2::", 7200), ("1::1", 3601), ("::90", 90), (":30:", 1800), ("0:15:0", 900)])
def test_grid_engine_time_with_empty_fields(value, seconds):
    """sge_types(1): a zero field of H:M:S may be left out, its colon kept; `h_rt=2::`
    (two hours) was refused as a bad h_rt. `::` alone is still no time."""
    assert parse_lines("sge", f"#$ -l h_rt={value}").resources.walltime_s == seconds
    with pytest.raises(BadInput, match="bad h_rt.*a zero field may be left empty"):
        parse_lines("sge", "#$ -l h_rt=::")


def test_flux_id_forms_in_a_file_name_become_the_job_id_elsewhere():
    rel = "flux/output_id_dec_error_f58.flux"
    for target, out, err in (("slurm", "--output=logs/%x-%j.out", "--error=logs/%x-%j.err"),
                             ("lsf", "-oo logs/%x-%J.out", "-eo logs/%x-%J.err"),
                             ("sge", "-o logs/$JOB_NAME-$JOB_ID.out",
                              "-e logs/$JOB_NAME-$JOB_ID.err")):
        script, warnings = translated(HERE, rel, target)
        assert out in script and err in script and "{{" not in script, script
        assert (f"approximated: {{{{id.dec}}}} in output path 'logs/%x-{{{{id.dec}}}}.out' "
                f"(flux's job id in its dec form) as {target}'s own job id") in warnings
    # flux itself keeps its forms (f58 is its default: written as {{id}})
    script, _ = translated(HERE, rel, "flux")
    assert "--output=logs/{{name}}-{{id.dec}}.out" in script
    assert "--error=logs/{{name}}-{{id}}.err" in script


def test_grid_engine_hard_and_soft_are_said_as_switches():
    """`-hard -l h_rt=...` was said dropped as if the limits on the line went with it;
    -hard and -soft are switches for the requests after them: said so."""
    _, warnings = translated(HERE, "sge/soft_hard_resources.sge", "slurm")
    hard = [w for w in warnings if w.startswith("dropped: #$ -hard -l h_rt")]
    assert hard and hard[0].endswith("the requests after it are read as limits)"), warnings
    assert any(w.startswith("dropped: #$ -soft -l arch=lx-amd64 (-soft -l arch=lx-amd64:")
               for w in warnings)
    script, _ = translated(HERE, "sge/soft_hard_resources.sge", "slurm")
    assert "#SBATCH --time=01:00:00\n" in script and "#SBATCH --mem-per-cpu=2G\n" in script


def test_flux_id_forms_name_the_output_file_that_diamond_logs_reads():
    """The file a flux job with `--output=logs/{{name}}-{{id.dec}}.out` writes: its id in
    decimal (flux-job-id(1)); the engine looked for `{{id.dec}}` as written."""
    from diamond_jupyter.dialects.flux_ids import flux_id_value, flux_words
    from diamond_jupyter.dialects.scripts_common import output_file_name

    jid = "fBq2XsHaw7Z"
    value = flux_id_value(jid)
    assert value is not None
    spec = parse_lines("flux", "#flux: -n 1 --job-name=id_forms\n"
                          "#flux: --output=logs/{{name}}-{{id.dec}}.out")
    assert output_file_name(spec.stdout or "", "flux", job_id=jid, name=spec.name) == (
        f"logs/id_forms-{value}.out", None)
    assert output_file_name("o.{{id.hex}}", "flux", job_id=jid, name=None)[0] == \
        f"o.{hex(value)}"
    dotted = output_file_name("o.{{id.dothex}}", "flux", job_id=jid, name=None)[0]
    assert int(dotted[2:].replace(".", ""), 16) == value and dotted.count(".") == 4
    # the words form (mnemonicode's list) is spelled here too
    assert output_file_name("o.{{id.words}}", "flux", job_id=jid, name=None) == (
        f"o.{flux_words(value)}", None)


def test_a_named_reservation_is_no_grid_engine_ar():
    """Grid Engine's `-ar` takes the id qrsub gave an advance reservation (qrstat -ar
    ar_id lists them); LSF's `-U training_resv` (a name) was written as
    `-ar training_resv`, which no AR id is. Said dropped; an id still carried."""
    script, warnings = translated(HERE, "lsf/x_U_resv_P_project.lsf", "sge")
    assert "-ar" not in script
    assert any(w.startswith("dropped: reservation training_resv (Grid Engine's -ar takes")
               for w in warnings), warnings
    numbered = "#!/bin/bash\n#$ -ar 42\n#$ -l h_rt=60\n./a\n"
    assert "#$ -ar 42\n" in translate(numbered, "sge", "sge")[0]
    assert "#SBATCH --reservation=42\n" in translate(numbered, "slurm", "sge")[0]


_OMP = ("#!/bin/bash\n#PBS -l select=2:ncpus=8:mpiprocs=2:ompthreads=4\n"
        "#PBS -l walltime=1:00:00\n#PBS -j oe\n{own}echo threads: ${{OMP_NUM_THREADS}}\n"
        "mpiexec ./hybrid\n")


@pytest.mark.parametrize("target", ["slurm", "lsf", "flux"])
def test_pbs_pro_omp_num_threads_is_said_where_the_script_reads_it(target):
    """PBS Pro sets $OMP_NUM_THREADS in the job (the chunk's ompthreads, else its ncpus);
    a Slurm, LSF or flux job written from the script does not, so a line reading it ran
    with another thread count unsaid (before, only the ompthreads directive was said
    dropped)."""
    _, warnings = translate(_OMP.format(own=""), target, "pbs")[:2]
    said = [w for w in warnings if "$OMP_NUM_THREADS" in w]
    assert said == [f"kept: line 5: $OMP_NUM_THREADS: PBS Pro sets it (the chunk's "
                    f"ompthreads, else its ncpus); the {target} job written here does not: "
                    "set it in the script (export OMP_NUM_THREADS=N)"], warnings


def test_omp_num_threads_the_script_sets_itself_is_not_said():
    own = _OMP.format(own="export OMP_NUM_THREADS=4\n")
    assert not [w for w in translate(own, "slurm", "pbs")[1] if "OMP_NUM_THREADS" in w]
    # from Slurm (which never sets it) nothing is said either
    slurm = "#!/bin/bash\n#SBATCH -n 2 -c 4 -t 10\necho $OMP_NUM_THREADS\n"
    assert not [w for w in translate(slurm, "pbs", "slurm")[1] if "OMP_NUM_THREADS" in w]
