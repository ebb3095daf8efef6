"""The kernel's and the CLI's client of a running server (`kernel.rest.ServerClient`, also the
agent's task calls in notebooks) sends every POST body as JSON, so the server, which refuses
another type with 415, reads each (a real Jupyter server with the extension; a local site, no
test bed)."""

from __future__ import annotations

import json

import pytest
import sweep_helpers

from diamond_jupyter.model import BadInput, SiteError

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")


jp_server_config = sweep_helpers.one_local_site_server


async def test_every_post_of_the_client_is_json_and_read(server_client, tmp_path):
    script, _ = await server_client.translate("#SBATCH -N 2\necho hi\n", "pbs")
    assert "#PBS" in script
    missing = [  # each reaches its handler: the server says what is missing, not the type
        lambda: server_client.cancel("here:999999"),
        lambda: server_client.release("here:999999"),
        lambda: server_client.fetch("here:999999", str(tmp_path / "res")),
        lambda: server_client.cancel_transfer("no-such-transfer"),
        lambda: server_client.cancel_workflow("no-such-workflow"),
        lambda: server_client.request("POST", "tasks/no-such-task/approve", {}),
        lambda: server_client.request("POST", "tasks/no-such-task/reject", {}),
    ]
    for call in missing:
        with pytest.raises((BadInput, SiteError)) as err:
            await call()
        assert "JSON only" not in str(err.value), err.value
    posts = [s for s in server_client._http.seen if s[0] == "POST"]
    assert len(posts) == 1 + len(missing), server_client._http.seen
    for _, path, kind, body, code in posts:
        assert code != 415, (path, kind)
        assert kind == "application/json", (path, kind)
        assert isinstance(json.loads(body), dict), (path, body)
    assert {code for *_, code in posts[1:]} <= {404, 503}, posts
