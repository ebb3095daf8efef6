"""The fetch-links benchmark runs end to end in a tiny configuration against its own private
sshd (no test bed): every engine names the links alike, the pooled one on several SFTP
channels, for a flat and a deep job directory, and its files are written."""

from __future__ import annotations

import json


def test_fetch_links_benchmark(tmp_path, capsys):
    from benchmarks import fetch_links

    fetch_links.main(["--json", "--out", str(tmp_path), "--links", "8", "--rtt-ms", "2",
                      "--rounds", "2", "--warmup", "1"])
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [r["tree"] for r in runs] == ["flat", "deep"]  # deep: 21 directories listed
    for run in runs:
        assert (run["links"], run["rtt_ms"], run["rounds"]) == (8, 2, 2)
        assert run["skipped_lines"] == 8 and run["sftp_channels_pooled"] == 4
        assert len(run["one_channel_s"]) == len(run["pooled_s"]) == 2
        assert run["median_ratio"] > 0 and run["median_ratio_cold"] > 0
    assert {p.suffix for p in tmp_path.iterdir()} >= {".json", ".md", ".png"}
