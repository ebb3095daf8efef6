"""A real JupyterHub on this machine (`scripts/hub.sh up|down`): PAM logins of two system
users, each with their own single-user server running the diamond extension as that user,
on the test bed's sites; the server a local process, or a Slurm job on a test-bed cluster
(batchspawner)."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

import diamond_jupyter

from ..model import DiamondError
from .config import HubSettings, render
from .sites import hub_sites

USERS = ("alice", "bob")
START_TIMEOUT_S = 300.0  # a loaded machine, or a server that waits in a queue
MARK = "DIAMOND_HUB_DIR"  # in every single-user server's environment: what `down` stops


class HubError(DiamondError):
    """The hub cannot start or answer; the message says why."""


def base_dir() -> Path:
    return Path(os.environ.get(MARK, "/tmp/diamond-hub"))


def _run(*argv: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(argv, capture_output=True, text=True, input=input)
    if check and r.returncode != 0:
        raise HubError(f"`{' '.join(argv)}` failed ({r.returncode}): {r.stderr.strip()}")
    return r


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- users: a system account, a password for PAM, an SSH key of their own ----------------
def ensure_user(name: str) -> str:
    """Create the system user when missing; set a new random password; returns it."""
    if _run("getent", "passwd", name, check=False).returncode != 0:
        _run("useradd", "--create-home", "--shell", "/bin/bash", name)
    home = Path(pwd.getpwnam(name).pw_dir)
    home.mkdir(mode=0o700, exist_ok=True)
    pw = pwd.getpwnam(name)
    os.chown(home, pw.pw_uid, pw.pw_gid)
    os.chmod(home, 0o700)  # nobody else reads the user's store, keys or event files
    password = secrets.token_urlsafe(18)
    _run("chpasswd", input=f"{name}:{password}\n")
    return password


def as_user(name: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return _run("runuser", "-u", name, "--", *argv, check=check)


def ensure_key(name: str) -> str:
    """The user's own SSH key (~/.ssh/id_ed25519, made as the user); returns the public key."""
    home = Path(pwd.getpwnam(name).pw_dir)
    key = home / ".ssh" / "id_ed25519"
    if not key.exists():
        as_user(name, "mkdir", "-p", "-m", "700", str(key.parent))
        as_user(name, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                f"{name}@diamond-hub", "-f", str(key))
    return (key.parent / "id_ed25519.pub").read_text().strip()


def authorize_on_testbed(testbed_base: Path, name: str, public_key: str) -> None:
    """The test bed's sshds read `authorized_keys.%u` from one directory."""
    auth = testbed_base / "ssh" / f"authorized_keys.{name}"
    auth.write_text(public_key + "\n")
    os.chmod(auth, 0o644)


# -- the single-user environment ------------------------------------------------------------
def _runnable_by(name: str, path: str) -> bool:
    return as_user(name, "test", "-x", path, check=False).returncode == 0


def user_python(base: Path, users: tuple[str, ...]) -> str:
    """An interpreter every user can run, over this environment's packages.

    This process's own interpreter may live where the users cannot reach (e.g. a pyenv
    build under /root). The system's python of the same minor version can, and a venv of
    it whose site-packages, share/ and etc/ are this environment's loads the same packages
    (extensions of one minor version share their ABI), JupyterLab's assets and the
    server-extension config."""
    own = os.path.realpath(sys.executable)
    if all(_runnable_by(u, own) for u in users):
        return sys.executable
    minor = f"python{sys.version_info.major}.{sys.version_info.minor}"
    system = shutil.which(minor, path="/usr/bin:/usr/local/bin:/bin")
    if system is None or not all(_runnable_by(u, system) for u in users):
        raise HubError(f"no {minor} that the hub's users can run: {own} is out of their "
                       f"reach and /usr/bin/{minor} is missing (apt-get install {minor})")
    env = base / "env"
    purelib = Path(sysconfig.get_paths()["purelib"])
    site = env / "lib" / minor / "site-packages"
    if not (env / "bin" / "python").exists():
        (env / "bin").mkdir(parents=True, exist_ok=True)
        (env / "bin" / "python").symlink_to(system)
        site.parent.mkdir(parents=True, exist_ok=True)
        site.symlink_to(purelib, target_is_directory=True)
        for sub in ("share", "etc"):
            (env / sub).symlink_to(Path(sys.prefix) / sub, target_is_directory=True)
        (env / "pyvenv.cfg").write_text(
            f"home = {Path(system).parent}\ninclude-system-site-packages = false\n"
            f"version = {'.'.join(map(str, sys.version_info[:3]))}\n")
    for path in (purelib, _checkout()):
        for u in users:
            grant_traverse(base, u, path)
            if as_user(u, "test", "-r", str(path), check=False).returncode != 0:
                raise HubError(f"user {u} cannot read {path}: the hub's users need read "
                               "access to the project's environment (make its directories "
                               "o+rx, or install the package where they can read it)")
    return str(env / "bin" / "python")


def grant_traverse(base: Path, user: str, path: Path) -> None:
    """Let `user` pass through the directories above `path` they cannot enter (a checkout
    under /root): an ACL entry for that user alone, search only (no listing), recorded in
    base/acl.json and removed by `down`."""
    record = base / "acl.json"
    granted = json.loads(record.read_text()) if record.exists() else []
    for d in reversed(path.parents):
        if as_user(user, "test", "-x", str(d), check=False).returncode == 0:
            continue
        if shutil.which("setfacl") is None:
            raise HubError(f"user {user} cannot enter {d} (above {path}); install Debian's "
                           "acl (scripts/install.sh does) or put the checkout elsewhere")
        _run("setfacl", "-m", f"u:{user}:x", str(d))
        granted.append([user, str(d)])
    record.write_text(json.dumps(granted))


def revoke_traverse(base: Path) -> None:
    record = base / "acl.json"
    if not record.exists():
        return
    for user, d in json.loads(record.read_text()):
        _run("setfacl", "-x", f"u:{user}", d, check=False)
    record.unlink()


def _checkout() -> Path:
    """Where this diamond_jupyter package is imported from (a checkout or site-packages)."""
    return Path(diamond_jupyter.__file__).resolve().parent.parent


def _server_environment(base: Path, python: str, sites_file: Path) -> dict[str, str]:
    # DIAMOND_CONFIG: the CLI in the user's terminals and in-process kernels read the same
    env = {MARK: str(base), "PYTHONPATH": str(_checkout()), "DIAMOND_CONFIG": str(sites_file),
           "PATH": f"{Path(python).parent}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"}
    built = _checkout() / "diamond_jupyter" / "labextension"
    if (built / "package.json").exists():  # this checkout's sidebar before any installed one
        ext = base / "jupyter-path" / "labextensions"
        ext.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            (ext / "diamond-jupyter").symlink_to(built, target_is_directory=True)
        env["JUPYTER_PATH"] = str(base / "jupyter-path")
    return env


# -- HTTP against the hub ------------------------------------------------------------------
def _call(url: str, method: str = "GET", body: Any = None, token: str | None = None,
          timeout: float = 30) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"token {token}"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            text = resp.read().decode()
            return resp.status, json.loads(text) if text.strip() else None
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


def _wait(pred, timeout: float, what: str, log: Path | None = None,
          proc: subprocess.Popen | None = None) -> Any:
    deadline = time.monotonic() + timeout
    delay = 0.1
    while True:
        if proc is not None and proc.poll() is not None:
            raise HubError(f"jupyterhub exited ({proc.returncode}) while waiting for {what}:"
                           f" {_tail(log)}")
        with contextlib.suppress(OSError, urllib.error.URLError):
            got = pred()
            if got:
                return got
        if time.monotonic() > deadline:
            raise HubError(f"timed out after {timeout:.0f}s waiting for {what}: {_tail(log)}")
        time.sleep(delay)
        delay = min(delay * 1.5, 1.0)


def _tail(log: Path | None, n: int = 15) -> str:
    if log is None or not log.exists():
        return ""
    return " | ".join(log.read_text(errors="replace").splitlines()[-n:])


# -- up / down -----------------------------------------------------------------------------
def _pid(path: Path) -> int | None:
    try:
        pid = int(path.read_text().strip())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


def _tool(name: str) -> str:
    """A command's absolute path (the spawner's PATH is the users', without sbin)."""
    found = shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin:/usr/bin")
    if found is None:
        raise HubError(f"{name} is not installed (Debian's util-linux)")
    return found


def _batch_settings(site: str, partition: str | None) -> dict[str, str]:
    from ..testbed.clusters import cluster
    from ..testbed.configs import cluster_dir

    c = cluster(site)
    if c.scheduler != "slurm":
        raise HubError(f"--batch {site}: batchspawner here drives Slurm; {site} runs "
                       f"{c.scheduler}")
    from ..testbed import base_dir as tb_base

    conf = cluster_dir(tb_base(), c) / "etc" / "slurm.conf"
    return {
        "exec_prefix": f"{_tool('nsenter')} --net=/run/netns/{c.netns} {_tool('runuser')} "
                       f"-u {{username}} -- /usr/bin/env SLURM_CONF={conf}",
        "partition": partition or next(p.name for p in c.partitions if p.default),
        "node_ip": c.ip, "hub_ip": c.host_ip, "site": site,
        "singleuser_script": str(Path(sys.prefix) / "bin" / "jupyterhub-singleuser"),
    }


def up(*, batch_site: str | None = None, partition: str | None = None,
       admin: dict[str, Any] | None = None) -> dict[str, Any]:
    """Start the hub (after `down` of a running one); returns {"url", "users": [{"name",
    "token", "password"}], "mode", "sites_file"}. Each user's server is started and answers
    before this returns."""
    if os.geteuid() != 0:
        raise HubError("root is required (system users, PAM, servers run as each user)")
    proxy = shutil.which("configurable-http-proxy")
    if proxy is None:
        raise HubError("configurable-http-proxy is not on PATH: `npm install -g "
                       "configurable-http-proxy` (scripts/install.sh does)")
    from .. import testbed

    base = base_dir()
    down()
    base.mkdir(parents=True, exist_ok=True)
    os.chmod(base, 0o755)
    (base / "jupyterhub.sqlite").unlink(missing_ok=True)  # new tokens, no old servers
    testbed.lock.hold()
    tb = testbed.up()
    tb_path = Path(tb["config"])
    passwords = {}
    for name in USERS:
        passwords[name] = ensure_user(name)
        authorize_on_testbed(tb_path.parent, name, ensure_key(name))
    batch = _batch_settings(batch_site, partition) if batch_site else None
    sites = hub_sites(yaml.safe_load(tb_path.read_text()),
                      local_site=batch["site"] if batch else None)
    sites_file = base / "sites.yaml"
    sites_file.write_text("# the test bed's sites, for every hub user (scripts/hub.sh)\n"
                          + yaml.safe_dump(sites, sort_keys=False))
    os.chmod(sites_file, 0o644)
    admin = dict(admin or {})
    if batch and "allowed_sites" not in admin:
        # a compute node reaches its own cluster only (this machine forwards nothing
        # between the clusters' networks): the others would only time out
        admin["allowed_sites"] = [e["name"] for e in sites["sites"]
                                  if e["transport"].get("kind") == "local"
                                  or e["transport"].get("host") == batch["node_ip"]]
    python = user_python(base, USERS)
    settings = HubSettings(
        base=base, users=USERS, port=_free_port(),
        hub_ip=batch["hub_ip"] if batch else "127.0.0.1", hub_port=_free_port(),
        proxy_api_port=_free_port(), proxy_command=proxy, python=python,
        sites_file=sites_file, environment=_server_environment(base, python, sites_file),
        admin=admin, batch=batch)
    cfg = base / "jupyterhub_config.py"
    cfg.write_text(render(settings))
    log = base / "hub.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(cfg)],
                                cwd=base, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    (base / "hub.pid").write_text(str(proc.pid))
    url = f"http://127.0.0.1:{settings.port}"
    try:
        _wait(lambda: _call(f"{url}/hub/api/")[0] == 200, 120, "the hub's API", log, proc)
        users = []
        for name in USERS:
            status, made = _call(f"{url}/hub/api/users/{name}/tokens", "POST",
                                 {"auth": {"username": name, "password": passwords[name]},
                                  "note": "scripts/hub.sh"})
            if status not in (200, 201):
                raise HubError(f"no token for {name} (HTTP {status}: {made}): {_tail(log)}")
            users.append({"name": name, "token": made["token"], "password": passwords[name]})
        for u in users:  # every server starts at once; a batch job may wait in the queue
            status, body = _call(f"{url}/hub/api/users/{u['name']}/server", "POST", {},
                                 token=u["token"])
            if status not in (201, 202, 400):  # 400: already running
                raise HubError(f"{u['name']}'s server did not start (HTTP {status}: {body})")
        for u in users:
            _wait(lambda u=u: _call(f"{url}/user/{u['name']}/api/status",
                                    token=u["token"])[0] == 200,
                  START_TIMEOUT_S, f"{u['name']}'s server", log, proc)
    except BaseException:
        down()
        raise
    info = {"url": url, "users": users, "mode": "batch" if batch else "local",
            "sites_file": str(sites_file), "log": str(log)}
    if batch:
        info["batch_site"] = batch["site"]
    state = base / "state.json"
    state.touch(mode=0o600)
    state.write_text(json.dumps(info))
    return info


def _hub_processes(base: Path) -> list[int]:
    """Processes with this hub's mark in their environment (its single-user servers)."""
    mark = f"{MARK}={base}".encode()
    out = []
    for p in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if mark in (p / "environ").read_bytes().split(b"\0"):
                out.append(int(p.name))
    return [p for p in out if p != os.getpid()]


def _stop(pids: list[int], grace: float) -> None:
    for p in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    for p in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(") ", 1)[1][0] != "Z"


def _cancel_batch_jobs() -> list[str]:
    """The hub's single-user jobs left on the test bed's Slurm clusters (by their name)."""
    from ..testbed import base_dir as tb_base
    from ..testbed.clusters import SLURM_CLUSTERS
    from ..testbed.configs import cluster_dir

    done = []
    for c in SLURM_CLUSTERS:
        if not Path(f"/run/netns/{c.netns}").exists():
            continue
        env = {**os.environ, "SLURM_CONF": str(cluster_dir(tb_base(), c) / "etc" / "slurm.conf")}
        for u in USERS:
            r = subprocess.run(["nsenter", f"--net=/run/netns/{c.netns}", "scancel",
                                "--name=diamond-hub-singleuser", f"--user={u}"],
                               capture_output=True, text=True, env=env, check=False)
            if r.returncode == 0:
                done.append(f"{c.name}/{u}")
    return done


def down() -> dict[str, Any]:
    """Stop the hub, its proxy, every single-user server it started (batch jobs cancelled).
    The users, their homes and stores stay."""
    base = base_dir()
    stopped = []
    hub = _pid(base / "hub.pid")
    if hub is not None:
        _stop([hub], 60)  # the hub stops the servers and the proxy it started
        stopped.append("jupyterhub")
    proxy = _pid(base / "proxy.pid")
    if proxy is not None:
        _stop([proxy], 10)
        stopped.append("configurable-http-proxy")
    left = _hub_processes(base)
    if left:
        _stop(left, 20)
        stopped.append(f"{len(left)} single-user processes")
    state = json.loads((base / "state.json").read_text()) if (base / "state.json").exists() \
        else {}
    if state.get("mode") == "batch":
        _cancel_batch_jobs()
    revoke_traverse(base)
    for f in ("hub.pid", "proxy.pid", "state.json", "jupyterhub.pid"):
        (base / f).unlink(missing_ok=True)
    return {"stopped": stopped}
