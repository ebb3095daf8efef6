"""A finished job its scheduler's queue no longer lists is looked for in the scheduler's own
records before it is called lost: PBS Pro without job history and Torque past
`keep_completed` through `tracejob` (the server's logs of the last few days), LSF through
`bhist -n` (the newest event log files). Where those hold no record, the lost job's reason
says how far back they were read. Real `Site`s on the local transport, whose scheduler
commands are scripts written here that print outputs shaped on the documented formats
(tests/fixtures/outputs/pbs/tracejob_*.txt); no test bed."""

from __future__ import annotations

import json
import os
import shlex
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from diamond_jupyter.accounting_turns import FORGET_AFTER_S, AccountingTurns
from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.dialects import get_commands
from diamond_jupyter.dialects.base import AccountingReach
from diamond_jupyter.dialects.lsf_commands import BHIST_LOG_FILES
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.pbs_trace import REACHED_MARK, TRACEJOB_BUDGET_S, TRACEJOB_DAYS
from diamond_jupyter.journal import Journal
from diamond_jupyter.model import BadInput, Job, JobState, utcnow
from diamond_jupyter.monitor import MISSES_BEFORE_LOST
from diamond_jupyter.sites import Site
from diamond_jupyter.store import Store

OUTPUTS = Path(__file__).parent / "fixtures" / "outputs" / "pbs"
UTC = timezone.utc


def at(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def traced(name: str, flavor: str = "pro") -> dict[str, tuple]:
    text = (OUTPUTS / name).read_text(encoding="utf-8")
    return {j.native_id: (j.state.value, j.exit_code, j.reason, j.started_at, j.ended_at)
            for j in PbsCommands(flavor=flavor, tz=UTC).parse_accounting(text)}  # type: ignore[arg-type]


def test_tracejob_says_how_each_pbs_pro_job_ended() -> None:
    jobs = traced("tracejob_pro.txt")
    assert jobs["1201.pbs01"] == ("COMPLETED", 0, None, at(2026, 12, 5, 9, 0, 3),
                                  at(2026, 12, 5, 9, 20, 3))
    assert jobs["1202.pbs01"] == ("FAILED", 3, None, at(2026, 12, 5, 10, 0, 1),
                                  at(2026, 12, 5, 10, 0, 41))  # the server log alone
    # deleted while waiting: no run, no exit status; deleted running: the signal's code
    assert jobs["1203.pbs01"] == ("CANCELLED", None, "deleted (qdel)", None,
                                  at(2026, 12, 5, 11, 5))
    assert jobs["1205.pbs01"] == ("CANCELLED", 128 + 15, "deleted (qdel)",
                                  at(2026, 12, 5, 13, 0, 1), at(2026, 12, 5, 13, 30, 2))
    assert jobs["1204.pbs01"][:3] == ("TIMEOUT", -29, "killed by PBS: walltime exceeded")
    # started, then no end in the logs read: left out, still counted missing
    assert "1206.pbs01" not in jobs


def test_tracejob_record_keeps_the_name_that_carries_the_token() -> None:
    [job] = [j for j in PbsCommands(tz=UTC).parse_accounting(
        (OUTPUTS / "tracejob_pro.txt").read_text()) if j.native_id == "1201.pbs01"]
    assert (job.name, job.user, job.partition) == ("sim.dmd-0123456789ab", "ana", "workq")
    assert job.submitted_at == at(2026, 12, 5, 9, 0, 2)


def test_tracejob_wrapped_torque_accounting_is_joined_back() -> None:
    """Torque's own code for a walltime kill (-11), read from an accounting entry wrapped
    over three lines (its `end=` on the second)."""
    assert traced("tracejob_torque.txt", "torque") == {"548.moab": (
        "TIMEOUT", -11, "killed by PBS: walltime exceeded", at(2026, 12, 5, 8, 0, 5),
        at(2026, 12, 5, 8, 5, 6))}


def test_a_job_name_cannot_forge_an_exit_status() -> None:
    text = ("\nJob: 7.s\n\n"
            "12/05/2026 09:00:00  S    Job Queued at request of a@h, owner = a@h, job name = "
            "x_Exit_status=0, queue = q\n"
            "12/05/2026 09:00:01  A    user=a jobname=Exit_status=0 queue=q\n")
    assert PbsCommands(tz=UTC).parse_accounting(text) == []


def test_tracejob_command_takes_checked_ids_as_arguments() -> None:
    argv = PbsCommands().accounting_argv(["12.pbs01", "13[].pbs01"])
    assert argv[:2] == ["sh", "-c"] and argv[3:] == ["tracejob", "12.pbs01", "13[].pbs01"]
    assert f'timeout $((end - now)) "$0" -n {TRACEJOB_DAYS} -w 0 "$id"' in argv[2]
    assert f"end=$(($(date +%s) + {TRACEJOB_BUDGET_S}))" in argv[2]
    with pytest.raises(BadInput, match="not a job id: '1; rm -rf ~'"):
        PbsCommands(flavor="torque").accounting_argv(["1; rm -rf ~"])


def _logging_args(log: Path) -> str:
    """Shell that appends the arguments the script was given to `log`, one line a run."""
    return f'printf "%s\\n" "$*" >> {shlex.quote(str(log))}'


def _script(path: Path, body: str) -> str:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


async def _poll(tmp_path: Path, cfg: SiteConfig, native_id: str, polls: int) -> Job:
    """Follow a running job `native_id` on a real site for `polls` polls; the job then."""
    site = Site(cfg)
    store = Store(tmp_path / "store.sqlite")
    job_id = f"{cfg.name}:{native_id}"
    store.upsert_job(Job(id=job_id, site=cfg.name, native_id=native_id, name="sim",
                         submitted_at=utcnow() - timedelta(hours=1)))
    store.apply_state(job_id, JobState.RUNNING)
    journal = Journal(store, {cfg.name: site}, poll_interval_s=3600, min_poll_s=3600)
    try:
        journal.monitors[cfg.name].track(store.get_job(job_id))
        for _ in range(polls):
            await journal.monitors[cfg.name].poll_once()
        return store.get_job(job_id)
    finally:
        await journal.stop()


def _test_clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A clock file the test moves, read by a `date` put first on PATH: the clock the
    tracejob loop measures its budget by (`date +%s`). Its path, shell-quoted."""
    clock = tmp_path / "clock"
    clock.write_text("1000000\n")
    clock_bin = tmp_path / "clock-bin"
    clock_bin.mkdir()
    _script(clock_bin / "date", f"cat {shlex.quote(str(clock))}")
    monkeypatch.setenv("PATH", f"{clock_bin}:{os.environ['PATH']}")
    return shlex.quote(str(clock))


def _clock_readings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                    readings: list[int]) -> None:
    """A `date` put first on PATH that answers `readings` in turn, then the last one again:
    the clock the tracejob loop measures its budget by (`date +%s`), read once for its end
    and once before each job."""
    clock = tmp_path / "readings"
    clock.write_text("".join(f"{r}\n" for r in readings))
    clock_bin = tmp_path / "clock-bin"
    clock_bin.mkdir()
    quoted = shlex.quote(str(clock))
    _script(clock_bin / "date", f'head -n 1 {quoted}; [ "$(wc -l < {quoted})" -le 1 ] || '
                                f"sed -i 1d {quoted}")
    monkeypatch.setenv("PATH", f"{clock_bin}:{os.environ['PATH']}")


def _pbs_site(tmp_path: Path, flavor: str, tracejob_body: str) -> SiteConfig:
    """A PBS site whose qstat no longer knows any job (no history) and whose tracejob is
    `tracejob_body` (it logs the arguments it was given)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    qstat = _script(bin_dir / "qstat", 'for a do :; done; echo "qstat: Unknown Job Id $a" >&2; '
                                       "exit 153")
    tracejob = _script(bin_dir / "tracejob",
                       f'{_logging_args(tmp_path / "asked")}\n{tracejob_body}')
    return SiteConfig(name="pb", scheduler="pbs", workdir=str(tmp_path / "w"),
                      transport=TransportConfig(kind="local"), flavor=flavor,
                      commands={"qstat": qstat, "tracejob": tracejob})


@pytest.mark.parametrize("flavor,native_id,fixture,outcome", [
    ("pro", "1202.pbs01", "tracejob_pro.txt", (JobState.FAILED, 3)),
    ("torque", "548.moab", "tracejob_torque.txt", (JobState.TIMEOUT, -11)),
])
async def test_a_job_qstat_forgot_ends_as_its_logs_say(tmp_path, flavor, native_id, fixture,
                                                        outcome) -> None:
    """Before, a finished job qstat no longer listed had no other record asked: three polls
    made it FAILED, "left the queue and accounting has no record of it"; now the first
    poll reads its end from tracejob."""
    body = f"cat {shlex.quote(str(OUTPUTS / fixture))}"
    job = await _poll(tmp_path, _pbs_site(tmp_path, flavor, body), native_id, 1)
    assert (job.state, job.exit_code) == outcome
    assert (tmp_path / "asked").read_text() == f"-n {TRACEJOB_DAYS} -w 0 {native_id}\n"


async def test_a_job_tracejob_cannot_find_is_lost_saying_how_far_it_looked(tmp_path) -> None:
    body = ('echo; echo "tracejob: Couldn\'t find Job Id $5 in logs of past $2 days" >&2; '
            "exit 1")
    job = await _poll(tmp_path, _pbs_site(tmp_path, "pro", body), "1300.pbs01",
                      MISSES_BEFORE_LOST)
    assert job.state == JobState.FAILED
    assert job.reason == (
        "job left the queue and accounting has no record of it (tracejob read the PBS logs "
        f"of the past {TRACEJOB_DAYS} days, where this login may read them: a job that ended "
        "before them, or whose logs it may not read, is not there)")


async def test_an_lsf_job_bhist_cannot_find_is_lost_naming_the_files_read(tmp_path) -> None:
    """bjobs forgot the job and bhist, reading the newest BHIST_LOG_FILES event log files,
    found no record: before, the reason did not say that older files were not read."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    forgot = json.dumps({"COMMAND": "bjobs", "JOBS": 1, "RECORDS": [
        {"JOBID": "4102", "ERROR": "Job <4102> is not found"}]})
    bjobs = _script(bin_dir / "bjobs", f"echo {shlex.quote(forgot)}")
    bhist = _script(bin_dir / "bhist",
                    f"{_logging_args(tmp_path / 'asked')}\necho 'No matching job found'")
    cfg = SiteConfig(name="wren", scheduler="lsf", workdir=str(tmp_path / "w"),
                     transport=TransportConfig(kind="local"),
                     commands={"bjobs": bjobs, "bhist": bhist})
    job = await _poll(tmp_path, cfg, "4102", MISSES_BEFORE_LOST)
    assert job.state == JobState.FAILED
    assert job.reason == (
        "job left the queue and accounting has no record of it (bhist -n "
        f"{BHIST_LOG_FILES} read the {BHIST_LOG_FILES} newest event log files (lsb.events to "
        f"lsb.events.{BHIST_LOG_FILES - 1}): a job that ended before them is not there)")
    assert (tmp_path / "asked").read_text().splitlines()[0] == f"-l -n {BHIST_LOG_FILES} 4102"


async def test_a_running_job_is_not_lost_beside_one_qstat_no_longer_knows(tmp_path) -> None:
    """qstat lists the jobs it knows and exits non-zero for one it does not (finished, no
    history); that exit threw the listed ones away too, and a running job beside a job
    tracejob could not find was made FAILED as lost after three polls."""
    listing = json.dumps({"timestamp": 1796461200, "pbs_version": "2022.1.1",
                          "pbs_server": "pbs01", "Jobs": {"10.pbs01": {
                              "Job_Name": "a", "Job_Owner": "ana@login1", "job_state": "R",
                              "queue": "workq", "stime": "Sat Dec  5 09:00:00 2026"}}})
    cfg = _pbs_site(tmp_path, "pro", "exit 1")
    _script(Path(cfg.commands["qstat"]), f"echo {shlex.quote(listing)}; "
                                         "echo 'qstat: Unknown Job Id 11.pbs01' >&2; exit 153")
    site = Site(cfg)
    store = Store(tmp_path / "store.sqlite")
    for native_id in ("10.pbs01", "11.pbs01"):
        store.upsert_job(Job(id=f"pb:{native_id}", site="pb", native_id=native_id, name="a",
                             submitted_at=utcnow() - timedelta(hours=1)))
        store.apply_state(f"pb:{native_id}", JobState.RUNNING)
    journal = Journal(store, {"pb": site}, poll_interval_s=3600, min_poll_s=3600)
    try:
        for native_id in ("10.pbs01", "11.pbs01"):
            journal.monitors["pb"].track(store.get_job(f"pb:{native_id}"))
        for _ in range(MISSES_BEFORE_LOST):
            await journal.monitors["pb"].poll_once()
        assert store.get_job("pb:10.pbs01").state == JobState.RUNNING
        assert store.get_job("pb:11.pbs01").state == JobState.FAILED
    finally:
        await journal.stop()


async def test_a_slow_tracejob_is_cut_at_its_budget_not_failing_the_poll(tmp_path,
                                                                       monkeypatch) -> None:
    """Server logs slow to read: the run in progress is stopped at the budget and the next
    job is not started (asked at the next poll); the poll itself answers. tracejob hangs
    until the loop's real `timeout` kills it; the loop's clock is the test's, whose third
    reading finds the budget spent, however long the kill took."""
    import diamond_jupyter.dialects.pbs_commands as pbs_commands

    monkeypatch.setattr(pbs_commands, "TRACEJOB_BUDGET_S", 1)
    _clock_readings(tmp_path, monkeypatch, [1_000_000, 1_000_000, 1_000_001])
    site = Site(_pbs_site(tmp_path, "pro", "exec sleep 600"))
    (tmp_path / "asked").touch()  # tracejob appends its arguments when it gets that far
    unasked: set[str] = set()
    try:
        found = await site.statuses(["1300.pbs01", "1301.pbs01"], unasked=unasked)
    finally:
        await site.close()
    assert (found, unasked) == ([], {"1301.pbs01"})
    assert "1301.pbs01" not in (tmp_path / "asked").read_text()


def test_tracejob_loop_names_each_job_it_asked() -> None:
    """Each job asked is followed by its mark; one not reached within the budget is not
    named, so its silence is no answer of no record."""
    text = ("\nJob: 1.s\n\n12/05/2026 09:00:00  S    Exit_status=0 resources_used.walltime="
            f"00:00:01\n\n{REACHED_MARK} 1.s\n\n{REACHED_MARK} 2.s\n")
    commands = PbsCommands(tz=UTC)
    assert commands.accounting_reached(text) == ["1.s", "2.s"]
    assert [j.native_id for j in commands.parse_accounting(text)] == ["1.s"]
    # a mark inside an entry's text (a job's name) is not one
    assert commands.accounting_reached(f"x {REACHED_MARK} 3.s\n") == []
    # Slurm's wrappers ask sacct, which answers for every job
    assert PbsCommands(flavor="slurm").accounting_reached("") is None


async def test_a_run_cut_at_the_budget_prints_none_of_its_lines(tmp_path, monkeypatch) -> None:
    """The first job's tracejob is cut mid-line at the budget ('Exit_status=27' of 271):
    nothing of it is read, and it counts as asked (it had the whole budget); the next is
    not reached (the loop's clock is the test's, as above)."""
    import diamond_jupyter.dialects.pbs_commands as pbs_commands

    monkeypatch.setattr(pbs_commands, "TRACEJOB_BUDGET_S", 1)
    _clock_readings(tmp_path, monkeypatch, [1_000_000, 1_000_000, 1_000_001])
    cut = ("printf '\\nJob: %s\\n\\n12/05/2026 09:00:00  S    Exit_status=27' \"$5\"; "
           "exec sleep 600")
    site = Site(_pbs_site(tmp_path, "pro", cut))
    unasked: set[str] = set()
    try:
        found = await site.statuses(["1300.pbs01", "1301.pbs01"], unasked=unasked)
    finally:
        await site.close()
    assert (found, unasked) == ([], {"1301.pbs01"})


async def test_jobs_tracejob_has_no_time_for_take_turns_and_are_not_lost_unasked(
        tmp_path, monkeypatch) -> None:
    """Logs so slow that each poll's budget reaches one job. Before, every poll asked the
    same first job, and the others, never asked, were made FAILED as lost after three
    polls; now each poll asks the one not asked longest, and a job is lost only after
    three polls that asked tracejob about it. The loop's clock is the test's: each tracejob
    run spends the whole budget on it, whatever the machine's speed."""
    clock = _test_clock(tmp_path, monkeypatch)
    spend_budget = f"echo $(($(cat {clock}) + {TRACEJOB_BUDGET_S})) > {clock}"
    site = Site(_pbs_site(tmp_path, "pro", spend_budget))
    store = Store(tmp_path / "store.sqlite")
    natives = ["1300.pbs01", "1301.pbs01", "1302.pbs01"]
    for native_id in natives:
        store.upsert_job(Job(id=f"pb:{native_id}", site="pb", native_id=native_id, name="a",
                             submitted_at=utcnow() - timedelta(hours=1)))
        store.apply_state(f"pb:{native_id}", JobState.RUNNING)
    journal = Journal(store, {"pb": site}, poll_interval_s=3600, min_poll_s=3600)
    monitor = journal.monitors["pb"]

    def asked() -> list[str]:
        return [line.split()[-1] for line in (tmp_path / "asked").read_text().splitlines()]

    def states() -> list[JobState]:
        return [store.get_job(f"pb:{n}").state for n in natives]

    try:
        for native_id in natives:
            monitor.track(store.get_job(f"pb:{native_id}"))
        for _ in range(MISSES_BEFORE_LOST):
            await monitor.poll_once()
        assert asked() == natives
        assert states() == [JobState.RUNNING] * 3
        for _ in range(len(natives) * (MISSES_BEFORE_LOST - 1)):
            await monitor.poll_once()
        assert asked() == natives * MISSES_BEFORE_LOST
        assert states() == [JobState.FAILED] * 3
        assert "tracejob read the PBS logs" in (store.get_job("pb:1302.pbs01").reason or "")
    finally:
        await journal.stop()


@pytest.mark.parametrize("scheduler,flavor,takes_turns,reach", [
    ("slurm", None, False, None), ("flux", None, False, None), ("sge", None, False, None),
    ("pbs", "slurm", False, None), ("pbs", "pro", True, "tracejob read the PBS logs"),
    ("pbs", "torque", True, "tracejob read the PBS logs"),
    ("lsf", None, False, f"bhist -n {BHIST_LOG_FILES} read"),
])
def test_each_schedulers_accounting_bounds_are_typed_members(scheduler, flavor, takes_turns,
                                                             reach) -> None:
    """Every commands class answers the accounting bounds itself (`AccountingReach`'s
    defaults where unbounded): the site and the monitor read them as members, not by
    name with a fallback, so a misspelt or missing one fails here, not silently later."""
    commands = get_commands(scheduler, flavor=flavor) if flavor else get_commands(scheduler)
    assert isinstance(commands, AccountingReach)
    assert commands.accounting_takes_turns is takes_turns
    assert (commands.accounting_reach or "").startswith(reach or "")
    assert (commands.accounting_reach is None) is (reach is None)
    if not takes_turns:
        assert commands.accounting_reached(f"{REACHED_MARK} 1\n") is None
    cfg = SiteConfig(name="s", scheduler=scheduler, workdir="/tmp/w",
                     transport=TransportConfig(kind="local"), flavor=flavor)
    assert Site(cfg).accounting_reach == commands.accounting_reach


def test_turns_put_the_longest_unasked_first_and_forget_the_settled() -> None:
    now = [0.0]
    turns = AccountingTurns(clock=lambda: now[0])
    assert turns.order(["b", "a", "c"]) == ["b", "a", "c"]  # none asked yet: as given
    now[0] = 10.0
    turns.asked(["b"])
    now[0] = 20.0
    assert turns.order(["d", "b", "a", "c"]) == ["a", "c", "b", "d"]  # d wanted only now
    turns.answered(["a"])
    now[0] = 30.0
    assert turns.order(["a", "c"]) == ["c", "a"]  # a wanted again: from now
    now[0] = 1000.0
    turns.order(["c"])
    now[0] = 20.0 + FORGET_AFTER_S + 1  # b and d not wanted for over an hour: forgotten
    assert turns.order(["d", "c", "b"]) == ["c", "d", "b"]
