"""A running job the user cancels ends CANCELLED, whatever its wrapper's shell reports first.

Seen in whole-suite runs (session 38's CI, session 41's sidebar test): a `sleep 300` job on
alpha, cancelled while running, ended FAILED with exit 1. Slurm had recorded it CANCELLED
(at the cancel request, before any signal); the ending came from the job's own signed end
line. slurmstepd's SIGTERM reached the wrapper's shell as it forked the subshell that notes
the output lengths, `[ -e NOTE ] || ( ... )`: the subshell still ran the EXIT trap it
inherited, with its own status (1, from the `[ -e ]` that chose to run it), and wrote a
signed "end 1" before the shell's own "end 143". The monitor took the first end line as the
job's ending, and a job's first terminal state is final.

Seen with the wrapper of a real job script under bash 5.2, SIGCONT+SIGTERM sent to each
process of the job in turn at a random moment of its first 12 ms (as slurmstepd signals a
job's processes), its output note absent: "end 1" before "end 143" in 5 of 800 runs, each
written by a subshell (BASH_SUBSHELL 1, a pid not the shell's); none in 600 runs after.

Now (a) only the job's own shell writes its end line, and a signal between the wrapper's
traps no longer runs the EXIT trap with the last command's 0; (b) once a cancel was asked,
an end line is no ending the monitor takes: it asks the scheduler, which says whether the
cancel or the job's own end came first (a job that failed before the cancel reached it
still ends FAILED, with its own code).

Real bash runs the wrapper; the monitor is a real `Journal` on Slurm's dialect, its commands
answered from recorded outputs (no test bed)."""

from __future__ import annotations

import os
import signal
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
from test_poll_site_messages import _site, squeue_record

from diamond_jupyter.journal import Journal
from diamond_jupyter.model import Event, Job, JobState, utcnow
from diamond_jupyter.store import Store
from diamond_jupyter.wrapper import event_mac, parse_event_line, wrapper_prologue

TOKEN = "0a0b0c0d0e0f"
SECRET = "ab" * 32
_TIMES = "2026-12-06T10:00:00|2026-12-06T10:30:00|c1|sim"


def _sacct(state: str, exit_code: str) -> str:
    return f"700|{state}|{exit_code}|{_TIMES}|700\n"


def _end_line(rc: int) -> str:
    body = f"1800000000.5 end {TOKEN} 700 {rc}"
    return f"{body} {event_mac(SECRET, body)}"


async def _followed(tmp_path: Path, sacct_out: str, *, cancelled: bool):
    """A running job (token TOKEN, native id 700) its monitor follows; squeue lists it
    ended (CANCELLED: no exit code there), accounting answers `sacct_out`."""
    site, _ = _site("slurm", {"squeue": squeue_record("700", "CANCELLED"),
                              "sacct": sacct_out}, tmp_path)
    store = Store(tmp_path / "store.sqlite")
    store.upsert_job(Job(id="wren:700", site="wren", native_id="700", name="sim",
                         token=TOKEN, submitted_at=utcnow() - timedelta(hours=1)))
    store.apply_state("wren:700", JobState.RUNNING)
    if cancelled:
        store.append_event(Event(kind="job.cancel-requested", job_id="wren:700", data={}))
    journal = Journal(store, {"wren": site}, poll_interval_s=3600, min_poll_s=3600)
    monitor = journal.monitors["wren"]
    monitor.expect(TOKEN, SECRET)
    monitor.track(store.get_job("wren:700"))
    return journal, store, monitor


async def test_an_end_line_of_1_after_the_cancel_is_no_failure_the_scheduler_says_cancelled(
        tmp_path) -> None:
    journal, store, monitor = await _followed(tmp_path, _sacct("CANCELLED", "0:0"),
                                              cancelled=True)
    try:
        await monitor._on_line(_end_line(1))  # the subshell's, written first
        await monitor._on_line(_end_line(143))  # the job's own shell's
        assert store.get_job("wren:700").state == JobState.RUNNING  # before: FAILED, exit 1
        assert monitor._kick.is_set()  # the scheduler is asked soon
        assert await monitor.poll_once() == 1
        job = store.get_job("wren:700")
        assert (job.state, job.exit_code) == (JobState.CANCELLED, 0)
    finally:
        await journal.stop()


async def test_a_job_that_failed_before_the_cancel_reached_it_still_fails(tmp_path) -> None:
    """scancel of a job already ended answers nothing and exits 0: the failure the scheduler
    recorded stands, with its own code, the cancel it did not record said."""
    journal, store, monitor = await _followed(tmp_path, _sacct("FAILED", "3:0"),
                                              cancelled=True)
    try:
        await monitor._on_line(_end_line(3))
        await monitor.poll_once()
        job = store.get_job("wren:700")
        assert (job.state, job.exit_code, job.reason) == (
            JobState.FAILED, 3, "the scheduler recorded a failure (exit 3), not the cancel "
                                "request")
    finally:
        await journal.stop()


@pytest.mark.parametrize(("rc", "state"), [(1, JobState.FAILED), (0, JobState.COMPLETED)])
async def test_without_a_cancel_the_end_line_is_the_ending_at_once(tmp_path, rc, state) -> None:
    journal, store, monitor = await _followed(tmp_path, "", cancelled=False)
    try:
        await monitor._on_line(_end_line(rc))
        job = store.get_job("wren:700")
        assert (job.state, job.exit_code) == (state, rc)
    finally:
        await journal.stop()


# -- the wrapper, run by bash ---------------------------------------------------------------

def _run(tmp_path: Path, script_after_prologue: str, *, cut_after_first_trap: bool = False
         ) -> list[tuple[str, int]]:
    """Run the wrapper (or its lines up to its first `trap` line) then the given lines with
    bash; the (kind, rc) of each line it wrote whose signature holds."""
    jd = tmp_path / "jobs" / TOKEN
    jd.mkdir(parents=True, exist_ok=True)
    (jd / "secret").write_text(SECRET + "\n")
    events = tmp_path / "events.log"
    prologue = wrapper_prologue(str(events), TOKEN, str(jd / "secret"))
    if cut_after_first_trap:
        lines = prologue.splitlines(keepends=True)
        first = next(n for n, line in enumerate(lines) if line.startswith("trap "))
        prologue = "".join(lines[:first + 1])
    (tmp_path / "job.sh").write_text("#!/bin/bash\n" + prologue + script_after_prologue)
    subprocess.run(["bash", str(tmp_path / "job.sh")], cwd=tmp_path, timeout=60,
                   env={**os.environ, "SLURM_JOB_ID": "700"}, capture_output=True)
    got = []
    for text in events.read_text().splitlines() if events.exists() else []:
        ev = parse_event_line(text)
        assert ev is not None and event_mac(SECRET, ev.body) == ev.mac, text
        got.append((ev.kind, ev.rc))
    return got


@pytest.mark.parametrize("subshell", ["( false; __dmd_end )", "x=$(false; __dmd_end)"])
def test_a_subshell_running_the_exit_trap_writes_no_end_line(tmp_path, subshell) -> None:
    """What a signal at a subshell's fork does, made to happen every time: the subshell
    runs the wrapper's EXIT handler with its own status. Before, it wrote "end 1"."""
    assert _run(tmp_path, f"{subshell}\nexit 3\n") == [("start", 0), ("end", 3)]


def test_a_sigterm_between_the_wrappers_traps_writes_no_end_0(tmp_path) -> None:
    """SIGTERM just after the first of the wrapper's traps is set: before, the EXIT trap
    came first and ran on the signal with the last command's status, "end 0" (read as
    COMPLETED); now the TERM trap is set first and the job ends without an end line (its
    scheduler says how it ended)."""
    got = _run(tmp_path, f"kill -{signal.SIGTERM.name.removeprefix('SIG')} $$\nsleep 30\n",
               cut_after_first_trap=True)
    assert got == []
