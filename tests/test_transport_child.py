"""A local command's process (`transports.child.Child`, under `LocalTransport`): its output,
input and exit status, with the exit seen on a pidfd and, where the kernel has none, polled."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import os

import pytest

from diamond_jupyter.transports.child import Child
from diamond_jupyter.transports.local import LocalTransport

WAIT_S = 30.0  # a guard: each command here ends within a second


@pytest.fixture(params=["pidfd", "polled"])
def transport(request, monkeypatch, tmp_path) -> LocalTransport:
    if request.param == "polled":  # a kernel before 5.3, or not Linux
        def no_pidfd(pid: int) -> int:
            raise OSError(errno.ENOSYS, "Function not implemented")
        monkeypatch.setattr(os, "pidfd_open", no_pidfd)
    return LocalTransport("here", str(tmp_path))


async def test_output_and_exit_status(transport):
    res = await asyncio.wait_for(
        transport.run(["sh", "-c", "echo out; echo err >&2; exit 3"]), WAIT_S)
    assert (res.exit_status, res.stdout, res.stderr) == (3, "out\n", "err\n")


async def test_input_larger_than_a_pipe_is_written_whole(transport):
    data = b"x" * 300_000 + b"\n"  # more than a pipe holds: written as the command reads
    res = await asyncio.wait_for(transport.run(["wc", "-c"], stdin=data), WAIT_S)
    assert (res.exit_status, res.stdout.strip()) == (0, str(len(data)))


async def test_input_a_command_never_reads_is_dropped(transport):
    res = await asyncio.wait_for(transport.run(["true"], stdin=b"y" * 1_000_000), WAIT_S)
    assert res.exit_status == 0


async def test_a_command_not_found_is_status_127(transport):
    res = await asyncio.wait_for(transport.run(["/nonexistent/prog"]), WAIT_S)
    assert res.exit_status == 127 and "/nonexistent/prog" in res.stderr


async def test_a_stream_yields_lines_and_its_end_kills_the_command(transport, tmp_path):
    lines = []
    stream = transport.open_stream(["sh", "-c", f"echo $$ > '{tmp_path}/pid'; "
                                    "echo a; echo b; exec sleep 3600"])
    async for line in stream:
        lines.append(line)
        if len(lines) == 2:
            break
    await asyncio.wait_for(stream.aclose(), WAIT_S)
    assert lines == ["a", "b"]
    pid = int((tmp_path / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def _pidfds() -> int:
    """How many pidfds this process holds open."""
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            held += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:[pidfd]"
    return held


def test_a_loop_closed_while_children_start_leaves_no_pidfd_open():
    """An event loop's close cancels every task at once, some inside `Child.start`: each
    child is killed and the pidfd it was watched on is closed, not left open for good."""
    async def start_many() -> None:
        async def start() -> None:
            await (await Child.start(["sleep", "60"], start_new_session=True)).wait()
        for _ in range(5):
            asyncio.ensure_future(start())
        await asyncio.sleep(0)  # each is inside Child.start: asyncio.run cancels them

    before = _pidfds()
    asyncio.run(start_many())
    gc.collect()
    assert _pidfds() == before
