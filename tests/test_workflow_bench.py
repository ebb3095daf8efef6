"""The workflow benchmark's pure parts: each edge checked by its checksum downstream, the
figures as ratios in the same run (medians, means, per round, failures listed), and the
`gpu_queue` background that keeps the GPU site's queue busy."""

from __future__ import annotations

import yaml

from benchmarks.workflow import pipeline, summarize
from diamond_jupyter.testbed import load

ARGS = {"input": "in.bin", "prep_s": 3, "feat_mb": 1, "train_s": 2, "analyse_s": 1}


def test_every_data_edge_is_verified_by_its_checksum():
    steps = {s["name"]: s for s in yaml.safe_load(pipeline("queue_ahead", ARGS))["steps"]}
    assert "sha256sum feat.bin > feat.sha" in steps["prep"]["script"]
    assert "sha256sum -c feat.sha || exit 7" in steps["train"]["script"]
    assert "sha256sum -c model.sha || exit 7" in steps["analyse"]["script"]
    assert {i["path"] for i in steps["train"]["inputs"]} == {"feat.bin", "feat.sha"}
    after = yaml.safe_load(pipeline("after_upstream", ARGS))
    assert after["queue_ahead"] is False
    home = yaml.safe_load(pipeline("fixed_home", ARGS))
    assert {s["site"] for s in home["steps"]} == {"gamma"}


def test_the_figures_are_ratios_within_the_run():
    runs = [{"round": 0, "mode": "queue_ahead", "makespan_s": 50.0},
            {"round": 0, "mode": "after_upstream", "makespan_s": 100.0},
            {"round": 1, "mode": "queue_ahead", "makespan_s": 70.0},
            {"round": 1, "mode": "after_upstream", "makespan_s": None, "state": "FAILED",
             "reason": "step 'train' failed"}]
    out = summarize(runs, ("queue_ahead", "after_upstream"))
    assert out["median_makespan_s"] == {"queue_ahead": 60.0, "after_upstream": 100.0}
    assert out["median_ratio_after_upstream"] == 100.0 / 60.0
    assert out["round_ratios_after_upstream"] == [2.0, None]
    assert out["failed_runs"] == [{"round": 1, "mode": "after_upstream", "state": "FAILED",
                                   "reason": "step 'train' failed"}]


def test_the_gpu_queue_keeps_gammas_gpus_mostly_busy():
    jobs = [j for j in load.plan("gpu_queue", 11, 900) if j.site == "gamma"]
    assert all(j.gpus == 1 and j.nodes == 1 and j.cpus_per_node == 8 for j in jobs)
    assert sum(j.at_s == 0 for j in jobs) == 8  # a standing queue from the start
    gpu_s = sum(j.runtime_s for j in jobs)
    assert 0.6 < gpu_s / (4 * 900) < 1.0  # four GPUs, busy but not overloaded


async def test_a_run_not_done_in_time_is_cancelled_and_kept_as_failed():
    """A workflow still running at --max-wait (a replayed log can jam the GPU site for
    longer) is cancelled and listed as a failed run; it does not end the benchmark and lose
    the runs before it."""
    from types import SimpleNamespace

    from benchmarks.workflow import run_mode
    from diamond_jupyter.model import DiamondError

    state = SimpleNamespace(value="RUNNING")
    view = SimpleNamespace(id="wf-1", state=state, reason=None, steps=[])
    cancelled = []

    async def run_workflow(text):
        return view

    async def wait_workflow(wid, timeout):
        raise DiamondError(f"timed out after {timeout:.0f}s waiting for workflow {wid}")

    async def cancel_workflow(wid):
        cancelled.append(wid)
        state.value = "CANCELLED"
        return view

    fed = SimpleNamespace(workflow_engine=SimpleNamespace(ops=SimpleNamespace()),
                          run_workflow=run_workflow, wait_workflow=wait_workflow,
                          cancel_workflow=cancel_workflow, workflow=lambda wid: view,
                          events_since=lambda seq, kinds, limit: [])
    got = await run_mode(fed, "queue_ahead", ARGS | {"max_wait": 5.0})
    assert cancelled == ["wf-1"]
    assert got["state"] == "CANCELLED" and got["makespan_s"] is None
    assert got["reason"] == "not done after --max-wait 5 s: cancelled"
    failed = summarize([got | {"round": 0}], ["queue_ahead"])["failed_runs"]
    assert failed == [{"round": 0, "mode": "queue_ahead", "state": "CANCELLED",
                       "reason": "not done after --max-wait 5 s: cancelled"}]


def test_each_steps_phases_are_timed_from_its_events():
    """A gated step's wait split into its copy and its queue: the first time each step of
    this workflow entered each phase, nothing from another workflow."""
    from datetime import datetime, timezone

    from benchmarks.workflow import phase_times
    from diamond_jupyter.model import Event

    t0 = 1_000.0

    def ev(wid, step, phase, s):
        return Event(kind="workflow.step", at=datetime.fromtimestamp(t0 + s, timezone.utc),
                     data={"workflow_id": wid, "step": step, "phase": phase})
    events = [ev("wf-1", "train", "held", 0.5), ev("wf-1", "train", "moving", 31.0),
              ev("wf-2", "train", "moving", 2.0), ev("wf-1", "train", "ready", 33.25),
              ev("wf-1", "train", "released", 33.5), ev("wf-1", "train", "moving", 90.0)]
    assert phase_times(events, "wf-1", t0) == {"train": {
        "held": 0.5, "moving": 31.0, "ready": 33.25, "released": 33.5}}


def test_each_steps_submit_is_timed_from_the_workflows_start():
    """When each step's submit began and returned, and its estimate came, in seconds after
    the workflow was recorded: the first of each, nothing from another workflow."""
    from datetime import datetime, timezone

    from benchmarks.workflow import submit_times
    from diamond_jupyter.model import Event

    t0 = 1_000.0

    def ev(wid, s, kind="workflow.step", **data):
        return Event(kind=kind, at=datetime.fromtimestamp(t0 + s, timezone.utc),
                     data={"workflow_id": wid, **data})
    events = [ev("wf-2", 0.0, "workflow.created"), ev("wf-1", 2.0, "workflow.created"),
              ev("wf-1", 2.25, step="train", phase="submitting", previous="waiting"),
              ev("wf-1", 2.5, step="train", phase="held", held=True, job="j1"),
              ev("wf-1", 2.5, step="prep", phase="submitting", previous="waiting"),
              ev("wf-2", 2.6, step="prep", phase="submitting", previous="waiting"),
              ev("wf-1", 2.75, step="prep", phase="queued", held=False, job="j2"),
              ev("wf-1", 3.5, step="train", phase="held", estimated={"end": None}),
              ev("wf-1", 4.0, step="prep", phase="submitting", previous="submitting"),
              ev("wf-1", 9.0, step="train", phase="submitting", previous="held")]
    assert submit_times(events, "wf-1") == {
        "train": {"submit_began": 0.25, "submitted": 0.5, "estimated": 1.5},
        "prep": {"submit_began": 0.5, "submitted": 0.75}}
    assert submit_times(events[2:], "wf-1") == {}  # its start not seen: nothing to time from


async def test_every_mode_of_a_round_meets_the_same_background_afresh(monkeypatch):
    """Matched rounds: each mode's workflow starts after the warm-up into its own replay of
    the round's background, and the next mode's replay starts only when the previous one's
    jobs have left every queue."""
    import asyncio

    from benchmarks.workflow import against, background

    queue: list[str] = []  # the sites' queues, as job names
    seen: list[tuple[list[str], int]] = []  # (the jobs replayed, how many were queued)

    async def run(config, jobs):
        seen.append(([j.name for j in jobs], len(queue)))
        queue.extend(j.name for j in jobs)
        await asyncio.Event().wait()  # a replay runs until cancelled

    async def cancel(config, prefix):  # how many were still listed, as the real one
        listed = sum(n.startswith(prefix) for n in queue)
        queue[:] = [n for n in queue if not n.startswith(prefix)]
        return listed

    monkeypatch.setattr(load, "run", run)
    monkeypatch.setattr(load, "cancel", cancel)
    a = {"profile": "gpu_queue", "seed": 5, "trace": None, "load": True, "warmup_s": 0.01}
    jobs, _ = background(a, 0, 120.0)
    started = []

    async def workflow(mode):
        started.append((mode, len(queue)))  # the replay is running when the workflow starts
        return {"mode": mode}

    for mode in ("queue_ahead", "after_upstream"):
        assert await against("cfg", jobs, f"r0{mode[:2]}-", a,
                             lambda m=mode: workflow(m)) == {"mode": mode}
    assert [names for names, _ in seen] == [  # the same window, in full, named per mode
        [f"r0{m}-{j.name}" for j in jobs] for m in ("qu", "af")]
    assert [before for _, before in seen] == [0, 0]  # nothing of the last mode was left
    assert all(n == len(jobs) for _, n in started) and queue == []


def test_each_round_draws_its_own_background_window():
    from benchmarks.workflow import background

    a = {"profile": "gpu_queue", "seed": 5, "trace": None}
    assert background(a, 1, 300.0) == background(a, 1, 300.0)
    assert background(a, 0, 300.0)[0] != background(a, 1, 300.0)[0]


def test_rounds_that_met_no_queue_are_counted_apart():
    """Queue-ahead can gain only where a step would have queued: a round whose
    submit-after-upstream run waited under NO_QUEUE_S in all is listed, and the ratio over
    the other rounds is given beside the overall one."""
    from benchmarks.workflow import queue_wait

    def steps(prep, train, analyse, released=None):
        out = {}
        for n, (sub, start, run) in zip(("prep", "train", "analyse"), (prep, train, analyse),
                                        strict=True):
            out[n] = {"submitted": sub, "started": start, "ended": start + run,
                      "phases": {"released": released} if released and n == "train" else {}}
        return out

    # after upstream: train submitted at 31, started at 61 (30 s queued), analyse at once
    assert queue_wait(steps((0, 1, 30), (31, 61, 10), (72, 72.5, 5))) == 31.5
    # queue-ahead: train submitted at 0 but released at 31, started at 33
    assert queue_wait(steps((0, 1, 30), (0, 33, 10), (0, 43.5, 5), released=31)) == 3.5
    runs = [{"round": 0, "mode": "queue_ahead", "makespan_s": 50.0},
            {"round": 0, "mode": "after_upstream", "makespan_s": 80.0, "queued_s": 31.5},
            {"round": 1, "mode": "queue_ahead", "makespan_s": 48.0},
            {"round": 1, "mode": "after_upstream", "makespan_s": 47.0, "queued_s": 1.2}]
    out = summarize(runs, ("queue_ahead", "after_upstream"))
    assert out["no_queue_rounds"] == [1]
    assert out["median_ratio_after_upstream_queued_rounds"] == 80.0 / 50.0
    assert out["median_ratio_after_upstream"] == 63.5 / 49.0


def test_the_best_ratio_a_round_allowed_counts_only_waits_an_upstream_could_hide():
    """Queued ahead, a step waits in the queue while its upstream runs: of an after-upstream
    run's waits, queue-ahead could hide each up to its upstream's end, no more."""
    from benchmarks.workflow import ceiling, hideable

    def steps(*spans):
        return {n: {"submitted": sub, "started": start, "ended": start + run}
                for n, (sub, start, run) in zip(("prep", "train", "analyse"), spans,
                                                strict=True)}

    # prep's own 1 s wait cannot be hidden; train's 30 s can (prep ran until 31)
    waited = steps((0, 1, 30), (31, 61, 10), (72, 72.5, 5))
    assert hideable(waited) == 30.5
    assert ceiling({"steps": waited, "makespan_s": 77.5}) == round(77.5 / 47.0, 2)
    # a 100 s wait for the GPU: only the 31 s prep ran can be hidden
    long = steps((0, 1, 30), (31, 131, 10), (142, 142, 5))
    assert hideable(long) == 31.0
    # no queue: nothing to gain
    assert ceiling({"steps": steps((0, 0, 30), (30, 30, 10), (40, 40, 5)),
                    "makespan_s": 45.0}) == 1.0
    assert ceiling({"steps": {}, "makespan_s": 45.0}) is None


def test_a_steps_move_is_read_from_its_event():
    from datetime import datetime, timezone

    from benchmarks.workflow import moves
    from diamond_jupyter.model import Event

    def ev(wid, data):
        return Event(kind="workflow.step", at=datetime.now(timezone.utc),
                     data={"workflow_id": wid, "step": "analyse", "phase": "held", **data})
    move = {"from": "beta", "to": "gamma", "sooner_s": 41.5}
    assert moves([ev("wf-1", {}), ev("wf-2", {"move": move}), ev("wf-1", {"move": move})],
                  "wf-1") == {"analyse": move}
    assert moves([ev("wf-1", {})], "wf-1") == {}
