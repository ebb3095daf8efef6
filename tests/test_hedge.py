"""Hedged submission on the real test bed: copies on two clusters, the first to start runs
the payload, exactly once; the other copy is cancelled within a second of that start."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, Constraints, JobSpec, JobState, Resources
from diamond_jupyter.store import Store

SITES = ["alpha", "gamma"]


def _fed(tb, store: Path, **kw) -> Federation:
    return Federation(tb.config_path, store=Store(store), poll_interval_s=30, min_poll_s=0.5,
                      allowed_sites=SITES, **kw)


@pytest.fixture
def shared(tmp_path) -> Path:
    """A directory every site's jobs can append to (/tmp is the same on every host)."""
    d = Path("/tmp") / f"dmd-hedge-{os.getpid()}-{tmp_path.name}"
    d.mkdir(mode=0o777, exist_ok=True)
    d.chmod(0o777)
    return d


def _payload(log: Path) -> JobSpec:
    return Federation.parse("#!/bin/bash\n#SBATCH --time=5\n#SBATCH --ntasks=1\n"
                            f"echo ran-$SLURM_JOB_ID >> {log}\nsleep 1\n")


def _event_at(fed: Federation, job_id: str, state: str):
    evs = [e for e in fed.store.events_since(0, kinds=["job.state"], job_id=job_id)
           if e.data.get("state") == state]
    assert evs, f"no {state} event for {job_id}"
    return evs[0].at


async def test_blocked_site_loses_and_is_cancelled_within_a_second(tb, tmp_path, shared):
    log = shared / "payload.log"
    async with _fed(tb, tmp_path / "store.sqlite") as fed:
        # gamma's two nodes taken whole by one job: its copy waits in the queue
        filler = await fed.submit(JobSpec(script="sleep 600\n", resources=Resources(
            nodes=2, walltime_s=900), constraints=Constraints(exclusive=True)), "gamma")
        try:
            await fed.wait(filler.id, until=[JobState.RUNNING], timeout=120)
            first = await fed.submit(_payload(log), "auto", hedge=2)
            group = first.hedge_group
            assert group
            copies = fed.hedge(group).copies
            assert sorted(j.site for j in copies) == SITES
            winner = await fed.hedge_winner(group, timeout=180)
            assert winner.site == "alpha"
            done = await fed.wait(winner.id, timeout=180)
            assert done.state == JobState.COMPLETED
            loser = next(j for j in fed.hedge(group).copies if j.id != winner.id)
            assert loser.site == "gamma" and loser.state == JobState.CANCELLED
            assert loser.started_at is None and "started first" in (loser.reason or "")
            gap = (_event_at(fed, loser.id, "CANCELLED")
                   - _event_at(fed, winner.id, "RUNNING")).total_seconds()
            assert 0 <= gap < 1.0, gap
            print(f"hedge: loser CANCELLED {gap:.3f} s after the winner's RUNNING event")
            assert log.read_text().splitlines() == [f"ran-{winner.native_id}"]
            kinds = {e.kind for e in fed.store.events_since(0, kinds=["hedge.*"])}
            assert {"hedge.submitting", "hedge.submitted", "hedge.decided", "hedge.go",
                    "hedge.cancelled"} <= kinds
            listed = {j.id: j.hedge_group for j in fed.jobs(limit=None)}
            assert listed[winner.id] == listed[loser.id] == group
        finally:
            await fed.cancel(filler.id)


async def _scheduler_says_running(fed: Federation, jobs) -> None:
    """Until the scheduler reports every job running (the engine is not listening)."""
    while True:
        states = {}
        for j in jobs:
            for st in await fed.sites[j.site].statuses([j.native_id]):
                states[j.id] = st.state
        if all(states.get(j.id) == JobState.RUNNING for j in jobs):
            return
        await asyncio.sleep(0.2)


async def test_both_copies_start_at_once_and_only_one_runs_the_payload(tb, tmp_path, shared):
    """Both copies start while no engine listens (as after the CLI has exited); then two
    engines sharing the store follow them at once: each sees both starts, one copy wins."""
    log = shared / "payload.log"
    store = tmp_path / "store.sqlite"
    async with _fed(tb, store) as fed:
        first = await fed.submit(_payload(log), "auto", hedge=2, hold=True)
        group = first.hedge_group
        copies = fed.hedge(group).copies
        assert len(copies) == 2 and all(j.native_id for j in copies)
    quiet = _fed(tb, store)  # never started: it releases and asks, it follows nothing
    try:
        await asyncio.gather(*(quiet.sites[j.site].release([j.native_id]) for j in copies))
        await asyncio.wait_for(_scheduler_says_running(quiet, copies), 120)
    finally:
        await quiet.close()
    assert not log.exists()  # both started, both wait for a decision
    fed_a, fed_b = _fed(tb, store), _fed(tb, store)
    await asyncio.gather(fed_a.start(), fed_b.start())
    try:
        winner = await fed_a.hedge_winner(group, timeout=180)
        done = await fed_a.wait(winner.id, timeout=180)
        assert done.state == JobState.COMPLETED
        loser = next(j for j in fed_a.hedge(group).copies if j.id != winner.id)
        assert loser.state == JobState.CANCELLED and loser.started_at is not None
        loser_end = await fed_a.status(loser.id, refresh=True)
        assert loser_end.state == JobState.CANCELLED
        assert log.read_text().splitlines() == [f"ran-{winner.native_id}"]
        decided = fed_a.store.events_since(0, kinds=["hedge.decided"])
        assert len(decided) == 1  # two engines, two starts each: one decision
    finally:
        await asyncio.gather(fed_a.close(), fed_b.close())


async def test_hedge_needs_two_sites_that_allow_it(tb, tmp_path):
    cfg = tb.config.model_copy(deep=True)
    for s in cfg.sites:
        s.hedge = s.name != "gamma"
    async with Federation(cfg.model_copy(update={"store": str(tmp_path / "s.sqlite")}),
                          allowed_sites=SITES) as fed:
        with pytest.raises(BadInput, match=r"only 1 site.*skipped gamma: .*hedge: false"):
            await fed.submit(JobSpec(script="true\n"), "auto", hedge=2)
        with pytest.raises(BadInput, match="needs site 'auto'"):
            await fed.submit(JobSpec(script="true\n"), "alpha", hedge=2)
        assert fed.jobs() == []  # nothing was submitted
