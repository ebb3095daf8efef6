"""JSON shapes of the REST API and the events (pure functions over engine models)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from ..federation_agent import with_plan_sha256
from ..model import Event, Job, JobSpec, JobState, Resources, SiteSnapshot
from ..summary import SiteSummary, row_warnings

UNFINISHED = [JobState.PENDING, JobState.RUNNING, JobState.UNKNOWN]
_SECRET = re.compile(r"(?i)(pass|secret|token|key|credential|auth)")

# A typical job, for the sidebar's "typical start" column: 1 node for 1 hour.
TYPICAL_SPEC = JobSpec(name="typical", command="true",
                       resources=Resources(nodes=1, walltime_s=3600))


def iso(dt: datetime | None) -> str | None:
    return dt.isoformat() if dt else None


def event_json(ev: Event) -> dict[str, Any]:
    return ev.model_dump(mode="json")


def public_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """A site's configuration without secrets: secret-looking env values are masked."""
    out = dict(cfg)
    out["env"] = {k: ("***" if _SECRET.search(k) else v) for k, v in cfg.get("env", {}).items()}
    return out


def site_row(s: SiteSummary, *, my_jobs: int | None, typical_start_s: float | None,
             snap: SiteSnapshot | None = None) -> dict[str, Any]:
    """The sidebar's SiteRow: the site's summary (the one every face shows) in its shape,
    with the first of `snap`'s warnings (the records its view left out)."""
    warnings, warnings_total = row_warnings(snap)
    return {
        "name": s.name,
        "scheduler": s.scheduler,
        "reachable": s.reachable,
        "error": s.error,
        "queue_error": s.queue_error,
        "warnings": warnings,
        "warnings_total": warnings_total,
        "taken_at": iso(s.taken_at),
        "nodes_total": s.nodes or None,
        "nodes_free": s.nodes_free,
        "cpus_total": s.cpus_total,
        "cpus_free": s.cpus_free,
        "gpus_total": s.gpus_total,
        "gpus_free": s.gpus_free,
        "pending": s.pending,
        "running": s.running,
        "my_jobs": my_jobs,
        "typical_start_s": typical_start_s,
        "partitions": [{"name": p.name, "max_time_s": p.max_time_s,
                        "total_nodes": p.total_nodes, "default": p.default}
                       for p in s.partitions],
        "metadata": s.metadata,
    }


def snapshot_summary(snap: SiteSnapshot) -> dict[str, Any]:
    warnings, warnings_total = row_warnings(snap)
    return {"taken_at": iso(snap.taken_at), "reachable": snap.reachable, "error": snap.error,
            "queue_error": snap.queue_error, "warnings": warnings,
            "warnings_total": warnings_total,
            "nodes": len(snap.nodes), "partitions": [p.name for p in snap.partitions],
            "pending": None if snap.queue_error else len(snap.pending),
            "running": None if snap.queue_error else len(snap.running)}


# -- event payloads (jupyter_events) ---------------------------------------------------------

def job_state_payload(ev: Event, job: Job | None) -> dict[str, Any]:
    data = ev.data
    if data.get("state"):
        state = data["state"]
    elif ev.kind == "job.submitted":  # a submit's event carries no state: it made a PENDING
        state = JobState.PENDING.value  # job (said the same live and in a later replay)
    else:
        state = job.state.value if job else JobState.UNKNOWN.value
    current = job is not None and job.state.value == state  # job's details match this event

    def field(key: str) -> Any:
        if key in data:
            return data[key]
        return getattr(job, key) if current else None

    def when(key: str) -> str | None:
        v = field(key)
        return iso(v) if isinstance(v, datetime) else v

    return {
        "seq": ev.seq,
        "kind": ev.kind,
        "job_id": job.id if job else ev.job_id,
        "site": ev.site or (job.site if job else ""),
        "state": state,
        "previous": data.get("previous") if ev.kind != "job.submitted" else None,
        "at": iso(ev.at),
        "name": job.name if job else data.get("name"),
        "native_id": data.get("native_id") or (job.native_id if job else None),
        "exit_code": field("exit_code"),
        "reason": field("reason"),
        "submitted_at": when("submitted_at") or (iso(job.submitted_at) if job else None),
        "started_at": when("started_at"),
        "ended_at": when("ended_at"),
    } | ({"array_tasks": data["array_tasks"]} if "array_tasks" in data else {})


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str(v: Any) -> str | None:
    return None if v is None else str(v)


def transfer_payload(ev: Event) -> dict[str, Any]:
    d = ev.data
    return {
        "seq": ev.seq, "kind": ev.kind, "at": iso(ev.at), "job_id": ev.job_id, "site": ev.site,
        "transfer_id": _str(d.get("transfer_id") or d.get("id")),
        "state": _str(d.get("state")),
        "bytes_done": _int(d.get("bytes_done", d.get("bytes"))),
        "bytes_total": _int(d.get("bytes_total", d.get("total_bytes"))),
        "src": _str(d.get("src")), "dst": _str(d.get("dst")), "error": _str(d.get("error")),
        "data": d,
    }


def agent_payload(ev: Event) -> dict[str, Any]:
    d = ev.data
    return {
        "seq": ev.seq, "kind": ev.kind, "at": iso(ev.at), "job_id": ev.job_id, "site": ev.site,
        "task_id": _str(d.get("task_id")),
        "step": _int(d.get("step", d.get("n"))),
        "step_kind": _str(d.get("step_kind") or ev.kind.partition(".")[2] or None),
        "state": _str(d.get("state")),
        "text": _str(d.get("text")),
        "tool": _str(d.get("tool")),
        "data": with_plan_sha256(d),  # a plan shown carries what its approval names
    }
