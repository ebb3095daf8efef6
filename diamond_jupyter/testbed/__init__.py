"""A real local federation of Slurm clusters for tests, the demo and benchmarks."""

from . import lock
from .clusters import CLUSTERS, USER, base_dir
from .control import (
    TestbedError,
    check_prerequisites,
    down,
    leftovers,
    start_site,
    status,
    stop_site,
    up,
)

__all__ = ["CLUSTERS", "USER", "TestbedError", "base_dir", "check_prerequisites", "down",
           "leftovers", "lock", "start_site", "status", "stop_site", "up"]
