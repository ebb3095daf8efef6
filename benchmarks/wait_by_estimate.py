"""Calibrating a scheduler's start estimates by their size, against real centers' logs.

The engine corrects a scheduler's estimated wait by the median ratio actual / estimated
wait of its recent jobs of the same partition and size class (`calibration.WaitSample`),
one ratio for every estimate. Session 44's replay (`overpredict_replay`) found that ratio
too high under long estimates and too low under short ones. This benchmark measures, on
the SWF logs (no test bed), whether a correction that depends on the estimate's size does
better:

- `class`: the engine's (`SiteCalibration` of the wait samples: median ratio, QBETS bound);
- `bins`: a ratio per band of the estimate (edges `--edges`, s) within each size class,
  falling back to the class's ratio where a band has fewer than `--min-bin` samples (and
  to the class's bound where a band has too few for a QBETS bound);
- `loglog`: per size class, log(wait) = a + b log(estimate), b the Theil-Sen slope kept
  in [0, 1], a the median residual; the bound adds the QBETS order statistic of the
  residuals.

The scheduler's estimate is the start its own plan gives (every job runs to its request:
`prediction`'s `walltime` model). At each seeded moment T of a log, the views of the
`--history-h` hours before it, one every `--every-min` minutes, note each waiting job's
estimate when first seen; those that started by T and after T - 6 h (the engine's
`CALIBRATION_WINDOW_S`) calibrate, as the engine's store does. The jobs waiting at T are
scored: the median absolute error of log(start) (waits under 30 s count as 30 s), the
share within 2x, and the 90% bound's coverage. A moment belongs to the log's first or
second half by its time. `pairs` draws, per half, a waiting job of each log at random and
places it where the method predicts the earlier start: the share placed where it started
first, and the mean extra wait against the better one (a two-site placement).
"""

from __future__ import annotations

import json
import math
import random
from bisect import bisect_left, bisect_right
from pathlib import Path
from statistics import median
from typing import Any

from .common import emit, markdown_table, parser

FLOOR_S = 30.0  # `calibration.WAIT_FLOOR_S`: waits and estimates under this count as this
CALIBRATION_WINDOW_S = 6 * 3600.0  # as `federation.CALIBRATION_WINDOW_S`
LOOKBACK_JOBS_S = 30 * 86400.0  # a view reads the jobs submitted this long before it
DEFAULT_EDGES = (300.0, 1000.0, 3000.0, 10000.0, 30000.0)  # half-decades of the estimate


def _fast_log(log, t: float):
    """The log cut to the jobs submitted in the LOOKBACK_JOBS_S before `t` (a view is
    rebuilt from those: older ones have ended)."""
    submits = [j.submit for j in log.jobs]
    lo, hi = bisect_left(submits, t - LOOKBACK_JOBS_S), bisect_right(submits, t)
    return log.with_jobs(log.jobs[lo:hi])


def estimates(log, nodes_n: int, cpn: int, t: float) -> tuple[dict[str, tuple], dict]:
    """At log second `t`: the scheduler's estimated wait of each waiting job with a known
    start (native id -> (CPUs, estimate s, actual wait s)) ."""
    from diamond_jupyter.placement_fit import partition_members, site_nodes
    from diamond_jupyter.placement_sim import build_state, pending_demands, queue_starts

    from .prediction import moment

    snap, _, truth = moment(_fast_log(log, t), nodes_n, cpn, t)
    now = snap.taken_at
    nodes = site_nodes(snap)
    members = partition_members(snap, nodes)
    st = build_state(snap, nodes, members, now, {})
    raw = queue_starts(st, pending_demands(snap, st, members, now, {}))
    cpus = {j.native_id: j.cpus for j in snap.pending}
    return {n: (cpus[n], raw[n], a) for n, a in truth.items() if n in raw}, truth


def moment_data(log, nodes_n: int, cpn: int, t: float, history_h: float, every_min: float
                ) -> dict[str, Any]:
    """The training samples (first-seen estimates of jobs started in the 6 h before `t`)
    and the targets (jobs waiting at `t`) of one moment."""
    first: dict[str, tuple[int, float, float, float]] = {}  # id -> cpus, est, actual, start
    views = int(history_h * 60 / every_min)
    for k in range(views, 0, -1):
        t0 = t - k * every_min * 60
        seen, _ = estimates(log, nodes_n, cpn, t0)
        for n, (c, est, a) in seen.items():
            if n not in first:
                first[n] = (c, est, a, t0 + a)
    train = [(c, est, a) for c, est, a, start in first.values()
             if t - CALIBRATION_WINDOW_S <= start <= t]
    targets, _ = estimates(log, nodes_n, cpn, t)
    return {"t": t, "train": train, "targets": list(targets.values())}


# --- the methods: training samples in, (start, bound or None) for an estimate out --------

def _class_of(cpus: int) -> str:
    from diamond_jupyter.calibration import size_class
    return size_class(cpus)


def _qbets(values: list[float]) -> float | None:
    from diamond_jupyter.calibration import quantile_upper_index
    v = sorted(values)
    k = quantile_upper_index(len(v))
    return None if k is None else v[k]


class ClassRatio:
    """The engine's wait calibration: per size class (`class`), or also per band of the
    estimate (`bins`: `SiteCalibration(estimate_bands=..., min_band=...)`)."""

    def __init__(self, train: list[tuple[int, float, float]], **bands: Any) -> None:
        from diamond_jupyter.calibration import SiteCalibration, WaitSample
        self.cal = SiteCalibration([WaitSample("all", c, e, a) for c, e, a in train],
                                   **bands) if train else None

    def __call__(self, cpus: int, est: float) -> tuple[float, float | None] | None:
        base = max(est, FLOOR_S)
        r = self.cal.ratio("all", cpus, base) if self.cal else None
        if r is None:
            return None
        return base * r.median, base * r.upper if r.bounded else None


def bin_ratio(edges: tuple[float, ...], min_bin: int) -> Any:
    return lambda train: ClassRatio(train, estimate_bands=edges, min_band=min_bin)


def theil_sen(xs: list[float], ys: list[float]) -> float | None:
    """The median of the pairwise slopes (pairs of equal x left out); None without any."""
    slopes = [(ys[j] - ys[i]) / (xs[j] - xs[i]) for i in range(len(xs))
              for j in range(i + 1, len(xs)) if xs[j] != xs[i]]
    return median(slopes) if slopes else None


class LogLog:
    """Per size class (else every class together), log wait on log estimate, slope in
    [0, 1]."""

    def __init__(self, train, min_n: int = 10, max_n: int = 200) -> None:
        self.fits: dict[str, tuple[float, float, float | None]] = {}
        groups: dict[str, list[tuple[float, float]]] = {}
        for c, e, a in train:
            p = (math.log(max(e, FLOOR_S)), math.log(max(a, FLOOR_S)))
            groups.setdefault(_class_of(c), []).append(p)
            groups.setdefault("*", []).append(p)
        for cls, pts in groups.items():
            if len(pts) < min_n:
                continue
            pts = pts[-max_n:]  # Theil-Sen is quadratic: the latest
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            slope = theil_sen(xs, ys)
            slope = 1.0 if slope is None else min(1.0, max(0.0, slope))
            res = [y - slope * x for x, y in zip(xs, ys, strict=True)]
            a0 = median(res)
            up = _qbets([r - a0 for r in res])
            self.fits[cls] = (a0, slope, up)

    def __call__(self, cpus: int, est: float):
        fit = self.fits.get(_class_of(cpus)) or self.fits.get("*")
        if fit is None:
            return None
        a0, slope, up = fit
        y = a0 + slope * math.log(max(est, FLOOR_S))
        return math.exp(y), None if up is None else math.exp(y + max(up, 0.0))


def methods(edges, min_bin: int, min_fit: int) -> dict[str, Any]:
    return {"class": ClassRatio,
            "bins": bin_ratio(edges, min_bin),
            "loglog": lambda tr: LogLog(tr, min_fit)}


def score(rows: list[tuple[float, float, float | None]]) -> dict[str, Any]:
    """rows: (predicted, actual, bound)."""
    if not rows:
        return {"jobs": 0}
    err = [abs(math.log(max(p, FLOOR_S)) - math.log(max(a, FLOOR_S))) for p, a, _ in rows]
    bounded = [(a, b) for _, a, b in rows if b is not None]
    return {"jobs": len(rows), "median_abs_log_error": round(median(err), 3),
            "within_2x": round(sum(e <= math.log(2) for e in err) / len(err), 3),
            "bounded": round(len(bounded) / len(rows), 3),
            "bound_coverage": round(sum(a <= b for a, b in bounded) / len(bounded), 3)
            if bounded else None}


def run_log(path: Path, moments: int, seed: int, history_h: float, every_min: float
            ) -> dict[str, Any]:
    from diamond_jupyter.testbed.trace import read_swf

    from .prediction import history_start, machine, max_nodes, with_requests

    log, _ = with_requests(read_swf(path))
    if not any(j.wait > 0 for j in log.jobs):
        return {"log": log.name, "moments": [], "note": "the log records no waits"}
    nodes_n, cpn = machine(log.max_procs, max_nodes(path))
    since, end = history_start(log), max(j.submit for j in log.jobs)
    rng = random.Random(seed)
    out = []
    for t in sorted(rng.uniform(since, end) for _ in range(moments)):
        m = moment_data(log, nodes_n, cpn, t, history_h, every_min)
        m["half"] = "first" if t < (since + end) / 2 else "second"
        if m["targets"]:
            out.append(m)
    return {"log": log.name, "moments": out}


def predictions(lg: dict, ms: dict[str, Any]) -> dict[str, list[list[tuple]]]:
    """method -> per moment, per target (predicted, actual, bound, half); targets with no
    prediction by some method are left out of every method (the same jobs scored)."""
    out: dict[str, list[list[tuple]]] = {name: [] for name in ms}
    for m in lg["moments"]:
        fns = {name: make(m["train"]) for name, make in ms.items()}
        per = {name: [] for name in ms}
        for c, est, a in m["targets"]:
            got = {name: fn(c, est) for name, fn in fns.items()}
            if any(g is None for g in got.values()):
                continue
            for name, (p, b) in got.items():
                per[name].append((p, a, b, m["half"]))
        for name in ms:
            out[name].append(per[name])
    return out


def pairs(preds: dict[str, dict[str, list[list[tuple]]]], half: str, draws: int, seed: int
          ) -> dict[str, dict[str, float]]:
    """Two logs as two sites: random targets of each, placed by the predicted start."""
    logs = list(preds)
    if len(logs) < 2:
        return {}
    a_name, b_name = logs[:2]
    rng = random.Random(seed)
    flat = {lg: {m: [r for rows in v for r in rows if r[3] == half]
                 for m, v in preds[lg].items()} for lg in (a_name, b_name)}
    first_method = next(iter(preds[a_name]))
    na, nb = len(flat[a_name][first_method]), len(flat[b_name][first_method])
    if not na or not nb or draws <= 0:
        return {}
    picks = [(rng.randrange(na), rng.randrange(nb)) for _ in range(draws)]
    out = {}
    for m in preds[a_name]:
        right, extra = 0, 0.0
        for i, j in picks:
            pa, aa, _, _ = flat[a_name][m][i]
            pb, ab, _, _ = flat[b_name][m][j]
            chosen = aa if pa <= pb else ab
            right += chosen == min(aa, ab)
            extra += chosen - min(aa, ab)
        out[m] = {"right": round(right / draws, 3), "mean_extra_wait_s": round(extra / draws)}
    return out


def evaluate(logs: list[dict], ms: dict[str, Any], draws: int, seed: int) -> dict[str, Any]:
    preds = {lg["log"]: predictions(lg, ms) for lg in logs if lg["moments"]}
    scores = {lg: {half: {m: score([r[:3] for rows in v for r in rows if r[3] == half])
                          for m, v in p.items()} for half in ("first", "second")}
              for lg, p in preds.items()}
    return {"scores": scores,
            "pairs": {half: pairs(preds, half, draws, seed) for half in ("first", "second")}}


def tune(logs: list[dict], min_bins=(5, 10, 29), edge_sets=None) -> list[tuple]:
    """The bins' variants on the first halves: (edges, min_bin, mean of the logs' median
    abs log error, worst coverage)."""
    edge_sets = edge_sets or (DEFAULT_EDGES, (100.0, 1000.0, 10000.0),
                              (300.0, 3000.0, 30000.0))
    out = []
    for edges in edge_sets:
        for k in min_bins:
            ev = evaluate(logs, {"bins": bin_ratio(edges, k)}, 0, 0)
            s = [ev["scores"][lg]["first"]["bins"] for lg in ev["scores"]]
            out.append((edges, k, round(sum(x["median_abs_log_error"] for x in s) / len(s), 3),
                        min(x["bound_coverage"] or 0 for x in s)))
    for k in (5, 10, 29):
        ev = evaluate(logs, {"loglog": lambda tr, k=k: LogLog(tr, k)}, 0, 0)
        s = [ev["scores"][lg]["first"]["loglog"] for lg in ev["scores"]]
        out.append(("loglog", k, round(sum(x["median_abs_log_error"] for x in s) / len(s), 3),
                    min(x["bound_coverage"] or 0 for x in s)))
    return out


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--trace", action="append", required=True, metavar="FILE.swf[.gz]")
    p.add_argument("--moments", type=int, default=60, help="scored moments per log")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--history-h", type=float, default=12.0,
                   help="hours of views before a moment whose estimates are noted")
    p.add_argument("--every-min", type=float, default=30.0, help="minutes between views")
    p.add_argument("--edges", default=",".join(f"{e:.0f}" for e in DEFAULT_EDGES),
                   help="the estimate bands' edges, s (for `bins`)")
    p.add_argument("--min-bin", type=int, default=10)
    p.add_argument("--min-fit", type=int, default=10)
    p.add_argument("--draws", type=int, default=4000)
    p.add_argument("--views", help="a JSON file of the logs' views: read if it exists (the "
                                   "methods scored again without rebuilding them), else written")
    args = p.parse_args(argv)
    args.tag = args.tag or f"seed{args.seed}"
    edges = tuple(float(e) for e in args.edges.split(","))
    views = Path(args.views) if args.views else None
    if views is not None and views.exists():
        logs = json.loads(views.read_text())
    else:
        logs = [run_log(Path(t), args.moments, args.seed, args.history_h, args.every_min)
                for t in args.trace]
        if views is not None:
            views.write_text(json.dumps(logs))
    ev = evaluate(logs, methods(edges, args.min_bin, args.min_fit), args.draws, args.seed)
    r = {"seed": args.seed, "moments_per_log": args.moments, "edges": edges,
         "min_bin": args.min_bin, "min_fit": args.min_fit, **ev,
         "tuning_first_halves": tune(logs),
         "notes": {lg["log"]: lg["note"] for lg in logs if lg.get("note")},
         "train_sizes": {lg["log"]: [len(m["train"]) for m in lg["moments"]] for lg in logs}}
    rows = [(lg, half, m, s["jobs"], s.get("median_abs_log_error"), s.get("within_2x"),
             s.get("bounded"), s.get("bound_coverage"))
            for lg, halves in ev["scores"].items() for half, ss in halves.items()
            for m, s in ss.items()]
    prow = [(half, m, v["right"], v["mean_extra_wait_s"])
            for half, pm in ev["pairs"].items() for m, v in pm.items()]
    md = (f"## wait calibration by the estimate's size, seed {args.seed}, {args.moments} "
          "moments per log\n\n" + markdown_table(
              ["log", "half", "method", "jobs", "median abs log error", "within 2x",
               "with a bound", "90% bound coverage"], rows)
          + "\n### two logs as two sites\n\n" + markdown_table(
              ["half", "method", "placed where it started first", "mean extra wait s"], prow)
          + "\n### bins and fits tried on the first halves\n\n" + markdown_table(
              ["edges", "min samples", "mean median abs log error", "worst coverage"],
              [(str(e), k, m, c) for e, k, m, c in r["tuning_first_halves"]])
          + "".join(f"\n{n}: {note}\n" for n, note in r["notes"].items()))
    emit("wait_by_estimate", args, r, md, None)
    return r


if __name__ == "__main__":
    main()
