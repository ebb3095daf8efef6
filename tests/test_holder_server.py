"""A Jupyter server beside a kept login (`diamond login SITE --persist`), in the same runtime
directory: the server logs in on its own connection and never through the holder, so its
background work neither keeps the holder past its idle time nor is cut off when it ends.
A real server (the extension loaded), a real private sshd and the real holder process."""

from __future__ import annotations

import json

import pytest
from test_mfa_holder import _fed, _sites, runtime_dir  # noqa: F401 (a fixture)

from diamond_jupyter.transports import ssh_holder

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")


@pytest.fixture
def sites(tmp_path, own_sshd):
    return _sites(tmp_path, port=own_sshd.port, user=own_sshd.user, key=own_sshd.client_key,
                  known_hosts=own_sshd.base / "known_hosts")


@pytest.fixture
def jp_server_config(sites, runtime_dir, tmp_path, data_dir):  # noqa: F811
    from server_conftest import diamond_config

    return diamond_config(str(sites), str(tmp_path / "server.sqlite3"))


async def _server_login(jp_fetch) -> dict:
    reply = await jp_fetch("diamond", "api", "sites", "alpha", "login", method="POST",
                           body="{}")
    return json.loads(reply.body)


async def test_the_server_connects_itself_and_the_holder_still_ends_when_idle(
        jp_serverapp, jp_fetch, sites, tmp_path, own_sshd, runtime_dir):  # noqa: F811
    fed = _fed(sites, tmp_path, [])
    try:  # a command keeps a login for 2 s unused
        kept = await fed.login("alpha", persist_s=2)
    finally:
        await fed.close()
    pid = kept["holder"]["pid"]
    server = jp_serverapp.web_app.settings["diamond_federation"].site("alpha").transport
    assert await _server_login(jp_fetch) == {"site": "alpha", "new_connection": True}
    said = server.describe()
    assert (said["connections_opened"], said["holder_connections"]) == (1, 0)
    # the server's connection is its own: the holder ends on its idle time all the same ...
    assert ssh_holder.wait_spawned(pid, 60) == 0
    assert list(runtime_dir.rglob("*.sock")) == []
    # ... and the server goes on, on the connection it had
    res = await server.run(["echo", "still here"], check=True)
    assert res.stdout == "still here\n"
    assert await _server_login(jp_fetch) == {"site": "alpha", "new_connection": False}
    assert server.describe()["connections_opened"] == 1
