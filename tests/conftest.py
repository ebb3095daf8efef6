"""Shared fixtures: the real local Slurm federation, brought up once per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from diamond_jupyter import testbed
from diamond_jupyter.config import FederationConfig, load_config

# a short command leaves held work in the store instead of starting a background
# `diamond resume` (tests of the hand-over turn it on)
os.environ.setdefault("DIAMOND_HANDOVER", "0")


class Testbed:
    def __init__(self, config_path: Path) -> None:
        self.config_path = config_path
        self.base = config_path.parent

    @property
    def config(self) -> FederationConfig:
        return load_config(self.config_path)

    @property
    def sites(self) -> list[str]:
        return [s.name for s in self.config.sites]


@pytest.fixture(scope="session")
def testbed_session():
    """Up once; down at the end unless it was already up before the session."""
    testbed.lock.hold()  # another session or benchmark on this machine waits for us
    was_up = testbed.status()["up"]
    info = testbed.up()
    yield Testbed(Path(info["config"]))
    if not was_up:
        testbed.down()


@pytest.fixture
def tb(testbed_session) -> Testbed:
    """The test bed, brought back up if a test took it down."""
    if not testbed.status()["up"]:
        testbed.up()
    return testbed_session


@pytest.fixture
async def testbed_fed(tb, tmp_path):
    """A started engine over the test bed's sites with a store of the test's own."""
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    fed = Federation(tb.config_path, store=Store(tmp_path / "store.sqlite"),
                     poll_interval_s=30, min_poll_s=0.5)
    await fed.start()
    yield fed
    await fed.close()


def _private_sshd():
    """A private sshd of the test user's (no test bed), its host key in `base/known_hosts`
    and an empty `base/empty_ssh_config`; stopped and removed after."""
    from sshd_helper import Sshd, make_base, remove_base

    base = make_base()
    d = Sshd(base).start()
    (base / "empty_ssh_config").write_text("")
    (base / "known_hosts").write_text(d.known_hosts_line())
    yield d
    d.stop()
    remove_base(base)


@pytest.fixture(scope="module")
def sshd():
    """A private sshd (`_private_sshd`), one per test module."""
    yield from _private_sshd()


@pytest.fixture
def own_sshd():
    """A private sshd (`_private_sshd`) for one test alone, which may stop and restart it
    (the module's `sshd` serves the other tests)."""
    yield from _private_sshd()


@pytest.fixture
def data_dir(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "data"
    monkeypatch.setenv("DIAMOND_DATA_DIR", str(d))
    return d


def _fake_anthropic(monkeypatch, key: str):
    """A fake Anthropic API on a local port, driven by the real client library, and the
    environment that points the agent at it (`key`, a fake one; the provider chosen by
    default)."""
    from fake_llm import FakeLLM

    with FakeLLM() as f:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", f.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", key)
        monkeypatch.delenv("DIAMOND_LLM_PROVIDER", raising=False)
        yield f


@pytest.fixture
def fake(monkeypatch, data_dir):
    """The fake Anthropic API with a store of the test's own. A module that configures the
    model itself defines its own `fake`."""
    yield from _fake_anthropic(monkeypatch, "sk-ant-fake-key-0123456789")


@pytest.fixture
def fake_llm(monkeypatch):
    """The fake Anthropic API in the store the test set up (a key that must never be
    stored, for the hostile-input sweeps that look for it)."""
    yield from _fake_anthropic(monkeypatch, "sk-ant-fake-key-never-stored-0123456789")


def pytest_unconfigure(config: pytest.Config) -> None:  # noqa: ARG001
    """IPython registers each shell's exit work with `atexit`, and that work runs a full
    garbage collection per shell: after thousands of tests, one for every shell the
    magics' tests made took minutes at exit on this run's heap. The shells are the tests'
    own (their history and files in each test's temporary home), so their exit work is
    dropped once the session is over."""
    import sys

    shells = sys.modules.get("IPython.core.interactiveshell")
    if shells is None:
        return
    import atexit
    import gc

    for obj in gc.get_objects():
        if isinstance(obj, shells.InteractiveShell):
            atexit.unregister(obj.atexit_operations)
