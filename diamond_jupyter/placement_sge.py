"""Grid Engine placement pieces: queue consumables (a queue's `complex_values`, qc:) per
queue instance, a parallel job whose master task `-masterq` binds to some queues while
its other slots go to any queue that offers its parallel environment, and the slots laid
out on hosts as the PE's allocation_rule says.

Pure: snapshot and request in, host sets and reasons out.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from datetime import datetime

from diamond_jupyter.wording import agree, quantity

from .digits import ascii_digits
from .model import JobSpec, Node, Partition, SiteSnapshot
from .placement_fit import Req, _few, amount_text, expected_end


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
    default. The job's memory and GPUs are checked so too, as `-l h_vmem` (per slot, or
    once where the complex says JOB or HOST) and `-l gpu` (once, or per slot where the
    complex says YES); h_vmem is a limit of every queue besides (queue_conf(5)): a queue
    without the consumable is no queue the job cannot run in."""
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
    for name, per_slot in req.consumables + req.own:
        need = req.consumable_need(name, per_slot)

        def offered(h: str, name: str = name) -> bool:
            n = by_host.get(h)
            return name in total.get(h, {}) or name in elsewhere or name in req.implicit \
                or (n is not None and name in (n.consumables_total or {}))

        if not any(name in total.get(h, {}) for h in hosts):
            # not one of this queue's: where it is another queue's alone (no host or the
            # cluster offers it), no instance of this one gives it (Grid Engine: a job
            # asks an attribute the instance does not have)
            if name in others and name != "h_vmem" and not any(offered(h) for h in hosts):
                fit.never |= set(hosts)
                misses.append(f"offers no {name} (a queue consumable of {others[name]})")
            continue

        enough = {h for h in hosts if total.get(h, {}).get(name, float("inf")) >= need
                  and offered(h)}
        most = max(total[h][name] for h in hosts if name in total.get(h, {}))
        how = "once a job" if name in req.job_wide else \
            f"{quantity(req.cpn, 'slot')} x {amount_text(per_slot)}"
        if req.on_master_only(name):  # one host of the job holds it, its master's
            if not enough:
                fit.never |= set(hosts)
                misses.append(f"needs {amount_text(need)} of queue consumable {name} in "
                              f"its master's instance (once a job), the most an instance "
                              f"has is {amount_text(most)}")
            elif not any(left.get(h, {}).get(name, need) >= need for h in enough):
                fit.short |= enough
                _later(fit.until, _freed(name, need, enough, left, held, running, now,
                                         part_max), running, now, part_max)
            continue
        if lacking := set(hosts) - enough:
            fit.never |= lacking
            few = sorted(lacking)[:4]
            where = f"the most an instance has is {amount_text(most)}" if most < need else \
                "too little on " + ", ".join(
                    f"{h} ({amount_text(total[h][name]) if name in total.get(h, {}) else 'none'})"
                    for h in few) + (f" and {len(lacking) - len(few)} more"
                                     if len(lacking) > len(few) else "")
            misses.append(f"needs {amount_text(need)} of queue consumable {name} per queue "
                          f"instance ({how}), {where}")
        short = {h for h in enough if left.get(h, {}).get(name, need) < need}
        fit.short |= short
        _later(fit.until, _freed(name, need, short, left, held, running, now, part_max),
               running, now, part_max)
    if misses:
        fit.why = f"queue {p.name}: " + "; ".join(misses)
    return fit


def instance_slots_short(fit: QueueFit, req: Req, p: Partition, hosts: list[str],
                         snap: SiteSnapshot, now: datetime, part_max: dict[str, float]
                         ) -> QueueFit:
    """`fit` with the hosts of queue `p` whose instance has fewer slots free now (its
    slots_total less what is used and reserved there, `qstat -f`) than the job takes on a
    host, though it has that many in all: Grid Engine starts it there only once the
    running jobs of that instance give enough back (the free slots of the host's other
    queue instances are not this queue's; the host's own `slots` complex is the node's
    CPUs, checked besides). `until`: the running job there whose end frees enough."""
    total, taken = p.instance_slots or {}, p.instance_slots_taken or {}
    need = max(req.cpn, 1)
    short = {h for h in hosts if h in total and total[h] >= need
             and total[h] - taken.get(h, 0) < need}
    if not short:
        return fit
    left = {h: {"slots": float(total[h] - taken.get(h, 0))} for h in short}
    held = {h: {jid: {"slots": float(n)} for jid, n in jobs.items()}
            for h, jobs in (p.instance_slots_held or {}).items() if h in short}
    # slots no running job it lists holds (slots_resv: an advance reservation's, whose
    # end the view does not give): where they leave too few even once those jobs end,
    # the host is passed over while another host of the queue may run the job
    at_most = {h: left[h]["slots"] + sum(x["slots"] for x in held.get(h, {}).values())
               for h in short}
    stuck = {h for h in short if at_most[h] < need}
    if stuck and set(hosts) - stuck - fit.never:
        fit.never |= stuck
        said = f"queue {p.name}: its instance on " + ", ".join(
            f"{h} ({at_most[h]:g} of {quantity(total[h], 'slot')} free once its running jobs end, "
            "the others reserved)" for h in sorted(stuck)[:4]) + \
            f" holds fewer than the job's {need}"
        fit.why = "; ".join(filter(None, (fit.why, said)))
        short -= stuck
    running = {j.native_id: j for j in snap.running}
    fit.short |= short
    _later(fit.until, _freed("slots", need, short, left, held, running, now, part_max),
           running, now, part_max)
    return fit


def _later(until: dict[str, str], more: dict[str, str], running: dict, now: datetime,
           part_max: dict[str, float]) -> None:
    """`more` into `until`: of two jobs a host waits for (two consumables short there),
    the one that ends later."""
    for h, jid in more.items():
        if h not in until or (expected_end(running[jid], now, part_max) or 0.0) > (
                expected_end(running[until[h]], now, part_max) or 0.0):
            until[h] = jid


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


def pe_offered(pe: str, offered: list[str]) -> bool:
    """Whether a PE request (Grid Engine takes a wildcard: `-pe mpi* 8`) names one of
    `offered`."""
    return any(fnmatch.fnmatchcase(name, pe) for name in offered)


@dataclass
class MasterPlan:
    """Where a parallel job bound by `-masterq` is placed: `parts`, the queues evaluated
    (one of them made of several: its master queues and the other queues its other slots
    may use); `members`, the hosts of such a made queue; `master_hosts`, the hosts its
    master task may run on (None: any of the queue's); `note`, said with the placement;
    `why`, why it cannot run here."""

    parts: list[Partition]
    members: dict[str, list[str]] = field(default_factory=dict)
    master_hosts: set[str] | None = None
    note: str | None = None
    why: str | None = None


def master_and_slaves(items: list[str], master_queues: list[str], parts: list[Partition],
                      members: dict[str, list[str]], pe: str | None, req: Req,
                      named: str | None) -> MasterPlan:
    """A parallel job's queues under `-masterq` (qsub(1), sge_select_queue: the master
    task's queue instance must match it; every queue instance the job gets, the master's
    too, must be in its hard `-q` list where it gives one and offer its PE). A job of one
    host runs in a master queue; one of several has its master task in a master queue and
    its other slots in any queue that offers its PE (placed as one queue of them all, the
    master's host among its hosts). `parts`: the queues it may use (those `-q` names)."""
    masters = [p for p in parts if p.name in master_queues]
    said = ",".join(items)
    if not masters:  # every slot within -q, the master's too
        return MasterPlan(parts, why=f"-masterq {said}: none of its queues "
                          f"({', '.join(master_queues)}) is in the job's -q list ({named}): "
                          "Grid Engine puts every slot, the master task's too, in a queue "
                          "-q names")
    if req.nodes <= 1 or pe is None:
        return MasterPlan(masters, note=f"-masterq {said}: placed in "
                          f"{', '.join(p.name for p in masters)}, where its master task "
                          "must run")

    def takes(p: Partition) -> bool:
        return p.state.upper() in ("UP", "OPEN", "ACTIVE") and (
            p.parallel_environments is None or pe_offered(pe, p.parallel_environments)) \
            and (not req.walltime or not p.max_time_s or p.max_time_s >= req.walltime)

    slaves = [p for p in parts if p not in masters and takes(p)]
    hosts = _master_hosts(items, masters, members)
    if not slaves or not any(takes(p) for p in masters):
        return MasterPlan(masters, master_hosts=hosts, note=f"-masterq {said}: placed in "
                          f"{', '.join(p.name for p in masters)}, where its master task "
                          f"must run (no other queue here offers parallel environment "
                          f"'{pe}' for its other slots)")
    every = [p for p in masters if takes(p)] + slaves
    name = ",".join(p.name for p in every)
    union = list(dict.fromkeys(h for p in every for h in members.get(p.name, [])))
    limits = [p.max_time_s for p in every if p.max_time_s]
    soft = [p.soft_time_s for p in every if p.soft_time_s is not None]
    made = every[0].model_copy(update={
        "name": name, "default": False, "nodes": union, "total_nodes": len(union),
        "total_cpus": sum(p.total_cpus for p in every),
        "max_time_s": min(limits) if limits else None,
        "soft_time_s": min(soft) if soft else None,
        "parallel_environments": None,
        **_merged_consumables(every)})
    return MasterPlan([made], {name: union}, hosts, note=(
        f"-masterq {said}: its master task in {', '.join(p.name for p in masters)} "
        f"(on {_listed(hosts)}), its other slots in any of {', '.join(p.name for p in every)}"
        f" (the queues offering parallel environment '{pe}'"
        + (" that -q names" if named else "") + "): submitted with -q " + name))


def _master_hosts(items: list[str], masters: list[Partition],
                  members: dict[str, list[str]]) -> set[str]:
    """The hosts of the master queues' instances `-masterq`'s items match (`queue`,
    `queue@host`, wildcards; a `@@hostgroup` item: every host of the queue)."""
    out: set[str] = set()
    for item in items:
        queue, _, host = item.partition("@")
        for p in masters:
            if fnmatch.fnmatchcase(p.name, queue or "*"):
                out |= {h for h in members.get(p.name, []) if not host
                        or host.startswith("@") or fnmatch.fnmatchcase(h, host)}
    return out


def _merged_consumables(queues: list[Partition]) -> dict:
    """The queue consumables of queues placed as one: on each host, of each complex, the
    most any of their instances there has (and has left); and their instances' slots, in
    use and held on each host, added up (a job's slots there come from all of them)."""
    total: dict[str, dict[str, float]] = {}
    left: dict[str, dict[str, float]] = {}
    held: dict[str, dict[str, dict[str, float]]] = {}
    for p in queues:
        for h, have in (p.queue_consumables or {}).items():
            for k, x in have.items():
                total.setdefault(h, {})[k] = max(total.get(h, {}).get(k, 0.0), x)
                got = (p.queue_consumables_left or {}).get(h, {}).get(k, x)
                left.setdefault(h, {})[k] = max(left.get(h, {}).get(k, 0.0), got)
        for h, jobs in (p.queue_consumables_held or {}).items():
            held.setdefault(h, {}).update(jobs)
    slots: dict[str, int] = {}
    taken: dict[str, int] = {}
    holding: dict[str, dict[str, int]] = {}
    for p in queues:
        for h, n in (p.instance_slots or {}).items():
            slots[h] = slots.get(h, 0) + n
            taken[h] = taken.get(h, 0) + (p.instance_slots_taken or {}).get(h, 0)
        for h, jobs in (p.instance_slots_held or {}).items():
            mine = holding.setdefault(h, {})
            for jid, n in jobs.items():
                mine[jid] = mine.get(jid, 0) + n
    return {"queue_consumables": total or None, "queue_consumables_left": left or None,
            "queue_consumables_held": held or None, "instance_slots": slots or None,
            "instance_slots_taken": taken or None, "instance_slots_held": holding or None}


def _listed(hosts: set[str] | None, at_most: int = 4) -> str:
    names = sorted(hosts or ())
    return ", ".join(names[:at_most]) + (f" and {len(names) - at_most} more"
                                         if len(names) > at_most else "")


def master_holding(req: Req, hosts: set[str], nodes: list[Node]) -> tuple[set[str], list[str]]:
    """Of a `-masterq` job's master hosts, those whose host consumables (hc:) hold what it
    asks once a job (JOB: taken on the master task's host alone), and why none does."""
    if req.nodes <= 1:
        return hosts, []
    by_name = {n.name: n for n in nodes}
    out, why = set(hosts), []
    for name, amount in req.host_consumables():
        if not req.on_master_only(name):
            continue
        offered = [n for n in nodes if name in (n.consumables_total or {})]
        if not offered:
            continue  # not a host consumable here
        absent = float("inf") if name in req.implicit else 0.0
        out = {h for h in out if h in by_name
               and (by_name[h].consumables_total or {}).get(name, absent) >= amount}
        if not out:
            most = max((by_name[h].consumables_total or {}).get(name, 0.0)
                       for h in hosts if h in by_name) if hosts else 0.0
            why.append(f"-masterq: its master task's host takes {amount_text(amount)} of host "
                       f"consumable {name} (once a job), the most a host of its master "
                       f"queue has is {amount_text(most)}")
            break
    return out, why


@dataclass
class SlotPlan:
    """Where a Grid Engine parallel job's slots on a host come from: `parts`, the queues
    evaluated (a queue whose instances alone hold too few slots on every host replaced by
    one made with the other queues there that take the job); `members`, the hosts of a
    made queue; `short`, by queue, the hosts whose instances hold too few slots even
    together; `why`, by queue, said when none of its hosts holds them; `notes`."""

    parts: list[Partition]
    members: dict[str, list[str]] = field(default_factory=dict)
    short: dict[str, set[str]] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _closed_said(p: Partition, open_hosts: list[str], need: int) -> str:
    """What a queue's closed instances (disabled, suspended or in error: by an admin or
    the queue's calendar) that would hold `need` slots on their host add to its refusal."""
    closed = sorted(h for h, slots in (p.instance_slots or {}).items()
                    if h not in open_hosts and slots >= need)
    if not closed:
        return ""
    return (f"; its instance{'s' if len(closed) > 1 else ''} on {', '.join(closed)} "
            f"{'hold' if len(closed) > 1 else 'holds'} enough but "
            f"{'take' if len(closed) > 1 else 'takes'} no job while disabled, suspended or "
            "in error (by an administrator or the queue's calendar): the job fits there once "
            "it is open again")


def instance_slots(parts: list[Partition], members: dict[str, list[str]], pe: str,
                   req: Req) -> SlotPlan:
    """A parallel job's slots on a host as Grid Engine finds them: in the host's instances
    of every queue the job may use (its `-q` list, else any) that offers its PE, is open
    and holds its h_rt, added up (qstat shows its MASTER in one and SLAVEs in the others).
    A queue whose own instance of no host holds the job's slots there is placed joined
    with those other queues (and submitted with -q naming them all)."""
    def takes(q: Partition) -> bool:
        return q.state.upper() in ("UP", "OPEN", "ACTIVE") and (
            q.parallel_environments is None or pe_offered(pe, q.parallel_environments)) \
            and (not req.walltime or not q.max_time_s or q.max_time_s >= req.walltime)

    need = req.cpn
    plan = SlotPlan(list(parts))
    for n, p in enumerate(parts):
        own = p.instance_slots
        if not own or not takes(p):
            continue
        hosts = [h for h in members.get(p.name, []) if h in own]
        if any(own[h] >= need for h in hosts):
            plan.short[p.name] = {h for h in hosts if own[h] < need}
            continue
        others = [q for q in parts if q is not p and q.instance_slots and takes(q)]
        together = {h: own[h] + sum((q.instance_slots or {}).get(h, 0) for q in others
                                    if h in members.get(q.name, [])) for h in hosts}
        joined = [h for h in hosts if together[h] >= need]
        if not joined:
            plan.short[p.name] = set(hosts)
            plan.why[p.name] = (
                f"queue {p.name}: needs {quantity(need, 'slot')} on a host, its "
                f"{'open ' if _closed_said(p, hosts, need) else ''}instances have at "
                f"most {max(own[h] for h in hosts)}" + (
                    f" ({max(together.values())} with the instances there of "
                    f"{', '.join(q.name for q in others)}, which offer parallel environment "
                    f"'{pe}' too)" if others and hosts else "") + _closed_said(p, hosts, need))
            continue
        used = [q for q in others if any(h in members.get(q.name, []) for h in joined)]
        name = ",".join([p.name] + [q.name for q in used])
        merged = _merged_consumables([p] + used)
        made = p.model_copy(update={
            "name": name, "default": False, "nodes": joined, "total_nodes": len(joined),
            **merged, "instance_slots": {h: together[h] for h in joined}})
        plan.parts[n] = made
        plan.members[name] = joined
        h = joined[0]
        plan.notes.append(
            f"queue {p.name}: no instance of it has {quantity(need, 'slot')}; Grid Engine takes a "
            f"parallel job's slots on a host from every queue instance there that offers "
            f"parallel environment '{pe}' (on {h}: "
            + " + ".join(f"{q.name} {(q.instance_slots or {}).get(h, 0)}"
                         for q in [p] + used if h in members.get(q.name, []))
            + f"): submitted with -q {name}")
    return plan


def _pe_rule(pe: str, rules: dict[str, str] | None) -> str | None:
    """The allocation_rule of the PE a job asks (a wildcard: of the first it names)."""
    return next((r for name, r in (rules or {}).items() if fnmatch.fnmatchcase(name, pe)),
                None)


def _by_pe_rule(spec: JobSpec, pe: str, rule: str) -> tuple[JobSpec, str | None]:
    """A Grid Engine job's slots laid out as its PE's allocation_rule says (sge_pe(5)):
    `$pe_slots` all on one host, `$fill_up` / `$round_robin` over as many hosts as they
    need, a number N exactly N on each host (a slot count that is no multiple of N never
    starts: the reason); the PE's name no longer decides it."""
    r = spec.resources
    slots = (r.tasks or 1) * (r.cpus_per_task or 1) if r.tasks else \
        (r.nodes or 1) * (r.cpus_per_task or 1)
    if rule == "$pe_slots":
        new = dict(nodes=1, tasks=None, tasks_per_node=None, cpus_per_task=slots)
    elif rule in ("$fill_up", "$round_robin"):
        new = dict(nodes=None, tasks=slots, tasks_per_node=None, cpus_per_task=None)
    elif ascii_digits(rule) and int(rule) > 0:
        each = int(rule)
        if slots % each:
            return spec, (f"parallel environment '{pe}' puts {quantity(each, 'slot')} on every "
                          f"host (allocation_rule {each}): {quantity(slots, 'slot')} "
                          f"{agree(slots)} no multiple of it")
        new = dict(nodes=slots // each, tasks=slots, tasks_per_node=each, cpus_per_task=None)
    else:
        return spec, None
    if r.memory_per_cpu_mb is None and r.memory_mb and r.cpus_per_task:
        # memory was per host of one task's slots: keep it per slot
        new["memory_per_cpu_mb"], new["memory_mb"] = -(-r.memory_mb // r.cpus_per_task), None
    return spec.model_copy(update={"resources": r.model_copy(update=new)}), None


def _master_queues(spec: JobSpec) -> list[str]:
    """The queues a Grid Engine job's hard `-masterq` names (wc_queue_list, sge_types(1)):
    `queue`, `queue@host`, `queue@@hostgroup`, `*@host`, wildcards."""
    return [q.strip() for d in spec.unknown if d.dialect == "sge" and d.option == "-masterq"
            and d.value for q in d.value.split(",") if q.strip()]


def _sge_master(master: list[str], parts: list[Partition], members: dict[str, list[str]]
                ) -> tuple[list[str], str | None]:
    """The cluster queues where a job's master task may run (`-masterq`: each item's queue
    part, on a host of that queue where it names one), or why none here can hold it: qsub
    refuses a job that asks an unknown queue."""
    found: list[str] = []
    for item in master:
        queue, _, host = item.partition("@")
        for p in parts:
            if p.routes_to is None and fnmatch.fnmatchcase(p.name, queue or "*") and (
                    not host or host.startswith("@") or any(
                        fnmatch.fnmatchcase(h, host) for h in members.get(p.name, []))):
                found.append(p.name)
    found = list(dict.fromkeys(found))
    if found:
        return found, None
    return [], (f"-masterq {','.join(master)}: no queue instance here matches it (the "
                "master task of a parallel job must run in one; queues: "
                + "; ".join(f"{p.name} on {_few(set(members.get(p.name, [])))}" for p in parts
                            if p.routes_to is None)
                + ")")
