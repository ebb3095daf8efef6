"""What tests/test_everyday.py and tests/test_dependency_sites.py both set up: an idle
site's snapshot for placement, and the `diamond` command line in a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from diamond_jupyter.model import Node, Partition, SiteSnapshot, utcnow


def idle_snapshot(site: str, *, nodes: int = 1, gpus: int = 0,
                  taken_at: datetime | None = None) -> SiteSnapshot:
    """`nodes` idle nodes SITE1, SITE2 ... of 8 CPUs, 16000 MB and `gpus` GPUs each, in one
    default partition `main`; taken now unless `taken_at`."""
    idle = [Node(name=f"{site}{i}", state="idle", cpus=8, memory_mb=16000, gpus=gpus,
                 partitions=["main"]) for i in range(1, nodes + 1)]
    return SiteSnapshot(site=site, taken_at=taken_at or utcnow(), nodes=idle,
                        partitions=[Partition(name="main", default=True)])


def run_cli(*args: str, env: dict[str, str] | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`diamond ARGS` (the CLI's engine in its own process), its output as text. The test's
    environment without its DIAMOND_* settings (a server or engine of the caller's is
    never reached), no hand-over to a background `diamond resume`, then `env` over it."""
    outside = {k: v for k, v in os.environ.items() if not k.startswith("DIAMOND_")}
    return subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                          capture_output=True, text=True, timeout=120, cwd=cwd,
                          env={**outside, "DIAMOND_HANDOVER": "0", **(env or {})})
