"""Workflow files, fourth sweep: what the earlier sweeps left out, each file written the way
users write them and its answer worked out by hand: Snakemake and Nextflow naming (dots,
dashes, upper case), a step's script kept in a file beside the workflow (`script_file:`,
resolved against the workflow file's directory, never the current one; a missing one; a
`script:` that only names such a file), inputs with globs, directories and environment
variables, a close spelling of a site or a step, a chain of 500 steps, a gang over three
sites and one with retries, `resubmit-elsewhere` on a pinned step, `needs:` as one string,
keys in another case, YAML 1.1 truth values and numbers as names (octal `010`, `12:30`),
duplicate keys, no steps, a null or numeric script. A refusal is one line naming the field
and its line, and `diamond workflow run` exits 2 with it (no site is contacted)."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest
import sweep_helpers

from diamond_jupyter.cli import main
from diamond_jupyter.model import BadInput
from diamond_jupyter.workflow.model import Workflow, load_workflow

SITES = ["alpha", "beta", "gamma"]


def load(text: str | Path) -> Workflow:
    return load_workflow(textwrap.dedent(text) if isinstance(text, str) else text, sites=SITES)


def refused(text: str | Path) -> str:
    with pytest.raises(BadInput) as e:
        load(text)
    msg = str(e.value)
    assert msg.strip() and "\n" not in msg, msg
    return msg


# -- 1. names as other workflow tools write them ----------------------------------------------

def test_snakemake_rule_names_with_dots_dashes_and_underscores():
    wf = load("""\
        name: rna-seq.v2
        steps:
          - {name: fastqc.raw, script: fastqc reads/*.fq.gz}
          - {name: trim-galore_1, needs: [fastqc.raw], script: trim_galore --paired r1 r2}
          - {name: star.align, needs: [trim-galore_1], script: STAR --runMode alignReads}
          - {name: multiqc.report, needs: [fastqc.raw, star.align], script: multiqc .}
        """)
    assert wf.order() == ["fastqc.raw", "trim-galore_1", "star.align", "multiqc.report"]
    assert wf.upstream("multiqc.report") == {"fastqc.raw", "trim-galore_1", "star.align"}


def test_nextflow_process_names_in_upper_case_with_their_workflow_prefix():
    wf = load("""\
        name: nf-core.rnaseq
        steps:
          - {name: NFCORE_RNASEQ.FASTQC, script: ./fastqc}
          - {name: NFCORE_RNASEQ.STAR_ALIGN, needs: [NFCORE_RNASEQ.FASTQC], script: ./star}
        """)
    assert wf.step("NFCORE_RNASEQ.STAR_ALIGN").needs == ["NFCORE_RNASEQ.FASTQC"]


# -- 2. a step's script in a file beside the workflow -----------------------------------------

ALIGN = "#!/bin/bash\n#SBATCH -t 30\n#SBATCH -N 2\nsrun bwa mem ref.fa reads.fq > out.sam\n"


def test_a_script_file_is_read_from_the_workflow_files_directory_not_the_current_one(
        tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    (project / "scripts" / "align.sbatch").write_text(ALIGN)
    (project / "flow.yaml").write_text(
        "name: align\nsteps:\n  - name: align\n    script_file: scripts/align.sbatch\n"
        "  - {name: count, needs: [align], script_file: ./scripts/align.sbatch}\n")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "scripts").mkdir(parents=True)
    (elsewhere / "scripts" / "align.sbatch").write_text("#!/bin/bash\n#SBATCH -t 5\n./wrong\n")
    monkeypatch.chdir(elsewhere)
    wf = load(Path("../project/flow.yaml"))
    assert wf.step("align").script == ALIGN == wf.step("count").script
    spec = wf.step("align").spec()
    assert (spec.resources.walltime_s, spec.resources.nodes) == (1800, 2)


def test_a_missing_script_file_names_the_step_the_path_and_the_line(tmp_path):
    f = tmp_path / "flow.yaml"
    f.write_text("name: w\nsteps:\n  - name: align\n    script_file: scripts/align.sh\n")
    assert refused(f) == (f"{f}: step 'align': script_file 'scripts/align.sh': no such file "
                          f"({tmp_path / 'scripts' / 'align.sh'}) (line 4)")
    (tmp_path / "scripts" / "align.sh").mkdir(parents=True)
    assert "script_file 'scripts/align.sh': not a file" in refused(f)


def test_a_script_that_only_names_a_file_beside_the_workflow_says_to_send_it(tmp_path):
    """`script: scripts/align.sh` would run that path in the step's own fresh directory on
    the site, where no such file is: refused, naming `script_file:`. A command that is no
    file here (`./simulate`, built on the site) is a script as before."""
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "align.sh").write_text(ALIGN)
    f = tmp_path / "flow.yaml"
    f.write_text("name: w\nsteps:\n  - {name: sim, script: ./simulate}\n"
                 "  - {name: align, needs: [sim], script: scripts/align.sh}\n")
    assert refused(f) == (
        f"{f}: step 'align': script 'scripts/align.sh' runs a file by a path relative to the "
        "step's own directory on the site, where it is not (each step runs in a fresh "
        "directory); it is beside the workflow: to send it as the step's script, write "
        "script_file: scripts/align.sh (line 4)")
    f.write_text("name: w\nsteps:\n  - {name: sim, script: ./simulate --steps 10}\n")
    assert load(f).step("sim").script == "./simulate --steps 10"


@pytest.mark.parametrize("step,want", [
    ("{name: a, script_file: scripts/a.sh}",
     "step 'a': script_file 'scripts/a.sh' is relative, but this workflow has no file to be "
     "relative to (it came as text): give an absolute path, or put the script under "
     "`script: |` (line 3)"),
    ("{name: a, script: ./a, script_file: /tmp/a.sh}",
     "step 'a': give script or script_file, not both (line 3)"),
    ("{name: a, script_file: }",
     "step 'a': script_file is the path of a script file (relative to the workflow file's "
     "directory), not None (line 3)"),
    ("{name: a, script_path: a.sh}", "did you mean 'script_file'?"),
])
def test_script_file_refusals_from_text(step, want):
    assert want in refused(f"name: w\nsteps:\n  - {step}\n")


def test_an_absolute_script_file_from_text(tmp_path):
    (tmp_path / "a.sh").write_text(ALIGN)
    wf = load(f"name: w\nsteps:\n  - {{name: a, script_file: {tmp_path / 'a.sh'}}}\n")
    assert wf.step("a").script == ALIGN


# -- 3. inputs --------------------------------------------------------------------------------

def test_an_input_directory_and_a_glob():
    wf = load("""\
        name: w
        steps:
          - {name: a, script: ./a, outputs: [results/]}
          - {name: b, needs: [a], inputs: [{from: a, path: results/, as: in/}], script: ./b}
        """)
    assert wf.step("b").inputs[0].is_dir and wf.step("b").inputs[0].dest == "in/"
    assert refused("""\
        name: w
        steps:
          - {name: a, script: ./a}
          - {name: b, needs: [a], inputs: [{from: a, path: "results/*.csv"}], script: ./b}
        """) == ("the workflow: steps['b'].inputs[0].path: path 'results/*.csv' has the glob "
                 "character '*'; files are copied by their exact names, so name each file "
                 "(line 4)")


@pytest.mark.parametrize("field,value,want", [
    ("path", "$SCRATCH/run1/out.h5", "the workflow: steps['b'].inputs[0].path: path "
     "'$SCRATCH/run1/out.h5': $SCRATCH is an environment variable, but a path is never "
     "expanded (a file is copied by its exact name, inside the step's working directory); "
     "write the path inside that directory, e.g. run1/out.h5 (line 4)"),
    ("as", "${RUN}/in.h5", "steps['b'].inputs[0].as: path '${RUN}/in.h5': ${RUN} is an "
     "environment variable"),
    ("outputs", "$TMPDIR/log", "steps['b'].outputs: output '$TMPDIR/log': $TMPDIR is an "
     "environment variable"),
])
def test_fault_an_environment_variable_in_a_path_is_refused_not_copied_literally(
        field, value, want):
    """`path: $SCRATCH/out.h5` was accepted and copied as a directory literally named
    `$SCRATCH` (paths are never expanded), so the step failed at the site or copied the
    wrong file. A file name that only holds a `$` (`$HOME.txt`) is still a name."""
    inp = {"path": f"{{from: a, path: '{value}'}}", "as": f"{{from: a, path: x, as: '{value}'}}",
           "outputs": "{from: a, path: x}"}[field]
    out = f", outputs: ['{value}']" if field == "outputs" else ""
    text = ("name: w\nsteps:\n  - {name: a, script: ./a}\n"
            f"  - {{name: b, needs: [a], inputs: [{inp}], script: ./b{out}}}\n")
    assert want in refused(text)
    assert load("name: w\nsteps:\n  - {name: a, script: ./a}\n  - {name: b, needs: [a], "
                "inputs: [{from: a, path: $HOME.txt}], script: ./b}\n").step(
        "b").inputs[0].path == "$HOME.txt"


def test_fault_one_input_written_as_a_mapping_says_to_make_it_a_list():
    assert refused("""\
        name: w
        steps:
          - {name: a, script: ./a}
          - name: b
            needs: [a]
            inputs: {from: a, path: x}
            script: ./b
        """) == ("the workflow: steps['b'].inputs: inputs is a list of mappings: write inputs: "
                 "[{from: STEP, path: FILE}] (or one `- from: ...` item per input), not one "
                 "mapping (line 6)")


# -- 4. sites and steps misspelt ----------------------------------------------------------------

def test_a_site_not_in_the_sites_file_but_close_is_suggested():
    assert refused("name: w\nsteps:\n  - {name: a, site: alhpa, script: ./a}\n") == (
        "step 'a': unknown site 'alhpa' (did you mean alpha? known: alpha, beta, gamma, or "
        "auto) (line 3)")
    assert "did you mean auto?" in refused("name: w\nsteps:\n  - {name: a, site: Auto, "
                                           "script: ./a}\n")


def test_fault_a_need_or_input_naming_a_step_almost_is_suggested():
    """An unknown step in `needs` or `from` listed the steps but named none; among 500 the
    one meant was not in the list shown. Now the one meant is named."""
    assert refused("""\
        name: w
        steps:
          - {name: prepare, script: ./p}
          - {name: fit, needs: [prep], script: ./f}
        """) == ("step 'fit' needs unknown step 'prep' (did you mean 'prepare'? steps: prepare, "
                 "fit) (line 4)")
    assert "is from unknown step 'Prepare' (did you mean 'prepare'?" in refused("""\
        name: w
        steps:
          - {name: prepare, script: ./p}
          - {name: fit, needs: [prepare], inputs: [{from: Prepare, path: x}], script: ./f}
        """)
    assert "did you mean" not in refused("name: w\nsteps:\n  - {name: a, script: x}\n"
                                         "  - {name: b, needs: [zzz], script: x}\n")
    assert "(did you mean 'simulate'?" in refused(
        "name: w\nsteps:\n  - {name: simulate, script: x}\n  - {name: mesh, script: x}\n"
        "  - {name: b, needs: [simualte], script: x}\n")  # two letters swapped


def test_a_chain_of_500_steps_is_read_quickly_and_a_slip_in_it_named(tmp_path):
    lines = ["name: long-chain", "steps:",
             "  - {name: s000, script: ./s 0, outputs: [state.bin]}"]
    lines += [f"  - {{name: s{i:03d}, needs: [s{i - 1:03d}], inputs: [{{from: s{i - 1:03d}, "
              f"path: state.bin}}], script: ./s {i}}}" for i in range(1, 500)]
    f = tmp_path / "chain.yaml"
    f.write_text("\n".join(lines) + "\n")
    t0 = time.process_time()
    wf = load(f)
    took = time.process_time() - t0
    assert len(wf.order()) == 500 and wf.order()[-1] == "s499"
    assert len(wf.upstream("s499")) == 499 and len(wf.downstream("s000")) == 499
    # CPU seconds, not wall time (a busy machine stretched the wall to 5.6 s): 0.3 s here,
    # linear in the steps; a quadratic reader would take minutes
    assert took < 5, took
    f.write_text(f.read_text().replace("needs: [s250]", "needs: [S250]"))
    msg = refused(f)
    assert "step 's251' needs unknown step 'S250' (did you mean 's250'?" in msg
    assert msg.endswith("and 480 more) (line 254)")
    # one slip away from ten steps (s250 ... s259): none is named
    f.write_text(f.read_text().replace("needs: [S250]", "needs: [s25O]"))
    assert "needs unknown step 's25O' (steps: s000" in refused(f)


# -- 5. gangs and failure policies --------------------------------------------------------------

def test_a_gang_over_three_sites_with_one_member_retrying():
    wf = load("""\
        name: coupled
        steps:
          - {name: ocean, site: alpha, gang: esm, retries: 2, script: ./ocean}
          - {name: atmos, site: beta, gang: esm, script: ./atmos}
          - {name: ice, site: gamma, gang: esm, script: ./ice}
          - {name: post, needs: [ocean, atmos, ice], script: ./post}
        """)
    assert [(s.name, s.site, s.gang, s.retries) for s in wf.steps[:3]] == [
        ("ocean", "alpha", "esm", 2), ("atmos", "beta", "esm", 0), ("ice", "gamma", "esm", 0)]
    assert wf.upstream("post") == {"ocean", "atmos", "ice"}


def test_resubmit_elsewhere_on_a_pinned_step_means_first_there_then_elsewhere():
    """The pin is the first attempt's site; each retry goes to a site not tried yet (once
    every site has been tried, any site again): a pinned step may be written so, and is
    kept as written (the README says so)."""
    wf = load("""\
        name: w
        steps:
          - {name: a, site: alpha, retries: 4, on_failure: resubmit-elsewhere, script: ./a}
        """)
    a = wf.step("a")
    assert (a.site, a.retries, a.on_failure) == ("alpha", 4, "resubmit-elsewhere")
    assert "needs retries: 1 or more" in refused(
        "name: w\nsteps:\n  - {name: a, site: alpha, on_failure: resubmit-elsewhere, "
        "script: ./a}\n")


# -- 6. YAML's own readings ---------------------------------------------------------------------

def test_needs_as_one_string_says_how_to_write_the_list():
    assert refused("name: w\nsteps:\n  - {name: a, script: x}\n  - {name: b, script: x}\n"
                   "  - {name: c, needs: 'a, b', script: x}\n") == (
        "the workflow: steps['c'].needs: needs is a list: write needs: [a, b], not 'a, b' "
        "(line 5)")


def test_step_keys_in_another_case_name_the_key_meant():
    assert refused("name: w\nsteps:\n  - Name: a\n    Script: ./a\n    Needs: []\n").endswith(
        "steps[0].Name: unknown field (accepted: name, script, script_file, site, needs, "
        "inputs, outputs, gang, retries, on_failure, dialect); did you mean 'name'? (line 3)")


@pytest.mark.parametrize("name", ["on", "yes", "no", "off", "true"])
def test_yaml_1_1_truth_values_as_step_names(name):
    msg = refused(f"name: w\nsteps:\n  - {{name: {name}, script: ./a}}\n")
    assert msg == (f"the workflow: steps[0].name: {name} is read by YAML as "
                   f"{name not in ('no', 'off')}, not as text (it reads unquoted yes, no, on, "
                   f"off, true and false as truth values); quote it as written: '{name}' "
                   "(line 3)")
    wf = load(f"name: w\nsteps:\n  - {{name: '{name}', script: ./a}}\n"
              f"  - {{name: after, needs: ['{name}'], script: ./b}}\n")
    assert wf.order() == [name, "after"]


@pytest.mark.parametrize("written,read", [("010", "8"), ("12:30", "750"), ("1.10", "1.1"),
                                          ("0x1F", "31")])
def test_fault_a_number_yaml_changed_is_shown_as_written(written, read):
    """`name: 010` said "8 is a number ... quote it as written, e.g. '8'": the advice named
    a value the user never wrote (YAML 1.1 reads 010 as octal 8, 12:30 as 750 seconds).
    Now the file's own text is named and quoted."""
    want = (f"{written} is read by YAML as {read}, not as text (it reads unquoted digits, "
            f"0-led octals and 12:30-like times as numbers); quote it as written: '{written}'")
    if written != "1.10":  # a whole number in another base: refused as YAML reads it
        want = (f"{written} is read by YAML as {read}, not as written")
        assert "if it is text" in refused(f"name: w\nsteps:\n  - {{name: {written}, "
                                          "script: ./a}\n")
    assert want in refused(f"name: w\nsteps:\n  - {{name: {written}, script: ./a}}\n")
    if ":" in written:
        return  # no name holds a ':' anyway
    assert want in refused(f"name: w\nsteps:\n  - {{name: '{written}', script: ./a}}\n"
                           f"  - {{name: b, needs: [{written}], script: ./a}}\n")
    wf = load(f"name: w\nsteps:\n  - {{name: '{written}', script: ./a}}\n"
              f"  - {{name: b, needs: ['{written}'], script: ./a}}\n")
    assert wf.step("b").needs == [written]
    # a number YAML keeps as written is said as before
    assert "1 is a number, not text" in refused("name: w\nsteps:\n  - {name: 1, script: x}\n")


def test_a_key_given_twice_in_a_step():
    assert refused("name: w\nsteps:\n  - name: a\n    script: ./a\n    site: alpha\n"
                   "    site: beta\n") == (
        "the workflow: not valid YAML at line 6, column 5: key 'site' is given twice (first "
        "on line 5); give it once")


@pytest.mark.parametrize("steps", ["[]", "", "null"])
def test_fault_no_steps_says_a_workflow_needs_one(steps):
    """`steps: []` said "List should have at least 1 item after validation, not 0", and
    `steps:` alone "Input should be a valid list": neither said what is missing."""
    assert refused(f"name: w\nsteps: {steps}\n") == (
        "the workflow: steps: no steps: a workflow has at least one, each an item under "
        "`steps:` (`- name: prep` with its `script:`) (line 2)")


@pytest.mark.parametrize("script,want", [
    ("", "steps['a'].script: the script is empty (write `script: |` and its lines under it) "
     "(line 3)"),
    ("null", "steps['a'].script: the script is empty"),
    ("42", "steps['a'].script: the script is text, not 42: write `script: |` and the "
     "script's lines under it, indented (line 3)"),
])
def test_a_null_or_numeric_script(script, want):
    assert want in refused(f"name: w\nsteps:\n  - {{name: a, script: {script}}}\n")


# -- 7. the command line --------------------------------------------------------------------------

cfg = sweep_helpers.one_unreachable_site


@pytest.mark.parametrize("text,want", [
    ("name: w\nsteps:\n  - {name: a, script_file: nope.sh}\n",
     "step 'a': script_file 'nope.sh': no such file"),
    ("name: w\nsteps:\n  - {name: a, script: ./a}\n  - {name: b, needs: [a], "
     "inputs: [{from: a, path: $SCRATCH/x}], script: ./b}\n", "$SCRATCH is an environment"),
    ("name: w\nsteps:\n  - {name: 010, script: ./a}\n", "quote it ('010') if it is text"),
])
def test_diamond_workflow_run_exits_2_naming_the_file(cfg, tmp_path, capsys, text, want):
    f = tmp_path / "w.yaml"
    f.write_text(text, encoding="utf-8")
    assert main(["workflow", "run", str(f), "--config", str(cfg), "--json"]) == 2
    out, err = capsys.readouterr()
    assert want in err and err.count("\n") == 1 and str(f) in err
    assert json.loads(out)["reason"] == "bad-input"


def test_a_script_file_runs_through_the_command_line_check(cfg, tmp_path, capsys):
    """`diamond workflow run` reads the file's scripts beside it: a bad directive in one is
    named with its step (a refusal before any site is asked)."""
    (tmp_path / "bad.sh").write_text("#!/bin/bash\n#SBATCH --time=forever\n./a\n")
    f = tmp_path / "w.yaml"
    f.write_text("name: w\nsteps:\n  - {name: a, site: alpha, script_file: bad.sh}\n")
    assert main(["workflow", "run", str(f), "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "step 'a'" in err and "forever" in err and err.count("\n") == 1
