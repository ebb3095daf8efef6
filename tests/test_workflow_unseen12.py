"""Workflow files, twelfth sweep: diamonds six deep, a fan-out to 50 steps and their fan-in,
inputs that are directories or renamed (and the glob, `..`, absolute and option-like paths
refused), a step's script in each dialect on a Slurm site, gangs spanning two sites, retries
with `on_failure` both ways, YAML anchors, aliases and merge keys, duplicate keys, tabs,
byte-order marks (one, two, or one left mid-file where files were joined), keys holding an
invisible character pasted with them, step and workflow names in other alphabets or written
like options (`-rf`, `--wrap`), inputs of terabytes and files over the size limit; and the
Python API building the same workflows.

A valid file's plan is asserted as `diamond workflow run --json` shows it (`view.contract()`:
each step's site, needs and gang) with what the engine planned for it in the store (queued
or held, its afterok edges, a gate where a transfer must come first), on recorded sites
(test_workflow_unrunnable's `_fed`, no test bed). A bad file exits 2 with one line naming
the file, the problem, its line and what is accepted, nothing submitted. The tests named
`fault` failed before this sweep's fixes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sweep_helpers import SITES, cli_sites_counting_sbatch, load, refused
from test_workflow_unrunnable import PLAIN, _fed

from diamond_jupyter.cli import main
from diamond_jupyter.model import BadInput
from diamond_jupyter.workflow.model import MAX_WORKFLOW_BYTES, load_workflow


def _step(name: str, *, site: str = "alpha", needs: list[str] | None = None,
          extra: str = "") -> str:
    """One step of a workflow file, in flow style, running PLAIN."""
    return (f"  - {{name: {name}, site: {site}"
            + (f", needs: [{', '.join(needs)}]" if needs else "")
            + (f", {extra}" if extra else "") + f", script: \"{PLAIN}\"}}\n")


async def _planned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: Any
                   ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run `source` on the recorded sites: what `diamond workflow run --json` prints, and per
    step what the engine planned (phase, afterok edges, whether a gate holds it)."""
    fed = _fed(tmp_path, monkeypatch)
    try:
        view = await fed.run_workflow(source, origin={"face": "test"})
        rec = fed.store.get_workflow(view.id)
        plan = {s.name: {"phase": s.phase, "afterok": s.data.get("afterok"),
                         "gate": "gate" in s.data, "tried": s.data.get("tried")}
                for s in rec.steps}
        return view.contract(), plan
    finally:
        await fed.close()


def _sites(shown: dict[str, Any]) -> dict[str, str]:
    return {s["name"]: s["site"] for s in shown["steps"]}


# -- 1. shapes: deep diamonds, a 50-step fan-out and fan-in ----------------------------------

async def test_six_diamonds_in_a_row_queue_each_level_behind_both_of_the_last(
        tmp_path, monkeypatch):
    """top -> (l0, r0) -> j0 -> (l1, r1) -> j1 ... six deep on alpha: every step submitted,
    each join after both its arms by afterok (one site: Slurm holds it, no gate)."""
    text = "name: deep\nsteps:\n" + _step("top")
    last = "top"
    for i in range(6):
        text += _step(f"l{i}", needs=[last]) + _step(f"r{i}", needs=[last])
        text += _step(f"j{i}", needs=[f"l{i}", f"r{i}"])
        last = f"j{i}"
    shown, plan = await _planned(tmp_path, monkeypatch, text)
    assert shown["state"] == "PENDING" and len(shown["steps"]) == 19
    assert set(_sites(shown).values()) == {"alpha"}
    assert all(s["job"] and s["state"] == "PENDING" for s in shown["steps"])
    for i in range(6):
        assert sorted(plan[f"j{i}"]["afterok"]) == [f"l{i}", f"r{i}"]
        assert plan[f"l{i}"]["afterok"] == [f"j{i - 1}" if i else "top"]
        assert not plan[f"j{i}"]["gate"]
    assert plan["top"]["phase"] == "queued" and plan["top"]["afterok"] == []


async def test_a_fan_out_to_fifty_steps_on_two_sites_and_their_fan_in(tmp_path, monkeypatch):
    """split (alpha) -> fifty sims alternating alpha and gamma -> gather (alpha): the alpha
    sims wait on split by afterok; the gamma ones, on another site, behind a hold; gather
    by afterok after the 25 on alpha, the other 25 through the engine."""
    sims = [f"sim{i:02d}" for i in range(50)]
    text = ("name: fan\nsteps:\n" + _step("split")
            + "".join(_step(s, site="alpha" if i % 2 == 0 else "gamma", needs=["split"])
                      for i, s in enumerate(sims))
            + _step("gather", needs=sims))
    shown, plan = await _planned(tmp_path, monkeypatch, text)
    sites = _sites(shown)
    assert [sites[s] for s in sims[:4]] == ["alpha", "gamma", "alpha", "gamma"]
    assert sites["gather"] == "alpha" and len(shown["steps"]) == 52
    assert next(s for s in shown["steps"] if s["name"] == "gather")["needs"] == sims
    assert all(plan[s]["afterok"] == ["split"] for s in sims[::2])
    assert all(plan[s]["phase"] == "held" and plan[s]["afterok"] == [] for s in sims[1::2])
    assert sorted(plan["gather"]["afterok"]) == sims[::2]
    assert plan["gather"]["phase"] == "held"


# -- 2. inputs: directories, renames, sizes, paths refused ------------------------------------

async def test_a_directory_renamed_on_another_site_puts_its_step_behind_a_gate(
        tmp_path, monkeypatch):
    """train (gamma) takes prep's `out/` as `in put/` and a 10T file as `big/x.h5`: the copy
    comes first, so train is held behind a gate, not an afterok edge across sites."""
    text = ("name: w\nsteps:\n" + _step("prep")
            + _step("train", site="gamma", needs=["prep"], extra=(
                "inputs: [{from: prep, path: out/, as: 'in put/'}, "
                "{from: prep, path: d/../x.h5, as: big/x.h5, size: 10T}]")))
    shown, plan = await _planned(tmp_path, monkeypatch, text)
    assert _sites(shown) == {"prep": "alpha", "train": "gamma"}
    assert plan["train"] == {"phase": "held", "afterok": [], "gate": True, "tried": ["gamma"]}


def test_inputs_directories_and_renames_are_read_as_written():
    wf = load("""\
        name: w
        steps:
          - {name: prep, site: alpha, script: x, outputs: [out/, log.txt]}
          - name: post
            needs: [prep]
            inputs:
              - {from: prep, path: out/, as: in/}
              - {from: prep, path: ./log.txt, as: logs/prep.txt, size: 1.5G}
            script: x
        """)
    got = [(i.from_, i.path, i.as_, i.size) for i in wf.step("post").inputs]
    assert got == [("prep", "out/", "in/", None),
                   ("prep", "./log.txt", "logs/prep.txt", 1610612736)]


@pytest.mark.parametrize("inp, field, said", [
    ("{from: a, path: 'out/*.h5'}", "path", "has the glob character '*'"),
    ("{from: a, path: 'out/run[0-9].h5'}", "path", "has the glob character '['"),
    ("{from: a, path: 'out/?.h5'}", "path", "has the glob character '?'"),
    ("{from: a, path: 'out/{a,b}.h5'}", "path", "a brace expansion"),
    ("{from: a, path: ../../etc/passwd}", "path", "inside the step's working directory"),
    ("{from: a, path: d/../../x}", "path", "inside the step's working directory"),
    ("{from: a, path: x, as: ../x}", "as", "inside the step's working directory"),
    ("{from: a, path: 'x/..'}", "path", "inside the step's working directory"),
    ("{from: a, path: /etc/passwd}", "path", "no leading /, ~ or -"),
    ("{from: a, path: '~/x'}", "path", "no leading /, ~ or -"),
    ("{from: a, path: -rf}", "path", "no leading /, ~ or -"),
    ("{from: a, path: x, as: --wrap}", "as", "no leading /, ~ or -"),
    ("{from: a, path: x, size: 999999P}", "size", "is not a number of bytes (e.g. 1048576"),
])
def test_input_paths_a_copy_cannot_take_are_refused_naming_the_field_and_line(
        inp, field, said):
    msg = refused("name: w\nsteps:\n  - {name: a, script: x}\n"
                  f"  - {{name: b, needs: [a], inputs: [{inp}], script: x}}\n")
    assert msg.startswith(f"the workflow: steps['b'].inputs[0].{field}: "), msg
    assert said in msg and msg.endswith("(line 4)"), msg


# -- 3. a script in each dialect on a Slurm site ----------------------------------------------

@pytest.mark.parametrize("script, directive", [
    ("#!/bin/bash\\n#PBS -l walltime=00:05:00\\n#PBS -l select=1:ncpus=4\\necho x\\n", "#PBS"),
    ("#!/bin/bash\\n#BSUB -W 5\\n#BSUB -n 4\\necho x\\n", "#BSUB"),
    ("#!/bin/bash\\n#flux: -t 5m\\n#flux: -n 4\\necho x\\n", "#flux:"),
    ("#!/bin/bash\\n#$ -l h_rt=00:05:00\\n#$ -pe smp 4\\necho x\\n", "#$"),
    ("#!/bin/bash\\n#SBATCH -t 5\\n#SBATCH -n 4\\necho x\\n", "#SBATCH"),
])
async def test_a_step_in_any_dialect_is_rendered_for_its_slurm_site(
        tmp_path, monkeypatch, script, directive):
    """The step's directives are read in its own dialect and written as Slurm's: the script
    alpha is given asks for 4 tasks and 5 minutes in #SBATCH lines."""
    fed = _fed(tmp_path, monkeypatch)
    try:
        view = await fed.run_workflow(
            f"name: w\nsteps:\n  - {{name: a, site: alpha, script: \"{script}\"}}\n",
            origin={"face": "test"})
        assert view.contract()["steps"][0]["site"] == "alpha"
        job = fed.store.get_job(view.steps[0].job)
        sent = (Path(job.workdir) / "job.sh").read_text()
        assert "#SBATCH --time=00:05:00\n" in sent and sent.rstrip().endswith("echo x")
        assert job.spec.resources.walltime_s == 300
        res = job.spec.resources
        assert (res.tasks or 1) * (res.cpus_per_task or 1) * (res.nodes or 1) >= 4, res
        if directive != "#SBATCH":
            assert not any(ln.startswith(directive + " ") for ln in sent.splitlines())
    finally:
        await fed.close()


@pytest.mark.parametrize("extra, script, said", [
    ("", "#!/bin/bash\\n#SBATCH -t 5\\n#PBS -l walltime=1:00:00\\necho x\\n",
     "ambiguous dialect: slurm and pbs both have 1 directive lines; name it with the step's "
     "`dialect:` (slurm, pbs, lsf, flux, sge)"),
    ("dialect: pbs, ", "#!/bin/bash\\n#SBATCH -t 5\\necho x\\n",
     "dialect: pbs, but its script's directives are slurm (1 line) and none is pbs's"),
    ("dialect: moab, ", "#!/bin/bash\\n#MSUB -l walltime=5:00\\necho x\\n",
     "unknown dialect 'moab' (accepted: slurm, pbs, lsf, flux, sge"),
])
def test_a_script_whose_dialect_cannot_be_told_is_refused(extra, script, said):
    msg = refused(f"name: w\nsteps:\n  - {{name: a, site: alpha, {extra}script: \"{script}\"}}\n")
    assert said in msg and msg.endswith("(line 3)"), msg


# -- 4. gangs across sites, retries both ways --------------------------------------------------

async def test_a_gang_across_two_sites_is_held_until_both_members_can_start(
        tmp_path, monkeypatch):
    text = ("name: esm\nsteps:\n" + _step("prep")
            + _step("ocean", needs=["prep"], extra="gang: esm")
            + _step("atmos", site="gamma", needs=["prep"], extra="gang: esm")
            + _step("post", site="gamma", needs=["ocean", "atmos"]))
    shown, plan = await _planned(tmp_path, monkeypatch, text)
    gangs = {s["name"]: s["gang"] for s in shown["steps"]}
    assert gangs == {"prep": None, "ocean": "esm", "atmos": "esm", "post": None}
    assert _sites(shown) == {"prep": "alpha", "ocean": "alpha", "atmos": "gamma",
                             "post": "gamma"}
    assert plan["ocean"]["phase"] == plan["atmos"]["phase"] == "held"
    assert plan["ocean"]["afterok"] == ["prep"]  # same site: Slurm's edge, and the gang's hold


@pytest.mark.parametrize("site, policy, tried", [
    ("alpha", "stop", ["alpha"]),
    ("alpha", "resubmit-elsewhere", ["alpha"]),  # first alpha, a retry elsewhere
    ("[gamma, alpha]", "resubmit-elsewhere", None),
    ("auto", "resubmit-elsewhere", None),
])
async def test_retries_with_either_policy_are_planned_on_the_first_site(
        tmp_path, monkeypatch, site, policy, tried):
    text = ("name: w\nsteps:\n"
            + _step("a", site=site, extra=f"retries: 3, on_failure: {policy}"))
    shown, plan = await _planned(tmp_path, monkeypatch, text)
    step = shown["steps"][0]
    assert step["attempt"] == 0 and step["state"] == "PENDING" and step["job"]
    assert step["site"] in ("alpha", "gamma")
    assert plan["a"]["tried"] == (tried or [step["site"]])


@pytest.mark.parametrize("fields, said", [
    ("retries: 2, on_failure: retry",
     "on_failure: Input should be 'resubmit-elsewhere' or 'stop', not 'retry'"),
    ("on_failure: resubmit-elsewhere",
     "on_failure: resubmit-elsewhere needs retries: 1 or more"),
    ("retries: -1", "retries must be a whole number from 0 to 10, not -1"),
    ("retries: 11", "retries must be a whole number from 0 to 10, not 11"),
    ("retries: three", "retries must be a whole number from 0 to 10, not 'three'"),
])
def test_retry_fields_out_of_range_are_refused(fields, said):
    msg = refused(f"name: w\nsteps:\n  - {{name: a, {fields}, script: x}}\n")
    assert said in msg and msg.endswith("(line 3)"), msg


# -- 5. YAML: anchors, aliases, merge keys, duplicate keys, tabs, byte-order marks -------------

def test_merge_keys_from_an_x_block_give_each_step_its_site_and_a_step_overrides_it():
    wf = load(f"""\
        x-gpu: &gpu
          site: gamma
          retries: 1
          script: "{PLAIN}"
        x-needs: &after_prep [prep]
        name: w
        steps:
          - <<: *gpu
            name: prep
          - <<: *gpu
            name: fit
            needs: *after_prep
          - {{<<: *gpu, name: plot, site: alpha, needs: *after_prep, retries: 0}}
        """)
    got = [(s.name, s.site, s.needs, s.retries) for s in wf.steps]
    assert got == [("prep", "gamma", [], 1), ("fit", "gamma", ["prep"], 1),
                   ("plot", "alpha", ["prep"], 0)]


def test_a_merge_key_at_the_top_under_another_name_is_refused_naming_what_is_accepted():
    msg = refused("name: w\ndefaults: &d {site: alpha, script: x}\n"
                  "steps:\n  - {<<: *d, name: a}\n")
    assert msg == ("the workflow: defaults: unknown field (accepted: name, steps, queue_ahead,"
                   " and x-* keys to hold YAML anchors) (line 2)")


@pytest.mark.parametrize("text, said", [
    ("name: w\nsteps:\n  - name: a\n    site: alpha\n    site: gamma\n    script: x\n",
     "not valid YAML at line 5, column 5: key 'site' is given twice (first on line 4)"),
    ("name: w\nsteps:\n  - {name: a, script: x}\nsteps:\n  - {name: b, script: x}\n",
     "not valid YAML at line 4, column 1: key 'steps' is given twice (first on line 2)"),
    ("name: w\nsteps:\n\t- name: a\n\t  script: x\n",
     "not valid YAML at line 3, column 1: found character '\\t' that cannot start any token "
     "(indent with spaces"),
    ("name: w\nsteps:\n  - name: a\n    site:\talpha\n    script: x\n",
     "line 4, column 10: found character '\\t' that cannot start any token (a tab after other "
     "text on the line"),
    ("a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
     "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
     "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
     "name: w\nsteps: []\n", "more than 100,000 values"),
    ("name: w\nsteps:\n  - {name: a, script: x}\n  - {name: b, needs: a, script: x}\n",
     "needs is a list: write needs: [a], not 'a' (line 4)"),
    ("name: w\nsteps:\n  - {name: a, script: x}\n  - {name: b, needs: [a, a], script: x}\n",
     "step 'b' needs 'a' twice (needs[0] and needs[1]): list each step once (line 4)"),
])
def test_yaml_a_reader_would_misread_is_refused_at_its_line(text, said):
    msg = refused(text)
    assert said in msg, msg


@pytest.mark.parametrize("head", ["\ufeff", "\ufeff\ufeff", ""])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_fault_byte_order_marks_at_the_start_are_dropped_whatever_the_line_ends(head, newline):
    """Before: two marks (two files saved with one, joined) left one in the first key:
    "\\ufeffname: unknown field ... did you mean 'name'?"."""
    wf = load_workflow((head + "name: w\nsteps:\n  - {name: a, site: alpha, script: x}\n")
                       .replace("\n", newline), sites=SITES)
    assert wf.name == "w" and wf.step("a").site == "alpha"


def test_fault_a_byte_order_mark_left_mid_file_is_refused_where_it_stands():
    """Before: "not valid YAML at line 4, column 19: mapping values are not allowed here"."""
    msg = refused("\ufeffname: w\nsteps:\n  - {name: a, script: x}\n"
                  "\ufeff  - {name: b, script: x}\n")
    assert msg == ("the workflow: line 4, column 1 holds a byte-order mark (U+FEFF, an "
                   "invisible character left where files saved with one were joined): delete "
                   "it; a workflow may start with one, nowhere else")


@pytest.mark.parametrize("text, shown, code, meant, line", [
    ("name: w\nsteps:\n  - {name: a, scr\u200dipt: x}\n", "steps['a'].scr<U+200D>ipt",
     "U+200D (ZERO WIDTH JOINER)", "delete it to write 'script'", 3),
    ("name: w\nsteps:\n  - name: a\n    \u2060retries: 1\n    script: x\n",
     "steps['a'].<U+2060>retries", "U+2060 (WORD JOINER)", "delete it to write 'retries'", 4),
    ("na\u00adme: w\nsteps:\n  - {name: a, script: x}\n", "na<U+00AD>me",
     "U+00AD (SOFT HYPHEN)", "delete it to write 'name'", 1),
    ("name: w\nsteps:\n  - {name: a, scr\u200dipts: x, script: x}\n",
     "steps['a'].scr<U+200D>ipts", "U+200D (ZERO WIDTH JOINER)",
     "delete it; did you mean 'script'?", 3),
])
def test_fault_a_key_holding_an_invisible_character_says_which_and_where(
        text, shown, code, meant, line):
    """Before: "steps['a'].scr\u200dipt: unknown field ...; did you mean 'script'?", the
    key shown as the very word it was told to be."""
    msg = refused(text)
    assert msg.startswith(f"the workflow: {shown}: unknown field (accepted: "), msg
    assert msg.endswith(f"; it holds {code}, an invisible character (pasted from a web page "
                        f"or a PDF?): {meant} (line {line})"), msg


# -- 6. names: other alphabets, options, invisible characters ---------------------------------

@pytest.mark.parametrize("name, bad", [
    ("préparation", "'é'"), ("解析", "'解'"), ("'a🚀'", "'🚀'"),
    ('"a\\u202eb"', "'\\u202e'"), ("-rf", None), ("--wrap", None), ('"a\\0b"', "'\\x00'"),
])
def test_step_names_that_are_not_plain_ascii_or_look_like_options_are_refused(name, bad):
    msg = refused(f"name: w\nsteps:\n  - {{name: {name}, site: alpha, script: x}}\n")
    assert "is not a valid name (letters, digits, _ . -, ASCII only, starting with a letter " \
        "or digit, at most 63 characters" in msg and msg.endswith("(line 3)"), msg
    assert bad is None or f"{bad} is not one of them" in msg, msg


@pytest.mark.parametrize("name, bad", [
    ("--wrap", None), ("-rf", None), ('"a\u200db"', "'\\u200d'"), ('"../x"', "'/'"),
    ('""', None), ('"a b; rm -rf ~"', "' ' is not one of them (use - or _ for a blank)"),
])
def test_workflow_names_like_options_paths_or_commands_are_refused_at_line_1(name, bad):
    msg = refused(f"name: {name}\nsteps:\n  - {{name: a, script: x}}\n")
    assert msg.startswith("the workflow: name: ") and msg.endswith("(line 1)"), msg
    assert "is not a valid name (letters, digits, _ . -, ASCII only" in msg, msg
    assert bad is None or bad in msg, msg


def test_names_with_dots_dashes_and_digits_first_are_kept_as_written():
    wf = load("""\
        name: w
        steps:
          - {name: 01-prep.v2, script: x}
          - {name: rf, needs: [01-prep.v2], script: x}
          - {name: wrap_, needs: [rf], script: x}
        """)
    assert wf.order() == ["01-prep.v2", "rf", "wrap_"]


# -- 7. the command line: bad files exit 2, naming the file, nothing submitted ----------------

@pytest.mark.parametrize("body, said", [
    (b"\xef\xbb\xbfname: w\nsteps:\n  - {name: a, script: x}\n\xef\xbb\xbf  - {name: b, "
     b"script: x}\n", "line 4, column 1 holds a byte-order mark"),
    (b"name: w\nsteps:\n  - {name: --wrap, script: x}\n", "'--wrap' is not a valid name"),
    (b"name: w\nsteps:\n  - {name: a, script: x}\n  - {name: b, needs: [a], inputs: "
     b"[{from: a, path: '*.h5'}], script: x}\n", "has the glob character '*'"),
    (b"name: w\nsteps:\n  - {name: a, retries: 1, on_failure: elsewhere, script: x}\n",
     "not 'elsewhere'"),
])
def test_the_cli_refuses_a_bad_file_with_exit_2_naming_it(tmp_path, capsys, body, said):
    cfg, calls = cli_sites_counting_sbatch(tmp_path)
    flow = tmp_path / "flow.yaml"
    flow.write_bytes(body)
    code = main(["--config", str(cfg), "workflow", "run", str(flow), "--json"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith(f"diamond: {flow}: ") and said in err, err
    assert not calls.exists()


def test_the_cli_refuses_a_file_over_the_limit_before_reading_it_as_yaml(tmp_path, capsys):
    cfg, calls = cli_sites_counting_sbatch(tmp_path)
    flow = tmp_path / "huge.yaml"
    flow.write_text("name: w\nsteps:\n  - {name: a, script: x}\n# "
                    + "x" * MAX_WORKFLOW_BYTES + "\n")
    code = main(["--config", str(cfg), "workflow", "run", str(flow), "--json"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and f"a workflow holds at most {MAX_WORKFLOW_BYTES} bytes" in err, err
    assert str(flow) in err and not calls.exists()


# -- 8. the Python API --------------------------------------------------------------------------

async def test_the_python_api_runs_a_diamond_with_a_gang_and_a_renamed_input(
        tmp_path, monkeypatch):
    from diamond_jupyter.workflow import Step, StepInput, Workflow

    script = PLAIN.replace("\\n", "\n")
    wf = Workflow(name="py", steps=[
        Step(name="prep", site="alpha", script=script, outputs=["out/"]),
        Step(name="left", site="alpha", needs=["prep"], gang="pair", script=script,
             inputs=[StepInput.model_validate({"from": "prep", "path": "out/",
                                               "as": "in/"})]),
        Step(name="right", site="gamma", needs=["prep"], gang="pair", retries=2,
             on_failure="resubmit-elsewhere", script=script),
        Step(name="join", site="alpha", needs=["left", "right"], script=script)])
    shown, plan = await _planned(tmp_path, monkeypatch, wf)
    assert _sites(shown) == {"prep": "alpha", "left": "alpha", "right": "gamma",
                             "join": "alpha"}
    assert [s["gang"] for s in shown["steps"]] == [None, "pair", "pair", None]
    assert plan["left"]["phase"] == plan["right"]["phase"] == "held"
    assert plan["join"]["afterok"] == ["left"]


@pytest.mark.parametrize("kw, said", [
    ({"name": "-rf"}, "is not a valid name"),
    ({"name": "a", "retries": 11}, "retries"),
    ({"name": "a", "on_failure": "retry"}, "on_failure"),
    ({"name": "a", "site": []}, "site: [] lists no site"),
])
def test_the_python_api_refuses_what_the_file_refuses(kw, said):
    from pydantic import ValidationError

    from diamond_jupyter.workflow import Step

    with pytest.raises((ValidationError, BadInput)) as e:
        Step(script="x", **kw)
    assert said in str(e.value)


def _api_flow(steps: list[dict[str, Any]]) -> Any:
    from diamond_jupyter.workflow import Step, Workflow

    return Workflow(name="w", steps=[Step(script="x", **s) for s in steps])


@pytest.mark.parametrize("steps, said", [
    ([{"name": "a"}, {"name": "a"}],
     "workflow 'w': step name 'a' is used twice (steps[0] and steps[1]); rename one"),
    ([{"name": "a", "needs": ["b"]}, {"name": "b", "needs": ["a"]}],
     "workflow 'w' has a cycle: a -> b -> a"),
    ([{"name": "a", "needs": ["zz"]}], "step 'a' needs unknown step 'zz' (steps: a)"),
    ([{"name": "a", "gang": "g"}, {"name": "b", "gang": "g", "needs": ["a"]}],
     "gang 'g': step 'b' waits for 'a' of the same gang, but a gang's steps start together"),
    ([{"name": f"s{i}", "needs": [f"s{(i + 1) % 50}"]} for i in range(50)],
     "workflow 'w' has a cycle of 50 steps: s0 -> s49 -> s48 -> s47 -> s46 -> s45 -> s44 -> "
     "s43 -> ... (40 steps more) ... -> s2 -> s1 -> s0"),
    ([{"name": "a", "site": "delta"}], "step 'a': unknown site 'delta' (known: alpha, beta, "
     "gamma, or auto)"),
])
def test_the_python_api_refuses_a_workflow_as_a_whole_with_the_files_words(steps, said):
    from diamond_jupyter.workflow import parse_workflow

    with pytest.raises(BadInput) as e:
        parse_workflow(_api_flow(steps), sites=SITES)
    assert str(e.value) == said


@pytest.mark.parametrize("inputs, arrives", [
    ("{from: a, path: x.bin, as: in/}", "mkdir -p -- in && cp -p -- "),  # into in/, as x.bin
    ("{from: a, path: out/, as: in.txt}", "mkdir -p -- in.txt && cp -pR -- "),
])
async def test_a_file_given_a_directory_name_and_a_directory_a_file_name_arrive_inside(
        tmp_path, monkeypatch, inputs, arrives):
    fed = _fed(tmp_path, monkeypatch)
    try:
        view = await fed.run_workflow(
            "name: w\nsteps:\n" + _step("a") + _step("b", needs=["a"],
                                                     extra=f"inputs: [{inputs}]"),
            origin={"face": "test"})
        job = fed.store.get_job(view.steps[1].job)
        sent = (Path(job.workdir) / "job.sh").read_text()
        copy = next(ln for ln in sent.splitlines() if " cp -p" in ln)
        assert copy.startswith(arrives) and (" in/x.bin ||" in copy or "/. in.txt/ ||" in copy)
    finally:
        await fed.close()


@pytest.mark.parametrize("inputs, first, second", [
    ("[{from: a, path: ./x, as: ./x}, {from: a, path: x}]", "a's ./x", "a's x"),
    ("[{from: a, path: d/../x}, {from: a, path: y, as: x}]", "a's d/../x", "a's y"),
])
def test_two_inputs_spelt_differently_that_arrive_as_one_name_are_refused(
        inputs, first, second):
    msg = refused("name: w\nsteps:\n  - {name: a, script: x}\n"
                  f"  - {{name: b, needs: [a], inputs: {inputs}, script: x}}\n")
    assert msg == (f"step 'b': two inputs arrive as 'x' (inputs[0], {first}, and inputs[1], "
                   f"{second}); name one with `as:` (line 4)")
