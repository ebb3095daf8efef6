"""A held job's release on every face: `diamond release JOB`, POST /diamond/api/jobs/JOB/
release, `%diamond release JOB` and the agent's `release` skill (MCP's tool too). Each calls
`Federation.release`: asked while the job's stage-in is still copying, the release is kept
and each face says it waits for the input (nothing sent to the scheduler); the engine that
runs the staging next releases the job once the input is there. No test bed: the local
Slurm site and unreachable data site of `held_staging`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any

import pytest
from held_staging import NATIVE_ID, HeldStaging
from magic_engine import magics_over
from test_release_staged import _event, submitted_copying

from diamond_jupyter.skills import NeedsApproval, SkillContext, run_skill

CLI = [sys.executable, "-m", "diamond_jupyter.cli"]
pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")


def _kept(job_id: str) -> str:
    return (f"release of {job_id} kept: its stage-in (1 entry) is still copying; it is "
            f"released when its input has arrived (`diamond status {job_id}`; a failed "
            "stage-in fails it instead)")


def _cli(bed: HeldStaging, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DIAMOND_HANDOVER": "0", "HOME": str(bed.tmp)}
    return subprocess.run([*CLI, "--config", str(bed.sites_file(archive_reachable=False)),
                           *args], capture_output=True, text=True, timeout=120, env=env,
                          stdin=subprocess.DEVNULL)


async def test_the_cli_keeps_a_release_during_the_stage_in_and_the_next_engine_sends_it(
        tmp_path):
    bed = HeldStaging(tmp_path)
    fed, job = await submitted_copying(bed)
    try:
        res = await asyncio.to_thread(_cli, bed, "release", job.id, "--json")
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["id"] == job.id
        assert res.stderr == f"diamond: {_kept(job.id)}\n"
        assert bed.releases() == []
    finally:
        await fed.close()
    again = bed.engine(archive_reachable=True)
    await again.start()
    try:
        await _event(again, job.id, "job.released")
        assert bed.releases() == [f"scontrol release {NATIVE_ID}"]
    finally:
        await again.close()
    # its input there, a release is sent at once (the scheduler answers for a released job)
    res = await asyncio.to_thread(_cli, bed, "release", job.id)
    assert res.returncode == 0, res.stderr
    assert res.stderr == (f"diamond: release of {job.id} sent to here; it starts when here "
                          f"schedules it (`diamond status {job.id}`)\n")
    assert len(bed.releases()) == 2
    res = await asyncio.to_thread(_cli, bed, "release", "here:999")
    assert res.returncode == 2 and "here:999" in res.stderr


# -- REST --------------------------------------------------------------------------------------

@pytest.fixture
def bed(tmp_path) -> HeldStaging:
    return HeldStaging(tmp_path)


@pytest.fixture
def jp_server_config(bed, data_dir):
    from server_conftest import diamond_config

    return diamond_config(str(bed.sites_file(archive_reachable=False)), str(bed.store))


async def test_the_rest_route_says_a_release_waits_for_the_stage_in(
        api, jp_serverapp, bed, server_client):
    from server_conftest import job_path

    fed = jp_serverapp.web_app.settings["diamond_app"].federation
    job = await fed.submit(bed.spec(), "here", hold=True)
    await _event(fed, job.id, "stage.in.started")
    # the answer is what openapi.yaml says of the route
    got = await api.post(job_path(job.id, "release"))
    assert (got["id"], got["state"]) == (job.id, "PENDING")
    assert got["release_waiting"] == _kept(job.id)
    assert bed.releases() == []
    assert fed.journal.release_requested(job.id)  # in the store: a restart keeps it
    # the kernel's client of the server (the magics with a server running) says it too
    again, waiting = await server_client.release(job.id)
    assert again.id == job.id and waiting == _kept(job.id)
    assert bed.releases() == []
    await api.call("POST", job_path("here:999", "release"), expect=404)


# -- the magic and the skill ---------------------------------------------------------------------

async def test_the_magic_says_a_release_waits_for_the_stage_in(tmp_path, capsys):
    bed = HeldStaging(tmp_path)
    fed, job = await submitted_copying(bed)
    m = magics_over(fed, asyncio.get_running_loop())
    m.handle = lambda job: None  # no card: the kernel's display is not here
    try:
        await asyncio.to_thread(m.diamond, f"release {job.id}")
        assert f"{job.id}: PENDING ({_kept(job.id)})" in capsys.readouterr().out
        assert bed.releases() == []
    finally:
        await fed.close()


async def test_the_skill_asks_approval_then_keeps_the_release_and_mcp_lists_it(tmp_path):
    from diamond_jupyter.mcp_server import build_server

    bed = HeldStaging(tmp_path)
    fed, job = await submitted_copying(bed)
    try:
        with pytest.raises(NeedsApproval) as asked:
            await run_skill(SkillContext(fed, approval="ask"), "release", {"job_id": job.id})
        assert asked.value.plan == {"action": "release", "job_id": job.id, "site": "here",
                                    "native_id": NATIVE_ID, "name": "staged",
                                    "state": "PENDING", "waits_for_stage_in": True}
        assert not fed.journal.release_requested(job.id)  # only asked
        out = await run_skill(SkillContext(fed), "release", {"job_id": job.id})
        assert out.job.id == job.id and out.message == _kept(job.id)
        assert bed.releases() == []
        server = build_server(fed=fed)
        tools = {t.name: t for t in await server.list_tools()}
        assert tools["release"].input_schema["required"] == ["job_id"]
    finally:
        await fed.close()


# -- a held submit on the REST and agent/MCP faces (as `diamond submit --hold`) ------------------

def _submits(bed: HeldStaging) -> list[str]:
    return [c for c in bed.calls.read_text().splitlines() if c.startswith("sbatch ")]


def _plain(bed: HeldStaging) -> dict[str, Any]:
    """A job without staging: only the submit's own hold keeps it waiting."""
    return {"name": "plain", "command": "true", "working_directory": str(bed.tmp / "wd")}


async def test_the_rest_submit_holds_the_job_when_asked(api, jp_serverapp, bed):
    got = await api.post("jobs", {"spec": _plain(bed), "site": "here",
                                              "hold": True}, expect=201)
    assert got["id"] == f"here:{NATIVE_ID}"
    [held] = _submits(bed)
    assert held.startswith("sbatch --parsable --hold ")
    await api.post("jobs", {"spec": _plain(bed), "site": "here"}, expect=201)
    assert "--hold" not in _submits(bed)[1]
    bad = await api.call("POST", "jobs", {"spec": _plain(bed), "site": "here",
                                                      "hold": "later"}, expect=400,
                         validate=False)
    assert "hold" in bad.body["message"] and len(_submits(bed)) == 2


async def test_the_skill_shows_the_hold_in_its_plan_and_submits_held(tmp_path):
    bed = HeldStaging(tmp_path)
    fed = bed.engine(archive_reachable=False)
    await fed.start(recover=False)
    try:
        asked_for = {"spec": _plain(bed), "site": "here", "hold": True}
        with pytest.raises(NeedsApproval) as asked:
            await run_skill(SkillContext(fed, approval="ask"), "submit", asked_for)
        plan = asked.value.plan
        assert plan["hold"] is True and plan["held"].startswith("submitted held")
        assert _submits(bed) == []  # only asked
        out = await run_skill(SkillContext(fed, approved=plan), "submit", asked_for)
        assert out.message == f"submitted {out.job.id} held: `release` {out.job.id} starts it"
        assert [c.split()[:3] for c in _submits(bed)] == [["sbatch", "--parsable", "--hold"]]
        # unheld: the plan says nothing of a hold, the submit sends none
        with pytest.raises(NeedsApproval) as plain:
            await run_skill(SkillContext(fed, approval="ask"), "submit",
                            {"spec": _plain(bed), "site": "here"})
        assert "hold" not in plain.value.plan
    finally:
        await fed.close()


async def test_the_mcp_submit_takes_hold(tmp_path):
    from diamond_jupyter.mcp_server import build_server

    bed = HeldStaging(tmp_path)
    fed = bed.engine(archive_reachable=False)
    await fed.start(recover=False)
    try:
        server = build_server(fed=fed)
        tools = {t.name: t for t in await server.list_tools()}
        assert tools["submit"].input_schema["properties"]["hold"]["type"] == "boolean"
        await server.call_tool("submit", {"spec": _plain(bed), "site": "here", "hold": True})
        [held] = _submits(bed)
        assert held.startswith("sbatch --parsable --hold ")
    finally:
        await fed.close()


# -- `%%diamond submit --hold` (as `diamond submit --hold`) --------------------------------------

def _held_cell(bed: HeldStaging) -> str:
    return f"#!/bin/sh\n#SBATCH --chdir={bed.tmp / 'wd'}\ntrue\n"


async def test_the_magic_submits_held_when_asked(tmp_path, capsys):
    bed = HeldStaging(tmp_path)
    fed = bed.engine(archive_reachable=False)
    await fed.start(recover=False)
    m = magics_over(fed, asyncio.get_running_loop())
    handed: list[Any] = []
    m.handle = handed.append  # no card: the kernel's display is not here
    m.origin = lambda: {}  # no notebook's session either
    try:
        await asyncio.to_thread(m.diamond, "submit --site here --hold", _held_cell(bed))
        assert [j.id for j in handed] == [f"here:{NATIVE_ID}"], capsys.readouterr()
        [held] = _submits(bed)
        assert held.startswith("sbatch --parsable --hold ")
        await asyncio.to_thread(m.diamond, "submit --site here", _held_cell(bed))
        assert len(handed) == 2 and "--hold" not in _submits(bed)[1]
    finally:
        await fed.close()


async def test_the_server_client_submits_held_when_asked(bed, server_client):
    """The magics with a server running send the hold in the submit's body."""
    job = await server_client.submit(_held_cell(bed), site="here", hold=True)
    assert job.id == f"here:{NATIVE_ID}"
    [(method, path, _, body, code)] = server_client._http.seen
    assert (method, path, code, json.loads(body)["hold"]) == ("POST", "jobs", 201, True)
    [held] = _submits(bed)
    assert held.startswith("sbatch --parsable --hold ")
