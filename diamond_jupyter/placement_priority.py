"""Slurm multifactor priority in placement: where a new job joins the waiting jobs.

Slurm (PriorityType=priority/multifactor) takes the waiting jobs of a PriorityTier by
their priority, the highest first, and its backfill delays none of them for a job of a
lower one. A new job's priority at submit is what the plugin sums then:

    PriorityWeightFairshare x the FairShare factor of the user's association (sshare)
  + PriorityWeightJobSize x the job size factor: (its nodes / the site's nodes + its CPUs /
    the site's CPUs) / 2, one less that with PriorityFavorSmall (with
    SMALL_RELATIVE_TO_TIME: its CPUs, at least its nodes' average, a minute of its time
    limit, over the site's CPUs)
  + PriorityWeightPartition x its partition's PriorityJobFactor / the highest one
  + PriorityWeightQOS x its QOS's Priority / the highest one
  + PriorityWeightAge x 0 (it has not waited yet)

(NO_NORMAL_PART / NO_NORMAL_QOS: the raw factor). The waiting jobs' own priorities are
sprio's (slurmrestd: each job's `priority`). Those of its tier with a lower priority wait
behind the new job; those of an equal or higher one, or whose priority is not read, go
first. Where a factor it weighs cannot be read (the association factor, TRES weights, a
fair share or a QOS not reported), the job keeps today's place, behind every waiting job,
and the site says so. slurmrestd serves the factors but neither the plugin nor its
weights: there the job keeps today's place, said once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from math import ceil

from .dialects.slurm_priority import MULTIFACTOR
from .model import (
    UNREPORTED_PRIORITY_WEIGHTS,
    JobSpec,
    JobState,
    Partition,
    SiteSnapshot,
    SlurmPriority,
)
from .placement_fit import Req
from .placement_sim import Demand

# the factors the sum below weighs, as the note names them
# the weights `scontrol show config` prints under priority/multifactor (TRES aside)
_MULTIFACTOR_WEIGHTS = ("Age", "Assoc", "FairShare", "JobSize", "Partition", "QOS")
_PRINTED_WEIGHT = re.compile(r"(PriorityWeight\w+) = ([^,]*)")
_SAID = {"fairshare": "fair share", "jobsize": "job size", "partition": "partition",
         "qos": "QOS", "age": "age", "assoc": "association"}


@dataclass(frozen=True)
class PriorityView:
    """The new job's estimated priority in one partition and the waiting jobs' own."""

    partition: str
    priority: int
    factors: tuple[tuple[str, float, int], ...]  # (name, factor, weight) of the sum
    by_job: dict[str, int]  # sprio's, by job id

    def of(self, native_id: str | None) -> int | None:
        """A waiting job's priority as sprio says it (an array record's by its job id)."""
        jid = native_id or ""
        return self.by_job.get(jid, self.by_job.get(jid.split("_")[0]))

    def goes_behind(self, d: Demand, same_tier: bool) -> bool:
        """Whether waiting job `d` waits behind the new job: of its tier, and of a lower
        priority."""
        return same_tier and self.lower(d.native_id)

    def lower(self, native_id: str | None) -> bool:
        """Whether the waiting job `native_id` is of a lower priority than the new job (one
        sprio says none of is not)."""
        p = self.of(native_id)
        return p is not None and p < self.priority

    def order(self, queue: list[Demand], tiers: dict[str, int], tier: int | None
              ) -> tuple[list[Demand], int]:
        """The queue with the jobs of the new job's tier and a lower priority moved behind
        it, and its place (`earliest_start`'s probe_at)."""
        behind = [d for d in queue if self.goes_behind(d, _same_tier(d, tiers, tier))]
        moved = {id(d) for d in behind}
        ahead = [d for d in queue if id(d) not in moved]
        return ahead + behind, len(ahead)

    def note(self, queue: list[Demand], tiers: dict[str, int], tier: int | None) -> str:
        """What the user reads: the estimate, its factors, and how many waiting jobs go
        first and wait behind."""
        seen: dict[str, bool] = {}
        unknown: set[str] = set()
        for d in queue:
            key = (d.native_id or "").split("_")[0] or str(id(d))
            seen[key] = seen.get(key, False) or self.goes_behind(d, _same_tier(d, tiers, tier))
            if self.of(d.native_id) is None:
                unknown.add(key)
        behind = sum(seen.values())
        ahead = len(seen) - behind
        not_known = len(unknown - {k for k, b in seen.items() if b})
        said = ", ".join(f"less --nice {-f:g}" if n == "nice" else
                         f"{_SAID.get(n, n)} {f:.2f}\u00d7{w}" for n, f, w in self.factors)
        return (f"partition {self.partition}: your job's priority ~ {self.priority} "
                f"(Slurm multifactor: {said}, age 0): "
                f"{ahead} waiting job{'' if ahead == 1 else 's'} go{'es' if ahead == 1 else ''} "
                f"first{_of_unknown(not_known)}, {behind} wait{'s' if behind == 1 else ''} "
                "behind it (of a lower priority, sprio)")


def _of_unknown(n: int) -> str:
    """The jobs going first because sprio says no priority of theirs (a mark of none)."""
    if not n:
        return ""
    return f" ({n} of them of a priority sprio does not say, {'it' if n == 1 else 'they'} " \
        "might go behind)"


def _same_tier(d: Demand, tiers: dict[str, int], tier: int | None) -> bool:
    """Whether a waiting job is of the new job's PriorityTier (all are, tiers alike)."""
    if not tiers or tier is None:
        return True
    known = [tiers[x] for x in (d.partition or "").split(",") if x in tiers]
    return bool(known) and max(known) == tier


def _account(spec: JobSpec, prio: SlurmPriority) -> str | None:
    """The account the job runs under: the one it asks, else the user's default, else
    the only one sshare lists for the user."""
    if spec.account:
        return spec.account
    if prio.default_account:
        return prio.default_account
    shares = prio.fair_share or {}
    return next(iter(shares)) if len(shares) == 1 else None


def _qos(spec: JobSpec, snap: SiteSnapshot, account: str | None, part: str) -> str | None:
    """The QOS the job runs under: the one it asks, else its association's default (the
    partition's own association first), else Slurm's `normal` where the QOS list has it."""
    if spec.qos:
        return spec.qos
    mine = [a for a in snap.associations or [] if a.level == "user"
            and (account is None or a.account == account)]
    for a in sorted(mine, key=lambda a: a.partition != part):
        if a.partition in (None, part) and a.default_qos:
            return a.default_qos
    return "normal" if "normal" in ((snap.priority and snap.priority.qos_priority) or {}) \
        else None


def _job_size(req: Req, snap: SiteSnapshot, prio: SlurmPriority, p: Partition
              ) -> float | str:
    """The job size factor at submit; why not where it cannot be told."""
    n_nodes = len(snap.nodes)
    cluster_cpus = sum(n.cpus for n in snap.nodes)
    if not n_nodes or not cluster_cpus:
        return "the site's nodes not read"
    cpus = req.nodes * max(req.cpn, 1)
    if "SMALL_RELATIVE_TO_TIME" in prio.flags:
        limit = req.walltime or p.max_time_s
        if not limit:
            return "SMALL_RELATIVE_TO_TIME, and the job's time limit not known"
        size = max(req.nodes * cluster_cpus / n_nodes, cpus) / ceil(limit / 60) / cluster_cpus
        size = 1.0 - size if prio.favor_small else size
    else:
        size = (req.nodes / n_nodes + cpus / cluster_cpus) / 2
        size = 1.0 - size if prio.favor_small else size
    return min(1.0, max(0.0, size))


def _factor(name: str, spec: JobSpec, req: Req, p: Partition, snap: SiteSnapshot,
            prio: SlurmPriority, account: str | None) -> float | str:
    """One weighted factor of the new job at submit; why not where it cannot be read."""
    if name == "age":
        return 0.0
    if name == "fairshare":
        if prio.fair_share is None:
            return prio.unread.get("fair share", "sshare not read")
        if account is None:
            return (f"the job names no account and sshare lists {len(prio.fair_share)} "
                    f"of yours ({', '.join(sorted(prio.fair_share))}), none the default")
        if account not in prio.fair_share:
            return f"sshare lists no row of yours under account {account}"
        return prio.fair_share[account]
    if name == "jobsize":
        return _job_size(req, snap, prio, p)
    if name == "partition":
        if p.priority_job_factor is None:
            return f"partition {p.name}'s PriorityJobFactor not read"
        if "NO_NORMAL_PART" in prio.flags:
            return float(p.priority_job_factor)
        top = max((q.priority_job_factor or 0) for q in snap.partitions) or 1
        return p.priority_job_factor / top
    if name == "qos":
        if prio.qos_priority is None:
            return prio.unread.get("qos", "the QOS priorities not read")
        qos = _qos(spec, snap, account, p.name)
        if qos is None or qos not in prio.qos_priority:
            return f"the job's QOS {qos or '(not known)'} not among sacctmgr's"
        if "NO_NORMAL_QOS" in prio.flags:
            return float(prio.qos_priority[qos])
        top = max(prio.qos_priority.values()) or 1
        return prio.qos_priority[qos] / top
    if name == "assoc":
        return "your association's Priority is not read"
    return f"PriorityWeight{name} is not modelled"


def priority_view(p: Partition, snap: SiteSnapshot, spec: JobSpec, req: Req
                  ) -> tuple[PriorityView | None, list[str]]:
    """The new job's priority among the jobs waiting at a multifactor site, and what
    could not be read (each a `not checked` line, the same at every partition where it is
    the site's: said once); (None, []) where the site is not multifactor as read or no job
    waits."""
    prio = snap.priority
    if prio is None or not any(j.state == JobState.PENDING for j in snap.jobs):
        return None, []
    if not prio.weights and (who := snap.unreported.get(UNREPORTED_PRIORITY_WEIGHTS)):
        # slurmrestd: the factors read, not what the plugin weighs them by (nor the plugin)
        return None, [f"priority factor weights ({who.split()[0]} does not report them)"]
    if prio.plugin != MULTIFACTOR:
        return None, []
    behind = f"the job was counted behind every job waiting in partition {p.name}"
    if snap.job_priorities is None:
        return None, [f"priority of the waiting jobs (sprio printed none): {behind}"]
    account = _account(spec, prio)
    factors: list[tuple[str, float, int]] = []
    missing: list[str] = []
    unweighed = _unread_weights(prio)  # the factors left out: said, the view kept
    if prio.tres_weights:
        missing.append(f"priority factor TRES (PriorityWeightTRES={prio.tres_weights} "
                       "is not modelled)")
    for name, weight in sorted(prio.weights.items(), key=lambda kv: kv[0] != "fairshare"):
        if weight <= 0:
            continue
        got = _factor(name, spec, req, p, snap, prio, account)
        if isinstance(got, str):
            missing.append(f"priority factor {_SAID.get(name, name)} ({got})")
        elif name != "age":
            factors.append((name, got, weight))
    if missing:
        return None, unweighed + [f"{m}: {behind}" for m in missing]
    if nice := nice_of(spec):  # sbatch --nice: taken off the sum of the factors
        factors.append(("nice", -float(nice), 1))
    total = max(1, int(sum(f * w for _, f, w in factors)))
    return PriorityView(p.name, total, tuple(factors), snap.job_priorities), unweighed


# sbatch --nice without a value (sbatch(1))
NICE_DEFAULT = 100


def nice_of(spec: JobSpec) -> int:
    """A Slurm job's `--nice` adjustment (100 where given without a value; 0 where not
    given or not a whole number: sbatch refuses those): Slurm subtracts it from the job's
    priority (a negative one, allowed to administrators, adds)."""
    for d in spec.unknown:
        if d.dialect == "slurm" and d.option == "--nice":
            if d.value is None:
                return NICE_DEFAULT
            text = d.value.strip()
            return int(text) if re.fullmatch(r"[-+]?[0-9]{1,10}", text) else 0
    return 0


def _unread_weights(prio: SlurmPriority) -> list[str]:
    """A not-checked line for each multifactor weight `scontrol show config` did not print
    or printed as no weight (a mark of none, no whole number): its factor is left out of
    the job's priority. The same at every partition: said once a site."""
    printed = dict(_PRINTED_WEIGHT.findall(prio.unread.get("weights", "")))
    out = []
    for name in _MULTIFACTOR_WEIGHTS:
        key = f"PriorityWeight{name}"
        if name.lower() in prio.weights:
            continue
        out.append(f"priority factor {key} (scontrol show config printed "
                   f"'{printed[key]}', not a weight)" if key in printed else
                   f"priority factor {key} (not reported by scontrol show config)")
    return out
