"""A running job gives back exactly the nodes squeue lists for it (%N, read by the same
squeue call as the rest of the queue): the plan frees those nodes at its end, not others
of its partition, so which nodes free up when decides where the probe fits."""

from __future__ import annotations

from datetime import datetime, timezone

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.model import JobSpec, Resources
from diamond_jupyter.placement import place

NOW = datetime(2026, 11, 29, 17, 30, tzinfo=timezone.utc)

# c1 and c2, 8 CPUs each, both taken whole; partition "all" holds both, "a" c1, "b" c2
NODES = "\n".join(
    f"NodeName={n} CPUAlloc=8 CPUEfctv=8 CPUTot=8 RealMemory=16000 AllocMem=0 "
    f"State=ALLOCATED Partitions=all,{p}" for n, p in (("c1", "a"), ("c2", "b")))
PARTITIONS = "\n".join(
    f"PartitionName={p} Default={d} MaxTime=02:00:00 Nodes={nodes} State=UP "
    f"TotalCPUs={8 * k} TotalNodes={k}"
    for p, d, nodes, k in (("all", "YES", "c[1-2]", 2), ("a", "NO", "c1", 1),
                           ("b", "NO", "c2", 1)))


def queue(short_on: str, long_on: str) -> str:
    """Two running jobs of partition "all", both begun at 17:20: one of a 20-minute limit
    (ends in 10 min) on `short_on`, one of 60 minutes (ends in 50) on `long_on`; and, ahead
    of the probe, job 30 of partition "b" (c2), waiting for resources, Slurm's estimate the
    short job's end (squeue's %i|%T|%S|%e|%V|%l|%D|%C|%u|%P|%b|%N|%r|%k|%M|%j)."""
    return "\n".join([
        f"10|RUNNING|2026-11-29T17:20:00|2026-11-29T17:40:00|2026-11-29T17:19:00|20:00|1|8|"
        f"other|all|N/A|{short_on}|None|(null)|10:00|short",
        f"11|RUNNING|2026-11-29T17:20:00|2026-11-29T18:20:00|2026-11-29T17:19:00|1:00:00|1|8|"
        f"other|all|N/A|{long_on}|None|(null)|10:00|long",
        "30|PENDING|2026-11-29T17:40:00|2026-11-29T18:00:00|2026-11-29T17:25:00|20:00|1|8|"
        "other|b|N/A||Resources|(null)|0:00|waiter",
    ])


def start_min(short_on: str, long_on: str) -> float:
    """Minutes from now to the raw start of an 8-CPU, 30-minute probe on partition "a"."""
    snap = SlurmCommands(tz=timezone.utc).parse_snapshot(
        "s", {"nodes": NODES, "partitions": PARTITIONS, "queue": queue(short_on, long_on)})
    assert {j.native_id: j.node_list for j in snap.running} == {"10": short_on,
                                                               "11": long_on}
    probe = JobSpec(name="probe", queue="a", resources=Resources(
        nodes=1, tasks=1, cpus_per_task=8, walltime_s=1800))
    p = place(probe, [(SiteConfig(name="s"), snap)], now=NOW)
    v = p.verdict("s")
    assert v is not None and v.raw_start is not None, p.explain()
    return (v.raw_start - NOW).total_seconds() / 60


def test_the_probe_gets_c1_when_the_job_listed_there_ends():
    # the short job runs on c1: c1 frees in 10 minutes, and job 30 may not use it
    assert start_min("c1", "c2") == 10


def test_the_probe_waits_for_the_long_job_listed_on_its_node():
    # the short job runs on c2: job 30 takes c2 then, c1 frees only with the long job
    assert start_min("c2", "c1") == 50
