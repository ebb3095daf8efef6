"""`diamond describe SITE [--json] [--refresh]`: what discovery found on a site."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import TYPE_CHECKING

from ..model import one_line, visible
from .common import with_fed

if TYPE_CHECKING:
    from ..discovery import SiteDescription


def describe_text(d: SiteDescription) -> str:
    """The description, one fact a line. Every name in it is the site's own text (a
    partition, a feature, a module, an error a command printed), so each is written out as
    the queue tables write names (`one_line`): a newline or a terminal sequence in a
    hostile site's names cannot start a line of its own or act on the terminal."""
    c = d.capabilities
    s = one_line

    def src(key: str) -> str:
        how = c.sources.get(key)
        return f"  [{s(how)}]" if how and how != "discovered" else ""

    def listed(values) -> str:
        if values is None:
            return "unknown"
        return ", ".join(s(str(v)) for v in values) or "none"

    lines = [f"{s(d.site)}" + (f"  (discovered {d.age_s:.0f}s ago, kept {d.ttl_s:.0f}s)"
                               if d.age_s is not None and d.ttl_s is not None else "")]
    lines.append(f"  architectures:       {listed(c.architectures)}{src('architectures')}")
    lines.append(f"  features:            {listed(c.features)}{src('features')}")
    lines.append(f"  GPU models:          {listed(c.gpu_models)}{src('gpu_models')}")
    system = s(c.module_system) if c.module_system else "none found"
    if d.module_system_version:
        system += f" {s(d.module_system_version)}"
    lines.append(f"  module system:       {s(system)}")
    mods = None if c.software is None else [m.full + (" (default)" if m.default else "")
                                            for m in c.software]
    lines.append(f"  software:            {listed(mods)}{src('software')}")
    if c.extensions:  # Lmod's (E): loaded with the module that provides each
        lines.append(f"  extensions (E):      {listed(c.extensions)}  (no modules: load "
                     "the module that provides each)")
    lines.append(f"  container runtimes:  {listed(c.container_runtimes)}"
                 f"{src('container_runtimes')}")
    if d.scheduler_version:
        lines.append(f"  scheduler version:   {s(d.scheduler_version)}")
    if d.max_job_name is not None:
        how = "sites file" if d.max_job_name_source == "configured" else \
            s(d.max_job_name_source or "")
        lines.append(f"  job names:           at most {d.max_job_name} characters ({how})")
    lines.append(f"  MPI stacks:          {listed(c.mpi)}{src('mpi')}"
                 + (f"  (PMI: {listed(d.pmi)})" if d.pmi else ""))
    if c.spack_packages is not None:  # shown only where the login has spack
        few = ", ".join(s(x) for x in c.spack_packages[:8]) + (
            ", ..." if len(c.spack_packages) > 8 else "")
        lines.append(f"  Spack packages:      {len(c.spack_packages)}"
                     + (f" ({few})" if few else "")
                     + (f"  [spack at {s(c.spack_root)}]" if c.spack_root else ""))
    if c.spack_envs is not None:
        lines.append(f"  Spack environments:  {listed(c.spack_envs)}")
    for tool, envs in (c.conda_envs or {}).items():
        lines.append(f"  {s(tool) + ' environments:':<20} {listed(envs)}")
    types = {t.name: t for t in c.node_types}
    for cl in d.clusters:
        own = f" (ClusterName {s(cl.cluster_name)})" if cl.cluster_name and \
            cl.cluster_name != cl.name else ""
        lines.append(f"  cluster {s(cl.name)}{own}: {cl.nodes} nodes"
                     + (f"  ERROR {s(cl.error)}" if cl.error else ""))
        for p in cl.partitions:
            limit = "no limit" if p.max_time_s is None else f"max {p.max_time_s // 60} min"
            lines.append(f"    partition {s(p.name)}{' (default)' if p.default else ''}: "
                         f"{p.nodes} nodes, {limit}")
            for name in p.node_types:
                t = types.get(name)
                if t is None:
                    continue
                gpu = f", {t.gpus}x {s(t.gpu_model or 'gpu')}" if t.gpus else ""
                lines.append(f"      {s(t.name)}: {t.count} x {s(t.architecture or '?')} "
                             f"{t.cpus} CPUs {t.memory_mb} MB{gpu}"
                             + (f"  features {s(','.join(t.features))}" if t.features else ""))
    for e in c.errors:
        lines.append(f"  could not read: {s(e)}")
    return "\n".join(lines)


def cmd_describe(args: argparse.Namespace) -> int:
    d = asyncio.run(with_fed(args, lambda fed: fed.describe(args.site,
                                                             refresh=args.refresh)))
    if args.json:
        print(json.dumps(d.model_dump(mode="json"), indent=2))
    else:
        print(visible(describe_text(d)))
    return 0


def add_describe_command(add) -> None:
    p = add("describe", cmd_describe, "what a site has: architecture, features, GPUs, "
            "software modules, container runtimes, MPI, node types")
    p.add_argument("site", help="a site name from the sites file")
    p.add_argument("--refresh", action="store_true",
                   help="ask the site now instead of using a discovery younger than its TTL")
