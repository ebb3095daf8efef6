"""The engine against the real test-bed clusters over SSH: every Federation skill."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, JobSpec, JobState, Resources, SiteError
from diamond_jupyter.store import Store


@pytest.fixture
def fed(testbed_fed):
    return testbed_fed


def script(body: str, **directives: str) -> str:
    lines = ["#!/bin/bash"]
    lines += [f"#SBATCH --{k.replace('_', '-')}={v}" for k, v in directives.items()]
    return "\n".join(lines) + "\n" + body + "\n"


# each test that runs once per site also runs on delta, the Grid Engine cluster
@pytest.mark.parametrize("site", ["alpha", "delta"])
async def test_submit_wait_logs_fetch(fed, tmp_path, site):
    spec = Federation.parse(script("echo out-$((6*7)); echo err >&2; echo data > result.txt",
                                   time="5", job_name="t1"))
    job = await fed.submit(spec, site)
    assert job.id.startswith(f"{site}:") and job.state == JobState.PENDING
    done = await fed.wait(job.id, timeout=300)
    assert done.state == JobState.COMPLETED and done.exit_code == 0
    assert done.started_at and done.ended_at and done.ended_at >= done.started_at
    logs = await fed.logs(job.id)
    assert logs["stdout"].strip() == "out-42" and logs["stderr"].strip() == "err"
    files = await fed.files(job.id)
    assert any(f.endswith("/result.txt") for f in files)
    paths = await fed.fetch(job.id, tmp_path / "back")
    got = {p.name: p for p in paths.paths}
    assert got["result.txt"].read_text() == "data\n"
    kinds = [e.kind for e in fed.store.events_since(0, job_id=job.id)]
    assert kinds.count("job.state") == 3  # PENDING, RUNNING, COMPLETED; nothing twice


@pytest.mark.parametrize("site", ["beta", "delta"])
async def test_failing_job_reports_exit_code(fed, site):
    job = await fed.submit(JobSpec(script="exit 3\n"), site)
    done = await fed.wait(job.id, timeout=300)
    assert done.state == JobState.FAILED and done.exit_code == 3


@pytest.mark.parametrize("site", ["gamma", "delta"])
async def test_cancel_pending_job_resolved_by_safety_net(fed, site):
    # held: it never runs its wrapper, so only the batched scheduler query can see the end
    job = await fed.submit(JobSpec(script="sleep 100\n"), site, hold=True)
    await fed.cancel(job.id)
    done = await fed.wait(job.id, timeout=300)
    assert done.state == JobState.CANCELLED


@pytest.mark.parametrize("site", ["alpha", "delta"])
async def test_cancel_running_job(fed, site):
    job = await fed.submit(JobSpec(script="sleep 300\n"), site)
    await fed.wait(job.id, until=[JobState.RUNNING], timeout=300)
    await fed.cancel(job.id)
    done = await fed.wait(job.id, timeout=300)
    # what the engine was told, should it ever not be CANCELLED (seen once on a busy CI)
    told = [(e.kind, e.data) for e in fed.store.events_since(0, job_id=job.id)]
    assert done.state == JobState.CANCELLED, (done.reason, done.exit_code, told)


async def test_auto_placement_respects_capabilities(fed):
    gpu = JobSpec(script="nvidia-smi || true\n",
                  resources=Resources(gpus_per_node=1, walltime_s=600))
    pl = await fed.place(gpu)
    assert pl.choice == "gamma"
    reasons = {v.site: " ".join(v.reasons) for v in pl.ranked if not v.feasible}
    assert "GPU" in reasons["alpha"] and "GPU" in reasons["beta"]
    arm = JobSpec(script="uname -m\n", metadata={"architecture": "aarch64"})
    job = await fed.submit(arm, "auto")
    assert job.site == "beta" and job.placement["choice"] == "beta"
    await fed.wait(job.id, timeout=300)


@pytest.mark.parametrize("site", ["gamma", "delta"])
async def test_status_and_jobs_listing(fed, site):
    job = await fed.submit(JobSpec(command="true"), site)
    st = await fed.status(job.id, refresh=True)
    assert st.id == job.id and st.state in (JobState.PENDING, JobState.RUNNING,
                                            JobState.COMPLETED)
    await fed.wait(job.id, timeout=300)
    assert job.id in [j.id for j in fed.jobs(site=site)]


async def test_bad_input_is_specific(fed):
    with pytest.raises(BadInput, match="unknown site 'nowhere'"):
        await fed.submit(JobSpec(command="true"), "nowhere")
    odd = JobSpec(command="true", constraints={"features": ["nonesuch"]})
    with pytest.raises(BadInput, match="site alpha cannot run this job: .*nonesuch"):
        await fed.submit(odd, "alpha")  # the needs check names it before sbatch runs
    with pytest.raises(BadInput, match="refused"):  # forced, sbatch rejects it
        await fed.submit(odd, "alpha", force=True)
    with pytest.raises(BadInput):
        fed.job("alpha:999999999")


async def test_unreachable_site_is_a_site_error(tb, tmp_path):
    cfg = tb.config
    site = cfg.sites[0].model_copy(update={"name": "ghost"})
    site.transport = site.transport.model_copy(update={"host": "10.213.99.2",
                                                       "connect_timeout_s": 1.0})
    cfg.sites.append(site)
    f = Federation(cfg, store=Store(tmp_path / "s.sqlite"))
    try:
        snap = await f.snapshot("ghost")
        assert not snap.reachable and snap.error
        with pytest.raises(SiteError):
            await f.submit(JobSpec(command="true"), "ghost")
    finally:
        await f.close()


async def test_event_subscription_async_iterator(fed):
    seen = []

    async def follow():
        async for ev in fed.events():
            if ev.kind == "job.state":
                seen.append(ev.data.get("state"))
                if ev.data.get("state") == "COMPLETED":
                    return
    task = asyncio.ensure_future(follow())
    job = await fed.submit(JobSpec(command="true"), "alpha")
    await asyncio.wait_for(task, 300)
    assert seen == ["PENDING", "RUNNING", "COMPLETED"]
    assert (await fed.status(job.id)).state == JobState.COMPLETED


async def test_a_cpu_job_waits_behind_gpu_jobs_on_idle_cpus_and_placement_says_so(fed):
    """Real Slurm on gamma (2 nodes, 32 CPUs and 2 GPUs each): four 8-CPU GPU jobs hold
    every GPU, two more wait for one. Half the CPUs are idle, yet a 1-CPU job asking 10
    minutes starts only after both waiting GPU jobs: Slurm's backfill keeps their reserved
    nodes whole. The placement predicts a wait there, not an immediate start."""
    def gpu(name: str) -> JobSpec:
        return JobSpec(name=name, script="sleep 15\n",
                       resources=Resources(cpus_per_task=8, gpus_per_node=1, walltime_s=120))
    jobs = []
    try:
        for i in range(4):
            jobs.append(await fed.submit(gpu(f"gpu-run-{i}"), "gamma"))
        for j in jobs:
            await fed.wait(j.id, until=[JobState.RUNNING], timeout=120)
        waiting = [await fed.submit(gpu(f"gpu-wait-{i}"), "gamma") for i in range(2)]
        jobs += waiting
        cpu = JobSpec(name="cpu-behind", script="true\n",
                      resources=Resources(cpus_per_task=1, walltime_s=600))
        placed = await fed.place(cpu, sites=["gamma"], max_age_s=0)
        v = placed.verdict("gamma")
        assert v is not None and v.raw_start is not None
        assert (v.raw_start - placed.now).total_seconds() >= 5, placed.explain()
        probe = await fed.submit(cpu, "gamma")
        jobs.append(probe)
        done = await fed.wait(probe.id, timeout=300)
        ahead = [await fed.wait(j.id, timeout=300) for j in waiting]
        assert done.started_at is not None and all(j.started_at for j in ahead)
        # not before them: at the earliest in the pass that starts the last of them (the
        # wrappers' own start stamps within one pass fall in any order, milliseconds apart)
        last = max(j.started_at for j in ahead)
        assert done.started_at >= last - timedelta(seconds=1), (done.started_at, last)
    finally:
        for j in jobs:
            await fed.cancel(j.id)
