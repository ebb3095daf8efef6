"""Workflow files as scientists write them, second sweep: scripts of other schedulers on a
Slurm site, lists written as one value, inputs as globs, directories and renamed copies,
wide and diamond-shaped graphs, gangs on one site or half pinned, misspelt policies, paths
outside the step, odd step names, anchors for scripts, a workflow for another sites file,
tabs, Windows line ends and a BOM. Each file is read with the meaning it says, or refused
with one line naming the file (at the CLI), the field, its line and what is accepted (no
test bed: no site is contacted)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import sweep_helpers
from sweep_helpers import SITES, load, refused

from diamond_jupyter.cli import main
from diamond_jupyter.config import SiteConfig
from diamond_jupyter.sites import Site
from diamond_jupyter.workflow.model import Workflow, load_workflow


def prepared_body(wf: Workflow, step: str, scheduler: str = "slurm") -> tuple[str, list[str]]:
    """The step's body as a site of `scheduler` submits it (after the wrapper), and the
    notes said about it."""
    site = Site(SiteConfig(name="alpha", scheduler=scheduler, transport={"kind": "local"}))
    site._home = "/home/u"
    spec = site.prepare(wf.step(step).spec(), "tok1")
    body = spec.script.split("__dmd_say start 0\n", 1)[-1]
    return body, list(spec.metadata.get("body_notes") or [])


# -- 1. scripts of other schedulers on a Slurm site ------------------------------------------

OTHER_DIALECTS = """\
    name: dialects
    steps:
      - name: pbs
        site: alpha
        script: |
          #!/bin/bash
          #PBS -N mesh
          #PBS -l select=2:ncpus=8:mpiprocs=8
          #PBS -l walltime=02:00:00
          #PBS -q workq
          mpiexec -n $PBS_NP ./mesh > mesh.h5
          echo "done in $PBS_JOBID"
      - name: lsf
        site: alpha
        needs: [pbs]
        inputs: [{from: pbs, path: mesh.h5}]
        script: |
          #!/bin/bash
          #BSUB -n 32
          #BSUB -W 90
          #BSUB -q normal
          #BSUB -R "span[ptile=16]"
          mpirun ./solve mesh.h5 > run.$LSB_JOBID.log
      - name: sge
        site: alpha
        needs: [lsf]
        script: |
          #!/bin/bash
          #$ -pe smp 4
          #$ -l h_rt=01:00:00
          #$ -l h_vmem=2G
          #$ -cwd
          ./post --threads $NSLOTS
      - name: flux
        site: alpha
        needs: [sge]
        script: |
          #!/bin/bash
          #flux: -N 2
          #flux: -n 8
          #flux: -t 45m
          flux run -n 8 ./plot
    """


def test_pbs_lsf_grid_engine_and_flux_steps_on_a_slurm_site_ask_what_they_say():
    wf = load(OTHER_DIALECTS)
    assert wf.order() == ["pbs", "lsf", "sge", "flux"]
    got = {n: wf.step(n).spec() for n in wf.order()}
    r = got["pbs"].resources
    assert (r.nodes, r.tasks_per_node, r.walltime_s, got["pbs"].queue) == (2, 8, 7200, "workq")
    r = got["lsf"].resources
    assert (r.tasks, r.tasks_per_node, r.walltime_s, got["lsf"].queue) == (32, 16, 5400,
                                                                           "normal")
    r = got["sge"].resources
    assert (r.cpus_per_task, r.memory_per_cpu_mb, r.walltime_s) == (4, 2048, 3600)
    r = got["flux"].resources
    assert (r.nodes, r.tasks, r.walltime_s) == (2, 8, 2700)
    assert {n: s.source_dialect for n, s in got.items()} == {
        "pbs": "pbs", "lsf": "lsf", "sge": "sge", "flux": "flux"}


@pytest.mark.parametrize("step,has,lacks", [
    ("pbs", ["mpiexec -n $SLURM_NTASKS ./mesh", 'done in $SLURM_JOB_ID'], ["$PBS_"]),
    ("lsf", ["run.$SLURM_JOB_ID.log"], ["$LSB_JOBID"]),
    ("sge", ["--threads $SLURM_CPUS_PER_TASK"], ["$NSLOTS"]),
    ("flux", ["srun -n 8 ./plot"], ["flux run"]),
])
def test_a_step_of_another_scheduler_gets_the_slurm_sites_variables_and_launcher(step, has,
                                                                                 lacks):
    """Before: the body ran as written on Slurm: `mpiexec -n $PBS_NP` was `mpiexec -n`,
    `$LSB_JOBID` empty (every run wrote `run..log`), `flux run` not found."""
    body, _ = prepared_body(load(OTHER_DIALECTS), step)
    for text in has:
        assert text in body, body
    for text in lacks:
        assert text not in body, body


def test_a_body_line_with_no_slurm_equivalent_is_kept_and_reported():
    wf = load("""\
        name: w
        steps:
          - name: a
            script: |
              #!/bin/bash
              #PBS -l select=1:ncpus=4
              echo $PBS_O_HOST
        """)
    body, notes = prepared_body(wf, "a")
    assert "echo $PBS_O_HOST" in body
    assert notes and "$PBS_O_HOST" in notes[0] and "run on alpha" in notes[0]
    same, none = prepared_body(wf, "a", scheduler="pbs")  # on its own scheduler: as written
    assert "echo $PBS_O_HOST" in same and none == []


def test_a_script_with_two_schedulers_directives_says_to_name_its_dialect():
    text = """\
        name: w
        steps:
          - name: a
            script: |
              #!/bin/bash
              #SBATCH -N 1
              #PBS -l walltime=1:00:00
              ./a
        """
    msg = refused(text)
    assert msg == ("step 'a': ambiguous dialect: slurm and pbs both have 1 directive lines; "
                   "name it with the step's `dialect:` (slurm, pbs, lsf, flux, sge) (line 4)")
    wf = load(text.replace("  script: |", "  dialect: pbs\n            script: |"))
    assert wf.step("a").spec().resources.walltime_s == 3600


@pytest.mark.parametrize("written,dialect,walltime", [
    ("PBSPro", "pbs", 3600), ("torque", "pbs", 3600), ("Grid Engine", "sge", 600),
    # sbatch reads a script's #PBS lines after its #SBATCH ones (unless --ignore-pbs)
    ("UGE", "sge", 600), ("SLURM", "slurm", 3600), ("pbs", "pbs", 3600),
])
def test_a_steps_dialect_takes_the_names_centers_give_schedulers(written, dialect, walltime):
    """Before: `dialect: PBSPro` (or torque, Grid Engine) was an unknown dialect, though the
    sites file's `scheduler:` reads it."""
    wf = load(f"name: w\nsteps:\n  - name: a\n    dialect: {written}\n    script: |\n"
              "      #PBS -l walltime=1:00:00\n      #$ -l h_rt=600\n      #SBATCH -t 5\n"
              "      ./a\n")
    assert wf.step("a").dialect == dialect
    assert wf.step("a").spec().resources.walltime_s == walltime


def test_an_unknown_dialect_names_the_field_its_line_and_the_one_meant():
    msg = refused("name: w\nsteps:\n  - {name: a, script: x, dialect: slurmm}\n")
    assert msg == ("the workflow: steps['a'].dialect: unknown dialect 'slurmm' (accepted: "
                   "slurm, pbs, lsf, flux, sge, or the names centers use: PBSPro, OpenPBS, "
                   "torque, Grid Engine, UGE...); did you mean 'slurm'? (line 3)")


# -- 2. lists, policies and names as people write them ----------------------------------------

@pytest.mark.parametrize("needs,hint", [
    ("'a, b'", "[a, b], not 'a, b'"),
    ("a b", "[a, b], not 'a b'"),
    ("a", "[a], not 'a'"),
    ("'a;b'", "[prep], not 'a;b'"),
])
def test_needs_as_one_value_is_refused_with_the_list_it_meant(needs, hint):
    """Before: `needs: a, b` was told to write `needs: [prep]`."""
    msg = refused(f"name: w\nsteps:\n  - {{name: a, script: x}}\n  - {{name: b, script: x}}\n"
                  f"  - name: c\n    script: x\n    needs: {needs}\n")
    assert msg == f"the workflow: steps['c'].needs: needs is a list: write needs: {hint} (line 7)"


def test_the_same_upstream_named_twice_in_needs_is_refused():
    """Once waited for once; now refused, naming the step and both places: a name given
    twice is most often a slip for another step (`needs: [a, a]` for [a, b])."""
    assert refused("name: w\nsteps:\n  - {name: a, script: x}\n  - {name: b, script: x}\n"
                   "  - {name: c, script: x, needs: [a, b, a]}\n") == (
        "step 'c' needs 'a' twice (needs[0] and needs[2]): list each step "
        "once (line 5)")
    wf = load("name: w\nsteps:\n  - {name: a, script: x}\n  - {name: c, script: x, "
              "needs: [a]}\n")
    assert wf.order() == ["a", "c"] and wf.upstream("c") == {"a"}


@pytest.mark.parametrize("policy,meant", [
    ("resubmit_elsewhere", "resubmit-elsewhere"), ("Resubmit-Elsewhere", "resubmit-elsewhere"),
    ("resubmit elsewhere", "resubmit-elsewhere"), ("Stop", "stop"), ("stopp", "stop"),
    ("resubmit-elswhere", "resubmit-elsewhere"), ("quit", None),
])
def test_a_misspelt_failure_policy_names_the_policy_meant(policy, meant):
    """Before: "Input should be 'resubmit-elsewhere' or 'stop'" without the one meant."""
    msg = refused(f"name: w\nsteps:\n  - name: a\n    script: x\n    retries: 2\n"
                  f"    on_failure: {policy}\n")
    assert msg.startswith("the workflow: steps['a'].on_failure: Input should be "
                          f"'resubmit-elsewhere' or 'stop', not {policy!r}")
    assert msg.endswith(f"; did you mean {meant!r}? (line 6)" if meant else
                         f"not {policy!r} (line 6)")


def test_retries_0_with_resubmit_elsewhere_is_refused_and_1_is_not():
    text = "name: w\nsteps:\n  - {name: a, script: x, retries: 0, " \
           "on_failure: resubmit-elsewhere}\n"
    assert refused(text).startswith("step 'a': on_failure: resubmit-elsewhere needs retries: "
                                    "1 or more")
    assert load(text.replace("retries: 0", "retries: 1")).step("a").retries == 1


def test_a_script_written_as_a_list_of_lines_says_how_to_write_it():
    """Before: "Input should be a valid string"."""
    msg = refused("name: w\nsteps:\n  - name: a\n    script:\n      - module load x\n"
                  "      - ./a\n")
    assert msg == ("the workflow: steps['a'].script: the script is one text, not a list of "
                   "lines: write `script: |` and the script's lines under it, indented "
                   "(line 5)")


@pytest.mark.parametrize("name,why", [
    ("pre process", "' ' is not one of them (use - or _ for a blank)"),
    ("größe", "'ö' is not one of them"),
    ("step/1", "'/' is not one of them"),
])
def test_a_step_name_with_blanks_or_other_letters_names_the_character(name, why):
    msg = refused(f"name: w\nsteps:\n  - {{name: {name}, script: x}}\n")
    assert msg == (f"the workflow: steps[{name!r}].name: {name!r} is not a valid name "
                   "(letters, digits, _ . -, ASCII only, starting with a letter or digit, at "
                   f"most 63 characters; {why}) (line 3)")


def test_a_200_character_step_name_is_refused_without_repeating_it_whole():
    """Before: the name was shown twice, 400 characters in one line."""
    name = "calibrate_" * 20
    msg = refused(f"name: w\nsteps:\n  - {{name: {name}, script: x}}\n")
    assert msg == (f"the workflow: steps[0].name: {name[:40]!r}... (200 characters) is not a "
                   "valid name (letters, digits, _ . -, ASCII only, starting with a letter or "
                   "digit, at most 63 characters; it has 200 characters) (line 3)")


def test_step_names_with_dots_and_a_63_character_one_are_names():
    long = "s" * 63
    wf = load(f"name: w.v2\nsteps:\n  - {{name: prep.v1.2, script: x}}\n"
              f"  - {{name: {long}, script: x, needs: [prep.v1.2]}}\n")
    assert wf.order() == ["prep.v1.2", long]


# -- 3. inputs and outputs ---------------------------------------------------------------------

def test_inputs_as_a_directory_renamed_and_the_same_file_from_two_steps():
    wf = load("""\
        name: w
        steps:
          - {name: a, script: ./a, outputs: [out.bin, data/]}
          - {name: b, script: ./b, outputs: [out.bin]}
          - name: c
            needs: [a, b]
            inputs:
              - {from: a, path: out.bin, as: a.bin}
              - {from: b, path: out.bin, as: b.bin}
              - {from: a, path: data/, as: in/}
              - {from: a, path: out.bin, as: copies/}
            script: ./c a.bin b.bin in
        """)
    got = [(i.from_, i.path, i.dest, i.is_dir) for i in wf.step("c").inputs]
    assert got == [("a", "out.bin", "a.bin", False), ("b", "out.bin", "b.bin", False),
                   ("a", "data/", "in/", True), ("a", "out.bin", "copies/out.bin", False)]


def test_the_same_file_from_two_steps_without_renaming_is_refused():
    msg = refused("name: w\nsteps:\n  - {name: a, script: x}\n  - {name: b, script: x}\n"
                  "  - name: c\n    needs: [a, b]\n    script: x\n    inputs:\n"
                  "      - {from: a, path: out.bin}\n      - {from: b, path: ./out.bin}\n")
    assert msg == ("step 'c': two inputs arrive as 'out.bin' (inputs[0], a's out.bin, and "
                   "inputs[1], b's ./out.bin); name one with `as:` (line 10)")


@pytest.mark.parametrize("path,char", [("'*.csv'", "*"), ("'run-?.log'", "?"),
                                       ("'part[0-9].h5'", "[")])
def test_an_input_glob_says_to_name_each_file(path, char):
    msg = refused(f"name: w\nsteps:\n  - {{name: a, script: x}}\n  - name: b\n    needs: [a]\n"
                  f"    script: x\n    inputs: [{{from: a, path: {path}}}]\n")
    assert "steps['b'].inputs[0].path: path " in msg
    assert f"has the glob character {char!r}; files are copied by their exact names" in msg
    assert msg.endswith("(line 7)")


@pytest.mark.parametrize("output", ["/scratch/u/out.h5", "~/out.h5", "'~alice/out.h5'",
                                    "../out.h5"])
def test_outputs_naming_absolute_home_or_parent_paths_are_refused(output):
    msg = refused(f"name: w\nsteps:\n  - name: a\n    script: x\n    outputs: [ok.txt, "
                  f"{output}]\n")
    assert msg.startswith("the workflow: steps['a'].outputs: output ")
    assert "must be relative to the step's working directory" in msg or "no '..'" in msg
    assert msg.endswith("(line 5)")


def test_an_input_from_further_up_without_a_direct_need():
    wf = load("name: w\nsteps:\n  - {name: a, script: x}\n  - {name: b, script: x, needs: [a]}"
              "\n  - {name: c, script: x, needs: [b], inputs: [{from: a, path: o}]}\n")
    assert wf.step("c").needs == ["b"] and wf.upstream("c") == {"a", "b"}


# -- 4. shapes ---------------------------------------------------------------------------------

def test_a_step_that_needs_itself_is_refused_with_its_line():
    assert refused("name: w\nsteps:\n  - {name: a, script: x}\n  - name: b\n    script: x\n"
                   "    needs: [a, b]\n") == "step 'b' needs itself (a cycle) (line 6)"


def test_a_diamond_gathers_both_branches_files():
    wf = load("""\
        name: diamond
        steps:
          - {name: top, site: alpha, script: ./top, outputs: [mesh]}
          - {name: left, site: beta, needs: [top], script: ./l, inputs: [{from: top, path: mesh}]}
          - {name: right, site: gamma, needs: [top], script: ./r,
             inputs: [{from: top, path: mesh}]}
          - name: bottom
            needs: [left, right]
            inputs: [{from: left, path: r.csv, as: l.csv}, {from: right, path: r.csv, as: r.csv},
                     {from: top, path: mesh}]
            script: ./b
        """)
    assert wf.order() == ["top", "left", "right", "bottom"]
    assert wf.upstream("bottom") == {"top", "left", "right"}
    assert wf.downstream("top") == {"left", "right", "bottom"}


@pytest.mark.timeout(60)  # a hang guard, not a speed target
def test_a_wide_workflow_of_100_steps_between_a_split_and_a_merge():
    body = ["name: wide", "steps:", "  - {name: split, script: ./split}"]
    body += [f"  - {{name: w{i:03d}, needs: [split], script: ./w {i},"
             f" inputs: [{{from: split, path: part{i}.dat}}]}}" for i in range(100)]
    body.append("  - name: merge\n    needs: [" + ", ".join(f"w{i:03d}" for i in range(100))
                + "]\n    script: ./merge\n    inputs:\n" + "".join(
                    f"      - {{from: w{i:03d}, path: out.dat, as: out/{i}.dat}}\n"
                    for i in range(100)))
    wf = load("\n".join(body) + "\n")
    order = wf.order()
    assert order[0] == "split" and order[-1] == "merge" and len(order) == 102
    assert len(wf.upstream("merge")) == 101 and len(wf.downstream("split")) == 101
    assert len({i.dest for i in wf.step("merge").inputs}) == 100


def test_a_gang_on_one_site_and_a_gang_of_pinned_and_auto_members():
    wf = load("""\
        name: gangs
        steps:
          - {name: server, site: alpha, gang: g1, script: ./server}
          - {name: client, site: alpha, gang: g1, script: ./client}
          - {name: sim, site: beta, gang: g2, script: ./sim}
          - {name: viz, gang: g2, script: ./viz}
          - {name: after, needs: [server, client, sim, viz], script: ./after}
        """)
    assert wf.gangs() == {"g1": ["server", "client"], "g2": ["sim", "viz"]}
    assert [wf.step(n).site for n in ("server", "client", "sim", "viz")] == \
        ["alpha", "alpha", "beta", "auto"]


# -- 5. sites --------------------------------------------------------------------------------------

@pytest.mark.parametrize("site,meant", [("Alpha", "alpha"), ("AUTO", "auto"),
                                        ("gama", "gamma"), ("delta", None)])
def test_an_unknown_site_names_the_site_meant(site, meant):
    """Before: `site: Alpha` listed the known sites without saying which was meant."""
    msg = refused(f"name: w\nsteps:\n  - {{name: a, script: x}}\n  - {{name: b, script: x, "
                  f"site: {site}}}\n")
    hint = f"did you mean {meant}? " if meant else ""
    assert msg == (f"step 'b': unknown site {site!r} ({hint}known: alpha, beta, gamma, or "
                   "auto) (line 4)")


def test_a_workflow_whose_every_step_is_pinned_to_sites_this_file_lacks_says_so():
    msg = refused("name: w\nsteps:\n  - {name: a, site: perlmutter, script: x}\n"
                  "  - {name: b, site: frontier, script: x, needs: [a]}\n")
    assert msg == ("step 'a': unknown site 'perlmutter' (known: alpha, beta, gamma, or auto); "
                   "no step names a site of this sites file: was the workflow written for "
                   "another one (--config)? (line 3)")


# -- 6. anchors, tabs, line ends -------------------------------------------------------------

def test_one_script_reused_through_anchors_in_a_step_and_in_an_x_key():
    wf = load("""\
        x-job: &job |
          #!/bin/bash
          #SBATCH -N 1
          #SBATCH -t 15
          ./run
        name: w
        steps:
          - name: a
            script: &again |
              #SBATCH -n 4
              ./a
          - {name: b, needs: [a], script: *again}
          - {name: c, needs: [b], script: *job}
          - {name: d, needs: [b], script: *job, site: beta}
        """)
    assert wf.step("b").script == wf.step("a").script
    assert wf.step("b").spec().resources.tasks == 4
    assert [wf.step(n).spec().resources.walltime_s for n in "cd"] == [900, 900]


def test_a_tab_between_a_key_and_its_value_says_to_put_a_space_there():
    """Before: "indent with spaces", about a tab that was not indentation."""
    msg = refused("name:\tw\nsteps:\n  - {name: a, script: x}\n")
    assert msg == ("the workflow: not valid YAML at line 1, column 6: found character '\\t' "
                   "that cannot start any token (a tab after other text on the line, e.g. "
                   "between a key and its value: put a space there instead)")
    msg = refused("name: w\nsteps:\n\t- {name: a, script: x}\n")
    assert msg.endswith("(indent with spaces: YAML does not allow tabs for indentation)")


def test_windows_line_ends_and_a_bom_in_text_from_the_notebook_or_rest():
    text = "\ufeffname: w\r\nsteps:\r\n  - name: a\r\n    script: |\r\n      #SBATCH -N 2\r\n" \
           "      srun ./a\r\n"
    wf = load_workflow(text, sites=SITES)
    assert wf.step("a").script == "#SBATCH -N 2\nsrun ./a\n"
    assert wf.step("a").spec().resources.nodes == 2


# -- 7. the command line names the file for every problem ----------------------------------------

cfg = sweep_helpers.one_unreachable_site


@pytest.mark.parametrize("text,want", [
    ("name: w\nsteps:\n  - {name: a, needs: [b], script: x}\n  - {name: b, needs: [a], "
     "script: x}\n", "workflow 'w' has a cycle: "),
    ("name: w\nsteps:\n  - {name: a, needs: [z], script: x}\n",
     "step 'a' needs unknown step 'z' (steps: a) (line 3)"),
    ("name: w\nsteps:\n  - {name: a, script: x, site: Alpha}\n",
     "step 'a': unknown site 'Alpha' (did you mean alpha? known: alpha, or auto) (line 3)"),
    ("name: w\nsteps:\n  - {name: a, script: x}\n  - {name: b, script: x}\n"
     "  - {name: c, script: x, needs: [a, b], inputs: [{from: a, path: o}, {from: b, "
     "path: o}]}\n", "step 'c': two inputs arrive as 'o' (inputs[0], a's o, and inputs[1], "
     "b's o); name one with `as:` (line 5)"),
])
def test_diamond_workflow_run_names_the_file_for_a_problem_between_steps(cfg, tmp_path, capsys,
                                                                         text, want):
    """Before: `diamond: step 'a' needs unknown step 'z'`, the file unnamed (a field's
    problem named it)."""
    f = tmp_path / "w.yaml"
    f.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    assert main(["workflow", "run", str(f), "--config", str(cfg), "--json"]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"diamond: {f}: {want}") and err.count("\n") == 1, err
    assert json.loads(out)["reason"] == "bad-input"


def test_a_windows_file_with_a_bom_runs_through_the_parser_as_written(tmp_path):
    p = tmp_path / "w.yaml"
    p.write_bytes(b"\xef\xbb\xbf" + textwrap.dedent(OTHER_DIALECTS).replace("\n", "\r\n")
                  .encode())
    wf = load_workflow(Path(p), sites=SITES)
    assert wf.order() == ["pbs", "lsf", "sge", "flux"]
    assert "\r" not in wf.step("pbs").script


def test_a_translated_body_moved_to_a_site_of_its_own_scheduler_is_translated_back():
    """A PBS job prepared for Slurm (its body now says $SLURM_JOB_ID), then moved to a PBS
    site (resubmit-elsewhere), gets $PBS_JOBID back; what PBS has no word for is said."""
    wf = load(OTHER_DIALECTS)
    slurm = Site(SiteConfig(name="alpha", transport={"kind": "local"}))
    slurm._home = "/home/u"
    pbs = Site(SiteConfig(name="pbs1", scheduler="pbs", transport={"kind": "local"}))
    pbs._home = "/home/u"
    first = slurm.prepare(wf.step("pbs").spec(), "tok1")
    moved = first.model_copy(update={"script": first.script.split("__dmd_say start 0\n")[-1]})
    again = pbs.prepare(moved, "tok2")
    assert 'echo "done in $PBS_JOBID"' in again.script
    assert any("$SLURM_NTASKS (task count) has no pbs equivalent" in n
               for n in again.metadata["body_notes"])


@pytest.mark.parametrize("item,what,line", [
    ("- prep", "'prep'", 4), ("-", "an empty item (a `-` with nothing after it)", 4),
])
def test_a_step_written_as_one_word_or_left_empty_says_what_a_step_is(item, what, line):
    """Before: "Input should be a valid dictionary or instance of Step"."""
    msg = refused(f"name: w\nsteps:\n  - {{name: a, script: x}}\n  {item}\n")
    assert msg == ("the workflow: steps[1]: a step is a mapping of its fields, e.g. `- name: "
                   f"prep` with `script: ...` under it, not {what} (line {line})")


@pytest.mark.parametrize("field,text,hint,line", [
    ("needs", "needs: {a: done}", "needs: [a], not a mapping", 6),
    ("outputs", "outputs:\n      out.bin: results", "outputs: [out.bin], not a mapping", 7),
])
def test_a_list_field_written_as_a_mapping_says_the_list_meant(field, text, hint, line):
    """Before: "Input should be a valid list"."""
    msg = refused(f"name: w\nsteps:\n  - {{name: a, script: x}}\n  - name: b\n    script: x\n"
                  f"    {text}\n")
    assert msg == (f"the workflow: steps['b'].{field}: {field} is a list: write {hint} "
                   f"(line {line})")


def test_on_failure_no_read_by_yaml_as_false_says_so():
    msg = refused("name: w\nsteps:\n  - {name: a, script: x, retries: 1, on_failure: no}\n")
    assert msg == ("the workflow: steps['a'].on_failure: Input should be 'resubmit-elsewhere' "
                   "or 'stop', not False (YAML reads an unquoted no/off/yes/on as a truth "
                   "value) (line 3)")
