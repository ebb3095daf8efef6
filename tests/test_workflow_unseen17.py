"""Workflow files, seventeenth sweep, on the real engine and store (the operations below the
facade recorded, `workflow_ops`; no test bed): a step's site going down while it runs,
an upstream COMPLETED without the output it declared, cycles and steps needing themselves
written in ways the earlier sweeps did not, a step renamed between two runs, a fan-out of
1000 steps, an engine stopped between a step's release and its start, and cancelled
workflows whose held steps must not outlive them.

Each run is asserted as a user sees it (`workflow status --json`: the workflow's state and
reason, each step's state and site) and that nothing is lost: every job submitted is
recorded with its step, and none is left queued once the workflow ended."""

from __future__ import annotations

import asyncio
import time

from sweep_helpers import load, refused
from test_workflow_unseen import _Ops, _until
from test_workflow_unseen13 import _Run, runs_fixture  # noqa: F401 (the `runs` fixture)
from test_workflow_unseen15 import _MissingOutputs, _nothing_lost, _shown, _Unreachable
from test_workflow_unseen16 import _until_true
from workflow_ops import next_engine

from diamond_jupyter.model import Job, JobState
from diamond_jupyter.store import Store


def _live(run: _Run) -> list[Job]:
    """The workflow's jobs not ended (queued, held or running)."""
    return [j for j in run.store.list_jobs(limit=None) if not j.state.terminal]


# -- 1. a step's site goes down while it runs -----------------------------------------------

class _BetaDown(_Unreachable):
    """beta answers until the test says it is down."""


MOVE = """\
    name: move
    steps:
      - {name: a, site: alpha, script: ./a, outputs: [x.dat]}
      - {name: b, site: [beta, gamma], needs: [a], inputs: [{from: a, path: x.dat}],
         script: ./b, retries: 1, on_failure: resubmit-elsewhere}
    """


async def test_a_step_whose_site_goes_down_while_it_runs_runs_again_elsewhere(runs):
    """b runs on beta; beta goes down and its job is lost (FAILED): b goes in on gamma, its
    input copied from a's directory afresh, and the run completes; beta is not asked again."""
    run = await runs(MOVE, _BetaDown)
    await run.end("a")
    await _until(run.eng, run.wid, {"b": "released"})
    first_b = run.job("b")
    assert first_b.site == "beta"
    run.ops.down.add("beta")
    await run.end("b", JobState.FAILED)
    await _until(run.eng, run.wid, {"b": "released"})
    again = run.job("b")
    assert run.submitted("b") == ["beta", "gamma"] and again.site == "gamma"
    assert (f"alpha:{run.job('a').workdir}/x.dat", f"gamma:{again.workdir}/x.dat",
            False) in run.ops.transfers
    await run.end("b")
    assert run.state() == ("COMPLETED", None)
    assert _shown(run) == {"a": ("COMPLETED", "alpha"), "b": ("COMPLETED", "gamma")}
    _nothing_lost(run)


async def test_a_step_whose_only_site_goes_down_while_it_runs_fails_naming_it(runs):
    """b may run on beta alone, without retries: its job lost there, the workflow fails
    naming b, and a's completed run is kept as it was."""
    run = await runs(MOVE.replace("site: [beta, gamma]", "site: beta")
                     .replace(" retries: 1, on_failure: resubmit-elsewhere", ""), _BetaDown)
    await run.end("a")
    await _until(run.eng, run.wid, {"b": "released"})
    run.ops.down.add("beta")
    await run.end("b", JobState.FAILED)
    state, reason = run.state()
    assert state == "FAILED" and reason.startswith("step 'b' failed"), reason
    assert _shown(run) == {"a": ("COMPLETED", "alpha"), "b": ("FAILED", "beta")}
    assert run.submitted("b") == ["beta"]
    _nothing_lost(run)


async def test_a_site_down_while_its_upstream_runs_holds_no_job_of_the_run_there(runs):
    """beta goes down while a runs on alpha, before b's held job there was released: the
    workflow is cancelled by the user; a's job and b's held one are each cancelled where
    their site answers, and the cancelled workflow says so whatever beta did."""
    run = await runs(MOVE.replace("site: [beta, gamma]", "site: beta"), _BetaDown)
    a, b = run.job("a"), run.job("b")
    run.ops.down.add("beta")
    await run.eng.cancel(run.wid)
    assert run.state() == ("CANCELLED", "cancelled by request")
    assert a.id in run.ops.cancels
    assert b.id not in run.ops.releases
    assert _shown(run)["b"][0] == "CANCELLED"


# -- 2. an upstream COMPLETED without its output ---------------------------------------------

class _NoFeatures(_MissingOutputs):
    missing = ("x.dat",)


async def test_an_upstream_completed_without_its_output_never_releases_the_downstream(runs):
    """a ends COMPLETED but x.dat is not there: a fails naming the file, b (held on beta) is
    cancelled, nothing is copied and nothing released."""
    run = await runs(MOVE.replace("site: [beta, gamma]", "site: beta"), _NoFeatures)
    b = run.job("b")
    await run.end("a")
    state, reason = run.state()
    assert state == "FAILED" and "x.dat" in reason and "'a'" in reason, reason
    assert run.ops.transfers == [] and b.id not in run.ops.releases
    assert b.id in run.ops.cancels
    assert _shown(run) == {"a": ("FAILED", "alpha"), "b": ("CANCELLED", "beta")}
    _nothing_lost(run)


async def test_an_upstream_without_its_output_runs_again_and_its_second_run_feeds_on(runs):
    """a, retries 1, ends COMPLETED without x.dat once: it runs again; the second run wrote
    it, and b gets the second run's file, not a path in the first run's directory."""

    class _FirstRunMissing(_MissingOutputs):
        missing = ("x.dat",)

        async def missing_files(self, site: str, paths: list[str]) -> list[str]:
            gone = await super().missing_files(site, paths)
            self.missing = ()  # the next run writes it
            return gone

    run = await runs(MOVE.replace("script: ./a,", "script: ./a, retries: 1,")
                     .replace("site: [beta, gamma]", "site: beta"), _FirstRunMissing)
    first_a = run.job("a")
    await run.end("a")
    await _until_true(run, lambda: len(run.submitted("a")) == 2)
    second_a = run.job("a")
    assert second_a.id != first_a.id and run.submitted("a") == ["alpha", "alpha"]
    await run.end("a")
    await _until(run.eng, run.wid, {"b": "released"})
    assert [src for src, _, _ in run.ops.transfers] == [f"alpha:{second_a.workdir}/x.dat"]
    await run.end("b")
    assert run.state() == ("COMPLETED", None)
    _nothing_lost(run)


# -- 3. cycles and steps needing themselves -------------------------------------------------

def test_a_cycle_of_fourteen_steps_is_shown_shortened_with_its_length():
    names = [f"s{i:02d}" for i in range(14)]
    lines = [f"  - {{name: {n}, site: alpha, script: x, needs: [{names[i - 1]}]}}"
             for i, n in enumerate(names)]
    msg = refused("name: ring\nsteps:\n" + "\n".join(lines) + "\n")
    assert msg.startswith("workflow 'ring' has a cycle of 14 steps: s00 -> s01 -> "), msg
    assert "s07 -> ... (4 steps more) ... -> s12 -> s13 -> s00 (line 4)" in msg, msg


def test_a_cycle_beside_a_sound_chain_names_only_the_cycle():
    msg = refused("""\
        name: half
        steps:
          - {name: ok1, site: alpha, script: x}
          - {name: ok2, site: alpha, script: x, needs: [ok1]}
          - {name: p, site: beta, script: x, needs: [q]}
          - {name: q, site: beta, script: x, needs: [p]}
        """)
    assert msg == "workflow 'half' has a cycle: p -> q -> p (line 6)", msg


def test_an_auto_step_on_a_list_of_sites_needing_itself_is_named():
    msg = refused("""\
        name: selfish
        steps:
          - {name: lone, site: [alpha, beta], script: x, needs: [lone]}
        """)
    assert msg == "step 'lone' needs itself (a cycle) (line 3)", msg


def test_fault_an_input_from_a_downstream_step_is_not_advised_into_a_cycle():
    """b's input comes from c, which needs b. Before: "add it to needs", which would make a
    cycle of b and c. Now it says c runs after b and why needing it cannot be the fix."""
    msg = refused("""\
        name: loop
        steps:
          - {name: a, site: alpha, script: x}
          - {name: b, site: alpha, script: x, needs: [a], inputs: [{from: c, path: o}]}
          - {name: c, site: alpha, script: x, needs: [b]}
        """)
    assert "add it to needs" not in msg, msg
    assert msg.startswith("step 'b': inputs[0] is from 'c', which runs after it ('c' needs "
                          "'b'"), msg
    assert "would close a cycle" in msg and msg.endswith("(line 4)"), msg


def test_an_input_from_a_sibling_still_advises_needing_it():
    """c is not downstream of b: needing it is the fix, and the advice stays."""
    msg = refused("""\
        name: sib
        steps:
          - {name: a, site: alpha, script: x}
          - {name: b, site: alpha, script: x, needs: [a], inputs: [{from: c, path: o}]}
          - {name: c, site: alpha, script: x, needs: [a]}
        """)
    assert "which is not upstream of it (add it to needs; needs: a)" in msg, msg


# -- 4. a step renamed between runs ------------------------------------------------------------

TWO = """\
    name: two
    steps:
      - {name: prep, site: alpha, script: ./prep, outputs: [f.dat]}
      - {name: train, site: beta, needs: [prep], inputs: [{from: prep, path: f.dat}],
         script: ./train}
    """


async def test_a_step_renamed_between_two_runs_shares_no_job_with_the_first(tmp_path):
    """train is renamed fit for the second run: each run shows its own names and jobs; the
    second's fit is fed by the second's prep; the first run's record is unchanged."""
    with Store(tmp_path / "s.sqlite") as store:
        run = _Run(store)
        try:
            await run.start(TWO)
            await run.finish("prep", "train")
            first = _shown(run)
            first_jobs = {s.name: s.job for s in run.eng.view(run.wid).steps}
            second = _Run(store, run.ops, run.eng)
            await second.start(TWO.replace("train", "fit"))
            await second.end("prep")
            await _until(second.eng, second.wid, {"fit": "released"})
            await second.end("fit")
            assert second.state() == ("COMPLETED", None)
            assert set(_shown(second)) == {"prep", "fit"}
            assert _shown(run) == first and set(first) == {"prep", "train"}
            again = {s.name: s.job for s in second.eng.view(second.wid).steps}
            assert not set(again.values()) & set(first_jobs.values())
            assert run.ops.transfers[-1][0] == f"alpha:{second.job('prep').workdir}/f.dat"
        finally:
            await run.eng.close()


async def test_an_engine_resumed_after_the_file_changed_keeps_the_recorded_names(tmp_path):
    """The file on disk is rewritten (train renamed fit) while the engine is stopped: the
    next engine drives the run it recorded (train), submitting nothing again."""
    path = tmp_path / "two.yaml"
    path.write_text(TWO)
    with Store(tmp_path / "s.sqlite") as store:
        run = _Run(store)
        await run.start(path.read_text())
        await run.end("prep")
        await _until(run.eng, run.wid, {"train": "released"})
        await run.eng.close()
        path.write_text(TWO.replace("train", "fit"))
        again = _Ops(store)
        async with next_engine(again, [run.wid]) as eng:
            run.eng = eng
            assert set(_shown(run)) == {"prep", "train"}
            await run.end("train")
            assert run.state() == ("COMPLETED", None) and again.submits == []


# -- 5. a fan-out of 1000 steps ----------------------------------------------------------------

async def test_a_fan_out_of_1000_steps_on_two_sites_runs_each_once_and_fans_in(runs):
    width = 1000
    lines = ["  - {name: top, site: alpha, script: ./top, outputs: [seed]}"]
    lines += [f"  - {{name: w{i:04d}, site: {'alpha' if i % 2 else 'beta'}, needs: [top], "
              f"script: ./w}}" for i in range(width)]
    lines.append("  - {name: join, site: alpha, script: ./join, needs: ["
                 + ", ".join(f"w{i:04d}" for i in range(width)) + "]}")
    began = time.monotonic()
    run = await runs("name: wide\nsteps:\n" + "\n".join(lines) + "\n")
    await run.end("top")
    rec = run.store.get_workflow(run.wid)  # read once: each `run.job` reads every step
    for st in rec.steps:
        if st.name.startswith("w"):
            job = run.store.job_by_token(st.token)
            run.store.apply_state(job.id, JobState.COMPLETED, exit_code=0)
    await run.eng.advance(run.wid)
    await _until(run.eng, run.wid, {"join": "released"})
    await run.end("join")
    assert run.state() == ("COMPLETED", None)
    names = [n for n, _, _ in run.ops.submits]
    assert len(names) == width + 2 and len(set(names)) == width + 2  # each once
    assert sum(site == "beta" for _, site, _ in run.ops.submits) == width // 2
    assert time.monotonic() - began < 120  # a guard: the whole run takes seconds
    _nothing_lost(run)


# -- 6. an engine stopped between a step's release and its start -----------------------------

async def test_an_engine_stopped_between_release_and_start_releases_nothing_twice(tmp_path):
    """b was released on beta (its copy done) and the engine stopped before b started: the
    next engine neither copies, submits nor releases again; b starts and ends, and the run
    completes."""
    class _ReleasedNotStarted(_Ops):
        async def release(self, job: Job) -> None:
            self.releases.append(job.id)  # the scheduler has it; it starts later

    with Store(tmp_path / "s.sqlite") as store:
        ops = _ReleasedNotStarted(store)
        run = _Run(store, ops)
        await run.start(TWO)
        await run.end("prep")
        await _until(run.eng, run.wid, {"train": "released"})
        assert run.job("train").state == JobState.PENDING
        await run.eng.close()
        again = _ReleasedNotStarted(store)
        async with next_engine(again, [run.wid]) as eng:
            run.eng = eng
            await eng.advance(run.wid)
            assert again.submits == [] and again.releases == [] and again.transfers == []
            store.apply_state(run.job("train").id, JobState.RUNNING)
            await run.end("train")
            assert run.state() == ("COMPLETED", None)
            assert len(ops.transfers) == 1 and ops.releases == [run.job("train").id]
            _nothing_lost(run)


# -- 7. a cancelled workflow leaves no held step behind --------------------------------------

FAN = """\
    name: fan
    steps:
      - {name: top, site: alpha, script: ./top, outputs: [o]}
      - {name: b1, site: beta, needs: [top], inputs: [{from: top, path: o}], script: ./b}
      - {name: b2, site: gamma, needs: [top], inputs: [{from: top, path: o}], script: ./b}
      - {name: last, site: beta, needs: [b1, b2], script: ./last}
    """


async def test_a_cancelled_workflow_leaves_no_held_step_queued(runs):
    run = await runs(FAN)
    held = {step for step, _, hold in run.ops.submits if hold}
    assert held == {"b1", "b2", "last"}, run.ops.submits  # each behind another site
    waiting = [j for j in _live(run) if j.origin.get("step") != "top"]
    await run.eng.cancel(run.wid)
    assert run.state() == ("CANCELLED", "cancelled by request")
    assert _live(run) == []
    assert {j.id for j in waiting} <= set(run.ops.cancels)
    assert run.ops.releases == []
    assert {s for s, (state, _) in _shown(run).items()} == {"top", "b1", "b2", "last"}
    assert all(state == "CANCELLED" for state, _ in _shown(run).values())
    _nothing_lost(run)


async def test_a_workflow_cancelled_while_a_held_submit_is_on_its_way_cancels_it_after(
        tmp_path):
    """The cancel comes while b1's held submit has not answered (the site has the job): the
    job is cancelled all the same, and never released."""
    class _SlowSubmit(_Ops):
        def __init__(self, store: Store) -> None:
            super().__init__(store)
            self.started = asyncio.Event()
            self.done = asyncio.Event()

        async def submit(self, spec, site, **kw):
            job = await super().submit(spec, site, **kw)  # the site has it ...
            if kw.get("origin", {}).get("step") == "b1":
                self.started.set()
                await self.done.wait()  # ... its answer comes late
            return job

    with Store(tmp_path / "s.sqlite") as store:
        ops = _SlowSubmit(store)
        run = _Run(store, ops)
        started = asyncio.ensure_future(run.start(FAN))
        await asyncio.wait_for(ops.started.wait(), 10)
        wid = next(iter(w.id for w in store.list_workflows()))
        run.wid = wid
        await run.eng.cancel(wid)
        ops.done.set()
        await asyncio.wait_for(started, 10)
        await run.eng.advance(wid)
        try:
            assert run.state()[0] == "CANCELLED"
            assert _live(run) == [], _live(run)
            assert ops.releases == []
            _nothing_lost(run)
        finally:
            await run.eng.close()


def test_each_file_of_this_sweep_is_read_as_written():
    """The sweep's files are valid as written (the refusals above are of their edits)."""
    for text in (MOVE, TWO, FAN):
        wf = load(text)
        assert wf.order()[0] in ("a", "prep", "top")
