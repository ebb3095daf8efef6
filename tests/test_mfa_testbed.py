"""Guarded doors on the real test bed: alpha's sshd that asks for the user's key AND a TOTP
code (PAM, libpam-google-authenticator) and the one that takes only keys signed by the
test bed's user CA. Codes are computed here as the user's authenticator app would; the
server's own log (sshd LogLevel VERBOSE) says how many codes it was really sent."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from diamond_jupyter import testbed
from diamond_jupyter.config import TransportConfig, load_config
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput
from diamond_jupyter.store import Store
from diamond_jupyter.testbed import mfa
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.transports.ssh import SSHTransport
from diamond_jupyter.transports.ssh_auth import AuthError

MFA, CERT = mfa.MFA_SITE, mfa.CERT_SITE


@pytest.fixture
def doors(tb):
    info = testbed.up()
    assert info["mfa_config"], info["left_out"]
    return Path(info["mfa_config"]), info


def _transport_cfg(doors, site: str, **change) -> TransportConfig:
    t = load_config(doors[0]).site(site).transport
    return t.model_copy(update=change)


class SshdLog:
    """The doors' sshd log from now on."""

    def __init__(self, base: Path) -> None:
        self.path = mfa.log_file(base, cluster(mfa.CLUSTER))
        self.start = self.path.stat().st_size

    def lines(self, pattern: str) -> list[str]:
        with open(self.path, "rb") as f:
            f.seek(self.start)
            text = f.read().decode(errors="replace")
        return [ln for ln in text.splitlines() if re.search(pattern, ln)]

    def seen(self, pattern: str, timeout: float = 30.0) -> list[str]:
        """`lines`, once at least one is there: sshd writes an attempt's line as it handles
        it, which may be just after the client has its answer."""
        deadline = time.monotonic() + timeout
        while not (found := self.lines(pattern)) and time.monotonic() < deadline:
            time.sleep(0.05)
        return found


def _code(tb) -> str:
    return mfa.totp_code(tb.base)


def _wrong_code(tb) -> str:
    """A code no window the server accepts (now, 30 s either side) would take."""
    now = time.time()
    valid = {mfa.totp_code(tb.base, now + d) for d in (-60, -30, 0, 30, 60)}
    return next(c for c in (f"{i:06d}" for i in range(1, 10)) if c not in valid)


def test_up_writes_the_guarded_doors_to_their_own_sites_file(tb, doors):
    path, info = doors
    listed = {s["name"]: s for s in info["mfa_sites"]}
    assert listed == {
        MFA: {"name": MFA, "scheduler": "slurm", "transport": "ssh", "cluster": "alpha",
              "auto": False},
        CERT: {"name": CERT, "scheduler": "slurm", "transport": "ssh", "cluster": "alpha",
               "auto": False}}
    assert not {MFA, CERT} & set(tb.sites)  # faces given the main file never meet a prompt
    entries = {e["name"]: e for e in yaml.safe_load(path.read_text())["sites"]}
    assert entries[CERT]["transport"]["cert_file"] == str(mfa.user_cert(tb.base))
    assert "cert_file" not in entries[MFA]["transport"]
    assert mfa.secret_file(tb.base).stat().st_mode & 0o077 == 0  # the "phone" is root's only
    assert not any(str(v).strip() == mfa.secret_file(tb.base).read_text().strip()
                   for v in re.split(r"\s+", path.read_text()))


async def test_code_asked_once_per_connection_then_the_connection_is_reused(tb, doors):
    log = SshdLog(tb.base)
    asked = []

    async def ask(title, instructions, prompts):  # an async face, as the server's
        asked.append(prompts)
        return [_code(tb)]

    t = SSHTransport(_transport_cfg(doors, MFA), site=MFA, interactive_handler=ask)
    try:
        for _ in range(3):
            assert (await t.run(["hostname"], check=True)).stdout.strip() == "alpha"
        await t.put_bytes(b"x", ".diamond-mfa-probe")  # SFTP rides the same connection
        assert await t.get_bytes(".diamond-mfa-probe") == b"x"
        assert asked == [[("Verification code: ", False)]]
        assert t.connections_opened == 1
        assert len(log.seen(r"Accepted keyboard-interactive/pam for diamondtb")) == 1
        assert len(log.seen(r"Partial publickey for diamondtb")) == 1  # the key, then the code
    finally:
        await t.run(["rm", "-f", ".diamond-mfa-probe"])
        await t.close()


async def test_a_wrong_code_is_sent_once_then_nothing_until_the_user_logs_in(tb, doors):
    log = SshdLog(tb.base)
    answers = [_wrong_code(tb)]
    asked = []

    def ask(title, instructions, prompts):
        asked.append(prompts)
        return [answers[-1]]

    t = SSHTransport(_transport_cfg(doors, MFA), site=MFA, interactive_handler=ask)
    try:
        with pytest.raises(AuthError, match="one-time code was not accepted") as e:
            await t.run(["true"])
        assert answers[0] not in str(e.value) and str(e.value).count("\n") == 0
        assert t.needs_login
        # later calls (a monitor's poll, another command) do not try again on their own
        for _ in range(3):
            with pytest.raises(AuthError, match="not accepted"):
                await t.run(["true"])
        assert len(asked) == 1 and t.connections_opened == 0
        assert len(log.seen(r"Failed keyboard-interactive/pam for diamondtb")) == 1
        # the user logs in again, with the right code: one more prompt, then it works
        answers.append(_code(tb))
        assert await t.login() is True
        assert (await t.run(["hostname"], check=True)).stdout.strip() == "alpha"
        assert len(asked) == 2 and not t.needs_login
        assert len(log.seen(r"Failed keyboard-interactive/pam")) == 1
        assert len(log.seen(r"Accepted keyboard-interactive/pam for diamondtb")) == 1
    finally:
        await t.close()


async def test_no_way_to_ask_means_log_in_first_and_no_code_is_tried(tb, doors):
    log = SshdLog(tb.base)
    t = SSHTransport(_transport_cfg(doors, MFA), site=MFA)
    try:
        with pytest.raises(AuthError, match=f"asks for a one-time code.*log in to {MFA}"):
            await t.run(["true"])
        assert t.needs_login and t.describe()["needs_login"] is True
        assert log.lines(r"keyboard-interactive/pam") == []
    finally:
        await t.close()


async def test_federation_login_then_jobs_on_the_mfa_door(tb, doors, tmp_path):
    store = Store(tmp_path / "store.sqlite")
    fed = Federation(doors[0], store=store, poll_interval_s=30, min_poll_s=0.5)
    await fed.start()
    try:
        snap = await fed.snapshot(MFA, max_age_s=0)  # no way to ask: unreachable, with why
        assert not snap.reachable and "one-time code" in (snap.error or "")
        assert fed.needs_login(MFA)
        code = _code(tb)
        got = await fed.login(MFA, lambda title, instr, prompts: [code])
        assert got == {"site": MFA, "new_connection": True} and not fed.needs_login(MFA)
        assert (await fed.snapshot(MFA, max_age_s=0)).reachable
        job = await fed.submit(Federation.parse("#!/bin/bash\n#SBATCH --time=1\necho mfa-ok\n"),
                               MFA)
        done = await fed.wait(job.id, timeout=600)
        assert done.state.value == "COMPLETED", done
        assert await fed.login(MFA) == {"site": MFA, "new_connection": False}
    finally:
        await fed.close()
    _no_secret_in(tmp_path, code)


def _no_secret_in(root: Path, code: str) -> None:
    """Neither the code nor the TOTP secret is in any file under `root` (store, events)."""
    secret = mfa.secret_file(Path(testbed.base_dir())).read_text().strip()
    for p in root.rglob("*"):
        if p.is_file():
            data = p.read_bytes()
            assert code.encode() not in data and secret.encode() not in data, p
    for db in root.rglob("*.sqlite"):
        with sqlite3.connect(db) as con:
            for (table,) in con.execute("select name from sqlite_master where type='table'"):
                for row in con.execute(f"select * from {table}"):  # noqa: S608
                    assert code not in repr(row), (table, row)


async def test_certificate_login_and_the_plain_key_is_refused(tb, doors):
    log = SshdLog(tb.base)
    t = SSHTransport(_transport_cfg(doors, CERT), site=CERT)
    plain = SSHTransport(_transport_cfg(doors, CERT, cert_file=None), site=CERT)
    try:
        assert (await t.run(["id", "-un"], check=True)).stdout.strip() == "diamondtb"
        assert len(log.seen(r'Accepted certificate ID "diamondtb@diamond-testbed"')) == 1
        with pytest.raises(AuthError, match="authentication failed"):
            await plain.run(["true"])
    finally:
        await t.close()
        await plain.close()


async def test_expired_and_wrong_ca_certificates_are_clear_errors(tb, doors, tmp_path):
    key = tb.base / "ssh" / "id_ed25519"
    expired = mfa.sign(tb.base, Path(f"{key}.pub"), tmp_path / "expired-cert.pub",
                       validity="20200101:20200102", key_id="old-one")
    other_ca = tmp_path / "other_ca"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other_ca)],
                   check=True)
    stranger = mfa.sign(tb.base, Path(f"{key}.pub"), tmp_path / "stranger-cert.pub",
                        validity="-5m:+1h", ca=other_ca, key_id="stranger")
    another = tmp_path / "another"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(another)],
                   check=True)
    not_mine = mfa.sign(tb.base, Path(f"{another}.pub"), tmp_path / "not-mine-cert.pub",
                        validity="-5m:+1h")
    log = SshdLog(tb.base)
    for cert, kind, match in [
        (expired, AuthError, r"certificate 'old-one' .* expired at 2020-01-02"),
        (stranger, AuthError, r"refused the certificate: is it signed by a CA the site trusts"),
        (not_mine, BadInput, r"certifies another key than the site's key_file"),
    ]:
        t = SSHTransport(_transport_cfg(doors, CERT, cert_file=str(cert)), site=CERT)
        try:
            with pytest.raises(kind, match=match) as e:
                await t.run(["true"])
            assert "\n" not in str(e.value)
        finally:
            await t.close()
    # the expired one was not even offered; the stranger's was, and refused by the server
    assert log.lines(r"Accepted certificate") == []
    assert log.seen(r'ID "stranger"|Failed publickey')
    assert log.lines(r'ID "old-one"') == []


def _cli(doors, data_dir: Path, *args: str, otp: str | None = None):
    env = {k: v for k, v in os.environ.items() if k != "DIAMOND_OTP"}
    env.update({"DIAMOND_CONFIG": str(doors[0]), "DIAMOND_DATA_DIR": str(data_dir),
                "DIAMOND_LOG": "debug"})
    if otp is not None:
        env["DIAMOND_OTP"] = otp
    return subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                          capture_output=True, text=True, env=env, timeout=300,
                          stdin=subprocess.DEVNULL, start_new_session=True)  # no terminal


def test_cli_code_from_the_environment_wrong_or_missing(tb, doors, tmp_path):
    log = SshdLog(tb.base)
    data = tmp_path / "data"
    ok = _cli(doors, data, "queue", MFA, "--json", otp=_code(tb))
    assert ok.returncode == 0, ok.stderr
    assert {p["name"] for p in json.loads(ok.stdout)["partitions"]} == {"batch", "debug"}
    wrong = _wrong_code(tb)
    bad = _cli(doors, data, "queue", MFA, otp=wrong)
    assert bad.returncode == 1
    # the error line; paramiko's transport thread may still log (debug) after it
    errors = [ln for ln in bad.stderr.splitlines() if ln.startswith("diamond: ")]
    assert errors, bad.stderr
    assert errors[-1].startswith(f"diamond: {MFA}"), bad.stderr
    assert "one-time code was not accepted" in errors[-1], bad.stderr
    none = _cli(doors, data, "login", MFA)
    assert none.returncode == 1
    assert "no terminal to ask on; give the code in DIAMOND_OTP" in none.stderr
    assert len(log.seen(r"Failed keyboard-interactive/pam for diamondtb")) == 1
    assert len(log.seen(r"Accepted keyboard-interactive/pam for diamondtb")) == 1
    for r in (ok, bad, none):  # DIAMOND_LOG=debug: paramiko's and the engine's logs too
        assert wrong not in r.stderr + r.stdout
    _no_secret_in(data, wrong)


def test_cli_asks_on_the_terminal_without_echo(tb, doors, tmp_path):
    import pty

    env = {k: v for k, v in os.environ.items() if k != "DIAMOND_OTP"}
    env.update({"DIAMOND_CONFIG": str(doors[0]), "DIAMOND_DATA_DIR": str(tmp_path / "d")})
    pid, fd = pty.fork()
    if pid == 0:  # the child: a user's shell running the command on a terminal
        os.execve(sys.executable, [sys.executable, "-m", "diamond_jupyter.cli", "login", MFA],
                  env)
    seen = b""
    try:
        deadline = time.monotonic() + 120
        while b"Verification code:" not in seen:
            assert time.monotonic() < deadline, seen
            seen += os.read(fd, 1024)
        code = _code(tb)
        os.write(fd, code.encode() + b"\n")
        while True:
            try:
                chunk = os.read(fd, 1024)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    finally:
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, seen
    assert f"{MFA}: logged in".encode() in seen
    assert code.encode() not in seen  # not echoed
