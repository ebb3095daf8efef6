"""Learning from the engine's own start-prediction errors, replayed on recorded rounds: would
a site's predicted start, corrected online by how the user's earlier jobs there started
against their predictions, have chosen better? (issue 15)

Every kept `benchmarks.placement` run records, per round, each site's model start (before
the engine's own-jobs correction), finish and 90% bound, and when a probe submitted there
started. Before round k a site's record is its earlier rounds' probes as they stood at round
k's moment (`decision_replay.own_error_at`): started (error = start - predicted start), or
still waiting past the predicted start (the error so far, a lower bound); one not yet due
says nothing. Two feedback versions:

- `chosen`: only the probes at the site the replayed rule itself chose in earlier rounds
  (what a live user gets: their jobs run only where they were placed);
- `every`: every site's probe of every earlier round (an upper bound on what feedback
  could give).

Corrections, each fixed before any result was read, each replacing the engine's own-jobs
correction (the model's start is the base):

- `none`: the model's start, no correction;
- `today`: the engine's own-jobs rule (`calibration.own_error` as placement applies it:
  the median ratio of (observed + 30 s) / (predicted + 30 s) over at least MIN_SAMPLES
  jobs; sooner only when every one started sooner, by the least any gained);
- `median shift`: where at least MIN_ERRORS of the site's most recent OWN_ERROR_SAMPLES
  errors exist and all agree in sign (each more than SIGN_TOLERANCE_S, the stamps'
  resolution, from 0), the start and the bound move by their median;
- `conformal offset`: the start moves by the median error (at least MIN_ERRORS, any
  signs); the bound becomes the model start plus the conformal quantile of the errors at a
  level set online by adaptive conformal inference (Gibbs and Candes 2021, step
  `calibration.ACI_GAMMA`, from 0.9; a miss is a probe that started, or still waits, past
  the bound this rule gave it at its round), where finitely many errors give one (at least
  9 at 0.9), else the model's bound moved by the median.

Every rule ranks with `placement_rank.rank` (the engine's own). Seeds are split as
`rule_holdout` splits them (even: design, odd: held out); every kept run is reported on
both backgrounds, none dropped. A candidate would be adopted only if, with feedback from
the chosen sites, it beats `today` (same feedback) on the held-out half of both
backgrounds and is not worse on the design half.

    python -m benchmarks.feedback_replay [--results DIR] [--json]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from diamond_jupyter.calibration import (
    ACI_GAMMA,
    OWN_ERROR_SAMPLES,
    QUANTILE,
    PredictionSample,
    next_level,
)
from diamond_jupyter.placement_rank import rank

from .common import emit, markdown_table, mean, median, parser, pct
from .decision_replay import NOW, own_corrected, own_error_at, scored_rounds, verdicts
from .halves import (
    add_results_arguments,
    best_baseline_mean,
    difference_from_engine,
    difference_rows,
    runs_below_every_baseline,
    runs_by_half,
    won_lost,
)

Estimates = dict[str, dict[str, Any]]

MIN_ERRORS = 2  # the fewest past errors a shift rests on
SIGN_TOLERANCE_S = 1.0  # an error within this of 0 agrees with no sign (stamps' resolution)
FEEDBACK = ("chosen", "every")
CORRECTIONS = ("none", "today", "median shift", "conformal offset")
CANDIDATES = ("median shift", "conformal offset")


def known_errors(samples: Sequence[PredictionSample]) -> list[float]:
    """The errors (observed - predicted start, s) of the most recent OWN_ERROR_SAMPLES jobs
    that say anything: started, or still waiting past their predicted start (a lower
    bound), oldest first."""
    recent = sorted(samples, key=lambda s: s.submitted_at)[-OWN_ERROR_SAMPLES:]
    return [s.observed_s - s.predicted_s for s in recent
            if s.started or s.observed_s > s.predicted_s]


def median_shift(errors: Sequence[float]) -> float | None:
    """The median error where at least MIN_ERRORS exist and every one is more than
    SIGN_TOLERANCE_S from 0 on the same side, else None."""
    if len(errors) < MIN_ERRORS:
        return None
    if all(e > SIGN_TOLERANCE_S for e in errors) or all(e < -SIGN_TOLERANCE_S for e in errors):
        return median(errors)
    return None


def any_sign_shift(errors: Sequence[float]) -> float | None:
    """The median error over at least MIN_ERRORS, whatever their signs."""
    return median(errors) if len(errors) >= MIN_ERRORS else None


def conformal_quantile(errors: Sequence[float], level: float) -> float | None:
    """The split-conformal quantile of `errors` at `level`: the ceil((n + 1) level)-th
    smallest, None where that exceeds n (too few errors for the level)."""
    n = len(errors)
    k = math.ceil((n + 1) * level - 1e-9)
    return sorted(errors)[k - 1] if 1 <= k <= n else None


def aci_level(misses: Sequence[bool], start: float = QUANTILE) -> float:
    """Adaptive conformal inference's level after these outcomes in order
    (`calibration.next_level`, step ACI_GAMMA)."""
    level = start
    for missed in misses:
        level = next_level(level, missed, ACI_GAMMA)
    return level


def bound_outcomes(samples: Sequence[PredictionSample], bounds: dict[int, float | None]
                   ) -> list[bool]:
    """For each sample (oldest first) whose outcome against the bound it was given at its
    round (`bounds`, by round) is known, whether it missed: started past it, or still
    waits past it. Samples without a bound, or waiting within it, are left out."""
    out = []
    for s in sorted(samples, key=lambda x: x.submitted_at):
        b = bounds.get(int(s.submitted_at))
        if b is None:
            continue
        if s.observed_s > b + SIGN_TOLERANCE_S:
            out.append(True)
        elif s.started:
            out.append(False)
    return out


def shifted(e: dict[str, Any], shift: float | None, bound_s: float | None = None
            ) -> dict[str, Any]:
    """An estimate with its start moved by `shift` (not before 0), its finish with it, and
    its bound `bound_s` if given, else moved by the same shift; a bound never before the
    start."""
    e = dict(e)
    if shift is None and bound_s is None:
        return e
    start = max(0.0, e["start_s"] + (shift or 0.0))
    e["finish_s"] += start - e["start_s"]
    if bound_s is not None:
        e["bound_s"] = max(bound_s, start)
    elif e.get("bound_s") is not None:
        e["bound_s"] = max(e["bound_s"] + (shift or 0.0), start)
    e["start_s"] = start
    return e


def corrected(run: dict, r: dict, correction: str, bounds: dict[tuple[int, str], float | None]
              ) -> Estimates:
    """Round r's estimates under `correction`, from the earlier rounds `run` holds (already
    cut to the feedback version); `bounds`: the bound this correction gave each (round,
    site) before."""
    if correction == "today":
        return own_corrected(run, r, "unanimous")
    base = own_corrected(run, r, "none")
    if correction == "none" or "round" not in r:
        return base
    out = {}
    for site, e in base.items():
        samples: list[PredictionSample] = own_error_at(run, r["round"], site, list)
        errors = known_errors(samples)
        if correction == "median shift":
            out[site] = shifted(e, median_shift(errors))
            continue
        shift = any_sign_shift(errors)
        level = aci_level(bound_outcomes(
            samples, {k: b for (k, s), b in bounds.items() if s == site}))
        q = conformal_quantile(errors, level)
        out[site] = shifted(e, shift, None if q is None else e["start_s"] + q)
    return out


def _rounds(run: dict) -> list[dict]:
    """Every round with estimates, the all-censored ones included (their probes are
    feedback too), in order."""
    rs = [r for r in (run.get("per_round") or []) + (run.get("per_round_all_censored") or [])
          if r.get("estimate")]
    return sorted(rs, key=lambda r: r.get("round", 0))


def replay(run: dict, correction: str, feedback: str) -> dict[str, Any]:
    """The correction replayed round by round: at each round the estimates corrected from
    the earlier rounds' feedback, the engine's choice on them, its regret in the scored
    rounds; and for the sites chosen, [probes, started more than SIGN_TOLERANCE_S after
    the corrected start]."""
    scored = {id(r) for r in scored_rounds(run)}
    limit = run.get("max_wait_s") or 240.0
    seen: list[dict] = []
    bounds: dict[tuple[int, str], float | None] = {}
    regret: list[float] = []
    late, moved = [0, 0], [0, 0, 0]
    for r in _rounds(run):
        visible = {**run, "per_round": list(seen)}
        est = corrected(visible, r, correction, bounds)
        choice = rank(verdicts(est), NOW)[1]
        if id(r) in scored:
            base = own_corrected(visible, r, "none")
            moved[0] += sum(est[s]["start_s"] != e["start_s"]
                            or est[s].get("bound_s") != e.get("bound_s")
                            for s, e in base.items())
            moved[1] += len(base)
            moved[2] += choice != rank(verdicts(base), NOW)[1]
        if "round" in r:
            bounds |= {(r["round"], s): e.get("bound_s") for s, e in est.items()}
        if id(r) in scored:
            comp = r["completion_s"]
            regret.append(comp[choice] - min(comp.values()) if choice in comp
                          else max(comp.values()) - min(comp.values()))
            started = (r.get("started_s") or {}).get(choice)
            if started is None and choice in (r.get("censored") or ()):
                started = limit
            if choice in est and started is not None:
                late[0] += 1
                late[1] += started > est[choice]["start_s"] + SIGN_TOLERANCE_S
        if feedback == "every":
            seen.append(r)
        else:
            seen.append({**r, "estimate": {choice: r["estimate"][choice]}
                         if choice in r["estimate"] else {}})
    return {"regret": regret, "chosen_late": late, "moved": moved}


def version(correction: str, feedback: str) -> str:
    return correction if correction == "none" else f"{correction} ({feedback})"


VERSIONS = {version(c, f): (c, f) for c in CORRECTIONS for f in FEEDBACK}


def score_run(run: dict) -> dict[str, Any]:
    got = {name: replay(run, c, f) for name, (c, f) in VERSIONS.items()}
    return {"seed": run.get("seed"),
            "regret": {n: g["regret"] for n, g in got.items()},
            "chosen_late": {n: g["chosen_late"] for n, g in got.items()},
            "moved": {n: g["moved"] for n, g in got.items()},
            "best_baseline_mean_s": best_baseline_mean(scored_rounds(run))}


def _summary(runs: list[dict[str, Any]], name: str, reference: str) -> dict[str, Any]:
    pooled = [x for r in runs for x in r["regret"][name]]
    ref = [x for r in runs for x in r["regret"][reference]]
    means = [mean(r["regret"][name]) or 0.0 for r in runs]
    late = [sum(r["chosen_late"][name][i] for r in runs) for i in (0, 1)]
    moved = [sum(r["moved"][name][i] for r in runs) for i in (0, 1, 2)]
    won, lost = won_lost(pooled, ref)
    return {"rounds": len(pooled), "reference": reference, "won": won, "lost": lost,
            "mean_of_run_means_s": mean(means), "median_s": median(pooled),
            "p90_s": pct(pooled, 90),
            "runs_mean_below_every_baseline": runs_below_every_baseline(runs, means),
            "chosen_started_after_predicted": late[1] / late[0] if late[0] else None,
            "estimates_moved": moved[0], "estimates": moved[1],
            "choices_changed_from_model": moved[2]}


def reference_of(name: str) -> str:
    """What a version is judged against: `today` with the same feedback."""
    c, f = VERSIONS[name]
    return version("today", f) if c != "none" else version("today", "chosen")


def verdict(groups: list[dict[str, Any]], candidate: str) -> dict[str, Any]:
    """The adoption rule: with feedback from the chosen sites, below `today` on the held-out
    half of every background and not above it on the design half."""
    name, ref = version(candidate, "chosen"), version("today", "chosen")
    rows = {(g["background"], g["half"]): g["versions"] for g in groups}
    held = all(v[name]["mean_of_run_means_s"] < v[ref]["mean_of_run_means_s"]
               for (bg, h), v in rows.items() if h == "held out")
    design = all(v[name]["mean_of_run_means_s"] <= v[ref]["mean_of_run_means_s"]
                 for (bg, h), v in rows.items() if h == "design")
    return {"beats_today_held_out": held, "not_worse_design": design,
            "adopt": held and design}


def summarize(results: Path) -> dict[str, Any]:
    groups, _ = runs_by_half(results, lambda run: score_run(run) if scored_rounds(run)
                             else None)
    out: dict[str, Any] = {"groups": [], "differences": {}, "verdicts": {}}
    for (bg, half), runs in sorted(groups.items()):
        out["groups"].append({
            "background": bg, "half": half, "runs": len(runs),
            "seeds": sorted(r["seed"] for r in runs),
            "versions": {n: _summary(runs, n, reference_of(n)) for n in VERSIONS}})
        out["differences"][f"{bg}, {half}"] = {
            n: difference_from_engine(runs, n, reference=reference_of(n))
            for n in VERSIONS if n != reference_of(n)}
    out["verdicts"] = {c: verdict(out["groups"], c) for c in CANDIDATES}
    return out


def table(data: dict[str, Any]) -> str:
    rows = [(g["background"], g["half"], name, s["reference"], s["won"], s["lost"],
             f"{s['mean_of_run_means_s']:.2f}", f"{s['median_s']:.2f}", f"{s['p90_s']:.1f}",
             f"{s['runs_mean_below_every_baseline']} of {g['runs']}",
             f"{s['estimates_moved']} of {s['estimates']}", s["choices_changed_from_model"],
             "-" if s["chosen_started_after_predicted"] is None
             else f"{s['chosen_started_after_predicted']:.2f}")
            for g in data["groups"] for name, s in g["versions"].items()]
    notes = "".join(f"\n{g['background']}, {g['half']}: {g['runs']} runs, "
                    f"{g['versions']['none']['rounds']} scored rounds."
                    for g in data["groups"])
    diffs = difference_rows(data["differences"])
    verdicts = [(c, v["beats_today_held_out"], v["not_worse_design"], v["adopt"])
                for c, v in data["verdicts"].items()]
    return ("## start corrections from the user's own earlier jobs, replayed (even seeds: "
            "design; odd: held out)\n\n" + markdown_table(
                ["background", "half", "version", "won/lost against", "won", "lost",
                 "mean of run means s", "median s", "p90 s",
                 "runs with mean below every baseline", "estimates moved",
                 "choices changed from the model's",
                 "chosen site started after its predicted start"], rows) + notes
            + "\n\n## each version less `today` with the same feedback (mean of run means; "
            "95% interval, paired bootstrap over runs)\n\n" + markdown_table(
                ["background, half", "version", "difference s", "95% interval s"], diffs)
            + "\n\n## adoption (feedback from the chosen sites only)\n\n" + markdown_table(
                ["candidate", "below today, held out (both backgrounds)",
                 "not above today, design (both)", "adopt"], verdicts) + "\n")


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    add_results_arguments(p, half=False)
    args = p.parse_args(argv)
    data = summarize(Path(args.results))
    emit("feedback_replay", args, data, table(data))
    return data


if __name__ == "__main__":
    main()
