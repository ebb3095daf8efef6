"""Fault tests on the real test bed: sshd and slurmctld restarts, an engine killed around
the submit, an engine restarted with 50 jobs in flight. Each ends with every job accounted
for exactly once with all its events, and leaves the test bed working (restored in a
`finally`, even on failure)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from typing import Any

import pytest

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec, JobState, Resources
from diamond_jupyter.monitor import parse_event_line
from diamond_jupyter.store import Store
from diamond_jupyter.testbed import control
from diamond_jupyter.testbed.clusters import HOME, USER, base_dir, cluster

pytestmark = pytest.mark.testbed


@pytest.fixture
def restore(tb):
    """Whatever a test breaks, bring each site's sshd and slurmctld back afterwards."""
    yield
    st = control.status()
    for s in st["sites"]:
        if not s["sshd"]:
            control.restart_sshd(s["name"])
        if s.get("slurmctld") is False:  # (Grid Engine's delta has a qmaster instead)
            control.restart_slurmctld(s["name"])


@pytest.fixture
async def make_fed(tb, tmp_path):
    feds: list[Federation] = []

    async def make(store: str = "store.sqlite", start: bool = True, **kw: Any) -> Federation:
        f = Federation(tb.config_path, store=Store(tmp_path / store), poll_interval_s=30,
                       min_poll_s=0.5, **kw)
        feds.append(f)
        return await f.start() if start else f
    yield make
    for f in feds:
        await f.close()


class Gate:
    """A file barrier on a site's shared home: gated jobs run until it is opened."""

    def __init__(self, site: str) -> None:
        self.site, name = site, uuid.uuid4().hex[:10]
        home = base_dir() / "clusters" / site / "home"
        self.host_dir = home / ".diamond" / "gates"
        for d in (home / ".diamond", self.host_dir):  # the user's, even on a fresh home
            d.mkdir(exist_ok=True)
            shutil.chown(d, USER, USER)
        self.host_path = self.host_dir / name
        self.path = f"{HOME}/.diamond/gates/{name}"

    def job(self, name: str = "gated") -> JobSpec:
        return JobSpec(name=name, resources=Resources(cpus_per_task=1, walltime_s=600),
                       script=f"while [ ! -e {self.path} ]; do sleep 0.2; done\n")

    def open(self) -> None:
        self.host_path.touch()


@pytest.fixture
def gates():
    made: list[Gate] = []

    def make(site: str) -> Gate:
        made.append(Gate(site))
        return made[-1]
    yield make
    for g in made:  # never leave gated jobs holding CPUs
        g.open()


def ended_on_site(site: str, jobs: dict[str, str]) -> None:
    """Block until the scheduler has ended these jobs (token -> native id), then check that
    each wrapper wrote its end line to the site's event file: the only witness while the
    engine or the site's sshd is down."""
    control.wait_ended(site, sorted(set(jobs.values())))
    path = base_dir() / "clusters" / site / "home" / ".diamond" / "events.log"
    lines = (parse_event_line(ln) for ln in path.read_text().splitlines())
    ended = {ev.token for ev in lines if ev is not None and ev.kind == "end"}
    assert set(jobs) <= ended, f"jobs ended on {site} without an end line: {set(jobs) - ended}"


def assert_exact_events(fed: Federation, job_ids: list[str],
                        final: JobState = JobState.COMPLETED) -> None:
    """Each job: terminal `final`, exactly one job.state event per state, in order. On a
    busy machine a job can start and report it before its submit command returns: then it
    was never seen pending, and its RUNNING comes before its job.submitted."""
    assert len(set(job_ids)) == len(job_ids)
    for jid in job_ids:
        job = fed.job(jid)
        assert job.state == final, (jid, job.state, job.reason)
        events = fed.store.events_since(0, job_id=job.id, limit=None)
        states = [e.data["state"] for e in events if e.kind == "job.state"]
        [submitted] = [e.seq for e in events if e.kind == "job.submitted"]
        ran_first = [e.seq for e in events if e.kind == "job.state"][0] < submitted
        expected = ["RUNNING", final.value] if ran_first else ["PENDING", "RUNNING", final.value]
        assert states == expected, (jid, states)


async def wait_all(fed: Federation, ids: list[str], until=None, timeout: float = 400) -> None:
    for jid in ids:
        await fed.wait(jid, until=until, timeout=timeout)


async def test_sshd_killed_and_restarted_mid_run(make_fed, gates, restore):
    fed = await make_fed()
    gate = gates("gamma")
    ids = [(await fed.submit(gate.job(), "gamma")).id for _ in range(4)]
    await wait_all(fed, ids, until=[JobState.RUNNING])
    mon = fed.monitors["gamma"]
    assert mon.stream_connected.is_set()
    running = {fed.job(j).token: fed.job(j).native_id for j in ids}

    def while_down() -> None:  # the jobs end while nobody can reach the site
        gate.open()
        ended_on_site("gamma", running)
    control.restart_sshd("gamma", while_down=while_down)
    await wait_all(fed, ids)
    assert_exact_events(fed, ids)
    # the stream is back: a new job's events arrive through it
    new = await fed.submit(JobSpec(command="true"), "gamma")
    await fed.wait(new.id, timeout=300)
    assert_exact_events(fed, [new.id])
    assert mon.stream_connected.is_set()
    sources = {e.data["state"]: e.data.get("source") for e in
               fed.store.events_since(0, job_id=fed.job(new.id).id) if e.kind == "job.state"}
    assert sources["COMPLETED"] == "wrapper"  # delivered by the reconnected push stream


async def test_slurmctld_restarted_mid_run(make_fed, gates, restore):
    fed = await make_fed()
    gate = gates("beta")
    ids = [(await fed.submit(gate.job(), "beta")).id for _ in range(3)]
    await wait_all(fed, ids, until=[JobState.RUNNING])
    held = await fed.submit(JobSpec(command="true"), "beta", hold=True)  # pending throughout
    control.restart_slurmctld("beta")
    gate.open()
    await wait_all(fed, ids)
    await fed.release(held.id)
    after = await fed.submit(JobSpec(command="true"), "beta")
    await wait_all(fed, [held.id, after.id])
    assert_exact_events(fed, [*ids, held.id, after.id])


CRASH = r"""
import asyncio, os, signal, sys
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec
from diamond_jupyter.sites import Site
from diamond_jupyter.store import Store
config, store, mode, name = sys.argv[1:5]
orig = Site.submit
async def submit(self, spec, token, **kw):
    if mode == "after":
        await orig(self, spec, token, **kw)  # sbatch ran ...
    os.kill(os.getpid(), signal.SIGKILL)  # ... and the engine dies before it returns
Site.submit = submit
async def main():
    fed = Federation(config, store=Store(store))
    await fed.submit(JobSpec(command="sleep 1", name=name), "alpha")
asyncio.run(main())
"""


@pytest.mark.parametrize("mode", ["after", "before"])
async def test_engine_killed_between_token_and_submit_return(tb, tmp_path, make_fed, mode):
    name = f"crash-{uuid.uuid4().hex[:8]}"
    proc = subprocess.run([sys.executable, "-c", CRASH, str(tb.config_path),
                           str(tmp_path / "store.sqlite"), mode, name],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    # the engine is dead (SIGKILL): no submit of it can still reach the queue
    fed = await make_fed(start=False, unsure_submit_settle_s=0)
    [intent] = fed.store.intents_without_native_id()
    assert intent.native_id is None
    await fed.recover(intent_grace_s=0)
    job = fed.job(intent.id)
    queued = await fed.site("alpha").find_by_token(intent.name, intent.token or "")
    if mode == "after":  # the token found the job: bound, followed, never submitted twice
        assert [q.native_id for q in queued] == [job.native_id]
        await fed.wait(job.id, timeout=300)
        assert_exact_events(fed, [job.id])
    else:  # nothing reached the scheduler: closed as never submitted, nothing orphaned
        assert queued == []
        assert job.state == JobState.FAILED and "did not reach" in (job.reason or "")
    assert fed.store.intents_without_native_id() == []
    assert len(fed.jobs()) == 1


async def test_engine_restarted_with_50_jobs_in_flight(make_fed, gates):
    sites = ["beta", "gamma"]
    fed1 = await make_fed()
    first = {s: gates(s) for s in sites}  # opened while the engine is down
    second = {s: gates(s) for s in sites}  # opened after the restart
    plan = [(sites[i % 2], (first if i < 25 else second)[sites[i % 2]]) for i in range(50)]
    jobs = [await fed1.submit(g.job(f"inflight{i}"), s) for i, (s, g) in enumerate(plan)]
    ids = [j.id for j in jobs]
    await wait_all(fed1, ids, until=[JobState.RUNNING])
    await fed1.close()
    for s in sites:
        first[s].open()
    for s in sites:  # 25 jobs end while no engine runs
        ended_on_site(s, {j.token: j.native_id for j, (site, g) in zip(jobs, plan, strict=True)
                          if site == s and g is first[s]})
    fed2 = await make_fed()  # same store: re-attach, replay the event files
    assert {j.id for j in fed2.store.unfinished_jobs()} <= set(ids)
    await wait_all(fed2, ids[:25])
    for s in sites:
        second[s].open()
    await wait_all(fed2, ids)
    assert_exact_events(fed2, ids)
    assert len(fed2.jobs(limit=None)) == 50 and not fed2.store.unfinished_jobs()


def test_cluster_reset_then_submit_gets_a_reused_native_id(tb, tmp_path):
    """The cluster's state is reset (down, up): its job numbers start again, and the next
    submit gets the native id of a job still unfinished in the store. The submit succeeds,
    both jobs are listed under different ids, and the older never takes the newer's states."""
    env = {**os.environ, "DIAMOND_CONFIG": str(tb.config_path),
           "DIAMOND_DATA_DIR": str(tmp_path / "data")}

    def run(*args: str, check: int = 0) -> subprocess.CompletedProcess:
        r = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                           capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == check, (args, r.returncode, r.stdout, r.stderr)
        return r
    long, quick = tmp_path / "long.sh", tmp_path / "quick.sh"
    long.write_text("#!/bin/bash\nsleep 600\n")
    quick.write_text("#!/bin/bash\necho second\n")
    plain = f"alpha:{cluster('alpha').first_job_id}"

    control.down()
    control.up()  # numbering starts at the first id
    old = json.loads(run("submit", "--site", "alpha", str(long), "--json").stdout)
    assert old["id"] == plain
    control.down()
    control.up()  # the first job went with the cluster's state, unfinished in the store
    new = json.loads(run("submit", "--site", "alpha", str(quick), "--json").stdout)
    assert new["id"] == plain and new["token"] != old["token"]
    done = json.loads(run("wait", plain, "--json", "--timeout", "120", "--poll", "1").stdout)
    assert done["state"] == "COMPLETED" and done["token"] == new["token"]

    listed = {j["token"]: j for j in json.loads(run("jobs", "--json").stdout)}
    assert len(listed) == 2 and listed[new["token"]]["id"] == plain
    kept = listed[old["token"]]
    assert kept["id"].startswith(f"{plain}@") and kept["reused_by"] == plain
    assert kept["state"] in ("PENDING", "RUNNING")  # never the newer job's COMPLETED
    assert json.loads(run("status", old["token"], "--json").stdout)["id"] == kept["id"]
    assert json.loads(run("status", plain, "--json").stdout)["token"] == new["token"]
    refused = run("cancel", kept["id"], check=2)  # its native id is another job's now
    assert "now belongs to" in refused.stderr
