"""Bridge from the Federation's stored events to jupyter_events (/api/events/subscribe)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ..dependency_journal import DEPENDENCY_EVENT
from ..federation_lookout import LOOKOUT_EVENT
from ..log_lines import one_line_logger
from ..model import DiamondError, Event, predicted_start
from . import views

if TYPE_CHECKING:
    from jupyter_events import EventLogger

    from ..federation import Federation

log = one_line_logger(__name__)

SCHEMA_DIR = Path(__file__).parent / "schemas"
PREFIX = "https://diamond-jupyter.org/events/"
JOB_STATE = PREFIX + "job-state"
SITE_SNAPSHOT = PREFIX + "site-snapshot"
TRANSFER_PROGRESS = PREFIX + "transfer-progress"
AGENT_STEP = PREFIX + "agent-step"
ACTIVITY = PREFIX + "activity"
WORKFLOW = PREFIX + "workflow"
JOB_ATTENTION = PREFIX + "job-attention"
JOB_DEPENDENCY = PREFIX + "job-dependency"
LOGIN_PROMPT = PREFIX + "login-prompt"  # emitted by server.login, not from stored events
# job.submit-unsure: a submit's answer was lost, its job is being looked for by its token
JOB_KINDS = frozenset({"job.state", "job.submitted", "job.updated", LOOKOUT_EVENT})


def schema_paths() -> list[Path]:
    return sorted(SCHEMA_DIR.glob("*.yaml"))


def register_schemas(event_logger: EventLogger) -> list[str]:
    """Register every diamond schema once (registering an id twice raises)."""
    ids = []
    for path in schema_paths():
        sid = yaml.safe_load(path.read_text())["$id"]
        if sid not in event_logger.schemas:
            event_logger.register_event_schema(path)
        ids.append(sid)
    return ids


def to_emission(ev: Event, fed: Federation) -> tuple[str, dict[str, Any]] | None:
    """Map one stored event to (schema id, payload); None only for unsequenced events."""
    if ev.kind in JOB_KINDS and ev.job_id:
        try:
            job = fed.job(ev.job_id)
        except DiamondError:
            job = None
        payload = views.job_state_payload(ev, job)
        if ev.kind == "job.submitted" and job is not None:
            # The sidebar's first sight of a job: where it came from and why this site.
            payload.update(origin=job.origin, placement=job.placement,
                           predicted_start=predicted_start(job),
                           previous_id=ev.data.get("previous_id"))
        elif ev.kind == "job.updated" and "predicted_start" in ev.data and job is not None:
            # an explicit site's prediction, made just after the submit
            payload.update(placement=job.placement, predicted_start=ev.data["predicted_start"])
        # a submit whose answer was lost: where the search for its job stands now
        if (job is not None and (ev.kind == LOOKOUT_EVENT or job.native_id is None or (
                ev.kind == "job.submitted" and ev.data.get("previous_id")))
                and (lookout := fed.lookout(job.id)) is not None):
            payload["lookout"] = lookout
        return JOB_STATE, payload
    if ev.kind == "job.attention" and ev.job_id:
        return JOB_ATTENTION, attention_payload(ev)
    if ev.kind == DEPENDENCY_EVENT and ev.job_id:
        return JOB_DEPENDENCY, dependency_payload(ev)
    if ev.kind.startswith("transfer."):
        return TRANSFER_PROGRESS, views.transfer_payload(ev)
    if ev.kind.startswith("agent."):
        return AGENT_STEP, views.agent_payload(ev)
    if ev.kind.startswith("workflow.") and ev.data.get("workflow_id"):
        return WORKFLOW, workflow_payload(ev)
    if ev.seq is None:
        return None
    return ACTIVITY, activity_payload(ev)


def workflow_payload(ev: Event) -> dict[str, Any]:
    d = ev.data
    return {"seq": ev.seq, "kind": ev.kind, "at": views.iso(ev.at),
            "workflow_id": str(d["workflow_id"]), "step": d.get("step"),
            "phase": d.get("phase"), "state": d.get("state"), "job_id": ev.job_id,
            "site": ev.site, "data": d}


def attention_payload(ev: Event) -> dict[str, Any]:
    d = ev.data
    out = {"seq": ev.seq, "kind": ev.kind, "job_id": ev.job_id, "site": ev.site,
           "attention": d.get("attention"), "state": d.get("state"),
           "reason": d.get("reason"), "version": str(d.get("version") or "1"),
           "at": views.iso(ev.at)}
    for key in ("never", "explanation", "remaining_s", "walltime_s"):
        if d.get(key) is not None:
            out[key] = d[key]
    return out


def dependency_payload(ev: Event) -> dict[str, Any]:
    d = ev.data
    return {"seq": ev.seq, "kind": ev.kind, "job_id": ev.job_id, "site": ev.site,
            "outcome": d.get("outcome"), "dependency": d.get("dependency") or {},
            "state": d.get("state"), "upstream_state": d.get("upstream_state"),
            "version": str(d.get("version") or "1"), "at": views.iso(ev.at)}


def activity_payload(ev: Event) -> dict[str, Any]:
    """Every other stored kind, so that the browser sees each sequence number once."""
    return {"seq": ev.seq, "kind": ev.kind, "at": views.iso(ev.at), "job_id": ev.job_id,
            "site": ev.site, "data": ev.data}


class EventBridge:
    """Subscribes to the Federation and emits on the server's event-loop thread."""

    def __init__(self, event_logger: EventLogger) -> None:
        self.event_logger = event_logger
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._fed: Federation | None = None
        self._snap_rows: dict[str, dict[str, Any]] = {}

    def attach(self, fed: Federation) -> None:
        """Call from the event loop: remembers it, then follows the Federation's events."""
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        if self._unsubscribe is None:
            self._fed = fed
            self._unsubscribe = fed.subscribe(self.on_event)

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._unsubscribe = self._fed = None

    def on_event(self, ev: Event) -> None:
        if self._fed is None:
            return
        mapped = to_emission(ev, self._fed)
        if mapped is not None:
            self.emit(*mapped)

    def site_snapshot(self, row: dict[str, Any]) -> None:
        """Emit a SiteRow when it says something new (reachability, counts, ...): the same
        row is not re-sent."""
        name = row["name"]
        if self._snap_rows.get(name) == row:
            return
        self._snap_rows[name] = row
        self.emit(SITE_SNAPSHOT, row)

    def emit(self, schema_id: str, data: dict[str, Any]) -> None:
        if self._loop is None or self._loop.is_closed():
            return
        if threading.get_ident() != self._thread:
            self._loop.call_soon_threadsafe(self._emit, schema_id, data)
        else:
            self._emit(schema_id, data)

    def _emit(self, schema_id: str, data: dict[str, Any]) -> None:
        try:
            self.event_logger.emit(schema_id=schema_id, data=data)
        except Exception:  # a bad payload must not break the engine's delivery
            log.exception("diamond: could not emit %s", schema_id)
