"""A job that can never start where it is wakes the agent task waiting on it, on the real
test bed: gamma's `short` partition allows 30 minutes, so a job asking there for an hour
pends forever with PartitionTimeLimit. Under on_stuck=resubmit-elsewhere the task moves it
to another site; under ask the move waits for approval like a submit; under wait the task
sleeps on. The model is the HTTP fake the other agent tests use. diamond's own check before
an explicit submit would refuse that job (its time past the partition's), so it is set
aside here: the job stands for one whose partition limit changed after submitting."""

from __future__ import annotations

import pytest
from agents import agent
from fake_llm import FakeLLM, last_result, text, tool_use

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobState
from diamond_jupyter.store import Store

pytestmark = pytest.mark.testbed
STUCK = ("#!/bin/bash\n#SBATCH --partition=short\n#SBATCH --time=01:00:00\n"
         "echo moved-ok on $(hostname)\n")


@pytest.fixture
async def fed(tb, tmp_path, fake, monkeypatch):
    # an explicit site now refuses, before submitting, a time past every partition the job
    # names (`site_bounds`, tested in tests/test_site_bounds.py); here the job must reach
    # Slurm and pend with PartitionTimeLimit, as one does when the partition's limit was
    # lowered after diamond read it, or after `--force`
    monkeypatch.setattr("diamond_jupyter.federation_needs.beyond_the_site",
                        lambda *args, **kwargs: [])
    f = Federation(tb.config_path, store=Store(tmp_path / "store.sqlite"), poll_interval_s=5,
                   min_poll_s=0.5)
    await f.start()
    yield f
    for job in f.jobs(limit=None):
        if not job.state.terminal:
            await f.cancel(job.id)
    await agent(f).close()
    await f.close()


def script_until_moved(fake: FakeLLM, seen: dict) -> None:
    def after_submit(body):
        seen["job"] = last_result(body)["job"]["id"]
        return [tool_use("wait_for", {"job_id": seen["job"]})]

    def after_wake(body):
        seen["wait"] = last_result(body)
        seen["new"] = seen["wait"]["resubmitted_as"]["id"]
        return [tool_use("wait_for", {"job_id": seen["new"]})]

    def answer(body):
        seen["end"] = last_result(body)
        return [text(f"{seen['job']} could not start; {seen['new']} ran instead")]

    fake.script([tool_use("submit", {"script": STUCK, "site": "gamma", "name": "stuck"})],
                after_submit, after_wake, answer)


async def test_a_stuck_job_wakes_its_task_which_resubmits_it_elsewhere(fed, fake):
    seen: dict = {}
    script_until_moved(fake, seen)
    task = await agent(fed).ask("run this on gamma and tell me when it is done", approval="auto",
                         on_stuck="resubmit-elsewhere")
    done = await agent(fed).wait(task["id"], timeout=600)
    assert done["state"] == "done", done
    assert not fake.errors and fake.calls == 4
    woke = seen["wait"]["woke"]
    assert woke["attention"] == "stuck" and woke["reason"].startswith("PartitionTimeLimit")
    old = await fed.wait(seen["job"], timeout=120)  # cancelled: the site says so soon
    new = fed.job(seen["new"])
    assert old.site == "gamma" and old.state == JobState.CANCELLED
    assert new.site != "gamma" and new.state == JobState.COMPLETED
    assert new.origin["resubmitted_from"] == old.id
    assert seen["end"]["job"]["state"] == "COMPLETED"
    assert (await fed.logs(new.id))["stdout"].startswith("moved-ok on ")
    # the wake came from the job's attention event, published like every other event
    stuck = [e for e in fed.events_since(0, kinds=["job.attention"])
             if e.job_id == old.id and e.data["attention"] == "stuck"]
    assert len(stuck) == 1 and stuck[0].data["version"] == "1"
    kinds = [(s["kind"], s["data"].get("cause")) for s in done["steps"]]
    assert ("resume", "job stuck") in kinds
    # the new job went where the old one never could: a partition that allows an hour
    assert new.spec.queue != "short" and new.spec.resources.walltime_s == 3600


async def test_under_ask_the_move_waits_for_approval(fed, fake):
    seen: dict = {}
    script_until_moved(fake, seen)
    task = await agent(fed).ask("run this on gamma", approval="auto", on_stuck="ask")
    asked = await agent(fed).wait(task["id"], states={"awaiting_approval", "done", "failed"},
                                timeout=300)
    assert asked["state"] == "awaiting_approval", asked
    plan = asked["pending"]["plan"]
    assert asked["pending"]["tool"] == "wait_for" and asked["on_stuck"] == "ask"
    assert plan["action"] == "resubmit" and plan["from_site"] == "gamma"
    assert plan["site"] != "gamma" and plan["submit"]["script_sha256"]
    assert fed.job(seen["job"]).state == JobState.PENDING  # nothing moved yet
    await agent(fed).approve(task["id"])
    done = await agent(fed).wait(task["id"], timeout=600)
    assert done["state"] == "done", done
    new = fed.job(seen["new"])
    assert new.site == plan["site"] and new.state == JobState.COMPLETED
    assert (await fed.wait(seen["job"], timeout=120)).state == JobState.CANCELLED


async def test_under_wait_the_task_sleeps_on(fed, fake):
    seen: dict = {}

    def after_submit(body):
        seen["job"] = last_result(body)["job"]["id"]
        return [tool_use("wait_for", {"job_id": seen["job"]})]

    def after_end(body):
        seen["end"] = last_result(body)
        return [text("it was cancelled")]

    fake.script([tool_use("submit", {"script": STUCK, "site": "gamma", "name": "stuck"})],
                after_submit, after_end)
    task = await agent(fed).ask("run this on gamma", approval="auto", on_stuck="wait")
    await agent(fed).wait(task["id"], settled=True, timeout=120)
    job = await fed.wait(seen["job"], until=lambda j: (j.reason or "").startswith(
        "PartitionTimeLimit"), timeout=120)
    # the task noted it and sleeps on: a step, no model call, no new job
    rec = await agent(fed).wait(task["id"], settled=True, timeout=60)
    assert rec["state"] == "waiting" and fake.calls == 2
    await fed.cancel(job.id)
    done = await agent(fed).wait(task["id"], timeout=300)
    assert done["state"] == "done" and seen["end"]["job"]["state"] == "CANCELLED"
    assert [s["kind"] for s in done["steps"]].count("stuck") >= 1
    assert len(fed.jobs(limit=None)) == 1
