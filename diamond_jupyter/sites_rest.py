"""A Slurm cluster reached over its REST API (slurmrestd), with no SSH for scheduling.

Submit, status, the queue snapshot, cancel and release are HTTP calls; the job's script
travels in the request body, its options as the API's job fields (slurmrestd ignores
#SBATCH lines). The API runs no commands and reads no files, so the site's files go
through its *file door* (`files:` in the sites file: SFTP to the cluster's login node, or
the local file system where the server shares it), a transport of its own: each job gets
its own directory there, its logs are read and its results listed and fetched through it.
A site without a file door says plainly that it cannot read files, and how to give it one.
With a file door, the door is the event channel: each job's wrapper signs its start and end
lines into the event file as on an SSH site (its secret written to its directory through the
door), and the monitor follows that file through the door (`tail -F`), while the door lets it
(an SFTP-only door does not: then, and without a door, jobs are followed by the batched query
alone, at the monitor's adaptive interval). Finished jobs stay visible for the cluster's
MinJobAge (accounting, `/slurmdb/`, needs slurmdbd).
"""

from __future__ import annotations

import json
import re
import stat
import time
from collections.abc import Callable, Collection, Iterable
from datetime import datetime
from functools import partial
from typing import Any
from urllib.parse import quote

from .config import SiteConfig
from .dialects import slurm_rest
from .dialects.base import Rendered
from .discovery_site import SiteDiscovery, describe_from_outputs
from .model import BadInput, Dependency, Job, JobSpec, JobStatus, SiteError
from .sites import (
    QUEUE_UNREAD,
    TAIL_MAX_BYTES,
    EventChannel,
    NotARegularFile,
    Site,
    Submitted,
    last_lines,
    queue_timed_out,
    queue_too_large,
    scheduler_name,
    token_tag,
)
from .store.codec import hold_site_token
from .transports import CommandTimeout, OutputTooLarge, Transport, make_transport
from .transports.base import FileStat
from .transports.slurmrestd import SlurmRestTransport
from .wrapper import hedge_gate_file

# what slurmrestd says of a job id Slurm no longer knows (ESLURM_INVALID_JOB_ID)
_GONE = re.compile(r"Invalid job id|Unknown job|not found", re.IGNORECASE)

FILE_DOOR_HINT = ("give its sites-file entry a file door, e.g. files: {kind: ssh, host: "
                  "LOGIN-NODE, user: USER, known_hosts: FILE}")


class RestSite(Site):
    def __init__(self, cfg: SiteConfig, transport: SlurmRestTransport | None = None,
                 capability_ttl_s: float = 60.0, files: Transport | None = None,
                 private_vars: Iterable[str] = ()) -> None:
        super().__init__(cfg, transport or SlurmRestTransport(cfg.transport, site=cfg.name),
                         capability_ttl_s)
        self.rest: SlurmRestTransport = self.transport  # type: ignore[assignment]
        # a reply (an error's text) may quote the token back: redacted wherever it shows
        self.rest.on_token = partial(hold_site_token, cfg.name)
        self.commands = slurm_rest.RestCommands(clean_env=False,
                                                api_version=self.rest.cfg.api_version)
        # the file door: a transport of its own (None: this site reads no files)
        self.files: Transport | None = files or (
            make_transport(cfg.files, site=cfg.name, private_vars=private_vars)
            if cfg.files else None)
        self._dirs: set[str] = set()  # tokens whose job directory the file door made
        self._no_slurmdb = False  # slurmrestd answered 404 for slurmdb's QOS
        # what changes slowly (the QOS, associations and shares, diag's statistics): read
        # with the capabilities when they are `capability_ttl_s` old (`_caps_at`), not when
        # slurmctld's part of them answered errors and is asked again at the next refresh
        self._accounting: dict[str, str] = {}
        self._ctld_errors = False
        self.discovery = RestDiscovery(self)

    @property
    def event_channel(self) -> EventChannel:  # type: ignore[override]
        """The file door carries the jobs' own start and end lines (none without a door); an
        SFTP-only door runs no `tail`, so the channel may be refused."""
        return EventChannel.OPTIONAL if self.files is not None else EventChannel.NONE

    def describe(self) -> dict[str, Any]:
        return super().describe() | {
            "files": self.files.describe() if self.files is not None else None}

    # -- paths: the workdir is absolute (the API cannot tell the home) ----------------------
    async def home(self) -> str:
        return self.cfg.workdir

    async def know_home(self, *paths: str | None) -> None:
        for p in paths:
            if p and p.startswith("~"):
                raise BadInput(f"{self.name}: paths must be absolute on a slurmrestd site "
                               f"(the REST API cannot tell the home directory): {p!r}")

    def expand(self, path: str) -> str:
        if path == "~" or path.startswith("~/"):
            raise BadInput(f"{self.name}: paths must be absolute on a slurmrestd site: "
                           f"{path!r}")
        return path

    @property
    def api_version(self) -> str:
        """The OpenAPI plugin version this site's slurmrestd is asked in (request shapes
        follow it)."""
        return self.rest.cfg.api_version

    @property
    def workdir(self) -> str:
        return self.cfg.workdir.rstrip("/") or "/"

    def job_dir(self, token: str) -> str:
        """With a file door, each job's own directory (made through the door before the
        submit); without one, the workdir itself (the API cannot make a directory), where
        the job's output files carry the token in their names."""
        return super().job_dir(token) if self.files is not None else self.workdir

    def output_path(self, token: str, stream: str) -> str:
        if self.files is not None:
            return super().output_path(token, stream)
        return f"{self.workdir}/dmd-{token}.{stream}.log"

    # -- calls ----------------------------------------------------------------------------
    async def _call(self, method: str, path: str, body: object = None) -> str:
        self.scheduler_commands += 1
        _status, text = await self.rest.request(method, path, body=body)
        return text

    async def run(self, argv: list[str], **kw):
        return await self.rest.run(argv)

    async def run_batch(self, named: dict[str, list[str]]) -> dict[str, str]:
        raise self.rest._cannot("running commands")

    async def _snapshot_outputs(self) -> dict[str, str]:
        """`GET jobs` (the whole queue) with `GET licenses`, and, when stale, nodes,
        partitions and reservations, then the accounting and diag when they are stale too
        (`_read_accounting`). A queue larger than the transport's cap is unknown, with that
        reason; the rest stands. A `GET jobs` that timed out leaves the queue unknown only
        when nodes and partitions, asked anew, answer (else the site is unreachable)."""
        fresh = not self._ctld_errors \
            and time.monotonic() - self._caps_at < self.capability_ttl_s
        try:
            out = {"queue": await self._call("GET", "jobs"),
                   slurm_rest.READ_AT: f"{time.time():.0f}"}
        except OutputTooLarge as e:
            out = {"queue": "", QUEUE_UNREAD: queue_too_large(self.name, e)}
        except CommandTimeout:
            out = {"queue": "", QUEUE_UNREAD: queue_timed_out(
                self.name, self.rest.command_timeout_s)}
            fresh = False
        if QUEUE_UNREAD not in out:
            out.update(await self._licenses())
        if not fresh:
            ctld = {"nodes": await self._call("GET", "nodes"),
                    "partitions": await self._call("GET", "partitions"),
                    **await self._reservations()}
            if time.monotonic() - self._caps_at >= self.capability_ttl_s:
                await self._read_accounting()
                self._caps_at = time.monotonic()
            self._caps = {**ctld, **self._accounting}
            # a reply of errors (slurmctld not answering) is asked again next time, not
            # kept for the capabilities' lifetime
            self._ctld_errors = any(map(slurm_rest.carries_errors, ctld.values()))
        # the user slurmrestd runs as (the reservations' Users= are checked for it)
        return {**self._caps, **out, **({"user": self.rest.user} if self.rest.user else {})}

    async def _read_accounting(self) -> None:
        """The QOS, diag's backfill statistics, the user's associations and their shares:
        once for each `capability_ttl_s`, however often slurmctld's capabilities are asked
        again meanwhile (a reply of errors among them asks them at every refresh). One of
        these that failed stays not known, said, until its next turn (a site without
        slurmdbd always answers errors)."""
        self._accounting = {**await self._qos(), **await self._diag()}
        self._accounting.update(await self._associations())
        self._accounting.update(await self._shares())

    async def _reservations(self) -> dict[str, str]:
        """`GET reservations` (as `scontrol show reservation` on a site with a shell),
        asked with nodes and partitions; one that fails leaves them unknown, said, the
        rest of the snapshot standing."""
        try:
            return {"reservations": await self._call("GET", "reservations")}
        except (SiteError, CommandTimeout, OutputTooLarge) as e:
            return {slurm_rest.RESERVATIONS_UNREAD: str(e)}

    async def _diag(self) -> dict[str, str]:
        """`GET diag` (as `sdiag`), asked with nodes and partitions: its backfill statistics
        are all slurmrestd tells of SchedulerType (`scontrol show config` on a site with a
        shell); one that fails leaves it unknown, said."""
        self.scheduler_commands += 1
        try:
            status, text = await self.rest.request("GET", "diag")
        except (SiteError, CommandTimeout, OutputTooLarge) as e:
            return {slurm_rest.DIAG_UNREAD: str(e)}
        if status != 200 or slurm_rest.carries_errors(text):
            said = "; ".join(slurm_rest.errors_of(json.loads(text))) \
                if slurm_rest.carries_errors(text) else (text.strip().splitlines() or [""])[0]
            return {slurm_rest.DIAG_UNREAD: f"GET diag answered HTTP {status}: {said[:200]}"}
        return {slurm_rest.DIAG: text}

    async def _licenses(self) -> dict[str, str]:
        """`GET licenses` (as `scontrol show licenses` on a site with a shell), asked with
        the queue (their use changes with it). v0.0.36 and v0.0.37 have no such call: the
        licenses are not known there; a call that fails leaves them not known, said."""
        if slurm_rest.api_number(self.api_version) < slurm_rest.LICENSES_SINCE:
            return {}
        try:
            return {slurm_rest.LICENSES: await self._call("GET", "licenses")}
        except (SiteError, CommandTimeout, OutputTooLarge) as e:
            return {slurm_rest.LICENSES_UNREAD: str(e)}

    async def _qos(self) -> dict[str, str]:
        """`GET /slurmdb/VERSION/qos` (as `sacctmgr show qos` on a site with a shell), asked
        with nodes and partitions. Accounting needs slurmdbd, and a slurmrestd may not load
        its slurmdb plugin: a call that fails leaves the QOS not known (their limits not
        checked), said, the rest of the snapshot standing."""
        if self._no_slurmdb:
            return {}
        try:
            status, text = await self._slurmdb("qos")
        except (SiteError, CommandTimeout, OutputTooLarge) as e:
            return {slurm_rest.QOS_UNREAD: str(e)}
        if status == 404 and not slurm_rest.carries_errors(text):
            # no slurmdb plugin of this version: no accounting over this door (as a site
            # whose sacctmgr answers nothing), not asked again
            self._no_slurmdb = True
            return {}
        if status >= 400 and not slurm_rest.carries_errors(text):
            return {slurm_rest.QOS_UNREAD: f"GET /slurmdb/{self.api_version}/qos answered "
                                           f"HTTP {status}"}
        return {"qos": text}

    async def _slurmdb(self, path: str) -> tuple[int, str]:
        self.scheduler_commands += 1
        return await self.rest.request("GET", path, api="slurmdb")

    async def _associations(self) -> dict[str, str]:
        """The user's associations and those of the accounts above theirs, up to 8 levels
        (as the CLI's `sacctmgr show assoc` probe): `GET associations?user=U`, then
        `?account=A` for each account met. Asked where the transport names its user and
        slurmdb answers; a failure leaves them not known (their default QOS and limits not
        checked), said."""
        if self._no_slurmdb or slurm_rest.QOS_UNREAD in self._accounting \
                or not self.rest.user \
                or slurm_rest.carries_errors(self._accounting.get("qos", "")):
            return {}  # (slurmdb not there, or not answering: said of the QOS)
        try:
            status, text = await self._slurmdb(
                f"associations?user={quote(self.rest.user, safe='')}")
            if status >= 400 and not slurm_rest.carries_errors(text):
                return {slurm_rest.ASSOCIATIONS_UNREAD: f"GET /slurmdb/{self.api_version}/"
                                                        f"associations answered HTTP {status}"}
            replies = [text]
            try:
                level = {a.account for a in slurm_rest.parse_associations(text, self.rest.user)
                         if a.level == "user" and a.account}
            except SiteError:
                level = set()  # (said when the snapshot reads it)
            seen: set[str] = set()
            for _ in range(8):
                up: set[str] = set()
                for account in sorted(level - seen)[:32]:
                    seen.add(account)
                    _status, text = await self._slurmdb(
                        f"associations?account={quote(account, safe='')}")
                    replies.append(text)
                    try:
                        up |= {a.parent for a in slurm_rest.parse_associations(text)
                               if a.level == "account" and a.account == account and a.parent}
                    except SiteError:
                        continue
                level = up
                if not level - seen:
                    break
        except (SiteError, CommandTimeout, OutputTooLarge) as e:
            return {slurm_rest.ASSOCIATIONS_UNREAD: str(e)}
        return {slurm_rest.ASSOCIATIONS: json.dumps(replies)}

    async def _shares(self) -> dict[str, str]:
        """`GET shares?users=U` (as `sshare` on a site with a shell, v0.0.40 on): what the
        user's associations and their accounts have used of their TRES-minutes limits,
        asked with the associations. Older versions have no such call (the use is not
        known there, said by placement); a failure leaves it not known, said."""
        if slurm_rest.api_number(self.api_version) < slurm_rest.SHARES_SINCE \
                or slurm_rest.ASSOCIATIONS not in self._accounting or not self.rest.user:
            return {}
        try:
            return {slurm_rest.SHARES: await self._call(
                "GET", f"shares?users={quote(self.rest.user, safe='')}")}
        except (SiteError, CommandTimeout, OutputTooLarge) as e:
            return {slurm_rest.SHARES_UNREAD: str(e)}

    # -- jobs -----------------------------------------------------------------------------
    def render(self, spec: JobSpec) -> Rendered:
        """The Slurm script (its #SBATCH lines say what the job asked for; the API takes the
        same options from the request) and the REST job fields' warnings."""
        rendered = super().render(spec)
        _job, warnings = slurm_rest.job_description(spec, api_version=self.api_version)
        return Rendered(rendered.script, rendered.warnings + warnings)

    async def _make_job_dir(self, token: str, script: str, secret: str = "") -> None:
        """The job's private directory, through the file door, holding a copy of its script
        (what ran, beside its output; the API takes the script from the request) and the
        secret its wrapper signs its event lines with (readable by its owner only)."""
        assert self.files is not None
        if secret:
            if not all(c in "0123456789abcdef" for c in secret):
                raise BadInput("the event secret must be hexadecimal")
            await self.files.put_bytes(f"{secret}\n".encode(),
                                       f"{self.job_dir(token)}/secret", 0o600)
        await self.files.put_bytes(script.encode(), f"{self.job_dir(token)}/job.sh", 0o700)
        self._dirs.add(token)

    async def upload(self, spec: JobSpec, token: str, *, secret: str = "") -> Rendered | None:
        """The job's directory, made through the file door while the intent is written
        (nothing without one: the script travels in the submit request itself)."""
        if self.files is None:
            return None
        rendered = self.render(self.scheduler_spec(spec, token))
        await self._make_job_dir(token, rendered.script, secret)
        return rendered

    def forget_upload(self, token: str) -> None:
        self._dirs.discard(token)

    async def submit(self, spec: JobSpec, token: str, *, hold: bool = False,
                     secret: str = "") -> Submitted:
        sched = self.scheduler_spec(spec, token)
        rendered = self.render(sched)
        if self.files is not None and token not in self._dirs:
            await self._make_job_dir(token, rendered.script, secret)  # the job must find it
        self._dirs.discard(token)
        job, warnings = slurm_rest.job_description(sched, hold=hold,
                                                   api_version=self.api_version)
        text = await self._call("POST", "job/submit", slurm_rest.submit_body(
            rendered.script, job, self.api_version))
        try:
            native, notes = slurm_rest.parse_submit(text)
        except SiteError as e:
            raise BadInput(f"{self.name}: {e}") from None  # the scheduler refused it
        where = f"{self.job_dir(token)}/job.sh" if self.files is not None \
            else f"{self.workdir} (sent over REST)"
        return Submitted(native, where, spec.stdout, spec.stderr, rendered.warnings + notes)

    async def _all_jobs(self) -> list[JobStatus]:
        return slurm_rest.parse_jobs(await self._call("GET", "jobs"), self.commands)

    async def find_by_name(self, name: str, user: str | None = None) -> list[JobStatus]:
        """`GET jobs` holds every user's jobs: those named `name` (`user`'s, when given)."""
        return [s for s in await self._all_jobs()
                if s.name == name and (user is None or s.user == user)]

    async def find_by_token(self, name: str | None, token: str) -> list[JobStatus]:
        """The jobs carrying `token`; where the token's user is configured (`user`), a job
        another user owns (who copied the token from the queue) is not this one."""
        mine = self.rest.user
        return [s for s in await self._all_jobs()
                if (token_tag(token) in (s.comment or "")
                    or (s.name or "") == scheduler_name(name, token))
                and (not mine or not s.user or s.user == mine)
                and self.usable_id(s.native_id)]

    async def statuses(self, native_ids: list[str], *, following: Collection[Job] = (),
                       unasked: set[str] | None = None,
                       awaited: Callable[[], dict[str, set[str]]] | None = None
                       ) -> list[JobStatus]:
        """Every asked-for job from ONE `GET jobs` (the batched query); a job gone from it
        (past MinJobAge) is not found: the API has no accounting without slurmdbd (so
        `unasked`, Site's, stays empty, and `awaited` is not read). Where the
        whole queue is larger than the transport's cap, each job is asked alone (`GET
        job/ID`): following the user's jobs never depends on the size of everyone's queue."""
        if not native_ids:
            return []
        wanted = set(native_ids)
        try:
            found = await self._all_jobs()
        except OutputTooLarge:
            found = await self._jobs_one_by_one(native_ids)
        return [s for s in self.fold_arrays(found) if s.native_id in wanted]

    async def _jobs_one_by_one(self, native_ids: list[str]) -> list[JobStatus]:
        """`GET job/ID` for each id; a job the API no longer knows (404, or an error naming
        it) is not found, as it would be absent from `GET jobs`."""
        found: list[JobStatus] = []
        for i in dict.fromkeys(self.commands._ids(native_ids).split(",")):
            status, text = await self.rest.request("GET", f"job/{i}")
            self.scheduler_commands += 1
            try:
                found += slurm_rest.parse_jobs(text, self.commands)
            except SiteError as e:
                if status == 404 or _GONE.search(str(e)):
                    continue  # Slurm no longer knows the job
                raise SiteError(f"{self.name}: GET job/{i} failed (HTTP {status}): "
                                f"{e}") from None
            if status >= 400:
                raise SiteError(f"{self.name}: GET job/{i} failed: HTTP {status}")
        return found

    async def recent_jobs(self, since: datetime) -> list[JobStatus]:
        return []  # no accounting over this API without slurmdbd

    async def _each(self, what: str, method: str, native_ids: list[str],
                    body: object = None) -> None:
        for i in self.commands._ids(native_ids).split(","):
            status, text = await self.rest.request(method, f"job/{i}", body=body)
            self.scheduler_commands += 1
            errors = slurm_rest.errors_of(slurm_rest._load(what, text))
            if status >= 400 or errors:
                raise SiteError(f"{self.name}: {what} {i} failed: "
                                + ("; ".join(errors) or f"HTTP {status}"))

    async def cancel(self, native_ids: list[str]) -> None:
        await self._each("cancelling", "DELETE", native_ids)

    async def decide_hedge(self, token: str, decision: str) -> None:
        """A hedged copy's decision, written whole (a rename) through the file door into its
        private job directory, where its wrapper waits for it."""
        if decision not in ("go", "no"):
            raise BadInput(f"a hedge decision is go or no, not {decision!r}")
        if self.files is None:
            raise self._no_files("deciding a hedged copy")
        await self.files.put_bytes(f"{decision} {token}\n".encode(),
                                   hedge_gate_file(self.job_dir(token)), 0o600)

    @property
    def updates_dependencies(self) -> bool:
        """From v0.0.38 on, a queued job's dependency is changed by the update call
        (`POST job/ID` with `dependency`); v0.0.36 and v0.0.37 declare the same call but are
        not asked: there the job is submitted again instead."""
        return slurm_rest.api_number(self.api_version) >= slurm_rest.DEPENDENCY_UPDATE_SINCE

    async def update_dependencies(self, native_id: str, deps: list[Dependency]) -> None:
        """`POST job/ID` (the update call) with `dependency` replaced by `deps`, as
        `scontrol update JobId=ID Dependency=...` over SSH; a refusal is a SiteError naming
        the job and slurmrestd's errors."""
        if not self.updates_dependencies:
            raise BadInput(f"{self.name}: slurmrestd {self.api_version} is not asked to "
                           "change a queued job's dependency (v0.0.38 on are): the job is "
                           "submitted again instead")
        await self._each("changing the dependency of", "POST", [native_id],
                         {"dependency": self.commands.dependency_value(deps)})

    async def release(self, native_ids: list[str], *,
                      tasks: dict[str, str] | None = None) -> None:
        """`POST job/ID` (the update call) with the hold lifted (`tasks`: a Flux array's,
        never here)."""
        await self._each("releasing", "POST", native_ids, {"hold": False})

    # -- files: through the file door -----------------------------------------------------
    def _no_files(self, what: str) -> BadInput:
        return BadInput(f"{self.name}: {what} is not possible over slurmrestd alone (the "
                        f"REST API reads no files); {FILE_DOOR_HINT}")

    @property
    def file_transport(self) -> Transport:
        if self.files is None:
            raise self._no_files("moving files")
        return self.files

    async def stat(self, path: str) -> FileStat | None:
        if self.files is None:
            raise self._no_files(f"looking at {path}")
        return await self.files.stat(self.expand(path))

    async def file_stats(self, root: str, *, max_depth: int = 3, special: bool = False
                         ) -> list[FileStat]:
        if self.files is None:
            raise self._no_files(f"listing {root}")
        return await self.files.list_files(self.expand(root), max_depth=max_depth,
                                           special=special)

    async def fetch(self, remote: str, local: str, *, max_bytes: int | None = None,
                    within: str | None = None) -> None:
        if self.files is None:
            raise self._no_files(f"fetching {remote}")
        await self.files.get_file(remote, local, max_bytes=max_bytes, within=within)

    async def link_target(self, path: str) -> tuple[str, str | None] | None:
        if self.files is None:
            raise self._no_files(f"looking at {path}")
        try:
            return await self.files.link_target(self.expand(path))
        except FileNotFoundError:
            return None

    async def real_path(self, path: str) -> str | None:
        if self.files is None:
            raise self._no_files(f"looking at {path}")
        return await self.files.real_path(self.expand(path))

    async def tail(self, path: str, lines: int = 100, *,
                   max_bytes: int = TAIL_MAX_BYTES, start: int = 0) -> str | None:
        """The end of a log, read through the file door (SFTP reads: no command runs),
        after its first `start` bytes. A log that is not a regular file (a FIFO, a device,
        or a link to one: its reading could wait for ever or never end) is not read
        (NotARegularFile), as on a site with a shell; nor is a symbolic link (job output is
        untrusted: a link to ~/.ssh/id_rsa would show the key)."""
        if self.files is None:
            raise self._no_files(f"reading the job's log {path}")
        st = await self.files.stat(self.expand(path))  # (links followed)
        if st is None:
            return None
        if not stat.S_ISREG(st.mode):
            raise NotARegularFile.at(self.name, self.expand(path))
        linked = await self.files.stat(self.expand(path), follow_links=False)
        if linked is None or stat.S_ISLNK(linked.mode):
            raise NotARegularFile.link_at(self.name, self.expand(path))
        if start > 0:  # what the file held before: left out
            max_bytes = max(0, min(max_bytes, st.size - start))
            if not max_bytes:
                return ""
        data = await self.files.read_end(self.expand(path), max_bytes)
        return None if data is None else last_lines(data.decode("utf-8", "replace"), lines)

    @property
    def follow_refusal(self) -> str | None:
        """Logs are not followed over the file door: an SFTP read of a log's end cannot say
        where in a file that grows meanwhile it began (a follower would skip or repeat)."""
        return (f"{self.name}: following a job's log as it grows needs a shell on the site, "
                "which a site reached through slurmrestd has not; `diamond logs JOB` shows "
                "the log's end, `diamond wait JOB` waits for the job's end")

    async def read_from(self, path: str, start: int, max_bytes: int) -> bytes | None:
        raise BadInput(self.follow_refusal or "")

    async def close(self) -> None:
        await super().close()
        if self.files is not None:
            await self.files.close()


class RestDiscovery(SiteDiscovery):
    """What the REST API can tell of the cluster: its nodes and partitions (two GETs). No
    modules, container runtimes or MPI stacks: those need a shell; the sites file's
    `metadata` says them."""

    site: RestSite

    async def _discover(self):
        site = self.site
        self.runs += 1
        parts = {"arch": "", **{f"sched:{site.name}:{k}": await site._call("GET", k)
                                for k in ("nodes", "partitions")}}
        return describe_from_outputs(site.name, site.commands, parts, {}, [site.name],
                                     ["nodes", "partitions"])
