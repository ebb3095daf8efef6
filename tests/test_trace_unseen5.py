"""The fifth sweep of SWF logs unlike the shared ones, each written here by hand and small:
headers with every standard field (in other spellings, repeated by joined logs), jobs
without a requested time, checkpointed jobs whose parts surround their summary, partitions
beyond the header's list, logs compressed in several members or twice, in formats not read,
web pages and CSV saved as logs; and the memory of a long log whose window is at its end."""

from __future__ import annotations

import bz2
import gc
import gzip
import json
import lzma
from pathlib import Path

import pytest
from sweep_helpers import replay_number, traced_memory, whole_window

import diamond_jupyter.dialects.slurm_script  # noqa: F401  (imported by a plan: not its memory)
from diamond_jupyter.cli.main import main as cli
from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import SwfJob, plan_replay, read_swf


def _line(number: int, submit: float, wait: float = 0, run: float = 100, procs: int = 4,
          req: float = 600, status: int = 1, alloc: int | None = None, partition: int = 1,
          preceding: int = -1, think: float = -1) -> str:
    """One SWF job line (18 fields) of the values a test names."""
    given = procs if alloc is None else alloc
    return (f"{number} {submit:g} {wait:g} {run:g} {given} -1 -1 {procs} {req:g} -1 {status} "
            f"{number % 7 + 1} 1 -1 1 {partition} {preceding} {think:g}\n")


# ---- a long log whose window is at its end: memory ----------------------------------------

def _long_log(path: Path, jobs: int) -> list[tuple[float, float, float, int]]:
    """A log of `jobs` jobs, one a minute, each waiting up to an hour and running up to three;
    its (submit, wait, run, procs), computed here."""
    rows = []
    with open(path, "w") as fh:
        fh.write("; Version: 2.2\n; MaxProcs: 1024\n; MaxNodes: 256\n")
        for n in range(1, jobs + 1):
            submit, wait, run = n * 60.0, float(n * 37 % 3600), float(n * 53 % 10800 + 1)
            procs = 1 << n % 4
            rows.append((submit, wait, run, procs))
            fh.write(_line(n, submit, wait, run, procs, req=14400))
    return rows


def test_a_window_at_the_end_of_a_long_log_holds_only_its_own_jobs(tmp_path: Path) -> None:
    """60,000 jobs, a window of 600 log minutes at the very end. Before: the reader made an
    object of every job (some 300 bytes each) and kept them all; its peak grew with the
    log. Now its jobs are kept as columns of numbers and a plan makes objects of its
    window's jobs only: the peak is under 120 bytes a job of the log (about a third), and
    the job objects alive are the window's."""
    path = tmp_path / "long.swf"
    rows = _long_log(path, 60_000)
    last = rows[-1][0]
    start = last - 600 * 60 + 1
    gc.collect()
    with traced_memory() as memory:
        log = read_swf(path)
        plan = plan_replay(log, cluster("alpha"), start=start, duration_s=600, scale=60)
    alive = sum(type(o) is SwfJob for o in gc.get_objects())
    # the window's jobs, counted here from the rows: those running, waiting, arriving
    end = start + 600 * 60
    running = sum(1 for s, w, r, _ in rows if s < start and s + w <= start < s + w + r)
    queued = sum(1 for s, w, _, _ in rows if s < start < s + w)
    arrivals = sum(1 for s, _, _, _ in rows if start <= s < end)
    window = list(log.table.window(start, end))
    assert len(window) == running + queued + arrivals and running > 100 and queued > 10
    assert plan.arrivals_in_log == arrivals
    assert plan.running_at_start + plan.queued_at_start + plan.arrivals_kept == len(plan.jobs)
    assert alive <= running + queued + arrivals, alive
    assert memory.peak < 120 * len(rows), memory
    assert len(log.table) == len(rows) and log.max_procs == 1024


# ---- headers ------------------------------------------------------------------------------

ARCHIVE_HEADER = """\
; Version: 2.2
; Computer: Made-up Cluster 9000
; Installation: A center written for this test
; Acknowledge: nobody
; Information: http://example.invalid/logs
; Conversion: by hand, for diamond-jupyter's tests
; MaxJobs: 6
; MaxRecords: 6
; Preemption: No
; UnixStartTime: 1104559200
; TimeZoneString: America/Chicago
; StartTime: Sat Jan 01 00:00:00 CST 2005
; EndTime:   Sun Jan 02 00:00:00 CST 2005
; MaxNodes: 32
; MaxProcs: 128
; MaxRuntime: 86400
; MaxMemory: 2097152
; AllowOveruse: No
; MaxQueues: 2
; Queues: 1 = batch, 2 = debug
; Queue: 1 batch (1 day)
; Queue: 2 debug (30 minutes)
; MaxPartitions: 1
; Partitions: 1 = the whole machine
; Note: a job's processors are cores, four a node
; Note: status 5 is a job cancelled by its user
;
"""


def _jobs_of_quarter_machines() -> str:
    """Six jobs of 32 processors each (a quarter of 128), four at once at most."""
    return "".join(_line(n, n * 100, 0, 350, 32, req=1200) for n in range(1, 7))


def test_every_standard_header_field_reads_and_sizes_the_machine(tmp_path: Path) -> None:
    path = tmp_path / "archive.swf"
    path.write_text(ARCHIVE_HEADER + _jobs_of_quarter_machines())
    log = read_swf(path)
    assert (log.max_procs, log.unix_start, len(log.jobs), log.notes) == (
        128, 1104559200, 6, ())
    plan = plan_replay(log, cluster("beta"), start=100, duration_s=10, scale=60)
    total = cluster("beta").nodes * cluster("beta").cpus
    assert all(j.nodes * j.cpus_per_node >= total // 4 for j in plan.jobs)


def test_header_keys_in_other_spellings_are_the_same_fields(tmp_path: Path) -> None:
    """A header retyped by hand: `; maxprocs: 128`, `;MAXPROCS :128`, `; Max Procs: 128`.
    Before: only the archive's exact spelling counted, so the machine was sized by its
    jobs (64 processors at once), each job taken as half the machine, not a quarter."""
    for spelling in ("; maxprocs: 128", ";MAXPROCS :128", "; Max Procs: 128",
                     "; max_procs: 128"):
        path = tmp_path / "retyped.swf"
        path.write_text(f"; Version: 2.2\n{spelling}\n" + "".join(
            _line(n, n * 1000, 0, 500, 32) for n in range(1, 5)))
        log = read_swf(path)
        assert log.max_procs == 128, spelling


def test_joined_logs_with_two_machine_sizes_take_the_larger_and_say_so(tmp_path: Path) -> None:
    """Two logs of one machine joined, each with its header: 256 processors, then 128 (a
    part taken out of service). Before: the last header won silently, so a job of the
    first part sized by its request of 200 processors was cut to 128, the whole machine."""
    first = "; MaxProcs: 256\n" + "".join(
        _line(n, n * 100, 0, 50, 200, alloc=-1) for n in range(1, 4))
    second = "; MaxProcs: 128\n" + "".join(
        _line(n, 1000 + n * 100, 0, 50, 64) for n in range(4, 7))
    path = tmp_path / "joined.swf"
    path.write_text(first + second)
    log = read_swf(path)
    assert log.max_procs == 256
    assert [j.procs for j in log.jobs[:3]] == [200, 200, 200]
    [note] = [n for n in log.notes if "MaxProcs" in n]
    assert "256" in note and "128" in note and "largest" in note


# ---- how a log is packed ------------------------------------------------------------------

def _small_log() -> str:
    return "; MaxProcs: 64\n" + "".join(_line(n, n * 300, n % 5 * 10, 900, 1 << n % 6)
                                        for n in range(1, 41))


@pytest.mark.parametrize("pack", [gzip.compress, bz2.compress, lzma.compress],
                         ids=["gzip", "bzip2", "xz"])
def test_a_log_in_several_compressed_members_reads_whole(tmp_path: Path, pack) -> None:
    """`cat part1.gz part2.gz > log.gz`, and the parallel compressors (pigz, pbzip2, xz -T)
    write several members: every member's lines are the log."""
    text = _small_log()
    lines = text.splitlines(keepends=True)
    path = tmp_path / "members.swf"
    path.write_bytes(b"".join(pack("".join(lines[k:k + 7]).encode())
                              for k in range(0, len(lines), 7)))
    plain = tmp_path / "plain.swf"
    plain.write_text(text)
    assert read_swf(path).jobs == read_swf(plain).jobs and len(read_swf(path).jobs) == 40


@pytest.mark.parametrize("outer, inner", [(gzip.compress, gzip.compress),
                                          (gzip.compress, lzma.compress),
                                          (bz2.compress, gzip.compress)])
def test_a_log_compressed_twice_reads_as_the_log(tmp_path: Path, outer, inner) -> None:
    """A download gzipped again by a server or a browser (`log.swf.gz` holding a gzip file).
    Before: "this is not text" at line 1, the first layer's bytes read as lines."""
    text = _small_log()
    path = tmp_path / "twice.swf.gz"
    path.write_bytes(outer(inner(text.encode())))
    plain = tmp_path / "plain.swf"
    plain.write_text(text)
    assert read_swf(path).jobs == read_swf(plain).jobs


@pytest.mark.parametrize("head, what", [(b"\x1f\x9d\x90", "Unix compress"),
                                        (b"LZIP\x01", "lzip")])
def test_a_format_not_read_is_named_with_what_is_accepted(tmp_path: Path, head: bytes,
                                                           what: str) -> None:
    """An old archive copy packed with `compress` (log.swf.Z) or with lzip. Before: "this is
    not text" or "an SWF job line has 18 fields, this one 1"."""
    path = tmp_path / "log.swf.Z"
    path.write_bytes(head + bytes(range(256)) * 4)
    with pytest.raises(BadInput, match=rf"is compressed with {what}: unpack it first "
                                       r"\(accepted: an SWF text file, plain or compressed "
                                       "with gzip, bzip2 or xz"):
        read_swf(path)


@pytest.mark.parametrize("page", [
    "<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head></html>\n",
    "\n  <html>\n<body>moved</body>\n</html>\n",
    "<?xml version='1.0'?>\n<Error><Code>AccessDenied</Code></Error>\n"])
def test_a_web_page_saved_as_the_log_is_named(tmp_path: Path, page: str) -> None:
    """A download that saved the server's error page (a 404, a redirect, a cloud store's
    XML refusal) under the log's name. Before: "an SWF job line has 18 fields, this one 2"."""
    path = tmp_path / "log.swf"
    path.write_text(page)
    with pytest.raises(BadInput, match=r"log.swf:\d: this is a web page \(HTML or XML\), "
                                       "not an SWF log: .*download the log file itself"):
        read_swf(path)


def test_a_log_saved_as_csv_is_named_with_its_separator(tmp_path: Path) -> None:
    """A log opened in a spreadsheet and saved as CSV: commas between the 18 fields. Before:
    "an SWF job line has 18 fields, this one 1"."""
    path = tmp_path / "log.csv"
    path.write_text("; MaxProcs: 64\n" + _line(1, 0).replace(" ", ","))
    with pytest.raises(BadInput, match=r"log.csv:2: the fields are separated by commas "
                                       r"\(a spreadsheet's CSV\): SWF separates its 18 fields "
                                       "by spaces or tabs"):
        read_swf(path)


# ---- requested times ------------------------------------------------------------------------

def test_jobs_without_a_requested_time_are_named_with_the_limit_they_get(tmp_path: Path) -> None:
    """Field 9 is -1 on every other line (a log converted from accounting records that kept
    no requests). Before: such a job silently got its partition's limit (a day on alpha,
    not its hour's run); now a note counts them and names the limits given."""
    path = tmp_path / "half_asked.swf"
    path.write_text("; MaxProcs: 64\n" + "".join(
        _line(n, n * 120, 0, 3600, 4, req=-1 if n % 2 else 7200) for n in range(1, 21)))
    log = read_swf(path)
    c = cluster("gamma")  # short (30 min, the default) and long (2 days)
    plan = plan_replay(log, c, start=120, duration_s=whole_window(log, 1), scale=1)
    unasked = [j for j in plan.jobs if replay_number(j.name) % 2]
    assert unasked and all((j.partition, j.walltime_min) == ("long", 2880) for j in unasked)
    [note] = [n for n in plan.notes if "no requested time" in n]
    assert note.startswith(f"{len(unasked)} job(s) have no requested time (field 9 is -1 "
                           f"or 0, e.g. {unasked[0].name})")
    assert note.endswith("(long 2880 min)")
    asked = [j for j in plan.jobs if not replay_number(j.name) % 2]
    assert asked and all(j.walltime_min == 120 for j in asked)


# ---- statuses, partial executions, partitions, dependencies -------------------------------

def test_parts_around_a_summary_count_once_and_do_not_size_the_machine(tmp_path: Path) -> None:
    """A checkpointed job whose summary line (status 0: it failed in the end; status 5: it
    was cancelled after running) lies between its parts (status 2, then 4 or 3), beside a
    plain job, in a log without MaxProcs: each job counts once, with its summary's run, and
    the machine is what the summaries held at once (16), not with the parts (24)."""
    path = tmp_path / "parts.swf"
    path.write_text("".join([
        _line(1, 0, 10, 300, 8, req=1000, status=2),
        _line(1, 0, 10, 700, 8, req=1000, status=0),
        _line(1, 0, 500, 400, 8, req=1000, status=4),
        _line(2, 50, 0, 600, 8, req=1000, status=1),
        _line(3, 60, 700, 200, 4, req=1000, status=2),
        _line(3, 60, 700, 500, 4, req=1000, status=5),
        _line(3, 60, 1000, 300, 4, req=1000, status=3)]))
    log = read_swf(path)
    assert [(j.number, j.run, j.status) for j in log.jobs] == [(1, 700, 0), (2, 600, 1),
                                                               (3, 500, 5)]
    assert log.max_procs == 16
    plan = plan_replay(log, cluster("beta"), start=0, duration_s=whole_window(log, 1), scale=1)
    names = sorted(j.name for j in plan.jobs)
    assert names == ["trace-arrive-1", "trace-arrive-2", "trace-arrive-3"]
    assert [j.runtime_s for j in sorted(plan.jobs, key=lambda j: j.name)] == [700, 600, 500]


def test_partition_numbers_beyond_the_headers_list_are_read_and_replayed(tmp_path: Path
                                                                        ) -> None:
    """`; MaxPartitions: 2` but lines in partitions 5, 0 and -1 (a partition added after the
    header was written, or unknown): field 16 places nothing in a replay, so every job that
    ran is replayed in the site's own partitions."""
    path = tmp_path / "partitions.swf"
    path.write_text("; MaxProcs: 64\n; MaxPartitions: 2\n; Partitions: 1 = north, 2 = south\n"
                    + "".join(_line(n, n * 60, 0, 600, 8, partition=(1, 2, 5, 0, -1)[n % 5])
                              for n in range(1, 21)))
    log = read_swf(path)
    c = cluster("gamma")
    plan = plan_replay(log, c, start=60, duration_s=whole_window(log), scale=60)
    parts = {None if p.default else p.name for p in c.partitions}
    assert len(plan.jobs) == 20 and all(j.partition in parts for j in plan.jobs)


def test_preceding_jobs_later_missing_or_itself_hold_nothing(tmp_path: Path) -> None:
    """Field 17 names the preceding job and 18 the think time after it: a job named as its
    own predecessor, one naming a job submitted after it, and one naming a job not in the
    log are free; one naming an earlier replayed job waits for it."""
    path = tmp_path / "chains.swf"
    path.write_text("; MaxProcs: 16\n" + _line(1, 0, preceding=3, think=5)
                    + _line(2, 10, preceding=2) + _line(3, 20, preceding=99)
                    + _line(4, 30, preceding=1, think=20))
    log = read_swf(path)
    assert [j.preceding for j in log.jobs] == [3, -1, 99, 1]
    plan = plan_replay(log, cluster("alpha"), start=0, duration_s=1, scale=60)
    assert [(j.name, j.after) for j in plan.jobs] == [
        ("trace-arrive-1", None), ("trace-arrive-2", None), ("trace-arrive-3", None),
        ("trace-arrive-4", "trace-arrive-1")]


def test_a_line_of_minus_ones_but_its_run_and_size_is_load(tmp_path: Path) -> None:
    """Everything unknown but the number, the submit time, the run and a processor count
    (allocated on one line, requested on the other): each runs from its submission with
    the default partition's limit, and the note says it asked for no time."""
    path = tmp_path / "unknowns.swf"
    path.write_text("; MaxProcs: 16\n"
                    "1 0 -1 100 -1 -1 -1 4 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                    "2 10 -1 100 4 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n")
    log = read_swf(path)
    assert [(j.procs, j.by_request, j.status) for j in log.jobs] == [(4, True, -1),
                                                                     (4, False, -1)]
    plan = plan_replay(log, cluster("alpha"), start=0, duration_s=1, scale=60)
    assert [(j.name, j.walltime_min, j.partition) for j in plan.jobs] == [
        ("trace-arrive-1", 1440, None), ("trace-arrive-2", 1440, None)]
    assert any(n.startswith("2 job(s) have no requested time") for n in plan.notes)


def test_statuses_0_1_5_replay_what_ran(tmp_path: Path) -> None:
    """Failed (0), completed (1) and cancelled (5) jobs: each that ran is load, whatever its
    end; a cancelled one that never ran (run 0 or -1) is not."""
    path = tmp_path / "statuses.swf"
    path.write_text("; MaxProcs: 32\n" + "".join(
        _line(n, n * 30, 0, (0, 200, -1)[n % 3] if n % 5 == 0 else 300, 2,
              status=(0, 1, 5)[n % 3])
        for n in range(1, 31)))
    log = read_swf(path)
    ran = {j.number for j in log.jobs if j.run > 0}
    plan = plan_replay(log, cluster("beta"), start=30, duration_s=whole_window(log), scale=60)
    assert {replay_number(j.name) for j in plan.jobs} == ran
    assert {j.status for j in log.jobs if j.number in ran} == {0, 1, 5}


# ---- the layout of a hand-made log -----------------------------------------------------------

def test_crlf_tabs_and_trailing_blank_lines_in_gzip_members_read_as_the_clean_log(
        tmp_path: Path) -> None:
    text = _small_log()
    messy = "\r\n".join("\t".join(line.split()) + "  " if not line.startswith(";") else line
                        for line in text.splitlines()) + "\r\n\r\n\t\r\n\n"
    half = len(messy) // 2
    path = tmp_path / "messy.swf.gz"
    path.write_bytes(gzip.compress(messy[:half].encode()) + gzip.compress(messy[half:].encode()))
    clean = tmp_path / "clean.swf"
    clean.write_text(text)
    assert read_swf(path).jobs == read_swf(clean).jobs


def test_a_number_too_large_for_its_field_is_named(tmp_path: Path) -> None:
    """A job number of 25 digits (two fields run together by a converter). The reader keeps
    numbers in 64-bit columns: the line is named, not an OverflowError."""
    path = tmp_path / "wide.swf"
    path.write_text("; MaxProcs: 16\n" + _line(1, 0)
                    + _line(2, 10).replace("2 ", "2000000000000000000000000 ", 1))
    with pytest.raises(BadInput, match=r"wide.swf:3: a job number, processor count, status "
                                       r"or preceding job is too large a number"):
        read_swf(path)


def test_a_log_in_reverse_order_plans_as_its_sorted_copy(tmp_path: Path) -> None:
    """Lines newest first (a log written by a tool that prepends): read in submit order,
    and a window at its end plans as the sorted copy's."""
    text = _small_log()
    header, lines = text.splitlines(keepends=True)[:1], text.splitlines(keepends=True)[1:]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    # one name: a plan's thinning is seeded by the log's name too
    backwards, forwards = tmp_path / "a" / "log.swf", tmp_path / "b" / "log.swf"
    backwards.write_text("".join(header + lines[::-1]))
    forwards.write_text(text)
    a, b = read_swf(backwards), read_swf(forwards)
    assert a.jobs == b.jobs and a.max_procs == b.max_procs
    start = b.span[1] - 3000
    assert plan_replay(a, cluster("alpha"), start=start, seed=2).jobs == plan_replay(
        b, cluster("alpha"), start=start, seed=2).jobs


def test_logs_joined_each_with_a_byte_order_mark_read_as_one(tmp_path: Path) -> None:
    """`cat a.swf b.swf` of two logs saved by a Windows editor: the second's byte-order mark
    is in the middle of the file, before its header or its first job line. Before: "an SWF
    job line has 18 fields, this one 3" or "SWF fields must be numbers" at that line."""
    bom = "\ufeff"
    first = "; MaxProcs: 16\n" + _line(1, 0) + _line(2, 10)
    for second in ("; MaxProcs: 16\n" + _line(3, 20) + _line(4, 30),
                   _line(3, 20) + _line(4, 30)):
        path = tmp_path / "joined.swf"
        path.write_text(bom + first + bom + second, encoding="utf-8")
        log = read_swf(path)
        assert [j.number for j in log.jobs] == [1, 2, 3, 4] and log.max_procs == 16


# ---- a plain log cut off ------------------------------------------------------------------

def test_a_plain_log_cut_off_mid_line_is_named_as_cut_off(tmp_path: Path) -> None:
    """A plain log whose copy broke off in the middle of line 21: its last line has 6 of 18
    fields and no line end. Before: "an SWF job line has 18 fields, this one 6", as if the
    line were malformed."""
    text = "; MaxRecords: 40\n" + _small_log()
    cut = text.index(_line(20, 20 * 300, 0, 900, 1 << 20 % 6)) + 20
    path = tmp_path / "cut.swf"
    path.write_text(text[:cut])
    with pytest.raises(BadInput, match=r"cut.swf:22: the log is cut off: its last line has "
                                       r"\d+ of 18 fields and no line end .*, and the header "
                                       "says MaxRecords 40; .*copy it again"):
        read_swf(path)


def test_a_plain_log_cut_at_a_line_end_says_it_has_fewer_lines_than_its_header(
        tmp_path: Path) -> None:
    """The same log broken off at a line's end: every line reads, and a note says the header
    counted 40 records where the file has 25. Before: replayed as a whole log, silently."""
    lines = ("; MaxRecords: 40\n" + _small_log()).splitlines(keepends=True)
    path = tmp_path / "short.swf"
    path.write_text("".join(lines[:27]))  # two header lines, 25 jobs
    log = read_swf(path)
    assert len(log.jobs) == 25
    assert ("the log's header says MaxRecords 40, the file has 25 job lines: it may be cut "
            "off") in log.notes[0]
    whole = tmp_path / "whole.swf"
    whole.write_text("".join(lines))
    assert read_swf(whole).notes == ()


def test_a_cleaned_log_with_fewer_lines_than_its_header_is_not_called_cut_off(
        tmp_path: Path) -> None:
    """The archive's cleaned logs keep the original MaxRecords and say in a note which jobs
    their filters removed: fewer lines than the header is what cleaning did."""
    lines = ("; MaxRecords: 40\n; Note: THIS IS A CLEANED VERSION OF THE LOG!\n"
             ";         user=3 (15 jobs removed)\n" + _small_log()).splitlines(keepends=True)
    path = tmp_path / "cleaned.swf"
    path.write_text("".join(lines[:29]))
    log = read_swf(path)
    assert len(log.jobs) == 25 and log.notes == ()


# ---- the command line -----------------------------------------------------------------------

def test_the_command_line_replays_a_twice_compressed_log_and_refuses_a_page(
        tmp_path: Path, capsys) -> None:
    """`diamond testbed load --trace`: a log gzipped twice plans as its plain copy; a web page
    saved as the log exits 2 with its one-line reason."""
    text = ARCHIVE_HEADER + _jobs_of_quarter_machines()
    twice, plain = tmp_path / "a" / "log.swf.gz", tmp_path / "b" / "log.swf"
    twice.parent.mkdir()
    plain.parent.mkdir()
    twice.write_bytes(gzip.compress(gzip.compress(text.encode())))
    plain.write_text(text)
    args = ["testbed", "load", "--site", "beta", "--start", "100", "--duration", "10",
            "--dry-run", "--json"]
    assert cli([*args, "--trace", str(twice)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert cli([*args, "--trace", str(plain)]) == 0
    want = json.loads(capsys.readouterr().out)
    assert got["jobs"] and got["jobs"] == want["jobs"]
    page = tmp_path / "page.swf"
    page.write_text("<html><body>404</body></html>\n")
    assert cli([*args, "--trace", str(page)]) == 2
    err = capsys.readouterr().err
    assert "this is a web page (HTML or XML), not an SWF log" in err
    assert len(err.strip().splitlines()) == 1
