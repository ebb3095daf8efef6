"""Sites files and DiamondApp settings, seventeenth sweep: a required key written in capitals
or misspelt (`Name:`, said missing before), a site's key under transport (`workdir:`), two
partitions in one allowed_partitions item (`'debug,gpu'`), a key path ending in a blank, a
sites file the server's user may not read (its mode and owner said), `scheduler:
slurmrestd`, a user's own site whose name differs from an admin's only in case or whose host
is in capitals, `DiamondApp.allowed_sites` naming a site in other case or no site, and a
setting given both in a config file and on the command line (the one
used said). As guards, what an admin writes meaning one plain thing: YAML merge keys with an
override, a merged list of defaults, a transport anchored in one site and merged in
another, a port in quotes beside a bracketed IPv6 host, a jump chain with blanks after its
commas, a key path of `~` and a variable, and duplicate keys and tabs in flow collections.
Each mistake is refused naming the file, the key, the line and what would be accepted. The
tests marked `fault` failed before this sweep's fixes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import paramiko
import pytest
import sweep_helpers
from test_config_unseen2 import loads, refused
from traitlets.config import Application, KVArgParseConfigLoader, PyFileConfigLoader

from diamond_jupyter.server.admin import add_user_sites, setting_overrides
from diamond_jupyter.server.app import DiamondApp
from diamond_jupyter.transports.ssh_auth import parse_jump

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

key_dir = sweep_helpers.key_dir
LOCAL = "    transport: {kind: local}\n"


def _ssh(d: Path, lines: str, site: str = "") -> str:
    return sweep_helpers.ssh_site(d, f"key_file: {d}/id_ed25519\n{lines}", site)


# ---- a required key misspelt: named, not said missing ---------------------------------------

@pytest.mark.parametrize("key", ["Name", "nmae", "NAME"])
def test_fault_a_misspelt_name_key_is_named_with_the_key_meant(key_dir, key):
    """`Name: a` was refused as `name: Field required (and 1 more)`: the key to fix was
    hidden behind the count."""
    got = refused(key_dir, f"sites:\n  - {key}: a\n{LOCAL}")
    assert f"site (sites[0]): {key}: unknown key (did you mean name? accepted: name, " \
        "scheduler," in got, got
    assert "Field required" not in got and "more)" not in got, got
    assert got.endswith("(line 2)"), got


def test_a_name_truly_missing_is_still_said_missing(key_dir):
    got = refused(key_dir, f"sites:\n  - scheduler: slurm\n{LOCAL}")
    assert "name: Field required" in got, got


# ---- a site's key written under transport -----------------------------------------------

@pytest.mark.parametrize("key,said", [
    ("workdir", "unknown key: workdir is the site's, written beside transport: under the "
                "site's `- name:`; accepted here: kind, host,"),
    ("wrokdir", "unknown key (did you mean workdir? the site's, written beside transport: "
                "under the site's `- name:`; accepted here: kind, host,"),
    ("preambel", "unknown key (did you mean preamble? the site's,"),
])
def test_fault_a_sites_key_under_transport_is_said_to_belong_to_the_site(key_dir, key, said):
    """`transport: {workdir: /scratch}` listed transport's keys only, none of them near."""
    got = refused(key_dir, f"sites:\n  - name: a\n    transport: {{kind: local, {key}: x}}\n")
    assert f"site 'a' (sites[0]): transport.{key}: {said}" in got, got
    assert got.endswith("(line 3)"), got


# ---- two partitions in one item -------------------------------------------------------------

@pytest.mark.parametrize("scheduler", ["slurm", "pbs", "lsf"])  # sge: a queue list is kept
def test_fault_an_allowed_partitions_item_naming_two_is_refused(key_dir, scheduler):
    """`['debug,gpu']` was one partition of that name, which none has: every job naming
    debug was refused as not allowed, and placement ruled out every partition."""
    got = refused(key_dir, f"sites:\n  - name: a\n    scheduler: {scheduler}\n{LOCAL}"
                           "    allowed_partitions: ['debug,gpu', long]\n")
    assert "allowed_partitions: 'debug,gpu' names several partitions in one item, and is no " \
        "partition's name: list each as its own item ([debug, gpu])" in got, got
    assert got.endswith("(line 5)"), got


def test_a_partition_list_as_one_string_is_refused_with_the_list_form(key_dir):
    got = refused(key_dir, f"sites:\n  - name: a\n{LOCAL}    allowed_partitions: debug,gpu\n")
    assert "allowed_partitions: Input should be a valid list, got one value (write a list: " \
        "[a, b], or one `- a` per line) (line 4)" in got, got


# ---- a key path ending in a blank ------------------------------------------------------------

@pytest.mark.parametrize("key", ["key_file", "known_hosts"])
def test_fault_a_key_path_ending_in_a_blank_is_shown_and_said(key_dir, key):
    """`key_file: '/k/id_ed25519 '` was said `/k/id_ed25519  does not exist`: the blank
    could not be seen."""
    path = f"{key_dir}/{key} "
    text = _ssh(key_dir, "host: login.example.org").replace(
        f"{key}: {key_dir}/{'id_ed25519' if key == 'key_file' else key}", f"{key}: '{path}'")
    got = refused(key_dir, text)
    assert f"transport.{key}: {path!r} does not exist (the path ends with a blank, part of " \
        "the file's name as written: remove it)" in got, got


# ---- a sites file this user may not read -----------------------------------------------------

def _as_unprivileged(argv: list[str]) -> list[str]:
    """ARGV run without root's right to read any file (root here: the test's file modes
    would not hold it back)."""
    if os.geteuid() != 0:
        return argv
    if shutil.which("setpriv") is None:
        pytest.skip("root without setpriv: no way to be refused a read")
    caps = "-dac_override,-dac_read_search"
    return ["setpriv", f"--bounding-set={caps}", f"--inh-caps={caps}", *argv]


def _cli_sites(config: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(_as_unprivileged([sys.executable, "-m", "diamond_jupyter.cli",
                                            "sites", "--config", str(config)]),
                          capture_output=True, text=True, env=env, timeout=120, check=False)


def test_fault_an_unreadable_sites_file_says_its_mode_owner_and_what_to_do(tmp_path):
    """Was `cannot be read: Permission denied` alone: nothing of who may read it."""
    f = tmp_path / "sites.yaml"
    f.write_text(f"sites:\n  - name: a\n{LOCAL}")
    f.chmod(0o600)
    os.chown(f, 65534, 65534) if os.geteuid() == 0 else f.chmod(0)
    r = _cli_sites(f)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    mode = "0600, owner uid 65534" if os.geteuid() == 0 else "0000"
    assert f"sites file {f} cannot be read: Permission denied (mode {mode}" in r.stderr, r.stderr
    assert "let that user read it, e.g. chmod a+r for a file every user's server reads, or " \
        "give one of your own with --config FILE or DIAMOND_CONFIG)" in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1, r.stderr  # one line, no traceback


def test_fault_a_sites_file_in_a_directory_not_entered_names_the_directory(tmp_path):
    locked = tmp_path / "etc-diamond"
    locked.mkdir()
    f = locked / "sites.yaml"
    f.write_text(f"sites:\n  - name: a\n{LOCAL}")
    locked.chmod(0o700)
    if os.geteuid() == 0:
        os.chown(locked, 65534, 65534)
    else:
        locked.chmod(0)
    try:
        r = _cli_sites(f)
    finally:
        locked.chmod(0o755)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert f"sites file {f} cannot be read: Permission denied (the directory {locked} " \
        "cannot be entered by uid" in r.stderr, r.stderr
    assert "let that user through it, e.g. chmod o+x, or give a file elsewhere)" in r.stderr


# ---- scheduler: slurmrestd -------------------------------------------------------------------

def test_fault_slurmrestd_as_a_scheduler_is_said_to_be_a_transport_kind(key_dir):
    """Was `did you mean slurm?`, leaving the admin to find where slurmrestd goes."""
    got = refused(key_dir, f"sites:\n  - name: a\n    scheduler: slurmrestd\n{LOCAL}")
    assert "scheduler: Input should be 'slurm', 'pbs', 'lsf', 'flux' or 'sge'; slurmrestd is " \
        "a door to Slurm, not a scheduler: write scheduler: slurm with transport: {kind: " \
        "slurmrestd, url: ...} (line 3)" in got, got


# ---- a user's own sites beside the admin's ---------------------------------------------------

def _user_file(d: Path, name: str, host: str) -> Path:
    f = d / "user-sites.yaml"
    f.write_text(_ssh(d, f"host: {host}").replace("name: a", f"name: {name}"))
    return f


def test_fault_a_user_site_named_as_an_admins_but_for_case_is_refused(key_dir):
    """`Alpha` beside the admin's `alpha` was loaded: two sites one file would refuse
    (their job ids and work directories mix where case is not told apart)."""
    admin = loads(key_dir, f"sites:\n  - name: alpha\n{LOCAL}")
    cfg, mine, why = add_user_sites(admin, str(_user_file(key_dir, "Alpha",
                                                          "login.partner.example")),
                                    ["*.partner.example"])
    assert mine == [] and [s.name for s in cfg.sites] == ["alpha"], cfg.sites
    assert why == ["Alpha: the admin's sites file defines alpha already (site names that "
                   "differ only in case are one name: job ids and work directories would "
                   "mix); give yours another name"], why


@pytest.mark.parametrize("host", ["LOGIN.Partner.Example", "login.partner.example."])
def test_fault_a_user_site_host_in_capitals_or_with_its_root_dot_is_allowed(key_dir, host):
    """DNS does not tell `LOGIN.Partner.Example` from `login.partner.example`; the admin's
    pattern did, and refused the user's site."""
    admin = loads(key_dir, f"sites:\n  - name: alpha\n{LOCAL}")
    cfg, mine, why = add_user_sites(admin, str(_user_file(key_dir, "lab", host)),
                                    ["*.partner.example"])
    assert (mine, why) == (["lab"], []), why


def test_a_user_site_on_a_host_the_admin_did_not_allow_is_still_refused(key_dir):
    admin = loads(key_dir, f"sites:\n  - name: alpha\n{LOCAL}")
    _, mine, why = add_user_sites(admin, str(_user_file(key_dir, "lab", "LOGIN.other.example")),
                                  ["*.partner.example"])
    assert mine == [] and "host LOGIN.other.example is not one the admin lets users add" \
        in why[0], why


# ---- a setting in a config file and on the command line --------------------------------------

def test_fault_a_setting_in_a_file_and_on_the_command_line_says_the_command_line_wins(tmp_path):
    """The command line's value was used and nothing said so: an admin whose
    /etc/jupyter file was overridden by a spawner's argument saw no trace of it."""
    (tmp_path / "jupyter_server_config.py").write_text(
        "c = get_config()  # noqa\nc.DiamondApp.allowed_sites = ['alpha']\n"
        "c.DiamondApp.poll_interval_s = 30.0\n")
    argv = ["--DiamondApp.poll_interval_s=5"]
    # what traitlets makes of the two: the command line's value
    app = Application()
    app.update_config(PyFileConfigLoader("jupyter_server_config.py",
                                         path=str(tmp_path)).load_config())
    app.update_config(KVArgParseConfigLoader(argv=argv).load_config())
    assert DiamondApp(config=app.config).poll_interval_s == 5.0
    said = setting_overrides(["allowed_sites", "poll_interval_s"], argv, [str(tmp_path)])
    assert said == [
        "DiamondApp.poll_interval_s is set in the server's command line (under JupyterHub: "
        f"c.Spawner.args) and in {tmp_path / 'jupyter_server_config.py'} (line 3): the value "
        "in the server's command line (under JupyterHub: c.Spawner.args) is used"], said


def test_a_setting_in_two_config_directories_says_the_higher_ones_is_used(tmp_path):
    user, system = tmp_path / "user", tmp_path / "etc"
    for d, n in ((user, 2), (system, 9)):
        (d / "jupyter_server_config.d").mkdir(parents=True)
        (d / "jupyter_server_config.json").write_text(
            f'{{"DiamondApp": {{"max_body_bytes": {n}000}}}}\n')
    (system / "jupyter_server_config.d" / "diamond.json").write_text(
        '{"DiamondApp": {"max_body_bytes": 1}}\n')
    said = setting_overrides(["max_body_bytes"], [], [str(user), str(system)])
    first = user / "jupyter_server_config.json"
    assert said == [f"DiamondApp.max_body_bytes is set in {first} (line 1) and in "
                    f"{system / 'jupyter_server_config.json'} (line 1); and in "
                    f"{system / 'jupyter_server_config.d' / 'diamond.json'} (line 1): the value "
                    f"in {first} (line 1) is used"], said


# ---- guards: what an admin means by plain YAML -----------------------------------------------

def test_a_merge_key_then_an_override_is_the_override_not_a_duplicate(key_dir):
    cfg = loads(key_dir, "x-defaults: &d\n  scheduler: slurm\n  transport: {kind: local}\n"
                         "sites:\n  - <<: *d\n    name: a\n    scheduler: pbs\n")
    assert cfg.sites[0].scheduler == "pbs" and cfg.sites[0].transport.kind == "local"


def test_merged_defaults_in_a_list_take_the_first_mappings_value(key_dir):
    """YAML's merge: `<<: [*a, *b]`, a key both hold is the first's."""
    cfg = loads(key_dir, "x-a: &a\n  scheduler: lsf\nx-b: &b\n  scheduler: pbs\n"
                         f"  workdir: /scratch/b\nsites:\n  - <<: [*a, *b]\n    name: a\n{LOCAL}")
    assert (cfg.sites[0].scheduler, cfg.sites[0].workdir) == ("lsf", "/scratch/b")


def test_a_transport_anchored_in_one_site_and_merged_in_another_keeps_the_override(key_dir):
    t = (f"{{kind: ssh, host: login1.example.org, port: '2222', key_file: {key_dir}/id_ed25519"
         f", known_hosts: {key_dir}/known_hosts, use_agent: false}}")
    cfg = loads(key_dir, f"sites:\n  - name: a\n    transport: &t {t}\n  - name: b\n"
                         "    transport:\n      <<: *t\n      host: login2.example.org\n")
    a, b = (s.transport for s in cfg.sites)
    assert (a.host, a.port, b.host, b.port) == ("login1.example.org", 2222,
                                                "login2.example.org", 2222)


def test_a_quoted_port_beside_a_bracketed_ipv6_host_is_that_port(key_dir):
    t = loads(key_dir, _ssh(key_dir, "host: '[2001:db8::7]'\nport: '2200'")).sites[0].transport
    assert (t.host, t.port) == ("2001:db8::7", 2200)


def test_a_jump_chain_with_blanks_after_its_commas_is_its_hops_in_order(key_dir):
    t = loads(key_dir, _ssh(key_dir, "host: login.example.org\n"
                                     "proxy_jump: 'ana@gw1.example.org:2222, gw2.example.org'"))
    hops = parse_jump(paramiko.SSHConfig(), t.sites[0].transport.proxy_jump)
    assert [(h.hostname, h.port) for h in hops] == [("gw1.example.org", 2222),
                                                    ("gw2.example.org", 22)], hops
    assert hops[0].user == "ana"


def test_a_key_path_of_tilde_and_a_variable_is_both_expanded(key_dir, monkeypatch):
    monkeypatch.setenv("HOME", str(key_dir))
    monkeypatch.setenv("SITE_KEY", "id_ed25519")
    text = sweep_helpers.ssh_site(key_dir, "host: login.example.org\nkey_file: ~/${SITE_KEY}")
    key = loads(key_dir, text).sites[0].transport.key_file
    assert Path(key).expanduser() == key_dir / "id_ed25519", key


@pytest.mark.parametrize("text,said", [
    ("sites:\n  - name: a\n    transport: {kind: local, kind: ssh}\n",
     "line 3, column 30: key 'kind' is given twice (first on line 3); give it once"),
    (f"sites:\n  - name: a\n{LOCAL}sites:\n  - name: b\n{LOCAL}",
     "line 4, column 1: key 'sites' is given twice (first on line 1); give it once"),
    (f"sites:\n  - name: a\n{LOCAL}    allowed_partitions: [debug,\tgpu]\n",
     "line 4, column 32: found character '\\t' that cannot start any token (a tab after "
     "other text on the line"),
])
def test_duplicate_keys_and_tabs_in_flow_collections_are_refused_by_line(key_dir, text, said):
    got = refused(key_dir, text)
    assert "is not valid YAML: " + said in got, got



# ---- DiamondApp.allowed_sites against the sites file, through a real server ----------------

@pytest.fixture
def jp_server_config(tmp_path, data_dir, request):
    """The one local site `here`, DiamondApp.allowed_sites the test's parameter."""
    from server_conftest import diamond_config  # a plugin: imported once pytest has it

    sites = sweep_helpers.here_sites_file(tmp_path, tmp_path / "here-work")
    cfg = diamond_config(str(sites), str(tmp_path / "store.sqlite3"))
    cfg["DiamondApp"]["allowed_sites"] = request.param
    return cfg


@pytest.mark.parametrize("jp_server_config", [["HERE"], ["here", "Here"]], indirect=True)
async def test_fault_an_allowed_site_written_in_other_case_is_the_files_site(
        jp_fetch, jp_serverapp, jp_server_config):
    """`allowed_sites: [HERE]` for the file's `here` allowed no site, and said nothing."""
    app = jp_serverapp.web_app.settings["diamond_app"]
    assert app.error is None and app.federation.allowed_sites == {"here"}, app.error
    state = json.loads((await jp_fetch("diamond", "api", "state",
                                       params={"max_age": 3600})).body)
    assert [s["name"] for s in state["sites"]] == ["here"], state["sites"]


@pytest.mark.parametrize("jp_server_config", [["here", "gone"]], indirect=True)
async def test_fault_an_allowed_site_of_no_site_is_refused_naming_the_file(
        jp_fetch, jp_serverapp, jp_server_config):
    state = json.loads((await jp_fetch("diamond", "api", "state")).body)
    sites = jp_server_config["DiamondApp"]["sites_file"]
    assert state["error"] == f"DiamondApp.allowed_sites names 'gone', no site of the sites " \
        f"file {sites} (its sites: here)", state["error"]
