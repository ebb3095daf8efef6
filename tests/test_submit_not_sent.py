"""An SSH connection lost before a command was sent (its channel never opened) is told apart
from one lost after: the command did not run, so a submit is closed at once as never
submitted (a site failure), not left open as "the scheduler may have taken it". A real
private sshd (no test bed) whose link is cut as the channel opens or as the command goes."""

from __future__ import annotations

import paramiko
import pytest
from local_slurm import LocalSlurmQueue
from one_site_engine import one_site_federation
from sshd_helper import Sshd

from diamond_jupyter.config import TransportConfig
from diamond_jupyter.model import JobSpec, JobState, SiteError
from diamond_jupyter.transports import CommandNotSent, ConnectionLost, make_transport
from diamond_jupyter.transports.ssh import SSHTransport


def _ssh(d: Sshd, **kw) -> SSHTransport:
    t = make_transport(TransportConfig(
        host="127.0.0.1", port=d.port, user=d.user, key_file=str(d.client_key),
        known_hosts=str(d.base / "known_hosts"), use_agent=False,
        ssh_config=str(d.base / "empty_ssh_config"), connect_timeout_s=5, **kw),
        "alpha", reconnect_attempts=2)
    assert isinstance(t, SSHTransport)
    return t


def _cut_when(monkeypatch, cls: type, method: str) -> list[int]:
    """`cls.method` cuts the link (closes the SSH transport) and fails as a lost link does;
    the calls are counted in the list returned."""
    calls: list[int] = []

    def cut(self, *args, **kw):
        calls.append(1)
        (self if isinstance(self, paramiko.Transport) else self.transport).close()
        raise EOFError()

    monkeypatch.setattr(cls, method, cut)
    return calls


@pytest.mark.parametrize("fast", [False, True], ids=["channel", "shell"])
async def test_a_link_lost_before_the_channel_opened_is_a_command_not_sent(
        sshd, monkeypatch, fast):
    t = _ssh(sshd)
    try:
        assert (await t.run(["true"])).ok  # connected
        opens = _cut_when(monkeypatch, paramiko.Transport, "open_session")
        run = t.run_fast if fast else t.run
        with pytest.raises(CommandNotSent, match=r"alpha: connection to .* lost: .*before "
                                                 r"the command was sent"):
            await run(["touch", str(sshd.base / "ran")])
        assert len(opens) == 2  # one reconnect, as before
        assert not (sshd.base / "ran").exists()
        monkeypatch.undo()
        assert (await t.run(["echo", "back"])).stdout == "back\n"
    finally:
        await t.close()


async def test_a_link_lost_as_the_command_went_may_have_run_it(sshd, monkeypatch):
    t = _ssh(sshd)
    try:
        assert (await t.run(["true"])).ok
        _cut_when(monkeypatch, paramiko.Channel, "exec_command")
        with pytest.raises(ConnectionLost) as lost:
            await t.run(["true"])
        assert not isinstance(lost.value, CommandNotSent)
    finally:
        await t.close()


@pytest.mark.parametrize("fast", [False, True], ids=["channel", "shell"])
async def test_a_reconnect_that_fails_before_the_command_went_is_a_command_not_sent(
        own_sshd, fast):
    """The server went away between two commands: the reconnect is refused, so the command
    never left, and the caller is told so (a submit is then closed at once)."""
    t = _ssh(own_sshd)
    try:
        assert (await t.run(["true"])).ok  # connected
        own_sshd.stop()  # the daemon and its connections: nothing listens on the port
        run = t.run_fast if fast else t.run
        with pytest.raises(CommandNotSent, match=r"^alpha: .*\(before the command was "
                                                 r"sent\)$"):
            await run(["touch", str(own_sshd.base / "ran")])
        assert not (own_sshd.base / "ran").exists()
        own_sshd.start(own_sshd.port)
        assert (await run(["echo", "back"])).stdout == "back\n"  # connects again after
    finally:
        await t.close()


async def test_a_submit_never_sent_is_closed_at_once_as_never_submitted(tmp_path,
                                                                        monkeypatch):
    queue = LocalSlurmQueue(tmp_path)
    fed = one_site_federation(tmp_path, queue.site.cfg, poll_interval_s=3600, min_poll_s=3600)
    try:
        site = fed.site("alpha")
        real_run = site.run
        not_sent = "alpha: connection to login1 lost: EOFError (before the command was sent)"

        async def lost_before_sbatch(argv, *args, **kw):
            if any("sbatch" in a for a in argv):
                raise CommandNotSent(not_sent)
            return await real_run(argv, *args, **kw)

        monkeypatch.setattr(site, "run", lost_before_sbatch)
        calls = queue.sbatch_says("", takes_the_job=True)
        spec = JobSpec(name="lost", command="true", working_directory=str(tmp_path))
        with pytest.raises(SiteError) as told:
            await fed.submit(spec, "alpha", force=True)
        assert str(told.value) == (
            f"alpha: the submit could not be sent ({not_sent}); nothing was submitted: try "
            "again when the site can be reached")
        assert fed.store.intents_without_native_id() == []  # closed, not left to a lookup
        [job] = fed.store.list_jobs()
        assert job.state == JobState.FAILED and job.native_id is None
        assert not calls.exists()  # sbatch never ran
    finally:
        await fed.close()
