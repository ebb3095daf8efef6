"""A command's output is bounded in size as well as in time (`max_output_bytes`): more on
stdout or stderr stops the read, ends the command and fails it with OutputTooLarge naming
the site, argv[0] and the cap, on every transport; the transport then works as before."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal

import pytest
from stand_in_slurmrestd import jwt_file
from test_transport_ssh import ssh

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.model import SiteError
from diamond_jupyter.transports import CommandTimeout, OutputTooLarge, make_transport, ssh_shell
from diamond_jupyter.transports.slurmrestd import SlurmRestTransport

CAP = 4096
# prints N bytes of a repeating pattern (not one repeated byte: a shifted or partly lost
# stream would still compare equal) on stdout, or on stderr with E set
EMIT = 'seq -f %07g 0 $(($1 / 8 + 1)) | head -c "$1" >&${E:-1}'


def pattern(n: int) -> str:
    return "".join(f"{i:07d}\n" for i in range(n // 8 + 1))[:n]


def emit(n: int, stderr: bool = False) -> list[str]:
    return ["sh", "-c", ("E=2; " if stderr else "") + EMIT, "emit", str(n)]


def test_the_cap_is_a_transport_setting_with_a_generous_default():
    assert TransportConfig().max_output_bytes == 64 << 20
    # a cap too small for any scheduler query, or not a whole number of bytes: refused
    for bad, why in ((0, "greater than or equal to 4096"), (1000, "equal to 4096"),
                     (True, "valid integer"), ("64MB", "valid integer"), (1.5, "valid integer")):
        with pytest.raises(ValueError, match=rf"max_output_bytes\n.*{why}"):
            TransportConfig(kind="local", max_output_bytes=bad)
    site = SiteConfig(name="s", transport={"kind": "local", "max_output_bytes": 5000})
    assert make_transport(site.transport, "s").max_output_bytes == 5000
    rest = TransportConfig(kind="slurmrestd", url="http://h:1", token_file="/t",
                           max_output_bytes=5000)
    assert SlurmRestTransport(rest, "r").cfg.max_output_bytes == 5000


async def check_cap(run, site: str) -> None:
    """`run(argv)` on a transport whose cap is CAP: at the cap byte-exact, one over fails on
    either stream, a flood fails at once, and the next command works normally."""
    for n in (CAP - 1, CAP):
        r = await run(emit(n))
        assert r.ok and r.stdout == pattern(n) and r.stderr == "", (n, r.stderr)
        r = await run(emit(n, stderr=True))
        assert r.ok and r.stderr == pattern(n) and r.stdout == ""
    for stream in ("stdout", "stderr"):
        with pytest.raises(OutputTooLarge, match=rf"^{site}: sh printed more than {CAP} "
                                                 rf"bytes on {stream} .*max_output_bytes"):
            await run(emit(CAP + 1, stderr=stream == "stderr"))
        assert (await run(["echo", "next"])).stdout == "next\n"
    # an endless stream (a hostile site) ends too: no hang, no memory growth
    with pytest.raises(OutputTooLarge, match=rf"{site}: yes printed more than {CAP} bytes"):
        await asyncio.wait_for(run(["yes", "x" * 1000]), 60)
    with pytest.raises(OutputTooLarge, match="on stderr"):
        await asyncio.wait_for(run(["sh", "-c", "yes >&2"]), 60)
    r = await run(emit(CAP))
    assert r.ok and r.stdout == pattern(CAP)


@pytest.mark.asyncio
async def test_local_transport_caps_each_stream(tmp_path):
    t = make_transport(TransportConfig(kind="local", max_output_bytes=CAP), "here",
                       workdir=str(tmp_path))
    await check_cap(t.run, "here")
    # stdin still reaches the command whole, and a command that ignores it is no error
    r = await t.run(["cat"], stdin=b"y" * CAP)
    assert r.ok and r.stdout == "y" * CAP
    assert (await t.run(["true"], stdin=b"z" * (4 << 20))).ok


@pytest.mark.asyncio
async def test_ssh_plain_channel_caps_each_stream(sshd):
    t = ssh(sshd, max_output_bytes=CAP)
    try:
        await check_cap(t.run, "alpha")
        assert t.connections_opened == 1  # the link was never dropped for it
    finally:
        await t.close()


@pytest.mark.asyncio
async def test_ssh_long_lived_shell_caps_each_stream_and_is_replaced(sshd):
    t = ssh(sshd, max_output_bytes=CAP)
    try:
        first = (await t.run_fast(["echo", "hi"])).stdout
        assert first == "hi\n" and t.shells_opened == 1
        await check_cap(t.run_fast, "alpha")
        # every overflow lost the shell's frame: a new shell each time, on the same link
        assert t.shells_opened == 1 + 4 and t.connections_opened == 1
        assert t._shell is not None and not t._shell.dead()
    finally:
        await t.close()


class FakeBuffer:
    def set_event(self, event) -> None:
        self.event = event


class FakeChannel:
    """Replays (stdout, stderr) rounds to `read_frame`, one round per look."""

    def __init__(self, rounds: list[tuple[bytes, bytes]]) -> None:
        self.rounds = rounds
        self.in_buffer, self.in_stderr_buffer = FakeBuffer(), FakeBuffer()
        self.out, self.err = b"", b""
        self.closed = self.eof_received = False
        self.turn = True  # the reader finished a round (it looked at stderr last)

    def recv_ready(self) -> bool:
        if self.turn and not self.out and not self.err and self.rounds:
            self.out, self.err = self.rounds.pop(0)
            self.turn = False
        return bool(self.out)

    def recv_stderr_ready(self) -> bool:
        self.turn = self.turn or not self.err
        return bool(self.err)

    def recv(self, n: int) -> bytes:
        got, self.out = self.out[:n], self.out[n:]
        return got

    def recv_stderr(self, n: int) -> bytes:
        got, self.err = self.err[:n], self.err[n:]
        return got

    def exit_status_ready(self) -> bool:
        return not self.rounds and not self.out and not self.err


@pytest.mark.asyncio
async def test_shell_frame_drops_what_a_background_writer_adds_after_the_marker():
    """Bytes arriving on stdout after the status marker (while the stderr marker is still on
    its way) used to be appended to the command's output; they are a background writer's:
    dropped, and the frame marked unclean (the shell is replaced)."""
    m = "dmd" + "1" * 32
    ch = FakeChannel([(b"result\n" + f"\n{m} 0\n".encode(), b""),
                      (b"late background write\n", b"warn\n"),
                      (b"", f"\n{m}\n".encode()),
                      (b"", b"late on stderr too\n")])
    status, out, err, clean = await ssh_shell.read_frame(ch, m)  # type: ignore[arg-type]
    assert (status, out, err, clean) == (0, b"result\n", b"warn\n", False)


@pytest.mark.asyncio
async def test_shell_frame_cap_counts_output_not_the_marker():
    m = "dmd" + "2" * 32
    data = bytes(range(256)) * 4  # 1024 bytes, binary
    for cap, fails in ((1024, None), (1023, "stdout")):
        ch = FakeChannel([(data[:500], data[:1023]), (data[500:], data[1023:]),
                          (f"\n{m} 3\n".encode(), f"\n{m}\n".encode())])
        if fails:
            with pytest.raises(ssh_shell.ShellOverflow) as e:
                await ssh_shell.read_frame(ch, m, cap)  # type: ignore[arg-type]
            assert e.value.stream == fails
        else:
            got = await ssh_shell.read_frame(ch, m, cap)  # type: ignore[arg-type]
            assert got == (3, data, data, True)
    # stderr alone over the cap (stdout small) is caught too, before any marker arrives
    ch = FakeChannel([(b"ok", b"e" * 5000)])
    with pytest.raises(ssh_shell.ShellOverflow) as e:
        await ssh_shell.read_frame(ch, m, 1000)  # type: ignore[arg-type]
    assert e.value.stream == "stderr"


@pytest.mark.asyncio
async def test_slurmrestd_reply_body_is_capped(tmp_path):
    """A reply larger than the cap fails (declared by its length, or sent chunked without
    one, or endless); one at the cap arrives whole; the next request works."""
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                path = head.split(b" ")[1].decode()
                n = int(path.rsplit("/", 1)[1]) if path[-1].isdigit() else 0
                body = json.dumps({"x": "a" * max(0, n - 8)}).encode()[:n] if n else b"{}"
                if "chunked" in path or "endless" in path:
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                                 b"transfer-encoding: chunked\r\n\r\n")
                    while "endless" in path or body:
                        piece, body = (body or b"x" * 1000)[:1000], body[1000:]
                        writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                        await writer.drain()
                    writer.write(b"0\r\n\r\n")
                else:
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                                 b"content-length: %d\r\n\r\n%s" % (len(body), body))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    t = SlurmRestTransport(TransportConfig(
        kind="slurmrestd", url=f"http://127.0.0.1:{port}", user="u",
        token_file=str(jwt_file(tmp_path)),
        connect_timeout_s=2, max_output_bytes=CAP), "beta-rest")
    try:
        for path in (f"jobs/{CAP}", f"chunked/{CAP}"):
            code, text = await t.request("GET", path)
            assert code == 200 and len(text) == CAP and text.startswith('{"x": "aaa')
        for path in (f"jobs/{CAP + 1}", f"chunked/{CAP + 1}", "endless/0"):
            with pytest.raises(OutputTooLarge, match=rf"^beta-rest: slurmrestd's reply to GET "
                                                     rf"{path} is larger than {CAP} bytes"):
                await asyncio.wait_for(t.request("GET", path), 60)
            assert await t.request("GET", "jobs/ok") == (200, "{}")
        assert isinstance(OutputTooLarge("x"), SiteError)
    finally:
        await t.close()
        server.close()
        await server.wait_closed()


async def check_file_reads(t, d: str) -> None:
    """get_bytes reads a file whole only up to the cap; a link to an endless device is
    never read without end. `d`: a fresh directory relative to the login's home."""
    data = pattern(CAP).encode()
    await t.put_bytes(data, f"{d}/exact")
    await t.put_bytes(data + b"!", f"{d}/over")
    await t.run(["ln", "-s", "/dev/zero", f"{d}/zero"], check=True)
    assert await t.get_bytes(f"{d}/exact") == data
    with pytest.raises(OutputTooLarge, match=rf"{t.name}: {d}/over holds more than {CAP} "
                                             r"bytes .*max_output_bytes.*fetch it to a file"):
        await t.get_bytes(f"{d}/over")
    assert await t.read_end(f"{d}/over", 5) == data[-4:] + b"!"
    with pytest.raises(SiteError, match=f"{t.name}: "):
        await asyncio.wait_for(t.get_bytes(f"{d}/zero"), 60)
    assert await t.get_bytes(f"{d}/exact") == data  # and the transport still works


@pytest.mark.asyncio
async def test_local_file_reads_are_bounded(tmp_path):
    t = make_transport(TransportConfig(kind="local", max_output_bytes=CAP), "here",
                       workdir=str(tmp_path))
    await check_file_reads(t, "files")
    # a log replaced by a link to a device or by a FIFO: refused at once, not read for ever
    # (read_end used to read /dev/zero to the end of memory) nor waited on
    with pytest.raises(SiteError, match="here: cannot read files/zero: not a regular file"):
        await asyncio.wait_for(t.read_end("files/zero", 100), 60)
    os.mkfifo(tmp_path / "fifo")
    for call in (t.read_end("fifo", 100), t.get_bytes("fifo")):
        with pytest.raises(SiteError, match="not a regular file"):
            await asyncio.wait_for(call, 60)


@pytest.mark.asyncio
async def test_ssh_file_reads_are_bounded(sshd):
    t = ssh(sshd, max_output_bytes=CAP)
    d = f"dj-{secrets.token_hex(4)}"
    try:
        await check_file_reads(t, d)
        assert len(await t.read_end(f"{d}/zero", 100) or b"") <= 100
    finally:
        await t.run(["rm", "-rf", d])
        await t.close()


@pytest.mark.asyncio
@pytest.mark.parametrize("over", ["cap", "timeout"])
async def test_local_command_whose_escaped_child_holds_the_pipe_still_ends(tmp_path, over):
    """A command over the cap (or its timeout) is killed with its process group; a child that
    left the session (setsid) kept the pipe open and writing, and the kill then waited for
    its end for ever. Now it fails in bounded time."""
    pidfile = tmp_path / "escaped.pid"
    t = make_transport(TransportConfig(kind="local", max_output_bytes=CAP), "here",
                       workdir=str(tmp_path))
    burst = "head -c 10000 /dev/zero" if over == "cap" else "exec sleep 30"
    argv = ["sh", "-c", "setsid sh -c 'echo $$ > escaped.pid; while :; do echo x; "
            f"sleep 0.2; done' & until [ -s escaped.pid ]; do :; done; {burst}"]
    want = OutputTooLarge if over == "cap" else CommandTimeout
    try:
        with pytest.raises(want):
            await asyncio.wait_for(t.run(argv, timeout=1.0), 30)
    finally:
        if pidfile.exists():
            os.kill(int(pidfile.read_text()), signal.SIGKILL)
    assert (await t.run(["echo", "next"])).stdout == "next\n"


@pytest.mark.asyncio
async def test_a_batch_of_queries_over_the_cap_names_its_queries(tmp_path):
    """A snapshot's queries run as one `sh -c` batch: its overflow said only "sh printed
    more than ..."; it names the queries. The snapshot then asks again without the queue:
    the site stays reachable with its queue unknown and why (no crash, no partial queue;
    tests/test_queue_too_large.py); a normal batch then works."""
    from diamond_jupyter.sites import Site

    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for prog, body in (("squeue", 'head -c "${FLOOD:-10}" /dev/zero | tr "\\0" x; echo'),
                       ("scontrol", "echo PartitionName=debug")):
        (bin_ / prog).write_text(f"#!/bin/sh\n{body}\n")
        (bin_ / prog).chmod(0o755)
    cfg = SiteConfig(name="s", workdir=str(tmp_path),
                     transport={"kind": "local", "max_output_bytes": CAP},
                     commands={p: str(bin_ / p) for p in ("squeue", "scontrol")},
                     env={"FLOOD": str(CAP * 2)})
    site = Site(cfg, transport=make_transport(cfg.transport, "s", workdir=str(tmp_path)))
    queries = {"partitions": ["scontrol", "show", "partition"], "queue": ["squeue", "-h"]}
    try:
        with pytest.raises(OutputTooLarge, match=rf"^s: the partitions, queue queries \(one "
                                                 rf"batch\) printed more than {CAP} bytes on "
                                                 r"stdout .*max_output_bytes; raise it"):
            await site.run_batch(queries)
        snap = await site.snapshot()
        assert snap.reachable and snap.jobs == [] and [p.name for p in snap.partitions] == [
            "debug"]
        assert f"the whole queue is more than {CAP} bytes on stdout" in (snap.queue_error or "")
        site.cfg.env["FLOOD"] = "10"
        out = await site.run_batch(queries)
        assert out == {"partitions": "PartitionName=debug", "queue": "x" * 10}
    finally:
        await site.close()
