"""known_hosts read as OpenSSH reads it: the files (ssh_config's UserKnownHostsFile and
GlobalKnownHostsFile, `none`, several files, tokens, `~` as the password database's home),
the `@revoked` and `@cert-authority` markers, and host patterns (hashed names,
`[host]:port`, wildcards, negations). Where OpenSSH can answer offline it is the oracle:
`ssh -G` for the files a host's lookups read, `ssh-keygen -F` for whether a line names a
host. The tests marked `fault` failed before these fixes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import pwd
import subprocess
from pathlib import Path

import paramiko
import pytest

from diamond_jupyter.model import BadInput
from diamond_jupyter.transports.ssh_auth import (
    DEFAULT_GLOBAL_KNOWN_HOSTS,
    HostKeyError,
    HostKeyVerifier,
    HostSpec,
    load_ssh_config,
    resolve_host,
)

KEY, OTHER = paramiko.ECDSAKey.generate(), paramiko.ECDSAKey.generate()
PW_HOME = pwd.getpwuid(os.getuid()).pw_dir  # the home ssh's `~` and %d are
HOST = "login1.hpc.example.org"


def line(hosts: str, key: paramiko.PKey = KEY) -> str:
    return f"{hosts} {key.get_name()} {key.get_base64()}\n"


def hashed(name: str) -> str:
    salt = os.urandom(20)
    digest = hmac.new(salt, name.encode(), hashlib.sha1).digest()
    return f"|1|{base64.b64encode(salt).decode()}|{base64.b64encode(digest).decode()}"


def spec_of(tmp_path: Path, config: str, alias: str = "hpc") -> HostSpec:
    (tmp_path / "ssh_config").write_text(config)
    return resolve_host(load_ssh_config(str(tmp_path / "ssh_config")), alias)


def ssh_g(tmp_path: Path, alias: str = "hpc") -> dict[str, list[str]]:
    """The known_hosts files `ssh -G` says ssh reads for `alias` under tmp_path/ssh_config
    (offline: -G connects to nothing)."""
    out = subprocess.run(["ssh", "-G", "-F", str(tmp_path / "ssh_config"), alias],
                         capture_output=True, text=True, check=True,
                         stdin=subprocess.DEVNULL).stdout
    files = {}
    for row in out.splitlines():
        word, _, value = row.partition(" ")
        if word in ("userknownhostsfile", "globalknownhostsfile"):
            files[word] = [] if value == "none" else [value]  # a path may hold a blank
    return files


@pytest.fixture
def other_home(tmp_path, monkeypatch) -> Path:
    """$HOME set apart from the password database's home, with a known_hosts there listing
    the host: ssh reads neither."""
    home = tmp_path / "env-home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "known_hosts").write_text(line(HOST))
    monkeypatch.setenv("HOME", str(home))
    return home


# -- 1. @revoked: a revoked key is never accepted -----------------------------------------------

@pytest.mark.parametrize("where", ["own", "user", "global"])
@pytest.mark.parametrize("hosts", ["*", HOST, "*.hpc.example.org", "hashed",
                                   "[login1.hpc.example.org]:2222"])
@pytest.mark.parametrize("tofu", [False, True])
def test_a_revoked_key_is_refused_in_every_file_ssh_reads(tmp_path, where, hosts, tofu):
    """`@revoked HOSTS KEY` in the site's file, a UserKnownHostsFile or a
    GlobalKnownHostsFile, the key also listed plainly for the host: refused, trust on
    first use or not, and nothing is added."""
    port = 2222 if hosts.startswith("[") else 22
    name = HOST if port == 22 else f"[{HOST}]:{port}"
    marker = f"@revoked {hashed(name) if hosts == 'hashed' else hosts} " \
             f"{KEY.get_name()} {KEY.get_base64()}\n"
    files = {w: tmp_path / w for w in ("own", "user", "global")}
    for w, f in files.items():
        f.write_text(line(f"{HOST},[{HOST}]:2222") + (marker if w == where else ""))
    spec = spec_of(tmp_path, f"Host hpc\n  HostName {HOST}\n  Port {port}\n"
                             f"  UserKnownHostsFile {files['user']}\n"
                             f"  GlobalKnownHostsFile {files['global']}\n")
    before = {w: f.read_text() for w, f in files.items()}
    with pytest.raises(HostKeyError, match=rf"is revoked \(@revoked in {files[where]} line 2\)"):
        HostKeyVerifier("a", str(files["own"]), tofu=tofu).verify(spec, KEY)
    assert {w: f.read_text() for w, f in files.items()} == before


# -- 2. the files read: exactly ssh's -----------------------------------------------------------

@pytest.mark.parametrize("config", [
    "Host hpc\n  HostName login1.hpc.example.org\n",
    "Host hpc\n  UserKnownHostsFile ~/kh/a %d/kh/%h-%p \"~/kh/with blank\"\n"
    "  GlobalKnownHostsFile /etc/center/kh_%r ~/kh/global\n",
    "Host hpc\n  UserKnownHostsFile none\n  GlobalKnownHostsFile none\n",
    "Host hpc\n  Port 2222\n  User ana\n  UserKnownHostsFile ~/.ssh/kh_%n_%u\n",
])
def test_fault_the_files_read_are_the_ones_ssh_reads(tmp_path, other_home, config):
    """Each host's known_hosts files, with $HOME elsewhere than the password database's
    home: the engine's list (the site's own file first) is ssh's (`ssh -G`), no more, where
    it always read $HOME/.ssh/known_hosts and took `~` and %d from $HOME."""
    spec = spec_of(tmp_path, config)
    want = ssh_g(tmp_path)
    verifier = HostKeyVerifier("a", str(tmp_path / "own"), tofu=False)
    read = verifier._files(spec)
    user = read[1:len(read) - len(spec.global_known_hosts_files or DEFAULT_GLOBAL_KNOWN_HOSTS)]
    assert read[0] == str(tmp_path / "own")
    assert ([" ".join(user)] if user else []) == want["userknownhostsfile"]
    glob = read[1 + len(user):]
    assert ([" ".join(glob)] if glob else []) == want["globalknownhostsfile"]
    assert not any(f.startswith(str(other_home)) for f in verifier._files(spec))


def test_fault_a_key_only_in_the_environments_home_is_not_taken(tmp_path, other_home):
    """ssh_config names the user's known_hosts files elsewhere; $HOME's known_hosts lists
    the host: ssh does not read it, and the engine accepted the key from it. The refusal
    names the files read."""
    (tmp_path / "kh").write_text("")
    spec = spec_of(tmp_path, f"Host hpc\n  HostName {HOST}\n  UserKnownHostsFile "
                             f"{tmp_path}/kh {tmp_path}/kh2\n  GlobalKnownHostsFile none\n")
    with pytest.raises(HostKeyError) as e:
        HostKeyVerifier("a", str(tmp_path / "own"), tofu=False).verify(spec, KEY)
    assert f"(files read: {tmp_path}/kh; not there: {tmp_path}/own, {tmp_path}/kh2)" \
           in str(e.value), str(e.value)


def test_fault_trust_on_first_use_adds_to_the_first_user_file_ssh_would(tmp_path, other_home):
    """No known_hosts in the sites file: a first-seen key goes to ssh_config's first
    UserKnownHostsFile, as ssh adds it (it went to $HOME/.ssh/known_hosts, which ssh never
    reads here), and is found there next time."""
    spec = spec_of(tmp_path, f"Host hpc\n  HostName {HOST}\n  UserKnownHostsFile "
                             f"{tmp_path}/kh {tmp_path}/kh2\n  GlobalKnownHostsFile none\n")
    HostKeyVerifier("a", None, tofu=True).verify(spec, OTHER)
    assert (tmp_path / "kh").read_text() == line(HOST, OTHER)
    assert (other_home / ".ssh" / "known_hosts").read_text() == line(HOST)
    HostKeyVerifier("a", None, tofu=False).verify(spec, OTHER)


def test_fault_no_user_file_and_no_site_file_leaves_nothing_to_add_to(tmp_path, other_home):
    spec = spec_of(tmp_path, f"Host hpc\n  HostName {HOST}\n  UserKnownHostsFile none\n"
                             "  GlobalKnownHostsFile none\n")
    with pytest.raises(HostKeyError, match=r"UserKnownHostsFile none .*no file to add .* "
                                           r"give known_hosts: FILE"):
        HostKeyVerifier("a", None, tofu=True).verify(spec, OTHER)


def test_fault_a_user_unknown_to_the_password_database_in_a_path_is_refused(tmp_path):
    (tmp_path / "ssh_config").write_text("Host hpc\n  UserKnownHostsFile ~nosuchuser9/kh\n")
    with pytest.raises(BadInput, match=rf"ssh_config {tmp_path}/ssh_config line 2: "
                                        r"UserKnownHostsFile '~nosuchuser9/kh': no user "
                                        r"nosuchuser9"):
        resolve_host(load_ssh_config(str(tmp_path / "ssh_config")), "hpc")


# -- 3. @cert-authority: never accepted for want of a certificate check ------------------------

@pytest.mark.parametrize("tofu", [False, True])
def test_fault_a_host_known_only_through_a_ca_line_needs_its_plain_key(tmp_path, tofu):
    """Only `@cert-authority *.hpc.example.org CA` names the host: the SSH library checks no
    host certificate, so the refusal says to list the plain key, naming the line; with
    trust_on_first_use the key was added silently, bypassing the CA the user trusts."""
    own = tmp_path / "own"
    own.write_text("# center CA\n" + line("@cert-authority *.hpc.example.org", OTHER))
    spec = spec_of(tmp_path, f"Host hpc\n  HostName {HOST}\n  UserKnownHostsFile none\n"
                             "  GlobalKnownHostsFile none\n")
    with pytest.raises(HostKeyError, match=rf"known only through the @cert-authority line "
                                           rf"{own} line 2.*host certificates are not "
                                           r"checked.*needs its plain key in a known_hosts "
                                           rf"file.*ssh-keyscan -p 22 {HOST} >> {own}"):
        HostKeyVerifier("a", str(own), tofu=tofu).verify(spec, KEY)
    assert own.read_text().count("\n") == 2
    own.write_text(own.read_text() + line(HOST))
    HostKeyVerifier("a", str(own), tofu=tofu).verify(spec, KEY)


# -- 4. host patterns, as ssh-keygen -F finds them ------------------------------------------------

PATTERNS = ["*.hpc.example.org", "!evil.hpc.example.org,*.hpc.example.org",
            "[*.hpc.example.org]:2222", "hashed:login1.hpc.example.org",
            "hashed:[login1.hpc.example.org]:2222", "LOGIN1.hpc.example.org",
            "login?.hpc.example.org", "[login1.hpc.example.org]:22", "10.1.2.*,login*",
            "*,!*.example.org"]
NAMES = [(HOST, 22), ("evil.hpc.example.org", 22), (HOST, 2222), ("login7", 22)]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_lines_hosts_are_matched_as_ssh_keygen_finds_them(tmp_path, pattern):
    hosts = hashed(pattern.removeprefix("hashed:")) if pattern.startswith("hashed:") else pattern
    kh = tmp_path / "kh"
    kh.write_text(line(hosts))
    for host, port in NAMES:
        name = host if port == 22 else f"[{host}]:{port}"
        found = subprocess.run(["ssh-keygen", "-F", name, "-f", str(kh)],
                               capture_output=True, stdin=subprocess.DEVNULL).returncode == 0
        spec = HostSpec(alias=host, hostname=host, port=port)
        try:
            HostKeyVerifier("a", str(kh), tofu=False).verify(spec, KEY)
            taken = True
        except HostKeyError as e:
            assert "not in known_hosts" in str(e)
            taken = False
        assert taken == found, (pattern, name)


@pytest.mark.parametrize("marker", ["@REVOKED *", "@Revoked login1", "@revoked\t*"])
def test_fault_a_revoked_marker_ssh_passes_over_still_refuses_the_key(tmp_path, marker):
    """ssh-keygen -F finds no revocation in these lines (ssh reads the marker in lower case
    followed by a space), so ssh would accept the key; the engine refuses it, saying how to
    write the line."""
    kh = tmp_path / "kh"
    kh.write_text(line("login1") + line(marker))
    found = subprocess.run(["ssh-keygen", "-F", "login1", "-f", str(kh)], capture_output=True,
                           text=True, stdin=subprocess.DEVNULL).stdout
    assert "REVOKED" not in found
    with pytest.raises(HostKeyError, match=rf"is revoked \(@revoked in {kh} line 2, written "
                                           r".*ssh passes that line over, and would accept "
                                           r"the key; write `@revoked` in lower case"):
        HostKeyVerifier("a", str(kh), tofu=True).verify(
            HostSpec(alias="login1", hostname="login1", known_hosts_files=[],
                     global_known_hosts_files=[]), KEY)


def test_a_global_known_hosts_file_is_read_as_written_and_the_refusal_says_so(tmp_path):
    """ssh expands no `~`, token or variable in GlobalKnownHostsFile (`ssh -G` prints it as
    written): the engine looks for the same file, and the refusal says to write it out."""
    spec = spec_of(tmp_path, "Host hpc\n  UserKnownHostsFile none\n"
                             "  GlobalKnownHostsFile ~/center_hosts\n")
    assert spec.global_known_hosts_files == ssh_g(tmp_path)["globalknownhostsfile"] \
        == ["~/center_hosts"]
    with pytest.raises(HostKeyError, match=r"ssh reads GlobalKnownHostsFile ~/center_hosts as "
                                           r"written \(it expands no ~, %-token or \$\{VAR\} "
                                           r"there\): write the path out"):
        HostKeyVerifier("a", str(tmp_path / "own"), tofu=False).verify(spec, KEY)


# -- 5. through a real sshd -------------------------------------------------------------------

async def test_fault_a_login_checks_the_host_key_in_ssh_configs_files_only(
        sshd, tmp_path, other_home):
    """A sites file with no known_hosts of its own, an ssh_config naming the user's
    known_hosts file: the engine logs in to a real sshd whose key is listed there; with that
    file empty it refuses, though $HOME/.ssh/known_hosts lists the key (ssh reads it not),
    naming the files it read. Before, that $HOME file was read and the login went on."""
    from diamond_jupyter.config import load_config
    from diamond_jupyter.transports import make_transport

    (other_home / ".ssh" / "known_hosts").write_text(sshd.known_hosts_line())
    kh = tmp_path / "kh"
    kh.write_text(sshd.known_hosts_line())
    (tmp_path / "ssh_config").write_text(
        f"Host hpc\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
        f"  IdentityFile {sshd.client_key}\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {kh}\n  GlobalKnownHostsFile none\n")
    (tmp_path / "sites.yaml").write_text(
        f"sites:\n  - name: hpc\n    transport:\n      host: hpc\n      use_agent: false\n"
        f"      ssh_config: {tmp_path}/ssh_config\n      connect_timeout_s: 10\n")
    cfg = load_config(tmp_path / "sites.yaml")
    t = make_transport(cfg.sites[0].transport, "hpc", reconnect_attempts=1)
    try:
        assert (await t.run(["echo", "in"])).stdout == "in\n"
    finally:
        await t.close()
    kh.write_text("")
    t = make_transport(cfg.sites[0].transport, "hpc", reconnect_attempts=1)
    try:
        with pytest.raises(HostKeyError, match=rf"not in known_hosts \(files read: {kh}\)"):
            await t.run(["echo", "in"])
    finally:
        await t.close()
