"""Workflow files, fourteenth sweep, run on the real engine and store (the operations below
the facade recorded, `test_workflow_unseen._Ops`; no test bed), centred on where placement
decides: fixed-site steps feeding `auto` ones and the reverse, chains and diamonds mixing
both across sites, fan-ins onto an `auto` step, fan-outs of `auto` steps placed side by
side, a placement refused, retries elsewhere, engines stopped while a step is placed or an
upstream's submit answer was lost, a workflow cancelled while a step is placed or its
input copied; and files with mistakes around `auto` steps (cycles, unknown steps, duplicate
names, names in other alphabets, too many steps).

Each run is asserted as a user sees it: the workflow's state and reason, each step's phase,
what was submitted where, in which order and how often, what was copied from where to
where. The tests named `fault` failed before this sweep's fixes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from sweep_helpers import SITES, load, refused
from test_workflow_unseen import _Ops, _until
from test_workflow_unseen13 import _Run as WorkflowRun
from test_workflow_unseen13 import run_maker
from workflow_ops import HeldCopy, next_engine

from diamond_jupyter.model import BadInput, DiamondError, JobSpec, JobState, provisional_id
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.engine import Estimate, WorkflowEngine


class _Placing(_Ops):
    """Sites take gates; placement puts a step where `lands` says (else gamma), recording
    each submit and placement in `calls` in the order asked; while `hold` is set each
    placement waits for `go` (`placing` names those waiting)."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.lands: dict[str, str] = {}
        self.calls: list[tuple[str, str]] = []
        self.sources_for: dict[str, dict] = {}
        self.excluded: dict[str, list[set]] = {}
        self.hold = False
        self.go = asyncio.Event()
        self.placing: set[str] = set()
        self.asked = asyncio.Event()
        self.refuse_place: str | None = None
        self.lose_answer: set[str] = set()
        self.not_yet = False

    def supports_gate(self, site: str) -> bool:
        return True

    async def place(self, spec: JobSpec, sources: dict, exclude: set, ready_at: Any = None
                    ) -> Estimate:
        self.calls.append(("place", spec.name))
        self.sources_for[spec.name] = dict(sources)
        self.excluded.setdefault(spec.name, []).append(set(exclude))
        if spec.name == self.refuse_place:
            raise BadInput("no site has 4 A100 GPUs free in one node")
        if self.hold:
            self.placing.add(spec.name)
            self.asked.set()
            await self.go.wait()
        site = self.lands.get(spec.name, "gamma")
        if site in exclude:
            site = next(s for s in self.sites if s not in exclude)
        return Estimate(site, None, None)

    def submitted(self, spec: JobSpec, site: str, *, hold: bool, token: str,
                  origin: dict[str, Any]) -> None:
        if origin.get("gate"):
            return
        self.calls.append(("submit", origin["step"]))
        super().submitted(spec, site, hold=hold, token=token, origin=origin)
        if origin["step"] in self.lose_answer:
            self.lose_answer.discard(origin["step"])
            raise DiamondError("the connection dropped before sbatch answered")

    async def recover_submit(self, job: Any) -> float:
        """The lost submit is found in its site's queue by its token (unless `not_yet`:
        looked for again in an hour)."""
        if self.not_yet:
            return 3600.0
        self.store.bind_native_id(job.token, str(next(self.ids)))
        self.store.apply_state(job.id, JobState.PENDING)
        return 0.0


class _Run(WorkflowRun):
    """The thirteenth sweep's run, on `_Placing`, telling the order of its calls."""

    ops: _Placing

    def before(self, first: tuple[str, str], then: tuple[str, str]) -> bool:
        return self.ops.calls.index(first) < self.ops.calls.index(then)


class _SlowCopy(HeldCopy, _Placing):
    """A copy that does not end until `done` is set (the workflow may be cancelled)."""


SIBLINGS = ("name: fan\nsteps:\n  - {name: prep, site: alpha, script: ./p}\n"
            + "".join(f"  - {{name: k{i}, needs: [prep], inputs: [{{from: prep, path: x}}], "
                      f"script: ./k}}\n" for i in range(3)))


async def _all_placing(ops: _Placing, names: set[str]) -> None:
    """Wait (at most 10 s) until exactly the steps `names` are being placed."""
    async def came() -> None:
        while ops.placing != names:
            ops.asked.clear()
            await ops.asked.wait()
    await asyncio.wait_for(came(), 10)


@asynccontextmanager
async def _stopped_while_placing(store: Store, text: str, names: set[str]
                                 ) -> AsyncIterator[tuple[_Placing, str, WorkflowEngine,
                                                          _Placing]]:
    """An engine running `text` stopped while the steps `names` are placed; then a second
    one (engine-2) on the same store, having resumed that workflow alone: the first's ops,
    the workflow's id, the second engine and its ops."""
    ops = _Placing(store)
    ops.hold = True
    eng = WorkflowEngine(ops)
    task = asyncio.ensure_future(eng.run(load(text)))
    await _all_placing(ops, names)
    [wid] = [w.id for w in store.unfinished_workflows()]
    await eng.close()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    again_ops = _Placing(store)
    async with next_engine(again_ops, [wid]) as again:
        yield ops, wid, again, again_ops


@asynccontextmanager
async def _cancelled_while_placing(store: Store, text: str, names: set[str]
                                   ) -> AsyncIterator[tuple[_Placing, WorkflowEngine, str]]:
    """A workflow of `text` cancelled while the steps `names` are placed, the placements
    then let end: its ops, its engine (open until the block ends) and its id."""
    ops = _Placing(store)
    ops.hold = True
    eng = WorkflowEngine(ops)
    try:
        task = asyncio.ensure_future(eng.run(load(text)))
        await _all_placing(ops, names)
        [wid] = [w.id for w in store.unfinished_workflows()]
        await eng.cancel(wid)
        ops.go.set()
        await asyncio.gather(task, return_exceptions=True)
        yield ops, eng, wid
    finally:
        await eng.close()


@asynccontextmanager
async def _cancelled_mid_copy(store: Store, text: str, upstream: str
                              ) -> AsyncIterator[tuple[_SlowCopy, Any]]:
    """A workflow of `text` cancelled while the file of `upstream` (ended) is copied, the
    copy then let end: its ops and the workflow as stored after (the engine open until the
    block ends)."""
    ops = _SlowCopy(store)
    eng = WorkflowEngine(ops)
    try:
        wid = await eng.run(load(text))
        rec = store.get_workflow(wid)
        store.apply_state(store.job_by_token(rec.step(upstream).token).id,
                          JobState.COMPLETED, exit_code=0)
        await eng.advance(wid)
        await asyncio.wait_for(ops.started.wait(), 10)
        await eng.cancel(wid)
        ops.done.set()
        await eng.advance(wid)
        yield ops, store.get_workflow(wid)
    finally:
        await eng.close()


@pytest.fixture
async def runs(tmp_path):
    """Runs on `_Placing` operations, where each auto step `lands` (step: site)."""
    async with run_maker(tmp_path, _Run) as make:
        async def placing(text: str, **lands: str) -> _Run:
            return await make(text, _Placing, lands=lands)

        yield placing


FEEDS = """\
    name: feeds
    steps:
      - {name: prep, site: alpha, script: ./prep, outputs: [x.h5]}
      - {name: fit, needs: [prep], inputs: [{from: prep, path: x.h5, size: 2048}],
         script: ./fit}
    """


# -- 1. fixed-site steps feeding `auto` ones ------------------------------------------------

async def test_fault_a_fixed_site_upstream_goes_in_before_its_auto_downstream_is_placed(runs):
    """Before, fit (auto) was placed first and prep's submit waited for that placement."""
    run = await runs(FEEDS)
    assert run.ops.calls == [("submit", "prep"), ("place", "fit"), ("submit", "fit")]
    assert run.ops.sources_for["fit"] == {"alpha": 2048}
    assert run.phases() == {"prep": "queued", "fit": "held"}


async def test_an_auto_step_placed_on_another_site_gets_its_file_after_its_upstream(runs):
    run = await runs(FEEDS)
    assert run.ops.transfers == []
    await run.end("prep")
    await _until(run.eng, run.wid, {"fit": "released"})
    assert [t[:2] for t in run.ops.transfers] == [
        (f"alpha:{run.job('prep').workdir}/x.h5", f"gamma:{run.job('fit').workdir}/x.h5")]
    await run.end("fit")
    assert run.state() == ("COMPLETED", None)
    assert run.submitted("prep") == ["alpha"] and run.submitted("fit") == ["gamma"]


async def test_an_auto_step_placed_beside_its_upstream_waits_by_afterok_and_copies_itself(
        runs):
    run = await runs(FEEDS, fit="alpha")
    assert run.ops.calls == [("submit", "prep"), ("place", "fit"), ("submit", "fit")]
    spec = run.ops.specs["fit"]
    assert [(d.kind, d.job_ids) for d in spec.dependencies] == [
        ("afterok", [run.job("prep").native_id])]
    assert f"{run.job('prep').workdir}/x.h5" in spec.script  # its own first lines copy it
    await run.end("prep")
    await run.end("fit")
    assert run.state()[0] == "COMPLETED" and run.ops.transfers == []


async def test_two_fixed_roots_on_two_sites_go_in_before_their_auto_join_is_placed(runs):
    run = await runs("""\
        name: join
        steps:
          - {name: a, site: alpha, script: ./a}
          - {name: b, site: beta, script: ./b}
          - {name: j, needs: [a, b], inputs: [{from: a, path: a.out, size: 10},
             {from: b, path: b.out, size: 20}], script: ./j}
        """)
    assert run.before(("submit", "a"), ("place", "j"))
    assert run.before(("submit", "b"), ("place", "j"))
    assert run.ops.sources_for["j"] == {"alpha": 10, "beta": 20}
    await run.end("a")
    assert run.phases()["j"] == "held"  # b's file is not there yet
    await run.end("b")
    await _until(run.eng, run.wid, {"j": "released"})
    assert len(run.ops.transfers) == 2


async def test_a_fan_in_of_40_fixed_steps_onto_an_auto_step_places_it_once_after_all(runs):
    roots = [f"r{i:02d}" for i in range(40)]
    text = ("name: fanin\nsteps:\n"
            + "".join(f"  - {{name: {r}, site: {SITES[i % 2]}, script: ./r}}\n"
                      for i, r in enumerate(roots))
            + f"  - {{name: sum, needs: [{', '.join(roots)}], script: ./sum}}\n")
    run = await runs(text)
    places = [c for c in run.ops.calls if c[0] == "place"]
    assert places == [("place", "sum")]
    assert all(run.before(("submit", r), ("place", "sum")) for r in roots)
    assert len(run.ops.submits) == 41


async def test_auto_siblings_fed_by_one_fixed_step_are_placed_side_by_side(runs, tmp_path):
    store = Store(tmp_path / "side.sqlite")
    ops = _Placing(store)
    ops.hold = True
    eng = WorkflowEngine(ops)
    try:
        task = asyncio.ensure_future(eng.run(load(SIBLINGS)))
        await _all_placing(ops, {"k0", "k1", "k2"})
        assert [c for c in ops.calls if c[0] == "submit"] == [("submit", "prep")]
        ops.go.set()
        wid = await asyncio.wait_for(task, 10)
        assert {s.name: s.phase for s in store.get_workflow(wid).steps} == {
            "prep": "queued", "k0": "held", "k1": "held", "k2": "held"}
    finally:
        await eng.close()
        store.close()


async def test_a_fan_out_of_200_auto_steps_from_one_fixed_step_runs_each_once(runs):
    kids = [f"k{i:03d}" for i in range(200)]
    text = ("name: wide\nsteps:\n  - {name: prep, site: beta, script: ./p}\n"
            + "".join(f"  - {{name: {k}, needs: [prep], script: ./k}}\n" for k in kids))
    run = await runs(text)
    assert run.ops.calls[0] == ("submit", "prep")
    assert sorted(n for n, _, _ in run.ops.submits) == sorted(["prep", *kids])
    await run.end("prep")
    await _until(run.eng, run.wid, {k: "released" for k in kids})
    rec = run.store.get_workflow(run.wid)
    for k in kids:
        run.store.apply_state(run.store.job_by_token(rec.step(k).token).id,
                              JobState.COMPLETED, exit_code=0)
    await run.eng.advance(run.wid)
    assert run.state()[0] == "COMPLETED" and len(run.ops.submits) == 201


# -- 2. `auto` steps feeding fixed-site ones, and mixed shapes ------------------------------

async def test_a_fixed_step_fed_by_an_auto_one_goes_in_once_its_site_is_known(runs):
    run = await runs("""\
        name: reverse
        steps:
          - {name: gen, script: ./gen}
          - {name: post, site: beta, needs: [gen], inputs: [{from: gen, path: g.out}],
             script: ./post}
        """)
    assert run.ops.calls == [("place", "gen"), ("submit", "gen"), ("submit", "post")]
    assert run.phases() == {"gen": "queued", "post": "held"}
    await run.end("gen")
    await _until(run.eng, run.wid, {"post": "released"})
    assert [t[:2] for t in run.ops.transfers] == [
        (f"gamma:{run.job('gen').workdir}/g.out", f"beta:{run.job('post').workdir}/g.out")]


async def test_a_chain_fixed_auto_fixed_across_three_sites_runs_in_order(runs):
    run = await runs("""\
        name: sandwich
        steps:
          - {name: a, site: alpha, script: ./a}
          - {name: b, needs: [a], inputs: [{from: a, path: a.out}], script: ./b}
          - {name: c, site: beta, needs: [b], inputs: [{from: b, path: b.out}], script: ./c}
        """)
    assert run.ops.calls == [("submit", "a"), ("place", "b"), ("submit", "b"),
                             ("submit", "c")]
    await run.end("a")
    await _until(run.eng, run.wid, {"b": "released"})
    await run.end("b")
    await _until(run.eng, run.wid, {"c": "released"})
    await run.end("c")
    assert run.state()[0] == "COMPLETED"
    assert [t[1].split(":")[0] for t in run.ops.transfers] == ["gamma", "beta"]


async def test_a_diamond_of_fixed_and_auto_branches_queues_every_fixed_step_first(runs):
    """top (alpha) -> left (auto), right (beta) -> join (alpha): top and right go in before
    left is placed; join, fed by left whose site is not known yet, after it."""
    run = await runs("""\
        name: diamond
        steps:
          - {name: top, site: alpha, script: ./top}
          - {name: left, needs: [top], script: ./left}
          - {name: right, site: beta, needs: [top], script: ./right}
          - {name: join, site: alpha, needs: [left, right], script: ./join}
        """)
    assert run.before(("submit", "top"), ("place", "left"))
    assert run.before(("submit", "right"), ("place", "left"))
    assert run.before(("place", "left"), ("submit", "join"))
    for name in ("top", "right", "left", "join"):
        await _until(run.eng, run.wid, {})
        await run.end(name)
    assert run.state()[0] == "COMPLETED"
    assert all(len(run.submitted(n)) == 1 for n in ("top", "left", "right", "join"))


async def test_an_auto_step_reading_a_grandparents_file_counts_its_site(runs):
    run = await runs("""\
        name: gp
        steps:
          - {name: gp, site: beta, script: ./gp}
          - {name: p, site: alpha, needs: [gp], script: ./p}
          - {name: c, needs: [p], inputs: [{from: gp, path: g.h5, size: 7},
             {from: p, path: p.h5, size: 3}], script: ./c}
        """)
    assert run.ops.sources_for["c"] == {"beta": 7, "alpha": 3}
    await run.end("gp")
    await run.end("p")
    await _until(run.eng, run.wid, {"c": "released"})
    assert sorted(t[0].split(":")[0] for t in run.ops.transfers) == ["alpha", "beta"]


async def test_without_queue_ahead_the_auto_step_is_placed_after_its_upstream_ended(runs):
    run = await runs("queue_ahead: false\n" + FEEDS.replace("    ", "", 1).replace(
        "\n    ", "\n"))
    assert run.ops.calls == [("submit", "prep")]
    await run.end("prep")
    assert run.ops.calls == [("submit", "prep"), ("place", "fit"), ("submit", "fit")]


async def test_a_gang_of_an_auto_and_a_fixed_member_fed_by_a_fixed_step_starts_together(runs):
    run = await runs("""\
        name: esm
        steps:
          - {name: prep, site: alpha, script: ./prep}
          - {name: ocean, needs: [prep], gang: esm, script: ./o}
          - {name: atmos, site: beta, needs: [prep], gang: esm, script: ./a}
        """)
    assert run.ops.calls[0] == ("submit", "prep")
    assert {n for n, _, held in run.ops.submits if held} == {"ocean", "atmos"}
    assert run.ops.releases == []
    await run.end("prep")
    await _until(run.eng, run.wid, {"ocean": "released", "atmos": "released"})
    assert len(run.ops.releases) == 2


class _NoGates(_Placing):
    def supports_gate(self, site: str) -> bool:
        return False


async def test_without_gates_the_auto_step_goes_in_held_and_is_released_after_its_copy(
        tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        ops = _NoGates(store)
        eng = WorkflowEngine(ops)
        try:
            wid = await eng.run(load(FEEDS))
            assert ops.calls == [("submit", "prep"), ("place", "fit"), ("submit", "fit")]
            assert ops.submits[1] == ("fit", "gamma", True)  # held by the scheduler
            rec = store.get_workflow(wid)
            store.apply_state(store.job_by_token(rec.step("prep").token).id,
                              JobState.COMPLETED, exit_code=0)
            await eng.advance(wid)
            await _until(eng, wid, {"fit": "released"})
            assert len(ops.transfers) == 1 and len(ops.releases) == 1
        finally:
            await eng.close()


async def test_a_step_among_two_sites_fed_by_a_fixed_step_is_placed_among_them_only(runs):
    run = await runs(FEEDS.replace("{name: fit,", "{name: fit, site: [alpha, beta],"),
                     fit="beta")
    assert run.ops.calls == [("submit", "prep"), ("place", "fit"), ("submit", "fit")]
    assert "gamma" in run.ops.excluded["fit"][0]
    assert run.submitted("fit") == ["beta"]


async def test_an_input_in_other_alphabets_reaches_an_auto_step_by_its_exact_name(runs):
    run = await runs("""\
        name: unicode
        steps:
          - {name: mesure, site: alpha, script: ./m, outputs: ["données/été 1.csv"]}
          - {name: analyse, needs: [mesure], script: ./a,
             inputs: [{from: mesure, path: "données/été 1.csv", as: "入力/データ.csv"}]}
        """)
    await run.end("mesure")
    await _until(run.eng, run.wid, {"analyse": "released"})
    assert [t[:2] for t in run.ops.transfers] == [
        (f"alpha:{run.job('mesure').workdir}/données/été 1.csv",
         f"gamma:{run.job('analyse').workdir}/入力/データ.csv")]
    assert "'入力/データ.csv'" in run.ops.specs["analyse"].script


async def test_a_workflow_cancelled_mid_copy_to_a_fixed_step_fed_by_an_auto_one(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        async with _cancelled_mid_copy(store, """\
                name: reverse
                steps:
                  - {name: gen, script: ./gen}
                  - {name: post, site: beta, needs: [gen], inputs: [{from: gen, path: g}],
                     script: ./post}
                """, "gen") as (ops, rec):
            assert (rec.state, rec.reason) == ("CANCELLED", "cancelled by request")
            assert rec.step("gen").phase == "done" and rec.step("post").phase == "cancelled"
            assert ops.releases == [] and all(j.state.terminal
                                              for j in store.list_jobs(limit=None))


# -- 3. placement refused, retries ------------------------------------------------------------

async def test_an_auto_step_no_site_can_take_fails_the_workflow_and_cancels_its_upstream(runs,
                                                                                        tmp_path):
    store = Store(tmp_path / "refused.sqlite")
    ops = _Placing(store)
    ops.refuse_place = "fit"
    eng = WorkflowEngine(ops)
    try:
        wid = await eng.run(load(FEEDS))
        rec = store.get_workflow(wid)
        assert rec.state == "FAILED"
        assert rec.reason == ("step 'fit' cannot be placed: no site has 4 A100 GPUs free in "
                              "one node")
        prep = store.job_by_token(rec.step("prep").token)
        assert prep.id in ops.cancels  # nothing of it left in a queue
        assert [n for n, _, _ in ops.submits] == ["prep"]
    finally:
        await eng.close()
        store.close()


async def test_an_auto_step_failing_is_placed_again_elsewhere_its_upstream_left_alone(runs):
    run = await runs(FEEDS.replace("script: ./fit}", "retries: 1, "
                                   "on_failure: resubmit-elsewhere, script: ./fit}"))
    await run.end("prep")
    await _until(run.eng, run.wid, {"fit": "released"})
    await run.end("fit", JobState.FAILED)
    # placed again leaving gamma out: on alpha, beside prep's ended job, its first lines
    # copy prep's file from there
    await _until(run.eng, run.wid, {"fit": "queued"})
    assert run.submitted("prep") == ["alpha"]
    assert run.submitted("fit") == ["gamma", "alpha"]
    assert "gamma" in run.ops.excluded["fit"][-1]
    assert f"{run.job('prep').workdir}/x.h5" in run.ops.specs["fit"].script
    await run.end("fit")
    assert run.state()[0] == "COMPLETED"


# -- 4. engines stopped in the middle ------------------------------------------------------

async def test_an_engine_stopped_while_the_auto_step_is_placed_loses_and_repeats_nothing(
        tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        async with _stopped_while_placing(store, FEEDS, {"fit"}) as (
                ops, wid, again, again_ops):
            assert [n for n, _, _ in ops.submits] == ["prep"]
            await _until(again, wid, {"prep": "queued", "fit": "held"})
            assert again_ops.calls == [("place", "fit"), ("submit", "fit")]


async def test_an_upstream_whose_submit_answer_was_lost_is_found_not_sent_again(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        ops = _Placing(store)
        ops.lose_answer = {"prep"}
        ops.not_yet = True
        eng = WorkflowEngine(ops)
        try:
            wid = await eng.run(load(FEEDS))
            assert store.get_workflow(wid).step("prep").phase == "submitting"
            assert ("place", "fit") not in ops.calls  # prep's job not known yet
        finally:
            await eng.close()
        again_ops = _Placing(store)
        async with next_engine(again_ops, [wid]) as again:
            await _until(again, wid, {"prep": "queued", "fit": "held"})
            assert [c for c in again_ops.calls if c[1] == "prep"] == []  # found, not resent
            assert again_ops.calls == [("place", "fit"), ("submit", "fit")]


async def test_an_engine_stopped_while_siblings_are_placed_side_by_side_queues_each_once(
        tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        async with _stopped_while_placing(store, SIBLINGS, {"k0", "k1", "k2"}) as (
                ops, wid, again, again_ops):
            await _until(again, wid, {"k0": "held", "k1": "held", "k2": "held"})
            assert [n for n, _, _ in ops.submits] == ["prep"]  # not sent again
            assert sorted(n for n, _, _ in again_ops.submits) == ["k0", "k1", "k2"]


# -- 5. cancels in the middle -----------------------------------------------------------------

async def test_fault_a_workflow_cancelled_while_its_auto_step_is_placed_queues_nothing(
        tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        async with _cancelled_while_placing(store, FEEDS, {"fit"}) as (_, eng, wid):
            await eng.advance(wid)
            rec = store.get_workflow(wid)
            assert rec.state == "CANCELLED"
            live = [j for j in store.list_jobs(limit=None) if not j.state.terminal]
            assert live == [], [(j.id, (j.origin or {}).get("step")) for j in live]


async def test_a_workflow_cancelled_while_siblings_are_placed_leaves_no_job_queued(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        async with _cancelled_while_placing(store, SIBLINGS, {"k0", "k1", "k2"}) as (
                ops, _, wid):
            rec = store.get_workflow(wid)
            assert rec.state == "CANCELLED"
            assert {s.name: s.phase for s in rec.steps} == {
                "prep": "cancelled", "k0": "cancelled", "k1": "cancelled", "k2": "cancelled"}
            assert [n for n, _, _ in ops.submits] == ["prep"]
            assert all(j.state.terminal for j in store.list_jobs(limit=None))


async def test_fault_an_engine_keeps_no_mark_of_the_workflows_it_stopped(tmp_path):
    """Before, each workflow an engine cancelled or failed stayed in its set of workflows
    being stopped for as long as the engine ran: a server's grew by one a workflow. Now the
    mark goes when the workflow's end is written; a cancel during a placement still queues
    nothing after it (the end, read from the store, is what the placement finds)."""
    with Store(tmp_path / "s.sqlite") as store:
        async with _cancelled_while_placing(store, FEEDS, {"fit"}) as (ops, eng, placed):
            assert eng._stopping == set()
            assert [n for n, _, _ in ops.submits] == ["prep"]  # fit was not submitted
            ops.hold = False
            ended = {placed: "CANCELLED"}
            for _ in range(3):
                wid = await eng.run(load(FEEDS))
                await eng.cancel(wid)
                ended[wid] = "CANCELLED"
            ops.refuse_place = "fit"
            for _ in range(2):
                ended[await eng.run(load(FEEDS))] = "FAILED"
            assert {w: store.get_workflow(w).state for w in ended} == ended
            assert eng._stopping == set()
            assert all(j.state.terminal for j in store.list_jobs(limit=None))


async def _settled(eng: WorkflowEngine) -> None:
    """Until no advance the engine was asked for (by its jobs' events) is left to run."""
    while eng._runs:
        await asyncio.gather(*eng._runs, return_exceptions=True)


def _kept(eng: WorkflowEngine, store: Store, wids: Collection[str]) -> dict[str, int]:
    """How many entries each of the engine's maps and sets keeps for the workflows `wids`
    (by the workflow's id, a step's key, a step job's id or token)."""
    names = set(wids)
    for wid in wids:
        for st in store.get_workflow(wid).steps:
            names.add(f"{wid}/{st.name}")
            if st.token and (job := store.job_by_token(st.token)) is not None:
                names |= {st.token, job.id, provisional_id(job.site, st.token)}
    kept = {}
    for attr, value in vars(eng).items():
        if isinstance(value, dict):
            n = sum(1 for k, v in value.items() if k in names or (isinstance(v, str)
                                                                  and v in names))
        elif isinstance(value, set):
            n = sum(1 for k in value if k in names)
        else:
            continue
        if n:
            kept[attr] = n
    return kept


async def test_fault_an_engine_keeps_nothing_of_the_workflows_that_ended(tmp_path):
    """Before, every workflow an engine advanced kept its lock in the engine for as long as
    the engine ran, and each of its step jobs an entry routing the job's events to it (the
    followed ones one more): a server's grew with every workflow. Now the lock goes once no
    advance holds it, and the rest with the workflow's end: nothing is left of a workflow
    completed, cancelled (during a placement too) or failed."""
    with Store(tmp_path / "s.sqlite") as store:
        async with _cancelled_while_placing(store, FEEDS, {"fit"}) as (ops, eng, placed):
            ops.hold = False
            ended: dict[str, str] = {placed: "CANCELLED"}
            for _ in range(2):
                run = WorkflowRun(store, ops, eng)
                ended[await run.start(FEEDS)] = "COMPLETED"
                await run.finish("prep", "fit")
            for _ in range(2):
                wid = await eng.run(load(FEEDS))
                await eng.cancel(wid)
                ended[wid] = "CANCELLED"
            ops.refuse_place = "fit"
            ended[await eng.run(load(FEEDS))] = "FAILED"
            await _settled(eng)
            assert {w: store.get_workflow(w).state for w in ended} == ended
            assert _kept(eng, store, ended) == {}
            for wid in ended:  # an advance of an ended workflow changes nothing, keeps nothing
                await eng.advance(wid)
            assert {w: store.get_workflow(w).state for w in ended} == ended
            assert _kept(eng, store, ended) == {}


async def test_an_advance_asked_while_one_runs_follows_it_and_the_lock_goes_after(tmp_path):
    """The lock is kept while an advance holds it: one asked meanwhile does not run beside
    it but right after it, in the same hold; the lock goes only once both are done."""
    with Store(tmp_path / "s.sqlite") as store:
        ops = _Placing(store)
        ops.hold = True
        eng = WorkflowEngine(ops)
        running, most, rounds = [0], [0], [0]
        real_advance = eng._advance

        async def counted(wid: str) -> None:
            running[0] += 1
            most[0] = max(most[0], running[0])
            rounds[0] += 1
            try:
                await real_advance(wid)
            finally:
                running[0] -= 1
        eng._advance = counted  # type: ignore[method-assign]
        try:
            first = asyncio.ensure_future(eng.run(load(FEEDS)))
            await _all_placing(ops, {"fit"})
            [wid] = [w.id for w in store.unfinished_workflows()]
            lock = eng._locks[wid]
            await eng.advance(wid)  # returns at once: asked again of the running one
            assert lock.locked() and eng._locks == {wid: lock} and rounds == [1]
            ops.go.set()
            await first
            await _settled(eng)
            assert rounds[0] >= 2 and most == [1]
            assert [n for n, _, _ in ops.submits] == ["prep", "fit"]
            assert eng._locks == {}
        finally:
            await eng.close()


async def test_an_advance_asked_of_one_cancelled_is_handed_on_not_kept(tmp_path):
    """Before, an advance asked while another ran stayed marked in the engine when the
    running one was cancelled (its caller gone): the mark was kept for as long as the engine
    ran, and the ask was lost. Now the ask goes with the lock and a fresh advance does it;
    closing the engine hands nothing on."""
    with Store(tmp_path / "s.sqlite") as store:
        ops = _Placing(store)
        ops.hold = True
        eng = WorkflowEngine(ops)
        try:
            first = asyncio.ensure_future(eng.run(load(FEEDS)))
            await _all_placing(ops, {"fit"})
            [wid] = [w.id for w in store.unfinished_workflows()]
            await eng.advance(wid)  # asked of the running one
            assert eng._again == {wid}
            ops.asked.clear()
            first.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await first
            assert eng._again == set()
            await asyncio.wait_for(ops.asked.wait(), 10)  # the handed-on advance places fit
            assert ops.calls.count(("place", "fit")) == 2
            ops.go.set()
            await _settled(eng)
            assert [n for n, _, _ in ops.submits] == ["prep", "fit"]
            assert eng._again == set() and eng._locks == {}
            ops.go.clear()
            ops.asked.clear()
            second = asyncio.ensure_future(eng.run(load(FEEDS)))
            await asyncio.wait_for(ops.asked.wait(), 10)
            [wid] = list(eng._locks)
            await eng.advance(wid)
            assert eng._again == {wid}
        finally:
            await eng.close()
        second.cancel()  # after the close (a face's call outliving the engine): not handed on
        with contextlib.suppress(asyncio.CancelledError):
            await second
        assert eng._again == set() and eng._locks == {} and not eng._runs


async def test_a_workflow_cancelled_mid_copy_never_releases_the_auto_step(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        async with _cancelled_mid_copy(store, FEEDS, "prep") as (ops, rec):
            assert rec.state == "CANCELLED" and ops.releases == []
            fit = store.job_by_token(rec.step("fit").token)
            assert fit.id in ops.cancels and rec.step("fit").phase == "cancelled"
            assert all(j.state.terminal for j in store.list_jobs(limit=None))


# -- 6. mistakes in the file ----------------------------------------------------------------

@pytest.mark.parametrize("text, said", [
    ("name: w\nsteps:\n  - {name: a, site: alpha, needs: [b], script: x}\n"
     "  - {name: b, needs: [a], script: y}\n", "workflow 'w' has a cycle: a -> b -> a"),
    ("name: w\nsteps:\n  - {name: a, site: alpha, script: x}\n"
     "  - {name: b, needs: [zz], script: y}\n", "step 'b' needs unknown step 'zz' (steps: a, b)"),
    ("name: w\nsteps:\n  - {name: a, site: auto, needs: [a], script: x}\n",
     "step 'a' needs itself (a cycle)"),
    ("name: w\nsteps:\n  - {name: a, site: alpha, script: x}\n  - {name: a, script: y}\n",
     "step name 'a' is used twice (steps[0] and steps[1])"),
    ("name: w\nsteps:\n  - {name: a, site: alpha, script: x}\n"
     "  - {name: b, needs: [a], site: [auto], script: y}\n",
     "auto in a list of sites: write site: auto alone"),
    ("name: w\nsteps:\n  - {name: a, site: alpha, script: x}\n"
     "  - {name: b, inputs: [{from: a, path: x}], script: y}\n",
     "inputs[0] is from 'a', which is not upstream of it (add it to needs"),
])
def test_mistakes_around_auto_steps_are_named(text, said):
    msg = refused(text)
    assert said in msg, msg


def test_a_step_named_in_another_alphabet_is_refused_naming_the_letter():
    msg = refused("name: w\nsteps:\n  - {name: a, site: alpha, script: x}\n"
                  "  - {name: 解析, needs: [a], script: y}\n")
    assert "'解析' is not a valid name" in msg and "ASCII only" in msg, msg


def test_one_step_too_many_is_refused_saying_the_most():
    text = ("name: w\nsteps:\n  - {name: root, site: alpha, script: x}\n"
            + "".join(f"  - {{name: s{i}, needs: [root], script: x}}\n" for i in range(2000)))
    assert refused(text) == ("the workflow: steps: 2001 steps; a workflow holds at most "
                             "2000 steps")


def test_an_auto_step_written_with_and_without_site_auto_is_the_same():
    a = load(FEEDS).step("fit")
    b = load(FEEDS.replace("{name: fit,", "{name: fit, site: auto,")).step("fit")
    assert a.is_auto and b.is_auto


def test_the_sites_of_this_sweep_are_the_helpers(tmp_path: Path):
    assert SITES == ["alpha", "beta", "gamma"]
