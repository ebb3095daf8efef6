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

from .digits import ascii_digits


def wrapper_prologue(event_file: str, token: str, secret_file: str,
                     gate_file: str | None = None) -> str:
    """Shell lines placed before the job body: report start now and end (with exit code).

    Each line is `TIME KIND TOKEN NATIVE_ID RC MAC`, MAC being the SHA-256 of the job's
    secret (read from its private job directory, never written anywhere else) followed by
    the rest of the line: only this job's wrapper can write a line the monitor accepts.
    Only the job's own shell writes the end line, with the code it exits with; a signal
    (128+N) is trapped before the EXIT trap is set.

    `gate_file` (a copy of a hedged job): after reporting its start the wrapper waits for
    the engine's decision in that file (its private job directory) and runs the body only
    on "go TOKEN"; anything else means another copy won: it exits without running it."""
    ev, sec = shlex.quote(event_file), shlex.quote(secret_file)
    off = shlex.quote(output_offsets_file(secret_file.rsplit("/", 1)[0]))
    # the job's id as its submit gave it: an array's task names its array (Slurm gives
    # each task a job id of its own; PBS's subjob id still names it, as LSF's and SGE's do)
    jid = ("${SLURM_ARRAY_JOB_ID:-${SLURM_JOB_ID:-${PBS_JOBID:-${LSB_JOBID:-"
           "${FLUX_JOB_ID:-${JOB_ID:--}}}}}}")
    return (
        f"__dmd_ev={ev}; __dmd_tok={token}; __dmd_sec=$(cat {sec} 2>/dev/null)\n"
        "__dmd_say() { __dmd_l=\"$(date +%s.%N) $1 $__dmd_tok " + jid + " $2\"; "
        "__dmd_m=$(printf '%s %s' \"$__dmd_sec\" \"$__dmd_l\" | "
        "{ sha256sum || shasum -a 256 || openssl dgst -sha256 -r; } 2>/dev/null); "
        "(umask 077; printf '%s %s\\n' \"$__dmd_l\" \"${__dmd_m%% *}\" >> \"$__dmd_ev\"); }\n"
        # only the job's own shell reports its end: a subshell (`( )`, `$( )`) that a signal
        # reaches as it is forked can still run the EXIT trap, with the subshell's status
        # (the `[ -e ]` before the note below: "end 1"), and the first end line counts
        "__dmd_end() { __dmd_rc=$?; "
        "[ \"${BASHPID:-$(exec sh -c 'echo \"$PPID\"')}\" = \"$$\" ] || return 0; "
        "__dmd_say end \"$__dmd_rc\"; }\n"
        # a signal (scancel, time limit, preemption) ends the job with 128+N, never "0":
        # trapped before the EXIT trap is set (a signal between the two ran the EXIT trap
        # with the last command's 0), and before the start is reported, so a job stopped
        # just after it reports its end
        "trap 'exit 143' TERM; trap 'exit 130' INT; trap 'exit 129' HUP\n"
        "trap __dmd_end EXIT\n"
        + output_offsets(off) +
        "__dmd_say start 0\n"
    ) + (hedge_gate(gate_file) if gate_file else "")


def output_offsets_file(job_dir: str) -> str:
    """Where the wrapper notes how long the job's output files were when it started."""
    return f"{job_dir}/output.offsets"


def output_offsets(quoted_file: str) -> str:
    """Shell that notes, once per job (a requeued run or a later array task keeps the first
    note: their output is the job's too), the size of the regular files behind stdout (1)
    and stderr (2) as the job starts: "1 BYTES" lines. A file appended to (LSF -o, Grid
    Engine, --open-mode=append) holds earlier jobs' output before that point. Nothing is
    noted where /proc or stat is missing, or the output goes to a pipe or a spool file; a
    note that cannot be written stops nothing (a `bash -e` script runs on)."""
    return (
        f"[ -e {quoted_file} ] || (umask 077; for __dmd_fd in 1 2; do "
        "__dmd_p=/proc/$$/fd/$__dmd_fd; if [ -f \"$__dmd_p\" ]; then "
        "printf '%s %s\\n' \"$__dmd_fd\" \"$(stat -L -c %s \"$__dmd_p\")\"; fi; done "
        f"> {quoted_file}.$$ && mv -f {quoted_file}.$$ {quoted_file}) 2>/dev/null || true\n")


def parse_output_offsets(text: str) -> dict[str, int]:
    """The wrapper's note, as {"stdout": BYTES, "stderr": BYTES}; junk lines left out."""
    out = {}
    for line in text.splitlines():
        fd, _, size = line.strip().partition(" ")
        if fd in ("1", "2") and ascii_digits(size) and len(size) < 19:
            out["stdout" if fd == "1" else "stderr"] = int(size)
    return out


GATE_POLL_S = 0.1  # how often a hedged copy's wrapper looks for the engine's decision


def hedge_gate_file(job_dir: str) -> str:
    """Where a hedged copy's wrapper waits for the engine's decision (its job directory)."""
    return f"{job_dir}/claim"


def hedge_gate(gate_file: str) -> str:
    """Wait for the decision file (written whole by a rename), then go or leave."""
    gate = shlex.quote(gate_file)
    return (
        f"__dmd_gate={gate}\n"
        f"while [ ! -s \"$__dmd_gate\" ]; do sleep {GATE_POLL_S} 2>/dev/null || sleep 1; done\n"
        "IFS= read -r __dmd_go < \"$__dmd_gate\"\n"
        "if [ \"$__dmd_go\" != \"go $__dmd_tok\" ]; then\n"
        "  echo 'diamond: another copy of this hedged job started first; not running it "
        "here' >&2\n"
        "  trap - EXIT; exit 0\n"
        "fi\n"
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
    if not ascii_digits(rc) or len(rc) > 3 or len(ts) > 32:
        return None
    try:
        at = datetime.fromtimestamp(float(ts), timezone.utc)
    except (ValueError, OverflowError, OSError):
        return None
    return EventLine(at, kind, token, native, int(rc), " ".join(parts[:5]), mac)
