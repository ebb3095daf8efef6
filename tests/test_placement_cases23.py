"""Placement cases worked by hand, twenty-third sweep, on the schedulers other than Slurm,
each site read from what its own commands print: kestrel, PBS Pro (`qstat -Q -f -F json`:
a queue's resources_min, a stopped queue, a routing queue past a disabled destination,
max_run_res of GPUs per user, the server's own max_run_res) and wren, Torque (a queue's
resources_max.nodes); ibis, LSF (`bqueues -l`: run and dispatch windows, PJOB_LIMIT,
HJOB_LIMIT, UJOB_LIMIT, a closed queue); egret, Grid Engine (slots per queue instance,
instances closed by the queue's calendar); finch, flux (`flux queue list` limits, a
disabled queue, node properties). Each case asserts the decision and what a user reads."""

from __future__ import annotations

import json
from datetime import timezone

import pytest
from test_placement_cases import NOW, has_note, hours, only, reasons, run
from test_placement_cases5 import _pe
from test_placement_cases6 import KESTREL_QUEUES, _pbs_job, _qhost_host, kestrel
from test_placement_cases7 import wren

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.sge_commands import SgeCommands

# ---- PBS Pro: kestrel's queues (k1-k4 64 CPUs; k5-k6 64 CPUs and 4 A100) and more --------

_OPEN = {"queue_type": "Execution", "enabled": "True", "started": "True"}
QUEUES = {
    **KESTREL_QUEUES,
    # wide: whole-node jobs only (resources_min.ncpus 64)
    "wide": {**_OPEN, "resources_min": {"ncpus": 64}, "resources_max": {"walltime": "12:00:00"}},
    # stopped: enabled (qsub takes jobs) but not started (none runs)
    "stopped": {**_OPEN, "started": "False", "resources_max": {"walltime": "12:00:00"}},
    # closed: disabled (qsub refuses), though started
    "closed": {**_OPEN, "enabled": "False", "resources_max": {"walltime": "12:00:00"}},
    "route2": {"queue_type": "Route", "enabled": "True", "started": "True",
               "route_destinations": "closed,big"},
    # gpuu: 4 GPUs of a user's running jobs
    "gpuu": {**_OPEN, "resources_max": {"walltime": "24:00:00"},
             "max_run_res": {"ngpus": "[u:PBS_GENERIC=4]"}},
}
PBS_4 = "#PBS -l select=1:ncpus=4\n#PBS -l walltime=1:00:00"


def pbs(queue: str, chunk: str = "ncpus=4") -> str:
    return f"#PBS -q {queue}\n#PBS -l select=1:{chunk}\n#PBS -l walltime=1:00:00"


def test_pbs_a_job_below_a_queues_resources_min_is_refused_naming_it():
    p = run(pbs("wide"), kestrel(queues=QUEUES))
    assert reasons(p, "kestrel") == \
        "needs 4 ncpus in all, queue wide takes only jobs of at least 64"


def test_pbs_a_whole_node_job_meets_resources_min():
    v = only(run(pbs("wide", "ncpus=64"), kestrel(queues=QUEUES)), "kestrel", "wide")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_pbs_a_queue_not_started_runs_nothing_and_says_so():
    p = run(pbs("stopped"), kestrel(queues=QUEUES))
    assert reasons(p, "kestrel") == "queue 'stopped' is not started: takes jobs, runs none " \
                                    "until started"


def test_pbs_a_routing_queue_passes_a_disabled_destination_by():
    v = only(run(pbs("route2"), kestrel(queues=QUEUES)), "kestrel", "big")
    assert v.estimated_start == NOW
    assert has_note(v, "routing queue route2 sends it to big (the first of closed, big "
                       "that takes it)"), v.notes


def test_pbs_max_run_res_ngpus_per_user_waits_for_the_users_gpu_job():
    # alice's job in gpuu holds 3 GPUs until +3 h; 2 more pass her 4: it waits; 1 does not
    site = kestrel(_pbs_job("1", "alice", "gpuu", 8, host="k5", ngpus=3), queues=QUEUES)
    v = run(pbs("gpuu", "ncpus=8:ngpus=2"), site).verdict("kestrel")
    assert (v.verdict, v.partition, v.estimated_start) == ("BUSY", "gpuu", hours(3))
    assert v.waits_for == ["queue gpuu's max_run_res.ngpus [u:PBS_GENERIC=4]: your running "
                           "jobs in it hold 3 GPUs: it waits until enough of them end"]
    assert run(pbs("gpuu", "ncpus=8:ngpus=1"), site).verdict("kestrel").estimated_start == NOW


def test_pbs_more_gpus_than_max_run_res_allows_never_run_there():
    p = run("#PBS -q gpuu\n#PBS -l select=2:ncpus=8:ngpus=3\n#PBS -l walltime=1:00:00",
            kestrel(queues=QUEUES))
    assert not p.verdict("kestrel").feasible
    assert "max_run_res.ngpus [u:PBS_GENERIC=4] allows less running at once" in \
        reasons(p, "kestrel")


def test_pbs_the_servers_max_run_res_counts_the_users_jobs_in_every_queue():
    # alice runs 64 CPUs in workq (to +3 h); the server's 80 a user leaves 16: 32 in big wait
    site = kestrel(_pbs_job("1", "alice", "workq", 64, host="k1"),
                   server={"max_run_res": {"ncpus": "[u:PBS_GENERIC=80]"}})
    v = run(pbs("big", "ncpus=32"), site).verdict("kestrel")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))
    assert v.waits_for == ["the server's max_run_res.ncpus [u:PBS_GENERIC=80]: your running "
                           "jobs on it hold 64 CPUs: it waits until enough of them end"]
    assert run(pbs("big", "ncpus=16"), site).verdict("kestrel").estimated_start == NOW


def test_torque_a_queues_resources_max_nodes_refuses_three_nodes():
    p = run("#PBS -q batch\n#PBS -l nodes=3:ppn=4\n#PBS -l walltime=1:00:00", wren())
    assert reasons(p, "wren") == "needs 3 nodes, queue batch allows at most 2"


# ---- LSF: ibis, i1-i4 of 32 slots; queues from `bqueues -l` ---------------------------------

_HEAD = ("PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV "
         "PJOBS\n")


def _bqueue(name: str, status: str, jl_u: str = "-", jl_p: str = "-", jl_h: str = "-",
            extra: str = "") -> str:
    """One queue as `bqueues -l` prints it."""
    return (f"QUEUE: {name}\n  -- {name}\n\nPARAMETERS/STATISTICS\n{_HEAD}"
            f" 30   20  {status:<16}-  {jl_u:>4} {jl_p:>4} {jl_h:>4}     0     0     0     0"
            f"     0    0     0\n{extra}\n")


# normal (the default), night (runs 20:00-08:00), weekend (dispatches Sat 18:00 to Sun
# 06:00), half (PJOB_LIMIT 0.5), perhost (HJOB_LIMIT 8), peruser (UJOB_LIMIT 8), shut
LSF_QUEUES = (("normal", "Open:Active"),
              ("night", "Open:Inact_Win", "-", "-", "-", "RUN_WINDOWS:  20:00-08:00\n"),
              ("weekend", "Open:Inact_Win", "-", "-", "-",
               "DISPATCH_WINDOW:  (6:18:00-0:06:00 )\n"),
              ("half", "Open:Active", "-", "0.5"), ("perhost", "Open:Active", "-", "-", "8"),
              ("peruser", "Open:Active", "8"), ("shut", "Closed:Active"))


def _bjob(jid: str, user: str, queue: str, slots: int, host: str, left_h: float) -> dict:
    def t(h: float) -> str:
        return hours(h).strftime("%b %d %H:%M:%S %Y")
    return {"JOBID": jid, "STAT": "RUN", "USER": user, "QUEUE": queue, "JOB_NAME": f"j{jid}",
            "SUBMIT_TIME": t(left_h - 5), "START_TIME": t(left_h - 4), "SLOTS": str(slots),
            "EXEC_HOST": host, "RUNTIMELIMIT": f"240.0/{host}"}


def ibis(*jobs: dict):
    """ibis read from `bhosts`, `lshosts`, `bqueues -json` and `bqueues -l` (NOW is a
    Sunday, 09:00 the cluster's time)."""
    used: dict[str, int] = {}
    for j in jobs:
        used[j["EXEC_HOST"]] = used.get(j["EXEC_HOST"], 0) + int(j["SLOTS"])
    hosts = {"RECORDS": [{"HOST_NAME": f"i{i}", "STATUS": "ok", "MAX": "32",
                          "NJOBS": str(used.get(f"i{i}", 0)), "RUN": str(used.get(f"i{i}", 0))}
                         for i in range(1, 5)]}
    lshosts = {"RECORDS": [{"HOST_NAME": f"i{i}", "type": "X86_64", "model": "EPYC",
                            "ncpus": "32", "maxmem": "256G", "RESOURCES": ""}
                           for i in range(1, 5)]}
    queues = {"RECORDS": [{"QUEUE_NAME": q[0], "STATUS": q[1], "MAX": "-",
                           "RUNLIMIT": "1440.0 min"} for q in LSF_QUEUES]}
    out = {"hosts": json.dumps(hosts), "lshosts": json.dumps(lshosts),
           "queues": json.dumps(queues), "queue": json.dumps({"RECORDS": list(jobs)}),
           "user": "alice\n", "queue_long": "".join(_bqueue(*q) for q in LSF_QUEUES)}
    snap = LsfCommands(tz=timezone.utc, now=lambda: NOW).parse_snapshot("ibis", out)
    snap = snap.model_copy(update={"taken_at": NOW})
    snap.partitions[0].default = True
    return SiteConfig(name="ibis", scheduler="lsf"), snap


def lsf(queue: str | None, n: int, span: bool = False) -> str:
    return ((f"#BSUB -q {queue}\n" if queue else "") + f"#BSUB -n {n}\n#BSUB -W 1:00"
            + ('\n#BSUB -R "span[hosts=1]"' if span else ""))


def test_lsf_a_queue_outside_its_run_window_takes_the_job_for_when_it_opens():
    """Sunday 09:00: night runs from 20:00, +11 h; said once, the queue named once (before:
    'queue night: queue night dispatches ...')."""
    v = run(lsf("night", 4), ibis()).verdict("ibis")
    assert (v.verdict, v.partition, v.estimated_start) == ("BUSY", "night", hours(11))
    why = ("queue night dispatches no job outside its run and dispatch windows "
           "(Open:Inact_Win): LSF dispatches it once they open, Sun 20:00 the cluster's time")
    assert v.waits_for == [why] and v.notes == [why], v.notes


def test_lsf_a_dispatch_window_of_the_weekend_opens_next_saturday():
    v = run(lsf("weekend", 4), ibis()).verdict("ibis")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(6 * 24 + 9))
    assert has_note(v, "LSF dispatches it once they open, Sat 18:00 the cluster's time")


def test_lsf_naming_no_queue_the_job_goes_to_the_default_open_one():
    v = run(lsf(None, 4), ibis()).verdict("ibis")
    assert (v.verdict, v.partition, v.estimated_start) == ("READY", "normal", NOW)


@pytest.mark.parametrize("n, fits", [(16, True), (20, False)])
def test_lsf_pjob_limit_half_a_slot_a_processor(n, fits):
    p = run(lsf("half", n, span=True), ibis())
    if fits:
        assert only(p, "ibis", "half").estimated_start == NOW
    else:
        assert reasons(p, "ibis") == (
            "needs 1 host, queue half has 0 its host limits let it use (needs 20 slots on a "
            "host, queue half's PJOB_LIMIT (JL/P) 0.5 allows 16 slots on i1 (0.5 x its 32 "
            "CPUs))")


def test_lsf_a_closed_queue_refuses_the_job():
    assert reasons(run(lsf("shut", 4), ibis()), "ibis") == "queue 'shut' is CLOSED"


def test_lsf_hjob_limit_refuses_more_than_its_slots_on_one_host():
    assert reasons(run(lsf("perhost", 16, span=True), ibis()), "ibis") == \
        "queue perhost: needs 16 slots per host, its HJOB_LIMIT (JL/H) is 8"


def test_lsf_ujob_limit_counts_only_the_users_own_slots():
    # bob's 8 slots in peruser do not count against alice's 8
    v = run(lsf("peruser", 8), ibis(_bjob("1", "bob", "peruser", 8, "i1", 2))).verdict("ibis")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    # alice's own 4 (to +2 h) do: 8 more wait for them
    v = run(lsf("peruser", 8), ibis(_bjob("2", "alice", "peruser", 4, "i1", 2))).verdict("ibis")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    assert has_note(v, "queue peruser's JL/U is 8 slots and your running jobs in it hold 4")


# ---- Grid Engine: egret, s1 and s2 of 32 cores; all.q's slots 32, [s1=8] --------------------

ALL_Q = ("qname all.q\nhostlist @allhosts\nslots 32,[s1=8]\npe_list smp\nh_rt INFINITY\n"
         "h_vmem INFINITY\n")


def egret(states: dict[str, str] | None = None):
    """egret read from `qhost -F -q -xml`, `qstat -f -xml` and `qconf -sq all.q`: the
    instance all.q@s1 has 8 slots, all.q@s2 32; `states`: an instance's qstat state."""
    states = states or {}
    slots = {"s1": 8, "s2": 32}
    qhost = ("<?xml version='1.0'?><qhost>" + _qhost_host("s1", None, None)
             + _qhost_host("s2", None, None) + "</qhost>")
    qstat = ("<?xml version='1.0'?><job_info><queue_info>" + "".join(
        f"<Queue-List><name>all.q@{h}</name><qtype>BIP</qtype><slots_used>0</slots_used>"
        f"<slots_resv>0</slots_resv><slots_total>{slots[h]}</slots_total><arch>lx-amd64"
        "</arch>" + (f"<state>{states[h]}</state>" if h in states else "") + "</Queue-List>"
        for h in ("s1", "s2")) + "</queue_info><job_info></job_info></job_info>")
    out = {"hosts": qhost, "queue": qstat, "pes": "smp\n", "pe_rules": _pe("smp", "$pe_slots"),
           "queues": ALL_Q}
    snap = SgeCommands().parse_snapshot("egret", out).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="egret", scheduler="sge"), snap


def test_grid_engine_slots_per_instance_send_a_wide_job_to_the_larger_one():
    assert egret()[1].partitions[0].instance_slots == {"s1": 8, "s2": 32}
    v = only(run("#$ -pe smp 16\n#$ -l h_rt=1:00:00", egret()), "egret", "all.q")
    assert v.estimated_start == NOW


@pytest.mark.parametrize("state", ["C", "D", "d"])
def test_grid_engine_an_instance_closed_by_its_calendar_is_named_in_the_refusal(state):
    """all.q@s2 suspended (C) or disabled (D) by its calendar, or by an admin (d): 16 slots
    fit no open instance. Before: 'its instances have at most 8', s2's 32 unsaid."""
    p = run("#$ -pe smp 16\n#$ -l h_rt=1:00:00", egret({"s2": state}))
    assert reasons(p, "egret") == (
        "queue all.q: needs 16 slots on a host, its open instances have at most 8; its "
        "instance on s2 holds enough but takes no job while disabled, suspended or in error "
        "(by an administrator or the queue's calendar): the job fits there once it is open "
        "again")


def test_grid_engine_a_job_the_open_instance_holds_runs_while_the_other_is_closed():
    v = only(run("#$ -pe smp 8\n#$ -l h_rt=1:00:00", egret({"s2": "C"})), "egret", "all.q")
    assert v.estimated_start == NOW


def test_grid_engine_more_slots_than_any_host_has():
    assert reasons(run("#$ -pe smp 40\n#$ -l h_rt=1:00:00", egret()), "egret") == \
        "needs 40 slots per host, largest host has 32"


# ---- flux: finch, f1-f2 64 cores (batch, amd), f3 64 cores (debug, amd) -----------------------

FLUX_QUEUES = ("QUEUE    EN ST TLIMIT     NNODES   NCORES NGPUS\n"
               "batch*   ✔  ✔  1d         0-inf    0-inf  0-inf\n"
               "debug    ✔  ✔  30m        0-1      0-inf  0-inf\n"
               "old      ✗  ✔  1h         0-inf    0-inf  0-inf\n")


def finch():
    """finch read from `flux resource list -n -o RESOURCE_FORMAT` and `flux queue list`."""
    res = "free|batch,amd|2|128|0|f[1-2]\nfree|debug,amd|1|64|0|f3\n"
    snap = FluxCommands().parse_snapshot("finch", {"resources": res, "queue": "",
                                                   "queues": FLUX_QUEUES})
    return SiteConfig(name="finch", scheduler="flux"), snap.model_copy(update={"taken_at": NOW})


@pytest.mark.parametrize("job, why", [
    ("#flux: -N 2 -n 2 -q debug -t 10m", "needs 2 nodes, queue debug allows at most 1"),
    ("#flux: -N 1 -n 1 -q debug -t 1h", "walltime 1:00:00 above queue debug TLIMIT 0:30:00"),
    ("#flux: -N 1 -n 1 -q old -t 10m", "queue 'old' is DOWN"),
    ("#flux: -N 1 -n 1 --requires=intel -t 10m",
     "missing feature 'intel' (site offers: amd, batch, debug)"),
])
def test_flux_queue_limits_and_properties_refuse_with_the_limit_named(job, why):
    assert reasons(run(job, finch()), "finch") == why


def test_flux_the_default_queue_takes_a_job_that_names_none():
    v = only(run("#flux: -N 1 -n 1 -c 32 --requires=amd -t 2h", finch()), "finch", "batch")
    assert v.estimated_start == NOW


@pytest.mark.parametrize("job, queue, nodes", [
    ("#flux: -N 1 -n 1 -q debug -t 10m", "debug", "f3"),
    ("#flux: -N 1 -n 1 -t 10m", "batch", "f1, f2"),  # the default queue
])
def test_flux_a_queue_named_as_a_property_of_some_nodes_says_its_nodes_were_not_read(
        job, queue, nodes):
    """flux queues usually require a property of their name, not shown by `flux queue
    list`: where `flux config get queues` was not read, every node is counted, and the
    user is told which nodes the queue may be held to (before: nothing said)."""
    v = run(job, finch()).verdict("finch")
    assert v.verdict == "READY"
    assert v.not_checked == [
        f"queue requires (`flux config get queues` was not run): which nodes queue {queue} "
        f"may use is not known; every node was counted, though only {nodes} have property "
        f"'{queue}': if the queue requires it, the job gets only those"], v.not_checked


def test_flux_a_queue_no_node_property_names_says_nothing_of_it():
    v = run("#flux: -N 1 -n 1 -q old -t 10m", finch()).verdict("finch")
    assert not v.feasible and v.not_checked == []
