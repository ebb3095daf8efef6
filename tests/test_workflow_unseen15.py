"""Workflow files, fifteenth sweep, on the real engine and store (the operations below the
facade recorded, `workflow_ops`; no test bed): fan-ins whose parents failed and were
cancelled, retries on one site and elsewhere, an engine stopped mid-workflow and the next
one resuming it, a site that stops answering (its submits, copies and cancels), outputs
moved between sites (files, directories, renamed, a grandparent's), a very wide fan-out;
and step files with mistakes (cycles, missing inputs, unknown sites, other tools' keys,
sizes that are no number of bytes).

Each run is asserted as a user sees it (`workflow status --json`: the workflow's state and
reason, each step's state, site and job) and that nothing is lost: every job submitted is
recorded, ended or cancelled, and submitted once per run. The tests named `fault` failed
before this sweep's fixes."""

from __future__ import annotations

from typing import Any

import pytest
from sweep_helpers import load, refused
from test_workflow_unseen import _Ops, _until
from test_workflow_unseen13 import _Run, runs_fixture  # noqa: F401 (the `runs` fixture)
from workflow_ops import HeldCopy, next_engine

from diamond_jupyter.model import Job, JobState, SiteError
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.engine import WorkflowEngine


class _Unreachable(_Ops):
    """Sites in `down` do not answer: a submit, copy from or to, or cancel there raises."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.down: set[str] = set()

    def _answer(self, site: str) -> None:
        if site in self.down:
            raise SiteError(f"{site} did not answer (no route to host)")

    async def submit(self, spec: Any, site: str, **kw: Any) -> Job:
        self._answer(site)
        return await super().submit(spec, site, **kw)

    async def transfer(self, src: str, dst: str, **kw: Any) -> Any:
        for end in (src, dst):
            self._answer(end.split(":", 1)[0])
        return await super().transfer(src, dst, **kw)

    async def cancel(self, job: Job) -> None:
        self._answer(job.site)
        await super().cancel(job)


class _SlowCopy(HeldCopy, _Ops):
    """A copy that does not end until `done` is set."""


class _MissingOutputs(_Ops):
    """A step's declared outputs named in `missing` were not written."""

    missing: tuple[str, ...] = ()

    async def missing_files(self, site: str, paths: list[str]) -> list[str]:
        return [p for p in paths if p.rsplit("/", 1)[-1] in self.missing]


def _shown(run: _Run) -> dict[str, tuple[str, str | None]]:
    """Each step's state and site as `workflow status --json` shows them."""
    return {s.name: (s.state.value, s.site) for s in run.eng.view(run.wid).steps}


def _nothing_lost(run: _Run) -> None:
    """Every job of the workflow is recorded with its step, and none is left queued once
    the workflow ended."""
    jobs = run.store.list_jobs(limit=None)
    assert {(j.origin or {}).get("workflow") for j in jobs} == {run.wid}
    steps = {s.name for s in run.store.get_workflow(run.wid).steps}
    assert {(j.origin or {}).get("step") for j in jobs} <= steps
    if run.state()[0] in ("COMPLETED", "FAILED", "CANCELLED"):
        live = [j.id for j in jobs if not j.state.terminal]
        assert live == [], live


FAN_IN = """\
    name: fan-in
    steps:
      - {name: left, site: alpha, script: ./left}
      - {name: right, site: beta, script: ./right}
      - {name: mid, site: gamma, script: ./mid}
      - {name: join, site: alpha, needs: [left, right, mid], script: ./join}
    """


# -- 1. fan-ins of failed and cancelled parents ---------------------------------------------

async def test_a_fan_in_whose_parent_fails_then_another_is_cancelled_ends_failed(runs):
    """left fails (no retries): the workflow is FAILED naming left; right and mid, still
    queued, are cancelled by it (not "outside"), the join never starts."""
    run = await runs(FAN_IN)
    right, mid, join = run.job("right"), run.job("mid"), run.job("join")
    await run.end("left", JobState.FAILED)
    state, reason = run.state()
    assert state == "FAILED" and reason.startswith("step 'left' failed: ")
    assert {right.id, mid.id, join.id} <= set(run.ops.cancels)
    assert _shown(run) == {"left": ("FAILED", "alpha"), "right": ("CANCELLED", "beta"),
                           "mid": ("CANCELLED", "gamma"), "join": ("CANCELLED", "alpha")}
    _nothing_lost(run)


async def test_a_fan_in_whose_parent_is_cancelled_outside_then_another_fails_stays_cancelled(
        runs):
    """right is cancelled by someone else (scancel): the workflow is CANCELLED saying so;
    left's failure afterwards changes nothing and submits nothing."""
    run = await runs(FAN_IN)
    await run.end("right", JobState.CANCELLED)
    said = run.state()
    assert said == ("CANCELLED", "step 'right' was cancelled outside the workflow")
    submits = len(run.ops.submits)
    run.store.apply_state(run.job("left").id, JobState.FAILED, exit_code=1)
    await run.eng.advance(run.wid)
    assert run.state() == said and len(run.ops.submits) == submits
    assert _shown(run)["join"][0] == "CANCELLED"
    _nothing_lost(run)


async def test_a_fan_in_with_one_completed_parent_keeps_it_done_when_another_fails(runs):
    """left completed, mid fails: left is shown COMPLETED (its results stay), not
    cancelled, and its job is never sent a cancel."""
    run = await runs(FAN_IN)
    left = run.job("left")
    await run.end("left")
    await run.end("mid", JobState.FAILED)
    assert run.state()[0] == "FAILED"
    assert _shown(run)["left"] == ("COMPLETED", "alpha")
    assert left.id not in run.ops.cancels
    _nothing_lost(run)


async def test_a_fan_in_parent_with_a_retry_fails_once_and_the_join_still_runs(runs):
    """mid fails once (retries: 1, on the same site): it is run again on gamma; the join,
    held on alpha for it (no dependency on its job), keeps its job and its place in the
    queue (it was cancelled and queued again: test_workflow_retry_keeps.py), and runs once
    every parent completed."""
    run = await runs(FAN_IN.replace("script: ./mid}", "script: ./mid, retries: 1}"))
    first, first_join = run.job("mid"), run.job("join")
    await run.end("mid", JobState.FAILED)
    await _until(run.eng, run.wid, {"mid": "queued"})
    assert run.job("mid").id != first.id and run.submitted("mid") == ["gamma", "gamma"]
    await run.finish("left", "right", "mid")
    await _until(run.eng, run.wid, {"join": "released"})
    await run.end("join")
    assert run.state() == ("COMPLETED", None)
    assert run.submitted("join") == ["alpha"] and first_join.id not in run.ops.cancels
    assert run.job("join").id == first_join.id
    _nothing_lost(run)


async def test_every_parent_of_a_fan_in_cancelled_by_the_user_cancels_once(runs):
    run = await runs(FAN_IN)
    await run.eng.cancel(run.wid)
    cancels = list(run.ops.cancels)
    await run.eng.cancel(run.wid)  # asked again: nothing more
    assert run.ops.cancels == cancels and len(set(cancels)) == 4
    assert run.state() == ("CANCELLED", "cancelled by request")
    assert {s for s, _ in _shown(run).values()} == {"CANCELLED"}
    _nothing_lost(run)


# -- 2. retries ------------------------------------------------------------------------------

async def test_retries_spent_on_one_site_fail_the_workflow_after_exactly_n_plus_one_runs(runs):
    run = await runs("""\
        name: flaky
        steps:
          - {name: sim, site: beta, retries: 2, script: ./sim}
        """)
    for _ in range(3):
        await _until(run.eng, run.wid, {"sim": "queued"})
        await run.end("sim", JobState.FAILED)
    assert run.submitted("sim") == ["beta"] * 3
    state, reason = run.state()
    assert state == "FAILED" and reason.startswith("step 'sim' failed: ")
    assert run.store.get_workflow(run.wid).step("sim").attempt == 2
    _nothing_lost(run)


async def test_a_retry_says_which_attempt_failed_where_while_the_next_is_queued(runs):
    run = await runs("""\
        name: flaky
        steps:
          - {name: sim, site: [alpha, gamma], retries: 1, on_failure: resubmit-elsewhere,
             script: ./sim}
        """)
    first = run.job("sim")
    await run.end("sim", JobState.FAILED)
    await _until(run.eng, run.wid, {"sim": "queued"})
    [step] = run.eng.view(run.wid).steps
    assert (step.attempt, step.site, step.state) == (1, "gamma", JobState.PENDING)
    [retry] = [e for e in run.store.events_since(0) if e.data.get("retry")]
    assert retry.data["failed_job"] == first.id
    assert retry.data["reason"].startswith("attempt 1 failed on alpha: ")
    assert run.submitted("sim") == ["alpha", "gamma"]


async def test_resubmit_elsewhere_on_a_step_pinned_to_one_site_retries_on_another(runs):
    """A pinned step's first attempt runs on its site, its retry on a site not tried yet
    (as the README says), and the view shows where it runs now."""
    run = await runs("""\
        name: pinned
        steps:
          - {name: sim, site: beta, retries: 1, on_failure: resubmit-elsewhere, script: ./s}
        """)
    await run.end("sim", JobState.FAILED)
    await _until(run.eng, run.wid, {"sim": "queued"})
    assert run.submitted("sim") == ["beta", "alpha"]
    assert _shown(run) == {"sim": ("PENDING", "alpha")}
    await run.end("sim")
    assert run.state() == ("COMPLETED", None)


async def test_a_timeout_counts_as_a_failure_and_is_retried(runs):
    run = await runs("name: t\nsteps:\n  - {name: sim, site: alpha, retries: 1, script: ./s}\n")
    await run.end("sim", JobState.TIMEOUT)
    await _until(run.eng, run.wid, {"sim": "queued"})
    assert run.submitted("sim") == ["alpha", "alpha"]
    await run.end("sim")
    assert run.state()[0] == "COMPLETED"


async def test_a_declared_output_missing_fails_the_step_naming_the_file(runs):
    class _NoResult(_MissingOutputs):
        missing = ("result.h5",)

    run = await runs("name: o\nsteps:\n  - {name: sim, site: alpha, outputs: [result.h5], "
                     "script: ./s}\n", _NoResult)
    await run.end("sim")
    state, reason = run.state()
    assert state == "FAILED" and "result.h5" in reason, reason
    _nothing_lost(run)


# -- 3. an engine stopped mid-workflow -------------------------------------------------------

async def test_an_engine_stopped_after_a_step_ended_unseen_submits_nothing_twice(tmp_path):
    """a (alpha) -> b (beta, held for it). The engine stops; a ends meanwhile; the next
    engine copies nothing twice, releases b once and the run completes."""
    with Store(tmp_path / "s.sqlite") as store:
        ops = _Ops(store)
        run = _Run(store, ops)
        await run.start(CROSS)
        await run.eng.close()
        store.apply_state(run.job("a").id, JobState.COMPLETED, exit_code=0)
        async with next_engine(ops, [run.wid]) as again:
            run.eng = again
            await _until(again, run.wid, {"b": "released"})
            assert sorted(n for n, _, _ in ops.submits) == ["a", "b"]
            assert len(ops.transfers) == 1 and ops.releases == [run.job("b").id]
            await run.end("b")
            assert run.state() == ("COMPLETED", None)


async def test_an_engine_stopped_mid_copy_copies_once_on_the_next(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        ops = _SlowCopy(store)
        run = _Run(store, ops)
        await run.start(CROSS)
        await run.end("a")
        await ops.started.wait()
        await run.eng.close()  # the copy is stopped with it
        again_ops = _Ops(store)
        async with next_engine(again_ops, [run.wid]) as again:
            run.eng = again
            await _until(again, run.wid, {"b": "released"})
            assert len(again_ops.transfers) == 1
            assert again_ops.submits == [] and again_ops.releases == [run.job("b").id]


async def test_an_engine_stopped_after_the_workflow_was_cancelled_resumes_nothing(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        ops = _Ops(store)
        run = _Run(store, ops)
        await run.start(CROSS)
        await run.eng.cancel(run.wid)
        await run.eng.close()
        again_ops = _Ops(store)
        async with next_engine(again_ops, []):
            assert again_ops.submits == [] and again_ops.cancels == []
        assert run.state() == ("CANCELLED", "cancelled by request")


async def test_two_engines_after_a_stop_drive_the_workflow_once(tmp_path):
    """Two engines start after the first stopped: one adopts the workflow, the other
    leaves it alone; b is submitted once in all."""
    with Store(tmp_path / "s.sqlite") as store:
        ops = _Ops(store)
        run = _Run(store, ops)
        await run.start(W_THREE)
        await run.eng.close()
        store.apply_state(run.job("a").id, JobState.COMPLETED, exit_code=0)
        one, two = _Ops(store), _Ops(store)
        one.engine_id, two.engine_id = "engine-2", "engine-3"
        e1, e2 = WorkflowEngine(one), WorkflowEngine(two)
        try:
            took = [await e1.resume(), await e2.resume()]
            assert sorted(map(len, took)) == [0, 1]
            assert one.submits + two.submits == []  # every step was queued already
        finally:
            await e1.close()
            await e2.close()


# -- 4. a site that stops answering ----------------------------------------------------------

async def test_a_step_whose_site_stops_answering_goes_in_once_it_answers(runs):
    """beta does not answer when b is submitted: b is not failed and not lost; once beta
    answers, b goes in once and the run completes."""
    run = await runs(CROSS.replace("site: beta", "site: gamma").replace(
        "{name: a, site: alpha", "{name: a, site: beta"), _Unreachable)
    assert run.submitted("b") == ["gamma"]
    await run.end("a")
    await _until(run.eng, run.wid, {"b": "released"})
    await run.end("b")
    assert run.state() == ("COMPLETED", None)


async def test_fault_a_submit_to_a_site_that_does_not_answer_is_shown_on_the_step(runs):
    """gamma is down when the workflow starts: its step stays PENDING, and its reason says
    gamma did not answer (before: nothing was said: the step sat with no reason)."""
    text = "name: d\nsteps:\n  - {name: a, site: alpha, script: ./a}\n" \
           "  - {name: g, site: gamma, script: ./g}\n"
    store_ops: list[_Unreachable] = []

    class _GammaDown(_Unreachable):
        def __init__(self, store: Store) -> None:
            super().__init__(store)
            self.down.add("gamma")
            store_ops.append(self)

    run = await runs(text, _GammaDown)
    rec = run.store.get_workflow(run.wid)
    assert rec.state not in ("FAILED", "CANCELLED") and rec.step("a").phase == "queued"
    assert rec.step("g").reason == (
        "gamma did not answer its submit (gamma did not answer (no route to host)): looking "
        "for its job in the site's queue by its token (not submitted again unless it is "
        "closed as never submitted)")
    assert _shown(run)["g"] == ("PENDING", "gamma")
    assert [n for n, _, _ in run.ops.submits] == ["a"]
    run.ops.down.clear()  # gamma answers again: the next look submits g once
    await run.eng.advance(run.wid)
    assert [n for n, _, _ in run.ops.submits] == ["a", "g"]
    assert run.store.get_workflow(run.wid).step("g").reason in (None, "")
    _nothing_lost(run)


async def test_a_copy_from_a_site_that_stops_answering_fails_the_step_saying_so(runs):
    run = await runs(CROSS, _Unreachable)
    run.ops.down.add("alpha")
    await run.end("a")
    await _until(run.eng, run.wid, {"b": "failed"})
    state, reason = run.state()
    assert state == "FAILED" and "alpha did not answer" in reason, reason
    assert run.job("b").id in run.ops.cancels or run.job("b").state.terminal
    _nothing_lost(run)


async def test_fault_a_copy_that_fails_is_retried_with_the_step_then_fails_the_workflow(
        runs):
    """b has a retry: its failed copy runs b again (a new job, a new copy); alpha still does
    not answer, so the workflow fails naming why; b's two jobs are both ended. Before: the
    retry waited for the next event or the engine's 15 s sweep."""
    run = await runs(CROSS.replace("script: ./b}", "script: ./b, retries: 1}"), _Unreachable)
    run.ops.down.add("alpha")
    first_b = run.job("b")
    await run.end("a")
    await _until(run.eng, run.wid, {"b": "failed"})
    assert run.submitted("b") == ["beta", "beta"] and first_b.id in run.ops.cancels
    state, reason = run.state()
    assert state == "FAILED" and "alpha did not answer" in reason, reason
    _nothing_lost(run)


async def test_a_cancel_that_a_site_cannot_hear_still_ends_the_workflow_cancelled(runs):
    run = await runs(FAN_IN, _Unreachable)
    run.ops.down.add("beta")
    await run.eng.cancel(run.wid)
    assert run.state()[0] == "CANCELLED"
    assert {run.job(n).id for n in ("left", "mid", "join")} <= set(run.ops.cancels)


# -- 5. outputs moved between sites ----------------------------------------------------------

CROSS = """\
    name: cross
    steps:
      - {name: a, site: alpha, script: ./a, outputs: [x.h5]}
      - {name: b, site: beta, needs: [a], inputs: [{from: a, path: x.h5}], script: ./b}
    """

W_THREE = """\
    name: three
    steps:
      - {name: a, site: alpha, script: ./a}
      - {name: b, site: alpha, needs: [a], script: ./b}
      - {name: c, site: alpha, needs: [b], script: ./c}
    """


async def test_a_directory_output_moves_recursively_under_its_new_name(runs):
    run = await runs("""\
        name: dir
        steps:
          - {name: a, site: alpha, script: ./a, outputs: [run1/]}
          - {name: b, site: gamma, needs: [a], inputs: [{from: a, path: run1/, as: in/}],
             script: ./b}
        """)
    await run.end("a")
    await _until(run.eng, run.wid, {"b": "released"})
    assert run.ops.transfers == [(f"alpha:{run.job('a').workdir}/run1",
                                  f"gamma:{run.job('b').workdir}/in", True)]


async def test_files_from_two_sites_meet_on_a_third_each_copied_once(runs):
    run = await runs("""\
        name: meet
        steps:
          - {name: a, site: alpha, script: ./a}
          - {name: b, site: beta, script: ./b}
          - {name: c, site: gamma, needs: [a, b], script: ./c,
             inputs: [{from: a, path: out.dat, as: a.dat}, {from: b, path: out.dat,
                       as: b.dat}]}
        """)
    await run.end("b")
    assert run.ops.transfers == []  # not before both ended: released together
    await run.end("a")
    await _until(run.eng, run.wid, {"c": "released"})
    assert sorted(t[:2] for t in run.ops.transfers) == [
        (f"alpha:{run.job('a').workdir}/out.dat", f"gamma:{run.job('c').workdir}/a.dat"),
        (f"beta:{run.job('b').workdir}/out.dat", f"gamma:{run.job('c').workdir}/b.dat")]


async def test_an_output_moved_there_and_back_goes_to_each_run_directory(runs):
    """a (alpha) -> b (beta) -> c (alpha, reading a's and b's files): a's file reaches c by
    its own job (same site), b's by a copy back to alpha."""
    run = await runs("""\
        name: back
        steps:
          - {name: a, site: alpha, script: ./a}
          - {name: b, site: beta, needs: [a], inputs: [{from: a, path: x}], script: ./b}
          - {name: c, site: alpha, needs: [b], script: ./c,
             inputs: [{from: a, path: x}, {from: b, path: y}]}
        """)
    await run.end("a")
    await _until(run.eng, run.wid, {"b": "released"})
    await run.end("b")
    await _until(run.eng, run.wid, {"c": "released"})
    assert [t[:2] for t in run.ops.transfers] == [
        (f"alpha:{run.job('a').workdir}/x", f"beta:{run.job('b').workdir}/x"),
        (f"beta:{run.job('b').workdir}/y", f"alpha:{run.job('c').workdir}/y")]
    assert f"{run.job('a').workdir}/x" in run.ops.specs["c"].script


# -- 6. very wide -----------------------------------------------------------------------------

async def test_fault_a_fan_out_of_500_steps_each_reading_a_file_is_copied_once_each(runs):
    """Before: each step's copy and estimate read every step of the workflow (500 x 501
    rows): 95 s on this machine, past the 10 s wait. Now each reads its own steps."""
    sims = [f"s{i:03d}" for i in range(500)]
    run = await runs("name: wide\nsteps:\n  - {name: split, site: alpha, script: ./split}\n"
                     + "".join(f"  - {{name: {s}, site: beta, needs: [split], "
                               f"inputs: [{{from: split, path: part{i}.dat}}], script: ./s}}\n"
                               for i, s in enumerate(sims)))
    assert len(run.ops.submits) == 501
    await run.end("split")
    await _until(run.eng, run.wid, dict.fromkeys(sims, "released"))
    assert len(run.ops.transfers) == 500
    assert len({dst for _, dst, _ in run.ops.transfers}) == 500
    await run.eng.cancel(run.wid)
    assert run.state()[0] == "CANCELLED"
    _nothing_lost(run)


# -- 7. mistakes in the file -----------------------------------------------------------------

@pytest.mark.parametrize("text, said", [
    ("name: c\nsteps:\n" + "".join(f"  - {{name: s{i}, site: alpha, script: ./x, "
                                    f"needs: [s{(i + 1) % 5}]}}\n" for i in range(5)),
     "workflow 'c' has a cycle: s0 -> s4 -> s3 -> s2 -> s1 -> s0"),
    ("name: c\nsteps:\n  - {name: a, site: alpha, script: ./a, inputs: [{from: b, path: x}]}\n"
     "  - {name: b, site: alpha, script: ./b, inputs: [{from: a, path: y}]}\n",
     "step 'a': inputs[0] is from 'b', which is not upstream of it (add it to needs"),
    ("name: c\nsteps:\n  - {name: a, site: alpha, script: ./a, inputs: [{from: a, path: x}]}\n",
     "step 'a': inputs[0] is from the step itself"),
    ("name: c\nsteps:\n  - {name: a, site: alpha, script: ./a}\n"
     "  - {name: b, site: alpha, needs: [a], script: ./b, inputs: [{from: zz, path: x}]}\n",
     "step 'b': inputs[0] is from unknown step 'zz' (steps: a, b)"),
    ("name: c\nsteps:\n  - {name: a, site: alpha, script: ./a}\n"
     "  - {name: b, site: alpha, needs: [a], script: ./b, inputs: [{from: a}]}\n",
     "steps['b'].inputs[0].path: is required"),
    ("name: c\nsteps:\n  - {name: a, site: delta, script: ./a}\n",
     "step 'a': unknown site 'delta' (known: alpha, beta, gamma, or auto)"),
    ("name: c\nsteps:\n  - {name: a, site: [alpha, Beta], script: ./a}\n",
     "unknown site 'Beta' in its list of sites [alpha, Beta] (did you mean beta?"),
    ("name: c\nsteps:\n  - {name: a, site: 'alpha:/scratch', script: ./a}\n",
     "step 'a': unknown site 'alpha:/scratch'"),
    ("cwlVersion: v1.2\nclass: Workflow\ninputs: {}\noutputs: {}\nsteps: {}\n",
     "a CWL document is not read here"),
    ("name: c\nsteps:\n  a: {run: ./a}\n",
     "not as a key of a mapping"),
    ("name: c\nsteps:\n  - {id: a, script: ./a}\n", "did you mean 'name'?"),
    ("name: c\nsteps:\n  - {name: a, site: alpha, script: ./a, scatter: x}\n",
     "parameter sweeps are not expanded"),
    ("name: c\nsteps:\n  - {name: a, site: alpha, script: ./a, requirements: {}}\n",
     "CWL's requirements and hints are not read"),
    ("name: c\nsteps:\n  - {name: a, site: alpha, gang: g, script: ./a}\n"
     "  - {name: b, site: beta, gang: g, needs: [a], script: ./b}\n",
     "gang 'g': step 'b' waits for 'a' of the same gang"),
    ("name: c\nsteps:\n  - {name: a, site: alpha, script: ./a, retries: 11}\n",
     "retries must be a whole number from 0 to 10, not 11"),
    ("name: c\nsteps:\n  - {name: a, site: alpha, script: ./a}\n"
     "  - {name: b, site: alpha, needs: [a, a], script: ./b}\n",
     "step 'b' needs 'a' twice"),
])
def test_mistakes_in_step_files_are_named_with_their_line(text, said):
    msg = refused(text)
    assert said in msg and "(line " in msg, msg


@pytest.mark.parametrize("size", ["-5", "1.5", ".nan", "9007199254740993"])
def test_fault_an_input_size_that_is_no_number_of_bytes_says_what_would_be(size):
    """Before: pydantic's words ("Input should be greater than or equal to 0"), naming no
    unit and nothing to write instead."""
    msg = refused("name: c\nsteps:\n  - {name: a, site: alpha, script: ./a}\n"
                  "  - {name: b, site: alpha, needs: [a], script: ./b, "
                  f"inputs: [{{from: a, path: x, size: {size}}}]}}\n")
    assert "steps['b'].inputs[0].size: size " in msg and "(line 4)" in msg, msg
    assert "is not a number of bytes: a whole number from 0 to 9007199254740992 (e.g. " \
           "1048576, 100M, 2G)" in msg, msg


def test_sizes_written_as_the_format_means_are_read_in_bytes():
    base = ("name: c\nsteps:\n  - {name: a, site: alpha, script: ./a}\n  - {name: b, "
            "site: alpha, needs: [a], script: ./b, inputs: [{from: a, path: x, size: %s}]}\n")
    assert [load(base % v).step("b").inputs[0].size for v in ("2.0", "0", "'2G'", "1.5M")] \
        == [2, 0, 2 << 30, 1572864]
