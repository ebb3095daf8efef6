"""Grid Engine's play-out (no reservation) when the plan ends several jobs at one moment.

Two hosts of 8 slots. A job wider than a host (16 slots over both, Grid Engine's highest
urgency) starts only when both hosts are free at one scheduling pass; while narrower jobs
wait, each host freed goes to one of them and the wide job starves (seed 117's delta on the
test bed: four 16-slot jobs waited until the 8-slot stream stopped). A plan ends every job
expected to end now at the same MIN_LEFT_S, which the cluster seldom does."""

from __future__ import annotations

from diamond_jupyter.placement_sim import (
    MIN_LEFT_S,
    Demand,
    SimState,
    earliest_start,
    queue_starts,
    slots_position,
)


def two_hosts(releases: list[tuple[float, int, int, int, int]], job_ids: dict[int, str]
              ) -> SimState:
    """Two busy 8-slot hosts; `releases`: (end s, seq, host, slots, gpus) of running jobs."""
    return SimState(["h1", "h2"], [8, 8], [0, 0], [0, 0], [0, 0], sorted(releases),
                    [None] * len(releases), None, job_ids)


def job(name: str, nodes: int, duration: float) -> Demand:
    return Demand(nodes=nodes, cpus=8, gpus=0, duration=duration, eligible=[0, 1],
                  job_cpus=8 * nodes, native_id=name)


def probe_start(st: SimState, queue: list[Demand]) -> float | None:
    probe = Demand(nodes=1, cpus=8, gpus=0, duration=60.0, eligible=[0, 1], job_cpus=8)
    at = slots_position(queue, 8, st.cap_c)
    return earliest_start(st, queue, probe, reservation="none", probe_at=at)


def test_two_jobs_planned_to_end_now_free_their_hosts_one_at_a_time():
    """r1 on h1 and r2 on h2, each planned to end now (MIN_LEFT_S). Waiting: a 16-slot job
    of 100 s, then an 8-slot one (its urgency is higher than the probe's, which comes last).
    r1's host comes back first: the wide job does not fit, the 8-slot job takes it; then
    r2's: the wide job still does not fit, the probe takes it at MIN_LEFT_S. Freed at once,
    the wide job would take both and the probe wait for it: 1 + 100 s."""
    st = two_hosts([(MIN_LEFT_S, 0, 0, 8, 0), (MIN_LEFT_S, 1, 1, 8, 0)], {0: "r1", 1: "r2"})
    assert probe_start(st, [job("wide", 2, 100.0), job("small", 1, 30.0)]) == MIN_LEFT_S


def test_one_job_over_both_hosts_gives_them_back_together():
    """A running 16-slot job ends at 5 s on both hosts: one job, both hosts back at once,
    so the next 16-slot job (50 s) takes them; the 8-slot job and the probe then start at
    55 s, one on each host."""
    st = two_hosts([(5.0, 0, 0, 8, 0), (5.0, 1, 1, 8, 0)], {0: "w", 1: "w"})
    queue = [job("wide", 2, 50.0), job("small", 1, 30.0)]
    assert probe_start(st, queue) == 55.0
    assert queue_starts(st, queue, reservation="none") == {"wide": 5.0, "small": 55.0}


def test_jobs_the_plan_starts_together_end_one_at_a_time():
    """h2 is free, h1 busy until 2 s. Waiting: a 16-slot job of 40 s, then 8-slot jobs a
    (22 s) and b (20 s). The wide job cannot start while either host is busy: a takes h2
    at once, b takes h1 at 2 s, and both end at 22 s in the plan. a's host comes back first
    (started first), the wide job does not fit, the probe takes it at 22 s; freed at once,
    the wide job would go first and the probe wait to 22 + 40 s."""
    st = SimState(["h1", "h2"], [8, 8], [0, 0], [0, 8], [0, 0], [(2.0, 0, 0, 8, 0)],
                  [None], None, {0: "r"})
    queue = [job("wide", 2, 40.0), job("a", 1, 22.0), job("b", 1, 20.0)]
    assert probe_start(st, queue) == 22.0
