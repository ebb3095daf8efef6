"""Data movement and staging on the Federation (Globus, SFTP): the faces' entry points."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .model import BadInput, DiamondError, Job, JobSpec
from .transfer.sftp import HIDDEN_LEFT  # what a tool call's copy says of a hidden entry
from .transports import AuthError, CommandFailed, CommandNotSent, HostKeyError

__all__ = ["HIDDEN_LEFT"]

if TYPE_CHECKING:
    from .config import FederationConfig
    from .journal import Journal
    from .leases import EngineLease
    from .sites import Site, Sites
    from .store import Store, TransferRecord
    from .transfer import TransferManager


class DataMixin:
    config: FederationConfig
    store: Store
    sites: Sites
    journal: Journal
    lease: EngineLease
    _mover: Any
    _server_root: Path | None = None

    @property
    def server_root(self) -> Path | None:
        """Set by the Jupyter server: paths on the server's own disk (transfers, staging)
        must resolve inside this directory. None (the CLI, a kernel on its own): not
        confined."""
        return self._server_root

    @server_root.setter
    def server_root(self, root: Path | None) -> None:
        self._server_root = root
        if self._mover is not None:
            self._mover.server_root = root

    @property
    def mover(self) -> TransferManager:
        """The transfer manager (Globus and SFTP), created on first use."""
        if self._mover is None:
            from .transfer import TransferManager

            self._mover = TransferManager(self.journal, self.sites, self.lease,
                                          self.config.transfers, server_root=self.server_root)
        return self._mover

    @property
    def engine_id(self) -> str:
        """This engine's claim on the work it runs (see `leases`), made on first use."""
        return self.lease.id

    async def _resume_data(self, limit: int | None = None) -> tuple[list[str], list[str]]:
        """After a restart: resume the transfers and stagings no live engine is running (at
        most `limit` of each); returns (the jobs whose staging was resumed, the transfers
        resumed)."""
        active = ["PENDING", "ACTIVE"]
        if not (self.store.list_transfers(states=active, limit=1)
                or self.store.list_transfers(states=active, limit=1, kinds=["stage"])):
            return [], []
        transfers = await self.mover.resume_pending(limit)
        from .transfer.staging import resume_staged

        return await resume_staged(self.mover, limit), transfers

    async def _close_data(self) -> None:
        """Stop moving data; this engine's unfinished work stays claimable by the next one."""
        if self._mover is not None:
            await self._mover.close()
        self.lease.release()

    async def transfer(self, src: str, dst: str, via: str | None = None, *,
                       recursive: bool = False, wait: bool = True,
                       transfer_id: str | None = None, overwrite: bool = False,
                       skip_hidden: bool = False,
                       said_as: Mapping[str, str] | None = None) -> TransferRecord:
        """Copy `src` to `dst`, each "SITE:PATH" or a path on the server's disk (inside its root
        when there is one), `via` "sftp", "globus" or None (Globus when both sites have a
        collection and a login exists, else SFTP); a directory needs `recursive`. The transfer
        is recorded durably before it starts and published as transfer events; with `wait` the
        finished record is returned (its state SUCCEEDED, FAILED or CANCELLED), else at once. A
        known `transfer_id` returns that transfer (done, or resumed). Copied into a
        directory, a file already there is replaced only if an earlier copy to the same
        destination wrote it and it is unchanged, or with `overwrite`; each file left as it
        was is listed in the record's `data["skipped"]`, and so, with `skip_hidden` (a tool
        call's copy), is each hidden entry, at any depth, left out. BadInput for a bad
        location (`said_as` maps `recursive` to the face's word for it, else the JSON field is
        named), SiteError when a site is unreachable."""
        return await self.mover.transfer(src, dst, via, recursive=recursive, wait=wait,
                                         transfer_id=transfer_id, overwrite=overwrite,
                                         skip_hidden=skip_hidden, said_as=said_as)

    def transfer_status(self, transfer_id: str) -> TransferRecord:
        """The stored record of transfer `transfer_id`; BadInput when unknown."""
        return self.mover.status(transfer_id)

    async def cancel_transfer(self, transfer_id: str) -> TransferRecord:
        """Cancel transfer `transfer_id` (its Globus task, or its SFTP copy in whichever
        engine runs it) and return its record, CANCELLED (a cancelled one as it is). BadInput
        when unknown, and when it had ended otherwise or its copy was already putting its
        data in place (the message says how it ended): never a cancel that then ends
        SUCCEEDED. A job's staging itself (its `stage-TOKEN` record) is not cancelled this
        way: the job is (`cancel`), which stops its copies."""
        rec = self.mover.status(transfer_id)
        if rec.kind == "stage":
            job = self.store.job_by_token(rec.data.get("stage_of") or "")
            raise BadInput(f"{transfer_id} is the staging of job {job.id if job else 'a job'}: "
                           "cancel the job (diamond cancel JOB), which stops its copies")
        return await self.mover.cancel(transfer_id)

    def globus_login(self) -> str:
        """Start a Globus login: the authorize URL to show the user, who finishes it with
        `globus_finish_login`. The tokens are stored 0600, never in events or logs."""
        return self.mover.auth.start_login()

    def globus_finish_login(self, code: str) -> dict[str, Any]:
        """Finish the Globus login started by `globus_login` with the `code` the user was given;
        returns what was granted (no tokens). BadInput when no login is pending or the code is
        refused."""
        return self.mover.auth.finish_login(code)

    async def _stop_stage_in(self, job: Job) -> None:
        """After a user's cancel of a job held for its stage-in: its copies are cancelled as
        the user's cancel of a transfer is (one already putting its data in place ends as it
        does); the staging then records the job CANCELLED, never released nor failed."""
        if not job.token:
            return
        try:
            staging = self.store.get_transfer(f"stage-{job.token}")
        except BadInput:
            return  # no staging
        if staging.state not in ("PENDING", "ACTIVE"):
            return
        prefix = f"{job.token}-in-"
        for rec in self.store.list_transfers(states=["PENDING", "ACTIVE"], limit=None):
            if rec.id.startswith(prefix):
                with contextlib.suppress(DiamondError):  # the job's cancel was sent: it stands
                    await self.mover.cancel(rec.id)

    def _check_server_paths(self, spec: JobSpec) -> None:
        """BadInput before anything is submitted when a stage entry names an unknown site or
        a server path outside the server's root directory; an entry a script line wrote is
        refused naming that line."""
        if not (spec.stage_in or spec.stage_out):
            return
        from .dialects.staging import STAGING_LINES
        from .transfer import confine, parse_location

        written = {text: rec for rec in spec.metadata.get(STAGING_LINES) or []
                   for text in (rec["source"], rec["destination"])}
        # (text, on the server when site-less): a site-less stage-in destination is on the
        # job's site, and so is a site-less stage-out source
        # (each named as its field, `stage_out[0].destination`, in a refusal)
        texts = [(f"stage_{d}[{i}].{side}", getattr(e, side), on_server)
                 for d, entries in (("in", spec.stage_in), ("out", spec.stage_out))
                 for i, e in enumerate(entries)
                 for side, on_server in (("source", d == "in"), ("destination", d == "out"))
                 if getattr(e, side)]
        for field, text, on_server in texts:
            try:
                loc = parse_location(text, self.sites)
                if on_server:
                    confine(loc, self.server_root)
            except BadInput as exc:
                if (rec := written.get(text)) is None:
                    raise BadInput(f"{field}: {exc}") from None
                raise BadInput(self._staging_line_refusal(rec, text, exc)) from None

    def _staging_line_refusal(self, rec: dict[str, Any], text: str, exc: BadInput) -> str:
        """Why the stage entry a script line wrote (`rec`) is refused at `text`: its host is
        no site (with what would be accepted), or `exc` as it is."""
        where = f"line {rec['line']}: staging entry {rec['entry']!r} in `{rec['directive']}`"
        host, colon, _ = text.partition(":")
        if not colon or host in self.sites or "/" in host:
            return f"{where}: {exc}"
        hosts = self.sites.ssh_hosts()
        shared = self.sites.sites_of_host(host)
        if len(shared) > 1:
            return (f"{where}: host {host!r} is the SSH host of several sites "
                    f"({', '.join(shared)}): write the entry with the site's name in its "
                    f"place (e.g. {shared[0]}:{text.partition(':')[2]})")
        known = ", ".join(f"{n} ({h})" if h else n for n, h in hosts.items()) or "none"
        accepted = (f"after '@' a site's name or SSH host (known: {known})"
                    if rec["directive"].startswith("#PBS") else
                    f"a local path on this server (no HOST: before it), or a site's name or "
                    f"SSH host before ':' (known: {known})")
        return (f"{where}: host {host!r} is no site's name nor its SSH host; expected "
                f"{accepted}; or add a site whose transport host is {host}")

    def _stage_begin(self, site: str, token: str, spec: JobSpec, hold: bool):
        if not (spec.stage_in or spec.stage_out):
            return None
        from .transfer.staging import StagedJob

        # the script's own hold (`#SBATCH --hold`, PBS/GE `-h`, LSF `-H`) is the user's too:
        # the staging releases the job after its stage-in only when the user asks
        return StagedJob(self.mover, site, token, spec, hold or spec.hold)

    async def _submit_staged(self, target: Site, spec: JobSpec, token: str, hold: bool,
                             staged: Any, secret: str = ""):
        """Submit (held while a stage-in runs); a failed submit stops the staging."""
        try:
            return await target.submit(spec, token, hold=staged.hold if staged else hold,
                                       secret=secret)
        except BaseException as e:
            if staged is not None:  # refused or never sent: final; else the job may exist
                staged.abort(final=isinstance(e, (BadInput, CommandFailed, CommandNotSent,
                                                      AuthError, HostKeyError)))
            raise
