"""How long a wide fan-out takes to start: every step submitted and recorded with its job
(issue 17; no test bed). Each step's submit was recorded alone: the step "submitting" and
its job's intent (a durable write: one fsync), then its job. Now the submits a pass decides
are recorded in batches of SUBMIT_BATCH steps, one durable write each (`_flush_submits`).

A real engine and store (`Federation.run_workflow`) over one Slurm site whose transport is
a fake scheduler: `sbatch` answers the next job id and the job directory's upload is taken
without running a command, both in-process, so what is measured is the engine and its store
(a site's own latency adds the same to both paths). The workflow: `top`, then `--steps`
steps needing it (queued ahead behind it by afterok). Both paths in the same run, in turns
(`--repeats` each, alternating which goes first), each on a new store:
`per_step` (`WorkflowEngine.batch_submits = False`, the path before) and `batched`.

    python -m benchmarks.workflow_fanout [--steps 1000] [--repeats 2] [--json] [--out DIR]
"""

from __future__ import annotations

import asyncio
import itertools
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from .common import emit, markdown_table, median, parser, ratio

MODES = ("per_step", "batched")


def fake_scheduler_transport(site: str, workdir: str) -> Any:
    """A local transport whose scheduler is a fake: `sbatch` answers the next job id, the
    job directory's upload (the `mkdir -p ... cat > job.sh` script) is taken as written, the
    scheduler's queries answer nothing; any other command runs here."""
    from diamond_jupyter.transports.base import CommandResult
    from diamond_jupyter.transports.local import LocalTransport

    ids = itertools.count(1001)

    class FakeScheduler(LocalTransport):
        async def run(self, argv: list[str], **kw: Any) -> CommandResult:
            if argv and argv[0] == "sbatch":
                return CommandResult(argv, 0, f"{next(ids)}\n", "", 0.0)
            if argv[:2] == ["sh", "-c"] and argv[2].startswith("umask 077 && mkdir -p -- /"):
                return CommandResult(argv, 0, "", "", 0.0)  # the job's directory and script
            if argv and argv[0] in ("env", "squeue", "scontrol", "sacct", "sinfo"):
                return CommandResult(argv, 0, "", "", 0.0)
            return await super().run(argv, **kw)

        async def run_fast(self, argv: list[str], **kw: Any) -> CommandResult:
            return await self.run(argv, **kw)

    return FakeScheduler(site, workdir)


def fan_out(steps: int) -> str:
    return ("name: fan\nsteps:\n  - {name: top, site: alpha, script: \"./top\"}\n"
            + "".join(f"  - {{name: w{i:04d}, site: alpha, needs: [top], script: \"./w\"}}\n"
                      for i in range(steps)))


async def start_fan_out(steps: int, mode: str, root: Path) -> dict[str, Any]:
    """One run: seconds until every step was submitted and recorded with its job."""
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    root.mkdir(parents=True)
    cfg = SiteConfig(name="alpha", transport=TransportConfig(kind="local"),
                     workdir=str(root / "work"), discovery={"enabled": False})
    fed = Federation(FederationConfig(sites=[cfg]), store=Store(root / "store.sqlite"))
    fed.sites["alpha"].transport = fake_scheduler_transport("alpha", str(root))
    try:
        await fed.start(recover=False)
        fed.workflow_engine.batch_submits = mode == "batched"
        text = fan_out(steps)
        began = time.perf_counter()
        view = await fed.run_workflow(text, origin={"face": "benchmark"})
        took = time.perf_counter() - began
        jobs = [s.job for s in view.steps]
        if None in jobs or len(set(jobs)) != steps + 1:
            raise RuntimeError(f"{mode}: {jobs.count(None)} steps without a job")
        return {"mode": mode, "steps": steps + 1, "seconds": round(took, 3),
                "ms_per_step": round(1000 * took / (steps + 1), 2)}
    finally:
        await fed.close()
        fed.store.close()


def run(steps: int, repeats: int) -> dict[str, Any]:
    runs = []
    with tempfile.TemporaryDirectory(prefix="fanout-") as tmp:
        for r in range(repeats):
            order = MODES if r % 2 == 0 else MODES[::-1]
            for mode in order:
                out = asyncio.run(start_fan_out(steps, mode, Path(tmp) / f"{r}-{mode}"))
                runs.append({"repeat": r, **out})
    med = {m: median([x["seconds"] for x in runs if x["mode"] == m]) for m in MODES}
    return {"steps": steps + 1, "repeats": repeats, "runs": runs, "median_s": med,
            "ratio_per_step_over_batched": ratio(med["per_step"], med["batched"])}


def markdown(r: dict[str, Any]) -> str:
    rows = [(x["repeat"], x["mode"], x["steps"], x["seconds"], x["ms_per_step"])
            for x in r["runs"]]
    ratio_s = r["ratio_per_step_over_batched"]
    return ("## workflow fan-out: seconds until every step is submitted and recorded\n\n"
            + markdown_table(("repeat", "path", "steps", "seconds", "ms a step"), rows)
            + f"\nMedian: per step {r['median_s']['per_step']:.2f} s, batched "
              f"{r['median_s']['batched']:.2f} s: "
            + (f"{ratio_s:.2f}x faster" if ratio_s else "no ratio") + ".\n")


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=1000, help="steps needing the top one")
    p.add_argument("--repeats", type=int, default=2, help="runs of each path")
    args = p.parse_args(argv)
    if args.steps < 1 or args.repeats < 1:
        p.error(f"--steps and --repeats must be at least 1 (got {args.steps}, "
                f"{args.repeats})")
    r = run(args.steps, args.repeats)
    if not args.json:  # the table is printed below; the JSON first
        print(json.dumps(r, indent=2))
    emit("workflow_fanout", args, r, markdown(r))
    return r


if __name__ == "__main__":
    main()
