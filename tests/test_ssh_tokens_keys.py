"""ssh_config's `%j` and `%C` tokens, the order keys are offered in, `@revoked` anywhere
and host certificates, each against OpenSSH itself: `ssh -G` for what a keyword expands to
(offline), `ssh -v` against a private sshd for the order ssh offers keys, and real logins
to a private sshd presenting a host certificate. The tests marked `fault` failed before."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
from pathlib import Path

import paramiko
import pytest
from sshd_helper import Sshd, keygen, make_base, remove_base
from test_config_unseen11 import _login, _own_key, no_home  # noqa: F401 (a fixture)
from test_config_unseen12 import both

from diamond_jupyter.model import BadInput
from diamond_jupyter.transports import HostKeyError
from diamond_jupyter.transports.ssh_auth import (
    JUMP_TOKEN_SINCE,
    HostKeyVerifier,
    HostSpec,
    _keys,
    _TokenValues,
    expand,
    jump_host,
    load_ssh_config,
    openssh_version,
    resolve_host,
)

INSTALLED = openssh_version()
KNOWS_JUMP = INSTALLED is None or INSTALLED >= JUMP_TOKEN_SINCE
JUMPED = ("Host hpc\n  HostName Login.Example.org\n  User ana\n  Port 2222\n"
          "  ProxyJump carol@gw1.example.org:2200,gw2\n")


def test_the_installed_openssh_is_read_from_ssh_v():
    said = subprocess.run(["ssh", "-V"], capture_output=True, text=True).stderr
    assert INSTALLED is not None and said.startswith(f"OpenSSH_{INSTALLED[0]}.{INSTALLED[1]}")


# -- 1. %C and %j, as the installed ssh expands them ----------------------------------------

@pytest.mark.parametrize("keyword,printed", [
    ("ControlPath", "controlpath"), ("UserKnownHostsFile", "userknownhostsfile"),
    ("IdentityAgent", "identityagent")])
@pytest.mark.parametrize("jump", ["", "  ProxyJump carol@gw1.example.org:2200,gw2\n",
                                  "  ProxyJump gw1\n", "  ProxyCommand none\n  ProxyJump gw\n"])
def test_fault_percent_c_is_the_hash_ssh_makes_with_or_without_a_jump_host(
        tmp_path, keyword, printed, jump):
    """`%C` with a ProxyJump: the engine hashed %l%h%p%r and the ProxyJump as written; the
    installed ssh (9.2) hashes %l%h%p%r alone, 9.4 on with the last hop's host. ControlPath
    and IdentityAgent were not expanded at all."""
    ssh, spec = both(tmp_path, f"Host hpc\n  HostName Login.Example.org\n  User ana\n"
                               f"  Port 2222\n{jump}  {keyword} /run/x/%C-%h\n")
    assert isinstance(ssh, dict) and isinstance(spec, HostSpec), (ssh, spec)
    got = {"controlpath": spec.control_socket, "identityagent": spec.identity_agent,
           "userknownhostsfile": " ".join(spec.known_hosts_files or [])}[printed]
    assert got == ssh[printed]


@pytest.mark.parametrize("keyword,printed", [
    ("ControlPath", "controlpath"), ("UserKnownHostsFile", "userknownhostsfile"),
    ("IdentityAgent", "identityagent")])
def test_fault_percent_j_is_read_as_the_installed_ssh_reads_it(tmp_path, keyword, printed):
    """OpenSSH before 9.4 knows no %j: `ssh -G` refuses the host (unknown key %j), and the
    engine expanded it to the ProxyJump as written. Now refused alike, naming the line and
    the release; from 9.4 on, the same value as ssh's."""
    ssh, spec = both(tmp_path, JUMPED + f"  {keyword} /run/x/%j-%r\n")
    if isinstance(ssh, str):
        assert "unknown key %j" in _ssh_g_errors(tmp_path / "ssh_config")
        assert isinstance(spec, str), spec
        assert f"ssh_config {tmp_path}/ssh_config line 6: {keyword} '/run/x/%j-%r': %j is " \
               "not a token" in spec
        assert f"the ssh installed here is OpenSSH {INSTALLED[0]}.{INSTALLED[1]}" in spec
        assert "%j, the ProxyJump host, is read from OpenSSH 9.4 on" in spec
    else:
        assert isinstance(spec, HostSpec), spec
        got = {"controlpath": spec.control_socket, "identityagent": spec.identity_agent,
               "userknownhostsfile": " ".join(spec.known_hosts_files or [])}[printed]
        assert got == ssh[printed]


def test_fault_percent_j_in_an_identity_file_as_the_installed_ssh(tmp_path):
    """`ssh -G` prints IdentityFile unexpanded, and ssh expands it at login with the same
    tokens as ControlPath: the two must agree (refused by both before 9.4)."""
    ssh, spec = both(tmp_path, JUMPED + "  ControlPath /k/%j\n  IdentityFile /k/%j\n")
    if isinstance(ssh, str):
        assert isinstance(spec, str) and "IdentityFile '/k/%j': %j is not a token" in spec
    else:
        assert isinstance(spec, HostSpec) and spec.identity_files == [ssh["controlpath"]]


def _ssh_g_errors(config: Path) -> str:
    """What `ssh -G` says on stderr for host hpc of `config`."""
    return subprocess.run(["ssh", "-G", "-F", str(config), "hpc"], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL).stderr


def _values(openssh: tuple[int, int] | None, jump: str) -> _TokenValues:
    return _TokenValues(paramiko.SSHConfig(), "hpc", "login.example.org", 2222, "ana",
                        jump_host(jump), "hpc", openssh)


@pytest.mark.parametrize("openssh", [(9, 4), (10, 0), None])
@pytest.mark.parametrize("jump,host", [
    ("carol@gw1.example.org:2200,gw2", "gw2"), ("gw1", "gw1"), ("ana@gw:2222", "gw"),
    ("[2001:db8::7]:2200", "2001:db8::7"), ("", ""), ("none", "")])
def test_percent_j_from_9_4_is_the_last_hops_host_and_in_the_hash(openssh, jump, host):
    """ssh_config(5) from 9.4: %j the ProxyJump host (the hop that reaches the target, as
    ssh keeps it), and %C a hash of %l%h%p%r%j; None (no ssh installed): the newest rules."""
    ctx = _values(openssh, jump)
    local = socket.gethostname()
    assert expand(ctx, "controlpath", "/s/%j") == f"/s/{host}"
    want = hashlib.sha1(f"{local}login.example.org2222ana{host}".encode()).hexdigest()
    assert expand(ctx, "identityfile", "/k/%C") == f"/k/{want}"


@pytest.mark.parametrize("openssh", [(8, 9), (9, 2), (9, 3)])
def test_before_9_4_percent_c_leaves_the_jump_host_out_and_percent_j_is_refused(openssh):
    ctx = _values(openssh, "gw1")
    local = socket.gethostname()
    want = hashlib.sha1(f"{local}login.example.org2222ana".encode()).hexdigest()
    assert expand(ctx, "userknownhostsfile", "/k/%C") == f"/k/{want}"
    with pytest.raises(BadInput, match=r"%j is not a token ControlPath takes \(it takes %%, "
                                       r"%C, %d, %h, %i, %k, %L, %l, %n, %p, %r, %u; %% is a "
                                       rf"%\) \(%j, the ProxyJump host, is read from OpenSSH "
                                       rf"9\.4 on; the ssh installed here is OpenSSH "
                                       rf"{openssh[0]}\.{openssh[1]}"):
        expand(ctx, "controlpath", "/s/%j")


def test_the_sites_files_proxy_jump_is_what_percent_j_names(tmp_path):
    """The sites file's proxy_jump is as `ssh -J` (before ssh_config's ProxyJump)."""
    (tmp_path / "ssh_config").write_text(JUMPED + "  ControlPath /s/%C\n")
    cfg = load_ssh_config(str(tmp_path / "ssh_config"))
    spec = resolve_host(cfg, "hpc", proxy_jump="bob@site-gw:22")
    r = subprocess.run(["ssh", "-G", "-F", str(tmp_path / "ssh_config"), "-J", "bob@site-gw:22",
                        "hpc"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert f"controlpath {spec.control_socket}" in r.stdout.splitlines()


def test_an_identity_agent_of_an_unset_variable_is_refused_as_ssh_refuses_it(tmp_path,
                                                                            monkeypatch):
    monkeypatch.delenv("NO_SUCH_AGENT_DIR", raising=False)
    ssh, spec = both(tmp_path, "Host hpc\n  IdentityAgent ${NO_SUCH_AGENT_DIR}/a.sock\n")
    assert isinstance(ssh, str)
    assert "${NO_SUCH_AGENT_DIR} has no value" in _ssh_g_errors(tmp_path / "ssh_config")
    assert isinstance(spec, str) and "IdentityAgent '${NO_SUCH_AGENT_DIR}/a.sock' names " \
                                     "${NO_SUCH_AGENT_DIR}, which is not set" in spec


@pytest.mark.parametrize("written", ["none", "SSH_AUTH_SOCK", "$SSH_AUTH_SOCK"])
def test_an_identity_agent_of_a_word_is_kept_as_written(tmp_path, written):
    ssh, spec = both(tmp_path, f"Host hpc\n  IdentityAgent {written}\n")
    assert isinstance(spec, HostSpec) and spec.identity_agent == written
    assert isinstance(ssh, dict) and ssh["identityagent"] == written


# -- 2. the order keys are offered in: ssh's ------------------------------------------------

@pytest.fixture(scope="module")
def key_sshd():
    """A private sshd and three keys, k1 k2 k3, none of which it accepts."""
    base = make_base()
    d = Sshd(base).start()
    keys = {n: keygen(base / n) for n in ("k1", "k2", "k3")}
    yield d, keys
    d.stop()
    remove_base(base)


@pytest.fixture
def agent(tmp_path):
    """A real ssh-agent of this test's own (its environment), killed after."""
    sock = tmp_path / "agent.sock"
    started = subprocess.run(["ssh-agent", "-a", str(sock), "-s"], capture_output=True,
                             text=True, check=True).stdout
    pid = int(started.split("SSH_AGENT_PID=")[1].split(";")[0])
    env = {**os.environ, "SSH_AUTH_SOCK": str(sock)}
    yield env
    os.kill(pid, 15)


def _ssh_offers(d: Sshd, config: Path, env: dict[str, str]) -> list[str]:
    """The keys real ssh offers, in its order (`ssh -v`'s `Offering`): each one's
    fingerprint, with ` cert` after a certificate's."""
    r = subprocess.run(["ssh", "-v", "-F", str(config), "hpc", "true"], env=env,
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    prints = [next(w for w in ln.split() if w.startswith("SHA256:"))
              + (" cert" if "-CERT " in ln else "")
              for ln in r.stderr.splitlines() if "Offering public key:" in ln]
    assert prints, r.stderr[-2000:]
    return prints


def _print(key: paramiko.PKey) -> str:
    import base64
    cert = " cert" if getattr(key, "public_blob", None) is not None else ""
    return "SHA256:" + base64.b64encode(hashlib.sha256(key.asbytes()).digest()).decode(
    ).rstrip("=") + cert


@pytest.mark.parametrize("only", ["no", "yes"])
@pytest.mark.parametrize("in_agent,files", [
    (["k1", "k3", "k2"], ["k2", "k1"]),   # both files held: the agent's order, not the file's
    (["k3", "k2"], ["k1", "k2"]),         # one held: it first, then the agent's other, then k1
    (["k3"], ["k1", "k2"]),               # none held: the agent's keys, then the files
    ([], ["k2", "k1"]),                   # no key held
])
def test_fault_keys_are_offered_in_the_order_ssh_offers_them(
        key_sshd, agent, tmp_path, monkeypatch, only, in_agent, files):
    """`ssh -v` against a real sshd is the oracle: identity files the agent holds go first,
    in the agent's order, then the agent's other keys (none with IdentitiesOnly), then the
    identity files the agent lacks, in ssh_config's order. The engine offered the files
    first and each held key a second time through the agent: with a server allowing 6
    tries (MaxAuthTries), fewer keys than ssh reached the key that logs in."""
    d, keys = key_sshd
    for n in in_agent:
        subprocess.run(["ssh-add", "-q", str(keys[n])], env=agent, check=True,
                       capture_output=True)
    config = tmp_path / "ssh_config"
    config.write_text(f"Host hpc\n  HostName 127.0.0.1\n  Port {d.port}\n  User {d.user}\n"
                      + "".join(f"  IdentityFile {keys[n]}\n" for n in files)
                      + f"  IdentitiesOnly {only}\n  StrictHostKeyChecking no\n"
                        "  UserKnownHostsFile /dev/null\n  BatchMode yes\n")
    monkeypatch.setenv("SSH_AUTH_SOCK", agent["SSH_AUTH_SOCK"])
    spec = resolve_host(load_ssh_config(str(config)), "hpc")
    engine = [_print(k) for _, k in _keys("hpc", spec, use_agent=True)]
    assert engine == _ssh_offers(d, config, agent)


@pytest.mark.parametrize("given", [True, False])
def test_fault_certificates_are_offered_where_ssh_offers_them(key_sshd, agent, tmp_path,
                                                              monkeypatch, given):
    """A CertificateFile's certificate goes first, before the agent's keys; a key's own
    KEY-cert.pub right after the key, among the identity files (as `ssh -v` offers them).
    Before: each identity file's certificate was offered first, with the file, and the agent
    after."""
    d, keys = key_sshd
    subprocess.run(["ssh-add", "-q", str(keys["k3"])], env=agent, check=True,
                   capture_output=True)
    own = tmp_path / "id_signed"
    own.write_bytes(keys["k1"].read_bytes())
    own.chmod(0o600)
    Path(f"{own}.pub").write_text(Path(f"{keys['k1']}.pub").read_text())
    ca = keygen(tmp_path / "user_ca")
    subprocess.run(["ssh-keygen", "-q", "-s", str(ca), "-I", "ana", "-n", d.user,
                    f"{own}.pub"], check=True, capture_output=True)
    config = tmp_path / "ssh_config"
    config.write_text(f"Host hpc\n  HostName 127.0.0.1\n  Port {d.port}\n  User {d.user}\n"
                      f"  IdentityFile {keys['k2']}\n  IdentityFile {own}\n"
                      + (f"  CertificateFile {own}-cert.pub\n" if given else "")
                      + "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n"
                        "  BatchMode yes\n")
    monkeypatch.setenv("SSH_AUTH_SOCK", agent["SSH_AUTH_SOCK"])
    spec = resolve_host(load_ssh_config(str(config)), "hpc")
    engine = [_print(k) for _, k in _keys("hpc", spec, use_agent=True)]
    assert engine == _ssh_offers(d, config, agent)


def test_fault_a_locked_identity_file_the_agent_holds_is_offered_once_by_its_name(
        key_sshd, agent, tmp_path, monkeypatch):
    """The file is locked by a passphrase and held unlocked by the agent: offered once, at
    the agent's turn, named by its file (not said to be 'not offered: locked')."""
    d, keys = key_sshd
    locked = tmp_path / "id_locked"
    locked.write_bytes(keys["k2"].read_bytes())
    locked.chmod(0o600)
    Path(f"{locked}.pub").write_text(Path(f"{keys['k2']}.pub").read_text())
    subprocess.run(["ssh-add", "-q", str(keys["k3"]), str(keys["k2"])], env=agent, check=True,
                   capture_output=True)
    subprocess.run(["ssh-keygen", "-q", "-p", "-N", "secret", "-f", str(locked)], check=True,
                   capture_output=True)
    config = tmp_path / "ssh_config"
    config.write_text(f"Host hpc\n  IdentityFile {locked}\n  IdentityFile {keys['k1']}\n")
    monkeypatch.setenv("SSH_AUTH_SOCK", agent["SSH_AUTH_SOCK"])
    offered = _keys("hpc", resolve_host(load_ssh_config(str(config)), "hpc"), use_agent=True)
    k1, k2, k3 = (paramiko.PKey.from_path(str(keys[n])) for n in ("k1", "k2", "k3"))
    assert [(label, _print(k)) for label, k in offered] == [
        (str(locked), _print(k2)), ("agent:ssh-ed25519", _print(k3)), (str(keys["k1"]),
                                                                        _print(k1))]


# -- 3. @revoked anywhere refuses -----------------------------------------------------------

HOST = "login1.hpc.example.org"
KEY = paramiko.ECDSAKey.generate()


def _line(hosts: str, key: paramiko.PKey = KEY) -> str:
    return f"{hosts} {key.get_name()} {key.get_base64()}\n"


def _spec(tmp_path: Path) -> HostSpec:
    (tmp_path / "ssh_config").write_text(
        f"Host hpc\n  HostName {HOST}\n  UserKnownHostsFile {tmp_path}/user_kh\n"
        f"  GlobalKnownHostsFile {tmp_path}/global_kh\n")
    return resolve_host(load_ssh_config(str(tmp_path / "ssh_config")), "hpc")


@pytest.mark.parametrize("revoking", [
    "@revoked other.example.org {type} {key}\n",        # another host's line
    "@revoked !{host} {type} {key}\n",                  # a line that leaves this host out
    "@revoked *.elsewhere.org,10.9.9.9 {type} {key} old gw key\n",
])
@pytest.mark.parametrize("where", ["user_kh", "global_kh", "own"])
def test_a_key_revoked_on_any_line_of_any_file_read_is_refused(tmp_path, revoking, where):
    """The key is accepted by a plain line for the host and revoked on a line naming other
    hosts only (ssh revokes per host, and would log in): refused all the same, naming the
    line, and no file is changed."""
    for f in ("user_kh", "global_kh", "own"):
        (tmp_path / f).write_text(_line(HOST))
    text = revoking.format(host=HOST, type=KEY.get_name(), key=KEY.get_base64())
    (tmp_path / where).write_text(_line(HOST) + text)
    spec = _spec(tmp_path)
    before = {f: (tmp_path / f).read_text() for f in ("user_kh", "global_kh", "own")}
    for tofu in (False, True):
        with pytest.raises(HostKeyError, match=rf"is revoked \(@revoked in {tmp_path}/{where} "
                                               r"line 2\); refusing to connect"):
            HostKeyVerifier("a", str(tmp_path / "own"), tofu=tofu).verify(spec, KEY)
    assert {f: (tmp_path / f).read_text() for f in before} == before


def test_fault_a_revoked_line_without_hosts_still_revokes(tmp_path):
    """`@revoked ssh-ed25519 AAAA...` (the hosts left out): ssh reads the key's type as the
    hosts and passes the line over, accepting the key from the plain line; the engine took
    it too. Now refused, naming the line and how to write it."""
    (tmp_path / "user_kh").write_text(
        _line(HOST) + f"@revoked {KEY.get_name()} {KEY.get_base64()}\n")
    spec = _spec(tmp_path)
    found = subprocess.run(["ssh-keygen", "-F", HOST, "-f", str(tmp_path / "user_kh")],
                           capture_output=True, text=True).stdout
    assert "REVOKED" not in found.upper() and KEY.get_base64() in found  # ssh: accepted
    with pytest.raises(HostKeyError, match=rf"revoked \(@revoked in {tmp_path}/user_kh line 2, "
                                           r"which lists no hosts: ssh passes that line over, "
                                           r"and would accept the key; write `@revoked \* "
                                           r"ecdsa-sha2-nistp256 KEY`\)"):
        HostKeyVerifier("a", None, tofu=False).verify(spec, KEY)


def test_a_revoked_line_naming_the_wrong_type_still_revokes_the_key(tmp_path):
    (tmp_path / "user_kh").write_text(
        _line(HOST) + f"@revoked * ssh-rsa {KEY.get_base64()}\n")
    with pytest.raises(HostKeyError, match=r"is revoked \(@revoked in .*user_kh line 2\)"):
        HostKeyVerifier("a", None, tofu=False).verify(_spec(tmp_path), KEY)


def test_a_key_revoked_for_another_host_does_not_touch_other_keys(tmp_path):
    other = paramiko.ECDSAKey.generate()
    (tmp_path / "user_kh").write_text(_line(HOST) + _line("@revoked *", other))
    HostKeyVerifier("a", None, tofu=False).verify(_spec(tmp_path), KEY)


# -- 4. host certificates: refused, naming the line -----------------------------------------

@pytest.fixture(scope="module")
def cert_sshd():
    """A private sshd that presents only a host certificate (HostKeyAlgorithms of the
    certificate type), signed by a CA key for 127.0.0.1."""
    base = make_base()
    ca = keygen(base / "host_ca")
    d = Sshd(base, extra=f"HostCertificate {base}/host_ed25519-cert.pub\n"
                         "HostKeyAlgorithms ssh-ed25519-cert-v01@openssh.com\n")
    subprocess.run(["ssh-keygen", "-q", "-s", str(ca), "-I", "test-host", "-h", "-n",
                    "127.0.0.1", f"{d.host_key}.pub"], check=True, capture_output=True)
    d.start()
    yield d, Path(f"{ca}.pub").read_text().split()
    d.stop()
    remove_base(base)


def _ca_line(d: Sshd, ca: list[str]) -> str:
    return f"@cert-authority [127.0.0.1]:{d.port} {ca[0]} {ca[1]}\n"


async def test_a_host_certificate_is_refused_naming_the_ca_line(cert_sshd, tmp_path,
                                                                no_home):  # noqa: F811
    """ssh logs in: it checks the certificate against the CA line (shown). paramiko cannot
    check a host certificate, so the engine refuses, naming the line, that host
    certificates are not checked, and the plain key line to add instead."""
    d, ca = cert_sshd
    (tmp_path / "kh_ssh").write_text(_ca_line(d, ca))
    key = _own_key(tmp_path, d.client_key)
    r = subprocess.run(["ssh", "-F", "/dev/null", "-p", str(d.port), "-i", str(key),
                        "-o", "BatchMode=yes", "-o", f"UserKnownHostsFile={tmp_path}/kh_ssh",
                        "-o", "GlobalKnownHostsFile=/dev/null", "-o", "IdentitiesOnly=yes",
                        f"{d.user}@127.0.0.1", "echo", "in"], capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.stdout == "in\n", r.stderr
    with pytest.raises(HostKeyError) as e:
        await _login(tmp_path, f"host: 127.0.0.1\nport: {d.port}\nuser: {d.user}\n"
                               f"key_file: {key}", "Host *\n  UserKnownHostsFile none\n"
                               "  GlobalKnownHostsFile none\n", known_hosts=_ca_line(d, ca))
    said = str(e.value)
    assert f"host [127.0.0.1]:{d.port} is known only through the @cert-authority line " \
           f"{tmp_path}/known_hosts line 1, and host certificates are not checked here" in said
    assert "needs its plain key in a known_hosts file" in said
    assert f"ssh-keyscan -p {d.port} 127.0.0.1 >> {tmp_path}/known_hosts" in said


async def test_a_host_certificate_with_its_plain_key_listed_logs_in(cert_sshd, tmp_path,
                                                                    no_home):  # noqa: F811
    """The host's plain key listed beside the CA line: the certificate's key is checked as
    a plain key (as ssh does after a certificate it cannot accept)."""
    d, ca = cert_sshd
    key = _own_key(tmp_path, d.client_key)
    got = await _login(tmp_path, f"host: 127.0.0.1\nport: {d.port}\nuser: {d.user}\n"
                                 f"key_file: {key}", "Host *\n  UserKnownHostsFile none\n"
                                 "  GlobalKnownHostsFile none\n",
                       known_hosts=_ca_line(d, ca) + d.known_hosts_line())
    assert got == "in\n"


async def test_a_host_certificate_whose_key_is_revoked_is_refused(cert_sshd, tmp_path,
                                                                  no_home):  # noqa: F811
    d, ca = cert_sshd
    key = _own_key(tmp_path, d.client_key)
    pub = Path(f"{d.host_key}.pub").read_text().split()
    with pytest.raises(HostKeyError, match=r"is revoked \(@revoked in .*known_hosts line 3\)"):
        await _login(tmp_path, f"host: 127.0.0.1\nport: {d.port}\nuser: {d.user}\n"
                               f"key_file: {key}", "Host *\n  UserKnownHostsFile none\n"
                               "  GlobalKnownHostsFile none\n",
                     known_hosts=_ca_line(d, ca) + d.known_hosts_line()
                     + f"@revoked * {pub[0]} {pub[1]}\n")
