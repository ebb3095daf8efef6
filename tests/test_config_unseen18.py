"""Sites files and DiamondApp settings, eighteenth sweep: `allowed_partitions:` written with no
value (nothing, `~`, `null`, through a merge key too) and a configuration's dump written back
as a sites file; `DiamondApp.allowed_partitions` of None, whole or for one site; names and
`env` values that YAML reads as octal, hexadecimal or base-60 numbers; a list item with no
value and an empty partition list; Windows paths and `%VAR%` variables; YAML tags
(`!include`) and include-like keys; and, as guards, what an admin writes meaning one plain
thing: anchors and merge keys (a list of them, one per site, an override after a merge),
duplicate keys in nested maps, tabs, a byte order mark with CRLF line ends, digits as a
quoted site name, a file of a thousand sites. Each mistake is refused naming the file, the
key, the line and what would be accepted. The tests marked `fault` failed before this
sweep's fixes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sweep_helpers
import yaml
from test_config_unseen2 import loads, refused, write

from diamond_jupyter.cli import main
from diamond_jupyter.config import SiteConfig, TransportConfig, load_config
from diamond_jupyter.server.admin import check_settings
from diamond_jupyter.server.app import DiamondApp

key_dir = sweep_helpers.key_dir
LOCAL = "    transport: {kind: local}\n"
SITE = f"sites:\n  - name: a\n{LOCAL}"
TO_WRITE = ("list the partitions jobs may use ([debug, gpu], or one `- debug` per line), or "
            "leave the key out to allow every partition")


# ---- allowed_partitions: with no value, in the sites file --------------------------------

@pytest.mark.parametrize("written,said", [
    ("", "written with no value"), (" ~", "`~` is no value"), (" null", "`null` is no value"),
    (" Null", "`Null` is no value"), ("  # the gpu ones, later", "written with no value")])
def test_fault_allowed_partitions_with_no_value_is_refused_at_its_line(key_dir, written, said):
    """It allowed every partition, as the key left out does, where the admin meant a list."""
    got = refused(key_dir, f"{SITE}    allowed_partitions:{written}\n    default_account: p\n")
    assert got.endswith(f"site 'a' (sites[0]): allowed_partitions: {said} (YAML reads it as "
                        f"null, not a list): {TO_WRITE} (line 4)"), got


def test_fault_allowed_partitions_with_no_value_from_a_merge_key_names_the_anchors_line(
        key_dir):
    got = refused(key_dir, "x-policy: &policy\n  allowed_partitions:\n  default_account: p\n"
                           f"sites:\n  - <<: *policy\n    name: a\n{LOCAL}")
    assert "site 'a' (sites[0]): allowed_partitions: written with no value" in got, got
    assert got.endswith("(line 2)"), got


def test_fault_allowed_partitions_emptied_after_a_merge_is_refused_at_the_sites_line(key_dir):
    """A site that overrides its template's list with no value meant "none of those", not
    "every partition"."""
    got = refused(key_dir, "x-policy: &policy\n  allowed_partitions: [debug]\n"
                           f"sites:\n  - <<: *policy\n    name: a\n{LOCAL}"
                           "    allowed_partitions:\n")
    assert "allowed_partitions: written with no value" in got and got.endswith("(line 7)"), got


def test_allowed_partitions_left_out_or_listed_keeps_its_meaning(key_dir):
    cfg = loads(key_dir, f"{SITE}  - name: b\n{LOCAL}    allowed_partitions: &p [debug, gpu]\n"
                         f"  - name: c\n{LOCAL}    allowed_partitions: *p\n")
    assert [s.allowed_partitions for s in cfg.sites] == [None, ["debug", "gpu"],
                                                          ["debug", "gpu"]]


def test_fault_the_cli_exits_2_on_allowed_partitions_with_no_value(key_dir, capsys):
    path = write(key_dir, f"{SITE}    allowed_partitions: ~\n")
    assert main(["sites", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "allowed_partitions: `~` is no value" in err and \
        "(line 4)" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("partitions", [None, ["debug", "gpu"]])
def test_fault_a_configurations_dump_written_as_a_sites_file_reads_back(key_dir,
                                                                   partitions):
    """A test's or a tool's `yaml.safe_dump` of `SiteConfig.model_dump()`: the unset
    `allowed_partitions` is left out of the dump, not written as null."""
    site = SiteConfig(name="a", transport=TransportConfig(kind="local"),
                      allowed_partitions=partitions, default_account="proj")
    dumped = site.model_dump(mode="json")
    assert ("allowed_partitions" in dumped) == (partitions is not None), dumped
    path = write(key_dir, yaml.safe_dump({"sites": [dumped]}))
    back = loads(key_dir, path.read_text()).sites[0]
    assert back.allowed_partitions == partitions and back.default_account == "proj"


# ---- DiamondApp.allowed_partitions with no value ----------------------------------------

def _refused_setting(tmp_path: Path, value: object) -> str:
    conf = tmp_path / "jupyter_server_config.json"
    conf.write_text(json.dumps({"DiamondApp": {"allowed_sites": ["alpha"],
                                               "allowed_partitions": value}}, indent=1))
    values, refused_ = check_settings(DiamondApp(), {"allowed_partitions": value}, [],
                                      [str(tmp_path)])
    assert not values, values
    return refused_["allowed_partitions"]


def test_fault_a_site_pinned_to_no_value_is_refused_naming_the_file_and_line(tmp_path):
    """traitlets said "Values of the 'allowed_partitions' trait of a DiamondApp instance must
    be a list, but a value of None", with nothing on leaving the site out."""
    got = _refused_setting(tmp_path, {"alpha": ["debug"], "beta": None})
    conf = tmp_path / "jupyter_server_config.json"
    assert got == (f"DiamondApp.allowed_partitions = {{'alpha': ['debug'], 'beta': None}} in "
                   f"{conf} (line 6): 'beta' is given no value: list the partitions its jobs "
                   "may use ({'beta': ['debug']}), or leave 'beta' out to keep the sites "
                   "file's allowed_partitions for it"), got


def test_fault_the_whole_setting_with_no_value_says_to_leave_it_out(tmp_path):
    got = _refused_setting(tmp_path, None)
    assert "DiamondApp.allowed_partitions = None in" in got and "(line 6): no value: give " \
        "{site: [partition, ...]}" in got and "leave the setting out (or {})" in got, got


def test_pinned_partitions_given_as_lists_are_taken(tmp_path):
    values, refused_ = check_settings(DiamondApp(), {"allowed_partitions": {
        "alpha": ["debug"]}}, [], [str(tmp_path)])
    assert values == {"allowed_partitions": {"alpha": ["debug"]}} and not refused_


# ---- numbers that are names or env values -------------------------------------------------

@pytest.mark.parametrize("line,written,number,why", [
    ("  - name: 0755\n" + LOCAL, "name: 0755", "493", "a leading 0 makes it octal"),
    ("  - name: 0x1F\n" + LOCAL, "name: 0x1F", "31", "0x makes it hexadecimal"),
    ("  - name: 1:30\n" + LOCAL, "name: 1:30", "90", "numbers joined by ':' are one number "
                                                     "in base 60"),
    ("  - name: a\n" + LOCAL + "    default_account: 01234\n", "default_account: 01234",
     "668", "a leading 0 makes it octal"),
    ("  - name: a\n" + LOCAL + "    default_partition: 010\n", "default_partition: 010",
     "8", "a leading 0 makes it octal"),
    ("  - name: a\n" + LOCAL + "    default_account: -0123\n", "default_account: -0123",
     "-83", "a leading 0 makes it octal"),
])
def test_fault_a_name_yaml_reads_as_another_number_says_to_quote_it(key_dir, line, written,
                                                                     number, why):
    """It said to write the number without its leading 0 (or in decimal), which would be
    refused next as a number where a name is meant."""
    got = refused(key_dir, f"sites:\n{line}")
    key, text = written.split(": ")
    assert f"{written} is read by YAML as the number {number} ({why}), but a {key} is text: " \
           f"quote it ('{text}')" in got, got
    assert "without the leading 0" not in got and "write it in decimal" not in got, got


def test_fault_an_env_value_yaml_reads_as_octal_says_to_quote_it(key_dir):
    got = refused(key_dir, f"{SITE}    env:\n      UMASK: 0022\n")
    assert "line 5, column 14: site 'a' (sites[0]): UMASK: 0022 is read by YAML as the " \
           "number 18 (a leading 0 makes it octal), but an env value is text: quote it " \
           "('0022')" in got, got


def test_a_number_that_is_a_number_still_says_to_write_it_in_decimal(key_dir):
    got = refused(key_dir, "sites:\n  - name: a\n    transport: {kind: ssh, host: h, "
                           "port: 0022}\n")
    assert "port: 0022 is read by YAML as 18, not as written (a leading 0 makes it octal): " \
           "write it without the leading 0 (22)" in got, got


def test_digits_quoted_as_a_site_name_are_the_name(key_dir):
    assert loads(key_dir, f"sites:\n  - name: '0042'\n{LOCAL}").sites[0].name == "0042"


# ---- lists written with no item or none at all -------------------------------------------

@pytest.mark.parametrize("written,line", [("\n      - debug\n      -\n", 6), (" [~]\n", 4)])
def test_fault_a_partition_item_with_no_value_says_to_write_the_name_or_drop_it(
        key_dir, written, line):
    """It said to write '' for an empty value, which no partition is named."""
    got = refused(key_dir, f"{SITE}    allowed_partitions:{written}")
    assert "got nothing: the list's item has no value (a `-` alone, or `~`): write the " \
           f"name meant there, or drop the item (line {line})" in got, got
    assert "write ''" not in got, got


def test_fault_an_empty_partition_list_says_it_would_refuse_every_job(key_dir):
    got = refused(key_dir, f"{SITE}    allowed_partitions: []\n")
    assert got.endswith("allowed_partitions: an empty list allows no partition, which would "
                        "refuse every job: list the partitions jobs may use ([debug, gpu]), "
                        "or leave the key out to allow every partition (line 4)"), got


# ---- Windows paths and variables ----------------------------------------------------------

@pytest.mark.parametrize("key,written,meant", [
    ("workdir", "'%SCRATCH%/diamond'", "write $SCRATCH (e.g. $SCRATCH/diamond)"),
    ("workdir", "'%USERPROFILE%/diamond'", "write ~ (e.g. ~/diamond)"),
])
def test_fault_a_windows_variable_in_a_workdir_is_refused_with_the_posix_one(key_dir, key,
                                                                            written, meant):
    """`%SCRATCH%/diamond` was taken as a directory named `%SCRATCH%` in the home."""
    got = refused(key_dir, f"{SITE}    {key}: {written}\n")
    assert f"{key}: {written}: {written.strip(chr(39)).split('/')[0]} is a Windows " \
           "variable, which is not expanded here" in got and meant in got, got
    assert got.endswith("(line 4)"), got


def test_fault_a_windows_variable_in_a_key_path_is_refused_before_looking_for_the_file(
        key_dir):
    got = refused(key_dir, "sites:\n  - name: a\n    transport: {kind: ssh, host: h, "
                           "key_file: '%USERPROFILE%/.ssh/id_ed25519'}\n")
    assert "transport.key_file: '%USERPROFILE%/.ssh/id_ed25519': %USERPROFILE% is a Windows " \
           "variable" in got and "write ~ (e.g. ~/.ssh/id_ed25519) (line 3)" in got, got


@pytest.mark.parametrize("written,holds", [
    ("'C:/Users/me/.ssh/id_ed25519'", "a drive letter's colon"),
    ("'C:\\Users\\me\\.ssh\\id_ed25519'", "a colon and backslashes"),
    ("'\\\\fileserver\\keys\\id_ed25519'", "backslashes"),
])
def test_fault_a_windows_path_says_what_it_holds(key_dir, written, holds):
    """`C:/Users/...` (no backslash) and `\\\\server\\share` (no colon) were each said to
    hold "a colon and backslashes"."""
    got = refused(key_dir, "sites:\n  - name: a\n    transport: {kind: ssh, host: h, "
                           f"key_file: {written}}}\n")
    assert f"is a Windows path; paths here are POSIX ones (/ between names), where this is " \
           f"one odd name with {holds} in it: write it with /" in got, got


def test_a_posix_variable_in_a_workdir_is_still_taken(key_dir):
    assert loads(key_dir, f"{SITE}    workdir: ${{SCRATCH}}/diamond\n").sites[0].workdir == \
        "${SCRATCH}/diamond"


# ---- includes -----------------------------------------------------------------------------

def test_fault_a_yaml_include_tag_says_a_sites_file_is_one_file_and_how_to_share(key_dir):
    got = refused(key_dir, "sites: !include sites.d/*.yaml\n")
    assert "line 1, column 8: could not determine a constructor for the tag '!include' (YAML " \
           "tags such as !include or !env are not read: a sites file is plain YAML in one " \
           "file; to share settings between sites, write x-common: &common {...} above " \
           "them and <<: *common in each)" in got, got


@pytest.mark.parametrize("text,said", [
    ("include: base.yaml\n" + SITE, "include: unknown key (accepted: sites, store,"),
    (SITE + "    include: common.yaml\n", "site 'a' (sites[0]): include: unknown key "
                                          "(accepted: name, scheduler,"),
    ("imports: [base.yaml]\n" + SITE, "imports: unknown key (accepted: sites, store,"),
])
def test_include_like_keys_are_unknown_keys_at_their_line(key_dir, text, said):
    got = refused(key_dir, text)
    assert said in got and "(line " in got, got


def test_an_x_block_named_like_an_include_is_an_anchor_holder_read_as_nothing(key_dir):
    assert [s.name for s in loads(key_dir, "x-include: other.yaml\n" + SITE).sites] == ["a"]


# ---- anchors, merge keys, duplicates, tabs, BOM and CRLF, a long file ----------------------

def test_a_list_of_merge_keys_the_first_wins_and_the_sites_own_key_over_all(key_dir):
    cfg = loads(key_dir, "x-a: &a {charge_factor: 2, default_account: pa}\n"
                         "x-b: &b {charge_factor: 3, speed_factor: 4}\nsites:\n"
                         f"  - <<: [*a, *b]\n    name: a\n{LOCAL}    default_account: own\n")
    s = cfg.sites[0]
    assert (s.charge_factor, s.speed_factor, s.default_account) == (2.0, 4.0, "own")


def test_a_whole_site_anchored_and_merged_under_another_name(key_dir):
    cfg = loads(key_dir, f"sites:\n  - &base\n    name: a\n{LOCAL}    default_account: p\n"
                         "  - <<: *base\n    name: b\n")
    assert [(s.name, s.default_account) for s in cfg.sites] == [("a", "p"), ("b", "p")]


def test_a_whole_site_aliased_twice_is_a_name_given_twice(key_dir):
    got = refused(key_dir, f"sites:\n  - &s\n    name: a\n{LOCAL}  - *s\n")
    assert "site name 'a' is used twice (sites[0] and sites[1])" in got, got


@pytest.mark.parametrize("text,key,first,line", [
    ("x-a: &a\n  env:\n    X: '1'\n    X: '2'\nsites:\n  - <<: *a\n    name: a\n" + LOCAL,
     "X", 3, 4),
    (SITE + "    discovery:\n      clusters:\n        - name: c1\n          name: c2\n",
     "name", 6, 7),
    (SITE + "    metadata:\n      arch: x86_64\n      arch: aarch64\n", "arch", 5, 6),
])
def test_a_key_twice_in_a_nested_map_names_both_lines(key_dir, text, key, first, line):
    got = refused(key_dir, text)
    assert f"line {line}, column" in got and f"key {key!r} is given twice (first on line " \
           f"{first}); give it once" in got, got


def test_a_tab_before_a_comment_says_to_put_a_space(key_dir):
    got = refused(key_dir, f"sites:\n  - name: a  \t# main cluster\n{LOCAL}")
    assert "line 2, column 14" in got and "a tab after other text on the line" in got, got


def test_a_tab_inside_the_preamble_is_shell_text_kept(key_dir):
    cfg = loads(key_dir, f"{SITE}    preamble: |\n      module load gcc\t# compilers\n")
    assert cfg.sites[0].preamble == "module load gcc\t# compilers\n"


def test_a_byte_order_mark_with_crlf_line_ends_reads_as_lf(key_dir):
    path = key_dir / "sites.yaml"
    path.write_bytes(("\ufeffsites:\r\n  - name: a\r\n    transport: {kind: local}\r\n"
                      "    preamble: |\r\n      module load x\r\n      module load y\r\n"
                      ).encode())
    assert load_config(path).sites[0].preamble == "module load x\nmodule load y\n"


def test_a_mistake_in_the_last_of_a_thousand_sites_is_named_at_its_line(key_dir):
    text = "sites:\n" + "".join(f"  - name: s{i}\n{LOCAL}    default_partition: batch\n"
                                for i in range(999))
    got = refused(key_dir, f"{text}  - name: last\n{LOCAL}    charge_factor: cheap\n")
    assert "site 'last' (sites[999]): charge_factor: Input should be a valid number" in got \
        and got.endswith("(line 3001)"), got
