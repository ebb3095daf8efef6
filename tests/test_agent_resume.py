"""Agent tasks that were running when their engine stopped, resumed by the next engine on the
same store: the real `anthropic` client against the HTTP fake of the Messages API, a pure
skill (translate), no cluster needed."""

from __future__ import annotations

import asyncio
import threading

import pytest
from agents import agent
from fake_llm import last_result, text, tool_use
from lease_helpers import age_heartbeat

from diamond_jupyter.config import FederationConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.store import Store

SCRIPT = "#!/bin/bash\n#SBATCH --ntasks=2\n#SBATCH --time=00:10:00\nsrun ./a.out\n"


async def engine(path) -> Federation:
    fed = Federation(FederationConfig(sites=[]), store=Store(path))
    return await fed.start()


async def stop(fed: Federation) -> None:
    await agent(fed).close()
    await fed.close()
    fed.store.close()


async def test_task_stopped_mid_model_call_is_taken_up_by_the_next_engine(tmp_path, fake):
    in_flight, release = threading.Event(), threading.Event()

    def held(body):  # the engine stops while this answer is on its way
        in_flight.set()
        release.wait(60)
        return [text("lost with the engine")]

    def asked_again(body):
        assert "#flux: --nslots=2" in last_result(body)["script"]
        return [text("translated")]
    fake.script([tool_use("translate", {"script": SCRIPT, "to": "flux"}, id="toolu_tr")],
                held, asked_again)
    fed1 = await engine(tmp_path / "s.sqlite")
    task = await agent(fed1).ask("translate my script to flux")
    assert await asyncio.to_thread(in_flight.wait, 60)
    await stop(fed1)
    release.set()
    fed2 = await engine(tmp_path / "s.sqlite")
    try:
        assert fed2.store.get_task(task["id"]).state == "running"  # left by fed1
        await agent(fed2).start()
        done = await agent(fed2).wait(task["id"], timeout=60)
        assert done["state"] == "done" and done["answer"] == "translated", done
        assert fake.calls == 3 and not fake.errors
        assert fake.requests[2]["messages"] == fake.requests[1]["messages"]  # the same ask
        kinds = [s["kind"] for s in done["steps"]]
        assert kinds.count("tool_call") == 1 and kinds.count("tool_result") == 1
        resume = [s["data"] for s in done["steps"] if s["kind"] == "resume"]
        assert resume == [{"cause": "restart", "after": "restart"}]
        assert done["model_calls"] == 2  # the lost call is not counted
    finally:
        await stop(fed2)


async def test_a_task_run_by_a_live_engine_is_not_taken_up(tmp_path, fake):
    in_flight, release = threading.Event(), threading.Event()

    def held(body):
        in_flight.set()
        release.wait(60)
        return [text("answered by the first engine")]
    fake.script(held)
    fed1 = await engine(tmp_path / "s.sqlite")
    fed2 = await engine(tmp_path / "s.sqlite")
    try:
        task = await agent(fed1).ask("hello")
        assert await asyncio.to_thread(in_flight.wait, 60)
        await agent(fed2).start()  # fed1 still runs it: fed2 leaves it alone
        release.set()
        done = await agent(fed1).wait(task["id"], timeout=60)
        assert done["state"] == "done" and fake.calls == 1
        assert [s["kind"] for s in done["steps"]] == ["prompt", "model"]
    finally:
        release.set()
        await stop(fed2)
        await stop(fed1)


async def test_reply_stored_but_not_acted_on_is_finished_without_asking_again(tmp_path, fake):
    fed1 = await engine(tmp_path / "s.sqlite")
    rec = fed1.store.create_task("hi", data={
        "approval": "auto", "turn": None, "model_calls": 1,
        "messages": [{"role": "user", "content": "hi"},
                     {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}]})
    await stop(fed1)
    fed2 = await engine(tmp_path / "s.sqlite")
    try:
        await agent(fed2).start()
        done = await agent(fed2).wait(rec.id, timeout=60)
        assert done["state"] == "done" and done["answer"] == "hello" and fake.calls == 0
    finally:
        await stop(fed2)


async def test_approved_transfer_runs_once_under_the_calls_key(tmp_path, fake):
    src = tmp_path / "in.txt"
    src.write_text("data\n")
    call = tool_use("transfer", {"src": str(src), "dst": str(tmp_path / "out.txt"),
                                 "via": "sftp"}, id="toolu_xfer")

    def answer(body):
        return [text(last_result(body)["transfer"]["state"])]
    fake.script([call], answer)
    fed = await engine(tmp_path / "s.sqlite")
    try:
        task = await agent(fed).ask("copy it", approval="ask")
        asleep = await agent(fed).wait(task["id"], settled=True, timeout=60)
        assert asleep["state"] == "awaiting_approval"
        await agent(fed).approve(task["id"])
        with pytest.raises(Exception, match="not awaiting approval|approved or taken up"):
            await agent(fed).approve(task["id"])  # once
        done = await agent(fed).wait(task["id"], timeout=60)
        assert done["state"] == "done" and done["answer"] == "SUCCEEDED"
        assert (tmp_path / "out.txt").read_text() == "data\n"
        [rec] = fed.store.list_transfers()
        assert rec.id == f"agent-{task['id']}:toolu_xfer"  # a run again finds this one
    finally:
        await stop(fed)


async def test_an_engine_that_stalled_past_a_takeover_writes_nothing_more_to_the_task(
        tmp_path, fake):
    """Fencing of agent tasks: fed1 stalls mid model call, fed2 takes the task over (a new
    lease generation) and finishes it; fed1's answer, when it comes, is refused by the
    store: no step, no state, no second answer of fed1's, one `lease.lost` event."""
    in_flight, release = threading.Event(), threading.Event()

    def held(body):  # fed1's engine stalls while this answer is on its way
        in_flight.set()
        release.wait(60)
        return [text("stale answer of the first engine")]
    fake.script(held, [text("answered by the second engine")])
    fed1 = await engine(tmp_path / "s.sqlite")
    fed2 = await engine(tmp_path / "s.sqlite")
    try:
        task = await agent(fed1).ask("hello")
        assert await asyncio.to_thread(in_flight.wait, 60)
        age_heartbeat(fed1.store, fed1.lease.id)  # fed1 stalled past the takeover
        await agent(fed2).start()
        done = await agent(fed2).wait(task["id"], timeout=60)
        assert done["answer"] == "answered by the second engine"
        release.set()  # fed1 wakes with its reply
        runner1 = agent(fed1).runner
        await asyncio.wait_for(asyncio.gather(*list(runner1._running)), 60)
        after = fed2.store.get_task(task["id"])
        assert after.state == "done" and after.data["answer"] == done["answer"]
        assert [s.kind for s in after.steps] == ["prompt", "resume", "model"]
        assert "stale" not in str([s.data for s in after.steps])
        lost = [e.data for e in fed2.store.events_since(0, kinds=["lease.lost"], limit=None)]
        assert len(lost) == 1, lost
        assert lost[0]["task_id"] == task["id"] and lost[0]["item"] == "task"
        assert (lost[0]["engine"], lost[0]["generation"]) == (fed1.lease.id, 1)
        assert lost[0]["current"] > 1
        assert fake.calls == 2
    finally:
        release.set()
        await stop(fed2)
        await stop(fed1)
