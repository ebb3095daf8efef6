"""A transfer's cancel on every face the other transfer commands have: `diamond transfer
cancel ID`, POST /diamond/api/transfers/ID/cancel, `%diamond transfer cancel ID` and the
`cancel_transfer` skill (the agent's and MCP's tool). Each calls `Federation.cancel_transfer`:
a running copy stops (its data never put in place) and its record is CANCELLED; an unknown
id, or a transfer that had ended otherwise, is bad input saying how it ended.

No test bed and no sleeps: sites with a local transport; a running copy is held at the
hashing of its arrived bytes (`test_cancel_race._Gates`) until the test lets it go."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from magic_engine import magics_over
from test_cancel_race import _Gates
from test_lease_fencing import _fed, _fed_sites

from diamond_jupyter.model import BadInput
from diamond_jupyter.skills import NeedsApproval, SkillContext, run_skill, tool_schemas
from diamond_jupyter.store import Store
from diamond_jupyter.transfer.sftp import PART

CLI = [sys.executable, "-m", "diamond_jupyter.cli"]
pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")


def _cli(sites: Path, *args: str) -> subprocess.CompletedProcess:
    sites.chmod(0o600)
    env = {**os.environ, "DIAMOND_HANDOVER": "0", "HOME": str(sites.parent)}
    return subprocess.run([*CLI, "--config", str(sites), *args], capture_output=True,
                          text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)


def _ended(store: Store, state: str, error: str | None = None) -> str:
    """The id of a transfer recorded as ended in `state`."""
    rec = store.record_transfer("sftp", "alpha:/data/in.h5", "beta:/data/in.h5", state=state)
    if error:
        store.update_transfer(rec.id, error=error)
    return rec.id


# -- the CLI -----------------------------------------------------------------------------------

async def test_the_cli_cancels_a_copy_another_engine_runs(tmp_path, monkeypatch):
    """`diamond transfer cancel ID` in its own process, while this engine copies: exit 0,
    the record CANCELLED; the copy stops and its data is not put in place."""
    sites = _fed_sites(tmp_path)
    fed = _fed(sites)
    await fed.start(recover=False)
    try:
        gates = _Gates(monkeypatch)
        src, dst = tmp_path / "in.bin", tmp_path / "out.bin"
        src.write_bytes(b"payload " * 4096)
        rec = await fed.transfer(f"alpha:{src}", f"beta:{dst}", wait=False)
        await asyncio.wait_for(gates.hashing.wait(), 30)
        res = await asyncio.to_thread(_cli, sites, "transfer", "cancel", rec.id, "--json")
        assert res.returncode == 0, res.stderr
        got = json.loads(res.stdout)
        assert (got["id"], got["state"], got["error"]) == (rec.id, "CANCELLED",
                                                          "cancelled by request")
        gates.open_all()
        done = await asyncio.wait_for(fed.mover.wait(rec.id), 30)
        assert done.state == "CANCELLED" and not dst.exists() and gates.renames == []
        assert Path(str(dst) + PART).exists()  # left aside, never renamed into place
        again = await asyncio.to_thread(_cli, sites, "transfer", "cancel", rec.id)
        assert again.returncode == 0 and again.stdout.startswith(f"CANCELLED {rec.id} ")
    finally:
        await fed.close()


@pytest.mark.parametrize("state,error,said", [
    ("SUCCEEDED", None, "it had already ended SUCCEEDED (alpha:/data/in.h5 -> "
                        "beta:/data/in.h5)"),
    ("FAILED", "alpha: no such file: /data/in.h5",
     "it had already ended FAILED: alpha: no such file: /data/in.h5 (alpha:/data/in.h5 "
     "-> beta:/data/in.h5)"),
])
def test_the_cli_refuses_a_transfer_that_had_ended_saying_how(tmp_path, state, error, said):
    sites = _fed_sites(tmp_path)
    tid = _ended(Store(tmp_path / "store.sqlite3"), state, error)
    res = _cli(sites, "transfer", "cancel", tid)
    assert res.returncode == 2, res.stderr
    assert res.stderr == f"diamond: transfer {tid} is not cancelled: {said}\n"
    assert Store(tmp_path / "store.sqlite3").get_transfer(tid).state == state  # unchanged
    res = _cli(sites, "transfer", "cancel", tid, "--json")
    assert res.returncode == 2 and json.loads(res.stdout)["reason"] == "bad-input"


def test_the_cli_refuses_an_unknown_id_and_options_of_a_copy(tmp_path):
    sites = _fed_sites(tmp_path)
    res = _cli(sites, "transfer", "cancel", "nope")
    assert res.returncode == 2
    assert res.stderr.startswith("diamond: unknown transfer 'nope' (")
    assert "write ./cancel" in res.stderr and len(res.stderr.splitlines()) == 1
    tid = Store(tmp_path / "store.sqlite3").record_transfer("sftp", "alpha:a", "beta:a").id
    for option in (["--via", "sftp"], ["-r"], ["--overwrite"]):
        res = _cli(sites, "transfer", "cancel", tid, *option)
        assert res.returncode == 2 and "takes no --" in res.stderr, res.stderr
    assert Store(tmp_path / "store.sqlite3").get_transfer(tid).state == "PENDING"


def test_a_local_file_named_cancel_is_still_copied_as_dot_slash_cancel(tmp_path):
    sites = _fed_sites(tmp_path)
    (tmp_path / "cancel").write_text("data\n")
    res = subprocess.run([*CLI, "--config", str(sites), "transfer", "./cancel", "out.txt"],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env={**os.environ, "DIAMOND_HANDOVER": "0", "HOME": str(tmp_path)})
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "out.txt").read_text() == "data\n"


# -- REST --------------------------------------------------------------------------------------

@pytest.fixture
def jp_server_config(tmp_path, data_dir):
    from server_conftest import diamond_config

    return diamond_config(str(_fed_sites(tmp_path)), str(tmp_path / "store.sqlite3"))


@pytest.fixture
def rest(http_server_client, jp_base_url, jp_auth_header):
    async def call(path: str, body: Any = None, *, auth: bool = True) -> tuple[int, Any]:
        resp = await http_server_client.fetch(
            jp_base_url.rstrip("/") + "/diamond/api/" + path,
            method="POST" if body is not None else "GET",
            body=None if body is None else json.dumps(body),
            headers=jp_auth_header if auth else {}, raise_error=False)
        return resp.code, json.loads(resp.body.decode() or "null")
    return call


async def test_the_rest_route_cancels_a_running_copy_and_refuses_what_ended(
        rest, api, tmp_path, monkeypatch):
    gates, accepted = _Gates(monkeypatch), asyncio.Event()
    ask = Store.ask_transfer_cancel

    def ask_and_say(store: Store, transfer_id: str) -> Any:
        got = ask(store, transfer_id)
        accepted.set()
        return got
    monkeypatch.setattr(Store, "ask_transfer_cancel", ask_and_say)
    src, dst = tmp_path / "in.bin", tmp_path / "out.bin"
    src.write_bytes(b"payload " * 4096)
    code, rec = await rest("transfers", {"src": f"alpha:{src}", "dst": f"beta:{dst}"})
    assert code == 202, rec
    await asyncio.wait_for(gates.hashing.wait(), 30)
    code, body = await rest(f"transfers/{rec['id']}/cancel", {}, auth=False)
    assert code == 403  # like every route: no token, nothing done
    assert not accepted.is_set()
    # the copying engine answers once its copy has let go of the partial file
    cancelling = asyncio.ensure_future(rest(f"transfers/{rec['id']}/cancel", {}))
    await asyncio.wait_for(accepted.wait(), 30)
    gates.open_all()
    code, got = await asyncio.wait_for(cancelling, 30)
    assert code == 200 and (got["id"], got["state"]) == (rec["id"], "CANCELLED"), got
    assert (await rest(f"transfers/{rec['id']}/cancel", {}))[1]["state"] == "CANCELLED"
    assert not dst.exists()
    code, ok = await rest("transfers", {"src": f"alpha:{src}", "dst": f"beta:{dst}",
                                        "wait": True})
    assert code == 200 and ok["state"] == "SUCCEEDED"
    code, body = await rest(f"transfers/{ok['id']}/cancel", {})
    assert code == 400 and body["reason"] == "bad-input"
    assert "it had already ended SUCCEEDED" in body["message"]
    code, body = await rest("transfers/nope/cancel", {})
    assert code == 404 and body["message"] == "unknown transfer 'nope'"
    # each answer is what openapi.yaml says of the route
    assert (await api.post(f"transfers/{rec['id']}/cancel"))["state"] == "CANCELLED"
    await api.call("POST", f"transfers/{ok['id']}/cancel", expect=400)
    await api.call("POST", "transfers/nope/cancel", expect=404)


# -- the magic and the skill ---------------------------------------------------------------------

async def test_the_magic_cancels_a_transfer_and_says_how_an_ended_one_ended(tmp_path, capsys):
    fed = _fed(_fed_sites(tmp_path))
    m = magics_over(fed, asyncio.get_running_loop())
    try:
        tid = fed.store.record_transfer("sftp", "alpha:a", "beta:a").id
        rec = await asyncio.to_thread(m.diamond, f"transfer cancel {tid}")
        assert rec["state"] == "CANCELLED" and fed.store.get_transfer(tid).state == "CANCELLED"
        assert f"{tid}: alpha:a -> beta:a CANCELLED" in capsys.readouterr().out
        done = _ended(fed.store, "SUCCEEDED")
        assert await asyncio.to_thread(m.diamond, f"transfer cancel {done}") is None
        assert "it had already ended SUCCEEDED" in capsys.readouterr().err
        assert await asyncio.to_thread(m.diamond, f"transfer cancel {tid} -r") is None
        assert "takes no --via, --recursive" in capsys.readouterr().err
    finally:
        await fed.close()


async def test_the_skill_asks_approval_then_cancels_and_mcp_lists_it(tmp_path):
    from diamond_jupyter.mcp_server import build_server

    fed = _fed(_fed_sites(tmp_path))
    await fed.start(recover=False)
    try:
        tid = fed.store.record_transfer("sftp", "alpha:a", "beta:a").id
        with pytest.raises(NeedsApproval) as asked:
            await run_skill(SkillContext(fed, approval="ask"), "cancel_transfer",
                            {"transfer_id": tid})
        assert asked.value.plan == {"action": "cancel_transfer", "transfer_id": tid,
                                    "kind": "sftp", "src": "alpha:a", "dst": "beta:a",
                                    "state": "PENDING"}
        assert fed.store.get_transfer(tid).state == "PENDING"  # only asked
        out = await run_skill(SkillContext(fed), "cancel_transfer", {"transfer_id": tid})
        assert out.transfer["state"] == "CANCELLED" and "cancelled" in out.message
        with pytest.raises(BadInput, match="unknown transfer 'nope'"):
            await run_skill(SkillContext(fed, approval="ask"), "cancel_transfer",
                            {"transfer_id": "nope"})
        done = _ended(fed.store, "FAILED", "lost")
        with pytest.raises(BadInput, match="had already ended FAILED: lost"):
            await run_skill(SkillContext(fed), "cancel_transfer", {"transfer_id": done})
        assert "cancel_transfer" in {t["name"] for t in tool_schemas()}
        server = build_server(fed=fed)
        tools = {t.name: t for t in await server.list_tools()}
        assert tools["cancel_transfer"].input_schema["required"] == ["transfer_id"]
        other = fed.store.record_transfer("sftp", "alpha:b", "beta:b").id
        res = await server.call_tool("cancel_transfer", {"transfer_id": other})
        assert not res.is_error and res.structured_content["transfer"]["state"] == "CANCELLED"
    finally:
        await fed.close()


async def test_a_jobs_staging_record_is_not_cancelled_as_a_transfer(tmp_path):
    """`stage-TOKEN` is a job's staging, not a copy: cancelled as a transfer, its record
    said CANCELLED while the staging went on releasing the job. Refused, naming the job's
    cancel, which stops its copies; the record is left as it was."""
    fed = _fed(_fed_sites(tmp_path))
    await fed.start(recover=False)
    try:
        fed.store.record_transfer("stage", "tok1", "alpha", transfer_id="stage-tok1",
                                  state="ACTIVE", data={"stage_of": "tok1", "site": "alpha"})
        with pytest.raises(BadInput, match=r"stage-tok1 is the staging of job a job: cancel "
                                           r"the job \(diamond cancel JOB\)"):
            await fed.cancel_transfer("stage-tok1")
        assert fed.store.get_transfer("stage-tok1").state == "ACTIVE"
    finally:
        await fed.close()
