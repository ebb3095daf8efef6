"""LSF's `bhist -l` (pure: text in, job records out): how a job ended once `bjobs -a` no
longer lists it. bjobs forgets a finished job after CLEAN_PERIOD (an hour by default), so
an engine that was away longer would otherwise take the job as lost; bhist reads mbatchd's
event log (lsb.events), which keeps every job's events until the log is switched.

The shape, as bhist prints it: one block per job, blocks split by a line of dashes; a
block opens with `Job <ID>, Job Name <NAME>, User <U>, ...` and then lists the job's events,
each on a line of its own that starts with its time (`Sun Jan 10 17:47:39: Starting (Pid
110245);`, the year after the time when LSB_DISPLAY_YEAR is set). A line longer than 80
columns goes on in lines indented by 21 spaces, cut anywhere (inside a word or a number):
those are joined back as they were. Free text (a name, a command) is only ever inside such
a block's lines, never at the start of a line, so it cannot forge an event.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime

from ..model import JobState, JobStatus
from .outputs_common import OUT_OF_MEMORY, unread

_CONTINUATION = " " * 21
_SEPARATOR = re.compile(r"-{20,}\s*")
_HEADER = re.compile(r"Job <([0-9]+(?:\[[0-9]+\])?)>")
_EVENT = re.compile(r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) +((?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep"
                    r"|Oct|Nov|Dec) +[0-9]{1,2} [0-9]{1,2}:[0-9][0-9]:[0-9][0-9]"
                    r"(?: [0-9]{4})?): (.*)")
# the reasons LSF gives a job it ended: cancelled (bkill by the owner or an administrator),
# its run limit or `bsub -t` termination time
CANCEL_REASONS = ("TERM_OWNER", "TERM_ADMIN", "TERM_FORCE_OWNER", "TERM_FORCE_ADMIN",
                  "TERM_REQUEUE_OWNER", "TERM_REQUEUE_ADMIN")
TIMEOUT_REASONS = ("TERM_RUNLIMIT", "TERM_DEADLINE")
# ... or killed at its memory limit (`bsub -M`, the queue's MEMLIMIT)
MEMORY_REASONS = ("TERM_MEMLIMIT",)


def with_memory_ending(reason: str | None) -> str | None:
    """LSF's exit reason, led by what it means where it is the memory limit's
    ('TERM_MEMLIMIT: job killed after reaching LSF memory usage limit')."""
    if reason and reason.upper().startswith(MEMORY_REASONS):
        return f"{OUT_OF_MEMORY} ({reason})"
    return reason
_STARTED = re.compile(r"Dispatched\b|Started\b|Starting \(Pid|Running with execution home")
_WAITING = re.compile(r"Submitted from host|Pending:|Job has been requeued|Requeue")


def _field(text: str, label: str) -> str | None:
    """The `LABEL <VALUE>` of a line, read before its `Command <...>` (the job's own text,
    of any length, which could hold a forged field)."""
    text = text.split(", Command <", 1)[0]
    m = re.search(rf"(?:^|, ){label} <(.*?)>(?:, |;|$)", text)
    return m.group(1) if m else None


def _lines(block: list[str]) -> list[str]:
    """The block's lines with each wrapped line joined back."""
    joined: list[str] = []
    for line in block:
        if line.startswith(_CONTINUATION) and joined:
            joined[-1] += line[len(_CONTINUATION):]
        else:
            joined.append(line.rstrip())
    return joined


def _ending(text: str) -> tuple[JobState, int | None] | None:
    """(state, exit code) an event says the job ended with; None for any other event."""
    if text.startswith("Done successfully"):
        return JobState.COMPLETED, 0
    if text.startswith("Exited"):
        sig = re.match(r"Exited by (?:LSF )?signal ([0-9]+)", text)
        if sig:
            return JobState.FAILED, 128 + int(sig.group(1))
        code = re.search(r"exit code (-?[0-9]+)", text)
        return JobState.FAILED, int(code.group(1)) if code else None
    return None


def parse_bhist(stdout: str, to_time: Callable[[str], datetime | None],
                skipped: list[str] | None = None) -> list[JobStatus]:
    """`bhist -l` -> each job's record as its events leave it: ended (how, when, why), else
    running or waiting (an event log cut short: the queue says the rest). `to_time` reads an
    event's time ('Jan 10 17:47:39', the year appended when printed). `skipped`: where to
    say a block without a `Job <ID>` line, left out (else SiteError)."""
    blocks: list[list[str]] = [[]]
    for line in stdout.splitlines():
        if _SEPARATOR.fullmatch(line):
            blocks.append([])
        else:
            blocks[-1].append(line)
    out = []
    for n, block in enumerate(blocks, 1):
        lines = [ln for ln in _lines(block) if ln.strip()]
        if not lines or all(not _HEADER.match(ln) and not _EVENT.match(ln) for ln in lines):
            continue  # bhist's heading or messages ("No matching job found")
        head = next((ln for ln in lines if _HEADER.match(ln)), None)
        if head is None:
            unread(skipped, "lsf", f"bhist -l block {n}", "no 'Job <ID>' line",
                   "\n".join(lines)[:300])
            continue
        jid = _HEADER.match(head).group(1)  # type: ignore[union-attr]
        out.append(_record(jid, head, [m for ln in lines if (m := _EVENT.fullmatch(ln))],
                           to_time))
    return out


def _record(jid: str, head: str, events: list[re.Match[str]],
            to_time: Callable[[str], datetime | None]) -> JobStatus:
    state, native, exit_code = JobState.PENDING, "PEND", None
    submitted = started = ended = None
    reason = partition = None
    for event in events:
        when, text = to_time(event.group(1)), event.group(2)
        if text.startswith("Submitted from host"):
            submitted = submitted or when
            partition = _field(text, "to Queue") or partition
        if _WAITING.match(text):  # waiting (again, once requeued)
            state, native, exit_code, started, ended, reason = \
                JobState.PENDING, "PEND", None, None, None, None
        elif _STARTED.match(text):
            if state != JobState.RUNNING:
                started = when
            state, native = JobState.RUNNING, "RUN"
        elif (how := _ending(text)) is not None:
            state, exit_code = how
            native, ended = ("DONE" if state == JobState.COMPLETED else "EXIT"), when
        elif text.startswith("Completed <"):
            why = re.match(r"Completed <(\w+)>[.;]?\s*(.*?)[.;]?$", text)
            ended = ended or when
            if why and why.group(1) == "done":
                state, native, exit_code = JobState.COMPLETED, "DONE", 0
            elif why:
                native, reason = "EXIT", why.group(2) or reason
                state = JobState.CANCELLED if reason and reason.startswith(CANCEL_REASONS) \
                    else JobState.TIMEOUT if reason and reason.startswith(TIMEOUT_REASONS) \
                    else JobState.FAILED
    return JobStatus(
        native_id=jid, state=state, native_state=native, name=_field(head, "Job Name"),
        user=_field(head, "User"), partition=partition, submitted_at=submitted,
        started_at=started if state != JobState.PENDING else None,
        ended_at=ended if state.terminal else None,
        exit_code=exit_code if state.terminal else None,
        reason=with_memory_ending(reason) if state == JobState.FAILED else reason)
