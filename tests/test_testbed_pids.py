"""Pid files name test-bed daemons only: a file left from before a reboot (or a kill) names
whatever process holds that number now, and that process is neither running the test bed
nor ours to stop."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from diamond_jupyter.testbed import host
from diamond_jupyter.testbed.host import _pid, _wait


def test_a_pid_file_naming_another_program_names_no_daemon(tmp_path):
    f = tmp_path / "slurmd-gn1.pid"
    f.write_text(f"{os.getpid()}\n")  # this python: alive, but no slurmd
    assert _pid(f) is None


def test_a_pid_file_naming_a_live_daemon_is_followed(tmp_path):
    exe = tmp_path / "slurmd"  # a process whose name is a daemon's: /proc/PID/comm
    shutil.copy(shutil.which("sleep"), exe)
    proc = subprocess.Popen([str(exe), "60"])
    try:  # Popen returns after the fork; the name is the program's once it has run
        _wait(lambda: host._daemon_name(proc.pid) == "slurmd", 30, "the program to run")
        f = tmp_path / "slurmd-gn1.pid"
        f.write_text(f"{proc.pid}\n")
        assert _pid(f) == proc.pid
    finally:
        proc.kill()
        proc.wait()
    assert _pid(f) is None  # gone


def test_a_timeout_says_what_it_saw():
    with pytest.raises(host.TestbedError, match="waiting for gamma's nodes to be idle: gn1 down"):
        _wait(lambda: False, 0.05, "gamma's nodes to be idle", lambda: "gn1 down* Not responding")
