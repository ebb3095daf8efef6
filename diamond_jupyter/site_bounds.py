"""What no node or queue of a site can ever give a job (pure): more CPUs on one node than
its largest node has, more nodes than it has (Slurm: GPUs spread over nodes included), more
run time than any queue it may run in allows, more nodes, CPUs or GPUs in all than any such
queue lets one job have (at flux, fewer than every such queue's least: the low end of its
NNODES, NCORES and NGPUS ranges). An explicit site's check refuses such a job before anything
reaches its submit command; a site whose nodes are not known says nothing here.

Every scheduler is judged from the snapshot its dialect reads (Slurm partitions and nodes,
PBS queues' resources_max (the server's where a queue sets none, a routing queue's own
too) and vnodes, LSF queues' RUNLIMIT and task limit and hosts' CPUs, Grid Engine queues'
h_rt and hosts' num_proc, Flux's resource list and its queues' TLIMIT, NNODES, NCORES and
NGPUS), and said in its own words (queue, vnode, host, slots...). Nodes count whatever
their state (a drained node may come back), and a queue without a limit allows any: only
a request no configuration of the site meets is refused."""

from __future__ import annotations

from collections.abc import Callable

from .dialects.lsf_script import lsf_script
from .dialects.pbs_script import pbs_script
from .model import JobSpec, Node, Partition, SiteSnapshot, hms
from .placement_fit import Req, Words, most_gpus, request, site_nodes, words_of
from .wording import quantity

# options after which a job's shape is not one Req: a heterogeneous job's components
_HET_OPTIONS = ("hetjob", "packjob")

# how a script asks CPUs on one node, in each scheduler's terms (the hint after a refusal)
_PER_NODE_HINT = {
    "slurm": "tasks per node x CPUs per task",
    "pbs": "the ncpus of one chunk",
    "lsf": "span[ptile=N], or -n with span[hosts=1]",
    "sge": "the slots of a parallel environment that keeps them on one host",
    "flux": "tasks per node x cores per task",
}

# the queue limit on a job's run time by scheduler, as its configuration names it
_TIME_CAP = {"slurm": "MaxTime", "pbs": "resources_max.walltime", "lsf": "RUNLIMIT",
             "sge": "h_rt", "flux": "TLIMIT"}
# ... and its limits on a job's nodes, CPUs and GPUs in all
_SIZE_CAPS = {"slurm": ("MaxNodes", "", ""),
              "pbs": ("resources_max.nodect", "resources_max.ncpus", "resources_max.ngpus"),
              "lsf": ("", "TASKLIMIT", ""), "flux": ("NNODES", "NCORES", "NGPUS")}
# ... and the schedulers that refuse a job below a queue's least nodes, CPUs or GPUs in all
# at submission (flux: policy.limits.job-size.min, the low end of its ranges)
_SIZE_FLOORS = {"flux": ("NNODES", "NCORES", "NGPUS")}


def beyond_the_site(spec: JobSpec, snap: SiteSnapshot, scheduler: str = "slurm",
                    flavor: str | None = None) -> list[str]:
    """Reasons `spec` asks more than any node or queue of the site of `snap` (a site of
    `scheduler`, of PBS `flavor`) can ever give, each naming the largest node (or the most
    generous queue) and what would be accepted; [] when the site's nodes are unknown or the
    job fits."""
    nodes = site_nodes(snap)
    named = _named_queues(spec, snap)
    if named is None or not nodes or _several_shapes(spec, scheduler, flavor):
        return []
    words = words_of(scheduler, flavor)
    largest = max(nodes, key=lambda n: (n.cpus, n.gpus, n.memory_mb))
    req = request(spec, largest.cpus, most_gpus(spec, nodes), spread_gpus=scheduler == "slurm",
                  most_memory=max(n.memory_mb for n in nodes))
    reasons = _node_reasons(spec, req, nodes, largest, words, scheduler)
    mine = [p for p in snap.partitions if p.name in named] if named else \
        [p for p in snap.partitions if p.routes_to is None]  # a routing queue runs nothing
    reasons += _queue_reasons(spec, req, mine, bool(named), words, scheduler)
    for route in _routes_taken(spec, snap):  # a routing queue refuses past its own limits
        reasons += [r for r in _queue_reasons(spec, req, [route], True, words, scheduler)
                    if r not in reasons]
    return reasons


def _queue_reasons(spec: JobSpec, req: Req, queues: list[Partition], named: bool,
                   words: Words, scheduler: str) -> list[str]:
    """Why the job's run time, nodes, CPUs or GPUs in all are past the limits of every one
    of `queues` (those it names when `named`)."""
    reasons = []
    if (too_long := _past_every_queue(spec.resources.walltime_s, lambda p: p.max_time_s,
                                      _TIME_CAP.get(scheduler, words.time_cap), queues,
                                      named, words)) is not None:
        reasons.append(too_long)
    caps = _SIZE_CAPS.get(scheduler, ("", "", ""))
    for asked, limit_of, what, cap in zip(
            (req.nodes, _cpus_in_all(spec, req), req.nodes * req.gpn),
            (lambda p: p.max_nodes, lambda p: p.max_cpus, lambda p: p.max_gpus),
            (f"{words.node}s", f"{words.cpus} in all", "GPUs in all"), caps, strict=True):
        if (said := _past_every_queue(asked, limit_of, what, queues, named, words,
                                      cap)) is not None:
            reasons.append(said)
    floors = _SIZE_FLOORS.get(scheduler)
    if floors is None:
        return reasons
    # flux counts the nodes a job's jobspec asks: none without -N
    for asked, least_of, counted, floor in zip(
            (spec.resources.nodes or 0, _cpus_in_all(spec, req), req.nodes * req.gpn),
            (lambda p: p.min_nodes, lambda p: p.min_cpus, lambda p: p.min_gpus),
            (words.nodes, lambda n: f"{words.cpus_counted(n)} in all",
             lambda n: f"{quantity(n, 'GPU')} in all"), floors, strict=True):
        if (said := _below_every_queue(asked, least_of, counted, queues, named, words,
                                       floor)) is not None:
            reasons.append(said)
    return reasons


def _below_every_queue(asked: int, least_of: Callable[[Partition], int | None],
                       counted: Callable[[int], str], queues: list[Partition], named: bool,
                       words: Words, floor: str) -> str | None:
    """`asked` (`counted` says it in words) below the least (`least_of`, named `floor` in
    the queue's configuration) of every queue the job may run in (those it names, else all
    of the site's); None when one takes it or none is known."""
    if not queues or any(not least_of(p) or asked >= (least_of(p) or 0) for p in queues):
        return None
    lowest = min(queues, key=lambda p: least_of(p) or 0)
    least = least_of(lowest) or 0
    where = f"{words.part} {lowest.name}" if len(queues) == 1 else \
        f"the least demanding {words.part}{' it names' if named else ''}, {lowest.name},"
    needs = f"needs {counted(asked)}" if asked or floor != "NNODES" else \
        "asks no node count (flux counts the nodes of -N only)"
    return f"{needs}, {where} takes only a job of at least {least} ({floor}): ask at least {least}"


def _routes_taken(spec: JobSpec, snap: SiteSnapshot) -> list[Partition]:
    """The PBS routing queues the job passes through: one it names and those it routes
    to (each checks a job against its own resources_max)."""
    by_name = {p.name: p for p in snap.partitions}
    todo = [q.strip() for q in (spec.queue or "").split(",") if q.strip()]
    seen: list[Partition] = []
    while todo:
        queue = by_name.get(todo.pop())
        if queue is not None and queue.routes_to is not None and queue not in seen:
            seen.append(queue)
            todo += queue.routes_to
    return seen


def _named_queues(spec: JobSpec, snap: SiteSnapshot) -> set[str] | None:
    """The queues the job names (a PBS routing queue: the queues it sends jobs to), set()
    for none; None when it names one the snapshot does not list (a hidden one may hold
    other nodes and limits: not judged)."""
    named = {q.strip() for q in (spec.queue or "").split(",") if q.strip()}
    by_name = {p.name: p for p in snap.partitions}
    if named - set(by_name):
        return None
    seen: set[str] = set()
    while named - seen:
        name = (named - seen).pop()
        seen.add(name)
        routes = by_name[name].routes_to or []
        if set(routes) - set(by_name):
            return None
        named |= set(routes)
    return {n for n in named if by_name[n].routes_to is None}


def _several_shapes(spec: JobSpec, scheduler: str, flavor: str | None) -> bool:
    """Whether the job is not one shape on every node (a Slurm heterogeneous job, PBS chunks
    of several shapes, an LSF compound request): its nodes are not judged here."""
    if scheduler == "slurm":
        return any(d.dialect == "slurm" and d.option in _HET_OPTIONS for d in spec.unknown)
    if scheduler == "pbs" and flavor != "slurm":
        chunks = pbs_script.chunk_shapes(spec)
        return chunks is not None and len(chunks[0]) > 1
    return scheduler == "lsf" and lsf_script.term_shapes(spec) is not None


def _node_reasons(spec: JobSpec, req: Req, nodes: list[Node], largest: Node, words: Words,
                  scheduler: str) -> list[str]:
    reasons = []
    node = words.node
    most_cpus = max(nodes, key=lambda n: n.cpus)
    if most_cpus.cpus and req.cpn > most_cpus.cpus:
        hint = _PER_NODE_HINT.get(scheduler, _PER_NODE_HINT["slurm"])
        reasons.append(f"needs {words.cpus_counted(req.cpn)} on one {node}, the largest "
                       f"{node} ({most_cpus.name}) has {most_cpus.cpus}: ask at most "
                       f"{most_cpus.cpus} per {node} ({hint})")
    all_gpus = sum(n.gpus for n in nodes)
    if req.spread and req.nodes > len(nodes):  # `--gpus=N` over as many nodes as it takes
        reasons.append(f"asks {quantity(spec.resources.gpus_per_node or 0, 'GPU')}, the site "
                       f"has {all_gpus} in all on {words.nodes(len(nodes))} (largest "
                       f"{node} {_described(largest, words)}): ask at most {all_gpus}")
    elif req.nodes > len(nodes):
        reasons.append(f"needs {words.nodes(req.nodes)}, the site has {len(nodes)} (largest "
                       f"{node} {_described(largest, words)}): ask at most {len(nodes)}")
    return reasons


def _cpus_in_all(spec: JobSpec, req: Req) -> int:
    """The job's CPUs in all: its tasks times their CPUs where it counts tasks (not its
    nodes' share rounded up: `-n 40` on hosts of 16 asks 40), else every node's."""
    r = spec.resources
    return r.tasks * (r.cpus_per_task or 1) if r.tasks and r.tasks_per_node is None \
        else req.nodes * req.cpn


def _described(node: Node, words: Words) -> str:
    gpus = f", {quantity(node.gpus, 'GPU')}" if node.gpus else ""
    memory = f", {node.memory_mb} MB" if node.memory_mb else ""
    return f"{node.name}: {words.cpus_counted(node.cpus)}{gpus}{memory}"


def _past_every_queue(asked: float | None, limit_of: Callable[[Partition], int | None],
                      what: str, queues: list[Partition], named: bool, words: Words,
                      cap: str = "") -> str | None:
    """`asked` past the limit (`limit_of`, named `cap` in the queue's configuration) of
    every queue the job may run in (those it names, else all of the site's); None when
    one allows it or none is known. `what`: the time limit's name, else the unit asked."""
    if not asked or not queues or any(limit_of(p) is None or asked <= (limit_of(p) or 0)
                                      for p in queues):
        return None
    widest = max(queues, key=lambda p: limit_of(p) or 0)
    most = limit_of(widest) or 0
    where = f"{words.part} {widest.name}" if len(queues) == 1 else \
        f"the most generous {words.part}{' it names' if named else ''}, {widest.name},"
    if what in _TIME_CAP.values():
        if len(queues) > 1:
            where = f"the longest {words.part}{' it names' if named else ''}, {widest.name},"
        return (f"asks {hms(asked)} of run time, {where} allows at most {hms(most)} "
                f"({what}): ask at most {hms(most)}")
    named_cap = f" ({cap})" if cap else ""
    return (f"needs {int(asked)} {what}, {where} allows a job at most {most}{named_cap}: "
            f"ask at most {most}")
