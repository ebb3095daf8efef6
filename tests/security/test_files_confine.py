"""Server paths given over REST (transfers, a job's stage-in source and stage-out
destination) stay inside the Jupyter server's root directory, like the fetch route's.

A real Jupyter server with the extension; the one site has a local transport, so no
scheduler is needed (nothing here may reach one)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from diamond_jupyter.model import JobSpec, StageEntry

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
SECRET = b"-----BEGIN OPENSSH PRIVATE KEY-----\nnot for you\n"


@pytest.fixture
def site_dir(tmp_path) -> Path:
    """The site's login directory (a local transport works in $HOME)."""
    return tmp_path / "home"


@pytest.fixture
def jp_server_config(tmp_path, site_dir, data_dir, monkeypatch):
    from server_conftest import diamond_config

    home = site_dir
    (home / "private").mkdir(parents=True)
    (home / "private" / "id_rsa").write_bytes(SECRET)
    monkeypatch.setenv("HOME", str(home))
    sites = tmp_path / "sites.yaml"
    sites.write_text("sites:\n  - name: alpha\n    scheduler: slurm\n"
                     "    transport: {kind: local}\n")
    return diamond_config(str(sites), str(tmp_path / "store.sqlite3"))


def landed(site_dir: Path) -> list[Path]:
    """Files on the site other than the secret itself."""
    return [p for p in site_dir.rglob("*") if p.is_file() and p.parent.name != "private"]


@pytest.mark.parametrize("src", ["~/private/id_rsa", "../home/private/id_rsa", "ABS"])
async def test_transfer_cannot_read_outside_the_root(api, jp_root_dir, tmp_path, site_dir,
                                                     src):
    if src == "ABS":
        src = str(tmp_path / "home" / "private" / "id_rsa")
    r = await api.call("POST", "transfers", {"src": src, "dst": "alpha:stolen", "wait": True},
                       expect=400)
    assert r.body["reason"] == "bad-input"
    assert "outside the server's root directory" in r.body["message"]
    assert landed(site_dir) == []


async def test_transfer_cannot_follow_a_link_out_of_the_root(api, jp_root_dir, tmp_path,
                                                             site_dir):
    os.symlink(tmp_path / "home" / "private", jp_root_dir / "innocent")
    r = await api.call("POST", "transfers", {"src": "innocent/id_rsa", "dst": "alpha:x",
                                             "wait": True}, expect=400)
    assert "outside the server's root directory" in r.body["message"]
    assert landed(site_dir) == []


async def test_transfer_cannot_write_outside_the_root(api, jp_root_dir, tmp_path, site_dir):
    (site_dir / "evil.py").write_text("import os; os.system('id')\n")
    startup = "~/.ipython/profile_default/startup/00-evil.py"
    r = await api.call("POST", "transfers", {"src": "alpha:evil.py", "dst": startup,
                                             "wait": True}, expect=400)
    assert "outside the server's root directory" in r.body["message"]
    assert not (tmp_path / "home" / ".ipython").exists()


async def test_transfer_inside_the_root_still_works(api, jp_root_dir, site_dir):
    (jp_root_dir / "data").mkdir()
    (jp_root_dir / "data" / "in.txt").write_bytes(b"mine\n")
    name = f"in-{secrets.token_hex(3)}.txt"
    rec = await api.post("transfers", {"src": "data/in.txt", "dst": f"alpha:{name}",
                                       "wait": True})
    assert rec["state"] == "SUCCEEDED", rec
    assert (site_dir / name).read_bytes() == b"mine\n"


@pytest.mark.parametrize("where", ["stage_in", "stage_out"])
async def test_job_stage_paths_cannot_leave_the_root(api, jp_root_dir, tmp_path, site_dir,
                                                     where):
    entry = (StageEntry(source="~/private/id_rsa", destination="key") if where == "stage_in"
             else StageEntry(source="out.py",
                             destination="~/.ipython/profile_default/startup/00-x.py"))
    spec = JobSpec(name="stage", command="true", **{where: [entry]})
    r = await api.call("POST", "jobs", {"spec": spec.model_dump(mode="json"), "site": "alpha"},
                       expect=400)
    assert "outside the server's root directory" in r.body["message"]
    jobs = await api.get("jobs")
    assert jobs["total"] == 0  # refused before anything was recorded or submitted
    assert landed(site_dir) == []


def test_the_cli_sends_server_paths_absolute(tmp_path, monkeypatch):
    """Through a server, the CLI's relative paths mean its own directory, not the root."""
    from diamond_jupyter.kernel.rest import _server_path

    monkeypatch.chdir(tmp_path)
    assert _server_path("data/in.txt") == str(tmp_path / "data" / "in.txt")
    assert _server_path("./out/") == f"{tmp_path / 'out'}/"
    assert _server_path("alpha:data/in.txt") == "alpha:data/in.txt"


async def test_engine_fetch_keeps_to_the_root(tmp_path, monkeypatch):
    """The agent's fetch_results reaches Federation.fetch without the REST route's check:
    in a server, the engine itself refuses a destination outside the root."""
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import BadInput
    from diamond_jupyter.store import Store

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()  # the local site's commands run in its home
    root = tmp_path / "root"
    root.mkdir()
    fed = Federation(FederationConfig(sites=[SiteConfig(
        name="alpha", scheduler="slurm", transport=TransportConfig(kind="local"))]),
        store=Store(tmp_path / "s.sqlite3"))
    fed.server_root = root
    try:
        fed.store.record_intent("alpha", "t1", JobSpec(name="j", command="true",
                                                       working_directory=str(tmp_path)),
                                None, None)
        job = fed.store.bind_native_id("t1", "7").id
        with pytest.raises(BadInput, match="outside the server's root directory"):
            await fed.fetch(job, "~/.ipython/profile_default/startup")
        assert not (tmp_path / "home" / ".ipython").exists()
    finally:
        await fed.close()
