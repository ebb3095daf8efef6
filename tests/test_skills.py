"""The typed skills over a Federation on the real local Slurm test bed (no LLM)."""

from __future__ import annotations

import pytest

from diamond_jupyter.model import BadInput
from diamond_jupyter.skills import (
    SKILLS,
    NeedsApproval,
    SkillContext,
    Suspend,
    run_skill,
    tool_schemas,
)

pytestmark = pytest.mark.testbed


@pytest.fixture
def fed(testbed_fed):
    return testbed_fed


def ctx(fed, approval="auto", suspendable=False) -> SkillContext:
    return SkillContext(fed, approval=approval, suspendable=suspendable)


def test_tool_schemas_are_the_input_models():
    tools = {t["name"]: t for t in tool_schemas()}
    assert set(tools) == {"discover_resources", "describe_site", "specify_resources", "place",
                          "submit", "status", "wait_for", "cancel", "logs", "fetch_results",
                          "transfer", "cancel_transfer", "translate", "run_workflow",
                          "workflow_status", "resubmit_elsewhere", "release"}
    for name, skill in SKILLS.items():
        assert tools[name]["input_schema"] == skill.input.model_json_schema()
        assert tools[name]["description"]
    assert {n for n, s in SKILLS.items() if s.costly} == {"submit", "cancel", "transfer",
                                                          "fetch_results", "run_workflow",
                                                          "cancel_transfer",
                                                          "resubmit_elsewhere", "release"}


async def test_discover_and_describe(fed, tb):
    out = await run_skill(ctx(fed), "discover_resources", {})
    sites = {s.name: s for s in out.sites}
    assert set(sites) == set(tb.sites)
    assert sites["gamma"].gpus_total == 4 and sites["alpha"].gpus_total == 0
    assert {p.name for p in sites["gamma"].partitions} == {"short", "long"}
    d = await run_skill(ctx(fed), "describe_site", {"site": "beta"})
    assert d.summary.name == "beta" and len(d.nodes) == 2
    with pytest.raises(BadInput, match="unknown site"):
        await run_skill(ctx(fed), "describe_site", {"site": "nowhere"})
    with pytest.raises(BadInput, match="describe_site: site"):
        await run_skill(ctx(fed), "describe_site", {})


async def test_specify_resources_gives_reasons_fixes_and_alternatives(fed):
    gpu = {"spec": {"script": "nvidia-smi", "resources": {"gpus_per_node": 2}}, "site": "alpha"}
    out = await run_skill(ctx(fed), "specify_resources", gpu)
    assert not out.feasible and out.verdict == "INCOMPATIBLE" and out.reasons
    assert any("no GPUs" in s for s in out.suggestions)
    assert out.alternatives == ["gamma"] and any("gamma" in s for s in out.suggestions)
    long = {"spec": {"script": "true", "resources": {"walltime_s": 400 * 86400}},
            "site": "gamma"}
    out = await run_skill(ctx(fed), "specify_resources", long)
    assert not out.feasible and any("walltime" in r for r in out.reasons)
    assert any(s.startswith("lower walltime_s to") for s in out.suggestions)
    ok = await run_skill(ctx(fed), "specify_resources", {"script": "echo hi", "site": "beta"})
    assert ok.feasible and ok.verdict in ("READY", "BUSY") and not ok.suggestions


async def test_place_translate(fed):
    pl = await run_skill(ctx(fed), "place", {"script": "#!/bin/bash\n#SBATCH --gres=gpu:1\n"
                                                       "nvidia-smi\n"})
    assert pl.choice == "gamma" and "gamma" in pl.explain
    tr = await run_skill(ctx(fed), "translate", {"script": "#!/bin/bash\n#SBATCH -N 2\n"
                                                           "#SBATCH -t 10\nhostname\n",
                                                 "to": "pbs"})
    assert "#PBS" in tr.script and "select=2" in tr.script


async def test_submit_status_wait_logs_fetch(fed, tmp_path):
    sub = await run_skill(ctx(fed), "submit", {"script": "echo skill-$((2+3)) > out.txt; "
                                                         "cat out.txt", "site": "auto"})
    job_id = sub.job.id  # "auto": the shared test bed may be busy elsewhere
    assert job_id.split(":")[0] in fed.sites and not sub.dry_run
    st = await run_skill(ctx(fed), "status", {"job_id": job_id})
    assert st.id == job_id
    with pytest.raises(Suspend) as s:  # in an agent task, wait_for suspends
        await run_skill(ctx(fed, suspendable=True), "wait_for", {"job_id": job_id})
    assert s.value.job_id == job_id
    done = await run_skill(ctx(fed), "wait_for", {"job_id": job_id, "timeout_s": 400})
    assert done.finished and done.job.state == "COMPLETED"
    again = await run_skill(ctx(fed, suspendable=True), "wait_for", {"job_id": job_id})
    assert again.finished  # a finished job never suspends
    logs = await run_skill(ctx(fed), "logs", {"job_id": job_id})
    assert logs.stdout.strip() == "skill-5"
    got = await run_skill(ctx(fed), "fetch_results", {"job_id": job_id,
                                                      "dest": str(tmp_path / "r")})
    assert any(p.endswith("out.txt") for p in got.paths)


async def test_approval_policies_gate_costly_skills(fed):
    before = len(fed.jobs())
    with pytest.raises(NeedsApproval) as n:
        await run_skill(ctx(fed, "ask"), "submit", {"script": "true", "site": "auto"})
    assert n.value.plan["action"] == "submit" and n.value.plan["site"] in fed.sites
    dry = await run_skill(ctx(fed, "dry-run"), "submit", {"script": "true", "site": "beta"})
    assert dry.dry_run and dry.job is None and dry.plan["site"] == "beta"
    assert len(fed.jobs()) == before
    with pytest.raises(BadInput, match="unknown site"):  # refused before any approval
        await run_skill(ctx(fed, "ask"), "submit", {"script": "true", "site": "nowhere"})
    sub = await run_skill(ctx(fed), "submit", {"script": "sleep 60", "site": "beta"})
    dry = await run_skill(ctx(fed, "dry-run"), "cancel", {"job_id": sub.job.id})
    assert dry.dry_run and dry.plan["action"] == "cancel"
    assert not fed.job(sub.job.id).state.terminal
    out = await run_skill(ctx(fed), "cancel", {"job_id": sub.job.id})
    assert out.job.id == sub.job.id
    done = await fed.wait(sub.job.id, timeout=300)
    assert done.state.value == "CANCELLED"
    tr = await run_skill(ctx(fed, "dry-run"), "transfer", {"src": "alpha:/tmp/x",
                                                           "dst": "beta:/tmp/x"})
    assert tr.dry_run and tr.plan["action"] == "transfer"


async def test_bad_arguments_name_the_field(fed):
    with pytest.raises(BadInput, match="submit"):
        await run_skill(ctx(fed), "submit", {"site": "alpha"})  # neither script nor spec
    with pytest.raises(BadInput, match="unknown skill"):
        await run_skill(ctx(fed), "rm_rf", {})
