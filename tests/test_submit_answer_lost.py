"""A submit whose answer was lost after its request went out (sbatch's "Socket timed out on
send/recv operation": the controller may have queued the job) is neither marked never
submitted nor sent again: the job is found by its token, now or by the journal's
reconciliation, or the intent is closed as never submitted once the settle time has passed.
A refusal, and a controller that could not be reached at all, stay what they were. A real
engine and store, a local Slurm site whose `sbatch` and `squeue` are fakes; no test bed."""

from __future__ import annotations

import json

import one_site_engine
import pytest
import sweep_helpers
from local_slurm import LocalSlurmQueue
from one_site_engine import lost_spec
from sweep_helpers import sbatch_calls

from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.model import BadInput, JobState, SiteError
from diamond_jupyter.transports import ConnectionLost

TIMED_OUT = ("sbatch: error: Batch job submission failed: Socket timed out on send/recv "
             "operation")
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


def test_the_command_line_says_the_job_may_have_been_taken(user):
    """`diamond submit` whose sbatch timed out on its answer: exit 1 (a site failure), saying
    the scheduler may have the job and not to submit it again; the job is kept, open."""
    sbatch = user.fake / "sbatch"
    sbatch.unlink()
    sbatch.write_text(f"#!/bin/sh\necho \"sbatch $*\" >> {user.fake}/calls\n"
                      f"echo '{TIMED_OUT}' >&2\nexit 1\n")
    sbatch.chmod(0o755)
    res = user.run("submit", "--site", "alpha", "job.sh", "--json", code=1)
    reply = json.loads(res.stdout)
    assert reply["reason"] == "failed", reply
    (job,) = json.loads(user.run("jobs", "--json", code=0).stdout)
    assert reply["message"] == (
        f"alpha: the scheduler's answer to the submit was lost ({TIMED_OUT}): the scheduler "
        "may have taken the job; diamond is checking by its token (bound to the job if it "
        "shows in the queue, else closed as never submitted after 30s): do not submit it "
        f"again; `diamond status {job['id']}` tells"), reply
    assert job["state"] not in ("FAILED", "CANCELLED") and job["native_id"] is None, job
    assert len(sbatch_calls(user)) == 1
