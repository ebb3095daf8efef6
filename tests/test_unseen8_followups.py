"""Follow-ups of the eighth sweep: an ssh_config (the default ~/.ssh/config, or a file an
`Include` names) that is a FIFO, a device or a directory; workflow inputs where one lands
inside another's destination; other tools' step fields (Snakemake's `benchmark:` and
`wrapper:`, Nextflow's `maxForks` and `cache`) saying what to write instead."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from diamond_jupyter.model import BadInput
from diamond_jupyter.transports.ssh_auth import load_ssh_config, resolve_host


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    h = tmp_path / "home"
    (h / ".ssh" / "config.d").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(h))
    return h


def _load_within(seconds: float, path: str | None) -> BaseException | None:
    """load_ssh_config(path) run in a thread: what it raised, or None; a read that waits
    for ever fails the test instead of holding it."""
    raised: list[BaseException | None] = []

    def run() -> None:
        try:
            load_ssh_config(path)
            raised.append(None)
        except BaseException as e:  # noqa: BLE001 - handed to the test
            raised.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert raised, "load_ssh_config waited on the file"
    return raised[0]


def test_fault_a_default_ssh_config_that_is_a_fifo_is_refused_not_waited_on(home):
    """A FIFO nobody writes at ~/.ssh/config: the read waited for ever (every connection
    of the CLI, the kernel and the server with it)."""
    cfg = home / ".ssh" / "config"
    os.mkfifo(cfg)
    e = _load_within(20, None)
    assert isinstance(e, BadInput)
    assert str(e) == (f"ssh_config {cfg} is not a file but a FIFO, which may never end (a "
                      "read would wait for ever): not read; make it a regular file, or set "
                      "transport.ssh_config to one")


def test_fault_an_included_fifo_or_device_is_refused_naming_it(home):
    """A file an Include names that is a FIFO (waited on) or /dev/zero (never ends) was
    skipped unsaid, and its hosts dialled as host names; now refused, naming it."""
    ssh = home / ".ssh"
    (ssh / "config").write_text("Include config.d/*\nHost hpc\n  HostName login\n")
    os.mkfifo(ssh / "config.d" / "10-pipe")
    e = _load_within(20, None)
    assert isinstance(e, BadInput) and str(e).startswith(
        f"ssh_config {ssh}/config.d/10-pipe is not a file but a FIFO, which may never end")
    (ssh / "config.d" / "10-pipe").unlink()
    (ssh / "config.d" / "20-zero").symlink_to("/dev/zero")
    e = _load_within(20, None)
    assert isinstance(e, BadInput) and str(e).startswith(
        f"ssh_config {ssh}/config.d/20-zero is not a file but a character device")


def test_fault_a_default_ssh_config_that_is_a_directory_is_one_line(home):
    (home / ".ssh" / "config").mkdir()
    with pytest.raises(BadInput) as e:
        load_ssh_config(None)
    assert str(e.value) == (f"ssh_config {home}/.ssh/config is a directory, not a file: give "
                            "the config file (e.g. ~/.ssh/config), or set "
                            "transport.ssh_config to one")


def test_included_directories_and_broken_links_are_skipped_and_files_read(home):
    """(guard) `Include config.d/*` matching a directory or a dangling link skips them, as
    ssh does, and still reads the regular files beside them."""
    ssh = home / ".ssh"
    (ssh / "config.d" / "00-dir").mkdir()
    (ssh / "config.d" / "05-gone").symlink_to(ssh / "nowhere")
    (ssh / "config.d" / "10-hpc").write_text("Host hpc\n  HostName login.example.org\n")
    (ssh / "config").write_text("Include config.d/*\n")
    assert resolve_host(load_ssh_config(None), "hpc").hostname == "login.example.org"
