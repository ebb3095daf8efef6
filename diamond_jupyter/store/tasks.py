"""Agent tasks in the store: their steps, what they wait on, which engine runs them."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .. import leases
from ..log_lines import one_line_logger
from ..model import BadInput, Job, utcnow
from .codec import (
    from_js,
    from_ts,
    redact,
    row_to_job,
    row_to_task,
    to_js,
    to_js_sealed,
    to_ts,
)
from .db import Database
from .model import TaskRecord, TaskStep
from .seal import SealError

log = one_line_logger("diamond_jupyter.store")


class TasksMixin(Database):
    """Agent tasks."""

    if TYPE_CHECKING:
        def _resolve_id(self, job_id: str, c: sqlite3.Connection | None = None) -> str: ...

    # -- agent tasks ----------------------------------------------------------------------------

    def create_task(self, prompt: str, *, task_id: str | None = None, state: str = "running",
                    data: dict[str, Any] | None = None,
                    waiting_on: list[str] | None = None) -> TaskRecord:
        task_id = task_id or uuid.uuid4().hex
        data = dict(data or {})
        if data.get("owner"):  # made by the engine that runs it: its first lease
            data["lease"] = 1
        with self._write() as c:
            now = to_ts(utcnow())
            shown, sealed = to_js_sealed(data, self.sealer)
            try:
                c.execute("INSERT INTO tasks (id, state, prompt, data, sealed_data, waiting_on,"
                          " created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)",
                          (task_id, state, redact(prompt), shown, sealed,
                           json.dumps(waiting_on or []), now, now))
            except sqlite3.IntegrityError as e:
                raise BadInput(f"task {task_id!r} already exists") from e
            return self._task(c, task_id, steps=False)

    def _task(self, c: sqlite3.Connection, task_id: str, steps: bool) -> TaskRecord:
        row = c.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()
        if row is None:
            raise BadInput(f"unknown task {task_id!r}")
        task = row_to_task(row)
        if steps:
            rows = c.execute("SELECT * FROM task_steps WHERE task_id = ? ORDER BY n", (task_id,))
            task.steps = [TaskStep(task_id=r["task_id"], n=r["n"], kind=r["kind"],
                                   at=from_ts(r["at"]),
                                   data=from_js(r["data"], {})) for r in rows]
        return task

    def _whole_data(self, c: sqlite3.Connection, task_id: str, *,
                    strict: bool = False) -> dict[str, Any]:
        """The task's data as it was given (secrets included): the sealed copy where
        redaction changed it. A seal that cannot be opened: SealError when `strict`, else
        the redacted data (a write keeps what is left, logged)."""
        row = c.execute("SELECT data, sealed_data FROM tasks WHERE id = ?",
                        (task_id,)).fetchone()
        if row is None:
            raise BadInput(f"unknown task {task_id!r}")
        if row["sealed_data"]:
            try:
                return json.loads(self.sealer.unseal(row["sealed_data"]))
            except SealError:
                if strict:
                    raise
                log.warning("task %s: its sealed data cannot be opened; kept redacted", task_id)
        return from_js(row["data"], {})

    def _set_data(self, c: sqlite3.Connection, task_id: str, data: dict[str, Any]) -> None:
        """Store the task's whole data: redacted in `data`, sealed where that changed it."""
        shown, sealed = to_js_sealed(data, self.sealer)
        c.execute("UPDATE tasks SET data = ?, sealed_data = ? WHERE id = ?",
                  (shown, sealed, task_id))

    def task_data_to_run(self, task_id: str) -> dict[str, Any]:
        """The task's data as given, to run its tool calls (an approved plan, the inputs of
        the calls left): never the redacted text. SealError when the seal cannot be opened."""
        with self._reader() as c:
            return self._whole_data(c, task_id, strict=True)

    def update_task(self, task_id: str, *, state: str | None = None,
                    data: dict[str, Any] | None = None,
                    waiting_on: list[str] | None = None,
                    fence: leases.Fence | None = None) -> TaskRecord:
        """Set state; merge `data`; replace `waiting_on` when given ([] clears it). With
        `fence` (the running engine's lease), LeaseLost when another engine took it over."""
        with self._write() as c:
            self._check_fence(c, fence)
            cur = self._task(c, task_id, steps=False)
            c.execute("UPDATE tasks SET state = ?, waiting_on = ?, updated_at = ? WHERE id = ?",
                      (state or cur.state,
                       json.dumps(cur.waiting_on if waiting_on is None else waiting_on),
                       to_ts(utcnow()), task_id))
            if data:
                self._set_data(c, task_id, {**self._whole_data(c, task_id), **data})
            return self._task(c, task_id, steps=False)

    def add_step(self, task_id: str, kind: str, data: dict[str, Any] | None = None, *,
                 fence: leases.Fence | None = None) -> TaskStep:
        """Append a step; `fence` as for `update_task`."""
        with self._write() as c:
            self._check_fence(c, fence)
            self._task(c, task_id, steps=False)
            n = c.execute("SELECT COALESCE(MAX(n), 0) + 1 FROM task_steps WHERE task_id = ?",
                          (task_id,)).fetchone()[0]
            at, blob = utcnow(), to_js(data or {})
            c.execute("INSERT INTO task_steps (task_id, n, kind, at, data) VALUES (?,?,?,?,?)",
                      (task_id, n, kind, to_ts(at), blob))
            c.execute("UPDATE tasks SET updated_at = ? WHERE id = ?", (to_ts(at), task_id))
            return TaskStep(task_id=task_id, n=n, kind=kind, at=at, data=json.loads(blob or "{}"))

    def get_task(self, task_id: str, steps: bool = True) -> TaskRecord:
        with self._reader() as c:
            return self._task(c, task_id, steps)

    def list_tasks(self, states: Iterable[str] | None = None, limit: int | None = 50,
                   offset: int = 0) -> list[TaskRecord]:
        where, args = "", []
        if states is not None:
            args = list(states)
            where = f" WHERE state IN ({','.join('?' * len(args))})" if args else " WHERE 0"
        sql = f"SELECT * FROM tasks{where} ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?"
        rows = self._read(sql, [*args, -1 if limit is None else limit, offset])
        return [row_to_task(r) for r in rows]

    def claim_task(self, task_id: str, engine: str, *, states: Iterable[str] = ("running",),
                   to_state: str | None = None, data: dict[str, Any] | None = None,
                   expect: Callable[[TaskRecord], bool] | None = None
                   ) -> TaskRecord | None:
        """Make `engine` the one running this task, if it is in `states`, no other live
        engine runs it and `expect` (if given) holds of it (then also set `to_state`,
        clearing waiting_on, and merge `data`), in one transaction: of several engines, one
        wins. Else None. A new owner gets the next lease generation (`data.lease`: its
        writes' fence)."""
        with self._write() as c:
            cur = self._task(c, task_id, steps=False)
            owner = cur.data.get("owner")
            if cur.state not in set(states) or (owner not in (None, engine)
                                                and leases.alive(owner, self.beats)):
                return None
            if expect is not None and not expect(cur):
                return None
            waiting = cur.waiting_on if to_state is None else []
            c.execute("UPDATE tasks SET state = ?, waiting_on = ?, updated_at = ? WHERE id = ?",
                      (to_state or cur.state, json.dumps(waiting), to_ts(utcnow()), task_id))
            whole = {**self._whole_data(c, task_id), **(data or {})}
            self._set_data(c, task_id, leases.claimed(whole, engine))
            return self._task(c, task_id, steps=False)

    def release_task(self, task_id: str, engine: str) -> None:
        with self._write() as c:
            cur = self._task(c, task_id, steps=False)
            if cur.data.get("owner") == engine:  # a write of its still under way is refused
                self._set_data(c, task_id, leases.handed_back(self._whole_data(c, task_id)))

    def job_by_call(self, key: str) -> Job | None:
        """The newest job submitted by the agent tool call `key` (its origin's "call")."""
        rows = self._read("SELECT * FROM jobs WHERE json_extract(origin, '$.call') = ?"
                          " ORDER BY created_at DESC, rowid DESC LIMIT 1", (key,))
        return row_to_job(rows[0]) if rows else None

    def tasks_waiting(self, on: str | None = None) -> list[TaskRecord]:
        """Tasks in state "waiting"; with `on`, only those whose waiting_on lists it."""
        sql, args = "SELECT * FROM tasks WHERE state = 'waiting'", []
        if on is not None:
            sql += " AND EXISTS (SELECT 1 FROM json_each(tasks.waiting_on) WHERE value = ?)"
            args.append(self._resolve_id(on))
        return [row_to_task(r) for r in self._read(sql + " ORDER BY created_at", args)]

    def _rekey_waiting(self, c: sqlite3.Connection, old: str, new: str) -> None:
        rows = c.execute("SELECT id, waiting_on FROM tasks WHERE EXISTS (SELECT 1 FROM "
                         "json_each(tasks.waiting_on) WHERE value = ?)", (old,)).fetchall()
        for r in rows:
            ids = [new if x == old else x for x in json.loads(r["waiting_on"])]
            c.execute("UPDATE tasks SET waiting_on = ? WHERE id = ?", (json.dumps(ids), r["id"]))
