"""A real JupyterHub (no test bed), seventh sweep: a user whose server the spawner starts
with `c.Spawner.args` overriding the extension's config (another sites file, another poll);
the hub itself restarted while a job runs, its users' servers left running
(`c.JupyterHub.cleanup_servers = False`, as centers upgrade a hub); two named servers of
one user submitting at once into their one store; `c.Spawner.default_url = '/lab'`; a user
named `a.b-c@x`. The hub and its one local site: `hub_helpers.RealHub`.

Found on the way: a spawner hook that adds a user's own flags after the admin's gives each
setting twice; as Jupyter does, the extension refuses it, but the reason read "only accepts
one value, got 2: ['1', '2']". It now names the setting, both values, where they are given
and the fix (`test_a_setting_given_twice_...`, which failed before). The test site's
sbatch gave two submits at once one id (its counter was not locked): it now takes a lock,
as slurmctld numbers jobs one at a time."""

from __future__ import annotations

import os
import signal
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from hub_helpers import (
    OPENER,
    SERVICE_TOKEN,
    RealHub,
    events_of,
    job_of,
    submit,
    wait_for,
)

ODD = "a.b-c@x"  # dots, a dash and an '@': the hub keeps '@' in the URL, quotes nothing else
EACH = 4  # jobs each named server submits at once


class Hub(RealHub):
    users = ("alice", "erin", "fay", ODD)

    def config(self, sites: Any) -> str:
        added = "    spawner.args = [*spawner.args, *extra.get('args', [])]"
        # erin's hook replaces the admin's flags her own args name, as such a hook should
        replaced = (
            "    own = {a.split('=')[0] for a in extra.get('args', [])}\n"
            "    kept = [a for a in spawner.args if spawner.user.name != 'erin'\n"
            "            or a.split('=')[0] not in own]\n"
            "    spawner.args = [*kept, *extra.get('args', [])]")
        config = super().config(sites)
        assert added in config and "c.JupyterHub.cleanup_servers = True" in config
        return config.replace(added, replaced).replace(
            "c.JupyterHub.cleanup_servers = True", "c.JupyterHub.cleanup_servers = False") \
            + "c.Spawner.default_url = '/lab'\n"

    def per_user(self) -> dict[str, dict[str, Any]]:
        own = [f"--DiamondApp.sites_file={self.base / 'erin-sites.yaml'}",
               "--DiamondApp.poll_interval_s=2"]
        return {"erin": {"args": own}, "fay": {"args": own}}  # fay's hook only adds them


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Iterator[Hub]:
    h = Hub(tmp_path_factory.mktemp("hub7"))
    (h.base / "erin-sites.yaml").write_text(yaml.safe_dump({"sites": [{
        "name": "gamma", "scheduler": "slurm", "transport": {"kind": "local"},
        "workdir": "~/.diamond/gamma",
        "preamble": f'PATH={h.site_dir / "bin"}:"$PATH"; export PATH'}]}))
    try:
        with h.serving(("alice", "erin", "fay", ODD)):
            yield h
    finally:
        stop_servers_left(h.base)


def stop_servers_left(base: Path) -> None:
    """With `cleanup_servers = False` the hub leaves its users' servers running when it
    stops: end those started under `base`, so none outlives the tests."""
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # not a process, or gone meanwhile
        if b"jupyterhub.singleuser" in argv and any(str(base).encode() in a for a in argv):
            try:
                os.kill(int(proc.name), signal.SIGTERM)
            except (OSError, ValueError):
                pass  # ended meanwhile


def ended(hub: Hub, user: str, job_id: str, path: str | None = None) -> dict:
    return wait_for(lambda: (j := job_of(hub, user, job_id, path))["state"] == "COMPLETED"
                    and j, 60, f"job {job_id} to end", hub)


# -- c.Spawner.args overriding the extension's config ----------------------------------------
def test_the_spawners_args_for_one_user_override_the_admins_sites_file(hub):
    status, sites = hub.call(hub.server_path("erin") + "diamond/api/sites", hub.tokens["erin"])
    assert status == 200, sites
    assert [s["name"] for s in sites["sites"]] == ["gamma"], sites
    status, body = hub.call(hub.server_path("erin") + "diamond/api/jobs", hub.tokens["erin"],
                            "POST", {"site": "alpha", "script": "#!/bin/bash\n#SBATCH -t 5\n"
                                     "hostname\n"})
    assert status == 400 and "alpha" in str(body) and "gamma" in str(body), (status, body)
    status, sites = hub.call(hub.server_path("alice") + "diamond/api/sites",
                             hub.tokens["alice"])
    assert sorted(s["name"] for s in sites["sites"]) == ["alpha", "beta"], sites


def test_a_setting_given_twice_in_the_spawners_args_is_named_with_both_values(hub):
    """fay's hook adds her flags after the admin's: each setting is there twice. As Jupyter
    refuses a flag given twice, nothing runs, and the state says which and how to fix it."""
    status, state = hub.call(hub.server_path("fay") + "diamond/api/state", hub.tokens["fay"])
    assert status == 200, state
    error = state["error"] or ""
    assert (f"DiamondApp.sites_file is given 2 times in the server's command line (under "
            f"JupyterHub: c.Spawner.args): {hub.base / 'sites.yaml'}, "
            f"{hub.base / 'erin-sites.yaml'}; it takes one value: give it once") in error, error
    assert "DiamondApp.poll_interval_s is given 2 times" in error and ": 1, 2;" in error, error
    before = (hub.site_dir / "queue.txt").read_text()
    status, body = hub.call(hub.server_path("fay") + "diamond/api/jobs", hub.tokens["fay"],
                            "POST", {"site": "alpha", "script": "#!/bin/bash\n#SBATCH -t 5\n"
                                     "hostname\n"})
    assert status >= 400, (status, body)
    assert (hub.site_dir / "queue.txt").read_text() == before


# -- the hub restarted while a job runs ------------------------------------------------------
def test_the_hub_restarted_mid_job_leaves_the_server_and_its_job_whole(hub):
    job = submit(hub, "alice", name="hubrestart")
    before = events_of(hub, "alice")
    hub.stop()  # the hub (and its proxy) go; alice's server runs on
    hub.finish(str(job["native_id"]))
    hub.launch((hub.base / "jupyterhub_config.py").read_text())
    wait_for(lambda: hub.call(hub.server_path("alice") + "diamond/api/state",
                              hub.tokens["alice"], timeout=5)[0] == 200, 60,
             "alice's server through the restarted hub", hub)
    assert ended(hub, "alice", job["id"])["native_id"] == job["native_id"]
    after = events_of(hub, "alice")
    assert after[:len(before)] == before
    ends = [e for e in after if e.get("job_id") == job["id"]
            and (e.get("data") or {}).get("state") == "COMPLETED"]
    assert len(ends) == 1, ends


# -- two named servers submitting at once into one store -------------------------------------
def test_two_named_servers_submitting_at_once_lose_and_double_nothing(hub):
    with hub.named_server("alice", "one") as one, hub.named_server("alice", "two") as two:
        with ThreadPoolExecutor(2 * EACH) as pool:
            made = list(pool.map(lambda k: submit(hub, "alice", (one, two)[k % 2],
                                                  name=f"both{k}"), range(2 * EACH)))
        ids = {j["id"] for j in made}
        assert len(ids) == 2 * EACH and len({j["native_id"] for j in made}) == 2 * EACH
        for path in (one, two):
            status, listed = hub.call(path + "diamond/api/jobs?limit=500", hub.tokens["alice"])
            assert status == 200, listed
            mine = [j["id"] for j in listed["jobs"] if j["id"] in ids]
            assert sorted(mine) == sorted(ids), (path, mine)
        queued = (hub.site_dir / "queue.txt").read_text()
        assert all(queued.count(f"{j['native_id']}|") == 1 for j in made), queued


# -- c.Spawner.default_url = '/lab' ----------------------------------------------------------
def test_default_url_lab_opens_jupyterlab_with_the_sidebar_and_the_api_stays_put(hub):
    path = hub.server_path("alice")
    req_status, location = _redirect(hub, path, hub.tokens["alice"])
    assert req_status == 302 and urlsplit(location).path.endswith(path + "lab"), \
        (req_status, location)
    status, page = hub.call(path + "lab", hub.tokens["alice"])
    assert status == 200 and "diamond-jupyter" in page, (status, str(page)[:500])
    assert hub.call(path + "diamond/api/state", hub.tokens["alice"])[0] == 200


def _redirect(hub: Hub, path: str, token: str) -> tuple[int, str]:
    req = urllib.request.Request(hub.url + path, headers={"Authorization": f"token {token}"})
    try:
        with OPENER.open(req, timeout=30) as resp:
            return resp.status, resp.headers.get("Location", "")
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Location", "")


# -- a user named a.b-c@x --------------------------------------------------------------------
def test_a_user_named_with_dots_a_dash_and_an_at_submits_and_follows_her_job(hub):
    path = hub.server_path(ODD)
    assert path == f"/user/{ODD}/", path
    job = submit(hub, ODD, name="oddname")
    script = (hub.site_dir / "kept" / f"{job['native_id']}.sh").read_text()
    assert str(hub.home(ODD)) in script, script[:400]
    hub.finish(str(job["native_id"]))
    assert ended(hub, ODD, job["id"])["native_id"] == job["native_id"]
    assert (hub.home(ODD) / ".local/share/diamond/diamond.sqlite3").is_file()
    assert any(e.get("job_id") == job["id"] for e in events_of(hub, ODD))
    assert SERVICE_TOKEN not in script
