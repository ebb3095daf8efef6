"""Nothing lost: a server killed between any two steps of a submit, a cancel, a hedged
submission, a workflow step's release or a stage-out; a job id the scheduler reuses; a
connection dropped mid-answer; two engines on one store; a store that cannot be written.
After recovery every job and event is there exactly once, no payload is submitted twice and
the user's files are intact.

A real engine and store (SQLite on disk) over a local Slurm site whose commands are small
shell stand-ins (a queue file the test writes, `sbatch` numbering jobs and noting each
submit's token); no test bed. The server's death is simulated in-process: the step raises
`Killed` (a BaseException nothing in the engine catches), every task the engine started is
cancelled and its lease unregistered, without `close` (nothing handed back), and a new
engine opens on the same store."""

from __future__ import annotations

import asyncio
import getpass
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from local_slurm import LocalSlurmQueue
from one_site_engine import journal_waiter

from diamond_jupyter import leases
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import (
    BadInput,
    Event,
    Job,
    JobSpec,
    JobState,
    SiteError,
    StageEntry,
    hedge_winner_of,
)
from diamond_jupyter.sites import token_tag
from diamond_jupyter.store import Store
from diamond_jupyter.wrapper import hedge_gate_file

NAME_NOTE = ("job name 'my job' is submitted to alpha as 'my_job' (blanks become '_', at most "
             "40 characters are kept)")


KILL_WAIT_S = 2.0
CLOSE_WAIT_S = 30.0


class Killed(BaseException):
    """The server's process died here (nothing in the engine catches a BaseException of its
    own, as nothing runs after a SIGKILL)."""


def die_in_task(where: str) -> Killed:
    """The Killed to raise in a task of the engine's own (a staging, a hedge's settle): its
    end is taken as seen, as nothing is left to report it after a kill."""
    me = asyncio.current_task()
    if me is not None:
        me.add_done_callback(lambda t: t.cancelled() or t.exception())
    return Killed(where)


class MiniSlurm(LocalSlurmQueue):
    """A local Slurm site (`alpha` unless named): `sbatch` queues the job PENDING under the
    next id (alpha's from 4300, beta's from 5300) with its token in the comment (held,
    JobHeldUser, with --hold), and notes `sbatch TOKEN` in `calls`; `scancel` and
    `scontrol` note their arguments (`scontrol release` frees a held job); `squeue` prints
    the queue file (a look-up of jobs by id, `-j`, fails once when `squeue_fails` exists),
    `sacct` the accounting file (empty: no record). Its work directory is in tmp_path."""

    def __init__(self, tmp_path: Path, site: str = "alpha", first_id: int = 4300) -> None:
        super().__init__(tmp_path, site)
        self.calls = tmp_path / f"calls-{site}.txt"
        self.calls.write_text("")
        self.counter = tmp_path / f"next-id-{site}"
        self.counter.write_text(f"{first_id}\n")
        self.acct = tmp_path / f"acct-{site}.txt"
        self.acct.write_text("")
        line = (f"$id|PENDING|N/A|N/A|2026-01-01T00:00:00|10:00|1|1|{getpass.getuser()}|"
                "debug|N/A||$why|$tok|job")
        self.refuse_unheld = tmp_path / f"refuse-unheld-{site}"
        self.squeue_fails = tmp_path / f"squeue-fails-{site}"
        for name, body in (
                ("sbatch", f'for last; do :; done\nwhy=Priority\n'
                           f'case " $* " in *" --hold "*) why=JobHeldUser ;; esac\n'
                           f'tok=$(grep -o "{token_tag("")}[0-9a-f]*" "$last" | head -n 1)\n'
                           f'id=$(cat {self.counter}); echo $((id + 1)) > {self.counter}\n'
                           f'echo "sbatch $tok" >> {self.calls}\n'
                           f'echo "{line}" >> {self.queue}\necho $id\n'),
                # only a look-up of jobs by id fails (a queue snapshot lists all jobs)
                ("squeue", f'case " $* " in *" -j "*) if [ -f {self.squeue_fails} ]; then\n'
                           f'rm {self.squeue_fails}\n'
                           'echo "slurm_load_jobs error: Socket timed out" >&2; exit 1; fi;; '
                           f'esac\ncat {self.queue}\n'),
                ("sacct", f"cat {self.acct}\n"),
                ("scancel", f'echo "scancel $*" >> {self.calls}\n'),
                # release: a held job's reason becomes Priority; one not held is refused
                # (as PBS's qrls and LSF's bresume do) once refuse_unheld exists
                ("scontrol", f'echo "scontrol $*" >> {self.calls}\n'
                             f'[ "$1" = release ] || exit 0\n'
                             f"awk -F'|' -v OFS='|' -v id=\"$2\" '$1 == id && $13 == "
                             f'"JobHeldUser" {{ $13 = "Priority"; hit = 1 }} {{ print }} '
                             f"END {{ exit !hit }}' {self.queue} > {self.queue}.new "
                             f'&& mv {self.queue}.new {self.queue} && exit 0\n'
                             f'rm -f {self.queue}.new\n[ -f {self.refuse_unheld} ] || exit 0\n'
                             f'echo "Request invalid for state of job $2" >&2; exit 1\n')):
            path = self.bin_dir / name
            path.write_text(f"#!/bin/sh\n{body}")
            path.chmod(0o755)
        self.home = tmp_path / f"home-{site}"
        self.home.mkdir()
        self.site.cfg = self.site.cfg.model_copy(update={"workdir": str(self.home / ".diamond")})

    def submits(self) -> Counter[str]:
        """How many times each token was submitted (the payload runs once per submit)."""
        return Counter(line.split()[1] for line in self.calls.read_text().splitlines()
                       if line.startswith("sbatch "))

    def commands(self, prog: str) -> list[str]:
        return [ln for ln in self.calls.read_text().splitlines() if ln.startswith(prog + " ")]

    def set_state(self, native_id: str, state: str, *, token: str | None = None) -> None:
        """Job `native_id`'s line now says `state` (with `token`: the line of that token's
        job only; a line for the id is added when there is none, as another user's job)."""
        lines = self.queue.read_text().splitlines()
        for i, ln in enumerate(lines):
            f = ln.split("|")
            if f[0] == native_id and (token is None or f[13] == token_tag(token)):
                f[1] = state
                lines[i] = "|".join(f)
                break
        else:
            lines.append(f"{native_id}|{state}|N/A|N/A|2026-01-01T00:00:00|10:00|1|1|"
                         f"someone|debug|N/A||None|{token_tag(token or 'f' * 12)}|x")
        self.queue.write_text("".join(ln + "\n" for ln in lines))

    def reuse(self, native_id: str, state: str = "PENDING") -> None:
        """The scheduler gives `native_id` to another user's job (another token): its line
        replaces every line of that id."""
        self.forget(native_id)
        self.set_state(native_id, state, token="b" * 12)

    def forget(self, native_id: str) -> None:
        """The job left squeue's memory (and accounting has no record of it)."""
        lines = [ln for ln in self.queue.read_text().splitlines()
                 if ln.split("|")[0] != native_id]
        self.queue.write_text("".join(ln + "\n" for ln in lines))


@pytest.fixture
def slurm(tmp_path) -> MiniSlurm:
    return MiniSlurm(tmp_path)


_built: list[Federation] = []  # every engine the running test built, dead ones included


@pytest.fixture(autouse=True)
async def engines_closed_at_teardown():
    """Close every engine the test built, whatever became of it: a test failing mid-way
    (before its own `close`, or with a killed engine's tasks still waiting) reports its
    failure and the run ends, instead of hanging on what was left open."""
    _built.clear()
    yield
    built = list(_built)
    _built.clear()
    for fed in reversed(built):
        await asyncio.wait_for(fed.close(), CLOSE_WAIT_S)
        if fed.lease._id is not None:
            leases.unregister(fed.lease._id)


def engine(tmp_path: Path, *slurms: MiniSlurm, **kw: Any) -> Federation:
    """An engine over the sites `slurms` on the store tmp_path/store.sqlite that never polls
    on its own and looks a lost submit up at once (closed at the test's teardown)."""
    settings: dict[str, Any] = {"poll_interval_s": 3600, "min_poll_s": 3600, "intent_grace_s": 0,
                                "unsure_submit_settle_s": 0.2} | kw
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [q.site.cfg.model_dump(mode="json")
                                               for q in slurms]}))
    fed = Federation(sites, store=Store(tmp_path / "store.sqlite"), **settings)
    _built.append(fed)
    return fed


async def kill(fed: Federation) -> None:
    """The server's process dies: whatever it was running stops, its lease is gone with it,
    and nothing is handed back or closed."""
    me = asyncio.current_task()
    tasks = [t for t in asyncio.all_tasks() if t is not me]
    for t in tasks:
        t.cancel()
    if tasks:  # a dead process waits for nothing: a command's clean-up is not waited out
        await asyncio.wait(tasks, timeout=KILL_WAIT_S)
    fed._stop_hedge_retries()  # its timers die with it
    if fed.lease._id is not None:
        leases.unregister(fed.lease._id)


async def restart(tmp_path: Path, dead: Federation, *slurms: MiniSlurm,
                  meanwhile: Callable[[], object] = lambda: None, **kw: Any) -> Federation:
    """Kill `dead`; `meanwhile()` happens once it is dead (none of its commands still runs:
    a fault set before could be met by a command it had in flight, a queue snapshot of its
    own, instead of the next engine's); then start a new server engine (with recovery) on
    the same store."""
    await kill(dead)
    meanwhile()
    fed = engine(tmp_path, *slurms, **kw)
    await fed.start()
    return fed


@asynccontextmanager
async def restarted(tmp_path: Path, dead: Federation, *slurms: MiniSlurm,
                    meanwhile: Callable[[], object] = lambda: None, **kw: Any
                    ) -> AsyncIterator[Federation]:
    """`restart`'s new engine, closed when the block ends."""
    fed = await restart(tmp_path, dead, *slurms, meanwhile=meanwhile, **kw)
    try:
        yield fed
    finally:
        await fed.close()


@asynccontextmanager
async def recovered(tmp_path: Path, dying: Federation, step: Awaitable[Any],
                    *slurms: MiniSlurm, meanwhile: Callable[[], object] = lambda: None,
                    **kw: Any) -> AsyncIterator[Federation]:
    """`step`, a call on the engine `dying` set to die on its way, kills the server there;
    `meanwhile()` happens while no engine runs (`restart`); then the next engine (with `kw`)
    opens on the same store: that engine, closed when the block ends."""
    with pytest.raises(Killed):
        await step
    async with restarted(tmp_path, dying, *slurms, meanwhile=meanwhile, **kw) as fed:
        yield fed


def spec(tmp_path: Path, **kw: Any) -> JobSpec:
    wd = tmp_path / "wd"
    wd.mkdir(exist_ok=True)
    return JobSpec(**{"name": "nl"} | kw, command="echo payload >> runs.txt",
                   working_directory=str(wd))


def events(fed: Federation, job: Job | str) -> list[Event]:
    jid = job if isinstance(job, str) else job.id
    return fed.store.events_since(0, job_id=fed.store.get_job(jid).id, limit=None)


def kinds(fed: Federation, job: Job | str) -> list[str]:
    return [e.kind for e in events(fed, job)]


def assert_once(fed: Federation, slurm: MiniSlurm) -> list[Job]:
    """Every job once, no token submitted twice, no event twice; the jobs."""
    jobs = fed.store.list_jobs(limit=None)
    assert len({j.token for j in jobs}) == len(jobs), jobs
    assert all(n == 1 for n in slurm.submits().values()), slurm.submits()
    seqs = [e.seq for e in fed.store.events_since(0, limit=None)]
    assert len(seqs) == len(set(seqs))
    for j in jobs:
        ks = kinds(fed, j)
        for once in ("job.submitting", "job.submitted", "job.cancel-requested"):
            assert ks.count(once) <= 1, (j.id, ks)
    return jobs


def die_after(monkeypatch, obj: Any, name: str, *, when=lambda *a, **k: True) -> None:
    """`obj.name` runs, then the process dies (when `when(args)` holds)."""
    real = getattr(obj, name)

    if asyncio.iscoroutinefunction(real):
        async def wrapped(*a, **k):
            out = await real(*a, **k)
            if when(*a, **k):
                raise Killed(name)
            return out
    else:
        def wrapped(*a, **k):
            out = real(*a, **k)
            if when(*a, **k):
                raise Killed(name)
            return out
    monkeypatch.setattr(obj, name, wrapped)


def die_before(monkeypatch, obj: Any, name: str, *, when=lambda *a, **k: True) -> None:
    real = getattr(obj, name)

    if asyncio.iscoroutinefunction(real):
        async def wrapped(*a, **k):
            if when(*a, **k):
                raise Killed(name)
            return await real(*a, **k)
    else:
        def wrapped(*a, **k):
            if when(*a, **k):
                raise Killed(name)
            return real(*a, **k)
    monkeypatch.setattr(obj, name, wrapped)


def _sbatch(argv, *a, **k) -> bool:
    return any(Path(str(a)).name == "sbatch" or "exec sbatch " in str(a) for a in argv)


# -- submit: killed between each pair of its steps ---------------------------------------

async def test_killed_while_the_job_is_prepared_records_nothing(tmp_path, slurm,
                                                                  monkeypatch):
    fed = engine(tmp_path, slurm)
    die_before(monkeypatch, fed.site("alpha"), "prepare")
    async with recovered(tmp_path, fed, fed.submit(spec(tmp_path), "alpha", force=True),
                         slurm) as fed:
        assert fed.store.list_jobs(limit=None) == [] and slurm.submits() == Counter()
        assert fed.store.events_since(0, limit=None) == []


async def test_killed_while_the_script_is_rendered_closes_the_intent_unsent(
        tmp_path, slurm, monkeypatch):
    """The script is rendered (and uploaded) while the intent is written: a kill there
    leaves an intent, closed as never submitted by the next engine, nothing sent."""
    fed = engine(tmp_path, slurm)
    die_before(monkeypatch, fed.site("alpha"), "render")
    async with recovered(tmp_path, fed, fed.submit(spec(tmp_path), "alpha", force=True),
                         slurm, unsure_submit_settle_s=0) as fed:
        [job] = assert_once(fed, slurm)
        assert job.state == JobState.FAILED and slurm.submits() == Counter()
        assert kinds(fed, job) == ["job.submitting", "job.state"]


async def test_killed_right_after_the_intent_is_written_closes_it_unsent(tmp_path, slurm,
                                                                         monkeypatch):
    fed = engine(tmp_path, slurm)
    die_after(monkeypatch, fed.store, "record_intent")
    async with recovered(tmp_path, fed, fed.submit(spec(tmp_path), "alpha", force=True),
                         slurm, unsure_submit_settle_s=0) as fed:
        [job] = assert_once(fed, slurm)
        assert job.state == JobState.FAILED and job.native_id is None
        assert job.reason == "the submit did not reach the scheduler"
        assert slurm.submits() == Counter()
        assert kinds(fed, job).count("job.state") == 1


async def test_killed_once_sbatch_ran_but_before_its_answer_binds_the_job_by_token(
        tmp_path, slurm, monkeypatch):
    fed = engine(tmp_path, slurm)
    die_after(monkeypatch, fed.site("alpha"), "run", when=_sbatch)
    async with recovered(tmp_path, fed, fed.submit(spec(tmp_path), "alpha", force=True),
                         slurm) as fed:
        [job] = assert_once(fed, slurm)
        assert job.id == "alpha:4300" and job.state == JobState.PENDING
        assert kinds(fed, job).count("job.submitted") == 1


async def test_killed_after_the_id_came_back_but_before_it_was_recorded(tmp_path, slurm,
                                                                        monkeypatch):
    fed = engine(tmp_path, slurm)
    die_before(monkeypatch, fed.store, "bind_native_id")
    dying_store = fed.store

    def the_intent_is_left_unbound() -> None:
        assert dying_store.intents_without_native_id()
    submit = fed.submit(spec(tmp_path, name="my job"), "alpha", force=True)
    async with recovered(tmp_path, fed, submit, slurm,
                         meanwhile=the_intent_is_left_unbound) as fed:
        [job] = assert_once(fed, slurm)
        assert job.id == "alpha:4300" and job.state == JobState.PENDING
        assert fed.submit_notes(job.id) == [NAME_NOTE]  # the recovery keeps them too


async def test_killed_right_after_the_job_was_recorded_keeps_its_warnings(
        tmp_path, slurm, monkeypatch):
    """The submit's notes (here a directive approximated) are written with the job's binding
    or not at all lost: a kill between the two kept the job and dropped its notes."""
    fed = engine(tmp_path, slurm)
    die_after(monkeypatch, fed.store, "bind_native_id")
    submit = fed.submit(spec(tmp_path, name="my job"), "alpha", force=True)
    async with recovered(tmp_path, fed, submit, slurm) as fed:
        [job] = assert_once(fed, slurm)
        assert job.id == "alpha:4300"
        assert kinds(fed, job).count("job.submitted") == 1
        assert fed.submit_notes(job.id) == [NAME_NOTE]


async def test_a_job_recorded_then_killed_is_followed_to_its_end_by_the_next_engine(
        tmp_path, slurm):
    fed = engine(tmp_path, slurm)
    job = await fed.submit(spec(tmp_path), "alpha", force=True)
    async with restarted(tmp_path, fed, slurm) as fed:
        slurm.set_state("4300", "COMPLETED")
        done = await fed.wait(job.id, refresh=True, timeout=30)
        assert done.state == JobState.COMPLETED
        [job] = assert_once(fed, slurm)
        assert kinds(fed, job).count("job.state") == 2  # PENDING, then COMPLETED


# -- cancel ---------------------------------------------------------------------------------

async def test_killed_before_scancel_has_the_cancel_sent_by_recovery(tmp_path, slurm,
                                                                    monkeypatch):
    fed = engine(tmp_path, slurm)
    job = await fed.submit(spec(tmp_path), "alpha", force=True)
    die_before(monkeypatch, fed.site("alpha"), "cancel")

    def nothing_was_sent() -> None:
        assert slurm.commands("scancel") == []
    async with recovered(tmp_path, fed, fed.cancel(job.id), slurm,
                         meanwhile=nothing_was_sent) as fed:
        # the request was recorded before it was sent: the user's cancel is not lost
        assert slurm.commands("scancel") == ["scancel 4300"]
        slurm.set_state("4300", "CANCELLED")
        done = await fed.wait(job.id, refresh=True, timeout=30)
        assert done.state == JobState.CANCELLED
        assert kinds(fed, job).count("job.cancel-requested") == 1
        assert_once(fed, slurm)
        assert await fed.cancel(job.id) == done  # ended: nothing sent again
        assert slurm.commands("scancel") == ["scancel 4300"]


async def test_a_cancel_the_site_refuses_is_not_taken_as_requested(tmp_path, slurm):
    fed = engine(tmp_path, slurm)
    job = await fed.submit(spec(tmp_path), "alpha", force=True)
    scancel = slurm.bin_dir / "scancel"
    real = scancel.read_text()
    scancel.write_text(real + 'echo "scancel: error: Kill job error on job id $1: Access/'
                              'permission denied" >&2; exit 1\n')
    try:
        with pytest.raises(SiteError, match="permission denied"):
            await fed.cancel(job.id)
        assert not fed.journal.cancel_requested(job.id)
        assert kinds(fed, job)[-2:] == ["job.cancel-requested", "job.cancel-failed"]
        scancel.write_text(real)
        await fed.cancel(job.id)  # asked again: requested again
        assert fed.journal.cancel_requested(job.id)
        assert slurm.commands("scancel") == ["scancel 4300"] * 2
    finally:
        await fed.close()


async def test_killed_once_scancel_was_sent_ends_cancelled_once(tmp_path, slurm, monkeypatch):
    fed = engine(tmp_path, slurm)
    job = await fed.submit(spec(tmp_path), "alpha", force=True)
    die_after(monkeypatch, fed.site("alpha"), "cancel")
    # the scheduler did it while no engine ran
    async with recovered(tmp_path, fed, fed.cancel(job.id), slurm,
                         meanwhile=lambda: slurm.set_state("4300", "CANCELLED")) as fed:
        done = await fed.wait(job.id, refresh=True, timeout=30)
        assert done.state == JobState.CANCELLED
        assert_once(fed, slurm)
        ks = kinds(fed, job)
        assert ks.count("job.cancel-requested") == 1, ks  # recorded before it was sent
        assert [e.data["state"] for e in events(fed, job) if e.kind == "job.state"] == [
            "PENDING", "CANCELLED"], ks
        assert await fed.cancel(job.id) == done  # a second cancel: nothing sent again
        assert slurm.commands("scancel") == ["scancel 4300"]


async def test_killed_after_the_cancel_request_was_recorded(tmp_path, slurm, monkeypatch):
    fed = engine(tmp_path, slurm)
    job = await fed.submit(spec(tmp_path), "alpha", force=True)
    die_after(monkeypatch, fed.journal, "kick")
    async with recovered(tmp_path, fed, fed.cancel(job.id), slurm,
                         meanwhile=lambda: slurm.set_state("4300", "CANCELLED")) as fed:
        done = await fed.wait(job.id, refresh=True, timeout=30)
        assert done.state == JobState.CANCELLED
        assert kinds(fed, job).count("job.cancel-requested") == 1
        assert_once(fed, slurm)


# -- a job id the scheduler reuses -----------------------------------------------------------

async def test_an_id_reused_by_another_users_job_after_ours_finished(tmp_path, slurm):
    fed = engine(tmp_path, slurm)
    job = await fed.submit(spec(tmp_path), "alpha", force=True)
    slurm.set_state("4300", "COMPLETED")
    assert (await fed.wait(job.id, refresh=True, timeout=30)).state == JobState.COMPLETED
    slurm.reuse("4300", "RUNNING")  # someone else's job now
    async with restarted(tmp_path, fed, slurm) as fed:
        again = await fed.status(job.id, refresh=True)
        assert again.state == JobState.COMPLETED and again.token == job.token
        [only] = assert_once(fed, slurm)
        assert [e.data["state"] for e in events(fed, only) if e.kind == "job.state"] == [
            "PENDING", "COMPLETED"]


async def test_an_id_reused_by_another_job_while_ours_is_followed(tmp_path, slurm):
    """Ours left the queue unseen and its id went to another user's job, which runs: ours
    is not said to run (the token tells them apart), and no event is written for it."""
    fed = engine(tmp_path, slurm)
    try:
        job = await fed.submit(spec(tmp_path), "alpha", force=True)
        slurm.reuse("4300", "RUNNING")
        seen = await fed.status(job.id, refresh=True)
        assert seen.state != JobState.RUNNING, seen
        assert kinds(fed, job).count("job.state") == 1  # PENDING: nothing of the other's
        [only] = assert_once(fed, slurm)
        assert only.token == job.token
    finally:
        await fed.close()


async def test_an_id_reused_while_no_engine_ran(tmp_path, slurm):
    fed = engine(tmp_path, slurm)
    job = await fed.submit(spec(tmp_path), "alpha", force=True)
    slurm.reuse("4300", "RUNNING")  # ours ended unseen; the id went to someone else
    async with restarted(tmp_path, fed, slurm) as fed:
        seen = await fed.status(job.id, refresh=True)
        assert seen.state != JobState.RUNNING and seen.started_at is None, seen
        assert_once(fed, slurm)


async def test_our_new_job_given_an_id_an_older_job_of_ours_had(tmp_path, slurm):
    """The cluster was rebuilt: the counter starts again and our next job gets the id of a
    finished one. Both are kept, each with its own events."""
    fed = engine(tmp_path, slurm)
    try:
        first = await fed.submit(spec(tmp_path), "alpha", force=True)
        slurm.set_state("4300", "COMPLETED")
        await fed.wait(first.id, refresh=True, timeout=30)
        slurm.forget("4300")
        slurm.counter.write_text("4300\n")
        second = await fed.submit(spec(tmp_path), "alpha", force=True)
        assert second.id == "alpha:4300"
        jobs = assert_once(fed, slurm)
        assert len(jobs) == 2
        old = fed.job(first.token or "")
        assert old.id.startswith("alpha:4300@") and old.reused_by == "alpha:4300"
        assert old.state == JobState.COMPLETED and fed.job("alpha:4300").token == second.token
        assert kinds(fed, old).count("job.submitted") == 1
        assert kinds(fed, second).count("job.submitted") == 1
    finally:
        await fed.close()


# -- the connection drops mid-answer ---------------------------------------------------------

def _drop_mid_output(slurm: MiniSlurm, prog: str, keep_bytes: int) -> None:
    """`prog` prints the first `keep_bytes` of its answer, then the connection drops (ssh's
    exit status 255 and its message)."""
    real = slurm.bin_dir / f"{prog}.real"
    (slurm.bin_dir / prog).rename(real)
    path = slurm.bin_dir / prog
    path.write_text(f'#!/bin/sh\n"{real}" "$@" | head -c {keep_bytes}\n'
                    'echo "Connection to login1 closed by remote host." >&2\nexit 255\n')
    path.chmod(0o755)


def _restore(slurm: MiniSlurm, prog: str) -> None:
    (slurm.bin_dir / f"{prog}.real").rename(slurm.bin_dir / prog)


async def test_squeue_cut_mid_record_changes_nothing(tmp_path, slurm):
    fed = engine(tmp_path, slurm)
    try:
        a = await fed.submit(spec(tmp_path), "alpha", force=True)
        b = await fed.submit(spec(tmp_path), "alpha", force=True)
        slurm.set_state("4300", "RUNNING")
        before = len(fed.store.events_since(0, limit=None))
        first_line = len(slurm.queue.read_text().splitlines()[0])
        _drop_mid_output(slurm, "squeue", first_line + 10)
        for jid in (a.id, b.id):  # a site that did not answer: the stored state is kept
            assert (await fed.status(jid, refresh=True)).state == JobState.PENDING
        assert {fed.job(a.id).state, fed.job(b.id).state} == {JobState.PENDING}
        assert len(fed.store.events_since(0, limit=None)) == before
        _restore(slurm, "squeue")
        assert (await fed.status(a.id, refresh=True)).state == JobState.RUNNING
        assert (await fed.status(b.id, refresh=True)).state == JobState.PENDING
        assert_once(fed, slurm)
    finally:
        await fed.close()


async def test_sacct_cut_mid_record_ends_no_job(tmp_path, slurm):
    fed = engine(tmp_path, slurm)
    try:
        job = await fed.submit(spec(tmp_path), "alpha", force=True)
        slurm.forget("4300")  # gone from squeue: only accounting knows how it ended
        slurm.acct.write_text("4300|COMPLETED|0:0|2026-01-01T00:00:01|2026-01-01T00:00:09|"
                              "n1|nl|4300\n")
        _drop_mid_output(slurm, "sacct", 12)
        assert (await fed.status(job.id, refresh=True)).state == JobState.PENDING
        assert kinds(fed, job).count("job.state") == 1
        _restore(slurm, "sacct")
        done = await fed.status(job.id, refresh=True)
        assert done.state == JobState.COMPLETED and done.exit_code == 0
        assert_once(fed, slurm)
    finally:
        await fed.close()


async def test_a_lost_submit_looked_up_over_a_dropped_connection_stays_open(
        tmp_path, slurm, monkeypatch):
    """The server died once sbatch ran; the next engine's lookup of the token is cut off
    mid-answer: the intent is neither closed as never submitted nor submitted again."""
    fed = engine(tmp_path, slurm)
    die_after(monkeypatch, fed.site("alpha"), "run", when=_sbatch)
    async with recovered(tmp_path, fed, fed.submit(spec(tmp_path), "alpha", force=True),
                         slurm, unsure_submit_settle_s=0,
                         meanwhile=lambda: _drop_mid_output(slurm, "squeue", 20)) as fed:
        [job] = fed.store.list_jobs(limit=None)
        assert job.native_id is None and not job.state.terminal
        _restore(slurm, "squeue")
        await fed.recover(intent_grace_s=0)
        [job] = assert_once(fed, slurm)
        assert job.id == "alpha:4300" and job.state == JobState.PENDING


# -- two engines on one store ----------------------------------------------------------------

async def test_two_engines_recovering_one_lost_submit_bind_it_once(tmp_path, slurm,
                                                                  monkeypatch):
    fed = engine(tmp_path, slurm)
    die_after(monkeypatch, fed.site("alpha"), "run", when=_sbatch)
    with pytest.raises(Killed):
        await fed.submit(spec(tmp_path), "alpha", force=True)
    await kill(fed)
    a, b = engine(tmp_path, slurm), engine(tmp_path, slurm)
    try:
        await asyncio.gather(a.start(), b.start())
        [job] = assert_once(a, slurm)
        assert job.id == "alpha:4300"
        assert kinds(a, job).count("job.submitted") == 1
    finally:
        await asyncio.gather(a.close(), b.close())


async def test_two_engines_seeing_one_end_record_it_once(tmp_path, slurm):
    a, b = engine(tmp_path, slurm), engine(tmp_path, slurm)
    try:
        await asyncio.gather(a.start(), b.start())
        job = await a.submit(spec(tmp_path), "alpha", force=True)
        slurm.set_state("4300", "COMPLETED")
        await asyncio.gather(a.status(job.id, refresh=True), b.status(job.id, refresh=True))
        states = [e.data["state"] for e in events(a, job) if e.kind == "job.state"]
        assert states == ["PENDING", "COMPLETED"]
        assert_once(a, slurm)
    finally:
        await asyncio.gather(a.close(), b.close())


async def test_two_engines_submitting_one_approved_plan_submit_it_once(tmp_path, slurm):
    a, b = engine(tmp_path, slurm), engine(tmp_path, slurm)
    try:
        plan = await a.plan_submit(spec(tmp_path), "alpha")
        got = await asyncio.gather(
            *(e.submit(spec(tmp_path), "alpha", token=plan["submission"],
                       script_sha256=plan["script_sha256"]) for e in (a, b)),
            return_exceptions=True)
        assert slurm.submits() == Counter({token_tag(plan["submission"]): 1}), got
        [job] = assert_once(a, slurm)
        assert job.native_id == "4300"
        refused = [str(g) for g in got if not isinstance(g, Job)]
        tok = plan["submission"]
        assert refused in ([], [f"the submission {tok} is already in flight (alpha:4300): it "
                                "is sent once"],
                           [f"the submission {tok} is already in flight (alpha:pending-{tok}): "
                            "it is sent once"]), got
    finally:
        await asyncio.gather(a.close(), b.close())


async def test_an_approved_plan_sent_while_another_engine_submits_it_is_refused_once(
        tmp_path, slurm, monkeypatch):
    """The interleaving a busy machine made (the other test's outcome depends on timing):
    engine a has recorded the plan's intent and runs sbatch when engine b submits the same
    plan. b is refused with the same words whichever check finds a's intent first, and
    nothing of a's is touched; once a's job is bound, b gets that job, nothing sent again."""
    a, b = engine(tmp_path, slurm), engine(tmp_path, slurm)
    try:
        plan = await a.plan_submit(spec(tmp_path), "alpha")
        tok = plan["submission"]
        in_sbatch, go_on = asyncio.Event(), asyncio.Event()
        real_run = a.site("alpha").run

        async def held_sbatch(argv, *args, **kw):
            if _sbatch(argv):
                in_sbatch.set()
                await go_on.wait()
            return await real_run(argv, *args, **kw)
        monkeypatch.setattr(a.site("alpha"), "run", held_sbatch)

        def send(e: Federation) -> Any:
            return e.submit(spec(tmp_path), "alpha", token=tok,
                            script_sha256=plan["script_sha256"])
        first = asyncio.ensure_future(send(a))
        await in_sbatch.wait()
        with pytest.raises(SiteError) as refused:
            await send(b)
        assert str(refused.value) == (f"the submission {tok} is already in flight "
                                      f"(alpha:pending-{tok}): it is sent once")
        go_on.set()
        job = await first
        assert job.id == "alpha:4300"
        assert (await send(b)).id == job.id
        assert slurm.submits() == Counter({token_tag(tok): 1})
        assert_once(a, slurm)
    finally:
        await asyncio.gather(a.close(), b.close())


async def test_an_approved_plan_the_scheduler_refused_is_not_said_to_be_in_flight(
        tmp_path, slurm):
    fed = engine(tmp_path, slurm)
    try:
        plan = await fed.plan_submit(spec(tmp_path), "alpha")
        tok = plan["submission"]
        sbatch = slurm.bin_dir / "sbatch"
        working = sbatch.read_text()
        sbatch.write_text("#!/bin/sh\necho 'sbatch: error: Invalid account' >&2\nexit 1\n")
        for _ in range(2):  # the scheduler's refusal, then the plan's closed intent
            with pytest.raises(BadInput) as told:
                await fed.submit(spec(tmp_path), "alpha", token=tok,
                                 script_sha256=plan["script_sha256"])
        sbatch.write_text(working)
        assert str(told.value) == (
            f"the submission {tok} was closed as never submitted (alpha:pending-{tok}: alpha "
            "refused the job: sbatch: error: Invalid account): a plan is sent once; approve "
            "a new plan to submit the job")
        with pytest.raises(BadInput):  # refused so with the scheduler working again too
            await fed.submit(spec(tmp_path), "alpha", token=tok,
                             script_sha256=plan["script_sha256"])
        assert slurm.submits() == Counter()
    finally:
        await fed.close()


# -- a store that cannot be written ------------------------------------------------------------

def _full(fed: Federation) -> None:
    """The store's disk is full from now on (SQLite's own page limit)."""
    conn = fed.store._conn()
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {pages}")


def _read_only(fed: Federation) -> None:
    fed.store._conn().execute("PRAGMA query_only = ON")


@pytest.mark.parametrize("make", [_full, _read_only], ids=["full", "read-only"])
async def test_a_store_that_cannot_be_written_refuses_the_submit_before_sbatch(
        tmp_path, slurm, make):
    fed = engine(tmp_path, slurm)
    try:
        await fed.submit(spec(tmp_path), "alpha", force=True)  # the store's tables made
        make(fed)
        with pytest.raises(Exception) as told:
            await fed.submit(spec(tmp_path), "alpha", force=True)
        assert str(told.value).startswith(f"store {tmp_path / 'store.sqlite'} cannot be "
                                          "written: "), told.value
        assert sum(slurm.submits().values()) == 1  # the first only
        assert len(fed.store.list_jobs(limit=None)) == 1
    finally:
        fed.store._conn().execute("PRAGMA query_only = OFF")
        await fed.close()


async def test_a_store_full_between_sbatch_and_the_record_says_the_job_was_sent(
        tmp_path, slurm, monkeypatch):
    """sbatch took the job, then the store could not record its id: the user is told the
    job went out (not to submit it again), and the next engine binds it by its token."""
    fed = engine(tmp_path, slurm)
    await fed.submit(spec(tmp_path, name="first"), "alpha", force=True)
    real_bind = fed.store.bind_native_id

    def full_then_bind(*a, **k):
        _read_only(fed)
        return real_bind(*a, **k)
    monkeypatch.setattr(fed.store, "bind_native_id", full_then_bind)
    with pytest.raises(Exception) as told:
        await fed.submit(spec(tmp_path), "alpha", force=True)
    said, tok = str(told.value), fed.store.intents_without_native_id()[0].token
    assert said == (
        f"alpha took the job as 4301 (submission {tok}), but store {tmp_path / 'store.sqlite'} "
        "cannot be written: its file system or file is read-only: make it writable, or give "
        "another store path (`store:` in the sites file, or $DIAMOND_DATA_DIR); this change "
        "was not recorded: do not submit it again; once the store can be written, diamond "
        "finds the job by its token and records it")
    monkeypatch.undo()
    fed.store._conn().execute("PRAGMA query_only = OFF")
    async with restarted(tmp_path, fed, slurm) as fed:
        jobs = assert_once(fed, slurm)
        assert sorted(j.id for j in jobs) == ["alpha:4300", "alpha:4301"]


# -- hedged submission -----------------------------------------------------------------------

@pytest.fixture
def pair(tmp_path, slurm) -> tuple[MiniSlurm, MiniSlurm]:
    return slurm, MiniSlurm(tmp_path, "beta", 5300)


def hedge_engine(tmp_path: Path, pair: tuple[MiniSlurm, MiniSlurm], monkeypatch,
                 **kw: Any) -> Federation:
    """An engine over alpha and beta whose hedged copies go to both (placement is not what
    these tests are about)."""
    fed = engine(tmp_path, *pair, **kw)

    async def both(spec: JobSpec, copies: int):
        return [("alpha", spec), ("beta", spec)], {}, SimpleNamespace(model_dump=lambda **_: {})
    monkeypatch.setattr(fed, "_hedge_choice", both)
    return fed


def gate(slurm: MiniSlurm, job: Job) -> str | None:
    """The decision written where the copy's wrapper waits ("go"/"no"), None: none yet."""
    path = Path(hedge_gate_file(f"{slurm.home}/.diamond/jobs/{job.token}"))
    return path.read_text().split()[0] if path.exists() else None


def assert_beta_won(fed: Federation, pair: tuple[MiniSlurm, MiniSlurm], group: str) -> None:
    alpha, beta = pair
    rec = fed.store.hedge(group)
    a, b = rec.copies
    assert rec.winner == b.token and a.state == JobState.CANCELLED, rec
    assert (gate(alpha, a), gate(beta, b)) == ("no", "go")
    assert beta.commands("scancel") == [] and set(alpha.commands("scancel")) == {"scancel 4300"}
    hedged = [e.kind for e in fed.store.events_since(0, limit=None) if e.kind.startswith("hedge.")]
    for kind in ("hedge.decided", "hedge.go", "hedge.cancelled"):
        assert hedged.count(kind) == 1, hedged
    for q in pair:
        assert_once(fed, q)


async def settled(fed: Federation, group: str, wait) -> None:
    """The group settled, and the winner's go recorded (written just after its gate)."""
    await fed.hedge_winner(group, timeout=30)
    if not fed.store.events_since(0, kinds=["hedge.go"], limit=1):
        await wait(lambda ev: ev.kind == "hedge.go")


@asynccontextmanager
async def settled_after_restart(tmp_path: Path, dead: Federation,
                                pair: tuple[MiniSlurm, MiniSlurm], group: str
                                ) -> AsyncIterator[Federation]:
    """The next engine over `pair` (`restarted` after `dead`), once the hedge `group`
    settled there (`settled`)."""
    async with restarted(tmp_path, dead, *pair) as fed:
        _, wait = journal_waiter(fed)
        await settled(fed, group, wait)
        yield fed


async def _start(fed: Federation, slurm: MiniSlurm, native_id: str) -> None:
    slurm.set_state(native_id, "RUNNING")
    await fed.status(f"{slurm.site.name}:{native_id}", refresh=True)


async def test_hedge_killed_after_its_copies_were_submitted(tmp_path, pair, monkeypatch):
    fed = hedge_engine(tmp_path, pair, monkeypatch)
    die_before(monkeypatch, fed.store, "hedge_event", when=lambda kind, *a, **k:
               kind == "hedge.submitted")
    with pytest.raises(Killed):
        await fed.submit(spec(tmp_path), hedge=2)
    [group] = [r.id for r in fed.store.open_hedges()]
    async with restarted(tmp_path, fed, *pair) as fed:
        _, wait = journal_waiter(fed)
        assert [j.id for j in fed.store.hedge(group).copies] == ["alpha:4300", "beta:5300"]
        await _start(fed, pair[1], "5300")
        await settled(fed, group, wait)
        assert_beta_won(fed, pair, group)


async def _hedged_then_killed_once_betas_start_was_claimed(
        tmp_path: Path, pair, monkeypatch) -> tuple[Federation, str]:
    """A hedged job whose beta copy starts first: the server dies in the task that claimed
    beta's start, just after the claim was recorded; the dead engine and the group."""
    fed = hedge_engine(tmp_path, pair, monkeypatch)
    await fed.submit(spec(tmp_path), hedge=2)
    [group] = [r.id for r in fed.store.open_hedges()]
    claimed = asyncio.Event()
    real_claim = fed.store.claim_hedge

    def claim_then_die(*a, **k):
        real_claim(*a, **k)
        claimed.set()
        raise die_in_task("claim_hedge")
    monkeypatch.setattr(fed.store, "claim_hedge", claim_then_die)
    await _start(fed, pair[1], "5300")
    await asyncio.wait_for(claimed.wait(), 30)
    return fed, group


async def test_hedge_killed_once_the_first_start_was_claimed(tmp_path, pair, monkeypatch):
    fed, group = await _hedged_then_killed_once_betas_start_was_claimed(tmp_path, pair,
                                                                        monkeypatch)
    assert gate(pair[1], fed.store.hedge(group).copies[1]) is None  # nobody told yet
    async with settled_after_restart(tmp_path, fed, pair, group) as fed:
        assert_beta_won(fed, pair, group)


def settle_tasks() -> list[asyncio.Task]:
    """The hedge settles still pending on the loop."""
    return [t for t in asyncio.all_tasks() if not t.done()
            and getattr(t.get_coro(), "__qualname__", "").endswith("_hedge_settle")]


async def test_hedge_closed_while_telling_the_winner_go_is_finished_by_the_next_engine(
        tmp_path, pair, monkeypatch):
    """Beta starts first; the engine is closed while its "go" is being written (alpha's
    loser already stopped): close cancels and awaits that settle, leaving no task behind,
    and the next engine tells beta "go", once."""
    fed = hedge_engine(tmp_path, pair, monkeypatch)
    _, wait = journal_waiter(fed)
    await fed.submit(spec(tmp_path), hedge=2)
    [group] = [r.id for r in fed.store.open_hedges()]
    writing_go, never = asyncio.Event(), asyncio.Event()

    async def stuck(token: str, decision: str) -> None:
        writing_go.set()
        await never.wait()
    monkeypatch.setattr(fed.site("beta"), "decide_hedge", stuck)
    await _start(fed, pair[1], "5300")
    await asyncio.wait_for(writing_go.wait(), 30)
    await wait(lambda ev: ev.kind == "hedge.cancelled" and ev.job_id == "alpha:4300")
    assert settle_tasks()
    await fed.close()
    assert settle_tasks() == [] and len(fed._hedge_settles) == 0
    assert gate(pair[1], fed.store.hedge(group).copies[1]) is None  # beta still waits
    assert [r.id for r in fed.store.open_hedges()] == [group]
    monkeypatch.undo()
    nxt = engine(tmp_path, *pair)
    _, wait = journal_waiter(nxt)
    await nxt.start()
    try:
        await settled(nxt, group, wait)
        assert_beta_won(nxt, pair, group)
        assert nxt.store.open_hedges() == []
    finally:
        await nxt.close()


async def test_hedge_whose_go_keeps_failing_keeps_no_backoff_once_it_ended(tmp_path, pair,
                                                                          monkeypatch):
    """Beta's "go" cannot be written (its site refuses): the engine backs off and retries
    while beta waits; once every copy ended, the group keeps no backoff or retry."""
    fed = hedge_engine(tmp_path, pair, monkeypatch)
    await fed.start(recover=False)
    await fed.submit(spec(tmp_path), hedge=2)
    [group] = [r.id for r in fed.store.open_hedges()]

    async def refused(token: str, decision: str) -> None:
        raise SiteError("beta: cannot write the decision (permission denied)")
    monkeypatch.setattr(fed.site("beta"), "decide_hedge", refused)
    await _start(fed, pair[1], "5300")
    await fed.journal.drain()  # beta's start published: its settle runs
    await asyncio.gather(*list(fed._hedge_settles))
    assert group in fed._hedge_retry_delay and group in fed._hedge_retries
    pair[1].set_state("5300", "TIMEOUT")  # it waited for "go" till its time limit
    await fed.status("beta:5300", refresh=True)
    await fed.journal.drain()
    await asyncio.gather(*list(fed._hedge_settles))
    assert fed.job("beta:5300").state == JobState.TIMEOUT
    assert group not in fed._hedge_retry_delay and group not in fed._hedge_retries
    assert gate(pair[1], fed.store.hedge(group).copies[1]) is None  # never told "go"


async def _hedged_then_killed_at_losers_cancel(tmp_path: Path, pair, monkeypatch, *,
                                              sent: bool) -> tuple[Federation, str]:
    """A hedged job whose beta copy starts first: the server dies as alpha's losing copy is
    cancelled, just before scancel runs (`sent` False) or just after; the dead engine and
    the group."""
    fed = hedge_engine(tmp_path, pair, monkeypatch)
    await fed.submit(spec(tmp_path), hedge=2)
    [group] = [r.id for r in fed.store.open_hedges()]
    hit = await _killed_in_staging(fed, monkeypatch, fed.site("alpha"), "cancel",
                                   before=not sent)
    await _start(fed, pair[1], "5300")
    await asyncio.wait_for(hit.wait(), 30)
    return fed, group


def loser_cancels(fed: Federation) -> list[Event]:
    return [e for e in events(fed, "alpha:4300") if e.kind == "job.cancel-requested"]


async def test_hedge_killed_once_the_losers_cancel_was_sent(tmp_path, pair, monkeypatch):
    fed, group = await _hedged_then_killed_at_losers_cancel(tmp_path, pair, monkeypatch,
                                                            sent=True)
    pair[0].set_state("4300", "CANCELLED")
    async with settled_after_restart(tmp_path, fed, pair, group) as fed:
        assert_beta_won(fed, pair, group)


async def test_hedge_losers_cancel_is_recorded_before_it_is_sent(tmp_path, pair, monkeypatch):
    """Killed between the record and scancel: the next engine finds the loser still queued
    and sends the cancel once, the loser ending with the hedged reason."""
    fed, group = await _hedged_then_killed_at_losers_cancel(tmp_path, pair, monkeypatch,
                                                            sent=False)
    unsent = pair[0].commands("scancel")
    async with restarted(tmp_path, fed, *pair) as fed:
        _, wait = journal_waiter(fed)
        assert unsent == []
        [asked] = loser_cancels(fed)  # recorded by the engine that died
        assert asked.data["reason"] == "hedged: beta:5300 started first"
        await settled(fed, group, wait)
        assert_beta_won(fed, pair, group)
        assert pair[0].commands("scancel") == ["scancel 4300"]
        loser = fed.job("alpha:4300")
        assert loser.reason == "hedged: beta:5300 started first"
        assert hedge_winner_of(loser) == "beta:5300"  # a kernel waiting on it follows beta
        assert len(loser_cancels(fed)) == 1


async def test_hedge_losers_cancel_sent_then_killed_is_not_sent_again(tmp_path, pair,
                                                                     monkeypatch):
    """scancel went out, the server died, the scheduler cancelled the loser and forgot it
    while no engine ran: the next engine looks first and sends nothing again; the loser
    ends CANCELLED with the hedged reason, its cancel finished once."""
    fed, group = await _hedged_then_killed_at_losers_cancel(tmp_path, pair, monkeypatch,
                                                            sent=True)
    pair[0].forget("4300")
    async with settled_after_restart(tmp_path, fed, pair, group) as fed:
        assert_beta_won(fed, pair, group)
        assert pair[0].commands("scancel") == ["scancel 4300"]
        loser = fed.job("alpha:4300")
        assert loser.state == JobState.CANCELLED
        assert hedge_winner_of(loser) == "beta:5300", loser.reason
        [finished] = [e for e in events(fed, loser) if e.kind == "hedge.cancelled"]
        assert finished.data["winner"] == "beta:5300"


async def test_hedge_losers_id_reused_while_no_engine_ran_is_not_cancelled(tmp_path, pair,
                                                                          monkeypatch):
    """The loser left the queue unseen and another user's job got its id: the cancel sent
    again would kill that job. Nothing is sent; the loser ends CANCELLED."""
    fed, group = await _hedged_then_killed_at_losers_cancel(tmp_path, pair, monkeypatch,
                                                            sent=True)
    pair[0].reuse("4300", "RUNNING")
    async with settled_after_restart(tmp_path, fed, pair, group) as fed:
        assert pair[0].commands("scancel") == ["scancel 4300"]  # the first, before the kill
        loser = fed.job("alpha:4300")
        assert loser.state == JobState.CANCELLED and hedge_winner_of(loser) == "beta:5300"


async def test_hedge_loser_started_while_no_engine_ran_never_runs_the_body(tmp_path, pair,
                                                                          monkeypatch):
    """Killed between the record and scancel; the loser then started and waits at its gate:
    the next engine, finding it running, cancels it and writes "no" for it (never "go"),
    and does not let it claim the group."""
    fed, group = await _hedged_then_killed_at_losers_cancel(tmp_path, pair, monkeypatch,
                                                            sent=False)
    pair[0].set_state("4300", "RUNNING")
    async with settled_after_restart(tmp_path, fed, pair, group) as fed:
        assert_beta_won(fed, pair, group)
        assert pair[0].commands("scancel") == ["scancel 4300"]
        assert len(fed.store.events_since(0, kinds=["hedge.decided"], limit=None)) == 1


async def test_hedge_cancelled_by_the_user_killed_before_scancel_is_sent_by_recovery(
        tmp_path, pair, monkeypatch):
    """The user cancels a hedged job before any copy started; the server dies before the
    scancels went out: the next engine sends each (recorded first), once."""
    fed = hedge_engine(tmp_path, pair, monkeypatch)
    job = await fed.submit(spec(tmp_path), hedge=2)
    for name in ("alpha", "beta"):
        die_before(monkeypatch, fed.site(name), "cancel")
    async with recovered(tmp_path, fed, fed.cancel(job.id), *pair) as fed:
        assert pair[0].commands("scancel") == ["scancel 4300"]
        assert pair[1].commands("scancel") == ["scancel 5300"]
        for native, q in (("4300", pair[0]), ("5300", pair[1])):
            q.set_state(native, "CANCELLED")
            done = await fed.wait(f"{q.site.name}:{native}", refresh=True, timeout=30)
            assert done.state == JobState.CANCELLED
        for q in pair:
            assert_once(fed, q)


def _scancel_refused(slurm: MiniSlurm) -> None:
    """The site's scancel refuses every job as already ended (noting the call first)."""
    path = slurm.bin_dir / "scancel"
    path.write_text(f'#!/bin/sh\necho "scancel $*" >> {slurm.calls}\n'
                    'echo "scancel: error: Kill job error on job id $1: Job/step already '
                    'completing or completed" >&2\nexit 1\n')


async def _loser_told_no_then_killed(tmp_path: Path, pair, monkeypatch, end: str | None
                                     ) -> tuple[Federation, str]:
    """Beta's copy starts first; alpha's losing copy cannot be cancelled (its scancel is
    refused: the copy had ended) and is told "no"; the server dies before recording it
    CANCELLED. Alpha's copy then ends (its wrapper, told "no", exited without running the
    body): squeue says `end`, or (None) only accounting knows it, failed with exit code 1.
    The dead engine and the group."""
    fed = hedge_engine(tmp_path, pair, monkeypatch)
    await fed.submit(spec(tmp_path), hedge=2)
    [group] = [r.id for r in fed.store.open_hedges()]
    _scancel_refused(pair[0])
    told = asyncio.Event()
    real_gate = fed._hedge_gate

    async def gate_then_die(job: Job, decision: str) -> bool:
        written = await real_gate(job, decision)
        if decision == "no":
            told.set()
            raise die_in_task("_hedge_gate")
        return written
    monkeypatch.setattr(fed, "_hedge_gate", gate_then_die)
    await _start(fed, pair[1], "5300")
    await asyncio.wait_for(told.wait(), 30)
    assert fed.job("alpha:4300").state == JobState.PENDING  # its end not recorded yet
    assert gate(pair[0], fed.job("alpha:4300")) == "no"
    if end is None:
        pair[0].forget("4300")
        pair[0].acct.write_text("4300|FAILED|1:0|2026-01-01T00:00:01|2026-01-01T00:00:09|"
                                "n1|nl|4300\n")
    else:
        pair[0].set_state("4300", end)
    return fed, group


@pytest.mark.parametrize("end", ["COMPLETED", None], ids=["completed", "failed-exit-1"])
async def test_hedge_loser_told_no_then_killed_ends_cancelled_not_completed(
        tmp_path, pair, monkeypatch, end):
    """The loser's end, whatever its scheduler calls it, is recorded by the next engine as
    what it was: CANCELLED for the copy that started first, its cancel finished once; the
    winner alone ends COMPLETED, as the CLI's `diamond jobs --json` shows."""
    fed, group = await _loser_told_no_then_killed(tmp_path, pair, monkeypatch, end)
    async with settled_after_restart(tmp_path, fed, pair, group) as fed:
        loser = fed.job("alpha:4300")
        assert (loser.state, loser.reason) == (JobState.CANCELLED,
                                              "hedged: beta:5300 started first")
        assert hedge_winner_of(loser) == "beta:5300"
        assert JobState.COMPLETED.value not in [e.data.get("state") for e in events(fed, loser)
                                                if e.kind == "job.state"]
        [finished] = [e for e in events(fed, loser) if e.kind == "hedge.cancelled"]
        assert finished.data["winner"] == "beta:5300"
        assert gate(pair[0], loser) == "no" and gate(pair[1], fed.job("beta:5300")) == "go"
        pair[1].set_state("5300", "COMPLETED")
        done = await fed.wait("beta:5300", refresh=True, timeout=30)
        assert done.state == JobState.COMPLETED
        config = tmp_path / "cli.yaml"
        config.write_text(yaml.safe_dump({"store": str(tmp_path / "store.sqlite"), "sites": [
            q.site.cfg.model_dump(mode="json") for q in pair]}))
        env = {**os.environ, "DIAMOND_DATA_DIR": str(tmp_path / "data"),
               "DIAMOND_HANDOVER": "0"}
        listed = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "diamond_jupyter.cli", "jobs", "--json",
                             "--config", str(config)],
            capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
        assert listed.returncode == 0, listed.stderr
        shown = {j["id"]: (j["state"], j["reason"]) for j in json.loads(listed.stdout)}
        assert shown == {"alpha:4300": ("CANCELLED", "hedged: beta:5300 started first"),
                         "beta:5300": ("COMPLETED", done.reason)}
        for q in pair:
            assert_once(fed, q)


async def test_hedge_loser_seen_ended_before_the_engine_marks_it_stays_cancelled(
        tmp_path, pair, monkeypatch):
    """No restart: a poll sees the loser (told "no") leave the queue COMPLETED before the
    engine recorded it CANCELLED; the poll's end is recorded CANCELLED with the hedged
    reason, and the engine's own record afterwards changes nothing."""
    fed = hedge_engine(tmp_path, pair, monkeypatch)
    await fed.submit(spec(tmp_path), hedge=2)
    [group] = [r.id for r in fed.store.open_hedges()]
    claimed, go_on = asyncio.Event(), asyncio.Event()
    real_gate = fed._hedge_gate

    async def gate_held(job: Job, decision: str) -> bool:
        written = await real_gate(job, decision)
        if decision == "no":
            claimed.set()
            await go_on.wait()  # the poll below comes first
        return written
    monkeypatch.setattr(fed, "_hedge_gate", gate_held)
    _scancel_refused(pair[0])
    await _start(fed, pair[1], "5300")
    await asyncio.wait_for(claimed.wait(), 30)
    pair[0].set_state("4300", "COMPLETED")
    seen = await fed.status("alpha:4300", refresh=True)
    assert (seen.state, seen.reason) == (JobState.CANCELLED, "hedged: beta:5300 started first")
    go_on.set()
    _, wait = journal_waiter(fed)
    await settled(fed, group, wait)
    loser = fed.job("alpha:4300")
    assert (loser.state, loser.reason) == (seen.state, seen.reason)
    ended = [(e.data["state"], e.data.get("source")) for e in events(fed, loser)
             if e.kind == "job.state" and e.data["state"] != "PENDING"]
    assert ended == [("CANCELLED", "poll")]  # the poll's end, recorded as what it was
    assert fed.store.hedge(group).winner == fed.job("beta:5300").token


async def test_hedge_loser_ended_before_its_cancel_was_asked_is_finished_once(
        tmp_path, pair, monkeypatch):
    """Killed once beta's start was claimed, before alpha's cancel was recorded; another
    process sharing the store saw alpha's copy end FAILED (it never ran the body): the end
    is recorded CANCELLED for beta, and the next engine finishes that loser's cancel once
    without sending a cancel to a copy that is over."""
    fed, group = await _hedged_then_killed_once_betas_start_was_claimed(tmp_path, pair,
                                                                        monkeypatch)
    await kill(fed)
    pair[0].set_state("4300", "FAILED")
    Store(tmp_path / "store.sqlite").apply_state("alpha:4300", JobState.FAILED, exit_code=1,
                                                  source="poll")
    async with settled_after_restart(tmp_path, fed, pair, group) as fed:
        loser = fed.job("alpha:4300")
        assert (loser.state, loser.reason) == (JobState.CANCELLED,
                                              "hedged: beta:5300 started first")
        assert pair[0].commands("scancel") == []
        [finished] = [e for e in events(fed, loser) if e.kind == "hedge.cancelled"]
        assert finished.data["winner"] == "beta:5300"
        assert finished.data["cancelled_by_scheduler"] is False
        assert gate(pair[1], fed.job("beta:5300")) == "go"


async def _older_store_with_a_completed_loser(tmp_path, pair, monkeypatch) -> Federation:
    """A hedge settled for beta:5300 and both copies ended, alpha:4300 (the loser) recorded
    COMPLETED as an engine from before that rule left it; the engine killed after."""
    fed = hedge_engine(tmp_path, pair, monkeypatch)
    await fed.submit(spec(tmp_path), hedge=2)
    [group] = [r.id for r in fed.store.open_hedges()]
    await _start(fed, pair[1], "5300")
    _, wait = journal_waiter(fed)
    await settled(fed, group, wait)
    pair[1].set_state("5300", "COMPLETED")
    assert (await fed.wait("beta:5300", refresh=True, timeout=30)).state == JobState.COMPLETED
    with fed.store._write() as c:  # as the older engine left it
        c.execute("UPDATE jobs SET state = 'COMPLETED', reason = NULL WHERE id = ?",
                  ("alpha:4300",))
    await kill(fed)
    return fed


async def test_hedge_loser_an_older_engine_recorded_completed_is_listed_cancelled(
        tmp_path, pair, monkeypatch):
    """A store where an engine from before this rule recorded the loser COMPLETED: the
    listing (`diamond jobs`, with no engine started) and the next engine's recovery show it
    CANCELLED for the winner, with an event saying so, once; the winner stays COMPLETED."""
    fed = await _older_store_with_a_completed_loser(tmp_path, pair, monkeypatch)
    lister = engine(tmp_path, *pair)  # as `diamond jobs` opens it: never started
    shown = {j.id: (j.state, j.reason) for j in lister.jobs()}
    assert shown == {"alpha:4300": (JobState.CANCELLED, "hedged: beta:5300 started first"),
                     "beta:5300": (JobState.COMPLETED, fed.job("beta:5300").reason)}
    [corrected] = [e for e in events(lister, "alpha:4300") if e.kind == "job.state"
                   and e.data.get("previous") == "COMPLETED"]
    assert corrected.data["state"] == "CANCELLED"
    assert hedge_winner_of(lister.job("alpha:4300")) == "beta:5300"
    async with restarted(tmp_path, lister, *pair) as again:
        assert [e.seq for e in events(again, "alpha:4300") if e.kind == "job.state"
                and e.data.get("previous") == "COMPLETED"] == [corrected.seq]
        assert again.job("alpha:4300").state == JobState.CANCELLED


async def test_an_older_loser_is_corrected_as_the_store_opens_and_a_listing_writes_nothing(
        tmp_path, pair, monkeypatch):
    """Before, each listing (`diamond jobs`, GET /jobs, `%diamond jobs`) looked for such
    losers and wrote their correction: now the engine corrects them once, as it opens the
    store, published at its start; listing then only reads, however often."""
    await _older_store_with_a_completed_loser(tmp_path, pair, monkeypatch)
    opened = engine(tmp_path, *pair)  # not started, nothing listed yet
    loser = opened.store.get_job("alpha:4300")
    assert (loser.state, loser.reason) == (JobState.CANCELLED, "hedged: beta:5300 started first")
    writes = opened.store._conn().total_changes
    first, second = opened.jobs(), opened.jobs(site="alpha")
    assert opened.store._conn().total_changes == writes
    assert {j.id: j.state for j in first} == {"alpha:4300": JobState.CANCELLED,
                                              "beta:5300": JobState.COMPLETED}
    assert [j.id for j in second] == ["alpha:4300"]
    published: list = []
    opened.journal.subscribe(published.append)
    await opened.start()  # the server's engine: the correction's event reaches its listeners
    try:
        assert [(e.job_id, e.data["previous"]) for e in published if e.kind == "job.state"
                and e.data.get("previous") == "COMPLETED"] == [("alpha:4300", "COMPLETED")]
    finally:
        await opened.close()


# -- staging: stage-in, its release, stage-out -----------------------------------------------

def staged_spec(tmp_path: Path) -> JobSpec:
    """A job whose input is the user's file in.dat (brought in first) and whose out.dat is
    copied back to back.dat after it."""
    (tmp_path / "in.dat").write_text("the user's input\n")
    return spec(tmp_path, stage_in=[StageEntry(source=str(tmp_path / "in.dat"),
                                               destination="in.dat")],
                stage_out=[StageEntry(source="out.dat", destination=str(tmp_path / "back.dat"))])


def phases(fed: Federation, job: Job) -> list[str]:
    return [k for k in kinds(fed, job) if k.startswith(("stage.", "job.released"))]


async def _killed_in_staging(fed: Federation, monkeypatch, obj: Any, name: str, *,
                             before: bool = False) -> asyncio.Event:
    """`obj.name` (run by the staging's own task) kills the server there: set once it did."""
    hit = asyncio.Event()
    real = getattr(obj, name)

    async def dying(*a, **k):
        if not before:
            await real(*a, **k)
        hit.set()
        raise die_in_task(name)
    monkeypatch.setattr(obj, name, dying)
    return hit


async def _staged_to_its_end(tmp_path: Path, fed: Federation, slurm: MiniSlurm, job: Job
                             ) -> Job:
    """Run the job (it writes out.dat), end it, and wait for its stage-out."""
    _, wait = journal_waiter(fed)
    if not fed.store.events_since(0, kinds=["job.released"], job_id=job.id, limit=1):
        await wait(lambda ev: ev.kind == "job.released")
    (tmp_path / "wd" / "out.dat").write_text("the job's output\n")
    slurm.set_state(job.native_id or "", "COMPLETED")
    await fed.status(job.id, refresh=True)
    if not fed.store.events_since(0, kinds=["stage.out.done"], job_id=job.id, limit=1):
        await wait(lambda ev: ev.kind == "stage.out.done" and ev.job_id == job.id)
    return fed.job(job.id)


def assert_staged_once(fed: Federation, slurm: MiniSlurm, job: Job, tmp_path: Path) -> None:
    assert_once(fed, slurm)
    got = phases(fed, job)
    for once in ("stage.in.done", "job.released", "stage.out.done"):
        assert got.count(once) == 1, got
    assert slurm.commands("scontrol release") == ["scontrol release 4300"]  # sent once
    assert (tmp_path / "in.dat").read_text() == "the user's input\n"  # the user's file
    assert (tmp_path / "wd" / "in.dat").read_text() == "the user's input\n"
    assert (tmp_path / "back.dat").read_text() == "the job's output\n"
    states = [e.data["state"] for e in events(fed, job) if e.kind == "job.state"]
    assert states == ["PENDING", "COMPLETED"], states


@pytest.mark.parametrize("where, before", [
    ("copied", False),          # the input is there, stage.in.done not yet written
    ("release", True),          # stage.in.done written, the release not sent
    ("release", False),         # the release sent, job.released not yet written
])
async def test_staged_job_killed_in_its_stage_in(tmp_path, slurm, monkeypatch, where, before):
    fed = engine(tmp_path, slurm)
    await fed.start(recover=False)
    obj, name = (fed.mover, "transfer") if where == "copied" else (fed.site("alpha"), "release")
    hit = await _killed_in_staging(fed, monkeypatch, obj, name, before=before)
    job = await fed.submit(staged_spec(tmp_path), "alpha", force=True)
    await asyncio.wait_for(hit.wait(), 30)
    async with restarted(tmp_path, fed, slurm) as fed:
        done = await _staged_to_its_end(tmp_path, fed, slurm, job)
        assert done.state == JobState.COMPLETED
        assert_staged_once(fed, slurm, job, tmp_path)


async def test_staged_job_killed_once_its_output_was_copied_back(tmp_path, slurm, monkeypatch):
    fed = engine(tmp_path, slurm)
    await fed.start(recover=False)
    job = await fed.submit(staged_spec(tmp_path), "alpha", force=True)
    _, wait = journal_waiter(fed)
    await wait(lambda ev: ev.kind == "job.released")
    hit = asyncio.Event()
    real_emit = fed.mover.emit

    def emit_unless_copied_back(kind: str, *a, **k):
        if kind == "stage.out.done":  # the output is back; the server dies before saying so
            hit.set()
            raise die_in_task(kind)
        return real_emit(kind, *a, **k)
    monkeypatch.setattr(fed.mover, "emit", emit_unless_copied_back)
    (tmp_path / "wd" / "out.dat").write_text("the job's output\n")
    slurm.set_state("4300", "COMPLETED")
    await fed.status(job.id, refresh=True)
    await asyncio.wait_for(hit.wait(), 30)
    assert (tmp_path / "back.dat").read_text() == "the job's output\n"
    (tmp_path / "wd" / "out.dat").write_text("changed on the site since\n")
    async with restarted(tmp_path, fed, slurm) as fed:
        _, wait = journal_waiter(fed)
        if not fed.store.events_since(0, kinds=["stage.out.done"], job_id=job.id, limit=1):
            await wait(lambda ev: ev.kind == "stage.out.done")
        got = phases(fed, job)
        assert got.count("stage.out.done") == 1, got
        assert fed.job(job.id).state == JobState.COMPLETED
        assert_once(fed, slurm)


# -- a workflow step's release ---------------------------------------------------------------

WORKFLOW = {"name": "pair", "steps": [
    {"name": "first", "site": "alpha", "script": "#!/bin/sh\necho made > out.txt\n"},
    {"name": "second", "site": "beta", "needs": ["first"],
     "inputs": [{"from": "first", "path": "out.txt"}], "script": "#!/bin/sh\ncat out.txt\n"}]}


@pytest.mark.parametrize("dies", ["moved", "let go"])
async def test_workflow_killed_as_a_step_is_let_go(tmp_path, pair, monkeypatch, dies):
    """The upstream ended, its file was copied to the next step's site, and the server died
    before the step was marked ready ("moved"), or once its gate was dropped or its hold
    released ("let go"), before that was recorded: the next engine lets it go, with the file
    copied once and intact, and no step submitted twice."""
    alpha, beta = pair
    fed = engine(tmp_path, *pair)

    async def nothing_to_refuse(wf):
        return {}
    monkeypatch.setattr(fed, "check_steps_runnable", nothing_to_refuse)
    await fed.start()
    view = await fed.run_workflow(WORKFLOW)
    wid = view.id
    first = fed.store.job_by_token(fed.store.get_workflow(wid).step("first").token)
    second = fed.store.job_by_token(fed.store.get_workflow(wid).step("second").token)
    assert first is not None and second is not None and second.site == "beta"
    Path(first.workdir or "").mkdir(parents=True, exist_ok=True)
    (Path(first.workdir or "") / "out.txt").write_text("made\n")
    moved = asyncio.Event()

    def dying(obj: Any, name: str) -> None:
        real = getattr(obj, name)

        async def then_die(*a, **k):
            await real(*a, **k)
            moved.set()
            raise die_in_task(name)
        monkeypatch.setattr(obj, name, then_die)
    if dies == "moved":
        dying(fed.mover, "transfer")
    else:
        dying(fed.site("beta"), "cancel")
        dying(fed.site("beta"), "release")
    alpha.set_state(first.native_id or "", "COMPLETED")
    await fed.status(first.id, refresh=True)
    await asyncio.wait_for(moved.wait(), 30)
    landed = Path(second.workdir or "") / "out.txt"
    assert landed.read_text() == "made\n"
    async with restarted(tmp_path, fed, *pair) as fed:
        monkeypatch.setattr(fed, "check_steps_runnable", nothing_to_refuse)
        _, wait = journal_waiter(fed)
        if fed.store.get_workflow(wid).step("second").phase != "released":
            await wait(lambda ev: ev.kind.startswith("workflow.") and
                       fed.store.get_workflow(wid).step("second").phase == "released")
        assert landed.read_text() == "made\n"
        for q in pair:
            assert_once(fed, q)
        lets_go = beta.commands("scontrol release") + beta.commands("scancel")
        assert len(set(lets_go)) == 1, lets_go  # its gate dropped, or the step released
        moves = [e for e in fed.store.events_since(0, limit=None)
                 if e.kind.startswith("workflow.") and (e.data or {}).get("phase") == "ready"]
        assert len(moves) <= 1, moves


# -- a release sent again after a restart ----------------------------------------------------

async def test_a_held_jobs_release_asked_again_after_a_restart_is_not_sent_twice(
        tmp_path, slurm, monkeypatch):
    slurm.refuse_unheld.touch()  # as PBS and LSF do: a job no longer held is refused
    fed = engine(tmp_path, slurm)
    job = await fed.submit(spec(tmp_path), "alpha", force=True, hold=True)
    die_after(monkeypatch, fed.site("alpha"), "release")
    async with recovered(tmp_path, fed, fed.release(job.id), slurm) as fed:
        assert (await fed.release(job.id)).state == JobState.PENDING  # no error
        assert slurm.commands("scontrol release") == ["scontrol release 4300"]
        assert kinds(fed, job).count("job.releasing") == 1


async def test_a_staged_release_refused_as_not_held_after_a_restart_keeps_the_job(
        tmp_path, slurm, monkeypatch):
    """The release went out, the server died; the next one cannot look the job up and
    sends the release again, which the scheduler refuses (the job is no longer held)."""
    slurm.refuse_unheld.touch()
    fed = engine(tmp_path, slurm)
    await fed.start(recover=False)
    hit = await _killed_in_staging(fed, monkeypatch, fed.site("alpha"), "release")
    job = await fed.submit(staged_spec(tmp_path), "alpha", force=True)
    await asyncio.wait_for(hit.wait(), 30)
    # once the server is dead: its explicit-site prediction's queue snapshot, in flight
    # at the release, must not be the look-up that fails
    async with restarted(tmp_path, fed, slurm, meanwhile=slurm.squeue_fails.touch) as fed:
        done = await _staged_to_its_end(tmp_path, fed, slurm, job)
        assert done.state == JobState.COMPLETED, done.reason
        assert slurm.commands("scontrol release") == ["scontrol release 4300"] * 2
        assert not slurm.squeue_fails.exists()  # the look-up did fail once
        got = phases(fed, job)
        assert got.count("job.released") == 1 and got.count("stage.out.done") == 1, got


async def _settles_done(fed: Federation, groups: list[str]) -> None:
    """Until each settle of `groups` asked so far (by their copies' events) has run: a
    group's lock is granted in turn, so once it is ours every earlier settle is done."""
    for group in groups:
        async with fed._hedge_locks.held(group):
            pass


async def test_hedged_groups_that_ended_leave_no_lock_or_decision_in_the_engine(
        tmp_path, pair, monkeypatch):
    """Before, every hedged group an engine settled kept its lock, and every decision it
    wrote ("go", "no") stayed marked, for as long as the engine ran: a server's grew by one
    a hedged job. Now a group's lock goes once no settle holds or awaits it, and a copy's
    decision once the copy has ended; an ended winner is not told "go" again."""
    fed = hedge_engine(tmp_path, pair, monkeypatch)
    _, wait = journal_waiter(fed)
    alpha, beta = pair
    groups = []
    for n in range(3):
        job = await fed.submit(spec(tmp_path), hedge=2)
        groups.append(job.hedge_group)
        await _start(fed, beta, str(5300 + n))
        winner = await fed.hedge_winner(job.hedge_group, timeout=30)
        await wait(lambda ev, won=winner.id: ev.kind == "hedge.go" and ev.job_id == won)
        assert (winner.token, "go") in fed._hedge_gated  # kept while the winner runs
        beta.set_state(str(5300 + n), "COMPLETED")
        await fed.status(f"beta:{5300 + n}", refresh=True)
        await fed.hedge_winner(job.hedge_group, timeout=30)  # after the settle its end asked
    assert [fed.store.hedge(g).winner_job.state for g in groups] == [JobState.COMPLETED] * 3
    await _settles_done(fed, groups)
    assert len(fed._hedge_locks) == 0 and fed._hedge_gated == set()
    written: list[tuple[str, str]] = []

    def noted(site: str) -> Callable[[str, str], Awaitable[None]]:
        async def decide(token: str, decision: str) -> None:
            written.append((site, decision))
        return decide
    for name in ("alpha", "beta"):
        monkeypatch.setattr(fed.site(name), "decide_hedge", noted(name))
    for g in groups:  # a settle of an ended group writes nothing again
        await fed.hedge_winner(g, timeout=30)
    await _settles_done(fed, groups)
    assert [gate(beta, fed.store.hedge(g).winner_job) for g in groups] == ["go"] * 3
    assert written == [] and beta.commands("scancel") == []
    assert len(fed.store.events_since(0, kinds=["hedge.go"], limit=None)) == 3
    assert len(fed._hedge_locks) == 0 and fed._hedge_gated == set()
