"""The test bed's JupyterHub (`scripts/hub.sh`), brought up and down for a test module; and
a JupyterHub of a test module's own (`RealHub`, no test bed): its users' servers are real
`jupyterhub.singleuser`s spawned by the hub (`SimpleLocalProcessSpawner`: a home of its own
per user, as this process's login); the one site is local, its `sbatch`, `squeue` and
`sacct` are small scripts over files."""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self
from urllib.parse import quote

import pytest
import yaml

from diamond_jupyter.sites import token_tag

ROOT = Path(__file__).resolve().parent.parent


def hub_sh(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHON": sys.executable, "DIAMOND_NO_VENV": "1"}
    return subprocess.run([str(ROOT / "scripts" / "hub.sh"), *args], capture_output=True,
                          text=True, env=env, timeout=timeout, check=False)


@contextmanager
def hub_up(*up_args: str) -> Iterator[dict]:
    """`hub.sh up UP_ARGS --json`, giving what it prints; `hub.sh down` after, which must
    succeed."""
    r = hub_sh("up", *up_args, "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    try:
        yield info
    finally:
        down = hub_sh("down", "--json")
        assert down.returncode == 0, down.stderr


SITES = ["alpha", "beta"]  # one cluster's two doors, for allowed_sites
BASE_URL = "/hpc~c1/"  # the hub's own base_url: '~' is kept as is in a URL path
SERVICE_TOKEN = secrets.token_hex(24)  # the culler-like admin service's
START_TIMEOUT_S = 240.0  # a loaded machine starts a server slowly


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RealHub:
    """One JupyterHub process, its users' servers and the local site's files; USERS are
    made at the start, each given a token to its own servers."""

    users: tuple[str, ...] = ()
    base_url = BASE_URL  # the hub's own: `c.JupyterHub.bind_url`'s path

    def __init__(self, base: Path) -> None:
        self.base = base
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}{self.base_url.rstrip('/')}"
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
                # one sbatch at a time, as slurmctld numbers jobs: submits at once each
                # get their own id
                f"exec 9>>{self.site_dir}/counter.lock; flock 9\n"
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
            f"c.JupyterHub.bind_url = 'http://127.0.0.1:{self.port}{self.base_url}'",
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
        """{user: {"args": [...], "env": {...}}}: what the spawner adds for some users."""
        return {}

    def start(self) -> None:
        self.base.joinpath("home").mkdir(parents=True, exist_ok=True)
        self.launch(self.config(self.write_site()))
        for name in self.users:
            status, body = self.call(f"/hub/api/users/{quote(name, safe='')}", SERVICE_TOKEN,
                                     "POST", {})
            assert status in (201, 409), (name, status, body)
            self.tokens[name] = self.token(name, [f"access:servers!user={name}", "self"])

    @contextmanager
    def serving(self, users: Iterable[str]) -> Iterator[Self]:
        """The hub started with `users`' servers spawned (a module's `hub` fixture);
        stopped on leaving, whatever the test left."""
        try:
            self.start()
            for user in users:
                self.spawn(user)
            yield self
        finally:
            self.stop()

    def launch(self, config: str) -> None:
        """Run the hub with CONFIG (again, after `stop`: its log goes on, its database and
        the servers it left running are its own again) and wait until it answers."""
        cfg = self.base / "jupyterhub_config.py"
        cfg.write_text(config)
        log = (self.base / "hub.log").open("a")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "DIAMOND"))}
        self.proc = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(cfg)],
                                     cwd=self.base, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env,
                                     start_new_session=True)
        wait_for(lambda: self.call("/hub/api/", SERVICE_TOKEN)[0] == 200, 120, "the hub",
                 self)

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
        path = info["servers"][server]["url"].removeprefix(self.base_url.rstrip("/"))

        def answers() -> bool:
            # the hub says it is ready, and diamond's JSON answers: while a server named
            # "lab" starts, its path is the default server's JupyterLab page (200, HTML)
            _, info = self.call(f"/hub/api/users/{quote(user, safe='')}", SERVICE_TOKEN)
            status, state = self.call(path + "diamond/api/state", self.tokens[user])
            return info["servers"][server]["ready"] and status == 200 \
                and isinstance(state, dict)
        wait_for(answers, START_TIMEOUT_S, f"{user}'s server {server!r}", self)
        return path

    @contextmanager
    def named_server(self, user: str, server: str) -> Iterator[str]:
        """USER's server SERVER spawned (its path) and stopped on leaving."""
        path = self.spawn(user, server)
        try:
            yield path
        finally:
            self.stop_server(user, server)

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


def wait_for(pred: Callable[[], Any], timeout: float, what: str, hub: RealHub) -> Any:
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


def server_environ(user: str) -> dict[str, str]:
    """The environment the spawner gave USER's default server (its process, read in /proc)."""
    for proc in Path("/proc").iterdir():
        try:
            raw = (proc / "environ").read_bytes()
        except OSError:
            continue
        env = dict(x.split("=", 1) for x in raw.decode(errors="replace").split("\0") if "=" in x)
        if env.get("JUPYTERHUB_USER") == user and not env.get("JUPYTERHUB_SERVER_NAME") \
                and "JUPYTERHUB_API_TOKEN" in env and "singleuser" in \
                (proc / "cmdline").read_bytes().decode(errors="replace"):
            return env
    pytest.fail(f"no server process of {user}")


def submit(hub: RealHub, user: str, server_path: str | None = None, name: str = "hubjob") -> dict:
    path = (server_path or hub.server_path(user)) + "diamond/api/jobs"
    status, job = hub.call(path, hub.tokens[user], "POST", {
        "site": "alpha", "script": f"#!/bin/bash\n#SBATCH -J {name}\n#SBATCH -t 5\nhostname\n"})
    assert status == 201, (status, job)
    return job


def submit_located(hub: RealHub, user: str, server_path: str) -> tuple[str, dict]:
    """(the Location header, the job) of a new job USER submits through SERVER_PATH."""
    req = urllib.request.Request(
        hub.url + server_path + "diamond/api/jobs", method="POST",
        data=json.dumps({"site": "alpha", "script": "#!/bin/bash\n#SBATCH -t 5\nhostname\n"})
        .encode(),
        headers={"Authorization": f"token {hub.tokens[user]}",
                 "Content-Type": "application/json"})
    with OPENER.open(req, timeout=60) as resp:
        assert resp.status == 201, resp.status
        return resp.headers["Location"], json.loads(resp.read())


def job_of(hub: RealHub, user: str, job_id: str, server_path: str | None = None) -> dict:
    status, job = hub.call((server_path or hub.server_path(user))
                           + f"diamond/api/jobs/{quote(job_id, safe='')}", hub.tokens[user])
    assert status == 200, (status, job)
    return job


def events_of(hub: RealHub, user: str, server_path: str | None = None) -> list[dict]:
    status, body = hub.call((server_path or hub.server_path(user))
                            + "diamond/api/events?since=0&limit=1000", hub.tokens[user])
    assert status == 200, (status, body)
    return body["events"]


def store_of(hub: RealHub, user: str) -> Path:
    return hub.home(user) / ".local" / "share" / "diamond" / "diamond.sqlite3"
