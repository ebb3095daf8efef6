"""Workflow makespan on the loaded test bed: queue-ahead vs submit-after-upstream vs a fixed
home site, and the node-seconds a gang wastes against naive submission.

The pipeline (three steps, a real data edge between each):
- prep on alpha, where the input data lives (`--input-mb` MB made there first): reads it,
  `sleep --prep-s`, writes features (`--feat-mb` MB);
- train on gamma, the GPU site (one GPU), on the features: `sleep --train-s`, writes a model;
- analyse anywhere (`auto`; placement counts the model's transfer): `sleep --analyse-s`.
Modes, each run as a workflow through the engine on the same loaded test bed, in rotated
order per round:
- `queue_ahead`: every step queued at once (downstream ones held, or behind afterok);
- `after_upstream`: each step submitted only when its upstream ended (`queue_ahead: false`);
- `fixed_home`: every step on gamma (the only site that can train), the input data copied
  there first (counted in the makespan).
Makespan: from the workflow's start to the end of its last step (the jobs' own start/end
lines). Background: the `busy` load profile (seeded) on every site for the whole run.

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
          - name: train
            site: gamma
            needs: [prep]
            inputs: [{{from: prep, path: feat.bin, size: {a['feat_mb']}M}}]
            script: |
              #!/bin/bash
              #SBATCH -N 1
              #SBATCH -t 10
              #SBATCH --gres=gpu:1
              sleep {a['train_s']}
              head -c 1M /dev/urandom > model.bin
          - name: analyse
            site: {analyse_site}
            needs: [train]
            inputs: [{{from: train, path: model.bin, size: 1M}}]
            script: |
              #!/bin/bash
              #SBATCH -N 1
              #SBATCH -t 10
              sleep {a['analyse_s']}
        """)


async def makespan(fed, wid: str, t0: float) -> dict:
    view = fed.workflow(wid)
    jobs = [fed.job(s.job) for s in view.steps if s.job]
    ends = [j.ended_at.timestamp() for j in jobs if j.ended_at]
    return {"state": view.state.value, "makespan_s": (max(ends) - t0) if ends and
            view.state.value == "COMPLETED" else None,
            "sites": [s.site for s in view.steps]}


async def run_mode(fed, mode: str, a: dict) -> dict:
    t0 = time.time()
    if mode == "fixed_home":  # the input data must be where the steps run
        await fed.transfer(f"alpha:{a['input']}", f"gamma:{a['input']}.home")
    view = await fed.run_workflow(pipeline(mode, a))
    await fed.wait_workflow(view.id, timeout=a["max_wait"])
    return {"mode": mode, "workflow": view.id, **await makespan(fed, view.id, t0)}


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


async def bench(config: str, a: dict) -> dict:
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store
    from diamond_jupyter.testbed import load

    tmp = Path(tempfile.mkdtemp(prefix="bench-workflow-"))
    fed = Federation(config, store=Store(tmp / "store.sqlite"), poll_interval_s=30,
                     min_poll_s=0.5)
    await fed.start()
    prefix = f"bwf{a['seed']}x{int(time.time()) % 100000}-"
    duration = a["rounds"] * a["round_s"] + 120
    jobs = [dataclasses.replace(j, name=f"{prefix}{j.name}")
            for j in load.plan("busy", a["seed"], duration, 60.0)]
    bg = asyncio.ensure_future(load.run(config, jobs)) if a["load"] else None
    a["input"] = f"bench-wf-{prefix}input.bin"
    runs: list[dict] = []
    try:
        await fed.sites["alpha"].run(["sh", "-c", f"head -c {a['input_mb']}M /dev/urandom > "
                                      f"{a['input']}"], check=True, timeout=120,
                                     scheduler=False)
        await asyncio.sleep(a["warmup_s"] if a["load"] else 0)
        for r in range(a["rounds"]):
            order = MODES[r % 3:] + MODES[:r % 3]
            for mode in order:
                runs.append({"round": r, **await run_mode(fed, mode, a)})
        gang = await gang_waste(fed, a)
    finally:
        if bg is not None:
            bg.cancel()
            await asyncio.gather(bg, return_exceptions=True)
        await fed.close()
    per = {m: [x["makespan_s"] for x in runs if x["mode"] == m and x["makespan_s"]]
           for m in MODES}
    med = {m: median(v) for m, v in per.items()}
    return {"rounds": a["rounds"], "seed": a["seed"], "load": a["load"], "runs": runs,
            "median_makespan_s": med, "mean_makespan_s": {m: mean(v) for m, v in per.items()},
            "speedup_vs_after_upstream": ratio(med["after_upstream"], med["queue_ahead"]),
            "speedup_vs_fixed_home": ratio(med["fixed_home"], med["queue_ahead"]),
            "gang": gang, "params": {k: v for k, v in a.items() if k != "input"}}


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-load", dest="load", action="store_false",
                   help="no background load (a quick check)")
    p.add_argument("--input-mb", type=int, default=50)
    p.add_argument("--feat-mb", type=int, default=20)
    p.add_argument("--prep-s", type=int, default=30)
    p.add_argument("--train-s", type=int, default=30)
    p.add_argument("--analyse-s", type=int, default=10)
    p.add_argument("--block-s", type=int, default=30)
    p.add_argument("--warmup-s", type=float, default=60.0, help="load before the first round")
    p.add_argument("--round-s", type=float, default=400.0, help="load planned per round")
    p.add_argument("--max-wait", type=float, default=1200.0)
    args = p.parse_args(argv)
    a = {k: getattr(args, k) for k in ("rounds", "seed", "load", "input_mb", "feat_mb",
                                       "prep_s", "train_s", "analyse_s", "block_s",
                                       "warmup_s", "round_s", "max_wait")}
    r = asyncio.run(bench(config_path(args.config), a))
    med, g = r["median_makespan_s"], r["gang"]
    md = (f"## workflow: three-step pipeline, {r['rounds']} rounds, seed {r['seed']}, "
          f"load {'busy' if r['load'] else 'none'}\n\n"
          + markdown_table(["metric", "value", "target"], [
              ("median makespan queue-ahead (s)", med["queue_ahead"], ""),
              ("median makespan after-upstream (s)", med["after_upstream"], ""),
              ("median makespan fixed home gamma (s)", med["fixed_home"], ""),
              ("speed-up vs after-upstream", r["speedup_vs_after_upstream"], ">= 1.5"),
              ("speed-up vs fixed home", r["speedup_vs_fixed_home"], ""),
              ("gang waste, naive (node-s)", g["naive"]["waste_node_s"], ""),
              ("gang waste, gang (node-s)", g["gang"]["waste_node_s"], "0")]))
    emit("workflow", args, r, md, None)
    return r


if __name__ == "__main__":
    main()
