"""Workflow makespan on the loaded test bed: queue-ahead vs submit-after-upstream vs a fixed
home site, and the node-seconds a gang wastes against naive submission.

The pipeline (three steps, a real data edge between each, each checked by its checksum):
- prep on alpha, where the input data lives (`--input-mb` MB made there first): reads it,
  `sleep --prep-s`, writes features (`--feat-mb` MB) and their sha256;
- train on gamma, the GPU site (one GPU), on the features: verifies their checksum (a
  mismatch fails the step, and the workflow), `sleep --train-s`, writes a model and its sha256;
- analyse anywhere (`auto`; placement counts the model's transfer): verifies the model's
  checksum, `sleep --analyse-s`.
Modes, each run as a workflow through the engine, in rotated order per round; matched: each
round draws one background window, and every mode of the round meets it afresh (the previous
mode's background cancelled and drained, the window's load replayed from its start, the
workflow started `--warmup-s` into it), so the modes differ in how they queue, not in what
load they met:
- `queue_ahead`: every step queued at once: behind a same-site upstream by afterok, behind a
  cross-site one by a held gate job (cancelled when the data has arrived), so the step keeps
  the queue place it got at the workflow's start;
- `after_upstream`: each step submitted only when its upstream ended (`queue_ahead: false`);
- `fixed_home`: every step on gamma (the only site that can train), the input data copied
  there first (counted in the makespan);
- `held_release` (only with `--modes`): queue-ahead with the step held and released instead
  of gated (the engine's way on schedulers without gates): a released job is queued anew.
Makespan: from the workflow's start to the end of its last step (the jobs' own start/end
lines). Background (seeded per round): the `gpu_queue` profile (`--profile`): alpha
and beta as `busy`, and gamma's four GPUs ~80% busy with one-GPU jobs, so a GPU job meets a
queue there as at a real center's GPU partition; or `--trace LOG`, a real center's log
replayed on gamma in place of its stream.

Gang: two one-node members on beta and gamma while gamma is full (a blocker job holds both
of its nodes for `--block-s`). Naive: both submitted plainly; the beta member starts at once
and its node idles until the gamma member starts. Gang: both held, released together when
both can start. Waste = sum over members of nodes x (last member's start - own start).
"""

from __future__ import annotations

import asyncio
import dataclasses
import tempfile
import textwrap
import time
from pathlib import Path

from .common import config_path, emit, markdown_table, mean, median, parser, ratio

MODES = ("queue_ahead", "after_upstream", "fixed_home")
NO_QUEUE_S = 3.0  # the scheduler's own latency over three steps: no queue to speak of
ALL_MODES = (*MODES, "held_release")


def pipeline(mode: str, a: dict) -> str:
    home = mode == "fixed_home"
    prep_site = "gamma" if home else "alpha"
    analyse_site = "gamma" if home else "auto"
    data = a["input"] + (".home" if home else "")  # a copy on gamma (homes may be shared)
    qa = "false" if mode == "after_upstream" else "true"
    return textwrap.dedent(f"""\
        name: bench-{mode}
        queue_ahead: {qa}
        steps:
          - name: prep
            site: {prep_site}
            script: |
              #!/bin/bash
              #SBATCH -N 1
              #SBATCH -t 10
              cat {data} > /dev/null
              sleep {a['prep_s']}
              head -c {a['feat_mb']}M /dev/urandom > feat.bin
              sha256sum feat.bin > feat.sha
          - name: train
            site: gamma
            needs: [prep]
            inputs: [{{from: prep, path: feat.bin, size: {a['feat_mb']}M}},
                     {{from: prep, path: feat.sha}}]
            script: |
              #!/bin/bash
              #SBATCH -N 1
              #SBATCH -t 10
              #SBATCH --gres=gpu:1
              sha256sum -c feat.sha || exit 7
              sleep {a['train_s']}
              head -c 1M /dev/urandom > model.bin
              sha256sum model.bin > model.sha
          - name: analyse
            site: {analyse_site}
            needs: [train]
            inputs: [{{from: train, path: model.bin, size: 1M}}, {{from: train, path: model.sha}}]
            script: |
              #!/bin/bash
              #SBATCH -N 1
              #SBATCH -t 10
              sha256sum -c model.sha || exit 7
              sleep {a['analyse_s']}
        """)


def phase_times(events, wid: str, t0: float) -> dict[str, dict[str, float]]:
    """Per step of workflow `wid`, when it first entered each phase (s after t0: "held",
    "moving", "ready", "released", ...), from its `workflow.step` events: where a gated
    step's wait went (the copy of its inputs, or its queue after the release)."""
    out: dict[str, dict[str, float]] = {}
    for e in events:
        d = e.data
        if d.get("workflow_id") == wid and d.get("step") and d.get("phase"):
            out.setdefault(d["step"], {}).setdefault(d["phase"],
                                                     round(e.at.timestamp() - t0, 2))
    return out


def submit_times(events, wid: str) -> dict[str, dict[str, float]]:
    """Per step of workflow `wid`, seconds after the workflow was recorded (its
    `workflow.created` event) when its first submit began ("submit_began"), returned
    ("submitted") and when its estimate, asked beside the submit, came ("estimated"):
    whether a step's submit waited for another's estimate or placement."""
    created = next((e.at.timestamp() for e in events if e.kind == "workflow.created"
                    and e.data.get("workflow_id") == wid), None)
    out: dict[str, dict[str, float]] = {}
    if created is None:
        return out
    for e in events:
        d = e.data
        if d.get("workflow_id") != wid or not d.get("step"):
            continue
        key = ("submit_began" if d.get("phase") == "submitting" and d.get("previous") !=
               "submitting" else "submitted" if "held" in d
               else "estimated" if "estimated" in d else None)
        if key:
            out.setdefault(d["step"], {}).setdefault(key, round(e.at.timestamp() - created, 2))
    return out


def moves(events, wid: str) -> dict[str, dict]:
    """Per step of workflow `wid`, its move when its inputs existed (`from`, `to` and
    `sooner_s`, as the engine recorded it), if it moved."""
    return {e.data["step"]: e.data["move"] for e in events
            if e.data.get("workflow_id") == wid and e.data.get("move")}


async def makespan(fed, wid: str, t0: float) -> dict:
    """The makespan, each step's site and times (s after t0), and the checksums' verdicts."""
    view = fed.workflow(wid)
    jobs = {s.name: fed.job(s.job) for s in view.steps if s.job}
    ends = [j.ended_at.timestamp() for j in jobs.values() if j.ended_at]
    ok = view.state.value == "COMPLETED"

    def at(t) -> float | None:
        return round(t.timestamp() - t0, 2) if t else None
    events = fed.events_since(0, kinds=["workflow.step", "workflow.created"], limit=None)
    phases, moved = phase_times(events, wid, t0), moves(events, wid)
    submits = submit_times(events, wid)
    steps = {n: {"site": j.site, "submitted": at(j.submitted_at), "started": at(j.started_at),
                 "ended": at(j.ended_at), "state": j.state.value, "phases": phases.get(n, {}),
                 "since_workflow_start": submits.get(n, {}),
                 **({"moved": moved[n]} if n in moved else {})}
             for n, j in jobs.items()}
    queued = queue_wait(steps)
    checked = {}
    for n in ("train", "analyse"):
        if n in jobs and jobs[n].state.value == "COMPLETED":
            out = (await fed.logs(jobs[n].id))["stdout"]
            checked[n] = ": OK" in out
    return {"state": view.state.value, "reason": view.reason,
            "makespan_s": (max(ends) - t0) if ends and ok and all(checked.values()) else None,
            "sites": [s.site for s in view.steps], "steps": steps, "checksums_ok": checked,
            "queued_s": queued}


PIPELINE = ("prep", "train", "analyse")  # each step needs the one before it


def queue_wait(steps: dict[str, dict]) -> float | None:
    """Seconds the pipeline's steps spent queued once they could run: each step from the
    latest of its submission, its release and its upstream's end, to its start."""
    total, upstream_end = 0.0, 0.0
    for n in PIPELINE:
        st = steps.get(n) or {}
        if st.get("started") is None or st.get("submitted") is None:
            return None
        could = max(st["submitted"], (st.get("phases") or {}).get("released", 0.0),
                    upstream_end)
        total += max(0.0, st["started"] - could)
        upstream_end = st.get("ended") or st["started"]
    return round(total, 2)


def hideable(steps: dict[str, dict]) -> float | None:
    """Of an after-upstream run: the seconds queue-ahead could at most have hidden, each
    step's queue wait up to its upstream's end (queued ahead, a step waits in the queue from
    the workflow's start while its upstream runs; what it waits past that, it waits either
    way), if the step met the same queue."""
    total, upstream_end = 0.0, 0.0
    for n in PIPELINE:
        st = steps.get(n) or {}
        if st.get("started") is None or st.get("submitted") is None:
            return None
        could = max(st["submitted"], upstream_end)
        total += min(max(0.0, st["started"] - could), upstream_end)
        upstream_end = st.get("ended") or st["started"]
    return round(total, 2)


def ceiling(run: dict) -> float | None:
    """The best after-upstream / queue-ahead ratio its round allowed (`hideable`)."""
    hidden = hideable(run.get("steps") or {})
    span = run.get("makespan_s")
    if hidden is None or not span or span <= hidden:
        return None
    return round(span / (span - hidden), 2)


async def run_mode(fed, mode: str, a: dict) -> dict:
    t0 = time.time()
    if mode == "fixed_home":  # the input data must be where the steps run
        await fed.transfer(f"alpha:{a['input']}", f"gamma:{a['input']}.home")
    ops = fed.workflow_engine.ops
    if mode == "held_release":  # the engine's way where gates are not available
        ops.supports_gate = lambda site: False
    try:
        view = await fed.run_workflow(pipeline(mode, a))
    finally:
        ops.__dict__.pop("supports_gate", None)
    from diamond_jupyter.model import DiamondError

    late = None
    try:
        await fed.wait_workflow(view.id, timeout=a["max_wait"])
    except DiamondError:  # not done in time: cancelled and kept as a failed run, not dropped
        await fed.cancel_workflow(view.id)
        late = f"not done after --max-wait {a['max_wait']:.0f} s: cancelled"
    out = await makespan(fed, view.id, t0)
    return {"mode": mode, "workflow": view.id, **out, **({"reason": late} if late else {})}


async def gang_waste(fed, a: dict) -> dict:
    from diamond_jupyter.model import Constraints, JobSpec, Resources

    block = JobSpec(name="bench-blocker", script=f"sleep {a['block_s']}\n",
                    resources=Resources(nodes=2, walltime_s=600),
                    constraints=Constraints(exclusive=True))  # gamma full: both nodes
    out = {}
    for how in ("naive", "gang"):
        blocker = await fed.submit(block, "gamma")
        await fed.wait(blocker.id, until=lambda j: j.started_at is not None or
                       j.state.terminal, timeout=a["max_wait"])
        member = "#!/bin/bash\n#SBATCH -N 1\n#SBATCH -t 10\nsleep 5\n"
        if how == "naive":
            jobs = [await fed.submit(fed.spec_from_text(member, name=f"naive-{s}"), s)
                    for s in ("beta", "gamma")]
        else:
            view = await fed.run_workflow({"name": "bench-gang", "steps": [
                {"name": f"m-{s}", "site": s, "gang": "g", "script": member}
                for s in ("beta", "gamma")]})
            await fed.wait_workflow(view.id, timeout=a["max_wait"])
            jobs = [fed.job(s.job) for s in fed.workflow(view.id).steps]
        done = [await fed.wait(j.id, timeout=a["max_wait"]) for j in jobs]
        starts = [j.started_at.timestamp() for j in done if j.started_at]
        last = max(starts) if starts else 0.0
        out[how] = {"starts_spread_s": last - min(starts) if starts else None,
                    "waste_node_s": sum(last - s for s in starts)}
        await fed.wait(blocker.id, timeout=a["max_wait"])
    return out


def background(a: dict, r: int, duration: float) -> tuple[list, list[dict]]:
    """Round `r`'s seeded background jobs, and what a trace replay says of itself."""
    from diamond_jupyter.testbed import load

    jobs = load.plan(a["profile"], a["seed"] * 1000 + r, duration, 60.0)
    info: list[dict] = []
    if a["trace"]:  # a real center's log on gamma, in place of the profile's gamma stream
        from diamond_jupyter.testbed import trace
        from diamond_jupyter.testbed.clusters import cluster

        pl = trace.plan_replay(trace.read_swf(a["trace"]), cluster("gamma"),
                               scale=a["trace_scale"], duration_s=duration, seed=a["seed"],
                               draw=r)
        jobs = sorted([j for j in jobs if j.site != "gamma"] + pl.jobs, key=lambda j: j.at_s)
        info.append({"round": r, **pl.summary()})
    return jobs, info


async def drained(config: str, prefix: str, timeout: float = 120.0) -> None:
    """Cancel the jobs named `prefix`* and return once no site's queue holds any of them."""
    from diamond_jupyter.testbed import load

    deadline = time.monotonic() + timeout
    while await load.cancel(config, prefix) and time.monotonic() < deadline:
        await asyncio.sleep(1.0)  # cancelled jobs still leaving their nodes


async def against(config: str, jobs: list, prefix: str, a: dict, run) -> dict:
    """`run()` started `--warmup-s` into a fresh replay of `jobs` (named `prefix`*), the
    replay cancelled and drained after it."""
    from diamond_jupyter.testbed import load

    named = [dataclasses.replace(j, name=f"{prefix}{j.name}") for j in jobs]
    bg = asyncio.ensure_future(load.run(config, named)) if a["load"] else None
    try:
        if bg is not None:
            await asyncio.sleep(a["warmup_s"])
        return await run()
    finally:
        if bg is not None:
            bg.cancel()
            await asyncio.gather(bg, return_exceptions=True)
            await drained(config, prefix)


def summarize(runs: list[dict], modes: tuple[str, ...]) -> dict:
    """Median and mean makespan per mode, and the ratios to queue-ahead: of the medians, of
    the means, and per round (a round's modes met the same background, each afresh)."""
    per = {m: [x["makespan_s"] for x in runs if x["mode"] == m and x["makespan_s"]]
           for m in modes}
    med = {m: median(v) for m, v in per.items()}
    avg = {m: mean(v) for m, v in per.items()}
    rounds = sorted({x["round"] for x in runs})
    by_round = {r: {x["mode"]: x["makespan_s"] for x in runs if x["round"] == r}
                for r in rounds}
    out: dict = {"median_makespan_s": med, "mean_makespan_s": avg,
                 "failed_runs": [{k: x[k] for k in ("round", "mode", "state", "reason")}
                                 for x in runs if not x["makespan_s"]]}
    # Rounds where submitting after the upstream met no queue (its steps waited under
    # NO_QUEUE_S in all): queue-ahead has nothing to gain there, so they are counted apart.
    after = {x["round"]: x.get("queued_s") for x in runs if x["mode"] == "after_upstream"}
    quiet = [r for r in rounds if after.get(r) is not None and after[r] < NO_QUEUE_S]
    out["no_queue_rounds"] = quiet
    out["round_ceilings_after_upstream"] = [
        next((ceiling(x) for x in runs if x["round"] == r and x["mode"] == "after_upstream"),
             None) for r in rounds]
    for m in modes:
        if m == "queue_ahead":
            continue
        out[f"median_ratio_{m}"] = ratio(med[m], med["queue_ahead"])
        out[f"mean_ratio_{m}"] = ratio(avg[m], avg["queue_ahead"])
        out[f"round_ratios_{m}"] = [ratio(by_round[r].get(m), by_round[r].get("queue_ahead"))
                                    for r in rounds]
    queued = [r for r in rounds if r not in quiet]

    def med_of(m: str) -> float | None:
        return median([by_round[r][m] for r in queued if by_round[r].get(m)])
    if "after_upstream" in modes:
        out["median_ratio_after_upstream_queued_rounds"] = ratio(med_of("after_upstream"),
                                                                 med_of("queue_ahead"))
    return out


async def bench(config: str, a: dict) -> dict:
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    tmp = Path(tempfile.mkdtemp(prefix="bench-workflow-"))
    fed = Federation(config, store=Store(tmp / "store.sqlite"), poll_interval_s=30,
                     min_poll_s=0.5)
    await fed.start()
    base = f"bwf{a['seed']}x{int(time.time()) % 100000}-"
    modes = tuple(a["modes"])
    duration = a["warmup_s"] + a["round_s"]
    a["input"] = f"bench-wf-{base}input.bin"
    runs: list[dict] = []
    trace_info: list[dict] = []
    gang = None
    try:
        await fed.sites["alpha"].run(["sh", "-c", f"head -c {a['input_mb']}M /dev/urandom > "
                                      f"{a['input']}"], check=True, timeout=120,
                                     scheduler=False)
        for r in range(a["rounds"]):
            jobs, info = background(a, r, duration)
            trace_info += info
            k = r % len(modes)
            for mode in modes[k:] + modes[:k]:
                out = await against(config, jobs, f"{base}{r}{mode[:2]}-", a,
                                    lambda m=mode: run_mode(fed, m, a))
                runs.append({"round": r, **out})
        if a["gang"]:
            gang = await against(config, background(a, a["rounds"], duration)[0],
                                 f"{base}g-", a, lambda: gang_waste(fed, a))
    finally:
        await drained(config, base)  # this run's background jobs, no one else's
        await fed.close()
    return {"rounds": a["rounds"], "seed": a["seed"], "load": a["load"],
            "background": a["trace"] or a["profile"], "trace": trace_info, "runs": runs,
            **summarize(runs, modes), "gang": gang,
            "params": {k: v for k, v in a.items() if k != "input"}}


def main(argv: list[str] | None = None) -> dict:
    from diamond_jupyter.testbed.load import PROFILES

    p = parser(__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-load", dest="load", action="store_false",
                   help="no background load (a quick check)")
    p.add_argument("--profile", default="gpu_queue", choices=tuple(PROFILES),
                   help="the background load profile")
    p.add_argument("--trace", help="a Standard Workload Format log replayed on gamma instead")
    p.add_argument("--trace-scale", type=float, default=60.0,
                   help="with --trace: center seconds per real second")
    p.add_argument("--modes", default=",".join(MODES),
                   help=f"comma-separated, queue_ahead first (of {', '.join(ALL_MODES)})")
    p.add_argument("--no-gang", dest="gang", action="store_false",
                   help="skip the gang measurement")
    p.add_argument("--input-mb", type=int, default=50)
    p.add_argument("--feat-mb", type=int, default=20)
    p.add_argument("--prep-s", type=int, default=40)
    p.add_argument("--train-s", type=int, default=10)
    p.add_argument("--analyse-s", type=int, default=5)
    p.add_argument("--block-s", type=int, default=30)
    p.add_argument("--warmup-s", type=float, default=30.0,
                   help="each mode's workflow starts this far into its round's background")
    p.add_argument("--round-s", type=float, default=400.0,
                   help="background planned per round after the warm-up")
    p.add_argument("--max-wait", type=float, default=1200.0)
    args = p.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or modes[0] != "queue_ahead" or any(m not in ALL_MODES for m in modes):
        p.error(f"--modes: queue_ahead first, then any of {', '.join(ALL_MODES[1:])}")
    a = {k: getattr(args, k) for k in ("rounds", "seed", "load", "profile", "trace",
                                       "trace_scale", "gang", "input_mb", "feat_mb",
                                       "prep_s", "train_s", "analyse_s", "block_s",
                                       "warmup_s", "round_s", "max_wait")}
    a["modes"] = modes
    a["design"] = "matched"  # every mode of a round meets the same background afresh
    r = asyncio.run(bench(config_path(args.config), a))
    med, avg, g = r["median_makespan_s"], r["mean_makespan_s"], r["gang"]
    def f(x: float | None, nd: int = 1) -> str:
        return "-" if x is None else f"{x:.{nd}f}"
    rows = [(f"makespan {m} (s): median / mean", f"{f(med[m])} / {f(avg[m])}", "")
            for m in modes]
    for m in modes[1:]:
        rows.append((f"{m} / queue_ahead: of medians, of means",
                     f"{f(r['median_ratio_' + m], 2)} / {f(r['mean_ratio_' + m], 2)}",
                     ">= 1.5" if m == "after_upstream" else ""))
        rows.append((f"{m} / queue_ahead per round", ", ".join(
            f"{x:.2f}" if x else "-" for x in r["round_ratios_" + m]), ""))
    if "no_queue_rounds" in r:
        rows.append(("rounds where after_upstream met no queue (its steps waited "
                     f"< {NO_QUEUE_S:.0f} s in all)", ", ".join(map(str, r["no_queue_rounds"]))
                     or "none", ""))
        rows.append(("after_upstream / queue_ahead over the other rounds: of medians",
                     f(r.get("median_ratio_after_upstream_queued_rounds"), 2), ""))
    if r["failed_runs"]:
        rows.append(("runs not COMPLETED (or a checksum failed)", str(r["failed_runs"]), ""))
    if g is not None:
        rows += [("gang waste, naive (node-s)", g["naive"]["waste_node_s"], ""),
                 ("gang waste, gang (node-s)", g["gang"]["waste_node_s"], "0")]
    md = (f"## workflow: three-step pipeline, {r['rounds']} rounds, seed {r['seed']}, "
          f"background {r['background'] if r['load'] else 'none'}\n\n"
          + markdown_table(["metric", "value", "target"], rows))
    emit("workflow", args, r, md, None)
    return r


if __name__ == "__main__":
    main()
