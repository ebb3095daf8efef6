"""The submit path on the real test bed: the script's upload overlaps the durable write of
the submit intent, and the submit command runs only once that write is done."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec, JobState
from diamond_jupyter.store import Store, StoreError
from diamond_jupyter.testbed.clusters import HOME, base_dir, cluster
from diamond_jupyter.testbed.configs import cluster_dir
from diamond_jupyter.testbed.host import _ctl

pytestmark = pytest.mark.testbed


@pytest.fixture
async def fed(tb, tmp_path):
    f = Federation(tb.config_path, store=Store(tmp_path / "store.sqlite"), min_poll_s=0.5)
    yield f
    await f.close()


def host_path(site: str, remote: str) -> Path:
    """Where a path in the test user's home on `site` lives on this machine."""
    rel = remote[2:] if remote.startswith("~/") else str(Path(remote).relative_to(HOME))
    return base_dir() / "clusters" / site / "home" / rel


def queued(site: str, name: str) -> list[str]:
    out = _ctl(base_dir(), cluster(site), "squeue", "-h", "-t", "all", "-n", name, "-o", "%i")
    return out.stdout.split()


async def test_script_uploaded_during_the_intent_write_submitted_after_it(fed, monkeypatch):
    site = fed.site("alpha")
    name = f"overlap-{uuid.uuid4().hex[:8]}"
    seen: dict[str, object] = {}
    real = fed.store.record_intent

    def slow_intent(site_name, token, spec, *a, **kw):
        """Runs while the submit is in flight: the script arrives, no job exists yet."""
        script = host_path("alpha", site.job_dir(token) + "/job.sh")
        deadline = time.monotonic() + 30
        while not script.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        seen["uploaded_first"] = script.exists()
        seen["queued_before_intent"] = queued("alpha", spec.name)
        return real(site_name, token, spec, *a, **kw)

    monkeypatch.setattr(fed.store, "record_intent", slow_intent)
    job = await fed.submit(JobSpec(command="true", name=name), "alpha")
    assert seen == {"uploaded_first": True, "queued_before_intent": []}
    assert queued("alpha", fed.job(job.id).name or "") == [job.native_id]
    assert not site._uploaded
    kinds = [e.kind for e in fed.store.events_since(0, job_id=job.id)]
    assert kinds.index("job.submitting") < kinds.index("job.submitted")
    done = await fed.wait(job.id, timeout=60)
    assert done.state == JobState.COMPLETED


async def test_intent_that_cannot_be_written_submits_nothing(fed, monkeypatch):
    site = fed.site("beta")
    name = f"nointent-{uuid.uuid4().hex[:8]}"

    def broken(*a, **kw):
        raise StoreError("disk full")

    monkeypatch.setattr(fed.store, "record_intent", broken)
    with pytest.raises(StoreError):
        await fed.submit(JobSpec(command="true", name=name), "beta")
    assert not site._uploaded
    jobs = _ctl(base_dir(), cluster("beta"), "squeue", "-h", "-t", "all", "-o", "%j").stdout
    assert name not in jobs
    comp = cluster_dir(base_dir(), cluster("beta")) / "jobcomp.txt"
    assert name not in (comp.read_text() if comp.exists() else "")


async def test_intent_left_by_a_dropped_submit_is_bound_while_the_engine_runs(tb, tmp_path):
    """sbatch ran but its answer never came back (the connection dropped): the intent stays
    unbound. A running engine finds the job by its token once the intent is older than the
    grace period, without waiting for a restart."""
    fed = Federation(tb.config_path, store=Store(tmp_path / "store.sqlite"), min_poll_s=0.5,
                     intent_grace_s=5.0, intent_sweep_s=0.2)
    await fed.start()
    try:
        site = fed.site("gamma")
        token = uuid.uuid4().hex[:12]
        prepared = site.prepare(JobSpec(command="true", name="dropped"), token)
        fed.store.record_intent("gamma", token, prepared)
        sub = await site.submit(prepared, token)  # ... and the engine never heard back
        job = await fed.wait(f"gamma:pending-{token}", timeout=60,
                             until=lambda j: j.native_id is not None)
        assert job.native_id == sub.native_id and job.id == f"gamma:{sub.native_id}"
        assert (await fed.wait(job.id, timeout=60)).state == JobState.COMPLETED
    finally:
        await fed.close()
