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
  waits minutes although the queue is the shortest;
- delta (Grid Engine, speed 0.9): the `busy` stream (runs before it joined left delta idle,
  a fixed home nothing could beat; the seeds table names the sites a run loaded).
Beta's and gamma's jobs run in real time, so their walltime requests over-estimate their
runtimes by 1.2-3x (1 min at least), as users' requests do.
Each round takes a snapshot of every site, lets every policy choose from it (fixed = home
alpha, fewest_pending, random seeded, diamond), then sends the same probe (1 node x 8
cores, `sleep BASE/speed_factor`) to every feasible site at once. hedge2 is diamond with
hedging (copies on its two best sites, the first to start runs, the other is cancelled),
scored against the fastest matched probe, with the copies each hedged job cost:
- `--hedge-mode matched` (the default): from the matched probes themselves, which are the
  copies a hedge would have sent there at that moment: the one of diamond's two best sites
  whose probe started first runs; the other counts as a started loser if it started within
  `CANCEL_S` of the winner (the real hedge cancels within a second; the job wrapper's start
  token stops a loser's payload). The measurement adds no job to any site.
- `--hedge-mode real`: a real `submit --hedge 2` in the same round. Its copies land on the
  sites diamond ranked best at the same moment as the matched probes, so the site diamond
  chose receives two jobs at once (the probe and a copy) where the others receive one: the
  measurement loads the sites it measures, against diamond and hedge2 alike. Completion =
the probe's own end timestamp minus the round's start; a policy scores its choice's
completion minus the fastest observed. Policies see only the snapshot taken before the
round; rounds are never re-run or filtered. A probe not done `--max-wait` s after its
round is cancelled and counted at that bound (a lower bound, counted in `censored`). Each
round keeps the view of every site it was decided on (`per_round[].view`, `view_record`),
which `benchmarks.misses` prints.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import tempfile
import time
from collections.abc import Collection
from datetime import datetime
from pathlib import Path

from diamond_jupyter.calibration import SiteCalibration, site_waits
from diamond_jupyter.federation import CALIBRATION_WINDOW_S
from diamond_jupyter.model import SiteSnapshot

from .common import (
    config_path,
    emit,
    markdown_table,
    mean,
    median,
    parser,
    pct,
    primary_sites,
    ratio,
)

POLICIES = ("fixed", "fewest_pending", "random", "diamond")
# diamond with another calibration, scored on the same rounds (measured, not the engine's):
# the running jobs counted as censored runtimes, over every running job or over the jobs
# that started in the calibration window (`Federation.calibration(running=...)`)
VARIANTS = {"diamond_survivors": None, "diamond_cohort": 6 * 3600.0}
HOME = "alpha"
PROFILE = "depth_misleads"
HEDGE = 2  # copies a hedged submission sends
CANCEL_S = 1.0  # matched hedge: a loser starting this soon after the winner also started
FLOOR_S = 1.0  # ratio denominator floor: the schedulers' start granularity (~1 s cycles)
PROBE_CPUS = 8  # the probe: one node, one task of 8 CPUs
VIEW_CAP = 300  # jobs of a site's view recorded per round (running first); the rest counted


def recent_bounds(cal: SiteCalibration | None, snap: SiteSnapshot, partition: str | None,
                  cpus: int, now: datetime) -> dict[str, float | None]:
    """The site's recent-wait 90% bound for a job of `cpus` CPUs on `partition`, as
    placement raises a start's bound by it (`calibration.site_waits`), and the same over
    the jobs that asked for no more than it: what `benchmarks.model_replay` replays the
    restriction from."""
    waits = site_waits(cal.queued if cal else None, snap.jobs, now)
    every = waits.bound(partition, cpus)
    smaller = waits.no_larger_than(cpus).bound(partition, cpus)
    return {"recent_bound_s": None if every is None else every[0],
            "recent_bound_no_larger_s": None if smaller is None else smaller[0]}


def view_record(snap: SiteSnapshot, own: Collection[str], ended: Collection[str],
                now: datetime, cap: int = VIEW_CAP) -> dict:
    """The view of one site that a round's decision was made on, compact: its running jobs,
    then its waiting ones in the view's order (placement reads it as priority), at most `cap`
    in all (the rest counted). Per job: the native id, its user ("own" for this store's jobs,
    `own` and `ended`), partition, size, state and reason, its start (running) or the
    scheduler's start estimate (waiting) in seconds from `now`, its time limit, and whether
    the engine counted it as ended (`ended`: `Federation.ended_in_view`). And its nodes (at
    most `cap`): state, CPUs and GPUs allocated of all, and whether placement takes new jobs
    there (`placement_fit.node_usable`: a node marked not responding, `*`, is not used)."""
    from diamond_jupyter.placement_fit import node_usable

    def rel(t: datetime | None) -> float | None:
        return None if t is None else round((t - now).total_seconds(), 1)

    def row(j) -> dict:  # unknown fields left out (the JSON stays small)
        mine = j.native_id in own or j.native_id in ended
        return {k: v for k, v in {
                "id": j.native_id, "user": "own" if mine else j.user,
                "partition": j.partition, "cpus": j.cpus, "nodes": j.nodes, "gpus": j.gpus,
                "state": j.state.value, "reason": j.reason,
                "start_s": rel(j.started_at if j.started_at else j.estimated_start),
                "walltime_s": j.walltime_s, "ended": j.native_id in ended}.items()
                if v is not None}
    running, pending = snap.running, snap.pending
    kept_running = running[:cap]
    kept_pending = pending[:max(0, cap - len(kept_running))]
    return {"taken_s": rel(snap.taken_at), "reachable": snap.reachable,
            "queue_error": snap.queue_error,
            "nodes": [{"name": n.name, "state": n.state, "cpus": n.cpus,
                       "cpus_allocated": n.cpus_allocated, "gpus": n.gpus,
                       "gpus_allocated": n.gpus_allocated, "usable": node_usable(n)}
                      for n in snap.nodes[:cap]],
            "running": [row(j) for j in kept_running],
            "pending": [row(j) for j in kept_pending],
            "left_out": {"nodes": max(0, len(snap.nodes) - cap),
                         "running": len(running) - len(kept_running),
                         "pending": len(pending) - len(kept_pending)}}


def own_ids(fed, site: str) -> set[str]:
    """The native ids of this store's jobs at `site` that have not ended (a reused id of
    an ended one is another user's job)."""
    from diamond_jupyter.model import TERMINAL_STATES

    return {j.native_id for j in fed.store.list_jobs(site=site, limit=None)
            if j.native_id and j.state not in TERMINAL_STATES}


async def bench(config: str, seed: int, rounds: int, interval: float, warmup: float,
                base_s: float, max_wait: float, time_scale: float = 150.0,
                profile: str = PROFILE, traces: list[tuple[str, str]] | None = None,
                trace_scale: float = 60.0, hedge_mode: str = "matched",
                history_s: float = 0.0) -> dict:
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import JobSpec, JobState, Resources
    from diamond_jupyter.placement import place
    from diamond_jupyter.store import Store
    from diamond_jupyter.testbed import load

    tmp = Path(tempfile.mkdtemp(prefix="bench-placement-"))
    saved: dict[Path, bytes] = {}
    fed = Federation(config, store=Store(tmp / "store.sqlite"), poll_interval_s=30,
                     allowed_sites=primary_sites(config))
    await fed.start()
    prefix = f"bpl{seed}x{int(time.time()) % 100000}-"
    duration = warmup + rounds * interval
    if traces:
        from diamond_jupyter.testbed import trace
        from diamond_jupyter.testbed.clusters import cluster

        plans = trace.plan_replays([(path, cluster(site)) for path, site in traces],
                                   scale=trace_scale, duration_s=duration, seed=seed,
                                   history_s=history_s)
        # the sites' accounting holds the log's own past for this run, and is put back as
        # it was after it: the next run (another background's) is not calibrated on it
        saved = load.save_accounting(sorted({site for _, site in traces}))
        load.write_history(plans, prefix)
        background = sorted((j for pl in plans for j in pl.jobs), key=lambda j: j.at_s)
        trace_info = [pl.summary() for pl in plans]
    else:
        background, trace_info = load.plan(profile, seed, duration, time_scale), []
    jobs = [dataclasses.replace(j, name=f"{prefix}{j.name}") for j in background]
    bg = asyncio.gather(load.run(config, jobs))
    probe = JobSpec(name="probe", metadata={"application": "bench-probe"},
                    resources=Resources(nodes=1, tasks=1, cpus_per_task=PROBE_CPUS,
                                        walltime_s=60))
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
            # what `Federation.place` passes, taken once for every policy
            history, own_share = fed.runtime_history()
            known = dict(history=history, own_share=own_share,
                         calibration=await fed.calibration(), ended=fed.ended_in_view(snaps))
            choice = {p: place(probe, pairs, policy=p, seed=seed * 1000 + r, home=HOME,
                               **known).choice
                      for p in POLICIES}
            dia = place(probe, pairs, **known)
            for variant, cohort_s in VARIANTS.items():
                cal = await fed.calibration(fetch=False, running=snaps, cohort_s=cohort_s)
                choice[variant] = place(probe, pairs, **{**known, "calibration": cal}).choice
            view = {s: view_record(snaps[s], own_ids(fed, s), known["ended"].get(s, ()),
                                   dia.now) for s in snaps}
            feasible = [v.site for v in dia.ranked if v.feasible]
            ranking = feasible[:]  # diamond's order: hedging takes the first HEDGE of it

            def rel(t, now=dia.now):
                return (t - now).total_seconds() if t else None
            est = {v.site: {"start_s": rel(v.estimated_start),
                            "finish_s": rel(v.estimated_finish),
                            "source": v.start_source,
                            "raw_start_s": rel(v.raw_start), "bound_s": rel(v.start_bound),
                            "samples": v.calibration_samples,
                            "borrowed": v.calibration_borrowed,  # other sites' jobs
                            "model_start_s": rel(v.model_start),
                            "own_wait_ratio": v.own_wait_ratio, "own_samples": v.own_samples,
                            "own_shift_s": v.own_shift_s, "own_queued_s": v.own_queued_s,
                            **recent_bounds(known["calibration"].get(v.site), snaps[v.site],
                                            v.partition, PROBE_CPUS, dia.now)}
                   for v in dia.ranked if v.feasible}
            t0 = time.time()
            probes = asyncio.gather(*(fed.submit(probe.model_copy(update={
                "command": f"sleep {base_s / fed.sites[s].cfg.speed_factor:.2f}"}), s)
                for s in feasible))
            if hedge_mode == "real":
                subs, hedged = await asyncio.gather(probes, fed.submit(probe.model_copy(
                    update={"command": _by_site(fed, base_s)}), "auto", hedge=HEDGE))
                group = hedged.hedge_group
            else:
                subs, group = await probes, None
            records.append({"round": r, "t0": t0, "choice": choice, "estimate": est,
                            "ranking": ranking, "runtime_basis": dia.runtime_basis,
                            "pending": {s: len(snaps[s].pending) for s in snaps},
                            "jobs": {j.site: j.id for j in subs},
                            "hedge": group, "view": view})
        for rec in records:  # wait for every probe, censoring at the bound
            for jid in rec["jobs"].values():
                left = rec["t0"] + max_wait - time.time()
                try:
                    await fed.wait(jid, timeout=max(left, 1.0))
                except Exception:
                    await fed.cancel(jid)
            if rec["hedge"] is not None:
                await _wait_hedge(fed, rec, max_wait)
        if bg.done() and not bg.cancelled() and bg.exception() is None:
            submitted = bg.result()[0]  # {"submitted": {site: n}, "failed": n, ...}
        bg.cancel()
    finally:
        await asyncio.gather(bg, return_exceptions=True)
        await load.cancel(config, prefix)  # this run's background jobs, no one else's
        await fed.close()
        if saved:
            load.restore_accounting(saved)
    scored, all_censored = [], []
    sites = sorted(fed.sites)
    for rec in records:
        done, started, censored = {}, {}, []
        for site, jid in rec["jobs"].items():
            j = fed.store.get_job(jid)
            if j.state == JobState.COMPLETED and j.ended_at:
                done[site] = j.ended_at.timestamp() - rec["t0"]
                if j.started_at:
                    started[site] = j.started_at.timestamp() - rec["t0"]
            else:
                done[site] = max_wait
                censored.append(site)
        row = {**{k: rec[k] for k in ("round", "choice", "pending", "estimate", "ranking",
                                      "view")},
               "completion_s": done, "started_s": started, "censored": censored}
        if len(censored) == len(done):  # every site hit the bound: no winner is known
            all_censored.append(row)
            continue
        best = min(done.values())
        extra = {p: done[c] - best if c in done else None for p, c in rec["choice"].items()}
        for site in sites:  # each site as a fixed home
            extra[f"home:{site}"] = done[site] - best if site in done else None
        hedge = _hedge_outcome(fed, rec, max_wait) if rec["hedge"] is not None else \
            _matched_hedge(rec["ranking"][:HEDGE], done, started, censored, max_wait)
        row["hedge"] = hedge
        extra[f"hedge{HEDGE}"] = max(0.0, hedge["completion_s"] - best)
        scored.append({**row, "fastest": min(done, key=done.get), "additional_s": extra})
    shutil.rmtree(tmp, ignore_errors=True)

    def stats(key: str) -> dict:
        xs = [s["additional_s"][key] for s in scored if s["additional_s"].get(key) is not None]
        return {"median_s": median(xs), "p90_s": pct(xs, 90), "mean_s": mean(xs),
                "best_choice_rounds": sum(1 for x in xs if x == 0), "n": len(xs)}
    pol = {p: stats(p) for p in (*POLICIES, *VARIANTS, f"hedge{HEDGE}")}
    homes = {site: stats(f"home:{site}") for site in sites}
    hindsight = min((s for s in homes if homes[s]["mean_s"] is not None),
                    key=lambda s: homes[s]["mean_s"], default=None)
    avg_home_median = mean([h["median_s"] for h in homes.values() if h["median_s"] is not None])
    return {
        "policies": pol,
        "homes": homes,
        "best_home_in_hindsight": hindsight,
        "ratio_avg_home_over_diamond": ratio(avg_home_median, pol["diamond"]["median_s"],
                                             FLOOR_S),
        "ratio_fixed_over_diamond": ratio(pol["fixed"]["median_s"], pol["diamond"]["median_s"],
                                          FLOOR_S),
        "ratio_floor_s": FLOOR_S,
        "ratio_fixed_over_diamond_mean": ratio(pol["fixed"]["mean_s"], pol["diamond"]["mean_s"],
                                               FLOOR_S),
        "rounds": rounds, "seed": seed, "interval_s": interval, "probe_base_s": base_s,
        "max_wait_s": max_wait,
        "censored": sum(len(s["censored"]) for s in scored),
        "hedge": _hedge_summary([s["hedge"] for s in scored]), "hedge_mode": hedge_mode,
        "rounds_all_censored": len(all_censored),
        "background_jobs": len(jobs), "background_submitted": submitted,
        "profile": None if traces else profile, "traces": trace_info,
        "loaded_sites": [s for s in sites if any(j.site == s for j in jobs)],
        "time_scale": trace_scale if traces else time_scale,
        "history_s": history_s if traces else None,
        "per_round": scored, "per_round_all_censored": all_censored,
    }


def _by_site(fed, base_s: float) -> str:
    """The probe's command for whichever site a hedged copy lands on: the same
    `sleep BASE/speed_factor` as the matched probe there (Slurm names the cluster)."""
    arms = " ".join(f"{n}) sleep {base_s / s.cfg.speed_factor:.2f};;"
                    for n, s in fed.sites.items())
    return f'case "$SLURM_CLUSTER_NAME" in {arms} *) sleep {base_s:.2f};; esac'


async def _wait_hedge(fed, rec: dict, max_wait: float) -> None:
    """Until the hedged job's running copy ends (its others cancelled), within the bound;
    past it, every copy is cancelled (censored)."""
    try:
        left = rec["t0"] + max_wait - time.time()
        winner = await fed.hedge_winner(rec["hedge"], timeout=max(left, 1.0))
        await fed.wait(winner.id, timeout=max(rec["t0"] + max_wait - time.time(), 1.0))
    except Exception:
        for j in fed.hedge(rec["hedge"]).copies:
            if not j.state.terminal and j.native_id:
                try:
                    await fed.sites[j.site].cancel([j.native_id])
                except Exception:
                    pass


def _hedge_outcome(fed, rec: dict, max_wait: float) -> dict:
    """The hedged job of a round: where it ran, its completion (max_wait if censored),
    and what it cost: copies submitted, and copies that started but were stopped."""
    from diamond_jupyter.model import JobState

    h = fed.hedge(rec["hedge"])
    win = h.winner_job
    ok = win is not None and win.state == JobState.COMPLETED and win.ended_at is not None
    return {"group": h.id, "sites": [j.site for j in h.copies],
            "winner": win.site if win else None,
            "completion_s": win.ended_at.timestamp() - rec["t0"] if ok else max_wait,
            "censored": not ok, "copies": len(h.copies),
            "losers_started": sum(1 for j in h.copies if j is not win and j.started_at),
            "decided_after_start_s": _decision_delay(fed, h)}


def _matched_hedge(top: list[str], done: dict[str, float], started: dict[str, float],
                   censored: list[str], max_wait: float) -> dict:
    """The hedged job of a round from its matched probes: on `top` (diamond's best sites),
    the copy that starts first runs; a copy starting within CANCEL_S of it started too
    (its payload is stopped by the start token); none started: censored."""
    ran = sorted((started[s], s) for s in top if s in started)
    if not ran:
        return {"group": None, "sites": top, "winner": None, "completion_s": max_wait,
                "censored": True, "copies": len(top), "losers_started": 0,
                "decided_after_start_s": None}
    t, win = ran[0]
    ok = win not in censored
    return {"group": None, "sites": top, "winner": win,
            "completion_s": done[win] if ok else max_wait, "censored": not ok,
            "copies": len(top), "losers_started": sum(1 for u, _ in ran[1:] if u - t <= CANCEL_S),
            "decided_after_start_s": None}


def _decision_delay(fed, h) -> float | None:
    """Seconds from the winner's start event to the last loser's CANCELLED event."""
    win = h.winner_job
    if win is None:
        return None
    ran = [e.at for e in fed.store.events_since(0, kinds=["job.state"], job_id=win.id)
           if e.data.get("state") == "RUNNING"]
    ends = [e.at for j in h.copies if j is not win
            for e in fed.store.events_since(0, kinds=["job.state"], job_id=j.id)
            if e.data.get("state") == "CANCELLED" and e.data.get("source") == "hedge"]
    return round((max(ends) - ran[0]).total_seconds(), 3) if ran and ends else None


def _hedge_summary(rounds: list[dict]) -> dict:
    copies = [r["copies"] for r in rounds]
    delays = [r["decided_after_start_s"] for r in rounds
              if r["decided_after_start_s"] is not None]
    return {"jobs": len(rounds), "extra_submissions_per_job": mean([c - 1 for c in copies]),
            "losers_started_per_job": mean([r["losers_started"] for r in rounds]),
            "censored": sum(1 for r in rounds if r["censored"]),
            "cancel_after_winner_start_s_median": median(delays),
            "cancel_after_winner_start_s_max": max(delays) if delays else None}


async def _reap(fed, records: list[dict], max_wait: float) -> None:
    """Cancel earlier rounds' probes past their bound now, not only after the last round
    (they are censored either way; left queued they would pile up at blocked sites)."""
    now = time.time()
    late = [jid for rec in records if now - rec["t0"] >= max_wait
            for jid in [*rec["jobs"].values(), *(
                j.id for j in (fed.hedge(rec["hedge"]).copies if rec["hedge"] else ()))]]
    for jid in late:
        if not fed.store.get_job(jid).state.terminal:
            try:
                await fed.cancel(jid)
            except Exception:  # ended meanwhile: scored from its state as usual
                pass


_HEDGE_MODES = {"matched": "from the matched probes: the first of diamond's two best to start",
                "real": f"a real `submit --hedge {HEDGE}` each round"}


def main(argv: list[str] | None = None) -> dict:
    from diamond_jupyter.testbed.load import PROFILES

    p = parser(__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rounds", type=int, default=12)
    p.add_argument("--interval", type=float, default=12.0, help="seconds between rounds")
    p.add_argument("--warmup", type=float, default=25.0, help="load before the first round")
    p.add_argument("--base", type=float, default=20.0, help="probe runtime at speed 1.0 (s)")
    p.add_argument("--max-wait", type=float, default=240.0,
                   help="a probe not done this long after its round is censored (s)")
    p.add_argument("--time-scale", type=float, default=150.0,
                   help="home load: center-seconds per real second")
    p.add_argument("--profile", default=PROFILE, choices=tuple(PROFILES),
                   help="testbed.load profile (background)")
    p.add_argument("--trace", action="append", default=[], metavar="FILE.swf[.gz]",
                   help="a real log as --site's background instead of the profile "
                        "(repeat the pair: one log per site)")
    p.add_argument("--site", action="append", default=[], help="the site --trace loads")
    p.add_argument("--trace-scale", type=float, default=60.0,
                   help="with --trace: center seconds per real second")
    p.add_argument("--history", type=float, default=CALIBRATION_WINDOW_S, metavar="SECONDS",
                   help="with --trace: the log's jobs that ended in these real seconds before "
                        "the window take the place of each site's accounting first (Slurm's "
                        "jobcomp, Grid Engine's accounting file; since session 24 in place of "
                        "earlier runs' jobs), as if the site had replayed the log that long "
                        "(0: none, as before session 23)")
    p.add_argument("--hedge-mode", choices=("matched", "real"), default="matched",
                   help="hedge2 from the matched probes (adds no job), or a real "
                        "`submit --hedge 2` beside them (loads the sites it measures)")
    args = p.parse_args(argv)
    if len(args.trace) != len(args.site):
        p.error("each --trace needs its --site")
    traces = list(zip(args.trace, args.site, strict=True))
    bg_name = "+".join(f"{Path(t).name.split('-')[0]}@{s}" for t, s in traces) or args.profile
    args.tag = args.tag or f"{bg_name}-seed{args.seed}"
    r = asyncio.run(bench(config_path(args.config), args.seed, args.rounds, args.interval,
                          args.warmup, args.base, args.max_wait, args.time_scale,
                          args.profile, traces, args.trace_scale, args.hedge_mode,
                          args.history))
    rows = [(name, v["median_s"], v["p90_s"], v["mean_s"], f"{v['best_choice_rounds']}/{v['n']}")
            for name, v in [*r["policies"].items(),
                            *((f"home {s}", h) for s, h in r["homes"].items())]]
    md = (f"## matched rounds: {bg_name}, seed {r['seed']}, {r['rounds']} rounds, "
          f"{r['background_jobs']} background jobs\n\n"
          + markdown_table(["policy", "median extra s", "p90 s", "mean s", "fastest chosen"],
                           rows)
          + f"\nfixed/diamond (medians, denominator floor {FLOOR_S:g} s) = "
          f"{r['ratio_fixed_over_diamond']:.1f}x; means (same floor): "
          f"{r['ratio_fixed_over_diamond_mean'] or float('nan'):.1f}x; average home / diamond "
          f"(medians, floor {FLOOR_S:g} s) = {r['ratio_avg_home_over_diamond'] or 0:.1f}x; best "
          f"home in hindsight: {r['best_home_in_hindsight']}; censored probes: "
          f"{r['censored']}; rounds where every site was censored (not scored): "
          f"{r['rounds_all_censored']}\n"
          f"\nhedge{HEDGE} ({_HEDGE_MODES[r['hedge_mode']]}): extra submissions per "
          f"job {r['hedge']['extra_submissions_per_job']}, copies that started and were "
          f"stopped per job {r['hedge']['losers_started_per_job']}, censored "
          f"{r['hedge']['censored']}, loser cancelled after the winner's start: median "
          f"{r['hedge']['cancel_after_winner_start_s_median']} s, max "
          f"{r['hedge']['cancel_after_winner_start_s_max']} s\n")

    def plot(ax) -> None:
        keys = [*POLICIES, f"hedge{HEDGE}"]
        data = [[s["additional_s"][p] for s in r["per_round"]
                 if s["additional_s"].get(p) is not None] for p in keys]
        ax.boxplot(data, tick_labels=keys)
        ax.set_ylabel("additional completion time vs fastest (s)")
        ax.set_title(f"matched rounds (seed {r['seed']}, {r['rounds']} rounds): "
                     f"fixed/diamond {r['ratio_fixed_over_diamond'] or 0:.1f}x")
    emit("placement", args, r, md, plot)
    return r


if __name__ == "__main__":
    main()
