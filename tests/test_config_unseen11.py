"""Sites files and ssh_config, eleventh sweep, as users and centers write them and sweeps 1-10
did not: trailing `# comments` on ssh_config lines (OpenSSH 8.7 on reads them), misspelt
keywords, a one-value keyword given two, a HostName holding a port, `IgnoreUnknown`, several
`CertificateFile` lines, `GlobalKnownHostsFile`, `ProxyCommand exec ssh -W` and ProxyCommands
never run, Match blocks on the login; `~user` paths, key typos and wrong types in the sites
file, a block of anchors not named `x-`, per-site hedging forbidden; and logins to a real
sshd with ed25519, ECDSA and RSA keys, a hashed `[host]:port` known_hosts, `HashKnownHosts
yes`, an agent holding the only key (or gone, or empty), jump chains, an IdentityFile others
can read or not there. Host-key checks are never weaker than ssh's: a known_hosts line
without the port, a re-keyed host's stale key, or `StrictHostKeyChecking no` in ssh_config,
is still refused. Each answer was worked out by hand from ssh_config(5), `ssh -G` (OpenSSH
9.2) and the loader's contract. The tests marked `fault` failed before this sweep's fixes."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest
import sweep_helpers
from sshd_helper import keygen
from sweep_helpers import HOME, looked_up, ssh_site
from test_config_unseen2 import loads, refused, write

from diamond_jupyter.cli import main
from diamond_jupyter.model import BadInput
from diamond_jupyter.transports import AuthError, HostKeyError, make_transport
from diamond_jupyter.transports.ssh_auth import (
    HostKeyVerifier,
    _keys,
    ssh_home,
)

d = sweep_helpers.key_dir


# -- 1. ssh_config: trailing comments -------------------------------------------------------

@pytest.mark.parametrize("line,field,value", [
    ("Port 2222 # the alt port", "port", 2222),
    ("HostName login.example.org   # the login node", "hostname", "login.example.org"),
    ("User ana\t# me", "user", "ana"),
    ("IdentityFile ~/.ssh/id_hpc # made 2026", "identity_files", [f"{HOME}/.ssh/id_hpc"]),
    ("ProxyJump gw.example.org # the bastion", "proxy_jump", "gw.example.org")])
def test_fault_a_trailing_comment_ends_the_line_as_openssh_reads_it(tmp_path, line, field,
                                                                    value):
    # `ssh -G` reads each as the value alone; the engine refused `Port '2222 # alt'`, dialled
    # `login.example.org   # the login node` and looked for a key named `id_hpc # made 2026`
    spec = looked_up(tmp_path, f"Host hpc  # the cluster\n  {line}\n")
    assert getattr(spec, field) == value


def test_fault_an_include_with_a_trailing_comment(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh" / "config.d").mkdir(parents=True)
    (tmp_path / ".ssh" / "config.d" / "hpc.conf").write_text("Host hpc\n  Port 2222\n")
    assert looked_up(tmp_path, "Include config.d/*.conf  # the center's\n").port == 2222


@pytest.mark.parametrize("written,host,port", [
    ("127.0.0.1:2222", "127.0.0.1", "2222"), ("login.example.org:22", "login.example.org", "22"),
    ("[2001:db8::5]:2222", "2001:db8::5", "2222")])
def test_fault_a_hostname_holding_a_port_says_to_write_port(tmp_path, written, host, port):
    # ssh and the engine dialled `127.0.0.1:2222` as a name: "cannot resolve host"
    with pytest.raises(BadInput, match=rf"ssh_config {tmp_path}/ssh_config line 2: HostName "
                                       rf"'{re.escape(written)}' of Host hpc holds a port; "
                                       rf"ssh_config gives it on a line of its own: HostName "
                                       rf"{re.escape(host)} and Port {port}"):
        looked_up(tmp_path, f"Host hpc\n  HostName {written}\n")


def test_an_ipv6_address_ending_in_digits_is_no_port(tmp_path):
    assert looked_up(tmp_path, "Host hpc\n  HostName 2001:db8::5:22\n").hostname == \
        "2001:db8::5:22"


@pytest.mark.parametrize("line,files", [
    ('IdentityFile "/keys/hpc #2"', ["/keys/hpc #2"]),  # quoted: kept
    ("IdentityFile /keys/hpc#2", ["/keys/hpc#2"]),  # not after a blank: kept
    ('IdentityFile "/keys/my key" # the one', ["/keys/my key"])])  # fault: quotes, comment and all
def test_a_hash_inside_quotes_or_a_word_is_part_of_the_value(tmp_path, line, files):
    assert looked_up(tmp_path, f"Host hpc\n  {line}\n").identity_files == files


# -- 2. ssh_config: misspelt keywords and extra values ---------------------------------------

@pytest.mark.parametrize("typo,meant", [
    ("IdentiyFile ~/.ssh/id_hpc", "IdentityFile"), ("Hostnme login.example.org", "HostName"),
    ("ProxyJmup gw", "ProxyJump"), ("UserKnownHostFile ~/.ssh/kh", "UserKnownHostsFile"),
    ("CertificatFile ~/.ssh/id-cert.pub", "CertificateFile")])
def test_fault_a_misspelt_keyword_is_refused_with_the_one_meant(tmp_path, typo, meant):
    # paramiko kept the typo as a keyword of its own: the key, login or jump host was
    # silently not used; ssh refuses the file (Bad configuration option)
    with pytest.raises(BadInput) as e:
        looked_up(tmp_path, f"Host hpc\n  User ana\n  {typo}\n")
    assert str(e.value).startswith(f"ssh_config {tmp_path}/ssh_config line 3: "
                                   f"'{typo.split()[0]}' is not an ssh_config keyword (did "
                                   f"you mean {meant}?)"), str(e.value)


def test_fault_a_typo_in_an_included_file_names_that_file(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".ssh" / "config.d").mkdir(parents=True)
    (tmp_path / ".ssh" / "config.d" / "hpc").write_text("Host hpc\n  Hostnaem login\n")
    with pytest.raises(BadInput, match=rf"ssh_config {tmp_path}/.ssh/config.d/hpc line 2: "
                                       "'Hostnaem' is not an ssh_config keyword"):
        looked_up(tmp_path, "Include config.d/*\n")


def test_ignore_unknown_and_words_of_other_tools_are_passed_over(tmp_path):
    # IgnoreUnknown names what ssh passes over (patterns too); Apple's UseKeychain is known.
    # A word near no keyword and not named is refused (tests/test_sweeps34_followups.py)
    spec = looked_up(tmp_path, "IgnoreUnknown UseKeyring,Hostnme,XAuth*\nHost hpc\n  Hostnme x\n"
                               "  UseKeychain yes\n  XAuthorityMagic 1\n  HostName login\n")
    assert spec.hostname == "login"


def test_a_power_users_config_of_many_keywords_reads_as_ssh_reads_it(tmp_path):
    spec = looked_up(tmp_path, """# ~/.ssh/config, shared with a Mac (whose ssh has UseKeychain)
IgnoreUnknown UseKeychain
Host hpc hpc-*
    HostName login.hpc.example.org
    User ana
    IdentityFile ~/.ssh/id_ed25519_hpc
    IdentitiesOnly yes
    ForwardAgent no
    ForwardX11 no
    ServerAliveInterval 60
    ServerAliveCountMax=3
    ControlMaster auto
    ControlPath ~/.ssh/cm-%r@%h:%p
    ControlPersist 10m
    PubkeyAcceptedAlgorithms +ssh-rsa
    SetEnv LC_ALL=C
    SendEnv LANG LC_*
    RequestTTY no
Host *
    AddKeysToAgent yes
    UseKeychain yes
    HashKnownHosts yes
    VisualHostKey no
    Compression yes
""")
    assert (spec.hostname, spec.user, spec.identities_only, spec.hash_known_hosts) == (
        "login.hpc.example.org", "ana", True, True)
    assert spec.identity_files == [f"{HOME}/.ssh/id_ed25519_hpc"]


@pytest.mark.parametrize("line", ["HostName login example.org", "Port 22 2222",
                                  "User ana bob", "IdentityFile ~/.ssh/a ~/.ssh/b"])
def test_fault_a_one_value_keyword_given_two_is_refused(tmp_path, line):
    # ssh: "extra arguments at end of line"; the engine dialled `login example.org`
    word = line.split()[0]
    with pytest.raises(BadInput, match=rf"line 2: {word} takes one value, and .* is 2; put "
                                       "a value holding blanks in double quotes"):
        looked_up(tmp_path, f"Host hpc\n  {line}\n")


def test_diamond_sites_exits_2_on_a_misspelt_ssh_config_keyword(d, capsys):
    (d / "ssh_config").write_text("Host hpc\n  Hostnme login.example.org\n")
    (d / "ssh_config").chmod(0o600)
    path = write(d, ssh_site(d, f"host: hpc\nssh_config: {d}/ssh_config"))
    code = main(["place", "--config", str(path), "--explain", str(_script(d))])
    err = capsys.readouterr().err
    assert code == 2 and "did you mean HostName?" in err and err.count("\n") == 1, err


def _script(d: Path) -> Path:
    (d / "job.sh").write_text("#!/bin/bash\n#SBATCH -t 5\nhostname\n")
    return d / "job.sh"


# -- 3. ssh_config: CertificateFile, GlobalKnownHostsFile, Match, negation ------------------

def test_fault_each_certificate_file_is_tried_as_ssh_tries_them(tmp_path):
    """Two CertificateFile lines (an old CA's and the new one's, or one per key): paramiko
    kept the first, so the key the second certifies was offered without it."""
    keygen(tmp_path / "ca")
    keygen(tmp_path / "other")
    keygen(tmp_path / "id_hpc")
    for who in ("other", "id_hpc"):
        subprocess.run(["ssh-keygen", "-q", "-s", str(tmp_path / "ca"), "-I", f"{who}-cert",
                        "-n", "ana", str(tmp_path / f"{who}.pub")], check=True)
    (tmp_path / "id_hpc-cert.pub").rename(tmp_path / "signed.pub")  # not beside its key
    spec = looked_up(tmp_path, f"Host hpc\n  User ana\n  IdentityFile {tmp_path}/id_hpc\n"
                               f"  CertificateFile {tmp_path}/other-cert.pub\n"
                               f"Host *\n  CertificateFile {tmp_path}/signed.pub\n")
    assert spec.certificate_files == [f"{tmp_path}/other-cert.pub", f"{tmp_path}/signed.pub"]
    offered = _keys("a", spec, use_agent=False)
    assert "certificate 'id_hpc-cert'" in offered[0][0] and \
        offered[0][1].public_blob is not None, offered


def test_fault_global_known_hosts_file_is_where_the_hosts_key_is_looked_up(tmp_path):
    """A center's ssh_config names its own GlobalKnownHostsFile: not read, so its logins were
    "not in known_hosts" although ssh knew them."""
    key = paramiko.ECDSAKey.generate()
    (tmp_path / "center_hosts").write_text(f"login.hpc.org {key.get_name()} "
                                           f"{key.get_base64()}\n")
    spec = looked_up(tmp_path, "Host hpc\n  HostName login.hpc.org\n"
                               "  GlobalKnownHostsFile %d/none-here ${CENTER}/center_hosts\n"
                               .replace("${CENTER}", str(tmp_path)))
    (tmp_path / "own").write_text("")
    HostKeyVerifier("a", str(tmp_path / "own"), tofu=False).verify(spec, key)
    with pytest.raises(HostKeyError, match="HAS CHANGED"):  # another key stays refused
        HostKeyVerifier("a", str(tmp_path / "own"), tofu=True).verify(
            spec, paramiko.ECDSAKey.generate())


@pytest.mark.parametrize("user,port", [("bob", 2200), ("ana", 22), (None, 22)])
def test_fault_a_match_user_block_applies_to_the_sites_login(tmp_path, user, port):
    # `ssh -G bob@hpc` applies it (the login given is the one matched); paramiko matched
    # ssh_config's User, else the local user: the site's own `user: bob` was not
    spec = looked_up(tmp_path, "Match host hpc user bob\n  Port 2200\nHost hpc\n  User ana\n",
                     user=user)
    assert spec.port == port and spec.user == (user or "ana")


def test_a_match_user_block_applies_to_ssh_configs_own_user(tmp_path):
    spec = looked_up(tmp_path, "Host hpc\n  User bob\nMatch host hpc user bob\n  Port 2200\n")
    assert (spec.user, spec.port) == ("bob", 2200)


def test_a_negated_host_pattern_leaves_the_bastion_out(tmp_path):
    text = "Host *.hpc.org !bastion.hpc.org\n  ProxyJump bastion.hpc.org\n  User ana\n"
    assert looked_up(tmp_path, text, "login1.hpc.org").proxy_jump == "bastion.hpc.org"
    bastion = looked_up(tmp_path, text, "bastion.hpc.org")
    assert bastion.proxy_jump is None and bastion.user != "ana"


def test_identity_files_of_every_block_in_order_once_each(tmp_path):
    spec = looked_up(tmp_path, "Host hpc\n  IdentityFile ~/.ssh/a\n  IdentityFile ~/.ssh/b\n"
                               "Host *\n  IdentityFile ~/.ssh/a\n  IdentityFile ~/.ssh/c\n",
                     key_file=f"{HOME}/.ssh/mine")
    assert spec.identity_files == [f"{HOME}/.ssh/{k}" for k in ("mine", "a", "b", "c")]


# -- 4. ssh_config: ProxyCommand --------------------------------------------------------------

@pytest.mark.parametrize("command,hop", [
    ("exec ssh -W %h:%p gw.example.org", "gw.example.org"),  # fault: was refused
    ("ssh -q -W %h:%p -p 2222 -l ana gw", "ana@gw:2222"),
    ("/usr/bin/ssh gw -W %h:%p", "gw")])
def test_a_proxy_command_of_ssh_w_is_its_jump_host(tmp_path, command, hop):
    assert looked_up(tmp_path, f"Host hpc\n  ProxyCommand {command}\n").proxy_jump == hop


@pytest.mark.parametrize("command", [
    "nc %h %p", "ssh gw nc %h %p", "ssh -W %h:%p gw; touch {pwned}",
    "ssh -o StrictHostKeyChecking=no -W %h:%p gw", "sh -c 'touch {pwned}'",
    "exec exec ssh -W %h:%p gw"])
def test_any_other_proxy_command_is_refused_and_never_run(tmp_path, command):
    pwned = tmp_path / "pwned"
    spec = looked_up(tmp_path, f"Host hpc\n  ProxyCommand {command.format(pwned=pwned)}\n")
    assert spec.proxy_jump is None and "which is not run" in spec.proxy_problem
    assert "ProxyJump GW" in spec.proxy_problem and not pwned.exists()


# -- 5. the sites file ------------------------------------------------------------------------

def test_fault_a_home_of_no_such_user_is_refused_naming_it(d):
    # Path.expanduser raised RuntimeError("Could not determine home directory."): a traceback
    msg = refused(d, ssh_site(d, "host: login.example.org\nkey_file: ~hpcadmin/.ssh/id"))
    assert "transport.key_file: '~hpcadmin/.ssh/id': ~hpcadmin is the home of a user " \
           "hpcadmin, and this machine has none (write ~/... for your own home, or the " \
           "path out) (line 7)" in msg, msg


def test_a_home_of_another_user_is_theirs(d):
    """`~root/...` is one path, in a home this process can search: a key missing there is
    said at once, as an absolute path's (sweep 24); `~/...` is each user's own, below."""
    msg = refused(d, ssh_site(d, "host: login.example.org\nkey_file: ~root/.ssh/id_hpc"))
    assert msg.endswith("transport.key_file: /root/.ssh/id_hpc does not exist (line 7)"), msg


@pytest.mark.parametrize("line,typo,meant", [
    ("knwon_hosts: ~/.ssh/known_hosts", "transport.knwon_hosts", "known_hosts"),
    ("identity_file: ~/.ssh/id", "transport.identity_file", "key_file"),
    ("proxyjump: gw", "transport.proxyjump", "proxy_jump"),
    ("trust_on_first_used: true", "transport.trust_on_first_used", "trust_on_first_use"),
    ("conect_timeout_s: 5", "transport.conect_timeout_s", "connect_timeout_s")])
def test_a_transport_key_misspelt_says_which_was_meant(d, line, typo, meant):
    msg = refused(d, ssh_site(d, f"host: login.example.org\n{line}"))
    assert f"{typo}: unknown key (did you mean {meant}? accepted: kind, host" in msg, msg
    assert "(line 7)" in msg


@pytest.mark.parametrize("line,said", [
    ("schedular: slurm", "schedular: unknown key (did you mean scheduler?"),
    ("hedging: false", "hedging: unknown key (did you mean hedge?"),
    ("hedge: never", "hedge: Input should be a valid boolean"),
    ("defualt_partition: gpu", "defualt_partition: unknown key (did you mean "
                               "default_partition?")])
def test_a_site_key_misspelt_or_of_the_wrong_type_says_so(d, line, said):
    msg = refused(d, ssh_site(d, "host: login.example.org", site=f"    {line}\n"))
    assert said in msg and "(line 3)" in msg, msg


@pytest.mark.parametrize("line,said", [
    ("port: [22]", "transport.port: Input should be a valid integer"),
    ("port: 22.5", "got a number with a fractional part"),
    ("keepalive_s: often", "transport.keepalive_s: Input should be a valid integer"),
    ("connect_timeout_s: 10s", "transport.connect_timeout_s: Input should be a valid number"),
    ("key_file: [~/.ssh/a, ~/.ssh/b]", "got a list: give one value (more keys: "
                                       "IdentityFile lines in ssh_config, or the agent)")])
def test_a_transport_value_of_the_wrong_type_names_the_key_and_line(d, line, said):
    msg = refused(d, ssh_site(d, f"host: login.example.org\n{line}"))
    assert said in msg and "(line 7)" in msg, msg


def test_fault_a_block_of_anchors_not_named_x_says_how_to_name_it(d):
    text = (f"defaults: &login {{user: ana, known_hosts: {d}/known_hosts}}\n"
            "sites:\n  - name: a\n    transport: {<<: *login, host: a.example.org}\n")
    msg = refused(d, text)
    assert "defaults: unknown key (accepted: sites," in msg
    assert "a block of your own holding YAML anchors is named x-NAME, e.g. x-defaults" in msg
    cfg = loads(d, text.replace("defaults:", "x-defaults:"))
    assert (cfg.sites[0].transport.user, cfg.sites[0].transport.host) == ("ana",
                                                                          "a.example.org")


def test_per_site_policy_hedging_forbidden_through_shared_anchors(d):
    text = (f"x-login: &login {{user: ana, known_hosts: {d}/known_hosts, use_agent: false}}\n"
            "x-site: &site {scheduler: slurm, hedge: false}\n"
            "sites:\n  - {<<: *site, name: prod, transport: {<<: *login, host: p.org}}\n"
            "  - <<: *site\n    name: scratch\n    hedge: true\n"
            "    transport: {<<: *login, host: s.org}\n"
            "  - {name: cloud, transport: {kind: local}}\n")
    assert [(s.name, s.hedge) for s in loads(d, text).sites] == [
        ("prod", False), ("scratch", True), ("cloud", True)]


def test_a_centers_file_of_every_transport_kind_reads_as_written(d, monkeypatch):
    monkeypatch.setenv("CENTER_JWT", "/run/user/1000/jwt")
    text = (f"x-ssh: &ssh {{user: ana, known_hosts: {d}/known_hosts, key_file: {d}/id_ed25519}}\n"
            "sites:\n"
            "  - name: big\n    transport: {<<: *ssh, host: 'login.big.org:2222',"
            " proxy_jump: 'ana@gw.big.org'}\n"
            "  - name: rest\n    hedge: false\n    workdir: /scratch/ana/diamond\n"
            "    transport:\n      kind: slurmrestd\n"
            "      url: https://rest.big.org:6820\n      user: ana\n"
            "      token_file: ${CENTER_JWT}\n"
            "    files: {<<: *ssh, host: login.big.org}\n"
            "  - name: here\n    auto: false\n    transport: {kind: local}\n")
    big, rest, here = loads(d, text).sites
    assert (big.transport.host, big.transport.port, big.transport.proxy_jump) == (
        "login.big.org", 2222, "ana@gw.big.org")
    assert (rest.transport.kind, rest.transport.token_file, rest.files.host, rest.hedge) == (
        "slurmrestd", "/run/user/1000/jwt", "login.big.org", False)
    assert (here.transport.kind, here.auto) == ("local", False)


def test_each_transport_kind_refuses_the_others_keys(d):
    msg = refused(d, "sites:\n  - name: a\n    transport:\n      kind: slurmrestd\n"
                     "      url: https://rest.hpc.org:6820\n      known_hosts: ~/.ssh/kh\n")
    assert "transport: known_hosts: for a transport of kind ssh, not slurmrestd" in msg
    msg = refused(d, "sites:\n  - name: a\n    transport: {kind: local, proxy_jump: gw}\n")
    assert "transport: proxy_jump: for a transport of kind ssh, not local" in msg


def test_env_defaults_and_paths_beside_the_sites_file(d, monkeypatch, tmp_path):
    monkeypatch.delenv("HPC_KEYS", raising=False)
    (d / "keys").mkdir()
    (d / "keys" / "id").write_text("x\n")
    (d / "keys" / "id").chmod(0o600)
    monkeypatch.chdir("/")
    t = loads(d, ssh_site(d, "host: login.example.org\nkey_file: ${HPC_KEYS:-keys}/id")
              ).sites[0].transport
    assert t.key_file == f"{d}/keys/id"


# -- 6. logins to a real sshd -----------------------------------------------------------------

@pytest.fixture
def no_home(tmp_path, monkeypatch) -> Path:
    """HOME in tmp_path (no default identities, no ~/.ssh/known_hosts of the machine's
    user) and no agent."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return home


async def _login(tmp_path: Path, transport: str, ssh_config: str = "",
                 known_hosts: str | None = None) -> str:
    """`echo in` on the site a sites file in tmp_path describes (its `transport` lines)."""
    (tmp_path / "ssh_config").write_text(ssh_config)
    (tmp_path / "ssh_config").chmod(0o600)
    if known_hosts is not None:
        (tmp_path / "known_hosts").write_text(known_hosts)
    cfg = loads(tmp_path, "sites:\n  - name: hpc\n    transport:\n"
                          f"      ssh_config: {tmp_path}/ssh_config\n"
                          f"      known_hosts: {tmp_path}/known_hosts\n"
                          "      connect_timeout_s: 10\n"
                          + "".join(f"      {ln}\n" for ln in transport.strip().split("\n")))
    t = make_transport(cfg.sites[0].transport, "hpc", reconnect_attempts=1)
    try:
        return (await t.run(["echo", "in"])).stdout
    finally:
        await t.close()


def _own_key(tmp_path: Path, source: Path, name: str = "id_hpc") -> Path:
    key = tmp_path / name
    key.write_bytes(source.read_bytes())
    key.chmod(0o600)
    return key


@pytest.mark.parametrize("kind", ["ed25519", "ecdsa", "rsa"])
async def test_a_login_with_each_kind_of_key(sshd, tmp_path, no_home, kind):
    key = keygen(tmp_path / f"id_{kind}", kind)
    with open(sshd.base / f"authorized_keys.{sshd.user}", "a") as fh:
        fh.write(Path(f"{key}.pub").read_text())
    got = await _login(tmp_path, f"host: 127.0.0.1\nport: {sshd.port}\nuser: {sshd.user}\n"
                                 f"key_file: {key}\nuse_agent: false",
                       known_hosts=sshd.known_hosts_line())
    assert got == "in\n"


async def test_a_hashed_known_hosts_with_the_port_in_brackets(sshd, tmp_path, no_home):
    (tmp_path / "known_hosts").write_text(sshd.known_hosts_line())
    subprocess.run(["ssh-keygen", "-q", "-H", "-f", str(tmp_path / "known_hosts")],
                   check=True, capture_output=True)
    assert (tmp_path / "known_hosts").read_text().startswith("|1|")
    key = _own_key(tmp_path, sshd.client_key)
    got = await _login(tmp_path, f"host: 127.0.0.1\nport: {sshd.port}\nuser: {sshd.user}\n"
                                 f"key_file: {key}\nuse_agent: false")
    assert got == "in\n"


@pytest.mark.parametrize("ssh_config", [
    "", "Host *\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n",
    "Host *\n  StrictHostKeyChecking accept-new\n  CheckHostIP no\n"])
async def test_a_host_key_listed_without_its_port_is_not_the_hosts(sshd, tmp_path, no_home,
                                                                  ssh_config):
    """ssh looks a host off port 22 up as `[host]:port` only; ssh_config's own leniency is
    not the engine's (only the sites file's trust_on_first_use adds a key)."""
    line = sshd.known_hosts_line().replace(f"[127.0.0.1]:{sshd.port}", "127.0.0.1")
    key = _own_key(tmp_path, sshd.client_key)
    with pytest.raises(HostKeyError) as e:
        await _login(tmp_path, f"host: 127.0.0.1\nport: {sshd.port}\nuser: {sshd.user}\n"
                               f"key_file: {key}\nuse_agent: false", ssh_config, line)
    assert f"host [127.0.0.1]:{sshd.port} is not in known_hosts" in str(e.value)
    assert f"ssh-keyscan -p {sshd.port} 127.0.0.1" in str(e.value)
    assert (tmp_path / "known_hosts").read_text() == line  # nothing added


@pytest.mark.parametrize("tofu", [False, True])
async def test_a_stale_rsa_key_of_a_re_keyed_host_is_a_change_not_a_new_host(
        sshd, tmp_path, no_home, tofu):
    """known_hosts lists the login's old RSA key; the login now offers ed25519 only. As
    ssh (StrictHostKeyChecking yes), refused, and trust_on_first_use adds nothing."""
    old = f"[127.0.0.1]:{sshd.port} ssh-rsa {paramiko.RSAKey.generate(2048).get_base64()}\n"
    key = _own_key(tmp_path, sshd.client_key)
    with pytest.raises(HostKeyError, match=rf"HOST KEY FOR \[127\.0\.0\.1\]:{sshd.port} HAS "
                                           r"CHANGED: offered ssh-ed25519 .* has ssh-rsa"):
        await _login(tmp_path, f"host: 127.0.0.1\nport: {sshd.port}\nuser: {sshd.user}\n"
                               f"key_file: {key}\nuse_agent: false\n"
                               f"trust_on_first_use: {str(tofu).lower()}", known_hosts=old)
    assert (tmp_path / "known_hosts").read_text() == old


@pytest.mark.parametrize("text,said", [
    ("\ufeffHOSTLINE\n", "line 1 starts with a byte-order mark (a Windows editor's), so that "
                         "line is not read (by ssh either): save the file as UTF-8 without it"),
    ("# copied from the login\nKEYLINE root@login\n",
     "line 2 is a public key file's line (TYPE KEY COMMENT), not a known_hosts line, which "
     "starts with the host's name: `[HOST]:PORT TYPE KEY`")])
async def test_fault_a_known_hosts_line_ssh_does_not_read_either_is_named(
        sshd, tmp_path, no_home, text, said):
    """The host's key is in the file, but on a line ssh reads as no host's: the refusal
    said only "not in known_hosts". Still refused (ssh refuses too), now saying why."""
    hostline = sshd.known_hosts_line().strip()
    text = text.replace("HOSTLINE", hostline).replace("KEYLINE", hostline.split(" ", 1)[1])
    key = _own_key(tmp_path, sshd.client_key)
    with pytest.raises(HostKeyError) as e:
        await _login(tmp_path, f"host: 127.0.0.1\nport: {sshd.port}\nuser: {sshd.user}\n"
                               f"key_file: {key}\nuse_agent: false", known_hosts=text)
    assert "is not in known_hosts" in str(e.value)
    assert f"; {tmp_path}/known_hosts {said}" in str(e.value), str(e.value)
    assert (tmp_path / "known_hosts").read_text() == text


async def test_fault_a_login_whose_host_key_is_in_the_global_known_hosts_file(
        sshd, tmp_path, no_home):
    (tmp_path / "center_known_hosts").write_text(sshd.known_hosts_line())
    key = _own_key(tmp_path, sshd.client_key)
    got = await _login(tmp_path, f"host: hpc\nkey_file: {key}\nuse_agent: false",
                       f"Host hpc  # the cluster\n  HostName 127.0.0.1 # its login\n"
                       f"  Port {sshd.port} # not 22\n  User {sshd.user}\n"
                       f"  GlobalKnownHostsFile {tmp_path}/center_known_hosts\n", "")
    assert got == "in\n"


@pytest.fixture
def agent(tmp_path, monkeypatch) -> Iterator[Path]:
    """A real ssh-agent on a socket in tmp_path, as SSH_AUTH_SOCK; stopped after."""
    sock = tmp_path / "agent.sock"
    proc = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        subprocess.run(["sh", "-c", f'until [ -S "{sock}" ]; do sleep 0.05; done'],
                       timeout=20, check=True)
        monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
        yield sock
    finally:
        proc.terminate()
        proc.wait(10)


async def test_an_agent_holding_the_only_key(sshd, tmp_path, no_home, agent):
    key = _own_key(tmp_path, sshd.client_key, "locked")
    subprocess.run(["ssh-keygen", "-q", "-p", "-N", "secret", "-f", str(key)], check=True,
                   capture_output=True)
    unlocked = _own_key(tmp_path, sshd.client_key, "for_agent")
    subprocess.run(["ssh-add", "-q", str(unlocked)], check=True, capture_output=True)
    unlocked.unlink()  # the agent alone holds it now; the key on disk is locked
    got = await _login(tmp_path, f"host: 127.0.0.1\nport: {sshd.port}\nuser: {sshd.user}",
                       known_hosts=sshd.known_hosts_line())
    assert got == "in\n"


async def test_no_key_and_no_agent_says_what_was_looked_for(sshd, tmp_path, no_home):
    with pytest.raises(AuthError, match=r"hpc: authentication failed for "
                                        rf"{sshd.user}@127\.0\.0\.1:{sshd.port} \(tried no "
                                        r"credentials found \(no key_file, IdentityFile or "
                                        r"agent\)\)"):
        await _login(tmp_path, f"host: 127.0.0.1\nport: {sshd.port}\nuser: {sshd.user}",
                     known_hosts=sshd.known_hosts_line())


async def test_fault_an_identity_file_others_can_read_is_not_offered(sshd, tmp_path, no_home):
    """ssh ignores a private key of yours others can read (UNPROTECTED PRIVATE KEY FILE);
    the engine offered an ssh_config IdentityFile anyway, so a site logged in here and not
    with ssh. The refusal names the file and the fix."""
    key = _own_key(tmp_path, sshd.client_key)
    key.chmod(0o644)
    keygen(tmp_path / "id_other")
    config = (f"Host hpc\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
              f"  IdentityFile {tmp_path}/missing\n  IdentityFile {tmp_path}/id_other\n"
              f"  IdentityFile {key}\n")
    with pytest.raises(AuthError) as e:
        await _login(tmp_path, "host: hpc\nuse_agent: false", config,
                     sshd.known_hosts_line())
    assert "tried publickey id_other)" in str(e.value)
    assert f"IdentityFile {key} was not offered: it can be read by other users (mode 644), " \
           f"and ssh ignores such a key too: `chmod 600 {key}`" in str(e.value)
    key.chmod(0o600)
    assert await _login(tmp_path, "host: hpc\nuse_agent: false", config) == "in\n"


@pytest.mark.parametrize("hop", [
    "ProxyJump gw1,gw2  # two bastions",
    "ProxyCommand exec ssh -W %h:%p gw1"])  # fault: `exec` was refused
async def test_a_login_through_jump_hosts_of_ssh_config(sshd, tmp_path, no_home, hop):
    key = _own_key(tmp_path, sshd.client_key)
    hosts = "".join(f"Host {h}\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
                    f"  IdentityFile {key}\n" for h in ("gw1", "gw2", "hpc"))
    config = hosts.replace("Host hpc\n", f"Host hpc\n  {hop}\n")
    got = await _login(tmp_path, "host: hpc\nuse_agent: false", config,
                       sshd.known_hosts_line())
    assert got == "in\n"


async def test_fault_an_identity_file_not_there_is_named_in_the_refusal(sshd, tmp_path,
                                                                        no_home):
    """ssh_config's `IdentityFile ~/.ssh/id_hpc`, not made yet: the refusal said "no
    credentials found (no key_file, IdentityFile or agent)", as if none had been given. Its
    `~` is the password database's home, as ssh's."""
    config = (f"Host hpc\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
              "  IdentityFile ~/.ssh/id_hpc\n")
    with pytest.raises(AuthError) as e:
        await _login(tmp_path, "host: hpc\nuse_agent: false", config,
                     sshd.known_hosts_line())
    assert f"(tried no key could be offered); IdentityFile {ssh_home()}/.ssh/id_hpc was not " \
           "offered: it does not exist" in str(e.value), str(e.value)


@pytest.mark.parametrize("state", ["dead", "empty"])
async def test_fault_an_agent_that_is_gone_or_empty_is_said(sshd, tmp_path, no_home,
                                                            monkeypatch, state):
    """Agent-only users: SSH_AUTH_SOCK left from a closed tmux session, or an agent whose
    keys expired (`ssh-add -t`): the refusal said "no credentials found (... or agent)"."""
    if state == "dead":
        monkeypatch.setenv("SSH_AUTH_SOCK", str(tmp_path / "gone.sock"))
        said = f"the ssh-agent at {tmp_path}/gone.sock cannot be reached"
    else:
        proc = subprocess.Popen(["ssh-agent", "-D", "-a", str(tmp_path / "a.sock")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run(["sh", "-c", f'until [ -S "{tmp_path}/a.sock" ]; do sleep 0.05; done'],
                       timeout=20, check=True)
        monkeypatch.setenv("SSH_AUTH_SOCK", str(tmp_path / "a.sock"))
        said = f"the ssh-agent at {tmp_path}/a.sock holds no key (`ssh-add KEY` adds one)"
    try:
        with pytest.raises(AuthError) as e:
            await _login(tmp_path, f"host: 127.0.0.1\nport: {sshd.port}\nuser: {sshd.user}",
                         known_hosts=sshd.known_hosts_line())
    finally:
        if state == "empty":
            proc.terminate()
            proc.wait(10)
    assert said in str(e.value), str(e.value)


async def test_fault_hash_known_hosts_adds_a_host_trusted_on_first_use_hashed(
        sshd, tmp_path, no_home):
    """ssh_config's `HashKnownHosts yes`: ssh adds a new host under its hash; the engine
    wrote `[127.0.0.1]:PORT` in the clear, listing where the user logs in. The hashed line
    is then the one the next login checks."""
    key = _own_key(tmp_path, sshd.client_key)
    site = (f"host: hpc\nkey_file: {key}\nuse_agent: false\ntrust_on_first_use: true")
    config = (f"Host hpc\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
              "Host *\n  HashKnownHosts yes\n")
    assert await _login(tmp_path, site, config, "") == "in\n"
    added = (tmp_path / "known_hosts").read_text()
    assert added.startswith("|1|") and "127.0.0.1" not in added
    assert added.split()[1:] == sshd.known_hosts_line().split()[1:]
    assert await _login(tmp_path, site.replace("true", "false"), config) == "in\n"
    assert (tmp_path / "known_hosts").read_text() == added
