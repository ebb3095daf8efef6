"""Realistic batch scripts the corpus may lack (tests/fixtures/scripts_unseen/<dialect>/):
each one parses, has its needs read, and translates into every other dialect; the key
values are checked against what each scheduler's documentation says they mean."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import (
    get_script_dialect,
    translate,
)
from tests.scripts_unseen_check import (
    fixture_scripts,
    read_fixture,
    sweep_tests,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen"
G = 1024  # MB in a GB

# Per script: whole-job totals (nodes, tasks, cpus, gpus, memory_mb as `request_totals`
# reads them), walltime seconds, array expression, dependencies [(kind, ids)], and the
# options that must be kept as unknown directives; other keys are JobSpec fields.
EXPECTED: dict[str, dict[str, Any]] = {
    # ---------------------------------------------------------------- Slurm
    "slurm/gres_typed_gpu.sbatch": dict(
        nodes=2, tasks=8, cpus=64, gpus=4, memory_mb=2 * 256 * G, walltime=2 * 86400,
        gpu_type="a100", name="train-resnet", queue="gpu", account="proj042"),
    # several gres entries: the GPUs are read, the node-local NVMe is kept
    "slurm/gres_gpu_and_nvme.sbatch": dict(
        nodes=2, tasks=8, cpus=64, gpus=8, needs_gpus=4, walltime=8 * 3600, gpu_type="a100",
        name="ml-ckpt", queue="gpu", unknown=["--gres"]),
    # --gpus is the job's total: 8 over 2 nodes, not 8 per node
    "slurm/gpus_job_total.sbatch": dict(
        nodes=2, tasks=8, cpus=8, gpus=8, needs_gpus=4, walltime=36 * 3600, queue="gpu"),
    "slurm/gpus_typed_total.sbatch": dict(
        nodes=4, tasks=16, cpus=16, gpus=4, walltime=8 * 3600, gpu_type="a100"),
    # 4 GPUs x 16 CPUs and x 80G on the node: 4 tasks of 16 CPUs, 320G
    "slurm/gpus_per_node_mem_per_gpu.sbatch": dict(
        nodes=1, tasks=4, cpus=64, gpus=4, memory_mb=4 * 80 * G, walltime=4 * 3600,
        gpu_type="h100", unknown=["--ntasks-per-socket"]),
    "slurm/array_throttle.sbatch": dict(
        tasks=None, cpus=None, memory_mb=2000, walltime=30 * 60, array="1-100%10",
        name="sweep"),
    "slurm/dependency_or.sbatch": dict(  # `?` is OR: any one suffices (DEPENDENCY_ANY)
        tasks=1, walltime=10 * 60,
        deps=[("afterok", ["1001", "1002"]), ("afterany", ["1003"])],
        unknown=["--kill-on-invalid-dep"]),
    "slurm/dependency_and.sbatch": dict(
        tasks=2, walltime=5400, deps=[("afterok", ["1001", "1002"]), ("afterany", ["1003"])]),
    # sbatch keeps the last --dependency given
    "slurm/dependency_repeated.sbatch": dict(tasks=1, deps=[("afternotok", ["600"])]),
    "slurm/time_min_day_hours.sbatch": dict(
        nodes=1, walltime=36 * 3600, memory_mb=None, exclusive=True, unknown=["--time-min"]),
    # only the first component of a heterogeneous job maps; the rest is kept as written
    # a later component in a partition of its own: read with it (tenth sweep; it was kept)
    "slurm/hetjob.sbatch": dict(
        nodes=5, tasks=129, cpus=132, memory_mb=264 * G, walltime=7200, queue=None,
        name="coupled"),
    "slurm/packjob.sbatch": dict(
        nodes=9, tasks=257, cpus=257, gpus=1, walltime=3600, queue="gpu"),
    # a count on a group is kept with it (sbatch's own example: [(knl&snc4&flat)*4&haswell*1])
    "slurm/constraint_group_count.sbatch": dict(
        nodes=2, walltime=3600, features=["[skylake|cascadelake]*2"]),
    "slurm/constraint_matching_or.sbatch": dict(nodes=4, features=["[rack1|rack2]"]),
    # sbatch keeps the last --constraint given
    "slurm/constraint_repeated.sbatch": dict(
        nodes=1, gpus=4, features=["gpu"], account="m1234_g", qos="regular"),
    "slurm/exclusive_user.sbatch": dict(
        nodes=2, tasks=32, cpus=32, walltime=1200, exclusive=False, unknown=["--exclusive"]),
    "slurm/quoted_and_comments.sbatch": dict(
        tasks=4, cpus=8, walltime=12 * 3600, name="my analysis", queue="long",
        mail_events=["end", "fail"], stdout="logs/run %j.txt"),
    "slurm/late_directives.sbatch": dict(nodes=1, walltime=15 * 60, ignored=2),
    "slurm/crlf_bom.sbatch": dict(nodes=2, tasks=16, cpus=16, walltime=7200, name="dos"),
    "slurm/tabs_empty.sbatch": dict(nodes=3, tasks=24, cpus=24, memory_mb=24 * G),
    # `#sbatch` is a comment; sbatch's long options are case-sensitive
    "slurm/case_oddities.sbatch": dict(
        nodes=None, tasks=8, cpus=8, walltime=None, queue=None,
        unknown=["--NTASKS", "--Time"]),
    # -t 0 asks for no time limit at all: not a zero-second one
    "slurm/time_zero_unlimited.sbatch": dict(
        tasks=1, walltime=None, queue="long", unknown=["--time"]),
    "slurm/gpu_per_task.sbatch": dict(
        tasks=4, cpus=32, gpus=4, memory_mb=4 * G * 32, walltime=6 * 3600),
    "slurm/node_range.sbatch": dict(nodes=2, tasks=16, walltime=45 * 60, unknown=["--nodes"]),
    # ---------------------------------------------------------------- PBS Pro / Torque
    # chunks as one superset shape (documented in pbs_script._chunks)
    # two chunk shapes, summed (a job of several shapes since the seventh sweep)
    "pbs/pro_multichunk.pbs": dict(
        nodes=3, tasks=73, cpus=76, gpus=8, memory_mb=2 * 180 * G, walltime=48 * 3600,
        exclusive=True, queue="workq", account="ABC123", name="coupled_run",
        unknown=["-l place:scatter"]),
    "pbs/torque_nodes_gpus.pbs": dict(
        nodes=4, tasks=64, cpus=64, gpus=8, memory_mb=2 * G * 64, walltime=48 * 3600,
        array="1-10%2"),
    "pbs/pro_array_depend.pbs": dict(
        nodes=1, tasks=1, cpus=4, memory_mb=8 * G, walltime=1800, array="1-10:2",
        deps=[("afterok", ["123.server"])], queue="batch", account="proj"),
    "pbs/torque_job_mem_days.pbs": dict(
        nodes=2, tasks=16, cpus=16, memory_mb=32 * G, walltime=2 * 86400,
        mail_events=["fail", "begin", "end"]),
    "pbs/pro_ompthreads_filesystems.pbs": dict(
        nodes=4, tasks=128, cpus=512, walltime=3600, deps=[("afterany", ["1001"])],
        unknown=["-l select:ompthreads", "-l", "-l place:scatter"]),
    "pbs/joined_l_options.pbs": dict(nodes=2, tasks=2, cpus=8, walltime=600, exclusive=True),
    "pbs/torque_pmem.pbs": dict(nodes=1, tasks=12, cpus=12, memory_mb=4 * G * 12,
                                walltime=12 * 3600),
    # pbs/pro_jobwide_mem.pbs (`-l select=1:ncpus=8` then `-l mem=16gb`) is gone: PBS Pro
    # refuses a job-wide mem beside a select, and so does its reader now (test_scripts_unseen26)
    "pbs/depend_multi.pbs": dict(
        nodes=1, tasks=1, cpus=1, walltime=300,
        deps=[("afterok", ["100", "101"]), ("afternotok", ["102"])]),
    "pbs/torque_procs.pbs": dict(nodes=None, tasks=32, cpus=32, walltime=3600),
    # ---------------------------------------------------------------- LSF
    "lsf/span_rusage_select.lsf": dict(
        nodes=4, tasks=64, cpus=64, memory_mb=4000 * 64, walltime=4 * 3600,
        unknown=["-R select"]),
    # -M 8000: a limit per process (per task), MB when no unit is given
    "lsf/gpu_exclusive_array.lsf": dict(
        tasks=1, gpus=2, memory_mb=8000, walltime=3600, array="1-50%5",
        deps=[("afterok", ["123"])], name="arr", unknown=["-gpu mode"]),
    "lsf/csm_nnodes.lsf": dict(nodes=4, tasks=None, walltime=7200, account="ABC123",
                               queue="batch", unknown=["-alloc_flags"]),
    "lsf/affinity_two_R.lsf": dict(tasks=4, cpus=16, memory_mb=4000, walltime=45 * 60),
    "lsf/depend_and.lsf": dict(tasks=1, walltime=600,
                               deps=[("afterok", ["123"]), ("afterany", ["456"])]),
    "lsf/depend_or.lsf": dict(tasks=1, deps=[("afterok", ["1"]), ("afterok", ["2"])]),
    "lsf/hosts_one_exclusive.lsf": dict(
        nodes=1, tasks=8, cpus=8, memory_mb=16 * G, exclusive=True,
        mail_events=["begin", "end"]),
    "lsf/walltime_minutes.lsf": dict(tasks=2, walltime=90 * 60, unknown=["-We"]),
    "lsf/gpu_per_task.lsf": dict(nodes=2, tasks=8, gpus=8, needs_gpus=4, walltime=9000),
    "lsf/array_step_rename.lsf": dict(tasks=1, walltime=900, array="1-100:2", name="sweep"),
    # ---------------------------------------------------------------- Flux
    "flux/short_options.flux": dict(  # 8 tasks of 1 GPU on 2 nodes: 4 GPUs per node
        nodes=2, tasks=8, cpus=8, gpus=8, needs_gpus=4, walltime=1800, name="sim",
        queue="pbatch"),
    "flux/upper_setattr_bank.flux": dict(
        nodes=2, tasks=8, cpus=32, walltime=5400, account="abc", stdout="job.%j.out"),
    # -N without -n: one slot per node, nodes whole (flux batch/run documentation)
    "flux/nodes_cores_no_nslots.flux": dict(
        nodes=2, tasks=2, cpus=8, walltime=1800, exclusive=True, name="omp-per-node"),
    "flux/days_exclusive.flux": dict(nodes=1, walltime=2 * 86400, exclusive=True,
                                     queue="pdebug"),
    "flux/per_node_gpus_cores.flux": dict(nodes=2, tasks=8, cpus=16, gpus=4, walltime=3600),
    "flux/dependency_fluid.flux": dict(
        tasks=4, cpus=8, walltime=600, hold=True, deps=[("afterok", ["f2X4PLSfCDw"])]),
    # RFC 23: `inf` is an unlimited duration; flux takes a limit of 0 as none
    "flux/time_inf.flux": dict(nodes=1, walltime=None, unknown=["--time-limit"]),
    "flux/time_zero.flux": dict(tasks=1, walltime=None, unknown=["--time-limit"]),
    "flux/setopt_env.flux": dict(tasks=16, cpus=16, walltime=45 * 60, unknown=["--setopt"]),
    # ---------------------------------------------------------------- Grid Engine
    "sge/mpi_pe.sge": dict(
        tasks=32, cpus=32, memory_mb=4 * G * 32, walltime=12 * 3600, array="1-10",
        deps=[("afterany", ["123", "124"])], name="mpi_job"),
    "sge/smp_pe.sge": dict(nodes=1, tasks=None, cpus=8, memory_mb=2 * G * 8, walltime=3600),
    "sge/array_tc_hold_name.sge": dict(walltime=1200, array="1-100:5%10", deps=[],
                                       unknown=["-hold_jid"]),
    "sge/gpu_queue.sge": dict(gpus=2, walltime=1800, queue="gpu.q"),
    # a shared-memory PE: one task of 4 CPUs on one host
    "sge/threaded_pe.sge": dict(nodes=1, tasks=None, cpus=4, memory_mb=3 * G * 4,
                                walltime=86400),
}

SCRIPTS = fixture_scripts(HERE)
_FIELDS = ("name", "queue", "account", "qos", "stdout", "hold", "requeue", "mail_events")


test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=_FIELDS, strict=("ignored",))


def test_array_limit_renders_in_each_schedulers_syntax() -> None:
    _, text = read_fixture(HERE, "slurm/array_throttle.sbatch")
    lsf = translate(text, "lsf", "slurm")[0]
    assert "#BSUB -J sweep[1-100]%10" in lsf.splitlines()  # not sweep[1-100%10]
    sge = translate(text, "sge", "slurm")[0].splitlines()
    assert "#$ -t 1-100" in sge and "#$ -tc 10" in sge
    assert translate(lsf, "slurm", "lsf")[2].array.expression == "1-100%10"


def test_foreign_job_ids_are_dropped_by_name() -> None:
    _, text = read_fixture(HERE, "pbs/pro_array_depend.pbs")
    for target in ("slurm", "lsf", "sge", "flux"):
        script, warnings, _ = translate(text, target, "pbs", dependency_ids="target")
        assert "123.server" not in script, target
        assert any(w.startswith("dropped: dependency afterok:123.server") for w in warnings)
    assert "#PBS -W depend=afterok:123.server" in translate(text, "pbs", "pbs")[0]
    _, text = read_fixture(HERE, "flux/dependency_fluid.flux")
    assert "#SBATCH --dependency" not in translate(text, "slurm", "flux")[0]
    _, text = read_fixture(HERE, "slurm/dependency_and.sbatch")
    lsf = translate(text, "lsf", "slurm", dependency_ids="target")[0]
    assert '#BSUB -w "done(1001) && done(1002) && ended(1003)"' in lsf.splitlines()


def test_hetjob_components_stay_in_order_on_a_slurm_round_trip() -> None:
    _, text = read_fixture(HERE, "slurm/hetjob.sbatch")
    out = translate(text, "slurm", "slurm")[0].splitlines()
    i = out.index("#SBATCH hetjob")
    assert "#SBATCH --nodes=1" in out[:i] and "#SBATCH --mem=8G" in out[:i]
    # the later component read with its own partition (tenth sweep), written back with it
    assert out[i + 1:i + 5] == ["#SBATCH --partition=compute", "#SBATCH --nodes=4",
                                "#SBATCH --ntasks-per-node=32", "#SBATCH --mem=64G"]
    assert not any(line.startswith("#SBATCH") for line in out[i + 5:])


@pytest.mark.parametrize(("line", "per_node", "kept"), [
    ("#SBATCH --gpus=8\n#SBATCH -N 2", 4, False),
    ("#SBATCH -N 4\n#SBATCH -G v100:8", 2, False),
    ("#SBATCH --gpus=3\n#SBATCH -N 2", None, True),  # 2 + 1: no per-node form
    ("#SBATCH --gpus=2", 2, False),
    # sbatch keeps both (the job's total and each node's): 2 nodes of 1 GPU hold no 8, so
    # the total is kept as written (sweep 14; it was read as replaced by the later one)
    ("#SBATCH --gpus=8 -N 2\n#SBATCH --gpus-per-node=1", 1, True),
])
def test_slurm_gpus_is_a_job_total(line: str, per_node: int | None, kept: bool) -> None:
    from diamond_jupyter.dialects.slurm_script import slurm_script

    spec = slurm_script.parse_script(f"#!/bin/bash\n{line}\nsrun x\n")
    assert spec.resources.gpus_per_node == per_node
    assert [d.option for d in spec.unknown] == (["--gpus"] if kept else [])
    assert "slurm_gpus" not in spec.metadata


@pytest.mark.parametrize("target", ["slurm", "pbs", "lsf", "flux"])
def test_quoted_values_survive_a_translation(target: str) -> None:
    """A value holding a double quote or a backslash is written escaped inside double
    quotes, and read back as it was (it used to come back as `say \\hi"`)."""
    text = ("#!/bin/bash\n#SBATCH --job-name='say \"hi\"'\n"
            "#SBATCH --output=\"C:\\\\logs\\\\out %j.txt\"\nsrun x\n")
    spec = get_script_dialect("slurm").parse_script(text)
    assert (spec.name, spec.stdout) == ('say "hi"', "C:\\logs\\out %j.txt")
    script = translate(text, target, "slurm")[0]
    back = get_script_dialect(target).parse_script(script)
    # PBS's qsub -N refuses a name with a blank: `_` instead (reported)
    assert back.name == ('say_"hi"' if target == "pbs" else 'say "hi"')
    # PBS has no job-id token: `%j` is written as it is (said) and read back as the
    # literal `%` it is there (`%%j`)
    want = spec.stdout.replace("%j", "%%j") if target == "pbs" else spec.stdout
    assert back.stdout.replace("%J", "%j").replace("{{id}}", "%j") == want


def test_several_gres_entries_render_as_one_gres_and_are_reported_elsewhere() -> None:
    _, text = read_fixture(HERE, "slurm/gres_gpu_and_nvme.sbatch")
    out = translate(text, "slurm", "slurm")[0].splitlines()
    assert [x for x in out if x.startswith("#SBATCH --g")] == ["#SBATCH --gres=gpu:a100:4,nvme:1"]
    for target in ("pbs", "lsf", "flux"):  # Grid Engine refuses 8 tasks x 8 CPUs as slots
        warnings = translate(text, target, "slurm")[1]
        assert any(w.startswith("dropped: #SBATCH --gres=gpu:a100:4,nvme:1") and "nvme:1" in w
                   for w in warnings), target
    # a later hetjob component's --gres stays with it; the GPUs of the first keep their line
    spec = get_script_dialect("slurm").parse_script(
        "#!/bin/bash\n#SBATCH --gres=gpu:2,nvme:1\n#SBATCH hetjob\n#SBATCH --gres=shard:1\nx\n")
    out = get_script_dialect("slurm").render_script(spec).script.splitlines()
    assert out[1:4] == ["#SBATCH --gres=gpu:2,nvme:1", "#SBATCH hetjob",
                        "#SBATCH --gres=shard:1"]
