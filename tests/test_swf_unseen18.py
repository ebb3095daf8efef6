"""The eighteenth sweep of SWF logs: small logs written here as real center logs have them
(the archive's cleaned logs list their filters in many comment lines; joined logs repeat
their headers; grids name their partitions), in shapes the earlier sweeps did not take: a
header after its jobs and in another order, fields given twice with one value or two, -1
in every field that allows it, jobs of 0 processors or 0 s, waits below -1, a checkpointed
job cancelled in its last part, partitions sent to sites by number and name, a header of
2,100 comment lines (plain and gzip), a last line cut off in its last field. Each is read by
`read_swf` and planned by `plan_replay` (or given to `diamond testbed load ... --dry-run`)
as Standard Workload Format v2.2 means it, or refused naming the file, line and field; no
test bed.

Faults found and fixed, each shown by a test here marked `fault` that failed before:
- "SWF 2Ki" (README, the known gaps): `; MaxRuntime: 2Ki` was read as 2048 s, a binary
  prefix taken for seconds; a Queue line's `[MaxRuntime: 2Ki]` too. Now neither is read,
  and the notes say the line and why (`; MaxProcs: 2Ki` is still 2048 processors).
- A header of more than 200 comment lines (a cleaned log's filter list) had its later lines'
  words dropped unsaid: a StartTime and TimeZoneString after them left log second 0 unknown,
  a note of a node's processors after them left a MaxNodes-only machine sized by its jobs.
  Now 256 KiB of comment text is read (some 4,000 lines), StartTime and TimeZoneString
  wherever they are, and the lines past that are said.
- `; MaxRuntime:` given twice with two values (logs joined) took the larger unsaid, and a
  Queue line given twice the longer; both are now said, as MaxProcs given twice is.
- `--partition batch` where two Partition lines are named `batch` (and `Batch`) replayed the
  first unsaid; now refused naming both numbers.
- A last line cut off inside its last field (`-1` cut to `-`, 18 fields, no line end) was
  read as a whole job, and a lone `-` in any field read as -1: now the last line is refused
  as cut off, and a `-` elsewhere names its line and field.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from sweep_helpers import dry_run_plan, load_refused, save_swf

from diamond_jupyter.cli import main as cli
from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import one_partition, plan_replay, read_swf

ALPHA = cluster("alpha")  # 4 nodes of 8 CPUs: 32 CPUs
UNIX = 1199145600  # 2008-01-01 00:00:00 UTC
HEADER = ("; Version: 2.2\n; Computer: Test\n; UnixStartTime: 1199145600\n"
          "; MaxJobs: 40\n; MaxRecords: 40\n; MaxProcs: 32\n")


def _job(number: object, submit: object, *, wait: object = 30, run: object = 1200,
         alloc: object = 8, procs: object = 8, req: object = 3600, status: object = 1,
         user: object = 5, queue: object = 1, partition: object = 1, pred: object = -1,
         think: object = -1) -> str:
    """One 18-field job line (CPU time, memory, group, executable unknown)."""
    fields = (number, submit, wait, run, alloc, -1, -1, procs, req, -1, status, user, 1, -1,
              queue, partition, pred, think)
    return " ".join(map(str, fields)) + "\n"


JOBS = "".join(_job(n, 600 * n) for n in range(1, 41))
FILTERS = "".join(f"; Note:       user={u} and (job>={u * 40} and job<={u * 40 + 39}) "
                  f"({u % 7 + 1} jobs removed)\n" for u in range(2100))


def _read(tmp_path: Path, text: str | bytes, name: str = "log.swf"):
    return read_swf(save_swf(tmp_path / name, text))


def _refused(tmp_path: Path, text: str | bytes, name: str = "log.swf") -> str:
    path = save_swf(tmp_path / name, text)
    with pytest.raises(BadInput) as e:
        read_swf(path)
    msg = str(e.value)
    assert str(path) in msg and "\n" not in msg, msg
    return msg


def _noted(log, *words: str) -> list[str]:
    """The log's notes holding every word."""
    return [n for n in log.notes if all(w in n for w in words)]


# -- header fields in other orders, given again ---------------------------------------------

def test_a_header_after_its_jobs_and_in_another_order_reads_as_the_archives(tmp_path):
    """A converter that writes its header last, StartTime before UnixStartTime and MaxProcs
    at the very end: the same machine, second 0 and jobs as the archive's order."""
    archive = _read(tmp_path, HEADER + JOBS, "archive.swf")
    last = "".join(reversed(HEADER.splitlines(keepends=True)))
    moved = _read(tmp_path, JOBS + "; StartTime: Tue Jan  1 00:00:00 UTC 2008\n" + last,
                  "moved.swf")
    assert moved.table == archive.table and len(moved.table) == 40
    assert (moved.max_procs, moved.unix_start) == (archive.max_procs, archive.unix_start) == (
        32, UNIX)
    assert not moved.notes


def test_a_header_repeated_with_the_same_values_says_nothing(tmp_path):
    """Two logs of one machine joined as `cat` joins them keep one header's values: no note
    of fields given twice, none of a cut-off log."""
    log = _read(tmp_path, HEADER + HEADER + "; MaxRuntime: 7200\n; MaxRuntime: 7200\n" + JOBS)
    assert (log.max_procs, log.unix_start, log.max_runtime) == (32, UNIX, 7200)
    assert not log.notes


def test_fault_a_max_runtime_given_twice_with_two_values_is_said(tmp_path):
    jobs = "".join(_job(n, 600 * n, req=-1) for n in range(1, 41))
    log = _read(tmp_path, HEADER + "; MaxRuntime: 3600\n" + jobs[:500]
                + "; MaxRuntime: 86400\n" + jobs[500:])
    assert log.max_runtime == 86400
    assert _noted(log, "MaxRuntime 2 times (3600, 86400)", "the largest, 86400, is taken")


def test_fault_a_queue_given_two_limits_by_joined_headers_is_said(tmp_path):
    jobs = "".join(_job(n, 600 * n, req=-1, queue=2) for n in range(1, 41))
    log = _read(tmp_path, HEADER + "; Queue: 2 long [MaxRuntime: 43200]\n"
                + "; Queue: 2 long [MaxRuntime: 172800]\n; Queue: 1 short [MaxRuntime: 3600]\n"
                + jobs)
    assert log.queue_limits == ((1, 3600.0), (2, 172800.0))
    assert _noted(log, "queue 2 a MaxRuntime 2 times (43200, 172800 s)", "172800 s, is taken")
    assert not _noted(log, "queue 1")


# -- "SWF 2Ki": binary prefixes in a time ---------------------------------------------------

def test_fault_a_max_runtime_of_2ki_is_not_read_as_2048_seconds(tmp_path):
    """README's gap "SWF 2Ki": a binary prefix counts processors or bytes; no center writes
    its time limit so. Before: 2048 s, every job without a request asking 34 minutes."""
    jobs = "".join(_job(n, 600 * n, req=-1) for n in range(1, 41))
    log = _read(tmp_path, HEADER + "; MaxRuntime: 2Ki\n" + jobs)
    assert log.max_runtime is None
    [note] = _noted(log, "line 7 ('; MaxRuntime: 2Ki')", "'Ki', a binary prefix")
    assert "not seconds" in note and "read as if it gave no MaxRuntime" in note
    plan = plan_replay(log, ALPHA, seed=1, start=6000)
    assert {j.walltime_min for j in plan.jobs} != {35}  # 2048 s at --scale 60, rounded up


def test_fault_a_queue_limit_of_2ki_is_not_read_and_said(tmp_path):
    log = _read(tmp_path, HEADER + "; MaxRuntime: 7200\n; Queue: 3 debug [MaxRuntime: 2Ki]\n"
                + JOBS)
    assert log.queue_limits == () and log.unasked_s(3) == 7200
    assert _noted(log, "queue 3 a MaxRuntime of '2Ki'", "binary prefix", "not read")


def test_a_max_procs_of_2ki_is_still_2048_processors(tmp_path):
    log = _read(tmp_path, HEADER.replace("MaxProcs: 32", "MaxProcs: 2Ki") + JOBS)
    assert log.max_procs == 2048 and not log.notes


# -- 2,048+ lines of header ------------------------------------------------------------------

CLEANED = ("; Version: 2.2\n; Computer: Linux cluster\n; MaxJobs: 40\n; MaxRecords: 40\n"
           "; Note: THIS IS A CLEANED VERSION OF THE LOG!\n;       The filters used were\n"
           + FILTERS)


def test_fault_a_start_time_after_2100_comment_lines_places_the_log(tmp_path):
    """Before: only the first 200 comment lines were read for their words; a StartTime and
    TimeZoneString after a long filter list left log second 0 unknown, unsaid."""
    text = (CLEANED + "; TimeZoneString: Europe/Stockholm\n"
            "; StartTime: Tue Jan  1 01:00:00 CET 2008\n; MaxProcs: 32\n" + JOBS)
    log = _read(tmp_path, text)
    assert len(text.splitlines()) > 2048
    assert log.unix_start == UNIX and log.max_procs == 32 and not log.notes


def test_fault_a_nodes_processors_said_after_2100_comment_lines_sizes_the_machine(tmp_path):
    """MaxNodes 4 and, after the filter list, "8 processors per node": 32 processors. Before,
    the note was not read and the machine was what its jobs held at once (16)."""
    jobs = "".join(_job(n, 600 * n, alloc=4, procs=4) for n in range(1, 41))
    log = _read(tmp_path, "; MaxNodes: 4\n" + CLEANED + "; Note: 8 processors per node\n"
                + jobs)
    assert log.max_procs == 32
    assert _noted(log, "MaxNodes 4 and no MaxProcs", "8 per node")


def test_comment_text_past_its_bound_is_said_and_header_fields_past_it_read(tmp_path):
    many = "".join(f"; Note: filter user={u} and (job>={u}) and (job<={u + 40}) "
                   f"and queue={u % 3} ({u} jobs removed)\n" for u in range(5000))
    log = _read(tmp_path, "; MaxNodes: 4\n" + many + "; Note: 8 processors per node\n"
                "; MaxProcs: 64\n; StartTime: 2008-01-01 00:00:00 UTC\n" + JOBS)
    assert (log.max_procs, log.unix_start) == (64, UNIX)  # fields and StartTime: read
    [note] = _noted(log, "comment line(s) past its first 262,144 characters of comments")
    assert "their words (a node's processors" in note and "are not read" in note


def test_a_long_header_reads_the_same_plain_and_gzip(tmp_path):
    text = (CLEANED + "; UnixStartTime: 1199145600\n; MaxProcs: 32\n"
            + "".join(_job(n, 600 * n) for n in range(1, 40)) + _job(40, 24000).rstrip("\n"))
    plain = _read(tmp_path, text, "cleaned.swf")
    packed = _read(tmp_path, gzip.compress(text.encode(), mtime=0), "cleaned.swf.gz")
    assert packed.table == plain.table and len(plain.table) == 40
    assert (packed.max_procs, packed.unix_start, packed.notes) == (
        plain.max_procs, plain.unix_start, plain.notes) == (32, UNIX, ())
    assert plan_replay(packed, ALPHA, seed=3).summary() == plan_replay(
        plain, ALPHA, seed=3).summary()


# -- -1 everywhere, 0 processors or runtime, waits below -1 ---------------------------------

def test_minus_one_in_every_field_that_allows_it_still_replays_the_job(tmp_path):
    """Only the job number, submit time, run time and allocated processors given: each job
    is load, its start simulated, its request its partition's limit, its user unknown."""
    jobs = "".join(_job(n, 600 * n, wait=-1, procs=-1, req=-1, status=-1, user=-1, queue=-1,
                        partition=-1) for n in range(1, 41))
    log = _read(tmp_path, "; MaxProcs: 32\n" + jobs)
    assert log.max_procs == 32 and len(log.table) == 40
    assert set(log.table.procs) == {8} and set(log.table.user) == {-1}
    plan = plan_replay(log, ALPHA, seed=1, start=6000)
    assert plan.jobs and plan.skipped == {}
    assert {(j.nodes, j.cpus_per_node) for j in plan.jobs} == {(1, 8)}  # 8 of 32: a node
    assert any("no recorded wait (field 3 is -1)" in n for n in plan.notes)
    assert any("no requested time (field 9 is -1 or 0" in n for n in plan.notes)
    with pytest.raises(BadInput, match="gives no partitions"):
        one_partition(log, "1")


def test_jobs_of_zero_processors_or_zero_seconds_are_counted_and_not_replayed(tmp_path):
    jobs = "".join(_job(n, 600 * n, alloc=0 if n % 4 == 1 else 8, procs=0 if n % 4 == 1 else 8,
                        run=0 if n % 4 == 2 else 1200) for n in range(1, 41))
    log = _read(tmp_path, HEADER + jobs)
    assert _noted(log, "10 job(s) ran with no processor count", "job 1, line 7")
    plan = plan_replay(log, ALPHA, seed=1, start=600, duration_s=400)
    assert plan.skipped == {"no_processors": 10, "zero_run_time": 10}
    assert len(plan.jobs) == 20 and not any(j.name.endswith(("-1", "-2")) for j in plan.jobs)


def test_a_wait_below_minus_one_is_simulated_and_its_job_runs(tmp_path):
    """A wait of -3600 (a clock set back) among recorded ones: said, its start simulated;
    the job itself is load, no start before its submission."""
    jobs = "".join(_job(n, 600 * n, wait=-3600 if n == 20 else 30) for n in range(1, 41))
    log = _read(tmp_path, HEADER + jobs)
    assert _noted(log, "wait or run time below -1", "job 20: wait -3600")
    plan = plan_replay(log, ALPHA, seed=1, start=600 * 19.5, duration_s=60)
    assert [j.name for j in plan.jobs if j.name.endswith("-20")]
    assert all(j.at_s >= 0 for j in plan.jobs)


# -- checkpointed and preempted parts -------------------------------------------------------

def test_a_job_cancelled_in_its_last_part_is_its_summary_once(tmp_path):
    """Job 7 ran in two parts (status 2, then 4: the last part failed) and was cancelled
    (summary status 5): the summary alone is the job, counted once against MaxJobs, and its
    history says it was cancelled."""
    parts = (_job(7, 4200, run=500, status=2) + _job(7, 4200, wait=900, run=300, status=4)
             + _job(7, 4200, run=800, status=5))
    jobs = "".join(_job(n, 600 * n) for n in range(1, 7)) + parts + "".join(
        _job(n, 600 * n) for n in range(8, 40))
    log = _read(tmp_path, HEADER.replace("MaxJobs: 40", "MaxJobs: 39")
                .replace("MaxRecords: 40", "MaxRecords: 41") + jobs)
    sevens = [i for i, n in enumerate(log.table.number) if n == 7]
    assert len(log.table) == 39 and len(sevens) == 1
    assert (log.table.status[sevens[0]], log.table.run[sevens[0]]) == (5, 800)
    assert not log.notes  # 41 lines, 39 jobs: as the header says
    plan = plan_replay(log, ALPHA, seed=1, start=23400, history_s=1e4, duration_s=60)
    [seven] = [h for h in plan.history if h.name.endswith("-7")]
    assert seven.status == 5 and seven.started


def test_parts_of_no_job_number_are_jobs_of_their_own(tmp_path):
    """Parts (status 2) numbered -1 are not one job's: each is replayed, none held after
    another."""
    jobs = "".join(_job(-1 if n in (10, 11) else n, 600 * n, status=2 if n in (10, 11) else 1)
                   for n in range(1, 41))
    log = _read(tmp_path, HEADER + jobs)
    assert len(log.table) == 40
    plan = plan_replay(log, ALPHA, seed=1, start=5700, duration_s=60)
    assert not any(j.after for j in plan.jobs)


# -- partitions sent to sites ---------------------------------------------------------------

GRID = ("; Version: 2.2\n; UnixStartTime: 1199145600\n; MaxProcs: 96\n"
        "; Partition: 1 thin (32 processors)\n; Partition: 2 fat (64 processors)\n"
        + "".join(_job(n, 300 * n, partition=1 + n % 2, alloc=8 * (1 + n % 2),
                       procs=8 * (1 + n % 2)) for n in range(1, 81)))


def test_each_partition_of_a_grid_goes_to_its_own_site(tmp_path, capsys):
    path = save_swf(tmp_path / "grid.swf", GRID)
    assert cli(["testbed", "load", "--trace", str(path), "--site", "alpha", "--partition", "1",
                "--trace", str(path), "--site", "beta", "--partition", "FAT", "--dry-run",
                "--json", "--start", "3000"]) == 0, capsys.readouterr().err
    out = json.loads(capsys.readouterr().out)
    alpha, beta = out["traces"]
    assert (alpha["site"], beta["site"]) == ("alpha", "beta")
    assert any("partition 1 (thin)" in n and "32 processors" in n for n in alpha["notes"])
    assert any("partition 2 (fat)" in n and "64 processors" in n for n in beta["notes"])
    names = {j["site"]: [] for j in out["jobs"]}
    for j in out["jobs"]:
        names[j["site"]].append(int(j["name"].rsplit("-", 1)[1]))
    assert names["alpha"] and all(n % 2 == 0 for n in names["alpha"])  # partition 1: even
    assert names["beta"] and all(n % 2 == 1 for n in names["beta"])


def test_fault_a_partition_name_two_lines_give_is_refused_naming_their_numbers(tmp_path,
                                                                             capsys):
    text = GRID.replace("2 fat (64", "2 Thin (64")
    path = save_swf(tmp_path / "grid.swf", text)
    err = load_refused(capsys, "--trace", str(path), "--site", "alpha", "--partition", "THIN")
    assert "2 partitions named 'THIN'" in err and "(1 thin, 2 Thin)" in err
    assert "accepted: 1 or 2" in err
    path2 = save_swf(tmp_path / "same.swf", GRID.replace("2 fat (64", "2 thin (64"))
    with pytest.raises(BadInput, match=r"named 'thin' .*\(1 thin, 2 thin\)"):
        one_partition(read_swf(path2), "thin")
    # its exact spelling, or its number, is one partition
    assert len(one_partition(read_swf(path), "Thin").table) == 40
    assert dry_run_plan(capsys, path, "--partition", "2", "--start", "3000")["jobs"] > 0


# -- a last line cut off ---------------------------------------------------------------------

@pytest.mark.parametrize("name", ["cut.swf", "cut.swf.gz"])
def test_fault_a_last_line_cut_inside_its_last_field_is_refused_as_cut_off(tmp_path, name):
    """`... -1 -1` cut to `... -1 -`: 18 fields, no line end. Before: read as a whole job."""
    text = (HEADER + JOBS)[:-2]
    data = gzip.compress(text.encode(), mtime=0) if name.endswith(".gz") else text
    msg = _refused(tmp_path, data, name)
    assert f"{name}:46: the log is cut off" in msg
    assert "18 fields, the last '-' (no number), and no line end" in msg
    assert "MaxRecords 40" in msg and "copy it again" in msg


def test_fault_a_lone_sign_inside_the_log_names_its_line_and_field(tmp_path):
    lines = (HEADER + JOBS).splitlines(keepends=True)
    lines[20] = lines[20].replace(" -1 -1 8 3600", " - -1 8 3600", 1)
    msg = _refused(tmp_path, "".join(lines))
    assert ":21: field 6 (average CPU time) is '-'" in msg and "-1 where unknown" in msg


def test_a_whole_last_line_without_its_line_end_is_read(tmp_path):
    log = _read(tmp_path, (HEADER + JOBS).rstrip("\n"))
    assert len(log.table) == 40 and not log.notes
