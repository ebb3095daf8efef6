"""The REST transfer route and the agent's transfer skill take `overwrite`, as `diamond
transfer -r` does: by default a copy into a directory leaves a file there that no earlier
copy to it wrote and lists it as skipped; with overwrite it replaces it. A real Jupyter
server (the route needs its token) and the skill, on one local site (no test bed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from magic_engine import magics_over

from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.skills import SkillContext, run_skill
from diamond_jupyter.store import Store
from diamond_jupyter.transfer.sftp import NOT_REPLACED

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

MINE = "my own notes, not the job's\n"


def _results(root: Path) -> Path:
    """A job's results on the site: two files, one of them named like the user's own."""
    results = root / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / "out.txt").write_text("job output\n")
    (results / "notes.txt").write_text("the job's notes\n")
    return results


def _mine(dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "notes.txt").write_text(MINE)


# -- the REST route ---------------------------------------------------------------------------

@pytest.fixture
def jp_server_config(tmp_path, data_dir):
    from server_conftest import diamond_config

    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{"name": "here", "transport": {"kind": "local"},
                                                "workdir": str(tmp_path / "work")}]}))
    return diamond_config(str(sites), str(tmp_path / "store.sqlite3"))


@pytest.fixture
def post(http_server_client, jp_base_url, jp_auth_header):
    """`await post(body, auth=True)`: (code, parsed JSON reply) of POST transfers."""

    async def call(body: dict[str, Any], auth: bool = True) -> tuple[int, Any]:
        resp = await http_server_client.fetch(
            jp_base_url.rstrip("/") + "/diamond/api/transfers", method="POST",
            body=json.dumps(body).encode(), headers=jp_auth_header if auth else {},
            raise_error=False)
        try:
            return resp.code, json.loads(resp.body.decode())
        except ValueError:
            return resp.code, resp.body.decode()

    return call


async def test_rest_transfer_leaves_a_file_it_did_not_write_and_lists_it(
        post, tmp_path, jp_root_dir):
    results, dest = _results(tmp_path), jp_root_dir / "mine"
    _mine(dest)
    code, rec = await post({"src": f"here:{results}", "dst": "mine", "recursive": True,
                            "wait": True})
    assert code == 200 and rec["state"] == "SUCCEEDED", rec
    assert (dest / "notes.txt").read_text() == MINE
    assert (dest / "out.txt").read_text() == "job output\n"
    assert rec["data"]["skipped"] == [f"notes.txt: {NOT_REPLACED}"]


async def test_rest_transfer_with_overwrite_replaces_it(post, tmp_path, jp_root_dir):
    results, dest = _results(tmp_path), jp_root_dir / "mine"
    _mine(dest)
    code, rec = await post({"src": f"here:{results}", "dst": "mine", "recursive": True,
                            "overwrite": True, "wait": True})
    assert code == 200 and rec["state"] == "SUCCEEDED", rec
    assert (dest / "notes.txt").read_text() == "the job's notes\n"
    assert not rec["data"].get("skipped")


async def test_rest_transfer_overwrite_needs_the_token_and_a_boolean(
        post, tmp_path, jp_root_dir):
    results, dest = _results(tmp_path), jp_root_dir / "mine"
    _mine(dest)
    body = {"src": f"here:{results}", "dst": "mine", "recursive": True, "overwrite": True,
            "wait": True}
    code, _ = await post(body, auth=False)
    assert code == 403
    code, reply = await post({**body, "overwrite": "sometimes"})
    assert code == 400 and "overwrite" in reply["message"], reply
    assert (dest / "notes.txt").read_text() == MINE  # neither request copied anything


# -- the agent's skill ------------------------------------------------------------------------

@pytest.fixture
async def fed(tmp_path):
    cfg = SiteConfig(name="here", scheduler="slurm", transport=TransportConfig(kind="local"),
                     workdir=str(tmp_path / "work"))
    f = Federation(FederationConfig(sites=[cfg]), store=Store(tmp_path / "s.sqlite"))
    await f.start(recover=False)
    yield f
    await f.close()


async def test_the_skill_leaves_a_file_and_reports_it_skipped(fed, tmp_path):
    results, dest = _results(tmp_path), tmp_path / "mine"
    _mine(dest)
    out = await run_skill(SkillContext(fed, approval="auto"), "transfer", {
        "src": f"here:{results}", "dst": str(dest), "recursive": True})
    assert (dest / "notes.txt").read_text() == MINE
    assert out.skipped == [f"notes.txt: {NOT_REPLACED}"] and "1 file(s)" in out.message


async def test_the_skill_with_overwrite_replaces_it(fed, tmp_path):
    results, dest = _results(tmp_path), tmp_path / "mine"
    _mine(dest)
    out = await run_skill(SkillContext(fed, approval="auto"), "transfer", {
        "src": f"here:{results}", "dst": str(dest), "recursive": True, "overwrite": True})
    assert (dest / "notes.txt").read_text() == "the job's notes\n" and out.skipped == []


async def test_an_approved_plan_runs_with_its_own_overwrite(fed, tmp_path):
    """The plan shows overwrite; the approved plan, not the call, decides it."""
    results, dest = _results(tmp_path), tmp_path / "mine"
    _mine(dest)
    args = {"src": f"here:{results}", "dst": str(dest), "recursive": True}
    dry = await run_skill(SkillContext(fed, approval="dry-run"), "transfer",
                          {**args, "overwrite": True})
    assert dry.dry_run and dry.plan["overwrite"] is True
    plan = (await run_skill(SkillContext(fed, approval="dry-run"), "transfer", args)).plan
    assert plan["overwrite"] is False
    out = await run_skill(SkillContext(fed, approval="auto", approved=plan), "transfer",
                          {**args, "overwrite": True})
    assert (dest / "notes.txt").read_text() == MINE and out.skipped


# -- the magic (in-process engine) ------------------------------------------------------------

def test_the_magic_lists_what_it_left_and_overwrites_when_asked(tmp_path, capsys):
    import asyncio

    cfg = SiteConfig(name="here", scheduler="slurm", transport=TransportConfig(kind="local"),
                     workdir=str(tmp_path / "work"))
    fed = Federation(FederationConfig(sites=[cfg]), store=Store(tmp_path / "s.sqlite"))
    loop = asyncio.new_event_loop()
    m = magics_over(fed, loop)
    results, dest = _results(tmp_path), tmp_path / "mine"
    _mine(dest)
    try:
        rec = m.diamond(f"transfer -r here:{results} {dest}")
        assert rec["state"] == "SUCCEEDED" and (dest / "notes.txt").read_text() == MINE
        assert f"skipped notes.txt: {NOT_REPLACED}" in capsys.readouterr().err
        rec = m.diamond(f"transfer -r here:{results} {dest} --overwrite")
        assert (dest / "notes.txt").read_text() == "the job's notes\n"
        assert "skipped" not in capsys.readouterr().err
    finally:
        loop.run_until_complete(fed.close())
        loop.close()
