"""The job card's record (pure): what a saved notebook keeps of a job, in every part of the
bundle. The live behaviour is tested in test_magics.py and ui-tests/test_jobcard.py."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from diamond_jupyter.kernel.jobcard import MIME, bundle, card_json, color, elapsed, render_text
from diamond_jupyter.model import Job, JobSpec, JobState, Resources

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def job(state: JobState, **kw) -> Job:
    return Job(id="alpha:42", site="alpha", native_id="42", name="sim", state=state,
               submitted_at=T0, started_at=T0 + timedelta(seconds=7),
               ended_at=T0 + timedelta(seconds=19) if state.terminal else None,
               token="secret-token", spec=JobSpec(command="x", resources=Resources(
                   walltime_s=300)), **kw)


def test_failed_card_keeps_stderr_tail_exit_code_and_limit_in_every_part():
    j = job(JobState.FAILED, exit_code=3, reason="exit code 3")
    extras = {"time_limit_s": 300, "stdout": "out line\n",
              "stderr": "".join(f"err {i}\n" for i in range(40)), "files": ["/w/stdout.log"]}
    b = bundle(j, extras)
    assert set(b) == {"text/plain", "text/html", MIME}
    data = json.loads(json.dumps(b[MIME]))  # JSON-able as saved by nbformat
    assert data["job"]["state"] == "FAILED" and data["job"]["exit_code"] == 3
    assert "token" not in data["job"] and "spec" not in data["job"]
    assert data["time_limit_s"] == 300 and data["files"] == ["/w/stdout.log"]
    assert data["stderr_tail"].splitlines() == [f"err {i}" for i in range(20, 40)]  # the tail
    for part in (b["text/plain"], b["text/html"]):
        assert "err 39" in part and "err 19" not in part
        assert "exit code 3" in part and "exit code 3 — exit code 3" not in part
        assert "ran 0:00:12 of 0:05:00 limit" in part
    assert 'data-diamond-state="FAILED"' in b["text/html"]


def test_completed_card_shows_no_stderr_and_escapes_output():
    j = job(JobState.COMPLETED, exit_code=0)
    b = bundle(j, {"stdout": "<script>alert(1)</script>\n", "stderr": "warning: noise\n"})
    assert "<script>alert" not in b["text/html"] and "&lt;script&gt;" in b["text/html"]
    assert "warning: noise" not in b["text/plain"] and "warning: noise" not in b["text/html"]
    assert card_json(j, {})["stderr_tail"] is None


def test_running_card_counts_against_the_limit_and_colours_match_the_sidebar():
    j = job(JobState.RUNNING)
    text = elapsed(j, 300)
    assert text.startswith("queued 0:00:07 · ran ") and text.endswith("of 0:05:00 limit so far")
    assert "limit" not in elapsed(j, None)
    assert color("RUNNING") == "var(--jp-diamond-state-running, #1565c0)"
    assert "RUNNING" in render_text(j, {})
