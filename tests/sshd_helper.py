"""A private, real OpenSSH sshd on 127.0.0.1 for transport tests (runs as root).

Own host key, config, pid file and authorized_keys in a temp dir; a plain test user
(`diamondtest`) because root's shell here is slow. Stopped through its pid, together with
the per-connection children it forked.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import paramiko

SSHD = "/usr/sbin/sshd"
TEST_USER = "diamondtest"


def ensure_user(name: str = TEST_USER) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        r = subprocess.run(["useradd", "-m", "-s", "/bin/sh", name], capture_output=True, text=True)
        if r.returncode not in (0, 9):  # 9: created meanwhile by someone else
            raise RuntimeError(f"useradd {name}: {r.stderr.strip()}") from None
    subprocess.run(["usermod", "-p", "*", name], check=True, capture_output=True)  # unlocked
    return pwd.getpwnam(name)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def keygen(path: Path, kind: str = "ed25519") -> Path:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", kind, "-N", "", "-C", "diamond-test", "-f", str(path)],
        check=True,
    )
    return path


def _children(pid: int) -> list[int]:
    """All descendants of `pid` (from /proc)."""
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def make_base(prefix: str = "diamond-sshd-") -> Path:
    """A temp dir the test user can read (sshd reads authorized_keys as that user)."""
    d = Path(tempfile.mkdtemp(prefix=prefix))
    d.chmod(0o755)
    return d


def remove_base(d: Path) -> None:
    shutil.rmtree(d, ignore_errors=True)


class Sshd:
    def __init__(self, base: Path, user: str = TEST_USER, client_key: Path | None = None,
                 extra: str = "", host_key_kind: str = "ed25519"):
        self.base = base
        self.base.mkdir(parents=True, exist_ok=True)
        self.user = user
        self.port = 0
        self.host_key = keygen(base / f"host_{host_key_kind}", host_key_kind)
        self.client_key = client_key or keygen(base / "client_ed25519")
        (base / f"authorized_keys.{user}").write_text(
            Path(f"{self.client_key}.pub").read_text()
        )
        self.extra = extra
        self.proc: subprocess.Popen | None = None

    @property
    def pid_file(self) -> Path:
        return self.base / "sshd.pid"

    @property
    def log(self) -> Path:
        return self.base / "sshd.log"

    def known_hosts_line(self) -> str:
        pub = Path(f"{self.host_key}.pub").read_text().split()
        return f"[127.0.0.1]:{self.port} {pub[0]} {pub[1]}\n"

    def write_config(self) -> Path:
        conf = self.base / "sshd_config"
        conf.write_text(
            f"""ListenAddress 127.0.0.1:{self.port}
HostKey {self.host_key}
PidFile {self.pid_file}
AuthorizedKeysFile {self.base}/authorized_keys.%u
StrictModes no
UsePAM no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
AllowUsers {self.user}
MaxSessions 10
AllowTcpForwarding yes
X11Forwarding no
PrintMotd no
LogLevel DEBUG1
Subsystem sftp internal-sftp
{self.extra}
"""
        )
        return conf

    def start(self, port: int | None = None) -> Sshd:
        ensure_user(self.user)
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        for _ in range(5):
            self.port = port or free_port()
            conf = self.write_config()
            self.proc = subprocess.Popen(
                [SSHD, "-D", "-f", str(conf), "-E", str(self.log)],
                stdin=subprocess.DEVNULL,
            )
            if self._wait_listening():
                return self
            self.stop()
            if port:
                break
        raise RuntimeError(f"sshd did not start; log: {self.log.read_text()[-2000:]}")

    def _wait_listening(self, deadline_s: float = 60.0) -> bool:
        """Until sshd answers (or exits); the bound only stops a hung start."""
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            if self.proc is not None and self.proc.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.settimeout(2)
                    if s.recv(64).startswith(b"SSH-"):
                        return True
            except OSError:
                time.sleep(0.05)
        return False

    @property
    def pid(self) -> int:
        if self.proc is not None:
            return self.proc.pid
        return int(self.pid_file.read_text())

    def connection_children(self) -> list[int]:
        """The per-connection sshd processes forked by this daemon."""
        return _children(self.pid)

    def kill_connections(self) -> int:
        kids = [c for c in self.connection_children()]
        for c in kids:
            try:
                os.kill(c, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return len(kids)

    def stop(self) -> None:
        if self.proc is None:
            return
        kids = self.connection_children()
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for c in kids:
            try:
                os.kill(c, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc = None

    def restart(self) -> None:
        """Stop the daemon and every connection it serves, start again on the same port."""
        port = self.port
        self.stop()
        self.start(port)


class _MfaServer(paramiko.ServerInterface):
    """publickey, then a one-time code by keyboard-interactive; runs `sh -c COMMAND`."""

    def __init__(self, owner: MfaSshServer):
        self.owner, self.key_ok = owner, False

    def get_allowed_auths(self, username: str) -> str:
        return "keyboard-interactive" if self.key_ok else "publickey,keyboard-interactive"

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:
        if username == self.owner.user and key == self.owner.client_pub:
            self.key_ok = True
            return paramiko.AUTH_PARTIALLY_SUCCESSFUL
        return paramiko.AUTH_FAILED

    def check_auth_interactive(self, username: str, submethods: str):
        if not self.key_ok:
            return paramiko.AUTH_FAILED
        q = paramiko.server.InteractiveQuery("Two-factor", "Enter the code from your token")
        q.add_prompt("Code: ", False)
        return q

    def check_auth_interactive_response(self, responses) -> int:
        ok = self.key_ok and list(responses) == [self.owner.otp]
        return paramiko.AUTH_SUCCESSFUL if ok else paramiko.AUTH_FAILED

    def check_channel_request(self, kind: str, chanid: int) -> int:
        if kind == "session":
            return paramiko.OPEN_SUCCEEDED
        return paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

    def check_channel_exec_request(self, channel, command: bytes) -> bool:
        def work() -> None:
            stdin = b""  # the client sends EOF only after our exec reply: no race
            while chunk := channel.recv(65536):
                stdin += chunk
            r = subprocess.run(["/bin/sh", "-c", command.decode()], capture_output=True,
                               input=stdin, timeout=30)
            channel.sendall(r.stdout)
            channel.sendall_stderr(r.stderr)
            channel.send_exit_status(r.returncode)
            channel.shutdown_write()
            channel.close()

        threading.Thread(target=work, daemon=True).start()
        return True


class MfaSshServer:
    """A real SSH server (paramiko, server side) over a real socket, in threads: for
    keyboard-interactive one-time codes, which sshd offers only through PAM."""

    def __init__(self, base: Path, client_key: Path, otp: str = "424242", user: str = "otpuser"):
        self.user, self.otp = user, otp
        self.host_key_path = keygen(base / "mfa_host_ed25519")
        self.host_key = paramiko.Ed25519Key.from_private_key_file(str(self.host_key_path))
        self.client_pub = paramiko.PKey.from_path(str(client_key))  # == compares public parts
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._transports: list[paramiko.Transport] = []
        self._channels: list[paramiko.Channel] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def known_hosts_line(self) -> str:
        k = self.host_key
        return f"[127.0.0.1]:{self.port} {k.get_name()} {k.get_base64()}\n"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            t = paramiko.Transport(conn)
            t.add_server_key(self.host_key)
            self._transports.append(t)
            try:
                t.start_server(server=_MfaServer(self))
            except (paramiko.SSHException, EOFError, OSError):
                t.close()  # the client left mid-handshake (a slow server): serve the next one
                continue
            threading.Thread(target=self._accept_channels, args=(t,), daemon=True).start()

    def _accept_channels(self, t: paramiko.Transport) -> None:
        while t.is_active():
            ch = t.accept(1)
            if ch is not None:  # keep a reference: a collected Channel closes itself
                self._channels.append(ch)

    def stop(self) -> None:
        self.sock.close()
        for t in self._transports:
            t.close()
        self._thread.join(5)


def transport_to(sshd: Sshd, site: str) -> Any:
    """The SSH transport of site `site` to `sshd` as conftest's `_private_sshd` sets it up
    (its host key in base/known_hosts, an empty base/empty_ssh_config), without an agent."""
    from diamond_jupyter.config import TransportConfig
    from diamond_jupyter.transports import make_transport

    return make_transport(TransportConfig(
        host="127.0.0.1", port=sshd.port, user=sshd.user, key_file=str(sshd.client_key),
        known_hosts=str(sshd.base / "known_hosts"), use_agent=False,
        ssh_config=str(sshd.base / "empty_ssh_config"), connect_timeout_s=5), site)


@contextlib.asynccontextmanager
async def scratch_over_ssh(sshd: Sshd, prefix: str) -> AsyncIterator[tuple[Any, str]]:
    """A transport to `sshd` (`transport_to`, site alpha) and a new directory PREFIX-HEX in
    its login's home; the directory removed and the transport closed after."""
    t = transport_to(sshd, "alpha")
    d = f"{prefix}-{secrets.token_hex(4)}"
    await t.run(["mkdir", "-p", d], check=True)
    try:
        yield t, d
    finally:
        await t.run(["rm", "-rf", d])
        await t.close()


async def tree_in_home(t: Any, prefix: str, script: str) -> str:
    """A new directory PREFIX-HEX in the home of `t`'s login, filled by the shell `script`
    (given the directory as $1); its absolute path."""
    home = (await t.run(["sh", "-c", 'printf %s "$HOME"'], check=True)).stdout
    root = f"{home}/{prefix}-{secrets.token_hex(4)}"
    await t.run(["mkdir", "--", root], check=True)
    r = await t.run(["sh", "-c", script, "tree", root])
    assert r.ok, r.stderr
    return root


async def remove_tree(t: Any, root: str) -> None:
    """`root` removed, its closed directories too."""
    await t.run(["sh", "-c", 'chmod -R u+rwx "$1"; rm -rf "$1"', "rm", root])
