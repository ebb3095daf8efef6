"""Matched multi-site rounds (the Diamond Agent paper's experiment) on the loaded test bed.

Background load, decided up front from the seed: on alpha (the home site) the "skewed"
profile's alpha stream through `testbed.load` (overloaded: a long queue); on beta and gamma
campaign streams with walltimes 1.2-2x their real runtimes:
- beta: long whole-site jobs (2 x 64 cores, ~60 s): the site is often blocked with
  nothing, or one job, pending;
- gamma (the fastest site): a GPU queue (1 GPU + 2 cores each, ~25 s): GPUs oversubscribed,
  so several jobs pend, while most cores stay free.
So "fewest pending" is misled (a blocked site with an empty queue looks best, a GPU
backlog looks bad to a CPU job); what a job can start on needs the live snapshot.
Each round takes a snapshot of every site, lets every policy choose from it (fixed =
home alpha, fewest_pending, random seeded, diamond), then sends the same probe (1 node x 8
cores, `sleep BASE/speed_factor`) to every feasible site at once. Completion = the probe's
own end timestamp minus the round's start; a policy scores its choice's completion minus
the fastest observed. Policies see only the snapshot; rounds are never re-run or filtered.
A probe not done `--max-wait` s after its round is cancelled and counted at that bound
(a lower bound, counted in `censored`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import random
import shutil
import tempfile
import time
from pathlib import Path

from .common import config_path, emit, markdown_table, mean, median, parser, pct, ratio

POLICIES = ("fixed", "fewest_pending", "random", "diamond")
HOME = "alpha"
FLOOR_S = 1.0  # ratio denominator floor: the schedulers' start granularity (~1 s cycles)


@dataclasses.dataclass(frozen=True)
class Extra:
    at_s: float
    site: str
    nodes: int
    cpus_per_node: int
    gpus: int
    runtime_s: float
    walltime_min: int
    name: str


def campaign(seed: int, duration_s: float, prefix: str) -> list[Extra]:
    """The beta and gamma streams described in the module docstring (pure, seeded)."""
    rng = random.Random(seed * 7919 + 1)
    jobs: list[Extra] = []

    def stream(site: str, rate_per_min: float, burst: float, nodes: int, cpus: int,
               gpus: int, median_s: float, sigma: float) -> None:
        t = 0.0
        while True:
            t += rng.expovariate(rate_per_min / 60)
            if t >= duration_s:
                return
            for _ in range(1 + int(rng.expovariate(1 / (burst - 1))) if burst > 1 else 1):
                rt = rng.lognormvariate(math.log(median_s), sigma)
                wall = max(1, math.ceil(rt * rng.uniform(1.2, 2.0) / 60))
                jobs.append(Extra(round(t, 3), site, nodes, cpus, gpus, round(rt, 2), wall,
                                  f"{prefix}c{len(jobs)}"))
    stream("beta", 1.5, 1.0, 2, 64, 0, 50.0, 0.3)
    stream("gamma", 6.0, 2.0, 1, 2, 1, 25.0, 0.4)
    return sorted(jobs, key=lambda j: j.at_s)


def home_load(seed: int, duration_s: float, prefix: str, time_scale: float) -> list:
    from diamond_jupyter.testbed import load

    return [dataclasses.replace(j, name=f"{prefix}{j.name}")
            for j in load.plan("skewed", seed, duration_s, time_scale, sites=[HOME])]


async def run_extra(fed, jobs: list[Extra]) -> None:
    """Submit the campaign streams at their times with plain sbatch (not the engine)."""
    loop = asyncio.get_running_loop()
    t0 = loop.time()

    async def one(j: Extra) -> None:
        await asyncio.sleep(max(0.0, t0 + j.at_s - loop.time()))
        gres = [f"--gres=gpu:{j.gpus}"] if j.gpus else []
        await fed.sites[j.site].transport.run(
            ["sbatch", "--parsable", "-J", j.name, "-N", str(j.nodes),
             f"--ntasks-per-node={j.cpus_per_node}", *gres, "-t", str(j.walltime_min),
             "-o", "/dev/null", "--wrap", f"sleep {j.runtime_s}"])
    await asyncio.gather(*(one(j) for j in jobs))


async def bench(config: str, seed: int, rounds: int, interval: float, warmup: float,
                base_s: float, max_wait: float, time_scale: float = 150.0) -> dict:
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import JobSpec, JobState, Resources
    from diamond_jupyter.placement import place
    from diamond_jupyter.store import Store
    from diamond_jupyter.testbed import load

    tmp = Path(tempfile.mkdtemp(prefix="bench-placement-"))
    fed = Federation(config, store=Store(tmp / "store.sqlite"), poll_interval_s=30)
    await fed.start()
    prefix = f"bpl{seed}x{int(time.time()) % 100000}-"
    duration = warmup + rounds * interval
    jobs = home_load(seed, duration, prefix, time_scale)
    extra = campaign(seed, duration, prefix)
    bg = asyncio.gather(load.run(config, jobs), run_extra(fed, extra))
    probe = JobSpec(name="probe", metadata={"application": "bench-probe"},
                    resources=Resources(nodes=1, tasks=1, cpus_per_task=8, walltime_s=60))
    loop = asyncio.get_running_loop()
    t_start = loop.time()
    records: list[dict] = []
    try:
        for r in range(rounds):
            await asyncio.sleep(max(0.0, t_start + warmup + r * interval - loop.time()))
            snaps = await fed.snapshots(max_age_s=0)
            pairs = [(fed.sites[n].cfg, snaps[n]) for n in fed.sites]
            hist = fed.history()
            choice = {p: place(probe, pairs, policy=p, history=hist, seed=seed * 1000 + r,
                               home=HOME).choice for p in POLICIES}
            feasible = [v.site for v in place(probe, pairs, history=hist).ranked if v.feasible]
            t0 = time.time()
            subs = await asyncio.gather(*(fed.submit(probe.model_copy(update={
                "command": f"sleep {base_s / fed.sites[s].cfg.speed_factor:.2f}"}), s)
                for s in feasible))
            records.append({"round": r, "t0": t0, "choice": choice,
                            "pending": {s: len(snaps[s].pending) for s in snaps},
                            "jobs": {j.site: j.id for j in subs}})
        for rec in records:  # wait for every probe, censoring at the bound
            for jid in rec["jobs"].values():
                left = rec["t0"] + max_wait - time.time()
                try:
                    await fed.wait(jid, timeout=max(left, 1.0))
                except Exception:
                    await fed.cancel(jid)
        bg.cancel()
    finally:
        await asyncio.gather(bg, return_exceptions=True)
        await _cancel_prefix(fed, prefix)
        await fed.close()
    scored = []
    for rec in records:
        done, censored = {}, []
        for site, jid in rec["jobs"].items():
            j = fed.store.get_job(jid)
            if j.state == JobState.COMPLETED and j.ended_at:
                done[site] = j.ended_at.timestamp() - rec["t0"]
            else:
                done[site] = max_wait
                censored.append(site)
        best = min(done.values())
        extra = {p: done[c] - best if c in done else None for p, c in rec["choice"].items()}
        scored.append({**{k: rec[k] for k in ("round", "choice", "pending")},
                       "completion_s": done, "censored": censored,
                       "fastest": min(done, key=done.get), "additional_s": extra})
    shutil.rmtree(tmp, ignore_errors=True)
    pol = {}
    for p in POLICIES:
        xs = [s["additional_s"][p] for s in scored if s["additional_s"][p] is not None]
        pol[p] = {"median_s": median(xs), "p90_s": pct(xs, 90), "mean_s": mean(xs),
                  "best_choice_rounds": sum(1 for x in xs if x == 0), "n": len(xs)}
    return {
        "policies": pol,
        "ratio_fixed_over_diamond": ratio(pol["fixed"]["median_s"], pol["diamond"]["median_s"],
                                          FLOOR_S),
        "ratio_floor_s": FLOOR_S,
        "ratio_fixed_over_diamond_mean": ratio(pol["fixed"]["mean_s"], pol["diamond"]["mean_s"]),
        "rounds": rounds, "seed": seed, "interval_s": interval, "probe_base_s": base_s,
        "censored": sum(len(s["censored"]) for s in scored),
        "background_jobs": len(jobs) + len(extra), "time_scale": time_scale,
        "per_round": scored,
    }


async def _cancel_prefix(fed, prefix: str) -> None:
    """Cancel this run's background jobs (by name), never anyone else's."""
    for s in fed.sites.values():
        res = await s.run(["squeue", "-h", "-o", "%i %j"], check=False)
        ids = [ln.split()[0] for ln in res.stdout.splitlines()
               if len(ln.split()) == 2 and ln.split()[1].startswith(prefix)]
        for k in range(0, len(ids), 200):
            await s.run(s.commands.cancel_argv(ids[k:k + 200]), check=False)


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rounds", type=int, default=12)
    p.add_argument("--interval", type=float, default=12.0, help="seconds between rounds")
    p.add_argument("--warmup", type=float, default=25.0, help="load before the first round")
    p.add_argument("--base", type=float, default=20.0, help="probe runtime at speed 1.0 (s)")
    p.add_argument("--max-wait", type=float, default=90.0)
    p.add_argument("--time-scale", type=float, default=150.0,
                   help="home load: center-seconds per real second")
    args = p.parse_args(argv)
    args.tag = args.tag or f"seed{args.seed}"
    r = asyncio.run(bench(config_path(args.config), args.seed, args.rounds, args.interval,
                          args.warmup, args.base, args.max_wait, args.time_scale))
    rows = [(name, v["median_s"], v["p90_s"], v["mean_s"], f"{v['best_choice_rounds']}/{v['n']}")
            for name, v in r["policies"].items()]
    md = (f"## matched rounds: seed {r['seed']}, {r['rounds']} rounds, "
          f"{r['background_jobs']} background jobs\n\n"
          + markdown_table(["policy", "median extra s", "p90 s", "mean s", "fastest chosen"],
                           rows)
          + f"\nfixed/diamond (medians, denominator floor {FLOOR_S:g} s) = "
          f"{r['ratio_fixed_over_diamond']:.1f}x; means: "
          f"{r['ratio_fixed_over_diamond_mean'] or float('nan'):.1f}x; censored probes: "
          f"{r['censored']}\n")

    def plot(ax) -> None:
        data = [[s["additional_s"][p] for s in r["per_round"] if s["additional_s"][p]
                 is not None] for p in POLICIES]
        ax.boxplot(data, tick_labels=list(POLICIES))
        ax.set_ylabel("additional completion time vs fastest (s)")
        ax.set_title(f"matched rounds (seed {r['seed']}, {r['rounds']} rounds): "
                     f"fixed/diamond {r['ratio_fixed_over_diamond']:.1f}x")
    emit("placement", args, r, md, plot)
    return r


if __name__ == "__main__":
    main()
