"""The twelfth sweep of SWF logs, written here from the Parallel Workloads Archive's format
definition where the earlier sweeps did not look: a job line holding a word (a queue or
user name where SWF has numbers: before, read as -1 and nothing said; a comment after the
fields, the same), lines of more than SWF's 18 fields (before, the rest dropped silently),
a user field of 0 on every line (SWF numbers users from 1: a converter's "not known";
before, every job was one user's, queued behind its own), and together with those an
archive header of every kind (MaxNodes, MaxProcs, Queues, Partitions, Note) over jobs
cancelled, -1 fields, group 0 and think times, a block of submissions a day back, gzip with
CRLF against plain, and 100,000 jobs read in bounded memory and time. Each read by
`read_swf`, planned by `plan_replay` and, where it scores, by the prediction benchmark; no
test bed."""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import pytest
from sweep_helpers import traced_memory

from benchmarks import prediction
from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import plan_replay, read_swf

HEADER = ("; Version: 2.2\n; Computer: a cluster of 32 nodes\n; MaxJobs: {jobs}\n"
          "; MaxRecords: {jobs}\n; MaxNodes: 32\n; MaxProcs: 128\n"
          "; Queues: 1 batch, 2 debug (a queue's number is field 15)\n"
          "; Partitions: 1 main (the only partition)\n"
          "; Note: jobs cancelled before they started have status 5 and -1 times\n"
          "; Note: user and group ids are 1..N; think times from the session data\n")


def _line(number: int, submit: float, *, wait: float = 60, run: float = 600, procs: int = 8,
          status: int = 1, user: int | str = 1, group: int = 0, queue: int | str = 1,
          preceding: int = -1, think: float = -1, extra: str = "") -> str:
    """One SWF job line (18 fields, and `extra` after them)."""
    return (f"{number} {submit:g} {wait:g} {run:g} {procs} -1 -1 {procs} 900 -1 {status} "
            f"{user} {group} -1 {queue} 1 {preceding} {think:g}{extra}\n")


def _body(count: int, **kw) -> list[str]:
    """`count` jobs every 10 minutes, waits of 0, 5 and 10 minutes, every 7th cancelled
    before it started (status 5, -1 times), users 1-5, every 5th job dependent on the
    one before it with a think time of 2 minutes."""
    lines = []
    for n in range(1, count + 1):
        if n % 7 == 0:
            lines.append(_line(n, 600 * n, wait=-1, run=-1, status=5, user=n % 5 + 1, **kw))
        elif n % 5 == 0:
            lines.append(_line(n, 600 * n, wait=300 * (n % 3), user=n % 5 + 1, preceding=n - 1,
                               think=120, **kw))
        else:
            lines.append(_line(n, 600 * n, wait=300 * (n % 3), user=n % 5 + 1, **kw))
    return lines


def _write(path: Path, text: str, *, packed: bool = False, crlf: bool = False) -> Path:
    data = (text.replace("\n", "\r\n") if crlf else text).encode()
    path.write_bytes(gzip.compress(data) if packed else data)
    return path


# ---- an archive's log: every header kind, read the same plain and as gzip with CRLF -------

def test_an_archive_log_reads_the_same_plain_and_as_gzip_with_crlf(tmp_path: Path) -> None:
    """The header sizes the machine (128 processors), the queues, partitions and notes
    change nothing, cancelled jobs are no load, group 0 is read (SWF's groups are not
    used), the think times hold; the gzip copy with CRLF line ends reads and plans as the
    plain one."""
    lines = _body(600)
    text = HEADER.format(jobs=len(lines)) + "".join(lines)
    plain = read_swf(_write(tmp_path / "archive.swf", text))
    packed = read_swf(_write(tmp_path / "archive.swf.gz", text, packed=True, crlf=True))
    assert plain.max_procs == packed.max_procs == 128
    assert plain.notes == packed.notes == ()
    assert plain.table == packed.table and len(plain.jobs) == 600
    dependent = next(j for j in plain.jobs if j.number == 10)
    assert (dependent.preceding, dependent.think) == (9, 120)
    assert next(j for j in plain.jobs if j.number == 7).status == 5
    c = cluster("alpha")
    assert plan_replay(plain, c, start=86_400, seed=3).jobs == plan_replay(
        packed, c, start=86_400, seed=3).jobs
    a = prediction.run_log(tmp_path / "archive.swf", moments=2, seed=1)
    b = prediction.run_log(tmp_path / "archive.swf.gz", moments=2, seed=1)
    assert a == {**b, "log": a["log"]} and a["nodes"] <= 32


def test_a_block_submitted_a_day_back_reads_in_order_and_is_said(tmp_path: Path) -> None:
    """Jobs 301-340 submitted a day before job 300 (a clock set back, or logs joined): read
    in submit order, planned as the sorted copy, said once for the block."""
    lines = _body(400)
    for n in range(301, 341):
        lines[n - 1] = _line(n, 600 * n - 86_400, wait=120)
    text = HEADER.format(jobs=len(lines))
    log = read_swf(_write(tmp_path / "back.swf", text + "".join(lines)))
    [note] = [n for n in log.notes if "submitted before the line above" in n]
    assert note.startswith("1 job line(s)"), note  # the block's first; the rest follow it
    submits = [j.submit for j in log.jobs]
    assert submits == sorted(submits)
    (tmp_path / "sorted").mkdir()
    ordered = sorted(lines, key=lambda t: (float(t.split()[1]), int(t.split()[0])))
    same = read_swf(_write(tmp_path / "sorted" / "back.swf", text + "".join(ordered)))
    c = cluster("alpha")
    assert plan_replay(log, c, start=150_000, seed=2).jobs == plan_replay(
        same, c, start=150_000, seed=2).jobs


# ---- words where SWF has numbers ------------------------------------------------------------

@pytest.mark.parametrize("kw, said", [
    (dict(user="alice"), "field 12 (user) is 'alice'"),
    (dict(queue="batch"), "field 15 (queue) is 'batch'"),
    (dict(extra=" gpu"), "field 19 (past SWF's 18 fields) is 'gpu'"),
])
def test_a_word_in_a_field_is_refused_naming_the_field_and_line(tmp_path: Path, kw,
                                                                 said) -> None:
    """Before: read as -1 (not known), nothing said, the line's job replayed as any."""
    lines = _body(50)
    lines[20] = _line(21, 600 * 21, **kw)
    path = _write(tmp_path / "words.swf", HEADER.format(jobs=50) + "".join(lines))
    with pytest.raises(BadInput) as e:
        read_swf(path)
    msg = str(e.value)
    line = HEADER.count("\n") + 21
    assert msg.startswith(f"{path}:{line}: {said}: SWF fields must be numbers"), msg
    assert "\n" not in msg


def test_a_comment_after_the_fields_is_named_as_one(tmp_path: Path) -> None:
    lines = _body(50)
    lines[4] = _line(5, 3000, extra=" ; resubmitted")
    path = _write(tmp_path / "commented.swf", "".join(lines), packed=True, crlf=True)
    with pytest.raises(BadInput) as e:
        read_swf(path)
    assert str(e.value).startswith(
        f"{path}:5: a comment after the job's fields (field 19): SWF's comment lines start "
        "with ';', a job line holds numbers only")


def test_numbers_in_every_form_swf_writes_still_read(tmp_path: Path) -> None:
    """A sign, a point, an exponent: numbers, read (the check for words keeps them)."""
    lines = _body(50)
    lines[9] = "10 +6000 6e1 600.0 8 -1 -1 8 9E2 -1 1 1 0 -1 1 1 -1 -1\n"
    log = read_swf(_write(tmp_path / "forms.swf", "".join(lines)))
    job = next(j for j in log.jobs if j.number == 10)
    assert (job.submit, job.wait, job.run, job.req_time) == (6000, 60, 600, 900)


# ---- more fields than SWF's 18 ----------------------------------------------------------

def test_lines_of_more_than_18_fields_are_said_and_read_as_their_first_18(
        tmp_path: Path) -> None:
    """Two extra columns on every line (a converter's own): said once, naming the first
    line and its count; read and planned as the 18-field copy (before: nothing said)."""
    lines = _body(400)
    head = HEADER.format(jobs=400)
    wide = read_swf(_write(tmp_path / "wide.swf", head + "".join(
        t.replace("\n", " 3 17\n") for t in lines)))
    (tmp_path / "clean").mkdir()
    clean = read_swf(_write(tmp_path / "clean" / "wide.swf", head + "".join(lines)))
    assert wide.notes == ("400 job line(s) have more than SWF's 18 fields (line "
                          f"{head.count(chr(10)) + 1} has 20): the fields past the 18th are "
                          "not SWF's and are not read",)
    assert wide.table == clean.table and clean.notes == ()
    c = cluster("alpha")
    assert plan_replay(wide, c, start=86_400, seed=5).jobs == plan_replay(
        clean, c, start=86_400, seed=5).jobs


# ---- user 0 -----------------------------------------------------------------------------------

def test_a_user_of_0_on_every_line_is_no_user(tmp_path: Path) -> None:
    """SWF numbers users from 1: 0 everywhere says nothing of who submitted; read as not
    known (-1), said, and scored as the log with -1 there (before: one user, every job
    queued behind its own)."""
    lines = [t.split() for t in _body(2000)]
    head = HEADER.format(jobs=2000)

    def with_user(u: str) -> str:
        return head + "".join(" ".join([*f[:11], u, *f[12:]]) + "\n" for f in lines)

    zero = read_swf(_write(tmp_path / "zero.swf", with_user("0")))
    assert set(zero.table.user) == {-1}
    assert zero.notes == ("every job's user (field 12) is 0: SWF numbers users from 1, so the "
                          "log does not say who submitted each job (read as not known: no job "
                          "counts as queued behind its user's own)",)
    (tmp_path / "unknown").mkdir()
    unknown = tmp_path / "unknown" / "zero.swf"
    _write(unknown, with_user("-1"))
    assert zero.table == read_swf(unknown).table
    assert prediction.run_log(tmp_path / "zero.swf", moments=3, seed=4) == \
        prediction.run_log(unknown, moments=3, seed=4)


def test_a_user_of_0_among_others_is_a_user_of_its_own(tmp_path: Path) -> None:
    lines = _body(100)
    lines[10] = _line(11, 6600, user=0)
    log = read_swf(_write(tmp_path / "root.swf", "".join(lines)))
    assert next(j for j in log.jobs if j.number == 11).user == 0 and log.notes == ()


# ---- 100,000 jobs -----------------------------------------------------------------------------

def test_100000_jobs_gzip_with_crlf_in_bounded_memory_and_time(tmp_path: Path) -> None:
    """The reader holds the jobs it parsed, not the text: its peak stays within half again
    what the read log holds, and the read takes well under a minute of CPU."""
    count = 100_000
    text = HEADER.format(jobs=count) + "".join(_body(count))
    path = _write(tmp_path / "long.swf.gz", text, packed=True, crlf=True)
    del text
    began = time.process_time()
    with traced_memory() as memory:
        log = read_swf(path)
    spent = time.process_time() - began
    assert len(log.jobs) == count and log.max_procs == 128 and log.notes == ()
    assert memory.peak < 1.5 * memory.held and memory.held < 200 * count, memory
    assert spent < 60, spent
