"""Grid Engine placement pieces: queue consumables (a queue's `complex_values`, qc:) per
queue instance, and a parallel job whose master task `-masterq` binds to some queues
while its other slots go to any queue that offers its parallel environment.

Pure: snapshot and request in, host sets and reasons out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from .model import Node, Partition, SiteSnapshot
from .placement_fit import Req, amount_text, expected_end


@dataclass
class QueueFit:
    """How a queue's consumables bind a job: `never`, the hosts whose instance of the
    queue can never give it enough; `short`, those whose instance has too little left now;
    `until`, of those, the ones a running job there gives enough back to when it ends
    (that job); `why`, what the queue's instances miss, when some are passed over."""

    never: set[str] = field(default_factory=set)
    short: set[str] = field(default_factory=set)
    until: dict[str, str] = field(default_factory=dict)
    why: str | None = None


def queue_consumable_fit(req: Req, p: Partition, hosts: list[str], nodes: list[Node],
                         snap: SiteSnapshot, now: datetime, part_max: dict[str, float]
                         ) -> QueueFit:
    """The hosts of queue `p` whose queue instance holds what the job asks of each of
    its consumables (sge_queue_conf(5): the quota is for all the jobs of the instance;
    what the running ones took is not left). Per slot times the job's slots on the host,
    once where the complex is JOB or HOST; a JOB one of a job of several hosts binds one
    host only (its master's). An instance without the complex holds it where its host
    (hc:) or the cluster (gc:) offers it instead, or where the job only takes its
    default."""
    total = p.queue_consumables or {}
    left = p.queue_consumables_left or {}
    held = p.queue_consumables_held or {}
    by_host = {n.name: n for n in nodes}
    elsewhere = set(snap.global_consumables_total or {})
    running = {j.native_id: j for j in snap.running}
    others = {name: q.name for q in snap.partitions if q.name != p.name
              for have in (q.queue_consumables or {}).values() for name in have}
    fit = QueueFit()
    misses: list[str] = []
    for name, per_slot in req.consumables:
        need = req.consumable_need(name, per_slot)

        def offered(h: str, name: str = name) -> bool:
            n = by_host.get(h)
            return name in total.get(h, {}) or name in elsewhere or name in req.implicit \
                or (n is not None and name in (n.consumables_total or {}))

        if not any(name in total.get(h, {}) for h in hosts):
            # not one of this queue's: where it is another queue's alone (no host or the
            # cluster offers it), no instance of this one gives it (Grid Engine: a job
            # asks an attribute the instance does not have)
            if name in others and not any(offered(h) for h in hosts):
                fit.never |= set(hosts)
                misses.append(f"offers no {name} (a queue consumable of {others[name]})")
            continue

        enough = {h for h in hosts if total.get(h, {}).get(name, float("inf")) >= need
                  and offered(h)}
        most = max(total[h][name] for h in hosts if name in total.get(h, {}))
        how = "once a job" if name in req.job_wide else \
            f"{req.cpn} slots x {amount_text(per_slot)}"
        if req.on_master_only(name):  # one host of the job holds it, its master's
            if not enough:
                fit.never |= set(hosts)
                misses.append(f"needs {amount_text(need)} of queue consumable {name} in "
                              f"its master's instance (once a job), the most an instance "
                              f"has is {amount_text(most)}")
            elif not any(left.get(h, {}).get(name, need) >= need for h in enough):
                fit.short |= enough
                fit.until |= _freed(name, need, enough, left, held, running, now, part_max)
            continue
        if lacking := set(hosts) - enough:
            fit.never |= lacking
            misses.append(f"needs {amount_text(need)} of queue consumable {name} per queue "
                          f"instance ({how}), the most an instance has is "
                          f"{amount_text(most)}")
        short = {h for h in enough if left.get(h, {}).get(name, need) < need}
        fit.short |= short
        fit.until |= _freed(name, need, short, left, held, running, now, part_max)
    if misses:
        fit.why = f"queue {p.name}: " + "; ".join(misses)
    return fit


def _freed(name: str, need: float, hosts: set[str], left: dict[str, dict[str, float]],
           held: dict[str, dict[str, dict[str, float]]], running: dict, now: datetime,
           part_max: dict[str, float]) -> dict[str, str]:
    """For each host of `hosts` (its queue instance short of `name` now), the running job
    there whose end (by its time limit) gives back enough, the ones ending first first
    (a host whose known jobs do not free enough is left out: held until its last job
    ends)."""
    out: dict[str, str] = {}
    for h in hosts:
        ends = sorted((end, jid, got[name]) for jid, got in held.get(h, {}).items()
                      if got.get(name) and jid in running
                      and (end := expected_end(running[jid], now, part_max)) is not None)
        have = left.get(h, {}).get(name, 0.0)
        for _, jid, given in ends:
            have += given
            if have >= need:
                out[h] = jid
                break
    return out
