"""The test-bed lock: one holder at a time, and no deadlock under a `flock` wrapper."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from diamond_jupyter.testbed import lock

HOLD = "from diamond_jupyter.testbed import lock; lock.hold(); print('held', flush=True)"


def _env(path) -> dict[str, str]:
    return {**os.environ, "DIAMOND_TESTBED_LOCK": str(path)}


def _until_blocked(pid: int) -> None:
    """Until the kernel lists `pid` as waiting for a flock (its "->" line in /proc/locks)."""
    for _ in range(1200):
        if any(f" {pid} " in line and "->" in line
               for line in Path("/proc/locks").read_text().splitlines()):
            return
        time.sleep(0.05)
    raise AssertionError(f"{pid} never waited for the lock")


def test_a_process_under_a_flock_wrapper_shares_its_hold(tmp_path):
    path = tmp_path / "testbed.lock"
    path.touch()
    # Before: the child waited for its own parent's lock until the wrapper's timeout.
    res = subprocess.run(["flock", str(path), sys.executable, "-c", HOLD], env=_env(path),
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "held"


def test_a_holder_that_is_not_an_ancestor_is_waited_for(tmp_path):
    path = tmp_path / "testbed.lock"
    path.touch()
    holder = subprocess.Popen(["flock", str(path), sys.executable, "-c",
                               "import sys; print('in', flush=True); sys.stdin.read()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "in"  # the wrapper holds the lock now
        assert holder.pid in lock.holders(path)
        assert not lock.holders(path) & lock.ancestors()
        waiter = subprocess.Popen([sys.executable, "-c", HOLD], env=_env(path),
                                  stdout=subprocess.PIPE, text=True)
        _until_blocked(waiter.pid)
        assert waiter.pid not in lock.holders(path)
        holder.stdin.close()  # the holder ends; only then may the waiter hold
        assert holder.wait(timeout=120) == 0
        assert waiter.stdout.readline().strip() == "held"
        assert waiter.wait(timeout=120) == 0
    finally:
        holder.kill()


def test_holders_lists_only_granted_locks(tmp_path):
    path = tmp_path / "testbed.lock"
    path.touch()
    assert lock.holders(path) == set()
    assert os.getpid() in lock.ancestors()
