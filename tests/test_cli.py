"""The `diamond` command line, run as a real subprocess against the real test bed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

CORPUS_PBS = "/work/shared/corpus/batch-scripts/pbs"


@pytest.fixture
def run(tb, data_dir):
    env = {**os.environ, "DIAMOND_CONFIG": str(tb.config_path), "DIAMOND_DATA_DIR": str(data_dir)}

    def go(*args: str, check: int | None = 0) -> subprocess.CompletedProcess:
        r = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                           capture_output=True, text=True, env=env, timeout=120)
        if check is not None:
            assert r.returncode == check, (r.returncode, r.stdout, r.stderr)
        return r
    return go


def test_sites_and_queue(run, tb):
    sites = json.loads(run("sites", "--json").stdout)
    assert [s["name"] for s in sites] == tb.sites  # every entry, second doors included
    assert all(s["reachable"] for s in sites)
    snap = json.loads(run("queue", "gamma", "--json").stdout)
    assert {p["name"] for p in snap["partitions"]} == {"short", "long"}


def test_submit_status_wait_logs_fetch(run, tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH --time=2\necho cli-ok; echo x > out.dat\n")
    job = json.loads(run("submit", "--site", "alpha", str(script), "--json").stdout)
    assert job["id"].startswith("alpha:") and job["state"] == "PENDING"
    # a site given by name gets its predicted start too (placed there alone, after the submit)
    assert job["placement"]["policy"] == "explicit" and job["predicted_start"]["text"]
    st = json.loads(run("status", job["id"], "--json").stdout)
    assert st["id"] == job["id"]
    done = json.loads(run("wait", job["id"], "--json", "--timeout", "300").stdout)
    assert done["state"] == "COMPLETED" and done["exit_code"] == 0
    assert run("logs", job["id"]).stdout.strip() == "cli-ok"
    paths = json.loads(run("fetch", job["id"], str(tmp_path / "back"), "--json").stdout)
    assert any(p.endswith("out.dat") for p in paths["paths"]) and paths["skipped"] == []
    listed = json.loads(run("jobs", "--json").stdout)
    assert job["id"] in [j["id"] for j in listed]  # one store, shared by every invocation


def test_cancel(run, tmp_path):
    script = tmp_path / "long.sh"
    script.write_text("#!/bin/bash\nsleep 600\n")
    job = json.loads(run("submit", "--site", "beta", str(script), "--json").stdout)
    run("cancel", job["id"], "--json")
    done = json.loads(run("wait", job["id"], "--json", "--timeout", "300", "--poll", "2").stdout)
    assert done["state"] == "CANCELLED"


def test_place_explain_and_auto(run, tmp_path):
    script = tmp_path / "gpu.sh"
    script.write_text("#!/bin/bash\n#SBATCH --gpus-per-node=1\n#SBATCH -t 10\nnvidia-smi\n")
    out = run("place", str(script), "--explain").stdout
    assert "gamma" in out and "no GPUs" in out or "GPU" in out
    pl = json.loads(run("place", str(script), "--json").stdout)
    assert pl["choice"] == "gamma"
    job = json.loads(run("submit", str(script), "--json").stdout)  # --site auto by default
    assert job["site"] == "gamma"


def test_translate_reports_each_dropped_directive(run):
    src = f"{CORPUS_PBS}/" + sorted(os.listdir(CORPUS_PBS))[0]
    r = run("translate", "--to", "lsf", src)
    assert r.stdout.startswith("#!") and "#BSUB" in r.stdout
    for line in r.stderr.splitlines():
        assert line.startswith(("dropped:", "approximated:", "ignored:", "note:", "kept:")), line
    spec = json.loads(run("translate", "--to", "flux", src, "--json").stdout)
    assert spec["source_dialect"] == "pbs"


def test_exit_codes_and_one_line_reasons(run, tmp_path, tb):
    r = run("status", "alpha:42424242", check=2)
    assert r.stderr.startswith("diamond: ") and len(r.stderr.strip().splitlines()) == 1
    r = run("translate", "--to", "cobalt", str(tmp_path), check=2)
    assert "cobalt" in r.stderr or "is a directory, not a job script" in r.stderr
    r = run("queue", "nowhere", check=2)
    assert "unknown site 'nowhere'" in r.stderr
    bad = tmp_path / "sites.yaml"
    bad.write_text("sites:\n  - name: ghost\n    transport: {host: 10.213.99.2, "
                   f"known_hosts: {tb.base}/ssh/known_hosts, connect_timeout_s: 1}}\n")
    r = run("queue", "ghost", "--config", str(bad), check=1)
    assert r.stderr.startswith("diamond: ") and "ghost" in r.stderr
