"""Start corrections from the user's own earlier jobs (benchmarks/feedback_replay.py):
hand-worked errors, shifts, conformal quantiles and levels, and rounds where which
feedback a site gets, and so the engine's choice, is known in advance."""

from __future__ import annotations

import json

import pytest

from benchmarks import feedback_replay as fr
from diamond_jupyter.calibration import PredictionSample


def sample(predicted, observed, started=True, at=0):
    return PredictionSample(predicted_s=predicted, observed_s=observed, started=started,
                            submitted_at=float(at))


def est(start, finish, bound=None):
    return {"start_s": start, "finish_s": finish, "bound_s": bound, "raw_start_s": bound}


def round_(k, estimate, started, completion, censored=()):
    return {"round": k, "estimate": estimate, "started_s": started, "completion_s": completion,
            "censored": list(censored), "choice": {}, "additional_s": {}}


def test_errors_are_started_or_overdue_jobs_oldest_first():
    # started 20 s late; started 4 s early; waiting 30 s of a predicted 10 (at least 20 s
    # late); waiting 5 s of a predicted 10 (not yet due: says nothing)
    got = fr.known_errors([sample(10, 30, at=0), sample(10, 6, at=1),
                           sample(10, 30, started=False, at=3),
                           sample(10, 5, started=False, at=2)])
    assert got == [20.0, -4.0, 20.0]


def test_only_the_most_recent_errors_count():
    many = [sample(0, 100, at=k) for k in range(5)] + [sample(0, 1, at=k) for k in
                                                       range(5, 5 + fr.OWN_ERROR_SAMPLES)]
    assert fr.known_errors(many) == [1.0] * fr.OWN_ERROR_SAMPLES


def test_the_median_shift_needs_two_errors_agreeing_in_sign():
    assert fr.median_shift([40.0]) is None  # one error: no shift
    assert fr.median_shift([10.0, 40.0, 25.0]) == 25.0
    assert fr.median_shift([-3.0, -9.0]) == -6.0
    assert fr.median_shift([10.0, -2.0, 30.0]) is None  # disagree
    assert fr.median_shift([10.0, 0.5]) is None  # 0.5 s is within the stamps' resolution
    # without the sign rule, the same median of any signs
    assert fr.any_sign_shift([10.0, -2.0, 30.0]) == 10.0
    assert fr.any_sign_shift([7.0]) is None


def test_the_conformal_quantile_needs_enough_errors_for_its_level():
    errors = [float(x) for x in range(1, 10)]  # 1..9
    # ceil(10 x 0.9) = 9: the largest of 9
    assert fr.conformal_quantile(errors, 0.9) == 9.0
    assert fr.conformal_quantile(errors[:8], 0.9) is None  # ceil(9 x 0.9) = 9 > 8
    assert fr.conformal_quantile(errors, 0.5) == 5.0  # ceil(10 x 0.5) = 5
    assert fr.conformal_quantile([4.0, 2.0, 3.0], 0.5) == 3.0  # ceil(2) = 2nd of 2, 3, 4


def test_the_aci_level_rises_after_a_miss_and_falls_after_a_hit():
    # step 0.005: a miss adds 0.005 x 0.9, a hit takes off 0.005 x 0.1
    assert fr.aci_level([]) == pytest.approx(0.9)
    assert fr.aci_level([True]) == pytest.approx(0.9045)
    assert fr.aci_level([False, False]) == pytest.approx(0.899)
    assert fr.aci_level([True, False]) == pytest.approx(0.9045 - 0.0005)


def test_bound_outcomes_count_what_is_known_against_each_rounds_bound():
    samples = [sample(5, 50, at=0),                 # started past its bound of 20: a miss
               sample(5, 8, at=1),                  # started within its bound of 20: a hit
               sample(5, 12, started=False, at=2),  # waiting, still within 20: unknown
               sample(5, 30, started=False, at=3),  # waiting past 20: a miss
               sample(5, 6, at=4)]                  # no bound given at round 4: left out
    bounds = {0: 20.0, 1: 20.0, 2: 20.0, 3: 20.0, 4: None}
    assert fr.bound_outcomes(samples, bounds) == [True, False, True]


def test_a_shift_moves_start_finish_and_bound_never_before_zero():
    e = est(10.0, 30.0, bound=40.0)
    assert fr.shifted(e, 15.0) == {**e, "start_s": 25.0, "finish_s": 45.0, "bound_s": 55.0}
    # pulled in 25 s: the start stops at 0, the finish moves 10 s with it, the bound 25 s
    assert fr.shifted(e, -25.0) == {**e, "start_s": 0.0, "finish_s": 20.0, "bound_s": 15.0}
    # a bound given (the conformal one) is kept, never before the start
    assert fr.shifted(e, 15.0, 20.0)["bound_s"] == 25.0
    assert fr.shifted(e, None) == e and fr.shifted(e, None) is not e


def two_sites_run():
    """x is predicted to start at once and finish 10 s later, every round, and starts its
    probes after 30 s; y is predicted 15 s (finish 25 s) and starts them on time. Rounds
    are 12 s apart, so at round k a probe of round j is (k - j) x 12 s old."""
    rounds = []
    for k in range(4):
        rounds.append(round_(k, {"x": est(0.0, 10.0, bound=0.0), "y": est(15.0, 25.0, 15.0)},
                             {"x": 30.0, "y": 15.0}, {"x": 40.0, "y": 25.0}))
    return {"seed": 4, "interval_s": 12.0, "max_wait_s": 240.0, "per_round": rounds}


def test_feedback_from_the_chosen_site_moves_it_once_two_of_its_jobs_are_overdue():
    run = two_sites_run()
    # round 0: x (finish 10 s) is chosen, regret 40 - 25 = 15 s. Round 1: x's job of
    # round 0 waits 12 s past its predicted 0 s (one error: no shift). Round 2: x's two
    # jobs wait 24 and 12 s: x moves by their median, 18 s, to a finish of 28 s, and y
    # (25 s) is chosen. Round 3: x's errors 30 s (started) and 24 s, median 27 s: y again
    got = fr.replay(run, "median shift", "chosen")
    assert got["regret"] == [15.0, 15.0, 0.0, 0.0]
    # x chosen in rounds 0 and 1 started after its predicted start; y on time
    assert got["chosen_late"] == [4, 2]
    # every site's probes: the same here (x was chosen first; y's errors are 0)
    assert fr.replay(run, "median shift", "every")["regret"] == [15.0, 15.0, 0.0, 0.0]
    # no correction: x every round
    assert fr.replay(run, "none", "chosen")["regret"] == [15.0] * 4


def test_the_engine_rule_needs_min_samples_so_chosen_feedback_rarely_moves_it():
    run = two_sites_run()
    # today's rule waits for MIN_SAMPLES (5) of the user's jobs that say anything: with
    # four rounds it never corrects x, from either feedback
    assert fr.replay(run, "today", "chosen")["regret"] == [15.0] * 4
    assert fr.replay(run, "today", "every")["regret"] == [15.0] * 4


def test_feedback_from_every_site_reaches_a_site_never_chosen():
    # y is never chosen while x looks sooner, so its probes say nothing to a live user;
    # with every site's probes y's early starts (predicted 40 s, started after 2 s) pull it
    # in by its median error once two are known, and it wins from round 2 on
    rounds = [round_(k, {"x": est(10.0, 20.0, 10.0), "y": est(40.0, 50.0, 40.0)},
                     {"x": 10.0, "y": 2.0}, {"x": 20.0, "y": 12.0}) for k in range(4)]
    run = {"seed": 5, "interval_s": 12.0, "max_wait_s": 240.0, "per_round": rounds}
    assert fr.replay(run, "median shift", "chosen")["regret"] == [8.0] * 4
    # at round 1 y has one error (-38 s); at round 2 two: y's start 40 - 38 = 2 s, finish 12
    assert fr.replay(run, "median shift", "every")["regret"] == [8.0, 8.0, 0.0, 0.0]


def test_summary_splits_halves_and_judges_adoption(tmp_path):
    run = two_sites_run()
    for seed in (4, 5):
        path = tmp_path / f"placement-depth_misleads-seed{seed}.json"
        path.write_text(json.dumps({**run, "seed": seed}))
    data = fr.summarize(tmp_path)
    assert [(g["background"], g["half"], g["runs"]) for g in data["groups"]] == \
        [("depth_misleads", "design", 1), ("depth_misleads", "held out", 1)]
    v = data["groups"][0]["versions"]
    assert v["median shift (chosen)"]["mean_of_run_means_s"] == 7.5
    assert v["today (chosen)"]["mean_of_run_means_s"] == 15.0
    assert v["median shift (chosen)"]["won"] == 2 and v["median shift (chosen)"]["lost"] == 0
    # below today on the held-out half, not above it on the design half: adopted here
    assert data["verdicts"]["median shift"]["adopt"] is True
    assert "adoption" in fr.table(data)


def test_the_replay_counts_what_the_correction_moved():
    run = two_sites_run()
    # x moved in rounds 2 and 3 (y never: one error of 0 s, then two without a sign), and
    # the choice changed from the model's (x) in both
    assert fr.replay(run, "median shift", "chosen")["moved"] == [2, 8, 2]
    assert fr.replay(run, "none", "chosen")["moved"] == [0, 8, 0]
