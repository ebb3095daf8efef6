"""Sites files and ssh_config, tenth sweep, as a user or a center writes them and sweeps 1-9
did not: ssh_config's `%` tokens (`%h %p %r %u %%`) and `${VAR}` where OpenSSH reads them,
a Port out of range, `ProxyCommand none` and `ProxyJump` in the order ssh takes them,
`IdentitiesOnly yes` with an agent holding other keys, errors inside an Include's file; a
public or PuTTY key given as `key_file`, `%25` before an IPv6 zone, a file saved as UTF-16,
a date as a site name, a name in look-alike letters; known_hosts lines with patterns,
negations, other letter cases and only a `@cert-authority` line. Each answer was worked out
by hand from ssh_config(5), sshd(8)'s known_hosts format and the loader's contract: what
the file builds, or its one-line refusal naming the file, the line and what is accepted.
The tests marked `fault` failed before this sweep's fixes."""

from __future__ import annotations

import getpass
import subprocess
from pathlib import Path

import paramiko
import pytest
import sweep_helpers
from sweep_helpers import HOME, looked_up, ssh_site
from test_config_unseen2 import loads, refused, write
from test_config_unseen7 import fake_agent

from diamond_jupyter.cli import main
from diamond_jupyter.config import load_config
from diamond_jupyter.model import BadInput
from diamond_jupyter.transports.ssh_auth import (
    JUMP_TOKEN_SINCE,
    AuthError,
    HostKeyError,
    HostKeyVerifier,
    HostSpec,
    _keys,
    authenticate,
    load_ssh_config,
    openssh_version,
    resolve_host,
    ssh_home,
)

d = sweep_helpers.key_dir


# -- 1. ssh_config's tokens ---------------------------------------------------------------------

def test_fault_tokens_of_hostname_and_identity_file_as_openssh_expands_them(tmp_path):
    # paramiko left %p and %% of an IdentityFile as text (the key was never found)
    spec = looked_up(tmp_path, "Host hpc\n  HostName %h.example.org\n  User ana\n  Port 2222\n"
                               "  IdentityFile ~/.ssh/%r@%h-%p_%%\n")
    assert (spec.hostname, spec.port, spec.user) == ("hpc.example.org", 2222, "ana")
    assert spec.identity_files == [f"{HOME}/.ssh/ana@hpc.example.org-2222_%"]


def test_fault_a_double_percent_is_one_percent_and_a_tilde_inside_a_path_is_kept(tmp_path):
    # paramiko read `%%h` as `%` and the host, and put the home for every `~` in a value
    spec = looked_up(tmp_path, "Host hpc\n  IdentityFile /keys/100%%h/a~b\n")
    assert spec.identity_files == ["/keys/100%h/a~b"]


def test_fault_the_sites_files_port_and_user_are_the_ones_tokens_read(tmp_path):
    # as on ssh's command line, the site's own port and login win, and %p %r are those
    spec = looked_up(tmp_path, "Host hpc\n  User ana\n  Port 22\n  IdentityFile /k/%r-%p\n",
                     port=2200, user="bob")
    assert spec.identity_files == ["/k/bob-2200"]
    spec = looked_up(tmp_path, "Host hpc\n  IdentityFile /k/%u-%n-%d\n")
    assert spec.identity_files == [f"/k/{getpass.getuser()}-hpc-{HOME}"]


# %j is a token from OpenSSH 9.4 on (the installed ssh's reading is the engine's)
KNOWS_JUMP = (openssh_version() or (99, 0)) >= JUMP_TOKEN_SINCE


@pytest.mark.parametrize("line,token,takes", [
    ("HostName %u.example.org", "%u", "it takes %%, %h;"),
    ("HostName login-%z", "%z", "it takes %%, %h;"),
    ("IdentityFile ~/.ssh/%q", "%q", "it takes %%, %C, %d, %h, %i, "
                                     f"{'%j, ' if KNOWS_JUMP else ''}%k, %L, %l, %n, %p, %r, %u;"),
    ("ProxyJump gw-%d", "%d", "it takes %%, %h, %n, %p, %r;"),
    ("IdentityFile /keys/50%", "a % at the end", "%% is a %")])
def test_fault_a_token_the_keyword_does_not_take_is_refused_naming_the_line(tmp_path, line,
                                                                           token, takes):
    # paramiko dialled `%u.example.org` as written (a name no resolver knows); ssh refuses
    with pytest.raises(BadInput) as e:
        looked_up(tmp_path, f"Host hpc\n  User ana\n  {line}\n")
    msg = str(e.value)
    assert msg.startswith(f"ssh_config {tmp_path}/ssh_config line 3: {line.split()[0]} ")
    assert f"{token} is not a token" in msg and takes in msg, msg


def test_fault_an_ipv6_zone_in_hostname_says_to_double_the_percent(tmp_path):
    with pytest.raises(BadInput, match=r"line 2: HostName 'fe80::1%eth0': %e is not a token .*"
                                       r"zone is written fe80::1%%eth0 there"):
        looked_up(tmp_path, "Host hpc\n  HostName fe80::1%eth0\n")
    assert looked_up(tmp_path, "Host hpc\n  HostName fe80::1%%eth0\n").hostname == \
        "fe80::1%eth0"


# -- 2. ${VAR} in ssh_config's paths ----------------------------------------------------------

def test_fault_environment_variables_in_identity_and_known_hosts_files(tmp_path, monkeypatch):
    # `IdentityFile ${HPC_KEYS}/id` was taken as a file named `${HPC_KEYS}/id` (never found:
    # the key was silently not offered)
    monkeypatch.setenv("HPC_KEYS", "/srv/keys")
    spec = looked_up(tmp_path, "Host hpc\n  IdentityFile ${HPC_KEYS}/id_%r\n  User ana\n"
                               "  CertificateFile ${HPC_KEYS}/id-cert.pub\n"
                               "  UserKnownHostsFile ${HPC_KEYS}/known_hosts %d/.ssh/kh_%h\n"
                               "  HostName ${HPC_KEYS}\n")
    assert spec.identity_files == ["/srv/keys/id_ana"]
    assert spec.certificate_files == ["/srv/keys/id-cert.pub"]
    assert spec.known_hosts_files == ["/srv/keys/known_hosts", f"{HOME}/.ssh/kh_${{hpc_keys}}"]
    # HostName reads no variable (ssh_config(5)): never expanded, and in lower case as ssh
    # names a host (`ssh -G`: hostname ${hpc_keys})
    assert spec.hostname == "${hpc_keys}"


def test_fault_a_variable_not_set_is_refused_naming_it_and_the_line(tmp_path, monkeypatch):
    monkeypatch.delenv("HPC_KEYS", raising=False)
    with pytest.raises(BadInput, match=r"ssh_config .*/ssh_config line 3: IdentityFile "
                                       r"'\$\{HPC_KEYS\}/id' names \$\{HPC_KEYS\}, which is not "
                                       r"set in this environment"):
        looked_up(tmp_path, "Host hpc\n  User ana\n  IdentityFile ${HPC_KEYS}/id\n")


def test_fault_a_variable_is_read_never_run(tmp_path, monkeypatch):
    monkeypatch.setenv("HPC_KEYS", "$(touch pwned)")
    spec = looked_up(tmp_path, "Host hpc\n  IdentityFile ${HPC_KEYS}/id\n")
    assert spec.identity_files == ["$(touch pwned)/id"] and not Path("pwned").exists()


def test_fault_user_known_hosts_file_none_reads_no_file(tmp_path, monkeypatch):
    # `UserKnownHostsFile none` was a file named `none` in the working directory
    monkeypatch.chdir(tmp_path)
    assert looked_up(tmp_path, "Host hpc\n  UserKnownHostsFile none\n").known_hosts_files == []


# -- 3. Port, first match, ProxyCommand and ProxyJump ----------------------------------------

# `Port ssh` is a service's name, which ssh reads as 22 (tests/test_config_unseen12.py)
@pytest.mark.parametrize("port", ["0", "65536", "70000", "-1", "nosuchservice"])
def test_fault_a_port_out_of_range_is_refused_naming_the_line(tmp_path, port):
    # 0 and 70000 were dialled (a "cannot connect" at every command)
    with pytest.raises(BadInput, match=rf"ssh_config .* line 3: Port '{port}' of Host hpc is "
                                       "not a port: a number from 1 to 65535"):
        looked_up(tmp_path, f"Host hpc\n  HostName login.example.org\n  Port {port}\n")


def test_first_obtained_value_wins_whichever_block_gives_it(tmp_path):
    text = "Host hpc\n  User ana\n  Port 2222\nHost *\n  User root\n  Port 22\n"
    assert (looked_up(tmp_path, text).user, looked_up(tmp_path, text).port) == ("ana", 2222)
    text = "Host *\n  User root\nHost hpc\n  User ana\n"  # `Host *` first: its value wins
    assert looked_up(tmp_path, text).user == "root"


@pytest.mark.parametrize("text,jump", [
    # fault: `ProxyCommand none` first: ssh goes straight; the later ProxyJump was taken
    ("Host hpc\n  ProxyCommand none\nHost *\n  ProxyJump gw\n", None),
    ("Host hpc\n  ProxyCommand none\n  ProxyJump gw\n", None),
    # fault: the ProxyCommand's jump host given first, a `Host *` ProxyJump after it
    ("Host hpc\n  ProxyCommand ssh -W %h:%p gw1\nHost *\n  ProxyJump gw2\n", "gw1"),
    ("Host hpc\n  ProxyJump none\nHost *\n  ProxyCommand ssh -W %h:%p gw\n", None),
    ("Host hpc\n  ProxyJump gw1\nHost *\n  ProxyCommand ssh -W %h:%p gw2\n", "gw1"),
    ("Host hpc\n  ProxyJump %r@gw:2222\n  User ana\n", "ana@gw:2222")])
def test_of_proxy_command_and_proxy_jump_the_first_given_wins(tmp_path, text, jump):
    spec = looked_up(tmp_path, text)
    assert spec.proxy_jump == jump and spec.proxy_problem is None


# -- 4. Include with globs: an error names the included file's line ---------------------------

def test_fault_an_error_in_an_included_file_names_that_file_and_its_line(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    conf = tmp_path / ".ssh" / "config.d"
    conf.mkdir(parents=True)
    (conf / "10-center.conf").write_text("Host hpc\n  HostName login.center.org\n")
    (conf / "20-mine.conf").write_text("# mine\nHost hpc\n  User ana\n  Port 99999\n")
    (conf / "30-other.txt").write_text("Host hpc\n  Port 22\n")  # not matched by the glob
    with pytest.raises(BadInput, match=rf"ssh_config {conf}/20-mine.conf line 4: Port "
                                       "'99999' of Host hpc"):
        looked_up(tmp_path, "Include config.d/*.conf\n")
    (conf / "20-mine.conf").write_text("Host hpc\n  User ana\n  IdentityFile ~/.ssh/%h\n")
    spec = looked_up(tmp_path, "Include config.d/*.conf\nHost *\n  User root\n")
    assert (spec.hostname, spec.user) == ("login.center.org", "ana")
    # the Include found under $HOME (ssh's glob reads it), its IdentityFile's `~` under the
    # password database's home (ssh's tilde expansion)
    assert spec.identity_files == [f"{ssh_home()}/.ssh/login.center.org"]


# -- 5. IdentitiesOnly --------------------------------------------------------------------------

def _keygen(path: Path) -> paramiko.PKey:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
                   check=True, capture_output=True)
    return paramiko.PKey.from_path(str(path))


@pytest.mark.parametrize("only", [True, False])
def test_fault_identities_only_offers_the_agents_keys_of_the_identity_files(tmp_path,
                                                                           monkeypatch, only):
    """`IdentitiesOnly yes` (ssh offers only the listed identities, agent keys among them):
    the engine offered every agent key too, and a server allowing 6 tries (MaxAuthTries)
    refused the login before the listed key's turn. The listed key is locked on disk (a
    passphrase: in the agent only); its .pub names it."""
    mine, other = _keygen(tmp_path / "id_hpc"), _keygen(tmp_path / "id_work")
    subprocess.run(["ssh-keygen", "-q", "-p", "-N", "secret", "-f", str(tmp_path / "id_hpc")],
                   check=True, capture_output=True)
    sock = tmp_path / "agent.sock"
    served = fake_agent(sock, other, mine)
    monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
    spec = looked_up(tmp_path, f"Host hpc\n  IdentitiesOnly {'yes' if only else 'no'}\n"
                               f"  IdentityFile {tmp_path}/id_hpc\n"
                               f"  IdentityFile {tmp_path}/missing\n")
    offered = [k.get_base64() for _, k in _keys("hpc", spec, use_agent=True)]
    served.join(5)
    # as ssh: an identity file the agent holds first, then the agent's other keys
    assert offered == ([mine.get_base64()] if only else
                       [mine.get_base64(), other.get_base64()])


class _Refusing:
    """A server's side of authentication that accepts nothing (paramiko.Transport's calls)."""

    def is_authenticated(self) -> bool:
        return False

    def auth_publickey(self, user: str, key: paramiko.PKey) -> list[str]:
        raise paramiko.AuthenticationException("refused")


def test_fault_a_key_file_locked_by_a_passphrase_is_named_not_a_traceback(d, monkeypatch):
    """A key of OpenSSH's format locked by a passphrase made the cryptography package raise
    TypeError while the engine loaded it: every connect of the site ended in a traceback.
    Now the key is not offered, and the refusal says why and what to do."""
    monkeypatch.setenv("HOME", str(d))  # no default identities of the machine's user
    _keygen(d / "id_hpc")
    subprocess.run(["ssh-keygen", "-q", "-p", "-N", "secret", "-f", str(d / "id_hpc")],
                   check=True, capture_output=True)
    cfg = loads(d, ssh_site(d, f"host: login.example.org\nuser: ana\nkey_file: {d}/id_hpc")
                ).sites[0].transport
    spec = resolve_host(load_ssh_config(None), cfg.host, user=cfg.user, key_file=cfg.key_file)
    assert _keys("a", spec, use_agent=False) == []
    with pytest.raises(AuthError) as e:
        authenticate(_Refusing(), "a", spec, cfg, None)
    assert f"key_file {d}/id_hpc was not offered: it is locked by a passphrase (load it " \
           "into ssh-agent: `ssh-add KEY`)" in str(e.value)
    assert "secret" not in str(e.value)


# -- 6. key_file ---------------------------------------------------------------------------------

def test_fault_a_public_key_as_key_file_names_its_private_half(d, tmp_path):
    """`key_file: ~/.ssh/id_ed25519.pub` (the file people copy to sites): refused as
    "can be read by other users; chmod 600" (its usual mode 644), the wrong advice."""
    _keygen(d / "id_hpc")
    (d / "id_hpc.pub").chmod(0o644)
    msg = refused(d, ssh_site(d, f"host: login.example.org\nkey_file: {d}/id_hpc.pub"))
    assert (f"transport.key_file: {d}/id_hpc.pub is a public key (the half that goes on the "
            f"site, in ~/.ssh/authorized_keys): key_file is its private half ({d}/id_hpc?) "
            "(line 7)") in msg, msg
    assert "chmod" not in msg and "AAAA" not in msg  # the key's text is not echoed
    t = loads(d, ssh_site(d, f"host: login.example.org\nkey_file: {d}/id_hpc")).sites[0]
    assert t.transport.key_file == f"{d}/id_hpc"


def test_fault_a_putty_key_says_how_to_convert_it(d):
    (d / "hpc.ppk").write_text("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n"
                               "Private-Lines: 1\nc2VjcmV0\n")
    (d / "hpc.ppk").chmod(0o600)
    msg = refused(d, ssh_site(d, f"host: login.example.org\nkey_file: {d}/hpc.ppk"))
    assert f"{d}/hpc.ppk is a PuTTY key (.ppk), which the SSH library does not read: " \
           f"convert it (`puttygen {d}/hpc.ppk -O private-openssh" in msg, msg
    assert "c2VjcmV0" not in msg


def test_a_private_key_others_can_read_is_still_refused_as_ssh_refuses_it(d):
    _keygen(d / "id_hpc")
    (d / "id_hpc").chmod(0o644)
    msg = refused(d, ssh_site(d, f"host: login.example.org\nkey_file: {d}/id_hpc"))
    assert "can be read by other users (mode 644)" in msg


# -- 7. hosts, names, encodings ----------------------------------------------------------------

@pytest.mark.parametrize("host", ["'[fe80::1%25eth0]'", "'fe80::1%25eth0'",
                                  "'[fe80::1%25eth0]:2222'"])
def test_fault_a_url_encoded_zone_says_to_write_a_plain_percent(d, host):
    # `%25eth0` was kept, and the connect asked for an interface named `25eth0`
    msg = refused(d, ssh_site(d, f"host: {host}\nkey_file: {d}/id_ed25519"))
    assert "%25 is how a URL writes the % before an IPv6 address's zone" in msg, msg
    assert "(fe80::1%eth0" in msg


@pytest.mark.parametrize("host,hostname,port", [
    ("'fe80::1%eth0'", "fe80::1%eth0", None), ("'[fe80::1%eth0]:2222'", "fe80::1%eth0", 2222),
    ("'[2001:db8::7]'", "2001:db8::7", None)])
def test_ipv6_literals_with_a_zone_are_kept(d, host, hostname, port):
    t = loads(d, ssh_site(d, f"host: {host}\nkey_file: {d}/id_ed25519")).sites[0].transport
    assert (t.host, t.port) == (hostname, port)


@pytest.mark.parametrize("encoding,named", [
    ("utf-16", "UTF-16"), ("utf-16-le", "UTF-16"), ("utf-16-be", "UTF-16"),
    ("utf-32", "UTF-32"), ("utf-32-le", "UTF-32")])
def test_fault_a_file_saved_as_utf16_or_utf32_says_so(d, encoding, named):
    # without a byte-order mark it was "unacceptable character #x0000"
    path = d / "sites.yaml"
    path.write_bytes("sites:\n  - name: a\n    transport: {kind: local}\n".encode(encoding))
    assert main(["sites", "--config", str(path)]) == 2
    with pytest.raises(BadInput, match=rf"sites file {path} is {named} text .*save it as UTF-8"):
        load_config(path)


def test_a_utf8_file_with_a_byte_order_mark_is_read(d):
    path = d / "sites.yaml"
    path.write_bytes("sites:\n  - name: a\n    transport: {kind: local}\n".encode("utf-8-sig"))
    assert [s.name for s in load_config(path).sites] == ["a"]


def test_fault_a_date_as_a_site_name_says_to_quote_it(d):
    msg = refused(d, "sites:\n  - name: 2026-12-06\n    transport: {kind: local}\n")
    assert "name: Input should be a valid string, got the date 2026-12-06 (YAML reads " \
           "YYYY-MM-DD as a date: put the value in quotes) (line 2)" in msg, msg
    assert loads(d, "sites:\n  - name: '2026-12-06'\n    transport: {kind: local}\n"
                 ).sites[0].name == "2026-12-06"


@pytest.mark.parametrize("name,plain", [("ａｌｐｈａ", "alpha"), ("\u212a2", "K2"),
                                        ("ﬁre", "fire")])
def test_fault_a_name_in_look_alike_letters_names_the_plain_one(d, name, plain):
    msg = refused(d, f"sites:\n  - name: alpha\n    transport: {{kind: local}}\n"
                     f"  - name: {name}\n    transport: {{kind: local}}\n")
    assert f"is not a site name (it is written in look-alike letters: write '{plain}')" in msg
    assert "(line 4)" in msg


def test_diamond_sites_exits_2_on_a_public_key_naming_the_file(d, capsys):
    _keygen(d / "id_hpc")
    path = write(d, ssh_site(d, f"host: login.example.org\nkey_file: {d}/id_hpc.pub"))
    assert main(["sites", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "is a public key" in err and err.count("\n") == 1


# -- 8. known_hosts ------------------------------------------------------------------------------

KEY, OTHER = paramiko.ECDSAKey.generate(), paramiko.ECDSAKey.generate()


def _verify(tmp_path: Path, lines: str, host: str, key: paramiko.PKey = KEY,
            tofu: bool = False) -> None:
    own = tmp_path / "known_hosts"
    own.write_text(lines.replace("KEY", f"{KEY.get_name()} {KEY.get_base64()}")
                   .replace("OTHER", f"{OTHER.get_name()} {OTHER.get_base64()}"))
    HostKeyVerifier("alpha", str(own), tofu=tofu).verify(
        HostSpec(alias=host, hostname=host), key)


@pytest.mark.parametrize("host", ["login1.hpc.example.org", "Login1.HPC.example.org"])
def test_fault_a_centers_pattern_line_knows_its_logins(tmp_path, host):
    """A center's ssh_known_hosts lists its logins by pattern (`*.hpc.example.org`, `?`);
    paramiko compared names exactly, so the login was "not in known_hosts". OpenSSH also
    reads names without regard to case."""
    _verify(tmp_path, "*.hpc.example.org,10.1.2.? KEY\n", host)
    _verify(tmp_path, "login1.hpc.example.org KEY\n", host)


def test_fault_a_negated_pattern_and_a_pattern_with_another_key_is_a_change(tmp_path):
    """A center's pattern line with another key than the login offers: with
    trust_on_first_use the offered key was added (the pattern was not read), where ssh
    refuses a changed key."""
    with pytest.raises(HostKeyError, match="host evil.hpc.example.org is not in known_hosts"):
        _verify(tmp_path, "!evil.hpc.example.org,*.hpc.example.org KEY\n",
                "evil.hpc.example.org")
    # a pattern's key is the host's: another one is refused, not trusted on first use
    with pytest.raises(HostKeyError, match="HOST KEY FOR login1.hpc.example.org HAS CHANGED"):
        _verify(tmp_path, "*.hpc.example.org OTHER\n", "login1.hpc.example.org", tofu=True)
    assert (tmp_path / "known_hosts").read_text().count("\n") == 1  # nothing added


def test_fault_a_port_in_brackets_is_matched_as_written(tmp_path):
    own = tmp_path / "known_hosts"
    own.write_text(f"[*.hpc.example.org]:2222 {KEY.get_name()} {KEY.get_base64()}\n")
    verifier = HostKeyVerifier("alpha", str(own), tofu=False)
    verifier.verify(HostSpec(alias="l", hostname="l1.hpc.example.org", port=2222), KEY)
    with pytest.raises(HostKeyError, match="not in known_hosts"):
        verifier.verify(HostSpec(alias="l", hostname="l1.hpc.example.org"), KEY)


def test_a_revoked_key_is_refused_under_a_pattern_and_a_hashed_name(tmp_path):
    hashed = paramiko.HostKeys.hash_host("login1.hpc.example.org")
    with pytest.raises(HostKeyError, match="is revoked"):
        _verify(tmp_path, f"*.hpc.example.org KEY\n@revoked {hashed} KEY\n",
                "login1.hpc.example.org", tofu=True)


def test_fault_a_host_named_only_by_a_cert_authority_line_says_so(tmp_path):
    """The center's known_hosts holds only `@cert-authority *.hpc.example.org KEY` (hosts
    certified by its CA): the SSH library checks no host certificate; the refusal said
    only "not in known_hosts", as if the file had nothing for the host."""
    with pytest.raises(HostKeyError, match=r"host login1\.hpc\.example\.org is known only "
                                           r"through the @cert-authority line .*known_hosts "
                                           r"line 1, and host certificates are not checked"):
        _verify(tmp_path, "@cert-authority *.hpc.example.org OTHER\n", "login1.hpc.example.org")


# -- 9. merge keys ---------------------------------------------------------------------------------

def test_fault_a_merge_key_given_twice_says_to_merge_a_list(d):
    """`<<: *a` and `<<: *b` in one entry: YAML allows one merge key; PyYAML merged both,
    the first winning, where a later key wins everywhere else in a mapping (site c would
    have been PBS, meant LSF?)."""
    text = ("sites:\n  - &a\n    name: a\n    scheduler: pbs\n    transport: {kind: local}\n"
            "  - &b\n    name: b\n    scheduler: lsf\n    transport: {kind: local}\n"
            "  - <<: *a\n    <<: *b\n    name: c\n")
    msg = refused(d, text)
    assert "line 11, column 5: key '<<' is given twice (first on line 10); merge several " \
           "in one: <<: [*a, *b] (the first that gives a key wins)" in msg, msg
    cfg = loads(d, text.replace("  - <<: *a\n    <<: *b\n", "  - <<: [*b, *a]\n"))
    assert [(s.name, s.scheduler) for s in cfg.sites] == [("a", "pbs"), ("b", "lsf"),
                                                           ("c", "lsf")]


def test_a_transport_merged_from_an_x_key_and_overridden_per_site(d):
    text = (f"x-login: &login {{user: ana, known_hosts: {d}/known_hosts, use_agent: false,"
            f" key_file: {d}/id_ed25519}}\n"
            "sites:\n  - name: a\n    transport: {<<: *login, host: a.example.org}\n"
            "  - name: b\n    transport:\n      <<: *login\n      host: b.example.org\n"
            "      user: bob\n")
    got = [(s.transport.host, s.transport.user, s.transport.key_file)
           for s in loads(d, text).sites]
    assert got == [("a.example.org", "ana", f"{d}/id_ed25519"),
                   ("b.example.org", "bob", f"{d}/id_ed25519")]


# -- 10. HostKeyAlias ------------------------------------------------------------------------------

def test_fault_a_host_key_alias_is_the_name_known_hosts_lists(tmp_path):
    """`HostKeyAlias cluster` (logins behind one address and several ports, or a tunnel):
    ssh looks the key up, and adds it, under the alias as written. The engine looked up
    `[10.0.0.5]:2222`: "not in known_hosts" (or, trusted on first use, a second entry)."""
    spec = looked_up(tmp_path, "Host hpc\n  HostName 10.0.0.5\n  Port 2222\n"
                               "  HostKeyAlias cluster\n  IdentityFile ~/.ssh/id_%k\n")
    assert (spec.known_hosts_name, spec.identity_files) == ("cluster",
                                                            [f"{HOME}/.ssh/id_cluster"])
    own = tmp_path / "known_hosts"
    own.write_text(f"cluster {KEY.get_name()} {KEY.get_base64()}\n")
    HostKeyVerifier("alpha", str(own), tofu=False).verify(spec, KEY)
    with pytest.raises(HostKeyError, match="HOST KEY FOR cluster HAS CHANGED"):
        HostKeyVerifier("alpha", str(own), tofu=True).verify(spec, OTHER)
    assert own.read_text().count("\n") == 1


# -- 11. through a real sshd ----------------------------------------------------------------------

async def test_fault_a_login_through_host_key_alias_and_a_variable_in_identity_file(
        sshd, tmp_path, monkeypatch):
    """A sites file naming an ssh_config alias whose key path holds `${VAR}` and `%r`, whose
    host key is listed under its HostKeyAlias, with `IdentitiesOnly yes`: the engine logs
    in to a real sshd (before: no key was found, nor the host's key)."""
    from diamond_jupyter.transports import make_transport

    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / f"id_{sshd.user}").write_bytes(sshd.client_key.read_bytes())
    (keys / f"id_{sshd.user}").chmod(0o600)
    monkeypatch.setenv("HPC_KEYS", str(keys))
    host_key = Path(f"{sshd.host_key}.pub").read_text().split()
    (tmp_path / "known_hosts").write_text(f"hpc-login {host_key[0]} {host_key[1]}\n")
    (tmp_path / "ssh_config").write_text(
        f"Host hpc\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
        "  HostKeyAlias hpc-login\n  IdentitiesOnly yes\n  IdentityFile ${HPC_KEYS}/id_%r\n")
    cfg = loads(tmp_path, f"sites:\n  - name: hpc\n    transport:\n      host: hpc\n"
                          f"      ssh_config: {tmp_path}/ssh_config\n"
                          f"      known_hosts: {tmp_path}/known_hosts\n"
                          "      connect_timeout_s: 10\n")
    t = make_transport(cfg.sites[0].transport, "hpc", reconnect_attempts=1)
    try:
        assert (await t.run(["echo", "in"])).stdout == "in\n"
    finally:
        await t.close()


# -- 12. RevokedHostKeys ----------------------------------------------------------------------

def test_fault_a_host_key_listed_in_revoked_host_keys_is_never_accepted(tmp_path, monkeypatch):
    """ssh_config's `RevokedHostKeys FILE` (a center's list of stolen host keys): not read,
    so a revoked key listed in known_hosts, or trusted on first use, was accepted."""
    monkeypatch.setenv("CENTER", str(tmp_path))
    (tmp_path / "revoked").write_text(f"# stolen 2026-11\n{KEY.get_name()} {KEY.get_base64()} "
                                      "old-login\n")
    spec = looked_up(tmp_path, "Host hpc\n  HostName login.hpc.example.org\n"
                               "  RevokedHostKeys ${CENTER}/revoked\n")
    assert spec.revoked_host_keys == f"{tmp_path}/revoked"
    own = tmp_path / "known_hosts"
    own.write_text(f"login.hpc.example.org {KEY.get_name()} {KEY.get_base64()}\n")
    for tofu in (False, True):
        with pytest.raises(HostKeyError, match=r"is revoked \(listed in ssh_config's "
                                               rf"RevokedHostKeys {tmp_path}/revoked line 2\)"):
            HostKeyVerifier("alpha", str(own), tofu=tofu).verify(spec, KEY)
    own.write_text("")
    HostKeyVerifier("alpha", str(own), tofu=True).verify(spec, OTHER)  # another key: taken
    assert own.read_text().count(OTHER.get_base64()) == 1


@pytest.mark.parametrize("content,why", [(None, "No such file"),
                                         (b"SSHKRL\n\x00\x00\x00\x01", "(KRL)")])
def test_fault_a_revoked_host_keys_file_that_cannot_be_checked_refuses_connecting(
        tmp_path, content, why):
    if content is not None:
        (tmp_path / "revoked").write_bytes(content)
    spec = looked_up(tmp_path, f"Host hpc\n  RevokedHostKeys {tmp_path}/revoked\n")
    (tmp_path / "known_hosts").write_text(f"hpc {KEY.get_name()} {KEY.get_base64()}\n")
    with pytest.raises(HostKeyError, match=rf"RevokedHostKeys {tmp_path}/revoked cannot be "
                                           rf"checked \(.*{why}.*refusing to connect"):
        HostKeyVerifier("alpha", str(tmp_path / "known_hosts"), tofu=False).verify(spec, KEY)
