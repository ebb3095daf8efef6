"""A real JupyterHub (no test bed), fourth sweep: a user's server the hub stops and starts
again replays its events in order and goes on numbering them; two users' event streams,
events and private files; a token scoped to one named server; the Location a named server
gives a new job; the hub's own variables malformed by the admin; and a server the
idle-culler stops while `sbatch` is still running. The hub and its one local site:
`hub_helpers.RealHub`."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hub_helpers import (
    BASE_URL,
    SERVICE_TOKEN,
    RealHub,
    events_of,
    job_of,
    store_of,
    submit,
    submit_located,
    wait_for,
)
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from diamond_jupyter.server.hub_env import hub_environment_problems

USERS = ("alice", "bob", "carol")
NAMED = "lab-4"
# the jobs a restarted server must still follow: recovery of an unbound submit waits for
# Federation's intent_grace_s (120 s) and runs every intent_sweep_s (30 s)
RECOVERY_DEADLINE_S = 120 + 30 + 120
SPAWN_FAILS_WITHIN_S = 60  # a fifth of the hub's default http_timeout


class Hub(RealHub):
    """RealHub whose spawns also read `spawn.json` ({user: {"env", "http_timeout"}}) at
    spawn time, so that a test changes what the admin gives one user; and whose `sbatch`
    waits while the file `hold` exists in the site's directory (`holding` says it waits)
    and queues each job under the login's name."""

    users = USERS

    @property
    def spawn_file(self) -> Path:
        return self.base / "spawn.json"

    def config(self, sites: Any) -> str:
        return super().config(sites) + "\n".join([
            "import json as _json, pathlib as _pathlib",
            f"_SPAWN = _pathlib.Path({str(self.spawn_file)!r})",
            "def _read_spawn_file(spawner):",
            "    pre_spawn_hook(spawner)",
            "    every = _json.loads(_SPAWN.read_text()) if _SPAWN.exists() else {}",
            "    extra = every.get(spawner.user.name, {})",
            "    spawner.environment = {**spawner.environment, **extra.get('env', {})}",
            "    if 'http_timeout' in extra:",
            "        spawner.http_timeout = extra['http_timeout']",
            "c.Spawner.pre_spawn_hook = _read_spawn_file",
        ]) + "\n"

    def write_site(self) -> Path:
        sites = super().write_site()
        sbatch = self.site_dir / "bin" / "sbatch"
        hold, holding = self.site_dir / "hold", self.site_dir / "holding"
        # the queue names the job's owner as the scheduler does, by the login's own name
        # (`id -un`, which diamond asks to tell its jobs from others'): every server here
        # runs as this process's login, whatever the spawner puts in $USER
        body = sbatch.read_text().removeprefix("#!/bin/sh\n").replace("|$USER|",
                                                                       "|$(id -un)|")
        sbatch.write_text(f"#!/bin/sh\nif [ -e {hold} ]; then touch {holding}; fi\n"
                          f"while [ -e {hold} ]; do sleep 0.2; done\nrm -f {holding}\n" + body)
        return sites


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Iterator[Hub]:
    with Hub(tmp_path_factory.mktemp("hub4")).serving(("alice", "bob")) as h:
        try:
            yield h
        finally:
            (h.site_dir / "hold").unlink(missing_ok=True)


def restart(hub: Hub, user: str) -> None:
    """The hub stops USER's server (as its idle-culler does) and starts it again."""
    hub.stop_server(user)
    hub.spawn(user)


def jobs_of(hub: Hub, user: str, server_path: str | None = None) -> dict[str, dict]:
    status, listed = hub.call((server_path or hub.server_path(user))
                              + "diamond/api/jobs?limit=500", hub.tokens[user])
    assert status == 200, (status, listed)
    return {j["id"]: j for j in listed["jobs"]}


def queued_native_ids(hub: Hub) -> list[str]:
    return [x.split("|", 1)[0] for x in
            (hub.site_dir / "queue.txt").read_text().splitlines() if x]


# -- a server the hub restarts keeps its events --------------------------------------------
def test_the_events_stored_before_a_restart_are_replayed_alike_and_numbered_on(hub):
    job = submit(hub, "alice", name="numbered")
    hub.finish(str(job["native_id"]))
    wait_for(lambda: job_of(hub, "alice", job["id"])["state"] == "COMPLETED", 60,
             "the job's end", hub)
    before = events_of(hub, "alice")
    mine = [e for e in before if e.get("job_id") == job["id"]]
    assert mine, before[-5:]
    restart(hub, "alice")
    after = events_of(hub, "alice")
    # every event stored before is replayed, the same seq and the same content, in order
    assert after[:len(before)] == before, (before[-3:], after[:len(before)][-3:])
    seqs = [e["seq"] for e in after]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), seqs
    # the restarted server numbers its new events after the old ones
    later = submit(hub, "alice", name="after-restart")
    wait_for(lambda: any(e.get("job_id") == later["id"] for e in events_of(hub, "alice")),
             60, "the new job's event", hub)
    new = [e for e in events_of(hub, "alice") if e.get("job_id") == later["id"]]
    assert min(e["seq"] for e in new) > max(seqs), (new, max(seqs))


def test_events_since_the_last_seen_seq_hold_only_what_happened_after_the_restart(hub):
    """A client that read up to some seq before the restart asks `since` it afterwards and
    gets only the newer events: no old event twice, none lost."""
    seen = events_of(hub, "alice")
    last = max(e["seq"] for e in seen)
    job = submit(hub, "alice", name="since")
    hub.finish(str(job["native_id"]), "FAILED")
    wait_for(lambda: job_of(hub, "alice", job["id"])["state"] == "FAILED", 60,
             "the job's end", hub)
    status, body = hub.call(hub.server_path("alice") + f"diamond/api/events?since={last}",
                            hub.tokens["alice"])
    assert status == 200, body
    assert [e for e in body["events"] if e["seq"] <= last] == [], body["events"][:3]
    ends = [e for e in body["events"] if e.get("job_id") == job["id"]
            and e["data"].get("state") == "FAILED"]
    assert ends, [e for e in body["events"] if e.get("job_id") == job["id"]]


# -- two users ------------------------------------------------------------------------------
def stream_url(hub: Hub, user: str) -> str:
    return (hub.url.replace("http://", "ws://", 1) + hub.server_path(user)
            + "api/events/subscribe")


async def open_stream(hub: Hub, user: str, token: str) -> WebSocketClientConnection:
    req = HTTPRequest(stream_url(hub, user), headers={"Authorization": f"token {token}"},
                      request_timeout=120)
    return await websocket_connect(req)


async def frames_until(conn: WebSocketClientConnection, text: str, timeout: float) -> list[str]:
    """Every frame read up to and including the first holding TEXT."""
    frames: list[str] = []

    async def read() -> list[str]:
        while True:
            msg = await conn.read_message()
            assert msg is not None, f"closed ({conn.close_code}: {conn.close_reason})"
            frames.append(msg)
            if text in msg:
                return frames
    return await asyncio.wait_for(read(), timeout)


def test_bobs_stream_carries_his_own_submit_and_nothing_of_alices(hub):
    async def scenario() -> tuple[dict, list[str]]:
        conn = await open_stream(hub, "bob", hub.tokens["bob"])
        alices = await asyncio.to_thread(submit, hub, "alice", name="alice-secret-run")
        bobs = await asyncio.to_thread(submit, hub, "bob", name="bobs-run")
        frames = await frames_until(conn, bobs["id"], 60)
        conn.close()
        return alices, frames
    alices, frames = asyncio.run(scenario())
    leaked = [f for f in frames if alices["id"] in f or "alice-secret-run" in f]
    assert leaked == [], leaked


def test_bobs_server_knows_none_of_alices_jobs_by_id_list_or_event(hub):
    alices = submit(hub, "alice", name="alice-only")
    bob = hub.server_path("bob")
    status, body = hub.call(bob + f"diamond/api/jobs/{quote(alices['id'], safe='')}",
                            hub.tokens["bob"])
    assert status == 404, (status, body)
    assert alices["id"] not in jobs_of(hub, "bob")
    assert [e for e in events_of(hub, "bob") if e.get("job_id") == alices["id"]] == []
    # nor does bob's store file hold it
    assert alices["id"].encode() not in store_of(hub, "bob").read_bytes()


@pytest.mark.parametrize("user", ("alice", "bob"))
def test_every_file_of_the_users_store_is_0600_and_every_directory_0700(hub, user):
    submit(hub, user, name="perms")
    data = store_of(hub, user).parent
    wrong = []
    for here, dirs, files in os.walk(data):
        for d in dirs:
            mode = stat.S_IMODE(os.stat(Path(here) / d).st_mode)
            if mode != 0o700:
                wrong.append((str(Path(here) / d), oct(mode)))
        for f in files:
            mode = stat.S_IMODE(os.stat(Path(here) / f).st_mode)
            if mode & 0o077:
                wrong.append((str(Path(here) / f), oct(mode)))
    assert stat.S_IMODE(data.stat().st_mode) == 0o700, oct(data.stat().st_mode)
    assert wrong == [], wrong


def test_the_job_directories_on_the_site_are_the_users_alone(hub):
    job = submit(hub, "bob", name="private-dir")
    workdir = hub.home("bob") / ".diamond" / "alpha"
    assert workdir.is_dir(), sorted(p.name for p in hub.home("bob").iterdir())
    open_to_others = [(str(p), oct(stat.S_IMODE(p.stat().st_mode)))
                      for p in [workdir, *workdir.rglob("*")]
                      if p.is_dir() and stat.S_IMODE(p.stat().st_mode) & 0o077]
    assert open_to_others == [], (job["id"], open_to_others)


# -- tokens and named servers ---------------------------------------------------------------
@pytest.fixture(scope="module")
def named(hub) -> Iterator[str]:
    with hub.named_server("alice", NAMED) as path:
        yield path


def test_a_token_scoped_to_one_named_server_opens_it_and_not_the_default(hub, named):
    scoped = hub.token("alice", [f"access:servers!server=alice/{NAMED}"])
    status, state = hub.call(named + "diamond/api/state", scoped)
    assert status == 200 and state["error"] is None, (status, state)
    for path in (hub.server_path("alice"), hub.server_path("bob")):
        status, body = hub.call(path + "diamond/api/jobs", scoped)
        assert status in (302, 403), (path, status, body)


def test_a_token_scoped_to_bobs_named_server_is_refused_on_alices(hub, named):
    bobs = hub.token("bob", [f"access:servers!server=bob/{NAMED}"])
    for method in ("GET", "POST"):
        status, body = hub.call(named + "diamond/api/jobs", bobs, method,
                                {} if method == "POST" else None)
        assert status in (302, 403), (method, status, body)


def test_a_named_servers_new_job_location_is_under_its_own_prefix(hub, named):
    assert named == f"/user/alice/{NAMED}/", named
    location, job = submit_located(hub, "alice", named)
    expected = f"{BASE_URL.rstrip('/')}{named}diamond/api/jobs/"
    assert location.startswith(expected), (location, expected)
    # the Location, followed through the proxy, is the job
    status, body = hub.call(location.removeprefix(BASE_URL.rstrip("/")), hub.tokens["alice"])
    assert status == 200 and body["id"] == job["id"], (status, body)


# -- the hub's own variables malformed ------------------------------------------------------
@pytest.mark.parametrize("bad_url", ["not-a-url", "http://127.0.0.1:notaport/hub/api"])
def test_a_malformed_hub_api_url_fails_the_spawn_and_the_good_one_keeps_the_jobs(hub, bad_url):
    """The admin gives carol's server a wrong JUPYTERHUB_API_URL: her server does not come
    up (the hub says it is not running, and no request reaches a half-started diamond);
    with the hub's own value again her server starts with her jobs."""
    user = "carol"
    hub.spawn_file.write_text("{}")
    hub.spawn(user)
    kept = submit(hub, user, name="before-bad-env")
    hub.stop_server(user)
    hub.spawn_file.write_text(json.dumps(
        {user: {"env": {"JUPYTERHUB_API_URL": bad_url}, "http_timeout": 30}}))
    try:
        status, body = hub.call(f"/hub/api/users/{user}/server", SERVICE_TOKEN, "POST", {})
        assert status in (201, 202, 500), (status, body)

        def failed() -> bool:
            _, info = hub.call(f"/hub/api/users/{user}", SERVICE_TOKEN)
            return "" not in info["servers"]
        # JupyterHub 6 waits http_timeout whether or not the process is alive: its spawn's
        # wait (User._wait_up) never polls it; only the POST's one poll at
        # slow_spawn_timeout (10 s) answers 500 for a server that already exited
        wait_for(failed, 180, "the hub to give up carol's server", hub)
        assert hub.call(hub.server_path(user) + "diamond/api/state",
                        hub.tokens[user])[0] != 200
        # the server's log (the hub's, for a local process) names the variable and its value
        said = f"the hub's environment: JUPYTERHUB_API_URL={bad_url!r}"
        wait_for(lambda: said in (hub.base / "hub.log").read_text(errors="replace"), 60,
                 "diamond's line on the bad URL", hub)
    finally:
        hub.spawn_file.write_text("{}")
    hub.spawn(user)
    assert jobs_of(hub, user)[kept["id"]]["native_id"] == kept["native_id"]
    hub.stop_server(user)


# -- the idle-culler while sbatch runs ------------------------------------------------------
def test_a_server_culled_while_sbatch_runs_leaves_no_queued_job_untracked(hub):
    """The culler stops bob's server while its `sbatch` has not answered yet. Whatever the
    scheduler then queued under the submit's token is, once the server is back, a job of
    bob's with that native id: nothing runs on the site that bob cannot see or cancel."""
    hold, holding = hub.site_dir / "hold", hub.site_dir / "holding"
    before = set(queued_native_ids(hub))
    hold.touch()
    replies: list[Any] = []

    def post() -> None:
        try:
            replies.append(hub.call(hub.server_path("bob") + "diamond/api/jobs",
                                    hub.tokens["bob"], "POST",
                                    {"site": "alpha",
                                     "script": "#!/bin/bash\n#SBATCH -t 5\nhostname\n"},
                                    timeout=120))
        except (OSError, urllib.error.URLError) as e:
            replies.append(e)
    poster = threading.Thread(target=post, daemon=True)
    try:
        poster.start()
        wait_for(holding.exists, 60, "bob's sbatch to start", hub)
        hub.stop_server("bob")
    finally:
        hold.unlink(missing_ok=True)
    poster.join(120)
    # the sbatch left running by the stopped server (if it was) ends and queues its job
    deadline = time.monotonic() + 30
    while holding.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    hub.spawn("bob")
    new = set(queued_native_ids(hub)) - before
    if not new:  # the stop ended sbatch too: nothing was queued, nothing to track
        return

    def all_tracked() -> bool:
        known = {str(j["native_id"]) for j in jobs_of(hub, "bob").values()}
        return new <= known
    wait_for(all_tracked, RECOVERY_DEADLINE_S, f"bob's server to track {sorted(new)}", hub)


# -- the hub's variables, read by a server started without a hub --------------------------
HUB_ENV = {
    "JUPYTERHUB_API_TOKEN": "0" * 32, "JUPYTERHUB_USER": "alice",
    "JUPYTERHUB_API_URL": "http://127.0.0.1:8081/hub/api",
    "JUPYTERHUB_SERVICE_URL": "http://127.0.0.1:0/user/alice/",
    "JUPYTERHUB_SERVICE_PREFIX": "/user/alice/", "JUPYTERHUB_BASE_URL": "/",
    "JUPYTERHUB_CLIENT_ID": "jupyterhub-user-alice",
    "JUPYTERHUB_OAUTH_CALLBACK_URL": "/user/alice/oauth_callback",
}


def first_line_holding(cmd: list[str], env: dict[str, str], text: str, cwd: Path,
                       timeout: float) -> str | None:
    """Run CMD until a line of its output holds TEXT (that line), or it ends or TIMEOUT
    passes (None); it is stopped either way."""
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    found: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if text in line:
                found.append(line.strip())
                return
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    return found[0] if found else None


@pytest.mark.parametrize(("name", "value", "said"), [
    ("JUPYTERHUB_API_URL", "hub.example/api", "is not an http(s) URL with a host"),
    ("JUPYTERHUB_API_URL", "http://127.0.0.1:eighty/hub/api", "is not a URL"),
    ("JUPYTERHUB_SERVICE_PREFIX", "user/alice", "must start and end with '/'"),
])
def test_a_malformed_hub_variable_is_named_with_its_value_when_the_server_starts(
        tmp_path, name, value, said):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "DIAMOND"))}
    env.update(HUB_ENV, HOME=str(tmp_path), **{name: value})
    line = first_line_holding([sys.executable, "-m", "jupyterhub.singleuser", "--allow-root",
                               "--port=0"], env, "the hub's environment:", tmp_path, 120)
    assert line is not None, "no line of diamond's on the hub's environment"
    assert f"{name}={value!r} {said}" in line, line
    assert HUB_ENV["JUPYTERHUB_API_TOKEN"] not in line


def test_the_hubs_variables_are_read_only_under_a_hub_and_a_missing_api_url_is_named():
    assert hub_environment_problems({"JUPYTERHUB_API_URL": "nonsense"}) == []
    assert hub_environment_problems(HUB_ENV) == []
    missing = {k: v for k, v in HUB_ENV.items() if k != "JUPYTERHUB_API_URL"}
    problems = hub_environment_problems(missing)
    assert len(problems) == 1 and problems[0].startswith("JUPYTERHUB_API_URL is not set"), \
        problems


def run_until_exit(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float,
                   text: str) -> tuple[int | None, str]:
    """Run CMD until it exits (its code) or TIMEOUT passes, or, once a line holds TEXT,
    2 s more (None: still running, then stopped); its output."""
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    lines: list[str] = []
    seen = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if text in line:
                seen.set()
        seen.set()  # the output ended: the process did
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    seen.wait(timeout)  # set by TEXT; else the reader ends when the process does
    try:
        code: int | None = proc.wait(2)
    except subprocess.TimeoutExpired:
        code = None
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    reader.join(5)
    return code, "".join(lines)


def test_the_hubs_server_exits_at_once_on_a_malformed_url_and_a_plain_server_runs_on(
        tmp_path):
    """Under the hub (`jupyterhub.singleuser`) a malformed JUPYTERHUB_API_URL ends the
    server with status 1, the line naming it kept; a plain `jupyter server` that only
    inherited the same variables says the line and goes on serving."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "DIAMOND"))}
    env.update(HUB_ENV, HOME=str(tmp_path), JUPYTERHUB_API_URL="hub.example/api")
    said = "the hub's environment: JUPYTERHUB_API_URL='hub.example/api'"
    started = time.monotonic()
    code, out = run_until_exit([sys.executable, "-m", "jupyterhub.singleuser", "--allow-root",
                                "--port=0"], env, tmp_path, 120, "is running at")
    assert code == 1, out[-3000:]
    assert said in out and "stopping the server" in out, out[-3000:]
    assert time.monotonic() - started < SPAWN_FAILS_WITHIN_S, out[-3000:]
    code, out = run_until_exit([sys.executable, "-m", "jupyter_server", "--allow-root",
                                "--port=0"], env, tmp_path, 120, "is running at")
    assert code is None and "is running at" in out, out[-3000:]
    assert said in out and "stopping the server" not in out, out[-3000:]
