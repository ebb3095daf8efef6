"""Workflow files, seventh sweep: files copied from other tools' users (Snakemake's `rule`,
`shell`, `envmodules`, `conda`, `{sample}` wildcards; Nextflow's `process`, `publishDir`,
`container`; CWL's `cwlVersion`, `baseCommand`, `out`), a script written as a folded
block (`script: >`), outputs under `$SCRATCH` or named with `$SLURM_JOB_ID`, a step whose
script runs a heterogeneous job (`srun --het-group`), a 500-step chain, tabs in a script
block and as indentation. Each answer worked out by hand: what the file builds, or its
one-line refusal naming the step, the field and what to write instead (`diamond workflow
run` exits 2 on it). The tests marked `fault` failed before this sweep's fixes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sweep_helpers import SITES, load, refused

from diamond_jupyter.cli import main
from diamond_jupyter.workflow.model import load_workflow

STEP_FIELDS = ("accepted: name, script, script_file, site, needs, inputs, outputs, gang, "
               "retries, on_failure, dialect")


# -- 1-5. other tools' field names: what to write instead ------------------------------------

def test_fault_a_snakemake_rule_says_a_step_is_named_by_name():
    """Before: "unknown field (accepted: ...)" with no word of what `rule` is here."""
    msg = refused("""\
        name: align
        steps:
          - rule: bwa_map
            shell: bwa mem ref.fa reads.fq > out.sam
        """)
    assert msg == (f"the workflow: steps[0].rule: unknown field ({STEP_FIELDS}); did you "
                   "mean 'name'? (line 3)")


def test_fault_a_nextflow_process_says_name():
    msg = refused("""\
        name: rnaseq
        steps:
          - process: FASTQC
            script: fastqc reads.fq
        """)
    assert msg.endswith("did you mean 'name'? (line 3)")


def test_fault_cwls_base_command_and_out_say_script_and_outputs():
    assert refused("""\
        name: w
        steps:
          - name: count
            baseCommand: [wc, -l]
        """).endswith("steps['count'].baseCommand: unknown field "
                      f"({STEP_FIELDS}); did you mean 'script'? (line 4)")
    assert refused("""\
        name: w
        steps:
          - name: count
            script: wc -l in.txt > n.txt
            out: [n.txt]
        """).endswith("did you mean 'outputs'? (line 5)")


def test_fault_a_cwl_document_is_said_not_to_be_read():
    msg = refused("""\
        cwlVersion: v1.2
        class: Workflow
        steps:
          - name: a
            script: ./a
        """)
    assert msg == ("the workflow: cwlVersion: not supported: a CWL document is not read "
                   "here: a workflow is `name:` and `steps:`, each step's command lines under "
                   "`script: |` (line 1)")


@pytest.mark.parametrize("field,value,says", [
    ("envmodules", "[gcc/12.3.0]", "load modules in the step's script (module load "
                                   "NAME/VERSION)"),
    ("conda", "envs/align.yaml", "activate the environment in the step's script (conda "
                                 "activate NAME, spack env activate NAME)"),
    ("container", "docker://biocontainers/bwa:0.7.17", "run the image in the step's script "
     "(apptainer exec IMAGE COMMAND, or srun --container-image=IMAGE where the site has "
     "pyxis)"),
])
def test_fault_snakemake_and_nextflow_environment_fields_say_to_use_the_script(field, value,
                                                                              says):
    msg = refused(f"name: w\nsteps:\n  - name: a\n    script: ./a\n    {field}: {value}\n")
    assert msg == f"the workflow: steps['a'].{field}: not supported: {says} (line 5)"


def test_fault_nextflows_publish_dir_says_outputs():
    assert refused("name: w\nsteps:\n  - name: a\n    script: ./a\n    publishDir: results/\n"
                   ).endswith("did you mean 'outputs'? (line 5)")


# -- 6-8. outputs that are patterns or variables ------------------------------------------------

def test_fault_a_snakemake_wildcard_in_outputs_is_refused():
    """`results/{sample}.bam` was kept as a file of that literal name, which no job writes:
    the step failed after it ran, on the missing output."""
    msg = refused("""\
        name: w
        steps:
          - name: map
            script: ./map
            outputs: ["results/{sample}.bam"]
        """)
    assert msg == ("the workflow: steps['map'].outputs: output 'results/{sample}.bam' has "
                   "'{sample}', a wildcard (Snakemake's {name}) or a brace expansion, which is "
                   "never expanded: files are copied by their exact names, so name each file "
                   "(line 5)")


def test_fault_a_job_id_inside_an_output_name_is_refused():
    msg = refused("""\
        name: w
        steps:
          - name: a
            script: ./a > out-$SLURM_JOB_ID.txt
            outputs: [out-$SLURM_JOB_ID.txt]
        """)
    assert msg == ("the workflow: steps['a'].outputs: output 'out-$SLURM_JOB_ID.txt': "
                   "$SLURM_JOB_ID is an environment variable, but a path is never expanded "
                   "(a file is copied by its exact name); have the script write the file "
                   "under a fixed name, e.g. out-run.txt (line 5)")


def test_an_output_under_scratch_says_the_variable_is_not_expanded():
    msg = refused("""\
        name: w
        steps:
          - name: a
            script: ./a > $SCRATCH/run1/out.h5
            outputs: [$SCRATCH/run1/out.h5]
        """)
    assert msg == ("the workflow: steps['a'].outputs: output '$SCRATCH/run1/out.h5': $SCRATCH "
                   "is an environment variable, but a path is never expanded (a file is "
                   "copied by its exact name, inside the step's working directory); write the "
                   "path inside that directory, e.g. run1/out.h5 (line 5)")


# -- 9. a folded script ---------------------------------------------------------------------------

def test_fault_a_folded_script_block_is_refused():
    """`script: >` joins the lines: `#!/bin/bash #SBATCH -N 2 ...` passes the rest to bash
    as one argument, and nothing runs. Before: accepted, a job of no directives."""
    msg = refused("""\
        name: w
        steps:
          - name: sim
            script: >
              #!/bin/bash
              #SBATCH -N 2
              #SBATCH -t 30
              srun ./sim
        """)
    assert msg == ("step 'sim': its script's first line '#!/bin/bash #SBATCH -N 2 #SBATCH -t "
                   "30 srun ./sim' holds a '#' word after the #! line: lines joined into one "
                   "(a folded block, `script: >`, joins them with blanks) run nothing; write "
                   "`script: |` to keep each line (line 4)")
    folded = refused("name: w\nsteps:\n  - name: a\n    script: >\n      #SBATCH -N 2\n"
                     "      #SBATCH -t 30\n      srun ./a\n")
    assert "holds a '#' word after the directive" in folded


def test_a_folded_block_without_comments_is_one_command_line():
    """`script: >` over `./prep --in a.txt` lines joins them into one command: valid."""
    wf = load("""\
        name: w
        steps:
          - name: a
            script: >
              ./prep --in a.txt
              --out b.txt
        """)
    assert wf.step("a").spec().script.strip() == "./prep --in a.txt --out b.txt"


# -- 10. a heterogeneous job ------------------------------------------------------------------

def test_a_step_running_a_heterogeneous_job_keeps_its_components():
    wf = load("""\
        name: couple
        steps:
          - name: cpl
            script: |
              #!/bin/bash
              #SBATCH -N 1 -n 1 -t 20
              #SBATCH hetjob
              #SBATCH -N 2 -n 64
              srun --het-group=0 ./server : --het-group=1 ./clients
        """)
    spec = wf.step("cpl").spec()
    assert [(c.nodes, c.tasks) for c in spec.components] == [(1, 1), (2, 64)]
    assert "srun --het-group=0 ./server : --het-group=1 ./clients" in spec.script


# -- 11. a long chain -------------------------------------------------------------------------

def test_a_500_step_chain_is_read_in_order_within_seconds():
    steps = "".join(f"  - name: s{i}\n    script: ./step {i}\n"
                    + (f"    needs: [s{i - 1}]\n" if i else "") for i in range(500))
    t0 = time.monotonic()
    wf = load_workflow("name: chain\nsteps:\n" + steps, sites=SITES)
    assert time.monotonic() - t0 < 20
    assert wf.order() == [f"s{i}" for i in range(500)]
    assert wf.upstream("s499") == {f"s{i}" for i in range(499)}  # all before it, in turn


# -- 12-13. tabs ------------------------------------------------------------------------------

def test_a_tab_inside_a_script_block_is_kept_as_the_script_wrote_it():
    wf = load_workflow("name: w\nsteps:\n  - name: a\n    script: |\n      if true; then\n"
                       "      \t./a\n      fi\n", sites=SITES)
    assert wf.step("a").spec().script == "if true; then\n\t./a\nfi\n"


def test_tabs_as_indentation_exit_2_naming_the_line(tmp_path: Path, capsys):
    f = tmp_path / "wf.yaml"
    f.write_text("name: w\nsteps:\n\t- name: a\n\t  script: ./a\n")
    cfg = tmp_path / "sites.yaml"
    cfg.write_text("sites:\n  - name: alpha\n    transport: {kind: local}\n")
    code = main(["--config", str(cfg), "workflow", "run", str(f), "--json"])
    err = capsys.readouterr().err
    assert code == 2
    assert "not valid YAML at line 3, column 1: found character '\\t' that cannot start any " \
           "token (indent with spaces: YAML does not allow tabs for indentation)" in err
    assert len(err.strip().splitlines()) == 1  # one line, not a trace
