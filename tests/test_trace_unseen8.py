"""The eighth sweep of SWF logs unlike the shared ones, each written here: logs that record no
waits (their machine simulated to rebuild the queue standing at a window's start), the
history written before a window on such logs and near a log's start, logs of several
concatenated with headers of their own, a single job, Unix times as submit times, a header
whose MaxRecords is under the lines there are, preceding-job fields that point ahead, at
themselves or round in a cycle, and sizes given only in a note."""

from __future__ import annotations

import gc
import gzip
import json
import re
from datetime import datetime
from pathlib import Path

import pytest

from diamond_jupyter.cli.main import main as cli
from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed import load, trace, trace_sim
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import JobTable, SwfJob, plan_replay, read_swf


def _line(number: int, submit: float, wait: float = 0, run: float = 100, procs: int = 4,
          req: float = 600, status: int = 1, partition: int = 1, preceding: int = -1,
          think: float = -1) -> str:
    """One SWF job line (18 fields) of the values a test names."""
    return (f"{number} {submit:.15g} {wait:g} {run:g} {procs} -1 -1 {procs} {req:g} -1 {status} "
            f"{number % 5 + 1} 1 -1 1 {partition} {preceding} {think:g}\n")


def _numbers(plan, kind: str) -> set[int]:
    """Job numbers of the plan's jobs of one kind (run, wait, arrive)."""
    return {int(j.name.split("-")[2].split(".")[0]) for j in plan.jobs
            if j.name.startswith(f"trace-{kind}-")}


def _table(rows: list[tuple[float, float, float, int, float]]) -> JobTable:
    """A table of (submit, wait, run, processors, request) rows, numbered from 1."""
    return JobTable.of(SwfJob(number=n, submit=s, wait=w, run=r, procs=p, req_time=q,
                              status=1) for n, (s, w, r, p, q) in enumerate(rows, 1))


# ---- a log without waits: its machine simulated to rebuild the standing queue -----------

def test_a_log_without_waits_rebuilds_the_queue_standing_at_the_window(tmp_path: Path) -> None:
    """Every wait -1 and the work offered over the machine: jobs of 32 of 64 processors
    every 100 s, each running 500 s (2.5 machines offered). Before: each job started at its
    submission, so nothing waited at the window's start and the log's machine ran five
    such jobs at once (a utilization of 2.5, said in a note). Now the machine is simulated
    first come first served: two jobs run at the window's start, the rest wait in
    submit order, the utilization is at most the machine, and a note says the queue is
    the simulation's."""
    path = tmp_path / "nowait.swf"
    path.write_text("; MaxProcs: 64\n" + "".join(_line(n, 100 * n, -1, 500, 32, 900)
                                                 for n in range(1, 200)))
    plan = plan_replay(read_swf(path), cluster("alpha"), start=5000, duration_s=60)
    assert plan.running_at_start == 2 and plan.queued_at_start > 10
    assert plan.log_utilization <= 1.0
    waiting = sorted(_numbers(plan, "wait"))
    running = _numbers(plan, "run")
    assert max(running) < min(waiting)  # first come, first served
    [note] = [n for n in plan.notes if "no recorded wait" in n]
    assert "simulated" in note and "64 processors" in note
    assert f"({plan.queued_at_start} waiting, 2 running)" in note


def test_easy_backfilling_starts_a_short_job_in_the_gap_a_reservation_leaves() -> None:
    """A machine of 10 processors: A (8, 1,000 s) runs; B (10) must wait for A, its start
    reserved at 1,000 s; C (2 processors, asking 500 s) fits beside A and ends before that
    reservation: it starts at once. D (2, asking 5,000 s) would delay B: it waits for B's
    end. E arrives when B has started and waits behind D, first come first served."""
    table = _table([(0, -1, 1000, 8, 1000), (10, -1, 100, 10, 100), (20, -1, 400, 2, 500),
                    (30, -1, 50, 2, 5000), (1050, -1, 10, 9, 10)])
    sim = trace_sim.simulate_waits(table, 10, 0.0, 0.0, 10_000.0)
    assert sim.waits == {0: 0.0, 1: 990.0, 2: 0.0, 3: 1070.0, 4: 100.0}
    assert sim.jobs == 5 and not sim.cut and sim.from_log_start


def test_recorded_starts_hold_their_processors_and_unknown_ones_queue_behind() -> None:
    """A log of recorded waits with a few unknown ones: a job whose start the log records
    starts then, whatever the simulation holds; a job without one queues for what is
    left."""
    table = _table([(0, 0, 1000, 6, 1000), (5, -1, 100, 6, 100), (10, 20, 100, 4, 100)])
    sim = trace_sim.simulate_waits(table, 10, 0.0, 0.0, 5000.0)
    assert sim.waits == {1: 995.0}  # only the unknown wait is simulated


def test_the_simulation_is_bounded_in_jobs_and_says_so(tmp_path: Path, monkeypatch) -> None:
    """A long log without waits (30,000 jobs, written by a generator): the simulation takes
    at most SIM_MAX_JOBS jobs before the window and as many in it, and the note says where
    it started and that it was cut. Counted in jobs and objects, not in seconds."""
    monkeypatch.setattr(trace_sim, "SIM_MAX_JOBS", 400)
    monkeypatch.setattr(trace, "SIM_MAX_JOBS", 400)
    path = tmp_path / "long.swf.gz"
    with gzip.open(path, "wt") as f:
        f.write("; MaxProcs: 128\n")
        for n in range(1, 30_001):
            f.write(_line(n, 10 * n, -1, 60 * (n % 7 + 1), 2 ** (n % 6), 600))
    log = read_swf(path)
    start = 10 * 25_000.0
    sim = trace_sim.simulate_waits(log.table, log.max_procs, 0.0, start, start + 600)
    assert sim.cut and not sim.from_log_start and sim.jobs <= 400 + 60 + 40
    assert len(sim.waits) <= sim.jobs
    gc.collect()
    before = len(gc.get_objects())
    plan = plan_replay(log, cluster("alpha"), start=start, duration_s=10)
    gc.collect()
    assert len(gc.get_objects()) - before < 5_000  # not an object per job of the log
    [note] = [n for n in plan.notes if "simulated" in n]
    assert "at most 400 before the window" in note and "log seconds before the window" in note


def test_a_partition_without_waits_is_simulated_on_its_own_machine(tmp_path: Path) -> None:
    """--partition of a grid whose waits are unknown: the partition's own machine (its
    header line, 32 processors) runs its jobs, so its queue forms where the whole grid's
    (512) would have held them all at once."""
    path = tmp_path / "grid.swf"
    path.write_text("; MaxProcs: 512\n; Partition: 1 big (480 processors)\n"
                    "; Partition: 2 small (32 processors)\n"
                    + "".join(_line(n, 50 * n, -1, 400, 16, 600, partition=2)
                              for n in range(1, 100)))
    small = trace.one_partition(read_swf(path), "small")
    assert small.max_procs == 32
    plan = plan_replay(small, cluster("alpha"), start=2600, duration_s=10)
    assert plan.running_at_start == 2 and plan.queued_at_start > 0


# ---- the history written before a window ---------------------------------------------------

def test_history_of_a_log_without_waits_ends_where_the_simulation_ends_it(tmp_path: Path
                                                                          ) -> None:
    """Every wait -1 on a machine offered twice what it holds: the history's jobs start
    when the simulated machine starts them, after their submission (before: each started
    at its submission, and the history's starts and ends were those of a machine twice the
    size)."""
    path = tmp_path / "nowait.swf"
    path.write_text("; MaxProcs: 64\n" + "".join(_line(n, 100 * n, -1, 400, 32, 600)
                                                 for n in range(1, 400)))
    plan = plan_replay(read_swf(path), cluster("alpha"), start=30_000, duration_s=10,
                       scale=60, history_s=200)
    assert plan.history
    waited = [h for h in plan.history if h.start_s > h.submit_s + 1]
    assert len(waited) > len(plan.history) // 2
    assert all(h.end_s - h.start_s == pytest.approx(400 / 60, abs=1e-3) for h in plan.history)


def test_a_window_near_the_logs_start_says_the_history_is_shorter(tmp_path: Path) -> None:
    """--history of 6 h at --scale 60 asks for 15 days of log before a window an hour into
    the log: the history holds that hour's jobs, and a note says so (before: nothing
    said)."""
    path = tmp_path / "young.swf"
    path.write_text("; MaxProcs: 64\n" + "".join(_line(n, 100 * n, 5, 50, 4)
                                                 for n in range(1, 100)))
    plan = plan_replay(read_swf(path), cluster("alpha"), start=3700, duration_s=10,
                       history_s=21600)
    assert len(plan.history) == 36
    [note] = [n for n in plan.notes if "--history" in n]
    assert "begins 3600 log seconds before it (60 real s)" in note and "36 job(s)" in note
    # a history within the log says nothing of it
    plan = plan_replay(read_swf(path), cluster("alpha"), start=9000, duration_s=10,
                       history_s=30)
    assert plan.history and not any("--history" in n for n in plan.notes)


@pytest.mark.parametrize("status, slurm, sge", [
    (1, "COMPLETED", (0, 0)), (0, "FAILED", (0, 1)), (5, "CANCELLED", (100, 137)),
    (-1, "COMPLETED", (0, 0)), (3, "COMPLETED", (0, 0)), (4, "FAILED", (0, 1)),
    (2, "PREEMPTED", (100, 137))])
def test_history_states_agree_on_slurm_and_grid_engine(status: int, slurm: str,
                                                       sge: tuple[int, int]) -> None:
    """One SWF status, one ending on both schedulers' accounting: an unknown status (-1)
    and the last part of a job that completed (3) are completions on both (Grid Engine
    wrote them as failures with exit 1, Slurm as completions), the last part of a failed
    job (4) a failure on both (Slurm wrote COMPLETED), a part stopped to resume later (2)
    preempted (killed from outside) on both."""
    h = trace.HistoryJob(name="trace-hist-3", submit_s=-90.0, start_s=-80.0, end_s=-10.0,
                         nodes=1, cpus=2, walltime_min=5, partition=None, status=status)
    now = datetime(2026, 12, 5, 4, 0, 0)
    (line,) = load.history_lines([h], cluster("beta"), now)
    assert f"JobState={slurm} " in line
    (record,) = load.sge_history_lines([h], cluster("delta"), now)
    fields = record.split(":")
    assert (int(fields[11]), int(fields[12])) == sge


def test_history_at_another_scale_in_a_partition_keeps_its_parts(tmp_path: Path) -> None:
    """A partition's history at --scale 10: only that partition's jobs, sized on its own
    machine (16 of 32 processors: half the site), times divided by 10; a preempted job's
    parts without a summary are each a history job of its own name."""
    path = tmp_path / "parts.swf"
    path.write_text("; MaxProcs: 64\n; Partition: 1 a (32 processors)\n"
                    "; Partition: 2 b (32 processors)\n"
                    + _line(1, 0, 10, 100, 16, status=2, partition=1)
                    + _line(1, 0, 300, 100, 16, status=3, partition=1)
                    + _line(2, 50, 0, 100, 32, partition=2)
                    + _line(3, 2000, 0, 100, 16, partition=1))
    part = trace.one_partition(read_swf(path), "a")
    plan = plan_replay(part, cluster("alpha"), start=2000, duration_s=10, scale=10,
                       history_s=300)
    assert [h.name for h in plan.history] == ["trace-hist-1", "trace-hist-1.2"]
    total = cluster("alpha").nodes * cluster("alpha").cpus
    assert {h.cpus for h in plan.history} == {total // 2}
    assert plan.history[1].start_s == pytest.approx((300 - 2000) / 10)
    assert plan.history[0].status == 2 and plan.history[1].status == 3


# ---- logs joined, one log, Unix times ------------------------------------------------------

def test_logs_joined_each_from_its_own_start_are_laid_end_to_end(tmp_path: Path) -> None:
    """Two logs joined (`cat`), each with its own header whose UnixStartTime is its second
    0 and its submit times counted from it: the second began a day after the first. Before:
    both were read as one log of 1,000 s, the second's jobs beside the first's. Now each
    block's times are moved by its UnixStartTime's distance from the first's, and a note
    says so."""
    first = "; UnixStartTime: 1000000000\n; MaxProcs: 64\n" + "".join(
        _line(n, 100 * n) for n in range(1, 11))
    second = "; UnixStartTime: 1000086400\n; MaxProcs: 64\n" + "".join(
        _line(n, 100 * n) for n in range(1, 11))
    path = tmp_path / "joined.swf"
    path.write_text(first + second)
    log = read_swf(path)
    assert log.span == (100.0, 86_400 + 1000.0)
    assert log.unix_start == 1_000_000_000
    assert sorted(log.table.submit)[10] == 86_500.0
    assert any("UnixStartTime" in n and "86400" in n for n in log.notes)
    # one header's UnixStartTime said twice, or a log with one: nothing moves
    path.write_text(first + "; UnixStartTime: 1000000000\n" + "".join(
        _line(n, 100 * n + 2000) for n in range(11, 21)))
    assert read_swf(path).span == (100.0, 4000.0)


def test_a_log_of_one_job_is_not_called_a_quiet_spell(tmp_path: Path) -> None:
    """A single job: a drawn window holds all of the log. Before: "a quiet spell" (the
    window's utilization, diluted over the 36,000 s past the log's end, was set against
    the log's own over its 100 s). Now only the log's end past the window is said."""
    path = tmp_path / "one.swf"
    path.write_text("; MaxProcs: 8\n" + _line(1, 0, 0, 100, 4))
    plan = plan_replay(read_swf(path), cluster("alpha"), seed=1)
    assert _numbers(plan, "arrive") == {1}
    assert not any("quiet spell" in n for n in plan.notes)
    assert any("past the log's last submission" in n for n in plan.notes)


def test_a_quiet_spell_inside_a_log_is_still_said(tmp_path: Path) -> None:
    path = tmp_path / "gap.swf"
    path.write_text("; MaxProcs: 8\n" + "".join(_line(n, 100 * n, 0, 100, 8)
                                                for n in range(1, 200))
                    + _line(200, 100_000, 0, 10, 1)
                    + "".join(_line(n, 200_000 + 100 * n, 0, 100, 8) for n in range(201, 400)))
    plan = plan_replay(read_swf(path), cluster("alpha"), start=99_000, duration_s=600)
    assert any("quiet spell" in n for n in plan.notes)


def test_unix_times_as_submit_times_name_the_start_a_user_meant(tmp_path: Path) -> None:
    """A conversion that kept Unix times in field 2 and wrote no UnixStartTime: a --start
    of an hour, counted from the log's beginning, is refused naming the range and the
    --start that hour is in the log's own seconds."""
    path = tmp_path / "epoch.swf"
    path.write_text("; MaxProcs: 8\n" + "".join(_line(n, 1_200_000_000 + 100 * n)
                                                for n in range(1, 200)))
    log = read_swf(path)
    with pytest.raises(BadInput, match=r"Unix times.*--start 1200003700"):
        plan_replay(log, cluster("alpha"), start=3600)
    plan = plan_replay(log, cluster("alpha"), start=1_200_003_700, duration_s=10)
    assert plan.arrivals_in_log > 0


def test_maxrecords_under_the_lines_there_are_is_said(tmp_path: Path) -> None:
    """A header that says MaxRecords 3 over 7 job lines (a header not updated, logs joined
    under one header): all 7 are replayed, and a note says the header counts fewer."""
    path = tmp_path / "more.swf"
    path.write_text("; MaxRecords: 3\n; MaxJobs: 3\n; MaxProcs: 8\n"
                    + "".join(_line(n, 10 * n, 0, 100, 1) for n in range(1, 8)))
    log = read_swf(path)
    assert len(log.table) == 7
    [note] = [n for n in log.notes if "MaxRecords" in n]
    assert "MaxRecords 3" in note and "7 job lines" in note and "all 7" in note


# ---- preceding jobs ------------------------------------------------------------------------

def test_preceding_fields_in_a_cycle_hold_no_job_on_a_later_one(tmp_path: Path) -> None:
    """Jobs 1 -> 3 -> 2 -> 1 in field 17 (a cycle), job 4 on itself, job 5 on job 9 after
    it: a job is held only on one submitted before it, so the chain never waits on
    itself."""
    path = tmp_path / "cycle.swf"
    path.write_text("; MaxProcs: 64\n" + _line(1, 0, preceding=3, think=5)
                    + _line(2, 10, preceding=1, think=5) + _line(3, 20, preceding=2, think=5)
                    + _line(4, 30, preceding=4) + _line(5, 40, preceding=9)
                    + "".join(_line(n, 10 * n) for n in range(6, 10)))
    plan = plan_replay(read_swf(path), cluster("alpha"), start=0, duration_s=10, scale=10)
    after = {j.name: j.after for j in plan.jobs}
    assert after["trace-arrive-1"] is None and after["trace-arrive-2"] == "trace-arrive-1"
    assert after["trace-arrive-3"] == "trace-arrive-2"
    assert after["trace-arrive-4"] is None and after["trace-arrive-5"] is None
    at = {j.name: j.at_s for j in plan.jobs}
    assert all(at[a] <= at[n] for n, a in after.items() if a)


# ---- a partition's size given only in a note -----------------------------------------------

def test_a_partition_size_in_a_note_is_read_where_it_names_the_partition(tmp_path: Path
                                                                         ) -> None:
    """No Partition lines; the note says "partition 2 (debug) has 16 nodes of 4 cores"
    and "Partitions: 1 is batch with 240 processors": those sizes size the partitions
    (before: a note was not read, the partitions were what their jobs held at once). A
    note naming no partition number says nothing."""
    path = tmp_path / "noted.swf"
    path.write_text("; MaxProcs: 304\n; MaxPartitions: 2\n"
                    "; Note: partition 2 (debug) has 16 nodes of 4 cores\n"
                    "; Note: Partitions: 1 is batch with 240 processors\n"
                    "; Note: the machine has 76 nodes of 4 cores\n"
                    + _line(1, 0, 0, 100, 8, partition=2) + _line(2, 5, 0, 100, 16, partition=1))
    log = read_swf(path)
    debug = trace.one_partition(log, "2")
    assert debug.max_procs == 64
    assert trace.one_partition(log, "1").max_procs == 240
    assert trace.one_partition(log, "debug").max_procs == 64
    assert any("a note" in n for n in debug.notes)
    # two partitions in one note: each is sized by the words up to the next; a Partition
    # line that gives no size takes a note's, a line that gives one keeps it
    path.write_text("; MaxProcs: 304\n; Partition: 3 small\n; Partition: 1 big (200 processors)\n"
                    "; Note: partition 0 is the default; partition 3 has 32 processors; "
                    "partition 1 has 300 processors\n"
                    + _line(1, 0, 0, 100, 8, partition=3) + _line(2, 5, 0, 100, 8, partition=0))
    log = read_swf(path)
    assert sorted(log.partitions) == [(1, "big", 200), (3, "small", 32)]
    assert log.noted_partitions == {3}


def test_partitions_named_in_free_text_without_numbers_are_not_guessed(tmp_path: Path
                                                                       ) -> None:
    """"; Partitions: a batch partition of most nodes and a small debug one" names no
    number and no size: no partition is sized from it, and the log still reads."""
    path = tmp_path / "free.swf"
    path.write_text("; MaxProcs: 64\n; Partitions: a batch partition of most nodes and a "
                    "small debug one\n" + _line(1, 0, 0, 100, 8, partition=2))
    log = read_swf(path)
    assert log.partitions == ()
    assert trace.one_partition(log, "2").max_procs == 8


def test_every_new_shape_reads_without_a_traceback(tmp_path: Path) -> None:
    """The shapes of this sweep at once: a zero-processor job that ran, a status 0 of no
    run, executables and users -1, the same user in two queues: a plan, never an error."""
    rows = [_line(1, 0, -1, 100, 0), _line(2, 5, -1, 0, 4, status=0)]
    row = _line(3, 9, -1, 50, 2).split()
    row[11], row[13], row[14] = "-1", "-1", "2"  # user, executable, queue
    rows.append(" ".join(row) + "\n")
    row = _line(4, 12, -1, 50, 2).split()
    row[11], row[14] = "-1", "7"
    rows.append(" ".join(row) + "\n")
    path = tmp_path / "mixed.swf"
    path.write_text("; MaxProcs: 8\n" + "".join(rows))
    plan = plan_replay(read_swf(path), cluster("alpha"), start=0, duration_s=60)
    assert _numbers(plan, "arrive") == {3, 4}
    assert re.search(r"1 job\(s\) ran with no processor count", " ".join(read_swf(path).notes))


# ---- header lines in other shapes ----------------------------------------------------------

def test_several_header_fields_on_one_line_are_each_read(tmp_path: Path) -> None:
    """"; MaxNodes: 128 ; MaxProcs: 1024" (a header typed with its fields on one line):
    before, only the first was read, so the machine was its largest job (512) and a job
    of half the machine filled the site; now both are, and a job of 512 is half of it. A
    note's semicolons with no field after them stay its text."""
    path = tmp_path / "oneline.swf"
    path.write_text("; MaxNodes: 128 ; MaxProcs: 1024\n; MaxJobs: 10; MaxRecords: 10\n"
                    "; Note: queues were merged; see the site's report\n"
                    + "".join(_line(n, 100 * n, 0, 100, 512) for n in range(1, 11)))
    log = read_swf(path)
    assert log.max_procs == 1024 and not log.notes
    plan = plan_replay(log, cluster("alpha"), start=100, duration_s=1)
    total = cluster("alpha").nodes * cluster("alpha").cpus
    assert {j.nodes * j.cpus_per_node for j in plan.jobs} == {total // 2}
    assert len(trace.header_fields(" Note: a; b")) == 1


def test_start_time_lines_in_other_formats_leave_the_unix_start_alone(tmp_path: Path) -> None:
    """A header with UnixStartTime and TimeZoneString, and StartTime / EndTime lines in ISO,
    date(1) and m/d/y forms, and the deprecated TimeZone: UnixStartTime alone says when
    second 0 was, and no date's digits are read as a field."""
    path = tmp_path / "dates.swf"
    path.write_text("; UnixStartTime: 1199142000\n; TimeZoneString: Europe/Berlin\n"
                    "; StartTime: 2008-01-01T00:00:00+01:00\n"
                    "; EndTime: Tue Dec 30 23:59:59 CET 2008\n; StartTime: 1/1/2008 0:00\n"
                    "; TimeZone: 3600\n; MaxProcs: 64\n"
                    + "".join(_line(n, 100 * n) for n in range(1, 50)))
    log = read_swf(path)
    assert (log.unix_start, log.max_procs, log.notes) == (1_199_142_000, 64, ())
    with pytest.raises(BadInput, match="that moment is --start 700"):
        plan_replay(log, cluster("alpha"), start=1_199_142_000 + 700)


def test_several_partitions_on_one_partition_line_are_each_read(tmp_path: Path) -> None:
    """"; Partitions: 1: batch (240 processors), 2: debug (64 processors)" on one line:
    before, partition 2 was lost (replayed alone it was what its jobs held) and a line of
    two node groups gave partition 1 both groups' processors; now each partition is its
    own, and "16 nodes, 8 cores each" is still one partition's size."""
    path = tmp_path / "oneline.swf"
    path.write_text("; MaxProcs: 1584\n"
                    "; Partitions: 1: batch (240 processors), 2: debug (64 processors)\n"
                    "; Partition: 3 thin (96 nodes x 8 cores); 4 fat (16 nodes of 32 cores)\n"
                    "; Partition: 5 gpu: 16 nodes, 8 cores each\n"
                    + "".join(_line(n, 10 * n, 0, 100, 8, partition=n % 5 + 1)
                              for n in range(1, 30)))
    log = read_swf(path)
    assert log.partitions == ((1, "batch", 240), (2, "debug", 64), (3, "thin", 768),
                              (4, "fat", 512), (5, "gpu", 128))
    assert trace.one_partition(log, "debug").max_procs == 64


def test_joined_logs_keep_each_dependent_job_on_its_own_logs_predecessor(tmp_path: Path
                                                                         ) -> None:
    """Two clusters' logs of one period joined, both numbered from 1, both with a job 2
    that follows their job 1: the second log's job 1 (at 50 s) came before the first log's
    (at 100 s), so its job 2 (at 150 s) was held on the first log's job 1, the latest of
    that number. Now a dependent job waits for the predecessor of its own log."""
    path = tmp_path / "joined.swf"
    path.write_text("; MaxProcs: 64\n" + _line(1, 100, 0, 500) + _line(2, 200, preceding=1)
                    + "; MaxProcs: 64\n" + _line(1, 50, 0, 60)
                    + _line(2, 150, preceding=1, think=20))
    plan = plan_replay(read_swf(path), cluster("alpha"), start=50, duration_s=10, scale=60)
    after = {j.name: (j.after, j.think_s) for j in plan.jobs}
    assert after["trace-arrive-2"][0] == "trace-arrive-1"
    assert after["trace-arrive-2.2"] == ("trace-arrive-1.2", round(20 / 60, 3))


def test_jobs_without_numbers_are_no_chain(tmp_path: Path) -> None:
    """Job numbers -1 and 0 (a conversion that kept none) with field 17 at -1: before,
    "-1" matched the job numbered -1 before it, so every job was held on the one before
    (a chain of the whole log), and a part (status 2) of one was taken as a part of
    another. Now such a job follows none and is its own job, and a note counts them."""
    path = tmp_path / "nonumbers.swf"
    path.write_text("; MaxProcs: 64\n" + "".join(_line(-1, 10 * k) for k in range(5))
                    + "".join(_line(0, 100 + 10 * k, preceding=0) for k in range(3))
                    + _line(-1, 200, 0, 50, status=2) + _line(-1, 200, 60, 50, status=1))
    log = read_swf(path)
    assert len(log.table) == 10
    assert any(n.startswith("10 job(s) have no job number") for n in log.notes)
    plan = plan_replay(log, cluster("alpha"), start=0, duration_s=10)
    assert len(plan.jobs) == 10 and all(j.after is None for j in plan.jobs)


def test_the_command_line_dry_run_shows_the_simulated_queue(tmp_path: Path, capsys) -> None:
    """`diamond testbed load --trace nowait.swf --dry-run --json`: the jobs waiting in the
    simulated queue are submitted at 0 s behind the running ones, and the trace's notes
    say the queue is simulated."""
    path = tmp_path / "nowait.swf"
    path.write_text("; MaxProcs: 64\n" + "".join(_line(n, 100 * n, -1, 500, 32, 900)
                                                 for n in range(1, 200)))
    assert cli(["testbed", "load", "--trace", str(path), "--site", "alpha", "--start", "5000",
                "--duration", "60", "--dry-run", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    waiting = [j for j in got["jobs"] if j["name"].startswith("trace-wait-")]
    assert waiting and all(j["at_s"] == 0 for j in waiting)
    assert got["traces"][0]["queued_at_start"] == len(waiting)
    assert any("simulated" in n for n in got["traces"][0]["notes"])


def test_a_grid_without_waits_replayed_whole_queues_each_cluster_on_its_own(tmp_path: Path
                                                                            ) -> None:
    """A grid of two clusters (480 and 32 processors, sized by its Partition lines) whose
    waits are unknown, replayed whole: the small cluster's jobs queue on its 32 processors
    while the big one idles, as the center's did (simulated as one machine of 512, nothing
    waited). A grid whose partitions are not all sized is simulated as one machine."""
    header = ("; MaxProcs: 512\n; Partition: 1 big (480 processors)\n"
              "; Partition: 2 small (32 processors)\n")
    rows = "".join(_line(n, 50 * n, -1, 400, 16, 600, partition=2) for n in range(1, 100))
    rows += _line(100, 10, -1, 100, 8, partition=1)
    path = tmp_path / "grid.swf"
    path.write_text(header + rows)
    plan = plan_replay(read_swf(path), cluster("alpha"), start=2600, duration_s=10)
    assert plan.running_at_start == 2 and plan.queued_at_start > 0
    assert any("each of the log's 2 partitions" in n for n in plan.notes)
    path.write_text(header.replace("(32 processors)", "") + rows)
    plan = plan_replay(read_swf(path), cluster("alpha"), start=2600, duration_s=10)
    assert plan.queued_at_start == 0
    assert any("the log's machine of 512 processors" in n for n in plan.notes)


@pytest.mark.parametrize("lines, unix", [
    ("; StartTime: Tue Jan  1 00:00:00 CET 2008\n; TimeZoneString: Europe/Berlin\n",
     1_199_142_000),
    ("; StartTime: 2008-01-01T00:00:00+01:00\n", 1_199_142_000),
    ("; StartTime: Tue Jan 01 00:00:00 UTC 2008\n", 1_199_145_600),
    ("; TimeZoneString: Europe/Berlin\n; StartTime: 2008-01-01 00:00:00\n", 1_199_142_000)])
def test_a_start_time_without_unix_start_time_says_when_second_0_was(tmp_path: Path, lines: str,
                                                                    unix: int) -> None:
    """An older header with StartTime (date(1) or ISO forms) and no UnixStartTime: its
    zone from the date, UTC, or TimeZoneString gives log second 0, so a --start given as a
    Unix time is named back in log seconds (before: only the log's range)."""
    path = tmp_path / "old.swf"
    path.write_text(lines + "; MaxProcs: 64\n" + "".join(_line(n, 100 * n) for n in range(1, 50)))
    log = read_swf(path)
    assert log.unix_start == unix
    with pytest.raises(BadInput, match="that moment is --start 700"):
        plan_replay(log, cluster("alpha"), start=unix + 700)


def test_a_start_time_of_an_unknown_zone_is_said_not_guessed(tmp_path: Path) -> None:
    """"CST" alone, no TimeZoneString: an abbreviation of several offsets (US Central,
    China, Cuba) names no one moment, so second 0 is not known, and a note says so ("CET"
    alone, one offset, is read: test_swf_unseen19)."""
    path = tmp_path / "cst.swf"
    path.write_text("; StartTime: Tue Jan  1 00:00:00 CST 2008\n; MaxProcs: 64\n"
                    + _line(1, 0))
    log = read_swf(path)
    assert log.unix_start is None
    assert any("StartTime" in n and "not known" in n for n in log.notes)


def test_negative_submit_times_without_waits_simulate_and_write_history(tmp_path: Path
                                                                        ) -> None:
    """Submit times from -100,000 s (a log whose second 0 is mid-way) with every wait
    unknown, offered above its 16 processors: a drawn window lies in the log, its queue is
    simulated from the log's first submission, and the history holds only jobs that ended
    before the window, their starts never before their submissions."""
    path = tmp_path / "negative.swf"
    path.write_text("; MaxProcs: 16\n" + "".join(_line(n, -100_000 + 100 * n, -1, 150, 8)
                                                 for n in range(1, 2000)))
    log = read_swf(path)
    plan = plan_replay(log, cluster("alpha"), seed=3, duration_s=60, history_s=600)
    first, last = log.span
    assert first <= plan.window[0] <= last
    assert plan.history and all(h.submit_s <= h.start_s < h.end_s < 0 for h in plan.history)
    assert any("simulated" in n for n in plan.notes)
