"""Which reason sentences are a scheduler's own (pure; no I/O).

PBS, LSF and Flux give a pending or ended job's reason as a sentence, not a code; PBS's job
comment and Flux's exception note may also be text a user set (`qalter -W comment=`,
`flux job raise`). A reason reaches an agent's model as plain data only when it is one of the
fixed sentences the scheduler's documentation lists (or the dialect's own wording), with its
slots (a resource, host or queue name, a number, a date) holding one token each: no room for
words. Anything else, a known sentence with words added included, is job-set text.
"""

from __future__ import annotations

import re

from .pbs_outcome import ENDED_RUNNING, ENDED_RUNNING_SAID, NOT_READ_SAID

# slots: one token each (no blank), so a slot holds a name, never a sentence
_SLOTS = {
    "name": r"[\w.\-@+/%]{1,128}",
    "num": r"-?[0-9]{1,12}(?:\.[0-9]{1,6})?",
    "val": r"[\w.\-@+/%:]{1,64}",
    "vnodes": r"[\w.\-@+/%:=()\[\]]{1,4096}",
    "deps": r"[\w.\-@+/%:=ƒ]{1,256}(?:,[\w.\-@+/%:=ƒ]{1,256}){0,63}",
    "date": r"[A-Z][a-z]{2} [A-Z][a-z]{2} {1,2}[0-9]{1,2}(?: at)? [0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?"
            r"(?: [0-9]{4})?",
    "hosts": r"[0-9]{1,7} hosts?",
}


def _compile(templates: list[str]) -> re.Pattern[str]:
    """One pattern matching any template whole: `{slot}`s as above, the rest literal."""
    alts = []
    for t in templates:
        parts = re.split(r"\{(\w+)\}", t)
        alts.append("".join(re.escape(p) if i % 2 == 0 else f"(?:{_SLOTS[p]})"
                            for i, p in enumerate(parts)))
    return re.compile("|".join(f"(?:{a})" for a in alts))


# PBS Professional / OpenPBS scheduler comments: "Not Running: REASON" while it waits,
# "Can Never Run: REASON" when it cannot run as asked
_PBS_WHY = _compile([
    "Insufficient amount of resource: {name}",
    "Insufficient amount of resource: {name} (R: {val} A: {val} T: {val})",
    "Insufficient amount of server resource: {name}",
    "Insufficient amount of server resource: {name} (R: {val} A: {val} T: {val})",
    "Insufficient amount of queue resource: {name}",
    "Insufficient amount of queue resource: {name} (R: {val} A: {val} T: {val})",
    "Job would conflict with reservation or top job",
    "Draining system to allow top job to run",
    "Queue not started", "Queue {name} not started",
    "Not enough free nodes available", "Not enough total nodes available",
    "No available resources on nodes",
    "Host set {name}={name} has too few free resources",
    "Job is requesting an exclusive node and node is in use",
    "Job would cross dedicated time boundary", "Job would cross primetime boundary",
    "Dedicated time conflict", "Job would break strict sorted order",
    "User has reached queue running job limit.", "User has reached server running job limit.",
    "Group has reached queue running job limit.",
    "Group has reached server running job limit.",
    "Project has reached queue running job limit.",
    "Project has reached server running job limit.",
    "Server job limit has been reached", "Queue job limit has been reached",
    "PBS Error: Execution server rejected request", "PBS Error: Unknown node",
])
_PBS = _compile([
    "Job run at {date} on {vnodes}", "Job run at {date} on {vnodes} and finished",
    "Job run at {date} on {vnodes} and failed", "Job Array Began at {date}",
    "Job held by {name} on {date}", "Job held, too many failed attempts to run",
    "Job started on {date}",  # Torque
    # the dialect's own words for how a finished job ended (pbs_outcome.finished_state)
    "deleted (qdel)", "killed by PBS: walltime exceeded", "killed by PBS: resource limit ({num})",
    "job never ran (Exit_status {num})", "walltime exceeded (signal {num})",
    *(ENDED_RUNNING_SAID.replace("{how}", how) for how in ENDED_RUNNING.values()),
    NOT_READ_SAID,
    "killed by signal {num}", "walltime exceeded",
    "Exit_status {num} not read: above 256 it is 256 + the signal that killed the job, and "
    "{num} is no signal",
    "deleted (qdel); Exit_status {num} not read: above 256 it is 256 + the signal that killed "
    "the job, and {num} is no signal",
    "out of memory: the job used more than the memory it was given (killed by PBS over its "
    "{name} limit, Exit_status {num})",
])
_PBS_PREFIX = re.compile(r"(?:Not Running|Can Never Run): ")
_HELD = re.compile(r"held \([A-Za-z?]{1,8}\)")  # the dialect's "held (u)", "held (PSUSP)"

# LSF pending reasons (`bjobs -p`, `-o pend_reason`): ";"-separated, each a sentence that may
# end with the number of hosts giving it
_LSF = _compile([
    "New job is waiting for scheduling", "Job dependency condition not satisfied",
    "Dependency condition invalid or never satisfied",
    "The job was suspended by the user while pending",
    "Job was suspended by the user while pending",
    "The job was suspended by LSF admin or root while pending",
    "Job was suspended by LSF admin or root while pending",
    "Job slot limit reached", "Not enough job slot(s)", "Not enough processors to meet the "
    "job's spanning requirement", "Job's resource requirements not satisfied",
    "Job's requirements for resource reservation not satisfied",
    # a resource's name in the sentence (LSF 10, and openlava's older wording)
    "Job requirements for reserving resource ({name}) not satisfied",
    "Job's requirements for reserving resource ({name}) not satisfied",
    "Queue requirements for reserving resource ({name}) not satisfied",
    "External load index ({name}) is beyond threshold",
    "Not enough slots or resources for whole duration of the job",
    "Not enough hosts to meet the job's spanning requirement",
    "There are no suitable hosts for the job",
    "User has reached the per-user job slot limit",
    "Job's requirement for exclusive execution not satisfied", "Running an exclusive job",
    "Closed by LSF administrator", "Load information unavailable",
    "Not the same type as the submission host", "Not specified in job submission",
    "Individual host-based reasons",
    "Candidate host pending reasons ({num} of {hosts}).",
    "Non-candidate host pending reasons ({num} of {hosts}):",
    "The queue is inactivated by the administrator",
    "The queue is inactivated by its time windows",
    "The user has reached his/her job slot limit", "The queue has reached its job slot limit",
    "The job array has reached its job slot limit.",
    "The job array has reached its job slot limit",
    # exit reasons (`-o exit_reason`) LSF writes itself
    "TERM_OWNER: job killed by owner", "TERM_ADMIN: job killed by root or LSF administrator",
    "TERM_RUNLIMIT: job killed after reaching LSF run time limit",
    "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit",
    "TERM_CPULIMIT: job killed after reaching LSF CPU usage limit",
    "TERM_REQUEUE_OWNER: job killed and requeued by owner",
    "TERM_FORCE_OWNER: job killed by owner without time for cleanup",
    "TERM_PREEMPT: job killed after preemption",
    "TERM_DEADLINE: job killed after deadline expires",
    # the dialect's words before LSF's for a job killed at its memory limit
    "out of memory: the job used more than the memory it was given (TERM_MEMLIMIT: job "
    "killed after reaching LSF memory usage limit)",
    "out of memory: the job used more than the memory it was given (TERM_MEMLIMIT)",
])
_LSF_HOSTS = re.compile(rf"(?P<why>.+?): (?:{_SLOTS['hosts']})")

# Flux: its own exception notes and the dialect's words (flux_commands._job)
_FLUX = _compile([
    "timeout: resource allocation expired", "held (urgency 0)", "dependency: {deps}",
    "insufficient resources",  # fluxion's sched.reason_pending
    "killed by signal {num}",  # its wait status's signal (flux_commands._killed_by)
    # a job killed at its memory limit: the dialect's words before the exception's type
    "out of memory: the job used more than the memory it was given (flux exception oom)",
    # the kernel's OOM killer, as flux-shell's oom plugin logs it in the job's stderr
    "out of memory: the job used more than the memory it was given (flux-shell oom: Memory "
    "cgroup out of memory: killed {num} task on {name}.)",
    "out of memory: the job used more than the memory it was given (flux-shell oom: Memory "
    "cgroup out of memory: killed {num} tasks on {name}.)",
])


def _pbs(text: str) -> bool:
    if _PBS.fullmatch(text):
        return True
    prefix = _PBS_PREFIX.match(text)
    return bool(prefix and _PBS_WHY.fullmatch(text[prefix.end():]))


def _lsf(text: str) -> bool:
    parts = [p.strip() for p in re.split(r";|\n", text) if p.strip()]
    if not parts:
        return False
    for p in parts:
        counted = _LSF_HOSTS.fullmatch(p)
        if not _LSF.fullmatch(counted.group("why") if counted else p):
            return False
    return True


def scheduler_sentence(text: str) -> bool:
    """Whether `text` (a job's reason) is one of the fixed sentences PBS, LSF or Flux write
    themselves (or the dialects' own), each slot one token, optionally after the dialect's
    "held (X): "; False for anything else, a sentence with words added included."""
    text = text.strip()
    if (held := _HELD.match(text)) is not None:
        rest = text[held.end():]
        if not rest:
            return True
        if not rest.startswith(": "):
            return False
        text = rest[2:].strip()
    return any(check(text) for check in (_pbs, _lsf, _FLUX.fullmatch))


# Slurm's codes for a held job; the other dialects write "held (X)" (PBS, LSF, Grid Engine,
# Flux, PBS text)
_SLURM_HELD = ("JobHeldUser", "JobHeldAdmin")


def says_held(reason: str | None) -> bool:
    """Whether a pending job's reason, as a dialect gives it, says the job is held (a
    release would free it); False for any other reason or none."""
    text = (reason or "").strip()
    return text in _SLURM_HELD or text.startswith("held (")
