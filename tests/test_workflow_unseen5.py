"""Workflow files, fifth sweep: what the earlier sweeps left out, each file written the way
users of other workflow tools write them and its answer worked out by hand. Conditions
(`when:`, GitHub's `if:`), parameter sweeps (`matrix:`), an included file, resources and
variables as step fields: none is a feature here, and each now says so and what to write
instead (before: "unknown field" and the list of fields). Walltimes in every spelling the
schedulers take, a fan-in of 200 upstreams, step names in other scripts, steps listing one
output path, cycles through three and four steps (now with the line of a `needs` that
closes them), a step needing itself, a step script with its own dependency or hold (now
refused), `retries: -1` and `1e3`, and a file whose sites cannot be reached (refused
without contacting them)."""

from __future__ import annotations

import json
import time

import pytest
import sweep_helpers
from sweep_helpers import SITES, load, refused

from diamond_jupyter.cli import main
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput
from diamond_jupyter.workflow.model import load_workflow

# -- 1. features of other workflow tools: said, with what to write instead --------------------

def test_fault_a_when_condition_says_conditions_are_not_read():
    """Pegasus/Airflow habit: run the report only when the fit converged. Before: "unknown
    field (accepted: ...)", as if `when` were a typo; now the step is named, the line, that
    conditions are not read and where the test goes instead. An unknown field's line is
    its key's (before: the line of a block value under it, one further down)."""
    msg = refused("""\
        name: fit
        steps:
          - {name: fit, script: ./fit > fit.log}
          - name: report
            needs: [fit]
            when: "grep -q converged fit.log"
            script: ./report
        """)
    assert msg == ("the workflow: steps['report'].when: not supported: conditions are not read "
                   "(every step runs once the steps it needs have COMPLETED); test inside "
                   "the step's script instead (line 6)")


def test_fault_a_github_actions_if_is_the_same_refusal():
    msg = refused("""\
        name: ci
        steps:
          - {name: build, script: make}
          - name: deploy
            needs: [build]
            if: ${{ success() }}
            script: ./deploy.sh
        """)
    assert "steps['deploy'].if: not supported: conditions are not read" in msg
    assert msg.endswith("(line 6)")


def test_fault_a_matrix_sweep_says_to_write_one_step_per_value_or_an_array():
    msg = refused("""\
        name: sweep
        steps:
          - name: train
            matrix:
              lr: [0.1, 0.01, 0.001]
            script: python train.py --lr ${{ matrix.lr }}
        """)
    assert "steps['train'].matrix: not supported: parameter sweeps are not expanded; write " \
        "one step per value (an x-* anchor shares their fields), or a job array in the " \
        "script (#SBATCH --array=1-10) (line 4)" in msg


def test_the_sweep_written_as_the_refusal_says_is_three_steps_sharing_an_anchor():
    wf = load("""\
        name: sweep
        x-train: &train {site: alpha, retries: 1}
        steps:
          - {<<: *train, name: lr-0.1, script: python train.py --lr 0.1}
          - {<<: *train, name: lr-0.01, script: python train.py --lr 0.01}
          - {<<: *train, name: lr-0.001, script: python train.py --lr 0.001}
          - name: pick
            needs: [lr-0.1, lr-0.01, lr-0.001]
            script: python pick.py
        """)
    assert [s.site for s in wf.steps[:3]] == ["alpha"] * 3
    assert [s.retries for s in wf.steps] == [1, 1, 1, 0]
    assert wf.upstream("pick") == {"lr-0.1", "lr-0.01", "lr-0.001"}


def test_fault_an_included_file_says_a_workflow_is_one_file():
    msg = refused("""\
        name: pipeline
        include: common.yaml
        steps:
          - {name: a, script: ./a}
        """)
    assert msg == ("the workflow: include: not supported: a workflow is one file; share fields "
                   "between steps with an x-* key holding a YAML anchor (line 2)")


@pytest.mark.parametrize("field,line", [
    ("walltime: '1-00:00:00'", 3),
    ("resources: {nodes: 2, mem: 64G}", 3),
    ("timeout: 3600", 3),
    ("partition: gpu", 3),
])
def test_fault_resources_as_step_fields_say_they_are_the_scripts_directives(field, line):
    msg = refused(f"name: w\nsteps:\n  - {{name: a, {field}, script: ./a}}\n")
    key = field.split(":")[0]
    assert msg == (f"the workflow: steps['a'].{key}: not supported: a step's resources and "
                   "time limit are its script's own directives (#SBATCH -t 1-00:00:00, "
                   "#PBS -l walltime=..., #BSUB -W ...), not fields (line 3)".replace(
                       "(line 3)", f"(line {line})"))


def test_fault_environment_variables_as_a_field_say_to_export_them():
    msg = refused("""\
        name: w
        steps:
          - name: a
            env: {OMP_NUM_THREADS: 8}
            script: ./a
        """)
    assert "steps['a'].env: not supported: set variables in the step's script " \
        "(export NAME=value) (line 4)" in msg


def test_a_misspelt_field_still_names_the_field_meant():
    """The hints above are for other tools' features only: `input:` is `inputs`, `jobs:`
    is `steps`, as before."""
    assert "did you mean 'inputs'?" in refused("""\
        name: w
        steps:
          - {name: a, script: ./a}
          - {name: b, needs: [a], input: [{from: a, path: x}], script: ./b}
        """)
    assert "jobs: unknown field" in refused("name: w\njobs:\n  - {name: a, script: ./a}\n")


# -- 2. time limits in each scheduler's spelling ----------------------------------------------

def test_walltimes_in_every_spelling_are_read_as_the_scheduler_means_them():
    """Slurm `-t 1-00:00:00` is a day and `-t 90` ninety minutes; PBS `walltime=1:30` is
    minutes:seconds (90 s); LSF `-W 1:30` is hours:minutes; Grid Engine `h_rt=90` seconds."""
    wf = load("""\
        name: times
        steps:
          - name: day
            script: |
              #!/bin/bash
              #SBATCH -t 1-00:00:00
              ./a
          - name: ninety
            script: |
              #!/bin/bash
              #SBATCH --time=90
              ./b
          - name: pbs
            script: |
              #!/bin/bash
              #PBS -l walltime=1:30
              ./c
          - name: lsf
            script: |
              #!/bin/bash
              #BSUB -W 1:30
              ./d
          - name: sge
            script: |
              #!/bin/bash
              #$ -l h_rt=90
              ./e
        """)
    got = {s.name: Federation.parse(s.script).resources.walltime_s for s in wf.steps}
    assert got == {"day": 86400, "ninety": 5400, "pbs": 90, "lsf": 5400, "sge": 90}


# -- 3. shapes --------------------------------------------------------------------------------

def test_a_fan_in_of_200_upstreams_each_giving_one_file():
    lines = ["name: fanin", "steps:"]
    lines += [f"  - {{name: shard-{i:03d}, script: ./simulate {i}}}" for i in range(200)]
    lines += ["  - name: merge", "    needs: [" + ", ".join(
        f"shard-{i:03d}" for i in range(200)) + "]", "    inputs:"]
    lines += [f"      - {{from: shard-{i:03d}, path: part-{i:03d}.h5}}" for i in range(200)]
    lines += ["    script: ./merge part-*.h5"]
    t0 = time.monotonic()
    wf = load_workflow("\n".join(lines) + "\n", sites=SITES)
    assert time.monotonic() - t0 < 10
    assert wf.order()[-1] == "merge" and len(wf.upstream("merge")) == 200
    assert len(wf.step("merge").inputs) == 200
    # one of the 200 misspelt is found and named with its line
    bad = "\n".join(lines).replace("[shard-000, ", "[shard-00, ") + "\n"
    with pytest.raises(BadInput, match=r"needs unknown step 'shard-00' .*\(line 204\)"):
        load_workflow(bad, sites=SITES)


@pytest.mark.parametrize("name,char", [
    ("vorverarbeitung-ü", "ü"), ("训练", "训"), ("🚀launch", "🚀")])
def test_step_names_in_other_scripts_name_the_letter_refused(name, char):
    """A step's name becomes part of job names and directories on every scheduler: ASCII
    only, the first letter outside it named."""
    msg = refused(f'name: w\nsteps:\n  - {{name: "{name}", script: ./a}}\n')
    assert "is not a valid name" in msg and f"{char!r} is not one of them" in msg
    assert msg.endswith("(line 3)")


def test_a_lookalike_cyrillic_letter_in_needs_is_named_with_the_step_meant():
    msg = refused("name: w\nsteps:\n  - {name: prep, script: ./a}\n"
                  "  - {name: train, needs: [\u0440rep], script: ./b}\n")
    assert "needs unknown step 'рrep' (did you mean 'prep'?" in msg and msg.endswith("(line 4)")


def test_two_steps_listing_the_same_output_path_each_write_their_own():
    """No race: each step runs in its own directory, so `result.csv` of `a` and of `b` are
    two files; a downstream takes each by its step (`from`)."""
    wf = load("""\
        name: two
        steps:
          - {name: a, outputs: [result.csv], script: ./a > result.csv}
          - {name: b, outputs: [result.csv], script: ./b > result.csv}
          - name: join
            needs: [a, b]
            inputs: [{from: a, path: result.csv, as: a.csv}, {from: b, path: result.csv, as: b.csv}]
            script: cat a.csv b.csv
        """)
    assert [(i.from_, i.path, i.as_) for i in wf.step("join").inputs] == [
        ("a", "result.csv", "a.csv"), ("b", "result.csv", "b.csv")]


# -- 4. cycles --------------------------------------------------------------------------------

def test_fault_a_cycle_through_three_steps_names_the_line_that_closes_it():
    """Before: the cycle was named without a line (every other graph problem had one)."""
    msg = refused("""\
        name: loop
        steps:
          - {name: a, needs: [c], script: ./a}
          - {name: b, needs: [a], script: ./b}
          - {name: c, needs: [b], script: ./c}
        """)
    assert msg == "workflow 'loop' has a cycle: a -> b -> c -> a (line 4)"


def test_a_cycle_of_four_beside_a_step_outside_it():
    msg = refused("""\
        name: loop
        steps:
          - {name: e, script: ./e}
          - {name: a, needs: [e, d], script: ./a}
          - {name: b, needs: [a], script: ./b}
          - {name: c, needs: [b], script: ./c}
          - {name: d, needs: [c], script: ./d}
        """)
    assert msg == "workflow 'loop' has a cycle: a -> b -> c -> d -> a (line 5)"


def test_a_step_needing_itself_and_an_input_from_downstream():
    assert refused("name: w\nsteps:\n  - {name: a, needs: [a], script: ./a}\n") == \
        "step 'a' needs itself (a cycle) (line 3)"
    assert refused("name: w\nsteps:\n  - {name: a, inputs: [{from: b, path: x}], "
                   "script: ./a}\n  - {name: b, script: ./b}\n") == (
        "step 'a': inputs[0] is from 'b', which is not upstream of it (add it to needs; "
        "needs: none) (line 3)")


# -- 5. a step's script that orders or holds itself

@pytest.mark.parametrize("directive,want", [
    ("#SBATCH --dependency=afterok:12345", "its script waits on job 12345"),
    ("#PBS -W depend=afterok:4021.pbs01", "its script waits on job 4021.pbs01"),
    ('#BSUB -w "done(881)"', "its script waits on job 881"),
    ("#$ -hold_jid 77", "its script waits on job 77"),
    ("#SBATCH --hold", "its script submits the job held (a hold directive"),
])
def test_fault_a_steps_own_dependency_or_hold_is_refused(directive, want):
    """A script copied from a chain of sbatch calls keeps its `--dependency` on a job id:
    before, the engine kept it beside its own, so the step waited on whatever job has that
    number on the site it was placed on (or was refused there); a `--hold` was never
    released and the workflow waited forever. Both are refused at load, at the step."""
    msg = refused(f"""\
        name: chain
        steps:
          - {{name: prep, script: ./prep}}
          - name: run
            needs: [prep]
            script: |
              #!/bin/bash
              {directive}
              ./run
        """)
    assert msg.startswith(f"step 'run': {want}") and msg.endswith("(line 6)")


# -- 6. retries -------------------------------------------------------------------------------

@pytest.mark.parametrize("written,want", [
    ("-1", "retries must be a whole number from 0 to 10, not -1 (line 3)"),
    ("1e3", "retries must be a whole number from 0 to 10, not '1e3' (line 3)"),
    ("2.0", "retries must be a whole number from 0 to 10, not 2.0 (line 3)"),
    ("inf", "retries must be a whole number from 0 to 10, not 'inf' (line 3)"),
])
def test_retries_forever_or_as_a_float_are_refused(written, want):
    assert want in refused(f"name: w\nsteps:\n  - {{name: a, retries: {written}, "
                           "script: ./a}\n")


# -- 7. the command line: sites that cannot be reached ----------------------------------------

cfg = sweep_helpers.two_unreachable_sites


@pytest.mark.parametrize("text,want", [
    ("name: w\nsteps:\n  - {name: a, site: alpha, when: always, script: ./a}\n",
     "when: not supported"),
    ("name: w\nsteps:\n  - {name: a, site: alpha, needs: [c], script: ./a}\n"
     "  - {name: b, site: beta, needs: [a], script: ./b}\n"
     "  - {name: c, needs: [b], script: ./c}\n", "has a cycle: a -> b -> c -> a (line 4)"),
    ("name: w\nsteps:\n  - {name: a, site: delta, script: ./a}\n", "unknown site 'delta'"),
])
def test_a_bad_file_exits_2_before_any_site_is_contacted(cfg, tmp_path, capsys, text, want):
    f = tmp_path / "w.yaml"
    f.write_text(text)
    t0 = time.monotonic()
    assert main(["workflow", "run", str(f), "--config", str(cfg), "--json"]) == 2
    assert time.monotonic() - t0 < 8  # an SSH connect to 192.0.2.1 waits its 10 s timeout
    out, err = capsys.readouterr()
    assert want in err and err.count("\n") == 1 and str(f) in err
    assert json.loads(out)["reason"] == "bad-input"
