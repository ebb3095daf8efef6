"""`diamond logs JOB --follow --stderr`: the job's stderr log as it grows, with the same rules
as its stdout (only the bytes not written yet, exactly, until the job ends; Ctrl-C 130, the job
left running). On `test_cli_newuser.NewUser`'s fake Slurm site (local transport), as
test_logs_follow.py follows stdout."""

from __future__ import annotations

import signal

import pytest
from test_cli_newuser import NewUser
from test_logs_follow import _append, _follow

from diamond_jupyter.model import JobState
from diamond_jupyter.store import Store


@pytest.fixture
def user(tmp_path) -> NewUser:
    return NewUser(tmp_path)


def _job_with_two_logs(user: NewUser, job_id: str, state: JobState = JobState.RUNNING):
    out, err = user.root / "out.log", user.root / "err.log"
    out.write_text("on stdout\n")
    err.write_bytes(b"warning: first\n")
    user.job(job_id, state, stdout_path=str(out), stderr_path=str(err))
    return out, err


def test_follow_stderr_writes_the_error_stream_as_it_grows_until_the_job_ends(user):
    out, err = _job_with_two_logs(user, "alpha:5151")
    proc, lines = _follow(user, "alpha:5151", "--stderr", "--poll", "600")
    try:
        assert lines.get(timeout=60) == b"warning: first\n"
        _append(out, b"stdout is not followed\n")
        _append(err, b"error: second \xff\n")
        assert lines.get(timeout=60) == "error: second \ufffd\n".encode()  # as `logs` does
        _append(err, b"last words")  # no newline: written at the end all the same
        Store(user.store_path).apply_state("alpha:5151", JobState.FAILED)
        rest = []
        while (line := lines.get(timeout=60)) is not None:
            rest.append(line)
        assert rest == [b"last words"]  # each byte once, none of stdout's
        assert proc.wait(timeout=60) == 1  # FAILED
        said = proc.stderr.read().decode()
        assert "alpha:5151\tFAILED" in said and "Traceback" not in said, said
    finally:
        proc.kill()
        proc.wait()


def test_follow_stderr_of_an_ended_job_writes_its_whole_error_log(user):
    _, err = _job_with_two_logs(user, "alpha:5152", JobState.COMPLETED)
    err.write_text("".join(f"err {i}\n" for i in range(500)))
    res = user.run("logs", "alpha:5152", "--follow", "--stderr", code=0)
    assert res.stdout == err.read_text()


def test_ctrl_c_stops_following_stderr_and_the_job_keeps_running(user):
    _job_with_two_logs(user, "alpha:5153")
    proc, lines = _follow(user, "alpha:5153", "--stderr", "--poll", "600")
    try:
        assert lines.get(timeout=60) == b"warning: first\n"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130
        said = proc.stderr.read().decode()
    finally:
        proc.kill()
        proc.wait()
    assert "stopped following; alpha:5153 keeps running" in said and "Traceback" not in said
    assert Store(user.store_path).get_job("alpha:5153").state == JobState.RUNNING


def test_follow_stderr_of_a_job_whose_stderr_goes_to_its_stdout_is_refused(user):
    out = user.root / "out.log"
    out.write_text("both\n")
    user.job("alpha:5154", JobState.RUNNING, stdout_path=str(out))  # joined: no stderr file
    line = user.refused("logs", "alpha:5154", "--follow", "--stderr")
    assert line == ("diamond: alpha:5154 writes its stderr into its stdout log (no stderr "
                    "file of its own): follow it without --stderr"), line


def test_stderr_without_follow_says_it_goes_with_follow(user):
    _job_with_two_logs(user, "alpha:5155")
    line = user.refused("logs", "alpha:5155", "--stderr")
    assert line == ("diamond: --stderr goes with --follow (`diamond logs JOB --follow "
                    "--stderr`); `diamond logs JOB` shows the end of both stdout and stderr")
