"""Each benchmark runs end to end in a tiny configuration on the test bed and emits valid
JSON (plus its markdown table and PNG). No timing assertions: that is the benchmarks' job."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.testbed


def run(module, argv: list[str], tb, tmp_path, capsys) -> dict:
    module.main(["--json", "--out", str(tmp_path), "--config", str(tb.config_path), *argv])
    data = json.loads(capsys.readouterr().out)
    names = {p.suffix for p in tmp_path.iterdir()}
    assert {".json", ".md", ".png"} <= names
    return data


def test_submit_benchmark(tb, tmp_path, capsys):
    from benchmarks import submit

    d = run(submit, ["-n", "2", "--warmup", "1"], tb, tmp_path, capsys)
    assert set(d["median_s"]) == {"engine", "floor", "ssh", "noop"}
    assert all(len(v) == 2 for v in d["samples_s"].values())
    assert d["ratio_engine_over_floor"] > 0 and d["ratio_ssh_over_engine"] > 0


def test_events_benchmark(tb, tmp_path, capsys):
    from benchmarks import events

    d = run(events, ["--jobs", "3", "--window", "1", "--max-sleep", "1",
                     "--sentinel-extra", "3"], tb, tmp_path, capsys)
    assert d["jobs"] == 3 and d["final_states"] == {"COMPLETED": 3 + d["sentinels"]}
    assert d["p50_s"] is not None and d["p95_s"] >= d["p50_s"] >= 0
    assert d["scheduler_cmds_per_site_per_min"] >= 0


def test_placement_benchmark(tb, tmp_path, capsys):
    from benchmarks import placement

    d = run(placement, ["--rounds", "1", "--interval", "1", "--warmup", "1", "--base", "1",
                        "--max-wait", "60"], tb, tmp_path, capsys)
    assert d["rounds"] == 1 and set(d["policies"]) == {"fixed", "fewest_pending", "random",
                                                        "diamond"}
    assert all(v["n"] == 1 and v["median_s"] >= 0 for v in d["policies"].values())
    [r] = d["per_round"]
    assert r["fastest"] in r["completion_s"] and min(r["completion_s"].values()) >= 0
