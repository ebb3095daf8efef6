"""A real JupyterHub (`scripts/hub.sh up --json`): two system users, each with their own
single-user server running the extension as that user; isolation between them tested
through the hub's proxy with the users' own API tokens."""

from __future__ import annotations

import json
import pwd
import re
import sqlite3
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hub_helpers import hub_up

from diamond_jupyter.server.routes import routes

pytestmark = pytest.mark.testbed
SAMPLE = {"name": "alpha", "job_id": "alpha:100000", "workflow_id": "wf-0000",
          "prompt_id": "p-0000", "transfer_id": "0123456789abcdef"}


@pytest.fixture(scope="module")
def hub(testbed_session) -> Any:
    with hub_up() as info:
        yield info


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kw: Any) -> None:
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def call(hub: dict, path: str, token: str | None, method: str = "GET",
         body: Any = None) -> tuple[int, dict[str, str], Any]:
    """(status, headers, body as JSON or text) of one request through the proxy; redirects
    are not followed."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"token {token}"
    req = urllib.request.Request(hub["url"] + path, data=data, method=method, headers=headers)
    try:
        with OPENER.open(req, timeout=120) as resp:
            status, hdrs, text = resp.status, dict(resp.headers), resp.read().decode()
    except urllib.error.HTTPError as e:
        status, hdrs, text = e.code, dict(e.headers), e.read().decode(errors="replace")
    try:
        return status, hdrs, json.loads(text)
    except ValueError:
        return status, hdrs, text


def token(hub: dict, name: str) -> str:
    return next(u["token"] for u in hub["users"] if u["name"] == name)


def route_paths() -> list[str]:
    """Every route of the extension's table, each named group filled with a sample."""
    out = []
    for pattern, _handler in routes():
        out.append(re.sub(r"\(\?P<(\w+)>[^)]*\)",
                          lambda m: quote(SAMPLE[m[1]], safe=""), pattern))
    return out


def test_up_prints_the_proxy_url_and_each_users_own_token(hub):
    assert [u["name"] for u in hub["users"]] == ["alice", "bob"]
    for u in hub["users"]:
        status, _, me = call(hub, "/hub/api/user", u["token"])
        assert status == 200 and me["name"] == u["name"] and me["kind"] == "user", me
        # the user's full permissions: their own server, started by `up`, answers
        assert me["servers"][""]["ready"], me
        status, _, state = call(hub, f"/user/{u['name']}/diamond/api/state", u["token"])
        assert status == 200 and state["error"] is None, state
        assert {s["name"] for s in state["sites"]} >= {"alpha"}


def _single_user_servers() -> list[tuple[str, str, str]]:
    """Every single-user server on the machine: (the user it runs as, the hub user it
    serves, its hub's API URL). Other sessions' hubs (tests without the test bed) may run
    theirs at the same time, as root."""
    found = []
    for p in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (p / "cmdline").read_bytes().split(b"\0")
            uid = p.stat().st_uid
            env = dict(v.split(b"=", 1) for v in (p / "environ").read_bytes().split(b"\0")
                       if b"=" in v)
        except OSError:
            continue
        if b"jupyterhub.singleuser" in cmd:
            found.append((pwd.getpwuid(uid).pw_name,
                          env.get(b"JUPYTERHUB_USER", b"").decode(),
                          env.get(b"JUPYTERHUB_API_URL", b"").decode()))
    return found


def test_each_server_runs_as_its_user_with_its_own_store_and_key(hub):
    servers = _single_user_servers()
    # this hub's servers: those of the hub whose servers run as its system users
    ours = {api for runs_as, _, api in servers if runs_as in ("alice", "bob")}
    assert len(ours) == 1, servers
    mine = sorted((runs_as, serves) for runs_as, serves, api in servers if api in ours)
    assert mine == [("alice", "alice"), ("bob", "bob")], servers
    keys = set()
    for name in ("alice", "bob"):
        home = Path(pwd.getpwnam(name).pw_dir)
        uid = pwd.getpwnam(name).pw_uid
        assert home.stat().st_mode & 0o077 == 0, f"{home} is open to others"
        key = home / ".ssh" / "id_ed25519"
        assert key.stat().st_uid == uid and key.stat().st_mode & 0o077 == 0
        keys.add(key.with_suffix(".pub").read_text().split()[1])
    assert len(keys) == 2  # two identities


def test_alice_is_refused_on_every_route_of_bobs_server(hub):
    alice, bob = token(hub, "alice"), token(hub, "bob")
    paths = route_paths()
    assert len(paths) == len(routes())
    for path in paths:
        for method in ("GET", "POST"):
            body = {} if method == "POST" else None
            status, hdrs, reply = call(hub, f"/user/bob{path}", alice, method, body)
            refused = status in (401, 403) or (
                status in (302, 303) and "/hub/login" in hdrs.get("Location", ""))
            assert refused, f"alice {method} /user/bob{path} -> {status}: {reply}"
            status, hdrs, _ = call(hub, f"/user/bob{path}", None, method, body)
            assert status in (401, 403) or "/hub/login" in hdrs.get("Location", "") or \
                "/oauth2/authorize" in hdrs.get("Location", ""), (method, path, status)
    # bob's own token opens the same routes (the refusals above are about alice)
    status, _, state = call(hub, "/user/bob/diamond/api/state", bob)
    assert status == 200, state
    # the hub's API: alice cannot read bob, nor start or stop his server
    assert call(hub, "/hub/api/users/bob", alice)[0] in (403, 404)
    assert call(hub, "/hub/api/users/bob/server", alice, "DELETE")[0] in (403, 404)


def _wait_job(hub: dict, user: str, job_id: str, timeout: float = 600) -> dict:
    deadline = time.monotonic() + timeout
    while True:  # the job's end arrives as an event in the server; this only reads it
        status, _, job = call(hub, f"/user/{user}/diamond/api/jobs/{quote(job_id, safe='')}",
                              token(hub, user))
        assert status == 200, job
        if job["state"] in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"):
            return job
        assert time.monotonic() < deadline, f"{job_id} still {job['state']}"
        time.sleep(1)


def test_alices_jobs_never_reach_bobs_api_events_or_files(hub):
    alice = token(hub, "alice")
    script = "#!/bin/bash\n#SBATCH -t 5\nid -un\n"
    status, _, job = call(hub, "/user/alice/diamond/api/jobs", alice, "POST",
                          {"script": script, "site": "alpha"})
    assert status == 201, job
    done = _wait_job(hub, "alice", job["id"])
    assert done["state"] == "COMPLETED", done
    status, _, logs = call(hub, f"/user/alice/diamond/api/jobs/{quote(job['id'], safe='')}"
                           "/logs", alice)
    assert status == 200 and "alice" in json.dumps(logs), logs  # ran as alice on the site
    bob = token(hub, "bob")
    status, _, jobs = call(hub, "/user/bob/diamond/api/jobs?limit=500", bob)
    assert status == 200 and job["id"] not in [j["id"] for j in jobs["jobs"]], jobs
    status, _, events = call(hub, "/user/bob/diamond/api/events?since=0&limit=500", bob)
    assert status == 200 and job["id"] not in json.dumps(events), "alice's job in bob's events"
    status, _, state = call(hub, "/user/bob/diamond/api/state", bob)
    assert job["id"] not in json.dumps(state)
    # on disk: the job's files and events are alice's, under her home only
    alice_home = Path(pwd.getpwnam("alice").pw_dir)
    bob_home = Path(pwd.getpwnam("bob").pw_dir)
    events_file = alice_home / ".diamond" / "alpha" / "events.log"
    assert events_file.exists() and events_file.stat().st_uid == pwd.getpwnam("alice").pw_uid
    native = str(done["native_id"])
    assert native in events_file.read_text()  # the job's own lines, in alice's file
    for f in (bob_home / ".diamond").rglob("*") if (bob_home / ".diamond").exists() else ():
        assert not f.is_file() or f"{native}" not in f.read_text(errors="replace"), f
    # the stores: alice's holds the job, bob's does not
    for name, has in (("alice", True), ("bob", False)):
        db = Path(pwd.getpwnam(name).pw_dir) / ".local/share/diamond/diamond.sqlite3"
        assert db.stat().st_mode & 0o077 == 0, f"{db} is open to others"
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            rows = con.execute("SELECT count(*) FROM jobs WHERE id = ?", (job["id"],)).fetchone()
        assert bool(rows[0]) is has, (name, rows)
