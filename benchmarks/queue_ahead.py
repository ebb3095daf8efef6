"""What stood ahead of a kept real-log run's probes, and which part of the calibration moved
their predicted start which way (issue 15, session 31; no test bed).

A real-log run's replay of one site is drawn again from its seed (`probe_oracle.replay_of`)
and played out at true runtimes in the engine's Slurm plan (`probe_oracle.playout`, the
`oracle` whose probe starts matched gamma's recorded ones in every round of seeds 118 and
122). At each round's moment this reports, from that play-out:

- the queue: jobs running and waiting, their CPUs, and the CPU-seconds the waiting ones
  asked against what they ran (the log's runtimes);
- the running jobs' ends: the median of the seconds left to their walltimes, to their true
  ends, and to the ends the calibration gives them (`Ratio.end_share`, the median rule);
- the calibration of their classes (`SiteCalibration`, the history the run wrote and the
  window's jobs ended by then): the mean ratio runtime / request the engine plans queued
  work at, with the change-point cut and without it, against the mean true ratio of the
  jobs running and waiting then (the work the plan is about);
- the engine's start on the rebuilt view (`probe_oracle.engine_starts`' view), with the
  calibration as built, without the change-point cut (`uncut`), with no calibration (the
  walltime plan), with each class's ratios replaced by the true ratios of the jobs ahead
  (a perfect ratio per class: what is left is the plan's), and with the calibration as
  built on the view given as many waiting jobs as the run recorded (copies of the latest
  submitted: a live site that ran the replay slower than its runtimes held more waiting),
  beside the play-out's own probe start and the recorded one; and (session 32) with the
  calibration variants of `VARIANTS` (`cut_wide`: a change-point cut only with 40 jobs
  on each side; `shrunk`: each size class mixed with its partition's ratios by count;
  `at_limit`: jobs asking their partition's limit, as the replay gives a job without a
  request, a class apart). The summary is also given per half (`halves.half_of`: even
  seeds the design half, odd ones held out).

    python -m benchmarks.queue_ahead --run results/placement-...-seed122.json --site gamma
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from diamond_jupyter.calibration import (
    MAX_SAMPLES,
    RunSample,
    SiteCalibration,
    regime_start,
    size_class,
)
from diamond_jupyter.model import BadInput

from .common import emit, markdown_table, median, parser
from .halves import HALVES, half_of
from .probe_oracle import (
    NOW,
    PROBE_CPUS,
    PROBE_WALLTIME_S,
    TRACES,
    _default_partition,
    playout,
    rebuilt_calibration,
    rebuilt_view,
    replay_of,
    with_estimates,
)


def _class_means(cal_samples: list[RunSample], cls: str, window_from: float = 0.0
                 ) -> dict[str, Any]:
    """The mean ratio of one size class's latest samples, with the change-point cut (as
    the engine keeps them) and without, how many each keeps, and how many of those kept
    ended in the replay's window (at `window_from` or later: the window's own jobs)."""
    ss = sorted((s for s in cal_samples if size_class(s.cpus) == cls),
                key=lambda s: s.ended_at)[-MAX_SAMPLES:]
    if not ss:
        return {"n": 0}
    ratios = [s.ratio for s in ss]
    cut = regime_start(ratios)
    kept = ratios[cut:]
    return {"n": len(ratios), "kept": len(kept),
            "kept_window": sum(x.ended_at >= window_from for x in ss[cut:]),
            "mean_cut": sum(kept) / len(kept),
            "mean_uncut": sum(ratios) / len(ratios)}


def _true_calibration(jobs: list, ahead: list[int], site: str, t: float) -> SiteCalibration:
    """A calibration whose every class holds the true ratios of the jobs ahead at `t` (each
    as a finished sample), so the engine plans them at what they ran."""
    default = _default_partition(site)
    at = (NOW + timedelta(seconds=-1)).timestamp()
    samples = [RunSample(jobs[i].partition or default, jobs[i].nodes * jobs[i].cpus_per_node,
                         jobs[i].walltime_min * 60.0, max(1.0, jobs[i].runtime_s), at)
               for i in ahead]
    return SiteCalibration(samples * max(1, -(-5 // max(1, len(samples)))))


def _place(view: Any, site: str, cal: SiteCalibration | None) -> tuple[float | None, ...]:
    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.model import JobSpec, Resources
    from diamond_jupyter.placement import place
    from diamond_jupyter.testbed.clusters import cluster

    cfg = SiteConfig(name=site, speed_factor=cluster(site).speed_factor)
    spec = JobSpec(name="probe", command="true", resources=Resources(
        nodes=1, cpus_per_task=PROBE_CPUS, walltime_s=PROBE_WALLTIME_S))
    v = place(spec, [(cfg, view)], now=NOW,
              calibration={site: cal} if cal is not None else None).verdict(site)

    def secs(x: datetime | None) -> float | None:
        return None if x is None else round((x - NOW).total_seconds(), 1)
    return (secs(v.estimated_start), secs(v.start_bound)) if v else (None, None)


# session 32's calibration variants and its `recent_cap` (a calibrated start
# capped by the site's recent waits of its class, `calibration.capped_by_waits`)
VARIANTS = ("cut_wide", "shrunk", "at_limit", "recent_cap")


def variant_keywords(site: str) -> dict[str, dict[str, Any]]:
    """SiteCalibration's keywords of each of VARIANTS (see `benchmarks.prediction`):
    `at_limit` with the site's partitions' time limits (what a job without a request gets
    in the replay)."""
    from diamond_jupyter.dialects.scripts_common import parse_slurm_time
    from diamond_jupyter.testbed.clusters import cluster

    from .prediction import VARIANTS as LOG_VARIANTS

    limits = {p.name: float(s) for p in cluster(site).partitions
              if (s := parse_slurm_time(p.max_time)) is not None}
    return {"cut_wide": LOG_VARIANTS["cut_wide"], "shrunk": LOG_VARIANTS["shrunk"],
            "at_limit": {"at_limit": limits}, "recent_cap": {"recent_cap": True}}


def rounds_of(run: dict[str, Any], site: str, traces: Path = TRACES, warmup_s: float = 25.0,
              stale_s: float = 60.0) -> list[dict[str, Any]]:
    plan = replay_of(run, site, traces, history=True)
    jobs = plan.jobs
    starts, nodes_of = playout(jobs, site)
    interval = run.get("interval_s") or 12.0
    out = []
    for k, r in enumerate(run.get("per_round") or []):
        t = warmup_s + r.get("round", k) * interval
        running = [i for i, j in enumerate(jobs) if j.at_s <= t and starts.get(i) is not None
                   and starts[i] <= t < starts[i] + max(1.0, j.runtime_s)]
        waiting = [i for i, j in enumerate(jobs) if j.at_s <= t
                   and (starts.get(i) is None or starts[i] > t)]
        cal = rebuilt_calibration(plan, jobs, starts, t, site)
        uncut = rebuilt_calibration(plan, jobs, starts, t, site, change_points=False)
        variants = {name: rebuilt_calibration(plan, jobs, starts, t, site, **kw)
                    for name, kw in variant_keywords(site).items()}
        default = _default_partition(site)
        left_wall, left_true, left_cal = [], [], []
        for i in running:
            j, el = jobs[i], t - starts[i]
            req = j.walltime_min * 60.0
            left_wall.append(max(0.0, req - el))
            left_true.append(starts[i] + max(1.0, j.runtime_s) - t)
            ratio = cal.ratio(j.partition or default, j.nodes * j.cpus_per_node)
            left_cal.append(max(0.0, ratio.end_share(min(1.0, el / req), "median") * req - el)
                            if ratio else left_wall[-1])
        asked = sum(jobs[i].walltime_min * 60.0 * jobs[i].nodes * jobs[i].cpus_per_node
                    for i in waiting)
        used = sum(max(1.0, jobs[i].runtime_s) * jobs[i].nodes * jobs[i].cpus_per_node
                   for i in waiting)
        ahead = running + waiting
        samples = [RunSample(h.partition or default, h.cpus, h.walltime_min * 60.0,
                             h.end_s - h.start_s, (NOW + timedelta(seconds=h.end_s - t))
                             .timestamp()) for h in plan.history] + [
            RunSample(jobs[i].partition or default, jobs[i].nodes * jobs[i].cpus_per_node,
                      jobs[i].walltime_min * 60.0, max(1.0, jobs[i].runtime_s),
                      (NOW + timedelta(seconds=starts[i] + jobs[i].runtime_s - t)).timestamp())
            for i in range(len(jobs)) if starts.get(i) is not None
            and starts[i] + max(1.0, jobs[i].runtime_s) <= t]
        classes = {}
        for cls in sorted({size_class(jobs[i].nodes * jobs[i].cpus_per_node) for i in ahead}):
            mine = [i for i in ahead if size_class(jobs[i].nodes * jobs[i].cpus_per_node) == cls]
            true = [min(1.0, max(1.0, jobs[i].runtime_s) / (jobs[i].walltime_min * 60.0))
                    for i in mine]
            classes[cls] = {"ahead": len(mine), "true_mean": round(sum(true) / len(true), 3),
                            **{k: round(v, 3) if isinstance(v, float) else v
                               for k, v in _class_means(samples, cls, (
                                   NOW - timedelta(seconds=t)).timestamp()).items()}}
        then = max(0.0, t - stale_s)
        view = rebuilt_view(jobs, site, starts, nodes_of, t)
        earlier = rebuilt_view(jobs, site, starts, nodes_of, then) if then < t else None
        view = with_estimates(view, earlier, t - then)
        e = (r.get("estimate") or {}).get(site) or {}
        oracle_start = _probe_start(jobs, starts, t, site)
        out.append({
            "round": r.get("round", k), "t_s": t,
            "recorded_pending": (r.get("pending") or {}).get(site),
            "recorded_start_s": (r.get("started_s") or {}).get(site),
            "recorded_predicted_s": e.get("start_s"), "recorded_raw_s": e.get("raw_start_s"),
            "running": len(running), "running_cpus": sum(
                jobs[i].nodes * jobs[i].cpus_per_node for i in running),
            "waiting": len(waiting), "waiting_cpus": sum(
                jobs[i].nodes * jobs[i].cpus_per_node for i in waiting),
            "waiting_used_over_asked": round(used / asked, 3) if asked else None,
            "running_left_s": {"walltime": _med(left_wall), "true": _med(left_true),
                               "calibrated": _med(left_cal)},
            "classes": classes,
            "engine": {"calibrated": _place(view, site, cal),
                       "uncut": _place(view, site, uncut),
                       **{name: _place(view, site, c) for name, c in variants.items()},
                       "walltime": _place(view, site, None),
                       "true_ratios": _place(view, site, _true_calibration(jobs, ahead,
                                                                           site, t)),
                       "as_recorded_queue": _place(_with_recorded_queue(
                           view, jobs, waiting, r, site, t), site, cal)},
            "playout_start_s": oracle_start})
    return out


def _with_recorded_queue(view: Any, jobs: list, waiting: list[int], r: dict[str, Any],
                         site: str, t: float) -> Any:
    """`view` with as many more waiting jobs as the run recorded waiting beyond the
    play-out's: copies of the latest jobs submitted by `t` (the live site ran the replay
    slower than its runtimes; which jobs waited there was not kept)."""
    from .probe_oracle import _pending

    extra = max(0, ((r.get("pending") or {}).get(site) or 0) - len(waiting))
    latest = sorted((i for i, j in enumerate(jobs) if j.at_s <= t),
                    key=lambda i: jobs[i].at_s)[-extra:] if extra else []
    more = [_pending(i, jobs[i], t, site).model_copy(update={"native_id": f"copy-{i}"})
            for i in latest]
    return view.model_copy(update={"jobs": [*view.jobs, *more]})


def _med(v: list[float]) -> float | None:
    return None if not v else round(median(v), 1)


def _probe_start(jobs: list, starts: dict[int, float], t: float, site: str) -> float | None:
    from diamond_jupyter.testbed.clusters import cluster

    from .probe_oracle import probe_starts

    probe_s = 20.0 / (cluster(site).speed_factor or 1.0)
    s = probe_starts(jobs, site, [t], probe_s, True)[0]
    return None if s is None else round(s, 1)


def table(seed: Any, site: str, rows: list[dict[str, Any]]) -> str:
    def f(x: Any) -> str:
        return "-" if x is None else (f"{x:.1f}" if isinstance(x, float) else str(x))

    def cls(c: dict[str, Any]) -> str:
        return "; ".join(f"{k}: {v['ahead']} ahead, true {v['true_mean']}, cal "
                         f"{v.get('mean_cut', '-')} ({v.get('kept', 0)} of {v['n']}, "
                         f"{v.get('kept_window', 0)} the window's), uncut "
                         f"{v.get('mean_uncut', '-')}" for k, v in c.items())
    body = markdown_table(
        ["round", "pending (rec.)", "running / CPUs", "waiting / CPUs", "waiting used/asked",
         "running: s left wall / true / cal", "size classes ahead: mean ratio true vs cal",
         "engine start: cal / uncut / walltime / true ratios / recorded queue (bound)",
         "play-out",
         "recorded: pred., raw, started"],
        [(r["round"], f(r["recorded_pending"]), f"{r['running']} / {r['running_cpus']}",
          f"{r['waiting']} / {r['waiting_cpus']}", f(r["waiting_used_over_asked"]),
          " / ".join(f(r["running_left_s"][k]) for k in ("walltime", "true", "calibrated")),
          cls(r["classes"]),
          " / ".join(f"{f(r['engine'][k][0])} ({f(r['engine'][k][1])})"
                     for k in ("calibrated", "uncut", "walltime", "true_ratios",
                               "as_recorded_queue")),
          f(r["playout_start_s"]),
          f"{f(r['recorded_predicted_s'])}, {f(r['recorded_raw_s'])}, "
          f"{f(r['recorded_start_s'])}") for r in rows])
    return f"## seed {seed}, {site}\n\n{body}\n"


SLACK_S = 30.0  # a play-out start this near the recorded one rebuilds the site's queue


def faithful(r: dict[str, Any], max_wait_s: float) -> bool:
    """Whether the play-out started the probe as the site did: both within the run's bound
    and within SLACK_S of each other, or neither within the bound."""
    rec, out = r["recorded_start_s"], r["playout_start_s"]
    rec_in, out_in = rec is not None and rec <= max_wait_s, out is not None and out <= max_wait_s
    return (rec_in and out_in and abs(rec - out) <= SLACK_S) or (not rec_in and not out_in)


def summary(runs: dict[str, list[dict[str, Any]]], max_wait_s: float = 240.0
            ) -> dict[str, Any]:
    """Over every round: how often the play-out rebuilt the site, and on those rounds each
    engine variant's signed error against the play-out (median, and rounds over SLACK_S too
    soon or too late), and the main class's calibrated mean ratio against its true one."""
    rows = [r for rs in runs.values() for r in rs]
    good = [r for r in rows if faithful(r, max_wait_s) and r["playout_start_s"] is not None]
    out: dict[str, Any] = {"rounds": len(rows), "faithful": sum(
        faithful(r, max_wait_s) for r in rows), "scored": len(good)}
    for k in ("calibrated", "uncut", *VARIANTS, "walltime", "true_ratios"):
        err = [min(r["engine"][k][0], 3600.0) - r["playout_start_s"] for r in good
               if k in r["engine"] and r["engine"][k][0] is not None]
        out[k] = {"median_error_s": _med(err), "too_soon": sum(e < -SLACK_S for e in err),
                  "too_late": sum(e > SLACK_S for e in err)}
    factors: dict[str, list[float]] = {"true_over_cut": [], "true_over_uncut": []}
    for r in good:
        c = max(r["classes"].values(), key=lambda v: v["ahead"], default=None)
        if c and c.get("mean_cut"):
            factors["true_over_cut"].append(c["true_mean"] / c["mean_cut"])
            factors["true_over_uncut"].append(c["true_mean"] / c["mean_uncut"])
    out["main_class_ratio"] = {k: _med(v) for k, v in factors.items()}
    return out


def recorded_parts(runs: list[dict[str, Any]], chosen: str, fastest: str) -> dict[str, Any]:
    """From the runs' own records, over the rounds diamond lost choosing `chosen` where
    `fastest` was fastest: each site's walltime plan (`raw_start_s`), calibrated start
    (before the own jobs' correction), start, bound and actual start (the run's bound where
    none came), and how often each part could have made the miss."""
    rows = []
    for run in runs:
        bound = run.get("max_wait_s") or 240.0
        for r in run.get("per_round") or []:
            est = r.get("estimate") or {}
            if r["choice"].get("diamond") != chosen or r.get("fastest") != fastest or \
                    not (r.get("additional_s") or {}).get("diamond") or chosen not in est:
                continue
            seen = {s: (r.get("started_s") or {}).get(s) for s in (chosen, fastest)}
            rows.append((run.get("seed"), r, est, {s: bound if v is None else v
                                                   for s, v in seen.items()}))
    if not rows:
        return {"rounds": 0}

    def part(site: str) -> dict[str, Any]:
        raw = [e[site].get("raw_start_s") or 0.0 for _, _, e, _ in rows]
        cal = [e[site]["model_start_s"] if e[site].get("model_start_s") is not None
               else e[site]["start_s"] for _, _, e, _ in rows]
        seen = [a[site] for _, _, _, a in rows]
        return {"raw_median_s": _med(raw), "raw_range_s": [min(raw), max(raw)],
                "calibrated_median_s": _med(cal), "calibrated_range_s": [min(cal), max(cal)],
                "started_median_s": _med(seen),
                "raw_too_soon": sum(a + 10.0 < b for a, b in zip(raw, seen, strict=True)),
                "raw_zero_too_soon": sum(a == 0 and b > 10.0
                                         for a, b in zip(raw, seen, strict=True)),
                "pulled_in_median_x": _med([a / max(b, 1.0) for a, b in zip(raw, cal,
                                                                          strict=True) if a]),
                "own_jobs_moved_s": [round(e[site]["start_s"] - e[site]["model_start_s"], 1)
                                     for _, _, e, _ in rows
                                     if e[site].get("model_start_s") is not None],
                "borrowed": sum(bool(e[site].get("borrowed")) for _, _, e, _ in rows),
                "bound_from_recent_waits": sum(
                    (e[site].get("recent_bound_s") or -1) >= (e[site].get("bound_s") or 0) - 0.5
                    for _, _, e, _ in rows),
                "bound_covered": sum((e[site].get("bound_s") or 0) >= a[site]
                                     for _, _, e, a in rows),
                "samples": sorted({e[site].get("samples") for _, _, e, _ in rows},
                                  key=lambda x: x or 0)}
    return {"rounds": len(rows), "lost_s": round(sum(r["additional_s"]["diamond"]
                                                    for _, r, _, _ in rows), 1),
            "none_started": sum((r.get("started_s") or {}).get(chosen) is None
                                for _, r, _, _ in rows),
            chosen: part(chosen), fastest: part(fastest)}


def _seed(key: str) -> int | None:
    return int(key) if key.lstrip("-").isdigit() else None


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--run", required=True, nargs="+", help="kept real-log placement runs")
    p.add_argument("--site", required=True, help="the site whose queue to rebuild")
    p.add_argument("--traces", default=str(TRACES), help="where the logs are")
    p.add_argument("--name", default=None, help="the result's file name")
    p.add_argument("--lost-to", default=None, metavar="FASTEST",
                   help="only the runs' records: the rounds lost choosing --site where "
                        "FASTEST was fastest, each site's plan, calibration and start")
    args = p.parse_args(argv)
    if args.lost_to:
        runs = [json.loads(Path(path).read_text()) for path in args.run]
        got = recorded_parts(runs, args.site, args.lost_to)
        emit(args.name or f"queue_ahead-lost-{args.site}-{args.lost_to}", args, got,
             "```\n" + json.dumps(got, indent=1) + "\n```\n")
        return got
    data: dict[str, list[dict[str, Any]]] = {}
    md, skipped = "", []
    for path in args.run:
        run = json.loads(Path(path).read_text())
        try:
            rows = rounds_of(run, args.site, Path(args.traces))
        except BadInput as e:  # no log on the site, or drawn by another version
            skipped.append({"run": Path(path).name, "why": str(e)})
            continue
        data[str(run.get("seed"))] = rows
        md += table(run.get("seed"), args.site, rows) + "\n"
    total = summary(data)
    halves = {h: summary({k: v for k, v in data.items() if half_of(_seed(k)) == h})
              for h in HALVES[:2]}
    md += "## every round\n\n" + "\n".join(f"- {k}: {v}" for k, v in total.items()) + \
        "".join(f"\n- skipped {x['run']}: {x['why']}" for x in skipped) + "\n" + "".join(
            f"\n## {h} half (`halves.half_of`)\n\n" + "\n".join(
                f"- {k}: {v}" for k, v in got.items()) + "\n" for h, got in halves.items())
    emit(args.name or f"queue_ahead-{args.site}", args,
         {"site": args.site, "summary": total, "halves": halves, "runs": data,
          "skipped": skipped}, md)
    return data


if __name__ == "__main__":
    main()
