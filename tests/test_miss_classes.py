"""Diamond's lost rounds by class (benchmarks/miss_classes.py): each lost round of a kept
run in exactly one class, with the seconds it lost and what the variants win back."""

from __future__ import annotations

import json

import pytest

from benchmarks import miss_classes, model_replay


def est(start, finish, bound=None, raw=None, samples=40, **more):
    return {"start_s": start, "finish_s": finish, "bound_s": bound, "raw_start_s": raw,
            "source": "calibrated", "samples": samples, "borrowed": False, **more}


def round_(k, estimate, started, completion, diamond, censored=()):
    fastest = min(completion, key=completion.get)
    return {"round": k, "estimate": estimate, "started_s": started,
            "completion_s": completion, "censored": list(censored),
            "choice": {"diamond": diamond}, "fastest": fastest,
            "additional_s": {"diamond": completion[diamond] - completion[fastest],
                             "home:a": completion["a"] - completion[fastest],
                             "home:b": completion["b"] - completion[fastest]}}


def run_of(*rounds, seed=7, traces=None):
    return {"seed": seed, "profile": "depth_misleads", "traces": traces, "max_wait_s": 240.0,
            "interval_s": 12.0, "per_round": list(rounds)}


# a predicted at 5 s (bound 30 s), started after 80 s; b predicted at 60 s (bound 70 s),
# started after 2 s: both starts wrong; b's finish at its bound (80 s) after a's (45 s)
BOTH_BOUNDS_WRONG = round_(0, {"a": est(5.0, 20.0, 30.0, 90.0),
                               "b": est(60.0, 70.0, 70.0, 90.0, samples=3)},
                           {"a": 80.0, "b": 2.0}, {"a": 95.0, "b": 12.0}, "a")
# a predicted at 5 s with a bound of 200 s never started; b predicted at 40 s (bound 45 s)
# started after 1 s: b's finish at its bound (55 s) before a's (215 s)
BOTH_BOUNDS_RIGHT = round_(1, {"a": est(5.0, 20.0, 200.0, 300.0),
                               "b": est(40.0, 50.0, 45.0, 300.0)},
                           {"b": 1.0}, {"a": 240.0, "b": 11.0}, "a", censored=("a",))
# a's start right (5 s, started at 8 s), b predicted too late (50 s, started at 3 s)
FASTEST_LATE = round_(2, {"a": est(5.0, 25.0, 20.0, 40.0), "b": est(50.0, 60.0, 90.0, 90.0)},
                      {"a": 8.0, "b": 3.0}, {"a": 28.0, "b": 13.0}, "a")
# both started as predicted; a's runtime was 20 s, not the 15 s predicted: within 10 s
WITHIN = round_(3, {"a": est(1.0, 16.0, 2.0, 2.0), "b": est(2.0, 20.0, 3.0, 3.0)},
                {"a": 1.0, "b": 2.0}, {"a": 21.0, "b": 20.0}, "a")


def classes(run):
    return {row["round"]: miss_classes.classify(row, run)
            for row in miss_classes.explain(run)}


def test_each_lost_round_falls_in_one_class_by_which_start_was_wrong_and_the_bounds():
    run = run_of(BOTH_BOUNDS_WRONG, BOTH_BOUNDS_RIGHT, FASTEST_LATE, WITHIN)
    got = classes(run)
    assert {k: c["class"] for k, c in got.items()} == {
        0: "both wrong; bounds wrong too", 1: "both wrong; bounds right",
        2: "fastest too late; bounds wrong too", 3: "within tolerance"}
    first = got[0]
    assert (first["pair"], first["lost_s"]) == ("a -> b", 83.0)
    assert (first["chosen_error_s"], first["fastest_error_s"]) == (75.0, 58.0)
    assert (first["chosen_source"], first["fastest_source"]) == (
        "calibration ratios", "calibration ratios")
    assert (first["chosen_evidence"], first["fastest_evidence"]) == (
        "29-99 own jobs", "under 10 own jobs")
    # the probe that never started counts as starting at the run's bound
    assert got[1]["chosen_never_started"] and got[1]["chosen_error_s"] == 235.0
    assert got[2]["chosen_source"] is None and got[2]["fastest_source"] == "calibration ratios"


def test_late_before_reads_the_earlier_probes_as_they_stood_at_the_round():
    run = run_of(BOTH_BOUNDS_WRONG, BOTH_BOUNDS_RIGHT, FASTEST_LATE, WITHIN)
    # at round 1, a's probe of round 0 (predicted 5 s) had waited 12 s: 7 s late, within
    assert not miss_classes.late_before(run, 1, "a")
    # at round 2: waited 24 s (started only at 80 s), and round 1's 12 s against 5 s:
    # a median of 13 s late
    assert miss_classes.late_before(run, 2, "a")
    assert not miss_classes.late_before(run, 2, "b")  # b's started sooner
    assert not miss_classes.late_before(run, 0, "a")  # nothing before


def test_the_classes_add_up_to_every_second_lost_and_the_variants_are_replayed(tmp_path):
    (tmp_path / "placement-x-seed7.json").write_text(json.dumps(
        run_of(BOTH_BOUNDS_WRONG, BOTH_BOUNDS_RIGHT, FASTEST_LATE, WITHIN)))
    (tmp_path / "placement-y-seed8.json").write_text(json.dumps(
        run_of(BOTH_BOUNDS_RIGHT, seed=8, traces=[{"log": "KTH"}])))
    (tmp_path / "placement-z-seed9.json").write_text(json.dumps({"seed": 9}))  # no rounds
    at_bound = {"at the bound": model_replay.toward_bound(1.0)}
    rows = miss_classes.classified(tmp_path, at_bound)
    data = miss_classes.summarize(rows)
    assert data["lost_rounds"] == 5
    assert data["lost_s"] == pytest.approx(83.0 + 229.0 + 15.0 + 1.0 + 229.0)
    assert sum(c["lost_s"] for c in data["classes"].values()) == pytest.approx(data["lost_s"])
    first, *_ = data["classes"].items()
    assert first[0] == "both wrong; bounds right"  # the most seconds, first
    assert first[1]["by_background"] == {"depth_misleads": {"rounds": 1, "lost_s": 229.0},
                                         "real logs": {"rounds": 1, "lost_s": 229.0}}
    # ranked at their bounds, b is taken in both of its rounds: 229 s won back in each
    assert first[1]["recovered_s"] == {"at the bound": pytest.approx(458.0)}
    table = miss_classes.table(data)
    assert "| both wrong; bounds right | 2 | 458 |" in table
    assert "| at the bound | +458 |" in table


def test_the_command_writes_json_table_and_plot(tmp_path, capsys):
    results, out = tmp_path / "results", tmp_path / "out"
    results.mkdir()
    (results / "placement-x-seed7.json").write_text(json.dumps(run_of(BOTH_BOUNDS_WRONG)))
    data = miss_classes.main(["--results", str(results), "--out", str(out), "--no-variants",
                              "--json"])
    assert list(data["classes"]) == ["both wrong; bounds wrong too"]
    assert data["classes"]["both wrong; bounds wrong too"]["recovered_s"] == {}
    assert json.loads((out / "miss_classes.json").read_text())["lost_rounds"] == 1
    assert "| both wrong; bounds wrong too | 1 | 83 |" in (out / "miss_classes.md").read_text()
    assert (out / "miss_classes.png").stat().st_size > 1000
    assert json.loads(capsys.readouterr().out)["lost_s"] == 83.0


def test_the_command_replays_the_engine_and_the_recency_variants(tmp_path):
    results, out = tmp_path / "results", tmp_path / "out"
    results.mkdir()
    (results / "placement-x-seed7.json").write_text(json.dumps(run_of(BOTH_BOUNDS_WRONG)))
    data = miss_classes.main(["--results", str(results), "--out", str(out), "--recency",
                              "--tag", "recency"])
    recovered = data["classes"]["both wrong; bounds wrong too"]["recovered_s"]
    assert list(recovered) == ["engine", *model_replay.RECENCY]
    md = (out / "miss_classes-recency.md").read_text()
    assert "| engine | +" in md
    # the lost round: did each signal put the fastest site before diamond's?
    assert data["signals_class"] == "both wrong; bounds wrong too"
    assert data["signals"]["90% bound"]["wrong"] == 1  # b's 70 s after a's 30 s
    assert data["signals"]["walltime plan (raw start)"]["silent"] == 1  # 90 s both
    assert "## what the record held at decision time" in md
