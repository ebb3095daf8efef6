"""Where diamond's mean is lost (benchmarks/worst_rounds.py): the worst recorded rounds with
what the record held, and rules judged on both backgrounds, both seed halves, later seeds."""

from __future__ import annotations

import json

from benchmarks import worst_rounds as wr


def est(start, finish, bound=None, raw=None):
    return {"start_s": start, "finish_s": finish, "bound_s": bound, "raw_start_s": raw}


def round_(k, estimate, completion, diamond, pending, lost, censored=()):
    return {"round": k, "estimate": estimate, "completion_s": completion,
            "censored": list(censored), "pending": pending, "choice": {"diamond": diamond},
            "additional_s": {"diamond": lost, "home:a": 0.0, "home:b": 5.0}}


# a looks sooner by its median but has a long queue; b, a short queue, starts first
DEEP_A = {"a": est(10, 20, bound=300, raw=300), "b": est(40, 50, bound=900, raw=1700)}


def run(seed, traces=None):
    return {"seed": seed, "traces": traces, "per_round": [
        round_(0, DEEP_A, {"a": 240.0, "b": 30.0}, "a", {"a": 200, "b": 1}, 210.0,
               censored=("a",)),
        round_(1, {"a": est(0, 10, bound=0), "b": est(0, 12, bound=0)},
               {"a": 11.0, "b": 16.0}, "a", {"a": 0, "b": 0}, 0.0)]}


def test_the_worst_round_shows_what_the_record_held_and_which_signal_had_it(tmp_path):
    (tmp_path / "placement-x-seed3.json").write_text(json.dumps(run(3)))
    runs = wr.load_runs(tmp_path)
    got = wr.worst(runs, 1, {("depth_misleads", 3, 0): "both wrong"})
    assert len(got) == 1
    w = got[0]
    assert (w["seed"], w["round"], w["lost_s"]) == (3, 0, 210.0)
    assert (w["chosen"], w["fastest"], w["chosen_never_started"]) == ("a", "b", True)
    assert w["chosen_estimate"] == "10 / 300 / 300" and w["fastest_queued"] == 1
    assert w["todays_engine"] == "a" and w["class"] == "both wrong"
    # the queue saw it (10 s x ln 201 = 53 s later for a); the plan and the bound did not
    assert w["picked_by"] == ["fewest queued", "10 s x ln(1 + queued)"]


def test_a_queue_rank_moves_the_pick_only_past_its_penalty():
    queued = {"a": 200, "b": 1}
    assert wr.RULES["today's engine"](DEEP_A, queued) == "a"
    assert wr.per_queued(10.0)(DEEP_A, queued) == "b"  # 53 s against 30 s of finish
    assert wr.per_queued(5.0)(DEEP_A, queued) == "a"  # 26.5 s is not enough
    assert wr.fewest_queued_within(15.0)(DEEP_A, queued) == "a"  # b is 30 s behind
    assert wr.fewest_queued_within(30.0)(DEEP_A, queued) == "b"


def test_a_rule_passes_only_lower_on_every_background_and_both_halves(tmp_path):
    for seed, traces in ((2, None), (3, None), (4, ["log"]), (137, ["log"])):
        (tmp_path / f"placement-x-seed{seed}.json").write_text(json.dumps(run(seed, traces)))
    judged = wr.judge(wr.load_runs(tmp_path))
    real, dm = judged["real logs"], judged["depth_misleads"]
    assert dm["today's engine"]["even_s"] == 105.0  # (210 + 0) / 2 on seed 2
    assert dm["10 s x ln(1 + queued)"]["mean_of_run_means_s"] == 0.0  # b, then a
    assert real["today's engine"]["fresh_runs"] == 1  # seed 137 only
    assert real["10 s x ln(1 + queued)"]["fresh_s"] == 0.0
    assert wr.passes(judged, "10 s x ln(1 + queued)")
    # the 5 s rank keeps a: not lower anywhere, so it does not pass
    assert not wr.passes(judged, "5 s x ln(1 + queued)")
    # one background alone is not enough
    del real["10 s x ln(1 + queued)"]
    real["10 s x ln(1 + queued)"] = dict(real["today's engine"])
    assert not wr.passes(judged, "10 s x ln(1 + queued)")
    assert "| real 137/0 | 210 |" in wr.table({"worst": wr.worst(wr.load_runs(tmp_path), 1, {}),
                                     "rules": judged, "passing": []})
