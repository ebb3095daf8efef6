"""A job killed at its time limit is noticed just after the limit, not at the next
safety-net poll. Grid Engine kills a job past its `h_rt` with SIGKILL at once (queue_conf(5):
"aborted via the SIGKILL signal"; only `s_rt` warns first, with SIGUSR1), so the job's
wrapper writes no end line; the engine waited for its slow poll (minutes with an event
channel) to learn the job had ended. The monitor now polls a few times just after each
running job's limit (its start plus its walltime) until one finds it ended.

A real store and journal, and a real local Slurm site whose `squeue` prints the queue
written here (the monitor is the same for every scheduler); no test bed."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta, timezone

from local_slurm import LocalSlurmQueue

from diamond_jupyter.journal import Journal
from diamond_jupyter.model import Job, JobSpec, JobState, Resources
from diamond_jupyter.monitor import LIMIT_CHECKS_S
from diamond_jupyter.store import Store

SLOW = 3600.0  # the safety-net poll: never within a test


def _running(store: Store, native: str, started: datetime, walltime_s: int | None) -> Job:
    spec = JobSpec(name=f"j{native}", command="./run",
                   resources=Resources(walltime_s=walltime_s))
    store.upsert_job(Job(id=f"alpha:{native}", site="alpha", native_id=native,
                         name=spec.name, spec=spec, token=f"tok{native}aa"))
    store.apply_state(f"alpha:{native}", JobState.RUNNING, started_at=started)
    return store.get_job(f"alpha:{native}")


def _line(native: str, state: str) -> str:
    return (f"{native}|{state}|2026-01-01T00:00:01|2026-01-01T00:10:01|2026-01-01T00:00:00|"
            f"10:00|1|1|me|debug|N/A||None||j{native}\n")


async def test_the_next_poll_is_just_after_a_running_jobs_time_limit(tmp_path):
    queue = LocalSlurmQueue(tmp_path)
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {"alpha": queue.site}, poll_interval_s=SLOW, min_poll_s=SLOW)
    mon = journal.monitors["alpha"]
    try:
        now = time.time()
        start = datetime.fromtimestamp(now - 100, timezone.utc)
        near = _running(store, "7", start, walltime_s=130)  # its limit is 30 s from now
        later = _running(store, "8", start, walltime_s=400)
        unlimited = _running(store, "9", start, walltime_s=None)
        for job in (near, later, unlimited):
            mon.tracked[job.token or job.id] = job.native_id or ""
        mon.last_poll_at = now
        first = 30 + LIMIT_CHECKS_S[0]
        assert abs(mon.until_limit_check(now) - first) < 0.01
        # once a poll has started after a check, the next check comes
        mon.last_poll_at = now + first + 0.01
        assert abs(mon.until_limit_check(now) - (30 + LIMIT_CHECKS_S[1])) < 0.01
        # after the last check, only the job whose limit is later calls for a poll
        mon.last_poll_at = now + 30 + LIMIT_CHECKS_S[-1] + 0.01
        assert abs(mon.until_limit_check(now) - (300 + LIMIT_CHECKS_S[0])) < 0.01
        store.apply_state(later.id, JobState.COMPLETED, exit_code=0)
        assert mon.until_limit_check(now) is None  # nothing running with a limit ahead
    finally:
        await journal.stop()


async def test_a_job_killed_at_its_limit_is_noticed_without_the_slow_poll(tmp_path):
    queue = LocalSlurmQueue(tmp_path)
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {"alpha": queue.site}, poll_interval_s=SLOW, min_poll_s=SLOW)
    mon = journal.monitors["alpha"]
    try:
        # its limit passed a moment ago: the scheduler killed it (no wrapper line)
        started = datetime.now(timezone.utc) - timedelta(seconds=60 + LIMIT_CHECKS_S[0])
        job = _running(store, "41", started, walltime_s=60)
        queue.queue.write_text(_line("41", "TIMEOUT"))
        mon.last_poll_at = time.time()  # the last poll was just now
        mon.track(job)

        async def ended() -> None:
            while not store.get_job(job.id).state.terminal:
                await asyncio.sleep(0.05)
        await asyncio.wait_for(ended(), 20)  # a hang guard: the slow poll is an hour
        assert store.get_job(job.id).state == JobState.TIMEOUT
        assert mon.polls == 1
    finally:
        await journal.stop()
