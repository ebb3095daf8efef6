"""PBS Pro's and Torque's `tracejob` (pure: text in, job records out): how a job ended once
`qstat` no longer lists it. PBS Pro without job history (`job_history_enable` off) drops a
finished job at once, Torque after `keep_completed` seconds; the server's own logs, which
tracejob reads (server, MoM, scheduler and accounting logs under PBS_HOME, one file a day),
still hold its end where the login may read them.

The shape, as tracejob prints it: for each job found, a line `Job: ID` between blank lines,
then one line per log entry, oldest first: its time (`MM/DD/YYYY HH:MM:SS`, with `.micro`
where the logs keep high-resolution times), the log it came from (S server, M MoM, L
scheduler, A accounting) and the entry's text. With `-w 0` no entry is wrapped; a line
wrapped all the same (an older tracejob, a terminal width) goes on indented by blanks and is
joined back. A job it cannot find is said on stderr only. Free text (a job's name) is inside
an entry's text, never at the start of a line, and holds no blank (qsub refuses one), so it
cannot forge an entry or a `key=value` word of one.
"""

from __future__ import annotations

import re
from datetime import tzinfo

from ..model import JobStatus
from .outputs_common import from_epoch, parse_duration, parse_local_time
from .pbs_outcome import finished_state

# days of logs tracejob reads back (`-n`): the job ended after the engine last saw it
# queued, so a few days cover an engine that was away; more would read each day's logs
# (often hundreds of MB on a busy server) for every job that left the queue
TRACEJOB_DAYS = 3
# seconds all the tracejob runs of one query may take: well within the query's own timeout
# (QUERY_TIMEOUT_S), which would fail the whole poll
TRACEJOB_BUDGET_S = 40
# the line the tracejob loop prints after each job it asked, naming the job (see
# `reached_ids`); no tracejob line starts so
REACHED_MARK = "diamond-traced:"

_HEADER = re.compile(r"Job: (\S+)\s*")
_ENTRY = re.compile(r"([0-9]{2}/[0-9]{2}/[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.[0-9]+)?"
                    r" +([SMLA]) +(.*)")
_CONTINUATION = re.compile(r" {20,}(\S.*)")
_TIME_FORMATS = ("%m/%d/%Y %H:%M:%S",)
# a deletion: the server's log line (Torque, PBS Pro) or the accounting `D` record
_DELETED = re.compile(r"Job (?:to be )?deleted at request of |requestor=\S")
_REACHED = re.compile(rf"{re.escape(REACHED_MARK)} (\S+)")


def reached_ids(stdout: str) -> list[str]:
    """The jobs the tracejob loop asked about, in its order: each followed by its
    REACHED_MARK line. A job not named was not reached within the budget: no answer, not
    an answer of no record."""
    return [m.group(1) for line in stdout.splitlines() if (m := _REACHED.fullmatch(line))]


def _word(text: str, key: str) -> str | None:
    """The value of a `key=value` word of an entry (the first word, or one after a blank)."""
    m = re.search(rf"(?:^| ){re.escape(key)}=(\S+)", text)
    return m.group(1) if m else None


def _int(text: str | None) -> int | None:
    return int(text) if text is not None and re.fullmatch(r"-?[0-9]+", text) else None


def _blocks(stdout: str) -> list[tuple[str, list[str]]]:
    """(job id, its entries with wrapped lines joined back) per `Job:` block."""
    blocks: list[tuple[str, list[str]]] = []
    for line in stdout.splitlines():
        if m := _HEADER.fullmatch(line):
            blocks.append((m.group(1), []))
        elif blocks and _ENTRY.fullmatch(line):
            blocks[-1][1].append(line.rstrip())
        elif blocks and blocks[-1][1] and (m := _CONTINUATION.fullmatch(line)):
            blocks[-1][1][-1] += " " + m.group(1).rstrip()
    return blocks


def parse_tracejob(stdout: str, tz: tzinfo | None, *, torque: bool = False) -> list[JobStatus]:
    """`tracejob` -> the record of each job its logs show ended (its exit status, or its
    deletion); a job whose logs show no end (logs of only some days, or not readable) is
    left out, so the engine goes on counting it missing. `tz`: the server's zone (the logs'
    times are its local times); `torque`: Torque's exit codes."""
    out = []
    for jid, lines in _blocks(stdout):
        exit_status = None
        deleted = False
        submitted = started = ended = None
        name = user = queue = used = limit = None
        for line in lines:
            m = _ENTRY.fullmatch(line)
            assert m is not None  # kept only when it matched
            when = parse_local_time(m.group(1), tz, _TIME_FORMATS)
            log, text = m.group(2), m.group(3)
            if text.startswith("Job Queued at request of "):
                submitted = submitted or when
                queued = re.search(r", owner = ([^,\s@]+)\S*, job name = ([^,\s]+), "
                                   r"queue = ([^,\s]+)", text)
                if queued:
                    user, name, queue = queued.groups()
            elif text.startswith("Job Run at request of "):
                started = when
            elif _DELETED.match(text):
                deleted, ended = True, ended or when
            if log == "A":  # accounting: the E record holds the job's whole end
                name = _word(text, "jobname") or name
                user = _word(text, "user") or user
                queue = _word(text, "queue") or queue
                submitted = submitted or from_epoch(_word(text, "qtime"))
                started = from_epoch(_word(text, "start")) or started
                if (end := from_epoch(_word(text, "end"))) is not None:
                    ended = end
            if log in "AS" and (code := _int(_word(text, "Exit_status"))) is not None:
                exit_status, ended = code, from_epoch(_word(text, "end")) or when
            used = _word(text, "resources_used.walltime") or used
            limit = _word(text, "Resource_List.walltime") or limit
        if exit_status is None and not deleted:
            continue  # no end in the logs read
        state, code, reason = finished_state(
            exit_status, 91 if deleted else None, _seconds(used), _seconds(limit),
            torque=torque)
        out.append(JobStatus(
            native_id=jid, state=state, native_state="F", name=name, user=user,
            partition=queue, submitted_at=submitted, started_at=started, ended_at=ended,
            exit_code=code, reason=reason))
    return out


def _seconds(text: str | None) -> int | None:
    try:
        return parse_duration(text) if text is not None else None
    except ValueError:
        return None
