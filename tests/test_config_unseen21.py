"""Sites files, twenty-first sweep: a list of sites with no `sites:` above it, a file of one
word, byte-order marks left inside a file by joining two saved files, a scheduler or kind
written as a one-item list, an `[IPv6]:port` host left unquoted; and odd but valid forms
met by new users (keys in other case refused with the near name, `name : a`, a dash alone
on its line, a list flush with its key, `2_222` as a port, a `%zone` IPv6 host, a merge
inside a transport, JSON with a trailing comma, Torque/OpenPBS/Spectrum LSF/UGE as
scheduler names). Each is read as meant or refused naming file, line, key and what is
accepted (the CLI exits 2). The tests marked `fault` failed before this sweep's fixes."""

from __future__ import annotations

import os

import pytest
import sweep_helpers
from test_config_unseen2 import loads, refused, write

from diamond_jupyter.cli import main

key_dir = sweep_helpers.key_dir
LOCAL = "    transport: {kind: local}\n"


def _ssh(key_dir, lines: str) -> str:
    return ("sites:\n  - name: a\n    transport:\n"
            + "".join(f"      {ln}\n" for ln in lines.strip().splitlines())
            + f"      key_file: {key_dir}/id_ed25519\n      known_hosts: {key_dir}/known_hosts\n")


# ---- the file's whole is no mapping -------------------------------------------------------

@pytest.mark.parametrize("text,said", [
    ("- name: a\n  transport: {kind: local}\n",
     "the file is a list of 1 site(s) with no `sites:` above it (line 1): write `sites:` on "
     "its own line first and indent the list under it"),
    ("# my sites\n\n- name: a\n  transport: {kind: local}\n- name: b\n"
     "  transport: {kind: local}\n",
     "the file is a list of 2 site(s) with no `sites:` above it (line 3)"),
    ("alpha\n", "the file holds one value, 'alpha' (line 1), not a mapping: expected `sites:`"),
    ("- alpha\n- beta\n", "the file holds a list (line 1), not a mapping"),
])
def test_fault_a_file_that_is_a_list_or_one_word_says_what_to_write(key_dir, text, said):
    """Said before: `expected a mapping with a 'sites' list, got list` (no line, no fix)."""
    got = refused(key_dir, text)
    assert said in got and "got list" not in got, got


def test_fault_the_cli_exits_2_on_a_list_of_sites_without_sites(key_dir, capsys):
    path = write(key_dir, "- name: a\n  transport: {kind: local}\n")
    assert main(["sites", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "no `sites:` above it (line 1)" in err and \
        "Traceback" not in err, err


# ---- byte-order marks inside the file ------------------------------------------------------

@pytest.mark.parametrize("text,line", [
    ("sites:\n  - name: a\n\ufeff" + LOCAL, 3),
    ("\ufeffx-a: &a {scheduler: pbs}\n\ufeffsites:\n  - name: a\n" + LOCAL, 2),
])
def test_fault_a_byte_order_mark_left_inside_by_joining_files_is_named(key_dir, text, line):
    """`cat head.yaml sites.yaml` keeps the second file's mark: its key was said unknown as
    `\\ufeffsites` with no word of the invisible character."""
    got = refused(key_dir, text)
    assert f"line {line}, column 1 holds a byte-order mark (U+FEFF)" in got and \
        "delete that character" in got, got


@pytest.mark.parametrize("marks", ["\ufeff", "\ufeff\ufeff"])
def test_a_byte_order_mark_at_the_start_is_read_as_nothing(key_dir, marks):
    assert [s.name for s in loads(key_dir, marks + "sites:\n  - name: a\n" + LOCAL).sites] \
        == ["a"]


def test_a_no_break_space_is_still_named_as_such(key_dir):
    got = refused(key_dir, "\ufeffsites:\n  - name: a\n\u00a0\u00a0\u00a0\u00a0transport: "
                           "{kind: local}\n")
    assert "line 3, column 1 holds a NO-BREAK SPACE (U+00A0)" in got, got


# ---- one name written as a list ------------------------------------------------------------

def test_fault_a_scheduler_written_as_a_one_item_list_says_to_write_it_alone(key_dir):
    got = refused(key_dir, f"sites:\n  - name: a\n    scheduler: [slurm]\n{LOCAL}")
    assert "scheduler: Input should be 'slurm', 'pbs', 'lsf', 'flux' or 'sge', not a list: " \
           "write the one name alone, scheduler: slurm (line 3)" in got, got


def test_fault_a_transport_kind_written_as_a_list_says_to_write_it_alone(key_dir):
    got = refused(key_dir, "sites:\n  - name: a\n    transport:\n      kind: [local]\n")
    assert "transport.kind: Input should be 'ssh', 'local' or 'slurmrestd', not a list: " \
           "write the one name alone, kind: local (line 4)" in got, got


# ---- keys in other case, duplicates, tabs: refused naming the line -------------------------

@pytest.mark.parametrize("text,said", [
    ("Sites:\n  - name: a\n" + LOCAL, "Sites: unknown key (did you mean sites?"),
    ("sites:\n  - Name: a\n    transport: {kind: local}\n", "Name: unknown key (did you mean "
                                                              "name?"),
    ("sites:\n  - name: a\n    transport: {kind: Local}\n", "not 'Local'; did you mean local?"),
    ("sites:\n  - name: a\n    scheduler: pbs\n    scheduler: slurm\n" + LOCAL,
     "line 4, column 5: key 'scheduler' is given twice (first on line 3); give it once"),
    ("sites:\n\t- name: a\n\t  transport: {kind: local}\n", "line 2, column 1: found character "
                                                              "'\\t'"),
    ("sites:\n  - name: a\t# the first\n" + LOCAL, "put a space there instead"),
    ("sites:\n  - name: a\n    default-account: x\n" + LOCAL, "did you mean default_account?"),
    ("sites:\n  - name: a\n" + LOCAL + "  - name: a\n" + LOCAL,
     "site name 'a' is used twice (sites[0] and sites[1])"),
])
def test_case_duplicates_and_tabs_are_refused_naming_the_line(key_dir, text, said):
    got = refused(key_dir, text)
    assert said in got and "line " in got, got


# ---- hosts, ports and paths ---------------------------------------------------------------

@pytest.mark.parametrize("lines,want", [
    ("host: h\nport: 2_222", ("h", 2222)),
    ("host: 'fe80::1%eth0'", ("fe80::1%eth0", None)),
    ("host: '[2001:db8::1]'", ("2001:db8::1", None)),
    ("host: 10.0.0.5:2222", ("10.0.0.5", 2222)),
    ("host: login.example.org.", ("login.example.org.", None)),
])
def test_hosts_and_ports_in_forms_not_met_before(key_dir, lines, want):
    t = loads(key_dir, _ssh(key_dir, lines)).sites[0].transport
    assert (t.host, t.port) == want


@pytest.mark.parametrize("lines,said", [
    ("host: h\nport: 22/tcp", "transport.port: Input should be a valid integer"),
    ("host: h\nport: 22.5", "got a number with a fractional part"),
    ("host: h\nport: 22:22", "numbers joined by ':' are one number in base 60"),
    ("host: '[2001:db8::1]:2200'\nport: 22", "host gives port 2200 and port gives 22: give it "
                                             "once"),
    ("host: bob@login\nuser: alice", "host gives user bob and user gives alice: give it once"),
    ("host: $LOGIN_HOST", "a host is written out, not read from a variable"),
    ("host: h\nurl: http://x:6820", "url: for a transport of kind slurmrestd, not ssh"),
])
def test_ports_hosts_and_transport_options_that_conflict_are_refused(key_dir, lines, said):
    assert said in refused(key_dir, _ssh(key_dir, lines))


def test_fault_an_ipv6_host_and_port_left_unquoted_says_to_quote_it(key_dir):
    """Said before: `line 4 is indented 6 spaces, which lines up with nothing above it`,
    though line 4 lines up with its mapping: YAML had read `[2001:db8::1]` as a list."""
    got = refused(key_dir, _ssh(key_dir, "host: [2001:db8::1]:2200"))
    assert "line 4's value `[2001:db8::1]:2200` begins with `[`, which YAML reads as a list, " \
           "and text follows its `]`" in got and "put it in quotes, '[2001:db8::1]:2200'" in got \
        and "indented" not in got, got


@pytest.mark.parametrize("port", ["$SSH_PORT", "'${SSH_PORT:-22}'"])
def test_fault_a_port_from_a_variable_says_variables_are_not_read_there(key_dir, port):
    """Said only `unable to parse string as an integer`, though the host beside it said
    where variables are read."""
    got = refused(key_dir, _ssh(key_dir, f"host: h\nport: {port}"))
    assert "transport.port: " in got and "a port is written out, not read from a variable " \
           "(only the paths of local files" in got and got.endswith("(line 5)"), got


def test_a_flow_list_with_a_comment_after_it_is_read(key_dir):
    cfg = loads(key_dir, "sites:\n  - name: a\n    allowed_partitions: [debug, gpu] # both\n"
                         + LOCAL)
    assert cfg.sites[0].allowed_partitions == ["debug", "gpu"]


def test_a_key_readable_by_its_group_is_refused_with_its_mode(key_dir):
    key = key_dir / "group_key"
    key.write_bytes((key_dir / "id_ed25519").read_bytes())
    os.chmod(key, 0o640)
    got = refused(key_dir, "sites:\n  - name: a\n    transport:\n      host: h\n"
                           f"      key_file: {key}\n      known_hosts: {key_dir}/known_hosts\n")
    assert f"{key} can be read by other users (mode 640)" in got and got.endswith("(line 5)")


def test_a_missing_known_hosts_file_is_named_with_its_line(key_dir):
    got = refused(key_dir, "sites:\n  - name: a\n    transport:\n      host: h\n"
                           f"      key_file: {key_dir}/id_ed25519\n"
                           f"      known_hosts: {key_dir}/nothere\n")
    assert f"transport.known_hosts: {key_dir}/nothere does not exist (line 6)" in got, got


# ---- odd but valid forms -------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "sites:\n  - name : a\n    transport : {kind: local}\n",
    "sites:\n  -\n    name: a\n" + LOCAL,
    "sites:\n- name: a\n  transport: {kind: local}\n",
    '{"sites": [{"name": "a", "transport": {"kind": "local"},}]}',
    "sites: [ {name: a, # a comment inside braces\n transport: {kind: local}} ]\n",
    "sites:\r\n  - name: a\n" + LOCAL.replace("\n", "\r\n"),
])
def test_odd_layouts_read_as_meant(key_dir, text):
    [site] = loads(key_dir, text).sites
    assert (site.name, site.transport.kind) == ("a", "local")


@pytest.mark.parametrize("written,want", [
    ("torque", "pbs"), ("OpenPBS", "pbs"), ("Spectrum LSF", "lsf"), ("UGE", "sge"),
    ("SLURM", "slurm"),
])
def test_schedulers_by_their_product_names(key_dir, written, want):
    assert loads(key_dir, f"sites:\n  - name: a\n    scheduler: {written}\n{LOCAL}"
                 ).sites[0].scheduler == want


def test_a_merge_inside_a_transport_with_a_key_over_it(key_dir):
    cfg = loads(key_dir, f"x-ssh: &ssh\n  host: h\n  key_file: {key_dir}/id_ed25519\n"
                         f"  known_hosts: {key_dir}/known_hosts\n  port: 22\nsites:\n"
                         "  - name: a\n    transport:\n      <<: *ssh\n      port: 2222\n")
    t = cfg.sites[0].transport
    assert (t.host, t.port, t.key_file) == ("h", 2222, f"{key_dir}/id_ed25519")


def test_a_long_file_with_a_mistake_in_its_last_site_names_that_line(key_dir):
    body = "".join(f"  - name: s{i}\n    scheduler: pbs\n{LOCAL}" for i in range(600))
    got = refused(key_dir, "sites:\n" + body + "  - name: last\n    scheduler: slurn\n" + LOCAL)
    assert "site 'last' (sites[600]): scheduler:" in got and "did you mean slurm?" in got and \
        got.endswith(f"(line {2 + 3 * 600 + 1})"), got
