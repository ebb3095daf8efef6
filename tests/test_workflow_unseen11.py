"""Workflow files, eleventh sweep: what a scientist would write. A fan-out across two sites
with a job-array step and a fan-in placed `auto`, and an array over every site's MaxArraySize;
inputs passed between steps, on one site and across two, under names holding blanks, quotes
and `$(...)` (the step's own script is run by bash here: each file arrives under its exact
name, nothing in a name runs); a step whose script runs nothing; dependency kinds written into
`needs` (`afterany:prep`); a step's anchor aliased in `needs`; empty and null names, names in
other alphabets or holding shell metacharacters; sites in full-width letters, with their
partition (`alpha:gpu`) or as a login; `steps:` as one word, `queue_ahead: maybe`; a cycle
inside a diamond, a step needing itself through an anchor, duplicate names through an alias;
2,000 steps; steps mixing `auto`, lists of sites and fixed sites; a workflow piped in
(`workflow run -`), a directory or a misspelt file name given; and an engine killed between
two steps (the next engine goes on, nothing submitted twice, nothing lost). Each is read as
written or refused with one line naming the step, the field and its line, before anything is
submitted (`diamond workflow run` exits 2, no sbatch). The tests named `fault` failed before
this sweep's fixes."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from sweep_helpers import SITES, cli_sites_counting_sbatch, load, refused
from test_workflow_unrunnable import PLAIN, WITH_GPU, _fed, refused_before_any_submit

from diamond_jupyter.cli import main
from diamond_jupyter.model import BadInput, JobState
from diamond_jupyter.workflow.model import MAX_STEPS

TESTS = Path(__file__).parent


def _recording(fed: Any, tmp_path: Path) -> Path:
    """Make the fake sbatch of `_fed` keep each script it is given, as scripts/N.sh (N from
    1, in submission order); the directory they land in."""
    kept = tmp_path / "scripts"
    kept.mkdir()
    (tmp_path / "sbatch").write_text(
        f"#!/bin/sh\necho called >> {fed.sbatch_calls}\n"
        "for a; do last=$a; done\n"
        f"n=$(cat {tmp_path}/n 2>/dev/null || echo 500)\n"
        f"cp \"$last\" {kept}/$((n - 499)).sh\n"
        f"echo $((n + 1)) > {tmp_path}/n\necho $((n + 1))\n")
    return kept


def _script_of(fed: Any, view: Any, step: str) -> str:
    """The batch script the site was given for `step` (read from its job's directory)."""
    job = fed.store.get_job(next(s.job for s in view.steps if s.name == step))
    return (Path(job.workdir) / "job.sh").read_text()


def _cli_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> str:
    """`diamond workflow run FILE --json` on `text`: exit 2, one line on stderr (returned),
    no sbatch."""
    cfg, calls = cli_sites_counting_sbatch(tmp_path)
    flow = tmp_path / "flow.yaml"
    flow.write_text(text)
    code = main(["--config", str(cfg), "workflow", "run", str(flow), "--json"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not calls.exists()
    return err.strip()


# -- 1. fan-out across sites, an array step, a fan-in placed auto -----------------------------

ARRAY = "#!/bin/bash\\n#SBATCH -t 5\\n#SBATCH --array=0-3%2\\necho $SLURM_ARRAY_TASK_ID > part\\n"


async def test_a_fan_out_over_two_sites_with_an_array_step_fans_in_where_the_gpu_step_ran(
        tmp_path, monkeypatch):
    """split (alpha) -> simA (alpha, a 4-task array) and simB (gamma, a GPU) -> merge (auto).
    Queued ahead: simA waits on split by Slurm's afterok (same site); simB, on another site,
    behind a held gate; merge lands on gamma beside simB's output (alpha cannot hold it
    there sooner), after simB by afterok and after simA's gate."""
    fed = _fed(tmp_path, monkeypatch)
    kept = _recording(fed, tmp_path)
    text = ("name: fan\nsteps:\n"
            f"  - {{name: split, site: alpha, script: \"{PLAIN}\", outputs: [chunks/]}}\n"
            "  - {name: simA, needs: [split], site: alpha, inputs: [{from: split, path: "
            f"chunks/, as: 'in put/'}}], script: \"{ARRAY}\"}}\n"
            "  - {name: simB, needs: [split], site: gamma, inputs: [{from: split, path: "
            f"chunks/}}], script: \"{WITH_GPU}\"}}\n"
            "  - {name: merge, needs: [simA, simB], site: auto, inputs: [{from: simA, "
            f"path: a.txt, size: 1G}}, {{from: simB, path: b.txt, size: 1G}}], "
            f"script: \"{PLAIN}\"}}\n")
    try:
        view = await fed.run_workflow(text, origin={"face": "test"})
        assert view.reason is None
        assert [(s.name, s.site) for s in view.steps] == [
            ("split", "alpha"), ("simA", "alpha"), ("simB", "gamma"), ("merge", "gamma")]
        native = {s.name: s.job.split(":")[1] for s in view.steps}
        sim_a = _script_of(fed, view, "simA")
        assert "#SBATCH --array=0-3%2" in sim_a
        assert f"#SBATCH --dependency=afterok:{native['split']}" in sim_a
        assert "mkdir -p -- 'in put' && cp -pR -- " in sim_a  # the directory, quoted
        sim_b = _script_of(fed, view, "simB")
        assert "#SBATCH --gpus=1" in sim_b and "--dependency=afterany:" in sim_b
        assert "[ -e chunks/ ] || { echo 'workflow input chunks/ has not arrived'" in sim_b
        merge = _script_of(fed, view, "merge")
        assert f"afterok:{native['simB']}" in merge  # simB on the same site
        assert "cp -p -- " in merge and "/b.txt b.txt" in merge
        assert "[ -e a.txt ] ||" in merge  # simA's, copied across by the engine
        gates = [p.read_text() for p in sorted(kept.iterdir())
                 if "-gate\n" in p.read_text()]
        assert len(gates) == 2 and len(list(kept.iterdir())) == 6  # 4 steps, 2 gates
    finally:
        await fed.close()


@pytest.mark.parametrize("site", ["alpha", "auto", "[alpha, gamma]"])
async def test_an_array_step_over_every_sites_max_array_size_is_refused_before_any_step(
        tmp_path, monkeypatch, site):
    """fit's `--array=0-5000` where each site's MaxArraySize is 1001: refused whole, naming
    the step, the limit and what to write, prep never submitted."""
    fed = _fed(tmp_path, monkeypatch)
    recorded = fed.snapshots

    async def capped(**kw: Any) -> dict[str, Any]:
        return {n: s.model_copy(update={"max_array_size": 1001})
                for n, s in (await recorded(**kw)).items()}
    monkeypatch.setattr(fed, "snapshots", capped)
    wide = "#!/bin/bash\\n#SBATCH -t 5\\n#SBATCH --array=0-5000\\necho x\\n"
    text = ("name: w\nsteps:\n"
            f"  - {{name: prep, site: alpha, script: \"{PLAIN}\"}}\n"
            f"  - {{name: fit, needs: [prep], site: {site}, script: \"{wide}\"}}\n")
    try:
        said = await refused_before_any_submit(fed, text)
        assert said.startswith("workflow 'w' refused before any step ran: step 'fit' cannot "
                               "run on " + ("site alpha (" if site == "alpha" else
                                            "any of its sites (alpha: ")), said
        assert "array index 5000 (--array=0-5000) is above this site's largest, 1000 " \
            "(MaxArraySize=1001 in `scontrol show config`)" in said
    finally:
        await fed.close()


# -- 2. data passed between steps, under names a shell would misread --------------------------

ODD = "it's $(touch pwned) `touch pwned2`.txt"


async def test_inputs_with_quotes_blanks_and_substitutions_arrive_under_their_exact_names(
        tmp_path, monkeypatch):
    """prep -> mid -> post on alpha: post takes prep's `data/x y.bin` (two levels up) as
    `in/x.bin`, and mid's file named with a quote, `$(...)` and backquotes. post's own
    script, as the site got it, is run by bash in its directory: both arrive, nothing in a
    name runs."""
    fed = _fed(tmp_path, monkeypatch)
    text = ("name: chain\nsteps:\n"
            f"  - {{name: prep, site: alpha, script: \"{PLAIN}\"}}\n"
            f"  - {{name: mid, needs: [prep], site: alpha, script: \"{PLAIN}\"}}\n"
            "  - name: post\n    needs: [mid]\n    site: alpha\n"
            f"    script: \"{PLAIN}\"\n"
            "    inputs:\n      - {from: prep, path: data/x y.bin, as: in/x.bin}\n"
            f"      - {{from: mid, path: \"{ODD}\"}}\n")
    try:
        view = await fed.run_workflow(text, origin={"face": "test"})
        jobs = {s.name: fed.store.get_job(s.job) for s in view.steps}
        (Path(jobs["prep"].workdir) / "data").mkdir(parents=True)
        (Path(jobs["prep"].workdir) / "data" / "x y.bin").write_text("from prep")
        Path(jobs["mid"].workdir).mkdir(parents=True, exist_ok=True)
        (Path(jobs["mid"].workdir) / ODD).write_text("from mid")
        post = Path(jobs["post"].workdir)
        run = subprocess.run(["bash", str(post / "job.sh")], cwd=post, capture_output=True,
                             text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        assert (post / "in" / "x.bin").read_text() == "from prep"
        assert (post / ODD).read_text() == "from mid"
        assert not list(tmp_path.rglob("pwned*"))
    finally:
        await fed.close()


async def test_a_file_passed_across_sites_arrives_under_its_exact_name_then_the_step_starts(
        tmp_path, monkeypatch):
    """prep (alpha) writes a file named with a quote and `$(...)`; train (gamma) takes it as
    in/x.h5. Once prep completed the engine copies it into train's directory on gamma, then
    cancels the gate train waits behind: train is released, nothing in the name ran."""
    from test_workflow_unseen import _until

    fed = _fed(tmp_path, monkeypatch)
    scancel = tmp_path / "scancel"
    scancel.write_text(f"#!/bin/sh\necho \"$@\" >> {tmp_path / 'scancel-calls'}\n")
    scancel.chmod(0o755)
    for site in fed.sites.values():
        site.cfg.commands["scancel"] = str(scancel)
    odd = "it's $(touch pwned).h5"
    text = ("name: w\nsteps:\n"
            f"  - {{name: prep, site: alpha, script: \"{PLAIN}\"}}\n"
            "  - {name: train, needs: [prep], site: gamma, inputs: [{from: prep, path: "
            f"\"{odd}\", as: in/x.h5}}], script: \"{PLAIN}\"}}\n")
    try:
        view = await fed.run_workflow(text, origin={"face": "test"})
        jobs = {s.name: fed.store.get_job(s.job) for s in view.steps}
        assert fed.store.get_workflow(view.id).step("train").phase == "held"
        Path(jobs["prep"].workdir).mkdir(parents=True, exist_ok=True)
        (Path(jobs["prep"].workdir) / odd).write_text("prep's data")
        fed.store.apply_state(jobs["prep"].id, JobState.COMPLETED, exit_code=0)
        await fed.workflow_engine.advance(view.id)
        await _until(fed.workflow_engine, view.id, {"prep": "done", "train": "released"})
        assert (Path(jobs["train"].workdir) / "in" / "x.h5").read_text() == "prep's data"
        gate = fed.store.get_job(fed.store.get_workflow(view.id).step("train").data["gate"])
        assert gate.name == "train-gate"
        assert (tmp_path / "scancel-calls").read_text().split() == [gate.native_id]
        assert not list(tmp_path.rglob("pwned*"))
    finally:
        await fed.close()


# -- 3. a step whose script runs nothing ------------------------------------------------------

@pytest.mark.parametrize("body", ["#!/bin/bash\\n#SBATCH -t 5\\n#SBATCH -N 1\\n",
                                  "#!/bin/bash\\n# TODO: the fit\\n\\n",
                                  "#!/bin/bash\\n"])
async def test_fault_a_later_step_whose_script_runs_nothing_is_refused_before_any_submit(
        tmp_path, monkeypatch, body):
    """Before: prep was submitted, then fit's submit refused it ("the job has no script
    body"), prep was cancelled and the workflow FAILED mid-run."""
    fed = _fed(tmp_path, monkeypatch)
    text = ("name: w\nsteps:\n"
            f"  - {{name: prep, site: alpha, script: \"{PLAIN}\"}}\n"
            f"  - {{name: fit, needs: [prep], site: alpha, script: \"{body}\"}}\n")
    try:
        said = await refused_before_any_submit(fed, text)
        assert said == (
            "step 'fit': its script runs nothing (only directives, comments and blank "
            "lines); write the commands the step runs after its directives (line 4)")
        assert fed.store.list_workflows() == []
    finally:
        await fed.close()


def test_fault_diamond_workflow_run_exits_2_on_a_script_of_only_directives(tmp_path, capsys):
    text = ("name: w\nsteps:\n  - name: prep\n    script: |\n      #!/bin/bash\n"
            "      #SBATCH -t 5\n      # ./prepare  (commented out while testing)\n")
    err = _cli_refuses(tmp_path, capsys, text)
    assert err.endswith("step 'prep': its script runs nothing (only directives, comments "
                        "and blank lines); write the commands the step runs after its "
                        "directives (line 4)"), err


# -- 4. dependency kinds and anchors written into `needs` -------------------------------------

@pytest.mark.parametrize("need,kind", [("afterany:prep", "afterany"),
                                       ("prep:afterok", "afterok"),
                                       ("afternotok(prep)", "afternotok"),
                                       ("done(prep)", "done")])
def test_fault_a_dependency_kind_in_needs_says_kinds_are_not_read(need, kind):
    """Before: "needs unknown step 'afterany:prep' (steps: prep, fit)", or a guess of
    'prep' that said nothing of the kind being dropped."""
    msg = refused(f"name: w\nsteps:\n  - {{name: prep, script: x}}\n"
                  f"  - {{name: fit, needs: [prep, '{need}'], script: x}}\n")
    assert msg == (f"step 'fit': needs[1] {need!r} is step 'prep' with a dependency's kind "
                   f"({kind!r}), which is not read: a step starts once every step it needs "
                   "has COMPLETED; write needs: [prep] (a step whose failure may be ignored "
                   "has its script exit 0) (line 4)")


def test_a_need_that_only_looks_like_a_kind_is_an_unknown_step_with_the_one_meant():
    msg = refused("name: w\nsteps:\n  - {name: prep, script: x}\n"
                  "  - {name: fit, needs: ['prep?'], script: x}\n")
    assert msg == ("step 'fit' needs unknown step 'prep?' (did you mean 'prep'? steps: prep, "
                   "fit) (line 4)")


def test_fault_an_empty_need_says_it_is_empty():
    """Before: "needs unknown step ''"."""
    assert refused("name: w\nsteps:\n  - {name: a, script: x}\n"
                   "  - {name: b, needs: [a, ''], script: x}\n") == (
        "step 'b': needs[1] is empty: write the name of a step there, or remove it (line 4)")


def test_fault_a_steps_anchor_aliased_in_needs_says_to_write_its_name():
    """Before: "needs lists the steps' names ... not {'name': 'prep', ...}: a dependency's
    kind is not read" (no kind was written)."""
    msg = refused("name: w\nsteps:\n  - &prep {name: prep, script: ./prep}\n"
                  "  - {name: fit, needs: [*prep], script: ./fit}\n")
    assert msg == ("the workflow: steps['fit'].needs: needs lists the steps' names, not a "
                   "step's whole mapping (an alias of step 'prep''s anchor): write needs: "
                   "[prep] (line 4)")


# -- 5. names: empty, null, other alphabets, shell metacharacters -----------------------------

@pytest.mark.parametrize("text,where,line", [
    ("name: w\nsteps:\n  - {name: ~, script: x}\n", "steps[0].name", 3),
    ("name: w\nsteps:\n  - name:\n    script: x\n", "steps[0].name", 3),
    ("name: null\nsteps:\n  - {name: a, script: x}\n", "name", 1),
    ("name: w\nsteps:\n  - {name: a, script: x}\n  - {name: b, needs: [a], "
     "inputs: [{from: ~, path: o}], script: x}\n", "steps['b'].inputs[0].from", 4),
])
def test_fault_an_empty_or_null_name_says_it_is_empty(text, where, line):
    """Before: "Input should be a valid string"."""
    assert refused(text) == (
        f"the workflow: {where}: is empty (YAML reads nothing, ~ and null as no value): "
        f"write a name of letters, digits, _ . -, e.g. prep (line {line})")


def test_a_null_site_in_a_list_of_sites_is_named_by_its_place():
    assert refused("name: w\nsteps:\n  - {name: a, site: [alpha, ~], script: x}\n") == (
        "the workflow: steps['a'].site: site[1] is empty: a list of sites holds site names "
        "([alpha, beta]) (line 3)")


def test_a_null_gang_is_no_gang():
    assert load("name: w\nsteps:\n  - {name: a, gang: ~, script: x}\n").step("a").gang is None


@pytest.mark.parametrize("field,name,odd", [
    ("name", "prép", "é"), ("name", "fit🚀", "🚀"), ("name", "Δt-scan", "Δ"),
    ("gang", "équipe", "é"),
    ("name", "a;rm -rf ~", ";"), ("name", "a$(id)", "$"), ("name", "`id`", "`"),
    ("name", "a|b", "|"), ("name", "a&b", "&"), ("name", "a>b", ">"), ("gang", "g*", "*"),
])
def test_names_in_other_alphabets_or_with_shell_metacharacters_name_the_character(
        field, name, odd):
    who = f"['{name}'].name" if field == "name" else "['a'].gang"
    step = f"{{name: '{name}', script: x}}" if field == "name" else \
        f"{{name: a, gang: '{name}', script: x}}"
    assert refused(f"name: w\nsteps:\n  - {step}\n") == (
        f"the workflow: steps{who}: {name!r} is not a valid name (letters, digits, _ . -, "
        "ASCII only, starting with a letter or digit, at most 63 characters; "
        f"{odd!r} is not one of them) (line 3)")


def test_a_workflow_named_with_a_substitution_is_refused_at_the_cli_nothing_runs(
        tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = _cli_refuses(tmp_path, capsys, "name: $(touch pwned)\nsteps:\n"
                       "  - {name: a, script: ./a}\n")
    assert "name: '$(touch pwned)' is not a valid name" in err and "(line 1)" in err, err
    assert not list(tmp_path.rglob("pwned"))


@pytest.mark.parametrize("written", ["ａｌｐｈａ", "ALPHA", "'alpha\\u00a0'"])
def test_fault_a_site_in_full_width_letters_or_with_a_no_break_space_names_the_site_meant(
        written):
    """An input method's full-width letters (before: no site suggested), capitals, a
    no-break space from a web page."""
    msg = refused(f"name: w\nsteps:\n  - {{name: a, site: \"{written.strip(chr(39))}\", "
                  "script: x}\n")
    assert "unknown site " in msg and \
        "(did you mean alpha? known: alpha, beta, gamma, or auto) (line 3)" in msg, msg


# -- 6. the file's shape ----------------------------------------------------------------------

def test_fault_steps_given_as_one_word_says_what_a_step_is():
    """Before: "steps: Input should be a valid list"."""
    assert refused("name: w\nsteps: prep\n") == (
        "the workflow: steps: steps is a list of steps, each a mapping of its fields "
        "(`- name: prep` with its `script:` under it), not 'prep' (line 2)")


@pytest.mark.parametrize("written,shown", [("maybe", "'maybe'"), ("'no'", "'no'"),
                                           ("1", "1"), ("~", "None")])
def test_fault_queue_ahead_that_is_not_true_or_false_says_what_it_is(written, shown):
    """Before: "Input should be a valid boolean, unable to interpret input", and a quoted
    'no' or a 1 were taken as false and true."""
    assert refused(f"name: w\nqueue_ahead: {written}\nsteps:\n  - {{name: a, script: x}}\n"
                   ) == (
        "the workflow: queue_ahead: queue_ahead is true (submit each step once the steps it "
        "needs are queued) or false (once they have ended), unquoted, not "
        f"{shown} (line 2)")


@pytest.mark.parametrize("written", ["true", "false", "yes", "off"])
def test_queue_ahead_as_yaml_writes_truth_values_is_kept(written):
    wf = load(f"name: w\nqueue_ahead: {written}\nsteps:\n  - {{name: a, script: x}}\n")
    assert wf.queue_ahead is (written in ("true", "yes"))


def test_yaml_oddities_a_scientist_writes_are_read_as_meant():
    """An explicit `? name` key, a folded name, `---` and `...` around the document, a
    comment after `|`, and a step merging two templates (the first wins) then overriding."""
    wf = load("""\
        ---
        name: odd
        x-a: &a {site: alpha, retries: 1}
        x-g: &g {site: gamma, needs: [p]}
        steps:
          - ? name
            : p
            script: |  # the preparation
              ./prep
          - name: >-
              q
            <<: [*g, *a]
            script: ./q
          - {name: r, <<: *g, needs: [q], script: ./r}
        ...
        """)
    assert [(s.name, s.site, s.needs, s.retries) for s in wf.steps] == [
        ("p", "auto", [], 0), ("q", "gamma", ["p"], 1), ("r", "gamma", ["q"], 0)]
    assert wf.step("p").script == "./prep\n"


# -- 7. cycles, self-needs and duplicates, through anchors too --------------------------------

def test_a_cycle_inside_a_diamond_names_its_steps_and_the_line_closing_it():
    assert refused("name: w\nsteps:\n  - {name: a, script: x}\n"
                   "  - {name: b, needs: [a, d], script: x}\n"
                   "  - {name: c, needs: [a], script: x}\n"
                   "  - {name: d, needs: [b, c], script: x}\n") == (
        "workflow 'w' has a cycle: b -> d -> b (line 6)")


def test_a_step_needing_itself_through_an_anchor_is_named():
    assert refused("name: w\nx-n: &n [fit]\nsteps:\n  - {name: fit, needs: *n, script: x}\n"
                   ) == "step 'fit' needs itself (a cycle) (line 2)"


def test_fault_a_name_used_twice_through_an_alias_names_both_steps():
    """The alias's line is the anchor's: before, "is used twice (line 2)" named neither
    step."""
    assert refused("name: w\nx-c: &c {name: a, script: x}\nsteps:\n  - *c\n  - *c\n") == (
        "workflow 'w': step name 'a' is used twice (steps[0] and steps[1]); rename one "
        "(line 2)")


# -- 8. 2,000 steps ---------------------------------------------------------------------------

def test_a_fan_out_and_in_of_2000_steps_is_read_in_bounded_time_and_one_more_is_refused():
    width = MAX_STEPS - 2
    text = ("name: huge\nsteps:\n  - {name: split, script: ./split}\n" + "".join(
        f"  - {{name: w{i:04d}, needs: [split], script: ./w {i}, inputs: [{{from: split, "
        f"path: part{i}.dat}}]}}\n" for i in range(width))
        + "  - name: join\n    script: ./join\n    needs: ["
        + ", ".join(f"w{i:04d}" for i in range(width)) + "]\n")
    t0 = time.perf_counter()
    wf = load(text)
    assert time.perf_counter() - t0 < 30
    assert len(wf.steps) == MAX_STEPS and wf.order()[0] == "split"
    assert wf.order()[-1] == "join" and len(wf.upstream("join")) == MAX_STEPS - 1
    more = text + "  - {name: extra, script: ./x}\n"
    assert refused(more) == (f"the workflow: steps: {MAX_STEPS + 1} steps; a workflow "
                             f"holds at most {MAX_STEPS} steps")


# -- 9. auto, lists of sites and fixed sites in one workflow ----------------------------------

async def test_auto_a_list_and_fixed_sites_mixed_each_run_where_they_may(tmp_path,
                                                                         monkeypatch):
    """prep pinned to alpha; train auto (a GPU: only gamma has them); check among
    [alpha, gamma], taking 10 GB from prep (kept on alpha, beside the data); report pinned
    to gamma. Each runs where it may, none is refused."""
    fed = _fed(tmp_path, monkeypatch)
    text = ("name: mixed\nsteps:\n"
            f"  - {{name: prep, site: alpha, script: \"{PLAIN}\"}}\n"
            f"  - {{name: train, needs: [prep], site: auto, script: \"{WITH_GPU}\"}}\n"
            "  - {name: check, needs: [prep], site: [alpha, gamma], inputs: [{from: prep, "
            f"path: p.dat, size: 10G}}], script: \"{PLAIN}\"}}\n"
            "  - {name: report, needs: [train, check], site: gamma, "
            f"script: \"{PLAIN}\"}}\n")
    try:
        view = await fed.run_workflow(text, origin={"face": "test"})
        assert [(s.name, s.site, s.job is not None) for s in view.steps] == [
            ("prep", "alpha", True), ("train", "gamma", True), ("check", "alpha", True),
            ("report", "gamma", True)]
    finally:
        await fed.close()


async def test_a_step_naming_an_unknown_site_in_a_mixed_workflow_submits_nothing(
        tmp_path, monkeypatch):
    fed = _fed(tmp_path, monkeypatch)
    text = ("name: mixed\nsteps:\n"
            f"  - {{name: prep, site: alpha, script: \"{PLAIN}\"}}\n"
            f"  - {{name: train, needs: [prep], site: [gamma, delta], script: \"{PLAIN}\"}}\n")
    try:
        said = await refused_before_any_submit(fed, text)
        assert said == ("step 'train': unknown site 'delta' in its list of sites "
                        "[gamma, delta] (known: alpha, gamma, or auto) (line 4)")
    finally:
        await fed.close()


@pytest.mark.parametrize("written,where", [("alpha:gpu", ""), ("alpha/gpu", ""),
                                           ("gpu@alpha", ""),
                                           ("[beta, 'alpha:gpu']", " in its list of sites "
                                                                  "[beta, alpha:gpu]")])
def test_fault_a_site_written_with_its_partition_says_where_a_partition_goes(written, where):
    """`cluster:partition` and PBS's `queue@server`: before, an unknown site, nothing
    suggested."""
    name = written.strip("[]").split(", ")[-1].strip("'")
    assert refused(f"name: w\nsteps:\n  - {{name: a, site: {written}, script: x}}\n") == (
        f"step 'a': unknown site {name!r}{where} (did you mean alpha? known: alpha, beta, "
        "gamma, or auto); a partition or queue ('gpu') is asked for in the step's script "
        "(#SBATCH -p gpu, #PBS -q gpu, #BSUB -q gpu), not in `site:` (line 3)")


def test_fault_a_site_written_as_a_login_says_the_login_is_the_sites_files():
    assert refused("name: w\nsteps:\n  - {name: a, site: me@alpha.example.org, script: x}\n"
                   ) == (
        "step 'a': unknown site 'me@alpha.example.org' (did you mean alpha? known: alpha, "
        "beta, gamma, or auto); a site is named as the sites file names it: its login and "
        "host are the file's (transport: {host: ..., user: ...}) (line 3)")


# -- 10. an engine killed between two steps ---------------------------------------------------

_KILLED_ENGINE = """
import asyncio, sys
from test_workflow_unseen import _Ops
from diamond_jupyter import leases
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.engine import WorkflowEngine
from diamond_jupyter.workflow.model import load_workflow

async def main():
    store = Store(sys.argv[1])
    ops = _Ops(store)
    ops.engine_id = leases.EngineLease(store.beats).id
    engine = WorkflowEngine(ops)
    wid = await engine.run(load_workflow(open(sys.argv[2]).read(), sites=["alpha", "beta"]))
    print(wid, flush=True)
    await asyncio.Event().wait()  # killed here, between prep and fit

asyncio.run(main())
"""


async def test_an_engine_killed_between_steps_leaves_the_next_engine_all_it_needs(tmp_path):
    """The engine (its own process) submits prep, then is killed (SIGKILL: nothing closed,
    nothing handed back). prep completes meanwhile. The next engine adopts the workflow at
    once (its owner's process is gone), submits fit once, never prep again, and report
    after fit: every step, its job and the recorded text are kept."""
    from test_workflow_unseen import _Ops, _until

    from diamond_jupyter import leases
    from diamond_jupyter.store import Store
    from diamond_jupyter.workflow.engine import WorkflowEngine

    flow = tmp_path / "flow.yaml"
    flow.write_text("name: w\nqueue_ahead: false\nsteps:\n"
                    "  - {name: prep, site: alpha, script: ./prep}\n"
                    "  - {name: fit, site: beta, needs: [prep], script: ./fit}\n"
                    "  - {name: report, site: alpha, needs: [fit], script: ./report}\n")
    db = tmp_path / "s.sqlite"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(TESTS), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_ENGINE, str(db), str(flow)],
                            stdout=subprocess.PIPE, text=True, env=env)
    try:
        wid = (await asyncio.to_thread(proc.stdout.readline)).strip()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        proc.stdout.close()
    assert wid, "the engine printed no workflow id"
    with Store(db) as store:
        rec = store.get_workflow(wid)
        assert [(s.name, s.phase) for s in rec.steps] == [
            ("prep", "queued"), ("fit", "waiting"), ("report", "waiting")]
        prep = store.job_by_token(rec.step("prep").token)
        store.apply_state(prep.id, JobState.COMPLETED, exit_code=0)
        ops = _Ops(store)
        ops.ids = itertools.count(1000)  # tokens and job ids the killed engine did not use
        lease = leases.EngineLease(store.beats)
        ops.engine_id = lease.id
        engine = WorkflowEngine(ops)
        try:
            assert await engine.resume() == [wid]
            await _until(engine, wid, {"prep": "done", "fit": "queued"})
            assert ops.submits == [("fit", "beta", False)]
            fit = store.job_by_token(store.get_workflow(wid).step("fit").token)
            store.apply_state(fit.id, JobState.COMPLETED, exit_code=0)
            await engine.advance(wid)
            await _until(engine, wid, {"fit": "done", "report": "queued"})
            assert ops.submits == [("fit", "beta", False), ("report", "alpha", False)]
            rec = store.get_workflow(wid)
            assert store.job_by_token(rec.step("prep").token).id == prep.id  # never again
            assert [s.name for s in rec.steps] == ["prep", "fit", "report"]
        finally:
            await engine.close()
            lease.release()


# -- 11. a workflow piped in ------------------------------------------------------------------

def test_fault_workflow_run_dash_reads_the_workflow_piped_in(tmp_path):
    """`./make_workflow.py | diamond workflow run -`: before, "cannot read -: No such file or
    directory". Its script_file is read beside the current directory, its problems are
    named as standard input's, and a good one runs."""
    from diamond_jupyter.cli.handover import HANDOVER_ENV

    cfg, calls = cli_sites_counting_sbatch(tmp_path)
    (tmp_path / "prep.sh").write_text("#!/bin/bash\n#SBATCH -t 5\necho prep\n")
    env = {**os.environ, HANDOVER_ENV: "0"}

    def run(text: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "--config",
                               str(cfg), "workflow", "run", "-", "--json"], input=text,
                              capture_output=True, text=True, cwd=tmp_path, env=env,
                              timeout=120)

    bad = run("name: w\nsteps:\n  - {name: a, site: alpha, script_file: prep.sh}\n"
              "  - {name: b, needs: ['afterok:a'], script: ./b}\n")
    assert bad.returncode == 2, bad.stderr
    assert bad.stderr.strip().splitlines()[-1] == (
        "diamond: the workflow on standard input: step 'b': needs[0] 'afterok:a' is step 'a' "
        "with a dependency's kind ('afterok'), which is not read: a step starts once every "
        "step it needs has COMPLETED; write needs: [a] (a step whose failure may be ignored "
        "has its script exit 0) (line 4)")
    assert not calls.exists()
    good = run("name: w\nsteps:\n  - {name: a, site: alpha, script_file: prep.sh}\n")
    assert good.returncode == 0, good.stderr
    assert [(s["name"], s["site"]) for s in json.loads(good.stdout)["steps"]] == [
        ("a", "alpha")]
    assert calls.read_text().count("called") == 1


def test_fault_workflow_run_on_a_directory_names_the_workflow_files_in_it(tmp_path, capsys):
    """Before: "cannot read DIR: Is a directory" (`diamond submit DIR` names the scripts)."""
    flows = tmp_path / "flows"
    flows.mkdir()
    for name in ("train.yaml", "prep.yml", "notes.txt"):
        (flows / name).write_text("name: w\n")
    cfg, calls = cli_sites_counting_sbatch(tmp_path)
    assert main(["--config", str(cfg), "workflow", "run", f"{flows}/", "--json"]) == 2
    assert capsys.readouterr().err == (
        f"diamond: {flows} is a directory, not a workflow file: give the workflow's YAML "
        f"file (e.g. {flows}/prep.yml); workflow files in it: prep.yml, train.yaml\n")
    assert not calls.exists()


@pytest.mark.parametrize("given,meant", [("flow.yaml", "flow.yml"), ("flw.yml", "flow.yml"),
                                         ("other.yml", None)])
def test_fault_a_workflow_file_not_found_names_the_one_of_a_close_name(
        tmp_path, capsys, monkeypatch, given, meant):
    """Before: "No such file or directory" alone, the file beside it not named."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "flow.yml").write_text("name: w\n")
    cfg, calls = cli_sites_counting_sbatch(tmp_path)
    assert main(["--config", str(cfg), "workflow", "run", given]) == 2
    hint = f" (did you mean {meant}?)" if meant else ""
    assert capsys.readouterr().err == (
        f"diamond: cannot read {given}: No such file or directory{hint}\n")
    assert not calls.exists()


def test_workflow_run_dash_at_a_terminal_says_to_pipe_it_in(monkeypatch):
    from diamond_jupyter.workflow.model import load_workflow

    monkeypatch.setattr(os, "isatty", lambda fd: True)
    with pytest.raises(BadInput) as e:
        load_workflow(Path("-"), sites=SITES)
    assert str(e.value) == ("- reads the workflow from standard input, which is a terminal "
                            "here: pipe it in (./make_workflow.py | diamond workflow run -), "
                            "or name its file")
