"""Decision latency: from fresh snapshots to a placement, for the test bed and for 30 sites.

- testbed: `Federation.place` on the three test-bed sites with every snapshot fetched anew
  (max age 0: one batched query per site over its pooled SSH connection) and the
  calibration's accounting query when due (cold: the first decision, which runs it; warm:
  the later ones, within its TTL). Target: at most 0.3 s.
- recorded: 30 Slurm sites built from recorded scheduler outputs
  (`tests/fixtures/outputs/slurm`: scontrol partitions and nodes, squeue, sacct), each
  with its nodes and queue replicated to a seeded size (3 to 300 nodes, 7 to 2,100 queued
  and running jobs). Timed: calibration and placement over the 30 parsed snapshots, as
  the engine decides once its queries have returned; the parse of all 30 sites' outputs
  (done per site as each arrives) is reported beside it. Target: at most 1 s.

  The calibration is made inside the timed decision as the engine makes it:
  `Federation.place` calls `Federation.calibration`, which gives each site's samples to a
  `CalibrationCache` kept across decisions; that builds a site's `SiteCalibration` anew
  only when what its samples are made of changes (a new accounting read, the store's own
  jobs), else reuses the one it built without building or comparing the samples. Here the
  accounting is the same at every decision, so the first builds them (as the first
  decision after an accounting query does; `calibration_first_s`) and the others reuse
  them. The calibration's share is reported beside the total
  (`calibration_median_s`), not taken out of it. `--tasks N`: the job is N one-CPU tasks
  without a node count (Slurm `-n N` alone, spread over any nodes), not 1 node x 4 CPUs.
  `--cpu`: the recorded decisions timed in the process's CPU seconds, for comparing two
  engines on a machine other work loads (wall-clock times there measure the load).
  Each decision's time is kept (`times_s`) beside the median and the mean (`mean_s`).
  `--profile N`: the recorded decisions (calibration and placement, not the parse) run
  under cProfile, and the N functions first by cumulative and by own time are printed to
  stderr (where a decision's time goes, without the parse's 40% of a whole-run profile);
  the times are then the profiler's, not the engine's.
"""

from __future__ import annotations

import asyncio
import cProfile
import io
import pstats
import random
import re
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from .common import config_path, emit, markdown_table, median, parser, pct, primary_sites

RECORDED = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "outputs" / "slurm"
_NODE_LIST = 11  # squeue's %N in SQUEUE_FIELDS: the nodes a running job holds


# a recorded host name or hostlist (c1, c[1-2], g1) and its numbers
_HOSTS = re.compile(r"([cg])(\d+|\[[\d,-]+\])")


def _hosts_of_copy(hosts: str, copy: int) -> str:
    """`hosts` (a node's name or a job's node list) renamed as in the `copy`-th copy of the
    recorded nodes: c1-c2 become c(1+2k)-c(2+2k), g1 becomes g(1+k)."""
    def renamed(m: re.Match[str]) -> str:
        step = 2 if m[1] == "c" else 1
        return m[1] + re.sub(r"\d+", lambda n: str(int(n[0]) + copy * step), m[2])
    return _HOSTS.sub(renamed, hosts)


def _replicated(seed: int, site: int) -> tuple[dict[str, str], list[float]]:
    """The recorded outputs of one site, its nodes x m and its queue x q (seeded); the
    queue's k-th copy runs on the (k mod m)-th copy of the nodes."""
    rng = random.Random(f"{seed}:{site}")
    m, q = rng.randint(1, 100), rng.randint(1, 300)
    nodes = (RECORDED / "scontrol_node.txt").read_text().splitlines()
    out_nodes = []
    for b in range(m):
        for line in nodes:
            out_nodes.append(re.sub(r"^NodeName=(\S+)",
                                    lambda x, b=b: f"NodeName={_hosts_of_copy(x[1], b)}", line))
    parts = (RECORDED / "scontrol_partition.txt").read_text()
    parts = parts.replace("Nodes=c[1-2],g1", f"Nodes=c[1-{2 * m}],g[1-{m}]") \
        .replace("Nodes=c[1-2]", f"Nodes=c[1-{2 * m}]").replace("Nodes=g1", f"Nodes=g[1-{m}]")
    queue = (RECORDED / "squeue_queue.txt").read_text().splitlines()
    out_q = []
    for k in range(q):
        for line in queue:
            fields = line.split("|")
            fields[0] = re.sub(r"^(\d+)", lambda x, k=k: str(int(x[1]) + 1000 * k), fields[0])
            fields[_NODE_LIST] = _hosts_of_copy(fields[_NODE_LIST], k % m)
            out_q.append("|".join(fields))
    outputs = {"partitions": parts, "nodes": "\n".join(out_nodes), "queue": "\n".join(out_q)}
    # what accounting would give: runtime/request of 200 finished jobs, heavy at the low end
    ratios = [min(1.0, rng.lognormvariate(-1.5, 1.0)) for _ in range(200)]
    return outputs, ratios


def recorded(n_sites: int, seed: int, reps: int, tasks: int = 0, cpu: bool = False,
             profile: cProfile.Profile | None = None) -> dict:
    """`tasks`: the job asks that many one-CPU tasks without a node count (`-n N`, spread
    over any nodes) instead of one node of 4 CPUs. `cpu`: timed in this process's CPU
    seconds, not wall-clock ones (a shared machine under load). `profile`: enabled around
    each timed decision only (not the parse)."""
    clock = time.process_time if cpu else time.perf_counter
    from diamond_jupyter.calibration import CalibrationCache, RunSample
    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.dialects.slurm_commands import SlurmCommands
    from diamond_jupyter.model import JobSpec, Resources
    from diamond_jupyter.placement import place

    cmds = SlurmCommands(jobcomp=True, tz=timezone.utc)
    sites = [_replicated(seed, i) for i in range(n_sites)]
    spec = JobSpec(command="true", resources=Resources(tasks=tasks, walltime_s=1800)
                   if tasks else Resources(nodes=1, cpus_per_task=4, walltime_s=1800))
    now = datetime(2026, 11, 29, 17, 30, tzinfo=timezone.utc)  # when the outputs were taken
    times, parse_times, cal_times, jobs = [], [], [], 0
    kept = CalibrationCache()  # the engine's, kept across its decisions
    for _ in range(reps):
        # the snapshots as the engine holds them after its queries (parsed as they arrive,
        # each site on its own: timed apart)
        t0 = clock()
        snaps = [cmds.parse_snapshot(f"site{i:02d}", outputs)
                 for i, (outputs, _) in enumerate(sites)]
        parse_times.append(clock() - t0)
        jobs = max(len(s.jobs) for s in snaps)
        if profile is not None:
            profile.enable()
        t0 = clock()
        # keyed, as the engine keys it, on the accounting read it holds (here each site's
        # ratios, read once): the samples are built only when that changes
        cals = {s.site: kept.site(s.site, lambda ratios=ratios: [
            RunSample("debug", 1 + k % 16, 600.0, r * 600.0, k)
            for k, r in enumerate(ratios)], inputs=(ratios,))
            for s, (_, ratios) in zip(snaps, sites, strict=True)}
        cal_times.append(clock() - t0)
        p = place(spec, [(SiteConfig(name=s.site), s) for s in snaps], now=now,
                  calibration=cals)
        times.append(clock() - t0)
        if profile is not None:
            profile.disable()
        assert p.choice is not None, p.explain()
    return {"sites": n_sites, "largest_queue": jobs, "total_jobs": sum(len(s.jobs)
                                                                       for s in snaps),
            "reps": reps, "median_s": median(times), "mean_s": sum(times) / len(times),
            "times_s": times, "p90_s": pct(times, 90),
            "max_s": max(times), "target_s": 1.0,
            "parse_all_sites_median_s": median(parse_times),
            "calibration_median_s": median(cal_times), "calibration_first_s": cal_times[0]}


def profile_report(prof: cProfile.Profile, top: int) -> str:
    """The `top` functions of a profile by cumulative time, then by own time."""
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    for key in ("cumulative", "tottime"):
        stats.sort_stats(key).print_stats(top)
    return out.getvalue()


async def testbed(config: str, reps: int) -> dict:
    import tempfile

    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import JobSpec, Resources
    from diamond_jupyter.store import Store

    tmp = Path(tempfile.mkdtemp(prefix="bench-place-"))
    spec = JobSpec(command="true", resources=Resources(nodes=1, cpus_per_task=1,
                                                       walltime_s=600))
    times = []
    async with Federation(config, store=Store(tmp / "store.sqlite"),
                          allowed_sites=primary_sites(config)) as fed:
        await fed.snapshots(max_age_s=0)  # warm the connections (not a decision)
        for _ in range(reps + 1):
            t0 = time.perf_counter()
            await fed.snapshots(max_age_s=0)
            p = await fed.place(spec)
            times.append(time.perf_counter() - t0)
            assert p.choice is not None, p.explain()
    cold, warm = times[0], times[1:]
    return {"sites": 3, "reps": reps, "cold_s": cold, "median_s": median(warm),
            "p90_s": pct(warm, 90), "max_s": max(warm), "target_s": 0.3}


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=20, help="decisions timed per setting")
    p.add_argument("--sites", type=int, default=30, help="recorded sites")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-testbed", action="store_true", help="only the recorded sites")
    p.add_argument("--tasks", type=int, default=0,
                   help="the recorded sites' job: N one-CPU tasks without a node count")
    p.add_argument("--cpu", action="store_true",
                   help="time the recorded sites' decisions in CPU seconds (a loaded machine)")
    p.add_argument("--profile", type=int, default=0, metavar="N",
                   help="profile the recorded decisions: print the N functions first by "
                   "cumulative and by own time to stderr")
    args = p.parse_args(argv)
    prof = cProfile.Profile() if args.profile else None
    res = {"recorded": recorded(args.sites, args.seed, args.reps, args.tasks, args.cpu,
                                prof), "seed": args.seed}
    if prof is not None:
        print(profile_report(prof, args.profile), file=sys.stderr)
        res["profiled"] = True
    if args.tasks:
        res["tasks"] = args.tasks
    if args.cpu:
        res["clock"] = "cpu"
    if not args.no_testbed:
        res["testbed"] = asyncio.run(testbed(config_path(args.config), args.reps))
    rows = [(k, v["sites"], v["median_s"], v["p90_s"], v["max_s"], v["target_s"],
             "met" if v["p90_s"] <= v["target_s"] else "missed")
            for k, v in res.items() if isinstance(v, dict)]
    md = markdown_table(("setting", "sites", "median s", "p90 s", "max s", "target s",
                         "p90 vs target"), rows)
    def plot(ax) -> None:
        names = [r[0] for r in rows]
        ax.bar(names, [r[2] for r in rows], label="median")
        ax.scatter(names, [r[5] for r in rows], color="red", marker="_", s=400, label="target")
        ax.set_ylabel("seconds to a decision")
        ax.set_title("placement decision latency")
        ax.legend()
    emit("place_latency", args, res, md, plot)
    return res


if __name__ == "__main__":
    main()
