"""Model changes replayed on recorded rounds (benchmarks/model_replay.py): a change to the
estimates, where the record shows its cause, scored by the engine's own rule."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from benchmarks import model_replay
from benchmarks.placement import recent_bounds
from diamond_jupyter.calibration import QueueWait, RecentWaits, SiteCalibration
from diamond_jupyter.model import SiteSnapshot


def est(start, finish, bound, raw):
    return {"start_s": start, "finish_s": finish, "bound_s": bound, "raw_start_s": raw}


def round_(k, estimate, pending, completion):
    return {"round": k, "estimate": estimate, "pending": pending,
            "completion_s": completion, "censored": [], "choice": {"diamond": "a"}}


def run_of(*rounds, traces=None):
    return {"seed": 5, "traces": traces, "per_round": list(rounds)}


# a: to start at once, bound 0, behind 5 queued jobs; it never started (240 s). b: 4 s
# away, bound 52 s, finishes 7 s later (within the noise), so a wins on its surer start
QUEUED = round_(1, {"a": est(0.0, 23.5, 0.0, 0.0), "b": est(4.0, 30.5, 52.0, 52.0)},
                {"a": 5, "b": 0}, {"a": 240.0, "b": 12.1})
# the same with nothing queued at a: no change applies
IDLE = round_(2, {"a": est(0.0, 23.5, 0.0, 0.0), "b": est(4.0, 30.5, 52.0, 52.0)},
              {"a": 0, "b": 0}, {"a": 20.0, "b": 12.1})


def test_a_start_at_once_behind_queued_jobs_loses_its_sure_bound():
    run = run_of(QUEUED, IDLE)
    assert model_replay.regrets(run) == [240.0 - 12.1, 20.0 - 12.1]
    changed = model_replay.queued_now(per_job_s=20.0)(run)
    assert changed["per_round"][0]["estimate"]["a"]["bound_s"] == 100.0  # 5 jobs x 20 s
    assert changed["per_round"][1]["estimate"]["a"]["bound_s"] == 0.0  # nothing queued
    assert run["per_round"][0]["estimate"]["a"]["bound_s"] == 0.0  # the record untouched
    moved = model_replay.changed_rounds(run, model_replay.queued_now(per_job_s=20.0))
    assert moved == [{"seed": 5, "round": 1, "from": "a", "to": "b",
                      "regret_before_s": 240.0 - 12.1, "regret_after_s": 0.0}]
    # a bound of 2 s is still surer than b's 52 s: nothing moves
    assert model_replay.changed_rounds(run, model_replay.queued_now(bound_s=2.0)) == []
    later = model_replay.queued_now(10.0, later_s=5.0)(run)["per_round"][0]["estimate"]["a"]
    assert (later["start_s"], later["finish_s"], later["bound_s"]) == (5.0, 28.5, 10.0)


def test_a_bound_set_by_recent_waits_falls_back_to_the_plan_on_the_sites_named():
    # b's bound 146 s is above its raw plan's 40 s and its start: its recent waits set it
    r = round_(7, {"a": est(37.7, 51.0, 114.7, 347.7), "b": est(18.9, 43.0, 146.0, 40.0)},
               {"a": 3, "b": 1}, {"a": 73.4, "b": 23.4})
    run = run_of(r)
    assert model_replay.changed_rounds(run, model_replay.no_recent_wait_bound(("a",))) == []
    got = model_replay.no_recent_wait_bound(("b",))(run)["per_round"][0]["estimate"]
    assert got["b"]["bound_s"] == 40.0 and got["a"]["bound_s"] == 114.7
    assert model_replay.changed_rounds(run, model_replay.no_recent_wait_bound(("b",)))[0][
        "to"] == "b"


def test_summary_per_background_counts_every_kept_run(tmp_path):
    for seed, traces in ((1, None), (2, ["KTH"])):
        (tmp_path / f"placement-x-seed{seed}.json").write_text(
            json.dumps(run_of(QUEUED, IDLE, traces=traces)))
    (tmp_path / "placement-x-seed3.json").write_text(json.dumps({"seed": 3}))  # no rounds
    data = model_replay.summarize(tmp_path, {
        "recorded": lambda run: run, "20 s a job": model_replay.queued_now(per_job_s=20.0)})
    for bg in ("depth_misleads", "real logs"):
        d = data["backgrounds"][bg]
        assert d["runs"] == 1
        assert d["changes"]["recorded"]["rounds_changed"] == 0
        assert d["changes"]["20 s a job"] == {
            "mean_of_run_means_s": (0.0 + 20.0 - 12.1) / 2, "rounds_changed": 1,
            "rounds_better": 1, "rounds_worse": 0}
    assert "| real logs | 20 s a job |" in model_replay.table(data)


def test_the_recent_wait_bound_of_jobs_no_larger_replaces_the_one_of_every_job():
    # b's 146 s bound was set by every job's recent waits (146 s); jobs no larger than the
    # probe gave 12 s: its bound falls to its raw plan's 40 s, and b (finishing 8 s sooner
    # within the noise) now wins over a's 114.7 s
    b = {**est(18.9, 43.0, 146.0, 40.0), "recent_bound_s": 146.0,
         "recent_bound_no_larger_s": 12.0}
    # a's bound (114.7 s) was not set by its recent waits (30 s); those of jobs no larger
    # (150 s) would have raised it
    a = {**est(37.7, 51.0, 114.7, 347.7), "recent_bound_s": 30.0,
         "recent_bound_no_larger_s": 150.0}
    run = run_of(round_(7, {"a": a, "b": b}, {"a": 3, "b": 1}, {"a": 73.4, "b": 23.4}))
    got = model_replay.recent_bound_no_larger(run)["per_round"][0]["estimate"]
    assert (got["a"]["bound_s"], got["b"]["bound_s"]) == (150.0, 40.0)
    assert model_replay.changed_rounds(run, model_replay.recent_bound_no_larger) == [
        {"seed": 5, "round": 7, "from": "a", "to": "b", "regret_before_s": 73.4 - 23.4,
         "regret_after_s": 0.0}]
    # no such bound known for b's small jobs: the plan's bound; a round recording neither
    # bound is left as it was
    run["per_round"][0]["estimate"]["b"]["recent_bound_no_larger_s"] = None
    assert model_replay.recent_bound_no_larger(run)["per_round"][0]["estimate"]["b"][
        "bound_s"] == 40.0
    assert model_replay.recent_bound_no_larger(run_of(QUEUED)) == run_of(QUEUED)


def _waits() -> dict[str, QueueWait]:
    # the probe's class (5-16 CPUs) has too few waits for a bound: it falls back to the
    # partition's, where 32-CPU jobs waited 500-790 s and jobs of 1-8 CPUs 0-29 s
    small = [QueueWait("batch", (1, 2, 4, 8, 1)[i % 5], float(i)) for i in range(30)]
    large = [QueueWait("batch", 32, 500.0 + 10 * i) for i in range(30)]
    return {str(i): w for i, w in enumerate([*small, *large, QueueWait("batch", None, 900.0)])}


def test_the_recent_waits_of_jobs_no_larger_leave_the_larger_jobs_out():
    waits = RecentWaits(_waits().values())
    every, smaller = waits.bound("batch", 8), waits.no_larger_than(8).bound("batch", 8)
    assert every is not None and every[0] >= 500.0 and every[1] == 61
    assert smaller is not None and smaller[0] <= 29.0 and smaller[1] == 30
    assert waits.no_larger_than(0).bound("batch", 8) is None  # none known that small


def test_the_placement_benchmark_records_both_recent_wait_bounds():
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    got = recent_bounds(SiteCalibration([], queued=_waits()), SiteSnapshot(site="delta"),
                        "batch", 8, now)
    assert got["recent_bound_s"] >= 500.0 and got["recent_bound_no_larger_s"] <= 29.0
    assert recent_bounds(None, SiteSnapshot(site="delta"), "batch", 8, now) == {
        "recent_bound_s": None, "recent_bound_no_larger_s": None}


def test_a_calibrated_start_above_its_recorded_recent_bound_is_capped_there():
    """Session 33's `recent_cap` replayed: a calibrated start above the site's recorded
    recent-wait bound moves down to it, its finish with it; one below it, or not
    calibrated, or without the bound recorded, stays."""
    high = {**est(280.0, 300.0, 1700.0, 1750.0), "source": "calibrated",
            "recent_bound_s": 90.0}
    low = {**est(40.0, 60.0, 90.0, 1750.0), "source": "calibrated", "recent_bound_s": 90.0}
    raw = {**est(280.0, 300.0, 280.0, 280.0), "source": "simulation", "recent_bound_s": 90.0}
    none = {**est(280.0, 300.0, 1700.0, 1750.0), "source": "calibrated"}
    run = run_of(round_(0, {"a": high, "b": low, "c": raw, "d": none},
                        {"a": 3, "b": 3, "c": 3, "d": 3},
                        {"a": 95.0, "b": 50.0, "c": 290.0, "d": 290.0}))
    got = model_replay.start_capped_by_recent_bound(run)["per_round"][0]["estimate"]
    assert (got["a"]["start_s"], got["a"]["finish_s"]) == (90.0, 110.0)
    assert got["b"] == low and got["c"] == raw and got["d"] == none
    assert run["per_round"][0]["estimate"]["a"]["start_s"] == 280.0  # the record untouched
