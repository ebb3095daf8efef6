"""The test bed's Grid Engine cluster `delta` (Son of Grid Engine 8.1.9: a qmaster host and
two exec hosts, each in its own namespaces), through the CLI and the engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from diamond_jupyter import testbed
from diamond_jupyter.dialects.translate import translate
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec, JobState, Resources

SLURM_SCRIPT = """#!/bin/bash
#SBATCH --job-name=from-slurm
#SBATCH --ntasks=3
#SBATCH --time=00:05:00
#SBATCH --mem-per-cpu=500M
echo "job=$SLURM_JOB_ID tasks=$SLURM_NTASKS pe=$PE host=$(hostname)"
cat "$PE_HOSTFILE" | awk '{s += $2} END {print "slots=" s}'
"""


@pytest.fixture
def run(tb, data_dir):
    env = {**os.environ, "DIAMOND_CONFIG": str(tb.config_path), "DIAMOND_DATA_DIR": str(data_dir)}

    def go(*args: str, check: int | None = 0) -> subprocess.CompletedProcess:
        r = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                           capture_output=True, text=True, env=env, timeout=300)
        if check is not None:
            assert r.returncode == check, (r.returncode, r.stdout, r.stderr)
        return r
    return go


@pytest.fixture
def fed(testbed_fed):
    return testbed_fed


def test_delta_runs_grid_engine(tb):
    site = tb.config.site("delta")
    assert site.scheduler == "sge" and site.transport.kind == "ssh"
    st = {s["name"]: s for s in testbed.status()["sites"]}["delta"]
    assert st["qmaster"] and st["sshd"] and st["execd"] == {"dn1": True, "dn2": True}


def test_queue_shows_both_exec_hosts_and_queues(run):
    snap = json.loads(run("queue", "delta", "--json").stdout)
    assert snap["reachable"], snap
    assert {n["name"] for n in snap["nodes"]} == {"dn1", "dn2"}
    assert all(n["cpus"] == 8 for n in snap["nodes"])
    parts = {p["name"]: p for p in snap["partitions"]}
    assert parts["all.q"]["max_time_s"] == 86400 and parts["short.q"]["max_time_s"] == 1800
    # the scheduler's configuration is read with the queue: reservations off (the default)
    assert snap["backfill"] == "none"


def test_a_slurm_script_translated_to_sge_runs_to_completion(run, tmp_path):
    sge, warnings, _ = translate(SLURM_SCRIPT, "sge")
    assert "#$ -pe mpi 3" in sge  # --ntasks=3: three slots of the test bed's mpi PE
    assert "$JOB_ID" in sge and "$SLURM_JOB_ID" not in sge
    path = tmp_path / "translated.sh"
    path.write_text(sge)
    job = json.loads(run("submit", "--site", "delta", str(path), "--json").stdout)
    assert job["id"].startswith("delta:") and job["state"] == "PENDING"
    done = json.loads(run("wait", job["id"], "--json", "--timeout", "300").stdout)
    assert done["state"] == "COMPLETED" and done["exit_code"] == 0, done
    out = run("logs", job["id"]).stdout
    native = job["id"].split(":")[1]
    assert f"job={native} tasks=3 pe=mpi" in out and "slots=3" in out, out


def test_submit_status_wait_logs_cancel_through_the_cli(run, tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH --time=2 --cpus-per-task=2\n"
                      "echo cli-ok $NSLOTS $PE; echo data > out.dat\n")
    job = json.loads(run("submit", "--site", "delta", str(script), "--json").stdout)
    st = json.loads(run("status", job["id"], "--json").stdout)
    assert st["id"] == job["id"] and st["site"] == "delta"
    done = json.loads(run("wait", job["id"], "--json", "--timeout", "300").stdout)
    assert done["state"] == "COMPLETED", done
    assert run("logs", job["id"]).stdout.strip() == "cli-ok 2 smp"  # -c 2: the smp PE
    paths = json.loads(run("fetch", job["id"], str(tmp_path / "back"), "--json").stdout)
    assert any(p.endswith("out.dat") for p in paths["paths"])
    long = tmp_path / "long.sh"
    long.write_text("#!/bin/bash\nsleep 600\n")
    job = json.loads(run("submit", "--site", "delta", str(long), "--json").stdout)
    run("cancel", job["id"], "--json")
    done = json.loads(run("wait", job["id"], "--json", "--timeout", "300", "--poll", "2").stdout)
    assert done["state"] == "CANCELLED", done


async def test_killed_and_failed_jobs_are_not_called_cancelled(fed):
    killed = await fed.submit(JobSpec(script="kill -9 $$\n"), "delta")
    failed = await fed.submit(JobSpec(script="exit 5\n"), "delta")
    timed = await fed.submit(JobSpec(script="sleep 120\n", resources=Resources(walltime_s=3)),
                             "delta")
    k, f, t = [await fed.wait(j.id, timeout=300) for j in (killed, failed, timed)]
    assert k.state == JobState.FAILED and k.exit_code == 137, k
    assert f.state == JobState.FAILED and f.exit_code == 5
    assert t.state == JobState.TIMEOUT, t


async def test_jobs_on_the_two_exec_hosts_never_share_a_group_id(fed):
    """Each job gets a supplementary group id from its execd's gid_range, and its shepherd
    SIGKILLs every process holding that id when the job ends. The exec hosts share one
    kernel, so with one range for both a job ending on dn1 killed a job on dn2 that had the
    same id: each execd must have its own range, and a job on dn2 outlive jobs on dn1."""
    from diamond_jupyter.testbed import gridengine as ge
    from diamond_jupyter.testbed.clusters import CLUSTERS, base_dir

    delta = next(c for c in CLUSTERS if c.name == "delta")
    ranges = ge.gid_ranges(delta)
    spans = []
    for host, ids in ranges.items():
        shown = ge.qcmd(base_dir(), delta, "qconf", "-sconf", host, check=False).stdout
        assert [ln.split() for ln in shown.splitlines() if ln.startswith("gid_range")] == [
            ["gid_range", ids]], shown
        lo, hi = map(int, ids.split("-"))
        spans.append(range(lo, hi + 1))
    assert len(spans) == 2 and not set(spans[0]) & set(spans[1])

    def on(host: str, body: str) -> JobSpec:
        return Federation.parse(f"#!/bin/bash\n#$ -q all.q@{host}\n{body}")
    long = await fed.submit(on("dn2", "sleep 12\necho survived\n"), "delta", force=True)
    await fed.wait(long.id, until=[JobState.RUNNING], timeout=300)
    spool = ge.sge_dir(base_dir(), delta) / "spool" / "execd"
    gid = int((spool / "dn2" / "active_jobs" / f"{long.native_id}.1" / "addgrpid").read_text())
    assert gid in spans[1], (gid, ranges)
    shorts = [await fed.submit(on("dn1", "true\n"), "delta", force=True) for _ in range(4)]
    ended = [await fed.wait(j.id, timeout=300) for j in [*shorts, long]]
    assert [(j.state, j.exit_code) for j in ended] == [(JobState.COMPLETED, 0)] * 5, ended
    assert (await fed.logs(long.id))["stdout"].strip() == "survived"
