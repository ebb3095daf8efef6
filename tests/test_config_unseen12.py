"""Sites files and ssh_config, twelfth sweep: ssh_config as OpenSSH reads it, each case
checked against what this machine's `ssh -G HOST -F FILE` prints (it resolves the config
without connecting, and runs no ProxyCommand; no config given to it here has `Match exec`,
which it would run). `IgnoreUnknown` inside a Host block (it holds from its line on, for the
hosts the block matches), Host lines of several patterns and negations, `Match
host/originalhost/user/localuser/final`, `Match exec` (refused, never run), `Include` with
globs, quotes and relative names, `%h %p %r %u %d %n %k` in IdentityFile and ControlPath,
ProxyJump chains with ports, users and ssh:// URIs, `HostKeyAlias`, `UserKnownHostsFile`
of several files, `StrictHostKeyChecking` (`accept-new`, `no`, `yes`: the engine checks
every host key whatever it says, and says so), host names in capitals, `Port ssh`.
The tests marked `fault` failed before this sweep's fixes."""

from __future__ import annotations

import getpass
import os
import socket
import subprocess
from pathlib import Path

import paramiko
import pytest
import test_config_unseen11 as unseen11
from test_config_unseen2 import loads

from diamond_jupyter.model import BadInput
from diamond_jupyter.transports import HostKeyError, make_transport
from diamond_jupyter.transports.ssh_auth import (
    HostKeyVerifier,
    HostSpec,
    kept_login,
    load_ssh_config,
    parse_jump,
    resolve_host,
)

HOME = os.path.expanduser("~")
ME = getpass.getuser()
no_home = unseen11.no_home

pytestmark = pytest.mark.skipif(
    subprocess.run(["ssh", "-V"], capture_output=True).returncode != 0,
    reason="OpenSSH's ssh is not installed")


def ssh_g(config: Path, host: str, user: str | None = None) -> dict[str, str] | str:
    """What `ssh -G` resolves for `host` from `config` alone (as `ssh -l USER`): each
    keyword's value, or ssh's first error line."""
    got = subprocess.run(["ssh", "-G", "-F", str(config), *(["-l", user] if user else []),
                          host], capture_output=True, text=True, timeout=30,
                         stdin=subprocess.DEVNULL)
    if got.returncode:
        return got.stderr.splitlines()[0]
    return dict(line.split(" ", 1) for line in got.stdout.splitlines() if " " in line)


def both(tmp_path: Path, text: str, host: str = "hpc", user: str | None = None,
         name: str = "ssh_config") -> tuple[dict[str, str] | str, HostSpec | str]:
    """`ssh -G`'s answer and the engine's (its HostSpec, or its refusal) for one config."""
    path = tmp_path / name
    path.write_text(text)
    try:
        spec: HostSpec | str = resolve_host(load_ssh_config(str(path)), host, user=user)
    except BadInput as e:
        spec = str(e)
    return ssh_g(path, host, user), spec


def same_host(tmp_path: Path, text: str, host: str = "hpc", user: str | None = None
              ) -> HostSpec:
    """Assert the engine dials what ssh dials (host name, port, login) and return its spec."""
    ssh, spec = both(tmp_path, text, host, user)
    assert isinstance(ssh, dict), ssh
    assert isinstance(spec, HostSpec), spec
    assert (spec.hostname, str(spec.port), spec.user) == (
        ssh["hostname"], ssh["port"], ssh["user"]), (ssh, spec)
    return spec


# -- 1. IgnoreUnknown inside a Host block ------------------------------------------------

IGNORE_CASES = [
    # (config, host): ssh accepts it, or refuses naming the line
    ("Host mac\n  IgnoreUnknown UseKeyring\nHost hpc\n  UseKeyring yes\n", "hpc"),  # fault
    ("Host mac\n  IgnoreUnknown UseKeyring\nHost hpc\n  UseKeyring yes\n", "mac"),
    ("Host hpc\n  IgnoreUnknown XAuth*\n  XAuthMagic 1\n", "hpc"),
    ("Host hpc\n  IgnoreUnknown XAuth*\n  XAuthMagic 1\n", "other"),  # fault
    ("Host laptop\n  IgnoreUnknown *\nHost hpc\n  Hostnme login\n", "hpc"),  # fault: typo hid
    ("Host a\n  IgnoreUnknown X1\nHost b\n  IgnoreUnknown Y1\n  Y1 1\n", "b"),  # fault: refused
    ("Host a\n  IgnoreUnknown X1\nHost b\n  IgnoreUnknown Y1\n  Y1 1\n", "a"),
    ("Host b\n  IgnoreUnknown X1\nHost *\n  IgnoreUnknown Y1\n  Y1 1\n", "c"),  # fault: refused
    ("Host b\n  IgnoreUnknown X1\nHost *\n  IgnoreUnknown Y1\n  Y1 1\n", "b"),
    ("IgnoreUnknown X1\nIgnoreUnknown Y1\nHost b\n  Y1 1\n", "b"),  # the first holds alone
    ("Host hpc\n  Y1 1\n  IgnoreUnknown Y1\n", "hpc"),  # below the line: too late
    ("IgnoreUnknown=UseKeychain,AddKeysToAgent2\nHost hpc\n  AddKeysToAgent2 yes\n", "hpc"),
    ("Match host hpc\n  IgnoreUnknown Y1\nHost *\n  Y1 1\n", "hpc"),
    ("Match host hpc\n  IgnoreUnknown Y1\nHost *\n  Y1 1\n", "gw"),  # fault
    ('IgnoreUnknown "UseKeyring,Y1"\nHost hpc\n  Y1 1\n', "hpc"),  # fault: quotes read
    ("IgnoreUnknown usekeyring\nHost hpc\n  UseKeyring 1\n", "hpc"),
    ("IgnoreUnknown *,!Y1\nHost hpc\n  Y1 1\n", "hpc"),  # fault: a negation names it not
    ("IgnoreUnknown UseKeyring Y1\nHost hpc\n  Y1 1\n", "hpc"),  # fault: two values
]


@pytest.mark.parametrize("text,host", IGNORE_CASES)
def test_ignore_unknown_holds_only_where_its_block_matches_as_in_ssh(tmp_path, text, host):
    """OpenSSH reads IgnoreUnknown in a block only for the hosts it matches, and only the
    first of them; a keyword it does not know is refused for any other host. The engine
    held any IgnoreUnknown for every host (a misspelt HostName was passed over for hpc) and
    only the file's first line (a config ssh reads was refused)."""
    ssh, spec = both(tmp_path, text, host)
    if isinstance(ssh, dict):
        assert isinstance(spec, HostSpec), spec
        return
    assert "Bad configuration option" in ssh or "extra arguments at end of line" in ssh
    line = ssh.split(" line ")[1].split(":")[0]
    assert isinstance(spec, str), (ssh, spec)
    assert spec.startswith(f"ssh_config {tmp_path}/ssh_config line {line}: "), spec
    if "extra arguments" in ssh:
        assert "IgnoreUnknown takes one value, and 'UseKeyring Y1' is 2; patterns are one " \
               "list with commas: IgnoreUnknown UseKeyring,Y1" in spec
        return
    assert f"is not an ssh_config keyword, and for Host {host} " in spec and \
        "name it in one IgnoreUnknown line at the top of the file" in spec or \
        "name it in an IgnoreUnknown line above it" in spec, spec  # none above: any host


def test_fault_ignore_unknown_in_an_included_file_holds_where_its_block_matches(tmp_path):
    (tmp_path / "mac.conf").write_text("Host mac\n  IgnoreUnknown UseKeyring\n")
    text = f"Include {tmp_path}/mac.conf\nHost hpc\n  UseKeyring yes\n"
    ssh, spec = both(tmp_path, text, "hpc")
    assert isinstance(ssh, str) and "line 3: Bad configuration option: usekeyring" in ssh
    assert isinstance(spec, str) and spec.startswith(
        f"ssh_config {tmp_path}/ssh_config line 3: 'UseKeyring' is not an ssh_config keyword,"
        " and for Host hpc the IgnoreUnknown lines naming it are in blocks that do not "
        "match it"), spec


# -- 2. Host lines of several patterns, negations ------------------------------------------

HOST_LINES = "Host *.hpc.org !login2.hpc.org !*.test.hpc.org\n  User ana\n  Port 2200\n" \
             "Host login? login?.* gw\n  ProxyJump none\n  IdentityFile ~/.ssh/id_login\n"


@pytest.mark.parametrize("host", ["login1.hpc.org", "login2.hpc.org", "a.test.hpc.org",
                                  "login3", "gw", "hpc.org", "LOGIN1.hpc.org", "login12"])
def test_host_lines_of_several_patterns_and_negations_as_ssh_matches_them(tmp_path, host):
    spec = same_host(tmp_path, HOST_LINES, host)
    ssh = ssh_g(tmp_path / "ssh_config", host)
    assert isinstance(ssh, dict)
    assert [f"{HOME}/.ssh/id_login"] == spec.identity_files or \
        "~/.ssh/id_login" not in ssh["identityfile"]


@pytest.mark.parametrize("text,host", [
    ("Host !gw\n  Port 2201\n", "hpc"),  # a negation alone matches nothing
    ("Host=hpc other\n  Port=2202\n", "hpc"),
    ('Host "hpc" other\n  Port 2203\n', "hpc"),
    ("Host hpc,other\n  Port 2204\n", "hpc"),  # a comma is no separator on a Host line
    ("Host *\n  Port 2205\nHost hpc\n  Port 2206\n", "hpc"),  # the first obtained wins
    ("Host h?c\n  Port 2207\n", "hpc"),
    ("Host HPC\n  Port 2208\n", "hpc"),  # patterns are matched in their case
])
def test_more_host_line_forms(tmp_path, text, host):
    same_host(tmp_path, text, host)


# -- 3. host names in capitals: ssh dials and names them in lower case ----------------------

@pytest.mark.parametrize("text,host", [
    ("Host hpc\n  HostName Login.HPC.Example.org\n", "hpc"),
    ("Host *\n  User ana\n", "Login.Example.ORG"),
    ("Host hpc\n  HostName 2001:DB8::5\n", "hpc"),  # an address is dialled as written
    ("Host hpc\n  HostName 10.0.0.5\n", "hpc"),
])
def test_fault_a_host_name_is_dialled_in_lower_case_as_ssh_does(tmp_path, text, host):
    same_host(tmp_path, text, host)


def test_fault_h_in_an_identity_file_is_the_lower_case_name(tmp_path):
    # the engine looked for ~/.ssh/Login.HPC.key, a file ssh never reads
    ssh, spec = both(tmp_path, "Host hpc\n  HostName Login.HPC\n  ControlMaster auto\n"
                               "  ControlPath /k/%h.key\n  IdentityFile /k/%h.key\n")
    assert isinstance(ssh, dict) and isinstance(spec, HostSpec)
    assert spec.identity_files == [ssh["controlpath"]] == ["/k/login.hpc.key"]


def test_fault_host_key_alias_is_read_in_lower_case(tmp_path):
    ssh, spec = both(tmp_path, "Host hpc\n  HostKeyAlias HPC-Cluster\n  ControlMaster auto\n"
                               "  ControlPath /k/%k\n  IdentityFile /k/%k\n")
    assert isinstance(ssh, dict) and isinstance(spec, HostSpec)
    assert spec.host_key_alias == ssh["hostkeyalias"] == "hpc-cluster"
    assert spec.identity_files == [ssh["controlpath"]] == ["/k/hpc-cluster"]


def test_fault_a_host_trusted_on_first_use_is_added_under_its_lower_case_name(tmp_path):
    (tmp_path / "ssh_config").write_text("Host hpc\n  HostName Login.HPC.org\n")
    spec = resolve_host(load_ssh_config(str(tmp_path / "ssh_config")), "hpc")
    key = paramiko.ECDSAKey.generate()
    HostKeyVerifier("a", str(tmp_path / "kh"), tofu=True).verify(spec, key)
    assert (tmp_path / "kh").read_text().split()[0] == "login.hpc.org"
    HostKeyVerifier("a", str(tmp_path / "kh"), tofu=False).verify(spec, key)


# -- 4. Match host, originalhost, user, localuser, final -----------------------------------

@pytest.mark.parametrize("text,host,user", [
    ("Host hpc\n  HostName login.hpc.org\nMatch host *.hpc.org\n  User ana\n", "hpc", None),
    ("Host hpc\n  HostName login.hpc.org\nMatch originalhost hpc\n  Port 2222\n", "hpc", None),
    ("Match host hpc\n  User bob\nHost hpc\n  HostName login.hpc.org\n", "hpc", None),
    ("Match originalhost login.hpc.org\n  User bob\nHost hpc\n  HostName login.hpc.org\n",
     "hpc", None),
    ("Match host login*,!login3*\n  User bob\n", "login3", None),
    ("Match host login*,!login3*\n  User bob\n", "login1", None),
    ("Match !host login*\n  User bob\n", "gw", None),
    ("Match host hpc user ana\n  Port 2201\n", "hpc", "ana"),
    ("Match host hpc user ana\n  Port 2201\n", "hpc", "bob"),
    (f"Match localuser {ME}\n  Port 2203\n", "hpc", None),
    ("Match localuser nobody-here\n  Port 2203\n", "hpc", None),
    ("Match final host login.hpc\n  Port 2204\nHost hpc\n  HostName login.hpc\n", "hpc", None),
    ("Match all\n  Port 2205\n", "hpc", None),
    ('Match host "a,hpc"\n  Port 2206\n', "hpc", None),
    ("Host hpc\n  HostName login.hpc\nMatch host login.hpc originalhost hpc\n  User ana\n",
     "hpc", None),
])
def test_match_criteria_as_ssh_evaluates_them(tmp_path, text, host, user):
    same_host(tmp_path, text, host, user)


@pytest.mark.parametrize("text,port", [
    ("Match host login.hpc\n  Port 2222\nHost hpc\n  HostName login.hpc\n", "22"),
    ("Match user ana\n  Port 2204\nHost hpc\n  User ana\n", "22"),
    ("Match host login.hpc\n  Port 2222\nHost hpc\n  HostName login.hpc\nMatch final\n"
     "  User x\n", "2222"),  # a `Match final` line: ssh reads the file a second time
    ("Match host login.hpc\n  Port 2222\nHost hpc\n  HostName login.hpc\nMatch !final\n"
     "  User x\n", "2222"),
    ("Match canonical host login.hpc\n  Port 2222\nHost hpc\n  HostName login.hpc\n", "22"),
])
def test_fault_a_match_above_the_line_it_matches_on_applies_only_where_ssh_reads_twice(
        tmp_path, text, port):
    """ssh reads the file once (twice when a `Match final` line asks): a Match on the host
    name or login that a later line sets does not apply. paramiko read every file twice,
    so the engine dialled port 2222 where ssh dials 22."""
    assert str(same_host(tmp_path, text).port) == port


@pytest.mark.parametrize("line", [
    "Match exec \"touch {mark}\"", "Match host hpc exec \"touch {mark}\"",
    "match EXEC \"touch {mark}\"", "Match !exec \"touch {mark}\"",
    "Match originalhost hpc Exec=\"touch {mark}\""])
def test_match_exec_is_refused_naming_its_line_and_never_run(tmp_path, line):
    mark = tmp_path / "ran"
    (tmp_path / "ssh_config").write_text("Host gw\n  User ana\n"
                                         + line.format(mark=mark) + "\n  Port 2200\n")
    with pytest.raises(BadInput, match=rf"ssh_config {tmp_path}/ssh_config line 3: 'Match "
                                       "exec' runs a command whenever a host is looked up, "
                                       "and the engine runs no command from ssh_config"):
        load_ssh_config(str(tmp_path / "ssh_config"))
    assert not mark.exists()


def test_match_exec_in_an_included_file_names_that_file(tmp_path):
    mark = tmp_path / "ran"
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "50-vpn.conf").write_text(
        f"# on the VPN\nMatch host *.hpc.org exec \"ping -c1 vpn || touch {mark}\"\n"
        "  ProxyJump gw\n")
    (tmp_path / "ssh_config").write_text(f"Include {tmp_path}/conf.d/*.conf\n")
    with pytest.raises(BadInput, match=rf"ssh_config {tmp_path}/conf.d/50-vpn.conf line 2: "
                                       "'Match exec'"):
        load_ssh_config(str(tmp_path / "ssh_config"))
    assert not mark.exists()


# -- 5. Include: globs, several names, quotes, relative names -------------------------------

@pytest.mark.parametrize("files,main,port", [
    ({"conf.d/20-b.conf": "Host hpc\n  Port 2202\n",
      "conf.d/10-a.conf": "Host hpc\n  Port 2201\n"}, "Include @D/conf.d/*.conf\n", "2201"),
    ({"x/one": "Host hpc\n  Port 2211\n", "y/two": "Host hpc\n  Port 2212\n"},
     "Include @D/y/two @D/x/one\n", "2212"),  # in the order written, not sorted
    ({"a/1/c": "Host hpc\n  Port 2221\n", "a/2/c": "Host hpc\n  Port 2222\n"},
     "Include @D/a/*/c\n", "2221"),
    ({"d/x1": "Host hpc\n  Port 2231\n", "d/x2": "Host hpc\n  Port 2232\n"},
     "Include @D/d/x[2]\n", "2232"),
    ({"my dir/x": "Host hpc\n  Port 2241\n"}, 'Include "@D/my dir/x"\n', "2241"),
    ({}, "Include @D/none/*.conf\nHost hpc\n  Port 2251\n", "2251"),  # matching nothing
    ({"opts": "User inc\nPort 2261\n"}, "Host hpc\n  Include @D/opts\nHost o\n  Port 1\n",
     "2261"),  # options only, inside a Host block: for that block
    ({"opts": "Port 2271\n"}, "Match host hpc\n  Include=@D/opts\n", "2271"),
    ({"c.d/a": "Host hpc\n  HostName a.example.org\n"}, "Include @D/c.d/*\nPort 2281\n",
     "2281"),  # the including file's next lines are for every host again
])
def test_include_as_ssh_follows_it(tmp_path, files, main, port):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    spec = same_host(tmp_path, main.replace("@D", str(tmp_path)))
    assert str(spec.port) == port


def test_an_include_of_host_blocks_inside_a_host_block_is_refused_saying_where(tmp_path):
    (tmp_path / "hb").write_text("Host hpc\n  Port 2700\n")
    ssh, spec = both(tmp_path, f"Host hpc\n  Include {tmp_path}/hb\n")
    assert isinstance(ssh, dict) and ssh["port"] == "2700"  # ssh follows it; not here
    assert isinstance(spec, str) and spec.startswith(
        f"ssh_config {tmp_path}/ssh_config line 2: an Include inside a Host or Match block "
        f"names {tmp_path}/hb, which has Host or Match blocks of its own"), spec
    assert "move the Include to the top of the file" in spec


def test_relative_includes_are_under_dot_ssh_whoever_includes_them(tmp_path, monkeypatch):
    """OpenSSH reads a relative Include under ~/.ssh, also from a file an Include named
    elsewhere (not beside that file). Checked on the engine alone: `ssh -G` takes ~ from
    the password database, not from HOME."""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh" / "config.d").mkdir(parents=True)
    (tmp_path / ".ssh" / "config.d" / "hpc.conf").write_text("Include hosts/*\n")
    (tmp_path / ".ssh" / "hosts").mkdir()
    (tmp_path / ".ssh" / "hosts" / "hpc").write_text("Host hpc\n  Port 2301\n")
    (tmp_path / ".ssh" / "config.d" / "hosts").mkdir()  # beside the includer: not read
    (tmp_path / ".ssh" / "config.d" / "hosts" / "hpc").write_text("Host hpc\n  Port 9\n")
    (tmp_path / "center").mkdir()
    (tmp_path / "center" / "cfg").write_text("Include config.d/*.conf ~/.ssh/extra\n")
    (tmp_path / ".ssh" / "extra").write_text("Host hpc\n  User ana\n")
    spec = resolve_host(load_ssh_config(str(tmp_path / "center" / "cfg")), "hpc")
    assert (spec.port, spec.user) == (2301, "ana")


# -- 6. tokens in IdentityFile and ControlPath ---------------------------------------------

@pytest.mark.parametrize("template", [
    "/k/%h-%p-%r", "/k/%u@%d/%n", "/k/%%h-%h", "/k/%C", "/k/%L/%l-%i", "~/.ssh/cm-%r@%h:%p"])
def test_tokens_of_identity_file_are_what_ssh_puts_in_control_path(tmp_path, template):
    """`ssh -G` prints ControlPath with its tokens expanded (not IdentityFile): the same
    template in both must come out the same."""
    ssh, spec = both(tmp_path, "Host hpc\n  HostName Login.Example.org\n  User ana\n"
                               f"  Port 2222\n  ControlMaster auto\n  ControlPath {template}\n"
                               f"  IdentityFile {template}\n")
    assert isinstance(ssh, dict) and isinstance(spec, HostSpec), (ssh, spec)
    assert spec.identity_files == [ssh["controlpath"]]


@pytest.mark.parametrize("persist,idle", [("10m", 600.0), ("yes", None), ("0", None)])
def test_a_control_path_of_tokens_is_a_kept_login_as_written(tmp_path, persist, idle):
    (tmp_path / "ssh_config").write_text(
        "Host hpc\n  ControlMaster auto\n  ControlPath ~/.ssh/cm-%r@%h:%p\n"
        f"  ControlPersist {persist}\n")
    cfg = load_ssh_config(str(tmp_path / "ssh_config"))
    spec = resolve_host(cfg, "hpc")
    assert spec.control_path == "~/.ssh/cm-%r@%h:%p"
    kept = kept_login(cfg, spec)
    assert kept is not None and kept.idle_s == idle
    assert kept.origin == f"ssh_config {tmp_path}/ssh_config line 4: ControlPersist {persist}"


# -- 7. ProxyJump chains --------------------------------------------------------------------

@pytest.mark.parametrize("text,chain", [
    ("Host hpc\n  ProxyJump ana@gw1.example.org:2222,bob@gw2:2200\n",
     ["ana@gw1.example.org:2222", "bob@gw2:2200"]),
    ("Host hpc\n  ProxyJump gw\nHost gw\n  ProxyJump ana@bastion:2022\n"
     "  HostName gw.example.org\n  User gwuser\n  Port 2200\n",
     ["ana@bastion:2022", "gwuser@gw.example.org:2200"]),
    ("Host hpc\n  ProxyJump ana@gw\nHost gw\n  User bob\n", ["ana@gw:22"]),  # given wins
    ("Host hpc\n  ProxyJump gw:2201\nHost gw\n  Port 2200\n", [f"{ME}@gw:2201"]),
    ("Host hpc\n  ProxyJump [2001:db8::1]:2222\n", [f"{ME}@2001:db8::1:2222"]),
    ("Host hpc\n  ProxyJump ssh://ana@gw:2222\n", ["ana@gw:2222"]),
    ("Host hpc\n  ProxyJump ssh://ana@gw:2222/\n", ["ana@gw:2222"]),  # fault: refused
    ("Host hpc\n  ProxyJump GW.Example.org\n", [f"{ME}@gw.example.org:22"]),  # fault: case
    ("Host hpc\n  ProxyJump none\nHost *\n  ProxyJump gw\n", []),
    ("Host hpc\n  ProxyCommand none\n  ProxyJump gw\n", []),  # the first given wins
])
def test_proxy_jump_chains_with_ports_and_users(tmp_path, text, chain):
    ssh, spec = both(tmp_path, text)
    assert isinstance(ssh, dict) and isinstance(spec, HostSpec), (ssh, spec)
    assert (spec.proxy_jump is None) == ("proxyjump" not in ssh)
    hops = parse_jump(load_ssh_config(str(tmp_path / "ssh_config")), spec.proxy_jump)
    assert [h.label for h in hops] == chain


def test_fault_a_jump_host_its_own_host_pattern_matches_says_how_to_leave_it_out(tmp_path):
    # ssh: `jumphost loop via gw.hpc.org`; the engine named the loop but not the way out
    (tmp_path / "ssh_config").write_text("Host *.hpc.org\n  ProxyJump gw.hpc.org\n")
    cfg = load_ssh_config(str(tmp_path / "ssh_config"))
    with pytest.raises(BadInput, match=rf"make a loop \({ME}@gw.hpc.org:22 -> "
                                       rf"{ME}@gw.hpc.org:22\); a Host pattern that matches "
                                       "the jump host too gives it its own ProxyJump .*: leave "
                                       "it out with !gw.hpc.org on that Host line"):
        parse_jump(cfg, resolve_host(cfg, "login1.hpc.org").proxy_jump)


def test_a_jump_chain_looping_through_ssh_config_is_refused_naming_the_loop(tmp_path):
    (tmp_path / "ssh_config").write_text("Host hpc\n  ProxyJump gw1\nHost gw1\n  ProxyJump gw2\n"
                                         "Host gw2\n  ProxyJump gw1\n")
    cfg = load_ssh_config(str(tmp_path / "ssh_config"))
    with pytest.raises(BadInput, match="proxy_jump: the jump hosts of ssh_config make a loop"):
        parse_jump(cfg, resolve_host(cfg, "hpc").proxy_jump)


# -- 8. HostKeyAlias, UserKnownHostsFile of several files ---------------------------------

def _line(name: str, key: paramiko.PKey) -> str:
    return f"{name} {key.get_name()} {key.get_base64()}\n"


def test_host_key_alias_is_the_name_looked_up_without_a_port(tmp_path):
    key = paramiko.ECDSAKey.generate()
    (tmp_path / "kh").write_text(_line("hpc-cluster", key))
    ssh, spec = both(tmp_path, f"Host hpc\n  HostName 10.0.0.5\n  Port 2222\n"
                               f"  HostKeyAlias HPC-Cluster\n  UserKnownHostsFile {tmp_path}/kh\n")
    assert isinstance(ssh, dict) and isinstance(spec, HostSpec)
    assert spec.known_hosts_name == ssh["hostkeyalias"] == "hpc-cluster"
    HostKeyVerifier("a", str(tmp_path / "own"), tofu=False).verify(spec, key)
    with pytest.raises(HostKeyError, match="HOST KEY FOR hpc-cluster HAS CHANGED"):
        HostKeyVerifier("a", str(tmp_path / "own"), tofu=True).verify(
            spec, paramiko.ECDSAKey.generate())


@pytest.mark.parametrize("written,files", [
    ('~/.ssh/known_hosts /etc/center/kh "/tmp/with space/kh"',
     [f"{HOME}/.ssh/known_hosts", "/etc/center/kh", "/tmp/with space/kh"]),  # fault
    ('"~/Library/Application Support/kh"', [f"{HOME}/Library/Application Support/kh"]),
    ("~/.ssh/kh_%h %d/kh2", [f"{HOME}/.ssh/kh_login", f"{HOME}/kh2"]),
    ("none", []),
])
def test_user_known_hosts_file_of_several_files_as_ssh_splits_them(tmp_path, written, files):
    ssh, spec = both(tmp_path, f"Host hpc\n  HostName login\n  UserKnownHostsFile {written}\n")
    assert isinstance(ssh, dict) and isinstance(spec, HostSpec), (ssh, spec)
    assert spec.known_hosts_files == files
    assert ssh["userknownhostsfile"] == (" ".join(files) or "none")


@pytest.mark.parametrize("text,host", [
    ("Host hpc\n  HostKeyAlias KA\n  UserKnownHostsFile ~/.ssh/kh_%k %d/%u/%h\n", "hpc"),
    ("Host *\n  UserKnownHostsFile ~/.ssh/kh_%k_%n_%h\n", "HPC"),
    ("Host hpc\n  UserKnownHostsFile ~/.ssh/kh_%p_%r\n  Port 2222\n  User ana\n", "hpc"),
    ("Host hpc\n  UserKnownHostsFile ~/.ssh/kh_%C\n", "hpc"),
])
def test_tokens_of_user_known_hosts_file_as_ssh_expands_them(tmp_path, text, host):
    ssh, spec = both(tmp_path, text, host)
    assert isinstance(ssh, dict) and isinstance(spec, HostSpec), (ssh, spec)
    assert " ".join(spec.known_hosts_files) == ssh["userknownhostsfile"]


def test_fault_a_quoted_global_known_hosts_file_is_one_file(tmp_path):
    ssh, spec = both(tmp_path, 'Host hpc\n  GlobalKnownHostsFile "/etc/center kh" /etc/kh2\n')
    assert isinstance(ssh, dict) and isinstance(spec, HostSpec), (ssh, spec)
    assert spec.global_known_hosts_files == ["/etc/center kh", "/etc/kh2"]
    assert ssh["globalknownhostsfile"] == "/etc/center kh /etc/kh2"


def test_user_known_hosts_file_given_twice_the_first_line_holds(tmp_path):
    ssh, spec = both(tmp_path, "Host hpc\n  UserKnownHostsFile ~/.ssh/kh1\n"
                               "Host *\n  UserKnownHostsFile ~/.ssh/kh2 ~/.ssh/kh3\n")
    assert isinstance(ssh, dict) and isinstance(spec, HostSpec)
    assert spec.known_hosts_files == [ssh["userknownhostsfile"]] == [f"{HOME}/.ssh/kh1"]


def test_fault_a_host_key_in_a_known_hosts_path_with_a_blank_is_found(tmp_path):
    key = paramiko.Ed25519Key.from_private_key_file(str(_ed25519(tmp_path)))
    (tmp_path / "with space").mkdir()
    (tmp_path / "with space" / "kh").write_text(_line("login.hpc.org", key))
    (tmp_path / "ssh_config").write_text(
        f'Host hpc\n  HostName login.hpc.org\n  UserKnownHostsFile "{tmp_path}/with space/kh"\n')
    spec = resolve_host(load_ssh_config(str(tmp_path / "ssh_config")), "hpc")
    HostKeyVerifier("a", str(tmp_path / "own"), tofu=False).verify(spec, key)
    assert not (tmp_path / "own").exists()


def test_an_unclosed_quote_in_user_known_hosts_file_names_the_line(tmp_path):
    (tmp_path / "ssh_config").write_text('Host hpc\n  User ana\n  UserKnownHostsFile "~/kh a\n')
    with pytest.raises(BadInput, match=rf"ssh_config {tmp_path}/ssh_config line 3: "
                                       "UserKnownHostsFile .*: an unclosed quote"):
        resolve_host(load_ssh_config(str(tmp_path / "ssh_config")), "hpc")


def _ed25519(tmp_path: Path) -> Path:
    path = tmp_path / "hostkey"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
                   check=True)
    return path


# -- 9. StrictHostKeyChecking: host keys are always checked -----------------------------------

def _spec(tmp_path: Path, strict: str) -> HostSpec:
    (tmp_path / "ssh_config").write_text(f"Host hpc\n  HostName login.hpc.org\n"
                                         f"  StrictHostKeyChecking {strict}\n")
    return resolve_host(load_ssh_config(str(tmp_path / "ssh_config")), "hpc")


@pytest.mark.parametrize("strict", ["accept-new", "no", "off"])
def test_fault_an_unknown_host_is_refused_whatever_ssh_config_says_and_says_so(tmp_path,
                                                                               strict):
    (tmp_path / "own").write_text("")
    with pytest.raises(HostKeyError) as e:
        HostKeyVerifier("a", str(tmp_path / "own"), tofu=False).verify(
            _spec(tmp_path, strict), paramiko.ECDSAKey.generate())
    msg = str(e.value)
    assert "host login.hpc.org is not in known_hosts" in msg
    assert (f"; ssh_config {tmp_path}/ssh_config line 3 sets StrictHostKeyChecking {strict}, "
            "which the engine does not follow: it checks every host key against known_hosts "
            "(trust_on_first_use adds a first-seen key, as accept-new does)") in msg, msg
    assert (tmp_path / "own").read_text() == ""


def test_fault_a_changed_key_is_refused_though_ssh_config_says_no(tmp_path):
    old = paramiko.ECDSAKey.generate()
    (tmp_path / "own").write_text(_line("login.hpc.org", old))
    with pytest.raises(HostKeyError) as e:
        HostKeyVerifier("a", str(tmp_path / "own"), tofu=True).verify(
            _spec(tmp_path, "no"), paramiko.ECDSAKey.generate())
    assert "HOST KEY FOR login.hpc.org HAS CHANGED" in str(e.value)
    assert "and refuses a changed one whatever ssh_config says" in str(e.value)
    assert (tmp_path / "own").read_text() == _line("login.hpc.org", old)


@pytest.mark.parametrize("strict", ["yes", "Yes", "true"])
def test_fault_strict_host_key_checking_yes_keeps_trust_on_first_use_from_adding(tmp_path,
                                                                                   strict):
    """ssh never adds a key under `yes`; trust_on_first_use added it all the same."""
    with pytest.raises(HostKeyError) as e:
        HostKeyVerifier("a", str(tmp_path / "own"), tofu=True).verify(
            _spec(tmp_path, strict), paramiko.ECDSAKey.generate())
    assert (f"and ssh_config {tmp_path}/ssh_config line 3 sets StrictHostKeyChecking {strict} "
            "for it, so trust_on_first_use does not add it") in str(e.value)
    assert not (tmp_path / "own").exists()


def test_fault_a_known_hosts_command_is_never_run_and_the_refusal_says_so(tmp_path):
    """A center's KnownHostsCommand (host keys from its own service): ssh runs it, the
    engine does not, and said only "not in known_hosts"."""
    mark = tmp_path / "ran"
    ssh, spec = both(tmp_path, "Host hpc\n  HostName login.hpc.org\n"
                               f"  KnownHostsCommand /usr/bin/touch {mark}\n")
    assert isinstance(ssh, dict) and ssh["knownhostscommand"] == f"/usr/bin/touch {mark}"
    assert isinstance(spec, HostSpec)
    with pytest.raises(HostKeyError) as e:
        HostKeyVerifier("a", str(tmp_path / "own"), tofu=False).verify(
            spec, paramiko.ECDSAKey.generate())
    assert (f"; the KnownHostsCommand of ssh_config {tmp_path}/ssh_config line 3 is not run "
            "(the engine runs no command from ssh_config): put the keys it gives in "
            "known_hosts") in str(e.value)
    assert not mark.exists()


@pytest.mark.parametrize("strict", ["accept-new", "ask", "no"])
def test_trust_on_first_use_adds_a_first_seen_key_under_a_lenient_setting(tmp_path, strict):
    key = paramiko.ECDSAKey.generate()
    HostKeyVerifier("a", str(tmp_path / "own"), tofu=True).verify(_spec(tmp_path, strict), key)
    assert (tmp_path / "own").read_text() == _line("login.hpc.org", key)


async def test_a_login_with_accept_new_and_no_known_hosts_entry_is_refused(
        sshd, tmp_path, no_home):
    key = unseen11._own_key(tmp_path, sshd.client_key)
    with pytest.raises(HostKeyError) as e:
        await unseen11._login(
            tmp_path, f"host: hpc\nkey_file: {key}\nuse_agent: false",
            f"Host hpc\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
            "  StrictHostKeyChecking accept-new\n  UserKnownHostsFile /dev/null\n", "")
    assert f"host [127.0.0.1]:{sshd.port} is not in known_hosts" in str(e.value)
    assert "sets StrictHostKeyChecking accept-new, which the engine does not follow" in \
        str(e.value)
    assert (tmp_path / "known_hosts").read_text() == ""


async def test_a_login_through_host_key_alias_and_a_second_known_hosts_file(
        sshd, tmp_path, no_home):
    pub = sshd.known_hosts_line().split()[1:]
    (tmp_path / "center kh").write_text(f"login-alias {' '.join(pub)}\n")
    key = unseen11._own_key(tmp_path, sshd.client_key)
    got = await unseen11._login(
        tmp_path, f"host: HPC\nkey_file: {key}\nuse_agent: false",
        f"Host HPC\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
        f"  HostKeyAlias Login-Alias\n  UserKnownHostsFile ~/.ssh/none \"{tmp_path}/center kh\"\n"
        "  StrictHostKeyChecking yes\n", "")
    assert got == "in\n"


# -- 10. Port, and sites files naming such hosts -------------------------------------------

@pytest.mark.parametrize("port", ["ssh", "2222"])
def test_fault_port_takes_a_service_name_as_ssh_does(tmp_path, port):
    same_host(tmp_path, f"Host hpc\n  Port {port}\n")


@pytest.mark.parametrize("port", ["nosuchservice", "0x10", "65536"])
def test_a_port_ssh_refuses_is_refused_naming_the_line(tmp_path, port):
    ssh, spec = both(tmp_path, f"Host hpc\n  User ana\n  Port {port}\n")
    assert isinstance(ssh, str) and "line 3: Bad port" in ssh
    assert isinstance(spec, str) and spec.startswith(
        f"ssh_config {tmp_path}/ssh_config line 3: Port '{port}' of Host hpc is not a port: "
        "a number from 1 to 65535 (or a service name of /etc/services, such as ssh)"), spec


def _sites(d: Path, transport: str) -> str:
    (d / "ssh_config").chmod(0o600)
    return ("sites:\n  - name: hpc\n    transport:\n"
            f"      ssh_config: {d}/ssh_config\n      known_hosts: {d}/known_hosts\n"
            "      use_agent: false\n"
            + "".join(f"      {ln}\n" for ln in transport.strip().split("\n")))


@pytest.mark.parametrize("transport,ssh_config,want", [
    ("host: Login.HPC.example.org", "", ("login.hpc.example.org", 22, None)),
    ("host: hpc\nproxy_jump: ssh://ana@gw.example.org:2222/", "Host hpc\n  Port 2200\n",
     ("hpc", 2200, "ana@gw.example.org:2222")),  # fault: the URI's slash was refused
    ("host: hpc", "Host hpc\n  HostName Login.HPC\n  Port ssh\n  ProxyJump GW\n",
     ("login.hpc", 22, f"{ME}@gw:22")),
    ("host: hpc\nuser: bob", "Match host hpc user bob\n  Port 2201\nHost hpc\n  User ana\n",
     ("hpc", 2201, None)),
    ("host: login1.hpc.org", "Host *.hpc.org !gw.hpc.org\n  ProxyJump gw.hpc.org\n",
     ("login1.hpc.org", 22, f"{ME}@gw.hpc.org:22")),
])
async def test_a_sites_file_on_such_an_ssh_config_dials_what_ssh_dials(tmp_path, transport,
                                                                      ssh_config, want):
    (tmp_path / "ssh_config").write_text(ssh_config)
    (tmp_path / "known_hosts").write_text("")
    cfg = loads(tmp_path, _sites(tmp_path, transport))
    t = make_transport(cfg.sites[0].transport, "hpc")
    try:
        got = t.describe()
    finally:
        await t.close()
    assert (got["hostname"], got["port"], got["proxy_jump"]) == want


def test_a_sites_file_on_an_ssh_config_ssh_refuses_for_its_host_exits_2(tmp_path, capsys):
    from diamond_jupyter.cli import main

    (tmp_path / "ssh_config").write_text("Host laptop\n  IgnoreUnknown *\nHost hpc\n"
                                         "  Hostnme login.hpc.org\n")
    (tmp_path / "known_hosts").write_text("")
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH -t 5\nhostname\n")
    path = tmp_path / "sites.yaml"
    path.write_text(_sites(tmp_path, "host: hpc"))
    code = main(["place", "--config", str(path), "--explain", str(tmp_path / "job.sh")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert f"ssh_config {tmp_path}/ssh_config line 4: 'Hostnme' is not an ssh_config " \
           "keyword, and for Host hpc" in err


def test_the_local_hosts_name_tokens_are_this_machines(tmp_path):
    ssh, spec = both(tmp_path, "Host hpc\n  ControlMaster auto\n  ControlPath /k/%l\n"
                               "  IdentityFile /k/%l\n")
    assert isinstance(ssh, dict) and isinstance(spec, HostSpec)
    assert spec.identity_files == [ssh["controlpath"]] == [f"/k/{socket.gethostname()}"]
