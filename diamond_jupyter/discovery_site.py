"""Running discovery on a site: one batched remote command, cached with a TTL, merged
with what the sites file says (see `discovery.py` for the command and its parsers)."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from .capabilities import SiteCapabilities, SoftwareModule, merge
from .discovery import (
    MARK,
    MODULE_LIST_LINES,
    TREE_LIST_TIMEOUT_S,
    ClusterSummary,
    SiteDescription,
    discovery_script,
    module_listing_marks,
    node_types,
    parse_conda_envs,
    parse_module_list,
    parse_module_trees,
    parse_mpi,
    parse_mpi_paths,
    parse_runtimes,
    parse_spack,
    parse_spack_root,
    parse_tree_listing,
    split_sections,
    summarise_cluster,
    summarise_site,
    tree_listing_script,
)
from .log_lines import one_line_logger
from .model import SiteError, utcnow, visible
from .needs import norm_arch
from .sections import fresh_marker

if TYPE_CHECKING:
    from .sites import Site

log = one_line_logger(__name__)

DISCOVERY_TIMEOUT_S = 60.0
STOP_WAIT_S = 10.0  # an engine's close waits this long for a discovery it cancelled


class SiteDiscovery:
    """The discovered capabilities of one site, asked again after `cfg.discovery.ttl_s`."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self._found: SiteDescription | None = None
        self._at = -1e18
        self._lock = asyncio.Lock()
        self._task: asyncio.Future[SiteDescription] | None = None
        self.runs = 0  # remote discoveries made (one command each)
        # module trees jobs added (`module use DIR`), each listed once per TTL: (when, its
        # modules or None when it could not be listed); a listing under way is shared
        self._trees: dict[str, tuple[float, list[SoftwareModule] | None]] = {}
        self._tree_tasks: dict[str, asyncio.Future[list[SoftwareModule] | None]] = {}

    @property
    def ttl_s(self) -> float:
        return self.site.cfg.discovery.ttl_s

    def clusters(self) -> dict[str, dict[str, str]]:
        cfg = self.site.cfg.discovery
        if not cfg.clusters:
            return {self.site.name: {}}
        return {c.name: dict(c.env) for c in cfg.clusters}

    async def describe(self, *, refresh: bool = False) -> SiteDescription:
        """Discovery (cached for the TTL) merged with the sites file's `metadata`. Callers
        arriving while a discovery runs share it (still one command)."""
        cfg = self.site.cfg
        if not cfg.discovery.enabled:
            caps = merge(SiteCapabilities(site=self.site.name), cfg.metadata, override=True)
            return SiteDescription(site=self.site.name, capabilities=caps,
                                   max_job_name=cfg.max_job_name,
                                   max_job_name_source="configured"
                                   if cfg.max_job_name is not None else None)
        async with self._lock:
            age = time.monotonic() - self._at
            if refresh or self._found is None or age >= self.ttl_s:
                if self._task is None or self._task.done():
                    self._task = asyncio.ensure_future(self._discover())
                task = self._task
            else:
                task = None
        if task is not None:
            found = await asyncio.shield(task)
            async with self._lock:
                if self._task is task:
                    self._found, self._at, self._task = found, time.monotonic(), None
        found, age = self._found or found, time.monotonic() - self._at
        caps = merge(found.capabilities, cfg.metadata, override=cfg.discovery.override)
        return found.model_copy(update={"capabilities": caps, "age_s": round(age, 3),
                                        "ttl_s": self.ttl_s, **self._name_limit(found)})

    def _name_limit(self, found: SiteDescription) -> dict:
        """The sites file's max_job_name over the discovered one (and the site learns what
        discovery read, for the jobs it names)."""
        site = self.site
        if found.scheduler_version is not None and not site._name_limit_read:
            site.scheduler_version, site._name_limit = found.scheduler_version, found.max_job_name
            site._name_limit_read = True
        if site.cfg.max_job_name is not None:
            return {"max_job_name": site.cfg.max_job_name, "max_job_name_source": "configured"}
        return {}

    async def stop(self, within_s: float = STOP_WAIT_S) -> None:
        """Cancel the discovery and the module-tree listings in flight, if any, and wait for
        them to end (the engine closes: its site does too), so that none is left for the
        event loop's close. One still running after `within_s` (a command its transport
        cannot stop) is left behind, said in the log."""
        running = [t for t in (self._task, *self._tree_tasks.values())
                   if t is not None and not t.done()]
        self._task = None
        self._tree_tasks.clear()
        for task in running:
            task.cancel()
        if not running:
            return
        _, left = await asyncio.wait(running, timeout=within_s)
        if left:
            log.warning("%s: %d discovery command(s) did not stop within %g s; left behind",
                        self.site.name, len(left), within_s)
        for task in running:  # a failure as it was cancelled is not reported as unhandled
            task.add_done_callback(lambda t: t.cancelled() or t.exception())

    def expired(self) -> bool:
        """Whether a discovery was made and its TTL has passed: the next `describe` asks the
        site again (`cached` still has the last one)."""
        return self._found is not None and time.monotonic() - self._at >= self.ttl_s

    def cached(self) -> SiteDescription | None:
        """The last discovery, merged with the sites file, without asking the site."""
        if self._found is None:
            return None
        caps = merge(self._found.capabilities, self.site.cfg.metadata,
                     override=self.site.cfg.discovery.override)
        return self._found.model_copy(update={"capabilities": caps})

    def tree_listing(self, tree: str) -> asyncio.Future[list[SoftwareModule] | None] | None:
        """The modules of module tree `tree` at this site (cached for the TTL; a listing under
        way is shared): a future, or None where it cannot be asked (a site without a shell,
        a path given at run time)."""
        if self.site.cfg.transport.kind == "slurmrestd" or tree_listing_script(tree) is None:
            return None
        at, found = self._trees.get(tree, (-1e18, None))
        if time.monotonic() - at < self.ttl_s:
            done: asyncio.Future[list[SoftwareModule] | None] = \
                asyncio.get_running_loop().create_future()
            done.set_result(found)
            return done
        task = self._tree_tasks.get(tree)
        if task is None or task.done():
            task = self._tree_tasks[tree] = asyncio.ensure_future(self._list_tree(tree))
        return task

    async def _list_tree(self, tree: str) -> list[SoftwareModule] | None:
        site = self.site
        try:
            res = await site.transport.run(["bash", "-c", tree_listing_script(tree) or ""],
                                           env=site.cfg.env, preamble=site.cfg.preamble,
                                           check=False, timeout=TREE_LIST_TIMEOUT_S)
            found = parse_tree_listing(res.stdout, res.exit_status)
        except Exception as e:  # a site that cannot answer: the tree stays unknown
            log.info("%s: module tree %s not listed: %s", site.name, tree, e)
            found = None
        self._trees[tree] = (time.monotonic(), found)
        return found

    async def _discover(self) -> SiteDescription:
        site = self.site
        live = getattr(site.commands, "live_outputs", frozenset({"queue"}))
        argvs = {k: site._argv(v) for k, v in site.commands.snapshot_argvs().items()
                 if k not in live}
        clusters = self.clusters()
        marker = fresh_marker(MARK)
        script = discovery_script({c: argvs for c in clusters}, clusters, marker)
        self.runs += 1
        site.scheduler_commands += len(argvs) * len(clusters)
        res = await site.transport.run(["bash", "-c", script], env=site.cfg.env,
                                       preamble=site.cfg.preamble, check=False,
                                       timeout=DISCOVERY_TIMEOUT_S)
        parts, codes = split_sections(res.stdout, marker)
        if "arch" not in parts:
            raise SiteError(f"{site.name}: discovery gave no answer "
                            f"(exit {res.exit_status}): {res.stderr.strip()[-200:]}")
        return describe_from_outputs(site.name, site.commands, parts, codes,
                                     list(clusters), list(argvs))


def describe_from_outputs(site: str, commands, parts: dict[str, str], codes: dict[str, int],
                          clusters: list[str], keys: list[str]) -> SiteDescription:
    """A SiteDescription from the discovery command's sections (pure)."""
    errors: list[str] = []
    login_arch = norm_arch(parts.get("arch", "").strip().split("\n")[0])
    summaries: list[ClusterSummary] = []
    all_types = []
    # the output holding the cluster's own name (a failure leaves it unknown)
    name_key = getattr(commands, "cluster_name_output", None)
    names: list[str] = []
    unnamed = False  # a cluster whose name is not known: the set is not whole
    for cluster in clusters:
        outs = {k: parts.get(f"sched:{cluster}:{k}", "") for k in keys}
        quiet = (0, *getattr(commands, "empty_exit_codes", ()))  # "nothing to show"
        failed = [k for k in keys if codes.get(f"sched:{cluster}:{k}", 0) not in quiet]
        name = commands.parse_cluster_name(outs[name_key]) \
            if name_key in outs and codes.get(f"sched:{cluster}:{name_key}", 0) == 0 else None
        if name is None:
            unnamed = True
        elif name not in names:
            names.append(name)
        error = None
        nodes, partitions = [], []
        if failed:
            error = (f"{cluster}: {', '.join(failed)} query failed: "
                     f"{' '.join(outs[failed[0]].split())[-200:]}")
            errors.append(error)
        else:
            try:
                snap = commands.parse_snapshot(site, {**outs, "queue": ""})
                nodes, partitions = snap.nodes, snap.partitions
            except Exception as e:  # a dialect's parser refusing odd output
                error = f"{cluster}: cannot read the scheduler's nodes: {e}"
                errors.append(error)
        types = node_types(cluster, nodes, login_arch, prefix_cluster=len(clusters) > 1)
        all_types += types
        summaries.append(summarise_cluster(cluster, types, partitions, error)
                         .model_copy(update={"cluster_name": name}))
    refused: list[str] = []
    hidden: list[str] = []
    extensions: list[str] = []
    system, version, modules = parse_module_list(parts.get("modules", ""), refused, hidden,
                                                 extensions)
    past = [r for r in refused if r.startswith("(the listing past")]
    refused = [r for r in refused if r not in past]
    if refused:
        errors.append(f"modules: {len(refused)} name(s) left out, holding characters no "
                      f"module name has (first: {visible(refused[0][:80])})")
    if past:  # the modules of the rest are not known there
        errors.append(f"modules: {past[0][1:-1]}; modules listed after it are not known here")
    hidden_listed, cut, spider_failed = module_listing_marks(parts.get("modules", ""))
    if cut:
        errors.append(f"modules: the listing was cut at {MODULE_LIST_LINES} lines; the "
                      "site's software is not known (not checked)")
    elif system == "lmod" and spider_failed:  # what a loaded compiler or MPI shows: unknown
        errors.append("modules: Lmod's `module -t spider` failed, so the modules its "
                      "hierarchy shows once a compiler or MPI is loaded are not known; the "
                      "site's software is not checked")
        cut = True
    elif system and not (modules or hidden or extensions) and \
            (answer := _no_listing(parts.get("modules", ""))):
        # the `module` command answered an error, not a listing (its function runs a
        # program this shell cannot find): no software known, rather than none there
        errors.append(f"modules: `module -t avail` answered no module listing but "
                      f"{visible(answer[:120])!r}: the site's software is not known (not "
                      "checked); run `module -t avail` in a login shell there to see why")
        cut = True
    software = modules if system else []
    runtimes = parse_runtimes(parts.get("runtimes", ""))
    mpi, pmi = parse_mpi(parts.get("mpi", ""), software)
    caps = summarise_site(site, summaries, all_types, login_arch=login_arch,
                          modules=software, module_system=system, runtimes=runtimes,
                          mpi=mpi, errors=errors, discovered_at=utcnow(),
                          pmi=pmi or None)  # no srun there: its plugins are not known
    caps.mpi_paths = parse_mpi_paths(parts.get("mpi", ""))
    if system and cut:
        caps.software = None
    elif system and hidden_listed:
        caps.hidden_modules = sorted(hidden)
    if system and extensions and caps.software is not None:
        caps.extensions = sorted(extensions)
    if names and not unnamed:
        caps.cluster_names = names
        caps.sources["cluster_names"] = "discovered"
    if system:
        caps.module_trees = parse_module_trees(parts.get("modules", ""))
    caps.spack_packages, caps.spack_envs = parse_spack(parts.get("envs", ""))
    caps.spack_root = parse_spack_root(parts.get("envs", ""))
    caps.conda_envs = parse_conda_envs(parts.get("envs", ""))
    for key in ("spack_packages", "spack_envs", "conda_envs"):
        if getattr(caps, key) is not None:
            caps.sources[key] = "discovered"
    sched_version, name_limit = _server_limit(commands, parts, clusters)
    return SiteDescription(site=site, capabilities=caps, clusters=summaries,
                           discovered_at=caps.discovered_at, module_system_version=version,
                           pmi=pmi, scheduler_version=sched_version, max_job_name=name_limit,
                           max_job_name_source=f"discovered: server version {sched_version}"
                           if name_limit is not None else None)


def _no_listing(text: str) -> str | None:
    """The first line of the `modules` section's `module -t avail` answer where it is no
    listing: words without a module tree's `/path:` header, as an error is ("bash: line 1:
    /usr/share/lmod/lmod/libexec/lmod: No such file or directory"); None for a listing, an
    empty one, or Lmod's and Environment Modules' own "no modules" sentence."""
    for raw in text.split("\n"):
        line = raw.strip()
        if line.startswith("@@"):
            return None  # the listing's end: nothing but blank lines in it
        if not line or line.startswith("system "):
            continue
        if line.startswith("/") and line.endswith(":"):
            return None  # a tree's header: a listing, however empty
        if line.lower().startswith(("no module", "no modulefiles")):
            return None
        return line
    return None


def _server_limit(commands, parts: dict[str, str], clusters: list[str]
                  ) -> tuple[str | None, int | None]:
    """The scheduler server's version and the job-name limit it implies, from the
    snapshot's server query as discovery ran it (the shortest limit of the clusters)."""
    read = getattr(commands, "name_limit", None)
    if read is None:
        return None, None
    found = [read(parts[f"sched:{c}:server"]) for c in clusters
             if f"sched:{c}:server" in parts]
    versions = [v for v, _ in found if v]
    limits = [n for _, n in found if n is not None]
    return (versions[0] if versions else None), (min(limits) if limits else None)
