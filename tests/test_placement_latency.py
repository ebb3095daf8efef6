"""The shortcuts that keep a decision fast give what the whole work gives."""

from __future__ import annotations

import random

import pytest

from diamond_jupyter.placement_sim import (
    PLAN_WORK,
    Demand,
    SimState,
    calibrated_view,
    calibrated_views,
    hold_horizon,
    queue_starts,
)


def _site(seed: int, n_nodes: int, n_jobs: int) -> tuple[SimState, list[Demand]]:
    """A busy site: 8-CPU nodes, running jobs ending over the next hours, and a queue of
    mixed shapes, some held to a scheduler estimate."""
    rng = random.Random(seed)
    cap = [8] * n_nodes
    free = [rng.choice((0, 0, 2, 4)) for _ in range(n_nodes)]
    releases = sorted((float(rng.randint(30, 7200)), seq, n, 8 - free[n], 0)
                      for seq, n in enumerate(range(n_nodes)) if free[n] < 8)
    st = SimState([f"n{i}" for i in range(n_nodes)], cap, [0] * n_nodes, free,
                  [0] * n_nodes, releases)
    everywhere = list(range(n_nodes))
    queue = [Demand(rng.choice((1, 1, 2)), rng.choice((1, 4, 8)), 0,
                    float(rng.randint(60, 3600)), everywhere,
                    not_before=float(rng.choice((0, 300, 900, 2400))),
                    sched=rng.random() < 0.7, now_ok=rng.random() < 0.8,
                    native_id=str(k), limit=float(rng.randint(3600, 7200)))
             for k in range(n_jobs)]
    for d in queue:
        d.sched = d.sched and d.not_before > 0
    return st, queue


@pytest.mark.parametrize("reservation", ["plan", "easy", "none"])
@pytest.mark.parametrize("n_nodes,n_jobs", [(6, 20), (40, 120)])
def test_a_play_out_stopped_early_gives_the_starts_before_it(reservation: str, n_nodes: int,
                                                             n_jobs: int) -> None:
    st, queue = _site(n_nodes * n_jobs, n_nodes, n_jobs)
    # the small site is planned whole, the big one past PLAN_WORK (EASY with the plan's
    # probe): both ways of playing the queue out
    assert (n_nodes * (n_jobs + 1) ** 2 <= PLAN_WORK) == (n_nodes == 6)
    whole = queue_starts(st, queue, reservation)
    assert len(whole) > n_jobs // 2 and max(whole.values()) > 900  # the queue goes far
    for until in (0.0, 1.0, 300.0, 900.0, 2400.0, max(whole.values())):
        cut = queue_starts(st, queue, reservation, until=until)
        assert cut == {k: s for k, s in whole.items() if s < until}, until


def test_the_hold_horizon_is_the_latest_estimate_a_hold_may_move() -> None:
    def d(nb: float, sched: bool = True, now_ok: bool = True, nid: str | None = "j") -> Demand:
        return Demand(1, 1, 0, 60.0, [0], nb, sched, now_ok=now_ok, native_id=nid)

    assert hold_horizon([d(100.0), d(700.0), d(5000.0, now_ok=False), d(9000.0, nid=None),
                         d(0.0, sched=False)]) == 700.0
    assert hold_horizon([d(400.0, now_ok=False)]) == 0.0
    assert hold_horizon([]) == 0.0


def test_a_calibrated_view_built_alone_is_the_pairs() -> None:
    from diamond_jupyter.calibration import RunSample, SiteCalibration

    st, queue = _site(3, 6, 20)
    st.owners = [(3600.0, 600.0, "batch", 8) for _ in st.releases]
    cal = SiteCalibration(RunSample("batch", 1 + k % 8, 3600.0, 3600.0 * (0.1 + k % 9 / 10),
                                    k) for k in range(60))
    pair = calibrated_views(st, queue, cal)
    assert pair is not None
    for got, want in ((calibrated_view(st, queue, cal), pair[0]),
                      (calibrated_view(st, queue, cal, bound=True), pair[1])):
        assert got is not None
        assert got[0] == want[0]
        assert [(d.duration, d.not_before, d.limit) for d in got[1]] == \
            [(d.duration, d.not_before, d.limit) for d in want[1]]
    assert [r[0] for r in pair[1][0].releases] != [r[0] for r in pair[0][0].releases]
    assert calibrated_view(st, queue, None) is None
    assert calibrated_view(st, queue, None, bound=True) is None


def _steps_from_scratch(sim, t: float, n: int) -> tuple[list[float], list[int], list[int]]:
    """Node n's free CPUs and GPUs from t with the releases still to come at their planned
    ends, worked out from the sim's whole release list (what a plan keeps per node)."""
    ev = sorted((max(sim.plan.get(seq, end), t), c, g)
                for end, seq, m, c, g in sim.rel[sim.rp:] if m == n)
    times, fc, fg = [t], [sim.free_c[n]], [sim.free_g[n]]
    for when, c, g in ev:
        c2, g2 = min(sim.cap_c[n], fc[-1] + c), min(sim.cap_g[n], fg[-1] + g)
        if when == times[-1]:
            fc[-1], fg[-1] = c2, g2
        else:
            times += [when]
            fc += [c2]
            fg += [g2]
    return times, fc, fg


def test_a_plan_kept_between_events_is_made_anew_where_the_site_changed() -> None:
    from diamond_jupyter.placement_sim import _Plan, _Sim

    st, queue = _site(11, 12, 30)
    st.planned = {r[1]: r[0] + 600.0 for r in st.releases}  # walltimes past the ends
    sim = _Sim(st)
    every = frozenset(range(12))
    first = _Plan(sim, 0.0, every)
    assert {n: first.times[n] for n in every} == \
        {n: _steps_from_scratch(sim, 0.0, n)[0] for n in every}
    # jobs start (their walltimes planned) and running jobs end: the nodes they touch
    # change, the others keep their steps up to the new time
    started = 0
    for d in queue:
        hosts = sim.candidates(d)
        if hosts is not None:
            sim.alloc(d, hosts[: d.nodes], 0.0)
            started += 1
    assert started > 0
    for t in sorted({r[0] for r in st.releases})[:6]:
        sim.release_until(t)
        plan = _Plan(sim, t, every)
        for n in every:
            assert (plan.times[n], plan.fc[n], plan.fg[n]) == _steps_from_scratch(sim, t, n)
        # a reservation changes the plan's own copy, never what the next plan starts from
        d = Demand(1, 8, 0, 900.0, list(range(12)))
        if plan.reserve(d) is not None:
            again = _Plan(sim, t, every)
            for n in every:
                assert (again.times[n], again.fc[n], again.fg[n]) == \
                    _steps_from_scratch(sim, t, n)
