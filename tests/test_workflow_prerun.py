"""The wait before a workflow was recorded, per recorded run (benchmarks/workflow_prerun.py):
read from each step's two clocks, and the ratios without it on hand-worked runs and on the
recorded ones."""

from __future__ import annotations

import json

from benchmarks import workflow_prerun as wp
from benchmarks.common import RESULTS


def run(mode, rnd, created, makespan):
    """A run whose workflow was recorded `created` s after the benchmark asked."""
    return {"round": rnd, "mode": mode, "makespan_s": makespan, "steps": {
        "prep": {"phases": {"submitting": created + 0.3},
                 "since_workflow_start": {"submit_began": 0.3}},
        "train": {"phases": {"submitting": created + 0.1},
                  "since_workflow_start": {"submit_began": 0.1}}}}


def test_the_wait_is_the_earliest_steps_clock_difference():
    assert wp.prerun_wait(run("queue_ahead", 0, 7.5, 60.0)) == 7.5
    assert wp.prerun_wait({"steps": {"prep": {"phases": {"submitting": 1.0}}}}) is None


def test_the_first_runs_wait_stays_and_a_later_ones_past_the_warm_one_goes():
    data = {"seed": 1, "background": "gpu_queue", "runs": [
        run("queue_ahead", 0, 10.0, 60.0), run("after_upstream", 0, 0.0, 75.0),
        run("after_upstream", 1, 0.5, 90.0), run("queue_ahead", 1, 6.5, 66.0)]}
    s = wp.seed_prerun(data)
    assert s["prerun_s"] == {"queue_ahead": [10.0, 6.5], "after_upstream": [0.0, 0.5]}
    assert s["first_run"] == ["queue_ahead round 0"]
    assert abs(s["ratio"] - 82.5 / 63.0) < 1e-3
    # round 1's queue-ahead less 6.0 s (its wait past after-upstream's 0.5); round 0 kept
    assert s["median_makespan_without_later_prerun_s"]["queue_ahead"] == 60.0
    assert s["median_makespan_without_prerun_s"]["queue_ahead"] == 55.0
    assert wp.seed_prerun({"runs": [run("after_upstream", 0, 0.0, 70.0)]}) is None


def test_the_recorded_seed_62_waited_before_its_record_in_two_queue_ahead_rounds():
    data = json.loads((RESULTS / "workflow-gpu_queue-matched-seed62.json").read_text())
    s = wp.seed_prerun(data)
    assert s["prerun_s"]["queue_ahead"] == [12.21, 0.06, 7.51]
    assert max(s["prerun_s"]["after_upstream"]) <= 0.2
    assert s["ratio"] < s["ratio_without_prerun"]
