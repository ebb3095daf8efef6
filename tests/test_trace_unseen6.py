"""The sixth sweep of SWF logs unlike the shared ones, each generated here and small: shapes
of other archive logs (a machine a little smaller than the site, MaxNodes alone with its
processors per node in the header, a Blue Gene's 512-core units, a machine of 100,000
processors, loads near 100% and near 0%, a thousand jobs in one second, memory fields in
KB, a grid's tiny jobs, partitions of different sizes, a header's UnixStartTime and time
zone), dependent jobs' think times (field 18), and the thinning's match of the log's
utilization on logs and sites of very different sizes."""

from __future__ import annotations

import asyncio
import json
import math
import random
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from sweep_helpers import fake_load_site, replay_number, whole_window

from diamond_jupyter.cli.main import main as cli
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
    return (f"{number} {submit:.12g} {wait:.12g} {run:.12g} {given} -1 {used_kb:g} {procs} "
            f"{req:.12g} {req_kb:g} {status} {number % 7 + 1} 1 -1 1 {partition} {preceding} "
            f"{think:g}\n")


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
        s, w, r, _ = rows[replay_number(j.name) - 1]
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
    plan = plan_replay(log, c, start=log.span[0], duration_s=whole_window(log), scale=60)
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


def test_a_think_time_past_the_logs_own_gap_is_the_gap_and_said(tmp_path: Path) -> None:
    """Job 2 names job 1 (ended at 300) and says a think time of 10^9 s, yet was submitted
    at 400: the log's gap is 100 s. Before: it would be held 10^9 / 60 real seconds after
    job 1 ended, the load command waiting for it for half a year. Now it waits the gap
    (100 s of the log: 1.67 real seconds), and a note names it."""
    path = tmp_path / "think.swf"
    path.write_text("; MaxProcs: 16\n" + _line(1, 0, 0, 300, 4)
                    + _line(2, 400, 0, 100, 4, preceding=1, think=1e9)
                    + _line(3, 500, 0, 100, 4, preceding=1, think=150))
    plan = plan_replay(read_swf(path), cluster("alpha"), start=0, duration_s=10, scale=60)
    by_name = {j.name: j for j in plan.jobs}
    assert by_name["trace-arrive-2"].think_s == pytest.approx(100 / 60, abs=1e-3)
    assert by_name["trace-arrive-3"].think_s == pytest.approx(150 / 60, abs=1e-3)  # < gap
    said = [n for n in plan.notes if "think time (field 18) longer" in n]
    assert said and said[0].startswith("1 dependent job(s)") and "trace-arrive-2" in said[0]


def test_a_held_job_with_a_think_time_is_submitted_held() -> None:
    j = LoadJob(at_s=0, site="alpha", nodes=1, cpus_per_node=2, runtime_s=5, walltime_min=1,
                name="b", after="a", think_s=10)
    slurm = submit_argv(j, "slurm", "1234", hold=True)
    assert "--hold" in slurm and "--dependency=afterany:1234" in slurm
    sge = submit_argv(j, "sge", "77", hold=True)
    assert "-h" in sge and sge[sge.index("-hold_jid") + 1] == "77"
    assert "--hold" not in submit_argv(j, "slurm", "1234") and "-h" not in submit_argv(
        j, "sge", "77")


def _id(argv: list[str], base: int) -> int:
    """A fake scheduler's id for a submit of job a, b or c: base + 1, 2, 3."""
    name = argv[argv.index("-J" if "-J" in argv else "-N") + 1]
    return base + "abc".index(name) + 1


def _submit_of(argvs: list[list[str]], name: str) -> list[str]:
    return next(a for a in argvs if a[0] in ("sbatch", "qsub")
                and a[a.index("-J" if "-J" in a else "-N") + 1] == name)


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

    def answer(argv: list[str]) -> SimpleNamespace:
        now = time.monotonic()
        calls.append((now, argv))
        if argv[0] == "sbatch":
            return SimpleNamespace(exit_status=0, stdout=f"{_id(argv, 100)};alpha\n",
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

    fake_load_site(monkeypatch, "alpha", "slurm", answer)
    monkeypatch.setattr(load, "END_POLL_S", 0.02)
    base = dict(at_s=0.0, site="alpha", nodes=1, cpus_per_node=1, runtime_s=1, walltime_min=1)
    jobs = [LoadJob(**base, name="a"), LoadJob(**base, name="b", after="a", think_s=0.3),
            LoadJob(**base, name="c", after="a")]  # no think time: a dependency alone
    res = asyncio.run(load.run("unused.yaml", jobs))
    assert res["submitted"] == {"alpha": 3} and res["released"] == 1
    argvs = [argv for _, argv in calls]
    held = _submit_of(argvs, "b")
    assert "--hold" in held and "--dependency=afterany:101" in held
    plain = _submit_of(argvs, "c")
    assert "--hold" not in plain and "--dependency=afterany:101" in plain
    releases = [(t, argv) for t, argv in calls if argv[:2] == ["scontrol", "release"]]
    assert [argv for _, argv in releases] == [["scontrol", "release", "102"]]
    assert releases[0][0] - seen_gone[0] >= 0.3
    assert polls["n"] >= 3  # a was running for two polls: b was not released then


def _fake_slurm(monkeypatch, calls: list[tuple[float, list[str]]]) -> None:
    """alpha, a Slurm site whose jobs have all ended by the first look (squeue lists none)."""
    def answer(argv: list[str]) -> SimpleNamespace:
        calls.append((time.monotonic(), argv))
        out = f"{_id(argv, 100)}\n" if argv[0] == "sbatch" else ""
        return SimpleNamespace(exit_status=0, stdout=out, stderr="")

    fake_load_site(monkeypatch, "alpha", "slurm", answer)
    monkeypatch.setattr(load, "END_POLL_S", 0.01)


def test_a_think_time_runs_from_the_predecessors_end_not_the_submission(monkeypatch) -> None:
    """The predecessor a ends at once (seen by the first poll, made from its submission
    on); b is submitted 0.4 s later with a think time of 0.6 s: it is released 0.6 s after
    a's end, not 0.6 s after its own submission (the log's own gap counted twice, when the
    site ran a as the log did). Before: held from its submission a whole think time more."""
    calls: list[tuple[float, list[str]]] = []
    _fake_slurm(monkeypatch, calls)
    base = dict(site="alpha", nodes=1, cpus_per_node=1, runtime_s=1, walltime_min=1)
    res = asyncio.run(load.run("unused.yaml", [
        LoadJob(**base, at_s=0.0, name="a"),
        LoadJob(**base, at_s=0.4, name="b", after="a", think_s=0.6)]))
    assert res["released"] == 1
    first_look = next(t for t, argv in calls if "squeue" in argv)
    submit_b = next(t for t, argv in calls if argv[0] == "sbatch" and "b" in argv)
    release = next(t for t, argv in calls if argv[0] == "scontrol")
    assert release >= first_look + 0.6
    assert release < submit_b + 0.6


def test_a_think_time_already_past_at_submission_holds_nothing(monkeypatch) -> None:
    """a ended (seen at once) and b comes 0.3 s later with a think time of 0.05 s: its think
    time has passed, so it goes in with its dependency alone, not held."""
    calls: list[tuple[float, list[str]]] = []
    _fake_slurm(monkeypatch, calls)
    base = dict(site="alpha", nodes=1, cpus_per_node=1, runtime_s=1, walltime_min=1)
    res = asyncio.run(load.run("unused.yaml", [
        LoadJob(**base, at_s=0.0, name="a"),
        LoadJob(**base, at_s=0.3, name="b", after="a", think_s=0.05)]))
    assert res["released"] == 0 and res["submitted"] == {"alpha": 2}
    held = next(argv for _, argv in calls if argv[0] == "sbatch" and "b" in argv)
    assert "--hold" not in held and "--dependency=afterany:101" in held
    assert not any(argv[0] == "scontrol" for _, argv in calls)


def test_a_think_time_on_grid_engine_releases_with_qrls(monkeypatch) -> None:
    """delta: qsub -h with -hold_jid, the predecessor looked for in `qstat -xml` (absent:
    ended), then qrls."""
    calls: list[list[str]] = []

    def answer(argv: list[str]) -> SimpleNamespace:
        calls.append(argv)
        if argv[0] == "qsub":
            return SimpleNamespace(exit_status=0, stdout=f"{_id(argv, 700)}\n", stderr="")
        if argv[0] == "qstat":
            return SimpleNamespace(exit_status=0, stdout=(
                "<?xml version='1.0'?>\n<job_info><queue_info></queue_info>"
                "<job_info></job_info></job_info>\n"), stderr="")
        return SimpleNamespace(exit_status=0, stdout="", stderr="")

    fake_load_site(monkeypatch, "delta", "sge", answer)
    monkeypatch.setattr(load, "END_POLL_S", 0.01)
    base = dict(at_s=0.0, site="delta", nodes=1, cpus_per_node=1, runtime_s=1, walltime_min=1)
    res = asyncio.run(load.run("unused.yaml", [
        LoadJob(**base, name="a"), LoadJob(**base, name="b", after="a", think_s=0.05)]))
    assert res["released"] == 1
    held = _submit_of(calls, "b")
    assert "-h" in held and held[held.index("-hold_jid") + 1] == "701"
    assert calls[-1] == ["qrls", "702"]


def test_a_release_the_scheduler_refuses_twice_is_counted_not_lost(monkeypatch) -> None:
    """A held job whose `scontrol release` fails (the controller refused it) is asked once
    more, then counted with the failed submissions: not reported as released and forgotten
    (it would stay held for ever)."""
    calls: list[list[str]] = []

    def answer(argv: list[str]) -> SimpleNamespace:
        calls.append(argv)
        if argv[0] == "sbatch":
            return SimpleNamespace(exit_status=0, stdout=f"{_id(argv, 100)}\n",
                                   stderr="")
        if argv[0] == "scontrol":
            return SimpleNamespace(exit_status=1, stdout="", stderr="Access denied\n")
        return SimpleNamespace(exit_status=0, stdout="", stderr="")  # squeue: a ended

    fake_load_site(monkeypatch, "alpha", "slurm", answer)
    monkeypatch.setattr(load, "END_POLL_S", 0.01)
    base = dict(at_s=0.0, site="alpha", nodes=1, cpus_per_node=1, runtime_s=1, walltime_min=1)
    res = asyncio.run(load.run("unused.yaml", [
        LoadJob(**base, name="a"), LoadJob(**base, name="b", after="a", think_s=0.01)]))
    assert res["failed"] == 1
    assert [c for c in calls if c[0] == "scontrol"] == [["scontrol", "release", "102"]] * 2


def test_the_dry_run_shows_each_think_time(tmp_path: Path, capsys) -> None:
    _chain_log(tmp_path)
    assert cli(["testbed", "load", "--trace", str(tmp_path / "think.swf"), "--site", "alpha",
                "--start", "0", "--duration", "40", "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "after=trace-arrive-1 think=10s" in text
    assert text.count("think=") == 1  # job 4's think time of 0 is no wait


# ---- MaxNodes alone: what the header's words say of a node's processors -------------------

@pytest.mark.parametrize("note", [
    "; Note: each node has 8 processors; job sizes are in processors\n",
    "; Note: 8 processors per node\n",
    "; Computer: IBM SP (8-way SMP nodes)\n",
    "; Note: 144 nodes of 8 processors\n",
    "; Computer: IBM SP with 144 8-way SMP nodes\n",
    "; Note: 100 8-way SMP nodes, 44 8-way SMP nodes\n",
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


@pytest.mark.parametrize("note, machine", [
    ("; Note: 100 nodes of 16 cores, 28 nodes of 32 cores\n", 2496),
    ("; Note: 96 dual-processor nodes and 32 quad-processor nodes\n", 320),
    ("; Note: 64 2-way SMP nodes and 64 4-way SMP nodes\n", 384),
])
def test_node_groups_of_different_sizes_add_up_to_the_machine(tmp_path: Path, note: str,
                                                               machine: int) -> None:
    """A machine of two partitions (as CEA-Curie's thin and fat nodes, or OSC's 2-way and
    4-way nodes): groups of nodes adding up to MaxNodes 128, no MaxProcs: the sum of each
    group's processors."""
    rows = _steady(machine, [1, 2, 8, 16], 0.5, 800, seed=6)
    log = read_swf(_write(tmp_path / "groups.swf", "; MaxNodes: 128\n; Partition: 1 thin\n"
                          "; Partition: 2 fat\n" + note, rows))
    assert log.max_procs == machine


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


# ---- a machine that allocates in blocks ---------------------------------------------------

BLUE_GENE = "; MaxNodes: 40960\n; MaxProcs: 163840\n; Note: jobs are allocated in partitions "


def test_jobs_smaller_than_the_allocation_unit_hold_a_whole_unit(tmp_path: Path) -> None:
    """A Blue Gene that runs every job on partitions of 512 cores: jobs asking 100 (no
    allocated count), 600, or recorded as allocated 1,000 held 512, 1,024 and 1,024. Before:
    sized as written, a fifth of the machine they blocked; the load read too low."""
    path = tmp_path / "bgp.swf"
    path.write_text(BLUE_GENE + "of 512 cores\n"
                    + _line(1, 0, 0, 600, 100, alloc=-1) + _line(2, 10, 0, 600, 600, alloc=-1)
                    + _line(3, 20, 0, 600, 1000) + _line(4, 30, 0, 600, 2048))
    log = read_swf(path)
    assert [j.procs for j in log.jobs] == [512, 1024, 1024, 2048]
    assert any(n.startswith("3 job(s) are not a whole number of the machine's allocation unit")
               for n in log.notes)


def test_an_allocation_unit_in_nodes_counts_in_the_jobs_own_unit(tmp_path: Path) -> None:
    """Partitions of 512 nodes (4 cores each): jobs counted in nodes (the machine mostly
    full of them) round to 512; jobs counted in cores round to 2,048."""
    nodes_rows = _steady(40960, [300, 512, 1024, 8192], 0.95, 400, seed=21)
    in_nodes = read_swf(_write(tmp_path / "nodes.swf", BLUE_GENE + "of 512 nodes\n",
                               nodes_rows))
    assert in_nodes.max_procs == 40960
    assert {j.procs for j in in_nodes.jobs} <= {512, 1024, 8192}
    assert any(j.procs == 512 for j in in_nodes.jobs)
    in_cores = tmp_path / "cores.swf"
    in_cores.write_text(BLUE_GENE + "of 512 nodes\n" + _line(1, 0, 0, 600, 300)
                        + _line(2, 10, 0, 600, 4096))
    assert [j.procs for j in read_swf(in_cores).jobs] == [2048, 4096]


def test_an_allocation_unit_in_nodes_without_processors_a_node_is_said(tmp_path: Path) -> None:
    path = tmp_path / "unit.swf"
    path.write_text("; MaxProcs: 1000\n; Note: the allocation unit is 16 nodes\n"
                    + _line(1, 0, 0, 600, 100) + _line(2, 10, 0, 600, 7))
    log = read_swf(path)
    assert [j.procs for j in log.jobs] == [100, 7]
    assert any("but not how many processors a node has" in n for n in log.notes)


# ---- machines far larger and smaller than the test bed, loads near 100% and near 0% -------

def test_a_machine_of_100000_processors_keeps_the_ratio_of_its_sizes(tmp_path: Path) -> None:
    """Jobs of an eighth, a quarter and half of 100,000 processors on alpha's 32 CPUs: 4, 8
    and 16 CPUs, each over as few of its 8-CPU nodes as hold them."""
    path = tmp_path / "big.swf"
    path.write_text("; MaxProcs: 100000\n" + _line(1, 0, 0, 3000, 12500)
                    + _line(2, 10, 0, 3000, 25000) + _line(3, 20, 0, 3000, 50000))
    log = read_swf(path)
    plan = plan_replay(log, cluster("alpha"), start=0, duration_s=1, scale=60)
    assert [(j.nodes, j.cpus_per_node) for j in plan.jobs] == [(1, 4), (1, 8), (2, 8)]
    assert plan.site_utilization == pytest.approx(plan.log_utilization)


# machines of 4 to 163,840 processors, loads of 3% to 98%, on sites of 4 to 128 CPUs
SIZES = {4: [1, 2, 4], 96: [1, 2, 4, 8, 32], 1024: [1, 8, 64, 256],
         100000: [64, 1024, 8192, 32768], 163840: [512, 2048, 8192, 32768]}
# replayed utilization within 1.5 points of the log's in the window (measured: 0.0087 at
# most over these 15 logs x 3 sites x 3 seeds)
TOLERANCE = 0.015


@pytest.mark.parametrize("machine", list(SIZES))
@pytest.mark.parametrize("load_", [0.03, 0.5, 0.98])
def test_thinning_matches_the_logs_utilization_across_sizes_and_loads(
        tmp_path: Path, machine: int, load_: float) -> None:
    """For each log (generated here, its utilization computed here from its rows) and each
    site, over windows of seeds 1-3: the plan's jobs, each run when it ran in the log with
    the CPUs the plan gives it, use the site as much as the log's jobs used the machine,
    within TOLERANCE (a site of 4 CPUs cannot come nearer than what one job weighs)."""
    rows = _steady(machine, SIZES[machine], load_, 1200, seed=machine % 97)
    log = read_swf(_write(tmp_path / "log.swf", f"; MaxProcs: {machine}\n", rows))
    assert log.max_procs == machine
    worst = 0.0
    for c in (_site(2, 2), _site(4, 8), cluster("beta")):
        for seed in (1, 2, 3):
            plan = plan_replay(log, c, seed=seed, duration_s=600, scale=60)
            want = _busy_share(rows, machine, *plan.window)
            assert plan.log_utilization == pytest.approx(want, abs=1e-9)
            worst = max(worst, abs(_replayed_share(plan, rows, c) - want))
    assert worst <= TOLERANCE


def test_a_window_where_the_machine_stood_idle_replays_nothing_and_says_so(
        tmp_path: Path) -> None:
    """Near 0%: one job of 2 of 1,024 processors for ten minutes in a ten-hour window. On a
    site of 4 CPUs that job alone would be a 4% load where the log's was 0.003%: it is
    thinned out, and the note says why."""
    path = tmp_path / "idle.swf"
    path.write_text("; MaxProcs: 1024\n" + _line(1, 0, 0, 60, 64) + _line(2, 20000, 0, 600, 2)
                    + _line(3, 90000, 0, 60, 64))
    log = read_swf(path)
    plan = plan_replay(log, _site(2, 2), start=10000, duration_s=600, scale=60)
    assert plan.log_utilization == pytest.approx(2 * 600 / (1024 * 36000))
    assert plan.jobs == [] and any("thinned out" in n for n in plan.notes)


# ---- a thousand jobs in one second, and a grid's tiny jobs --------------------------------

def test_a_thousand_jobs_in_one_second_arrive_at_once_in_number_order(tmp_path: Path) -> None:
    """A flurry: 1,000 one-processor jobs of one user submitted in the same second (a script
    in a loop), amid a steady stream; the flurry's jobs are thinned with the others to the
    log's load and those kept arrive together, in job-number order."""
    rows = _steady(256, [1, 4, 16], 0.5, 400, seed=11)
    flurry_at = rows[200][0] + 0.5
    lines = [_line(n, s, w, r, p, req=2 * r) for n, (s, w, r, p) in enumerate(rows, 1)]
    lines += [_line(1000 + k, flurry_at, k // 4, 30, 1, req=60) for k in range(1000)]
    path = tmp_path / "flurry.swf"
    path.write_text("; MaxProcs: 256\n" + "".join(lines))
    log = read_swf(path)
    plan = plan_replay(log, cluster("alpha"), start=flurry_at - 600, duration_s=60, scale=60)
    burst = [j for j in plan.jobs if replay_number(j.name) >= 1000]
    assert 0 < len(burst) < 1000  # kept in the log's proportion: 1 of 256 is 1 of 32 CPUs
    assert len({j.at_s for j in burst}) == 1
    assert [replay_number(j.name) for j in burst] == sorted(replay_number(j.name) for j in burst)
    assert abs(plan.site_utilization - plan.log_utilization) <= 0.02


def test_a_grids_tiny_jobs_are_floored_to_the_shortest_run_and_said(tmp_path: Path) -> None:
    """An LCG-like grid: 24,115 processors, serial jobs of 1 to 20 seconds, thousands an
    hour. At --scale 600 a run of a second is under the shortest replayed run: each kept job
    runs 0.01 s, and a note says how many."""
    rng = random.Random(12)
    rows, t = [], 0.0
    for _ in range(5000):
        t += rng.expovariate(1.0)
        rows.append((float(int(t)), float(rng.randint(0, 5)), float(rng.randint(1, 20)), 1))
    log = read_swf(_write(tmp_path / "lcg.swf", "; MaxProcs: 24115\n", rows))
    plan = plan_replay(log, cluster("beta"), start=600, duration_s=6, scale=600)
    assert plan.jobs  # 128 CPUs: one serial job is 5 of the grid's processors
    assert min(j.runtime_s for j in plan.jobs) == 0.01
    said = [n for n in plan.notes if "ran less than 0.01 real seconds at --scale 600" in n]
    assert said and 0 < int(said[0].split()[0]) <= len(plan.jobs)


# ---- memory fields, time zones, partitions ------------------------------------------------

def test_memory_fields_in_kilobytes_change_nothing_of_the_replay(tmp_path: Path) -> None:
    """Fields 7 (used) and 10 (requested) memory, KB per processor, some -1, some huge (a
    64 GB request a processor): the test bed counts CPUs only (CR_CPU), so the plan is the
    plan of the same log with both fields -1."""
    rows = _steady(128, [1, 2, 8, 32], 0.6, 300, seed=13)
    rng = random.Random(13)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with_mem = tmp_path / "a" / "log.swf"  # one name: the thinning's draws follow it
    with_mem.write_text("; MaxProcs: 128\n; Note: memory fields are KB per processor\n" + "".join(
        _line(n, s, w, r, p, req=2 * r, used_kb=rng.choice([-1, 0, 2048.5, 1_900_000]),
              req_kb=rng.choice([-1, 524288, 67_108_864]))
        for n, (s, w, r, p) in enumerate(rows, 1)))
    without = _write(tmp_path / "b" / "log.swf", "; MaxProcs: 128\n", rows)
    a, b = read_swf(with_mem), read_swf(without)
    for seed in (1, 2):
        pa = plan_replay(a, cluster("gamma"), seed=seed, duration_s=300)
        pb = plan_replay(b, cluster("gamma"), seed=seed, duration_s=300)
        assert pa.jobs == pb.jobs and pa.jobs


def test_a_log_in_unix_seconds_replays_as_its_copy_counted_from_zero(tmp_path: Path) -> None:
    """A conversion that kept Unix times as submit times (UnixStartTime the first of them,
    TimeZoneString US/Pacific): the same window, given in its own seconds, plans the same
    jobs at the same moments as the copy counted from 0 (on beta, twice the machine: no job
    is thinned, whose draws follow the window's start)."""
    unix = 1_170_175_078
    rows = _steady(64, [1, 4, 16], 0.7, 300, seed=14)
    zero = read_swf(_write(tmp_path / "zero.swf", "; MaxProcs: 64\n", rows))
    shifted = [(s + unix, w, r, p) for s, w, r, p in rows]
    epoch = read_swf(_write(tmp_path / "epoch.swf", f"; MaxProcs: 64\n; UnixStartTime: {unix}\n"
                            "; TimeZoneString: US/Pacific\n", shifted))
    start = rows[100][0]
    a = plan_replay(zero, cluster("beta"), start=start, duration_s=120, seed=1)
    b = plan_replay(epoch, cluster("beta"), start=start + unix, duration_s=120, seed=1)
    assert a.jobs and a.arrivals_kept == a.arrivals_in_log
    assert [(j.name, j.at_s, j.runtime_s, j.nodes, j.cpus_per_node) for j in a.jobs] == [
        (j.name, j.at_s, j.runtime_s, j.nodes, j.cpus_per_node) for j in b.jobs]
    assert a.log_utilization == pytest.approx(b.log_utilization)


def test_partitions_of_different_sizes_are_shares_of_the_whole_machine(tmp_path: Path) -> None:
    """Two partitions (1: 896 processors of thin nodes, 2: 128 of fat ones; MaxProcs 1,024):
    `--site` replays the whole machine on one site, so a job filling the fat partition is
    an eighth of the site, not all of it, and a job of the thin one's 896 seven eighths."""
    path = tmp_path / "parts.swf"
    path.write_text("; MaxProcs: 1024\n; MaxPartitions: 2\n; Partition: 1 thin (896 "
                    "processors)\n; Partition: 2 fat (128 processors)\n"
                    + _line(1, 0, 0, 600, 128, partition=2)
                    + _line(2, 5, 0, 600, 896, partition=1))
    log = read_swf(path)
    assert log.max_procs == 1024
    plan = plan_replay(log, cluster("alpha"), start=0, duration_s=1, scale=60)
    assert [j.nodes * j.cpus_per_node for j in plan.jobs] == [4, 28]


def test_two_logs_on_one_site_keep_their_dependent_jobs_apart(tmp_path: Path, capsys) -> None:
    """`--trace a.swf --site alpha --trace b.swf --site alpha`: both logs have a job 1 and
    a job 2 that waits for it. Before: both were named trace-arrive-1/2, so each job 2 was
    held on whichever job 1 was submitted last (the run keeps one id a name). Now the second
    log's jobs are named trace2-..., each waits for its own log's job, and a note says so."""
    for name in ("a", "b"):
        (tmp_path / f"{name}.swf").write_text(
            "; MaxProcs: 16\n" + _line(1, 100, 0, 500, 4)
            + _line(2, 200, 0, 500, 4, preceding=1, think=30))
    assert cli(["testbed", "load", "--trace", str(tmp_path / "a.swf"), "--site", "alpha",
                "--trace", str(tmp_path / "b.swf"), "--site", "alpha", "--start", "100",
                "--duration", "5", "--dry-run", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert sorted((j["name"], j["after"]) for j in got["jobs"]) == [
        ("trace-arrive-1", None), ("trace-arrive-2", "trace-arrive-1"),
        ("trace2-arrive-1", None), ("trace2-arrive-2", "trace2-arrive-1")]
    assert any("replays another log too" in n for n in got["traces"][1]["notes"])
    assert not any("another log" in n for n in got["traces"][0]["notes"])
