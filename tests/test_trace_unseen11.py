"""The eleventh sweep of SWF logs, written here from the Parallel Workloads Archive's
format definition where the earlier sweeps did not look: MaxNodes over MaxProcs with jobs
holding more than either at once, UnixStartTime with a TimeZoneString, -1 in every field
the format lets a log leave out, jobs with a requested size but no allocated one (field 5
-1), jobs cancelled before they started (status 5, wait and run -1), the parts of a
checkpointed job (status 2, 3 and 4) with their summary, a log where time goes backwards, a
job larger than MaxProcs, think times with preceding jobs, a log of one job and a window
with nothing in it. Each read by `read_swf`, planned by `plan_replay` and, where it
scores, by the prediction benchmark; no test bed."""

from __future__ import annotations

from pathlib import Path

from sweep_helpers import swf_line, write_swf

from benchmarks import prediction
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import plan_replay, read_swf


def _steady(count: int, every: float = 600, **kw) -> str:
    return "".join(swf_line(n, every * n, wait=300 * (n % 3), **kw) for n in range(1, count))


# ---- header fields ------------------------------------------------------------------------

def test_maxnodes_over_maxprocs_with_more_held_at_once_than_either(tmp_path: Path) -> None:
    """MaxNodes 64, MaxProcs 32, and jobs that held 72 processors at once: the machine is
    what ran (72), said against the header; the benchmark simulates no fewer processors
    and no more nodes than that."""
    body = "".join(swf_line(n, 600 * n, wait=300 * (n % 3), run=1200, procs=8 * (1 + n % 4))
                   for n in range(1, 400))
    path = write_swf(tmp_path, "disagree", "; MaxNodes: 64\n; MaxProcs: 32\n" + body)
    log = read_swf(path)
    assert log.max_procs == 72
    assert any("header says MaxProcs 32" in n and "taken to have 72" in n for n in log.notes)
    r = prediction.run_log(path, moments=2, seed=1)
    assert r["nodes"] * r["cpus_per_node"] >= 72 and r["nodes"] <= 72


def test_unix_start_time_with_a_time_zone_is_the_logs_second_zero(tmp_path: Path) -> None:
    """UnixStartTime (seconds since 1970, UTC) with TimeZoneString beside it: read as the
    log's second zero, whatever the zone; nothing said about it."""
    head = "; UnixStartTime: 1104537600\n; TimeZoneString: Europe/Berlin\n; MaxProcs: 64\n"
    log = read_swf(write_swf(tmp_path, "zoned", head + _steady(200)))
    assert log.unix_start == 1104537600 and log.notes == ()


# ---- fields left out ----------------------------------------------------------------------

def test_every_optional_field_minus_one_is_no_load_said_not_invented(tmp_path: Path) -> None:
    """Only the job number and submit time given (every other field -1): no job has a
    size or a run, so the replay carries none and says why (no made-up sizes)."""
    body = "".join(f"{n} {600 * n} " + " ".join(["-1"] * 16) + "\n" for n in range(1, 200))
    log = read_swf(write_swf(tmp_path, "bare", "; MaxProcs: 64\n" + body))
    assert len(log.jobs) == 199 and log.max_procs == 64
    plan = plan_replay(log, cluster("alpha"), seed=1, duration_s=600)
    assert plan.jobs == []
    assert any("no job of the log ran" in n for n in plan.notes)


def test_jobs_without_an_allocated_size_are_said_to_take_their_request(tmp_path: Path) -> None:
    """Field 5 -1, field 8 16: each job that ran is sized 16 (its request), and the log's
    notes say so (before: silent). Those cancelled before they ran are not counted."""
    body = "".join(swf_line(n, 600 * n, alloc=-1, procs=16, run=(-1 if n % 2 else 600),
                         status=(5 if n % 2 else 1)) for n in range(1, 200))
    log = read_swf(write_swf(tmp_path, "asked", "; MaxProcs: 64\n" + body))
    assert {j.procs for j in log.jobs} == {16}
    [note] = [n for n in log.notes if "no allocated processors" in n]
    assert note.startswith("99 job(s)") and "e.g. job 2" in note and "field 8" in note


def test_jobs_cancelled_before_they_started_are_not_replayed(tmp_path: Path) -> None:
    """Status 5 with wait and run -1 (cancelled while waiting): no job of the replay; the
    others of the window are, their unknown waits simulated and said."""
    body = "".join(swf_line(n, 600 * n, wait=-1, run=(-1 if n % 3 == 0 else 900),
                         status=(5 if n % 3 == 0 else 1)) for n in range(1, 300))
    log = read_swf(write_swf(tmp_path, "cancelled", "; MaxProcs: 64\n" + body))
    plan = plan_replay(log, cluster("alpha"), start=600, duration_s=100, scale=60)
    numbers = {int(j.name.rsplit("-", 1)[1]) for j in plan.jobs}
    assert numbers and not {n for n in numbers if n % 3 == 0}
    assert any("no recorded wait" in n for n in plan.notes)


def test_a_checkpointed_jobs_parts_replay_once_each_not_as_extra_jobs(tmp_path: Path) -> None:
    """Job 50's parts (status 2, 3 and 4) and its summary (status 1): replayed as its
    parts, one after another, not the summary on top of them."""
    parts = (swf_line(50, 30000, run=1000, status=2) + swf_line(50, 32000, run=1000, status=3)
             + swf_line(50, 34000, run=500, status=4) + swf_line(50, 30000, run=2500, status=1))
    text = ("; MaxProcs: 64\n" + "".join(swf_line(n, 600 * n) for n in range(1, 50)) + parts
            + "".join(swf_line(n, 600 * n) for n in range(51, 100)))
    log = read_swf(write_swf(tmp_path, "parts", text))
    plan = plan_replay(log, cluster("alpha"), start=29_500, duration_s=120, scale=60)
    fifty = [j for j in plan.jobs if j.name.startswith("trace-arrive-50")]
    assert 1 <= len(fifty) <= 3
    assert sum(j.runtime_s for j in fifty) <= 2500 / 60 + 1


# ---- order, size, dependencies ------------------------------------------------------------

def test_a_log_where_time_goes_backwards_is_read_in_order_and_said(tmp_path: Path) -> None:
    """Job 150 submitted at 100 s, after job 149 at 89,400 s (SWF lists jobs by submit
    time): read in submit order, as its sorted copy plans, and said with the jobs
    (before: reordered silently)."""
    lines = [swf_line(n, 600 * n if n != 150 else 100) for n in range(1, 300)]
    log = read_swf(write_swf(tmp_path, "back", "; MaxProcs: 64\n" + "".join(lines)))
    [note] = [n for n in log.notes if "submitted before the line above" in n]
    assert note.startswith("1 job line(s)") and "job 150 at 100 s after job 149" in note
    assert log.jobs[0].number == 150
    ordered = sorted(lines, key=lambda t: float(t.split()[1]))
    (tmp_path / "copy").mkdir()
    same = read_swf(write_swf(tmp_path / "copy", "back", "; MaxProcs: 64\n" + "".join(ordered)))
    assert not [n for n in same.notes if "above them" in n]
    assert plan_replay(log, cluster("alpha"), start=100, seed=2).jobs == plan_replay(
        same, cluster("alpha"), start=100, seed=2).jobs


def test_a_job_larger_than_maxprocs_makes_the_machine_its_size_said(tmp_path: Path) -> None:
    body = "".join(swf_line(n, 600 * n, procs=(128 if n % 50 == 0 else 8))
                   for n in range(1, 300))
    log = read_swf(write_swf(tmp_path, "big", "; MaxProcs: 64\n" + body))
    assert log.max_procs == 128
    assert any("header says MaxProcs 64" in n for n in log.notes)


def test_think_times_longer_than_the_gap_wait_the_gap_said(tmp_path: Path) -> None:
    """Each job follows the one before (field 17) with a think time of 120 s (field 18),
    though it was submitted 100 s after its predecessor ended: each waits the gap."""
    body = "".join(swf_line(n, 600 * n, run=500, preceding=(n - 1 if n > 1 else -1),
                         think=(120 if n > 1 else -1)) for n in range(1, 200))
    log = read_swf(write_swf(tmp_path, "think", "; MaxProcs: 64\n" + body))
    plan = plan_replay(log, cluster("alpha"), start=600, duration_s=600, scale=60)
    followers = [j for j in plan.jobs if j.after]
    assert followers and all(abs(j.think_s - 100 / 60) < 0.01 for j in followers)
    assert any("think time (field 18)" in n and "waits the gap" in n for n in plan.notes)


# ---- size of the log and of its window ----------------------------------------------------

def test_a_log_of_one_job_replays_it_and_scores_nothing_said(tmp_path: Path) -> None:
    path = write_swf(tmp_path, "one", "; MaxProcs: 64\n" + swf_line(1, 0, wait=60))
    log = read_swf(path)
    plan = plan_replay(log, cluster("alpha"), seed=1, duration_s=600)
    assert [j.name for j in plan.jobs] == ["trace-arrive-1"]
    assert any("past the log's last submission" in n for n in plan.notes)
    r = prediction.run_log(path, moments=3, seed=1)
    assert r["moments"] == 0 and r["note"]


def test_a_window_where_the_machine_was_idle_carries_nothing_said(tmp_path: Path) -> None:
    """Twenty jobs in the first minutes, twenty four months later: a window between them
    carries no job, and the plan says so (no jobs invented)."""
    body = ("".join(swf_line(n, 60 * n) for n in range(1, 21))
            + "".join(swf_line(n, 10_000_000 + 60 * n) for n in range(21, 41)))
    log = read_swf(write_swf(tmp_path, "idle", "; MaxProcs: 64\n" + body))
    plan = plan_replay(log, cluster("alpha"), start=500_000, duration_s=600)
    assert plan.jobs == []
    assert any("no job of the log ran, waited or arrived in this window" in n
               for n in plan.notes)
