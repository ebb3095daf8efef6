"""The sixth sweep of SWF logs unlike the shared ones, each generated here and small: shapes
of other archive logs (a machine a little smaller than the site, MaxNodes alone with its
processors per node in the header, a Blue Gene's 512-core units, a machine of 100,000
processors, loads near 100% and near 0%, a thousand jobs in one second, memory fields in
KB, a grid's tiny jobs, partitions of different sizes, a header's UnixStartTime and time
zone), dependent jobs' think times (field 18), and the thinning's match of the log's
utilization on logs and sites of very different sizes."""

from __future__ import annotations

import asyncio
import math
import random
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from diamond_jupyter.testbed import load
from diamond_jupyter.testbed.clusters import ClusterDef, PartitionDef, cluster
from diamond_jupyter.testbed.load import LoadJob, submit_argv
from diamond_jupyter.testbed.trace import SwfLog, plan_replay, read_swf


def _line(number: int, submit: float, wait: float = 0, run: float = 100, procs: int = 4,
          req: float = 600, status: int = 1, alloc: int | None = None, partition: int = 1,
          preceding: int = -1, think: float = -1, used_kb: float = -1, req_kb: float = -1,
          ) -> str:
    """One SWF job line (18 fields) of the values a test names."""
    given = procs if alloc is None else alloc
    return (f"{number} {submit:g} {wait:g} {run:g} {given} -1 {used_kb:g} {procs} {req:g} "
            f"{req_kb:g} {status} {number % 7 + 1} 1 -1 1 {partition} {preceding} {think:g}\n")


def _whole(log: SwfLog, scale: float = 60.0) -> float:
    """A duration (real seconds) whose window holds every submission of the log."""
    return (log.span[1] - log.span[0]) / scale + 1


def _number(name: str) -> int:
    return int(name.split("-", 2)[2].split(".")[0])  # trace-arrive-17.2 -> 17


def _site(nodes: int, cpus: int) -> ClusterDef:
    return ClusterDef(name=f"s{nodes}x{cpus}", index=9, nodes=nodes, cpus=cpus,
                      memory_mb=1000, features=(),
                      partitions=(PartitionDef("batch", "1-00:00:00", default=True),))


def _steady(machine: int, sizes: list[int], load: float, jobs: int, seed: int,
            ) -> list[tuple[float, float, float, int]]:
    """(submit, wait, run, processors) of `jobs` jobs of the given sizes on a machine of
    `machine` processors loaded about `load`: Poisson arrivals, log-normal runs, each job
    started first-come first-served when it fits (its wait computed here); whole seconds."""
    rng = random.Random(seed)
    chosen = [rng.choice(sizes) for _ in range(jobs)]
    runs = [min(int(rng.lognormvariate(math.log(1200), 0.8)) + 1, 20 * 3600)
            for _ in range(jobs)]
    rate = load * machine / (sum(s * r for s, r in zip(chosen, runs, strict=True)) / jobs)
    ends: list[tuple[int, int]] = []  # (end, processors) of the jobs started
    rows, t, free, last_start = [], 0.0, machine, 0
    for size, run in zip(chosen, runs, strict=True):
        t += rng.expovariate(rate)
        submit = int(t)
        start = max(submit, last_start)
        ends.sort()
        while ends and (ends[0][0] <= start or free < size):
            end, held = ends.pop(0)
            free += held
            start = max(start, end)
        free -= size
        ends.append((start + run, size))
        last_start = start
        rows.append((float(submit), float(start - submit), float(run), size))
    return rows


def _write(path: Path, header: str, rows: list[tuple[float, float, float, int]]) -> Path:
    path.write_text(header + "".join(_line(n, s, w, r, p, req=2 * r)
                                     for n, (s, w, r, p) in enumerate(rows, 1)))
    return path


def _busy_share(rows: list[tuple[float, float, float, int]], machine: int, start: float,
                end: float) -> float:
    """The log's utilization of [start, end), computed here from its rows."""
    busy = sum(p * max(0.0, min(s + w + r, end) - max(s + w, start)) for s, w, r, p in rows)
    return busy / (machine * (end - start))


def _replayed_share(plan, rows: list[tuple[float, float, float, int]], c: ClusterDef) -> float:
    """The site's utilization of the window by the plan's jobs, each taken to run when it ran
    in the log (its CPUs from the plan, its times from the log's rows): what the thinning
    aims at, computed here without the planner's own figures."""
    start, end = plan.window
    busy = 0.0
    for j in plan.jobs:
        s, w, r, _ = rows[_number(j.name) - 1]
        busy += j.nodes * j.cpus_per_node * max(0.0, min(s + w + r, end) - max(s + w, start))
    return busy / (c.nodes * c.cpus * (end - start))


# ---- a machine a little smaller than the site: shares rounded down -----------------------

def test_a_machine_smaller_than_the_site_loads_it_as_much_as_the_log(tmp_path: Path) -> None:
    """96 processors of serial jobs on beta's 128 CPUs: each job's share is 1.33 CPUs.
    Before: each got one CPU (rounded down) and thinning, which only drops jobs, could not
    make it up: beta was loaded 0.20 where the log was 0.26 (three quarters). Now the jobs
    that lost most are rounded up until the load is the log's, and a note says so."""
    rows = _steady(96, [1], 0.8, 3000, seed=3)
    log = read_swf(_write(tmp_path / "m96.swf", "; MaxProcs: 96\n", rows))
    assert log.max_procs == 96
    c = cluster("beta")
    for seed in (1, 2, 3):
        plan = plan_replay(log, c, seed=seed, duration_s=240, scale=60)
        start, end = plan.window
        want = _busy_share(rows, 96, start, end)
        assert want > 0.5
        assert abs(_replayed_share(plan, rows, c) - want) <= 0.02 * want, plan.notes
        assert {j.nodes * j.cpus_per_node for j in plan.jobs} <= {1, 2}  # 1.33: 1 or 2
        assert any("rounded up" in n for n in plan.notes)


@pytest.mark.parametrize("machine, nodes, cpus", [(3, 2, 2), (6, 1, 8), (12, 2, 8)])
def test_jobs_rounded_down_on_small_sites_are_made_up(tmp_path: Path, machine: int,
                                                     nodes: int, cpus: int) -> None:
    """Serial jobs of a 3-processor machine on 4 CPUs (1.33 each), of 6 on 8 (1.33), of 12
    on 16 (1.33): before, a quarter of the log's load was lost on each."""
    rows = _steady(machine, [1], 0.7, 600, seed=machine)
    log = read_swf(_write(tmp_path / "m.swf", f"; MaxProcs: {machine}\n", rows))
    c = _site(nodes, cpus)
    plan = plan_replay(log, c, start=log.span[0], duration_s=_whole(log), scale=60)
    want = _busy_share(rows, log.max_procs, *plan.window)
    assert abs(_replayed_share(plan, rows, c) - want) <= 0.03 * want


# ---- dependent jobs: think time (field 18) ------------------------------------------------

def _chain_log(tmp_path: Path) -> SwfLog:
    """Job 1; job 2 submitted 600 s after 1 ended; job 3 named 2 with no think time (-1);
    job 4 named 1 with a think time of 0."""
    path = tmp_path / "think.swf"
    path.write_text("; MaxProcs: 16\n" + _line(1, 0, 0, 300, 4)
                    + _line(2, 900, 0, 200, 4, preceding=1, think=600)
                    + _line(3, 1200, 0, 100, 4, preceding=2, think=-1)
                    + _line(4, 1250, 0, 100, 4, preceding=1, think=0))
    return read_swf(path)


def test_a_dependent_jobs_think_time_is_read_and_scaled(tmp_path: Path) -> None:
    """Before: field 18 was not read; a dependent job could start the moment its predecessor
    ended on the site. Now it waits its think time, scaled as the other times (600 log
    seconds at --scale 60: 10 real seconds)."""
    log = _chain_log(tmp_path)
    assert [j.think for j in log.jobs] == [-1, 600, -1, 0]
    for scale in (60.0, 10.0):
        plan = plan_replay(log, cluster("alpha"), start=0, duration_s=2000 / scale,
                           scale=scale)
        by_name = {j.name: j for j in plan.jobs}
        assert by_name["trace-arrive-2"].after == "trace-arrive-1"
        assert by_name["trace-arrive-2"].think_s == pytest.approx(600 / scale)
        assert by_name["trace-arrive-3"].think_s == 0  # -1: no think time known
        assert by_name["trace-arrive-4"].think_s == 0
        assert by_name["trace-arrive-1"].think_s == 0 and by_name["trace-arrive-1"].after is None


def test_a_held_job_with_a_think_time_is_submitted_held() -> None:
    j = LoadJob(at_s=0, site="alpha", nodes=1, cpus_per_node=2, runtime_s=5, walltime_min=1,
                name="b", after="a", think_s=10)
    slurm = submit_argv(j, "slurm", "1234", hold=True)
    assert "--hold" in slurm and "--dependency=afterany:1234" in slurm
    sge = submit_argv(j, "sge", "77", hold=True)
    assert "-h" in sge and sge[sge.index("-hold_jid") + 1] == "77"
    assert "--hold" not in submit_argv(j, "slurm", "1234") and "-h" not in submit_argv(
        j, "sge", "77")


RUNNING = "{id}|RUNNING|2026-01-01T00:00:00|2026-01-01T01:00:00|2026-01-01T00:00:00|1:00|1|1|" \
          "u|batch|N/A|an1|None|c|{name}\n"


@pytest.mark.parametrize("gone_as", ["absent", "error"])
def test_load_run_releases_a_held_job_its_think_time_after_the_predecessor_ends(
        monkeypatch, gone_as: str) -> None:
    """a runs for two polls, then leaves the queue (listed no more, or squeue's "Invalid job
    id specified" once purged); b (think time 0.3 s) was submitted held and dependent on a,
    and is released 0.3 s or more after a was first seen gone, not before."""
    calls: list[tuple[float, list[str]]] = []
    polls = {"n": 0}
    seen_gone: list[float] = []

    class FakeTransport:
        async def run(self, argv: list[str]):
            now = time.monotonic()
            calls.append((now, argv))
            if argv[0] == "sbatch":
                return SimpleNamespace(exit_status=0, stdout=f"{100 + len(calls)};alpha\n",
                                       stderr="")
            if "squeue" in argv:
                polls["n"] += 1
                if polls["n"] <= 2:
                    return SimpleNamespace(exit_status=0, stdout=RUNNING.format(
                        id=101, name="a"), stderr="")
                seen_gone.append(now)
                if gone_as == "error":
                    return SimpleNamespace(exit_status=1, stdout="", stderr=(
                        "slurm_load_jobs error: Invalid job id specified\n"))
                return SimpleNamespace(exit_status=0, stdout="", stderr="")
            return SimpleNamespace(exit_status=0, stdout="", stderr="")  # scontrol release

        async def close(self) -> None:
            pass

    site = SimpleNamespace(name="alpha", scheduler="slurm", transport=None)
    monkeypatch.setattr("diamond_jupyter.config.load_config",
                        lambda path: SimpleNamespace(sites=[site]))
    monkeypatch.setattr("diamond_jupyter.transports.make_transport",
                        lambda transport, site: FakeTransport())
    monkeypatch.setattr(load, "END_POLL_S", 0.02)
    base = dict(at_s=0.0, site="alpha", nodes=1, cpus_per_node=1, runtime_s=1, walltime_min=1)
    jobs = [LoadJob(**base, name="a"), LoadJob(**base, name="b", after="a", think_s=0.3),
            LoadJob(**base, name="c", after="a")]  # no think time: a dependency alone
    res = asyncio.run(load.run("unused.yaml", jobs))
    assert res["submitted"] == {"alpha": 3} and res["released"] == 1
    argvs = [argv for _, argv in calls]
    held = argvs[1]
    assert "--hold" in held and "--dependency=afterany:101" in held
    assert "--hold" not in argvs[2] and "--dependency=afterany:101" in argvs[2]
    releases = [(t, argv) for t, argv in calls if argv[:2] == ["scontrol", "release"]]
    assert [argv for _, argv in releases] == [["scontrol", "release", "102"]]
    assert releases[0][0] - seen_gone[0] >= 0.3
    assert polls["n"] >= 3  # a was running for two polls: b was not released then


def test_a_think_time_on_grid_engine_releases_with_qrls(monkeypatch) -> None:
    """delta: qsub -h with -hold_jid, the predecessor looked for in `qstat -xml` (absent:
    ended), then qrls."""
    calls: list[list[str]] = []

    class FakeTransport:
        async def run(self, argv: list[str]):
            calls.append(argv)
            if argv[0] == "qsub":
                return SimpleNamespace(exit_status=0, stdout=f"{700 + len(calls)}\n", stderr="")
            if argv[0] == "qstat":
                return SimpleNamespace(exit_status=0, stdout=(
                    "<?xml version='1.0'?>\n<job_info><queue_info></queue_info>"
                    "<job_info></job_info></job_info>\n"), stderr="")
            return SimpleNamespace(exit_status=0, stdout="", stderr="")

        async def close(self) -> None:
            pass

    site = SimpleNamespace(name="delta", scheduler="sge", transport=None)
    monkeypatch.setattr("diamond_jupyter.config.load_config",
                        lambda path: SimpleNamespace(sites=[site]))
    monkeypatch.setattr("diamond_jupyter.transports.make_transport",
                        lambda transport, site: FakeTransport())
    monkeypatch.setattr(load, "END_POLL_S", 0.01)
    base = dict(at_s=0.0, site="delta", nodes=1, cpus_per_node=1, runtime_s=1, walltime_min=1)
    res = asyncio.run(load.run("unused.yaml", [
        LoadJob(**base, name="a"), LoadJob(**base, name="b", after="a", think_s=0.05)]))
    assert res["released"] == 1
    assert "-h" in calls[1] and calls[1][calls[1].index("-hold_jid") + 1] == "701"
    assert calls[-1] == ["qrls", "702"]


# ---- MaxNodes alone: what the header's words say of a node's processors -------------------

@pytest.mark.parametrize("note", [
    "; Note: each node has 8 processors; job sizes are in processors\n",
    "; Note: 8 processors per node\n",
    "; Computer: IBM SP (8-way SMP nodes)\n",
    "; Note: 144 nodes of 8 processors\n",
])
def test_maxnodes_alone_with_processors_per_node_in_a_note(tmp_path: Path, note: str) -> None:
    """An SP of 144 nodes of 8 processors (1,152), its header without MaxProcs, its jobs
    counted in processors (multiples of 8) at about 60% load. Before: the machine was taken
    as what ran at once (under 1,152), so the log's utilization read higher than it was and
    the site was loaded more than the center. Now MaxNodes x 8, said in a note."""
    rows = _steady(1152, [8, 16, 32, 64, 128, 256], 0.6, 1500, seed=5)
    log = read_swf(_write(tmp_path / "sp.swf", "; MaxNodes: 144\n" + note, rows))
    assert log.max_procs == 1152
    assert any("MaxNodes 144 and no MaxProcs" in n for n in log.notes)
    plan = plan_replay(log, cluster("alpha"), seed=2, duration_s=600, scale=60)
    assert plan.log_utilization == pytest.approx(_busy_share(rows, 1152, *plan.window))


def test_node_groups_of_different_sizes_add_up_to_the_machine(tmp_path: Path) -> None:
    """A machine of two partitions (as CEA-Curie's thin and fat nodes): 100 nodes of 16
    cores and 28 of 32, MaxNodes 128, no MaxProcs: 2,496 processors."""
    rows = _steady(2496, [16, 32, 64, 256], 0.5, 800, seed=6)
    log = read_swf(_write(tmp_path / "curie.swf", "; MaxNodes: 128\n; Partition: 1 thin\n"
                          "; Partition: 2 fat\n; Note: 100 nodes of 16 cores, 28 nodes of "
                          "32 cores\n", rows))
    assert log.max_procs == 2496


@pytest.mark.parametrize("note", [
    "; Note: 16 processors per node in partition 1, 32 processors per node in partition 2\n",
    "; Note: 100 nodes of 16 cores, 20 nodes of 32 cores (more nodes are down)\n",
    "; Note: the machine room has 8 racks\n",
])
def test_node_counts_that_disagree_say_nothing_of_the_machine(tmp_path: Path, note: str
                                                             ) -> None:
    """Per-node counts that differ, groups that do not add up to MaxNodes, or words of no
    node's processors: the machine is what the jobs held at once, as without a note."""
    rows = _steady(512, [1, 2, 4, 8], 0.9, 600, seed=7)
    with_note = read_swf(_write(tmp_path / "a.swf", "; MaxNodes: 128\n" + note, rows))
    without = read_swf(_write(tmp_path / "b.swf", "; MaxNodes: 128\n", rows))
    assert with_note.max_procs == without.max_procs > 128
    assert not any("no MaxProcs" in n for n in with_note.notes)


def test_a_blue_gene_counted_in_nodes_stays_in_nodes_with_cores_in_its_note(
        tmp_path: Path) -> None:
    """ANL-Intrepid's shape: 40,960 nodes of 4 cores, no MaxProcs, jobs allocated in units
    of 512 nodes and counted in nodes, the machine mostly full. The note's 4 cores a node
    make MaxProcs 163,840, but the jobs never held more than 40,960 at once and filled most
    of it: sizes are nodes, and the machine is its 40,960 nodes."""
    rows = _steady(40960, [512, 1024, 2048, 4096, 8192, 16384], 0.95, 600, seed=8)
    log = read_swf(_write(tmp_path / "intrepid.swf",
                          "; MaxNodes: 40960\n; Note: 4 cores per node; partitions of 512 "
                          "nodes\n", rows))
    assert log.max_procs == 40960
    plan = plan_replay(log, cluster("alpha"), seed=1, duration_s=600, scale=60)
    assert plan.log_utilization == pytest.approx(_busy_share(rows, 40960, *plan.window))
    # 512 of 40,960 is 0.4 of one of alpha's 32 CPUs: one CPU, then thinned to the log's load
    assert abs(plan.site_utilization - plan.log_utilization) <= 0.05
