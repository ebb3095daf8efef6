"""Workflow files, sixth sweep: what the earlier sweeps left out, each written the way users
write them and its answer worked out by hand. Steps whose script writes another
scheduler's script in a heredoc (its `#SBATCH` or `#PBS` lines are no directives of the
step: the submit command stops reading at the first command), array steps as upstreams and
their per-task outputs, a step needing a step of another file, environment and secrets
blocks, a step given a list of sites, time limits in ISO 8601 (`PT2H`) as a field and in
directives, dependency kinds written in `needs`, and other tools' habits. The tests marked
`fault` failed before this sweep's fixes."""

from __future__ import annotations

import pytest
from sweep_helpers import load, refused

from diamond_jupyter.workflow.model import load_workflow

# -- 1-2. heredocs of another scheduler's script --------------------------------------------

def test_fault_a_pbs_step_writing_a_slurm_script_in_a_heredoc_is_a_pbs_job():
    """Two #PBS lines at the top, two #SBATCH lines inside a heredoc after `cat`: qsub reads
    the first two only. Before: "ambiguous dialect: slurm and pbs both have 2 directive
    lines". Now: one node, 30 minutes, as #PBS asks."""
    wf = load("""\
        name: gen
        steps:
          - name: gen
            script: |
              #!/bin/bash
              #PBS -l select=1:ncpus=4
              #PBS -l walltime=00:30:00
              cat > inner.sh <<'EOF'
              #!/bin/bash
              #SBATCH -N 64
              #SBATCH -t 48:00:00
              srun ./big
              EOF
              ./prep inner.sh
        """)
    spec = wf.step("gen").spec()
    assert (spec.source_dialect, spec.resources.nodes, spec.resources.walltime_s) == \
        ("pbs", 1, 1800)
    assert "#SBATCH -N 64" in spec.script  # the heredoc stays in the body, as written


def test_fault_a_flux_step_writing_three_pbs_lines_is_a_flux_job():
    """Before: PBS's three heredoc lines outnumbered flux's two directives: the step was
    read as a PBS job of 4 chunks, 12 hours, queue `long`."""
    wf = load("""\
        name: conv
        steps:
          - name: conv
            script: |
              #!/bin/bash
              #flux: -N 2
              #flux: -t 30m
              cat > legacy.pbs <<'EOF'
              #PBS -l select=4:ncpus=32
              #PBS -l walltime=12:00:00
              #PBS -q long
              EOF
              flux run -n 64 ./convert legacy.pbs
        """)
    spec = wf.step("conv").spec()
    assert (spec.source_dialect, spec.resources.nodes, spec.resources.walltime_s,
            spec.queue) == ("flux", 2, 1800, None)


# -- 3-4. array steps as upstreams ------------------------------------------------------------

def test_an_array_step_is_an_upstream_like_any_other():
    wf = load("""\
        name: sweep
        steps:
          - name: sims
            script: |
              #!/bin/bash
              #SBATCH --array=1-50%10
              #SBATCH -t 10
              ./sim $SLURM_ARRAY_TASK_ID > out-$SLURM_ARRAY_TASK_ID.txt
              cat out-*.txt > all.txt
            outputs: [all.txt]
          - name: merge
            needs: [sims]
            inputs: [{from: sims, path: all.txt}]
            script: ./merge all.txt
        """)
    assert wf.step("sims").spec().array.expression == "1-50%10"
    assert wf.upstream("merge") == {"sims"} and wf.order() == ["sims", "merge"]


def test_an_array_steps_per_task_outputs_as_a_glob_are_refused_naming_the_file():
    msg = refused("""\
        name: sweep
        steps:
          - name: sims
            script: |
              #!/bin/bash
              #SBATCH --array=1-50
              ./sim $SLURM_ARRAY_TASK_ID > out-$SLURM_ARRAY_TASK_ID.txt
            outputs: ["out-*.txt"]
        """)
    assert msg == ("the workflow: steps['sims'].outputs: output 'out-*.txt' has the glob "
                   "character '*'; files are copied by their exact names, so name each file "
                   "(line 8)")


# -- 5. a step of another file -----------------------------------------------------------------

@pytest.mark.parametrize("other", ["prep.yaml:prep", "../pipeline/prep"])
def test_a_step_of_another_file_is_an_unknown_step(other):
    msg = refused(f"name: w\nsteps:\n  - {{name: b, needs: ['{other}'], script: ./b}}\n")
    assert msg == f"step 'b' needs unknown step {other!r} (steps: b) (line 3)"


# -- 6-7. environment and secrets blocks ------------------------------------------------------

def test_an_environment_block_with_secret_names_says_to_export_in_the_script():
    msg = refused("""\
        name: w
        steps:
          - name: train
            environment: {WANDB_API_KEY: abc, AWS_SECRET_ACCESS_KEY: xyz}
            script: ./train
        """)
    assert msg == ("the workflow: steps['train'].environment: not supported: set variables "
                   "in the step's script (export NAME=value) (line 4)")
    assert "abc" not in msg and "xyz" not in msg  # the values are not repeated


def test_a_secrets_list_is_an_unknown_field_listing_the_fields():
    msg = refused("name: w\nsteps:\n  - name: a\n    secrets: [WANDB_API_KEY]\n"
                  "    script: ./a\n")
    assert msg.startswith("the workflow: steps['a'].secrets: unknown field (accepted: name, "
                          "script, script_file, site, needs, inputs, outputs")
    assert msg.endswith("(line 4)")


# -- 8-9. a list of sites ----------------------------------------------------------------------

def test_a_list_of_sites_is_read_as_auto_among_them():
    """Refused until session 26, which reads it (tests/test_workflow_site_list.py)."""
    wf = load_workflow("name: w\nsteps:\n  - {name: a, site: [alpha, beta], script: ./a}\n",
                       sites=["alpha", "beta", "gamma"])
    assert wf.steps[0].among == ["alpha", "beta"] and wf.steps[0].is_auto


def test_sites_joined_by_a_comma_are_an_unknown_site():
    assert refused("name: w\nsteps:\n  - {name: a, site: 'alpha,beta', script: ./a}\n") == (
        "step 'a': unknown site 'alpha,beta' (known: alpha, beta, gamma, or auto); a list of "
        "sites is written [alpha, beta] (line 3)")


# -- 10-12. ISO 8601 time limits ---------------------------------------------------------------

def test_an_iso_time_as_a_field_says_time_is_the_scripts_directive():
    msg = refused("name: w\nsteps:\n  - {name: a, time: PT2H, script: ./a}\n")
    assert msg.startswith("the workflow: steps['a'].time: not supported: a step's resources "
                          "and time limit are its script's own directives")


@pytest.mark.parametrize("directive,want", [
    ("#SBATCH -t PT2H", "line 2: bad time 'PT2H' in `#SBATCH -t PT2H`; expected M, M:S, "
     "H:M:S, D-H, D-H:M or D-H:M:S ('PT2H' is an ISO 8601 duration, 2 h 0 min 0 s, which "
     "no scheduler reads)"),
    ("#PBS -l walltime=PT2H30M", "line 2: bad walltime 'walltime=PT2H30M' in `#PBS -l "
     "walltime=PT2H30M`; expected [[[D:]H:]M:]S, e.g. 12:00:00 ('PT2H30M' is an ISO 8601 "
     "duration, 2 h 30 min 0 s, which no scheduler reads)"),
    ("#BSUB -W P1DT12H", "('P1DT12H' is an ISO 8601 duration, 36 h 0 min 0 s, which no "
     "scheduler reads)"),
    ("#$ -l h_rt=PT45M", "('PT45M' is an ISO 8601 duration, 0 h 45 min 0 s, which no "
     "scheduler reads)"),
])
def test_fault_an_iso_time_in_a_directive_is_a_bad_time_with_its_length(directive, want):
    """Before: `PT2H` was taken for a template placeholder (capitals) and kept verbatim as
    an unknown directive: the job had no time limit here and the scheduler refused it at
    submit. Now the step is refused at load, naming the line and the length meant."""
    msg = refused(f"""\
        name: w
        steps:
          - name: a
            script: |
              #!/bin/bash
              {directive}
              ./a
        """)
    assert msg.startswith("step 'a': ") and want in msg and msg.endswith("(line 4)")


def test_a_real_placeholder_is_still_kept_with_a_note():
    wf = load("""\
        name: w
        steps:
          - name: a
            script: |
              #!/bin/bash
              #SBATCH -t WALLTIME
              ./a
        """)
    spec = wf.step("a").spec()
    assert spec.resources.walltime_s is None
    assert any("template placeholder in `#SBATCH -t WALLTIME`" in n
               for n in spec.metadata["parse_notes"])


# -- 13. dependency kinds in needs -------------------------------------------------------------

def test_fault_a_dependency_kind_in_needs_says_it_is_not_read():
    """Airflow / sbatch habit: `needs: [{step: a, status: afterany}]`. Before: "needs[0]:
    Input should be a valid string"."""
    msg = refused("""\
        name: w
        steps:
          - {name: a, script: ./a}
          - {name: b, needs: [{step: a, status: afterany}], script: ./b}
        """)
    assert msg == ("the workflow: steps['b'].needs: needs lists the steps' names (needs: "
                   "[prep, fit]), not {'step': 'a', 'status': 'afterany'}: a dependency's "
                   "kind is not read (a step starts once every step it needs has "
                   "COMPLETED) (line 4)")


# -- 14-17. other habits -----------------------------------------------------------------------

def test_a_uv_run_step_is_a_slurm_job_of_an_hour():
    wf = load("""\
        name: w
        steps:
          - name: train
            script: |
              #!/bin/bash
              #SBATCH -t 1:00:00
              uv run --frozen python train.py
        """)
    spec = wf.step("train").spec()
    assert (spec.source_dialect, spec.resources.walltime_s) == ("slurm", 3600)


def test_on_failure_retry_lists_what_is_accepted():
    assert refused("name: w\nsteps:\n  - {name: a, on_failure: retry, script: ./a}\n") == (
        "the workflow: steps['a'].on_failure: Input should be 'resubmit-elsewhere' or "
        "'stop', not 'retry': retries: N says how many times a failed step is resubmitted, "
        "and on_failure where: stop (the same site) or resubmit-elsewhere (a site not tried "
        "yet) (line 3)")


def test_a_pbs_dialect_over_slurm_lines_is_refused():
    msg = refused("""\
        name: w
        steps:
          - name: a
            dialect: pbs
            script: |
              #!/bin/bash
              #SBATCH -N 2
              ./a
        """)
    assert msg.startswith("step 'a': dialect: pbs, but its script's directives are slurm "
                          "(1 line) and none is pbs's")


def test_a_second_document_and_a_version_key_are_refused():
    assert refused("name: w\nsteps:\n  - {name: a, script: ./a}\n---\nname: w2\n"
                   "steps:\n  - {name: b, script: ./b}\n") == (
        "the workflow: a second YAML document (`---`) at line 4, column 1; a workflow file "
        "holds one workflow: remove the `---`, or split the file")
    assert refused("version: 2\nname: w\nsteps:\n  - {name: a, script: ./a}\n") == (
        "the workflow: version: unknown field (accepted: name, steps, queue_ahead, and x-* "
        "keys to hold YAML anchors) (line 1)")
