"""Data movement for the Federation: one `transfer(src, dst, via)` over Globus or SFTP.

Locations are "SITE:PATH" (a path on that site; relative to the login home) or a plain path
on the server's own filesystem. Every transfer is a record in the store (kind, state, bytes,
checksum) and a stream of events: `transfer.state` (ACTIVE, SUCCEEDED, FAILED, CANCELLED),
`transfer.progress` (bytes done / total) and `transfer.retry` (a lost connection: the next
try, which resumes the copy, and when).

A lost connection is retried with resume and exponential backoff (the sites file's
`transfers:` policy); the transfer fails only when the tries are spent, saying how many were
made and the last error. The engine running a transfer claims its record (see `leases`);
when that engine stops, the next engine to start resumes every unfinished transfer. Its
writes (state, progress, a Globus task id) carry the lease generation of its claim, and a
copy checks it at each progress report and before each try: an engine that stalled past
the takeover stops copying when it wakes and drops the transfer (`lease.lost`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import paramiko

from ..aio import within
from ..leases import Fence, LeaseLost, LeaseWatch, fence_of
from ..log_lines import one_line_logger
from ..model import BadInput, DiamondError, Event, SiteError, check_text
from ..store import TransferRecord
from ..transports import CommandFailed
from ..transports.ssh_auth import AuthError, HostKeyError
from .globus import TERMINAL, GlobusMover, GlobusUnreachable
from .globus_auth import GlobusAuth
from .sftp import (
    Cancelled,
    ChecksumMismatch,
    Interrupted,
    LocalSide,
    PartRefused,
    Replaceable,
    TreeTooLarge,
    destination_refused,
    open_side,
    sftp_copy,
)

if TYPE_CHECKING:
    from ..config import TransferPolicy
    from ..journal import Journal
    from ..leases import EngineLease
    from ..sites import Sites

__all__ = ["Location", "TransferManager", "confine", "parse_location", "retryable"]

log = one_line_logger(__name__)
DONE = {"SUCCEEDED", "FAILED", "CANCELLED"}
_SITE_PREFIX = re.compile(r"^([A-Za-z0-9_.-]+):(.*)$", re.S)
PRECHECK_S = 15.0  # the most a transfer waits for a site to say its destination is usable
_FINAL_OS = (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)


def retryable(e: BaseException) -> bool:
    """A lost, dropped or refused connection: worth another try, which resumes the copy. Not
    bad input, a refused login or host key, a failed command, a checksum mismatch, a byte
    limit or a cancel, nor a missing file or a permission error."""
    if isinstance(e, (Cancelled, Interrupted, ChecksumMismatch, PartRefused, TreeTooLarge,
                      BadInput, HostKeyError, AuthError, CommandFailed, *_FINAL_OS)):
        return False
    return isinstance(e, (SiteError, OSError, EOFError, paramiko.SSHException))


def _too_late(rec: TransferRecord) -> BadInput:
    """A user's cancel of a transfer whose copy had already finished, refused."""
    if rec.state in DONE:
        why = f": {rec.error}" if rec.error and rec.state == "FAILED" else ""
        return BadInput(f"transfer {rec.id} is not cancelled: it had already ended "
                        f"{rec.state}{why} ({rec.src} -> {rec.dst})")
    return BadInput(f"transfer {rec.id} is not cancelled: its copy had already finished (every "
                    f"byte arrived and was checked) and is being put in place at {rec.dst}")


def _cancel_asked(rec: TransferRecord) -> bool:
    """A user's cancel of `rec` was accepted (its record says CANCELLED for good)."""
    return rec.state == "CANCELLED" and bool(rec.data.get("cancel_requested"))


class _CopyStop:
    """How one run of an SFTP copy is stopped, kept by its manager only while it runs:
    `reader` stops the copying thread (a failed try sets it too); `asked` once a user's cancel
    reached the run (here, or through another engine); `backoff` ends its wait before the
    next try. The copying thread writes only here, so one that outlives its run keeps
    nothing in the manager."""

    def __init__(self) -> None:
        self.reader = threading.Event()
        self.asked = False
        self.backoff = asyncio.Event()

    def ask(self) -> None:
        self.asked = True
        self.reader.set()


def _globus_cancelled(task: dict[str, Any]) -> bool:
    """A FAILED Globus task that was cancelled (by its owner or an administrator)."""
    return bool(task.get("canceled_by_admin")) or "cancel" in str(task.get("nice_status",
                                                                         "")).lower()


def _why(e: BaseException) -> str:
    return str(e) or type(e).__name__


def _anchored(loc: Location) -> Location:
    """A relative path on the server made absolute (against the current directory)."""
    if loc.site is None and not os.path.isabs(os.path.expanduser(loc.path)):
        return Location(None, os.path.abspath(loc.path) + ("/" if loc.path.endswith("/")
                                                          else ""))
    return loc


async def _stop_copy(copy: asyncio.Future, cancel: threading.Event,
                     grace_s: float = 10.0) -> None:
    """Stop a copy whose engine is closing, and wait (boundedly) for its threads to let go of
    the partial file, so the engine that resumes it is its only writer."""
    cancel.set()
    done, _ = await asyncio.wait([copy], timeout=grace_s)
    if not done:
        copy.cancel()
    with contextlib.suppress(BaseException):
        copy.result() if done else None


def _check_local_source(path: str, recursive: bool,
                        said_as: Mapping[str, str] | None = None) -> None:
    """BadInput before anything is recorded for a source on this machine that cannot be
    copied (it was a FAILED transfer, exit 1, as if a site had failed); a directory's names
    the way to copy it as the face's user says it (`said_as["recursive"]`, `--recursive` on
    the command line), else as the JSON field of a REST body or a tool call."""
    p = Path(path)
    if not p.exists():
        raise BadInput(f"src: no such file or directory on this machine: {path}")
    if p.is_dir() and not recursive:
        way = (said_as or {}).get("recursive", "recursive: true")
        raise BadInput(f"src: {path} is a directory (copy it with {way})")


@dataclass(frozen=True)
class Location:
    site: str | None  # None: the server's own filesystem
    path: str

    def __str__(self) -> str:
        return f"{self.site}:{self.path}" if self.site else self.path


def parse_location(text: str, sites: Any, default_site: str | None = None, *,
                   what: str = "location") -> Location:
    """"SITE:PATH" for a known site (or HOST:PATH, HOST the SSH host of one); else a plain
    path on `default_site` (None: the server). BadInput naming `what` (e.g. "src") for a
    control character: a NUL cannot reach a file system, and a newline or an escape in a
    path is a trick, not a file the user meant."""
    check_text(what, text)
    m = _SITE_PREFIX.match(text)
    by_host = getattr(sites, "site_of_host", None)
    if m and m.group(1) not in sites and by_host is not None \
            and (site := by_host(m.group(1))) is not None:  # a machine of a site's (HOST:PATH)
        return parse_location(f"{site}:{m.group(2)}", sites, default_site, what=what)
    if m and m.group(1) in sites:
        if not m.group(2):
            raise BadInput(f"{text!r}: no path after the site name")
        return Location(m.group(1), m.group(2))
    if m and "/" not in m.group(1) and not text.startswith(("./", "/")):
        raise BadInput(f"unknown site {m.group(1)!r} in {text!r} (known: {', '.join(sites)})")
    head, colon, _ = text.partition(":")
    if colon and head and "/" not in head and not text.startswith(("./", "/", "~")):
        # a site's name spelt with a look-alike letter (Cyrillic а, a full-width a) or a
        # blank: as a path it named a directory `аlpha:` on this server, not the site
        raise BadInput(f"unknown site {ascii(head)} in {ascii(text)} (site names are ASCII "
                       f"letters, digits, _ . -; known: {', '.join(sites)}); a local file "
                       "whose name holds a colon: write ./ before it")
    if not text:
        raise BadInput("empty path")
    return Location(default_site, text)


def confine(loc: Location, root: Path | None) -> Location:
    """A server-side location, made absolute inside `root` (the Jupyter server's root
    directory); BadInput when it resolves (`~`, `..`, links followed) outside it. Locations
    on a site, and every location when there is no root to keep to, are returned as they are."""
    if loc.site is not None or root is None:
        return loc
    root = root.expanduser().resolve()
    p = Path(loc.path).expanduser()
    target = (p if p.is_absolute() else root / p).resolve()
    if target != root and root not in target.parents:
        raise BadInput(f"{loc.path!r} is outside the server's root directory ({root}); "
                       "server paths must be inside it")
    return Location(None, str(target) + ("/" if loc.path.endswith("/") else ""))


class TransferManager:
    """Runs and follows transfers for one engine; the faces reach it through the facade.
    `server_root`: server paths must resolve inside it (None: not confined)."""

    def __init__(self, journal: Journal, sites: Sites, lease: EngineLease,
                 policy: TransferPolicy, *, server_root: Path | None = None,
                 auth: GlobusAuth | None = None, globus: GlobusMover | None = None,
                 globus_poll_s: float = 2.0) -> None:
        self.journal, self.store, self.sites, self.lease = journal, journal.store, sites, lease
        self.policy = policy  # the sites file's retry policy
        self.server_root = server_root
        self.auth = auth or GlobusAuth()
        self._globus = globus
        self.globus_poll_s = globus_poll_s
        self._stops: dict[str, _CopyStop] = {}  # each SFTP copy running here, until its end
        self._tasks: dict[str, asyncio.Task] = {}
        self._fences: dict[str, Fence] = {}  # the lease of each transfer this engine runs

    @property
    def globus(self) -> GlobusMover:
        if self._globus is None:
            p = self.policy
            self._globus = GlobusMover(self.auth, retries=p.attempts, retry_delay_s=p.backoff_s)
        return self._globus

    def adopt(self, key: str, task: asyncio.Task) -> None:
        """Run `task` (a staging) with the transfers: `close` stops it with the engine."""
        self._tasks[key] = task
        task.add_done_callback(lambda _t: self._tasks.pop(key, None))

    def running(self, key: str) -> bool:
        """Whether this engine runs the transfer or staging `key` now."""
        return key in self._tasks

    def _backoff(self) -> Callable[[], float]:
        """Successive waits between tries: backoff_s, doubling, up to backoff_max_s."""
        p, n = self.policy, [0]

        def next_wait() -> float:
            n[0] += 1
            return min(p.backoff_s * 2 ** (n[0] - 1), p.backoff_max_s)
        return next_wait

    # -- events ---------------------------------------------------------------------------
    def emit(self, kind: str, data: dict[str, Any], job_id: str | None = None,
             site: str | None = None, fence: Fence | None = None) -> Event:
        """Store and publish an event; with `fence`, only while that lease holds."""
        if job_id:
            try:  # a provisional "SITE:pending-TOKEN" id becomes the bound one
                job_id = self.journal.job(job_id).id
            except DiamondError:
                pass
        return self.journal.append(Event(kind=kind, job_id=job_id, site=site, data=data),
                                   fence=fence)

    def hold(self, rec: TransferRecord) -> Fence:
        """This engine runs `rec`, just claimed: its writes carry this lease."""
        fence = self._fences[rec.id] = fence_of("transfer", rec.id, rec.data)
        return fence

    def fence(self, transfer_id: str) -> Fence | None:
        return self._fences.get(transfer_id)

    def let_go(self, transfer_id: str, fence: Fence | None) -> None:
        """The run of transfer (or staging) `transfer_id` under `fence` has ended here: its
        lease goes (a newer claim's stays)."""
        if fence is not None and self._fences.get(transfer_id) is fence:
            del self._fences[transfer_id]

    def lost(self, lost: LeaseLost, job_id: str | None = None) -> None:
        """Another engine took transfer (or staging) `lost.fence.item` over while this one
        stalled: said once, with a `lease.lost` event (the caller stops driving it)."""
        tid = lost.fence.item
        if self._fences.get(tid) != lost.fence:
            return  # said already, or claimed anew since
        self._fences.pop(tid, None)
        log.warning("transfer %s: %s", tid, lost)
        with contextlib.suppress(DiamondError):
            self.emit("lease.lost", {**lost.event_data(self.lease.held_id), "transfer_id": tid},
                      job_id)

    def _state(self, rec: TransferRecord, state: str, *, error: str | None = None,
               **kw: Any) -> TransferRecord:
        """The running engine's state write and its event; a user's cancel accepted before
        it stands (the CANCELLED record is returned, nothing written or said)."""
        rec, written = self.store.set_transfer_state(rec.id, state, error=error, **kw,
                                                     fence=self._fences.get(rec.id))
        if written:
            self._said(rec)
        return rec

    def _said(self, rec: TransferRecord) -> None:
        """The `transfer.state` event of `rec` as stored."""
        data = {"transfer_id": rec.id, "kind": rec.kind, "state": rec.state, "src": rec.src,
                "dst": rec.dst, "bytes": rec.bytes, "checksum": rec.checksum}
        if rec.error and rec.state in ("FAILED", "CANCELLED"):
            data["error"] = rec.error
        self.emit("transfer.state", data, rec.data.get("job_id"))

    # -- the one entry point --------------------------------------------------------------
    def choose(self, src: Location, dst: Location, via: str | None) -> str:
        if via not in (None, "auto", "sftp", "globus"):
            raise BadInput(f"via {via!r}: expected sftp or globus, or none (Globus when both "
                           "sites have a collection, else SFTP)")  # the CLI's --via has choices
        both = bool(src.site and dst.site
                    and self.sites.require(src.site).cfg.globus_collection
                    and self.sites.require(dst.site).cfg.globus_collection)
        if via == "globus":
            if not both:
                raise BadInput("Globus needs a globus_collection on both sites "
                               f"({src} -> {dst}); use --via sftp")
            return "globus"
        if via == "sftp":
            return "sftp"
        return "globus" if both and self.auth.logged_in else "sftp"

    async def transfer(self, src: str | Location, dst: str | Location, via: str | None = None,
                       *, recursive: bool = False, wait: bool = True, job_id: str | None = None,
                       transfer_id: str | None = None, limit_bytes: int | None = None,
                       overwrite: bool = False, skip_hidden: bool = False,
                       said_as: Mapping[str, str] | None = None) -> TransferRecord:
        s = src if isinstance(src, Location) else parse_location(src, self.sites, what="src")
        d = dst if isinstance(dst, Location) else parse_location(dst, self.sites, what="dst")
        s, d = confine(s, self.server_root), confine(d, self.server_root)
        s, d = _anchored(s), _anchored(d)  # a resume after a restart finds the same files
        for loc in (s, d):
            if loc.site:
                self.sites.require(loc.site)
        if s.site is None and transfer_id is None:
            _check_local_source(s.path, recursive, said_as)
        kind = self.choose(s, d, via)
        if kind == "sftp" and transfer_id is None:
            self._check_local_destination(s, d, recursive)
            await self._check_site_destination(d)
        base = {"job_id": job_id, "recursive": recursive, "overwrite": overwrite}
        if skip_hidden:  # a tool call's copy: kept with the record, so a resume does the same
            base["skip_hidden"] = True
        if kind == "sftp":
            rec = self.store.record_transfer("sftp", str(s), str(d), transfer_id=transfer_id,
                                                 data={**base, "src_loc": [s.site, s.path],
                                                       "dst_loc": [d.site, d.path]})
        else:
            rec = await self._globus_record(s, d, recursive, transfer_id, base)
        if rec.state == "SUCCEEDED" or _cancel_asked(rec):
            return rec  # a staging retry: already there, or cancelled by the user
        task = self._tasks.get(rec.id)  # already running here (resumed at start): join it
        if task is None:
            task = self._launch(rec, lambda r: self._runner(r, s, d, limit_bytes))
        if not wait:
            return self.store.get_transfer(rec.id)
        return await asyncio.shield(task)

    def _runner(self, rec: TransferRecord, s: Location | None = None,
                d: Location | None = None, limit: int | None = None
                ) -> Awaitable[TransferRecord]:
        if rec.kind == "globus":
            return self._run_globus(rec)
        if s is None or d is None:
            s, d = self._locations(rec)
        return self._run_sftp(rec, s, d, bool(rec.data.get("recursive")), limit)

    def _locations(self, rec: TransferRecord) -> tuple[Location, Location]:
        def loc(key: str, text: str) -> Location:
            stored = rec.data.get(key)
            if isinstance(stored, list) and len(stored) == 2:
                return Location(stored[0], stored[1])
            return parse_location(text, self.sites)
        return loc("src_loc", rec.src), loc("dst_loc", rec.dst)

    def _launch(self, rec: TransferRecord,
                run: Callable[[TransferRecord], Awaitable[TransferRecord]]) -> asyncio.Task:
        """Run the transfer here if no other live engine runs it, else follow that one."""
        claimed = self.store.claim_transfer(rec.id, self.lease.id)
        coro = self._driven(claimed, run) if claimed is not None \
            else self._after_other(rec, run)
        task = asyncio.ensure_future(coro)
        self._tasks[rec.id] = task
        task.add_done_callback(lambda _t, i=rec.id: self._tasks.pop(i, None))
        # a lost lease is said by its event; nobody may wait on the task (wait=False)
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        return task

    async def _after_other(self, rec: TransferRecord,
                           run: Callable[[TransferRecord], Awaitable[TransferRecord]]
                           ) -> TransferRecord:
        """Another engine (a CLI, a kernel) runs this transfer: wait for its end, and take it
        over if that engine goes away first."""
        delay = 0.5
        while True:
            await asyncio.sleep(delay)  # another process: its events reach us via the store
            delay = min(delay * 2, 5.0)
            cur = self.status(rec.id)
            if cur.state in DONE:
                return cur
            claimed = self.store.claim_transfer(rec.id, self.lease.id)
            if claimed is not None:
                return await self._driven(claimed, run)

    async def _driven(self, claimed: TransferRecord,
                      run: Callable[[TransferRecord], Awaitable[TransferRecord]]
                      ) -> TransferRecord:
        """Run a transfer just claimed under its lease; a LeaseLost (another engine took it
        over while this one stalled) is said, and raised to whoever waits on it here. Its
        lease is let go of at the run's end (kept no longer than the run)."""
        fence = self.hold(claimed)
        try:
            return await run(claimed)
        except LeaseLost as lost:
            self.lost(lost, claimed.data.get("job_id"))
            raise
        finally:
            self.let_go(claimed.id, fence)

    def status(self, transfer_id: str) -> TransferRecord:
        return self.store.get_transfer(transfer_id)

    async def wait(self, transfer_id: str) -> TransferRecord:
        task = self._tasks.get(transfer_id)
        if task is not None:
            return await asyncio.shield(task)
        return self.status(transfer_id)

    async def cancel(self, transfer_id: str) -> TransferRecord:
        """A user's cancel, decided in the store against the copy's own end: accepted (the
        record CANCELLED at once, whichever engine copies it; the copy stops and leaves its
        partial file, never put in place) until the copy has every byte and begins putting
        them in place; refused after that with BadInput saying how the transfer ended (or
        that it is finishing). A transfer cancelled before is returned as it is."""
        rec = self.status(transfer_id)
        if rec.state in DONE:
            if rec.state == "CANCELLED":
                return rec
            raise _too_late(rec)
        if rec.kind == "globus" and rec.data.get("task_id"):
            await self._cancel_globus(rec, rec.data["task_id"])
        cur, accepted = self.store.ask_transfer_cancel(transfer_id)
        task = self._tasks.get(transfer_id)
        if not accepted:
            if task is not None and rec.kind == "sftp":  # finishing here: its end, then say it
                with contextlib.suppress(LeaseLost):
                    cur = await asyncio.shield(task)
            if cur.state == "CANCELLED":
                return cur
            raise _too_late(cur)
        if rec.state != "CANCELLED":
            self._said(cur)
        if rec.kind == "globus" and not rec.data.get("task_id") and cur.data.get("task_id"):
            with contextlib.suppress(DiamondError):  # submitted meanwhile: Globus is told too
                await asyncio.to_thread(self.globus.cancel, cur.data["task_id"])
        if (stop := self._stops.get(transfer_id)) is not None:  # copied here: it stops now
            stop.ask()
            stop.backoff.set()
        if task is not None and rec.kind == "sftp":
            # wait for the copy here to let go of its partial file (the record is written)
            with contextlib.suppress(LeaseLost, DiamondError):
                await asyncio.shield(task)
        elif task is not None and rec.data.get("task_id"):
            task.cancel()  # its follower (a submit under way sees the cancel and tells Globus)
        # a copy another engine runs sees the cancel at its next lease check and stops
        return self.status(transfer_id)

    async def _wait_unless_cancelled(self, transfer_id: str, seconds: float) -> None:
        """Wait `seconds` (a copy's backoff), ended at once by a user's cancel of the transfer
        (which waits for the copy to stop): the wait is on the cancel's event, so it wakes
        for nothing else."""
        stop = self._stops.get(transfer_id)
        if stop is not None and stop.asked:  # seen by the copy, through another engine
            return
        cancelled = stop.backoff if stop is not None else asyncio.Event()
        with contextlib.suppress(asyncio.TimeoutError):
            await within(cancelled.wait(), seconds)

    async def _cancel_globus(self, rec: TransferRecord, task_id: str) -> None:
        """Ask Globus to cancel the task, then how it stands: BadInput when it had already
        ended (a cancel that came too late), which its follower records."""
        refused: SiteError | None = None
        try:
            await asyncio.to_thread(self.globus.cancel, task_id)
        except SiteError as e:  # perhaps because the task had ended: asked below
            refused = e
        try:
            task = await asyncio.to_thread(self.globus.task, task_id)
        except DiamondError:
            if refused is not None:
                raise refused from None
            return  # Globus took the cancel: the record says CANCELLED
        status = task.get("status")
        if status == "SUCCEEDED" or (status == "FAILED" and not _globus_cancelled(task)):
            raise BadInput(f"transfer {rec.id} is not cancelled: its Globus task {task_id} "
                           f"had already ended {status} when the cancel reached Globus "
                           "(its record follows Globus)")
        if refused is not None:
            raise refused

    async def close(self) -> None:
        """Stop every transfer and staging of this engine; their records stay unfinished and
        unclaimed, so the next engine to start resumes them."""
        tasks = list(self._tasks.values())
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        me = self.lease.held_id
        if me is None:
            return
        with contextlib.suppress(DiamondError):  # hand back what this engine was running
            for kinds in (None, ["stage"]):
                for rec in self.store.list_transfers(states=["PENDING", "ACTIVE"], limit=None,
                                                     kinds=kinds):
                    if rec.data.get("owner") == me:
                        self.store.release_transfer(rec.id, me)

    # -- SFTP -----------------------------------------------------------------------------
    def _local_side(self, loc: Location) -> LocalSide | None:
        """The side of a copy at `loc` when it is on this machine's disk (the server's, or
        a site with a local transport), else None."""
        if loc.site is None:
            return LocalSide()
        t = self._transport(loc)
        return LocalSide(t.workdir, t.name) if getattr(t, "kind", "") == "local" else None

    def _check_local_destination(self, s: Location, d: Location, recursive: bool) -> None:
        """BadInput before anything is recorded for a destination on this machine no copy
        can be put at (a device, a FIFO, a path under a file): it was found by the copy, a
        FAILED transfer (exit 1) as if a site had failed."""
        dst = self._local_side(d)
        if dst is None:
            return
        src = self._local_side(s) if recursive else None
        src_is_dir = None
        if src is not None:
            st = src.stat(src.abspath(s.path))
            src_is_dir = st is not None and st[1]
        refused = destination_refused(dst, d.path, src_is_dir)
        if refused is not None:
            raise BadInput(refused)

    async def _check_site_destination(self, d: Location) -> None:
        """BadInput before anything is recorded for a destination on an SSH site that no
        copy can be put at, as `_check_local_destination` (a path under a file, a device, a
        file where a directory is needed), asked over SFTP. A site that does not answer
        within PRECHECK_S is not asked: the copy, with its retries, finds out."""
        if d.site is None or self._local_side(d) is not None:
            return
        t = self._transport(d)
        conn = getattr(t, "_conn", None)
        if not (conn is not None and conn.alive()) and getattr(t, "interactive_handler", None):
            return  # its login may ask the user for a code: not for a check
        side = None
        try:
            side = await within(open_side(t), PRECHECK_S)
            refused = await within(asyncio.to_thread(destination_refused, side, d.path, None),
                                   PRECHECK_S)
        except Exception:  # noqa: BLE001 - unreachable, refused, not allowed to look: the
            return  # copy, with its retries, finds out and says why
        finally:
            if side is not None:
                with contextlib.suppress(Exception):
                    await side.close()
        if refused is not None:
            raise BadInput(refused)

    def _transport(self, loc: Location) -> Any:
        return self.sites.require(loc.site).file_transport if loc.site else None

    async def _run_sftp(self, rec: TransferRecord, s: Location, d: Location, recursive: bool,
                        limit: int | None) -> TransferRecord:
        stop = self._stops[rec.id] = _CopyStop()
        cancel = stop.reader
        loop = asyncio.get_running_loop()
        job_id = rec.data.get("job_id")
        last = [-1]
        fence = self._fences.get(rec.id)
        lost: list[LeaseLost] = []  # set when the copy finds its lease stale
        if rec.state != "ACTIVE":
            rec = self._state(rec, "ACTIVE")
        if _cancel_asked(rec):
            return rec
        # the lease, checked inside the copy loop (each block reports here): a stalled engine
        # that woke stops within a few MiB or a second, before the block after the check
        watch = LeaseWatch(lambda: self.store.transfer_stop_asked(rec.id, fence))

        def progress(done: int, total: int) -> None:  # from the copying thread, each block
            report = done - last[0] >= max(total // 20, 1 << 20) or (done == total != last[0])
            try:
                if watch(done, force=report):  # a user's cancel, through another engine
                    stop.ask()
                    return
            except LeaseLost as e:
                lost.append(e)
                cancel.set()
                return
            if report:
                last[0] = done
                loop.call_soon_threadsafe(self._progress, {
                    "transfer_id": rec.id, "kind": "sftp", "bytes_done": done,
                    "bytes_total": total}, job_id, fence)

        def commit() -> None:  # the copy has every byte, checked: decided against a cancel
            if lost:
                raise lost[0]
            if not self.store.commit_transfer(rec.id, fence):
                stop.ask()
                raise Cancelled("cancelled by request before the copy was put in place")
        t0, attempts, wait = time.monotonic(), self.policy.attempts, self._backoff()
        attempt = 0
        try:
            while True:
                attempt += 1
                if self.store.get_transfer(rec.id).data.get("finishing"):
                    # an earlier try (or engine) stopped while putting it in place: a
                    # cancel may be accepted again until this try gets there
                    self.store.update_transfer(rec.id, data={"finishing": False}, fence=fence)
                copy = asyncio.ensure_future(sftp_copy(
                    self._transport(s), s.path, self._transport(d), d.path, recursive=recursive,
                    progress=progress, cancel=cancel, limit=limit,
                    replaceable=self._replaceable(rec),
                    skip_hidden=bool(rec.data.get("skip_hidden")), commit=commit))
                try:
                    res = await asyncio.shield(copy)
                    break
                except asyncio.CancelledError:
                    await _stop_copy(copy, cancel)
                    raise
                except Exception as e:
                    if lost:
                        raise lost[0] from None
                    if not retryable(e):
                        raise
                    if attempt >= attempts:
                        return self._state(rec, "FAILED", error=(
                            f"connection lost during the copy: gave up after {attempt} "
                            f"attempts; last error: {_why(e)}"))
                    delay = wait()
                    self.emit("transfer.retry", {
                        "transfer_id": rec.id, "kind": "sftp", "attempt": attempt + 1,
                        "attempts": attempts, "error": _why(e), "in_s": delay}, job_id)
                    log.info("transfer %s: try %d of %d in %.1f s after: %s", rec.id,
                             attempt + 1, attempts, delay, _why(e))
                    await self._wait_unless_cancelled(rec.id, delay)  # backoff
                    if stop.asked:
                        raise Cancelled("cancelled by request while waiting to try again") from None
                    self.store.check_fence(fence)  # still this engine's to copy
                    if not stop.asked:
                        cancel.clear()  # set by the failed try to stop its reader
                    last[0] = -1
        except Cancelled:
            if lost:  # stopped by its stale lease, not by the user
                raise lost[0] from None
            return self._state(rec, "CANCELLED", error="cancelled by request")
        except asyncio.CancelledError:
            # the engine is closing: the record stays ACTIVE for the next engine to resume
            self.store.release_transfer(rec.id, self.lease.id)
            raise
        except LeaseLost:
            raise
        except DiamondError as e:
            return self._state(rec, "FAILED", error=str(e))
        except (OSError, EOFError, paramiko.SSHException) as e:
            return self._state(rec, "FAILED", error=f"the copy failed: {_why(e)}")
        finally:
            if self._stops.get(rec.id) is stop:
                del self._stops[rec.id]
        secs = time.monotonic() - t0
        info = {"moved": res.moved, "resumed_from": res.resumed_from, "seconds": round(secs, 3),
                "mb_per_s": round(res.moved / 1e6 / secs, 2) if secs > 0 else None,
                "attempts": attempt}
        if res.files:
            info["files"] = res.files
        if res.skipped:  # links and special files are not copied: said, never silent
            info["skipped"] = res.skipped
        return self._state(rec, "SUCCEEDED", bytes=res.bytes,
                           checksum=f"sha256:{res.checksum}" if res.checksum else None,
                           data=info)

    def _progress(self, data: dict[str, Any], job_id: str | None, fence: Fence | None) -> None:
        """A copy's progress event, written only while its lease holds."""
        with contextlib.suppress(LeaseLost):  # the copy stops at its next report
            self.emit("transfer.progress", data, job_id, fence=fence)

    def _replaceable(self, rec: TransferRecord) -> Replaceable | None:
        """What a copy into a directory may replace: with `overwrite`, anything (None); else
        only a file an earlier successful copy to the same destination wrote and nobody
        changed since (its recorded sha256), as a fetch does with a job's earlier fetch."""
        if rec.data.get("overwrite"):
            return None
        ours: set[tuple[str, str]] = set()
        for earlier in self.store.list_transfers(states=["SUCCEEDED"], limit=None,
                                                 kinds=["sftp"]):
            if earlier.dst == rec.dst and earlier.id != rec.id:
                ours.update((str(f.get("path")), str(f.get("sha256")))
                            for f in earlier.data.get("files") or [] if isinstance(f, dict))
        return lambda rel, sha: (rel, sha) in ours

    # -- Globus ---------------------------------------------------------------------------
    async def _globus_record(self, s: Location, d: Location, recursive: bool,
                             transfer_id: str | None, base: dict[str, Any]) -> TransferRecord:
        if transfer_id:  # a known record (staging retry): its stored submission id is reused
            try:
                return self.store.get_transfer(transfer_id)
            except BadInput:
                pass
        assert s.site and d.site
        desc = GlobusMover.describe(self.sites.require(s.site).cfg, s.path,
                                    self.sites.require(d.site).cfg, d.path, recursive)
        sub_id = await asyncio.to_thread(self.globus.submission_id)
        return self.store.record_transfer("globus", str(s), str(d), submission_id=sub_id,
                                              transfer_id=transfer_id, data={**base, **desc})

    async def _run_globus(self, rec: TransferRecord) -> TransferRecord:
        try:
            task_id = rec.data.get("task_id")
            if not task_id:
                label = f"diamond {rec.src} -> {rec.dst}"
                task_id = await asyncio.to_thread(self.globus.submit, rec.data,
                                                  rec.submission_id, label)
                rec = self.store.update_transfer(rec.id, data={"task_id": task_id},
                                                 fence=self._fences.get(rec.id))
            if rec.state != "ACTIVE":
                rec = self._state(rec, "ACTIVE")
            if _cancel_asked(rec):  # a user's cancel accepted before the task was known
                with contextlib.suppress(DiamondError):
                    await asyncio.to_thread(self.globus.cancel, task_id)
                return rec
            return await self._follow_globus(rec, task_id)
        except asyncio.CancelledError:
            # the engine is closing: Globus goes on; the next engine follows the same task
            self.store.release_transfer(rec.id, self.lease.id)
            raise
        except LeaseLost:
            raise
        except DiamondError as e:
            return self._state(rec, "FAILED", error=str(e))

    async def _follow_globus(self, rec: TransferRecord, task_id: str) -> TransferRecord:
        """Poll the task until it ends; losing contact with Globus is retried (backoff) and
        fails the record only when the tries are spent (the task itself goes on at Globus)."""
        delay, seen = self.globus_poll_s, -1
        job_id = rec.data.get("job_id")
        failures, wait = 0, self._backoff()
        fence = self._fences.get(rec.id)
        while True:
            self.store.check_fence(fence)  # a stalled engine that woke follows it no more
            if _cancel_asked(now := self.status(rec.id)):
                return now  # a user's cancel (Globus was told by whoever took it)
            try:
                task = await asyncio.to_thread(self.globus.task, task_id)
            except GlobusUnreachable as e:
                failures += 1
                if failures >= self.policy.attempts:
                    return self._state(rec, "FAILED", error=(
                        f"lost contact with Globus about task {task_id}: gave up after "
                        f"{failures} attempts; last error: {e}"))
                pause = wait()
                self.emit("transfer.retry", {
                    "transfer_id": rec.id, "kind": "globus", "attempt": failures + 1,
                    "attempts": self.policy.attempts, "error": str(e), "in_s": pause}, job_id)
                await asyncio.sleep(pause)  # backoff before asking Globus again
                continue
            failures, wait = 0, self._backoff()
            status, done = task.get("status", "ACTIVE"), int(task.get("bytes_transferred") or 0)
            if done != seen:
                seen, delay = done, self.globus_poll_s
                self.emit("transfer.progress", {
                    "transfer_id": rec.id, "kind": "globus", "bytes_done": done,
                    "bytes_total": task.get("bytes_expected"), "files": task.get("files"),
                    "files_done": task.get("files_transferred"), "status": status}, job_id,
                    fence=fence)
            if status == "SUCCEEDED":
                return self._state(rec, "SUCCEEDED", bytes=done,
                                   data={"verified": bool(task.get("verify_checksum", True))})
            if status == "FAILED":
                if _globus_cancelled(task):
                    return self._state(rec, "CANCELLED", error=GlobusMover.failure(task))
                return self._state(rec, "FAILED", error=GlobusMover.failure(task))
            if status == "INACTIVE":
                self.emit("transfer.inactive", {"transfer_id": rec.id,
                                                "reason": task.get("nice_status")}, job_id)
            assert status not in TERMINAL
            await asyncio.sleep(delay)  # polling cadence, not synchronisation
            delay = min(delay * 1.5, 30.0)

    async def resume_pending(self, limit: int | None = None) -> list[str]:
        """After a restart: resume every unfinished transfer no live engine runs (SFTP from
        its partial file; Globus: follow the task, or submit with the stored submission id);
        at most `limit` of them (oldest first: the rest is left for a later call)."""
        started: list[str] = []
        pending = self.store.list_transfers(states=["PENDING", "ACTIVE"], limit=None)
        for rec in reversed(pending):
            if limit is not None and len(started) >= limit:
                break
            if rec.id in self._tasks or rec.kind not in ("sftp", "globus"):
                continue
            if rec.kind == "sftp":
                try:
                    for loc in self._locations(rec):
                        if loc.site:
                            self.sites.require(loc.site)
                except BadInput as e:
                    self._state(rec, "FAILED", error=f"cannot resume: {e}")
                    continue
            if self.store.claim_transfer(rec.id, self.lease.id) is None:
                continue  # another live engine runs it
            self._launch(rec, self._runner)
            started.append(rec.id)
        return started
