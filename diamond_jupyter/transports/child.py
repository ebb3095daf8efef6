"""A local command's process under asyncio that a cancellation ends at any point.

`asyncio.create_subprocess_exec` is not safe to cancel on Python 3.11 and 3.12: cancelled
while it connects the process's pipes, which is what an event loop's close does to every
task at once, it waits forever for an exit it is never told of (CPython gh-103847), and the
loop's close waits with it. `Child.start` starts the process with `subprocess.Popen` (as
asyncio does, on the loop's thread), reads its pipes as asyncio streams and learns of its
exit from a pidfd (Linux; elsewhere by polling): no child watcher, no thread, and a
cancellation during the start kills the process group and closes the pipes at once."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import weakref
from typing import IO, Any

READ_LIMIT = 1 << 16
POLL_S = (0.01, 0.5)  # without a pidfd: the first and the longest wait between looks


class Child:
    """A started process (see `start`): `pid`, `returncode`, `stdin` (a StreamWriter, when
    asked for), `stdout` and `stderr` (StreamReaders; stderr None when dropped), `wait()`."""

    def __init__(self, popen: subprocess.Popen) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.stdin: asyncio.StreamWriter | None = None
        self.stdout: asyncio.StreamReader | None = None
        self.stderr: asyncio.StreamReader | None = None
        self._pipes: list[asyncio.BaseTransport] = []
        self._loop = asyncio.get_running_loop()
        self._exited: asyncio.Future[int] = self._loop.create_future()
        self._pidfd: int | None = None
        self._close_pidfd: weakref.finalize | None = None
        self._watch_exit()

    @classmethod
    async def start(cls, args: list[str], *, stdin: bool = False, stderr: bool = True,
                    **popen_kw: Any) -> Child:
        """Start `args` (Popen's keywords in `popen_kw`) with stdout piped, stdin piped when
        `stdin` (else /dev/null) and stderr piped when `stderr` (else /dev/null). OSError
        from Popen as it is (FileNotFoundError, PermissionError)."""
        popen = subprocess.Popen(
            args, bufsize=0, stdout=subprocess.PIPE,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stderr=subprocess.PIPE if stderr else subprocess.DEVNULL, **popen_kw)
        child = cls(popen)
        try:
            await child._connect()
        except BaseException:
            child.abandon()
            raise
        return child

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    async def wait(self) -> int:
        """The exit status, once the process has ended (a cancelled waiter leaves it)."""
        return await asyncio.shield(self._exited)

    def kill_group(self) -> None:
        """SIGKILL to the process's group (started in a session of its own: its children
        too), unless it has been reaped."""
        if self.popen.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)

    def close_pipes(self) -> None:
        """Stop listening to and writing into the process's pipes (unread output dropped)."""
        for transport in self._pipes:  # a write pipe's close would wait to flush its buffer
            if isinstance(transport, asyncio.WriteTransport):
                transport.abort()
            else:
                transport.close()
        for pipe in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if pipe is not None:  # those not handed to a transport yet
                pipe.close()

    def abandon(self) -> None:
        """Kill the group and close the pipes, at once; the exit is still reaped when it
        comes while the loop runs."""
        self.kill_group()
        self.close_pipes()

    # -- the start ----------------------------------------------------------------------
    async def _connect(self) -> None:
        loop, popen = self._loop, self.popen
        if popen.stdin is not None:
            proto = asyncio.StreamReaderProtocol(asyncio.StreamReader(loop=loop), loop=loop)
            transport, _ = await loop.connect_write_pipe(lambda: proto, popen.stdin)
            self._pipes.append(transport)
            self.stdin = asyncio.StreamWriter(transport, proto, None, loop)
        assert popen.stdout is not None
        self.stdout = await self._reader(popen.stdout)
        if popen.stderr is not None:
            self.stderr = await self._reader(popen.stderr)

    async def _reader(self, pipe: IO[bytes]) -> asyncio.StreamReader:
        reader = asyncio.StreamReader(limit=READ_LIMIT, loop=self._loop)
        transport, _ = await self._loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=self._loop), pipe)
        self._pipes.append(transport)
        return reader

    # -- the exit -----------------------------------------------------------------------
    def _watch_exit(self) -> None:
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
            self._loop.call_soon(self._poll, POLL_S[0])
            return
        # closed once the exit is seen, or else when this Child goes (a loop closed first:
        # its reader dropped, the exit never seen)
        self._close_pidfd = weakref.finalize(self, os.close, self._pidfd)
        self._loop.add_reader(self._pidfd, self._reaped)

    def _reaped(self) -> bool:
        """Whether the process has ended (reaped here: its status kept in `popen`)."""
        if self.popen.poll() is None:
            return False
        if self._pidfd is not None and self._close_pidfd is not None:
            self._loop.remove_reader(self._pidfd)
            self._close_pidfd()
            self._pidfd = None
        if not self._exited.done():
            self._exited.set_result(self.popen.returncode)
        return True

    def _poll(self, delay: float) -> None:
        if not self._reaped() and not self._loop.is_closed():
            self._loop.call_later(delay, self._poll, min(delay * 2, POLL_S[1]))
