"""A queued-ahead GPU step's wait after its upstream ended, in parts (benchmarks/
workflow_release.py): the FIFO replay of gamma's GPUs on hand-worked queues whose starts are
known in advance, a run cut into parts that add up to its gap, and every recorded run."""

from __future__ import annotations

import json

import pytest

from benchmarks import workflow_release as wr
from benchmarks.common import RESULTS
from benchmarks.workflow_parts import recorded


def job(name, eligible, runtime, key=None):
    return wr.GpuJob(name, eligible, eligible if key is None else key, runtime)


def test_each_freed_gpu_goes_to_the_first_eligible_job_in_line():
    got = wr.replay_starts([job("a", 0, 10), job("b", 0, 20), job("c", 1, 5),
                            job("d", 2, 5, key=-1)], gpus=2)
    # a and b start at once; at 10 a's GPU goes to d (eligible, first by its key), at 15 to c
    assert got == {"a": 0, "b": 0, "d": 10, "c": 15}


def test_a_job_not_yet_eligible_keeps_no_gpu_and_its_key_counts_once_it_is():
    # "late" is first in line but eligible only at 12: the GPU freed at 10 goes to "next"
    got = wr.replay_starts([job("a", 0, 10), job("next", 1, 10), job("late", 12, 1, key=-5),
                            job("last", 3, 1)], gpus=1)
    assert got == {"a": 0, "next": 10, "late": 20, "last": 21}


def run(makespan=70.0, released=31.0, started=50.0, mode="queue_ahead"):
    return {"round": 0, "mode": mode, "makespan_s": makespan, "steps": {
        "prep": {"site": "alpha", "submitted": 0.3, "started": 0.5, "ended": 30.0,
                 "phases": {"done": 30.02}},
        "train": {"site": "gamma", "submitted": 0.6, "started": started,
                  "ended": started + 10, "phases": {"held": 0.6, "moving": 30.1,
                                                    "ready": 30.9, "released": released}}}}


def test_a_gated_run_is_cut_into_diamonds_parts_the_gpus_and_the_scheduler(monkeypatch):
    monkeypatch.setattr(wr, "gpus", lambda: 1)
    # one GPU: a job running until 40; one submitted at 0.5 (before train) runs 5 s
    bg = [job("running", -5, 45), job("before", 0.5, 5), job("after", 2.0, 5)]
    p = wr.gated_parts(run(), bg)
    parts = {k: round(v, 6) for k, v in p["parts"].items()}
    assert parts == {"detect": 0.02, "engine": 0.08, "transfer": 0.8, "release": 0.1,
                     "running": 9.0, "ahead": 5.0, "scheduler": 5.0}
    assert sum(p["parts"].values()) == pytest.approx(p["gap_s"])
    moved = p["start_moved_s"]
    assert moved["first_in_line"] == pytest.approx(-5.0)  # "before" no longer ahead
    assert moved["queued_at_start"] == pytest.approx(-5.0)  # in line from 0 s, before it
    assert moved["at_arrival"] == 0 and moved["at_upstream_end"] == 0  # GPUs busy anyway
    assert moved["held"] == pytest.approx(5.0)  # queued anew: behind "after" too


def test_a_step_submitted_after_its_upstream_or_elsewhere_is_not_cut():
    late = run()
    late["steps"]["train"]["submitted"] = 31.0
    assert wr.gated_parts(late, []) is None
    cpu = run()
    cpu["steps"]["train"]["site"] = "beta"
    assert wr.gated_parts(cpu, []) is None


def test_every_recorded_gpu_queue_run_is_cut_and_the_replay_is_checked():
    r = wr.analyse(recorded(RESULTS))
    assert len(r["seeds"]) >= 28
    for s in r["seeds"]:
        data = json.loads((RESULTS / s["file"]).read_text())
        assert data["background"] == "gpu_queue"
        for p in s["runs"]:
            assert sum(p["parts"].values()) == pytest.approx(p["gap_s"], abs=0.02)
            assert p["parts"]["running"] >= 0 and p["parts"]["ahead"] >= 0
        # the replay of after-upstream trains, which no gate or engine part touches, lands
        # within a few seconds of what Slurm did (its cycles and jobs' overheads add up)
        assert s["replay_error_s"]["n"] >= 2 and abs(s["replay_error_s"]["median"]) < 4
    # seed 31 also ran held-and-released: the replay of "held" matches it within 2 s
    s31 = next(s for s in r["seeds"] if s["held_release_s"] is not None)
    replayed = s31["after_upstream_s"] / s31["ratio_if"]["held"]
    assert replayed == pytest.approx(s31["held_release_s"], abs=2.0)


def test_now_is_the_engines_order_and_its_move_check_beside_the_copy(monkeypatch):
    """`now` moves the run as `queued_before_upstream` does, and earlier by the 3 s analyse's
    move check (on beta, behind a gate) took before its copy began, past train's 0.1 s."""
    monkeypatch.setattr(wr, "gpus", lambda: 1)
    r = run()
    r["steps"]["prep"]["phases"].update(submitting=0.28, queued=0.3)
    r["steps"]["train"]["phases"].update(submitting=0.58, done=60.01)
    r["steps"]["train"]["phases"]["moving"] = 30.12  # 0.1 s past prep's "done"
    r["steps"]["analyse"] = {"site": "beta", "submitted": 0.9, "started": 63.6,
                             "ended": 68.6, "phases": {"held": 0.9, "moving": 63.01,
                                                       "ready": 63.1, "released": 63.11,
                                                       "done": 68.61}}
    r["makespan_s"] = 68.6
    moved = wr.gated_parts(r, [job("running", -5, 45)])["start_moved_s"]
    assert moved["now"] == pytest.approx(moved["queued_before_upstream"] - 2.9)
    assert wr.gated_parts(run(), [job("running", -5, 45)])["start_moved_s"]["now"] == \
        pytest.approx(moved["queued_before_upstream"])  # no analyse times: nothing taken
