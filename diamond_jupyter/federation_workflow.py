"""Workflows on the Federation: the faces' entry points, and the operations the workflow
engine (below the facade) is given."""

from __future__ import annotations

import asyncio
import contextlib
import re
import shlex
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .aio import KeptTasks
from .federation_needs import scan_off_loop
from .log_lines import one_line_logger
from .model import (
    BadInput,
    Dependency,
    DiamondError,
    Job,
    JobSpec,
    SiteSnapshot,
    SubmitUnsure,
)

if TYPE_CHECKING:
    from .leases import Fence
    from .placement import Placement
    from .store.workflows import StepSubmit
    from .workflow.engine import Estimate, WorkflowEngine
    from .workflow.model import Workflow, WorkflowView

log = one_line_logger(__name__)

DEPENDENCY_SCHEDULERS = {"slurm", "pbs", "lsf", "flux"}  # dialects that render afterok
GATE_SCHEDULERS = {"slurm"}  # where a step may wait behind a held gate job (afterany)
TROUBLE_CHECK_S = 2.0  # how often a workflow's waiter looks for sites that stopped answering
START_NOW_S = 2.0  # a gang member "can start now" when its estimated start is this close
# the submission token a step's approved script is rendered with (each attempt has its own)
STEP_TOKEN = "0" * 12
# how long the check before a workflow's first submit waits for a site's snapshot and its
# first discovery: a slower site is left to its steps' submits (its answer still comes, for
# them)
CHECK_WAIT_S = 3.0


def step_candidates(step: Any, sites: list[str]) -> list[str]:
    """The sites a workflow step may run on: its own; every site for `auto`, and for a
    pinned step whose retries go elsewhere (its own first); those of its list (configured
    ones, in its list's order) for a list of sites, its retries too."""
    if step.among is not None:
        return [s for s in step.among if s in sites]
    if step.site == "auto":
        return list(sites)
    if step.on_failure == "resubmit-elsewhere" and step.retries > 0:
        return [step.site, *(s for s in sites if s != step.site)]
    return [step.site]


def capacity_known(snap: SiteSnapshot | None) -> bool:
    """Whether a snapshot tells what its site has: it answered and listed its nodes (not an
    unreachable site, one not probed yet, or one whose node list came back empty)."""
    return snap is not None and snap.reachable and bool(snap.nodes)


def capacity_unknown_why(site: str, snap: SiteSnapshot | None) -> str:
    """Why `site`'s snapshot does not tell what it has (`capacity_known` is False)."""
    if snap is None or not snap.reachable:
        error = snap.error if snap is not None and snap.error else ""
        return f"{site} did not answer" + (f" ({error})" if error else "")
    return f"{site} listed no nodes"


def approval_pins(plan: dict[str, Any]) -> dict[str, Any]:
    """What an approved workflow plan pins: the workflow's sha256 and, per step, the sites
    it may run on with the sha256 of the script rendered for each, and the sha256 of the
    lines the engine may add to it (`engine_lines`)."""
    steps: dict[str, dict[str, str]] = {}
    engine: dict[str, str] = {}
    for st in plan.get("steps") or []:
        if not isinstance(st, dict):
            continue
        steps[str(st.get("name"))] = {
            str(c["site"]): str(c["script_sha256"]) for c in st.get("rendered") or []
            if isinstance(c, dict) and c.get("site") and c.get("script_sha256")}
        if isinstance(st.get("engine_sha256"), str):
            engine[str(st.get("name"))] = st["engine_sha256"]
    return {"workflow_sha256": plan.get("workflow_sha256"), "steps": steps, "engine": engine}


def plan_digest(plan: dict[str, Any]) -> str:
    """The sha256 of a workflow's approval plan as shown (its own `plan_sha256` aside):
    what `diamond workflow approve --plan-hash` names."""
    import hashlib
    import json

    shown = {k: v for k, v in plan.items() if k != "plan_sha256"}
    return hashlib.sha256(json.dumps(shown, sort_keys=True, default=str).encode()).hexdigest()


def _shown_plan(plan: dict[str, Any]) -> dict[str, Any]:
    """Pure: `plan` as a person is shown it (every hidden character flagged) with its
    `plan_sha256` (a walk over every rendered script: run in a worker thread)."""
    from .federation_plan import flag_hidden

    plan = flag_hidden(plan)  # a person reads it: nothing hidden
    plan["plan_sha256"] = plan_digest(plan)
    return plan


def _pin_change(site: str, was: dict[str, str], now: dict[str, str]) -> str:
    if site not in was:
        return f"it may now run on {site}, which the approved plan did not list"
    if site not in now:
        return f"it can no longer run on {site} as approved"
    return f"its batch script for {site} would differ from the approved one"


def _render_on(target: Any, spec: JobSpec) -> tuple[str, str]:
    """Pure: `spec` (adapted to site `target`, its home known) as the site's batch script
    with the placeholder submission STEP_TOKEN, and that script's sha256."""
    script, digest, _ = _rendered_in(target, spec)
    return script, digest


def _rendered_in(target: Any, spec: JobSpec) -> tuple[str, str, str | None]:
    """`_render_on`, and the working directory the step runs in there, resolved (a relative
    one in the site's home; none given: its own directory, named by STEP_TOKEN)."""
    from .federation_plan import sha256

    prepared = target.prepare(spec, STEP_TOKEN)
    script = target.render(target.scheduler_spec(prepared, STEP_TOKEN)).script
    return script, sha256(script), prepared.working_directory


def _estimate(pl: Placement | None, site: str) -> Estimate:
    """What placement `pl` expects of the job on `site`: its end and its runtime (both None
    without a placement, or where it finds the site unfit)."""
    from .workflow.engine import Estimate

    v = pl.verdict(site) if pl is not None else None
    if v is None or not v.feasible:
        return Estimate(site, None, None)
    return Estimate(site, v.estimated_finish, v.estimated_runtime_s)


class _Ops:
    """The operations the workflow engine may use: one adapter, built by the facade."""

    def __init__(self, fed: Any) -> None:
        self.fed = fed
        self.store = fed.store

    @property
    def engine_id(self) -> str:
        return self.fed.engine_id

    def site_names(self) -> list[str]:
        return list(self.fed.sites)

    def site_absence(self, site: str) -> str:
        return self.fed.sites.absence(site)

    def supports_dependency(self, site: str) -> bool:
        return self.fed.sites[site].cfg.scheduler in DEPENDENCY_SCHEDULERS

    def supports_gate(self, site: str) -> bool:
        """Slurm keeps a job's priority from its submission while it waits on a dependency,
        and a job waiting on a held job that is cancelled may start (afterany): a held
        "gate" keeps a step's place in the queue. Elsewhere the step is held and released."""
        return self.fed.sites[site].cfg.scheduler in GATE_SCHEDULERS

    def supports_dependency_update(self, site: str) -> bool:
        """A queued step's afterok may be moved to an upstream's new job (Slurm over its
        commands, or slurmrestd from v0.0.38 on); elsewhere the step is submitted again."""
        target = self.fed.sites[site]
        return target.cfg.scheduler == "slurm" and target.updates_dependencies

    async def update_dependencies(self, job: Job, deps: list[Dependency]) -> None:
        await self.fed.sites[job.site].update_dependencies(job.native_id or "", deps)

    def new_token(self) -> str:
        from .federation_plan import new_token

        return new_token()

    async def _place(self, spec: JobSpec, sites: list[str], sources: dict[str | None, int],
                     ready_at: datetime | None) -> Placement:
        from .placement import StageData

        own = await self.fed.stage_data(spec)  # the step's own stage-in, as a plain job's
        merged = dict(sources)
        for where, size in (own.sources.items() if spec.stage_in else ()):
            merged[where] = merged.get(where, 0) + size
        return await self.fed.place(spec, sites=sites, stage_data=StageData(
            merged, own.bandwidth_mbps, ready_at=ready_at))

    async def place(self, spec: JobSpec, sources: dict[str | None, int],
                    exclude: set[str], ready_at: datetime | None = None) -> Estimate:
        only = [n for n in self.fed.sites if n not in exclude] or list(self.fed.sites)
        pl = await self._place(spec, only, sources, ready_at)
        if pl.choice is None:
            raise BadInput(pl.summary())
        return _estimate(pl, pl.choice)

    async def expected(self, spec: JobSpec, site: str, sources: dict[str | None, int],
                       ready_at: datetime | None) -> Estimate:
        """`spec` on `site`, its inputs arriving from `sources` after `ready_at`: when it is
        expected to end and run there, both None when the site cannot be read or says
        nothing (an estimate only: the submit decides)."""
        try:
            pl = await self._place(spec, [site], sources, ready_at)
        except DiamondError:
            pl = None
        return _estimate(pl, site)

    async def reserve_submits(self, workflow_id: str, submits: list[StepSubmit],
                              fence: Fence | None = None) -> None:
        """Record a batch of steps' submits (their steps "submitting", their jobs' intents)
        in one durable write, before any of them is sent (`submit(reserved=True)` sends
        each); their tokens are in flight meanwhile (no intent sweep looks them up). Each
        spec is checked and prepared for its site first (`Federation.prepare_reserved`), so
        its intent holds what its submit sends; one that fails to prepare is recorded as
        given, and its submit prepares it again and fails as a single submit does. Left by
        anything else (a bug, a cancel, a failed write): none of the batch's prepared specs
        is kept."""
        ready = []
        try:
            for s in submits:
                with contextlib.suppress(DiamondError):  # (said by its submit)
                    s = s._replace(
                        spec=await self.fed.prepare_reserved(s.spec, s.site, s.token))
                ready.append(s)
            self.fed.journal.in_flight.update(s.token for s in submits)
            await asyncio.to_thread(self.store.reserve_step_submits, workflow_id, ready,
                                    fence)
        except BaseException:
            self.fed.journal.in_flight.difference_update(s.token for s in submits)
            self.fed.drop_prepared(s.token for s in submits)
            raise
        await self.fed.journal.drain()

    def forget_prepared(self, tokens: Iterable[str]) -> None:
        """Reserved submits this engine will not send (its send loop left by a lost lease,
        a cancel): their prepared specs are not kept; their intents stay for whoever takes
        the workflow over (`_resubmit_lost`)."""
        self.fed.drop_prepared(tokens)

    async def unreserve(self, token: str, reason: str) -> None:
        """A reserved submit that will not be sent: its intent closed as never submitted."""
        try:
            await self.fed.journal.close_never_submitted(token, reason)
        finally:
            self.fed.journal.in_flight.discard(token)
            self.fed.drop_prepared([token])

    async def submit(self, spec: JobSpec, site: str, *, hold: bool, token: str,
                     origin: dict[str, Any], fence: Fence | None = None,
                     reserved: bool = False) -> Job:
        try:
            job = await self.fed.submit(spec, site, hold=hold, token=token, origin=origin,
                                        fence=fence, reserved=reserved)
        except SubmitUnsure as lost:  # the site may have it: looked for in the background
            self.fed.start_looking_for(lost)
            raise
        if not origin.get("gate"):  # a step's end drives its workflow: learned soon
            self.fed.journal.await_end(job)
        return job

    async def cancel(self, job: Job) -> None:
        if job.native_id and not job.state.terminal:
            await self.fed.cancel(job.id)

    async def release(self, job: Job) -> None:
        await self.fed.release(job.id)

    async def refresh(self, job: Job) -> Job:
        return await self.fed.journal.refresh(job.token or job.id)

    def follow(self, job: Job) -> None:
        """Follow a step's job here (one another engine submitted, before it went away),
        its end awaited (`submit`)."""
        self.fed.journal.await_end(job)

    async def recover_submit(self, job: Job) -> float:
        """A step's submit whose engine died before it returned: find it by its token (the
        seconds to wait before asking again while it may still reach the queue, else 0)."""
        if job.token and job.token not in self.fed.journal.in_flight:
            return await self.fed.journal.recover_intent(job)
        return 0.0

    async def transfer(self, src: str, dst: str, *, transfer_id: str, job_id: str,
                       recursive: bool = False) -> Any:
        return await self.fed.mover.transfer(src, dst, job_id=job_id, transfer_id=transfer_id,
                                             recursive=recursive)

    async def step_sha256(self, spec: JobSpec, site: str) -> str:
        """The sha256 of step `spec`'s script rendered for `site` as an approval pins it."""
        return (await self.fed.render_step(spec, site))[1]

    async def can_start_now(self, job: Job) -> bool:
        if job.spec is None or job.site not in self.fed.sites:
            return False
        pl = await self.fed.place(job.spec.model_copy(update={"dependencies": []}),
                                  sites=[job.site], max_age_s=0)  # a gang needs the present
        v = pl.verdict(job.site)
        if not (v and v.feasible and v.estimated_start is not None):
            return False
        # all or nothing: the resources must be free now by the scheduler's own plan (its
        # walltimes), not only by a calibrated prediction that running jobs end early; the
        # model's start, not the one the user's past waits moved out (a forecast, which
        # would hold a gang back for as long as those waits are recent)
        model = v.model_start or v.estimated_start
        start = max(model, v.raw_start or model)
        return start - pl.now <= timedelta(seconds=START_NOW_S)

    async def missing_files(self, site: str, paths: list[str]) -> list[str]:
        if site not in self.fed.sites:
            raise DiamondError(f"site {site!r} is no longer configured")
        return await self.fed.sites[site].missing_files(paths)

    def subscribe(self, callback: Any) -> Any:
        return self.fed.journal.subscribe(callback)

    async def publish(self) -> None:
        await self.fed.journal.drain()


class WorkflowMixin:
    """Mixed into Federation."""

    _workflow_engine: WorkflowEngine | None = None
    _check_snapshots: KeptTasks | None = None  # snapshots a check stopped waiting for
    sites: dict[str, Any]

    @property
    def workflow_engine(self) -> WorkflowEngine:
        """The engine that drives this Federation's workflows from job events, created on first
        use (a server starts it at `start`; a CLI run drives its own workflow)."""
        if self._workflow_engine is None:
            from .workflow.engine import WorkflowEngine

            self._workflow_engine = WorkflowEngine(_Ops(self))
        return self._workflow_engine

    async def _start_workflows(self) -> None:
        """At start (a server): adopt the workflows no live engine drives, then keep doing so
        (a CLI that submitted one without --wait hands it over)."""
        engine = self.workflow_engine
        await engine.resume()
        engine.start_sweeping()

    async def _close_workflows(self) -> None:
        if self._workflow_engine is not None:
            await self._workflow_engine.close()
            self._workflow_engine = None
        if self._check_snapshots is not None:
            await self._check_snapshots.close()

    # -- faces -------------------------------------------------------------------------------
    def load_workflow(self, source: str | Path | dict[str, Any] | Workflow) -> Workflow:
        """A workflow from YAML text (a str), a file (a Path), a mapping or a Workflow,
        checked against the configured sites. BadInput naming the problem (a cycle with its
        steps, an unknown step or site, an input from a step not upstream, an unknown field)."""
        from .workflow.model import load_workflow, parse_workflow

        root = getattr(self, "server_root", None)  # a body's script_file: inside it
        if isinstance(source, (str, Path)):
            return load_workflow(source, sites=self.sites, root=root)
        return parse_workflow(source, sites=self.sites, root=root)

    async def run_workflow(self, source: str | Path | dict[str, Any] | Workflow, *,
                           origin: dict[str, Any] | None = None,
                           workflow_id: str | None = None,
                           approval: dict[str, Any] | None = None) -> WorkflowView:
        """Record the workflow and submit every step that can be queued now (the downstream ones
        held or behind a dependency) and return its view; the engine drives the rest from job
        events, `origin` says which face asked. A `workflow_id` already in the store: that
        workflow (a repeated call runs once). `approval`: the pins of an approved plan
        (`run_workflow_approved`). BadInput as `load_workflow` or `submit`."""
        wf = self.load_workflow(source)
        if workflow_id is not None and self.store.has_workflow(workflow_id):
            return self.workflow(workflow_id)
        unchecked = await self.check_steps_runnable(wf)
        wid = await self.workflow_engine.run(wf, origin=origin, workflow_id=workflow_id,
                                             approval=approval, unchecked=unchecked)
        return self.workflow_engine.view(wid)

    async def check_steps_runnable(self, wf: Workflow) -> dict[str, str]:
        """Refuse `wf` before any step runs when a step surely cannot run where it may go: a
        step pinned to a site whose placement verdict is INCOMPATIBLE, or an `auto` step (or
        one given a list of sites) that every one of its sites finds INCOMPATIBLE. Every such
        step is named with its site(s) and the reasons, in one BadInput. Only a definite
        verdict refuses: a step with a site whose capacity is unknown now (`capacity_known`:
        unreachable, or no nodes listed) is left to its submit's checks, as is what a site
        whose capabilities could not be read would lack in software, containers or MPI; a
        busy or restricted site is no refusal either. A site's snapshot and first discovery
        are waited for CHECK_WAIT_S at most: a slower site counts as unknown now, so one slow
        site never holds every step's submit (queue-ahead's first submit waited 11-15 s so,
        recorded in session 40). Returns the steps left unchecked because a site's capacity
        is unknown, with why (the engine says it on each)."""
        from .capabilities import SiteCapabilities
        from .federation_needs import CHECK_SNAPSHOT_AGE_S, job_trees, needs_discovery
        from .placement import place

        candidates: dict[str, list[str]] = {}
        for name in wf.order():
            step = wf.step(name)
            sites = [step.site] if not step.is_auto else step_candidates(step, list(self.sites))
            if sites:  # none: a list whose sites all left the sites file (the step says so)
                candidates[name] = sites
        asked = sorted({s for sites in candidates.values() for s in sites})
        if not asked:
            return {}
        snaps = await self._snapshots_within(asked, CHECK_SNAPSHOT_AGE_S, CHECK_WAIT_S)
        problems, unchecked = [], {}
        for name, sites in candidates.items():
            unknown = [s for s in sites if not capacity_known(snaps.get(s))]
            if unknown:
                unchecked[name] = (
                    "not checked before the run: "
                    + ", ".join(capacity_unknown_why(s, snaps.get(s)) if s in snaps
                                else f"{s} did not answer within {CHECK_WAIT_S:g} s"
                                for s in unknown)
                    + "; its submit checks it")
                log.info("workflow %s step %s: %s", wf.name, name, unchecked[name])
                continue
            try:
                spec = wf.step(name).spec()
                await scan_off_loop(spec)
                # a step asking only what the snapshot tells waits on no discovery (it
                # still starts, for the submits)
                wait_s = CHECK_WAIT_S if needs_discovery(spec) else 0.0
                read = await self.capabilities(  # type: ignore[attr-defined]
                    only=sites, trees=job_trees(spec), max_wait_s=wait_s)
                # a site whose capabilities were not read: software, containers, MPI unknown
                caps = {s: read.get(s) or SiteCapabilities(site=s) for s in sites}
                pl = place(spec, [(self.sites[s].cfg, snaps[s]) for s in sites],
                           capabilities=caps)
            except DiamondError as e:  # said by the step's submit, as before
                log.info("workflow %s step %s: not checked before the run: %s", wf.name,
                         name, e)
                continue
            verdicts = [pl.verdict(s) for s in sites]
            if any(v is None or v.verdict != "INCOMPATIBLE" for v in verdicts):
                continue
            said = {v.site: "; ".join(v.reasons) or "incompatible"
                    for v in verdicts if v is not None}
            if wf.step(name).is_auto:
                problems.append(f"step {name!r} cannot run on any of its sites ("
                                + " / ".join(f"{s}: {why}" for s, why in said.items()) + ")")
            else:
                problems.append(f"step {name!r} cannot run on site {sites[0]} "
                                f"({said[sites[0]]})")
        if problems:
            raise BadInput(f"workflow {wf.name!r} refused before any step ran: "
                           + " | ".join(problems)
                           + "; pin each such step to a site that can run it, or ask only "
                             "for what its site has")
        return unchecked

    async def _snapshots_within(self, names: list[str], max_age_s: float, wait_s: float
                                ) -> dict[str, SiteSnapshot]:
        """The snapshots of sites `names` (at most `max_age_s` old) that come within `wait_s`,
        by site name, each site asked on its own. A slower site is left out, its query kept
        running (its steps' submits and placements then find its snapshot cached)."""
        if self._check_snapshots is None:
            self._check_snapshots = KeptTasks()
        asked = {n: self._check_snapshots.start(self.snapshots(  # type: ignore[attr-defined]
            max_age_s=max_age_s, only=[n])) for n in names}
        if asked:
            await asyncio.wait(asked.values(), timeout=wait_s)
        out: dict[str, SiteSnapshot] = {}
        for name, task in asked.items():
            if task.done() and not task.cancelled() and task.exception() is None:
                out.update({n: s for n, s in task.result().items() if n == name})
        late = sorted(n for n in asked if n not in out)
        if late:
            log.info("workflow check: %s did not answer within %g s; left to the submits",
                     ", ".join(late), wait_s)
        return out

    async def render_step(self, spec: JobSpec, site: str) -> tuple[str, str]:
        """The batch script step `spec` is sent to `site` with, and its sha256, as an
        approval shows and pins it: adapted to the site (its module names), wrapped and
        rendered as `submit` does, with the placeholder submission STEP_TOKEN (each attempt
        gets its own). The lines a workflow adds at run time (copies of inputs, their checks,
        the dependency on upstream jobs, a hold) come from its needs and inputs, which the
        workflow's sha256 pins. BadInput when the site is not usable or cannot run it. The
        rendering runs in a worker thread (the server's event loop goes on meanwhile)."""
        await scan_off_loop(spec)
        self.check_submittable(spec)  # type: ignore[attr-defined]
        target, adapted = await self._step_on_site(spec, site)
        return await asyncio.to_thread(_render_on, target, adapted)

    async def _step_on_site(self, spec: JobSpec, site: str) -> tuple[Any, JobSpec]:
        """The awaited part of rendering `spec` for `site` (its home asked when a path needs
        it, the spec adapted to the site's modules): the site and the adapted spec."""
        target = self.site(site)  # type: ignore[attr-defined]
        await target.know_home(spec.working_directory, spec.stdout, spec.stderr)
        await target.know_name_limit()  # the name as the scheduler will keep it
        return target, await self.adapt_to_site(site, spec)  # type: ignore[attr-defined]

    async def plan_workflow(self, source: str | Path | dict[str, Any] | Workflow
                            ) -> dict[str, Any]:
        """What running the workflow would do: every step with its edges and policy, the
        sites it may run on (its own; for `auto`, and for the retries of
        `resubmit-elsewhere`, every site) with the batch script rendered for each and its
        sha256 (a site that cannot run it is listed with why), and the whole workflow's
        sha256. An approval pins both: a step runs only on a site it listed, with that
        script (`approval_pins`).
        Only the I/O (a site's home, its modules) is awaited on the event loop: reading the
        workflow and each step's parsing, engine lines and renderings run in a worker thread,
        one step at a time, so a large plan does not hold up the server's other requests."""
        wf, digest = await asyncio.to_thread(self._workflow_and_sha256, source)
        sites = list(self.sites)
        steps = []
        for name in wf.order():
            s = wf.step(name)
            spec, why_not, shown = await asyncio.to_thread(self._step_parts, s)
            ready: list[tuple[str, Any, JobSpec | None, str | None]] = []
            for site in step_candidates(s, sites):
                if spec is None:
                    ready.append((site, None, None, why_not))
                    continue
                try:
                    target, adapted = await self._step_on_site(spec, site)
                except DiamondError as e:
                    ready.append((site, None, None, str(e)))
                    continue
                ready.append((site, target, adapted, None))
            candidates = await asyncio.to_thread(self._rendered_candidates, ready)
            steps.append({"name": s.name, "site": s.site, "needs": s.needs,
                          "inputs": shown["inputs"],
                          "gang": s.gang, "retries": s.retries, "on_failure": s.on_failure,
                          "script": s.script, "script_sha256": shown["script_sha256"],
                          "may_run_on": [c["site"] for c in candidates if "script" in c],
                          "rendered": candidates,
                          # what the engine may add at run time: a fixed template, pinned
                          "engine_lines": shown["engine_lines"],
                          "engine_sha256": shown["engine_sha256"]})
        return {"action": "run_workflow", "name": wf.name, "steps": steps,
                "workflow_sha256": digest,
                "data_movements": [{"direction": "copy", "source": f"step {i['from']}: "
                                    f"{i['path']}", "destination": f"step {st['name']}: "
                                    f"{i.get('as') or i['path']}"}
                                   for st in steps for i in st["inputs"]]}

    # the pure parts of a plan, run in a worker thread (no awaiting, no event loop state)
    def _workflow_and_sha256(self, source: str | Path | dict[str, Any] | Workflow
                             ) -> tuple[Workflow, str]:
        """The workflow checked (`load_workflow`) and the sha256 an approval pins for it."""
        import hashlib
        import json

        wf = self.load_workflow(source)
        body = wf.model_dump(mode="json", by_alias=True)
        return wf, hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()

    def _step_parts(self, step: Any) -> tuple[JobSpec | None, str | None, dict[str, Any]]:
        """Step `step`'s spec once checked as every submit checks it (None, with why, when it
        cannot be submitted anywhere), and what its plan shows of it alone: its inputs, its
        script's sha256 and the engine lines with theirs."""
        import hashlib

        from .workflow.engine import engine_lines, lines_sha256

        lines = engine_lines(step)
        shown = {"inputs": [i.model_dump(mode="json", by_alias=True) for i in step.inputs],
                 "script_sha256": hashlib.sha256(step.script.encode()).hexdigest(),
                 "engine_lines": lines,
                 "engine_sha256": lines_sha256(lines)}
        try:
            spec = step.spec()
            self.check_submittable(spec)  # type: ignore[attr-defined]
        except DiamondError as e:
            return None, str(e), shown
        return spec, None, shown

    def _rendered_candidates(self, ready: list[tuple[str, Any, JobSpec | None, str | None]]
                             ) -> list[dict[str, Any]]:
        """A step's candidate sites as its plan lists them: each site's rendered script and
        sha256, or why it cannot run the step."""
        out: list[dict[str, Any]] = []
        for site, target, spec, refused in ready:
            if refused is None:
                try:
                    script, digest, where = _rendered_in(target, spec)
                except DiamondError as e:
                    refused = str(e)
            if refused is not None:
                out.append({"site": site, "refused": refused})
                continue
            out.append({"site": site, "scheduler": target.cfg.scheduler,
                        "working_directory": where, "script": script,
                        "script_sha256": digest})
        return out

    async def _approved_pins(self, source: str | Path | dict[str, Any] | Workflow,
                             plan: dict[str, Any]) -> dict[str, Any]:
        """The pins of the approved `plan`, once the workflow and every step's rendered
        scripts are found to be those it shows; PlanChanged naming the first difference."""
        from .federation_plan import PlanChanged

        fresh = await self.plan_workflow(source)
        if fresh["workflow_sha256"] != plan.get("workflow_sha256"):
            raise PlanChanged("the workflow differs from the approved one")
        now, then = approval_pins(fresh), approval_pins(plan)
        for name, digest in now["engine"].items():
            if then["engine"].get(name) != digest:
                raise PlanChanged(f"step {name!r}: the lines the engine adds to it differ "
                                  "from the approved ones")
        for name, sites in now["steps"].items():
            was = then["steps"].get(name, {})
            for site in sorted(set(sites) | set(was)):
                if sites.get(site) != was.get(site):
                    raise PlanChanged(f"step {name!r}: {_pin_change(site, was, sites)}")
        return now

    async def run_workflow_approved(self, source: str | Path | dict[str, Any] | Workflow,
                                    plan: dict[str, Any], *,
                                    origin: dict[str, Any] | None = None,
                                    workflow_id: str | None = None) -> WorkflowView:
        """Run exactly the approved workflow: PlanChanged when it, or a step's rendered script
        on a site, differs from the plan. Its steps then run only on the sites the plan
        listed for them, with those scripts: a step whose site or script would differ waits
        for a new approval (`approve_workflow`)."""
        pins = await self._approved_pins(source, plan)
        return await self.run_workflow(source, origin=origin, workflow_id=workflow_id,
                                       approval=pins)

    async def workflow_approval_plan(self, workflow_id: str) -> dict[str, Any]:
        """The plan to approve again for stored workflow `workflow_id` (as `plan_workflow`,
        with the steps waiting for approval and why). BadInput for an unknown workflow."""
        from .workflow.model import Workflow

        rec = self.store.get_workflow(workflow_id)
        plan = await self.plan_workflow(await asyncio.to_thread(
            Workflow.model_validate, self.store.workflow_spec_to_run(rec)))
        plan["workflow_id"] = workflow_id
        plan["awaiting_approval"] = {s.name: s.reason for s in rec.steps
                                     if s.phase == "unapproved"}
        return await asyncio.to_thread(_shown_plan, plan)

    async def approve_workflow_shown(self, workflow_id: str, plan_sha256: str
                                     ) -> WorkflowView:
        """Approve the plan of workflow `workflow_id` that a person was shown, named by its
        `plan_sha256` (from `workflow_approval_plan`): the plan is made again and approved
        only when it is still that one. PlanChanged when it differs (the workflow, a step's
        rendered script, its sites or what waits changed since), naming the new sha256;
        BadInput as `approve_workflow`."""
        from .federation_plan import PlanChanged

        show = f"`diamond workflow plan {shlex.quote(str(workflow_id))}`"
        if not isinstance(plan_sha256, str) or not re.fullmatch(r"[0-9a-f]{64}", plan_sha256):
            raise BadInput(f"plan hash {str(plan_sha256)[:80]!r} is not a sha256 (64 hex "
                           f"digits, as {show} prints it)")
        plan = await self.workflow_approval_plan(workflow_id)
        if plan["plan_sha256"] != plan_sha256:
            raise PlanChanged(f"workflow {workflow_id}'s plan changed since it was shown (its "
                              f"sha256 is now {plan['plan_sha256']}): show it again with "
                              f"{show} before approving")
        return await self.approve_workflow(workflow_id, plan)

    async def approve_workflow(self, workflow_id: str, plan: dict[str, Any]) -> WorkflowView:
        """A person approved `plan` (from `workflow_approval_plan`) for running workflow
        `workflow_id`: its pins replace the workflow's, and the steps that waited for
        approval go on. PlanChanged when the workflow or a rendered script is no longer what
        the plan shows; BadInput for an unknown or finished workflow or a plan of another."""
        from .store.workflows import WORKFLOW_DONE
        from .workflow.model import Workflow

        rec = self.store.get_workflow(workflow_id)
        if plan.get("workflow_id") != workflow_id:
            raise BadInput(f"the plan is not workflow {workflow_id}'s (it names "
                           f"{plan.get('workflow_id')!r}): ask for its plan first")
        if rec.state in WORKFLOW_DONE:
            raise BadInput(f"workflow {workflow_id} has ended ({rec.state}): nothing to approve")
        pins = await self._approved_pins(await asyncio.to_thread(
            Workflow.model_validate, self.store.workflow_spec_to_run(rec)), plan)
        self.store.update_workflow_data(workflow_id, {"approval": pins})
        for st in rec.steps:
            if st.phase == "unapproved":
                self.store.update_step(workflow_id, st.name, phase="waiting", reason="",
                                       event={"approved": True})
        await self.workflow_engine.advance(workflow_id)
        return self.workflow(workflow_id)

    def workflow_not_found(self, workflow_id: str) -> str | None:
        """None when a stored workflow has the id `workflow_id`; else what a face says of it
        (no such workflow, or the ids of the workflows with that name)."""
        if self.store.has_workflow(workflow_id):
            return None
        return self.store.unknown_workflow(workflow_id)

    def workflow(self, workflow_id: str) -> WorkflowView:
        """Workflow `workflow_id` as stored: its state and each step's site, job and state.
        An unfinished step whose job is on a site this sites file lacks (the workflow was
        started with another file, or handed back for one) or an operator did not allow
        here, with no word of its own, says so: its state is the one last recorded, which
        this engine cannot ask about (it was shown PENDING without a word). BadInput for an
        unknown workflow."""
        from .workflow.engine import workflow_view

        view = workflow_view(self.store, workflow_id)
        for s in view.steps:
            if s.job and s.site and s.site not in self.sites and not s.state.terminal \
                    and not s.reason:
                s.reason = (f"its site {s.site} {self.sites.absence(s.site)}: its state is "
                            "the one last recorded; a server that uses it follows it")
        return view

    def workflows(self, *, limit: int | None = 50) -> list[WorkflowView]:
        """Stored workflows, newest first, at most `limit` (None: all)."""
        return [self.workflow(r.id) for r in self.store.list_workflows(limit=limit)]

    async def workflow_status(self, workflow_id: str, *, refresh: bool = False
                              ) -> WorkflowView:
        """Workflow `workflow_id` as stored or, with `refresh`, after asking the sites about its
        unfinished jobs (an unreachable site keeps the stored state). BadInput for an unknown
        workflow."""
        view = self.workflow(workflow_id)
        if refresh:
            from .store.workflows import WORKFLOW_DONE

            for s in view.steps:
                if s.job and not s.state.terminal:
                    with contextlib.suppress(DiamondError):
                        await self.status(s.job, refresh=True)  # type: ignore[attr-defined]
            view = self.workflow(workflow_id)
            if view.state not in WORKFLOW_DONE and any(s.job and s.state.terminal
                                                       for s in view.steps):
                # a step's job that ended (cancelled directly, say) is acted on now: with no
                # engine driving the workflow, it stayed PENDING, its next steps waiting
                await self.workflow_engine.advance(workflow_id)
            view = self.workflow(workflow_id)
        return view

    async def wait_workflow(self, workflow_id: str, *, timeout: float | None = None,
                            on_trouble: Callable[[str], Any] | None = None) -> WorkflowView:
        """Drive (or follow) workflow `workflow_id` until it ends and return its view. A site
        of an unfinished step that cannot be reached does not end the wait (its jobs are
        asked about again with backoff); `on_trouble(note)` is called once per such site.
        DiamondError after `timeout` seconds (naming a site that has not answered); BadInput
        for an unknown workflow."""
        engine = self.workflow_engine
        await engine.advance(workflow_id)
        waiting = asyncio.ensure_future(engine.wait(workflow_id, timeout=timeout))
        told: set[str] = set()
        try:
            while True:
                done, _ = await asyncio.wait({waiting}, timeout=TROUBLE_CHECK_S)
                if done:
                    break
                for site, trouble in self._steps_trouble(workflow_id).items():
                    if on_trouble is not None and site not in told:
                        told.add(site)
                        on_trouble(f"{site} is unreachable ({trouble}); still following "
                                   f"workflow {workflow_id}: asking again with backoff "
                                   f"until it answers")
            try:
                return waiting.result()
            except BadInput:
                raise
            except DiamondError as e:  # timed out: say which sites did not answer
                troubles = [t for site in self._steps_trouble(workflow_id)
                            if (t := self.journal.site_trouble(site))]
                if not troubles:
                    raise
                raise DiamondError(f"{e} ({'; '.join(troubles)})") from None
        finally:
            waiting.cancel()

    def _steps_trouble(self, workflow_id: str) -> dict[str, str]:
        """The sites of the workflow's unfinished submitted steps that cannot be asked now,
        each with why."""
        out: dict[str, str] = {}
        for step in self.workflow(workflow_id).steps:
            mon = self.journal.monitors.get(step.site or "")
            if step.job and not step.state.terminal and mon is not None and mon.trouble:
                out[step.site or ""] = mon.trouble
        return out

    async def cancel_workflow(self, workflow_id: str) -> WorkflowView:
        """Cancel every unfinished step of workflow `workflow_id` (their jobs cancelled on their
        sites) and return its view. BadInput for an unknown workflow."""
        await self.workflow_engine.cancel(workflow_id)
        return self.workflow(workflow_id)

    store: Any  # provided by Federation, as are status(), subscribe() and the rest
    journal: Any
