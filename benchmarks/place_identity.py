"""Every verdict and `explain()` of 48 placement decisions on the recorded sites, written
out so that two versions of the engine can be compared byte for byte (a change meant to
make decisions faster must not change one).

The sites are `place_latency`'s (recorded Slurm outputs replicated to a seeded size): seeds
1 and 2 on 30 sites, seed 3 on 12; eight job shapes; each with and without a calibration.
Where the engine keeps calibrations between decisions (`calibration.CalibrationCache`),
each calibrated decision is made twice, the second time on the kept calibrations, and
both are written: each must equal what a version without the cache wrote once.

Run it against a checkout with `PYTHONPATH=CHECKOUT python benchmarks/place_identity.py
OUT` (this file and its sites, any checkout's engine), then compare the two OUT files
with `cmp`. `--spread`: four jobs of tasks without a node count (`-n N` alone) instead of
the eight shapes (24 decisions). The sites are this checkout's
`place_latency._replicated`: since 906facc each copy of the queue runs on its own copy of
the nodes (before, every copy on c1, c[1-2], g1), so files written by this file before and
after it differ (18 of the 48 choices, and most starts).
"""

from __future__ import annotations

import inspect
import sys
from datetime import datetime, timezone
from pathlib import Path

# the sites from this file's checkout, the engine from PYTHONPATH's (else this checkout's)
_HERE = str(Path(__file__).resolve().parents[1])
sys.path.insert(0, _HERE)
from benchmarks.place_latency import _replicated  # noqa: E402

sys.path.remove(_HERE)
sys.path.append(_HERE)

SETTINGS = ((1, 30), (2, 30), (3, 12))  # (seed, sites)
NOW = datetime(2026, 11, 29, 17, 30, tzinfo=timezone.utc)  # when the outputs were taken


def shapes() -> list[tuple[str, object]]:
    from diamond_jupyter.model import Constraints, JobSpec, Resources

    def spec(queue: str | None = None, exclusive: bool = False, **res: object) -> JobSpec:
        return JobSpec(command="true", queue=queue, resources=Resources(**res),
                       constraints=Constraints(exclusive=exclusive))
    return [
        ("1x4 cpus", spec(nodes=1, cpus_per_task=4, walltime_s=1800)),
        ("2x8 cpus", spec(nodes=2, tasks_per_node=1, cpus_per_task=8, walltime_s=3600)),
        ("a gpu", spec(nodes=1, gpus_per_node=1, walltime_s=1800)),
        ("1 cpu, a minute", spec(nodes=1, cpus_per_task=1, walltime_s=60)),
        ("4 nodes x 8 tasks", spec(nodes=4, tasks_per_node=8, walltime_s=1800)),
        ("16 cpus", spec(nodes=1, cpus_per_task=16, walltime_s=1800)),
        ("exclusive", spec(nodes=1, exclusive=True, walltime_s=1800)),
        ("long, a day", spec("long", nodes=1, cpus_per_task=2, walltime_s=86400)),
    ]


def spread_shapes() -> list[tuple[str, object]]:
    """Jobs of tasks without a node count (Slurm `-n N` alone: spread over any nodes)."""
    from diamond_jupyter.model import JobSpec, Resources

    def spec(**res: object) -> JobSpec:
        return JobSpec(command="true", resources=Resources(**{"walltime_s": 1800, **res}))
    return [
        ("-n 8", spec(tasks=8)),
        ("-n 64", spec(tasks=64)),
        ("-n 8 -c 2, a day", spec(tasks=8, cpus_per_task=2, walltime_s=86400)),
        ("-n 12 --mem-per-cpu=2000", spec(tasks=12, memory_per_cpu_mb=2000)),
    ]


def decisions(spread: bool = False) -> list[str]:
    """One text per decision: its setting, its verdicts as JSON and its explain().
    `spread`: the jobs are `spread_shapes`, not `shapes`."""
    from diamond_jupyter.calibration import RunSample, SiteCalibration
    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.dialects.slurm_commands import SlurmCommands
    from diamond_jupyter.placement import place

    try:
        from diamond_jupyter.calibration import CalibrationCache
    except ImportError:  # a version that builds every calibration per decision
        CalibrationCache = None  # noqa: N806

    cmds = SlurmCommands(jobcomp=True, tz=timezone.utc)
    out = []
    for seed, n_sites in SETTINGS:
        sites = [_replicated(seed, i) for i in range(n_sites)]
        snaps = [cmds.parse_snapshot(f"site{i:02d}", outputs)
                 for i, (outputs, _) in enumerate(sites)]
        pairs = [(SiteConfig(name=s.site), s) for s in snaps]
        cache = CalibrationCache() if CalibrationCache is not None else None
        # a version whose cache is keyed on what the samples are made of (`inputs`): the
        # second decision reuses the kept ratios without comparing the samples
        keyed = cache is not None and "inputs" in inspect.signature(cache.site).parameters

        def calibrations() -> dict:
            out = {}
            for s, (_, ratios) in zip(snaps, sites, strict=True):  # noqa: B023
                samples = [RunSample("debug", 1 + k % 16, 600.0, r * 600.0, k)
                           for k, r in enumerate(ratios)]
                out[s.site] = SiteCalibration(samples) if cache is None else \
                    cache.site(s.site, samples, inputs=(ratios,)) if keyed else \
                    cache.site(s.site, samples)  # noqa: B023
            return out
        for name, spec in (spread_shapes() if spread else shapes()):
            for calibrated in (False, True):
                head = (f"## seed {seed}, {n_sites} sites, {name}, "
                        f"{'calibrated' if calibrated else 'walltimes'}\n")
                texts = []
                for _ in range(2 if calibrated and cache is not None else 1):
                    p = place(spec, pairs, now=NOW,
                              calibration=calibrations() if calibrated else None)
                    texts.append(f"{p.model_dump_json(indent=1)}\n{p.explain()}\n")
                if texts[-1] != texts[0]:
                    raise SystemExit(f"the kept calibrations changed a decision: {head}")
                out.append(head + texts[0])
    return out


def main(argv: list[str]) -> None:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m benchmarks.place_identity",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("out", metavar="OUT", type=Path,
                    help="the file the decisions are written to (compare two with cmp)")
    ap.add_argument("--spread", action="store_true",
                    help="jobs of tasks without a node count (`spread_shapes`) instead")
    args = ap.parse_args(argv)
    out = args.out
    texts = decisions(args.spread)
    out.write_text("".join(texts))
    print(f"{len(texts)} decisions written to {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
