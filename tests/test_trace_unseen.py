"""SWF logs unlike the three shared ones: the quirks of other Parallel Workloads Archive logs
(synthetic, `fixtures/swf_unseen/make_fixtures.py`), each read and planned on every test-bed
cluster, and the prediction benchmark run on them."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import pytest
from sweep_helpers import partition_limits, whole_window

from benchmarks import prediction
from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.clusters import CLUSTERS, cluster
from diamond_jupyter.testbed.trace import plan_replay, read_swf

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "swf_unseen"
UNSEEN = sorted(FIXTURES.glob("*.swf"))
SITES = [c.name for c in CLUSTERS]


def test_the_fixtures_are_there() -> None:
    assert len(UNSEEN) == 12, UNSEEN


def _number(name: str) -> int:
    return int(name.rsplit("-", 1)[1])  # trace-arrive-17 -> 17


@pytest.mark.parametrize("site", SITES)
@pytest.mark.parametrize("path", UNSEEN, ids=[p.stem for p in UNSEEN])
def test_every_unseen_log_reads_and_replays_sensibly(path: Path, site: str) -> None:
    log = read_swf(path)
    numbers = [j.number for j in log.jobs]
    assert len(numbers) == len(set(numbers)), "a job counted more than once"
    assert [j.submit for j in log.jobs] == sorted(j.submit for j in log.jobs)
    ran = {j.number: j for j in log.jobs if j.run > 0 and j.procs > 0}
    c = cluster(site)
    limits = partition_limits(c)
    first, last = log.span
    for seed in (1, 2, 3):
        plan = plan_replay(log, c, seed=seed, duration_s=600, scale=60)
        start, end = plan.window
        assert end - start == pytest.approx(600 * 60)
        assert first <= start <= max(first, last - 600 * 60), plan.summary()
        # every fixture has arrivals every day it has jobs: a drawn window holds some
        assert plan.arrivals_in_log > 0, plan.summary()
        # no fixture's machine was ever over-full, so nor is its share over the window
        assert 0 < plan.log_utilization <= 1.0, plan.summary()
        # thinning matches the log's load within what one job moves (on delta's 16 CPUs a
        # job of half the log's machine is half the site)
        tolerance = 0.35 if c.nodes * c.cpus >= 32 else 0.5
        assert abs(plan.site_utilization - plan.log_utilization) < tolerance, plan.summary()
        names = [j.name for j in plan.jobs]
        assert len(names) == len(set(names))
        for j in plan.jobs:
            assert _number(j.name) in ran, f"{j.name} never ran in the log"
            assert 0 <= j.at_s <= 600 and j.runtime_s >= 0
            assert 1 <= j.nodes <= c.nodes and 1 <= j.cpus_per_node <= c.cpus
            assert j.partition in limits and 1 <= j.walltime_min <= limits[j.partition]


def test_a_checkpointed_job_counts_once_as_its_summary_line() -> None:
    """partial.swf: 200 jobs, a third of them with a summary line and three lines of
    partial executions (status 2, 2, then 3 or 4) under the same number."""
    text = (FIXTURES / "partial.swf").read_text()
    lines = [line.split() for line in text.splitlines() if not line.startswith(";")]
    assert len(lines) > 300 and {int(f[10]) for f in lines} >= {2, 3, 4}
    log = read_swf(FIXTURES / "partial.swf")
    assert len(log.jobs) == 200 and all(j.status in (0, 1) for j in log.jobs)
    summary = {int(f[0]): float(f[3]) for f in lines if int(f[10]) in (0, 1)}
    assert {j.number: j.run for j in log.jobs} == summary  # the whole job's runtime
    plan = plan_replay(log, cluster("beta"), start=log.span[0], duration_s=whole_window(log))
    assert plan.arrivals_in_log == len({j.number for j in log.jobs if j.run > 0})


def test_partial_lines_without_a_summary_are_each_a_run(tmp_path: Path) -> None:
    p = tmp_path / "parts.swf"
    p.write_text("; MaxProcs: 8\n"
                 "1 0 0 100 4 -1 -1 4 600 -1 2 1 1 -1 1 -1 -1 -1\n"
                 "1 0 200 100 4 -1 -1 4 600 -1 3 1 1 -1 1 -1 -1 -1\n"
                 "2 10 0 50 2 -1 -1 2 600 -1 1 1 1 -1 1 -1 -1 -1\n")
    assert [(j.number, j.start) for j in read_swf(p).jobs] == [(1, 0), (1, 200), (2, 10)]


def test_a_request_that_never_ran_does_not_size_the_machine() -> None:
    """oversized.swf says 64 processors; one job ran on 80, and a cancelled request for
    100,000 never ran. The machine is 80: the largest job that ran."""
    log = read_swf(FIXTURES / "oversized.swf")
    assert max(j.procs for j in log.jobs) == 100_000
    assert log.max_procs == 80
    big = next(j for j in log.jobs if j.procs == 80)
    plan = plan_replay(log, cluster("alpha"), start=big.submit, duration_s=10)
    whole = [j for j in plan.jobs if _number(j.name) == big.number]
    assert [(j.nodes, j.cpus_per_node) for j in whole] == [(4, 8)]  # all of alpha


@pytest.mark.parametrize("name, machine", [("maxnodes_only", 164), ("no_header", 32)])
def test_without_maxprocs_the_machine_is_what_ran_at_once(name: str, machine: int) -> None:
    """maxnodes_only.swf: 57 nodes of 2 or 4 processors, jobs counted in processors, the
    largest 64; no_header.swf: no header, jobs up to 16 on a 32-processor machine. Both
    schedules filled their machine at some moment."""
    log = read_swf(FIXTURES / f"{name}.swf")
    assert max(j.procs for j in log.jobs) < machine
    assert log.max_procs == machine


def test_a_cancelled_or_failed_job_replays_what_it_ran() -> None:
    """cancelled.swf: jobs cancelled in the queue (wait -1 and run -1, or run 0) are no
    load; jobs cancelled while running and jobs that failed are, for as long as they ran."""
    log = read_swf(FIXTURES / "cancelled.swf")
    never = {j.number for j in log.jobs if j.run <= 0}
    assert {j.status for j in log.jobs if j.number in never} == {5}
    assert len(never) == 100
    plan = plan_replay(log, cluster("beta"), start=log.span[0], duration_s=whole_window(log))
    replayed = {_number(j.name) for j in plan.jobs}
    assert replayed == {j.number for j in log.jobs if j.run > 0}
    assert {j.status for j in log.jobs if j.number in replayed} == {0, 1, 5}


def test_a_job_without_a_request_gets_a_partition_that_holds_its_runtime() -> None:
    """no_requests.swf records no requested time. On gamma the default partition allows
    30 min: a job that ran longer (scaled) goes to `long` with its limit, a shorter one gets
    the default's 30 min; on alpha every job fits the default's day."""
    log = read_swf(FIXTURES / "no_requests.swf")
    assert all(j.req_time == -1 for j in log.jobs)
    longest = max(log.jobs, key=lambda j: j.run)
    assert longest.run / 60 > 30 * 60  # longer than gamma's default at scale 60
    for site, want in (("gamma", ("long", 2 * 24 * 60)), ("alpha", (None, 24 * 60))):
        plan = plan_replay(log, cluster(site), start=longest.submit, duration_s=1)
        [job] = [j for j in plan.jobs if _number(j.name) == longest.number]
        assert (job.partition, job.walltime_min) == want
        assert job.runtime_s <= job.walltime_min * 60
    short = plan_replay(log, cluster("gamma"), start=log.span[0], duration_s=whole_window(log))
    fits = [j for j in short.jobs if j.runtime_s <= 30 * 60]
    assert fits and all((j.partition, j.walltime_min) == (None, 30) for j in fits)
    assert all(j.runtime_s <= j.walltime_min * 60 for j in short.jobs)


def test_a_drawn_window_misses_an_outage_and_a_chosen_one_says_it_is_empty() -> None:
    """gap.swf: no job from day 2 to day 7. Drawn windows hold arrivals; a window chosen
    inside the outage replays nothing and says so."""
    log = read_swf(FIXTURES / "gap.swf")
    for seed in range(1, 11):
        plan = plan_replay(log, cluster("alpha"), seed=seed, duration_s=600, scale=60)
        assert plan.arrivals_in_log > 0, (seed, plan.window)
    empty = plan_replay(log, cluster("alpha"), start=4 * 86400, duration_s=600, scale=60)
    assert empty.jobs == [] and "no job of the log ran" in empty.notes[0]


def test_a_log_shorter_than_the_window_replays_all_of_it() -> None:
    log = read_swf(FIXTURES / "short.swf")
    assert log.span[1] - log.span[0] < 4 * 3600
    plan = plan_replay(log, cluster("alpha"), seed=3, duration_s=600, scale=60)
    assert plan.window[0] == log.span[0]
    assert plan.arrivals_in_log == len(log.jobs)


def test_negative_and_unordered_submit_times() -> None:
    log = read_swf(FIXTURES / "unordered.swf")
    assert log.span[0] < 0
    plan = plan_replay(log, cluster("alpha"), start=log.span[0], duration_s=60)
    assert plan.jobs and plan.jobs[0].at_s == 0
    with pytest.raises(BadInput, match="outside the log"):
        plan_replay(log, cluster("alpha"), start=log.span[0] - 1)


def test_tabs_decimals_crlf_a_bom_and_extra_fields_read_as_numbers() -> None:
    raw = (FIXTURES / "messy.swf").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf;") and b"\t" in raw and b"\r\n" in raw
    log = read_swf(FIXTURES / "messy.swf")
    assert len(log.jobs) == 200 and log.max_procs == 32  # "MaxProcs:\t32 " after the BOM
    four = next(j for j in log.jobs if j.number == 4)
    assert four.submit % 1 == 0.25 and four.run % 1 == 0.5 and four.procs in (1, 2, 4, 8)


def test_a_blue_gene_maps_partitions_of_512_cores_to_cpus_of_a_small_site() -> None:
    log = read_swf(FIXTURES / "bluegene.swf")
    assert log.max_procs == 163_840 and min(j.procs for j in log.jobs) == 512
    procs = {j.number: j.procs for j in log.jobs}
    full = next(j for j in log.jobs if j.procs == 163_840 and j.run > 0)
    plan = plan_replay(log, cluster("alpha"), start=full.submit, duration_s=1)
    assert [(j.nodes, j.cpus_per_node) for j in plan.jobs
            if _number(j.name) == full.number] == [(4, 8)]  # the whole machine: all of alpha
    sizes = {(procs[_number(j.name)], j.nodes * j.cpus_per_node) for seed in (1, 2, 3)
             for j in plan_replay(log, cluster("alpha"), seed=seed).jobs}
    assert (512, 1) in sizes and (2048, 1) in sizes  # 512 of 163,840 cores: one CPU
    # a smaller site holds fewer such jobs: they are thinned to the log's load
    plan = plan_replay(log, cluster("alpha"), seed=1)
    assert plan.arrivals_kept < plan.arrivals_in_log and "kept with probability" in plan.notes[0]


def test_requested_processors_stand_for_allocated_ones() -> None:
    text = (FIXTURES / "requested_only.swf").read_text()
    requested = [int(f.split()[7]) for f in text.splitlines() if not f.startswith(";")]
    log = read_swf(FIXTURES / "requested_only.swf")
    assert sorted(j.procs for j in log.jobs) == sorted(requested) and min(requested) > 0


@pytest.mark.parametrize("line, accepted", [
    ("1 0 0 nan 4 -1 -1 4 600 -1 1 1 1 -1 1 -1 -1 -1", "numbers"),
    ("1 0 0 100 inf -1 -1 4 600 -1 1 1 1 -1 1 -1 -1 -1", "numbers"),
    ("1 0 0 100 N/A -1 -1 4 600 -1 1 1 1 -1 1 -1 -1 -1", "numbers"),
    ("1,0,0,100,4,-1,-1,4,600,-1,1,1,1,-1,1,-1,-1,-1", "18 fields"),  # a CSV
    ("1 0 0 100 4 -1 -1 4", "18 fields"),
])
def test_a_malformed_line_is_named_with_what_is_accepted(tmp_path: Path, line: str,
                                                         accepted: str) -> None:
    p = tmp_path / "bad.swf"
    p.write_text("; MaxProcs: 8\n2 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 1 -1 -1 -1\n" + line + "\n")
    with pytest.raises(BadInput, match=rf"bad\.swf:3: .*{accepted}"):
        read_swf(p)


def test_gzip_is_read_by_its_bytes_not_its_name(tmp_path: Path) -> None:
    text = (FIXTURES / "short.swf").read_text()
    unzipped = tmp_path / "short.swf.gz"  # what a browser that unzips on download saves
    unzipped.write_text(text)
    zipped = tmp_path / "short.swf"
    zipped.write_bytes(gzip.compress(text.encode()))
    assert read_swf(unzipped).jobs == read_swf(zipped).jobs == read_swf(FIXTURES / "short.swf").jobs
    truncated = tmp_path / "cut.swf.gz"
    truncated.write_bytes(gzip.compress(text.encode())[:200])
    with pytest.raises(BadInput, match="not a readable gzip file"):
        read_swf(truncated)


@pytest.mark.parametrize("name", ["bluegene", "cancelled", "maxnodes_only", "no_requests",
                                  "oversized", "partial", "requested_only", "unordered"])
def test_the_prediction_benchmark_runs_on_unseen_logs(name: str) -> None:
    """No crash, no division by zero, finite figures; a Blue Gene's 40,960 nodes are
    simulated as fewer (it took minutes a moment)."""
    for new_jobs in (False, True):
        r = prediction.run_log(FIXTURES / f"{name}.swf", moments=2, seed=1, new_jobs=new_jobs)
        assert set(r["models"]) == set(prediction.MODELS)
        assert r["nodes"] <= prediction.SIM_NODES and r["cpus_per_node"] >= 1
        for s in r["models"].values():
            assert all(v is None or math.isfinite(v) for v in s.values())
        if name == "bluegene":
            assert (r["nodes"], r["cpus_per_node"]) == (1024, 160)
