"""The kernel's and the CLI's client of a running server (`kernel.rest.ServerClient`, also the
agent's task calls in notebooks) sends every POST body as JSON, so the server, which refuses
another type with 415, reads each (a real Jupyter server with the extension; a local site, no
test bed)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import pytest
import sweep_helpers

from diamond_jupyter.model import BadInput, SiteError

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")


jp_server_config = sweep_helpers.one_local_site_server


class _Recording:
    """The client's HTTP client, noting each request's method, path, type, body and answer."""

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
def client(jp_serverapp, http_server_client, jp_http_port, jp_base_url, tmp_path):
    from diamond_jupyter.kernel.rest import ServerClient

    c = ServerClient(f"http://127.0.0.1:{jp_http_port}{jp_base_url}",
                     jp_serverapp.identity_provider.token, root_dir=str(tmp_path))
    c._http = _Recording(http_server_client)  # (the client bound to the server's loop)
    return c


async def test_every_post_of_the_client_is_json_and_read(client, tmp_path):
    script, _ = await client.translate("#SBATCH -N 2\necho hi\n", "pbs")
    assert "#PBS" in script
    missing = [  # each reaches its handler: the server says what is missing, not the type
        lambda: client.cancel("here:999999"),
        lambda: client.release("here:999999"),
        lambda: client.fetch("here:999999", str(tmp_path / "res")),
        lambda: client.cancel_transfer("no-such-transfer"),
        lambda: client.cancel_workflow("no-such-workflow"),
        lambda: client.request("POST", "tasks/no-such-task/approve", {}),
        lambda: client.request("POST", "tasks/no-such-task/reject", {}),
    ]
    for call in missing:
        with pytest.raises((BadInput, SiteError)) as err:
            await call()
        assert "JSON only" not in str(err.value), err.value
    posts = [s for s in client._http.seen if s[0] == "POST"]
    assert len(posts) == 1 + len(missing), client._http.seen
    for _, path, kind, body, code in posts:
        assert code != 415, (path, kind)
        assert kind == "application/json", (path, kind)
        assert isinstance(json.loads(body), dict), (path, body)
    assert {code for *_, code in posts[1:]} <= {404, 503}, posts
