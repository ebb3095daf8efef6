"""Placement cases worked by hand, seventeenth sweep: site states and jobs of hera
(tests/test_placement_cases.py) and vega (read from its Slurm outputs,
tests/test_placement_cases14.py) not met so far, each against what Slurm documents.

Partition limits below the job's ask (MaxNodes, MaxTime of every partition,
MaxCPUsPerNode, MaxMemPerNode), partitions closed to the user's account (AllowAccounts,
DenyAccounts), OverSubscribe=FORCE:4 on full nodes, nodes of two partitions held by the
other's jobs, a PreemptMode=REQUEUE partition under a higher PriorityTier, a partition of
nodes of 32 and 128 CPUs for a job of 64 CPUs a node, GPUs of a type that is busy where
another type is free, `--mem=0` on nodes partly used, QOS MaxJobsPerUser and
MaxSubmitJobsPerUser reached by the user's own jobs, a reservation ending within the run.

And licenses (`sbatch -L`), which placement did not read: a job asking a license the
site does not define was READY, though sbatch refuses it ("Invalid license
specification"); the site's licenses are now read (`scontrol show licenses -o`) and a
license it lacks, or more of one than it has in all, is the reason; where they are not
known, or in use, it is said."""

from __future__ import annotations

from datetime import timedelta, timezone

import pytest
from test_placement_cases import NOW, hera
from test_placement_cases14 import vega

from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import (
    Association,
    JobState,
    JobStatus,
    Partition,
    QosLimits,
    Reservation,
)
from diamond_jupyter.placement import place

slurm = SlurmCommands(tz=timezone.utc)


def _verdict(job: str, site):
    spec = Federation.parse(f"#!/bin/bash\n{job}\n./app\n", "slurm")
    return place(spec, [site], now=NOW).ranked[0]


def _cpu(**limits):
    """hera with its partition cpu's limits set as given."""
    cfg, snap = hera()
    for p in snap.partitions:
        if p.name == "cpu":
            for key, value in limits.items():
                setattr(p, key, value)
    return cfg, snap


def _said(v, text: str) -> bool:
    return any(text in x for x in v.reasons + v.notes)


# ---- partition limits and who may use a partition ------------------------------------------

LIMITS = [
    # (the job, the site's partition cpu's limits, verdict, partition, what is said)
    ("#SBATCH -N 6 -t 1:00:00 -p cpu", {}, "INCOMPATIBLE", None,
     "needs 6 nodes, partition cpu allows at most 4"),
    ("#SBATCH -N 1 -t 60:00:00", {}, "INCOMPATIBLE", None,
     "walltime 2-12:00:00 above the MaxTime of every partition that is up (the longest: "
     "cpu, 2-00:00:00)"),
    ("#SBATCH -N 1 -c 64 -t 1:00:00 -p cpu", {"max_cpus_per_node": 32}, "INCOMPATIBLE", None,
     "partition cpu: needs 64 CPUs per node, its MaxCPUsPerNode is 32"),
    ("#SBATCH -N 1 --mem=200G -t 1:00:00 -p cpu", {"max_mem_per_node_mb": 150000},
     "INCOMPATIBLE", None, "its MaxMemPerNode is 150000 MB"),
    ("#SBATCH -N 1 -t 1:00:00 -A proj1 -p cpu", {"allowed_accounts": ["other"]},
     "RESTRICTED", None, "account 'proj1' not allowed in partition 'cpu' (allowed: other)"),
    ("#SBATCH -N 1 -t 1:00:00 -A proj1 -p cpu", {"denied_accounts": ["proj1"]},
     "RESTRICTED", None, "account 'proj1' denied in partition 'cpu' (DenyAccounts: proj1)"),
    # not held to cpu: another partition takes it, and the denial is said
    ("#SBATCH -N 1 -t 1:00:00 -A proj1", {"denied_accounts": ["proj1"]}, "READY", "gpu",
     "account 'proj1' denied in partition 'cpu'"),
    # AllowGroups: a Slurm user's groups are not read, so it is said, not decided
    ("#SBATCH -N 1 -t 1:00:00 -p cpu", {"allowed_groups": ["physics"]}, "READY", "cpu",
     "partition cpu is for groups physics only (AllowGroups)"),
    # 64 CPUs a node: only c03 and c04 (128) of cpu's four; c01 and c02 have 32
    ("#SBATCH -N 2 -c 64 -t 1:00:00 -p cpu", {}, "READY", "cpu", None),
    ("#SBATCH -N 3 -c 64 -t 1:00:00 -p cpu", {}, "INCOMPATIBLE", None,
     "needs 3 nodes, partition cpu has only 2 that can run it (others: needs 64 CPUs per "
     "node, largest node has 32)"),
    # --mem=0: all of a node's memory, on idle nodes
    ("#SBATCH -N 1 --mem=0 -t 1:00:00 -p cpu", {}, "READY", "cpu", None),
]


@pytest.mark.parametrize("job, limits, verdict, partition, said", LIMITS,
                         ids=[f"{c[0]}:{c[1]}" for c in LIMITS])
def test_partition_limits_and_who_may_use_it(job, limits, verdict, partition, said):
    v = _verdict(job, _cpu(**limits))
    assert (v.verdict, v.partition) == (verdict, partition), v.reasons + v.notes
    if said:
        assert _said(v, said), v.reasons + v.notes


# ---- what others hold ----------------------------------------------------------------------

def _running(jid: str, node: str, cpus: int, partition: str, left_h: float,
             user: str = "bob", qos: str | None = None) -> JobStatus:
    return JobStatus(native_id=jid, name="j", state=JobState.RUNNING, user=user,
                     partition=partition, nodes=1, cpus=cpus, node_list=node, qos=qos,
                     started_at=NOW - timedelta(hours=1), walltime_s=int((1 + left_h) * 3600))


def test_nodes_of_two_partitions_held_by_the_others_jobs():
    """c01 and c02 are in debug and cpu; two debug jobs hold them for 25 more minutes: a
    debug job waits for them, a cpu job of one node starts on c03, one of three waits."""
    jobs = [_running("91", "c01", 32, "debug", 25 / 60), _running("92", "c02", 32, "debug",
                                                                   25 / 60)]
    site = hera(alloc={"c01": (32, 0), "c02": (32, 0)}, jobs=jobs)
    debug = _verdict("#SBATCH -N 1 -n 32 -t 0:20:00 -p debug", site)
    assert (debug.verdict, debug.estimated_start) == ("BUSY", NOW + timedelta(minutes=25))
    assert _verdict("#SBATCH -N 1 -n 32 -t 1:00:00 -p cpu", site).verdict == "READY"
    three = _verdict("#SBATCH -N 3 --ntasks-per-node=32 -t 1:00:00 -p cpu", site)
    assert (three.verdict, three.estimated_start) == ("BUSY", NOW + timedelta(minutes=25))


def test_oversubscribe_force_shares_full_nodes_said():
    """OverSubscribe=FORCE:4: each CPU may hold up to four jobs, so full nodes take one
    more, time-sliced, and that is said."""
    cfg, snap = hera(alloc={"c01": (32, 0), "c02": (32, 0), "c03": (128, 0),
                            "c04": (128, 0)})
    for p in snap.partitions:
        if p.name == "cpu":
            p.oversubscribe = "FORCE:4"
    v = _verdict("#SBATCH -N 1 -n 4 -t 1:00:00 -p cpu", (cfg, snap))
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert _said(v, "sharing CPUs with the jobs there (OverSubscribe=FORCE:4")


def _with_scavenger():
    jobs = [_running(f"7{i}", f"c0{i}", 128, "scav", 11) for i in (3, 4)]
    cfg, snap = hera(alloc={"c03": (128, 0), "c04": (128, 0)}, jobs=jobs)
    for p in snap.partitions:
        if p.name == "cpu":
            p.priority_tier, p.preempt_mode = 10, "OFF"
    snap.partitions.append(Partition(name="scav", max_time_s=24 * 3600, nodes=["c[03-04]"],
                                     priority_tier=1, preempt_mode="REQUEUE"))
    for n in snap.nodes:
        if n.name in ("c03", "c04"):
            n.partitions.append("scav")
    return cfg, snap


def test_a_requeue_partitions_jobs_give_way_to_a_higher_tier():
    """scav (PreemptMode=REQUEUE, PriorityTier 1) holds c03 and c04 for 11 h more: a cpu
    job (tier 10) starts now, preempting them; a scav job waits, and may be preempted."""
    site = _with_scavenger()
    high = _verdict("#SBATCH -N 1 -n 128 -t 1:00:00 -p cpu", site)
    assert (high.verdict, high.estimated_start) == ("READY", NOW)
    assert _said(high, "preempt the running jobs of partition scav (PreemptMode=REQUEUE")
    low = _verdict("#SBATCH -N 1 -n 128 -t 1:00:00 -p scav", site)
    assert low.verdict == "BUSY" and low.estimated_start == NOW + timedelta(hours=11)
    assert _said(low, "the job may be preempted (PreemptMode=REQUEUE)")


def test_gpus_of_a_busy_type_wait_though_another_type_is_free():
    """v01's two V100s are held; the A100s of g01 and g02 are free: a job asking V100s
    waits for v01, it does not start on an A100."""
    v = _verdict("#SBATCH -N 1 -t 1:00:00 --gres=gpu:v100:2", hera(alloc={"v01": (0, 2)}))
    assert (v.verdict, v.partition) == ("BUSY", "gpu") and v.estimated_start > NOW


def test_mem_zero_waits_for_nodes_whose_memory_others_hold():
    """--mem=0 asks each node's whole memory: on nodes where others hold some, it waits."""
    cfg, snap = hera()
    for n in snap.nodes:
        if n.name.startswith("c"):
            n.memory_allocated, n.cpus_allocated, n.state = 4000, 1, "mixed"
    v = _verdict("#SBATCH -N 1 -n 1 --mem=0 -t 1:00:00 -p cpu", (cfg, snap))
    assert v.verdict == "BUSY" and v.estimated_start > NOW
    assert _verdict("#SBATCH -N 1 -n 1 -t 1:00:00 -p cpu", (cfg, snap)).verdict == "READY"


@pytest.mark.parametrize("limits, verdict, said", [
    (dict(max_jobs_per_user=2), "BUSY",
     "QOS normal's MaxJobsPerUser is 2 and 2 of your jobs run under it"),
    (dict(max_submit_jobs_per_user=2), "RESTRICTED",
     "QOS normal's MaxSubmitJobsPerUser is 2 and you have 2 jobs queued or running"),
])
def test_qos_per_user_limits_reached_by_the_users_own_jobs(limits, verdict, said):
    cfg, snap = hera(jobs=[_running(str(i), "c03", 1, "cpu", 2, user="alice", qos="normal")
                           for i in range(2)])
    snap.user = "alice"
    snap.qos = {"normal": QosLimits(name="normal", **limits)}
    snap.associations = [Association(account="proj1", default_qos="normal", qos=["normal"])]
    v = _verdict("#SBATCH -N 1 -t 1:00:00 -p cpu", (cfg, snap))
    assert v.verdict == verdict and _said(v, said), v.reasons + v.notes


def test_a_reservation_ending_within_the_run_is_incompatible():
    cfg, snap = hera()
    snap.user = "alice"
    snap.reservations = [Reservation(name="r1", start=NOW - timedelta(hours=1),
                                     end=NOW + timedelta(hours=2), nodes=["c[01-04]"],
                                     users=["alice"], state="ACTIVE")]
    v = _verdict("#SBATCH -N 1 -t 4:00:00 -p cpu --reservation=r1", (cfg, snap))
    assert v.verdict == "INCOMPATIBLE"
    assert _said(v, "walltime 4:00:00 runs past reservation r1's end")
    assert _verdict("#SBATCH -N 1 -t 1:00:00 -p cpu --reservation=r1",
                    (cfg, snap)).verdict == "READY"


# ---- licenses ------------------------------------------------------------------------------

LICENSES = ("LicenseName=matlab Total=10 Used=2 Free=8 Reserved=0 Remote=no\n"
            "LicenseName=fluent Total=4 Used=4 Free=0 Reserved=0 Remote=no\n")


def _licensed(text: str = LICENSES):
    cfg, snap = vega()
    return cfg, snap.model_copy(update={"licenses": slurm.parse_licenses(text)})


def test_the_sites_licenses_are_read_from_scontrol():
    assert "licenses" in slurm.snapshot_argvs()
    assert slurm.parse_licenses(LICENSES) == {"matlab": 10, "fluent": 4}
    assert slurm.parse_licenses("No licenses configured in Slurm.\n") == {}
    assert slurm.parse_licenses("") is None  # no answer: not known, not "none"
    _, snap = vega()
    assert snap.licenses is None


CASES = [
    # (the job's -L, verdict, what is said)
    ("matlab:2", "READY", "the licenses in use are not read here"),
    ("matlab", "READY", None),
    ("abaqus:1", "INCOMPATIBLE", "--licenses=abaqus:1: license 'abaqus' is not defined here "
     "(licenses here: fluent (4), matlab (10)): sbatch refuses the job (Invalid license "
     "specification)"),
    ("matlab:12", "INCOMPATIBLE", "12 of license 'matlab' asked, the site has 10 in all"),
    ("matlab:1,abaqus:1", "INCOMPATIBLE", "license 'abaqus' is not defined here"),
    # any one of them: matlab will do
    ("abaqus:1|matlab:1", "READY", None),
    ("abaqus:1|ansys:1", "INCOMPATIBLE", "license 'ansys' is not defined here"),
]


@pytest.mark.parametrize("asked, verdict, said", CASES, ids=[c[0] for c in CASES])
def test_licenses_a_site_lacks_are_refused_as_sbatch_refuses_them(asked, verdict, said):
    """Before: every one READY, the licenses unread."""
    v = _verdict(f"#SBATCH -n 1 -t 1:00:00 -L {asked}", _licensed())
    assert v.verdict == verdict, v.reasons + v.notes
    if said:
        assert _said(v, said), v.reasons + v.notes


def test_licenses_at_a_site_of_none_or_unknown():
    none = _verdict("#SBATCH -n 1 -t 1:00:00 -L matlab", _licensed("No licenses configured "
                                                                   "in Slurm.\n"))
    assert none.verdict == "INCOMPATIBLE" and _said(none, "(licenses here: none)")
    unknown = _verdict("#SBATCH -n 1 -t 1:00:00 -L matlab", vega())
    assert unknown.verdict == "READY"
    assert "--licenses=matlab: the site's licenses are not known (sbatch refuses a license " \
        "the site does not define)" in unknown.not_checked, unknown.not_checked
    unasked = _verdict("#SBATCH -n 1 -t 1:00:00", vega())
    assert not _said(unasked, "licenses") and not any("licenses" in x
                                                      for x in unasked.not_checked)
