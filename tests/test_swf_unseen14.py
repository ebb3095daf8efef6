"""The fourteenth sweep of SWF logs: 40 small logs written here the way the Parallel
Workloads Archive's logs are (full archive headers with UnixStartTime, TimeZoneString and
Note lines, -1 in every field a converter did not know, jobs of no runtime, runs past their
request, statuses 0, 1 and 5, numbered queues and partitions, preceding jobs and think
times), written the ways they reach users (gzip of many members, tabs, trailing blanks,
Windows and old Mac line ends, a byte-order mark, Latin-1 comments, a header and no job).
Each is read by `read_swf` and planned by `plan_replay` (`diamond testbed load --trace`)
or `plan_replays` (`python -m benchmarks.placement --trace`); no test bed.

Fault found and fixed, shown by a test here that failed before: a job running at the
window's start whose preceding job (field 17) was running then too was held until that job
ended: the queue rebuilt at the window's start had one running job fewer than the log, and
that job queued, nothing said. It now runs from the start (the log started it before that
end), said in the notes.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from sweep_helpers import save_swf

from diamond_jupyter.cli import main as cli
from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import one_partition, plan_replay, plan_replays, read_swf

ALPHA = cluster("alpha")  # 4 nodes of 8 CPUs: 32 CPUs, default partition 1 day
DAY = 86_400


def _job(number: int, submit: float, *, wait: float = 30, run: float = 1200,
         procs: int | str = 16, req: float | str = 3600, status: int = 1, user: int = 3,
         queue: int = 1, partition: int = 1, preceding: int = -1, think: float = -1,
         sep: str = " ") -> str:
    """One 18-field job line as the archive writes it (memory and CPU time unknown)."""
    fields = (number, f"{submit:g}", f"{wait:g}", f"{run:g}", procs, -1, -1, procs, req, -1,
              status, user, 2, -1, queue, partition, preceding, f"{think:g}")
    return sep.join(map(str, fields)) + "\n"


def _jobs(count: int, *, every: float = 900, first: int = 1, at: float = 0, **kw) -> str:
    return "".join(_job(n, at + every * (n - first + 1), **kw)
                   for n in range(first, first + count))


ARCHIVE_HEADER = (
    "; Version: 2.2\n; Computer: Example Cluster 2000\n; Installation: Test Center\n"
    "; Acknowledge: the center's operators\n; Information: http://example.org/logs\n"
    "; Conversion: by the sweep, from accounting records\n; MaxJobs: 300\n"
    "; MaxRecords: 300\n; Preemption: No\n; UnixStartTime: 1262304000\n"
    "; TimeZone: 3600\n; TimeZoneString: Europe/Berlin\n"
    "; StartTime: Fri Jan 01 01:00:00 CET 2010\n; EndTime: Mon Jan 04 04:00:00 CET 2010\n"
    "; MaxNodes: 16\n; MaxProcs: 64\n; MaxRuntime: 86400\n; MaxMemory: -1\n"
    "; AllowOveruse: No\n; MaxQueues: 2\n; Queues: 1 batch, 2 debug\n"
    "; MaxPartitions: 1\n; Partitions: 1 all\n"
    "; Note: jobs that were cancelled before they started have a run time of -1\n"
    "; Note: 4 processors per node\n;\n")


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    """The reference log: the archive header, 300 jobs of 16 of 64 processors."""
    return save_swf(tmp_path / "plain.swf", ARCHIVE_HEADER + _jobs(300))


# ---- archive headers ------------------------------------------------------------------------

def test_a_full_archive_header_gives_the_machine_and_its_start(plain: Path) -> None:
    log = read_swf(plain)
    assert (log.max_procs, log.unix_start, len(log.jobs)) == (64, 1_262_304_000, 300)
    assert log.notes == ()
    plan = plan_replay(log, ALPHA, start=DAY, seed=1)
    # 16 of 64 processors: a quarter of alpha's 32 CPUs, one node of 8
    assert {(j.nodes, j.cpus_per_node) for j in plan.jobs} == {(1, 8)}


def test_max_nodes_with_a_note_of_cores_per_node_sizes_the_machine(tmp_path: Path) -> None:
    log = read_swf(save_swf(tmp_path / "nodes.swf", "; MaxNodes: 8\n; Note: 8 cores per node\n"
                         + _jobs(300, procs=8)))
    assert log.max_procs == 64


def test_a_start_time_in_the_zone_of_its_time_zone_string(tmp_path: Path) -> None:
    """No UnixStartTime: the StartTime read in the TimeZoneString's zone (CET, UTC+1)."""
    header = ("; MaxProcs: 64\n; TimeZoneString: Europe/Berlin\n"
              "; StartTime: Fri Jan  1 00:00:00 CET 2010\n")
    log = read_swf(save_swf(tmp_path / "zone.swf", header + _jobs(300)))
    assert log.unix_start == 1_262_300_400


@pytest.mark.parametrize("name, data", [
    ("header.swf", ARCHIVE_HEADER),
    ("header.swf.gz", gzip.compress(ARCHIVE_HEADER.encode())),
    ("header_crlf.swf", ARCHIVE_HEADER.replace("\n", "\r\n")),
])
def test_a_header_and_no_job_is_refused_naming_the_file(tmp_path: Path, name: str,
                                                       data: str | bytes) -> None:
    path = save_swf(tmp_path / name, data)
    with pytest.raises(BadInput) as err:
        read_swf(path)
    assert str(err.value) == (f"the trace {path} has no job lines (Standard Workload Format "
                              "expected)")


# ---- -1 where a field is unknown ------------------------------------------------------------

def test_allocated_processors_unknown_are_sized_by_the_request(tmp_path: Path) -> None:
    """Field 5 -1 on every line, field 8 (requested) given: sized by the request."""
    lines = "".join(f"{n} {900 * n} 30 1200 -1 -1 -1 16 3600 -1 1 3 2 -1 1 1 -1 -1\n"
                    for n in range(1, 301))
    log = read_swf(save_swf(tmp_path / "req.swf", "; MaxProcs: 64\n" + lines))
    assert {(j.procs, j.by_request) for j in log.jobs} == {(16, True)}
    plan = plan_replay(log, ALPHA, start=DAY, seed=1)
    assert plan.jobs and {j.nodes * j.cpus_per_node for j in plan.jobs} == {8}


def test_unknown_waits_are_simulated_and_said(tmp_path: Path) -> None:
    log = read_swf(save_swf(tmp_path / "nowait.swf", "; MaxProcs: 64\n" + _jobs(300, wait=-1)))
    plan = plan_replay(log, ALPHA, start=DAY, seed=1)
    assert plan.jobs
    assert any("have no recorded wait" in n and "simulated" in n for n in plan.notes)


# ---- runtimes, requests and statuses --------------------------------------------------------

def test_jobs_of_zero_runtime_are_not_replayed(tmp_path: Path) -> None:
    text = "; MaxProcs: 64\n" + "".join(
        _job(n, 900 * n, run=0 if n % 3 == 0 else 1200) for n in range(1, 301))
    plan = plan_replay(read_swf(save_swf(tmp_path / "zero.swf", text)), ALPHA, start=DAY, seed=1)
    numbers = {int(j.name.split("-")[2]) for j in plan.jobs}
    assert numbers and not any(n % 3 == 0 for n in numbers)


@pytest.mark.parametrize("scale", [30.0, 60.0, 240.0])
def test_a_run_past_its_request_gets_its_run_and_requests_are_scaled(tmp_path: Path,
                                                                     scale: float) -> None:
    """Odd jobs asked 1 h and ran 20 min; even ones asked 10 min and ran 20 min."""
    text = "; MaxProcs: 64\n" + "".join(
        _job(n, 900 * n, req=3600 if n % 2 else 600) for n in range(1, 301))
    plan = plan_replay(read_swf(save_swf(tmp_path / "over.swf", text)), ALPHA, start=DAY,
                       seed=1, scale=scale)
    arrivals = [j for j in plan.jobs if j.name.startswith("trace-arrive-")]
    assert arrivals
    for j in arrivals:
        asked = 3600 if int(j.name.split("-")[2]) % 2 else 1200
        assert j.walltime_min == max(1, -(-asked // (scale * 60))), j
        assert j.runtime_s == pytest.approx(1200 / scale, abs=0.01)


def test_statuses_0_1_and_5_a_cancelled_job_that_never_ran_is_no_load(tmp_path: Path) -> None:
    """Status 1 completed, 0 failed (it ran), 5 cancelled: in the queue (run -1, wait -1)
    or while running (it ran, it is load). The history keeps each one's status."""
    lines = []
    for n in range(1, 301):
        if n % 4 == 0:
            lines.append(_job(n, 900 * n, wait=-1, run=-1, status=5))
        else:
            lines.append(_job(n, 900 * n, status=(1, 0, 5)[n % 4 - 1]))
    log = read_swf(save_swf(tmp_path / "status.swf", "; MaxProcs: 64\n" + "".join(lines)))
    plan = plan_replay(log, ALPHA, start=DAY, seed=1, history_s=600)
    numbers = {int(j.name.split("-")[2]) for j in plan.jobs}
    assert numbers and not any(n % 4 == 0 for n in numbers)
    assert {h.status for h in plan.history} == {0, 1, 5}
    assert not any(int(h.name.split("-")[2]) % 4 == 0 for h in plan.history)


def test_a_status_swf_does_not_define_is_said(tmp_path: Path) -> None:
    lines = _jobs(300)
    text = lines.replace(_job(7, 6300), _job(7, 6300, status=9))
    log = read_swf(save_swf(tmp_path / "odd.swf", "; MaxProcs: 64\n" + text))
    assert any("1 job line(s) have a status SWF does not define (line 8, field 11: 9" in n
               for n in log.notes)


# ---- numbered queues and partitions ---------------------------------------------------------

def test_numbered_queues_change_nothing(tmp_path: Path) -> None:
    """Field 15 numbers the queue (0-4 here): a replay of it is the replay of one queue."""
    numbered = "; MaxProcs: 64\n" + "".join(_job(n, 900 * n, queue=n % 5)
                                            for n in range(1, 301))
    one = "; MaxProcs: 64\n" + _jobs(300)
    a = plan_replay(read_swf(save_swf(tmp_path / "q.swf", numbered)), ALPHA, start=DAY, seed=2)
    (tmp_path / "one").mkdir()
    b = plan_replay(read_swf(save_swf(tmp_path / "one" / "q.swf", one)), ALPHA, start=DAY, seed=2)
    assert a.jobs == b.jobs


def test_numbered_partitions_without_lines_replay_one_of_them(tmp_path: Path) -> None:
    """Field 16 numbers three partitions the header does not describe: one replayed alone
    has its jobs only."""
    text = "; MaxProcs: 96\n" + "".join(_job(n, 900 * n, procs=8, partition=n % 3 + 1)
                                        for n in range(1, 301))
    log = read_swf(save_swf(tmp_path / "parts.swf", text))
    two = one_partition(log, "2")
    assert {j.partition for j in two.jobs} == {2} and len(two.jobs) == 100
    plan = plan_replay(two, ALPHA, start=DAY, seed=1)
    assert plan.jobs and all(int(j.name.split("-")[2]) % 3 == 1 for j in plan.jobs)


# ---- preceding jobs and think times ---------------------------------------------------------

def test_a_dependent_arrival_waits_for_its_predecessor_and_its_think_time(
        tmp_path: Path) -> None:
    """Chains of two: each even job submitted 120 s after the odd one before it ended."""
    lines = []
    for n in range(1, 301, 2):
        submit = 1800 * (n // 2 + 1)
        lines.append(_job(n, submit, wait=0, run=600, procs=4))
        lines.append(_job(n + 1, submit + 720, wait=0, run=600, procs=4, preceding=n,
                          think=120))
    log = read_swf(save_swf(tmp_path / "chain.swf", "; MaxProcs: 64\n" + "".join(lines)))
    plan = plan_replay(log, ALPHA, start=DAY, seed=1, scale=60)
    names = {j.name for j in plan.jobs}
    held = [j for j in plan.jobs if j.after is not None]
    assert held
    for j in held:
        number = int(j.name.split("-")[2])
        assert j.after.endswith(f"-{number - 1}") and j.after in names
        assert j.think_s == pytest.approx(2.0)


def test_a_job_running_beside_its_predecessor_at_the_window_start_runs(
        tmp_path: Path) -> None:
    """At t = 10,000: job 1 runs (to 20,000); job 2, whose field 17 names job 1, started at
    5,000 and runs beside it; job 3, naming job 1 too, waits. Before: job 2 was held until
    job 1 ended, so the replay began with one running job (the log has two) and job 2
    queued, nothing said. Now it runs from the start, said; job 3 still waits for job 1."""
    lines = [_job(1, 0, wait=0, run=20_000, req=30_000),
             _job(2, 5000, wait=0, run=20_000, req=30_000, preceding=1, think=0),
             _job(3, 6000, wait=16_000, run=3000, req=4000, preceding=1, think=0),
             *[_job(n, 10_000 + 600 * n, wait=0, run=600) for n in range(4, 60)]]
    log = read_swf(save_swf(tmp_path / "beside.swf", "; MaxProcs: 64\n" + "".join(lines)))
    plan = plan_replay(log, ALPHA, start=10_000, seed=1, duration_s=60)
    by_name = {j.name: j for j in plan.jobs}
    assert (plan.running_at_start, plan.queued_at_start) == (2, 1)
    assert by_name["trace-run-2"].after is None and by_name["trace-run-2"].at_s == 0
    assert by_name["trace-wait-3"].after == "trace-run-1"
    assert ("1 job(s) running at the window's start name as their preceding job (field 17) "
            "one still running then (e.g. trace-run-2 names trace-run-1): the log started "
            "them before that end, so they run from the start, not held for it") in plan.notes


def test_a_predecessor_before_the_window_holds_nothing(tmp_path: Path) -> None:
    """Dependents whose predecessors ended a day before the window: submitted as arrivals
    of their own."""
    early = _jobs(20, every=600)
    late = "".join(_job(n, DAY + 600 * (n - 20), preceding=(n - 21) % 20 + 1, think=DAY)
                   for n in range(21, 321))
    log = read_swf(save_swf(tmp_path / "late.swf", "; MaxProcs: 64\n" + early + late))
    plan = plan_replay(log, ALPHA, start=DAY + 6000, seed=1)
    assert plan.jobs and all(j.after is None for j in plan.jobs)


def test_a_job_naming_itself_as_its_predecessor_is_independent(tmp_path: Path) -> None:
    text = "; MaxProcs: 64\n" + "".join(_job(n, 900 * n, preceding=n, think=0)
                                        for n in range(1, 301))
    log = read_swf(save_swf(tmp_path / "self.swf", text))
    assert {j.preceding for j in log.jobs} == {-1}
    assert all(j.after is None for j in plan_replay(log, ALPHA, start=DAY, seed=1).jobs)


# ---- how logs reach users: compression, separators, line ends, encodings --------------------

def _same_as_plain(path: Path, plain: Path) -> None:
    log, base = read_swf(path), read_swf(plain)
    assert log.table == base.table and log.max_procs == base.max_procs
    assert log.unix_start == base.unix_start and log.notes == base.notes
    assert plan_replay(log, ALPHA, start=DAY, seed=3).jobs == plan_replay(
        base, ALPHA, start=DAY, seed=3).jobs


def test_gzip_of_many_members_reads_as_one_log(tmp_path: Path, plain: Path) -> None:
    """`gzip -c part >> log.gz` once per line: 301 members."""
    lines = plain.read_text().splitlines(keepends=True)
    _same_as_plain(save_swf(tmp_path / "many.swf.gz", b"".join(
        gzip.compress(x.encode()) for x in lines)), plain)


def test_gzip_members_of_several_lines_with_windows_line_ends(tmp_path: Path,
                                                               plain: Path) -> None:
    text = plain.read_text().replace("\n", "\r\n")
    parts = [text[i:i + 5000] for i in range(0, len(text), 5000)]  # cut inside lines
    _same_as_plain(save_swf(tmp_path / "parts.swf.gz", b"".join(
        gzip.compress(p.encode()) for p in parts)), plain)


@pytest.mark.parametrize("name, change", [
    ("tabs.swf", lambda t: t.replace(" ", "\t")),
    ("trailing.swf", lambda t: t.replace("\n", "   \t \n")),
    ("crlf.swf", lambda t: t.replace("\n", "\r\n")),
    ("mac.swf", lambda t: t.replace("\n", "\r")),
    ("wide.swf", lambda t: "\n".join("  " + x.replace(" ", "    ") for x in t.split("\n"))),
    ("bom.swf", lambda t: "\ufeff" + t),
    ("blank_lines.swf", lambda t: t.replace("\n", "\n\n \n")),
])
def test_separators_and_line_ends_read_as_the_plain_log(tmp_path: Path, plain: Path,
                                                        name: str, change) -> None:
    _same_as_plain(save_swf(tmp_path / name, change(plain.read_text())), plain)


def test_a_latin_1_comment_reads(tmp_path: Path, plain: Path) -> None:
    """A header converted on an old machine: "Universität" in Latin-1."""
    data = "; Installation: Universit\xe4t\n".encode("latin-1") + plain.read_bytes()
    log = read_swf(save_swf(tmp_path / "latin.swf", data))
    assert log.max_procs == 64 and len(log.jobs) == 300


def test_comments_between_job_lines_are_read_as_comments(tmp_path: Path, plain: Path) -> None:
    text = plain.read_text().replace(_job(150, 900 * 150),
                                     "; Note: the machine was rebooted here\n"
                                     + _job(150, 900 * 150))
    _same_as_plain(save_swf(tmp_path / "midnote.swf", text), plain)


# ---- logs that cannot be read: the line and the field named ---------------------------------

@pytest.mark.parametrize("bad, field", [("abc", "field 4 (run time) is 'abc'"),
                                        ("1200s", "field 4 (run time) is '1200s'")])
def test_a_word_where_a_number_belongs_names_the_line_and_field(tmp_path: Path, bad: str,
                                                                field: str) -> None:
    text = "; MaxProcs: 64\n" + _jobs(99) + _job(100, 90_000).replace(" 1200 ", f" {bad} ", 1)
    path = save_swf(tmp_path / "bad.swf", text)
    with pytest.raises(BadInput) as err:
        read_swf(path)
    assert str(err.value).startswith(f"{path}:101: {field}")


def test_a_fraction_of_a_processor_names_the_line_and_field(tmp_path: Path) -> None:
    text = "; MaxProcs: 64\n" + _jobs(9) + _job(10, 9000, procs="8.5")
    path = save_swf(tmp_path / "half.swf", text)
    with pytest.raises(BadInput) as err:
        read_swf(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}:11: field 5") and "8.5" in msg


def test_a_line_of_17_fields_among_18_is_said(tmp_path: Path) -> None:
    lines = _jobs(300).splitlines(keepends=True)
    lines[41] = " ".join(lines[41].split()[:17]) + "\n"
    log = read_swf(save_swf(tmp_path / "short.swf", "; MaxProcs: 64\n" + "".join(lines)))
    assert any(n.startswith("1 job line(s) have fewer than SWF's 18 fields, the other 299 "
                            "all of them (line 43 has 17)") for n in log.notes)


# ---- the window: queue rebuilt, arrivals thinned ---------------------------------------------

def test_the_queue_at_the_window_start_is_the_logs(tmp_path: Path) -> None:
    """Jobs of 32 of 64 processors, an hour each, one every 10 min: at any moment two run
    and the rest wait."""
    log = read_swf(save_swf(tmp_path / "busy.swf", "; MaxProcs: 64\n"
                         + _jobs(200, every=600, wait=0, run=3600, procs=32)))
    plan = plan_replay(log, ALPHA, start=DAY + 300, seed=1, duration_s=60)
    starts = sorted(j.start for j in log.jobs)
    running = sum(1 for j in log.jobs if j.start <= DAY + 300 < j.end)
    assert plan.running_at_start == running and starts


def test_arrivals_are_thinned_to_the_logs_utilization(tmp_path: Path) -> None:
    """One-processor jobs of a 512-processor machine: a whole CPU of alpha is 16 times a
    job's share."""
    log = read_swf(save_swf(tmp_path / "thin.swf", "; MaxProcs: 512\n"
                         + _jobs(3000, every=20, wait=0, run=2400, procs=1)))
    plan = plan_replay(log, ALPHA, start=20_000, seed=4)
    assert plan.arrivals_kept < plan.arrivals_in_log / 8
    assert plan.site_utilization == pytest.approx(plan.log_utilization, rel=0.05)


def test_the_benchmark_reads_the_same_plan(tmp_path: Path) -> None:
    """`python -m benchmarks.placement --trace F --site alpha` plans through plan_replays:
    a gzip of many members with CRLF, the same jobs as the plain log."""
    text = ARCHIVE_HEADER + _jobs(300)
    packed = save_swf(tmp_path / "bench.swf.gz", b"".join(
        gzip.compress(x.encode()) for x in text.replace("\n", "\r\n").splitlines(True)))
    (tmp_path / "p").mkdir()
    plain = save_swf(tmp_path / "p" / "bench.swf", text)
    [a] = plan_replays([(packed, ALPHA)], seed=5, start=DAY)
    [b] = plan_replays([(plain, ALPHA)], seed=5, start=DAY)
    assert a.jobs == b.jobs and a.log == b.log == "bench"


# ---- what a user runs: `diamond testbed load --trace ... --dry-run` --------------------------

def test_the_cli_plans_a_gzip_of_many_members(tmp_path: Path, capsys) -> None:
    path = save_swf(tmp_path / "cli.swf.gz", b"".join(
        gzip.compress(x.encode()) for x in (ARCHIVE_HEADER + _jobs(300)).splitlines(True)))
    assert cli(["testbed", "load", "--trace", str(path), "--site", "alpha", "--start",
                str(DAY), "--dry-run", "--json"]) == 0
    [trace] = json.loads(capsys.readouterr().out)["traces"]
    assert trace["log"] == "cli" and trace["jobs"] > 0


def test_the_cli_refuses_a_bad_field_in_one_line(tmp_path: Path, capsys) -> None:
    path = save_swf(tmp_path / "bad.swf", "; MaxProcs: 64\n" + _jobs(5)
                 + _job(6, 5400).replace(" 16 ", " x16 ", 1))
    assert cli(["testbed", "load", "--trace", str(path), "--site", "alpha", "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{path}:7: field 5" in err and "'x16'" in err
    assert "\n" not in err and "Traceback" not in err


def test_the_cli_refuses_a_header_only_log(tmp_path: Path, capsys) -> None:
    path = save_swf(tmp_path / "empty.swf", ARCHIVE_HEADER)
    assert cli(["testbed", "load", "--trace", str(path), "--site", "alpha", "--dry-run"]) == 2
    assert "has no job lines" in capsys.readouterr().err
