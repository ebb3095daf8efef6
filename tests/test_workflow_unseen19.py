"""Workflow files, nineteenth sweep: files and runs a real user writes. A step pinned to a
site that leaves the sites file while the workflow runs (the engine restarted on the edited
file); `diamond workflow cancel` while a step's release is on its way; two workflows of one
name at once, and a finished one run again; a workflow's name given where its id goes; a
step asking for `hedge`; environment variables in a `script_file`'s path, an empty script
file, and steps given inline and by a file relative to the workflow file, not the current
directory; an array step whose tasks fan out to the steps after it; very long step names in
`diamond workflow status`.

The runs are on the real engine and store (the operations below the facade recorded,
`workflow_ops`; no test bed), but for the site leaving the sites file, run on a real
`Federation` over local sites (their scheduler commands fakes that record each call), and
asserted as a user sees them (`workflow status --json`, the CLI's own lines)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from local_slurm import write_commands
from sweep_helpers import SITES, cli_sites_counting_sbatch, load, refused
from test_workflow_unrunnable import PLAIN, _fed
from test_workflow_unseen import _Ops, _until
from test_workflow_unseen13 import _Run, runs_fixture  # noqa: F401 (the `runs` fixture)
from test_workflow_unseen15 import _nothing_lost, _shown
from test_workflow_unseen16 import CROSS, _HeldRelease

from diamond_jupyter.cli import main as cli
from diamond_jupyter.model import BadInput, JobState
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.model import load_workflow

# -- 1. a step's site leaves the sites file while the workflow runs ------------------------

LEAVING = f"""\
name: leaving
steps:
  - {{name: prep, site: alpha, script: "{PLAIN}"}}
  - {{name: post, site: gamma, needs: [prep], script: "{PLAIN}"}}
"""


def _without_gamma(fed, tmp_path: Path):
    """The engine started after gamma was taken out of the sites file: alpha alone, on the
    first engine's store; alpha's cancel and queue commands a fake recording each call in
    tmp_path/alpha-calls (never the machine's own Slurm)."""
    from diamond_jupyter.config import FederationConfig
    from diamond_jupyter.federation import Federation

    fakes = ("scancel", "squeue", "sacct", "scontrol")
    write_commands(tmp_path / "alpha-bin", {
        prog: f'echo "{prog} $*" >> {tmp_path}/alpha-calls' for prog in fakes})
    alpha = next(s for s in fed.config.sites if s.name == "alpha")
    commands = {**alpha.commands, **{prog: str(tmp_path / "alpha-bin" / prog)
                                     for prog in fakes}}
    cfg = FederationConfig(sites=[alpha.model_copy(update={"commands": commands})])
    return Federation(cfg, store=Store(tmp_path / "s.sqlite"))


async def test_fault_a_step_whose_pinned_site_left_the_sites_file_fails_the_workflow_saying_so(
        tmp_path, monkeypatch):
    """Before: post, queued on gamma behind its gate, was marked ready once prep ended (its
    gate's cancel refused: gamma unknown), shown PENDING with no reason, and the workflow
    stayed RUNNING for ever, only a log line saying why. Now the next engine fails it at
    once, naming the site and the sites it has; prep's job is cancelled with the rest."""
    fed = _fed(tmp_path, monkeypatch)
    try:
        first = await fed.run_workflow(LEAVING, origin={"face": "test"})
    finally:
        await fed.close()
    assert [(s.name, s.site) for s in first.steps] == [("prep", "alpha"), ("post", "gamma")]
    assert all(s.job for s in first.steps)
    again = _without_gamma(fed, tmp_path)
    try:
        assert await again.workflow_engine.resume() == [first.id]
        view = again.workflow(first.id).contract()
    finally:
        await again.close()
    gone = ("its site gamma is no longer in the sites file (configured: alpha); a job there "
            "is neither followed nor cancelled from here")
    assert (view["state"], view["reason"]) == ("FAILED", f"step 'post' failed: {gone}")
    post = view["steps"][1]
    assert (post["state"], post["site"], post["reason"]) == ("FAILED", "gamma", gone)
    assert view["steps"][0]["state"] == "CANCELLED"
    prep_native = first.steps[0].job.split(":")[1]
    assert f"scancel {prep_native}" in (tmp_path / "alpha-calls").read_text()


ORDERED = """\
    name: ordered
    queue_ahead: false
    steps:
      - {name: prep, site: alpha, script: ./prep}
      - {name: post, site: gamma, needs: [prep], script: ./post}
    """


async def test_fault_a_waiting_step_pinned_to_a_site_that_left_is_never_submitted_there(runs):
    """Without queue-ahead post waits for prep to end; gamma leaves meanwhile. Before, it
    was submitted to gamma all the same (the real facade failed on the unknown site and the
    advance stopped with a log line). Now the workflow fails naming it, nothing submitted."""
    run = await runs(ORDERED)
    assert run.submitted("prep") == ["alpha"] and run.submitted("post") == []
    run.ops.sites = ("alpha", "beta")  # the engine's sites file, edited
    await run.end("prep")
    assert run.submitted("post") == []
    state, reason = run.state()
    assert state == "FAILED", reason
    assert reason.startswith("step 'post' cannot run: its site gamma is no longer in the "
                             "sites file (configured: alpha, beta)")
    assert _shown(run) == {"prep": ("COMPLETED", "alpha"), "post": ("FAILED", None)}
    _nothing_lost(run)


ELSEWHERE = """\
    name: elsewhere
    steps:
      - {name: prep, site: alpha, script: ./prep}
      - {name: post, site: gamma, needs: [prep], script: ./post, retries: 1,
         on_failure: resubmit-elsewhere}
    """


async def test_a_step_that_may_go_elsewhere_runs_again_on_a_site_still_configured(runs):
    """post may go elsewhere after a failure: its site leaving is that failure, and its
    retry is placed on a site of the file (here beside prep, behind it by afterok); the
    workflow completes."""
    run = await runs(ELSEWHERE)
    assert run.submitted("post") == ["gamma"]
    run.ops.sites = ("alpha", "beta")
    await run.eng.advance(run.wid)
    await _until(run.eng, run.wid, {"post": "queued"})
    assert run.submitted("post") == ["gamma", "alpha"]
    [dep] = run.ops.specs["post"].dependencies
    assert (dep.kind, dep.job_ids) == ("afterok", [run.job("prep").native_id])
    post = next(s for s in run.eng.view(run.wid).steps if s.name == "post")
    assert (post.attempt, post.site, post.state) == (1, "alpha", JobState.PENDING)
    [retry] = [e for e in run.store.events_since(0) if e.data.get("retry")]
    assert retry.data["reason"].startswith("attempt 1 failed on gamma: its site gamma is no "
                                           "longer in the sites file"), retry.data
    await run.finish("prep", "post")
    assert run.state() == ("COMPLETED", None)


# -- 2. a cancel while a step is being released ----------------------------------------------

async def test_fault_a_cancel_while_a_release_is_on_its_way_leaves_the_step_cancelled(tmp_path):
    """a ended and b's release was sent when the user cancels the workflow. Before, the
    release's return marked b released (and published it so) after the workflow had
    ended CANCELLED. Now b stays cancelled, its job cancelled, and no `released` event
    follows the cancel."""
    with Store(tmp_path / "s.sqlite") as store:
        run = _Run(store, _HeldRelease(store))
        try:
            await run.start(CROSS)
            await run.end("a")
            await asyncio.wait_for(run.ops.started.wait(), 10)
            b = run.job("b")
            await run.eng.cancel(run.wid)
            run.ops.done.set()  # the release returns after the cancel
            await _until(run.eng, run.wid, {"b": "cancelled"})
            await run.eng.advance(run.wid)
            assert run.phases() == {"a": "done", "b": "cancelled"}
            assert run.state() == ("CANCELLED", "cancelled by request")
            assert b.id in run.ops.cancels
            events = [ev for ev in store.events_since(0, kinds=["workflow.step"])
                      if ev.data.get("step") == "b"]
            assert events[-1].data.get("phase") == "cancelled", [e.data for e in events]
            assert _shown(run) == {"a": ("COMPLETED", "alpha"), "b": ("CANCELLED", "beta")}
            _nothing_lost(run)
        finally:
            await run.eng.close()


# -- 3. two workflows of one name, and one run again ----------------------------------------

NIGHTLY = """\
    name: nightly
    steps:
      - {name: prep, site: alpha, script: ./prep, outputs: [d.bin]}
      - {name: fit, site: alpha, needs: [prep], inputs: [{from: prep, path: d.bin}],
         script: ./fit}
      - {name: post, site: beta, needs: [fit], script: ./post}
    """


def _jobs_of(store: Store, wid: str) -> set[str]:
    return {j.id for j in store.list_jobs(limit=None) if (j.origin or {}).get("workflow") == wid}


async def test_two_workflows_of_one_name_at_once_each_keep_their_own_jobs(tmp_path):
    """Two `nightly` runs started together: two ids, three jobs each in directories of
    their own; the first failing cancels its own steps only, the second completes."""
    from diamond_jupyter.workflow.engine import WorkflowEngine

    with Store(tmp_path / "s.sqlite") as store:
        ops = _Ops(store)
        eng = WorkflowEngine(ops)
        try:
            one, two = await asyncio.gather(eng.run(load(NIGHTLY)), eng.run(load(NIGHTLY)))
            assert one != two
            jobs_one, jobs_two = _jobs_of(store, one), _jobs_of(store, two)
            assert len(jobs_one) == len(jobs_two) == 3 and not jobs_one & jobs_two
            workdirs = [store.get_job(j).workdir for j in jobs_one | jobs_two]
            assert len(set(workdirs)) == 6
            first = store.get_workflow(one)
            store.apply_state(store.job_by_token(first.step("prep").token).id,
                              JobState.FAILED, exit_code=1)
            await eng.advance(one)
            await eng.advance(two)
            assert store.get_workflow(one).state == "FAILED"
            assert set(ops.cancels) <= jobs_one and len(ops.cancels) == 2
            second = store.get_workflow(two)
            for name in ("prep", "fit", "post"):
                store.apply_state(store.job_by_token(second.step(name).token).id,
                                  JobState.COMPLETED, exit_code=0)
                await eng.advance(two)
            assert store.get_workflow(two).state == "COMPLETED"
        finally:
            await eng.close()


async def test_a_finished_workflow_run_again_submits_every_step_once_more(runs):
    """Nothing is cached between runs: the file run again is a new workflow whose every
    step goes in once; the first keeps its state and its jobs, untouched."""
    run = await runs(NIGHTLY)
    await run.finish("prep", "fit")
    await _until(run.eng, run.wid, {"post": "released"})
    await run.end("post")
    assert run.state() == ("COMPLETED", None)
    first_jobs = _jobs_of(run.store, run.wid)
    before = len(run.ops.submits)
    again = await run.eng.run(load(NIGHTLY))
    assert again != run.wid
    assert sorted(n for n, _, _ in run.ops.submits[before:]) == ["fit", "post", "prep"]
    assert _jobs_of(run.store, run.wid) == first_jobs
    assert run.store.get_workflow(run.wid).state == "COMPLETED"
    assert run.ops.cancels == []


def test_fault_a_workflows_name_given_for_its_id_lists_the_ids_of_that_name(tmp_path, capsys):
    """`diamond workflow status nightly`: before, "no workflow 'nightly' in the store" (which
    it is, by name); now the ids of the workflows of that name, newest first, exit 2."""
    cfg, calls = cli_sites_counting_sbatch(tmp_path)
    store = Store(tmp_path / "s.sqlite")
    made = [store.create_workflow("nightly", {}, [], workflow_id=f"wf-night{i}")
            for i in range(2)]
    for rec in made:
        store.set_workflow_state(rec.id, "COMPLETED")
    store.close()
    assert cli(["workflow", "status", "nightly", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err.strip()
    assert "'nightly' is a workflow's name, not its id: give the id of the one meant; " \
           "workflows named nightly, newest first: wf-night1 (COMPLETED), wf-night0 " \
           "(COMPLETED)" in err, err
    assert "\n" not in err and not calls.exists()
    assert cli(["workflow", "status", "nope", "--config", str(cfg)]) == 2
    assert "no workflow 'nope' in the store" in capsys.readouterr().err


# -- 4. a step asking for hedge --------------------------------------------------------------

def test_fault_a_step_asking_for_hedge_says_what_a_workflow_has_instead():
    """Before: "unknown field (accepted: ...)", as for a typo. `diamond submit --hedge`
    exists, so a user tries it on a step: said why a step is not hedged and what gives
    the same (a list of sites, or auto; resubmit-elsewhere)."""
    msg = refused("""\
        name: w
        steps:
          - {name: prep, site: alpha, script: ./prep}
          - name: sim
            needs: [prep]
            hedge: 2
            script: ./sim
        """)
    assert msg.startswith("the workflow: steps['sim'].hedge: not supported: a step is one "
                          "job, whose id the steps after it wait on, so it is never hedged"), msg
    assert "site: [alpha, beta]" in msg and "on_failure: resubmit-elsewhere" in msg
    assert msg.endswith("(line 6)"), msg


# -- 5. script files: variables, empty, relative to the workflow file -------------------------

def _beside(tmp_path: Path, text: str, **scripts: str) -> Path:
    """tmp_path/flow.yaml holding `text`, and each of `scripts` (a path: its text) beside."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    for path, body in scripts.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(body)
    flow = tmp_path / "flow.yaml"
    flow.write_text(text)
    return flow


@pytest.mark.parametrize("written", ["$SCRIPTS/prep.sh", "${SCRIPTS}/prep.sh"])
def test_fault_a_variable_in_a_script_files_path_is_expanded_as_the_shell_would(
        tmp_path, monkeypatch, written):
    """Before: looked up as the literal name beside the workflow ("no such file
    (.../$SCRIPTS/prep.sh)"). The file is read where `diamond` runs, as ~ is expanded."""
    shared = tmp_path / "shared"
    monkeypatch.setenv("SCRIPTS", str(shared))
    flow = _beside(tmp_path / "run", f"name: w\nsteps:\n  - {{name: a, script_file: "
                   f"'{written}'}}\n")
    (shared).mkdir()
    (shared / "prep.sh").write_text("#!/bin/bash\necho prep\n")
    assert load_workflow(flow, sites=SITES).step("a").script == "#!/bin/bash\necho prep\n"


def test_fault_an_unset_variable_in_a_script_file_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv("SCRIPTS_NOT_SET", raising=False)
    flow = _beside(tmp_path, "name: w\nsteps:\n  - {name: a, script: ./a}\n"
                   "  - {name: b, script_file: $SCRIPTS_NOT_SET/b.sh}\n")
    msg = refused(flow)
    assert msg == (f"{flow}: step 'b': script_file '$SCRIPTS_NOT_SET/b.sh': the environment "
                   "variable $SCRIPTS_NOT_SET is not set here (a script_file's variables are "
                   "expanded from the environment `diamond` runs in): set it, or give the "
                   "path itself (line 4)"), msg


def test_a_file_named_with_a_dollar_beside_the_workflow_is_taken_as_named(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("RUN", "elsewhere")
    flow = _beside(tmp_path, "name: w\nsteps:\n  - {name: a, script_file: '$RUN.sh'}\n",
                   **{"$RUN.sh": "#!/bin/bash\necho literal\n"})
    assert load_workflow(flow, sites=SITES).step("a").script == "#!/bin/bash\necho literal\n"


def test_a_variable_in_a_script_file_of_a_workflow_given_as_text_is_not_expanded(
        monkeypatch, tmp_path):
    """A workflow given as text is read by the server: its environment is not the writer's,
    and its values are no caller's to see (an error would show the path expanded)."""
    monkeypatch.setenv("SECRET_DIR", "s3cr3t-value")
    with pytest.raises(BadInput) as e:
        load_workflow("name: w\nsteps:\n  - {name: a, script_file: $SECRET_DIR/a.sh}\n",
                      sites=SITES, root=tmp_path)
    msg = str(e.value)
    assert "names the environment variable $SECRET_DIR, which is not expanded in a workflow " \
           "given as text" in msg, msg
    assert "s3cr3t-value" not in msg


def test_fault_an_empty_script_file_names_the_file_not_script(tmp_path):
    """Before: "steps['a'].script: the script is empty", naming a field the file does not
    have."""
    flow = _beside(tmp_path, "name: w\nsteps:\n  - {name: a, script_file: steps/a.sh}\n",
                   **{"steps/a.sh": "\n  \n"})
    msg = refused(flow)
    assert msg == (f"{flow}: step 'a': script_file 'steps/a.sh' ({tmp_path}/steps/a.sh) is "
                   "empty: write the step's commands in it (line 3)"), msg


def test_inline_and_file_scripts_mixed_are_read_beside_the_workflow_not_the_cwd(
        tmp_path, monkeypatch):
    """The workflow in project/, run from another directory holding files of the same
    names: each script_file is project's; the inline script is kept as written."""
    project = tmp_path / "project"
    flow = _beside(project, """\
name: mixed
steps:
  - name: prep
    script: |
      #!/bin/bash
      #SBATCH -t 5
      echo inline
  - {name: fit, needs: [prep], script_file: scripts/fit.sh}
  - {name: post, needs: [fit], script_file: ./scripts/../post.sh}
""", **{"scripts/fit.sh": "#!/bin/bash\necho project-fit\n",
        "post.sh": "#!/bin/bash\necho project-post\n"})
    other = tmp_path / "elsewhere"
    _beside(other, "", **{"scripts/fit.sh": "echo wrong\n", "post.sh": "echo wrong\n"})
    monkeypatch.chdir(other)
    wf = load_workflow(Path("../project/flow.yaml"), sites=SITES)
    assert [wf.step(n).script for n in ("prep", "fit", "post")] == [
        "#!/bin/bash\n#SBATCH -t 5\necho inline\n", "#!/bin/bash\necho project-fit\n",
        "#!/bin/bash\necho project-post\n"]
    assert flow.exists()


# -- 6. an array step's tasks fanning out -----------------------------------------------------

ARRAY = """\
    name: array
    steps:
      - name: sweep
        site: alpha
        outputs: [results/]
        script: |
          #!/bin/bash
          #SBATCH --array=0-99%10
          #SBATCH -t 10
          mkdir -p results && ./sim $SLURM_ARRAY_TASK_ID > results/$SLURM_ARRAY_TASK_ID.out
      - {name: reduce, site: alpha, needs: [sweep], inputs: [{from: sweep, path: results/}],
         script: ./reduce results}
      - {name: plot, site: beta, needs: [reduce], script: ./plot}
    """


async def test_an_array_steps_tasks_are_one_step_that_the_next_waits_on_whole(runs):
    """The array is one job: reduce, on its site, waits on it by afterok (which Slurm reads
    as every task), its results/ directory copied in whole; it is submitted once, with its
    array kept."""
    run = await runs(ARRAY)
    sweep = run.ops.specs["sweep"]
    assert sweep.array is not None and sweep.array.expression == "0-99%10"
    [dep] = run.ops.specs["reduce"].dependencies
    assert (dep.kind, dep.job_ids) == ("afterok", [run.job("sweep").native_id])
    assert "cp -pR -- " in run.ops.specs["reduce"].script and "results" in \
        run.ops.specs["reduce"].script
    await run.finish("sweep", "reduce")
    await _until(run.eng, run.wid, {"plot": "released"})
    await run.end("plot")
    assert run.state() == ("COMPLETED", None)
    assert [n for n, _, _ in run.ops.submits].count("sweep") == 1


# -- 7. very long step names in `diamond workflow status` -------------------------------------

def test_steps_named_with_63_characters_keep_the_status_table_straight(tmp_path, capsys):
    """Step names of the most characters a name takes and a long site name: every row's
    state, site and job start in the same columns."""
    from types import SimpleNamespace

    from diamond_jupyter.cli.workflow import _out
    from diamond_jupyter.workflow.model import StepView, WorkflowView

    long_name = "preprocess_the_whole_ocean_reanalysis_for_1980_to_2020_monthly_"[:63]
    assert len(long_name) == 63
    view = WorkflowView(id="wf-1", name="n" * 63, state=JobState.RUNNING, steps=[
        StepView(name=long_name, site="alpha", job="alpha:1", state=JobState.COMPLETED),
        StepView(name="b" * 40, site="a-site-with-a-long-name", job="a-site:123456789",
                 state=JobState.CANCELLED, reason="cancelled by request"),
        StepView(name="c", state=JobState.PENDING)])
    _out(SimpleNamespace(json=False), view)
    rows = capsys.readouterr().out.splitlines()[1:]
    assert len(rows) == 3
    states = [r.index(s) for r, s in zip(rows, ("COMPLETED", "CANCELLED", "PENDING"),
                                          strict=True)]
    sites = [r.index(s) for r, s in zip(rows, ("alpha", "a-site-with", "-"), strict=True)]
    assert len(set(states)) == 1 and len(set(sites)) == 1, rows
    assert rows[0].split()[0] == long_name and rows[1].endswith("(cancelled by request)")
    assert json.loads(json.dumps(view.contract()))["steps"][0]["name"] == long_name
