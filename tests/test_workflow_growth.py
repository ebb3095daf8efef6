"""A workflow's steps cost the same however many there are: between one step's submit and
the next, the engine reads again only the steps it wrote (a few rows), never the whole
workflow (before, every step's rows after each submit: 500 steps, 500 rows per step).
A Federation of local "Slurm" sites whose sbatch is a script that counts."""

from __future__ import annotations

from typing import Any

import pytest
from test_workflow_unrunnable import PLAIN, _fed

from diamond_jupyter.store import workflows
from diamond_jupyter.workflow.engine import WorkflowEngine


def _workflow(steps: int, chained: bool) -> str:
    """`steps` steps on alpha; `chained`: each needs the one before (queued ahead, the
    scheduler's afterok holding it)."""
    lines = []
    for i in range(steps):
        needs = f", needs: [s{i - 1:03d}]" if chained and i else ""
        lines.append(f"  - {{name: s{i:03d}, site: alpha{needs}, script: \"{PLAIN}\"}}\n")
    return "name: wide\nqueue_ahead: true\nsteps:\n" + "".join(lines)


class _Counts:
    """The workflow-step rows read so far, and how many had been read at each step's
    submit."""

    def __init__(self, monkeypatch: Any) -> None:
        self.read = 0
        self.at_submit: list[int] = []
        row_to_step, submit = workflows._row_to_step, WorkflowEngine._submit

        def counted(row: Any) -> Any:
            self.read += 1
            return row_to_step(row)

        async def noted(engine: Any, rec: Any, wf: Any, name: str) -> None:
            self.at_submit.append(self.read)
            await submit(engine, rec, wf, name)
        monkeypatch.setattr(workflows, "_row_to_step", counted)
        monkeypatch.setattr(WorkflowEngine, "_submit", noted)


async def _rows_between_submits(tmp_path: Any, monkeypatch: Any, counts: _Counts,
                                steps: int, chained: bool) -> list[int]:
    """The workflow-step rows the engine read between each step's submit and the next."""
    tmp_path.mkdir()
    counts.at_submit = []
    fed = _fed(tmp_path, monkeypatch)
    try:
        view = await fed.run_workflow(_workflow(steps, chained), origin={"face": "test"})
        assert [s.state for s in view.steps] == ["PENDING"] * steps  # every one submitted
        assert len(fed.sbatch_calls.read_text().splitlines()) == steps
    finally:
        await fed.close()
    got = counts.at_submit
    assert len(got) == steps
    return [b - a for a, b in zip(got, got[1:], strict=False)]


@pytest.mark.parametrize("chained", [False, True], ids=["independent", "chained"])
async def test_a_steps_submit_reads_as_many_rows_in_a_large_workflow_as_in_a_small(
        tmp_path, monkeypatch, chained):
    counts = _Counts(monkeypatch)
    small = await _rows_between_submits(tmp_path / "small", monkeypatch, counts, 6, chained)
    large = await _rows_between_submits(tmp_path / "large", monkeypatch, counts, 40, chained)
    # the step just submitted, its own row or two, and once more when its estimate came
    assert max(small) <= 4, small
    assert max(large) == max(small), (small, large)


def test_a_refresh_reads_the_steps_written_and_the_whole_workflow_once_it_ended(tmp_path):
    """Only the steps named are read again; a workflow whose state moved (a stop rewrites
    every step) is read whole."""
    from diamond_jupyter.store import Store

    store = Store(tmp_path / "s.sqlite")
    try:
        rec = store.create_workflow("w", {}, ["a", "b", "c"])
        store.update_step(rec.id, "a", phase="queued", token="t1")
        store.update_step(rec.id, "b", phase="queued", token="t2")
        fresh = store.refresh_workflow(rec, ["a"])
        assert [(s.name, s.phase) for s in fresh.steps] == [
            ("a", "queued"), ("b", "waiting"), ("c", "waiting")]  # b: not named, not read
        assert rec.step("a").phase == "waiting"  # the view given is left as it was
        store.update_step(rec.id, "c", phase="cancelled")
        store.set_workflow_state(rec.id, "CANCELLED", "by request")
        ended = store.refresh_workflow(fresh, [])
        assert ended.state == "CANCELLED"
        assert [s.phase for s in ended.steps] == ["queued", "queued", "cancelled"]
    finally:
        store.close()
