"""Reading paramiko channels from asyncio without a thread per channel.

paramiko's channel buffers set an event when data (or EOF/close) arrives; a stand-in event
forwards that to the loop, so readers await instead of blocking a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import paramiko

from ..aio import within


class Wake:
    """Stands in for the threading.Event paramiko sets when channel data arrives."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop, self.event = loop, asyncio.Event()

    def set(self) -> None:
        with contextlib.suppress(RuntimeError):  # loop closed: nobody is waiting any more
            self.loop.call_soon_threadsafe(self.event.set)

    def clear(self) -> None:  # the reader clears before draining, so no wake-up is lost
        pass


def wake_on_data(ch: paramiko.Channel) -> Wake:
    wake = Wake(asyncio.get_running_loop())
    ch.in_buffer.set_event(wake)
    ch.in_stderr_buffer.set_event(wake)
    return wake


def send_eof(ch: paramiko.Channel, kex_wait_s: float = 60.0) -> None:
    """`ch.shutdown_write()` without its race. paramiko builds the EOF under the channel's
    lock but sends it after: meanwhile the server may close the channel (a short command
    ended) and paramiko's reply CLOSE go first; sshd then gets EOF for a channel it has
    freed and drops the whole connection ("ieof packet referred to nonexistent channel").
    Here the EOF is sent while holding the transport's send lock, then the channel's, so
    it goes before any CLOSE, or not at all once the channel is closed."""
    t = ch.transport
    end = time.monotonic() + kex_wait_s
    while t is not None and t.is_active():
        t.clear_to_send.wait(0.1)  # not during a key exchange (as paramiko's own sends)
        with t.clear_to_send_lock:
            if t.clear_to_send.is_set():
                with ch.lock:
                    eof = None if ch.closed else ch._send_eof()
                    if eof is not None:
                        t._send_message(eof)
                return
        if time.monotonic() > end:
            raise paramiko.SSHException("key exchange did not end: cannot send EOF")


MAX_CHUNK = 1 << 20  # bytes of one stream taken per round, so a fast sender cannot grow it


def drain(ready, recv) -> bytes:
    """What the channel holds now of one stream, at most about MAX_CHUNK bytes."""
    got: list[bytes] = []
    n = 0
    while n < MAX_CHUNK and ready():
        got.append(recv(1 << 16))
        n += len(got[-1])
    return b"".join(got)


async def chunks(ch: paramiko.Channel) -> AsyncIterator[tuple[bytes, bytes]]:
    """(stdout, stderr) bytes as they arrive, until EOF; both are read so that neither
    can fill the channel window and stall the other. Each round takes a bounded amount."""
    wake = wake_on_data(ch)
    while True:
        wake.event.clear()  # before draining: a later arrival sets it again
        out = drain(ch.recv_ready, ch.recv)
        err = drain(ch.recv_stderr_ready, ch.recv_stderr)
        if out or err:
            yield out, err
        elif ch.eof_received or ch.closed:
            return
        else:
            await wake.event.wait()


async def server_closed(ch: paramiko.Channel, within_s: float) -> None:
    """Wait for the server's CLOSE: only then is its MaxSessions slot (nearly) free."""
    wake = wake_on_data(ch)  # a closing channel closes its buffers: sets `wake`
    loop = asyncio.get_running_loop()
    end = loop.time() + within_s
    while not ch.closed and loop.time() < end:
        wake.event.clear()
        if not ch.closed:
            with contextlib.suppress(asyncio.TimeoutError):
                await within(wake.event.wait(), end - loop.time())
