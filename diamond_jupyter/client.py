"""Engine access for the kernel: the user's running Jupyter server (`client_rest`) when
there is one with the diamond extension, else a Federation in-process.

Both engines run their I/O on a private asyncio loop in a daemon thread, so the kernel's own
loop is never blocked by, nor re-entered from, engine work. `call(coro)` bridges sync code.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from .model import Job, JobSpec, SiteError

log = logging.getLogger(__name__)

JobCallback = Callable[[Job], Any]
_JOB_FIELDS = set(Job.model_fields)


def job_from_json(data: dict[str, Any]) -> Job:
    """A Job from REST JSON, tolerating fields this client does not know."""
    return Job.model_validate({k: v for k, v in data.items() if k in _JOB_FIELDS})


def build_spec(text: str, *, name: str | None = None,
               overrides: dict[str, Any] | None = None) -> JobSpec:
    """Cell text in any dialect (or none) -> JobSpec, with the magic's options applied."""
    from .federation import Federation

    spec = Federation.parse(text)
    upd: dict[str, Any] = {}
    res: dict[str, Any] = {}
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key == "queue":
            upd["queue"] = value
        else:
            res[key] = value
    if res:
        upd["resources"] = spec.resources.model_copy(update=res)
    if name:
        upd["name"] = name
    return spec.model_copy(update=upd) if upd else spec


class _LoopThread:
    """An asyncio loop in a daemon thread."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()

    def submit(self, coro: Coroutine[Any, Any, Any]) -> Future:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)


class Engine:
    """What magics and handles call. Async methods run on the engine's loop."""

    kind = "engine"

    def __init__(self, note: str = "") -> None:
        self.note = note  # why this engine was chosen
        self._lt = _LoopThread(f"diamond-{self.kind}")

    def call(self, coro: Coroutine[Any, Any, Any], timeout: float | None = None) -> Any:
        """Run `coro` on the engine loop and wait for its result (from any other thread)."""
        fut = self._lt.submit(coro)
        try:
            return fut.result(timeout)
        except KeyboardInterrupt:
            fut.cancel()
            raise

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> Future:
        return self._lt.submit(coro)

    def close(self) -> None:
        try:
            self.call(self._aclose(), timeout=10)
        except Exception:  # closing is best effort
            log.debug("engine close failed", exc_info=True)
        self._lt.stop()

    async def _aclose(self) -> None:
        pass

    def time_limit(self, job: Job) -> int | None:
        """The job's time limit in seconds, when it asked for one."""
        return job.spec.resources.walltime_s if job.spec else None

    # The API (implemented by both engines) ---------------------------------------------
    async def sites(self) -> list[dict[str, Any]]: raise NotImplementedError
    async def snapshot(self, site: str) -> dict[str, Any]: raise NotImplementedError
    async def place(self, text: str) -> dict[str, Any]: raise NotImplementedError
    async def jobs(self, site: str | None = None, state: str | None = None,
                   limit: int = 50) -> list[Job]: raise NotImplementedError
    async def submit(self, text: str, *, site: str = "auto", name: str | None = None,
                     overrides: dict[str, Any] | None = None,
                     origin: dict[str, Any] | None = None) -> Job: raise NotImplementedError
    async def job(self, job_id: str, refresh: bool = False) -> Job: raise NotImplementedError
    async def cancel(self, job_id: str) -> Job: raise NotImplementedError
    async def logs(self, job_id: str, lines: int = 100) -> dict[str, str]:
        raise NotImplementedError
    async def files(self, job_id: str) -> list[str]: raise NotImplementedError
    async def fetch(self, job_id: str, dest: str | None = None) -> list[str]:
        raise NotImplementedError
    async def translate(self, text: str, to: str,
                        from_: str | None = None) -> tuple[str, list[str]]:
        raise NotImplementedError
    async def watch(self, job_id: str, callback: JobCallback) -> Job:
        """Call `callback(job)` with the job now and after each change; return it at its end."""
        raise NotImplementedError
    async def transfer(self, src: str, dst: str, via: str | None = None,
                       recursive: bool = False) -> dict[str, Any]:
        """Copy SITE:PATH (or a server path) to another; returns the finished record."""
        raise NotImplementedError


# -- in-process ------------------------------------------------------------------------------

class LocalEngine(Engine):
    kind = "local"

    def __init__(self, config: str | Path | None = None, note: str = "") -> None:
        super().__init__(note)
        self._config = config
        self._fed: Any = None
        self._fed_lock = asyncio.Lock()

    async def fed(self) -> Any:
        async with self._fed_lock:
            if self._fed is None:
                from .federation import Federation

                fed = Federation(self._config, poll_interval_s=30.0, min_poll_s=1.0)
                await fed.start(recover=False)
                self._fed = fed
            return self._fed

    async def _aclose(self) -> None:
        if self._fed is not None:
            await self._fed.close()

    async def sites(self) -> list[dict[str, Any]]:
        fed = await self.fed()
        snaps = await fed.snapshots()
        rows = []
        for cfg in fed.config.sites:
            if cfg.name not in fed.sites:
                continue
            s = snaps.get(cfg.name)
            rows.append({"name": cfg.name, "scheduler": cfg.scheduler,
                         "host": cfg.transport.host, "reachable": s.reachable if s else None,
                         "error": s.error if s else None, "nodes": len(s.nodes) if s else None,
                         "partitions": [p.name for p in s.partitions] if s else [],
                         "running": len(s.running) if s else None,
                         "pending": len(s.pending) if s else None})
        return rows

    async def snapshot(self, site: str) -> dict[str, Any]:
        fed = await self.fed()
        return (await fed.snapshot(site, max_age_s=0)).model_dump(mode="json")

    async def place(self, text: str) -> dict[str, Any]:
        fed = await self.fed()
        return (await fed.place(build_spec(text))).model_dump(mode="json")

    async def jobs(self, site: str | None = None, state: str | None = None,
                   limit: int = 50) -> list[Job]:
        fed = await self.fed()
        return fed.jobs(site=site, states=[state] if state else None, limit=limit)

    async def submit(self, text: str, *, site: str = "auto", name: str | None = None,
                     overrides: dict[str, Any] | None = None,
                     origin: dict[str, Any] | None = None) -> Job:
        fed = await self.fed()
        spec = build_spec(text, name=name, overrides=overrides)
        return await fed.submit(spec, site, origin=origin)

    async def job(self, job_id: str, refresh: bool = False) -> Job:
        return await (await self.fed()).status(job_id, refresh=refresh)

    async def cancel(self, job_id: str) -> Job:
        return await (await self.fed()).cancel(job_id)

    async def logs(self, job_id: str, lines: int = 100) -> dict[str, str]:
        return await (await self.fed()).logs(job_id, lines=lines)

    async def files(self, job_id: str) -> list[str]:
        return await (await self.fed()).files(job_id)

    async def fetch(self, job_id: str, dest: str | None = None) -> list[str]:
        return [str(p) for p in await (await self.fed()).fetch(job_id, dest)]

    async def transfer(self, src: str, dst: str, via: str | None = None,
                       recursive: bool = False) -> dict[str, Any]:
        rec = await (await self.fed()).transfer(src, dst, via, recursive=recursive)
        return rec.model_dump(mode="json")

    async def translate(self, text: str, to: str,
                        from_: str | None = None) -> tuple[str, list[str]]:
        from .federation import Federation

        script, warnings, _ = Federation.translate(text, to, from_)
        return script, warnings

    async def watch(self, job_id: str, callback: JobCallback) -> Job:
        fed = await self.fed()

        def until(job: Job) -> bool:  # called now and after each event for this job
            callback(job)
            return job.state.terminal
        return await fed.wait(job_id, until=until)


# -- discovery ---------------------------------------------------------------------------------

def find_server() -> dict[str, Any] | None:
    """The Jupyter server that started this kernel: its runtime file, matched by parent pid."""
    if os.environ.get("DIAMOND_SERVER_URL"):
        return {"url": os.environ["DIAMOND_SERVER_URL"],
                "token": os.environ.get("DIAMOND_SERVER_TOKEN", ""), "pid": None}
    try:
        from jupyter_server.serverapp import list_running_servers
    except ImportError:
        return None
    ppid = os.getppid()
    for info in list_running_servers():
        if info.get("pid") == ppid:
            return info
    return None


def probe(info: dict[str, Any], timeout: float = 5.0) -> tuple[bool, str]:
    """Whether the server has the diamond extension: GET diamond/api/state."""
    url = info["url"].rstrip("/") + "/diamond/api/state"
    headers = {"Authorization": f"token {info['token']}"} if info.get("token") else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                    timeout=timeout):
            return True, f"Jupyter server {info['url']}"
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return False, f"Jupyter server {info['url']} has no diamond extension (404)"
        return False, f"Jupyter server {info['url']} answered {e.code}"
    except OSError as e:
        return False, f"Jupyter server {info['url']} unreachable ({e})"


def connect(config: str | Path | None = None) -> Engine:
    """The user's server when it runs the diamond extension, else the engine in-process.
    DIAMOND_ENGINE=local|server forces one."""
    mode = os.environ.get("DIAMOND_ENGINE", "auto").lower()
    note = "DIAMOND_ENGINE=local"
    if mode != "local":
        info = find_server()
        if info is None:
            note = f"no Jupyter server found for parent pid {os.getppid()}"
        else:
            ok, note = probe(info)
            if ok:
                from .client_rest import ServerClient

                return ServerClient(info["url"], info.get("token", ""), note=note,
                                    root_dir=info.get("root_dir"))
        if mode == "server":
            raise SiteError(f"DIAMOND_ENGINE=server but {note}")
    return LocalEngine(config, note=note + "; running the engine in-process")
