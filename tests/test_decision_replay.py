"""Placement's decision rule replayed on recorded rounds (benchmarks/decision_replay.py):
each rule picks among the sites a round's matched probes measured, and is scored exactly."""

from __future__ import annotations

import json

from benchmarks import decision_replay as dr


def est(start, finish, bound=None, raw=None):
    return {"start_s": start, "finish_s": finish, "bound_s": bound, "raw_start_s": raw}


def round_(estimate, completion, diamond, censored=(), **baselines):
    return {"estimate": estimate, "completion_s": completion, "censored": list(censored),
            "choice": {"diamond": diamond},
            "additional_s": {"diamond": 0.0, **baselines}}


def test_each_rule_is_scored_by_the_probe_of_the_site_it_picks(tmp_path):
    # a: sooner by its median (40 s) but unsure (bound 300 s); b: 55 s, sure (bound 20 s)
    unsure = {"a": est(30, 40, bound=300, raw=280), "b": est(15, 55, bound=20, raw=20)}
    rounds = [
        round_(unsure, {"a": 200.0, "b": 60.0}, "a", **{"home:a": 140.0, "home:b": 0.0}),
        # every probe censored: no tie, not scored
        round_(unsure, {"a": 240.0, "b": 240.0}, "a", censored=("a", "b"),
               **{"home:a": 0.0, "home:b": 0.0}),
        round_({"a": est(0, 10, bound=0), "b": est(0, 20, bound=0)}, {"a": 12.0, "b": 25.0},
               "a", **{"home:a": 0.0, "home:b": 13.0}),
    ]
    run = {"seed": 1, "traces": None, "per_round": rounds}
    (tmp_path / "placement-depth_misleads-seed1.json").write_text(json.dumps(run))
    got = dr.replay_run(run, dr.RULES)
    assert got["rounds"] == 2 and got["agree"] == 2
    assert got["regret"]["engine"] == [140.0, 0.0]  # the median's pick, a, lost 140 s
    assert got["regret"]["risk 1"] == [0.0, 0.0]  # a's 270 s of doubt outweighs 15 s
    assert got["best_baseline_mean_s"] == 6.5  # home:b, (0 + 13) / 2
    data = dr.summarize(tmp_path)
    rules = data["backgrounds"]["depth_misleads"]["rules"]
    assert rules["engine"]["mean_of_run_means_s"] == 70.0
    assert rules["engine"]["runs_mean_below_every_baseline"] == 0
    bg = data["backgrounds"]["depth_misleads"]
    assert bg["runs_with_a_baseline_at_0"] == 0  # home:b lost 13 s in one round
    assert bg["runs_engine_at_or_below_every_baseline"] == 0  # 70 s against 6.5 s
    assert rules["risk 1"]["runs_mean_below_every_baseline"] == 1
    assert "| depth_misleads | engine | 70.00 |" in dr.table(data)


def test_hedged_copies_are_replayed_as_the_first_copy_to_start_running():
    # a is ranked best (finish 20 s) but unsure; b next (30 s); c surest (bound 5 s)
    est_ = {"a": est(10, 20, bound=200), "b": est(15, 30, bound=100), "c": est(5, 40, bound=5)}
    r = round_(est_, {"a": 150.0, "b": 120.0, "c": 45.0}, "a",
               **{"home:a": 105.0, "home:b": 75.0, "home:c": 0.0})
    r["additional_s"]["diamond"] = 105.0
    r["started_s"] = {"a": 140.0, "b": 90.0, "c": 5.0}
    run = {"seed": 1, "traces": None, "hedge_mode": "matched", "max_wait_s": 240.0,
           "per_round": [r]}
    got = dr.replay_hedges(run)
    assert got["rounds"] == 1
    assert got["regret"]["two best"] == [75.0]  # a and b: b starts first, ends at 120 s
    assert got["regret"]["best + surest start"] == [0.0]  # a and c: c starts at 5 s
    assert got["regret"]["three best"] == [0.0]
    assert got["diamond_over_hedge"]["two best"] == 1.4  # 105 / 75
    assert got["diamond_over_hedge"]["best + surest start"] == 105.0  # the 1 s floor


def test_a_hedge_whose_copies_never_start_scores_the_bound():
    r = round_({"a": est(0, 10), "b": est(0, 20), "c": est(0, 30)},
               {"a": 240.0, "b": 240.0, "c": 12.0}, "a", censored=("a", "b"))
    r["started_s"] = {"c": 2.0}
    run = {"hedge_mode": "matched", "max_wait_s": 240.0, "per_round": [r]}
    assert dr.replay_hedges(run)["regret"]["two best"] == [228.0]


def test_the_own_error_correction_is_replayed_from_the_earlier_rounds_probes():
    # a is predicted 120 s away every round and its probes start at once; b 10 s, in 40 s
    def rnd(k):
        r = round_({"a": est(120, 125), "b": est(10, 20)}, {"a": 6.0, "b": 45.0}, "b")
        r.update(round=k, started_s={"a": 1.0, "b": 40.0})
        return r

    run = {"interval_s": 12.0, "per_round": [rnd(k) for k in range(7)]}
    assert dr.own_ratio(run, 4, "a") is None  # 4 earlier probes: fewer than MIN_SAMPLES
    assert dr.own_ratio(run, 6, "a") == (1 + 30) / (120 + 30)  # started sooner
    # by round 6, b's probes of rounds 0-2 started at 40 s; those of rounds 3-5 have waited
    # 36, 24 and 12 s, past the 10 s predicted: lower bounds. Median of 1.75 x3, 1.65,
    # 1.35, 1.05
    assert round(dr.own_ratio(run, 6, "b"), 9) == 1.7
    last = run["per_round"][6]
    one_way = dr.own_corrected(run, last, "later")
    assert one_way["a"]["start_s"] == 120  # a sooner start is not taken
    assert round(one_way["b"]["start_s"], 9) == 38.0  # a later one is: 40 x 1.7 - 30
    both = dr.own_corrected(run, last, "both")
    assert both["a"]["start_s"] == 1.0 and both["a"]["finish_s"] == 6.0
    got = dr.replay_run(run, {"engine": dr.engine()})
    assert got["regret"]["own: both ways"][6] == 0.0  # a chosen in the last round
    assert got["regret"]["own: one way"][6] == 39.0  # b, as the model says


def test_own_jobs_variants_seed94_a_site_whose_latest_probe_still_waits():
    """Seed 94's beta: the probes of rounds 0-4 started sooner than predicted, that of
    round 5 was still waiting (not yet due) at round 6, and beta was pulled in by 0.59 with
    its 90% bound. The variants: no pull-in while one of the jobs still waits; the pull-in
    moves the start only, the bound kept."""
    starts = {0: 5.6, 1: 8.7, 2: 10.8, 3: 12.7, 4: 14.7, 5: 117.5}

    def rnd(k):
        r = round_({"a": est(142, 155, bound=142, raw=142), "b": est(165, 175, bound=680)},
                   {"a": 240.0, "b": 125.0}, "a", censored=("a",))
        r.update(round=k, started_s={"a": starts[k]} if k in starts else {})
        return r

    run = {"interval_s": 12.0, "per_round": [rnd(k) for k in range(7)]}
    err = dr.own_error_at(run, 6, "a")
    assert err.samples == 5 and err.sooner is not None and err.sooner < 1
    assert err.sooner_started is None  # round 5's probe waits: it has not started sooner
    last = run["per_round"][6]
    pulled = dr.own_corrected(run, last, "unanimous")["a"]
    assert pulled["start_s"] < 142 and pulled["bound_s"] == pulled["start_s"]
    assert dr.own_corrected(run, last, "all_started")["a"]["start_s"] == 142
    kept = dr.own_corrected(run, last, "bound_kept")["a"]
    assert kept["start_s"] == pulled["start_s"] and kept["bound_s"] == 142
    got = dr.replay_run(run, {"engine": dr.engine()})
    assert set(dr.OWN_MODES) <= set(got["regret"])


def test_own_jobs_fewer_than_a_ratio_needs_move_the_start_by_their_seconds():
    """Two earlier probes of a, predicted 20 s, started at 80 s: the engine's `own_error`
    gives no ratio but a 60 s shift, and the replay moves a's start, finish and bound by it
    (the rule before session 36, `ratio only`, left a first and lost the round)."""
    def rnd(k, a_start=20.0, queued=0):
        r = round_({"a": est(a_start, a_start + 5, bound=a_start + 10), "b": est(50, 60)},
                   {"a": 85.0, "b": 60.0}, "a")
        r.update(round=k, started_s={"a": 80.0, "b": 50.0}, pending={"a": queued, "b": 0})
        return r

    run = {"interval_s": 100.0, "per_round": [rnd(0), rnd(1), rnd(2)]}
    err = dr.own_error_at(run, 2, "a")
    assert err.ratio is None and err.shift_s == 60.0 and err.samples == 2
    last = run["per_round"][2]
    moved = dr.own_corrected(run, last, "unanimous")["a"]
    assert (moved["start_s"], moved["finish_s"], moved["bound_s"]) == (80.0, 85.0, 90.0)
    assert dr.own_corrected(run, last, "unanimous_ratio_only")["a"]["start_s"] == 20.0
    assert dr.own_corrected(run, last, "later")["a"]["start_s"] == 80.0
    assert dr.own_corrected(run, last, "none")["a"]["start_s"] == 20.0
    got = dr.replay_run(run, {"engine": dr.engine()})
    assert got["regret"]["own: later, or sooner when all were"][2] == 0.0  # b
    assert got["regret"]["own: later, or sooner when all were; ratio only"][2] == 25.0
    # a start at once with nothing queued stays (the engine's rule); with jobs queued, moves
    idle = {**run, "per_round": [rnd(0), rnd(1), rnd(2, a_start=0.0)]}
    assert dr.own_corrected(idle, idle["per_round"][2], "unanimous")["a"]["start_s"] == 0.0
    queued = {**run, "per_round": [rnd(0), rnd(1), rnd(2, a_start=0.0, queued=3)]}
    assert dr.own_corrected(queued, queued["per_round"][2], "unanimous")["a"]["start_s"] == 60


def thin_run():
    """Two rounds of a (borrowing other sites' ratios: too few jobs of its own) against b.
    Round 0: finishes within noise (20 s, 25 s), a's bound the surer (15 s against 40 s), so
    the engine takes a, whose probe started late. Round 1: a's finish (20 s) clearly first but
    its start unsure (bound 310 s), b's at 40 s sure; a's probe ran 15 s behind b's."""
    a0 = {**est(10, 20, bound=15), "borrowed": True}
    a1 = {**est(10, 20, bound=310), "borrowed": True}
    r0 = round_({"a": a0, "b": est(12, 25, bound=40)}, {"a": 100.0, "b": 26.0}, "a",
                **{"home:a": 74.0, "home:b": 0.0})
    r1 = round_({"a": a1, "b": est(30, 40, bound=40)}, {"a": 60.0, "b": 45.0}, "a",
                **{"home:a": 15.0, "home:b": 0.0})
    r0.update(round=0, started_s={"a": 90.0, "b": 16.0})
    r1.update(round=1, started_s={"a": 50.0, "b": 35.0})
    return {"seed": 3, "traces": None, "hedge_mode": "matched", "max_wait_s": 240.0,
            "interval_s": 12.0, "per_round": [r0, r1]}


def test_candidates_for_a_borrowing_site_are_scored_on_todays_engine(tmp_path):
    got = dr.replay_candidates(thin_run())["rules"]
    engine = got["today's engine"]
    assert engine["regret"] == [74.0, 15.0]  # a both times
    assert got["tie: own evidence first"]["regret"] == [0.0, 15.0]  # round 0's tie to b
    assert got["borrowed: finish + 0.1 x its start's doubt"]["regret"] == [74.0, 0.0]
    wide = got["tie: own evidence first, within its doubt up to 30 s"]
    assert wide["regret"] == [0.0, 0.0]  # round 1: b within 30 s of a's unsure finish
    # the issue's figures per rule: the average home's median is 22.25 s (44.5 s and 0 s)
    assert not engine["median_target"] and wide["median_target"]  # 44.5 s; 0 s (1 s floor)
    assert engine["hedge_target"] and not wide["hedge_target"]  # 44.5 s over 0 s; 0 over 0
    assert not engine["below_every_baseline"]  # home:b lost nothing
    (tmp_path / "placement-depth_misleads-seed3.json").write_text(json.dumps(thin_run()))
    data = dr.summarize(tmp_path)
    rows = data["backgrounds"]["depth_misleads"]["candidate_rules"]
    assert rows["tie: own evidence first"]["by_half"] == {"even": None, "odd": 7.5}
    assert (rows["tie: own evidence first"]["rounds_better"],
            rows["tie: own evidence first"]["rounds_worse"]) == (1, 0)
    assert rows["today's engine"]["runs_hedge_target"] == 1
    assert "| depth_misleads | tie: own evidence first | 7.500 | - | 7.500 |" in dr.table(data)


def test_a_borrowed_start_is_raised_to_the_sites_recent_waits_seen_in_the_views():
    """Three jobs of another user seen pending at round 1 (12 s) and running since 22 s at
    round 2 waited 10 s each; a borrowing site predicted to start at once moves to 10 s, a
    site calibrated on its own jobs does not."""
    jobs = [{"id": str(i), "cpus": 4} for i in range(3)]
    views = [{"a": {"pending": [], "running": []}},
             {"a": {"pending": jobs, "running": []}},
             {"a": {"pending": [], "running": [{**j, "start_s": -2.0} for j in jobs]}}]
    run = {"interval_s": 12.0,
           "per_round": [{"round": k, "view": v} for k, v in enumerate(views)]}
    assert dr.recent_wait_medians(run) == {(2, "a"): 10.0}
    borrowing = {**est(0.0, 5.0, bound=0.0), "borrowed": True, "recent_wait_median_s": 10.0}
    dr.borrowed_no_sooner_than_waits(borrowing)
    assert (borrowing["start_s"], borrowing["finish_s"], borrowing["bound_s"]) == (10, 15, 10)
    own = {**est(0.0, 5.0, bound=0.0), "borrowed": False, "recent_wait_median_s": 10.0}
    dr.borrowed_no_sooner_than_waits(own)
    assert own["start_s"] == 0.0


def test_diamond_on_another_calibration_is_no_baseline():
    """The placement runs score diamond on other calibrations beside it (`diamond_survivors`,
    `diamond_cohort`): those are diamond, not baselines the issue's target is judged by."""
    r = round_({"a": est(0, 10), "b": est(0, 20)}, {"a": 10.0, "b": 14.0}, "a",
               **{"home:a": 0.0, "home:b": 4.0})
    r["additional_s"].update(diamond=6.0, diamond_survivors=0.0, diamond_cohort=0.0)
    run = {"per_round": [r, {**r, "additional_s": {**r["additional_s"], "home:a": 8.0}}]}
    assert dr.replay_run(run, {"engine": dr.engine()})["best_baseline_mean_s"] == 4.0
