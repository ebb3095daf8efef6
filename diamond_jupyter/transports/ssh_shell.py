"""A long-lived remote POSIX shell on one channel: short commands without SSH session setup.

Opening an SSH session (channel open, sshd forks a session, the login shell starts) costs
as much as an sbatch; a shell kept open on its own channel of the pooled connection runs each
command for the price of a fork. Every command is written to the shell's stdin as:

    ( eval 'cd ~ && unset ... && export ... && exec ARGV...' ) </dev/null
    printf '\\n%s %d\\n' MARKER "$?"; printf '\\n%s\\n' MARKER >&2

- the command line is `render_shell_command`'s (every argv/env item quoted; the environment
  set by builtins, no `env` process), quoted once more as
  ONE argument of `eval`, in a subshell: nothing user-supplied is ever parsed unquoted, a
  preamble's `exit`/`cd`/syntax error ends the subshell only, never the long-lived shell;
- the command never reads the shell's stdin (`</dev/null`, or its own data: below), so it
  cannot swallow later commands;
- stdout ends with `\\nMARKER STATUS\\n`, stderr (the channel's extended data) with
  `\\nMARKER\\n`; MARKER is 128 random bits drawn per command, so no output (binary, another
  command's marker, a guess) can end a frame early; exactly one "\\n" before it is ours;
- stdin data (a job script) travels in a quoted here-document with a random delimiter
  (`( eval ... ) <<'DMD_EOF_x'`: nothing inside is expanded) when it is UTF-8 text ending in a
  newline without NUL bytes; otherwise base64-encoded, in a here-document whose delimiter
  contains "_", which no base64 line can (`base64 -d <<'DMD_EOF_x' | ( eval ... )`).
Late output of a background process a command left behind would land in a later command's
frame: the shell is for the engine's own short commands (submit, scheduler queries).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import secrets
import shlex
import time

import paramiko

from ..aio import within
from ..model import SiteError
from .base import (
    DEFAULT_MAX_OUTPUT_BYTES,
    CommandNotSent,
    CommandResult,
    CommandTimeout,
    ConnectionLost,
    check_argv,
    output_too_large,
    render_shell_command,
    result_or_raise,
)
from .ssh_channel import drain, wake_on_data

SHELL_COMMAND = "exec /bin/sh"
MAX_STDIN = 1 << 20  # larger stdin goes over a plain exec channel


class ShellLost(Exception):
    """The shell's channel ended (shell exited, killed, connection gone) before the frame."""


class ShellUnsent(ShellLost):
    """The shell's channel was gone before any byte of the command left: nothing ran."""


class ShellOverflow(ShellLost):
    """A stream of the command passed the output cap: reading stopped, the frame is lost."""

    def __init__(self, stream: str) -> None:  # "stdout" or "stderr"
        super().__init__(f"more than the output cap on {stream}")
        self.stream = stream


def frame(line: str, marker: str, stdin: bytes | None) -> bytes:
    """The text written to the shell for one command (see the module docstring)."""
    body = f"( eval {shlex.quote(line)} )"
    if stdin and plain_heredoc(stdin):  # verbatim: no decoder process to start
        delim = f"DMD_EOF_{secrets.token_hex(16)}"
        while f"\n{delim}\n".encode() in b"\n" + stdin:  # never, in practice
            delim = f"DMD_EOF_{secrets.token_hex(16)}"
        cmd = f"{body} <<'{delim}'\n{stdin.decode()}{delim}\n"
    elif stdin:
        delim = f"DMD_EOF_{secrets.token_hex(8)}"  # "_" is outside the base64 alphabet
        data = base64.encodebytes(stdin).decode("ascii")
        cmd = f"base64 -d <<'{delim}' | {body}\n{data}{delim}\n"
    else:
        cmd = f"{body} </dev/null\n"
    return (cmd + f"printf '\\n%s %d\\n' {marker} \"$?\"; printf '\\n%s\\n' {marker} >&2\n"
            ).encode()


def plain_heredoc(data: bytes) -> bool:
    """Can `data` travel verbatim in a quoted here-document (`<<'DELIM'`)? A here-document
    is text: it cannot carry NUL bytes, and its content always ends with a newline. Its
    delimiter is random (128 bits) and checked not to occur as a line of the data; with a
    quoted delimiter the shell expands nothing inside. Anything else travels as base64."""
    if not data.endswith(b"\n") or b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def new_marker() -> str:
    return f"dmd{secrets.token_hex(16)}"


def _dead(ch: paramiko.Channel) -> bool:
    return ch.closed or ch.eof_received or ch.exit_status_ready()


STATUS_LINE = 16  # bytes after the stdout marker: the status ("-1", "255") and "\n"


async def read_frame(ch: paramiko.Channel, marker: str,
                     cap: int = DEFAULT_MAX_OUTPUT_BYTES) -> tuple[int, bytes, bytes, bool]:
    """(status, stdout, stderr, clean) of the command framed by `marker`; ShellLost if the
    channel ends first. Both streams are drained as data arrives, so neither can stall the
    other. `clean` is False when bytes followed a marker: the shell writes nothing there, so
    a background process is still writing; the result stands (those bytes are dropped), the
    shell is replaced. A stream passing `cap` bytes before its marker raises ShellOverflow:
    the frame is lost with it."""
    wake = wake_on_data(ch)
    out_end, err_end = f"\n{marker} ".encode(), f"\n{marker}\n".encode()
    out, err = bytearray(), bytearray()
    status: int | None = None
    err_done = False
    o_from = e_from = 0
    clean = True
    while True:
        wake.event.clear()  # before draining: a later arrival sets it again
        o, e = drain(ch.recv_ready, ch.recv), drain(ch.recv_stderr_ready, ch.recv_stderr)
        got = bool(o or e)
        if status is None:
            out += o
        elif o:  # after the frame's end: a background writer; never part of the result
            clean = False
        if not err_done:
            err += e
        elif e:
            clean = False
        if status is None and (i := out.find(out_end, o_from)) >= 0:
            if i > cap:
                raise ShellOverflow("stdout")
            j = out.find(b"\n", i + len(out_end))
            if j >= 0:
                try:
                    status = int(out[i + len(out_end):j])
                except ValueError:
                    raise ShellLost("garbled end marker") from None
                clean = clean and not out[j + 1:]  # only a stray background writer
                del out[i:]
            elif len(out) - i > len(out_end) + STATUS_LINE:
                raise ShellLost("garbled end marker")
        elif status is None:
            o_from = max(0, len(out) - len(out_end))
            if o_from >= cap:  # all but the last len(out_end) bytes are surely output
                raise ShellOverflow("stdout")
        if not err_done:
            if (k := err.find(err_end, e_from)) >= 0:
                if k > cap:
                    raise ShellOverflow("stderr")
                clean = clean and not err[k + len(err_end):]
                del err[k:]
                err_done = True
            else:
                e_from = max(0, len(err) - len(err_end))
                if e_from >= cap:
                    raise ShellOverflow("stderr")
        if status is not None and err_done:
            return status, bytes(out), bytes(err), clean
        if got:
            continue
        if _dead(ch):
            raise ShellLost("the remote shell ended")
        # exit-status does not wake the buffers (a killed shell's child may still hold the
        # pipes open): look again now and then
        with contextlib.suppress(asyncio.TimeoutError):
            await within(wake.event.wait(), 0.25)


class RemoteShell:
    """One shell on its own channel; `on_close` frees the session slot it holds (once)."""

    def __init__(self, conn: object, ch: paramiko.Channel, on_close,
                 cap: int = DEFAULT_MAX_OUTPUT_BYTES) -> None:
        self.conn, self.ch, self._on_close = conn, ch, on_close
        self.cap = cap  # bytes per stream of one command's frame
        self.has_base64 = False
        self.commands = 0

    def dead(self) -> bool:
        return _dead(self.ch) or not self.conn.alive()  # type: ignore[attr-defined]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ch.close()
        cb, self._on_close = self._on_close, None
        if cb is not None:
            cb()

    async def exchange(self, send, data: bytes, marker: str) -> tuple[int, bytes, bytes, bool]:
        """Write one framed command (`send` runs the blocking sendall) and read its frame."""
        self.commands += 1
        sent = 0

        def push() -> None:  # sendall, counting what the channel took
            nonlocal sent
            while sent < len(data):
                n = self.ch.send(data[sent:])
                if n == 0:  # the channel was closed or ended its side
                    raise EOFError("the channel is closed")
                sent += n

        try:
            await send(push)
        except (paramiko.SSHException, EOFError, OSError) as e:
            lost = ShellUnsent if sent == 0 else ShellLost
            raise lost(f"cannot write to the remote shell: {e or type(e).__name__}") from None
        return await read_frame(self.ch, marker, self.cap)

    async def handshake(self, send) -> None:
        """Skip whatever the login shell printed first (it precedes the marker and is
        dropped with the frame's output); learn whether `base64` exists there."""
        marker = new_marker()
        probe = (f"command -v base64 >/dev/null 2>&1; printf '\\n%s %d\\n' {marker} \"$?\"; "
                 f"printf '\\n%s\\n' {marker} >&2\n").encode()
        status, _, _, _ = await self.exchange(send, probe, marker)
        self.commands = 0
        self.has_base64 = status == 0


class ShellMixin:
    """`run_fast` for SSHTransport: short commands on the site's long-lived shell.

    One shell per site, commands serialized on it. A caller that finds it busy (or no free
    session slot for it) uses a plain exec channel instead, so concurrency and `run()`'s
    semantics are unchanged; only the uncontended case gets faster. A shell that dies, times
    out or is cancelled mid-command is closed (the command fails with SiteError /
    CommandTimeout, never retried: it may have run); the next call opens a new one. A
    link found dead before any byte of the command left (it died after the liveness check)
    ran nothing: that command goes over a plain channel, which reconnects.
    """

    use_shell: bool
    shells_opened: int
    _shell: RemoteShell | None
    _shell_lock: asyncio.Lock

    def fast_path_busy(self) -> bool:
        """A command is on the shell now: `run_fast` would open a plain channel."""
        return self.use_shell and self._shell_lock.locked()

    async def run_fast(self, argv: list[str], *, stdin: bytes | None = None,
                       env: dict[str, str] | None = None, preamble: str = "",
                       timeout: float | None = None, check: bool = False) -> CommandResult:
        argv = check_argv(argv)
        line = render_shell_command(argv, env, preamble)
        timeout = self.cfg.command_timeout_s if timeout is None else timeout  # type: ignore
        plain = dict(stdin=stdin, env=env, preamble=preamble, timeout=timeout, check=check)
        if not self.use_shell or self._shell_lock.locked() or len(stdin or b"") > MAX_STDIN:
            return await self.run(argv, **plain)  # type: ignore[attr-defined]
        async with self._shell_lock:
            try:
                sh = await self._ready_shell()
            except ConnectionLost as e:  # the shell did not start: the command never went
                raise CommandNotSent(f"{e} (before the command was sent)") from None
            if sh is not None and (sh.has_base64 or not stdin or plain_heredoc(stdin)):
                res = await self._on_shell(sh, argv, line, stdin, timeout)
                if res is not None:
                    return result_or_raise(self.name, res, check)  # type: ignore[attr-defined]
        return await self.run(argv, **plain)  # type: ignore[attr-defined]

    async def _ready_shell(self) -> RemoteShell | None:
        """The live shell, or a new one (nothing was sent to a dead one: safe to replace)."""
        if self._shell is not None and not self._shell.dead():
            return self._shell
        self._close_shell()
        sem: asyncio.Semaphore = self._sem  # type: ignore[attr-defined]
        if sem.locked():  # every session slot busy: do not wait for one here
            return None
        await sem.acquire()  # held by the shell until it is closed
        try:
            conn, ch = await self._open_channel(SHELL_COMMAND)  # type: ignore[attr-defined]
        except BaseException:
            sem.release()
            raise
        sh = RemoteShell(conn, ch, sem.release, self.max_output_bytes)  # type: ignore
        try:
            await within(sh.handshake(self._in_pool), 10.0)  # type: ignore
        except BaseException as e:
            sh.close()
            if isinstance(e, (ShellLost, asyncio.TimeoutError)):
                return None  # no usable shell there: plain channels still work
            raise
        self._shell = sh
        self.shells_opened += 1
        return sh

    def _close_shell(self) -> None:
        sh, self._shell = self._shell, None
        if sh is not None:
            sh.close()

    async def _on_shell(self, sh: RemoteShell, argv: list[str], line: str,
                        stdin: bytes | None, timeout: float | None) -> CommandResult | None:
        """The command's result on the shell; None when nothing was sent (the link was
        already gone), so the caller may run it elsewhere."""
        marker = new_marker()
        t0 = time.monotonic()
        try:
            status, out, err, clean = await within(
                sh.exchange(self._in_pool, frame(line, marker, stdin), marker),  # type: ignore
                timeout)
        except asyncio.TimeoutError:
            self._close_shell()
            raise CommandTimeout(
                f"{self.name}: {argv[0]} timed out after {timeout:g} s"  # type: ignore
                " (the remote process may still be running)") from None
        except ShellOverflow as e:  # its frame is lost with the bytes not read: new shell
            self._close_shell()
            raise output_too_large(self.name, argv[0], e.stream, sh.cap) from None  # type: ignore
        except ShellUnsent as e:
            self._close_shell()
            if not sh.conn.alive():  # type: ignore[attr-defined]
                self._drop(sh.conn, e)  # type: ignore[attr-defined]
            return None
        except ShellLost as e:
            self._close_shell()
            if not sh.conn.alive():  # type: ignore[attr-defined]
                raise self._drop(sh.conn, e) from None  # type: ignore[attr-defined]
            raise SiteError(f"{self.name}: remote shell lost while running "  # type: ignore
                            f"{argv[0]}: {e}") from None
        except BaseException:  # cancelled mid-command: the shell's state is unknown
            self._close_shell()
            raise
        if not clean:
            self._close_shell()
        return CommandResult(argv, status, out.decode("utf-8", "replace"),
                             err.decode("utf-8", "replace"), time.monotonic() - t0)
