"""A step's declared `outputs` are checked at its site once its job completed: one command
lists those missing, and a step that left one missing FAILED with a reason naming it (its
downstream steps never start; `retries` and `on_failure` apply as to any failed run). They
were documentation only: a step that wrote nothing was done, and the steps after it ran on
nothing.

The engine runs on a real store; the sites below it are recorded (`Ops`, whose
`missing_files` answers from a set of files each site holds). The site's own check (`Site.
missing_files`, one `sh` command) runs on a local transport over real files."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from workflow_ops import RecordedOps

from diamond_jupyter.model import BadInput, DiamondError, Job, JobSpec, JobState, SiteError
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.engine import WorkflowEngine
from diamond_jupyter.workflow.model import load_workflow

SITES = ("alpha", "gamma")


class Ops(RecordedOps):
    """The operations below the facade, recorded; each job's working directory is
    /w/SITE/TOKEN, and a site holds the files in `files[SITE]`."""

    sites = SITES

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.submits: list[tuple[str, str]] = []  # (step, site)
        self.files: dict[str, set[str]] = {s: set() for s in SITES}
        self.asked: list[tuple[str, list[str]]] = []  # each missing_files call
        self.unanswered = 0  # the next this many checks get no answer
        self.no_files: set[str] = set()  # sites whose files cannot be looked at

    def submitted(self, spec: JobSpec, site: str, *, hold: bool, token: str,
                  origin: dict[str, Any]) -> None:
        self.submits.append((origin["step"], site))

    async def release(self, job: Job) -> None:
        self.store.apply_state(job.id, JobState.RUNNING)

    async def missing_files(self, site: str, paths: list[str]) -> list[str]:
        self.asked.append((site, list(paths)))
        if site in self.no_files:
            raise BadInput(f"{site}: looking at a file is not possible over slurmrestd alone")
        if self.unanswered:
            self.unanswered -= 1
            raise SiteError(f"{site}: the connection dropped")
        return [p for p in paths if p not in self.files[site]]

    def job_of(self, step: str, attempt: int = 0) -> Job:
        return next(j for j in self.store.list_jobs(limit=None)
                    if (j.origin or {}).get("step") == step
                    and (j.origin or {}).get("attempt") == attempt)


FLOW = textwrap.dedent("""\
    name: outs
    steps:
      - name: make
        site: alpha
        script: "#!/bin/bash\\n./make\\n"
        outputs: [mesh.h5, parts/, logs/run.txt]
        retries: {retries}
        on_failure: {policy}
      - name: use
        site: alpha
        needs: [make]
        script: "#!/bin/bash\\n./use mesh.h5\\n"
    """)


@pytest.fixture
async def engine(tmp_path):
    ops = Ops(Store(tmp_path / "store.sqlite"))
    eng = WorkflowEngine(ops)
    yield eng, ops
    await eng.close()


def _have(ops: Ops, job: Job, *rel: str) -> None:
    """The job left `rel` (a directory ends with /) in its working directory."""
    ops.files[job.site] |= {f"{job.workdir}/{r}" for r in rel}


async def _complete(eng: WorkflowEngine, ops: Ops, wid: str, job: Job) -> None:
    ops.store.apply_state(job.id, JobState.COMPLETED, exit_code=0)
    await eng.advance(wid)


def _events(ops: Ops, step: str) -> list[dict[str, Any]]:
    return [e.data for e in ops.store.events_since(0, kinds=["workflow.step"], limit=None)
            if e.data["step"] == step]


async def test_a_step_that_left_an_output_missing_fails_and_its_downstream_never_runs(engine):
    eng, ops = engine
    wid = await eng.run(load_workflow(FLOW.format(retries=0, policy="stop"), sites=SITES))
    make = ops.job_of("make")
    use = ops.job_of("use")  # queued ahead, behind make (afterok)
    _have(ops, make, "mesh.h5")  # parts/ and logs/run.txt were never written
    await _complete(eng, ops, wid, make)
    # one check, of every declared output, as paths in the job's working directory
    assert ops.asked == [("alpha", [f"{make.workdir}/mesh.h5", f"{make.workdir}/parts/",
                                    f"{make.workdir}/logs/run.txt"])]
    view = eng.view(wid)
    steps = {s.name: s for s in view.steps}
    assert view.state == JobState.FAILED
    assert steps["make"].state == JobState.FAILED  # its job completed; the step did not
    assert steps["make"].reason == ("completed, but its declared outputs are missing on "
                                    "alpha: parts/, logs/run.txt")
    assert view.reason == ("step 'make' failed: completed, but its declared outputs are "
                           "missing on alpha: parts/, logs/run.txt")
    assert ops.cancels == [use.id]  # the downstream step queued behind it never starts
    assert steps["use"].state == JobState.CANCELLED
    said = [e for e in _events(ops, "make") if "missing_outputs" in e]
    assert said == [{**said[0], "outputs": ["mesh.h5", "parts/", "logs/run.txt"],
                     "missing_outputs": ["parts/", "logs/run.txt"], "workdir": make.workdir}]


async def test_a_step_whose_outputs_are_all_there_is_done_and_the_next_runs(engine):
    eng, ops = engine
    wid = await eng.run(load_workflow(FLOW.format(retries=0, policy="stop"), sites=SITES))
    make = ops.job_of("make")
    _have(ops, make, "mesh.h5", "parts/", "logs/run.txt")
    await _complete(eng, ops, wid, make)
    rec = eng.store.get_workflow(wid)
    assert rec.step("make").phase == "done" and rec.step("make").reason is None
    await _complete(eng, ops, wid, ops.job_of("use"))  # declares none: nothing to ask
    assert len(ops.asked) == 1
    assert eng.view(wid).state == JobState.COMPLETED


async def test_missing_outputs_are_a_failed_run_that_its_retries_run_again_elsewhere(engine):
    eng, ops = engine
    text = FLOW.format(retries=1, policy="resubmit-elsewhere").replace(
        "site: alpha\n        script: \"#!/bin/bash\\n./make", "site: auto\n        script: "
        "\"#!/bin/bash\\n./make")
    wid = await eng.run(load_workflow(text, sites=SITES))
    first = ops.job_of("make")
    assert first.site == "alpha"
    _have(ops, first, "mesh.h5", "parts/")
    await _complete(eng, ops, wid, first)
    st = eng.store.get_workflow(wid).step("make")
    assert st.phase == "queued" and st.attempt == 1  # submitted again, on the other site
    [retry] = [e for e in _events(ops, "make") if e.get("retry")]
    assert retry["reason"] == ("attempt 1 failed on alpha: completed, but its declared outputs "
                               "are missing on alpha: logs/run.txt")
    assert retry["failed_job"] == first.id
    second = ops.job_of("make", attempt=1)
    assert second.site == "gamma"
    _have(ops, second, "mesh.h5", "parts/", "logs/run.txt")
    await _complete(eng, ops, wid, second)
    uses = [j for j in ops.store.list_jobs(limit=None) if (j.origin or {}).get("step") == "use"]
    assert [j.id for j in uses if j.state == JobState.CANCELLED] == [
        j for j in ops.cancels]  # the run queued behind the failed one
    await _complete(eng, ops, wid, _last(ops, "use"))  # its new run, behind the good one
    assert eng.view(wid).state == JobState.COMPLETED


def _last(ops: Ops, step: str) -> Job:
    return [j for j in ops.store.list_jobs(limit=None)
            if (j.origin or {}).get("step") == step and not j.state.terminal][-1]


async def test_a_site_that_does_not_answer_leaves_the_step_unfinished_until_it_does(engine):
    eng, ops = engine
    wid = await eng.run(load_workflow(FLOW.format(retries=0, policy="stop"), sites=SITES))
    make = ops.job_of("make")
    _have(ops, make, "mesh.h5", "parts/", "logs/run.txt")
    ops.unanswered = 1
    await _complete(eng, ops, wid, make)
    st = eng.store.get_workflow(wid).step("make")
    assert st.phase == "queued"  # neither done nor failed: not known yet
    assert st.reason == "outputs not checked yet: alpha: the connection dropped"
    assert eng.view(wid).state != JobState.FAILED
    await eng.advance(wid)  # the recheck (OUTPUTS_RECHECK_S later) finds them
    st = eng.store.get_workflow(wid).step("make")
    assert st.phase == "done" and st.reason is None and len(ops.asked) == 2


async def test_a_site_that_can_never_look_at_files_fails_the_step_saying_why(engine):
    eng, ops = engine
    ops.no_files.add("alpha")
    wid = await eng.run(load_workflow(FLOW.format(retries=0, policy="stop"), sites=SITES))
    make = ops.job_of("make")
    _have(ops, make, "mesh.h5", "parts/", "logs/run.txt")
    await _complete(eng, ops, wid, make)
    steps = {s.name: s for s in eng.view(wid).steps}
    assert steps["make"].state == JobState.FAILED  # never taken as there unchecked
    assert steps["make"].reason == (
        "completed, but its declared outputs cannot be checked on alpha: alpha: looking at "
        "a file is not possible over slurmrestd alone")


# -- the site's check: one command over real files ------------------------------------------

def _local_site(tmp_path: Path) -> Any:
    from diamond_jupyter.config import SiteConfig, TransportConfig
    from diamond_jupyter.sites import Site
    from diamond_jupyter.transports.local import LocalTransport

    home = tmp_path / "home"
    home.mkdir()
    cfg = SiteConfig(name="here", transport=TransportConfig(kind="local"),
                     workdir=str(home / ".diamond"))
    transport = LocalTransport("here", workdir=str(home))
    return Site(cfg, transport=transport), transport, home


async def test_the_site_names_the_missing_files_in_one_command(tmp_path):
    site, transport, home = _local_site(tmp_path)
    wd = home / "run"
    (wd / "parts").mkdir(parents=True)
    (wd / "mesh.h5").write_text("m")
    (wd / "notdir").write_text("a file, not the directory asked")
    odd = "a name with spaces, 'quotes' and $VARS"
    (wd / odd).write_text("x")
    paths = [f"{wd}/mesh.h5", f"{wd}/parts/", f"{wd}/notdir/", f"{wd}/gone.txt",
             f"{wd}/{odd}"]
    await site.home()  # asked once per site (a command of its own)
    before = transport.commands_run
    missing = await site.missing_files(paths)
    assert missing == [f"{wd}/notdir/", f"{wd}/gone.txt"]
    assert transport.commands_run - before == 1  # one command, however many paths
    assert await site.missing_files([]) == []


async def test_a_check_without_a_clear_answer_in_time_is_an_error_not_an_answer(tmp_path):
    from diamond_jupyter.transports import CommandTimeout
    from diamond_jupyter.transports.base import CommandResult

    site, transport, home = _local_site(tmp_path)
    real_run = transport.run_fast
    await site.home()

    async def greeting(argv: list[str], **kw: Any) -> Any:  # a login banner, no answer
        return CommandResult(list(argv), 0, "Welcome to the cluster!\n", "", 0.0)

    transport.run_fast = greeting
    with pytest.raises(SiteError, match=r"^here: could not look for 1 file\(s\) \(exit 0\): "
                                        r"Welcome to the cluster!$"):
        await site.missing_files(["/x"])

    async def stuck(argv: list[str], **kw: Any) -> Any:  # a file system that hangs
        return await real_run(["sh", "-c", "sleep 30"], **kw)

    transport.run_fast = stuck
    with pytest.raises(CommandTimeout):
        await site.missing_files(["/x"], timeout=0.3)
    assert issubclass(CommandTimeout, DiamondError)  # the engine asks again later
