"""Workflow files, nineteenth sweep: files and runs a real user writes. A step on a site that
the sites file of the engine advancing the workflow lacks (another file, or an edited one):
left alone, saying why, for an engine whose file lists it; `diamond workflow cancel` while a
step's release is on its way; two workflows of one name at once, and a finished one run
again; a workflow's name given where its id goes; a step asking for `hedge`; environment
variables in a `script_file`'s path, an empty script file, and steps given inline and by a
file relative to the workflow file, not the current directory; an array step whose tasks fan
out to the steps after it; very long step names in `diamond workflow status`.

The runs are on the real engine and store (the operations below the facade recorded,
`workflow_ops`; no test bed), but for the engine on another sites file, run on a real
`Federation` over local sites (their scheduler commands fakes that record each call), and
asserted as a user sees them (`workflow status --json`, the CLI's own lines)."""

from __future__ import annotations

import asyncio
import itertools
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
from diamond_jupyter.model import BadInput, Event, Job, JobState
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.engine import WorkflowEngine
from diamond_jupyter.workflow.model import load_workflow

# -- 1. a step on a site this engine's sites file lacks ------------------------------------

LEAVING = f"""\
name: leaving
steps:
  - {{name: prep, site: alpha, script: "{PLAIN}"}}
  - {{name: post, site: gamma, needs: [prep], script: "{PLAIN}"}}
"""


def _without_gamma(fed, tmp_path: Path, *, kept_out: bool = False):
    """The engine started after gamma was taken out of the sites file (`kept_out`: left in
    it, but out of the operator's allowed sites): alpha alone, on the first engine's store;
    alpha's cancel and queue commands a fake recording each call in tmp_path/alpha-calls
    (never the machine's own Slurm)."""
    from diamond_jupyter.config import FederationConfig
    from diamond_jupyter.federation import Federation

    fakes = ("scancel", "squeue", "sacct", "scontrol")
    write_commands(tmp_path / "alpha-bin", {
        prog: f'echo "{prog} $*" >> {tmp_path}/alpha-calls' for prog in fakes})
    alpha = next(s for s in fed.config.sites if s.name == "alpha")
    commands = {**alpha.commands, **{prog: str(tmp_path / "alpha-bin" / prog)
                                     for prog in fakes}}
    gamma = [s for s in fed.config.sites if s.name == "gamma" and kept_out]
    cfg = FederationConfig(sites=[alpha.model_copy(update={"commands": commands}), *gamma])
    return Federation(cfg, store=Store(tmp_path / "s.sqlite"),
                      allowed_sites=["alpha"] if kept_out else None)


def _not_here(site: str, configured: str, wid: str) -> str:
    """A step's reason while an engine whose sites file lacks its site leaves it alone."""
    return (f"its site {site} is not in this sites file (configured: {configured}): not "
            f"followed from here; it is followed again by a server that uses {site}; "
            f"`diamond workflow cancel {wid}` cancels the steps it reaches and names "
            "the others")


async def test_fault_a_step_on_a_site_another_sites_file_lacks_is_left_alone_saying_why(
        tmp_path, monkeypatch):
    """An engine started on a sites file without gamma (`workflow status --config OTHER`,
    a second server) adopts the workflow. Before: it failed post, queued on gamma, and
    cancelled prep's healthy job on alpha: the workflow FAILED, nothing of it left. Now it
    leaves post alone, saying why and where it is followed, cancels nothing, and the
    workflow stays as it was; it is handed back for an engine that lists gamma."""
    fed = _fed(tmp_path, monkeypatch)
    try:
        first = await fed.run_workflow(LEAVING, origin={"face": "test"})
    finally:
        await fed.close()
    assert [(s.name, s.site) for s in first.steps] == [("prep", "alpha"), ("post", "gamma")]
    assert all(s.job for s in first.steps)
    other = _without_gamma(fed, tmp_path)
    try:
        assert await other.workflow_engine.resume() == []  # handed back for gamma's
        view = other.workflow(first.id).contract()
        owner = other.store.get_workflow(first.id).data.get("owner")
    finally:
        await other.close()
    assert view["state"] == first.state.value != "FAILED", view
    prep, post = view["steps"]
    assert (post["state"], post["site"], post["job"]) == ("PENDING", "gamma", first.steps[1].job)
    assert post["reason"] == _not_here("gamma", "alpha", first.id)
    assert (prep["state"], prep["job"]) == ("PENDING", first.steps[0].job)
    calls = tmp_path / "alpha-calls"
    assert "scancel" not in (calls.read_text() if calls.exists() else "")
    assert owner is None  # while it still runs: an engine that lists gamma may take it


async def test_a_step_on_a_site_the_sites_file_lists_but_not_allowed_here_says_so(
        tmp_path, monkeypatch):
    """Review: a server whose operator allowed alpha alone (`DiamondApp.allowed_sites`) said
    a step on gamma was "not in this sites file (configured: alpha)", though its file lists
    gamma: the allowed sites were named as the configured ones. Now it says gamma is not
    allowed here, in the engine's reason and in the view of an untouched step."""
    fed = _fed(tmp_path, monkeypatch)
    try:
        first = await fed.run_workflow(LEAVING, origin={"face": "test"})
    finally:
        await fed.close()
    other = _without_gamma(fed, tmp_path, kept_out=True)
    try:
        assert other.sites.configured == ["alpha", "gamma"] and list(other.sites) == ["alpha"]
        fresh = other.workflow(first.id).contract()["steps"][1]  # before the engine wrote one
        assert await other.workflow_engine.resume() == []
        post = other.workflow(first.id).contract()["steps"][1]
    finally:
        await other.close()
    assert fresh["reason"] == ("its site gamma is not allowed here (allowed: alpha): its state "
                               "is the one last recorded; a server that uses it follows it")
    assert post["reason"].startswith("its site gamma is not allowed here (allowed: alpha): "
                                     "not followed from here"), post
    assert "not in this sites file" not in post["reason"], post


async def test_a_cancel_from_a_server_that_does_not_allow_the_site_says_so(
        tmp_path, monkeypatch):
    """Review: cancelled from a server whose operator allowed alpha alone, the workflow's
    reason said post's job was not cancelled as "their sites are not in this sites file",
    and post's that "an engine whose sites file lists gamma" cancels it, though this
    server's file lists gamma. Now both say gamma is not allowed here, and that a server
    that uses gamma cancels the job; prep's job on alpha is cancelled."""
    fed = _fed(tmp_path, monkeypatch)
    try:
        first = await fed.run_workflow(LEAVING, origin={"face": "test"})
    finally:
        await fed.close()
    other = _without_gamma(fed, tmp_path, kept_out=True)
    try:
        view = (await other.cancel_workflow(first.id)).contract()
    finally:
        await other.close()
    post_job = first.steps[1].job
    assert view["state"] == "CANCELLED", view
    assert view["reason"] == (f"cancelled by request; not cancelled from here: post "
                              f"({post_job}) on gamma, which is not allowed here (allowed: "
                              "alpha)"), view["reason"]
    post = view["steps"][1]
    assert (post["state"], post["job"]) == ("PENDING", post_job), post
    assert post["reason"] == (
        f"its job {post_job} was not cancelled: its site gamma is not allowed here (allowed: "
        "alpha); an engine that uses gamma cancels it when it starts (or `diamond cancel "
        f"{post_job}` where gamma is used)"), post["reason"]
    assert "scancel" in (tmp_path / "alpha-calls").read_text()


class _FileOps(_Ops):
    """The operations of an engine whose sites file lists `sites` alone: a job elsewhere
    cannot be cancelled, released or asked about (as the facade refuses an unknown site)."""

    def _reaches(self, job: Job) -> None:
        if job.site not in self.sites:
            raise BadInput(f"unknown site {job.site!r}")

    async def cancel(self, job: Job) -> None:
        self._reaches(job)
        await super().cancel(job)

    async def release(self, job: Job) -> None:
        self._reaches(job)
        await super().release(job)

    async def refresh(self, job: Job) -> Job:
        self._reaches(job)
        return await super().refresh(job)


def _engine(store: Store, engine_id: str, sites: tuple[str, ...]) -> WorkflowEngine:
    ops = _FileOps(store)
    ops.engine_id, ops.sites = engine_id, sites
    return WorkflowEngine(ops)


QUEUED_AHEAD = """\
    name: ahead
    steps:
      - {name: prep, site: alpha, script: ./prep}
      - {name: post, site: gamma, needs: [prep], script: ./post}
    """


async def test_fault_two_engines_on_one_store_each_does_the_steps_its_sites_file_lists(tmp_path):
    """post waits held on gamma for prep on alpha. The engine without gamma sees prep end
    and leaves post held (no release refused, nothing failed); the engine with gamma then
    adopts the workflow, releases post and completes it."""
    with Store(tmp_path / "s.sqlite") as store:
        first = _engine(store, "engine-1", ("alpha", "beta", "gamma"))
        wid = await first.run(load(QUEUED_AHEAD))
        await first.close()
        rec = store.get_workflow(wid)
        assert (rec.step("prep").phase, rec.step("post").phase) == ("queued", "held")
        store.apply_state(store.job_by_token(rec.step("prep").token).id, JobState.RUNNING)
        without, with_gamma = (_engine(store, "engine-a", ("alpha", "beta")),
                               _engine(store, "engine-g", ("alpha", "gamma")))
        try:
            assert await without.resume() == []  # handed back: post is not its to follow
            store.apply_state(store.job_by_token(rec.step("prep").token).id,
                              JobState.COMPLETED, exit_code=0)
            await without.advance(wid)
            rec = store.get_workflow(wid)
            assert (rec.state, rec.step("prep").phase, rec.step("post").phase) == (
                "RUNNING", "done", "held")
            assert without.ops.releases == [] and without.ops.cancels == []
            post = without.view(wid).steps[1]
            assert (post.state, post.reason) == (JobState.PENDING,
                                                 _not_here("gamma", "alpha, beta", wid))
            assert await with_gamma.resume() == [wid]
            await _until(with_gamma, wid, {"post": "released"})
            post_job = store.job_by_token(store.get_workflow(wid).step("post").token)
            assert with_gamma.ops.releases == [post_job.id]
            assert with_gamma.view(wid).steps[1].reason is None  # followed here now
            store.apply_state(post_job.id, JobState.COMPLETED, exit_code=0)
            await with_gamma.advance(wid)
            assert store.get_workflow(wid).state == "COMPLETED"
            assert [s for _, s, _ in without.ops.submits + with_gamma.ops.submits] == []
        finally:
            await without.close()
            await with_gamma.close()


def _counting_writes(store: Store) -> list[int]:
    """Count the store's write transactions from now on: the list's length is the count."""
    writes, write = [], store._write

    def counted(*args, **kw):
        writes.append(1)
        return write(*args, **kw)

    store._write = counted
    return writes


async def test_a_workflow_handed_back_is_not_taken_up_again_by_each_sweep_of_the_same_file(
        tmp_path):
    """post waits on gamma, which the engine's sites file lacks: its first sweep hands the
    workflow back, naming gamma; its next sweeps leave it alone, writing nothing (before:
    claimed and handed back on every sweep, for ever, 2 writes and a lease each). Once its
    file lists gamma, the next sweep takes it up."""
    with Store(tmp_path / "s.sqlite") as store:
        first = _engine(store, "engine-1", ("alpha", "beta", "gamma"))
        wid = await first.run(load(QUEUED_AHEAD))
        await first.close()
        store.apply_state(store.job_by_token(store.get_workflow(wid).step("prep").token).id,
                          JobState.RUNNING)
        without = _engine(store, "engine-a", ("alpha", "beta"))
        try:
            assert await without.resume() == []  # handed back: post is not its to follow
            data = store.get_workflow(wid).data
            writes = _counting_writes(store)
            for _ in range(3):
                assert await without.resume() == []
            assert writes == []
            assert store.get_workflow(wid).data == data
            assert (data.get("owner"), data.get("unreached_sites")) == (None, ["gamma"])
            without.ops.sites = ("alpha", "gamma")  # its file edited: gamma listed now
            assert await without.resume() == [wid]
            assert writes and "unreached_sites" not in store.get_workflow(wid).data
        finally:
            await without.close()


CHAINED_BESIDE = """\
    name: chained
    queue_ahead: false
    steps:
      - {name: prep, site: alpha, script: ./prep}
      - {name: mid, site: alpha, needs: [prep], script: ./mid}
      - {name: last, site: alpha, needs: [mid], script: ./last}
      - {name: away, site: gamma, script: ./away}
    """


async def test_fault_a_workflow_handed_back_before_a_restart_goes_on_with_the_steps_it_lists(
        tmp_path):
    """away waits on gamma, which the sites file lacks; prep and mid are on alpha. The
    engine hands the workflow back; the server restarts (a new engine, the same file and
    store) and prep ends meanwhile. The new engine's sweep takes the workflow up and submits
    mid (before: left alone for ever, as if this engine had handed it back itself, and no
    one followed prep's end), then hands it back and leaves it alone on its next sweeps;
    mid's end, come as an event, takes it up again: last is submitted."""
    with Store(tmp_path / "s.sqlite") as store:
        first = _engine(store, "engine-1", ("alpha", "gamma"))
        wid = await first.run(load(CHAINED_BESIDE))
        await first.close()
        before = _engine(store, "engine-a", ("alpha", "beta"))
        assert await before.resume() == []  # handed back: away is not its to follow
        assert store.get_workflow(wid).data.get("unreached_sites") == ["gamma"]
        await before.close()
        store.apply_state(store.job_by_token(store.get_workflow(wid).step("prep").token).id,
                          JobState.COMPLETED, exit_code=0)
        after = _engine(store, "engine-b", ("alpha", "beta"))  # the restarted server's
        after.ops.ids = itertools.count(1000)  # its tokens and job ids new (random, really)
        try:
            await after.resume()
            rec = store.get_workflow(wid)
            assert (rec.step("prep").phase, rec.step("mid").phase) == ("done", "queued")
            assert after.ops.submits == [("mid", "alpha", False)]
            assert (rec.data.get("owner"), rec.data.get("unreached_sites")) == (None,
                                                                                ["gamma"])
            writes = _counting_writes(store)
            assert await after.resume() == [] and writes == []  # its own hand-back: let be
            mid = store.job_by_token(rec.step("mid").token)
            store.apply_state(mid.id, JobState.COMPLETED, exit_code=0)
            after._on_event(Event(kind="job.state", job_id=mid.id))  # as the journal says it
            await _until(after, wid, {"mid": "done", "last": "queued"})
            assert after.ops.submits == [("mid", "alpha", False), ("last", "alpha", False)]
            assert store.get_workflow(wid).data.get("owner") is None  # handed back again
        finally:
            await after.close()


ORDERED = """\
    name: ordered
    queue_ahead: false
    steps:
      - {name: prep, site: alpha, script: ./prep}
      - {name: post, site: gamma, needs: [prep], script: ./post}
    """


async def test_fault_a_waiting_step_pinned_to_a_site_not_in_the_file_waits_saying_why(runs):
    """Without queue-ahead post waits for prep to end; gamma leaves the engine's file
    meanwhile. Before, it was submitted to gamma all the same (refused: the advance stopped
    with a log line), later the workflow FAILED. Now it waits, unsubmitted, saying why; put
    back in the file, it is submitted there and the workflow completes."""
    run = await runs(ORDERED)
    assert run.submitted("prep") == ["alpha"] and run.submitted("post") == []
    run.ops.sites = ("alpha", "beta")  # the engine's sites file, edited
    await run.end("prep")
    assert run.submitted("post") == [] and run.state()[0] not in ("FAILED", "COMPLETED")
    assert _shown(run) == {"prep": ("COMPLETED", "alpha"), "post": ("PENDING", None)}
    assert run.eng.view(run.wid).steps[1].reason == _not_here("gamma", "alpha, beta", run.wid)
    run.ops.sites = ("alpha", "beta", "gamma")
    await run.eng.advance(run.wid)
    assert run.submitted("post") == ["gamma"]
    await run.finish("post")
    assert run.state() == ("COMPLETED", None)
    _nothing_lost(run)


ELSEWHERE = """\
    name: elsewhere
    steps:
      - {name: prep, site: alpha, script: ./prep}
      - {name: post, site: gamma, needs: [prep], script: ./post, retries: 1,
         on_failure: resubmit-elsewhere}
    """


async def test_fault_a_step_that_may_go_elsewhere_is_not_run_twice_when_its_site_is_not_listed(
        runs):
    """post may go elsewhere after a failure, but its site missing from this engine's file
    is no failure: its job there may run. It is neither resubmitted nor cancelled; an
    `auto` step is still placed among the listed sites."""
    run = await runs(ELSEWHERE)
    assert run.submitted("post") == ["gamma"]
    run.ops.sites = ("alpha", "beta")
    await run.eng.advance(run.wid)
    await run.end("prep")
    assert run.submitted("post") == ["gamma"] and run.ops.cancels == []
    post = run.eng.view(run.wid).steps[1]
    assert (post.attempt, post.site, post.state) == (0, "gamma", JobState.PENDING)
    assert post.reason == _not_here("gamma", "alpha, beta", run.wid)
    assert not [e for e in run.store.events_since(0) if e.data.get("retry")]


async def test_fault_cancel_cancels_the_steps_it_reaches_and_names_the_one_it_cannot(tmp_path):
    """Cancelled from an engine without gamma: prep's job on alpha is cancelled, post's on
    gamma cannot be: the workflow's reason and post's name it (post shown as its job is,
    not CANCELLED), and the first engine with gamma to start cancels it."""
    with Store(tmp_path / "s.sqlite") as store:
        first = _engine(store, "engine-1", ("alpha", "beta", "gamma"))
        wid = await first.run(load(QUEUED_AHEAD))
        await first.close()
        rec = store.get_workflow(wid)
        prep, post = (store.job_by_token(rec.step(n).token) for n in ("prep", "post"))
        without = _engine(store, "engine-a", ("alpha", "beta"))
        try:
            await without.cancel(wid)
        finally:
            await without.close()
        assert without.ops.cancels == [prep.id]
        rec = store.get_workflow(wid)
        assert rec.state == "CANCELLED"
        assert rec.reason == (f"cancelled by request; not cancelled from here: post ({post.id}) "
                              "on gamma, which is not in this sites file (configured: alpha, "
                              "beta)")
        shown = without.view(wid).steps
        assert [(s.state, s.job) for s in shown] == [(JobState.CANCELLED, prep.id),
                                                     (JobState.PENDING, post.id)]
        assert shown[1].reason == (
            f"its job {post.id} was not cancelled: its site gamma is not in this sites file "
            "(configured: alpha, beta); an engine that uses gamma cancels it when it starts "
            f"(or `diamond cancel {post.id}` where gamma is used)")
        with_gamma = _engine(store, "engine-g", ("gamma",))
        try:
            with_gamma._note_left_queued(rec)  # what its sweep does first
            await with_gamma.cancel_left_queued(float("inf"))
        finally:
            await with_gamma.close()
        assert with_gamma.ops.cancels == [post.id]
        assert store.get_job(post.id).state == JobState.CANCELLED
        assert with_gamma.view(wid).steps[1].state == JobState.CANCELLED


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
