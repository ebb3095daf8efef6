"""Ranking the verdicts of one decision: the order each policy puts feasible sites in
(`rank`; "diamond": the earliest finish, the sites where the job may time out after those
where it is expected to end, finishes equal within noise going to the surer start, then
the fresher view, then the cheaper), and why a feasible site lost to the chosen one
(`_lost_because`). Pure code."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from .model import hms
from .placement_time import HORIZON_S, READY_TOLERANCE_S

if TYPE_CHECKING:  # (placement imports this module)
    from .placement import SiteVerdict

# Two estimated finishes are "equal within noise" when they differ by at most the larger of
# FINISH_NOISE_FRACTION of the earlier one's distance from now and the starts' uncertainty
# (capped at FINISH_NOISE_S); among such sites the "diamond" policy takes the surer start
# (the lower 90% bound), then the cheaper, then the earlier finish (`rank`).
FINISH_NOISE_S = 10.0
FINISH_NOISE_FRACTION = 0.05


def finish_noise_s(best_finish_s: float, spread_s: float = FINISH_NOISE_S) -> float:
    """How far apart two finishes still count as equal: FINISH_NOISE_FRACTION of the time
    to the earlier one, or the start's uncertainty `spread_s` up to FINISH_NOISE_S. Two
    certain starts (idle sites, nothing queued) differ only by their runtimes, which are
    not noise."""
    return max(min(FINISH_NOISE_S, spread_s), FINISH_NOISE_FRACTION * max(best_finish_s, 0.0))


def _start_spread_s(v: SiteVerdict, now: datetime) -> float:
    """How uncertain v's start is: its 90% bound past its start (FINISH_NOISE_S without a
    bound)."""
    b = _bound_s(v, now)
    if b is None or v.estimated_start is None:
        return FINISH_NOISE_S
    start = max(v.estimated_start, v.inputs_at or v.estimated_start)  # a queue that clears
    return max(0.0, b - (start - now).total_seconds())  # before the inputs are here: no risk


def ranked_finish(v: SiteVerdict) -> datetime | None:
    """The finish v is ranked by: its estimated finish, a job array's last task's end
    (`placement._array_last_task`), not its first task's."""
    if v.estimated_finish is None:
        return None
    return v.estimated_finish + timedelta(seconds=v._array_tail_s)


def _lost_because(v: SiteVerdict, w: SiteVerdict, now: datetime, policy: str) -> str:
    """The real difference between a feasible loser `v` and the winner `w`."""
    fv = (ranked_finish(v) - now).total_seconds()  # type: ignore[operator]
    fw = (ranked_finish(w) - now).total_seconds()  # type: ignore[operator]
    cv, cw = v.cost or 0.0, w.cost or 0.0
    if policy == "min_cost" and cv > cw:
        return f"costs more ({cv:.2f} vs {cw:.2f})"
    if policy not in ("diamond", "min_cost"):
        return f"ranked lower by policy {policy}"
    if policy == "diamond" and v.may_time_out and not w.may_time_out:
        return "the job may time out there: its expected runtime exceeds its time limit"
    if fv - fw <= finish_noise_s(fw, max(_start_spread_s(v, now), _start_spread_s(w, now))):
        uv, uw = _sure_start_s(v, now), _sure_start_s(w, now)
        if policy == "diamond" and uv > uw:
            return (f"same finish within noise (+{hms(fv)} vs +{hms(fw)}), less sure start "
                    f"(90%: < {hms(uv)} vs < {hms(uw)})")
        if policy == "diamond" and (v.view_age_s or 0.0) > (w.view_age_s or 0.0):
            return (f"same finish within noise (+{hms(fv)} vs +{hms(fw)}), its view read "
                    f"{hms(v.view_age_s or 0.0)} ago")
        if cv > cw:
            return (f"same finish within noise (+{hms(fv)} vs +{hms(fw)}), "
                    f"costs more ({cv:.2f} vs {cw:.2f})")
        return f"same finish within noise (+{hms(fv)} vs +{hms(fw)}) and cost; listed later"
    why = []
    sv = (v.estimated_start - now).total_seconds() if v.estimated_start else 0.0
    sw = (w.estimated_start - now).total_seconds() if w.estimated_start else 0.0
    if sv - sw > READY_TOLERANCE_S:
        why.append(f"starts later (+{hms(sv)} vs +{hms(sw)})")
    rv, rw = v.estimated_runtime_s or 0.0, w.estimated_runtime_s or 0.0
    if rv > rw:
        why.append(f"runs longer ({hms(rv)} vs {hms(rw)}: speed factor "
                   f"{_speed(v)} vs {_speed(w)})")
    if (v.stage_in_s or 0) - (w.stage_in_s or 0) > READY_TOLERANCE_S:
        why.append(f"slower stage-in ({hms(v.stage_in_s or 0)} vs {hms(w.stage_in_s or 0)})")
    return f"finishes {hms(fv - fw)} later" + (": " + ", ".join(why) if why else "")


def _bound_s(v: SiteVerdict, now: datetime) -> float | None:
    return (v.start_bound - now).total_seconds() if v.start_bound else None


def _sure_start_s(v: SiteVerdict, now: datetime) -> float:
    """The start a tie is broken by: the 90% bound, else the start itself, but not before
    the inputs are here, to the second (closer bounds than that are equally sure)."""
    b = _bound_s(v, now)
    if b is None:
        b = (v.estimated_start - now).total_seconds() if v.estimated_start else HORIZON_S
    if v.inputs_at is not None:  # it cannot start before its inputs are here
        b = max(b, (v.inputs_at - now).total_seconds())
    return float(round(b))


def _speed(v: SiteVerdict) -> str:
    return f"{v.speed_factor:g}" if v.speed_factor is not None else "?"


_INFEASIBLE_ORDER = {"RESTRICTED": 0, "INCOMPATIBLE": 1, "UNREACHABLE": 2}


def rank(verdicts: list[SiteVerdict], now: datetime, policy: str = "diamond", *,
         home: str | None = None, seed: int | None = None,
         noise: Callable[[float, float], float] = finish_noise_s
         ) -> tuple[list[SiteVerdict], str | None]:
    """The verdicts in `policy`'s order, feasible ones first (each given its score), and
    the choice. `noise(best finish s, start spread s)`: how far apart two finishes still
    tie under "diamond" (`finish_noise_s`; another rule only to measure it, as
    `benchmarks.decision_replay` does on recorded rounds)."""
    feas = [v for v in verdicts if v.feasible]
    pos = {v.site: i for i, v in enumerate(verdicts)}

    def secs(t: datetime | None) -> float:
        return (t - now).total_seconds() if t else HORIZON_S

    keys = {
        "diamond": lambda v: (v.may_time_out, secs(ranked_finish(v)), v.cost, pos[v.site]),
        "min_cost": lambda v: (v.cost, secs(ranked_finish(v)), pos[v.site]),
        "fewest_pending": lambda v: (v.queue_depth, secs(ranked_finish(v)), pos[v.site]),
        "first_ready": lambda v: (v.verdict != "READY", 0 if v.verdict == "READY"
                                  else secs(v.estimated_start), pos[v.site]),
        "fixed": lambda v: (v.site != home, secs(ranked_finish(v)), pos[v.site]),
    }
    if policy == "random":
        random.Random(seed).shuffle(feas)
        for i, v in enumerate(feas):
            v.score = float(i)
    else:
        feas.sort(key=keys[policy])
        for v in feas:
            # the finish, under "diamond" too (its key puts jobs that may time out last)
            v.score = secs(ranked_finish(v)) if policy == "diamond" \
                else float(keys[policy](v)[0])
        if policy == "diamond" and feas:  # equal finish within noise: surer, then cheaper,
            # then a site known to have the job's modules
            best, spread = secs(ranked_finish(feas[0])), _start_spread_s(feas[0], now)
            tied = [v for v in feas if v.may_time_out == feas[0].may_time_out
                    and secs(ranked_finish(v)) - best <= noise(
                        best, max(spread, _start_spread_s(v, now)))]
            # a view read long ago is a less sure start than a fresh one
            tied.sort(key=lambda v: (_sure_start_s(v, now), v.view_age_s or 0.0, v.cost,
                                     secs(ranked_finish(v)), v.software_unknown,
                                     pos[v.site]))
            feas = tied + feas[len(tied):]
    infeas = sorted((v for v in verdicts if not v.feasible),
                    key=lambda v: (_INFEASIBLE_ORDER[v.verdict], pos[v.site]))
    choice = feas[0].site if feas else None
    if policy == "fixed" and choice != home:
        choice = None
    return feas + infeas, choice
