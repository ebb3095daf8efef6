"""The agent's REST face: start a task, approve or reject its plan, read its steps (the
server's own agent, the real `anthropic` client against the HTTP fake, the real test bed)."""

from __future__ import annotations

import pytest
from fake_llm import FakeLLM, last_result, text, tool_use
from server_conftest import diamond_config

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
pytestmark = pytest.mark.testbed
KEY = "sk-ant-rest-fake-key-0123456789abcdef"


@pytest.fixture
def fake():
    with FakeLLM() as f:
        yield f


@pytest.fixture
def jp_server_config(tb, tmp_path, data_dir, fake, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("DIAMOND_TEST_AGENT_KEY", KEY)
    cfg = diamond_config(str(tb.config_path), str(tmp_path / "store.sqlite3"))
    cfg["DiamondApp"].update(llm_api_key_env="DIAMOND_TEST_AGENT_KEY", llm_model="fake-model")
    return cfg


@pytest.fixture
def fed(jp_serverapp):
    return jp_serverapp.web_app.settings["diamond_federation"]


@pytest.fixture
def server_agent(jp_serverapp):
    """The server's own agent service (the one its REST routes use)."""
    return jp_serverapp.web_app.settings["diamond_app"].agent_service()


SUBMIT = [tool_use("submit", {"script": "echo via-rest", "site": "beta"}, id="toolu_rest")]


async def test_ask_approve_and_read_the_steps(api, fed, fake, server_agent):
    fake.script(SUBMIT, lambda body: [text("submitted " + last_result(body)["job"]["id"])])
    task = await api.post("tasks", {"prompt": "submit echo", "approval": "ask"}, expect=202)
    assert task["state"] == "running" and task["approval"] == "ask"
    await server_agent.wait(task["id"], settled=True, timeout=60)
    got = await api.get(f"tasks/{task['id']}")
    assert got["state"] == "awaiting_approval" and got["pending"]["tool"] == "submit"
    assert (await api.get("jobs"))["total"] == 0
    await api.post(f"tasks/{task['id']}/approve", {})
    done = await server_agent.wait(task["id"], timeout=60)
    assert done["state"] == "done" and done["answer"].startswith("submitted beta:")
    got = await api.get(f"tasks/{task['id']}")
    kinds = [s["kind"] for s in got["steps"]]
    assert kinds[:4] == ["prompt", "tool_call", "approval", "resume"] and "tool_result" in kinds
    assert fake.requests[0]["model"] == "fake-model"
    listed = await api.get("tasks")
    assert [t["id"] for t in listed["tasks"]] == [task["id"]]
    for path in ("state", f"tasks/{task['id']}", "tasks", "events"):
        assert KEY not in str((await api.call("GET", path)).body)
    again = await api.post(f"tasks/{task['id']}/approve", {}, expect=400)
    assert "not awaiting approval" in again["message"]


async def test_reject_ends_the_task_without_submitting(api, fed, fake, server_agent):
    fake.script(SUBMIT)
    task = await api.post("tasks", {"prompt": "submit echo", "approval": "ask"}, expect=202)
    await server_agent.wait(task["id"], settled=True, timeout=60)
    out = await api.post(f"tasks/{task['id']}/reject", {"reason": "not now"})
    assert out["state"] == "rejected" and "not now" in out["answer"]
    assert (await api.get("jobs"))["total"] == 0 and fake.calls == 1


async def test_bad_requests_and_unknown_tasks(api):
    err = await api.post("tasks", {"approval": "ask"}, expect=400)
    assert err["reason"] == "bad-input"
    await api.get("tasks/nope", expect=404)
    await api.post("tasks/nope/approve", {}, expect=404)


class TestNoLLM:
    @pytest.fixture
    def jp_server_config(self, tb, tmp_path, data_dir, monkeypatch):
        monkeypatch.delenv("DIAMOND_NO_SUCH_KEY", raising=False)
        cfg = diamond_config(str(tb.config_path), str(tmp_path / "store.sqlite3"))
        cfg["DiamondApp"].update(llm_api_key_env="DIAMOND_NO_SUCH_KEY")
        return cfg

    async def test_ask_says_how_to_configure(self, api):
        err = await api.post("tasks", {"prompt": "hi"}, expect=503)
        assert err["reason"] == "llm-not-configured" and "ANTHROPIC_API_KEY" in err["message"]
        assert (await api.get("tasks")) == {"tasks": []}  # everything else works
