"""One run of `benchmarks.workflow_fanout`, in a process of its own, against whichever tree of
the package is first on PYTHONPATH (this checkout's, or an older one's: the comparison runs
the same code against both). Written to be loaded by its path, outside the `benchmarks`
package: only the standard library at the top, the package imported inside.

    python -c 'import runpy; runpy.run_path("benchmarks/fanout_run.py", run_name="__main__")' \
        STEPS WORKDIR

prints one JSON object: the steps, the seconds until every step was submitted and recorded
with its job, and the process's CPU seconds meanwhile.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any


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
    """`top`, then `steps` steps needing it, all on alpha."""
    return ("name: fan\nsteps:\n  - {name: top, site: alpha, script: \"./top\"}\n"
            + "".join(f"  - {{name: w{i:04d}, site: alpha, needs: [top], script: \"./w\"}}\n"
                      for i in range(steps)))


async def start_fan_out(steps: int, root: Path) -> dict[str, Any]:
    """One run on a new store under `root`: seconds (and this process's CPU seconds) until
    every step was submitted and recorded with its job."""
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
        text = fan_out(steps)
        began, cpu = time.perf_counter(), time.process_time()
        view = await fed.run_workflow(text, origin={"face": "benchmark"})
        took, cpu = time.perf_counter() - began, time.process_time() - cpu
        jobs = [s.job for s in view.steps]
        if None in jobs or len(set(jobs)) != steps + 1:
            raise RuntimeError(f"{jobs.count(None)} steps without a job")
        return {"steps": steps + 1, "seconds": round(took, 3), "cpu_s": round(cpu, 3),
                "ms_per_step": round(1000 * took / (steps + 1), 2)}
    finally:
        await fed.close()
        fed.store.close()


def main(argv: list[str]) -> None:
    steps, work = int(argv[0]), Path(argv[1])
    asyncio.run(start_fan_out(3, work / "warm-up"))  # the lazy imports, outside the timing
    print(json.dumps(asyncio.run(start_fan_out(steps, work / "run"))))


if __name__ == "__main__":
    main(sys.argv[1:])
