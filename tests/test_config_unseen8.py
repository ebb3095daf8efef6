"""Sites files, eighth sweep, as HPC centers' admins write them: one file of six sites over
ssh, a jump host and slurmrestd with an SFTP file door, under Slurm, PBS Pro, LSF, Flux and
Grid Engine; YAML written in its rarer valid forms; ssh_config files that `Include` others
(the usual `Include ~/.ssh/config.d/*`); ssh_config's words and tokens copied into the sites
file (`IdentityFile`, `StrictHostKeyChecking`, `%r@%h`); other tools' key names
(`default_queue`, `project`, `type`, `jump_host`), a transport's key written beside the site's,
passwords and tokens as keys, transport kinds and PBS flavors as people name them, `env` as
NAME=value lines, a preamble as a list or a folded block. Each file's answer was worked out
by hand: what it builds, or its one-line refusal naming the file, the site, the key, what to
write and the line (`diamond sites` exits 2 on it). The tests marked `fault` failed before
this sweep's fixes."""

from __future__ import annotations

from pathlib import Path

import pytest
import sweep_helpers
from test_config_unseen2 import loads, refused, write

from diamond_jupyter.cli import main
from diamond_jupyter.model import BadInput
from diamond_jupyter.transports.ssh_auth import load_ssh_config, resolve_host

d = sweep_helpers.key_dir


def site(lines: str, name: str = "a") -> str:
    """One local site with `lines` (YAML at the site's indentation, each line on its own)."""
    return (f"sites:\n  - name: {name}\n    transport: {{kind: local}}\n"
            + "".join(f"    {ln}\n" for ln in lines.strip("\n").split("\n")))


# -- 1. a center's file -----------------------------------------------------------------------

CENTER = """\
x-ssh: &ssh
  kind: ssh
  key_file: {d}/id_ed25519
  known_hosts: {d}/known_hosts
  use_agent: false
sites:
  - name: perlmutter
    scheduler: slurm
    transport: {{<<: *ssh, host: perlmutter.nersc.gov, user: ana}}
    workdir: $SCRATCH/diamond
    default_account: m1234
    allowed_partitions: [regular, debug]
    default_partition: regular
  - name: derecho
    scheduler: PBSPro
    transport: {{<<: *ssh, host: "ana@derecho.hpc.ucar.edu:2222"}}
    default_account: UABC0001
  - name: summit
    scheduler: IBM Spectrum LSF
    transport: {{<<: *ssh, host: summit.olcf.ornl.gov, proxy_jump: "ana@gw.olcf.ornl.gov:2222"}}
  - name: tioga
    scheduler: Flux
    transport: {{<<: *ssh, host: tioga.llnl.gov}}
    preamble: |
      export FLUX_URI=$(flux uri --remote slurm:$(squeue -h -o %i -n alloc | head -1))
  - name: hoffman2
    scheduler: Son of Grid Engine
    transport: {{<<: *ssh, host: hoffman2.idre.ucla.edu}}
    env: {{SGE_ROOT: /u/systems/UGE8.6.4, SGE_CELL: "default"}}
    commands: {{qsub: /u/systems/UGE8.6.4/bin/lx-amd64/qsub}}
  - name: campus
    scheduler: slurm
    workdir: /scratch/ana/diamond
    auto: false           # a second door to perlmutter's neighbour: used when named
    transport:
      kind: slurmrestd
      url: https://slurm.campus.edu:6820
      api_version: v0.0.40
      token_command: scontrol token lifespan=3600
    files: {{<<: *ssh, host: login.campus.edu}}
"""


def test_a_centers_six_sites_over_three_doors_and_five_schedulers(d):
    cfg = loads(d, CENTER.format(d=d))
    got = {s.name: (s.scheduler, s.transport.kind, s.transport.host, s.transport.user,
                    s.transport.port) for s in cfg.sites}
    assert got == {
        "perlmutter": ("slurm", "ssh", "perlmutter.nersc.gov", "ana", None),
        "derecho": ("pbs", "ssh", "derecho.hpc.ucar.edu", "ana", 2222),
        "summit": ("lsf", "ssh", "summit.olcf.ornl.gov", None, None),
        "tioga": ("flux", "ssh", "tioga.llnl.gov", None, None),
        "hoffman2": ("sge", "ssh", "hoffman2.idre.ucla.edu", None, None),
        "campus": ("slurm", "slurmrestd", None, None, None)}
    p, camp = cfg.site("perlmutter"), cfg.site("campus")
    assert (p.workdir, p.default_account, p.allowed_partitions, p.default_partition) == (
        "$SCRATCH/diamond", "m1234", ["regular", "debug"], "regular")
    assert cfg.site("summit").transport.proxy_jump == "ana@gw.olcf.ornl.gov:2222"
    assert cfg.site("tioga").preamble.startswith("export FLUX_URI=$(flux uri --remote")
    assert cfg.site("hoffman2").env == {"SGE_ROOT": "/u/systems/UGE8.6.4",
                                        "SGE_CELL": "default"}
    assert camp.transport.token_command == ["scontrol", "token", "lifespan=3600"]
    assert (camp.auto, camp.files.kind, camp.files.host, camp.files.key_file) == (
        False, "ssh", "login.campus.edu", f"{d}/id_ed25519")
    assert cfg.site("derecho").flavor is None  # PBS Pro: the default flavor


# -- 2. rarer valid YAML --------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "sites:\n  - !!map {name: a, transport: !!map {kind: local}}\n",
    'sites:\n  - "name": "a"\n    "transport": {"kind": "local"}\n',
    "sites:\n  - ? name\n    : a\n    ? transport\n    : {kind: local}\n",
    "sites:\n- name: a\n  transport:\n    kind: local\n",
    "sites: [{name: a, transport: {kind: local}}]\n",
    "%YAML 1.1\n---\nsites:\n  - {name: a, transport: {kind: local}}  # the one site\n...\n",
])
def test_the_same_site_in_rarer_yaml_forms(d, text):
    [s] = loads(d, text).sites
    assert (s.name, s.transport.kind, s.scheduler) == ("a", "local", "slurm")


def test_a_site_named_by_a_number_tagged_as_text(d):
    assert loads(d, "sites:\n  - {name: !!str 2024, transport: {kind: local}}\n"
                 ).sites[0].name == "2024"


# -- 3-5. ssh_config's Include -----------------------------------------------------------------

@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    h = tmp_path / "home"
    (h / ".ssh" / "config.d").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(h))
    return h


def test_fault_hosts_in_files_an_include_names_are_found(home):
    """`Include config.d/*` (relative: under $HOME/.ssh, as ssh's glob reads `~`; files in
    lexical order) at the top of an ssh_config. paramiko kept `Include` as an unknown
    keyword: `hpc` was dialled as a host called hpc, as if ssh_config said nothing of it."""
    ssh = home / ".ssh"
    (ssh / "config.d" / "20-gw").write_text("Host gw\n  HostName gw.example.org\n"
                                            "Host hpc\n  User ignored-second\n")
    (ssh / "config.d" / "10-hpc").write_text("Host hpc\n  HostName login.hpc.example.org\n"
                                             "  User ana\n  Port 2222\n  ProxyJump gw\n")
    (ssh / "config").write_text("Include config.d/*\nUser fallback\n"
                                "Host other\n  HostName other.example.org\n")
    cfg = load_ssh_config(str(ssh / "config"))  # ssh's own is the password database's
    hpc = resolve_host(cfg, "hpc")
    assert (hpc.hostname, hpc.user, hpc.port, hpc.proxy_jump) == (
        "login.hpc.example.org", "ana", 2222, "gw")
    assert resolve_host(cfg, "gw").hostname == "gw.example.org"
    # the line after the Include is for every host again, not for the last included block
    assert resolve_host(cfg, "gw").user == "fallback"
    assert resolve_host(cfg, "other").user == "fallback"


def test_fault_an_include_of_options_inside_a_host_block_applies_to_that_block(home, tmp_path):
    (tmp_path / "hpc-opts").write_text("User ana\nPort 2200\n")
    f = tmp_path / "ssh_config"
    f.write_text(f"Host hpc\n  HostName login.hpc.example.org\n  Include {tmp_path}/hpc-opts\n"
                 "Host other\n  HostName other.example.org\n")
    cfg = load_ssh_config(str(f))
    assert (resolve_host(cfg, "hpc").user, resolve_host(cfg, "hpc").port) == ("ana", 2200)
    assert resolve_host(cfg, "other").port == 22


def test_fault_an_include_of_host_blocks_inside_a_host_block_is_refused_naming_it(home,
                                                                                  tmp_path):
    """ssh reads such a file only where the enclosing block matches; the lookup here cannot
    say so, so it is not half-followed."""
    (tmp_path / "more").write_text("Host gw\n  HostName gw.example.org\n")
    f = tmp_path / "ssh_config"
    f.write_text(f"Host hpc\n  HostName login\n  Include {tmp_path}/more\n")
    with pytest.raises(BadInput) as e:
        load_ssh_config(str(f))
    assert str(e.value) == (f"ssh_config {f} line 3: an Include inside a Host or Match block "
                            f"names {tmp_path}/more, which has Host or Match blocks of its own "
                            "(ssh reads them only where the enclosing block matches): not "
                            "followed here; move the Include to the top of the file, or give "
                            "the site's host, user and proxy_jump in the sites file")


def test_fault_a_match_exec_in_an_included_file_and_an_include_loop_are_refused(home, tmp_path):
    (home / ".ssh" / "config.d" / "x").write_text("Host a\n  User u\nMatch exec \"true\"\n")
    f = tmp_path / "ssh_config"
    f.write_text("Include config.d/x\n")
    with pytest.raises(BadInput) as e:
        load_ssh_config(str(f))
    assert str(e.value).startswith(f"ssh_config {home}/.ssh/config.d/x line 3: 'Match exec' "
                                   "runs a command")
    loop = tmp_path / "loop"
    loop.write_text(f"Include {loop}\n")
    with pytest.raises(BadInput, match=r"line 1: Include nested more than 16 deep \(a file "
                                       r"that includes itself\?\)"):
        load_ssh_config(str(loop))


def test_an_include_naming_nothing_is_skipped_as_ssh_skips_it(home):
    (home / ".ssh" / "config").write_text("Include config.d/*.conf ~/.orbstack/ssh/config\n"
                                          "Host hpc\n  HostName login\n")
    config = str(home / ".ssh" / "config")  # an Include's `~` is $HOME's, as ssh's glob's
    assert resolve_host(load_ssh_config(config), "hpc").hostname == "login"


# -- 6. ssh_config's tokens and words in the sites file -------------------------------------------

@pytest.mark.parametrize("path, token", [("~/.ssh/id_%r@%h", "%r"), ("%d/.ssh/id_ed25519", "%d")])
def test_fault_an_ssh_config_token_in_a_key_path_is_refused(d, path, token):
    """`IdentityFile ~/.ssh/id_%r@%h` copied into key_file: a path under the home was let
    pass (checked at connect), and the key file `id_%r@%h` never existed."""
    msg = refused(d, f"sites:\n  - name: a\n    transport:\n      host: login.example.org\n"
                     f"      key_file: \"{path}\"\n      known_hosts: {d}/known_hosts\n")
    assert msg.endswith(f"site 'a' (sites[0]): transport.key_file: '{path}': {token} is a "
                        "token of ssh_config, which the sites file does not expand (it would "
                        "be part of the file's name, as written): write the path out; or leave "
                        "it out and keep the line in ssh_config, which is read with its tokens "
                        "(line 5)")


@pytest.mark.parametrize("key, meant", [
    ("IdentityFile", "key_file"), ("user_name", "user"), ("jump_host", "proxy_jump"),
    ("StrictHostKeyChecking", "trust_on_first_use"), ("ServerAliveInterval", "keepalive_s"),
    ("UserKnownHostsFile", "known_hosts"), ("bastion", "proxy_jump"), ("type", "kind"),
])
def test_fault_ssh_config_words_in_a_transport_name_the_key_meant(d, key, meant):
    """Before: no suggestion, or a wrong one (user_name: "did you mean use_agent?",
    jump_host: "did you mean host?")."""
    msg = refused(d, f"sites:\n  - name: a\n    transport:\n      host: login.example.org\n"
                     f"      {key}: x\n")
    assert f"transport.{key}: unknown key (did you mean {meant}? accepted: kind, " in msg
    assert msg.endswith("(line 5)")


# -- 7. other tools' site keys, and the transport's written beside the site's --------------------

@pytest.mark.parametrize("key, meant", [
    ("default_queue", "default_partition"), ("queue", "default_partition"),
    ("queues", "allowed_partitions"), ("project", "default_account"),
    ("bank", "default_account"), ("type", "scheduler"), ("batch_system", "scheduler"),
    ("scratch", "workdir"),
])
def test_fault_other_tools_site_keys_name_the_key_meant(d, key, meant):
    """Before: default_queue "did you mean default_account?" (a queue is a partition here);
    the others no suggestion."""
    msg = refused(d, site(f"{key}: [normal, debug]" if key == "queues" else f"{key}: x"))
    assert f"site 'a' (sites[0]): {key}: unknown key (did you mean {meant}? accepted: " in msg


@pytest.mark.parametrize("key, door", [("host", "host"), ("hostname", "host"),
                                       ("user", "user"), ("port", "port")])
def test_fault_a_transport_key_beside_the_sites_says_it_goes_under_transport(d, key, door):
    """`host: login...` next to `name:`: before, "unknown key (accepted: ...)", and for
    hostname "did you mean name?"."""
    msg = refused(d, f"sites:\n  - name: a\n    {key}: login.example.org\n")
    assert msg.startswith(f"sites file {d}/sites.yaml: site 'a' (sites[0]): {key}: unknown "
                          f"key: {door} is the transport's, written under it (transport: "
                          f"{{{door}: ...}}; accepted here: name, scheduler, flavor, ")
    assert msg.endswith("(line 3)")


@pytest.mark.parametrize("key, says", [
    ("password", "no password is kept in the sites file (whoever reads the file would have "
                 "it): log in with a key (key_file, or the agent: use_agent), and answer a "
                 "one-time code with `diamond login SITE`"),
    ("passphrase", "no password is kept in the sites file"),
    ("token", "a token is not written in the sites file (whoever reads the file would act as "
              "you): give token_file (a file only you can read) or token_command (e.g. "
              "scontrol token)"),
    ("jwt", "a token is not written in the sites file"),
])
def test_fault_a_secret_as_a_key_says_what_to_do_and_never_shows_it(d, key, says):
    msg = refused(d, f"sites:\n  - name: a\n    transport:\n      host: login.example.org\n"
                     f"      {key}: Hunter2-eyJhbGci\n")
    assert f"transport.{key}: unknown key: {says}" in msg and msg.endswith("(line 5)")
    assert "Hunter2" not in msg


# -- 8. kinds, flavors and schedulers as people name them ----------------------------------

@pytest.mark.parametrize("kind, note", [
    ("sftp", "; did you mean ssh? (its files move over SFTP inside it)"),
    ("SSH", "; did you mean ssh?"), ("Local", "; did you mean local?"),
    ("rest", "; did you mean slurmrestd?"), ("slurmrest", "; did you mean slurmrestd?"),
    ("grpc", ""),
])
def test_fault_a_transport_kind_as_people_name_it_says_the_one_meant(d, kind, note):
    msg = refused(d, f"sites:\n  - name: a\n    transport:\n      kind: {kind}\n")
    assert msg.endswith(f"transport.kind: Input should be 'ssh', 'local' or 'slurmrestd', not "
                        f"'{kind}'{note} (line 4)")


@pytest.mark.parametrize("written, flavor", [("Torque", "torque"), ("PBSPro", "pro"),
                                             ("OpenPBS", "pro"), ("PBS Pro", "pro"),
                                             ("slurm-wlm-torque", "slurm")])
def test_fault_a_pbs_flavor_as_centers_name_it_is_that_flavor(d, written, flavor):
    """`scheduler:` took these names since session 23; `flavor:` refused them ("unknown pbs
    flavor 'Torque'")."""
    s = loads(d, site(f"scheduler: pbs\nflavor: {written}")).sites[0]
    assert (s.scheduler, s.flavor) == ("pbs", flavor)


def test_an_unknown_flavor_and_a_flavor_of_another_scheduler_are_still_refused(d):
    assert "unknown pbs flavor 'moab' (accepted: pro, torque, slurm)" in refused(
        d, site("scheduler: pbs\nflavor: moab"))
    assert "flavor is for scheduler pbs, not slurm" in refused(d, site("flavor: Torque"))


def test_fault_moab_as_the_scheduler_names_the_resource_manager_to_write(d):
    msg = refused(d, site("scheduler: Moab"))
    assert msg.endswith("scheduler: Input should be 'slurm', 'pbs', 'lsf', 'flux' or 'sge'; "
                        "moab schedules the jobs of a resource manager, whose commands the "
                        "engine runs: write that one (scheduler: torque, or slurm) (line 4)")


def test_fault_an_api_version_without_its_v_says_how_to_write_it(d):
    (d / "jwt").write_text("x")
    (d / "jwt").chmod(0o600)
    msg = refused(d, "sites:\n  - name: r\n    workdir: /scratch/r\n    transport:\n"
                     "      kind: slurmrestd\n      url: https://r:6820\n"
                     f"      token_file: {d}/jwt\n      api_version: 0.0.40\n")
    assert msg.endswith("transport.api_version: expected slurmrestd's OpenAPI plugin version, "
                        "v0.0.N (e.g. v0.0.38) (write v0.0.40) (line 8)")


# -- 9. env, preamble and discovery in other shapes ----------------------------------------

@pytest.mark.parametrize("env, shape", [
    ("\n      - SLURM_CONF=/etc/slurm/c2.conf\n      - SLURM_JWT=eyJsecret", "a list of"),
    ("SLURM_CONF=/etc/slurm/c2.conf", "one"),
])
def test_fault_env_as_name_value_lines_says_the_mapping_meant_without_values(d, env, shape):
    msg = refused(d, site(f"env: {env}"))
    names = "SLURM_CONF: ..., SLURM_JWT: ..." if shape != "one" else "SLURM_CONF: ..."
    assert msg.endswith(f"env: Input should be a valid mapping, not {shape} NAME=value: "
                        f"write env: {{{names}}} (a NAME: value line each) (line 4)")
    assert "eyJsecret" not in msg and "c2.conf" not in msg


def test_fault_a_preamble_as_a_list_of_lines_says_to_write_a_block(d):
    msg = refused(d, site("preamble:\n  - module load slurm\n  - export X=1"))
    assert msg.endswith("preamble: Input should be a valid string, got a list of lines: "
                        "write preamble: | and the shell lines under it, indented (line 4)")


def test_fault_a_folded_preamble_over_two_lines_is_refused(d, capsys):
    """`preamble: >` joins `module load slurm` and `module load gcc` into one line: `module`
    was asked to load modules called module, load and gcc, before every command."""
    text = site("preamble: >\n  module load slurm\n  module load gcc")
    msg = refused(d, text)
    assert msg.endswith("preamble: a folded block (`preamble: >`) joins its lines into one "
                        "command line ('module load slurm module load gcc'), which runs as one "
                        "command; write `preamble: |` to keep each line (line 4)")
    assert main(["sites", "--config", str(write(d, text))]) == 2
    err = capsys.readouterr().err
    assert "write `preamble: |`" in err and err.count("\n") == 1


def test_a_folded_preamble_of_one_line_or_of_paragraphs_keeps_its_lines(d):
    assert loads(d, site("preamble: >\n  module load slurm")).sites[0].preamble == \
        "module load slurm\n"
    assert loads(d, site("preamble: >\n  module load slurm\n\n  module load gcc")
                 ).sites[0].preamble == "module load slurm\nmodule load gcc\n"


def test_fault_discovery_false_says_to_write_enabled_false(d):
    msg = refused(d, site("discovery: false"))
    assert msg.endswith("discovery: Input should be a valid mapping, not False: write "
                        "discovery: {enabled: false} (line 4)")
    assert loads(d, site("discovery: {enabled: false}")).sites[0].discovery.enabled is False


def test_fault_sites_keyed_by_name_say_to_write_a_list(d):
    msg = refused(d, "sites:\n  perlmutter:\n    transport: {kind: local}\n")
    assert msg.endswith("sites: Input should be a valid list, got a mapping: write each site "
                        "as an item of the list, `- name: perlmutter` with its keys (scheduler, "
                        "transport...) under it (line 1)")


def test_fault_diamond_sites_exits_2_on_a_site_level_host_saying_where_it_goes(d, capsys):
    path = write(d, "sites:\n  - name: a\n    host: login.example.org\n")
    assert main(["sites", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "host is the transport's, written under it" in err and str(path) in err
    assert err.count("\n") == 1


# -- 10. one value written as several, a URL as a host, the login's name in a workdir -------------

@pytest.mark.parametrize("key, value, more", [
    ("key_file", "[{d}/id_ed25519, {d}/id_rsa]", " (more keys: IdentityFile lines in "
                                                 "ssh_config, or the agent)"),
    ("known_hosts", "[{d}/known_hosts, /etc/ssh/ssh_known_hosts]",
     " (the files ssh reads are read too: ssh_config's UserKnownHostsFile and "
     "GlobalKnownHostsFile, else ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts)"),
])
def test_fault_a_list_where_one_path_goes_says_how_to_give_more(d, key, value, more):
    """Before: "Input should be a valid string", not saying why or what to do."""
    lines = {"key_file": f"{d}/id_ed25519", "known_hosts": f"{d}/known_hosts",
             key: value.format(d=d)}
    msg = refused(d, "sites:\n  - name: a\n    transport:\n      host: login.example.org\n"
                  + "".join(f"      {k}: {v}\n" for k, v in lines.items()))
    assert f"transport.{key}: Input should be a valid string, got a list: give one " \
           f"value{more}" in msg


def test_fault_two_logins_as_a_list_of_hosts_say_a_login_is_a_site(d):
    msg = refused(d, "sites:\n  - name: a\n    transport:\n      host: [login1.x.org, "
                     "login2.x.org]\n")
    assert msg.endswith("transport.host: Input should be a valid string, got a list: give one "
                        "value (another login of the same cluster is another site, with auto: "
                        "false and metadata.door_to naming this one) (line 4)")


def test_fault_a_url_as_a_host_says_what_a_host_is(d):
    """Before: "the port must be a number from 1 to 65535" (`//login...` read as a port)."""
    msg = refused(d, "sites:\n  - name: a\n    transport:\n      host: https://login.x.org/\n")
    assert msg.endswith("transport: host: 'https://login.x.org/' is a https:// URL: a host is "
                        "its name (login.x.org); a slurmrestd door's URL goes in url:, with "
                        "kind: slurmrestd (line 4)")
    t = loads(d, "sites:\n  - name: a\n    transport:\n      host: ssh://ana@login.x.org:2222\n"
                 f"      key_file: {d}/id_ed25519\n      known_hosts: {d}/known_hosts\n"
              ).sites[0].transport
    assert (t.user, t.host, t.port) == ("ana", "login.x.org", 2222)  # ssh:// is a hop


@pytest.mark.parametrize("workdir, shown", [
    ("/scratch/$USER/diamond", "$USER is the login's name: write it out (e.g. "
                               "/scratch/NAME/diamond)"),
    ("/lustre/${LOGNAME}", "${LOGNAME} is the login's name: write it out (e.g. /lustre/NAME)"),
])
def test_fault_the_logins_name_in_a_workdir_says_to_write_it_out(d, workdir, shown):
    msg = refused(d, site(f"workdir: {workdir}"))
    assert f"one variable is accepted, at the start (e.g. $SCRATCH/diamond or " \
           f"${{SCRATCH}}/diamond); {shown}, or start from a variable the site sets per user " \
           f"($SCRATCH/diamond) (line 4)" in msg
