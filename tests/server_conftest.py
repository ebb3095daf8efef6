"""Fixtures for the server-extension tests (a pytest plugin; tests list it in pytest_plugins).

A Jupyter server with the diamond extension pointed at the real local Slurm test bed, and an
`api` caller that checks every response against server/openapi.yaml.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from openapi_core import OpenAPI
from openapi_core.testing import MockRequest, MockResponse

from diamond_jupyter.server.handlers import OPENAPI

pytest_plugins = ("pytest_jupyter.jupyter_server",)


@pytest.fixture
async def _asyncio_test_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


@pytest.fixture(autouse=True)
def jp_asyncio_loop(request):
    """Serve on pytest-asyncio's loop (the project runs asyncio_mode=auto): the test
    coroutine and the server then share one loop. pytest-asyncio owns and closes it.

    This plugin is loaded for the whole session, so synchronous tests (the Playwright UI
    tests among them) get a fresh loop that is not running, as pytest-jupyter gives."""
    if inspect.iscoroutinefunction(getattr(request, "function", None)):
        yield request.getfixturevalue("_asyncio_test_loop")
        return
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield loop
    loop.close()


def diamond_config(sites_file: str, store: str) -> dict[str, Any]:
    return {
        "ServerApp": {"jpserver_extensions": {"diamond_jupyter": True}},
        "DiamondApp": {"sites_file": sites_file, "store_path": store, "min_poll_s": 0.3,
                       "poll_interval_s": 5.0, "store_poll_s": 0.5},
    }


@pytest.fixture
def jp_server_config(tb, tmp_path, data_dir):
    return diamond_config(str(tb.config_path), str(tmp_path / "store.sqlite3"))


@pytest.fixture(scope="session")
def openapi_spec() -> OpenAPI:
    return OpenAPI.from_dict(yaml.safe_load(OPENAPI.read_text()))


@dataclass
class Reply:
    code: int
    body: Any
    headers: Any


class Api:
    """`await api.get("jobs", params=...)`, `await api.post("jobs", {...}, expect=201)`."""

    def __init__(self, fetch: Any, base_url: str, spec: OpenAPI) -> None:
        self.fetch, self.base_url, self.spec = fetch, base_url, spec

    async def call(self, method: str, path: str, body: Any = None, *, params: dict | None = None,
                   expect: int | None = 200, raw: bytes | None = None,
                   validate: bool = True) -> Reply:
        data = raw if raw is not None else (
            json.dumps(body).encode() if body is not None else None)
        if method == "POST" and data is None:
            data = b"{}"
        resp = await self.fetch("diamond", "api", *path.split("/"), method=method, body=data,
                                params=params, raise_error=False)
        text = resp.body.decode()
        ctype = resp.headers.get("Content-Type", "").split(";")[0]
        parsed = json.loads(text) if ctype == "application/json" and text else text
        if expect is not None:
            assert resp.code == expect, f"{method} {path}: {resp.code} {text[:2000]}"
        if validate:
            self.validate(method, path, params, data, resp.code, resp.body, ctype)
        return Reply(resp.code, parsed, resp.headers)

    def validate(self, method: str, path: str, params: dict | None, data: bytes | None,
                 code: int, body: bytes, ctype: str) -> None:
        req = MockRequest("http://localhost", method, "/diamond/api/" + path,
                          args={k: str(v) for k, v in (params or {}).items()},
                          data=data if method == "POST" else None)
        self.spec.validate_response(req, MockResponse(body, status_code=code,
                                                      content_type=ctype))

    async def get(self, path: str, **kw: Any) -> Any:
        return (await self.call("GET", path, **kw)).body

    async def post(self, path: str, body: Any = None, **kw: Any) -> Any:
        return (await self.call("POST", path, body, **kw)).body


@pytest.fixture
def api(jp_fetch, jp_base_url, openapi_spec) -> Api:
    return Api(jp_fetch, jp_base_url, openapi_spec)


def job_path(job_id: str, *rest: str) -> str:
    """A job route; the id's colon is sent percent-encoded, as browsers do."""
    return "/".join(["jobs", urllib.parse.unquote(job_id), *rest])


class RecordingHttp:
    """A ServerClient's HTTP client going through the test server's own (bound to the
    server's loop), noting each request's method, path, type, body and answer in `seen`."""

    def __init__(self, http: Any) -> None:
        self._http = http
        self.seen: list[tuple[str, str, str | None, bytes | None, int]] = []

    async def fetch(self, request: Any, **kw: Any) -> Any:
        # the test server's client takes the path; the request's method, headers and body
        # are sent as the ServerClient made them
        url = urlsplit(request.url)
        resp = await self._http.fetch(url.path + (f"?{url.query}" if url.query else ""),
                                      method=request.method, headers=request.headers,
                                      body=request.body, allow_nonstandard_methods=True, **kw)
        path = request.url.split("/diamond/api/", 1)[1]
        self.seen.append((request.method, path, request.headers.get("Content-Type"),
                          request.body, resp.code))
        return resp


@pytest.fixture
def server_client(jp_serverapp, http_server_client, jp_http_port, jp_base_url,
                  tmp_path: Path) -> Any:
    """The kernel's client of this test's server (`kernel.rest.ServerClient`, as the magics
    and the CLI use it with a server running), rooted at tmp_path; its HTTP client a
    `RecordingHttp` (`server_client._http.seen`)."""
    from diamond_jupyter.kernel.rest import ServerClient

    client = ServerClient(f"http://127.0.0.1:{jp_http_port}{jp_base_url}",
                          jp_serverapp.identity_provider.token, root_dir=str(tmp_path))
    client._http = RecordingHttp(http_server_client)
    return client
