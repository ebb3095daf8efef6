"""Workflow files, eighth sweep: files written for this format by users of Airflow, Nextflow,
Parsl, Fireworks, Maestro, Snakemake and CWL after reading the README, with their habits
(`dag_id`, `task_id`, `trigger_rule`, `retry_delay`, `default_args`, `errorStrategy`,
`executor`, `stdout`, inputs named by file, `links`, `study`, `description`, `hints`), and
unusual but valid forms: site lists shared through anchors, gangs over sites of two
schedulers, wide fan-out and fan-in with renamed inputs, a dense layered DAG taking inputs
from two levels up, YAML sets, numbers with commas, URLs and Windows paths as inputs. Each
answer was worked out by hand: the DAG it builds and the plan an approval would pin, or its
one-line refusal naming the step, the field, the line and what to write instead (`diamond
workflow run` exits 2 on it). The tests marked `fault` failed before this sweep's fixes."""

from __future__ import annotations

import os
import textwrap
import threading
import time
from pathlib import Path

import pytest
from sweep_helpers import SITES, load, refused
from test_workflow_plan_loop import _fed

from diamond_jupyter.cli import main
from diamond_jupyter.model import BadInput
from diamond_jupyter.transports import base as transport_base
from diamond_jupyter.workflow.model import load_workflow

STEP_FIELDS = ("accepted: name, script, script_file, site, needs, inputs, outputs, gang, "
               "retries, on_failure, dialect")
TOP_FIELDS = "accepted: name, steps, queue_ahead, and x-* keys to hold YAML anchors"
SLURM = "#!/bin/bash\\n#SBATCH -t 5\\n"  # inside a double-quoted YAML script


def step_with(field: str) -> str:
    """A one-step workflow whose step has `field` (a line, or lines, of YAML) on line 5."""
    return "name: w\nsteps:\n  - name: a\n    script: ./a\n" + textwrap.indent(
        textwrap.dedent(field), "    ")


# -- 1-4. valid DAGs, read and planned -------------------------------------------------------

DIAMOND = f"""\
name: qc
x-cpu: &cpu [alpha, beta]
x-retry: &retry {{retries: 2, on_failure: resubmit-elsewhere}}
steps:
  - name: fastqc
    site: *cpu
    script: "{SLURM}fastqc reads.fq > qc.txt; split -n 2 reads.fq r\\n"
    outputs: [qc.txt, raa, rab]
  - name: trim_r1
    <<: *retry
    site: *cpu
    needs: [fastqc]
    inputs: [{{from: fastqc, path: raa, as: in.fq}}]
    script: "{SLURM}trim in.fq > t.fq\\n"
  - name: trim_r2
    <<: *retry
    site: gamma
    needs: [fastqc]
    inputs: [{{from: fastqc, path: rab, as: in.fq}}]
    script: "{SLURM}trim in.fq > t.fq\\n"
  - name: merge
    needs: [trim_r1, trim_r2]
    inputs:
      - {{from: trim_r1, path: t.fq, as: parts/1.fq}}
      - {{from: trim_r2, path: t.fq, as: parts/2.fq}}
      - {{from: fastqc, path: qc.txt}}          # from two levels up: no need of its own
    script: "{SLURM}cat parts/*.fq > all.fq\\n"
"""


def test_a_diamond_with_site_lists_and_retries_shared_through_anchors():
    wf = load(DIAMOND)
    assert wf.order() == ["fastqc", "trim_r1", "trim_r2", "merge"]
    assert wf.upstream("merge") == {"fastqc", "trim_r1", "trim_r2"}
    r1, r2, merge = wf.step("trim_r1"), wf.step("trim_r2"), wf.step("merge")
    assert (r1.among, r1.retries, r1.on_failure) == (["alpha", "beta"], 2, "resubmit-elsewhere")
    assert (r2.site, r2.among, r2.retries) == ("gamma", None, 2)
    assert [(i.from_, i.dest) for i in merge.inputs] == [
        ("trim_r1", "parts/1.fq"), ("trim_r2", "parts/2.fq"), ("fastqc", "qc.txt")]
    assert merge.site == "auto" and merge.needs == ["trim_r1", "trim_r2"]


async def test_the_diamonds_plan_lists_each_steps_sites_and_every_copy(tmp_path, monkeypatch):
    """Sites alpha and beta (Slurm) and gamma (PBS): the list steps are rendered on their
    list only, trim_r2 on gamma as a PBS job, merge (auto) on all three; six copies."""
    fed = _fed(tmp_path, monkeypatch, extra=({"name": "gamma", "scheduler": "pbs"},))
    try:
        plan = await fed.plan_workflow(DIAMOND)
    finally:
        await fed.close()
    steps = {s["name"]: s for s in plan["steps"]}
    assert [s["name"] for s in plan["steps"]] == ["fastqc", "trim_r1", "trim_r2", "merge"]
    assert steps["fastqc"]["may_run_on"] == ["alpha", "beta"]
    assert steps["trim_r1"]["may_run_on"] == ["alpha", "beta"]  # its retries too
    # pinned to gamma, its retries elsewhere (resubmit-elsewhere): every site, gamma first
    assert steps["trim_r2"]["may_run_on"] == ["gamma", "alpha", "beta"]
    pbs = steps["trim_r2"]["rendered"][0]
    assert pbs["scheduler"] == "pbs" and "#PBS -l walltime=00:05:00" in pbs["script"]
    assert steps["merge"]["may_run_on"] == ["alpha", "beta", "gamma"]
    assert [(m["source"], m["destination"]) for m in plan["data_movements"]] == [
        ("step fastqc: raa", "step trim_r1: in.fq"), ("step fastqc: rab", "step trim_r2: in.fq"),
        ("step trim_r1: t.fq", "step merge: parts/1.fq"),
        ("step trim_r2: t.fq", "step merge: parts/2.fq"),
        ("step fastqc: qc.txt", "step merge: qc.txt")]


def test_an_airflow_style_fan_out_of_40_and_fan_in_with_renamed_inputs():
    """extract -> t0..t39 -> load; load takes each part as parts/tN.csv."""
    steps = ["  - {name: extract, site: alpha, script: ./extract, outputs: [raw.csv]}"]
    steps += [f"  - {{name: t{i}, needs: [extract], script: ./t, "
              f"inputs: [{{from: extract, path: raw.csv}}], outputs: [part.csv]}}"
              for i in range(40)]
    steps.append("  - name: load\n    needs: [" + ", ".join(f"t{i}" for i in range(40))
                 + "]\n    script: ./load\n    inputs:\n" + "".join(
                     f"      - {{from: t{i}, path: part.csv, as: parts/t{i}.csv}}\n"
                     for i in range(40)))
    wf = load_workflow("name: etl\nsteps:\n" + "\n".join(steps) + "\n", sites=SITES)
    order = wf.order()
    assert order[0] == "extract" and order[-1] == "load" and len(order) == 42
    assert wf.downstream("extract") == {f"t{i}" for i in range(40)} | {"load"}
    assert [i.dest for i in wf.step("load").inputs][::13] == [
        "parts/t0.csv", "parts/t13.csv", "parts/t26.csv", "parts/t39.csv"]


def dense(layers: int, width: int) -> str:
    """`layers` of `width` steps, each needing every step of the layer before and taking
    one file from each step two layers up (never a direct need)."""
    out = ["name: dense", "steps:"]
    for level in range(layers):
        for w in range(width):
            out.append(f"  - name: s{level}_{w}\n    script: ./x")
            if level:
                out.append("    needs: [" + ", ".join(f"s{level - 1}_{k}" for k in range(width))
                           + "]")
            if level >= 2:
                out.append("    inputs: [" + ", ".join(
                    f"{{from: s{level - 2}_{k}, path: o{k}}}" for k in range(width)) + "]")
    return "\n".join(out) + "\n"


def test_fault_a_dense_dag_taking_inputs_from_two_levels_up_is_checked_in_one_pass():
    """1,000 steps in 40 layers of 25 (850 kB): each input from two layers up asked the
    graph for its step's whole upstream again, about 24,000 walks of up to 25,000 edges
    (minutes; 500 steps took 15 s, blocking the server's loop where a REST call or a
    notebook cell ran the workflow). Now one pass of bit masks: a few seconds. (A hang
    guard, not a benchmark.)"""
    text = dense(40, 25)
    assert 800_000 < len(text) < 1 << 20
    t0 = time.monotonic()
    wf = load_workflow(text, sites=SITES)
    assert time.monotonic() - t0 < 60
    assert wf.order()[-1] == "s39_24" and len(wf.steps) == 1000
    assert wf.upstream("s2_0") == {f"s{lv}_{k}" for lv in (0, 1) for k in range(25)}


def test_an_input_from_two_levels_up_that_is_not_upstream_is_still_refused():
    text = dense(3, 2).replace("needs: [s1_0, s1_1]\n    inputs: [{from: s0_0",
                               "needs: [s1_1]\n    inputs: [{from: s0_0", 1)
    text = text.replace("  - name: s1_1\n    script: ./x\n    needs: [s0_0, s0_1]",
                        "  - name: s1_1\n    script: ./x\n    needs: [s0_1]")
    msg = refused(text)
    assert msg == ("step 's2_0': inputs[0] is from 's0_0', which is not upstream of it (add "
                   "it to needs; needs: s1_1) (line 16)")


# -- 5-6. gangs across sites ------------------------------------------------------------------

GANG = f"""\
name: coupled
steps:
  - name: ocean
    site: [alpha, beta]
    gang: esm
    retries: 1
    on_failure: resubmit-elsewhere
    script: "{SLURM}srun ./ocean\\n"
  - name: atmos
    site: gamma
    gang: esm
    script: "#!/bin/bash\\n#PBS -l select=2:ncpus=8\\n#PBS -l walltime=00:10:00\\n./atm\\n"
  - name: couple
    needs: [ocean, atmos]
    inputs: [{{from: ocean, path: o.nc}}, {{from: atmos, path: a.nc}}]
    script: "{SLURM}./couple\\n"
"""


async def test_a_gang_over_a_site_list_and_a_pbs_site_is_planned_per_member(tmp_path,
                                                                          monkeypatch):
    wf = load(GANG)
    assert wf.gangs() == {"esm": ["ocean", "atmos"]}
    assert wf.order() == ["ocean", "atmos", "couple"]
    fed = _fed(tmp_path, monkeypatch, extra=({"name": "gamma", "scheduler": "pbs"},))
    try:
        plan = await fed.plan_workflow(GANG)
    finally:
        await fed.close()
    steps = {s["name"]: s for s in plan["steps"]}
    assert (steps["ocean"]["gang"], steps["ocean"]["may_run_on"]) == ("esm", ["alpha", "beta"])
    assert (steps["atmos"]["gang"], steps["atmos"]["may_run_on"]) == ("esm", ["gamma"])
    assert "#PBS -l select=2:ncpus=8" in steps["atmos"]["rendered"][0]["script"]


def test_a_gang_member_in_a_list_waiting_on_another_member_is_refused_with_its_line():
    msg = refused(GANG.replace("    site: gamma\n    gang: esm\n",
                               "    site: gamma\n    gang: esm\n    needs: [ocean]\n"))
    assert msg == ("gang 'esm': step 'atmos' waits for 'ocean' of the same gang, but a gang's "
                   "steps start together (line 12)")


# -- 7-12. other tools' fields -----------------------------------------------------------------

def test_fault_an_airflow_dag_says_what_name_and_steps_are(tmp_path, capsys):
    f = tmp_path / "etl.yaml"
    f.write_text("dag_id: etl\nschedule_interval: '@daily'\ntasks:\n"
                 "  - task_id: extract\n    bash_command: ./extract.sh\n")
    cfg = tmp_path / "sites.yaml"
    cfg.write_text("sites:\n  - {name: alpha, transport: {kind: local}}\n")
    assert main(["--config", str(cfg), "workflow", "run", str(f), "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"etl.yaml: dag_id: unknown field ({TOP_FIELDS}); did you mean "
                        "'name'? (line 1)") and len(err.splitlines()) == 1
    assert refused("name: etl\nsteps:\n  - task_id: extract\n    bash_command: ./x\n") == (
        f"the workflow: steps[0].task_id: unknown field ({STEP_FIELDS}); did you mean 'name'? "
        "(line 3)")
    assert refused("name: etl\nsteps:\n  - name: a\n    bash_command: ./x\n").endswith(
        "did you mean 'script'? (line 4)")
    assert refused(step_with("upstream: [x]\n")).endswith("did you mean 'needs'? (line 5)")


@pytest.mark.parametrize("field, says", [
    ("trigger_rule: all_done", "conditions are not read (every step runs once the steps it "
                               "needs have COMPLETED); test inside the step's script instead"),
    ("depends_on_past: true", "conditions are not read"),
    ("retry_delay: 300", "a failed step is resubmitted as soon as its failure is seen "
                         "(retries: N); a delay between tries is not read"),
    ("email_on_failure: true", "mail comes from the scheduler: ask for it in the step's "
                               "script (#SBATCH --mail-type=FAIL --mail-user=ADDRESS, #PBS -m "
                               "ae -M ADDRESS); `diamond workflow status` and the workflow's "
                               "events say the rest"),
    ("on_failure_callback: notify", "mail comes from the scheduler"),
    ("stdout: a.out", "a step's output and error files are its script's own directives "
                      "(#SBATCH -o FILE -e FILE; `diamond logs JOB` shows them); list a file "
                      "under outputs to have it checked"),
    ("log: logs/a.log", "a step's output and error files are its script's own directives"),
    ("executor: slurm", "the sites and their schedulers are the sites file's (--config), not "
                        "the workflow's; a step names where it may run with site: NAME, a "
                        "list of sites, or auto"),
    ("clusterOptions: --account=abc", "a step's resources and time limit are its script's "
                                      "own directives"),
    ("priority: 50", "a job's priority is its script's own directive (#SBATCH --nice=N, #PBS "
                     "-p N, #BSUB -sp N)"),
    ("requirements: [{class: DockerRequirement}]", "CWL's requirements and hints are not "
                                                   "read"),
    ("hints: {ResourceRequirement: {coresMin: 4}}", "CWL's requirements and hints are not "
                                                    "read"),
    ("doc: align reads", "a description is not read: write it as a YAML comment (# ...)"),
    ("description: build", "a description is not read"),
    ("label: big_mem", "a description is not read"),
])
def test_fault_other_tools_step_fields_say_what_to_write_here(field, says):
    """Before: "unknown field (accepted: ...)", or for email_on_failure "did you mean
    'on_failure'?", which is not what it means."""
    key = field.split(":")[0]
    msg = refused(step_with(field + "\n"))
    assert msg.startswith(f"the workflow: steps['a'].{key}: not supported: {says}"), msg
    assert msg.endswith("(line 5)")


@pytest.mark.parametrize("text, says", [
    ("name: w\ndefault_args:\n  retries: 2\nsteps: [{name: a, script: ./a}]\n",
     "default_args: not supported: a workflow has no defaults for its steps; share fields "
     "through an x-* key holding a YAML anchor (x-common: &common {retries: 2}, then "
     "<<: *common in each step) (line 2)"),
    ("name: w\nschedule_interval: '@daily'\nsteps: [{name: a, script: ./a}]\n",
     "schedule_interval: not supported: a workflow runs once, when `diamond workflow run` is "
     "given it; to run it on a schedule, run that command from cron (or Slurm's scrontab) "
     "(line 2)"),
    ("name: w\nexecutors: [{label: midway}]\nsteps: [{name: a, script: ./a}]\n",
     "executors: not supported: the sites and their schedulers are the sites file's"),
    ("name: w\nbatch: {type: slurm, host: quartz, bank: baasic}\n"
     "steps: [{name: a, script: ./a}]\n",
     "batch: not supported: the sites and their schedulers are the sites file's"),
    ("description: {name: lulesh}\nstudy:\n  - name: make\n",
     "description: not supported: a description is not read: write it as a YAML comment (# "
     "...) (line 1)"),
    ("name: w\nglobal.parameters:\n  SIZE: {values: [10, 20]}\nsteps: [{name: a, script: x}]\n",
     "global.parameters: not supported: parameter sweeps are not expanded"),
    ("fws:\n  - fw_id: 1\nlinks:\n  1: [2]\n",
     f"fws: unknown field ({TOP_FIELDS}); did you mean 'steps'? (line 1)"),
    ("name: w\nsteps:\n  - {name: a, script: ./a}\n  - {name: b, script: ./b}\nlinks:\n"
     "  a: [b]\n",
     "links: not supported: Fireworks' links (a parent and its children) are written the "
     "other way here: each step lists the steps it waits for, needs: [PARENT] (line 5)"),
])
def test_fault_other_tools_top_level_keys_say_what_to_write_here(text, says):
    msg = refused(text)
    assert msg.startswith(f"the workflow: {says}"), msg


@pytest.mark.parametrize("field, meant", [
    ("errorStrategy: retry", "on_failure"), ("maxRetries: 3", "retries"),
    ("_fworker: cluster1", "site"), ("spec: {_tasks: [{script: echo a}]}", "script"),
    ("depends: [x]", "needs"),
])
def test_fault_other_tools_names_for_a_field_name_the_field(field, meant):
    assert refused(step_with(field + "\n")).endswith(f"did you mean {meant!r}? (line 5)")


def test_fault_a_parsl_input_named_by_its_file_names_the_step_that_writes_it():
    """Before: "an input is a mapping, e.g. {from: STEP, path: FILE}", which left the user to
    find the step."""
    msg = refused("""\
        name: parsl
        steps:
          - name: sim
            script: ./sim > out.h5
            outputs: [out.h5, log.txt]
          - name: plot
            needs: [sim]
            script: ./plot out.h5
            inputs: [out.h5]
        """)
    assert msg == ("the workflow: steps['plot'].inputs[0]: an input is a mapping naming the "
                   "step it comes from: write {from: sim, path: out.h5} (step 'sim' lists it "
                   "in its outputs), not 'out.h5' (line 9)")


def test_an_input_named_by_a_file_no_step_lists_keeps_the_general_answer():
    msg = refused("name: w\nsteps:\n  - {name: a, script: ./a}\n"
                  "  - {name: b, needs: [a], script: ./b, inputs: [x.dat]}\n")
    assert msg == ("the workflow: steps['b'].inputs[0]: an input is a mapping, e.g. {from: "
                   "STEP, path: FILE}, not 'x.dat' (line 4)")


# -- 13. on_failure as other tools say it -------------------------------------------------------

@pytest.mark.parametrize("value, says", [
    ("retry", "not 'retry': retries: N says how many times a failed step is resubmitted, and "
              "on_failure where: stop (the same site) or resubmit-elsewhere (a site not tried "
              "yet)"),
    ("ignore", "not 'ignore': a step still failing after its retries stops the workflow (the "
               "other steps are cancelled), there is no going on past it; where a failure may "
               "be ignored, have the script exit 0"),
    ("continue", "not 'continue': a step still failing after its retries stops the workflow"),
    ("null", "not empty (leave the key out for the default, stop)"),
    ("[resubmit-elsewhere, stop]", "one of them, not ['resubmit-elsewhere', 'stop']"),
])
def test_fault_on_failure_as_other_tools_write_it_says_what_it_is_here(value, says):
    msg = refused(step_with(f"retries: 2\non_failure: {value}\n"))
    assert msg.startswith(f"the workflow: steps['a'].on_failure: Input should be "
                          f"'resubmit-elsewhere' or 'stop', {says}") and msg.endswith("(line 6)")


def test_a_one_site_list_with_resubmit_elsewhere_is_valid():
    """It goes round its one site (tests/test_workflow_site_list.py: said in its reason)."""
    s = load(step_with("site: [beta]\nretries: 2\non_failure: resubmit-elsewhere\n")).step("a")
    assert (s.among, s.retries, s.on_failure) == (["beta"], 2, "resubmit-elsewhere")


# -- 14-16. YAML forms that read otherwise than they look -----------------------------------------

def test_fault_a_yaml_set_of_sites_or_needs_is_refused_as_having_no_order():
    """`!!set {alpha, beta}` was read as a list in the set's order, which changes from one
    process to the next (string hashing): the workflow's sha256, which an approval pins,
    differed between the server and the CLI."""
    assert refused(step_with("site: !!set {beta, alpha}\n")) == (
        "the workflow: steps['a'].site: site is a YAML set (!!set), which keeps no order: "
        "write a list, site: [alpha, beta] (line 5)")
    assert refused("name: w\nsteps:\n  - {name: a, script: ./a}\n"
                   "  - {name: b, script: ./b, needs: !!set {a}}\n") == (
        "the workflow: steps['b'].needs: needs is a YAML set (!!set), which keeps no order: "
        "write a list, needs: [a] (line 4)")


@pytest.mark.parametrize("size", ["1,500", "2,500,123"])
def test_fault_a_size_with_commas_in_a_flow_mapping_says_so(size):
    """`{..., size: 1,500}`: YAML ends the entry at the comma and makes `500` a key.
    Before: "steps['b'].inputs[0][500]: Keys should be strings"."""
    msg = refused("name: w\nsteps:\n  - {name: a, script: ./a}\n  - name: b\n    needs: [a]\n"
                  f"    script: ./b\n    inputs: [{{from: a, path: o.bin, size: {size}}}]\n")
    assert msg == ("the workflow: steps['b'].inputs[0]: size: a number written with commas "
                   "inside `{...}` is read by YAML as several entries (each comma ends one, and "
                   "the digits after it become keys); write it without commas, e.g. size: "
                   "1500000 or size: 1.5M (line 7)")


def test_fault_a_size_with_commas_elsewhere_says_the_number_meant():
    msg = refused("name: w\nsteps:\n  - {name: a, script: ./a}\n  - name: b\n    needs: [a]\n"
                  "    script: ./b\n    inputs:\n      - from: a\n        path: o.bin\n"
                  "        size: 1,500,000\n")
    assert msg == ("the workflow: steps['b'].inputs[0].size: size '1,500,000' is written with "
                   "commas: write the number without them, size: 1500000 (line 10)")
    twice = refused("name: w\nsteps:\n  - {name: a, script: ./a}\n  - name: b\n    needs: [a]"
                    "\n    script: ./b\n    inputs: [{from: a, path: o, size: 1,000,000}]\n")
    assert twice.endswith("key 0 is given twice (first on line 7); give it once (a number "
                          "written with commas inside `{...}` is read as several entries, its "
                          "digits after each comma as keys: write it without commas)")


# -- 17. paths that are not paths of the step's directory -----------------------------------------

@pytest.mark.parametrize("path, says", [
    ("s3://bucket/x.h5", "is a URL, but a path names a file in the step's working directory "
                         "(an input: one its upstream step wrote, copied there); move remote "
                         "data in the step's script (curl, aws s3 cp, globus transfer...)"),
    ("file:///scratch/x.h5", "is a URL"),
    ("alpha:/scratch/x.h5", "names a file on a host (HOST:/PATH), but a path is relative to "
                            "the step's working directory (an input comes from the step named "
                            "by `from`); copy other files with `diamond transfer` or in the "
                            "step's script"),
    ("results\\\\x.h5", "has a backslash, which is part of a file's name on the sites (they "
                        "separate directories with /): write 'results/x.h5'"),
    ("C:\\\\data\\\\x.h5", "has a backslash, which is part of a file's name on the sites (they "
                           "separate directories with /): write a path relative to the step's "
                           "working directory"),
])
def test_fault_urls_hosts_and_windows_paths_as_inputs_are_refused(path, says):
    """Each was kept as a relative file name (`s3:/bucket/x.h5` under the step's directory),
    which no step writes: the step failed when it ran, on the missing input."""
    msg = refused("name: w\nsteps:\n  - {name: a, script: ./a}\n"
                  f"  - {{name: b, needs: [a], script: ./b, inputs: [{{from: a, path: \"{path}"
                  "\"}]}\n")
    assert msg.startswith(f"the workflow: steps['b'].inputs[0].path: path '{path}' {says}")
    assert msg.endswith("(line 4)")


def test_fault_a_url_as_an_output_is_refused_too_and_odd_local_names_stay():
    assert "output 'https://example.org/x.h5' is a URL" in refused(
        step_with("outputs: ['https://example.org/x.h5']\n"))
    s = load(step_with("outputs: ['x y.txt', données.h5, \"it's.txt\", a:b.txt]\n")).step("a")
    assert s.outputs == ["x y.txt", "données.h5", "it's.txt", "a:b.txt"]


# -- 18-19. sites and needs written loosely ------------------------------------------------------

@pytest.mark.parametrize("site, says", [
    ("any", "step 'a': unknown site 'any' (did you mean auto? known: alpha, beta, gamma, or "
            "auto) (line 5)"),
    ("'*'", "step 'a': unknown site '*' (did you mean auto?"),
    ("alpha beta", "step 'a': unknown site 'alpha beta' (known: alpha, beta, gamma, or auto); "
                   "a list of sites is written [alpha, beta] (line 5)"),
    ("alpha|gamma", "a list of sites is written [alpha, gamma] (line 5)"),
    ("''", "the workflow: steps['a'].site: site is empty: name a site, a list of sites ([alpha, "
           "beta]), or write auto (placement chooses among all sites) (line 5)"),
    ("['']", "the workflow: steps['a'].site: site[0] is empty: a list of sites holds site "
             "names ([alpha, beta]) (line 5)"),
])
def test_fault_a_site_written_loosely_says_what_was_meant(site, says):
    """Before: "unknown site 'any' (known: ...)", and `['']` "unknown site '' in its list of
    sites []"."""
    assert says in refused(step_with(f"site: {site}\n"))


@pytest.mark.parametrize("need", ['"prep "', "ｐｒｅｐ"])
def test_fault_a_need_with_a_blank_or_full_width_letters_names_the_step(need):
    msg = refused(f"name: w\nsteps:\n  - {{name: prep, script: ./a}}\n"
                  f"  - {{name: b, script: ./b, needs: [{need}]}}\n")
    assert "(did you mean 'prep'? steps: prep, b) (line 4)" in msg


# -- 20. a long name, anchors and a BOM, run through the command line --------------------------

def test_a_63_character_step_name_in_needs_a_gang_and_an_anchor_runs_validation(tmp_path,
                                                                               capsys):
    long = "preprocess_" + "x" * 52
    assert len(long) == 63
    text = ("\ufeff# written on Windows\r\nname: long\r\nx-s: &s {site: [alpha, beta]}\r\n"
            f"steps:\r\n  - {{<<: *s, name: {long}, gang: g, script: ./a}}\r\n"
            f"  - {{<<: *s, name: b, gang: g, script: ./b}}\r\n"
            f"  - {{name: c, needs: [{long}, b], script: ./c}}\r\n")
    wf = load_workflow(text, sites=SITES)
    assert wf.order() == [long, "b", "c"] and wf.gangs() == {"g": [long, "b"]}
    f = tmp_path / "wf.yaml"
    f.write_bytes(text.replace("needs: [" + long, "needs: [" + long + "x").encode())
    cfg = tmp_path / "sites.yaml"
    cfg.write_text("sites:\n  - {name: alpha, transport: {kind: local}}\n"
                   "  - {name: beta, transport: {kind: local}}\n")
    assert main(["--config", str(cfg), "workflow", "run", str(f), "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert f"step 'c' needs unknown step '{long}x' (did you mean '{long}'?" in err
    assert err.endswith("(line 7)") and len(err.splitlines()) == 1


def test_a_step_whose_name_a_file_system_would_not_take_names_the_character(tmp_path):
    assert refused("name: w\nsteps:\n  - {name: 準備, script: ./a}\n") == (
        "the workflow: steps['準備'].name: '準備' is not a valid name (letters, digits, _ . -, "
        "ASCII only, starting with a letter or digit, at most 63 characters; '準' is not one of "
        "them) (line 3)")


def test_fault_the_workflows_file_path_names_a_maestro_refusal(tmp_path: Path):
    f = tmp_path / "maestro.yaml"
    f.write_text("description: {name: lulesh}\nstudy: []\n")
    with pytest.raises(BadInput) as e:
        load_workflow(f, sites=SITES)
    assert str(e.value).startswith(f"{f}: description: not supported")


# -- 21. a workflow given as a pipe ----------------------------------------------------------------

def _fifo_writer(fifo: Path, text: str) -> threading.Thread:
    def write() -> None:
        with fifo.open("w") as f:  # opens when the reader does
            f.write(text)

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


def test_fault_a_fifo_nobody_writes_to_is_refused_not_waited_on_for_ever(tmp_path, monkeypatch):
    """`diamond workflow run pipe` on a FIFO without a writer blocked in open() for ever
    (the command line, or the server for a path it was given). Now it waits PIPE_SILENCE_S."""
    monkeypatch.setattr(transport_base, "PIPE_SILENCE_S", 0.2)
    fifo = tmp_path / "wf.yaml"
    os.mkfifo(fifo)
    with pytest.raises(BadInput) as e:
        load_workflow(fifo, sites=SITES)
    assert str(e.value) == (f"{fifo}: a pipe that nothing wrote to for 0.2 s (no writer); "
                            "give the workflow's YAML file, or a pipe its writer fills")


def test_a_pipe_its_writer_fills_is_read_whole(tmp_path):
    fifo = tmp_path / "wf.yaml"
    os.mkfifo(fifo)
    text = "name: gen\nsteps:\n" + "".join(f"  - {{name: s{i}, script: ./s}}\n"
                                           for i in range(3000 // 30))
    writer = _fifo_writer(fifo, text)
    wf = load_workflow(fifo, sites=SITES)
    writer.join(10)
    assert len(wf.steps) == 100 and wf.name == "gen"


def test_fault_workflow_run_reads_a_pipe_once(tmp_path, monkeypatch, capsys):
    """`diamond workflow run <(./make_workflow.py)`: the command read the file to check it,
    then again to run it, and the pipe was empty the second time (it waited for a writer
    for ever). Now the workflow read once is the one run (the run is recorded here: the
    facade's run_workflow, given the checked workflow, names it)."""
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.workflow.model import StepView, WorkflowView

    monkeypatch.setattr(transport_base, "PIPE_SILENCE_S", 0.5)
    ran: list[str] = []

    async def run_workflow(self, source, **kw):
        wf = self.load_workflow(source)
        ran.append(wf.name)
        return WorkflowView(id="wf-1", name=wf.name, state="PENDING",
                            steps=[StepView(name=s.name) for s in wf.steps])

    monkeypatch.setattr(Federation, "run_workflow", run_workflow)
    fifo = tmp_path / "wf.yaml"
    os.mkfifo(fifo)
    cfg = tmp_path / "sites.yaml"
    cfg.write_text("sites:\n  - {name: alpha, transport: {kind: local}}\n")
    writer = _fifo_writer(fifo, "name: piped\nsteps:\n  - {name: a, script: ./a}\n")
    code = main(["--config", str(cfg), "workflow", "run", str(fifo), "--json"])
    writer.join(10)
    out, err = capsys.readouterr()
    assert (code, ran) == (0, ["piped"]), err
    assert '"name": "piped"' in out


# -- 22. a step or run named by its day -----------------------------------------------------------

@pytest.mark.parametrize("text, where", [
    ("name: 2024-01-01\nsteps: [{name: a, script: ./a}]\n", "name"),
    ("name: w\nsteps:\n  - {name: 2024-01-01, script: ./a}\n", "steps[0].name"),
    ("name: w\nsteps:\n  - {name: a, script: ./a}\n  - {name: b, script: ./b, "
     "needs: [2024-01-01]}\n", "steps['b'].needs"),
])
def test_fault_a_name_yaml_reads_as_a_date_says_to_quote_it(text, where):
    """Before: "Input should be a valid string", not saying YAML made a date of it."""
    assert refused(text).startswith(f"the workflow: {where}: 2024-01-01 is read by YAML as a "
                                    "date, not text; quote it as written, e.g. '2024-01-01'")
    if "needs" not in where:  # quoted, it is a name
        assert load(text.replace("2024-01-01", "'2024-01-01'")).name in ("2024-01-01", "w")


# -- 23. a gang over a list of sites, driven by the engine ---------------------------------

ENGINE_GANG = """\
name: coupled
steps:
  - name: ocean
    site: [alpha, torque]
    gang: esm
    retries: 1
    on_failure: resubmit-elsewhere
    script: "#!/bin/bash\\necho ocean\\n"
  - name: atmos
    site: gamma
    gang: esm
    script: "#!/bin/bash\\necho atmos\\n"
"""


@pytest.fixture
async def filling(tmp_path):
    from test_workflow_gate import Filling, engine_with

    async for pair in engine_with(Filling, tmp_path):
        yield pair


async def test_a_gang_member_given_a_list_is_placed_and_retried_within_it(filling):
    """gamma would end ocean first but is not in its list: ocean goes to alpha, atmos to
    its gamma, both submitted held (a gang starts together). When ocean fails, the gang
    starts again: ocean on torque (its list's other site: resubmit-elsewhere), atmos on
    gamma again."""
    from diamond_jupyter.model import JobState

    eng, ops = filling
    ops.ends = {"gamma": 1.0, "alpha": 10.0, "torque": 20.0}
    wid = await eng.run(load_workflow(ENGINE_GANG, sites=["alpha", "gamma", "torque"]))
    assert [s["site"] for s in ops.of("ocean")] == ["alpha"]
    assert [s["site"] for s in ops.of("atmos")] == ["gamma"]
    assert all(s["hold"] for s in ops.of("ocean") + ops.of("atmos"))  # a gang starts together
    job = ops.store.job_by_token(ops.of("ocean")[-1]["token"])
    ops.store.apply_state(job.id, JobState.FAILED, exit_code=1)
    await eng.advance(wid)
    assert [s["site"] for s in ops.of("ocean")] == ["alpha", "torque"]
    assert [s["site"] for s in ops.of("atmos")] == ["gamma", "gamma"]
    assert "gamma" not in {s["site"] for s in ops.of("ocean")}
