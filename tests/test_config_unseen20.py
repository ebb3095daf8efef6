"""Sites files, twentieth sweep: files whose shape YAML refuses in its parser's words (a key
indented one space off, a key with no space after its colon, two `key:` on one line, a key
with no colon, a quote or bracket never closed), one site written under `sites:` with no
`- `, a scheduler given by one of its commands (`sbatch`, `qsub`, `bsub`) or as Oracle Grid
Engine's `OGE`; and odd but valid forms (BOM with CRLF, old Mac line ends, comments
between a dash and its keys, merges of two anchors, `[IPv6]:port`, ports as text, `$VAR`
and `${VAR}` in key paths, a `...` end marker, a complex key). Each is read as meant or
refused naming file, line, key and what is accepted (the CLI exits 2). The tests marked
`fault` failed before this sweep's fixes."""

from __future__ import annotations

import os

import pytest
import sweep_helpers
from test_config_unseen2 import loads, refused, write

from diamond_jupyter.cli import main

key_dir = sweep_helpers.key_dir
LOCAL = "    transport: {kind: local}\n"


# ---- the file's shape, said in plain words -------------------------------------------------

@pytest.mark.parametrize("text,said", [
    ("sites:\n  - name: a\n   transport: {kind: local}\n",
     "line 3 is indented 3 spaces, which lines up with nothing above it (line 2's `name` is "
     "indented 4)"),
    ("sites:\n  - name: a\n    transport: {kind: local}\n - name: b\n   transport: {kind: local}\n",
     "line 4 is indented 1 space, which lines up with nothing above it (line 3's `transport` "
     "is indented 4)"),
    ("sites:\n  - name: a\n     transport: {kind: local}\n",
     "line 3 is indented 5 spaces, deeper than line 2's key (4), so YAML reads it as that "
     "value going on"),
    ("sites:\n  - name:a\n    transport: {kind: local}\n",
     "line 2 `name:a` has no space after its colon, so YAML reads it as text, not a key: "
     "write `name: a`"),
    ("sites:\n  - name: a\n    transport: kind: local\n",
     "line 3 holds a second `key:` inside a value: give a mapping its own lines below its "
     "key, or braces"),
    ("sites:\n  - name: a\n    transport\n      kind: local\n",
     "line 3 (`transport`) has no `:` after its key: write `transport:`"),
    ("sites:\n  - name: 'a\n    transport: {kind: local}\n",
     "the ' opened on line 2, column 11 is never closed"),
    ("sites:\n  - name: a\n    transport: {kind: local}\n    allowed_partitions: [debug, gpu\n"
     "    scheduler: pbs\n", "the [ opened on line 4, column 25 is not closed before line 5"),
])
def test_fault_a_file_yaml_cannot_read_says_which_line_is_out_of_step(key_dir, text, said):
    """PyYAML's own words were all that was said: `expected <block end>, but found '<block
    mapping start>'`, `mapping values are not allowed here`, `could not find expected ':'`."""
    got = refused(key_dir, text)
    assert "is not valid YAML: line " in got and said in got, got


def test_fault_the_cli_exits_2_naming_the_line_out_of_step(key_dir, capsys):
    path = write(key_dir, "sites:\n  - name: a\n   transport: {kind: local}\n")
    assert main(["sites", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "line 3 is indented 3 spaces" in err and \
        "Traceback" not in err and err.count("\n") == 1, err


def test_a_url_in_a_value_is_no_second_key(key_dir):
    """`http://r:6820` holds colons and is read as written, not taken for a key."""
    cfg = loads(key_dir, "sites:\n  - name: r\n    workdir: /home/u/.diamond\n    transport:\n"
                         "      kind: slurmrestd\n      url: http://r:6820\n"
                         "      token_command: scontrol token\n")
    assert cfg.sites[0].transport.url == "http://r:6820"


# ---- one site with no `- ` -----------------------------------------------------------------

def test_fault_one_site_written_without_its_dash_names_the_site(key_dir):
    """The hint read the first key, `name`, as the site's name: `- name: name`."""
    got = refused(key_dir, "sites:\n  name: alpha\n  scheduler: pbs\n  transport: {kind: local}\n")
    assert "sites: Input should be a valid list, got a mapping: one site's keys" in got and \
        "write `- name: alpha`" in got and "name: name" not in got and \
        got.endswith("(line 1)"), got


def test_sites_written_as_a_map_of_names_still_names_the_first(key_dir):
    got = refused(key_dir, "sites:\n  alpha:\n    transport: {kind: local}\n")
    assert "`- name: alpha` with its keys" in got, got


# ---- a scheduler by another of its names ---------------------------------------------------

@pytest.mark.parametrize("written,said", [
    ("sbatch", "sbatch is a command of slurm; write scheduler: slurm"),
    ("bsub", "bsub is a command of lsf; write scheduler: lsf"),
    ("qsub", "qsub is a command of pbs and of sge; write scheduler: pbs or sge"),
    ("pbsnodes", "pbsnodes is a command of pbs; write scheduler: pbs"),
])
def test_fault_a_scheduler_given_by_its_command_names_the_scheduler(key_dir, written, said):
    """They were said to be no scheduler the engine runs, with no nearer name."""
    got = refused(key_dir, f"sites:\n  - name: a\n    scheduler: {written}\n{LOCAL}")
    assert f"scheduler: Input should be 'slurm', 'pbs', 'lsf', 'flux' or 'sge', not " \
           f"'{written}': {said} (line 3)" in got, got


@pytest.mark.parametrize("written", ["OGE", "oge", "Oracle Grid Engine"])
def test_fault_oracle_grid_engine_by_its_short_name_is_sge(key_dir, written):
    """`OGE` was refused with `did you mean soge`."""
    cfg = loads(key_dir, f"sites:\n  - name: a\n    scheduler: {written}\n{LOCAL}")
    assert cfg.sites[0].scheduler == "sge"


def test_a_scheduler_not_run_here_is_still_said_so(key_dir):
    got = refused(key_dir, f"sites:\n  - name: a\n    scheduler: htcondor\n{LOCAL}")
    assert "not 'htcondor' (the engine runs Slurm, PBS Pro/Torque, LSF, Flux and Grid " \
           "Engine sites) (line 3)" in got, got


# ---- odd but valid forms -------------------------------------------------------------------

@pytest.mark.parametrize("raw", [
    b"\xef\xbb\xbfsites:\r\n  - name: a\r\n    transport: {kind: local}\r\n",
    b"sites:\r  - name: a\r    transport: {kind: local}\r",
    b"sites: # all of them\n  - # the first\n    name: a # its name\n"
    b"    transport: {kind: local, # on this machine\n      }\n# the end",
    b"---\nsites:\n  - ? name\n    : a\n    transport: {kind: local}\n...\n",
])
def test_odd_line_ends_comments_and_markers_read_as_meant(key_dir, raw):
    path = key_dir / "sites.yaml"
    path.write_bytes(raw)
    from diamond_jupyter.config import load_config
    [site] = load_config(path).sites
    assert (site.name, site.transport.kind) == ("a", "local")


def test_two_anchors_merged_into_a_site_and_one_key_over_them(key_dir):
    cfg = loads(key_dir, "x-pbs: &pbs {scheduler: pbs, default_account: proj}\n"
                         "x-here: &here {transport: {kind: local}}\nsites:\n"
                         "  - <<: [*pbs, *here]\n    name: a\n"
                         "  - <<: [*pbs, *here]\n    name: b\n    scheduler: slurm\n")
    assert [(s.name, s.scheduler, s.default_account, s.transport.kind) for s in cfg.sites] == \
        [("a", "pbs", "proj", "local"), ("b", "slurm", "proj", "local")]


@pytest.mark.parametrize("host,port,want", [
    ("'[2001:db8::1]:2200'", None, ("2001:db8::1", 2200)),
    ("2001:db8::1", "'2222'", ("2001:db8::1", 2222)),
    ("login.example.org # the main login", "' 22 '", ("login.example.org", 22)),
    ("'ssh://alice@login.example.org:2222'", None, ("login.example.org", 2222)),
])
def test_hosts_and_ports_in_other_forms(key_dir, host, port, want):
    cfg = loads(key_dir, f"sites:\n  - name: a\n    transport:\n      host: {host}\n"
                         + (f"      port: {port}\n" if port else "")
                         + f"      key_file: {key_dir}/id_ed25519\n"
                           f"      known_hosts: {key_dir}/known_hosts\n")
    t = cfg.sites[0].transport
    assert (t.host, t.port) == want


@pytest.mark.parametrize("written", ["$H7_KEYS/id_ed25519", "${H7_KEYS}/id_ed25519"])
def test_a_variable_in_a_key_path_is_read_from_the_environment(key_dir, monkeypatch, written):
    monkeypatch.setenv("H7_KEYS", str(key_dir))
    cfg = loads(key_dir, f"sites:\n  - name: a\n    transport:\n      host: h\n"
                         f"      key_file: {written}\n      known_hosts: {key_dir}/known_hosts\n")
    assert cfg.sites[0].transport.key_file == f"{key_dir}/id_ed25519"


def test_an_unset_variable_in_a_key_path_is_named(key_dir, monkeypatch):
    monkeypatch.delenv("H7_NOT_SET", raising=False)
    got = refused(key_dir, "sites:\n  - name: a\n    transport:\n      host: h\n"
                           "      key_file: ${H7_NOT_SET}/id\n")
    assert "transport.key_file: '${H7_NOT_SET}/id' names $H7_NOT_SET, which is not set" in got \
        and got.endswith("(line 5)"), got


def test_a_key_others_can_read_is_refused_naming_its_mode(key_dir):
    key = key_dir / "id_ed25519"
    os.chmod(key, 0o644)
    got = refused(key_dir, f"sites:\n  - name: a\n    transport:\n      host: h\n"
                           f"      key_file: {key}\n      known_hosts: {key_dir}/known_hosts\n")
    assert f"transport.key_file: {key} can be read by other users (mode 644); `chmod 600" in got \
        and got.endswith("(line 5)"), got
