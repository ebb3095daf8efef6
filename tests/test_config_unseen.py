"""Sites files as centers and new users write them: realistic ones load and build the
transports they describe (checked without connecting); careless and hostile ones are
refused with one line naming the file, the site, the key and what would be accepted, and
`diamond` exits 2 on them. Nothing from a sites file reaches ssh or a shell as an option."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from sweep_helpers import key_files
from test_config_unseen2 import loads, refused, write

from diamond_jupyter.config import (
    MAX_SITES_FILE_BYTES,
    FederationConfig,
    SiteConfig,
    TransportConfig,
    load_config,
)
from diamond_jupyter.model import BadInput
from diamond_jupyter.sites import Site
from diamond_jupyter.transports.base import render_command
from diamond_jupyter.transports.ssh import SSHTransport

LOCAL = "transport: {kind: local}"


@pytest.fixture
def d(tmp_path: Path) -> Path:
    """A center's directory: the sites file goes here, beside a private key (0600), a
    known_hosts file and an ssh_config with a Host alias."""
    key_files(tmp_path)
    (tmp_path / "ssh_config").write_text(
        "Host perl\n  HostName perlmutter-p1.nersc.gov\n  User alice\n  Port 22\n"
        "Host gw\n  HostName gateway.example.org\n  Port 2201\n")
    return tmp_path


def site(body: str, name: str = "a", local: bool = True) -> str:
    """One site entry (YAML), indented under `sites:`."""
    lines = [f"  - name: {name}"] + ([f"    {LOCAL}"] if local else [])
    lines += [f"    {ln}" for ln in body.strip("\n").splitlines() if ln.strip()]
    return "sites:\n" + "\n".join(lines) + "\n"


def ssh_site(d: Path, transport: str, name: str = "a") -> str:
    return (f"sites:\n  - name: {name}\n    transport:\n"
            f"      known_hosts: {d}/known_hosts\n      key_file: {d}/id_ed25519\n"
            f"      ssh_config: {d}/ssh_config\n      use_agent: false\n"
            + "".join(f"      {ln}\n" for ln in transport.strip().splitlines()))


def transport_of(cfg: FederationConfig, name: str) -> SSHTransport:
    """The SSH transport a site entry builds, without connecting."""
    t = SSHTransport(cfg.site(name).transport, site=name)
    assert t._conn is None and t.connections_opened == 0
    return t


# -- 1. realistic files ---------------------------------------------------------------------

def test_a_center_with_several_clusters_behind_one_login_builds_every_hop(d):
    """Anchors and merge keys for the shared settings, a jump host, a chain of two, an
    ssh_config alias and a non-default port: every hop is a host, never an option."""
    cfg = loads(d, f"""
x-login: &login
  key_file: id_ed25519          # beside the sites file
  known_hosts: {d}/known_hosts
  ssh_config: {d}/ssh_config
  use_agent: false
  user: alice
sites:
  - name: perlmutter
    transport: {{<<: *login, host: perl}}
    workdir: $SCRATCH/diamond
  - name: muller-gpu
    transport: {{<<: *login, host: muller.nersc.gov, port: 2222, proxy_jump: gw}}
  - name: dtn.far
    transport: {{<<: *login, host: dtn01.internal, proxy_jump: "bob@gw:2201,[2001:db8::7]:22"}}
    auto: false
store: state/diamond.sqlite
""")
    assert [s.name for s in cfg.sites] == ["perlmutter", "muller-gpu", "dtn.far"]
    assert cfg.store == str(d / "state/diamond.sqlite")  # relative to the sites file
    perl = transport_of(cfg, "perlmutter")
    assert (perl.spec.hostname, perl.spec.port, perl.spec.user) == \
        ("perlmutter-p1.nersc.gov", 22, "alice")
    assert perl.spec.identity_files[0] == str(d / "id_ed25519")
    gpu = transport_of(cfg, "muller-gpu")
    assert gpu.spec.port == 2222
    assert [(h.hostname, h.port) for h in gpu.jumps] == [("gateway.example.org", 2201)]
    far = transport_of(cfg, "dtn.far")
    assert [(h.user, h.hostname, h.port) for h in far.jumps] == \
        [("bob", "gateway.example.org", 2201), (far.jumps[1].user, "2001:db8::7", 22)]
    for t in (perl, gpu, far):
        for spec in [*t.jumps, t.spec]:
            assert not spec.hostname.startswith("-") and not spec.user.startswith("-")


def test_a_sites_file_with_a_top_level_key_it_does_not_know_is_refused_naming_it(d):
    msg = refused(d, "defaults: {}\n" + site(""))
    assert "defaults: unknown key" in msg and "accepted: sites, store, log_tail_bytes" in msg


@pytest.mark.parametrize("host,user,hostname,port", [
    ("alice@login.example.org:2222", "alice", "login.example.org", 2222),
    ("alice@login.example.org", "alice", "login.example.org", None),
    ("login.example.org:2200", None, "login.example.org", 2200),
    ("'[::1]:2222'", None, "::1", 2222),
    ("'[2001:db8::10]'", None, "2001:db8::10", None),
    ("2001:db8::10", None, "2001:db8::10", None),
    ("ssh://bob@10.0.0.5:22", "bob", "10.0.0.5", 22),
])
def test_user_at_host_port_and_ipv6_forms_are_split(d, host, user, hostname, port):
    """`alice@login:2222` in host was taken as the host name itself: DNS failed at the
    first connect, or paramiko tried a host called `alice@login`."""
    cfg = loads(d, ssh_site(d, f"host: {host}"))
    t = cfg.sites[0].transport
    assert (t.host, t.user, t.port) == (hostname, user, port)
    spec = transport_of(cfg, "a").spec
    assert spec.hostname == hostname and spec.port == (port or 22)


def test_a_user_or_port_given_twice_must_agree(d):
    msg = refused(d, ssh_site(d, "host: alice@login.example.org\nuser: bob"))
    assert "site 'a' (sites[0]): transport: host: " in msg or "host gives user alice" in msg
    assert "host gives user alice and user gives bob" in msg
    loads(d, ssh_site(d, "host: alice@login.example.org:22\nuser: alice\nport: 22"))


def test_scheduler_paths_preamble_and_env_as_an_admin_writes_them(d, tmp_path, monkeypatch):
    """A relative or `~/` command path is in the login's home; `~/bin/sbatch` was quoted
    and never expanded, so the site's every submit failed with `not found`."""
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    fake = home / "bin" / "sinfo"
    fake.write_text('#!/bin/sh\necho "sinfo $MODULEPATH_SET $*"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    cfg = loads(d, site("""
scheduler: slurm
commands: {sbatch: /opt/slurm/23.11/bin/sbatch, sinfo: ~/bin/sinfo, squeue: bin/squeue}
preamble: |
  export MODULEPATH_SET=yes
  module() { :; }; module load slurm
env: {SLURM_CONF: /etc/slurm/cluster2.conf, SQUEUE_ALL: "1"}
""", name="cori"))
    s = Site(cfg.site("cori"))
    assert s._argv(["sbatch", "--parsable"]) == ["/opt/slurm/23.11/bin/sbatch", "--parsable"]
    assert s._argv(["env", "-u", "X", "squeue"])[-1] == "bin/squeue"
    assert s._argv(["sinfo"]) == ["./bin/sinfo"]
    res = asyncio.run(s.run(["sinfo", "-h"], scheduler=True))
    assert res.stdout.strip() == "sinfo yes -h"


def test_workdir_in_scratch_is_found_on_the_site(d, monkeypatch):
    """`workdir: $SCRATCH/diamond` was a directory literally named `$SCRATCH` in the home."""
    monkeypatch.setenv("SCRATCH", str(d / "scratch"))
    cfg = loads(d, site("workdir: $SCRATCH/diamond") +
                site("workdir: ${HOME}/.diamond-b", name="b")[len("sites:\n"):])
    assert cfg.site("b").workdir == "~/.diamond-b"  # $HOME is the home: ~
    s = Site(cfg.site("a"))
    asyncio.run(s.know_home())
    assert s.workdir == f"{d}/scratch/diamond" and s.event_file.startswith(f"{d}/scratch/")
    monkeypatch.delenv("SCRATCH")
    s = Site(cfg.site("a"))
    with pytest.raises(Exception, match=r"needs \$SCRATCH, which the login's environment"):
        asyncio.run(s.know_home())


@pytest.mark.parametrize("workdir,want", [
    ("$SCRATCH/$USER", "one variable is accepted, at the start"),
    ("/scratch/$USER/diamond", "one variable is accepted, at the start"),
    ("~alice/diamond", "~user paths are not supported"),
    ("''", "must be a directory"),
    ('"/scratch/x\\ny"', "must be one line"),
])
def test_workdirs_that_would_not_mean_what_they_say_are_refused(d, workdir, want):
    msg = refused(d, site(f"workdir: {workdir}"))
    assert "site 'a' (sites[0]): workdir: " in msg and want in msg


def test_hostile_workdirs_stay_one_quoted_path_under_the_home(d):
    """`-delete` or `x; id` is a directory name in the home, passed as one argument."""
    cfg = loads(d, site("workdir: -delete") +
                site("workdir: 'x; id'", name="b")[len("sites:\n"):])
    for name, tail in (("a", "/-delete"), ("b", "/x; id")):
        s = Site(cfg.site(name))
        s._home = "/home/u"
        assert s.workdir == "/home/u" + tail
        line = render_command(["mkdir", "-p", "--", s.workdir])
        assert shlex.split(line.split("exec ", 1)[1])[-1] == s.workdir


def test_partitions_accounts_and_their_defaults(d):
    cfg = loads(d, site("allowed_partitions: [debug, regular]\ndefault_partition: regular\n"
                        "default_account: m1234"))
    assert Site(cfg.site("a")).partition(None) == "regular"
    msg = refused(d, site("allowed_partitions: [debug]\ndefault_partition: regular"))
    assert "default_partition 'regular' is not in allowed_partitions (debug)" in msg
    assert "allowed_partitions: an empty list allows no partition, which would refuse " \
        "every job" in refused(
        d, site("allowed_partitions: []"))
    msg = refused(d, site("allowed_partitions: debug"))
    assert "allowed_partitions: Input should be a valid list, got one value (write a list" \
        in msg


@pytest.mark.parametrize("key,value", [
    ("default_partition", '"debug\\n#SBATCH --uid=0"'),
    ("default_partition", "--reservation=x"),
    ("default_account", "'m 1234'"),
    ("allowed_partitions", "['-p', debug]"),
])
def test_a_partition_or_account_that_would_break_a_directive_is_refused(d, key, value):
    """A newline in default_partition ended the `#SBATCH --partition=` line and started a
    shell line in every rendered script (prepare() copies it without validation)."""
    msg = refused(d, site(f"{key}: {value}"))
    assert f"site 'a' (sites[0]): {key}" in msg
    assert "must be one line" in msg or "must be one word, not starting with -" in msg


def test_log_tail_bytes_and_hedge_false(d):
    cfg = loads(d, "log_tail_bytes: 4194304\n" + site("hedge: false\nauto: no"))
    assert cfg.log_tail_bytes == 4 << 20 and cfg.sites[0].hedge is False
    assert cfg.sites[0].auto is False  # YAML 1.1: no is false
    assert loads(d, site('hedge: "no"')).sites[0].hedge is False
    assert "hedge: Input should be a valid boolean" in refused(d, site("hedge: nope"))
    assert "(true or false)" in refused(d, site("hedge: nope"))
    msg = refused(d, "log_tail_bytes: 1000000000000000000000000000000\n" + site(""))
    assert "log_tail_bytes: Input should be less than or equal to 1073741824" in msg
    msg = refused(d, "log_tail_bytes: 1e99\n" + site(""))  # YAML 1.1: a string
    assert "log_tail_bytes: " in msg and "a plain number" in msg


def test_slurmrestd_entries_take_the_token_command_as_one_line_and_files_beside(d):
    (d / "jwt").write_text("x")
    (d / "jwt").chmod(0o600)  # a JWT others can read is refused (test_config_unseen7)
    cfg = loads(d, """
sites:
  - name: campus-rest
    auto: false
    workdir: /home/alice/.diamond
    transport:
      kind: slurmrestd
      url: https://slurmrestd.campus.example.org:6820/
      user: alice
      token_command: scontrol token lifespan=3600
  - name: campus-rest2
    workdir: /home/alice/.diamond
    transport: {kind: slurmrestd, url: "http://[::1]:6820", token_file: jwt}
""")
    assert cfg.site("campus-rest").transport.token_command == \
        ["scontrol", "token", "lifespan=3600"]
    assert cfg.site("campus-rest2").transport.token_file == str(d / "jwt")


def test_a_token_inline_in_the_url_is_refused_without_showing_it(d):
    msg = refused(d, site("""
workdir: /w
transport: {kind: slurmrestd, url: "https://alice:eyJhbGciOi.SECRET.x@rest:6820", token_file: /t}
""", local=False))
    assert "transport.url: url must not carry a user or password" in msg
    assert "SECRET" not in msg and "eyJ" not in msg
    msg = refused(d, site("transport: {kind: slurmrestd, token: eyJhbG.SECRET.x}", local=False))
    assert "transport.token: unknown key" in msg and "SECRET" not in msg


@pytest.mark.parametrize("written,scheduler,flavor", [
    ("SLURM", "slurm", None), ("PBSPro", "pbs", None), ("OpenPBS", "pbs", None),
    ("torque", "pbs", "torque"), ("Grid Engine", "sge", None), ("uge", "sge", None),
    ("lsf", "lsf", None), ("flux", "flux", None), ("sge", "sge", None),
])
def test_schedulers_are_read_by_the_names_centers_give_them(d, written, scheduler, flavor):
    """`scheduler: SLURM` or `PBSPro` was refused as unknown."""
    s = loads(d, site(f"scheduler: {written}")).sites[0]
    assert (s.scheduler, s.flavor) == (scheduler, flavor)
    Site(s)  # the dialect exists


def test_an_unknown_scheduler_lists_the_accepted_ones(d):
    msg = refused(d, site("scheduler: cobalt"))
    assert "scheduler: Input should be 'slurm', 'pbs', 'lsf', 'flux' or 'sge'" in msg
    msg = refused(d, site("sheduler: pbs"))
    assert "sheduler: unknown key (did you mean scheduler?" in msg


def test_globus_ids_and_factors(d):
    s = loads(d, site("globus_collection: 6c54cade-bde5-45c1-bdea-f4bd71dba2cc\n"
                      "globus_path_map: {/global/cfs/: /}\ncharge_factor: 0.5\n"
                      "speed_factor: 2\nmetadata: {bandwidth_mbps: 10000}")).sites[0]
    assert s.speed_factor == 2.0 and s.metadata["bandwidth_mbps"] == 10000
    assert "globus_collection: expected a Globus collection id, a UUID" in refused(
        d, site("globus_collection: my-collection"))
    for bad in ("charge_factor: 0", "speed_factor: -2", "charge_factor: .inf",
                "speed_factor: .nan"):
        msg = refused(d, site(bad))
        assert f"site 'a' (sites[0]): {bad.split(':')[0]}: " in msg, msg


# -- 2. careless files ----------------------------------------------------------------------

def test_a_tab_in_the_indentation_says_where_and_what_to_do(d):
    msg = refused(d, "sites:\n\t- name: a\n")
    assert "line 2, column 1" in msg and "indent with spaces" in msg


@pytest.mark.parametrize("entry,where,near", [
    ("transport: {hostname: login.example.org}", "transport.hostname", "host"),
    ("transport: {kind: local, knownhosts: /x}", "transport.knownhosts", "known_hosts"),
    ("default_partiton: debug", "default_partiton", "default_partition"),
    ("allowed_partition: [debug]", "allowed_partition", "allowed_partitions"),
    ("enviroment: {A: b}", "enviroment", None),
])
def test_a_misspelt_key_names_the_key_a_near_one_and_the_accepted_ones(d, entry, where, near):
    """`Extra inputs are not permitted` said neither what was meant nor what is accepted."""
    msg = refused(d, site(entry, local=entry.startswith("transport") is False))
    assert f"site 'a' (sites[0]): {where}: unknown key (" in msg
    if near:
        assert f"did you mean {near}?" in msg
    assert "accepted: " in msg and ("workdir" in msg or "known_hosts" in msg)


@pytest.mark.parametrize("port,want", [
    ('"22a"', "a plain number"), ("0", "greater than or equal to 1"),
    ("70000", "less than or equal to 65535"), ("-22", "greater than or equal to 1"),
])
def test_a_port_out_of_range_or_not_a_number_is_refused(d, port, want):
    """Port 0 and 70000 were accepted and failed at connect time."""
    msg = refused(d, ssh_site(d, f"host: login.example.org\nport: {port}"))
    assert "site 'a' (sites[0]): transport.port: " in msg and want in msg


@pytest.mark.parametrize("key,value", [
    ("command_timeout_s", "-1"), ("command_timeout_s", ".inf"), ("command_timeout_s", ".nan"),
    ("connect_timeout_s", "0"), ("connect_timeout_s", "-5"), ("keepalive_s", "-30"),
])
def test_timeouts_must_be_finite_and_positive(d, key, value):
    """An infinite command timeout or a negative connect timeout was accepted."""
    msg = refused(d, ssh_site(d, f"host: h\n{key}: {value}"))
    assert f"transport.{key}: " in msg


def test_a_site_given_twice_is_refused_also_when_only_the_case_differs(d):
    msg = refused(d, site("") + site("", name="a")[len("sites:\n"):])
    assert "site name 'a' is used twice (sites[0] and sites[1])" in msg
    msg = refused(d, site("", name="Alpha") + site("", name="alpha")[len("sites:\n"):])
    assert "'Alpha' (sites[0]) and 'alpha' (sites[1]) differ only in case" in msg
    with pytest.raises(ValueError, match="differ only in case"):
        FederationConfig(sites=[SiteConfig(name="X"), SiteConfig(name="x")])


def test_a_key_given_twice_in_one_mapping_is_refused_with_both_lines(d):
    """PyYAML kept the last: `scheduler: slurm` then `scheduler: pbs` made a PBS site."""
    msg = refused(d, site("scheduler: slurm\nscheduler: pbs"))
    assert "key 'scheduler' is given twice (first on line 4)" in msg and "line 5" in msg
    msg = refused(d, "sites:\n  - name: a\n    transport: {kind: local, kind: ssh}\n")
    assert "key 'kind' is given twice" in msg


def test_merge_keys_still_override_as_yaml_means_them(d):
    cfg = loads(d, "sites:\n  - &first\n    name: a\n"
                   "    transport: {kind: local, command_timeout_s: 60}\n"
                   "  - <<: *first\n    name: b\n"
                   "    transport: {kind: local, command_timeout_s: 90}\n")
    assert [s.transport.command_timeout_s for s in cfg.sites] == [60, 90]


@pytest.mark.parametrize("text,want", [
    ("", "lists no sites"),
    ("# nothing yet\n", "lists no sites"),
    ("sites: []\n", "lists no sites"),
    ("sites:\n", "lists no sites"),
    ("- name: a\n", "a list of 1 site(s) with no `sites:` above it (line 1)"),
    ("alpha\n", "holds one value, 'alpha' (line 1), not a mapping: expected `sites:`"),
    ("sites:\n  alpha: {scheduler: slurm}\n", "sites: Input should be a valid list, got a "
                                               "mapping"),
])
def test_an_empty_or_wrongly_shaped_file_says_what_is_expected(d, text, want):
    """An empty file gave a federation of no sites: `diamond sites` printed nothing."""
    assert want in refused(d, text)


@pytest.mark.parametrize("name,want", [
    ("auto", "'auto' is reserved"), ("AUTO", "'AUTO' is reserved"),
    ("'a:b'", "is not a site name"), ("a/b", "is not a site name"),
    ("'a b'", "is not a site name"), ("-x", "is not a site name"),
    ("..", "is not a site name"), (".hidden", "is not a site name"),
    ("x" * 64, "is not a site name"), ("'a\\u202eb'", "is not a site name"),
])
def test_site_names_that_would_clash_with_ids_paths_or_auto_are_refused(d, name, want):
    """`auto` shadowed `--site auto`; `..`, `-x` and 64-character names were accepted."""
    msg = refused(d, site("", name=name))
    assert "(sites[0]): name: " in msg and want in msg
    if want != "is not a site name":
        return
    assert "letters, digits, _ . -, not starting with . or -" in msg


@pytest.mark.parametrize("value,shown", [("no", "got false"), ("yes", "got true"),
                                         ("2024", "got the number 2024"), ("on", "got true")])
def test_yaml_booleans_and_numbers_in_text_fields_say_to_quote_them(d, value, shown):
    msg = refused(d, site("", name=value))
    assert "name: Input should be a valid string" in msg
    assert "put the value in quotes" in msg and shown in msg
    msg = refused(d, site(f"default_partition: {value}"))
    assert "site 'a' (sites[0]): default_partition: " in msg and "quotes" in msg


def test_a_missing_known_hosts_file_is_refused_unless_trust_on_first_use(d):
    """A missing known_hosts was skipped silently; the first connect then failed with
    `host is not in known_hosts` pointing at a file that did not exist."""
    text = ssh_site(d, "host: login.example.org").replace(f"{d}/known_hosts", f"{d}/kh2")
    msg = refused(d, text)
    assert f"site 'a' (sites[0]): transport.known_hosts: {d}/kh2 does not exist" in msg
    loads(d, text.replace("host: login", "trust_on_first_use: true\n      host: login"))


def test_a_private_key_others_can_read_or_a_missing_one_is_refused(d):
    """paramiko used a world-readable key without a word (OpenSSH refuses it); a missing
    key_file failed later as `authentication failed`."""
    text = ssh_site(d, "host: login.example.org")
    (d / "id_ed25519").chmod(0o644)
    msg = refused(d, text)
    assert "transport.key_file: " in msg and "can be read by other users (mode 644)" in msg
    assert f"chmod 600 {d}/id_ed25519" in msg
    t = SSHTransport(TransportConfig(host="h", key_file=str(d / "id_ed25519")), site="a")
    with pytest.raises(BadInput, match="chmod 600"):  # a config made in code: at connect
        t._connect(None)  # refused before any socket is opened
    (d / "id_ed25519").chmod(0o600)
    msg = refused(d, text.replace("id_ed25519", "id_rsa_old"))
    assert f"transport.key_file: {d}/id_rsa_old does not exist" in msg


def test_a_missing_key_under_home_is_left_to_the_site_that_uses_it(d, monkeypatch):
    """A file shared by several users (the hub's) names `~/.ssh/id_ed25519`, each user's
    own: one user's missing key must not stop the others' sites from loading; the site
    that needs it refuses to connect, naming it, before opening a socket."""
    monkeypatch.setenv("HOME", str(d))
    cfg = loads(d, ssh_site(d, "host: login.example.org").replace(
        f"{d}/id_ed25519", "~/.ssh/id_ed25519"))
    t = SSHTransport(cfg.site("a").transport, site="a")
    with pytest.raises(BadInput, match=f"site a: transport.key_file: {d}/.ssh/id_ed25519 "
                                       "does not exist"):
        t._connect(None)
    assert t.connections_opened == 0


def test_relative_paths_are_relative_to_the_sites_file_not_the_cwd(d, tmp_path_factory,
                                                                   monkeypatch):
    elsewhere = tmp_path_factory.mktemp("cwd")
    monkeypatch.chdir(elsewhere)
    text = ssh_site(d, "host: login.example.org").replace(f"{d}/", "")
    cfg = loads(d, text)
    t = cfg.sites[0].transport
    assert (t.key_file, t.known_hosts, t.ssh_config) == \
        (str(d / "id_ed25519"), str(d / "known_hosts"), str(d / "ssh_config"))


@pytest.mark.parametrize("make,want", [
    (lambda d: d / "nope.yaml", "not found (give --config FILE or set DIAMOND_CONFIG"),
    (lambda d: d, "is a directory (give the YAML file in it"),
    (lambda d: (d / "latin1.yaml").write_bytes(b"sites:\n  - name: caf\xe9\n") and
     d / "latin1.yaml", "is not UTF-8 text (line 2, byte 20"),
    (lambda d: (d / "big.yaml").write_bytes(b"# x\n" * (MAX_SITES_FILE_BYTES // 4 + 1)) and
     d / "big.yaml", "is larger than 4 MB: not a sites file"),
])
def test_a_config_path_that_is_not_a_readable_sites_file(d, make, want):
    path = make(d)
    with pytest.raises(BadInput) as e:
        load_config(path)
    assert str(e.value).startswith(f"sites file {path}") and want in str(e.value)


# -- 3. hostile values ----------------------------------------------------------------------

@pytest.mark.parametrize("value", ["'sbatch; rm -rf ~'", "'/opt/slurm/bin/sbatch --clusters=c2'",
                                   "-x", "'$(id)'", "'`id`'", "~root/sbatch", "'a|b'"])
def test_a_command_path_with_arguments_or_shell_syntax_is_refused(d, value):
    """`sbatch; rm -rf ~` was accepted and quoted as one program name: every submit failed
    with `not found`, long after the file was loaded."""
    msg = refused(d, site(f"commands: {{sbatch: {value}}}"))
    assert "site 'a' (sites[0]): commands.sbatch: " in msg
    assert "is not a program path: one path or program name, no arguments" in msg


def test_a_command_name_the_scheduler_does_not_run_is_refused(d):
    """`sbtach:` (or qsub on a Slurm site) was ignored: the default program ran."""
    msg = refused(d, site("commands: {sbtach: /opt/slurm/bin/sbatch}"))
    assert "'sbtach' is not a slurm command (did you mean sbatch?" in msg
    msg = refused(d, site("scheduler: slurm\ncommands: {qsub: /usr/bin/qsub}"))
    assert "'qsub' is not a slurm command" in msg and "accepted: sbatch, squeue" in msg
    loads(d, site("scheduler: pbs\ncommands: {qsub: /opt/pbs/bin/qsub, qstat: qstat}"))


@pytest.mark.parametrize("transport,key", [
    ("host: '-oProxyCommand=touch /tmp/pwn'", "transport: host: "),
    ("host: 'login.example.org -p 2222'", "transport: host: "),
    ("host: login.example.org\nuser: '-oProxyCommand=touch /tmp/pwn'", "transport.user: "),
    ("host: login.example.org\nuser: 'alice bob'", "transport.user: "),
    ("host: '-oProxyCommand=id@login:22'", "transport: host: "),
    ("host: h\nproxy_jump: '-J gw'", "transport.proxy_jump: "),
    ("host: h\nproxy_jump: 'gw -oProxyCommand=id'", "transport.proxy_jump: "),
    ("host: h\nproxy_jump: 'gw,,login'", "transport.proxy_jump: "),
    ("host: h\nproxy_jump: 'gw:22x'", "transport.proxy_jump: "),
    ("host: h\nproxy_jump: '-oProxyCommand=x@gw'", "transport.proxy_jump: "),
])
def test_hosts_users_and_jumps_that_are_options_or_several_words_are_refused(d, transport, key):
    """They were accepted (and `gw:22x` raised a ValueError when the site was built)."""
    msg = refused(d, ssh_site(d, transport))
    assert f"site 'a' (sites[0]): {key}" in msg, msg
    assert "not a host" in msg or "not a login name" in msg or "empty hop" in msg or \
        "port must be a number" in msg


def test_a_hostile_proxy_jump_from_ssh_config_is_bad_input_not_an_option(d):
    (d / "ssh_config").write_text("Host evil\n  ProxyJump -oProxyCommand=touch%20x\n"
                                  "Host badport\n  Port twentytwo\n")
    cfg = loads(d, ssh_site(d, "host: evil") +
                ssh_site(d, "host: badport", name="b")[len("sites:\n"):])
    # (since sweep 10 the `%2` of `%20` is named first: not a token ProxyJump takes)
    with pytest.raises(BadInput, match="line 2: ProxyJump .* %2 is not a token"):
        SSHTransport(cfg.site("a").transport, site="a")
    with pytest.raises(BadInput, match="line 4: Port 'twentytwo' of Host badport is not a "
                                       "port"):
        SSHTransport(cfg.site("b").transport, site="b")


@pytest.mark.parametrize("env,want", [
    ("{'A-B': x}", "env.A-B: 'A-B' is not an environment variable name"),
    ("{'1X': x}", "is not an environment variable name"),
    ("{'X; id': x}", "is not an environment variable name"),
    ('{X: "a\\nb"}', "env.X: must be one line"),
    ('{X: "a\\u0000b"}', "env.X: must be one line"),
])
def test_environment_names_and_values_are_checked_at_load(d, env, want):
    """A bad name was found only at the first command (`invalid environment variable
    name`), whatever command that was."""
    assert want in refused(d, site(f"env: {env}"))


def test_discovery_cluster_env_is_checked_as_the_site_env(d):
    msg = refused(d, site("discovery: {clusters: [{name: c2, env: {'SLURM CONF': x}}]}"))
    assert "discovery.clusters.0.env.SLURM CONF: " in msg


def test_the_preamble_is_shell_text_as_written_but_not_a_nul(d):
    """Trusted as the admin wrote it (README: the one piece run as shell text)."""
    s = loads(d, site('preamble: "module load slurm; export A=$(hostname)\\n"')).sites[0]
    assert render_command(["squeue"], None, s.preamble).splitlines()[1] == \
        "module load slurm; export A=$(hostname)"
    assert "preamble: must not hold a NUL byte" in refused(d, site('preamble: "a\\0b"'))


def test_every_error_names_the_others_count(d):
    msg = refused(d, site("charge_factor: -1\nspeed_factor: 0\nhedge: maybe"))
    assert "charge_factor: Input should be greater than 0 (and 2 more)" in msg


# -- 4. the command line ----------------------------------------------------------------------

@pytest.mark.parametrize("text,where", [
    (site("transport: {hostname: x}", local=False), "site 'a' (sites[0]): transport.hostname"),
    (site("commands: {sbatch: 'sbatch; rm -rf ~'}"), "commands.sbatch"),
    ("sites:\n  - name: a\n    name: b\n", "key 'name' is given twice"),
    (site("", name="auto"), "'auto' is reserved"),
    (site("transport: {host: -oProxyCommand=x}", local=False), "transport: host: "),
])
@pytest.mark.parametrize("command", [["sites"], ["status", "a:1"], ["jobs"]])
def test_the_cli_exits_2_with_one_line_naming_file_site_and_key(d, text, where, command):
    path = write(d, text)
    env = {**os.environ, "DIAMOND_DATA_DIR": str(d / "data"), "HOME": str(d),
           "DIAMOND_CONFIG": str(path)}
    res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *command],
                         capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 2, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"diamond: sites file {path}")
    assert where in lines[0]


@pytest.mark.parametrize("transport,want", [
    ("{kind: local, host: login.example.org}", "host: for a transport of kind ssh, not local"),
    ("{host: login.example.org, url: 'https://rest:6820'}",
     "url: for a transport of kind slurmrestd, not ssh"),
    ("{host: login.example.org, token_file: /t}", "token_file: for a transport of kind "
                                                  "slurmrestd"),
])
def test_a_key_another_kind_of_transport_reads_is_refused(d, transport, want):
    """`kind: local` beside a host ran every command on this machine, without a word."""
    msg = refused(d, site(f"transport: {transport}", local=False))
    assert "site 'a' (sites[0]): transport: " in msg and want in msg


def test_the_file_door_of_a_rest_site_is_checked_as_an_ssh_site(d):
    door = ssh_site(d, "host: login.campus.example.org").split("    transport:\n", 1)[1]
    text = ("sites:\n  - name: r\n    workdir: /home/alice/.diamond\n"
            "    transport: {kind: slurmrestd, url: 'https://rest:6820', token_file: /t}\n"
            "    files:\n" + door)
    cfg = loads(d, text)
    assert cfg.site("r").files.host == "login.campus.example.org"
    msg = refused(d, text.replace(f"{d}/known_hosts", f"{d}/none"))
    assert f"site 'r' (sites[0]): files.known_hosts: {d}/none does not exist" in msg
    msg = refused(d, text.replace("host: login.campus", "host: -oProxyCommand=id@login.campus"))
    assert "site 'r' (sites[0]): files: host: " in msg


def test_an_alias_bomb_or_a_loop_is_refused_before_anything_expands_it(d):
    """Nine levels of nine aliases (387 million values once expanded) or a mapping that
    holds itself loaded fine; `diamond sites --json` then dumped the site's metadata."""
    lines = ["x-a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"x-{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    msg = refused(d, "\n".join(lines) + "\n" + site("metadata: {boom: *i}"))
    assert "anchors and aliases (&name, *name) make it hold more than 100,000 values" in msg
    msg = refused(d, site("metadata: &m {me: *m}"))
    assert "an alias refers to a value that holds it (a loop)" in msg
