"""SSHTransport against a real private sshd (and a real paramiko server for one-time codes)."""

from __future__ import annotations

import asyncio
import os
import secrets
import stat
import subprocess
import sys
import time
from pathlib import Path

import paramiko
import pytest
from sshd_helper import MfaSshServer, Sshd, keygen, make_base, remove_base

from diamond_jupyter.config import TransportConfig
from diamond_jupyter.model import SiteError
from diamond_jupyter.transports import CommandFailed, CommandTimeout, make_transport
from diamond_jupyter.transports.ssh import SSHTransport
from diamond_jupyter.transports.ssh_auth import AuthError, HostKeyError

NASTY = [
    "$(rm -rf x)", "`id`", "a b", "it's", 'say "hi"', "new\nline", "tab\there", "ünïcødé ✓",
    "*", "; echo pwned", "", "-n", "\\", "$HOME", "!x", "--", "a'b\"c$d",
]


def cfg(d: Sshd, **kw) -> TransportConfig:
    base = dict(
        host="127.0.0.1", port=d.port, user=d.user, key_file=str(d.client_key),
        known_hosts=str(d.base / "known_hosts"), use_agent=False,
        ssh_config=str(d.base / "empty_ssh_config"), connect_timeout_s=5,
    )
    base.update(kw)
    return TransportConfig(**base)


def ssh(d: Sshd, **kw) -> SSHTransport:
    t = make_transport(cfg(d, **kw), "alpha", reconnect_attempts=2)
    assert isinstance(t, SSHTransport)
    return t


async def wait_for(pred, what: str, deadline_s: float = 120.0):
    """Poll a state until it holds; the bound only stops a hung test."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if v := await pred():
            return v
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.asyncio
async def test_nasty_arguments_arrive_verbatim(sshd):
    t = ssh(sshd)
    try:
        r = await t.run(["printf", "%s\\0", *NASTY])
        assert r.exit_status == 0, r.stderr
        assert r.stdout.split("\0")[:-1] == NASTY
        r = await t.run(["whoami"])
        assert r.stdout.strip() == "diamondtest" and r.duration_s > 0
    finally:
        await t.close()


@pytest.mark.asyncio
async def test_stdin_env_preamble_exit_status(sshd):
    t = ssh(sshd)
    try:
        data = "ligne 1 ✓\n$(x)\n".encode() * 2000  # bigger than one channel packet
        assert (await t.run(["cat"], stdin=data)).stdout.encode() == data
        r = await t.run(["sh", "-c", 'printf %s "$FOO"'], env={"FOO": "a b $HOME 'q'"})
        assert r.stdout == "a b $HOME 'q'"
        # the preamble is trusted config; format variables it sets are cleared anyway
        r = await t.run(
            ["sh", "-c", 'echo "$MODULE_X/${SQUEUE_FORMAT-unset}/$(pwd)"'],
            preamble="MODULE_X=loaded; export MODULE_X\nexport SQUEUE_FORMAT=%i  # comment",
        )
        assert r.stdout.strip() == "loaded/unset/" + os.path.expanduser("~diamondtest")
        r = await t.run(["sh", "-c", "echo oops >&2; exit 7"])
        assert (r.exit_status, r.stderr, r.ok) == (7, "oops\n", False)
        with pytest.raises(CommandFailed, match="exited with status 7: oops") as e:
            await t.run(["sh", "-c", "echo oops >&2; exit 7"], check=True)
        assert e.value.result.exit_status == 7
        assert (await t.run(["no-such-command-xyz"])).exit_status == 127
        # megabytes on both stdout and stderr: neither stream may stall the other
        r = await t.run(["sh", "-c", "head -c 3000000 /dev/zero; head -c 3000000 /dev/zero >&2"])
        assert (len(r.stdout), len(r.stderr)) == (3_000_000, 3_000_000)
        with pytest.raises(CommandTimeout, match="timed out after 0.3 s"):
            await t.run(["sleep", "5"], timeout=0.3)
        assert (await t.run(["true"])).ok  # the connection survives a timeout
    finally:
        await t.close()


def _established(port: int) -> set[str]:
    """Client ends of the TCP connections the server on `port` has open."""
    out = subprocess.run(
        ["ss", "-Htn", "state", "established", f"( sport = :{port} )"],
        capture_output=True, text=True, check=True,
    ).stdout
    return {ln.split()[-1] for ln in out.splitlines() if ln.strip()}


@pytest.mark.asyncio
async def test_one_pooled_connection_for_50_concurrent_commands(sshd):
    t = ssh(sshd)
    try:
        before = _established(sshd.port)
        rs = await asyncio.gather(*(t.run(["sh", "-c", f"sleep 0.1; echo {i}"]) for i in range(50)))
        assert [r.stdout.strip() for r in rs] == [str(i) for i in range(50)]
        assert t.connections_opened == 1
        new = _established(sshd.port) - before  # seen from the server side too
        local = t._conn.transport.sock.getsockname()
        assert new == {f"{local[0]}:{local[1]}"}
        assert t.describe()["connected"] is True
    finally:
        await t.close()


@pytest.mark.asyncio
async def test_max_sessions_bounds_channels(sshd):
    t = ssh(sshd, max_sessions=3)  # at most 2 commands at once (one channel kept for SFTP)
    try:
        start = time.monotonic()
        rs = await asyncio.gather(*(t.run(["sleep", "0.2"]) for _ in range(6)))
        assert all(r.ok for r in rs) and time.monotonic() - start >= 0.6
        assert t.connections_opened == 1
    finally:
        await t.close()


@pytest.mark.asyncio
async def test_unknown_host_is_refused_with_a_clear_message(sshd, tmp_path):
    kh = tmp_path / "known_hosts"
    kh.write_text("")
    t = ssh(sshd, known_hosts=str(kh))
    with pytest.raises(HostKeyError) as e:
        await t.run(["true"])
    msg = str(e.value)
    assert f"[127.0.0.1]:{sshd.port} is not in known_hosts" in msg
    assert "alpha" in msg and str(kh) in msg and "trust_on_first_use" in msg
    assert "SHA256:" in msg and kh.read_text() == ""
    await t.close()


@pytest.mark.asyncio
async def test_changed_host_key_is_refused_even_with_tofu(sshd, tmp_path):
    other = keygen(tmp_path / "other_host_key")
    typ, b64 = Path(f"{other}.pub").read_text().split()[:2]
    kh = tmp_path / "known_hosts"
    kh.write_text(f"[127.0.0.1]:{sshd.port} {typ} {b64}\n")
    for tofu in (False, True):
        t = ssh(sshd, known_hosts=str(kh), trust_on_first_use=tofu)
        with pytest.raises(HostKeyError, match="HAS CHANGED") as e:
            await t.run(["true"])
        assert "ssh-keygen -R" in str(e.value)
        await t.close()
    assert kh.read_text().count("\n") == 1


@pytest.mark.asyncio
async def test_trust_on_first_use_appends_to_known_hosts(sshd, tmp_path):
    kh = tmp_path / "sub" / "known_hosts"
    t = ssh(sshd, known_hosts=str(kh), trust_on_first_use=True)
    assert (await t.run(["true"])).ok
    await t.close()
    assert kh.read_text() == sshd.known_hosts_line()
    t = ssh(sshd, known_hosts=str(kh))  # now known without TOFU
    assert (await t.run(["true"])).ok
    await t.close()


@pytest.mark.asyncio
async def test_wrong_key_refused_and_unreachable_hosts_explained(sshd, tmp_path):
    t = ssh(sshd, key_file=str(keygen(tmp_path / "stranger")))
    who = f"diamondtest@127.0.0.1:{sshd.port}"
    with pytest.raises(AuthError, match=rf"authentication failed for {who} \(tried publickey"):
        await t.run(["true"])
    await t.close()
    from sshd_helper import free_port

    port = free_port()
    t = ssh(sshd, port=port)
    with pytest.raises(SiteError, match=rf"alpha: connection refused by 127.0.0.1:{port}"):
        await t.run(["true"])
    await t.close()
    t = ssh(sshd, host="no-such-host.invalid")
    with pytest.raises(SiteError, match="alpha: cannot resolve host 'no-such-host.invalid'"):
        await t.run(["true"])
    await t.close()


def _sleeping(d: Sshd, marker: str) -> bool:
    for pid in d.connection_children():
        try:
            if marker in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                return True
        except OSError:
            pass
    return False


@pytest.mark.asyncio
async def test_dropped_connection_fails_in_flight_command_then_reconnects(sshd):
    t = ssh(sshd)
    try:
        assert (await t.run(["true"])).ok
        marker = f"{secrets.randbelow(10**6) + 30}.25"
        inflight = asyncio.ensure_future(t.run(["sleep", marker]))

        async def running():
            return _sleeping(sshd, marker)

        await wait_for(running, "the remote sleep")
        assert sshd.kill_connections() >= 1
        with pytest.raises(SiteError, match="alpha: connection to .* lost"):
            await asyncio.wait_for(inflight, 120)
        assert (await t.run(["echo", "back"])).stdout == "back\n"
        assert t.connections_opened == 2
        sshd.restart()  # the whole daemon goes away and comes back
        assert (await t.run(["echo", "again"])).stdout == "again\n"
        assert t.connections_opened == 3
    finally:
        await t.close()


@pytest.mark.asyncio
async def test_sftp_round_trip_keeps_mode_and_is_atomic(sshd, tmp_path):
    t = ssh(sshd)
    d = f"~/dj-{secrets.token_hex(4)}"
    try:
        data = secrets.token_bytes(300_000)
        await t.put_bytes(data, f"{d}/sub/secret.bin", mode=0o600)
        st = await t.stat(f"{d}/sub/secret.bin")
        assert st is not None and stat.S_IMODE(st.mode) == 0o600 and st.size == len(data)
        assert not st.is_dir and (await t.stat(f"{d}/sub")).is_dir
        assert await t.stat(f"{d}/missing") is None
        r = await t.run(["stat", "-c", "%a %U", f"{d[2:]}/sub/secret.bin"])
        assert r.stdout.split() == ["600", "diamondtest"]
        assert await t.get_bytes(f"{d}/sub/secret.bin") == data
        await t.put_bytes(b"v2", f"{d}/sub/secret.bin", mode=0o600)  # replace in place
        assert (await t.run(["ls", "-A", f"{d[2:]}/sub"])).stdout == "secret.bin\n"
        local = tmp_path / "fetched.bin"
        await t.get_file(f"{d}/sub/secret.bin", str(local))
        assert local.read_bytes() == b"v2" and stat.S_IMODE(local.stat().st_mode) == 0o600
        src = tmp_path / "script.sh"
        src.write_text("#!/bin/sh\necho hi\n")
        src.chmod(0o750)
        await t.put_file(str(src), f"{d}/script.sh")
        assert (await t.run([f"./{d[2:]}/script.sh"])).stdout == "hi\n"
        with pytest.raises(SiteError, match="no such file"):
            await t.get_bytes(f"{d}/missing")
        assert t.connections_opened == 1  # SFTP rides on the same connection
    finally:
        await t.run(["rm", "-rf", d[2:]])
        await t.close()


@pytest.mark.asyncio
async def test_open_stream_yields_appended_lines_and_stops_remote_command(sshd):
    t = ssh(sshd)
    f = f"dj-events-{secrets.token_hex(4)}.log"
    try:
        await t.put_bytes(b"first\n", f"~/{f}")
        stream = t.open_stream(["tail", "-n", "+1", "-F", f])
        assert await asyncio.wait_for(stream.__anext__(), 120) == "first"
        for i in range(3):
            await t.run(["sh", "-c", 'printf "%s\\n" "$1" >> "$2"', "sh", f"event {i} ✓", f])
            assert await asyncio.wait_for(stream.__anext__(), 120) == f"event {i} ✓"
        await stream.aclose()

        async def gone():
            return (await t.run(["pgrep", "-u", "diamondtest", "-f", f])).exit_status == 1

        await wait_for(gone, "the remote tail to exit")

        # cancelling the consuming task closes it too
        got: list[str] = []

        async def consume():
            async for line in t.open_stream(["tail", "-n", "+1", "-F", f]):
                got.append(line)

        task = asyncio.ensure_future(consume())

        async def read_all():
            return len(got) == 4

        await wait_for(read_all, "the replayed lines")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await wait_for(gone, "the remote tail to exit after cancel")
        # a command that ends by itself ends the stream, last line without newline included
        lines = [ln async for ln in t.open_stream(["printf", "a\\nb\\nc"])]
        assert lines == ["a", "b", "c"]
    finally:
        await t.run(["rm", "-f", f])
        await t.close()


@pytest.mark.asyncio
async def test_keyboard_interactive_one_time_code_asked_once_per_connection(sshd, tmp_path):
    srv = MfaSshServer(tmp_path, sshd.client_key)
    kh = tmp_path / "known_hosts"
    kh.write_text(srv.known_hosts_line())
    calls = []

    async def handler(title, instructions, prompts):  # an async UI prompt works too
        calls.append((title, instructions, prompts))
        return [srv.otp]

    c = cfg(sshd, port=srv.port, user=srv.user, known_hosts=str(kh))
    t = SSHTransport(c, site="mfa", interactive_handler=handler)
    try:
        for _ in range(3):
            assert (await t.run(["echo", "in"])).stdout == "in\n"
        assert calls == [("Two-factor", "Enter the code from your token", [("Code: ", False)])]
        assert srv.connections == 1
        bad = SSHTransport(c, site="mfa", interactive_handler=lambda *a: ["000000"])
        with pytest.raises(AuthError, match="keyboard-interactive"):
            await bad.run(["true"])
        await bad.close()
    finally:
        await t.close()
        srv.stop()


@pytest.mark.asyncio
async def test_proxy_jump_from_ssh_config_verifies_both_hosts(sshd):
    base = make_base()
    target = Sshd(base, client_key=sshd.client_key).start()
    try:
        conf = base / "ssh_config"
        conf.write_text(
            f"Host jumpbox\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User diamondtest\n"
            f"  IdentityFile {sshd.client_key}\n"
            f"Host inner\n  HostName 127.0.0.1\n  Port {target.port}\n  User diamondtest\n"
            f"  IdentityFile {sshd.client_key}\n  ProxyJump jumpbox\n"
        )
        kh = base / "known_hosts"
        kh.write_text(sshd.known_hosts_line() + target.known_hosts_line())
        c = TransportConfig(host="inner", ssh_config=str(conf), known_hosts=str(kh),
                            use_agent=False)
        t = SSHTransport(c, site="beta")
        assert t.describe()["proxy_jump"] == f"diamondtest@127.0.0.1:{sshd.port}"
        assert (await t.run(["echo", "via jump"])).stdout == "via jump\n"
        await t.close()
        assert f"target 127.0.0.1 port {target.port}" in sshd.log.read_text()  # direct-tcpip
        kh.write_text(target.known_hosts_line())  # the jump host's key is checked too
        t = SSHTransport(c, site="beta")
        with pytest.raises(HostKeyError, match=rf"\[127.0.0.1\]:{sshd.port} is not in"):
            await t.run(["true"])
        await t.close()
    finally:
        target.stop()
        remove_base(base)


async def test_a_server_that_stalls_after_its_banner_is_a_clear_site_error(sshd, tmp_path):
    """paramiko's start_client returns silently at its timeout: a handshake that never
    finishes must be a SiteError naming it, not a stray 'No existing session'."""
    import socket
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")  # then never a key exchange
            held.append(conn)

    threading.Thread(target=serve, daemon=True).start()
    t = make_transport(cfg(sshd, port=srv.getsockname()[1], connect_timeout_s=1), "stall",
                       reconnect_attempts=1)
    try:
        with pytest.raises(SiteError, match="handshake with .* did not finish within 1 s"):
            await t.run(["true"])
    finally:
        await t.close()
        srv.close()
        for c in held:
            c.close()


@pytest.mark.asyncio
async def test_a_command_eof_is_never_sent_outside_the_channel_lock(sshd, monkeypatch):
    """paramiko's shutdown_write builds a command's EOF under the channel's lock and sends
    it after releasing it: a short command's server CLOSE, answered by paramiko meanwhile,
    can then go first, and sshd drops the whole connection for an EOF on a channel it has
    freed ("ieof packet referred to nonexistent channel"; seen under load). The transport
    must send EOF with the channel's lock held, never by that unlocked path, and EOF must
    still reach a command reading stdin."""
    t = ssh(sshd)
    real_send = paramiko.Transport._send_user_message
    unlocked_eofs: list[int] = []

    def watch(transport, data):
        # SSH_MSG_CHANNEL_EOF sent by shutdown (a close sends EOF and CLOSE in order: safe)
        if data.asbytes()[0] == 96 and sys._getframe(1).f_code.co_name == "shutdown":
            unlocked_eofs.append(int.from_bytes(data.asbytes()[1:5], "big"))
        return real_send(transport, data)

    monkeypatch.setattr(paramiko.Transport, "_send_user_message", watch)
    try:
        rs = await asyncio.gather(*(t.run(["echo", str(i)]) for i in range(5)))
        assert [r.stdout for r in rs] == [f"{i}\n" for i in range(5)]
        r = await t.run(["cat"], stdin=b"in")  # EOF still ends a command reading stdin
        assert r.stdout == "in"
        assert unlocked_eofs == [] and t.connections_opened == 1
    finally:
        await t.close()
