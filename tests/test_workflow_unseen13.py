"""Workflow files, thirteenth sweep, run to their end on the real engine and store (the
operations below the facade recorded, `test_workflow_unseen._Ops`; no test bed): a W of two
roots and three middles, chains across three sites passing files, a grandparent's file
taken across sites past a parent on the step's own site, fan-outs of 300 steps over two
sites and their fan-in, retries elsewhere with steps queued behind them, gangs across sites,
a workflow cancelled or a step cancelled outside it, engines stopped and resumed in the
middle (between steps, mid-copy, after the end); and files with mistakes the earlier sweeps
did not write: inputs landing on the files the engine keeps in a job's directory (its
script, its logs, its key, its body), cycles through gangs and long chains, unknown steps
in inputs, duplicate names in other cases, unicode paths across sites.

Each run is asserted as a user sees it: the workflow's state and reason, each step's phase,
what was submitted where and how often, what was copied from where to where and when. The
tests named `fault` failed before this sweep's fixes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from sweep_helpers import SITES, load, refused
from test_workflow_unseen import _Ops, _until
from workflow_ops import HeldCopy, next_engine

from diamond_jupyter.model import JobState
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.engine import WorkflowEngine
from diamond_jupyter.workflow.model import ENGINE_FILES


class _Run:
    """One workflow run on a real store: its engine (`eng`, else a new one on `ops`), its
    recorded operations, and helpers to end a step's job as its scheduler would."""

    def __init__(self, store: Store, ops: _Ops | None = None,
                 eng: WorkflowEngine | None = None) -> None:
        self.store = store
        self.ops = ops or _Ops(store)
        self.eng = eng or WorkflowEngine(self.ops)
        self.wid = ""

    async def start(self, text: str) -> str:
        self.wid = await self.eng.run(load(text))
        return self.wid

    def job(self, step: str) -> Any:
        return self.store.job_by_token(self.store.get_workflow(self.wid).step(step).token)

    async def end(self, step: str, state: JobState = JobState.COMPLETED) -> None:
        """The step's current job ends in `state`; the engine is told, as by its event."""
        job = self.job(step)
        self.store.apply_state(job.id, state, exit_code=0 if state == JobState.COMPLETED
                               else 1)
        await self.eng.advance(self.wid)

    def phases(self) -> dict[str, str]:
        return {s.name: s.phase for s in self.store.get_workflow(self.wid).steps}

    def state(self) -> tuple[str, str | None]:
        rec = self.store.get_workflow(self.wid)
        return rec.state, rec.reason

    def submitted(self, step: str) -> list[str]:
        return [site for name, site, _ in self.ops.submits if name == step]

    async def finish(self, *order: str) -> None:
        """End the steps in `order`, each once it has a job."""
        for name in order:
            await _until(self.eng, self.wid, {})
            await self.end(name)


@asynccontextmanager
async def run_maker(tmp_path: Path, run_class: type[_Run] | None = None
                    ) -> AsyncIterator[Callable[..., Awaitable[_Run]]]:
    """A maker of runs (`run_class`'s, else `_Run`'s), each on its own store and started on
    the workflow text given, its operations an `ops_class` (`settings` set on them first);
    engines closed and stores shut on leaving."""
    made: list[_Run] = []

    async def make(text: str, ops_class: type = _Ops, **settings: Any) -> _Run:
        store = Store(tmp_path / f"{len(made)}.sqlite")
        run = (run_class or _Run)(store, ops_class(store))
        for name, value in settings.items():
            setattr(run.ops, name, value)
        made.append(run)
        await run.start(text)
        return run

    try:
        yield make
    finally:
        for run in made:
            await run.eng.close()
            run.store.close()


@pytest.fixture(name="runs")
async def runs_fixture(tmp_path):
    """Runs made in a test (`run_maker`'s)."""
    async with run_maker(tmp_path) as make:
        yield make


CROSS = """\
    name: cross
    steps:
      - {name: prep, site: alpha, script: ./prep}
      - {name: fit, site: beta, needs: [prep], inputs: [{from: prep, path: d/, as: in/}],
         script: ./fit}
    """


# -- 1. DAG shapes run to their end -----------------------------------------------------------

W = """\
    name: w-shape
    steps:
      - {name: a, site: alpha, script: ./a}
      - {name: b, site: alpha, script: ./b}
      - {name: x, site: alpha, needs: [a], script: ./x}
      - {name: y, site: alpha, needs: [a, b], script: ./y}
      - {name: z, site: alpha, needs: [b], script: ./z}
      - {name: join, site: alpha, needs: [x, y, z], script: ./join}
    """


async def test_a_w_of_two_roots_and_three_middles_completes_each_step_submitted_once(runs):
    """Every step is queued at once behind its upstreams (one site: afterok edges) and the
    jobs end in an order the scheduler chose, the join's first upstream last."""
    run = await runs(W)
    plan = {s.name: sorted(s.data.get("afterok") or [])
            for s in run.store.get_workflow(run.wid).steps}
    assert plan == {"a": [], "b": [], "x": ["a"], "y": ["a", "b"], "z": ["b"],
                    "join": ["x", "y", "z"]}
    for name in ("b", "a", "z", "y", "x", "join"):
        await run.end(name)
    assert run.state() == ("COMPLETED", None)
    assert sorted(run.ops.submits) == sorted((n, "alpha", False) for n in plan)


async def test_a_chain_across_three_sites_copies_each_file_after_its_step_ends(runs):
    """a (alpha) -> b (beta) -> c (gamma), each passing its file on: each copy waits for
    the step that writes it, and runs once."""
    run = await runs("""\
        name: relay
        steps:
          - {name: a, site: alpha, script: ./a, outputs: [a.out]}
          - {name: b, site: beta, needs: [a], inputs: [{from: a, path: a.out}], script: ./b,
             outputs: [b.out]}
          - {name: c, site: gamma, needs: [b], inputs: [{from: b, path: b.out}], script: ./c}
        """)
    assert run.ops.transfers == []
    await run.end("a")
    await _until(run.eng, run.wid, {"b": "released"})
    assert [t[:2] for t in run.ops.transfers] == [
        (f"alpha:{run.job('a').workdir}/a.out", f"beta:{run.job('b').workdir}/a.out")]
    await run.end("b")
    await _until(run.eng, run.wid, {"c": "released"})
    await run.end("c")
    assert run.state()[0] == "COMPLETED" and len(run.ops.transfers) == 2
    assert run.ops.transfers[1][:2] == (f"beta:{run.job('b').workdir}/b.out",
                                        f"gamma:{run.job('c').workdir}/b.out")


async def test_fault_a_grandparents_file_across_sites_is_copied_only_after_it_ends(runs):
    """gp (beta) -> p (alpha) -> c (alpha, reads gp's x.h5). c is queued behind p on alpha
    (afterok), so the engine saw nothing left to wait for and copied x.h5 from beta while gp
    was still queued there, then released c: the copy of a file not yet written (or half
    written). Now c is held until gp has ended, then copied once, then released."""
    run = await runs("""\
        name: gp
        steps:
          - {name: gp, site: beta, script: ./gp}
          - {name: p, site: alpha, needs: [gp], script: ./p}
          - {name: c, site: alpha, needs: [p], script: ./c, inputs: [{from: gp, path: x.h5}]}
        """)
    await _until(run.eng, run.wid, {"gp": "queued", "c": "held"})
    assert run.ops.transfers == []
    await run.end("gp")
    await _until(run.eng, run.wid, {"c": "released"})
    assert [t[:2] for t in run.ops.transfers] == [
        (f"beta:{run.job('gp').workdir}/x.h5", f"alpha:{run.job('c').workdir}/x.h5")]
    assert "[ -e x.h5 ] ||" in run.ops.specs["c"].script  # checked on arrival too
    await run.finish("p", "c")
    assert run.state()[0] == "COMPLETED"


async def test_a_fan_out_of_300_steps_on_two_sites_and_its_fan_in_run_to_the_end(runs):
    """split -> 300 sims alternating alpha and beta -> gather (alpha): each submitted once,
    beta's held until split ends, gather once every sim has."""
    sims = [f"s{i:03d}" for i in range(300)]
    text = ("name: fan\nsteps:\n  - {name: split, site: alpha, script: ./split}\n"
            + "".join(f"  - {{name: {s}, site: {'alpha' if i % 2 == 0 else 'beta'}, "
                      f"needs: [split], script: ./sim}}\n" for i, s in enumerate(sims))
            + f"  - {{name: gather, site: alpha, needs: [{', '.join(sims)}], "
              "script: ./gather}\n")
    run = await runs(text)
    assert len(run.ops.submits) == 302
    assert all(held == (site == "beta") for name, site, held in run.ops.submits
               if name.startswith("s") and name != "split")
    await run.end("split")
    await _until(run.eng, run.wid, {s: "released" for s in sims[1::2]})
    rec = run.store.get_workflow(run.wid)
    for s in sims:
        job = run.store.job_by_token(rec.step(s).token)
        run.store.apply_state(job.id, JobState.COMPLETED, exit_code=0)
    await run.eng.advance(run.wid)
    await run.end("gather")
    assert run.state()[0] == "COMPLETED" and len(run.ops.submits) == 302


class _Counted(WorkflowEngine):
    """The real engine, counting its looks at every step of a workflow."""

    looks = 0

    async def _advance(self, wid: str) -> None:
        type(self).looks += 1
        await super()._advance(wid)


async def test_fault_many_held_steps_ready_at_once_are_looked_at_together(tmp_path):
    """split ends and 150 steps on beta, held for it, may start: each one's (empty) copy
    ended by asking for an advance of its own, and each advance read all 302 steps: 150
    of them, 31 s on this machine. Now the asks made before an advance begins are one."""
    sims = [f"s{i:03d}" for i in range(150)]
    text = ("name: fan\nsteps:\n  - {name: split, site: alpha, script: ./split}\n"
            + "".join(f"  - {{name: {s}, site: beta, needs: [split], script: ./sim}}\n"
                      for s in sims))
    with Store(tmp_path / "s.sqlite") as store:
        ops = _Ops(store)
        eng = _Counted(ops)
        try:
            wid = await eng.run(load(text))
            split = store.job_by_token(store.get_workflow(wid).step("split").token)
            store.apply_state(split.id, JobState.COMPLETED, exit_code=0)
            _Counted.looks = 0
            await eng.advance(wid)
            await _until(eng, wid, {s: "released" for s in sims})
            assert len(ops.releases) == 150
            assert _Counted.looks <= 10, _Counted.looks
        finally:
            await eng.close()


async def test_a_gang_across_two_sites_after_a_shared_upstream_is_released_together(runs):
    run = await runs("""\
        name: esm
        steps:
          - {name: prep, site: alpha, script: ./prep}
          - {name: ocean, site: alpha, needs: [prep], gang: esm, script: ./ocean}
          - {name: atmos, site: beta, needs: [prep], gang: esm, script: ./atmos}
        """)
    assert run.ops.releases == []
    await run.end("prep")
    await _until(run.eng, run.wid, {"ocean": "released", "atmos": "released"})
    assert len(run.ops.releases) == 2
    await run.finish("ocean", "atmos")
    assert run.state()[0] == "COMPLETED"


# -- 2. failures, retries, cancels -------------------------------------------------------------

async def test_a_failed_step_stops_the_workflow_and_cancels_the_other_branch(runs):
    """In a diamond, left fails (no retries): right (queued) and the join are cancelled, the
    workflow FAILED naming left and why."""
    run = await runs("""\
        name: diamond
        steps:
          - {name: top, site: alpha, script: ./top}
          - {name: left, site: alpha, needs: [top], script: ./left}
          - {name: right, site: beta, needs: [top], script: ./right}
          - {name: join, site: alpha, needs: [left, right], script: ./join}
        """)
    await run.end("top")
    await _until(run.eng, run.wid, {"right": "released"})
    right, join = run.job("right"), run.job("join")
    await run.end("left", JobState.FAILED)
    state, reason = run.state()
    assert state == "FAILED" and reason.startswith("step 'left' failed: ")
    assert run.phases() == {"top": "done", "left": "failed", "right": "cancelled",
                            "join": "cancelled"}
    assert {right.id, join.id} <= set(run.ops.cancels)


async def test_a_retry_elsewhere_takes_the_steps_queued_behind_it_along(runs):
    """fit (alpha or beta, one retry elsewhere) fails on alpha; post, queued on alpha
    behind fit's first job (afterok, which can now never be met), is cancelled and queued
    again behind fit's new run on beta."""
    run = await runs("""\
        name: retry
        steps:
          - {name: fit, site: [alpha, beta], retries: 1, on_failure: resubmit-elsewhere,
             script: ./fit}
          - {name: post, site: alpha, needs: [fit], script: ./post}
        """)
    first_post = run.job("post")
    assert run.submitted("fit") == ["alpha"]
    await run.end("fit", JobState.FAILED)
    await _until(run.eng, run.wid, {"fit": "queued"})
    assert run.submitted("fit") == ["alpha", "beta"]
    assert first_post.id in run.ops.cancels
    assert run.submitted("post") == ["alpha", "alpha"]
    rec = run.store.get_workflow(run.wid)
    assert rec.step("post").data.get("afterok") == [] and rec.step("post").phase == "held"
    await run.end("fit")
    await _until(run.eng, run.wid, {"post": "released"})
    await run.end("post")
    assert run.state()[0] == "COMPLETED" and rec.step("fit").attempt == 1


async def test_a_step_cancelled_outside_the_workflow_cancels_it_saying_which(runs):
    run = await runs(W)
    await run.end("a", JobState.CANCELLED)
    state, reason = run.state()
    assert state == "CANCELLED"
    assert reason == "step 'a' was cancelled outside the workflow"
    assert run.phases()["a"] == "cancelled"
    assert all(p in ("cancelled", "done") for p in run.phases().values())


async def test_a_job_ending_after_its_workflow_was_cancelled_starts_nothing_more(runs):
    run = await runs(W)
    await run.eng.cancel(run.wid)
    submits = len(run.ops.submits)
    for name in ("a", "b"):  # the scheduler had started them: they complete anyway
        run.store.apply_state(run.job(name).id, JobState.COMPLETED, exit_code=0)
    await run.eng.advance(run.wid)
    assert run.state() == ("CANCELLED", "cancelled by request")
    assert len(run.ops.submits) == submits


class _Gated(_Ops):
    """Sites that take a gate job (Slurm's afterany on a held job)."""

    def supports_gate(self, site: str) -> bool:
        return True


async def test_a_gated_step_whose_upstream_is_retried_leaves_no_gate_in_any_queue(runs):
    """fit (beta) waits behind a held gate for prep's file; prep fails once and runs again:
    fit is queued again behind a gate, and when the workflow completes no gate of it is
    left held in a queue (each cancelled)."""
    run = await runs(CROSS.replace("script: ./prep}", "retries: 1, script: ./prep}"),
                     _Gated)
    assert run.store.get_workflow(run.wid).step("fit").data.get("gate")
    await run.end("prep", JobState.FAILED)
    await _until(run.eng, run.wid, {"prep": "queued"})
    await run.end("prep")
    await _until(run.eng, run.wid, {"fit": "released"})
    await run.end("fit")
    assert run.state()[0] == "COMPLETED"
    gates = [j for j in run.store.list_jobs(limit=None) if (j.origin or {}).get("gate")]
    assert gates and all(j.state.terminal for j in gates), [(j.id, j.state) for j in gates]
    assert len(run.submitted("prep")) == 2 and len(run.ops.transfers) == 1


class _Mover(_Ops):
    """Copies as the federation's mover makes them: a transfer id it knows returns that
    transfer as it ended, without copying again (a resume after a restart)."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.known: dict[str, Any] = {}

    async def transfer(self, src: str, dst: str, **kw: Any) -> Any:
        if kw["transfer_id"] not in self.known:
            self.known[kw["transfer_id"]] = await super().transfer(src, dst, **kw)
        return self.known[kw["transfer_id"]]


async def test_fault_a_step_queued_again_after_its_copy_gets_its_file_again(runs):
    """fit (alpha) takes a's file from beta and waits for b on alpha (afterok). a ends: the
    file is copied into fit's directory. b fails and runs again, so fit is queued again, in
    a new directory. Before: its copy had the same transfer id as the first, which the mover
    answered as done, so the file never reached the new directory and fit was released to
    fail on its arrival check. Now each job of the step has copies of its own."""
    run = await runs("""\
        name: again
        steps:
          - {name: a, site: beta, script: ./a}
          - {name: b, site: alpha, retries: 1, script: ./b}
          - {name: fit, site: alpha, needs: [a, b], inputs: [{from: a, path: x.h5}],
             script: ./fit}
        """, _Mover)
    await run.end("a")
    await _until(run.eng, run.wid, {"fit": "released"})
    first_dir = run.job("fit").workdir
    await run.end("b", JobState.FAILED)
    await _until(run.eng, run.wid, {"b": "queued", "fit": "released"})
    second_dir = run.job("fit").workdir
    assert second_dir != first_dir
    assert [t[1] for t in run.ops.transfers] == [f"alpha:{first_dir}/x.h5",
                                                 f"alpha:{second_dir}/x.h5"]
    await run.finish("b", "fit")
    assert run.state()[0] == "COMPLETED"


async def test_fault_a_gang_member_run_again_with_its_gang_gets_its_file_again(runs):
    """atmos (beta) takes prep's file; its gang mate ocean fails and the gang runs again:
    atmos's new job in a new directory gets the file copied there too."""
    run = await runs("""\
        name: esm
        steps:
          - {name: prep, site: alpha, script: ./prep}
          - {name: ocean, site: alpha, needs: [prep], gang: esm, retries: 1, script: ./o}
          - {name: atmos, site: beta, needs: [prep], gang: esm, script: ./a,
             inputs: [{from: prep, path: forcing.nc}]}
        """, _Mover)
    await run.end("prep")
    await _until(run.eng, run.wid, {"ocean": "released", "atmos": "released"})
    first_dir = run.job("atmos").workdir
    await run.end("ocean", JobState.FAILED)
    await _until(run.eng, run.wid, {"ocean": "released", "atmos": "released"})
    second_dir = run.job("atmos").workdir
    assert [t[1] for t in run.ops.transfers] == [f"beta:{first_dir}/forcing.nc",
                                                 f"beta:{second_dir}/forcing.nc"]


async def test_a_failed_workflow_resumed_stays_failed_and_submits_nothing(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        first = _Run(store)
        await first.start(W)
        await first.end("a", JobState.FAILED)
        await first.eng.close()
        ops = _Ops(store)
        async with next_engine(ops, []):
            assert ops.submits == [] and ops.cancels == []
            assert store.get_workflow(first.wid).state == "FAILED"


# -- 3. engines stopped in the middle, and the next one resuming ----------------------------

async def test_an_engine_stopped_between_steps_is_resumed_without_a_second_submit(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        first = _Run(store)
        await first.start(W)
        await first.end("a")
        await first.eng.close()
        store.apply_state(first.job("b").id, JobState.COMPLETED, exit_code=0)  # meanwhile
        ops = _Ops(store)
        async with next_engine(ops, [first.wid]) as eng:
            second = _Run(store, ops, eng)
            second.wid = first.wid
            assert ops.submits == []  # every step was queued already
            for name in ("x", "y", "z", "join"):
                await second.end(name)
            assert second.state()[0] == "COMPLETED"


class _SlowCopy(HeldCopy, _Ops):
    """A copy that does not end until `done` is set (the engine may stop meanwhile)."""


async def test_an_engine_stopped_mid_copy_leaves_the_copy_to_the_next_engine(tmp_path):
    """The first engine stops while fit's input is being copied: fit is not released; the
    next engine copies it again (the same source and destination) and releases fit once."""
    with Store(tmp_path / "s.sqlite") as store:
        first = _Run(store, _SlowCopy(store))
        await first.start(CROSS)
        await first.end("prep")
        await asyncio.wait_for(first.ops.started.wait(), 10)
        await first.eng.close()
        assert first.ops.releases == [] and first.phases()["fit"] == "moving"
        ops = _Ops(store)
        async with next_engine(ops, [first.wid]) as eng:
            second = _Run(store, ops, eng)
            second.wid = first.wid
            await _until(second.eng, second.wid, {"fit": "released"})
            assert ops.submits == [] and len(ops.releases) == 1
            assert ops.transfers == [(f"alpha:{first.job('prep').workdir}/d",
                                      f"beta:{first.job('fit').workdir}/in", True)]
            await second.end("fit")
            assert second.state()[0] == "COMPLETED"


async def test_a_completed_workflow_resumed_submits_and_copies_nothing(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        first = _Run(store)
        await first.start(CROSS)
        await first.end("prep")
        await _until(first.eng, first.wid, {"fit": "released"})
        await first.end("fit")
        await first.eng.close()
        ops = _Ops(store)
        async with next_engine(ops, []):
            assert (ops.submits, ops.transfers, ops.releases) == ([], [], [])
            assert store.get_workflow(first.wid).state == "COMPLETED"


async def test_two_engines_resuming_at_once_submit_the_next_step_once(tmp_path):
    """Two servers start together after the first engine stopped: one takes the workflow,
    the other leaves it."""
    with Store(tmp_path / "s.sqlite") as store:
        first = _Run(store)
        await first.start(CROSS.replace("site: beta", "site: alpha"))
        await first.eng.close()
        store.apply_state(first.job("prep").id, JobState.COMPLETED, exit_code=0)
        others = []
        for n in (2, 3):
            ops = _Ops(store)
            ops.engine_id = f"engine-{n}"
            others.append((ops, WorkflowEngine(ops)))
        try:
            took = await asyncio.gather(*(eng.resume() for _, eng in others))
            assert sorted(len(t) for t in took) == [0, 1]
            assert [ops.submits for ops, _ in others] == [[], []]  # fit was queued already
            rec = store.get_workflow(first.wid)
            assert rec.step("prep").phase == "done" and rec.step("fit").phase == "queued"
        finally:
            for _, eng in others:
                await eng.close()


# -- 4. unicode paths across sites --------------------------------------------------------------

async def test_an_input_in_other_alphabets_and_blanks_crosses_sites_by_its_exact_name(runs):
    run = await runs("""\
        name: unicode
        steps:
          - {name: mesure, site: alpha, script: ./m, outputs: ["données/résultat é.csv"]}
          - {name: analyse, site: gamma, needs: [mesure], script: ./a,
             inputs: [{from: mesure, path: "données/résultat é.csv", as: "入力/データ.csv"}]}
        """)
    await run.end("mesure")
    await _until(run.eng, run.wid, {"analyse": "released"})
    assert [t[:2] for t in run.ops.transfers] == [
        (f"alpha:{run.job('mesure').workdir}/données/résultat é.csv",
         f"gamma:{run.job('analyse').workdir}/入力/データ.csv")]
    assert "'入力/データ.csv'" in run.ops.specs["analyse"].script


# -- 5. mistakes in the file ------------------------------------------------------------------

@pytest.mark.parametrize("inp, dest", [
    ("{from: prep, path: stdout.log}", "stdout.log"),   # the upstream's log, as it is named
    ("{from: prep, path: stderr.log}", "stderr.log"),
    ("{from: prep, path: job.sh}", "job.sh"),
    ("{from: prep, path: run.sh, as: job.sh}", "job.sh"),
    ("{from: prep, path: key, as: ./secret}", "secret"),
    ("{from: prep, path: logs/, as: stdout.log/}", "stdout.log"),
])
def test_fault_an_input_landing_on_a_file_the_engine_keeps_is_refused(inp, dest):
    """A step's inputs are copied into its job's own directory, where the engine keeps the
    job's script (job.sh, which bash reads as it runs), its logs (stdout.log, stderr.log),
    its key (secret). Before: `{from: prep, path: stdout.log}`, the natural way to take the
    upstream's log, was copied over the running job's own log, and `as: job.sh` over the
    script being run."""
    msg = refused("name: w\nsteps:\n  - {name: prep, site: alpha, script: ./prep}\n"
                  f"  - {{name: use, site: alpha, needs: [prep], inputs: [{inp}], "
                  "script: ./use}\n")
    assert msg.startswith(f"step 'use': input {dest!r} (inputs[0], prep's ") and \
        f"collides with {ENGINE_FILES[dest]}, which the engine keeps in the step's own " \
        "directory, where the job runs; name it with `as:`, e.g. as: prep-" in msg, msg
    assert msg.endswith("(line 4)"), msg


def test_an_input_renamed_away_from_the_engines_files_is_taken_as_meant():
    wf = load("""\
        name: w
        steps:
          - {name: prep, site: alpha, script: ./prep}
          - name: use
            needs: [prep]
            inputs:
              - {from: prep, path: stdout.log, as: prep-stdout.log}
              - {from: prep, path: job.sh, as: provenance/job.sh}
              - {from: prep, path: logs/stdout.log}
            script: ./use
        """)
    assert [i.dest for i in wf.step("use").inputs] == [
        "prep-stdout.log", "provenance/job.sh", "logs/stdout.log"]


def test_a_step_may_declare_the_engines_log_as_its_output():
    """An output is only checked, never written: naming stdout.log there is fine."""
    wf = load("name: w\nsteps:\n  - {name: a, site: alpha, script: ./a, "
              "outputs: [stdout.log, job.sh]}\n")
    assert wf.step("a").outputs == ["stdout.log", "job.sh"]


@pytest.mark.parametrize("text, said", [
    # a cycle closed by a gang member's need
    ("name: w\nsteps:\n  - {name: a, gang: g, needs: [c], script: x}\n"
     "  - {name: b, gang: g, script: x}\n  - {name: c, needs: [a], script: x}\n",
     "workflow 'w' has a cycle: a -> c -> a"),
    # a 7-step cycle beside an independent branch
    ("name: w\nsteps:\n  - {name: free, script: x}\n"
     + "".join(f"  - {{name: c{i}, needs: [c{(i + 1) % 7}], script: x}}\n" for i in range(7)),
     "workflow 'w' has a cycle: c0 -> c6 -> c5 -> c4 -> c3 -> c2 -> c1 -> c0 (line 10)"),
    # an input from a step no one has
    ("name: w\nsteps:\n  - {name: prep, script: x}\n"
     "  - {name: fit, needs: [prep], inputs: [{from: perp, path: x}], script: x}\n",
     "'perp'"),
    # two steps in other cases are two steps; a need in the wrong case names the one meant
    ("name: w\nsteps:\n  - {name: Prep, script: x}\n  - {name: prep2, script: x}\n"
     "  - {name: fit, needs: [PREP], script: x}\n", "needs unknown step 'PREP'"),
])
def test_cycles_and_unknown_steps_not_written_before_are_named(text, said):
    msg = refused(text)
    assert said in msg, msg


def test_names_differing_only_in_case_are_refused_as_one_directory_on_some_disks():
    msg = refused("""\
        name: w
        steps:
          - {name: Prep, site: alpha, script: ./a}
          - {name: prep, site: alpha, script: ./b}
          - {name: fit, needs: [Prep, prep], script: ./fit}
        """)
    assert msg == ("workflow 'w': step names 'Prep' and 'prep' differ only in case; rename "
                   "one (a `needs` or `from` naming either is easily mistaken, and a "
                   "case-insensitive file system mixes their files) (line 4)")


@pytest.mark.parametrize("count", [2000])
def test_a_fan_out_to_the_most_steps_a_workflow_holds_is_read(count):
    text = ("name: w\nsteps:\n  - {name: root, site: alpha, script: x}\n"
            + "".join(f"  - {{name: s{i}, site: alpha, needs: [root], script: x}}\n"
                      for i in range(count - 1)))
    wf = load(text)
    assert len(wf.steps) == count and wf.downstream("root") == {f"s{i}"
                                                                for i in range(count - 1)}


def test_the_sites_of_this_sweep_are_the_helpers():
    assert SITES == ["alpha", "beta", "gamma"]
