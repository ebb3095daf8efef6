"""A probe's Slurm plan kept from one event to the next (`placement_sim._PlanMemory`)
makes the reservations and finds the start a plan made anew makes and finds.

Between two events of a play-out a few jobs end and a few start; the kept plan takes each
job's last slot again without a search where nothing it depends on changed. These
properties drive a site through random events (running jobs ending, queued jobs starting
on random nodes, scheduler estimates coming due) and, at every event, hold the kept plan
to a plan made from nothing: the same slot for every job ahead, the same start for the
probe. The last test does the same for whole play-outs past `PLAN_WORK`.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diamond_jupyter import placement_sim
from diamond_jupyter.placement_sim import (
    PLAN_WORK,
    WHOLE,
    Demand,
    SimState,
    _Plan,
    _PlanMemory,
    _planned_start,
    _Sim,
    earliest_start,
)


@st.composite
def _site_queue_probe(draw):
    n_nodes = draw(st.integers(1, 7))
    cap_c = [draw(st.sampled_from([2, 4, 8])) for _ in range(n_nodes)]
    cap_g = [draw(st.sampled_from([0, 0, 2])) for _ in range(n_nodes)]
    free_c, free_g, releases, planned = list(cap_c), list(cap_g), [], {}
    for n in range(n_nodes):  # running jobs: each holds part of a node until it ends
        for _ in range(draw(st.integers(0, 3))):
            c = draw(st.integers(0, free_c[n]))
            g = draw(st.integers(0, free_g[n]))
            free_c[n] -= c
            free_g[n] -= g
            end = float(draw(st.integers(1, 40)) * 10)
            # the scheduler's walltime end: mostly later than the job's end, at times
            # earlier (a plan that finds it already given back)
            planned[len(releases)] = end + draw(st.sampled_from([0.0, 0.0, 55.0, 300.0,
                                                                 -5.0]))
            releases.append((end, len(releases), n, c, g))
    releases.sort()
    state = SimState(names=[f"n{i}" for i in range(n_nodes)], cap_c=cap_c, cap_g=cap_g,
                     free_c=free_c, free_g=free_g, releases=releases,
                     planned=planned if draw(st.booleans()) else None)
    everywhere = list(range(n_nodes))
    some = everywhere[: max(1, n_nodes // 2)]
    others = everywhere[n_nodes // 2:] or everywhere
    lists = [everywhere, some, others]
    shapes = draw(st.lists(st.tuples(st.integers(1, 3), st.sampled_from([WHOLE, 1, 2, 4]),
                                     st.sampled_from([0, 1]),
                                     st.sampled_from([30.0, 100.0, 250.0]),
                                     st.sampled_from([0.0, 0.0, 50.0, 120.0]),
                                     st.integers(0, 2), st.sampled_from([None, 400.0])),
                           min_size=1, max_size=5))
    picks = draw(st.lists(st.integers(0, len(shapes) - 1), min_size=1, max_size=16))
    queue = [Demand(nodes, cpus, gpus, dur, lists[where], not_before=nb, limit=limit)
             for nodes, cpus, gpus, dur, nb, where, limit in (shapes[i] for i in picks)]
    probe = Demand(draw(st.integers(1, 2)), draw(st.sampled_from([1, 2])), 0,
                   draw(st.sampled_from([20.0, 150.0])), everywhere)
    return state, queue, probe


@settings(max_examples=300, deadline=None)
@given(_site_queue_probe(), st.data())
def test_a_kept_plan_reserves_and_starts_as_a_new_one(case, data):
    state, queue, probe = case
    depth = data.draw(st.integers(1, 20))
    sim = _Sim(state)
    memory = _PlanMemory()
    wakes = sorted({d.not_before for d in queue if d.not_before > 0})
    t, plans = 0.0, 0
    for _ in range(30):
        sim.release_until(t)
        for d in queue:  # some jobs that fit start now, on nodes of their own choosing
            if not d.done and d.not_before <= t and data.draw(st.booleans()):
                cand = sim.candidates(d)
                if cand is not None:
                    pick = data.draw(st.permutations(cand))[: d.nodes]
                    sim.alloc(d, sorted(pick), t)
        kept = _planned_start(sim, queue, probe, t, depth, memory)
        assert kept == _planned_start(sim, queue, probe, t, depth), t
        made = [(d, slot) for d, (at, _, slot) in memory.made.items() if at == t]
        if made:  # a plan made at t: every slot it kept or searched for is a new plan's
            plans += 1
            plan = _Plan(sim, t, frozenset(range(len(state.names))))
            for d, slot in made:
                assert plan.reserve(d) == slot, (t, d)
        nxt = sim.next_event(t, wakes)
        if nxt is None:
            break
        t = nxt


def _deep_site(seed: int, n_nodes: int, n_jobs: int) -> tuple[SimState, list[Demand]]:
    """A busy site whose queue is too deep to plan whole (`PLAN_WORK`): the probe's own
    plan is made at every event of the play-out."""
    rng = random.Random(seed)
    cap = [8] * n_nodes
    free = [rng.choice((0, 0, 2, 4, 8)) for _ in range(n_nodes)]
    releases = sorted((float(rng.randint(30, 7200)), seq, n, 8 - free[n], 0)
                      for seq, n in enumerate(range(n_nodes)) if free[n] < 8)
    planned = {r[1]: r[0] * rng.choice((1.0, 1.0, 1.5, 3.0)) for r in releases}
    st_ = SimState([f"n{i}" for i in range(n_nodes)], cap, [0] * n_nodes, free,
                   [0] * n_nodes, releases, planned=planned)
    everywhere, half = list(range(n_nodes)), list(range(n_nodes // 2))
    queue = []
    for _ in range(n_jobs):
        limit = float(rng.randint(600, 7200))
        queue.append(Demand(rng.choice((1, 1, 2, 3)), rng.choice((1, 4, 8, WHOLE)), 0,
                            limit * rng.choice((0.2, 0.5, 1.0)),
                            rng.choice((everywhere, everywhere, half)),
                            not_before=float(rng.choice((0, 0, 300, 900))), limit=limit))
    return st_, queue


@pytest.mark.parametrize("seed", range(6))
def test_a_play_out_with_kept_plans_starts_the_probe_as_with_new_ones(seed, monkeypatch):
    n_nodes, n_jobs = (6, 190) if seed % 2 else (12, 140)
    st_, queue = _deep_site(seed, n_nodes, n_jobs)
    assert n_nodes * (n_jobs + 1) ** 2 > PLAN_WORK  # the probe's plan at every event
    probes = [Demand(1, 4, 0, 1800.0, list(range(n_nodes))),
              Demand(2, 8, 0, 600.0, list(range(n_nodes))),
              Demand(1, 1, 0, 60.0, list(range(n_nodes // 2)))]
    kept = [earliest_start(st_, queue, p, reservation="plan") for p in probes]
    searched = []

    def again(self, plan, d, t0, was):  # every slot searched for anew
        searched.append(d)
        return plan.reserve(d, t0)

    monkeypatch.setattr(placement_sim._PlanMemory, "_again", again)
    anew = [earliest_start(st_, queue, p, reservation="plan") for p in probes]
    assert kept == anew
    assert searched  # the plans were kept from event to event
    assert any(s is not None and s > 0 for s in anew)  # some probe waits for its start


def test_a_kept_reservation_that_comes_due_is_a_start_that_leaves_its_node_shared():
    # one 4-CPU node, free: job a (1 CPU) may start only at 50 (a scheduler estimate), so
    # the plan at 0 keeps the node whole for it from 50, and job b waits until a's window
    # ends; at 50 a's slot is now: a start taking 1 CPU, and b fits beside it at once
    state = SimState(["n0"], [4], [0], [4], [0], [])
    a = Demand(1, 1, 0, 100.0, [0], not_before=50.0)
    b = Demand(1, 1, 0, 100.0, [0])
    probe = Demand(1, 1, 0, 20.0, [0])
    sim, memory = _Sim(state), _PlanMemory()
    assert _planned_start(sim, [a, b], probe, 0.0, 10, memory) == [0]
    assert [memory.made[d][2] for d in (a, b)] == [(50.0, [0]), (150.0, [0])]
    sim.release_until(50.0)  # nothing ends, nothing starts: no node changed
    assert _planned_start(sim, [a, b], probe, 50.0, 10, memory) == [0]
    assert [memory.made[d][2] for d in (a, b)] == [(50.0, [0]), (50.0, [0])]
