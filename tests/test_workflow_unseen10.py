"""Workflow files, tenth sweep: what a scientist would write. A file that pulls in another
(a YAML `!include` tag), a step named only by a different case in `needs`, a `script_file`
relative to the workflow file while the shell stands elsewhere (and one whose name holds
`$(...)`: read as a file name, never run), a walltime over every partition of a step's sites
written in another scheduler's words, a workflow of one step, 500 independent steps (read
within bounds of time and memory; submitted one at a time, a bounded number of commands
each), and a workflow resumed after its file changed on disk (the recorded text runs, never
the new one). Each is read as written or refused with one line naming what, where and what
to write instead (`diamond workflow run` exits 2 on it, nothing submitted). The tests named
`fault` failed before this sweep's fixes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sweep_helpers import (
    SITES,
    load,
    noted_calls,
    refused,
    run_independent_steps,
    traced_memory,
)
from test_workflow_unrunnable import PLAIN, _fed, refused_before_any_submit
from workflow_ops import next_engine

from diamond_jupyter.workflow.model import load_workflow

# -- 1. a file that pulls in another --------------------------------------------------------


@pytest.mark.parametrize("tag", ["!include", "!import", "!ref"])
def test_fault_a_yaml_include_tag_says_a_workflow_is_one_file(tag):
    """Before: "could not determine a constructor for the tag '!include'" (PyYAML's words,
    not what to write)."""
    assert refused(f"name: w\nsteps: {tag} common.yaml\n") == (
        f"the workflow: line 2, column 8: the YAML tag {tag!r} is not read: a workflow is one "
        "file; share fields between steps with an x-* key holding a YAML anchor")


def test_fault_another_yaml_tag_is_named_with_what_to_write():
    assert refused("name: w\nsteps:\n  - {name: a, script: !secret x}\n") == (
        "the workflow: line 3, column 23: the YAML tag '!secret' is not read: write the "
        "value itself (quoted if it starts with '!')")


def test_an_include_key_at_either_level_is_refused_as_before():
    """A scientist's second try after the tag: a key. Refused with the same advice."""
    for text in ("name: w\ninclude: [common.yaml]\nsteps:\n  - {name: a, script: x}\n",
                 "name: w\nsteps:\n  - {include: common.yaml}\n"):
        assert "not supported: a workflow is one file" in refused(text)


# -- 2. names ---------------------------------------------------------------------------------

def test_a_need_differing_only_in_case_names_the_step_meant():
    msg = refused("name: w\nsteps:\n  - {name: prep, script: x}\n"
                  "  - {name: train, needs: [Prep], script: x}\n")
    assert "'Prep'" in msg and "'prep'" in msg and "(line 4)" in msg, msg


def test_a_dotted_step_name_is_kept_whole():
    wf = load("name: w\nsteps:\n  - {name: prep.v2, script: x}\n"
              "  - {name: fit.v2, needs: [prep.v2], script: x}\n")
    assert wf.order() == ["prep.v2", "fit.v2"] and wf.upstream("fit.v2") == {"prep.v2"}


# -- 3. a script beside the workflow file, not in the current directory -----------------------

def test_script_file_is_read_beside_the_workflow_not_in_the_current_directory(
        tmp_path, monkeypatch):
    (tmp_path / "proj" / "scripts").mkdir(parents=True)
    (tmp_path / "proj" / "scripts" / "prep.sh").write_text("#!/bin/bash\necho beside\n")
    (tmp_path / "elsewhere" / "scripts").mkdir(parents=True)
    (tmp_path / "elsewhere" / "scripts" / "prep.sh").write_text("#!/bin/bash\necho cwd\n")
    flow = tmp_path / "proj" / "flow.yaml"
    flow.write_text("name: w\nsteps:\n  - {name: prep, script_file: scripts/prep.sh}\n")
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert load_workflow(flow, sites=SITES).step("prep").script == "#!/bin/bash\necho beside\n"
    relative = load_workflow(Path("../proj/flow.yaml"), sites=SITES)
    assert relative.step("prep").script.endswith("echo beside\n")


def test_a_script_file_named_with_a_command_substitution_is_a_file_name(tmp_path):
    """`$(whoami).sh` is looked up as that very name; nothing runs."""
    odd = tmp_path / "$(touch pwned).sh"
    odd.write_text("#!/bin/bash\necho odd\n")
    flow = tmp_path / "flow.yaml"
    flow.write_text("name: w\nsteps:\n  - {name: a, script_file: '$(touch pwned).sh'}\n"
                    "  - {name: b, script_file: '`touch pwned2`.sh'}\n")
    msg = refused(flow)
    assert "script_file '`touch pwned2`.sh': no such file" in msg, msg
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()
    flow.write_text("name: w\nsteps:\n  - {name: a, script_file: '$(touch pwned).sh'}\n")
    assert load_workflow(flow, sites=SITES).step("a").script == "#!/bin/bash\necho odd\n"
    assert not (tmp_path / "pwned").exists()


async def test_outputs_named_with_command_substitutions_are_checked_as_names(tmp_path):
    """`$(touch pwned).h5` and a backquoted name are outputs like any other: the check at
    the site looks for those very names, and nothing in them runs."""
    from test_workflow_outputs import _local_site

    from diamond_jupyter.workflow.engine import output_paths

    outputs = ["$(touch pwned).h5", "`touch pwned2`.h5"]
    wf = load("name: w\nsteps:\n  - {name: a, script: x, outputs: "
              "['$(touch pwned).h5', '`touch pwned2`.h5']}\n")
    assert wf.step("a").outputs == outputs
    site, _, home = _local_site(tmp_path)
    wd = home / "run"
    wd.mkdir()
    (wd / outputs[0]).write_text("made")
    paths = output_paths(str(wd), wf.step("a").outputs)
    assert await site.missing_files(paths) == [paths[1]]
    assert not any(p.name.startswith("pwned")
               for d in (wd, home, tmp_path, Path.cwd()) for p in d.iterdir())


# -- 4. walltime over every partition, in another scheduler's words ---------------------------

LONG_PBS = "#!/bin/bash\\n#PBS -l walltime=72:00:00\\necho long\\n"


@pytest.mark.parametrize("site,said", [
    ("alpha", "step 'long' cannot run on site alpha (walltime 3-00:00:00 above every "
              "partition's MaxTime here (the longest: compute, 1-00:00:00))"),
    ("auto", None),  # gamma's `long` partition has no limit
    ("[alpha, gamma]", None),
])
async def test_a_pbs_walltime_over_every_partition_is_refused_before_any_step_runs(
        tmp_path, monkeypatch, site, said):
    """72 h in PBS's words, on Slurm sites: alpha allows 24 h at most, gamma has no limit."""
    fed = _fed(tmp_path, monkeypatch)
    text = ("name: w\nsteps:\n"
            f"  - {{name: prep, site: alpha, script: \"{PLAIN}\"}}\n"
            f"  - {{name: long, needs: [prep], site: {site}, dialect: pbs, "
            f"script: \"{LONG_PBS}\"}}\n")
    try:
        if said is None:
            view = await fed.run_workflow(text, origin={"face": "test"})
            assert [(s.name, s.site) for s in view.steps if s.job] == [
                ("prep", "alpha"), ("long", "gamma")]  # queued ahead, where it can run
            return
        refusal = await refused_before_any_submit(fed, text)
        assert refusal.startswith("workflow 'w' refused before any step ran: " + said)
        assert fed.store.list_workflows() == []
    finally:
        await fed.close()


# -- 5. one step; 500 independent steps -------------------------------------------------------

async def test_a_workflow_of_one_step_is_submitted_once(tmp_path, monkeypatch):
    fed = _fed(tmp_path, monkeypatch)
    try:
        view = await fed.run_workflow(
            f"name: one\nsteps:\n  - {{name: only, site: alpha, script: \"{PLAIN}\"}}\n",
            origin={"face": "test"})
        assert [(s.name, s.site) for s in view.steps] == [("only", "alpha")]
        assert view.steps[0].job is not None
        assert fed.sbatch_calls.read_text().count("called") == 1
    finally:
        await fed.close()


def test_500_independent_steps_are_read_within_bounds_of_time_and_memory():
    text = "name: wide\nsteps:\n" + "".join(
        f"  - {{name: s{i:03d}, site: alpha, script: ./run {i}, outputs: [o{i}.h5]}}\n"
        for i in range(500))
    with traced_memory() as memory:
        t0 = time.process_time()  # CPU, not wall time: a busy machine stretches the latter
        wf = load(text)
        took = time.process_time() - t0
    assert len(wf.order()) == 500 and all(not s.needs for s in wf.steps)
    assert took < 20, took  # about 3 s of CPU here, traced
    assert memory.peak < 64 << 20, memory  # about 20 MB traced


async def test_independent_steps_are_submitted_one_at_a_time_with_few_commands_each(
        tmp_path, monkeypatch):
    """40 steps ready at once: never two sbatch at the same time (the site is not hammered),
    and at most 3 commands a step at the site (its directory, the submit, a share of the
    queue reads)."""
    from diamond_jupyter.transports.local import LocalTransport

    fed = _fed(tmp_path, monkeypatch)
    busy, overlaps, n = tmp_path / "busy", tmp_path / "overlaps", tmp_path / "n"
    (tmp_path / "sbatch").write_text(  # _fed's recorder, inside an overlap check
        f"#!/bin/sh\nmkdir {busy} 2>/dev/null || echo x >> {overlaps}\n"
        f"echo called >> {fed.sbatch_calls}\nn=$(cat {n} 2>/dev/null || echo 500)\n"
        f"echo $((n + 1)) > {n}\nrmdir {busy}\necho $((n + 1))\n")
    commands = noted_calls(monkeypatch, LocalTransport, "run", "run_fast",
                           note=lambda transport, argv, **kw: " ".join(argv))
    steps = 40
    try:
        await run_independent_steps(fed, steps)
        assert not overlaps.exists()
        assert len(commands) <= 3 * steps, (len(commands), commands[:10])
    finally:
        await fed.close()


# -- 6. resuming after the file changed on disk -----------------------------------------------

async def test_a_resumed_workflow_runs_the_recorded_text_not_the_changed_file(tmp_path):
    """The file (and the script file it names) are rewritten after the run started: the
    engine that adopts the workflow submits the recorded step, never a mix of the two."""
    from test_workflow_unseen import _Ops

    from diamond_jupyter.model import JobState
    from diamond_jupyter.store import Store
    from diamond_jupyter.workflow.engine import WorkflowEngine

    flow, script = tmp_path / "flow.yaml", tmp_path / "fit.sh"
    script.write_text("#!/bin/bash\necho fit v1\n")
    flow.write_text("name: w\nqueue_ahead: false\nsteps:\n"
                    "  - {name: prep, site: alpha, script: x}\n"
                    "  - {name: fit, site: alpha, needs: [prep], script_file: fit.sh}\n")
    with Store(tmp_path / "s.sqlite") as store:
        first = WorkflowEngine(_Ops(store))
        wid = await first.run(load_workflow(flow, sites=SITES))
        await first.close()  # handed back: `diamond resume` takes it
        script.write_text("#!/bin/bash\necho fit v2\n")
        flow.write_text("name: w\nsteps:\n  - {name: prep, site: beta, script: y}\n"
                        "  - {name: other, site: beta, script: z}\n")
        prep = store.job_by_token(store.get_workflow(wid).step("prep").token)
        store.apply_state(prep.id, JobState.COMPLETED, exit_code=0)
        ops = _Ops(store)
        async with next_engine(ops, [wid]):  # adopted and advanced
            assert [s[:2] for s in ops.submits] == [("fit", "alpha")]
            assert ops.specs["fit"].script.endswith("echo fit v1\n")
            assert [s.name for s in store.get_workflow(wid).steps] == ["prep", "fit"]


# -- 7. a step not checked before the run is said so, not only logged -------------------------

async def test_fault_a_step_whose_site_did_not_answer_says_it_was_not_checked(
        tmp_path, monkeypatch, capsys):
    """gamma does not answer: train, pinned there, is left to its submit. Before: a log line
    only; now its reason (what `workflow run` prints) and a `workflow.step` event say so."""
    import argparse

    from test_workflow_unrunnable import _two_steps

    from diamond_jupyter.cli.workflow import _out

    fed = _fed(tmp_path, monkeypatch, unreachable=("gamma",))
    why = ("not checked before the run: gamma did not answer (no route to host); its submit "
           "checks it")
    try:
        view = await fed.run_workflow(_two_steps("gamma"), origin={"face": "test"})
        assert [(s.name, s.reason) for s in view.steps] == [("prep", None), ("train", why)]
        said = [e.data for e in fed.store.events_since(0, kinds=["workflow.step"])
                if e.data.get("step") == "train"]
        assert said and said[0]["unchecked"] == why
        _out(argparse.Namespace(json=False), view)
        assert f"({why})" in capsys.readouterr().out
    finally:
        await fed.close()
