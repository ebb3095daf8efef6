"""Feasibility: what a JobSpec asks of one node, and why a site's nodes cannot give it.

Pure helpers shared by `placement` and `placement_sim`: the request a spec makes per
node, node and metadata checks that return exact human reasons, and the reading of a
snapshot (usable nodes, partition membership, Slurm hostlists).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from math import ceil
from typing import Any

from .dialects.outputs_common import expand_hostlist
from .dialects.scripts_common import parse_mem_mb
from .model import BadInput, JobSpec, Node, SiteSnapshot
from .needs import (
    Constraint,
    Feature,
    Op,
    constraint_of,
    feature_names,
    kept_slurm_gpus,
    node_arch,
    norm_arch,
    required_arch,
)

_DOWN = {"down", "drain", "drained", "draining", "drng", "fail", "failing", "maint",
         "inval", "future", "unknown", "unk", "reboot", "responding"}


def aware(dt: datetime) -> datetime:
    """Naive datetimes are taken as UTC."""
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def node_usable(node: Node) -> bool:
    state = node.state.lower()
    return "*" not in state and not (set(re.split(r"[^a-z]+", state)) & _DOWN)


def partition_members(snap: SiteSnapshot, nodes: list[Node]) -> dict[str, list[str]]:
    """Partition name -> node names (from Partition.nodes, else from Node.partitions)."""
    names = [n.name for n in nodes]
    any_membership = any(n.partitions for n in nodes)
    out: dict[str, list[str]] = {}
    for p in snap.partitions:
        listed = {h for entry in p.nodes for h in expand_hostlist(entry)}
        if listed:
            out[p.name] = [x for x in names if x in listed]
        elif any_membership:
            out[p.name] = [n.name for n in nodes if p.name in n.partitions]
        else:
            out[p.name] = names
    return out


def site_nodes(snap: SiteSnapshot) -> list[Node]:
    """The snapshot's nodes, or idle nodes synthesised from partition totals when none."""
    if snap.nodes:
        return snap.nodes
    out: dict[str, Node] = {}
    for p in snap.partitions:
        names = [h for e in p.nodes for h in expand_hostlist(e)] \
            or [f"{p.name}-{i}" for i in range(p.total_nodes)]
        for h in names:
            n = out.setdefault(h, Node(name=h, state="idle", cpus=p.total_cpus // len(names)))
            n.partitions.append(p.name)
    return list(out.values())


@dataclass
class Req:
    nodes: int
    tpn: int
    cpt: int
    cpn: int  # CPUs per node
    gpn: int
    mem: int  # MB per node, 0 = not asked
    whole: bool
    walltime: float | None
    arch: str | None
    constraint: Constraint | None = None  # the feature expression every node must meet
    gpu_type: str | None = None
    unreadable: str | None = None  # a constraint the expression parser refused


def request(spec: JobSpec, biggest_node: int) -> Req:
    r = spec.resources
    cpt = r.cpus_per_task or 1
    tpn, nodes = r.tasks_per_node, r.nodes
    if tpn is None and r.tasks:
        tpn = ceil(r.tasks / nodes) if nodes else min(r.tasks, max(1, biggest_node // cpt))
    tpn = tpn or 1
    nodes = nodes or (ceil(r.tasks / tpn) if r.tasks else 1)
    kept_type, kept_gpn = kept_slurm_gpus(spec)  # --gpus not dividing the nodes, per socket
    gpn = r.gpus_per_node or (r.gpus_per_task or 0) * tpn or kept_gpn or 0
    mem = r.memory_mb or (r.memory_per_cpu_mb or 0) * cpt * tpn
    cpn = cpt * tpn
    # --cpus-per-gpu / --mem-per-gpu a Slurm script kept (the model had no exact form for
    # them): a node gets C CPUs and M of memory per GPU it holds, so it needs at least that
    for d in spec.unknown:
        if d.dialect == "slurm" and d.option == "--cpus-per-gpu" and (d.value or "").isdigit():
            cpn = max(cpn, int(d.value or 0) * gpn)
        elif d.dialect == "slurm" and d.option == "--mem-per-gpu":
            mem = max(mem, (parse_mem_mb(d.value or "") or 0) * gpn)
    unreadable = None
    try:
        constraint = constraint_of(spec.constraints.features)
    except BadInput as e:
        constraint, unreadable = None, str(e)
    arch = norm_arch(spec.constraints.architecture or spec.metadata.get("architecture")) \
        or required_arch(constraint)
    return Req(nodes, tpn, cpt, cpn, gpn, mem, spec.constraints.exclusive,
               r.walltime_s, arch, constraint, r.gpu_type or kept_type, unreadable)


def node_checks(req: Req, nodes: list[Node], site_arch: str | None
                 ) -> tuple[list[str], set[str]]:
    """Reasons no node can host one node's share of the job; names of nodes that can."""
    reasons, ok = [], {n.name for n in nodes}
    if not nodes:
        return ["no nodes reported"], set()

    def check(pred: Any, reason: str) -> None:
        good = {n.name for n in nodes if pred(n)}
        if not good:
            reasons.append(reason)
        ok.intersection_update(good)

    if req.arch:
        archs = sorted({a for n in nodes if (a := node_arch(n, site_arch))})
        check(lambda n: node_arch(n, site_arch) in (None, req.arch),
              f"architecture mismatch: job needs {req.arch}, site has {', '.join(archs)}")
    offers = ", ".join(sorted({f for n in nodes for f in n.features})) or "none"
    if req.unreadable:
        reasons.append(req.unreadable)
    expr = req.constraint
    plain = [expr] if isinstance(expr, Feature) else list(expr.items) \
        if isinstance(expr, Op) and set(expr.ops) == {"&"} and expr.kind != "[" else []
    parts = plain if all(isinstance(p, Feature) for p in plain) and plain else \
        [expr] if expr is not None else []
    if expr is not None and parts == [expr] and not isinstance(expr, Feature):
        # Slurm refuses a constraint that names a feature no node of the cluster has, even
        # as an alternative (`avx2|sve` where no node has avx2)
        known = {f.lower() for n in nodes for f in n.features}
        known_archs = {node_arch(n, site_arch) for n in nodes}
        unknown = [f for f in dict.fromkeys(feature_names(expr)) if f.lower() not in known
                   and not (f.lower().startswith("arch=") and norm_arch(f[5:]) in known_archs)]
        if unknown:
            reasons.append(f"constraint '{expr.text()}' names feature(s) the site does not "
                           f"have: {', '.join(unknown)} (site offers: {offers})")
            ok.clear()
    if req.arch:  # `arch=X` is the architecture check's
        parts = [p for p in parts if not (isinstance(p, Feature) and p.name.lower()
                                          .startswith("arch=") and norm_arch(p.name[5:])
                                          == req.arch)]
    for part in parts:  # each required feature on its own, or the whole expression
        def meets(n: Node, part: Constraint = part) -> bool:
            return part.matches({f.lower() for f in n.features}, node_arch(n, site_arch))
        what = f"missing feature '{part.text()}'" if isinstance(part, Feature) else \
            f"no node meets the constraint '{part.text()}'"
        check(meets, f"{what} (site offers: {offers})")
    max_g = max(n.gpus for n in nodes)
    if req.gpu_type:
        types = ", ".join(sorted({n.gpu_type for n in nodes if n.gpu_type})) or "none"
        check(lambda n: (n.gpu_type or "").lower() == req.gpu_type.lower(),
              f"no GPU of type '{req.gpu_type}' (site has: {types})")
    if req.gpn:
        check(lambda n: n.gpus >= req.gpn, "no GPUs on any node" if not max_g else
              f"needs {req.gpn} GPUs per node, largest node has {max_g}")
    split = f" ({req.tpn} tasks x {req.cpt} CPUs)" if req.tpn > 1 and req.cpt > 1 else ""
    check(lambda n: n.cpus >= req.cpn,
          f"needs {req.cpn} CPUs per node{split}, largest node has {max(n.cpus for n in nodes)}")
    if req.mem:
        max_m = max(n.memory_mb for n in nodes)
        check(lambda n: not n.memory_mb or n.memory_mb >= req.mem,
              f"needs {req.mem} MB memory per node, largest node has {max_m} MB")
    if not reasons and not ok:
        reasons.append("no single node meets all the requirements together")
    return reasons, ok
