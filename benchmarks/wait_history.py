"""How much history the wait calibration keeps, against real centers' logs (issue 15).

The engine calibrates a scheduler's start estimates from the noted estimates of the jobs
that started in the 6 h before a decision (`federation.CALIBRATION_WINDOW_S`): at the
real logs' centers that is 5-16 jobs a site, too few for a class of its own or a 90% bound
(`wait_by_estimate`). This benchmark measures longer histories on the SWF logs (no test
bed). Per log and half, `--stretches` seeded stretches of `--keep-d` + `--score-d` days are
viewed every `--every-min` minutes as the engine's queue views would be: each waiting job's
scheduler estimate (its own plan: `prediction`'s `walltime`) is noted when first seen,
with the wait it then had. Every job first seen after the first `--keep-d` days is a
target (a job just submitted, what placement predicts), calibrated by the noted jobs that
had started by then, chosen by each history:

- `6h` (the engine), `24h`, `72h`: the jobs started in that window;
- `lastN`: the N latest starts (within `--keep-d` days, the store's keep);
- `lastN_hlH`: the same, each weighing 2^(-age / H h) (a weighted median and bound).

Each history feeds `class` (`SiteCalibration` of the samples: the engine's median ratio
per size class, QBETS bound) and `loglog` (`wait_by_estimate.LogLog`); with no sample the
prediction is the scheduler's estimate, as in the engine. Scored per log and half: the
median absolute error of log(start), the 90% bound's coverage, and ranking: `--draws`
pairs of targets from two different stretches (two logs, or one log at two times: two
sites) placed where the prediction is earlier, the share placed where the job truly
started first (ties count as right) and the mean extra wait against the better one.
LLNL-Thunder's log records no waits: nothing to score there.
"""

from __future__ import annotations

import json
import random
from bisect import bisect_left, bisect_right
from pathlib import Path
from typing import Any

from .common import emit, markdown_table, parser
from .wait_by_estimate import FLOOR_S, LogLog, estimates, score

HOUR = 3600.0
WINDOWS_H = (6, 24, 72)
LAST_N = (50, 100, 200, 400)
HALF_LIVES_H = (12, 48)


def stretch_records(log, nodes_n: int, cpn: int, t0: float, days: float, every_min: float
                    ) -> list[tuple[int, float, float, float]]:
    """(CPUs, estimate s, wait s from then, seen at) of each job waiting in some view of
    the stretch from `t0`, at the first view it was seen in, by when it was seen."""
    first: dict[str, tuple[int, float, float, float]] = {}
    for k in range(int(days * 24 * 60 / every_min) + 1):
        t = t0 + k * every_min * 60
        seen, _ = estimates(log, nodes_n, cpn, t)
        for n, (c, est, a) in seen.items():
            first.setdefault(n, (c, est, a, t))
    return sorted(first.values(), key=lambda r: r[3])


def run_log(path: Path, stretches: int, keep_d: float, score_d: float, every_min: float,
            seed: int) -> dict[str, Any]:
    from diamond_jupyter.testbed.trace import read_swf

    from .prediction import history_start, machine, max_nodes, with_requests

    log, _ = with_requests(read_swf(path))
    if not any(j.wait > 0 for j in log.jobs):
        return {"log": log.name, "stretches": [], "note": "the log records no waits"}
    nodes_n, cpn = machine(log.max_procs, max_nodes(path))
    since, end = history_start(log), max(j.submit for j in log.jobs)
    mid, span = (since + end) / 2, (keep_d + score_d) * 86400
    rng = random.Random(seed)
    out = []
    for half, lo, hi in (("first", since, mid - span), ("second", mid, end - span)):
        for t0 in sorted(rng.uniform(lo, hi) for _ in range(stretches)):
            out.append({"half": half, "t0": t0, "records": stretch_records(
                log, nodes_n, cpn, t0, keep_d + score_d, every_min)})
    return {"log": log.name, "stretches": out}


# --- histories: the samples at a moment ---------------------------------------------------

def history(records: list, starts: list[float], order: list[int], at: float, keep_s: float,
            window_s: float | None, last_n: int | None) -> list[tuple[int, float, float, float]]:
    """(CPUs, estimate, wait, start) of the jobs started by `at` (and seen within the
    store's keep), in the window or the last N of them; `order`: record indices by start,
    `starts` their starts."""
    hi = bisect_right(starts, at)
    lo = bisect_left(starts, at - window_s) if window_s is not None else 0
    picked = [records[i] for i in order[lo:hi]]
    picked = [r for r in picked if r[3] >= at - keep_s]
    if last_n is not None:
        picked = picked[-last_n:]
    return [(c, e, a, seen + a) for c, e, a, seen in picked]


def _weighted_quantile(pairs: list[tuple[float, float]], q: float) -> float:
    pairs = sorted(pairs)
    total, acc = sum(w for _, w in pairs), 0.0
    for v, w in pairs:
        acc += w
        if acc >= q * total:
            return v
    return pairs[-1][0]


class ClassRatio:
    """The engine's wait ratio (`SiteCalibration`) of a history; with a half-life, each
    sample weighing 2^(-age / half-life): the weighted median ratio per size class (5
    samples or more, else every class), the bound at the QBETS order statistic's level of
    the weights' effective count."""

    def __init__(self, train: list, at: float, half_life_s: float | None = None) -> None:
        from diamond_jupyter.calibration import SiteCalibration, WaitSample, size_class
        self.half_life_s, self.size_class = half_life_s, size_class
        self.cal = SiteCalibration([WaitSample("all", c, e, a, s) for c, e, a, s in train]
                                   ) if train and half_life_s is None else None
        self.groups: dict[str, list[tuple[float, float]]] = {}
        if half_life_s is not None:
            for c, e, a, s in train:
                p = (min(1e3, max(1e-3, max(a, FLOOR_S) / max(e, FLOOR_S))),
                     2.0 ** (-(at - s) / half_life_s))
                self.groups.setdefault(size_class(c), []).append(p)
                self.groups.setdefault("*", []).append(p)

    def _weighted(self, cpus: int) -> tuple[float, float | None] | None:
        from diamond_jupyter.calibration import quantile_upper_index
        g = self.groups.get(self.size_class(cpus))
        if g is None or len(g) < 5:
            g = self.groups.get("*")
        if not g:
            return None
        n_eff = sum(w for _, w in g) ** 2 / sum(w * w for _, w in g)
        k = quantile_upper_index(max(1, round(n_eff)))
        return (_weighted_quantile(g, 0.5),
                None if k is None else _weighted_quantile(g, (k + 1) / round(n_eff)))

    def __call__(self, cpus: int, est: float) -> tuple[float, float | None] | None:
        base = max(est, FLOOR_S)
        if self.half_life_s is not None:
            w = self._weighted(cpus)
            return None if w is None else (base * w[0], None if w[1] is None else base * w[1])
        r = self.cal.ratio("all", cpus, base) if self.cal else None
        if r is None:
            return None
        return base * r.median, base * r.upper if r.bounded else None


def variants() -> dict[str, tuple[float | None, int | None, float | None]]:
    """name -> (window s, last N, half-life s)."""
    out: dict[str, tuple[float | None, int | None, float | None]] = {
        f"{h}h": (h * HOUR, None, None) for h in WINDOWS_H}
    for n in LAST_N:
        out[f"last{n}"] = (None, n, None)
        for hl in HALF_LIVES_H:
            out[f"last{n}_hl{hl}"] = (None, n, hl * HOUR)
    return out


def predict_stretch(st: dict, keep_d: float, min_fit: int) -> dict[str, list[tuple]]:
    """method/history -> (predicted, actual, bound, t) of each target of the stretch."""
    recs = st["records"]
    order = sorted(range(len(recs)), key=lambda i: recs[i][3] + recs[i][2])
    starts = [recs[i][3] + recs[i][2] for i in order]
    first_target = st["t0"] + keep_d * 86400
    out: dict[str, list[tuple]] = {}
    by_view: dict[float, list] = {}
    for r in recs:
        if r[3] >= first_target:
            by_view.setdefault(r[3], []).append(r)
    for at, targets in by_view.items():
        for name, (window, last_n, hl) in variants().items():
            train = history(recs, starts, order, at, keep_d * 86400, window, last_n)
            fns = {"class": ClassRatio(train, at, hl)}
            if hl is None:
                fns["loglog"] = LogLog([(c, e, a) for c, e, a, _ in train], min_fit)
            for m, fn in fns.items():
                rows = out.setdefault(f"{m}/{name}", [])
                for c, est, a, _ in targets:
                    got = fn(c, est)
                    p, b = got if got is not None else (max(est, FLOOR_S), None)
                    rows.append((p, a, b, at))
    out["scheduler"] = [(max(r[1], FLOOR_S), r[2], None, r[3])
                        for rs in by_view.values() for r in rs]
    return out


def rank_pairs(preds: list[tuple[str, list]], draws: int, seed: int, cross: bool | None
               ) -> dict[str, dict[str, float]]:
    """Targets of two different stretches ((log, rows by method) each) placed where the
    prediction is earlier; `cross`: the stretches of two logs (True), of one (False)."""
    rng = random.Random(seed)
    idx = [(i, j) for i in range(len(preds)) for j in range(len(preds)) if i < j
           and (cross is None or (preds[i][0] != preds[j][0]) == cross)
           and preds[i][1]["scheduler"] and preds[j][1]["scheduler"]]
    if not idx:
        return {}
    picks = []
    for _ in range(draws):
        i, j = rng.choice(idx)
        picks.append((i, rng.randrange(len(preds[i][1]["scheduler"])),
                      j, rng.randrange(len(preds[j][1]["scheduler"]))))
    out = {}
    for m in preds[0][1]:
        right, extra = 0, 0.0
        for i, a, j, b in picks:
            pa, aa = preds[i][1][m][a][:2]
            pb, ab = preds[j][1][m][b][:2]
            chosen = aa if pa <= pb else ab
            right += chosen <= min(aa, ab)
            extra += chosen - min(aa, ab)
        out[m] = {"right": round(right / draws, 3), "mean_extra_wait_s": round(extra / draws)}
    return out


def evaluate(logs: list[dict], keep_d: float, min_fit: int, draws: int, seed: int
             ) -> dict[str, Any]:
    per_half: dict[str, list[tuple[str, dict]]] = {"first": [], "second": []}
    for lg in logs:
        for st in lg["stretches"]:
            per_half[st["half"]].append((lg["log"], predict_stretch(st, keep_d, min_fit)))
    scores: dict[str, dict[str, dict[str, Any]]] = {}
    for half, preds in per_half.items():
        for name, p in preds:
            for m, rows in p.items():
                scores.setdefault(name, {}).setdefault(half, {}).setdefault(m, []).extend(rows)
    scores = {lg: {h: {m: score([r[:3] for r in rows]) for m, rows in ms.items()}
                   for h, ms in hs.items()} for lg, hs in scores.items()}
    ranking = {half: {kind: rank_pairs(preds, draws, seed, cross)
                      for kind, cross in (("two logs", True), ("one log", False))}
               for half, preds in per_half.items()}
    return {"scores": scores, "ranking": ranking}


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--trace", action="append", required=True, metavar="FILE.swf[.gz]")
    p.add_argument("--stretches", type=int, default=4, help="stretches per log and half")
    p.add_argument("--keep-d", type=float, default=3.0,
                   help="days of noted estimates before the first target (the store's keep)")
    p.add_argument("--score-d", type=float, default=2.0, help="days of targets a stretch")
    p.add_argument("--every-min", type=float, default=30.0, help="minutes between views")
    p.add_argument("--min-fit", type=int, default=10)
    p.add_argument("--draws", type=int, default=20000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--views", action="append", default=[],
                   help="a JSON file of the stretches' noted estimates: read if it exists "
                        "(scored again in seconds), else written; given again, the files' "
                        "logs scored together (each must exist)")
    args = p.parse_args(argv)
    args.tag = args.tag or f"seed{args.seed}"
    views = [Path(v) for v in args.views]
    if len(views) > 1 or views and views[0].exists():
        missing = [str(v) for v in views if not v.exists()]
        if missing:
            p.error(f"--views: no such file {', '.join(missing)} (several are only read)")
        logs = [lg for v in views for lg in json.loads(v.read_text())]
    else:
        logs = [run_log(Path(t), args.stretches, args.keep_d, args.score_d, args.every_min,
                        args.seed) for t in args.trace]
        if views:
            views[0].write_text(json.dumps(logs))
    ev = evaluate(logs, args.keep_d, args.min_fit, args.draws, args.seed)
    counts = {lg["log"]: len(lg["stretches"]) for lg in logs if lg["stretches"]}
    r = {"seed": args.seed, "stretches": counts, "keep_d": args.keep_d,
         "score_d": args.score_d, "every_min": args.every_min, **ev,
         "notes": {lg["log"]: lg["note"] for lg in logs if lg.get("note")}}
    rows = [(lg, half, m, s["jobs"], s.get("median_abs_log_error"), s.get("within_2x"),
             s.get("bounded"), s.get("bound_coverage"))
            for lg, halves in ev["scores"].items() for half, ss in sorted(halves.items())
            for m, s in ss.items()]
    prow = [(half, kind, m, v["right"], v["mean_extra_wait_s"])
            for half, kinds in ev["ranking"].items() for kind, pm in kinds.items()
            for m, v in pm.items()]
    md = (f"## wait calibration by the length of its history, seed {args.seed}, stretches "
          + ", ".join(f"{lg} {n}" for lg, n in counts.items())
          + f", the store keeping {args.keep_d:g} days\n\n" + markdown_table(
              ["log", "half", "method/history", "jobs", "median abs log error", "within 2x",
               "with a bound", "90% bound coverage"], rows)
          + "\n### two stretches as two sites\n\n" + markdown_table(
              ["half", "stretches of", "method/history", "placed where it started first",
               "mean extra wait s"], prow)
          + "".join(f"\n{n}: {note}\n" for n, note in r["notes"].items()))
    emit("wait_history", args, r, md, None)
    return r


if __name__ == "__main__":
    main()
