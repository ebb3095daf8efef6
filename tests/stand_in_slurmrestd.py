"""slurmrestd at the wire for tests: an HTTP/1.1 server on a local port that keeps each
request and answers it from replies per path or from a function, and the `RestSite` (or
transport) that talks to it. Not the test bed: no Slurm behind it."""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.sites_rest import RestSite

# What `GET licenses` answers on a cluster that defines none.
NO_LICENSES = '{"licenses": [], "errors": []}'
# What `GET diag` answers where slurmctld's backfill (sched/backfill) has run its cycles.
BACKFILLING_DIAG = ('{"errors": [], "statistics": {"schedule_cycle_counter": 40, '
                    '"bf_active": false, "bf_cycle_counter": 12, "bf_backfilled_jobs": 3}}')
# An answer: the HTTP status and the body's text.
Answer = tuple[int, str]
# What to answer a request (method, path, body) with; may be a coroutine (e.g. to hang).
AnswerFunction = Callable[[str, str, bytes], Answer | Awaitable[Answer]]


def unexpiring_jwt() -> str:
    """A JWT slurmrestd's client reads as valid until 2100 (unsigned: nothing checks it)."""
    def b64(d: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(d).encode()).decode().rstrip("=")
    return f"{b64({'alg': 'none'})}.{b64({'exp': 4102444800})}.sig"


def jwt_file(directory: Path) -> Path:
    """`directory/jwt` holding an `unexpiring_jwt()`: a site's `token_file`."""
    path = directory / "jwt"
    path.write_text(unexpiring_jwt())
    return path


class StandInSlurmrestd:
    """`async with StandInSlurmrestd(...) as rest:` serves on `rest.port` until the block
    ends, keeping every request in `rest.requests` as (method, path, body bytes).

    `replies` maps the last segment of a request's path (`jobs`, `nodes`, `submit`, `qos`
    ...) to its reply: a string or a JSON-able value given every time, or a list of them
    given one per request, in turn. A slurmdb path it does not name is answered as by a
    slurmrestd without its slurmdb plugin (HTTP 404, the plain text recorded in
    bad_version.txt); `licenses`, not named, as by a cluster that defines none; `diag` as by
a slurmctld whose backfill has run (BACKFILLING_DIAG). Any other
    path goes to `answer(method, path, body)`, which returns (status, text), awaited when
    it is a coroutine."""

    def __init__(self, replies: dict[str, Any] | None = None,
                 answer: AnswerFunction | None = None) -> None:
        self.replies = dict(replies or {})
        self.answer = answer
        self.requests: list[tuple[str, str, bytes]] = []
        self.port = 0
        self._server: asyncio.Server | None = None

    @property
    def paths(self) -> list[str]:
        """Each request's path, in order."""
        return [path for _, path, _ in self.requests]

    @property
    def asked(self) -> list[str]:
        """The last segment of each request's path, in order."""
        return [path.rsplit("/", 1)[1] for path in self.paths]

    def bodies(self) -> list[tuple[str, Any]]:
        """Each request's path and its body parsed as JSON."""
        return [(path, json.loads(body)) for _, path, body in self.requests]

    async def __aenter__(self) -> StandInSlurmrestd:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def site(self, tmp_path: Path, name: str = "rest", **transport: Any) -> RestSite:
        """A `RestSite` named `name` on this server as user `u`, its token in
        `tmp_path/jwt`; `transport` adds options (`api_version`, `command_timeout_s` ...)."""
        return RestSite(SiteConfig(name=name, workdir="/home/u/.diamond", transport={
            "kind": "slurmrestd", "url": self.url, "user": "u",
            "token_file": str(jwt_file(tmp_path)), **transport}))

    async def _reply(self, method: str, path: str, body: bytes) -> Answer:
        last = path.rsplit("/", 1)[1]
        if last in self.replies:
            reply = self.replies[last]
            if isinstance(reply, list):
                reply = reply.pop(0)
            return 200, reply if isinstance(reply, str) else json.dumps(reply)
        if last == "licenses":
            return 200, NO_LICENSES
        if last == "diag":
            return 200, BACKFILLING_DIAG
        if self.answer is None:
            raise AssertionError(f"the stand-in slurmrestd has no reply for {method} {path}")
        got = self.answer(method, path, body)
        return await got if inspect.isawaitable(got) else got

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                lines = head.decode().split("\r\n")
                method, path = lines[0].split(" ")[:2]
                length = next((int(ln.split(":", 1)[1]) for ln in lines
                               if ln.lower().startswith("content-length:")), 0)
                body = await reader.readexactly(length)
                self.requests.append((method, path, body))
                kind = b"application/json"
                if path.startswith("/slurmdb/") and path.rsplit("/", 1)[1] not in self.replies:
                    code, kind = 404, b"text/plain"
                    text = (Path(__file__).parent / "fixtures" / "outputs" / "slurmrestd"
                            / "bad_version.txt").read_text()
                else:
                    code, text = await self._reply(method, path, body)
                data = text.encode()
                writer.write(b"HTTP/1.1 %d X\r\ncontent-type: %s\r\n"
                             b"content-length: %d\r\n\r\n%s" % (code, kind, len(data), data))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
