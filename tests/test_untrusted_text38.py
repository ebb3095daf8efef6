"""Text a scheduler or a job wrote (a job name, a reason, a step's reason, an error echoed
from sbatch's stderr) is shown, never acted on, on each face it reaches: no escape sequence
(a screen clear, an OSC 8 link), no carriage return that overwrites the line, no newline
that forges a line of its own, no NUL, no bidirectional override; in HTML, no markup.

Each face's own formatter is called on real models (no Federation needed to print)."""

from __future__ import annotations

import argparse
import logging
from typing import Any

import pytest
from one_site_engine import local_home_federation

from diamond_jupyter.model import Job, JobState

# what a job or a scheduler may hold, and what each must never reach the face as
HOSTILE = {
    "clear": "\x1b[2J",
    "link": "\x1b]8;;http://x\x07click\x1b]8;;\x07",
    "overwrite": "ok\rFAKE",
    "newline": "ok\nalpha:99\tCOMPLETED\tforged",
    "nul": "a\x00b",
    "bidi": "\u202etxt.exe",
}
NEVER = ["\x1b", "\x07", "\r", "\x00", "\u202e"]


def _clean(text: str) -> None:
    assert not any(c in text for c in NEVER), repr(text)
    assert "forged" not in "".join(line for line in text.splitlines()
                                   if line.lstrip().startswith("alpha:99")), repr(text)


def _job(text: str, **kw: Any) -> Job:
    base = {"id": "alpha:7", "site": "alpha", "native_id": "7", "name": "sim" + text,
            "state": JobState.FAILED, "exit_code": 1, "reason": "NodeFail" + text}
    return Job.model_validate(base | kw)


def _workflow(text: str) -> dict[str, Any]:
    return {"id": "wf-1", "name": "w" + text, "state": "FAILED", "reason": "step a" + text,
            "steps": [{"name": "a", "state": "FAILED", "site": "alpha", "job": "alpha:7",
                       "needs": [], "reason": "sbatch: error:" + text}]}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_cli_workflow_status_shows_names_and_reasons_on_their_own_lines(text, capsys):
    from diamond_jupyter.cli.workflow import _out
    from diamond_jupyter.workflow.model import WorkflowView

    _out(argparse.Namespace(json=False), WorkflowView.model_validate(_workflow(text)))
    shown = capsys.readouterr().out
    _clean(shown)
    assert len(shown.splitlines()) == 2  # the workflow's line and its one step's


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_workflow_card_text_keeps_one_line_a_step(text):
    from diamond_jupyter.kernel.workflowcard import render_html, render_text

    shown = render_text(_workflow(text))
    _clean(shown)
    assert len(shown.splitlines()) == 2
    page = render_html(_workflow(text + "<img src=x onerror=alert(1)>"))
    assert not any(c in page for c in NEVER) and "<img" not in page


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_job_card_text_keeps_the_name_and_reason_on_their_lines(text):
    from diamond_jupyter.kernel.jobcard import render_text

    shown = render_text(_job(text), {"error": "squeue: error:" + text})
    _clean(shown)
    # the heading, the site, the time, the outcome and the error: no line more
    assert len(shown.splitlines()) == 5, shown


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_cli_job_line_and_the_magic_table_show_text_escaped(text):
    from diamond_jupyter.cli.common import job_line
    from diamond_jupyter.kernel.magics import jobs_table

    line = job_line(_job(text))
    _clean(line)
    assert len(line.splitlines()) == 1
    table = jobs_table([_job(text + "<b>x</b>")])
    _clean(repr(table))
    assert "<b>x" not in table._repr_html_()
    assert not any(c in table._repr_html_() for c in NEVER)


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_an_error_from_a_site_is_one_line_on_the_cli(text, capsys):
    from diamond_jupyter.cli.jobs import say_trouble

    say_trouble("alpha: squeue failed:" + text)
    shown = capsys.readouterr().err
    _clean(shown)
    assert len(shown.splitlines()) == 1


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_cli_log_lines_write_out_what_a_site_said(text):
    from diamond_jupyter.cli.main import log_formatter

    record = logging.LogRecord("diamond_jupyter.monitor", logging.INFO, __file__, 1,
                               "%s: poll failed: %s", ("alpha", "squeue:" + text), None)
    shown = log_formatter().format(record)
    _clean(shown)
    assert len(shown.splitlines()) == 1 and "poll failed" in shown


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_workflow_plan_shows_a_sites_refusal_on_its_line(text, capsys):
    from diamond_jupyter.cli.workflow import _show_plan

    _show_plan({"workflow_id": "wf-1", "name": "w", "plan_sha256": "0" * 64,
                "steps": [{"name": "a", "site": "auto", "may_run_on": [],
                           "rendered": [{"site": "alpha", "refused": "PartitionDown" + text}]}]})
    shown = capsys.readouterr().out
    _clean(shown)
    assert sum("cannot run" in line for line in shown.splitlines()) == 1
    assert not any(line.startswith("alpha:99") for line in shown.splitlines())


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_an_agent_task_in_a_cell_keeps_one_row_a_step(text):
    from diamond_jupyter.agent.notebook import TaskHandle

    task = {"id": "t1", "state": "failed", "error": "sbatch: error:" + text,
            "steps": [{"kind": "tool_result", "data": {"text": "job reason:" + text}}]}
    handle = TaskHandle(None, task)
    shown = repr(handle)
    _clean(shown)
    assert len(shown.splitlines()) == 3  # the task, its one step, its error
    assert not any(c in handle._repr_html_() for c in NEVER)


def _local_fed(tmp_path: Any) -> Any:
    return local_home_federation(tmp_path, scheduler="flux")


async def _pending_job_logs(fed: Any, stdout: str, reason: str) -> Any:
    from diamond_jupyter.model import JobSpec

    fed.store.record_intent("here", "abc123abc123", JobSpec(
        name="sim", script="true\n", stdout=stdout, join_output=True, source_dialect="flux"))
    job = fed.store.bind_native_id("abc123abc123", "f7")
    fed.store.apply_state(job.id, JobState.PENDING, reason=reason)  # as a poll learned it
    return await fed.logs(job.id), fed.store.get_job(job.id)


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
async def test_a_pending_jobs_reason_stays_on_its_missing_line(tmp_path, text):
    """`diamond logs` (the magic, REST) of a pending job: one "missing" line per log naming
    the reason its scheduler gave (squeue's, qstat's comment); a reason holding a newline
    started a line of its own, printed after "diamond: " as diamond's words."""
    fed = _local_fed(tmp_path)
    try:
        logs, job = await _pending_job_logs(fed, str(tmp_path / "home" / "out.log"),
                                            "Priority" + text)
    finally:
        await fed.close()
    assert job.reason and "Priority" in job.reason
    missing = logs["missing"].splitlines()
    assert len(missing) == 1 and "not there yet on here" in missing[0], missing
    _clean(logs["missing"])
