"""A slurmrestd site with a file door learns its jobs' starts and ends from the jobs' own
signed lines, as an SSH site does: the wrapper writes them into the event file on the shared
file system, the monitor follows that file through the door. Real files and a real wrapper
run by `bash` on this machine (a local door); the REST side is never reached (its URL is a
closed port)."""

from __future__ import annotations

import asyncio
import os
import secrets
import stat
import subprocess
from pathlib import Path

import pytest

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.journal import Journal
from diamond_jupyter.model import BadInput, Job, JobSpec, JobState, utcnow
from diamond_jupyter.site_kinds import make_site
from diamond_jupyter.sites import EventChannel
from diamond_jupyter.sites_rest import RestSite
from diamond_jupyter.store import Store
from diamond_jupyter.wrapper import event_mac, hedge_gate_file

REST = {"kind": "slurmrestd", "url": "http://127.0.0.1:9", "token_file": "/nonexistent"}
TOKEN = "0123abcd4567ef89"  # (hexadecimal, as the engine makes them)


def rest_site(workdir: str, door: bool = True) -> RestSite:
    site = make_site(SiteConfig(name="beta-rest", transport=REST, workdir=workdir,
                                **({"files": {"kind": "local"}} if door else {})))
    assert isinstance(site, RestSite)
    return site


@pytest.fixture
def work(tmp_path):
    w = tmp_path / "cluster" / "work"
    w.mkdir(parents=True, mode=0o700)
    return w


async def test_the_file_door_is_the_event_channel_and_the_job_gets_its_secret(work):
    bare = rest_site(str(work), door=False)
    assert bare.event_channel is EventChannel.NONE
    assert "__dmd_say" not in bare.prepare(JobSpec(script="echo hi\n"), TOKEN).script
    await bare.close()
    site = rest_site(str(work))
    assert site.event_channel is EventChannel.OPTIONAL
    prepared = site.prepare(JobSpec(script="echo hi\n", name="j"), TOKEN)
    assert prepared.script.startswith(f"__dmd_ev={work}/events.log;")
    secret = secrets.token_hex(32)
    await site.upload(prepared, TOKEN, secret=secret)
    kept = work / "jobs" / TOKEN / "secret"
    assert kept.read_text() == f"{secret}\n"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    with pytest.raises(BadInput, match="hexadecimal"):
        await site.upload(prepared, "tok2", secret="not hex; rm -rf ~")
    assert not (work / "jobs" / "tok2").exists()
    await site.close()


async def test_a_jobs_end_line_reaches_the_engine_through_the_door(work, tmp_path):
    site = rest_site(str(work))
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {"beta-rest": site}, poll_interval_s=3600, min_poll_s=0.05)
    mon = journal.monitors["beta-rest"]
    prepared = site.prepare(JobSpec(script="echo working\nexit 3\n", name="train"), TOKEN)
    secret = secrets.token_hex(32)
    rendered = await site.upload(prepared, TOKEN, secret=secret)
    mon.expect(TOKEN, secret)
    store.upsert_job(Job(id="beta-rest:100", site="beta-rest", native_id="100", name="train",
                         spec=prepared, token=TOKEN, state=JobState.PENDING))
    mon.track(store.get_job("beta-rest:100"))
    try:
        await asyncio.wait_for(mon.stream_connected.wait(), timeout=30)
        assert mon._interval() == 3600  # ends are pushed: the query is the slow safety net
        jd = work / "jobs" / TOKEN
        # the job runs on a compute node sharing the file system: here, bash in its directory
        run = await asyncio.to_thread(
            subprocess.run, ["bash", str(jd / "job.sh")], cwd=jd, capture_output=True,
            env={**os.environ, "SLURM_JOB_ID": "100"}, timeout=60)
        assert run.returncode == 3 and run.stdout == b"working\n"
        done = await journal.wait("beta-rest:100", timeout=30)
        assert done.state == JobState.FAILED and done.exit_code == 3
        assert done.started_at is not None and done.ended_at is not None
        kinds = [e.data.get("source") for e in store.events_since(0, job_id="beta-rest:100")
                 if e.kind == "job.state"]
        assert "wrapper" in kinds
        assert rendered is not None and (work / "events.log").exists()
        assert mon.rejected_lines == 0
    finally:
        await journal.stop()
        await site.close()


async def test_a_forged_line_in_the_event_file_is_not_believed(work, tmp_path):
    site = rest_site(str(work))
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {"beta-rest": site}, poll_interval_s=3600, min_poll_s=0.05)
    mon = journal.monitors["beta-rest"]
    secret = secrets.token_hex(32)
    mon.expect(TOKEN, secret)
    store.upsert_job(Job(id="beta-rest:100", site="beta-rest", native_id="100", name="train",
                         token=TOKEN, state=JobState.PENDING))
    mon.track(store.get_job("beta-rest:100"))
    try:
        await asyncio.wait_for(mon.stream_connected.wait(), timeout=30)
        genuine = f"1700000000.5 start {TOKEN} 100 0"
        with (work / "events.log").open("a") as f:
            f.write(f"1700000000.0 end {TOKEN} 100 0 {'0' * 64}\n")  # not signed by the job
            f.write(f"{genuine} {event_mac(secret, genuine)}\n")  # then its own start line
        job = await journal.wait("beta-rest:100", until=[JobState.RUNNING], timeout=30)
        assert job.state == JobState.RUNNING and mon.rejected_lines == 1
    finally:
        await journal.stop()
        await site.close()


async def test_while_the_door_streams_nothing_the_rest_site_keeps_the_adaptive_pace(work,
                                                                                  tmp_path):
    """A door that runs no command (SFTP only) never streams: the site is then followed as
    one without a channel, its awaited jobs at the awaited pace."""
    from datetime import timedelta

    site = rest_site(str(work))
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {"beta-rest": site}, poll_interval_s=60, min_poll_s=0.5)
    mon = journal.monitors["beta-rest"]
    store.upsert_job(Job(id="beta-rest:100", site="beta-rest", native_id="100", name="train",
                         spec=JobSpec(name="train", command="true"), token=TOKEN))
    store.apply_state("beta-rest:100", JobState.RUNNING,
                      started_at=utcnow() - timedelta(seconds=30))
    mon.tracked[TOKEN] = "100"  # (not `track`: no stream is started)
    mon.quiet_polls = 10
    with mon.waiting_on(store.get_job("beta-rest:100")):
        assert abs(mon._interval() - 3.0) < 0.05  # not streaming: the awaited pace
        mon.stream_connected.set()
        assert mon._interval() == 60  # streaming: ends are pushed
    await journal.stop()
    await site.close()


async def test_a_hedged_copys_decision_goes_through_the_door(work):
    site = rest_site(str(work))
    await site.decide_hedge(TOKEN, "go")
    gate = hedge_gate_file(f"{work}/jobs/{TOKEN}")
    assert Path(gate).read_text() == f"go {TOKEN}\n"
    assert stat.S_IMODE(os.stat(gate).st_mode) == 0o600
    with pytest.raises(BadInput, match="go or no"):
        await site.decide_hedge(TOKEN, "maybe")
    await site.close()
    bare = rest_site(str(work), door=False)
    with pytest.raises(BadInput, match="not possible over slurmrestd alone"):
        await bare.decide_hedge(TOKEN, "go")
    await bare.close()


async def test_a_door_that_runs_no_command_streams_nothing_and_costs_no_extra_query(work,
                                                                                    tmp_path):
    """An SFTP-only door refuses `tail`: the stream is tried again with backoff, but each
    refusal asks the REST API nothing more (nothing was seen before: nothing was missed)."""
    from diamond_jupyter.model import SiteError
    from diamond_jupyter.transports import LocalTransport

    tried = asyncio.Queue()

    class SftpOnly(LocalTransport):
        async def run(self, argv, **kw):
            tried.put_nowait(argv)
            raise SiteError("beta-rest: this door allows SFTP only")

    base = rest_site(str(work))
    site = RestSite(base.cfg, files=SftpOnly("beta-rest"))
    await base.close()
    assert site.event_channel is EventChannel.OPTIONAL
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {"beta-rest": site}, poll_interval_s=60, min_poll_s=0.5)
    mon = journal.monitors["beta-rest"]
    follow = asyncio.ensure_future(mon._follow())
    try:
        await asyncio.wait_for(tried.get(), timeout=30)
        await asyncio.wait_for(tried.get(), timeout=30)  # tried again: the first was handled
        assert not mon.stream_connected.is_set() and not mon._kick.is_set()
        mon.quiet_polls = 10
        assert mon._interval() == 60  # the adaptive pace (nothing awaited), not a fixed one
        mon.quiet_polls = 1
        assert mon._interval() == 1.0
    finally:
        follow.cancel()
        await asyncio.gather(follow, return_exceptions=True)
        await journal.stop()
        await site.close()
