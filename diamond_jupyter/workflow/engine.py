"""The workflow engine: drives each workflow's steps from job events, with everything in
the store, so any engine (after a restart, or the server adopting a CLI's workflow) can take
over where the last one stopped.

- Queue-ahead: a step is placed and submitted as soon as every step it needs has a job in a
  queue (or is done). It waits in the scheduler's queue meanwhile:
  - behind a same-site upstream, by the scheduler's own dependency (afterok); its inputs are
    copied from the upstream's working directory by a line before its body;
  - behind a cross-site upstream, behind a GATE where the scheduler allows it: a tiny held
    job on the step's site that the step waits for (afterany). When the upstream completed,
    the engine copies the inputs (SFTP relay, Globus where configured) and cancels the
    gate, which lets the step start with the place in the queue it got at submission (a
    held job that is released is queued anew, behind every job submitted meanwhile). A
    gang member, or a step on a site without gates, is submitted HELD and released.
  - a step that waits only so (its site known, every unfinished upstream on another known
    site) needs no upstream job id: it goes in first, before those upstreams' estimates and
    submits, so its rank in its queue dates from the workflow's start (`_gated_ahead`). An
    `auto` step goes in ahead too once every unfinished upstream's site is known, but only
    after every fixed-site step that can go in has gone in: no fixed-site submit waits for
    another step's placement. It is placed counting its inputs' transfer from those sites,
    and, placed on an upstream's site, left waiting for that upstream's job id (its edge is
    then an afterok). `auto` steps that need none of each other are placed side by side.
  - No submit waits for an estimate: a fixed-site step's expected end is asked beside its
    submit and recorded when it comes (asked again after a restart); only a downstream
    `auto` step's placement waits for it (`_inputs_ready_at_once_estimated`).
- Placement of an `auto` step counts the transfer time of its inputs from their sites. A
  step placed ahead is placed for when its inputs are expected to exist; when they do, it
  is looked at once more, and moved (its job and gate cancelled, submitted anew there) if
  another site is now expected to end it much sooner (MOVE_GAIN_S, MOVE_GAIN_SHARE): its
  site may have filled meanwhile. That look runs beside the copy of its inputs and the
  gate's cancel, not before them (placement took up to 3.4 s in the benchmark's runs); a
  step that started before the answer stays. A step the workflow pins to a site, or a gang member,
  stays where it is.
- Gangs: every member is submitted held and all are released together, only when every
  member is ready and its site can start it now, so no partial gang ever runs.
- Failure: `retries` resubmissions (`on_failure: resubmit-elsewhere` on a site not tried yet,
  `stop` on the same site); steps queued behind a resubmitted step are resubmitted too,
  but for a step whose job refers to nothing of the failed run (held, no dependency on it,
  not on its site): it keeps its place, held until the new run ends (`_keeps_place`); and
  one behind it by an afterok on its site, where the site changes a queued job's
  dependency: its afterok is moved to the new run's job (`_redependable`, `_redepend`).
  A replaced run whose cancel the site refuses is said ("stuck" attention) and asked to
  cancel again at each advance until it ended (`_cancel_superseded`, `_cancel_again`).
  When the retries are spent, the workflow stops: every other step is cancelled, FAILED.
- A step on (or pinned to) a site this engine's sites file lacks (an engine started with
  another file, or an edited one) is left alone, its reason saying so: never submitted,
  released, failed nor cancelled from here; the engine does the steps it reaches and hands
  the workflow back for an engine whose file lists that site (`_note_unreached`,
  `_hand_back`). A stop from here notes that step's job for such an engine to cancel.
- Cancel cancels every step's job. One engine drives a workflow at a time (a lease, as for
  transfers); the others leave it alone while that engine lives. Every write that drives a
  workflow (its steps' changes, its state, a step's submit intent) carries the generation of
  the lease this engine got (a fence), and the actions the store cannot see (a release, a
  cancel, a copy) are checked against it first: an engine that stalled past the takeover
  and wakes is refused (LeaseLost) and drops the workflow, with a `lease.lost` event.

The engine sits below the Federation: it gets the few operations it needs (`WorkflowOps`)
and never imports the facade.
"""

from __future__ import annotations

import asyncio
import contextlib
import posixpath
import re
import shlex
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, NamedTuple, Protocol

from ..aio import within
from ..attention import make as attention_event
from ..dialects.scripts_common import runs_shell_lines, shell_lines_then
from ..leases import Fence, LeaseLost, fence_of, generation
from ..log_lines import one_line_logger
from ..model import (
    BadInput,
    Dependency,
    DiamondError,
    Event,
    Job,
    JobSpec,
    JobState,
    Resources,
    SubmitUnsure,
    provisional_id,
    utcnow,
)
from ..placement_fit import aware
from ..store.seal import SealError
from ..store.workflows import WORKFLOW_DONE, StepRecord, WorkflowRecord
from .model import StepView, Workflow, WorkflowView

log = one_line_logger(__name__)

SUBMITTED = ("queued", "held", "moving", "ready", "released")
FINAL_PHASES = ("done", "failed", "cancelled")
GANG_RECHECK_S = 5.0  # a gang that cannot start yet is looked at again this often
# a queued-ahead `auto` step moves when its upstream has ended only if another site is
# expected to end it this much sooner: at least MOVE_GAIN_S, and MOVE_GAIN_SHARE of the time
# its own site is expected to take (it gives up its place in that queue)
MOVE_GAIN_S = 30.0
MOVE_GAIN_SHARE = 0.25
SWEEP_S = 15.0  # unowned workflows adopted, owned ones re-checked (missed events)
# an ended workflow's earlier runs still queued (their cancel refused): asked again by the
# sweep after this, the wait doubling up to the cap, until each has ended
LEFT_QUEUED_FIRST_S = SWEEP_S
LEFT_QUEUED_MAX_S = 1800.0
LEFT_QUEUED_SCAN = 500  # the most recent ended workflows looked at when the sweep starts
OUTPUTS_RECHECK_S = 30.0  # a step's outputs the site did not answer about are asked again
# estimates of fixed-site steps asked beside their submits at once (each reads its site)
ESTIMATES_AT_ONCE = 4
# estimates asked of steps alike (the same job but for its name, on the same site, with the
# same inputs, ready at the same time) within this many seconds share one placement: a wide
# fan-out's steps ask one, not one each (issue 17); placement reads views this old anyway
ESTIMATE_SHARED_S = 5.0
# the estimates come within this many seconds are recorded together, in one write (a
# fan-out's steps get theirs one by one, as their submits go); a downstream placement waiting
# for one waits this much longer at most
ESTIMATES_WRITTEN_WITHIN_S = 0.05
# steps of one pass whose submits are recorded in one durable write (`_flush_submits`):
# one fsync a batch, not one a step; a batch is sent in seconds, well within the intent
# sweep's grace, and a crash mid-batch leaves each of its steps bound or found by its token
SUBMIT_BATCH = 100


class _PendingSubmit(NamedTuple):
    """A step's submit decided in a pass and not yet recorded: what `_send` sends."""

    name: str
    spec: JobSpec
    site: str
    token: str
    fields: dict[str, Any]  # the step's "submitting" fields (`update_step`)
    held: bool
    gate: Job | None
    placed: Estimate | None
    sources: dict[str | None, int]
    attempt: int
    afterok: list[tuple[str, str | None]]
    unqueued: list[str]
    copies: list[tuple[str, str]]
    arriving: list[str]
    note: str


class Estimate(NamedTuple):
    """A step's site, and when it is expected to end there and how long it runs (None:
    placement could not say)."""

    site: str
    end: datetime | None
    runtime_s: float | None


class WorkflowOps(Protocol):
    """What the engine needs from the layers below the facade (given by the Federation)."""

    store: Any
    engine_id: str

    def site_names(self) -> list[str]: ...
    def site_absence(self, site: str) -> str:
        """Why `site`, none of `site_names`, is not used here (`Sites.absence`)."""
        ...
    def supports_dependency(self, site: str) -> bool: ...
    def supports_gate(self, site: str) -> bool: ...
    def supports_dependency_update(self, site: str) -> bool: ...
    async def update_dependencies(self, job: Job, deps: list[Dependency]) -> None:
        """Replace the dependencies of `job`, queued (DiamondError when the site refuses)."""
        ...
    def new_token(self) -> str: ...
    async def place(self, spec: JobSpec, sources: dict[str | None, int],
                    exclude: set[str], ready_at: datetime | None = None) -> Estimate: ...
    async def expected(self, spec: JobSpec, site: str, sources: dict[str | None, int],
                       ready_at: datetime | None) -> Estimate: ...
    async def submit(self, spec: JobSpec, site: str, *, hold: bool, token: str,
                     origin: dict[str, Any], fence: Fence | None = None) -> Job:
        """Submit a step's job; with `fence`, its intent is recorded only while that lease
        holds (LeaseLost, nothing submitted, else)."""
        ...
    # optional: `reserve_submits(workflow_id, [StepSubmit], fence)` records a batch of
    # steps' submits in one durable write, each then sent by `submit(..., reserved=True)`;
    # `unreserve(token, reason)` closes one not sent; `forget_prepared(tokens)` drops what was
    # prepared for those left unsent otherwise. Without them each step is recorded alone.
    async def cancel(self, job: Job) -> None: ...
    async def release(self, job: Job) -> None: ...
    async def refresh(self, job: Job) -> Job: ...
    async def recover_submit(self, job: Job) -> float: ...
    def follow(self, job: Job) -> None: ...
    async def transfer(self, src: str, dst: str, *, transfer_id: str, job_id: str,
                       recursive: bool = False) -> Any: ...
    async def can_start_now(self, job: Job) -> bool: ...
    async def step_sha256(self, spec: JobSpec, site: str) -> str: ...

    async def missing_files(self, site: str, paths: list[str]) -> list[str]:
        """Which of `paths` (absolute; ending with / a directory) `site` does not have: one
        bounded command; DiamondError when the site does not answer."""
        ...
    def subscribe(self, callback: Callable[[Event], Any]) -> Callable[[], None]: ...
    async def publish(self) -> None: ...


def step_end(st: StepRecord, job: Job, inputs_end: datetime | None, now: datetime
             ) -> datetime | None:
    """When the step recorded as `st`, run by `job`, is expected to end, its inputs expected
    to exist at `inputs_end` (see `WorkflowEngine._expected_end`)."""
    if job.state.terminal:
        return aware(job.ended_at) if job.ended_at else None
    runtime = st.data.get("expected_runtime_s")
    if job.started_at is not None:
        return max(now, aware(job.started_at) + timedelta(seconds=runtime)) \
            if runtime is not None else None
    try:
        end: datetime | None = aware(datetime.fromisoformat(st.data["expected_end"]))
    except (KeyError, TypeError, ValueError):
        end = None
    if inputs_end is not None and runtime is not None:
        after_inputs = inputs_end + timedelta(seconds=runtime)
        end = after_inputs if end is None else max(end, after_inputs)
    return None if end is None else max(now, end)


def _names_dependency(script: str) -> bool:
    """Whether a step's own script asks for a dependency (a directive the engine's
    dependency update would replace)."""
    return bool(re.search(r"(?im)^\s*#\s*(SBATCH|PBS|BSUB|flux:).*(depend|\s-d\b|\s-w\b)",
                          script))


def _quoted_path(path: str) -> str:
    """A path for the shell: quoted, with a leading ~/ left to the shell's $HOME."""
    if path == "~":
        return '"$HOME"'
    if path.startswith("~/"):
        return '"$HOME"/' + shlex.quote(path[2:])
    return shlex.quote(path)


def _in_dir(workdir: str, path: str) -> str:
    """`path` (relative, checked at load) in a job's working directory: `./x` and `dir/` as
    `x` and `dir` (a copy to `dir/` would land in `dir/dir`)."""
    return posixpath.join(workdir, posixpath.normpath(path))


def output_paths(workdir: str, outputs: list[str]) -> list[str]:
    """A step's declared outputs as paths on its site, in its job's working directory (a
    directory keeps its trailing /: it must be one)."""
    return [_in_dir(workdir, p) + ("/" if p.endswith("/") else "") for p in outputs]


def copy_lines(copies: list[tuple[str, str]]) -> str:
    """Shell lines that copy each (source, destination) before the body; a missing input
    fails the job with a line on stderr. A source ending with / is a directory: its
    contents are copied, with everything under them, into the destination directory."""
    out = []
    for src, dst in copies:
        said = shlex.quote(f"workflow input {dst} could not be copied from {src}")
        if src.endswith("/"):
            d = shlex.quote(posixpath.normpath(dst))
            s = _quoted_path(src.rstrip("/") + "/.")
            out.append(f"mkdir -p -- {d} && cp -pR -- {s} {d}/ || "
                       f"{{ echo {said} >&2; exit 1; }}")
            continue
        s, d = _quoted_path(src), shlex.quote(dst)
        parent = posixpath.dirname(dst)
        mk = f"mkdir -p -- {shlex.quote(parent)} && " if parent else ""
        out.append(f"{mk}cp -p -- {s} {d} || {{ echo {said} >&2; exit 1; }}")
    return "\n".join(out) + "\n" if out else ""


def arrival_checks(paths: list[str]) -> str:
    """Shell lines that fail the job, with a line on stderr, when an input the engine was to
    copy in before letting it start is not there (a gate or hold lifted by someone else)."""
    out = []
    for p in paths:
        said = shlex.quote(f"workflow input {p} has not arrived")
        out.append(f"[ -e {shlex.quote(p)} ] || {{ echo {said} >&2; exit 1; }}")
    return "\n".join(out) + "\n" if out else ""


def gate_spec(step_name: str, spec: JobSpec) -> JobSpec:
    """The gate of a step: one task, one minute, held until the step may start (then
    cancelled: it never runs), in the step's partition and account."""
    return JobSpec(name=f"{step_name[:50]}-gate", script="true\n",
                   resources=Resources(nodes=1, tasks=1, walltime_s=60),
                   queue=spec.queue, account=spec.account)


def with_prologue(spec: JobSpec, lines: str) -> JobSpec:
    """`lines` (shell) run before the step's body. A body in another language (Python, csh,
    R: its shell or `#!` line says) is run by its interpreter after the lines, which bash
    runs (`shell_lines_then`: `exec`ed on the body's own removed file)."""
    if not lines:
        return spec
    body = spec.script if spec.script is not None else (spec.command or "") + "\n"
    interpreter = spec.shell or "/bin/bash"
    if body.startswith("#!"):  # keep the interpreter line first
        first, _, rest = body.partition("\n")
        if runs_shell_lines(first[2:]):
            return spec.model_copy(update={"script": f"{first}\n{lines}{rest}",
                                           "command": None})
        interpreter, body = first[2:].strip(), rest
    if runs_shell_lines(interpreter):
        return spec.model_copy(update={"script": lines + body, "command": None})
    return spec.model_copy(update={"script": shell_lines_then(lines, body, interpreter),
                                   "command": None, "shell": "/bin/bash"})


PROLOGUE_MARK = "{the lines above for its inputs: copies, then checks}\n"


def engine_lines(step: Any) -> list[str]:
    """What the engine may add to `step`'s script and submission at run time, as a fixed
    template whose variable parts are placeholders (`{job directory of step prep}`, `{job
    id of step prep}`, `{job id of its gate}`): each input's copy (its step on the same site)
    and its arrival check (on another site), as the lines run; where they go in the script
    (the whole script when its interpreter reads no shell lines and bash runs them first);
    the dependencies; the gate job; the hold. An approval pins its sha256 with the step's
    rendered scripts: a step whose engine lines would differ at run time (another engine
    version resumed it) waits for approval. The values put in the placeholders are in the
    step's `workflow.step` event."""
    out = []
    for inp in step.inputs:
        src = posixpath.join(f"{{job directory of step {inp.from_}}}", inp.path)
        out.append(f"input {inp.dest}, step {inp.from_} on the same site: "
                   + copy_lines([(src, inp.dest)]).strip())
        out.append(f"input {inp.dest}, step {inp.from_} on another site (copied by the "
                   "engine before it starts): " + arrival_checks([inp.dest]).strip())
    if out:
        spec = step.spec()
        body = spec.script if spec.script is not None else (spec.command or "") + "\n"
        wrapped = with_prologue(spec, PROLOGUE_MARK)
        first, _, rest = body.partition("\n")
        if body.startswith("#!") and wrapped.script == f"{first}\n{PROLOGUE_MARK}{rest}":
            out.append("where: after its #! line")
        elif wrapped.script == PROLOGUE_MARK + body:
            out.append("where: before its first line")
        else:  # another interpreter: bash runs the lines, then the body
            out.append(f"where: the script becomes, run by {wrapped.shell}:\n"
                       + (wrapped.script or ""))
    for n in step.needs:
        out.append(f"while step {n} is queued or running on the same site: dependency "
                   f"afterok:{{job id of step {n}}}")
    if step.needs or step.inputs:
        gate = gate_spec(step.name, JobSpec(queue="{its partition}", account="{its account}"))
        out.append("while a step it needs runs on another site, or its inputs are copied: "
                   "on Slurm a dependency afterany:{job id of its gate}, the gate being a "
                   f"held job {gate.name!r} ({gate.resources.nodes} node, "
                   f"{gate.resources.tasks} task, {gate.resources.walltime_s} s, in its "
                   f"partition and account) running {gate.script.strip()!r}, cancelled "
                   "when the step may start; elsewhere the step is submitted held and "
                   "released then")
    if step.gang:
        out.append(f"submitted held, released when every member of gang {step.gang} can "
                   "start")
    return out


def engine_sha256(step: Any) -> str:
    """The sha256 an approval pins for `engine_lines(step)`."""
    return lines_sha256(engine_lines(step))


def lines_sha256(lines: list[str]) -> str:
    """The sha256 of engine lines (`engine_lines`) as an approval pins them."""
    import hashlib

    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def workflow_view(store: Any, workflow_id: str) -> WorkflowView:
    """The workflow as the faces show it, from the store alone."""
    rec = store.get_workflow(workflow_id)
    wf = Workflow.model_validate(rec.spec)
    steps = []
    for name in wf.order():
        st, s = rec.step(name), wf.step(name)
        job = store.job_by_token(st.token, read_only=True) if st.token else None
        if job is not None:
            state = job.state
        elif st.phase == "cancelled":
            state = JobState.CANCELLED
        elif st.phase == "failed":
            state = JobState.FAILED
        elif st.phase == "done":
            state = JobState.COMPLETED
        else:
            state = JobState.PENDING
        # its job left on a site the stopping engine's sites file lacks (`_stop`)
        left = job is not None and not state.terminal \
            and job.id in (st.data.get("uncancelled") or [])
        if st.phase == "cancelled" and not state.terminal and not left:
            state = JobState.CANCELLED
        # its outputs are missing, or its inputs never came (its job cancelled for that)
        # or its job outlived a cancel its site refused
        if st.phase == "failed" and (state in (JobState.COMPLETED, JobState.CANCELLED)
                                     or not state.terminal):
            state = JobState.FAILED
        # on a site an engine's sites file lacks: left alone, or not cancelled, by it
        unreached = st.data.get("unreached") if st.phase not in FINAL_PHASES or left \
            else None
        # a member ready while its gang waits: what it waits for (`_release_gang`)
        gang_note = (rec.data.get("gang_notes") or {}).get(s.gang) \
            if s.gang and st.phase == "ready" else None
        steps.append(StepView(name=name, site=st.site, job=job.id if job else None,
                              state=state, needs=s.needs, gang=s.gang, attempt=st.attempt,
                              reason=unreached or gang_note or st.reason
                              or (job.reason if job else None)))
    try:
        state = JobState(rec.state)
    except ValueError:
        state = JobState.UNKNOWN
    reason = rec.reason
    unapproved = [f"step {st.name!r} {st.reason}" for st in rec.steps
                  if st.phase == "unapproved" and rec.state not in WORKFLOW_DONE]
    if unapproved:  # said in the workflow's own state, not only in its steps
        reason = "awaiting a new approval: " + "; ".join(unapproved)
    return WorkflowView(id=rec.id, name=rec.name, state=state, steps=steps,
                        reason=reason, awaiting_approval=[
                            st.name for st in rec.steps if st.phase == "unapproved"
                            and rec.state not in WORKFLOW_DONE])


# a step's reason while the job of its submit, whose answer was lost, is looked for
LOOKING = ("looking for its job in the site's queue by its token (not submitted again "
           "unless it is closed as never submitted)")


class _NoGate(Exception):
    """The site refused the step's gate."""


def _ended_as(job: Job) -> str:
    """How a job that ended without its scheduler's reason ended: `failed (exit code 3)`,
    `timeout` ..."""
    said = job.state.value.lower()
    if job.state == JobState.FAILED and job.exit_code not in (None, 0):
        return f"{said} (exit code {job.exit_code})"
    return said


class WorkflowEngine:
    def __init__(self, ops: WorkflowOps) -> None:
        self.ops = ops
        self.store = ops.store
        self._locks: dict[str, asyncio.Lock] = {}  # by workflow, while an advance holds it
        self._again: set[str] = set()  # an advance was asked while one ran
        self._closing = False  # close() has begun: a cancelled advance's ask is not handed on
        self._jobs: dict[str, str] = {}  # job id (provisional and bound) -> workflow id
        self._tasks: dict[str, asyncio.Task] = {}  # moving inputs, by step key
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._runs: set[asyncio.Task] = set()
        # workflows an advance is asked for and not yet begun (many copies ending, many
        # job events at once: one advance, not one each, every one reading every step)
        self._soon: set[str] = set()
        self._sweeper: asyncio.Task | None = None
        self._unsubscribe = ops.subscribe(self._on_event)
        self._owned: set[str] = set()
        # the lease of each workflow this engine drives or drove (a stale one stays after a
        # loss, so writes still under way are refused; none: a face's request, unfenced)
        self._fences: dict[str, Fence] = {}
        # the step jobs our monitors follow: token -> workflow id
        self._followed: dict[str, str] = {}
        # the steps this engine wrote since its advance last read them, by workflow: read
        # again alone after a submit (`_refreshed`), never the whole workflow
        self._written: dict[str, set[str]] = {}
        # the estimates of fixed-site steps asked beside their submits, by step key: a
        # downstream step placed for when its inputs exist waits for them, not the submits
        self._estimates: dict[str, asyncio.Task] = {}
        self._estimate_slots = asyncio.Semaphore(ESTIMATES_AT_ONCE)
        # the estimates asked lately, by what they were asked of: (when, its answer to come)
        # and the steps it answered
        self._shared_estimates: dict[tuple[Any, ...],
                                     tuple[float, asyncio.Future, set[str]]] = {}
        # the estimates come but not recorded yet, by workflow: (by step, its update; done
        # once they are recorded), written together (`_record_estimate`)
        self._estimates_due: dict[str, tuple[dict[str, dict[str, Any]], asyncio.Future]] = {}
        self._sending: set[str] = set()  # workflows a batch of submits is being sent of
        self._stopping: set[str] = set()  # workflows this engine is stopping (until ended)
        # the submits of the pass under way, by workflow, recorded together (`_flush_submits`)
        self._batches: dict[str, list[_PendingSubmit]] = {}
        # False: each step's submit recorded alone, as before issue 17 (benchmarks compare)
        self.batch_submits = True
        # ended workflows whose steps' earlier runs are still queued: id -> (when to ask
        # again, on the loop's clock; the wait after that)
        self._left_queued: dict[str, tuple[float, float]] = {}
        self.changed: asyncio.Event = asyncio.Event()  # set after every advance

    # -- life cycle ----------------------------------------------------------------------
    def start_sweeping(self, every_s: float = SWEEP_S) -> None:
        if self._sweeper is None:
            self._sweeper = asyncio.ensure_future(self._sweep(every_s))

    async def _sweep(self, every_s: float) -> None:
        with contextlib.suppress(Exception):  # those an engine stopped before left behind
            for rec in self.store.list_workflows(WORKFLOW_DONE, limit=LEFT_QUEUED_SCAN):
                self._note_left_queued(rec)
        while True:
            with contextlib.suppress(Exception):
                await self.resume()
            with contextlib.suppress(Exception):
                await self.cancel_left_queued()
            await asyncio.sleep(every_s)

    def _note_left_queued(self, rec: WorkflowRecord) -> None:
        """Ended workflow `rec` has earlier runs still queued: asked again from the sweep."""
        if rec.id not in self._left_queued and any(
                st.data.get("uncancelled") for st in rec.steps):
            delay = LEFT_QUEUED_FIRST_S
            self._left_queued[rec.id] = (asyncio.get_running_loop().time() + delay, delay)

    async def cancel_left_queued(self, now: float | None = None) -> None:
        """Ask again to cancel the earlier runs an ended workflow left queued (due now,
        `now` on the loop's clock): one the scheduler says ended is let go (its end, stored,
        ends its "stuck" attention); the workflow is let go when none is left, else its
        wait doubles (to LEFT_QUEUED_MAX_S)."""
        now = asyncio.get_running_loop().time() if now is None else now
        for wid, (due, delay) in list(self._left_queued.items()):
            if due > now:
                continue
            try:
                rec = self.store.get_workflow(wid)
                for st in rec.steps:
                    if st.data.get("uncancelled"):
                        await self._cancel_again(rec, st.name)
                        rec = self.store.get_workflow(wid)
            except DiamondError as e:
                log.info("workflow %s: its runs left queued not asked again: %s", wid, e)
            else:
                if not any(st.data.get("uncancelled") for st in rec.steps):
                    del self._left_queued[wid]
                    continue
            delay = min(delay * 2, LEFT_QUEUED_MAX_S)
            self._left_queued[wid] = (now + delay, delay)

    async def resume(self) -> list[str]:
        """Adopt every unfinished workflow no live engine drives, and advance it; not one
        this engine handed back for sites its file lists none of (taken up, it would be
        handed back again at once, on every sweep), until an engine claims it or the file
        changes. One another engine (or this one before a restart) handed back is taken up
        once: its steps on the sites listed here go on (their job ends are followed by no
        one else)."""
        took = []
        names = set(self.ops.site_names())
        for wf in self.store.unfinished_workflows():
            if self._handed_back_here(wf) and not names & set(wf.data["unreached_sites"]):
                continue
            if wf.id not in self._owned:
                claimed = self.store.claim_workflow(wf.id, self.ops.engine_id)
                if claimed is None:
                    continue
                self._hold(claimed)
            took.append(wf.id)
            await self.advance(wf.id)
        return [w for w in took if w in self._owned or self.store.get_workflow(w).state
                in WORKFLOW_DONE]

    # -- the lease ---------------------------------------------------------------------
    def _hold(self, rec: WorkflowRecord) -> None:
        """This engine drives workflow `rec`, just claimed: its writes carry this lease."""
        self._owned.add(rec.id)
        self._fences[rec.id] = fence_of("workflow", rec.id, rec.data)

    def _drop(self, wid: str, lost: LeaseLost) -> None:
        """Another engine took the workflow over while this one stalled: stop driving it (its
        copies in flight are stopped), and say so once."""
        if wid not in self._owned:
            return
        self._owned.discard(wid)
        for key, task in list(self._tasks.items()):
            if key.startswith(wid + "/"):
                task.cancel()
        log.warning("workflow %s: %s", wid, lost)
        with contextlib.suppress(DiamondError):
            self.store.append_event(Event(kind="lease.lost", data={
                **lost.event_data(self.ops.engine_id), "workflow_id": wid}))

    def _step(self, wid: str, name: str, **kw: Any) -> StepRecord:
        self._written.setdefault(wid, set()).add(name)
        return self.store.update_step(wid, name, fence=self._fences.get(wid), **kw)

    def _steps(self, wid: str, updates: list[tuple[str, dict[str, Any]]]) -> list[StepRecord]:
        """`_step` for each (step name, its keywords) of `updates`, in one transaction."""
        self._written.setdefault(wid, set()).update(name for name, _ in updates)
        return self.store.update_steps(wid, updates, fence=self._fences.get(wid))

    def _refreshed(self, rec: WorkflowRecord) -> WorkflowRecord:
        """`rec` with the steps written since it was read read again (the whole workflow
        when its state moved): a step's submit costs the same however many steps there are."""
        return self.store.refresh_workflow(rec, self._written.pop(rec.id, set()))

    def _set_state(self, wid: str, state: str, reason: str | None = None) -> WorkflowRecord:
        return self.store.set_workflow_state(wid, state, reason, fence=self._fences.get(wid))

    def _set_data(self, wid: str, data: dict[str, Any]) -> WorkflowRecord:
        return self.store.update_workflow_data(wid, data, fence=self._fences.get(wid))

    def _check(self, wid: str) -> None:
        """LeaseLost before an action the store cannot see (a cancel, a release, a copy)
        when this engine's lease on the workflow is stale."""
        self.store.check_fence(self._fences.get(wid))

    async def close(self) -> None:
        """Stop driving; every owned workflow is handed back for the next engine."""
        self._closing = True
        self._unsubscribe()
        for t in self._timers.values():
            t.cancel()
        tasks = [*self._tasks.values(), *self._runs, *self._estimates.values()]
        if self._sweeper is not None:
            tasks.append(self._sweeper)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for wid in list(self._owned):
            with contextlib.suppress(DiamondError):
                self.store.release_workflow(wid, self.ops.engine_id)
        self._owned.clear()
        self._fences.clear()

    # -- faces ---------------------------------------------------------------------------
    async def run(self, wf: Workflow, *, origin: dict[str, Any] | None = None,
                  workflow_id: str | None = None,
                  approval: dict[str, Any] | None = None,
                  unchecked: dict[str, str] | None = None) -> str:
        """Record the workflow, claim it and submit what can be submitted now. `approval`:
        the pins of an approved plan (per step, the sites it may run on and the sha256 of
        its script rendered for each): a step runs only so (`_approved`). `unchecked`: the
        steps not checked before the run, with why: each step's reason and event say it
        (until its submit, which checks it)."""
        wf.check(self.ops.site_names())
        rec = self.store.create_workflow(wf.name, wf.model_dump(mode="json", by_alias=True),
                                         wf.order(), origin=origin, owner=self.ops.engine_id,
                                         workflow_id=workflow_id,
                                         data={"approval": approval} if approval else None)
        self._hold(rec)
        if unchecked:  # one transaction for them all (a fan-out's thousand steps)
            self._steps(rec.id, [(name, {"reason": why, "event": {"unchecked": why}})
                                 for name, why in unchecked.items()])
        await self.ops.publish()
        await self.advance(rec.id)
        return rec.id

    def view(self, workflow_id: str) -> WorkflowView:
        return workflow_view(self.store, workflow_id)

    async def cancel(self, workflow_id: str, reason: str = "cancelled by request") -> None:
        rec = self.store.get_workflow(workflow_id)
        if rec.state in WORKFLOW_DONE:
            return
        mine = self._fences.get(workflow_id)
        if workflow_id in self._owned and mine and generation(rec.data) != mine.generation:
            self._drop(workflow_id, LeaseLost(mine, generation(rec.data), rec.data.get("owner")))
        if workflow_id not in self._owned:  # a face's request: whoever drives it, unfenced
            self._fences.pop(workflow_id, None)
        self._set_data(workflow_id, {"cancel_requested": True})
        await self._stop(rec, "CANCELLED", reason, None)

    async def wait(self, workflow_id: str, timeout: float | None = None) -> WorkflowView:
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            self.changed.clear()
            if self.store.get_workflow(workflow_id).state in WORKFLOW_DONE:
                return self.view(workflow_id)
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                raise DiamondError(f"timed out after {timeout:.0f}s waiting for workflow "
                                   f"{workflow_id}")
            with contextlib.suppress(asyncio.TimeoutError):  # another engine may drive it
                await within(self.changed.wait(), min(left or 5.0, 5.0))

    # -- events --------------------------------------------------------------------------
    def _on_event(self, ev: Event) -> None:
        if ev.kind.startswith("workflow."):
            self.changed.set()  # a waiter on a workflow another engine drives looks again
            return
        if ev.job_id and ev.kind in ("job.state", "job.submitted", "job.updated",
                                     "stage.in.done"):
            wid = self._jobs.get(ev.job_id) or self._jobs.get(ev.data.get("previous_id") or "")
            if wid is not None:
                self.advance_soon(wid)

    def advance_soon(self, workflow_id: str, delay: float = 0.0) -> None:
        if delay > 0:
            old = self._timers.pop(workflow_id, None)
            if old is not None:
                old.cancel()
            self._timers[workflow_id] = asyncio.get_running_loop().call_later(
                delay, self.advance_soon, workflow_id)
            return
        if workflow_id in self._soon:
            return  # an advance not started yet reads every step: one is enough
        self._soon.add(workflow_id)
        task = asyncio.ensure_future(self._advance_soon(workflow_id))
        self._runs.add(task)
        task.add_done_callback(self._runs.discard)
        # cancelled before it began: the next ask schedules one again
        task.add_done_callback(lambda t: t.cancelled() and self._soon.discard(workflow_id))

    async def _advance_soon(self, workflow_id: str) -> None:
        self._soon.discard(workflow_id)  # what changes from here on asks for another
        await self.advance(workflow_id)

    # -- the state machine -----------------------------------------------------------------
    async def advance(self, workflow_id: str) -> None:
        """Look at every step and do what can be done now (idempotent). One advance of a
        workflow at a time: one asked while another runs is done by that one, right after."""
        lock = self._locks.setdefault(workflow_id, asyncio.Lock())
        if lock.locked():
            self._again.add(workflow_id)
            return
        try:
            async with lock:
                while True:
                    self._again.discard(workflow_id)
                    try:
                        await self._advance(workflow_id)
                    except asyncio.CancelledError:
                        raise
                    except LeaseLost as lost:
                        self._drop(workflow_id, lost)
                    except Exception:
                        log.exception("workflow %s: advance failed", workflow_id)
                    await self.ops.publish()
                    self.changed.set()
                    if workflow_id not in self._again:
                        break
        finally:
            # nobody holds it now and nobody waits on it (a caller finding it held returns,
            # and taking a free one never yields): the next advance makes a new one
            if self._locks.get(workflow_id) is lock and not lock.locked():
                del self._locks[workflow_id]
            if workflow_id in self._again:  # asked of this advance, cancelled before it ran
                self._again.discard(workflow_id)
                if not self._closing:  # handed on, not lost with the cancelled one
                    self.advance_soon(workflow_id)
            if workflow_id not in self._owned and not self._handed_back_here(workflow_id):
                self._forget(workflow_id)  # ended, or driven by another engine

    async def _cancel_unended(self, workflow_id: str, job: Job | None) -> None:
        """Cancel a step's job unless there is none or it has ended; a cancel the site
        refuses is let be (the job may have ended meanwhile)."""
        if job is not None and not job.state.terminal:
            self._check(workflow_id)
            with contextlib.suppress(DiamondError):
                await self.ops.cancel(job)

    async def _cancel_superseded(self, wid: str, name: str, job: Job | None) -> None:
        """Cancel `job`, step `name`'s run that a new one replaces. A cancel the site
        refuses, the job still not ended when asked again, leaves it noted on the step
        (`uncancelled`: asked again at each later advance, the sweep's included,
        `_cancel_again`) and says so to the user as a "stuck" attention on that job: two
        runs of a step are never left queued unsaid."""
        if job is None or job.state.terminal:
            return
        self._check(wid)
        try:
            await self.ops.cancel(job)
            return
        except DiamondError as e:
            refused = str(e)
        with contextlib.suppress(DiamondError):
            job = await self.ops.refresh(job)
        if job.state.terminal:
            return  # it ended meanwhile: nothing is left queued
        noted = self.store.get_step(wid, name).data.get("uncancelled") or []
        self._step(wid, name, data={"uncancelled": sorted({*noted, job.id})})
        self._jobs[job.id] = wid  # its events advance the workflow (cancel asked again)
        log.info("workflow %s step %s: %s left queued, its cancel refused: %s", wid, name,
                 job.id, refused)
        self.store.append_event(attention_event(
            "stuck", job, f"{job.reason or job.state.value.lower()}; step {name} of "
            f"workflow {wid} runs as a new job, and {job.site} refused to cancel this one "
            f"({refused})",
            explanation="an earlier run of a workflow step left queued beside its new run: "
            f"diamond asks {job.site} to cancel it again at each poll (or run diamond "
            f"cancel {job.id})", workflow_id=wid, step=name), self._fences.get(wid))

    async def _cancel_again(self, rec: WorkflowRecord, name: str) -> None:
        """Step `name`'s earlier runs whose cancel was refused (`_cancel_superseded`): each
        not ended yet is asked to cancel again; one that ended (the scheduler asked after a
        refusal), or was cancelled now, is no longer noted. The step's own current job is
        never among them while the workflow runs."""
        st = rec.step(name)
        ended = rec.state in WORKFLOW_DONE  # no longer driven: its events route nowhere
        current = self._job(st)
        left: list[str] = []
        for job_id in st.data.get("uncancelled") or []:
            try:
                job = self.store.get_job(job_id)
            except DiamondError:
                continue  # forgotten by the store: nothing to cancel by
            if job.state.terminal or (not ended and current is not None
                                      and current.id == job.id):
                continue  # (a stopped workflow's own job left on a site: `_stop`)
            if not ended:
                self._jobs[job.id] = rec.id
                self._check(rec.id)
            try:
                await self.ops.cancel(job)
            except DiamondError as e:
                with contextlib.suppress(DiamondError):
                    job = await self.ops.refresh(job)
                if job.state.terminal:
                    continue  # it ended meanwhile, its end stored by the refresh
                log.info("workflow %s step %s: %s still not cancelled: %s", rec.id, name,
                         job.id, e)
                left.append(job_id)
        if left != st.data.get("uncancelled"):
            self._step(rec.id, name, data={"uncancelled": left or None})

    def _job(self, st: StepRecord) -> Job | None:
        """Step `st`'s job, shared and unchangeable (read for every step that needs it: an
        upstream's row is decoded once while it stays the same, not once a downstream step)."""
        if not st.token:
            return None
        job = self.store.job_by_token(st.token, read_only=True)
        if job is not None:
            self._jobs[job.id] = st.workflow_id
            self._jobs[provisional_id(job.site, st.token)] = st.workflow_id
        return job

    async def _advance(self, wid: str) -> None:
        self._written.pop(wid, None)  # read whole now
        rec = self.store.get_workflow(wid)
        if rec.state in WORKFLOW_DONE:
            if wid in self._owned:
                self._finish(wid)
            return
        if wid not in self._owned:
            claimed = self.store.claim_workflow(wid, self.ops.engine_id)
            if claimed is None:
                return
            self._hold(claimed)
            rec = claimed
        mine = self._fences[wid]
        if generation(rec.data) != mine.generation:  # taken over while this engine stalled
            raise LeaseLost(mine, generation(rec.data), rec.data.get("owner"))
        try:  # as it was given, secrets included (the store shows it redacted)
            wf = Workflow.model_validate(self.store.workflow_spec_to_run(rec))
        except SealError as e:  # never run the redacted text instead
            await self._stop(rec, "FAILED", f"cannot run the workflow's steps: {e}", None)
            return
        # 0. a retry whose engine stopped before the steps below it were looked at
        for name in wf.order():
            if rec.step(name).data.get("requeue_below"):
                await self._requeue_below(rec, wf, name)
                rec = self.store.get_workflow(wid)
        # earlier runs left queued beside their steps' new ones: their cancel asked again
        for name in wf.order():
            if rec.step(name).data.get("uncancelled"):
                await self._cancel_again(rec, name)
                rec = self.store.get_workflow(wid)
        # steps on (or pinned to) a site this engine's sites file lacks: left alone, saying
        # why, for an engine whose file lists it (never cancelled nor failed from here)
        rec, unreached, missing = self._note_unreached(rec, wf)
        # 1. what the jobs say
        for name in wf.order():
            st = rec.step(name)
            if name in unreached or (st.phase not in SUBMITTED and st.phase != "submitting"):
                continue
            job = self._job(st)
            if job is None or (st.phase == "submitting" and not job.native_id):
                continue  # an unbound submit: resolved below, never counted as a failed run
            if job.native_id and not job.state.terminal and st.token not in self._followed:
                self.ops.follow(job)  # adopted from another engine: its events reach us
                self._followed[st.token or ""] = wid
            if st.data.get("estimating") and job.spec is not None and st.site \
                    and f"{wid}/{name}" not in self._estimates and not job.state.terminal:
                # its estimate was under way when its engine stopped: asked again
                self._start_estimating(rec, wf, name, job.spec, st.site,
                                       self._sources(rec, wf, name))
            if job.state.terminal and st.data.get("unkept_for") \
                    and job.state != JobState.COMPLETED:
                # cancelled by `_unkeep`, whose engine stopped before recording the rest
                self._step(wid, name, phase="waiting", token="", data={
                    "move_error": None, "kept_for": None, "unkept_for": None,
                    "requeue_below": True}, reason=(
                    f"resubmitted: {st.data['unkept_for']} now runs on {st.site}, its site"),
                    job_id=job.id)
                await self._requeue_marked(rec, wf, name)
                rec = self.store.get_workflow(wid)
                continue
            if job.state.terminal and st.data.get("redepend") \
                    and job.state != JobState.COMPLETED and job.started_at is None:
                # ended by its scheduler for its afterok on a failed job (kill_invalid_depend)
                self._step(wid, name, phase="waiting", token="", data={
                    "move_error": None, "redepend": None, "requeue_below": True}, reason=(
                    f"resubmitted: {job.site} ended it while it waited on "
                    f"{', '.join(st.data['redepend'])}'s failed job"), job_id=job.id)
                await self._requeue_marked(rec, wf, name)
                rec = self.store.get_workflow(wid)
                continue
            if job.state == JobState.COMPLETED:
                why = await self._outputs_missing(rec, wf, name, job)
                if why is None:
                    continue  # the site did not answer: asked again later
                if why:
                    if await self._failed(rec, wf, name, job, why):
                        return
                    rec = self.store.get_workflow(wid)
                    continue
                self._step(wid, name, phase="done", job_id=job.id)
            elif job.state.terminal and st.data.get("moving_to"):
                await self._move_to(rec, wf, name)  # cancelled by its move
                rec = self.store.get_workflow(wid)
            elif job.state.terminal:
                why = job.reason or _ended_as(job)
                if await self._failed(rec, wf, name, job, why):
                    return
                rec = self.store.get_workflow(wid)
        rec = self.store.get_workflow(wid)
        if all(s.phase == "done" for s in rec.steps):
            self._set_state(wid, "COMPLETED")
            self._finish(wid)
            return
        # 2. submit what can be submitted (a gang all at once). First the fixed-site steps:
        # those gated on every upstream that has no job yet (they take their place in their
        # queues before their upstreams' submits), then every other one its upstreams
        # allow, so none waits for another step's placement (issue 17). Then the `auto`
        # steps gated so or ready, placed once their upstreams' estimates have come (those
        # that need none of each other side by side). Then the rest.
        for name in wf.order():
            if rec.step(name).phase == "waiting" and self._gated_ahead(rec, wf, name) \
                    and self._planned_site(rec, wf, name) is not None:
                await self._submit(rec, wf, name)
                rec = self._refreshed(rec)
                if rec.state in WORKFLOW_DONE:  # a step was refused: the workflow stopped
                    return
        looked = set(unreached)  # a lost submit there is not looked for from here
        rec = await self._submit_ready(rec, wf, sited_only=True, looked=looked)
        if rec.state in WORKFLOW_DONE:
            return
        placing = [n for n in wf.order() if rec.step(n).phase == "waiting" and (
            self._gated_ahead(rec, wf, n) or self._queued_behind_to_place(rec, wf, n))]
        apart = [n for n in placing if not set(wf.step(n).needs) & set(placing)]
        if len(apart) > 1:
            await asyncio.gather(*(self._submit(rec, wf, n) for n in apart))
            rec = self._refreshed(rec)
        for name in wf.order():
            if name in apart and len(apart) > 1:
                continue
            if rec.step(name).phase == "waiting" and self._gated_ahead(rec, wf, name):
                await self._submit(rec, wf, name)
                rec = self._refreshed(rec)
        if rec.state in WORKFLOW_DONE:  # a step was refused: the workflow stopped
            return
        await self._submit_ready(rec, wf, looked=looked)
        rec = self.store.get_workflow(wid)
        for name in wf.order():  # kept behind a step run again, now that it is submitted
            if rec.step(name).data.get("redepend") and name not in unreached:
                await self._redepend(rec, wf, name)
        rec = self.store.get_workflow(wid)
        for name in wf.order():  # upstreams first: a kept step waits for their estimates
            after = rec.step(name).data.get("estimate_after")
            if after and name not in unreached \
                    and all(rec.step(n).phase != "waiting" for n in after):
                self._estimate_again(rec, wf, name)
        # 3. held steps: inputs, then release
        rec = self.store.get_workflow(wid)
        for name in wf.order():
            st = rec.step(name)
            if name in unreached:
                continue
            if st.phase in ("held", "moving") and st.data.get("move_error"):
                job = self._job(st)
                if job is not None and await self._failed(rec, wf, name, job,
                                                          st.data["move_error"],
                                                          cancel_job=True):
                    return
                # run again: submitted by the next advance, not when an event next comes
                self.advance_soon(wid)
                rec = self.store.get_workflow(wid)
            elif st.phase in ("held", "moving", "ready", "released") \
                    and st.data.get("moving_to"):
                await self._move_to(self.store.get_workflow(wid), wf, name)
                self.advance_soon(wid)  # submitted on its new site by the next advance
            elif st.phase in ("held", "moving") and self._upstream_done(rec, wf, name):
                # the copy and the gate's cancel first: the move check asks placement
                # (seconds on a busy site) and matters only while the step still waits
                self._start_moving(rec, wf, name)
                self._start_rechecking(rec, wf, name)
            elif st.phase == "ready" and not wf.step(name).gang:
                await self._release(wid, name)
        rec = self.store.get_workflow(wid)
        for gang, members in wf.gangs().items():
            if set(members) & set(unreached):
                continue  # never a partial gang: released by an engine that reaches all
            phases = {m: rec.step(m).phase for m in members}
            waiting = [m for m, p in phases.items() if p in (
                "waiting", "submitting", "queued", "held", "moving", "unapproved")]
            ready = [m for m, p in phases.items() if p == "ready"]
            if ready and not waiting:  # every member yet to start is ready: all or nothing
                await self._release_gang(rec, wf, gang, ready)
        rec = self.store.get_workflow(wid)
        if rec.state == "PENDING" and any(  # (the states alone: no job decoded)
                state.rank >= 2 for state in self.store.states_of_tokens(
                    s.token for s in rec.steps if s.token).values()):
            self._set_state(wid, "RUNNING")
        if unreached:
            self._hand_back(wid, missing)

    async def _submit_ready(self, rec: WorkflowRecord, wf: Workflow, *,
                            sited_only: bool = False, looked: set[str] | None = None
                            ) -> WorkflowRecord:
        """Submit every waiting step whose upstreams are queued or done (`_can_submit`), a
        gang all at once; with `sited_only`, only the steps no placement decides (no gang
        member either), so none of them waits for another step's placement. A lost submit
        is looked for once an advance: the steps in `looked` were, those looked for now are
        added. The submits of steps outside gangs are recorded in batches (`_flush_submits`)
        where the operations allow it; a step whose upstream is in the batch waits for the
        batch to go in first. Returns `rec` as it is now."""
        if not (self.batch_submits and hasattr(self.ops, "reserve_submits")) \
                or rec.id in self._batches:
            return await self._submit_each(rec, wf, sited_only=sited_only, looked=looked)
        self._batches[rec.id] = []
        try:
            rec = await self._submit_each(rec, wf, sited_only=sited_only, looked=looked)
            await self._flush_submits(rec, wf)
        finally:
            self._batches.pop(rec.id, None)  # an error before its write: nothing recorded
        return self._refreshed(rec)

    async def _submit_each(self, rec: WorkflowRecord, wf: Workflow, *, sited_only: bool,
                           looked: set[str] | None) -> WorkflowRecord:
        """`_submit_ready`'s pass over the steps."""
        submitted_gangs: set[str] = set()
        looked = set() if looked is None else looked
        for name in wf.order():
            st = rec.step(name)
            if sited_only and (wf.step(name).gang
                               or self._planned_site(rec, wf, name) is None):
                continue
            step = wf.step(name)
            batch = self._batches.get(rec.id)
            if batch and (step.gang or st.phase == "submitting"
                          or set(step.needs) & {p.name for p in batch}):
                await self._flush_submits(rec, wf)  # what this step waits for goes in first
                rec = self._refreshed(rec)
                st = rec.step(name)
            if st.phase == "submitting" and name not in looked:
                looked.add(name)
                await self._resubmit_lost(rec, wf, name)
                rec = self._refreshed(rec)
                st = rec.step(name)
            if st.phase != "waiting":
                continue
            if step.gang:  # the members still to start go in together, all held
                if step.gang in submitted_gangs:
                    continue
                members = [m for m in wf.gangs()[step.gang] if rec.step(m).phase == "waiting"]
                if all(self._can_submit(rec, wf, m) for m in members):
                    submitted_gangs.add(step.gang)
                    await asyncio.gather(*(self._submit(rec, wf, m) for m in members))
            elif self._can_submit(rec, wf, name):
                await self._submit(rec, wf, name)
            rec = self._refreshed(rec)
        return rec

    async def _outputs_missing(self, rec: WorkflowRecord, wf: Workflow, name: str,
                               job: Job) -> str | None:
        """Why step `name` failed although its `job` completed: the declared outputs it left
        missing at its site, named ("" when all are there, or none is declared; None while
        the site does not answer: looked at again in OUTPUTS_RECHECK_S). Each check is an
        event."""
        outputs, site = wf.step(name).outputs, job.site
        if not outputs:
            return ""
        workdir = job.workdir or (job.spec.working_directory if job.spec else None)
        if not workdir:  # nowhere to look: its event says they were not checked
            self._step(rec.id, name, job_id=job.id, event={
                "outputs_unchecked": outputs,
                "error": "the job's working directory is not known"})
            return ""
        try:
            gone = await self.ops.missing_files(site, output_paths(workdir, outputs))
        except BadInput as e:  # the site can never say (no file access): not taken as there
            self._step(rec.id, name, job_id=job.id,
                       event={"outputs_unchecked": outputs, "error": str(e)})
            return f"completed, but its declared outputs cannot be checked on {site}: {e}"
        except DiamondError as e:
            note = f"outputs not checked yet: {e}"
            if rec.step(name).reason != note:
                self._step(rec.id, name, reason=note, job_id=job.id,
                           event={"outputs_unchecked": outputs, "error": str(e)})
            self.advance_soon(rec.id, OUTPUTS_RECHECK_S)
            return None
        paths = dict(zip(output_paths(workdir, outputs), outputs, strict=True))
        missing = [paths[p] for p in gone if p in paths]
        self._step(rec.id, name, job_id=job.id, reason="" if not missing else None,
                   event={"outputs": outputs, "missing_outputs": missing,
                          "workdir": workdir})
        return (f"completed, but its declared outputs are missing on {site}: "
                f"{', '.join(missing)}") if missing else ""

    def _finish(self, wid: str) -> None:
        """The workflow ended (its final state written): this engine lets it go. A submit
        still awaiting a placement reads that state (`_stopped_meanwhile`)."""
        self._owned.discard(wid)
        self._stopping.discard(wid)
        self.store.release_workflow(wid, self.ops.engine_id)
        self._fences.pop(wid, None)
        self._forget(wid)
        with contextlib.suppress(DiamondError):
            self._note_left_queued(self.store.get_workflow(wid))

    def _forget(self, wid: str) -> None:
        """What this engine noted of workflow `wid`'s jobs and steps (to route their events,
        to follow them, the steps written since the last read) goes once it no longer
        drives it (an advance after a claim notes them again)."""
        self._written.pop(wid, None)
        for noted in (self._jobs, self._followed):
            for key in [k for k, w in noted.items() if w == wid]:
                del noted[key]

    def _can_submit(self, rec: WorkflowRecord, wf: Workflow, name: str) -> bool:
        """Every step it needs is in a queue with a scheduler id, or done (without
        queue-ahead: done)."""
        for n in wf.step(name).needs:
            up = rec.step(n)
            if up.phase == "done":
                continue
            if up.phase not in SUBMITTED or not wf.queue_ahead:
                return False
            job = self._job(up)
            if job is None or not job.native_id:
                return False
        return True

    def _queued_behind_to_place(self, rec: WorkflowRecord, wf: Workflow, name: str) -> bool:
        """Step `name` is to be placed (`auto`, no gang member) now that every step it needs
        is in a queue or done, some still queued: it may be placed beside its siblings."""
        step = wf.step(name)
        return (not step.gang and self._planned_site(rec, wf, name) is None
                and any(rec.step(n).phase != "done" for n in step.needs)
                and self._can_submit(rec, wf, name))

    def _planned_site(self, rec: WorkflowRecord, wf: Workflow, name: str) -> str | None:
        """The site step `name` runs (or will run) on, where that is known before its submit:
        its recorded site once submitted, else its pin or its one named site (None: placement
        or a retry elsewhere decides)."""
        st, step = rec.step(name), wf.step(name)
        if st.phase in SUBMITTED or st.phase in ("submitting", "done"):
            return st.site
        if st.data.get("elsewhere"):
            return None
        return st.data.get("pin") or (None if step.is_auto else str(step.site))

    def _gated_ahead(self, rec: WorkflowRecord, wf: Workflow, name: str) -> bool:
        """Whether step `name` may be queued before some step it needs has a job: with
        queue-ahead, not a gang member, and every upstream not done yet on a known site other
        than its own, so every edge waits behind its gate (or hold) for the inputs to arrive
        and be checked. A step placement decides (`auto`) qualifies once its upstreams' sites
        are known; if it is placed on one of theirs, `_submit` leaves it waiting for that
        upstream's job id (afterok). An upstream whose site placement still decides may turn
        out same-site: the step waits."""
        step = wf.step(name)
        if not wf.queue_ahead or step.gang or not step.needs:
            return False
        site = self._planned_site(rec, wf, name)  # None: placed in `_submit`
        pending = [n for n in step.needs if rec.step(n).phase != "done"]
        if not any(self._job(rec.step(n)) is None for n in pending):
            return False  # every upstream has its job: the usual path (`_can_submit`)
        return all((up := self._planned_site(rec, wf, n)) is not None and up != site
                   for n in pending)

    def _upstream_done(self, rec: WorkflowRecord, wf: Workflow, name: str) -> bool:
        """The held step may get its inputs: every cross-site step it needs completed (a
        same-site one is left to the scheduler's dependency), and every step on another site
        an input comes from, needed directly or not (a grandparent's file was copied while
        that step was still queued, the parent between them being on the step's site)."""
        st, step = rec.step(name), wf.step(name)
        deps = set(st.data.get("afterok", []))
        sources = {i.from_ for i in step.inputs if rec.step(i.from_).site != st.site}
        return all(rec.step(n).phase == "done" for n in dict.fromkeys(
            [*(n for n in step.needs if n not in deps), *sources]))

    async def _resubmit_lost(self, rec: WorkflowRecord, wf: Workflow, name: str) -> None:
        """A step recorded "submitting" whose engine stopped before the submit returned."""
        st = rec.step(name)
        job = self._job(st)
        if job is None:  # the intent was never recorded: nothing reached a scheduler
            self._step(rec.id, name, phase="waiting", token="", reason="")
        elif not job.native_id and not job.state.terminal:
            # its engine is gone: the token finds the job, else it may still reach the queue
            if await self._recover_unsure(rec.id, job):
                return
            job = self._job(st) or job
        if job is None:
            return
        looked_for = {"reason": "", "data": {"looked_for": None}} \
            if st.data.get("looked_for") else {}
        if job.native_id:
            self._step(rec.id, name, phase=st.data.get("planned", "queued"),
                       job_id=job.id, **looked_for)
        elif job.state.terminal:  # recovery found it was never submitted
            self._step(rec.id, name, phase="waiting", token="", reason="", **(
                {"data": {"looked_for": None}} if looked_for else {}))

    def _looked_for(self, wid: str, site: str, token: str) -> None:
        """The job of a submit whose answer was lost is looked for by its token (the
        federation's lookout): its being found or closed as never submitted, an event of its
        provisional id, advances workflow `wid`; until then the step is not submitted again
        (`_resubmit_lost` leaves a token in flight alone)."""
        self._jobs[provisional_id(site, token)] = wid

    async def _recover_unsure(self, wid: str, job: Job) -> bool:
        """Look the lost submit of `job` up by its token; True (and the workflow looked at
        again then) while it is not found yet but may still reach its queue."""
        left = await self.ops.recover_submit(job)
        if left > 0:
            self.advance_soon(wid, left)
            return True
        return False

    def _sources(self, rec: WorkflowRecord, wf: Workflow, name: str) -> dict[str | None, int]:
        """The bytes of step `name`'s inputs by the site they come from."""
        sources: dict[str | None, int] = {}
        for inp in wf.step(name).inputs:
            src_site = self._planned_site(rec, wf, inp.from_)  # known before its submit too
            sources[src_site] = sources.get(src_site, 0) + (inp.size or 0)
        return sources

    async def _submit(self, rec: WorkflowRecord, wf: Workflow, name: str) -> None:
        step, st = wf.step(name), rec.step(name)
        spec = step.spec()
        sources = self._sources(rec, wf, name)
        ups = {n: rec.step(n) for n in step.needs}
        tried = set(st.data.get("tried", []))
        site = st.data.get("pin") or (None if step.is_auto else step.site)
        placed: Estimate | None = None
        note = ""
        try:
            if site is None or st.data.get("elsewhere"):
                exclude, note = self._not_placed_on(
                    rec, step, tried if st.data.get("elsewhere") else set())
                ready_at = await self._inputs_ready_at_once_estimated(rec, wf, name)
                placed = await self.ops.place(spec, sources, exclude, ready_at)
                site = placed.site
        except BadInput as e:
            await self._stop(rec, "FAILED", f"step {name!r} cannot be placed: {e}", name)
            return
        if site not in self.ops.site_names():  # pinned there (`_note_unreached` says so)
            return
        # upstreams queued behind (no job yet: `_gated_ahead`)
        unqueued = [n for n, up in ups.items() if up.phase != "done" and self._job(up) is None]
        if same_site := [n for n in unqueued if self._planned_site(rec, wf, n) == site]:
            # placed where an upstream will run: the edge is an afterok on its job id
            waits = (f"placed on {site}, where {', '.join(same_site)} will run: waits for "
                     f"its job id (afterok)")
            if st.reason != waits:
                self._step(rec.id, name, reason=waits)
            return
        if not await self._approved(rec, step, spec, site):
            return
        if self._stopped_meanwhile(rec):  # while it was placed: nothing goes in now
            return
        if st.data.get("kept_below"):
            await self._unkeep(rec, wf, name, site)
        afterok, held, copies, arriving = [], bool(step.gang), [], []
        for n, up in ups.items():
            job = self._job(up)
            same = self._planned_site(rec, wf, n) == site
            if up.phase != "done" and same and self.ops.supports_dependency(site) and job:
                afterok.append((n, job.native_id))
            elif up.phase != "done" and not same:
                held = True
            elif up.phase != "done":
                held = True  # same site, but the scheduler has no dependency
        for inp in step.inputs:
            up_job = self._job(ups[inp.from_]) if inp.from_ in ups else \
                self._job(rec.step(inp.from_))
            if up_job is None and (inp.from_ in unqueued or inp.from_ not in ups):
                held = True  # copied in and checked later (a grandparent's too)
                arriving.append(inp.dest)
                continue
            if up_job is None or not up_job.workdir:
                continue
            src = posixpath.join(up_job.workdir, inp.path)
            if self._site_of(rec, inp.from_) == site:
                copies.append((src, inp.dest))
            else:
                held = True
                arriving.append(inp.dest)
        spec = with_prologue(spec, copy_lines(copies) + arrival_checks(arriving))
        deps = [Dependency(kind="afterok", job_ids=[j for _, j in afterok])] if afterok else []
        gate: Job | None = None
        if held and not step.gang and self.ops.supports_gate(site):
            try:
                gate = await self._gate(rec, name, site, spec)
            except _NoGate:
                pass  # held, and released when its inputs are there
            else:
                if gate is None:
                    return  # the gate's submit is unsure: looked at again at the next advance
                deps.append(Dependency(kind="afterany", job_ids=[gate.native_id or ""]))
        if gate is None and rec.step(name).data.get("gate"):  # an earlier attempt's gate
            await self._drop_gate(rec.id, name)
            self._step(rec.id, name, data={"gate": None})
        if deps:
            spec = spec.model_copy(update={"dependencies": [*spec.dependencies, *deps]})
        if gate is not None and self._stopped_meanwhile(rec):
            await self._cancel_unended(rec.id, gate)
            return
        token = self.ops.new_token()
        planned = "held" if held else "queued"
        # a placed step has its estimate; a fixed-site one is estimated beside its submit
        est = placed or Estimate(site, None, None)
        fields = dict(phase="submitting", site=site, token=token,
                      reason=note or st.data.get("failed_before") or "", data={"planned": planned,
                                    "afterok": [n for n, _ in afterok],
                                    "tried": sorted(tried | {site}),
                                    "expected_end": est.end and est.end.isoformat(),
                                    "expected_runtime_s": est.runtime_s,
                                    "estimating": placed is None,
                                    "estimate_after": None,
                                    "ahead": any(up.phase != "done"
                                                 for up in ups.values()),
                                    "before": unqueued,
                                    "rechecked": False})
        pending = _PendingSubmit(name, spec, site, token, fields, held, gate, placed, sources,
                                 st.attempt, afterok, unqueued, copies, arriving, note)
        batch = self._batches.get(rec.id)
        if batch is not None and not step.gang:  # recorded with the pass's others
            batch.append(pending)
            if len(batch) >= SUBMIT_BATCH:
                await self._flush_submits(rec, wf)
            return
        self._stop_estimating(rec.id, name)  # an earlier submit's: never recorded now
        self._step(rec.id, name, **fields)
        await self._send(rec, wf, pending)

    async def _flush_submits(self, rec: WorkflowRecord, wf: Workflow) -> None:
        """Record the submits the pass decided (`_batches`) in one durable write, every
        step "submitting" with its job's intent, then send them one by one as `_submit`
        does. A crash before the write loses nothing (the steps are still waiting); after
        it, each step is bound to its job or, its submit's answer never recorded, found by
        the token in its job's name or closed as never submitted and submitted again
        (`_resubmit_lost`), as a single submit is."""
        batch = self._batches.get(rec.id)
        if not batch:
            return
        self._batches[rec.id] = []
        if self._stopped_meanwhile(rec):  # nothing recorded: nothing goes in now
            return
        from ..store.workflows import StepSubmit

        for p in batch:
            self._stop_estimating(rec.id, p.name)  # an earlier submit's: never recorded now
            self._written.setdefault(rec.id, set()).add(p.name)
        await self.ops.reserve_submits(rec.id, [  # type: ignore[attr-defined]
            StepSubmit(p.name, p.site, p.token, p.spec, self._origin(rec, p), p.fields)
            for p in batch], self._fences.get(rec.id))
        # each step's job, once bound, recorded together at the end: a crash before leaves
        # the step "submitting" with its job bound, which `_resubmit_lost` records so
        sent: list[tuple[str, dict[str, Any]]] = []
        self._sending.add(rec.id)  # the estimates that come meanwhile go with its write
        try:
            for i, p in enumerate(batch):
                if self._stopped_meanwhile(rec):  # stopped while the batch went in
                    for left in batch[i:]:
                        with contextlib.suppress(DiamondError):
                            await self.ops.unreserve(  # type: ignore[attr-defined]
                                left.token, "the workflow stopped before this step's submit")
                    return
                await self._send(rec, wf, p, reserved=True, sent=sent)
        except BaseException:  # a lost lease, a cancel: those not sent stay "submitting"
            self.ops.forget_prepared(  # type: ignore[attr-defined]
                [left.token for left in batch])  # (a sent one's was dropped by its submit)
            raise
        finally:
            # a stop meanwhile recorded these steps itself (their jobs cancelled); a lease
            # lost leaves them "submitting" to the engine that took the workflow over
            self._sending.discard(rec.id)
            if sent and not self._stopped_meanwhile(rec):
                with contextlib.suppress(LeaseLost):  # the estimates come meanwhile with them
                    self._steps_with_estimates(rec.id, sent)
            self._write_estimates(rec.id)  # those left (nothing sent, or a failed write)

    @staticmethod
    def _origin(rec: WorkflowRecord, p: _PendingSubmit) -> dict[str, Any]:
        return {"workflow": rec.id, "step": p.name, "attempt": p.attempt}

    async def _send(self, rec: WorkflowRecord, wf: Workflow, p: _PendingSubmit, *,
                    reserved: bool = False,
                    sent: list[tuple[str, dict[str, Any]]] | None = None) -> None:
        """Send step `p.name`'s submit, recorded "submitting" already, and record its job
        (added to `sent`, where given, for its batch to record)."""
        name, spec, site, token, held, gate = p.name, p.spec, p.site, p.token, p.held, p.gate
        afterok, unqueued, copies, arriving, note = (p.afterok, p.unqueued, p.copies,
                                                     p.arriving, p.note)
        if p.placed is None:
            self._start_estimating(rec, wf, name, spec, site, p.sources)
        submit_kw = {"reserved": True} if reserved else {}
        try:
            job = await self.ops.submit(spec, site, hold=held and gate is None, token=token,
                                        origin=self._origin(rec, p),
                                        fence=self._fences.get(rec.id), **submit_kw)
        except LeaseLost:
            raise
        except BadInput as e:
            self._step(rec.id, name, phase="failed", reason=str(e))
            await self._stop(rec, "FAILED", f"step {name!r} was refused: {e}", name)
            return
        except SubmitUnsure as lost:  # the site may have it: looked for, never sent again
            self._looked_for(rec.id, site, token)
            self._step(rec.id, name, reason=f"{lost.lost}: {LOOKING}",
                       data={"looked_for": True})
            return
        except DiamondError as e:  # the site was lost mid-submit: recovery finds the job
            log.info("workflow %s step %s: submit unsure: %s", rec.id, name, e)
            self._step(rec.id, name, reason=f"{site} did not answer its submit ({e}): "
                       f"{LOOKING}", data={"looked_for": True})
            return
        self._jobs[job.id] = rec.id
        if self._stopped_meanwhile(rec):  # its stop could not see this job yet
            await self._cancel_unended(rec.id, job)
            return
        queued = dict(phase=p.fields["data"]["planned"], job_id=job.id,
                      event={"job": job.id, "held": held,
                             "gate": gate.id if gate else None,
                             **({"note": note} if note else {}),
                             "afterok": [j for _, j in afterok],
                             **({"before": unqueued} if unqueued else {}),
                             # what the engine lines' placeholders were
                             "copied": [list(c) for c in copies],
                             "checked": arriving})
        if sent is None:
            self._step(rec.id, name, **queued)
        else:
            sent.append((name, queued))

    def _stopped_meanwhile(self, rec: WorkflowRecord) -> bool:
        """The workflow is being stopped or ended (cancelled, failed) since `rec` was read,
        while a step's submit awaited a placement, an approval or a site (its state row
        read, no step's)."""
        return rec.id in self._stopping or \
            self.store.refresh_workflow(rec, []).state in WORKFLOW_DONE

    def _not_listed(self, site: str, what: str = "its site") -> str:
        """`site` is not one this engine uses: its sites file lacks it (an engine started
        with another file, or an edited one: a workflow outlives the file it was started
        with), or an operator did not allow it here."""
        return f"{what} {site} {self.ops.site_absence(site)}"

    def _not_here(self, site: str, what: str = "its site") -> str:
        """Why this engine leaves alone a step on `site`, a site its sites file lacks."""
        return (f"{self._not_listed(site, what)}: not followed from here; it is followed "
                f"again by a server that uses {site}")

    def _note_unreached(self, rec: WorkflowRecord, wf: Workflow
                        ) -> tuple[WorkflowRecord, dict[str, str], set[str]]:
        """The unfinished steps this engine must leave alone, each with why: on, or pinned
        to, a site its sites file lacks (but one whose job's end is known and leaves nothing
        to ask there: its failure is acted on, a retry placed among the listed sites), or
        waiting for inputs from one. Each one's reason (`data.unreached`, shown before its
        own) is written when it changes, and cleared by an engine that reaches it. Returns
        `rec` as it is now, those steps and the sites they wait on that it lacks."""
        names = set(self.ops.site_names())
        unreached: dict[str, str] = {}
        missing: set[str] = set()
        for name in wf.order():
            st = rec.step(name)
            if st.phase in FINAL_PHASES:
                continue
            site = self._planned_site(rec, wf, name)
            job = self._job(st) if st.phase in SUBMITTED else None
            if job is not None and job.state.terminal and (
                    job.state != JobState.COMPLETED or not wf.step(name).outputs):
                why = ""  # its end is known, nothing left to ask its site: acted on here
            elif site is not None and site not in names:
                why = self._not_here(site)
                missing.add(site)
            elif st.phase in ("held", "moving", "ready") and (away := sorted(
                    s for s in self._sources(rec, wf, name) if s and s not in names)):
                why = self._not_here(away[0], "the site of its inputs,")
                missing.update(away)
            else:
                why = ""
            if why:
                why += (f"; `diamond workflow cancel {rec.id}` cancels the steps it reaches "
                        "and names the others")
                unreached[name] = why
            if (st.data.get("unreached") or "") != why:
                self._step(rec.id, name, data={"unreached": why or None})
        return self._refreshed(rec), unreached, missing

    def _hand_back(self, wid: str, missing: set[str]) -> None:
        """Workflow `wid` has steps this engine leaves alone (`_note_unreached`): it stops
        driving it, so that an engine whose sites file lists their sites can take it (any
        engine's sweep adopts it again, each doing the steps it reaches); not while a copy
        of its inputs is under way (its end advances it again). Its estimates under way are
        stopped (the next engine asks them again); its lease is kept, stale, so that a late
        write of this engine is refused. The sites it lacks (`missing`) are noted with it:
        a sweep of an engine whose file lists none of them leaves it alone (`resume`)."""
        if wid not in self._owned or wid in self._stopping or any(
                k.startswith(wid + "/") for k in self._tasks):
            return
        for key in [k for k in self._estimates if k.startswith(wid + "/")]:
            self._stop_estimating(wid, key[len(wid) + 1:])
        self._owned.discard(wid)
        with contextlib.suppress(DiamondError):
            self.store.release_workflow(wid, self.ops.engine_id, unreached_sites=missing)

    def _handed_back_here(self, workflow: str | WorkflowRecord) -> bool:
        """This engine handed the unfinished workflow back for sites its file lacks, and no
        engine claimed it since (noted in its stored data, so an engine after a restart, a
        new id, takes it up once: the job ends of the steps it lists are followed by no one
        else). Its sweeps leave it alone; its jobs' events still route here (an end of a
        step on a site it lists advances it, taken up again)."""
        if isinstance(workflow, str):
            try:
                workflow = self.store.get_workflow(workflow)
            except DiamondError:  # gone
                return False
        data = workflow.data
        return (workflow.state not in WORKFLOW_DONE and data.get("owner") is None
                and data.get("handed_back_by") == self.ops.engine_id
                and bool(data.get("unreached_sites")))

    def _not_placed_on(self, rec: WorkflowRecord, step: Any, tried: set[str]
                       ) -> tuple[set[str], str]:
        """The sites placement must leave out for `step` (those outside its list of sites,
        those its approval did not list, those `tried` already) and a note when every site
        it may use was tried (placed among them again, said). BadInput when none is left."""
        names = set(self.ops.site_names())
        outside = names - set(step.among) if step.among is not None else set()
        if names <= outside:
            raise BadInput(f"none of its list of sites ({', '.join(step.among or [])}) is "
                           f"configured now (configured: {', '.join(sorted(names))})")
        barred = outside | self._unapproved_sites(rec, step.name)
        if names <= barred:  # none it may use is approved: the approval check stops it
            return outside, ""
        if not names <= barred | tried:
            return barred | tried, ""
        if not tried:
            return barred, ""
        left = sorted(names - barred)
        if step.among is not None:
            return barred, (f"every site of its list ({', '.join(step.among)}) was tried: "
                            f"placed among {', '.join(left)} again")
        return barred, ""  # every (approved) site was tried: any of them again

    def _unapproved_sites(self, rec: WorkflowRecord, name: str) -> set[str]:
        """The sites an approved workflow's step may not be placed on (none without one)."""
        approval = rec.data.get("approval")
        if not approval:
            return set()
        allowed = (approval.get("steps") or {}).get(name) or {}
        return {s for s in self.ops.site_names() if s not in allowed}

    async def _approved(self, rec: WorkflowRecord, step: Any, spec: JobSpec,
                        site: str) -> bool:
        """Whether `step` (as it runs) may be submitted to `site` (a workflow run without an
        approval may). An approved one must go to a site its approval listed, with the batch
        script rendered then (same sha256) and the engine lines shown then (`engine_lines`);
        else it waits, phase "unapproved", saying why in its reason and its `workflow.step`
        event, until `approve_workflow`."""
        approval = rec.data.get("approval")
        if not approval:
            return True
        name = step.name  # (the step as it runs: its secrets unsealed, as the plan had them)
        allowed = (approval.get("steps") or {}).get(name) or {}
        pinned = (approval.get("engine") or {}).get(name)
        why = None
        lines = await asyncio.to_thread(engine_lines, step)  # (CPU: off the event loop)
        if pinned != lines_sha256(lines) and (pinned is not None or lines):
            why = ("the lines the engine adds to it (input copies and checks, dependencies, "
                   "gate, hold) would differ from the approved ones" if pinned else
                   "its approval does not cover the lines the engine adds to it (input "
                   "copies and checks, dependencies, gate, hold)")
        elif site not in allowed:
            listed = ", ".join(sorted(allowed)) or "none"
            why = f"it would run on {site}, which its approval did not list (listed: {listed})"
        else:
            try:
                digest = await self.ops.step_sha256(spec, site)
            except DiamondError as e:
                digest, why = None, f"its batch script for {site} cannot be rendered now: {e}"
            if why is None and digest != allowed[site]:  # (no hash said: a script may hold
                # a secret, and its hash would let a weak one be guessed)
                why = f"its batch script for {site} would differ from the approved one"
        if why is None:
            return True
        self._step(rec.id, name, phase="unapproved", site=site, token="",
                   reason=f"waits for a new approval: {why}",
                   event={"approval_needed": why})
        return False

    async def _gate(self, rec: WorkflowRecord, name: str, site: str,
                    spec: JobSpec) -> Job | None:
        """The step's gate on `site`, held: the one already submitted for it (an engine that
        stopped before submitting the step, or a retry on the same site) or a new one. None
        while its submit is unsure (recovery finds it by its token)."""
        token = rec.step(name).data.get("gate")
        old = self.store.job_by_token(token) if token else None
        if old is not None and old.site == site and not old.state.terminal:
            self._jobs[old.id] = rec.id
            if old.native_id:
                return old
            if await self._recover_unsure(rec.id, old):
                return None
            old = self.store.job_by_token(token) or old
            if old.native_id and not old.state.terminal:
                return old
            if not old.state.terminal:
                return None
        await self._drop_gate(rec.id, name)
        token = self.ops.new_token()
        self._step(rec.id, name, data={"gate": token})
        try:
            gate = await self.ops.submit(gate_spec(name, spec), site, hold=True, token=token,
                                         origin={"workflow": rec.id, "step": name,
                                                 "gate": True}, fence=self._fences.get(rec.id))
        except LeaseLost:
            raise
        except BadInput as e:  # a refused gate: the step is held and released instead
            log.info("workflow %s step %s: no gate on %s: %s", rec.id, name, site, e)
            self._step(rec.id, name, data={"gate": None})
            raise _NoGate from None
        except DiamondError as e:
            log.info("workflow %s step %s: gate submit unsure: %s", rec.id, name, e)
            if isinstance(e, SubmitUnsure):  # looked for: its outcome advances the workflow
                self._looked_for(rec.id, site, token)
            return None
        self._jobs[gate.id] = rec.id
        return gate

    async def _drop_gate(self, wid: str, name: str) -> bool:
        """Cancel the step's gate if it still holds (True when none holds now)."""
        token = self.store.get_step(wid, name).data.get("gate")
        gate = self.store.job_by_token(token) if token else None
        if gate is None or gate.state.terminal or not gate.native_id:
            return True
        self._check(wid)
        try:
            await self.ops.cancel(gate)
        except DiamondError as e:
            log.info("workflow %s step %s: gate %s not cancelled: %s", wid, name, gate.id, e)
            return False
        return True

    def _stop_estimating(self, wid: str, name: str) -> None:
        task = self._estimates.pop(f"{wid}/{name}", None)
        if task is not None:
            task.cancel()

    def _start_estimating(self, rec: WorkflowRecord, wf: Workflow, name: str, spec: JobSpec,
                          site: str, sources: dict[str | None, int]) -> None:
        """Ask when step `name` (being submitted to `site`) is expected to end, beside its
        submit: no submit waits for an estimate (issue 17). Recorded when it comes, unless
        the step was submitted again meanwhile (`_stop_estimating`); a downstream placement
        waits for it (`_inputs_ready_at_once_estimated`)."""
        key = f"{rec.id}/{name}"
        self._stop_estimating(rec.id, name)
        task = asyncio.ensure_future(self._estimate(rec, wf, name, spec, site, sources))
        self._estimates[key] = task
        task.add_done_callback(
            lambda t: self._estimates.get(key) is t and self._estimates.pop(key))

    async def _estimate(self, rec: WorkflowRecord, wf: Workflow, name: str, spec: JobSpec,
                        site: str, sources: dict[str | None, int]) -> None:
        wid = rec.id
        try:
            ready_at = await self._inputs_ready_at_once_estimated(rec, wf, name)
            est = await self._expected(f"{wid}/{name}", spec, site, sources, ready_at)
            await self._record_estimate(wid, name, {
                "data": {"expected_end": est.end and est.end.isoformat(),
                         "expected_runtime_s": est.runtime_s, "estimating": False},
                "event": {"estimated": {"end": est.end and est.end.isoformat(),
                                        "runtime_s": est.runtime_s}}})
        except asyncio.CancelledError:
            raise
        except LeaseLost as lost:
            self._drop(wid, lost)
        except Exception:  # an estimate only: the step runs without one
            log.exception("workflow %s step %s: estimate failed", wid, name)

    async def _record_estimate(self, wid: str, name: str, update: dict[str, Any]) -> None:
        """Record step `name`'s estimate (`update`: `_step`'s keywords) with the others due:
        in the write of the batch of submits under way, or those come within
        ESTIMATES_WRITTEN_WITHIN_S together (a fan-out's steps share one estimate, which
        comes for each as its submit goes); back once it is recorded (a downstream
        placement reads it then). Cancelled before that (the step submitted again), it is
        never recorded."""
        due = self._estimates_due.get(wid)
        if due is None:
            loop = asyncio.get_running_loop()
            due = self._estimates_due[wid] = ({}, loop.create_future())
            loop.call_later(ESTIMATES_WRITTEN_WITHIN_S, self._write_estimates, wid)
        updates, written = due
        updates[name] = update
        try:
            await asyncio.shield(written)
        except asyncio.CancelledError:
            updates.pop(name, None)  # (a no-op once written)
            raise

    def _write_estimates(self, wid: str) -> None:
        """The estimates due for workflow `wid` written, unless a batch's write took them, or
        one being sent will (`_flush_submits`)."""
        if wid in self._estimates_due and wid not in self._sending:
            with contextlib.suppress(Exception):  # (each estimate's task is told)
                self._steps_with_estimates(wid, [])

    def _steps_with_estimates(self, wid: str, updates: list[tuple[str, dict[str, Any]]]
                              ) -> None:
        """`_steps(wid, updates)` and, in the same write, the estimates due for `wid`
        (`_record_estimate`), each merged into its step's update where it has one (its
        fields and its event's); their tasks told once it is done, or how it failed."""
        estimates, written = self._estimates_due.pop(wid, None) or ({}, None)
        merged = dict(updates)
        for name, est in estimates.items():
            kw = merged.get(name)
            merged[name] = est if kw is None else {
                **kw, "data": {**(kw.get("data") or {}), **est["data"]},
                "event": {**(kw.get("event") or {}), **est["event"]}}
        try:
            if merged:
                self._steps(wid, list(merged.items()))
        except Exception as e:
            if written is not None:
                written.set_exception(e)
                written.exception()  # (seen, even when every waiter was cancelled meanwhile)
            raise
        if written is not None:
            written.set_result(None)
            if estimates:
                self.changed.set()

    async def _expected(self, step_key: str, spec: JobSpec, site: str,
                        sources: dict[str | None, int], ready_at: datetime | None) -> Estimate:
        """`ops.expected` for step `step_key` (WORKFLOW/STEP), shared by the steps alike asked
        within ESTIMATE_SHARED_S (the job named apart, its name left out: placement does not
        read it). A step asked again (its new run, a retry above it) is asked afresh: what
        it is asked again for may have changed since."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        for key in [k for k, (at, _, _) in self._shared_estimates.items()
                    if now - at > ESTIMATE_SHARED_S]:
            del self._shared_estimates[key]
        key = (site, spec.model_dump_json(exclude={"name"}),
               tuple(sorted(sources.items(), key=lambda kv: str(kv[0]))), ready_at)
        kept = self._shared_estimates.get(key)
        if kept is None or step_key in kept[2]:
            asked = asyncio.ensure_future(self._ask_expected(spec, site, sources, ready_at))
            self._runs.add(asked)  # cancelled by close(), not by one step's new submit
            asked.add_done_callback(self._runs.discard)
            kept = self._shared_estimates[key] = (now, asked, set())
        kept[2].add(step_key)
        return await asyncio.shield(kept[1])

    async def _ask_expected(self, spec: JobSpec, site: str, sources: dict[str | None, int],
                            ready_at: datetime | None) -> Estimate:
        async with self._estimate_slots:  # (not held while upstreams' estimates come)
            return await self.ops.expected(spec, site, sources, ready_at)

    async def _inputs_ready_at_once_estimated(self, rec: WorkflowRecord, wf: Workflow,
                                              name: str) -> datetime | None:
        """`_inputs_ready_at` once the estimates still under way of the steps `name` needs
        (directly or not) have come (each an estimate only: one that fails counts as none);
        only those steps are read again."""
        ups = wf.upstream(name)
        waits = {n: t for n in ups if (t := self._estimates.get(f"{rec.id}/{n}")) is not None}
        if waits:
            await asyncio.wait(waits.values())
            # those steps' rows only: each of a wide fan-out's steps waits for one upstream
            rec = self.store.refresh_workflow(rec, waits, steps_only=True)
        return self._inputs_ready_at(rec, wf, name)

    def _inputs_ready_at(self, rec: WorkflowRecord, wf: Workflow, name: str,
                         memo: dict[str, datetime | None] | None = None) -> datetime | None:
        """When every step `name` needs is expected to have ended (None: all have, or
        nothing says): a queue-ahead step is placed for the queues as they will be then,
        not as they are while its upstream still runs."""
        memo = {} if memo is None else memo
        known = [e for n in wf.step(name).needs
                 if (e := self._expected_end(rec, wf, n, memo)) is not None]
        return max(known) if known else None

    def _expected_end(self, rec: WorkflowRecord, wf: Workflow, name: str,
                      memo: dict[str, datetime | None]) -> datetime | None:
        """When step `name` is expected to end: its end once it ended; while it runs, its
        start plus the runtime expected at its submission; while it waits, the end expected
        then (`expected_end` in its record), and no sooner than its inputs' expected end
        plus that runtime (now at the earliest)."""
        if name not in memo:
            memo[name] = None  # a cycle is refused at load; this only stops a loop
            st, job = rec.step(name), self._job(rec.step(name))
            memo[name] = None if job is None else step_end(
                st, job, self._inputs_ready_at(rec, wf, name, memo), utcnow())
        return memo[name]

    async def _better_elsewhere(self, rec: WorkflowRecord, wf: Workflow, name: str) -> bool:
        """Whether the held step `name`, placed `auto` before its inputs existed, should move
        now that they do (every step it needs done): another site is expected to end it much
        sooner than its own (the site to go to is recorded, so a restart finishes the move).
        Asked once per run, beside the copy of its inputs (`_start_rechecking`): a step
        that has started meanwhile stays."""
        st, step = rec.step(name), wf.step(name)
        if (not step.is_auto or step.gang or st.data.get("pin") or st.data.get("rechecked")
                or not st.data.get("ahead")
                or not all(rec.step(n).phase == "done" for n in step.needs)):
            return False
        job = self._job(st)
        if job is None or job.state.terminal or not st.site:
            return False
        self._step(rec.id, name, data={"rechecked": True})
        spec, sources = step.spec(), self._sources(rec, wf, name)
        away = {st.site} | self._unapproved_sites(rec, name)
        if step.among is not None:  # a list of sites: it moves only among them
            away |= set(self.ops.site_names()) - set(step.among)
        if set(self.ops.site_names()) <= away:
            return False  # no other site its approval (or its list) allows
        try:
            here = await self.ops.expected(spec, st.site, sources, None)
            there = await self.ops.place(spec, sources, away, None)
        except DiamondError as e:  # no other site can take it now: it stays
            log.info("workflow %s step %s: not placed again: %s", rec.id, name, e)
            return False
        if here.end is None or there.end is None or there.site in away:
            return False
        gain = (here.end - there.end).total_seconds()
        takes = (here.end - utcnow()).total_seconds()
        if gain < max(MOVE_GAIN_S, MOVE_GAIN_SHARE * takes):
            return False
        now = self._job(self.store.get_step(rec.id, name))
        if now is None or now.id != job.id or now.state != JobState.PENDING:
            return False  # started (or ended) while placement was asked: it stays
        self._step(rec.id, name, data={"moving_to": there.site}, job_id=job.id,
                   event={"move": {"from": st.site, "to": there.site,
                                   "sooner_s": round(gain, 1)}})
        return True

    async def _move_to(self, rec: WorkflowRecord, wf: Workflow, name: str) -> None:
        """Finish the recorded move of step `name`: its job and gate cancelled, the step
        waiting, pinned to its new site (idempotent: a restart mid-move ends it here)."""
        st = rec.step(name)
        to, job = st.data.get("moving_to"), self._job(st)
        if not to:
            return
        if job is not None and not job.state.terminal and st.phase == "released":
            job = await self.ops.refresh(job)  # its gate is gone: it may have started
            if job.state != JobState.PENDING and not job.state.terminal:
                self._step(rec.id, name, data={"moving_to": None}, reason=(
                    f"not moved to {to}: it started on {st.site} first"), job_id=job.id)
                return
        if job is not None and not job.state.terminal:
            self._check(rec.id)
            try:
                await self.ops.cancel(job)
            except DiamondError as e:  # it stays where it is
                log.info("workflow %s step %s: not moved to %s: %s", rec.id, name, to, e)
                self._step(rec.id, name, data={"moving_to": None})
                return
        await self._drop_gate(rec.id, name)
        # marked with the move: an engine that stops before the steps below it are looked
        # at leaves them to the next one (`_advance`'s `_requeue_below`), not to a cancel
        # of theirs read as one from outside
        self._step(rec.id, name, phase="waiting", token="", data={
            "pin": to, "moving_to": None, "moved_from": st.site, "requeue_below": True},
            reason=f"moved from {st.site} to {to}: expected to end sooner there",
            job_id=job.id if job else None)
        await self._requeue_marked(rec, wf, name)

    def _site_of(self, rec: WorkflowRecord, name: str) -> str | None:
        return rec.step(name).site

    def _start_moving(self, rec: WorkflowRecord, wf: Workflow, name: str) -> None:
        # by job: the copy for a job moved away may still be under way
        key = f"{rec.id}/{name}/{rec.step(name).token}"
        if key in self._tasks:
            return
        task = asyncio.ensure_future(self._moving(rec.id, wf, name))
        self._tasks[key] = task
        task.add_done_callback(lambda _t: self._tasks.pop(key, None))

    def _start_rechecking(self, rec: WorkflowRecord, wf: Workflow, name: str) -> None:
        """Ask `_better_elsewhere` beside the copy of the step's inputs; a move it records is
        made by the next advance (if the step has not started by then)."""
        key = f"{rec.id}/{name}/recheck"
        step = wf.step(name)
        if key in self._tasks or rec.step(name).data.get("rechecked") or not step.is_auto \
                or step.gang:
            return  # (a step that never moves: no read of the whole workflow per copy)
        task = asyncio.ensure_future(self._rechecking(rec.id, wf, name))
        self._tasks[key] = task
        task.add_done_callback(lambda _t: self._tasks.pop(key, None))

    async def _rechecking(self, wid: str, wf: Workflow, name: str) -> None:
        try:
            if await self._better_elsewhere(self.store.get_workflow(wid), wf, name):
                self.advance_soon(wid)
        except LeaseLost as lost:
            self._drop(wid, lost)

    async def _moving(self, wid: str, wf: Workflow, name: str) -> None:
        try:
            await self._move(wid, wf, name)
        except LeaseLost as lost:
            self._drop(wid, lost)

    async def _move(self, wid: str, wf: Workflow, name: str) -> None:
        step = wf.step(name)
        # the step and the steps its inputs come from only: one copy per step of a wide
        # fan-out must not read every step
        steps = {n: self.store.get_step(wid, n) for n in {name, *(i.from_ for i in step.inputs)}}
        st = steps[name]
        job = self._job(st)
        if job is None or st.phase not in ("held", "moving"):
            return  # ended, moved or resubmitted before this copy began
        moves = []
        for i, inp in enumerate(step.inputs):
            up = steps[inp.from_]
            if up.site == st.site:
                continue  # copied by the job itself
            up_job = self._job(up)
            if up_job is None or not up_job.workdir or not job.workdir:
                continue
            moves.append((i, f"{up.site}:{_in_dir(up_job.workdir, inp.path)}",
                          f"{st.site}:{_in_dir(job.workdir, inp.dest)}", inp.is_dir))
        if moves:
            self._step(wid, name, phase="moving",
                       event={"inputs": [m[1] for m in moves]}, job_id=job.id)
        self._check(wid)
        try:
            recs = await asyncio.gather(*(self.ops.transfer(
                # one id per job of the step (its token): a job queued again after its
                # gang mate or an upstream ran again is in a new directory, and a known id
                # is answered as done without a copy
                src, dst, transfer_id=f"{wid}-{name}-{st.attempt}-{st.token}-{i}",
                job_id=job.id,
                **({"recursive": True} if is_dir else {})) for i, src, dst, is_dir in moves))
        except asyncio.CancelledError:
            raise
        except LeaseLost:  # a copy another engine took over (this one stalled): the
            self._check(wid)  # workflow too (dropped), or the next advance follows the copy
            self.advance_soon(wid, GANG_RECHECK_S)
            return
        except Exception as e:  # a bad path, an unknown site: the step fails
            recs, error = [], str(e)
        else:
            error = next((f"input {r.src} could not be copied: {r.error or r.state.lower()}"
                          for r in recs if r.state != "SUCCEEDED"), None)
        now = self.store.get_step(wid, name)
        if now.phase not in ("held", "moving") or now.token != st.token:
            return  # stopped, cancelled or resubmitted meanwhile: nothing to record
        if error:  # the advance that follows fails the step (its policy)
            self._step(wid, name, data={"move_error": error}, job_id=job.id,
                       event={"error": error})
        else:
            self._step(wid, name, phase="ready", job_id=job.id,
                       event={"transfers": [r.id for r in recs],
                              "bytes": sum(r.bytes or 0 for r in recs)})
        self.advance_soon(wid)

    def _stage_in_pending(self, job: Job) -> bool:
        """The job's own stage-in (a script's staging lines, the spec's stage entries) has
        not arrived: a held step is released only after it, as a plain job is (its
        stage.in.done event advances the workflow; a failed one fails the job)."""
        if job.spec is None or not job.spec.stage_in or job.state.terminal:
            return False
        return not self.store.events_since(0, kinds=["stage.in.done"], job_id=job.id,
                                           limit=1)

    async def _release(self, wid: str, name: str) -> bool:
        st = self.store.get_step(wid, name)
        job = self._job(st)
        if job is None:
            return False
        if self._stage_in_pending(job):
            return False  # released when its stage-in is there
        if st.data.get("gate") and not job.state.terminal:
            if not await self._drop_gate(wid, name):  # the step starts once its gate is gone
                self.advance_soon(wid, GANG_RECHECK_S)
                return False
        elif not job.state.terminal:
            self._check(wid)
            try:
                await self.ops.release(job)
            except DiamondError as e:
                try:
                    now = await self.ops.refresh(job)
                except DiamondError:  # the site does not answer: taken as still held
                    now = job.model_copy(update={"reason": "held (its site did not answer)"})
                if now.state == JobState.PENDING and "held" in (now.reason or "").lower():
                    log.info("workflow %s step %s: release failed: %s", wid, name, e)
                    self.advance_soon(wid, GANG_RECHECK_S)
                    return False  # still held: tried again
        if wid in self._stopping or self.store.get_workflow(wid).state in WORKFLOW_DONE:
            # cancelled (or failed) while the release was on its way: the stop recorded the
            # step, and its job is cancelled, not shown released after the workflow's end
            await self._cancel_unended(wid, self._job(self.store.get_step(wid, name)))
            return False
        kept = {"reason": "", "data": {"kept_for": None}} if st.data.get("kept_for") else {}
        self._step(wid, name, phase="released", job_id=job.id, event={"job": job.id},
                   **kept)
        return True

    async def _release_gang(self, rec: WorkflowRecord, wf: Workflow, gang: str,
                            members: list[str]) -> None:
        """All or nothing: released only when every member's site can start it now; a
        member whose release does not go through has the others run again with it."""
        jobs = [self._job(rec.step(m)) for m in members]
        if any(j is None or self._stage_in_pending(j) for j in jobs):
            return  # all together, once every member's own stage-in is there too
        ok = await asyncio.gather(*(self._can_start_now(j) for j in jobs if j))
        if not all(good is True for good in ok):
            waiting = [m if good is False else f"{m} ({good})"
                       for m, good in zip(members, ok, strict=True) if good is not True]
            note = f"gang {gang} waits: {', '.join(waiting)} cannot start yet"
            notes = rec.data.get("gang_notes") or {}
            if notes.get(gang) != note:  # shown on the members' steps while they wait
                self._set_data(rec.id, {"gang_notes": {**notes, gang: note}})
            self.advance_soon(rec.id, GANG_RECHECK_S)
            return
        released = await asyncio.gather(*(self._release(rec.id, m) for m in members))
        if self._stopped_meanwhile(rec):
            return  # every member's job was cancelled by the stop (or after its release)
        if any(released) and not all(released):
            # a member is still held (its release did not go through) while others run: never
            # a partial gang: those are cancelled and go in again, held, to start with it
            held = next(m for m, ok in zip(members, released, strict=True) if not ok)
            await self._requeue_gang(self.store.get_workflow(rec.id), wf, held,
                                     "could not be released")
            self.advance_soon(rec.id)

    async def _can_start_now(self, job: Job) -> bool | str:
        """Whether the member's site can start `job` now; a site that does not answer: why
        (a string, so not now), the gang looked at again later."""
        try:
            return await self.ops.can_start_now(job)
        except DiamondError as e:
            return f"{job.site} did not answer: {' '.join(str(e).split())[:200]}"

    async def _failed(self, rec: WorkflowRecord, wf: Workflow, name: str, job: Job, why: str,
                      *, cancel_job: bool = False) -> bool:
        """A step's run failed: resubmit it (its policy) or stop the workflow (True)."""
        step, st = wf.step(name), rec.step(name)
        if cancel_job:
            await self._cancel_unended(rec.id, job)
        if rec.data.get("cancel_requested"):
            await self._stop(rec, "CANCELLED", "cancelled by request", None)
            return True
        if job.state == JobState.CANCELLED and not cancel_job:
            self._step(rec.id, name, phase="cancelled", reason=why, job_id=job.id)
            await self._stop(rec, "CANCELLED", f"step {name!r} was cancelled outside the "
                             "workflow", name)
            return True
        if st.attempt < step.retries:
            data: dict[str, Any] = {"elsewhere": step.on_failure == "resubmit-elsewhere",
                                    "move_error": None}
            data["pin"] = None if data["elsewhere"] else st.site
            # the steps below it are looked at next; marked first, so that an engine that
            # stops before they are looked at leaves it to the next one (`_advance`)
            data["requeue_below"] = True
            # shown on the step while its next attempt waits and runs (`_submit`)
            data["failed_before"] = f"attempt {st.attempt + 1} failed on {st.site}: {why}"
            self._step(rec.id, name, phase="waiting", token="",
                       attempt=st.attempt + 1, reason=data["failed_before"], data=data,
                       job_id=job.id,
                       event={"retry": True, "failed_job": job.id})
            await self._requeue_below(rec, wf, name)
            return False
        self._step(rec.id, name, phase="failed", reason=why, job_id=job.id)
        await self._stop(rec, "FAILED", f"step {name!r} failed: {why}", name)
        return True

    async def _requeue_below(self, rec: WorkflowRecord, wf: Workflow, name: str) -> None:
        """After step `name` failed and waits to run again: the steps below it (and its gang)
        that referred to its failed run wait for the new one; then its mark is cleared.
        Idempotent: run again by the next engine when this one stopped midway."""
        await self._requeue_downstream(rec, wf, name)
        if wf.step(name).gang:
            await self._requeue_gang(rec, wf, name)
        self._step(rec.id, name, data={"requeue_below": False})

    async def _requeue_marked(self, rec: WorkflowRecord, wf: Workflow, name: str) -> None:
        """After step `name` was set waiting with `requeue_below` marked: the steps below it
        wait for its new run, then the mark is cleared. An engine that stops midway leaves
        the rest to the next one (`_advance`'s `_requeue_below`)."""
        await self._requeue_downstream(rec, wf, name)
        self._step(rec.id, name, data={"requeue_below": False})

    async def _requeue_gang(self, rec: WorkflowRecord, wf: Workflow, name: str,
                            why: str = "failed") -> None:
        """A gang member run again (or left held, `why` saying so): the members still queued
        or running are cancelled and wait with it, so the gang starts together again (never
        a partial gang)."""
        step = wf.step(name)
        for m in wf.gangs().get(step.gang or "", []):
            st = self.store.get_workflow(rec.id).step(m)
            if m == name or not (st.phase in SUBMITTED or st.phase == "submitting"):
                continue
            job = self._job(st)
            await self._cancel_superseded(rec.id, m, job)
            await self._drop_gate(rec.id, m)
            self._step(rec.id, m, phase="waiting", token="", data={
    "move_error": None}, reason=f"resubmitted with its gang after {name} {why}",
    job_id=job.id if job else None)
            await self._requeue_downstream(rec, wf, m)

    async def _requeue_downstream(self, rec: WorkflowRecord, wf: Workflow, name: str) -> None:
        """Steps queued behind a step that is submitted again wait for its new run, but for
        those whose job refers to nothing of its old run (`_keeps_place`): they stay in
        their queues, held until it (and their other upstreams) ended, keeping their place.
        Each such step is noted on the steps run again that it waits for (`kept_below`): one
        of those that turns out to run on its site submits it again (`_unkeep`)."""
        rec = self.store.get_workflow(rec.id)  # `name` as it waits now (its pin, if any)
        below = wf.downstream(name)
        again: set[str] = {name}
        kept: dict[str, list[str]] = {}
        for d in wf.order():  # upstreams first: a step sees whether its own are run again
            st = rec.step(d)
            if d not in below or not (st.phase in SUBMITTED or st.phase == "submitting"):
                continue
            job = self._job(st)
            if job is not None and self._keeps_place(rec, wf, d, job, again):
                for r in self._takes_from(wf, d) & again:
                    kept.setdefault(r, []).append(d)
                if st.data.get("kept_for") != name:
                    self._step(rec.id, d, reason=f"kept in its queue (held) while {name} "
                               "runs again", data={"kept_for": name}, job_id=job.id,
                               event={"kept": {"job": job.id, "rerun": name}})
                self._step(rec.id, d, data=self._end_unknown(wf, d, again))
                continue
            if job is not None and (moved := self._redependable(rec, wf, d, job, again)):
                if st.data.get("redepend") != moved:
                    self._step(rec.id, d, reason=f"kept in its queue: its dependency on "
                               f"{', '.join(moved)} moves to the new job once submitted",
                               data={"redepend": moved}, job_id=job.id,
                               event={"kept": {"job": job.id, "rerun": name,
                                               "redepend": moved}})
                self._step(rec.id, d, data=self._end_unknown(wf, d, again))
                continue
            again.add(d)
            await self._cancel_superseded(rec.id, d, job)
            self._step(rec.id, d, phase="waiting", token="", data={
                "move_error": None, "kept_for": None}, reason=(
                f"resubmitted after {name} is run again"), job_id=job.id if job else None)
            rec = self.store.refresh_workflow(rec, [d], steps_only=True)  # its site to come
        for r in again:
            if kept.get(r) or rec.step(r).data.get("kept_below"):
                self._step(rec.id, r, data={"kept_below": sorted(kept.get(r, []))})

    @staticmethod
    def _end_unknown(wf: Workflow, name: str, again: set[str]) -> dict[str, Any]:
        """A kept step's data while the steps above it (of `again`) run again (each time they
        do): its expected end, from their failed runs, forgotten until they have their new
        jobs; then asked again (`_estimate_again`)."""
        return {"expected_end": None, "estimate_after": sorted(wf.upstream(name) & again)}

    def _estimate_again(self, rec: WorkflowRecord, wf: Workflow, name: str) -> None:
        """Step `name`, kept in its queue (`_end_unknown`): every step above it run again has
        its new job, so when it is expected to end is asked again, from their new runs'
        expected ends (steps kept below it wait for this one's, as at a submit)."""
        st = rec.step(name)
        job = self._job(st)
        if job is None or job.state.terminal or not st.site:
            self._step(rec.id, name, data={"estimate_after": None})  # its end is known now
            return
        self._step(rec.id, name, data={"estimate_after": None, "estimating": True})
        self._start_estimating(rec, wf, name, job.spec or wf.step(name).spec(), st.site,
                               self._sources(rec, wf, name))

    @staticmethod
    def _takes_from(wf: Workflow, name: str) -> set[str]:
        """The steps step `name` needs or takes an input from."""
        step = wf.step(name)
        return set(step.needs) | {i.from_ for i in step.inputs}

    def _keeps_place(self, rec: WorkflowRecord, wf: Workflow, name: str, job: Job,
                     again: set[str]) -> bool:
        """Whether step `name`, submitted as `job`, may stay in its queue while the steps
        `again` run anew: its job is in the queue, held or behind dependencies, not being
        moved; none of those it needs or takes inputs from is a dependency of its job (an
        afterok on a failed job never runs) or runs on its site (its inputs from such a step
        are copied by its own lines, from that step's old directory). Where a step run again
        will run is not known until it is placed (`auto`, or elsewhere): `_unkeep` then."""
        st = rec.step(name)
        if st.phase not in ("held", "queued") or not job.native_id or job.state.terminal \
                or st.data.get("moving_to") or st.data.get("move_error"):
            return False
        deps = set(st.data.get("afterok", []))
        return not any(r in deps or self._planned_site(rec, wf, r) == st.site
                       for r in self._takes_from(wf, name) & again)

    def _redependable(self, rec: WorkflowRecord, wf: Workflow, name: str, job: Job,
                      again: set[str]) -> list[str]:
        """The steps run again (of `again`) that step `name`'s queued `job` waits for by an
        afterok, when that afterok may be moved to their new jobs instead of `name` being
        submitted again (`_redepend`): its site changes a queued job's dependencies; each
        of them runs again on its site (pinned there); it takes no input from them (its
        lines copy from their old directories); its own script and spec name no dependency
        (the engine's would replace it). Empty: submitted again."""
        st, step = rec.step(name), wf.step(name)
        deps = set(st.data.get("afterok", []))
        rerun = self._takes_from(wf, name) & again
        if st.phase not in ("held", "queued") or not job.native_id or job.state.terminal \
                or st.data.get("moving_to") or st.data.get("move_error") or not rerun \
                or not rerun <= deps or not st.site \
                or not self.ops.supports_dependency_update(st.site):
            return []
        if any(i.from_ in rerun for i in step.inputs) or any(
                self._planned_site(rec, wf, r) != st.site for r in rerun):
            return []
        spec = step.spec()
        if spec.dependencies or _names_dependency(spec.script or spec.command or ""):
            return []
        return sorted(rerun)

    async def _redepend(self, rec: WorkflowRecord, wf: Workflow, name: str) -> None:
        """Step `name` was kept in its queue behind steps run again (`_redependable`): once
        each has its new job, its job's dependencies are set anew (the afterok on those
        jobs, its gate's afterany). Refused by the site: it is submitted again, as before."""
        st = rec.step(name)
        job = self._job(st)
        if job is None or job.state.terminal:
            return  # ended meanwhile: the jobs' pass submits it again
        if job.state == JobState.RUNNING or job.started_at is not None:
            # started: its dependency was moved and met (by an engine that stopped before
            # recording the move); asked again, the site refuses a running job's change
            self._step(rec.id, name, reason="", data={"redepend": None}, job_id=job.id)
            return
        moved = st.data.get("redepend") or []
        ids: list[str] = []
        why = ""
        for n in st.data.get("afterok", []):
            if n not in moved and rec.step(n).phase == "done":
                continue  # met already (its job may be gone from the scheduler's memory)
            up = self._job(rec.step(n))
            if up is None or not up.native_id or (n in moved and up.state.terminal
                                                   and up.state != JobState.COMPLETED):
                return  # a new job not submitted (or bound) yet: looked at again then
            if up.site != st.site:  # placed elsewhere: an afterok cannot name its job
                why = f"{n} now runs on {up.site}"
                break
            ids.append(up.native_id)
        if not why:
            deps = [Dependency(kind="afterok", job_ids=ids)]
            gate = self.store.job_by_token(st.data["gate"]) if st.data.get("gate") else None
            if gate is not None and gate.native_id and not gate.state.terminal:
                deps.append(Dependency(kind="afterany", job_ids=[gate.native_id]))
            self._check(rec.id)
            try:
                await self.ops.update_dependencies(job, deps)
            except DiamondError as e:
                log.info("workflow %s step %s: dependency not moved: %s", rec.id, name, e)
                why = f"{st.site} did not change its dependency: {e}"
            else:
                # the job's record says what its scheduler now holds (a resubmit reads it);
                # an engine stopped before this sets it again: the same change, recorded once
                self.store.record_dependencies(job.id, deps, fence=self._fences.get(rec.id))
                self._step(rec.id, name, reason="", data={"redepend": None}, job_id=job.id,
                           event={"redepended": {"job": job.id, "afterok": ids}})
                return
        await self._cancel_superseded(rec.id, name, job)
        self._step(rec.id, name, phase="waiting", token="", data={
            "move_error": None, "redepend": None, "requeue_below": True}, reason=(
            f"resubmitted after {', '.join(moved)} is run again ({why})"), job_id=job.id)
        await self._requeue_marked(rec, wf, name)
        self.advance_soon(rec.id)  # submitted by the next advance

    async def _unkeep(self, rec: WorkflowRecord, wf: Workflow, name: str, site: str) -> None:
        """Step `name`, run again, goes to `site`: a step kept in its queue meanwhile
        (`_requeue_downstream`) on that same site takes it as a same-site upstream (an
        afterok, its inputs copied by its own lines), so it is submitted again behind it."""
        for d in rec.step(name).data.get("kept_below") or []:
            st = rec.step(d)
            if st.site != site or st.phase not in SUBMITTED or not st.data.get("kept_for"):
                continue
            job = self._job(st)
            # marked before the cancel: an engine that stops right after it leaves the
            # resubmit to the next one (its jobs' pass), not a cancel from outside
            self._step(rec.id, d, data={"unkept_for": name})
            await self._cancel_superseded(rec.id, d, job)
            self._step(rec.id, d, phase="waiting", token="", data={
                "move_error": None, "kept_for": None, "unkept_for": None,
                "requeue_below": True}, reason=(
                f"resubmitted: {name} now runs on {site}, its site"),
                job_id=job.id if job else None)
            await self._requeue_marked(rec, wf, d)

    async def _stop(self, rec: WorkflowRecord, state: str, reason: str,
                    culprit: str | None) -> None:
        """End the workflow: cancel every other unfinished step's job."""
        self._stopping.add(rec.id)  # a submit under way queues nothing more
        rec = self.store.get_workflow(rec.id)
        for key, task in list(self._tasks.items()):
            if key.startswith(rec.id + "/"):
                task.cancel()
        names = set(self.ops.site_names())
        # "step (job)" of the jobs on sites this engine does not use, by site
        away: dict[str, list[str]] = {}
        for st in rec.steps:
            job = self._job(st)
            if job is not None and not job.state.terminal and job.site not in names \
                    and st.name != culprit and st.phase not in FINAL_PHASES:
                away.setdefault(job.site, []).append(f"{st.name} ({job.id})")
                self._leave_uncancelled(rec.id, st, job, reason)
                continue
            await self._drop_gate(rec.id, st.name)
            if st.data.get("uncancelled"):  # earlier runs left queued: asked once more
                await self._cancel_again(self.store.get_workflow(rec.id), st.name)
            st = self.store.get_step(rec.id, st.name)  # a submit may have ended meanwhile
            if st.name == culprit or st.phase in FINAL_PHASES:
                continue
            job = self._job(st)
            await self._cancel_unended(rec.id, job)
            if job is not None and job.state == JobState.COMPLETED:
                self._step(rec.id, st.name, phase="done", job_id=job.id)
                continue
            self._step(rec.id, st.name, phase="cancelled", reason=reason,
                       job_id=job.id if job else None)
        if away:  # each site said as this engine sees it: not in its file, or not allowed
            reason += "; not cancelled from here: " + "; ".join(
                f"{', '.join(steps)} on {site}, which {self.ops.site_absence(site)}"
                for site, steps in away.items())
        self._set_state(rec.id, state, reason)
        self._finish(rec.id)
        await self.ops.publish()
        self.changed.set()

    def _leave_uncancelled(self, wid: str, st: StepRecord, job: Job, reason: str) -> None:
        """Step `st`'s job (and its gate) on a site this engine does not use (its sites file
        lacks it, or an operator did not allow it), as its workflow stops: not cancelled,
        but noted (`uncancelled`) for an engine that uses the site, which cancels it when it
        starts (`_note_left_queued`)."""
        gate = self.store.job_by_token(st.data["gate"]) if st.data.get("gate") else None
        left = {*(st.data.get("uncancelled") or []), job.id}
        if gate is not None and not gate.state.terminal and gate.native_id:
            left.add(gate.id)
        why = (f"its job {job.id} was not cancelled: {self._not_listed(job.site)}; an engine "
               f"that uses {job.site} cancels it when it starts (or `diamond cancel "
               f"{job.id}` where {job.site} is used)")
        self._step(wid, st.name, phase="cancelled", reason=reason, job_id=job.id,
                   data={"uncancelled": sorted(left), "unreached": why})
