"""Workflows in the store: one row per workflow, one per step, events in the same write.

A step's job is found by the token of its current attempt (the job id changes when the
scheduler's id is bound, the token never does). Each change of a step or a workflow is
written together with its event (`workflow.step`, `workflow.state`), so a restart finds
exactly what the events said.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Collection, Iterable
from datetime import datetime
from typing import Any, NamedTuple

from pydantic import BaseModel, Field, PrivateAttr

from .. import leases
from ..model import BadInput, JobSpec, utcnow
from .codec import from_js, from_ts, redact, to_js, to_js_sealed, to_ts
from .db import IN_CHUNK, Database

WORKFLOW_DONE = ("COMPLETED", "FAILED", "CANCELLED")
# what a hand-back for sites the engine's file lacks notes in a workflow's data, kept until
# the next claim: those sites, and the engine that handed it back
HANDED_BACK = frozenset({"unreached_sites", "handed_back_by"})
NAMED_SHOWN = 5  # the workflows of one name an unknown id that is that name lists


class StepSubmit(NamedTuple):
    """One step's submit in a batch (`reserve_step_submits`): its job's intent (site, token,
    spec, origin) and the step's new fields (`update_step`'s keywords)."""

    step: str
    site: str
    token: str
    spec: JobSpec
    origin: dict[str, Any]
    fields: dict[str, Any]


class StepRecord(BaseModel):
    workflow_id: str
    name: str
    # waiting (nothing submitted), queued (submitted, the scheduler's dependency or nothing
    # holds it), held (submitted held: released by the engine), moving (its inputs are being
    # copied), ready (inputs arrived; a gang member waiting for its gang), released,
    # done, failed, cancelled; unapproved (its site or rendered script is not the approved
    # one: it waits for a new approval)
    phase: str = "waiting"
    site: str | None = None
    token: str | None = None
    attempt: int = 0
    reason: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    updated_at: datetime | None = None


class _StepPositions:
    """Where each step name sits in a record's list: derived, not part of the record (equal
    to any other), checked on each use (a copy of the record may hold another list)."""

    def __init__(self) -> None:
        self.at: dict[str, int] = {}

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]


class WorkflowRecord(BaseModel):
    id: str
    name: str
    state: str = "PENDING"  # PENDING, RUNNING, COMPLETED, FAILED, CANCELLED
    spec: dict[str, Any]
    reason: str | None = None
    origin: dict[str, Any] | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime
    steps: list[StepRecord] = Field(default_factory=list)
    # the whole spec sealed where redaction changed it (store/seal.py); never shown
    sealed_spec: str | None = Field(default=None, exclude=True, repr=False)

    _positions: _StepPositions = PrivateAttr(default_factory=_StepPositions)

    def step(self, name: str) -> StepRecord:
        """The step `name` (the first of that name), found by its remembered position, which
        is read again from the list when it no longer holds that step."""
        at = self._positions.at.get(name)
        if at is not None and at < len(self.steps) and self.steps[at].name == name:
            return self.steps[at]
        positions: dict[str, int] = {}
        for i, s in enumerate(self.steps):
            positions.setdefault(s.name, i)
        self._positions.at = positions
        if name not in positions:
            raise BadInput(f"workflow {self.id} has no step {name!r}")
        return self.steps[positions[name]]


def _row_to_workflow(row: sqlite3.Row, steps: list[StepRecord]) -> WorkflowRecord:
    return WorkflowRecord(id=row["id"], name=row["name"], state=row["state"],
                          spec=from_js(row["spec"], {}), reason=row["reason"],
                          origin=from_js(row["origin"]), data=from_js(row["data"], {}),
                          created_at=from_ts(row["created_at"]),
                          updated_at=from_ts(row["updated_at"]), steps=steps,
                          sealed_spec=row["sealed_spec"])


def _row_to_step(r: sqlite3.Row) -> StepRecord:
    return StepRecord(workflow_id=r["workflow_id"], name=r["name"], phase=r["phase"],
                      site=r["site"], token=r["token"], attempt=r["attempt"], reason=r["reason"],
                      data=from_js(r["data"], {}), updated_at=from_ts(r["updated_at"]))


def _stepped(cur: StepRecord, *, phase: str | None = None, site: str | None = None,
             token: str | None = None, attempt: int | None = None, reason: str | None = None,
             data: dict[str, Any] | None = None, event: dict[str, Any] | None = None,
             job_id: str | None = None) -> tuple[StepRecord, dict[str, Any] | None]:
    """Step `cur` with `update_step`'s fields set, and the data of its `workflow.step` event
    (None when neither its phase nor its token changed and no `event` is given)."""
    new = cur.model_copy(update={k: v for k, v in (
        ("phase", phase), ("site", site), ("token", token), ("attempt", attempt))
        if v is not None})
    new.token = new.token or None  # "" clears it
    if reason is not None:
        new.reason = redact(reason) or None
    new.data = {**cur.data, **(data or {})}
    if new.phase == cur.phase and event is None and new.token == cur.token:
        return new, None
    return new, {"workflow_id": cur.workflow_id, "step": cur.name, "phase": new.phase,
                 "previous": cur.phase, "attempt": new.attempt, "site": new.site,
                 "reason": new.reason, **(event or {})}


class WorkflowsMixin(Database):
    """Workflows and their steps; events are written by the jobs part's `_event`."""

    def create_workflow(self, name: str, spec: dict[str, Any], steps: list[str], *,
                        workflow_id: str | None = None, origin: dict[str, Any] | None = None,
                        owner: str | None = None, data: dict[str, Any] | None = None
                        ) -> WorkflowRecord:
        """Record a workflow and its steps (waiting) durably, with `workflow.created`;
        `data` (an approval's pins) is in the same write."""
        wid = workflow_id or f"wf-{uuid.uuid4().hex[:12]}"
        shown, sealed = to_js_sealed(spec, self.sealer)
        with self._write(durable=True) as c:
            now = to_ts(utcnow())
            try:
                c.execute("INSERT INTO workflows (id, name, state, spec, sealed_spec, origin, "
                          "data, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
                          (wid, name, "PENDING", shown, sealed, to_js(origin),
                           to_js({**(data or {}), "owner": owner, "lease": 1 if owner else 0}),
                           now, now))
            except sqlite3.IntegrityError:
                raise BadInput(f"workflow {wid!r} already exists") from None
            for s in steps:
                c.execute("INSERT INTO workflow_steps (workflow_id, name, phase, updated_at)"
                          " VALUES (?,?,?,?)", (wid, s, "waiting", now))
            self._event(c, "workflow.created", None, None,
                        {"workflow_id": wid, "name": name, "steps": steps})
            return self._workflow(c, wid)

    def _workflow(self, c: sqlite3.Connection, wid: str) -> WorkflowRecord:
        row = c.execute("SELECT * FROM workflows WHERE id = ?", (wid,)).fetchone()
        if row is None:
            raise BadInput(self._unknown_workflow(c, wid))
        steps = [_row_to_step(r) for r in c.execute(
            "SELECT * FROM workflow_steps WHERE workflow_id = ? ORDER BY rowid", (wid,))]
        return _row_to_workflow(row, steps)

    def unknown_workflow(self, wid: str) -> str:
        """What a face says of `wid`, an id no stored workflow has (`_unknown_workflow`)."""
        with self._reader() as c:
            return self._unknown_workflow(c, wid)

    @staticmethod
    def _unknown_workflow(c: sqlite3.Connection, wid: str) -> str:
        """`wid` is no workflow's id: said so, and when it is the name of stored workflows
        (`diamond workflow status nightly`; a name may be run again and again), their ids,
        newest first, each with its state."""
        named = c.execute("SELECT id, state FROM workflows WHERE name = ? ORDER BY "
                          "created_at DESC, rowid DESC LIMIT ?", (wid, NAMED_SHOWN + 1)
                          ).fetchall()
        if not named:
            return f"no workflow {wid!r} in the store (`diamond workflow list` lists them)"
        shown = ", ".join(f"{r['id']} ({r['state']})" for r in named[:NAMED_SHOWN])
        more = " and older ones (`diamond workflow list`)" if len(named) > NAMED_SHOWN else ""
        which = "its id" if len(named) == 1 else "the id of the one meant"
        return (f"{wid!r} is a workflow's name, not its id: give {which}; workflows named "
                f"{wid}, newest first: {shown}{more}")

    def workflows_with_ids(self, workflow_ids: Iterable[str]) -> dict[str, WorkflowRecord]:
        """The stored workflows of `workflow_ids` by id (an unknown id left out): two reads
        per IN_CHUNK of ids, however many there are."""
        wanted = sorted(set(workflow_ids))
        out: dict[str, WorkflowRecord] = {}
        with self._reader() as c:
            for i in range(0, len(wanted), IN_CHUNK):
                part = wanted[i:i + IN_CHUNK]
                marks = ",".join("?" * len(part))
                steps: dict[str, list[StepRecord]] = {}
                for r in c.execute(f"SELECT * FROM workflow_steps WHERE workflow_id IN "
                                   f"({marks}) ORDER BY rowid", part):
                    steps.setdefault(r["workflow_id"], []).append(_row_to_step(r))
                for row in c.execute(f"SELECT * FROM workflows WHERE id IN ({marks})", part):
                    out[row["id"]] = _row_to_workflow(row, steps.get(row["id"], []))
        return out

    def workflow_spec_to_run(self, rec: WorkflowRecord) -> dict[str, Any]:
        """The workflow as it was given, to submit its steps: the stored spec where nothing
        was redacted, else the sealed one (SealError when it cannot be opened: the redacted
        text is never what runs)."""
        if not rec.sealed_spec:  # read with the record: no second query per advance
            return rec.spec
        return json.loads(self.sealer.unseal(rec.sealed_spec))

    def has_workflow(self, workflow_id: str) -> bool:
        return bool(self._read("SELECT 1 FROM workflows WHERE id = ?", (workflow_id,)))

    def get_workflow(self, workflow_id: str) -> WorkflowRecord:
        with self._reader() as c:
            return self._workflow(c, workflow_id)

    def refresh_workflow(self, rec: WorkflowRecord, names: Iterable[str], *,
                         steps_only: bool = False) -> WorkflowRecord:
        """`rec` with the steps `names` read again (their rows only, not the workflow's); the
        whole workflow read again when its state moved since `rec` (a stop rewrites every
        step), unless `steps_only` (a reader of those steps alone)."""
        wanted = sorted(set(names))
        with self._reader() as c:
            row = c.execute("SELECT state FROM workflows WHERE id = ?", (rec.id,)).fetchone()
            if row is None or (row["state"] != rec.state and not steps_only):
                return self._workflow(c, rec.id)
            if not wanted:
                return rec
            fresh = {r["name"]: _row_to_step(r) for r in c.execute(
                "SELECT * FROM workflow_steps WHERE workflow_id = ? AND name IN "
                f"({','.join('?' * len(wanted))})", (rec.id, *wanted))}
        return rec.model_copy(update={"steps": [fresh.get(s.name, s) for s in rec.steps]})

    def get_step(self, workflow_id: str, name: str) -> StepRecord:
        rows = self._read("SELECT * FROM workflow_steps WHERE workflow_id = ? AND name = ?",
                          (workflow_id, name))
        if not rows:
            raise BadInput(f"workflow {workflow_id} has no step {name!r}")
        return _row_to_step(rows[0])

    def list_workflows(self, states: Iterable[str] | None = None, limit: int | None = 50
                       ) -> list[WorkflowRecord]:
        where, args = "", []
        if states is not None:
            args = list(states)
            where = f" WHERE state IN ({','.join('?' * len(args))})" if args else " WHERE 0"
        rows = self._read(f"SELECT id FROM workflows{where} ORDER BY created_at DESC, rowid DESC"
                          " LIMIT ?", [*args, -1 if limit is None else limit])
        with self._reader() as c:
            return [self._workflow(c, r["id"]) for r in rows]

    def unfinished_workflows(self) -> list[WorkflowRecord]:
        return self.list_workflows(states=["PENDING", "RUNNING"], limit=None)

    def workflow_of_token(self, token: str) -> tuple[str, str] | None:
        """(workflow id, step name) whose current attempt is the job with this token."""
        rows = self._read("SELECT workflow_id, name FROM workflow_steps WHERE token = ?",
                          (token,))
        return (rows[0][0], rows[0][1]) if rows else None

    def update_step(self, workflow_id: str, name: str, *, phase: str | None = None,
                    site: str | None = None, token: str | None = None,
                    attempt: int | None = None, reason: str | None = None,
                    data: dict[str, Any] | None = None, event: dict[str, Any] | None = None,
                    job_id: str | None = None, fence: leases.Fence | None = None
                    ) -> StepRecord:
        """Set the given fields (`data` merged; `reason` "" clears it) and, in the same
        transaction, record a `workflow.step` event with the step's new values. With `fence`
        (the driving engine's lease), LeaseLost when another engine took the workflow over."""
        with self._write() as c:
            self._check_fence(c, fence)
            return self._update_step(c, workflow_id, name, phase=phase, site=site,
                                     token=token, attempt=attempt, reason=reason, data=data,
                                     event=event, job_id=job_id)

    def reserve_step_submits(self, workflow_id: str, submits: Iterable[StepSubmit],
                             fence: leases.Fence | None = None) -> list[StepRecord]:
        """Record a batch of step submits about to be sent, in ONE durable transaction (one
        fsync, not one a step): each step's new fields (phase "submitting", its token) and
        its job's intent, as `update_step` and `record_intent` write them. Every step of the
        batch is then either bound to its native id when its submit returns, or, after a
        crash, found by the token in its job's name or closed as never submitted and
        resubmitted, as a single submit's intent is. All or nothing; `fence` as for
        `update_step`."""
        with self._write(durable=True) as c:
            self._check_fence(c, fence)
            submits = list(submits)
            for s in submits:
                self._insert_intent(c, s.site, s.token, s.spec, origin=s.origin,
                                    read_back=False)
            return self._update_steps(c, workflow_id, [(s.step, s.fields) for s in submits])

    def update_steps(self, workflow_id: str, updates: Iterable[tuple[str, dict[str, Any]]],
                     fence: leases.Fence | None = None) -> list[StepRecord]:
        """`update_step` for each (step name, its keywords) of `updates`, in one transaction
        (a batch's submits recorded with their jobs: `WorkflowEngine._flush_submits`)."""
        with self._write() as c:
            self._check_fence(c, fence)
            return self._update_steps(c, workflow_id, updates)

    def _update_step(self, c: sqlite3.Connection, workflow_id: str, name: str,
                     **fields: Any) -> StepRecord:
        """`update_step` inside the caller's transaction `c`."""
        return self._update_steps(c, workflow_id, [(name, fields)])[0]

    def _update_steps(self, c: sqlite3.Connection, workflow_id: str,
                      updates: Iterable[tuple[str, dict[str, Any]]]) -> list[StepRecord]:
        """`update_step` of each (step name, its keywords) of `updates`, in order, inside the
        caller's transaction `c`: the steps' rows read with one query, written with one
        statement and their events inserted with another (a batch of a thousand steps: no
        read, write and insert a step); a step's data unchanged keeps its stored text."""
        updates = list(updates)
        names = list(dict.fromkeys(name for name, _ in updates))
        current: dict[str, StepRecord] = {}
        texts: dict[str, str | None] = {}  # each step's data as stored (None: to encode)
        for i in range(0, len(names), IN_CHUNK):
            for row in c.execute(
                    "SELECT * FROM workflow_steps WHERE workflow_id = ? AND name IN "
                    "(SELECT value FROM json_each(?))",
                    (workflow_id, json.dumps(names[i:i + IN_CHUNK]))):
                current[row["name"]], texts[row["name"]] = _row_to_step(row), row["data"]
        out: list[StepRecord] = []
        events: list[tuple[str | None, str | None, dict[str, Any]]] = []
        for name, fields in updates:
            if name not in current:
                raise BadInput(f"workflow {workflow_id} has no step {name!r}")
            new, said = _stepped(current[name], **fields)
            if fields.get("data"):
                texts[name] = None
            current[name] = new
            out.append(new)
            if said is not None:
                events.append((fields.get("job_id"), new.site, said))
        now = to_ts(utcnow())
        c.executemany("UPDATE workflow_steps SET phase = ?, site = ?, token = ?, attempt = ?,"
                      " reason = ?, data = ?, updated_at = ? WHERE workflow_id = ? AND name = ?",
                      [(new.phase, new.site, new.token, new.attempt, new.reason,
                        texts[name] if texts[name] is not None else to_js(new.data), now,
                        workflow_id, name)
                       for name, new in current.items() if name in names])
        self._events(c, "workflow.step", events)
        return out

    def set_workflow_state(self, workflow_id: str, state: str, reason: str | None = None,
                           fence: leases.Fence | None = None) -> WorkflowRecord:
        """A new state (a finished workflow keeps its end), with `workflow.state`; `fence` as
        for `update_step`."""
        with self._write() as c:
            self._check_fence(c, fence)
            cur = self._workflow(c, workflow_id)
            if cur.state in WORKFLOW_DONE or cur.state == state:
                return cur
            c.execute("UPDATE workflows SET state = ?, reason = COALESCE(?, reason),"
                      " updated_at = ? WHERE id = ?",
                      (state, redact(reason), to_ts(utcnow()), workflow_id))
            self._event(c, "workflow.state", None, None, {
                "workflow_id": workflow_id, "name": cur.name, "state": state,
                "previous": cur.state, "reason": reason})
            return self._workflow(c, workflow_id)

    def update_workflow_data(self, workflow_id: str, data: dict[str, Any],
                             fence: leases.Fence | None = None) -> WorkflowRecord:
        with self._write() as c:
            self._check_fence(c, fence)
            cur = self._workflow(c, workflow_id)
            c.execute("UPDATE workflows SET data = ?, updated_at = ? WHERE id = ?",
                      (to_js({**cur.data, **data}), to_ts(utcnow()), workflow_id))
            return self._workflow(c, workflow_id)

    def claim_workflow(self, workflow_id: str, engine: str) -> WorkflowRecord | None:
        """Make `engine` the one driving this workflow; None if another live engine does. A
        new owner gets the next lease generation (`data.lease`: its writes' fence)."""
        with self._write() as c:
            cur = self._workflow(c, workflow_id)
            owner = cur.data.get("owner")
            if owner not in (None, engine) and leases.alive(owner, self.beats):
                return None
            new = leases.claimed(cur.data, engine)
            if HANDED_BACK.intersection(new):  # claimed: its next hand-back says anew
                new = {k: v for k, v in new.items() if k not in HANDED_BACK}
            if new is not cur.data:
                c.execute("UPDATE workflows SET data = ? WHERE id = ?", (to_js(new), workflow_id))
            return self._workflow(c, workflow_id)

    def release_workflow(self, workflow_id: str, engine: str, *,
                         unreached_sites: Collection[str] = ()) -> None:
        """`engine` gives the workflow back; `unreached_sites`: the sites its sites file
        lacks that steps wait on (`data.unreached_sites`, and `data.handed_back_by` the
        engine, until the next claim)."""
        with self._write() as c:
            cur = self._workflow(c, workflow_id)
            if cur.data.get("owner") == engine:
                new = {k: v for k, v in leases.handed_back(cur.data).items()
                       if k not in HANDED_BACK}
                if unreached_sites:
                    new.update(unreached_sites=sorted(unreached_sites), handed_back_by=engine)
                c.execute("UPDATE workflows SET data = ? WHERE id = ?",
                          (to_js(new), workflow_id))
