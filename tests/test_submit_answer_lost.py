"""A submit whose answer was lost after its request went out (sbatch's "Socket timed out on
send/recv operation": the controller may have queued the job) is neither marked never
submitted nor sent again: the job is found by its token, now or by the journal's
reconciliation, or the intent is closed as never submitted once the settle time has passed.
A refusal, and a controller that could not be reached at all, stay what they were. A real
engine and store, a local Slurm site whose `sbatch` and `squeue` are fakes; no test bed."""

from __future__ import annotations

import getpass
import json
import signal
import subprocess
import sys

import one_site_engine
import pytest
import sweep_helpers
from local_slurm import LocalSlurmQueue
from one_site_engine import SBATCH_ANSWER_LOST as TIMED_OUT
from one_site_engine import lost_spec
from sweep_helpers import sbatch_calls

from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.model import BadInput, JobState, SiteError
from diamond_jupyter.sites import token_tag
from diamond_jupyter.store import Store
from diamond_jupyter.transports import ConnectionLost

NOT_SENT = ("sbatch: error: Batch job submission failed: Unable to contact slurm controller "
            "(connect failure)")


user = sweep_helpers.new_user


@pytest.fixture
def queue(tmp_path) -> LocalSlurmQueue:
    return LocalSlurmQueue(tmp_path)


@pytest.fixture
def site_cfg(queue):
    return queue.site.cfg


fed = one_site_engine.answer_lost_fed


def _calls(path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.parametrize("commands", [SlurmCommands, PbsCommands])
@pytest.mark.parametrize("stderr, unsure", [
    (TIMED_OUT, True),
    ("sbatch: error: slurm_receive_msg: Zero Bytes were transmitted or received", True),
    (NOT_SENT, False),
    ("sbatch: error: Batch job submission failed: Invalid account or account/partition "
     "combination specified", False),
])
def test_which_failed_submits_may_have_queued_the_job(commands, stderr, unsure):
    assert commands.submit_unsure(1, stderr) is unsure
    assert commands.submit_unsure(0, stderr) is False


async def test_a_job_taken_whose_answer_was_lost_is_bound_by_its_token(tmp_path, queue, fed):
    calls = queue.sbatch_says(TIMED_OUT, takes_the_job=True)
    job = await fed.submit(lost_spec(tmp_path), "alpha", force=True)
    assert job.id == "alpha:4243" and job.native_id == "4243"
    assert not job.state.terminal
    assert len(_calls(calls)) == 1  # not submitted twice
    assert fed.store.intents_without_native_id() == []
    [note] = fed.submit_notes(job.id)
    assert note == (f"alpha: the scheduler's answer to the submit was lost ({TIMED_OUT}); "
                    "the job was found in the queue by its token")


async def test_a_connection_dropped_after_the_submit_was_sent_is_not_lost(
        tmp_path, queue, fed, monkeypatch):
    """The connection dropped once sbatch had run (it took the job): the job is found by
    its token, not marked never submitted."""
    site = fed.site("alpha")
    real_run = site.run

    async def run_then_drop(argv, *args, **kw):
        sent = any("sbatch" in a for a in argv)
        res = await real_run(argv, *args, **{**kw, "check": kw.get("check") and not sent})
        if sent:
            raise ConnectionLost("alpha: connection to login1 lost: closed")
        return res

    monkeypatch.setattr(site, "run", run_then_drop)
    calls = queue.sbatch_says("", takes_the_job=True)
    job = await fed.submit(lost_spec(tmp_path), "alpha", force=True)
    assert job.native_id == "4243" and len(_calls(calls)) == 1
    [note] = fed.submit_notes(job.id)
    assert note == ("alpha: the submit's answer did not come (alpha: connection to login1 "
                    "lost: closed); the job was found in the queue by its token"), note


async def test_a_job_that_shows_in_the_queue_later_is_bound_by_the_reconciliation(
        tmp_path, queue, fed):
    calls = queue.sbatch_says(TIMED_OUT, takes_the_job=False)
    with pytest.raises(SiteError) as told:
        await fed.submit(lost_spec(tmp_path), "alpha", force=True)
    [intent] = fed.store.intents_without_native_id()
    assert str(told.value) == (
        f"alpha: the scheduler's answer to the submit was lost ({TIMED_OUT}): the scheduler "
        "may have taken the job; diamond is checking by its token (bound to the job if it "
        "shows in the queue, else closed as never submitted after 0.5s): do not submit it "
        f"again; `diamond status {intent.id}` tells")
    assert not intent.state.terminal  # open, not "never submitted"
    queue.add("4250", intent.token or "", "lost")  # the controller queued it after all
    await fed.recover(intent_grace_s=0)
    job = fed.job(intent.token or "")
    assert job.native_id == "4250" and not job.state.terminal
    assert len(_calls(calls)) == 1


async def test_a_job_never_taken_is_closed_as_never_submitted_after_the_settle_time(
        tmp_path, queue, fed):
    calls = queue.sbatch_says(TIMED_OUT, takes_the_job=False)
    with pytest.raises(SiteError, match="may have taken the job; diamond is checking"):
        await fed.submit(lost_spec(tmp_path), "alpha", force=True)
    [intent] = fed.store.intents_without_native_id()
    job = await fed.journal.recover_intent_settled(intent)
    assert job.state == JobState.FAILED and job.native_id is None
    assert job.reason == "the submit did not reach the scheduler"
    assert fed.store.intents_without_native_id() == []
    assert len(_calls(calls)) == 1


async def test_a_refusal_and_an_unreached_controller_are_still_closed_at_once(
        tmp_path, queue, fed):
    queue.sbatch_says("sbatch: error: Batch job submission failed: Invalid account or "
                      "account/partition combination specified", takes_the_job=False)
    with pytest.raises(BadInput, match="alpha refused the job: sbatch: error: .*Invalid acc"):
        await fed.submit(lost_spec(tmp_path), "alpha", force=True)
    queue.sbatch_says(NOT_SENT, takes_the_job=False)
    with pytest.raises(SiteError, match="did not answer the submit.*nothing was submitted"):
        await fed.submit(lost_spec(tmp_path), "alpha", force=True)
    assert fed.store.intents_without_native_id() == []
    assert [j.state for j in fed.store.list_jobs()] == [JobState.FAILED] * 2


def _cli_site(user, *, settle_s: float, shows_after: int | None) -> None:
    """The user's site `alpha` with a settle time of `settle_s`: its sbatch takes the job (to a
    file of jobs not yet in the queue) and prints that its answer timed out; its squeue shows
    that job from the `shows_after`-th call after the submit on (None: never)."""
    user.write("sites.yaml", f"sites:\n{user.alpha}store: {user.store_path}\n"
                             f"unsure_submit_settle_s: {settle_s}\n")
    fake, tag = user.fake, token_tag("")
    for prog in ("sbatch", "squeue"):
        (fake / prog).unlink()
    (fake / "sbatch").write_text(
        f'#!/bin/sh\necho "sbatch $*" >> {fake}/calls\nfor last; do :; done\n'
        f'tok=$(grep -o "{tag}[0-9a-f]*" "$last" | head -n 1)\n'
        f'echo "4243|PENDING|N/A|N/A|2026-01-01T00:00:00|10:00|1|1|{getpass.getuser()}|debug|'
        f'N/A||Priority|$tok|job" > {fake}/taken\n'
        f"echo '{TIMED_OUT}' >&2\nexit 1\n")
    shows = (f'[ "$(wc -l < {fake}/looks)" -ge {shows_after} ] && cat {fake}/taken\n'
             if shows_after is not None else "")
    (fake / "squeue").write_text(
        f'#!/bin/sh\necho "squeue $*" >> {fake}/calls\n[ -e {fake}/taken ] || exit 0\n'
        f"echo look >> {fake}/looks\n{shows}exit 0\n")
    for prog in ("sbatch", "squeue"):
        (fake / prog).chmod(0o755)


def _looks(user) -> int:
    return len(_calls(user.fake / "looks"))


def test_the_command_line_finds_the_job_taken_after_a_few_lookups(user):
    """`diamond submit` whose sbatch timed out on its answer, the job showing in the queue
    only at the third look after: the command keeps looking, saying so on stderr, binds the
    job and exits 0 with its id, as a submit that was answered."""
    _cli_site(user, settle_s=60, shows_after=3)
    res = user.run("submit", "--site", "alpha", "job.sh", code=0)
    assert res.stdout.strip() == "alpha:4243", res
    assert "diamond: checking for alpha:pending-" in res.stderr, res.stderr
    assert "up to 60s; Ctrl-C stops checking, the job is kept" in res.stderr
    assert "alpha had taken the job: found in its queue as alpha:4243" in res.stderr
    assert _looks(user) >= 3 and len(sbatch_calls(user)) == 1  # not submitted twice
    (job,) = json.loads(user.run("jobs", "--json", code=0).stdout)
    assert job["id"] == "alpha:4243" and job["state"] == "PENDING", job
    assert Store(user.store_path).intents_without_native_id() == []


def test_the_command_line_closes_a_job_not_found_within_the_settle_time(user):
    """No job carrying the token shows within the settle time: exit 1 (a site failure), the
    intent closed as never submitted, so that submitting again is safe; looked up more than
    once meanwhile."""
    _cli_site(user, settle_s=1.5, shows_after=None)
    res = user.run("submit", "--site", "alpha", "job.sh", "--json", code=1)
    reply = json.loads(res.stdout)
    (job,) = json.loads(user.run("jobs", "--json", code=0).stdout)
    assert reply == {"reason": "failed", "message": (
        "alpha: no job carrying the submit's token showed in the queue within 1.5s: "
        f"{job['id']} is closed as never submitted; nothing was submitted, so submitting it "
        "again is safe")}, reply
    assert f"diamond: alpha: the scheduler's answer to the submit was lost ({TIMED_OUT})" \
        in res.stderr
    assert job["state"] == "FAILED" and job["native_id"] is None, job
    assert job["reason"] == "the submit did not reach the scheduler"
    assert _looks(user) >= 3 and len(sbatch_calls(user)) == 1


def test_ctrl_c_while_the_command_line_checks_leaves_the_intent_open(user):
    """Ctrl-C while `diamond submit` looks for the job its lost answer may have queued: exit
    130, saying the job is kept open and not to submit it again; the intent stays open (the
    journal still binds or closes it), nothing submitted twice."""
    _cli_site(user, settle_s=600, shows_after=None)
    proc = subprocess.Popen([sys.executable, "-m", "diamond_jupyter.cli", "submit", "--site",
                             "alpha", "job.sh"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=user.root,
                            env=user.env(user.sites),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        seen = []
        while not any("diamond: checking for" in line for line in seen):
            line = proc.stderr.readline()
            assert line, ("ended before checking", seen)
            seen.append(line)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130 and "Traceback" not in err, (out, err)
    [intent] = Store(user.store_path).intents_without_native_id()
    assert err.strip().splitlines()[-1] == (
        f"diamond: stopped checking; {intent.id} is kept open, as its site may have taken it "
        f"(do not submit it again; `diamond status {intent.id}` tells once the engine has "
        "looked it up by its token)"), err
    assert out == "" and not intent.state.terminal and len(sbatch_calls(user)) == 1
