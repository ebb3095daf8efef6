"""The store-growth benchmark runs end to end in a tiny configuration on a local site with a
fake sbatch (no test bed): both engines submit every step, the figures are a ratio within
the run, its files are written and the engine before is put back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.mark.parametrize("baseline", ["reread", "store", "transfers"])
def test_store_growth_benchmark(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                baseline: str) -> None:
    from benchmarks import store_growth
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store
    from diamond_jupyter.workflow.engine import WorkflowEngine

    kept = (Store.newest_jobs, Federation.finished_jobs, Store.get_step,
            WorkflowEngine._refreshed, Federation.measured_bandwidth,
            Federation.prediction_samples)
    store_growth.main(["--json", "--out", str(tmp_path), "--steps", "4", "--history", "30",
                       "--transfers", "20", "--baseline", baseline])
    out = json.loads(capsys.readouterr().out)
    (run,) = out["runs"]
    assert out["baseline"] == baseline
    assert (run["steps"], run["history"], run["transfers"]) == (4, 30, 20)
    assert run["before"]["submitted"] == run["now"]["submitted"] == 4
    assert run["ratio"] > 0 and run["now"]["last_tenth_submit_ms"] > 0
    assert {p.suffix for p in tmp_path.iterdir()} >= {".json", ".md", ".png"}
    assert (Store.newest_jobs, Federation.finished_jobs, Store.get_step,
            WorkflowEngine._refreshed, Federation.measured_bandwidth,
            Federation.prediction_samples) == kept


def test_the_engine_before_reads_each_step_as_the_engine_now(tmp_path: Path) -> None:
    """The whole-workflow baseline gives the steps the engine now reads alone."""
    from benchmarks.store_growth import whole_workflow_reread
    from diamond_jupyter.store import Store

    store = Store(tmp_path / "s.sqlite")
    try:
        rec = store.create_workflow("w", {}, ["a", "b"])
        store.update_step(rec.id, "b", phase="queued", token="t1")
        now = store.get_step(rec.id, "b"), store.refresh_workflow(rec, ["b"])
        with whole_workflow_reread():
            assert store.get_step(rec.id, "b") == now[0]
        assert now[1] == store.get_workflow(rec.id)
    finally:
        store.close()


def test_the_engine_before_reads_what_the_engine_now_reads(tmp_path: Path) -> None:
    """The baseline answers the same jobs: only the work differs."""
    from benchmarks.store_growth import _fill, engine_before
    from diamond_jupyter.model import JobState
    from diamond_jupyter.store import NewestJobs, Store

    store = Store(tmp_path / "s.sqlite")
    try:
        _fill(store, 40, before=False)
        for states in (None, [JobState.COMPLETED, JobState.FAILED], [JobState.PENDING]):
            now = [j.id for j in store.newest_jobs(NewestJobs.of(states, 25))]
            with engine_before():
                assert [j.id for j in store.newest_jobs(NewestJobs.of(states, 25))] == now
    finally:
        store.close()


async def test_the_placement_reads_before_decide_as_the_reads_now(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The transfers baseline measures the same bandwidth and the same correction from the
    user's own jobs (at one moment): only the work differs."""
    from benchmarks.store_growth import _federation, placement_reads_before
    from diamond_jupyter import federation
    from diamond_jupyter.calibration import own_error
    from diamond_jupyter.model import JobSpec, utcnow

    fed = _federation(tmp_path / "w", 10, False, transfers=60)
    try:
        spec = JobSpec(command="true")
        for i in range(30):
            pl = await fed.place(spec)
            job = fed.store.record_intent("alpha", f"t{i}", spec, placement=pl.model_dump(
                mode="json"))
            fed.store.bind_native_id(job.token, str(5000 + i))
        moment = utcnow()
        monkeypatch.setattr(federation, "utcnow", lambda: moment)
        now = fed.measured_bandwidth(), fed.prediction_samples()
        with placement_reads_before():
            before = fed.measured_bandwidth(), fed.prediction_samples()
        assert now[0] == before[0] != {}
        assert len(before[1]["alpha"]) == 30 > len(now[1]["alpha"])
        assert own_error(now[1]["alpha"]) == own_error(before[1]["alpha"]) is not None
    finally:
        await fed.close()


def test_the_profile_of_a_workflows_submits_names_the_placement(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`benchmarks.profile_store_growth` runs a small workflow under cProfile and prints
    the functions, the placement's among them, and saves the raw profile when asked."""
    import pstats

    from benchmarks import profile_store_growth

    saved = tmp_path / "p.out"
    profile_store_growth.main(["--steps", "3", "--history", "5", "--transfers", "5",
                               "--top", "400", "--save", str(saved)])
    out = capsys.readouterr().out
    assert "'submitted': 3" in out and "function calls" in out
    assert "measured_bandwidth" in out and "prediction_samples" in out
    assert pstats.Stats(str(saved)).total_calls > 0
