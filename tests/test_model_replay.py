"""Model changes replayed on recorded rounds (benchmarks/model_replay.py): a change to the
estimates, where the record shows its cause, scored by the engine's own rule."""

from __future__ import annotations

import copy
import json
import math
from datetime import datetime, timezone

import pytest

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
            "rounds_better": 1, "rounds_worse": 0,
            "runs_mean_below_every_baseline": 0,  # no baselines recorded
            "mean_of_run_means_by_seed_parity_s": {  # run_of's seed is 5
                "even": None, "odd": (0.0 + 20.0 - 12.1) / 2}}
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


def cal_est(start, finish, bound, raw, samples, borrowed=False):
    return {**est(start, finish, bound, raw), "source": "calibrated", "samples": samples,
            "borrowed": borrowed}


# seed 130's round 0 under depth_misleads (results/placement-depth_misleads-seed130.json):
# gamma, on ratios borrowed from the other sites, was to start in 11 s (bound and plan
# 335 s) and started after 217 s; alpha, on 9 jobs of its own, in 5 s (bound 3176 s),
# started after 9 s, the fastest. The engine took gamma: the finishes tie, its bound is surer
SEED130_ROUND0 = {**round_(0, {
    "gamma": cal_est(11.0, 13.0727, 335.0, 335.0, 25, borrowed=True),
    "alpha": cal_est(5.0488, 9.1943, 3176.0, 3176.0, 9),
    "beta": cal_est(45.625, 48.3887, 476.0, 476.0, 16),
    "delta": cal_est(194.4077, 199.0138, 2935.4978, 2935.4978, 25, borrowed=True)},
    {"gamma": 0, "alpha": 0, "beta": 0, "delta": 0},
    {"gamma": 227.4157, "alpha": 28.9254, "beta": 60.3093, "delta": 34.0895}),
    "started_s": {"gamma": 217.4034, "alpha": 8.9192, "beta": 46.9741, "delta": 11.8634},
    "additional_s": {"fixed": 0.0, "fewest_pending": 0.0, "random": 0.0,
                     "diamond": 198.4903, "home:beta": 31.3839}}


def test_a_borrowing_site_ranked_at_its_walltime_plan_loses_seed_130s_round_0():
    run = run_of(SEED130_ROUND0)
    assert model_replay.regrets(run) == [227.4157 - 28.9254]  # the recorded pick, gamma
    at_plan = model_replay.toward_plan(1.0, borrowed_only=True)
    moved = at_plan(run)["per_round"][0]["estimate"]
    assert moved["gamma"]["start_s"] == 335.0  # no jobs of its own: all the way to its plan
    assert moved["gamma"]["finish_s"] == 13.0727 + 324.0
    assert moved["alpha"] == SEED130_ROUND0["estimate"]["alpha"]  # its own ratios stand
    assert model_replay.changed_rounds(run, at_plan) == [
        {"seed": 5, "round": 0, "from": "gamma", "to": "alpha",
         "regret_before_s": 227.4157 - 28.9254, "regret_after_s": 0.0}]
    at_bound = model_replay.at_bound_below(1, borrowed_only=True)(run)
    assert at_bound["per_round"][0]["estimate"]["gamma"]["start_s"] == 335.0
    assert run["per_round"][0]["estimate"]["gamma"]["start_s"] == 11.0  # record untouched


def test_a_thin_sites_start_moves_toward_its_plan_by_a_prior_of_jobs_at_their_request():
    r = round_(3, {"a": cal_est(10.0, 40.0, 50.0, 110.0, 3),
                   "b": cal_est(10.0, 40.0, 50.0, 110.0, 25, borrowed=True),
                   "c": {**cal_est(10.0, 40.0, 50.0, 110.0, 0), "source": "simulation"}},
               {}, {"a": 20.0, "b": 20.0, "c": 20.0})
    got = model_replay.toward_plan(1.0)(run_of(r))["per_round"][0]["estimate"]
    # a: 3 jobs of its own against 1 at its request: a quarter of the way, 25 s
    assert (got["a"]["start_s"], got["a"]["finish_s"], got["a"]["bound_s"]) == (35.0, 65.0, 50.0)
    # b's 25 jobs are other sites': none of its own, so all the way; its bound follows
    assert (got["b"]["start_s"], got["b"]["bound_s"]) == (110.0, 110.0)
    assert got["c"]["start_s"] == 10.0  # not calibrated: nothing to shrink
    five = model_replay.toward_plan(5.0)(run_of(r))["per_round"][0]["estimate"]
    assert five["a"]["start_s"] == 10.0 + 5 / 8 * 100.0
    below = model_replay.at_bound_below(5)(run_of(r))["per_round"][0]["estimate"]
    assert below["a"]["start_s"] == 50.0 and below["b"]["start_s"] == 50.0
    assert model_replay.at_bound_below(3)(run_of(r))["per_round"][0]["estimate"]["a"][
        "start_s"] == 10.0  # 3 of its own are not under 3


def test_summary_counts_the_runs_below_every_baseline_and_the_errors_by_evidence(tmp_path):
    # the recorded pick's 198.5 s is above the fixed home's 0 s; at its plan it is not
    (tmp_path / "placement-x-seed130.json").write_text(json.dumps(run_of(SEED130_ROUND0)))
    data = model_replay.summarize(tmp_path, {
        "recorded": lambda run: run,
        "borrowed at plan": model_replay.toward_plan(1.0, borrowed_only=True)})
    d = data["backgrounds"]["depth_misleads"]
    assert d["changes"]["recorded"]["runs_mean_below_every_baseline"] == 0
    # 0 s is no lower than the fixed home's 0 s: below means strictly below
    assert d["changes"]["borrowed at plan"]["runs_mean_below_every_baseline"] == 0
    assert model_replay.best_baseline_mean(run_of(SEED130_ROUND0)) == 0.0
    errors = d["start_errors"]
    assert errors["borrowed"]["starts"] == 2 and errors["under 10 own jobs"]["starts"] == 1
    assert errors["under 10 own jobs"]["calibrated_median_log"] == pytest.approx(
        math.log((5.0488 + 30) / (8.9192 + 30)))
    assert errors["10-28 own jobs"]["plan_mean_abs_log"] == pytest.approx(
        abs(math.log((476.0 + 30) / (46.9741 + 30))))
    table = model_replay.table(data)
    # no run of an even seed: its half is shown as none
    assert "| depth_misleads | borrowed at plan | 0.000 | - / 0.00 | 0 of 1 |" in table
    assert "| depth_misleads | borrowed | 2 |" in table


def test_a_run_below_every_baseline_is_counted():
    r = {**SEED130_ROUND0, "additional_s": {"fixed": 40.0, "random": 30.0}}
    runs = [run_of(r)]
    assert model_replay.below_every_baseline(runs, lambda run: run) == 0  # 198.5 s vs 30 s
    assert model_replay.below_every_baseline(
        runs, model_replay.toward_plan(1.0, borrowed_only=True)) == 1  # 0 s


def probe_round(k, estimate, started, completion):
    return {**round_(k, estimate, {}, completion), "started_s": started}


def test_a_site_ranks_at_a_quantile_toward_its_bound_the_nearer_the_fewer_its_own_jobs():
    thin = {**est(10.0, 30.0, 110.0, 400.0), "samples": 3, "borrowed": False}
    many = {**est(10.0, 30.0, 110.0, 400.0), "samples": 97, "borrowed": False}
    run = run_of(round_(0, {"thin": thin, "many": many}, {}, {"thin": 50.0, "many": 40.0}))

    def moved(change):
        got = change(run)["per_round"][0]["estimate"]
        return {s: (e["start_s"], e["finish_s"], e["bound_s"]) for s, e in got.items()}
    assert moved(model_replay.toward_bound(0.25)) == {"thin": (35.0, 55.0, 110.0),
                                                      "many": (35.0, 55.0, 110.0)}
    # a prior of 3 jobs: 3 / (3 + 3) of the way for the thin site, 3 / 100 for the other
    assert moved(model_replay.toward_bound(prior=3.0)) == {
        "thin": (60.0, 80.0, 110.0), "many": pytest.approx((13.0, 33.0, 110.0))}
    assert run["per_round"][0]["estimate"]["thin"]["start_s"] == 10.0  # the record kept


# a's probes of rounds 0 and 1 were predicted at 5 s and started after 45 s and 35 s; b's
# after 1 s and 2 s of 30 s predicted; round 2 asks what they say (12 s between rounds)
PROBES = [probe_round(k, {"a": est(5.0, 20.0, 30.0, 60.0), "b": est(30.0, 45.0, 60.0, 60.0)},
                      {"a": a, "b": b}, {"a": a + 15.0, "b": b + 15.0})
          for k, a, b in ((0, 45.0, 1.0), (1, 35.0, 2.0))]
NOW_ROUND = probe_round(2, {"a": est(5.0, 20.0, 30.0, 60.0), "b": est(30.0, 45.0, 60.0, 60.0)},
                        {"a": 50.0, "b": 3.0}, {"a": 65.0, "b": 18.0})


def test_own_probes_late_before_move_a_site_later_as_they_stood_at_the_round():
    run = run_of(*PROBES, NOW_ROUND)
    # at round 2 (24 s and 12 s after them) neither of a's had started: both overdue
    # (waited 24 s and 12 s against 5 s), a median 13 s late; b's both started sooner
    assert model_replay.probe_lateness(run, 2, "a") == pytest.approx(13.0)
    assert model_replay.probe_lateness(run, 2, "b") is None  # later only
    assert model_replay.probe_lateness(run, 2, "b", both_ways=True) == pytest.approx(-28.5)
    assert model_replay.probe_lateness(run, 1, "a") == pytest.approx(7.0)  # 12 s waited
    assert model_replay.regrets(run)[2] == 50.0 - 3.0  # the engine took a
    late = model_replay.late_probes(1.0)(run)["per_round"]
    assert late[2]["estimate"]["a"]["start_s"] == pytest.approx(18.0)
    assert late[2]["estimate"]["a"]["bound_s"] == 30.0
    # 7 s late at round 1 is within the tolerance: nothing moves
    assert late[1]["estimate"]["a"]["start_s"] == 5.0
    both = model_replay.late_probes(1.0, both_ways=True)(run)["per_round"][2]["estimate"]
    assert both["b"]["start_s"] == pytest.approx(1.5)
    assert model_replay.regrets(model_replay.late_probes(1.0, both_ways=True)(run))[2] == 0.0


def test_a_site_moves_sooner_only_when_every_probe_before_started_sooner():
    run = run_of(*PROBES, NOW_ROUND)
    assert model_replay.sooner_all(run, 2, "b") == pytest.approx(-28.0)  # the least gained
    assert model_replay.sooner_all(run, 2, "a") is None
    waiting = copy.deepcopy(run)
    waiting["per_round"][1]["started_s"]["b"] = 20.0  # not started by round 2 (12 s on)
    assert model_replay.sooner_all(waiting, 2, "b") is None
    got = model_replay.late_probes(0.5, sooner_when_all=True)(run)["per_round"][2]["estimate"]
    assert got["b"]["start_s"] == pytest.approx(16.0) and got["a"]["start_s"] == 11.5


def test_the_own_error_ratio_from_fewer_probes_moves_only_later():
    run = run_of(*PROBES, NOW_ROUND)
    # a: (24 + 30) / 35 and (12 + 30) / 35, median 48 / 35
    got = model_replay.late_probes_ratio(1.0)(run)["per_round"][2]["estimate"]
    assert got["a"]["start_s"] == pytest.approx(35.0 * 48.0 / 35.0 - 30.0)
    assert got["b"]["start_s"] == 30.0  # started sooner: no pull-in
    assert model_replay.late_probes_ratio(1.0, min_probes=3)(run) == run  # 2 probes only


def test_a_thin_sites_ratio_shrinks_to_the_pooled_one():
    # plan 70 s for both; thin (2 own jobs) calibrated to 0 s, rich (98) to 40 s; thin
    # runs 40 s, rich 5 s: thin finishes first by 5 s
    thin = {**est(0.0, 40.0, 70.0, 70.0), "samples": 2, "borrowed": False,
            "source": "calibrated"}
    rich = {**est(40.0, 45.0, 70.0, 70.0), "samples": 98, "borrowed": False,
            "source": "calibrated"}
    run = run_of(round_(0, {"thin": thin, "rich": rich}, {}, {"thin": 80.0, "rich": 60.0}))
    pooled = (2 * math.log(30 / 100) + 98 * math.log(70 / 100)) / 100
    got = model_replay.shrink_to_pooled(2.0)(run)["per_round"][0]["estimate"]
    shrunk = (2 * math.log(30 / 100) + 2 * pooled) / 4
    assert got["thin"]["start_s"] == pytest.approx(math.exp(shrunk) * 100 - 30)
    assert got["rich"]["start_s"] == pytest.approx(
        math.exp((98 * math.log(70 / 100) + 2 * pooled) / 100) * 100 - 30)
    assert model_replay.regrets(run) == [20.0]
    assert model_replay.regrets(model_replay.shrink_to_pooled(2.0)(run)) == [0.0]


def test_the_summary_gives_each_half_of_the_runs_by_seed_parity(tmp_path):
    for seed, lost in ((4, 10.0), (5, 30.0), (6, 20.0)):
        r = round_(0, {"a": est(0.0, 5.0, 0.0, 0.0), "b": est(1.0, 6.0, 1.0, 1.0)}, {},
                   {"a": 5.0 + lost, "b": 5.0})
        (tmp_path / f"placement-x-seed{seed}.json").write_text(
            json.dumps({**run_of(r), "seed": seed}))
    got = model_replay.summarize(tmp_path, {"recorded": lambda run: run})
    c = got["backgrounds"]["depth_misleads"]["changes"]["recorded"]
    assert c["mean_of_run_means_s"] == pytest.approx(20.0)
    assert c["mean_of_run_means_by_seed_parity_s"] == {"even": 15.0, "odd": 30.0}


def test_the_engines_own_jobs_correction_is_replayed_by_its_own_function():
    run = run_of(*PROBES, NOW_ROUND)
    got = model_replay.ENGINE(run)["per_round"][2]["estimate"]
    # a: two overdue probes, 19 s and 7 s late so far: `own_error`'s median, 13 s, moves
    # its start and bound; b: both started sooner, the least gain 28 s
    assert (got["a"]["start_s"], got["a"]["bound_s"]) == (18.0, 43.0)
    assert (got["b"]["start_s"], got["b"]["bound_s"]) == (2.0, 32.0)
    assert model_replay.regrets(model_replay.ENGINE(run))[2] == 0.0  # b, not a
    assert run["per_round"][2]["estimate"]["a"]["start_s"] == 5.0  # the record untouched
    # from a's last probe only (7 s late): within the tolerance, a keeps its start
    last = model_replay.own_replayed(model_replay.last_own(1))(run)["per_round"][2]
    assert last["estimate"]["a"]["start_s"] == 5.0


def test_own_lateness_weighted_by_recency_follows_the_latest_jobs():
    from diamond_jupyter.calibration import PredictionSample

    def sample(at, observed):
        return PredictionSample(predicted_s=10.0, observed_s=observed, started=True,
                                submitted_at=at)

    # two jobs 60 s late, then one on time: a short half-life follows the last one
    samples = [sample(0, 70.0), sample(1, 70.0), sample(2, 12.0)]
    assert model_replay.recency_weighted(0.5)(samples) is None  # 2 s late: no evidence
    assert model_replay.recency_weighted(100.0)(samples).shift_s == 60.0
    assert model_replay.recency_weighted(1.0)([sample(0, 5.0)]) is None  # sooner: no move
    assert model_replay._weighted_median([(1.0, 1.0), (5.0, 3.0)]) == 5.0


def test_a_start_is_raised_to_its_sites_recent_waits_or_queue_depth():
    a = {**est(5.0, 20.0, 30.0, 60.0), "recent_bound_no_larger_s": 40.0,
         "recent_bound_s": 80.0}
    b = est(30.0, 45.0, 60.0, 60.0)
    run = run_of(round_(0, {"a": a, "b": b}, {"a": 0, "b": 3}, {"a": 50.0, "b": 40.0}))
    half = model_replay.raised_to_recent_waits(0.5)(run)["per_round"][0]["estimate"]
    assert (half["a"]["start_s"], half["a"]["finish_s"]) == (20.0, 35.0)
    assert half["b"]["start_s"] == 30.0  # no recent waits recorded
    every = model_replay.raised_to_recent_waits(1.0, no_larger=False)(run)
    assert every["per_round"][0]["estimate"]["a"]["start_s"] == 80.0
    assert model_replay.regrets(every) == [0.0]  # b, whose probe finished first
    queued = model_replay.queue_depth(15.0)(run)["per_round"][0]["estimate"]
    assert queued["b"]["start_s"] == 45.0 and queued["a"]["start_s"] == 5.0  # 3 x 15 s


def view_round(k, running, pending, a_start=40.0):
    """Round k of a run with views of site a: `running` as (id, started s before the view,
    CPUs), `pending` as (id, CPUs)."""
    r = round_(k, {"a": est(a_start, a_start + 10, a_start + 20, 100.0),
                   "b": est(30.0, 45.0, 60.0, 60.0)}, {"a": len(pending), "b": 0},
               {"a": 20.0, "b": 45.0})
    r["view"] = {"a": {"running": [{"id": i, "start_s": -ago, "cpus": c} for i, ago, c in running],
                       "pending": [{"id": i, "cpus": c} for i, c in pending]}}
    return r


def test_the_views_give_the_waits_of_every_users_jobs_seen_submitted():
    # j1 and j2 pending at the first view (submission not seen); j3 first pending at round
    # 1 (12 s), started 2 s before round 2's view (22 s): waited 10 s; j4 appeared running
    # at round 2 having started after round 1: under a round, 0 s
    run = run_of(view_round(0, [], [("j1", 8), ("j2", 8)]),
                 view_round(1, [("j1", 3.0, 8)], [("j2", 8), ("j3", 8)]),
                 view_round(2, [("j1", 15.0, 8), ("j3", 2.0, 8), ("j4", 1.0, 64)], [("j2", 8)]))
    waits = model_replay.view_waits(run)
    assert waits[(1, "a")] == []
    assert sorted(waits[(2, "a")]) == [(22.0, 10.0, 8), (23.0, 0.0, 64)]
    assert model_replay.waiting_ages(run)[(2, "a")] == []  # j2 was there at the first view
    # a, predicted 40 s: the jobs started lately waited less; raised never, set both ways
    assert model_replay.recent_view_waits(60.0, least=2)(run) == run
    both = model_replay.recent_view_waits(60.0, both_ways=True, least=2)(run)
    assert both["per_round"][2]["estimate"]["a"]["start_s"] == 5.0  # the median of 10, 0
    similar = model_replay.recent_view_waits(60.0, both_ways=True, similar=True, least=1)(run)
    assert similar["per_round"][2]["estimate"]["a"]["start_s"] == 10.0  # j4's 64 CPUs left out
    assert model_replay.regrets(both)[2] == 0.0  # a's probe finished first


def test_a_start_is_raised_to_how_long_similar_jobs_have_waited_so_far():
    # j5 and j6 (8 CPUs) first pending at round 1 (12 s), waiting still at round 4 (48 s)
    run = run_of(view_round(0, [], []), view_round(1, [], [("j5", 8), ("j6", 8)]),
                 view_round(4, [], [("j5", 8), ("j6", 8), ("j7", 128)], a_start=10.0))
    assert sorted(model_replay.waiting_ages(run)[(4, "a")]) == [(0.0, 128), (36.0, 8),
                                                                  (36.0, 8)]
    got = model_replay.waited_so_far(0.5, least=2)(run)["per_round"]
    assert got[2]["estimate"]["a"]["start_s"] == 36.0 and got[1] == run["per_round"][1]


def test_the_recency_command_counts_picks_moved_from_the_engines(tmp_path):
    results, out = tmp_path / "results", tmp_path / "out"
    results.mkdir()
    (results / "placement-x-seed5.json").write_text(json.dumps(run_of(*PROBES, NOW_ROUND)))
    data = model_replay.main(["--results", str(results), "--out", str(out), "--recency"])
    changes = data["backgrounds"]["depth_misleads"]["changes"]
    assert data["picks_from"] == "engine"
    assert changes["engine"]["rounds_changed"] == 0  # the engine against itself
    assert changes["recorded"]["rounds_changed"] >= 1  # round 2: a in the record, b now
    assert "picks changed from the engine" in (out / "model_replay.md").read_text()


def test_a_longer_queue_ranks_a_site_later():
    run = run_of(round_(0, {"a": est(10.0, 20.0, 30.0, 60.0), "b": est(15.0, 40.0, 20.0, 60.0)},
                        {"a": 20, "b": 0}, {"a": 90.0, "b": 30.0}))
    assert model_replay.regrets(run) == [60.0]  # a: the sooner finish, the longer queue
    by_rank = model_replay.queue_penalty(per_site_s=30.0)(run)["per_round"][0]["estimate"]
    assert by_rank["a"]["start_s"] == 40.0 and by_rank["b"]["start_s"] == 15.0
    by_log = model_replay.queue_penalty(per_log_s=2.0)(run)["per_round"][0]["estimate"]
    assert by_log["a"]["start_s"] == pytest.approx(10.0 + 2.0 * math.log(21))
    assert model_replay.regrets(model_replay.queue_penalty(per_site_s=30.0)(run)) == [0.0]
