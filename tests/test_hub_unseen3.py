"""A real JupyterHub (no test bed), third sweep: the server's event stream
(/api/events/subscribe) once the hub stops accepting the token that opened it (revoked,
expired, its owner's access taken away), on the default and on a named server; a user
whose name needs escaping in a URL and in a shell; a server the user restarts from the hub
keeps the jobs; and an admin on another user's server sees none of that user's secrets.
The hub and its one local site: `hub_helpers.RealHub`."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from hub_helpers import SERVICE_TOKEN, RealHub, job_of, server_environ, submit, wait_for
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from diamond_jupyter.server.hub_stream import NO_ACCESS_REASON, RECHECK_S, REVOKED_REASON

ESCAPED = "o'neil+hpc"  # a quote and a plus: escaped in the URL, and in the shell by diamond
ADMIN = "boss"
USERS = ("alice", ESCAPED, ADMIN)
LLM_KEY = "sk-ant-hub3-" + "7" * 24  # alice's agent key, in her server's environment only
BOUND_S = 5.0  # DiamondApp.hub_token_check_s's default
# a loaded two-core machine: the bound, one recheck, and time for the close to travel
CLOSE_DEADLINE_S = BOUND_S + RECHECK_S + 15


class Hub(RealHub):
    users = USERS

    def config(self, sites: Any) -> str:
        return super().config(sites) + f"c.Authenticator.admin_users = {{{ADMIN!r}}}\n"

    def per_user(self) -> dict[str, dict[str, Any]]:
        return {"alice": {"env": {"ANTHROPIC_API_KEY": LLM_KEY}}}


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Iterator[Hub]:
    with Hub(tmp_path_factory.mktemp("hub3")).serving(("alice", ESCAPED)) as h:
        yield h


# -- the event stream, as a browser or kernel holds it ---------------------------------------
def stream_url(hub: Hub, server_path: str) -> str:
    return hub.url.replace("http://", "ws://", 1) + server_path + "api/events/subscribe"


async def open_stream(hub: Hub, server_path: str, token: str) -> WebSocketClientConnection:
    req = HTTPRequest(stream_url(hub, server_path),
                      headers={"Authorization": f"token {token}"}, request_timeout=120)
    return await websocket_connect(req)


async def frame_naming(conn: WebSocketClientConnection, text: str, timeout: float) -> dict:
    """The first frame whose text holds TEXT (frames before it are skipped)."""
    async def read() -> dict:
        while True:
            msg = await conn.read_message()
            assert msg is not None, f"closed ({conn.close_code}: {conn.close_reason})"
            if text in msg:
                return json.loads(msg)
    return await asyncio.wait_for(read(), timeout)


async def closed_within(conn: WebSocketClientConnection, timeout: float) -> float:
    """Seconds until the server closes CONN (frames meanwhile are read and dropped)."""
    start = time.monotonic()

    async def drain() -> None:
        while await conn.read_message() is not None:
            pass
    await asyncio.wait_for(drain(), timeout)
    return time.monotonic() - start


async def in_thread(fn: Any, *args: Any, **kw: Any) -> Any:
    """A blocking request to the hub, the stream's loop still reading."""
    return await asyncio.to_thread(fn, *args, **kw)


def access_token(hub: Hub, user: str, **extra: Any) -> tuple[str, str]:
    """(token, its id at the hub): a token of USER's to USER's servers."""
    status, made = hub.call(f"/hub/api/users/{quote(user, safe='')}/tokens", SERVICE_TOKEN,
                            "POST", {"scopes": [f"access:servers!user={user}"],
                                     "note": "stream", **extra})
    assert status in (200, 201), (user, status, made)
    return made["token"], made["id"]


def revoke(hub: Hub, user: str, token_id: str, token: str) -> None:
    """DELETE the token at the hub, as a user does from the token page."""
    assert hub.call(f"/hub/api/users/{quote(user, safe='')}/tokens/{token_id}",
                    SERVICE_TOKEN, "DELETE")[0] == 204
    assert hub.call("/hub/api/user", token)[0] == 403  # the hub's own routes: at once


# -- a token the hub no longer accepts closes its open stream -------------------------------
def test_a_revoked_tokens_open_stream_is_closed_with_a_reason_and_the_others_goes_on(hub):
    doomed, doomed_id = access_token(hub, "alice")
    kept, _ = access_token(hub, "alice")
    path = hub.server_path("alice")

    async def scenario() -> None:
        a = await open_stream(hub, path, doomed)
        b = await open_stream(hub, path, kept)
        job = await in_thread(submit, hub, "alice", name="streamed")
        for conn in (a, b):  # both streams deliver, within the bound's cached answer
            await frame_naming(conn, job["id"], 60)
        await in_thread(revoke, hub, "alice", doomed_id, doomed)
        took = await closed_within(a, CLOSE_DEADLINE_S)
        assert a.close_code == 1008 and a.close_reason == REVOKED_REASON, \
            (a.close_code, a.close_reason, took)
        # the other token's stream is still open and still delivers
        later = await in_thread(submit, hub, "alice", name="after")
        await frame_naming(b, later["id"], 60)
        assert b.close_code is None
        b.close()
        # and the revoked token opens no stream again
        with pytest.raises(HTTPClientError) as refused:
            await open_stream(hub, path, doomed)
        assert refused.value.code in (302, 403), refused.value
    asyncio.run(scenario())


def test_a_token_that_expires_closes_the_stream_it_opened(hub):
    expiring, _ = access_token(hub, "alice", expires_in=20)

    async def scenario() -> None:
        conn = await open_stream(hub, hub.server_path("alice"), expiring)
        job = await in_thread(submit, hub, "alice", name="expiring")
        await frame_naming(conn, job["id"], 60)
        # 20 s after it was made, less what already passed; then the bound
        await closed_within(conn, 20 + CLOSE_DEADLINE_S)
        assert conn.close_code == 1008 and conn.close_reason == REVOKED_REASON, \
            (conn.close_code, conn.close_reason)
    asyncio.run(scenario())


def test_a_stream_on_a_named_server_is_closed_when_its_token_is_revoked(hub):
    path = hub.spawn("alice", "lab-3")
    assert path == "/user/alice/lab-3/", path
    tok, tok_id = access_token(hub, "alice")

    async def scenario() -> None:
        conn = await open_stream(hub, path, tok)
        job = await in_thread(submit, hub, "alice", path, name="named")
        await frame_naming(conn, job["id"], 60)
        await in_thread(revoke, hub, "alice", tok_id, tok)
        await closed_within(conn, CLOSE_DEADLINE_S)
        assert (conn.close_code, conn.close_reason) == (1008, REVOKED_REASON)
    try:
        asyncio.run(scenario())
    finally:
        hub.stop_server("alice", "lab-3")


def test_a_token_without_access_to_the_server_opens_no_stream(hub):
    reader = hub.token("alice", ["read:users:name!user=alice"])

    async def scenario() -> None:
        with pytest.raises(HTTPClientError) as refused:
            await open_stream(hub, hub.server_path("alice"), reader)
        assert refused.value.code in (302, 403), refused.value
    asyncio.run(scenario())


# -- a user whose name needs escaping --------------------------------------------------------
def test_a_user_with_a_quote_and_a_plus_in_the_name_submits_and_streams(hub):
    path = hub.server_path(ESCAPED)
    assert path == "/user/o%27neil%2Bhpc/", path
    home = hub.home(ESCAPED)

    async def scenario() -> dict:
        conn = await open_stream(hub, path, hub.tokens[ESCAPED])
        job = await in_thread(submit, hub, ESCAPED, name="quoted")
        frame = await frame_naming(conn, job["id"], 60)
        assert frame["schema_id"].startswith("https://diamond-jupyter.org/events/"), frame
        conn.close()
        return job
    job = asyncio.run(scenario())
    # the job's files are under the home whose path holds the quote, as written
    script = (hub.site_dir / "kept" / f"{job['native_id']}.sh").read_text()
    assert str(home) in script, script[:400]
    assert job_of(hub, ESCAPED, job["id"])["state"] in ("PENDING", "RUNNING"), job


# -- the server restarted from the hub -------------------------------------------------------
def test_the_server_the_user_restarts_from_the_hub_keeps_every_job(hub):
    user = "alice"
    token = hub.tokens[user]  # the user's own ('self'): stops and starts their own server
    first = submit(hub, user, name="before1")
    second = submit(hub, user, name="before2")
    hub.finish(str(first["native_id"]))
    wait_for(lambda: job_of(hub, user, first["id"])["state"] == "COMPLETED", 60,
             "the first job's end", hub)
    assert hub.call("/hub/api/users/alice/server", token, "DELETE")[0] in (202, 204)
    wait_for(lambda: "" not in hub.call("/hub/api/users/alice", SERVICE_TOKEN)[1]["servers"],
             120, "alice's server to stop", hub)
    assert hub.call("/hub/api/users/alice/server", token, "POST", {})[0] in (201, 202)
    wait_for(lambda: hub.call(hub.server_path(user) + "diamond/api/state", token)[0] == 200,
             240, "alice's server again", hub)
    status, listed = hub.call(hub.server_path(user) + "diamond/api/jobs?limit=500", token)
    assert status == 200, listed
    by_id = {j["id"]: j for j in listed["jobs"]}
    assert by_id[first["id"]]["state"] == "COMPLETED", by_id.get(first["id"])
    assert by_id[second["id"]]["native_id"] == second["native_id"], by_id.get(second["id"])
    # the job still queued is followed by the new server to its end
    hub.finish(str(second["native_id"]), "FAILED")
    wait_for(lambda: job_of(hub, user, second["id"])["state"] == "FAILED", 120,
             "the second job's end, seen by the restarted server", hub)


# -- an admin on another user's server -------------------------------------------------------
def test_an_admin_on_another_users_server_sees_none_of_her_secrets(hub):
    admin = hub.token(ADMIN, ["access:servers!user=alice"])
    path = hub.server_path("alice")
    job = submit(hub, "alice", name="adminlooks")
    secrets = {"her agent's key": LLM_KEY,
               "her server's hub token": server_environ("alice")["JUPYTERHUB_API_TOKEN"]}
    status, state = hub.call(path + "diamond/api/state", admin)
    assert status == 200 and state["error"] is None, state
    seen = [json.dumps(state)]
    for route in ("jobs?limit=500", f"jobs/{quote(job['id'], safe='')}", "sites/alpha",
                  "events?since=0&limit=1000", "tasks", "dashboard"):
        status, body = hub.call(path + f"diamond/api/{route}", admin)
        assert status == 200, (route, status, body)
        seen.append(json.dumps(body))
    assert [what for what, value in secrets.items() if any(value in s for s in seen)] == []
    # nor does the job's environment carry them to the scheduler, whose admins read it
    env = (hub.site_dir / "kept" / f"{job['native_id']}.env").read_text()
    assert [what for what, value in secrets.items() if value in env] == [], \
        [x.split("=")[0] for x in env.splitlines() if LLM_KEY in x]


def test_an_admin_token_without_access_to_servers_reads_nothing_of_hers(hub):
    admin = hub.token(ADMIN, ["admin:users", "admin:servers"])
    for route in ("state", "jobs", "events"):
        status, body = hub.call(hub.server_path("alice") + f"diamond/api/{route}", admin)
        assert status in (302, 403), (route, status, body)


def test_an_admins_stream_on_a_users_server_closes_when_the_admin_role_is_taken(hub):
    """The token is not revoked, but its owner no longer holds the access it was given:
    the hub's answer for it lacks access to the server, and the stream is closed saying
    so. (Last: the admin is an admin no more.)"""
    admin = hub.token(ADMIN, ["access:servers!user=alice"])
    own = hub.token(ADMIN, ["admin:users"])  # only an admin changes an admin: itself here
    path = hub.server_path("alice")

    async def scenario() -> None:
        conn = await open_stream(hub, path, admin)
        job = await in_thread(submit, hub, "alice", name="watched")
        await frame_naming(conn, job["id"], 60)
        status, body = await in_thread(hub.call, f"/hub/api/users/{ADMIN}", own, "PATCH",
                                       {"admin": False})
        assert status == 200 and body["admin"] is False, (status, body)
        await closed_within(conn, CLOSE_DEADLINE_S)
        assert (conn.close_code, conn.close_reason) == (1008, NO_ACCESS_REASON)
    asyncio.run(scenario())
    assert hub.call(path + "diamond/api/state", admin)[0] in (302, 403)
