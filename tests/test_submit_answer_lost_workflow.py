"""A workflow step whose submit's answer was lost (sbatch's "Socket timed out on send/recv
operation": the controller may have queued it): the runner looks for its job by its token
in the background (the federation's lookout, a job.submit-unsure event) and decides only
then: the job found becomes the step's job; a job closed as never submitted, once the settle
time has passed, is submitted anew. The step is never submitted twice meanwhile, however
often the workflow is looked at. One local Slurm site whose `sbatch` and `squeue` are fakes
(tests/local_slurm.py, tests/one_site_engine.py); no test bed.
"""

from __future__ import annotations

from typing import Any

import one_site_engine
import pytest
from one_site_engine import SBATCH_ANSWER_LOST as TIMED_OUT
from one_site_engine import journal_waiter

WORKFLOW = ("name: lost\nsteps:\n"
            "  - {name: prep, site: alpha, script: \"#!/bin/bash\\ntrue\\n\"}\n")

queue = one_site_engine.lookout_queue
settle_s = one_site_engine.lookout_settle_s
fed = one_site_engine.lookout_fed


def _step_moved(wid: str, job_id: str) -> Any:
    """The workflow's step event that records `job_id` as its job."""
    return lambda ev: (ev.kind == "workflow.step" and ev.data.get("workflow_id") == wid
                       and ev.job_id == job_id)


async def _looked_for(fed: Any, wait: Any, calls: Any) -> tuple[str, Any]:
    """Run the workflow; its step's submit answer is lost: the step's job is the open
    intent, UNKNOWN, looked for (a job.submit-unsure event), its reason saying so."""
    view = await fed.run_workflow(WORKFLOW, origin={"face": "test"})
    [step] = view.steps
    assert step.job is not None and step.job.startswith("alpha:pending-"), step
    assert step.state.value == "UNKNOWN"
    assert step.reason.startswith("alpha: the scheduler's answer to the submit was lost")
    assert step.reason.endswith("looking for its job in the site's queue by its token (not "
                                "submitted again unless it is closed as never submitted)")
    said = await wait(lambda ev: ev.kind == "job.submit-unsure" and ev.job_id == step.job)
    assert said.data["state"] == "UNKNOWN"
    await fed.workflow_engine.advance(view.id)  # looked at again meanwhile: not resubmitted
    assert len(calls.read_text().splitlines()) == 1
    return view.id, fed.job(step.job)


async def test_a_step_whose_answer_was_lost_becomes_the_job_found(fed, queue):
    calls = queue.sbatch_says(TIMED_OUT, takes_the_job=False)
    _, wait = journal_waiter(fed)
    wid, intent = await _looked_for(fed, wait, calls)

    queue.add("4290", intent.token or "", "prep")  # the controller queued it after all
    await wait(_step_moved(wid, "alpha:4290"))
    [step] = fed.workflow(wid).steps
    assert (step.job, step.site, step.state.value) == ("alpha:4290", "alpha", "PENDING")
    assert step.reason is None  # no longer looked for
    assert len(calls.read_text().splitlines()) == 1  # sent once


@pytest.mark.parametrize("settle_s", [1.0])
async def test_a_step_never_submitted_is_submitted_anew_once_closed(fed, queue, settle_s):
    calls = queue.sbatch_says(TIMED_OUT, takes_the_job=False)
    _, wait = journal_waiter(fed)
    wid, intent = await _looked_for(fed, wait, calls)
    sbatch = queue.bin_dir / "sbatch"  # from now on the controller answers
    sbatch.write_text(f'#!/bin/sh\necho "sbatch $*" >> {calls}\necho 4291\n')

    closed = await wait(lambda ev: ev.kind == "job.state" and ev.job_id == intent.id)
    assert closed.data["state"] == "FAILED"
    await wait(_step_moved(wid, "alpha:4291"))
    [step] = fed.workflow(wid).steps
    assert (step.job, step.state.value) == ("alpha:4291", "PENDING")
    assert step.reason is None
    assert fed.job(intent.id).state.value == "FAILED"  # the closed intent, kept
    assert len(calls.read_text().splitlines()) == 2  # the lost one, then the new one
