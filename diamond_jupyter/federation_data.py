"""Data movement and staging on the Federation (Globus, SFTP): the faces' entry points."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import leases
from .model import BadInput, JobSpec
from .transports import CommandFailed

if TYPE_CHECKING:
    from .sites import Site
    from .store import Store


class DataMixin:
    store: Store
    sites: dict[str, Site]
    _mover: Any
    # Set by the Jupyter server: paths on the server's own disk (transfers, staging) must
    # resolve inside this directory. None (the CLI, a kernel on its own): not confined.
    server_root: Path | None = None
    _engine_id: str | None = None

    @property
    def mover(self):
        """The transfer manager (Globus and SFTP), created on first use."""
        if self._mover is None:
            from .transfer import TransferManager

            self._mover = TransferManager(self)
        return self._mover

    @property
    def engine_id(self) -> str:
        """This engine's claim on the work it runs (see `leases`), made on first use."""
        if self._engine_id is None:
            self._engine_id = leases.new_engine_id()
            leases.register(self._engine_id)
            leases.beat(self.store.beats, self._engine_id)
        return self._engine_id

    async def _heartbeat(self) -> None:
        leases.sweep(self.store.beats)
        while True:
            leases.beat(self.store.beats, self.engine_id)
            await asyncio.sleep(leases.BEAT_S)

    async def _resume_data(self) -> None:
        """After a restart: resume the transfers and stagings no live engine is running."""
        active = ["PENDING", "ACTIVE"]
        if not (self.store.list_transfers(states=active, limit=1)
                or self.store.list_transfers(states=active, limit=1, kinds=["stage"])):
            return
        await self.mover.resume_pending()
        from .transfer.staging import resume_staged

        await resume_staged(self)  # type: ignore[arg-type]

    async def _close_data(self) -> None:
        """Stop moving data; this engine's unfinished work stays claimable by the next one."""
        if self._mover is not None:
            await self._mover.close()
        if self._engine_id is not None:
            leases.unregister(self._engine_id)
            leases.stop_beating(self.store.beats, self._engine_id)
            self._engine_id = None

    async def transfer(self, src: str, dst: str, via: str | None = None, *,
                       recursive: bool = False, wait: bool = True,
                       transfer_id: str | None = None):
        """Copy "SITE:PATH" or a server path to another; via "sftp", "globus" or None (Globus
        when both sites have a collection and a login exists, else SFTP). A `transfer_id`
        already known: that transfer (done, or resumed). -> TransferRecord"""
        return await self.mover.transfer(src, dst, via, recursive=recursive, wait=wait,
                                         transfer_id=transfer_id)

    def transfer_status(self, transfer_id: str):
        return self.mover.status(transfer_id)

    async def cancel_transfer(self, transfer_id: str):
        return await self.mover.cancel(transfer_id)

    def globus_login(self) -> str:
        """The Globus authorize URL to show the user; finish with `globus_finish_login`."""
        return self.mover.auth.start_login()

    def globus_finish_login(self, code: str) -> dict[str, Any]:
        return self.mover.auth.finish_login(code)

    def _check_server_paths(self, spec: JobSpec) -> None:
        """BadInput before anything is submitted when a stage entry names a server path
        outside the server's root directory."""
        if self.server_root is None or not (spec.stage_in or spec.stage_out):
            return
        from .transfer import confine, parse_location

        on_server = [e.source for e in spec.stage_in] + [e.destination for e in spec.stage_out
                                                         if e.destination]
        for text in on_server:  # a site-less stage-in destination is on the job's site
            confine(parse_location(text, self.sites), self.server_root)

    def _stage_begin(self, site: str, token: str, spec: JobSpec, hold: bool):
        if not (spec.stage_in or spec.stage_out):
            return None
        from .transfer.staging import StagedJob

        return StagedJob(self, self.mover, site, token, spec, hold)

    async def _submit_staged(self, target: Site, spec: JobSpec, token: str, hold: bool,
                             staged: Any, secret: str = ""):
        """Submit (held while a stage-in runs); a failed submit stops the staging."""
        try:
            return await target.submit(spec, token, hold=staged.hold if staged else hold,
                                       secret=secret)
        except BaseException as e:
            if staged is not None:  # refused: final; else the job may exist (recovery looks)
                staged.abort(final=isinstance(e, (BadInput, CommandFailed)))
            raise
