"""A workflow's step submits are recorded in batches (issue 17): the steps a pass submits
go into the store in one durable write (each step "submitting" with its job's intent), then
are sent one by one and bound. A 1000-step fan-out took about 28 s to start, about 11 ms a
step in its own durable write.

On the real engine and store over one Slurm site on the local transport whose `squeue` and
`sbatch` are written here (tests/local_slurm.py; no test bed): `sbatch` queues the job with
the token of its script's comment, as a controller does, and answers its id."""

from __future__ import annotations

import asyncio
import getpass
from pathlib import Path

import pytest
from local_slurm import LocalSlurmQueue
from one_site_engine import one_site_federation

from diamond_jupyter.store import Store
from diamond_jupyter.workflow import engine as engine_module
from diamond_jupyter.workflow.model import WorkflowView

WIDTH = 12


def _queue(tmp_path: Path) -> LocalSlurmQueue:
    """The site `alpha`: each `sbatch` queues its job (its token read from the script's
    comment) under the next id, and prints that id."""
    q = LocalSlurmQueue(tmp_path)
    sbatch = q.bin_dir / "sbatch"
    sbatch.write_text(
        "#!/bin/sh\nfor last; do :; done\n"
        "tok=$(grep -o 'diamond:[0-9a-f]*' \"$last\" | head -n 1)\n"
        f"n=$(cat {tmp_path}/n 2>/dev/null || echo 100); n=$((n + 1)); echo $n > {tmp_path}/n\n"
        f"echo \"$n|PENDING|N/A|N/A|2026-01-01T00:00:00|10:00|1|1|{getpass.getuser()}|debug|"
        f"N/A||Priority|$tok|job\" >> {q.queue}\necho $n\n")
    sbatch.chmod(0o755)
    return q


def _fan_out(width: int = WIDTH) -> str:
    return ("name: fan\nsteps:\n  - {name: top, site: alpha, script: ./top}\n"
            + "".join(f"  - {{name: w{i:03d}, site: alpha, needs: [top], script: ./w}}\n"
                      for i in range(width)))


def _engine(tmp_path: Path, q: LocalSlurmQueue, **kw):
    off = q.site.cfg.discovery.model_copy(update={"enabled": False})
    cfg = q.site.cfg.model_copy(update={"workdir": str(tmp_path / "work"), "discovery": off})
    return one_site_federation(tmp_path, cfg, **kw)


def _queued_ids(q: LocalSlurmQueue) -> list[str]:
    return [line.split("|")[0] for line in q.queue.read_text().splitlines()]


def _assert_each_step_submitted_once(q: LocalSlurmQueue, view: WorkflowView) -> None:
    """Each of the fan-out's steps has a job of its own, and the scheduler was sent one
    submit a step: exactly those jobs."""
    jobs = [s.job for s in view.steps]
    assert None not in jobs and len(set(jobs)) == WIDTH + 1, jobs
    queued = _queued_ids(q)
    assert len(queued) == WIDTH + 1 == len(set(queued)), queued
    assert sorted(queued) == sorted(j.split(":")[1] for j in jobs if j)


async def test_a_fan_out_is_recorded_in_one_durable_write_a_pass(tmp_path, monkeypatch):
    q = _queue(tmp_path)
    writes: list[int] = []
    singles: list[str] = []
    reserve, record = Store.reserve_step_submits, Store.record_intent

    def reserved(self, wid, submits, fence=None):
        submits = list(submits)
        writes.append(len(submits))
        return reserve(self, wid, submits, fence)

    def recorded(self, site, token, *a, **kw):
        singles.append(token)
        return record(self, site, token, *a, **kw)

    monkeypatch.setattr(Store, "reserve_step_submits", reserved)
    monkeypatch.setattr(Store, "record_intent", recorded)
    fed = _engine(tmp_path, q)
    try:
        await fed.start(recover=False)
        view = await fed.run_workflow(_fan_out(), origin={"face": "test"})
        _assert_each_step_submitted_once(q, view)
        assert {s.state.value for s in view.steps} == {"PENDING"}
        # top alone (every other step waits for its job id), then the fan-out at once
        assert writes == [1, WIDTH] and singles == []
        w = fed.store.job_by_token(fed.store.get_workflow(view.id).step("w000").token)
        assert w.native_id and w.workdir and w.workdir.startswith(str(tmp_path / "work"))
    finally:
        await fed.close()


async def test_a_pass_larger_than_a_batch_goes_in_batches(tmp_path, monkeypatch):
    q = _queue(tmp_path)
    writes: list[int] = []
    reserve = Store.reserve_step_submits

    def reserved(self, wid, submits, fence=None):
        submits = list(submits)
        writes.append(len(submits))
        return reserve(self, wid, submits, fence)

    monkeypatch.setattr(Store, "reserve_step_submits", reserved)
    monkeypatch.setattr(engine_module, "SUBMIT_BATCH", 5)
    fed = _engine(tmp_path, q)
    try:
        await fed.start(recover=False)
        view = await fed.run_workflow(_fan_out(), origin={"face": "test"})
        assert all(s.job for s in view.steps)
        assert writes == [1, 5, 5, 2]
    finally:
        await fed.close()


class _Crash(BaseException):
    """The engine's process ends here (nothing after it runs as the code would)."""


async def test_a_crash_mid_batch_loses_no_step_and_submits_none_twice(tmp_path, monkeypatch):
    """The engine stops right after the scheduler took the 5th job of the run (the 4th of
    the fan-out's batch): 3 steps are bound, 1 is queued with no answer recorded, 8 are
    recorded "submitting" and never sent. The next engine finds the queued one by the token
    in its comment, closes the 8 as never submitted and submits them: every step has one
    job, and the scheduler got one submit a step."""
    q = _queue(tmp_path)
    fed = _engine(tmp_path, q)
    transport = fed.sites["alpha"].transport
    sent_once, update_steps = transport.run_fast, Store.update_steps
    sbatches = 0

    async def run_fast(argv, **kw):
        nonlocal sbatches
        res = await sent_once(argv, **kw)
        if argv and argv[0] == "sbatch" and "--parsable" in argv:  # a submit
            sbatches += 1
            if sbatches == 5:
                raise _Crash  # the job is queued; its answer is never read
        return res

    def crashed_after(self, *a, **kw):
        if sbatches >= 5:
            raise _Crash  # a crashed engine records nothing more
        return update_steps(self, *a, **kw)

    monkeypatch.setattr(transport, "run_fast", run_fast)
    monkeypatch.setattr(Store, "update_steps", crashed_after)
    try:
        await fed.start(recover=False)
        with pytest.raises(_Crash):
            await fed.run_workflow(_fan_out(), origin={"face": "test"})
        wid = fed.store.list_workflows()[0].id
        steps = fed.store.get_workflow(wid).steps
        assert [s.phase for s in steps].count("submitting") == WIDTH
        assert len(_queued_ids(q)) == 5
    finally:
        monkeypatch.undo()
        await fed.close()

    again = _engine(tmp_path, q, intent_grace_s=0.0, unsure_submit_settle_s=0.0)
    try:
        await again.start()  # recovery: the queued one bound, the unsent ones closed
        for _ in range(10):
            view = await again.workflow_status(wid)
            if all(s.job and s.state.value == "PENDING" for s in view.steps):
                break
            await again.workflow_engine.advance(wid)
        _assert_each_step_submitted_once(q, view)
    finally:
        await again.close()


def test_the_fan_out_benchmark_runs_both_trees_on_the_same_workflow(tmp_path, capsys):
    from benchmarks.workflow_fanout import main

    out = main(["--steps", "6", "--repeats", "2", "--before", "HEAD", "--json",
                "--out", str(tmp_path)])
    assert [r["tree"] for r in out["runs"]] == ["before", "now", "now", "before"]
    assert {r["steps"] for r in out["runs"]} == {7}
    assert all(r["seconds"] > 0 and r["cpu_s"] > 0 for r in out["runs"])
    assert out["ratio_median_before_over_now"] > 0 and out["ratio_mean_before_over_now"] > 0
    printed = capsys.readouterr().out
    assert '"median_s"' in printed
    assert {f.name for f in tmp_path.iterdir()} == {
        "workflow_fanout.json", "workflow_fanout.md", "workflow_fanout.png"}


async def test_a_fan_outs_steps_alike_share_one_estimate(tmp_path, monkeypatch):
    """Each fixed-site step's estimate is asked beside its submit; the fan-out's steps, alike
    but for their names, share one placement (issue 17: one each made a 1,000-step fan-out
    place 1,000 times). A step of another script has its own; each step has its estimate."""
    q = _queue(tmp_path)
    asked: list[str | None] = []
    fed = _engine(tmp_path, q)
    expected = fed.workflow_engine.ops.expected

    async def counted(spec, site, sources, ready_at):
        asked.append(spec.script)
        return await expected(spec, site, sources, ready_at)

    monkeypatch.setattr(fed.workflow_engine.ops, "expected", counted)
    text = _fan_out() + "  - {name: odd, site: alpha, needs: [top], script: ./odd}\n"
    try:
        await fed.start(recover=False)
        view = await fed.run_workflow(text, origin={"face": "test"})
        engine = fed.workflow_engine
        while engine._estimates:  # each recorded when it comes
            await asyncio.gather(*engine._estimates.values(), return_exceptions=True)
        assert sorted(asked) == ["./odd", "./top", "./w"]
        rec = fed.store.get_workflow(view.id)
        assert all(rec.step(s.name).data["estimating"] is False for s in view.steps)
        ends = {rec.step(f"w{i:03d}").data["expected_end"] for i in range(WIDTH)}
        assert len(ends) == 1
    finally:
        await fed.close()


async def test_a_crash_between_batches_loses_no_step_and_submits_none_twice(
        tmp_path, monkeypatch):
    """Batches of 5: the engine stops as it records the fan-out's second batch (its first
    went in whole, its jobs bound). The next engine submits the 7 steps still waiting, once
    each, and leaves the 5 submitted ones alone."""
    q = _queue(tmp_path)
    monkeypatch.setattr(engine_module, "SUBMIT_BATCH", 5)
    fed = _engine(tmp_path, q)
    reserve = Store.reserve_step_submits
    batches = 0

    def reserved(self, wid, submits, fence=None):
        nonlocal batches
        batches += 1
        if batches == 3:  # top's, the fan-out's first, then this one
            raise _Crash
        return reserve(self, wid, submits, fence)

    monkeypatch.setattr(Store, "reserve_step_submits", reserved)
    try:
        await fed.start(recover=False)
        with pytest.raises(_Crash):
            await fed.run_workflow(_fan_out(), origin={"face": "test"})
        wid = fed.store.list_workflows()[0].id
        phases = [s.phase for s in fed.store.get_workflow(wid).steps]
        assert phases.count("queued") == 6 and phases.count("waiting") == WIDTH - 5
        assert len(_queued_ids(q)) == 6
    finally:
        monkeypatch.setattr(Store, "reserve_step_submits", reserve)
        await fed.close()

    again = _engine(tmp_path, q)
    try:
        await again.start()
        await again.workflow_engine.advance(wid)
        view = await again.workflow_status(wid)
        _assert_each_step_submitted_once(q, view)
    finally:
        await again.close()
