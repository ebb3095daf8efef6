"""`Federation.ended_in_view` matches a view's array task records to an ended array of the
store's by the array's id (the site dialect's `array_of`): Slurm's `123_7`, `123_[8-100]`,
Grid Engine's `9.3`, `9.4-100:1`. A task that started after the array ended (the id reused
by another array), a plain job of the same number on another scheduler's form, and the
records of an array still running are not named."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import Job, JobState, JobStatus, SiteSnapshot
from diamond_jupyter.store import Store

T0 = datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc)


def _fed(tmp_path, scheduler: str) -> Federation:
    return Federation(FederationConfig(sites=[SiteConfig(
        name="alpha", scheduler=scheduler, transport=TransportConfig(kind="local"))]),
        store=Store(tmp_path / "s.sqlite3"))


def _running(nid: str, start: datetime) -> JobStatus:
    return JobStatus(native_id=nid, state=JobState.RUNNING, started_at=start)


@pytest.mark.parametrize("scheduler,array,tasks,other", [
    ("slurm", "123", ["123_7", "123_[8-100]"], "124_3"),
    ("sge", "9", ["9.3", "9.4-100:1"], "10.2"),
])
async def test_an_ended_arrays_task_records_are_known_ended(tmp_path, scheduler, array,
                                                            tasks, other):
    fed = _fed(tmp_path, scheduler)
    try:
        end = T0 + timedelta(hours=1)
        fed.store.upsert_job(Job(id=f"alpha:{array}", site="alpha", native_id=array,
                                 state=JobState.COMPLETED, started_at=T0, ended_at=end))
        fed.store.upsert_job(Job(id=f"alpha:{other.split('_')[0].split('.')[0]}",
                                 site="alpha", native_id=other.split("_")[0].split(".")[0],
                                 state=JobState.RUNNING, started_at=T0))
        later = T0 + timedelta(minutes=40)  # a task started well after the array's first
        view = SiteSnapshot(site="alpha", taken_at=end + timedelta(seconds=5), jobs=[
            _running(tasks[0], later), _running(tasks[1], T0), _running(other, T0)])
        assert fed.ended_in_view({"alpha": view}) == {"alpha": set(tasks)}
        # the array's id reused by another array that started after this one ended
        reused = view.model_copy(update={"jobs": [
            _running(tasks[0], end + timedelta(minutes=5))]})
        assert fed.ended_in_view({"alpha": reused}) == {}
        # a view taken before the end: nothing is known ended yet
        before = view.model_copy(update={"taken_at": end - timedelta(seconds=1)})
        assert fed.ended_in_view({"alpha": before}) == {}
    finally:
        await fed.close()


async def test_a_plain_jobs_id_is_not_read_as_another_schedulers_array(tmp_path):
    """On Grid Engine, `123_7` is no task of array 123 (that is Slurm's form): not named."""
    fed = _fed(tmp_path, "sge")
    try:
        fed.store.upsert_job(Job(id="alpha:123", site="alpha", native_id="123",
                                 state=JobState.COMPLETED, started_at=T0,
                                 ended_at=T0 + timedelta(hours=1)))
        view = SiteSnapshot(site="alpha", taken_at=T0 + timedelta(hours=2), jobs=[
            _running("123_7", T0 + timedelta(minutes=3)), _running("123", T0)])
        assert fed.ended_in_view({"alpha": view}) == {"alpha": {"123"}}
    finally:
        await fed.close()
