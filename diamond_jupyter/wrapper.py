"""The job's side of monitoring: the wrapper placed before each job's body, and its lines.

Each job script reports its own start and end to a per-user event file on the site; every
line is signed with the job's secret, so only that job's wrapper can write a line the
monitor accepts.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass
from datetime import datetime, timezone


def wrapper_prologue(event_file: str, token: str, secret_file: str) -> str:
    """Shell lines placed before the job body: report start now and end (with exit code).

    Each line is `TIME KIND TOKEN NATIVE_ID RC MAC`, MAC being the SHA-256 of the job's
    secret (read from its private job directory, never written anywhere else) followed by
    the rest of the line: only this job's wrapper can write a line the monitor accepts."""
    ev, sec = shlex.quote(event_file), shlex.quote(secret_file)
    jid = "${SLURM_JOB_ID:-${PBS_JOBID:-${LSB_JOBID:-${FLUX_JOB_ID:-${JOB_ID:--}}}}}"
    return (
        f"__dmd_ev={ev}; __dmd_tok={token}; __dmd_sec=$(cat {sec} 2>/dev/null)\n"
        "__dmd_say() { __dmd_l=\"$(date +%s.%N) $1 $__dmd_tok " + jid + " $2\"; "
        "__dmd_m=$(printf '%s %s' \"$__dmd_sec\" \"$__dmd_l\" | "
        "{ sha256sum || shasum -a 256 || openssl dgst -sha256 -r; } 2>/dev/null); "
        "(umask 077; printf '%s %s\\n' \"$__dmd_l\" \"${__dmd_m%% *}\" >> \"$__dmd_ev\"); }\n"
        "__dmd_say start 0\n"
        "__dmd_end() { __dmd_rc=$?; __dmd_say end \"$__dmd_rc\"; }\n"
        "trap __dmd_end EXIT\n"
        # a signal (scancel, time limit, preemption) ends the job with 128+N, never "0"
        "trap 'exit 143' TERM; trap 'exit 130' INT; trap 'exit 129' HUP\n"
    )


def event_mac(secret: str, body: str) -> str:
    """What the wrapper appends to a line (`body` is the line without its MAC)."""
    return hashlib.sha256(f"{secret} {body}".encode()).hexdigest()


@dataclass(frozen=True)
class EventLine:
    at: datetime
    kind: str  # start | end
    token: str
    native_id: str
    rc: int
    body: str  # the signed part
    mac: str


_TOKEN = re.compile(r"[0-9a-f]{6,64}")
_MAC = re.compile(r"[0-9a-f]{64}")


def parse_event_line(line: str) -> EventLine | None:
    """One line of the event file, or None for anything malformed (never raises)."""
    parts = line.split(" ")
    if len(parts) != 6 or parts[1] not in ("start", "end"):
        return None
    ts, kind, token, native, rc, mac = parts
    if not (_TOKEN.fullmatch(token) and _MAC.fullmatch(mac)) or not native.isprintable():
        return None
    if not rc.isdigit() or len(rc) > 3 or len(ts) > 32:
        return None
    try:
        at = datetime.fromtimestamp(float(ts), timezone.utc)
    except (ValueError, OverflowError, OSError):
        return None
    return EventLine(at, kind, token, native, int(rc), " ".join(parts[:5]), mac)
