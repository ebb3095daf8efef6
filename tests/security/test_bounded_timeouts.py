"""Every remote command has a timeout: one given none gets the site's command_timeout_s and
fails with a clear CommandTimeout (a SiteError) instead of hanging the caller (a real sshd,
plain channels and the long-lived shell, and the local transport)."""

from __future__ import annotations

import time

import pytest
from sshd_helper import Sshd

from diamond_jupyter.config import TransportConfig
from diamond_jupyter.model import SiteError
from diamond_jupyter.transports import CommandTimeout, make_transport


def ssh_cfg(d: Sshd, **kw) -> TransportConfig:
    return TransportConfig(
        host="127.0.0.1", port=d.port, user=d.user, key_file=str(d.client_key),
        known_hosts=str(d.base / "known_hosts"), use_agent=False,
        ssh_config=str(d.base / "empty_ssh_config"), connect_timeout_s=5, **kw)


async def expect_timeout(call, limit_s: float) -> None:
    t0 = time.monotonic()
    with pytest.raises(CommandTimeout, match=r"sleep timed out after 0\.5 s") as e:
        await call
    assert isinstance(e.value, SiteError)
    assert time.monotonic() - t0 < limit_s


async def test_local_command_without_a_timeout_gets_the_default():
    t = make_transport(TransportConfig(kind="local", command_timeout_s=0.5), "here")
    await expect_timeout(t.run(["sleep", "5"]), 3.0)
    assert (await t.run(["echo", "ok"])).stdout == "ok\n"  # a short one is unaffected


@pytest.mark.parametrize("fast", [False, True], ids=["channel", "shell"])
async def test_ssh_command_without_a_timeout_gets_the_default(sshd, fast):
    t = make_transport(ssh_cfg(sshd, command_timeout_s=0.5), "alpha")
    try:
        run = t.run_fast if fast else t.run
        await expect_timeout(run(["sleep", "5"]), 4.0)
        assert (await run(["echo", "ok"])).stdout == "ok\n"
        assert (await t.run(["sleep", "1"], timeout=10)).ok  # an explicit one still wins
    finally:
        await t.close()


def test_default_is_five_minutes_and_must_be_positive():
    assert TransportConfig(kind="local").command_timeout_s == 300
    with pytest.raises(ValueError, match="command_timeout_s"):
        TransportConfig(kind="local", command_timeout_s=0)
