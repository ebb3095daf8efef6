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
    assert set(d["median_s"]) == {"engine", "engine_one_command", "floor", "ssh", "noop"}
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
                        "--max-wait", "60", "--hedge-mode", "real"], tb, tmp_path, capsys)
    assert d["rounds"] == 1 and set(d["policies"]) == {
        "fixed", "fewest_pending", "random", "diamond", "hedge2", *placement.VARIANTS}
    assert d["rounds_all_censored"] == 0
    # a policy whose site's probe hit the 60 s bound is censored, reported apart (n 0):
    # on a test bed still busy from earlier tests that happens; the plumbing is checked
    scored = [v for v in d["policies"].values() if v["n"] == 1]
    assert all(v["n"] in (0, 1) for v in d["policies"].values()) and scored
    assert all(v["median_s"] >= 0 for v in scored)
    assert set(d["homes"]) == {s.name for s in tb.config.sites if s.auto}  # delta too
    assert d["best_home_in_hindsight"] in d["homes"]
    [r] = d["per_round"]
    assert r["fastest"] in r["completion_s"] and min(r["completion_s"].values()) >= 0
    # the home that was fastest this round has no regret; diamond's estimates are recorded
    assert d["homes"][r["fastest"]]["median_s"] == 0
    assert all("raw_start_s" in e and "bound_s" in e for e in r["estimate"].values())
    # hedge2 is a real hedged submission: two copies, one ran the probe
    h = r["hedge"]
    assert h["copies"] == 2 and len(set(h["sites"])) == 2 and h["winner"] in h["sites"]
    assert d["hedge"]["jobs"] == 1 and d["hedge"]["extra_submissions_per_job"] == 1


def test_placement_benchmark_on_a_replayed_log(tb, tmp_path, capsys):
    from test_trace import LOGS

    from benchmarks import placement

    d = run(placement, ["--rounds", "1", "--interval", "1", "--warmup", "2", "--base", "1",
                        "--max-wait", "60", "--trace", str(LOGS[0]), "--site", "alpha",
                        "--trace-scale", "600"], tb, tmp_path, capsys)
    [t] = d["traces"]
    assert t["site"] == "alpha" and t["jobs"] > 0 and d["profile"] is None
    assert d["background_jobs"] == t["jobs"]
    # the log's past went into alpha's accounting first (the default: the calibration window)
    assert d["history_s"] == 6 * 3600 and t["history_jobs"] >= 0
    # hedge2 from the matched probes (the default): diamond's two best, no job of its own
    [r] = d["per_round"]
    h = r["hedge"]
    assert d["hedge_mode"] == "matched" and h["group"] is None
    assert h["sites"] == r["ranking"][:2] and h["copies"] == 2
    assert h["censored"] or h["completion_s"] == r["completion_s"][h["winner"]]


def test_place_latency_benchmark(tb, tmp_path, capsys):
    from benchmarks import place_latency

    d = run(place_latency, ["--reps", "2", "--sites", "4"], tb, tmp_path, capsys)
    rec, bed = d["recorded"], d["testbed"]
    assert rec["sites"] == 4 and rec["total_jobs"] > 0 and 0 < rec["median_s"] <= rec["max_s"]
    assert bed["sites"] == 3 and bed["cold_s"] > 0 and 0 < bed["median_s"] <= bed["max_s"]


def test_soak_benchmark(tb, tmp_path, capsys):
    """A short soak: the server SIGKILLed and restarted twice, every slurmctld restarted, an
    sshd restarted; the result carries the four counts and what each fault did."""
    from benchmarks import soak

    d = run(soak, ["--jobs", "6", "--minutes", "0.5", "--sshd-every", "15", "--settle", "150"],
            tb, tmp_path, capsys)
    assert d["jobs"] == 6
    assert all(isinstance(d[k], int) and d[k] >= 0
               for k in ("lost", "duplicated", "wrong_state", "events_missing"))
    assert sorted(f["what"] for f in d["faults"]) == [
        "server", "server", "slurmctld", "slurmctld", "slurmctld", "sshd"]
    assert all(f["error"] is None and f["done_at_s"] is not None for f in d["faults"])
    assert d["server_starts"] == 3 and d["scheduler_jobs"] >= 6 - d["refused"]


def test_metadata_benchmark(tb, tmp_path, capsys):
    from benchmarks import metadata

    d = run(metadata, ["--only", "gromacs-2023,arch-aarch64", "--modes",
                       "metadata,no-metadata", "--timeout", "180"], tb, tmp_path, capsys)
    assert d["modes"]["metadata"]["jobs"] == 2
    assert d["modes"]["metadata"]["succeeded"] == 2, d["modes"]["metadata"]["jobs_detail"]
    assert any(m.startswith("GROMACS/") for m in d["discovered_software"]["beta"])
