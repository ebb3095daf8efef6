"""Data transfers in the store: recorded durably before submission, claimed by one engine."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import leases
from ..model import BadInput, utcnow
from .codec import redact, row_to_transfer, to_js, to_ts
from .db import Database
from .model import TransferRecord

TRANSFER_ENDS = {"SUCCEEDED", "FAILED", "CANCELLED"}
CANCELLED_BY_USER = "cancelled by request"


def _cancel_stands(rec: TransferRecord) -> bool:
    """A user's cancel was accepted: the record says CANCELLED, whatever its copy does."""
    return rec.state == "CANCELLED" and bool(rec.data.get("cancel_requested"))


@dataclass
class NewestTransfers:
    """What `TransfersMixin.newest_transfers` keeps: the newest `limit` transfers of every
    kind but "stage", newest first (`list_transfers(limit=limit)`). `rows_read` and
    `full_reads` count the work done, for tests and benchmarks."""

    limit: int
    source: object | None = None  # the store it was read from (another: read whole)
    clock: int = -1  # the transfers table's clock when last read (-1: never)
    deleted: int = -1  # its deletion tick then
    full: bool = False  # the store held at least `limit` such transfers then
    members: dict[int, tuple[tuple[str, int], TransferRecord]] = field(default_factory=dict)
    transfers: list[TransferRecord] = field(default_factory=list)  # the answer, newest first
    rows_read: int = 0
    full_reads: int = 0


class TransfersMixin(Database):
    """Transfers."""

    # -- transfers ------------------------------------------------------------------------------

    def record_transfer(self, kind: str, src: str, dst: str, *, submission_id: str | None = None,
                        transfer_id: str | None = None, state: str = "PENDING",
                        bytes: int | None = None, checksum: str | None = None,
                        data: dict[str, Any] | None = None) -> TransferRecord:
        """Record a transfer (durably, before submitting it); idempotent on submission_id/id."""
        transfer_id = transfer_id or uuid.uuid4().hex
        with self._write(durable=True) as c:
            row = c.execute("SELECT * FROM transfers WHERE id = ? OR submission_id = ?",
                            (transfer_id, submission_id)).fetchone()
            if row is not None:
                return row_to_transfer(row)
            now = to_ts(utcnow())
            c.execute("INSERT INTO transfers (id, submission_id, kind, src, dst, state, bytes,"
                      " checksum, data, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                      (transfer_id, submission_id, kind, redact(src), redact(dst), state, bytes,
                       checksum, to_js(data or {}), now, now))
            return self._transfer(c, transfer_id)

    def _transfer(self, c: sqlite3.Connection, transfer_id: str) -> TransferRecord:
        row = c.execute("SELECT * FROM transfers WHERE id = ?", (transfer_id,)).fetchone()
        if row is None:
            raise BadInput(f"unknown transfer {transfer_id!r}")
        return row_to_transfer(row)

    def update_transfer(self, transfer_id: str, *, state: str | None = None,
                        bytes: int | None = None, checksum: str | None = None,
                        error: str | None = None, data: dict[str, Any] | None = None,
                        fence: leases.Fence | None = None) -> TransferRecord:
        """Set the given fields; `data` is merged into the stored data. With `fence` (the
        running engine's lease), LeaseLost when another engine took the transfer over."""
        with self._write() as c:
            self._check_fence(c, fence)
            return self._update(c, self._transfer(c, transfer_id), state=state, bytes=bytes,
                                checksum=checksum, error=error, data=data)

    def _update(self, c: sqlite3.Connection, cur: TransferRecord, *, state: str | None = None,
                bytes: int | None = None, checksum: str | None = None,
                error: str | None = None, data: dict[str, Any] | None = None
                ) -> TransferRecord:
        merged = {**cur.data, **(data or {})}
        c.execute("UPDATE transfers SET state = COALESCE(?, state), bytes = COALESCE(?, bytes),"
                  " checksum = COALESCE(?, checksum), error = COALESCE(?, error), data = ?,"
                  " updated_at = ? WHERE id = ?",
                  (state, bytes, checksum, redact(error), to_js(merged), to_ts(utcnow()),
                   cur.id))
        return self._transfer(c, cur.id)

    def set_transfer_state(self, transfer_id: str, state: str, *, error: str | None = None,
                           fence: leases.Fence | None = None, bytes: int | None = None,
                           checksum: str | None = None, data: dict[str, Any] | None = None
                           ) -> tuple[TransferRecord, bool]:
        """The running engine's state write (with `update_transfer`'s fields), in one
        transaction with the check that a user's cancel was not accepted before it: a cancel
        accepted (`ask_transfer_cancel`) stands, and no state is written over it (False)."""
        with self._write() as c:
            self._check_fence(c, fence)
            cur = self._transfer(c, transfer_id)
            if _cancel_stands(cur):
                return cur, False
            return self._update(c, cur, state=state, error=error, bytes=bytes, checksum=checksum,
                                data=data), True

    def ask_transfer_cancel(self, transfer_id: str) -> tuple[TransferRecord, bool]:
        """A user's cancel, decided in one transaction against the copy's own end: accepted
        (True; the record is CANCELLED and marked `cancel_requested`, so its copy may not put
        its result in place) while the transfer is unfinished and its copy has not begun
        putting its result in place (`commit_transfer`); else refused (False), the record
        as it is. A transfer cancelled before is accepted again, unchanged."""
        with self._write() as c:
            cur = self._transfer(c, transfer_id)
            if cur.state == "CANCELLED":
                return cur, True
            if cur.state in TRANSFER_ENDS or cur.data.get("finishing"):
                return cur, False
            c.execute("UPDATE transfers SET state = 'CANCELLED', error = ?, data = ?,"
                      " updated_at = ? WHERE id = ?",
                      (CANCELLED_BY_USER, to_js({**cur.data, "cancel_requested": True}),
                       to_ts(utcnow()), transfer_id))
            return self._transfer(c, transfer_id), True

    def commit_transfer(self, transfer_id: str, fence: leases.Fence | None) -> bool:
        """For the engine copying it, just before its result is put in place: False when a
        user's cancel was accepted first (the copy stops, its result left aside), else the
        record is marked `finishing` (a later cancel is refused) and True. LeaseLost when
        `fence` is stale."""
        with self._write() as c:
            self._check_fence(c, fence)
            cur = self._transfer(c, transfer_id)
            if cur.state == "CANCELLED" or cur.data.get("cancel_requested"):
                return False
            if not cur.data.get("finishing"):
                c.execute("UPDATE transfers SET data = ? WHERE id = ?",
                          (to_js({**cur.data, "finishing": True}), transfer_id))
            return True

    def transfer_stop_asked(self, transfer_id: str, fence: leases.Fence | None) -> bool:
        """For the engine copying it, in one read: LeaseLost when `fence` is stale, else
        whether a user's cancel was recorded meanwhile (through another engine)."""
        with self._reader() as c:
            self._check_fence(c, fence)
            cur = self._transfer(c, transfer_id)
            return cur.state == "CANCELLED" or bool(cur.data.get("cancel_requested"))

    def get_transfer(self, transfer_id: str) -> TransferRecord:
        with self._reader() as c:
            return self._transfer(c, transfer_id)

    def transfer_by_submission_id(self, submission_id: str) -> TransferRecord | None:
        rows = self._read("SELECT * FROM transfers WHERE submission_id = ?", (submission_id,))
        return row_to_transfer(rows[0]) if rows else None

    def list_transfers(self, states: Iterable[str] | None = None, limit: int | None = 50,
                       offset: int = 0, kinds: Iterable[str] | None = None
                       ) -> list[TransferRecord]:
        """Newest first; without `kinds`, every kind but "stage" (a staged job's own record)."""
        conds, args = [], []
        for col, values in (("state", states), ("kind", kinds)):
            if values is not None:
                vals = list(values)
                conds.append(f"{col} IN ({','.join('?' * len(vals))})" if vals else "0")
                args += vals
        if kinds is None:
            conds.append("kind != 'stage'")
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        sql = (f"SELECT * FROM transfers{where} ORDER BY created_at DESC, rowid DESC"
               " LIMIT ? OFFSET ?")
        rows = self._read(sql, [*args, -1 if limit is None else limit, offset])
        return [row_to_transfer(r) for r in rows]

    def newest_transfers(self, window: NewestTransfers) -> list[TransferRecord]:
        """`list_transfers(limit=window.limit)`'s answer, from the rows changed since the
        window was last read (the transfers table's clock, schema v12): the same list object
        while none of its transfers changed. A row deleted, or a member that moved back in
        time or left a full window, reads the window whole again."""
        with self._lock:
            clock, deleted = self._read("SELECT n, deleted FROM transfers_clock")[0]
            if window.source is not self:
                window.source, window.clock = self, -1
            elif clock == window.clock:
                return window.transfers
            if clock < window.clock or deleted != window.deleted \
                    or not self._merge_transfers(window):
                rows = self._read("SELECT *, rowid AS row_order FROM transfers WHERE kind !="
                                  " 'stage' ORDER BY created_at DESC, rowid DESC LIMIT ?",
                                  (window.limit,))
                window.rows_read += len(rows)
                window.full_reads += 1
                window.full = len(rows) >= window.limit
                _keep(window, {r["row_order"]: ((r["created_at"], r["row_order"]),
                                                row_to_transfer(r)) for r in rows})
            window.clock, window.deleted = clock, deleted
        return window.transfers

    def _merge_transfers(self, window: NewestTransfers) -> bool:
        """Bring the rows changed since `window.clock` into it; False where that cannot tell
        the window (a full window lost a member: a transfer beyond it may come in)."""
        if window.clock < 0:
            return False
        rows = self._read("SELECT *, rowid AS row_order FROM transfers WHERE changed > ?",
                          (window.clock,))
        window.rows_read += len(rows)
        members = dict(window.members)
        lost = touched = False
        for r in rows:
            key = (r["created_at"], r["row_order"])
            was = members.pop(r["row_order"], None)
            if r["kind"] != "stage":
                members[r["row_order"]] = (key, row_to_transfer(r))
                lost, touched = lost or (was is not None and was[0] != key), True
            else:
                lost, touched = lost or was is not None, touched or was is not None
        if lost and window.full:
            return False
        if touched:  # else the answer stays the same object (readers key on it)
            _keep(window, members)
        return True

    def claim_transfer(self, transfer_id: str, engine: str) -> TransferRecord | None:
        """Make `engine` the one running this transfer; None if another live engine is. A
        new owner gets the next lease generation (`data.lease`: its writes' fence)."""
        with self._write() as c:
            cur = self._transfer(c, transfer_id)
            owner = cur.data.get("owner")
            if owner not in (None, engine) and leases.alive(owner, self.beats):
                return None
            new = leases.claimed(cur.data, engine)
            if new is not cur.data:
                c.execute("UPDATE transfers SET data = ? WHERE id = ?", (to_js(new), transfer_id))
            return self._transfer(c, transfer_id)

    def release_transfer(self, transfer_id: str, engine: str) -> None:
        """`engine` stops running it (closing): another engine's recovery may take it."""
        with self._write() as c:
            cur = self._transfer(c, transfer_id)
            if cur.data.get("owner") == engine:
                c.execute("UPDATE transfers SET data = ? WHERE id = ?",
                          (to_js(leases.handed_back(cur.data)), transfer_id))


def _keep(window: NewestTransfers,
          members: dict[int, tuple[tuple[str, int], TransferRecord]]) -> None:
    """Keep the newest `limit` of `members` (a full window stays full: a transfer pushed out
    was older than every member)."""
    newest = sorted(members.items(), key=lambda m: m[1][0], reverse=True)
    window.full = window.full or len(newest) >= window.limit
    del newest[window.limit:]
    window.members = dict(newest)
    window.transfers = [t for _, (_, t) in newest]
