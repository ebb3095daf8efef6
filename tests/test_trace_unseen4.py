"""The fourth sweep of SWF logs unlike the shared ones (`fixtures/swf_unseen4/make_fixtures.py`):
version 2.2 headers with notes, MaxNodes and MaxProcs that disagree, overuse allowed or not,
queues of different limits, a daylight-saving change in local-time records, logs mostly
cancelled or cancelled at their end, lines grouped by queue, a log of a dozen jobs, partial
executions before their summary, jobs larger than a site; logs read from a pipe and streamed;
--scale at its extremes and --start given as a Unix time."""

from __future__ import annotations

import gzip
import json
import lzma
import math
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sweep_helpers import (
    assert_regenerated,
    replay_number,
    sound_replays,
    swf_rows,
    traced_memory,
    whole_window,
)

from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.clusters import CLUSTERS, ClusterDef, PartitionDef, cluster
from diamond_jupyter.testbed.trace import plan_replay, read_swf

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "swf_unseen4"
UNSEEN = sorted(FIXTURES.glob("*.swf"))
SITES = [c.name for c in CLUSTERS]


def _small(nodes: int, cpus: int, *limits: str) -> ClusterDef:
    """A site of a few CPUs; its partitions' limits (the first the default), else a day."""
    parts = tuple(PartitionDef(f"p{k}", limit, default=k == 0)
                  for k, limit in enumerate(limits or ("1-00:00:00",)))
    return ClusterDef(name=f"s{nodes}x{cpus}", index=9, nodes=nodes, cpus=cpus,
                      memory_mb=1000, features=(), partitions=parts)


def _ran(rows: list[list[float]]) -> set[int]:
    """Job numbers that loaded the machine: a run and a size (allocated, else requested)."""
    return {int(r[0]) for r in rows if r[3] > 0 and (r[4] if r[4] > 0 else r[7]) > 0}


# ---- the fixtures ------------------------------------------------------------------------

def test_the_fixtures_are_there_small_and_regenerated_alike(tmp_path: Path) -> None:
    assert len(UNSEEN) == 12, UNSEEN
    assert all(p.stat().st_size < 50_000 for p in UNSEEN)
    assert_regenerated(FIXTURES, UNSEEN, tmp_path)


@pytest.mark.parametrize("site", SITES)
@pytest.mark.parametrize("path", UNSEEN, ids=[p.stem for p in UNSEEN])
def test_every_log_reads_and_replays_sensibly(path: Path, site: str) -> None:
    """Every drawn window (seeds 1-3) holds arrivals of jobs that ran; every replayed job ran
    in the log, fits the site and its partition, arrives within the replay; the site's
    utilization is the log's within what whole CPUs allow; a plan without jobs says why."""
    rows = swf_rows(path)
    ran = _ran(rows)
    log = read_swf(path)
    for plan in sound_replays(log, site, ran):
        assert 0 < plan.log_utilization <= 1.0, plan.summary()
        if not plan.jobs:
            assert any("thinned" in n for n in plan.notes), plan.summary()
        for j in plan.jobs:
            assert 0 <= j.at_s <= 600 and j.runtime_s > 0


# ---- a log read from a pipe, streamed -----------------------------------------------------

class _Pipe:
    """A pipe a thread fills lazily from `chunks`; `path` is what a shell's `<(command)`
    gives (/dev/fd/N). The bytes exist only while they pass: nothing holds the whole log."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._read, write = os.pipe()
        self.path = f"/dev/fd/{self._read}"
        self.written = 0

        def feed() -> None:
            try:
                with os.fdopen(write, "wb") as fh:
                    for chunk in chunks:
                        fh.write(chunk)
                        self.written += len(chunk)
            except BrokenPipeError:
                pass  # the reader stopped early (an error): nothing more to give it

        self._thread = threading.Thread(target=feed, daemon=True)
        self._thread.start()

    def __enter__(self) -> _Pipe:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self._read)
        self._thread.join(timeout=30)


@pytest.mark.parametrize("pack", [None, gzip.compress, lzma.compress],
                         ids=["plain", "gzip", "xz"])
def test_a_log_read_from_a_pipe_is_the_log_read_from_its_file(pack) -> None:
    """`--trace <(xzcat log.swf.xz)`: the pipe can be read once. Before: the reader opened
    it three times (its compression, its byte-order mark, its text), the first two opens
    took the first 8 KB, and the log read as "no job lines" or without its head."""
    path = FIXTURES / "v22_notes.swf"
    data = path.read_bytes()
    data = pack(data) if pack else data
    with _Pipe(data[k:k + 1000] for k in range(0, len(data), 1000)) as pipe:
        log = read_swf(pipe.path)
    want = read_swf(path)
    assert log.jobs == want.jobs and log.max_procs == want.max_procs == 256
    assert log.name == pipe.path and want.name == "v22_notes"  # not "63"
    with pytest.raises(BadInput, match=rf"--start -5 is outside the log {pipe.path} "):
        plan_replay(log, cluster("alpha"), start=-5)


def test_a_large_log_is_streamed_not_held(tmp_path: Path) -> None:
    """A log of 30,000 jobs among 24 MB of comment lines, generated as it is read: the
    reader holds the jobs it parsed, never the text (peak well under what passed)."""
    def chunks() -> Iterator[bytes]:
        note = b"; Note: " + b"x" * 192 + b"\n"
        yield b"; Version: 2.2\n; MaxProcs: 256\n"
        for n in range(1, 30_001):
            yield note * 4 + (f"{n} {n * 9} {n % 700} {n % 300 + 1} {1 << n % 5} -1 -1 "
                              f"{1 << n % 5} 7200 -1 1 {n % 50} 1 -1 1 1 -1 -1\n").encode()

    with traced_memory() as memory, _Pipe(chunks()) as pipe:
        log = read_swf(pipe.path)
    assert len(log.jobs) == 30_000 and log.max_procs == 256
    assert pipe.written > 24_000_000
    assert memory.peak < pipe.written / 2 and memory.held < 400 * len(log.jobs), memory


def test_the_command_line_reads_a_log_on_its_standard_input() -> None:
    """`xzcat log.swf.xz | diamond testbed load --trace /dev/stdin ...`: the same plan as the
    file's."""
    path = FIXTURES / "queues.swf"
    args = ["testbed", "load", "--site", "beta", "--seed", "4", "--dry-run", "--json"]
    run = [sys.executable, "-m", "diamond_jupyter.cli"]
    piped = subprocess.run([*run, *args, "--trace", "/dev/stdin"], capture_output=True,
                           input=lzma.compress(path.read_bytes()), timeout=120)
    plain = subprocess.run([*run, *args, "--trace", str(path)], capture_output=True,
                           timeout=120)
    assert piped.returncode == plain.returncode == 0, (piped.stderr, plain.stderr)
    want = json.loads(plain.stdout)
    assert want["jobs"] and json.loads(piped.stdout)["jobs"] == want["jobs"]


# ---- windows ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["mostly_cancelled", "tail_cancelled"])
def test_a_drawn_window_holds_jobs_that_ran_not_only_cancelled_ones(name: str) -> None:
    """mostly_cancelled.swf: 600 submissions over ten days cancelled in the queue, the jobs
    that ran on days 3 and 8 only; tail_cancelled.swf: its last day only cancelled. Before:
    a window holding a cancelled submission counted as one with arrivals, and 2-3 of seeds
    1-3 replayed nothing, saying no job ran there."""
    rows = swf_rows(FIXTURES / f"{name}.swf")
    ran = _ran(rows)
    assert len(ran) < len(rows)
    log = read_swf(FIXTURES / f"{name}.swf")
    for seed in range(1, 21):
        plan = plan_replay(log, cluster("beta"), seed=seed)
        assert plan.arrivals_in_log > 0 and plan.jobs, (seed, plan.summary())
        start, end = plan.window
        assert any(start <= r[1] < end for r in rows if int(r[0]) in ran)
        again = plan_replay(log, cluster("beta"), seed=seed)
        assert (again.window, again.jobs) == (plan.window, plan.jobs)


def test_a_window_in_a_cancelled_tail_says_no_job_ran_there() -> None:
    rows = swf_rows(FIXTURES / "tail_cancelled.swf")
    last_ran = max(r[1] + max(r[2], 0) + r[3] for r in rows if int(r[0]) in _ran(rows))
    log = read_swf(FIXTURES / "tail_cancelled.swf")
    plan = plan_replay(log, cluster("alpha"), start=last_ran + 1, duration_s=60)
    assert plan.jobs == [] and "no job of the log ran, waited or arrived" in plan.notes[-1]


def test_a_window_whose_few_jobs_are_all_thinned_out_says_so() -> None:
    """few_jobs.swf: a dozen jobs of 4-16 of 512 processors in ten days. On a site of 8 or
    16 CPUs each is a whole CPU, several times the log's load: thinning may keep none.
    Before: the plan said no job ran, waited or arrived in the window (and advised another
    window), while the log's jobs were there."""
    log = read_swf(FIXTURES / "few_jobs.swf")
    emptied = 0
    for site in (_small(1, 8), _small(2, 8), cluster("alpha")):
        for seed in range(1, 11):
            plan = plan_replay(log, site, seed=seed)
            in_window = plan.running_at_start + plan.queued_at_start + plan.arrivals_in_log
            assert in_window > 0, plan.summary()
            if plan.jobs:
                continue
            emptied += 1
            assert not any("no job of the log ran" in n for n in plan.notes), plan.notes
            [note] = [n for n in plan.notes if "thinned out" in n]
            assert f"the {in_window} job(s) of the log in this window" in note
            assert f"of {site.name}'s {site.nodes * site.cpus} CPUs" in note
    assert emptied > 0


# ---- a daylight-saving change in a log kept in local time ---------------------------------

def test_negative_waits_and_runs_of_a_clock_set_back_are_named() -> None:
    """dst.swf (TimeZoneString Europe/Berlin, recorded in local time): jobs waiting or
    running over the night the clock went back an hour show a wait or run an hour short,
    below zero for short ones. Before: those runs were dropped and those waits taken as 0
    without a word. Now a note counts them and says how each is taken."""
    rows = swf_rows(FIXTURES / "dst.swf")
    odd = [r for r in rows if r[2] < -1 or r[3] < -1]
    negative_run = {int(r[0]) for r in rows if r[3] < 0}
    negative_wait = {int(r[0]): r for r in rows if r[2] < 0 and r[3] > 0}
    assert negative_run and negative_wait
    log = read_swf(FIXTURES / "dst.swf")
    [note] = [n for n in log.notes if "wait or run time below -1" in n]
    first = odd[0]
    assert note.startswith(f"{len(odd)} job(s) have a wait or run time below -1 (unknown) "
                           f"(e.g. job {int(first[0])}: wait {first[2]:g}, run {first[3]:g})")
    assert "daylight saving" in note
    plan = plan_replay(log, cluster("beta"), start=log.span[0], duration_s=whole_window(log))
    assert note in plan.notes
    replayed = {replay_number(j.name) for j in plan.jobs}
    assert not replayed & negative_run  # a run of unknown length: no load
    assert set(negative_wait) <= replayed
    # a wait taken as unknown: its start simulated, as a wait of -1's is (session 24; before,
    # it ran from its submission): a minute after it, it waits or runs, and the rest of its
    # run is replayed
    number, r = next(iter(negative_wait.items()))
    later = plan_replay(log, cluster("beta"), start=r[1] + 60, duration_s=1, scale=1)
    [job] = [j for j in later.jobs if replay_number(j.name) == number]
    assert (job.name.startswith("trace-wait-") and job.runtime_s == r[3]) or (
        job.name.startswith("trace-run-") and r[3] - 60 <= job.runtime_s < r[3])
    assert any("simulated" in n and "no recorded wait" in n for n in later.notes)


def test_a_fraction_of_a_second_below_zero_is_rounding_not_a_clock(tmp_path: Path) -> None:
    """Floating-point times: a start rounded to before its submission (wait -0.25), a run
    under half a second written -0.5. No clock note; the run is no load, as a run of 0."""
    p = tmp_path / "float.swf"
    p.write_text("; MaxProcs: 8\n"
                 "1 0.5 -0.25 100.5 4 -1 -1 4 600 -1 1 1 1 -1 1 1 -1 -1\n"
                 "2 10 0 -0.5 2 -1 -1 2 600 -1 1 1 1 -1 1 1 -1 -1\n")
    log = read_swf(p)
    assert log.notes == ()
    plan = plan_replay(log, cluster("alpha"), start=0.5, duration_s=20, scale=1)
    assert [(j.name, j.runtime_s) for j in plan.jobs] == [("trace-arrive-1", 100.5)]


# ---- queues of different limits -----------------------------------------------------------

def test_requests_are_kept_as_written_and_one_over_every_partition_is_named() -> None:
    """queues.swf: queues of one hour, twelve hours and a week, a quarter of the jobs
    without a request. Replayed whole on gamma at --scale 1 (partitions of 30 min, the
    default, and two days): a request that fits 30 min stays in the default, a longer one
    goes to `long`, each limit the request (or the run, where longer) in whole minutes; a
    week's request is cut to two days and a note says how many were. Before: cut without a
    word. A job without a request asks for the header's MaxRuntime, a week (sweep 15;
    before: the default partition's limit where its run fit it)."""
    rows = {int(r[0]): r for r in swf_rows(FIXTURES / "queues.swf")}
    log = read_swf(FIXTURES / "queues.swf")
    plan = plan_replay(log, cluster("gamma"), start=log.span[0], duration_s=whole_window(log, 1),
                       scale=1)
    over = []
    for j in plan.jobs:
        r = rows[replay_number(j.name)]
        if r[8] > 0:
            asked = math.ceil(max(r[8], r[3]) / 60)
            want = (None, asked) if asked <= 30 else ("long", min(asked, 2880))
            assert (j.partition, j.walltime_min) == want, (j, r)
            if math.ceil(r[8] / 60) > 2880:
                over.append(j.name)
        else:  # none: the header's MaxRuntime, a week, cut to `long`'s two days
            assert (j.partition, j.walltime_min) == ("long", 2880), (j, r)
            over.append(j.name)
    assert over
    [note] = [n for n in plan.notes if "asked for more time" in n]
    assert note.startswith(f"{len(over)} job(s) asked for more time than gamma's longest "
                           f"partition allows (e.g. {over[0]}: 10080 min at --scale 1, the "
                           "limit 2880 min)")
    at_60 = plan_replay(log, cluster("gamma"), start=log.span[0], duration_s=whole_window(log))
    assert not any("asked for more time" in n for n in at_60.notes)  # a week is 168 min


# ---- --scale at its extremes ---------------------------------------------------------------

@pytest.mark.parametrize("scale", [1e4, 1e9])
def test_a_huge_scale_keeps_every_job_that_ran_a_job_that_runs(scale: float) -> None:
    """At --scale 1e9 the whole log arrives within a second and every run is under a
    millisecond. Before: runtimes rounded to 0 s (a job that ran replayed as none, the
    plan's utilization a fiction) without a word; now each runs the plan's shortest time,
    0.01 s, and a note counts them."""
    rows = {int(r[0]): r for r in swf_rows(FIXTURES / "v22_notes.swf")}
    log = read_swf(FIXTURES / "v22_notes.swf")
    plan = plan_replay(log, cluster("beta"), start=log.span[0], duration_s=600, scale=scale)
    assert plan.arrivals_in_log == len(_ran(list(rows.values())))
    short = [j for j in plan.jobs if rows[replay_number(j.name)][3] / scale < 0.005]
    assert short
    for j in plan.jobs:
        r = rows[replay_number(j.name)]
        assert j.runtime_s == max(0.01, round(r[3] / scale, 2)), (j, r)
        assert j.at_s == round((r[1] - log.span[0]) / scale, 3) and j.walltime_min == 1
    [note] = [n for n in plan.notes if "ran less than 0.01 real seconds" in n]
    floored = [j for j in plan.jobs if round(rows[replay_number(j.name)][3] / scale, 2) < 0.01]
    assert note.startswith(f"{len(floored)} job(s) ran less than 0.01 real seconds at "
                           f"--scale {scale:g}")


def test_the_smallest_scale_cuts_runs_at_the_longest_partition_and_says_so() -> None:
    """--scale 0.001: a second of the log is a thousand real seconds; each run that is more
    than the longest partition is cut there (a note), none is longer than its limit."""
    log = read_swf(FIXTURES / "v22_notes.swf")
    plan = plan_replay(log, cluster("alpha"), seed=2, scale=0.001)
    assert plan.window[1] - plan.window[0] == pytest.approx(0.6)
    assert plan.jobs and all(j.walltime_min <= 24 * 60 for j in plan.jobs)
    assert any("longer than alpha's longest partition" in n for n in plan.notes)


def test_a_keep_probability_just_under_one_is_not_written_as_one() -> None:
    """Before: "jobs kept with probability 1.00" for 0.998 (some jobs were dropped)."""
    log = read_swf(FIXTURES / "v22_notes.swf")
    seen = []
    for scale in (1e3, 1e4, 1e5):
        plan = plan_replay(log, cluster("beta"), start=log.span[0], duration_s=600, scale=scale)
        for n in plan.notes:
            if n.startswith("jobs kept with probability "):
                p = n.split()[4].rstrip(":")
                seen.append(p)
                assert 0 < float(p) < 1 and p not in ("1.00", "0.00"), n
    assert any(float(p) > 0.995 for p in seen), seen


# ---- windows past the log's end, and a start given as a Unix time -------------------------

@pytest.mark.parametrize("name", ["dst", "v22_notes"])
def test_a_start_given_as_a_unix_time_is_refused_with_the_log_seconds_it_means(
        name: str) -> None:
    """Both logs say `UnixStartTime`: log second 0. A user who turns a date into seconds
    gives a Unix time; the error says which --start that moment is. Before: only the log's
    range, in seconds no user had in mind."""
    rows = swf_rows(FIXTURES / f"{name}.swf")
    header = dict(line[1:].strip().split(": ", 1) for line in
                  (FIXTURES / f"{name}.swf").read_text().splitlines()
                  if line.startswith("; UnixStartTime"))
    unix = int(header["UnixStartTime"])
    log = read_swf(FIXTURES / f"{name}.swf")
    assert log.unix_start == unix
    moment = rows[len(rows) // 2][1]
    with pytest.raises(BadInput) as e:
        plan_replay(log, cluster("alpha"), start=unix + moment)
    message = str(e.value)
    assert f"--start {unix + moment:.10g} is outside the log {name}" in message
    assert message.endswith(f"reads as a Unix time: log seconds count from the log's "
                            f"UnixStartTime {unix}, so that moment is --start {moment:.10g}")
    assert "\n" not in message
    plan = plan_replay(log, cluster("alpha"), start=moment)  # what the message advises
    assert plan.window[0] == moment


def test_a_start_past_the_end_names_the_range_and_no_unix_time() -> None:
    """Past the last submission, a log second (not a Unix time): the range alone."""
    log = read_swf(FIXTURES / "dst.swf")
    with pytest.raises(BadInput) as e:
        plan_replay(log, cluster("alpha"), start=log.span[1] + 3600)
    message = str(e.value)
    assert message == (f"--start {log.span[1] + 3600:.10g} is outside the log dst (its jobs "
                       f"were submitted between {log.span[0]:.0f} and {log.span[1]:.0f} s)")
    no_header = read_swf(FIXTURES / "few_jobs.swf")
    assert no_header.unix_start is None
    with pytest.raises(BadInput, match=r"submitted between \d+ and \d+ s\)$"):
        plan_replay(no_header, cluster("alpha"), start=1_066_946_400 + no_header.span[0])


# ---- the plan, computed here from the lines ------------------------------------------------

def _expected(path: Path, machine: int, c: ClusterDef, start: float, end: float,
              scale: float) -> dict[int, tuple[str, float, float, int]]:
    """Job number -> (kind, arrival, runtime, CPUs) of every job a replay of [start, end)
    may submit, from the log's lines: a summary line stands for its partial executions, a
    wait below zero is unknown (started when submitted), a job that ran with a size loads."""
    rows = swf_rows(path)
    summarized = {int(r[0]) for r in rows if r[10] not in (2, 3, 4)}
    out = {}
    for r in sorted(rows, key=lambda r: (r[1], r[0])):
        number, submit, wait, run = int(r[0]), r[1], r[2], r[3]
        size = int(r[4] if r[4] > 0 else r[7])
        if r[10] in (2, 3, 4) and number in summarized or run <= 0 or size <= 0:
            continue
        began = submit + max(wait, 0)
        total = c.nodes * c.cpus
        cpus = min(total, max(1, round(size / machine * total)))
        if start <= submit < end:
            out[number] = ("arrive", round((submit - start) / scale, 3), run, cpus)
        elif submit < start < began:
            out[number] = ("wait", 0.0, run, cpus)
        elif submit < start and began <= start < began + run:
            out[number] = ("run", 0.0, began + run - start, cpus)
    return {n: (k, at, max(0.01, round(run / scale, 2)), cpus)
            for n, (k, at, run, cpus) in out.items()}


@pytest.mark.parametrize("path", UNSEEN, ids=[p.stem for p in UNSEEN])
def test_each_plan_is_the_logs_window_rebuilt_compressed_and_sized(path: Path) -> None:
    """For drawn windows on alpha and on a site of 2 x 2 CPUs: the queue standing at the
    window's start (running and waiting jobs, from submit + wait) and the arrivals in it,
    each arrival at its offset divided by --scale, each runtime divided by it, each size
    its share of the site's CPUs; thinning only drops jobs, the waiting ones in submit
    order."""
    log = read_swf(path)
    for c in (cluster("alpha"), _small(2, 2)):
        for seed, scale in ((1, 60.0), (2, 600.0)):
            plan = plan_replay(log, c, seed=seed, duration_s=600, scale=scale)
            want = _expected(path, log.max_procs, c, *plan.window, scale)
            got = [replay_number(j.name) for j in plan.jobs]
            assert set(got) <= set(want)
            kinds = [want[n][0] for n in got]  # the queue's counts are of the jobs kept
            assert (plan.running_at_start, plan.queued_at_start, plan.arrivals_kept) == (
                kinds.count("run"), kinds.count("wait"), kinds.count("arrive")), plan.summary()
            assert plan.arrivals_in_log == [k for k, *_ in want.values()].count("arrive")
            waiting = [n for n in got if want[n][0] == "wait"]
            assert waiting == [n for n in want if n in waiting]
            for j in plan.jobs:
                kind, at_s, runtime_s, cpus = want[replay_number(j.name)]
                assert j.name.startswith(f"trace-{kind}-") and j.at_s == at_s, j
                assert j.runtime_s == runtime_s, j
                assert j.nodes == math.ceil(cpus / c.cpus)
                assert j.cpus_per_node == math.ceil(cpus / j.nodes)


# ---- headers -------------------------------------------------------------------------------

def test_a_version_22_header_with_notes_sizes_the_machine_by_maxprocs() -> None:
    """v22_notes.swf: every 2.2 header field, Note lines (one names "MaxProcs: 512" in its
    text, one goes on over the next comment line), MaxNodes 64 of four processors and
    MaxProcs 256; jobs in processors held more than 64 at once. The machine is 256, nothing
    assumed; a job of 128 is half of alpha."""
    rows = swf_rows(FIXTURES / "v22_notes.swf")
    log = read_swf(FIXTURES / "v22_notes.swf")
    assert log.max_procs == 256 and log.notes == () and len(log.jobs) == len(rows)
    half = next(r for r in rows if r[4] == 128)
    plan = plan_replay(log, cluster("alpha"), start=half[1], duration_s=1)
    [job] = [j for j in plan.jobs if replay_number(j.name) == int(half[0])]
    assert (job.nodes, job.cpus_per_node) == (2, 8)


def test_more_nodes_than_processors_in_the_header_is_a_machine_of_its_processors() -> None:
    """nodes_over_procs.swf: MaxNodes 96, MaxProcs 64 (a header typed wrong); jobs up to 32
    filled the 64. Not counted in nodes: a job of 32 is half of beta's 128 CPUs."""
    rows = swf_rows(FIXTURES / "nodes_over_procs.swf")
    log = read_swf(FIXTURES / "nodes_over_procs.swf")
    assert log.max_procs == 64 and log.notes == ()
    big = next(r for r in rows if r[4] == 32)
    plan = plan_replay(log, cluster("beta"), start=big[1], duration_s=1)
    [job] = [j for j in plan.jobs if replay_number(j.name) == int(big[0])]
    assert job.nodes * job.cpus_per_node == 64


@pytest.mark.parametrize("name", ["overuse_true", "requested_over_used"])
def test_sizes_are_what_jobs_were_given_not_what_they_asked(name: str) -> None:
    """overuse_true.swf (AllowOveruse: true): a third of the jobs got twice what they asked
    for, a third ran up to three times their requested time; requested_over_used.swf
    (false): jobs asked for up to four times what they got, some for 1,000 of 64. Each is
    sized by its allocated count (field 5), the machine stays 64, and each limit is its
    request, or its run where that was longer."""
    rows = {int(r[0]): r for r in swf_rows(FIXTURES / f"{name}.swf")}
    assert any(r[7] != r[4] for r in rows.values())
    log = read_swf(FIXTURES / f"{name}.swf")
    assert log.max_procs == 64 and log.notes == ()
    assert {j.number: j.procs for j in log.jobs} == {n: int(r[4]) for n, r in rows.items()}
    plan = plan_replay(log, cluster("beta"), start=log.span[0], duration_s=whole_window(log))
    assert len(plan.jobs) == len(rows)
    for j in plan.jobs:
        r = rows[replay_number(j.name)]
        assert j.nodes * j.cpus_per_node == 2 * r[4]  # beta has twice the 64
        assert j.walltime_min == max(1, math.ceil(max(r[8], r[3]) / 3600)), (j, r)


# ---- order ---------------------------------------------------------------------------------

def test_lines_grouped_by_queue_plan_as_their_copy_in_submit_order(tmp_path: Path) -> None:
    """unsorted_queues.swf: three runs of lines, one per queue, each in submit order."""
    text = (FIXTURES / "unsorted_queues.swf").read_text().splitlines()
    jobs = [t for t in text if not t.startswith(";")]
    assert [float(t.split()[1]) for t in jobs] != sorted(float(t.split()[1]) for t in jobs)
    copy = tmp_path / "unsorted_queues.swf"  # the same name: the same seeded draws
    copy.write_text("\n".join([t for t in text if t.startswith(";")]
                              + sorted(jobs, key=lambda t: float(t.split()[1]))) + "\n")
    for site in ("alpha", "delta"):
        for seed in (1, 2, 3):
            a = plan_replay(read_swf(FIXTURES / "unsorted_queues.swf"), cluster(site), seed=seed)
            b = plan_replay(read_swf(copy), cluster(site), seed=seed)
            assert a.jobs and (a.window, a.jobs) == (b.window, b.jobs)


def test_partial_executions_before_their_summary_count_once_as_the_summary() -> None:
    """preempt_parts_first.swf (Preemption: Yes): a job's parts (status 2, then 3 or 4) come
    before its summary line. Each job is replayed once, with the summary's whole run."""
    rows = swf_rows(FIXTURES / "preempt_parts_first.swf")
    parts = {int(r[0]) for r in rows if r[10] in (2, 3, 4)}
    assert parts and len(rows) > len({int(r[0]) for r in rows})
    summary = {int(r[0]): r for r in rows if r[10] == 1}
    log = read_swf(FIXTURES / "preempt_parts_first.swf")
    assert {j.number: j.run for j in log.jobs} == {n: r[3] for n, r in summary.items()}
    plan = plan_replay(log, cluster("beta"), start=log.span[0], duration_s=whole_window(log))
    names = [j.name for j in plan.jobs]
    assert len(names) == len(set(names)) == len(summary)
    assert not any("." in n for n in names)  # no second copy of a job


# ---- a site smaller than any job -----------------------------------------------------------

@pytest.mark.parametrize("nodes, cpus", [(1, 1), (1, 2), (2, 2)])
def test_a_site_with_fewer_cpus_than_the_smallest_job_is_loaded_as_the_log_was(
        nodes: int, cpus: int) -> None:
    """big_jobs.swf: jobs of 128 to 1,024 of 1,024 processors. On a site of 1-4 CPUs the
    smallest is still one CPU (an eighth of the machine at most): each fits the site, and
    thinning brings its load to the log's within one job's share."""
    log = read_swf(FIXTURES / "big_jobs.swf")
    assert min(j.procs for j in log.jobs) == 128 and log.max_procs == 1024
    site = _small(nodes, cpus)
    total = nodes * cpus
    misses = []
    for seed in range(1, 11):
        plan = plan_replay(log, site, seed=seed)
        for j in plan.jobs:
            assert 1 <= j.nodes <= nodes and 1 <= j.cpus_per_node <= cpus
        if plan.log_utilization <= 1.0:
            misses.append(abs(plan.site_utilization - plan.log_utilization))
    assert misses and max(misses) <= 1 / total + 0.05, misses
    assert sum(misses) / len(misses) < 0.1, misses


@pytest.mark.parametrize("pack", [None, gzip.compress, lzma.compress],
                         ids=["plain", "gzip", "xz"])
def test_reading_a_log_leaves_no_file_open(tmp_path: Path, pack) -> None:
    """A decompressor does not close a stream it was handed: the file under it is closed
    with the text read from it."""
    from diamond_jupyter.testbed.trace import open_swf

    data = (FIXTURES / "few_jobs.swf").read_bytes()
    path = tmp_path / "few_jobs.swf"
    path.write_bytes(pack(data) if pack else data)
    fds = set(os.listdir("/proc/self/fd"))
    fh = open_swf(path)
    assert fh.readline().startswith("; Version: 2.2")
    opened = set(os.listdir("/proc/self/fd")) - fds
    assert opened
    fh.close()
    assert not (set(os.listdir("/proc/self/fd")) - fds) & opened
