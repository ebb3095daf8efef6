"""Workflow files, twentieth sweep: files and runs a real user writes. `diamond workflow retry`
(no such command: said how a step or a workflow runs again); `retries: 2` spent on a node
failure as on a script error; a workflow of 200 steps in `diamond workflow status` (counted
by state above its rows); one script over several parameters (`matrix:`); a step pinned to a
site without its partition; a cancel that leaves what finished steps made; a file saved with
a byte-order mark and CRLF (or CR) line ends; `needs:` as a string or a list; cycles named;
the engine's store moved to another directory; two engines on one store advancing one
workflow; a native job id the scheduler gives again.

The runs are on the real engine and store (the operations below the facade recorded,
`workflow_ops`; no test bed), but for the partition, refused by a real `Federation` over
local sites (a fake sbatch recording each call), and asserted as a user sees them
(`workflow status --json`, the CLI's own lines)."""

from __future__ import annotations

import asyncio
import itertools
import shutil
from types import SimpleNamespace

import pytest
from sweep_helpers import SITES, independent_steps, load, refused
from test_workflow_unrunnable import _fed
from test_workflow_unseen import _Ops
from test_workflow_unseen13 import _Run, runs_fixture  # noqa: F401 (the `runs` fixture)
from test_workflow_unseen15 import _nothing_lost, _shown

from diamond_jupyter.cli import main as cli
from diamond_jupyter.model import BadInput, JobState
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.engine import WorkflowEngine
from diamond_jupyter.workflow.model import load_workflow

CHAIN = """\
    name: chain
    steps:
      - {name: prep, site: alpha, script: ./prep, retries: 2}
      - {name: solve, site: alpha, needs: [prep], script: ./solve}
      - {name: post, site: beta, needs: [solve], script: ./post}
    """


# -- 1. `diamond workflow retry` -----------------------------------------------------------

def test_fault_workflow_retry_says_how_a_step_and_a_workflow_run_again(capsys):
    """Before: argparse's `invalid choice: 'retry'` and the list of commands, with nothing on
    how a failed step runs again. Now: exit 2 and one line saying it: `retries: N` on the
    step, or the file run again as a new workflow."""
    assert cli(["workflow", "retry", "wf-1", "prep"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert "there is no `diamond workflow retry`" in err
    assert "`retries: N`" in err and "`diamond workflow run FILE`" in err


# -- 2. retries: 2 on a node failure and on a script error ---------------------------------

async def test_fault_retries_two_are_spent_alike_and_each_failure_is_shown_while_it_reruns(
        runs):
    """prep's node fails (its job FAILED, reason NodeFail), then its script exits 3 twice:
    two runs more than the first, on its pinned site, then the workflow FAILED naming prep;
    solve and post never released. Before: the step's reason was cleared as its next attempt
    was submitted (`attempt: 1` and no word of why), and a failure without the scheduler's
    reason read `failed: failed`; now the attempt that failed and how (the exit code)."""
    run = await runs(CHAIN)
    run.store.apply_state(run.job("prep").id, JobState.FAILED, reason="NodeFail")
    await run.eng.advance(run.wid)
    prep = run.eng.view(run.wid).contract()["steps"][0]
    assert (prep["state"], prep["attempt"]) == ("PENDING", 1)
    assert prep["reason"] == "attempt 1 failed on alpha: NodeFail"
    await run.end("prep", JobState.FAILED)  # the script's error: exit 1
    prep = run.eng.view(run.wid).contract()["steps"][0]
    assert (prep["attempt"], prep["reason"]) == (
        2, "attempt 2 failed on alpha: failed (exit code 1)")
    await run.end("prep", JobState.FAILED)
    assert run.submitted("prep") == ["alpha"] * 3
    assert run.state() == ("FAILED", "step 'prep' failed: failed (exit code 1)")
    assert _shown(run) == {"prep": ("FAILED", "alpha"), "solve": ("CANCELLED", "alpha"),
                           "post": ("CANCELLED", "beta")}
    assert run.ops.releases == []
    _nothing_lost(run)


async def test_a_retried_step_that_then_completes_lets_the_workflow_complete(runs):
    run = await runs(CHAIN)
    await run.end("prep", JobState.FAILED)
    await run.finish("prep", "solve", "post")
    assert run.state() == ("COMPLETED", None)
    assert run.submitted("prep") == ["alpha", "alpha"]


# -- 3. 200 steps in `diamond workflow status` ----------------------------------------------

def test_fault_status_of_200_steps_counts_them_by_state_above_the_rows(capsys):
    """Before: 200 rows and nothing else: how many are done or failed was for the user to
    count. Now the header is followed by the steps counted by state; every step keeps its
    row, in the same columns."""
    from diamond_jupyter.cli.workflow import _out
    from diamond_jupyter.workflow.model import StepView, WorkflowView

    states = [JobState.COMPLETED] * 150 + [JobState.RUNNING] * 47 + [JobState.FAILED] * 3
    view = WorkflowView(id="wf-big", name="big", state=JobState.RUNNING, steps=[
        StepView(name=f"s{i:03d}", site="alpha", job=f"alpha:{1000 + i}", state=state)
        for i, state in enumerate(states)])
    _out(SimpleNamespace(json=False), view)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split("\t") == ["wf-big", "RUNNING", "big"]
    assert lines[1] == "  200 steps: 150 COMPLETED, 47 RUNNING, 3 FAILED"
    rows = lines[2:]
    assert [r.split()[0] for r in rows] == [f"s{i:03d}" for i in range(200)]
    assert len({r.index("alpha") for r in rows}) == 1


def test_status_of_a_few_steps_has_no_count_line(capsys):
    """Three steps: the rows alone, as before."""
    from diamond_jupyter.cli.workflow import _out
    from diamond_jupyter.workflow.model import StepView, WorkflowView

    view = WorkflowView(id="wf-1", name="small", state=JobState.PENDING, steps=[
        StepView(name=n, state=JobState.PENDING) for n in ("a", "b", "c")])
    _out(SimpleNamespace(json=False), view)
    lines = capsys.readouterr().out.splitlines()
    assert [r.split()[0] for r in lines[1:]] == ["a", "b", "c"]


async def test_a_workflow_of_200_steps_runs_each_once_and_lists_each(runs):
    """200 steps needing none other: each submitted once, each listed by its name."""
    run = await runs(independent_steps(200, script="./x"))
    names = [f"s{i:02d}" for i in range(200)]
    assert sorted(name for name, _, _ in run.ops.submits) == sorted(names)
    assert [s.name for s in run.eng.view(run.wid).steps] == names


# -- 4. one script, several parameters -------------------------------------------------------

def test_a_matrix_of_parameters_is_refused_saying_what_to_write_instead():
    msg = refused("""\
        name: sweep
        steps:
          - {name: run, site: alpha, script: ./run.sh, matrix: {n: [1, 2, 4]}}
        """)
    assert "steps['run'].matrix: not supported" in msg
    assert "one step per value" in msg and "#SBATCH --array" in msg and "(line 3)" in msg


def test_one_script_with_different_parameters_as_steps_sharing_an_anchor():
    wf = load("""\
        name: sweep
        x-run: &run {site: alpha, script_file: ./run.sh, retries: 1}
        steps:
          - {<<: *run, name: n1, script: "./run.sh 1"}
          - {<<: *run, name: n2, script: "./run.sh 2"}
        """.replace("script_file: ./run.sh, ", ""))
    assert [(s.name, s.script, s.site, s.retries) for s in wf.steps] == [
        ("n1", "./run.sh 1", "alpha", 1), ("n2", "./run.sh 2", "alpha", 1)]


# -- 5. a step pinned to a site without its partition ---------------------------------------

async def test_a_step_pinned_to_a_site_without_its_partition_is_refused_before_any_submit(
        tmp_path, monkeypatch):
    fed = _fed(tmp_path, monkeypatch)
    text = ("name: part\nsteps:\n"
            '  - {name: prep, site: alpha, script: "#!/bin/bash\\n#SBATCH -t 5\\n'
            '#SBATCH -p nosuchpart\\necho prep\\n"}\n'
            '  - {name: post, site: alpha, needs: [prep], script: "#!/bin/bash\\n'
            '#SBATCH -t 5\\necho post\\n"}\n')
    try:
        with pytest.raises(BadInput) as e:
            await fed.run_workflow(text, origin={"face": "test"})
        assert fed.workflows() == []
    finally:
        await fed.close()
    msg = str(e.value)
    assert "step 'prep' cannot run on site alpha" in msg
    assert "partition 'nosuchpart' not found (site has: compute, debug)" in msg
    assert not (tmp_path / "sbatch-calls").exists()  # nothing submitted


# -- 6. a cancel leaves what finished steps made ---------------------------------------------

async def test_a_cancel_leaves_finished_steps_completed_and_cancels_only_live_ones(runs):
    """prep COMPLETED (its job and outputs stay on its site); the cancel cancels solve and
    post alone, and the status still shows prep COMPLETED with its job."""
    run = await runs(CHAIN)
    prep_job = run.job("prep").id
    await run.end("prep")
    await run.eng.cancel(run.wid)
    assert prep_job not in run.ops.cancels
    assert set(run.ops.cancels) == {run.job("solve").id, run.job("post").id}
    prep = run.eng.view(run.wid).contract()["steps"][0]
    assert (prep["state"], prep["job"]) == ("COMPLETED", prep_job)
    assert run.state() == ("CANCELLED", "cancelled by request")
    _nothing_lost(run)


# -- 7. byte-order mark, CRLF and CR line ends ------------------------------------------------

@pytest.mark.parametrize("end", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_a_file_saved_with_a_byte_order_mark_and_windows_or_old_mac_line_ends(tmp_path, end):
    text = end.join(["name: saved", "steps:", "  - name: prep", "    site: alpha",
                     "    script: |", "      #!/bin/bash", "      #SBATCH -N 1", "      echo hi",
                     "  - {name: post, site: beta, needs: [prep], script: ./post}", ""])
    path = tmp_path / "wf.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    wf = load_workflow(path, sites=SITES)
    assert [s.name for s in wf.steps] == ["prep", "post"]
    assert wf.step("prep").script == "#!/bin/bash\n#SBATCH -N 1\necho hi\n"  # no \r left
    assert wf.step("post").needs == ["prep"]


def test_a_byte_order_mark_inside_a_name_is_refused_where_it_is():
    msg = refused("name: w\nsteps:\n  - {name: \ufeffa, site: alpha, script: x}\n")
    assert "line 3, column 12 holds a byte-order mark" in msg


# -- 8. needs: as a string or a list; cycles ---------------------------------------------------

@pytest.mark.parametrize(("needs", "meant"), [("prep", "[prep]"), ("'prep, mesh'", "[prep, mesh]"),
                                              ("prep mesh", "[prep, mesh]")])
def test_needs_given_as_a_string_is_refused_with_the_list_meant(needs, meant):
    msg = refused(f"""\
        name: w
        steps:
          - {{name: prep, site: alpha, script: x}}
          - {{name: mesh, site: alpha, script: x}}
          - {{name: solve, site: alpha, needs: {needs}, script: x}}
        """)
    assert f"needs is a list: write needs: {meant}" in msg and "(line 5)" in msg


def test_a_cycle_is_named_step_by_step():
    msg = refused("""\
        name: w
        steps:
          - {name: a, site: alpha, needs: [c], script: x}
          - {name: b, site: alpha, needs: [a], script: x}
          - {name: c, site: alpha, needs: [b], script: x}
          - {name: d, site: alpha, needs: [c], script: x}
        """)
    assert msg.startswith("workflow 'w' has a cycle: a -> b -> c -> a (line ")  # d: not in it


def test_a_step_needing_itself_is_named():
    msg = refused("name: w\nsteps:\n  - {name: a, site: alpha, needs: [a], script: x}\n")
    assert msg == "step 'a' needs itself (a cycle) (line 3)"


# -- 9. the store moved; two engines on one store ----------------------------------------------

async def test_a_workflow_resumes_from_its_store_moved_to_another_directory(tmp_path):
    """The store's directory is renamed between two engines: the next engine, on the new
    path, resumes the workflow and submits only what was not submitted."""
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    with Store(old / "s.sqlite") as store:
        first = WorkflowEngine(_Ops(store))
        wid = await first.run(load(CHAIN))
        await first.close()
        submitted = len(first.ops.submits)
    shutil.move(str(old), str(new))
    with Store(new / "s.sqlite") as store:
        run = _Run(store)
        run.ops.engine_id, run.wid = "engine-2", wid
        try:
            assert await run.eng.resume() == [wid]
            for step in ("prep", "solve", "post"):
                await run.end(step)
            assert run.state()[0] == "COMPLETED"
            assert len(run.ops.submits) + submitted == 3  # each step once, in all
        finally:
            await run.eng.close()


async def test_two_engines_on_one_store_advancing_one_workflow_submit_no_step_twice(tmp_path):
    """Two engines (two servers on one store file) both told each step's end at once: every
    step is submitted once in all, and the workflow COMPLETES."""
    path = tmp_path / "s.sqlite"
    with Store(path) as one, Store(path) as two:
        a, b = _Ops(one), _Ops(two)
        a.engine_id, b.engine_id = "engine-a", "engine-b"
        ea, eb = WorkflowEngine(a), WorkflowEngine(b)
        try:
            wid = await ea.run(load(CHAIN))
            await eb.resume()
            for step in ("prep", "solve", "post"):
                job = one.job_by_token(one.get_workflow(wid).step(step).token)
                one.apply_state(job.id, JobState.COMPLETED, exit_code=0)
                await asyncio.gather(ea.advance(wid), eb.advance(wid))
            assert one.get_workflow(wid).state == "COMPLETED"
            names = [n for n, _, _ in a.submits + b.submits]
            assert sorted(names) == ["post", "prep", "solve"], names
        finally:
            await ea.close()
            await eb.close()


# -- 10. a native id the scheduler gives again -------------------------------------------------

class _OneNativeId(_Ops):
    """A site whose scheduler answers every submit with job id 100 (a counter reset)."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.ids = itertools.repeat(100)
        self.tokens = itertools.count(1)

    def new_token(self) -> str:
        return f"tok{next(self.tokens)}"


async def test_steps_given_one_native_id_are_each_followed_by_their_own_job(runs):
    """Every step's job is alpha's 100: each step keeps its own job (the older renamed),
    solve's failure fails solve, not prep, and post is cancelled."""
    run = await runs(CHAIN.replace("site: beta", "site: alpha"), _OneNativeId)
    jobs = {s: run.job(s).id for s in ("prep", "solve", "post")}
    assert len(set(jobs.values())) == 3 and jobs["post"] == "alpha:100", jobs
    await run.end("prep")
    await run.end("solve", JobState.FAILED)
    assert _shown(run) == {"prep": ("COMPLETED", "alpha"), "solve": ("FAILED", "alpha"),
                           "post": ("CANCELLED", "alpha")}
    assert run.state() == ("FAILED", "step 'solve' failed: failed (exit code 1)")
    assert run.ops.cancels == [jobs["post"]]
