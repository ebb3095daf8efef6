"""Queue-ahead behind a gate: a cross-site step waits in its site's queue behind a small held
"gate" job (afterany), and the engine cancels the gate once the step's inputs have arrived,
so the step keeps the queue place it got at submission. The engine runs on a real store;
the operations below it record what they were asked (the scheduler side is the test bed's,
in tests/test_workflow.py and benchmarks/workflow.py); a lost submit is recovered by the real
journal, on a local Slurm site whose queue is written here."""

from __future__ import annotations

import asyncio
import contextlib
import textwrap
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from local_slurm import LocalSlurmQueue
from workflow_ops import RecordedOps

from diamond_jupyter.journal import Journal
from diamond_jupyter.model import BadInput, DiamondError, Job, JobSpec, JobState, utcnow
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.engine import Estimate, WorkflowEngine
from diamond_jupyter.workflow.model import load_workflow

SITES = ("alpha", "gamma", "torque")

TEXT = textwrap.dedent("""\
    name: gated
    steps:
      - name: prep
        site: alpha
        script: "#!/bin/bash\\nhead -c 10 /dev/urandom > out.bin\\n"
      - name: train
        site: {site}
        needs: [prep]
        inputs: [{{from: prep, path: out.bin}}]
        script: "#!/bin/bash\\nsha256sum out.bin\\n"
    """)


class Ops(RecordedOps):
    """What the engine may ask of the layers below the facade, recorded."""

    sites = SITES

    def __init__(self, store: Store, queue: LocalSlurmQueue, settle_s: float) -> None:
        super().__init__(store)
        self.queue = queue  # gamma's, where the token of a lost submit is looked up
        self.journal = Journal(store, {queue.site.name: queue.site}, poll_interval_s=3600,
                               min_poll_s=3600, unsure_submit_settle_s=settle_s)
        self.submits: list[dict[str, Any]] = []
        self.releases: list[str] = []
        self.unsure: set[str] = set()  # the next submit of these steps loses its answer
        self.late: dict[str, float] = {}  # step -> its lost submit reaches the queue this late
        self.placed: list[Any] = []  # the inputs' ready time of each `auto` placement
        self.expectations: dict[str, tuple[Any, Any]] = {}  # step -> (end, runtime)
        self.expected_for: dict[str, Any] = {}  # step -> the inputs' ready time it was given

    def supports_gate(self, site: str) -> bool:
        return site != "torque"

    async def place(self, spec: JobSpec, sources: dict, exclude: set,
                    ready_at: Any = None) -> Estimate:
        self.placed.append(ready_at)
        return await self.expected(spec, "gamma", sources, ready_at)

    async def expected(self, spec: JobSpec, site: str, sources: dict, ready_at: Any
                       ) -> Estimate:
        """What `expectations` says of the step (as placement on its site would), given
        when its inputs exist; else nothing."""
        self.expected_for[spec.name] = ready_at
        return Estimate(site, *self.expectations.get(spec.name, (None, None)))

    def submitted(self, spec: JobSpec, site: str, *, hold: bool, token: str,
                  origin: dict[str, Any]) -> None:
        if not origin.get("gate") and origin["step"] in self.unsure:
            self.unsure.discard(origin["step"])
            raise DiamondError("the connection dropped before the submit answered")
        if not origin.get("gate") and origin["step"] in self.late:
            asyncio.get_running_loop().call_later(self.late.pop(origin["step"]), self.queue.add,
                                                  str(next(self.ids)), token, spec.name)
            self.submits.append({"site": site, "hold": hold, "origin": origin, "spec": spec,
                                 "token": token})
            raise DiamondError("the engine lost the answer; the command is still running")
        self.submits.append({"site": site, "hold": hold, "origin": origin, "spec": spec,
                             "token": token})

    async def release(self, job: Job) -> None:
        self.releases.append(job.id)

    async def recover_submit(self, job: Job) -> float:
        return await self.journal.recover_intent(job)

    async def transfer(self, src: str, dst: str, *, transfer_id: str, job_id: str) -> Any:
        return SimpleNamespace(id=transfer_id, src=src, state="SUCCEEDED", bytes=10, error=None)

    def of(self, step: str, *, gate: bool = False) -> list[dict[str, Any]]:
        return [s for s in self.submits if s["origin"]["step"] == step
                and bool(s["origin"].get("gate")) == gate]


async def engine_with(ops_class: type, tmp_path):
    # a lost submit found nowhere is closed at once
    ops = ops_class(Store(tmp_path / "store.sqlite"), LocalSlurmQueue(tmp_path, "gamma"), 0.0)
    eng = WorkflowEngine(ops)
    yield eng, ops
    await eng.close()
    await ops.journal.stop()


@pytest.fixture
async def engine(tmp_path):
    async for pair in engine_with(Ops, tmp_path):
        yield pair


async def phase(eng: WorkflowEngine, wid: str, step: str, want: str) -> None:
    async def reached() -> None:
        while eng.store.get_workflow(wid).step(step).phase != want:
            eng.changed.clear()
            await eng.changed.wait()
    await asyncio.wait_for(reached(), 10)


async def complete(eng: WorkflowEngine, ops: Ops, step: str, wid: str) -> None:
    job_id = next(s for s in ops.store.list_jobs(limit=None)
                  if (s.origin or {}).get("step") == step and not (s.origin or {}).get("gate"))
    ops.store.apply_state(job_id.id, JobState.COMPLETED, exit_code=0)
    await eng.advance(wid)


async def test_a_cross_site_step_waits_behind_a_gate_that_is_cancelled_when_inputs_land(
        engine):
    eng, ops = engine
    wid = await eng.run(load_workflow(TEXT.format(site="gamma"), sites=SITES))
    [gate], [train] = ops.of("train", gate=True), ops.of("train")
    assert gate["site"] == train["site"] == "gamma"
    assert gate["hold"] is True and train["hold"] is False  # the step itself is not held
    gate_job = ops.store.job_by_token(gate["token"])
    deps = train["spec"].dependencies
    assert [(d.kind, d.job_ids) for d in deps] == [("afterany", [gate_job.native_id])]
    assert "has not arrived" in train["spec"].script  # a gate lifted early fails the step
    assert eng.store.get_workflow(wid).step("train").phase == "held"
    await complete(eng, ops, "prep", wid)
    await phase(eng, wid, "train", "released")
    assert ops.cancels == [gate_job.id] and ops.releases == []
    evs = [e for e in ops.store.events_since(0, kinds=["workflow.step"], limit=None)
           if e.data["step"] == "train"]
    submitted = next(e for e in evs if "held" in e.data)
    assert submitted.data["held"] is True and submitted.data["gate"] == gate_job.id
    phases = [e.data["phase"] for e in evs]
    assert phases.index("moving") < phases.index("ready") < phases.index("released")


CHAIN = textwrap.dedent("""\
    name: chain
    steps:
      - name: prep
        site: alpha
        script: "#!/bin/bash\\nhead -c 10 /dev/urandom > out.bin\\n"
      - name: train
        site: gamma
        needs: [prep]
        inputs: [{from: prep, path: out.bin}]
        script: "#!/bin/bash\\nsha256sum out.bin > sum.txt\\n"
      - name: analyse
        needs: [train]
        inputs: [{from: train, path: sum.txt}]
        script: "#!/bin/bash\\ncat sum.txt\\n"
    """)


async def test_a_queue_ahead_step_is_placed_for_when_its_inputs_exist(engine):
    """prep is expected to end in 100 s. train, expected at its submit to end in 30 s on
    gamma alone, needs prep's output and runs 20 s: it ends at 120 s at the earliest.
    train, gated on prep alone, is queued before prep has a job; its estimate, asked beside
    its submit, waits for prep's (asked beside prep's submit) and is given prep's end;
    analyse, placed `auto` while both still wait, is placed for 120 s; once train runs, its
    end is its start plus its runtime."""
    eng, ops = engine
    t0 = utcnow()
    ops.expectations = {"prep": (t0 + timedelta(seconds=100), 100.0),
                        "train": (t0 + timedelta(seconds=30), 20.0)}
    wid = await eng.run(load_workflow(CHAIN, sites=SITES))
    assert len(ops.of("analyse")) == 1
    assert ops.expected_for["prep"] is None
    assert ops.expected_for["train"] == t0 + timedelta(seconds=100)
    [ready_at] = ops.placed
    assert abs((ready_at - t0).total_seconds() - 120) < 1
    assert ops.expected_for["analyse"] == ready_at
    rec = eng.store.get_workflow(wid)
    train = ops.store.job_by_token(rec.step("train").token)
    started = utcnow() + timedelta(seconds=300)  # its clock: later than any "now" here
    ops.store.apply_state(train.id, JobState.RUNNING, started_at=started)
    ready = eng._inputs_ready_at(eng.store.get_workflow(wid), load_workflow(CHAIN, sites=SITES),
                                 "analyse")
    assert ready == started + timedelta(seconds=20)


async def test_without_gates_the_step_is_held_and_released(engine):
    eng, ops = engine
    wid = await eng.run(load_workflow(TEXT.format(site="torque"), sites=SITES))
    assert ops.of("train", gate=True) == []
    [train] = ops.of("train")
    assert train["hold"] is True and train["spec"].dependencies == []
    await complete(eng, ops, "prep", wid)
    await phase(eng, wid, "train", "released")
    assert ops.releases == [ops.store.job_by_token(train["token"]).id] and ops.cancels == []


async def test_cancelling_the_workflow_cancels_the_gate(engine):
    eng, ops = engine
    wid = await eng.run(load_workflow(TEXT.format(site="gamma"), sites=SITES))
    [gate] = ops.of("train", gate=True)
    await eng.cancel(wid)
    gate_job = ops.store.job_by_token(gate["token"])
    assert gate_job.id in ops.cancels and gate_job.state == JobState.CANCELLED
    assert eng.store.get_workflow(wid).state == "CANCELLED"


async def test_a_step_submit_lost_after_its_gate_reuses_that_gate(engine):
    eng, ops = engine
    ops.unsure.add("train")
    # train goes in first (before prep has a job) and its answer is lost; the same advance
    # finds it never reached the queue once prep is submitted, and submits it again
    wid = await eng.run(load_workflow(TEXT.format(site="gamma"), sites=SITES))
    assert eng.store.get_workflow(wid).step("train").phase == "held"
    await eng.advance(wid)
    [gate], [train] = ops.of("train", gate=True), ops.of("train")
    gate_job = ops.store.job_by_token(gate["token"])
    assert train["spec"].dependencies[0].job_ids == [gate_job.native_id]
    assert ops.cancels == []


@pytest.mark.parametrize("settle_s, train_jobs", [(0.0, 2), (1.0, 1)])
async def test_a_lost_submit_that_reaches_the_queue_late_is_found_not_sent_twice(
        tmp_path, settle_s, train_jobs):
    """The submit command outlives the engine that lost its answer and queues the job 0.3 s
    later. Looked up at once, the job is not there yet and the step is sent again: two runs.
    After the settle time the token finds it: one."""
    ops = Ops(Store(tmp_path / "store.sqlite"), LocalSlurmQueue(tmp_path, "gamma"), settle_s)
    ops.late["train"] = 0.3
    eng = WorkflowEngine(ops)
    try:
        wid = await eng.run(load_workflow(TEXT.format(site="gamma"), sites=SITES))
        # train goes in before prep; it is looked up once prep is submitted, in the same
        # advance: at once (not found, sent again) or after the settle time
        want = "held" if settle_s == 0 else "submitting"
        assert eng.store.get_workflow(wid).step("train").phase == want
        await eng.advance(wid)  # at once, as a restarted engine or the next event would
        await phase(eng, wid, "train", "held")
        assert len(ops.of("train")) == train_jobs  # submit commands that reached the queue
        held = ops.store.job_by_token(eng.store.get_workflow(wid).step("train").token)
        assert held.native_id and held.token == ops.of("train")[-1]["token"]
    finally:
        await eng.close()
        await ops.journal.stop()


async def test_a_site_that_cannot_be_read_gives_a_step_no_estimate():
    """The facade's adapter: placement on the step's site raising a DiamondError (the site
    unreachable) leaves the step's expected end and runtime unknown; the submit decides."""
    from types import SimpleNamespace

    from diamond_jupyter.federation_workflow import _Ops

    async def stage_data(spec):
        return SimpleNamespace(bandwidth_mbps=1000.0)

    async def place(spec, **kw):
        raise DiamondError("gamma: connection refused")

    fed = SimpleNamespace(store=None, stage_data=stage_data, place=place)
    got = await _Ops(fed).expected(JobSpec(name="train", command="true"), "gamma", {}, None)
    assert got == Estimate("gamma", None, None)


class Filling(Ops):
    """Placement by a table of expected ends per site (`ends`), the best site not excluded."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.ends: dict[str, float] = {}  # site -> seconds from now to the step's end

    async def expected(self, spec: JobSpec, site: str, sources: dict, ready_at: Any
                       ) -> Estimate:
        if spec.name != "analyse" or site not in self.ends:
            return await super().expected(spec, site, sources, ready_at)
        return Estimate(site, utcnow() + timedelta(seconds=self.ends[site]), 5.0)

    async def place(self, spec: JobSpec, sources: dict, exclude: set,
                    ready_at: Any = None) -> Estimate:
        self.placed.append(ready_at)
        best = min((s for s in self.ends if s not in exclude), key=self.ends.__getitem__)
        return await self.expected(spec, best, sources, ready_at)


@pytest.fixture
async def filling(tmp_path):
    async for pair in engine_with(Filling, tmp_path):
        yield pair


def analyse_events(ops: Ops) -> list[Any]:
    return [e for e in ops.store.events_since(0, kinds=["workflow.step"], limit=None)
            if e.data["step"] == "analyse"]


async def test_a_queued_ahead_step_moves_when_its_site_filled_before_its_inputs_existed(
        filling):
    """analyse is placed on alpha while train runs on gamma (alpha ends it first). When
    train has ended, alpha is full (200 s) and gamma would end it in 15 s: its held job and
    gate on alpha are cancelled and it is submitted on gamma, where train's output is local,
    so it queues at once (no gate, no copy)."""
    eng, ops = filling
    ops.ends = {"alpha": 10.0, "gamma": 20.0}
    wid = await eng.run(load_workflow(CHAIN, sites=SITES))
    [gate], [first] = ops.of("analyse", gate=True), ops.of("analyse")
    assert first["site"] == gate["site"] == "alpha"
    await complete(eng, ops, "prep", wid)
    ops.ends = {"alpha": 200.0, "gamma": 15.0}
    await complete(eng, ops, "train", wid)
    await phase(eng, wid, "analyse", "queued")
    [_, second] = ops.of("analyse")
    assert second["site"] == "gamma" and second["hold"] is False
    assert "cp " in second["spec"].script  # train's output copied by the job itself
    old, old_gate = (ops.store.job_by_token(x["token"]) for x in (first, gate))
    assert {old.id, old_gate.id} <= set(ops.cancels)
    assert old.state == old_gate.state == JobState.CANCELLED
    st = eng.store.get_workflow(wid).step("analyse")
    assert st.site == "gamma" and st.data["moved_from"] == "alpha"
    [move] = [e.data["move"] for e in analyse_events(ops) if "move" in e.data]
    assert move["from"] == "alpha" and move["to"] == "gamma" and move["sooner_s"] > 150
    assert eng.store.get_workflow(wid).state not in ("FAILED", "CANCELLED")


@pytest.mark.parametrize("site, ends", [
    ("auto", {"alpha": 100.0, "gamma": 80.0}),  # 20 s sooner: under MOVE_GAIN_S
    ("auto", {"alpha": 1000.0, "gamma": 800.0}),  # 200 s of 1,000: under MOVE_GAIN_SHARE
    ("alpha", {"alpha": 200.0, "gamma": 15.0}),  # the workflow put it on alpha
])
async def test_a_queued_ahead_step_stays_unless_moving_gains_much(filling, site, ends):
    eng, ops = filling
    ops.ends = {"alpha": 10.0, "gamma": 20.0}
    wid = await eng.run(load_workflow(CHAIN.replace(
        "  - name: analyse\n", f"  - name: analyse\n    site: {site}\n"), sites=SITES))
    await complete(eng, ops, "prep", wid)
    ops.ends = ends
    await complete(eng, ops, "train", wid)
    await phase(eng, wid, "analyse", "released")
    assert [s["site"] for s in ops.of("analyse")] == ["alpha"]
    assert not any("move" in e.data for e in analyse_events(ops))


@pytest.mark.parametrize("cancelled", [True, False])
async def test_a_restart_in_the_middle_of_a_move_finishes_it(filling, cancelled):
    """The engine stopped after recording the move, before (or after) cancelling the old
    job: the next engine finishes the move and the workflow goes on (a cancel it made
    itself is no failure of the step)."""
    eng, ops = filling
    ops.ends = {"alpha": 10.0, "gamma": 20.0}
    wid = await eng.run(load_workflow(CHAIN, sites=SITES))
    await complete(eng, ops, "prep", wid)
    await eng.close()
    [first] = ops.of("analyse")
    old = ops.store.job_by_token(first["token"])
    train = ops.store.job_by_token(eng.store.get_workflow(wid).step("train").token)
    ops.store.apply_state(train.id, JobState.COMPLETED, exit_code=0)
    eng.store.update_step(wid, "train", phase="done")
    eng.store.update_step(wid, "analyse", data={"moving_to": "gamma", "rechecked": True})
    if cancelled:
        ops.store.apply_state(old.id, JobState.CANCELLED)
    eng.store.release_workflow(wid, ops.engine_id)
    again = WorkflowEngine(ops)
    try:
        await again.resume()
        await phase(again, wid, "analyse", "queued")
    finally:
        await again.close()
    assert [s["site"] for s in ops.of("analyse")] == ["alpha", "gamma"]
    assert ops.store.get_job(old.id).state == JobState.CANCELLED
    assert eng.store.get_workflow(wid).state not in ("FAILED", "CANCELLED")


# -- the move check beside the copy, not before it (issue 17) ------------------------------


class SlowRecheck(Filling):
    """Placement of analyse once its inputs exist waits for `answer` (a busy site's query),
    saying `asked` when it begins."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.stall = False
        self.asked = asyncio.Event()
        self.answer = asyncio.Event()

    async def place(self, spec: JobSpec, sources: dict, exclude: set,
                    ready_at: Any = None) -> Estimate:
        if self.stall and spec.name == "analyse":
            self.asked.set()
            await self.answer.wait()
        return await super().place(spec, sources, exclude, ready_at)


@pytest.fixture
async def slow_recheck(tmp_path):
    async for pair in engine_with(SlowRecheck, tmp_path):
        yield pair


async def until_rechecked(eng: WorkflowEngine, wid: str) -> None:
    async def done() -> None:
        while eng._tasks.get(f"{wid}/analyse/recheck") is not None:
            await asyncio.sleep(0)  # the check's task ends within this loop's turns
    await asyncio.wait_for(done(), 10)


async def start_slow_recheck(eng: WorkflowEngine, ops: SlowRecheck,
                             ends: dict[str, float]) -> str:
    """analyse queued ahead on alpha; train ended, the sites' expected ends then `ends`,
    while placement of analyse hangs."""
    ops.ends = {"alpha": 10.0, "gamma": 20.0}
    wid = await eng.run(load_workflow(CHAIN, sites=SITES))
    await complete(eng, ops, "prep", wid)
    ops.ends, ops.stall = ends, True
    await asyncio.wait_for(complete(eng, ops, "train", wid), 10)  # no wait on the check
    await asyncio.wait_for(ops.asked.wait(), 10)
    return wid


async def test_a_slow_move_check_does_not_hold_up_the_copy_and_the_gates_cancel(
        slow_recheck):
    """Placement asked whether analyse should move (seconds on a busy site) is not on its
    path: its input is copied and its gate cancelled while that question is open; the
    answer (stay) changes nothing."""
    eng, ops = slow_recheck
    wid = await start_slow_recheck(eng, ops, {"alpha": 10.0, "gamma": 20.0})
    await phase(eng, wid, "analyse", "released")
    [gate] = ops.of("analyse", gate=True)
    assert ops.store.job_by_token(gate["token"]).id in ops.cancels
    assert not ops.answer.is_set()
    ops.answer.set()
    await until_rechecked(eng, wid)
    await eng.advance(wid)
    assert [s["site"] for s in ops.of("analyse")] == ["alpha"]
    assert not any("move" in e.data for e in analyse_events(ops))


async def test_a_step_still_queued_when_the_check_says_move_is_moved(slow_recheck):
    """Released on alpha and still pending there when placement answers that gamma ends
    it 185 s sooner: its job is cancelled and it is queued on gamma."""
    eng, ops = slow_recheck
    wid = await start_slow_recheck(eng, ops, {"alpha": 200.0, "gamma": 15.0})
    await phase(eng, wid, "analyse", "released")
    ops.answer.set()
    await phase(eng, wid, "analyse", "queued")
    [first, second] = ops.of("analyse")
    assert (first["site"], second["site"]) == ("alpha", "gamma")
    assert ops.store.job_by_token(first["token"]).state == JobState.CANCELLED


async def test_a_step_that_started_before_the_check_answered_stays(slow_recheck):
    """Released on alpha, it started there before placement answered "move": it runs on,
    nothing cancelled, and the step says why it was not moved."""
    eng, ops = slow_recheck
    wid = await start_slow_recheck(eng, ops, {"alpha": 200.0, "gamma": 15.0})
    await phase(eng, wid, "analyse", "released")
    [first] = ops.of("analyse")
    job = ops.store.job_by_token(first["token"])
    ops.store.apply_state(job.id, JobState.RUNNING, started_at=utcnow())
    ops.answer.set()
    await until_rechecked(eng, wid)
    await eng.advance(wid)
    assert [s["site"] for s in ops.of("analyse")] == ["alpha"]
    assert job.id not in ops.cancels
    assert ops.store.get_job(job.id).state == JobState.RUNNING
    assert eng.store.get_workflow(wid).step("analyse").phase == "released"


async def test_a_started_step_is_not_cancelled_by_a_move_recorded_before_it_started(
        slow_recheck):
    """The move was recorded while it pended, and it started before the advance that makes
    moves: that advance asks its site, finds it running, and leaves it there, saying so."""
    eng, ops = slow_recheck
    wid = await start_slow_recheck(eng, ops, {"alpha": 10.0, "gamma": 20.0})
    await phase(eng, wid, "analyse", "released")
    [first] = ops.of("analyse")
    job = ops.store.job_by_token(first["token"])
    eng.store.update_step(wid, "analyse", data={"moving_to": "gamma"})
    ops.store.apply_state(job.id, JobState.RUNNING, started_at=utcnow())
    await eng.advance(wid)
    st = eng.store.get_workflow(wid).step("analyse")
    assert job.id not in ops.cancels and st.phase == "released"
    assert st.data.get("moving_to") is None
    assert st.reason == "not moved to gamma: it started on alpha first"
    ops.answer.set()


# -- a gated step queued from the workflow's start (issue 17) --------------------------------


class Stalling(Ops):
    """prep's submit waits for `go` while `stall` is set, or is refused by its site while
    `refuse` is; the estimates of the steps in `slow_estimates` wait for `estimates_go`."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.stall = False
        self.refuse = False
        self.go = asyncio.Event()
        self.stalled = asyncio.Event()
        self.moved: list[tuple[str, str]] = []
        self.slow_estimates: set[str] = set()
        self.estimates_go = asyncio.Event()
        self.estimating: set[str] = set()  # the slow estimates asked and not answered yet
        self.estimate_asked = asyncio.Event()

    async def submit(self, spec: JobSpec, site: str, **kw: Any) -> Job:
        if kw["origin"]["step"] == "prep" and self.stall:
            self.stalled.set()
            await self.go.wait()
        return await super().submit(spec, site, **kw)

    async def expected(self, spec: JobSpec, site: str, sources: dict, ready_at: Any
                       ) -> Estimate:
        if spec.name in self.slow_estimates:
            self.estimating.add(spec.name)
            self.estimate_asked.set()
            await self.estimates_go.wait()
            self.estimating.discard(spec.name)
        return await super().expected(spec, site, sources, ready_at)

    def submitted(self, spec: JobSpec, site: str, *, hold: bool, token: str,
                  origin: dict[str, Any]) -> None:
        if origin["step"] == "prep" and self.refuse:
            raise BadInput(f"sbatch: error: invalid account on {site}")
        super().submitted(spec, site, hold=hold, token=token, origin=origin)

    async def transfer(self, src: str, dst: str, *, transfer_id: str, job_id: str) -> Any:
        self.moved.append((src, dst))
        return await super().transfer(src, dst, transfer_id=transfer_id, job_id=job_id)


@pytest.fixture
async def stalling(tmp_path):
    async for pair in engine_with(Stalling, tmp_path):
        yield pair


def job_of(ops: Ops, submit: dict[str, Any]) -> Job:
    return ops.store.job_by_token(submit["token"])


async def test_a_cross_site_gated_step_is_queued_before_its_upstream(stalling):
    """train (gamma) needs only prep (alpha): it and its gate go in before prep's submit,
    so train's place in gamma's queue does not wait for prep's estimate and submit; analyse,
    `auto` (it may land on gamma, same site as train), waits for train's job as before."""
    eng, ops = stalling
    wid = await eng.run(load_workflow(CHAIN, sites=SITES))
    order = [(s["origin"]["step"], bool(s["origin"].get("gate"))) for s in ops.submits]
    assert order[:3] == [("train", True), ("train", False), ("prep", False)]
    assert order.index(("analyse", False)) > order.index(("train", False))
    train = ops.of("train")[0]
    assert train["hold"] is False and [d.kind for d in train["spec"].dependencies] == [
        "afterany"]  # its gate only: no afterok on a job that did not exist
    assert "has not arrived" in train["spec"].script  # checked before its body runs
    st = eng.store.get_workflow(wid).step("train")
    assert st.phase == "held" and st.data["before"] == ["prep"]
    [ev] = [e for e in ops.store.events_since(0, kinds=["workflow.step"], limit=None)
            if e.data["step"] == "train" and "held" in e.data]
    assert ev.data["before"] == ["prep"] and ev.data["checked"] == ["out.bin"]


async def test_a_gated_step_queued_first_is_released_only_once_its_inputs_arrive(stalling):
    eng, ops = stalling
    wid = await eng.run(load_workflow(TEXT.format(site="gamma"), sites=SITES))
    gate = job_of(ops, ops.of("train", gate=True)[0])
    prep = job_of(ops, ops.of("prep")[0])
    assert ops.submits.index(ops.of("train")[0]) < ops.submits.index(ops.of("prep")[0])
    ops.store.apply_state(prep.id, JobState.RUNNING, started_at=utcnow())
    await eng.advance(wid)
    assert eng.store.get_workflow(wid).step("train").phase == "held"
    assert ops.cancels == [] and ops.releases == [] and ops.moved == []
    await complete(eng, ops, "prep", wid)
    await phase(eng, wid, "train", "released")
    train = job_of(ops, ops.of("train")[0])
    # copied from prep's working directory, known only once prep was submitted
    assert ops.moved == [(f"alpha:{prep.workdir}/out.bin", f"gamma:{train.workdir}/out.bin")]
    assert ops.cancels == [gate.id]


async def test_an_upstream_refused_before_its_submit_cancels_the_queued_step(stalling):
    """prep is refused by its site after train and its gate were queued: both are cancelled
    and the workflow fails, naming prep; nothing of train ever ran."""
    eng, ops = stalling
    ops.refuse = True
    wid = await eng.run(load_workflow(TEXT.format(site="gamma"), sites=SITES))
    gate, train = job_of(ops, ops.of("train", gate=True)[0]), job_of(ops, ops.of("train")[0])
    assert set(ops.cancels) == {gate.id, train.id}
    assert ops.store.get_job(train.id).state == JobState.CANCELLED
    rec = eng.store.get_workflow(wid)
    assert rec.state == "FAILED" and "'prep' was refused" in rec.reason
    assert "invalid account on alpha" in rec.reason
    assert rec.step("train").phase == "cancelled" and ops.releases == []


async def test_a_restart_after_the_gated_step_before_its_upstream_resumes(stalling):
    """The engine stops while prep's submit is under way (train already queued): the next
    engine submits prep, keeps train's job and gate (never a second), and releases train
    when prep's output has arrived."""
    eng, ops = stalling
    ops.stall = True
    run = asyncio.ensure_future(eng.run(load_workflow(TEXT.format(site="gamma"),
                                                      sites=SITES)))
    await asyncio.wait_for(ops.stalled.wait(), 10)
    [rec] = [r for r in eng.store.unfinished_workflows()]
    wid = rec.id
    st = eng.store.get_workflow(wid).step("train")
    assert st.phase == "held" and st.data["before"] == ["prep"]
    assert eng.store.get_workflow(wid).step("prep").phase == "submitting"
    assert not ops.of("prep")
    run.cancel()
    await asyncio.gather(run, return_exceptions=True)
    await eng.close()
    ops.stall = False
    again = WorkflowEngine(ops)
    try:
        assert await again.resume() == [wid]
        assert len(ops.of("prep")) == 1
        assert len(ops.of("train")) == len(ops.of("train", gate=True)) == 1
        assert again.store.get_workflow(wid).step("train").phase == "held"
        await complete(again, ops, "prep", wid)
        await phase(again, wid, "train", "released")
    finally:
        await again.close()
    assert ops.cancels == [job_of(ops, ops.of("train", gate=True)[0]).id]


# -- an `auto` step queued before its upstreams, once their sites are known (issue 17) -------

AUTO = textwrap.dedent("""\
    name: auto-ahead
    steps:
      - name: prep
        site: alpha
        script: "#!/bin/bash\\nhead -c 10 /dev/urandom > out.bin\\n"
      - name: analyse
        needs: [prep]
        inputs: [{from: prep, path: out.bin, size: 4096}]
        script: "#!/bin/bash\\nsha256sum out.bin\\n"
    """)


class PlacedOn(Stalling):
    """Placement puts every `auto` step on `lands_on`, recording the sources it was given."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.lands_on = "gamma"
        self.sources_for: list[dict] = []

    async def place(self, spec: JobSpec, sources: dict, exclude: set,
                    ready_at: Any = None) -> Estimate:
        self.placed.append(ready_at)
        self.sources_for.append(dict(sources))
        return await self.expected(spec, self.lands_on, sources, ready_at)


@pytest.fixture
async def placed_on(tmp_path):
    async for pair in engine_with(PlacedOn, tmp_path):
        yield pair


async def test_an_auto_step_placed_on_another_site_is_queued_behind_its_gate(placed_on):
    """analyse is `auto`; prep (alpha, fixed) is submitted first, never waiting for analyse's
    placement (issue 17); analyse is placed counting its input's transfer from alpha, lands
    on gamma, and goes in behind its gate; it is released only once prep's output has
    arrived."""
    eng, ops = placed_on
    wid = await eng.run(load_workflow(AUTO, sites=SITES))
    order = [(s["origin"]["step"], bool(s["origin"].get("gate"))) for s in ops.submits]
    assert order == [("prep", False), ("analyse", True), ("analyse", False)]
    assert ops.sources_for == [{"alpha": 4096}]
    analyse = ops.of("analyse")[0]
    assert analyse["site"] == "gamma" and analyse["hold"] is False
    assert [d.kind for d in analyse["spec"].dependencies] == ["afterany"]
    assert "has not arrived" in analyse["spec"].script
    st = eng.store.get_workflow(wid).step("analyse")
    assert st.phase == "held" and st.data["ahead"] is True
    await eng.advance(wid)
    assert ops.releases == [] and ops.cancels == [] and ops.moved == []
    await complete(eng, ops, "prep", wid)
    await phase(eng, wid, "analyse", "released")
    prep, job = job_of(ops, ops.of("prep")[0]), job_of(ops, analyse)
    assert ops.moved == [(f"alpha:{prep.workdir}/out.bin", f"gamma:{job.workdir}/out.bin")]
    assert ops.cancels == [job_of(ops, ops.of("analyse", gate=True)[0]).id]


class Recorded(PlacedOn):
    """Every submit, estimate and placement, in the order asked (`calls`); each placement
    waits for `places_go` while `hold_places` is set."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.calls: list[tuple[str, str]] = []
        self.hold_places = False
        self.places_go = asyncio.Event()
        self.placing = asyncio.Event()

    async def submit(self, spec: JobSpec, site: str, **kw: Any) -> Job:
        if not kw["origin"].get("gate"):
            self.calls.append(("submit", kw["origin"]["step"]))
        return await super().submit(spec, site, **kw)

    async def expected(self, spec: JobSpec, site: str, sources: dict, ready_at: Any
                       ) -> Estimate:
        self.calls.append(("estimate", spec.name))
        return await super().expected(spec, site, sources, ready_at)

    async def place(self, spec: JobSpec, sources: dict, exclude: set,
                    ready_at: Any = None) -> Estimate:
        self.calls.append(("place", spec.name))
        if self.hold_places:
            self.placing.set()
            await self.places_go.wait()
        return await super().place(spec, sources, exclude, ready_at)


async def test_a_fixed_site_upstream_is_submitted_before_its_auto_downstream_is_placed(
        tmp_path):
    """Issue 17: prep (alpha) feeds analyse (`auto`): prep's submit never waits for
    analyse's placement (its estimate on each site); analyse is placed for when prep's
    output is expected, prep's estimate having come first."""
    async for eng, ops in engine_with(Recorded, tmp_path):
        t0 = utcnow()
        ops.expectations = {"prep": (t0 + timedelta(seconds=300), 300.0)}
        ops.hold_places = True
        run = asyncio.ensure_future(eng.run(load_workflow(AUTO, sites=SITES)))
        await asyncio.wait_for(ops.placing.wait(), 10)
        assert ("submit", "prep") in ops.calls  # in its queue while analyse is placed
        assert ops.calls.index(("submit", "prep")) < ops.calls.index(("place", "analyse"))
        assert ops.calls.index(("estimate", "prep")) < ops.calls.index(("place", "analyse"))
        ops.places_go.set()
        wid = await asyncio.wait_for(run, 10)
        [ready_at] = ops.placed
        assert abs((ready_at - t0).total_seconds() - 300) < 1
        assert eng.store.get_workflow(wid).step("analyse").phase == "held"


async def test_a_restart_while_the_downstream_is_placed_submits_nothing_twice(tmp_path):
    """The engine stops while analyse is being placed, prep already in its queue: the next
    engine places and submits analyse once, and leaves prep's job alone."""
    async for eng, ops in engine_with(Recorded, tmp_path):
        ops.hold_places = True
        run = asyncio.ensure_future(eng.run(load_workflow(AUTO, sites=SITES)))
        await asyncio.wait_for(ops.placing.wait(), 10)
        [wid] = [w.id for w in eng.store.unfinished_workflows()]
        await eng.close()
        run.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await run
        assert ops.of("analyse") == [] and len(ops.of("prep")) == 1
        ops.hold_places = False
        again = WorkflowEngine(ops)
        try:
            assert await again.resume() == [wid]
            await phase(again, wid, "analyse", "held")
            assert len(ops.of("prep")) == 1
            assert len(ops.of("analyse")) == len(ops.of("analyse", gate=True)) == 1
            await complete(again, ops, "prep", wid)
            await phase(again, wid, "analyse", "released")
        finally:
            await again.close()


async def test_an_auto_step_placed_on_its_upstreams_site_waits_for_its_job_id(placed_on):
    """Placed on alpha, where prep runs, analyse is not submitted before prep: once prep has
    its job id, analyse goes in with an afterok on it (no gate, no transfer)."""
    eng, ops = placed_on
    ops.lands_on = "alpha"
    wid = await eng.run(load_workflow(AUTO, sites=SITES))
    order = [s["origin"]["step"] for s in ops.submits]
    assert order == ["prep", "analyse"]
    prep, [analyse] = job_of(ops, ops.of("prep")[0]), ops.of("analyse")
    assert analyse["site"] == "alpha" and ops.of("analyse", gate=True) == []
    [dep] = analyse["spec"].dependencies
    assert dep.kind == "afterok" and dep.job_ids == [prep.native_id]
    assert not eng.store.get_workflow(wid).step("analyse").reason  # the wait said, then cleared


async def test_an_auto_step_whose_upstream_is_also_auto_waits_for_its_placement(placed_on):
    """prep placed `auto` too: its site is not known before its own placement, so analyse
    is not placed ahead of it (and lands with an afterok when they share a site)."""
    eng, ops = placed_on
    await eng.run(load_workflow(AUTO.replace("    site: alpha\n", ""), sites=SITES))
    assert [s["origin"]["step"] for s in ops.submits if not s["origin"].get("gate")] == [
        "prep", "analyse"]
    [prep], [analyse] = ops.of("prep"), ops.of("analyse")
    assert prep["site"] == analyse["site"] == "gamma"  # both placed
    assert [d.kind for d in analyse["spec"].dependencies] == ["afterok"]


async def test_an_upstream_refused_before_its_auto_downstream_is_placed_stops_it(placed_on):
    """prep goes in first and is refused: analyse is never placed nor submitted."""
    eng, ops = placed_on
    ops.refuse = True
    wid = await eng.run(load_workflow(AUTO, sites=SITES))
    assert ops.placed == [] and ops.of("analyse") == ops.of("analyse", gate=True) == []
    assert ops.cancels == [] and ops.releases == []
    rec = eng.store.get_workflow(wid)
    assert rec.state == "FAILED" and "'prep' was refused" in rec.reason
    assert rec.step("analyse").phase == "cancelled"


# -- no step's submit waits for another step's estimate (issue 17 follow-up) -----------------


async def estimated(eng: WorkflowEngine, wid: str, step: str) -> dict[str, Any]:
    """Step `step`'s data once its estimate, asked beside its submit, has been recorded."""
    async def came() -> dict[str, Any]:
        while (data := eng.store.get_workflow(wid).step(step).data).get("estimating", True):
            eng.changed.clear()
            await eng.changed.wait()
        return data
    return await asyncio.wait_for(came(), 10)


async def test_fixed_site_steps_are_submitted_before_any_estimate_returns(stalling):
    """train (gamma, gated, queued first) and prep (alpha): neither estimate has returned
    when both are submitted; each is recorded when it comes, with an event."""
    eng, ops = stalling
    t0 = utcnow()
    ops.slow_estimates = {"prep", "train"}
    ops.expectations = {"prep": (t0 + timedelta(seconds=100), 100.0),
                        "train": (t0 + timedelta(seconds=30), 20.0)}
    wid = await asyncio.wait_for(eng.run(load_workflow(TEXT.format(site="gamma"),
                                                       sites=SITES)), 10)
    assert len(ops.of("train")) == len(ops.of("prep")) == 1
    assert ops.submits.index(ops.of("train")[0]) < ops.submits.index(ops.of("prep")[0])
    await asyncio.wait_for(ops.estimate_asked.wait(), 10)
    rec = eng.store.get_workflow(wid)
    for name in ("prep", "train"):
        assert rec.step(name).data["estimating"] is True
        assert rec.step(name).data["expected_end"] is None
    ops.estimates_go.set()
    prep, train = await estimated(eng, wid, "prep"), await estimated(eng, wid, "train")
    assert prep["expected_runtime_s"] == 100.0 and train["expected_runtime_s"] == 20.0
    assert prep["expected_end"] == (t0 + timedelta(seconds=100)).isoformat()
    assert ops.expected_for["train"] == t0 + timedelta(seconds=100)  # after prep's estimate
    evs = [e.data["estimated"] for e in ops.store.events_since(0, kinds=["workflow.step"],
                                                                limit=None)
           if e.data["step"] == "train" and "estimated" in e.data]
    assert evs == [{"end": (t0 + timedelta(seconds=30)).isoformat(), "runtime_s": 20.0}]


async def test_an_auto_step_is_placed_once_its_upstreams_estimates_have_come(stalling):
    """train's estimate is slow: prep and train are submitted meanwhile; analyse, `auto`, is
    placed only once it has come, for when train is expected to end (120 s)."""
    eng, ops = stalling
    t0 = utcnow()
    ops.slow_estimates = {"train"}
    ops.expectations = {"prep": (t0 + timedelta(seconds=100), 100.0),
                        "train": (t0 + timedelta(seconds=30), 20.0)}
    run = asyncio.ensure_future(eng.run(load_workflow(CHAIN, sites=SITES)))
    await asyncio.wait_for(ops.estimate_asked.wait(), 10)
    assert ops.estimating == {"train"}
    assert len(ops.of("train")) == len(ops.of("prep")) == 1
    assert ops.of("analyse") == [] and ops.placed == []
    ops.estimates_go.set()
    wid = await asyncio.wait_for(run, 10)
    [ready_at] = ops.placed
    assert abs((ready_at - t0).total_seconds() - 120) < 1
    assert len(ops.of("analyse")) == 1
    assert eng.store.get_workflow(wid).step("analyse").data["estimating"] is False


async def test_an_estimate_under_way_when_the_engine_stops_is_asked_again(stalling):
    eng, ops = stalling
    ops.slow_estimates = {"train"}
    wid = await asyncio.wait_for(eng.run(load_workflow(TEXT.format(site="gamma"),
                                                       sites=SITES)), 10)
    await asyncio.wait_for(ops.estimate_asked.wait(), 10)
    await eng.close()
    assert eng.store.get_workflow(wid).step("train").data["estimating"] is True
    ops.slow_estimates = set()
    ops.expectations = {"train": (utcnow() + timedelta(seconds=30), 20.0)}
    again = WorkflowEngine(ops)
    try:
        assert await again.resume() == [wid]
        assert (await estimated(again, wid, "train"))["expected_runtime_s"] == 20.0
        assert len(ops.of("train")) == len(ops.of("train", gate=True)) == 1
    finally:
        await again.close()


FAN = textwrap.dedent("""\
    name: fan
    steps:
      - name: prep
        site: alpha
        script: "#!/bin/bash\\nhead -c 10 /dev/urandom > out.bin\\n"
      - name: left
        needs: [prep]
        inputs: [{from: prep, path: out.bin}]
        script: "#!/bin/bash\\nsha256sum out.bin\\n"
      - name: right
        needs: [prep]
        inputs: [{from: prep, path: out.bin}]
        script: "#!/bin/bash\\nsha256sum out.bin\\n"
    """)


class SlowPlacing(Stalling):
    """Each placement waits for `places_go`; `placing` holds the steps being placed."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.places_go = asyncio.Event()
        self.placing: set[str] = set()
        self.both_placing = asyncio.Event()

    async def place(self, spec: JobSpec, sources: dict, exclude: set,
                    ready_at: Any = None) -> Estimate:
        self.placing.add(spec.name)
        if self.placing == {"left", "right"}:
            self.both_placing.set()
        await self.places_go.wait()
        return await super().place(spec, sources, exclude, ready_at)


async def test_gated_auto_steps_apart_are_placed_side_by_side(tmp_path):
    """left and right, `auto`, each fed by prep alone (alpha, fixed): prep goes in first,
    then both placements are asked at once (neither waits for the other's), and both are
    queued, each behind its gate."""
    async for eng, ops in engine_with(SlowPlacing, tmp_path):
        run = asyncio.ensure_future(eng.run(load_workflow(FAN, sites=SITES)))
        await asyncio.wait_for(ops.both_placing.wait(), 10)
        assert [s["origin"]["step"] for s in ops.submits] == ["prep"]
        ops.places_go.set()
        await asyncio.wait_for(run, 10)
        order = [s["origin"]["step"] for s in ops.submits if not s["origin"].get("gate")]
        assert order[0] == "prep" and sorted(order[1:]) == ["left", "right"]
        assert len(ops.of("left", gate=True)) == len(ops.of("right", gate=True)) == 1
