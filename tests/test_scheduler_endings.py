"""Endings the scheduler causes, as a user reads them, and what a cancel changes of them.

Slurm's NODE_FAIL, BOOT_FAIL and PREEMPTED (squeue's NF, BF, PR; slurmrestd's job_state)
are FAILED, saying why, with no exit code but a signal that killed the program (sacct's
0:0 or 1:0 is the scheduler's, no program's). Before, they read as FAILED with exit 0 or 1
and no reason. A job the user asked to cancel that the scheduler then reports ended by a
node failure (seen once in CI after `scancel` of a running job) is CANCELLED, the
scheduler's ending said beside it; one the scheduler records FAILED with its program's own
error code stays FAILED with that code, saying the cancel was not what it recorded. sacct's
header printed again mid-output (two runs joined, a wrapper without -n) is said in the site's
warnings and the records read; before, it failed the whole poll. A Flux job in CLEANUP
whose result flux prints has that result, its reason "ending (cleanup)"; before, it stayed
RUNNING, silently, for as long as its epilog ran.

A real `Site` and `Journal` (its monitor) on Slurm's dialect, its commands answered from
recorded outputs (no test bed)."""

from __future__ import annotations

import json
import logging
from datetime import timedelta

import pytest
from outputs_helpers import ended, flux, slurm
from test_poll_site_messages import _said, _site

from diamond_jupyter.journal import Journal
from diamond_jupyter.model import Event, Job, JobState, utcnow
from diamond_jupyter.store import Store

_TIMES = "2026-12-06T10:00:00|2026-12-06T10:30:00|c1|sim"


def sacct(jid: str, state: str, exit_code: str) -> str:
    return f"{jid}|{state}|{exit_code}|{_TIMES}|{jid}\n"


@pytest.mark.parametrize(("native", "exit_code", "expected"), [
    ("NODE_FAIL", "1:0", (None, "the node failed")),
    ("BOOT_FAIL", "0:0", (None, "the node failed to boot")),
    ("PREEMPTED", "0:0", (None, "preempted by the scheduler")),
    ("PREEMPTED", "0:15", (143, "preempted by the scheduler")),  # SIGTERM killed it
    ("FAILED", "1:0", (1, None)),  # the program's own failure: its code, as before
    # killed for its memory: said, and a real signal kept as the program's (SIGKILL)
    ("OUT_OF_MEMORY", "0:125", (None, "out of memory: the job used more than the memory "
                                      "it was given")),
    ("OUT_OF_MEMORY", "0:9", (137, "out of memory: the job used more than the memory "
                                   "it was given")),
    ("OOM", "0:0", (0, "out of memory: the job used more than the memory it was given")),
])
def test_sacct_scheduler_endings_say_why(native, exit_code, expected) -> None:
    [job] = slurm.parse_accounting(sacct("700", native, exit_code))
    assert (job.state, job.exit_code, job.reason) == (JobState.FAILED, *expected)


def test_squeue_short_endings_say_why() -> None:
    line = "|".join(["701", "{}", "2026-12-06T10:00:00", "2026-12-06T10:30:00",
                     "2026-12-06T09:00:00", "1:00:00", "1", "4", "me", "batch", "N/A", "c1",
                     "{}", "(null)", "sim"])
    got = [(j.state, j.reason) for st, why in [("NF", "None"), ("BF", "None"),
                                                 ("PR", "Prolog"), ("OOM", "None")]
           for j in slurm.parse_status(line.format(st, why) + "\n", [])]
    assert got == [(JobState.FAILED, "the node failed"),
                   (JobState.FAILED, "the node failed to boot"),
                   (JobState.FAILED, "preempted by the scheduler (Prolog)"),
                   (JobState.FAILED, "out of memory: the job used more than the memory it "
                                     "was given")]


def test_squeue_json_node_fail_has_no_made_up_exit_code() -> None:
    doc = json.dumps({"jobs": [{"job_id": 702, "job_state": ["NODE_FAIL"],
                                "exit_code": {"status": ["ERROR"], "return_code": 1}}]})
    assert ended(slurm.parse_status_json(doc)) == [("702", "FAILED", None, "the node failed")]


def test_a_flux_job_in_cleanup_takes_its_result_once_flux_prints_it() -> None:
    doc = json.dumps({"jobs": [
        {"id": 3101, "state": "CLEANUP", "result": "COMPLETED", "returncode": 0,
         "t_cleanup": 1_800_000_000},
        {"id": 3102, "state": "CLEANUP"}]})
    [done, unsure] = flux.parse_status(doc)
    assert (done.state, done.exit_code, done.reason, done.native_state) == (
        JobState.COMPLETED, 0, "ending (cleanup)", "CLEANUP:COMPLETED")
    assert done.ended_at is not None
    assert (unsure.state, unsure.reason) == (JobState.RUNNING, "ending (cleanup)")


async def test_a_sacct_header_again_mid_output_is_said_and_the_job_read(tmp_path, caplog):
    header = "JobID|State|ExitCode|Start|End|NodeList|JobName|JobID\n"
    site, _ = _site("slurm", {"squeue": "", "sacct": header + sacct("700", "COMPLETED", "0:0")
                              + header + sacct("701", "NODE_FAIL", "1:0")}, tmp_path)
    caplog.set_level(logging.WARNING)
    got = await site.statuses(["700", "701"])
    assert [(j.native_id, j.state, j.reason) for j in got] == [
        ("700", JobState.COMPLETED, None), ("701", JobState.FAILED, "the node failed")]
    said = _said(caplog)
    assert [s.split(" (got ")[0] for s in said] == [
        "wren: slurm: cannot parse sacct line 1: a header, no record",
        "wren: slurm: cannot parse sacct line 3: a header, no record"]


async def _poll_after(tmp_path, sacct_out: str, *, cancelled: bool) -> Job:
    """A running job followed by the monitor, gone from squeue, accounting `sacct_out`;
    `cancelled`: the user asked to cancel it before the poll."""
    site, _ = _site("slurm", {"squeue": "", "sacct": sacct_out}, tmp_path)
    store = Store(tmp_path / "store.sqlite")
    store.upsert_job(Job(id="wren:700", site="wren", native_id="700", name="sim",
                         submitted_at=utcnow() - timedelta(hours=1)))
    store.apply_state("wren:700", JobState.RUNNING)
    if cancelled:
        store.append_event(Event(kind="job.cancel-requested", job_id="wren:700", data={}))
    journal = Journal(store, {"wren": site}, poll_interval_s=3600, min_poll_s=3600)
    try:
        journal.monitors["wren"].track(store.get_job("wren:700"))
        assert await journal.monitors["wren"].poll_once() == 1
        return store.get_job("wren:700")
    finally:
        await journal.stop()


async def test_a_node_failure_after_the_users_cancel_is_cancelled_saying_both(tmp_path):
    job = await _poll_after(tmp_path, sacct("700", "NODE_FAIL", "1:0"), cancelled=True)
    assert (job.state, job.exit_code, job.reason) == (
        JobState.CANCELLED, None, "cancelled; the scheduler reports: the node failed")


async def test_a_node_failure_without_a_cancel_fails_saying_why(tmp_path):
    job = await _poll_after(tmp_path, sacct("700", "NODE_FAIL", "1:0"), cancelled=False)
    assert (job.state, job.exit_code, job.reason) == (JobState.FAILED, None, "the node failed")


async def test_a_failure_with_its_own_exit_code_after_a_cancel_stays_failed(tmp_path):
    """Its program's error code (it may have ended before the cancel reached it): the
    failure stands, and the cancel the scheduler did not record is said."""
    job = await _poll_after(tmp_path, sacct("700", "FAILED", "2:0"), cancelled=True)
    assert (job.state, job.exit_code, job.reason) == (
        JobState.FAILED, 2, "the scheduler recorded a failure (exit 2), not the cancel request")


async def test_a_signal_after_the_cancel_is_cancelled_as_before(tmp_path):
    job = await _poll_after(tmp_path, sacct("700", "FAILED", "0:15"), cancelled=True)
    assert (job.state, job.reason) == (JobState.CANCELLED, "cancelled (killed)")


def test_a_sacct_header_in_the_history_is_said_never_a_job() -> None:
    """Before, the history's header line was read as a job named `JobID`."""
    header = "JobID|Partition|Timelimit|Submit|Start|End|NCPUS|NNodes|State"
    record = ("800|batch|01:00:00|2026-12-06T09:00:00|2026-12-06T09:10:00|"
              "2026-12-06T09:40:00|4|1|COMPLETED")
    skipped: list[str] = []
    got = slurm.parse_history("\n".join([header, record, header]) + "\n", skipped)
    assert [j.native_id for j in got] == ["800"]
    assert [s.split(" (got ")[0] for s in skipped] == [
        "slurm: cannot parse sacct line 1: a header, no record",
        "slurm: cannot parse sacct line 3: a header, no record"]
