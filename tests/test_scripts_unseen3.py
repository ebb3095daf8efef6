"""A third set of realistic batch scripts (tests/fixtures/scripts_unseen3/<dialect>/), on
what the first two sets left out: Slurm's per-GPU options (--ntasks-per-gpu, --cpus-per-gpu,
--mem-per-gpu with GPUs per task), a job's GPU total without a node count, --nodelist,
--hint, --switches, singleton and OR dependencies, a name starting with `-`; PBS walltime
in seconds and MM:SS, Torque chunks with GPUs, `-W group_list`, `-v` with a bare name;
LSF's several -R strings, -We, -c, -G, -nnodes with -x; Flux's bundled short options and
fractional durations; Grid Engine's PE slot ranges, late directives (qsub reads them) and
queue instances. Each is parsed, its needs read, translated into every dialect (its own
too) and read back; the key values are what each scheduler's documentation says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import (
    get_script_dialect,
    request_totals,
    translate,
)
from diamond_jupyter.model import BadInput
from diamond_jupyter.needs import needs_of
from tests.scripts_unseen_check import (
    _renamed,
    fixture_scripts,
    read_fixture,
    sweep_tests,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen3"
G = 1024  # MB in a GB

# As in test_scripts_unseen.EXPECTED: whole-job totals, walltime seconds, array, deps, the
# options kept as unknown directives, JobSpec fields; `needs_gpus`/`needs_mem` per node
# (needs_of); `per_cpu` the spec's memory per CPU; `notes` words a parse note must hold.
EXPECTED: dict[str, dict[str, Any]] = {
    # ---------------------------------------------------------------- Slurm
    # 4 GPUs per node x 8 CPUs shared by 4 tasks: 8 CPUs each; 4 x 40G per node
    "slurm/gpu_per_gpu_cpus_mem.sbatch": dict(
        nodes=2, tasks=8, cpus=64, gpus=8, memory_mb=2 * 4 * 40 * G, walltime=86400,
        gpu_type="a100", needs_gpus=4, needs_mem=4 * 40 * G, name="llm-finetune",
        queue="gpu_a100", account="ml-lab", stdout="logs/%x-%j.out"),
    # --ntasks-per-gpu with the GPUs given: 2 tasks for each of the 4 GPUs
    "slurm/ntasks_per_gpu.sbatch": dict(
        nodes=1, tasks=8, gpus=4, needs_gpus=4, walltime=7200, queue="gpu",
        gpu_bind="single:2"),
    "slurm/hint_distribution.sbatch": dict(
        nodes=4, tasks=256, cpus=256, walltime=8 * 3600, name="wrf_d03", queue="standard",
        qos="standard", distribution="block:cyclic", unknown=["--hint"]),
    "slurm/constraint_counts_and_or.sbatch": dict(
        nodes=4, tasks=128, walltime=3 * 3600, features=["[haswell*2&skylake*2]"]),
    "slurm/constraint_paren_or.sbatch": dict(
        nodes=2, tasks=56, walltime=45 * 60,
        features=["ib&(cpu_gen:icelake|cpu_gen:sapphire)"]),
    "slurm/switches_nodelist_exclude.sbatch": dict(
        nodes=8, tasks=384, walltime=6 * 3600, name="alltoall",
        unknown=["--switches", "--exclude"]),
    # the job holds every host of --nodelist: 4 nodes at least
    "slurm/nodelist_w.sbatch": dict(nodes=4, tasks=4, walltime=600, name="pinned",
                                    unknown=["--nodelist"], notes=["at least 4 nodes"]),
    # `?` (OR) in a dependency list: no neutral form, kept whole
    "slurm/dependency_mixed_or.sbatch": dict(
        tasks=1, walltime=600, deps=[], unknown=["--dependency", "--kill-on-invalid-dep"]),
    "slurm/dependency_singleton.sbatch": dict(tasks=1, walltime=1800, name="nightly-sync",
                                              deps=[], unknown=["--dependency"]),
    "slurm/export_none_open_mode.sbatch": dict(
        tasks=16, memory_mb=1500 * 16, per_cpu=1500, walltime=4 * 3600, export_all=False,
        unknown=["--get-user-env", "--wckey"]),  # --open-mode=append: read
    # -J takes the next word even when it starts with '-'; -pbatch, -N2: bundled values
    "slurm/short_clusters_dash_name.sbatch": dict(
        nodes=2, tasks=48, cpus=96, walltime=3600, queue="batch", account="proj1",
        qos="normal", name="-lead-dash"),
    # --gpus=8 over 8 tasks and no --nodes: Slurm picks the nodes (up to one per task);
    # kept as written, each node needs 1 GPU at least
    "slurm/gpus_tasks_no_nodes.sbatch": dict(
        nodes=None, tasks=8, cpus=48, gpus=None, needs_gpus=1, walltime=12 * 3600,
        queue="gpu", unknown=["--gpus"]),
    # sbatch keeps the last of each option
    "slurm/repeated_last_wins.sbatch": dict(tasks=8, walltime=2 * 86400, queue="long",
                                            array="0-99%5"),
    "slurm/licenses_container_mem_t.sbatch": dict(
        tasks=1, cpus=32, memory_mb=G * G, needs_mem=G * G, walltime=7 * 86400,
        queue="bigmem", unknown=["--licenses", "--container"]),
    # 60G per GPU, one GPU and 16 CPUs per task: 3840MB per CPU on any layout
    "slurm/gpus_per_task_mem_per_gpu.sbatch": dict(
        tasks=4, cpus=64, gpus=4, memory_mb=4 * 60 * G, per_cpu=3840, needs_gpus=1,
        walltime=6 * 3600),
    # --ntasks-per-node alone: one node (sbatch's default node count), 4 tasks
    "slurm/ntasks_per_node_only.sbatch": dict(nodes=None, tasks=4, cpus=16, walltime=3600),
    # BOM, CRLF, tabs, an empty --comment, a trailing comment, a late (ignored) directive
    "slurm/bom_crlf_blank_late.sbatch": dict(
        nodes=1, tasks=12, walltime=90 * 60, name="dos_tabs", comment="", ignored=1),
    # ---------------------------------------------------------------- PBS Pro / Torque
    # walltime in plain seconds; a site's software resource and -k kept
    "pbs/pro_walltime_seconds_software.pbs": dict(
        nodes=1, tasks=32, cpus=32, memory_mb=120 * G, walltime=5400, name="fluent_run",
        queue="cpu", unknown=["-l", "-k"]),
    # D:HH:MM:SS; two chunks (2 x 16 tasks with a GPU + 1 x 4) as the largest one's size
    "pbs/torque_days_chunks_gpus.pbs": dict(
        nodes=3, tasks=36, gpus=2, needs_gpus=1, walltime=2 * 86400, queue="batch",
        mail_events=["fail", "begin", "end"], mail_user="someone@example.edu"),
    # PBS reads MM:SS (two fields) as minutes and seconds
    "pbs/pro_walltime_mmss.pbs": dict(nodes=1, tasks=1, cpus=1, walltime=1800, name="quick"),
    # pmem per process; vmem and -W group_list kept
    "pbs/torque_pmem_vmem.pbs": dict(
        nodes=1, tasks=8, memory_mb=2 * G * 8, per_cpu=2 * G, walltime=4 * 3600,
        name="gaussian_opt", unknown=["-l", "-W"]),
    # -v with a bare name (copied from qsub's environment): the whole list kept
    "pbs/env_vars_group.pbs": dict(
        nodes=1, tasks=1, cpus=4, memory_mb=16 * G, needs_mem=16 * G, walltime=3600,
        export_all=True, unknown=["-W", "-P"]),  # -v VERBOSE: its value at submission
    "pbs/name_leading_digit.pbs": dict(nodes=2, tasks=128, walltime=12 * 3600, name="3d-sim",
                                       account="ABC-123"),
    # Torque's afterokarray: the array's afterok (sweep 15; it was kept unread)
    "pbs/torque_array_pct_afterokarray.pbs": dict(
        nodes=1, tasks=1, walltime=1200, array="0-31%4", name="collect",
        deps=[("afterok", ["4567[]"])]),
    "pbs/pro_host_chunk.pbs": dict(nodes=1, tasks=16, walltime=45 * 60, queue="debug",
                                   unknown=["-l select:host"]),
    "pbs/pro_array_step_place_free_r.pbs": dict(
        nodes=1, tasks=1, cpus=2, memory_mb=4 * G, walltime=300, array="0-999:100",
        name="chunked", requeue=True, unknown=["-l place:free", "-l place:shared"]),
    # CRLF and a tab; -l mem is the job's (48gb over 3 nodes); a late directive ignored
    "pbs/torque_crlf_late.pbs": dict(
        nodes=3, tasks=36, memory_mb=48 * G, needs_mem=16 * G, walltime=10 * 3600,
        name="crlf_job", ignored=1),
    "pbs/depend_multiple_W.pbs": dict(
        nodes=1, tasks=1, walltime=600, name="chain",
        deps=[("afterok", ["101.pbs01", "102.pbs01"])], unknown=["-W"]),
    # ---------------------------------------------------------------- LSF
    # several -R strings: LSF merges them
    "lsf/multi_R_order.lsf": dict(
        nodes=4, tasks=64, memory_mb=4000 * 64, per_cpu=4000, walltime=3 * 3600,
        name="namd_apoa1", queue="normal", stdout="namd.%j.out", stderr="namd.%j.err",
        unknown=["-R select", "-R order"]),
    "lsf/gpu_gmodel_mode.lsf": dict(
        nodes=1, tasks=2, gpus=2, needs_gpus=2, gpu_type="TeslaV100", walltime=12 * 3600,
        name="resnet", queue="gpu", unknown=["-gpu mode"]),
    # -W H:M is the run limit; -We (an estimate) and -c (CPU time) kept
    "lsf/W_We_c.lsf": dict(tasks=8, walltime=5400, queue="short", name="est",
                           unknown=["-We"]),
    # the dependency on a job name (ended(prep)) has no neutral form: kept whole
    "lsf/array_pct_dep_name.lsf": dict(tasks=1, walltime=1200, array="1-10%2", name="sweep",
                                       deps=[], stdout="out.%j.%a", unknown=["-w"]),
    "lsf/nnodes_alloc_flags_P_G.lsf": dict(
        nodes=16, tasks=None, walltime=7200, account="CSC123", queue="batch",
        name="lammps_big", exclusive=True, unknown=["-G", "-alloc_flags"]),
    # %J and %I: the job and the array index
    "lsf/output_I_cwd.lsf": dict(
        nodes=1, tasks=4, memory_mb=4 * 2 * G, walltime=45 * 60, array="1-200",
        name="frames", working_directory="/scratch/render", stdout="logs/%j_%a.out",
        stderr="logs/%j_%a.err"),
    "lsf/select_and_rusage_duration.lsf": dict(
        nodes=1, tasks=16, memory_mb=16000 * 16, walltime=8 * 3600, queue="long",
        unknown=["-R select", "-R rusage"]),
    # bare -W is minutes; bsub stops at the first command
    "lsf/late_directive_minutes.lsf": dict(tasks=2, walltime=45 * 60, ignored=1),
    # -M per process; -B/-N mail; -env "all, VAR=..."
    "lsf/M_limit_rusage_block.lsf": dict(
        nodes=2, tasks=24, memory_mb=3 * G * 24, per_cpu=3 * G, walltime=6 * 3600,
        mail_events=["begin", "end"], mail_user="user@example.org", export_all=True),
    # affinity[] with placement options: each task's 6 cores read, the string kept;
    # rusage[mem] per slot (a task of 6 cores), 2 slots a host
    "lsf/affinity_distribute_pack.lsf": dict(
        nodes=4, tasks=8, cpus=48, memory_mb=8 * 8 * G, walltime=4 * 3600, name="omp_hybrid",
        queue="normal", unknown=["-R affinity"]),
    # ---------------------------------------------------------------- Flux
    "flux/requires_dependency_exclusive.flux": dict(
        nodes=4, tasks=16, cpus=128, gpus=16, needs_gpus=4, walltime=7200, exclusive=True,
        queue="pbatch", name="sim16", features=["rack3"],
        deps=[("afterok", ["fABCdef123"])]),
    # -n4 -c2 -t90s -qpdebug: values bundled with their letters
    "flux/bundled_short_values.flux": dict(tasks=4, cpus=8, walltime=90, queue="pdebug"),
    "flux/time_fraction_hours.flux": dict(nodes=1, tasks=8, cpus=32, walltime=5400,
                                          stdout="run.%j.log"),
    "flux/two_dependencies_urgency.flux": dict(
        tasks=2, walltime=900, deps=[("afterany", ["f11AAAAAAA"]), ("afterok", ["f22BBBBBBB"])],
        unknown=["--urgency", "--setattr"]),
    "flux/env_cwd_flags.flux": dict(
        tasks=1, cpus=16, walltime=3 * 3600, export_all=False,
        working_directory="/p/lustre1/run42", unknown=["--flags"]),
    "flux/per_node_gpus_tasks.flux": dict(
        nodes=2, tasks=8, cpus=64, gpus=8, needs_gpus=4, walltime=4 * 3600, queue="pgpu",
        account="guests"),
    # ---------------------------------------------------------------- Grid Engine
    # a slot range: at least 4 slots of 2G (the range kept for Grid Engine)
    "sge/pe_smp_range.sge": dict(nodes=1, cpus=4, memory_mb=4 * 2 * G, walltime=7200,
                                 name="blast_chunk", unknown=["-pe"]),
    # a queue instance: the queue; a hold on a job name kept
    # the job id read, the name beside it kept (sweep 17: the id was dropped elsewhere)
    "sge/queue_instance_hold_names.sge": dict(walltime=600, queue="all.q", name="finalize",
                                              deps=[("afterany", ["1234"])],
                                              unknown=["-hold_jid"]),
    "sge/array_step_tc_binary.sge": dict(walltime=1800, array="1-100:5%10", stdout="logs/",
                                         unknown=["-b"]),
    # qsub reads #$ lines anywhere: the h_rt and -V after `cd` count
    "sge/late_notify_reserve.sge": dict(
        tasks=64, walltime=48 * 3600, export_all=True, working_directory="/scratch/me/run1",
        unknown=["-R", "-notify"]),
    # -l a=..,b=..: one list; h_rt in plain seconds
    "sge/orte_list_rt_seconds.sge": dict(
        tasks=64, memory_mb=2 * G * 64, per_cpu=2 * G, walltime=2 * 86400, name="big_mpi",
        mail_events=["begin", "end", "fail"], unknown=["-P"]),
    "sge/gpu_exclusive_arch.sge": dict(
        nodes=1, cpus=8, gpus=2, needs_gpus=2, walltime=8 * 3600, queue="gpu.q",
        account="mlgroup", exclusive=True, architecture="x86_64"),
    "sge/crlf_threads_outputs.sge": dict(
        nodes=1, cpus=4, walltime=3600, name="crlf_sge", stdout="%x.%j.out",
        stderr="%x.%j.err", mail_events=["end", "fail"]),
}

SCRIPTS = fixture_scripts(HERE)
_FIELDS = ("name", "queue", "account", "qos", "stdout", "stderr", "comment", "requeue",
           "mail_events", "mail_user", "working_directory")


test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=_FIELDS, strict=("array", "exclusive", "ignored",
                                                        "needs_gpus"))


# ---------------------------------------------------------------- Slurm: GPUs and tasks

def _slurm(lines: str):
    return get_script_dialect("slurm").parse_script(f"#!/bin/bash\n{lines}\nsrun x\n")


@pytest.mark.parametrize(("lines", "tasks", "gpus_per_node", "kept"), [
    ("#SBATCH -N 1 --gpus=4 --ntasks-per-gpu=2", 8, 4, []),
    ("#SBATCH --ntasks-per-gpu=3\n#SBATCH -N 2 --gpus-per-node=2", 12, 2, []),  # any order
    ("#SBATCH --gres=gpu:2 --ntasks-per-gpu=2", 4, 2, []),
    ("#SBATCH -N 2 -n 8 --ntasks-per-gpu=2", 8, 2, []),  # ceil(8 / 2) = 4 GPUs on 2 nodes
    ("#SBATCH -n 7 --ntasks-per-gpu=2", 7, None, ["--ntasks-per-gpu"]),  # nodes: Slurm's
    ("#SBATCH --ntasks-per-gpu=2", None, None, ["--ntasks-per-gpu"]),
])
def test_slurm_ntasks_per_gpu(lines: str, tasks: int | None, gpus_per_node: int | None,
                              kept: list[str]) -> None:
    """sbatch: --ntasks-per-gpu with the GPUs given sets the task count (K per GPU); with
    --ntasks it sets the GPUs (ceil(tasks / K)); K tasks share a GPU (gpu-bind single:K).
    It used to be kept, the job read as one task."""
    spec = _slurm(lines)
    r = spec.resources
    assert (r.tasks, r.gpus_per_node) == (tasks, gpus_per_node)
    assert [d.option for d in spec.unknown] == kept
    if not kept:
        assert r.gpu_bind == f"single:{lines.split('--ntasks-per-gpu=')[1][0]}"


@pytest.mark.parametrize(("lines", "gpus_per_node", "needs_gpus", "kept"), [
    ("#SBATCH -n 8 --gpus=8", None, 1, True),  # up to 8 nodes: 1 GPU on each at least
    ("#SBATCH -n 2 --gpus=a100:8", None, 4, True),
    ("#SBATCH --gpus=8", 8, 8, False),  # one task: one node holds them all
    ("#SBATCH --ntasks-per-node=4 --gpus=8", 8, 8, False),  # one node (sbatch's default)
    ("#SBATCH -n 8 -N 2 --gpus=8", 4, 4, False),
])
def test_slurm_gpu_total_without_a_node_count(lines: str, gpus_per_node: int | None,
                                              needs_gpus: int, kept: bool) -> None:
    """--gpus is the job's; without --nodes Slurm may spread several tasks over several
    nodes, so the GPUs per node are not known: kept as written, each node needing at least
    ceil(N / tasks). It was read as N GPUs on each node (over-stated, and translated as
    N x tasks elsewhere, then refused)."""
    spec = _slurm(lines)
    assert spec.resources.gpus_per_node == gpus_per_node
    assert [d.option for d in spec.unknown] == (["--gpus"] if kept else [])
    assert needs_of(spec).gpus == needs_gpus
    if kept:  # translated: the GPUs reported lost, never multiplied (Grid Engine's -l gpu
        # is the job's own count: test_scripts_unseen4 checks it carried exactly)
        for target in ("pbs", "lsf", "flux"):
            try:
                _, warnings, _ = translate(f"#!/bin/bash\n{lines}\nsrun x\n", target, "slurm")
            except BadInput as exc:
                assert "gpu" not in str(exc).lower(), exc
                continue
            assert any("--gpus" in w and w.startswith("dropped") for w in warnings), warnings


def test_placement_spreads_a_gpu_total_over_the_nodes_slurm_would_take() -> None:
    from diamond_jupyter.placement_fit import request

    spec = _slurm("#SBATCH -n 8 -c 6 --gpus=8")
    req = request(spec, 64, 4)  # 64 cores, 4 GPUs a node: 2 nodes of 4 GPUs
    assert (req.nodes, req.gpn, req.nodes * req.tpn) == (2, 4, 8)
    req = request(spec, 64, 8)  # 8 GPUs on a node: all on one
    assert (req.nodes, req.gpn) == (1, 8)
    req = request(spec, 12, 8)  # 2 tasks of 6 CPUs a node: 4 nodes, 2 GPUs each
    assert (req.nodes, req.gpn) == (4, 2)


@pytest.mark.parametrize("target", ["slurm", "pbs", "lsf", "flux", "sge"])
def test_memory_per_gpu_of_gpus_per_task_goes_everywhere(target: str) -> None:
    """--mem-per-gpu with GPUs per task (tasks per node unknown) is memory per CPU: the
    same 4 x 60G in every dialect (it was kept, and lost elsewhere)."""
    cpt = 1 if target == "sge" else 4  # Grid Engine refuses tasks of several slots
    line = f"#SBATCH -n 4 --gpus-per-task=1 -c {cpt} --mem-per-gpu=60G"
    text = f"#!/bin/bash\n{line}\nsrun x\n"
    spec = _slurm(line)
    assert (spec.resources.memory_per_cpu_mb, spec.unknown) == (60 * G // cpt, [])
    script, warnings, _ = translate(text, target, "slurm")
    back = get_script_dialect(target).parse_script(script)
    if target == "flux":  # flux batch has no memory option
        assert any(w.startswith("dropped: memory") for w in warnings)
    else:
        assert request_totals(back)["memory_mb"] == 4 * 60 * G, script


@pytest.mark.parametrize(("per_cpu", "cpt", "rusage"), [
    ("3840M", 16, "rusage[mem=60GB]"), ("1G", 4, "rusage[mem=4GB]"), ("1000", 1, None)])
def test_lsf_slot_memory_holds_each_cpu_of_the_task(per_cpu: str, cpt: int,
                                                    rusage: str | None) -> None:
    """LSF reserves rusage[mem] per slot, a slot per task: memory per CPU x CPUs per task
    (it was written per CPU: 16x less for -c 16)."""
    text = f"#!/bin/bash\n#SBATCH -n 4 -c {cpt} --mem-per-cpu={per_cpu}\nsrun x\n"
    script, _, spec = translate(text, "lsf", "slurm")
    if rusage:
        assert rusage in script
    back = get_script_dialect("lsf").parse_script(script)
    assert request_totals(back)["memory_mb"] == request_totals(spec)["memory_mb"]


def test_lsf_hard_limit_of_threaded_tasks_round_trips() -> None:
    """-M is per process (a task of 4 cores): an LSF round trip writes it as given (it was
    written per core, 4x smaller)."""
    text = '#!/bin/bash\n#BSUB -n 2\n#BSUB -R "affinity[core(4)]"\n#BSUB -M 4GB!\n./x\n'
    out = translate(text, "lsf", "lsf")[0].splitlines()
    assert [x for x in out if x.startswith("#BSUB -M")] == ["#BSUB -M 4GB!"]


@pytest.mark.parametrize("target", ["pbs", "lsf", "flux", "sge"])
def test_tasks_per_node_alone_is_one_node_everywhere(target: str) -> None:
    """sbatch's default is one node: --ntasks-per-node=4 alone is 4 tasks there. The other
    dialects used to get one task (PBS, LSF) or none (flux)."""
    text = "#!/bin/bash\n#SBATCH --ntasks-per-node=4\n#SBATCH -t 10\nsrun x\n"
    script, _, spec = translate(text, target, "slurm")
    assert request_totals(spec)["tasks"] == 4
    back = request_totals(get_script_dialect(target).parse_script(script))
    assert back["tasks"] == 4 and back["nodes"] in (1, None), script


@pytest.mark.parametrize(("lines", "nodes"), [
    ("#SBATCH -w node[01-04] -n 4", 4),
    ("#SBATCH --nodelist=a1,a2,a3", 3),
    ("#SBATCH -w node[01-04] -N 6", 6),  # the node count given wins (more hosts added)
    ("#SBATCH --nodelist=/home/me/hosts.txt -n 4", None),  # a file: sbatch reads it
    ("#SBATCH -w node[01-04] -n 2", None),  # more hosts than tasks: sbatch judges it
    ("#SBATCH -w gpu07", None),
])
def test_slurm_nodelist_is_a_minimum_node_count(lines: str, nodes: int | None) -> None:
    spec = _slurm(lines)
    assert spec.resources.nodes == nodes
    assert [d.option for d in spec.unknown] == ["--nodelist"]


# ---------------------------------------------------------------- names and PE ranges

@pytest.mark.parametrize("target", ["pbs", "sge"])
def test_a_name_starting_with_a_dash_is_not_an_option_for_qsub(target: str) -> None:
    """`#PBS -N -lead` / `#$ -N -lead`: qsub would read the name as an option; rendered
    with a letter in front, a warning naming both."""
    _, text = read_fixture(HERE, "slurm/short_clusters_dash_name.sbatch")
    text = text.replace("-N2 -n48 -c2", "-N2 -n48")  # Grid Engine: tasks, not slots of 2
    script, warnings, _ = translate(text, target, "slurm")
    opt = "#PBS -N" if target == "pbs" else "#$ -N"
    assert [x for x in script.splitlines() if x.startswith(opt)] == [f"{opt} j-lead-dash"]
    assert _renamed(warnings, "-lead-dash")
    # Slurm and Flux keep it as it was (an option's value: --job-name=-lead-dash); LSF
    # refuses it (`#BSUB -J -lead-dash` bsub can read as an option)
    for other in ("slurm", "flux"):
        back = translate(text, other, "slurm")[0]
        assert get_script_dialect(other).parse_script(back).name == "-lead-dash"
    with pytest.raises(BadInput, match="lsf cannot express the job name '-lead-dash'"):
        translate(text, "lsf", "slurm")


@pytest.mark.parametrize(("pe", "tasks", "cpus"), [
    ("smp 4-8", None, 4), ("mpi 16-32", 16, 16), ("mpi 2-", 2, 2), ("orte -16", 1, 1),
    ("mpi 8,16,32", 8, 8),
])
def test_sge_slot_range_is_at_least_its_smallest(pe: str, tasks: int | None,
                                                 cpus: int) -> None:
    """qsub -pe NAME n-m grants between n and m slots: read as n (it was no slots at all,
    the per-slot memory counted once); kept as written, one -pe line on a round trip."""
    text = f"#!/bin/bash\n#$ -pe {pe}\n#$ -l h_vmem=1G\n./x\n"
    spec = get_script_dialect("sge").parse_script(text)
    totals = request_totals(spec)
    assert (totals["tasks"], totals["cpus"], totals["memory_mb"]) == (tasks, cpus, cpus * G)
    assert [(d.option, d.value) for d in spec.unknown] == [("-pe", pe)]
    out = translate(text, "sge", "sge")[0].splitlines()
    assert [x for x in out if x.startswith("#$ -pe")] == [f"#$ -pe {pe}"]


def test_flux_gpus_per_node_without_tasks_keeps_the_cpus() -> None:
    """A Grid Engine job of 8 slots (smp) and 2 GPUs: one task on one node; flux gets
    --tasks-per-node=1 with --cores=8 (the CPUs were dropped)."""
    _, text = read_fixture(HERE, "sge/gpu_exclusive_arch.sge")
    script, warnings, _ = translate(text, "flux", "sge")
    back = request_totals(get_script_dialect("flux").parse_script(script))
    assert (back["nodes"], back["tasks"], back["cpus"], back["gpus"]) == (1, 1, 8, 2)
    assert not any("CPUs per task" in w for w in warnings)


def test_lsf_bare_memory_limit_names_the_unit_it_assumes() -> None:
    spec = get_script_dialect("lsf").parse_script("#!/bin/bash\n#BSUB -M 4000\n./x\n")
    assert spec.resources.memory_per_cpu_mb == 4000
    assert any("LSF_UNIT_FOR_LIMITS=MB" in n for n in spec.metadata["parse_notes"])
    spec = get_script_dialect("lsf").parse_script("#!/bin/bash\n#BSUB -M 4GB\n./x\n")
    assert not any("LSF_UNIT_FOR_LIMITS" in n for n in spec.metadata["parse_notes"])


@pytest.mark.parametrize(("pe", "slurm_var"), [("smp 8", "SLURM_CPUS_PER_TASK"),
                                               ("mpi 8", "SLURM_NTASKS")])
def test_nslots_is_the_cpus_of_a_shared_memory_job(pe: str, slurm_var: str) -> None:
    """$NSLOTS counts slots: the CPUs of the one task of a shared-memory PE (it became
    $SLURM_NTASKS, 1, for `-num_threads $NSLOTS`), the tasks of an MPI one; and back."""
    text = f"#!/bin/bash\n#$ -pe {pe}\n#$ -l h_rt=600\n./app -t $NSLOTS\n"
    slurm = translate(text, "slurm", "sge")[0]
    assert f"./app -t ${slurm_var}" in slurm.splitlines()
    assert "./app -t $NSLOTS" in translate(slurm, "sge", "slurm")[0].splitlines()


@pytest.mark.parametrize(("affinity", "cpus"), [
    ("core(4):cpubind=core:distribute=pack", 16), ("core(2,same=socket)", 8),
    ("thread(3,exclusive=(core,injob))", 12), ("core(2)*2", 4),  # a multiplier: kept alone
])
def test_lsf_affinity_with_options_keeps_the_cores_of_each_task(affinity: str,
                                                               cpus: int) -> None:
    """affinity[core(N,...):...] gives each task N cores whatever its options: the CPUs
    are read (they were left out: 1 per task), the string kept and written back once."""
    text = f'#!/bin/bash\n#BSUB -n 4\n#BSUB -R "affinity[{affinity}]"\n./x\n'
    spec = get_script_dialect("lsf").parse_script(text)
    assert request_totals(spec)["cpus"] == cpus
    assert [(d.option, d.value) for d in spec.unknown] == [("-R affinity", f"affinity[{affinity}]")]
    out = translate(text, "lsf", "lsf")[0]
    assert out.count("affinity[") == 1 and f"affinity[{affinity}]" in out
    slurm = translate(text, "slurm", "lsf")[0]
    assert request_totals(get_script_dialect("slurm").parse_script(slurm))["cpus"] == cpus


def test_a_node_count_reaches_pbs_pro_as_that_many_hosts():
    """Slurm's -N 4 is four hosts; PBS Pro's default place=free may pack four chunks on one
    host, so the translation says place=scatter (with excl for an exclusive job). Tasks
    without a node count, and a PBS script's own select, are left free."""
    def pbs_lines(text: str) -> list[str]:
        return [x for x in translate(text, "pbs")[0].splitlines() if x.startswith("#PBS -l")]

    assert "#PBS -l place=scatter" in pbs_lines(
        "#!/bin/bash\n#SBATCH -N 4\n#SBATCH --ntasks-per-node=8\nsrun ./a\n")
    assert "#PBS -l place=scatter:excl" in pbs_lines(
        "#!/bin/bash\n#SBATCH -N 4\n#SBATCH --exclusive\nsrun ./a\n")
    assert "#PBS -l place=scatter" in pbs_lines(  # LSF: 16 tasks, 4 to a host
        "#!/bin/bash\n#BSUB -n 16\n#BSUB -R \"span[ptile=4]\"\nmpirun ./a\n")
    assert not any("place=" in x for x in pbs_lines("#!/bin/bash\n#SBATCH -n 4\nsrun ./a\n"))
    assert not any("place=" in x for x in pbs_lines(
        "#!/bin/bash\n#PBS -l select=4:ncpus=8\n./a\n"))
