"""A Slurm plan's slot search (`placement_sim._Plan.reserve`) finds what a plain search finds.

The plan remembers each node's earliest fit per job shape and keeps a heap per shape that
repeats, so that a deep queue of like jobs is planned in about log(nodes) per job. These
properties hold it to a search with no memory: at each candidate time (the search's start
and every time the plan changes), the nodes where the job fits for its whole planned run,
in index order; the first time enough of them fit is the slot.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from diamond_jupyter.placement_sim import WHOLE, Demand, SimState, _Plan, _Sim


def _fits_through(plan: _Plan, d: Demand, n: int, start: float) -> bool:
    times, end = plan.times[n], start + d.planned
    for k, at in enumerate(times):
        until = times[k + 1] if k + 1 < len(times) else float("inf")
        if at < end and until > start and not plan.sim.fits(d, n, plan.fc[n][k],
                                                            plan.fg[n][k]):
            return False
    return True


def _plain_search(plan: _Plan, d: Demand, t0: float) -> tuple[float, list[int]] | None:
    starts = sorted({t0} | {x for ts in plan.times.values() for x in ts if x >= t0})
    nodes = sorted(n for n in set(d.eligible) if n in plan.times)
    for start in starts:
        fit = [n for n in nodes if _fits_through(plan, d, n, start)]
        if len(fit) >= d.nodes:
            return start, fit[: d.nodes]
    return None


@st.composite
def _site_and_queue(draw):
    n_nodes = draw(st.integers(1, 6))
    cap_c = [draw(st.sampled_from([2, 4, 8])) for _ in range(n_nodes)]
    cap_g = [draw(st.sampled_from([0, 0, 2])) for _ in range(n_nodes)]
    free_c, free_g, releases = list(cap_c), list(cap_g), []
    for n in range(n_nodes):  # running jobs: each holds part of a node until it ends
        for _ in range(draw(st.integers(0, 2))):
            c = draw(st.integers(0, free_c[n]))
            g = draw(st.integers(0, free_g[n]))
            free_c[n] -= c
            free_g[n] -= g
            releases.append((float(draw(st.integers(1, 40)) * 10), len(releases), n, c, g))
    releases.sort()
    releases = [(end, seq, n, c, g) for seq, (end, _, n, c, g) in enumerate(releases)]
    state = SimState(names=[f"n{i}" for i in range(n_nodes)], cap_c=cap_c, cap_g=cap_g,
                     free_c=free_c, free_g=free_g, releases=releases)
    # a few shapes, drawn again and again (a queue repeats its arrays and scripts)
    everywhere = list(range(n_nodes))
    some = everywhere[: max(1, n_nodes // 2)]
    shapes = draw(st.lists(st.tuples(st.integers(1, 3), st.sampled_from([WHOLE, 1, 2, 4]),
                                     st.sampled_from([0, 1]),
                                     st.sampled_from([30.0, 100.0, 250.0]),
                                     st.sampled_from([0.0, 0.0, 50.0]),
                                     st.booleans()),
                           min_size=1, max_size=4))
    picks = draw(st.lists(st.integers(0, len(shapes) - 1), min_size=1, max_size=14))
    queue = [Demand(nodes, cpus, gpus, dur, everywhere if wide else some, not_before=nb)
             for nodes, cpus, gpus, dur, nb, wide in (shapes[i] for i in picks)]
    return state, queue, draw(st.sampled_from([0.0, 20.0]))


@settings(max_examples=400, deadline=None)
@given(_site_and_queue())
def test_every_reservation_is_the_earliest_slot_a_plain_search_finds(case):
    state, queue, now = case
    sim = _Sim(state)
    sim.release_until(now)
    plan = _Plan(sim, now, frozenset(range(len(state.names))))
    for d in queue:
        t0 = max(now, d.not_before)
        expected = _plain_search(plan, d, t0)
        assert plan.reserve(d) == expected
