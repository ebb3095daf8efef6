"""The SFTP channels of one pooled SSH connection, for `SSHTransport`.

paramiko's SFTPClient answers one request at a time: a second thread asking on the same
client may read the first one's answer and drop it. So each channel serves one call at a
time, and calls that do not wait for each other (the stat, readlink and realpath of a
fetch's links) run on several channels of the one connection, each in its own thread.

The first channel has a session slot of its own (sshd's MaxSessions). Each further one
takes a slot from the connection's semaphore while it is open, and only when one is free
right away: it never waits for one, so a burst of file requests cannot starve commands.
An idle extra channel gives its slot back when a command wants one, after `LINGER_S`
without use, and when the connection closes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any, TypeVar

import paramiko

T = TypeVar("T")
LINGER_S = 30.0  # an extra channel left idle this long is closed


class PoolClosed(ConnectionError):
    """The connection these channels rode on was closed (the caller reconnects)."""


class _ExtraRefused(Exception):
    """The server would not open one more channel now (the call uses one already open)."""


class _Channel:
    def __init__(self, holds_slot: bool):
        self.sftp: paramiko.SFTPClient | None = None  # opened by its first call's thread
        self.holds_slot = holds_slot  # True: an extra channel, holding a session slot


class SftpChannels:
    """A connection's SFTP channels, each serving one call at a time (module docstring)."""

    def __init__(self, transport: paramiko.Transport, executor: Executor,
                 sessions: asyncio.Semaphore, slot_wanted: Callable[[], bool], most: int):
        self.transport, self.executor = transport, executor
        self.sessions, self.slot_wanted = sessions, slot_wanted
        self.most = max(1, most)
        self.home: str | None = None  # the login directory, asked once (SFTP "." resolved)
        self.opened = 0  # channels opened over the connection's life (tests, metrics)
        self.closed = False
        self._idle: list[_Channel] = []
        self._count = 0  # channels open, being opened or in use
        self._first_taken = False  # the channel on the connection's own slot exists
        self._waiters: list[asyncio.Future[None]] = []
        self._loop = asyncio.get_running_loop()
        self._linger: asyncio.TimerHandle | None = None

    @property
    def open_channels(self) -> int:
        return self._count

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(sftp, home, *args)` in a thread, on a channel no other call is using. The
        channel comes back to the pool when the thread ends, even if the caller was
        cancelled first (a thread cannot be stopped halfway). An extra channel the server
        refuses to open (sshd frees a closed session's slot a moment after the close) is
        not an error: the call waits for a channel already open."""
        extra = True
        while True:
            ch = await self._take(extra)
            try:
                done = self.executor.submit(self._run, ch, fn, args)
            except BaseException:
                self._give(ch)
                raise
            done.add_done_callback(lambda _, ch=ch: self._from_thread(self._give, ch))
            try:
                return await asyncio.wrap_future(done)
            except _ExtraRefused:
                extra = False

    def _run(self, ch: _Channel, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        if self.closed:
            raise PoolClosed("the connection was closed")
        if ch.sftp is None:
            try:
                sftp = paramiko.SFTPClient.from_transport(self.transport)
            except (paramiko.SSHException, EOFError, OSError):
                if ch.holds_slot and self.transport.is_active():
                    raise _ExtraRefused() from None
                raise
            if sftp is None:
                raise PoolClosed("no SFTP channel could be opened")
            ch.sftp = sftp
            self._from_thread(self._count_opened)
        if self.home is None:
            self.home = ch.sftp.normalize(".")
        return fn(ch.sftp, self.home, *args)

    def _from_thread(self, fn: Callable[..., Any], *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is gone: nothing left to tidy
            self._loop.call_soon_threadsafe(fn, *args)

    def _count_opened(self) -> None:
        self.opened += 1

    async def _take(self, extra: bool = True) -> _Channel:
        while True:
            if self.closed:
                raise PoolClosed("the connection was closed")
            if self._linger is not None:
                self._linger.cancel()
                self._linger = None
            if self._idle:
                return self._idle.pop()  # the one used last
            if not self._first_taken:
                self._first_taken = True
                self._count += 1
                return _Channel(holds_slot=False)
            if extra and self._count < self.most and not self.sessions.locked() \
                    and not self.slot_wanted():
                await self.sessions.acquire()  # free: no wait
                self._count += 1
                return _Channel(holds_slot=True)
            waiter = self._loop.create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    self._wake()  # woken and cancelled at once: pass the turn on
                raise
            finally:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)

    def _give(self, ch: _Channel) -> None:
        broken = ch.sftp is None or ch.sftp.sock.closed
        shed = ch.holds_slot and self.slot_wanted()  # a command waits for a slot
        if self.closed or broken or shed:
            self._end(ch)
        else:
            self._idle.append(ch)
            if self._count == len(self._idle) and self._count > 1:
                if self._linger is not None:
                    self._linger.cancel()
                self._linger = self._loop.call_later(LINGER_S, self.shed)
        self._wake()

    def _wake(self) -> None:
        for w in self._waiters:
            if not w.done():
                w.set_result(None)
                return

    def _end(self, ch: _Channel) -> None:
        """Close a channel that no call is using and give back what it held: an extra
        channel's slot once its close is sent (a command opened in that slot then reaches
        the server after the close)."""
        self._count -= 1
        if not ch.holds_slot:
            self._first_taken = False
        sftp, ch.sftp = ch.sftp, None
        if sftp is not None and not self.closed:  # else closing the connection closes it
            with contextlib.suppress(RuntimeError):  # an executor shut down: closed anyway
                closing = self.executor.submit(sftp.close)
                if ch.holds_slot:
                    closing.add_done_callback(
                        lambda _: self._from_thread(self.sessions.release))
                return
        if ch.holds_slot:
            self.sessions.release()

    def shed(self) -> None:
        """Close the idle extra channels (their session slots go back to the connection)."""
        for ch in [c for c in self._idle if c.holds_slot]:
            self._idle.remove(ch)
            self._end(ch)

    def close(self) -> None:
        """The connection is closing: no new call; the slots the idle channels held come
        back now, those of channels in use when their call ends. Closing the connection
        closes the channels themselves."""
        if self.closed:
            return
        self.closed = True
        if self._linger is not None:
            self._linger.cancel()
        idle, self._idle = self._idle, []
        for ch in idle:
            self._end(ch)
        for w in self._waiters:
            if not w.done():
                w.set_result(None)  # each sees `closed` and fails
