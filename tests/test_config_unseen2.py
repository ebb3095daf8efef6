"""Sites files as admins write them, second sweep: every transport kind with a key missing or
one too many, ports written as text, IPv6 literals and jump chains, `~` and `$VAR` in the
paths of keys and tokens, names twice in other cases, factors of 0 or below, partition
lists mistyped, bandwidth in other units, a slurmrestd token from the environment. Each
file loads with the meaning it says, or is refused with one line naming the file, the site,
the key, what is accepted and the line (the CLI exits 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sweep_helpers import key_files

from diamond_jupyter.config import FederationConfig, load_config
from diamond_jupyter.model import BadInput
from diamond_jupyter.transports.ssh import SSHTransport


@pytest.fixture
def d(tmp_path: Path) -> Path:
    key_files(tmp_path)
    (tmp_path / "ssh_config").write_text("Host gw\n  HostName gateway.example.org\n")
    return tmp_path


def write(d: Path, text: str) -> Path:
    path = d / "sites.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def loads(d: Path, text: str) -> FederationConfig:
    return load_config(write(d, text))


def refused(d: Path, text: str) -> str:
    """The one-line reason a sites file is refused; it names the file."""
    path = write(d, text)
    with pytest.raises(BadInput) as e:
        load_config(path)
    msg = str(e.value)
    assert msg.startswith(f"sites file {path}") and "\n" not in msg, msg
    return msg


def ssh(d: Path, lines: str, name: str = "a") -> str:
    """An SSH site whose key, known_hosts and ssh_config exist; `lines` go in transport."""
    return (f"sites:\n  - name: {name}\n    transport:\n"
            f"      known_hosts: {d}/known_hosts\n      key_file: {d}/id_ed25519\n"
            f"      ssh_config: {d}/ssh_config\n      use_agent: false\n"
            + "".join(f"      {ln}\n" for ln in lines.strip().splitlines()))


LOCAL = "sites:\n  - name: a\n    transport: {kind: local}\n"


# -- every kind of transport, a key missing or one too many -----------------------------------

@pytest.mark.parametrize("transport,want,line", [
    ("{kind: local, port: 22}", "transport: port: for a transport of kind ssh, not local", 3),
    ("{kind: local, user: alice}", "transport: user: for a transport of kind ssh, not local",
     3),
    ("{kind: local, url: 'http://r:6820'}", "url: for a transport of kind slurmrestd", 3),
    ("{kind: ssh}", "transport.host: an ssh site needs a host", 3),
    ("{kind: Local}", "transport.kind: Input should be 'ssh', 'local' or 'slurmrestd'", 3),
])
def test_a_transport_missing_a_key_or_given_another_kinds_names_it_and_its_line(
        d, transport, want, line):
    """Before: no line; an admin with forty sites had to search for the entry."""
    msg = refused(d, f"sites:\n  - name: a\n    transport: {transport}\n")
    assert "site 'a' (sites[0]): " in msg and want in msg
    assert msg.endswith(f" (line {line})"), msg


def test_a_rest_site_without_url_token_or_absolute_workdir_says_which(d):
    base = "sites:\n  - name: r\n    workdir: /home/u/.diamond\n    transport:\n" \
           "      kind: slurmrestd\n"
    msg = refused(d, base + "      token_file: /t\n")
    assert "a slurmrestd transport needs url (http://HOST:PORT) (line 2)" in msg
    msg = refused(d, base + "      url: http://rest:6820\n")
    assert "needs token_command or token_file (line 2)" in msg
    msg = refused(d, base + "      url: http://rest:6820\n      token_file: /t\n"
                            "      host: rest\n      port: 6820\n")
    assert "transport: host, port: for a transport of kind ssh, not slurmrestd (line 4)" in msg
    msg = refused(d, base.replace("/home/u/.diamond", "diamond") +
                  "      url: http://rest:6820\n      token_file: /t\n")
    assert "needs an absolute workdir" in msg


def test_a_file_door_of_kind_local_with_a_host_is_refused(d):
    msg = refused(d, "sites:\n  - name: r\n    workdir: /w\n"
                     "    transport: {kind: slurmrestd, url: 'http://r:6820', token_file: /t}\n"
                     "    files: {kind: local, host: login}\n")
    assert "site 'r' (sites[0]): files: host: for a transport of kind ssh, not local (line 5)" \
        in msg


# -- ports, hosts and jumps -----------------------------------------------------------------

@pytest.mark.parametrize("port,want", [("'2222'", 2222), ('"22"', 22), ("22.0", 22)])
def test_a_port_written_as_text_or_a_whole_float_is_that_port(d, port, want):
    cfg = loads(d, ssh(d, f"host: login.example.org\nport: {port}"))
    assert cfg.sites[0].transport.port == want
    assert SSHTransport(cfg.sites[0].transport, site="a").spec.port == want


def test_a_port_with_a_fraction_names_the_key_and_line(d):
    msg = refused(d, ssh(d, "host: login.example.org\nport: 22.5"))
    assert "transport.port: " in msg and "a plain number" in msg and msg.endswith("(line 9)")


@pytest.mark.parametrize("host,hostname,port", [
    ("'[fe80::1%eth0]:2222'", "fe80::1%eth0", 2222),
    ("'2001:db8::1'", "2001:db8::1", None),
    ("'[2001:db8::1]'", "2001:db8::1", None),
    ("login.example.org.", "login.example.org.", None),
])
def test_ipv6_literals_with_a_zone_or_without_brackets_and_a_rooted_fqdn(d, host, hostname,
                                                                         port):
    t = loads(d, ssh(d, f"host: {host}")).sites[0].transport
    assert (t.host, t.port) == (hostname, port)


def test_a_chain_of_three_jumps_in_every_hop_form_is_built_in_order(d):
    cfg = loads(d, ssh(d, "host: login.internal\n"
                          "proxy_jump: 'ssh://ops@gw:2201, bob@[2001:db8::9]:22,"
                          "bastion.example.org'"))
    t = SSHTransport(cfg.sites[0].transport, site="a")
    assert [(h.hostname, h.port) for h in t.jumps] == [
        ("gateway.example.org", 2201), ("2001:db8::9", 22), ("bastion.example.org", 22)]
    assert [h.user for h in t.jumps][:2] == ["ops", "bob"]


# -- `~` and $VAR in the paths of keys and tokens ---------------------------------------------

@pytest.mark.parametrize("written", ["$KEYS/id_ed25519", "${KEYS}/id_ed25519"])
def test_a_key_file_through_an_environment_variable_is_that_file(d, monkeypatch, written):
    """Before: `$KEYS/id_ed25519` became SITES_DIR/$KEYS/id_ed25519 and was refused as
    missing (or a token_file so named was accepted and failed at the first submit)."""
    monkeypatch.setenv("KEYS", str(d))
    cfg = loads(d, ssh(d, "host: h").replace(f"key_file: {d}/id_ed25519", f"key_file: {written}"))
    assert cfg.sites[0].transport.key_file == str(d / "id_ed25519")


def test_a_path_through_an_unset_variable_names_the_variable(d, monkeypatch):
    monkeypatch.delenv("NO_SUCH_DIR", raising=False)
    msg = refused(d, ssh(d, "host: h").replace(f"known_hosts: {d}/known_hosts",
                                               "known_hosts: $NO_SUCH_DIR/known_hosts"))
    assert "transport.known_hosts: '$NO_SUCH_DIR/known_hosts' names $NO_SUCH_DIR, which is not " \
           "set in this environment" in msg and msg.endswith("(line 4)")
    msg = refused(d, ssh(d, "host: h").replace(f"known_hosts: {d}/known_hosts",
                                               "known_hosts: '$/known_hosts'"))
    assert "a $ that starts no variable" in msg


def test_a_slurmrestd_token_from_the_environment(d, monkeypatch):
    """The token in a file named by a variable ($XDG_RUNTIME_DIR), or printed from one."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(d / "run"))
    cfg = loads(d, "sites:\n  - name: r\n    workdir: /w\n    transport:\n"
                   "      kind: slurmrestd\n      url: 'http://[2001:db8::5]:6820/'\n"
                   "      token_file: ${XDG_RUNTIME_DIR}/slurm.jwt\n"
                   "  - name: r2\n    workdir: /w\n    auto: false\n    transport:\n"
                   "      kind: slurmrestd\n      url: https://rest.example.org\n"
                   "      token_command: printenv SLURM_JWT\n")
    assert cfg.site("r").transport.token_file == f"{d}/run/slurm.jwt"
    assert cfg.site("r2").transport.token_command == ["printenv", "SLURM_JWT"]
    msg = refused(d, "sites:\n  - name: r\n    workdir: /w\n    transport:\n"
                     "      kind: slurmrestd\n      url: https://rest.example.org\n"
                     "      token_env: SLURM_JWT\n")
    assert "transport.token_env: unknown key (did you mean token_file?" in msg
    assert msg.endswith("(line 7)")


def test_a_key_under_the_home_is_still_left_to_the_connect(d, monkeypatch):
    monkeypatch.setenv("HOME", str(d / "home"))
    cfg = loads(d, ssh(d, "host: h").replace(f"key_file: {d}/id_ed25519",
                                             "key_file: ~/.ssh/id_ed25519"))
    assert cfg.sites[0].transport.key_file == "~/.ssh/id_ed25519"


# -- names, factors, partitions, bandwidth ----------------------------------------------------

def test_a_site_given_again_in_capitals_with_other_settings_is_refused(d):
    msg = refused(d, "sites:\n  - name: Alpha\n    transport: {kind: local}\n"
                     "  - name: ALPHA\n    transport: {kind: local, command_timeout_s: 5}\n")
    assert "'Alpha' (sites[0]) and 'ALPHA' (sites[1]) differ only in case" in msg
    assert msg.endswith("(line 4)"), msg  # the second one's name


@pytest.mark.parametrize("entry,key,want", [
    ("charge_factor: 0", "charge_factor", "greater than 0"),
    ("charge_factor: -0.5", "charge_factor", "greater than 0"),
    ("speed_factor: 0.0", "speed_factor", "greater than 0"),
    ("speed_factor: 2x", "speed_factor", "a plain number"),
    ("charge_factor: 50%", "charge_factor", "a plain number"),
])
def test_factors_of_zero_below_or_with_units_are_refused_with_the_line(d, entry, key, want):
    msg = refused(d, LOCAL + f"    {entry}\n")
    assert f"site 'a' (sites[0]): {key}: " in msg and want in msg
    assert msg.endswith("(line 4)")


def test_a_factor_in_quotes_is_that_number(d):
    s = loads(d, LOCAL + "    speed_factor: '1.5'\n    charge_factor: \"2\"\n").sites[0]
    assert (s.speed_factor, s.charge_factor) == (1.5, 2.0)


@pytest.mark.parametrize("entry,want", [
    ("allowed_partitions: debug,regular", "allowed_partitions: Input should be a valid list, "
                                          "got one value"),
    ("allowed_partitions: [debug regular]", "allowed_partitions.0: must be one word"),
    ("partitions: {debug: {max_time: 30}}", "partitions: unknown key: per-partition "
                                            "settings are not read"),
    ("allowed_partitions: [debug, 1]", "allowed_partitions.1: Input should be a valid string, "
                                       "got the number 1"),
])
def test_partition_lists_mistyped_name_the_key_and_the_line(d, entry, want):
    msg = refused(d, LOCAL + f"    {entry}\n")
    assert want in msg and msg.endswith("(line 4)"), msg


@pytest.mark.parametrize("written,mbps", [
    ("10000", 10000.0), ("'10000'", 10000.0), ("10 Gbps", 10000.0), ("10Gbit/s", 10000.0),
    ("1.25 GB/s", 10000.0), ("100 MiB/s", 100 * 2 ** 20 * 8 / 1e6), ("800 Mb/s", 800.0),
    ("1e4", 10000.0),
])
def test_bandwidth_in_other_units_is_read_as_megabits_per_second(d, written, mbps):
    """Before: `10 Gbps` was kept as text and placement's float() of it raised ValueError
    at the first placement; `1.25 GB/s` the same."""
    s = loads(d, LOCAL + f"    metadata: {{bandwidth_mbps: {written}}}\n").sites[0]
    assert s.metadata["bandwidth_mbps"] == pytest.approx(mbps)


@pytest.mark.parametrize("entry,want", [
    ("{bandwidth_mbps: 0}", "bandwidth_mbps: expected a positive number of megabits per "
                            "second"),
    ("{bandwidth_mbps: -100}", "expected a positive number"),
    ("{bandwidth_mbps: 10G}", "not '10G'"),
    ("{bandwidth_mbps: fast}", "not 'fast'"),
    ("{bandwidth: 10 Gbps}", "metadata: bandwidth: did you mean bandwidth_mbps?"),
    ("{bandwith_mbps: 1000}", "bandwith_mbps: did you mean bandwidth_mbps?"),
    ("{bandwidth_gbps: 10}", "bandwidth_gbps: did you mean bandwidth_mbps?"),
])
def test_a_bandwidth_of_zero_without_a_unit_or_under_another_key_is_refused(d, entry, want):
    """Before: 0 divided by zero in placement; `bandwidth: 10 Gbps` was ignored (placement
    used its default bandwidth without a word)."""
    msg = refused(d, LOCAL + f"    metadata: {entry}\n")
    assert "site 'a' (sites[0]): metadata: " in msg and want in msg, msg
    assert msg.endswith("(line 4)")


def test_other_metadata_keys_stay_free(d):
    s = loads(d, LOCAL + "    metadata: {door_to: beta, architecture: aarch64, notes: x}\n")
    assert s.sites[0].metadata == {"door_to": "beta", "architecture": "aarch64", "notes": "x"}


# -- Windows editors, tabs, anchors ------------------------------------------------------------

def test_crlf_and_a_bom_from_a_windows_editor_load(d):
    path = d / "sites.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + LOCAL.replace("\n", "\r\n").encode()
                     + b"    default_partition: debug\r\n")
    cfg = load_config(path)
    assert cfg.sites[0].default_partition == "debug"


def test_a_bad_value_reached_through_a_merge_key_names_the_line_it_is_written_on(d):
    msg = refused(d, "x-login: &login\n  kind: local\n  command_timeout_s: -5\n"
                     "sites:\n  - name: a\n    transport: {<<: *login}\n")
    assert "site 'a' (sites[0]): transport.command_timeout_s: " in msg
    assert msg.endswith("(line 3)"), msg


def test_the_cli_exits_2_naming_the_file_key_and_line(d):
    path = write(d, LOCAL + "    metadata: {bandwidth_mbps: 0}\n")
    env = {**os.environ, "DIAMOND_DATA_DIR": str(d / "data"), "HOME": str(d),
           "DIAMOND_CONFIG": str(path)}
    res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "sites"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 2, (res.stdout, res.stderr)
    line = res.stderr.strip()
    assert line.startswith(f"diamond: sites file {path}: site 'a' (sites[0]): metadata: "
                           "bandwidth_mbps: ") and line.endswith("(line 4)")


def test_a_tab_after_a_key_says_to_put_a_space_there_not_to_indent(d):
    """Before: "indent with spaces", about a tab that was not indentation."""
    msg = refused(d, "sites:\n  - name:\ta\n    transport: {kind: local}\n")
    assert msg.endswith("line 2, column 10: found character '\\t' that cannot start any token "
                        "(a tab after other text on the line, e.g. between a key and its "
                        "value: put a space there instead)"), msg
    msg = refused(d, "sites:\n\t- name: a\n")
    assert msg.endswith("(indent with spaces: YAML does not allow tabs there)")


def test_the_store_path_through_a_variable_is_that_path(d, monkeypatch):
    """Before: `store: $STATE/diamond.sqlite` made a directory literally named `$STATE`
    beside the sites file, and an unset variable did too."""
    monkeypatch.setenv("STATE", str(d / "state"))
    assert loads(d, "store: ${STATE}/diamond.sqlite\n" + LOCAL).store == \
        f"{d}/state/diamond.sqlite"
    monkeypatch.delenv("STATE")
    msg = refused(d, "store: $STATE/diamond.sqlite\n" + LOCAL)
    assert "store: '$STATE/diamond.sqlite' names $STATE, which is not set" in msg
    assert msg.endswith("(line 1)")


@pytest.mark.parametrize("text,want,line", [
    ("sites:\n  - name: a\n    transport: local\n",
     "site 'a' (sites[0]): transport: Input should be a valid mapping, not 'local': write "
     "transport: {kind: local}", 3),
    ("sites:\n  - name: a\n    transport: login.example.org\n",
     "transport: Input should be a valid mapping, not 'login.example.org': write transport: "
     "{host: login.example.org}", 3),
    ("sites:\n  - name: a\n    transport: {kind: local}\n  - beta\n",
     "site (sites[1]): Input should be a valid mapping, not 'beta': each site is a mapping, "
     "e.g. `- name: mycluster`", 4),
    ("sites:\n  -\n  - name: b\n    transport: {kind: local}\n",
     "site (sites[0]): Input should be a valid mapping, not None: each site is a mapping", 2),
])
def test_a_transport_or_site_written_as_one_word_says_how_to_write_it(d, text, want, line):
    """Before: "Input should be a valid dictionary or instance of TransportConfig", a class
    name the file never shows."""
    msg = refused(d, text)
    assert want in msg and msg.endswith(f"(line {line})"), msg
    assert "instance of" not in msg


def test_a_port_in_the_host_and_the_same_port_as_a_float_agree(d):
    """Before: `host: alice@h:2222` with `port: 2222.0` was refused: "host gives port 2222
    and port gives 2222.0"."""
    t = loads(d, ssh(d, "host: alice@login.example.org:2222\nport: 2222.0")).sites[0].transport
    assert (t.host, t.user, t.port) == ("login.example.org", "alice", 2222)


@pytest.mark.parametrize("value,shown", [
    ("$HOME/slurm.conf", "'$HOME'"), ("'${SCRATCH}/slurm.conf'", "'${SCRATCH}'"),
    ("~/slurm.conf", "'~/'"), ("'$(cat ~/.cluster)'", "'$('"), ("'`hostname`'", "'`'"),
])
def test_an_env_value_a_shell_would_expand_is_refused_naming_the_preamble(d, value, shown):
    """Before: `env: {SLURM_CONF: $HOME/slurm.conf}` was accepted and every scheduler command
    got SLURM_CONF set to the literal text `$HOME/slurm.conf` (env values reach the command
    as written)."""
    msg = refused(d, LOCAL + f"    env: {{SLURM_CONF: {value}}}\n")
    assert "site 'a' (sites[0]): env.SLURM_CONF: " in msg
    assert f"is passed as written: no shell expands {shown} in an env value" in msg
    assert "export it in the preamble" in msg and msg.endswith("(line 4)")


def test_env_values_that_are_plain_text_with_a_dollar_are_kept(d):
    s = loads(d, LOCAL + "    env: {SLURM_CONF: /etc/slurm/c2.conf, PRICE: '5 $ per hour'}\n")
    assert s.sites[0].env == {"SLURM_CONF": "/etc/slurm/c2.conf", "PRICE": "5 $ per hour"}
