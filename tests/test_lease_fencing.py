"""Fencing: an engine that stalls (its process stopped, a long pause) past the takeover while
it drives a workflow, a transfer or a staging must not, when it wakes, go on driving what
another engine took over. Each takeover increments the item's lease generation; every write
that drives the item carries the generation its engine got, and the store refuses a stale
one (LeaseLost); the stale engine drops the item with a `lease.lost` event.

Two engines on one store in each test (no test bed, no sleeps): the stall is an engine whose
heartbeat is not written again, made old explicitly (`age_heartbeat`)."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import pytest
from lease_helpers import age_heartbeat
from test_workflow_unseen import _Ops, _until, load

from diamond_jupyter import leases
from diamond_jupyter.model import BadInput, JobSpec, JobState
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.engine import WorkflowEngine


def _engine_id(store: Store) -> str:
    """A live engine of this process that beats once (never again unless told)."""
    engine = leases.new_engine_id()
    leases.register(engine)
    leases.beat(store.beats, engine)
    return engine


def _lost(store: Store) -> list[dict[str, Any]]:
    return [e.data for e in store.events_since(0, kinds=["lease.lost"], limit=None)]


# -- the store ------------------------------------------------------------------------------

def test_each_takeover_moves_the_generation_and_stale_writes_are_refused(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    a, b = _engine_id(store), _engine_id(store)
    try:
        rec = store.record_transfer("sftp", "alpha:x", "beta:x")
        got = store.claim_transfer(rec.id, a)
        fence_a = leases.fence_of("transfer", rec.id, got.data)
        assert fence_a.generation == 1
        assert leases.generation(store.claim_transfer(rec.id, a).data) == 1  # its own again
        store.update_transfer(rec.id, state="ACTIVE", fence=fence_a)  # a holds it: written
        assert store.claim_transfer(rec.id, b) is None  # a beats: b may not take it
        age_heartbeat(store, a)  # a stalls past the takeover
        got = store.claim_transfer(rec.id, b)
        fence_b = leases.fence_of("transfer", rec.id, got.data)
        assert (got.data["owner"], fence_b.generation) == (b, 2)
        with pytest.raises(leases.LeaseLost) as e:
            store.update_transfer(rec.id, state="FAILED", error="stale", fence=fence_a)
        assert (e.value.current, e.value.owner) == (2, b)
        assert "generation 1 is stale (now 2" in str(e.value)
        assert store.get_transfer(rec.id).state == "ACTIVE"  # nothing of a's written
        with pytest.raises(leases.LeaseLost):
            store.check_fence(fence_a)
        store.update_transfer(rec.id, bytes=5, fence=fence_b)
        store.release_transfer(rec.id, b)  # b closes: a write of b's still under way...
        with pytest.raises(leases.LeaseLost):
            store.update_transfer(rec.id, bytes=6, fence=fence_b)  # ...is refused too
        assert leases.generation(store.claim_transfer(rec.id, a).data) == 4
        assert store.get_transfer(rec.id).bytes == 5
    finally:
        leases.unregister(a)
        leases.unregister(b)


def test_a_stale_step_write_or_submit_intent_is_refused(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    a, b = _engine_id(store), _engine_id(store)
    try:
        rec = store.create_workflow("w", {}, ["one"], owner=a)
        fence_a = leases.fence_of("workflow", rec.id, rec.data)
        age_heartbeat(store, a)
        fence_b = leases.fence_of("workflow", rec.id, store.claim_workflow(rec.id, b).data)
        assert (fence_a.generation, fence_b.generation) == (1, 2)
        for write in (lambda: store.update_step(rec.id, "one", phase="queued", fence=fence_a),
                      lambda: store.set_workflow_state(rec.id, "FAILED", fence=fence_a),
                      lambda: store.update_workflow_data(rec.id, {"x": 1}, fence=fence_a),
                      lambda: store.record_intent("alpha", "tokA", JobSpec(script="x"),
                                                  fence=fence_a)):
            with pytest.raises(leases.LeaseLost):
                write()
        assert store.get_workflow(rec.id).step("one").phase == "waiting"
        assert store.get_workflow(rec.id).state == "PENDING"
        assert store.job_by_token("tokA") is None
        assert store.update_step(rec.id, "one", phase="queued", fence=fence_b).phase == "queued"
        with pytest.raises(BadInput, match="no lease is kept on a .job. .known: transfer"):
            store.check_fence(leases.Fence("job", "x", 1))
    finally:
        leases.unregister(a)
        leases.unregister(b)


# -- workflows ------------------------------------------------------------------------------

def test_a_stale_task_step_or_state_is_refused(tmp_path):
    """Agent tasks: a task made by an engine holds generation 1; each claim by another
    engine (and each hand-back) moves it, and the store refuses a step or a state carrying
    an older one."""
    store = Store(tmp_path / "s.sqlite")
    a, b = _engine_id(store), _engine_id(store)
    try:
        rec = store.create_task("p", data={"owner": a})
        fence_a = leases.fence_of("task", rec.id, rec.data)
        assert fence_a.generation == 1
        store.add_step(rec.id, "prompt", {"text": "p"}, fence=fence_a)
        assert store.claim_task(rec.id, b) is None  # a beats: b may not take it
        age_heartbeat(store, a)
        got = store.claim_task(rec.id, b)
        fence_b = leases.fence_of("task", rec.id, got.data)
        assert (got.data["owner"], fence_b.generation) == (b, 2)
        with pytest.raises(leases.LeaseLost, match="task .*generation 1 is stale"):
            store.add_step(rec.id, "model", {"text": "stale"}, fence=fence_a)
        with pytest.raises(leases.LeaseLost):
            store.update_task(rec.id, state="done", data={"answer": "stale"}, fence=fence_a)
        store.update_task(rec.id, state="done", data={"answer": "b's"}, fence=fence_b)
        now = store.get_task(rec.id)
        assert (now.state, now.data["answer"], [s.kind for s in now.steps]) == (
            "done", "b's", ["prompt"])
        store.release_task(rec.id, b)
        assert leases.generation(store.get_task(rec.id).data) == 3
        with pytest.raises(leases.LeaseLost):
            store.add_step(rec.id, "late", fence=fence_b)
    finally:
        leases.unregister(a)
        leases.unregister(b)


def _pair() -> Any:
    return load("""\
        name: pair
        steps:
          - {name: first, site: alpha, script: x}
          - {name: second, site: beta, needs: [first], script: x}
        """)


async def test_a_workflow_engine_that_wakes_after_a_takeover_drops_it(tmp_path):
    """The engine driving a workflow stalls; another takes it over. When the first wakes and
    a job event makes it advance, it did release the held step (or copy its inputs) in the
    new engine's place; now it is refused, drops the workflow and says so."""
    store = Store(tmp_path / "s.sqlite")
    ids = [_engine_id(store), _engine_id(store)]
    stale_ops, new_ops = _Ops(store), _Ops(store)
    stale_ops.engine_id, new_ops.engine_id = ids
    new_ops.ids = itertools.count(500)  # tokens and job numbers of its own
    stale, new = WorkflowEngine(stale_ops), WorkflowEngine(new_ops)
    try:
        wid = await stale.run(_pair())
        # second (beta) goes in behind its gate before first (alpha) has a job (issue 17)
        assert [s[0] for s in stale_ops.submits] == ["second", "first"]
        age_heartbeat(store, ids[0])  # stopped: no heartbeat for longer than the takeover
        assert await new.resume() == [wid]
        assert store.get_workflow(wid).data["lease"] == 2
        first = store.job_by_token(store.get_workflow(wid).step("first").token)
        store.apply_state(first.id, JobState.COMPLETED, exit_code=0)
        await stale.advance(wid)  # it wakes: the job's end reaches it first
        assert stale_ops.transfers == [] and stale_ops.releases == []
        [said] = _lost(store)
        assert said == {"item": "workflow", "id": wid, "workflow_id": wid, "engine": ids[0],
                        "generation": 1, "current": 2, "owner": ids[1]}
        await stale.advance(wid)  # dropped: it does not take it back from a live engine
        assert len(_lost(store)) == 1 and stale_ops.releases == []
        await new.advance(wid)
        await _until(new, wid, {"second": "released"})
        second = store.job_by_token(store.get_workflow(wid).step("second").token)
        assert new_ops.releases == [second.id]
        assert store.get_workflow(wid).data["owner"] == ids[1]
    finally:
        for eng in (stale, new):
            await eng.close()
        for e in ids:
            leases.unregister(e)


class _StallingOps(_Ops):
    """Ops whose submit of one step stalls (the engine's process stopped) until let go."""

    def __init__(self, store: Store, step: str) -> None:
        super().__init__(store)
        self.step, self.entered, self.wake = step, asyncio.Event(), asyncio.Event()

    async def submit(self, spec: JobSpec, site: str, **kw: Any) -> Any:
        if kw["origin"].get("step") == self.step and not self.wake.is_set():
            self.entered.set()
            await self.wake.wait()
        return await super().submit(spec, site, **kw)


async def test_a_step_submit_raced_by_the_stale_and_the_new_engine_runs_once(tmp_path):
    """The first engine stalls in the middle of submitting a step (its `submitting` write
    done, its submit intent not yet); the second takes the workflow over and submits the
    step itself. When the first wakes, its submit reached the queue too: a duplicate job.
    Now its intent is refused: one job for the step, and the first engine drops the
    workflow."""
    wf = load("""\
        name: chain
        steps:
          - {name: first, site: alpha, script: x}
          - {name: second, site: alpha, needs: [first], script: x}
        """)
    store = Store(tmp_path / "s.sqlite")
    ids = [_engine_id(store), _engine_id(store)]
    stale_ops, new_ops = _StallingOps(store, "second"), _Ops(store)
    stale_ops.engine_id, new_ops.engine_id = ids
    new_ops.ids = itertools.count(500)  # tokens and job numbers of its own
    stale, new = WorkflowEngine(stale_ops), WorkflowEngine(new_ops)
    try:
        running = asyncio.ensure_future(stale.run(wf))
        await asyncio.wait_for(stale_ops.entered.wait(), 10)
        wid = store.list_workflows()[0].id
        stale_token = store.get_workflow(wid).step("second").token
        assert store.get_workflow(wid).step("second").phase == "submitting"
        age_heartbeat(store, ids[0])
        assert await new.resume() == [wid]
        rec = store.get_workflow(wid)
        assert rec.step("second").phase == "queued" and rec.step("second").token != stale_token
        stale_ops.wake.set()  # the first engine wakes mid-submit
        assert await asyncio.wait_for(running, 10) == wid
        assert store.job_by_token(stale_token) is None  # its intent was refused
        steps = [j.origin.get("step") for j in store.list_jobs(limit=None)]
        assert sorted(steps) == ["first", "second"]
        assert [s[0] for s in stale_ops.submits] == ["first"]
        assert [s[0] for s in new_ops.submits] == ["second"]
        [said] = _lost(store)
        assert (said["engine"], said["generation"], said["current"]) == (ids[0], 1, 2)
        assert store.get_workflow(wid).step("second").token == rec.step("second").token
    finally:
        for eng in (stale, new):
            await eng.close()
        for e in ids:
            leases.unregister(e)


# -- transfers and stagings -------------------------------------------------------------------

class _StallingCopy:
    """`sftp_copy` whose first call reports some progress, then stalls (its engine stopped)
    until `wake`, then reports again and, unless stopped, finishes with the real copy; later
    calls are the real copy."""

    def __init__(self, real: Any) -> None:
        self.real, self.calls = real, 0
        self.entered, self.wake = asyncio.Event(), asyncio.Event()
        self.stopped = False

    async def __call__(self, *a: Any, progress: Any, cancel: Any, **kw: Any) -> Any:
        from diamond_jupyter.transfer.sftp import Cancelled

        self.calls += 1
        if self.calls > 1:
            return await self.real(*a, progress=progress, cancel=cancel, **kw)
        total = 4 << 20
        await asyncio.to_thread(progress, 1 << 20, total)
        self.entered.set()
        await self.wake.wait()
        await asyncio.to_thread(progress, 2 << 20, total)  # from the copying thread
        if cancel.is_set():
            self.stopped = True
            raise Cancelled("stopped")
        return await self.real(*a, progress=progress, cancel=cancel, **kw)


def _fed_sites(tmp_path: Any) -> Any:
    sites = tmp_path / "sites.yaml"
    sites.write_text("sites:\n"
                     "  - name: alpha\n    scheduler: slurm\n    transport: {kind: local}\n"
                     "  - name: beta\n    scheduler: slurm\n    transport: {kind: local}\n"
                     f"store: {tmp_path / 'store.sqlite3'}\n")
    return sites


def _fed(sites: Any) -> Any:
    from diamond_jupyter.federation import Federation

    return Federation(sites, store=Store(sites.parent / "store.sqlite3"))


def _stale_and_new(tmp_path: Path) -> tuple[Any, Any, Path, Path]:
    """Two engines on the same sites and store (the first to stall mid-copy, the second to
    take over), and a copy's source (holding a line) and destination."""
    sites = _fed_sites(tmp_path)
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("payload\n")
    return _fed(sites), _fed(sites), src, dst


async def test_a_copy_whose_engine_wakes_after_a_takeover_stops_writing(tmp_path, monkeypatch):
    """An engine stalls mid-copy; another takes the copy over and finishes it. The first,
    when it woke, went on writing the partial file beside the new engine and recorded its
    own end. Now its next progress report finds its lease stale: it stops copying, writes
    no state or progress, and says so with `lease.lost`."""
    import diamond_jupyter.transfer as transfer_mod

    copy = _StallingCopy(transfer_mod.sftp_copy)
    monkeypatch.setattr(transfer_mod, "sftp_copy", copy)
    stale, new, src, dst = _stale_and_new(tmp_path)
    await stale.start(recover=False)
    try:
        rec = await stale.transfer(f"alpha:{src}", f"beta:{dst}", wait=False)
        stale_task = stale.mover._tasks[rec.id]
        await asyncio.wait_for(copy.entered.wait(), 10)
        age_heartbeat(stale.store, stale.engine_id)
        await new.start(recover=False)
        assert await new.resume_held() == {"transfers": [rec.id]}
        done = await asyncio.wait_for(new.mover._tasks[rec.id], 30)
        assert done.state == "SUCCEEDED" and dst.read_text() == "payload\n"
        seen = new.store.last_seq()
        copy.wake.set()  # the first engine wakes
        with pytest.raises(leases.LeaseLost):
            await asyncio.wait_for(stale_task, 10)
        assert copy.stopped
        after = new.store.events_since(seen, limit=None)
        assert [e.kind for e in after] == ["lease.lost"]  # no progress, no state of its own
        assert after[0].data == {"item": "transfer", "id": rec.id, "transfer_id": rec.id,
                                 "engine": stale.engine_id, "generation": 1, "current": 2,
                                 "owner": new.engine_id}
        now = new.store.get_transfer(rec.id)
        assert (now.state, now.data["owner"], now.data["lease"]) == (
            "SUCCEEDED", new.engine_id, 2)
    finally:
        await asyncio.gather(stale.close(), new.close())


async def test_a_staging_whose_engine_wakes_after_a_takeover_is_left_to_the_new_one(
        tmp_path, monkeypatch):
    """An engine stalls in a job's stage-in; another takes the staging (and its copy) over,
    brings the data in and releases the job. The first, when it woke, finished its copy and
    released (or failed) the job again. Now it drops the staging: one release, the job not
    failed, the staging's end written by the new engine only."""
    import diamond_jupyter.transfer as transfer_mod
    from diamond_jupyter.model import StageEntry
    from diamond_jupyter.sites import Site
    from diamond_jupyter.transfer.staging import resume_staged

    copy = _StallingCopy(transfer_mod.sftp_copy)
    monkeypatch.setattr(transfer_mod, "sftp_copy", copy)
    released: list[list[str]] = []

    async def release(self: Any, native_ids: list[str], tasks: Any = None) -> None:
        released.append(native_ids)
    monkeypatch.setattr(Site, "release", release)
    sites = _fed_sites(tmp_path)
    src, work = tmp_path / "in.txt", tmp_path / "work"
    src.write_text("input\n")
    work.mkdir()
    stale, new = _fed(sites), _fed(sites)
    await stale.start(recover=False)
    store = stale.store
    spec = JobSpec(script="cat in.txt\n", working_directory=str(work),
                   stage_in=[StageEntry(source=str(src), destination="in.txt")])
    store.record_intent("alpha", "tokstage", spec)
    job = store.bind_native_id("tokstage", "42")
    store.apply_state(job.id, JobState.PENDING)
    store.record_transfer("stage", "tokstage", "alpha", transfer_id="stage-tokstage",
                          state="ACTIVE", data={"stage_of": "tokstage", "site": "alpha",
                                                "user_hold": False})
    try:
        assert await resume_staged(stale.mover) == [job.id]  # the first engine drives it
        staging = stale.mover._tasks["stage-tokstage"]
        await asyncio.wait_for(copy.entered.wait(), 10)
        age_heartbeat(store, stale.engine_id)
        await new.start(recover=False)
        took = await new.resume_held()
        assert took == {"stagings": [job.id], "transfers": ["tokstage-in-0"]}
        await asyncio.wait_for(new.mover._tasks["stage-tokstage"], 30)
        assert released == [["42"]]
        assert (work / "in.txt").read_text() == "input\n"
        copy.wake.set()
        await asyncio.wait_for(staging, 10)  # it ends: dropped, not failed
        assert released == [["42"]]  # not released twice
        assert store.get_job(job.id).state == JobState.PENDING  # not failed by the stale one
        rec = store.get_transfer("stage-tokstage")
        assert (rec.state, rec.data["owner"]) == ("SUCCEEDED", new.engine_id)
        kinds = [e.kind for e in store.events_since(0, job_id=job.id, limit=None)]
        assert kinds.count("job.released") == 1 and "stage.in.failed" not in kinds
        lost = {d["id"]: d for d in _lost(store)}
        assert set(lost) == {"stage-tokstage", "tokstage-in-0"}
        assert {d["engine"] for d in lost.values()} == {stale.engine_id}
        assert {d["owner"] for d in lost.values()} == {new.engine_id}
    finally:
        await asyncio.gather(stale.close(), new.close())


async def test_a_submit_whose_lease_went_stale_after_its_intent_never_reaches_the_scheduler(
        tmp_path, monkeypatch):
    """The engine stalls just after a step's submit intent was written; another takes the
    workflow over. When it wakes, the facade ran the submit command anyway. Now the lease is
    checked again just before it: nothing is submitted and the intent is closed, saying
    why (the new engine's recovery finds no job to wait for)."""
    sites = _fed_sites(tmp_path)
    fed = _fed(sites)
    await fed.start(recover=False)
    store = fed.store
    other = _engine_id(store)
    rec = store.create_workflow("w", {}, ["one"], owner=fed.engine_id)
    fence = leases.fence_of("workflow", rec.id, rec.data)
    real_intent = store.record_intent

    def intent_then_stall(*a: Any, **kw: Any) -> Any:
        job = real_intent(*a, **kw)
        age_heartbeat(store, fed.engine_id)  # it stalls here...
        assert store.claim_workflow(rec.id, other) is not None  # ...and is taken over
        return job
    monkeypatch.setattr(store, "record_intent", intent_then_stall)
    submitted: list[str] = []

    async def submit_command(*a: Any, **kw: Any) -> Any:
        submitted.append(a[2])
        raise AssertionError("the scheduler was asked")
    monkeypatch.setattr(fed, "_submit_staged", submit_command)
    try:
        with pytest.raises(leases.LeaseLost, match="lease generation 1 is stale"):
            await fed.submit(JobSpec(script="true\n"), "alpha", token="a1b2c3d4e5f6",
                             origin={"workflow": rec.id, "step": "one"}, fence=fence)
        assert submitted == []
        job = store.job_by_token("a1b2c3d4e5f6")
        assert job.state == JobState.FAILED and job.native_id is None
        assert "lease generation 1 is stale" in (job.reason or "")
    finally:
        await fed.close()
        leases.unregister(other)


async def test_a_users_cancel_through_an_engine_that_lost_the_workflow_still_cancels(tmp_path):
    """A cancel asked of the engine that stalled and lost the workflow is the user's request,
    not that engine driving it: the workflow is cancelled (before the fix: refused as a
    stale write), and the loss is said."""
    store = Store(tmp_path / "s.sqlite")
    ids = [_engine_id(store), _engine_id(store)]
    stale_ops, new_ops = _Ops(store), _Ops(store)
    stale_ops.engine_id, new_ops.engine_id = ids
    new_ops.ids = itertools.count(500)
    stale, new = WorkflowEngine(stale_ops), WorkflowEngine(new_ops)
    try:
        wid = await stale.run(_pair())
        age_heartbeat(store, ids[0])
        assert await new.resume() == [wid]
        await stale.cancel(wid)
        assert store.get_workflow(wid).state == "CANCELLED"
        assert [d["engine"] for d in _lost(store)] == [ids[0]]
        assert len(stale_ops.cancels) == 2  # both steps' jobs
    finally:
        for eng in (stale, new):
            await eng.close()
        for e in ids:
            leases.unregister(e)


async def test_a_copy_stops_within_a_few_mib_of_losing_its_lease(tmp_path, monkeypatch):
    """The lease is checked inside the copy loop, not only at its progress reports (each 5%
    of the file): taken over mid-copy (from the copy's own progress callback), a 200 MiB
    copy stops within the watch's byte bound (before the fix: at the next 5% report,
    10 MiB on), asking the store at most once per bound, not once per block."""
    import diamond_jupyter.transfer as transfer_mod

    real = transfer_mod.sftp_copy
    sites = _fed_sites(tmp_path)
    src, dst = tmp_path / "in.bin", tmp_path / "out.bin"
    with open(src, "wb") as f:
        f.truncate(200 << 20)  # sparse: no disk written for it
    fed = _fed(sites)
    await fed.start(recover=False)
    store = fed.store
    other = _engine_id(store)
    taken_at: list[int] = []

    async def copy(*a: Any, progress: Any, **kw: Any) -> Any:
        def taken_over_midway(done: int, total: int) -> None:
            progress(done, total)
            if not taken_at and done >= 2 << 20:  # it stalls here, and is taken over
                age_heartbeat(store, fed.engine_id)
                assert store.claim_transfer(rec.id, other) is not None
                taken_at.append(done)
        return await real(*a, progress=taken_over_midway, **kw)
    monkeypatch.setattr(transfer_mod, "sftp_copy", copy)
    asked = []
    real_ask = store.transfer_stop_asked
    monkeypatch.setattr(store, "transfer_stop_asked",
                        lambda *a: asked.append(a) or real_ask(*a))
    try:
        rec = await fed.transfer(f"alpha:{src}", f"beta:{dst}", wait=False)
        with pytest.raises(leases.LeaseLost):
            await asyncio.wait_for(fed.mover._tasks[rec.id], 60)
        part = (tmp_path / "out.bin.dmd-part").stat().st_size
        bound = leases.LeaseWatch.EVERY_BYTES + (1 << 20)  # plus one block
        assert taken_at and taken_at[0] < part <= taken_at[0] + bound, (taken_at, part)
        assert not dst.exists()
        assert len(asked) <= part // leases.LeaseWatch.EVERY_BYTES + 1  # not per block
        assert [d["id"] for d in _lost(store)] == [rec.id]
        now = store.get_transfer(rec.id)
        assert (now.state, now.data["owner"]) == ("ACTIVE", other)  # left to its new owner
    finally:
        await fed.close()
        leases.unregister(other)


def test_the_lease_watch_asks_the_store_once_a_second_or_every_few_mib():
    """LeaseWatch alone: a check at the first block, then when a second of this engine's
    clock passed or `every_bytes` were moved (a retry's lower count included)."""
    now, answers = [0.0], []

    def check() -> bool:
        answers.append(now[0])
        return len(answers) == 4  # the fourth check finds a stop asked
    watch = leases.LeaseWatch(check, every_s=1.0, every_bytes=100, clock=lambda: now[0])
    assert watch(10) is False and answers == [0.0]  # the first block
    for done in (20, 50, 109):  # under a second, under 100 bytes: no store read
        now[0] += 0.2
        assert watch(done) is False
    assert len(answers) == 1
    assert watch(110) is False and len(answers) == 2  # 100 bytes on
    now[0] += 1.0
    assert watch(111) is False and len(answers) == 3  # a second on
    assert watch(5) is True and len(answers) == 4  # a retry starting over: 106 bytes back


async def test_a_users_cancel_through_the_stale_engine_stops_both_copies(tmp_path,
                                                                         monkeypatch):
    """The user cancels a copy through the engine that stalled and lost it while its copy
    still runs there. Before the fix the user got the lease-lost error and the new owner
    copied on. Now the cancel wins: the stale engine's copy stops, the cancel is recorded
    as the user's request, and the owner's copy stops at its next lease check and ends
    CANCELLED."""
    import diamond_jupyter.transfer as transfer_mod
    from diamond_jupyter.transfer.sftp import Cancelled

    entered = [asyncio.Event(), asyncio.Event()]
    wake = [asyncio.Event(), asyncio.Event()]
    calls: list[int] = []

    async def gated(*a: Any, progress: Any, cancel: Any, **kw: Any) -> Any:
        n = len(calls)
        calls.append(n)
        await asyncio.to_thread(progress, 1 << 20, 8 << 20)
        entered[n].set()
        await wake[n].wait()
        await asyncio.to_thread(progress, 6 << 20, 8 << 20)  # a lease check is due here
        if cancel.is_set():
            raise Cancelled("stopped")
        return await transfer_mod.sftp.sftp_copy(*a, progress=progress, cancel=cancel, **kw)
    monkeypatch.setattr(transfer_mod, "sftp_copy", gated)
    stale, new, src, dst = _stale_and_new(tmp_path)
    await stale.start(recover=False)
    try:
        rec = await stale.transfer(f"alpha:{src}", f"beta:{dst}", wait=False)
        await asyncio.wait_for(entered[0].wait(), 10)
        age_heartbeat(stale.store, stale.engine_id)
        await new.start(recover=False)
        assert await new.resume_held() == {"transfers": [rec.id]}
        await asyncio.wait_for(entered[1].wait(), 10)
        cancelling = asyncio.ensure_future(stale.cancel_transfer(rec.id))
        wake[0].set()  # the stale engine wakes into the user's cancel
        got = await asyncio.wait_for(cancelling, 10)
        assert got.state == "CANCELLED" and got.error == "cancelled by request"
        assert rec.id not in stale.mover._tasks  # its own copy stopped
        wake[1].set()  # the owner's copy goes on to its next lease check
        done = await asyncio.wait_for(new.mover._tasks[rec.id], 10)
        assert done.state == "CANCELLED" and not dst.exists()
        now = new.store.get_transfer(rec.id)
        assert (now.state, now.data["owner"]) == ("CANCELLED", new.engine_id)
        assert [d["engine"] for d in _lost(new.store)] == [stale.engine_id]
        assert calls == [0, 1]
    finally:
        wake[0].set()
        wake[1].set()
        await asyncio.gather(stale.close(), new.close())
