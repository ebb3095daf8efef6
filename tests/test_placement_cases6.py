"""Placement cases worked by hand, sixth sweep: a Slurm QOS's limits the running jobs (or
the user's own) already use make a job wait, a submit limit reached refuses it, and the
user's associations (read with `sacctmgr show assoc`) give its default QOS and the QOS it
may name; PBS per-user and queued-job limits; LSF host groups and queue users; then more
sites of every scheduler. Each case asserts the verdict per site, the partition chosen,
the start and that the reason names the real cause."""

from __future__ import annotations

from datetime import timedelta, timezone

import pytest
from test_placement_cases import NOW, has_note, only, reasons, run
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
    proj, default QOS normal, may use normal, team, few, capped, debug, crowd, nodes2,
    gpu4)."""
    assoc_text = "" if assoc is None else (
        f"user|{assoc}\n{assoc}|proj||normal|normal,team,few,capped,debug,crowd,nodes2,"
        "gpu4\n")
    outputs = {
        "partitions": partitions, "nodes": node_lines(alloc=alloc), "queue": "\n".join(queue),
        "queue_qos": "".join(f"{j}|{q}\n" for j, q in (qos_of or {}).items()),
        "qos": qos, "assoc": assoc_text}
    snap = slurm.parse_snapshot("titan", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="titan", metadata={"architecture": "x86_64"}), snap


# --------------------------------------------------------------- reading what is in use

def test_the_probe_reads_the_jobs_qos_and_the_users_associations():
    # account, sharing: 7th sweep; -O with the running jobs' TRES since session 25
    assert "JobArrayID:0|,QOS:0|,Account:0|" in " ".join(slurm.snapshot_argvs()["queue_qos"])
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
    # `place --explain` says why it waits, under the table
    text = run("#SBATCH -q team\n#SBATCH -c 8\n#SBATCH -p compute", site).explain()
    assert "\n  titan waits: QOS team's GrpTRES cpu=96 is in use" in text
    assert text.rstrip().endswith("(QOSGrpCpuLimit)")
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
        "few, gpu4, nodes2, normal, team): sbatch refuses it (Invalid qos specification)")


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


# --------------------------------------------------------------- PBS: limits per user

def _epoch(hours: float) -> int:
    return int((NOW + timedelta(hours=hours)).timestamp())


def _pbs_job(jid: str, owner: str, queue: str, ncpus: int, state: str = "R",
             started_h: float = 1, limit_h: int = 4, host: str = "k1", ngpus: int = 0) -> tuple:
    attrs = {"Job_Name": f"j{jid}", "Job_Owner": f"{owner}@login1", "job_state": state,
             "queue": queue, "qtime": _epoch(-started_h - 1),
             "Resource_List": {"ncpus": ncpus, "nodect": 1, "walltime": f"{limit_h:02d}:00:00",
                               **({"ngpus": ngpus} if ngpus else {})}}
    if state == "R":
        attrs |= {"stime": _epoch(-started_h), "exec_host": f"{host}/0*{ncpus}"}
    return f"{jid}.srv", attrs


# kestrel as `qstat -Q -f -F json` prints it: workq (the server's default_queue) 24 h, two
# running jobs a user (bob four) and four in it in all; big 48 h, 128 CPUs running a user;
# gpu 8 GPUs a job, three jobs in it in all (everyone's)
KESTREL_QUEUES = {
    "workq": {"queue_type": "Execution", "enabled": "True", "started": "True",
              "resources_max": {"walltime": "24:00:00"},
              "max_run": "[u:PBS_GENERIC=2],[u:bob=4]", "max_queued": "[u:PBS_GENERIC=4]"},
    "big": {"queue_type": "Execution", "enabled": "True", "started": "True",
            "resources_max": {"walltime": "48:00:00"},
            "max_run_res": {"ncpus": "[u:PBS_GENERIC=128]"}},
    "gpu": {"queue_type": "Execution", "enabled": "True", "started": "True",
            "resources_max": {"ngpus": 8, "walltime": "24:00:00"},
            "max_queued": "[o:PBS_ALL=3]"},
}


def kestrel(*jobs: tuple, user: str | None = "alice", queues: dict | None = None,
            server: dict | None = None):
    """A PBS Pro site read as the probe reads it: k1-k4 64 CPUs 256 GB, k5-k6 64 CPUs and
    4 A100 each (vnodes' ngpus); the queues above; `jobs` from `_pbs_job`."""
    import json

    from diamond_jupyter.dialects.pbs_commands import PbsCommands

    used: dict[str, list[int]] = {}
    for _, a in jobs:
        if a["job_state"] == "R":
            host = a["exec_host"].split("/")[0]
            got = used.setdefault(host, [0, 0])
            got[0] += a["Resource_List"]["ncpus"]
            got[1] += a["Resource_List"].get("ngpus", 0)
    nodes = {f"k{i}": {"state": "job-busy" if used.get(f"k{i}", [0])[0] >= 64 else "free",
                       "resources_available": {"ncpus": 64, "mem": "262144000kb",
                                               "ngpus": 4 if i > 4 else 0,
                                               **({"gpu_model": "a100"} if i > 4 else {})},
                       "resources_assigned": {"ncpus": used.get(f"k{i}", [0, 0])[0],
                                              "ngpus": used.get(f"k{i}", [0, 0])[1]}}
             for i in range(1, 7)}
    outputs = {"nodes": json.dumps({"nodes": nodes}),
               "queues": json.dumps({"Queue": queues or KESTREL_QUEUES}),
               "server": json.dumps({"Server": {"srv": {"default_queue": "workq",
                                                        **(server or {})}}}),
               "queue": json.dumps({"Jobs": dict(jobs)}), "user": f"{user or ''}\n"}
    snap = PbsCommands(tz=timezone.utc).parse_snapshot("kestrel", outputs)
    return SiteConfig(name="kestrel", scheduler="pbs"), snap.model_copy(
        update={"taken_at": NOW})


def test_pbs_per_user_limits_are_read():
    parts = {p.name: p for p in kestrel()[1].partitions}
    assert {(x.attribute, x.resource, x.scope, x.who, x.value) for x in parts["workq"].limits} \
        == {("max_run", "jobs", "u", "PBS_GENERIC", 2), ("max_run", "jobs", "u", "bob", 4),
            ("max_queued", "jobs", "u", "PBS_GENERIC", 4)}
    assert [(x.attribute, x.resource, x.value) for x in parts["big"].limits] == [
        ("max_run", "ncpus", 128)]
    assert [(x.scope, x.value) for x in parts["gpu"].limits] == [("o", 3)]
    # `qmgr -c "p s"`'s flat spelling of the same limit reads the same
    from diamond_jupyter.dialects.pbs_commands import _queue_limits
    assert _queue_limits({"max_run_res.ncpus": "[u:PBS_GENERIC=128]"})[0].value == 128
    assert kestrel()[1].user == "alice" and kestrel(user=None)[1].user is None


def test_pbs_max_run_per_user_waits_for_the_users_own_job():
    # alice runs 2 jobs in workq (ending in 1 h and 3 h) on k1: the nodes have room, her
    # limit of 2 running does not: +1 h. bob's own entry (4) lets him start now. Naming
    # no queue, the engine sends it to big (no such limit there), where it starts now
    jobs = (_pbs_job("1", "alice", "workq", 8, started_h=3), _pbs_job("2", "alice", "workq", 8))
    v = run("#PBS -l select=1:ncpus=4\n#PBS -l walltime=1:00:00", kestrel(*jobs)).verdict(
        "kestrel")
    assert (v.partition, v.estimated_start) == ("big", NOW)
    v = run("#PBS -q workq\n#PBS -l select=1:ncpus=4\n#PBS -l walltime=1:00:00",
            kestrel(*jobs)).verdict("kestrel")
    assert (v.partition, v.estimated_start) == ("workq", NOW + timedelta(hours=1))
    assert any("queue workq's max_run [u:PBS_GENERIC=2]: your running jobs in it hold 2 "
               "jobs: it waits until enough of them end" in n for n in v.notes), v.notes
    v = run("#PBS -q workq\n#PBS -l select=1:ncpus=4\n#PBS -l walltime=1:00:00",
            kestrel(*jobs, user="bob")).verdict("kestrel")
    assert v.estimated_start == NOW
    # the user not known: per-user limits are not counted
    v = run("#PBS -q workq\n#PBS -l select=1:ncpus=4", kestrel(*jobs, user=None)).verdict(
        "kestrel")
    assert v.estimated_start == NOW


def test_pbs_max_queued_per_user_refuses_the_submit():
    jobs = (_pbs_job("1", "alice", "workq", 8), _pbs_job("2", "alice", "workq", 8),
            _pbs_job("3", "alice", "workq", 8, state="Q"), _pbs_job("4", "alice", "workq", 8,
                                                                    state="Q"))
    p = run("#PBS -q workq\n#PBS -l select=1:ncpus=4", kestrel(*jobs))
    assert p.verdict("kestrel").verdict == "RESTRICTED"
    assert reasons(p, "kestrel") == (
        "queue workq's max_queued [u:PBS_GENERIC=4]: you have 4 jobs queued or running in it "
        "and the job adds 1: qsub refuses it until some of them end")
    # naming no queue, it goes to big, which has room
    v = only(run("#PBS -l select=1:ncpus=4", kestrel(*jobs)), "kestrel", "big")
    assert v.estimated_start == NOW


def test_pbs_max_run_res_ncpus_per_user():
    # big: 128 CPUs of a user's running jobs; alice runs 96 (ending in 2 h)
    jobs = (_pbs_job("5", "alice", "big", 64, started_h=2, host="k1"),
            _pbs_job("6", "alice", "big", 32, started_h=2, host="k2"))
    site = kestrel(*jobs)
    v = run("#PBS -q big\n#PBS -l select=1:ncpus=64", site).verdict("kestrel")
    assert v.estimated_start == NOW + timedelta(hours=2)
    assert any("max_run_res.ncpus [u:PBS_GENERIC=128]: your running jobs in it hold 96 CPUs"
               in n for n in v.notes), v.notes
    assert run("#PBS -q big\n#PBS -l select=1:ncpus=32", site).verdict("kestrel") \
        .estimated_start == NOW
    p = run("#PBS -q big\n#PBS -l select=3:ncpus=64", site)
    assert reasons(p, "kestrel") == ("needs 192 CPUs, queue big's max_run_res.ncpus "
                                     "[u:PBS_GENERIC=128] allows less running at once")


def test_pbs_max_queued_of_everyone():
    jobs = tuple(_pbs_job(str(i), u, "gpu", 8, host="k5", ngpus=1)
                 for i, u in ((7, "bob"), (8, "carol"), (9, "dave")))
    p = run("#PBS -q gpu\n#PBS -l select=1:ncpus=8:ngpus=1", kestrel(*jobs))
    assert reasons(p, "kestrel") == (
        "queue gpu's max_queued [o:PBS_ALL=3]: the queue holds 3 jobs queued or running in "
        "it and the job adds 1: qsub refuses it until some of them end")


# --------------------------------------------------------------- LSF: host and user groups

# osprey, as the probe reads it: c1-c4 40 CPUs 192 GB; f1-f2 128 CPUs 1 TB (the fat
# hosts); g1-g2 64 CPUs and 4 GPUs. `bmgroup -w -r`: hg_cpu c1-c4, hg_fat f1 f2, hg_big
# the two groups' hosts (nested, expanded). Queues: normal on hg_cpu (all users), fat on
# hg_fat/ (chemists only: ug_chem/), gpu on every host but c1-c4 and f1-f2 (`all ~...`),
# vip for bob.
OSPREY_HOSTS = {"RECORDS": [
    {"HOST_NAME": h, "STATUS": "ok", "MAX": str(c), "NJOBS": "0", "RUN": "0"}
    for h, c in (("c1", 40), ("c2", 40), ("c3", 40), ("c4", 40), ("f1", 128), ("f2", 128),
                 ("g1", 64), ("g2", 64))]}
OSPREY_LSHOSTS = {"RECORDS": [
    {"HOST_NAME": h, "type": "X86_64", "model": "Intel_Platinum", "ncpus": str(c),
     "maxmem": mem, "RESOURCES": res}
    for h, c, mem, res in (("c1", 40, "192G", ""), ("c2", 40, "192G", ""),
                           ("c3", 40, "192G", ""), ("c4", 40, "192G", ""),
                           ("f1", 128, "1T", "(fat)"), ("f2", 128, "1T", "(fat)"),
                           ("g1", 64, "512G", "(gpu)"), ("g2", 64, "512G", "(gpu)"))]}
BMGROUP = """GROUP_NAME    HOSTS
hg_cpu       c1 c2 c3 c4
hg_fat       f1 f2
hg_big       c1 c2 c3 c4 f1 f2
"""
BUGROUP = """GROUP_NAME    USERS
ug_chem      alice carol
ug_phys      dave
"""


def osprey(user: str | None = "alice", groups: str = BMGROUP, ugroups: str = BUGROUP):
    import json

    from diamond_jupyter.dialects.lsf_commands import LsfCommands

    def queue(name, hosts, users="all"):
        return {"QUEUE_NAME": name, "HOSTS": hosts, "USERS": users, "MAX_MEMLIMIT": "-",
                "MAX_TASKLIMIT": "-", "MIN_TASKLIMIT": "-"}

    queues = {"RECORDS": [{"QUEUE_NAME": q, "STATUS": "Open:Active", "MAX": "-",
                           "RUNLIMIT": "1440.0 min"} for q in ("normal", "fat", "gpu", "vip")]}
    limits = {"RECORDS": [queue("normal", "hg_cpu/"), queue("fat", "hg_fat/", "ug_chem/"),
                          queue("gpu", "all ~hg_big/"), queue("vip", "others", "bob")]}
    outputs = {"hosts": json.dumps(OSPREY_HOSTS), "lshosts": json.dumps(OSPREY_LSHOSTS),
               "queues": json.dumps(queues), "queue_limits": json.dumps(limits),
               "queue": "No unfinished job found\n", "host_groups": groups,
               "user_groups": ugroups, "user": f"{user or ''}\n"}
    snap = LsfCommands(tz=timezone.utc).parse_snapshot("osprey", outputs)
    snap = snap.model_copy(update={"taken_at": NOW})
    snap.partitions[0].default = True
    return SiteConfig(name="osprey", scheduler="lsf"), snap


def test_lsf_queue_hosts_named_by_host_group_are_expanded():
    q = {p.name: p for p in osprey()[1].partitions}
    assert q["normal"].nodes == ["c1", "c2", "c3", "c4"]
    assert q["fat"].nodes == ["f1", "f2"]
    assert q["gpu"].nodes == ["g1", "g2"]  # all hosts but hg_big's
    assert q["vip"].nodes == []  # `others`: every host
    assert q["fat"].allowed_users == ["ug_chem/"] and q["normal"].allowed_users is None
    # a 100-CPU job fits one fat host only: the fat queue, not normal (whose hosts are
    # the 40-CPU ones, not every host as before the groups were read)
    v = only(run('#BSUB -n 100\n#BSUB -R "span[hosts=1]"', osprey()), "osprey", "fat")
    assert v.estimated_start == NOW
    p = run('#BSUB -q normal\n#BSUB -n 100\n#BSUB -R "span[hosts=1]"', osprey())
    assert reasons(p, "osprey") == "queue normal: needs 100 slots per host, largest host " \
        "has 40"


def test_lsf_queue_users_refuse_a_user_outside_them():
    # dave is no chemist: fat refuses him (and the 100-CPU job has nowhere else)
    p = run('#BSUB -q fat\n#BSUB -n 100\n#BSUB -R "span[hosts=1]"', osprey(user="dave"))
    assert p.verdict("osprey").verdict == "RESTRICTED"
    assert reasons(p, "osprey") == "you (dave) are not among queue fat's USERS (ug_chem/): " \
        "bsub refuses it"
    p = run('#BSUB -q vip\n#BSUB -n 4', osprey())
    assert reasons(p, "osprey") == "you (alice) are not among queue vip's USERS (bob): " \
        "bsub refuses it"
    only(run('#BSUB -q vip\n#BSUB -n 4', osprey(user="bob")), "osprey", "vip")
    # user groups not known: taken, with a note
    v = only(run('#BSUB -q fat\n#BSUB -n 8', osprey(user="dave", ugroups="")), "osprey", "fat")
    assert has_note(v, "queue fat takes the users of ug_chem (USERS), whose members are not "
                       "known here")


def test_lsf_m_names_a_host_group():
    # -m hg_fat: only f1-f2, so the fat queue (normal's hosts are none of them)
    v = only(run('#BSUB -m hg_fat\n#BSUB -n 8', osprey()), "osprey", "fat")
    assert v.estimated_start == NOW
    p = run('#BSUB -q normal\n#BSUB -m hg_fat\n#BSUB -n 8', osprey())
    assert reasons(p, "osprey").startswith("queue normal uses none of the hosts -m names "
                                           "(hg_fat): bsub refuses it")
    # a group or host the site does not have
    p = run('#BSUB -m "hg_nosuch c9"\n#BSUB -n 8', osprey())
    assert reasons(p, "osprey") == ("-m names hg_nosuch, c9: neither a host nor a host "
                                    "group here (host groups: hg_big, hg_cpu, hg_fat)")
    # hosts that cannot hold it: 64 CPUs on one host among c1-c2
    p = run('#BSUB -m "c1 c2"\n#BSUB -n 64\n#BSUB -R "span[hosts=1]"', osprey())
    assert reasons(p, "osprey") == ("the hosts -m names (c1 c2) cannot run it: needs 64 "
                                    "slots per host, largest host has 40")


def test_lsf_groups_read_nested_and_wide():
    from diamond_jupyter.dialects.lsf_commands import expand_hosts, parse_groups

    g = parse_groups("GROUP_NAME    HOSTS\nhg_a   h1 h2\nhg_b   hg_a/ h3\nhg_all  all\n")
    assert g == {"hg_a": ["h1", "h2"], "hg_b": ["h1", "h2", "h3"], "hg_all": ["all"]}
    assert expand_hosts(["hg_all", "~h2"], g, ["h1", "h2", "h3"]) == ["h1", "h3"]
    assert expand_hosts(["hg_b+2", "h4"], g, None) == ["h1", "h2", "h3", "h4"]
    assert expand_hosts(["nogroup/"], g, ["h1"]) is None
    assert parse_groups("") is None


# --------------------------------------------------------------- LLN and node Weight

def test_lln_puts_the_job_on_the_least_loaded_node():
    # compute has LLN=YES: n1 runs 40 CPUs, n2 24, n3 8, n4 none: an 8-CPU job starts on n4
    # (48 idle), a two-node one on n4 and n3
    site = titan(alloc={"n1": 40, "n2": 24, "n3": 8})
    assert {p.name: p.lln for p in site[1].partitions}["compute"] is True
    v = only(run("#SBATCH -c 8\n#SBATCH -p compute", site), "titan", "compute")
    assert has_note(v, "partition compute puts jobs on the least loaded nodes (LLN): it "
                       "starts on n4 (48 of 48 CPUs idle)")
    v = run("#SBATCH -N 2\n#SBATCH -c 8\n#SBATCH -p compute", site).verdict("titan")
    assert has_note(v, "it starts on n4 (48 of 48 CPUs idle), n3 (40 of 48 CPUs idle)")


def test_nodes_of_the_lowest_weight_are_used_first():
    # long (LLN=NO) holds n3 (Weight 10) and n4 (Weight 1): the job starts on n4; with n4
    # full, on n3
    lines = [line.replace("Weight=1 ", "Weight=10 ") if line.startswith("NodeName=n3 ")
             else line for line in node_lines().splitlines()]
    snap = slurm.parse_snapshot("titan", {"partitions": PARTITIONS, "nodes": "\n".join(lines)})
    snap = snap.model_copy(update={"taken_at": NOW})
    assert {n.name: n.weight for n in snap.nodes}["n3"] == 10
    cfg = SiteConfig(name="titan")
    v = only(run("#SBATCH -p long\n#SBATCH -c 4", (cfg, snap)), "titan", "long")
    assert has_note(v, "partition long: nodes of the lowest Weight are used first: it starts "
                       "on n4 (Weight 1)")


# --------------------------------------------------------------- Slurm: sharing nodes

FORCE4 = PARTITIONS.replace(
    "Hidden=NO OverSubscribe=NO PreemptMode=OFF State=UP TotalCPUs=192 TotalNodes=4",
    "Hidden=NO OverSubscribe=FORCE:4 PreemptMode=OFF State=UP TotalCPUs=192 TotalNodes=4")


def test_oversubscribe_force_starts_a_job_on_full_nodes():
    # compute shares each CPU among 4 jobs (FORCE:4): n1-n4 are full (one 48-CPU job
    # each) yet an 8-CPU job starts now, sharing; long (the same n3-n4, no sharing) would
    # wait 1 h
    jobs = [running(str(i), "bob", f"n{i}", 48, 3, 4) for i in range(1, 5)]
    site = titan(*jobs, alloc={f"n{i}": 48 for i in range(1, 5)}, partitions=FORCE4)
    v = only(run("#SBATCH -c 8", site), "titan", "compute")
    assert v.verdict == "READY"
    assert has_note(v, "sharing CPUs with the jobs there (OverSubscribe=FORCE:4")
    v = run("#SBATCH -c 8\n#SBATCH -p long", site).verdict("titan")
    assert v.estimated_start == NOW + timedelta(hours=1)


def test_oversubscribe_force_2_full_with_two_jobs_a_cpu():
    # FORCE:2 and two 48-CPU jobs on each node: no room until one ends (+1 h on n2)
    text = FORCE4.replace("OverSubscribe=FORCE:4", "OverSubscribe=FORCE:2")
    jobs = [running(f"{i}{k}", "bob", f"n{i}", 48, 2 if (i, k) == (2, 1) else 1, 3)
            for i in range(1, 5) for k in (1, 2)]
    site = titan(*jobs, alloc={f"n{i}": 48 for i in range(1, 5)}, partitions=text)
    v = run("#SBATCH -c 8\n#SBATCH -p compute", site).verdict("titan")
    assert v.verdict == "BUSY" and v.estimated_start == NOW + timedelta(hours=1)


def test_exclusive_user_shares_nodes_with_the_users_own_jobs_only():
    # n1 runs bob's 8 CPUs, n2 alice's 8, n3-n4 bob's 48 (ending in 2 h): alice's
    # --exclusive=user job starts now on n2 only; probed as carol, n2 is another's too
    # and she waits for an empty node (n3 or n4, +2 h)
    jobs = [running("1", "bob", "n1", 8, 1, 4), running("2", "alice", "n2", 8, 1, 4),
            running("3", "bob", "n3", 48, 2, 4), running("4", "bob", "n4", 48, 2, 4)]
    alloc = {"n1": 8, "n2": 8, "n3": 48, "n4": 48}
    v = run("#SBATCH --exclusive=user\n#SBATCH -c 8\n#SBATCH -p compute",
            titan(*jobs, alloc=alloc)).verdict("titan")
    assert v.verdict == "READY"
    assert has_note(v, "it starts now on n2, whose running jobs are all yours")
    v = run("#SBATCH --exclusive=user\n#SBATCH -c 8\n#SBATCH -p compute",
            titan(*jobs, alloc=alloc, assoc="carol")).verdict("titan")
    assert v.estimated_start == NOW + timedelta(hours=2)
    # without it, n1 has room now
    v = run("#SBATCH -c 8\n#SBATCH -p compute", titan(*jobs, alloc=alloc, assoc="carol"))
    assert v.verdict("titan").verdict == "READY"


def test_mem_zero_takes_whole_nodes():
    # --mem=0: all of a node's memory, so the whole node: n1-n4 each run an 8-CPU job
    # (ending in 1, 2, 3, 4 h): +1 h; 2 nodes: +2 h
    jobs = [running(str(i), "bob", f"n{i}", 8, 4 - i, 4) for i in range(1, 5)]
    site = titan(*jobs, alloc={f"n{i}": 8 for i in range(1, 5)})
    v = run("#SBATCH --mem=0\n#SBATCH -c 4\n#SBATCH -p compute", site).verdict("titan")
    assert v.estimated_start == NOW + timedelta(hours=1)
    v = run("#SBATCH --mem=0\n#SBATCH -N 2\n#SBATCH -p compute", site).verdict("titan")
    assert v.estimated_start == NOW + timedelta(hours=2)


def test_billing_weights_do_not_change_where_a_job_fits():
    text = PARTITIONS.replace("PriorityTier=1 Hidden=NO OverSubscribe=NO PreemptMode=OFF "
                              "State=UP TotalCPUs=192",
                              "PriorityTier=1 Hidden=NO OverSubscribe=NO PreemptMode=OFF "
                              "State=UP TRESBillingWeights=CPU=1.0,Mem=0.25G TotalCPUs=192")
    assert "TRESBillingWeights" in text
    v = only(run("#SBATCH -c 48\n#SBATCH --mem=180G\n#SBATCH -p compute",
                 titan(partitions=text)), "titan", "compute")
    assert v.verdict == "READY"


def test_partition_qos_caps_cpus_per_node():
    # compute's QOS perNode: MaxTRESPerNode cpu=32: 40 CPUs on one node cannot run there;
    # two nodes of 20 can; naming no partition, the 40-CPU job goes to long
    text = PARTITIONS.replace("PartitionName=compute AllowGroups=ALL",
                              "PartitionName=compute QoS=perNode AllowGroups=ALL")
    site = titan(partitions=text, qos=QOS + "perNode||cpu=32||||||||\n")
    p = run("#SBATCH -p compute\n#SBATCH -c 40", site)
    assert reasons(p, "titan") == "needs 40 CPUs per node, partition compute's QOS perNode " \
        "allows 32 (MaxTRESPerNode cpu=32)"
    p = run("#SBATCH -p compute\n#SBATCH -N 1\n#SBATCH -n 2\n#SBATCH -c 20", site)
    assert "MaxTRESPerNode" in reasons(p, "titan")  # 40 on one node, still
    only(run("#SBATCH -p compute\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n#SBATCH -c 20",
             site), "titan", "compute")
    only(run("#SBATCH -c 40\n#SBATCH -t 1:00:00", site), "titan", "long")


def test_mig_profiles_are_gpu_types_of_their_own():
    # m1: an A100 split into MIG slices: 2 of 4g.40gb (socket 0) and 2 of 3g.20gb
    line = ("NodeName=m1 Arch=x86_64 CPUAlloc=0 CPUTot=64 RealMemory=512000 AllocMem=0 "
            "Sockets=2 ThreadsPerCore=1 Gres=gpu:4g.40gb:2(S:0),gpu:3g.20gb:2(S:1) "
            "GresUsed=gpu:4g.40gb:0(IDX:N/A),gpu:3g.20gb:0(IDX:N/A) State=IDLE Partitions=mig")
    parts = slurm.parse_partitions("PartitionName=mig Default=YES MaxTime=1-00:00:00 "
                                   "Nodes=m1 State=UP")
    from diamond_jupyter.model import SiteSnapshot
    site = (SiteConfig(name="mig"), SiteSnapshot(site="mig", taken_at=NOW, partitions=parts,
                                                 nodes=slurm.parse_nodes(line)))
    only(run("#SBATCH --gres=gpu:4g.40gb:2", site), "mig", "mig")
    only(run("#SBATCH --gres=gpu:3g.20gb:1", site), "mig", "mig")
    assert reasons(run("#SBATCH --gres=gpu:4g.40gb:3", site), "mig") == \
        "needs 3 GPUs of type '4g.40gb' per node, largest node has 2 of them"
    assert reasons(run("#SBATCH --gres=gpu:a100:1", site), "mig").startswith(
        "no GPU of type 'a100'")
    assert reasons(run("#SBATCH --gres=gpu:1g.10gb:1", site), "mig").startswith(
        "no GPU of type '1g.10gb'")


def test_mig_slices_are_counted_apart():
    from diamond_jupyter.dialects.outputs_common import gpu_count, gpu_types

    # a MIG profile starts with a digit: read as a type, not as a count
    gres = "gpu:4g.40gb:2(S:0),gpu:3g.20gb:2(S:1)"
    assert gpu_count(gres)[0] == 4
    assert gpu_types(gres) == {"4g.40gb": 2, "3g.20gb": 2}
    assert gpu_count("gpu:2") == (2, None) and gpu_count("gres/gpu=1") == (1, None)


# --------------------------------------------------------------- PBS: server limits, vnodes

def test_pbs_server_resources_max_bounds_a_queue_that_sets_none():
    # the server's resources_max.walltime 12 h applies to gpu (which sets no walltime of
    # its own); workq's own 24 h wins over it
    import json
    queues = json.loads(json.dumps(KESTREL_QUEUES))
    del queues["gpu"]["resources_max"]["walltime"]
    site = kestrel(queues=queues, server={"resources_max": {"walltime": "12:00:00"},
                                          "resources_default": {"walltime": "01:00:00"}})
    parts = {p.name: p for p in site[1].partitions}
    assert (parts["gpu"].max_time_s, parts["workq"].max_time_s) == (12 * 3600, 24 * 3600)
    assert parts["gpu"].default_time_s == 3600
    p = run("#PBS -q gpu\n#PBS -l select=1:ncpus=8:ngpus=1\n#PBS -l walltime=20:00:00", site)
    assert reasons(p, "kestrel") == "walltime 20:00:00 above queue gpu " \
        "resources_max.walltime 12:00:00"
    v = only(run("#PBS -q workq\n#PBS -l select=1:ncpus=8\n#PBS -l walltime=20:00:00", site),
             "kestrel", "workq")
    # a job that gives no walltime runs with the server's default
    v = only(run("#PBS -q gpu\n#PBS -l select=1:ncpus=8:ngpus=1", site), "kestrel", "gpu")
    assert v.estimated_runtime_s == pytest.approx(3600)


def test_pbs_place_excl_waits_for_an_empty_host():
    # every vnode runs one 8-CPU job of bob's, k1's ending first (in 1 h): a job of 4 CPUs
    # asking place=excl waits for it; without excl it starts now beside them
    jobs = tuple(_pbs_job(str(i), "bob", "big", 8, started_h=3 if i == 1 else 1,
                          host=f"k{i}") for i in range(1, 7))
    v = run("#PBS -q workq\n#PBS -l select=1:ncpus=4\n#PBS -l place=excl\n"
            "#PBS -l walltime=1:00:00", kestrel(*jobs)).verdict("kestrel")
    assert v.estimated_start == NOW + timedelta(hours=1)
    v = run("#PBS -q workq\n#PBS -l select=1:ncpus=4\n#PBS -l walltime=1:00:00",
            kestrel(*jobs)).verdict("kestrel")
    assert v.estimated_start == NOW


def test_pbs_ngpus_on_vnodes():
    # k5-k6 hold 4 GPUs each: 4 in one chunk fit one of them, 6 none, two chunks of 4 both
    v = only(run("#PBS -q gpu\n#PBS -l select=1:ncpus=8:ngpus=4", kestrel()), "kestrel", "gpu")
    assert v.estimated_start == NOW
    p = run("#PBS -q gpu\n#PBS -l select=1:ncpus=8:ngpus=6", kestrel())
    assert reasons(p, "kestrel") == "needs 6 GPUs per vnode, largest vnode has 4"
    only(run("#PBS -q gpu\n#PBS -l select=2:ncpus=8:ngpus=4", kestrel()), "kestrel", "gpu")
    # 12 GPUs in all: more than the site's 8 (the first reason, before any queue's)
    p = run("#PBS -q gpu\n#PBS -l select=3:ncpus=8:ngpus=4", kestrel())
    assert reasons(p, "kestrel") == ("the chunks 3:ncpus=8:ngpus=4 do not fit the site's "
                                     "nodes together (free placement): they ask 12 GPUs in "
                                     "all, the nodes that can hold them have 8")


# --------------------------------------------------------------- LSF: closed hosts

def test_lsf_closed_hosts():
    # f1 closed by the administrator, f2 full (closed_Full): a 100-CPU job on one host in
    # the fat queue waits for f2 (not refused); with both closed_Adm it cannot run there
    cfg, snap = osprey()
    for n in snap.nodes:
        if n.name == "f1":
            n.state = "closed_adm"
        if n.name == "f2":
            n.state, n.cpus_allocated = "closed_full", 128
    v = run('#BSUB -q fat\n#BSUB -n 100\n#BSUB -R "span[hosts=1]"', (cfg, snap)).verdict(
        "osprey")
    assert v.feasible and v.verdict == "BUSY"
    snap.nodes[5].state = "closed_adm"
    p = run('#BSUB -q fat\n#BSUB -n 100\n#BSUB -R "span[hosts=1]"', (cfg, snap))
    assert reasons(p, "osprey") == "needs 1 host, queue fat has only 0 usable (others " \
        "closed_adm f[1-2])"


# --------------------------------------------------------------- Grid Engine calendars

def test_grid_engine_queue_suspended_by_its_calendar_takes_no_job():
    # short.q's calendar has it suspended (state C) on both hosts: a job naming it cannot
    # start there; all.q takes it
    from test_placement_cases4 import OUT

    from diamond_jupyter.dialects.sge_commands import SgeCommands
    from diamond_jupyter.model import Node, SiteSnapshot

    text = (OUT / "sge" / "qconf_sq_all.txt").read_text()
    queues = SgeCommands()._partitions(text, [
        {"queue": q, "host": f"s{i}", "state": "C" if q == "short.q" else "", "total": 16}
        for q in ("all.q", "short.q") for i in (1, 2)])
    nodes = [Node(name=f"s{i}", state="idle", cpus=16, memory_mb=64000,
                  partitions=["all.q", "short.q"]) for i in (1, 2)]
    site = (SiteConfig(name="sgeq", scheduler="sge"),
            SiteSnapshot(site="sgeq", taken_at=NOW, nodes=nodes, partitions=queues))
    assert reasons(run("#$ -q short.q\n#$ -l h_rt=0:10:00", site), "sgeq") == \
        "queue 'short.q' is DOWN"
    only(run("#$ -l h_rt=0:10:00", site), "sgeq", "all.q")


# --------------------------------------------------------------- Slurm: GPU socket binding

def _bound_site():
    """b1: 2 sockets of 32 cores, two A100 bound to each socket; a1: the same with its
    four GPUs bound to both sockets (S:0-1)."""
    from diamond_jupyter.model import SiteSnapshot

    lines = "\n".join(
        f"NodeName={name} Arch=x86_64 CoresPerSocket=32 CPUAlloc=0 CPUTot=64 "
        f"RealMemory=512000 AllocMem=0 Sockets=2 ThreadsPerCore=1 Gres={gres} "
        f"GresUsed=gpu:a100:0(IDX:N/A) State=IDLE Partitions={part}"
        for name, gres, part in (("b1", "gpu:a100:2(S:0),gpu:a100:2(S:1)", "bound"),
                                 ("a1", "gpu:a100:4(S:0-1)", "any")))
    parts = slurm.parse_partitions(
        "PartitionName=bound Default=YES MaxTime=1-00:00:00 Nodes=b1 State=UP\n"
        "PartitionName=any Default=NO MaxTime=1-00:00:00 Nodes=a1 State=UP\n")
    return (SiteConfig(name="bnd"), SiteSnapshot(site="bnd", taken_at=NOW, partitions=parts,
                                                 nodes=slurm.parse_nodes(lines)))


def test_gres_binding_keeps_cpus_on_the_gpus_socket():
    site = _bound_site()
    nodes = {n.name: n for n in site[1].nodes}
    assert nodes["b1"].gpu_sockets == {0: 2, 1: 2} and nodes["a1"].gpu_sockets is None
    # one GPU and 40 CPUs bound to it: its socket has 32 (b1); a1's GPU serves any socket
    bound = "#SBATCH --gres=gpu:1\n#SBATCH -c 40\n#SBATCH --gres-flags=enforce-binding\n"
    p = run(bound + "#SBATCH -p bound", site)
    assert reasons(p, "bnd") == ("partition bound: --gres-flags=enforce-binding: its 40 "
                                 "CPUs a node must be on the sockets of its 1 GPU, which "
                                 "hold at most 32 CPUs on its nodes")
    # a site of bound GPUs only: said once for the site
    cfg, snap = site
    alone = (cfg, snap.model_copy(update={
        "nodes": [n for n in snap.nodes if n.name == "b1"],
        "partitions": [q for q in snap.partitions if q.name == "bound"]}))
    assert reasons(run(bound, alone), "bnd") == (
        "--gres-flags=enforce-binding: its 40 CPUs a node must be on the sockets of its 1 "
        "GPU, which hold at most 32 CPUs on any node")
    only(run(bound, site), "bnd", "any")
    # three GPUs span both of b1's sockets: 64 CPUs; without the flag any CPUs serve
    only(run("#SBATCH --gres=gpu:3\n#SBATCH -c 40\n#SBATCH --gres-flags=enforce-binding\n"
             "#SBATCH -p bound", site), "bnd", "bound")
    only(run("#SBATCH --gres=gpu:1\n#SBATCH -c 40\n#SBATCH -p bound", site), "bnd", "bound")


# --------------------------------------------------------------- more limits in use

def test_a_group_node_limit_in_use():
    # QOS nodes2: GrpTRES node=2; two one-node jobs under it (ending in 1 h and 2 h): a
    # one-node job waits 1 h, a two-node job 2 h (QOSGrpNodeLimit)
    site = titan(running("1", "bob", "n1", 4, 3, 4), running("2", "carol", "n2", 4, 2, 4),
                 qos_of={"1": "nodes2", "2": "nodes2"}, alloc={"n1": 4, "n2": 4},
                 qos=QOS + "nodes2||||node=2|||||\n")
    v = run("#SBATCH -q nodes2\n#SBATCH -c 4\n#SBATCH -p compute", site).verdict("titan")
    assert v.estimated_start == NOW + timedelta(hours=1) and has_note(v, "QOSGrpNodeLimit")
    v = run("#SBATCH -q nodes2\n#SBATCH -N 2\n#SBATCH -p compute", site).verdict("titan")
    assert v.estimated_start == NOW + timedelta(hours=2)


def test_a_per_user_gpu_limit_in_use():
    # QOS gpu4: MaxTRESPerUser gres/gpu=4; alice runs 3 GPUs on g1 (2 h left): 2 more wait
    # for it (QOSMaxGRESPerUser), 1 more starts now
    site = titan(running("1", "alice", "g1", 8, 2, 4, "gpu", gpus=3), qos_of={"1": "gpu4"},
                 alloc={"g1": 8}, qos=QOS + "gpu4|||gres/gpu=4||||||\n")
    v = run("#SBATCH -q gpu4\n#SBATCH -p gpu\n#SBATCH --gres=gpu:2", site).verdict("titan")
    assert v.estimated_start == NOW + timedelta(hours=2) and has_note(v, "QOSMaxGRESPerUser")
    v = run("#SBATCH -q gpu4\n#SBATCH -p gpu\n#SBATCH --gres=gpu:1", site).verdict("titan")
    assert v.verdict == "READY"


def test_the_partition_qos_and_the_jobs_qos_both_hold_it():
    # compute's QOS few (GrpJobs 3: three jobs of others in compute, the first ending in
    # 1 h) and the job's QOS normal (MaxTRESPerUser cpu=64: alice's own 48 CPUs under
    # normal end in 2 h): 20 CPUs start when both allow, +2 h
    text = PARTITIONS.replace("PartitionName=compute AllowGroups=ALL",
                              "PartitionName=compute QoS=few AllowGroups=ALL")
    site = titan(running("1", "bob", "n1", 4, 3, 4), running("2", "carol", "n1", 4, 2, 4),
                 running("3", "dave", "n2", 4, 1, 4), running("4", "alice", "n3", 48, 2, 4,
                                                              partition="long"),
                 qos_of={"4": "normal"}, alloc={"n1": 8, "n2": 4, "n3": 48}, partitions=text)
    v = run("#SBATCH -q normal\n#SBATCH -c 20\n#SBATCH -p compute", site).verdict("titan")
    assert v.estimated_start == NOW + timedelta(hours=2)
    assert has_note(v, "QOSGrpJobsLimit") and has_note(v, "QOSMaxCpuPerUserLimit")


def test_waiting_jobs_do_not_use_a_group_limit():
    # team's GrpTRES cpu=96: bob's 90 CPUs wait (pending) under it, nothing runs: the job
    # starts now (pending jobs count only against submit limits)
    site = titan(pending("1", "bob", 48), pending("2", "bob", 42),
                 qos_of={"1": "team", "2": "team"})
    v = run("#SBATCH -q team\n#SBATCH -c 48\n#SBATCH -p long", site).verdict("titan")
    assert v.verdict == "READY"


def test_a_site_held_by_a_qos_loses_to_a_free_one():
    # titan: team's GrpTRES in use holds the job 1 h; kestrel (PBS, idle) starts it now
    site = titan(running("101", "bob", "n1", 48, 3, 4), running("102", "carol", "n2", 48, 1, 4),
                 qos_of={"101": "team", "102": "team"}, alloc={"n1": 48, "n2": 48})
    p = run("#SBATCH -q team\n#SBATCH -c 8\n#SBATCH -t 1:00:00", site, kestrel())
    assert p.choice == "kestrel"
    assert p.why_not("titan").startswith("finishes 1:00:00 later: starts later (+1:00:00 vs "
                                         "+0:00:00)")


def test_pbs_named_user_limit_and_gpu_run_limit():
    # bob's own workq entry (4 running): with 4 running he waits for the first to end
    # (+1 h); gpu queue: max_run_res.ngpus [u:PBS_GENERIC=4], alice runs 4 GPUs (2 h left)
    # (workq's max_queued left out here: bob's 4 would fill it)
    import json
    queues = json.loads(json.dumps(KESTREL_QUEUES))
    del queues["workq"]["max_queued"]
    jobs = tuple(_pbs_job(str(i), "bob", "workq", 2, started_h=3 if i == 1 else 1)
                 for i in range(1, 5))
    v = run("#PBS -q workq\n#PBS -l select=1:ncpus=2",
            kestrel(*jobs, user="bob", queues=queues)).verdict("kestrel")
    assert v.estimated_start == NOW + timedelta(hours=1)
    assert any("max_run [u:bob=4]" in n for n in v.notes), v.notes
    queues = json.loads(json.dumps(KESTREL_QUEUES))
    queues["gpu"]["max_run_res"] = {"ngpus": "[u:PBS_GENERIC=4]"}
    site = kestrel(_pbs_job("9", "alice", "gpu", 8, started_h=2, host="k5", ngpus=4),
                   queues=queues)
    v = run("#PBS -q gpu\n#PBS -l select=1:ncpus=8:ngpus=2", site).verdict("kestrel")
    assert v.estimated_start == NOW + timedelta(hours=2)
    assert any("max_run_res.ngpus [u:PBS_GENERIC=4]: your running jobs in it hold 4 GPUs"
               in n for n in v.notes), v.notes


def test_lsf_m_others_and_exclusions():
    # -m "others ~c1 ~c2 ~c3 ~c4": any host but the four small ones; 100 CPUs on one host
    # go to a fat one (f1 or f2)
    v = only(run('#BSUB -m "others ~c1 ~c2 ~c3 ~c4"\n#BSUB -n 100\n'
                 '#BSUB -R "span[hosts=1]"', osprey()), "osprey", "fat")
    assert v.estimated_start == NOW
    # -m "hg_cpu ~c1": c2-c4, in normal
    only(run('#BSUB -m "hg_cpu ~c1"\n#BSUB -n 8', osprey()), "osprey", "normal")


def test_lsf_queue_users_all_but_one():
    # a queue of USERS `all ~dave`: alice is taken, dave refused
    cfg, snap = osprey()
    snap.partitions[3].allowed_users = ["all", "~dave"]
    only(run("#BSUB -q vip\n#BSUB -n 4", (cfg, snap)), "osprey", "vip")
    snap = snap.model_copy(update={"user": "dave"})
    assert reasons(run("#BSUB -q vip\n#BSUB -n 4", (cfg, snap)), "osprey") == \
        "queue vip excludes you (dave) in its USERS (all ~dave): bsub refuses it"


def test_the_accounts_own_default_qos():
    # alice: account proj defaults to debug (30 min), account long defaults to normal; a
    # 1-hour job is refused under proj, taken under long
    assoc = "user|alice\nalice|proj||debug|debug,normal\nalice|longacct||normal|normal\n"
    cfg, snap = titan()
    snap = snap.model_copy(update=dict(zip(("user", "associations"), parse_assoc(assoc),
                                           strict=True)))
    p = run("#SBATCH -A proj\n#SBATCH -c 4\n#SBATCH -t 1:00:00\n#SBATCH -p compute",
            (cfg, snap))
    assert reasons(p, "titan") == "walltime 1:00:00 above the job's QOS debug MaxWall 0:30:00"
    only(run("#SBATCH -A longacct\n#SBATCH -c 4\n#SBATCH -t 1:00:00\n#SBATCH -p compute",
             (cfg, snap)), "titan", "compute")
    # no account named and the two disagree: the default QOS is not known, not checked
    v = only(run("#SBATCH -c 4\n#SBATCH -t 1:00:00\n#SBATCH -p compute", (cfg, snap)),
             "titan", "compute")
    assert not has_note(v, "default QOS")


def test_a_pending_array_counts_each_task_against_a_submit_limit():
    # capped: MaxSubmitJobsPerUser=3; alice has one pending array of tasks 1-2 (two jobs
    # to Slurm) and nothing else: one more is taken; an array of 1-3 fills the limit
    line = pending("50_[1-2]", "alice", 2)
    site = titan(line, qos_of={"50_[1-2]": "capped"})
    assert run("#SBATCH -q capped\n#SBATCH -c 2\n#SBATCH -p compute", site).verdict(
        "titan").feasible
    site = titan(pending("50_[1-3%1]", "alice", 2), qos_of={"50_[1-3%1]": "capped"})
    assert "you have 3 jobs queued or running under it" in reasons(
        run("#SBATCH -q capped\n#SBATCH -c 2\n#SBATCH -p compute", site), "titan")


# --------------------------------------------------------------- Grid Engine host complexes

def _qhost_host(name: str, slots_cap: int | None, gpus: int | None) -> str:
    res = "".join(f"<resourcevalue name='{k}' dominance='hc'>{v}</resourcevalue>"
                  for k, v in (("slots", slots_cap), ("gpu", gpus)) if v is not None)
    return (f"<host name='{name}'><hostvalue name='arch_string'>lx-amd64</hostvalue>"
            "<hostvalue name='num_proc'>32</hostvalue><hostvalue name='load_avg'>0.10"
            "</hostvalue><hostvalue name='mem_total'>125.8G</hostvalue>"
            f"{res}<queue name='all.q'><queuevalue qname='all.q' name='qtype_string'>BIP"
            "</queuevalue><queuevalue qname='all.q' name='slots_used'>0</queuevalue>"
            "<queuevalue qname='all.q' name='slots'>32</queuevalue></queue></host>")


def gecko():
    """Grid Engine, read as the probe reads it: s1 and s2 of 32 cores, all.q offers 32
    slots on each; s1's own complex_values cap it at 16 slots (`slots=16` on the host),
    s2 has `gpu=4`. PE smp puts every slot on one host."""
    from test_placement_cases5 import _pe

    from diamond_jupyter.dialects.sge_commands import SgeCommands

    qhost = ("<?xml version='1.0'?><qhost>" + _qhost_host("s1", 16, None)
             + _qhost_host("s2", None, 4) + "</qhost>")
    qstat = ("<?xml version='1.0'?><job_info><queue_info>" + "".join(
        f"<Queue-List><name>all.q@{h}</name><qtype>BIP</qtype><slots_used>0</slots_used>"
        f"<slots_resv>0</slots_resv><slots_total>32</slots_total><arch>lx-amd64</arch>"
        "</Queue-List>" for h in ("s1", "s2")) + "</queue_info><job_info></job_info></job_info>")
    outputs = {"hosts": qhost, "queue": qstat, "pes": "smp\n", "pe_rules": _pe("smp", "$pe_slots"),
               "queues": "qname all.q\nhostlist @allhosts\nslots 32\npe_list smp\n"
                         "h_rt INFINITY\nh_vmem INFINITY\n"}
    snap = SgeCommands().parse_snapshot("gecko", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="gecko", scheduler="sge"), snap


def test_grid_engine_host_slots_cap_below_the_queues():
    nodes = {n.name: n for n in gecko()[1].nodes}
    assert (nodes["s1"].cpus, nodes["s2"].cpus, nodes["s2"].gpus) == (16, 32, 4)
    # 24 slots on one host: s1's host cap (16) rules it out, s2 takes it
    v = only(run("#$ -pe smp 24\n#$ -l h_rt=1:00:00", gecko()), "gecko", "all.q")
    assert v.estimated_start == NOW
    p = run("#$ -pe smp 40\n#$ -l h_rt=1:00:00", gecko())
    assert reasons(p, "gecko") == "needs 40 slots per host, largest host has 32"


def test_grid_engine_gpu_complex_of_a_host():
    only(run("#$ -l gpu=2\n#$ -pe smp 8\n#$ -l h_rt=1:00:00", gecko()), "gecko", "all.q")
    p = run("#$ -l gpu=6\n#$ -l h_rt=1:00:00", gecko())
    assert reasons(p, "gecko") == "needs 6 GPUs per host, largest host has 4"
