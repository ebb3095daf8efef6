"""What a center meets running diamond-jupyter per user under JupyterHub, driven through a
real Jupyter server as the hub spawns it: a named server's base_url (`/user/NAME/SERVER/`),
the hub's `JUPYTERHUB_*` variables in its environment, its token auth, its store in the
user's home. One local Slurm site whose scheduler commands are fakes; no test bed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml
from jupyter_server.auth import Authorizer
from local_slurm import LocalSlurmQueue
from server_conftest import diamond_config
from tornado.httpclient import HTTPClientError

from diamond_jupyter.server.routes import NoRouteHandler, routes

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

PREFIX = "/user/alice/lab/"  # alice's named server "lab"
HUB_SECRET = "hubtoken-0f1e2d3c4b5a69788796a5b4c3d2e1f0"
HUB_ENV = {"JUPYTERHUB_API_TOKEN": HUB_SECRET, "JPY_API_TOKEN": HUB_SECRET,
           "JUPYTERHUB_CLIENT_ID": "jupyterhub-user-alice-lab",
           "JUPYTERHUB_API_URL": "http://127.0.0.1:8081/hub/api",
           "JUPYTERHUB_USER": "alice", "JUPYTERHUB_SERVER_NAME": "lab",
           "JUPYTERHUB_SERVICE_PREFIX": PREFIX, "JUPYTERHUB_BASE_URL": "/"}
SAMPLE = {"name": "alpha", "job_id": "alpha:100000", "workflow_id": "wf-0000",
          "prompt_id": "p-0000", "transfer_id": "0123456789abcdef"}


@pytest.fixture
def jp_base_url() -> str:
    return PREFIX


@pytest.fixture
def queue(tmp_path) -> LocalSlurmQueue:
    return LocalSlurmQueue(tmp_path)


@pytest.fixture
def home(tmp_path) -> Path:
    home = tmp_path / "alice"
    home.mkdir()
    return home


@pytest.fixture
def sites_file(tmp_path, queue) -> Path:
    path = tmp_path / "sites.yaml"
    path.write_text(yaml.safe_dump({"sites": [queue.site.cfg.model_dump(mode="json")]}))
    return path


@pytest.fixture
def jp_server_config(sites_file, home, data_dir, monkeypatch):
    for name, value in HUB_ENV.items():  # as the spawner gives them
        monkeypatch.setenv(name, value)
    return diamond_config(str(sites_file), str(home / ".diamond" / "store.sqlite3"))


def route_paths() -> list[str]:
    out = []
    for pattern, handler in routes():
        if handler is NoRouteHandler:
            continue
        out.append(re.sub(r"\(\?P<(\w+)>[^)]*\)",
                          lambda m: quote(SAMPLE[m[1]], safe=""), pattern).lstrip("/"))
    return out


async def fetch(fetch_fn, path: str, **kw: Any) -> tuple[int, Any, str]:
    """(status, headers, body) of one request under the server's base_url; errors returned."""
    try:
        r = await fetch_fn(*path.split("/"), **kw)
    except HTTPClientError as e:
        r = e.response
        if r is None:
            return e.code, {}, ""
    return r.code, r.headers, r.body.decode(errors="replace")


# -- the named server's prefix on every route ------------------------------------------------
async def test_state_answers_under_the_named_servers_prefix(jp_fetch, jp_serverapp):
    assert jp_serverapp.base_url == PREFIX
    code, _, body = await fetch(jp_fetch, "diamond/api/state")
    assert code == 200, body
    state = json.loads(body)
    assert state["error"] is None and [s["name"] for s in state["sites"]] == ["alpha"]


@pytest.mark.parametrize("path", route_paths())
async def test_every_route_answers_json_under_the_prefix(jp_fetch, path):
    code, headers, body = await fetch(jp_fetch, path)
    # the route is found (its handler answered in JSON, even when the sample names nothing)
    assert "json" in headers.get("Content-Type", "") or path.endswith("openapi.yaml"), \
        (path, code, body[:200])
    if path.endswith("openapi.yaml"):
        assert code == 200 and "openapi" in body


async def test_the_api_without_the_prefix_is_not_served(jp_serverapp, http_server_client,
                                                        jp_auth_header):
    with pytest.raises(HTTPClientError) as e:
        await http_server_client.fetch("/diamond/api/state", headers=jp_auth_header)
    assert e.value.code == 404


async def test_an_unknown_route_under_the_prefix_names_the_path_from_diamond_api(jp_fetch):
    code, _, body = await fetch(jp_fetch, "diamond/api/nope")
    assert code == 404
    message = json.loads(body)["message"]
    assert "/diamond/api/nope" in message and "/user/alice" not in message


async def test_the_dashboards_call_under_the_prefix(jp_fetch):
    code, _, body = await fetch(jp_fetch, "diamond/api/dashboard")
    assert code == 200, body
    assert "alpha" in body


async def test_the_event_stream_replays_under_the_prefix(jp_fetch):
    code, _, body = await fetch(jp_fetch, "diamond/api/events", params={"since": 0})
    assert code == 200, body
    assert isinstance(json.loads(body)["events"], list), body


# -- tokens: another user's, none, revoked ---------------------------------------------------
@pytest.mark.parametrize("auth", ["token " + HUB_SECRET, "token bob-0123456789abcdef",
                                  "Bearer expired-0000", ""])
@pytest.mark.parametrize("method", ["GET", "POST"])
async def test_a_foreign_or_revoked_token_learns_nothing(http_server_client, jp_serverapp,
                                                         auth, method):
    headers = {"Authorization": auth} if auth else {}
    body = "{}" if method == "POST" else None
    try:
        r = await http_server_client.fetch(PREFIX + "diamond/api/jobs", method=method,
                                           headers=headers, body=body, follow_redirects=False)
        code, text = r.code, r.body.decode()
    except HTTPClientError as e:
        code = e.code
        text = e.response.body.decode(errors="replace") if e.response else ""
    assert code in (302, 401, 403), (code, text[:200])
    assert "alpha" not in text and HUB_SECRET not in text


# -- the hub's secrets never leave the environment -------------------------------------------
async def test_the_hubs_variables_never_reach_state_events_or_store(jp_fetch, jp_serverapp,
                                                                    home):
    seen = []
    for path in ("diamond/api/state", "diamond/api/sites", "diamond/api/events",
                 "diamond/api/dashboard", "diamond/api/jobs"):
        seen.append((await fetch(jp_fetch, path))[2])
    for text in seen:
        assert HUB_SECRET not in text and "JUPYTERHUB" not in text
    store = home / ".diamond" / "store.sqlite3"
    assert store.exists()
    for f in store.parent.glob("store.sqlite3*"):
        assert HUB_SECRET.encode() not in f.read_bytes()


async def test_the_store_is_made_in_the_users_home_private(jp_fetch, home):
    await fetch(jp_fetch, "diamond/api/state")
    store = home / ".diamond" / "store.sqlite3"
    assert store.exists()
    assert store.stat().st_mode & 0o077 == 0, oct(store.stat().st_mode)


# -- two named servers of one user over one store --------------------------------------------
def test_two_named_servers_writing_one_store_lose_nothing(tmp_path):
    """Servers "" and "lab" of one user both open ~/.diamond/store.sqlite3 and write at once:
    every event of each is there, in one sequence both read alike."""
    import threading

    from diamond_jupyter.model import Event
    from diamond_jupyter.store import Store

    path = tmp_path / "shared.sqlite3"
    stores = {"default": Store(path), "lab": Store(path)}
    go = threading.Barrier(len(stores))

    def write(server: str) -> None:
        go.wait()
        for n in range(100):
            stores[server].append_event(Event(kind="job.state", site="alpha",
                                              data={"server": server, "n": n}))
    threads = [threading.Thread(target=write, args=(name,)) for name in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    seen = {name: store.events_since(0, limit=None) for name, store in stores.items()}
    assert seen["default"] == seen["lab"]
    by_server = {name: [e.data["n"] for e in seen["lab"] if e.data["server"] == name]
                 for name in stores}
    assert by_server == {"default": list(range(100)), "lab": list(range(100))}
    seqs = [e.seq for e in seen["lab"]]
    assert seqs == sorted(set(seqs))


# -- the home not writable -------------------------------------------------------------------
class TestHomeNotWritable:
    @pytest.fixture
    def jp_server_config(self, sites_file, tmp_path, data_dir):
        blocker = tmp_path / "home-is-a-file"
        blocker.write_text("")
        return diamond_config(str(sites_file), str(blocker / ".diamond" / "store.sqlite3"))

    async def test_state_names_the_store_path_that_cannot_be_made(self, jp_fetch, tmp_path):
        code, _, body = await fetch(jp_fetch, "diamond/api/state")
        assert code == 200, body
        error = json.loads(body)["error"]
        assert error and "home-is-a-file is a file, not a directory" in error, error
        assert "cannot be made" in error


# -- site config given by the spawner's environment ------------------------------------------
class TestSpawnerEnvironmentConfig:
    @pytest.fixture
    def jp_server_config(self, sites_file, home, data_dir, monkeypatch):
        monkeypatch.setenv("DIAMOND_CONFIG", str(sites_file))  # c.Spawner.environment
        return {"ServerApp": {"jpserver_extensions": {"diamond_jupyter": True}},
                "DiamondApp": {"store_path": str(home / "s.sqlite3"), "min_poll_s": 0.3,
                               "poll_interval_s": 5.0}}

    async def test_the_sites_file_comes_from_diamond_config(self, jp_fetch):
        code, _, body = await fetch(jp_fetch, "diamond/api/sites")
        assert code == 200, body
        assert [s["name"] for s in json.loads(body)["sites"]] == ["alpha"], body


class TestSpawnerEnvironmentNamesNoFile:
    @pytest.fixture
    def jp_server_config(self, tmp_path, home, data_dir, monkeypatch):
        monkeypatch.setenv("DIAMOND_CONFIG", str(tmp_path / "nowhere.yaml"))
        return {"ServerApp": {"jpserver_extensions": {"diamond_jupyter": True}},
                "DiamondApp": {"store_path": str(home / "s.sqlite3")}}

    async def test_state_names_the_missing_file(self, jp_fetch):
        code, _, body = await fetch(jp_fetch, "diamond/api/state")
        assert code == 200, body
        error = json.loads(body)["error"]
        assert error and "nowhere.yaml" in error, error


# -- what a submit hands the scheduler -------------------------------------------------------
def taking_sbatch(queue: LocalSlurmQueue, native_id: str = "4243") -> Path:
    """`sbatch` that keeps the script and its own environment in a folder (returned), queues
    prints the job's id, as `sbatch --parsable` does."""
    kept = queue.queue.parent / "sbatch-kept"
    kept.mkdir()
    sbatch = queue.bin_dir / "sbatch"
    sbatch.write_text(
        "#!/bin/sh\n"
        f"env > {kept}/env.txt\n"
        "for last; do :; done\n"
        f'cp "$last" {kept}/script.sh\n'
        f"echo {native_id}\n")
    sbatch.chmod(0o755)
    return kept


async def _submit(jp_fetch, tmp_path: Path) -> dict[str, Any]:
    from diamond_jupyter.model import JobSpec

    spec = JobSpec(name="hubjob", command="echo hi", working_directory=str(tmp_path))
    body = {"site": "alpha", "force": True,
            "spec": spec.model_dump(mode="json", exclude_none=True)}
    code, _, text = await fetch(jp_fetch, "diamond/api/jobs", method="POST",
                                body=json.dumps(body))
    assert code in (201, 202), text
    return json.loads(text)


async def test_the_hubs_token_never_reaches_the_scheduler_nor_the_job(jp_fetch, tmp_path,
                                                                      queue, home):
    kept = taking_sbatch(queue)
    job = await _submit(jp_fetch, tmp_path)
    assert job["id"] == "alpha:4243", job
    env = (kept / "env.txt").read_text()
    script = (kept / "script.sh").read_text()
    # sbatch exports its environment into the job (--export=ALL): the hub's token would
    # reach the compute node and anyone who can read the job's environment there
    assert HUB_SECRET not in env and "JUPYTERHUB_" not in env, \
        [line.split("=")[0] for line in env.splitlines() if HUB_SECRET in line]
    assert HUB_SECRET not in script and "JUPYTERHUB" not in script
    for f in (home / ".diamond").glob("store.sqlite3*"):
        assert HUB_SECRET.encode() not in f.read_bytes()


async def test_a_job_and_its_events_outlive_the_culled_server(jp_fetch, jp_serverapp,
                                                              tmp_path, queue, home,
                                                              sites_file):
    taking_sbatch(queue)
    job = await _submit(jp_fetch, tmp_path)
    code, _, text = await fetch(jp_fetch, "diamond/api/events", params={"since": 0})
    before = [e for e in json.loads(text)["events"] if e.get("job_id") == job["id"]]
    assert before, text
    # the idle-culler stops the server while the job runs; the hub spawns a new one on the
    # same home, whose engine opens the same store
    await jp_serverapp.web_app.settings["diamond_app"].federation.close()
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    queue.add("4243", job["token"], "hubjob")  # still in the queue after the restart
    fed = Federation(sites_file, store=Store(home / ".diamond" / "store.sqlite3"),
                     poll_interval_s=3600, min_poll_s=3600)
    try:
        assert fed.store.get_job(job["id"]).site == "alpha"
        after = [e for e in fed.store.events_since(0) if e.job_id == job["id"]]
        assert [e.seq for e in after] == [e["seq"] for e in before]
    finally:
        await fed.close()


async def test_the_event_socket_under_the_prefix_carries_the_submit_and_no_secret(
        jp_fetch, jp_ws_fetch, tmp_path, queue, caplog):
    from test_events_stream import next_message

    from diamond_jupyter.server.events import JOB_STATE

    taking_sbatch(queue)
    ws = await jp_ws_fetch("api", "events", "subscribe")  # PREFIX + api/events/subscribe
    try:
        job = await _submit(jp_fetch, tmp_path)
        msg = await next_message(ws, JOB_STATE, lambda m: m["job_id"] == job["id"])
    finally:
        ws.close()
    assert msg["site"] == "alpha" and msg["native_id"] == "4243"
    assert HUB_SECRET not in json.dumps(msg)
    assert HUB_SECRET not in caplog.text  # nor in the server's log


# -- an admin on the user's server: the hub's authorizer decides -----------------------------
class ReadOnlyAdmin(Authorizer):
    """As JupyterHub grants an admin `read:servers` without `servers` (write) on a user's
    server: reads allowed, writes refused."""

    def is_authorized(self, handler, user, action, resource) -> bool:  # noqa: ARG002
        return resource != "diamond" or action == "read"


class TestAdminReadsButCannotSubmit:
    @pytest.fixture
    def jp_server_config(self, sites_file, home, data_dir):
        cfg = diamond_config(str(sites_file), str(home / "s.sqlite3"))
        cfg["ServerApp"]["authorizer_class"] = ReadOnlyAdmin
        return cfg

    async def test_reads_answer_and_writes_are_refused(self, jp_fetch, tmp_path, queue):
        kept = taking_sbatch(queue)
        assert (await fetch(jp_fetch, "diamond/api/jobs"))[0] == 200
        code, _, _ = await fetch(jp_fetch, "diamond/api/jobs", method="POST",
                                 body=json.dumps({"site": "alpha", "script": "#!/bin/sh\n"}))
        assert code == 403
        code, _, _ = await fetch(jp_fetch, "diamond/api/jobs/alpha:1/cancel", method="POST",
                                 body="{}")
        assert code == 403
        assert not (kept / "script.sh").exists()  # nothing reached the scheduler


async def test_the_store_and_its_journal_files_are_the_users_alone(jp_fetch, tmp_path, queue,
                                                                    home):
    taking_sbatch(queue)
    await _submit(jp_fetch, tmp_path)  # written: the WAL and its index exist now
    files = sorted((home / ".diamond").glob("store.sqlite3*"))
    assert len(files) >= 2, files
    for f in files:
        assert f.stat().st_mode & 0o077 == 0, (f.name, oct(f.stat().st_mode))


def test_a_hub_spawned_servers_commands_get_no_hub_variables():
    from diamond_jupyter.transports.local import clean_environ

    env = clean_environ({**HUB_ENV, "HOME": "/home/alice", "JUPYTER_CONFIG_DIR": "/etc/j",
                         "SLURM_CONF": "/etc/slurm/slurm.conf"})
    assert env == {"HOME": "/home/alice", "JUPYTER_CONFIG_DIR": "/etc/j",
                   "SLURM_CONF": "/etc/slurm/slurm.conf"}


def test_two_users_stores_never_mix(tmp_path):
    """alice's and bob's servers, each its own home: one's events never show in the other's."""
    from diamond_jupyter.model import Event
    from diamond_jupyter.store import Store

    stores = {user: Store(tmp_path / user / ".diamond" / "store.sqlite3")
              for user in ("alice", "bob")}
    for user, store in stores.items():
        store.append_event(Event(kind="job.state", site="alpha", data={"user": user}))
    for user, store in stores.items():
        assert [e.data["user"] for e in store.events_since(0, limit=None)] == [user]
