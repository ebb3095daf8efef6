"""One one-time code per site for many commands (`diamond login SITE --persist DURATION`),
without the test bed: a real keyboard-interactive door (paramiko's server side, as in
test_login_once) and a real OpenSSH sshd (`own_sshd`) for SFTP. The login holder is the real
process; the tests count the door's prompts and connections, and look at what the holder
leaves on disk."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
import yaml
from sshd_helper import TEST_USER, MfaSshServer, ensure_user

from diamond_jupyter.cli.login import duration
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, SiteError
from diamond_jupyter.store import Store
from diamond_jupyter.transports import AuthError, ssh_holder

CODE = "424242"


@pytest.fixture
def runtime_dir(monkeypatch):
    """A short private XDG_RUNTIME_DIR (a Unix socket path is at most 107 bytes); any holder
    a test left is stopped."""
    d = Path(tempfile.mkdtemp(prefix="dh-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(d))
    yield d
    for sock in (d / "diamond-ssh").glob("*.sock"):  # a holder a CLI command started
        ssh_holder.stop(sock, "any")
    for pid in list(ssh_holder._spawned):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        ssh_holder.wait_spawned(pid, 10)
    subprocess.run(["rm", "-rf", str(d)], check=False)


@pytest.fixture
def door(own_sshd, tmp_path):
    srv = MfaSshServer(tmp_path, own_sshd.client_key, otp=CODE)
    (tmp_path / "known_hosts").write_text(srv.known_hosts_line())
    yield srv
    srv.stop()


def _sites(tmp_path: Path, *, port: int, user: str, key: Path, known_hosts: Path) -> Path:
    (tmp_path / "ssh_config").write_text("")
    site = {"name": "alpha", "scheduler": "slurm", "workdir": str(tmp_path / "wd"),
            "transport": {"kind": "ssh", "host": "127.0.0.1", "port": port, "user": user,
                          "key_file": str(key), "known_hosts": str(known_hosts),
                          "use_agent": False, "ssh_config": str(tmp_path / "ssh_config"),
                          "connect_timeout_s": 10, "reconnect_attempts": 1}}
    path = tmp_path / "sites.yaml"
    path.write_text(yaml.safe_dump({"sites": [site]}))
    return path


def _door_sites(tmp_path, own_sshd, door) -> Path:
    return _sites(tmp_path, port=door.port, user=door.user, key=own_sshd.client_key,
                  known_hosts=tmp_path / "known_hosts")


def _fed(sites: Path, tmp_path: Path, asked: list, answer: str = CODE) -> Federation:
    fed = Federation(sites, store=Store(tmp_path / "store.sqlite"), poll_interval_s=3600,
                     min_poll_s=3600)

    def ask(title, instructions, prompts):
        asked.append(prompts)
        return [answer]
    fed.set_interactive_handler(ask)
    return fed


async def _echo(fed: Federation, text: str) -> str:
    res = await fed.site("alpha").transport.run(["echo", text], check=True)
    return res.stdout.strip()


async def _persisted_login(tmp_path, sites) -> dict:
    asked: list = []
    fed = _fed(sites, tmp_path, asked)
    try:
        res = await fed.login("alpha", persist_s=300)
    finally:
        await fed.close()
    assert len(asked) == 1 and res["new_connection"] is True, res
    return res


async def test_two_commands_after_one_persisted_login_ask_once(runtime_dir, tmp_path, own_sshd,
                                                               door):
    sites = _door_sites(tmp_path, own_sshd, door)
    res = await _persisted_login(tmp_path, sites)
    sock = Path(res["holder"]["socket"])
    assert door.connections == 1
    assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
    assert stat.S_ISSOCK(sock.stat().st_mode) and stat.S_IMODE(sock.stat().st_mode) == 0o600
    # two commands of their own (new engines): through the holder, nobody asked
    for n in range(2):
        asked: list = []
        fed = _fed(sites, tmp_path, asked)
        try:
            assert await _echo(fed, f"command {n}") == f"command {n}"
            assert fed.site("alpha").transport.describe()["holder_connections"] == 1
        finally:
            await fed.close()
        assert asked == []
    # and the real CLI, with no terminal and no DIAMOND_OTP to answer a prompt with
    cli = _cli(tmp_path, "login", "alpha", "--config", str(sites), "--json")
    assert cli.returncode == 0, cli.stderr
    assert door.connections == 1  # one TCP login to the door, so one code, for everything
    # a second persisted login keeps the holder there
    again = await _persisted_login_no_prompt(tmp_path, sites)
    assert again["new_connection"] is False and again["holder"]["pid"] is None
    # no code on disk beside the socket
    for f in runtime_dir.rglob("*"):
        if f.is_file():
            assert CODE not in f.read_text(errors="replace")


async def _persisted_login_no_prompt(tmp_path, sites) -> dict:
    asked: list = []
    fed = _fed(sites, tmp_path, asked)
    try:
        return await fed.login("alpha", persist_s=300)
    finally:
        await fed.close()
        assert asked == []


async def test_the_holder_dying_falls_back_to_a_fresh_login(runtime_dir, tmp_path, own_sshd,
                                                            door):
    sites = _door_sites(tmp_path, own_sshd, door)
    res = await _persisted_login(tmp_path, sites)
    pid, sock = res["holder"]["pid"], Path(res["holder"]["socket"])
    asked: list = []
    fed = _fed(sites, tmp_path, asked)
    try:
        assert await _echo(fed, "held") == "held"
        assert asked == [] and door.connections == 1
        os.kill(pid, signal.SIGKILL)
        assert ssh_holder.wait_spawned(pid, 10) == -signal.SIGKILL
        assert sock.exists()  # killed: nothing cleaned up
        # the same engine's next command: its link through the holder is gone, and nobody
        # answers at the socket (removed as stale), so it logs in itself, asking once
        assert await _echo(fed, "fresh") == "fresh"
        assert len(asked) == 1 and door.connections == 2 and not sock.exists()
    finally:
        await fed.close()
    # a new command finds no holder and logs in itself, as before `--persist`
    asked = []
    fed = _fed(sites, tmp_path, asked)
    try:
        assert await _echo(fed, "new") == "new"
    finally:
        await fed.close()
    assert len(asked) == 1 and door.connections == 3


async def test_a_refused_code_leaves_no_holder(runtime_dir, tmp_path, own_sshd, door):
    sites = _door_sites(tmp_path, own_sshd, door)
    asked: list = []
    fed = _fed(sites, tmp_path, asked, answer="000000")
    try:
        with pytest.raises(AuthError, match="one-time code was not accepted") as e:
            await fed.login("alpha", persist_s=300)
        assert e.value.interactive and fed.needs_login("alpha")
        assert "000000" not in str(e.value)
    finally:
        await fed.close()
    assert len(asked) == 1 and door.connections == 1
    assert list((runtime_dir / "diamond-ssh").iterdir()) == []
    assert ssh_holder._spawned == {}


async def test_exec_and_sftp_run_through_the_holder_until_logout(runtime_dir, tmp_path,
                                                                 own_sshd):
    base = own_sshd.base
    sites = _sites(tmp_path, port=own_sshd.port, user=own_sshd.user, key=own_sshd.client_key,
                   known_hosts=base / "known_hosts")

    def logins() -> int:
        return own_sshd.log.read_text().count(f"Accepted publickey for {own_sshd.user}")
    fed = _fed(sites, tmp_path, [])
    try:
        res = await fed.login("alpha", persist_s=300)
    finally:
        await fed.close()
    pid, before = res["holder"]["pid"], logins()
    assert before == 1
    fed = _fed(sites, tmp_path, [])
    t = fed.site("alpha").transport
    remote = f"/tmp/diamond-holder-{os.getpid()}.txt"
    try:
        await t.put_bytes(b"through the holder\n", remote, 0o600)
        assert await t.get_bytes(remote) == b"through the holder\n"
        res_cat = await t.run(["sh", "-c", 'cat "$1"; echo err >&2; exit 3', "sh", remote])
        assert (res_cat.exit_status, res_cat.stdout, res_cat.stderr) == \
            (3, "through the holder\n", "err\n")
        piped = await t.run(["cat"], stdin=b"stdin crosses too")
        assert piped.stdout == "stdin crosses too"
        await t.run(["rm", "-f", remote], check=True)
        assert t.describe()["connections_opened"] == 0
        assert t.describe()["holder_connections"] == 1
    finally:
        await fed.close()
    assert logins() == before
    for stopped in (True, False):  # the CLI's logout; a second finds nothing to stop
        out = _cli(tmp_path, "logout", "alpha", "--config", str(sites), "--json")
        assert out.returncode == 0 and json.loads(out.stdout) == \
            {"site": "alpha", "stopped": stopped}, out.stderr
        if stopped:
            assert ssh_holder.wait_spawned(pid, 10) == 0
    assert list((runtime_dir / "diamond-ssh").iterdir()) == []


async def test_the_holder_ends_after_its_idle_time(runtime_dir, tmp_path, own_sshd):
    sites = _sites(tmp_path, port=own_sshd.port, user=own_sshd.user, key=own_sshd.client_key,
                   known_hosts=own_sshd.base / "known_hosts")
    fed = _fed(sites, tmp_path, [])
    try:
        res = await fed.login("alpha", persist_s=2)
        assert await _echo(fed, "used") == "used"  # through the holder: the idle time restarts
        assert fed.site("alpha").transport.describe()["holder_connections"] == 1
    finally:
        await fed.close()
    assert ssh_holder.wait_spawned(res["holder"]["pid"], 60) == 0
    assert list((runtime_dir / "diamond-ssh").iterdir()) == []


def _cli(tmp_path: Path, *argv: str, env: dict[str, str] | None = None) \
        -> subprocess.CompletedProcess:
    """The real `diamond` command, with no terminal, and no DIAMOND_OTP unless `env` has it."""
    env = {**{k: v for k, v in os.environ.items() if k != "DIAMOND_OTP"}, **(env or {}),
           "DIAMOND_DATA_DIR": str(tmp_path / "data")}
    return subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *argv], env=env,
                          capture_output=True, text=True, timeout=120, start_new_session=True)


SYSTEM_PYTHON = "/usr/bin/python3"  # one the test user may run (the venv's sits in /root)


@pytest.mark.skipif(not os.access(SYSTEM_PYTHON, os.X_OK) or os.getuid() != 0,
                    reason="needs root and a system python3 to act as another user")
def test_a_peer_of_another_uid_is_refused(tmp_path):
    other = ensure_user(TEST_USER)
    d = Path(tempfile.mkdtemp(prefix="dp-"))
    d.chmod(0o755)
    path = d / "s.sock"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        srv.bind(str(path))
        path.chmod(0o666)  # here anyone may connect: the uid check alone must refuse
        srv.listen(2)
        client = subprocess.Popen(
            [SYSTEM_PYTHON, "-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); "
             f"s.connect({str(path)!r}); s.recv(1)"], user=other.pw_uid, group=other.pw_gid)
        conn, _ = srv.accept()
        assert ssh_holder.peer_uid(conn) == other.pw_uid != os.getuid()
        assert not ssh_holder.peer_allowed(conn)
        conn.close()
        client.wait(30)
        mine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        mine.connect(str(path))
        conn, _ = srv.accept()
        assert ssh_holder.peer_allowed(conn)
        conn.close()
        mine.close()
    finally:
        srv.close()
        subprocess.run(["rm", "-rf", str(d)], check=False)


def test_persist_durations():
    assert [duration(t) for t in ("600", "10m", "1h30m", "2d")] == [600, 600, 5400, 172800]
    for bad, why in [("10x", "such as 600, 10m"), ("0", "above 0"), ("8d", "at most a week"),
                     ("-5m", "such as 600"), ("", "such as 600")]:
        with pytest.raises(argparse.ArgumentTypeError, match=why):
            duration(bad)


async def test_the_cli_keeps_the_login_and_its_code_stays_out_of_the_holder(
        runtime_dir, tmp_path, own_sshd, door):
    sites = _door_sites(tmp_path, own_sshd, door)
    kept = _cli(tmp_path, "login", "alpha", "--persist", "5m", "--config", str(sites),
                env={"DIAMOND_OTP": CODE})
    assert kept.returncode == 0, kept.stderr
    assert kept.stdout.startswith("alpha: logged in; the connection is kept for later "
                                  "commands until unused for 300 s (`diamond logout alpha`")
    assert door.connections == 1
    holder = [p for p in Path("/proc").iterdir() if p.name.isdigit()
              and b"diamond_jupyter.transports.ssh_holder" in _read(p / "cmdline")
              and str(runtime_dir).encode() in _read(p / "environ")]
    assert len(holder) == 1 and CODE.encode() not in _read(holder[0] / "environ")
    again = _cli(tmp_path, "login", "alpha", "--config", str(sites), "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["site"] == "alpha", again.stderr
    assert door.connections == 1
    stop = _cli(tmp_path, "login", "alpha", "--stop", "--config", str(sites))
    assert stop.returncode == 0 and stop.stdout == \
        "alpha: logged out (the kept connection is closed)\n", stop.stderr
    # without the holder the door asks again, and nobody can answer here
    alone = _cli(tmp_path, "login", "alpha", "--config", str(sites))
    assert alone.returncode == 1 and "no one-time code was given" in alone.stderr
    assert door.connections == 2
    for res in (kept, again, stop, alone):
        assert CODE not in res.stdout + res.stderr
    bad = _cli(tmp_path, "login", "alpha", "--persist", "5 minutes", "--config", str(sites))
    assert bad.returncode == 2 and "expected a time such as 600, 10m or 1h30m" in bad.stderr


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


async def test_a_kept_login_is_refused_where_there_is_no_ssh(runtime_dir, tmp_path):
    sites = tmp_path / "local.yaml"
    sites.write_text(yaml.safe_dump({"sites": [
        {"name": "here", "scheduler": "slurm", "workdir": str(tmp_path / "wd"),
         "transport": {"kind": "local"}}]}))
    fed = _fed(sites, tmp_path, [])
    try:
        with pytest.raises(BadInput, match="a login can be kept only on an ssh transport, "
                                           "and this site's is local"):
            await fed.login("here", persist_s=60)
        assert await fed.logout("here") == {"site": "here", "stopped": False}
        with pytest.raises(BadInput, match="here"):  # an unknown site names the known ones
            await fed.logout("hre")
    finally:
        await fed.close()


async def test_a_holder_whose_connection_drops_ends_and_commands_connect_themselves(
        runtime_dir, tmp_path, own_sshd):
    sites = _sites(tmp_path, port=own_sshd.port, user=own_sshd.user, key=own_sshd.client_key,
                   known_hosts=own_sshd.base / "known_hosts")
    fed = _fed(sites, tmp_path, [])
    try:
        res = await fed.login("alpha", persist_s=300)
        # a command through it: sshd has forked the session's process, which the kill must meet
        assert await _echo(fed, "held") == "held"
    finally:
        await fed.close()
    assert own_sshd.kill_connections() >= 1  # the site's end of the holder's connection
    assert ssh_holder.wait_spawned(res["holder"]["pid"], 60) == 0
    assert list((runtime_dir / "diamond-ssh").iterdir()) == []
    fed = _fed(sites, tmp_path, [])
    try:
        assert await _echo(fed, "alone") == "alone"
        t = fed.site("alpha").transport.describe()
        assert (t["connections_opened"], t["holder_connections"]) == (1, 0)
    finally:
        await fed.close()


class _Said(logging.Handler):
    """Sets `event` when a record of `logger` says `words` (from any thread)."""

    def __init__(self, words: str):
        super().__init__()
        self.words, self.event = words, threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.words in record.getMessage():
            self.event.set()


async def test_two_kept_logins_at_once_start_one_holder(runtime_dir, tmp_path, own_sshd, door):
    sites = _door_sites(tmp_path, own_sshd, door)
    waiting = _Said("is starting the kept connection; waiting for it")
    logger = logging.getLogger(ssh_holder.__name__)
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(waiting)
    second_asked: list = []
    second = _fed(sites, tmp_path, second_asked)
    first = Federation(sites, store=Store(tmp_path / "store.sqlite"), poll_interval_s=3600,
                       min_poll_s=3600)
    later: dict[str, asyncio.Task] = {}

    async def ask_while_the_second_comes(title, instructions, prompts):
        # the first holds the start while its code is asked: the second login comes now
        later["second"] = asyncio.create_task(second.login("alpha", persist_s=300))
        assert await asyncio.to_thread(waiting.event.wait, 30)
        return [CODE]
    first.set_interactive_handler(ask_while_the_second_comes)
    try:
        won = await first.login("alpha", persist_s=300)
        lost = await later["second"]
    finally:
        logger.removeHandler(waiting)
        logger.setLevel(level)
        await first.close()
        await second.close()
    assert won["new_connection"] is True and won["holder"]["pid"] is not None
    assert lost["new_connection"] is False and lost["holder"]["pid"] is None
    assert lost["holder"]["socket"] == won["holder"]["socket"]
    assert second_asked == [] and door.connections == 1
    assert ssh_holder._spawned.keys() == {won["holder"]["pid"]}
    # the lock went with the start: only the holder's socket and key are left
    assert sorted(p.suffix for p in (runtime_dir / "diamond-ssh").iterdir()) == \
        [".pub", ".sock"]


def test_a_login_waiting_too_long_for_another_says_which(runtime_dir):
    path = ssh_holder.socket_path("alpha", "u", "h", 22, create=True)
    said = (rf"alpha: another login \(pid {os.getpid()}\) is starting the kept connection "
            r"and has not finished after 0.2 s; answer its prompt or end it")
    # another login is starting the holder: this one waits, then says which
    with ssh_holder.starting(path, "alpha"), pytest.raises(SiteError, match=said), \
            ssh_holder.starting(path, "alpha", wait_s=0.2):
        pass
    with ssh_holder.starting(path, "alpha", wait_s=0.2):  # let go: the next one starts
        pass
    assert list(path.parent.iterdir()) == []


def test_two_cli_kept_logins_started_together_share_one_holder(runtime_dir, tmp_path,
                                                               own_sshd, door):
    sites = _door_sites(tmp_path, own_sshd, door)
    env = {**{k: v for k, v in os.environ.items() if k != "DIAMOND_OTP"},
           "DIAMOND_OTP": CODE, "DIAMOND_DATA_DIR": str(tmp_path / "data")}
    procs = [subprocess.Popen([sys.executable, "-m", "diamond_jupyter.cli", "login", "alpha",
                               "--persist", "5m", "--config", str(sites), "--json"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, start_new_session=True) for _ in range(2)]
    replies = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        replies.append(json.loads(out))
    assert sorted(r["new_connection"] for r in replies) == [False, True]
    assert len({r["holder"]["socket"] for r in replies}) == 1
    assert door.connections == 1
