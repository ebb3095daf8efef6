"""A workflow's plan is made without holding the server's event loop: reading the workflow,
each step's parsing, its engine lines and its renderings on every candidate site run in a
worker thread, one step at a time; only the I/O (a site's home, its modules) is awaited on
the loop. The plan is the same as when every step was rendered on the loop (its hashes pin
approvals).

Before: `plan_workflow` rendered every step for every candidate site on the loop (a 300-step
workflow on two sites held it for most of a second: every other request waited); the
engine lines an approved step is checked against at run time, and the walk that flags hidden
characters in a plan shown again, ran there too."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import threading
from typing import Any

from sweep_helpers import counting_sbatch

from diamond_jupyter.model import DiamondError, JobState
from diamond_jupyter.store import Store

SITES = ("alpha", "beta")


def _fed(tmp_path, monkeypatch, *, extra: tuple[dict[str, Any], ...] = ()) -> Any:
    """Local sites (module names kept as written); `extra`: more site entries."""
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.placement import Placement, SiteVerdict

    sbatch = counting_sbatch(tmp_path)
    sites = [SiteConfig(name=n, transport=TransportConfig(kind="local"),
                        workdir=str(tmp_path / n), commands={"sbatch": str(sbatch)})
             for n in SITES]
    sites += [SiteConfig(transport=TransportConfig(kind="local"),
                         workdir=str(tmp_path / e["name"]), **e) for e in extra]
    fed = Federation(FederationConfig(sites=sites), store=Store(tmp_path / "s.sqlite"))

    async def as_given(site: str, spec: Any, caps: Any = None) -> Any:
        return spec

    async def place(spec: Any, sites: list[str] | None = None, **kw: Any) -> Placement:
        ranked = [SiteVerdict(site=n, feasible=True, verdict="READY")
                  for n in (sites or list(fed.sites))]
        return Placement(policy="diamond", choice=ranked[0].site, ranked=ranked)

    monkeypatch.setattr(fed, "adapt_to_site", as_given)
    monkeypatch.setattr(fed, "place", place)  # every site fit, in their order
    return fed


def _chain(n: int) -> dict[str, Any]:
    """n steps placed `auto`, each needing the one before and taking its output."""
    steps = [{"name": "s0", "script": "#!/bin/bash\n#SBATCH -t 5\necho 0 > out\n"}]
    steps += [{"name": f"s{i}", "needs": [f"s{i - 1}"],
               "inputs": [{"from": f"s{i - 1}", "path": "out"}],
               "script": f"#!/bin/bash\n#SBATCH -t {i % 50 + 1}\ncat out; echo {i} > out\n"}
              for i in range(1, n)]
    return {"name": "chain", "queue_ahead": False, "steps": steps}


def _record_threads(monkeypatch, ticks: list[int]) -> dict[str, list[tuple[Any, ...]]]:
    """Where the CPU-bound parts ran: per call, (thread id, the ticker's count[, the job])."""
    from diamond_jupyter import sites as sites_mod
    from diamond_jupyter.workflow import engine as engine_mod

    seen: dict[str, list[tuple[Any, ...]]] = {"render": [], "engine_lines": []}
    render, lines = sites_mod.Site.render, engine_mod.engine_lines

    def recorded_render(self: Any, spec: Any) -> Any:
        seen["render"].append((threading.get_ident(), ticks[0], spec.name))
        return render(self, spec)

    def recorded_lines(step: Any) -> list[str]:
        seen["engine_lines"].append((threading.get_ident(), ticks[0]))
        return lines(step)

    monkeypatch.setattr(sites_mod.Site, "render", recorded_render)
    monkeypatch.setattr(engine_mod, "engine_lines", recorded_lines)
    return seen


async def test_the_loop_keeps_ticking_while_a_300_step_plan_is_made(tmp_path, monkeypatch):
    """Another coroutine (a sleep(0) loop standing for the server's other requests) runs
    between every two steps' renderings, and no rendering or engine-lines template runs on
    the loop's thread."""
    fed = _fed(tmp_path, monkeypatch)
    ticks = [0]
    seen = _record_threads(monkeypatch, ticks)
    done = asyncio.Event()

    async def ticker() -> None:
        while not done.is_set():
            ticks[0] += 1
            await asyncio.sleep(0)

    try:
        ticking = asyncio.ensure_future(ticker())
        plan = await fed.plan_workflow(_chain(300))
        done.set()
        await ticking
        loop_thread = threading.get_ident()
        assert len(plan["steps"]) == 300
        assert all(len(st["may_run_on"]) == 2 for st in plan["steps"])
        assert len(seen["render"]) == 600 and len(seen["engine_lines"]) == 300
        assert not [c for c in seen["render"] + seen["engine_lines"] if c[0] == loop_thread]
        first_tick = {}  # each step's renderings: the ticker's count at its first
        for _thread, tick, name in seen["render"]:
            first_tick.setdefault(name, tick)
        by_step = [first_tick[f"s{i}"] for i in range(300)]
        assert all(a < b for a, b in itertools.pairwise(by_step)), \
            "the loop did not run between two steps' renderings"
    finally:
        done.set()
        await fed.close()


FIXED = {"name": "fixed", "queue_ahead": False, "steps": [
    {"name": "prep", "site": "alpha", "script": "#!/bin/bash\n#SBATCH -t 5\necho prep\n"},
    {"name": "train", "needs": ["prep"], "inputs": [{"from": "prep", "path": "out.bin"}],
     "gang": "g", "script": "#!/bin/bash\n#SBATCH -t 5 -N 2\nsrun train\n"},
    {"name": "peer", "gang": "g", "site": "beta", "retries": 2,
     "on_failure": "resubmit-elsewhere", "script": "#!/usr/bin/env python3\nprint(1)\n"},
    {"name": "dbg", "script": "#!/bin/bash\n#SBATCH -p debug\necho d\n"},
    {"name": "far", "script": "#!/bin/bash\n#SBATCH --clusters=c2\necho f\n"},
    {"name": "pbs", "site": "delta", "needs": ["train"],
     "script": "#!/bin/bash\n#PBS -l walltime=00:10:00\necho $PBS_JOBID\n"},
    *({"name": f"s{i}", "needs": ["prep"],
       "script": f"#!/bin/bash\n#SBATCH -t {i + 1}\necho {i}\n"} for i in range(12))]}


async def test_the_plan_is_the_one_rendered_step_by_step_on_the_loop(tmp_path, monkeypatch):
    """A fixed workflow over four sites (one of another scheduler, one allowing only its
    own partition, one step refused everywhere) gives, byte for byte, the plan its steps'
    renderings one by one (`render_step`, as the plan made them on the loop) give; and the
    same plan when two are made at once."""
    from diamond_jupyter.federation_workflow import STEP_TOKEN, step_candidates
    from diamond_jupyter.workflow.engine import engine_lines, engine_sha256

    fed = _fed(tmp_path, monkeypatch, extra=(
        {"name": "gamma", "allowed_partitions": ["batch"], "default_account": "acct"},
        {"name": "delta", "scheduler": "pbs"}))
    try:
        plan, again = await asyncio.gather(fed.plan_workflow(FIXED), fed.plan_workflow(FIXED))
        assert json.dumps(plan, sort_keys=True) == json.dumps(again, sort_keys=True)
        wf = fed.load_workflow(FIXED)
        body = json.dumps(wf.model_dump(mode="json", by_alias=True), sort_keys=True)
        assert plan["workflow_sha256"] == hashlib.sha256(body.encode()).hexdigest()
        assert [st["name"] for st in plan["steps"]] == wf.order()
        refusals = set()
        for st in plan["steps"]:
            s = wf.step(st["name"])
            expected = []
            for site in step_candidates(s, list(fed.sites)):
                try:
                    script, digest = await fed.render_step(s.spec(), site)
                except DiamondError as e:
                    expected.append({"site": site, "refused": str(e)})
                    refusals.add((s.name, site))
                    continue
                expected.append({"site": site, "scheduler": fed.sites[site].cfg.scheduler,
                                 # no step names a directory: each runs in its own
                                 "working_directory": fed.site(site).job_dir(STEP_TOKEN),
                                 "script": script, "script_sha256": digest})
            assert json.dumps(st["rendered"]) == json.dumps(expected), s.name
            assert st["may_run_on"] == [c["site"] for c in expected if "script" in c]
            assert st["engine_lines"] == engine_lines(s)
            assert st["engine_sha256"] == engine_sha256(s)
            assert st["script_sha256"] == hashlib.sha256(s.script.encode()).hexdigest()
        # the refusals it covers: a partition the site does not allow, a step refused on
        # every site by the check every submit makes
        assert ("dbg", "gamma") in refusals
        assert {("far", site) for site in fed.sites} <= refusals
    finally:
        await fed.close()


APPROVED = {"name": "approved", "queue_ahead": False, "steps": [
    {"name": "prep", "site": "alpha", "script": "#!/bin/bash\n#SBATCH -t 5\necho prep\n"},
    {"name": "train", "needs": ["prep"], "script": "#!/bin/bash\n#SBATCH -t 5\necho t\n"}]}


async def test_an_approved_runs_checks_and_a_plan_shown_again_run_off_the_loop(tmp_path,
                                                                              monkeypatch):
    """At run time an approved step's engine lines and rendering are checked in a worker
    thread; a plan shown again is flagged and hashed there too (same hash as on the
    loop), and approving it by that hash works."""
    from diamond_jupyter import federation_plan
    from diamond_jupyter.federation_workflow import plan_digest

    fed = _fed(tmp_path, monkeypatch)
    ticks = [0]
    seen = _record_threads(monkeypatch, ticks)
    flagged: list[int] = []
    flag = federation_plan.flag_hidden

    def recorded_flag(plan: dict[str, Any]) -> dict[str, Any]:
        flagged.append(threading.get_ident())
        return flag(plan)

    monkeypatch.setattr(federation_plan, "flag_hidden", recorded_flag)
    loop_thread = threading.get_ident()
    try:
        plan = await fed.plan_workflow(APPROVED)
        view = await fed.run_workflow_approved(APPROVED, plan)
        seen["render"].clear()
        seen["engine_lines"].clear()
        fed.sites["alpha"].cfg.default_account = "changed"  # train, on alpha: not as seen
        fed.sites["beta"].cfg.default_account = "changed"
        fed.store.apply_state(fed.workflow(view.id).steps[0].job, JobState.COMPLETED,
                              exit_code=0)
        await fed.workflow_engine.advance(view.id)
        assert fed.workflow(view.id).awaiting_approval == ["train"]
        assert seen["engine_lines"] and seen["render"]  # the run-time check happened
        assert not [c for c in seen["render"] + seen["engine_lines"] if c[0] == loop_thread]

        shown = await fed.workflow_approval_plan(view.id)
        assert flagged and loop_thread not in flagged
        assert shown["plan_sha256"] == plan_digest(shown)
        done = await fed.approve_workflow_shown(view.id, shown["plan_sha256"])
        assert done.awaiting_approval == [] and done.steps[1].job
    finally:
        await fed.close()


async def test_a_step_refused_everywhere_is_listed_refused_on_each_site(tmp_path, monkeypatch):
    """The check every submit makes (once per step now) still refuses it on every
    candidate site, with the same reason."""
    fed = _fed(tmp_path, monkeypatch)
    try:
        bad = "#!/bin/bash\n#SBATCH --clusters=c2\necho x\n"
        plan = await fed.plan_workflow({"name": "r", "steps": [{"name": "x", "script": bad}]})
        (st,) = plan["steps"]
        assert st["may_run_on"] == []
        assert [c["site"] for c in st["rendered"]] == list(SITES)
        assert len({c["refused"] for c in st["rendered"]}) == 1
        assert "another cluster" in st["rendered"][0]["refused"]
    finally:
        await fed.close()
