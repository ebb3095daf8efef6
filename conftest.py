"""Options every pytest session in this repository understands, whichever of `tests/` and
`ui-tests/` it collects: `--no-testbed` and `--testbed-only` split the suite by whether a
test needs the real local Slurm test bed (one of its fixtures), and a session that keeps
such tests waits for the test bed's lock before any test starts; a test without the test bed
finds Slurm's programs that change a queue refusing (`no_real_scheduler`)."""

from __future__ import annotations

import ast
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

# The IPython shells the magics' tests make (and the kernels of ui-tests' servers) keep their
# history in this session's own directory, never in the user's ~/.ipython: runs at the same
# time shared one SQLite file there, and each shell's exit wrote to it ("attempt to write a
# readonly database", printed at the end of a passing run)
os.environ["IPYTHONDIR"] = tempfile.mkdtemp(prefix="diamond-tests-ipython-")

# CPython 3.11 counts AST construction depth once per interpreter, not per thread: two
# threads in `ast.parse` at once (pytest rewriting a test module's asserts while a server's
# thread formats a traceback, which parses the line it shows) fail one of them with
# "AST constructor recursion depth mismatch" (python/cpython#106905). Parses take turns.
_AST_TURNS = threading.RLock()
_ast_parse = ast.parse


def _parse_in_turn(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - ast.parse's own
    with _AST_TURNS:
        return _ast_parse(*args, **kwargs)


ast.parse = _parse_in_turn

# the fixtures of tests/conftest.py and ui-tests/conftest.py that bring up the test bed
TESTBED_FIXTURES = {"tb", "testbed_session", "testbed_config"}


def needs_testbed(item: pytest.Item) -> bool:
    return bool(TESTBED_FIXTURES & set(getattr(item, "fixturenames", ())))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--no-testbed", action="store_true",
                     help="deselect the tests that need the real test bed (a quick pure run)")
    parser.addoption("--testbed-only", action="store_true",
                     help="run only the tests that need the real test bed (the other half of "
                          "--no-testbed; scripts/test.sh runs both halves at once)")


def pytest_configure(config: pytest.Config) -> None:
    """pytest-xdist's workers (`-n N`) run the tests that need no test bed only: each worker
    would wait for the test bed's lock, and the first would hold it to the session's end."""
    workers = config.getoption("numprocesses", None)
    if workers not in (None, 0) and not config.getoption("--no-testbed"):
        raise pytest.UsageError(
            f"-n {workers} (pytest-xdist) runs only with --no-testbed: the test bed's tests "
            "run in one process (run them with --testbed-only, without -n)")


@pytest.hookimpl(trylast=True)  # after -k/-m deselection
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Wait for the test bed (one user at a time) before any test starts, so that the wait
    counts against no test's timeout; or, with --no-testbed, leave its tests out (with
    --testbed-only, the others)."""
    no_testbed, testbed_only = config.getoption("--no-testbed"), config.getoption("--testbed-only")
    if no_testbed and testbed_only:
        raise pytest.UsageError("--no-testbed and --testbed-only leave no test: give one")
    if no_testbed or testbed_only:
        out = [i for i in items if needs_testbed(i) == no_testbed]
        if out:
            config.hook.pytest_deselected(items=out)
            items[:] = [i for i in items if needs_testbed(i) != no_testbed]
        if no_testbed:
            return
    if any(needs_testbed(i) for i in items):
        from diamond_jupyter import testbed

        testbed.lock.hold()


# The machine's one Slurm is the test bed's: a test without it finds these programs (those
# that change a queue) first on its PATH, each refusing, so a site left without a fake (a
# local site with no `commands`) can never submit to, or cancel on, a real scheduler.
BLOCKED_PROGRAMS = ("sbatch", "srun", "salloc", "scancel")
BLOCKED_SAYS = "a test without the test bed ran the machine's"
_BLOCKER = ('#!/bin/sh\n'
            f'echo "diamond tests: {BLOCKED_SAYS} $(basename "$0") $*; give the test\'s site '
            'a fake (commands: tests/sweep_helpers.fake_slurm_commands)" >&2\n'
            'exit 97\n')


@pytest.fixture(scope="session")
def blocked_programs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of BLOCKED_PROGRAMS, each refusing (exit 97) and saying why."""
    where = tmp_path_factory.mktemp("no-real-scheduler")
    for prog in BLOCKED_PROGRAMS:
        (where / prog).write_text(_BLOCKER)
        (where / prog).chmod(0o755)
    return where


@pytest.fixture(autouse=True)
def no_real_scheduler(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
                      ) -> Iterator[None]:
    """Outside the test bed's tests, BLOCKED_PROGRAMS are found first on the PATH (the
    test's own process's, and so the CLI's and servers' it starts, a local site's)."""
    if not needs_testbed(request.node):
        where = request.getfixturevalue("blocked_programs_dir")
        monkeypatch.setenv("PATH", f"{where}{os.pathsep}{os.environ.get('PATH', '')}")
    yield
