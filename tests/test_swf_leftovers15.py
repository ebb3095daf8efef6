"""What sweep 15 of SWF logs left: the unit a replayed partition's note names, per-queue
limits in the header's Queue lines, jobs cancelled while queued in the --history
accounting, and the prediction benchmark reading MaxRuntime as `read_swf` does. Small logs
written here; no test bed.

Faults found and fixed, each shown by a test here that failed before:
- a partition of a log whose sizes count nodes was said to be "a machine of 12 processors":
  the notes name the log's unit, nodes;
- a Queue line's MaxRuntime ("; Queue: 1 short [MaxRuntime: 3600]") was not read: a job of
  that queue without a request asked the log's MaxRuntime, and the simulated scheduler
  planned it so; it asks its queue's limit now;
- a job cancelled while it waited (status 5, no run) was left out of the --history
  accounting: it is written as Slurm writes such a job (its start its cancel), and the
  calibration reads it as a right-censored wait, not as a start;
- the prediction benchmark read the first MaxRuntime line of the header itself, not the
  log's (`SwfLog.max_runtime`, the larger of two joined headers') nor its queues'.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import prediction
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import one_partition, plan_replay, read_swf

ALPHA = cluster("alpha")  # 4 nodes of 8 CPUs: batch 1 day (default), debug 60 min
DAY = 86_400
QUEUES = ("; MaxProcs: 64\n; MaxRuntime: 7200\n; MaxQueues: 3\n"
          "; Queue: 1 short [MaxRuntime: 3600]\n; Queue: 2 long (MaxRuntime=86400)\n"
          "; Queue: 3 other: at most 1 hour\n")


def _job(number: int, submit: float, *, wait: float = 30, run: float = 1200,
         procs: int = 16, req: float = 3600, status: int = 1, queue: int = 1,
         partition: int = 1) -> str:
    """One 18-field job line as the archive writes it."""
    fields = (number, f"{submit:.10g}", f"{wait:.10g}", f"{run:.10g}", procs, -1, -1, procs,
              f"{req:g}", -1, status, 3, 2, -1, queue, partition, -1, -1)
    return " ".join(map(str, fields)) + "\n"


def _save(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# ---- the unit a note names -------------------------------------------------------------------

NODES = ("; MaxNodes: 16\n; MaxProcs: 64\n; Note: job sizes are given in nodes\n"
         "; Partition: 1 batch (12 nodes)\n; Partition: 2 debug (16 processors)\n")


def test_a_partition_of_a_log_counted_in_nodes_is_said_in_nodes(tmp_path: Path) -> None:
    body = "".join(_job(n, 900 * n, wait=0, procs=4 if n % 2 else 2,
                        partition=1 if n % 2 else 2) for n in range(1, 301))
    log = read_swf(_save(tmp_path / "np.swf", NODES + body))
    assert log.unit == "nodes"
    [note] = [n for n in one_partition(log, "batch").notes if "replayed alone" in n]
    assert "on a machine of 12 nodes (the header's Partition line)" in note
    assert "12 processors" not in note


def test_the_simulated_machine_of_a_log_counted_in_nodes_is_said_in_nodes(
        tmp_path: Path) -> None:
    body = "".join(_job(n, 900 * n, wait=-1, procs=4) for n in range(1, 301))
    plan = plan_replay(read_swf(_save(tmp_path / "nw.swf", NODES.replace(
        "; Partition: 2 debug (16 processors)\n", "") + body)), ALPHA, start=DAY, seed=1)
    [note] = [n for n in plan.notes if "no recorded wait" in n]
    assert "the log's machine of 16 nodes running" in note


def test_a_log_counted_in_processors_says_processors(tmp_path: Path) -> None:
    log = read_swf(_save(tmp_path / "p.swf", "; MaxProcs: 64\n; Partition: 1 batch (48 "
                         "processors)\n" + "".join(_job(n, 900 * n) for n in range(1, 301))))
    assert log.unit == "processors"
    assert any("on a machine of 48 processors" in n for n in one_partition(log, "1").notes)


# ---- per-queue limits -------------------------------------------------------------------------

def test_queue_lines_give_their_queues_limits(tmp_path: Path) -> None:
    """The archive's Queue lines with a MaxRuntime of their own, in brackets or parentheses;
    words ("at most 1 hour") and HPC2N's "[fque:1]" give none; a limit in named units ("1
    hour") is read in seconds, as the header's MaxRuntime is."""
    log = read_swf(_save(tmp_path / "q.swf", QUEUES + "; Queue: 4 [fque:1]\n"
                         "; Queue: 5 debug (MaxRuntime: 1 hour)\n"
                         "; Queue: 6 wide [MaxRuntime: 1,800 s, MaxProcs: 64]\n"
                         + "".join(_job(n, 900 * n) for n in range(1, 50))))
    assert log.queue_limits == ((1, 3600.0), (2, 86400.0), (5, 3600.0), (6, 1800.0))
    assert [log.unasked_s(q) for q in (1, 2, 3, 4, 5, 6, -1)] == [
        3600, 86400, 7200, 7200, 3600, 1800, 7200]


def test_a_job_without_a_request_asks_its_queues_limit(tmp_path: Path) -> None:
    """At --scale 60: queue 1's hour is 1 min, queue 2's day 24 min, queue 3 (its line
    gives no MaxRuntime) the log's 7200 s, 2 min. Before: 2 min each."""
    body = "".join(_job(n, 900 * n, req=-1, queue=1 + n % 3) for n in range(1, 301))
    plan = plan_replay(read_swf(_save(tmp_path / "q.swf", QUEUES + body)), ALPHA, start=DAY,
                       seed=1, history_s=600)
    want = {1: 1, 2: 24, 3: 2}
    assert plan.jobs and plan.history
    for j in [*plan.jobs, *plan.history]:
        number = int(j.name.split("-")[2])
        assert j.walltime_min == want[1 + number % 3], j
    [note] = [n for n in plan.notes if "no requested time" in n]
    assert "each asks for its queue's MaxRuntime" in note
    assert "queue 1 3600 s, queue 2 86400 s; another queue's, the log's MaxRuntime 7200 s" in note


@pytest.mark.parametrize("queue, running, queued", [
    (1, 2, 1),  # its queue's 100 s: planned to end before job 2's reserved start
    (2, 1, 2),  # a queue without a limit: the log's MaxRuntime, an hour, it waits
])
def test_unknown_waits_are_simulated_on_the_queues_limit(
        tmp_path: Path, queue: int, running: int, queued: int) -> None:
    """No waits, no requests: job 1 holds 48 of 64 processors for 1000 s, job 2 needs all
    64, job 3 needs 16 for 100 s in a queue of 100 s. Planned on its queue's limit it
    backfills before job 2 (before: planned on the log's MaxRuntime, it waited)."""
    header = "; MaxProcs: 64\n; MaxRuntime: 3600\n; Queue: 1 express [MaxRuntime: 100]\n"
    lines = (_job(1, 1000, wait=-1, run=1000, procs=48, req=-1, queue=2)
             + _job(2, 1010, wait=-1, run=100, procs=64, req=-1, queue=2)
             + _job(3, 1020, wait=-1, run=100, procs=16, req=-1, queue=queue)
             + "".join(_job(n, 3000 + 900 * n, wait=-1, run=100, procs=2, req=-1, queue=2)
                       for n in range(4, 54)))
    log = read_swf(_save(tmp_path / "easy.swf", header + lines))
    plan = plan_replay(log, ALPHA, start=1050, seed=1, duration_s=600)
    assert (plan.running_at_start, plan.queued_at_start) == (running, queued)
    [note] = [n for n in plan.notes if "no recorded wait" in n]
    assert ("their queue's MaxRuntime (the header's Queue lines), else the log's MaxRuntime, "
            "3600 s") in note


# ---- the prediction benchmark reads the log's MaxRuntime ---------------------------------------

def test_the_benchmark_takes_the_logs_max_runtime_of_joined_headers(tmp_path: Path) -> None:
    """Two logs joined, each with its header: the log's MaxRuntime is the larger, 7200 s
    (before: the benchmark read the first header line, 3600 s)."""
    first = "".join(_job(n, 100 * n, req=-1) for n in range(1, 6))
    second = "".join(_job(n, 1000 + 100 * n, req=-1) for n in range(6, 11))
    path = _save(tmp_path / "joined.swf", "; MaxProcs: 64\n; MaxRuntime: 3600\n" + first
                 + "; MaxProcs: 64\n; MaxRuntime: 7200\n" + second)
    log, note = prediction.with_requests(read_swf(path))
    assert {j.req_time for j in log.jobs} == {7200.0} and "7200 s" in note


def test_the_benchmark_gives_a_job_without_a_request_its_queues_limit(tmp_path: Path) -> None:
    body = "".join(_job(n, 900 * n, req=-1, queue=1 + n % 3) for n in range(1, 31))
    log, note = prediction.with_requests(read_swf(_save(tmp_path / "q.swf", QUEUES + body)))
    assert {(j.queue, j.req_time) for j in log.jobs} == {(1, 3600), (2, 86400), (3, 7200)}
    assert "3600 s, 7200 s, 86400 s (its queue's MaxRuntime" in note


# ---- jobs cancelled while queued in the --history accounting ---------------------------------

def _with_left_queue(tmp_path: Path) -> Path:
    """Jobs every 900 s; every tenth cancelled after waiting 2000 s (status 5, run -1)."""
    return _save(tmp_path / "left.swf", "; MaxProcs: 64\n" + "".join(
        _job(n, 900 * n, wait=2000, run=-1, status=5) if n % 10 == 0 else _job(n, 900 * n)
        for n in range(1, 301)))


def test_history_holds_jobs_cancelled_while_they_waited(tmp_path: Path) -> None:
    """A center's accounting shows a job cancelled in its queue, with its wait: the history
    holds it, CANCELLED at its submission plus its wait (before: left out)."""
    start = DAY
    plan = plan_replay(read_swf(_with_left_queue(tmp_path)), ALPHA, start=start, seed=1,
                       history_s=600)
    left = [h for h in plan.history if not h.started]
    cancels = [n for n in range(10, 301, 10) if start - 600 * 60 <= 900 * n + 2000 < start]
    assert sorted(int(h.name.split("-")[2]) for h in left) == cancels
    for h in left:
        n = int(h.name.split("-")[2])
        assert h.status == 5 and h.start_s == h.end_s == round((900 * n + 2000 - start) / 60, 3)
        assert h.submit_s == round((900 * n - start) / 60, 3)
    assert any(f"{len(left)} job(s) of the --history were cancelled while they waited" in n
               for n in plan.notes)


def test_accounting_lines_of_a_job_cancelled_while_it_waited(tmp_path: Path) -> None:
    """Slurm's jobcomp line: CANCELLED, its start its end (as slurmctld writes a pending job
    it cancels); Grid Engine writes no record of a job deleted before it started."""
    from datetime import datetime

    from diamond_jupyter.testbed.load import history_lines, sge_history_lines

    plan = plan_replay(read_swf(_with_left_queue(tmp_path)), ALPHA, start=DAY, seed=1,
                       history_s=600)
    now = datetime(2026, 1, 1, 12)
    slurm = history_lines(plan.history, ALPHA, now)
    [line] = [x for x in slurm if "Name=trace-hist-90 " in x]
    fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
    assert fields["JobState"] == "CANCELLED" and fields["StartTime"] == fields["EndTime"]
    sge = sge_history_lines(plan.history, ALPHA, now)
    assert len(sge) == sum(1 for h in plan.history if h.started)
    assert not any(":trace-hist-90:" in x for x in sge)


def test_a_job_cancelled_while_it_waited_is_a_censored_wait() -> None:
    """Its wait up to the cancel is a right-censored sample (it would have waited at least
    that long), not a start of that wait, and it is no run sample (before: a start, and a
    run of 0 s against its request)."""
    from datetime import datetime, timedelta, timezone

    from diamond_jupyter.calibration import QueueWait, RecentWaits, queue_waits, run_sample
    from diamond_jupyter.model import JobState, JobStatus

    now = datetime(2026, 1, 1, 12, tzinfo=timezone.utc)
    cancelled = now - timedelta(minutes=10)

    def job(k: int, state: JobState, waited_s: float, ran: bool) -> JobStatus:
        submitted = cancelled - timedelta(seconds=waited_s)
        start = cancelled if not ran else submitted + timedelta(seconds=waited_s)
        return JobStatus(native_id=str(k), state=state, partition="batch", cpus=8,
                         walltime_s=3600, submitted_at=submitted, started_at=start,
                         ended_at=cancelled if not ran else start + timedelta(seconds=60))

    gave_up = job(1, JobState.CANCELLED, 5000, ran=False)
    [wait] = queue_waits([gave_up], now, 6 * 3600).values()
    assert (wait.wait_s, wait.left, wait.censored, wait.waiting) == (5000, True, True, False)
    assert run_sample(gave_up) is None
    # 100 jobs started after a minute, 5 after 3000 s, 40 left after 600 s: counted as
    # starts at 600 s those would bring the bound down to 600 s; censored, they say only
    # that a start takes longer, and the bound is the 3000 s of the starts seen past them
    started = [job(k, JobState.COMPLETED, 60 if k < 102 else 3000, ran=True)
               for k in range(2, 107)]
    left = [job(k, JobState.CANCELLED, 600, ran=False) for k in range(107, 147)]
    waits = list(queue_waits([*started, *left], now, 6 * 3600).values())
    as_starts = [QueueWait(w.partition, w.cpus, w.wait_s, submitted_at=w.submitted_at)
                 for w in waits]
    assert RecentWaits(as_starts).bound("batch", 8) == (600, 145)
    assert RecentWaits(waits).bound("batch", 8) == (3000, 145)
