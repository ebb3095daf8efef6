"""SSH transport: one pooled paramiko connection per site, many channels, SFTP on the same link.

paramiko is blocking: connecting, opening channels and SFTP run in a per-site thread pool;
command output is read without a thread per command (see ssh_channel); independent SFTP
requests run on a few SFTP channels at once (see ssh_sftp_pool).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import stat as stat_mod
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import paramiko

from ..aio import within
from ..config import DEFAULT_SFTP_CHANNELS, TransportConfig
from ..log_lines import one_line_logger
from ..model import BadInput, SiteError
from . import ssh_holder, ssh_sftp
from .base import (
    CommandNotSent,
    CommandResult,
    CommandTimeout,
    ConnectionLost,
    FileStat,
    InteractiveHandler,
    LineSplitter,
    StreamOverflow,
    check_argv,
    fetch_too_large,
    file_too_large,
    output_too_large,
    render_command,
    render_stream_command,
    result_or_raise,
    safe_mode,
)
from .ssh_auth import (
    AuthError,
    HostKeyError,
    HostKeyVerifier,
    HostSpec,
    authenticate,
    check_local_files,
    kept_login,
    load_ssh_config,
    parse_jump,
    resolve_host,
    tcp_connect,
    wrap_handler,
)
from .ssh_channel import chunks, send_eof, server_closed
from .ssh_sftp_pool import SftpChannels
from .ssh_shell import RemoteShell, ShellMixin

log = one_line_logger(__name__)
T = TypeVar("T")
_LOST = (paramiko.SSHException, EOFError, ConnectionError, OSError)


class _ChannelNotOpened(ConnectionError):
    """A session channel the server never opened: nothing was sent on it."""


class _Conn:
    def __init__(self, transport: paramiko.Transport, hops: list[paramiko.Transport]):
        self.transport, self.hops = transport, hops
        self.sftp: SftpChannels | None = None  # set on the event loop once connected

    def alive(self) -> bool:
        return self.transport.is_active() and all(h.is_active() for h in self.hops)

    def close(self) -> None:
        """Close the connection (blocking; its channels go with it). On the event loop,
        `SSHTransport._close_conn`, which also gives back the SFTP channels' slots."""
        for c in [self.transport, *reversed(self.hops)]:
            with contextlib.suppress(Exception):
                c.close()


class SSHTransport(ShellMixin):
    kind = "ssh"

    def __init__(
        self,
        cfg: TransportConfig,
        *,
        site: str,
        interactive_handler: InteractiveHandler | None = None,
        max_sessions: int | None = None,
        reconnect_attempts: int | None = None,
        use_shell: bool = True,
        use_holder: bool = True,
    ):
        if not cfg.host:
            raise BadInput(f"site {site}: ssh transport needs a host")
        if cfg.cert_file and not cfg.key_file:
            raise BadInput(f"site {site}: cert_file needs the key_file it certifies")
        self.cfg, self.name = cfg, site
        self.interactive_handler = interactive_handler
        self.max_sessions = max(2, max_sessions or cfg.max_sessions)
        self.reconnect_attempts = max(1, reconnect_attempts or cfg.reconnect_attempts)
        self.connections_opened = 0  # TCP connections made to the target (tests, metrics)
        self.max_output_bytes = cfg.max_output_bytes  # per stream of one command
        self._sshcfg = load_ssh_config(cfg.ssh_config)
        self.spec: HostSpec = resolve_host(
            self._sshcfg, cfg.host, port=cfg.port, user=cfg.user, key_file=cfg.key_file,
            proxy_jump=cfg.proxy_jump)
        if self.spec.proxy_problem:
            raise BadInput(self.spec.proxy_problem)
        self.jumps = parse_jump(self._sshcfg, cfg.proxy_jump or self.spec.proxy_jump)
        self._verifier = HostKeyVerifier(site, cfg.known_hosts, cfg.trust_on_first_use)
        self._pool = ThreadPoolExecutor(self.max_sessions + 2, thread_name_prefix=f"ssh-{site}")
        self._sem = asyncio.Semaphore(self.max_sessions - 1)  # one channel stays for SFTP
        self._slots_wanted = 0  # callers waiting for a session slot (SFTP extras give way)
        # SFTP channels at most: the reserved one, and extras while half the slots allow
        self.sftp_channels = max(1, min(cfg.sftp_channels or DEFAULT_SFTP_CHANNELS,
                                        (self.max_sessions - 1) // 2))
        self._lock = asyncio.Lock()
        self._conn: _Conn | None = None
        self._closed = False
        # the last login that wanted a one-time code and failed: no connect is tried again
        # until the user logs in (`login`), so nothing retries a code in a loop
        self._login_failed: AuthError | None = None
        # run_fast's long-lived shell holds one session slot: only with slots to spare
        self.use_shell = use_shell and self.max_sessions >= 4
        self._shell: RemoteShell | None = None
        self._shell_lock = asyncio.Lock()
        self.shells_opened = 0
        # a login holder's socket (`keep_login`) is looked for before each connect
        self.use_holder = use_holder
        self.holder_connections = 0  # connections made through a holder (tests, metrics)

    def describe(self) -> dict[str, Any]:
        return {
            "site": self.name,
            "kind": "ssh",
            "host": self.cfg.host,
            "hostname": self.spec.hostname,
            "port": self.spec.port,
            "user": self.spec.user,
            "proxy_jump": ",".join(h.label for h in self.jumps) or None,
            "connected": bool(self._conn and self._conn.alive()),
            "needs_login": self._login_failed is not None,
            "cert_file": self.cfg.cert_file,
            "connections_opened": self.connections_opened,
            "holder_connections": self.holder_connections,
            "shells_opened": self.shells_opened,
            "sftp_channels": self._conn.sftp.open_channels
            if self._conn is not None and self._conn.sftp is not None else 0,
        }

    def __repr__(self) -> str:
        return f"SSHTransport({self.name!r}, {self.spec.label})"

    async def _in_pool(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    async def _take_session(self) -> None:
        """One of the connection's session slots (sshd MaxSessions; `_sem.release()` gives
        it back). When none is free, idle extra SFTP channels give theirs back first."""
        if not self._sem.locked():
            await self._sem.acquire()
            return
        self._slots_wanted += 1
        try:
            if self._conn is not None and self._conn.sftp is not None:
                self._conn.sftp.shed()
            await self._sem.acquire()
        finally:
            self._slots_wanted -= 1

    @contextlib.asynccontextmanager
    async def _session(self) -> AsyncIterator[None]:
        await self._take_session()
        try:
            yield
        finally:
            self._sem.release()

    # ---- connection ----
    def _open_hop(self, spec: HostSpec, sock: Any, handler: InteractiveHandler | None):
        t = paramiko.Transport(sock)
        try:
            t.banner_timeout = t.auth_timeout = self.cfg.connect_timeout_s
            t.set_keepalive(self.cfg.keepalive_s)
            known = self._verifier.preferred_key_types(spec)
            opts = t.get_security_options()
            if known:  # ask for the key type known_hosts has, as OpenSSH does
                opts.key_types = [k for k in known if k in opts.key_types] + [
                    k for k in opts.key_types if k not in known
                ]
            try:
                t.start_client(timeout=self.cfg.connect_timeout_s)
            except (paramiko.SSHException, EOFError, OSError) as e:
                raise SiteError(
                    f"{self.name}: SSH handshake with {spec.label} failed: {e}"
                ) from None
            if not (t.is_active() and t.initial_kex_done):  # start_client's timeout is silent
                raise SiteError(f"{self.name}: SSH handshake with {spec.label} did not finish "
                                f"within {self.cfg.connect_timeout_s:g} s")
            self._verifier.verify(spec, t.get_remote_server_key())
            authenticate(t, self.name, spec, self.cfg, handler)
        except BaseException:
            t.close()
            raise
        return t

    def _connect(self, loop: asyncio.AbstractEventLoop,
                 ask: InteractiveHandler | None = None) -> _Conn:
        check_local_files(self.name, self.cfg)  # bad input: never retried
        held = self._through_holder()
        if held is not None:
            return held
        ask = ask or self.interactive_handler
        handler = ask and wrap_handler(ask, loop)
        hops: list[paramiko.Transport] = []
        try:
            sock: Any = None
            for spec in [*self.jumps, self.spec]:
                if not hops:
                    sock = tcp_connect(self.name, spec, self.cfg.connect_timeout_s)
                else:
                    try:
                        sock = hops[-1].open_channel(
                            "direct-tcpip", (spec.hostname, spec.port), ("127.0.0.1", 0),
                            timeout=self.cfg.connect_timeout_s,
                        )
                    except (paramiko.SSHException, OSError) as e:
                        raise SiteError(
                            f"{self.name}: jump host could not reach {spec.label}: {e}"
                        ) from None
                hops.append(self._open_hop(spec, sock, handler))
        except BaseException:
            for h in reversed(hops):
                h.close()
            if sock is not None and not hops:
                sock.close()
            raise
        self.connections_opened += 1
        log.info("%s: connected to %s (connection #%d)", self.name, self.spec.label,
                 self.connections_opened)
        return _Conn(hops[-1], hops[:-1])

    def _holder_path(self, create: bool = False) -> Path:
        return ssh_holder.socket_path(self.name, self.spec.user, self.spec.hostname,
                                      self.spec.port, create)

    def _through_holder(self) -> _Conn | None:
        """A connection through this login's holder (`keep_login`), when one is alive."""
        if not self.use_holder:
            return None
        try:
            path = self._holder_path()
        except BadInput as e:
            log.debug("%s: no login holder: %s", self.name, e)
            return None
        t = ssh_holder.connect(path, self.spec.user, self.cfg.connect_timeout_s)
        if t is None:
            return None
        self.holder_connections += 1
        log.info("%s: connected through the login holder %s", self.name, path)
        return _Conn(t, [])

    def connect_blocking(self) -> _Conn:
        """Log in to the site itself (no holder), in this thread: for the holder process."""
        return self._connect(None)

    def ssh_config_keeps(self) -> dict[str, Any]:
        """What the user's ssh_config says of keeping this host's login: {"idle_s"} (seconds
        unused, math.inf: until logout; None: ssh keeps nothing), {"origin"} (the
        ControlPersist line) and {"control_path"} (ssh's own master socket, which diamond does
        not use: it keeps the login in its own holder). BadInput: a ControlPersist ssh
        refuses."""
        kept = kept_login(self._sshcfg, self.spec)
        return {"idle_s": None if kept is None else kept.idle_s or math.inf,
                "origin": kept and kept.origin, "control_path": self.spec.control_path
                if (self.spec.control_master or "no").lower() != "no" else None}

    async def keep_login(self, idle_s: float,
                         ask: InteractiveHandler | None = None) -> dict[str, Any]:
        """Leave a login holder keeping one authenticated connection to the site for later
        processes, until `idle_s` seconds pass with nothing running through it (math.inf:
        until `end_kept_login`).
        Its one-time code prompt goes to `ask` (else the transport's handler): one attempt.
        {"new_connection", "socket", "pid"}; a holder already alive is kept (pid None)."""
        path = self._holder_path(create=True)
        ask = ask or self.interactive_handler
        handler = ask and wrap_handler(ask, asyncio.get_running_loop())
        try:
            pid = await self._in_pool(ssh_holder.keep, self.cfg, self.name, path,
                                      self.spec.user, None if math.isinf(idle_s) else idle_s,
                                      handler,
                                      self.cfg.connect_timeout_s)
        except AuthError as e:
            if e.interactive:
                self._login_failed = e
            raise
        self._login_failed = None
        return {"new_connection": pid is not None, "socket": str(path), "pid": pid}

    async def end_kept_login(self) -> bool:
        """End this login's holder; True when one was running."""
        return await self._in_pool(ssh_holder.stop, self._holder_path(), self.spec.user,
                                   self.cfg.connect_timeout_s)

    async def _ensure(self, ask: InteractiveHandler | None = None, login: bool = False) -> _Conn:
        if self._closed:
            raise SiteError(f"{self.name}: transport is closed")
        conn = self._conn
        if conn is not None and conn.alive():
            return conn
        if self._login_failed is not None and not login:
            raise self._login_failed
        async with self._lock:
            if self._conn is not None and self._conn.alive():
                return self._conn
            if self._login_failed is not None and not login:
                raise self._login_failed
            if self._conn is not None:
                self._close_conn(self._conn)
                self._conn = None
            delay, last = 0.25, None
            for attempt in range(self.reconnect_attempts):
                try:
                    loop = asyncio.get_running_loop()
                    conn = await self._in_pool(self._connect, loop, ask)
                    conn.sftp = SftpChannels(conn.transport, self._pool, self._sem,
                                             lambda: self._slots_wanted > 0,
                                             self.sftp_channels)
                    self._conn, self._login_failed = conn, None
                    return conn
                except AuthError as e:
                    if e.interactive:
                        self._login_failed = e
                    raise
                except (HostKeyError, BadInput):
                    raise
                except SiteError as e:
                    last = e
                    if attempt + 1 < self.reconnect_attempts:
                        await asyncio.sleep(delay)
                        delay = min(delay * 2, 8.0)
            assert last is not None
            raise last

    @property
    def needs_login(self) -> bool:
        """The last connect wanted a one-time code and failed: only `login` connects again."""
        return self._login_failed is not None

    async def login(self, ask: InteractiveHandler | None = None) -> bool:
        """Connect now if not connected, asking `ask` (else the transport's own handler) for a
        one-time code when the site wants one: one attempt, even after a failed login. True
        when a new connection was made, False when one was open already."""
        before = self._conn if self._conn is not None and self._conn.alive() else None
        return await self._ensure(ask, login=True) is not before

    def _close_conn(self, conn: _Conn) -> None:
        if conn.sftp is not None:
            conn.sftp.close()
        conn.close()

    def drop_if_lost(self) -> bool:
        """Close the connection when its link is gone, as the next call would: its SFTP
        channels' session slots come back now, not at that call or LINGER_S later (a copy
        whose own channel found the link lost says so before its error is raised). True
        when one was dropped."""
        conn = self._conn
        if conn is None or conn.alive():
            return False
        self._drop(conn, ConnectionError("closed"))
        return True

    def _drop(self, conn: _Conn, why: Exception) -> ConnectionLost:
        """Close a broken connection (the next call reconnects) and describe the loss."""
        self._close_conn(conn)
        if self._conn is conn:
            self._conn = None
        return ConnectionLost(
            f"{self.name}: connection to {self.spec.label} lost: {why or 'closed'}")

    def _exec(self, conn: _Conn, line: str) -> paramiko.Channel:
        try:
            ch = conn.transport.open_session(timeout=self.cfg.connect_timeout_s)
        except _LOST as e:  # no channel: the command line was never sent
            raise _ChannelNotOpened(str(e) or type(e).__name__) from e
        ch.exec_command(line)
        return ch

    async def _open_channel(self, line: str) -> tuple[_Conn, paramiko.Channel]:
        # Nothing has run yet, so one transparent retry on a stale connection is safe.
        # A refused open on a live link is retried briefly: sshd frees a closed session's
        # MaxSessions slot a moment after the close.
        reconnected, delay = False, 0.01
        while True:
            try:
                conn = await self._ensure()
            except (AuthError, HostKeyError, CommandNotSent):
                raise
            except SiteError as e:  # no connection (a reconnect failed): nothing was sent
                raise CommandNotSent(f"{e} (before the command was sent)") from None
            try:
                return conn, await self._in_pool(self._exec, conn, line)
            except _LOST as e:
                # paramiko shares one "saved exception" between threads, so a refused open
                # may surface as a bare SSHException: retry any failure on a live link.
                if conn.alive():
                    if delay > 1.5:  # the server refused the session: nothing ran
                        raise CommandNotSent(f"{self.name}: cannot open a channel: {e}") \
                            from None
                    await asyncio.sleep(delay)
                    delay *= 2
                    continue
                err = self._drop(conn, e)
                if reconnected:
                    if isinstance(e, _ChannelNotOpened):  # lost before the command went
                        raise CommandNotSent(f"{err} (before the command was sent)") from None
                    raise err from None
                reconnected = True

    # ---- commands ----
    async def run(
        self,
        argv: list[str],
        *,
        stdin: bytes | None = None,
        env: dict[str, str] | None = None,
        preamble: str = "",
        timeout: float | None = None,
        check: bool = False,
    ) -> CommandResult:
        argv = check_argv(argv)
        line = render_command(argv, env, preamble)
        timeout = self.cfg.command_timeout_s if timeout is None else timeout
        out, err = bytearray(), bytearray()
        cap = self.max_output_bytes

        async def talk(ch: paramiko.Channel) -> int:
            if stdin:
                await self._in_pool(ch.sendall, stdin)
            send_eof(ch)
            async for o, e in chunks(ch):
                out.extend(o)
                err.extend(e)
                for name, buf in (("stdout", out), ("stderr", err)):
                    if len(buf) > cap:  # the channel is closed below: the command ends
                        raise StreamOverflow(name)
            if not ch.exit_status_ready():
                await self._in_pool(ch.status_event.wait, 5.0)
            status = ch.recv_exit_status() if ch.exit_status_ready() else -1
            await server_closed(ch, 2.0)
            return status

        async with self._session():
            t0 = time.monotonic()
            conn, ch = await self._open_channel(line)
            try:
                status = await within(talk(ch), timeout)
            except asyncio.TimeoutError:
                raise CommandTimeout(
                    f"{self.name}: {argv[0]} timed out after {timeout:g} s"
                    " (the remote process may still be running)"
                ) from None
            except StreamOverflow as e:
                out.clear()
                err.clear()
                raise output_too_large(self.name, argv[0], e.stream, cap) from None
            except _LOST as e:
                raise self._drop(conn, e) from None
            finally:
                ch.close()
            if status == -1 and not conn.alive():
                raise self._drop(conn, ConnectionError(f"while running {argv[0]}"))
        res = CommandResult(
            argv, status, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
            time.monotonic() - t0,
        )
        return result_or_raise(self.name, res, check)

    async def open_stream(
        self, argv: list[str], *, env: dict[str, str] | None = None, preamble: str = ""
    ) -> AsyncIterator[str]:
        """Yield stdout lines of a long-lived command (`tail -F FILE`). Ending the iteration
        (break, aclose, task cancelled) closes the channel and kills the remote command."""
        line = render_stream_command(check_argv(argv), env, preamble)
        async with self._session():
            conn, ch = await self._open_channel(line)
            lines = LineSplitter()
            try:
                async for o, _ in chunks(ch):  # stderr is read and dropped
                    for ln in lines.feed(o):
                        yield ln
                for ln in lines.end():
                    yield ln
                if not conn.alive():
                    raise self._drop(conn, ConnectionError("while streaming"))
            finally:
                with contextlib.suppress(Exception):
                    send_eof(ch)  # the remote watcher sees EOF and kills the command
                    ch.close()

    # ---- files (SFTP on the same connection, each channel one request at a time) ----
    async def _sftp_call(self, what: str, fn: Callable[..., T], *args: Any) -> T:
        conn = await self._ensure()
        assert conn.sftp is not None
        try:
            return await conn.sftp.call(fn, *args)
        except FileNotFoundError:
            raise
        except _LOST as e:
            if conn.alive():  # an SFTP status error (permission denied, ...)
                raise SiteError(f"{self.name}: {what}: {getattr(e, 'strerror', '') or e}") \
                    from None
            raise self._drop(conn, e) from None

    async def _sftp_each(self, what: str, fn: Callable[..., T],
                         calls: list[tuple[Any, ...]]) -> list[T]:
        """`fn` with each of `calls`' arguments, on as many SFTP channels at once as the
        pool may open (`sftp_channels`); the answers in the calls' order. The first error
        is raised, and the calls not done yet are cancelled."""
        answers: list[Any] = [None] * len(calls)
        pending = iter(range(len(calls)))

        async def one_channel() -> None:
            for i in pending:
                answers[i] = await self._sftp_call(what, fn, *calls[i])

        workers = [asyncio.ensure_future(one_channel())
                   for _ in range(min(self.sftp_channels, len(calls)))]
        try:
            await asyncio.gather(*workers)
        finally:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        return answers

    async def put_bytes(self, data: bytes, remote_path: str, mode: int = 0o644) -> None:
        await self._sftp_call(f"cannot write {remote_path}", ssh_sftp.put, data,
                              remote_path, mode)

    async def get_bytes(self, remote_path: str) -> bytes:
        """The whole file, when it holds at most `max_output_bytes` (else OutputTooLarge)."""
        try:
            return await self._sftp_call(f"cannot read {remote_path}", ssh_sftp.get,
                                         remote_path, self.max_output_bytes)
        except FileNotFoundError:
            raise SiteError(f"{self.name}: no such file: {remote_path}") from None
        except ssh_sftp.FileTooLarge:
            raise file_too_large(self.name, remote_path, self.max_output_bytes) from None

    async def put_file(self, local_path: str, remote_path: str, mode: int | None = None) -> None:
        data = await asyncio.to_thread(Path(local_path).read_bytes)
        m = mode if mode is not None else stat_mod.S_IMODE(os.stat(local_path).st_mode)
        await self.put_bytes(data, remote_path, m)

    async def get_file(self, remote_path: str, local_path: str, *,
                       max_bytes: int | None = None, within: str | None = None) -> None:
        """Streamed to disk; the local file gets the remote mode without setuid, setgid,
        sticky or world-write bits (`safe_mode`). Above `max_bytes`: not copied."""
        st = await self.stat(remote_path)
        if st is None:
            raise SiteError(f"{self.name}: no such file: {remote_path}")
        if max_bytes is not None and st.size > max_bytes:
            raise fetch_too_large(self.name, remote_path, st.size, max_bytes)
        try:
            await self._sftp_call(f"cannot fetch {remote_path}", ssh_sftp.download,
                                  remote_path, local_path, safe_mode(st.mode), max_bytes,
                                  within)
        except FileNotFoundError:
            raise SiteError(f"{self.name}: no such file: {remote_path}") from None
        except ssh_sftp.FileTooLarge as e:  # it grew between the stat and the open
            size = e.args[0] if e.args and isinstance(e.args[0], int) else None
            raise fetch_too_large(self.name, remote_path, size, max_bytes or 0) from None

    async def read_end(self, path: str, max_bytes: int) -> bytes | None:
        """The last `max_bytes` bytes of a file, over SFTP (None: no such file)."""
        return await self._sftp_call(f"cannot read {path}", ssh_sftp.read_end, path,
                                     int(max_bytes))

    async def stat(self, path: str, *, follow_links: bool = True) -> FileStat | None:
        return await self._sftp_call(f"cannot stat {path}", ssh_sftp.stat, path, follow_links)

    async def link_target(self, path: str) -> tuple[str, str | None]:
        return await self._sftp_call(f"cannot read the link {path}", ssh_sftp.link_target,
                                     path)

    async def real_path(self, path: str) -> str | None:
        return await self._sftp_call(f"cannot resolve {path}", ssh_sftp.real_path, path)

    async def list_files(self, root: str, *, max_depth: int = 3, limit: int = 10000,
                         special: bool = False) -> list[FileStat]:
        """Listed a level at a time, each level's directories on the SFTP channels at once
        (`FileWalk`: the files and their order as listed one directory after another)."""
        walk = ssh_sftp.FileWalk(root, max_depth, limit, special)
        while todo := walk.step():
            entries = await self._sftp_each(f"cannot list {root}", ssh_sftp.list_dir,
                                            [(root, rel) for rel in todo])
            for rel, listing in zip(todo, entries, strict=True):
                walk.add(rel, listing)
        return walk.files

    async def close(self) -> None:
        self._closed = True
        self._close_shell()
        if self._conn is not None:
            conn, self._conn = self._conn, None
            if conn.sftp is not None:
                conn.sftp.close()
            await self._in_pool(conn.close)
        self._pool.shutdown(wait=False)

