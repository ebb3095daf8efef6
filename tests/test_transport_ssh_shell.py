"""run_fast: short commands on the site's long-lived remote shell (a real private sshd)."""

from __future__ import annotations

import asyncio

import pytest
from test_transport_ssh import NASTY, _sleeping, ssh, wait_for

from diamond_jupyter.model import SiteError
from diamond_jupyter.transports import CommandFailed, CommandTimeout, ssh_shell


def async_(pred):
    """A plain predicate as the awaitable one `wait_for` polls."""
    async def check():
        return pred()
    return check


async def shell_pid(t) -> str:
    """The long-lived shell is the parent of the command (the subshell execs it)."""
    r = await t.run_fast(["sh", "-c", "echo $PPID"], check=True)
    return r.stdout.strip()


@pytest.mark.asyncio
async def test_nasty_arguments_env_preamble_status_on_one_shell(sshd):
    t = ssh(sshd)
    try:
        r = await t.run_fast(["printf", "%s\\0", *NASTY])
        assert r.exit_status == 0, r.stderr
        assert r.stdout.split("\0")[:-1] == NASTY
        r = await t.run_fast(["sh", "-c", 'echo "$X|$FROM_PRE"; echo oops >&2; exit 7'],
                             env={"X": "a b'c$(id)"}, preamble="FROM_PRE=pre; export FROM_PRE")
        assert (r.exit_status, r.stdout, r.stderr) == (7, "a b'c$(id)|pre\n", "oops\n")
        r = await t.run_fast(["printf", "no newline"])
        assert r.stdout == "no newline" and r.stderr == ""
        with pytest.raises(CommandFailed, match="exited with status 3"):
            await t.run_fast(["sh", "-c", "exit 3"], check=True)
        # a broken preamble or an `exit` in it ends the command, never the shell
        r = await t.run_fast(["true"], preamble="if then fi")
        assert r.exit_status != 0
        r = await t.run_fast(["true"], preamble="exit 9")
        assert r.exit_status == 9
        assert (await t.run_fast(["echo", "still"])).stdout == "still\n"
        assert (t.shells_opened, t.connections_opened) == (1, 1)
    finally:
        await t.close()


@pytest.mark.asyncio
async def test_stdin_with_marker_like_content_arrives_verbatim(sshd, monkeypatch):
    t = ssh(sshd)
    try:
        fake = "dmd" + "0" * 32
        texts = [
            b"#!/bin/sh\necho hi\n",
            f"DMD_EOF_x\n'DMD_EOF_y'\n{fake} 0\n\n{fake}\n$(id) `id` ${{HOME}}\n".encode(),
            "ünïcødé ✓\n\\\n'\"\n".encode(),
            b"no trailing newline",
            b"\0binary\xff\xfe\n" + bytes(range(256)),
            b"\n" * 3,
        ]
        for data in texts:
            r = await t.run_fast(["cat"], stdin=data)
            assert r.ok and r.stdout.encode("utf-8", "replace") == data.decode(
                "utf-8", "replace").encode()
            r = await t.run_fast(["sh", "-c", "od -An -c | tr -d ' \\n'"], stdin=data)
            ref = await t.run(["sh", "-c", "od -An -c | tr -d ' \\n'"], stdin=data)
            assert r.stdout == ref.stdout and r.ok  # byte-exact, binary included
        # a here-document delimiter that happens to be a line of the data is never used
        data = b"DMD_EOF_" + b"f" * 32 + b"\nafter\n"
        assert ssh_shell.plain_heredoc(data)
        tokens = iter(["f" * 32, "a" * 32])
        monkeypatch.setattr(ssh_shell.secrets, "token_hex", lambda n: next(tokens))
        text = ssh_shell.frame("cat", "dmdmarker", data).decode()
        assert text.startswith(f"( eval cat ) <<'DMD_EOF_{'a' * 32}'\n")
        assert text.count("DMD_EOF_" + "f" * 32) == 1  # only as data
        monkeypatch.undo()
        assert (await t.run_fast(["cat"], stdin=data)).stdout == data.decode()
    finally:
        await t.close()


@pytest.mark.asyncio
async def test_output_with_another_commands_marker_cannot_end_a_frame(sshd, monkeypatch):
    t = ssh(sshd)
    seen: list[str] = []
    real = ssh_shell.new_marker

    def recording() -> str:
        seen.append(real())
        return seen[-1]

    monkeypatch.setattr(ssh_shell, "new_marker", recording)
    try:
        await t.run_fast(["true"])
        prev = seen[-1]
        forged = f"x\n{prev} 0\ny\n{prev}\n"
        r = await t.run_fast(["sh", "-c", 'printf %s "$1"; printf %s "$1" >&2; exit 4', "sh",
                              forged])
        assert (r.exit_status, r.stdout, r.stderr) == (4, forged, forged)
        assert (await t.run_fast(["echo", "next"])).stdout == "next\n"
        assert t.shells_opened == 1
    finally:
        await t.close()


@pytest.mark.asyncio
async def test_shell_killed_mid_command_fails_then_recovers(sshd):
    t = ssh(sshd)
    try:
        await shell_pid(t)
        with pytest.raises(SiteError, match="remote shell lost"):
            await t.run_fast(["sh", "-c", "kill -9 $PPID; sleep 1; echo late"])
        assert (await t.run_fast(["echo", "back"])).stdout == "back\n"
        # killed while its child still holds the channel's pipes: fails once they close
        with pytest.raises(SiteError, match="remote shell lost"):
            await t.run_fast(["sh", "-c", "kill -9 $PPID; exec sleep 1"])
        assert (await t.run_fast(["echo", "again"])).stdout == "again\n"
        assert (t.shells_opened, t.connections_opened) == (3, 1)
        # an idle shell that died is replaced before anything is sent: no error at all
        pid = await shell_pid(t)
        await t.run(["kill", "-9", pid], check=True)
        await wait_for(async_(lambda: t._shell.dead()), "the shell's death to arrive")
        assert (await t.run_fast(["echo", "fine"])).stdout == "fine\n"
        assert await shell_pid(t) != pid
    finally:
        await t.close()


@pytest.mark.asyncio
async def test_timeout_replaces_the_shell_and_dropped_connection_reconnects(sshd):
    t = ssh(sshd)
    try:
        await shell_pid(t)
        with pytest.raises(CommandTimeout):
            await t.run_fast(["sleep", "5"], timeout=0.5)
        assert t._shell is None
        assert (await t.run_fast(["echo", "ok"])).stdout == "ok\n"
        assert t.shells_opened == 2
        inflight = asyncio.ensure_future(t.run_fast(["sleep", "5.31"]))
        await wait_for(async_(lambda: _sleeping(sshd, "5.31")), "the remote sleep")
        assert sshd.kill_connections() >= 1
        with pytest.raises(SiteError):
            await asyncio.wait_for(inflight, 10)
        assert (await t.run_fast(["echo", "reconnected"])).stdout == "reconnected\n"
        assert t.connections_opened == 2
        # cancelled mid-command: the shell's state is unknown, so it is replaced
        task = asyncio.ensure_future(t.run_fast(["sleep", "5.32"]))
        await wait_for(async_(lambda: _sleeping(sshd, "5.32")), "the remote sleep")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert t._shell is None and (await t.run_fast(["true"])).ok
    finally:
        await t.close()


@pytest.mark.asyncio
async def test_link_lost_after_the_liveness_check_runs_the_command_once_elsewhere(sshd,
                                                                               monkeypatch,
                                                                               tmp_path):
    """The link dies between the shell's liveness check and the write: no byte of the
    command left, so it runs once over a new connection instead of failing the caller."""
    t = ssh(sshd)
    tally = f"/tmp/dmd-unsent-{tmp_path.name}"
    try:
        await shell_pid(t)
        shell = t._shell
        assert sshd.kill_connections() >= 1
        await wait_for(async_(lambda: not shell.conn.alive()), "the link's loss to arrive")
        monkeypatch.setattr(ssh_shell.RemoteShell, "dead", lambda self: False)
        r = await t.run_fast(["sh", "-c", 'echo ran >> "$1"; cat "$1"', "sh", tally])
        assert (r.exit_status, r.stdout) == (0, "ran\n")
        assert t._shell is None and t.connections_opened == 2
        monkeypatch.undo()
        assert (await t.run_fast(["cat", tally])).stdout == "ran\n"
        assert t.shells_opened == 2
    finally:
        await t.run(["rm", "-f", tally])
        await t.close()


@pytest.mark.asyncio
async def test_concurrent_callers_all_get_their_own_results(sshd):
    t = ssh(sshd)
    try:
        async def one(i: int):
            data = f"stdin {i}\n".encode() * (i + 1)
            script = f"cat; echo err{i} >&2; sleep 0.0{i % 5}; exit {i % 4}"
            r = await t.run_fast(["sh", "-c", script], stdin=data)
            return i, r, data

        for i, r, data in await asyncio.gather(*(one(i) for i in range(40))):
            assert r.stdout == data.decode() and r.stderr == f"err{i}\n"
            assert r.exit_status == i % 4
        assert t.connections_opened == 1 and t.shells_opened == 1
    finally:
        await t.close()


@pytest.mark.asyncio
async def test_shell_sets_the_same_environment_as_a_channel_without_an_env_process(sshd):
    """The shell sets the environment with builtins (`unset`, `export`), a channel with
    `env`: the same result, format variables unset also when the preamble exports them,
    configured values verbatim."""
    t = ssh(sshd)
    pre = "SQUEUE_FORMAT=%i; SACCT_FORMAT=x; export SQUEUE_FORMAT SACCT_FORMAT"
    env = {"X": "a b'c$(id)\n\"", "SLURM_CONF": "/etc/slurm/x.conf"}
    probe = ["sh", "-c", 'env | grep -E "^(X|SLURM_CONF|SQUEUE_FORMAT|SACCT_FORMAT)=" | sort;'
             ' printf "%s|" "$X"']
    try:
        fast = await t.run_fast(probe, env=env, preamble=pre, check=True)
        plain = await t.run(probe, env=env, preamble=pre, check=True)
        assert fast.stdout == plain.stdout
        assert "FORMAT" not in fast.stdout and fast.stdout.endswith(f"{env['X']}|")
        assert t.shells_opened == 1
    finally:
        await t.close()
