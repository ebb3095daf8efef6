"""Matched multi-site rounds (the Diamond Agent paper's experiment) on the loaded test bed.

Workload model: the `depth_misleads` profile of `diamond_jupyter.testbed.load` (seeded,
decided up front, submitted with plain sbatch), where a queue's depth is a poor predictor
of its wait (the paper's point: the sizes and runtimes of the queued work, and the sites'
speeds, decide it):
- alpha (the home site, speed 1.0): the `skewed` profile's alpha stream (`--time-scale`
  150): overloaded, tens of jobs pending;
- beta (speed 1.5): MANY short jobs (one node, 1-64 cores, median 5 s, walltime 1 min),
  a backlog of 40 at the start and ~90 a minute: a deep queue that drains within seconds;
- gamma (the fastest, speed 2.0): FEW long jobs (median 3 min, walltime 4-9 min), each
  taking a whole node (32 cores and both GPUs): both nodes full, 0-3 pending, so a new job
  waits minutes although the queue is the shortest.
Beta's and gamma's jobs run in real time, so their walltime requests over-estimate their
runtimes by 1.2-3x (1 min at least), as users' requests do.
Each round takes a snapshot of every site, lets every policy choose from it (fixed =
home alpha, fewest_pending, random seeded, diamond), then sends the same probe (1 node x 8
cores, `sleep BASE/speed_factor`) to every feasible site at once. Completion = the probe's
own end timestamp minus the round's start; a policy scores its choice's completion minus
the fastest observed. Policies see only the snapshot taken before the round; rounds are
never re-run or filtered. A probe not done `--max-wait` s after its round is cancelled and
counted at that bound (a lower bound, counted in `censored`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import tempfile
import time
from pathlib import Path

from .common import config_path, emit, markdown_table, mean, median, parser, pct, ratio

POLICIES = ("fixed", "fewest_pending", "random", "diamond")
HOME = "alpha"
PROFILE = "depth_misleads"
FLOOR_S = 1.0  # ratio denominator floor: the schedulers' start granularity (~1 s cycles)


async def bench(config: str, seed: int, rounds: int, interval: float, warmup: float,
                base_s: float, max_wait: float, time_scale: float = 150.0,
                profile: str = PROFILE) -> dict:
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
    jobs = [dataclasses.replace(j, name=f"{prefix}{j.name}")
            for j in load.plan(profile, seed, duration, time_scale)]
    bg = asyncio.gather(load.run(config, jobs))
    probe = JobSpec(name="probe", metadata={"application": "bench-probe"},
                    resources=Resources(nodes=1, tasks=1, cpus_per_task=8, walltime_s=60))
    loop = asyncio.get_running_loop()
    t_start = loop.time()
    records: list[dict] = []
    submitted = None
    try:
        for r in range(rounds):
            await asyncio.sleep(max(0.0, t_start + warmup + r * interval - loop.time()))
            await _reap(fed, records, max_wait)
            snaps = await fed.snapshots(max_age_s=0)
            pairs = [(fed.sites[n].cfg, snaps[n]) for n in fed.sites]
            hist = fed.history()
            choice = {p: place(probe, pairs, policy=p, history=hist, seed=seed * 1000 + r,
                               home=HOME).choice for p in POLICIES}
            dia = place(probe, pairs, history=hist)
            feasible = [v.site for v in dia.ranked if v.feasible]
            est = {v.site: {"start_s": (v.estimated_start - dia.now).total_seconds(),
                            "finish_s": (v.estimated_finish - dia.now).total_seconds(),
                            "source": v.start_source} for v in dia.ranked if v.feasible}
            t0 = time.time()
            subs = await asyncio.gather(*(fed.submit(probe.model_copy(update={
                "command": f"sleep {base_s / fed.sites[s].cfg.speed_factor:.2f}"}), s)
                for s in feasible))
            records.append({"round": r, "t0": t0, "choice": choice, "estimate": est,
                            "pending": {s: len(snaps[s].pending) for s in snaps},
                            "jobs": {j.site: j.id for j in subs}})
        for rec in records:  # wait for every probe, censoring at the bound
            for jid in rec["jobs"].values():
                left = rec["t0"] + max_wait - time.time()
                try:
                    await fed.wait(jid, timeout=max(left, 1.0))
                except Exception:
                    await fed.cancel(jid)
        if bg.done() and not bg.cancelled() and bg.exception() is None:
            submitted = bg.result()[0]  # {"submitted": {site: n}, "failed": n, ...}
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
        scored.append({**{k: rec[k] for k in ("round", "choice", "pending", "estimate")},
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
        "background_jobs": len(jobs), "background_submitted": submitted, "profile": profile,
        "time_scale": time_scale,
        "per_round": scored,
    }


async def _reap(fed, records: list[dict], max_wait: float) -> None:
    """Cancel earlier rounds' probes past their bound now, not only after the last round
    (they are censored either way; left queued they would pile up at blocked sites)."""
    now = time.time()
    late = [jid for rec in records if now - rec["t0"] >= max_wait
            for jid in rec["jobs"].values()]
    for jid in late:
        if not fed.store.get_job(jid).state.terminal:
            try:
                await fed.cancel(jid)
            except Exception:  # ended meanwhile: scored from its state as usual
                pass


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
    p.add_argument("--profile", default=PROFILE, help="testbed.load profile (background)")
    args = p.parse_args(argv)
    args.tag = args.tag or f"seed{args.seed}"
    r = asyncio.run(bench(config_path(args.config), args.seed, args.rounds, args.interval,
                          args.warmup, args.base, args.max_wait, args.time_scale,
                          args.profile))
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
