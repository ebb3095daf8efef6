"""How near a trace replay's thinning brings a small site's utilization to its log's.

No test bed: each log's windows are planned (`testbed.trace.plan_replay`) on sites of a few
CPUs, as the test bed's are (2-4 nodes of 2-8 CPUs), for seeds 1-10 and windows of 10 and
60 real minutes at scale 60; the figure is |site utilization - log utilization| of each
plan (both over the window, from the log's own start and end times and the mapped sizes).

    python -m benchmarks.trace_utilization [--trace LOG ...]
        (default: the shared logs and both sweeps' unseen fixtures)
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from diamond_jupyter.testbed.clusters import ClusterDef, PartitionDef
from diamond_jupyter.testbed.trace import plan_replay, read_swf

ROOT = Path(__file__).resolve().parents[1]
SITES = ((2, 2), (2, 4), (4, 2), (3, 4), (4, 4), (2, 8), (4, 8))  # nodes x CPUs
SEEDS = range(1, 11)
DURATIONS = (600.0, 3600.0)  # real seconds at scale 60: 10 and 60 hours of the log


def default_logs() -> list[Path]:
    shared = ROOT.parent / "shared" / "traces"
    shared = shared if shared.is_dir() else Path("/work/shared/traces")
    fixtures = ROOT / "tests" / "fixtures"
    return [*sorted(shared.glob("*.swf.gz")),  # and every sweep's synthetic logs
            *(p for sweep in sorted(fixtures.glob("swf_unseen*"))
              for p in sorted(sweep.glob("*.swf")))]


def site(nodes: int, cpus: int) -> ClusterDef:
    return ClusterDef(name=f"s{nodes}x{cpus}", index=9, nodes=nodes, cpus=cpus,
                      memory_mb=1000, features=(),
                      partitions=(PartitionDef("batch", "1-00:00:00", default=True),))


def measure(path: Path) -> dict:
    log = read_swf(path)
    errors = [plan.site_utilization - plan.log_utilization
              for nodes, cpus in SITES for duration in DURATIONS for seed in SEEDS
              for plan in [plan_replay(log, site(nodes, cpus), seed=seed, duration_s=duration,
                                       scale=60)]]
    misses = sorted(abs(e) for e in errors)
    return {"log": log.name, "plans": len(errors), "mean": statistics.mean(misses),
            "p90": misses[int(0.9 * len(misses))], "max": misses[-1],
            "bias": statistics.mean(errors)}


def main(argv: list[str] | None = None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trace", action="append", type=Path, metavar="FILE.swf[.gz]")
    args = p.parse_args(argv)
    rows = [measure(path) for path in args.trace or default_logs()]
    print("| log | plans | mean miss | p90 | max | bias |\n|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['log']} | {r['plans']} | {r['mean']:.3f} | {r['p90']:.3f} | "
              f"{r['max']:.3f} | {r['bias']:+.3f} |")
    print(f"\nmean of the logs' mean misses {statistics.mean(r['mean'] for r in rows):.3f}, "
          f"largest miss {max(r['max'] for r in rows):.3f}")
    return rows


if __name__ == "__main__":
    main()
