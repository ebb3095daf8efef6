"""The Federation's matching of what a job needs with what a site has (a mixin).

- each site's capabilities come from discovery (`DiscoverMixin.capabilities`, merged with
  the sites file) where it answers, else from the sites file's metadata alone.
- `check_site`: an explicitly chosen site is checked as placement checks every site; a
  site that lacks what the job needs is refused (BadInput naming each missing thing)
  unless the caller forces it.
- `adapt_to_site`: the job as the chosen site runs it: `module load` lines spelled as the
  site names its modules (each rewrite reported), a container image run by a runtime the
  site has.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from .capabilities import SiteCapabilities, from_metadata
from .dialects.flux_ids import flux_id_value
from .dialects.flux_script import array_refusal as flux_array_refusal
from .dialects.scripts_common import in_container, pick_runtime
from .job_dependencies import upstream_ids
from .model import (
    ARRAY_TASKS_WAITED,
    TASKS_NAMED,
    BadInput,
    JobSpec,
    SiteSnapshot,
    task_ids,
)
from .needs import needs_of
from .placement_fit import (
    Req,
    array_too_large,
    most_gpus,
    node_checks,
    request,
    site_nodes,
)
from .script_body import MAX_SCRIPT_BYTES, module_trees, scan_body, scanned_lately
from .site_bounds import beyond_the_site
from .software import needs_reasons, rewrite_modules

if TYPE_CHECKING:
    from .sites import Site
    from .store import Store

# snapshots at most this old are good enough for an explicit site's check (nodes,
# features and GPUs change rarely; the queue does not matter here)
CHECK_SNAPSHOT_AGE_S = 300.0


# what a site's snapshot says of its nodes (what its discovery adds nothing to)
_NODE_NEEDS = {"constraint": None, "gpu_type": None, "gpus": None, "memory_mb": None,
               "notes": []}


def needs_discovery(spec: JobSpec) -> bool:
    """Whether checking `spec` against a site uses that site's discovery: software, module
    trees, environments, a container runtime, MPI, a GPU vendor or an architecture. A job
    asking only for what the queue snapshot tells (partition, CPUs, memory, GPUs, node
    features) does not."""
    return not needs_of(spec).model_copy(update=_NODE_NEEDS).empty()


async def scan_off_loop(spec: JobSpec) -> None:
    """Read the job's body in a thread (`scan_body` keeps its latest scans, so the checks
    after this find it read): a long body took seconds, during which a server's event loop
    answered no one; not one longer than a script may be: `check_submittable` refuses it)."""
    body = spec.script or spec.command or ""
    if len(body) <= MAX_SCRIPT_BYTES and not scanned_lately(body):  # (else: read at once)
        await asyncio.to_thread(scan_body, body)


class NeedsMixin:
    sites: dict[str, Site]
    store: Store

    def site(self, name: str) -> Site:  # provided by Federation
        raise NotImplementedError

    if TYPE_CHECKING:  # DiscoverMixin's
        async def capabilities(self, *, only: list[str] | None = None
                               ) -> dict[str, SiteCapabilities]: ...

    async def _capabilities_of(self, name: str, spec: JobSpec | None = None
                               ) -> SiteCapabilities:
        """What `name` has: discovery merged with the sites file when it answers in time
        (cached by discovery's TTL), else what was last seen, else the sites file alone; with
        the module trees `spec` adds (`module use DIR`) listed there."""
        trees = job_trees(spec) if spec is not None else []
        caps = (await self.capabilities(only=[name], trees=trees)).get(name)
        if caps is not None:
            if not trees:  # the site's own: what a check without the job's trees sees
                self._seen_capabilities()[name] = caps
            return caps
        return self.known_capabilities(name)

    def _seen_capabilities(self) -> dict[str, SiteCapabilities]:
        return self.__dict__.setdefault("_capabilities_seen", {})

    def known_capabilities(self, name: str) -> SiteCapabilities:
        """The last capabilities seen for a site (no I/O), else its sites-file metadata."""
        return self._seen_capabilities().get(name) or from_metadata(
            name, self.site(name).cfg.metadata)

    async def site_mismatch(self, spec: JobSpec, site: str) -> list[str]:
        """What `site` lacks of what the job needs: architecture, features, GPU (type),
        memory, software, container runtime, MPI; more CPUs, nodes, GPUs or run time than
        any node or queue of it gives. Other queue limits and the queue itself are left to
        placement and the scheduler."""
        return (await self._mismatch_with(spec, site))[0]

    async def _mismatch_with(self, spec: JobSpec, site: str
                             ) -> tuple[list[str], SiteCapabilities]:
        """`site_mismatch`, and the capabilities of the site it was checked against."""
        target = self.site(site)
        snap, caps = await asyncio.gather(
            target.snapshot(max_age_s=CHECK_SNAPSHOT_AGE_S), self._capabilities_of(site, spec))
        missing = mismatch(spec, target.cfg.metadata, snap, caps, target.cfg.scheduler)
        if target.cfg.scheduler == "slurm" and (too_large := array_too_large(spec, snap)):
            missing.append(too_large)  # an array index past the site's MaxArraySize
        if target.cfg.scheduler == "flux" and (flux_array := flux_array_refusal(spec)):
            missing.append(flux_array)  # it would run once, not once per index
        # more than any node or queue of the site gives
        missing += beyond_the_site(spec, snap, target.cfg.scheduler, target.cfg.flavor)
        return missing, caps

    async def check_site(self, spec: JobSpec, site: str, *, force: bool = False
                         ) -> SiteCapabilities | None:
        """BadInput naming everything `site` lacks for this job, unless `force`. The site's
        capabilities it was checked against (None with `force`: not read), for the submit's
        `adapt_to_site` to use them again."""
        await scan_off_loop(spec)
        if force:
            return None
        missing, caps = await self._mismatch_with(spec, site)
        if missing:
            raise BadInput(f"site {site} cannot run this job: {'; '.join(missing)} "
                           "(choose another site, --site auto, or --force to submit anyway)")
        return caps

    async def adapt_to_site(self, site: str, spec: JobSpec,
                            caps: SiteCapabilities | None = None) -> JobSpec:
        """The job as `site` runs it: its `module load` lines spelled as the site names its
        modules (each rewrite listed in metadata['module_rewrites']), and a container image
        given as an option run by a runtime the site has (metadata['container']). `caps`:
        the site's capabilities the job was just checked against (`check_site`'s, the same
        body's trees), else read here."""
        caps = caps or await self._capabilities_of(site, spec)
        upd: dict[str, Any] = {}
        meta = dict(spec.metadata)
        body = spec.script if spec.script is not None else spec.command
        if body:
            new, notes = rewrite_modules(body, caps)
            if notes:
                meta["module_rewrites"] = notes
                upd["script" if spec.script is not None else "command"] = new
        image = spec.environment.container_image
        if image:
            runtime = pick_runtime(meta.get("container_runtime"), caps.container_runtimes)
            meta["container"] = {"image": image, "runtime": runtime}
            # the body (not the engine's wrapper before it) runs in the container
            text = upd.get("script", upd.get("command", body)) or ""
            upd["script"] = in_container(text, image, runtime, spec.shell)
            upd["command"] = None
            upd["environment"] = spec.environment.model_copy(update={"container_image": None})
        if self.site(site).cfg.scheduler == "flux" and \
                (waited := self._array_tasks_waited(site, spec)):
            meta[ARRAY_TASKS_WAITED] = waited
        if self.site(site).cfg.scheduler == "flux" and \
                (named := self._array_tasks_named(site, spec)):
            meta[TASKS_NAMED] = named
        if not upd and meta == spec.metadata:
            return spec
        return spec.model_copy(update=upd | {"metadata": meta})

    def _array_tasks_waited(self, site: str, spec: JobSpec) -> dict[str, list[str]]:
        """The job arrays of Flux site `site` that the job waits for whole, each run as one
        job per task: the array's id as a number -> its tasks' ids (the job waits for all
        of them, as it would for a Slurm array's whole)."""
        out: dict[str, list[str]] = {}
        for dep in spec.dependencies:
            if dep.per_task or dep.scheduler not in (None, "flux"):
                continue
            for native in dep.job_ids:
                value = flux_id_value(native.strip())
                stored = [jid for jid, task in upstream_ids(site, native, "flux") if not task]
                for job in self.store.jobs_with_ids(stored).values():
                    if value is not None and (ids := task_ids(job)):
                        out[str(value)] = list(ids.values())
        return out


    def _array_tasks_named(self, site: str, spec: JobSpec) -> dict[str, list[str]]:
        """The dependencies of the job on one task of a job array Flux site `site` runs as
        one job per task, by that task's own flux id (as `flux jobs` lists it): the id as
        written -> [the array's native id, the task's index], so the job is shown waiting
        for that task of the array, not for a job diamond does not know."""
        wanted = {v: native for dep in spec.dependencies if dep.scheduler in (None, "flux")
                  for native in dep.job_ids if (v := flux_id_value(native.strip())) is not None}
        stored = self.store.jobs_with_ids(
            [jid for native in wanted.values() for jid, _ in upstream_ids(site, native, "flux")])
        left = {v: n for v, n in wanted.items()
                if not any(jid in stored for jid, _ in upstream_ids(site, n, "flux"))}
        out: dict[str, list[str]] = {}
        for array in self.store.task_run_arrays(site) if left else []:
            for index, jid in (task_ids(array) or {}).items():
                if (native := left.pop(flux_id_value(jid) or -1, None)) is not None:
                    out[native] = [array.native_id or "", index]
        return out


def job_trees(spec: JobSpec) -> list[str]:
    """The module trees the job's body adds (`module use DIR`, MODULEPATH=) before a load
    (its options' software names no tree)."""
    return module_trees(spec.script or spec.command or "")


def mismatch(spec: JobSpec, metadata: dict[str, Any], snap: SiteSnapshot,
             caps: SiteCapabilities, scheduler: str = "slurm") -> list[str]:
    """Pure: the needs-related reasons one site cannot run `spec` (see `site_mismatch`)."""
    from .needs import metadata_arch

    reasons = needs_reasons(needs_of(spec), caps)
    nodes = site_nodes(snap) if snap.reachable else []
    if nodes:
        full = request(spec, max(n.cpus for n in nodes), most_gpus(spec, nodes),
                       spread_gpus=scheduler == "slurm",
                       most_memory=max(n.memory_mb for n in nodes))
        only_needs = Req(1, 1, 1, 0, full.gpn, full.mem, False, None, full.arch,
                         full.constraint, full.gpu_type, full.unreadable)
        site_arch = metadata_arch(metadata.get("architecture")) or \
            (caps.architectures[0] if len(caps.architectures) == 1 else None)
        found, _ = node_checks(only_needs, nodes, site_arch)
        reasons += [r for r in found if r != "no single node meets all the requirements "
                    "together"] or found
    return reasons
