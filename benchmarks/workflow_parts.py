"""Where each recorded workflow run's makespan went, part by part (offline: reads the JSON
files `python -m benchmarks.workflow` wrote; no test bed, no new runs).

The pipeline is a chain (prep -> train -> analyse), so its makespan is the first step's
start plus, per step, its run and the gap between its upstream's end and its own start.
Each gap is cut at the times the run recorded (the jobs' own start and end lines, and when
each step entered each engine phase, `steps.NAME.phases`), in the order they happen:
- detect: the upstream's end line to the engine's "done" (how it learned the step ended:
  the job's pushed end line, or a poll of the scheduler on a site without an event channel);
- engine: "done" to the engine's next act for the step (a step queued ahead: the copy of
  its inputs begins; submitted after its upstream: its placement begins);
- submit: the submit command, for a step submitted after its upstream (and the first step);
- transfer: the copy of its inputs from the upstream's site (on the path until its release);
- release: the gate cancelled (or the hold released);
- sched: the scheduler's start of the now eligible job, up to CYCLE_S (the test bed's
  `sched_interval`); for a step queued behind a same-site upstream by afterok, from that
  upstream's end (the scheduler alone acts: nothing of the engine's is on the path);
- queue: what it waited past that for resources (running jobs to end).
The parts of a gap add up to it, and the parts of a run to its makespan, but for one case:
Slurm's REST API gives a start truncated to the second, which can fall before the upstream's
end; such a gap counts as 0, and the difference is the run's `residual_s` (negative).

What queue-ahead can still shrink: detect, engine, submit, release (the engine's own
latencies), and transfer only by copying faster. `sched` is the scheduler's; `queue` after a
release is out of the engine's reach while Slurm reserves nothing for a job whose
dependency holds (GPUs freed while the upstream ran went to jobs already eligible).

The move check replayed: until 6fe4151 a queued-ahead `auto` step (analyse), once its
input existed, was placed once more (was another site much sooner now?) before its copy
began and its gate went; since then that check runs beside them. Its share of the engine
part is what the gated `auto` edge took past the pinned gated edge's (train's, no check)
in the same run; `recheck_beside_copy_s` is the run's makespan less it (a run whose step
moved keeps its makespan: the check was its reason), the queue after the release taken as
it was (analyse's site started it within 1.1 s of its release in every such run).

Per seed (medians over rounds, as the benchmark's target): the ratio measured; the ratio had
queue-ahead's engine parts been zero; the ratio had it waited for nothing at all (its
makespan the sum of its steps' runs: no engine can do better, the steps of a chain never
overlap). Where the latter is under the target, the target was out of reach that seed.

    python -m benchmarks.workflow_parts [FILE.json ...] [--json] [--out DIR] [--tag T]
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .common import RESULTS, emit, markdown_table, median, parser, ratio
from .seeds import _workflow_background
from .workflow import PIPELINE

CYCLE_S = 2.0  # the test bed's Slurm sched_interval (testbed/configs.py): a start this soon
TARGET = 1.5  # after-upstream / queue-ahead makespan, of the medians
PARTS = ("submit", "detect", "engine", "transfer", "release", "sched", "queue")
ENGINE_PARTS = ("submit", "detect", "engine", "release")  # the engine's own latencies


def _path(points: list[tuple[str, float | None]], end: float) -> dict[str, float]:
    """The intervals between consecutive `points` (name, time), each named after the point
    it ends at, clamped onto the path so they add up to `end` minus the first point: a
    point earlier than the one before it counts as that one, a point past `end` as `end`.
    A missing point (None) is skipped."""
    out: dict[str, float] = {}
    prev = points[0][1] or 0.0
    for name, t in points[1:]:
        if t is None:
            continue
        t = min(max(t, prev), max(end, prev))
        out[name] = out.get(name, 0.0) + (t - prev)
        prev = t
    if end > prev:
        out["start"] = out.get("start", 0.0) + (end - prev)
    return out


def _split_start(parts: dict[str, float]) -> dict[str, float]:
    """The time from eligibility to the start, as the scheduler's cycle and queue wait."""
    start = parts.pop("start", 0.0)
    parts["sched"] = parts.get("sched", 0.0) + min(start, CYCLE_S)
    parts["queue"] = parts.get("queue", 0.0) + max(0.0, start - CYCLE_S)
    return parts


def edge_parts(up: dict[str, Any], step: dict[str, Any]) -> tuple[str, dict[str, float]]:
    """How step `step` came to start after its upstream `up` ended: its kind ("afterok":
    queued ahead behind a same-site upstream; "gated": queued ahead behind a gate or a
    hold; "after": submitted once the upstream ended) and the gap's parts."""
    ph, uph = step.get("phases") or {}, up.get("phases") or {}
    ended, started = up["ended"], step["started"]
    if step["submitted"] < ended and "released" not in ph:
        # queued ahead behind a same-site upstream: the scheduler's dependency alone acts
        return "afterok", _split_start({"start": max(0.0, started - ended)})
    kind = "gated" if step["submitted"] < ended else "after"
    first = ph.get("moving") if kind == "gated" else ph.get("submitting")
    submitted = (ph.get("held") or ph.get("queued")) if kind == "after" else None
    parts = _path([("ended", ended), ("detect", uph.get("done")), ("engine", first),
                   ("submit", submitted), ("transfer", ph.get("ready")),
                   ("release", ph.get("released"))], started)
    return kind, _split_start(parts)


def run_parts(run: dict[str, Any]) -> dict[str, Any] | None:
    """A recorded run's makespan in parts (None for a run without every step's times and
    phases: not completed, or recorded before phases were)."""
    steps = run.get("steps") or {}
    if run.get("makespan_s") is None or any(
            (steps.get(n) or {}).get(k) is None for n in PIPELINE
            for k in ("submitted", "started", "ended")) or any(
            "phases" not in steps[n] for n in PIPELINE):
        return None
    first = steps[PIPELINE[0]]
    parts = {p: 0.0 for p in PARTS}
    parts["submit"] = max(0.0, first["submitted"])  # placement, submit (a copy first)
    for p, v in _split_start({"start": max(0.0, first["started"] - first["submitted"])}
                             ).items():
        parts[p] += v
    runs = {n: steps[n]["ended"] - steps[n]["started"] for n in PIPELINE}
    edges = {}
    for up, n in zip(PIPELINE, PIPELINE[1:], strict=False):
        kind, gap = edge_parts(steps[up], steps[n])
        edges[n] = {"kind": kind, "site": steps[n].get("site"), **gap}
        for p, v in gap.items():
            parts[p] += v
    total = sum(parts.values()) + sum(runs.values())
    out = {"round": run.get("round"), "mode": run.get("mode"),
           "makespan_s": run["makespan_s"], "run_s": sum(runs.values()), "runs": runs,
           "parts": parts, "edges": edges,
           "engine_s": sum(parts[p] for p in ENGINE_PARTS),
           "residual_s": run["makespan_s"] - total}
    out["recheck_beside_copy_s"] = recheck_beside_copy(run, out)
    return out


AUTO_STEP = "analyse"  # the benchmark's `auto` step; prep and train are pinned


def recheck_beside_copy(run: dict[str, Any], parts: dict[str, Any]) -> float:
    """The run's makespan had the move check of its queued-ahead `auto` step run beside
    its copy (see module): less that edge's engine part past the pinned gated edge's."""
    auto, pinned = parts["edges"].get(AUTO_STEP) or {}, parts["edges"].get("train") or {}
    if (run.get("mode") != "queue_ahead" or auto.get("kind") != "gated"
            or pinned.get("kind") != "gated"
            or ((run.get("steps") or {}).get(AUTO_STEP) or {}).get("moved")):
        return parts["makespan_s"]
    saved = max(0.0, auto.get("engine", 0.0) - pinned.get("engine", 0.0))
    return parts["makespan_s"] - saved


def end_detection(run: dict[str, Any]) -> list[tuple[str, float]]:
    """(site, seconds from a step's end line to the engine's "done") for every step of a
    run, on its critical path or not (the last step's is not)."""
    out = []
    for st in (run.get("steps") or {}).values():
        done = (st.get("phases") or {}).get("done")
        if done is not None and st.get("ended") is not None:
            out.append((st.get("site") or "?", max(0.0, done - st["ended"])))
    return out


def seed_summary(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over rounds per mode, the measured ratio and its two bounds (see module)."""
    def med(mode: str, f) -> float | None:
        return median([f(p) for p in parts if p["mode"] == mode])
    qa = med("queue_ahead", lambda p: p["makespan_s"])
    au = med("after_upstream", lambda p: p["makespan_s"])
    floor = med("queue_ahead", lambda p: p["run_s"])
    no_engine = med("queue_ahead", lambda p: p["makespan_s"] - p["engine_s"])
    no_queue = med("queue_ahead", lambda p: p["makespan_s"] - p["engine_s"]
                   - p["parts"]["queue"])
    beside = med("queue_ahead", lambda p: p["recheck_beside_copy_s"])
    measured, bound_engine = ratio(au, qa), ratio(au, no_engine)
    bound_no_queue, bound_any = ratio(au, no_queue), ratio(au, floor)
    if measured is not None and measured >= TARGET:
        verdict = "met"
    elif bound_any is not None and bound_any < TARGET:
        verdict = "out of reach for any engine"
    elif bound_no_queue is not None and bound_no_queue < TARGET:
        verdict = "out of reach with these copies and scheduler starts"
    else:
        verdict = "reachable only with less queue after the release"
    return {
        "median_makespan_s": {m: med(m, lambda p: p["makespan_s"]) for m in
                              sorted({p["mode"] for p in parts})},
        "queue_ahead_runs_s": floor, "queue_ahead_parts_s": {
            k: med("queue_ahead", lambda p, k=k: p["parts"][k]) for k in PARTS},
        "after_upstream_parts_s": {
            k: med("after_upstream", lambda p, k=k: p["parts"][k]) for k in PARTS},
        "ratio": measured, "ratio_recheck_beside_copy": ratio(au, beside),
        "ratio_without_engine_parts": bound_engine,
        "ratio_without_engine_parts_or_queue": bound_no_queue, "ratio_at_most": bound_any,
        "verdict": verdict}


def analyse(files: list[Path]) -> dict[str, Any]:
    """Every run of `files` in parts, per file (seed) a summary, and end detection by site."""
    seeds, detection = [], {}
    for f in files:
        data = json.loads(f.read_text())
        parts = [p for r in data.get("runs") or [] if (p := run_parts(r)) is not None]
        for r in data.get("runs") or []:
            for site, s in end_detection(r):
                detection.setdefault(site, []).append(s)
        if not parts:
            continue
        seeds.append({"file": f.name, "seed": data.get("seed"),
                      "background": _workflow_background(data), "runs": parts,
                      **seed_summary(parts)})
    seeds.sort(key=lambda s: (s["background"], s["seed"] or 0, s["file"]))
    return {"seeds": seeds, "cycle_s": CYCLE_S, "target": TARGET,
            "end_detection_s": {s: {"n": len(v), "median": median(v), "max": max(v)}
                                for s, v in sorted(detection.items())}}


def recorded_runs_main(name: str, description: str, analyse_runs: Callable[[list[Path]], dict],
                       markdown_of: Callable[[dict], str], argv: list[str] | None) -> dict:
    """The command line every reader of the recorded workflow runs shares: the files given,
    else every recorded matched run; analysed, written as `results/NAME.{json,md}`."""
    p = parser(description)
    p.add_argument("files", nargs="*", help="workflow-*.json files (default: every recorded "
                   "matched run in benchmarks/results)")
    p.add_argument("--results", default=str(RESULTS), help="where the runs' JSON files are")
    args = p.parse_args(argv)
    r = analyse_runs([Path(x) for x in args.files] or recorded(Path(args.results)))
    emit(name, args, r, markdown_of(r))
    return r


def recorded(results: Path) -> list[Path]:
    """The matched runs the README counts: every `workflow-*.json` of two rounds or more
    whose modes each met their round's window afresh."""
    out = []
    for f in sorted(results.glob("workflow-*.json")):
        data = json.loads(f.read_text())
        if (data.get("params") or {}).get("design") == "matched" and \
                (data.get("rounds") or 0) >= 2 and data.get("runs"):
            out.append(f)
    return out


def markdown(r: dict[str, Any]) -> str:
    def f(x: float | None, nd: int = 1) -> str:
        return "-" if x is None else f"{x:.{nd}f}"
    seeds = r["seeds"]
    rows = [(s["background"], s["seed"], f(s["median_makespan_s"].get("queue_ahead")),
             f(s["median_makespan_s"].get("after_upstream")), f(s["queue_ahead_runs_s"]),
             " / ".join(f(s["queue_ahead_parts_s"][k]) for k in PARTS),
             f(s["after_upstream_parts_s"]["queue"]), f(s["ratio"], 2),
             f(s["ratio_recheck_beside_copy"], 2),
             f(s["ratio_without_engine_parts"], 2),
             f(s["ratio_without_engine_parts_or_queue"], 2), f(s["ratio_at_most"], 2),
             s["verdict"])
            for s in seeds]
    out = ("## workflow: where the makespan went, every recorded matched run\n\n"
           "Medians over each seed's rounds. Queue-ahead parts, in order: "
           + " / ".join(PARTS) + f" (s; sched = the scheduler's start up to {CYCLE_S:.0f} s "
           "after the step could start, queue = the rest).\n\n"
           + markdown_table(["background", "seed", "queue-ahead s", "after-upstream s",
                             "queue-ahead's steps' runs s", "queue-ahead parts s",
                             "after-upstream queue s", "ratio",
                             "ratio, move check beside the copy", "without engine parts",
                             "without engine parts or queue", "at most (no wait at all)",
                             "verdict"], rows))
    pooled = [p for s in seeds for p in s["runs"]]
    mrows = []
    for mode in sorted({p["mode"] for p in pooled}):
        mine = [p for p in pooled if p["mode"] == mode]
        mrows.append((mode, len(mine), *(f(median([p["parts"][k] for p in mine]), 2)
                                         for k in PARTS),
                      f(median([p["run_s"] for p in mine])),
                      f(median([p["makespan_s"] for p in mine]))))
    out += ("\n### Per mode, every round pooled (medians, s)\n\n"
            + markdown_table(["mode", "runs", *PARTS, "steps' runs", "makespan"], mrows))
    out += ("\n### End detection by site (a step's end line to the engine's \"done\", every "
            "step)\n\n" + markdown_table(
                ["site", "steps", "median s", "max s"],
                [(s, d["n"], f(d["median"], 2), f(d["max"], 2))
                 for s, d in r["end_detection_s"].items()]))
    counts: dict[str, int] = {}
    for s in seeds:
        counts[s["verdict"]] = counts.get(s["verdict"], 0) + 1
    out += "\n" + "; ".join(f"{v}: {n} seeds" for v, n in sorted(counts.items())) + "\n"
    return out


def main(argv: list[str] | None = None) -> dict:
    return recorded_runs_main("workflow_parts", __doc__.splitlines()[0], analyse, markdown,
                              argv)


if __name__ == "__main__":
    main()
