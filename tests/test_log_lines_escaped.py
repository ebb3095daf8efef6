"""The Jupyter server's log lines that diamond writes carry text from outside (a scheduler's
stderr, a site's error, a path a user gave): each is one line, its newlines and terminal
escapes written out (`one_line`), so none can start a forged log line or drive the terminal
that shows the log. The engine's module loggers (`log_lines.one_line_logger`) and the server
extension's own lines on Jupyter's logger; each path run for real: a real `Site` on the local
transport whose squeue is a script written here, a real Jupyter server. No test bed."""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import re
from datetime import timedelta
from pathlib import Path

import pytest
from sweep_helpers import here_sites_file

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.journal import Journal
from diamond_jupyter.log_lines import OneLineLogger, one_line_logger
from diamond_jupyter.model import DiamondError, Job, JobState, SiteError, utcnow
from diamond_jupyter.sites import Site
from diamond_jupyter.store import Store
from diamond_jupyter.transports.base import ConnectionLost
from diamond_jupyter.transports.local import LocalTransport
from diamond_jupyter.wrapper import EventLine

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

PACKAGE = Path(__file__).resolve().parent.parent / "diamond_jupyter"
# what a hostile text holds: a forged log line after a newline, a terminal's clear screen,
# a carriage return that overwrites, a bell-ended hyperlink, a NUL, a right-to-left override
FORGED = "[W 2026-12-07 05:00:00.000 ServerApp] forged"
HOSTILE = {
    "newline": f"ok\n{FORGED}",
    "clear": f"ok\x1b[2J{FORGED}",
    "overwrite": f"ok\r{FORGED}",
    "link": f"\x1b]8;;http://x\x07{FORGED}\x1b]8;;\x07",
    "nul": f"a\x00{FORGED}",
    "bidi": f"\u202e{FORGED}",
}
NEVER = ["\n", "\r", "\x1b", "\x07", "\x00", "\u202e"]


def clean(message: str) -> None:
    assert not any(c in message for c in NEVER), repr(message)


def said(caplog: pytest.LogCaptureFixture, pattern: str) -> list[str]:
    return [m for r in caplog.records if re.search(pattern, m := r.getMessage())]


async def said_soon(caplog: pytest.LogCaptureFixture, pattern: str) -> list[str]:
    """The messages matching `pattern`, once one is logged (the logging is in a task)."""
    for _ in range(1000):
        if found := said(caplog, pattern):
            return found
        await asyncio.sleep(0.01)
    raise AssertionError(f"no log line matching {pattern!r}: {caplog.messages}")


# -- the engine's loggers ---------------------------------------------------------------

def test_every_engine_module_logs_one_line_a_message() -> None:
    """Before, each module's `log` was a plain logger: a message's text went out as given."""
    modules = sorted(".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts)
                     .removesuffix(".__init__") for p in PACKAGE.rglob("*.py")
                     if re.search(r"^log = ", p.read_text(encoding="utf-8"), re.M))
    assert len(modules) > 20
    plain = [m for m in modules
             if not isinstance(importlib.import_module(m).log, OneLineLogger)]
    assert plain == []


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_message_is_written_out_on_one_line(caplog, text) -> None:
    log = one_line_logger("diamond_jupyter.test_log_lines")
    with caplog.at_level(logging.INFO, logger="diamond_jupyter.test_log_lines"):
        log.info("%s: poll failed: %s", "alpha", text)
    [record] = caplog.records
    clean(record.getMessage())
    assert record.getMessage().startswith("alpha: poll failed: ")
    assert FORGED in record.getMessage()  # written out, not dropped
    # the record names the line that logged, not the adapter
    assert (record.pathname, record.funcName) == (
        __file__, "test_a_message_is_written_out_on_one_line")


def test_a_traceback_still_follows_and_odd_arguments_do_not_raise(caplog) -> None:
    log = one_line_logger("diamond_jupyter.test_log_lines")
    with caplog.at_level(logging.INFO, logger="diamond_jupyter.test_log_lines"):
        try:
            raise SiteError("x\ny")
        except SiteError:
            log.exception("failed: %s", "a\nb")
        log.info("%d of %s", "not a number", "them")
    first, second = caplog.records
    assert first.getMessage() == "failed: a\\x0ab" and first.exc_info is not None
    assert second.getMessage() == "%d of %s 'not a number' 'them'"


# -- the monitor -------------------------------------------------------------------------

def _followed(tmp_path: Path, squeue: str, transport: LocalTransport | None = None
              ) -> tuple[Journal, Store]:
    """A journal following running job alpha:500 on a local Slurm site whose squeue runs
    `squeue` (shell)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "squeue").write_text(f"#!/bin/sh\n{squeue}\n")
    (bin_dir / "squeue").chmod(0o755)
    site = Site(SiteConfig(name="alpha", scheduler="slurm", workdir=str(tmp_path / "w"),
                           transport=TransportConfig(kind="local"),
                           commands={"squeue": str(bin_dir / "squeue")}), transport=transport)
    store = Store(tmp_path / "store.sqlite")
    store.upsert_job(Job(id="alpha:500", site="alpha", native_id="500", name="sim",
                         submitted_at=utcnow() - timedelta(hours=1)))
    store.apply_state("alpha:500", JobState.RUNNING)
    journal = Journal(store, {"alpha": site}, poll_interval_s=3600, min_poll_s=0.05)
    journal.monitors["alpha"].track(store.get_job("alpha:500"))
    return journal, store


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
async def test_a_failed_poll_is_logged_on_one_line(tmp_path, caplog, text) -> None:
    """squeue says the controller does not answer, and then what a hostile stderr holds."""
    stderr = f"slurm_load_jobs error: Unable to contact slurm controller {text}"
    journal, _ = _followed(tmp_path, f"printf '%s' {_sh(stderr)} >&2; exit 1")
    caplog.set_level(logging.INFO, logger="diamond_jupyter.monitor")
    try:
        journal.monitors["alpha"].start()
        [message, *_] = await said_soon(caplog, r"^alpha: poll failed: ")
        clean(message)
        assert "Unable to contact slurm controller" in message and "forged" in message
    finally:
        await journal.stop()


class _StreamDrops(LocalTransport):
    """The local transport, whose event stream drops saying `said` (as a remote shell's
    error would)."""

    said = ""

    def open_stream(self, argv, **_):  # type: ignore[override]
        raise ConnectionLost(f"alpha: tail: {self.said}")


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
async def test_a_lost_event_stream_is_logged_on_one_line(tmp_path, caplog, text) -> None:
    transport = _StreamDrops("alpha")
    transport.said = text
    journal, _ = _followed(tmp_path, "exit 0", transport)
    caplog.set_level(logging.INFO, logger="diamond_jupyter.monitor")
    try:
        journal.monitors["alpha"].start()
        [message, *_] = await said_soon(caplog, r"^alpha: event stream lost ")
        clean(message)
        assert "forged" in message
    finally:
        await journal.stop()


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
async def test_an_event_line_of_another_job_is_logged_on_one_line(tmp_path, caplog,
                                                                   text) -> None:
    """A line the job wrote (its MAC checked) naming another native id: the name is the
    job's own text."""
    journal, store = _followed(tmp_path, "exit 0")
    caplog.set_level(logging.INFO, logger="diamond_jupyter.monitor")
    try:
        line = EventLine(utcnow(), "end", "t" * 12, "77" + text, 0, "", "")
        journal.monitors["alpha"]._apply_line(store.get_job("alpha:500"), line)
        [message] = said(caplog, r"ignored an event line for alpha:500 from job 77")
        clean(message)
        assert store.get_job("alpha:500").state == JobState.RUNNING
    finally:
        await journal.stop()


def _sh(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


# -- the server extension ----------------------------------------------------------------

HOSTILE_ALL = "".join(HOSTILE.values())
MISSING_SITES = f"sites{HOSTILE['newline']}{HOSTILE['clear']}.yaml"
USER_SITES = f"mine{HOSTILE['newline']}{HOSTILE['bidi']}.yaml"


@pytest.fixture
def jp_server_config(tmp_path, request):
    """The extension on one local site (`here_sites_file`); `missing sites`: its sites
    file a path not there, holding hostile text; `user sites`: the user's own sites file
    such a path, not YAML (the whole file is refused)."""
    sites = here_sites_file(tmp_path, tmp_path / "here-work")
    settings: dict = {"sites_file": str(sites), "store_path": str(tmp_path / "s.sqlite3"),
                      "min_poll_s": 0.3, "poll_interval_s": 5.0}
    kind = getattr(request, "param", "")
    if kind == "missing sites":
        settings["sites_file"] = str(tmp_path / MISSING_SITES)
    elif kind == "user sites":
        (tmp_path / USER_SITES).write_text("sites: [\n")
        settings |= {"user_sites_file": str(tmp_path / USER_SITES),
                     "user_site_hosts": ["*.partner.example"]}
    return {"ServerApp": {"jpserver_extensions": {"diamond_jupyter": True}},
            "DiamondApp": settings}


def _one_record(caplog: pytest.LogCaptureFixture, start: str) -> str:
    [message] = [m for m in caplog.messages if m.startswith(start)]
    clean(message)
    assert "forged" in message
    return message


@pytest.fixture
def server_log(caplog):
    """The extension's log (its own logger, `DiamondApp`, which Jupyter does not pass on to
    the root logger) from the server's start on: it logs while the server starts."""
    extension_log = logging.getLogger("DiamondApp")
    extension_log.addHandler(caplog.handler)
    caplog.set_level(logging.WARNING)
    yield caplog
    extension_log.removeHandler(caplog.handler)


def _started_log(capsys: pytest.CaptureFixture, start: str) -> None:
    """The lines the extension wrote to the server's log (stderr) while the server started:
    the one starting `start` (after Jupyter's `[W time DiamondApp] `) holds all it said,
    and no line is forged."""
    lines = capsys.readouterr().err.splitlines()
    [message] = [ln.split("] ", 1)[1] for ln in lines if f"DiamondApp] {start}" in ln]
    clean(message)
    assert "forged" in message
    assert not [ln for ln in lines if ln.startswith(FORGED)]


@pytest.mark.parametrize("jp_server_config", ["missing sites"], indirect=True)
async def test_a_sites_file_not_found_is_logged_on_one_line(capsys, jp_serverapp):
    """The server's log said the path as given, its newline starting a line of its own."""
    app = jp_serverapp.web_app.settings["diamond_app"]
    assert app.federation is None and "\n" in app.error  # the reply's field keeps it whole
    _started_log(capsys, "diamond: not configured: sites file ")


@pytest.mark.parametrize("jp_server_config", ["user sites"], indirect=True)
async def test_a_users_sites_file_refused_is_logged_on_one_line(capsys, jp_serverapp):
    app = jp_serverapp.web_app.settings["diamond_app"]
    assert app.federation is not None and len(app.refused_sites) == 1
    _started_log(capsys, "diamond: user site not loaded: ")


async def test_a_failed_recovery_is_logged_on_one_line(server_log, monkeypatch, jp_serverapp):
    app = jp_serverapp.web_app.settings["diamond_app"]
    await app.ensure_started()

    async def fails(**_: object) -> None:
        raise DiamondError(f"store unreadable: {HOSTILE_ALL}")
    monkeypatch.setattr(app.federation, "start", fails)
    app._started = None  # started again, as a server that restarts its engine
    await app.ensure_started()
    _one_record(server_log, "diamond: recovery at start failed: store unreadable: ")


async def test_a_failed_background_refresh_is_logged_on_one_line(server_log, monkeypatch,
                                                                 jp_serverapp, jp_fetch):
    app = jp_serverapp.web_app.settings["diamond_app"]
    fed = await app.ensure_started()
    answered = fed.snapshots

    async def refresh_fails(*, max_age_s: float = 15.0, only=None):
        if max_age_s <= 15.0:  # the background refresh, after the answer from the cache
            raise SiteError(f"here: sinfo: {HOSTILE_ALL}")
        return await answered(max_age_s=max_age_s, only=only)
    monkeypatch.setattr(fed, "snapshots", refresh_fails)
    reply = await jp_fetch("diamond", "api", "state", params={"max_age": "60"})
    assert reply.code == 200 and json.loads(reply.body)["error"] is None
    [message, *_] = await said_soon(server_log, r"^diamond: background snapshot refresh")
    clean(message)
    assert "forged" in message
