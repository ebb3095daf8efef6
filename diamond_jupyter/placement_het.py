"""Slurm heterogeneous jobs (`#SBATCH hetjob`): each later component as a JobSpec of its
own, and one verdict for the whole job from every component's.

sbatch reads a later component's options afresh, but takes some from the component before
it unless the component sets them again (Slurm's heterogeneous jobs page: the propagated
options; `--partition`, the node, task, CPU and GPU counts and `--constraint` are not among
them: a component that names no partition goes to the default one). Every component must
fit its own partition and nodes, and the job starts when all of them can start together
(`_occupy`, `_hold_together`). Pure code.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Collection, Iterator
from datetime import datetime, timedelta
from itertools import combinations
from typing import TYPE_CHECKING, Any

from diamond_jupyter.wording import quantity

from .config import SiteConfig
from .model import (
    GPUS_PER_JOB,
    PER_GPU,
    Association,
    BadInput,
    Directive,
    JobSpec,
    JobState,
    JobStatus,
    Partition,
    SiteSnapshot,
    hms,
)
from .needs import metadata_arch
from .placement_fit import (
    most_gpus,
    node_checks,
    node_usable,
    partition_members,
    request,
    site_nodes,
)
from .placement_sim import (
    Shape,
    SimState,
    build_state,
    pending_demands,
    queue_held,
    reservation_for,
    together_start,
)
from .placement_time import HORIZON_S, plus_seconds

if TYPE_CHECKING:
    from .placement import SiteVerdict

SEPARATORS = ("hetjob", "packjob")
NO_DEFAULT = "(no default partition)"  # where a component goes that a site cannot send
_STARTS_WHEN_ALL = ": the job starts when every component can"  # a component's start, said
# kept-as-written options a later component takes from the one before it (propagated)
_PROPAGATED_KEPT = ("--time-min", "--exclude")
# the first component's kept options of its own nodes and hosts, which sbatch resets in each
# later component (they are not among the propagated options): a later one read whole
# (`shape_components`) does not take them
_FIRSTS_OWN = frozenset((
    "--nodelist", "--gres", "--gres-flags", "--gpus", "--gpus-per-socket", "--cpus-per-gpu",
    "--mem-per-gpu", "--core-spec", "--thread-spec", "--mincpus", "--tmp",
    "--sockets-per-node", "--cores-per-socket", "--threads-per-core", "--extra-node-info",
    "--ntasks-per-socket", "--ntasks-per-core", "--hint", "--overcommit", "--oversubscribe",
    "--switches"))
# the first component's metadata of its GPUs spread over the job (`--gpus=N`, per-GPU CPUs
# and memory): a later one's are in its own sizes
_FIRSTS_METADATA = frozenset((GPUS_PER_JOB, PER_GPU))


def _groups(spec: JobSpec) -> list[list[Directive]]:
    """The kept Slurm directives of each component, split at `hetjob`/`packjob`."""
    out: list[list[Directive]] = [[]]
    for d in spec.unknown:
        if d.dialect == "slurm" and d.option in SEPARATORS:
            out.append([])
        else:
            out[-1].append(d)
    return out


def het_components(spec: JobSpec) -> list[JobSpec]:
    """The later components of a Slurm heterogeneous job (none for any other job), each
    read as sbatch reads it, with what the component before it propagates."""
    if spec.source_dialect not in (None, "slurm"):
        return []
    groups = _groups(spec)
    if len(groups) == 1:
        return []
    from .dialects.slurm_script import SlurmScript

    out: list[JobSpec] = []
    prev, prev_kept = spec, groups[0]
    for i, group in enumerate(groups[1:], start=1):
        lines = "".join(f"#SBATCH {_word(d)}\n" for d in group)
        try:
            comp = SlurmScript().parse_script("#!/bin/bash\n" + lines + "true\n")
        except BadInput as e:
            # its line numbers are of the component alone: say the line as written instead
            why = re.sub(r"^line [0-9]+: ", "", str(e))
            raw = next((d.raw for d in group if _word(d) in str(e) or d.raw in str(e)), None)
            raise BadInput(f"heterogeneous job component {i} (after #SBATCH hetjob number "
                           f"{i}): {why}" + (f" (the line `{raw}`)" if raw else "")) from None
        _propagate(comp, prev, prev_kept)
        comp.script, comp.command, comp.name = None, None, spec.name
        comp.metadata["het_component"] = i
        out.append(comp)
        prev, prev_kept = comp, [d for d in comp.unknown]
    return out


def shape_components(spec: JobSpec) -> list[JobSpec]:
    """A job of several shapes read whole (`spec.components`: a Slurm hetjob, PBS chunks,
    an LSF compound requirement) as a Slurm site gets it, a heterogeneous job: each
    component a spec of its own, the first included, with its own partition, account,
    QOS, reservation, time limit, constraint and exclusivity or the job's, and its own
    generic resources beside its GPUs (a later one's `--gres` entries, not the first's);
    none for a job of one shape. A later one takes none of the first's kept options of
    its own nodes (`_FIRSTS_OWN`: its `--nodelist`, `--core-spec`, ...), and its own
    `--nodelist` where it names one."""
    from .dialects.scripts_common import component_sizes, component_times, live_components
    from .dialects.slurm_script import COMPONENT_NODELISTS

    comps, times = live_components(spec), component_times(spec)
    own_hosts = spec.metadata.get(COMPONENT_NODELISTS) or [] if comps else []
    out: list[JobSpec] = []
    for i, c in enumerate(comps):
        # the job's GPU model reaches a component that asks for GPUs (one without any, in
        # a partition of no GPUs, needs no model)
        gpus = c.gpus_per_node or c.gpus_per_task
        sizes = {**component_sizes(c),
                 "gpu_type": c.gpu_type or (spec.resources.gpu_type if gpus else None)}
        if times and times[i] is not None:  # its own time limit (else the job's)
            sizes["walltime_s"] = times[i]
        # its own partition (none: the site's default), account and QOS, else the job's
        queue = c.queue or (None if c.default_queue else spec.queue)
        own = {k: v for k, v in (("features", c.features), ("exclusive", c.exclusive))
               if v is not None}
        one = spec.model_copy(update={"components": [], "queue": queue,
                                      "account": c.account or spec.account,
                                      "qos": c.qos or spec.qos,
                                      "reservation": c.reservation or spec.reservation,
                                      "constraints": spec.constraints.model_copy(update=own),
                                      "resources": spec.resources.model_copy(update=sizes)})
        if i:  # the body runs once, with the first component
            one.script, one.command = None, None
            one.metadata = {k: v for k, v in spec.metadata.items() if k not in _FIRSTS_METADATA}
            one.metadata["het_component"] = i
            # what the first asks of its own nodes and hosts is not carried over
            one.unknown = [d for d in spec.unknown
                           if not (d.dialect == "slurm" and d.option in _FIRSTS_OWN)]
            if hosts := (own_hosts[i - 1] if i <= len(own_hosts) else None):
                one.unknown.append(Directive(
                    dialect="slurm", option="--nodelist", value=hosts,
                    raw=f"#SBATCH --nodelist={hosts} (hetjob component {i})"))
        if i and c.gres:  # its own, read as a kept --gres is (`placement_fit._other_gres`)
            one.unknown = [*one.unknown, Directive(dialect="slurm", option="--gres",
                                                   value=c.gres, raw=f"#SBATCH --gres={c.gres}")]
        out.append(one)
    return out


# metadata: how many of a heterogeneous job's components count against the submit limits
# of a component's QOS and of its account, {"qos": N, "account": M} (each component is a job
# there: heterogeneous_jobs.html)
HET_SUBMIT_JOBS = "het_submit_jobs"


def counted_as_jobs(comps: list[JobSpec]) -> list[JobSpec]:
    """A heterogeneous job's components (none: none), each told how many of them count
    with it against its QOS's and its account's submit limits: those of the same QOS (none
    named: the same default), those of the same account; and every component's partition,
    QOS and account with its own place among them, for a partition's own QOS
    (`components_under_qos`)."""
    every = [{"queue": x.queue, "qos": x.qos, "account": x.account} for x in comps]
    return [c.model_copy(update={"metadata": {**c.metadata, HET_SUBMIT_JOBS: {
        "qos": sum(x.qos == c.qos for x in comps),
        "account": sum(x.account == c.account for x in comps),
        "components": every, "self": i}}}) for i, c in enumerate(comps)]


def components_under_qos(het: dict[str, Any], name: str, p: Partition, qos: str | None,
                         snap: SiteSnapshot) -> int:
    """How many of a heterogeneous job's components (`het`: its HET_SUBMIT_JOBS, told to
    the one placed in partition `p` under QOS `qos`) count against QOS `name`'s submit
    limits: those run under it (named, or their association's default) and those of a
    partition whose own QOS it is (each job there counts: Slurm's QOS page)."""
    from .placement_limits import job_qos

    every = het.get("components")
    if not isinstance(every, list):
        return int(het.get("qos", 1))
    parts = {x.name: x for x in snap.partitions}
    default = next((x for x in snap.partitions if x.default), None)
    n = 0
    for i, c in enumerate(every):
        if i == het.get("self"):
            where, runs = p, qos
        else:
            where = parts.get((c["queue"] or "").split(",")[0]) if c["queue"] else default
            runs = c["qos"] or (job_qos(None, where, snap, c["account"])[0]
                                if where is not None else None)
        n += runs == name or (where is not None and where.qos == name)
    return n


def _word(d: Directive) -> str:
    return d.option if d.value is None else f"{d.option}={shlex.quote(d.value)}"


def _propagate(comp: JobSpec, prev: JobSpec, prev_kept: list[Directive]) -> None:
    """What sbatch carries from the component before into `comp` where it sets none:
    account, QOS, reservation, time limit, `--mem`, `--time-min`, `--exclude`."""
    for attr in ("account", "qos", "reservation"):
        if getattr(comp, attr) is None:
            setattr(comp, attr, getattr(prev, attr))
    r, p = comp.resources, prev.resources
    if r.walltime_s is None:
        r.walltime_s = p.walltime_s
    own_mem = r.memory_mb is not None or r.memory_per_cpu_mb is not None \
        or PER_GPU in comp.metadata or any(d.option == "--mem-per-gpu" for d in comp.unknown)
    if not own_mem and p.memory_mb is not None:
        r.memory_mb = p.memory_mb
    have = {d.option for d in comp.unknown if d.dialect == "slurm"}
    comp.unknown += [d for d in prev_kept if d.dialect == "slurm"
                     and d.option in _PROPAGATED_KEPT and d.option not in have]


def label(i: int, comp: JobSpec, queue: str | None) -> str:
    """How a component is named in reasons: its index, and the partition it is sent to
    when it names none."""
    if comp.queue or not queue:
        return f"hetjob component {i}"
    if queue == NO_DEFAULT:
        return (f"hetjob component {i} (no --partition, and the site has no default "
                "partition: sbatch refuses it)")
    return f"hetjob component {i} (no --partition: the default, {queue})"


def in_default(comp: JobSpec, snap: SiteSnapshot) -> JobSpec:
    """A later component that names no partition runs in the scheduler's default one (the
    engine names the first component's partition only, so the sites file's default does
    not reach it); a site without one: a partition no site has, so the verdict says sbatch
    finds none."""
    if comp.queue:
        return comp
    default = next((p.name for p in snap.partitions if p.default), None)
    if default is None and not snap.partitions:
        return comp
    return comp.model_copy(update={"queue": default or NO_DEFAULT})


def first_component(spec: JobSpec) -> JobSpec:
    """The job's first component alone: without the later components' kept options."""
    return spec.model_copy(update={"unknown": _groups(spec)[0]})


def combine(v: SiteVerdict, later: list[SiteVerdict], labels: list[str], scheduler: str,
            rel: Callable[[datetime], str]) -> None:
    """Fold the later components' verdicts into the first component's `v` (changed in
    place): infeasible when any is, each reason naming its component (`labels`: one for
    each, the first's included); else the start of the latest, the finish moved out as
    much, costs added."""
    if v.verdict == "UNREACHABLE":
        return
    if scheduler != "slurm":
        v.feasible, v.verdict = False, "INCOMPATIBLE"
        v.reasons = [f"a Slurm heterogeneous job of {len(labels)} components (#SBATCH "
                     f"hetjob): {scheduler} has no form for its later components (they would "
                     "be dropped), so only a Slurm site runs it whole"]
        _clear(v)
        return
    verdicts = [v, *later]
    bad = [(i, w) for i, w in enumerate(verdicts) if not w.feasible]
    if bad:
        said: dict[str, list[int]] = {}  # a reason, and the components it holds for
        for i, w in bad:
            for why in w.reasons:
                said.setdefault(why, []).append(i)
        reasons = [(labels[ix[0]] if len(ix) == 1 else
                    f"hetjob components {', '.join(map(str, ix))}") + f": {why}"
                   for why, ix in said.items()]
        v.verdict = "INCOMPATIBLE" if any(w.verdict == "INCOMPATIBLE" for _, w in bad) \
            else "RESTRICTED"
        v.feasible, v.reasons = False, reasons
        _clear(v)
        return
    v.notes = [f"{labels[0]}: {n}" for n in v.notes]
    v.waits_for = [f"{labels[0]}: {n}" for n in v.waits_for]
    for i, w in enumerate(later, start=1):
        v.notes.append(f"{labels[i]} runs in partition {w.partition or '-'}"
                       + (f", can start {rel(w.estimated_start)}" if w.estimated_start
                          else "") + _STARTS_WHEN_ALL)
        v.notes += [f"{labels[i]}: {n}" for n in w.notes]
        v.waits_for += [f"{labels[i]}: {n}" for n in w.waits_for]
        if v.estimated_start is None or w.estimated_start is None:
            if w.estimated_start is None:
                _clear(v, keep_feasible=True)
            continue
        if w.estimated_start > v.estimated_start:
            shift = w.estimated_start - v.estimated_start
            v.estimated_start = w.estimated_start
            if v.estimated_finish is not None:
                v.estimated_finish += shift
            v.start_source = w.start_source
        if w.raw_start and (v.raw_start is None or w.raw_start > v.raw_start):
            v.raw_start = w.raw_start
        if v.start_bound is not None:  # the latest component's bound, never below the start
            v.start_bound = max(v.start_bound, w.start_bound or w.estimated_start,
                                v.estimated_start)
        if w.verdict == "BUSY":
            v.verdict = "BUSY"
        if v.cost is not None and w.cost is not None:
            v.cost += w.cost
        if v.billed_nodes is not None and w.billed_nodes is not None:
            v.billed_nodes += w.billed_nodes


def over_limits_together(comps: list[JobSpec], verdicts: list[SiteVerdict],
                         snap: SiteSnapshot) -> list[str]:
    """Why a heterogeneous job's components (each placed, `verdicts` in order) never start
    together on a Slurm site: the components under one QOS (the job's or their
    partition's) ask more in all than its GrpTRES or MaxTRESPerUser allows, though each
    fits alone. Slurm's backfill starts them only when the limits take all of them at
    once (a hetjob "prevented from starting by account/QOS limit" otherwise)."""
    from .placement_limits import counted, job_qos

    asked: dict[str, dict[str, int]] = {}  # a QOS: the TRES its components ask in all
    under: dict[str, list[int]] = {}  # a QOS: the components under it
    for i, comp, p, tres in _placed_components(comps, verdicts, snap):
        for name in dict.fromkeys(x for x in (p.qos, job_qos(comp.qos, p, snap,
                                                              comp.account)[0]) if x):
            under.setdefault(name, []).append(i)
            for k, n in tres.items():
                asked.setdefault(name, {})[k] = asked.get(name, {}).get(k, 0) + n
    out = []
    for name, total in asked.items():
        q = (snap.qos or {}).get(name)
        if q is None or len(under[name]) < 2:
            continue
        which = ", ".join(map(str, under[name]))
        for caps, what in ((q.grp_tres, "GrpTRES"), (q.max_tres_per_user, "MaxTRESPerUser")):
            for tres, most in caps.items():
                if total.get(tres, 0) > most:
                    out.append(f"hetjob components {which} ask {counted(total[tres], tres)} "
                               f"in all under QOS {name}, which allows {most} ({what} "
                               f"{tres}={most}): each fits alone, but they start only "
                               "together, so they never start")
    return out + _over_associations(comps, verdicts, snap)


def _placed_components(comps: list[JobSpec], verdicts: list[SiteVerdict], snap: SiteSnapshot
                       ) -> Iterator[tuple[int, JobSpec, Partition, dict[str, int]]]:
    """Each component placed in a partition of `snap` (its index, spec, partition) with the
    TRES it asks in all: nodes, GPUs, and CPUs unless it takes whole nodes."""
    from .placement_sim import WHOLE

    parts = {p.name: p for p in snap.partitions}
    for i, (comp, w) in enumerate(zip(comps, verdicts, strict=True)):
        p = parts.get(w.partition or "")
        if p is None or w._shape is None:
            continue
        nodes, cpn, gpn, _ = w._shape
        tres = {"node": nodes, "gres/gpu": nodes * gpn}
        if cpn != WHOLE:
            tres["cpu"] = nodes * cpn
        yield i, comp, p, tres


def _over_associations(comps: list[JobSpec], verdicts: list[SiteVerdict],
                       snap: SiteSnapshot) -> list[str]:
    """As `over_limits_together`, for the GrpTRES of the association each component runs
    under and of the accounts above it: the components under one of them ask more in all
    than it allows (AssocGrpCpuLimit and the like, never freed)."""
    from .placement_limits import _assoc_name, _chain, counted

    asked: dict[int, dict[str, int]] = {}  # an association (by id): the TRES asked in all
    under: dict[int, list[int]] = {}  # an association: the components under it
    found: dict[int, Association] = {}
    for i, comp, p, tres in _placed_components(comps, verdicts, snap):
        for a in _chain(snap, comp.account, p.name):
            found[id(a)] = a
            under.setdefault(id(a), []).append(i)
            for k, n in tres.items():
                asked.setdefault(id(a), {})[k] = asked.get(id(a), {}).get(k, 0) + n
    out = []
    for key, total in asked.items():
        if len(under[key]) < 2:
            continue
        a, which = found[key], ", ".join(map(str, under[key]))
        for tres, most in a.grp_tres.items():
            if total.get(tres, 0) > most:
                out.append(f"hetjob components {which} ask {counted(total[tres], tres)} in "
                           f"all under {_assoc_name(a, snap.user)}, which allows {most} "
                           f"(GrpTRES {tres}={most}): each fits alone, but they start only "
                           "together, so they never start")
    return out


def never_together(shapes: list[Shape], st: SimState) -> str | None:
    """Why a heterogeneous job's components (their `shapes` in order, on `st`'s nodes) can
    never hold their nodes all at once, even on an idle site: some of them ask more CPUs or
    GPUs in all, or more whole or distinct nodes, than the nodes any of them may use have
    (a bound that must hold, tried for every set of components); None when none fails it
    (they may still not fit: the packing is not searched here)."""
    from .placement_sim import WHOLE

    for size in range(2, len(shapes) + 1):
        for group in combinations(range(len(shapes)), size):
            hosts = frozenset().union(*(shapes[i].eligible for i in group))
            usable = [h for h in hosts if st.cap_c[h] > 0]
            for what, asked, have in (
                    ("CPUs", sum(shapes[i].count * shapes[i].cpus for i in group
                                 if shapes[i].cpus != WHOLE),
                     sum(st.cap_c[h] for h in usable)),
                    ("GPUs", sum(shapes[i].count * shapes[i].gpus for i in group),
                     sum(st.cap_g[h] for h in usable)),
                    ("whole nodes", sum(shapes[i].count for i in group
                                        if shapes[i].cpus == WHOLE), len(usable))):
                if asked > have:
                    names = ", ".join(sorted(st.names[h] for h in usable)) or "none"
                    return (f"hetjob components {', '.join(map(str, group))} ask {asked} "
                            f"{what} in all of the nodes they may use that are up ({names}), "
                            f"which have {have}: they start only together, so they never "
                            "start")
    return None


def refuse(v: SiteVerdict, reasons: list[str]) -> None:
    """`v` (a heterogeneous job's combined verdict) made INCOMPATIBLE for `reasons`, the
    components' starts no longer said."""
    v.feasible, v.verdict, v.reasons = False, "INCOMPATIBLE", reasons
    v.notes = [n for n in v.notes if not n.endswith(_STARTS_WHEN_ALL)]
    _clear(v)


def _clear(v: SiteVerdict, keep_feasible: bool = False) -> None:
    """No start, bound, finish or cost: not feasible, or one component's start unknown."""
    v.estimated_start = v.raw_start = v.start_bound = v.estimated_finish = None
    v.start_source = None
    if not keep_feasible:
        v.partition, v.cost, v.billed_nodes, v.estimated_runtime_s = None, None, None, None
        v.waits_for = []
    elif v.verdict == "READY":
        v.verdict = "BUSY"


# Why a site is sent a job of several shapes (`spec.components`) as one shape: what its
# dialect renders (`scripts_common.one_shape`), from each scheduler's documentation.
_ONE_SHAPE_WHY = {
    "flux": "flux runs a job of one shape (jobspec version 1, RFC 25, which the job shell "
            "requires: exactly one slot shape of cores and GPUs)",
    "sge": "Grid Engine runs a job of one shape (every slot of a parallel environment asks "
           "the job's same -l resources; only the master task's queue can be chosen, "
           "-masterq)",
    "slurmrestd": "this slurmrestd door submits one job description (not a heterogeneous "
                  "job's list of components)",
    "lsf": "its compound requirement cannot say these shapes here (GPUs per task, or tasks "
           "that do not divide among a shape's hosts)",
}


def one_shape_sent(spec: JobSpec, scheduler: str, transport: str) -> str | None:
    """Why a site (its `scheduler`, its transport's kind) is sent `spec`, a job of several
    shapes read whole, as one shape; None when it gets the shapes (a Slurm hetjob, PBS
    chunks, an LSF compound requirement) or the job has one shape."""
    from .dialects.scripts_common import live_components

    if not live_components(spec):
        return None
    if scheduler in ("flux", "sge"):
        return _ONE_SHAPE_WHY[scheduler]
    if scheduler == "slurm" and transport == "slurmrestd":
        return _ONE_SHAPE_WHY["slurmrestd"]
    if scheduler == "lsf":
        from .dialects.lsf_script import lsf_script
        return _ONE_SHAPE_WHY["lsf"] if lsf_script._compound_text(spec, []) is None else None
    return None


def as_one_shape(spec: JobSpec, why: str) -> tuple[JobSpec, str | None, str]:
    """`spec` as the one shape such a site is asked (`one_shape`: the nodes and tasks as
    they are, CPUs, GPUs and memory spread evenly and rounded down), why the site cannot
    run it (None: it can) and the note saying so. A shape that loses CPUs or GPUs in the
    spreading runs with fewer than the job asks: refused. Memory lost to rounding per CPU
    (under 1 MB a CPU) is only said."""
    from .dialects.scripts_common import (
        describe_totals,
        live_components,
        one_shape,
        resource_totals,
        summed_totals,
    )

    comps = live_components(spec)
    flat = one_shape(spec, "", [])
    want, got = summed_totals(comps), resource_totals(flat.resources)
    shapes = " + ".join(describe_totals(resource_totals(c)) for c in comps)
    r = flat.resources
    tasks = quantity(r.tasks, "task")
    on = f"{quantity(r.nodes, 'node')} and {tasks}" if r.nodes else tasks
    lost = [f"{w} {want[q]} -> {got[q] or 0}" for q, w in (("cpus", "CPUs"), ("gpus", "GPUs"))
            if (want[q] or 0) > (got[q] or 0)]
    head = f"a job of {len(comps)} shapes ({shapes})"
    if lost:
        return flat, (f"{head}: {why}; as one shape of {on}, spread evenly and rounded down, "
                      f"it gets less than it asks ({', '.join(lost)})"), ""
    note = f"{head} runs here as one shape of {on}: {why}"
    if (want["memory_mb"] or 0) > (got["memory_mb"] or 0):
        note += (f"; memory spread per CPU, rounded down: {want['memory_mb']} MB -> "
                 f"{got['memory_mb'] or 0} MB")
    return flat, None, note


def _occupy(comp: JobSpec, cfg: SiteConfig, snap: SiteSnapshot, v: SiteVerdict,
            now: datetime) -> SiteSnapshot:
    """`snap` with what a heterogeneous job's component that starts now (`v` READY) takes
    of its partition's free nodes, as a running job that holds them (the components start
    together, so a later one never gets them): the nodes that fit it with the least to
    spare first. A component that waits, or whose nodes cannot be told, takes nothing."""
    if v.verdict != "READY" or v.partition is None:
        return snap
    nodes = site_nodes(snap)
    req = request(comp, max((n.cpus for n in nodes), default=0), most_gpus(comp, nodes),
                  spread_gpus=True, most_memory=max((n.memory_mb for n in nodes), default=0))
    _, fit = node_checks(req, nodes, metadata_arch(cfg.metadata.get("architecture")))
    mine = set(partition_members(snap, nodes).get(v.partition, []))
    free = sorted((n for n in nodes if n.name in fit and n.name in mine and node_usable(n)
                   and n.cpus - n.cpus_allocated >= (n.cpus if req.whole else req.cpn)
                   and n.gpus - n.gpus_allocated >= req.gpn), key=lambda n: (n.gpus, n.cpus))
    take = {n.name for n in free[:req.nodes]}
    if len(take) < req.nodes or not snap.nodes:
        return snap
    cpus = {n.name: n.cpus - n.cpus_allocated if req.whole else req.cpn for n in free
            if n.name in take}
    moved = [n.model_copy(update={"cpus_allocated": n.cpus_allocated + cpus[n.name],
                                  "gpus_allocated": n.gpus_allocated + req.gpn,
                                  "memory_allocated": n.memory_allocated + req.mem,
                                  "state": "mixed"}) if n.name in take else n
             for n in snap.nodes]
    job = JobStatus(native_id=f"hetjob-component-{comp.metadata.get('het_component', 0)}",
                    state=JobState.RUNNING, node_list=",".join(sorted(take)),
                    cpus=sum(cpus.values()), gpus=req.gpn * req.nodes, nodes=req.nodes,
                    partition=v.partition, started_at=now,
                    # held as long as the later components may wait: they start together
                    walltime_s=int(HORIZON_S))
    return snap.model_copy(update={"nodes": moved, "jobs": [*snap.jobs, job]})


def _hold_together(v: SiteVerdict, later: list[SiteVerdict], snap: SiteSnapshot,
                   now: datetime, ended: Collection[str]) -> None:
    """A heterogeneous job's start (`v`, its components combined) moved out to when every
    component finds room at once on what the running jobs leave: each was placed as if the
    others, where they wait, took nothing, yet they start together and none holds what
    another holds (`_occupy` does this only for a component that starts now)."""
    got = [v._shape, *(w._shape for w in later)]
    if v.estimated_start is None or any(g is None for g in got):
        return
    nodes = site_nodes(snap)
    part_max = {p.name: float(p.max_time_s) for p in snap.partitions if p.max_time_s}
    st = build_state(snap, nodes, partition_members(snap, nodes), now, part_max, ended=ended)
    idx = st.index()
    shapes = [Shape(n, c, g, frozenset(idx[x] for x in names if x in idx))
              for n, c, g, names in filter(None, got)]
    # on the walltimes' plan (the raw start's): what holding them together adds there
    # moves the start, calibrated or not, by as much
    start = ((v.raw_start or v.estimated_start) - now).total_seconds()
    # the queued jobs ahead, as the simulation starts them, keep their room: the components
    # start together in what they leave, through the longest component's walltime
    queue = pending_demands(snap, st, partition_members(snap, nodes), now, part_max)
    longest = max(w._walltime_s for w in [v, *later])
    plan = snap.backfill or reservation_for("slurm")  # Slurm's: every job ahead kept
    at_once, by_queue = together_start(st, shapes, start, held=queue_held(st, queue, plan),
                                       duration=longest, reservation=plan)
    if at_once is None:
        if why := never_together(shapes, st):
            refuse(v, [why])
            return
        v.notes.append("its components never find room all at once while the running jobs "
                       "end (the start is a lower bound)")
        return
    if at_once <= start:
        return
    shift = timedelta(seconds=at_once - start)
    ahead = ", leaving the queued jobs ahead their room" if by_queue else ""
    v.notes.append(f"its components find room all at once{ahead} at +{hms(at_once)} (alone, "
                   "each finds it sooner; they start together, none on what another holds)")
    v.estimated_start += shift
    if v.estimated_finish is not None:
        v.estimated_finish += shift
    v.raw_start = plus_seconds(now, at_once)
    if v.start_bound is not None:
        v.start_bound = max(v.start_bound, v.estimated_start)
    v.verdict = "BUSY"
