"""ServerClient: the engine reached through the user's Jupyter server (REST under
`{base_url}diamond/api/`, job changes from the server's `/api/events/subscribe` websocket)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from ..aio import within
from ..job_dependencies import JobDependency
from ..log_lines import one_line_logger
from ..model import BadInput, DiamondError, Job, SiteError, is_provisional, visible
from ..option_types import SPEC_OPTIONS
from .engine import Engine, JobCallback, job_from_json

log = one_line_logger(__name__)

MAX_LOG_LINES = 10_000  # the server's cap on GET jobs/{id}/logs?lines=
SAFETY_REFRESH_S = 60.0  # re-read watched jobs this often even without events


_SITE_PREFIX = re.compile(r"^[A-Za-z0-9_.-]+:")  # "SITE:PATH", as transfer.parse_location


def _server_path(loc: str) -> str:
    """A location without a site made absolute here (the server resolves a relative path
    against its root directory, not against this command's working directory)."""
    if _SITE_PREFIX.match(loc) and not loc.startswith(("./", "/")):
        return loc
    return str(Path(loc).expanduser().resolve()) + ("/" if loc.endswith("/") else "")

class ServerClient(Engine):
    kind = "server"

    def __init__(self, url: str, token: str = "", note: str = "",
                 root_dir: str | None = None) -> None:
        super().__init__(note)
        self.root_dir = root_dir
        self.url = url.rstrip("/") + "/"
        self.api = self.url + "diamond/api/"
        self.token = token
        self._watchers: dict[str, set[asyncio.Queue[None]]] = {}
        self._ws_task: asyncio.Future | None = None
        self._http: Any = None
        self._limits: dict[str, int] = {}  # job id -> time limit (s), from the server's JSON

    def _job(self, data: dict[str, Any]) -> Job:
        job = job_from_json(data)
        if isinstance(data.get("time_limit_s"), int):
            self._limits[job.id] = data["time_limit_s"]
        if isinstance(data.get("lookout"), dict):  # its submit's answer was lost
            self._lookouts[job.token or job.id] = data["lookout"]
        return job

    def time_limit(self, job: Job) -> int | None:
        return super().time_limit(job) or self._limits.get(job.id)

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"} if self.token else {}

    async def request(self, method: str, path: str, body: Any = None,
                      **query: Any) -> Any:
        from tornado.httpclient import AsyncHTTPClient, HTTPRequest

        if self._http is None:
            self._http = AsyncHTTPClient()
        q = {k: v for k, v in query.items() if v is not None}
        url = self.api + path + (("?" + urlencode(q)) if q else "")
        req = HTTPRequest(url, method=method, headers={**self._headers(),
                          "Content-Type": "application/json"},
                          body=json.dumps(body) if body is not None else
                          (b"" if method == "POST" else None), request_timeout=600)
        try:
            resp = await self._http.fetch(req, raise_error=False)
        except OSError as e:
            raise SiteError(f"Jupyter server at {self.url} unreachable: {e}") from None
        text = resp.body.decode() if resp.body else ""
        if resp.code >= 400 or resp.code == 599:
            raise _http_error(resp.code, text, path)
        return json.loads(text) if text else None

    async def sites(self) -> list[dict[str, Any]]:
        """Live rows (the sidebar's SiteRows) from GET state."""
        state = await self.request("GET", "state")
        if note := state.get("sites_file_changed"):  # the edited file is not what is listed
            print(f"diamond: {visible(note)}", file=sys.stderr)
        rows = state.get("sites", [])
        for r in rows:  # one shape for both engines
            r.setdefault("nodes", r.get("nodes_total"))
            r["partitions"] = [p["name"] if isinstance(p, dict) else p
                               for p in r.get("partitions") or []]
        return rows

    async def snapshot(self, site: str) -> dict[str, Any]:
        return await self.request("GET", f"sites/{quote(site)}/snapshot")

    async def place(self, text: str) -> dict[str, Any]:
        return await self.request("POST", "place", {"script": text})

    async def jobs(self, site: str | None = None, state: str | None = None,
                   limit: int = 50) -> list[Job]:
        data = await self.request("GET", "jobs", site=site, state=state, limit=limit)
        return [job_from_json(j) for j in data.get("jobs", [])]

    async def submit(self, text: str, *, site: str = "auto", name: str | None = None,
                     overrides: dict[str, Any] | None = None,
                     origin: dict[str, Any] | None = None, hedge: int | None = None,
                     hold: bool = False) -> Job:
        force = bool((overrides or {}).get("force"))
        overridden = any(v is not None for k, v in (overrides or {}).items() if k != "force")
        from ..federation import Federation

        spec = Federation.spec_from_text(text, name=name, overrides=overrides,  # validates
                                         said_as=SPEC_OPTIONS)
        body: dict[str, Any] = {"site": site, "origin": origin or {}}
        if force:  # submit to the site given even if it lacks what the job needs
            body["force"] = True
        if hedge:
            body["hedge"] = hedge
        if hold:  # held until released (`%diamond release JOB`)
            body["hold"] = True
        if overridden:  # the options changed the parsed spec: send the spec itself
            body["spec"] = spec.model_dump(mode="json")
        else:
            body["script"] = text
        if name:
            body["name"] = name
        return self._job(await self.request("POST", "jobs", body))

    async def job(self, job_id: str, refresh: bool = False) -> Job:
        return self._job(await self.request("GET", f"jobs/{_q(job_id)}",
                                            refresh="1" if refresh else None))

    async def dependencies(self, job_id: str) -> list[JobDependency]:
        data = await self.request("GET", f"jobs/{_q(job_id)}")
        return [JobDependency.model_validate(d) for d in data.get("depends_on") or []]

    async def cancel(self, job_id: str) -> Job:
        return self._job(await self.request("POST", f"jobs/{_q(job_id)}/cancel", {}))

    async def release(self, job_id: str) -> tuple[Job, str | None]:
        data = await self.request("POST", f"jobs/{_q(job_id)}/release", {})
        return self._job(data), data.get("release_waiting")

    async def submit_notes(self, job_id: str) -> list[str]:
        """The job's stored job.warnings events (GET events)."""
        data = await self.request("GET", "events", job_id=job_id, kinds="job.warnings",
                                  limit=10000)
        return [str(w) for e in data.get("events", [])
                for w in (e.get("data") or {}).get("warnings") or []]

    async def logs(self, job_id: str, lines: int = 100) -> dict[str, str]:
        lines = min(lines, MAX_LOG_LINES)
        return await self.request("GET", f"jobs/{_q(job_id)}/logs", lines=lines)

    async def files(self, job_id: str) -> list[str]:
        return (await self.request("GET", f"jobs/{_q(job_id)}/files")).get("files", [])

    async def fetch(self, job_id: str, dest: str | None = None, *,
                    files: list[str] | None = None, overwrite: bool = False) -> dict[str, Any]:
        """The server copies into its root_dir; paths come back relative to that root."""
        body: dict[str, Any] = {"dest": str(Path(dest).resolve())} if dest else {}
        if files is not None:
            body["files"] = files
        if overwrite:
            body["overwrite"] = True
        got = await self.request("POST", f"jobs/{_q(job_id)}/fetch", body)
        root = Path(self.root_dir) if self.root_dir else Path.cwd()
        return {"dest": str(root / got.get("dest", "")),
                "paths": [str(root / p) for p in got.get("paths", [])],
                "skipped": list(got.get("skipped", []))}

    async def transfer(self, src: str, dst: str, via: str | None = None,
                       recursive: bool = False, *, overwrite: bool = False
                       ) -> dict[str, Any]:
        body = {"src": _server_path(src), "dst": _server_path(dst), "via": via,
                "recursive": recursive, "overwrite": overwrite, "wait": True}
        return await self.request("POST", "transfers", body)

    async def cancel_transfer(self, transfer_id: str) -> dict[str, Any]:
        return await self.request("POST", f"transfers/{_q(transfer_id)}/cancel", {})

    async def translate(self, text: str, to: str,
                        from_: str | None = None) -> tuple[str, list[str]]:
        body = {"script": text, "to": to} | ({"from": from_} if from_ else {})
        data = await self.request("POST", "translate", body)
        return data["script"], data.get("warnings", [])

    async def watch(self, job_id: str, callback: JobCallback) -> Job:
        q: asyncio.Queue[None] = asyncio.Queue()
        self._watchers.setdefault(job_id, set()).add(q)
        self._ensure_ws()
        try:
            job = await self.job(job_id)  # after subscribing: no change is missed
            callback(job)
            while not job.state.terminal:
                if job.id != job_id:  # a lost submit's job found: its events carry its id
                    self._watchers.get(job_id, set()).discard(q)
                    job_id = job.id
                    self._watchers.setdefault(job_id, set()).add(q)
                try:
                    await within(q.get(), SAFETY_REFRESH_S)
                except asyncio.TimeoutError:
                    pass
                while not q.empty():  # coalesce a burst of events into one read
                    q.get_nowait()
                try:
                    job = await self.job(job_id)
                except SiteError as e:  # the server restarts: its event stream says when back
                    log.info("diamond: cannot read %s (%s); waiting for the server", job_id, e)
                    continue
                callback(job)
            return job
        finally:
            self._watchers.get(job_id, set()).discard(q)

    # -- workflows ---------------------------------------------------------------------------
    async def run_workflow(self, text: str, origin: dict[str, Any] | None = None
                           ) -> dict[str, Any]:
        return await self.request("POST", "workflows", {"workflow": text,
                                                        "origin": origin or {}})

    async def workflow(self, workflow_id: str) -> dict[str, Any]:
        return await self.request("GET", f"workflows/{_q(workflow_id)}")

    async def cancel_workflow(self, workflow_id: str) -> dict[str, Any]:
        return await self.request("POST", f"workflows/{_q(workflow_id)}/cancel", {})

    async def watch_workflow(self, workflow_id: str, callback: Any) -> dict[str, Any]:
        """Re-read the workflow on each of its events (the server's engine drives it)."""
        key = f"workflow:{workflow_id}"
        q: asyncio.Queue[None] = asyncio.Queue()
        self._watchers.setdefault(key, set()).add(q)
        self._ensure_ws()
        try:
            while True:
                wf = await self.workflow(workflow_id)
                callback(wf)
                if wf["state"] in ("COMPLETED", "FAILED", "CANCELLED"):
                    return wf
                try:
                    await within(q.get(), SAFETY_REFRESH_S)
                except asyncio.TimeoutError:
                    pass
                while not q.empty():
                    q.get_nowait()
        finally:
            self._watchers.get(key, set()).discard(q)

    def _notify(self, job_id: str | None) -> None:
        for jid, queues in self._watchers.items():
            if job_id is None or jid == job_id:
                for q in queues:
                    q.put_nowait(None)

    def _notify_pending(self, site: str) -> None:
        """Wake the watchers of `site`'s provisional ids (SITE:pending-TOKEN): one of them
        may just have been bound to its native id."""
        for jid in [j for j in self._watchers if is_provisional(j, site)]:
            self._notify(jid)

    def _ensure_ws(self) -> None:
        if self._ws_task is None or self._ws_task.done():
            self._ws_task = asyncio.ensure_future(self._follow_events())

    async def _follow_events(self) -> None:
        """The server's event websocket; reconnects with backoff, re-reading jobs after."""
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        ws_url = "ws" + self.url[4:] + "api/events/subscribe"
        delay = 0.5
        while True:
            try:
                conn = await websocket_connect(HTTPRequest(ws_url, headers=self._headers()))
                self._notify(None)  # anything may have changed while we were not listening
                delay = 0.5
                while (msg := await conn.read_message()) is not None:
                    try:
                        data = json.loads(msg)
                    except ValueError:
                        continue
                    if "job-state" in str(data.get("schema_id", "")) and data.get("job_id"):
                        self._notify(data["job_id"])
                        if data.get("kind") == "job.submitted":  # a provisional id bound
                            self._notify_pending(str(data.get("site") or ""))
                    elif str(data.get("schema_id", "")).endswith("/workflow"):
                        self._notify(f"workflow:{data.get('workflow_id')}")
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.info("diamond: event stream from %s lost (%s)", self.url, e)
            await asyncio.sleep(delay)  # reconnect backoff, not synchronisation
            delay = min(delay * 2, 30.0)

    async def _aclose(self) -> None:
        if self._ws_task is not None:
            self._ws_task.cancel()


def _q(job_id: str) -> str:
    return quote(job_id, safe=":")


def _http_error(code: int, text: str, path: str) -> DiamondError:
    try:
        body = json.loads(text)
        msg = body.get("message") or body.get("reason") or body.get("error") or text
    except (ValueError, AttributeError):
        msg = text.strip() or f"HTTP {code}"
    msg = str(msg).strip().splitlines()[0] if str(msg).strip() else f"HTTP {code} on {path}"
    return BadInput(msg) if 400 <= code < 500 else SiteError(msg)
