"""The test bed's second doors to its clusters, for real: alpha through Slurm's own PBS/Torque
wrappers (the `pbs` dialect over SSH) and beta through slurmrestd (Slurm's REST API, JWT,
no SSH for scheduling; its logs and results through its file door, SFTP to beta's login
node). The engine's per-site checks run on each, then the CLI as a user runs it."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys

import pytest
import yaml

from diamond_jupyter import testbed
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec, JobState, SiteError, StageEntry
from diamond_jupyter.store import Store

PBS, REST = "alpha-pbs", "beta-rest"
DOORS = (PBS, REST)
CLUSTER_OF = {PBS: "alpha", REST: "beta"}


@pytest.fixture
def doors(tb):
    """The doors must be listed: install.sh installs what they need (a door left out is a
    failure here, with the test bed's reason)."""
    info = testbed.up()
    missing = {d: next((x["why"] for x in info["left_out"] if x["name"] == d), "not listed")
               for d in DOORS if d not in tb.sites}
    assert not missing, missing
    return info


@pytest.fixture
async def fed(tb, doors, tmp_path):
    f = Federation(tb.config_path, store=Store(tmp_path / "store.sqlite"), poll_interval_s=30,
                   min_poll_s=0.5)
    await f.start()
    yield f
    await f.close()


def test_up_lists_each_entry_with_scheduler_and_transport(doors):
    listed = {s["name"]: s for s in doors["sites"]}
    assert listed[PBS] == {"name": PBS, "scheduler": "pbs", "flavor": "slurm",
                           "transport": "ssh", "cluster": "alpha", "auto": False}
    assert listed[REST] == {"name": REST, "scheduler": "slurm", "transport": "slurmrestd",
                            "files": "ssh", "cluster": "beta", "auto": False}
    assert listed["alpha"]["transport"] == "ssh" and listed["alpha"]["auto"] is True
    assert doors["left_out"] == []


@pytest.mark.parametrize("site", DOORS)
async def test_submit_wait_and_exit_codes(fed, site):
    ok = await fed.submit(Federation.parse("#!/bin/bash\n#SBATCH --time=2\n"
                                           "echo door-$((6*7)); hostname\n"), site)
    bad = await fed.submit(JobSpec(script="exit 3\n"), site)
    assert ok.id.startswith(f"{site}:") and ok.state == JobState.PENDING
    done, failed = await asyncio.gather(fed.wait(ok.id, timeout=300),
                                        fed.wait(bad.id, timeout=300))
    assert done.state == JobState.COMPLETED and done.exit_code == 0
    assert failed.state == JobState.FAILED and failed.exit_code == 3
    logs = await fed.logs(ok.id)  # over REST: read through the file door
    assert logs["stdout"].split() == ["door-42", CLUSTER_OF[site]] and not logs["missing"]
    if site == REST:  # in the job's own directory, as over SSH
        assert done.stdout_path == f"{fed.site(REST).workdir}/jobs/{ok.token}/stdout.log"


async def test_rest_door_outlives_the_directory_it_was_started_from(fed, tmp_path,
                                                                   monkeypatch):
    """slurmrestd exits at a job submit whose directory is gone ("getcwd failed"): the test
    bed's slurmrestd, started from a benchmark's clone that was removed after, failed the
    next REST submit with "connection refused"."""
    gone = tmp_path / "clone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    testbed.stop_site(CLUSTER_OF[REST], ("rest",))
    testbed.start_site(CLUSTER_OF[REST], ("rest",))
    monkeypatch.chdir(tmp_path)
    gone.rmdir()
    job = await fed.submit(Federation.parse("#!/bin/bash\n#SBATCH --time=1\necho after-rmdir\n"),
                           REST)
    done = await fed.wait(job.id, timeout=300)
    assert done.state == JobState.COMPLETED, done
    assert testbed.status()["up"]  # slurmrestd still answers


@pytest.mark.parametrize("site", DOORS)
async def test_result_files_listed_and_fetched(fed, site, tmp_path):
    job = await fed.submit(JobSpec(script="mkdir -p out && printf 'r %s\\n' 7 > out/r.txt\n"
                                          "echo made\n"), site)
    assert (await fed.wait(job.id, timeout=300)).state == JobState.COMPLETED
    names = sorted(p.rsplit("/", 1)[-1] for p in await fed.files(job.id))
    assert names == ["r.txt", "stderr.log", "stdout.log"]  # not its script, not its secret
    got = await fed.fetch(job.id, tmp_path / "got")
    assert sorted(p.relative_to(tmp_path / "got").as_posix() for p in got.paths) == [
        "out/r.txt", "stderr.log", "stdout.log"]
    assert (tmp_path / "got" / "out" / "r.txt").read_text() == "r 7\n"


async def test_rest_site_stages_through_its_file_door(fed, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("staged-in\n")
    spec = JobSpec(script="tr a-z A-Z < in.txt > out.txt\n",
                   stage_in=[StageEntry(source=str(src), destination="in.txt")],
                   stage_out=[StageEntry(source="out.txt", destination=str(tmp_path / "b.txt"))])
    job = await fed.submit(spec, REST)
    done = await fed.wait(job.id, timeout=300)
    assert done.state == JobState.COMPLETED, done.reason
    async for ev in fed.events(since=0):  # stage-out runs after completion
        if ev.job_id == job.id and ev.kind in ("stage.out.done", "stage.out.failed"):
            assert ev.kind == "stage.out.done", ev.data
            break
    assert (tmp_path / "b.txt").read_text() == "STAGED-IN\n"


@pytest.mark.parametrize("site", DOORS)
async def test_cancel_pending_and_running(fed, site):
    held = await fed.submit(JobSpec(script="sleep 100\n"), site, hold=True)
    running = await fed.submit(JobSpec(script="sleep 300\n"), site)
    await fed.wait(running.id, until=[JobState.RUNNING], timeout=300)
    await fed.cancel(held.id)
    await fed.cancel(running.id)
    a, b = await asyncio.gather(fed.wait(held.id, timeout=300),
                                fed.wait(running.id, timeout=300))
    assert a.state == JobState.CANCELLED and b.state == JobState.CANCELLED


@pytest.mark.parametrize("site", DOORS)
async def test_held_job_released(fed, site):
    job = await fed.submit(JobSpec(script="true\n"), site, hold=True)
    await fed.release(job.id)  # qrls through the wrapper; POST job/ID over REST
    assert (await fed.wait(job.id, timeout=300)).state == JobState.COMPLETED


async def test_queue_snapshots_of_the_doors_match_their_clusters(fed):
    snaps = await fed.snapshots(max_age_s=0)
    assert snaps[PBS].reachable and snaps[REST].reachable, (snaps[PBS].error,
                                                             snaps[REST].error)
    assert sorted(n.name for n in snaps[PBS].nodes) == sorted(n.name for n in snaps["alpha"].nodes)
    assert sorted(n.name for n in snaps[REST].nodes) == sorted(n.name for n in snaps["beta"].nodes)
    assert {p.name for p in snaps[REST].partitions} == {p.name for p in snaps["beta"].partitions}
    assert [p.max_time_s for p in snaps[PBS].partitions if p.name == "batch"] == [86400]
    # a second door is never what --site auto picks (the same machines, counted once)
    placed = await fed.place(JobSpec(script="true\n"))
    ranked = {v.site for v in placed.ranked}
    assert ranked == {n for n, s in fed.sites.items() if s.cfg.auto} and not ranked & set(DOORS)


async def test_rest_site_down_is_unreachable_and_recovers(fed, tb, caplog):
    caplog.set_level(logging.DEBUG)
    before = await fed.submit(JobSpec(script="sleep 4\n"), REST)
    await fed.wait(before.id, until=[JobState.RUNNING], timeout=300)
    testbed.stop_site("beta", ("rest",))
    try:
        snap = await fed.snapshot(REST, max_age_s=0)
        assert not snap.reachable and "cannot connect to slurmrestd" in snap.error
        assert "is slurmrestd running?" in snap.error
        with pytest.raises(SiteError, match="beta-rest: cannot connect to slurmrestd"):
            await fed.submit(JobSpec(script="true\n"), REST)
        # the cluster goes on without its REST door: the job ends meanwhile
        testbed.control.wait_ended("beta", [before.native_id], timeout=120)
    finally:
        testbed.start_site("beta", ("rest",))
    done = await fed.wait(before.id, timeout=300)  # followed again once slurmrestd is back
    assert done.state == JobState.COMPLETED
    assert (await fed.snapshot(REST, max_age_s=0)).reachable
    after = await fed.submit(JobSpec(script="true\n"), REST)
    assert (await fed.wait(after.id, timeout=300)).state == JobState.COMPLETED
    # the user's token is a secret: nowhere in the store, its events or the logs
    token = await fed.site(REST).rest.token()
    blob = b"".join(p.read_bytes() for p in fed.store.path.parent.glob("store.sqlite*")
                    if p.is_file())
    assert token.encode() not in blob
    assert token not in caplog.text
    assert all(token not in json.dumps(e.model_dump(mode="json"))
               for e in fed.store.events_since(0))


@pytest.mark.parametrize("site", DOORS)
def test_cli_submit_wait_logs_cancel(tb, doors, data_dir, tmp_path, site):
    env = {**os.environ, "DIAMOND_CONFIG": str(tb.config_path),
           "DIAMOND_DATA_DIR": str(data_dir)}

    def run(*args: str, check: int = 0) -> subprocess.CompletedProcess:
        r = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                           capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == check, (r.returncode, r.stdout, r.stderr)
        return r
    job_sh = tmp_path / "job.sh"
    job_sh.write_text("#!/bin/bash\n#SBATCH --time=2\necho cli-door\necho 42 > answer.txt\n")
    job = json.loads(run("submit", "--site", site, str(job_sh), "--json").stdout)
    done = json.loads(run("wait", job["id"], "--json", "--timeout", "300").stdout)
    assert done["state"] == "COMPLETED" and done["exit_code"] == 0
    assert run("logs", job["id"]).stdout.strip() == "cli-door"
    fetched = json.loads(run("fetch", job["id"], str(tmp_path / "res"), "--json").stdout)
    assert (tmp_path / "res" / "answer.txt").read_text() == "42\n", fetched
    if site == REST:
        # the same entry without its file door: a clear one-line refusal saying what to add
        cfg = yaml.safe_load(tb.config_path.read_text())
        for e in cfg["sites"]:
            e.pop("files", None)
        bare = tmp_path / "no-door.yaml"
        bare.write_text(yaml.safe_dump(cfg))
        for cmd in (["logs", job["id"]], ["fetch", job["id"], str(tmp_path / "x")]):
            r = run(*cmd, "--config", str(bare), check=2)
            assert len(r.stderr.strip().splitlines()) == 1, r.stderr
            assert "not possible over slurmrestd alone" in r.stderr
            assert "files: {kind: ssh, host: LOGIN-NODE" in r.stderr
    long_sh = tmp_path / "long.sh"
    long_sh.write_text("#!/bin/bash\nsleep 600\n")
    held = json.loads(run("submit", "--site", site, "--hold", str(long_sh), "--json").stdout)
    run("cancel", held["id"], "--json")
    out = json.loads(run("wait", held["id"], "--json", "--timeout", "300", "--poll", "2").stdout)
    assert out["state"] == "CANCELLED"


async def test_the_engines_address_resolves_inside_the_cluster(fed):
    """slurmrestd looks up each client's address; with no resolver in the namespace that
    lookup hung, and slurmrestd spun without answering. It must come from /etc/hosts."""
    from diamond_jupyter.testbed.clusters import CLUSTERS
    from diamond_jupyter.testbed.pieces import HOST_NAME

    beta = next(c for c in CLUSTERS if c.name == "beta")
    out = await fed.site("beta").run(["getent", "hosts", beta.host_ip], scheduler=False,
                                     timeout=30)
    assert out.stdout.split() == [beta.host_ip, HOST_NAME]
