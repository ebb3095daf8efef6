"""A fourth set of realistic batch scripts (tests/fixtures/scripts_unseen4/<dialect>/), on
what the first three sets left out: Slurm's --tres-per-task, aftercorr and delayed `after`
dependencies, abbreviated long options, licenses with a server, --begin/--deadline,
--signal with --requeue, --gres-flags, a hetjob whose first component holds the GPUs;
PBS Pro's place=pack and place=vscatter, max_run_subjobs and `-J X-Y:Z%N`, a GPU chunk
beside CPU chunks, Torque's chunked nodes with an array limit; LSF's `-n MIN,MAX`, -oo/-eo,
-U/-app/-sla, per-task GPUs, exit() dependencies; Flux's ƒ job ids, --begin-time, long
slot options, per-resource --cores; Grid Engine's -soft requests, -hold_jid_ad, a GPU
count beside an MPI PE, UGE's m_mem_free, Hoffman2's h_data. Each is parsed, its needs
read, translated into every dialect (its own too) and read back; the key values are what
each scheduler's documentation says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import (
    SCRIPT_DIALECTS,
    get_script_dialect,
    request_totals,
    translate,
)
from diamond_jupyter.model import BadInput
from diamond_jupyter.needs import needs_of
from tests.scripts_unseen_check import (
    TOTALS,
    check_translation,
    fixture_scripts,
    read_fixture,
    sweep_tests,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen4"
G = 1024  # MB in a GB

# As in test_scripts_unseen.EXPECTED: whole-job totals, walltime seconds, array, deps, the
# options kept as unknown directives, JobSpec fields; `needs_gpus`/`needs_mem` per node
# (needs_of); `per_cpu` the spec's memory per CPU.
EXPECTED: dict[str, dict[str, Any]] = {
    # ---------------------------------------------------------------- Slurm
    # --tres-per-task=cpu=N is --cpus-per-task=N (sbatch)
    "slurm/tres_per_task_cpu.sbatch": dict(
        nodes=2, tasks=8, cpus=64, memory_mb=2 * G * 64, per_cpu=2 * G, walltime=3 * 3600,
        name="tres-hybrid", queue="standard"),
    # gres/gpu:TYPE=N per task is --gpus-per-task=TYPE:N; the license stays as written
    "slurm/tres_per_task_gpu_license.sbatch": dict(
        tasks=4, cpus=32, gpus=4, gpu_type="a100", needs_gpus=1, walltime=12 * 3600,
        name="fluent-gpu", queue="gpu", unknown=["--tres-per-task"]),
    # aftercorr: task to task, on each task's success (a per-task afterok)
    "slurm/array_step_throttle_aftercorr.sbatch": dict(
        tasks=1, cpus=2, memory_mb=4 * G, walltime=1200, array="0-990:10%20",
        name="post-chunks", stdout="logs/%x_%A_%a.out", deps=[("afterok", ["4242"])]),
    # after:JOB+MIN (start + delay) has no neutral form
    "slurm/dependency_after_delay.sbatch": dict(
        tasks=1, walltime=7200, name="monitor",
        unknown=["--dependency", "--kill-on-invalid-dep"]),
    "slurm/licenses_reservation_deadline.sbatch": dict(
        tasks=1, cpus=12, memory_mb=48 * G, needs_mem=48 * G, walltime=4 * 3600,
        name="matlab-batch", account="eng-dept", qos="high", reservation="training_2026",
        unknown=["--licenses", "--deadline"]),
    "slurm/signal_requeue_mail_list.sbatch": dict(
        nodes=1, tasks=32, walltime=86400, name="ckpt-md", stdout="md-%j.log",
        mail_events=["begin", "end", "fail", "time_limit_80"],
        mail_user="md.user@uni.example", requeue=True, unknown=["--signal"]),
    "slurm/srun_pmi2_constraint_switches.sbatch": dict(
        nodes=4, tasks=512, cpus=512, memory_mb=4 * 240 * G, needs_mem=240 * G,
        walltime=6 * 3600, queue="compute", account="astro-alloc", features=["cpu", "ib"],
        unknown=["--switches"]),
    # one task: the 4 GPUs on one node, 12 CPUs and 80G for each GPU
    "slurm/gpus_cpus_per_gpu_single_task.sbatch": dict(
        tasks=None, cpus=48, gpus=4, needs_gpus=4, memory_mb=4 * 80 * G, walltime=8 * 3600,
        name="ddp-one-node", queue="gpu"),
    "slurm/uneven_tasks_mem_per_cpu.sbatch": dict(
        nodes=3, tasks=10, cpus=10, memory_mb=1500 * 10, per_cpu=1500, walltime=45 * 60,
        name="uneven"),
    # sbatch's memory units take lower case too (16g)
    "slurm/threads_per_core_ntasks_per_node.sbatch": dict(
        nodes=2, tasks=16, cpus=128, memory_mb=2 * 16 * G, needs_mem=16 * G,
        walltime=9000, unknown=["--threads-per-core"]),
    # getopt_long takes a unique prefix of a long option (--job, --part, --ntasks-per-n)
    "slurm/abbreviated_long_options.sbatch": dict(
        nodes=2, tasks=8, walltime=1800, name="abbrev", queue="debug", mail_events=["end"]),
    "slurm/array_percent_outputs.sbatch": dict(
        tasks=1, memory_mb=3 * G, walltime=3600, array="1-500%25", name="bootstrap",
        account="stats", stdout="out/%x_%A_%a.out", stderr="out/%x_%A_%a.err"),
    # --mem=0: each node's whole memory, no number of its own
    "slurm/gres_flags_exclusive_mem0.sbatch": dict(
        nodes=2, tasks=8, gpus=8, needs_gpus=4, memory_mb=None, walltime=36000,
        queue="gpu", exclusive=True, unknown=["--gres-flags"]),
    # only the first component maps (1 node, 2 GPUs); the CPU workers stay as written
    "slurm/hetjob_gpu_leader_cpu_workers.sbatch": dict(
        # each component read (tenth); the first's --mem carried into the workers' 8 nodes
        nodes=9, tasks=513, cpus=513, gpus=2, needs_gpus=2, memory_mb=9 * 64 * G,
        walltime=3 * 3600, name="couple-ml", queue="gpu"),
    # ---------------------------------------------------------------- PBS Pro / Torque
    # place=pack: every chunk on one host (PBS Pro): one node of 4 x 8 CPUs and 4 x 16gb
    "pbs/pro_place_pack_chunks.pbs": dict(
        nodes=1, tasks=32, cpus=32, memory_mb=64 * G, needs_mem=64 * G, walltime=7200,
        name="shm_ranks", queue="workq", unknown=["-l place:pack"]),
    # max_run_subjobs (PBS Pro 2020.1+, as `-J X-Y%N`): the array's running limit
    "pbs/pro_array_max_run_subjobs.pbs": dict(
        nodes=1, tasks=1, cpus=2, memory_mb=4 * G, walltime=1800, array="1-200%10",
        name="param_scan", account="PRJ0042", stdout="logs/", stderr="logs/",
        requeue=True),
    "pbs/pro_array_throttle_step.pbs": dict(
        nodes=1, tasks=1, cpus=1, memory_mb=2 * G, walltime=600, array="0-99:3%4",
        name="stepped"),
    "pbs/pro_gpu_model_scatter.pbs": dict(
        nodes=2, tasks=8, cpus=64, gpus=8, needs_gpus=4, memory_mb=2 * 250 * G,
        walltime=86400, exclusive=True, name="gromacs_gpu", queue="gpu",
        deps=[("afterany", ["81234.pbs-srv01"])], mail_events=["fail", "end"],
        unknown=["-l select:ompthreads", "-l select:gpu_model", "-l place:scatter"]),
    # two chunk shapes, summed (a job of several shapes since the seventh sweep), a note
    "pbs/pro_multichunk_gpu_head.pbs": dict(
        nodes=3, tasks=129, gpus=1, needs_gpus=1, walltime=6 * 3600, name="viz_plus_sim",
        unknown=["-P", "-k"], notes=["2 chunks"]),
    # 16 + 16 + 4 processes: 36 tasks, at most 16 a node (exact since the sixth sweep)
    "pbs/torque_nodes_chunks_array_pct.pbs": dict(
        nodes=3, tasks=36, memory_mb=2 * G * 36, per_cpu=2 * G, walltime=8 * 3600,
        array="1-5%2", name="tchunks", queue="batch", export_all=True),
    # exclusive_process is the GPUs' compute mode; k80 a node property
    "pbs/torque_feature_gpus_exclusive_process.pbs": dict(
        nodes=1, tasks=12, gpus=2, needs_gpus=2, memory_mb=48 * G, walltime=12 * 3600,
        name="cuda_md", account="chem_gpu", features=["k80"],
        deps=[("afterok", ["55501", "55502"])], unknown=["-l nodes:exclusive_process"]),
    "pbs/pro_vscatter_shared_ncpus_only.pbs": dict(
        nodes=6, tasks=6, cpus=24, walltime=3 * 3600, name="serial_farm", queue="long",
        unknown=["-l place:vscatter", "-l place:shared"]),
    # ---------------------------------------------------------------- LSF
    # -n MIN,MAX: at least MIN slots, kept as written; -oo/-eo overwrite the files
    "lsf/min_max_slots_overwrite_out.lsf": dict(
        nodes=1, tasks=4, walltime=7200, name="elastic", queue="normal",
        stdout="elastic.%j.out", stderr="elastic.%j.err", unknown=["-n"]),
    # num=1/task: a GPU for each task; mode=shared kept
    "lsf/gpu_per_task_shared.lsf": dict(
        nodes=1, tasks=4, gpus=4, needs_gpus=4, memory_mb=4 * 16 * G, walltime=6 * 3600,
        name="infer", queue="gpu", stdout="infer.%j.log", unknown=["-gpu mode"]),
    "lsf/array_step_throttle_render.lsf": dict(
        tasks=1, memory_mb=2000, walltime=1800, array="1-1000:10%50", name="render",
        stdout="frames/render.%j.%a.out"),
    # -U is the advance reservation; -app and -sla have no neutral form
    "lsf/reservation_app_sla.lsf": dict(
        nodes=1, tasks=16, memory_mb=16 * 30 * G, walltime=48 * 3600, name="bigmem_asm",
        account="genomics", reservation="maint_resv", unknown=["-app", "-sla"]),
    # the pre-`-gpu` GPU request (rusage[ngpus_physical]) is kept as written
    # rusage[ngpus_physical=2]: 2 GPUs on the host (read since the eighth sweep)
    "lsf/ngpus_physical_rusage.lsf": dict(
        nodes=1, tasks=8, gpus=2, needs_gpus=2, walltime=4 * 3600, name="oldgpu",
        queue="gpuq", unknown=["-R select"]),
    "lsf/ptile_mem_limit_units.lsf": dict(
        nodes=2, tasks=48, memory_mb=2 * G * 48, per_cpu=2 * G, walltime=12 * 3600,
        exclusive=True, name="cfd48", mail_events=["begin", "end"],
        mail_user="cfd@corp.example", unknown=["-M"]),
    # exit(JOB): the job ended with a failure (afternotok); -b (begin time) kept
    "lsf/exit_dependency_begin_time.lsf": dict(
        tasks=1, walltime=900, name="cleanup_on_fail", queue="short",
        deps=[("afternotok", ["4321"])]),
    # ---------------------------------------------------------------- Flux
    # a job id in F58 with its ƒ prefix; -t 45 is minutes (flux batch)
    "flux/unicode_jobid_begin_time.flux": dict(
        nodes=1, tasks=4, cpus=8, walltime=45 * 60, name="analyze", queue="pbatch",
        deps=[("afterany", ["ƒ2X4PLSfCDw"])]),
    "flux/long_slot_options_exclusive.flux": dict(
        nodes=2, tasks=4, cpus=32, gpus=4, needs_gpus=2, walltime=3 * 3600, exclusive=True,
        account="physics"),  # --bank is the account (eighth sweep; it was kept as unknown)
    "flux/signal_output_error_env.flux": dict(
        tasks=16, walltime=5400, stdout="logs/flux-%j.out", stderr="logs/flux-%j.err",
        export_all=False, unknown=["--signal"]),  # --env=HOME: passed from the shell
    "flux/setattr_requires_urgency.flux": dict(
        nodes=4, tasks=32, cpus=128, walltime=86400, features=["ib"],
        unknown=["--urgency", "--setattr"]),
    # per-resource: --cores is the job's, evenly over the nodes, one slot on each
    "flux/gpus_per_node_cores.flux": dict(
        nodes=2, tasks=2, cpus=96, gpus=16, needs_gpus=8, walltime=12 * 3600,
        name="llm-pretrain", queue="pgpu", deps=[("afterok", ["f4Kqz8mDHb2"])]),
    # ---------------------------------------------------------------- Grid Engine
    # -l gpu is the job's: 2 GPUs whatever the hosts the 32 slots land on (each needs 1)
    "sge/mpi_gpu_job_total.sge": dict(
        tasks=32, cpus=32, gpus=2, needs_gpus=1, memory_mb=4 * G * 32, per_cpu=4 * G,
        walltime=4 * 3600,
        name="mpi_gpu", queue="gpu.q"),
    # -soft requests are preferences: the hard queue and limits count, the rest is kept
    "sge/soft_queue_hard_limits.sge": dict(
        nodes=1, cpus=4, memory_mb=4 * 8 * G, walltime=86400, name="prefer_fast",
        queue="long.q", unknown=["-hard", "-soft", "-soft -q", "-soft", "-soft -l"]),
    "sge/hold_jid_ad_array_paths.sge": dict(
        memory_mb=2 * G, walltime=1800, array="1-100%10", name="stage2",
        stdout="logs/%x.%j.%a.out", unknown=["-hold_jid_ad"]),
    "sge/orte_fill_binding_reserve.sge": dict(
        tasks=64, memory_mb=3 * G * 64, walltime=12 * 3600, name="orte_fill",
        export_all=True, unknown=["-binding", "-R", "-P"]),
    # m_mem_free (UGE, a consumable per slot): the job's memory per slot
    "sge/uge_m_mem_free_smp.sge": dict(
        nodes=1, cpus=8, memory_mb=8 * 4 * G, per_cpu=4 * G, walltime=6 * 3600,
        name="uge_smp", mail_events=["begin", "end", "fail"], mail_user="bio@inst.example"),
    "sge/h_data_highp_shared.sge": dict(
        nodes=1, cpus=4, walltime=8 * 3600, name="hoffman_style", stdout="joblog.%j",
        memory_mb=16 * 1024, per_cpu=4 * 1024, unknown=["-l highp"]),
}

SCRIPTS = fixture_scripts(HERE)
_FIELDS = ("name", "queue", "account", "qos", "reservation", "stdout", "stderr", "requeue",
           "mail_events", "mail_user")


test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=_FIELDS, strict=("array", "exclusive", "needs_gpus"))


# ---------------------------------------------------------------- LSF

@pytest.mark.parametrize("opt", ["-oo", "-eo"])
def test_lsf_overwrite_outputs_round_trip(opt: str) -> None:
    """-oo / -eo (the file overwritten, not appended to) are written back as such: -eo
    came back as `-ee`, which bsub does not know (the error file was lost)."""
    text = f"#!/bin/bash\n#BSUB -n 1\n#BSUB {opt} run.%J.txt\n./x\n"
    out = translate(text, "lsf", "lsf")[0].splitlines()
    assert f"#BSUB {opt} run.%J.txt" in out
    back = get_script_dialect("lsf").parse_script("\n".join(out))
    assert back.unknown == []
    assert (back.stdout if opt == "-oo" else back.stderr) == "run.%j.txt"


def test_lsf_slot_range_is_written_once() -> None:
    """`-n 4,8` is kept as written; the round trip no longer adds a second `-n 4`."""
    _, text = read_fixture(HERE, "lsf/min_max_slots_overwrite_out.lsf")
    out = translate(text, "lsf", "lsf")[0].splitlines()
    assert [x for x in out if x.startswith("#BSUB -n")] == ["#BSUB -n 4,8"]
    spec = get_script_dialect("lsf").parse_script(text)
    spec.resources.tasks = 6  # a changed request is written from the model
    out = get_script_dialect("lsf").render_script(spec).script.splitlines()
    assert "#BSUB -n 6" in out


# ---------------------------------------------------------------- Grid Engine

@pytest.mark.parametrize(("lines", "walltime", "queue", "kept"), [
    ("#$ -soft -l h_rt=2:00:00\n#$ -hard -l h_vmem=2G", None, None,
     [("-soft", None), ("-soft -l", "h_rt=2:00:00"), ("-hard", None)]),
    ("#$ -q long.q\n#$ -soft -q short.q", None, "long.q",
     [("-soft", None), ("-soft -q", "short.q")]),
    ("#$ -soft -q short.q -hard -q long.q -l h_rt=600", 600, "long.q",
     [("-soft", None), ("-soft -q", "short.q"), ("-hard", None)]),
])
def test_sge_soft_requests_are_preferences(lines: str, walltime: int | None,
                                           queue: str | None, kept: list) -> None:
    """qsub -soft makes the -l and -q after it (until -hard) preferences the scheduler may
    ignore: they were read as the job's queue and limits (a soft h_rt became a hard
    walltime elsewhere). Kept as written, in their place on a Grid Engine round trip."""
    text = f"#!/bin/bash\n{lines}\n./x\n"
    spec = get_script_dialect("sge").parse_script(text)
    assert (spec.resources.walltime_s, spec.queue) == (walltime, queue)
    assert [(d.option, d.value) for d in spec.unknown] == kept
    script = translate(text, "sge", "sge")[0]
    back = get_script_dialect("sge").parse_script(script)
    assert [(d.option, d.value) for d in back.unknown] == kept
    assert (back.resources.walltime_s, back.queue) == (walltime, queue)
    slurm, warnings, _ = translate(text, "slurm", "sge")
    assert "short.q" not in slurm and "02:00:00" not in slurm
    assert any(w.startswith("dropped: #$ -soft") for w in warnings)


def test_sge_gpus_beside_an_mpi_pe_are_the_jobs_total() -> None:
    """-l gpu is a per-job consumable; with `-pe mpi 32` the slots land on hosts the PE
    picks. Slurm got --gpus-per-node=2 and LSF -gpu num=2 (per host): 2 on every node the
    32 tasks reach, more than asked. Now Slurm gets the job's --gpus=2 and LSF, which has
    no per-job GPU count, drops it by name."""
    _, text = read_fixture(HERE, "sge/mpi_gpu_job_total.sge")
    slurm, warnings, _ = translate(text, "slurm", "sge")
    out = slurm.splitlines()
    assert "#SBATCH --gpus=2" in out and not any("gpus-per-node" in x for x in out)
    assert not any(w.startswith("dropped") and "GPU" in w for w in warnings), warnings
    lsf, warnings, _ = translate(text, "lsf", "sge")
    assert "-gpu" not in lsf
    assert any(w.startswith("dropped: 2 GPUs for the whole job") for w in warnings)
    # a shared-memory PE is one host: its GPUs are that host's, in every dialect
    smp = text.replace("-pe mpi 32", "-pe smp 8")
    assert "#SBATCH --gpus-per-node=2" in translate(smp, "slurm", "sge")[0].splitlines()
    assert '#BSUB -gpu "num=2"' in translate(smp, "lsf", "sge")[0].splitlines()
    # placement spreads the job's GPUs over the nodes it takes, as for Slurm's --gpus
    from diamond_jupyter.placement_fit import request

    req = request(get_script_dialect("sge").parse_script(text), 16, 4)
    assert req.nodes * req.gpn >= 2 and req.gpn <= 2


# ---------------------------------------------------------------- Flux

@pytest.mark.parametrize(("lines", "nodes", "tasks", "cpus", "gpus"), [
    ("--nodes=2 --gpus-per-node=8 --cores=96", 2, 2, 96, 16),
    ("-N 4 --cores=64", 4, 4, 64, None),
    ("--cores=96", None, 96, 96, None),  # 96 one-core slots, anywhere
    ("-N 2 --tasks-per-node=4 --cores=64", 2, 8, 64, None),  # 8 CPUs a task
])
def test_flux_per_resource_cores(lines: str, nodes: int | None, tasks: int, cpus: int,
                                 gpus: int | None) -> None:
    """flux's per-resource request: --cores=C with --nodes=N is one slot of C/N cores on
    each node; without nodes, C slots of one core. It was read as one task of C cores,
    spanning nodes (impossible); translated, the GPUs of the second node were lost."""
    text = f"#!/bin/bash\n# flux: {lines}\nflux run ./a\n"
    spec = get_script_dialect("flux").parse_script(text)
    totals = request_totals(spec)
    assert (totals["nodes"], totals["tasks"], totals["cpus"], totals["gpus"]) == \
        (nodes, tasks, cpus, gpus)
    for target in SCRIPT_DIALECTS:
        if target != "sge":  # Grid Engine has no GPUs per node and no node count
            check_translation(text, "flux", target)
    slurm = request_totals(get_script_dialect("slurm").parse_script(
        translate(text, "slurm", "flux")[0]))
    assert slurm == totals


@pytest.mark.parametrize("lines", ["-N 2 --cores=7", "-N 4 --cores=2"])
def test_flux_cores_not_a_multiple_of_the_nodes_is_bad_input(lines: str) -> None:
    """flux refuses cores that do not divide evenly among the nodes: so does the reader,
    naming both (it read one task of all the cores)."""
    with pytest.raises(BadInput, match=r"--cores=\d+ does not divide among --nodes=\d+"):
        get_script_dialect("flux").parse_script(f"#!/bin/bash\n# flux: {lines}\n./a\n")


# ---------------------------------------------------------------- Slurm

@pytest.mark.parametrize(("value", "cpt", "gpt", "gpu_type", "kept"), [
    ("cpu=8", 8, None, None, None),
    ("cpu:4", 4, None, None, None),  # the older COUNT after a colon
    ("gres/gpu=1", None, 1, None, None),
    ("gres/gpu:a100=2,cpu=16", 16, 2, "a100", None),
    ("gres/gpu:h100:1", None, 1, "h100", None),
    ("gres/gpu:a100=1,license/ansys=1", None, 1, "a100", "license/ansys=1"),
    ("cpu=2k", None, None, None, "cpu=2k"),  # a suffixed count: sbatch judges it, kept
])
def test_slurm_tres_per_task(value: str, cpt: int | None, gpt: int | None,
                             gpu_type: str | None, kept: str | None) -> None:
    """--tres-per-task=cpu=N is --cpus-per-task=N and gres/gpu[:type]=N --gpus-per-task
    (sbatch): they were kept as written, the job read as one CPU and no GPU per task (16x
    too small elsewhere). Other entries stay as one --tres-per-task."""
    text = f"#!/bin/bash\n#SBATCH -n 4 --tres-per-task={value}\nsrun x\n"
    spec = get_script_dialect("slurm").parse_script(text)
    r = spec.resources
    assert (r.cpus_per_task, r.gpus_per_task, r.gpu_type) == (cpt, gpt, gpu_type)
    assert [(d.option, d.value) for d in spec.unknown] == \
        ([("--tres-per-task", kept)] if kept else [])
    out = translate(text, "slurm", "slurm")[0].splitlines()
    kept_lines = [x for x in out if "--tres-per-task" in x]
    assert kept_lines == ([f"#SBATCH --tres-per-task={kept}"] if kept else [])
    totals = request_totals(spec)
    for target in ("pbs", "lsf", "flux"):
        back = get_script_dialect(target).parse_script(translate(text, target, "slurm")[0])
        assert request_totals(back)["cpus"] == totals["cpus"], target
        assert request_totals(back)["gpus"] == totals["gpus"], target


# ---------------------------------------------------------------- PBS

@pytest.mark.parametrize(("lines", "array", "kept"), [
    ("#PBS -J 1-200\n#PBS -W max_run_subjobs=10", "1-200%10", []),
    ("#PBS -W max_run_subjobs=3\n#PBS -J 0-99:3", "0-99:3%3", []),  # any order
    ("#PBS -W max_run_subjobs=3", None, ["-W"]),  # no array: kept
])
def test_pbs_max_run_subjobs_is_the_arrays_limit(lines: str, array: str | None,
                                                 kept: list[str]) -> None:
    """PBS Pro's max_run_subjobs (2020.1+) limits the subjobs running at once, as
    `-J X-Y%N` does: it was kept, the limit lost elsewhere (Slurm ran all at once)."""
    text = f"#!/bin/bash\n#PBS -l select=1:ncpus=1\n{lines}\n./x\n"
    spec = get_script_dialect("pbs").parse_script(text)
    assert (spec.array.expression if spec.array else None) == array
    assert [d.option for d in spec.unknown] == kept
    if array:
        assert f"#SBATCH --array={array}" in translate(text, "slurm", "pbs")[0].splitlines()


@pytest.mark.parametrize("array", ["1-100%5", "0-99:3%4"])
def test_pbs_pro_array_keeps_its_running_limit(array: str) -> None:
    """`-J X-Y[:Z]%N` (PBS Pro 2020.1+): a Slurm or LSF limit reaches PBS Pro as written
    (it was dropped, `%N` said to be unsupported), and a PBS round trip keeps it."""
    text = f"#!/bin/bash\n#SBATCH -n 1\n#SBATCH --array={array}\nsrun x\n"
    script, warnings, _ = translate(text, "pbs", "slurm")
    assert f"#PBS -J {array}" in script.splitlines()
    assert not any("array" in w for w in warnings), warnings
    assert get_script_dialect("pbs").parse_script(script).array.expression == array


@pytest.mark.parametrize(("select", "place", "want"), [
    # (nodes, tasks, cpus, gpus, memory_mb)
    ("4:ncpus=8:mpiprocs=8:mem=16gb", "pack", (1, 32, 32, None, 64 * G)),
    ("2:ncpus=4:ngpus=1", "pack:excl", (1, 2, 8, 2, None)),
    ("1:ncpus=4:mpiprocs=4+2:ncpus=4:mpiprocs=4", "pack", (1, 12, 12, None, None)),
    ("4:ncpus=8:mpiprocs=8:mem=16gb", "scatter", (4, 32, 32, None, 64 * G)),
    ("4:ncpus=8:mpiprocs=8:mem=16gb", "free", (4, 32, 32, None, 64 * G)),
])
def test_pbs_place_pack_is_one_host(select: str, place: str, want: tuple) -> None:
    """place=pack puts every chunk on one host (PBS Pro): read as one node holding them
    all. It was read as one node per chunk (Slurm got --nodes=4 for a one-host job); the
    select stays as written on a PBS round trip, and placement sees one host."""
    text = f"#!/bin/bash\n#PBS -l select={select}\n#PBS -l place={place}\n./x\n"
    spec = get_script_dialect("pbs").parse_script(text)
    totals = request_totals(spec)
    assert tuple(totals[q] for q in TOTALS) == want
    out = translate(text, "pbs", "pbs")[0].splitlines()
    assert f"#PBS -l select={select}" in out
    slurm = translate(text, "slurm", "pbs")[0].splitlines()
    assert f"#SBATCH --nodes={want[0]}" in slurm
    if "pack" in place:
        assert needs_of(spec).memory_mb == want[4]  # on the one node


@pytest.mark.parametrize(("source", "text"), [
    ("sge", "#$ -l h_vmem=2G\n#$ -l h_rt=600"),
    ("slurm", "#SBATCH --mem-per-cpu=2G\n#SBATCH -t 10"),
    ("lsf", '#BSUB -R "rusage[mem=2GB]"\n#BSUB -W 10'),
])
def test_memory_of_a_one_cpu_job_reaches_pbs_pro(source: str, text: str) -> None:
    """A job of one slot with memory per CPU and no task count: PBS Pro gets one chunk
    holding that memory (it was dropped, "no chunk")."""
    script, warnings, spec = translate(f"#!/bin/bash\n{text}\n./x\n", "pbs", source)
    assert "#PBS -l select=1:mem=2gb" in script.splitlines()
    back = get_script_dialect("pbs").parse_script(script)
    assert request_totals(back)["memory_mb"] == request_totals(spec)["memory_mb"] == 2 * G
    assert not any(w.startswith("dropped") and "mem" in w for w in warnings), warnings


@pytest.mark.parametrize(("source", "line", "field"), [
    ("slurm", "#SBATCH --output=slurm-%A_%a.out", "stdout"),
    ("slurm", "#SBATCH --error=logs/%x_%j.err", "stderr"),
    ("slurm", "#SBATCH -o out/%x_%A_%a.txt", "stdout"),
    ("lsf", "#BSUB -o logs/%J_%I.out", "stdout"),
])
def test_array_file_patterns_are_not_template_placeholders(source: str, line: str,
                                                           field: str) -> None:
    """`%A_%a` looked like a `%NAME%` template placeholder (`%A_%`): the most common array
    output name was reported as a template kept as a raw value."""
    spec = get_script_dialect(source).parse_script(f"#!/bin/bash\n{line}\n./x\n")
    assert getattr(spec, field)
    assert not any("placeholder" in n for n in spec.metadata.get("parse_notes", []))
    # a real %NAME% placeholder is still one
    spec = get_script_dialect("slurm").parse_script(
        "#!/bin/bash\n#SBATCH -N %NODES%\n#SBATCH -o %JOB_NAME%.out\n./x\n")
    assert spec.resources.nodes is None
    assert any("placeholder" in n for n in spec.metadata["parse_notes"])


@pytest.mark.parametrize("lines", ["-N 4 -n 2", "--nodes=3 --nslots=1 -c 8"])
def test_flux_more_nodes_than_slots_is_bad_input(lines: str) -> None:
    """flux batch distributes its slots over the nodes and refuses a node left without
    one: so does the reader, naming both counts (it was translated as is, e.g. Slurm
    --nodes=4 --ntasks=2)."""
    with pytest.raises(BadInput, match=r"--nodes=\d+ is more than --nslots=\d+"):
        get_script_dialect("flux").parse_script(f"#!/bin/bash\n# flux: {lines}\n./a\n")
    ok = get_script_dialect("flux").parse_script("#!/bin/bash\n# flux: -N 2 -n 2\n./a\n")
    assert (ok.resources.nodes, ok.resources.tasks) == (2, 2)


@pytest.mark.parametrize(("lines", "gpus"), [
    ("#SBATCH -n 8 --gpus=8", 8),  # no node count: kept by the Slurm reader
    ("#SBATCH -N 2 -n 4 --gpus=3", 3),  # not a multiple of the nodes: kept too
    ("#SBATCH -N 2 -n 4 --gpus=4", 4),  # 2 per node, written back as the job's 4
])
def test_slurm_gpu_total_reaches_grid_engine_as_the_jobs(lines: str, gpus: int) -> None:
    """Grid Engine's -l gpu is the job's count, as Slurm's --gpus is: a --gpus=N the Slurm
    reader keeps as written (no per-node form) now reaches Grid Engine as -l gpu=N (it was
    dropped)."""
    script, warnings, _ = translate(f"#!/bin/bash\n{lines}\nsrun x\n", "sge", "slurm")
    assert any(x.startswith("#$ -l") and f"gpu={gpus}" in x.split(",")[-1]
               for x in script.splitlines()), script
    assert not any(w.startswith("dropped") and "--gpus" in w for w in warnings), warnings
    back = get_script_dialect("sge").parse_script(script)
    assert request_totals(back)["gpus"] == gpus


@pytest.mark.parametrize("lines", [
    "#SBATCH -n 2 --mem=100G\n#SBATCH --mem-per-cpu=4G",
    "#SBATCH --mem-per-cpu=4G -n 2\n#SBATCH --mem=8G",
    "#SBATCH -N 1 --gpus-per-node=2 --mem-per-gpu=40G\n#SBATCH --mem=90G",
])
def test_slurm_memory_options_are_mutually_exclusive(lines: str) -> None:
    """sbatch refuses --mem, --mem-per-cpu and --mem-per-gpu together: so does the reader,
    naming each with its line (one was silently dropped in a translation)."""
    with pytest.raises(BadInput, match=r"--mem.*\(line \d\).*mutually exclusive"):
        get_script_dialect("slurm").parse_script(f"#!/bin/bash\n{lines}\nsrun x\n")
    # the same option twice is not a conflict: the last one counts
    spec = get_script_dialect("slurm").parse_script(
        "#!/bin/bash\n#SBATCH --mem=4G\n#SBATCH --mem=8G\nsrun x\n")
    assert spec.resources.memory_mb == 8 * G


@pytest.mark.parametrize(("lines", "tasks", "cpus", "kept"), [
    ("#$ -pe mpi 16\n#$ -pe smp 8", None, 8, []),
    ("#$ -pe smp 8\n#$ -pe mpi 16", 16, 16, []),
    ("#$ -pe smp 4-8\n#$ -pe mpi 16", 16, 16, []),  # the earlier range is gone too
])
def test_sge_last_pe_wins(lines: str, tasks: int | None, cpus: int, kept: list) -> None:
    """qsub keeps the last -pe: the earlier one's slots no longer count (16 MPI tasks and
    then smp 8 were read as 16 tasks of 8 CPUs, refused even by Grid Engine itself)."""
    text = f"#!/bin/bash\n{lines}\n#$ -l h_rt=600\n./x\n"
    spec = get_script_dialect("sge").parse_script(text)
    totals = request_totals(spec)
    assert (totals["tasks"], totals["cpus"]) == (tasks, cpus)
    assert [d.option for d in spec.unknown] == kept
    check_translation(text, "sge", "sge")


@pytest.mark.parametrize("lines", ["--tasks-per-node=4 --gpus-per-node=2",
                                   "--gpus-per-node=4 --cores=16"])
def test_flux_gpus_per_node_needs_nodes(lines: str) -> None:
    """flux: --gpus-per-node goes with --nodes only (flux refuses it alone): bad input
    naming the fix, at read time (it was read, then refused only in a translation, with a
    message about the GPU total)."""
    with pytest.raises(BadInput, match=r"--gpus-per-node=\d+ without --nodes"):
        get_script_dialect("flux").parse_script(f"#!/bin/bash\n# flux: {lines}\n./a\n")


@pytest.mark.parametrize(("lines", "per_node", "per_task", "kept"), [
    ('-gpu "num=1/task"\n#BSUB -gpu "num=2"', 2, None, []),
    ('-gpu "num=2:mode=shared"\n#BSUB -gpu "num=1/task"', None, 1, []),
    ('-gpu "num=4:gmodel=V100"\n#BSUB -gpu -', 1, None, []),
])
def test_lsf_last_gpu_option_wins(lines: str, per_node: int | None, per_task: int | None,
                                  kept: list) -> None:
    """bsub keeps the last -gpu: the earlier one's count, model and mode no longer count
    (both counts stayed, and the translation was refused as a larger request)."""
    text = f"#!/bin/bash\n#BSUB -n 8\n#BSUB {lines}\n./x\n"
    spec = get_script_dialect("lsf").parse_script(text)
    r = spec.resources
    assert (r.gpus_per_node, r.gpus_per_task, r.gpu_type) == (per_node, per_task, None)
    assert [d.option for d in spec.unknown] == kept
    for target in ("slurm", "lsf"):
        check_translation(text, "lsf", target)


# ---------------------------------------------------------------- the body

@pytest.mark.parametrize(("source", "target", "line", "want"), [
    ("lsf", "slurm", "blender -s $LSB_JOBINDEX -e $((LSB_JOBINDEX+9)) -a",
     "blender -s $SLURM_ARRAY_TASK_ID -e $((SLURM_ARRAY_TASK_ID+9)) -a"),
    ("slurm", "pbs", "i=$(( (SLURM_ARRAY_TASK_ID - 1) * 10 ))",
     "i=$(( (PBS_ARRAY_INDEX - 1) * 10 ))"),
    ("slurm", "lsf", "f=${FILES[SLURM_ARRAY_TASK_ID]}", "f=${FILES[LSB_JOBINDEX]}"),
    ("sge", "slurm", "let half=NSLOTS/2", "let half=SLURM_NTASKS/2"),
    ("slurm", "sge", "(( n = SLURM_NTASKS * 2 ))", "(( n = NSLOTS * 2 ))"),
    # outside arithmetic a bare name is text, not a variable: left alone
    ("slurm", "lsf", "echo SLURM_JOB_ID is $SLURM_JOB_ID", "echo SLURM_JOB_ID is $LSB_JOBID"),
])
def test_bare_variables_in_shell_arithmetic_are_translated(source: str, target: str,
                                                           line: str, want: str) -> None:
    """Shell arithmetic reads a variable without `$` ($((LSB_JOBINDEX+9)), ((..)), let,
    an array subscript): such a name was left as it was, unset on the other scheduler,
    so the arithmetic silently used 0 (frame 9 instead of LSB_JOBINDEX+9)."""
    from diamond_jupyter.dialects.body import translate_body

    assert translate_body(line, source, target) == (want, [])


def test_a_bare_variable_without_an_equivalent_is_reported() -> None:
    from diamond_jupyter.dialects.body import translate_body

    out, notes = translate_body("echo $(( SLURM_ARRAY_TASK_ID + 1 ))", "slurm", "flux")
    assert out == "echo $(( SLURM_ARRAY_TASK_ID + 1 ))"
    assert notes == ["kept: line 1: $SLURM_ARRAY_TASK_ID (array index) has no flux equivalent"]


def test_torque_slot_and_node_counts_are_translated() -> None:
    """Torque's $PBS_NP (the job's execution slots) and $PBS_NUM_NODES: the task and node
    counts elsewhere (they were kept as written, unset on the other scheduler)."""
    _, text = read_fixture(HERE, "pbs/torque_nodes_chunks_array_pct.pbs")
    text = text.replace("mpirun -machinefile",
                        "echo $PBS_NUM_NODES; mpirun -np $PBS_NP -machinefile")
    slurm = translate(text, "slurm", "pbs")[0]
    assert "echo $SLURM_JOB_NUM_NODES; mpirun -np $SLURM_NTASKS -machinefile" in slurm
    sge = translate(text, "sge", "pbs")[0]
    assert "echo $NHOSTS; mpirun -np $NSLOTS" in sge


def test_lsf_a_later_slot_count_replaces_a_kept_range() -> None:
    """`-n 4,8` then `-n 6`: bsub keeps the last, 6 slots. The range stayed kept and was
    written after `-n 6` on a round trip, so bsub read 4,8 again."""
    text = "#!/bin/bash\n#BSUB -n 4,8\n#BSUB -n 6\n./x\n"
    spec = get_script_dialect("lsf").parse_script(text)
    assert (spec.resources.tasks, spec.unknown) == (6, [])
    out = translate(text, "lsf", "lsf")[0].splitlines()
    assert [x for x in out if x.startswith("#BSUB -n")] == ["#BSUB -n 6"]


@pytest.mark.parametrize(("lines", "nodes", "walltime", "kept"), [
    ("#SBATCH -N 2-4\n#SBATCH -N 3", 3, None, []),
    ("#SBATCH -t 0\n#SBATCH -t 1:00:00", None, 3600, []),
    ("#SBATCH -t 1:00:00\n#SBATCH -t UNLIMITED", None, None, [("--time", "UNLIMITED")]),
    ("#SBATCH -d afterok:1?afterany:2\n#SBATCH -d afterok:5", None, None, []),
    ("#SBATCH --exclusive=user\n#SBATCH --exclusive", None, None, []),
])
def test_slurm_a_later_option_replaces_an_earlier_kept_one(lines: str, nodes: int | None,
                                                           walltime: int | None,
                                                           kept: list) -> None:
    """sbatch keeps the last of an option. An earlier value kept as written (a node range,
    -t 0, an OR dependency) stayed beside the later one and was written after it, so sbatch
    read the earlier one again; a later kept -t UNLIMITED left the earlier hour in the
    model (an hour's limit elsewhere for an unlimited job)."""
    text = f"#!/bin/bash\n{lines}\nsrun x\n"
    spec = get_script_dialect("slurm").parse_script(text)
    assert (spec.resources.nodes, spec.resources.walltime_s) == (nodes, walltime)
    assert [(d.option, d.value) for d in spec.unknown] == kept
    back = get_script_dialect("slurm").parse_script(translate(text, "slurm", "slurm")[0])
    assert (back.resources.nodes, back.resources.walltime_s) == (nodes, walltime)
    assert [(d.option, d.value) for d in back.unknown] == kept
    assert back.dependencies == spec.dependencies


@pytest.mark.parametrize(("lines", "want", "features"), [
    ("-l select=2:ncpus=8:ngpus=1:mem=8gb:model=x\n#PBS -l select=1:ncpus=4",
     (1, 1, 4, None, None), []),
    ("-l nodes=2:ppn=8:gpus=1:ib\n#PBS -l nodes=1:ppn=4", (1, 4, 4, None, None), []),
])
def test_pbs_last_select_wins(lines: str, want: tuple, features: list) -> None:
    """qsub keeps the last -l select / -l nodes: the earlier one's GPUs, memory, node
    properties and kept chunk resources stayed (1 GPU and 8gb asked by no line)."""
    text = f"#!/bin/bash\n#PBS {lines}\n./x\n"
    spec = get_script_dialect("pbs").parse_script(text)
    assert tuple(request_totals(spec)[q] for q in TOTALS) == want
    assert spec.constraints.features == features and spec.unknown == []
    check_translation(text, "pbs", "pbs")


@pytest.mark.parametrize("lines", ["-N 2 -g 1 --gpus-per-node=2", "-n 8 --tasks-per-node=4",
                                   "-N 2 --cores=16\n# flux: -c 4"])
def test_flux_per_slot_and_per_resource_options_do_not_mix(lines: str) -> None:
    """flux sizes a job either by slots (-n, -c, -g) or per resource (--cores,
    --tasks-per-node, --gpus-per-node), never both: bad input naming one option of each
    with its line (it was read as a mix and refused only in a translation, or translated
    with a GPU count flux would never grant)."""
    with pytest.raises(BadInput, match=r"--\S+ \(line \d\) and --\S+ \(line \d\): flux refuses"):
        get_script_dialect("flux").parse_script(f"#!/bin/bash\n# flux: {lines}\n./a\n")
