"""A Slurm cluster reached over its REST API (slurmrestd), with no SSH at all.

Submit, status, the queue snapshot, cancel and release are HTTP calls; the job's script
travels in the request body, its options as the API's job fields (slurmrestd ignores
#SBATCH lines). What the API cannot do, the site says plainly: it reads no files (logs,
results, staging), runs no commands, and offers no event channel, so its jobs are followed
by the batched query alone, at the monitor's adaptive interval. Finished jobs stay visible
for the cluster's MinJobAge (accounting, `/slurmdb/`, needs slurmdbd).
"""

from __future__ import annotations

import time
from collections.abc import Collection
from datetime import datetime

from .config import SiteConfig
from .dialects import slurm_rest
from .dialects.base import Rendered
from .discovery_site import SiteDiscovery, describe_from_outputs
from .model import BadInput, Job, JobSpec, JobStatus, SiteError
from .sites import Site, Submitted, scheduler_name, token_tag
from .transports.slurmrestd import SlurmRestTransport


class RestSite(Site):
    has_event_channel = False

    def __init__(self, cfg: SiteConfig, transport: SlurmRestTransport | None = None,
                 capability_ttl_s: float = 60.0) -> None:
        super().__init__(cfg, transport or SlurmRestTransport(cfg.transport, site=cfg.name),
                         capability_ttl_s)
        self.commands = slurm_rest.RestCommands(clean_env=False)
        self.rest: SlurmRestTransport = self.transport  # type: ignore[assignment]
        self.discovery = RestDiscovery(self)

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
    def workdir(self) -> str:
        return self.cfg.workdir.rstrip("/") or "/"

    def job_dir(self, token: str) -> str:
        """Jobs run in the workdir itself (the API cannot make a directory per job); their
        output files carry the token in their names."""
        return self.workdir

    def output_path(self, token: str, stream: str) -> str:
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
        fresh = time.monotonic() - self._caps_at < self.capability_ttl_s
        out = {"queue": await self._call("GET", "jobs")}
        if not fresh:
            self._caps = {"nodes": await self._call("GET", "nodes"),
                          "partitions": await self._call("GET", "partitions")}
            self._caps_at = time.monotonic()
        return {**self._caps, **out}

    # -- jobs -----------------------------------------------------------------------------
    def render(self, spec: JobSpec) -> Rendered:
        """The Slurm script (its #SBATCH lines say what the job asked for; the API takes the
        same options from the request) and the REST job fields' warnings."""
        rendered = super().render(spec)
        _job, warnings = slurm_rest.job_description(spec)
        return Rendered(rendered.script, rendered.warnings + warnings)

    async def upload(self, spec: JobSpec, token: str, *, secret: str = "") -> Rendered | None:
        return None  # the script travels in the submit request itself

    async def submit(self, spec: JobSpec, token: str, *, hold: bool = False,
                     secret: str = "") -> Submitted:
        sched = self.scheduler_spec(spec, token)
        rendered = self.render(sched)
        job, warnings = slurm_rest.job_description(sched, hold=hold)
        text = await self._call("POST", "job/submit", slurm_rest.submit_body(rendered.script,
                                                                              job))
        try:
            native, notes = slurm_rest.parse_submit(text)
        except SiteError as e:
            raise BadInput(f"{self.name}: {e}") from None  # the scheduler refused it
        return Submitted(native, f"{self.workdir} (sent over REST)", spec.stdout, spec.stderr,
                         rendered.warnings + notes)

    async def _all_jobs(self) -> list[JobStatus]:
        return slurm_rest.parse_jobs(await self._call("GET", "jobs"), self.commands)

    async def find_by_name(self, name: str) -> list[JobStatus]:
        return [s for s in await self._all_jobs() if s.name == name]

    async def find_by_token(self, name: str | None, token: str) -> list[JobStatus]:
        return [s for s in await self._all_jobs()
                if token_tag(token) in (s.comment or "")
                or (s.name or "") == scheduler_name(name, token)]

    async def statuses(self, native_ids: list[str], *,
                       following: Collection[Job] = ()) -> list[JobStatus]:
        """Every asked-for job from ONE `GET jobs` (the batched query); a job gone from it
        (past MinJobAge) is not found: the API has no accounting without slurmdbd."""
        if not native_ids:
            return []
        wanted = set(native_ids)
        return [s for s in await self._all_jobs() if s.native_id in wanted]

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

    async def release(self, native_ids: list[str]) -> None:
        """`POST job/ID` (the update call) with the hold lifted."""
        await self._each("releasing", "POST", native_ids, {"hold": False})

    # -- files: not over this API ---------------------------------------------------------
    async def stat(self, path: str):
        raise self.rest._cannot(f"looking at {path}")

    async def list_files(self, root: str, *, max_depth: int = 3) -> list[str]:
        raise self.rest._cannot(f"listing {root}")

    async def tail(self, path: str, lines: int = 100, *, max_bytes: int = 1 << 20):
        raise self.rest._cannot(f"reading the job's log {path}")


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
