"""Sites files, fourth sweep, as centers and users write them: two entries on one login for
two project accounts, Grid Engine, LSF and PBS under their product names, per-partition
settings (not read: said so), a slurmrestd site with its file door, `${VAR:-default}` in
paths (and in a host, where no variable is read), key and known_hosts paths relative to the
sites file (never to the current directory), ports 0 and 65536, a key others can read, and
a file of 200 sites. Each file's answer was worked out by hand: what it builds (checked
without connecting) or its one-line refusal naming the file, the site, the key and what
would be accepted; `diamond sites` exits 2 on it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import sweep_helpers
from test_config_unseen2 import loads, refused, write

from diamond_jupyter.cli import main
from diamond_jupyter.config import load_config

d = sweep_helpers.key_dir


def door(d: Path, extra: str = "") -> str:
    """An SSH transport's keys, as a flow mapping's inside."""
    return f"key_file: {d}/id_ed25519, known_hosts: {d}/known_hosts, use_agent: false{extra}"


# -- 1. one login, two entries ---------------------------------------------------------------

def test_two_project_accounts_on_one_login_the_second_used_only_when_named(d):
    cfg = loads(d, f"""\
sites:
  - name: hpc-chem
    default_account: chem01
    transport: {{host: login.hpc.example.org, user: alice, {door(d)}}}
  - name: hpc-phys
    default_account: phys07
    auto: false
    transport: {{host: login.hpc.example.org, user: alice, {door(d)}}}
""")
    chem, phys = cfg.site("hpc-chem"), cfg.site("hpc-phys")
    assert (chem.default_account, chem.auto) == ("chem01", True)
    assert (phys.default_account, phys.auto) == ("phys07", False)
    assert chem.transport.host == phys.transport.host == "login.hpc.example.org"


def test_two_login_names_on_one_host_are_two_sites(d):
    cfg = loads(d, f"""\
sites:
  - {{name: mine, transport: {{host: alice@login.example.org, {door(d)}}}}}
  - {{name: group, auto: false, transport: {{host: "grp-climate@login.example.org:2222", \
{door(d)}}}}}
""")
    assert (cfg.site("mine").transport.user, cfg.site("mine").transport.port) == ("alice", None)
    assert (cfg.site("group").transport.user, cfg.site("group").transport.port) == \
        ("grp-climate", 2222)


# -- 2. schedulers by their product names --------------------------------------------------------

@pytest.mark.parametrize("written,meant", [
    ("sge", "sge"), ("gridengine", "sge"), ("uge", "sge"), ("Son of Grid Engine", "sge"),
    ("Univa Grid Engine", "sge"), ("Open Grid Scheduler", "sge"), ("Altair Grid Engine", "sge"),
    ("IBM Spectrum LSF", "lsf"), ("Platform LSF", "lsf"), ("PBS Professional", "pbs"),
    ("Slurm Workload Manager", "slurm"),
])
def test_fault_a_scheduler_named_as_its_product_is_that_scheduler(d, written, meant):
    """`Son of Grid Engine`, `Univa Grid Engine`, `IBM Spectrum LSF` (what a center's pages
    call them) were refused ("Input should be 'slurm', 'pbs', ..."); the short names were
    read. Each is the dialect its commands speak."""
    cfg = loads(d, f"sites:\n  - {{name: a, scheduler: {written}, transport: {{kind: local}}}}\n")
    assert cfg.site("a").scheduler == meant


def test_an_unknown_scheduler_lists_the_accepted_ones(d):
    msg = refused(d, "sites:\n  - {name: a, scheduler: htcondor, transport: {kind: local}}\n")
    assert msg.endswith("site 'a' (sites[0]): scheduler: Input should be 'slurm', 'pbs', "
                        "'lsf', 'flux' or 'sge', not 'htcondor' (the engine runs Slurm, PBS "
                        "Pro/Torque, LSF, Flux and Grid Engine sites) (line 2)")


# -- 3. per-partition settings, a REST site's file door ------------------------------------

def test_fault_per_partition_settings_say_they_are_not_read(d):
    """`partitions: {gpu: {charge_factor: 3}}` was refused as "did you mean
    allowed_partitions?", as if a list of names had been meant; a list still is."""
    msg = refused(d, """\
sites:
  - name: a
    transport: {kind: local}
    partitions:
      gpu: {charge_factor: 3, default_account: gpu01}
""")
    assert msg.endswith("site 'a' (sites[0]): partitions: unknown key: per-partition settings "
                        "are not read (a site's settings hold for all its partitions); to limit "
                        "where its jobs go write allowed_partitions: [NAME, ...], and "
                        "default_partition: NAME for the one a job that names none goes to "
                        "(line 4)")
    assert "did you mean allowed_partitions?" in refused(
        d, "sites:\n  - {name: a, transport: {kind: local}, partitions: [gpu, cpu]}\n")


def test_a_rest_site_with_an_ssh_file_door_and_one_with_a_local_one(d):
    cfg = loads(d, f"""\
sites:
  - name: rest
    workdir: /home/alice/.diamond
    transport: {{kind: slurmrestd, url: "https://rest.hpc.example.org:6820", \
token_command: scontrol token lifespan=3600}}
    files: {{kind: ssh, host: login.hpc.example.org, {door(d)}}}
  - name: rest-here
    auto: false
    workdir: /home/alice/.diamond
    transport: {{kind: slurmrestd, url: "https://rest.hpc.example.org:6820", \
token_file: {d}/jwt}}
    files: {{kind: local}}
""")
    rest, here = cfg.site("rest"), cfg.site("rest-here")
    assert rest.transport.token_command == ["scontrol", "token", "lifespan=3600"]
    assert (rest.files.kind, rest.files.host) == ("ssh", "login.hpc.example.org")
    assert here.files.kind == "local" and here.transport.token_file == f"{d}/jwt"


# -- 4. variables, relative paths, ports, key modes -----------------------------------------

def test_fault_a_path_with_a_shell_default_takes_the_default_where_unset(d, monkeypatch):
    """`key_file: ${KEYDIR:-...}/id_ed25519` (as docker-compose files and shell scripts write
    it) was refused as "a $ that starts no variable"; it is read as the shell reads it."""
    text = (f"sites:\n  - {{name: a, transport: {{host: login.example.org, "
            f"key_file: '${{KEYDIR:-{d}}}/id_ed25519', known_hosts: '${{KH-{d}/known_hosts}}', "
            "use_agent: false}}\n")
    monkeypatch.delenv("KEYDIR", raising=False)
    monkeypatch.delenv("KH", raising=False)
    t = loads(d, text).site("a").transport
    assert (t.key_file, t.known_hosts) == (f"{d}/id_ed25519", f"{d}/known_hosts")
    other = d / "keys"
    other.mkdir()
    (other / "id_ed25519").write_text("k\n")
    (other / "id_ed25519").chmod(0o600)
    monkeypatch.setenv("KEYDIR", str(other))
    assert loads(d, text).site("a").transport.key_file == f"{other}/id_ed25519"
    # ${KH-...} keeps an empty value that is set (the shell's `-` without `:`)
    monkeypatch.setenv("KH", "")
    assert "known_hosts:" in refused(d, text)


def test_fault_a_variable_in_a_host_or_login_name_says_where_variables_are_read(d):
    """`host: ${HPC_HOST:-login.example.org}` said "the port must be a number" (the `:-`
    read as a port): a host is written out; the message says which keys read variables."""
    msg = refused(d, f"sites:\n  - {{name: a, transport: {{host: '${{HPC_HOST:-login.example."
                     f"org}}', {door(d)}}}}}\n")
    assert msg.endswith("site 'a' (sites[0]): transport: host: '${HPC_HOST:-login.example.org}'"
                        ": a host is written out, not read from a variable (only the paths of "
                        "local files, key_file, cert_file, known_hosts, ssh_config, token_file "
                        "and store, expand $VAR and ${VAR:-default}) (line 2)")
    assert "transport.user: '$LOGNAME': a login name is written out" in refused(
        d, f"sites:\n  - {{name: a, transport: {{host: h.example.org, user: $LOGNAME, "
           f"{door(d)}}}}}\n")


def test_relative_key_and_known_hosts_paths_are_the_sites_files_directory_not_the_cwd(
        d, tmp_path_factory, monkeypatch):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    monkeypatch.chdir(elsewhere)
    t = loads(d, "sites:\n  - {name: a, transport: {host: login.example.org, key_file: "
                 "id_ed25519, known_hosts: ./known_hosts, use_agent: false}}\n").site(
        "a").transport
    assert (t.key_file, t.known_hosts) == (f"{d}/id_ed25519", f"{d}/known_hosts")
    (elsewhere / "kh2").write_text("")
    assert f"transport.known_hosts: {d}/kh2 does not exist" in refused(
        d, f"sites:\n  - {{name: a, transport: {{host: h.example.org, key_file: {d}/id_ed25519,"
           " known_hosts: kh2, use_agent: false}}\n")


def test_a_known_hosts_that_is_a_directory_or_missing(d):
    assert refused(d, f"sites:\n  - {{name: a, transport: {{host: h.example.org, key_file: "
                      f"{d}/id_ed25519, known_hosts: {d}, use_agent: false}}}}\n").endswith(
        f"transport.known_hosts: {d} is not a file (line 2)")
    cfg = loads(d, f"sites:\n  - {{name: a, transport: {{host: h.example.org, key_file: "
                   f"{d}/id_ed25519, known_hosts: {d}/new_hosts, trust_on_first_use: true, "
                   "use_agent: false}}\n")
    assert cfg.site("a").transport.trust_on_first_use


@pytest.mark.parametrize("port,want", [
    ("0", "transport.port: Input should be greater than or equal to 1 (line 2)"),
    ("65536", "transport.port: Input should be less than or equal to 65535 (line 2)"),
    ("'22 '", None), ("65535", None),
])
def test_ports_at_and_past_the_ends(d, port, want):
    text = f"sites:\n  - {{name: a, transport: {{host: h.example.org, port: {port}, {door(d)}}}}}\n"
    if want is None:
        assert loads(d, text).site("a").transport.port == int(port.strip("' "))
    else:
        assert refused(d, text).endswith(want)


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_a_key_others_or_the_group_can_read_is_refused_as_ssh_does(d, mode):
    key = d / "id_rsa"
    key.write_text("k\n")
    key.chmod(mode)
    msg = refused(d, f"sites:\n  - {{name: a, transport: {{host: h.example.org, key_file: {key},"
                     f" known_hosts: {d}/known_hosts, use_agent: false}}}}\n")
    assert f"transport.key_file: {key} can be read by other users (mode {mode:o}); `chmod 600 " \
        f"{key}` (OpenSSH refuses such a key too) (line 2)" in msg


# -- 5. a large file and the command line ---------------------------------------------------------

def test_a_sites_file_of_200_sites_loads_quickly_and_a_repeated_name_is_found(d):
    lines = ["sites:"] + [
        f"  - {{name: c{i:03d}, scheduler: {('slurm', 'pbs', 'lsf', 'sge')[i % 4]}, "
        f"transport: {{host: login{i:03d}.example.org, {door(d)}}}}}" for i in range(200)]
    t0 = time.perf_counter()
    cfg = loads(d, "\n".join(lines) + "\n")
    took = time.perf_counter() - t0
    assert [s.name for s in cfg.sites] == [f"c{i:03d}" for i in range(200)]
    assert cfg.site("c199").scheduler == "sge" and took < 5, took
    lines[151] = lines[151].replace("c150", "C007")
    assert "site names 'c007' (sites[7]) and 'C007' (sites[150]) differ only in case" in \
        refused(d, "\n".join(lines) + "\n")


@pytest.mark.parametrize("text,want", [
    ("sites:\n  - {name: a, scheduler: Altair Grid Engine, transport: {kind: local}, "
     "partitions: {gpu: {}}}\n", "partitions: unknown key: per-partition settings"),
    ("sites:\n  - {name: a, transport: {host: '${H:-x}'}}\n", "a host is written out"),
])
def test_diamond_sites_exits_2_naming_the_file_and_key(d, capsys, text, want):
    path = write(d, text)
    assert main(["sites", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert want in err and str(path) in err and err.count("\n") == 1


def test_the_whole_file_loads_through_load_config_as_the_cli_does(d):
    path = write(d, "sites:\n  - {name: a, scheduler: Son of Grid Engine, transport: "
                    "{kind: local}}\n")
    assert load_config(path).site("a").scheduler == "sge"
