"""What a center and its users meet under a real JupyterHub (no test bed): several users'
servers on one hub (a user name with characters a URL escapes, a unicode one, named servers,
a hub base_url with unusual characters), the hub's own tokens and scopes, a server stopped
by the hub (or its idle-culler) while jobs run and started again, and admin defaults a
server refuses. Each user's server is a real `jupyterhub.singleuser` spawned by the hub
(`SimpleLocalProcessSpawner`: a home of its own per user, as this process's login); the one
site is local, its `sbatch`, `squeue` and `sacct` are small scripts over files."""

from __future__ import annotations

import json
import os
import secrets
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml

from diamond_jupyter.sites import token_tag

SITES = ["alpha", "beta"]  # one cluster's two doors, for allowed_sites
BASE_URL = "/hpc~c1/"  # the hub's own base_url: '~' is kept as is in a URL path
USERS = ("alice", "bob", "a.b-c@x", "zoë")
# users whose servers the admin configured wrongly, started by their own tests
MISCONFIGURED = ("carol", "dave", "erin", "frank", "gina", "diamond")
SERVICE_TOKEN = secrets.token_hex(24)  # the culler-like admin service's
START_TIMEOUT_S = 240.0  # a loaded machine starts a server slowly


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Hub:
    """One JupyterHub process, its users' servers and the local site's files."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}{BASE_URL.rstrip('/')}"
        self.site_dir = base / "site"
        self.tokens: dict[str, str] = {}
        self.proc: subprocess.Popen | None = None

    # -- the site: sbatch queues a job (its token from the script's comment) --------------
    def write_site(self) -> Path:
        bin_dir = self.site_dir / "bin"
        bin_dir.mkdir(parents=True)
        queue, done, kept = (self.site_dir / n for n in ("queue.txt", "done.txt", "kept"))
        queue.write_text("")
        done.write_text("")
        kept.mkdir()
        scripts = {
            "sbatch": (
                "for last; do :; done\n"
                f"n=$(( $(cat {self.site_dir}/counter 2>/dev/null || echo 5000) + 1 ))\n"
                f"echo $n > {self.site_dir}/counter\n"
                f'cp "$last" {kept}/$n.sh\n'
                f"env > {kept}/$n.env\n"
                f'tok=$(grep -o "{token_tag("")}[0-9a-f]*" "$last" | head -n 1)\n'
                f'echo "$n|RUNNING|N/A|N/A|2026-01-01T00:00:00|10:00|1|1|$USER|debug|N/A|'
                f'node1|None|$tok|job" >> {queue}\n'
                "echo $n\n"),
            "squeue": f"cat {queue}\n",
            "sacct": f"cat {done}\n",
            "scontrol": "exit 0\n",
            "sinfo": "exit 0\n",
        }
        for name, body in scripts.items():
            (bin_dir / name).write_text("#!/bin/sh\n" + body)
            (bin_dir / name).chmod(0o755)
        sites = self.base / "sites.yaml"
        sites.write_text(yaml.safe_dump({"sites": [{
            "name": name, "scheduler": "slurm", "transport": {"kind": "local"},
            "workdir": f"~/.diamond/{name}",
            "preamble": f'PATH={bin_dir}:"$PATH"; export PATH'} for name in SITES]}))
        return sites

    def finish(self, native_id: str, state: str = "COMPLETED") -> None:
        """The job leaves the queue and accounting has its end, as Slurm's would."""
        queue = self.site_dir / "queue.txt"
        lines = [x for x in queue.read_text().splitlines() if not x.startswith(f"{native_id}|")]
        queue.write_text("".join(x + "\n" for x in lines))
        with (self.site_dir / "done.txt").open("a") as f:
            f.write(f"{native_id}|{state}|0:0|2026-01-01T00:00:01|2026-01-01T00:00:02|node1|"
                    f"job|{native_id}\n")

    # -- the hub --------------------------------------------------------------------------
    def config(self, sites: Path) -> str:
        args = ["--allow-root", f"--DiamondApp.sites_file={sites}",
                "--DiamondApp.poll_interval_s=1", "--DiamondApp.min_poll_s=0.3",
                "--DiamondApp.store_poll_s=0.5"]
        env_keep = ["PATH", "PYTHONPATH", "LANG", "LC_ALL"]
        return "\n".join([
            "c = get_config()  # noqa: F821",
            f"c.JupyterHub.bind_url = 'http://127.0.0.1:{self.port}{BASE_URL}'",
            f"c.JupyterHub.hub_bind_url = 'http://127.0.0.1:{_free_port()}'",
            f"c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:{_free_port()}'",
            f"c.ConfigurableHTTPProxy.pid_file = {str(self.base / 'proxy.pid')!r}",
            f"c.JupyterHub.db_url = 'sqlite:///{self.base / 'hub.sqlite'}'",
            f"c.JupyterHub.cookie_secret_file = {str(self.base / 'cookie_secret')!r}",
            "c.JupyterHub.cleanup_servers = True",
            "c.JupyterHub.allow_named_servers = True",
            "c.JupyterHub.authenticator_class = 'dummy'",
            "c.Authenticator.allow_all = True",
            "c.JupyterHub.spawner_class = 'jupyterhub.spawner.SimpleLocalProcessSpawner'",
            f"c.SimpleLocalProcessSpawner.home_dir_template = "
            f"{str(self.base / 'home' / '{username}')!r}",
            f"c.Spawner.cmd = [{sys.executable!r}, '-m', 'jupyterhub.singleuser']",
            f"c.Spawner.args = {args!r}",
            f"c.Spawner.env_keep = {env_keep!r}",
            "c.Spawner.start_timeout = 300",
            "c.Spawner.http_timeout = 300",
            f"PER_USER = {self.per_user()!r}",
            "def pre_spawn_hook(spawner):",
            "    extra = PER_USER.get(spawner.user.name, {})",
            "    spawner.args = [*spawner.args, *extra.get('args', [])]",
            "    spawner.environment = {**spawner.environment, **extra.get('env', {})}",
            "c.Spawner.pre_spawn_hook = pre_spawn_hook",
            # the idle-culler's service and role, as jupyterhub-idle-culler documents them
            f"c.JupyterHub.services = [{{'name': 'culler', 'api_token': {SERVICE_TOKEN!r}}}]",
            "c.JupyterHub.load_roles = [{'name': 'culler', 'services': ['culler'], 'scopes': "
            "['list:users', 'read:users:activity', 'read:servers', 'delete:servers', "
            "'admin:users', 'servers', 'tokens']}]",
        ]) + "\n"

    def per_user(self) -> dict[str, dict[str, Any]]:
        """The admin's settings for some users: carol's from a config directory of the
        admin's (a bad value and an unknown name), dave's on the command line (a bad
        number), erin's own sites file read (her file has a typo); frank's one allowed site
        in a `jupyter_server_config.d` file, gina's in one flag."""
        admin_dir = self.base / "etc-carol"
        (admin_dir / "jupyter_server_config.d").mkdir(parents=True)
        (admin_dir / "jupyter_server_config.d" / "diamond.json").write_text(
            '{\n  "DiamondApp": {\n    "agent_approval": "ask",\n'
            '    "allowed_partitions": {"alpha": "debug"},\n'
            '    "allowed_site": ["alpha"]\n  }\n}\n')
        frank = self.base / "etc-frank" / "jupyter_server_config.d"
        frank.mkdir(parents=True)
        (frank / "diamond.json").write_text('{"DiamondApp": {"allowed_sites": ["beta"]}}\n')
        erin = self.home("erin") / ".config" / "diamond"
        erin.mkdir(parents=True)
        (erin / "user-sites.yaml").write_text(
            "sites:\n  - name: lab\n    transport: {kind: ssh, host: login.partner.example,"
            " prot: 22}\n")
        return {"carol": {"env": {"JUPYTER_CONFIG_PATH": str(admin_dir)}},
                "dave": {"args": ["--DiamondApp.max_body_bytes=1MB"]},
                "frank": {"env": {"JUPYTER_CONFIG_PATH": str(frank.parent)}},
                "gina": {"args": ["--DiamondApp.allowed_sites=beta"]},
                "erin": {"args": ["--DiamondApp.user_site_hosts=*.partner.example"]}}

    def start(self) -> None:
        self.base.joinpath("home").mkdir(parents=True, exist_ok=True)
        sites = self.write_site()
        cfg = self.base / "jupyterhub_config.py"
        cfg.write_text(self.config(sites))
        log = (self.base / "hub.log").open("w")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "DIAMOND"))}
        self.proc = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(cfg)],
                                     cwd=self.base, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env,
                                     start_new_session=True)
        wait_for(lambda: self.call("/hub/api/", SERVICE_TOKEN)[0] == 200, 120, "the hub",
                 self)
        for name in (*USERS, *MISCONFIGURED):
            status, body = self.call(f"/hub/api/users/{quote(name, safe='')}", SERVICE_TOKEN,
                                     "POST", {})
            assert status in (201, 409), (name, status, body)
            self.tokens[name] = self.token(name, [f"access:servers!user={name}", "self"])

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    def log(self) -> str:
        """The hub's errors, then the end of its log."""
        lines = (self.base / "hub.log").read_text(errors="replace").splitlines()
        errors = [x for x in lines if x.startswith(("[E", "[C")) or "Error:" in x]
        return "\n".join([*errors[:20], "...", *lines[-30:]])

    def token(self, user: str, scopes: list[str]) -> str:
        status, made = self.call(f"/hub/api/users/{quote(user, safe='')}/tokens",
                                 SERVICE_TOKEN, "POST", {"scopes": scopes, "note": "test"})
        assert status in (200, 201), (user, status, made)
        return made["token"]

    def call(self, path: str, token: str | None, method: str = "GET",
             body: Any = None, timeout: float = 60) -> tuple[int, Any]:
        """(status, JSON or text) of one request through the proxy; no redirect followed."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"token {token}"
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers=headers)
        try:
            with OPENER.open(req, timeout=timeout) as resp:
                status, text = resp.status, resp.read().decode()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode(errors="replace")
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    # -- users' servers -------------------------------------------------------------------
    @staticmethod
    def server_path(user: str, server: str = "") -> str:
        """/user/NAME/[SERVER/], escaped as the hub escapes them."""
        path = f"/user/{quote(user, safe='@~')}/"
        return path + (f"{quote(server, safe='@~')}/" if server else "")

    def spawn(self, user: str, server: str = "") -> str:
        """Start USER's server (named SERVER) and wait until it answers; its path."""
        api = f"/hub/api/users/{quote(user, safe='')}/" + (
            f"servers/{quote(server, safe='')}" if server else "server")
        status, body = self.call(api, SERVICE_TOKEN, "POST", {})
        assert status in (201, 202, 400), (user, server, status, body)
        _, info = self.call(f"/hub/api/users/{quote(user, safe='')}", SERVICE_TOKEN)
        path = info["servers"][server]["url"].removeprefix(BASE_URL.rstrip("/"))
        wait_for(lambda: self.call(path + "diamond/api/state", self.tokens[user])[0] == 200,
                 START_TIMEOUT_S, f"{user}'s server {server!r}", self)
        return path

    def stop_server(self, user: str, server: str = "") -> None:
        """As the idle-culler does: DELETE the server with its service's token, then wait
        until the hub says it is gone."""
        api = f"/hub/api/users/{quote(user, safe='')}/" + (
            f"servers/{quote(server, safe='')}" if server else "server")
        status, body = self.call(api, SERVICE_TOKEN, "DELETE")
        assert status in (202, 204), (status, body)

        def gone() -> bool:
            _, info = self.call(f"/hub/api/users/{quote(user, safe='')}", SERVICE_TOKEN)
            return server not in info["servers"]
        wait_for(gone, 120, f"{user}'s server {server!r} to stop", self)

    def home(self, user: str) -> Path:
        return self.base / "home" / user


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kw: Any) -> None:
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def wait_for(pred: Callable[[], Any], timeout: float, what: str, hub: Hub) -> Any:
    """Poll PRED (a request to a process this test does not drive) until it holds."""
    deadline = time.monotonic() + timeout
    delay = 0.1
    while True:
        try:
            got = pred()
        except (OSError, urllib.error.URLError):
            got = None
        if got:
            return got
        if hub.proc is not None and hub.proc.poll() is not None:
            pytest.fail(f"jupyterhub exited ({hub.proc.returncode}): {hub.log()}")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}: {hub.log()}")
        time.sleep(delay)
        delay = min(delay * 1.5, 1.0)


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Iterator[Hub]:
    h = Hub(tmp_path_factory.mktemp("hub"))
    try:
        h.start()
        for user in USERS:
            h.spawn(user)
        yield h
    finally:
        h.stop()


def submit(hub: Hub, user: str, server_path: str | None = None, name: str = "hubjob") -> dict:
    path = (server_path or hub.server_path(user)) + "diamond/api/jobs"
    status, job = hub.call(path, hub.tokens[user], "POST", {
        "site": "alpha", "script": f"#!/bin/bash\n#SBATCH -J {name}\n#SBATCH -t 5\nhostname\n"})
    assert status == 201, (status, job)
    return job


def job_of(hub: Hub, user: str, job_id: str, server_path: str | None = None) -> dict:
    status, job = hub.call((server_path or hub.server_path(user))
                           + f"diamond/api/jobs/{quote(job_id, safe='')}", hub.tokens[user])
    assert status == 200, (status, job)
    return job


def events_of(hub: Hub, user: str, server_path: str | None = None) -> list[dict]:
    status, body = hub.call((server_path or hub.server_path(user))
                            + "diamond/api/events?since=0&limit=1000", hub.tokens[user])
    assert status == 200, (status, body)
    return body["events"]


def store_of(hub: Hub, user: str) -> Path:
    return hub.home(user) / ".local" / "share" / "diamond" / "diamond.sqlite3"


# -- every user's server, whatever the name --------------------------------------------------
@pytest.mark.parametrize("user", USERS)
def test_each_users_server_answers_under_its_escaped_prefix(hub, user):
    status, state = hub.call(hub.server_path(user) + "diamond/api/state", hub.tokens[user])
    assert status == 200, state
    assert state["error"] is None and [s["name"] for s in state["sites"]] == SITES, state


@pytest.mark.parametrize("user", USERS)
def test_each_users_store_is_in_their_own_home_and_private(hub, user):
    store = store_of(hub, user)
    assert store.exists(), sorted(str(p) for p in hub.home(user).rglob("*"))[:20]
    assert store.stat().st_mode & 0o077 == 0, oct(store.stat().st_mode)


@pytest.mark.parametrize("user", USERS)
def test_an_unknown_route_names_the_path_from_diamond_api_not_the_prefix(hub, user):
    status, body = hub.call(hub.server_path(user) + "diamond/api/nope", hub.tokens[user])
    assert status == 404, body
    assert body["message"].startswith("no API route /diamond/api/nope;"), body


@pytest.mark.parametrize("user", USERS)
def test_the_event_stream_answers_under_the_escaped_prefix(hub, user):
    assert isinstance(events_of(hub, user), list)


# -- tokens and scopes -----------------------------------------------------------------------
@pytest.mark.parametrize(("owner", "other"), [("alice", "bob"), ("zoë", "a.b-c@x"),
                                              ("a.b-c@x", "zoë")])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_one_users_token_never_opens_anothers_routes(hub, owner, other, method):
    body = {} if method == "POST" else None
    for route in ("state", "jobs", "events", "sites/alpha", "dashboard", "tasks"):
        status, reply = hub.call(hub.server_path(other) + f"diamond/api/{route}",
                                 hub.tokens[owner], method, body)
        assert status in (302, 401, 403), (owner, other, route, status, reply)
        assert "alpha" not in json.dumps(reply) or status == 302, reply


def test_a_token_scoped_to_one_users_server_opens_it_and_nothing_else(hub):
    scoped = hub.token("alice", ["access:servers!user=alice"])
    status, state = hub.call(hub.server_path("alice") + "diamond/api/state", scoped)
    assert status == 200 and state["error"] is None, state
    assert hub.call(hub.server_path("bob") + "diamond/api/state", scoped)[0] in (302, 403)
    # of the hub it reads no other user, and it starts or stops no server
    assert hub.call("/hub/api/users/bob", scoped)[0] in (403, 404)
    assert hub.call("/hub/api/users/alice/server", scoped, "DELETE")[0] == 403


def test_a_token_without_access_to_servers_is_refused_by_the_users_own_server(hub):
    reader = hub.token("alice", ["read:users:name!user=alice"])
    for method in ("GET", "POST"):
        status, reply = hub.call(hub.server_path("alice") + "diamond/api/jobs", reader,
                                 method, {} if method == "POST" else None)
        assert status in (302, 403), (method, status, reply)


def test_a_revoked_token_is_refused_by_diamonds_routes_within_the_bound(hub):
    tok = hub.token("bob", ["access:servers!user=bob"])
    state = hub.server_path("bob") + "diamond/api/state"
    assert hub.call(state, tok)[0] == 200  # the server now caches the hub's answer
    status, tokens = hub.call("/hub/api/users/bob/tokens", SERVICE_TOKEN)
    assert status == 200, tokens
    # the newest token is the one just made
    newest = max(tokens["api_tokens"], key=lambda t: t["created"])
    assert hub.call(f"/hub/api/users/bob/tokens/{newest['id']}", SERVICE_TOKEN,
                    "DELETE")[0] == 204
    assert hub.call("/hub/api/user", tok)[0] == 403  # the hub's own routes: at once
    # diamond's routes, reading and writing: once the server's cached answer (5 s,
    # DiamondApp.hub_token_check_s; JupyterHub's default is 300) has expired
    bound_s = 5.0
    wait_for(lambda: hub.call(state, tok)[0] in (302, 403), bound_s + 20,
             "bob's server to refuse the revoked token", hub)
    status, reply = hub.call(hub.server_path("bob") + "diamond/api/jobs", tok, "POST", {})
    assert status in (302, 403), (status, reply)
    # bob's other token still works: the shorter cache asks the hub again, and it answers
    assert hub.call(state, hub.tokens["bob"])[0] == 200


# -- jobs and events of two users never mix ------------------------------------------------
def test_two_users_jobs_and_events_stay_in_their_own_server_and_store(hub):
    a = submit(hub, "alice", name="alices")
    z = submit(hub, "zoë", name="zoes")
    assert a["id"] != z["id"]
    for user, mine, theirs in (("alice", a, z), ("zoë", z, a)):
        status, jobs = hub.call(hub.server_path(user) + "diamond/api/jobs?limit=500",
                                hub.tokens[user])
        ids = [j["id"] for j in jobs["jobs"]]
        assert mine["id"] in ids and theirs["id"] not in ids, (user, ids)
        assert theirs["id"] not in json.dumps(events_of(hub, user))
        with sqlite3.connect(f"file:{store_of(hub, user)}?mode=ro", uri=True) as con:
            rows = {r[0] for r in con.execute("SELECT id FROM jobs")}
        assert mine["id"] in rows and theirs["id"] not in rows, (user, rows)
    # each job's files are under its submitter's home only
    for user, job in (("alice", a), ("zoë", z)):
        script = (hub.site_dir / "kept" / f"{job['native_id']}.sh").read_text()
        assert str(hub.home(user)) in script, script[:400]
        other = "zoë" if user == "alice" else "alice"
        assert str(hub.home(other)) not in script


def test_the_hubs_token_never_reaches_the_scheduler_or_the_job(hub):
    job = submit(hub, "bob", name="secretcheck")
    env = (hub.site_dir / "kept" / f"{job['native_id']}.env").read_text()
    script = (hub.site_dir / "kept" / f"{job['native_id']}.sh").read_text()
    leaked = [line.split("=")[0] for line in env.splitlines()
              if line.startswith(("JUPYTERHUB_", "JPY_API_TOKEN"))]
    assert leaked == [], leaked
    assert hub.tokens["bob"] not in env and hub.tokens["bob"] not in script
    assert "JUPYTERHUB" not in script


# -- a server stopped mid-job and started again ---------------------------------------------
def test_a_server_stopped_by_the_culler_mid_job_loses_nothing(hub):
    user = "a.b-c@x"
    job = submit(hub, user, name="outlive")
    before = [e for e in events_of(hub, user) if e.get("job_id") == job["id"]]
    assert before
    hub.stop_server(user)
    # the job ends while no server of the user runs
    hub.finish(str(job["native_id"]))
    hub.spawn(user)
    # the new server re-attaches the job from the store and learns its end
    done = wait_for(lambda: (j := job_of(hub, user, job["id"]))["state"] == "COMPLETED" and j,
                    120, "the job's end after the restart", hub)
    assert done["native_id"] == job["native_id"]
    after = [e for e in events_of(hub, user) if e.get("job_id") == job["id"]]
    assert [e["seq"] for e in after[:len(before)]] == [e["seq"] for e in before]
    states = [e["data"].get("state") for e in after if e["kind"] == "job.state"]
    assert states and states[-1] == "COMPLETED", states  # the end, seen by the new server


def test_a_workflow_and_its_plan_survive_the_servers_restart(hub):
    user = "bob"
    path = hub.server_path(user)
    wf = {"name": "approve-me", "steps": [{"name": "one", "site": "alpha",
                                          "script": "#!/bin/bash\n#SBATCH -t 5\necho one\n"}]}
    status, made = hub.call(path + "diamond/api/workflows", hub.tokens[user], "POST",
                            {"workflow": wf})
    assert status in (200, 201, 202), (status, made)
    wid = made["id"]
    status, plan = hub.call(path + f"diamond/api/workflows/{quote(wid, safe='')}/plan",
                            hub.tokens[user])
    assert status == 200, plan
    hub.stop_server(user)
    hub.spawn(user)
    status, again = hub.call(path + f"diamond/api/workflows/{quote(wid, safe='')}",
                             hub.tokens[user])
    assert status == 200, again
    assert again["id"] == wid
    status, plan2 = hub.call(path + f"diamond/api/workflows/{quote(wid, safe='')}/plan",
                             hub.tokens[user])
    assert status == 200 and plan2.get("sha256") == plan.get("sha256"), (plan, plan2)


# -- named servers ---------------------------------------------------------------------------
def test_a_named_server_shares_the_users_store(hub):
    path = hub.spawn("alice", "lab-2")  # JupyterHub 6 takes slugs as server names
    assert path == "/user/alice/lab-2/", path
    job = submit(hub, "alice", path, name="fromlab")
    # the default server sees the job the named one submitted: one store per user
    seen = wait_for(lambda: job["id"] in json.dumps(
        hub.call(hub.server_path("alice") + "diamond/api/jobs?limit=500",
                 hub.tokens["alice"])[1]), 60, "the named server's job in the default's", hub)
    assert seen
    # bob's token does not open alice's named server
    assert hub.call(path + "diamond/api/state", hub.tokens["bob"])[0] in (302, 403)
    hub.stop_server("alice", "lab-2")
    # the default server goes on
    assert hub.call(hub.server_path("alice") + "diamond/api/state",
                    hub.tokens["alice"])[0] == 200


# -- the admin's settings refused, each said where ------------------------------------------
def state_error(hub: Hub, user: str) -> str:
    hub.spawn(user)
    status, state = hub.call(hub.server_path(user) + "diamond/api/state", hub.tokens[user])
    assert status == 200, state
    return state["error"] or ""


def test_a_bad_value_and_an_unknown_name_in_the_admins_file_are_refused_by_line(hub):
    error = state_error(hub, "carol")
    path = hub.base / "etc-carol" / "jupyter_server_config.d" / "diamond.json"
    assert "the engine is not started" in error, error
    assert f"DiamondApp.allowed_partitions = {{'alpha': 'debug'}} in {path} (line 4)" \
        in error, error
    assert f"DiamondApp.allowed_site in {path} (line 5): unknown setting (did you mean " \
           "allowed_sites?" in error, error
    # the good setting is not named, and nothing else of the API runs on half a policy
    assert "agent_approval" not in error.split("diamond settings:")[0]
    status, body = hub.call(hub.server_path("carol") + "diamond/api/jobs",
                            hub.tokens["carol"], "POST", {"site": "alpha",
                                                          "script": "#!/bin/sh\n"})
    assert status == 503 and body["reason"] == "not-configured", body


def test_a_bad_number_on_the_spawners_command_line_is_refused_naming_it(hub):
    error = state_error(hub, "dave")
    assert "DiamondApp.max_body_bytes = '1MB' in the server's command line (under " \
           "JupyterHub: c.Spawner.args): expected an int, not the str '1MB'" in error, error


def test_a_typo_in_the_users_own_sites_file_keeps_the_admins_sites(hub):
    hub.spawn("erin")
    status, state = hub.call(hub.server_path("erin") + "diamond/api/state",
                             hub.tokens["erin"])
    assert status == 200, state
    assert state["error"] is None and [s["name"] for s in state["sites"]] == SITES, state
    (why,) = state["refused_sites"]
    path = hub.home("erin") / ".config" / "diamond" / "user-sites.yaml"
    assert why.startswith(f"{path}: not read, none of its sites is loaded:"), why
    assert "transport.prot: unknown key (did you mean port?" in why and "(line 3)" in why, why


@pytest.mark.parametrize("user", ["frank", "gina"])
def test_one_allowed_site_from_a_config_d_file_or_one_flag_is_the_only_site(hub, user):
    """frank's admin file is /etc/jupyter/jupyter_server_config.d/diamond.json (as the docs
    advise; Jupyter reads such files for enabled extensions only), gina's one
    `--DiamondApp.allowed_sites=beta` (traitlets reads one flag of a list as no list)."""
    hub.spawn(user)
    status, state = hub.call(hub.server_path(user) + "diamond/api/state", hub.tokens[user])
    assert status == 200 and state["error"] is None, state
    assert [s["name"] for s in state["sites"]] == ["beta"], state
    status, body = hub.call(hub.server_path(user) + "diamond/api/jobs", hub.tokens[user],
                            "POST", {"site": "alpha", "script": "#!/bin/bash\nhostname\n"})
    assert status in (400, 403, 422) and "alpha" in body["message"], body


def test_a_user_diamond_with_a_server_api_is_told_the_route_from_diamond_api(hub):
    """/user/diamond/api/ is the prefix: the 404 names what follows it, not the prefix."""
    path = hub.spawn("diamond", "api")
    assert path == "/user/diamond/api/", path
    status, body = hub.call(path + "diamond/api/nope", hub.tokens["diamond"])
    assert status == 404, body
    assert body["message"].startswith("no API route /diamond/api/nope;"), body
    status, state = hub.call(path + "diamond/api/state", hub.tokens["diamond"])
    assert status == 200 and state["error"] is None, state
