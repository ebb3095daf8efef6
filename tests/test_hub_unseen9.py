"""A real JupyterHub (no test bed), ninth sweep: users named `ana.lopez` and `bo@lab.org`
(their servers' escaped URLs, a job's Location, each store in its owner's home only); the
hub restarted while the users' servers keep running (an open event stream, the sidebar's,
rides the restart out and delivers the next job's frames); the sites file named per user by
`c.Spawner.environment` (`DIAMOND_CONFIG`, `~/` meaning the home the spawner gives) instead
of a server option; a named server started with its own `--ServerApp.base_url` nested under
the hub's prefix. The hub and its one local site: `hub_helpers.RealHub`."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml
from hub_helpers import (
    BASE_URL,
    SERVICE_TOKEN,
    SITES,
    RealHub,
    events_of,
    job_of,
    store_of,
    submit,
    submit_located,
    wait_for,
)
from test_hub_down_stream import KEEP_RUNNING
from test_hub_unseen3 import access_token, frame_naming, in_thread, open_stream

DOTTED, AT = "ana.lopez", "bo@lab.org"
OWN_SITES = "~/my-sites.yaml"  # bo's DIAMOND_CONFIG, in the home the spawner gives him
NAMED = "proj-x"
# a named server's own --ServerApp.base_url: the hub's prefix, the user's, the server's
NAMED_BASE = "named_base = " + repr(BASE_URL) + \
    " + 'user/' + quote(spawner.user.name, safe='@~') + '/' + quote(spawner.name, safe='@~') + '/'"


class Hub(RealHub):
    users = (DOTTED, AT)

    def config(self, sites: Path) -> str:
        # the server option gives way to the spawner's environment: the hub's sites file for
        # all, bo's own for bo (per_user)
        written = super().config(sites).replace(f"'--DiamondApp.sites_file={sites}', ", "")
        assert "--DiamondApp.sites_file" not in written
        return written + KEEP_RUNNING + "\n".join([
            f"c.Spawner.environment = {{'DIAMOND_CONFIG': {str(sites)!r}}}",
            "from urllib.parse import quote",
            "def named_hook(spawner):",
            "    pre_spawn_hook(spawner)",
            "    if spawner.name:",
            f"        {NAMED_BASE}",
            "        spawner.args = [*spawner.args, '--ServerApp.base_url=' + named_base]",
            "c.Spawner.pre_spawn_hook = named_hook",
        ]) + "\n"

    def per_user(self) -> dict[str, dict[str, Any]]:
        return {AT: {"env": {"DIAMOND_CONFIG": OWN_SITES}}}

    def write_site(self) -> Path:
        sites = super().write_site()
        home = self.home(AT)
        home.mkdir(parents=True, exist_ok=True)
        own = yaml.safe_load(sites.read_text())
        own["sites"].append({**own["sites"][0], "name": "bos-own"})
        (home / "my-sites.yaml").write_text(yaml.safe_dump(own))
        return sites

    def restart(self) -> None:
        """The hub stopped and started again on the same ports, its proxy and the users'
        servers left running meanwhile (its next stop ends them: KEEP_RUNNING dropped)."""
        self.stop()
        assert self.proc is not None and self.proc.poll() is not None
        self.launch((self.base / "jupyterhub_config.py").read_text().replace(KEEP_RUNNING, ""))

    def end_proxy(self) -> None:
        """The proxy a stop with KEEP_RUNNING left: ended by its pid (this hub's own)."""
        pid_file = self.base / "proxy.pid"
        with contextlib.suppress(OSError, ValueError):  # no file, or no such process
            os.kill(int(pid_file.read_text()), signal.SIGTERM)


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Iterator[Hub]:
    h = Hub(tmp_path_factory.mktemp("hub9"))
    try:
        with h.serving((DOTTED, AT)):
            try:
                yield h
            finally:  # the servers KEEP_RUNNING would leave: stopped through the hub
                if h.proc is not None and h.proc.poll() is None:
                    for user in (DOTTED, AT):
                        _, info = h.call(f"/hub/api/users/{quote(user, safe='')}",
                                         SERVICE_TOKEN)
                        for server in (info or {}).get("servers", {}):
                            h.stop_server(user, server)
    finally:
        h.end_proxy()


def ended(hub: Hub, user: str, job_id: str, path: str | None = None) -> dict:
    return wait_for(lambda: (j := job_of(hub, user, job_id, path))["state"] == "COMPLETED"
                    and j, 60, f"job {job_id} to end", hub)


def site_names(hub: Hub, user: str) -> set[str]:
    status, state = hub.call(hub.server_path(user) + "diamond/api/state", hub.tokens[user])
    assert status == 200, (status, state)
    return {s["name"] for s in state["sites"]}


# -- a '.' and an '@' in the user's name -----------------------------------------------------
@pytest.mark.parametrize("user, path", [(DOTTED, "/user/ana.lopez/"),
                                        (AT, "/user/bo@lab.org/")])
def test_a_dot_or_at_in_the_name_leads_a_job_back_to_its_server_and_store(hub, user, path):
    assert hub.server_path(user) == path
    location, job = submit_located(hub, user, path)
    assert location == f"{BASE_URL.rstrip('/')}{path}diamond/api/jobs/" \
        f"{quote(job['id'], safe=':')}", location
    status, body = hub.call(location.removeprefix(BASE_URL.rstrip("/")), hub.tokens[user])
    assert status == 200 and body["native_id"] == job["native_id"], (status, body)
    other = AT if user == DOTTED else DOTTED
    assert store_of(hub, user).is_file()
    status, body = hub.call(hub.server_path(other)
                            + f"diamond/api/jobs/{quote(job['id'], safe='')}",
                            hub.tokens[other])
    assert status == 404, (status, body)  # the other user's server: not its job
    hub.finish(str(job["native_id"]))
    ended(hub, user, job["id"])


# -- the sites file named by the spawner's environment ---------------------------------------
def test_the_spawners_environment_names_each_users_sites_file(hub):
    assert site_names(hub, DOTTED) == set(SITES)
    assert site_names(hub, AT) == {*SITES, "bos-own"}  # ~/ is his home, as the spawner says
    # no server option is needed: bo's job runs at a site of his own file only
    status, job = hub.call(hub.server_path(AT) + "diamond/api/jobs", hub.tokens[AT], "POST",
                           {"site": "bos-own", "script": "#!/bin/bash\n#SBATCH -t 5\nhostname\n"})
    assert status == 201 and job["site"] == "bos-own", (status, job)
    status, body = hub.call(hub.server_path(DOTTED) + "diamond/api/jobs", hub.tokens[DOTTED],
                            "POST", {"site": "bos-own",
                                     "script": "#!/bin/bash\n#SBATCH -t 5\nhostname\n"})
    assert status == 400 and "bos-own" in str(body), (status, body)
    hub.finish(str(job["native_id"]))
    ended(hub, AT, job["id"])


# -- a named server with its own --ServerApp.base_url ----------------------------------------
def test_a_named_servers_own_base_url_leads_a_job_back_to_it(hub):
    with hub.named_server(DOTTED, NAMED) as path:
        assert path == "/user/ana.lopez/proj-x/"
        location, job = submit_located(hub, DOTTED, path)
        assert location.startswith(f"{BASE_URL}user/ana.lopez/proj-x/diamond/api/jobs/"), \
            location
        status, body = hub.call(location.removeprefix(BASE_URL.rstrip("/")),
                                hub.tokens[DOTTED])
        assert status == 200 and body["id"] == job["id"], (status, body)
        # one store under the user's home: the default server sees the named one's job
        assert job_of(hub, DOTTED, job["id"])["native_id"] == job["native_id"]
        hub.finish(str(job["native_id"]))
        ended(hub, DOTTED, job["id"], path)


# -- the hub restarted, the servers running ---------------------------------------------------
def test_after_a_hub_restart_the_stream_opens_again_and_the_replay_misses_nothing(hub):
    """What the sidebar does (src/events.ts, model.ts): JupyterLab's event socket opens
    again by itself, and the events since the last one seen are fetched; the proxy may drop
    the old socket while the hub restarts, or keep it."""
    token, _ = access_token(hub, AT)
    path = hub.server_path(AT)

    async def scenario() -> tuple[dict, dict, dict, int]:
        conn = await open_stream(hub, path, token)
        before = await in_thread(submit, hub, AT, name="beforerestart")
        await frame_naming(conn, before["id"], 60)
        seen = max(e["seq"] for e in await in_thread(events_of, hub, AT))
        await in_thread(hub.restart)
        during = await in_thread(submit, hub, AT, name="afterrestart")
        conn.close()
        again = await open_stream(hub, path, token)  # the same token, the hub back
        later = await in_thread(submit, hub, AT, name="reopened")
        await frame_naming(again, later["id"], 60)
        again.close()
        return before, during, later, seen
    before, during, later, seen = asyncio.run(scenario())
    status, replay = hub.call(path + f"diamond/api/events?since={seen}&limit=500",
                              hub.tokens[AT])
    assert status == 200, (status, replay)
    assert {during["id"], later["id"]} <= {e["job_id"] for e in replay["events"]}
    assert all(e["seq"] > seen for e in replay["events"])
    for job in (before, during, later):
        hub.finish(str(job["native_id"]))
        ended(hub, AT, job["id"])
