"""What a site's monitor keeps in memory is bounded by the jobs it follows: the exit code of
a failed array task (kept for an array whose scheduler loses it) is dropped once the array's
outcome is applied, or once the job is no longer in the store. A real store, a real local
Slurm site whose `squeue` prints the queue written here; no test bed."""

from __future__ import annotations

import sqlite3

from local_slurm import LocalSlurmQueue

from diamond_jupyter.journal import Journal
from diamond_jupyter.model import ArraySpec, Job, JobSpec, JobState, utcnow
from diamond_jupyter.store import Store
from diamond_jupyter.wrapper import EventLine


def _array_job(store: Store, native: str) -> Job:
    spec = JobSpec(name=f"arr{native}", command="true", array=ArraySpec(expression="1-2"))
    store.upsert_job(Job(id=f"alpha:{native}", site="alpha", native_id=native,
                         name=spec.name, spec=spec, token=f"tok{native}aa"))
    store.apply_state(f"alpha:{native}", JobState.RUNNING)
    return store.get_job(f"alpha:{native}")


def _task_failed(journal: Journal, job: Job, rc: int) -> None:
    """One of the array's tasks ended with `rc`, its wrapper said (a verified line, under the
    array's id as Slurm's wrapper writes it)."""
    mon = journal.monitors["alpha"]
    mon._apply_line(job, EventLine(at=utcnow(), kind="end",
                                   token=job.token or "", native_id=job.native_id or "",
                                   rc=rc, body="", mac=""))


def _line(task_id: str, state: str) -> str:
    return (f"{task_id}|{state}|2026-01-01T00:00:01|2026-01-01T00:00:09|2026-01-01T00:00:00|"
            f"10:00|1|1|me|debug|N/A||None||arr\n")


async def test_a_failed_array_tasks_exit_code_is_dropped_once_the_array_ended(tmp_path):
    queue = LocalSlurmQueue(tmp_path)
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {"alpha": queue.site}, poll_interval_s=3600, min_poll_s=3600)
    mon = journal.monitors["alpha"]
    try:
        lines = ""
        for n in range(100, 140):  # forty arrays, each with a failed task, one after another
            job = _array_job(store, str(n))
            mon.track(job)
            _task_failed(journal, job, 3)
            assert mon._task_failures[job.id] == 3
            lines += _line(f"{n}_1", "FAILED") + _line(f"{n}_2", "COMPLETED")
            queue.queue.write_text(lines)
            assert await mon.poll_once() == 1
            ended = store.get_job(job.id)
            # the kept exit code was used (the queue gave none) ...
            assert ended.state == JobState.FAILED and ended.exit_code == 3, ended
            # ... and then forgotten: nothing grows with the arrays that ended
            assert mon._task_failures == {}
            assert mon.tracked == {}
    finally:
        await journal.stop()


async def test_a_failed_array_tasks_exit_code_is_dropped_when_its_job_leaves_the_store(
        tmp_path):
    queue = LocalSlurmQueue(tmp_path)
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {"alpha": queue.site}, poll_interval_s=3600, min_poll_s=3600)
    mon = journal.monitors["alpha"]
    try:
        kept = _array_job(store, "200")
        gone = _array_job(store, "201")
        for job in (kept, gone):
            _task_failed(journal, job, 7)
        assert set(mon._task_failures) == {kept.id, gone.id}
        with sqlite3.connect(tmp_path / "store.sqlite") as db:  # e.g. a store cleaned by hand
            db.execute("DELETE FROM jobs WHERE id = ?", (gone.id,))
        mon._drop_finished()
        assert mon._task_failures == {kept.id: 7}  # the running array's is kept
    finally:
        await journal.stop()


async def test_an_ended_jobs_secret_and_early_lines_are_not_kept(tmp_path):
    """Every job submitted left its event secret in the monitor until the engine stopped."""
    from diamond_jupyter.model import JobSpec as Spec

    queue = LocalSlurmQueue(tmp_path)
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {"alpha": queue.site}, poll_interval_s=3600, min_poll_s=3600)
    mon = journal.monitors["alpha"]
    try:
        for n in range(30):
            token = f"{n:012x}"
            job = store.record_intent("alpha", token, Spec(name="j", command="true"))
            mon.expect(token, "ab" * 32)
            mon._early[token] = []
            mon._drop_finished()
            assert token in mon._secrets  # still needed: its lines are checked with it
            store.bind_native_id(token, str(600 + n))
            store.apply_state(job.id, JobState.COMPLETED)
            mon._drop_finished()
            assert mon._secrets == {} and mon._early == {}
    finally:
        await journal.stop()
