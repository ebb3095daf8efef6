"""What in a job's life deserves waking someone (pure): it started, it can never start
as asked, it nears its time limit, it failed. Each becomes a `job.attention` event next to
the state change it came from; agent tasks and job cards follow those events.
"""

from __future__ import annotations

import re
from typing import Any

from .model import Event, Job, JobState

ATTENTION = "job.attention"
SCHEMA_VERSION = "1"
KINDS = ("started", "stuck", "walltime", "failed")

# Pending reasons after which the scheduler will not start the job as asked (Slurm's names,
# job_reason_codes): nodes it names that are down, drained or not responding
# ("ReqNodeNotAvail, UnavailableNodes:n1"; without them, or "Reserved for maintenance", the
# nodes are busy or reserved for a while); an association's usage in minutes used up
# (AssocGrpCPUMinutesLimit: until it decays; the other AssocGrp* are limits its running
# jobs reach, which free as they end); a dependency that can never be satisfied
NEVER = re.compile(r"^\s*(ReqNodeNotAvail(?=,\s*UnavailableNodes)"
                   r"|AssocGrp\w*?(?<!Run)Minutes\w*|QOSMax\w*Per(?:Job|Node)\w*"
                   r"|PartitionTimeLimit|PartitionNodeLimit|BadConstraints|InvalidQOS"
                   r"|InvalidAccount|DependencyNeverSatisfied)\b")
EXPLAIN = {
    "ReqNodeNotAvail": "the nodes it asks for are down, drained or not responding",
    "AssocGrp": "its account has used up its allowance of minutes (until the usage decays "
                "or the limit is raised)",
    "DependencyNeverSatisfied": "a job it depends on ended in a way that never satisfies "
                                "the dependency",
    "QOSMax": "it asks for more than its QOS allows per job or per node",
    "PartitionTimeLimit": "its time limit is longer than the partition allows",
    "PartitionNodeLimit": "it asks for more nodes than the partition allows",
    "BadConstraints": "no node has the features it asks for",
    "InvalidQOS": "its QOS is not valid here",
    "InvalidAccount": "its account is not valid here",
}


def never_reason(reason: str | None) -> str | None:
    """The scheduler's reason, when it means the job will never start as asked."""
    if not reason:
        return None
    m = NEVER.match(reason)
    return m.group(1) if m else None


def explain(reason: str) -> str:
    for key, text in EXPLAIN.items():
        if reason.startswith(key):
            return text
    return "the scheduler will not start it as asked"


def walltime_margin_s(walltime_s: int) -> float:
    """How long before its time limit a running job counts as nearing it: a tenth of the
    limit, between 30 s and 15 min."""
    return min(max(walltime_s * 0.1, 30.0), 900.0)


def attention_for(ev: Event, job: Job) -> Event | None:
    """The `job.attention` event a stored job event calls for, if any."""
    if not ev.kind.startswith("job.") or ev.kind == ATTENTION or not ev.job_id:
        return None
    data: dict[str, Any] = ev.data or {}
    changed = data.get("changed") or []
    state = data.get("state")
    kind = reason = None
    if ev.kind == "job.state" and state == JobState.RUNNING.value:
        kind, reason = "started", None
    elif ev.kind == "job.state" and state in (JobState.FAILED.value, JobState.TIMEOUT.value):
        kind = "failed"
        reason = job.reason or (f"exit code {job.exit_code}" if job.exit_code is not None
                                else state.lower())
    elif state == JobState.PENDING.value and "reason" in changed:
        never = never_reason(job.reason)
        if never:
            kind, reason = "stuck", job.reason
    if kind is None:
        return None
    return make(kind, job, reason)


def make(kind: str, job: Job, reason: str | None, **extra: Any) -> Event:
    data: dict[str, Any] = {"version": SCHEMA_VERSION, "attention": kind,
                            "state": job.state.value, "reason": reason}
    if kind == "stuck" and reason:
        data["never"] = never_reason(reason)
        data["explanation"] = explain(data["never"] or "")
    data.update(extra)
    return Event(kind=ATTENTION, job_id=job.id, site=job.site, data=data)
