"""`allowed_sites` and `allowed_partitions` hold for every submit, an explicit site included.

Attack reproduced: a submit naming its site sent a partition outside the site's
`allowed_partitions` to sbatch (only placement, for "auto", looked at the policy), and a
job naming no partition ran in the scheduler's default one, allowed or not.
"""

from __future__ import annotations

import pytest

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, JobSpec
from diamond_jupyter.store import Store

pytestmark = pytest.mark.testbed


def restricted(tb, **alpha):
    cfg = tb.config
    sites = [s.model_copy(update=alpha) if s.name == "alpha" else s for s in cfg.sites]
    return cfg.model_copy(update={"sites": sites})


@pytest.fixture
async def fed(tb, tmp_path):
    f = Federation(restricted(tb, allowed_partitions=["batch"], default_partition="debug"),
                   store=Store(tmp_path / "store.sqlite"), poll_interval_s=30, min_poll_s=0.5)
    await f.start()
    yield f
    await f.close()


async def test_an_explicit_site_gets_no_disallowed_partition(fed):
    with pytest.raises(BadInput) as e:
        await fed.submit(JobSpec(command="true", queue="debug"), "alpha")
    assert str(e.value) == "partition 'debug' is not allowed on site 'alpha' (allowed: batch)"
    assert fed.jobs() == []  # refused before anything was recorded or sent
    with pytest.raises(BadInput, match="partition 'debug' is not allowed on site 'alpha'"):
        await fed.plan_submit(JobSpec(command="true", queue="debug"), "alpha")  # the agent


async def test_no_partition_named_means_an_allowed_one(fed):
    job = await fed.submit(JobSpec(command="true"), "alpha")  # site default "debug": refused
    assert job.spec.queue == "batch"
    seen = await fed.site("alpha").statuses([job.native_id])
    assert [s.partition for s in seen] in (["batch"], [])  # [] : already gone from squeue
    await fed.wait(job.id, timeout=120)


async def test_a_site_outside_allowed_sites_is_named(tb, tmp_path):
    f = Federation(tb.config_path, store=Store(tmp_path / "s.sqlite"), allowed_sites=["beta"])
    try:
        with pytest.raises(BadInput) as e:
            await f.submit(JobSpec(command="true"), "alpha")
        assert str(e.value) == "site 'alpha' is not allowed here (allowed: beta)"
        with pytest.raises(BadInput, match="unknown site 'nowhere'"):
            await f.submit(JobSpec(command="true"), "nowhere")
    finally:
        await f.close()
