"""`--no-testbed` and `--testbed-only` (the repository's root conftest.py) work in any
pytest session here, `ui-tests/` alone included, and split it by the test bed's fixtures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# needs the test bed through lab_page; test_post_types.py's tests start a bare server
SIDEBAR, POST_TYPES = "ui-tests/test_sidebar.py", "ui-tests/test_post_types.py"


def collect(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Collect only, in a session of its own; a private lock file, so that --testbed-only
    never waits for whoever holds the real test bed."""
    env = {**os.environ, "DIAMOND_TESTBED_LOCK": str(tmp_path / "testbed.lock")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--co", "-q", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def ids(out: str) -> set[str]:
    return {line for line in out.splitlines() if "::" in line}


@pytest.mark.parametrize("option", ["--no-testbed", "--testbed-only"])
def test_ui_tests_alone_accept_the_option(tmp_path, option):
    r = collect(tmp_path, option, SIDEBAR, POST_TYPES)
    assert r.returncode == 0, r.stdout + r.stderr
    selected = ids(r.stdout)
    bare = ids(collect(tmp_path, POST_TYPES).stdout)  # no test bed wanted by any of these
    bed = ids(collect(tmp_path, SIDEBAR).stdout)  # each of these wants it
    assert bare and bed and not bare & bed
    kept, left = (bare, bed) if option == "--no-testbed" else (bed, bare)
    assert selected == kept
    assert f"{len(left)} deselected" in r.stdout


def test_the_two_halves_make_the_whole(tmp_path):
    halves = [ids(collect(tmp_path, option, "ui-tests").stdout)
              for option in ("--no-testbed", "--testbed-only")]
    whole = ids(collect(tmp_path, "ui-tests").stdout)
    assert halves[0] and halves[1] and not halves[0] & halves[1]
    assert halves[0] | halves[1] == whole


def test_both_options_at_once_are_refused(tmp_path):
    r = collect(tmp_path, "--no-testbed", "--testbed-only", POST_TYPES)
    assert r.returncode != 0
    assert "--no-testbed and --testbed-only leave no test: give one" in r.stdout + r.stderr


def test_the_test_beds_tests_under_xdist_are_refused_before_any_runs(tmp_path):
    """Each pytest-xdist worker would wait for the test bed's lock, the first holding it
    until the session ended: `-n` without --no-testbed is refused, saying how to split the
    run instead."""
    env = {**os.environ, "DIAMOND_TESTBED_LOCK": str(tmp_path / "testbed.lock")}
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "2",
         "--testbed-only", SIDEBAR], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert ("-n 2 (pytest-xdist) runs only with --no-testbed: the test bed's tests run in "
            "one process (run them with --testbed-only, without -n)") in out
    assert " passed" not in out and " failed" not in out
    assert not (tmp_path / "testbed.lock").exists()  # nothing went on to wait for it
