"""The probe's own Slurm plan for a job of tasks without a node count (`Demand.spread`):
after each job ahead takes its slot, only the nodes that slot took are counted again
(`_planned_start`), not every node of the plan. Held to the plain recount (every node
after every slot) on deep random sites: the same starts, far fewer counts."""

from __future__ import annotations

import pytest
from test_plan_memory import _deep_site

from diamond_jupyter import placement_sim
from diamond_jupyter.placement_sim import Demand, _Plan, earliest_start


def _recount_every_node(sim, ahead, probe, t, depth, memory=None):
    """`_planned_start` for a spread probe as it was before: every node of the plan
    counted again after every slot taken."""
    if sim.candidates(probe) is None:
        return None
    mine = sim.elig(probe)
    meets = memory.meets if memory is not None else {}
    ahead = [d for d in ahead if not d.done and d is not probe
             and placement_sim._meets(meets, mine, sim, d)][:depth]
    nodes = mine.union(*{id(d.eligible): sim.elig(d) for d in ahead}.values())
    ahead = ahead[:placement_sim.WHOLE_PLAN_REACHES * placement_sim._plan_reach(nodes)]
    plan = _Plan(sim, t, nodes, lazy=True)
    if memory is not None:
        memory.begin(sim)
    order = plan.nodes_of(probe)
    for d in ahead:
        got = memory.reserve(plan, d) if memory is not None else plan.reserve(d)
        if got is not None and got[1] and plan._hosts(probe, t, order) is None:
            return None
    return plan._hosts(probe, t, order)


def _counted(monkeypatch) -> list[int]:
    calls = [0]
    through = _Plan._tasks_through

    def counting(self, d, n, start):
        calls[0] += 1
        return through(self, d, n, start)
    monkeypatch.setattr(_Plan, "_tasks_through", counting)
    return calls


@pytest.mark.parametrize("seed", range(4))
def test_a_spread_probes_plan_starts_it_as_a_recount_of_every_node_does(seed, monkeypatch):
    n_nodes, n_jobs = (6, 190) if seed % 2 else (12, 140)
    st_, queue = _deep_site(seed, n_nodes, n_jobs)
    probes = [Demand(min(k, n_nodes), 1, 0, 1800.0, list(range(n_nodes)), spread=k)
              for k in (4, 12, 30)]
    calls = _counted(monkeypatch)
    starts = [earliest_start(st_, queue, p, reservation="plan") for p in probes]
    shares = [p.shares for p in probes]
    fast = calls[0]
    calls[0] = 0
    monkeypatch.setattr(placement_sim, "_planned_start", _recount_every_node)
    assert starts == [earliest_start(st_, queue, p, reservation="plan") for p in probes]
    assert shares == [p.shares for p in probes]
    assert any(s is not None and s > 0 for s in starts)  # the plan was played out
    # the recount of every node at every slot costs several times the counts
    assert 3 * fast < calls[0], (fast, calls[0])
