"""Why diamond's mean misses its target: the lost rounds of every kept placement run, both
backgrounds, sorted into classes with the rounds and the seconds each lost (issue 15).

A lost round (`misses.explain`: diamond's site was not the one whose probe finished first)
falls in exactly one class, so the classes' seconds add up to all that was lost:

- by which start was wrong, by more than `misses.TOLERANCE_S` (a probe that never started
  counts as starting at the run's bound): `both wrong` (the chosen site started later than
  predicted and the fastest sooner), `chosen too soon`, `fastest too late`; else
  `tie on the surer bound` (the fastest predicted to finish first, within noise, lost on
  its wider 90% bound), `runtime gap` (the runtimes predicted apart wrong), or `within
  tolerance` (nothing off by more than the tolerance);
- a wrong start split by whether the 90% bounds ordered the two right (`bounds right`: the
  fastest's finish at its bound before the chosen's; a rank nearer the bound could have
  picked it) or were wrong too (`bounds wrong too`).

Beside each class: the site pairs (chosen -> fastest), the sources of the wrong estimates
(`misses._source`), how much of its own evidence each site had
(`model_replay.evidence_class`), how often the chosen site's probe never started, and how
often its probes of the run's earlier rounds had, by this round, started (or waited) over
the tolerance later than predicted (`late before`: what a rank that penalises it reads);
and, for the two classes losing the most, the seconds each of `model_replay.VARIANTS`
wins back in their rounds (what it costs in other rounds is `model_replay --variants`');
with `--recency`, those of `model_replay.RECENCY` instead, beside `engine` (the engine's
own-jobs correction replayed: a variant's gain over the engine is its row less that one).

    python -m benchmarks.miss_classes [--results DIR] [--no-variants | --recency] [--json]
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .common import RESULTS, emit, markdown_table, median, parser
from .decision_replay import engine, scored_rounds
from .misses import TOLERANCE_S, _source, explain
from .model_replay import (
    ENGINE,
    RECENCY,
    VARIANTS,
    Change,
    evidence_class,
    own_samples,
    probe_lateness,
)

DEFAULT_BOUND_S = 240.0  # a run that kept no bound of its own: the benchmark's default


def _seen(started: float | None, bound_s: float) -> float:
    return bound_s if started is None else started


def _finish_at_bound(e: dict[str, Any]) -> float:
    spread = 0.0 if e.get("bound_s") is None else max(0.0, e["bound_s"] - e["start_s"])
    return e["finish_s"] + spread


def late_before(run: dict[str, Any], k: int, site: str) -> bool:
    """Whether `site`'s probes of the rounds before round `k` had, by round k, mostly
    started (or still waited) more than TOLERANCE_S later than predicted: the median of
    their lateness (seen or waited so far, less predicted) over the tolerance."""
    interval = run.get("interval_s") or 12.0
    late = []
    for r in scored_rounds(run):
        e = (r.get("estimate") or {}).get(site)
        if r.get("round") is None or r["round"] >= k or e is None:
            continue
        age, started = (k - r["round"]) * interval, (r.get("started_s") or {}).get(site)
        seen = started if started is not None and started <= age else age
        if started is not None and started <= age or seen > e["start_s"]:
            late.append(seen - e["start_s"])  # a probe still waiting says only once overdue
    return bool(late) and (median(late) or 0.0) > TOLERANCE_S


def classify(row: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """One lost round's (`misses.explain`) class, and what the class table counts of it."""
    bound = run.get("max_wait_s") or DEFAULT_BOUND_S
    chosen, fastest = row["chosen_estimate"], row["fastest_estimate"]
    chosen_seen = _seen(row["chosen_started_s"], bound)
    fastest_seen = _seen(row["fastest_started_s"], bound)
    soon = chosen["start_s"] + TOLERANCE_S < chosen_seen
    late = fastest["start_s"] > fastest_seen + TOLERANCE_S
    causes = row["causes"]
    if soon or late:
        side = "both wrong" if soon and late else "chosen too soon" if soon else \
            "fastest too late"
        right = _finish_at_bound(fastest) < _finish_at_bound(chosen)
        name = f"{side}; bounds {'right' if right else 'wrong too'}"
    elif any(c.startswith("tie") for c in causes):
        name = "tie on the surer bound"
    elif any(c.startswith("runtime gap") for c in causes):
        name = "runtime gap"
    else:
        name = "within tolerance"
    return {"class": name, "background": row["background"], "seed": row["seed"],
            "round": row["round"], "pair": f"{row['chosen']} -> {row['fastest']}",
            "lost_s": row["lost_s"],
            "chosen_error_s": chosen_seen - chosen["start_s"],
            "fastest_error_s": fastest["start_s"] - fastest_seen,
            "chosen_source": _source(chosen, chosen_seen) if soon else None,
            "fastest_source": _source(fastest, fastest_seen) if late else None,
            "chosen_evidence": evidence_class(chosen),
            "fastest_evidence": evidence_class(fastest),
            "chosen_never_started": row["chosen_started_s"] is None,
            "chosen_late_before": late_before(run, row["round"], row["chosen"])
            if row["round"] is not None else False}


def replayed(run: dict[str, Any], rows: list[dict[str, Any]],
             variants: dict[str, Change]) -> None:
    """Into each lost round of `rows`: the regret the engine's rule replays on its recorded
    estimates (`engine_s`), and under each of `variants` (`model_replay`'s changes)."""
    pick = engine()
    changed = {name: {r.get("round"): r for r in scored_rounds(change(run))}
               for name, change in variants.items()}
    by_round = {r.get("round"): r for r in scored_rounds(run)}
    for row in rows:
        r = by_round[row["round"]]
        comp = r["completion_s"]

        def regret(estimate: dict[str, Any], comp: dict[str, float] = comp) -> float:
            chosen = pick(estimate)
            return comp[chosen] - min(comp.values()) if chosen in comp else max(comp.values())
        row["engine_s"] = regret(r["estimate"])
        row["variants_s"] = {name: regret(c[row["round"]]["estimate"])
                             for name, c in changed.items()}


def classified(results: Path, variants: dict[str, Change] | None = None
               ) -> list[dict[str, Any]]:
    """Every lost round of every kept placement run under `results`, classified; with
    `variants`, each replayed under them too (`replayed`)."""
    out = []
    for path in sorted(results.glob("placement-*seed*.json")):
        run = json.loads(path.read_text())
        if "per_round" in run and scored_rounds(run):
            rows = [classify(row, run) for row in explain(run)]
            if variants:
                replayed(run, rows, variants)
            out += rows
    return out


def _own_lateness(run: dict[str, Any], k: int, site: str) -> float | None:
    return probe_lateness(run, k, site, both_ways=True)


# what a round records of each site at decision time, each read as "the lower, the sooner"
SIGNALS: dict[str, Callable[[dict[str, Any], dict[str, Any], str], float | None]] = {
    "walltime plan (raw start)": lambda run, r, s: r["estimate"][s].get("raw_start_s"),
    "90% bound": lambda run, r, s: r["estimate"][s].get("bound_s"),
    "queue length": lambda run, r, s: (r.get("pending") or {}).get(s),
    "recent-wait bound, jobs no larger": lambda run, r, s: r["estimate"][s].get(
        "recent_bound_no_larger_s"),
    "own probes' lateness before": lambda run, r, s: None if r.get("round") is None
    else _own_lateness(run, r["round"], s),
    "fewer own finished jobs (thinner calibration)": lambda run, r, s: -own_samples(
        r["estimate"][s]),
}


def signal_orders(results: Path, lost_class: str) -> dict[str, dict[str, int]]:
    """For each of SIGNALS: in the lost rounds of `lost_class`, how often it put the fastest
    site before diamond's (`right`), after it (`wrong`), or said nothing (equal, or not
    recorded for both); and in the rounds diamond won, how often it would have kept its
    site before the engine's runner-up (`won_kept`), put that one first (`won_flipped`), or
    said nothing (`won_silent`)."""
    out = {name: dict.fromkeys(("right", "wrong", "silent", "won_kept", "won_flipped",
                                "won_silent"), 0) for name in SIGNALS}
    for path in sorted(results.glob("placement-*seed*.json")):
        run = json.loads(path.read_text())
        if "per_round" not in run or not scored_rounds(run):
            continue
        lost = {row["round"]: row for row in explain(run)}
        for r in scored_rounds(run):
            chosen = r["choice"].get("diamond")
            if r.get("round") in lost:
                row = lost[r["round"]]
                if classify(row, run)["class"] != lost_class:
                    continue
                pair, keys = (row["fastest"], chosen), ("right", "wrong", "silent")
            elif not (r.get("additional_s") or {}).get("diamond") and chosen in r["estimate"]:
                ranked = [s for s in r.get("ranking") or [] if s != chosen
                          and s in r["estimate"]]
                if not ranked:
                    continue
                pair, keys = (chosen, ranked[0]), ("won_kept", "won_flipped", "won_silent")
            else:
                continue
            for name, signal in SIGNALS.items():
                a, b = (signal(run, r, site) for site in pair)
                out[name][keys[2] if a is None or b is None or a == b
                          else keys[0] if a < b else keys[1]] += 1
    return out


def _counts(values: list[Any], top: int = 4) -> dict[str, int]:
    return dict(Counter(str(v) for v in values if v is not None).most_common(top))


def summarize(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Per class (most seconds lost first): rounds and seconds lost, per background too,
    and what the rounds of the class share."""
    classes: dict[str, Any] = {}
    for name in {r["class"] for r in rounds}:
        of = [r for r in rounds if r["class"] == name]
        classes[name] = {
            "rounds": len(of), "lost_s": sum(r["lost_s"] for r in of),
            "by_background": {bg: {"rounds": len(b), "lost_s": sum(r["lost_s"] for r in b)}
                              for bg in sorted({r["background"] for r in of})
                              for b in [[r for r in of if r["background"] == bg]]},
            "pairs": _counts([r["pair"] for r in of]),
            "chosen_sources": _counts([r["chosen_source"] for r in of]),
            "fastest_sources": _counts([r["fastest_source"] for r in of]),
            "chosen_evidence": _counts([r["chosen_evidence"] for r in of], 5),
            "fastest_evidence": _counts([r["fastest_evidence"] for r in of], 5),
            "chosen_never_started": sum(r["chosen_never_started"] for r in of),
            "chosen_late_before": sum(r["chosen_late_before"] for r in of),
            "median_chosen_error_s": median([r["chosen_error_s"] for r in of]),
            "median_fastest_error_s": median([r["fastest_error_s"] for r in of]),
            # per variant: the seconds of the class's rounds it wins back from the engine
            # (its own rounds only; what it costs elsewhere is model_replay's)
            "recovered_s": {name: sum(r["engine_s"] - r["variants_s"][name] for r in of)
                            for name in (of[0].get("variants_s") or {})}}
    ordered = dict(sorted(classes.items(), key=lambda kv: -kv[1]["lost_s"]))
    return {"lost_rounds": len(rounds), "lost_s": sum(r["lost_s"] for r in rounds),
            "classes": ordered, "rounds": rounds}


def table(data: dict[str, Any]) -> str:
    def share(d: dict[str, int]) -> str:
        return ", ".join(f"{k} {v}" for k, v in d.items()) or "-"

    rows = [(name, c["rounds"], f"{c['lost_s']:.0f}",
             "; ".join(f"{bg} {b['rounds']} / {b['lost_s']:.0f} s"
                       for bg, b in c["by_background"].items()),
             share(c["pairs"]), share(c["chosen_sources"]), share(c["fastest_sources"]),
             share(c["chosen_evidence"]), c["chosen_never_started"], c["chosen_late_before"],
             f"{c['median_chosen_error_s']:+.0f} / {c['median_fastest_error_s']:+.0f}")
            for name, c in data["classes"].items()]
    return ("## diamond's lost rounds by class, every kept run of both backgrounds\n\n"
            f"{data['lost_rounds']} rounds lost, {data['lost_s']:.0f} s in all.\n\n"
            + markdown_table(
                ["class", "rounds", "s lost", "per background (rounds / s)",
                 "chosen -> fastest", "chosen's wrong source", "fastest's wrong source",
                 "chosen's evidence", "chosen never started", "chosen late before",
                 "median error s: chosen started after / fastest predicted after"], rows)
            + recovered_table(data))


def recovered_table(data: dict[str, Any], top: int = 2) -> str:
    """The seconds each variant wins back in the `top` classes losing the most."""
    classes = list(data["classes"].items())[:top]
    names = list(classes[0][1]["recovered_s"]) if classes else []
    if not names:
        return ""
    rows = [(name, *(f"{c['recovered_s'][name]:+.0f}" for _, c in classes)) for name in names]
    return (f"\n## seconds won back in the {top} classes losing the most (`model_replay` "
            "variants; the engine's rule replayed, its own rounds only)\n\n"
            + markdown_table(["variant", *(n for n, _ in classes)], rows))


def signals_table(data: dict[str, Any]) -> str:
    """`signal_orders` of the class losing the most, as a table."""
    orders = data.get("signals") or {}
    if not orders:
        return ""
    rows = [(name, o["right"], o["wrong"], o["silent"], o["won_kept"], o["won_flipped"],
             o["won_silent"]) for name, o in orders.items()]
    return (f"\n## what the record held at decision time: {data['signals_class']}\n\n"
            "Each signal read as the lower, the sooner: in the class's lost rounds, whether it "
            "put the fastest site before diamond's; in the rounds diamond won, whether it "
            "kept diamond's site before the engine's runner-up.\n\n" + markdown_table(
                ["signal", "lost: fastest first", "chosen first", "silent",
                 "won: kept", "flipped", "silent"], rows))


def plot(data: dict[str, Any]) -> Any:
    def draw(ax: Any) -> None:
        names = list(data["classes"])[::-1]
        backgrounds = sorted({bg for c in data["classes"].values() for bg in c["by_background"]})
        left = [0.0] * len(names)
        for bg in backgrounds:
            widths = [data["classes"][n]["by_background"].get(bg, {}).get("lost_s", 0.0)
                      for n in names]
            ax.barh(names, widths, left=left, label=bg)
            left = [a + b for a, b in zip(left, widths, strict=True)]
        ax.set_xlabel("seconds lost (sum over lost rounds)")
        ax.set_title("diamond's lost rounds by class")
        ax.tick_params(axis="y", labelsize=7)
        ax.legend()
    return draw


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--results", default=str(RESULTS), help="where the placement runs are")
    p.add_argument("--no-variants", action="store_true",
                   help="classify only: replay none of model_replay's VARIANTS")
    p.add_argument("--recency", action="store_true",
                   help="replay the engine's own-jobs correction and model_replay's RECENCY")
    args = p.parse_args(argv)
    variants = None if args.no_variants else {"engine": ENGINE, **RECENCY} if args.recency \
        else VARIANTS
    data = summarize(classified(Path(args.results), variants))
    if args.recency and data["classes"]:
        data["signals_class"] = next(iter(data["classes"]))
        data["signals"] = signal_orders(Path(args.results), data["signals_class"])
    emit("miss_classes", args, data, table(data) + signals_table(data), plot(data))
    return data


if __name__ == "__main__":
    main()
