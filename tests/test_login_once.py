"""One attempt per login, without the test bed: a real SSH server (paramiko's server side)
asks for a code after the key; the transport never tries a refused or unanswered code again
by itself. Certificates made with the real `ssh-keygen -s` are read as OpenSSH reads them.
The CLI's terminal handler takes DIAMOND_OTP once."""

from __future__ import annotations

import subprocess
import time

import paramiko
import pytest
from sshd_helper import MfaSshServer
from test_transport_ssh import cfg

from diamond_jupyter.cli import otp
from diamond_jupyter.model import BadInput, SiteError
from diamond_jupyter.transports import ssh_cert
from diamond_jupyter.transports.ssh import SSHTransport
from diamond_jupyter.transports.ssh_auth import AuthError


@pytest.fixture
def mfa_server(sshd, tmp_path):
    srv = MfaSshServer(tmp_path, sshd.client_key)
    (tmp_path / "known_hosts").write_text(srv.known_hosts_line())
    yield srv
    srv.stop()


def _transport(sshd, srv, tmp_path, ask) -> SSHTransport:
    c = cfg(sshd, port=srv.port, user=srv.user, known_hosts=str(tmp_path / "known_hosts"),
            reconnect_attempts=3)
    return SSHTransport(c, site="mfa", interactive_handler=ask)


@pytest.mark.parametrize("answer, why", [
    (SiteError("the dialog was closed"), "no one-time code was given (the dialog was closed)"),
    ("000000", "the one-time code was not accepted (one attempt, not retried"),
])
async def test_a_failed_login_is_not_retried_until_the_user_logs_in(sshd, mfa_server, tmp_path,
                                                                    answer, why):
    asked = []

    def ask(title, instructions, prompts):
        asked.append(prompts)
        if isinstance(answer, Exception):
            raise answer
        return [answer]

    t = _transport(sshd, mfa_server, tmp_path, ask)
    try:
        with pytest.raises(AuthError) as e:
            await t.run(["true"])
        assert why in str(e.value) and str(e.value).startswith("mfa: ")
        assert mfa_server.connections == 1 and len(asked) == 1  # reconnect_attempts=3: once
        assert t.needs_login and t.describe()["needs_login"] is True
        for _ in range(3):  # a monitor's polls, other commands: no connection, no prompt
            with pytest.raises(AuthError, match="one-time code"):
                await t.run(["true"])
            with pytest.raises(AuthError):
                await t.stat("/")
        assert mfa_server.connections == 1 and len(asked) == 1
        assert await t.login(lambda *a: [mfa_server.otp]) is True  # the user's next login
        assert (await t.run(["echo", "ok"])).stdout == "ok\n"
        assert mfa_server.connections == 2 and not t.needs_login
        assert await t.login() is False  # connected already: nothing asked
        assert len(asked) == 1
    finally:
        await t.close()


async def test_without_a_handler_the_site_waits_for_a_login(sshd, mfa_server, tmp_path):
    t = _transport(sshd, mfa_server, tmp_path, None)
    try:
        with pytest.raises(AuthError, match="asks for a one-time code and none can be asked"):
            await t.run(["true"])
        with pytest.raises(AuthError, match="log in to mfa first"):
            await t.run(["true"])
        assert mfa_server.connections == 1
        assert await t.login(lambda *a: [mfa_server.otp]) is True
        assert (await t.run(["echo", "in"])).stdout == "in\n"
    finally:
        await t.close()


def test_the_code_from_the_environment_answers_once_and_leaves_it(monkeypatch):
    env = {"DIAMOND_OTP": "123456", "OTHER": "x"}
    ask = otp.terminal_asker(env)
    assert "DIAMOND_OTP" not in env and env == {"OTHER": "x"}  # no child inherits it
    monkeypatch.setattr(otp, "_has_terminal", lambda: False)
    assert ask("", "", [("Verification code: ", False)]) == ["123456"]
    with pytest.raises(SiteError, match="no terminal to ask on; give the code in DIAMOND_OTP"):
        ask("", "", [("Verification code: ", False)])
    assert ask("", "", []) == []


def _keygen(path, kind: str = "ed25519") -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", kind, "-N", "", "-f", str(path)], check=True)


def _sign(ca, pub, *, validity: str, principals: str = "alice", key_id: str = "k1",
          serial: int = 7) -> str:
    subprocess.run(["ssh-keygen", "-q", "-s", str(ca), "-I", key_id, "-n", principals,
                    "-z", str(serial), "-V", validity, str(pub)], check=True)
    return str(pub).removesuffix(".pub") + "-cert.pub"


@pytest.mark.parametrize("kind", ["ed25519", "rsa", "ecdsa"])
def test_certificates_are_read_as_ssh_keygen_wrote_them(tmp_path, kind):
    _keygen(tmp_path / "ca")
    _keygen(tmp_path / "id", kind)
    cert = _sign(tmp_path / "ca", tmp_path / "id.pub", validity="20300101:20300201",
                 principals="alice,bob")
    key = paramiko.PKey.from_path(str(tmp_path / "id"))
    key.public_blob = None
    info = ssh_cert.load(key, cert)
    assert key.public_blob is not None
    assert key.public_blob.key_type.endswith("-cert-v01@openssh.com")
    assert (info.key_id, info.serial, info.principals) == ("k1", 7, ("alice", "bob"))
    ca_fp = subprocess.run(["ssh-keygen", "-l", "-f", str(tmp_path / "ca.pub")], check=True,
                           capture_output=True, text=True).stdout.split()[1]
    assert info.ca == f"ED25519 {ca_fp}"
    assert info.validity_problem("alice", now=time.mktime((2030, 1, 15, 0, 0, 0, 0, 0, 0))) \
        is None
    assert "not valid before 2030-01-01" in info.validity_problem("alice", now=0)
    assert "expired at 2030-02-01" in info.validity_problem("alice", now=2e9)
    assert "is for alice, bob, not for user carol" in info.validity_problem(
        "carol", now=time.mktime((2030, 1, 15, 0, 0, 0, 0, 0, 0)))


def test_a_certificate_of_another_key_or_no_certificate_is_bad_input(tmp_path):
    _keygen(tmp_path / "ca")
    _keygen(tmp_path / "id")
    _keygen(tmp_path / "other")
    cert = _sign(tmp_path / "ca", tmp_path / "other.pub", validity="-5m:+1h")
    key = paramiko.PKey.from_path(str(tmp_path / "id"))
    with pytest.raises(BadInput, match="certifies another key than the site's key_file"):
        ssh_cert.load(key, cert)
    with pytest.raises(BadInput, match="not found"):
        ssh_cert.load(key, str(tmp_path / "missing-cert.pub"))
    with pytest.raises(BadInput, match="not an OpenSSH"):
        ssh_cert.load(key, str(tmp_path / "id.pub"))  # a plain public key
