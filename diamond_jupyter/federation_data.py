"""Data movement and staging on the Federation (Globus, SFTP): the faces' entry points."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .model import JobSpec

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

    @property
    def mover(self):
        """The transfer manager (Globus and SFTP), created on first use."""
        if self._mover is None:
            from .transfer import TransferManager

            self._mover = TransferManager(self)
        return self._mover

    async def transfer(self, src: str, dst: str, via: str | None = None, *,
                       recursive: bool = False, wait: bool = True):
        """Copy "SITE:PATH" or a server path to another; via "sftp", "globus" or None (Globus
        when both sites have a collection and a login exists, else SFTP). -> TransferRecord"""
        return await self.mover.transfer(src, dst, via, recursive=recursive, wait=wait)

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
        except BaseException:
            if staged is not None:
                staged.abort()
            raise
