"""Sites files, twenty-second sweep: YAML 1.1's words and numbers where a new user writes a
site (`yes`/`on`/`off` as names and values, `0755`, `1:30`), keys left with no value
(`speed_factor:`, `transport: ~`, `scheduler:`), sites files that are symbolic links (one
left dangling by a moved file, a chain of two, a loop), site names in other alphabets, keys
with a trailing space or colon, keys of another scheduler, a second document, an empty
entry, flow maps, deep metadata, `include:`/`extends:` as another tool has them. Each is
read as meant or refused naming file, line, key and what is accepted (the CLI exits 2).

Faults found and fixed, each shown by a test here marked `fault` that failed before:
- a key with no value whose type is a number, a choice or a mapping (`speed_factor:`,
  `scheduler: ~`, `transport:`) was refused as `Input should be a valid number` with no word
  that nothing was written; it now says so and what its default is;
- a sites file that is a symbolic link to a moved or deleted file was `not found`, as if
  the link were missing too; it now names the link and the file it points to;
- a site name in another alphabet (`Großrechner`, `café`) was refused as not being `letters,
  digits, _ . -`; the refusal now names the letter and says only A-Z and a-z are taken;
- a key with a space kept inside its quotes or a second colon (`'scheduler ':`,
  `scheduler::`) was `unknown (did you mean scheduler?)`, the space unseen; it now says what
  YAML kept in the key.
"""

from __future__ import annotations

import os

import pytest
import sweep_helpers
from test_config_unseen2 import loads, refused, write

from diamond_jupyter.cli import main
from diamond_jupyter.config import load_config

key_dir = sweep_helpers.key_dir
LOCAL = "    transport: {kind: local}\n"


def _site(line: str) -> str:
    return "sites:\n  - name: a\n" + LOCAL + f"    {line}\n"


def _cli_refused(capsys, path) -> str:
    assert main(["sites", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err


# ---- keys written with no value --------------------------------------------------------------

@pytest.mark.parametrize("line,said", [
    ("speed_factor:", "speed_factor: Input should be a valid number, got nothing: the key "
                      "has no value (write its value after the colon, or leave the key out "
                      "for its default, 1.0) (line 4)"),
    ("charge_factor: ~", "charge_factor: Input should be a valid number, got nothing"),
    ("scheduler: null", "scheduler: Input should be 'slurm', 'pbs', 'lsf', 'flux' or 'sge', "
                        "got nothing: the key has no value (write its value after the colon, "
                        "or leave the key out for its default, 'slurm')"),
    ("hedge: ~", "hedge: Input should be a valid boolean, got nothing: the key has no value "
                 "(write its value after the colon, or leave the key out for its default, "
                 "true)"),
    ("env:", "env: Input should be a valid mapping, got nothing: the key has no value (write "
             "its value after the colon, or leave the key out)"),
    ("discovery: ~", "discovery: Input should be a valid mapping, got nothing"),
])
def test_fault_a_key_with_no_value_says_nothing_was_written(key_dir, line, said):
    """Said before: `Input should be a valid number (a plain number, e.g. 30)`, as if a
    wrong number had been written."""
    got = refused(key_dir, _site(line))
    assert said in got and "instance of" not in got, got


def test_fault_a_transport_left_empty_says_so(key_dir):
    got = refused(key_dir, "sites:\n  - name: a\n    transport:\n    scheduler: pbs\n")
    assert "transport: Input should be a valid mapping, got nothing: the key has no value" \
        in got and "(line 3)" in got, got


@pytest.mark.parametrize("line", ["workdir: ~", "preamble:", "commands: {sbatch: ~}"])
def test_text_keys_with_no_value_still_say_how_to_write_an_empty_one(key_dir, line):
    assert "got nothing: the key has no value (write '' for an empty one" in \
        refused(key_dir, _site(line))


# ---- sites files that are symbolic links -------------------------------------------------------

def test_a_sites_file_reached_through_a_link_is_read(key_dir, tmp_path):
    real = write(key_dir, "sites:\n  - name: a\n" + LOCAL)
    link = tmp_path / "current.yaml"
    link.symlink_to(real)
    assert [s.name for s in load_config(link).sites] == ["a"]


@pytest.mark.parametrize("hops", [1, 2])
def test_fault_a_link_to_a_moved_sites_file_names_the_missing_file(tmp_path, capsys, hops):
    """Said before: `sites file current.yaml not found`, though the link is there."""
    target = tmp_path / "old" / "sites.yaml"
    link = tmp_path / "current.yaml"
    link.symlink_to(target)
    for n in range(hops - 1):
        outer = tmp_path / f"outer{n}.yaml"
        outer.symlink_to(link)
        link = outer
    err = _cli_refused(capsys, link)
    assert f"sites file {link} is a symbolic link to {target}, which does not exist" in err \
        and "ln -sfn FILE" in err, err


def test_a_plain_missing_file_is_still_said_not_found(tmp_path, capsys):
    err = _cli_refused(capsys, tmp_path / "none.yaml")
    assert "not found (give --config FILE" in err and "symbolic" not in err, err


def test_a_loop_of_links_is_refused_as_unreadable(tmp_path, capsys):
    (tmp_path / "a.yaml").symlink_to(tmp_path / "b.yaml")
    (tmp_path / "b.yaml").symlink_to(tmp_path / "a.yaml")
    err = _cli_refused(capsys, tmp_path / "a.yaml")
    assert "cannot be read: Too many levels of symbolic links" in err, err


# ---- site names ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name,letter", [
    ("Großrechner", "'ß', LATIN SMALL LETTER SHARP S"),
    ("café", "'é', LATIN SMALL LETTER E WITH ACUTE"),
    ("クラスタ", "'ク', KATAKANA LETTER KU"),
])
def test_fault_a_name_in_another_alphabet_names_the_letter(key_dir, capsys, name, letter):
    """Said before: not `1 to 63 letters, digits`, though ß and é are letters."""
    path = write(key_dir, f"sites:\n  - name: {name}\n" + LOCAL)
    err = _cli_refused(capsys, path)
    assert f"(it holds {letter}: the letters of a site name are A-Z and a-z only)" in err \
        and "(line 2)" in err, err


@pytest.mark.parametrize("word,read", [("yes", "true"), ("On", "true"), ("off", "false")])
def test_yaml_words_as_site_names_say_to_quote_them(key_dir, word, read):
    got = refused(key_dir, f"sites:\n  - name: {word}\n" + LOCAL)
    assert f"name: Input should be a valid string, got {read}" in got and "quotes" in got, got


def test_yaml_words_quoted_are_names(key_dir):
    cfg = loads(key_dir, "sites:\n  - name: 'on'\n" + LOCAL + "  - name: \"no\"\n" + LOCAL)
    assert [s.name for s in cfg.sites] == ["on", "no"]


# ---- YAML 1.1's booleans and numbers as values -----------------------------------------------

def test_yaml_booleans_as_flags_are_read_as_meant(key_dir):
    cfg = loads(key_dir, "sites:\n  - name: a\n" + LOCAL + "    auto: off\n    hedge: No\n"
                "  - name: b\n" + LOCAL + "    auto: yes\n")
    assert [(s.auto, s.hedge) for s in cfg.sites] == [(False, False), (True, True)]


@pytest.mark.parametrize("line,said", [
    ("charge_factor: 0755", "line 4, column 20: site 'a' (sites[0]): charge_factor: 0755 is "
                            "read by YAML as 493, not as written (a leading 0 makes it octal)"),
    ("max_job_name: 1:30", "max_job_name: 1:30 is read by YAML as 90, not as written (numbers "
                           "joined by ':' are one number in base 60)"),
    ("env: {UMASK: 0755}", "UMASK: 0755 is read by YAML as the number 493 (a leading 0 "
                           "makes it octal), but an env value is text: quote it ('0755')"),
    ("default_account: 12:30", "default_account: 12:30 is read by YAML as the number 750"),
])
def test_octal_and_base_60_numbers_are_refused_where_written(key_dir, line, said):
    assert said in refused(key_dir, _site(line))


def test_quoted_numbers_are_read_as_the_numbers_written(key_dir):
    cfg = loads(key_dir, _site("charge_factor: '1.5'") + "    default_account: '0123'\n")
    assert (cfg.sites[0].charge_factor, cfg.sites[0].default_account) == (1.5, "0123")


# ---- keys ---------------------------------------------------------------------------------------

def test_a_space_before_the_colon_is_the_key(key_dir):
    assert loads(key_dir, _site("scheduler : pbs")).sites[0].scheduler == "pbs"


@pytest.mark.parametrize("line,said", [
    ("scheduler:: pbs", "'scheduler:' is scheduler with a colon of its own (`scheduler::` or "
                        "inside quotes), which YAML keeps in the key: write scheduler: VALUE"),
    ("'scheduler:': pbs", "'scheduler:' is scheduler with a colon of its own"),
    ("'scheduler ': pbs", "'scheduler ' is scheduler with a space inside its quotes, which "
                          "YAML keeps in the key: write scheduler: VALUE"),
    ("' hedge': no", "' hedge' is hedge with a space inside its quotes"),
])
def test_fault_a_key_with_a_colon_or_space_kept_in_it_says_so(key_dir, line, said):
    """Said before: `scheduler : unknown key (did you mean scheduler? ...`, the space unseen."""
    got = refused(key_dir, _site(line))
    assert f"unknown key: {said}" in got and "(line 4)" in got, got


@pytest.mark.parametrize("line,said", [
    ("pbs_servers: [pbs01]", "pbs_servers is for scheduler pbs"),
    ("gpu_complex: gpu", "gpu_complex is for scheduler sge"),
    ("flavor: torque", "flavor is for scheduler pbs, not slurm"),
])
def test_a_key_of_another_scheduler_is_named_with_its_scheduler(key_dir, line, said):
    assert said in refused(key_dir, _site(line))


@pytest.mark.parametrize("text,said", [
    ("include: other.yaml\nsites:\n  - name: a\n" + LOCAL, "include: unknown key (accepted: "
                                                            "sites,"),
    (_site("extends: base"), "extends: unknown key (accepted: name, scheduler"),
    ("sites:\n  - name: a\n    transport: !include t.yaml\n", "tags such as !include or "
                                                              "!env are not read"),
])
def test_include_and_extends_are_refused_with_what_is_read(key_dir, text, said):
    assert said in refused(key_dir, text)


# ---- the file's shape ---------------------------------------------------------------------------

def test_a_second_document_is_refused_and_a_first_marker_is_read(key_dir, capsys):
    two = "sites:\n  - name: a\n" + LOCAL + "---\nsites:\n  - name: b\n" + LOCAL
    err = _cli_refused(capsys, write(key_dir, two))
    assert "line 4, column 1: a second YAML document (`---`)" in err, err
    assert [s.name for s in loads(key_dir, "---\nsites:\n  - name: a\n" + LOCAL + "...\n")
            .sites] == ["a"]


def test_an_empty_entry_is_named_with_its_line(key_dir):
    got = refused(key_dir, "sites:\n  - name: a\n" + LOCAL + "  -\n")
    assert "site (sites[1]): Input should be a valid mapping, not None" in got and \
        "(line 4)" in got, got


def test_flow_maps_and_deep_metadata_are_read(key_dir):
    deep = "".join("  " * (n + 3) + f"k{n}:\n" for n in range(60)) + "  " * 63 + "v: 1\n"
    cfg = loads(key_dir, "sites: [{name: a, scheduler: pbs, transport: {kind: local}}, "
                "{name: b, transport: {kind: local}}]\n")
    assert [(s.name, s.scheduler) for s in cfg.sites] == [("a", "pbs"), ("b", "slurm")]
    nested = loads(key_dir, "sites:\n  - name: a\n" + LOCAL + "    metadata:\n" + deep)
    level = nested.sites[0].metadata
    for n in range(60):
        level = level[f"k{n}"]
    assert level == {"v": 1}


def test_a_flow_key_with_no_space_after_its_colon_is_named(key_dir):
    got = refused(key_dir, "sites: [{name:a, transport: {kind: local}}]\n")
    assert "name:a: unknown key (did you mean name?" in got and "(line 1)" in got, got


def test_the_sites_file_passes_through_an_environment_link(key_dir, tmp_path, monkeypatch):
    real = write(key_dir, "sites:\n  - name: a\n" + LOCAL)
    link = tmp_path / "link.yaml"
    link.symlink_to(os.path.relpath(real, tmp_path))
    monkeypatch.setenv("DIAMOND_CONFIG", str(link))
    assert [s.name for s in load_config().sites] == ["a"]
