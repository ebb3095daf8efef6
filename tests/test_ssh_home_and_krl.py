"""ssh's other paths and RevokedHostKeys, as OpenSSH reads them.

Every `~` and %d of ssh's own files (IdentityFile, CertificateFile, RevokedHostKeys,
IdentityAgent, `~/.ssh/config`, the default keys) is the password database's home, never
$HOME: each test sets $HOME elsewhere and puts there what ssh would not read (`strace ssh`
shows these files opened under the database's home). The exception is Include, which ssh
globs with GLOB_TILDE, reading $HOME. `ssh -G` is the oracle where it prints the expanded
path (IdentityAgent) or what a file gave (the HostName of an Include or the default
config).

RevokedHostKeys: a host key the file lists is refused at login, naming the file (and the
line of a plain list); a binary KRL is checked with `ssh-keygen -Q` (made here with
`ssh-keygen -k`); a KRL that cannot be checked refuses the login, saying why. The tests
marked `fault` failed before this change (a plain list was already read; a KRL refused
every login, whatever key it revoked)."""

from __future__ import annotations

import base64
import os
import pwd
import subprocess
import tempfile
import uuid
from pathlib import Path

import paramiko
import pytest

from diamond_jupyter.transports import ssh_auth
from diamond_jupyter.transports.ssh_auth import (
    HostKeyError,
    HostKeyVerifier,
    _keys,
    agent_socket,
    load_ssh_config,
    resolve_host,
)

PW_HOME = pwd.getpwuid(os.getuid()).pw_dir  # the home ssh's `~` and %d are
KEY, OTHER = paramiko.ECDSAKey.generate(), paramiko.ECDSAKey.generate()
HOST = "login1.hpc.example.org"


def ssh_g(config: Path | None, alias: str) -> dict[str, str]:
    """`ssh -G`'s answer for `alias` (offline: -G connects to nothing); config None: ssh's
    own ~/.ssh/config."""
    argv = ["ssh", "-G"] + (["-F", str(config)] if config else []) + [alias]
    out = subprocess.run(argv, capture_output=True, text=True, check=True,
                         stdin=subprocess.DEVNULL).stdout
    return {word: value for word, _, value in (row.partition(" ") for row in out.splitlines())}


def spec_of(tmp_path: Path, config: str, alias: str = "hpc"):
    (tmp_path / "ssh_config").write_text(config)
    return resolve_host(load_ssh_config(str(tmp_path / "ssh_config")), alias)


@pytest.fixture
def other_home(tmp_path, monkeypatch) -> Path:
    """$HOME apart from the password database's home, its .ssh holding a config that gives
    every host a wrong HostName, an included file doing the same, and a default key."""
    home = tmp_path / "env-home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "config").write_text("Host *\n  HostName wrong.from.env.home\n")
    monkeypatch.setenv("HOME", str(home))
    return home


def public_line(key: paramiko.PKey) -> str:
    return f"{key.get_name()} {key.get_base64()}\n"


def make_krl(tmp_path: Path, *keys: paramiko.PKey) -> Path:
    """A binary key revocation list revoking `keys`, written by ssh-keygen itself."""
    listed = tmp_path / "to-revoke.pub"
    listed.write_text("".join(public_line(k) for k in keys))
    krl = tmp_path / "revoked.krl"
    subprocess.run(["ssh-keygen", "-k", "-f", str(krl), str(listed)], check=True,
                   capture_output=True, stdin=subprocess.DEVNULL)
    assert krl.read_bytes().startswith(b"SSHKRL\n")
    return krl


# -- 1. ~ and %d: the password database's home ------------------------------------------------

@pytest.mark.parametrize("keyword,field", [("IdentityFile", "identity_files"),
                                           ("CertificateFile", "certificate_files"),
                                           ("RevokedHostKeys", "revoked_host_keys")])
@pytest.mark.parametrize("written", ["~/.ssh/f_%h", "%d/.ssh/f_%h"])
def test_fault_tilde_and_percent_d_are_the_password_databases_home(
        tmp_path, other_home, keyword, field, written):
    spec = spec_of(tmp_path, f"Host hpc\n  HostName {HOST}\n  {keyword} {written}\n")
    value = getattr(spec, field)
    assert (value if isinstance(value, str) else value[0]) == f"{PW_HOME}/.ssh/f_{HOST}"


def test_fault_identity_agent_under_tilde_is_the_socket_ssh_uses(tmp_path, other_home):
    spec = spec_of(tmp_path, "Host hpc\n  IdentityAgent ~/agent.sock\n")
    assert agent_socket(spec.identity_agent) == ssh_g(tmp_path / "ssh_config", "hpc")[
        "identityagent"] == f"{PW_HOME}/agent.sock"


def test_fault_the_default_ssh_config_is_the_password_databases(other_home):
    alias = f"diamond-{uuid.uuid4().hex[:12]}"  # a name no Host line of the real file names
    spec = resolve_host(load_ssh_config(None), alias)
    assert spec.hostname == ssh_g(None, alias)["hostname"] != "wrong.from.env.home"


@pytest.mark.parametrize("include", ["{name}", "~/.ssh/{name}"])
def test_an_include_is_found_where_ssh_finds_it_under_the_environments_home(
        tmp_path, other_home, include):
    """The exception: ssh globs an Include's name with GLOB_TILDE, whose `~` is $HOME."""
    name = f"diamond-inc-{uuid.uuid4().hex[:12]}"  # absent under the real home
    (other_home / ".ssh" / name).write_text("Host hpc\n  HostName from.env.home\n")
    spec = spec_of(tmp_path, f"Include {include.format(name=name)}\nHost hpc\n  HostName {HOST}\n")
    assert spec.hostname == ssh_g(tmp_path / "ssh_config", "hpc")["hostname"] == "from.env.home"


def test_fault_a_default_key_under_the_environments_home_is_not_offered(tmp_path, other_home):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                    str(other_home / ".ssh" / "id_ed25519")], check=True,
                   stdin=subprocess.DEVNULL)
    planted = (other_home / ".ssh" / "id_ed25519.pub").read_text().split()[1]
    spec = spec_of(tmp_path, "Host hpc\n")
    offered = _keys("alpha", spec, use_agent=False)
    assert all(k.get_base64() != planted for _, k in offered)
    assert all(label.startswith(f"{PW_HOME}/.ssh/id_") for label, _ in offered)


# -- 2. RevokedHostKeys: never accepted --------------------------------------------------------

def known(tmp_path: Path, key: paramiko.PKey = KEY) -> Path:
    f = tmp_path / "known_hosts"
    f.write_text(f"{HOST} {public_line(key)}")
    return f


@pytest.mark.parametrize("tofu", [False, True])
def test_fault_a_key_a_krl_revokes_is_refused_naming_the_file(tmp_path, tofu):
    """The key is in known_hosts too (or would be trusted on first use): the KRL wins."""
    krl = make_krl(tmp_path, OTHER, KEY)
    spec = spec_of(tmp_path, f"Host hpc\n  HostName {HOST}\n  RevokedHostKeys {krl}\n")
    own = known(tmp_path) if not tofu else tmp_path / "empty"
    with pytest.raises(HostKeyError, match=rf"is revoked \(revoked by the key revocation list "
                                           rf"ssh_config's RevokedHostKeys {krl} "):
        HostKeyVerifier("alpha", str(own), tofu=tofu).verify(spec, KEY)
    assert not (tmp_path / "empty").exists()  # nothing trusted on first use


def test_a_key_the_krl_does_not_revoke_is_checked_as_usual(tmp_path, monkeypatch):
    """The key and the list go to ssh-keygen in a private temporary directory, removed
    after."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", None)  # TMPDIR read again
    krl = make_krl(tmp_path, OTHER)
    spec = spec_of(tmp_path, f"Host hpc\n  HostName {HOST}\n  RevokedHostKeys {krl}\n")
    HostKeyVerifier("alpha", str(known(tmp_path)), tofu=False).verify(spec, KEY)
    (tmp_path / "empty").write_text("")
    with pytest.raises(HostKeyError, match="not in known_hosts"):  # still checked there
        HostKeyVerifier("alpha", str(tmp_path / "empty"), tofu=False).verify(spec, KEY)
    assert list(scratch.iterdir()) == []


def test_fault_the_krl_checked_is_the_one_read_even_if_replaced_meanwhile(tmp_path,
                                                                          monkeypatch):
    """The file is swapped, after it is read, for a list revoking another key only: the
    check is made on the bytes read (ssh-keygen was given the path, and read the swap)."""
    krl = make_krl(tmp_path, KEY)
    (tmp_path / "harmless").mkdir()
    harmless = make_krl(tmp_path / "harmless", OTHER).read_bytes()
    read_first = ssh_auth.read_named_file

    def read_then_swap(path: Path, *args, **kwargs) -> bytes:
        data = read_first(path, *args, **kwargs)
        if path == krl:
            krl.write_bytes(harmless)
        return data

    monkeypatch.setattr(ssh_auth, "read_named_file", read_then_swap)
    spec = spec_of(tmp_path, f"Host hpc\n  HostName {HOST}\n  RevokedHostKeys {krl}\n")
    with pytest.raises(HostKeyError, match=rf"is revoked \(revoked by the key revocation list "
                                           rf"ssh_config's RevokedHostKeys {krl} "):
        HostKeyVerifier("alpha", str(known(tmp_path)), tofu=False).verify(spec, KEY)
    assert krl.read_bytes() == harmless  # the swap was made


@pytest.mark.parametrize("why,setup", [
    ("ssh-keygen, which reads a KRL, is not on PATH", "no-ssh-keygen"),
    ("ssh-keygen -Q exited 255: Invalid KRL file", "damaged"),
])
def test_fault_a_krl_that_cannot_be_checked_refuses_the_login(tmp_path, monkeypatch, why, setup):
    krl = make_krl(tmp_path, OTHER)
    if setup == "damaged":
        krl.write_bytes(krl.read_bytes()[:12])
    else:
        monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    spec = spec_of(tmp_path, f"Host hpc\n  HostName {HOST}\n  RevokedHostKeys {krl}\n")
    with pytest.raises(HostKeyError, match=rf"RevokedHostKeys {krl} cannot be checked \(a key "
                                           rf"revocation list, KRL: {why}.*\); refusing to "
                                           "connect"):
        HostKeyVerifier("alpha", str(known(tmp_path)), tofu=False).verify(spec, KEY)


# -- 3. through a real sshd ---------------------------------------------------------------------

@pytest.mark.parametrize("form", ["list", "krl", "neither"])
async def test_fault_a_login_to_a_host_whose_key_is_revoked_is_refused(sshd, tmp_path, form):
    """A real sshd whose host key known_hosts lists: with RevokedHostKeys revoking that key
    (a plain list of public keys, or a KRL) the login is refused naming the file; with a
    KRL revoking another key only, the login goes on."""
    from diamond_jupyter.config import load_config
    from diamond_jupyter.transports import make_transport

    host_pub = Path(f"{sshd.host_key}.pub").read_text()
    host_key = paramiko.PKey.from_type_string(host_pub.split()[0],
                                              base64.b64decode(host_pub.split()[1]))
    if form == "list":
        revoked = tmp_path / "revoked"
        revoked.write_text(f"# stolen\n{host_pub}")
        refusal = rf"listed in ssh_config's RevokedHostKeys {revoked} line 2"
    else:
        revoked = make_krl(tmp_path, host_key if form == "krl" else OTHER)
        refusal = rf"revoked by the key revocation list ssh_config's RevokedHostKeys {revoked}"
    (tmp_path / "kh").write_text(sshd.known_hosts_line())
    (tmp_path / "ssh_config").write_text(
        f"Host hpc\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
        f"  IdentityFile {sshd.client_key}\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {tmp_path}/kh\n  GlobalKnownHostsFile none\n"
        f"  RevokedHostKeys {revoked}\n")
    (tmp_path / "sites.yaml").write_text(
        f"sites:\n  - name: hpc\n    transport:\n      host: hpc\n      use_agent: false\n"
        f"      ssh_config: {tmp_path}/ssh_config\n      connect_timeout_s: 10\n")
    t = make_transport(load_config(tmp_path / "sites.yaml").sites[0].transport, "hpc",
                       reconnect_attempts=1)
    try:
        if form == "neither":
            assert (await t.run(["echo", "in"])).stdout == "in\n"
        else:
            with pytest.raises(HostKeyError, match=refusal):
                await t.run(["echo", "in"])
    finally:
        await t.close()
