"""Replay a real center's log (Standard Workload Format) as one test-bed site's background load.

A window of the log is chosen (`start`, or drawn from `seed`), then:
- the queue that stood at the window's start is rebuilt from each job's submit and wait
  times: jobs running then are submitted at t = 0 with what was left of their runtime and of
  their walltime request, jobs waiting then are submitted at t = 0 behind them, in submit
  order; where the log records no waits (-1), the starts are those of its machine simulated
  first come first served with EASY backfilling (`trace_sim`), said in the notes;
- arrivals inside the window are submitted at their offset from its start, divided by
  `scale` (center seconds per real second), as are runtimes and walltime requests;
- sizes are mapped by share of the machine: a job that had 25 of the log's 100 processors
  gets 25% of the site's CPUs (at least one), spread over as few nodes as hold them; where
  shares rounded down leave the site less loaded than the log (a machine a little smaller
  than the site), the jobs that lost most by it are rounded up instead;
- each walltime request stays what its user wrote (scaled the same way, in whole Slurm
  minutes), so the site's own scheduler estimates from requests that over-estimate runtimes
  as they do at real centers; a request longer than the default partition allows goes to a
  partition that holds it; a job without a request asks for its queue's MaxRuntime (the
  header's "; Queue: N name [MaxRuntime: S]" line), else the header's MaxRuntime (its
  center's limit, what its scheduler gave such a job), else gets the limit of the default
  partition, as a scheduler gives it, or of the partition that holds its runtime when the
  default's would cut it short (its center had a queue that let it run);
- a submission in the window that is no load (it never ran, ran 0 s, or gives no size) is
  not replayed, and counted by reason in the plan's `skipped` and its notes;
- jobs are thinned (Bernoulli with one probability, seeded) so that the site's CPU
  utilization over the window, computed from the mapped sizes and the log's own start and
  end times, matches the log's in that window: rounding small jobs up to a whole CPU would
  otherwise load a small site more than the center was. Of several seeded draws the one
  nearest the log's utilization is kept: on a site of a few CPUs one draw misses it by what
  a few whole-CPU jobs weigh;
- a job that ran past its request (its center let it) gets its runtime as its limit;
- a dependent job (field 17 names its preceding job) whose predecessor is replayed too is
  submitted at its own time but held until the predecessor ends (`LoadJob.after`) and its
  think time (field 18, scaled) has passed after that (`LoadJob.think_s`), so the pair keeps
  its order and its gap when the site runs the predecessor later than the log did;
- the parts of a preempted or checkpointed job without its summary line run one after
  another: each is held until the part before it ends and the time the job was out passed;
- a log of several machines in its partition field (a grid's clusters) replays one of them
  when asked (`one_partition`): its jobs alone, sized by that partition's processors;
- what reading assumed (a header that counts other units than the jobs do, a request
  larger than the machine) and what the site cannot do (more work than its machine, a run
  longer than its longest partition) is said in the plan's notes.

A log is read once and kept as columns of numbers (`JobTable`); a plan makes job objects
of its window's jobs only (a window at the end of a log of 200,000 jobs makes a few
hundred).

Pure: reading a log and planning are free of I/O besides the file read; `load.run` submits.
"""

from __future__ import annotations

import bisect
import bz2
import codecs
import dataclasses
import datetime as dt
import functools
import gzip
import heapq
import io
import lzma
import math
import random
import re
import zlib
import zoneinfo
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TextIO

from ..digits import ascii_digits
from ..model import BadInput
from .clusters import ClusterDef
from .load import LoadJob, _max_minutes
from .trace_sim import SIM_MAX_JOBS, SIM_WARMUP_S, Simulated, simulate_waits, unknown_waits

HISTORY_MAX = 2000  # history jobs a plan keeps at most (the calibration keeps 400 a class)
WARMUP_S = 86400.0  # a drawn window starts at least a day into the log: its queue has formed
REDRAWS = 20  # draws of a window before one with no arrival is replayed as it is
PARTIAL_STATUS = (2, 3, 4)  # SWF status of one part of a checkpointed or swapped job
SWF_STATUS = frozenset((-1, 0, 1, *PARTIAL_STATUS, 5))  # field 11's values in the format
# A MaxProcs header exceeded at once by this much (jobs with known starts) counts something
# else than the jobs do (nodes of several processors): a log's own rounding of times
# overlaps a few jobs by seconds, a few percent at most
HEADER_SHORT = 1.1
# A MaxProcs header this many times what the log's jobs ever held at once, over at least
# HEADER_LONG_JOBS jobs that ran from known starts, is said: a typo or a header copied from
# another log, or a grid's log of a few of its jobs (LCG's), which the replay thins to little
HEADER_LONG = 100
HEADER_LONG_JOBS = 100
# Jobs counted in nodes on a machine whose header gives MaxProcs = k x MaxNodes: no job and
# no moment over MaxNodes, and a moment at least this full of it
NODE_FILL = 0.75
# The shortest replayed run (real seconds): a plan's runtimes are in hundredths, and a job
# that ran in the log is not replayed as one that did not (at a large --scale)
MIN_RUNTIME_S = 0.01
# A flurry in a raw log: one user's burst, at least this many of a window's arrivals and
# this share of them, and this many times that user's share of the whole log's jobs
FLURRY_JOBS = 100
FLURRY_SHARE = 0.5
FLURRY_OVER = 4.0
THIN_DRAWS = 200  # seeded thinning draws, the nearest the log's utilization kept
QUIET = 0.1  # a window this much less busy than its whole log is said to be a quiet spell
THIN_CLOSE = 0.01  # a draw within this share of the target ends the search
# Slowest replay: a thousand real seconds per center second (slower makes a log's runtimes
# overflow a float, and is no replay of a center)
MIN_SCALE = 1e-3
# A log whose first submission is this many seconds or more counts Unix times (1973 on),
# not seconds from its start
UNIX_LIKE = 1e8
# A UnixStartTime this large (the year 5138 in seconds) counts milliseconds (a converter's
# Java or JavaScript clock), or finer: no second 0 of a log
UNIX_MILLIS = 10**11
# Where a log is read from: its first bytes say how it was compressed, whatever its name
COMPRESSED = ((b"\x1f\x8b", "gzip", gzip.open), (b"BZh", "bzip2", bz2.open),
              (b"\xfd7zXZ\x00", "xz", lzma.open))
# What decompressing a cut-off or damaged log raises (BadGzipFile is an OSError; zlib.error
# is gzip's damaged data, a flipped byte); bz2's is an OSError without an errno
DAMAGED = (EOFError, gzip.BadGzipFile, lzma.LZMAError, zlib.error)
# The header fields read, by their names without spaces or underscores in lower case (a
# header retyped by hand: "; maxprocs: 128", "; Max Procs: 128")
HEADER_KEYS = {key.lower(): key for key in ("MaxProcs", "MaxNodes", "UnixStartTime",
                                             "MaxRecords", "MaxJobs", "Partition",
                                             "MaxRuntime", "Queue")}
HEADER_KEYS["partitions"] = "Partition"  # "; Partitions: 1 thin (...)", one a line
# A header line's key and value: "MaxProcs: 128" as the archive writes it, and as typed by
# hand, "MaxProcs = 128" or "MaxProcs 128" (a key of words, then its number)
_HEADER_SPLIT = re.compile(r"\s*([A-Za-z][A-Za-z _]*?)\s*(?:[:=]|\s(?=\s*[0-9]))\s*(.*)")
NOT_READ = ((b"PK\x03\x04", "a zip archive"), (b"(\xb5/\xfd", "compressed with zstd"),
            (b"7z\xbc\xaf", "a 7-Zip archive"), (b"\x1f\x9d", "compressed with Unix compress"),
            (b"LZIP", "compressed with lzip"))
NESTED = 3  # layers of compression unpacked (a gzip file gzipped again by a server)
# Comment text read for what its words say (a node's processors, partitions, StartTime):
# a cleaned log lists its filters, one a line, in thousands of lines at times; past this a
# comment line's words are not read (said), its header fields still are
HEADER_TEXT_CHARS = 256 * 1024  # some 4,000 lines of a filter list
# What a header's words say of a node's processors, where MaxProcs is not given: "8
# processors per node", "16-way SMP nodes", "each node has 2 CPUs", "(each with 4 CPUs)";
# and groups of nodes: "32 nodes of 2 CPUs, 25 nodes of 4 CPUs", "144 nodes x 8 cores"
_UNIT = r"(?:processors?|procs?|cores?|cpus?|pes?)"
_COUNT = (r"([0-9][0-9,]*|one|two|four|six|eight|twelve|sixteen|twenty-four|thirty-two|sixty-four"
          r"|single|dual|quad)")
PER_NODE = tuple(re.compile(p, re.IGNORECASE) for p in (
    rf"{_COUNT}\s*{_UNIT}\s*(?:per|/|a|each|in each|on each)\s*node",
    rf"{_COUNT}\s*-?\s*(?:{_UNIT}|way)\s+(?:smp\s+|shared[- ]memory\s+)?nodes",
    rf"(?:each|every|a|per)\s+node\s*(?:has|with|of|holds|:|=)?\s*{_COUNT}\s*{_UNIT}",
    rf"nodes?\s*(?:\(\s*)?(?:each\s+)?(?:with|having|has)\s+{_COUNT}\s*{_UNIT}",
    rf"\(\s*each\s+(?:with|has)\s+{_COUNT}\s*{_UNIT}\s*\)"))
NODE_GROUP = re.compile(rf"{_COUNT}\s+(?:[a-z-]+\s+)?nodes?\s*(?:of|with|x|\*|\u00d7)\s*"
                        rf"{_COUNT}\s*{_UNIT}", re.IGNORECASE)
# "32 2-way SMP nodes and 25 4-way SMP nodes", "100 dual-processor nodes"
NODE_GROUP_WAY = re.compile(rf"{_COUNT}\s+{_COUNT}\s*-?\s*(?:{_UNIT}|way)\s+"
                            rf"(?:smp\s+|shared[- ]memory\s+)?nodes?", re.IGNORECASE)
# A machine that allocates in blocks ("jobs are allocated in partitions of 512 cores", "the
# allocation unit is 16 nodes"): a job of fewer held a whole block
ALLOCATION_UNIT = re.compile(
    r"(?:allocat\w*\s+(?:in|by)\s+(?:\w+\s+)?(?:partitions|units|blocks|multiples|chunks|"
    r"groups|sets)\s+of|allocation\s+unit\s*(?:is|of|:|=)?)\s*([0-9][0-9,]*)\s*"
    r"(nodes?|cores?|processors?|procs?|cpus?)", re.IGNORECASE)
# A note that says the jobs' sizes count nodes ("; Note: job sizes are given in nodes",
# "; Note: processors are nodes", "; Note: field 5 counts nodes")
SIZES_IN_NODES = re.compile(
    r"(?:\b(?:job\s+)?sizes?|\b(?:allocated\s+|requested\s+)?processors?|"
    r"\bprocessor\s+counts?|\bprocs|\bfields?\s+5(?:\s+and\s+8)?)\s+"
    r"(?:(?:field|column|count)s?\s+)?"
    r"(?:are|is|counts?|gives?|means?|denotes?|represents?|refers?\s+to)\s+"
    r"(?:(?:actually|really|in\s+fact|always)\s+)?"
    r"(?:(?:given|counted|expressed|measured|recorded|reported)\s+)?(?:in\s+)?"
    r"(?:units\s+of\s+|(?:the\s+)?numbers?\s+of\s+)?(?:whole\s+|allocated\s+)?nodes\b",
    re.IGNORECASE)
_WORDS = {"single": 1, "dual": 2, "quad": 4, "one": 1, "two": 2, "four": 4, "six": 6,
          "eight": 8, "twelve": 12, "sixteen": 16, "twenty-four": 24, "thirty-two": 32,
          "sixty-four": 64}


@dataclass(frozen=True, slots=True)  # slots: a log has up to a few hundred thousand
class SwfJob:
    number: int
    submit: float  # seconds from the log's start
    wait: float
    run: float
    procs: int  # allocated (else requested) processors
    req_time: float  # requested walltime (s); -1 when the log does not say
    status: int
    copy: int = 0  # earlier lines of the log with the same job number
    by_request: bool = False  # sized by its requested processors (none allocated given)
    preceding: int = -1  # the job it waited for (field 17: submitted its think time after)
    think: float = -1.0  # field 18: seconds from the preceding job's end to this submission
    partition: int = -1  # field 16: the partition (on some logs a machine of its own) it ran in
    user: int = -1  # field 12: who submitted it (-1: not known)
    queue: int = -1  # field 15: the queue it was submitted to (-1: not known)

    @property
    def start(self) -> float:
        return self.submit + max(self.wait, 0.0)

    @property
    def end(self) -> float:
        return self.start + self.run


# A log's jobs column by column: (field, array type code). About 70 bytes a job, where a job
# object costs some 300; a window's jobs are made objects only when a plan replays them
_COLUMNS = (("number", "q"), ("submit", "d"), ("wait", "d"), ("run", "d"), ("procs", "q"),
            ("req_time", "d"), ("status", "q"), ("copy", "q"), ("by_request", "b"),
            ("preceding", "q"), ("think", "d"), ("partition", "q"), ("user", "q"),
            ("queue", "q"))


class JobTable:
    """Every job of a log as arrays of numbers, one per SWF field kept."""

    __slots__ = tuple(name for name, _ in _COLUMNS)

    def __init__(self) -> None:
        for name, code in _COLUMNS:
            setattr(self, name, array(code))

    @classmethod
    def of(cls, jobs: Iterable[SwfJob]) -> JobTable:
        table = cls()
        for j in jobs:
            table.add(j)
        return table

    def __len__(self) -> int:
        return len(self.submit)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JobTable) and all(
            getattr(self, name) == getattr(other, name) for name, _ in _COLUMNS)

    __hash__ = None  # type: ignore[assignment]  (its columns change while a log is read)

    def __repr__(self) -> str:
        return f"JobTable({len(self)} jobs)"

    def add(self, job: SwfJob) -> None:
        self.number.append(job.number)
        self.submit.append(job.submit)
        self.wait.append(job.wait)
        self.run.append(job.run)
        self.procs.append(job.procs)
        self.req_time.append(job.req_time)
        self.status.append(job.status)
        self.copy.append(job.copy)
        self.by_request.append(job.by_request)
        self.preceding.append(job.preceding)
        self.think.append(job.think)
        self.partition.append(job.partition)
        self.user.append(job.user)
        self.queue.append(job.queue)

    def row(self, i: int, wait: float | None = None) -> SwfJob:
        """Row `i` as a job (with `wait` for the log's where given: a simulated one)."""
        return SwfJob(number=self.number[i], submit=self.submit[i],
                      wait=self.wait[i] if wait is None else wait,
                      run=self.run[i], procs=self.procs[i], req_time=self.req_time[i],
                      status=self.status[i], copy=self.copy[i],
                      by_request=bool(self.by_request[i]), preceding=self.preceding[i],
                      think=self.think[i], partition=self.partition[i], user=self.user[i],
                      queue=self.queue[i])

    def take(self, rows: Iterable[int]) -> JobTable:
        """A table of these rows, in this order."""
        rows = list(rows)
        table = JobTable()
        for name, code in _COLUMNS:
            column = getattr(self, name)
            setattr(table, name, array(code, (column[i] for i in rows)))
        return table

    def ran(self, i: int) -> bool:
        """The job loaded the machine: it ran, and its size is known."""
        return self.run[i] > 0 and self.procs[i] > 0

    def window(self, start: float, end: float, waits: dict[int, float] | None = None
               ) -> Iterator[SwfJob]:
        """The jobs (in submit order) that ran and were running or waiting at `start` or
        were submitted before `end`: the only ones a replay of [start, end) makes objects
        of. `waits` (row -> wait) stands for the log's own where given (waits simulated
        where the log records none). The table must be in submit order."""
        submit, wait, run, procs = self.submit, self.wait, self.run, self.procs
        waits = waits or {}
        for i in range(len(submit)):
            s = submit[i]
            if s >= end:
                break
            if run[i] <= 0 or procs[i] <= 0:
                continue
            w = waits.get(i, wait[i])
            if s < start and s + max(w, 0.0) + run[i] <= start:
                continue  # ended before the window
            yield self.row(i, w)

    def ended_within(self, start: float, end: float, waits: dict[int, float] | None = None
                     ) -> Iterator[SwfJob]:
        """The jobs that ran and ended in [start, end), in submit order (`waits` as for
        `window`). The table must be in submit order."""
        submit, wait, run, procs = self.submit, self.wait, self.run, self.procs
        waits = waits or {}
        for i in range(len(submit)):
            s = submit[i]
            if s >= end:
                break
            w = waits.get(i, wait[i])
            if run[i] > 0 and procs[i] > 0 and start <= s + max(w, 0.0) + run[i] < end:
                yield self.row(i, w)


@dataclass(frozen=True)
class SwfLog:
    name: str
    max_procs: int
    table: JobTable  # every job, sorted by submit time (ties by job number)
    notes: tuple[str, ...] = ()  # what reading changed or assumed (every plan repeats it)
    unix_start: int | None = None  # the UnixStartTime header: the moment log second 0 is
    # the header's "; Partition: N name ..." lines: (N, its name or "", its processors where
    # the line says them, else 0)
    partitions: tuple[tuple[int, str, int], ...] = ()
    noted_partitions: frozenset[int] = frozenset()  # partitions sized by a note, not a line
    # a partition replayed alone: the span of the whole log's submissions (a --start inside
    # it is a moment of the center, whatever that partition did then)
    whole_span: tuple[float, float] | None = None
    # the header's MaxRuntime (s): its center's limit, the request of a job that gives none
    max_runtime: float | None = None
    # the header's "; Queue: N name ... MaxRuntime: S" lines: (N, S) of each queue whose line
    # gives its limit, the request of a job of that queue that gives none
    queue_limits: tuple[tuple[int, float], ...] = ()
    unit: str = "processors"  # what its sizes count: "nodes" where the log counts nodes
    cleaned: bool = False  # the archive's cleaned version (its header says so): no flurries

    def unasked_s(self, queue: int) -> float | None:
        """What a job of `queue` (field 15) that requests no time asks for: its queue's
        limit (the header's Queue line), else the log's MaxRuntime, else None."""
        return dict(self.queue_limits).get(queue) or self.max_runtime

    def asked_s(self, job: SwfJob) -> float:
        """The job's request (s): field 9, else what its queue gives a job without one
        (`unasked_s`), else field 9 as it is (-1 or 0)."""
        return job.req_time if job.req_time > 0 else self.unasked_s(job.queue) or job.req_time

    @functools.cached_property
    def user_jobs(self) -> dict[int, int]:
        """Jobs that ran, by user (known users only)."""
        t, counts = self.table, {}
        for i in range(len(t)):
            if t.user[i] > 0 and t.ran(i):
                counts[t.user[i]] = counts.get(t.user[i], 0) + 1
        return counts

    @functools.cached_property
    def jobs(self) -> tuple[SwfJob, ...]:
        """Every job as an object (a plan never asks for this: it takes its window's)."""
        return tuple(self.table.row(i) for i in range(len(self.table)))

    def with_jobs(self, jobs: Iterable[SwfJob]) -> SwfLog:
        """This log with other jobs (in submit order)."""
        return dataclasses.replace(self, table=JobTable.of(jobs))

    @functools.cached_property
    def utilization(self) -> float:
        """Busy processors / max_procs from the first submission to the last end."""
        busy, ends = self._busy_and_last_end
        first = self.span[0]
        return busy / (self.max_procs * (ends - first)) if ends > first else 0.0

    @property
    def last_end(self) -> float:
        """When the last job that ran ended (as the log records it)."""
        return self._busy_and_last_end[1]

    @functools.cached_property
    def _busy_and_last_end(self) -> tuple[float, float]:
        t = self.table
        busy, ends = 0.0, -math.inf
        for submit, wait, run, procs in zip(t.submit, t.wait, t.run, t.procs, strict=True):
            if run > 0 and procs > 0:
                busy += run * procs
                ends = max(ends, submit + max(wait, 0.0) + run)
        return busy, ends if ends > -math.inf else self.span[0]

    @property
    def span(self) -> tuple[float, float]:
        submit = self.table.submit
        return (submit[0], submit[-1]) if submit else (0.0, 0.0)

    def any_ran(self) -> bool:
        return any(map(self.table.ran, range(len(self.table))))

    def arrival_times(self) -> array:
        """The submit times (sorted) of the jobs that ran, else of every job."""
        t = self.table
        ran = array("d", (t.submit[i] for i in range(len(t)) if t.ran(i)))
        return ran or array("d", t.submit)


@dataclass(frozen=True)
class HistoryJob:
    """A job of the log that ended before the window, as the site's accounting would
    record it had the replay been running before: its times in real seconds relative to
    the replay's start (negative), its size mapped, its request scaled."""

    name: str
    submit_s: float
    start_s: float
    end_s: float
    nodes: int
    cpus: int
    walltime_min: int
    partition: str | None
    status: int  # SWF field 11: 1 completed, 0 failed, 5 cancelled
    started: bool = True  # False: cancelled while it waited (its start and end the cancel)


@dataclass
class ReplayPlan:
    site: str
    log: str
    window: tuple[float, float]  # log seconds [start, end)
    scale: float
    jobs: list[LoadJob]
    running_at_start: int
    queued_at_start: int
    arrivals_in_log: int
    arrivals_kept: int
    log_utilization: float  # busy processors / MaxProcs over the window, from the log
    site_utilization: float  # the same for the replay on the site's CPUs, after thinning
    notes: list[str] = field(default_factory=list)
    history: list[HistoryJob] = field(default_factory=list)  # ended before the window
    # submissions in the window not replayed, by reason (`not_replayed`)
    skipped: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict:
        return {"site": self.site, "log": self.log, "window_s": list(self.window),
                "scale": self.scale, "jobs": len(self.jobs),
                "running_at_start": self.running_at_start,
                "queued_at_start": self.queued_at_start,
                "arrivals_in_log": self.arrivals_in_log, "arrivals_kept": self.arrivals_kept,
                "log_utilization": round(self.log_utilization, 4),
                "site_utilization": round(self.site_utilization, 4),
                "history_jobs": len(self.history), "skipped": self.skipped,
                "notes": self.notes}


def read_swf(path: str | Path) -> SwfLog:
    """Parse an SWF log (plain, gzip, bzip2 or xz). BadInput names the file and line of a
    malformed one."""
    p = Path(path)
    if p.is_dir():
        logs = sorted(x.name for x in p.iterdir() if ".swf" in x.name)[:3]
        raise BadInput(f"the trace {p} is a directory: give one log file"
                       + (f" in it ({', '.join(logs)}, ...)" if logs else "")
                       + " (accepted: an SWF text file, plain or compressed with gzip, bzip2 "
                         "or xz)")
    given: dict[str, list[int]] = {}  # header field -> each value the log gives it
    unsized: dict[str, tuple[int, str, bool]] = {}  # MaxProcs/MaxNodes given as 0 or less,
    # a fraction or no number -> the first such line (number, text, whether 0 or less)
    unread: dict[str, tuple[int, str]] = {}  # a header count given as no whole number
    # ("MaxRuntime: 36:00:00") -> the first such line (number, text)
    comments: list[str] = []  # the first comment lines' text (what a Note says of nodes)
    comment_chars = 0  # their length
    unread_comments, first_unread_comment = 0, 0  # comment lines past HEADER_TEXT_CHARS
    dated: set[str] = set()  # StartTime, TimeZoneString: read among the comments already
    partition_lines: list[str] = []  # each "; Partition: 2 fat (128 processors)" after its key
    queue_lines: list[str] = []  # each "; Queue: 1 short [MaxRuntime: 3600]" after its key
    zero_limit: tuple[int, str] | None = None  # the first "MaxRuntime: 0" (line, text)
    cleaned = False
    table = JobTable()
    blocks = _Blocks()
    odd_statuses, first_odd = 0, (0, 0)  # job lines of a status SWF does not define; the
    # first one's (line, status)
    wide, first_wide = 0, (0, 0)  # job lines of more than SWF's 18 fields; the first one's
    # (line, fields)
    sizeless_seen: tuple[int, int, str, str] | None = None  # the first job line that ran
    # with no processor count: (line, job, field 5, field 8)
    unplaced, first_unplaced = 0, (0, 0)  # job lines of no submit time (field 2 is -1); the
    # first one's (line, job)
    fields_before = 0  # the fields of the job line before
    zeroed: tuple[int, int] | None = None  # the first line of NUL bytes alone: (line, bytes)
    holes, first_hole = 0, (0, 0)  # such lines with job lines after them; the first one's
    full_lines = 0  # job lines of all SWF's 18 fields (or more)
    short, first_short = 0, (0, 0)  # job lines of fewer; the first one's (line, fields)
    odd_think, first_odd_think = 0, (0, "")  # think times below 0 other than SWF's -1; the
    # first one's (line, field 18)
    cut_comments: list[tuple[int, int]] = []  # comment lines past MAX_LINE: (line, length)
    self_preceded, first_self = 0, (0, 0)  # jobs naming themselves in field 17; the first
    # one's (line, job)
    lineno = 0
    compressed = "text"
    try:
        compressed, fh = _open_swf(p)
        with fh:
            for lineno, line in enumerate(_bounded_lines(fh, p, cut_comments), 1):
                # a DOS end-of-file mark (Ctrl-Z) and NUL padding after the last line are
                # no data, nor the byte-order mark of a log joined after another (`cat`)
                text = line.strip().strip("\x00\x1a\ufeff").strip()
                if not text:
                    if "\x00" in line and zeroed is None:
                        zeroed = (lineno, line.count("\x00"))
                    continue
                if zeroed is not None:  # job lines after NULs: a hole inside, not padding
                    holes += 1
                    first_hole = first_hole if holes > 1 else zeroed
                    zeroed = None
                if text.startswith(";"):
                    # a cleaned log's notes say what its filters removed: its MaxRecords
                    # counts the log before them
                    cleaned = cleaned or "cleaned" in text.lower() or "removed)" in text
                    if not unread_comments and comment_chars + len(text) <= HEADER_TEXT_CHARS:
                        comments.append(text[1:])
                        comment_chars += len(text)
                        _dated_and_new(text[1:], dated)
                    elif _dated_and_new(text[1:], dated):
                        comments.append(text[1:])  # when log second 0 was: read wherever
                    else:
                        unread_comments += 1
                        first_unread_comment = first_unread_comment or lineno
                    for key, value in header_fields(text[1:]):
                        count = header_seconds(value) if key in TIME_HEADERS \
                            else header_count(value)
                        if key == "Partition":
                            partition_lines.append(value)
                        elif key == "Queue":
                            queue_lines.append(value)
                        elif key in ("MaxProcs", "MaxNodes") and (not count or not (
                                _WHOLE_SIZE.match(value) or _HEADER_EXPONENT.match(value.strip()))):
                            # 0, -1, a fraction (0.5) or no number (abc): no machine's size
                            unsized.setdefault(key, (lineno, text,
                                                     bool(_NO_SIZE.match(value))))
                        elif key == "MaxRuntime" and count == 0 and _NO_SIZE.match(value):
                            zero_limit = zero_limit or (lineno, text)  # no limit: said
                        elif key == "UnixStartTime" and count and count >= UNIX_MILLIS:
                            unread.setdefault(key, (lineno, text))  # milliseconds, said
                        elif count and key:
                            given.setdefault(key, []).append(count)
                            if key == "UnixStartTime":
                                blocks.header(count)
                        elif key and value and count is None and not _NO_SIZE.match(value):
                            unread.setdefault(key, (lineno, text))
                    continue
                fields = text.split()
                try:
                    job = _job(text, p, lineno, first=not len(table), fields=fields)
                except BadInput as e:
                    # the last line, short of fields or ending in no number ("-" of a "-1"
                    # cut short): broken off, not a malformed line of its own
                    if not line.endswith("\n") and (
                            len(fields) < 18 or not _SWF_NUMBER.fullmatch(fields[-1])):
                        raise _cut_off(p, lineno, text, given, fields_before) from None
                    if line.lstrip().startswith("\x00"):  # the line's start zeroed
                        raise BadInput(f"{e} (the line begins with "
                                       f"{len(line) - len(line.lstrip(chr(0)))} NUL bytes: "
                                       "a stretch of the file a crash or a full disk left "
                                       "zeroed cut into it; the job written there is lost)"
                                       ) from None
                    raise
                if not line.endswith("\n") and len(fields) < fields_before:
                    # the last line, fewer fields than the one above: a copy broken off in
                    # it (its last field perhaps cut short too), not a line of its own
                    raise _cut_off(p, lineno, text, given, fields_before)
                fields_before = len(fields)
                if len(fields) >= 18:
                    full_lines += 1
                else:
                    short += 1
                    first_short = first_short if short > 1 else (lineno, len(fields))
                if job.number > 0 and len(fields) > 16 and _number(fields[16]) and \
                        _whole(fields[16]) == job.number:
                    self_preceded += 1
                    first_self = first_self if self_preceded > 1 else (lineno, job.number)
                if job.think < 0 and job.think != -1:
                    odd_think += 1
                    first_odd_think = first_odd_think if odd_think > 1 else (lineno,
                                                                              fields[17])
                if len(fields) > 18:
                    wide += 1
                    first_wide = first_wide if wide > 1 else (lineno, len(fields))
                if sizeless_seen is None and job.run > 0 and job.procs <= 0:
                    sizeless_seen = (lineno, job.number, fields[4], fields[7])
                if job.status not in SWF_STATUS:
                    odd_statuses += 1
                    first_odd = first_odd if odd_statuses > 1 else (lineno, job.status)
                if job.submit == -1:  # SWF's unknown: nothing places the job in time
                    unplaced += 1
                    first_unplaced = first_unplaced if unplaced > 1 else (lineno, job.number)
                    continue
                job = blocks.placed(job)
                try:
                    table.add(job)
                except OverflowError:
                    raise BadInput(f"{p}:{lineno}: a job number, processor count, status "
                                   "or preceding job is too large a number (or the partition; "
                                   "at most 19 digits)"
                                   f": {text[:80]!r}") from None
    except DAMAGED as e:
        raise _unreadable(p, lineno, e, compressed) from None
    except OSError as e:
        if e.errno is None and compressed != "text":  # bz2's "Invalid data stream"
            raise _unreadable(p, lineno, e, compressed) from None
        raise BadInput(f"cannot read the trace {p}: {e.strerror or e}") from None
    if not len(table) and unplaced:
        raise BadInput(f"the trace {p} gives no job a submit time: field 2 is -1 (unknown) on "
                       f"each of its {unplaced} job line(s) (e.g. line {first_unplaced[0]}), "
                       "so nothing places its jobs in time (accepted: seconds from the log's "
                       "start, or Unix times)")
    if not len(table):
        raise BadInput(f"the trace {p} has no job lines (Standard Workload Format expected)")
    table, repeats = _without_repeats(table)
    records = len(table) + unplaced  # job lines, parts of checkpointed jobs included
    table = _whole_jobs(table)
    _number_copies(table)
    notes: list[str] = blocks.notes()
    if repeats:
        count, number, submit = repeats
        notes.append(f"{count} job line(s) repeat an earlier line field for field (e.g. job "
                     f"{number} submitted at {submit:g} s): a line written twice, or a log "
                     "joined to itself; each such job is read once")
    header = _header(given, notes)
    _procs_from_nodes(header, comments, notes)
    # MaxJobs counts jobs, a checkpointed job once (its summary, or its parts together)
    jobs = (sum(1 for n, s in zip(table.number, table.status, strict=True)
                if s not in PARTIAL_STATUS or n <= 0) + unplaced
            + len({n for n, s in zip(table.number, table.status, strict=True)
                   if s in PARTIAL_STATUS and n > 0}))
    for key, found, what in (("MaxRecords", records, "job lines"), ("MaxJobs", jobs, "jobs")):
        if given.get(key, [0])[0] > found and len(given[key]) == 1 and not cleaned:
            notes.append(f"the log's header says {key} {given[key][0]}, the file has "
                         f"{found} {what}: it may be cut off (a download broken off at a "
                         f"line's end); the {found} are replayed")
            break
    said = given.get("MaxRecords", [])
    if len(said) == 1 and 0 < said[0] < records:
        notes.append(f"the log's header says MaxRecords {said[0]}, the file has {records} job "
                     "lines: a header not brought up to date, or logs joined under one header; "
                     f"all {records} are read")
    sizeless = [table.number[i] for i in range(len(table))
                if table.run[i] > 0 and table.procs[i] <= 0]
    if sizeless:
        seen = f"e.g. job {sizeless[0]}"
        if sizeless_seen and sizeless_seen[1] in sizeless:
            line_at, number, alloc, req = sizeless_seen
            seen = f"e.g. job {number}, line {line_at}: field 5 is {alloc}, field 8 is {req}"
        notes.append(f"{len(sizeless)} job(s) ran with no processor count (fields 5 and 8 "
                     f"are 0 or -1, {seen}): they are no load in a replay")
    if odd_statuses:
        line_at, status = first_odd
        notes.append(f"{odd_statuses} job line(s) have a status SWF does not define "
                     f"(line {line_at}, field 11: {status}; SWF's are 1 completed, 0 failed, "
                     "5 cancelled, 2-4 parts of a checkpointed job, -1 unknown): each is read "
                     "as a job that ended as its run and wait say (history: completed)")
    if wide:
        notes.append(f"{wide} job line(s) have more than SWF's 18 fields (line {first_wide[0]} "
                     f"has {first_wide[1]}): the fields past the 18th are not SWF's and are "
                     "not read")
    if holes:
        notes.append(f"{holes} stretch(es) of NUL bytes lie between job lines (line "
                     f"{first_hole[0]}: {first_hole[1]} NUL bytes), as a crash or a full disk "
                     "leaves in a log being written: the jobs written there are lost, the "
                     "lines around them are read")
    if short and full_lines:
        # a log whose lines stop at 11 or 16 fields throughout is an older conversion; a
        # shorter line among full ones is more likely cut short or pasted from another log
        notes.append(f"{short} job line(s) have fewer than SWF's 18 fields, the other "
                     f"{full_lines} all of them (line {first_short[0]} has {first_short[1]}): "
                     "each missing field is read as -1 (unknown); check the line was not cut "
                     "short")
    if odd_think:
        notes.append(f"{odd_think} job(s) have a negative think time other than SWF's -1 "
                     f"(line {first_odd_think[0]}, field 18: {first_odd_think[1]}): read as "
                     "0 s, no wait after the preceding job's end")
    if all(u == 0 for u in table.user):
        # SWF numbers users from 1: a 0 on every line is a converter's "not known"
        table.user = array("q", [-1]) * len(table)
        notes.append("every job's user (field 12) is 0: SWF numbers users from 1, so the "
                     "log does not say who submitted each job (read as not known: no job "
                     "counts as queued behind its user's own)")
    if unplaced:
        line_at, number = first_unplaced
        notes.append(f"{unplaced} job(s) have no submit time (field 2 is -1, e.g. job {number}, "
                     f"line {line_at}): nothing places them in time, and they are not "
                     "replayed")
    numberless = sum(1 for n in table.number if n <= 0)
    if numberless:
        notes.append(f"{numberless} job(s) have no job number (field 1 is -1 or 0): each is a "
                     "job of its own, no part of another and no job's predecessor")
    if cut_comments:
        line_at, length = cut_comments[0]
        notes.append(f"{len(cut_comments)} comment line(s) are longer than {MAX_LINE:,} "
                     f"characters (line {line_at} has {length:,}): each is read to its first "
                     f"{MAX_LINE:,} only, its header fields there; the lines after it are read")
    if self_preceded:
        line_at, number = first_self
        notes.append(f"{self_preceded} job(s) name themselves as their preceding job (field "
                     f"17; line {line_at}: job {number}): no job waits for its own end, so "
                     "each is replayed as a job of its own, held for none")
    if unread_comments:
        notes.append(f"the log has {unread_comments} comment line(s) past its first "
                     f"{HEADER_TEXT_CHARS:,} characters of comments (from line "
                     f"{first_unread_comment}): their words (a node's processors, partition "
                     "sizes, allocation units) are not read; header fields (MaxProcs, "
                     "MaxNodes, MaxRuntime, UnixStartTime, StartTime ...) are, on every line")
    _clock_notes(table, notes)
    _within_machine(header, table, notes)
    _size_notes(table, notes)
    _order_note(table, notes)
    table = _in_submit_order(table)
    _later_predecessor_note(table, notes)
    said_nodes = next((c.strip() for c in comments if SIZES_IN_NODES.search(c)), None)
    max_procs = _machine_procs(header, table, notes, said_nodes)
    if max_procs <= 0:
        raise BadInput(f"the trace {p} gives no processor count: no MaxProcs or MaxNodes "
                       "header and no job with allocated or requested processors (fields 5 "
                       "and 8 are -1 on every line)")
    _whole_units(header, comments, table, max_procs, notes)
    # a pipe (/dev/fd/63 of `<(xzcat log.xz)`, /dev/stdin) is named by its path: "63" is no
    # log's name
    name = p.name if p.is_file() else str(p)
    for suffix in (".gz", ".bz2", ".xz", ".swf"):
        name = name.removesuffix(suffix)
    unix_start = _log_second_zero(header, given, comments, notes)
    parts = _partitions(partition_lines, comments, header)
    procs, nodes = header.get("MaxProcs", 0), header.get("MaxNodes", 0)
    in_nodes = max_procs == nodes < procs
    unit = "nodes" if in_nodes else "processors"
    if no_machine := {k: v for k, v in unsized.items() if k not in given}:
        notes.append(_unsized_note(no_machine, header, max_procs, unit))
    for key, (at, text, zero) in unsized.items():  # a fraction beside a whole line: not read
        if key in given and not zero:
            unread.setdefault(key, (at, text))
    notes.extend(_unread_note(key, at, text, key in given) for key, (at, text) in unread.items())
    if in_nodes and procs % nodes == 0:
        # jobs counted in nodes: a partition's processors are nodes of procs / nodes each
        per_node = procs // nodes
        parts["partitions"] = tuple((number, named, -(-size // per_node))
                                    for number, named, size in parts["partitions"])
    if zero_limit and "MaxRuntime" not in given:
        at, text = zero_limit
        notes.append(f"the log's header gives MaxRuntime 0 (line {at}: {text!r}), a limit no "
                     "job could run within: it is not read, as if the log gave none (jobs "
                     "that request no time ask their queue's limit or their partition's)")
    queue_limits = _queue_limits(queue_lines, notes)
    _unlisted_queue_note(queue_lines, queue_limits, table, notes)
    return SwfLog(name=name, max_procs=max_procs, table=table, notes=tuple(notes),
                  unix_start=unix_start, max_runtime=header.get("MaxRuntime") or None,
                  queue_limits=queue_limits,
                  unit=unit, cleaned=cleaned or "-cln" in name, **parts)


def _unlisted_queue_note(lines: list[str], limits: tuple[tuple[int, float], ...],
                         t: JobTable, notes: list[str]) -> None:
    """Say the jobs without a requested time whose queue (field 15) no Queue line of the
    header lists, where those lines give limits: such a job asks no queue's limit."""
    if not limits:
        return
    listed = {int(m.group(1)) for line in lines if (m := _QUEUE_LINE.match(line))}
    unlisted = [(n, q) for n, q, req in zip(t.number, t.queue, t.req_time, strict=True)
                if q > 0 and q not in listed and req <= 0]
    if unlisted:
        queues = sorted({q for _, q in unlisted})
        number, queue = unlisted[0]
        notes.append(f"{len(unlisted)} job(s) without a requested time are in a queue the "
                     f"header's Queue lines do not list (queue "
                     f"{', '.join(map(str, queues[:5]))}{', ...' if len(queues) > 5 else ''}; "
                     f"e.g. job {number} in queue {queue}; the lines list "
                     f"{', '.join(map(str, sorted(listed)[:10]))}): no queue's MaxRuntime is "
                     "theirs, so each asks the log's MaxRuntime, else its partition's limit")


# A Queue line's limit: its number, then the queue's own MaxRuntime named as the header's
# field ("; Queue: 2 long [MaxRuntime: 172800]", "(MaxRuntime=172800 s)"), read as the
# header's MaxRuntime is (`header_seconds`: "MaxRuntime: 1 hour" too; "12:00:00" is not)
_QUEUE_LINE = re.compile(r"\s*(-?[0-9]+)\b(.*)")
_QUEUE_RUNTIME = re.compile(r"\bmax[\s_]*run[\s_]*time\s*[:=]?\s*([0-9][^][()]*)", re.IGNORECASE)


def _queue_limits(values: list[str], notes: list[str]) -> tuple[tuple[int, float], ...]:
    """(queue, its MaxRuntime in seconds) of each "; Queue:" line that gives one; a queue
    given twice (logs joined) has the longer, said where they differ. Words ("at most 1
    hour") are not read: free text is not guessed at; a MaxRuntime written so that it is
    no count of seconds ("2Ki", "12:00:00") is not read, said."""
    limits: dict[int, list[float]] = {}
    for value in values:
        line, runtime = _QUEUE_LINE.match(value), _QUEUE_RUNTIME.search(value)
        if not (line and runtime):
            continue
        seconds = header_seconds(runtime.group(1)) or 0
        if seconds > 0:
            limits.setdefault(int(line.group(1)), []).append(float(seconds))
        elif not _NO_SIZE.match(runtime.group(1)):  # -1, 0: SWF's unknown, no limit
            written = runtime.group(1).strip()
            binary = binary_prefix(written)
            notes.append(f"the log's Queue line {value.strip()!r} gives queue "
                         f"{line.group(1)} a MaxRuntime of {written!r}, "
                         + (f"with {binary!r}, a binary prefix, which counts processors or "
                            "bytes, not seconds" if binary else "no whole count of seconds")
                         + " (SWF writes MaxRuntime in seconds, e.g. 3600): it is not read; "
                         "the queue's jobs without a request ask the log's MaxRuntime, if any")
    for queue, said in limits.items():
        if len(set(said)) > 1:
            notes.append(f"the log's header gives queue {queue} a MaxRuntime {len(said)} times "
                         f"({', '.join(f'{x:g}' for x in said)} s), as logs joined do: the "
                         f"longest, {max(said):g} s, is taken")
    return tuple(sorted((queue, max(said)) for queue, said in limits.items()))


# StartTime as date(1) writes it ("Tue Jan  1 00:00:00 CET 2008", the zone optional) or ISO
# 8601 ("2008-01-01 00:00:00", "2008-01-01T00:00:00+01:00")
_DATE1 = re.compile(r"(?:[A-Za-z]{3}\s+)?([A-Za-z]{3})\s+([0-9]{1,2})\s+"
                    r"([0-9]{1,2}):([0-9]{2}):([0-9]{2})"
                    r"(?:\s+([A-Za-z]{2,5}))?\s+([0-9]{4})")
_ISO = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?"
                  r"\s*(Z|UTC|GMT|[+-][0-9]{2}:?[0-9]{2})?")
# Zone abbreviations date(1) writes that name one offset from UTC (minutes) wherever they
# are used: a StartTime naming one is read without a TimeZoneString ("CST", "IST", "BST"
# name several, and are not)
_ZONE_OFFSETS = {"UTC": 0, "GMT": 0, "WET": 0, "WEST": 60, "CET": 60, "CEST": 120, "MET": 60,
                 "MEST": 120, "EET": 120, "EEST": 180, "MSK": 180, "JST": 540, "KST": 540,
                 "AEST": 600, "AEDT": 660, "NZST": 720, "NZDT": 780, "HST": -600,
                 "AKST": -540, "AKDT": -480, "PST": -480, "PDT": -420, "MST": -420,
                 "MDT": -360, "EST": -300, "EDT": -240}
# a TimeZone header's value: whole seconds east of UTC ("3600", "-18000")
_SECONDS_EAST = re.compile(r"([+-]?[0-9]{1,6})(?:\s*s(?:ec(?:onds?)?)?)?")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def _start_time(comments: list[str], notes: list[str]) -> int | None:
    """A header without UnixStartTime: its StartTime as a Unix time, where its zone is
    known (an offset in it, the header's TimeZoneString, else a zone abbreviation of one
    offset, "PST"); None, said in `notes`, where the zone is not known; None where no
    StartTime is read."""
    fields: dict[str, str] = {}
    for pair in filter(None, map(_key_value, comments)):
        fields.setdefault(*pair)  # logs joined: the first header's
    text, zone_name = fields.get("starttime"), fields.get("timezonestring")
    if not text:
        return None
    when: dt.datetime | None = None
    offset = None
    abbr: str | None = None  # the zone date(1) named ("CET"), where it named one
    if m := _ISO.search(text):
        y, mo, d, h, mi, sec, off = m.groups()
        when = dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(sec or 0))
        if off:
            offset = (0 if off in ("Z", "UTC", "GMT")
                      else (1 if off[0] == "+" else -1) * (int(off[1:3]) * 60 + int(off[-2:])))
    elif (m := _DATE1.search(text)) and m.group(1).lower() in _MONTHS:
        mon, d, h, mi, sec, abbr, y = m.groups()
        when = dt.datetime(int(y), _MONTHS.index(mon.lower()) + 1, int(d), int(h), int(mi),
                           int(sec))
        offset = 0 if abbr and abbr.upper() in ("UTC", "GMT") else None
    if when is None:
        return None
    if offset is not None:
        return int(when.replace(tzinfo=dt.timezone(dt.timedelta(minutes=offset))).timestamp())
    try:
        zone = zoneinfo.ZoneInfo(zone_name.strip()) if zone_name else None
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        zone = None
    if zone is None and abbr and abbr.upper() in _ZONE_OFFSETS:
        offset = _ZONE_OFFSETS[abbr.upper()]  # "Sun Jul 28 09:04:05 CEST 2002": +02:00
        return int(when.replace(tzinfo=dt.timezone(dt.timedelta(minutes=offset))).timestamp())
    east = _SECONDS_EAST.fullmatch(fields.get("timezone", "").strip())
    if zone is None and east:
        # SWF 2.0-2.1's TimeZone: the seconds added to a Unix time to give the log's local
        # time, one offset all year (2.2 deprecated it for TimeZoneString for that reason)
        seconds = int(east.group(1))
        if abs(seconds) <= 14 * 3600:
            notes.append(f"the log's StartTime {text.strip()!r} is read with the header's "
                         f"TimeZone, {seconds:+d} s from UTC (SWF 2.2 deprecated it: it "
                         "ignores daylight saving, so a StartTime in summer time may be read "
                         "an hour off; a TimeZoneString or UnixStartTime line would place the "
                         "log exactly)")
            return int(when.replace(tzinfo=dt.timezone.utc).timestamp()) - seconds
    if zone is None:
        notes.append(f"the log's header gives StartTime {text.strip()!r} and no UnixStartTime "
                     "nor a known TimeZoneString: when log second 0 was is not known (a "
                     "--start given as a Unix time is not read back)")
        return None
    return _local_moment(when, zone, abbr, text.strip(), notes)


def _local_moment(when: dt.datetime, zone: zoneinfo.ZoneInfo, abbr: str | None, text: str,
                  notes: list[str]) -> int:
    """The Unix time of wall-clock `when` in `zone`. Around a daylight saving change a wall
    time is there twice (clocks set back) or never (set forward): the zone abbreviation
    date(1) wrote beside it ("CET", "CEST") says which; without one (or with one the zone
    does not use then) the earlier reading is taken and said in `notes`."""
    readings = {}
    for fold in (0, 1):
        local = when.replace(tzinfo=zone, fold=fold)
        readings.setdefault(int(local.timestamp()), local)
    named = [t for t, local in readings.items()
             if abbr and (local.tzname() or "").upper() == abbr.upper()]
    if len(named) == 1:
        return named[0]
    moment = next(iter(readings))  # fold 0: the first of two, the offset before a skip
    exists = any(dt.datetime.fromtimestamp(t, zone).replace(tzinfo=None) == when
                 for t in readings)
    taken = dt.datetime.fromtimestamp(moment, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    if abbr:
        used = sorted({local.tzname() or "" for local in readings.values()})
        notes.append(f"the log's StartTime {text!r} names zone {abbr}, which "
                     f"{zone.key} does not use at that time ({' or '.join(used)}): log second "
                     f"0 is taken as {taken} UTC, by {zone.key}'s own clock")
    elif not exists:
        notes.append(f"the log's StartTime {text!r} is a time {zone.key}'s clocks skipped "
                     f"(set forward for daylight saving): log second 0 is taken as {taken} "
                     "UTC, the clock's reading before the change")
    elif len(readings) > 1:
        notes.append(f"the log's StartTime {text!r} is a time {zone.key}'s clocks showed "
                     "twice (set back at the end of daylight saving) and names no zone "
                     f"abbreviation: log second 0 is taken as {taken} UTC, the first of "
                     "the two")
    return moment


def _log_second_zero(header: dict[str, int], given: dict[str, list[int]],
                     comments: list[str], notes: list[str]) -> int | None:
    """When log second 0 was (a Unix time): the header's UnixStartTime, else its StartTime
    read in its zone (`_start_time`). A StartTime that names another moment than a lone
    UnixStartTime is said: UnixStartTime, the format's own count, is kept."""
    said: list[str] = []
    stated = _start_time(comments, said)
    unix = header.get("UnixStartTime")
    if not unix:
        notes += said
        return stated
    if stated is not None and stated != unix and len(given.get("UnixStartTime", [])) == 1:
        notes.append(f"the log's header gives UnixStartTime {unix} and a StartTime "
                     f"{stated - unix:+d} s from it ({stated}): log second 0 is taken as "
                     "UnixStartTime (a StartTime written in another zone or across a "
                     "daylight saving change?)")
    return unix


def _dated_and_new(comment: str, seen: set[str]) -> bool:
    """The comment is the log's first StartTime or TimeZoneString line (read wherever it
    is: it places the log in time); `seen` holds the ones read so far, and takes it."""
    key = (_key_value(comment) or ("",))[0]
    if key not in ("starttime", "timezonestring") or key in seen:
        return False
    seen.add(key)
    return True


def _key_value(comment: str) -> tuple[str, str] | None:
    """("starttime", "...") of a header line "StartTime: ...", keys in lower case."""
    key, sep, value = comment.partition(":")
    return (key.strip().replace(" ", "").lower(), value.strip()) if sep else None


class _Blocks:
    """Logs joined (`cat`), each after a header of its own whose UnixStartTime is its second
    0: a block whose submit times start again below the last one read counts from its own
    UnixStartTime, and is moved by that time's distance from the first block's. A block
    whose times run on from the ones before (a joined log renumbered already) stays."""

    def __init__(self) -> None:
        self.first: int | None = None  # the first UnixStartTime
        self.pending: int | None = None  # a later one, before its block's first job
        self.offset = 0.0  # log seconds added to the present block's submit times
        self.last = -math.inf  # the last submit time read (as the file has it, moved)
        self.moved: list[tuple[int, float]] = []  # (UnixStartTime, offset) of moved blocks

    def header(self, unix: int) -> None:
        if self.first is None:
            self.first = unix
        elif self.last > -math.inf:  # a header after job lines: a block may begin
            self.pending = unix

    def placed(self, job: SwfJob) -> SwfJob:
        if self.pending is not None:
            # times that begin again count from the block's own second 0
            self.offset = (float(self.pending - (self.first or 0)) if job.submit < self.last
                           else 0.0)
            if self.offset:
                self.moved.append((self.pending, self.offset))
            self.pending = None
        if self.offset:
            job = dataclasses.replace(job, submit=job.submit + self.offset)
        self.last = max(self.last, job.submit)
        return job

    def notes(self) -> list[str]:
        if not self.moved:
            return []
        unix, offset = self.moved[0]
        return [f"the log joins {len(self.moved) + 1} logs, each with a header whose "
                "UnixStartTime is its own second 0: each later one's submit times are moved "
                "by its UnixStartTime's distance from the first's "
                f"{self.first} (e.g. UnixStartTime {unix}: +{offset:g} s), so they follow "
                "one another as the center ran them"]


_PARTITION_LINE = re.compile(r"(-?[0-9]+)\s*[-:,=]?\s*([A-Za-z][\w.+-]*)?\s*(.*)")
_PROCS = re.compile(rf"([0-9][0-9,]*)\s*{_UNIT}\b", re.IGNORECASE)
_NODES = re.compile(r"([0-9][0-9,]*)\s*nodes?\b", re.IGNORECASE)
_EACH = re.compile(rf"{_COUNT}\s*{_UNIT}\s+each\b|each\s+(?:with|has|having|of)\s+{_COUNT}"
                   rf"\s*{_UNIT}", re.IGNORECASE)
PARTITIONS_LISTED = 12  # partitions an error names (a grid's log may have hundreds)


# A note that names a partition by its number: "; Note: partition 2 (debug) has 16 nodes of
# 4 cores", "; Note: Partitions: 1 is batch with 240 processors"
_NOTED_PARTITION = re.compile(r"\bpartitions?\s*(?:number|no\.?|#)?\s*[:=]?\s*([0-9]+)\b",
                              re.IGNORECASE)
_ANY_PARTITION = re.compile(r"\bpartitions?\b", re.IGNORECASE)
_NOTED_NAME = re.compile(r"\s*(?:\(\s*([A-Za-z][\w.+-]*)\s*\)|(?:is|named|called|[:=-])\s+"
                         r"(?:the\s+)?([A-Za-z][\w.+-]*))", re.IGNORECASE)


def _partitions(lines: list[str], comments: list[str], header: dict[str, int]) -> dict:
    """The log's partitions: its "; Partition:" lines, and where a partition has no line
    or its line gives no size, a note that names it by its number and gives its size (a
    note naming none, or no size, says nothing: free text is not guessed at)."""
    # a number given twice ("; Partitions: 1", the count of a log of one, after its
    # "; Partition: 1 batch (64 processors)"; headers of logs joined): one partition, its
    # name where any line gives one, the largest size any gives (a bare number takes none)
    merged: dict[int, tuple[int, str, int]] = {}
    for number, name, procs in _partition_lines(lines, header):
        _, named, size = merged.get(number, (number, "", 0))
        merged[number] = (number, named or name, max(size, procs))
    partitions = list(merged.values())
    sized = {number for number, _, procs in partitions if procs}
    noted: set[int] = set()
    for text in comments:
        key, _ = header_field(text)
        if key == "Partition":
            continue  # a Partition line of its own, read above
        for m in _NOTED_PARTITION.finditer(text):
            # what follows the number, up to the next partition the note names
            rest = text[m.end():]
            later = _ANY_PARTITION.search(rest)
            rest = rest[:later.start()] if later else rest
            _note_partition(int(m.group(1)), rest, header, partitions, sized, noted)
    return {"partitions": tuple(partitions), "noted_partitions": frozenset(noted)}


def _note_partition(number: int, rest: str, header: dict[str, int],
                    partitions: list[tuple[int, str, int]], sized: set[int],
                    noted: set[int]) -> None:
    """Partition `number` sized by the note's words after it (`rest`), where they give a
    size and no line sized it."""
    if number in sized:
        return
    ((_, _, size),) = _partition_lines([f"{number} {rest}"], header) or ((0, "", 0),)
    if not size:
        return
    named = _NOTED_NAME.match(rest)
    name = next((g for g in named.groups() if g), "") if named else ""
    if name.lower().rstrip("s") in ("processor", "proc", "core", "cpu", "pe", "node", "ha",
                                    "with", "of"):
        name = ""
    old = next((k for k, part in enumerate(partitions) if part[0] == number), None)
    if old is not None:
        name = partitions[old][1] or name
        partitions[old] = (number, name, size)
    else:
        partitions.append((number, name, size))
    sized.add(number)
    noted.add(number)


# Where a Partition line goes on to another partition: a comma or semicolon before a number
# and a name ("1: batch (240 processors), 2: debug (64 processors)"), not before a count of
# units ("16 nodes, 8 cores each")
_NEXT_PARTITION = re.compile(r"[,;]\s*(?=-?[0-9]+\s*(?:[-:=]\s*)?([A-Za-z][\w.+-]*))")
_UNIT_WORDS = ("processor", "proc", "core", "cpu", "pe", "node", "way", "gpu", "thread",
               "socket", "slot")


# A line of number-name pairs alone, blanks between ("; Partitions: 1 batch 2 debug")
_PAIRS_ONLY = re.compile(r"(?:-?[0-9]+\s+[A-Za-z][\w.+-]*\s*){2,}")
_PAIR = re.compile(r"(-?[0-9]+)\s+([A-Za-z][\w.+-]*)")
_TIME_WORDS = ("second", "sec", "minute", "min", "hour", "hr", "day", "week")


def _one_partition_each(value: str) -> list[str]:
    """A Partition line's text cut where it names another partition: after a comma or a
    semicolon, or between pairs of a line that holds nothing but number-name pairs, none of
    its words a count's unit ("1 thin 896 processors" is one partition) or, the pairs
    numbered in turn, none in the plural ("1 batch 2 debug 3 gpu", not "2 fat 3 nodes")."""
    if _PAIRS_ONLY.fullmatch(value.strip()):
        pairs = _PAIR.findall(value)
        numbers = [int(number) for number, _ in pairs]
        counts = [name for _, name in pairs
                  if name.lower().rstrip("s") in (*_UNIT_WORDS, *_TIME_WORDS)]
        in_turn = numbers == list(range(numbers[0], numbers[0] + len(numbers)))
        # numbered in turn, a unit in the singular is a name ("3 gpu"), not "3 nodes"
        if not counts or in_turn and not any(name.lower().endswith("s") for name in counts):
            return [f"{number} {name}" for number, name in pairs]
    cuts = [m.start() for m in _NEXT_PARTITION.finditer(value)
            if m.group(1).lower().rstrip("s") not in _UNIT_WORDS
            and not m.group(1).lower().startswith(("each", "per"))]
    return [value[a:b].strip(" ,;") for a, b in zip([0, *cuts], [*cuts, len(value)],
                                                    strict=True)]


def _partition_lines(values: list[str], header: dict[str, int]
                     ) -> tuple[tuple[int, str, int], ...]:
    """(number, name, processors) of each "; Partition: ..." header line ("1 thin (896
    processors)", "2 fat: 16 nodes x 8 cores", "3 narwhal", "4 gpu (12 nodes)" on a machine
    whose MaxProcs is a whole number of its MaxNodes); processors 0 where the line does not
    say them. A line that starts with no number is no partition."""
    procs, nodes = header.get("MaxProcs"), header.get("MaxNodes")
    per_node = procs // nodes if procs and nodes and procs % nodes == 0 else 0
    out = []
    for value in (piece for line in values for piece in _one_partition_each(line)):
        m = _PARTITION_LINE.fullmatch(value.strip())
        if not m:
            continue
        name, rest = m.group(2) or "", m.group(3)
        if name.lower().rstrip("s") in ("processor", "proc", "core", "cpu", "pe", "node"):
            name, rest = "", value  # "1 896 processors" is no name
        groups = [(_count(n), _count(k)) for pattern in (NODE_GROUP, NODE_GROUP_WAY)
                  for n, k in pattern.findall(rest)]
        node_count = next((_count(x) for x in _NODES.findall(rest)), 0)
        # "16 nodes, 8 cores each", "12 nodes (each with 4 CPUs)": nodes times their size
        its_nodes = {_count(next(g for g in x.groups() if g)) for pattern in (*PER_NODE, _EACH)
                     for x in pattern.finditer(rest)}
        if groups:
            size = sum(n * k for n, k in groups)
        elif node_count and len(its_nodes) == 1:
            size = node_count * its_nodes.pop()
        else:
            size = (next((_count(x) for x in _PROCS.findall(rest)), 0)
                    or per_node * node_count)
        out.append((int(m.group(1)), name, size))
    return tuple(out)


def _partition_named(log_name: str, key: str, named: dict[int, tuple[str, int]]
                     ) -> int | None:
    """The number of the partition the header's lines name `key`: the one so spelt, else
    the one of that name in another case; BadInput where two lines give it (a grid's
    clusters each with its `batch`), naming their numbers."""
    exact = [n for n, (name, _) in named.items() if name == key]
    alike = exact or [n for n, (name, _) in named.items() if name and name.lower() == key.lower()]
    if len(alike) > 1:
        lines = ", ".join(f"{n} {named[n][0]}" for n in sorted(alike))
        raise BadInput(f"the trace {log_name} has {len(alike)} partitions named {key!r} in its "
                       f"header's Partition lines ({lines}): give the partition by its "
                       f"number (accepted: {' or '.join(map(str, sorted(alike)))})")
    return alike[0] if alike else None


def one_partition(log: SwfLog, which: str) -> SwfLog:
    """The log of partition `which` alone (field 16, by its number or its name in the
    header's Partition lines): a log of several machines in one (a grid's clusters, a
    center's thin and fat nodes) replays one of them, sized by that partition's processors
    (the header's Partition line, never below its largest job nor what its jobs held at
    once; without one, what they held at once). BadInput names the partitions there are."""
    t = log.table
    counts: dict[int, int] = {}
    for q in t.partition:
        counts[q] = counts.get(q, 0) + 1
    named = {number: (name, procs) for number, name, procs in log.partitions}
    known = sorted(q for q in counts if q >= 0)
    if not known:
        raise BadInput(f"the trace {log.name} gives no partitions (field 16 is -1 or missing "
                       "on every line): replay it whole, without --partition")
    key = which.strip()
    number: int | None = None
    if re.fullmatch(r"[+-]?[0-9]+", key):
        number = int(key)
    else:
        number = _partition_named(log.name, key, named)
    if number is None or number not in counts or number < 0:
        there = ", ".join(f"{q}" + (f" ({named[q][0]})" if named.get(q, ("",))[0] else "")
                          + f": {counts[q]} job(s)" for q in known[:PARTITIONS_LISTED])
        if len(known) > PARTITIONS_LISTED:
            there += f" and {len(known) - PARTITIONS_LISTED} more ({known[-1]} the last)"
        if counts.get(-1):
            there += f"; {counts[-1]} job(s) give none (-1)"
        raise BadInput(f"the trace {log.name} has no partition {which!r} (field 16): its jobs "
                       f"are in partitions {there} (accepted: one of those numbers"
                       + (" or names" if any(named.get(q, ("",))[0] for q in known) else "")
                       + ")")
    part = t.take(i for i, q in enumerate(t.partition) if q == number)
    name, said = named.get(number, ("", 0))
    source = ("a note in the header" if number in log.noted_partitions
              else "the header's Partition line")
    notes = list(log.notes)
    label = f"partition {number}" + (f" ({name})" if name else "")
    if said > log.max_procs:  # a part of the machine is no larger than all of it
        notes.append(f"the header's line for {label} gives {said} {log.unit}, more than the "
                     f"whole machine's {log.max_procs}: it is taken to have {log.max_procs}")
        said = log.max_procs
    if said:  # a request over the partition ran on the partition at most
        _within_machine({"MaxProcs": said}, part, notes, f"{label}'s {{}} {log.unit}")
    guessed = ""
    if said:
        machine = _machine_procs({"MaxProcs": said}, part, notes)
    else:
        # what its jobs held at once: with unknown waits (-1) each is taken to start at its
        # submission, the work offered rather than run (LLNL-Thunder's pbatch "held" 4.5
        # times the machine so), so never more than the whole log's machine it is part of
        machine = _machine_procs({}, part, notes)
        if any(w < 0 for w in part.wait) and machine > log.max_procs:
            guessed = ("; its jobs' waits are unknown, so that is the work offered at once, "
                       f"more than the machine: taken as the whole machine's {log.max_procs}")
            machine = log.max_procs
    if machine <= 0:
        raise BadInput(f"the trace {log.name}'s {label} has no job with a processor count "
                       "(fields 5 and 8 are -1 on each of its lines): nothing sizes it")
    notes.append(f"{label} of the log is replayed alone: {len(part)} of its {len(t)} jobs, on "
                 f"a machine of {machine} {log.unit} "
                 + (f"({source})" if said and machine == said else
                    f"({source} is short of what its jobs held)" if said
                    else "(the header gives the partition no size: what its jobs held at "
                         f"once{guessed})")
                 + f"; jobs are sized by their share of it, not of the whole log's "
                   f"{log.max_procs}")
    return dataclasses.replace(log, name=f"{log.name} partition {number}", max_procs=machine,
                               table=part, notes=tuple(notes), whole_span=log.span)


def _header(given: dict[str, list[int]], notes: list[str]) -> dict[str, int]:
    """One value a header field: logs joined, each with its header, may give a field twice.
    Of two machine sizes (a machine that grew, or lost a part) the larger held the jobs of
    its time; of two UnixStartTimes the first is the log's second 0."""
    header = {}
    for key, values in given.items():
        header[key] = values[0] if key == "UnixStartTime" else max(values)
        if key in ("MaxProcs", "MaxNodes", "MaxRuntime") and len(set(values)) > 1:
            notes.append(f"the log's header gives {key} {len(values)} times "
                         f"({', '.join(map(str, values))}), as logs joined do: the largest, "
                         f"{header[key]}, is taken"
                         + (" (the request of each job that gives none)"
                            if key == "MaxRuntime" else ""))
    return header


# A header size of no machine: "MaxProcs: 0", or SWF's unknown, "-1"
_NO_SIZE = re.compile(r"\s*(?:-[0-9]+|0+)(?![0-9.,x])")  # (0x20 is hexadecimal: no count)
# A header size that is a whole count ("1024", "2,048", "1 024", "128.0", "128 (each with 4
# CPUs)"), not a fraction ("0.5") nor words ("abc")
_WHOLE_SIZE = re.compile(r"\s*[0-9][0-9,_ \u00a0\u202f]*(?:\.0*)?(?![0-9.])")


def _unsized_note(unsized: dict[str, tuple[int, str, bool]], header: dict[str, int],
                  machine: int, unit: str) -> str:
    """What a header's MaxProcs or MaxNodes of 0 (or -1), a fraction or no number became:
    not read, each line named, and what sized the machine instead."""
    said = list(unsized.values())
    # 0 and -1 size no machine; a fraction or words are no count of processors or nodes
    zeros = [zero for _, _, zero in said]
    what = ("sizes no machine", "size no machine") if all(zeros) else \
        ("is no whole count of processors or nodes", "are no whole counts of processors "
         "or nodes") if not any(zeros) else ("", "give no machine size")
    lines = (f"line {said[0][0]} ({said[0][1]!r}) {what[0]}, so it is" if len(said) == 1
             else f"lines {' and '.join(f'{n} ({text!r})' for n, text, _ in said)} {what[1]}, "
                  "so they are")
    if "MaxProcs" in header and "MaxProcs" in unsized:  # counted from MaxNodes and a note
        instead = (f"the machine is its MaxNodes {header.get('MaxNodes')} times the "
                   f"processors its notes give a node: {machine} {unit}")
    elif "MaxProcs" in header:
        instead = f"the machine is sized by its MaxProcs: {machine} {unit}"
    elif machine == header.get("MaxNodes"):
        instead = f"the machine is sized by its MaxNodes: {machine} {unit}"
    else:
        instead = (f"the machine is sized from its jobs instead, {machine} {unit}: the most "
                   "they held at once")
    prefixes = "; ".join(dict.fromkeys(
        f"{prefixed[5:]} ({one_reading})" for prefixed, one_reading
        in (two_readings_said(text) for _, text, _ in said) if prefixed))
    return f"the log's header {lines} not read: {instead}" + (
        f"; {prefixes}" if prefixes else "")


def _later_predecessor_note(t: JobTable, notes: list[str]) -> None:
    """Say the jobs (`t` in submit order) whose preceding job (field 17) is submitted only
    after them, or is no job of the log: SWF's predecessor is an earlier job, so each is
    replayed as independent (`plan_replay` holds a job only for one replayed before it)."""
    named = {pred for pred in t.preceding if pred > 0}  # most logs: none
    if not named:
        return
    first_submit: dict[int, float] = {}
    for number, submit in zip(t.number, t.submit, strict=True):
        if number in named:
            first_submit.setdefault(number, submit)
    later = [(n, pred) for n, pred, submit in zip(t.number, t.preceding, t.submit, strict=True)
             if pred > 0 and first_submit.get(pred, -math.inf) > submit]
    if later:
        number, pred = later[0]
        notes.append(f"{len(later)} job(s) name as their preceding job (field 17) one submitted "
                     f"after them (e.g. job {number} names job {pred}): SWF's preceding job is "
                     "an earlier one, so each is replayed as a job of its own, held for none")
    absent = [(n, pred) for n, pred in zip(t.number, t.preceding, strict=True)
              if pred > 0 and pred not in first_submit]
    if absent:
        number, pred = absent[0]
        notes.append(f"{len(absent)} job(s) name as their preceding job (field 17) one the log "
                     f"does not hold (e.g. job {number} names job {pred}: before the log's "
                     "start, or cleaned out of it), so each is replayed as a job of its own, "
                     "held for none")


# What each header count is a whole number of, as SWF writes it
_HEADER_UNITS = {"UnixStartTime": "seconds since 1970, e.g. 1073001600",
                 "MaxRuntime": "seconds, e.g. 129600 for 36 hours",
                 "MaxProcs": "processors, e.g. 1024", "MaxNodes": "nodes, e.g. 128",
                 "MaxRecords": "job lines, e.g. 202871", "MaxJobs": "jobs, e.g. 202871"}


def _unread_note(key: str, lineno: int, text: str, another: bool) -> str:
    """What a header count written as no whole number ("MaxRuntime: 36:00:00",
    "UnixStartTime: 2004-01-02") became: not read, rather than its leading digits."""
    instead = f"its other {key} line is read instead" if another else \
        f"the log is read as if it gave no {key}"
    unsure = [w for w in re.findall(r"[0-9]\s*([^\W0-9_]+)", text)
              if w.lower() in _UNSURE_UNITS] if key in TIME_HEADERS else []
    prefixed, one_reading = two_readings_said(text)
    binary = binary_prefix(header_field(text.lstrip(";"))[1]) if key in TIME_HEADERS else None
    given = f"in {unsure[0]!r}, a unit of no one length in seconds" if unsure \
        else (f"with {binary!r}, a binary prefix, which counts processors or bytes, not "
              "seconds,") if binary else prefixed or "as no whole number"
    also = f"; {one_reading}" if one_reading and not unsure else ""
    count = header_count(header_field(text.lstrip(";"))[1])
    if key == "UnixStartTime" and count and count >= UNIX_MILLIS:
        k = next(k for k in range(1, 9) if count < UNIX_MILLIS * 1000 ** k)
        finer = {1: "milliseconds", 2: "microseconds", 3: "nanoseconds"}.get(k, "a fine unit")
        moment = dt.datetime.fromtimestamp(count // 1000 ** k, dt.timezone.utc)
        given = (f"as {count}, past the year 5000 in seconds: in {finer}? (that is "
                 f"{moment:%Y-%m-%d %H:%M:%S} UTC)")
    return (f"the log's header line {lineno} ({text!r}) gives {key} {given} "
            f"(SWF writes {key} in {_HEADER_UNITS.get(key, 'whole numbers')}{also}): it is "
            f"not read; {instead}")


def _count(word: str) -> int:
    return _WORDS.get(word.lower()) or int(word.replace(",", ""))


def _procs_from_nodes(header: dict[str, int], comments: list[str], notes: list[str]
                      ) -> None:
    """A header that gives MaxNodes and no MaxProcs counts its machine in nodes: where its
    words say how many processors a node has (one count for every node, or groups of nodes
    that add up to MaxNodes), MaxProcs is MaxNodes times that (jobs counted in nodes are
    still told apart by the schedule: `_machine_procs`). Counts that disagree (partitions
    of several node sizes not adding up to MaxNodes) say nothing."""
    nodes = header.get("MaxNodes")
    if not nodes or header.get("MaxProcs"):
        return
    text = " ".join(comments)
    groups = [(_count(n), _count(k)) for pattern in (NODE_GROUP, NODE_GROUP_WAY)
              for n, k in pattern.findall(text)]
    if groups and sum(n for n, _ in groups) == nodes:
        procs = sum(n * k for n, k in groups)
        said = ", ".join(f"{n} x {k}" for n, k in groups)
    else:
        per_node = {_count(m.group(1)) for p in PER_NODE for m in p.finditer(text)}
        per_node.discard(0)
        if len(per_node) != 1:
            return
        k = per_node.pop()
        procs, said = nodes * k, f"{k} per node"
    if procs > nodes:
        header["MaxProcs"] = procs
        notes.append(f"the log's header gives MaxNodes {nodes} and no MaxProcs; its notes "
                     f"say a node's processors ({said}): the machine is taken to have "
                     f"{procs} processors")


def _whole_units(header: dict[str, int], comments: list[str], t: JobTable, machine: int,
                 notes: list[str]) -> None:
    """Round each job's size up to the machine's allocation unit where the header's words
    give one (a Blue Gene runs a job of 100 cores on a partition of 512): the unit held the
    job, whatever it asked for or the log counted. The unit is turned into the jobs' own
    count (nodes or processors: `machine` is MaxNodes when they count nodes) with the
    header's processors a node; a unit that cannot be turned is not applied, and said."""
    found = {(_count(n), unit.lower().rstrip("s")) for n, unit in
             ALLOCATION_UNIT.findall(" ".join(comments))}
    if len(found) != 1:
        return
    size, kind = found.pop()
    procs, nodes = header.get("MaxProcs"), header.get("MaxNodes")
    per_node = procs // nodes if procs and nodes and procs % nodes == 0 else None
    in_nodes = bool(nodes and procs and nodes < procs and machine == nodes)
    if (kind == "node") == in_nodes:
        unit = size
    elif per_node and kind == "node":
        unit = size * per_node
    elif per_node and size % per_node == 0:
        unit = size // per_node
    else:
        notes.append(f"the log's header gives an allocation unit of {size} {kind}s, but not "
                     "how many processors a node has: job sizes are kept as the log gives them")
        return
    if unit <= 1:
        return
    raised = 0
    for i, p in enumerate(t.procs):
        if p > 0 and p % unit:
            t.procs[i] = min(machine, -(-p // unit) * unit)
            raised += 1
    if raised:
        notes.append(f"{raised} job(s) are not a whole number of the machine's allocation unit "
                     f"({size} {kind}s, {unit} in the jobs' count): each is sized as the "
                     "units that held it")


def _cut_off(path: Path, lineno: int, text: str, given: dict[str, list[int]],
             fields_before: int = 18) -> BadInput:
    """A plain log whose last line stops short, without its line end: a copy broken off
    (`fields_before`: the fields of the job line above it, 0 where none)."""
    expected = given.get("MaxRecords", [0])[0]
    fields = text.split()
    count = len(fields)
    if count >= 18 and fields and not _SWF_NUMBER.fullmatch(fields[-1]):
        # "-" of a "-1" cut short
        shape = f"{count} fields, the last {fields[-1][:20]!r} (no number),"
    elif fields_before in (0, 18):
        shape = f"{count} of 18 fields"
    else:
        shape = f"{count} fields, the line above {fields_before},"
    return BadInput(f"{path}:{lineno}: the log is cut off: its last line has " + shape
                    + f" and no line end ({text[:80]!r})"
                    + (f", and the header says MaxRecords {expected}" if expected else "")
                    + "; nothing of it is replayed (accepted: a whole SWF file: copy it again)")


def open_swf(path: Path) -> TextIO:
    """A log's text, compressed (gzip, bzip2, xz) or not by its bytes, whatever its name (a
    browser may have unzipped a .gz), without a byte-order mark."""
    return _open_swf(path)[1]


# An SWF job line is 18 numbers (about 100 characters) and a header line a few words: a line
# past this is no log's. Read whole, a shared "trace" of one endless line (or a gzip of one)
# held it all in memory (a 100 MB comment line took 440 MB) before anything was said.
MAX_LINE = 64 * 1024
# A comment line past MAX_LINE (a filter list or a log's history on one line) is read past,
# in pieces, up to this; longer, it is no header of a log
MAX_COMMENT_LINE = 1024 * 1024


def _bounded_lines(fh: TextIO, path: Path, cut: list[tuple[int, int]]) -> Iterator[str]:
    """`fh`'s lines, each read at most MAX_LINE characters far: BadInput naming the file
    and line for a longer one, but for a comment (`;` first) of at most MAX_COMMENT_LINE,
    whose first MAX_LINE characters are given and the rest read past in pieces of that
    size; `cut` gets each such line's (number, length)."""
    lineno = 0
    while line := fh.readline(MAX_LINE + 1):
        lineno += 1
        if len(line) > MAX_LINE and not line.endswith("\n"):
            comment = line.lstrip(" \t\ufeff").startswith(";")
            length = len(line)
            while comment and length <= MAX_COMMENT_LINE and (rest := fh.readline(MAX_LINE)):
                length += len(rest.rstrip("\r\n"))
                if rest.endswith("\n"):
                    break
            if not comment or length > MAX_COMMENT_LINE:
                bound = MAX_COMMENT_LINE if comment else MAX_LINE
                raise BadInput(f"{path}:{lineno}: a {'comment ' if comment else ''}line longer "
                               f"than {bound} characters (an SWF line is about 100"
                               + (", a header's note a few thousand" if comment else "")
                               + "): not a Standard Workload Format log "
                               f"({line[:40]!r}...)")
            cut.append((lineno, length))
            line = line[:MAX_LINE] + "\n"
        yield line


def _open_swf(path: Path) -> tuple[str, TextIO]:
    """(what compressed it, its text), the file opened once: a pipe (`--trace
    <(xzcat log.swf.xz)`, /dev/stdin) can be read only once, so the bytes that tell how it
    is compressed and encoded are read ahead and handed back to the readers after them."""
    raw = open(path, "rb")  # noqa: SIM115 (closed by the text stream built on it)
    try:
        head = _read_ahead(raw, 6)
        for magic, what in NOT_READ:
            if head.startswith(magic):
                raise BadInput(f"the trace {path} is {what}: unpack it first (accepted: an "
                               "SWF text file, plain or compressed with gzip, bzip2 or xz)")
        name, opener = next(((name, o) for magic, name, o in COMPRESSED
                             if head.startswith(magic)), ("text", None))
        data: io.BufferedIOBase = io.BufferedReader(_ReadAhead(head, raw))
        try:
            for _ in range(NESTED):  # a log compressed again (a server gzipped its .gz)
                if opener is None:
                    break
                data = opener(data, "rb")
                inner = _read_ahead(data, 6)
                data = io.BufferedReader(_ReadAhead(inner, data))
                opener = next((o for magic, _, o in COMPRESSED if inner.startswith(magic)),
                              None)
            bom = _read_ahead(data, 2)
        except DAMAGED as e:  # a compressed log of a few bytes, cut off or damaged
            raise _unreadable(path, 0, e, name) from None
        except OSError as e:
            if e.errno is None:  # bz2's "Invalid data stream"
                raise _unreadable(path, 0, e, name) from None
            raise
        # a Windows editor's "Unicode" is UTF-16 with a byte-order mark
        utf16 = bom in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
        # closing the text closes the file too (a decompressor leaves a stream it was given)
        text = io.TextIOWrapper(io.BufferedReader(_ReadAhead(bom, data, raw)),
                                encoding="utf-16" if utf16 else "utf-8-sig", errors="replace")
    except BaseException:
        raw.close()
        raise
    return name, text


def _read_ahead(stream: io.IOBase, n: int) -> bytes:
    """Up to `n` first bytes of `stream` (fewer only at its end: a pipe gives what its
    writer wrote so far)."""
    head = b""
    while len(head) < n:
        more = stream.read(n - len(head))
        if not more:
            break
        head += more
    return head


class _ReadAhead(io.RawIOBase):
    """A binary stream whose first bytes were read already: those, then the rest (closed
    with it, and the file under it when given)."""

    def __init__(self, head: bytes, rest: io.BufferedIOBase,
                 file: io.IOBase | None = None) -> None:
        self._head, self._rest, self._file = head, rest, file

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        # what is there, not a whole buffer: a cut-off log's lines before the cut are read
        chunk = self._rest.read1(len(buffer))
        buffer[:len(chunk)] = chunk
        return len(chunk)

    def close(self) -> None:
        if not self.closed:
            self._rest.close()
            if self._file is not None:
                self._file.close()
        super().close()


def _unreadable(path: Path, lineno: int, e: BaseException, what: str) -> BadInput:
    """A compressed log cut short (a download broken off) or damaged, named with the last
    line read whole."""
    where = f"after line {lineno}" if lineno else "before its first line"
    return BadInput(f"the trace {path} is not a readable {what} file: it "
                    f"is cut off or damaged {where} ({e}); nothing of it is replayed "
                    "(accepted: a whole SWF file, plain or compressed with gzip, bzip2 or xz: "
                    "copy it again)")


def _without_repeats(t: JobTable) -> tuple[JobTable, tuple[int, int, float] | None]:
    """The table without lines that repeat an earlier one in every field (a converter
    writing a line twice, `cat log log`): replayed, each would load the site twice. Lines
    of one number that differ (logs joined, each numbered from 1; the parts of a
    checkpointed job) are all kept. Also (how many were dropped, the first's number and
    submit time), or None. Numbers rising line by line (most logs) repeat nothing."""
    number = t.number
    if all(number[i] < number[i + 1] for i in range(len(number) - 1)):
        return t, None
    numbers: set[int] = set()
    twice = {n for n in number if n > 0 and (n in numbers or numbers.add(n))}
    if not twice:
        return t, None
    columns = [getattr(t, name) for name, _ in _COLUMNS]
    seen: set[tuple[float, ...]] = set()
    kept: list[int] = []
    for i, n in enumerate(number):
        if n in twice:  # only the lines of a number given more than once are compared
            row = tuple(column[i] for column in columns)
            if row in seen:
                continue
            seen.add(row)
        kept.append(i)
    if len(kept) == len(t):
        return t, None
    first = next(i for i, k in enumerate(kept + [len(t)]) if i != k)
    return t.take(kept), (len(t) - len(kept), number[first], t.submit[first])


def _number_copies(t: JobTable) -> None:
    """Mark the repeats of a job number (logs joined, each numbered from 1): in file order
    the first line of a number is copy 0. Numbers rising line by line (most logs) repeat
    nothing: no table of 200,000 numbers is built for them."""
    number = t.number
    if all(number[i] < number[i + 1] for i in range(len(number) - 1)):
        return
    seen: dict[int, int] = {}
    for i, n in enumerate(number):
        if n in seen:
            t.copy[i] = seen[n]
        seen[n] = seen.get(n, 0) + 1


def _whole_jobs(t: JobTable) -> JobTable:
    """Each job once: a checkpointed or swapped job is a summary line (the whole job) and a
    line per part of it with the same number (status 2, then 3 or 4); the parts are dropped
    where the summary is there, kept (each ran) where it is not."""
    # a job without a number (-1, 0) is a job of its own: no part of another
    parted = {n for n, s in zip(t.number, t.status, strict=True)
              if s in PARTIAL_STATUS and n > 0}
    if not parted:
        return t
    summarized = {n for n, s in zip(t.number, t.status, strict=True)
                  if s not in PARTIAL_STATUS and n in parted}
    return t.take(i for i, (n, s) in enumerate(zip(t.number, t.status, strict=True))
                  if s not in PARTIAL_STATUS or n not in summarized)


def _in_submit_order(t: JobTable) -> JobTable:
    """The table sorted by submit time, ties by job number (a log in start order, or grouped
    by queue); most logs are in that order already, and are not copied."""
    submit, number = t.submit, t.number
    if all(submit[i] < submit[i + 1] or (submit[i] == submit[i + 1]
                                         and number[i] <= number[i + 1])
           for i in range(len(submit) - 1)):
        return t
    order = sorted(range(len(t)), key=number.__getitem__)  # two stable sorts: no key tuples
    order.sort(key=submit.__getitem__)
    return t.take(order)


def _clock_notes(t: JobTable, notes: list[str]) -> None:
    """Say which jobs have a wait or run time below -1 (SWF's "unknown"): a log recorded in
    local time loses an hour over the end of daylight saving time, so a job waiting or
    running across it shows a wait or run an hour short, below zero for a short one. Such a
    wait is unknown (the job is taken to start when submitted, as for -1), such a run is no
    load (its length is unknown). A fraction of a second below zero is a rounding of
    floating-point times (a run of under half a second, a start at its submission)."""
    odd = [i for i in range(len(t)) if t.wait[i] < -1 or t.run[i] < -1]
    if odd:
        e = t.row(odd[0])
        notes.append(f"{len(odd)} job(s) have a wait or run time below -1 (unknown) "
                     f"(e.g. job {e.number}: wait {e.wait:g}, run {e.run:g}), as a clock set "
                     "back gives (the end of daylight saving time in a log kept in local "
                     "time): each such wait is taken as unknown (its start simulated as "
                     "for -1), each such run as no load")


def _size_notes(t: JobTable, notes: list[str]) -> None:
    """Say which jobs give no allocated processors (field 5 is 0 or -1) but a request
    (field 8): each is sized by what it asked, an assumption the log does not confirm."""
    asked = [i for i in range(len(t)) if t.by_request[i] and t.procs[i] > 0
             and t.run[i] > 0]
    if asked:
        e = t.row(asked[0])
        notes.append(f"{len(asked)} job(s) give no allocated processors (field 5 is 0 or -1; "
                     f"e.g. job {e.number}): each is taken to have "
                     "run on the processors it requested (field 8)")


def _order_note(t: JobTable, notes: list[str]) -> None:
    """Say where a line is submitted before the one above it (SWF lists jobs by submit
    time): the log is read in submit order, which its lines are not."""
    back = [i for i in range(1, len(t)) if t.submit[i] < t.submit[i - 1]]
    if back:
        i = back[0]
        notes.append(f"{len(back)} job line(s) are submitted before the line above them "
                     f"(SWF lists jobs by submit time; e.g. job {t.number[i]} at "
                     f"{t.submit[i]:g} s after job {t.number[i - 1]} at "
                     f"{t.submit[i - 1]:g} s): the jobs are read in submit order")


def _within_machine(header: dict[str, int], t: JobTable, notes: list[str],
                    machine_named: str = "the log's {} processors (MaxProcs)") -> None:
    """A job sized by its request (no allocated count) that asked for more than MaxProcs
    ran on the machine at most: its size is MaxProcs, not a machine it never had. An
    allocated count over MaxProcs is kept (the header may be wrong: `_machine_procs`)."""
    machine = header.get("MaxProcs")
    if not machine:
        return
    _beyond_any_machine(machine, t, notes, machine_named)
    over = [i for i in range(len(t))
            if t.by_request[i] and t.procs[i] > machine and t.run[i] > 0]
    if not over:
        return
    notes.append(f"{len(over)} job(s) requested more than {machine_named.format(machine)} "
                 f"and have no allocated count (e.g. job {t.number[over[0]]}): "
                 "each is counted as the whole machine")
    for i in over:
        t.procs[i] = machine


# Jobs that ran on more than HEADER_LONG times MaxProcs, at most this share of those that
# ran, are broken records (a field shifted, a node count read as cores), not the machine's
OUTLIER_SHARE = 0.05


def _beyond_any_machine(machine: int, t: JobTable, notes: list[str],
                        machine_named: str) -> None:
    """A few jobs that ran on more than HEADER_LONG times MaxProcs (100,000 processors in a
    log of 32) among many that fit: each is counted as the whole machine, and said. Kept,
    they made the machine theirs, and every other job a sliver of it the replay thinned out.
    Where more than OUTLIER_SHARE of the jobs that ran are so large, the header is what is
    wrong (`_machine_procs`)."""
    ran = sum(1 for r, p in zip(t.run, t.procs, strict=True) if r > 0 and p > 0)
    over = [i for i in range(len(t))
            if not t.by_request[i] and t.procs[i] > HEADER_LONG * machine and t.run[i] > 0]
    if not over or len(over) > OUTLIER_SHARE * ran:
        return
    e = t.row(max(over, key=t.procs.__getitem__))
    notes.append(f"{len(over)} of the {ran} job(s) that ran held more than {HEADER_LONG} times "
                 f"{machine_named.format(machine)} (e.g. job {e.number}: {e.procs} in field 5), "
                 "far beyond the rest: broken records (a shifted field, a count in another "
                 "unit), each counted as the whole machine")
    for i in over:
        t.procs[i] = machine


def _peak(t: JobTable, *, ran_only: bool, known_under: int | None = None) -> int:
    """The most processors jobs of `t` (in submit order) held at once (at equal times an end
    before a start): those that ran (`ran_only`), and with `known_under` only those whose
    start is known (wait >= 0) and not sized as the whole machine of `known_under`
    processors from a request.

    A sweep in submit order: no job starts before it is submitted, so what happened before
    the submission in hand is final. Only the jobs running or waiting then are held (as
    events): not two lists of a log's 200,000 jobs."""
    events: list[tuple[float, int, int]] = []  # (time, 0 end / 1 start, processors)
    in_use = peak = 0
    pop, push = heapq.heappop, heapq.heappush
    for submit, wait, run, procs, by_request in zip(t.submit, t.wait, t.run, t.procs,
                                                   t.by_request, strict=True):
        if ran_only and not (run > 0 and procs > 0):
            continue
        if procs <= 0:  # of no known size (-1): it held nothing, nor gave back what it did
            # not hold (an unknown run, -1, would end it before its start)
            continue
        run = max(run, 0.0)
        if known_under is not None and (wait < 0 or (by_request and procs >= known_under)):
            continue
        while events and events[0][0] < submit:
            _, starts, held = pop(events)
            in_use += held if starts else -held
            peak = max(peak, in_use)
        start = submit + max(wait, 0.0)
        push(events, (start, 1, procs))
        push(events, (start + run, 0, procs))
    while events:
        _, starts, held = pop(events)
        in_use += held if starts else -held
        peak = max(peak, in_use)
    return peak


def _machine_procs(header: dict[str, int], t: JobTable, notes: list[str],
                   said_nodes: str | None = None) -> int:
    """The log machine's processors, in the unit its jobs are counted in (`t` in submit
    order).

    MaxProcs, never below the largest job that ran (a header can be wrong), nor below what
    the jobs whose starts are known (wait >= 0) held at once when that is over MaxProcs by
    more than a log's rounding (`HEADER_SHORT`: the header counted nodes, say). A header of
    MaxProcs = k x MaxNodes whose jobs never held more than MaxNodes, and filled at least
    `NODE_FILL` of it, counts its jobs in nodes (a Blue Gene's partitions): MaxNodes. Without
    MaxProcs (MaxNodes alone, its nodes of several sizes, or no header), at least what the
    jobs used at once. A MaxProcs `HEADER_LONG` times what `HEADER_LONG_JOBS` or more jobs
    that ran ever held at once is kept, and said. A request that
    never ran (cancelled, or refused as larger than the machine) says nothing of the
    machine. A header note that says sizes count nodes
    (`said_nodes`, its text) makes the machine MaxNodes where the jobs fit in it."""
    largest = max((p for r, p in zip(t.run, t.procs, strict=True) if r > 0 and p > 0),
                  default=0)
    only = largest > 0  # some job ran: only those that ran count
    largest = largest if only else max(t.procs)
    procs, nodes = header.get("MaxProcs"), header.get("MaxNodes")
    if not procs:
        return max(nodes or 0, largest, _peak(t, ran_only=only))
    # a whole machine counted from a request (`_within_machine`) is a guess: not evidence
    known = _peak(t, ran_only=only, known_under=procs)
    if said_nodes and nodes and nodes < procs and largest <= nodes and (
            known <= HEADER_SHORT * nodes):
        notes.append(f"the log's header says its sizes count nodes ({said_nodes!r}): the "
                     f"machine is its MaxNodes, {nodes} nodes (MaxProcs {procs} counts their "
                     "processors), and each job's share of it is its nodes over that")
        return nodes
    if known > HEADER_SHORT * procs:
        notes.append(f"the log's jobs held up to {known} processors at once, its header "
                     f"says MaxProcs {procs}: the machine is taken to have {max(known, largest)}")
        return max(known, largest)
    ran = sum(1 for r, p, w in zip(t.run, t.procs, t.wait, strict=True)
              if r > 0 and p > 0 and w >= 0)
    if only and ran >= HEADER_LONG_JOBS and max(known, largest) * HEADER_LONG < procs:
        held = max(known, largest)
        notes.append(f"the log's header says MaxProcs {procs}, but its {ran} jobs that ran "
                     f"never held more than {held} processors at once ({held / procs:.2%} "
                     "of it): the machine is kept at the header's size, so a replay loads "
                     "the site with little or nothing (if the header is a typo or another "
                     f"log's, correct its MaxProcs line; the jobs need {held})")
    if nodes and nodes < procs and largest <= nodes and NODE_FILL * nodes < known <= nodes:
        notes.append(f"the log's jobs never held more than {known} at once, within its "
                     f"MaxNodes {nodes} (MaxProcs {procs}): sizes are counted in nodes, "
                     f"the machine is {nodes} of them")
        return nodes
    return max(procs, largest)


def header_field(text: str) -> tuple[str | None, str]:
    """(the header field read, its value) of a comment line's text after its ';': the key
    without spaces or underscores in any case, separated from its value by ':', '=' or
    blanks before a number; (None, the text) for a comment that is no field read."""
    m = _HEADER_SPLIT.match(text)
    if not m:
        return None, text.strip()
    key = HEADER_KEYS.get(m.group(1).replace(" ", "").replace("_", "").lower())
    value = m.group(2).strip()
    # "+32": a sign SWF does not write, as a job line's "+1" is still the number
    return key, value[1:] if re.match(r"\+[0-9]", value) else value


def header_fields(text: str) -> list[tuple[str | None, str]]:
    """The header fields of one comment line: most give one, a line typed with several
    after semicolons ("MaxNodes: 128 ; MaxProcs: 1024") each of them (a semicolon in a
    note or a Partition line's words, with no field after it, is part of its text)."""
    pieces = text.split(";")
    # a later piece counts where it is a number field ("partition 3 has ..." in a note is
    # words, read by `_partitions`)
    more = [field for field in map(header_field, pieces[1:])
            if field[0] and field[0] not in ("Partition", "Queue")]
    return [header_field(pieces[0]), *more] if more else [header_field(text)]


_DIGIT_GROUPS = re.compile(r"[0-9]{1,3}(?:[ \u00a0\u202f][0-9]{3})+(?![0-9.,])")


# A header number written in another notation than a count: an exponent ("1.0731e9"), or
# a fraction, time, date, hexadecimal or unit glued to its digits ("12.5", "36:00:00",
# "2004-01-02", "0x80", "1.5k"); the count is read from the first, the others are no count
_HEADER_EXPONENT = re.compile(r"([0-9]+(?:\.[0-9]*)?[eE][+]?[0-9]+|[0-9]+\.0*)(?!\w|\.[0-9])")
_GLUED = re.compile(r"[0-9]+(?:[.:/]\w|[-x][0-9]|[eE][+-]?[0-9])")
# A number and the word after it, glued or apart ("2Ki", "2 thousand", "36h", "4K")
_SCALED = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)(\s*)([^\W0-9_]+)\b")
# Words that multiply a header count by one amount: binary prefixes and number words
_BINARY_PREFIXES = {"ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40}
_MULTIPLIERS = {**_BINARY_PREFIXES, "thousand": 10**3, "million": 10**6}
# Prefixes of two readings in a count, 1000 or 1024 each (a "2K" machine is as often 2048
# processors as 2000); SWF writes whole numbers, so such a count is not read
TWO_READING_PREFIXES = {"k": 1, "m": 2, "g": 3, "t": 4, "kilo": 1, "mega": 2, "giga": 3,
                        "tera": 4}  # -> the power of 1000 (or 1024) each stands for


def two_reading_prefix(value: str) -> str | None:
    """The prefix of two readings a header count is written with ("k" of "2k", "M" of
    "1 M jobs"), or None."""
    scaled = _SCALED.match(value.replace(",", "").replace("_", ""))
    return scaled.group(3) if scaled and scaled.group(3).lower() in TWO_READING_PREFIXES \
        else None


def two_readings_said(text: str) -> tuple[str, str]:
    """What a header line's prefix of two readings ("; MaxNodes: 4K") could mean, and what
    would be read as one; ("", "") where it has none."""
    prefix = two_reading_prefix(text.partition(":")[2])
    if prefix is None:
        return "", ""
    power = TWO_READING_PREFIXES[prefix.lower()]
    word = {1: " or 'thousand'", 2: " or 'million'"}.get(power, "")
    return (f"with {prefix!r}, a prefix of two readings, {1000**power:,} or {1024**power:,}",
            f"{'KMGT'[power - 1]}i{word} after the number is read as one")


def binary_prefix(value: str) -> str | None:
    """The binary prefix a header number is written with ("Ki" of "2Ki", "Mi" of "1 Mi"),
    or None."""
    scaled = _SCALED.match(value.replace(",", "").replace("_", ""))
    return scaled.group(3) if scaled and scaled.group(3).lower() in _BINARY_PREFIXES else None


def header_count(value: str) -> int | None:
    """The count an SWF header line gives ("1024", "2,048", "128 (each with 4 CPUs)",
    "1.0731e9", "2Ki", "2 thousand"), or None when it starts with no whole number
    ("36:00:00", "2004-01-02", "12.5", "36h" are no count: their leading digits are not
    what the line means) or with a prefix of two readings ("2k": 2000 or 2048)."""
    grouped = _DIGIT_GROUPS.match(value)  # "2 048", "163 840": thousands set apart by blanks
    if grouped:
        return int(re.sub(r"\D", "", grouped.group(0)))
    plain = value.replace(",", "").replace("_", "")
    if exponent := _HEADER_EXPONENT.match(plain):
        number = float(exponent.group(1))
        return int(number) if number.is_integer() and number < 2**63 else None
    if scaled := _SCALED.match(plain):
        number_text, apart, word = scaled.groups()
        if (multiplier := _MULTIPLIERS.get(word.lower())) is not None:
            scaled_count = Fraction(number_text) * multiplier
            return int(scaled_count) if scaled_count.denominator == 1 else None
        if word.lower() in TWO_READING_PREFIXES or not apart:
            return None  # "2k", "4 K procs"; a unit glued to its digits ("36h", "8GB")
    digits = ""
    for ch in plain:
        if not ascii_digits(ch):
            break
        digits += ch
    if _GLUED.match(plain):
        return None
    return int(digits) if digits else None


# The header fields that count seconds: a number there may be written with its unit
TIME_HEADERS = ("MaxRuntime", "UnixStartTime")
# Time units a header may name after its number ("3 days", "36 hours", "2 h", "36h"), in
# seconds; "m" (minutes or months) and months and years (of no one length) are no such unit
TIME_UNITS = {**dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1),
              **dict.fromkeys(("min", "mins", "minute", "minutes"), 60),
              **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 3600),
              **dict.fromkeys(("d", "day", "days"), 86400),
              **dict.fromkeys(("w", "wk", "wks", "week", "weeks"), 604800)}
# Words after a number that name a time unit of no one reading: such a value is not read
_UNSURE_UNITS = {"m", "mo", "mon", "mons", "month", "months", "y", "yr", "yrs", "year",
                 "years", "ms", "msec", "msecs", "millisecond", "milliseconds", "us", "usec",
                 "usecs", "microsecond", "microseconds", "ns", "nsec", "nanosecond",
                 "nanoseconds", "tick", "ticks", "jiffies", "fortnight", "fortnights"}
# One number and the word after it, glued or apart ("3 days", "36h", "1,440 min", "1.5 h")
_NUMBER_WORD = re.compile(r"\s*(?:,|and)?\s*([0-9]{1,3}(?:[ \u00a0\u202f][0-9]{3})+|[0-9][0-9,_]*)"
                          r"(\.[0-9]+)?\s*([^\W0-9_]+)\b\.?")


def header_seconds(value: str) -> int | None:
    """The seconds a time header gives: a count ("129600", "7200 s", `header_count`), or a
    number in units named by words ("3 days", "36 hours", "1 week", "2 h", "1 h 30 min",
    "1.5 hours"), read as that many seconds. None where it gives none, or gives a unit of no
    one length ("12 months", "3 m": minutes or months) or a fraction of a second: not read,
    rather than its bare number."""
    if _HEADER_EXPONENT.match(value.strip().replace(",", "")):
        return header_count(value)  # "1.0731e9": a count in exponent form
    if binary_prefix(value):
        return None  # "2Ki": 1024s count processors or bytes, not seconds
    seconds, rest, first = 0.0, value, True
    while (m := _NUMBER_WORD.match(rest)) is not None:
        digits, fraction, word = m.groups()
        unit = TIME_UNITS.get(word.lower())
        if unit is None:
            if word.lower() in _UNSURE_UNITS or not first:
                return None
            return header_count(value)  # words after a count of seconds ("7200 max")
        seconds += float(re.sub(r"\D", "", digits) + (fraction or "")) * unit
        rest, first = rest[m.end():], False
    if first:
        return header_count(value)
    if re.match(r"\s*[0-9:.]", rest) or not seconds.is_integer():
        return None  # "3 days 12:00:00", "0.0001 h": no whole count of seconds read
    return int(seconds)


def _job(text: str, path: Path, lineno: int, first: bool = False,
         fields: list[str] | None = None) -> SwfJob:
    """The job of an SWF line (`first`: no job line came before it; `fields`: the line
    split, where the caller has it)."""
    fields = text.split() if fields is None else fields
    if "\ufffd" in text or "\x00" in text:
        raise BadInput(f"{path}:{lineno}: this is not text: an SWF log is lines of numbers, "
                       "plain or compressed with gzip, bzip2 or xz")
    if first and text.startswith("<"):  # a page in place of the log, not after its lines
        raise BadInput(f"{path}:{lineno}: this is a web page (HTML or XML), not an SWF log: "
                       "a download saved a server's error or index page under the log's name; "
                       "download the log file itself (accepted: an SWF text file, plain or "
                       "compressed with gzip, bzip2 or xz)")
    if len(fields) < 11:
        _not_swf(text, fields, path, lineno)
        comment = "" if _number(fields[0]) else (
            " (header and comment lines start with ';')")
        raise BadInput(f"{path}:{lineno}: an SWF job line has 18 fields, this one "
                       f"{len(fields)}{comment}: {text[:80]!r}")
    if not _ALL_NUMBERS.fullmatch(text):
        _not_swf(text, fields, path, lineno)
        k, word = next(((k, f) for k, f in enumerate(fields, 1) if not _SWF_NUMBER.fullmatch(f)),
                       (0, ""))
        if word.startswith(";"):
            raise BadInput(f"{path}:{lineno}: a comment after the job's fields (field {k}): "
                           "SWF's comment lines start with ';', a job line holds numbers only: "
                           f"{text[:80]!r}")
        if k:
            _not_a_number(path, lineno, k, word, text)
    try:
        values = [float(fields[i]) for i in (0, 1, 2, 3, 4, 7, 8, 10)]
    except ValueError:  # signs or points out of place ("1-2", "1..2")
        k, word = next((k, f) for k, f in enumerate(fields, 1) if not _SWF_NUMBER.fullmatch(f))
        _not_a_number(path, lineno, k, word, text)
    if not all(map(math.isfinite, values)):  # "1e309"
        k = next(k for k in (1, 2, 3, 4, 5, 8, 9, 11) if not math.isfinite(float(fields[k - 1])))
        _not_a_number(path, lineno, k, fields[k - 1], text, " (too large a number)")
    if max(map(abs, values[1:4])) > MAX_LOG_TIME_S or abs(values[6]) > MAX_LOG_TIME_S or \
            len(fields) > 17 and _number(fields[17]) and \
            abs(float(fields[17])) > MAX_LOG_TIME_S:  # a clock in milliseconds
        k = next(k for k in _TIME_FIELDS if abs(float(fields[k - 1])) > MAX_LOG_TIME_S)
        raise BadInput(f"{path}:{lineno}: field {k} ({SWF_FIELDS[k - 1]}) is "
                       f"{fields[k - 1][:40]}, more seconds than {MAX_LOG_TIME_S:,} (over 300 "
                       "years): SWF's times are seconds (a converter's clock in milliseconds "
                       f"gives 1000 times them): {text[:80]!r}")
    for k in _WHOLE_FIELDS:  # counts and numbers: whole, as "8", "8.0" or "8e0" write them
        if k > len(fields):
            break
        try:
            int(fields[k - 1])
        except ValueError:
            if float(fields[k - 1]).is_integer():
                continue
            raise BadInput(f"{path}:{lineno}: field {k} ({SWF_FIELDS[k - 1]}) is "
                           f"{fields[k - 1][:40]!r}: SWF gives it as a whole number (only its "
                           "times, fields 2-4, 6, 9 and 18, may have decimals): "
                           f"{text[:80]!r}") from None
    _, submit, wait, run, _, _, req_time, _ = values
    # whole numbers read as such, not through a float: a job number of 17 digits
    # (9007199254740993) is not another's (...992)
    number, alloc, req_procs, status = (_whole(fields[i]) for i in (0, 4, 7, 10))
    procs = alloc if alloc > 0 else req_procs
    # field 17 is optional to this reader (older conversions stop at 11 or 15 fields)
    preceding = _whole(fields[16]) if len(fields) > 16 and _number(fields[16]) else -1
    think = float(fields[17]) if len(fields) > 17 and _number(fields[17]) else -1.0
    partition = _integer(fields[15]) if len(fields) > 15 else -1
    user = _integer(fields[11]) if len(fields) > 11 else -1
    queue = _integer(fields[14]) if len(fields) > 14 else -1
    return SwfJob(number=number, submit=submit, wait=wait, run=run, procs=procs,
                  req_time=req_time, status=status, by_request=alloc <= 0,
                  # a job numbered -1 or 0 (unknown) follows none, and none follows it
                  preceding=preceding if 0 < preceding != number else -1, think=think,
                  partition=partition, user=user, queue=queue)


# one field's number as SWF writes it (not Python's "9_00", "0x10", "inf", "nan")
_NUMBER = r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_SWF_NUMBER = re.compile(_NUMBER)
# a job line of such numbers only, apart by blanks: a lone sign ("-", a "-1" cut short) or
# a sign inside a number ("1-2") sends the line to the field-by-field check
_ALL_NUMBERS = re.compile(rf"{_NUMBER}(?:[ \t]+{_NUMBER})*")
# fields SWF gives in seconds (submit, wait, run, requested time, think time), and the most
# one may say: past it a moment is no date (a prediction's clock overflowed at year 9999)
_TIME_FIELDS = (2, 3, 4, 9, 18)
MAX_LOG_TIME_S = 10_000_000_000
# fields SWF gives as whole numbers: job number, processors, status, ids, preceding job
# (its times may have decimals; its memory fields are read by no replay)
_WHOLE_FIELDS = (1, 5, 8, 11, 12, 13, 14, 15, 16, 17)
SWF_FIELDS = ("job number", "submit time", "wait time", "run time", "allocated processors",
              "average CPU time", "used memory", "requested processors", "requested time",
              "requested memory", "status", "user", "group", "executable", "queue",
              "partition", "preceding job", "think time")


def _not_swf(text: str, fields: list[str], path: Path, lineno: int) -> None:
    """Name a line that is not SWF's for what it is, where that is plain: fields separated
    by another character, alone ("1,0,10") or after each field ("1, 0, 10"), or a row of
    column names. Only a line that failed to read is looked at (a log has 200,000 lines)."""
    for sep, what in ((",", "commas (a spreadsheet's CSV)"), (";", "semicolons"),
                      ("|", "bars (|)")):
        if len(text.split(sep)) >= 11 and (len(fields) < 11 or all(
                f.endswith(sep) for f in fields[:10])):
            raise BadInput(f"{path}:{lineno}: the fields are separated by {what}: SWF "
                           f"separates its 18 fields by spaces or tabs: {text[:80]!r}")
    if len(fields) >= 11 and sum(not _number(f) for f in fields) > len(fields) // 2:
        raise BadInput(f"{path}:{lineno}: a row of words, not numbers (column names, as a "
                       "spreadsheet writes above its rows?): SWF has no such row; its header "
                       f"and comment lines start with ';': {text[:80]!r}")


def _not_a_number(path: Path, lineno: int, k: int, word: str, text: str, why: str = ""
                  ) -> None:
    """Refuse field `k` of a job line, `word`, which is no number SWF writes (`why`: said
    after the word)."""
    what = f" ({SWF_FIELDS[k - 1]})" if k <= len(SWF_FIELDS) else " (past SWF's 18 fields)"
    raise BadInput(f"{path}:{lineno}: field {k}{what} is {word[:40]!r}{why}: SWF fields must be "
                   "numbers of digits, a sign, a decimal point or an exponent (-1 where "
                   f"unknown): {text[:80]!r}")


def _whole(field: str) -> int:
    """A whole-number field's value, exactly ("9007199254740993"), or as a float writes it
    ("8.0", "8e0"): the field is checked to be a number already."""
    try:
        return int(field)
    except ValueError:
        return int(float(field))


def _integer(field: str) -> int:
    """A field's whole number ("2", "2.0"), -1 where it is none (SWF's unknown)."""
    try:
        return int(field)
    except ValueError:
        return int(float(field)) if _number(field) else -1


def _number(field: str) -> bool:
    try:
        return math.isfinite(float(field))
    except ValueError:
        return False


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def _size(procs: int, log_procs: int, c: ClusterDef) -> tuple[int, int]:
    """(nodes, CPUs per node) holding the job's share of the machine on cluster `c`."""
    total = c.nodes * c.cpus
    return _layout(min(total, max(1, round(procs / log_procs * total))), c)


def _layout(cpus: int, c: ClusterDef) -> tuple[int, int]:
    """(nodes, CPUs per node) of `cpus` CPUs on as few of cluster `c`'s nodes as hold them."""
    nodes = math.ceil(cpus / c.cpus)
    return nodes, math.ceil(cpus / nodes)


def _round_up_to(target: float, sizes: list[tuple[int, int]], weights: list[float],
                 shares: list[float], busy_s: list[float], c: ClusterDef
                 ) -> tuple[float, int]:
    """Sizes rounded down lose load that thinning cannot give back (it only drops jobs): a
    log of 96 processors on 128 CPUs makes each serial job one CPU, 1.33 of its share. While
    the mapped load is short of `target`, the jobs that lost most by rounding (a share of
    `shares` CPUs, busy `busy_s` seconds in the window) get their share rounded up instead,
    each as long as that brings the load nearer the target. `sizes` and `weights` are
    changed in place; returns (the mapped load, how many jobs were rounded up)."""
    mapped, raised = sum(weights), 0
    total = c.nodes * c.cpus
    lost = sorted((i for i, (share, size) in enumerate(zip(shares, sizes, strict=True))
                   if busy_s[i] > 0 and math.prod(size) < min(share, total)),
                  key=lambda i: math.prod(sizes[i]) - shares[i])
    for i in lost:
        if mapped >= target:
            break
        size = _layout(min(total, math.ceil(shares[i])), c)
        more = busy_s[i] * math.prod(size) - weights[i]
        if more > 0 and mapped + more - target < target - mapped:
            sizes[i], weights[i] = size, weights[i] + more
            mapped += more
            raised += 1
    return mapped, raised


def _partition_limits(c: ClusterDef) -> list[tuple[str | None, int]]:
    """(partition, limit in minutes), the default first (named None: sbatch picks it)."""
    from ..dialects.slurm_script import parse_slurm_time

    out = []
    for p in sorted(c.partitions, key=lambda p: not p.default):
        limit = parse_slurm_time(p.max_time) if p.max_time != "INFINITE" else None
        out.append((None if p.default else p.name, (limit or 365 * 86400) // 60))
    return out or [(None, _max_minutes(c))]


def _partition_for(limits: list[tuple[str | None, int]], wall_min: int
                   ) -> tuple[str | None, int]:
    """The default partition when the request fits it, else the one with the smallest limit
    that holds it, else the longest."""
    if wall_min <= limits[0][1]:
        return limits[0]
    fits = [p for p in limits if p[1] >= wall_min]
    return min(fits, key=lambda p: p[1]) if fits else max(limits, key=lambda p: p[1])


def _window_with_arrival(submits: Sequence[float], lo: float, hi: float, span: float,
                         draws: random.Random, missed: float) -> float:
    """The start of a window holding a submission of `submits` (sorted), for a log idle most
    of the time (a test cluster used on a few afternoons, a queue where most submissions
    were cancelled) where uniform draws keep missing them: a submission drawn among those a
    window in [lo, hi] can hold, then a start that holds it."""
    first = bisect.bisect_left(submits, lo)
    past = bisect.bisect_left(submits, hi + span)
    if first >= past:
        return missed
    submit = submits[draws.randrange(first, past)]
    latest, earliest = min(hi, submit), max(lo, submit - span)
    return latest - draws.random() * (latest - earliest)  # in (submit - span, submit]


def _as_log_seconds(log: SwfLog, start: float) -> str:
    """What to give instead of a --start that is a Unix time inside the log (a date turned
    into seconds), when its header says when log second 0 was; else nothing."""
    first, last = log.whole_span or log.span
    if first >= UNIX_LIKE and 0 <= start < first and first + start <= last:
        # submit times that are Unix times (a conversion kept them), a --start counted
        # from the log's beginning
        return (f"; the log's submit times are Unix times (its first {first:.10g}): "
                f"{start:.10g} s after its first submission is --start {first + start:.10g}")
    if not log.unix_start or not first <= start - log.unix_start <= last:
        return ""
    return (f"; {start:.10g} reads as a Unix time: log seconds count from the log's "
            f"UnixStartTime {log.unix_start}, so that moment is --start "
            f"{start - log.unix_start:.10g}")


def plan_replay(log: SwfLog, c: ClusterDef, *, scale: float = 60.0, duration_s: float = 600.0,
                seed: int | None = None, start: float | None = None, draw: int = 0,
                history_s: float = 0.0) -> ReplayPlan:
    """The replay of `duration_s` real seconds of `log` on cluster `c` (see the module doc).

    `history_s` > 0: the plan's `history` holds the log's jobs that ended in the
    `history_s` real seconds (times `scale` log seconds) before the window, at most
    HISTORY_MAX of the latest: what the site's accounting would hold had it replayed the
    log that long already (`load.write_history` writes it where the site keeps it).

    `start` (log seconds) fixes the window; else `seed` draws it (same seed, same window and
    same thinning), and `draw` > 0 draws another window from the same seed (a log replayed
    on several sites). `scale` center seconds pass per real second.
    """
    if not all(math.isfinite(x) and x > 0 for x in (scale, duration_s)):
        raise BadInput(f"--scale and --duration must be positive numbers (got {scale}, "
                       f"{duration_s})")
    if start is not None and not math.isfinite(start):
        raise BadInput(f"--start must be a number of log seconds (got {start})")
    if scale < MIN_SCALE:
        raise BadInput(f"--scale must be at least {MIN_SCALE:g} center seconds per real "
                       f"second (got {scale:g})")
    span = duration_s * scale
    if not math.isfinite(span):
        raise BadInput(f"--duration {duration_s:g} x --scale {scale:g} is more log seconds "
                       "than a number holds: give a shorter --duration or a smaller --scale")
    first, last = log.span
    within = log.whole_span or (first, last)  # where a --start may be
    if start is None:
        # a day in, so its queue has formed; a log too short for that and a whole window
        # gives up the day before the window
        lo = first + min(WARMUP_S, max(0.0, last - first - span))
        hi = max(lo, last - span)
        draws = random.Random(seed if not draw else f"{seed}:{draw}")
        # an arrival is a job that ran: one cancelled in the queue is no load (a log where
        # nothing ran draws among every submission, and says so)
        submits = log.arrival_times()
        for _ in range(REDRAWS):  # a window with no arrival (the machine was down) again
            start = draws.uniform(lo, hi)
            i = bisect.bisect_left(submits, start)
            if i < len(submits) and submits[i] < start + span:
                break
        else:
            start = _window_with_arrival(submits, lo, hi, span, draws, start)
    elif not within[0] <= start <= within[1]:
        raise BadInput(f"--start {start:.10g} is outside the log {log.name} "
                       f"(its jobs were submitted between {within[0]:.0f} and "
                       f"{within[1]:.0f} s)" + _as_log_seconds(log, start))
    end = start + span
    rng = random.Random(f"{seed}:{log.name}:{c.name}:{start}")
    limits = _partition_limits(c)
    total_cpus = c.nodes * c.cpus

    # where the log records no waits, its machine is simulated to rebuild them (the queue
    # standing at the window's start, and the ends of the history's jobs)
    history_from = start - history_s * scale
    sim = _simulated(log, min(start, history_from), start, end)
    running, queued, arrivals = [], [], []
    # only these jobs are made objects of: not a log's 200,000 for a window of 500
    # (jobs that never ran, cancelled in the queue, or of unknown size are no load)
    for j in log.table.window(start, end, sim.waits if sim else None):
        if j.submit >= start:
            arrivals.append(j)
        elif j.start > start:
            queued.append(j)
        elif j.end > start:
            running.append(j)

    shortened: list[tuple[str, int, int]] = []  # (job, its request, the limit) in minutes
    floored: list[str] = []  # jobs that ran, whose scaled runtimes round to nothing

    asked = log.asked_s  # field 9, else its queue's limit, else the header's MaxRuntime

    def load_job(j: SwfJob, at_s: float, run_s: float, req_s: float, kind: str) -> LoadJob:
        nodes, per_node = sizes[id(j)]
        run_s = max(run_s, 0.0)
        # a job that ran past its request (a grace period, or a request of CPU time) was let
        # run that long by its center: its limit is its runtime, not a kill the log never had
        wall_min = (max(1, math.ceil(max(req_s, run_s) / scale / 60)) if asked(j) > 0
                    else None)
        # a job without a request is placed by its runtime, and gets its partition's limit
        partition, limit_min = _partition_for(limits, wall_min or math.ceil(run_s / scale / 60))
        name = f"trace-{kind}-{j.number}" + (f".{j.copy + 1}" if j.copy else "")
        if wall_min and math.ceil(req_s / scale / 60) > limit_min:
            shortened.append((name, math.ceil(req_s / scale / 60), limit_min))
        runtime_s = round(run_s / scale, 2)
        if run_s > 0 and runtime_s < MIN_RUNTIME_S:  # it ran: it stays a job that runs
            floored.append(name)
            runtime_s = MIN_RUNTIME_S
        return LoadJob(at_s=round(at_s, 3), site=c.name, nodes=nodes, cpus_per_node=per_node,
                       runtime_s=runtime_s, walltime_min=min(wall_min or limit_min, limit_min),
                       name=name, partition=partition)

    def busy(j: SwfJob, cpus: float) -> float:
        return cpus * _overlap(j.start, j.end, start, end)

    candidates = [*running, *queued, *arrivals]
    log_busy = sum(busy(j, j.procs) for j in candidates)
    log_util = log_busy / (log.max_procs * span)
    size_of = [_size(j.procs, log.max_procs, c) for j in candidates]
    weights = [busy(j, math.prod(size)) for j, size in zip(candidates, size_of, strict=True)]
    target = log_util * total_cpus * span
    mapped, raised = _round_up_to(target, size_of, weights,
                                  [j.procs / log.max_procs * total_cpus for j in candidates],
                                  [busy(j, 1) for j in candidates], c)
    sizes = {id(j): size for j, size in zip(candidates, size_of, strict=True)}
    # jobs rounded up came as near the log's load as whole CPUs do: none is dropped
    keep_p = 1.0 if mapped <= 0 or raised else min(1.0, target / mapped)
    keep = _thin(weights, target, keep_p, rng)
    chosen = {id(j) for j, k in zip(candidates, keep, strict=True) if k}
    running, queued, kept = ([j for j in js if id(j) in chosen]
                             for js in (running, queued, arrivals))
    site_util = sum(w for w, k in zip(weights, keep, strict=True) if k) / (total_cpus * span)
    notes = list(log.notes)
    if keep_p < 1.0:
        notes.append(f"jobs kept with probability {_probability(keep_p)}: the mapped sizes "
                     f"(at least one CPU each) load {c.name} more than the log's machine was "
                     "loaded")
    if raised:
        notes.append(f"{raised} job(s) were given their share of {c.name}'s CPUs rounded up "
                     f"(the log's machine has {log.max_procs} {log.unit}, {c.name} "
                     f"{total_cpus} CPUs): rounded down, the jobs would load it less than the "
                     "log's machine was loaded")
    if log_util > 1.0:
        notes.append(f"the log's jobs use {log_util:.2f} times its machine in this window"
                     f": {c.name} gets more than it can run at once, and a queue builds")
    if sim:
        simulated = {(log.table.number[i], log.table.copy[i]) for i in sim.waits}
        unknown = sum(1 for j in candidates if (j.number, j.copy) in simulated)
        if unknown:
            notes.append(_simulation_note(sim, unknown, len(candidates), log, start,
                                          len(queued), len(running)))
    if not log.any_ran():
        notes.append(f"no job of the log ran at all (in {log.name} every run time is 0 or "
                     f"-1, or its size unknown): no window of it loads {c.name}")
    elif not candidates:
        notes.append(f"no job of the log ran, waited or arrived in this window: {c.name} "
                     "gets no load from it (another --seed or --start draws another window)")
    elif not (running or queued or kept):
        notes.append(f"the {len(candidates)} job(s) of the log in this window were all "
                     f"thinned out: each is at least one of {c.name}'s {total_cpus} CPUs, "
                     f"more than the log's load here ({log_util:.2g} of its machine, "
                     f"{target / span:.2g} CPUs of {c.name}); a longer --duration or another "
                     "window replays some")
    elif (covered := min(end, log.last_end) - start) > 0 and (
            log_busy / (log.max_procs * covered) < QUIET * log.utilization):
        # (a window past the log's end is measured over the part the log covers: a log
        # shorter than the window is no quiet spell, and its end is said below)
        notes.append(f"the log's machine was {log_util:.1%} busy in this window, "
                     f"{log.utilization:.1%} over the whole log: the window falls in a quiet "
                     f"spell (an idle gap, a drained machine), and {c.name} gets little load; "
                     "another --seed or --start draws a busier one")
    if end > last + scale:  # more than a real second with no arrival
        notes.append(f"the window runs {(end - last) / scale:.0f} real seconds past the "
                     f"log's last submission (--duration {duration_s:g} s at --scale "
                     f"{scale:g} is {span:g} log seconds; from the window's start the log "
                     f"has {max(last - start, 0.0):g}): no job arrives after "
                     f"{max(last - start, 0.0) / scale:.0f} s of the replay")
    jobs = [load_job(j, 0.0, j.end - start, asked(j) - (start - j.start), "run")
            for j in running]
    jobs += [load_job(j, 0.0, j.run, asked(j), "wait") for j in queued]
    jobs += [load_job(j, (j.submit - start) / scale, j.run, asked(j), "arrive") for j in kept]
    # a dependent job waits for its preceding job when that is replayed too: the site may
    # run the predecessor later than the log did, and the pair's order is the user's
    # its think time (field 18, scaled as the other times) passes after that end before it
    # may start, as its user took it to submit the job after seeing the predecessor's end
    # A think time is at most the log's own gap from the predecessor's end to the submission
    # (a think time of days for a job submitted an hour after its predecessor ended would
    # hold it, and the load, for days)
    # A part of a preempted or checkpointed job without its summary line (status 2, then 3
    # or 4) runs after the part before it ends, and as long after as the log's job was
    # swapped out: submitted together, the parts would run at once, one job several times
    replayed: dict[int, tuple[str, float]] = {}  # job number -> (its name, its end in the log)
    replayed_copy: dict[tuple[int, int], tuple[str, float]] = {}  # (number, copy) -> the same
    to_resume: dict[tuple[int, int], tuple[str, float]] = {}  # a status 2 part -> the same
    resumed: list[str] = []
    too_long: list[tuple[str, float, float]] = []  # (job, its think time, the log's gap)
    unheld: list[tuple[str, str]] = []  # (running job, its predecessor, running too)
    for k, (source, job) in enumerate(zip([*running, *queued, *kept], list(jobs), strict=True)):
        before = (to_resume.get((source.number, source.copy - 1))
                  if source.status in PARTIAL_STATUS and source.copy and source.number > 0
                  else None)
        if before is not None:
            after, ended = before
            jobs[k] = dataclasses.replace(job, after=after, think_s=round(
                max(source.start - ended, 0.0) / scale, 3))
            resumed.append(job.name)
        elif source.preceding > 0 and source.preceding in replayed:
            # logs joined, each numbered from 1: the predecessor of the same copy (the same
            # log's), else the latest of that number
            after, ended = replayed_copy.get((source.preceding, source.copy),
                                             replayed[source.preceding])
            if k < len(running) and source.start < ended:
                # running at the window's start beside the job it names: the log ran it
                # before that end, and the queue rebuilt at the start has it running
                unheld.append((job.name, after))
            else:
                think = max(source.think, 0.0)
                gap = max(source.submit - ended, 0.0)
                if think > gap:
                    too_long.append((job.name, think, gap))
                    think = gap
                jobs[k] = dataclasses.replace(job, after=after,
                                              think_s=round(think / scale, 3))
        replayed[source.number] = (job.name, source.end)
        if source.status not in PARTIAL_STATUS:  # a job's parts: its last one is followed
            replayed_copy[(source.number, source.copy)] = (job.name, source.end)
        if source.status == PARTIAL_STATUS[0]:
            to_resume[(source.number, source.copy)] = (job.name, source.end)
    if resumed:
        notes.append(f"{len(resumed)} part(s) of preempted or checkpointed jobs (status 2 "
                     "lines, then 3 or 4, without a summary line) each wait for the part "
                     f"before them to end, and then as long as the log's job was out (e.g. "
                     f"{resumed[0]}): only the last part ends its job")
    if unheld:
        name, after = unheld[0]
        notes.append(f"{len(unheld)} job(s) running at the window's start name as their "
                     f"preceding job (field 17) one still running then (e.g. {name} names "
                     f"{after}): the log started them before that end, so they run from the "
                     "start, not held for it")
    if too_long:
        name, think, gap = too_long[0]
        notes.append(f"{len(too_long)} dependent job(s) have a think time (field 18) longer "
                     f"than the log's gap from the predecessor's end to their submission "
                     f"(e.g. {name}: {think:g} s, the gap {gap:g} s): each waits the gap")
    unasked_sources = [source for source in [*running, *queued, *kept] if source.req_time <= 0]
    unasked = [job for source, job in zip([*running, *queued, *kept], jobs, strict=True)
               if source.req_time <= 0]
    by_queue = sorted({(q, s) for q, s in log.queue_limits
                       if any(source.queue == q for source in unasked_sources)})
    if by_queue:
        notes.append(f"{len(unasked)} job(s) have no requested time (field 9 is -1 or 0, "
                     f"e.g. {unasked[0].name}): each asks for its queue's MaxRuntime (field 15; "
                     "the header's Queue lines: "
                     + ", ".join(f"queue {q} {s:g} s" for q, s in by_queue)
                     + (f"; another queue's, the log's MaxRuntime {log.max_runtime:g} s"
                        if log.max_runtime else "; another queue's, its partition's limit")
                     + f"), what its center's scheduler gave a job that asked for none, at "
                     f"--scale {scale:g}, or its run where that was longer")
    elif unasked and log.max_runtime:
        notes.append(f"{len(unasked)} job(s) have no requested time (field 9 is -1 or 0, "
                     f"e.g. {unasked[0].name}): each asks for the log's MaxRuntime "
                     f"({log.max_runtime:g} s, its center's limit: what its scheduler gave a "
                     f"job that asked for none), {math.ceil(log.max_runtime / scale / 60)} "
                     f"min at --scale {scale:g}, or its run where that was longer")
    elif unasked:
        given = sorted({(j.partition or "the default", j.walltime_min) for j in unasked},
                       key=lambda p: p[1])
        notes.append(f"{len(unasked)} job(s) have no requested time (field 9 is -1 or 0, "
                     f"e.g. {unasked[0].name}): each gets the limit of the partition its run "
                     "fits, as a scheduler gives a job that asks for none ("
                     + ", ".join(f"{name} {limit} min" for name, limit in given) + ")")
    cut = [j for j in jobs if j.runtime_s > j.walltime_min * 60]
    if cut:
        notes.append(f"{len(cut)} job(s) ran longer than {c.name}'s longest partition allows "
                     f"(e.g. {cut[0].name}): its scheduler ends them at that limit")
    if shortened:
        name, asked, limit = shortened[0]
        notes.append(f"{len(shortened)} job(s) asked for more time than {c.name}'s longest "
                     f"partition allows (e.g. {name}: {asked} min at --scale {scale:g}, the "
                     f"limit {limit} min): each request is cut to that limit")
    if floored:
        notes.append(f"{len(floored)} job(s) ran less than {MIN_RUNTIME_S} real seconds at "
                     f"--scale {scale:g} (e.g. {floored[0]}): each runs {MIN_RUNTIME_S} s, "
                     "longer than its share of the log; a smaller --scale keeps their lengths")
    if not log.cleaned and (burst := _flurry(log, arrivals)):
        notes.append(burst)
    skipped, first_skipped = not_replayed(log.table, start, end)
    if skipped and log.any_ran():
        notes.append(_skipped_note(skipped, first_skipped,
                                   len(arrivals) + sum(skipped.values())))
    history = (_history(log, c, start, scale, history_s, limits, sim, notes)
               if history_s > 0 else [])
    return ReplayPlan(site=c.name, log=log.name, window=(start, end), scale=scale, jobs=jobs,
                      running_at_start=len(running), queued_at_start=len(queued),
                      arrivals_in_log=len(arrivals), arrivals_kept=len(kept),
                      log_utilization=log_util, site_utilization=site_util, notes=notes,
                      history=history, skipped=skipped)


def _flurry(log: SwfLog, arrivals: list[SwfJob]) -> str:
    """What a plan says of a flurry among its arrivals (a raw log's burst of one user's
    jobs, which the archive's cleaned logs remove), else nothing."""
    by_user: dict[int, int] = {}
    for j in arrivals:
        if j.user > 0:
            by_user[j.user] = by_user.get(j.user, 0) + 1
    if not by_user:
        return ""
    user, count = max(by_user.items(), key=lambda kv: kv[1])
    if count < max(FLURRY_JOBS, FLURRY_SHARE * len(arrivals)):
        return ""
    whole = sum(log.user_jobs.values())  # (read once a log, and only for such a window)
    usual = log.user_jobs.get(user, 0) / whole if whole else 1.0
    if count / len(arrivals) < FLURRY_OVER * usual:
        return ""
    return (f"user {user} (field 12) submitted {count} of the window's {len(arrivals)} "
            f"arrivals, {usual:.1%} of the whole log's jobs: a flurry "
            "(a burst of one user's jobs) is replayed as the log has it; the archive's "
            "cleaned version of a log (-cln) removes such bursts")


# Why a submission in the window is no load, as `ReplayPlan.skipped` counts it
SKIP_REASONS = (("no_run_time", "never ran", "field 4, run time, is -1 or below: cancelled "
                                             "before it started, or not recorded"),
                ("zero_run_time", "ran 0 s", "field 4 is 0"),
                ("no_processors", "give no processor count", "fields 5 and 8 are 0 or -1"))


def not_replayed(t: JobTable, start: float, end: float) -> tuple[dict[str, int],
                                                                 dict[str, int]]:
    """The submissions in [start, end) that are no load, counted by reason
    (`SKIP_REASONS`), and the first job number of each reason (`t` in submit order)."""
    counts: dict[str, int] = {}
    first: dict[str, int] = {}
    for i in range(bisect.bisect_left(t.submit, start), bisect.bisect_left(t.submit, end)):
        run, procs = t.run[i], t.procs[i]
        reason = ("no_run_time" if run < 0 else "zero_run_time" if run == 0
                  else "no_processors" if procs <= 0 else None)
        if reason:
            counts[reason] = counts.get(reason, 0) + 1
            first.setdefault(reason, t.number[i])
    return counts, first


def _skipped_note(counts: dict[str, int], first: dict[str, int], submitted: int) -> str:
    """What a plan says of the submissions in its window that it does not replay."""
    parts = [f"{counts[key]} {what} ({why}; e.g. job {first[key]})"
             for key, what, why in SKIP_REASONS if counts.get(key)]
    return (f"{sum(counts.values())} of the {submitted} job(s) submitted in this window are "
            f"not replayed, being no load: {'; '.join(parts)}")


def _simulated(log: SwfLog, since: float, start: float, end: float) -> Simulated | None:
    """The log's machine simulated where jobs from `since` (less a warm-up) to `end` have no
    recorded wait (`trace_sim`); None where every wait there is recorded."""
    since -= SIM_WARMUP_S
    if not unknown_waits(log.table, since, end):
        return None
    # a log of several machines whose header sizes each (a grid's clusters): each runs its
    # own jobs, as the center's did; else the log's one machine
    sizes = {number: procs for number, _, procs in log.partitions if procs}
    present = set(log.table.partition)
    if len(present) < 2 or not present <= set(sizes):
        return simulate_waits(log.table, log.max_procs, since, start, end,
                              unasked_s=log.max_runtime, queue_limits=dict(log.queue_limits))
    parts = [simulate_waits(log.table, sizes[q], since, start, end, partition=q,
                            unasked_s=log.max_runtime, queue_limits=dict(log.queue_limits))
             for q in sorted(present)]
    return Simulated(waits={i: w for sim in parts for i, w in sim.waits.items()},
                     since=min(sim.since for sim in parts), jobs=sum(sim.jobs for sim in parts),
                     cut=any(sim.cut for sim in parts),
                     from_log_start=all(sim.from_log_start for sim in parts),
                     partitions=len(parts))


def _simulation_note(sim: Simulated, unknown: int, candidates: int, log: SwfLog,
                     start: float, queued: int, running: int) -> str:
    """What the plan says of waits it simulated."""
    since = ("the log's first submission" if sim.from_log_start
             else f"{start - sim.since:g} log seconds before the window")
    return (f"{unknown} of the window's {candidates} job(s) have no recorded wait (field 3 "
            "is -1): their starts are simulated, "
            + (f"each of the log's {sim.partitions} partitions (field 16) on its own "
               f"{log.unit} (the header's Partition lines)" if sim.partitions else
               f"the log's machine of {log.max_procs} {log.unit}")
            + " running its jobs first come first served with "
            "EASY backfilling by their requested times (else "
            + ("their queue's MaxRuntime (the header's Queue lines)" if log.queue_limits
               else "") + (", else " if log.queue_limits and log.max_runtime else "")
            + (f"the log's MaxRuntime, {log.max_runtime:g} s" if log.max_runtime
               else ", else their runs" if log.queue_limits else "their runs") + "), from "
            f"{since} ({sim.jobs} jobs"
            + (f", at most {SIM_MAX_JOBS} before the window and as many in it; a later "
               "one starts at its submission" if sim.cut else "")
            + "; the machine taken empty there but for the jobs the log has running): the "
            f"queue rebuilt at the window's start is the simulation's ({queued} waiting, "
            f"{running} running), not the log's own, which it does not record")


def _history(log: SwfLog, c: ClusterDef, start: float, scale: float, history_s: float,
             limits: list[tuple[str | None, int]], sim: Simulated | None = None,
             notes: list[str] | None = None) -> list[HistoryJob]:
    """The log's jobs that ended in the `history_s` real seconds before the window (see
    `plan_replay`), sized and scaled as the replay sizes and scales its own; their ends
    simulated where the log records no wait (`sim`). A log that begins later than the
    history asked, or holds more jobs than are kept, is said in `notes`."""
    since = start - history_s * scale
    # a job cancelled while it waited is in a center's accounting too, with its wait: its
    # wait is a censored sample of the queue (it would have waited at least that long),
    # which the calibration reads as such (`calibration.QueueWait.left`)
    ended = sorted([*log.table.ended_within(since, start, sim.waits if sim else None),
                    *_left_queue(log.table, since, start)], key=lambda j: j.end)
    first = (log.whole_span or log.span)[0]
    if notes is not None and first > since:
        notes.append(f"--history asked for {history_s:g} real seconds before the window "
                     f"({history_s * scale:g} log seconds at --scale {scale:g}); the log "
                     f"begins {max(start - first, 0.0):g} log seconds before it "
                     f"({max(start - first, 0.0) / scale:g} real s): the history holds the "
                     f"{min(len(ended), HISTORY_MAX)} job(s) that ended in that time only")
    if notes is not None and len(ended) > HISTORY_MAX:
        notes.append(f"{len(ended)} of the log's jobs ended in the --history before the "
                     f"window: the latest {HISTORY_MAX} are written")
    ended = ended[-HISTORY_MAX:]
    left = [j for j in ended if j.run <= 0]
    if notes is not None and left:
        notes.append(f"{len(left)} job(s) of the --history were cancelled while they waited "
                     f"(status 5, no run; e.g. job {left[0].number}): each is in the "
                     "accounting as a center's holds it, CANCELLED at the end of its wait "
                     "(Slurm: its start its cancel; Grid Engine writes no such record), a "
                     "wait it would have waited at least")
    out = []
    for j in ended:
        nodes, per_node = _size(j.procs, log.max_procs, c)
        req = log.asked_s(j)
        wall_min = max(1, math.ceil(max(req, j.run) / scale / 60)) if req > 0 else None
        partition, limit_min = _partition_for(limits, wall_min or math.ceil(j.run / scale / 60))
        name = f"trace-hist-{j.number}" + (f".{j.copy + 1}" if j.copy else "")
        out.append(HistoryJob(
            name=name, submit_s=round((j.submit - start) / scale, 3),
            start_s=round((j.start - start) / scale, 3), end_s=round((j.end - start) / scale, 3),
            nodes=nodes, cpus=nodes * per_node,
            walltime_min=min(wall_min or limit_min, limit_min), partition=partition,
            status=j.status, started=j.run > 0))
    return out


def _left_queue(t: JobTable, since: float, until: float) -> Iterator[SwfJob]:
    """The jobs cancelled while they waited (status 5, no run) that left the queue in
    [since, until): each ends at its submission plus its recorded wait (a wait of -1 says
    nothing of when it left). Its run is 0."""
    for i in range(bisect.bisect_left(t.submit, until)):
        if t.status[i] == 5 and t.run[i] <= 0 and t.wait[i] >= 0 and t.procs[i] > 0 and (
                since <= t.submit[i] + t.wait[i] < until):
            yield dataclasses.replace(t.row(i), run=0.0)


def _probability(p: float) -> str:
    """`p` in as few decimals (two at least) as keep it apart from 0 and 1: 0.998 is not
    "1.00", 0.003 not "0.00"."""
    digits = 2
    while digits < 6 and round(p, digits) in (0.0, 1.0) and 0.0 < p < 1.0:
        digits += 1
    return f"{p:.{digits}f}"


def _thin(weights: list[float], target: float, keep_p: float, rng: random.Random
          ) -> list[bool]:
    """Which jobs to keep: each with probability `keep_p` (one for the running, the waiting
    and the arriving jobs alike, so the rebuilt queue and the arrivals keep their shape at a
    smaller size), of `THIN_DRAWS` such draws the one whose busy CPU-seconds (`weights`)
    come nearest `target` (a job that does not run in the window keeps its first draw). One
    draw alone misses it by what a few jobs weigh: on a site of 4 CPUs one job running
    through the window is a quarter of its load."""
    if keep_p >= 1.0:
        return [True] * len(weights)
    first = [rng.random() < keep_p for _ in weights]
    best = (abs(sum(w for w, k in zip(weights, first, strict=True) if k) - target), first)
    loaded = [i for i, w in enumerate(weights) if w > 0]
    for _ in range(THIN_DRAWS - 1):
        if best[0] <= THIN_CLOSE * target:
            break
        # a job that does not run in the window weighs nothing: its first draw stands
        keep = list(first)
        for i in loaded:
            keep[i] = rng.random() < keep_p
        miss = abs(sum(w for w, k in zip(weights, keep, strict=True) if k) - target)
        if miss < best[0]:
            best = (miss, keep)
    return best[1]


def plan_replays(pairs: list[tuple[str | Path, ClusterDef]], *, scale: float = 60.0,
                 duration_s: float = 600.0, seed: int | None = None,
                 start: float | None = None, partitions: Sequence[str | None] = (),
                 history_s: float = 0.0) -> list[ReplayPlan]:
    """One replay per (log file, cluster) pair, each log read once. A log given for several
    sites replays a different window of it on each (its k-th use draws window k from the
    seed), so two sites never carry the same jobs at the same moments; a fixed `start` is
    the same window everywhere, as asked. `partitions` (one per pair, None for the whole
    log) replays one partition of a log as its own machine (`one_partition`): different
    partitions of one log, being different machines, share the seed's first window, as
    the center ran them at once."""
    logs: dict[str, SwfLog] = {}
    uses: dict[tuple[str, str | None], int] = {}
    on_site: dict[str, int] = {}  # site -> logs replayed on it so far
    plans = []
    for k, (path, c) in enumerate(pairs):
        key = str(Path(path).resolve())
        if key not in logs:
            logs[key] = read_swf(path)
        which = partitions[k] if k < len(partitions) else None
        log = logs[key] if which is None else one_partition(logs[key], which)
        use = (key, None if which is None else log.name)
        # the whole log shares its jobs with each of its partitions: never their window
        draw = (sum(n for (path_, _), n in uses.items() if path_ == key) if which is None
                else uses.get(use, 0) + uses.get((key, None), 0))
        plan = plan_replay(log, c, scale=scale, duration_s=duration_s, seed=seed,
                           start=start, draw=draw, history_s=history_s)
        uses[use] = uses.get(use, 0) + 1
        on_site[c.name] = k = on_site.get(c.name, 0) + 1
        if k > 1:  # a second log on one site: its job numbers are another log's too
            plan = _named_apart(plan, f"trace{k}-")
        plans.append(plan)
    return plans


def _named_apart(plan: ReplayPlan, prefix: str) -> ReplayPlan:
    """`plan` with its jobs named `prefix`... instead of trace-...: two logs replayed on one
    site both have a job 1, and a dependent job of one must not wait for the other's."""
    def renamed(name: str | None) -> str | None:
        return None if name is None else prefix + name.removeprefix("trace-")
    jobs = [dataclasses.replace(j, name=renamed(j.name), after=renamed(j.after))
            for j in plan.jobs]
    history = [dataclasses.replace(h, name=renamed(h.name)) for h in plan.history]
    note = (f"{plan.site} replays another log too: this one's jobs are named {prefix}..., "
            f"and {plan.site} carries the load of both")
    return dataclasses.replace(plan, jobs=jobs, history=history, notes=[*plan.notes, note])
