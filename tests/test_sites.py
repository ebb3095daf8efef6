"""Site details on the real test bed: command paths, preamble, capability caching."""

from __future__ import annotations

import pytest

from diamond_jupyter.config import FederationConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec, JobState
from diamond_jupyter.store import Store


@pytest.fixture
async def custom_fed(tb, tmp_path):
    """alpha with a wrapped sbatch (a configured command path) and a preamble."""
    cfg = tb.config
    alpha = cfg.site("alpha").model_copy(update={
        "commands": {"sbatch": "bin/logged-sbatch"},
        "preamble": "export FROM_PREAMBLE=yes",
    })
    fed = Federation(FederationConfig(sites=[alpha]), store=Store(tmp_path / "s.sqlite"),
                     min_poll_s=0.5)
    site = fed.site("alpha")
    wrapper = '#!/bin/sh\necho "$@" >> "$HOME/sbatch-calls.log"\nexec sbatch "$@"\n'
    await site.transport.run(["mkdir", "-p", "bin"], check=True)
    await site.transport.put_bytes(wrapper.encode(), "bin/logged-sbatch", mode=0o755)
    await site.transport.run(["rm", "-f", "sbatch-calls.log"], check=True)
    await fed.start()
    yield fed
    await fed.close()


async def test_command_paths_and_preamble(custom_fed):
    job = await custom_fed.submit(JobSpec(script='echo "preamble=$FROM_PREAMBLE"\n'), "alpha")
    done = await custom_fed.wait(job.id, timeout=300)
    assert done.state == JobState.COMPLETED
    # sbatch exports the submit environment: the preamble ran before the submit command
    assert (await custom_fed.logs(job.id))["stdout"].strip() == "preamble=yes"
    calls = await custom_fed.site("alpha").transport.get_bytes("sbatch-calls.log")
    assert b"--parsable" in calls and job.native_id  # the configured path was used


async def test_capabilities_cached_queue_fresh(custom_fed):
    site = custom_fed.site("alpha")
    before = site.scheduler_commands
    first = await site.snapshot(max_age_s=0)
    # partitions, nodes, queue, QOS, the jobs' QOS and TRES, reservations, licenses, the
    # user's associations, their TRES-minutes used (sshare), the QOS's (assoc_mgr), the
    # config's node timeouts, the user's priority factors and the waiting jobs' priorities
    # (sprio): one call
    assert site.scheduler_commands - before == 13
    job = await custom_fed.submit(JobSpec(script="sleep 30\n"), "alpha", hold=True)
    mid = site.scheduler_commands
    second = await site.snapshot(max_age_s=0)
    # only the queue (and its jobs' QOS, TRES and licenses) and the licenses free within
    # the TTL: the test bed's Slurm 22.05 runs priority/basic (no PriorityType set), so the
    # cached config leaves sprio out
    assert first.priority is not None and first.priority.plugin == "priority/basic"
    assert site.scheduler_commands - mid == 3
    assert second.partitions == first.partitions and len(second.nodes) == len(first.nodes)
    assert job.native_id in {j.native_id for j in second.jobs}
    await custom_fed.cancel(job.id)


def test_scheduler_records_are_told_apart_when_a_native_id_is_reused():
    """Which record of a native id is which job: the token in the comment (or in the
    scheduler-side name) decides; an untagged record (accounting) is the newest job's."""
    from diamond_jupyter.model import Job, JobStatus
    from diamond_jupyter.sites import _same_run, carries_token, owns

    old = Job(id="alpha:7@2025-01-01T12:00:00Z", site="alpha", native_id="7", token="aaa",
              reused_by="alpha:7")
    new = Job(id="alpha:7", site="alpha", native_id="7", token="bbb")
    queued = JobStatus(native_id="7", state=JobState.RUNNING, name="sim", comment="diamond:bbb")
    named = JobStatus(native_id="7", state=JobState.RUNNING, name="sim.dmd-aaa")
    acct = JobStatus(native_id="7", state=JobState.COMPLETED, name="sim", exit_code=0)
    assert owns(queued, new) and not owns(queued, old) and carries_token(queued, new)
    assert owns(named, old) and not owns(named, new)
    assert owns(acct, new) and not owns(acct, old) and not carries_token(acct, new)
    t0 = JobStatus(native_id="7", state=JobState.COMPLETED, name="sim",
                   started_at="2025-01-01T12:00:00Z")
    t1 = t0.model_copy(update={"started_at": t0.started_at.replace(hour=13)})
    assert _same_run(t0, acct) and _same_run(t0, t0) and not _same_run(t0, t1)
