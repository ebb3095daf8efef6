"""The test bed's clusters: small centers that differ as real ones do (three run Slurm,
one Grid Engine)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

# Grid Engine's qmaster (Debian's gridengine-master): without it the test bed has no delta
GRIDENGINE = Path("/usr/lib/gridengine/sge_qmaster")
USER = "diamondtb"  # the non-root test user every site is reached as
HOME = Path("/home") / USER  # bind-mounted per cluster: each site has its own "shared" home
# The JupyterHub's users (scripts/hub.sh): each logs in to every site as themselves, with
# their own key (authorized_keys.NAME, written by the hub); their homes are this machine's.
HUB_USERS = ("alice", "bob")


@dataclass(frozen=True)
class PartitionDef:
    name: str
    max_time: str  # Slurm syntax: minutes or D-HH:MM:SS or INFINITE
    default: bool = False


@dataclass(frozen=True)
class ClusterDef:
    name: str
    index: int  # network 10.213.<index>.0/24, ports, job-id offset
    nodes: int
    cpus: int
    memory_mb: int
    features: tuple[str, ...]
    gpus: int = 0
    gpu_type: str | None = None  # the GRES type: --gres=gpu:TYPE:N
    partitions: tuple[PartitionDef, ...] = ()
    speed_factor: float = 1.0
    charge_factor: float = 1.0
    metadata: dict = field(default_factory=dict)
    scheduler: str = "slurm"  # or "sge" (Grid Engine: testbed/gridengine.py)

    @property
    def netns(self) -> str:
        return f"dtb-{self.name}"

    @property
    def host_ip(self) -> str:
        return f"10.213.{self.index}.1"

    @property
    def ip(self) -> str:
        return f"10.213.{self.index}.2"

    @property
    def node_names(self) -> list[str]:
        return [f"{self.name[0]}n{i}" for i in range(1, self.nodes + 1)]

    @property
    def first_job_id(self) -> int:
        return self.index * 100000


CLUSTERS: tuple[ClusterDef, ...] = (
    ClusterDef(
        name="alpha", index=1, nodes=4, cpus=8, memory_mb=32000,
        features=("arch=x86_64", "avx2"),
        partitions=(PartitionDef("batch", "1-00:00:00", default=True),
                    PartitionDef("debug", "60")),
        speed_factor=1.0, charge_factor=1.0,
        metadata={"architecture": "x86_64", "software": ["python3", "gcc", "openmpi"],
                  "container_runtimes": ["apptainer"], "bandwidth_mbps": 1000,
                  "description": "4-node CPU-only x86_64 cluster"},
    ),
    ClusterDef(
        name="beta", index=2, nodes=2, cpus=64, memory_mb=256000,
        features=("arch=aarch64", "sve"),
        partitions=(PartitionDef("compute", "2-00:00:00", default=True),),
        speed_factor=1.5, charge_factor=1.2,
        metadata={"architecture": "aarch64", "software": ["python3", "gcc", "gromacs"],
                  "container_runtimes": [], "bandwidth_mbps": 400,
                  "description": "2-node Arm cluster with large nodes"},
    ),
    ClusterDef(
        name="gamma", index=3, nodes=2, cpus=32, memory_mb=128000, gpus=2, gpu_type="a100",
        features=("arch=x86_64", "a100"),
        partitions=(PartitionDef("short", "30", default=True),
                    PartitionDef("long", "2-00:00:00")),
        speed_factor=2.0, charge_factor=3.0,
        metadata={"architecture": "x86_64", "software": ["python3", "cuda", "pytorch"],
                  "container_runtimes": ["apptainer"], "bandwidth_mbps": 2000,
                  "description": "2-node GPU cluster, 2 GPUs per node"},
    ),
    *(() if not GRIDENGINE.exists() else (ClusterDef(
        name="delta", index=4, nodes=2, cpus=8, memory_mb=16000, features=("arch=x86_64",),
        partitions=(PartitionDef("all.q", "1-00:00:00", default=True),
                    PartitionDef("short.q", "30")),
        speed_factor=0.9, charge_factor=0.8, scheduler="sge",
        metadata={"architecture": "x86_64", "software": ["python3", "gcc"],
                  "container_runtimes": [], "bandwidth_mbps": 500,
                  "description": "2-host Grid Engine cluster (queues all.q, short.q; "
                                 "parallel environments smp and mpi)"},
    ),)),
)
SLURM_CLUSTERS = tuple(c for c in CLUSTERS if c.scheduler == "slurm")


def base_dir() -> Path:
    return Path(os.environ.get("DIAMOND_TESTBED_DIR", "/tmp/diamond-testbed"))


def cluster(name: str) -> ClusterDef:
    for c in CLUSTERS:
        if c.name == name:
            return c
    raise KeyError(name)
