"""A task that ended and left the queue between two polls while its array runs on: where a
job waits for that task (`afterok:500_2`), the poll asks the site's accounting for the
array in the same query that asks about jobs gone from the queue (Slurm's `sacct -j 500`
lists every task), and the task's ended state from there decides the dependency. Never
marked ended or lost unasked: a task accounting does not list keeps the last state seen,
and a vanished task no job waits for asks nothing. A real `Site` on the local transport
with a scripted squeue and sacct, a real store and journal; no test bed."""

from __future__ import annotations

from pathlib import Path

from local_slurm import LocalSlurmQueue, alpha_job

from diamond_jupyter.dialects.slurm_commands import array_of
from diamond_jupyter.job_dependencies import awaited_tasks
from diamond_jupyter.journal import Journal
from diamond_jupyter.model import (
    Dependency,
    JobState,
    JobStatus,
)
from diamond_jupyter.monitor import SiteMonitor
from diamond_jupyter.sites import ended_tasks
from diamond_jupyter.store import Store

C, F, R, P = JobState.COMPLETED, JobState.FAILED, JobState.RUNNING, JobState.PENDING
T = "2026-01-01T00:00:01|2026-01-01T00:00:09|n1|arr"


class Bed:
    """Array 500 (tasks 1-4) last seen with tasks 1 and 2 running, 3 and 4 waiting; the
    queue now lists task 1 running and 3-4 waiting: task 2 left it unseen ended. Job 501
    waits for `waits_on`. sacct prints `acct` and notes each call."""

    def __init__(self, tmp: Path, *, waits_on: str, acct: str) -> None:
        self.queue = LocalSlurmQueue(tmp, "alpha")
        self.calls = tmp / "sacct-calls"
        self.calls.touch()
        (tmp / "acct.txt").write_text(acct)
        sacct = self.queue.bin_dir / "sacct"
        sacct.write_text(f'#!/bin/sh\necho "$*" >> {self.calls}\ncat {tmp / "acct.txt"}\n')
        self.store = Store(tmp / "store.sqlite3")
        self.journal = Journal(self.store, {})
        self.store.upsert_job(alpha_job("500", R, token="arr00001", array="1-4"))
        self.store.record_task_states("alpha:500", {"1": R, "2": R, "3": P, "4": P})
        self.store.upsert_job(alpha_job(
            "501", deps=[Dependency(kind="afterok", job_ids=[waits_on])], later_s=5,
            token="down0001"))
        self.queue.lists([
            ("500_1", "RUNNING", "None", "arr00001", "arr"),
            ("500_[3-4]", "PENDING", "Resources", "arr00001", "arr"),
            ("501", "PENDING", "Dependency", "down0001", "j501")])
        self.monitor = SiteMonitor(self.journal, self.queue.site, 60.0, 1.0)
        for token, native in (("arr00001", "500"), ("down0001", "501")):
            self.monitor.tracked[token] = native

    def events(self) -> list[tuple[str, str, str, str]]:
        return [(e.job_id, e.data["outcome"], e.data["dependency"]["task"],
                 e.data["dependency"]["task_state"])
                for e in self.store.events_since(0, kinds=["job.dependency"])]


async def test_a_waited_for_task_that_vanished_is_asked_of_accounting(tmp_path) -> None:
    bed = Bed(tmp_path, waits_on="500_2", acct=f"500_1|RUNNING|0:0|{T}|500_1\n"
                                              f"500_2|FAILED|1:0|{T}|500_2\n")
    await bed.monitor.poll_once()
    assert bed.store.get_job("alpha:500").tasks == {"1": R, "2": F, "3": P, "4": P}
    assert bed.store.get_job("alpha:500").state == R  # the array runs on
    assert bed.events() == [("alpha:501", "never", "2", "FAILED")]
    assert bed.calls.read_text().split("-j")[-1].split() == ["500"]  # the array, once


async def test_a_task_accounting_does_not_list_keeps_its_last_state(tmp_path,
                                                                   monkeypatch) -> None:
    """Asked again only once TASKS_REASKED_AFTER_S passed (or another task vanished)."""
    from diamond_jupyter import sites

    bed = Bed(tmp_path, waits_on="500_2", acct="")
    await bed.monitor.poll_once()
    await bed.monitor.poll_once()
    assert bed.store.get_job("alpha:500").tasks["2"] == R  # not ended, not lost: unknown
    assert bed.events() == []
    assert bed.calls.read_text().count("\n") == 1  # asked once, with nothing to tell
    monkeypatch.setattr(sites, "TASKS_REASKED_AFTER_S", 0.0)
    (tmp_path / "acct.txt").write_text(f"500_2|COMPLETED|0:0|{T}|500_2\n")
    await bed.monitor.poll_once()
    assert bed.calls.read_text().count("\n") == 2
    assert bed.store.get_job("alpha:500").tasks["2"] == C
    assert bed.events() == [("alpha:501", "satisfied", "2", "COMPLETED")]


async def test_a_vanished_task_no_job_waits_for_asks_nothing(tmp_path) -> None:
    bed = Bed(tmp_path, waits_on="500_1", acct=f"500_2|FAILED|1:0|{T}|500_2\n")
    await bed.monitor.poll_once()
    assert bed.calls.read_text() == ""
    assert bed.store.get_job("alpha:500").tasks["2"] == R


def test_the_awaited_tasks_are_named_by_array_and_index() -> None:
    one = alpha_job("501", deps=[Dependency(kind="afterok", job_ids=["500_2"])])
    pbs = alpha_job("502", deps=[Dependency(kind="afterok", job_ids=["77[3].pbs01"])])
    corr = alpha_job("503", array="1-3", deps=[Dependency(kind="afterok", job_ids=["600"],
                                                          per_task=True, scheduler="slurm")])
    plain = alpha_job("504", deps=[Dependency(kind="afterok", job_ids=["700"])])
    assert awaited_tasks("alpha", [one, pbs, corr, plain], None) == {
        "500": {"2"}, "77[].pbs01": {"3"}, "600": {"1", "2", "3"}}


def test_accountings_task_records_give_only_ended_states_of_vanished_tasks() -> None:
    records = [JobStatus(native_id="77[3].pbs01", state=C),
               JobStatus(native_id="77[4].pbs01", state=F),  # not waited for
               JobStatus(native_id="500_2", state=F), JobStatus(native_id="500_3", state=R),
               JobStatus(native_id="900[5]", state=JobState.UNKNOWN)]
    vanished = {"77[].pbs01": {"3"}, "500": {"2", "3"}, "900": {"5"}}
    assert ended_tasks(records, vanished, array_of) == {"77[].pbs01": {"3": C},
                                                        "500": {"2": F}}
