"""Hedged submissions in the store: one group per hedged job, one job record per copy.

The winner of a group is decided here, atomically, by the first caller of `claim_hedge`
(a conditional UPDATE in one `BEGIN IMMEDIATE` transaction): every process sharing the
store file (the server, the CLI, kernels) agrees on it, whichever of them saw a copy
start first. The copies' wrappers run their payload only once the engine has written
the decision into their job directory (see `federation_hedge`).
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ..model import BadInput, Event, Job, hedged_reason, utcnow
from .codec import from_js, from_ts, row_to_job, to_js, to_ts
from .db import Database


class HedgeRecord(BaseModel):
    """A hedged submission: its copies (best ranked first), and the winner once decided."""

    id: str
    winner: str | None = None  # the winning copy's token
    decided_at: datetime | None = None
    created_at: datetime
    data: dict[str, Any] = Field(default_factory=dict)  # sites, skipped sites, the ask
    copies: list[Job] = Field(default_factory=list)

    @property
    def winner_job(self) -> Job | None:
        return next((j for j in self.copies if j.token == self.winner), None)

    @property
    def decided(self) -> bool:
        return self.winner is not None


class HedgesMixin(Database):
    """Hedged submissions."""

    if TYPE_CHECKING:
        def _event(self, c: sqlite3.Connection, kind: str, job_id: str | None = None,
                   site: str | None = None, data: dict[str, Any] | None = None,
                   at: datetime | None = None) -> Event: ...

    def create_hedge(self, group: str, data: dict[str, Any]) -> HedgeRecord:
        """Record a hedged submission before any copy is submitted (idempotent)."""
        if not group or any(ch.isspace() for ch in group):
            raise BadInput(f"bad hedge group id {group!r}")
        with self._write(durable=True) as c:
            if c.execute("SELECT 1 FROM hedges WHERE id = ?", (group,)).fetchone() is None:
                c.execute("INSERT INTO hedges (id, data, created_at) VALUES (?,?,?)",
                          (group, to_js(data), to_ts(utcnow())))
                self._event(c, "hedge.submitting", None, None, {"group": group, **data})
        return self.hedge(group)

    def claim_hedge(self, group: str, token: str, *, site: str | None = None,
                    job_id: str | None = None, started_at: datetime | None = None
                    ) -> tuple[str, bool]:
        """`token`'s copy started: it wins unless another copy already has.

        Returns (the winner's token, whether this call decided it). Atomic across every
        process sharing the store: exactly one caller ever gets True for a group."""
        with self._write() as c:
            row = c.execute("SELECT id, site FROM jobs WHERE token = ? AND hedge_group = ?",
                            (token, group)).fetchone()
            if row is None:
                raise BadInput(f"{token!r} is not a copy of hedged submission {group!r}")
            job_id, site = job_id or row["id"], site or row["site"]
            now = utcnow()
            cur = c.execute("UPDATE hedges SET winner = ?, decided_at = ? WHERE id = ? AND "
                            "winner IS NULL", (token, to_ts(now), group))
            won = cur.rowcount == 1
            winner = c.execute("SELECT winner FROM hedges WHERE id = ?", (group,)).fetchone()[0]
            if won:
                data: dict[str, Any] = {"group": group, "winner": job_id, "submission": token}
                if started_at is not None:
                    data["decided_after_start_s"] = round(
                        max(0.0, (now - started_at).total_seconds()), 3)
                self._event(c, "hedge.decided", job_id, site, data)
            return winner, won

    def hedge(self, group: str) -> HedgeRecord:
        rows = self._read("SELECT * FROM hedges WHERE id = ?", (group,))
        if not rows:
            raise BadInput(f"no hedged submission {group!r} in the store")
        r = rows[0]
        copies = [row_to_job(j) for j in self._read(
            "SELECT * FROM jobs WHERE hedge_group = ? ORDER BY created_at, rowid", (group,))]
        data = from_js(r["data"], {})
        order = {s: i for i, s in enumerate(data.get("sites", []))}
        copies.sort(key=lambda j: order.get(j.site, len(order)))
        return HedgeRecord(id=r["id"], winner=r["winner"], decided_at=from_ts(r["decided_at"]),
                           created_at=from_ts(r["created_at"]), data=data, copies=copies)

    def open_hedges(self) -> list[HedgeRecord]:
        """Groups not settled: undecided, or decided with a losing copy not yet ended, an
        unfinished winner not yet told "go" (no `hedge.go`), or a loser that ended
        CANCELLED for the winner with its cancel not finished (no `hedge.cancelled`): a
        settle cut short (its engine closed or died) leaves each of these."""
        rows = self._read(
            "SELECT DISTINCT h.id FROM hedges h JOIN jobs j ON j.hedge_group = h.id WHERE "
            "(j.state NOT IN ('COMPLETED','FAILED','CANCELLED','TIMEOUT') AND "
            " (h.winner IS NULL OR j.token != h.winner OR NOT EXISTS (SELECT 1 FROM events e "
            "  WHERE e.job_id = j.id AND e.kind = 'hedge.go'))) OR "
            "(h.winner IS NOT NULL AND j.token != h.winner AND j.state = 'CANCELLED' AND "
            " j.reason LIKE 'hedged: %' AND NOT EXISTS (SELECT 1 FROM events e "
            "  WHERE e.job_id = j.id AND e.kind = 'hedge.cancelled')) ORDER BY h.created_at")
        return [self.hedge(r[0]) for r in rows]

    def correct_losers_completed(self) -> list[Event]:
        """Losing copies recorded as an engine from before a loser's end was recorded as what
        it was (see `JobsMixin._hedge_loss`) left them: COMPLETED, now CANCELLED with the
        hedged reason (only the winner of a claim ever runs the body, so two COMPLETED
        copies are never shown), and any loser's exit code cleared (its scheduler's, for a
        body it never ran); each correction has its event saying so."""
        wrong = ("SELECT j.id, j.site, j.native_id, w.id, j.state, j.reason FROM jobs j JOIN "
                 "hedges h ON j.hedge_group = h.id LEFT JOIN jobs w ON w.token = h.winner AND "
                 "w.hedge_group = h.id WHERE h.winner IS NOT NULL AND j.token != h.winner "
                 "AND j.native_id IS NOT NULL AND (j.state = 'COMPLETED' OR (j.state = "
                 "'CANCELLED' AND j.exit_code IS NOT NULL AND j.reason LIKE 'hedged: %'))")
        if not self._read(wrong, ()):  # the usual answer: nothing is written
            return []
        with self._write() as c:
            rows = c.execute(wrong).fetchall()
            out = []
            for job_id, site, native_id, winner_id, state, reason in rows:
                if state == "CANCELLED":
                    c.execute("UPDATE jobs SET exit_code = NULL, updated_at = ? WHERE id = ?",
                              (to_ts(utcnow()), job_id))
                    out.append(self._event(c, "job.updated", job_id, site, {
                        "state": "CANCELLED", "previous": "CANCELLED", "changed":
                        ["exit_code"], "native_id": native_id, "exit_code": None,
                        "reason": reason, "source": "hedge (a losing copy's exit code, "
                                                    "cleared)"}))
                    continue
                why = hedged_reason(winner_id)
                c.execute("UPDATE jobs SET state = 'CANCELLED', reason = ?, exit_code = NULL, "
                          "updated_at = ? WHERE id = ?", (why, to_ts(utcnow()), job_id))
                out.append(self._event(c, "job.state", job_id, site, {
                    "state": "CANCELLED", "previous": "COMPLETED", "changed": [
                        "exit_code", "reason", "state"], "native_id": native_id,
                    "exit_code": None, "reason": why,
                    "source": "hedge (a losing copy recorded COMPLETED, corrected)"}))
            return out

    def hedge_event(self, kind: str, group: str, data: dict[str, Any],
                    job_id: str | None = None, site: str | None = None) -> Event:
        with self._write() as c:
            return self._event(c, kind, job_id, site, {"group": group, **data})
