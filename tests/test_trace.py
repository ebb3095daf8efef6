"""Replaying real center logs (SWF) as a site's background load: the plan, and the real thing."""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import json
from pathlib import Path

import pytest

from diamond_jupyter.cli import main as cli
from diamond_jupyter.dialects.slurm_script import parse_slurm_time
from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import plan_replay, plan_replays, read_swf


def _traces() -> Path:
    """The shared real logs: beside the checkout (CI), else the workplace's copy."""
    relative = Path(__file__).resolve().parents[2] / "shared" / "traces"
    return relative if relative.is_dir() else Path("/work/shared/traces")


LOGS = sorted(_traces().glob("*.swf.gz"))


def test_the_real_logs_are_there() -> None:
    assert len(LOGS) >= 3, f"no SWF logs under {_traces()}"

# number submit wait run alloc cpu mem req_procs req_time req_mem status user group app queue
# partition preceding think: the log's machine has 100 processors
SMALL = """\
; MaxProcs: 100
    1      0    10   500   50 -1 -1  50   2000 -1 1 1 1 -1 1 -1 -1 -1
    2     50  1000   300   25 -1 -1  25    600 -1 1 2 2 -1 1 -1 -1 -1
    3    900     0   100   10 -1 -1  10     -1 -1 1 3 3 -1 1 -1 -1 -1
    4    950     0     0    5 -1 -1   5    100 -1 5 3 3 -1 1 -1 -1 -1
    5   5000     0   100   10 -1 -1  10    200 -1 1 3 3 -1 1 -1 -1 -1
"""


@pytest.fixture
def small_log(tmp_path: Path) -> Path:
    p = tmp_path / "small.swf.gz"
    with gzip.open(p, "wt") as fh:
        fh.write(SMALL)
    return p


def test_queue_standing_at_the_window_start_is_rebuilt(small_log: Path) -> None:
    log = read_swf(small_log)
    assert log.max_procs == 100 and [j.number for j in log.jobs] == [1, 2, 3, 4, 5]
    # at t=400 job 1 runs (started at 10), job 2 waits (starts at 1050); 3 arrives at 900,
    # 4 never ran (runtime 0), 5 is after the window [400, 1400)
    plan = plan_replay(log, cluster("beta"), start=400, duration_s=10, scale=100)
    by_name = {j.name: j for j in plan.jobs}
    assert set(by_name) == {"trace-run-1", "trace-wait-2", "trace-arrive-3"}
    assert (plan.running_at_start, plan.queued_at_start, plan.arrivals_in_log) == (1, 1, 1)
    run1, wait2, arr3 = by_name["trace-run-1"], by_name["trace-wait-2"], by_name["trace-arrive-3"]
    # the running job keeps what was left of its runtime (510 - 400 = 110 s) and of its
    # request (2000 - 390 = 1610 s), scaled by 100
    assert run1.at_s == 0 and run1.runtime_s == pytest.approx(1.1)
    assert run1.walltime_min == 1  # 16.1 s rounds up to Slurm's one minute
    assert wait2.at_s == 0 and wait2.runtime_s == pytest.approx(3.0)
    assert arr3.at_s == pytest.approx(5.0) and arr3.runtime_s == pytest.approx(1.0)
    # running jobs reach the scheduler ahead of waiting ones
    assert [j.name for j in plan.jobs][:2] == ["trace-run-1", "trace-wait-2"]


def test_sizes_are_a_share_of_the_site_and_requests_stay_as_written(small_log: Path) -> None:
    log = read_swf(small_log)
    beta = cluster("beta")  # 2 nodes x 64 CPUs
    plan = plan_replay(log, beta, start=0, duration_s=10_000, scale=1)
    sizes = {j.name: (j.nodes, j.cpus_per_node) for j in plan.jobs}
    assert sizes["trace-arrive-1"] == (1, 64)  # half the log's machine: half of 128 CPUs
    assert sizes["trace-arrive-2"] == (1, 32)
    walls = {j.name: j.walltime_min for j in plan.jobs}
    assert walls["trace-arrive-2"] == 10  # 600 s as its user wrote it (scale 1)
    # no request in the log: the default partition's limit, as a scheduler gives it (2 days)
    assert walls["trace-arrive-3"] == 2 * 24 * 60


@pytest.mark.parametrize("log_path", LOGS, ids=[p.name.split("-")[0] for p in LOGS])
def test_real_logs_replay_at_the_logs_utilization(log_path: Path) -> None:
    log = read_swf(log_path)
    assert len(log.jobs) > 10_000 and log.max_procs >= 100
    for seed in range(1, 6):
        for site in ("alpha", "beta", "gamma"):
            plan = plan_replay(log, cluster(site), seed=seed, duration_s=600, scale=60)
            assert plan.jobs, (seed, site)
            # thinning brings the small site's load to the log's, within what one job moves
            assert abs(plan.site_utilization - plan.log_utilization) < 0.35, plan.summary()
            assert all(0 <= j.at_s <= 600 for j in plan.jobs)
            c = cluster(site)
            assert all(j.nodes <= c.nodes and j.cpus_per_node <= c.cpus for j in plan.jobs)
            # the replay keeps the users' over-estimates: the typical job asked for more
            # time than it used
            ratios = sorted(j.runtime_s / (j.walltime_min * 60) for j in plan.jobs)
            assert ratios[len(ratios) // 2] <= 1.0, plan.summary()


def test_same_seed_same_replay_and_start_fixes_the_window() -> None:
    log = read_swf(LOGS[0])
    a = plan_replay(log, cluster("alpha"), seed=7, duration_s=300)
    b = plan_replay(log, cluster("alpha"), seed=7, duration_s=300)
    c = plan_replay(log, cluster("alpha"), seed=8, duration_s=300)
    assert a.jobs == b.jobs and a.window == b.window and c.window != a.window
    fixed = plan_replay(log, cluster("alpha"), start=a.window[0], duration_s=300)
    assert fixed.window == a.window


@pytest.mark.parametrize("header, expected", [
    ("; MaxProcs: 2,048\n", 2048),  # a thousands separator
    ("; MaxNodes: 512 (see the notes)\n", 512),  # text after the count
    # no MaxProcs, and the header says a node's processors: nodes x 4 (sixth sweep)
    ("; MaxNodes: 512 (each with 4 processors)\n", 2048),
    # nodes only, and jobs counted in processors: at least what ran at once (200 + 8)
    ("; MaxNodes: 16\n", 208),
    ("; MaxProcs: unknown\n", 208),  # no count: the same
])
def test_the_machine_size_reads_odd_headers_and_never_undercounts(tmp_path: Path, header: str,
                                                                  expected: int) -> None:
    p = tmp_path / "odd.swf"
    p.write_text(header + "1 0 0 100 200 -1 -1 200 600 -1 1 1 1 -1 1 -1 -1 -1\n"
                 "2 5 0 100 -1 -1 -1 8 600 -1 1 1 1 -1 1 -1 -1 -1\n")
    log = read_swf(p)
    assert log.max_procs == expected
    assert [j.procs for j in log.jobs] == [200, 8]  # the request when nothing was allocated
    plan = plan_replay(log, cluster("beta"), start=0, duration_s=10, scale=100)
    assert plan.log_utilization <= 1.0  # no job is more than the whole machine


def test_bad_traces_are_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.swf"
    bad.write_text("; MaxProcs: 10\n1 2 3\n")
    with pytest.raises(BadInput, match=r"bad.swf:2: an SWF job line has 18 fields"):
        read_swf(bad)
    bad.write_text("1 0 0 x 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n")
    with pytest.raises(BadInput, match=r"bad.swf:1: field 4 \(run time\) is .x.: SWF fields "
                                       "must be numbers"):
        read_swf(bad)
    with pytest.raises(BadInput, match="cannot read the trace"):
        read_swf(tmp_path / "missing.swf")
    with pytest.raises(BadInput, match="outside the log"):
        plan_replay(read_swf(LOGS[0]), cluster("alpha"), start=-5)


def test_cli_pairs_each_trace_with_its_site(capsys) -> None:
    assert cli(["testbed", "load", "--trace", str(LOGS[0]), "--site", "alpha",
                "--trace", str(LOGS[-1]), "--site", "gamma", "--seed", "2",
                "--duration", "120", "--dry-run", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {t["site"] for t in out["traces"]} == {"alpha", "gamma"}
    assert {j["site"] for j in out["jobs"]} == {"alpha", "gamma"}
    assert cli(["testbed", "load", "--trace", str(LOGS[0]), "--dry-run"]) == 2
    assert "each --trace needs its --site" in capsys.readouterr().err


def test_replay_reaches_the_real_scheduler(tb) -> None:
    """The rebuilt queue lands on a real Slurm site with the plan's sizes and limits."""
    from diamond_jupyter.testbed import load
    from diamond_jupyter.transports import make_transport

    log = read_swf(LOGS[0])
    plan = plan_replay(log, cluster("alpha"), seed=4, duration_s=1, scale=600)
    standing = [j for j in plan.jobs if j.at_s == 0]
    assert standing
    res = asyncio.run(load.run(str(tb.config_path), standing))
    assert res["submitted"] == {"alpha": len(standing)} and res["failed"] == 0

    async def queue_and_clean() -> dict[str, str]:
        t = make_transport(tb.config.site("alpha").transport, site="alpha")
        try:
            out = await t.run(["squeue", "-h", "-o", "%i %j %l %D %C"], check=True)
            rows = [line.split() for line in out.stdout.splitlines()]
            ours = [r for r in rows if r[1].startswith("trace-")]
            if ours:
                await t.run(["scancel", *[r[0] for r in ours]], check=True)
            return {r[1]: r[2] for r in ours}
        finally:
            await t.close()
    limits = asyncio.run(queue_and_clean())
    # every standing job still runs or waits (none ends within the replay's first second
    # unless its remaining runtime is that short) and carries its scaled request
    long_enough = {j.name: j for j in standing if j.runtime_s > 5}
    assert set(long_enough) <= set(limits)
    for name, j in long_enough.items():
        assert parse_slurm_time(limits[name]) == j.walltime_min * 60, (name, limits[name])


def test_a_log_on_several_sites_replays_other_windows() -> None:
    """The first use of a log is the window its seed always drew; a second site replaying it
    draws another, so the two sites never carry the same jobs; a fixed --start is kept."""
    alpha, beta = cluster("alpha"), cluster("beta")
    first, again = plan_replays([(LOGS[0], alpha), (LOGS[0], beta)], duration_s=120, seed=5)
    assert first.window == plan_replay(read_swf(LOGS[0]), alpha, duration_s=120, seed=5).window
    assert again.window != first.window
    other_log = plan_replays([(LOGS[1], beta)], duration_s=120, seed=5)[0]
    assert other_log.window == plan_replay(read_swf(LOGS[1]), beta, duration_s=120,
                                           seed=5).window
    start = first.window[0]
    fixed = plan_replays([(LOGS[0], alpha), (LOGS[0], beta)], duration_s=120, start=start)
    assert {p.window for p in fixed} == {first.window}


def test_cli_replays_on_the_grid_engine_site(capsys) -> None:
    from diamond_jupyter.testbed.clusters import CLUSTERS

    if "delta" not in {c.name for c in CLUSTERS}:
        pytest.fail("the test bed has no Grid Engine site (install gridengine-master)")
    assert cli(["testbed", "load", "--trace", str(LOGS[0]), "--site", "delta",
                "--seed", "2", "--duration", "120", "--dry-run", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {j["site"] for j in out["jobs"]} == {"delta"}
    assert cli(["testbed", "load", "--trace", str(LOGS[0]), "--site", "alpha-pbs",
                "--dry-run"]) == 2
    assert "accepted: alpha, beta, gamma, delta" in capsys.readouterr().err


def test_replay_reaches_real_grid_engine(tb) -> None:
    """A rebuilt queue lands on the Grid Engine site through qsub, each job with its slots and
    its scaled request as h_rt; cancelling by prefix ends this replay's jobs, and only them."""
    from diamond_jupyter.dialects import get_commands
    from diamond_jupyter.testbed import load
    from diamond_jupyter.transports import make_transport

    plan = plan_replay(read_swf(LOGS[1]), cluster("delta"), seed=6, duration_s=1, scale=600)
    standing = [j for j in plan.jobs if j.at_s == 0 and j.runtime_s > 30]
    assert standing
    jobs = [dataclasses.replace(j, name=f"tge6-{j.name}") for j in standing]
    other = dataclasses.replace(jobs[0], name="tge7-keep", runtime_s=60)
    res = asyncio.run(load.run(str(tb.config_path), [*jobs, other]))
    assert res["submitted"] == {"delta": len(jobs) + 1} and res["failed"] == 0

    async def queue_then_cancel() -> tuple[dict, int, dict[str, str]]:
        t = make_transport(tb.config.site("delta").transport, site="delta")
        try:
            sge = get_commands("sge")
            before = {s.name: s for s in sge.parse_status((await t.run(
                ["qstat", "-xml", "-r"], check=True)).stdout)}
            asked = await load.cancel_named(t, "tge6-", "sge")
            left = {s.name: s.native_state or "" for s in sge.parse_status((await t.run(
                ["qstat", "-xml"], check=True)).stdout)}
            await load.cancel_named(t, "tge7-", "sge")
            return before, asked, left
        finally:
            await t.close()
    before, asked, left = asyncio.run(queue_then_cancel())
    for j in jobs:
        assert j.name in before, j.name
        assert before[j.name].walltime_s == j.walltime_min * 60, (j.name, before[j.name])
    assert asked == len(jobs)
    # a running job qdel'd is listed as deleting ("dr") until its host has killed it
    assert "d" not in left["tge7-keep"]
    assert all("d" in state for n, state in left.items() if n.startswith("tge6-")), left


def test_a_log_without_sizes_or_runs_says_so(tmp_path, capsys) -> None:
    """No processor count anywhere is a clear error (not a division by zero); a window in
    which no job ran is a plan of no jobs that says why."""
    sizeless = tmp_path / "sizeless.swf"
    sizeless.write_text("; MaxProcs: -1\r\n"
                        "1 0 10 100 -1 -1 -1 -1 200 -1 1 1 1 -1 1 -1 -1 -1\r\n")
    with pytest.raises(BadInput, match="no processor count"):
        read_swf(sizeless)
    never_ran = tmp_path / "never_ran.swf"
    never_ran.write_text("; MaxProcs: 64\n1 0 -1 -1 4 -1 -1 4 -1 -1 0 1 1 -1 1 -1 -1 -1\n")
    plan = plan_replay(read_swf(never_ran), cluster("alpha"), seed=1, duration_s=60)
    assert plan.jobs == [] and "no job of the log ran" in plan.notes[0]
    assert cli(["testbed", "load", "--trace", str(never_ran), "--site", "alpha",
                "--dry-run"]) == 0
    assert "no jobs to submit" in capsys.readouterr().out


def test_a_log_shorter_than_a_day_replays_a_window_inside_it(tmp_path) -> None:
    """A drawn window starts a day in, so its queue has formed; a log of six hours gives
    up that day rather than replay only its last job."""
    short = tmp_path / "short.swf"
    short.write_text("; MaxProcs: 64\n" + "".join(
        f"{n} {n * 216} 5 600 8 -1 -1 8 1200 -1 1 1 1 -1 1 -1 -1 -1\n" for n in range(100)))
    plan = plan_replay(read_swf(short), cluster("alpha"), seed=1, duration_s=60, scale=60)
    first, last = 0.0, 99 * 216.0
    assert first <= plan.window[0] <= last - 3600
    assert plan.arrivals_in_log >= 15  # an hour of a job every 216 s


def test_a_dependent_replay_job_waits_for_its_predecessor_on_real_slurm(tb) -> None:
    """A log's dependent job (preceding-job field) reaches Slurm held on its replayed
    predecessor: pending on a Dependency, afterany on the predecessor's id."""
    from diamond_jupyter.testbed import load
    from diamond_jupyter.transports import make_transport

    first = load.LoadJob(at_s=0, site="alpha", nodes=1, cpus_per_node=1, runtime_s=60,
                         walltime_min=2, name="tdep-first")
    second = dataclasses.replace(first, name="tdep-second", runtime_s=1, after="tdep-first")
    res = asyncio.run(load.run(str(tb.config_path), [first, second]))
    assert res["submitted"] == {"alpha": 2} and res["failed"] == 0

    async def look_and_clean() -> tuple[str, str]:
        t = make_transport(tb.config.site("alpha").transport, site="alpha")
        try:
            ids = (await t.run(["squeue", "-h", "-n", "tdep-first", "-o", "%i"],
                               check=True)).stdout.strip()
            out = (await t.run(["squeue", "-h", "-n", "tdep-second", "-o", "%T %r %E"],
                               check=True)).stdout.strip()
            await load.cancel_named(t, "tdep-")
            return ids, out
        finally:
            await t.close()
    first_id, second = asyncio.run(look_and_clean())
    assert first_id and second.startswith("PENDING Dependency"), second
    assert f"afterany:{first_id}" in second, second
