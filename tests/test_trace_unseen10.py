"""The tenth sweep of SWF logs unlike the shared ones, shaped as the Parallel Workloads
Archive's logs are (SDSC, CTC, LANL CM5, ANL Intrepid, RICC, CEA Curie, MetaCentrum, Sandia)
and read where the earlier sweeps did not look: by the prediction benchmark. Its header keys
in the spellings `read_swf` takes (MaxNodes with a blank, in lower case, after '=' or none;
MaxRuntime likewise); MaxNodes over MaxProcs, and MaxProcs no multiple of MaxNodes; job
numbers repeated (logs joined) and -1, waiting at one moment; jobs cancelled while they
waited (status 5, no run), which never started; a gzip copy with CRLF ends, trailing blanks
and Note lines, read as its plain copy. And by `read_swf`: statuses the format does not
define (field 11 outside -1..5), said with their line."""

from __future__ import annotations

import gzip
from functools import partial
from pathlib import Path

import pytest
from sweep_helpers import swf_line, write_swf

from benchmarks import prediction
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import plan_replay, read_swf

# one SWF job line: runs of 500 s unless said, five users in turn
_line = partial(swf_line, run=500, users=5)


BODY = "".join(_line(n, 1000 * n, wait=(600 if n % 2 else 0), run=300,
                     procs=(100 if n % 5 == 0 else 10), req=3600) for n in range(1, 400))


# ---- the benchmark's header ---------------------------------------------------------------

@pytest.mark.parametrize("spelled", ["Max Nodes: 16", "maxnodes: 16", "MaxNodes = 16",
                                     "MaxNodes 16", "Max_Nodes:\t16 (each with 8 CPUs)"])
def test_maxnodes_spelled_as_read_swf_reads_it_sizes_the_benchmarks_nodes(
        tmp_path: Path, spelled: str) -> None:
    """Before: only "MaxNodes:" was read; any other spelling `read_swf` accepts gave no
    MaxNodes, and the benchmark simulated 128 nodes of one processor in place of 16 of 8."""
    path = write_swf(tmp_path, "spelled", f"; {spelled}\n; MaxProcs: 128\n" + BODY)
    assert prediction.max_nodes(path) == 16
    r = prediction.run_log(path, moments=2, seed=1)
    assert (r["nodes"], r["cpus_per_node"]) == (16, 8)


def test_maxruntime_spelled_otherwise_is_the_request_of_a_log_without_requests(
        tmp_path: Path) -> None:
    """Field 9 is -1 on every line: each job asks the header's MaxRuntime, however spelled
    (before: "Max Runtime = 7200" was not read, and the longest run, 300 s, was taken)."""
    body = "".join(_line(n, 1000 * n, wait=600, run=300, req=-1) for n in range(1, 50))
    path = write_swf(tmp_path, "noreq", "; MaxProcs: 64\n; Max Runtime = 7200\n" + body)
    log, note = prediction.with_requests(read_swf(path))
    assert {j.req_time for j in log.jobs} == {7200.0}
    assert note and "7200 s" in note


@pytest.mark.parametrize("header, machine", [
    ("; MaxNodes: 128\n; MaxProcs: 100\n", (100, 1)),  # more nodes than processors
    ("; MaxNodes: 8\n; MaxProcs: 100\n", (8, 13)),  # 100 no multiple of 8
])
def test_the_benchmarks_machine_holds_the_logs_processors_and_no_more_nodes(
        tmp_path: Path, header: str, machine: tuple[int, int]) -> None:
    """Before: MaxNodes 128 over MaxProcs 100 gave 128 nodes of one processor (28 the
    machine never had), and MaxNodes 8 gave 8 of 12 (96: the log's jobs of 100 processors
    could never start). Now no more nodes than processors, and nodes enough for all."""
    path = write_swf(tmp_path, "machine", header + BODY)
    assert read_swf(path).max_procs == 100
    r = prediction.run_log(path, moments=2, seed=1)
    assert (r["nodes"], r["cpus_per_node"]) == machine
    assert r["nodes"] * r["cpus_per_node"] >= 100 and r["nodes"] <= 100


# ---- the benchmark's queue view -----------------------------------------------------------

def test_repeated_and_missing_job_numbers_are_each_a_job_of_the_view(tmp_path: Path) -> None:
    """Two logs joined (each numbered from 1) and jobs numbered -1, waiting at one moment:
    each is its own pending job with its own true wait. Before: their ids were the same
    number, so the later overwrote the earlier's truth and each other's predictions."""
    body = (_line(1, 0, wait=5000, procs=64) + _line(1, 10, wait=3000)
            + _line(-1, 20, wait=4000) + _line(-1, 30, wait=6000) + _line(3, 40, wait=4500))
    log = read_swf(write_swf(tmp_path, "joined", "; MaxProcs: 64\n; MaxNodes: 8\n" + body))
    snap, _, truth = prediction.moment(log, 8, 8, 100.0)
    ids = [j.native_id for j in snap.jobs]
    assert len(ids) == len(set(ids)) == 5
    assert sorted(truth.values()) == [2910.0, 3920.0, 4440.0, 4900.0, 5930.0]
    waits = prediction.recent_waits(log, 100.0)
    assert len(waits) == 5


def test_a_job_cancelled_while_it_waited_is_in_the_queue_but_no_start_to_score(
        tmp_path: Path) -> None:
    """Job 2 waited 100,000 s and was cancelled (status 5, run 0 or -1): while it waits it
    is in the queue view, but it never started, so no prediction is scored against its
    cancel (before: its "start" was the cancel, 99,920 s on). After its cancel it is no
    recent wait of a started job (before: counted as one)."""
    body = (_line(1, 0, wait=5000, procs=64) + _line(2, 20, wait=100_000, run=0, status=5)
            + _line(3, 30, wait=4000) + _line(4, 40, wait=100_000, run=-1, status=5)
            + _line(5, 200_000, wait=10))
    log = read_swf(write_swf(tmp_path, "cancelled", "; MaxProcs: 64\n; MaxNodes: 8\n" + body))
    snap, _, truth = prediction.moment(log, 8, 8, 100.0)
    assert {j.native_id for j in snap.pending} == {"1", "2", "3", "4"}
    assert set(truth) == {"1", "3"}
    later = prediction.recent_waits(log, 100_100.0)
    assert "2" not in later and "4" not in later


def test_a_gzip_copy_with_crlf_blanks_and_notes_scores_as_its_plain_copy(
        tmp_path: Path) -> None:
    """An archive-shaped header (Version, Computer, TimeZoneString, UnixStartTime, Note
    lines naming MaxProcs in words), -1 in the fields not kept, CRLF ends, trailing blanks
    and blank lines at the end, gzipped: the benchmark reads it as the plain log."""
    header = ("; Version: 2.2\n; Computer: IBM SP2\n; Installation: a center\n"
              "; TimeZoneString: US/Pacific\n; UnixStartTime: 893466664\n"
              "; MaxNodes: 16\n; MaxProcs: 128\n; Note: MaxProcs was 64 before the upgrade\n"
              "; Note: jobs of -1 processors were dropped\n")
    plain = write_swf(tmp_path, "plain", header + BODY)
    messy = (header + BODY).replace("\n", "  \r\n") + "\r\n\r\n   \r\n"
    packed = tmp_path / "packed.swf.gz"
    packed.write_bytes(gzip.compress(messy.encode()))
    a = prediction.run_log(plain, moments=3, seed=2)
    b = prediction.run_log(packed, moments=3, seed=2)
    assert (b["nodes"], b["cpus_per_node"], b["moments"]) == (16, 8, 3)
    assert a["models"] == b["models"]


# ---- read_swf -----------------------------------------------------------------------------

def test_a_status_the_format_does_not_define_is_said_with_its_line(tmp_path: Path) -> None:
    """Field 11 of 7 and 9 (no SWF status: the format has 0, 1, 5, 2-4 for parts and -1):
    read as jobs that ran (their load kept), and said with the first such line and field
    (before: silent, each written to history as completed). Statuses of the format say
    nothing."""
    odd = "".join(_line(n, 100 * n, status=(7 if n == 3 else 9 if n == 8 else 1))
                  for n in range(1, 60))
    log = read_swf(write_swf(tmp_path, "odd", "; MaxProcs: 64\n" + odd))
    [note] = [n for n in log.notes if "status" in n]
    assert note.startswith("2 job line(s)") and "line 4, field 11: 7" in note
    fine = "".join(_line(n, 100 * n, status=(-1, 0, 1, 5)[n % 4]) for n in range(1, 60))
    clean = read_swf(write_swf(tmp_path, "fine", "; MaxProcs: 64\n" + fine))
    assert not [n for n in clean.notes if "status" in n]
    same = read_swf(write_swf(tmp_path, "same", "; MaxProcs: 64\n" + "".join(
        _line(n, 100 * n) for n in range(1, 60))))
    a = plan_replay(log, cluster("alpha"), start=1000, duration_s=60, seed=4)
    b = plan_replay(same, cluster("alpha"), start=1000, duration_s=60, seed=4)
    assert a.jobs == b.jobs


# ---- the benchmark's moments --------------------------------------------------------------

def _steady(offset: float, every: float, count: int) -> str:
    return "".join(_line(n, offset + every * n, wait=(1800 if n % 2 else 0), run=3000,
                         procs=(32 if n % 3 == 0 else 8), req=7200) for n in range(1, count))


def test_a_log_counting_unix_seconds_is_scored_a_day_after_its_first_job(
        tmp_path: Path) -> None:
    """Submit times in Unix seconds (1.2e9 on): moments are drawn from a day after the
    first submission (before: from log second 86,400, decades before the first job, so
    each moment saw an empty queue and none was scored, silently)."""
    path = write_swf(tmp_path, "unix", "; MaxProcs: 96\n; MaxNodes: 12\n"
                  + _steady(1_200_000_000, 600, 700))
    log = read_swf(path)
    assert prediction.history_start(log) == log.span[0] + prediction.MIN_LOG_S
    for new_jobs in (False, True):
        r = prediction.run_log(path, moments=5, seed=1, new_jobs=new_jobs)
        assert r["moments"] == 5 and "note" not in r


def test_a_log_under_a_day_says_nothing_is_scored_and_why(tmp_path: Path) -> None:
    """Submissions for 8 hours: no moment has a day of history before it. Before: moments
    were drawn after the last submission (the log's tail only) and scored, unsaid."""
    path = write_swf(tmp_path, "short", "; MaxProcs: 400\n; MaxNodes: 50\n"
                  + _steady(0, 60, 500))
    r = prediction.run_log(path, moments=5, seed=1)
    assert r["moments"] == 0
    assert "within its first 1 day(s)" in r["note"] and "29940 s" in r["note"]
    assert set(r["models"]) == set(prediction.MODELS)
