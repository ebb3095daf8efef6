"""Sites files, ninth sweep, as a new user or a center would write them and sweeps 1-8 did
not: an SSH site whose `host` is an ssh_config alias reached through `ProxyJump`, with
`Match` blocks, `IdentityAgent` and `CertificateFile`; `${HOME}` and other variables in
paths; relative key paths; a site name with a trailing space; numbers written as strings;
booleans as `yes`/`on`; a Globus collection that is no UUID; scheduler names misspelt or
not run by the engine; a key given twice. Each answer was worked out by hand: what the file
builds (a documented acceptance), or its one-line refusal naming the file, the site, the
key, what would be accepted and the line. The tests marked `fault` failed before this
sweep's fixes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import sweep_helpers
from sweep_helpers import ssh_site
from test_config_unseen2 import loads, refused
from test_config_unseen8 import site  # the series' one-site file

from diamond_jupyter.model import BadInput
from diamond_jupyter.transports.ssh_auth import _keys, load_ssh_config, resolve_host

d = sweep_helpers.key_dir


# -- 1. an ssh_config alias: ProxyJump, Match, IdentityAgent, CertificateFile ----------------

def _keygen(*args: str) -> None:
    subprocess.run(["ssh-keygen", "-q", *args], check=True, capture_output=True)


@pytest.fixture
def certified(tmp_path: Path) -> Path:
    """A key, a CA, and the key's certificate for `ana` kept under another name than
    KEY-cert.pub (as a center's certificate service writes it: ~/.ssh/certs/...)."""
    _keygen("-t", "ed25519", "-N", "", "-f", str(tmp_path / "ca"))
    _keygen("-t", "ed25519", "-N", "", "-f", str(tmp_path / "id_hpc"))
    _keygen("-s", str(tmp_path / "ca"), "-I", "ana@center", "-n", "ana", "-V", "-5m:+1h",
            str(tmp_path / "id_hpc.pub"))
    (tmp_path / "certs").mkdir()
    (tmp_path / "id_hpc-cert.pub").rename(tmp_path / "certs" / "hpc-ana.pub")
    return tmp_path


def test_fault_an_ssh_config_certificate_file_is_offered_with_its_key(certified):
    # ssh_config's CertificateFile was not read: only KEY-cert.pub beside the key was, so a
    # center's certificate kept elsewhere was never offered and the login was refused
    d = certified
    (d / "ssh_config").write_text(
        "Host gw\n  HostName gw.center.org\n  User ana\n"
        "Host cluster\n  HostName login.center.org\n  User ana\n  ProxyJump gw\n"
        f"  IdentityFile {d}/id_hpc\n  CertificateFile {d}/certs/hpc-ana.pub\n"
        "  IdentityAgent none\n")
    spec = resolve_host(load_ssh_config(str(d / "ssh_config")), "cluster")
    assert (spec.hostname, spec.user, spec.proxy_jump, spec.identity_agent) == (
        "login.center.org", "ana", "gw", "none")
    keys = _keys("a", spec, use_agent=True)
    labels = [label for label, _ in keys]
    assert labels[0].startswith("id_hpc with ") and keys[0][1].public_blob is not None
    assert labels[1] == f"{d}/id_hpc" and keys[1][1].public_blob is None
    # a certificate of another key is not this key's: the plain key alone, as ssh pairs them
    _keygen("-t", "ed25519", "-N", "", "-f", str(d / "other"))
    (d / "ssh_config").write_text(
        f"Host cluster\n  HostName login.center.org\n  User ana\n  IdentityFile {d}/other\n"
        f"  CertificateFile {d}/certs/hpc-ana.pub\n")
    spec = resolve_host(load_ssh_config(str(d / "ssh_config")), "cluster")
    assert [label for label, _ in _keys("a", spec, use_agent=False)] == [f"{d}/other"]


def _user_of(tmp_path: Path, match: str) -> str:
    (tmp_path / "ssh_config").write_text(
        f"Host cluster\n  HostName login.center.org\nMatch {match}\n  User matched\n")
    return resolve_host(load_ssh_config(str(tmp_path / "ssh_config")), "cluster",
                        user=None).user


@pytest.mark.parametrize("match,applies", [
    ("host *.center.org", True), ("originalhost cluster", True), ("all", True),
    ("host *.other.org", False),
    # fault: `tagged` was taken as met (the block set every host's user); the engine runs
    # ssh without a tag (-P), so `tagged` is not met and `!tagged` is
    ("tagged hpc", False), ("host *.center.org tagged hpc", False), ("!tagged hpc", True),
    ("host *.center.org !tagged hpc", True)])
def test_match_blocks_apply_where_ssh_applies_them(tmp_path, match, applies):
    assert (_user_of(tmp_path, match) == "matched") is applies


@pytest.mark.parametrize("criterion", ["localnetwork 10.0.0.0/8", "sessiontype shell",
                                       "command sbatch", "version OpenSSH_9*"])
def test_fault_a_match_criterion_the_library_does_not_evaluate_is_refused(tmp_path,
                                                                          criterion):
    # paramiko took these as met: the block's settings applied to every host
    with pytest.raises(BadInput, match=rf"line 3: 'Match {criterion.split()[0]}' is not "
                                       r"evaluated .* set transport.ssh_config"):
        _user_of(tmp_path, criterion)


def test_an_alias_with_a_proxy_jump_is_a_host(d):
    (d / "ssh_config").write_text("Host cluster\n  HostName login.center.org\n"
                                  "  ProxyJump ana@gw.center.org:2222\n")
    cfg = loads(d, ssh_site(d, f"host: cluster\nkey_file: {d}/id_ed25519\n"
                               f"ssh_config: {d}/ssh_config"))
    t = cfg.sites[0].transport
    assert (t.host, t.proxy_jump, t.ssh_config) == ("cluster", None, f"{d}/ssh_config")
    spec = resolve_host(load_ssh_config(t.ssh_config), t.host)
    assert (spec.hostname, spec.proxy_jump) == ("login.center.org", "ana@gw.center.org:2222")


# -- 2. variables and relative paths ----------------------------------------------------------

def test_home_and_other_variables_in_key_paths(d, monkeypatch):
    # ${HOME} and $HOME are each user's ~ (a shared file means each one's own home)
    for written in ("${HOME}/.ssh/id_hpc", "$HOME/.ssh/id_hpc"):
        t = loads(d, ssh_site(d, f"host: login.center.org\nkey_file: '{written}'")
                  ).sites[0].transport
        assert t.key_file == "~/.ssh/id_hpc"
    monkeypatch.setenv("HPC_KEYS", str(d))
    t = loads(d, ssh_site(d, "host: login.center.org\nkey_file: ${HPC_KEYS}/id_ed25519")
              ).sites[0].transport
    assert t.key_file == f"{d}/id_ed25519"
    monkeypatch.delenv("HPC_KEYS")
    msg = refused(d, ssh_site(d, "host: login.center.org\nkey_file: ${HPC_KEYS}/id"))
    assert "names $HPC_KEYS, which is not set in this environment" in msg and "(line 7)" in msg


def test_a_relative_key_path_is_beside_the_sites_file(d):
    t = loads(d, ssh_site(d, "host: login.center.org\nkey_file: id_ed25519")).sites[0].transport
    assert t.key_file == f"{d}/id_ed25519"
    msg = refused(d, ssh_site(d, "host: login.center.org\nkey_file: keys/id_ed25519"))
    assert f"transport.key_file: {d}/keys/id_ed25519 does not exist" in msg


# -- 3. names, numbers, truth values, ids -----------------------------------------------------

@pytest.mark.parametrize("name", ['"a "', '" a"', '"a\\t"'])
def test_fault_a_site_name_with_a_space_at_an_end_says_so(d, name):
    msg = refused(d, f"sites:\n  - name: {name}\n    transport: {{kind: local}}\n")
    assert "is not a site name (it starts or ends with a space: remove it)" in msg, msg
    assert "(line 2)" in msg


def test_numbers_written_as_strings_are_read_as_numbers(d):
    cfg = loads(d, "sites:\n  - name: a\n    scheduler: pbs\n    max_job_name: '15'\n"
                   "    charge_factor: '1.5'\n    speed_factor: \"2\"\n"
                   "    transport: {kind: local, command_timeout_s: '30'}\n")
    s = cfg.sites[0]
    assert (s.max_job_name, s.charge_factor, s.speed_factor,
            s.transport.command_timeout_s) == (15, 1.5, 2.0, 30.0)
    msg = refused(d, site("speed_factor: 120%"))
    assert "speed_factor: Input should be a valid number" in msg and "a plain number" in msg


@pytest.mark.parametrize("written,value", [
    ("yes", True), ("on", True), ("no", False), ("off", False), ("'yes'", True),
    ("'on'", True), ("'off'", False), ("'False'", False), ("1", True), ("0", False)])
def test_truth_values_as_yaml_and_people_write_them(d, written, value):
    s = loads(d, site(f"auto: {written}\nhedge: {written}")).sites[0]
    assert (s.auto, s.hedge) == (value, value)


def test_a_truth_value_that_is_none_is_refused(d):
    msg = refused(d, site("hedge: maybe"))
    assert "hedge: Input should be a valid boolean" in msg and "(true or false)" in msg


@pytest.mark.parametrize("written", ["my-endpoint#dtn", "'nersc#dtn'", "'12345'",
                                     "6c54cade-bde5-45c1-bdea"])
def test_a_globus_collection_that_is_no_uuid_is_refused(d, written):
    msg = refused(d, site(f"globus_collection: {written}"))
    assert "globus_collection: expected a Globus collection id, a UUID such as" in msg, msg
    assert "(line 4)" in msg


def test_a_globus_collection_in_capitals_is_taken(d):
    s = loads(d, site("globus_collection: 6C54CADE-BDE5-45C1-BDEA-F4BD71DBA2CC")).sites[0]
    assert s.globus_collection == "6C54CADE-BDE5-45C1-BDEA-F4BD71DBA2CC"


# -- 4. scheduler names ---------------------------------------------------------------------------

@pytest.mark.parametrize("written,meant", [
    ("slurn", "did you mean slurm?"), ("Slrum", "did you mean slurm?"),
    ("gridengin", "did you mean gridengine (read as sge)?"),
    ("openpbs-pro", "did you mean pbs-pro (read as pbs)?"), ("lfs", "did you mean lsf?")])
def test_fault_a_misspelt_scheduler_names_the_nearest(d, written, meant):
    msg = refused(d, site(f"scheduler: {written}"))
    assert f"scheduler: Input should be 'slurm', 'pbs', 'lsf', 'flux' or 'sge', not " \
           f"'{written.lower()}'; {meant}" in msg, msg


@pytest.mark.parametrize("written", ["htcondor", "kubernetes", "cobalt"])
def test_fault_a_scheduler_the_engine_does_not_run_is_said(d, written):
    msg = refused(d, site(f"scheduler: {written}"))
    assert "(the engine runs Slurm, PBS Pro/Torque, LSF, Flux and Grid Engine sites)" in msg


# -- 5. a key given twice -----------------------------------------------------------------------

def test_a_key_given_twice_is_refused_naming_both_lines(d):
    msg = refused(d, site("workdir: ~/a\nscheduler: slurm\nworkdir: ~/b"))
    assert "line 6, column 5: key 'workdir' is given twice (first on line 4)" in msg, msg
    msg = refused(d, ssh_site(d, "host: a.center.org\nhost: b.center.org"))
    assert "key 'host' is given twice (first on line 6)" in msg, msg
