"""Flux's record of a job killed for its memory says "out of memory", as Slurm's
OUT_OF_MEMORY does: an exception of type `oom` (as a site's plugin raises it, `flux job
raise --type=oom`), or one whose note carries flux-shell's oom plugin words ("Memory cgroup
out of memory: killed N task(s) on HOST"). `flux jobs --json` outputs are written from
RFC 21/flux-jobs(1)'s fields; other exceptions keep flux's words. The tests marked `fault`
failed before."""

from __future__ import annotations

import json

import pytest

from diamond_jupyter.dialects import get_commands
from diamond_jupyter.dialects.reasons import scheduler_sentence
from diamond_jupyter.model import JobState

FLUX = get_commands("flux")
OOM = "out of memory: the job used more than the memory it was given"


def _ended(exception: dict) -> object:
    [job] = FLUX.parse_status(json.dumps({"jobs": [{
        "id": 81604378624, "state": 64, "result": 2, "waitstatus": 35072, "returncode": 137,
        "t_run": 1765100000.0, "t_inactive": 1765100090.0,
        "exception": {"occurred": True, "severity": 0, **exception}}]}))
    return job


def test_fault_an_oom_exception_says_out_of_memory():
    job = _ended({"type": "oom", "note": ""})
    assert (job.state, job.exit_code, job.reason) == (
        JobState.FAILED, 137, f"{OOM} (flux exception oom)")
    assert scheduler_sentence(job.reason), job.reason


def test_fault_the_shells_oom_words_in_a_note_say_out_of_memory_and_keep_the_note():
    note = "Memory cgroup out of memory: killed 1 task on node7."
    job = _ended({"type": "exec", "note": note})
    assert job.state == JobState.FAILED
    assert job.reason == f"{OOM} (flux exception exec: {note})"


@pytest.mark.parametrize("exception,state", [
    ({"type": "timeout", "note": "resource allocation expired"}, JobState.TIMEOUT),
    ({"type": "cancel", "note": ""}, JobState.CANCELLED),
    ({"type": "exec", "note": "task 0: start failed: ./a.out: No such file"},
     JobState.FAILED),
])
def test_other_exceptions_keep_fluxs_words(exception, state):
    result = {JobState.TIMEOUT: 8, JobState.CANCELLED: 4}.get(state, 2)
    [job] = FLUX.parse_status(json.dumps({
        "id": 7, "state": 64, "result": result,
        "exception": {"occurred": True, "severity": 0, **exception}}))
    assert job.state == state and OOM not in (job.reason or "")
    assert job.reason == f"{exception['type']}: {exception['note']}".rstrip(": ")


def test_a_note_with_words_added_to_the_oom_sentence_is_no_scheduler_sentence():
    assert not scheduler_sentence(f"{OOM} (flux exception oom) and rm -rf ~")
