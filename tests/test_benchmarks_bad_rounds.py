"""The one bad round per run (benchmarks/bad_rounds.py): today's engine replayed with its
own-queued floor, the signals of its bad rounds, and rules judged per background, seed half
and class of round."""

from __future__ import annotations

import json

from benchmarks import bad_rounds as br
from diamond_jupyter.calibration import PredictionSample, own_error


def est(start, finish, bound=None, **more):
    return {"start_s": start, "finish_s": finish, "bound_s": bound, "raw_start_s": bound,
            **more}


def round_(k, estimate, completion, started, pending=None):
    return {"round": k, "estimate": estimate, "completion_s": completion,
            "started_s": started, "censored": [s for s in completion if s not in started],
            "pending": pending or {}, "choice": {"diamond": "a"},
            "additional_s": {"diamond": 0.0, "home:a": 50.0, "home:b": 50.0}}


# a is predicted sooner on every round; b's round-0 probe starts at 2 s where 150 s was
# predicted, a's waits past the 240 s bound.
def run(seed, traces=None):
    a, b = est(60, 70, bound=200, samples=100), est(150, 160, bound=1700, samples=30)
    return {"seed": seed, "traces": traces, "interval_s": 12.0, "max_wait_s": 240.0,
            "per_round": [round_(k, {"a": dict(a), "b": dict(b)}, {"a": 240.0, "b": 12.0},
                                 {"b": 2.0}, {"a": 40, "b": 2}) for k in range(3)]}


def test_a_job_not_yet_due_holds_back_the_engines_pull_in_but_not_the_gain_so_far():
    """One probe started 148 s sooner than predicted, the next waits 12 s of its predicted
    150: the engine pulls nothing in (not every job started); the gain so far moves the
    start by the least either has surely gained, 138 s."""
    done = PredictionSample(predicted_s=150.0, observed_s=2.0, started=True, submitted_at=0)
    waiting = PredictionSample(predicted_s=150.0, observed_s=12.0, started=False,
                               submitted_at=1)
    assert own_error([done, waiting]) is None
    got = br.gain_so_far([done, waiting])
    assert got is not None and got.ratio is None and got.shift_s == -138.0
    # a late job stops it, as it stops the engine's pull-in
    late = PredictionSample(predicted_s=10.0, observed_s=40.0, started=True, submitted_at=2)
    assert br.gain_so_far([done, waiting, late]).shift_s == 30.0 == own_error(
        [done, waiting, late]).shift_s


def test_todays_estimates_hold_a_site_behind_the_users_own_queued_probe():
    """At round 2, a's probes of rounds 0 and 1 still wait (24 s the oldest): its start is
    floored at OWN_QUEUED_FACTOR x 24 s; b's round-1 probe has started (2 s), nothing."""
    r = run(2)
    est2 = br.todays_estimates(r, r["per_round"][2], {})
    assert est2["a"]["own_queued_s"] == 24.0
    assert est2["a"]["start_s"] == br.OWN_QUEUED_FACTOR * 24.0
    assert est2["b"]["own_queued_s"] is None and est2["a"]["queued"] == 40


def test_rules_are_judged_per_half_and_class_and_pass_only_lower_everywhere(tmp_path):
    for seed, traces in ((2, None), (3, None), (4, ["log"]), (141, ["log"])):
        (tmp_path / f"placement-x-seed{seed}.json").write_text(json.dumps(run(seed, traces)))
    runs = br.load(tmp_path)
    judged = br.judge(runs)
    dm, real = judged["depth_misleads"], judged["real logs"]
    # today's engine: a (60 s) in round 0; from round 1 b is pulled in by its round-0
    # probe (started 148 s sooner) and a floored behind its own queued probe
    engine = dm["today's engine"]
    assert engine["even_s"] == engine["odd_s"] == (228.0 + 0 + 0) / 3
    assert real["today's engine"]["fresh_runs"] == 1  # seed 141 only
    # the queue rank at 10 s x ln(41) = 37 s does not move a past b's 90 s lead; finish
    # at the bound where samples are few does not touch them (100 and 30 samples)
    assert dm["10 s x ln(1 + queued)"]["mean_s"] == engine["mean_s"]
    # the exponential tail's mean: a + 0.31 x 140 = 113 s; b, pulled in to 2 s with its
    # bound to 1,552 s, + 0.31 x 1,550 = 492 s: a in every round
    tail = dm["finish + 0.31 x spread (exponential tail's mean)"]
    assert tail["mean_s"] == 228.0
    # round 0 was lost by the engine too (a started late, b sooner, the bounds ordered
    # them wrong as well); rounds 1-2 the engine had b, the fastest
    assert tail["classes"]["even seeds: both wrong; bounds wrong too"] == {
        "won_s": 0.0, "lost_s": 0.0, "rounds": 0}
    assert tail["classes"]["even seeds: engine fastest"] == {
        "won_s": 0.0, "lost_s": 2 * 228.0, "rounds": 2}
    # the drain time of a run without views is unknown: the drain floor changes nothing
    assert dm["start >= 1 x the queue's drain time (views)"]["mean_s"] == engine["mean_s"]
    assert not br.passes(judged, "start >= 1 x the queue's drain time (views)")
    better = {bg: {**per, "x": {**per["today's engine"],
                                **{k: per["today's engine"][k] - 1 for k in (
                                    "mean_s", "even_s", "odd_s")}}}
              for bg, per in judged.items()}
    assert br.passes(better, "x")
    better["real logs"]["x"]["below_every_baseline"] -= 1  # a run below every baseline lost
    assert not br.passes(better, "x")
    signals = br.signals(runs)["depth_misleads"]
    assert (signals["bad_rounds"], signals["good_rounds"]) == (2, 4)
    # the bad rounds' pick (a) had 40 queued and 100 samples, the good ones' (b) 2 and 30
    assert signals["auc"]["queued"] == 1.0
    assert signals["auc"]["fewer calibration samples"] == 0.0
    md = br.table({"signals": br.signals(runs), "rules": judged, "passing": []})
    assert "| depth_misleads | today's engine | 76.000 |" in md


def test_drain_time_is_the_queue_over_the_starts_the_views_saw():
    """Round 2 (24 s): 24 s of window since the first view, 1 job (submitted at 12 s) seen
    to start in it at 22 s, 6 queued: 6 x 24 / 2 = 72 s."""
    jobs = [{"id": str(i), "cpus": 4} for i in range(3)]
    views = [{"a": {"pending": [], "running": []}},
             {"a": {"pending": jobs, "running": []}},
             {"a": {"pending": jobs[1:], "running": [{**jobs[0], "start_s": -2.0}]}}]
    run_ = {"interval_s": 12.0, "per_round": [
        {"round": k, "view": v, "pending": {"a": 6}} for k, v in enumerate(views)]}
    assert br.drain_times(run_)[(2, "a")] == 72.0
    assert br.drain_times(run_)[(1, "a")] == 6 * 12.0  # none started yet
    assert (0, "a") not in br.drain_times(run_)  # no window behind the first view


def test_jobs_due_only_pull_in_by_the_started_one_and_own_waits_set_the_start():
    done = PredictionSample(predicted_s=150.0, observed_s=2.0, started=True, submitted_at=0)
    waiting = PredictionSample(predicted_s=150.0, observed_s=12.0, started=False,
                               submitted_at=1)
    assert br.due_only([done, waiting]).shift_s == -148.0  # the waiting one says nothing
    # one 148 s sooner, two 30 and 40 s late: today's shift is the late ones' median (35 s),
    # both ways every one's (30 s)
    late = [PredictionSample(predicted_s=10.0, observed_s=10.0 + d, started=True,
                             submitted_at=2 + i) for i, d in enumerate((30.0, 40.0))]
    assert own_error([done, *late]).shift_s == 35.0
    assert br.shift_both_ways([done, *late]).shift_s == 30.0
    # b's probes of rounds 0 and 1 started at 2 s: at round 2 its start is their median,
    # whatever the model says
    r = run(2)
    est2 = br.todays_estimates(r, r["per_round"][2], {})
    est2["b"] = est(100, 110, bound=300)
    br.CHANGES["start = the median wait of the last 2+ own jobs, all started"](
        r, r["per_round"][2], est2)
    assert (est2["b"]["start_s"], est2["b"]["finish_s"], est2["b"]["bound_s"]) == (2, 12, 300)
    assert est2["a"]["start_s"] == br.OWN_QUEUED_FACTOR * 24.0  # none of a's started
