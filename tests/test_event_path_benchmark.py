"""The event-path benchmark runs end to end in a tiny configuration (no site is contacted)
and every event written reaches the socket once, in order."""

from __future__ import annotations

import json


def test_event_path_benchmark(tmp_path, capsys):
    from benchmarks import event_path

    event_path.main(["--json", "--out", str(tmp_path), "--seconds", "2", "--rate", "50",
                     "--jobs", "5"])
    d = json.loads(capsys.readouterr().out)
    (run,) = d["runs"]
    assert run["written"] == 100 and run["received"] == 100 and run["lost"] == 0
    assert run["duplicates"] == 0 and run["out_of_order"] == 0 and d["pass"]
    assert run["latency_p99_ms"] >= run["latency_p50_ms"] > 0
    assert {p.suffix for p in tmp_path.iterdir()} >= {".json", ".md", ".png"}
