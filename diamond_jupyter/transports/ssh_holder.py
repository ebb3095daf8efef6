"""One login per site for many `diamond` commands, as OpenSSH's ControlMaster/ControlPersist.

`diamond login SITE --persist DURATION` starts a holder: a detached process that logs in to
the site (its one-time code prompt relayed to the command that started it, over a private
pipe) and keeps the authenticated connection. It listens on a Unix socket in a per-user
runtime directory (0700; the socket 0600) and serves only peers of its own uid
(SO_PEERCRED). The local leg is SSH too (paramiko, a throwaway host key whose public half
sits beside the socket, no authentication past the uid check): a later command opens its
exec and SFTP channels there as on any SSH connection, and the holder opens each on its
own connection and splices the bytes, EOF and exit status across. No secret crosses the
socket. The holder ends after DURATION with no channel open, when its connection drops,
or on `diamond logout SITE`; a command that finds no live holder connects as before.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import socket
import stat as stat_mod
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import paramiko

from ..config import TransportConfig
from ..log_lines import one_line_logger
from ..model import BadInput, SiteError
from .base import AuthError, HostKeyError

log = one_line_logger(__name__)
STOP_REQUEST = "diamond-holder-stop"
_MAX_SOCKET_PATH = 107  # sockaddr_un's sun_path, less its final NUL
_BINDING = ".new"  # the suffix of a socket bound but not yet listening
_PUMP = 32768
START_WAIT_S = 120.0  # how long a login waits for another one starting the same holder


# ---- where holders live, and who may talk to them ----

def holder_dir(create: bool = True) -> Path:
    """The directory of this user's holder sockets: `diamond-ssh` in XDG_RUNTIME_DIR, else in
    Jupyter's runtime directory; made 0700 (`create`), and refused when another user owns
    it."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if not base:
        from jupyter_core.paths import jupyter_runtime_dir

        base = jupyter_runtime_dir()
    d = Path(base) / "diamond-ssh"
    if create:
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
    elif not d.exists():
        return d
    st = d.lstat()
    if not stat_mod.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise BadInput(f"{d} is not a directory of this user's (uid {os.getuid()}); the "
                       "login holder needs a private runtime directory (XDG_RUNTIME_DIR)")
    if stat_mod.S_IMODE(st.st_mode) != 0o700:
        d.chmod(0o700)
    return d


def socket_path(site: str, user: str, hostname: str, port: int, create: bool = False) -> Path:
    """The holder socket of one login: the site's name (readable part) and a digest of the
    name, user, host and port, so a site renamed or pointed elsewhere never meets it."""
    digest = hashlib.sha256(f"{site}\0{user}\0{hostname}\0{port}".encode()).hexdigest()[:16]
    readable = re.sub(r"[^A-Za-z0-9_.-]", "_", site)[:24]
    path = holder_dir(create) / f"{readable}-{digest}.sock"
    if len(os.fsencode(str(path) + _BINDING)) > _MAX_SOCKET_PATH:
        raise BadInput(f"the holder socket path {path} is longer than a Unix socket allows "
                       f"({_MAX_SOCKET_PATH} bytes); set XDG_RUNTIME_DIR to a shorter directory")
    return path


def _key_path(sock: Path) -> Path:
    return sock.with_suffix(".pub")


def _lock_path(sock: Path) -> Path:
    return sock.with_suffix(".lock")


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except OSError:
        return None


def peer_uid(conn: socket.socket) -> int:
    """The uid of the process at the other end of a Unix socket (SO_PEERCRED)."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]  # struct ucred: pid, uid, gid


def peer_allowed(conn: socket.socket, uid: int | None = None) -> bool:
    """Whether the peer runs as `uid` (default: this process's uid)."""
    try:
        return peer_uid(conn) == (os.getuid() if uid is None else uid)
    except OSError:
        return False


# ---- the command's side: reach a holder, start one, stop one ----

def connect(path: Path, user: str, timeout: float) -> paramiko.Transport | None:
    """An SSH transport through the holder at `path`, or None when there is no live holder
    (nothing there, a stale socket, a holder whose site connection is gone, or one run by
    another uid): the caller then connects to the site itself."""
    seen = _inode(path)
    if seen is None:
        return None
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(str(path))
    except OSError as e:
        s.close()
        # a holder that died without cleaning up (the socket refused is still the one there:
        # a holder starting meanwhile put its own in place, listening, and is kept)
        if e.errno == errno.ECONNREFUSED and _inode(path) == seen:
            with contextlib.suppress(OSError):
                path.unlink()
                _key_path(path).unlink()
        return None
    if not peer_allowed(s):
        s.close()
        return None
    t = paramiko.Transport(s)
    try:
        expected = _key_path(path).read_text().split()
        t.start_client(timeout=timeout)
        key = t.get_remote_server_key()
        if [key.get_name(), key.get_base64()] != expected[:2]:
            raise SiteError(f"the holder at {path} showed another key than {_key_path(path)}")
        t.auth_none(user)
        if not t.is_authenticated():
            raise SiteError("the holder did not accept this process")
    except (paramiko.SSHException, EOFError, OSError, SiteError):
        t.close()
        return None
    return t


def stop(path: Path, user: str, timeout: float = 10.0) -> bool:
    """Ask the holder at `path` to end; True when one was there to ask. Returns once that
    holder has taken its socket away (or after `timeout`), so a login right after it starts
    a new holder rather than reaching the one ending."""
    asked = _inode(path)
    t = connect(path, user, timeout)
    if t is None:
        return False
    try:
        t.global_request(STOP_REQUEST, wait=True)
    finally:
        t.close()
    deadline = time.monotonic() + timeout
    while asked is not None and _inode(path) == asked and time.monotonic() < deadline:
        time.sleep(0.02)  # the holder unlinks its socket as it ends; no event says so here
    return True


@contextlib.contextmanager
def starting(path: Path, site: str, wait_s: float = START_WAIT_S) -> Iterator[None]:
    """The right to start the holder at `path`: an flock on a file beside it, so two logins
    at once start one holder. The file names the process holding it and is removed when let
    go (a process that was waiting on a removed file opens the new one). A login that waits
    longer than `wait_s` for another is refused, naming that process."""
    lock = _lock_path(path)
    deadline = time.monotonic() + wait_s
    waiting = False
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    other = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
                    if time.monotonic() >= deadline:
                        raise SiteError(
                            f"{site}: another login (pid {other}) is starting the kept "
                            f"connection and has not finished after {wait_s:g} s; answer its "
                            "prompt or end it, then log in again") from None
                    if not waiting:
                        log.info("%s: another login (pid %s) is starting the kept connection; "
                                 "waiting for it", site, other)
                        waiting = True
                    time.sleep(0.05)  # flock has no timeout of its own
            if os.fstat(fd).st_ino != _inode(lock):  # removed while we waited: the new one
                continue
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            try:
                yield
            finally:
                with contextlib.suppress(OSError):
                    lock.unlink()
            return
        finally:
            os.close(fd)


def keep(cfg: TransportConfig, site: str, path: Path, user: str, idle_s: float | None,
         ask: Callable[[str, str, list[tuple[str, bool]]], list[str]] | None,
         timeout: float) -> int | None:
    """The holder at `path`, started unless one is alive (`start`; None: no idle end): the
    new holder's pid, or None when one was there already. One login at a time starts it
    (`starting`): a login that comes while another starts it waits, then uses that one."""
    with starting(path, site):
        live = connect(path, user, timeout)
        if live is not None:
            live.close()
            return None
        return start(cfg, site, path, idle_s, ask)


_spawned: dict[int, subprocess.Popen] = {}  # holders this process started (reaped on exit)


def start(cfg: TransportConfig, site: str, path: Path, idle_s: float | None,
          ask: Callable[[str, str, list[tuple[str, bool]]], list[str]] | None) -> int:
    """Start a holder for `site` at `path`, ending after `idle_s` seconds unused; its prompts
    are put to `ask` (over the holder's stdin and stdout, never the socket). Blocks until
    it is logged in; its pid. The login's errors are raised as the transport's own."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "diamond_jupyter.transports.ssh_holder_process"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True, text=True)
    _spawned[proc.pid] = proc
    assert proc.stdin is not None and proc.stdout is not None
    try:
        _send(proc.stdin, {"site": site, "socket": str(path), "idle_s": idle_s,
                           "transport": cfg.model_dump(mode="json")})
        for line in proc.stdout:
            msg = json.loads(line)
            if "ask" in msg:
                q = msg["ask"]
                try:
                    if ask is None:
                        raise SiteError("no one could be asked for the code")
                    answers = ask(q["title"], q["instructions"],
                                  [(p, bool(e)) for p, e in q["prompts"]])
                    reply: dict[str, Any] = {"answers": [str(a) for a in answers]}
                except Exception as e:  # the prompt was closed: the holder fails the login
                    reply = {"cancel": str(e)}
                with contextlib.suppress(BrokenPipeError):  # it gave up waiting: said below
                    _send(proc.stdin, reply)
            elif "ready" in msg:
                return proc.pid
            elif "error" in msg:
                raise _error(msg)
        raise SiteError(f"{site}: the login holder exited before logging in "
                        f"(status {proc.wait(10)})")
    except BaseException:
        _spawned.pop(proc.pid, None)
        try:
            proc.wait(5)  # it said why and is ending
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        raise
    finally:
        for f in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                f.close()


def wait_spawned(pid: int, timeout: float) -> int | None:
    """Reap a holder this process started; its exit status (None: not one of ours)."""
    proc = _spawned.pop(pid, None)
    return None if proc is None else proc.wait(timeout)


def _error(msg: dict[str, Any]) -> Exception:
    kind, text = msg.get("kind"), str(msg["error"])
    if kind == "auth":
        return AuthError(text, interactive=bool(msg.get("interactive")))
    if kind == "hostkey":
        return HostKeyError(text)
    if kind == "bad-input":
        return BadInput(text)
    return SiteError(text)


def _send(f: IO[str], msg: dict[str, Any]) -> None:
    f.write(json.dumps(msg) + "\n")
    f.flush()


# ---- the holder process ----

class _LocalLeg(paramiko.ServerInterface):
    """The SSH server one command talks to: each session channel it opens is opened on the
    holder's site connection, and its exec or subsystem request is made there."""

    def __init__(self, holder: _Holder):
        self.holder = holder
        self.waiting: dict[int, paramiko.Channel] = {}  # local chanid -> site channel

    def get_allowed_auths(self, username: str) -> str:
        return "none"

    def check_auth_none(self, username: str) -> int:
        return paramiko.AUTH_SUCCESSFUL  # the peer's uid was checked at accept

    def check_channel_request(self, kind: str, chanid: int) -> int:
        if kind != "session":
            return paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED
        try:
            self.waiting[chanid] = self.holder.site.open_session(timeout=10)
        except (paramiko.SSHException, EOFError, OSError):  # the site refused (MaxSessions)
            return paramiko.OPEN_FAILED_RESOURCE_SHORTAGE
        return paramiko.OPEN_SUCCEEDED

    def _request(self, channel: paramiko.Channel, start: Callable[[paramiko.Channel], Any]) \
            -> bool:
        up = self.waiting.pop(channel.get_id(), None)
        if up is None:
            return False
        try:
            start(up)
        except (paramiko.SSHException, EOFError, OSError):
            up.close()
            return False
        self.holder.splice(channel, up)
        return True

    def check_channel_exec_request(self, channel: paramiko.Channel, command: bytes) -> bool:
        return self._request(channel, lambda up: up.exec_command(command))

    def check_channel_subsystem_request(self, channel: paramiko.Channel, name: str) -> bool:
        return self._request(channel, lambda up: up.invoke_subsystem(name))

    def check_global_request(self, kind: str, msg: paramiko.Message) -> bool:
        if kind == STOP_REQUEST:
            self.holder.stopping.set()
            return True
        return False


class _Holder:
    def __init__(self, conn: Any, path: Path, idle_s: float):
        # conn: the SSH transport's connection (the site's transport and any jump hops)
        self.conn, self.site, self.path, self.idle_s = conn, conn.transport, path, idle_s
        self.key = paramiko.ECDSAKey.generate()
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.open_channels = 0
        self.last_used = time.monotonic()
        self.legs: list[paramiko.Transport] = []
        self.inode: int | None = None  # of the socket this holder put at `path`

    def listen(self) -> socket.socket:
        """Listen at the holder's path: bound at a name beside it and renamed into place once
        listening, so a command never finds this socket refusing (and removes it as stale)."""
        key_file = _key_path(self.path)
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(f"{self.key.get_name()} {self.key.get_base64()}\n")
        binding = Path(str(self.path) + _BINDING)
        with contextlib.suppress(FileNotFoundError):
            binding.unlink()  # left by a holder that died while starting
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket is 0600 from the start
        try:
            srv.bind(str(binding))
        finally:
            os.umask(old)
        srv.listen(16)
        srv.settimeout(1.0)
        os.replace(binding, self.path)  # a stale socket there is replaced
        self.inode = _inode(self.path)
        return srv

    def serve(self, srv: socket.socket) -> None:
        while not self.stopping.is_set() and self.conn.alive():
            with self.lock:
                idle = self.open_channels == 0 and \
                    time.monotonic() - self.last_used > self.idle_s
            if idle:
                break
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            if not peer_allowed(conn):
                conn.close()
                continue
            with self.lock:
                self.last_used = time.monotonic()
            leg = paramiko.Transport(conn)
            leg.add_server_key(self.key)
            self.legs.append(leg)
            server = _LocalLeg(self)
            try:
                leg.start_server(server=server)
            except (paramiko.SSHException, EOFError, OSError):
                leg.close()
                continue
            threading.Thread(target=self._accept, args=(leg, server), daemon=True).start()

    def _accept(self, leg: paramiko.Transport, server: _LocalLeg) -> None:
        keep: list[paramiko.Channel] = []  # a collected Channel closes itself
        while leg.is_active():
            ch = leg.accept(1)
            if ch is not None:
                keep.append(ch)
            for c in [c for c in keep if c.closed]:  # closed before asking for anything
                keep.remove(c)
                up = server.waiting.pop(c.get_id(), None)
                if up is not None:
                    up.close()
        for up in list(server.waiting.values()):  # the command went away
            up.close()

    def splice(self, ch: paramiko.Channel, up: paramiko.Channel) -> None:
        """Carry one channel's bytes across, both ways, then its exit status."""
        with self.lock:
            self.open_channels += 1

        def carry(read: Callable[[int], bytes], write: Callable[[bytes], Any]) -> None:
            with contextlib.suppress(Exception):
                while data := read(_PUMP):
                    write(data)

        def stdin() -> None:
            carry(ch.recv, up.sendall)
            with contextlib.suppress(Exception):
                up.shutdown_write()
            # the command's side closed its channel (it ended or went away): so does the site's
            while not ch.closed and not up.status_event.wait(1.0):
                pass
            if ch.closed:
                up.close()

        def outputs() -> None:
            pumps = [threading.Thread(target=carry, args=(up.recv, ch.sendall), daemon=True),
                     threading.Thread(target=carry, args=(up.recv_stderr, ch.sendall_stderr),
                                      daemon=True)]
            for p in pumps:
                p.start()
            for p in pumps:
                p.join()
            with contextlib.suppress(Exception):
                status = up.recv_exit_status()
                if status != -1:
                    ch.send_exit_status(status)
                ch.shutdown_write()
                ch.close()
            up.close()
            with self.lock:
                self.open_channels -= 1
                self.last_used = time.monotonic()

        threading.Thread(target=stdin, daemon=True).start()
        threading.Thread(target=outputs, daemon=True).start()

    def close(self, srv: socket.socket) -> None:
        """Take the socket away (only this holder's own: a holder started after this one
        ended keeps its), then stop listening and close everything."""
        if self.inode is not None and _inode(self.path) == self.inode:
            for p in (self.path, _key_path(self.path)):
                with contextlib.suppress(OSError):
                    p.unlink()
        srv.close()
        for leg in self.legs:
            leg.close()
        self.conn.close()
