"""Why diamond missed the fastest site (benchmarks/misses.py): each lost round of a kept run
explained by the engine's own reason and the inputs that were wrong."""

from __future__ import annotations

import json

from benchmarks import misses


def est(start, finish, bound=None, raw=None, **more):
    return {"start_s": start, "finish_s": finish, "bound_s": bound, "raw_start_s": raw,
            "source": "calibrated", **more}


def round_(k, estimate, started, completion, diamond, fastest, lost, censored=()):
    return {"round": k, "estimate": estimate, "started_s": started,
            "completion_s": completion, "censored": list(censored),
            "choice": {"diamond": diamond}, "fastest": fastest,
            "additional_s": {"diamond": lost}}


def run_of(*rounds, traces=None):
    return {"seed": 7, "profile": "depth_misleads", "traces": traces, "max_wait_s": 240.0,
            "per_round": list(rounds)}


def test_a_tie_lost_on_a_bound_set_by_recent_waits_and_starts_off_both_ways():
    # b finishes first by 8 s (within the 10 s noise) but its bound (146 s, over its raw
    # plan's 40 s: recent waits) is less sure than a's 115 s; a started later than
    # predicted, b sooner
    r = round_(7, {"a": est(37.7, 51.0, bound=114.7, raw=347.7),
                   "b": est(18.9, 43.0, bound=146.0, raw=39.7)},
               {"a": 60.0, "b": 1.1}, {"a": 73.4, "b": 23.4}, "a", "b", 50.0)
    got = misses.explain(run_of(r))
    assert len(got) == 1 and got[0]["chosen"] == "a" and got[0]["fastest"] == "b"
    assert got[0]["why"].startswith("same finish within noise")
    assert got[0]["causes"] == ["tie: surer bound (recent waits)",
                                "chosen too soon: calibration ratios",
                                "fastest too late: calibration ratios"]


def test_a_site_to_start_now_that_never_started_is_the_queue_views_and_rounds_won_are_left():
    lost = round_(1, {"a": est(0.0, 23.5, bound=0.0, raw=0.0),
                      "g": est(4.1, 15.8, bound=52.1, raw=52.1)},
                  {"g": 2.1}, {"a": 240.0, "g": 12.1}, "a", "g", 227.9, censored=("a",))
    won = round_(2, {"a": est(0.0, 20.0, bound=0.0), "g": est(5.0, 15.0, bound=50.0)},
                 {"a": 0.5, "g": 3.0}, {"a": 20.5, "g": 13.0}, "g", "g", 0.0)
    got = misses.explain(run_of(lost, won, traces=[{"log": "KTH"}]))
    assert [(g["round"], g["background"]) for g in got] == [(1, "real logs")]
    # a censored probe counts as starting at the run's bound; its runtime is not known
    assert got[0]["causes"] == ["tie: surer bound", "chosen too soon: queue view"]
    assert misses.cause_counts(got) == {
        "chosen too soon: queue view": {"rounds": 1, "lost_s": 227.9},
        "tie: surer bound": {"rounds": 1, "lost_s": 227.9}}


def test_a_runtime_gap_predicted_wrong_is_named_but_a_prior_off_everywhere_alike_is_not():
    # predicted: a runs 5 s, b 25 s (a 20 s shorter); they ran 40 s and 22 s (a 18 s longer)
    gap = round_(0, {"a": est(0.0, 5.0, bound=0.0), "b": est(0.0, 25.0, bound=0.0)},
                 {"a": 0.5, "b": 0.4}, {"a": 40.5, "b": 22.4}, "a", "b", 18.1)
    # both predicted 4x too short, in the right order: the choice is not the prior's
    alike = round_(1, {"a": est(2.0, 7.0, bound=5.0, own_wait_ratio=0.5),
                       "b": est(8.0, 13.5, bound=20.0)},
                   {"a": 30.0, "b": 0.5}, {"a": 50.0, "b": 22.5}, "a", "b", 27.5)
    got = misses.explain(run_of(gap, alike))
    assert got[0]["causes"] == ["runtime gap: -20.0 s predicted, +18.0 s ran"]
    assert got[1]["causes"] == ["chosen too soon: own jobs"]
    counts = misses.cause_counts(got)
    assert counts["runtime gap"] == {"rounds": 1, "lost_s": 18.1}


def test_the_command_writes_the_table_and_the_counts(tmp_path, capsys):
    r = round_(7, {"a": est(37.7, 51.0, bound=114.7, raw=347.7),
                   "b": est(18.9, 43.0, bound=146.0, raw=39.7)},
               {"a": 60.0, "b": 1.1}, {"a": 73.4, "b": 23.4}, "a", "b", 50.0)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run_of(r)))
    data = misses.main(["--runs", str(path), "--out", str(tmp_path), "--name", "m"])
    assert data["causes"]["tie: surer bound (recent waits)"] == {"rounds": 1, "lost_s": 50.0}
    md = (tmp_path / "m.md").read_text()
    assert "| depth_misleads | 7 | 7 | a: 37.7 (114.7), started 60.0 |" in md
    assert "| tie: surer bound (recent waits) | 1 | 50.0 |" in md
    assert "per cause" in capsys.readouterr().out


def test_own_jobs_are_named_only_where_their_correction_made_the_miss():
    """Seed 117's delta, round 9: predicted 147 s, 146 s before the own jobs' correction
    (ratio 1.006), started after 23 s: the plan was wrong, not the correction. Where the
    start before the correction was right (40 s predicted, 5 s before it, started in 8 s),
    the correction is."""
    plan = round_(9, {"beta": est(53.1, 66.0, bound=1977.8), "delta": est(
        147.0, 169.0, bound=260.3, model_start_s=146.0, own_wait_ratio=1.006)},
        {"beta": 59.9, "delta": 23.3}, {"beta": 73.0, "delta": 45.2}, "beta", "delta", 27.8)
    own = round_(3, {"beta": est(20.0, 33.0, bound=60.0), "delta": est(
        40.0, 62.0, bound=90.0, model_start_s=5.0, own_wait_ratio=8.0)},
        {"beta": 21.0, "delta": 8.0}, {"beta": 34.0, "delta": 30.0}, "beta", "delta", 4.0)
    got = misses.explain(run_of(plan, own))
    assert got[0]["causes"] == ["fastest too late: calibration ratios"]
    assert got[1]["causes"] == ["fastest too late: own jobs"]


def test_a_start_too_soon_before_any_calibration_is_the_plans_not_the_ratios():
    """Seed 122's real-log round 8: beta's walltime plan put the probe at once (raw 0), the
    own jobs moved it to 0.9 s, and nothing started within 240 s; seed 118's round 0: the
    raw plan said 692 s, the ratios 32 s, it started after 103 s (the ratios' miss)."""
    view = round_(8, {"beta": est(0.9, 14.3, bound=313.0, raw=0.0, model_start_s=0.0,
                                  own_wait_ratio=1.03),
                      "gamma": est(313.5, 323.5, bound=1739.0, raw=1739.0)},
                  {"gamma": 67.8}, {"beta": 240.0, "gamma": 77.8}, "beta", "gamma", 162.2,
                  censored=("beta",))
    plan = round_(9, {"beta": est(15.5, 28.8, bound=409.2, raw=60.0),
                      "gamma": est(228.8, 238.8, bound=1726.0, raw=1726.0)},
                  {"gamma": 56.2}, {"beta": 240.0, "gamma": 66.2}, "beta", "gamma", 173.8,
                  censored=("beta",))
    ratios = round_(0, {"beta": est(32.3, 45.6, bound=692.3, raw=692.3),
                        "gamma": est(185.3, 195.3, bound=1771.3, raw=1771.3)},
                    {"beta": 103.0, "gamma": 84.1}, {"beta": 116.3, "gamma": 94.1},
                    "beta", "gamma", 22.2)
    got = misses.explain(run_of(view, plan, ratios, traces=[{"log": "HPC2N"}]))
    assert [g["causes"] for g in got] == [
        ["chosen too soon: queue view", "fastest too late: calibration ratios"],
        ["chosen too soon: walltime plan", "fastest too late: calibration ratios"],
        ["chosen too soon: calibration ratios", "fastest too late: calibration ratios"]]


def test_a_round_planned_at_once_that_waited_shows_its_recorded_view():
    """Seed 123's shape: alpha planned at 0 s (bound 0) started after 56 s; the kept view
    shows the two own probes running and the six whole-machine jobs waiting ahead."""
    from datetime import datetime, timedelta, timezone

    from benchmarks.placement import view_record
    from diamond_jupyter.model import JobState, JobStatus, Node, SiteSnapshot

    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    nodes = [Node(name=f"an{i}", state="idle*" if i == 4 else "mixed", cpus=8)
             for i in range(1, 5)]
    jobs = [JobStatus(native_id=str(i), state=JobState.RUNNING, user="bench", nodes=1,
                      cpus=8, partition="batch", started_at=now - timedelta(seconds=20),
                      walltime_s=60) for i in (41, 42)]
    jobs += [JobStatus(native_id=str(50 + i), state=JobState.PENDING, user="load", nodes=4,
                       cpus=128, partition="batch", reason="Priority", walltime_s=600)
             for i in range(6)]
    view = view_record(SiteSnapshot(site="alpha", taken_at=now, jobs=jobs, nodes=nodes),
                       own={"41", "42"}, ended=(), now=now)
    assert [j["user"] for j in view["running"]] == ["own", "own"]
    assert view["running"][0]["start_s"] == -20.0 and not view["running"][0]["ended"]
    r = round_(3, {"alpha": est(0.0, 13.3, bound=0.0, raw=0.0),
                   "beta": est(4.0, 17.0, bound=9.0, raw=4.0)},
               {"alpha": 55.6, "beta": 1.0}, {"alpha": 75.6, "beta": 14.0}, "alpha", "beta",
               61.6)
    r["view"] = {"alpha": json.loads(json.dumps(view))}
    got = misses.explain(run_of(r))[0]["view"]
    assert [j["id"] for j in got["own_running"]] == ["41", "42"]
    assert got["others_running"] == 0 and got["ended_dropped"] == []
    assert got["waiting"] == 6 and {j["nodes"] for j in got["waiting_ahead"]} == {4}
    text = misses.table(misses.explain(run_of(r)), {})
    assert got["unusable_nodes"] == ["an4 (idle*)"]
    assert "41 own 1N/8c RUNNING start -20 limit 60" in text
    assert "nodes not used: an4 (idle*)" in text
    assert "waiting 6, first: 50 load 4N/128c Priority start - limit 600" in text


def test_a_round_that_started_as_planned_or_kept_no_view_shows_none():
    r = round_(1, {"a": est(0.0, 10.0, bound=0.0), "b": est(2.0, 9.0, bound=2.0)},
               {"a": 3.0, "b": 0.5}, {"a": 16.0, "b": 9.0}, "a", "b", 7.0)
    r["view"] = {"a": {"running": [], "pending": [], "left_out": {}}}
    assert misses.explain(run_of(r))[0]["view"] is None  # started within WAITED_S
    r["started_s"]["a"] = 50.0
    assert misses.explain(run_of(r))[0]["view"] is not None
    del r["view"]
    assert misses.explain(run_of(r))[0]["view"] is None  # a run from before views were kept


def test_a_view_record_is_capped_running_first_and_counts_the_rest():
    from datetime import datetime, timezone

    from benchmarks.placement import view_record
    from diamond_jupyter.model import JobState, JobStatus, SiteSnapshot

    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    jobs = [JobStatus(native_id=f"p{i}", state=JobState.PENDING) for i in range(5)]
    jobs += [JobStatus(native_id=f"r{i}", state=JobState.RUNNING) for i in range(3)]
    view = view_record(SiteSnapshot(site="s", taken_at=now, jobs=jobs), own=(),
                       ended={"r1"}, now=now, cap=4)
    assert [j["id"] for j in view["running"]] == ["r0", "r1", "r2"]
    assert [j["id"] for j in view["pending"]] == ["p0"]
    assert view["left_out"] == {"nodes": 0, "running": 0, "pending": 4}
    assert [j["ended"] for j in view["running"]] == [False, True, False]
    assert view["running"][1]["user"] == "own"  # the store's, heard ended
