"""A parent's retry and the fan-in below it, on the real engine and store (the operations
below the facade recorded, `workflow_ops`; no test bed).

A fan-in step held on another site, with no scheduler dependency on the failed parent's
job, was cancelled and submitted again when that parent was retried: it lost its place in
its queue for nothing. It now keeps its job, held, and is released once the new run (and
its other parents) ended. A step with an afterok on the failed job, or one on the site the
new run goes to, is still submitted again behind it. Each run is asserted as `workflow
status --json` shows it (`WorkflowEngine.view`), by its `workflow.step` events, and by the
scheduler calls made (submits, cancels, releases). The tests named `fault` failed before."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

import pytest
from test_workflow_unseen import _Ops, _until
from test_workflow_unseen13 import _Run
from test_workflow_unseen15 import runs_fixture  # noqa: F401 (the `runs` fixture)
from workflow_ops import next_engine

from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.journal import Journal
from diamond_jupyter.model import (
    BadInput,
    Dependency,
    DiamondError,
    Job,
    JobState,
    SiteError,
    SubmitUnsure,
    utcnow,
)
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.engine import Estimate

# join waits on left by an afterok (both on alpha), on right and mid held (other sites)
FAN_IN = """\
    name: fan-in
    steps:
      - {name: left, site: alpha, script: ./left}
      - {name: right, site: beta, script: ./right}
      - {name: mid, site: gamma, script: ./mid, retries: 1}
      - name: join
        site: alpha
        needs: [left, right, mid]
        inputs:
          - {from: mid, path: m.out}
          - {from: left, path: l.out}
        script: ./join
    """


def _with(extra: str) -> str:
    """FAN_IN with the steps `extra` (written as FAN_IN's are) after its own."""
    return FAN_IN.rstrip() + "\n" + extra


def _status(run: _Run) -> dict[str, dict[str, Any]]:
    """Each step as `workflow status --json` shows it."""
    view = run.eng.view(run.wid).model_dump(mode="json")
    return {s["name"]: s for s in view["steps"]}


def _kept_events(run: _Run, step: str) -> list[dict[str, Any]]:
    return [e.data["kept"] for e in run.store.events_since(0, kinds=["workflow.step"])
            if e.data.get("step") == step and e.data.get("kept")]


def _afterok_ids(run: _Run, step: str) -> list[str]:
    spec = run.ops.specs[step]
    return [j for d in spec.dependencies if d.kind == "afterok" for j in d.job_ids]


def _each_job_once(run: _Run) -> None:
    """Every job of the workflow is recorded with its step; once it ended none is left
    queued; no step has two live jobs."""
    jobs = run.store.list_jobs(limit=None)
    assert {(j.origin or {}).get("workflow") for j in jobs} == {run.wid}
    live = [(j.origin or {}).get("step") for j in jobs if not j.state.terminal]
    assert len(live) == len(set(live)), live
    if run.state()[0] in ("COMPLETED", "FAILED", "CANCELLED"):
        assert live == [], live


async def _stop_engine_midway(run: _Run, failed_job_id: str) -> None:
    """Job `failed_job_id` fails; its engine is stopped once the recorded operations say
    (`run.ops.asked`) it is midway through the retry; that engine is closed."""
    run.store.apply_state(failed_job_id, JobState.FAILED, exit_code=1)
    failing = asyncio.ensure_future(run.eng.advance(run.wid))
    await asyncio.wait_for(run.ops.asked.wait(), 10)
    failing.cancel()
    await asyncio.gather(failing, return_exceptions=True)
    await run.eng.close()


async def test_fault_a_held_fan_in_keeps_its_job_when_a_parent_on_another_site_is_retried(
        runs):
    """mid (gamma) fails once: it runs again on gamma; join (alpha), held for it with no
    dependency on its job, keeps its job (never cancelled nor submitted again), says why,
    and is released once every parent completed, its input copied from mid's new run."""
    run = await runs(FAN_IN)
    first_mid, join = run.job("mid"), run.job("join")
    assert run.phases()["join"] == "held"
    await run.end("mid", JobState.FAILED)
    await _until(run.eng, run.wid, {"mid": "queued"})
    new_mid = run.job("mid")
    assert new_mid.id != first_mid.id and run.submitted("mid") == ["gamma", "gamma"]
    shown = _status(run)["join"]
    assert (shown["job"], shown["state"], shown["site"]) == (join.id, "PENDING", "alpha")
    assert shown["reason"] == "kept in its queue (held) while mid runs again"
    assert _kept_events(run, "join") == [{"job": join.id, "rerun": "mid"}]
    assert join.id not in run.ops.cancels and run.submitted("join") == ["alpha"]
    await run.finish("left", "right", "mid")
    await _until(run.eng, run.wid, {"join": "released"})
    assert run.ops.releases == [join.id]
    assert [t[0] for t in run.ops.transfers] == [f"gamma:/w/gamma/{new_mid.token}/m.out"]
    assert _status(run)["join"]["reason"] is None  # the kept note went with its release
    await run.end("join")
    assert run.state() == ("COMPLETED", None)
    assert run.ops.cancels == [] and run.submitted("join") == ["alpha"]
    _each_job_once(run)


async def test_a_fan_in_with_an_afterok_on_the_failed_parent_is_submitted_again_behind_it(
        runs):
    """left (alpha) fails once: join's afterok on its job would never be met, so join is
    cancelled and submitted again, its afterok on left's new job, its input copied from
    left's new directory."""
    run = await runs(FAN_IN.replace("script: ./left}", "script: ./left, retries: 1}"))
    first_left, first_join = run.job("left"), run.job("join")
    assert _afterok_ids(run, "join") == [first_left.native_id]
    await run.end("left", JobState.FAILED)
    await _until(run.eng, run.wid, {"left": "queued", "join": "held"})
    new_left = run.job("left")
    assert first_join.id in run.ops.cancels and run.submitted("join") == ["alpha", "alpha"]
    assert _afterok_ids(run, "join") == [new_left.native_id]
    assert f"/w/alpha/{new_left.token}/l.out" in (run.ops.specs["join"].script or "")
    assert _kept_events(run, "join") == []
    _each_job_once(run)


async def test_fault_a_kept_fan_in_is_submitted_again_when_the_retry_lands_on_its_site(runs):
    """mid fails and is retried elsewhere: placement puts it on alpha, join's site. join,
    kept while mid waited, now takes mid as a same-site parent (an afterok, its input
    copied by its own lines), so it is submitted again behind mid's new job, saying why."""
    run = await runs(FAN_IN.replace("retries: 1}", "retries: 1, "
                                                   "on_failure: resubmit-elsewhere}"))
    first_join = run.job("join")
    await run.end("mid", JobState.FAILED)
    await _until(run.eng, run.wid, {"mid": "queued", "join": "held"})
    new_mid = run.job("mid")
    assert (new_mid.site, run.submitted("mid")) == ("alpha", ["gamma", "alpha"])
    assert _kept_events(run, "join") == [{"job": first_join.id, "rerun": "mid"}]
    assert first_join.id in run.ops.cancels and run.submitted("join") == ["alpha", "alpha"]
    assert sorted(_afterok_ids(run, "join")) == sorted(
        [run.job("left").native_id, new_mid.native_id])
    assert f"/w/alpha/{new_mid.token}/m.out" in (run.ops.specs["join"].script or "")
    said = [e.data.get("reason") for e in run.store.events_since(0, kinds=["workflow.step"])
            if e.data.get("step") == "join" and e.data.get("phase") == "waiting"]
    assert said == ["resubmitted: mid now runs on alpha, its site"]
    await run.finish("left", "right", "mid")
    await run.end("join")
    assert run.state() == ("COMPLETED", None)
    _each_job_once(run)


async def test_fault_steps_below_a_kept_fan_in_keep_their_jobs_too(runs):
    """post waits on join (kept) by an afterok on the same site: that afterok still holds,
    so post stays queued with its job; side, behind mid on mid's own site, is submitted
    again."""
    run = await runs(_with("""\
      - {name: post, site: alpha, needs: [join], script: ./post}
      - {name: side, site: gamma, needs: [mid], script: ./side}
    """))
    post, side, join = run.job("post"), run.job("side"), run.job("join")
    await run.end("mid", JobState.FAILED)
    await _until(run.eng, run.wid, {"mid": "queued", "side": "queued"})
    assert set(run.ops.cancels) == {side.id}
    assert (run.job("post").id, run.job("join").id) == (post.id, join.id)
    assert _afterok_ids(run, "post") == [join.native_id]
    assert _kept_events(run, "post") == [{"job": post.id, "rerun": "mid"}]
    assert run.submitted("side") == ["gamma", "gamma"]
    await run.finish("left", "right", "mid", "side", "join", "post")
    assert run.state() == ("COMPLETED", None)
    assert run.submitted("post") == ["alpha"]
    _each_job_once(run)


class _PausesMidway:
    """Recorded operations that pause midway so that a test can stop the engine there:
    `asked` is set as they pause; `go` lets them go on (never set: they wait for ever)."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.asked = asyncio.Event()
        self.go = asyncio.Event()


class _StallingCancel(_PausesMidway, _Ops):
    """A cancel waits for `go` (`asked` is set as it begins): the engine can stop midway."""

    async def cancel(self, job: Job) -> None:
        self.asked.set()
        await self.go.wait()
        await super().cancel(job)


async def test_fault_an_engine_stopped_mid_retry_leaves_the_rest_to_the_next_one(runs):
    """left fails; its engine stops while cancelling join (afterok on left's failed job).
    The next engine finishes the retry: join is submitted again once, behind left's new
    job; right2 (held on beta) is kept once; every step has one live job."""
    run = await runs(_with("""\
      - {name: right2, site: beta, needs: [left], script: ./right2}
    """).replace("script: ./left}", "script: ./left, retries: 1}"), _StallingCancel)
    first_join, right2 = run.job("join"), run.job("right2")
    await _stop_engine_midway(run, run.job("left").id)
    assert run.phases()["left"] == "waiting" and run.phases()["join"] == "held"
    run.ops.go.set()
    async with next_engine(run.ops, [run.wid]) as eng:
        run.eng = eng
        await _until(eng, run.wid, {"left": "queued", "join": "held", "right2": "held"})
        assert run.ops.cancels == [first_join.id]
        assert run.submitted("join") == ["alpha", "alpha"]
        assert _afterok_ids(run, "join") == [run.job("left").native_id]
        assert run.job("right2").id == right2.id and run.submitted("right2") == ["beta"]
        assert _kept_events(run, "right2") == [{"job": right2.id, "rerun": "left"}]
        assert run.store.get_workflow(run.wid).step("left").data["requeue_below"] is False
        _each_job_once(run)
        await run.finish("left", "right", "mid", "right2", "join")
        assert run.state() == ("COMPLETED", None)
        _each_job_once(run)


# -- a same-site child behind the failed job: its dependency moved where the site allows --

# join waits on left by an afterok (alpha), takes no input from it; mid's file is copied in
ORDERED = """\
    name: ordered
    steps:
      - {name: left, site: alpha, script: ./left, retries: 1}
      - {name: mid, site: gamma, script: ./mid}
      - name: join
        site: alpha
        needs: [left, mid]
        inputs:
          - {from: mid, path: m.out}
        script: ./join
      - {name: post, site: alpha, needs: [join], script: ./post}
    """


# what scontrol update (Slurm 22.05) writes to stderr, exiting 1, when the slurmctld refuses
# a dependency (a job it does not know, one that makes a loop): "<error> for job <JobId>"
REFUSED = "Job dependency problem for job {}"


class _Redepends(_Ops):
    """Sites whose queued jobs' dependencies can be changed (Slurm's `scontrol update
    Dependency=`): each change noted in `updates`; one to a site in `refusing` fails as
    the scheduler would say."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.updates: list[tuple[str, list[tuple[str, list[str]]]]] = []
        self.refusing: set[str] = set()

    def supports_dependency_update(self, site: str) -> bool:
        return True

    async def update_dependencies(self, job: Job, deps: list[Any]) -> None:
        if job.site in self.refusing:  # as the site layer says scontrol's (22.05) refusal
            argv = SlurmCommands().update_dependency_argv(job.native_id or "", deps)
            raise SiteError(f"{job.site}: {' '.join(argv)} exited with status 1: "
                            f"{REFUSED.format(job.native_id)}")
        self.updates.append((job.id, [(d.kind, d.job_ids) for d in deps]))


async def test_fault_a_same_site_child_keeps_its_job_its_afterok_moved_to_the_new_run(runs):
    """left (alpha) fails once and runs again on alpha: join's afterok on its failed job is
    moved to the new one (one update, no cancel, no second submit); post, behind join's
    kept job, stays too; join is shown PENDING with the same job and its event says so."""
    run = await runs(ORDERED, _Redepends)
    first_left, join, post = run.job("left"), run.job("join"), run.job("post")
    assert _afterok_ids(run, "join") == [first_left.native_id]
    await run.end("left", JobState.FAILED)
    await _until(run.eng, run.wid, {"left": "queued", "join": "held", "post": "queued"})
    new_left = run.job("left")
    assert run.ops.updates == [(join.id, [("afterok", [new_left.native_id])])]
    assert run.ops.cancels == [] and run.submitted("join") == ["alpha"]
    assert (run.job("join").id, run.job("post").id) == (join.id, post.id)
    shown = _status(run)["join"]
    assert (shown["job"], shown["state"], shown["reason"]) == (join.id, "PENDING", None)
    assert _kept_events(run, "join") == [{"job": join.id, "rerun": "left",
                                          "redepend": ["left"]}]
    moved = [e.data["redepended"] for e in run.store.events_since(0, kinds=["workflow.step"])
             if e.data.get("redepended")]
    assert moved == [{"job": join.id, "afterok": [new_left.native_id]}]
    await run.finish("mid", "left")
    await _until(run.eng, run.wid, {"join": "released"})
    await run.finish("join", "post")
    assert run.state() == ("COMPLETED", None)
    assert run.submitted("join") == ["alpha"] and run.submitted("post") == ["alpha"]
    _each_job_once(run)


async def test_a_dependency_change_the_site_refuses_submits_the_child_again(runs):
    """The site refuses the change: join is cancelled and submitted again behind left's new
    job, as before, saying why; post, behind join, follows it."""
    run = await runs(ORDERED, _Redepends)
    run.ops.refusing.add("alpha")
    join, post = run.job("join"), run.job("post")
    await run.end("left", JobState.FAILED)
    await _until(run.eng, run.wid, {"left": "queued", "join": "held", "post": "queued"})
    assert {join.id, post.id} <= set(run.ops.cancels)
    assert run.submitted("join") == ["alpha", "alpha"]
    new_left = run.job("left")
    assert _afterok_ids(run, "join") == [new_left.native_id]
    said = [e.data.get("reason") for e in run.store.events_since(0, kinds=["workflow.step"])
            if e.data.get("step") == "join" and e.data.get("phase") == "waiting"]
    assert said == [f"resubmitted after left is run again (alpha did not change its "
                    f"dependency: alpha: scontrol update JobId={join.native_id} "
                    f"Dependency=afterok:{new_left.native_id} exited with status 1: "
                    f"Job dependency problem for job {join.native_id})"]
    _each_job_once(run)


async def test_a_child_copying_inputs_from_the_failed_parent_is_submitted_again(runs):
    """join copies left's file by its own lines, from left's old directory: moving its
    dependency would not do, so it is submitted again; post's afterok on join's cancelled
    job is moved to join's new one."""
    run = await runs(ORDERED.replace("- {from: mid, path: m.out}",
                                     "- {from: mid, path: m.out}\n"
                                     "          - {from: left, path: l.out}"), _Redepends)
    join, post = run.job("join"), run.job("post")
    await run.end("left", JobState.FAILED)
    await _until(run.eng, run.wid, {"left": "queued", "join": "held"})
    new_left, new_join = run.job("left"), run.job("join")
    assert run.ops.cancels == [join.id] and run.submitted("join") == ["alpha", "alpha"]
    assert run.ops.updates == [(post.id, [("afterok", [new_join.native_id])])]
    assert run.job("post").id == post.id and run.submitted("post") == ["alpha"]
    assert f"/w/alpha/{new_left.token}/l.out" in (run.ops.specs["join"].script or "")
    _each_job_once(run)


def test_slurm_changes_a_queued_jobs_dependencies_by_scontrol_update():
    argv = SlurmCommands().update_dependency_argv("123", [
        Dependency(kind="afterok", job_ids=["456", "457"]),
        Dependency(kind="afterany", job_ids=["458"])])
    assert argv == ["scontrol", "update", "JobId=123",
                    "Dependency=afterok:456:457,afterany:458"]
    with pytest.raises(BadInput, match="not a job id: '45;rm'"):
        SlurmCommands().update_dependency_argv("123", [Dependency(job_ids=["45;rm"])])
    with pytest.raises(BadInput, match="whole-job kinds"):
        SlurmCommands().update_dependency_argv("123", [])


class _LosesRetrySubmit(_Redepends):
    """left's second submit reaches the queue but its answer is lost (found later)."""

    def submitted(self, spec: Any, site: str, *, hold: bool, token: str,
                  origin: dict[str, Any]) -> None:
        super().submitted(spec, site, hold=hold, token=token, origin=origin)
        if origin["step"] == "left" and origin["attempt"] == 1:
            raise SubmitUnsure("alpha: connection lost after sbatch", f"alpha:{token}", 60)


async def test_a_kept_child_its_scheduler_ends_is_submitted_again_not_a_cancel(runs):
    """While left's new job is not known yet, alpha ends join (an afterok on a failed job,
    kill_invalid_depend): join is submitted again behind left's new job once it is found;
    the workflow goes on (not stopped as if join were cancelled outside the workflow)."""
    run = await runs(ORDERED, _LosesRetrySubmit)
    join = run.job("join")
    await run.end("left", JobState.FAILED)
    assert run.phases()["left"] == "submitting" and run.phases()["join"] == "held"
    await run.end("join", JobState.CANCELLED)
    assert run.state()[0] == "PENDING"
    assert _status(run)["join"]["reason"] == (
        "resubmitted: alpha ended it while it waited on left's failed job")
    assert run.ops.updates == [] and run.submitted("join") == ["alpha"]
    left = run.store.job_by_token(run.store.get_workflow(run.wid).step("left").token)
    run.store.bind_native_id(left.token, "900")
    await run.eng.advance(run.wid)
    await _until(run.eng, run.wid, {"left": "queued", "join": "held", "post": "queued"})
    assert run.submitted("join") == ["alpha", "alpha"] and join.id not in run.ops.cancels
    assert _afterok_ids(run, "join") == ["900"]
    await run.finish("mid", "left", "join", "post")
    assert run.state() == ("COMPLETED", None)
    _each_job_once(run)


async def test_a_slurm_site_moves_a_queued_jobs_dependency_by_its_own_command(
        tmp_path, monkeypatch):
    """Through the engine's operations and the site layer, on local sites whose scheduler
    commands are recording fakes: a Slurm site runs `scontrol update` for the job; a PBS
    site is not asked (the step is submitted again there) and refuses, saying so."""
    from test_dependency_sites import sites_file

    from diamond_jupyter.federation import Federation

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    fed = Federation(sites_file(tmp_path), store=Store(tmp_path / "store.sqlite3"))
    try:
        ops = fed.workflow_engine.ops
        assert (ops.supports_dependency_update("alpha"),
                ops.supports_dependency_update("gamma")) == (True, False)
        job = Job(id="alpha:4242", site="alpha", native_id="4242", name="join")
        await ops.update_dependencies(job, [Dependency(kind="afterok", job_ids=["4250"]),
                                            Dependency(kind="afterany", job_ids=["4243"])])
        calls = (tmp_path / "fake-alpha" / "calls").read_text().splitlines()
        assert calls[-1] == "scontrol update JobId=4242 Dependency=afterok:4250,afterany:4243"
        refusing = tmp_path / "fake-alpha" / "scontrol"  # as 22.05's scontrol refuses
        refusing.unlink()
        refusing.write_text(f"#!/bin/sh\necho '{REFUSED.format(4242)}' >&2\nexit 1\n")
        refusing.chmod(0o755)
        with pytest.raises(DiamondError, match=r"exited with status 1: Job dependency "
                                               r"problem for job 4242$"):
            await ops.update_dependencies(job, [Dependency(kind="afterok", job_ids=["9"])])
        with pytest.raises(BadInput, match="gamma: pbs jobs' dependencies are not changed"):
            await ops.update_dependencies(Job(id="gamma:77.server", site="gamma",
                                              native_id="77.server", name="join"),
                                          [Dependency(job_ids=["78.server"])])
    finally:
        await fed.close()
        fed.store.close()


async def test_a_child_behind_a_resubmitted_auto_step_is_submitted_again_too(runs):
    """join (placed by the engine, on alpha beside left) copies left's file: it is submitted
    again, and placed anew; post's afterok on it cannot be moved to a job whose site is not
    known yet, so post is submitted again behind it (no update asked)."""
    run = await runs(ORDERED.replace("        site: alpha\n        needs: [left, mid]",
                                     "        needs: [left, mid]").replace(
        "- {from: mid, path: m.out}", "- {from: mid, path: m.out}\n"
                                      "          - {from: left, path: l.out}"), _Redepends)
    join, post = run.job("join"), run.job("post")
    assert (join.site, _afterok_ids(run, "post")) == ("alpha", [join.native_id])
    await run.end("left", JobState.FAILED)
    await _until(run.eng, run.wid, {"left": "queued", "join": "held", "post": "queued"})
    assert run.ops.updates == [] and {join.id, post.id} <= set(run.ops.cancels)
    assert _afterok_ids(run, "post") == [run.job("join").native_id]
    assert run.submitted("post") == ["alpha", "alpha"]
    _each_job_once(run)


class _StallingUpdate(_PausesMidway, _Redepends):
    """The first dependency change waits for `go` (`asked` set as it begins)."""

    async def update_dependencies(self, job: Job, deps: list[Any]) -> None:
        if not self.asked.is_set():
            self.asked.set()
            await self.go.wait()
        await super().update_dependencies(job, deps)


async def test_an_engine_stopped_before_moving_a_dependency_leaves_it_to_the_next_one(runs):
    """left fails; its engine stops while join's dependency is being moved to left's new
    job. The next engine moves it (join keeps its one job, never cancelled), and the
    workflow completes with every step's job submitted once per run."""
    run = await runs(ORDERED, _StallingUpdate)
    join = run.job("join")
    await _stop_engine_midway(run, run.job("left").id)
    assert run.store.get_workflow(run.wid).step("join").data["redepend"] == ["left"]
    run.ops.go.set()
    async with next_engine(run.ops, [run.wid]) as eng:
        run.eng = eng
        await _until(eng, run.wid, {"left": "queued", "join": "held"})
        new_left = run.job("left")
        assert run.ops.updates == [(join.id, [("afterok", [new_left.native_id])])]
        assert run.submitted("left") == ["alpha", "alpha"]
        assert run.ops.cancels == [] and run.submitted("join") == ["alpha"]
        await run.finish("mid", "left")
        await _until(eng, run.wid, {"join": "released"})
        await run.finish("join", "post")
        assert run.state() == ("COMPLETED", None)
        _each_job_once(run)


# -- what the kept job's record says: its dependencies as moved, its end from the new run --


def _recorded_afterok(store: Store, job_id: str) -> list[list[str]]:
    """The afterok job ids job `job_id`'s stored spec lists (what a restart resubmits)."""
    spec = store.get_job(job_id).spec
    return [d.job_ids for d in spec.dependencies if d.kind == "afterok"]


def _dependency_events(store: Store, job_id: str) -> list[dict[str, Any]]:
    return [e.data for e in store.events_since(0, kinds=["job.dependencies"], job_id=job_id)]


async def test_fault_a_moved_dependency_is_recorded_in_its_jobs_spec_across_a_restart(runs):
    """join's afterok moved to left's new job: join's stored spec lists that job, not the
    failed one (what `spec_to_run` hands a resubmit), in one `job.dependencies` event
    naming both; a store opened anew on the same file reads the same."""
    run = await runs(ORDERED, _Redepends)
    first_left, join = run.job("left"), run.job("join")
    assert _recorded_afterok(run.store, join.id) == [[first_left.native_id]]
    await run.end("left", JobState.FAILED)
    await _until(run.eng, run.wid, {"left": "queued", "join": "held"})
    new_left = run.job("left")
    assert _recorded_afterok(run.store, join.id) == [[new_left.native_id]]
    assert run.store.spec_to_run(run.store.get_job(join.id)).dependencies == [
        Dependency(kind="afterok", job_ids=[new_left.native_id])]
    [said] = _dependency_events(run.store, join.id)
    assert [d["job_ids"] for d in said["previous"]] == [[first_left.native_id]]
    assert [d["job_ids"] for d in said["dependencies"]] == [[new_left.native_id]]
    with Store(run.store.path) as reopened:
        assert _recorded_afterok(reopened, join.id) == [[new_left.native_id]]


class _AnswerLostUpdate(_PausesMidway, _Redepends):
    """The first dependency change reaches the scheduler, then its answer waits for `go`
    (`asked` set): the engine may stop after the change, before it is recorded."""

    async def update_dependencies(self, job: Job, deps: list[Any]) -> None:
        await super().update_dependencies(job, deps)
        if not self.asked.is_set():
            self.asked.set()
            await self.go.wait()


async def test_fault_an_engine_stopped_after_the_scheduler_moved_a_dependency_records_it(
        runs):
    """The scheduler took join's new afterok; the engine stopped before recording it. The
    next engine sets it again (the same change, harmless on Slurm) and records it once:
    join's spec lists left's new job, and join keeps its one job."""
    run = await runs(ORDERED, _AnswerLostUpdate)
    first_left, join = run.job("left"), run.job("join")
    await _stop_engine_midway(run, first_left.id)
    assert _recorded_afterok(run.store, join.id) == [[first_left.native_id]]
    run.ops.go.set()
    async with next_engine(run.ops, [run.wid]) as eng:
        run.eng = eng
        await _until(eng, run.wid, {"left": "queued", "join": "held"})
        new_left = run.job("left")
        assert run.store.get_workflow(run.wid).step("join").data.get("redepend") is None
        assert run.ops.updates == [(join.id, [("afterok", [new_left.native_id])])] * 2
        assert _recorded_afterok(run.store, join.id) == [[new_left.native_id]]
        assert len(_dependency_events(run.store, join.id)) == 1
        assert run.ops.cancels == [] and run.submitted("join") == ["alpha"]


class _Estimates(_Ops):
    """Each step is expected to run `runtimes[step]` seconds once its inputs exist (the
    time the engine gives, else now): the end placement would say; each ask's inputs time
    noted in `asked[step]`."""

    runtimes = {"mid": 100.0, "join": 10.0, "post": 5.0}

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.runtimes = dict(self.runtimes)
        self.asked: dict[str, list[datetime | None]] = {}

    async def expected(self, spec: Any, site: str, sources: dict, ready_at: Any) -> Estimate:
        self.asked.setdefault(spec.name, []).append(ready_at)
        runtime = self.runtimes.get(spec.name)
        if runtime is None:
            return Estimate(site, None, None)
        return Estimate(site, (ready_at or utcnow()) + timedelta(seconds=runtime), runtime)


def _ends(run: _Run, step: str) -> list[datetime]:
    """The ends step `step`'s `estimated` events recorded, in order."""
    return [datetime.fromisoformat(e.data["estimated"]["end"]) for e in run.store.events_since(
        0, kinds=["workflow.step"]) if e.data.get("step") == step and "estimated" in e.data]


async def _estimated(run: _Run, step: str, times: int) -> None:
    """Wait (on the engine's signal, at most 10 s) for step `step`'s `times`th estimate."""
    async def came() -> None:
        while len(_ends(run, step)) < times:
            run.eng.changed.clear()
            await run.eng.changed.wait()
    await asyncio.wait_for(came(), 10)


def _expected_end(run: _Run, step: str) -> datetime | None:
    end = run.store.get_workflow(run.wid).step(step).data.get("expected_end")
    return end and datetime.fromisoformat(end)


async def test_fault_a_kept_steps_expected_end_is_asked_again_from_the_new_run(runs):
    """mid's first run was expected to take 100 s; it fails, and its new run is expected to
    take 1000 s. join (kept, held) and post below it (kept, queued) are estimated again once
    mid's new job is in, from its new end: their records no longer say the failed run's."""
    run = await runs(_with("      - {name: post, site: alpha, needs: [join], "
                           "script: ./post}\n"), _Estimates)
    for step in ("mid", "join", "post"):
        await _estimated(run, step, 1)
    first_mid = _expected_end(run, "mid")
    assert _expected_end(run, "join") == first_mid + timedelta(seconds=10)
    join, post = run.job("join"), run.job("post")
    run.ops.runtimes["mid"] = 1000.0
    await run.end("mid", JobState.FAILED)
    await _until(run.eng, run.wid, {"mid": "queued", "join": "held", "post": "queued"})
    for step in ("mid", "join", "post"):
        await _estimated(run, step, 2)
    new_mid = _expected_end(run, "mid")
    assert new_mid - first_mid > timedelta(seconds=800)
    assert run.ops.asked["join"][-1] == new_mid
    assert _expected_end(run, "join") == new_mid + timedelta(seconds=10)
    assert _expected_end(run, "post") == new_mid + timedelta(seconds=15)
    assert (run.job("join").id, run.job("post").id) == (join.id, post.id)
    assert [len(_ends(run, s)) for s in ("mid", "join", "post")] == [2, 2, 2]


async def test_a_kept_steps_expected_end_is_asked_again_at_each_retry_above_it(runs):
    """mid fails twice (retries: 2) while join stays kept: join's end is asked again after
    each new run of mid is in, the last from mid's last run."""
    run = await runs(FAN_IN.replace("retries: 1}", "retries: 2}"), _Estimates)
    await _estimated(run, "join", 1)
    for n, runtime in ((2, 1000.0), (3, 3000.0)):
        run.ops.runtimes["mid"] = runtime
        await run.end("mid", JobState.FAILED)
        await _until(run.eng, run.wid, {"mid": "queued", "join": "held"})
        await _estimated(run, "mid", n)
        await _estimated(run, "join", n)
    last_mid = _expected_end(run, "mid")
    assert last_mid is not None and _expected_end(run, "join") == last_mid + timedelta(
        seconds=10)
    assert run.submitted("join") == ["alpha"] and _status(run)["mid"]["attempt"] == 2


# post waits on left alone, by an afterok on alpha: queued, not held
CHAIN = """\
    name: chain
    steps:
      - {name: left, site: alpha, script: ./left, retries: 1}
      - {name: post, site: alpha, needs: [left], script: ./post}
    """


class _UpdatedThenStopped(_PausesMidway, _Redepends):
    """The first dependency change reaches the site (noted) and then its engine stops
    before recording it (`asked` set, then waits for ever); later changes are refused for
    a job no longer pending, as Slurm refuses them (`Job is no longer pending execution`)."""

    async def update_dependencies(self, job: Job, deps: list[Any]) -> None:
        if job.state != JobState.PENDING:
            raise SiteError(f"{job.site}: scontrol: error: Job is no longer pending execution")
        await super().update_dependencies(job, deps)
        if not self.asked.is_set():
            self.asked.set()
            await self.go.wait()


async def test_fault_a_child_started_after_its_moved_dependency_is_not_cancelled(runs):
    """left fails; post's afterok is moved to left's new job, but its engine stops before
    recording that. With no engine, left's new job completes and post starts. The next
    engine must not take post's running job for one still waiting on the failed run: it
    runs on (before, the change was asked again, refused, and post was cancelled and
    submitted again: its run lost)."""
    run = await runs(CHAIN, _UpdatedThenStopped)
    post = run.job("post")
    await _stop_engine_midway(run, run.job("left").id)
    assert run.store.get_workflow(run.wid).step("post").data["redepend"] == ["left"]
    run.store.apply_state(run.job("left").id, JobState.COMPLETED, exit_code=0)
    run.store.apply_state(post.id, JobState.RUNNING)
    async with next_engine(run.ops, [run.wid]) as eng:
        run.eng = eng
        while True:  # until the next engine has looked at post (on its own signal)
            eng.changed.clear()
            if run.store.get_workflow(run.wid).step("post").data.get("redepend") is None:
                break
            await asyncio.wait_for(eng.changed.wait(), 10)
        assert post.id not in run.ops.cancels and run.submitted("post") == ["alpha"]
        assert run.job("post").id == post.id
        assert run.job("post").state == JobState.RUNNING
        await run.finish("post")
        assert run.state() == ("COMPLETED", None)
        _each_job_once(run)


class _StopsAfterCancellingJoin(_PausesMidway, _Ops):
    """The first cancel of `step`'s job reaches its site (recorded, the job CANCELLED) and
    then its engine stops before recording anything else (`asked` set, then waits)."""

    step = "join"

    async def cancel(self, job: Job) -> None:
        await super().cancel(job)
        if (job.origin or {}).get("step") == self.step and not self.asked.is_set():
            self.asked.set()
            await self.go.wait()


async def test_fault_an_engine_stopped_after_cancelling_a_kept_step_resubmits_it(runs):
    """mid fails and its retry is placed on alpha, join's site: join, kept meanwhile, is
    cancelled to be submitted again behind it, and the engine stops right after that
    cancel. The next engine takes the cancel as its own: join is submitted again and the
    workflow completes (before, join's cancelled job read as a failed run: the workflow
    FAILED, join having no retries)."""
    run = await runs(FAN_IN.replace("retries: 1}", "retries: 1, "
                                                   "on_failure: resubmit-elsewhere}"),
                     _StopsAfterCancellingJoin)
    first_join = run.job("join")
    await _stop_engine_midway(run, run.job("mid").id)
    assert run.job("join").state == JobState.CANCELLED
    async with next_engine(run.ops, [run.wid]) as eng:
        run.eng = eng
        await _until(eng, run.wid, {"mid": "queued", "join": "held"})
        assert run.state()[0] == "PENDING"
        assert run.ops.cancels == [first_join.id]
        assert run.submitted("join") == ["alpha", "alpha"]
        assert run.job("mid").site == "alpha"
        await run.finish("left", "right", "mid", "join")
        assert run.state() == ("COMPLETED", None)
        _each_job_once(run)


class _StopsAfterCancellingPost(_StopsAfterCancellingJoin):
    step = "post"


async def test_fault_an_engine_stopped_while_requeueing_below_a_resubmitted_step(runs):
    """As above, with post behind join by an afterok on alpha: join is submitted again, and
    the engine stops right after cancelling post (its afterok on join's cancelled job). The
    next engine submits post again behind join's new job; the workflow completes (before,
    post's cancelled job read as a cancel from outside: the workflow CANCELLED)."""
    run = await runs(_with("""\
      - {name: post, site: alpha, needs: [join], script: ./post}
    """).replace("retries: 1}", "retries: 1, on_failure: resubmit-elsewhere}"),
                     _StopsAfterCancellingPost)
    first_join, first_post = run.job("join"), run.job("post")
    await _stop_engine_midway(run, run.job("mid").id)
    assert run.job("post").state == JobState.CANCELLED
    async with next_engine(run.ops, [run.wid]) as eng:
        run.eng = eng
        await _until(eng, run.wid, {"mid": "queued", "join": "held", "post": "queued"})
        assert run.state()[0] == "PENDING"
        assert run.ops.cancels == [first_join.id, first_post.id]
        assert run.submitted("post") == ["alpha", "alpha"]
        assert _afterok_ids(run, "post") == [run.job("join").native_id]
        await run.finish("left", "right", "mid", "join", "post")
        assert run.state() == ("COMPLETED", None)
        _each_job_once(run)


# -- what the user is told about a kept job while its dependency moves --

NEVER = "DependencyNeverSatisfied"


def _stuck(run: _Run, job_id: str) -> list[str]:
    """The reasons of the "stuck" attention events the user got about job `job_id`."""
    return [e.data["reason"] for e in run.store.events_since(0, kinds=["job.attention"])
            if e.job_id == job_id and e.data.get("attention") == "stuck"]


async def test_fault_a_kept_child_is_not_called_stuck_while_its_dependency_moves(runs):
    """left fails; while join's afterok is being moved to left's new job, Slurm says join's
    dependency can never be satisfied: no "stuck" alert (the engine is mending it), neither
    then nor once it is moved; the workflow completes with join's one job."""
    run = await runs(ORDERED, _StallingUpdate)
    journal = Journal(run.store, {})
    join = run.job("join")
    run.store.apply_state(run.job("left").id, JobState.FAILED, exit_code=1)
    failing = asyncio.ensure_future(run.eng.advance(run.wid))
    await asyncio.wait_for(run.ops.asked.wait(), 10)
    journal.apply(join.id, JobState.PENDING, reason=NEVER, source="poll")
    assert _stuck(run, join.id) == []
    run.ops.go.set()
    await failing
    await _until(run.eng, run.wid, {"left": "queued", "join": "held"})
    journal.apply(join.id, JobState.PENDING, reason="Dependency", source="poll")
    await run.finish("mid", "left")
    await _until(run.eng, run.wid, {"join": "released"})
    await run.finish("join", "post")
    assert run.state() == ("COMPLETED", None)
    assert _stuck(run, join.id) == [] and run.ops.cancels == []


class _RefusesMoveAndCancel(_Redepends):
    """alpha refuses both the dependency change and the cancel of a queued job."""

    async def cancel(self, job: Job) -> None:
        raise SiteError(f"{job.site}: scancel {job.native_id} exited with status 1")


async def test_a_kept_child_whose_dependency_move_failed_is_called_stuck(runs):
    """The site refuses the move (and the cancel after it): join, left waiting on the failed
    job, is said to be left queued beside its new run, and called stuck when Slurm says so,
    as for any job."""
    run = await runs(ORDERED, _RefusesMoveAndCancel)
    run.ops.refusing.add("alpha")
    journal = Journal(run.store, {})
    join = run.job("join")
    await run.end("left", JobState.FAILED)
    await _until(run.eng, run.wid, {"left": "queued", "join": "held"})
    assert not run.store.get_workflow(run.wid).step("join").data.get("redepend")
    left_queued = _stuck(run, join.id)
    assert len(left_queued) == 1 and "alpha refused to cancel this one" in left_queued[0]
    journal.apply(join.id, JobState.PENDING, reason=NEVER, source="poll")
    assert _stuck(run, join.id) == [*left_queued, NEVER]


async def test_a_workflow_step_not_kept_for_a_retry_is_called_stuck(runs):
    """No retry under way: a step's job whose dependency can never be satisfied is called
    stuck, with what it means."""
    run = await runs(ORDERED, _Redepends)
    journal = Journal(run.store, {})
    join = run.job("join")
    journal.apply(join.id, JobState.PENDING, reason=NEVER, source="poll")
    assert _stuck(run, join.id) == [NEVER]
    [att] = [e.data for e in run.store.events_since(0, kinds=["job.attention"])]
    assert "never satisfies" in att["explanation"]
