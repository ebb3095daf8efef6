"""Placement cases worked by hand, sixth sweep: a Slurm QOS's limits the running jobs (or
the user's own) already use make a job wait, a submit limit reached refuses it, and the
user's associations (read with `sacctmgr show assoc`) give its default QOS and the QOS it
may name; PBS per-user and queued-job limits; LSF host groups and queue users; then more
sites of every scheduler. Each case asserts the verdict per site, the partition chosen,
the start and that the reason names the real cause."""

from __future__ import annotations

from datetime import timedelta, timezone

import pytest
from test_placement_cases import NOW, only, reasons, run
from test_placement_cases5 import PARTITIONS, node_lines

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.slurm_commands import (
    SlurmCommands,
    parse_assoc,
    parse_job_qos,
    parse_qos,
)

slurm = SlurmCommands(tz=timezone.utc)


def at(hours: float) -> str:
    """A time `hours` from NOW as squeue prints it."""
    return (NOW + timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%S")


def running(jid: str, user: str, node: str, cpus: int, started_h: float, limit_h: int,
            partition: str = "compute", gpus: int = 0) -> str:
    """One running job as `squeue -h -a -o SQUEUE_FIELDS` prints it: started `started_h`
    hours ago with a limit of `limit_h` hours."""
    tres = f"gres/gpu:{gpus}" if gpus else "N/A"
    return (f"{jid}|RUNNING|{at(-started_h)}|{at(limit_h - started_h)}|{at(-started_h - 1)}|"
            f"{limit_h}:00:00|1|{cpus}|{user}|{partition}|{tres}|{node}|None|(null)|job{jid}")


def pending(jid: str, user: str, cpus: int, partition: str = "compute") -> str:
    return (f"{jid}|PENDING|N/A|N/A|{at(-1)}|2:00:00|1|{cpus}|{user}|{partition}|N/A||"
            f"Priority|(null)|job{jid}")


# `sacctmgr -nP show qos format=QOS_FIELDS`: Name, MaxTRES, MaxTRESPerNode, MaxTRESPerUser,
# GrpTRES, MaxWall, GrpJobs, GrpSubmitJobs, MaxJobsPerUser, MaxSubmitJobsPerUser
QOS = "\n".join((
    "normal|||cpu=64||||||",
    "team||||cpu=96|||||",
    "gpupart||||gres/gpu=8|||||",
    "few||||||3||2|",
    "capped|||||||||3",
    "debug|cpu=16||||00:30:00||||",
    "long|||||7-00:00:00||||",
    "crowd||||||||4|",
)) + "\n"


def titan(*queue: str, qos_of: dict[str, str] | None = None, assoc: str | None = "alice",
          alloc: dict[str, int] | None = None, partitions: str = PARTITIONS,
          qos: str = QOS):
    """olympus's nodes and partitions (the fifth sweep's) read with the QOS, the queue's
    jobs' QOS (`squeue -o '%i|%q'`) and the user's associations: `assoc` is who the probe
    ran as (None: accounting said nothing of the user), with one association (account
    proj, default QOS normal, may use normal, team, few, capped, debug, crowd)."""
    assoc_text = "" if assoc is None else (
        f"user|{assoc}\n{assoc}|proj||normal|normal,team,few,capped,debug,crowd\n")
    outputs = {
        "partitions": partitions, "nodes": node_lines(alloc=alloc), "queue": "\n".join(queue),
        "queue_qos": "".join(f"{j}|{q}\n" for j, q in (qos_of or {}).items()),
        "qos": qos, "assoc": assoc_text}
    snap = slurm.parse_snapshot("titan", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="titan", metadata={"architecture": "x86_64"}), snap


def has_note(v, text: str) -> bool:
    return any(text in n for n in v.notes)


# --------------------------------------------------------------- reading what is in use

def test_the_probe_reads_the_jobs_qos_and_the_users_associations():
    assert "%i|%q" in slurm.snapshot_argvs()["queue_qos"]
    assert "sacctmgr" in " ".join(slurm.snapshot_argvs()["assoc"])
    assert slurm.live_outputs >= {"queue", "queue_qos"}  # read with every snapshot
    assert parse_job_qos("101|team\n102_[1-3]|normal\nNo QOS here\n") == {
        "101": "team", "102_[1-3]": "normal"}
    user, assocs = parse_assoc("user|alice\nalice|proj|gpu|gpuq|gpuq,normal\n"
                               "alice|proj|||normal\n")
    assert user == "alice"
    assert [(a.account, a.partition, a.default_qos, a.qos) for a in assocs] == [
        ("proj", "gpu", "gpuq", ["gpuq", "normal"]), ("proj", None, None, ["normal"])]
    # a site without accounting prints the user only: associations not known
    assert parse_assoc("user|alice\n") == ("alice", None)
    q = parse_qos(QOS)
    assert (q["few"].grp_jobs, q["few"].max_jobs_per_user) == (3, 2)
    assert q["capped"].max_submit_jobs_per_user == 3 and q["normal"].grp_jobs is None
    # the sixth sweep's fields are optional: a recording of the first six still reads
    assert parse_qos("old|cpu=8||||\n")["old"].max_tres_per_job == {"cpu": 8}
    _, snap = titan(running("101", "bob", "n1", 48, 1, 4), qos_of={"101": "team"})
    assert (snap.user, snap.jobs[0].qos) == ("alice", "team")


# --------------------------------------------------------------- group limits in use

def test_a_group_cpu_limit_in_use_makes_the_job_wait_for_jobs_to_end():
    # team: GrpTRES cpu=96. bob's 48 CPUs end in 1 h, carol's 48 in 3 h; n3 and n4 are
    # idle. 8 CPUs under team fit once bob's job ends (48 + 8 <= 96): +1 h, not now
    site = titan(running("101", "bob", "n1", 48, 3, 4), running("102", "carol", "n2", 48, 1, 4),
                 qos_of={"101": "team", "102": "team"}, alloc={"n1": 48, "n2": 48})
    v = only(run("#SBATCH -q team\n#SBATCH -c 8\n#SBATCH -p compute", site), "titan",
             "compute")
    assert v.verdict == "BUSY" and v.estimated_start == NOW + timedelta(hours=1)
    assert has_note(v, "QOS team's GrpTRES cpu=96 is in use: running jobs under it hold 96 "
                       "CPUs, the job needs 8")
    assert has_note(v, "(QOSGrpCpuLimit)")
    # 56 CPUs: bob's end frees 48 (48 + 56 > 96): it waits for carol's too (+3 h)
    v = run("#SBATCH -q team\n#SBATCH -N 2\n#SBATCH -n 56\n#SBATCH -p compute",
            site).verdict("titan")
    assert v.estimated_start == NOW + timedelta(hours=3)
    # the same job under normal is not held by team's use: it starts now on n3/n4
    v = run("#SBATCH -q normal\n#SBATCH -c 8\n#SBATCH -p compute", site).verdict("titan")
    assert v.verdict == "READY" and v.estimated_start == NOW


def test_a_partition_qos_group_gpu_limit_counts_every_job_in_the_partition():
    # gpu's QOS gpupart: GrpTRES gres/gpu=8. Two jobs of 4 A100 run on g1 (2 h left) and
    # g2 (5 h left), under no QOS of their own: the partition's QOS counts them. g3's 4
    # L40S are idle, but 2 more GPUs would pass the 8: +2 h (QOSGrpGRES)
    text = PARTITIONS.replace("PartitionName=gpu AllowGroups=ALL",
                              "PartitionName=gpu QoS=gpupart AllowGroups=ALL")
    site = titan(running("201", "bob", "g1", 16, 2, 4, "gpu", gpus=4),
                 running("202", "bob", "g2", 16, 1, 6, "gpu", gpus=4),
                 partitions=text, alloc={"g1": 16, "g2": 16})
    v = only(run("#SBATCH --gres=gpu:2\n#SBATCH -p gpu", site), "titan", "gpu")
    assert v.estimated_start == NOW + timedelta(hours=2)
    assert has_note(v, "QOS gpupart's GrpTRES gres/gpu=8 is in use") \
        and has_note(v, "(QOSGrpGRES)")


def test_a_group_job_count_in_use_waits_for_one_job_to_end():
    # few: GrpJobs=3, three jobs of others run under it (ending in 1, 2 and 3 h): the
    # fourth waits until the first ends, +1 h (QOSGrpJobsLimit)
    site = titan(running("1", "bob", "n1", 4, 3, 4), running("2", "carol", "n1", 4, 2, 4),
                 running("3", "dave", "n2", 4, 1, 4), qos_of={"1": "few", "2": "few", "3": "few"},
                 alloc={"n1": 8, "n2": 4})
    v = run("#SBATCH -q few\n#SBATCH -c 2\n#SBATCH -p compute", site).verdict("titan")
    assert v.feasible and v.estimated_start == NOW + timedelta(hours=1)
    assert has_note(v, "QOS few's GrpJobs is 3 and 3 jobs run under it: it waits until one "
                       "of them ends (QOSGrpJobsLimit)")


# --------------------------------------------------------------- per-user limits in use

def test_a_per_user_cpu_limit_counts_only_the_users_own_jobs():
    # normal: MaxTRESPerUser cpu=64, the association's default QOS (the job names none).
    # alice runs 48 CPUs (ending in 2 h); bob's 48 do not count against her.
    site = titan(running("11", "alice", "n1", 48, 2, 4), running("12", "bob", "n2", 48, 3, 4),
                 qos_of={"11": "normal", "12": "normal"}, alloc={"n1": 48, "n2": 48})
    v = run("#SBATCH -c 16\n#SBATCH -p compute", site).verdict("titan")
    assert v.verdict == "READY"  # 48 + 16 = 64: at the limit, not above
    assert has_note(v, "the job names no QOS: it runs under its association's default QOS "
                       "normal")
    v = run("#SBATCH -c 20\n#SBATCH -p compute", site).verdict("titan")
    assert v.estimated_start == NOW + timedelta(hours=2)
    assert has_note(v, "QOS normal's MaxTRESPerUser cpu=64 is in use: your running jobs "
                       "under it hold 48 CPUs, the job needs 20")
    assert has_note(v, "(QOSMaxCpuPerUserLimit)")
    # probed as bob, the same queue holds him (48 of his own, ending in 1 h)
    bob = titan(running("11", "alice", "n1", 48, 2, 4), running("12", "bob", "n2", 48, 3, 4),
                qos_of={"11": "normal", "12": "normal"}, alloc={"n1": 48, "n2": 48},
                assoc="bob")
    v = run("#SBATCH -c 20\n#SBATCH -p compute", bob).verdict("titan")
    assert v.estimated_start == NOW + timedelta(hours=1)


def test_a_per_user_job_count_waits_for_the_users_next_job_to_end():
    # few: MaxJobsPerUser=2; alice runs two under it (ending in 30 min and 2 h)
    site = titan(running("21", "alice", "n1", 2, 3.5, 4), running("22", "alice", "n1", 2, 2, 4),
                 qos_of={"21": "few", "22": "few"}, alloc={"n1": 4})
    v = run("#SBATCH -q few\n#SBATCH -c 2\n#SBATCH -p compute", site).verdict("titan")
    assert v.estimated_start == NOW + timedelta(minutes=30)
    assert has_note(v, "QOS few's MaxJobsPerUser is 2 and 2 of your jobs run under it: it "
                       "waits until one of them ends (QOSMaxJobsPerUserLimit)")


def test_per_user_limits_are_not_counted_when_the_user_is_not_known():
    site = titan(running("21", "alice", "n1", 2, 3.5, 4), running("22", "alice", "n1", 2, 2, 4),
                 qos_of={"21": "few", "22": "few"}, alloc={"n1": 4}, assoc=None)
    v = run("#SBATCH -q few\n#SBATCH -c 2\n#SBATCH -p compute", site).verdict("titan")
    assert v.verdict == "READY"


def test_a_submit_limit_reached_refuses_the_submit():
    # capped: MaxSubmitJobsPerUser=3; alice has 2 running and 1 pending under it
    site = titan(running("31", "alice", "n1", 2, 1, 4), running("32", "alice", "n1", 2, 1, 4),
                 pending("33", "alice", 2), qos_of={"31": "capped", "32": "capped",
                                                     "33": "capped"}, alloc={"n1": 4})
    p = run("#SBATCH -q capped\n#SBATCH -c 2\n#SBATCH -p compute", site)
    assert p.verdict("titan").verdict == "RESTRICTED"
    assert reasons(p, "titan") == (
        "QOS capped's MaxSubmitJobsPerUser is 3 and you have 3 jobs queued or running under "
        "it: the submit is refused until one ends (QOSMaxSubmitJobPerUserLimit)")
    # two of hers under it: the third is taken (and starts now)
    site = titan(running("31", "alice", "n1", 2, 1, 4), pending("33", "alice", 2),
                 qos_of={"31": "capped", "33": "capped"}, alloc={"n1": 2})
    assert run("#SBATCH -q capped\n#SBATCH -c 2\n#SBATCH -p compute",
               site).verdict("titan").feasible


# --------------------------------------------------------------- associations

def test_the_default_qos_of_the_association_sets_the_limits():
    # alice's association: default QOS debug (MaxWall 30 min, 16 CPUs a job)
    assoc = "user|alice\nalice|proj||debug|debug,normal\n"
    cfg, snap = titan()
    snap = snap.model_copy(update=dict(zip(("user", "associations"), parse_assoc(assoc),
                                           strict=True)))
    p = run("#SBATCH -c 4\n#SBATCH -t 1:00:00\n#SBATCH -p compute", (cfg, snap))
    assert reasons(p, "titan") == "walltime 1:00:00 above the job's QOS debug MaxWall 0:30:00"
    # naming normal, which the association may use, lifts it
    only(run("#SBATCH -q normal\n#SBATCH -c 4\n#SBATCH -t 1:00:00\n#SBATCH -p compute",
             (cfg, snap)), "titan", "compute")


def test_a_qos_the_association_may_not_use_is_refused():
    p = run("#SBATCH -q long\n#SBATCH -c 4\n#SBATCH -p compute", titan())
    assert p.verdict("titan").verdict == "RESTRICTED"
    assert reasons(p, "titan") == (
        "QOS 'long' is not one your association may use here (its QOS: capped, crowd, debug, "
        "few, normal, team): sbatch refuses it (Invalid qos specification)")


def test_an_account_without_association_is_refused():
    p = run("#SBATCH -A other\n#SBATCH -c 4\n#SBATCH -p compute", titan())
    assert reasons(p, "titan") == (
        "you have no association with account 'other' for partition compute (your "
        "accounts: proj): sbatch refuses it (Invalid account or account/partition "
        "combination)")


def test_a_partition_association_gives_its_own_default_qos():
    # alice has an association for partition long with default QOS long (7 days) and
    # one for every other partition with default debug: a 3-day job in long runs
    assoc = "user|alice\nalice|proj|long|long|long\nalice|proj||debug|debug\n"
    cfg, snap = titan()
    snap = snap.model_copy(update=dict(zip(("user", "associations"), parse_assoc(assoc),
                                           strict=True)))
    v = only(run("#SBATCH -t 3-00:00:00\n#SBATCH -c 4", (cfg, snap)), "titan", "long")
    assert has_note(v, "default QOS long")


def test_allow_qos_is_checked_against_the_default_qos():
    # compute takes QOS normal only; the job names none and its default is debug: refused
    # there, so it goes to long (which takes any)
    text = PARTITIONS.replace("PartitionName=compute AllowGroups=ALL AllowAccounts=ALL "
                              "AllowQos=ALL", "PartitionName=compute AllowGroups=ALL "
                              "AllowAccounts=ALL AllowQos=normal")
    assoc = "user|alice\nalice|proj||debug|debug,normal\n"
    cfg, snap = titan(partitions=text)
    snap = snap.model_copy(update=dict(zip(("user", "associations"), parse_assoc(assoc),
                                           strict=True)))
    p = run("#SBATCH -c 4\n#SBATCH -t 0:20:00\n#SBATCH -p compute", (cfg, snap))
    assert reasons(p, "titan") == (
        "QOS 'debug' not allowed in partition 'compute' (allowed: normal): the job names no "
        "QOS: it runs under its association's default QOS debug")
    v = only(run("#SBATCH -c 4\n#SBATCH -t 0:20:00", (cfg, snap)), "titan", "long")
    assert not has_note(v, "its account's default QOS must be one of them")


@pytest.mark.parametrize("held", [47, 48])
def test_a_group_limit_at_the_edge(held):
    # crowd's MaxJobsPerUser=4 is not in use; team's GrpTRES cpu=96 with `held` CPUs held
    # by others and 48 asked: 47 + 48 fits, 48 + 48 fits (at the limit), so both start now
    site = titan(running("41", "bob", "n1", held, 1, 4), qos_of={"41": "team"},
                 alloc={"n1": held})
    v = run("#SBATCH -q team\n#SBATCH -c 48\n#SBATCH -p compute", site).verdict("titan")
    assert v.verdict == "READY"
