"""Unseen inputs, thirteenth sweep: numbers YAML 1.1 reads in another base than the one a
person writes (`port: 022` was port 18, `port: 0x16` port 22, `retries: 1:30` 90 retries,
all without a word), a step that names the same upstream step twice, and a no-break space
that YAML read as part of a key (the file parsed, so the YAML error's hint never came). Each
gets one line naming what, where and what to write; `diamond` exits 2 on it. The tests
marked `fault` failed before this sweep's fixes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from diamond_jupyter.config import load_config
from diamond_jupyter.model import BadInput
from diamond_jupyter.strict_yaml import NumberNotAsWritten, strict_load
from diamond_jupyter.workflow.model import load_workflow

SITES = ["alpha", "beta"]
NBSP_SAID = ("holds a NO-BREAK SPACE (U+00A0), which YAML does not read as a space (text "
             "copied from a web page or a document has them): type a plain space there")


def _site(d: Path, text: str) -> Path:
    p = d / "sites.yaml"
    p.write_text(text)
    p.chmod(0o600)
    return p


def _sites_refused(d: Path, text: str) -> str:
    p = _site(d, text)
    with pytest.raises(BadInput) as e:
        load_config(p)
    msg = str(e.value)
    assert "\n" not in msg, msg
    assert msg.startswith(f"sites file {p}: "), msg
    return msg[len(f"sites file {p}: "):]


def _wf_refused(text: str) -> str:
    with pytest.raises(BadInput) as e:
        load_workflow(text, sites=SITES)
    msg = str(e.value)
    assert "\n" not in msg, msg
    return msg


def _ssh_site(port: str) -> str:
    return f"sites:\n  - name: alpha\n    transport:\n      host: login.example.org\n" \
           f"      port: {port}\n"


# -- 1. numbers in another base -----------------------------------------------------------------

@pytest.mark.parametrize("written,said", [
    ("022", "port: 022 is read by YAML as 18, not as written (a leading 0 makes it octal): "
            "write it without the leading 0 (22), or as 18 if octal was meant, or quote it "
            "('022') if it is text"),
    ("0x16", "port: 0x16 is read by YAML as 22, not as written (0x makes it hexadecimal): "
             "write it in decimal (22), or quote it ('0x16') if it is text"),
    ("0b10110", "port: 0b10110 is read by YAML as 22, not as written (0b makes it binary): "
                "write it in decimal (22), or quote it ('0b10110') if it is text"),
    ("3:42", "port: 3:42 is read by YAML as 222, not as written (numbers joined by ':' are "
             "one number in base 60): write the number meant in decimal (222 if that is it), "
             "or quote it ('3:42') if it is text"),
])
def test_fault_a_port_in_another_base_is_refused_naming_its_line(tmp_path, written, said):
    """`port: 022` connected to port 18; `0x16` and `0b10110` to 22, `3:42` to 222, as
    YAML 1.1 reads them, which no one writing a port means (or writes that way)."""
    assert _sites_refused(tmp_path, _ssh_site(written)) == \
        f"line 5, column 13: site 'alpha' (sites[0]): {said}"


@pytest.mark.parametrize("written,port", [("22", 22), ("'022'", 22), ('"2222"', 2222),
                                          ("02", 2), ("2_222", 2222)])
def test_a_port_in_decimal_digits_is_read_as_written(tmp_path, written, port):
    """(guard) Decimal digits, quoted digits (read as decimal), a leading 0 that changes
    nothing (`02`) and YAML's digit separator are the number they show."""
    cfg = load_config(_site(tmp_path, _ssh_site(written)))
    assert cfg.sites[0].transport.port == port


@pytest.mark.parametrize("field,line", [
    ("reconnect_attempts: 010", "reconnect_attempts: 010 is read by YAML as 8"),
    ("keepalive_s: 1:30", "keepalive_s: 1:30 is read by YAML as 90"),
    ("max_sessions: 0x10", "max_sessions: 0x10 is read by YAML as 16"),
])
def test_fault_other_whole_numbers_of_a_site_are_refused_too(tmp_path, field, line):
    msg = _sites_refused(tmp_path, "sites:\n  - name: alpha\n    transport:\n"
                                   f"      host: h\n      {field}\n")
    assert msg.startswith(f"line 5, column {len(field.split(':')[0]) + 9}: site 'alpha' "
                          f"(sites[0]): {line}, not as "
                          "written"), msg


@pytest.mark.parametrize("retries,said", [
    ("010", "retries: 010 is read by YAML as 8"),
    ("0x3", "retries: 0x3 is read by YAML as 3"),
    ("1:00", "retries: 1:00 is read by YAML as 60"),
])
def test_fault_a_step_s_retries_in_another_base_is_refused(retries, said):
    msg = _wf_refused(f"name: w\nsteps:\n  - name: a\n    script: ./a\n    retries: {retries}\n")
    assert msg.startswith(f"the workflow: line 5, column 14: {said}, not as written"), msg
    assert load_workflow("name: w\nsteps:\n  - name: a\n    script: ./a\n    retries: 3\n",
                         sites=SITES).step("a").retries == 3


def test_a_number_in_a_list_or_as_a_key_is_named_by_its_place():
    with pytest.raises(NumberNotAsWritten) as e:
        strict_load("ports: [22, 0x16]\n")
    assert e.value.problem.startswith("ports[1]: 0x16 is read by YAML as 22")
    assert (e.value.problem_mark.line, e.value.problem_mark.column) == (0, 12)
    with pytest.raises(NumberNotAsWritten) as e:
        strict_load("env:\n  010: x\n")
    assert e.value.problem.startswith("010 is read by YAML as 8")
    assert e.value.problem_mark.line == 1
    # quoted, a number is the text written; an explicit !!str too
    assert strict_load("a: '0x16'\nb: !!str 022\nc: -7\n") == {"a": "0x16", "b": "022",
                                                                "c": -7}


def test_a_step_named_like_an_octal_number_is_told_to_quote_it():
    """A name YAML read as 8: the refusal names the line and the quoted form."""
    msg = _wf_refused("name: w\nsteps:\n  - {name: 010, script: ./a}\n")
    assert msg.startswith("the workflow: line 3, column 12: name: 010 is read by YAML as 8")
    assert "quote it ('010') if it is text" in msg
    assert load_workflow("name: w\nsteps:\n  - {name: '010', script: ./a}\n",
                         sites=SITES).order() == ["010"]


def test_fault_diamond_sites_exits_2_on_an_octal_port(tmp_path):
    sites = _site(tmp_path, _ssh_site("022"))
    env = {**os.environ, "DIAMOND_DATA_DIR": str(tmp_path / "data"), "DIAMOND_ENGINE": "local",
           "DIAMOND_HANDOVER": "0"}
    r = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "sites", "--config",
                        str(sites)], capture_output=True, text=True, timeout=120, env=env,
                       cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    [line] = r.stderr.strip().splitlines()
    assert line.startswith(f"diamond: sites file {sites}: line 5, column 13: site 'alpha' "
                           "(sites[0]): port: 022 is "
                           "read by YAML as 18"), line


# -- 2. an upstream step named twice -------------------------------------------------------------

def test_fault_needs_naming_a_step_twice_is_refused_at_the_second():
    msg = _wf_refused("name: w\nsteps:\n  - {name: a, script: ./a}\n  - name: b\n"
                      "    script: ./b\n    needs:\n      - a\n      - a\n")
    assert msg == "step 'b' needs 'a' twice (needs[0] and needs[1]): list each step once " \
                  "(line 8)"


# -- 3. a no-break space that YAML read as part of a key -----------------------------------------

@pytest.mark.parametrize("text,first", [
    # `steps:` then one line indented with a no-break space: a key `\xa0 - name`
    ("name: w\nsteps:\n\u00a0 - name: a\n", "the workflow: steps: no steps"),
    ("name: w\nsteps:\n  - name: a\n\u00a0   script: ./a\n",
     "the workflow: steps['a'].script: is required"),
])
def test_fault_a_workflow_s_no_break_space_in_an_indentation_is_named(text, first):
    msg = _wf_refused(text)
    line = text.count("\n", 0, text.index("\u00a0")) + 1
    assert msg.startswith(first) and msg.endswith(f"; line {line}, column 1 {NBSP_SAID}"), msg


@pytest.mark.parametrize("text,first", [
    ("sites:\n\u00a0 - name: alpha\n", "\\xa0 - name: unknown key"),
    ("sites:\n  - name: alpha\n    transport:\n\u00a0     kind: local\n",
     "site 'alpha' (sites[0]): transport: Input should be a valid mapping"),
])
def test_fault_a_sites_file_s_no_break_space_in_an_indentation_is_named(tmp_path, text,
                                                                       first):
    msg = _sites_refused(tmp_path, text)
    line = text.count("\n", 0, text.index("\u00a0")) + 1
    assert msg.startswith(first) and msg.endswith(f"; line {line}, column 1 {NBSP_SAID}"), msg


def test_a_no_break_space_inside_a_value_is_not_blamed_for_another_problem():
    """(guard) A no-break space in a script's text is the script's: a problem elsewhere is
    said without it."""
    msg = _wf_refused("name: w\nsteps:\n  - name: a\n    script: echo\u00a0hi\n"
                      "    retries: -1\n")
    assert "NO-BREAK" not in msg and "retries" in msg
