"""A real JupyterHub (no test bed), sixth sweep, what a center meets day to day: the hub
served under `c.JupyterHub.base_url = '/jupyter/'` with a named server; the hub's proxy
killed while a job runs (the hub starts it again: REST answers again, nothing lost, what
ended meanwhile is there); a server the idle-culler stops while jobs run, started again;
a site token the admin passes in `c.Spawner.environment`, never shown; a user whose home
is not writable; another user's token on every diamond route. The hub and its one local
site: `hub_helpers.RealHub`."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from hub_helpers import (
    SERVICE_TOKEN,
    RealHub,
    events_of,
    job_of,
    server_environ,
    store_of,
    submit,
    wait_for,
)

from diamond_jupyter.server.routes import NoRouteHandler, routes

NAMED = "lab"
SITE_TOKEN = "sitetok-5f0c2e9a7b31d4c8e6f1a2b3c4d5e6f7"  # the admin's, for carol's site
PROXY_BACK_S = 60  # the hub looks at its proxy every 5 s (check_running_interval)


class Hub(RealHub):
    users = ("alice", "bob", "carol", "dora")
    base_url = "/jupyter/"

    def config(self, sites: Any) -> str:
        """The public URL said as a center's config usually says it: ip, port, base_url."""
        bind = f"c.JupyterHub.bind_url = 'http://127.0.0.1:{self.port}{self.base_url}'\n"
        said = (f"c.JupyterHub.ip = '127.0.0.1'\nc.JupyterHub.port = {self.port}\n"
                f"c.JupyterHub.base_url = {self.base_url!r}\n")
        config = super().config(sites)
        assert bind in config
        return config.replace(bind, said)

    def per_user(self) -> dict[str, dict[str, Any]]:
        # dora's home is read-only: Jupyter's own files go elsewhere, as a site sets them
        # for node-local runtime directories; diamond's store has nowhere to go
        elsewhere = str(self.base / "dora-jupyter")
        return {"carol": {"env": {"SITE_API_TOKEN": SITE_TOKEN}},
                "dora": {"env": {"JUPYTER_RUNTIME_DIR": elsewhere + "/runtime",
                                 "JUPYTER_DATA_DIR": elsewhere + "/data",
                                 "IPYTHONDIR": elsewhere + "/ipython"}}}


def immutable(path: Any, on: bool) -> None:
    """`chattr +i`: not writable even by root (the servers here run as root)."""
    subprocess.run(["chattr", "+i" if on else "-i", str(path)], check=True)


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Iterator[Hub]:
    h = Hub(tmp_path_factory.mktemp("hub6"))
    h.home("dora").mkdir(parents=True)
    immutable(h.home("dora"), True)
    try:
        with h.serving(("alice", "bob", "carol")):
            yield h
    finally:
        immutable(h.home("dora"), False)


def queued(hub: Hub) -> list[str]:
    return [x.split("|", 1)[0] for x in
            (hub.site_dir / "queue.txt").read_text().splitlines() if x]


def ended(hub: Hub, user: str, job_id: str, state: str = "COMPLETED") -> dict:
    return wait_for(lambda: (j := job_of(hub, user, job_id))["state"] == state and j, 60,
                    f"job {job_id} {state}", hub)


def ending_events(events: list[dict], job_id: str, state: str) -> list[dict]:
    return [e for e in events if e.get("job_id") == job_id
            and (e.get("data") or {}).get("state") == state]


# -- base_url '/jupyter/' and a named server ------------------------------------------------
def test_a_named_server_under_the_hubs_jupyter_base_url_submits_and_shares_the_store(hub):
    assert hub.url.endswith("/jupyter")
    with hub.named_server("alice", NAMED) as path:
        assert path == f"/user/alice/{NAMED}/", path
        _, info = hub.call("/hub/api/users/alice", SERVICE_TOKEN)
        assert info["servers"][NAMED]["url"] == f"/jupyter/user/alice/{NAMED}/", info
        status, state = hub.call(path + "diamond/api/state", hub.tokens["alice"])
        assert status == 200 and isinstance(state, dict), (status, str(state)[:3000])
        assert state["error"] is None, state
        job = submit(hub, "alice", path, name="fromlab")
        # the default server, same store, knows it; its events name it
        assert job_of(hub, "alice", job["id"])["native_id"] == job["native_id"]
        assert any(e.get("job_id") == job["id"] for e in events_of(hub, "alice"))
        status, body = hub.call(path + "diamond/api/nowhere", hub.tokens["alice"])
        assert status == 404 and "nowhere" in json.dumps(body), (status, body)
        assert "/jupyter/" not in json.dumps(body), body  # the route, not the prefix


# -- the proxy killed while a job runs -------------------------------------------------------
def test_the_proxy_killed_while_a_job_runs_comes_back_and_nothing_is_lost(hub):
    job = submit(hub, "alice", name="proxyfall")
    before = events_of(hub, "alice")
    last = max(e["seq"] for e in before)
    pid = int((hub.base / "proxy.pid").read_text())
    os.kill(pid, signal.SIGKILL)
    hub.finish(str(job["native_id"]))  # the job ends while no request gets through
    # the hub starts its proxy again and gives it every route back
    wait_for(lambda: hub.call(hub.server_path("alice") + "diamond/api/state",
                              hub.tokens["alice"], timeout=5)[0] == 200,
             PROXY_BACK_S, "the restarted proxy", hub)
    assert int((hub.base / "proxy.pid").read_text()) != pid
    got = ended(hub, "alice", job["id"])
    assert got["native_id"] == job["native_id"]
    # a client that read up to LAST asks since it: the ending is there, nothing twice
    status, body = hub.call(hub.server_path("alice") + f"diamond/api/events?since={last}",
                            hub.tokens["alice"])
    assert status == 200, body
    assert all(e["seq"] > last for e in body["events"]), body["events"][:3]
    assert ending_events(body["events"], job["id"], "COMPLETED"), body["events"][-5:]
    assert events_of(hub, "alice")[:len(before)] == before


# -- culled while jobs run, started again ---------------------------------------------------
def test_a_culled_server_started_again_has_every_job_and_event_and_the_ending(hub):
    ends, runs = submit(hub, "bob", name="endsculled"), submit(hub, "bob", name="runsculled")
    before = events_of(hub, "bob")
    hub.stop_server("bob")  # as jupyterhub-idle-culler does: DELETE through the hub API
    hub.finish(str(ends["native_id"]), "FAILED")
    hub.spawn("bob")
    assert ended(hub, "bob", ends["id"], "FAILED")["native_id"] == ends["native_id"]
    after = events_of(hub, "bob")
    assert after[:len(before)] == before, (before[-2:], after[:len(before)][-2:])
    assert ending_events(after[len(before):], ends["id"], "FAILED"), after[len(before):]
    # the job still queued is followed by the new server to its end
    assert job_of(hub, "bob", runs["id"])["state"] == "RUNNING"
    assert str(runs["native_id"]) in queued(hub)
    hub.finish(str(runs["native_id"]))
    ended(hub, "bob", runs["id"])


# -- a site token in c.Spawner.environment --------------------------------------------------
def test_the_site_token_from_the_spawners_environment_is_never_shown(hub):
    assert server_environ("carol")["SITE_API_TOKEN"] == SITE_TOKEN  # the spawner gave it
    job = submit(hub, "carol", name="withsitetoken")
    hub.finish(str(job["native_id"]))
    ended(hub, "carol", job["id"])
    path = hub.server_path("carol")
    for route in ("state", "sites", "sites/alpha", "sites/alpha/describe", "dashboard",
                  "jobs", f"jobs/{quote(job['id'], safe='')}", "events?since=0&limit=1000",
                  "logins", "tasks", "workflows", "transfers"):
        status, body = hub.call(path + "diamond/api/" + route, hub.tokens["carol"])
        assert status == 200, (route, status, body)
        assert SITE_TOKEN not in json.dumps(body), route
    store = store_of(hub, "carol")
    for part in store.parent.glob(store.name + "*"):
        assert SITE_TOKEN.encode() not in part.read_bytes(), part
    assert SITE_TOKEN not in (hub.base / "hub.log").read_text(errors="replace")
    kept = hub.site_dir / "kept" / f"{job['native_id']}.sh"
    assert SITE_TOKEN not in kept.read_text(), kept


# -- a home that is not writable ------------------------------------------------------------
def test_a_home_that_is_not_writable_is_named_at_start_and_nothing_is_submitted(hub):
    path = hub.spawn("dora")
    try:
        status, state = hub.call(path + "diamond/api/state", hub.tokens["dora"])
        assert status == 200, (status, state)
        error = state["error"] or ""
        assert str(hub.home("dora")) in error, error
        assert f"{hub.home('dora')} is not writable" in error, error
        before = queued(hub)
        status, body = hub.call(path + "diamond/api/jobs", hub.tokens["dora"], "POST", {
            "site": "alpha", "script": "#!/bin/bash\n#SBATCH -t 5\nhostname\n"})
        assert status >= 400 and str(hub.home("dora")) in json.dumps(body), (status, body)
        assert queued(hub) == before
    finally:
        hub.stop_server("dora")


# -- another user's token on every route ----------------------------------------------------
def every_route(values: dict[str, str]) -> list[str]:
    """Each diamond route, its groups filled from VALUES."""
    fill = re.compile(r"\(\?P<([a-z_]+)>[^)]*\)")
    return [fill.sub(lambda m: quote(values[m[1]], safe=""), pattern).lstrip("/")
            for pattern, handler in routes() if handler is not NoRouteHandler]


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
def test_another_users_token_is_refused_on_every_diamond_route(hub, method):
    hers = submit(hub, "alice", name="notbobs")
    before = queued(hub)
    for route in every_route({"name": "alpha", "job_id": hers["id"], "workflow_id": "wf-1",
                              "prompt_id": "p-1", "transfer_id": "0123456789abcdef"}):
        status, body = hub.call(hub.server_path("alice") + route, hub.tokens["bob"], method,
                                {} if method == "POST" else None)
        assert status in (302, 403), (route, status, body)
        assert hers["id"] not in json.dumps(body), (route, body)
    assert queued(hub) == before
    assert job_of(hub, "alice", hers["id"])["state"] in ("PENDING", "RUNNING")
