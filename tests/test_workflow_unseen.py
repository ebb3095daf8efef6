"""Workflow files as scientists write them, and what the engine makes of them before anything
runs: the parsed steps (order, site, needs, inputs, gang, retries), the one-line refusal of a
bad file (what, where, with the file's line, and what would be accepted; `diamond workflow
run --json` exits 2 with it), each step's job spec and the shell lines that copy its inputs
in (no test bed: no site is contacted)."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
import sweep_helpers
from sweep_helpers import SITES, load, refused
from workflow_ops import RecordedOps

from diamond_jupyter.cli import main
from diamond_jupyter.model import Job, JobSpec, JobState
from diamond_jupyter.workflow.engine import (
    arrival_checks,
    copy_lines,
    runs_shell_lines,
    with_prologue,
)
from diamond_jupyter.workflow.model import MAX_WORKFLOW_BYTES, Workflow, load_workflow


def steps(wf: Workflow) -> list[tuple]:
    """Each step as (name, site, needs, [(from, path, dest, size)], gang, retries), in order."""
    return [(s.name, s.site, s.needs, [(i.from_, i.path, i.dest, i.size) for i in s.inputs],
             s.gang, s.retries) for s in (wf.step(n) for n in wf.order())]


# -- 1. shapes scientists draw ------------------------------------------------------------------

def test_fan_out_and_fan_in_with_an_input_from_every_branch():
    wf = load("""\
        name: sweep
        steps:
          - name: mesh
            site: alpha
            script: |
              #!/bin/bash
              #SBATCH -N 1 -t 10
              ./mesh > mesh.h5
            outputs: [mesh.h5]
          - {name: sim-0.1, needs: [mesh], inputs: [{from: mesh, path: mesh.h5, size: 2G}],
             script: "./sim --re 0.1 mesh.h5 > r.csv", outputs: [r.csv]}
          - {name: sim-0.2, needs: [mesh], inputs: [{from: mesh, path: mesh.h5, size: 2G}],
             script: "./sim --re 0.2 mesh.h5 > r.csv", outputs: [r.csv]}
          - {name: sim-0.4, needs: [mesh], inputs: [{from: mesh, path: mesh.h5, size: 2G}],
             script: "./sim --re 0.4 mesh.h5 > r.csv", outputs: [r.csv]}
          - name: plot
            needs: [sim-0.1, sim-0.2, sim-0.4]
            inputs:
              - {from: sim-0.1, path: r.csv, as: r/0.1.csv}
              - {from: sim-0.2, path: r.csv, as: r/0.2.csv}
              - {from: sim-0.4, path: r.csv, as: r/0.4.csv}
            script: python plot.py r/*.csv
        """)
    assert wf.order() == ["mesh", "sim-0.1", "sim-0.2", "sim-0.4", "plot"]
    assert steps(wf)[1] == ("sim-0.1", "auto", ["mesh"], [("mesh", "mesh.h5", "mesh.h5",
                                                            2 << 30)], None, 0)
    assert [i.dest for i in wf.step("plot").inputs] == ["r/0.1.csv", "r/0.2.csv", "r/0.4.csv"]
    assert wf.upstream("plot") == {"mesh", "sim-0.1", "sim-0.2", "sim-0.4"}
    assert wf.downstream("mesh") == {"sim-0.1", "sim-0.2", "sim-0.4", "plot"}
    # every step gets the same output name (`r.csv`): outputs are per working directory
    assert wf.step("mesh").spec().resources.walltime_s == 600


def test_a_diamond_written_bottom_up_is_ordered_top_down():
    wf = load("""\
        name: diamond
        steps:
          - {name: report, needs: [left, right], script: make report,
             inputs: [{from: left, path: out.txt, as: l.txt},
                      {from: right, path: out.txt, as: r.txt}]}
          - {name: right, needs: [top], script: ./right}
          - {name: left, needs: [top], script: ./left}
          - {name: top, script: ./top}
        """)
    assert wf.order() == ["top", "right", "left", "report"]  # file order among equals
    assert steps(wf)[-1][3] == [("left", "out.txt", "l.txt", None),
                                ("right", "out.txt", "r.txt", None)]


def test_a_chain_of_ten_passes_its_file_down():
    body = "name: chain\nsteps:\n  - {name: s0, script: ./s 0, outputs: [state.npz]}\n" + "".join(
        f"  - {{name: s{i}, needs: [s{i - 1}], script: ./s {i},"
        f" inputs: [{{from: s{i - 1}, path: state.npz}}]}}\n" for i in range(1, 10))
    wf = load(body)
    assert wf.order() == [f"s{i}" for i in range(10)]
    assert wf.upstream("s9") == {f"s{i}" for i in range(9)}
    assert all(wf.step(f"s{i}").inputs[0].from_ == f"s{i - 1}" for i in range(1, 10))


def test_several_inputs_from_several_upstreams_in_every_path_form():
    wf = load("""\
        name: train
        steps:
          - {name: fetch, site: alpha, script: ./fetch}
          - {name: tok, site: beta, script: ./tok}
          - name: fit
            needs: [fetch, tok]
            inputs:
              - {from: fetch, path: results/model.pt, size: 1.5 GiB}
              - {from: fetch, path: ./config.yaml}
              - {from: tok, path: vocab/, as: vocab, size: 300MB}
              - {from: tok, path: "data set/part 1.bin", as: d1.bin, size: 512k}
            script: python fit.py
        """)
    fit = wf.step("fit")
    assert [(i.from_, i.path, i.dest, i.size, i.is_dir) for i in fit.inputs] == [
        ("fetch", "results/model.pt", "results/model.pt", 3 << 29, False),
        ("fetch", "./config.yaml", "./config.yaml", None, False),
        ("tok", "vocab/", "vocab", 300 << 20, True),
        ("tok", "data set/part 1.bin", "d1.bin", 512 << 10, False)]


def test_a_pbs_step_after_a_slurm_step_and_the_other_dialects_alongside():
    wf = load("""\
        name: dialects
        steps:
          - name: slurm
            site: alpha
            script: |
              #!/bin/bash
              #SBATCH --nodes=2 --ntasks-per-node=4
              #SBATCH --time=01:30:00
              srun ./a
          - name: pbs
            needs: [slurm]
            site: beta
            script: |
              #!/bin/bash
              #PBS -l select=1:ncpus=8:mem=16gb
              #PBS -l walltime=00:20:00
              cd "$PBS_O_WORKDIR"
              ./b
          - name: lsf
            needs: [slurm]
            script: |
              #BSUB -n 4
              #BSUB -W 15
              ./c
          - name: flux
            needs: [pbs]
            script: |
              #flux: -N 1
              #flux: -t 5m
              ./d
          - name: sge
            needs: [lsf]
            script: |
              #$ -pe smp 2
              #$ -l h_rt=0:10:0
              ./e
        """)
    assert wf.order() == ["slurm", "pbs", "lsf", "flux", "sge"]
    specs = {n: wf.step(n).spec() for n in wf.order()}
    assert specs["slurm"].resources.nodes == 2 and specs["slurm"].resources.walltime_s == 5400
    assert specs["pbs"].resources.walltime_s == 1200 and specs["pbs"].source_dialect == "pbs"
    assert specs["pbs"].script == 'cd "$PBS_O_WORKDIR"\n./b\n'
    assert specs["lsf"].resources.walltime_s == 900
    assert specs["flux"].resources.walltime_s == 300
    assert specs["sge"].resources.walltime_s == 600
    assert {n: s.name for n, s in specs.items()} == {n: n for n in specs}  # the step's name


def test_a_plain_script_without_directives_runs_as_written():
    wf = load("""\
        name: plain
        steps:
          - name: hello
            script: |
              set -e
              echo "hello $USER" > greeting.txt
        """)
    spec = wf.step("hello").spec()
    assert spec.script == 'set -e\necho "hello $USER" > greeting.txt\n'
    assert spec.shell == "/bin/bash" and spec.name == "hello" and spec.resources.nodes is None


def test_pinned_and_auto_sites_mixed_each_kept():
    wf = load("""\
        name: mixed
        steps:
          - {name: a, site: alpha, script: x}
          - {name: b, script: x, needs: [a]}
          - {name: c, site: auto, script: x, needs: [a]}
          - {name: d, site: gamma, script: x, needs: [b, c]}
        """)
    assert [(s[0], s[1]) for s in steps(wf)] == [("a", "alpha"), ("b", "auto"), ("c", "auto"),
                                                 ("d", "gamma")]


@pytest.mark.parametrize("site,shown", [("", "None"), ("{name: alpha}", "{'name': 'alpha'}")])
def test_a_step_names_one_site_or_auto(site, shown):
    """Before: "Input should be a valid string". (A list of sites is read since session 26:
    tests/test_workflow_site_list.py.)"""
    assert refused(f"name: w\nsteps:\n  - name: a\n    script: x\n    site: {site}\n") == (
        f"the workflow: steps['a'].site: site is one site's name, a list of sites ([alpha, "
        f"beta]: placement chooses among them), or auto (placement chooses among all sites), "
        f"not {shown} (line 5)")


def test_a_gang_of_three_on_three_sites_with_a_failure_policy_on_one_member():
    wf = load("""\
        name: coupled
        steps:
          - {name: prep, script: x}
          - {name: ocean, site: alpha, gang: esm, needs: [prep], script: x}
          - {name: atmos, site: beta, gang: esm, needs: [prep], script: x, retries: 2,
             on_failure: resubmit-elsewhere}
          - {name: ice, site: gamma, gang: esm, needs: [prep], script: x, on_failure: stop}
          - {name: post, needs: [ocean, atmos, ice], script: x}
        """)
    assert wf.gangs() == {"esm": ["ocean", "atmos", "ice"]}
    atmos = wf.step("atmos")
    assert (atmos.retries, atmos.on_failure) == (2, "resubmit-elsewhere")
    assert wf.step("ice").on_failure == "stop" and wf.order()[-1] == "post"


@pytest.mark.parametrize("retries", range(6))
def test_retries_from_none_to_five(retries):
    wf = load(f"name: r\nsteps:\n  - {{name: a, script: x, retries: {retries}}}\n")
    assert wf.step("a").retries == retries and wf.step("a").on_failure == "stop"


def test_resubmit_elsewhere_without_retries_is_refused():
    """Before: accepted, and the step's first failure stopped the workflow: it was never
    resubmitted anywhere, though the file asked for it."""
    msg = refused("name: w\nsteps:\n  - name: a\n    script: x\n"
                  "    on_failure: resubmit-elsewhere\n")
    assert msg == ("step 'a': on_failure: resubmit-elsewhere needs retries: 1 or more (each "
                   "retry is one resubmission; with retries: 0 the step runs once) (line 5)")
    # a workflow stored before is still read (its view, the engine), never refused later
    stored = {"name": "w", "steps": [{"name": "a", "script": "x", "retries": 0,
                                      "on_failure": "resubmit-elsewhere"}]}
    assert Workflow.model_validate(stored).step("a").on_failure == "resubmit-elsewhere"
    wf = load("name: w\nsteps:\n  - {name: a, script: x, retries: 0, on_failure: stop}\n")
    assert (wf.step("a").retries, wf.step("a").on_failure) == (0, "stop")


def test_steps_that_only_order_carry_no_inputs():
    wf = load("""\
        name: order
        steps:
          - {name: setup, script: mkdir -p /scratch/me/run}
          - {name: run, needs: [setup], script: ./run}
          - {name: cleanup, needs: [run], script: rm -rf /scratch/me/run}
        """)
    assert steps(wf) == [("setup", "auto", [], [], None, 0), ("run", "auto", ["setup"], [],
                                                              None, 0),
                         ("cleanup", "auto", ["run"], [], None, 0)]


def test_an_input_from_a_step_further_up_needs_no_direct_edge():
    """README: an input must come from a step upstream; `needs` through another step will
    do, and `needs` is never added implicitly."""
    wf = load("""\
        name: w
        steps:
          - {name: a, script: x}
          - {name: b, needs: [a], script: x}
          - {name: c, needs: [b], script: x, inputs: [{from: a, path: o}]}
        """)
    assert wf.step("c").needs == ["b"] and wf.step("c").inputs[0].from_ == "a"
    msg = refused("""\
        name: w
        steps:
          - {name: a, script: x}
          - {name: c, script: x, inputs: [{from: a, path: o}]}
        """)
    assert msg == ("step 'c': inputs[0] is from 'a', which is not upstream of it (add it to "
                   "needs; needs: none) (line 4)")


def test_an_input_may_name_an_unlisted_file_and_two_steps_one_output():
    """An input may name a file its upstream does not list, and two steps may list the same
    output (each step has its own working directory). The outputs listed are checked once
    a step's job completed (tests/test_workflow_outputs.py)."""
    wf = load("""\
        name: w
        steps:
          - {name: a, script: x, outputs: [log.txt]}
          - {name: b, script: x, outputs: [log.txt]}
          - {name: c, needs: [a, b], script: x,
             inputs: [{from: a, path: other.bin}, {from: b, path: log.txt}]}
        """)
    assert [i.path for i in wf.step("c").inputs] == ["other.bin", "log.txt"]
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    assert "`outputs` are checked when the step's job completed" in readme


@pytest.mark.timeout(60)  # a hang guard, not a speed target
def test_a_large_script_under_the_limit_is_read_whole():
    body = "".join(f"echo line {i} of a generated script\n" for i in range(20000))
    text = "name: big\nsteps:\n  - name: a\n    script: |\n" + textwrap.indent(body, "      ")
    assert len(text) < MAX_WORKFLOW_BYTES
    wf = load_workflow(text, sites=SITES)
    assert wf.step("a").spec().script == body


@pytest.mark.parametrize("size,bytes_", [("1e9", 10**9), ("2.5e3 k", 2500 << 10),
                                         ("1.0e+9", 10**9), ("1E6", 10**6), (4096, 4096)])
def test_input_sizes_in_scientific_notation(size, bytes_):
    """Before: `size: 1e9` (which YAML reads as text, not a number) was refused."""
    wf = load(f"name: w\nsteps:\n  - {{name: a, script: x}}\n  - {{name: b, needs: [a], "
              f"script: x, inputs: [{{from: a, path: x, size: {size}}}]}}\n")
    assert wf.step("b").inputs[0].size == bytes_


# -- 2. YAML as people write it -----------------------------------------------------------------

def test_anchors_and_merge_keys_share_settings_through_an_x_key():
    """No workflow-level defaults: a top-level `x-...` key holds an anchor, and `<<: *name`
    merges it into each step (a key the step gives wins). Before: `x-common` was an unknown
    field."""
    wf = load("""\
        name: anchors
        x-common: &common
          site: alpha
          retries: 3
          on_failure: resubmit-elsewhere
        steps:
          - <<: *common
            name: a
            script: x        # a comment
          - <<: *common
            name: b
            site: beta
            needs: [a]
            script: x
        """)
    assert steps(wf) == [("a", "alpha", [], [], None, 3), ("b", "beta", ["a"], [], None, 3)]
    assert wf.step("b").on_failure == "resubmit-elsewhere"
    assert "x-common" not in wf.model_dump()


def test_an_anchor_holder_without_x_says_how_to_name_it():
    msg = refused("""\
        name: w
        common: &c {site: alpha}
        steps:
          - {<<: *c, name: a, script: x}
        """)
    assert msg == ("the workflow: common: unknown field (accepted: name, steps, queue_ahead, "
                   "and x-* keys to hold YAML anchors) (line 2)")


def test_workflow_level_defaults_are_not_a_field():
    msg = refused("name: w\ndefaults: {site: alpha}\nsteps: [{name: a, script: x}]\n")
    assert msg.startswith("the workflow: defaults: unknown field (accepted: name, steps, ")
    assert msg.endswith("(line 2)")


def test_two_documents_in_one_file_are_refused_saying_where_the_second_starts():
    msg = refused("name: a\nsteps: [{name: a, script: x}]\n---\n"
                  "name: b\nsteps: [{name: b, script: x}]\n")
    assert msg == ("the workflow: a second YAML document (`---`) at line 3, column 1; a "
                   "workflow file holds one workflow: remove the `---`, or split the file")


def test_a_document_marker_and_an_end_marker_around_one_workflow_are_fine():
    wf = load("---\nname: w\nsteps: [{name: a, script: x}]\n...\n")
    assert wf.order() == ["a"]


def test_tabs_indenting_are_refused_with_the_line_but_tabs_inside_a_script_are_kept():
    msg = refused("name: w\nsteps:\n\t- {name: a, script: x}\n")
    assert msg.startswith("the workflow: not valid YAML at line 3, column 1: found character")
    assert msg.endswith("(indent with spaces: YAML does not allow tabs for indentation)")
    wf = load("name: w\nsteps:\n  - name: a\n    script: |\n      for i in 1 2; do\n"
              "      \techo $i\n      done\n")
    assert wf.step("a").script == "for i in 1 2; do\n\techo $i\ndone\n"


def test_a_bom_and_crlf_line_ends_from_a_windows_editor(tmp_path):
    p = tmp_path / "w.yaml"
    text = ("name: w\nsteps:\n  - name: a\n    site: alpha\n    script: |\n      #!/bin/bash\n"
            "      #SBATCH -N 2\n      #SBATCH -t 30\n      srun ./a\n")
    p.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    wf = load_workflow(p, sites=SITES)
    spec = wf.step("a").spec()
    assert wf.name == "w" and "\r" not in wf.step("a").script
    assert spec.resources.nodes == 2 and spec.resources.walltime_s == 1800
    assert spec.script == "srun ./a\n"


@pytest.mark.parametrize("text,want", [
    ("Name: w\nsteps: [{name: a, script: x}]\n",
     "the workflow: Name: unknown field (accepted: name, steps, queue_ahead, and x-* keys to "
     "hold YAML anchors); did you mean 'name'? (line 1)"),
    ("name: w\nsteps:\n  - name: a\n    Script: x\n",
     "the workflow: steps['a'].Script: unknown field (accepted: name, script, script_file, "
     "site, needs, inputs, outputs, gang, retries, on_failure, dialect); did you mean "
     "'script'? (line 4)"),
    ("name: w\nsteps:\n  - {name: a, script: x}\n  - {name: b, script: x, need: [a]}\n",
     "the workflow: steps['b'].need: unknown field (accepted: name, script, script_file, "
     "site, needs, inputs, outputs, gang, retries, on_failure, dialect); did you mean "
     "'needs'? (line 4)"),
])
def test_a_key_in_another_case_or_misspelt_is_named_not_the_key_it_leaves_out(text, want):
    """Before: `Name: w` was refused as "name: is required", pointing away from the slip."""
    assert refused(text) == want


@pytest.mark.parametrize("step,key,meant", [
    ("{name: b, script: x, depends_on: [a]}", "depends_on", "needs"),
    ("{name: b, run: ./b, needs: [a]}", "run", "script"),
    ("{name: b, command: ./b}", "command", "script"),
    ("{name: b, script: x, cluster: alpha}", "cluster", "site"),
    ("{id: b, script: x}", "id", "name"),
    ("{name: b, script: x, needs: [a], inputs: [{source: a, path: o}]}", "source", "from"),
])
def test_another_tools_name_for_a_field_says_this_ones(step, key, meant):
    """Before: "unknown field" only (or, for `id:` and `run:`, "name/script: is required")."""
    msg = refused(f"name: w\nsteps:\n  - {{name: a, script: x}}\n  - {step}\n")
    assert f".{key}: unknown field (accepted: " in msg
    assert msg.endswith(f"; did you mean {meant!r}? (line 4)")


def test_needs_given_as_one_name_says_how_to_write_the_list():
    """Before: "Input should be a valid list"."""
    msg = refused("name: w\nsteps:\n  - {name: prep, script: x}\n"
                  "  - name: train\n    needs: prep\n    script: x\n")
    assert msg == ("the workflow: steps['train'].needs: needs is a list: write needs: [prep], "
                   "not 'prep' (line 5)")
    assert refused("name: w\nsteps:\n  - {name: a, script: x, needs: }\n") == (
        "the workflow: steps['a'].needs: needs is a list, e.g. needs: [prep]; leave the key "
        "out for none (line 3)")
    assert refused("name: w\nsteps:\n  - {name: a, script: x, outputs: out.bin}\n") == (
        "the workflow: steps['a'].outputs: outputs is a list: write outputs: [out.bin], not "
        "'out.bin' (line 3)")


@pytest.mark.parametrize("inputs,hint", [
    ("[prep:out.bin]", "{from: prep, path: out.bin}, not 'prep:out.bin'"),
    ("[out.bin]", "{from: STEP, path: FILE}, not 'out.bin'"),
])
def test_an_input_shorthand_says_how_an_input_is_written(inputs, hint):
    """Before: "Input should be a valid dictionary or instance of StepInput"."""
    msg = refused(f"name: w\nsteps:\n  - {{name: prep, script: x}}\n"
                  f"  - {{name: b, needs: [prep], script: x, inputs: {inputs}}}\n")
    assert msg == f"the workflow: steps['b'].inputs[0]: an input is a mapping, e.g. {hint} " \
                  "(line 4)"


def test_numbers_as_step_names_must_be_quoted_and_quoted_ones_work():
    """Before: "Input should be a valid string" (YAML reads `010` as 8: never guessed)."""
    msg = refused("name: w\nsteps:\n  - {name: 1, script: x}\n")
    assert msg == ("the workflow: steps[0].name: 1 is a number, not text (YAML reads unquoted "
                   "digits as numbers); quote it as written, e.g. '1' (line 3)")
    msg = refused("name: w\nsteps:\n  - {name: '1', script: x}\n"
                  "  - {name: '2', script: x, needs: [1]}\n")
    assert msg.startswith("the workflow: steps['2'].needs: 1 is a number, not text")
    assert "yes, no, on, off" in refused("name: w\nsteps:\n  - {name: a, script: x, gang: on}\n")
    wf = load("name: '2024'\nsteps:\n  - {name: '1', script: x}\n"
              "  - {name: '2', script: x, needs: ['1']}\n")
    assert wf.name == "2024" and wf.order() == ["1", "2"]


def test_a_bad_value_deep_in_a_long_file_names_its_line():
    text = "name: w\nsteps:\n" + "".join(f"  - name: s{i}\n    script: x\n" for i in range(30))
    text += "  - name: last\n    script: x\n    retries: lots\n"
    assert refused(text) == ("the workflow: steps['last'].retries: retries must be a whole "
                             "number from 0 to 10, not 'lots' (line 65)")


def test_an_input_from_the_step_itself_does_not_advise_needing_itself():
    """Before: "... not upstream of it (add it to needs ...)", which then said "needs
    itself"."""
    assert refused("name: w\nsteps:\n  - {name: a, script: x, inputs: [{from: a, path: o}]}\n"
                   ) == ("step 'a': inputs[0] is from the step itself; an input comes from a "
                         "step upstream (one in its needs, or further up); its own files are "
                         "in its directory already (line 3)")


def test_steps_keyed_by_name_say_to_write_a_list():
    msg = refused("name: w\nsteps:\n  prep: {script: x}\n  train: {script: y, needs: [prep]}\n")
    assert msg == ("the workflow: steps: Input should be a valid list: write each step as an "
                   "item (`- name: prep`), not as a key of a mapping (line 3)")


@pytest.mark.parametrize("tail,want", [
    ("  - name: z\n    script: x\n    needs: [s1, s9]\n",
     "step 'z' needs unknown step 's9' (steps: s0, s1, s2, s3, s4, z) (line 15)"),
    ("  - name: z\n    site: delta\n    script: x\n",
     "step 'z': unknown site 'delta' (known: alpha, beta, gamma, or auto) (line 14)"),
    ("  - name: z\n    script: x\n    needs: [s1]\n    inputs:\n      - {from: s2, path: o}\n",
     "step 'z': inputs[0] is from 's2', which is not upstream of it (add it to needs; needs: "
     "s1) (line 17)"),
    ("  - name: s3\n    script: x\n",
     "workflow 'w': step name 's3' is used twice (steps[3] and steps[5]); rename one (line 13)"),
    ("  - name: z\n    script: |\n      #SBATCH --nodes=lots\n      ./z\n",
     "step 'z': "),
])
def test_a_problem_between_steps_names_the_line_of_the_field(tail, want):
    """Before: a graph problem (an unknown step or site, an input from a step not upstream)
    named the step but not the line."""
    text = "name: w\nsteps:\n" + "".join(f"  - {{name: s{i}, script: x}}\n" for i in range(5))
    text += "  # the last step, added later\n" * 5 + tail
    msg = refused(text)
    assert msg.startswith(want)
    if want == "step 'z': ":  # the script: its own problem, then the line of `script:`
        assert msg.endswith(" (line 14)")
    else:
        assert msg == want


# -- 3. paths -----------------------------------------------------------------------------------

def test_the_same_file_reached_as_dot_slash_x_and_x_is_one_destination():
    """Before: `./x` and `x` were two destinations; the second copy overwrote the first."""
    msg = refused("""\
        name: w
        steps:
          - {name: a, script: x}
          - {name: b, script: x}
          - {name: c, needs: [a, b], script: x,
             inputs: [{from: a, path: ./x}, {from: b, path: x}]}
        """)
    assert msg == ("step 'c': two inputs arrive as 'x' (inputs[0], a's ./x, and inputs[1], "
                   "b's x); name one with `as:` (line 6)")


def test_an_input_inside_another_input_that_is_a_file_is_refused():
    """Before: accepted; at run time `mkdir -p data` failed on the file `data` copied first."""
    msg = refused("""\
        name: w
        steps:
          - {name: a, script: x}
          - {name: b, needs: [a], script: x,
             inputs: [{from: a, path: db.sqlite, as: data}, {from: a, path: x.csv, as: data/x.csv}]}
        """)
    assert msg == ("step 'b': input 'data' is a file, but input 'data/x.csv' would be inside "
                   "it (inputs[0], a's db.sqlite, and inputs[1], a's x.csv); name one with "
                   "`as:` (a path ending with / is a directory) (line 5)")
    # inside a directory input: refused too (which copy the step finds there was undefined)
    msg = refused("""\
        name: w
        steps:
          - {name: a, script: x}
          - {name: b, needs: [a], script: x,
             inputs: [{from: a, path: data/}, {from: a, path: extra.csv, as: data/extra.csv}]}
        """)
    assert msg.startswith("step 'b': input 'data/extra.csv' would land inside the directory "
                          "input 'data/' (inputs[0], a's data/, and inputs[1], a's extra.csv)")


@pytest.mark.parametrize("field,value,want", [
    ("as", "../x", "the workflow: steps['b'].inputs[0].as: path '../x' must name a file inside "
     "the step's working directory (no '..') (line 4)"),
    ("as", "/tmp/x", "the workflow: steps['b'].inputs[0].as: path '/tmp/x' must be relative to "
     "the step's working directory (no leading /, ~ or -) (line 4)"),
    ("path", "data/../../x", "the workflow: steps['b'].inputs[0].path: path 'data/../../x' must "
     "name a file inside the step's working directory (no '..') (line 4)"),
])
def test_paths_escaping_the_working_directory_name_the_field_and_line(field, value, want):
    extra = f", as: {value}" if field == "as" else ""
    path = value if field == "path" else "x"
    assert refused(f"name: w\nsteps:\n  - {{name: a, script: x}}\n"
                   f"  - {{name: b, needs: [a], script: x, inputs: [{{from: a, path: {path}"
                   f"{extra}}}]}}\n") == want


ODD = ["with space.bin", "it's.dat", 'say "hi".txt', "$HOME.txt", "$(touch PWNED)", "a;b",
       "./-rf", "back\\slash"]


@pytest.mark.parametrize("name", ODD)
def test_odd_paths_are_copied_by_name_and_never_run(name, tmp_path):
    up, here = tmp_path / "up", tmp_path / "here"
    up.mkdir()
    here.mkdir()
    (up / name).write_text("payload")
    lines = copy_lines([(f"{up}/{name}", name)]) + arrival_checks([name])
    res = subprocess.run(["bash", "-c", lines + "echo ok"], cwd=here, capture_output=True,
                         text=True)
    assert res.returncode == 0 and res.stdout == "ok\n", res.stderr
    assert (here / name).read_text() == "payload"
    assert not (here / "PWNED").exists() and not (tmp_path / "PWNED").exists()


def test_a_file_sent_into_a_directory_keeps_its_name(tmp_path):
    """`as: data/` for a file: data/FILE on the same site (cp into the directory) but a file
    named `data` across sites (the destination's slash dropped)."""
    wf = load("""\
        name: w
        steps:
          - {name: a, script: x}
          - {name: b, needs: [a], script: x,
             inputs: [{from: a, path: out/x.bin, as: data/}, {from: a, path: y, as: data/z}]}
        """)
    assert [i.dest for i in wf.step("b").inputs] == ["data/x.bin", "data/z"]
    up = tmp_path / "up" / "out"
    up.mkdir(parents=True)
    (up / "x.bin").write_text("x")
    lines = copy_lines([(f"{up}/x.bin", wf.step("b").inputs[0].dest)])
    res = subprocess.run(["bash", "-c", lines + arrival_checks(["data/x.bin"])],
                         cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "data" / "x.bin").read_text() == "x"


def test_a_directory_input_is_copied_with_everything_in_it(tmp_path):
    """Before: `cp -p` refused a directory (`-r not specified`), failing the step after its
    upstream ran; a cross-site copy was not recursive either."""
    wf = load("""\
        name: w
        steps:
          - {name: a, script: x}
          - {name: b, needs: [a], script: x,
             inputs: [{from: a, path: results/}, {from: a, path: "ckpt dir/", as: prev}]}
        """)
    up, here = tmp_path / "up", tmp_path / "here"
    (up / "results" / "sub").mkdir(parents=True)
    (up / "results" / "sub" / "x.csv").write_text("1,2")
    (up / "ckpt dir").mkdir()
    (up / "ckpt dir" / "$(touch PWNED)").write_text("w")
    here.mkdir()
    lines = copy_lines([(f"{up}/{i.path}", i.dest) for i in wf.step("b").inputs])
    res = subprocess.run(["bash", "-c", lines + arrival_checks(["results/", "prev"])],
                         cwd=here, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert (here / "results" / "sub" / "x.csv").read_text() == "1,2"
    assert (here / "prev" / "$(touch PWNED)").read_text() == "w"
    assert not (here / "PWNED").exists()
    assert sorted(p.name for p in here.iterdir()) == ["prev", "results"]


def test_a_missing_directory_input_fails_the_step_with_a_line(tmp_path):
    lines = copy_lines([(f"{tmp_path}/nope/", "nope/")])
    res = subprocess.run(["bash", "-c", lines + "echo body"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert res.returncode == 1 and "body" not in res.stdout
    assert f"workflow input nope/ could not be copied from {tmp_path}/nope/" in res.stderr


# -- 4. the step's job before it is submitted --------------------------------------------------

@pytest.mark.parametrize("interp,runs", [
    ("/bin/bash", True), ("/usr/bin/env bash", True), ("/bin/sh -e", True), ("/bin/zsh", True),
    ("/usr/bin/env python3", False), ("/bin/tcsh", False), ("/usr/bin/env -S python3 -u",
                                                            False),
    ("/usr/bin/Rscript", False)])
def test_which_interpreters_run_shell_lines(interp, runs):
    assert runs_shell_lines(interp) is runs


@pytest.mark.parametrize("script", [
    "#!/usr/bin/env python3\nimport sys\nprint(open('in.txt').read().upper())\n",
    "#!/usr/bin/env python3\n#SBATCH -N 1\n#SBATCH -t 5\nprint(open('in.txt').read().upper())\n",
])
def test_a_python_step_gets_its_inputs_and_runs_in_python(script, tmp_path):
    """Before: the copy lines went into the Python body (a SyntaxError at run time), and a
    plain Python script was run by the rendered `#!/bin/bash`."""
    wf = load_workflow(f"name: w\nsteps:\n  - name: a\n    script: |\n"
                       f"{textwrap.indent(script, '      ')}", sites=SITES)
    spec = wf.step("a").spec()
    assert spec.shell == "/usr/bin/env python3"
    (tmp_path / "up").mkdir()
    (tmp_path / "up" / "in.txt").write_text("data")
    ready = with_prologue(spec, copy_lines([(f"{tmp_path}/up/in.txt", "in.txt")]))
    assert ready.shell == "/bin/bash"
    here = tmp_path / "here"
    here.mkdir()
    res = subprocess.run(["bash", "-c", ready.script], cwd=here, capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "DATA\n"


@pytest.mark.parametrize("dialect", ["slurm", "pbs", "lsf", "flux", "sge"])
def test_a_python_step_on_any_scheduler_never_gets_shell_lines_in_its_body(dialect, tmp_path):
    """Before: PBS put its `cd WORKDIR` (and every dialect its `module load` lines) between
    `#!/usr/bin/env python3` and the Python body: a SyntaxError at run time."""
    from diamond_jupyter.dialects import get_script_dialect

    spec = load("name: w\nsteps:\n  - name: a\n    script: |\n      #!/usr/bin/env python3\n"
                "      import os\n      print(os.getcwd())\n").step("a").spec()
    # a #$ line cannot hold a blank (qsub splits at blanks, with no quoting): refused there
    workdir = tmp_path / ("job_dir" if dialect == "sge" else "job dir")
    spec = spec.model_copy(update={"working_directory": str(workdir)})
    spec.environment.modules = ["python/3.11"]
    text = get_script_dialect(dialect).render_script(spec).script
    assert text.startswith("#!/bin/bash\n")
    workdir.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "module").write_text("#!/bin/sh\necho loaded \"$@\" >&2\n")
    (bin_dir / "module").chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    res = subprocess.run(["bash", "-c", text], cwd=workdir, capture_output=True,
                         text=True, env=env)
    assert res.returncode == 0, (text, res.stderr)
    assert res.stdout == f"{workdir}\n"
    assert "loaded load python/3.11" in res.stderr


def test_a_python_step_in_a_container_runs_its_body_with_python_inside(tmp_path):
    """Before: the container was started as `/usr/bin/env -s` (the shell's first word) and
    the outer script, under `#!/usr/bin/env python3`, held a shell command."""
    from diamond_jupyter.dialects import get_script_dialect

    spec = load("name: w\nsteps:\n  - name: a\n    script: |\n      #!/usr/bin/env python3\n"
                "      print('inside', 6 * 7)\n").step("a").spec()
    spec.environment.container_image = "python:3.11"
    text = get_script_dialect("slurm").render_script(spec).script
    assert text.startswith("#!/bin/bash\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "apptainer").write_text('#!/bin/sh\nshift 2\nexec "$@"\n')  # exec IMAGE CMD
    (bin_dir / "apptainer").chmod(0o755)
    res = subprocess.run(["bash", "-c", text], cwd=tmp_path, capture_output=True, text=True,
                         env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    assert res.returncode == 0 and res.stdout == "inside 42\n", (text, res.stderr)


def test_a_body_holding_the_here_document_end_still_runs_whole(tmp_path):
    body = "x = '''\nDIAMOND_STEP_BODY\n'''\nprint(len(x.splitlines()))\n"
    spec = JobSpec(script=body, shell="/usr/bin/env python3")
    ready = with_prologue(spec, "true\n")
    res = subprocess.run(["bash", "-c", ready.script], cwd=tmp_path, capture_output=True,
                         text=True)
    assert res.returncode == 0 and res.stdout == "2\n", (ready.script, res.stderr)


def test_a_shell_step_keeps_its_interpreter_and_body():
    spec = load("name: w\nsteps:\n  - name: a\n    script: |\n      #!/bin/zsh\n"
                "      print -r -- $ZSH_VERSION\n").step("a").spec()
    assert spec.shell == "/bin/zsh"
    ready = with_prologue(spec, "cp -p -- a b\n")
    assert ready.script == "cp -p -- a b\nprint -r -- $ZSH_VERSION\n" and ready.shell == "/bin/zsh"


def test_a_plain_python_script_submitted_alone_is_run_by_python():
    """The same fault outside workflows: `diamond submit` of a plain `#!/usr/bin/env python3`
    script rendered `#!/bin/bash` above it."""
    from diamond_jupyter.dialects import get_script_dialect
    from diamond_jupyter.federation import Federation

    spec = Federation.parse("#!/usr/bin/env python3\nprint('hi')\n")
    assert (spec.shell, spec.script) == ("/usr/bin/env python3", "print('hi')\n")
    text = get_script_dialect("slurm").render_script(spec).script
    assert text.startswith("#!/usr/bin/env python3\n") and text.count("#!") == 1
    odd = Federation.parse("#!python\nprint(1)\n")  # not an absolute path: kept as written
    assert odd.shell == "/bin/bash" and odd.script == "#!python\nprint(1)\n"


def test_a_cross_site_copy_names_a_directory_without_its_slash():
    """`results/` sent to `.../results/` landed in `.../results/results` (SFTP copies into a
    destination that ends with /)."""
    from diamond_jupyter.workflow.engine import _in_dir

    assert _in_dir("/w/j1", "results/") == "/w/j1/results"
    assert _in_dir("/w/j1", "./x") == "/w/j1/x"
    assert _in_dir("/w/j1", "a b/c.bin") == "/w/j1/a b/c.bin"


# -- 5. the command line: a bad file exits 2 with the line, before any site is asked ----------

cfg = sweep_helpers.two_unreachable_sites


@pytest.mark.parametrize("text,want", [
    ("name: w\nsteps:\n  - {name: prep, script: x}\n  - {name: b, needs: prep, script: x}\n",
     "steps['b'].needs: needs is a list: write needs: [prep], not 'prep' (line 4)"),
    ("Name: w\nsteps: [{name: a, script: x}]\n",
     "Name: unknown field (accepted: name, steps, queue_ahead, and x-* keys to hold YAML "
     "anchors); did you mean 'name'? (line 1)"),
    ("name: w\nsteps: [{name: a, script: x}]\n---\nname: v\nsteps: [{name: b, script: x}]\n",
     "a second YAML document (`---`) at line 3, column 1; a workflow file holds one workflow:"
     " remove the `---`, or split the file"),
    ("name: w\nsteps:\n  - {name: a, script: x, site: gamma}\n",
     "step 'a': unknown site 'gamma' (known: alpha, beta, or auto) (line 3)"),
])
def test_diamond_workflow_run_json_exits_2_with_the_line(cfg, tmp_path, capsys, text, want):
    f = tmp_path / "w.yaml"
    f.write_text(text)
    assert main(["workflow", "run", str(f), "--config", str(cfg), "--json"]) == 2
    out, err = capsys.readouterr()
    where = f"{f}: "  # every problem names the file (a graph one named only the step)
    assert err == f"diamond: {where}{want}\n"
    assert json.loads(out) == {"reason": "bad-input", "message": f"{where}{want}"}


def test_diamond_workflow_run_on_a_directory_exits_2(cfg, tmp_path, capsys):
    d = tmp_path / "flows"
    d.mkdir()
    assert main(["workflow", "run", str(d), "--config", str(cfg), "--json"]) == 2
    out, err = capsys.readouterr()
    assert err == (f"diamond: {d} is a directory, not a workflow file: give the workflow's "
                   f"YAML file (e.g. {d}/workflow.yaml)\n")
    assert json.loads(out)["reason"] == "bad-input"


# -- 6. a gang member's retry, on the real engine and store (the sites are recorded) ----------

class _Ops(RecordedOps):
    """The operations below the facade, recorded: every submit is bound at once."""

    sites = tuple(SITES)

    def __init__(self, store: Any, root: str = "/w") -> None:
        super().__init__(store)
        self.root = root  # each job's working directory is ROOT/SITE/TOKEN
        self.submits: list[tuple[str, str, bool]] = []  # (step, site, held)
        self.specs: dict[str, JobSpec] = {}  # the last spec submitted for each step
        self.transfers: list[tuple[str, str, bool]] = []  # (src, dst, recursive)
        self.releases: list[str] = []

    def submitted(self, spec: JobSpec, site: str, *, hold: bool, token: str,
                  origin: dict[str, Any]) -> None:
        self.submits.append((origin["step"], site, hold))
        self.specs[origin["step"]] = spec

    async def release(self, job: Job) -> None:
        self.releases.append(job.id)
        self.store.apply_state(job.id, JobState.RUNNING)

    async def transfer(self, src: str, dst: str, **kw: Any) -> Any:
        self.transfers.append((src, dst, kw.get("recursive", False)))
        return await super().transfer(src, dst, **kw)


async def _until(eng: Any, wid: str, phases: dict[str, str]) -> None:
    """Wait (on the engine's own signal, at most 10 s) until the steps are in `phases`."""
    import asyncio

    async def reached() -> None:
        while True:
            eng.changed.clear()
            rec = eng.store.get_workflow(wid)
            if all(rec.step(m).phase == p for m, p in phases.items()):
                return
            await eng.changed.wait()
    await asyncio.wait_for(reached(), 10)


async def test_a_gang_member_that_fails_is_run_again_with_its_whole_gang(tmp_path):
    """Before: the failed member was resubmitted and released alone while the other member
    kept running: a partial gang, which a gang exists to prevent."""
    from diamond_jupyter.store import Store
    from diamond_jupyter.workflow.engine import WorkflowEngine

    wf = load("""\
        name: coupled
        steps:
          - {name: ocean, site: alpha, gang: esm, script: x, retries: 1}
          - {name: atmos, site: beta, gang: esm, script: x}
          - {name: post, site: alpha, needs: [ocean, atmos], script: x}
        """)
    with Store(tmp_path / "s.sqlite") as store:
        ops = _Ops(store)
        eng = WorkflowEngine(ops)
        try:
            wid = await eng.run(wf)
            await _until(eng, wid, {"ocean": "released", "atmos": "released"})
            rec = store.get_workflow(wid)
            first_atmos = store.job_by_token(rec.step("atmos").token)
            ocean = store.job_by_token(rec.step("ocean").token)
            store.apply_state(ocean.id, JobState.FAILED, exit_code=1)
            await eng.advance(wid)
            await _until(eng, wid, {"ocean": "released", "atmos": "released"})
            rec = store.get_workflow(wid)
            assert first_atmos.id in ops.cancels  # stopped, not left running alone
            assert [s[:2] for s in ops.submits] == [
                ("ocean", "alpha"), ("atmos", "beta"), ("post", "alpha"),
                ("ocean", "alpha"), ("atmos", "beta"), ("post", "alpha")]
            assert all(held for step, _, held in ops.submits if step != "post")
            assert (rec.step("ocean").attempt, rec.step("atmos").attempt) == (1, 0)
            assert len(ops.releases) == 4  # each member released twice, together
        finally:
            await eng.close()


async def test_a_same_site_step_copies_odd_inputs_in_by_its_own_first_lines(tmp_path):
    """The engine's submit, end to end but for the scheduler: the downstream step's job copies
    every input (spaces, quotes, $, a leading -, a directory) from its upstream's directory
    by its first lines, quoted, then runs its Python body."""
    from diamond_jupyter.store import Store
    from diamond_jupyter.workflow.engine import WorkflowEngine

    wf = load_workflow(textwrap.dedent("""\
        name: odd
        steps:
          - {name: prep, site: alpha, script: ./prep}
          - name: fit
            site: alpha
            needs: [prep]
            inputs:
              - {from: prep, path: "it's a $(touch PWNED).bin", as: "in put.bin"}
              - {from: prep, path: ./-x}
              - {from: prep, path: res/, as: "r e s"}
            script: |
              #!/usr/bin/env python3
              import os
              print(sorted(os.listdir(".")), open("in put.bin").read(), open("-x").read(),
                    sorted(os.listdir("r e s")))
        """), sites=SITES)
    with Store(tmp_path / "s.sqlite") as store:
        ops = _Ops(store, root=str(tmp_path))
        eng = WorkflowEngine(ops)
        try:
            await eng.run(wf)
        finally:
            await eng.close()
    prep, fit = ops.specs["prep"], ops.specs["fit"]
    up = Path(prep.working_directory)
    (up / "res").mkdir(parents=True)
    (up / "res" / "a.txt").write_text("a")
    (up / "it's a $(touch PWNED).bin").write_text("one")
    (up / "-x").write_text("two")
    here = Path(fit.working_directory)
    here.mkdir(parents=True)
    assert fit.dependencies[0].kind == "afterok" and fit.shell == "/bin/bash"
    res = subprocess.run(["bash", "-c", fit.script], cwd=here, capture_output=True, text=True)
    assert res.returncode == 0, (fit.script, res.stderr)
    listed, _, rest = res.stdout.partition("] ")
    # the body's own file is removed before it runs (read from its descriptor)
    assert (listed, rest) == ("['-x', 'in put.bin', 'r e s'", "one two ['a.txt']\n"), res.stdout
    assert not list(tmp_path.rglob("PWNED"))


async def test_a_cross_site_directory_input_is_moved_recursively_into_its_own_name(tmp_path):
    """Before: every cross-site input was copied as a file (a directory failed with "is a
    directory"), to a destination ending with / (SFTP put it in DIR/DIR)."""
    from diamond_jupyter.store import Store
    from diamond_jupyter.workflow.engine import WorkflowEngine

    wf = load("""\
        name: across
        steps:
          - {name: prep, site: alpha, script: ./prep}
          - {name: fit, site: beta, needs: [prep], script: ./fit,
             inputs: [{from: prep, path: results/}, {from: prep, path: ./m.pt, as: w/}]}
        """)
    with Store(tmp_path / "s.sqlite") as store:
        ops = _Ops(store)
        eng = WorkflowEngine(ops)
        try:
            wid = await eng.run(wf)
            prep = store.job_by_token(store.get_workflow(wid).step("prep").token)
            store.apply_state(prep.id, JobState.COMPLETED, exit_code=0)
            await eng.advance(wid)
            await _until(eng, wid, {"fit": "released"})
            fit = store.job_by_token(store.get_workflow(wid).step("fit").token)
        finally:
            await eng.close()
    assert ops.transfers == [
        (f"alpha:{prep.workdir}/results", f"beta:{fit.workdir}/results", True),
        (f"alpha:{prep.workdir}/m.pt", f"beta:{fit.workdir}/w/m.pt", False)]
    checks = ops.specs["fit"].script
    assert "[ -e results/ ] ||" in checks and "[ -e w/m.pt ] ||" in checks
