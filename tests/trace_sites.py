"""Slurm sites loaded with a real center's queue at one moment of its SWF log
(../shared/traces): the jobs running then on the nodes they would hold, the jobs waiting
then in the order they came, each with the time limit its user asked. For the placement
sweeps that judge decisions against real queue states (test_placement_unseen*.py)."""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from math import ceil
from pathlib import Path

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.model import JobState, JobStatus, Node, Partition, SiteSnapshot


def traces_dir() -> Path:
    """The shared real logs: beside the checkout (CI), else the workplace's copy."""
    relative = Path(__file__).resolve().parents[2] / "shared" / "traces"
    return relative if relative.is_dir() else Path("/work/shared/traces")


KTH = "KTH-SP2-1996-2.1-cln.swf.gz"  # IBM SP2, 100 single-processor nodes
HPC2N = "HPC2N-2002-2.1-cln.swf.gz"  # Seth, 240 processors (120 nodes of two)


@dataclass(frozen=True)
class LogJob:
    """One job of an SWF log that ran (seconds from the log's start)."""

    number: int
    submit: float
    wait: float
    run: float
    procs: int
    asked_s: float  # its requested time; -1 where the log does not say
    user: int

    @property
    def start(self) -> float:
        return self.submit + max(self.wait, 0.0)

    @property
    def end(self) -> float:
        return self.start + self.run


@lru_cache(maxsize=2)
def log_jobs(name: str) -> tuple[LogJob, ...]:
    """The jobs of log `name` that ran (runtime and processors known), in submit order."""
    jobs = []
    with gzip.open(traces_dir() / name, "rt") as fh:
        for line in fh:
            if line.startswith(";") or not line.strip():
                continue
            f = line.split()
            procs = int(f[4]) if int(f[4]) > 0 else int(f[7])
            if float(f[3]) <= 0 or procs <= 0:
                continue
            jobs.append(LogJob(int(f[0]), float(f[1]), float(f[2]), float(f[3]), procs,
                               float(f[8]), int(f[11])))
    return tuple(sorted(jobs, key=lambda j: (j.submit, j.number)))


def moment(name: str, at_s: float) -> tuple[list[LogJob], list[LogJob]]:
    """The jobs of log `name` running at second `at_s` (by start) and those waiting then
    (by submission)."""
    running = sorted((j for j in log_jobs(name) if j.start <= at_s < j.end),
                     key=lambda j: (j.start, j.number))
    waiting = [j for j in log_jobs(name) if j.submit <= at_s < j.start]
    return running, waiting


@dataclass(frozen=True)
class Machine:
    """How a log's processors become a site: `nodes` nodes of `slots` log processors each,
    a log processor standing for `cpus_per_slot` CPUs (a job of P processors holds P slots,
    on the first nodes with slots free)."""

    prefix: str
    nodes: int
    slots: int
    cpus_per_slot: int
    memory_mb: int
    max_time_s: int
    gpus: int = 0  # a node's GPUs (a running job holds every GPU of its nodes)
    gpu_type: str | None = None


SP2 = Machine("sp", 100, 1, 16, 64000, 60 * 3600)  # KTH: a processor a node
SETH = Machine("seth", 240, 1, 32, 128000, 5 * 24 * 3600)  # HPC2N: a processor a node


def node_names(m: Machine) -> list[str]:
    return [f"{m.prefix}{i:03d}" for i in range(1, m.nodes + 1)]


def trace_site(site: str, log: str, at_s: float, m: Machine, now: datetime, *,
               down: frozenset[str] = frozenset(), user: str = "alice",
               extra: list[Partition] | None = None, speed: float = 1.0
               ) -> tuple[SiteConfig, SiteSnapshot]:
    """Site `site`: machine `m` as log `log` held it at second `at_s`, read at `now`
    (the log's moment); one partition `batch` of the machine's MaxTime over every node,
    and any `extra` ones. `down`: nodes out of service (their slots hold no job); `speed`:
    the site's speed_factor (0.5: jobs run twice as long as at 1.0)."""
    running, waiting = moment(log, at_s)
    names = node_names(m)
    free = {n: (0 if n in down else m.slots) for n in names}
    jobs: list[JobStatus] = []
    used: dict[str, int] = dict.fromkeys(names, 0)

    def when(s: float) -> datetime:
        return now - timedelta(seconds=at_s - s)

    for j in running:
        held, need = [], j.procs
        for n in names:
            if need and free[n]:
                take = min(free[n], need)
                free[n] -= take
                used[n] += take
                need -= take
                held.append(n)
        if need:  # the log ran more than these nodes hold (none of the moments here)
            raise ValueError(f"job {j.number} of {log} does not fit on {site}")
        jobs.append(JobStatus(
            native_id=str(j.number), state=JobState.RUNNING, user=f"u{j.user}",
            partition="batch", nodes=len(held), cpus=j.procs * m.cpus_per_slot,
            gpus=len(held) * m.gpus or None,
            walltime_s=int(j.asked_s) if j.asked_s > 0 else m.max_time_s,
            submitted_at=when(j.submit), started_at=when(j.start), node_list=",".join(held)))
    for j in waiting:
        jobs.append(JobStatus(
            native_id=str(j.number), state=JobState.PENDING, user=f"u{j.user}",
            partition="batch", nodes=ceil(j.procs / m.slots), cpus=j.procs * m.cpus_per_slot,
            gpus=ceil(j.procs / m.slots) * m.gpus or None,
            walltime_s=int(j.asked_s) if j.asked_s > 0 else m.max_time_s,
            submitted_at=when(j.submit), reason="Priority"))
    nodes = [Node(name=n, state="down" if n in down else
                  ("idle" if not used[n] else "allocated" if used[n] == m.slots else "mixed"),
                  cpus=m.slots * m.cpus_per_slot, cpus_allocated=used[n] * m.cpus_per_slot,
                  memory_mb=m.memory_mb, gpus=m.gpus, gpu_type=m.gpu_type,
                  gpus_allocated=m.gpus if used[n] else 0, partitions=["batch"],
                  architecture="x86_64")
             for n in names]
    for p in extra or []:
        for n in nodes:
            if n.name in p.nodes:
                n.partitions.append(p.name)
    parts = [Partition(name="batch", default=True, max_time_s=m.max_time_s, nodes=names,
                       total_nodes=m.nodes, total_cpus=m.nodes * m.slots * m.cpus_per_slot),
             *(extra or [])]
    snap = SiteSnapshot(site=site, taken_at=now, partitions=parts, nodes=nodes, jobs=jobs,
                        user=user)
    return SiteConfig(name=site, speed_factor=speed, metadata={"architecture": "x86_64"}), snap


def corpus(name: str, drop: tuple[str, ...] = ()) -> str:
    """The batch script `name` of the shared corpus (../shared/corpus/batch-scripts), its
    `#SBATCH` options named in `drop` (long names: `partition`, `account`) taken out:
    those name another center's partitions and accounts."""
    relative = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "batch-scripts"
    root = relative if relative.is_dir() else Path("/work/shared/corpus/batch-scripts")
    short = {"partition": "-p", "account": "-A", "qos": "-q", "constraint": "-C"}
    lines = []
    for line in (root / name).read_text().splitlines():
        words = line.split()
        if words[:1] == ["#SBATCH"]:
            kept, skip = [], False
            for w in words[1:]:
                if skip:
                    skip = False
                    continue
                key = w.split("=", 1)[0]
                if key in {f"--{d}" for d in drop} | {short[d] for d in drop if d in short}:
                    skip = "=" not in w  # its value is the next word
                    continue
                kept.append(w)
            if not kept:
                continue
            line = " ".join(["#SBATCH", *kept])
        lines.append(line)
    return "\n".join(lines) + "\n"
