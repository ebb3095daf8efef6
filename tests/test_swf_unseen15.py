"""The fifteenth sweep of SWF logs: small logs written here the way other logs of the
Parallel Workloads Archive are (MaxNodes without MaxProcs, both, or neither; MaxRuntime,
MaxJobs and MaxRecords; Note lines saying what sizes count; TimeZoneString and
UnixStartTime variations; Queues and Partitions lines; logs with no requested time at all;
requested processors -1 beside allocated ones; statuses 0, 1, 5 and -1; preceding jobs and
think times; runs of 0 s; gzip; a window with no jobs and one past the log's end; a cleaned
log beside its raw one with a flurry). Each is read by `read_swf` and planned by
`plan_replay`, or run through `diamond testbed load --trace ... --dry-run`; no test bed.

Faults found and fixed, each shown by a test here that failed before:
- the submissions in a window that are no load (never ran, ran 0 s) were dropped and
  nothing said: a plan now counts them by reason (`skipped`) and says so in its notes;
- a log with no requested time but a MaxRuntime header gave each job the site's default
  partition limit (a day: 60 days of log time at --scale 60): each now asks for the log's
  MaxRuntime, its center's limit, as the prediction benchmark already read it; and where
  the log records no waits, the simulated scheduler planned such a job on its run (perfect
  foresight, backfilling it where the center's could not): it plans on MaxRuntime now;
- a header note saying the jobs' sizes count nodes ("job sizes are given in nodes") was
  not read: a log of MaxNodes 16, MaxProcs 64 whose jobs held 8 nodes at once was replayed
  as 8 of 64 processors, a quarter of its load; and its Partition lines, read in
  processors, sized a partition of 12 nodes as 48 (the whole machine then);
- a raw log's flurry (a burst of one user's jobs, which the archive's cleaned logs remove)
  was replayed and nothing said: a plan now names the user and the share.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from sweep_helpers import dry_run_plan, load_refused, save_swf, traced_memory

from diamond_jupyter.cli import main as cli
from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.load import history_state
from diamond_jupyter.testbed.trace import one_partition, plan_replay, read_swf

ALPHA = cluster("alpha")  # 4 nodes of 8 CPUs: 32 CPUs; batch 1 day (default), debug 60 min
DAY = 86_400


def _job(number: int, submit: float, *, wait: float = 30, run: float = 1200,
         procs: int = 16, req_procs: int | None = None, req: float = 3600, status: int = 1,
         user: int = 3, queue: int = 1, partition: int = 1, preceding: int = -1,
         think: float = -1) -> str:
    """One 18-field job line as the archive writes it (memory and CPU time unknown)."""
    fields = (number, f"{submit:.10g}", f"{wait:.10g}", f"{run:.10g}", procs, -1, -1,
              procs if req_procs is None else req_procs, f"{req:g}", -1, status, user, 2, -1,
              queue, partition, preceding, f"{think:g}")
    return " ".join(map(str, fields)) + "\n"


def _jobs(count: int, *, every: float = 900, first: int = 1, at: float = 0, **kw) -> str:
    return "".join(_job(n, at + every * (n - first + 1), **kw)
                   for n in range(first, first + count))


# ---- machine size: MaxNodes, MaxProcs, both, neither ----------------------------------------

def test_max_nodes_alone_is_the_machine_in_the_jobs_count(tmp_path: Path) -> None:
    """A log of a machine of single-processor nodes gives MaxNodes and no MaxProcs."""
    log = read_swf(save_swf(tmp_path / "n.swf", "; MaxNodes: 16\n" + _jobs(300, procs=4)))
    assert log.max_procs == 16
    plan = plan_replay(log, ALPHA, start=DAY, seed=1)
    # 4 of 16: a quarter of alpha's 32 CPUs, one node of 8
    assert {(j.nodes, j.cpus_per_node) for j in plan.jobs} == {(1, 8)}


def test_both_headers_and_jobs_in_processors_keep_max_procs(tmp_path: Path) -> None:
    header = "; MaxNodes: 16\n; MaxProcs: 64\n; Note: job sizes are in processors\n"
    log = read_swf(save_swf(tmp_path / "p.swf", header + _jobs(300, procs=16)))
    assert log.max_procs == 64
    assert not any("count nodes" in n for n in log.notes)


def test_a_note_that_sizes_count_nodes_makes_the_machine_its_nodes(tmp_path: Path) -> None:
    """MaxNodes 16, MaxProcs 64, "job sizes are given in nodes": jobs of 4 nodes, two at
    once, load half the machine, not 8 of its 64 processors (before: 64, utilization a
    quarter of the log's)."""
    header = "; MaxNodes: 16\n; MaxProcs: 64\n; Note: job sizes are given in nodes\n"
    log = read_swf(save_swf(tmp_path / "nodes.swf", header + _jobs(300, procs=4, wait=0)))
    assert log.max_procs == 16
    assert any("sizes count nodes" in n and "MaxNodes, 16 nodes" in n for n in log.notes)
    plan = plan_replay(log, ALPHA, start=DAY, seed=1)
    assert plan.log_utilization == pytest.approx(1200 * 4 / 900 / 16)
    assert plan.site_utilization == pytest.approx(plan.log_utilization, rel=0.05)
    assert {j.nodes * j.cpus_per_node for j in plan.jobs} == {8}  # 4 of 16: a quarter


@pytest.mark.parametrize("note, machine", [
    ("The processors field is actually nodes", 16),
    ("field 5 counts nodes", 16),
    ("allocated processors are in units of nodes", 16),
    ("the processor count is the number of nodes", 16),
    ("processors are grouped in nodes of 4", 64),
    ("each node has 4 processors; job sizes are in processors", 64),
    ("jobs are allocated in partitions of 4 nodes", 64),
])
def test_what_a_note_says_sizes_count(tmp_path: Path, note: str, machine: int) -> None:
    header = f"; MaxNodes: 16\n; MaxProcs: 64\n; Note: {note}\n"
    log = read_swf(save_swf(tmp_path / "say.swf", header + _jobs(300, procs=4, wait=0)))
    assert log.max_procs == machine


def test_max_nodes_with_a_note_of_processors_a_node_and_sizes_in_nodes(
        tmp_path: Path) -> None:
    """MaxNodes alone, its note giving processors a node and that counts are nodes: the
    machine is its 16 nodes, not the 64 processors the per-node count makes."""
    header = ("; MaxNodes: 16\n"
              "; Note: processor counts are nodes, each node has 4 processors\n")
    log = read_swf(save_swf(tmp_path / "nn.swf", header + _jobs(300, procs=4)))
    assert log.max_procs == 16


@pytest.mark.parametrize("number, nodes", [("1", 12), ("batch", 12), ("2", 4)])
def test_a_partition_of_a_log_counted_in_nodes_is_its_nodes(tmp_path: Path, number: str,
                                                            nodes: int) -> None:
    """Sizes in nodes (of 4 processors), Partition lines in nodes and in processors: each
    partition is replayed on its own nodes (before: 48 and 16 "processors", the batch
    partition taken as the whole 16-node machine, debug as 16 nodes of 4)."""
    header = ("; MaxNodes: 16\n; MaxProcs: 64\n; Note: job sizes are given in nodes\n"
              "; Partition: 1 batch (12 nodes)\n; Partition: 2 debug (16 processors)\n")
    body = "".join(_job(n, 900 * n, wait=0, procs=4 if n % 2 else 2,
                        partition=1 if n % 2 else 2) for n in range(1, 301))
    log = read_swf(save_swf(tmp_path / "np.swf", header + body))
    assert log.partitions == ((1, "batch", 12), (2, "debug", 4))
    part = one_partition(log, number)
    assert part.max_procs == nodes
    assert not any("more than the whole machine" in n for n in part.notes)


def test_neither_header_sizes_the_machine_by_what_ran_at_once(tmp_path: Path) -> None:
    """No MaxNodes nor MaxProcs: two jobs of 16 at once are the machine's 32."""
    log = read_swf(save_swf(tmp_path / "none.swf", _jobs(300, procs=16)))
    assert log.max_procs == 32


def test_a_node_note_whose_jobs_exceed_max_nodes_keeps_max_procs(tmp_path: Path) -> None:
    """A note says nodes, yet jobs of 32 exceed MaxNodes 16: the note is not taken."""
    header = "; MaxNodes: 16\n; MaxProcs: 64\n; Note: processors are nodes\n"
    log = read_swf(save_swf(tmp_path / "over.swf", header + _jobs(300, procs=32)))
    assert log.max_procs == 64


# ---- MaxRuntime and logs without requested times --------------------------------------------

def test_no_request_asks_for_the_logs_max_runtime(tmp_path: Path) -> None:
    """Field 9 is -1 on every line, MaxRuntime 7200: each job asks the center's limit,
    7200 s = 2 min at --scale 60 (before: alpha's default partition's 1440 min)."""
    log = read_swf(save_swf(tmp_path / "mr.swf", "; MaxProcs: 64\n; MaxRuntime: 7200\n"
                            + _jobs(300, req=-1)))
    assert log.max_runtime == 7200
    plan = plan_replay(log, ALPHA, start=DAY, seed=1)
    assert plan.jobs and {j.walltime_min for j in plan.jobs} == {2}
    assert {j.partition for j in plan.jobs} == {None}
    assert any("asks for the log's MaxRuntime (7200 s" in n and "2 min at --scale 60" in n
               for n in plan.notes)


def test_a_run_past_max_runtime_gets_its_run(tmp_path: Path) -> None:
    """MaxRuntime 600, runs of 1200 s: a center let them run, their limit is their run."""
    log = read_swf(save_swf(tmp_path / "past.swf", "; MaxProcs: 64\n; MaxRuntime: 600\n"
                            + _jobs(300, req=-1)))
    plan = plan_replay(log, ALPHA, start=DAY, seed=1)
    assert {j.walltime_min for j in plan.jobs if j.name.startswith("trace-arrive")} == {1}
    assert all(j.runtime_s <= j.walltime_min * 60 for j in plan.jobs)


def test_no_request_and_no_max_runtime_gets_the_partition_limit_and_says_it(
        tmp_path: Path, capsys) -> None:
    path = save_swf(tmp_path / "noreq.swf", "; MaxProcs: 64\n" + _jobs(300, req=-1))
    trace = dry_run_plan(capsys, path, "--start", str(DAY))
    [note] = [n for n in trace["notes"] if "have no requested time" in n]
    assert "(the default 1440 min)" in note


@pytest.mark.parametrize("max_runtime, running, queued", [
    ("; MaxRuntime: 3600\n", 1, 2),  # job 3, planned on an hour, waits behind job 2
    ("", 2, 1),  # planned on its run of 100 s, it backfills before job 2's reservation
])
def test_unknown_waits_are_simulated_on_max_runtime_where_no_request(
        tmp_path: Path, max_runtime: str, running: int, queued: int) -> None:
    """No waits, no requests (-1): job 1 holds 48 of 64 processors for 1000 s, job 2 needs
    all 64, job 3 needs 16 for 100 s. The simulated scheduler plans job 3 on the log's
    MaxRuntime, as the center's did: it ends after job 2's reserved start and may not
    backfill (before: planned on its run, it started at once)."""
    lines = (_job(1, 1000, wait=-1, run=1000, procs=48, req=-1)
             + _job(2, 1010, wait=-1, run=100, procs=64, req=-1)
             + _job(3, 1020, wait=-1, run=100, procs=16, req=-1)
             + _jobs(50, first=4, at=3000, wait=-1, run=100, procs=2, req=-1))
    log = read_swf(save_swf(tmp_path / "easy.swf", "; MaxProcs: 64\n" + max_runtime + lines))
    plan = plan_replay(log, ALPHA, start=1050, seed=1, duration_s=600)
    assert (plan.running_at_start, plan.queued_at_start) == (running, queued)
    [note] = [n for n in plan.notes if "no recorded wait" in n]
    assert ("by their requested times (else the log's MaxRuntime, 3600 s)" in note) == bool(
        max_runtime)


def test_requests_given_are_kept_beside_max_runtime(tmp_path: Path) -> None:
    log = read_swf(save_swf(tmp_path / "both.swf", "; MaxProcs: 64\n; MaxRuntime: 86400\n"
                            + _jobs(300, req=3600)))
    plan = plan_replay(log, ALPHA, start=DAY, seed=1)
    assert {j.walltime_min for j in plan.jobs} == {1}  # 3600 s at --scale 60, not 24 min
    assert not any("no requested time" in n for n in plan.notes)


def test_history_jobs_without_a_request_ask_for_max_runtime(tmp_path: Path) -> None:
    log = read_swf(save_swf(tmp_path / "hist.swf", "; MaxProcs: 64\n; MaxRuntime: 7200\n"
                            + _jobs(300, req=-1)))
    plan = plan_replay(log, ALPHA, start=DAY, seed=1, history_s=600)
    assert plan.history and {h.walltime_min for h in plan.history} == {2}


# ---- MaxJobs and MaxRecords: cleaned and raw logs -------------------------------------------

def test_a_raw_log_shorter_than_its_max_records_may_be_cut_off(tmp_path: Path) -> None:
    log = read_swf(save_swf(tmp_path / "raw.swf", "; MaxJobs: 400\n; MaxRecords: 400\n"
                            "; MaxProcs: 64\n" + _jobs(300)))
    assert any("MaxRecords 400, the file has 300 job lines: it may be cut off" in n
               for n in log.notes)


def test_a_cleaned_log_shorter_than_its_max_records_is_not_cut_off(tmp_path: Path) -> None:
    header = ("; MaxJobs: 400\n; MaxRecords: 400\n; MaxProcs: 64\n"
              "; Note: THIS IS A CLEANED VERSION OF THE LOG!\n")
    log = read_swf(save_swf(tmp_path / "cln.swf", header + _jobs(300)))
    assert not any("cut off" in n for n in log.notes)


def test_more_lines_than_max_records_are_all_read_and_said(tmp_path: Path) -> None:
    log = read_swf(save_swf(tmp_path / "more.swf", "; MaxRecords: 200\n; MaxProcs: 64\n"
                            + _jobs(300)))
    assert len(log.jobs) == 300
    assert any("MaxRecords 200, the file has 300 job lines" in n for n in log.notes)


def test_a_raw_log_with_a_flurry_replays_it_and_says_so(tmp_path: Path) -> None:
    """A flurry: user 99, one job in six of the log, submits 200 half-minute jobs, one a
    minute, within the window (20 users share the rest). The cleaned log, as the archive
    filters it, lacks them; both read and plan, the raw window has the 200 more arrivals,
    loads the site as the log, and says the flurry (before: nothing said)."""
    flurry = "".join(_job(2000 + k, DAY + 600 + 60 * k, wait=0, run=30, procs=1, user=99)
                     for k in range(200))
    body = "".join(_job(n, 900 * n, user=n % 20 + 1) for n in range(1, 1001))
    raw_lines = sorted((body + flurry).splitlines(True), key=lambda x: float(x.split()[1]))
    raw = read_swf(save_swf(tmp_path / "x.swf", "; MaxProcs: 64\n" + "".join(raw_lines)))
    cln = read_swf(save_swf(tmp_path / "x-cln.swf", "; MaxProcs: 64\n"
                            "; Note: THIS IS A CLEANED VERSION OF THE LOG!\n" + body))
    a = plan_replay(raw, ALPHA, start=DAY, seed=1)
    b = plan_replay(cln, ALPHA, start=DAY, seed=1)
    assert a.arrivals_in_log == b.arrivals_in_log + 200
    assert a.log_utilization > b.log_utilization
    assert a.site_utilization == pytest.approx(a.log_utilization, rel=0.05)
    assert ("user 99 (field 12) submitted 200 of the window's 240 arrivals, 16.7% of the "
            "whole log's jobs: a flurry") in " ".join(a.notes)
    assert not any("flurry" in n for n in b.notes)


def test_a_log_named_cln_is_taken_as_cleaned(tmp_path: Path) -> None:
    """The same raw lines under a -cln name: the archive's cleaned log, no flurry said."""
    flurry = "".join(_job(2000 + k, DAY + 600 + 60 * k, wait=0, run=30, procs=1, user=99)
                     for k in range(200))
    body = "".join(_job(n, 900 * n, user=n % 20 + 1) for n in range(1, 1001))
    lines = sorted((body + flurry).splitlines(True), key=lambda x: float(x.split()[1]))
    log = read_swf(save_swf(tmp_path / "X-2001-1.1-cln.swf", "; MaxProcs: 64\n" + "".join(lines)))
    assert log.cleaned
    assert not any("flurry" in n for n in plan_replay(log, ALPHA, start=DAY, seed=1).notes)


def test_a_log_of_one_user_is_no_flurry(tmp_path: Path) -> None:
    log = read_swf(save_swf(tmp_path / "one.swf", "; MaxProcs: 64\n"
                            + _jobs(2000, every=60, run=30, procs=1)))
    plan = plan_replay(log, ALPHA, start=DAY, seed=1)
    assert plan.arrivals_in_log >= 100 and not any("flurry" in n for n in plan.notes)


# ---- statuses, zero runs, sizes by request ---------------------------------------------------

def test_submissions_that_are_no_load_are_counted_by_reason(tmp_path: Path) -> None:
    """Every fifth job cancelled before it started (run -1, status 5), every seventh ran
    0 s (status 0): they are not replayed, and the plan counts them (before: dropped,
    nothing said)."""
    text = "; MaxProcs: 64\n" + "".join(
        _job(n, 900 * n, run=-1 if n % 5 == 0 else 0 if n % 7 == 0 else 1200,
             status=5 if n % 5 == 0 else 0 if n % 7 == 0 else 1) for n in range(1, 301))
    plan = plan_replay(read_swf(save_swf(tmp_path / "c.swf", text)), ALPHA, start=DAY, seed=1)
    window = range(97, 137)  # submitted in [86400, 122400)
    never = [n for n in window if n % 5 == 0]
    zero = [n for n in window if n % 7 == 0 and n % 5]
    assert plan.skipped == {"no_run_time": len(never), "zero_run_time": len(zero)}
    assert plan.arrivals_in_log == len(window) - len(never) - len(zero)
    assert (f"{len(never) + len(zero)} of the 40 job(s) submitted in this window are not "
            f"replayed, being no load: {len(never)} never ran") in " ".join(plan.notes)
    assert f"e.g. job {never[0]})" in " ".join(plan.notes)
    assert f"{len(zero)} ran 0 s (field 4 is 0; e.g. job {zero[0]})" in " ".join(plan.notes)


def test_the_cli_json_carries_the_skipped_counts(tmp_path: Path, capsys) -> None:
    text = "; MaxProcs: 64\n" + "".join(
        _job(n, 900 * n, run=0 if n % 2 else 1200) for n in range(1, 301))
    trace = dry_run_plan(capsys, save_swf(tmp_path / "z.swf", text), "--start", str(DAY),
                         "--duration", "600")
    assert trace["skipped"] == {"zero_run_time": 20}
    assert trace["arrivals_in_log"] == 20


def test_the_cli_text_says_what_it_skipped(tmp_path: Path, capsys) -> None:
    text = "; MaxProcs: 64\n" + "".join(
        _job(n, 900 * n, run=-1 if n == 100 else 1200, status=5 if n == 100 else 1)
        for n in range(1, 301))
    path = save_swf(tmp_path / "t.swf", text)
    assert cli(["testbed", "load", "--trace", str(path), "--site", "alpha", "--start",
                str(DAY), "--duration", "600", "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert ("alpha: 1 of the 40 job(s) submitted in this window are not replayed, being no "
            "load: 1 never ran (field 4, run time, is -1 or below: cancelled before it "
            "started, or not recorded; e.g. job 100)") in lines


def test_history_jobs_keep_how_they_ended(tmp_path: Path) -> None:
    """Statuses 0, 1, 5 and -1 before the window: failed, completed, cancelled (after it
    ran), and -1 (unknown) as a job that ran and nothing says failed."""
    statuses = (0, 1, 5, -1)
    text = "; MaxProcs: 64\n" + "".join(_job(n, 900 * n, status=statuses[n % 4])
                                         for n in range(1, 301))
    plan = plan_replay(read_swf(save_swf(tmp_path / "h.swf", text)), ALPHA, start=DAY, seed=1,
                       history_s=300)
    ended = {int(h.name.split("-")[2]): history_state(h.status) for h in plan.history}
    assert ended and all(state == {0: "FAILED", 1: "COMPLETED", 2: "CANCELLED",
                                   3: "COMPLETED"}[n % 4] for n, state in ended.items())


def test_a_running_job_of_no_size_is_counted_apart(tmp_path: Path) -> None:
    text = "; MaxProcs: 64\n" + "".join(
        _job(n, 900 * n, procs=-1 if n == 100 else 16) for n in range(1, 301))
    log = read_swf(save_swf(tmp_path / "s.swf", text))
    plan = plan_replay(log, ALPHA, start=DAY, seed=1)
    assert plan.skipped == {"no_processors": 1}
    assert any("1 give no processor count (fields 5 and 8 are 0 or -1; e.g. job 100)" in n
               for n in plan.notes)


def test_a_window_where_every_job_ran_skips_nothing(tmp_path: Path) -> None:
    plan = plan_replay(read_swf(save_swf(tmp_path / "ok.swf", "; MaxProcs: 64\n" + _jobs(300))),
                       ALPHA, start=DAY, seed=1)
    assert plan.skipped == {}
    assert not any("not replayed" in n for n in plan.notes)


def test_status_minus_one_jobs_replay_as_jobs_that_ran(tmp_path: Path) -> None:
    log = read_swf(save_swf(tmp_path / "u.swf", "; MaxProcs: 64\n" + _jobs(300, status=-1)))
    assert not any("status SWF does not define" in n for n in log.notes)
    plan = plan_replay(log, ALPHA, start=DAY, seed=1)
    assert plan.arrivals_kept == 40 and plan.skipped == {}


def test_requested_processors_unknown_beside_allocated_ones(tmp_path: Path) -> None:
    """Field 8 -1, field 5 given (a log that kept what ran only): sized by field 5."""
    log = read_swf(save_swf(tmp_path / "a.swf", "; MaxProcs: 64\n"
                            + _jobs(300, procs=16, req_procs=-1)))
    assert {(j.procs, j.by_request) for j in log.jobs} == {(16, False)}
    assert log.notes == ()


@pytest.mark.parametrize("field, word, named", [
    (9, "1:00:00", "field 9 (requested time) is '1:00:00'"),
    (11, "C", "field 11 (status) is 'C'"),
    (17, "101a", "field 17 (preceding job) is '101a'"),
])
def test_a_value_no_swf_converter_writes_names_its_line_and_field(
        tmp_path: Path, field: int, word: str, named: str) -> None:
    fields = _job(50, 45_000).split()
    fields[field - 1] = word
    path = save_swf(tmp_path / "bad.swf", "; MaxProcs: 64\n" + _jobs(49) + " ".join(fields)
                    + "\n" + _jobs(10, first=51, at=45_000))
    with pytest.raises(BadInput) as err:
        read_swf(path)
    assert str(err.value).startswith(f"{path}:51: {named}")


# ---- Queues, Partitions, Note lines ----------------------------------------------------------

def test_queues_and_partitions_lines_do_not_change_the_machine(tmp_path: Path) -> None:
    header = ("; MaxProcs: 64\n; MaxQueues: 3\n; Queues: 1 batch, 2 debug, 3 long\n"
              "; Queue: 1 batch 86400\n; MaxPartitions: 1\n; Partitions: 1 all\n"
              "; Note: queue 0 is interactive\n")
    log = read_swf(save_swf(tmp_path / "q.swf", header + _jobs(300, queue=2)))
    assert log.max_procs == 64 and len(log.jobs) == 300
    assert log.partitions == ((1, "all", 0),)


def test_a_note_line_with_numbers_is_no_header_field(tmp_path: Path) -> None:
    header = ("; MaxProcs: 64\n; Note: 128 jobs removed by the cleaning (see the site)\n"
              "; Note: MaxProcs was 32 until 1999\n")
    assert read_swf(save_swf(tmp_path / "note.swf", header + _jobs(300))).max_procs == 64


# ---- UnixStartTime and TimeZoneString -------------------------------------------------------

@pytest.mark.parametrize("header, unix", [
    ("; UnixStartTime: 1104537600\n; TimeZoneString: Europe/Stockholm\n", 1_104_537_600),
    ("; TimeZoneString: US/Pacific\n; StartTime: Sat Jan 01 00:00:00 PST 2005\n",
     1_104_566_400),
    ("; StartTime: 2005-01-01 00:00:00 UTC\n", 1_104_537_600),
    ("; TimeZoneString: America/Los_Angeles\n", None),  # a zone, no moment
])
def test_log_second_zero_from_the_header(tmp_path: Path, header: str, unix: int | None) -> None:
    log = read_swf(save_swf(tmp_path / "tz.swf", "; MaxProcs: 64\n" + header + _jobs(300)))
    assert log.unix_start == unix


def test_a_start_time_in_an_unknown_zone_is_said(tmp_path: Path) -> None:
    header = ("; MaxProcs: 64\n; TimeZoneString: Mars/Olympus\n"
              "; StartTime: Sat Jan  1 00:00:00 2005\n")
    log = read_swf(save_swf(tmp_path / "mars.swf", header + _jobs(300)))
    assert log.unix_start is None
    assert any("nor a known TimeZoneString" in n for n in log.notes)


def test_a_unix_start_given_as_start_names_the_log_second(tmp_path: Path, capsys) -> None:
    path = save_swf(tmp_path / "unix.swf", "; MaxProcs: 64\n; UnixStartTime: 1104537600\n"
                    + _jobs(300))
    err = load_refused(capsys, "--trace", str(path), "--site", "alpha",
                       "--start", str(1_104_537_600 + DAY))
    assert "is outside the log unix" in err and f"--start {DAY}" in err


# ---- dependent jobs ---------------------------------------------------------------------------

def test_a_dependent_arrival_waits_for_its_predecessor_and_think_time(tmp_path: Path) -> None:
    """Job 102 names 101 (field 17), submitted 600 s after 101 ended (think time 600)."""
    lines = _jobs(100) + _job(101, 90_900, wait=0) + _job(
        102, 90_900 + 1200 + 600, wait=0, preceding=101, think=600) + _jobs(
        100, first=103, at=92_700 - 900)
    plan = plan_replay(read_swf(save_swf(tmp_path / "d.swf", "; MaxProcs: 64\n" + lines)),
                       ALPHA, start=DAY, seed=1)
    [dep] = [j for j in plan.jobs if j.name == "trace-arrive-102"]
    assert dep.after == "trace-arrive-101" and dep.think_s == 10


# ---- the window -----------------------------------------------------------------------------

def test_a_window_with_no_jobs_is_said_and_submits_nothing(tmp_path: Path, capsys) -> None:
    text = "; MaxProcs: 64\n" + _jobs(100) + _jobs(100, first=101, at=500_000)
    trace = dry_run_plan(capsys, save_swf(tmp_path / "gap.swf", text), "--start", "200000")
    assert trace["jobs"] == 0 and trace["skipped"] == {}
    assert any("no job of the log ran, waited or arrived in this window" in n
               for n in trace["notes"])


def test_the_logs_last_job_before_the_windows_end_is_said(tmp_path: Path) -> None:
    log = read_swf(save_swf(tmp_path / "end.swf", "; MaxProcs: 64\n" + _jobs(100)))
    plan = plan_replay(log, ALPHA, start=80_000, seed=1, duration_s=600)
    assert plan.arrivals_in_log == 12  # 80,100 ... 90,000
    assert any("past the log's last submission" in n and "after 167 s of the replay" in n
               for n in plan.notes)


def test_a_start_outside_the_log_is_refused_naming_its_span(tmp_path: Path, capsys) -> None:
    path = save_swf(tmp_path / "span.swf", "; MaxProcs: 64\n" + _jobs(100))
    err = load_refused(capsys, "--trace", str(path), "--site", "alpha", "--start", "1e7")
    assert err == ("diamond: --start 10000000 is outside the log span (its jobs were submitted "
                   "between 900 and 90000 s)")


def test_a_trace_without_its_site_is_refused(tmp_path: Path, capsys) -> None:
    path = save_swf(tmp_path / "one.swf", "; MaxProcs: 64\n" + _jobs(10))
    err = load_refused(capsys, "--trace", str(path))
    assert err == "diamond: each --trace needs its --site (got 1 traces and 0 sites)"


# ---- large logs, gzip ------------------------------------------------------------------------

def test_a_large_gzip_log_is_read_as_columns_and_planned_by_its_window(
        tmp_path: Path) -> None:
    """60,000 jobs, gzip: read line by line into columns (some 70 bytes a job, where
    its lines as strings take some 100 and job objects some 300), and a plan makes objects
    of its window's jobs only."""
    body = "".join(_job(n, 60 * n, wait=0, run=600, procs=4) for n in range(1, 60_001))
    path = save_swf(tmp_path / "big.swf.gz", gzip.compress(("; MaxProcs: 64\n" + body).encode()))
    with traced_memory() as memory:
        log = read_swf(path)
        plan = plan_replay(log, ALPHA, start=1_800_000, seed=1, duration_s=60)
    assert len(log.table) == 60_000
    assert memory.peak < 120 * 60_000  # neither the text held whole nor 60,000 job objects
    assert "jobs" not in log.__dict__  # no object of every job was made
    # submitted 1,799,460 to 1,799,940 s (600 s each) run at 1,800,000; 60 arrive in an hour
    assert plan.arrivals_in_log == 60 and plan.running_at_start == 9
