"""The agent loop: the real `anthropic` client against an HTTP fake of the Messages API, the
real local Slurm test bed. A task that waits for a job sleeps (no model calls) until the job
ends, also across a restart; approval "ask" and "dry-run" gate costly skills."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from agents import agent
from fake_llm import FakeLLM, last_result, text, tool_results, tool_use

from diamond_jupyter.agent import LLMConfig, LLMNotConfigured
from diamond_jupyter.agent.openai_compat import to_openai
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobState
from diamond_jupyter.store import Store

pytestmark = pytest.mark.testbed
KEY = "sk-ant-fake-key-never-stored-0123456789"


@pytest.fixture
def fake():
    with FakeLLM() as f:
        yield f


@pytest.fixture
def llm_env(fake, monkeypatch, data_dir):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("DIAMOND_LLM_PROVIDER", raising=False)
    return fake


@pytest.fixture
async def fed(testbed_fed, llm_env):
    yield testbed_fed
    await agent(testbed_fed).close()


def submit_and_wait_script(fake: FakeLLM, seconds: float, site: str = "auto") -> dict:
    """submit -> wait_for -> logs -> answer: four model calls whatever the job's length.
    Site "auto": the shared test bed may be busy; placement picks the soonest finish."""
    seen: dict = {}

    def after_submit(body):
        seen["job"] = last_result(body)["job"]["id"]
        return [text("Submitted; waiting."), tool_use("wait_for", {"job_id": seen["job"]})]

    def after_wait(body):
        seen["wait"] = last_result(body)
        return [tool_use("logs", {"job_id": seen["job"]})]

    def answer(body):
        out = last_result(body)["stdout"].strip()
        return [text(f"Job {seen['job']} finished; it printed: {out}")]

    fake.script([tool_use("submit", {"script": f"sleep {seconds}; echo done", "site": site,
                                     "name": "agent-test"})], after_submit, after_wait, answer)
    return seen


@pytest.mark.parametrize("seconds", [1, 8])
async def test_task_sleeps_while_the_job_runs_and_resumes_on_its_end(fed, fake, seconds):
    seen = submit_and_wait_script(fake, seconds)
    task = await agent(fed).ask("run `sleep; echo done` on alpha and tell me what it printed",
                         approval="auto")
    asleep = await agent(fed).wait(task["id"], settled=True, timeout=60)
    assert asleep["state"] == "waiting", asleep
    assert asleep["waiting_on"] == [seen["job"]] and fake.calls == 2
    slept_at = time.time()
    done = await agent(fed).wait(task["id"], timeout=400)
    assert done["state"] == "done", done
    assert done["answer"] == f"Job {seen['job']} finished; it printed: done"
    assert seen["wait"]["finished"] and seen["wait"]["job"]["state"] == "COMPLETED"
    assert fake.calls == 4 and done["model_calls"] == 4 and not fake.errors
    job = fed.job(seen["job"])
    assert job.state == JobState.COMPLETED
    # no model call while the job ran: the third came after the job's end was observed
    assert fake.times[1] < slept_at <= fake.times[2]
    assert fake.times[2] >= job.ended_at.timestamp() - 1
    kinds = [s["kind"] for s in done["steps"]]
    assert kinds[:3] == ["prompt", "tool_call", "tool_result"]
    assert "suspend" in kinds and kinds[kinds.index("suspend") + 1] == "resume"
    resume = done["steps"][kinds.index("resume")]["data"]
    assert resume["cause"] == "job ended" and resume["state"] == "COMPLETED"
    steps = [e for e in fed.events_since(0, kinds=["agent.step"])
             if e.data["task_id"] == task["id"]]
    assert [e.data["step_kind"] for e in steps] == kinds  # every step was published
    assert all(KEY in (h.get("x-api-key"), h.get("authorization", "")[7:])
               for h in fake.headers)  # the key goes to the model endpoint only
    dump = fed.store.path.read_bytes()
    assert KEY.encode() not in dump
    assert KEY not in json.dumps([e.model_dump(mode="json") for e in fed.events_since(0)])


async def test_restart_resumes_a_sleeping_task(tb, tmp_path, fake, llm_env):
    store_path = tmp_path / "store.sqlite"
    submit_and_wait_script(fake, 4)
    fed1 = Federation(tb.config_path, store=Store(store_path), min_poll_s=0.5)
    await fed1.start()
    task = await agent(fed1).ask("run it on beta", approval="auto")
    asleep = await agent(fed1).wait(task["id"], settled=True, timeout=60)
    assert asleep["state"] == "waiting" and fake.calls == 2
    await agent(fed1).close()
    await fed1.close()
    fed1.store.close()
    fed2 = Federation(tb.config_path, store=Store(store_path), min_poll_s=0.5)
    try:
        await fed2.start()  # re-attaches the unfinished job
        await agent(fed2).start()  # re-arms the waiting task
        done = await agent(fed2).wait(task["id"], timeout=400)
        assert done["state"] == "done", done
        assert "printed: done" in done["answer"] and fake.calls == 4
    finally:
        await agent(fed2).close()
        await fed2.close()


async def test_restart_after_the_job_ended_resumes_at_once(tb, tmp_path, fake, llm_env):
    store_path = tmp_path / "store.sqlite"
    seen = submit_and_wait_script(fake, 1)
    fed1 = Federation(tb.config_path, store=Store(store_path), min_poll_s=0.5)
    await fed1.start()
    task = await agent(fed1).ask("run it on gamma", approval="auto")
    await agent(fed1).wait(task["id"], settled=True, timeout=60)
    await agent(fed1).close()  # the agent is gone; the engine still sees the job end
    await fed1.wait(seen["job"], timeout=400)
    await fed1.close()
    fed2 = Federation(tb.config_path, store=Store(store_path), min_poll_s=0.5)
    try:
        await fed2.start()
        await agent(fed2).start()
        done = await agent(fed2).wait(task["id"], timeout=120)
        assert done["state"] == "done" and fake.calls == 4
        resume = [s for s in done["steps"] if s["kind"] == "resume"][0]["data"]
        assert resume["after"] == "restart" and resume["state"] == "COMPLETED"
    finally:
        await agent(fed2).close()
        await fed2.close()


SUBMIT = tool_use("submit", {"script": "echo approved", "site": "alpha"}, id="toolu_sub")


async def test_approval_ask_then_approve_submits(fed, fake):
    def answered(body):
        return [text("submitted " + last_result(body)["job"]["id"])]
    fake.script([SUBMIT], answered)
    before = len(fed.jobs())
    task = await agent(fed).ask("submit echo approved", approval="ask")
    waiting = await agent(fed).wait(task["id"], settled=True, timeout=60)
    assert waiting["state"] == "awaiting_approval" and fake.calls == 1
    assert waiting["pending"]["tool"] == "submit" and waiting["pending"]["plan"]["site"] == "alpha"
    assert len(fed.jobs()) == before  # nothing submitted yet
    ev = fed.events_since(0, kinds=["agent.approval"])[-1]
    assert ev.data["task_id"] == task["id"] and ev.data["plan"]["action"] == "submit"
    await agent(fed).approve(task["id"])
    done = await agent(fed).wait(task["id"], timeout=60)
    assert done["state"] == "done" and fake.calls == 2
    assert len(fed.jobs()) == before + 1 and done["answer"].startswith("submitted alpha:")


async def test_approval_ask_then_reject_submits_nothing(fed, fake):
    fake.script([SUBMIT])
    before = len(fed.jobs())
    task = await agent(fed).ask("submit echo approved", approval="ask")
    await agent(fed).wait(task["id"], settled=True, timeout=60)
    await agent(fed).reject(task["id"])
    done = await agent(fed).wait(task["id"], timeout=60)
    assert done["state"] == "rejected" and "not done" in done["answer"]
    assert len(fed.jobs()) == before and fake.calls == 1


async def test_dry_run_submits_nothing(fed, fake):
    seen = {}

    def answered(body):
        seen["result"] = last_result(body)
        return [text("dry run only")]
    fake.script([tool_use("submit", {"script": "echo x", "site": "auto"})], answered)
    before = len(fed.jobs())
    task = await agent(fed).ask("plan it", approval="dry-run")
    done = await agent(fed).wait(task["id"], timeout=60)
    assert done["state"] == "done" and seen["result"]["dry_run"] is True
    assert seen["result"]["plan"]["site"] in {"alpha", "beta", "gamma"}
    assert len(fed.jobs()) == before


async def test_a_failing_tool_is_reported_to_the_model(fed, fake):
    def check(body):
        (_, content, is_error), = tool_results(body)
        assert is_error and "unknown site" in content
        return [text("no such site")]
    fake.script([tool_use("describe_site", {"site": "nowhere"})], check)
    task = await agent(fed).ask("describe nowhere")
    done = await agent(fed).wait(task["id"], timeout=60)
    assert done["state"] == "done" and done["answer"] == "no such site" and not fake.errors


async def test_openai_compatible_provider(fed, fake, monkeypatch):
    monkeypatch.setenv("DIAMOND_LLM_PROVIDER", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", fake.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-fake-0123456789abcdefghij")
    fake.script([tool_use("discover_resources", {}, id="call_1")],
                lambda body: [text(f"{len(json.loads(body['messages'][-1]['content'])['sites'])}"
                                   " sites")])
    from diamond_jupyter.agent.loop import AgentRunner

    runner = AgentRunner(fed, LLMConfig.from_env())
    try:
        rec = await runner.ask("how many sites?")
        done = await runner.wait(rec.id, timeout=60)
        assert done.data["answer"] == f"{len(fed.site_configs())} sites" and fake.calls == 2
        assert fake.headers[0]["authorization"].startswith("Bearer sk-openai")
        assert fake.requests[1]["messages"][-1]["role"] == "tool"
    finally:
        await runner.close()


def test_to_openai_keeps_the_conversation_shape():
    msgs = to_openai("sys", [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [text("ok"), tool_use("status", {"job_id": "a:1"},
                                                                id="t1")]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "{}"}]}])
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool"]
    assert msgs[2]["tool_calls"][0]["function"]["name"] == "status"


def test_no_llm_configured(monkeypatch):
    for k in ("ANTHROPIC_API_KEY", "DIAMOND_LLM_PROVIDER", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(k, raising=False)
    assert "ANTHROPIC_API_KEY" in LLMConfig.from_env().missing()
    assert issubclass(LLMNotConfigured, Exception)


def test_diamond_ask_without_an_llm_exits_2_with_the_how_to(tb, data_dir, monkeypatch):
    env = {k: v for k, v in __import__("os").environ.items()
           if k not in ("ANTHROPIC_API_KEY", "DIAMOND_LLM_PROVIDER", "OPENAI_API_KEY",
                        "OPENAI_BASE_URL")}
    res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "ask", "hello",
                          "--config", str(tb.config_path)], env=env, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2, res
    line, = res.stderr.strip().splitlines()
    assert "no LLM configured: set ANTHROPIC_API_KEY" in line


def test_diamond_ask_end_to_end(tb, data_dir, fake, monkeypatch):
    seen = submit_and_wait_script(fake, 2)
    env = {**__import__("os").environ, "ANTHROPIC_BASE_URL": fake.url,
           "ANTHROPIC_API_KEY": KEY}
    res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "ask", "--json",
                          "run sleep on alpha", "--approval", "auto", "--config",
                          str(tb.config_path)], env=env,
                         capture_output=True, text=True, timeout=500)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["state"] == "done" and out["answer"].endswith("printed: done")
    assert out["model_calls"] == 4 and fake.calls == 4 and seen["job"].split(":")[0] in tb.sites


def test_ask_in_notebook_follows_the_task_to_its_answer(tb, fake, llm_env):
    """What `%%diamond ask` calls: agent.ask(engine, text) on the in-process engine."""
    from diamond_jupyter.agent import approve, ask
    from diamond_jupyter.kernel.inprocess import LocalEngine

    seen = submit_and_wait_script(fake, 1)
    engine = LocalEngine(tb.config_path)
    try:
        handle = ask(engine, "run it", approval="auto",
                     origin={"path": "nb.ipynb", "cell_id": "c1"})
        assert handle.id and handle.state == "running"
        assert handle.result(timeout=400).endswith("printed: done")
        assert fake.calls == 4 and handle.state == "done"
        assert "resume" in repr(handle) and f'data-diamond-task="{handle.id}"' in \
            handle._repr_html_()
        assert engine.call(engine.fed()).job(seen["job"]).origin["cell_id"] == "c1"
        fake.script([SUBMIT], lambda body: [text("ok")])
        waiting = ask(engine, "submit it", approval="ask")
        engine.call(_settled(engine, waiting.id))
        assert "%diamond approve" in repr(engine.call(_task_handle(engine, waiting.id)))
        assert approve(engine, waiting.id).result(timeout=60) == "ok"
    finally:
        engine.close()


async def _settled(engine, task_id):
    return await (await engine.agent()).wait(task_id, settled=True, timeout=60)


async def _task_handle(engine, task_id):
    from diamond_jupyter.agent.notebook import TaskHandle

    return TaskHandle(engine, (await engine.fed()).task(task_id))


# -- tasks left running when the engine stopped --------------------------------------------------

def agent_jobs(fed: Federation, name: str) -> list:
    return [j for j in fed.jobs(limit=None) if (j.name or "").startswith(name)]


async def test_task_stopped_mid_model_call_resumes_after_restart(tb, tmp_path, fake, llm_env):
    """The engine closes while the model is answering; the next engine asks the model again
    with the same conversation, and the job the task had submitted is not submitted again."""
    import asyncio
    import secrets
    import threading

    store_path = tmp_path / "store.sqlite"
    name = f"agent-restart-{secrets.token_hex(3)}"
    in_flight, release, seen = threading.Event(), threading.Event(), {}

    def held(body):  # the engine is closed while this answer is on its way
        seen["job"] = last_result(body)["job"]["id"]
        in_flight.set()
        release.wait(120)
        return [text("this answer is lost with the engine")]

    def asked_again(body):
        assert last_result(body)["job"]["id"] == seen["job"]
        return [tool_use("wait_for", {"job_id": seen["job"]})]

    def answer(body):
        return [text(f"the job ended {last_result(body)['job']['state']}")]
    fake.script([tool_use("submit", {"script": "echo hi", "site": "beta", "name": name})],
                held, asked_again, answer)
    fed1 = Federation(tb.config_path, store=Store(store_path), min_poll_s=0.5)
    await fed1.start()
    task = await agent(fed1).ask("run echo hi on beta", approval="auto")
    assert await asyncio.to_thread(in_flight.wait, 120)
    await agent(fed1).close()
    await fed1.close()
    fed1.store.close()
    release.set()
    fed2 = Federation(tb.config_path, store=Store(store_path), min_poll_s=0.5)
    try:
        assert fed2.store.get_task(task["id"]).state == "running"  # orphaned, until now
        await fed2.start()
        await agent(fed2).start()  # takes up the task no live engine runs
        done = await agent(fed2).wait(task["id"], timeout=300)
        assert done["state"] == "done", done
        assert done["answer"] == "the job ended COMPLETED" and not fake.errors
        assert fake.calls == 4 and fake.requests[2]["messages"] == fake.requests[1]["messages"]
        assert [j.id for j in agent_jobs(fed2, name)] == [seen["job"]]  # submitted once
        steps = done["steps"]
        assert [s["data"].get("tool") for s in steps if s["kind"] == "tool_call"] == [
            "submit", "wait_for"]
        assert any(s["kind"] == "resume" and s["data"].get("cause") == "restart"
                   for s in steps)
    finally:
        await agent(fed2).close()
        await fed2.close()


async def test_task_stopped_mid_submit_does_not_submit_twice(tb, tmp_path, fake, llm_env):
    """The engine closes while the task's submit runs; the next engine runs the call again,
    which finds the first run's job (by the call's key and the job's token) or, if that never
    reached the scheduler, submits it: one job on the site either way."""
    import secrets

    from diamond_jupyter.testbed.clusters import HOME, base_dir

    store_path = tmp_path / "store.sqlite"
    name = f"agentdup{secrets.token_hex(3)}"
    log = f"{HOME}/.diamond/{name}.log"
    seen = {}

    def after_submit(body):
        seen["job"] = last_result(body)["job"]["id"]
        return [tool_use("wait_for", {"job_id": seen["job"]})]
    fake.script([tool_use("submit", {"script": f"echo ran >> {log}", "site": "alpha",
                                     "name": name}, id="toolu_dup_submit")],
                after_submit, [text("done")])
    fed1 = Federation(tb.config_path, store=Store(store_path), min_poll_s=0.5)
    await fed1.start()
    task = await agent(fed1).ask("run it once on alpha", approval="auto")
    async for ev in fed1.events(since=0):  # the submit has started
        if ev.kind == "agent.step" and ev.data.get("step_kind") == "tool_call":
            break
    await agent(fed1).close()
    await fed1.close()
    fed1.store.close()
    fed2 = Federation(tb.config_path, store=Store(store_path), min_poll_s=0.5)
    try:
        await fed2.start()
        await agent(fed2).start()
        done = await agent(fed2).wait(task["id"], timeout=300)
        assert done["state"] == "done", done
        bound = [j for j in agent_jobs(fed2, name) if j.native_id]
        assert [j.id for j in bound] == [seen["job"]]
        assert fed2.job(seen["job"]).state == JobState.COMPLETED
        # nothing else of that name is queued, so the log says how many ran (the bound job
        # itself may still be listed for a moment: its end line comes before Slurm's end)
        q = await fed2.site("alpha").transport.run(["squeue", "--me", "-h", "-o", "%i %j %T"],
                                                   check=True)
        mine = fed2.job(seen["job"]).native_id
        assert not [row for row in q.stdout.splitlines()
                    if row.split()[1].startswith(name) and row.split()[0] != mine], q.stdout
        host_log = base_dir() / "clusters" / "alpha" / "home" / ".diamond" / f"{name}.log"
        assert host_log.read_text() == "ran\n"
        calls = [s for s in done["steps"] if s["kind"] == "tool_call"]
        assert [s["data"]["tool"] for s in calls] == ["submit", "wait_for"]  # not re-logged
    finally:
        await agent(fed2).close()
        await fed2.close()
