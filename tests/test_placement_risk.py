"""Ranking with the start's risk: equal finishes go to the surer start, an idle site with
nothing queued is certain, and Grid Engine jobs' walltimes come from `qstat -r`."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from test_placement import NOW, H, alpha, busy_alpha, pending, running, spec, verdict
from test_wait_calibration import waits

from diamond_jupyter.calibration import RunSample, SiteCalibration
from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.model import Node, Partition, SiteSnapshot
from diamond_jupyter.placement import place
from diamond_jupyter.placement_sim import OVERDUE_S

SGE_OUT = Path(__file__).parent / "fixtures" / "outputs" / "sge"


def _idle(name: str, speed: float = 1.0, charge: float = 1.0):
    nodes = [Node(name=f"{name}1", state="idle", cpus=32, memory_mb=64000,
                  partitions=["compute"])]
    return (SiteConfig(name=name, speed_factor=speed, charge_factor=charge),
            SiteSnapshot(site=name, taken_at=NOW, nodes=nodes,
                         partitions=[Partition(name="compute", default=True)]))


def test_an_idle_site_with_nothing_queued_is_certain():
    v = verdict(place(spec(), [_idle("delta")], now=NOW), "delta")
    assert v.estimated_start == NOW and v.start_bound == NOW


def _alpha_against_a_sure_start(ratios: list[float], other_start_h: float, charge=1.0):
    """alpha: the scheduler says 2 h, its estimates turned out as `ratios` of that; `other`
    starts at `other_start_h` by its scheduler (no calibration: its start is its bound)."""
    cfg, snap = busy_alpha(left_s=3 * H)
    est = {"alpha": NOW + timedelta(hours=2), "other": NOW + timedelta(hours=other_start_h)}
    cal = SiteCalibration([], wait=waits(ratios))
    return place(spec(), [(cfg, snap), _idle("other", charge=charge)], now=NOW,
                 estimates=est, calibration={"alpha": cal})


WIDE = [0.1, 0.2, 0.5, 1.0, 3.0] * 10  # median 0.5 of the 2 h estimate, bound 6 h


def test_within_noise_the_surer_start_wins_even_at_a_higher_cost():
    """alpha's median start is 1 h, the other site's 1 h 3 min: equal finishes within noise
    (5% of two hours). alpha's 90% bound is 6 h: the surer start wins, though it costs more."""
    p = _alpha_against_a_sure_start(WIDE, 1.05, charge=3.0)
    a, o = verdict(p, "alpha"), verdict(p, "other")
    assert a.estimated_finish < o.estimated_finish and a.cost < o.cost
    assert p.choice == "other", p.explain()
    assert "less sure start" in p.why_not("alpha"), p.why_not("alpha")


def test_beyond_noise_the_earlier_median_wins_whatever_its_bound():
    """The bound does not weigh on the finish: 15 min sooner by the median wins."""
    p = _alpha_against_a_sure_start(WIDE, 1.25)
    assert p.choice == "alpha", p.explain()
    assert p.why_not("other").startswith("finishes 0:15:00 later"), p.why_not("other")


def test_a_faster_start_wins_over_a_cheaper_site_beyond_a_few_seconds():
    """A one-minute job: the cheap site starts 40 s later. No longer a tie (the noise is
    10 s or 5% of the time to the finish), so the sooner finish wins."""
    job = spec().model_copy(update={"resources": spec().resources.model_copy(
        update={"walltime_s": 60})})
    dear, cheap = _idle("dear", charge=3.0), _idle("cheap", charge=0.5)
    p = place(job, [dear, cheap], now=NOW, estimates={"cheap": NOW + timedelta(seconds=40)})
    assert p.choice == "dear", p.explain()


def _qstat_r() -> str:
    """The recorded `qstat -f -xml -u '*'` with the hard h_rt requests `-r` adds."""
    text = (SGE_OUT / "qstat_f_xml.xml").read_text()
    return text.replace("<slots>4</slots>", '<slots>4</slots>\n        <hard_request '
                        'name="h_rt" resource_contribution="0.000000">120</hard_request>')


def test_a_recorded_qstat_r_gives_the_running_jobs_walltime():
    snap = SgeCommands().parse_snapshot("delta", {
        "queue": (SGE_OUT / "qstat_f_xml_r.xml").read_text()})
    [job] = snap.running
    assert (job.walltime_s, job.cpus, job.node_list) == (60, 8, "dn1")


def test_grid_engine_jobs_carry_their_h_rt_into_the_simulation():
    sge = SgeCommands()
    assert "-r" in sge.snapshot_argvs()["queue"]
    snap = sge.parse_snapshot("delta", {"hosts": (SGE_OUT / "qhost_xml.xml").read_text(),
                                        "queues": (SGE_OUT / "qconf_sq_all.txt").read_text(),
                                        "queue": _qstat_r()})
    smp = next(j for j in snap.running if j.name == "smp")
    assert smp.walltime_s == 120
    assert all(j.walltime_s is None for j in snap.jobs if j.name != "smp")


@pytest.mark.parametrize("value, seconds", [("120", 120), ("0:02:00", 120), ("INFINITY", None)])
def test_h_rt_in_either_spelling(value, seconds):
    text = _qstat_r().replace(">120</hard_request>", f">{value}</hard_request>")
    snap = SgeCommands().parse_snapshot("delta", {"queue": text})
    assert next(j for j in snap.jobs if j.name == "smp").walltime_s == seconds



def test_a_grid_engine_job_waits_only_for_the_running_jobs_h_rt():
    """A snapshot of delta taken together: dn1 runs a 1-slot job with h_rt 3 s. A job needing
    both nodes whole starts when that one ends (within its h_rt), not after a
    default hour."""
    snap = SgeCommands().parse_snapshot("delta", {
        "hosts": (SGE_OUT / "delta_qhost_xml.xml").read_text(),
        "queues": (SGE_OUT / "delta_qconf_sq.txt").read_text(),
        "queue": (SGE_OUT / "delta_qstat_f_xml_r.xml").read_text()})
    [job] = snap.running
    assert job.walltime_s == 3
    now = job.started_at + timedelta(seconds=1)
    p = place(spec(nodes=2, cpus=8, walltime=600),
              [(SiteConfig(name="delta", scheduler="sge"), snap)], now=now)
    v = verdict(p, "delta")
    assert v.feasible, v.reasons
    assert timedelta(0) < v.estimated_start - now <= timedelta(seconds=2), \
        p.explain()


def test_what_the_schedulers_walltime_plan_backfills_now_starts_now():
    """Three of alpha's nodes run jobs that just started with 4 h of walltime; a job needing
    all four nodes waits for them. By walltimes (the scheduler's plan) a one-hour job
    backfills on the free node now. Its jobs run a tenth of their request, so by the
    calibrated ends the big job could start in 24 min and the probe would wait behind it;
    but the scheduler decides by its plan, and the job starts now (seen on the test bed:
    real-log seed 16, beta, 10 of 10 rounds)."""
    jobs = [running(f"r{i}", f"a{i}", 32, left_s=4 * H) for i in (1, 2, 3)]
    jobs.append(pending("big", 4, 128, 2 * H, part="compute"))
    cfg, snap = alpha(jobs, alloc=(32, 32, 32, 0))
    runs = [RunSample("compute", 32, 4 * H, 0.1 * 4 * H, float(i)) for i in range(40)]
    p = place(spec(), [(cfg, snap)], now=NOW, calibration={"alpha": SiteCalibration(runs)})
    v = verdict(p, "alpha")
    assert v.raw_start == NOW, p.explain()
    assert v.start_source == "calibrated" and v.estimated_start == NOW, p.explain()


# -- running jobs: the runtime distribution conditioned on the time already survived --

BIMODAL = [0.01] * 35 + [0.5] * 15 + [1.0] * 10  # many end at once, some run long


def mixed(ratios: list[float]) -> list[float]:
    """The ratios in an order with no trend: a class's jobs of every length end
    interleaved (sorted, they would read as a change of workload and be trimmed)."""
    return [ratios[i] for i in sorted(range(len(ratios)), key=lambda i: (i * 0.618034) % 1)]


def test_a_survivor_is_expected_to_end_with_the_jobs_that_ran_as_long():
    """Half the class ends at once (median 0.01 of the walltime). A job that has already
    run a quarter of its walltime is not one of those: it ends with the jobs that ran at
    least that long (median of those: 0.5), and the bound is theirs too."""
    r = SiteCalibration([RunSample("compute", 32, 4 * H, x * 4 * H, float(i))
                         for i, x in enumerate(mixed(BIMODAL))]).ratio("compute", 32)
    assert r is not None and r.median == 0.01
    assert r.end_share(0.0, "median") == r.median  # nothing survived yet: the class itself
    assert r.end_share(0.25, "median") == 0.5
    assert r.end_share(0.25, "upper") == 1.0  # 25 survivors: the 90% bound is the walltime
    assert r.end_share(0.75, "median") == 1.0
    # beyond every sample: an outlier, halfway to its walltime by the median
    r = SiteCalibration([RunSample("compute", 32, 4 * H, x * 4 * H, float(i))
                         for i, x in enumerate([0.1] * 20)]).ratio("compute", 32)
    assert r is not None
    assert r.end_share(0.5, "median") == 0.75 and r.end_share(0.5, "upper") == 1.0
    # just past the longest of its class: ending now (or ended, and the view lags)
    assert r.end_share(0.11, "median") == 0.11 and r.end_share(0.11, "upper") == 1.0


def _alpha_full_for(elapsed_s: float, walltime_s: float, ratios: list[float]):
    """alpha's four nodes each run one whole-node job that has run `elapsed_s` of
    `walltime_s`; its finished jobs ran `ratios` of their requests."""
    jobs = [running(f"r{i}", f"a{i}", 32, left_s=walltime_s - elapsed_s,
                    walltime_s=walltime_s, part="compute") for i in range(1, 5)]
    cfg, snap = alpha(jobs, alloc=(32, 32, 32, 32))
    runs = [RunSample("compute", 32, walltime_s, x * walltime_s, float(i))
            for i, x in enumerate(mixed(ratios))]
    return place(spec(), [(cfg, snap)], now=NOW,
                 calibration={"alpha": SiteCalibration(runs)})


def test_a_running_job_past_its_class_median_is_not_assumed_to_end_in_a_minute():
    """The class median is 0.01 of 4 h (2.4 min); the running jobs have run 1 h. The jobs
    of the class that ran an hour or more ended at half their walltime: 2 h, so alpha
    frees a node in about an hour, not in the minute a fixed floor once gave."""
    p = _alpha_full_for(1 * H, 4 * H, BIMODAL)
    v = verdict(p, "alpha")
    assert v.start_source == "calibrated"
    assert v.estimated_start == NOW + timedelta(hours=1), p.explain()
    assert v.start_bound == NOW + timedelta(hours=3), p.explain()  # to the walltime


def test_a_running_job_ends_by_its_walltime_even_within_the_last_minute():
    """20 s of walltime left: the node is free in 20 s, not after a minute's floor."""
    p = _alpha_full_for(4 * H - 20, 4 * H, BIMODAL)
    v = verdict(p, "alpha")
    assert v.raw_start == NOW + timedelta(seconds=20), p.explain()
    assert v.estimated_start == NOW + timedelta(seconds=20), p.explain()


def test_a_job_past_its_walltime_is_being_killed():
    """Past its walltime (the view caught it before the scheduler's kill): it ends within
    OVERDUE_S, by walltimes and calibrated alike."""
    p = _alpha_full_for(4 * H + 5, 4 * H, BIMODAL)
    v = verdict(p, "alpha")
    assert v.raw_start == NOW + timedelta(seconds=OVERDUE_S), p.explain()
    assert v.estimated_start == NOW + timedelta(seconds=OVERDUE_S), p.explain()


def test_a_deep_queue_of_mostly_instant_jobs_still_holds_its_sum_of_work():
    """Seven in ten jobs of the class end at once (median ratio 0.01), three run their whole
    hour (mean 0.307). Forty one-node jobs wait for alpha's four idle nodes; a job needing all
    four waits behind them. By the median the queue is gone in minutes; the work ahead is
    its sum, about 40 x 0.307 h over 4 nodes: the start is hours away (seen on the test bed:
    depth_misleads seed 24, a queue of 66-97 predicted to let a probe start in 2 s, which
    started after 55-93 s)."""
    jobs = [pending(f"w{i}", 1, 32, H, part="compute", reason="Priority") for i in range(40)]
    cfg, snap = alpha(jobs)
    runs = [RunSample("compute", 32, H, (0.01 if i % 10 < 7 else 1.0) * H, float(i))
            for i in range(100)]
    p = place(spec(nodes=4, cpus=32), [(cfg, snap)], now=NOW,
              calibration={"alpha": SiteCalibration(runs)})
    v = verdict(p, "alpha")
    assert v.start_source == "calibrated"
    assert NOW + timedelta(hours=2) < v.estimated_start <= v.start_bound, p.explain()


# -- Slurm's backfill delays no job ahead: its plan reserves for every one of them --

def _short_queue_site(estimates: bool = False, wait_ratio: float | None = None):
    """alpha: three nodes full and one with 8 CPUs free, each running job 10 s into a 60 s
    request; six whole-node jobs (60 s requested) wait for priority (with Slurm's start
    estimates from walltimes if `estimates`). Finished jobs of the class ran 12-30 s of
    their minute; queued jobs started after `wait_ratio` of their estimated wait."""
    jobs = [running("r1", "a1", 24, left_s=50, walltime_s=60)]
    jobs += [running(f"r{i}", f"a{i}", 32, left_s=50, walltime_s=60) for i in (2, 3, 4)]
    jobs += [pending(f"w{i}", 1, 32, 60, part="compute", reason="Priority",
                     est=NOW + timedelta(seconds=50 + 60 * (i // 4)) if estimates else None)
             for i in range(6)]
    cfg, snap = alpha(jobs, alloc=(24, 32, 32, 32))
    runs = [RunSample("compute", 32, 60, 12 + 18 * i / 39, float(i)) for i in range(40)]
    w = waits([wait_ratio] * 40, est_s=100.0, cpus=8) if wait_ratio is not None else []
    return cfg, snap, {"alpha": SiteCalibration(runs, wait=w)}


def test_a_slurm_probe_waits_behind_every_job_the_plan_reserves_for():
    """The probe fits in a1's 8 free CPUs now and, by the runtimes, would end before the
    first waiting job could use them. But Slurm plans with walltimes and reserves a node
    for each of the six jobs ahead (four at the running jobs' walltime ends, 50 s from
    now): a one-minute probe on a1 would delay the first. It starts once the jobs ahead
    have started, about two runtimes from now (seen on the test bed: depth_misleads seeds
    26 and 27, beta behind 20-60 short jobs predicted to start a probe in 1 s; it started
    after 13-55 s)."""
    cfg, snap, cal = _short_queue_site()
    p = place(spec(cpus=8, walltime=60), [(cfg, snap)], now=NOW, calibration=cal)
    v = verdict(p, "alpha")
    assert v.start_source == "calibrated"
    assert NOW + timedelta(seconds=20) <= v.estimated_start <= v.start_bound, p.explain()


def test_where_the_plan_leaves_room_the_probe_backfills_now():
    """The same site and queue: a probe asking 8 CPUs for 40 s ends on a1 before the
    plan's first reservation there (the running jobs' walltime ends, 50 s from now), so
    it delays no one and Slurm backfills it now."""
    cfg, snap, cal = _short_queue_site()
    p = place(spec(cpus=8, walltime=40), [(cfg, snap)], now=NOW, calibration=cal)
    v = verdict(p, "alpha")
    assert v.estimated_start == NOW and v.raw_start == NOW, p.explain()


def test_a_job_just_past_the_longest_of_its_class_frees_its_node_now():
    """Grid Engine lists a finished job for a moment after its end. alpha's four nodes each
    run a job that has run 23 s; every job of the class ran 22 s. The probe starts about
    now, not halfway to the walltime (seen on the test bed: depth_misleads seed 26, delta
    predicted 9-10 s while the previous round's probe was finishing; it started in 1 s)."""
    p = _alpha_full_for(23, 60, [22 / 60] * 20)
    v = verdict(p, "alpha")
    assert v.start_source == "calibrated"
    assert v.estimated_start <= NOW + timedelta(seconds=1), p.explain()


def test_the_queues_estimate_ratio_does_not_scale_a_calibrated_simulation():
    """Slurm's estimates for the queued jobs came true after 3% of their wait (jobs end far
    earlier than requested). The calibrated simulation already plays that out; scaling
    its start by the ratio again predicted a start in 1-2 s on the test bed, where probes
    started after 15-86 s (depth_misleads seeds 28-30, beta)."""
    cfg, snap, cal = _short_queue_site(estimates=True, wait_ratio=0.03)
    p = place(spec(cpus=8, walltime=60), [(cfg, snap)], now=NOW, calibration=cal)
    v = verdict(p, "alpha")
    assert v.wait_ratio == pytest.approx(0.03)  # shown
    assert NOW + timedelta(seconds=20) <= v.estimated_start <= v.start_bound, p.explain()


def test_two_certain_starts_are_ranked_by_their_runtimes_alone():
    """Two idle sites, nothing queued: both start now for certain. The dear one runs the
    one-minute job in 40 s, the cheap one in 48 s. 8 s apart is no noise when neither
    start is in doubt: the sooner finish wins (seen on the test bed: real-log seed 21,
    diamond took the cheaper beta over gamma, idle too, and lost 3.4 s in 10 of 10
    rounds). With an uncertain start the same gap would be a tie (the previous tests)."""
    dear = _idle("dear", speed=1.5, charge=3.0)
    cheap = _idle("cheap", speed=1.25, charge=0.5)
    p = place(spec(walltime=60), [dear, cheap], now=NOW)
    d, c = verdict(p, "dear"), verdict(p, "cheap")
    assert d.start_bound == NOW == c.start_bound, p.explain()
    assert d.estimated_finish + timedelta(seconds=5) < c.estimated_finish, p.explain()
    assert p.choice == "dear", p.explain()



def test_a_job_the_engine_heard_end_frees_its_node_now():
    """alpha's four nodes each run a whole-node job with half an hour left; the engine has
    heard a1's job end (its own job: the wrapper's end line comes before the scheduler's
    view drops it). That node is free now, by the median and by the bound."""
    jobs = [running(f"r{i}", f"a{i}", 32, left_s=1800, walltime_s=3600) for i in (1, 2, 3, 4)]
    cfg, snap = alpha(jobs, alloc=(32, 32, 32, 32))
    runs = [RunSample(None, 32, 3600, 3000, float(i)) for i in range(40)]
    cal = {"alpha": SiteCalibration(runs)}
    busy = verdict(place(spec(cpus=32), [(cfg, snap)], now=NOW, calibration=cal), "alpha")
    assert busy.estimated_start > NOW + timedelta(minutes=10)
    p = place(spec(cpus=32), [(cfg, snap)], now=NOW, calibration=cal, ended={"alpha": {"r1"}})
    v = verdict(p, "alpha")
    assert v.estimated_start == NOW and v.start_bound == NOW and v.raw_start == NOW, \
        p.explain()


@pytest.mark.parametrize("scheduler, waits", [("sge", False), ("pbs", True), ("slurm", True)])
def test_grid_engine_reserves_nothing_so_a_small_job_passes_a_blocked_big_one(scheduler, waits):
    """Every node half busy for 4 h; a job needing all four nodes whole waits. Grid Engine
    (max_reservation 0 unless set) starts whatever fits, so a 6 h 8-core job starts now
    (seen on the test bed: delta, 24-36 jobs pending, probes started in 2-12 s while the
    EASY simulation put them 20-40 min away). EASY (PBS) and Slurm's plan keep the room
    for the big job: the small one, still running when it could start, waits for it."""
    jobs = [running(f"r{i}", f"a{i}", 16, left_s=4 * H - 60) for i in (1, 2, 3, 4)]
    jobs.append(pending("big", 4, 128, H))
    cfg, snap = alpha(jobs, alloc=(16, 16, 16, 16), scheduler=scheduler)
    p = place(spec(nodes=1, cpus=8, walltime=6 * H), [(cfg, snap)], now=NOW)
    start = (verdict(p, "alpha").estimated_start - NOW).total_seconds()
    assert (start >= 4 * H - 60) if waits else start == 0, p.explain()


def test_each_scheduler_simulates_its_own_reservation_and_a_wrong_mode_is_refused():
    """One mode per scheduler family: Slurm's plan, Grid Engine none, EASY for the rest;
    a mode outside these is an error naming the ones accepted, not a silent EASY."""
    from diamond_jupyter.placement_sim import SimState, earliest_start, reservation_for

    assert [reservation_for(s) for s in ("slurm", "sge", "pbs", "lsf", "flux")] == [
        "plan", "none", "easy", "easy", "easy"]
    with pytest.raises(ValueError, match="accepted: plan, easy, none"):
        earliest_start(SimState.__new__(SimState), [], None, reservation="all")  # type: ignore[arg-type]


def test_a_grid_engine_site_with_reservations_on_is_simulated_easy():
    """`qconf -ssconf` says whether Grid Engine protects waiting jobs: the recorded default
    (`max_reservation 0`) reserves nothing; a site that turned reservations on keeps room
    for the blocked big job (taken as EASY, the view not saying which jobs asked `-R y`),
    and a site whose configuration cannot be read is simulated by its type."""
    from diamond_jupyter.dialects.sge_commands import backfill_policy

    recorded = (SGE_OUT / "qconf_ssconf.txt").read_text()
    assert "sconf" in SgeCommands().snapshot_argvs()
    assert backfill_policy(recorded) == "none"
    on = recorded.replace("max_reservation                   0",
                          "max_reservation                   32")
    assert backfill_policy(on) == "easy" and backfill_policy("") is None
    assert SgeCommands().parse_snapshot("delta", {"sconf": on}).backfill == "easy"
    jobs = [running(f"r{i}", f"a{i}", 16, left_s=4 * H - 60) for i in (1, 2, 3, 4)]
    jobs.append(pending("big", 4, 128, H))
    for backfill, held in ((None, False), ("none", False), ("easy", True)):
        cfg, snap = alpha(jobs, alloc=(16, 16, 16, 16), scheduler="sge")
        snap = snap.model_copy(update={"backfill": backfill})
        p = place(spec(nodes=1, cpus=8, walltime=6 * H), [(cfg, snap)], now=NOW)
        start = (verdict(p, "alpha").estimated_start - NOW).total_seconds()
        assert (start >= 4 * H - 60) if held else start == 0, (backfill, p.explain())


def test_grid_engine_puts_a_job_asking_more_slots_ahead_of_smaller_ones():
    """Grid Engine's default urgency (1000 per slot) orders waiting jobs by slots before
    waiting time (seen with `qstat -urg` on the test bed: 16-slot jobs, then 8-slot ones,
    then 4, 2, 1). A 32-slot job behind forty 1-slot jobs takes the first node that frees;
    were it last, the small jobs would take that node and the next one's first slots, and
    it would wait for a third."""
    from diamond_jupyter.dialects.sge_commands import queue_order
    from diamond_jupyter.placement_sim import WHOLE, Demand, slots_position

    recorded = (SGE_OUT / "qconf_ssconf.txt").read_text()
    assert queue_order(recorded) == "slots" and queue_order("") is None
    assert queue_order(recorded.replace("weight_urgency                    0.500000",
                                        "weight_urgency                    0.000000")) == "submit"
    queue = [Demand(1, c, 0, 60.0, [0], job_cpus=c) for c in (16, 8, 4, 8, 1)]
    assert [slots_position(queue, s) for s in (16, 8, 4, 2, 64)] == [1, 4, 4, 4, 0]
    # A job taking whole nodes (its CPUs unknown) asks all of its nodes' slots, not one
    # per node: two 32-CPU nodes outrank a 16-slot job.
    whole = [Demand(2, WHOLE, 0, 60.0, [0, 1]), Demand(1, 4, 0, 60.0, [0], job_cpus=4)]
    assert slots_position(whole, 16, [32, 32]) == 1
    assert slots_position(whole, 65, [32, 32]) == 0

    jobs = [running(f"r{i}", f"a{i}", 32, left_s=600 * i) for i in (1, 2, 3, 4)]
    jobs += [pending(f"p{i}", 1, 1, H) for i in range(40)]
    for order, start_s in (("slots", 600), (None, 600), ("submit", 1800)):
        cfg, snap = alpha(jobs, alloc=(32, 32, 32, 32), scheduler="sge")
        snap = snap.model_copy(update={"queue_order": order})
        p = place(spec(nodes=1, cpus=32, walltime=H), [(cfg, snap)], now=NOW)
        got = (verdict(p, "alpha").estimated_start - NOW).total_seconds()
        assert got == start_s, (order, p.explain())


def _gpu_queue_site():
    """gamma's four GPUs each run an 8-CPU job (walltime 2 min, 60 s left) and three more
    such jobs wait for a GPU; 32 of each node's 48 CPUs are idle."""
    from test_placement import gamma

    jobs = [running(f"r{i}", f"g{1 + i // 2}", 8, left_s=60, walltime_s=120, gpus=1,
                    part="short") for i in range(4)]
    jobs += [pending(f"w{i}", 1, 8, 120, part="short", reason="Resources" if i == 0
                     else "Priority", gpus=1) for i in range(3)]
    return gamma(jobs, galloc=(2, 2), alloc=(16, 16))


def test_a_cpu_job_behind_gpu_jobs_waits_for_them_even_where_cpus_are_idle():
    """Slurm's backfill keeps a waiting job's reserved nodes whole for its slot: a 1-CPU job
    asking 10 minutes reaches into the GPU jobs' reservations on both nodes, so it starts
    only once they have started, however many CPUs are idle (the test bed's gamma on
    2026-12-03: a workflow's analyse step was predicted to start at once behind seven GPU
    jobs and was backfilled 31 s later, right after the last of them)."""
    cfg, snap = _gpu_queue_site()
    p = place(spec(cpus=1, walltime=600), [(cfg, snap)], now=NOW)
    v = verdict(p, "gamma")
    assert v.raw_start >= NOW + timedelta(seconds=60), p.explain()


def test_a_cpu_job_that_ends_before_the_reservations_backfills_now():
    """The same queue: a 1-CPU job asking 30 s ends before the first reserved slot (60 s
    away, when a GPU job's walltime ends), so it delays no one and starts now."""
    cfg, snap = _gpu_queue_site()
    p = place(spec(cpus=1, walltime=30), [(cfg, snap)], now=NOW)
    assert verdict(p, "gamma").raw_start == NOW, p.explain()
