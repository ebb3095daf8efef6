"""Plans of costly actions (submit, cancel, transfer, fetch), made before a person approves.

A plan says what will run and where: for a submit, the chosen site, the fully rendered batch
script, every field of the job, the data it moves (source, destination, size) and its
estimated cost. An approved plan is pinned: the approved site, partition and submission
token are used again, the script is rendered again and must hash the same, the data must
move between the same places. Anything else raises `PlanChanged` and the caller asks again;
nothing is placed again after an approval.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .dialects.flux_commands import array_submissions
from .dialects.staging import STAGING_NOTES
from .federation_needs import scan_off_loop
from .model import BadInput, DiamondError, Job, JobSpec

if TYPE_CHECKING:
    from .capabilities import SiteCapabilities
    from .fetch_guard import FetchResult
    from .placement import Placement, SiteVerdict
    from .sites import Site
    from .store import Store, TransferRecord

TOKEN = re.compile(r"^[0-9a-f]{12}$")
AFTER_THE_JOB = "known after the job has run"
# what a staging entry with skip_hidden (a tool call's job) does, as its plan says
HIDDEN_ENTRIES_LEFT_OUT = ("left out: every name starting with '.' (`.ssh/`, `.bashrc`), at "
                           "any depth; a tool call's job copies no hidden file to or from "
                           "this machine")


class PlanChanged(BadInput):
    """The approved plan can no longer run as approved (its site is gone, the script or the
    data movements would differ): ask again."""


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def plan_sha256(plan: Any) -> str:
    """An action plan's sha256 as a person is shown it (canonical JSON): an approval naming
    it approves that plan only, never another the task came to wait on since."""
    import json

    return sha256(json.dumps(plan, sort_keys=True, separators=(",", ":"), default=str))


def check_script_shown(fresh: dict[str, Any], approved: dict[str, Any], where: str) -> None:
    """PlanChanged when the script or the job an approved plan shows is not the one it would
    run (its `script_sha256` names the script rendered again, yet its `script` text or its
    `spec`, what a person read, says another): what runs is what the approval showed, or
    nothing."""
    if "script" in approved and approved["script"] != fresh["script"]:
        raise PlanChanged(f"the batch script {where} that the approved plan shows is not the "
                          "one it would run (its script_sha256 names another text)")
    if "spec" in approved and approved["spec"] != fresh["spec"]:
        raise PlanChanged(f"the job {where} that the approved plan shows (its spec) is not "
                          "the one it would run")


def check_plan_sha256(value: Any, task_id: str) -> str:
    """`value`, a plan's sha256 (64 lower-case hex digits); BadInput naming what it is."""
    if not isinstance(value, str) or not re.fullmatch(r"[0-9a-f]{64}", value):
        raise BadInput(f"plan_sha256 {str(value)[:80]!r} is not a sha256 (64 hex digits, as "
                       f"task {task_id}'s pending plan_sha256 gives it)")
    return value


def new_token() -> str:
    return secrets.token_hex(6)


def check_token(token: str) -> str:
    if not TOKEN.match(token):
        raise BadInput(f"bad submission token {token!r} (12 hex digits)")
    return token


def local_path(path: str) -> str:
    """A path on this server as a transfer resolves it: `~` expanded, relative to the cwd."""
    return os.path.normpath(os.path.join(os.getcwd(), os.path.expanduser(path)))


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{n} B"


def _moves(plan: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What a pin compares of the data movements: direction and places, not sizes."""
    return [(m.get("direction"), m.get("source"), m.get("destination"))
            for m in plan.get("data_movements") or []]


class PlanMixin:
    sites: dict[str, Site]
    store: Store
    mover: Any

    if TYPE_CHECKING:  # provided by Federation
        def site(self, name: str) -> Site: ...
        def job(self, job_id: str) -> Job: ...
        async def place(self, spec: JobSpec, **kw: Any) -> Placement: ...
        async def files(self, job_id: str) -> list[str]: ...
        async def submit(self, spec: JobSpec, site: str = "auto", **kw: Any) -> Job: ...
        async def fetch(self, job_id: str, dest: str | Path | None = None, **kw: Any
                        ) -> FetchResult: ...
        async def transfer(self, src: str, dst: str, via: str | None = None, **kw: Any): ...
        async def fetch_choice(self, job_id: str, dest: str | Path | None = None, *,
                               files: Iterable[str] | None = None, overwrite: bool = False,
                               max_file_bytes: int | None = None
                               ) -> tuple[Path, list[tuple[str, Path]], list[str]]: ...
        def check_submittable(self, spec: JobSpec) -> None: ...
        def dependency_bound(self, spec: JobSpec) -> tuple[set[str], str] | None: ...
        async def check_site(self, spec: JobSpec, site: str, *, force: bool = False
                             ) -> SiteCapabilities | None: ...
        async def adapt_to_site(self, site: str, spec: JobSpec,
                                caps: SiteCapabilities | None = None) -> JobSpec: ...
        server_root: Path | None

    # -- submit -----------------------------------------------------------------------------
    async def plan_submit(self, spec: JobSpec, site: str = "auto", *,
                          pin: dict[str, Any] | None = None, hedged: bool = False
                          ) -> dict[str, Any]:
        """What `submit(spec, site)` would run, as a plan for a person to approve: the site,
        partition, the rendered batch script and its sha256, every job field, the data
        movements, the estimated cost and the submission token the approved submit reuses.
        Nothing is recorded or sent. With `pin` (an approved plan), on the same site, partition
        and token, without placing again (PlanChanged if that site is gone). `hedged`: the
        script of a hedged copy (its wrapper waits to be told to run). BadInput as
        `submit`."""
        await scan_off_loop(spec)
        self.check_submittable(spec)  # refused now, not after an approval
        verdict: SiteVerdict | None = None
        placement: str | None = None
        predicted: str | None = None  # the start placement predicts there, for people
        checked: SiteCapabilities | None = None  # what the site was checked against
        if pin is not None:
            site = str(pin.get("site"))
            if site not in self.sites:
                raise PlanChanged(f"site {site!r} of the approved plan is not available now")
            if not spec.queue and pin.get("partition"):
                spec = spec.model_copy(update={"queue": pin["partition"]})
            token = check_token(str(pin.get("submission") or ""))
        else:
            token = new_token()
            if site == "auto":
                if (bound := self.dependency_bound(spec)) is not None and not bound[0]:
                    raise BadInput(bound[1])
                pl = await self.place(spec)
                if pl.choice is None:
                    raise pl.no_choice()
                site, placement = pl.choice, pl.explain()
                verdict, predicted = pl.verdict(site), pl.predicted_start(site)
                if not spec.queue and verdict is not None and verdict.partition:
                    spec = spec.model_copy(update={"queue": verdict.partition})
            else:
                self.site(site)  # unknown or not allowed: BadInput now, not after approval
                # lacks what the job needs: refused now
                checked = await self.check_site(spec, site)
                one = await self.place(spec, sites=[site], named_site=True)
                verdict, predicted = one.verdict(site), one.predicted_start(site)
        target = self.site(site)
        await target.know_home(spec.working_directory, spec.stdout, spec.stderr)
        await target.know_name_limit()  # the name as the scheduler will keep it
        spec = await self.adapt_to_site(site, spec, checked)  # module names, container runtime
        prepared = target.prepare(spec, token, hedged=hedged)
        rendered = target.render(target.scheduler_spec(prepared, token))  # as uploaded
        fields = prepared.model_dump(mode="json")
        fields.update(script=spec.script, command=spec.command)  # as given; wrapped in `script`
        plan: dict[str, Any] = {
            "action": "submit", "site": site, "scheduler": target.cfg.scheduler,
            "partition": prepared.queue, "name": spec.name,
            "working_directory": prepared.working_directory,  # resolved: where the job runs
            "submission": token,  # the idempotency token the approved submit reuses
            "script": rendered.script, "script_sha256": sha256(rendered.script),
            "warnings": list(prepared.metadata.get(STAGING_NOTES) or [])
            + list(prepared.metadata.get("module_rewrites") or [])
            + list(prepared.metadata.get("name_notes") or [])
            + list(prepared.metadata.get("body_notes") or []) + rendered.warnings,
            "spec": fields,
            "data_movements": await self._movements(site, token, prepared),
        }
        if target.flux_array(prepared) is not None and prepared.array is not None:
            # Flux has no arrays: one flux batch per task, each shown as it will run
            plan["submissions"] = array_submissions(
                prepared.array.expression, f"{target.job_dir(token)}/job.sh",
                hold=prepared.hold)
        if pin is None and predicted:
            plan["predicted_start"] = predicted  # '≈ 3 min (90%: < 11 min)'
        if pin is None:
            plan["cost"] = self._cost(target, prepared, verdict)
            if placement:
                plan["placement"] = placement
        return plan

    async def submit_approved(self, spec: JobSpec, plan: dict[str, Any], *,
                              origin: dict | None = None) -> Job:
        """Submit exactly what the approved `plan` showed (same site, token and script, held
        when its `hold` says so) and return the Job; PlanChanged, before anything is
        recorded, when the script or the data movements would now differ."""
        fresh = await self.plan_submit(spec, pin=plan)
        if fresh["script_sha256"] != plan.get("script_sha256"):
            raise PlanChanged(f"the batch script for {fresh['site']} would differ from the "
                              "approved one")
        check_script_shown(fresh, plan, f"for {fresh['site']}")
        if _moves(fresh) != _moves(plan):
            raise PlanChanged("the data movements would differ from the approved ones")
        if not spec.queue and fresh["partition"]:
            spec = spec.model_copy(update={"queue": fresh["partition"]})
        return await self.submit(spec, fresh["site"], origin=origin, token=fresh["submission"],
                                 script_sha256=fresh["script_sha256"],
                                 hold=plan.get("hold") is True)

    def _cost(self, target: Site, spec: JobSpec, v: SiteVerdict | None) -> dict[str, Any]:
        """Charge factor x billed nodes x hours (expected, and at most with the walltime)."""
        cf = target.cfg.charge_factor
        if v is None or not v.feasible or v.cost is None or v.billed_nodes is None:
            why = "; ".join(v.reasons) if v is not None and v.reasons else "no estimate"
            return {"charge_factor": cf, "estimate": None, "why": why}
        hours = (v.estimated_runtime_s or 0.0) / 3600
        out: dict[str, Any] = {
            "charge_factor": cf, "billed_nodes": _figure(v.billed_nodes),
            "hours": _figure(hours), "estimate": _figure(v.cost),
            "formula": f"{cf:g} (charge factor) x {v.billed_nodes:.3g} nodes x {hours:.3g} h "
                       f"= {v.cost:.3g} node-hours charged"}
        wall = spec.resources.walltime_s
        if wall:
            out["at_most"] = _figure(v.billed_nodes * wall / 3600 * cf)
        return out

    # -- data movements -----------------------------------------------------------------------
    async def _movements(self, site: str, token: str, spec: JobSpec) -> list[dict[str, Any]]:
        from .transfer.staging import resolve

        wd = spec.working_directory or self.site(site).job_dir(token)
        out = []
        for direction, entries in (("in", spec.stage_in), ("out", spec.stage_out)):
            for e in entries:
                src, dst = resolve(e, self.sites, site, wd, direction)
                move = {"direction": direction, "source": self._place_of(src),
                        "destination": self._place_of(dst), "recursive": e.recursive}
                if e.skip_hidden:
                    move["hidden_entries"] = HIDDEN_ENTRIES_LEFT_OUT
                if direction == "in":
                    move.update(await self._size(src.site, src.path if src.site
                                                 else move["source"]))
                else:
                    move.update(size_bytes=None, size=AFTER_THE_JOB)
                out.append(move)
        return out

    def _place_of(self, loc: Any) -> str:
        """"SITE:PATH", or the absolute path on this server (inside its root directory when
        there is one: BadInput otherwise, before any approval)."""
        if loc.site:
            return f"{loc.site}:{loc.path}"
        if self.server_root is not None:
            from .transfer import confine

            return confine(loc, self.server_root).path
        return local_path(loc.path)

    async def _size(self, site: str | None, path: str) -> dict[str, Any]:
        try:
            if site:
                st = await self.site(site).stat(path)
                found = None if st is None else (st.size, st.is_dir)
            else:
                found = await asyncio.to_thread(_local_size, path)
        except (DiamondError, OSError) as e:
            return {"size_bytes": None, "size": f"unknown ({e})"}
        if found is None:
            return {"size_bytes": None, "size": "missing"}
        if found[1]:
            return {"size_bytes": None, "size": "a directory"}
        return {"size_bytes": found[0], "size": human_bytes(found[0])}

    # -- cancel, transfer, fetch ----------------------------------------------------------------
    def plan_cancel(self, job_id: str) -> dict[str, Any]:
        """What `cancel(job_id)` would do, as a plan to approve (the job, its site and native
        id, its state). BadInput for an unknown job."""
        job = self.job(job_id)
        return {"action": "cancel", "job_id": job.id, "site": job.site,
                "native_id": job.native_id, "name": job.name, "state": job.state.value}

    def plan_release(self, job_id: str) -> dict[str, Any]:
        """What `release(job_id)` would do, as a plan to approve (the job, its site and
        native id, its state; `waits_for_stage_in` when it would be kept until its input
        has arrived). BadInput for an unknown job."""
        job = self.job(job_id)
        return {"action": "release", "job_id": job.id, "site": job.site,
                "native_id": job.native_id, "name": job.name, "state": job.state.value,
                "waits_for_stage_in": self.journal.stage_in_pending(job)}

    async def plan_transfer(self, src: str, dst: str, via: str | None = None, *,
                            recursive: bool = False, overwrite: bool = False
                            ) -> dict[str, Any]:
        """What `transfer(src, dst, via, overwrite=)` would do, as a plan to approve: the
        transfer kind chosen, the data movement with its size and whether files it did not
        write are replaced. Nothing is moved. BadInput for a bad location or an unknown
        site."""
        from .transfer import parse_location

        s = parse_location(src, self.sites, what="src")
        d = parse_location(dst, self.sites, what="dst")
        for loc in (s, d):
            if loc.site:
                self.site(loc.site)
        kind = self.mover.choose(s, d, via)
        move = {"direction": "copy", "source": self._place_of(s),
                "destination": self._place_of(d), "recursive": recursive}
        move.update(await self._size(s.site, s.path if s.site else move["source"]))
        return {"action": "transfer", "src": src, "dst": dst, "recursive": recursive,
                "via": kind, "overwrite": overwrite, "data_movements": [move]}

    async def transfer_approved(self, src: str, dst: str, plan: dict[str, Any], *,
                                recursive: bool = False, transfer_id: str | None = None,
                                skip_hidden: bool = False) -> TransferRecord:
        """Run the approved transfer `plan` (with its `overwrite`) and return its record,
        waiting for its end; PlanChanged when its source or destination would now differ."""
        overwrite = bool(plan.get("overwrite", False))
        try:
            fresh = await self.plan_transfer(src, dst, plan.get("via"), recursive=recursive,
                                             overwrite=overwrite)
        except BadInput as e:
            raise PlanChanged(f"the approved transfer cannot run as approved: {e}") from None
        if _moves(fresh) != _moves(plan):
            raise PlanChanged("the transfer's source or destination would differ from the "
                              "approved ones")
        return await self.transfer(src, dst, fresh["via"], recursive=recursive,
                                   transfer_id=transfer_id, overwrite=overwrite,
                                   skip_hidden=skip_hidden)

    async def plan_fetch(self, job_id: str, dest: str | Path | None = None, *,
                         files: Iterable[str] | None = None, overwrite: bool = False,
                         max_file_bytes: int | None = None) -> dict[str, Any]:
        """What `fetch(job_id, dest, files=, overwrite=, max_file_bytes=)` would copy, as a
        plan to approve: each remote file, the local path it would be written to and its
        size, and the result files it would skip and why. Nothing is copied. BadInput as
        `fetch_choice`."""
        job = self.job(job_id)
        dest_dir, pairs, skipped = await self.fetch_choice(job_id, dest, files=files,
                                                           overwrite=overwrite,
                                                           max_file_bytes=max_file_bytes)
        dest_dir = Path(local_path(str(dest_dir)))
        moves = []
        for remote, local in pairs:
            moves.append({"direction": "fetch", "source": f"{job.site}:{remote}",
                          "destination": local_path(str(local)),
                          **await self._size(job.site, remote)})
        return {"action": "fetch", "job_id": job.id, "site": job.site,
                "destination": str(dest_dir), "data_movements": moves, "skipped": skipped,
                "overwrite": overwrite, "files": sorted(files) if files is not None else None,
                "max_file_bytes": max_file_bytes}

    async def fetch_approved(self, job_id: str, plan: dict[str, Any]) -> FetchResult:
        """Copy exactly the files the approved `plan` listed to the places it named (with its
        `files` and `overwrite`) and return what was written and skipped; PlanChanged when
        the job's files, or the local files they would replace, are no longer those."""
        files, overwrite = plan.get("files"), bool(plan.get("overwrite", False))
        bound = plan.get("max_file_bytes")
        fresh = await self.plan_fetch(job_id, plan.get("destination"), files=files,
                                      overwrite=overwrite, max_file_bytes=bound)
        if _moves(fresh) != _moves(plan):
            raise PlanChanged("the job's files changed since the plan was approved")
        remotes: Iterable[str] = [m["source"].split(":", 1)[1]
                                  for m in fresh["data_movements"]]
        return await self.fetch(job_id, fresh["destination"], only=set(remotes), files=files,
                                overwrite=overwrite, max_file_bytes=bound)


def flag_hidden(plan: dict[str, Any]) -> dict[str, Any]:
    """`plan` with one warning for each of its texts (the script, a field, a path) holding
    characters that are invisible, reorder text or drive a terminal: a face that shows the
    text as it is (a browser) would show something else than what runs."""
    from .model import hidden_characters

    warnings = list(plan.get("warnings") or [])
    todo: list[tuple[str, Any]] = [(k, v) for k, v in plan.items() if k != "warnings"]
    while todo:
        where, value = todo.pop(0)
        if isinstance(value, str) and (found := hidden_characters(value)):
            warnings.append(f"{where} holds characters that are invisible, reorder text or "
                            f"drive a terminal (they are used as they are): {'; '.join(found)}")
        elif isinstance(value, dict):
            todo += [(f"{where}.{k}", v) for k, v in value.items()]
        elif isinstance(value, list):
            todo += [(f"{where}[{i}]", v) for i, v in enumerate(value)]
    return {**plan, "warnings": warnings} if len(warnings) > len(plan.get("warnings") or []) \
        else plan


def _local_size(path: str) -> tuple[int, bool] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_size, os.path.isdir(path)


# -- the plan as text (the notebook and the terminal show this) -----------------------------------

_HEAD_KEYS = {"action", "site", "scheduler", "partition", "script", "script_sha256", "spec",
              "data_movements", "cost", "placement", "changed", "asked_because", "warnings",
              "submission", "name", "hedge", "steps", "working_directory"}


def _value(v: Any) -> str:
    import json

    return v if isinstance(v, str) else json.dumps(v, default=str)


def _block(text: str, indent: str) -> list[str]:
    return [indent + line for line in text.splitlines()] or [indent]


def describe_plan(plan: dict[str, Any] | None) -> str:
    """Every part of a plan, one section each: what runs where, data, cost, fields, script."""
    if not plan:
        return "(no plan)"
    action = plan.get("action", "act")
    where = f" on {plan['site']}" if plan.get("site") else ""
    if action == "submit":
        where = f" to {plan.get('site')} ({plan.get('scheduler')}), partition " \
                f"{plan.get('partition') or '(the scheduler default)'}"
    out = [f"{action}{where}"]
    if plan.get("working_directory"):
        out.append(f"  runs in: {plan['working_directory']}")
    for key, label in (("changed", "asked again"), ("asked_because", "why asked")):
        if plan.get(key):
            out.append(f"  {label}: {plan[key]}")
    for k, v in plan.items():
        if k not in _HEAD_KEYS and v is not None:
            out += _block(f"{k}: {_value(v)}", "  ")
    cost = plan.get("cost")
    if isinstance(cost, dict):
        if cost.get("estimate") is None:
            out.append(f"  estimated cost: unknown ({cost.get('why')}); charge factor "
                       f"{cost.get('charge_factor')}")
        else:
            most = f" (at most {cost['at_most']:g} with the walltime)" \
                if cost.get("at_most") is not None else ""
            out.append(f"  estimated cost: {cost.get('formula')}{most}")
    moves = plan.get("data_movements")
    if moves is not None:
        out.append("  data movements:" + ("" if moves else " none"))
        for m in moves:
            here = " [this server]" if str(m.get("destination", "")).startswith("/") else ""
            out.append(f"    {m.get('direction', ''):<5} {m.get('source')} ({m.get('size')}) "
                       f"-> {m.get('destination')}{here}")
    spec = plan.get("spec")
    if isinstance(spec, dict):
        out.append("  job fields:")
        unset = []
        for k, v in spec.items():
            if v in (None, [], {}, ""):
                unset.append(k)
            else:
                out += _block(f"{k}: {_value(v)}", "    ")
        if unset:
            out.append(f"    (not set: {', '.join(unset)})")
    for w in plan.get("warnings") or []:
        out.append(f"  warning: {w}")
    if plan.get("script") is not None:
        out.append(f"  batch script (sha256 {plan.get('script_sha256')}):")
        out += _block(str(plan["script"]), "    | ")
    hedge = plan.get("hedge")
    if isinstance(hedge, dict):  # every copy after the first: where, and the script it runs
        out.append(f"  hedged: {hedge.get('note') or hedge.get('copies')}")
        for n, copy in enumerate(hedge.get("plans") or [], 1):
            if n == 1 or not isinstance(copy, dict):
                continue  # the first copy is the plan above
            out.append(f"  copy {n} to {copy.get('site')} ({copy.get('scheduler')}), partition "
                       f"{copy.get('partition') or '(the scheduler default)'}, batch script "
                       f"(sha256 {copy.get('script_sha256')}):")
            out += _block(str(copy.get("script")), "    | ")
        for site, why in (hedge.get("skipped") or {}).items():
            out.append(f"  no copy on {site}: {why}")
    if plan.get("placement"):
        out.append("  placement:")
        out += _block(str(plan["placement"]), "    ")
    if action == "run_workflow":
        for step in plan.get("steps") or []:
            out += _workflow_step(step)
    from .model import visible

    return visible("\n".join(out))  # an escape sequence in the script cannot hide a line


def _workflow_step(step: Any) -> list[str]:
    """One step of a workflow's plan: where it may run, and the batch script it is sent
    with on each of those sites (what the approval pins)."""
    if not isinstance(step, dict):
        return []
    site = step.get("site")
    if site == "auto" or isinstance(site, list):  # a list: the sites below are its own
        where = "placed when it runs, on one of these sites"
    else:
        where = f"on {site}"
    out = [f"  step {step.get('name')} ({where}; needs {step.get('needs') or 'nothing'}, "
           f"retries {step.get('retries')}, on failure {step.get('on_failure')}):"]
    for c in step.get("rendered") or []:
        if not isinstance(c, dict):
            continue
        if c.get("refused"):
            out.append(f"    not on {c.get('site')}: {c['refused']}")
            continue
        if c.get("working_directory"):
            out.append(f"    on {c.get('site')}, runs in: {c['working_directory']}")
        out.append(f"    on {c.get('site')} ({c.get('scheduler')}), batch script "
                   f"(sha256 {c.get('script_sha256')}):")
        out += _block(str(c.get("script")), "      | ")
    lines = step.get("engine_lines") or []
    if lines:  # a fixed template, pinned with the scripts: {...} are filled in at run time
        out.append(f"    the engine may add (sha256 {step.get('engine_sha256')}):")
        for line in lines:
            out += _block(str(line), "      - ")
    return out


def _figure(x: float) -> float:
    """Three significant figures: a short job's cost is small, never rounded to 0."""
    return float(f"{x:.3g}")
