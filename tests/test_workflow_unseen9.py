"""Workflow files, ninth sweep: what a scientist would write. A diamond of 50 steps, inputs
that are directories or hold blanks and other letters, two upstreams' files landing on one
place, outputs that are also inputs, retries outside their range, a file missing `name`,
`steps` or a step's `script`, gang members waiting on each other through a step outside the
gang, defaults shared through merge keys and overridden, and a workflow written as JSON
(tab-indented, as editors and `json.dump(indent="\\t")` write it). Each answer was worked
out by hand: the DAG it builds, or its one-line refusal naming the step, the field, the line
and what to write instead (`diamond workflow run` exits 2 on it). The tests named `fault`
failed before this sweep's fixes."""

from __future__ import annotations

import json
import subprocess

import pytest
import sweep_helpers
from sweep_helpers import load, refused

from diamond_jupyter.cli import main
from diamond_jupyter.workflow.engine import arrival_checks, copy_lines

BRANCHES = 48


# -- 1. a diamond of 50 steps ------------------------------------------------------------------

def test_a_diamond_of_50_steps_fans_out_and_back_in():
    """split feeds 48 branches, each writing `r`; join takes every branch's `r` renamed."""
    branches = "".join(
        f"  - {{name: b{i}, needs: [split], script: ./b.sh, outputs: [r],\n"
        f"     inputs: [{{from: split, path: chunks/, as: in/}}]}}\n" for i in range(BRANCHES))
    gather = ", ".join(f"{{from: b{i}, path: r, as: r{i}}}" for i in range(BRANCHES))
    wf = load("name: d50\nsteps:\n  - {name: split, script: ./s.sh, outputs: [chunks/]}\n"
              + branches + "  - name: join\n    script: ./j.sh\n    needs: ["
              + ", ".join(f"b{i}" for i in range(BRANCHES)) + f"]\n    inputs: [{gather}]\n")
    assert len(wf.steps) == 50
    order = wf.order()
    assert order[0] == "split" and order[-1] == "join"
    assert wf.upstream("join") == {"split", *(f"b{i}" for i in range(BRANCHES))}
    assert wf.downstream("split") == {"join", *(f"b{i}" for i in range(BRANCHES))}
    assert [i.dest for i in wf.step("join").inputs] == [f"r{i}" for i in range(BRANCHES)]
    assert {i.dest for s in wf.steps[1:-1] for i in s.inputs} == {"in/"}


# -- 2. inputs: directories, blanks, other letters, and one place reached twice ----------------

def test_a_directory_a_spaced_and_a_unicode_input_are_copied_as_named(tmp_path):
    """Accepted as written; the copy lines carry each name whole and nothing in it runs."""
    wf = load("""\
        name: w
        steps:
          - {name: a, script: x, outputs: ['./my dir/', 'données/é.h5', 'run 1/out $x.txt']}
          - name: b
            needs: [a]
            script: x
            inputs:
              - {from: a, path: './my dir/'}
              - {from: a, path: 'données/é.h5', as: entrée.h5}
              - {from: a, path: 'run 1/out $x.txt'}
        """)
    dests = [i.dest for i in wf.step("b").inputs]
    assert dests == ["./my dir/", "entrée.h5", "run 1/out $x.txt"]
    up, here = tmp_path / "up", tmp_path / "here"
    (up / "my dir" / "sub").mkdir(parents=True)
    (up / "my dir" / "sub" / "a.csv").write_text("1")
    (up / "données").mkdir()
    (up / "données" / "é.h5").write_text("h5")
    (up / "run 1").mkdir()
    (up / "run 1" / "out $x.txt").write_text("o")
    here.mkdir()
    lines = copy_lines([(f"{up}/{i.path}", i.dest) for i in wf.step("b").inputs])
    res = subprocess.run(["bash", "-c", lines + arrival_checks(dests) + "echo ok"],
                         cwd=here, capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout == "ok\n", res.stderr
    assert (here / "my dir" / "sub" / "a.csv").read_text() == "1"
    assert (here / "entrée.h5").read_text() == "h5"
    assert (here / "run 1" / "out $x.txt").read_text() == "o"


TWO = "name: w\nsteps:\n  - {name: a, script: x}\n  - {name: b, script: x}\n"


@pytest.mark.parametrize("inputs,want", [
    # a directory from one and a file of the same name from the other
    ("{from: a, path: d/}, {from: b, path: d}",
     "step 'c': two inputs arrive as 'd' (inputs[0], a's d/, and inputs[1], b's d); name one "
     "with `as:` (line 5)"),
    # a file sent into a directory meets the other's file of that path
    ("{from: a, path: out/x.bin, as: data/}, {from: b, path: data/x.bin}",
     "step 'c': two inputs arrive as 'data/x.bin' (inputs[0], a's out/x.bin, and inputs[1], "
     "b's data/x.bin); name one with `as:` (line 5)"),
    # one's file inside the other's directory
    ("{from: a, path: data/}, {from: b, path: data/x.bin}",
     "step 'c': input 'data/x.bin' would land inside the directory input 'data/' (inputs[0], "
     "a's data/, and inputs[1], b's data/x.bin), and which copy wins there is undefined; give "
     "one an `as:` outside the other (line 5)"),
])
def test_two_upstreams_files_landing_on_one_place_are_refused_naming_both(inputs, want):
    assert refused(TWO + f"  - {{name: c, needs: [a, b], script: x, inputs: [{inputs}]}}\n"
                   ) == want


def test_an_output_that_is_also_an_input_is_the_steps_own_version_downstream():
    """Accepted: b reads a's o.txt, rewrites it and lists it; c's o.txt comes from b."""
    wf = load("""\
        name: w
        steps:
          - {name: a, script: x, outputs: [o.txt]}
          - {name: b, needs: [a], script: x, inputs: [{from: a, path: o.txt}],
             outputs: [o.txt]}
          - {name: c, needs: [b], script: x, inputs: [{from: b, path: o.txt}]}
        """)
    assert wf.step("b").outputs == ["o.txt"]
    assert [(i.from_, i.dest) for i in wf.step("c").inputs] == [("b", "o.txt")]
    assert wf.upstream("c") == {"a", "b"}


# -- 3. retries, failure policies --------------------------------------------------------------

@pytest.mark.parametrize("written", ["-1", "11", "100000"])
def test_fault_retries_out_of_range_say_the_range_like_any_other_bad_retries(written):
    """Before: pydantic's "Input should be greater than or equal to 0" (or "less than or equal
    to 10"), where every other bad value named the range and the value."""
    assert refused(f"name: w\nsteps:\n  - name: a\n    script: x\n    retries: {written}\n"
                   ) == ("the workflow: steps['a'].retries: retries must be a whole number "
                         f"from 0 to 10, not {written} (line 5)")


def test_retries_0_and_10_with_stop_are_kept():
    wf = load("name: w\nsteps:\n  - {name: a, script: x, retries: 0, on_failure: stop}\n"
              "  - {name: b, script: x, retries: 10, on_failure: resubmit-elsewhere}\n")
    assert [(s.retries, s.on_failure) for s in wf.steps] == [(0, "stop"),
                                                              (10, "resubmit-elsewhere")]


# -- 4. what is required, said with what to write ----------------------------------------------

@pytest.mark.parametrize("text,want", [
    ("steps:\n  - {name: a, script: x}\n",
     "the workflow: name: is required: a name of letters, digits, _ . - for the workflow, "
     "e.g. name: my-pipeline"),
    ("name: w\n",
     "the workflow: steps: is required: a list of steps, e.g. steps: [{name: prep, "
     "script_file: prep.sh}]"),
    ("name: w\nsteps:\n  - script: ./a\n",
     "the workflow: steps[0].name: is required: every step has a name of letters, digits, "
     "_ . -, e.g. name: prep (line 3)"),
    ("name: w\nsteps:\n  - name: a\n    retries: 1\n",
     "the workflow: steps['a'].script: is required: the job's text (script: |) or its file "
     "(script_file: prep.sh) (line 3)"),
])
def test_fault_a_required_field_left_out_says_what_to_write(text, want):
    """Before: "name: is required" and no more."""
    assert refused(text) == want


@pytest.mark.parametrize("name,why", [
    ("a/b", "; '/' is not one of them"),
    ("w" * 64, "; it has 64 characters"),
])
def test_a_workflow_name_with_a_slash_or_too_long_is_refused(name, why):
    assert refused(f"name: {name}\nsteps:\n  - {{name: a, script: x}}\n") == (
        f"the workflow: name: {name!r} is not a valid name (letters, digits, _ . -, ASCII "
        f"only, starting with a letter or digit, at most 63 characters{why}) (line 1)")


# -- 5. gangs ---------------------------------------------------------------------------------

@pytest.mark.parametrize("between,via", [
    ("  - {name: m, needs: [a], script: x}\n", "m"),
    ("  - {name: m1, needs: [a], script: x}\n  - {name: m2, needs: [m1], script: x}\n", "m2"),
])
def test_fault_a_gang_member_waiting_through_other_steps_names_the_one_it_needs(between, via):
    """Before: "step 'b' waits for 'a'", though b's needs name only a step outside the gang."""
    text = ("name: w\nsteps:\n  - {name: a, gang: g, script: x}\n" + between
            + f"  - {{name: b, gang: g, needs: [{via}], script: x}}\n")
    line = text.count("\n")
    assert refused(text) == (f"gang 'g': step 'b' waits for 'a' (through {via!r}) of the same "
                             f"gang, but a gang's steps start together (line {line})")


# -- 6. defaults through merge keys ------------------------------------------------------------

def test_merged_defaults_are_overridden_by_a_steps_own_keys():
    wf = load("""\
        name: w
        x-defaults: &defaults {retries: 2, on_failure: resubmit-elsewhere, site: [alpha, beta]}
        steps:
          - {<<: *defaults, name: a, script: x}
          - {<<: *defaults, name: b, needs: [a], script: x, site: gamma, retries: 1}
          - <<: *defaults
            name: c
            needs: [b]
            script: x
            retries: 0
            on_failure: stop
        """)
    got = [(s.name, s.retries, s.on_failure) for s in wf.steps]
    assert got == [("a", 2, "resubmit-elsewhere"), ("b", 1, "resubmit-elsewhere"),
                   ("c", 0, "stop")]


# -- 7. a workflow written as JSON -------------------------------------------------------------

FLOW = {"name": "w", "steps": [
    {"name": "a", "script": "#!/bin/bash\n#SBATCH -t 5\necho 'x\ty' > t.tsv\n",
     "outputs": ["t.tsv"]},
    {"name": "b", "needs": ["a"], "script": "./b.sh", "inputs": [{"from": "a", "path": "t.tsv"}],
     "retries": 1, "on_failure": "resubmit-elsewhere"}]}


@pytest.mark.parametrize("indent", [None, 2])
def test_a_json_workflow_is_read_as_written(indent):
    wf = load(json.dumps(FLOW, indent=indent))
    assert wf.order() == ["a", "b"] and wf.step("a").script == FLOW["steps"][0]["script"]
    assert wf.step("b").inputs[0].from_ == "a" and wf.step("b").retries == 1


@pytest.mark.parametrize("bom", ["", "\ufeff"])
def test_fault_a_json_workflow_indented_with_tabs_is_read(bom):
    """Before: "found character '\\t' that cannot start any token (indent with spaces...)",
    for a file JSON allows. Tabs inside the scripts are kept (JSON writes them `\\t`)."""
    wf = load(bom + json.dumps(FLOW, indent="\t"))
    assert wf.step("a").script == FLOW["steps"][0]["script"] and "\t" in wf.step("a").script
    assert wf.order() == ["a", "b"]


def test_fault_a_tab_indented_json_workflow_s_problem_names_its_line():
    bad = {**FLOW, "steps": [*FLOW["steps"][:1], {**FLOW["steps"][1], "retries": -1}]}
    text = json.dumps(bad, indent="\t")
    line = text.splitlines().index('\t\t\t"retries": -1,') + 1
    assert refused(text) == ("the workflow: steps['b'].retries: retries must be a whole number "
                             f"from 0 to 10, not -1 (line {line})")


@pytest.mark.parametrize("text,want", [
    # not JSON (a trailing comma after a tab): YAML's tab refusal stands
    ('{\n\t"name": "w",\n}', "the workflow: not valid YAML at line 2, column 1: found "
                             "character '\\t' that cannot start any token"),
    # YAML indented with a tab: still refused with the hint
    ("name: w\nsteps:\n\t- {name: a, script: x}\n",
     "the workflow: not valid YAML at line 3, column 1: found character '\\t' that cannot "
     "start any token"),
    ('{"name": "w", "name": "v", "steps": [{"name": "a", "script": "x"}]}',
     "the workflow: not valid YAML at line 1, column 15: key 'name' is given twice (first on "
     "line 1); give it once"),
])
def test_tabs_outside_json_and_json_s_duplicate_keys_are_still_refused(text, want):
    assert refused(text).startswith(want)


cfg = sweep_helpers.two_unreachable_sites


def test_fault_diamond_workflow_run_on_a_json_file_without_a_name_exits_2(cfg, tmp_path, capsys):
    f = tmp_path / "w.json"
    f.write_text(json.dumps({"steps": FLOW["steps"]}, indent="\t"))
    assert main(["workflow", "run", str(f), "--config", str(cfg), "--json"]) == 2
    out, err = capsys.readouterr()
    want = (f"{f}: name: is required: a name of letters, digits, _ . - for the workflow, "
            "e.g. name: my-pipeline")
    assert err == f"diamond: {want}\n"
    assert json.loads(out) == {"reason": "bad-input", "message": want}
