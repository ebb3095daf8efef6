"""A submit whose answer was lost (sbatch's "Socket timed out on send/recv operation": the
controller may have queued the job), made by the agent's submit tool and by the MCP submit
tool: the tool answers that the job is being looked for (`lookout` looking, the provisional
id SITE:pending-TOKEN, state UNKNOWN), and wait_for then gives the outcome: the job found
(its id and site) or never submitted (a new submit is safe). An agent task asleep on it
wakes for either. The model is the HTTP fake of the Messages API (tests/fake_llm.py); the
site a local Slurm whose `sbatch` and `squeue` are fakes (tests/local_slurm.py); no test bed.
"""

from __future__ import annotations

import asyncio
from typing import Any

import one_site_engine
import pytest
from agents import agent
from fake_llm import last_result, text, tool_use
from one_site_engine import LOOKOUT_WAIT_S as WAIT_S
from one_site_engine import SBATCH_ANSWER_LOST as TIMED_OUT
from one_site_engine import journal_waiter

from diamond_jupyter.mcp_server import build_server

SCRIPT = "#!/bin/bash\n#SBATCH --job-name=lost\ntrue\n"

queue = one_site_engine.lookout_queue
settle_s = one_site_engine.lookout_settle_s
started = one_site_engine.lookout_fed


@pytest.fixture
async def fed(started):
    yield started
    await agent(started).close()


def _looking(result: dict[str, Any]) -> str:
    """The provisional id of the job the submit tool says is looked for."""
    job = result["job"]
    assert job["id"].startswith("alpha:pending-") and job["state"] == "UNKNOWN", result
    assert job["lookout"]["state"] == "looking", result
    assert "do not submit it again" in job["lookout"]["message"]
    assert result["message"].startswith("submit answer lost, job being looked for: ")
    assert f"wait_for {job['id']}" in result["message"]
    return job["id"]


async def test_the_agent_is_told_looking_then_wakes_with_the_job_found(fed, fake, queue):
    queue.sbatch_says(TIMED_OUT, takes_the_job=False)
    seen: dict[str, Any] = {}

    def after_submit(body: dict[str, Any]) -> list[dict[str, Any]]:
        seen["id"] = _looking(last_result(body))
        return [text("The site may have it; looking."), tool_use("wait_for",
                                                                 {"job_id": seen["id"]})]

    def after_found(body: dict[str, Any]) -> list[dict[str, Any]]:
        seen["found"] = last_result(body)
        return [text("found")]
    fake.script([tool_use("submit", {"script": SCRIPT, "site": "alpha"})], after_submit,
                after_found)
    _, event = journal_waiter(fed)
    task = await agent(fed).ask("run it on alpha", approval="auto")
    asleep = await agent(fed).wait(task["id"], timeout=WAIT_S, states={"waiting"})
    assert asleep["waiting_on"] == [seen["id"]]
    token = fed.job(seen["id"]).token or ""

    queue.add("4270", token, "lost")  # the controller queued it after all
    await event(lambda ev: ev.kind == "job.submitted" and ev.job_id == "alpha:4270")
    done = await agent(fed).wait(task["id"], timeout=WAIT_S)
    assert done["state"] == "done" and done["answer"] == "found", (done, fake.errors)
    found = seen["found"]
    assert found["finished"] is False and found["woke"] == {"lookout": "found"}
    job = found["job"]
    assert (job["id"], job["site"], job["state"]) == ("alpha:4270", "alpha", "PENDING")
    assert job["lookout"]["state"] == "found"
    assert job["lookout"]["message"] == "alpha had taken the job: found in its queue as " \
        "alpha:4270"
    [resume] = [s for s in done["steps"] if s["kind"] == "resume"]
    assert resume["data"]["cause"] == "job found" and resume["data"]["lookout"] == "found"
    assert resume["data"]["job_id"] == "alpha:4270"
    assert resume["data"]["previous_id"] == seen["id"]
    assert fake.calls == 3 and not fake.errors


@pytest.mark.parametrize("settle_s", [1.0])
async def test_the_agent_wakes_to_never_submitted_and_nothing_was_sent_twice(
        fed, fake, queue, settle_s):
    calls = queue.sbatch_says(TIMED_OUT, takes_the_job=False)
    seen: dict[str, Any] = {}

    def after_submit(body: dict[str, Any]) -> list[dict[str, Any]]:
        seen["id"] = _looking(last_result(body))
        return [tool_use("wait_for", {"job_id": seen["id"]})]

    def after_closed(body: dict[str, Any]) -> list[dict[str, Any]]:
        seen["closed"] = last_result(body)
        return [text("never submitted")]
    fake.script([tool_use("submit", {"script": SCRIPT, "site": "alpha"})], after_submit,
                after_closed)
    task = await agent(fed).ask("run it on alpha", approval="auto")
    done = await agent(fed).wait(task["id"], timeout=WAIT_S)
    assert done["state"] == "done", (done, fake.errors)
    closed = seen["closed"]
    assert closed["finished"] is True
    job = closed["job"]
    assert (job["id"], job["state"]) == (seen["id"], "FAILED")
    assert job["lookout"]["state"] == "never-submitted"
    assert job["lookout"]["message"].endswith("nothing was submitted, so a new submit is safe")
    [resume] = [s for s in done["steps"] if s["kind"] == "resume"]
    assert (resume["data"]["cause"], resume["data"]["state"]) == ("job ended", "FAILED")
    assert len(calls.read_text().splitlines()) == 1  # sent once, never again by the search


# -- the MCP submit tool --------------------------------------------------------------------

async def _mcp(server: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    res = await server.call_tool(tool, args)
    assert not res.is_error, res
    return res.structured_content


async def test_the_mcp_submit_answers_looking_then_wait_for_gives_the_job_found(fed, queue):
    queue.sbatch_says(TIMED_OUT, takes_the_job=False)
    server = build_server(fed=fed)
    provisional = _looking(await _mcp(server, "submit", {"script": SCRIPT, "site": "alpha"}))
    status = await _mcp(server, "status", {"job_id": provisional, "refresh": False})
    assert status["lookout"]["state"] == "looking" and status["state"] == "UNKNOWN"

    waiting = asyncio.ensure_future(_mcp(server, "wait_for", {"job_id": provisional,
                                                              "timeout_s": WAIT_S}))
    queue.add("4271", fed.job(provisional).token or "", "lost")
    found = await asyncio.wait_for(waiting, WAIT_S + 5)
    assert found["finished"] is False and found["woke"] == {"lookout": "found"}
    assert (found["job"]["id"], found["job"]["site"]) == ("alpha:4271", "alpha")
    assert found["job"]["lookout"]["state"] == "found"
    status = await _mcp(server, "status", {"job_id": provisional, "refresh": False})
    assert (status["id"], status["lookout"]["state"]) == ("alpha:4271", "found")


@pytest.mark.parametrize("settle_s", [1.0])
async def test_the_mcp_wait_for_gives_never_submitted(fed, queue, settle_s):
    calls = queue.sbatch_says(TIMED_OUT, takes_the_job=False)
    server = build_server(fed=fed)
    provisional = _looking(await _mcp(server, "submit", {"script": SCRIPT, "site": "alpha"}))
    closed = await _mcp(server, "wait_for", {"job_id": provisional, "timeout_s": WAIT_S})
    assert closed["finished"] is True and closed.get("woke") is None
    assert (closed["job"]["id"], closed["job"]["state"]) == (provisional, "FAILED")
    assert closed["job"]["lookout"]["state"] == "never-submitted"
    assert "a new submit is safe" in closed["job"]["lookout"]["message"]
    assert len(calls.read_text().splitlines()) == 1
