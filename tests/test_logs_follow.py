"""`diamond logs JOB --follow` (-f): the job's stdout as it grows until the job ends, its end
state on stderr (exit 0 when COMPLETED, else 1), and a Ctrl-C that ends it at once (130, the
job left running). Run on `test_cli_newuser.NewUser`'s fake Slurm site (local transport):
the log is a local file the test writes to, the job's state is changed in the store."""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_cli_newuser import NewUser, _interruptible

from diamond_jupyter.model import JobState
from diamond_jupyter.store import Store


@pytest.fixture
def user(tmp_path) -> NewUser:
    return NewUser(tmp_path)


def _follow(user: NewUser, job_id: str, *extra: str):
    """`diamond logs JOB --follow` started in the background (Ctrl-C as at a terminal), its
    stdout read line by line into a queue (None at its end)."""
    proc = subprocess.Popen([sys.executable, "-m", "diamond_jupyter.cli", "logs", job_id,
                             "--follow", *extra], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=user.root, env=user.env(user.sites),
                            preexec_fn=_interruptible)
    lines: queue.Queue[bytes | None] = queue.Queue()

    def pump() -> None:
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)
    threading.Thread(target=pump, daemon=True).start()
    return proc, lines


def _append(path: Path, data: bytes) -> None:
    with path.open("ab") as f:
        f.write(data)


def test_follow_writes_the_output_as_it_grows_until_the_job_ends(user):
    """What the log held, then each line the job adds as it adds it, then its last bytes
    once it ends; its end state on stderr, exit 0 (COMPLETED)."""
    log = user.root / "out.log"
    log.write_text("first\n")
    user.job("alpha:4242", JobState.RUNNING, stdout_path=str(log))
    proc, lines = _follow(user, "alpha:4242", "--poll", "600")
    try:
        assert lines.get(timeout=60) == b"first\n"
        _append(log, b"second\n")
        assert lines.get(timeout=60) == b"second\n"  # while the job runs
        _append(log, b"last\n")
        Store(user.store_path).apply_state("alpha:4242", JobState.COMPLETED)
        rest = []
        while (line := lines.get(timeout=60)) is not None:
            rest.append(line)
        assert rest == [b"last\n"]  # each byte once: only what was not read yet
        assert proc.wait(timeout=60) == 0
        err = proc.stderr.read().decode()
        assert "alpha:4242\tCOMPLETED" in err and "Traceback" not in err, err
    finally:
        proc.kill()
        proc.wait()


def test_ctrl_c_stops_following_at_once_and_the_job_keeps_running(user):
    """Ctrl-C while following a running job: exit 130 within seconds, saying the job keeps
    running and how to see its output later; nothing cancelled, the job's state unchanged."""
    log = user.root / "out.log"
    log.write_text("started\n")
    user.job("alpha:4243", JobState.RUNNING, stdout_path=str(log))
    proc, lines = _follow(user, "alpha:4243", "--poll", "600")
    try:
        assert lines.get(timeout=60) == b"started\n"  # following, its loop running
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130
        took = time.monotonic() - sent
        err = proc.stderr.read().decode()
    finally:
        proc.kill()
        proc.wait()
    assert took < 10, took  # at once (1-2 s on a loaded machine; the bound is a hang guard)
    assert err.strip().splitlines()[-1] == (
        "diamond: stopped following; alpha:4243 keeps running (`diamond logs alpha:4243` "
        "later shows its output; stop it: `diamond cancel alpha:4243`)"), err
    assert "Traceback" not in err, err
    assert Store(user.store_path).get_job("alpha:4243").state == JobState.RUNNING
    calls = user.fake / "calls"
    assert not calls.exists() or "scancel" not in calls.read_text()


@pytest.mark.parametrize(("state", "code"), [(JobState.COMPLETED, 0), (JobState.FAILED, 1),
                                             (JobState.CANCELLED, 1), (JobState.TIMEOUT, 1)])
def test_follow_of_an_ended_job_writes_its_whole_log_and_exits(user, state, code):
    """A job that has ended: its whole stdout once (not only its last lines), its end state
    on stderr, exit 0 when it COMPLETED, else 1."""
    log = user.root / "out.log"
    log.write_text("".join(f"line {i}\n" for i in range(300)))
    user.job("alpha:7", state, stdout_path=str(log))
    res = user.run("logs", "alpha:7", "-f", code=code)
    assert res.stdout == log.read_text()
    assert f"alpha:7\t{state.value}" in res.stderr, res.stderr


def test_follow_of_an_unknown_job_is_refused_as_logs_is(user):
    user.job("alpha:4242")
    line = user.refused("logs", "alpha:9999", "--follow")
    assert line == ("diamond: no job 'alpha:9999' in the store (`diamond jobs` lists the "
                    "known ones)"), line


def test_follow_takes_no_json(user):
    line = user.refused("logs", "alpha:7", "--follow", "--json")
    assert "--follow writes the job's output as it comes; it takes no --json" in line, line


def test_follow_shows_escapes_and_invalid_utf8_safely(user):
    """Piped: the job's text as `diamond logs` gives it (invalid UTF-8 replaced, escapes
    kept: nothing lost); a character cut by a read is whole."""
    log = user.root / "out.log"
    data = (b"ok \x1b[32mgreen\x1b[0m \x1b]52;c;cm0=\x07 bad \xff\xfe end\n"
            + "é€😀\n".encode() + b"\x00nul\n")
    log.write_bytes(data)
    user.job("alpha:8", JobState.COMPLETED, stdout_path=str(log))
    res = user.run("logs", "alpha:8", "--follow", code=0)
    assert res.stdout == data.decode("utf-8", "replace")


def test_follow_on_a_terminal_shows_colours_but_no_other_escape(user, monkeypatch):
    """On a terminal: colours kept, an OSC 52 (clipboard) sequence written out, invalid
    UTF-8 as U+FFFD; the command called with the options argparse gives it."""
    log = user.root / "out.log"
    log.write_bytes(b"\x1b[32mok\x1b[0m \x1b]52;c;cm0=\x07done \xff\n")
    user.job("alpha:9", JobState.COMPLETED, stdout_path=str(log))
    for key, value in user.env(user.sites).items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(user.root)

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True
    out, err = Tty(), Tty()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    from diamond_jupyter.cli import jobs as cli_jobs
    from diamond_jupyter.cli.main import build_parser

    args = build_parser().parse_args(["logs", "alpha:9", "-f"])
    assert cli_jobs.cmd_logs(args) == 0
    assert "\x1b[32mok\x1b[0m" in out.getvalue() and "\x1b]" not in out.getvalue()
    assert "\ufffd" in out.getvalue() and "done" in out.getvalue()


def test_a_character_cut_between_reads_is_written_whole():
    """The log read a byte at a time: every multi-byte character still written whole, a bad
    byte replaced, each byte read once."""
    from diamond_jupyter import federation as fmod
    from diamond_jupyter.federation import Federation

    data = "a é € 😀 z\n".encode() + b"\xff!\n"
    reads: list[tuple[int, int]] = []

    class OneFile:
        async def stat(self, path: str):
            return SimpleNamespace(size=len(data))

        async def read_from(self, path: str, start: int, max_bytes: int) -> bytes:
            reads.append((start, max_bytes))
            return data[start:start + 1]  # less than asked: a byte at a time

    import codecs

    written: list[str] = []
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    offset = asyncio.run(Federation._write_new(OneFile(), "out.log", 0, decoder,
                                               written.append))
    assert offset == len(data) and [s for s, _ in reads] == list(range(len(data)))
    assert "".join(written) == data.decode("utf-8", "replace")
    assert all("\ufffd" not in w for w in written[:-3])  # no character split in two
    assert fmod.FOLLOW_CHUNK_BYTES >= 4096


def test_read_from_gives_a_files_bytes_exactly(tmp_path):
    """`Site.read_from` on a shell site: the bytes from an offset as the file holds them
    (NUL, invalid UTF-8, a cut character), None for no file, a FIFO not read."""
    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.sites import NotARegularFile, Site

    site = Site(SiteConfig.model_validate({"name": "here", "transport": {"kind": "local"}}))
    path = tmp_path / "log"
    data = b"\x00\xff" + "é€".encode() + b"x" * 5000
    path.write_bytes(data)

    async def go():
        assert await site.read_from(str(path), 0, len(data)) == data
        assert await site.read_from(str(path), 3, 2) == data[3:5]  # into a character
        assert await site.read_from(str(path), len(data), 10) == b""
        assert await site.read_from(str(tmp_path / "none"), 0, 10) is None
        os.mkfifo(tmp_path / "fifo")
        with pytest.raises(NotARegularFile):
            await site.read_from(str(tmp_path / "fifo"), 0, 10)
        await site.close()
    asyncio.run(go())


def test_a_site_reached_through_slurmrestd_says_it_cannot_follow():
    from diamond_jupyter.sites_rest import RestSite

    said = RestSite.follow_refusal.fget(SimpleNamespace(name="beta"))
    assert said.startswith("beta: following a job's log as it grows needs a shell") and \
        "`diamond logs JOB`" in said, said


def test_an_engine_that_does_not_close_in_time_is_left(monkeypatch):
    """Ctrl-C while the engine is blocked in a thread that will not end (a site that hangs):
    the command leaves it within the grace (LeftClosing), not waiting for it."""
    from diamond_jupyter.cli import common

    release, entered = threading.Event(), threading.Event()

    async def stuck(args, fn, **kw):
        entered.set()
        await asyncio.to_thread(release.wait)  # blocks the loop's closing too

    monkeypatch.setattr(common, "with_fed", stuck)
    monkeypatch.setattr(common, "STOP_GRACE_S", 0.5)

    def interrupt() -> None:
        entered.wait(30)
        os.kill(os.getpid(), signal.SIGINT)
    # a suite started in the background by a shell without job control inherits SIGINT
    # ignored: Python's own handler, as a CLI on a terminal has it, for this test
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=interrupt, daemon=True).start()
    started = time.monotonic()
    try:
        with pytest.raises(common.LeftClosing):
            common.with_fed_interruptible(argparse.Namespace(), None)
        assert time.monotonic() - started < 20
    finally:
        release.set()  # the test's own thread, not left blocking pytest's exit
        signal.signal(signal.SIGINT, before)


def test_main_exits_at_once_when_the_engine_was_left(monkeypatch, capsys):
    """`main` on LeftClosing: the interrupted line, then an exit that waits for no thread."""
    import importlib

    from diamond_jupyter.cli import common

    main = importlib.import_module("diamond_jupyter.cli.main")
    exits: list[int] = []

    def left(args):
        raise common.LeftClosing

    def fake_exit(code: int) -> None:
        exits.append(code)

    monkeypatch.setattr(main.os, "_exit", fake_exit)
    parser = main.build_parser()
    real = parser.parse_args

    def parse(argv):
        ns = real(argv)
        ns.fn = left
        return ns
    monkeypatch.setattr(main, "build_parser", lambda: SimpleNamespace(parse_args=parse))
    assert main.main(["logs", "alpha:1", "-f"]) == 130
    assert exits == [130]
    assert "stopped following; alpha:1 keeps running" in capsys.readouterr().err
