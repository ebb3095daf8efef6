"""Workflows through the REST API of a real Jupyter server (checked against openapi.yaml),
their events on the event schema, and the run_workflow skill (approval, run once)."""

from __future__ import annotations

import textwrap

import pytest

from diamond_jupyter.model import JobState
from diamond_jupyter.server.events import WORKFLOW, to_emission
from diamond_jupyter.skills import NeedsApproval, SkillContext, run_skill

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
pytestmark = pytest.mark.testbed

TWO = textwrap.dedent("""\
    name: rest
    steps:
      - {name: one, site: alpha, script: "#!/bin/bash\\necho 42 > o.txt\\n"}
      - {name: two, site: beta, needs: [one], inputs: [{from: one, path: o.txt}],
         script: "#!/bin/bash\\ncat o.txt\\n"}
    """)


@pytest.fixture
def fed(jp_serverapp):
    return jp_serverapp.web_app.settings["diamond_federation"]


async def test_run_get_list_and_events(api, fed):
    started = await api.post("workflows", {"workflow": TWO, "origin": {"path": "n.ipynb"}},
                             expect=201)
    wid = started["id"]
    assert [s["name"] for s in started["steps"]] == ["one", "two"]
    assert all(s["job"] for s in started["steps"])  # both queued at once
    done = await fed.wait_workflow(wid, timeout=300)
    assert done.state == JobState.COMPLETED
    got = await api.get(f"workflows/{wid}")
    assert got["state"] == "COMPLETED" and [s["state"] for s in got["steps"]] == [
        "COMPLETED", "COMPLETED"]
    assert (await fed.logs(got["steps"][1]["job"]))["stdout"].strip() == "42"
    listed = await api.get("workflows")
    assert wid in [w["id"] for w in listed["workflows"]]
    again = await api.post(f"workflows/{wid}/cancel")  # finished: unchanged
    assert again["state"] == "COMPLETED"
    evs = fed.events_since(0, kinds=["workflow.*"], limit=None)
    emitted = [to_emission(e, fed) for e in evs]
    assert {sid for sid, _ in emitted} == {WORKFLOW}
    assert all(p["workflow_id"] == wid for _, p in emitted)
    assert emitted[-1][1]["kind"] == "workflow.state" and emitted[-1][1]["state"] == "COMPLETED"


async def test_errors_are_named(api):
    err = await api.post("workflows", {"workflow": "name: w\nsteps:\n  - {name: a, needs: [a], "
                                       "script: x}\n"}, expect=400)
    assert err["reason"] == "bad-input" and "needs itself" in err["message"]
    err = await api.post("workflows", {"workflow": {"name": "w", "steps": [
        {"name": "a", "site": "mars", "script": "x"}]}}, expect=400)
    assert "unknown site 'mars'" in err["message"]
    await api.get("workflows/wf-nope", expect=404)
    await api.post("workflows/wf-nope/cancel", expect=404)


async def test_the_skill_asks_then_runs_exactly_once(fed):
    ask = SkillContext(fed, approval="ask")
    with pytest.raises(NeedsApproval) as e:
        await run_skill(ask, "run_workflow", {"workflow": TWO})
    plan = e.value.plan
    assert plan["action"] == "run_workflow" and [s["name"] for s in plan["steps"]] == [
        "one", "two"]
    assert plan["data_movements"] and fed.workflows() == []  # nothing ran
    approved = SkillContext(fed, approved=plan, call_key="task1:call1")
    out = await run_skill(approved, "run_workflow", {"workflow": TWO})
    again = await run_skill(approved, "run_workflow", {"workflow": TWO})  # after a restart
    assert out.workflow["id"] == again.workflow["id"] and len(fed.workflows()) == 1
    changed = TWO.replace("echo 42", "echo 43")
    with pytest.raises(NeedsApproval) as e:  # not what was approved: asked again
        await run_skill(SkillContext(fed, approved=plan, call_key="task1:call2"),
                        "run_workflow", {"workflow": changed})
    assert "differs from the approved one" in e.value.plan["changed"]
    done = await fed.wait_workflow(out.workflow["id"], timeout=300)
    assert done.state == JobState.COMPLETED
    st = await run_skill(SkillContext(fed), "workflow_status",
                         {"workflow_id": out.workflow["id"]})
    assert st.workflow["state"] == "COMPLETED"
