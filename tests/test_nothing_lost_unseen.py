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
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from local_slurm import LocalSlurmQueue
from one_site_engine import one_site_federation

from diamond_jupyter import leases
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import Event, Job, JobSpec, JobState
from diamond_jupyter.sites import token_tag

NAME_NOTE = ("job name 'my job' is submitted to alpha as 'my_job' (blanks become '_', at most "
             "40 characters are kept)")


class Killed(BaseException):
    """The server's process died here (nothing in the engine catches a BaseException of its
    own, as nothing runs after a SIGKILL)."""


class MiniSlurm(LocalSlurmQueue):
    """The local Slurm site `alpha`: `sbatch` queues the job PENDING under the next id (from
    4300) with its token in the comment, and notes `sbatch TOKEN` in `calls`; `scancel` and
    `scontrol` note their arguments; `squeue` prints the queue file."""

    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path)
        self.calls = tmp_path / "calls.txt"
        self.calls.write_text("")
        counter = tmp_path / "next-id"
        counter.write_text("4300\n")
        line = (f"$id|PENDING|N/A|N/A|2026-01-01T00:00:00|10:00|1|1|{getpass.getuser()}|"
                "debug|N/A||Priority|$tok|job")
        for name, body in (
                ("sbatch", f'for last; do :; done\n'
                           f'tok=$(grep -o "{token_tag("")}[0-9a-f]*" "$last" | head -n 1)\n'
                           f'id=$(cat {counter}); echo $((id + 1)) > {counter}\n'
                           f'echo "sbatch $tok" >> {self.calls}\n'
                           f'echo "{line}" >> {self.queue}\necho $id\n'),
                ("scancel", f'echo "scancel $*" >> {self.calls}\n'),
                ("scontrol", f'echo "scontrol $*" >> {self.calls}\n')):
            path = self.bin_dir / name
            path.write_text(f"#!/bin/sh\n{body}")
            path.chmod(0o755)

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
                         f"{getpass.getuser()}|debug|N/A||None|{token_tag(token or 'f' * 12)}|x")
        self.queue.write_text("".join(ln + "\n" for ln in lines))

    def reuse(self, native_id: str, state: str = "PENDING") -> None:
        """The scheduler gives `native_id` to another job (another token): its line replaces
        every line of that id."""
        lines = [ln for ln in self.queue.read_text().splitlines()
                 if ln.split("|")[0] != native_id]
        self.queue.write_text("".join(ln + "\n" for ln in lines))
        self.set_state(native_id, state, token="b" * 12)


@pytest.fixture
def slurm(tmp_path) -> MiniSlurm:
    return MiniSlurm(tmp_path)


def engine(tmp_path: Path, slurm: MiniSlurm, **kw: Any) -> Federation:
    """An engine over `alpha` on the store tmp_path/store.sqlite that never polls on its own
    and looks a lost submit up at once."""
    settings: dict[str, Any] = {"poll_interval_s": 3600, "min_poll_s": 3600, "intent_grace_s": 0,
                                "unsure_submit_settle_s": 0.2} | kw
    return one_site_federation(tmp_path, slurm.site.cfg, **settings)


async def kill(fed: Federation) -> None:
    """The server's process dies: whatever it was running stops, its lease is gone with it,
    and nothing is handed back or closed."""
    me = asyncio.current_task()
    tasks = [t for t in asyncio.all_tasks() if t is not me]
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    if fed.lease._id is not None:
        leases.unregister(fed.lease._id)


async def restart(tmp_path: Path, slurm: MiniSlurm, dead: Federation, **kw: Any) -> Federation:
    """Kill `dead` and start a new server engine (with recovery) on the same store."""
    await kill(dead)
    fed = engine(tmp_path, slurm, **kw)
    await fed.start()
    return fed


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
    return any("sbatch" in str(x) for x in argv)


# -- submit: killed between each pair of its steps ---------------------------------------

async def test_killed_while_the_job_is_prepared_records_nothing(tmp_path, slurm,
                                                                  monkeypatch):
    fed = engine(tmp_path, slurm)
    die_before(monkeypatch, fed.site("alpha"), "prepare")
    with pytest.raises(Killed):
        await fed.submit(spec(tmp_path), "alpha", force=True)
    fed = await restart(tmp_path, slurm, fed)
    try:
        assert fed.store.list_jobs(limit=None) == [] and slurm.submits() == Counter()
        assert fed.store.events_since(0, limit=None) == []
    finally:
        await fed.close()


async def test_killed_while_the_script_is_rendered_closes_the_intent_unsent(
        tmp_path, slurm, monkeypatch):
    """The script is rendered (and uploaded) while the intent is written: a kill there
    leaves an intent, closed as never submitted by the next engine, nothing sent."""
    fed = engine(tmp_path, slurm)
    die_before(monkeypatch, fed.site("alpha"), "render")
    with pytest.raises(Killed):
        await fed.submit(spec(tmp_path), "alpha", force=True)
    fed = await restart(tmp_path, slurm, fed, unsure_submit_settle_s=0)
    try:
        [job] = assert_once(fed, slurm)
        assert job.state == JobState.FAILED and slurm.submits() == Counter()
        assert kinds(fed, job) == ["job.submitting", "job.state"]
    finally:
        await fed.close()


async def test_killed_right_after_the_intent_is_written_closes_it_unsent(tmp_path, slurm,
                                                                         monkeypatch):
    fed = engine(tmp_path, slurm)
    die_after(monkeypatch, fed.store, "record_intent")
    with pytest.raises(Killed):
        await fed.submit(spec(tmp_path), "alpha", force=True)
    fed = await restart(tmp_path, slurm, fed, unsure_submit_settle_s=0)
    try:
        [job] = assert_once(fed, slurm)
        assert job.state == JobState.FAILED and job.native_id is None
        assert job.reason == "the submit did not reach the scheduler"
        assert slurm.submits() == Counter()
        assert kinds(fed, job).count("job.state") == 1
    finally:
        await fed.close()


async def test_killed_once_sbatch_ran_but_before_its_answer_binds_the_job_by_token(
        tmp_path, slurm, monkeypatch):
    fed = engine(tmp_path, slurm)
    die_after(monkeypatch, fed.site("alpha"), "run", when=_sbatch)
    with pytest.raises(Killed):
        await fed.submit(spec(tmp_path), "alpha", force=True)
    fed = await restart(tmp_path, slurm, fed)
    try:
        [job] = assert_once(fed, slurm)
        assert job.id == "alpha:4300" and job.state == JobState.PENDING
        assert kinds(fed, job).count("job.submitted") == 1
    finally:
        await fed.close()


async def test_killed_after_the_id_came_back_but_before_it_was_recorded(tmp_path, slurm,
                                                                        monkeypatch):
    fed = engine(tmp_path, slurm)
    die_before(monkeypatch, fed.store, "bind_native_id")
    with pytest.raises(Killed):
        await fed.submit(spec(tmp_path, name="my job"), "alpha", force=True)
    assert fed.store.intents_without_native_id()
    fed = await restart(tmp_path, slurm, fed)
    try:
        [job] = assert_once(fed, slurm)
        assert job.id == "alpha:4300" and job.state == JobState.PENDING
        assert fed.submit_notes(job.id) == [NAME_NOTE]  # the recovery keeps them too
    finally:
        await fed.close()


async def test_killed_right_after_the_job_was_recorded_keeps_its_warnings(
        tmp_path, slurm, monkeypatch):
    """The submit's notes (here a directive approximated) are written with the job's binding
    or not at all lost: a kill between the two kept the job and dropped its notes."""
    fed = engine(tmp_path, slurm)
    die_after(monkeypatch, fed.store, "bind_native_id")
    with pytest.raises(Killed):
        await fed.submit(spec(tmp_path, name="my job"), "alpha", force=True)
    fed = await restart(tmp_path, slurm, fed)
    try:
        [job] = assert_once(fed, slurm)
        assert job.id == "alpha:4300"
        assert kinds(fed, job).count("job.submitted") == 1
        assert fed.submit_notes(job.id) == [NAME_NOTE]
    finally:
        await fed.close()


async def test_a_job_recorded_then_killed_is_followed_to_its_end_by_the_next_engine(
        tmp_path, slurm):
    fed = engine(tmp_path, slurm)
    job = await fed.submit(spec(tmp_path), "alpha", force=True)
    fed = await restart(tmp_path, slurm, fed)
    try:
        slurm.set_state("4300", "COMPLETED")
        done = await fed.wait(job.id, refresh=True, timeout=30)
        assert done.state == JobState.COMPLETED
        [job] = assert_once(fed, slurm)
        assert kinds(fed, job).count("job.state") == 2  # PENDING, then COMPLETED
    finally:
        await fed.close()
