"""What no node or partition of a Slurm site can ever give a job (pure): more CPUs on one
node than its largest node has, more nodes than it has (GPUs spread over nodes included),
more run time than any partition it may run in allows. An explicit site's check refuses such
a job before anything reaches sbatch; a site whose nodes are not known says nothing here.

Nodes count whatever their state (a drained node may come back), and a partition without a
time limit allows any: only a request no configuration of the site meets is refused."""

from __future__ import annotations

from .model import JobSpec, Node, Partition, SiteSnapshot, hms
from .placement_fit import most_gpus, request, site_nodes
from .wording import quantity

# options after which a job's shape is not one Req: a heterogeneous job's components
_HET_OPTIONS = ("hetjob", "packjob")


def beyond_the_site(spec: JobSpec, snap: SiteSnapshot) -> list[str]:
    """Reasons `spec` asks more than any node or partition of the site of `snap` can ever
    give, each naming the largest node (or the longest partition) and what would be
    accepted; [] when the site's nodes are unknown or the job fits."""
    nodes = site_nodes(snap)
    named = {q.strip() for q in (spec.queue or "").split(",") if q.strip()}
    if named - {p.name for p in snap.partitions}:
        return []  # a partition the snapshot does not list (hidden?) may hold other nodes
    if not nodes or any(d.dialect == "slurm" and d.option in _HET_OPTIONS
                        for d in spec.unknown):
        return []
    largest = max(nodes, key=lambda n: (n.cpus, n.gpus, n.memory_mb))
    req = request(spec, largest.cpus, most_gpus(spec, nodes), spread_gpus=True,
                  most_memory=max(n.memory_mb for n in nodes))
    reasons = []
    most_cpus = max(nodes, key=lambda n: n.cpus)
    if most_cpus.cpus and req.cpn > most_cpus.cpus:
        reasons.append(f"needs {quantity(req.cpn, 'CPU')} on one node, the largest node "
                       f"({most_cpus.name}) has {most_cpus.cpus}: ask at most "
                       f"{most_cpus.cpus} per node (tasks per node x CPUs per task)")
    all_gpus = sum(n.gpus for n in nodes)
    if req.spread and req.nodes > len(nodes):  # `--gpus=N` over as many nodes as it takes
        reasons.append(f"asks {quantity(spec.resources.gpus_per_node or 0, 'GPU')}, the site "
                       f"has {all_gpus} in all on {quantity(len(nodes), 'node')} (largest "
                       f"node {_described(largest)}): ask at most {all_gpus}")
    elif req.nodes > len(nodes):
        reasons.append(f"needs {quantity(req.nodes, 'node')}, the site has {len(nodes)} "
                       f"(largest node {_described(largest)}): ask at most {len(nodes)}")
    if (too_long := _too_long(spec, snap.partitions)) is not None:
        reasons.append(too_long)
    return reasons


def _described(node: Node) -> str:
    gpus = f", {quantity(node.gpus, 'GPU')}" if node.gpus else ""
    return f"{node.name}: {quantity(node.cpus, 'CPU')}{gpus}, {node.memory_mb} MB"


def _too_long(spec: JobSpec, partitions: list[Partition]) -> str | None:
    """The job's run time past the MaxTime of every partition it may run in (those it names,
    else all of the site's); None when one allows it or none is known."""
    asked = spec.resources.walltime_s
    if not asked or not partitions:
        return None
    named = {q.strip() for q in (spec.queue or "").split(",") if q.strip()}
    mine = [p for p in partitions if p.name in named] if named else partitions
    if not mine or any(p.max_time_s is None or asked <= p.max_time_s for p in mine):
        return None  # a partition not found is placement's and the scheduler's to say
    longest = max(mine, key=lambda p: p.max_time_s or 0)
    where = f"partition {longest.name}" if len(mine) == 1 else \
        f"the longest partition{' it names' if named else ''}, {longest.name},"
    return (f"asks {hms(asked)} of run time, {where} allows at most "
            f"{hms(longest.max_time_s)} (MaxTime): ask at most {hms(longest.max_time_s)}")
