"""Workflow files, sixteenth sweep, on the real engine and store (the operations below the
facade recorded, `workflow_ops`; no test bed): diamond-shaped DAGs with a branch failing
under `stop` and under `resubmit-elsewhere`, inputs whose paths hold blanks and non-ASCII
letters, gangs across two sites one of which stops answering, a cancel during a
cross-site copy, an engine stopped between a step's end and its downstream's release,
files written with YAML anchors and merge keys, and steps that wait only on order.

Each run is asserted as a user sees it (`workflow status --json`: the workflow's state and
reason, each step's state, site and job) and that nothing is lost: every job submitted is
recorded, ended or cancelled. The tests named `fault` failed before this sweep's fixes."""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Callable

from sweep_helpers import load, refused
from test_workflow_unseen import _Ops, _until
from test_workflow_unseen13 import _Run, runs_fixture  # noqa: F401 (the `runs` fixture)
from test_workflow_unseen15 import _nothing_lost, _shown, _SlowCopy, _Unreachable
from workflow_ops import Held, next_engine

from diamond_jupyter.model import Job, JobState, SiteError
from diamond_jupyter.store import Store


async def _until_true(run: _Run, reached: Callable[[], bool]) -> None:
    """Wait (on the engine's own signal, at most 10 s) until `reached()`."""
    async def wait() -> None:
        while True:
            run.eng.changed.clear()
            if reached():
                return
            await run.eng.changed.wait()
    await asyncio.wait_for(wait(), 10)


DIAMOND = """\
    name: diamond
    steps:
      - {name: top, site: alpha, script: ./top, outputs: [seed.dat]}
      - {name: left, site: alpha, needs: [top], inputs: [{from: top, path: seed.dat}],
         script: ./left}
      - {name: right, site: beta, needs: [top], inputs: [{from: top, path: seed.dat}],
         script: ./right}
      - {name: bottom, site: gamma, needs: [left, right], script: ./bottom,
         inputs: [{from: left, path: l.out}, {from: right, path: r.out}]}
    """


# -- 1. a diamond whose branch fails ---------------------------------------------------------

async def test_a_diamond_whose_branch_fails_under_stop_ends_failed_keeping_what_completed(
        runs):
    """left fails (on_failure stop, no retries): FAILED naming left; top stays COMPLETED,
    right (still queued) and bottom are cancelled by the workflow; bottom never released."""
    run = await runs(DIAMOND)
    await run.end("top")
    await _until(run.eng, run.wid, {"right": "released"})
    right, bottom = run.job("right"), run.job("bottom")
    await run.end("left", JobState.FAILED)
    state, reason = run.state()
    assert state == "FAILED" and reason.startswith("step 'left' failed: "), reason
    assert _shown(run) == {"top": ("COMPLETED", "alpha"), "left": ("FAILED", "alpha"),
                           "right": ("CANCELLED", "beta"), "bottom": ("CANCELLED", "gamma")}
    assert {right.id, bottom.id} <= set(run.ops.cancels)
    assert bottom.id not in run.ops.releases
    _nothing_lost(run)


async def test_a_diamond_whose_branch_fails_under_resubmit_elsewhere_completes(runs):
    """left fails once (resubmit-elsewhere, retries 1): run again on beta, a site it has not
    tried; its input comes to beta by a copy from top's directory; bottom is released only
    once both branches completed, with the new run's output copied, not the failed one's."""
    run = await runs(DIAMOND.replace("site: alpha, needs: [top]",
                                     "site: alpha, needs: [top], retries: 1, "
                                     "on_failure: resubmit-elsewhere"))
    await run.end("top")
    first_left = run.job("left")
    await run.end("left", JobState.FAILED)
    await _until(run.eng, run.wid, {"left": "released"})
    again = run.job("left")
    assert run.submitted("left") == ["alpha", "beta"] and again.id != first_left.id
    assert (f"alpha:{run.job('top').workdir}/seed.dat", f"beta:{again.workdir}/seed.dat",
            False) in run.ops.transfers
    await run.end("right")
    assert run.job("bottom").id not in run.ops.releases  # left's new run still going
    await run.end("left")
    await _until(run.eng, run.wid, {"bottom": "released"})
    copied = {src for src, _, _ in run.ops.transfers}
    assert f"beta:{again.workdir}/l.out" in copied
    assert f"alpha:{first_left.workdir}/l.out" not in copied
    await run.end("bottom")
    assert run.state() == ("COMPLETED", None)
    _nothing_lost(run)


async def test_a_diamond_whose_same_site_bottom_follows_a_branch_moved_elsewhere(runs):
    """bottom waits on alpha for left by the scheduler's afterok; left fails and runs again
    on beta: bottom no longer waits on the failed job (it would never start: afterok on a
    FAILED job), it starts once the new run completed, with l.out copied from beta."""
    run = await runs(DIAMOND.replace("site: alpha, needs: [top]",
                                     "site: alpha, needs: [top], retries: 1, "
                                     "on_failure: resubmit-elsewhere")
                     .replace("site: gamma, needs: [left, right]",
                              "site: alpha, needs: [left, right]"))
    await run.end("top")
    first_left = run.job("left")
    await run.end("left", JobState.FAILED)
    await _until(run.eng, run.wid, {"left": "released"})
    bottom = run.job("bottom")
    waits_on = {i for d in run.store.get_job(bottom.id).spec.dependencies for i in d.job_ids}
    assert first_left.native_id not in waits_on, waits_on
    await run.finish("right", "left")
    await _until(run.eng, run.wid, {"bottom": "released"})
    assert f"beta:{run.job('left').workdir}/l.out" in {src for src, _, _ in run.ops.transfers}
    await run.end("bottom")
    assert run.state() == ("COMPLETED", None)
    _nothing_lost(run)


async def test_a_diamond_whose_retries_elsewhere_are_spent_fails_after_one_run_per_site(runs):
    run = await runs(DIAMOND.replace("site: beta, needs: [top]",
                                     "site: [beta, gamma], needs: [top], retries: 1, "
                                     "on_failure: resubmit-elsewhere"))
    await run.end("top")
    await _until(run.eng, run.wid, {"right": "released"})
    await run.end("right", JobState.FAILED)
    await _until(run.eng, run.wid, {"right": "released"})
    await run.end("right", JobState.FAILED)
    assert run.submitted("right") == ["beta", "gamma"]
    state, reason = run.state()
    assert state == "FAILED" and reason.startswith("step 'right' failed: "), reason
    assert _shown(run)["bottom"][0] == "CANCELLED"
    _nothing_lost(run)


# -- 2. paths with blanks and non-ASCII letters ---------------------------------------------

ODD = "my data/résumé ü 数据.txt"


async def test_an_input_with_blanks_and_unicode_is_copied_across_sites_as_written(runs):
    run = await runs(f"""\
        name: odd
        steps:
          - {{name: a, site: alpha, script: ./a}}
          - {{name: b, site: beta, needs: [a], script: ./b,
             inputs: [{{from: a, path: "{ODD}", as: "entrée ü.txt"}}]}}
        """)
    await run.end("a")
    await _until(run.eng, run.wid, {"b": "released"})
    assert run.ops.transfers == [(f"alpha:{run.job('a').workdir}/{ODD}",
                                  f"beta:{run.job('b').workdir}/entrée ü.txt", False)]


async def test_an_input_with_blanks_and_unicode_on_one_site_is_copied_by_quoted_lines(runs):
    """Same site: the step's own first lines copy it, each path one shell word."""
    run = await runs(f"""\
        name: odd
        steps:
          - {{name: a, site: alpha, script: ./a}}
          - {{name: b, site: alpha, needs: [a], script: ./b,
             inputs: [{{from: a, path: "{ODD}"}}]}}
        """)
    script = run.ops.specs["b"].script
    source = f"{run.job('a').workdir}/{ODD}"
    assert shlex.quote(source) in script, script
    assert run.ops.transfers == []


# -- 3. gangs across two sites, one stops answering ------------------------------------------

GANG = """\
    name: coupled
    steps:
      - {name: ocean, site: alpha, gang: esm, script: ./ocean}
      - {name: atmos, site: beta, gang: esm, script: ./atmos}
    """


async def test_a_gang_whose_other_site_does_not_answer_releases_no_member_alone(runs):
    """beta does not answer atmos's submit: ocean, held on alpha, is not released alone;
    once beta answers, atmos goes in and both are released together, once each."""

    class _BetaDown(_Unreachable):
        def __init__(self, store: Store) -> None:
            super().__init__(store)
            self.down.add("beta")

    run = await runs(GANG, _BetaDown)
    assert run.submitted("ocean") == ["alpha"] and run.ops.releases == []
    assert run.state()[0] not in ("FAILED", "CANCELLED")
    run.ops.down.clear()
    await run.eng.advance(run.wid)
    await _until(run.eng, run.wid, {"ocean": "released", "atmos": "released"})
    assert sorted(run.ops.releases) == sorted([run.job("ocean").id, run.job("atmos").id])
    assert [n for n, _, held in run.ops.submits] == ["ocean", "atmos"]
    assert all(held for _, _, held in run.ops.submits)


class _BetaReleaseDown(_Ops):
    """beta takes submits, then stops answering before the gang's release (`down`): its
    release raises, and its job, asked again, is still held (JobHeldUser)."""

    down = True

    async def release(self, job: Job) -> None:
        if job.site == "beta" and self.down:
            raise SiteError("beta did not answer (no route to host)")
        await super().release(job)

    async def refresh(self, job: Job) -> Job:
        now = self.store.get_job(job.id)
        if now.state == JobState.PENDING and job.id not in self.releases:
            return now.model_copy(update={"reason": "JobHeldUser"})
        return now


async def test_fault_a_gang_member_whose_release_fails_leaves_no_member_running_alone(runs):
    """ocean is released on alpha, atmos's release on beta does not go through (beta stops
    answering after the submit). Before: ocean ran alone while atmos stayed held, for as
    long as beta was down. Now ocean's job is cancelled and it goes in again, held; once
    beta answers, both are released together and the run completes."""
    run = await runs(GANG, _BetaReleaseDown)
    first_ocean = run.job("ocean")
    await _until_true(run, lambda: first_ocean.id in run.ops.cancels
                      and run.phases() == {"ocean": "ready", "atmos": "ready"})
    running = [j.id for j in run.store.list_jobs(limit=None) if j.state == JobState.RUNNING]
    assert running == [], running
    assert run.submitted("ocean") == ["alpha", "alpha"] and run.submitted("atmos") == ["beta"]
    said = [e.data.get("reason") for e in run.store.events_since(0, kinds=["workflow.step"])
            if e.data.get("step") == "ocean"]
    assert "resubmitted with its gang after atmos could not be released" in said, said
    run.ops.down = False
    await run.eng.advance(run.wid)
    await _until(run.eng, run.wid, {"ocean": "released", "atmos": "released"})
    await run.finish("ocean", "atmos")
    assert run.state() == ("COMPLETED", None)
    _nothing_lost(run)


async def test_fault_a_gang_whose_site_cannot_be_asked_says_so_on_its_members(runs):
    """beta does not answer whether it can start atmos now: no member is released, and
    each member's step says why the gang waits (before: the advance failed with a logged
    error, the steps said nothing, and the gang was looked at again only by the 15 s
    sweep). Once beta answers, both are released together."""

    class _BetaSilent(_Ops):
        silent = True

        async def can_start_now(self, job: Job) -> bool:
            if job.site == "beta" and self.silent:
                raise SiteError("beta did not answer (no route to host)")
            return True

    run = await runs(GANG, _BetaSilent)
    await _until_true(run, lambda: all(s.reason for s in run.eng.view(run.wid).steps))
    assert run.ops.releases == []
    assert {s.reason for s in run.eng.view(run.wid).steps} == {
        "gang esm waits: atmos (beta did not answer: beta did not answer (no route to "
        "host)) cannot start yet"}
    run.ops.silent = False
    await run.eng.advance(run.wid)
    await _until(run.eng, run.wid, {"ocean": "released", "atmos": "released"})
    assert len(run.ops.releases) == 2
    assert [s.reason for s in run.eng.view(run.wid).steps] == [None, None]


async def test_a_gang_whose_member_site_goes_down_while_running_is_cancelled_whole(runs):
    """Both members run; atmos's site loses it (FAILED, no retries): the workflow fails and
    ocean, still running on alpha, is cancelled, not left running alone."""
    run = await runs(GANG)
    await _until(run.eng, run.wid, {"ocean": "released", "atmos": "released"})
    ocean = run.job("ocean")
    await run.end("atmos", JobState.FAILED)
    state, reason = run.state()
    assert state == "FAILED" and "atmos" in reason, reason
    assert ocean.id in run.ops.cancels
    _nothing_lost(run)


# -- 4. a cancel during a cross-site copy -----------------------------------------------------

CROSS = """\
    name: cross
    steps:
      - {name: a, site: alpha, script: ./a, outputs: [x.h5]}
      - {name: b, site: beta, needs: [a], inputs: [{from: a, path: x.h5}], script: ./b}
    """


async def test_a_cancel_during_a_cross_site_copy_never_releases_the_downstream(runs):
    run = await runs(CROSS, _SlowCopy)
    b = run.job("b")
    await run.end("a")
    await asyncio.wait_for(run.ops.started.wait(), 10)
    await run.eng.cancel(run.wid)
    assert run.state() == ("CANCELLED", "cancelled by request")
    run.ops.done.set()  # the copy ends after the cancel
    await run.eng.advance(run.wid)
    assert b.id in run.ops.cancels and b.id not in run.ops.releases
    assert _shown(run) == {"a": ("COMPLETED", "alpha"), "b": ("CANCELLED", "beta")}
    _nothing_lost(run)


# -- 5. an engine stopped between a step's end and its downstream's release ------------------

class _HeldRelease(Held, _Ops):
    """A release that does not return until `done` is set."""

    async def release(self, job: Job) -> None:
        await self.held_until_done()
        await super().release(job)


async def _stopped_mid_hold(run: _Run) -> None:
    """a ends; the engine stops once the held operation that follows has begun."""
    await run.end("a")
    await asyncio.wait_for(run.ops.started.wait(), 10)
    await run.eng.close()


async def _next_engine_completes(run: _Run, again: _Ops) -> None:
    """The next engine, on `again`, releases b, submitting nothing and copying nothing again
    (one copy in all); the run completes once b ends."""
    async with next_engine(again, [run.wid]) as eng:
        run.eng = eng
        await _until(eng, run.wid, {"b": "released"})
        assert again.submits == []
        assert len(run.ops.transfers) + len(again.transfers) == 1
        await run.end("b")
        assert run.state() == ("COMPLETED", None)


async def test_an_engine_stopped_while_releasing_the_downstream_releases_it_on_the_next(
        tmp_path):
    """a ended and its file was copied; the engine stops while b's release is on its way:
    the next engine copies nothing again, submits nothing, releases b, and the run
    completes."""
    with Store(tmp_path / "s.sqlite") as store:
        run = _Run(store, _HeldRelease(store))
        await run.start(CROSS)
        await _stopped_mid_hold(run)
        again = _Ops(store)
        await _next_engine_completes(run, again)
        assert again.releases == [run.job("b").id]


class _Gated(_Ops):
    """Every site takes gates: a cross-site step waits behind a held gate job."""

    def supports_gate(self, site: str) -> bool:
        return True


class _GateCancelHeld(Held, _Gated):
    """A gate's cancel does not return until `done` is set."""

    async def cancel(self, job: Job) -> None:
        if (job.origin or {}).get("gate"):
            await self.held_until_done()
        await super().cancel(job)


async def test_an_engine_stopped_while_cancelling_the_gate_lets_the_next_one_cancel_it(
        tmp_path):
    """b waits on beta behind its gate (afterany); a ended, its file was copied, and the
    engine stops while the gate's cancel is on its way: the next engine cancels the gate
    once, copies nothing again and submits nothing; b starts and the run completes."""
    with Store(tmp_path / "s.sqlite") as store:
        ops = _GateCancelHeld(store)
        run = _Run(store, ops)
        await run.start(CROSS)
        gates = [j for j in store.list_jobs(limit=None) if (j.origin or {}).get("gate")]
        [gate] = gates
        [dep] = ops.specs["b"].dependencies
        assert (dep.kind, dep.job_ids) == ("afterany", [gate.native_id])
        await _stopped_mid_hold(run)
        again = _Gated(store)
        await _next_engine_completes(run, again)
        assert again.cancels == [gate.id]


async def test_a_cancel_during_a_copy_behind_a_gate_cancels_the_step_and_its_gate(runs):
    class _SlowGated(_SlowCopy):
        def supports_gate(self, site: str) -> bool:
            return True

    run = await runs(CROSS, _SlowGated)
    [gate] = [j for j in run.store.list_jobs(limit=None) if (j.origin or {}).get("gate")]
    await run.end("a")
    await asyncio.wait_for(run.ops.started.wait(), 10)
    await run.eng.cancel(run.wid)
    run.ops.done.set()
    await run.eng.advance(run.wid)
    assert {gate.id, run.job("b").id} <= set(run.ops.cancels)
    assert run.state() == ("CANCELLED", "cancelled by request")
    live = [j.id for j in run.store.list_jobs(limit=None) if not j.state.terminal]
    assert live == [], live


# -- 6. YAML anchors and merge keys ----------------------------------------------------------

MERGED = """\
    name: merged
    steps:
      - &sim {name: s1, site: beta, retries: 1, script: ./sim}
      - {<<: *sim, name: s2}
      - {<<: *sim, name: post, site: gamma, needs: &both [s1, s2], script: ./post}
      - {name: report, site: gamma, needs: *both, script: ./report}
    """


async def test_steps_written_with_an_anchor_and_merge_keys_run_as_if_written_out(runs):
    wf = load(MERGED)
    assert [(s.name, s.site, s.retries, s.needs) for s in wf.steps] == [
        ("s1", "beta", 1, []), ("s2", "beta", 1, []), ("post", "gamma", 1, ["s1", "s2"]),
        ("report", "gamma", 0, ["s1", "s2"])]
    run = await runs(MERGED)
    await run.end("s1", JobState.FAILED)  # its merged retries: run again
    await _until(run.eng, run.wid, {"s1": "queued"})
    assert run.submitted("s1") == ["beta", "beta"]
    await run.finish("s1", "s2")
    await _until(run.eng, run.wid, {"post": "released", "report": "released"})
    await run.finish("post", "report")
    assert run.state() == ("COMPLETED", None)


def test_a_merge_key_that_brings_an_unknown_field_is_refused_naming_it():
    said = refused("""\
        name: merged
        steps:
          - &sim {name: s1, site: beta, script: ./sim, walltime: 1h}
          - {<<: *sim, name: s2}
        """)
    assert "walltime" in said, said


def test_a_merge_of_several_anchors_takes_each_key_from_the_first_that_gives_it():
    wf = load("""\
        name: m
        steps:
          - &a {name: a, site: alpha, script: ./a, retries: 2}
          - &b {name: b, site: beta, script: ./b, retries: 1, on_failure: resubmit-elsewhere}
          - {<<: [*b, *a], name: c, needs: [a, b]}
        """)
    c = wf.step("c")
    assert (c.site, c.retries, c.on_failure, c.script, c.needs) == (
        "beta", 1, "resubmit-elsewhere", "./b", ["a", "b"])


def test_a_merge_key_given_twice_in_one_step_is_refused_saying_how_to_merge_several():
    said = refused("""\
        name: m
        steps:
          - {name: a, site: alpha, script: ./a}
          - {<<: {site: beta}, name: b, needs: [a], script: ./b, <<: {site: gamma}}
        """)
    assert "key '<<' is given twice" in said and "<<: [*a, *b]" in said, said


def test_a_step_name_of_non_ascii_letters_is_refused_naming_the_letter():
    said = refused("name: m\nsteps:\n  - {name: \"步骤\", site: alpha, script: ./a}\n")
    assert "'步' is not one of them" in said and "ASCII only" in said, said


# -- 7. steps that wait only on order ---------------------------------------------------------

def _order(b_site: str) -> str:
    """A workflow whose step b (on `b_site`) needs a (on alpha) but takes no input of it."""
    return ("name: order\nsteps:\n  - {name: a, site: alpha, script: ./a}\n"
            f"  - {{name: b, site: {b_site}, needs: [a], script: ./b}}\n")


async def test_a_step_with_no_inputs_waits_for_its_upstream_on_another_site_copying_nothing(
        runs):
    run = await runs(_order("beta"))
    b = run.job("b")
    assert b.id not in run.ops.releases  # held for a, which has not ended
    await run.end("a")
    await _until(run.eng, run.wid, {"b": "released"})
    assert run.ops.transfers == [] and run.ops.releases == [b.id]
    await run.end("b")
    assert run.state() == ("COMPLETED", None)


async def test_a_step_with_no_inputs_on_the_same_site_waits_by_the_schedulers_afterok(runs):
    run = await runs(_order("alpha"))
    a = run.job("a")
    [dep] = run.ops.specs["b"].dependencies
    assert (dep.kind, dep.job_ids) == ("afterok", [a.native_id])
    assert run.ops.transfers == []


async def test_a_step_waiting_on_order_is_never_released_when_its_upstream_fails(runs):
    run = await runs(_order("beta"))
    b = run.job("b")
    await run.end("a", JobState.FAILED)
    assert run.state()[0] == "FAILED"
    assert b.id in run.ops.cancels and b.id not in run.ops.releases
    _nothing_lost(run)

