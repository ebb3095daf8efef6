"""REST routes under /diamond/api/ (GET never changes state)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado.web import authenticated

from ..job_dependencies import dependencies_json
from ..model import DiamondError, JobState, SubmitUnsure, job_json, one_line
from . import views
from .base import MAX_LIMIT, ApiError, DiamondHandler, api, found_or_404
from .bodies import (
    ApproveBody,
    AskBody,
    FetchBody,
    PlaceBody,
    RejectBody,
    SubmitBody,
    TransferBody,
    TranslateBody,
)
from .events import to_emission

OPENAPI = Path(__file__).parent / "openapi.yaml"
# an event kind as stored (job.state, stage.in.failed), or a prefix of kinds (job.*)
_EVENT_KIND = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*(?:\.\*)?")


def with_lookout(fed: Any, job: Any) -> dict[str, Any]:
    """The job's JSON; an unbound one (its submit's answer lost, then closed or still looked
    for) with where the search for it stands (`lookout`)."""
    lookout = fed.lookout(job.id) if job.native_id is None else None
    return job_json(job) | ({"lookout": lookout} if lookout else {})


def listed_jobs(fed: Any, jobs: list[Any]) -> list[dict[str, Any]]:
    """Listed jobs' JSON (`with_lookout`), each with what it waits for (`depends_on`),
    read in one pass over them all."""
    deps = fed.dependencies_of_jobs(jobs)
    return [with_lookout(fed, j) | {"depends_on": dependencies_json(deps[j.id])}
            for j in jobs]


class _Rows(DiamondHandler):
    """Shared: SiteRows from (fresh or cached) snapshots, emitted as site-snapshot events."""

    async def site_rows(self, fed: Any, names: list[str] | None = None, *,
                        max_age_s: float = 15.0) -> list[dict[str, Any]]:
        if names is None:
            snaps = await fed.snapshots(max_age_s=max_age_s)
        else:
            snaps = {n: await fed.snapshot(n, max_age_s=max_age_s) for n in names}
        typical = await self.typical_starts(fed)
        rows = []
        for name, snap in snaps.items():
            mine = fed.count_jobs(site=name, states=views.UNFINISHED)
            row = views.site_row(fed.site_summary(name, snap), my_jobs=mine,
                                 typical_start_s=typical.get(name), snap=snap)
            self.app.bridge.site_snapshot(row)
            rows.append(row)
        return rows

    async def typical_starts(self, fed: Any) -> dict[str, float | None]:
        """Estimated wait (s) of a 1-node 1-hour job per site (None: cannot run it)."""
        try:
            # every row, second doors to a cluster included (auto placement skips those)
            pl = await fed.place(views.TYPICAL_SPEC, sites=list(fed.sites))
        except DiamondError:
            return {}
        out: dict[str, float | None] = {}
        for v in pl.ranked:
            start = v.estimated_start
            out[v.site] = (max((start - pl.now).total_seconds(), 0.0)
                           if v.feasible and start else (0.0 if v.feasible else None))
        return out


class StateHandler(_Rows):
    @authenticated
    @authorized
    @api
    async def get(self) -> None:
        """Everything a (re)connecting client needs to rebuild its picture."""
        if self.app.federation is None:
            self.reply({"sites": [], "jobs": [], "tasks": [], "transfers": [], "events": [],
                        "last_seq": 0, "error": self.app.error} | self.sites_file_note())
            return
        fed = await self.fed()
        last = fed.last_seq()
        # The latest `jobs` jobs only (plus counts): a long history pages through GET jobs.
        limit = self.int_arg("jobs", 200, hi=MAX_LIMIT)
        # max_age > 15: answer from cached snapshots now, refresh them in the background
        # (fresh rows then arrive as site-snapshot events).
        max_age = self.int_arg("max_age", 15, hi=86400) or 0
        rows = await self.site_rows(fed, max_age_s=float(max_age))
        if max_age > 15:
            self.app.background.start(self._refresh_rows(fed))
        # up to `last` only: a later event reaches the client live, after this answer
        events = [e for e in fed.events_since(max(last - 50, 0), limit=50)
                  if (e.seq or 0) <= last]
        self.reply({
            "sites": rows,
            "jobs": listed_jobs(fed, fed.jobs(limit=limit)),
            "jobs_total": fed.count_jobs(),
            "job_counts": {s.value: fed.count_jobs(states=[s]) for s in JobState},
            "tasks": fed.tasks(),
            "transfers": fed.transfers(),
            "events": [views.event_json(e) for e in events],
            "last_seq": last,
            "error": None,
            "refused_sites": self.app.refused_sites,
        } | self.sites_file_note())

    async def _refresh_rows(self, fed: Any) -> None:
        try:
            await self.site_rows(fed)
        except Exception as e:  # background: the next /state retries
            self.log.warning("diamond: background snapshot refresh failed: %s",
                             one_line(str(e)))


class SitesHandler(DiamondHandler):
    @authenticated
    @authorized
    @api
    async def get(self) -> None:
        fed = await self.fed()
        self.reply({"sites": [views.public_config(c) for c in fed.site_configs()]}
                   | self.sites_file_note())


class SiteHandler(DiamondHandler):
    @authenticated
    @authorized
    @api
    async def get(self, name: str) -> None:
        fed = await self.fed()
        cfg = self.site_config_or_404(fed, name)
        snap = await fed.snapshot(name)
        self.reply(views.public_config(cfg) | {"snapshot": views.snapshot_summary(snap)})


class SnapshotHandler(_Rows):
    @authenticated
    @authorized
    @api
    async def get(self, name: str) -> None:
        fed = await self.fed_with_site(name)
        max_age = self.int_arg("max_age", 15, hi=86400)
        snap = await fed.snapshot(name, max_age_s=float(max_age or 0))
        await self.site_rows(fed, [name])  # emits site-snapshot if this one is fresh
        self.reply(snap.model_dump(mode="json"))


class PlaceHandler(DiamondHandler):
    @authenticated
    @authorized
    @api
    async def post(self) -> None:
        fed = await self.fed()
        body = self.parse(PlaceBody)
        spec = await self.spec_from(fed, body)
        self.reply((await fed.place(spec, policy=body.policy)).model_dump(mode="json"))


class JobsHandler(DiamondHandler):
    @authenticated
    @authorized
    @api
    async def get(self) -> None:
        fed = await self.fed()
        self.only_query_args("site", "state", "name", "limit", "offset")
        site = self.get_query_argument("site", None) or None
        raw = self.get_query_argument("state", "")
        try:
            states = [JobState(s.strip().upper()) for s in raw.split(",") if s.strip()] or None
        except ValueError:
            raise ApiError(400, "bad-input", f"unknown state in {raw!r}; expected "
                           f"{', '.join(s.value for s in JobState)}") from None
        name = self.get_query_argument("name", None) or None
        limit, offset = self.page_args()
        jobs = fed.jobs(site=site, states=states, name_like=name, limit=limit, offset=offset)
        total = fed.count_jobs(site=site, states=states, name_like=name)
        self.reply({"jobs": listed_jobs(fed, jobs), "total": total,
                    "limit": limit, "offset": offset})

    @authenticated
    @authorized
    @api
    async def post(self) -> None:
        fed = await self.fed()
        body = self.parse(SubmitBody)
        spec = await self.spec_from(fed, body)
        try:
            job = await fed.submit(spec, body.site or "auto", origin=body.origin,
                                   force=body.force, hedge=body.hedge, hold=body.hold)
        except SubmitUnsure as lost:  # the scheduler may have the job: looked for meanwhile
            job = fed.start_looking_for(lost)
            self.set_header("Location", self.request.path.rstrip("/") + "/" + job.id)
            self.reply(job_json(job) | {"lookout": fed.lookout(job.id)}, 202)
            return
        self.set_header("Location", self.request.path.rstrip("/") + "/" + job.id)
        self.reply(job_json(job), 201)


class JobHandler(DiamondHandler):
    @authenticated
    @authorized
    @api
    async def get(self, job_id: str) -> None:
        fed = await self.fed()
        job = self.job_or_404(fed, job_id)
        lookout = fed.lookout(job.id)  # a submit whose answer was lost: where its search is
        self.reply(job_json(job) | {"depends_on": dependencies_json(fed.dependencies(job.id))}
                   | ({"lookout": lookout} if lookout else {}))

    @authenticated
    @authorized
    @api
    async def delete(self, job_id: str) -> None:
        """No DELETE: a job is cancelled, not deleted (it stays in the store, CANCELLED)."""
        raise ApiError(405, "method-not-allowed",
                       f"DELETE is not allowed on jobs/{job_id}: to cancel the job, POST "
                       f"jobs/{job_id}/cancel (the job stays listed, CANCELLED); this route "
                       "takes GET only", headers={"Allow": "GET"})


class JobCancelHandler(DiamondHandler):
    takes_no_body = True

    @authenticated
    @authorized
    @api
    async def post(self, job_id: str) -> None:
        self.refuse_a_body(f"POST jobs/{job_id}/cancel")
        fed = await self.fed()
        self.job_or_404(fed, job_id)
        self.reply(job_json(await fed.cancel(job_id)))


class JobReleaseHandler(DiamondHandler):
    takes_no_body = True

    @authenticated
    @authorized
    @api
    async def post(self, job_id: str) -> None:
        """Release a job submitted held: the job, with `release_waiting` saying what a
        release kept during its stage-in waits for (null: sent to the scheduler)."""
        self.refuse_a_body(f"POST jobs/{job_id}/release")
        fed = await self.fed()
        self.job_or_404(fed, job_id)
        job = await fed.release(job_id)
        self.reply(job_json(job) | {"release_waiting": fed.release_waiting(job.id)})


class JobLogsHandler(DiamondHandler):
    @authenticated
    @authorized
    @api
    async def get(self, job_id: str) -> None:
        fed = await self.fed()
        self.job_or_404(fed, job_id)
        lines = self.int_arg("lines", 100, lo=1, hi=10000)
        self.reply(await fed.logs(job_id, lines=lines or 100))


class JobFilesHandler(DiamondHandler):
    @authenticated
    @authorized
    @api
    async def get(self, job_id: str) -> None:
        fed = await self.fed()
        self.job_or_404(fed, job_id)
        self.reply({"files": await fed.files(job_id)})


class JobFetchHandler(DiamondHandler):
    @authenticated
    @authorized
    @api
    async def post(self, job_id: str) -> None:
        """Copy the results into the server's root_dir; paths come back relative to it."""
        fed = await self.fed()
        job = self.job_or_404(fed, job_id)
        root = Path(self.settings.get("server_root_dir", ".")).expanduser().resolve()
        body = self.parse(FetchBody, {"job_id": job_id})
        dest = body.dest or f"diamond-results/{job.id.replace(':', '-')}"
        target = (root / dest.lstrip("/") if not Path(dest).is_absolute()
                  else Path(dest)).resolve()
        if target != root and root not in target.parents:
            raise ApiError(400, "bad-input", f"dest {dest!r} is outside the server's root "
                           "directory")
        got = await fed.fetch(job_id, target, files=body.files, overwrite=body.overwrite,
                              max_file_bytes=body.max_file_bytes)
        self.reply({"paths": [p.resolve().relative_to(root).as_posix() for p in got.paths],
                    "dest": target.relative_to(root).as_posix(), "skipped": got.skipped})


class TranslateHandler(DiamondHandler):
    @authenticated
    @authorized
    @api
    async def post(self) -> None:
        fed = await self.fed()
        body = self.parse(TranslateBody)
        text, warnings, spec = await asyncio.to_thread(fed.translate, body.script, body.to,
                                                       body.from_dialect or None)
        self.reply({"script": text, "warnings": warnings, "spec": spec.model_dump(mode="json")})


class EventsHandler(DiamondHandler):
    @authenticated
    @authorized
    @api
    async def get(self) -> None:
        """Replay stored events after `since` (a reconnecting client's catch-up)."""
        fed = await self.fed()
        self.only_query_args("since", "limit", "job_id", "kinds", "emissions")
        since = self.int_arg("since", 0) or 0
        limit = self.limit_arg(1000, 10000)
        job_id = self.get_query_argument("job_id", None) or None
        if job_id is not None:  # another store's job, or no job: said, not an empty replay
            job_id = self.job_or_404(fed, job_id).id
        kinds = [k.strip() for k in self.get_query_argument("kinds", "").split(",") if k.strip()]
        for k in kinds:
            if not _EVENT_KIND.fullmatch(k):
                raise ApiError(400, "bad-input", f"kinds: {k!r} is no event kind: a kind is "
                               "lower-case words joined by dots (job.state), matched as "
                               "written, or a prefix ending in .* (job.*); leave kinds out "
                               "for every kind")
        if self.get_query_argument("emissions", "0") not in ("0", "1"):
            raise ApiError(400, "bad-input", "emissions must be 0 or 1, not "
                           f"{self.get_query_argument('emissions')!r}")
        last = fed.last_seq()
        events = fed.events_since(since, kinds=kinds or None, job_id=job_id, limit=limit)
        more = len(events) == limit
        out: dict[str, Any] = {"events": [views.event_json(e) for e in events],
                               "last_seq": (events[-1].seq or last) if more else max(last, since),
                               "more": more}
        if self.get_query_argument("emissions", "0") == "1":
            mapped = (to_emission(e, fed) for e in events)
            out["emissions"] = [{"schema_id": sid, **data} for sid, data in
                                (m for m in mapped if m is not None)]
        self.reply(out)


class TransfersHandler(DiamondHandler):
    @authenticated
    @authorized
    @api
    async def get(self) -> None:
        fed = await self.fed()
        limit, offset = self.page_args()
        self.reply({"transfers": fed.transfers(limit=limit, offset=offset)})

    @authenticated
    @authorized
    @api
    async def post(self) -> None:
        """Start a transfer {"src": "SITE:PATH", "dst": "SITE:PATH", "via"?, "recursive"?,
        "overwrite"?, "wait"?}: at once (202; progress follows as transfer-progress events)
        or, with "wait", when it has ended (200). Files it leaves are in `data.skipped`."""
        fed = await self.fed()
        body = self.parse(TransferBody)
        rec = await fed.transfer(body.src, body.dst, body.via, recursive=body.recursive,
                                 wait=body.wait, overwrite=body.overwrite)
        self.reply(rec.model_dump(mode="json"), status=200 if body.wait else 202)


class TransferCancelHandler(DiamondHandler):
    takes_no_body = True

    @authenticated
    @authorized
    @api
    async def post(self, transfer_id: str) -> None:
        """Cancel a transfer: its record, CANCELLED (one cancelled before, as it is); 404
        when unknown, 400 when it had ended otherwise (the message says how)."""
        self.refuse_a_body(f"POST transfers/{transfer_id}/cancel")
        fed = await self.fed()
        found_or_404(fed.transfer_status, transfer_id)
        self.reply((await fed.cancel_transfer(transfer_id)).model_dump(mode="json"))


class _AgentHandler(DiamondHandler):
    async def agent(self) -> Any:
        """The server's agent service, started, configured by the DiamondApp.llm_*
        traitlets (503 with how to configure one when no LLM is set up)."""
        from ..agent import LLMConfig

        await self.fed()
        llm = LLMConfig(provider=self.app.llm_provider, model=self.app.llm_model,
                        api_key_env=self.app.llm_api_key_env,
                        base_url=self.app.llm_base_url or None)
        if (why := llm.missing()) is not None:
            raise ApiError(503, "llm-not-configured", why)
        agent = self.app.agent_service()
        await agent.start(llm)
        return agent


class TasksHandler(_AgentHandler):
    @authenticated
    @authorized
    @api
    async def get(self) -> None:
        fed = await self.fed()
        limit, offset = self.page_args()
        self.reply({"tasks": fed.tasks(limit=limit, offset=offset)})

    # -- agent tasks ----------------------------------------------------------------------
    @authenticated
    @authorized
    @api
    async def post(self) -> None:
        """Start an agent task; it runs in the server (202: follow it by events or GET)."""
        body = self.parse(AskBody)
        agent = await self.agent()
        task = await agent.ask(body.prompt, approval=body.approval or self.app.agent_approval,
                               origin=body.origin, on_stuck=body.on_stuck)
        self.set_header("Location", self.request.path.rstrip("/") + "/" + task["id"])
        self.reply(task, 202)


class _TaskHandler(_AgentHandler):
    async def task_or_404(self, fed: Any, task_id: str) -> dict[str, Any]:
        return found_or_404(fed.task, task_id)


class TaskHandler(_TaskHandler):
    @authenticated
    @authorized
    @api
    async def get(self, name: str) -> None:
        self.reply(await self.task_or_404(await self.fed(), name))


class TaskApproveHandler(_TaskHandler):
    @authenticated
    @authorized
    @api
    async def post(self, name: str) -> None:
        agent = await self.agent()
        await self.task_or_404(agent.fed, name)
        self.reply(await agent.approve(name, self.parse(ApproveBody).plan_sha256))


class TaskRejectHandler(_TaskHandler):
    @authenticated
    @authorized
    @api
    async def post(self, name: str) -> None:
        agent = await self.agent()
        await self.task_or_404(agent.fed, name)
        self.reply(await agent.reject(name, self.parse(RejectBody).reason or ""))


class OpenAPIHandler(DiamondHandler):
    @authenticated
    @authorized
    async def get(self) -> None:
        """The API description (served even when diamond is not configured)."""
        self.finish(OPENAPI.read_text(), set_content_type="application/yaml; charset=utf-8")
