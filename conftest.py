"""Options every pytest session in this repository understands, whichever of `tests/` and
`ui-tests/` it collects: `--no-testbed` and `--testbed-only` split the suite by whether a
test needs the real local Slurm test bed (one of its fixtures), and a session that keeps
such tests waits for the test bed's lock before any test starts."""

from __future__ import annotations

import pytest

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
