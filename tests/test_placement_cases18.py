"""Placement cases worked by hand, eighteenth sweep: site states and jobs of selene (read
from its Slurm outputs, tests/test_placement_cases13.py) and hera
(tests/test_placement_cases.py) not met so far, each against what Slurm documents.

PreemptMode=SUSPEND,GANG under a higher PriorityTier: suspended jobs keep their memory
(Slurm's preemption page: "suspended jobs remain in memory"), so a job of the higher tier
finds their CPUs but not their memory; before, it started at once wherever REQUEUE would
have let it. Upcoming maintenance reservations met by a job that gives no time limit
(Slurm gives it the partition's DefaultTime, else its MaxTime; before, such a job was held
off every reserved node as one that never ends), by one that meets two reservations back
to back (before, it was said to start between them, into the second), and by one with
`--time-min` that fits before the reservation when its limit is lowered; each such wait now
names the reservation. And limits already right, kept so: a QOS GrpTRES of one GPU type,
DefMemPerCPU raising a job's memory past MaxMemPerNode, every node of a partition drained
but one, and GPUs of one type asked in all (`--gpus=v100:3`) or a node."""

from __future__ import annotations

from datetime import timedelta

import pytest
from test_placement_cases import NOW, hera, hours, reasons, run
from test_placement_cases13 import PARTITIONS, resv, running, selene

from diamond_jupyter.model import Association, JobState, JobStatus, QosLimits


def _first(p):
    return p.ranked[0]


def _said(v, text: str) -> bool:
    return any(text in x for x in v.reasons + v.notes)


# ---- PreemptMode=SUSPEND,GANG: the suspended jobs keep their memory -------------------------

SUSPEND = PARTITIONS.replace("PreemptMode=REQUEUE", "PreemptMode=SUSPEND,GANG")


def _scavenged(partitions: str):
    """selene with bob's scav jobs (PriorityTier 1) on m01 and m02, all 128 CPUs and
    1000000 of the 1024000 MB of each, 10 h of their 12 h left; big (PriorityTier 10)
    shares those nodes."""
    jobs = [running("71", "bob", "m01", 128, 10, 12, "scav"),
            running("72", "bob", "m02", 128, 10, 12, "scav")]
    return selene(*jobs, alloc={"m01": 128, "m02": 128},
                  mem={"m01": 1000000, "m02": 1000000}, partitions=partitions)


def test_the_suspend_mode_is_read_from_scontrol():
    _, snap = _scavenged(SUSPEND)
    scav = next(p for p in snap.partitions if p.name == "scav")
    assert (scav.preempt_mode, scav.priority_tier) == ("SUSPEND,GANG", 1)


@pytest.mark.parametrize("mem, requeue, suspend", [
    # 100 GB a node: REQUEUE ends the scav jobs, SUSPEND leaves their 1000000 MB held
    ("--mem=100G", NOW, hours(10)),
    # 20 GB: the 24000 MB the suspended jobs leave hold it
    ("--mem=20G", NOW, NOW),
    # no memory asked: big's DefMemPerCPU 8000 x 96 = 768000 MB
    ("", NOW, hours(10)),
])
def test_a_higher_tier_job_waits_for_the_memory_suspended_jobs_keep(mem, requeue, suspend):
    """Before: every one started now, the suspended jobs' memory counted free."""
    job = f"#SBATCH -p big -N 1 -n 96 {mem} -t 1:00:00"
    assert _first(run(job, _scavenged(PARTITIONS))).estimated_start == requeue
    v = _first(run(job, _scavenged(SUSPEND)))
    assert (v.verdict, v.partition, v.estimated_start) == (
        "READY" if suspend == NOW else "BUSY", "big", suspend), v.notes
    assert _said(v, "preempt the running jobs of partition scav (PreemptMode=SUSPEND,GANG, "
                    "PriorityTier 1)")
    kept = "partition big: the jobs of partition scav are suspended, not ended " \
        "(PreemptMode=SUSPEND,GANG): they keep their memory on m01, m02, which leaves less " \
        "than the job's"
    assert _said(v, kept) == (suspend != NOW), v.notes


def test_the_scav_job_itself_may_be_suspended():
    v = _first(run("#SBATCH -p scav -N 1 -n 8 -t 1:00:00", _scavenged(SUSPEND)))
    assert v.verdict == "READY" and v.partition == "scav"
    assert _said(v, "the job may be preempted (PreemptMode=SUSPEND,GANG) by jobs of partition")


# ---- maintenance reservations and the job's time limit ------------------------------------

def _maint(*windows: tuple[str, float, float]):
    """selene with MAINT reservations over n01-n06 (batch's nodes, excl's n05-n06): each
    (name, from hour, to hour)."""
    return selene(resv="".join(resv(name, "n[01-06]", a, b, flags="MAINT,SPEC_NODES")
                               for name, a, b in windows))


def test_no_time_limit_meets_a_reservation_with_its_partitions_default_time():
    """batch: DefaultTime 2 h; maint from +3 h: a batch job giving no limit ends before it
    and starts now (before: held till +9 h, as a job that never ends); from +1 h, it waits
    till maint's end, said."""
    assert _first(run("#SBATCH -p batch -N 1", _maint(("maint", 3, 9)))).estimated_start \
        == NOW
    v = _first(run("#SBATCH -p batch -N 1", _maint(("maint", 1, 7))))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(7))
    assert _said(v, "reservation maint (MAINT,SPEC_NODES) takes n[01-06] from 2026-03-01 "
                    "10:00 to 2026-03-01 16:00: the job, of a time limit of 2:00:00, would "
                    "run into it, so Slurm starts it there only after it ends")


def test_no_time_limit_and_no_default_time_is_the_partitions_max_time():
    """excl: no DefaultTime, MaxTime 6 h: a job giving no limit runs up to 6 h, into
    maint at +3 h: it starts at maint's end."""
    v = _first(run("#SBATCH -p excl -N 1", _maint(("maint", 3, 9))))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(9))
    assert _said(v, "the job, of a time limit of 6:00:00, would run into it")


def test_no_time_limit_on_hera_debug_fits_before_a_reservation():
    """hera's debug: MaxTime 30 min, no DefaultTime; maint on c01-c04 from +30 min: a debug
    job giving no limit ends as it starts (before: held till maint's end). A cpu job's
    MaxTime (2 days) runs into it."""
    from diamond_jupyter.model import Reservation

    cfg, snap = hera()
    snap.reservations = [Reservation(name="maint", start=NOW + timedelta(minutes=30),
                                     end=hours(6), nodes=["c[01-04]"], users=["root"],
                                     flags=["MAINT", "SPEC_NODES"])]
    debug = _first(run("#SBATCH -p debug -N 1", (cfg, snap)))
    assert (debug.verdict, debug.estimated_start) == ("READY", NOW)
    assert not _said(debug, "reservation maint")
    cpu = _first(run("#SBATCH -p cpu -N 1", (cfg, snap)))
    assert (cpu.verdict, cpu.estimated_start) == ("BUSY", hours(6))
    assert _said(cpu, "the job, of a time limit of 2-00:00:00, would run into it")


def test_two_reservations_back_to_back_each_hold_the_job():
    """maint +1 h to +7 h, upgrade +7 h to +10 h: a 2 h job cannot fit between them: it
    starts at +10 h, both said (before: +7 h, into upgrade)."""
    v = _first(run("#SBATCH -p batch -N 1 -t 2:00:00",
                   _maint(("maint", 1, 7), ("upgrade", 7, 10))))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(10))
    assert _said(v, "reservation maint (MAINT,SPEC_NODES) takes n[01-06]")
    assert _said(v, "reservation upgrade (MAINT,SPEC_NODES) takes n[01-06] from 2026-03-01 "
                    "16:00 to 2026-03-01 19:00")
    # with a gap of 3 h between them, it fits there
    v = _first(run("#SBATCH -p batch -N 1 -t 2:00:00",
                   _maint(("maint", 1, 4), ("upgrade", 7, 10))))
    assert v.estimated_start == hours(4)


def test_time_min_lowers_the_limit_to_end_before_a_reservation():
    """--time-min=0:30:00 with -t 2:00:00, maint from +1 h: Slurm may start it now with a
    limit of up to 1 h (before: held till maint's end)."""
    v = _first(run("#SBATCH -p batch -N 1 -t 2:00:00 --time-min=0:30:00",
                   _maint(("maint", 1, 7))))
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert _said(v, "--time-min 0:30:00: Slurm may lower the job's time limit 2:00:00 to end "
                    "before reservation maint starts at 2026-03-01 10:00")
    # too short a gap for even its minimum
    v = _first(run("#SBATCH -p batch -N 1 -t 2:00:00 --time-min=1:30:00",
                   _maint(("maint", 1, 7))))
    assert v.estimated_start == hours(7)


# ---- limits already right, kept so --------------------------------------------------------

def _qos(grp_tres: dict[str, int]):
    cfg, snap = hera()
    snap.user = "alice"
    snap.qos = {"normal": QosLimits(name="normal", grp_tres=grp_tres)}
    snap.associations = [Association(account="proj1", default_qos="normal", qos=["normal"])]
    return cfg, snap


def test_a_qos_grp_tres_of_one_gpu_type():
    """GrpTRES=gres/gpu:a100=4: six A100 in all never run under it; V100s are not held."""
    site = _qos({"gres/gpu:a100": 4})
    assert "needs 6 a100 GPUs in all, the job's QOS normal allows 4 (GrpTRES " \
        "gres/gpu:a100=4)" in reasons(run("#SBATCH -N 2 --gres=gpu:a100:3 -t 1:00:00", site),
                                      "hera")
    v = _first(run("#SBATCH -N 1 --gres=gpu:v100:2 -t 1:00:00", site))
    assert (v.verdict, v.partition) == ("READY", "gpu")


def test_default_memory_per_cpu_past_max_mem_per_node():
    """cpu: DefMemPerCPU 8000, MaxMemPerNode 150000: 32 CPUs without --mem get 256000 MB,
    above it; 16 get 128000."""
    cfg, snap = hera()
    for p in snap.partitions:
        if p.name == "cpu":
            p.def_mem_per_cpu_mb, p.max_mem_per_node_mb = 8000, 150000
    p = run("#SBATCH -N 1 -n 32 -t 1:00:00 -p cpu", (cfg, snap))
    assert reasons(p, "hera") == (
        "partition cpu: needs 256000 MB memory per node, its MaxMemPerNode is 150000 MB | "
        "partition cpu: no memory asked, it gets DefMemPerCPU 8000 MB x 32 CPUs = 256000 MB "
        "a node")
    assert _first(run("#SBATCH -N 1 -n 16 -t 1:00:00 -p cpu", (cfg, snap))).verdict == "READY"


def test_every_node_of_a_partition_drained_but_one():
    """c01 drained, c03 draining (a job still runs there), c04 drain: c02 alone takes jobs;
    drained nodes do not come back by themselves."""
    job = JobStatus(native_id="5", name="j", state=JobState.RUNNING, user="bob",
                    partition="cpu", nodes=1, cpus=64, node_list="c03",
                    started_at=NOW - timedelta(hours=1), walltime_s=4 * 3600)
    site = hera(states={"c01": "drained", "c03": "draining", "c04": "drain"},
                alloc={"c03": (64, 0)}, jobs=[job])
    assert reasons(run("#SBATCH -N 2 -t 1:00:00 -p cpu", site), "hera") == \
        "needs 2 nodes, partition cpu has only 1 usable (others drained c[01,04]; draining " \
        "c03)"
    assert reasons(run("#SBATCH -N 1 -n 128 -t 1:00:00 -p cpu", site), "hera") == \
        "needs 1 node, partition cpu has only 0 usable (others draining c03; drained c04)"
    v = _first(run("#SBATCH -N 1 -n 8 -t 1:00:00 -p cpu", site))
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_gpus_of_one_type_in_all_or_a_node_beyond_the_nodes_of_that_type():
    """gpu mixes 4 A100 nodes (g01, g02) and one of 2 V100 (v01)."""
    assert reasons(run("#SBATCH -N 1 --gpus-per-node=v100:3 -t 1:00:00", hera()), "hera") \
        == "needs 3 GPUs of type 'v100' per node, largest node has 2 of them"
    assert "needs 2 nodes, partition gpu has only 1 that can run it (others: no GPU of type " \
        "'v100' (its nodes have: a100))" in reasons(
            run("#SBATCH --gpus=v100:3 -t 1:00:00", hera()), "hera")
    # an A100 of busy g01 and g02 waits for them, though v01's GPUs are free
    v = _first(run("#SBATCH -N 1 --gres=gpu:a100:1 -t 1:00:00",
                   hera(alloc={"g01": (0, 4), "g02": (0, 4)})))
    assert v.verdict == "BUSY" and v.partition == "gpu"


# ---- LSF: a queue's HJOB_LIMIT in use -----------------------------------------------------

def test_lsf_hjob_limit_counts_the_queues_jobs_already_on_each_host():
    """normal's JL/H is 16; bob's jobs in normal hold 8 slots on each of w1-w4 (ending at
    +2, +3, +4, +5 h): 8 more on one host fit now, 12 wait for w1's job (before: READY,
    the limit checked against the job alone)."""
    from test_placement_cases8 import WREN_BQUEUES_L, _wjob, wren

    jobs = [_wjob(str(i), "bob", 8, h, 2 + i) for i, h in enumerate(("w1", "w2", "w3", "w4"))]
    site = wren(*jobs, queue_long=WREN_BQUEUES_L)
    job = '#BSUB -n {}\n#BSUB -R "span[hosts=1]"\n#BSUB -W 1:00'
    v = _first(run(job.format(8), site))
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = _first(run(job.format(12), site))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    assert _said(v, "queue normal's HJOB_LIMIT (JL/H) allows 16 slots on w1: its running "
                    "jobs hold 8 and the job needs 12")
