"""A signal sent shortly before the job's time limit (to checkpoint), as each scheduler
writes it: Slurm `--signal=[{R|B}:]SIG[@seconds]` (60 s when no time is given; `B:` the
batch shell alone, `R:` the job may overlap a reservation with MaxStartDelay, `RB:` and
`BR:` both, any case, as sbatch's `get_signal_opts` reads them), flux
`--signal=SIG@FSD` (the same default), LSF `-wa SIG` with `-wt [hours:]minutes`. PBS has
no such option; Grid Engine's hard `-l s_rt` below the job's `h_rt` is one (queue_conf(5):
SIGUSR1 at s_rt, the job ended the queue's notify time later). Read from the options a
script kept as written, so a translation between these carries it instead of dropping it."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..digits import ascii_digits
from ..model import Directive, JobSpec
from .scripts_common import sge_time, words

# signals by name (SIG prefix optional, any case) or number; LSF's -wa also takes actions
# such as CHKPNT, which are not signals and are not carried
_SIGNALS = frozenset(words("HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1 SEGV USR2 PIPE ALRM "
                           "TERM CHLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ VTALRM PROF "
                           "WINCH IO PWR SYS"))
_SLURM = re.compile(r"(?:(R?B?R?):)?(\w+)(?:@([0-9]+))?", re.I)  # R, then B, then R again
_FLUX = re.compile(r"(\w+)(?:@([0-9]+(?:\.[0-9]+)?)([smhd]?))?", re.I)
_FSD = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_LSF_TIME = re.compile(r"(?:([0-9]+):)?([0-9]+)")
SLURM_MAX_SECONDS = 65535  # sbatch's sig_time is 16 bits


@dataclass(frozen=True)
class WarnSignal:
    name: str  # without SIG: USR1, TERM, 10
    seconds: int  # before the time limit
    batch_only: bool  # Slurm's B: (the batch shell alone)
    kept: tuple[Directive, ...]  # the source's options it was read from
    caveat: str = ""  # what the target does otherwise, said with it
    reservation: bool = False  # Slurm's R: (may overlap a MaxStartDelay reservation)

    @property
    def raw(self) -> str:
        return " ".join(d.raw.strip() for d in self.kept)


def _signal(text: str) -> str | None:
    name = text.upper().removeprefix("SIG")
    return name if name in _SIGNALS or ascii_digits(name) else None


def warn_signal(spec: JobSpec) -> WarnSignal | None:
    """The signal the script's own options ask before its time limit, or None (none asked,
    or asked in a form not carried: Slurm's R:, LSF's -wa without -wt or with an action,
    a time of 0)."""
    ws = _read(spec)
    return ws if ws and ws.seconds > 0 else None


def _read(spec: JobSpec) -> WarnSignal | None:
    source = spec.source_dialect
    own = [d for d in spec.unknown if d.dialect == source]
    if source in ("slurm", "flux"):
        kept = [d for d in own if d.option == "--signal" and d.value]
        if not kept:
            return None
        d = kept[-1]
        if source == "slurm":
            m = _SLURM.fullmatch(d.value or "")
            flags = (m.group(1) or "").upper() if m else ""
            if not m or not (name := _signal(m.group(2))):
                return None
            return WarnSignal(name, int(m.group(3) or 60), "B" in flags, (d,),
                              reservation="R" in flags)
        m = _FLUX.fullmatch(d.value or "")
        if not m or not (name := _signal(m.group(1))):
            return None
        secs = math.ceil(float(m.group(2)) * _FSD[m.group(3).lower()]) if m.group(2) else 60
        return WarnSignal(name, secs, False, (d,))
    if source == "lsf":
        action = [d for d in own if d.option == "-wa" and d.value]
        when = [d for d in own if d.option == "-wt" and d.value]
        if not action or not when or not (name := _signal(action[-1].value or "")):
            return None
        m = _LSF_TIME.fullmatch((when[-1].value or "").strip())
        if not m:
            return None
        minutes = int(m.group(1) or 0) * 60 + int(m.group(2))
        return WarnSignal(name, minutes * 60, False, (action[-1], when[-1]))
    if source == "sge":
        return _sge_soft_limit(spec, own)
    return None


def _sge_soft_limit(spec: JobSpec, own: list[Directive]) -> WarnSignal | None:
    """A hard `-l s_rt` below `h_rt`: SIGUSR1 that long before h_rt. Without an h_rt (no
    time limit to count from), or at or past it (h_rt ends the job first), None."""
    kept = [d for d in own if d.option == "-l s_rt" and d.value]
    limit = spec.resources.walltime_s
    if not kept or not limit:
        return None
    soft = sge_time(kept[-1].value.partition("=")[2].strip())
    if soft is None or soft >= limit:
        return None
    return WarnSignal("USR1", limit - soft, False, (kept[-1],),
                      caveat="; Grid Engine also ended the job the queue's notify time after "
                             "s_rt (60 s unless the queue sets another), here it runs to its "
                             "time limit")


def carried(ws: WarnSignal) -> list[tuple[str, str | None]]:
    """The kept options it was read from, for `foreign_warnings(skip=...)`."""
    return [(d.option, d.value) for d in ws.kept]


def said(ws: WarnSignal, target: str, written: str, extra: str = "") -> str:
    """The line a translation says about it (which processes get the signal differs)."""
    who = {"slurm": "the job's steps, not its batch shell",
           "flux": "the job", "lsf": "the job's processes"}[target]
    batch = "; B: (the batch shell alone) is not said there" if ws.batch_only else ""
    resv = "; R: (the job may overlap a reservation with MaxStartDelay) dropped, no " \
        f"{target} equivalent" if ws.reservation else ""
    return (f"approximated: {ws.raw} as {written} (a signal {ws.seconds} s before the time "
            f"limit; {target} sends it to {who}{batch}{resv}{extra}{ws.caveat})")


# why PBS and Grid Engine get no such signal (qsub(1) of each)
_NONE = {"pbs": "qsub has no option for a signal before the walltime",
         "sge": "qsub has no option for it: -notify sends SIGUSR2 before a SIGKILL (SIGUSR1 "
                "before a suspend) the queue's notify time ahead, not at a time the job "
                "chooses, and a hard s_rt that long before h_rt would end the job the "
                "notify time after its SIGUSR1"}


def dropped(ws: WarnSignal, target: str) -> str:
    """The line a translation to PBS or Grid Engine says about it."""
    given = ", ".join(f"-l {d.value}" if d.option.startswith("-l ") else f"{d.option} {d.value}"
                      for d in ws.kept)  # Grid Engine's `-l s_rt` holds `s_rt=...`
    return (f"dropped: {ws.raw} ({given}: a signal {ws.seconds} s before the time limit; "
            f"{_NONE[target]})")


def slurm_value(ws: WarnSignal) -> str | None:
    """`--signal`'s value, or None when the time is past what sbatch takes."""
    if ws.seconds > SLURM_MAX_SECONDS:
        return None
    return f"{'B:' if ws.batch_only else ''}{ws.name}@{ws.seconds}"


def lsf_minutes(ws: WarnSignal) -> int:
    """-wt in whole minutes, rounded up (the signal no later than asked)."""
    return max(1, math.ceil(ws.seconds / 60))
