"""Caps on a calibrated start far above what happened, replayed on recorded rounds
(benchmarks/overpredict_replay.py, issue 15 after seed 163)."""

from __future__ import annotations

import copy
import json

from benchmarks import overpredict_replay as replay
from benchmarks.common import RESULTS
from benchmarks.model_replay import ENGINE

SEED_163 = RESULTS / "placement-KTH@alpha+HPC2N@beta+LLNL@gamma+KTH@delta-seed163.json"


def est(start, bound, recent=None, source="calibrated"):
    return {"start_s": start, "finish_s": start + 10.0, "bound_s": bound,
            "raw_start_s": 4 * start, "source": source, "recent_bound_s": recent}


def job(ident, cpus, start_s=None):
    return {"id": ident, "cpus": cpus, "start_s": start_s}


def view(running=(), pending=()):
    return {"running": list(running), "pending": list(pending)}


def round_(k, estimate, pending, completion, views=None, started=None):
    return {"round": k, "estimate": estimate, "pending": pending, "completion_s": completion,
            "censored": [s for s, c in completion.items() if c >= 240.0],
            "started_s": started or {}, "view": views}


# a: predicted 300 s (calibrated), its recent jobs started within 5 s, nothing queued; it
# started after 20 s. b: predicted 100 s behind 40 queued jobs, recent bound 1 s; never
# started. The engine picks b.
OVER = round_(0, {"a": est(300.0, 600.0, recent=5.0), "b": est(100.0, 400.0, recent=1.0)},
              {"a": 0, "b": 40}, {"a": 30.0, "b": 240.0}, started={"a": 20.0})


def test_the_recent_wait_cap_acts_only_where_the_queue_is_short_enough():
    run = {"seed": 164, "per_round": [OVER]}
    assert replay._regrets_and_picks(run) == [(210.0, "b")]
    empty = replay.recent_cap_when_queued(0)(run)
    assert empty["per_round"][0]["estimate"]["a"]["start_s"] == 5.0
    assert empty["per_round"][0]["estimate"]["a"]["finish_s"] == 15.0  # moved with it
    assert empty["per_round"][0]["estimate"]["b"]["start_s"] == 100.0  # 40 wait there
    assert run["per_round"][0]["estimate"]["a"]["start_s"] == 300.0  # the record untouched
    assert replay._regrets_and_picks(empty) == [(0.0, "a")]
    # at most 40 waiting: b is capped too, at its 1 s, and the engine keeps b
    assert replay._regrets_and_picks(replay.recent_cap_when_queued(40)(run)) == [(210.0, "b")]
    # thin: only where the calibration rests on fewer than 29 jobs (here a: 26, b: 192)
    thin = copy.deepcopy(run)
    thin["per_round"][0]["estimate"]["a"]["samples"] = 26
    thin["per_round"][0]["estimate"]["b"]["samples"] = 192
    capped = replay.recent_cap_when_queued(None, thin=True)(thin)["per_round"][0]["estimate"]
    assert (capped["a"]["start_s"], capped["b"]["start_s"]) == (5.0, 100.0)
    thin["per_round"][0]["estimate"]["a"]["samples"] = 29
    assert replay.recent_cap_when_queued(None, thin=True)(thin) == thin
    # a start from anything but the calibration is left alone
    walltime = {"seed": 164, "per_round": [round_(0, {"a": est(300.0, 600.0, 5.0, "plan"),
                                                      "b": OVER["estimate"]["b"]},
                                                  OVER["pending"], OVER["completion_s"])]}
    assert replay._regrets_and_picks(replay.recent_cap_when_queued(0)(walltime))[0][1] == "b"


def test_the_drain_counts_only_starts_after_the_first_view():
    views = [view([job("1", 32, -30.0)], [job("2", 4)]),  # the load, started together
             view([job("1", 32, -42.0), job("2", 4, -5.0)], [job("3", 4)]),
             view([job("1", 32, -54.0), job("2", 4, -17.0), job("4", 4, -1.0)], [job("3", 4)]),
             view([job("2", 4, -29.0), job("4", 4, -13.0), job("5", 8, -2.0)],
                  [job("3", 4), job("6", 4)]),
             view([job("4", 4, -25.0), job("5", 8, -14.0)], [job("3", 4), job("6", 4)])]
    run = {"interval_s": 12.0, "per_round": [
        round_(k, {"a": est(300.0, 600.0)}, {"a": 1}, {"a": 30.0}, {"a": v})
        for k, v in enumerate(views)]}
    starts = replay.started_since_first_view(run)
    assert starts[(0, "a")] == ([], 0.0)
    assert starts[(3, "a")] == ([4, 4, 8], 36.0)  # job 1 was the load's
    assert replay.drain_s(starts[(3, "a")], views[3]) is None  # under 48 s of starts
    # 48 s: 16 CPUs started; ahead 8 CPUs pending and the probe's 8: 16 x 48 / 16
    assert replay.drain_s(starts[(4, "a")], views[4]) == 48.0
    assert replay.drain_s(starts[(4, "a")], views[4], by_cpus=False) == 3 * 48.0 / 3
    capped = replay.drain_cap(True, 48.0, 2.0)(run)["per_round"]
    assert [r["estimate"]["a"]["start_s"] for r in capped] == [300.0] * 4 + [96.0]


def test_a_change_that_loses_on_one_group_is_not_adopted():
    def run(seed, completion):
        return {"seed": seed, "per_round": [round_(0, OVER["estimate"], OVER["pending"],
                                                   completion)]}
    won, lost = {"a": 30.0, "b": 240.0}, {"a": 240.0, "b": 30.0}
    cap = {"cap": replay.recent_cap_when_queued(0)}
    scored = replay.score([run(2, won), run(3, won)], cap)
    cell = scored["depth_misleads"]["cap"]["design"]
    assert (cell["won"], cell["lost"], cell["won_s"]) == (1, 0, 210.0)
    assert cell["moves"] == {"b->a won": 1}
    assert replay.wins_everywhere(scored, "cap")
    scored = replay.score([run(2, won), run(151, lost)], cap)
    assert scored["depth_misleads"]["cap"]["seeds > 150"]["lost"] == 1
    assert not replay.wins_everywhere(scored, "cap")


def test_seed_163s_first_round_moves_to_gamma_when_its_empty_queue_caps_its_start():
    """The recorded round of issue 15: gamma predicted 395 s with nothing queued and its
    recent jobs started within a second, beta chosen and never started."""
    run = ENGINE(json.loads(SEED_163.read_text()))
    first = replay._regrets_and_picks(run)[0]
    assert first[1] == "beta" and first[0] > 150.0
    assert replay._regrets_and_picks(replay.recent_cap_when_queued(0)(run))[0] == (0.0, "gamma")
    over = replay.where_over([run])["real logs"]["gamma"]["over"]
    assert over["probes"] >= 1 and over["recent bound below"] == over["probes"]


def test_the_ratio_by_the_estimates_size_bounds_a_probe_that_never_started():
    # probes under a 1,750 s estimate: one started after 35 s, one never (240 s; another
    # site's probe finished, so the round counts)
    rounds = [round_(k, {"a": dict(est(175.0, 900.0), raw_start_s=1750.0)}, {"a": 0},
                     {"a": c, "b": 20.0}, started=s)
              for k, (c, s) in enumerate([(45.0, {"a": 35.0}), (240.0, None)])]
    rounds.append(round_(2, {"a": dict(est(175.0, 900.0), raw_start_s=1750.0)}, {"a": 0},
                         {"a": 50.0}, started={"a": 35.0}))
    cell = replay.ratio_by_horizon([{"seed": 2, "max_wait_s": 240.0, "per_round": rounds}])
    got = cell["depth_misleads"]["a"]["1000-3000 s"]
    assert (got["probes"], got["not_started"], got["calibrated_ratio"]) == (3, 1, 0.1)
    assert got["started_ratio_at_least"] == 35.0 / 1750.0  # the median of 35, 35, 240 s
    none = replay.ratio_by_horizon([{"seed": 2, "per_round": rounds[1:2]}])
    assert none["depth_misleads"]["a"]["1000-3000 s"]["started_ratio_at_least"] is None
