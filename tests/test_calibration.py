"""Calibrated start predictions: ratios from finished jobs, quantile bounds, placement."""

from __future__ import annotations

import asyncio
import math
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_placement import NOW, H, alpha, busy_alpha, gamma, pending, running, spec, verdict

from diamond_jupyter.calibration import (
    CLOCK_SLACK_S,
    RunSample,
    SiteCalibration,
    describe_start,
    quantile_upper_index,
    run_sample,
    size_class,
    started_within,
    with_survivors,
)
from diamond_jupyter.model import JobState, JobStatus
from diamond_jupyter.placement import place


def brute_index(n: int, q: float = 0.9, c: float = 0.95) -> int | None:
    for k in range(n):
        if sum(math.comb(n, i) * q**i * (1 - q) ** (n - i) for i in range(k + 1)) >= c:
            return k
    return None


@pytest.mark.parametrize("n", [1, 5, 28, 29, 30, 50, 100, 400])
def test_quantile_bound_index_is_the_binomial_order_statistic(n: int) -> None:
    assert quantile_upper_index(n) == brute_index(n)
    # with fewer than 29 samples no sample bounds the 90% quantile with 95% confidence
    assert (quantile_upper_index(n) is None) == (n < 29)


def test_size_classes() -> None:
    assert [size_class(c) for c in (None, 1, 2, 4, 5, 16, 17, 64, 65, 4096)] == \
        ["1", "1", "2-4", "2-4", "5-16", "5-16", "17-64", "17-64", "65+", "65+"]


def samples(part: str, cpus: int, ratios: list[float]) -> list[RunSample]:
    return [RunSample(part, cpus, 3600.0, r * 3600.0, float(i)) for i, r in enumerate(ratios)]


def test_finest_class_with_enough_samples_else_coarser() -> None:
    cal = SiteCalibration(samples("batch", 1, [0.1] * 6) + samples("batch", 8, [0.5] * 3)
                          + samples("debug", 1, [0.9] * 2))
    assert cal.ratio("batch", 1).key == "batch/1" and cal.ratio("batch", 1).median == 0.1
    # 3 samples of 8-CPU jobs are too few: the partition's, then the site's
    assert cal.ratio("batch", 8).key == "batch/*" and cal.ratio("batch", 8).samples == 9
    assert cal.ratio("debug", 1).key == "*" and cal.ratio("debug", 1).samples == 11
    assert cal.samples == 11
    assert SiteCalibration([]).ratio("batch", 1) is None


def test_upper_bound_needs_enough_samples_and_never_passes_the_walltime() -> None:
    few = SiteCalibration(samples("p", 1, [0.2] * 10))
    assert few.ratio("p", 1).upper == 1.0  # too few for the quantile: the walltime
    many = [0.05 * (i % 20 + 1) for i in range(100)]  # 0.05 .. 1.0 evenly
    r = SiteCalibration(samples("p", 1, many)).ratio("p", 1)
    assert r.median == pytest.approx(0.525)
    assert 0.9 <= r.upper <= 1.0  # at least the 90th percentile, with confidence
    # runtimes over the request count as the request (the scheduler kills them there)
    assert RunSample("p", 1, 100.0, 250.0).ratio == 1.0


def test_accounting_rows_become_samples_only_when_they_ran() -> None:
    ran = JobStatus(native_id="1", state=JobState.COMPLETED, partition="p", cpus=4,
                    walltime_s=600, started_at=NOW, ended_at=NOW + timedelta(seconds=60))
    never = ran.model_copy(update={"cpus": 0, "nodes": 0})
    unknown = ran.model_copy(update={"walltime_s": None})
    assert run_sample(ran).ratio == pytest.approx(0.1)
    assert run_sample(never) is None and run_sample(unknown) is None


def test_a_job_far_shorter_than_its_request_keeps_its_ratio() -> None:
    """A day asked and a minute used is 1/1440 of the request, not a floor at 1%: at real
    centers 8-62% of jobs use less than 1% of what they ask. Only a job that ended at once
    counts as holding its nodes for a moment (MIN_HOLD_S)."""
    from diamond_jupyter.calibration import MIN_HOLD_S, RunSample

    assert RunSample("p", 1, 86400.0, 60.0).ratio == pytest.approx(60 / 86400)
    assert RunSample("p", 1, 86400.0, 0.0).ratio == pytest.approx(MIN_HOLD_S / 86400)
    assert RunSample("p", 1, 60.0, 600.0).ratio == 1.0


def spread(centre: float, n: int) -> list[float]:
    """n ratios spread evenly (in time order, no trend) over [centre / 2, centre * 3 / 2)."""
    return [centre * (0.5 + (i * 0.618034) % 1.0) for i in range(n)]


def test_a_changed_workload_replaces_the_history_before_it() -> None:
    """A class whose jobs used a fiftieth of their request for hours, then a five-hundredth
    for the last 30 jobs (a new workload, a campaign of short jobs): the ratio follows the
    new jobs, not the hundreds before them."""
    cal = SiteCalibration(samples("p", 1, spread(0.02, 300) + spread(0.002, 30)))
    r = cal.ratio("p", 1)
    assert 25 <= r.samples <= 35
    assert r.mean < 0.003 and r.median < 0.003


def test_without_change_points_a_class_keeps_its_latest_jobs_whole() -> None:
    """The benchmarks' variant (`change_points=False`): the same history as above, its 330
    jobs all kept, so the ratio stays near the hundreds of older jobs'."""
    history = samples("p", 1, spread(0.02, 300) + spread(0.002, 30))
    r = SiteCalibration(history, change_points=False).ratio("p", 1)
    assert r.samples == 330
    assert 0.015 < r.mean < 0.02
    assert SiteCalibration(history).ratio("p", 1).samples < 330  # the engine cuts


def test_a_wider_cut_needs_as_many_jobs_after_the_change() -> None:
    """The benchmarks' `min_regime`: 30 new jobs after 300 are a regime of their own at the
    engine's 10 a side; at 40 a side the cut keeps 40, ten of them the older jobs, so the
    new jobs weigh less."""
    thirty = samples("p", 1, spread(0.02, 300) + spread(0.002, 30))
    engine, wide = SiteCalibration(thirty).ratio("p", 1), SiteCalibration(
        thirty, min_regime=40).ratio("p", 1)
    assert engine.samples < 40 <= wide.samples < 330 and wide.mean > 2 * engine.mean


def test_shrink_mixes_a_class_with_its_partitions_ratios_by_count() -> None:
    """The benchmarks' `shrink`: 10 one-CPU jobs at 0.01 and 90 eight-CPU jobs at 0.5; with
    k = 29 the one-CPU class holds 29 quantiles of the partition's (mostly 0.5): its mean
    moves most of the way there, the large class's barely; the site's is untouched."""
    history = samples("p", 1, [0.01] * 10) + samples("p", 8, [0.5] * 90)
    plain, shrunk = SiteCalibration(history), SiteCalibration(history, shrink=29)
    assert plain.ratio("p", 1).mean == pytest.approx(0.01)
    one = shrunk.ratio("p", 1)
    assert one.samples == 39 and 0.3 < one.mean < 0.4
    assert shrunk.ratio("p", 8).samples == 119 and shrunk.ratio("p", 8).mean > 0.45
    assert shrunk.ratio("q", 1).key == "*" and shrunk.ratio("q", 1) == plain.ratio("q", 1)


def test_jobs_at_the_partition_limit_are_a_class_apart() -> None:
    """The benchmarks' `at_limit`: jobs asking the partition's 30 min (no request of their
    own) ran 0.1 of it, jobs asking 10 min ran 0.9: each kind reads its own ratio, looked
    up by the walltime (the engine mixes them); with too few of one kind, both kinds'."""
    history = [RunSample("short", 1, 1800.0, 180.0, 2.0 * i) for i in range(20)] + \
        [RunSample("short", 1, 600.0, 540.0, 2.0 * i + 1) for i in range(20)]  # interleaved
    cal = SiteCalibration(history, at_limit={"short": 1800.0})
    assert cal.ratio("short", 1, 1800.0).median == pytest.approx(0.1)
    assert cal.ratio("short", 1, 600.0).median == pytest.approx(0.9)
    assert SiteCalibration(history).ratio("short", 1, 1800.0).samples == 40
    few = SiteCalibration(history[:3] + history[20:], at_limit={"short": 1800.0})
    assert few.ratio("short", 1, 1800.0).key == "short/1" and few.ratio(
        "short", 1, 1800.0).samples == 23


def test_a_steady_workload_keeps_its_whole_history() -> None:
    cal = SiteCalibration(samples("p", 1, spread(0.02, 400)))
    assert cal.ratio("p", 1).samples == 400
    # a change among the last few jobs is too few to tell from chance: kept whole too
    few = SiteCalibration(samples("p", 1, spread(0.02, 300) + spread(0.002, 5)))
    assert few.ratio("p", 1).samples == 305


@given(st.lists(st.floats(1e-6, 1.0), min_size=0, max_size=120))
@settings(max_examples=150, deadline=None)
def test_a_trimmed_history_keeps_enough_and_depends_only_on_order(x: list[float]) -> None:
    from diamond_jupyter.calibration import MIN_REGIME, regime_start

    start = regime_start(x)
    assert start == 0 or len(x) - start >= MIN_REGIME
    # ranks only: the ratios replaced by their ranks find the same change
    levels = sorted(set(x))
    assert regime_start([float(levels.index(v)) for v in x]) == start


def overrequested_alpha():
    """alpha's four nodes are busy with jobs that asked for 4 h and have run 20 min; two
    more wait behind them. Jobs there use a tenth of what they ask for."""
    site_cfg, snap = busy_alpha(left_s=4 * H - 20 * 60)
    snap.jobs += [pending("w1", 4, 128, 4 * H), pending("w2", 4, 128, 4 * H)]
    cal = SiteCalibration(samples("compute", 32, [0.08, 0.1, 0.12] * 20))
    return site_cfg, snap, cal


def test_calibration_turns_an_overrequested_queue_into_a_short_wait() -> None:
    site_cfg, snap, cal = overrequested_alpha()
    raw = verdict(place(spec(), [(site_cfg, snap)], now=NOW), "alpha")
    assert raw.start_source == "simulation" and raw.start_bound is None
    # from walltimes: the running jobs end in 3 h 40 min, then two 4 h jobs hold every node
    assert raw.estimated_start == NOW + timedelta(hours=11, minutes=40)
    p = place(spec(), [(site_cfg, snap)], now=NOW, calibration={"alpha": cal})
    v = verdict(p, "alpha")
    assert v.start_source == "calibrated" and v.raw_start == raw.estimated_start
    # calibrated: the running jobs end with the jobs of their class that ran 20 min or
    # more (at 24-29 min: a few minutes from now), the two waiting ones run about 24 min each
    assert v.estimated_start < NOW + timedelta(hours=1)
    assert v.estimated_start <= v.start_bound <= v.raw_start
    # the probe (4 CPUs) has no class of its own in the samples: the partition's
    assert v.calibration_samples == 60 and v.calibration_class == "compute/*"
    text = p.explain()
    assert "calibrated" in text and "RAW" in text and "90%" in text
    assert p.predicted_start().startswith("≈ ") and "(90%: < " in p.predicted_start()


def test_calibration_changes_the_choice_when_requests_mislead() -> None:
    site_cfg, snap, cal = overrequested_alpha()
    # gamma: both nodes busy for 2 more hours, and nothing learnt about it
    busy_gamma = gamma([running(f"g{i}", f"g{i}", 48, left_s=2 * H, part="long")
                        for i in (1, 2)], alloc=(48, 48))
    uncal = place(spec(), [(site_cfg, snap), busy_gamma], now=NOW)
    assert uncal.choice == "gamma"  # alpha looks 11 h 40 min away
    cal_p = place(spec(), [(site_cfg, snap), busy_gamma], now=NOW,
                  calibration={"alpha": cal})
    assert cal_p.choice == "alpha", cal_p.explain()


def deep_queue_behind_a_stale_estimate():
    """alpha's four nodes are busy: r1 (asked 1 h) ends by its walltime in 10 min, r2-r4
    (asked 4 h, run 20 min) end within minutes as their class does (runs of 19-29 min of
    4 h asked). Four 32-CPU jobs wait for priority behind them, the scheduler's estimate
    for each planned from walltimes: when r2-r4 reach theirs, at +3 h 40 min."""
    jobs = [running("r1", "a1", 32, left_s=10 * 60, walltime_s=H)]
    jobs += [running(f"r{i}", f"a{i}", 32, left_s=4 * H - 20 * 60) for i in (2, 3, 4)]
    est = NOW + timedelta(hours=3, minutes=40)
    jobs += [pending(f"p{i}", 1, 32, 4 * H, est=est, reason="Priority") for i in range(1, 5)]
    cal = SiteCalibration(samples("compute", 32, [0.08, 0.1, 0.12] * 20))
    return alpha(jobs, alloc=(32,) * 4), cal


def test_a_deep_queue_takes_the_room_running_jobs_free_before_the_probe() -> None:
    """A walltime plan holding the waiting jobs to their estimates gives the probe (one
    node, 1 h) a1 when r1 ends at +10 min: p1 is held there until +3 h 40 min. But the
    calibrated plan starts p1-p3 as r2-r4 end (+4-9 min) and p4 on a1 at +10 min; they run
    about 24 min each, so the probe waits for the first of them to end, near +29 min."""
    site, cal = deep_queue_behind_a_stale_estimate()
    raw = verdict(place(spec(cpus=32), [site], now=NOW), "alpha")
    # no calibration: the scheduler's estimates are all there is, followed
    assert raw.start_source == "scheduler" and raw.estimated_start == NOW + timedelta(minutes=10)
    v = verdict(place(spec(cpus=32), [site], now=NOW, calibration={"alpha": cal}), "alpha")
    assert v.start_source == "calibrated"
    # not before a waiting job ends: the earliest started at once and runs >= 19 min
    assert NOW + timedelta(minutes=19) < v.estimated_start < NOW + timedelta(minutes=35)
    assert v.estimated_start <= v.start_bound
    # the walltime plan without the stale holds: p1 takes a1 at +10 min for its 4 h, p2-p4
    # a2-a4 at +3 h 40 min: the probe's first room is a1 after p1, at +4 h 10 min
    assert v.raw_start == NOW + timedelta(hours=4, minutes=10)


def test_held_no_later_moves_only_holds_of_jobs_waiting_for_priority_or_resources() -> None:
    from diamond_jupyter.placement_sim import Demand, held_no_later

    def d(nid: str, not_before: float, sched: bool = True, now_ok: bool = True) -> Demand:
        return Demand(1, 4, 0, 600.0, [0], not_before, sched, now_ok=now_ok, native_id=nid)

    queue = [d("a", 900.0), d("b", 900.0, now_ok=False), d("c", 100.0), d("e", 0.0, False),
             d("f", 900.0)]
    starts = {"a": 300.0, "b": 300.0, "c": 500.0, "e": 50.0}
    out = held_no_later(queue, starts)
    # a: moved in to its calibrated start; b waits for more than priority (a QOS limit):
    # kept; c's calibrated start is later: its estimate stays; e carries no estimate; f has
    # no calibrated start (never starts in that plan): kept
    assert [x.not_before for x in out] == [300.0, 900.0, 100.0, 0.0, 900.0]
    assert out[0] is not queue[0] and queue[0].not_before == 900.0  # the input is not changed
    assert all(x is y for x, y in zip(out[1:], queue[1:], strict=True))
    assert held_no_later(queue, {"c": 500.0}) is queue  # nothing moves: the same list


def test_an_idle_site_is_ready_whatever_its_history() -> None:
    cal = SiteCalibration(samples("compute", 4, [0.9] * 40))
    v = verdict(place(spec(), [alpha()], now=NOW, calibration={"alpha": cal}), "alpha")
    assert v.verdict == "READY" and v.estimated_start == NOW and v.start_bound == NOW


def test_describe_start() -> None:
    assert describe_start(170, 640) == "≈ 3 min (90%: < 11 min)"
    assert describe_start(20, None) == "≈ 20 s"
    assert describe_start(2 * H, 5.5 * H) == "≈ 2.0 h (90%: < 5.5 h)"


# jobs that ask for 10 minutes and use about one second, in each scheduler's own words
TEN_MINUTES_FOR_ONE_SECOND = {
    "beta": ["sbatch", "--parsable", "-t", "10", "-o", "/dev/null", "--wrap", "sleep 1"],
    "delta": ["qsub", "-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "-l", "h_rt=600",
              "sleep", "1"],
}


@pytest.mark.parametrize("site", sorted(TEN_MINUTES_FOR_ONE_SECOND))
def test_federation_learns_from_the_sites_accounting(tb, data_dir, site) -> None:
    """Every user's finished jobs on a real Slurm or Grid Engine site become calibration
    samples (sacct; qacct with the request from its category), in one accounting query per
    site, cached between placements. As many jobs as a class needs (MIN_SAMPLES)."""
    from diamond_jupyter.calibration import MIN_SAMPLES
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.transports import make_transport

    async def go():
        t = make_transport(tb.config.site(site).transport, site=site)
        try:
            ids = []
            for _ in range(MIN_SAMPLES):
                r = await t.run(TEN_MINUTES_FOR_ONE_SECOND[site], check=True)
                ids.append(r.stdout.strip().split(";")[0].split(".")[0])
        finally:
            await t.close()
        async with Federation(tb.config_path) as fed:
            for _ in range(120):  # until accounting has them all (their end recorded)
                cals = await fed.calibration(max_age_s=0)
                got = fed.accounting(site)
                if {j.native_id for j in got} >= set(ids):
                    break
                await asyncio.sleep(0.5)
            mine = [j for j in got if j.native_id in ids]
            assert len(mine) == MIN_SAMPLES and all(j.walltime_s == 600 for j in mine)
            assert cals[site].samples >= MIN_SAMPLES
            r = cals[site].ratio(mine[0].partition, 1)
            assert r is not None and r.median < 1.0
            p = await fed.place(spec(nodes=1, cpus=1, walltime=600))
            b = p.verdict(site)
            assert b.feasible and b.start_source == "calibrated" and b.raw_start is not None
            assert b.calibration_samples >= MIN_SAMPLES
    asyncio.run(go())


# --- data-aware estimates -----------------------------------------------------------------

def test_measured_bandwidth_medians_and_ignores_small_copies() -> None:
    from diamond_jupyter.calibration import measured_bandwidth

    got = measured_bandwidth([("alpha", "beta", 100_000_000, 10.0),   # 80 Mb/s
                              ("alpha", "beta", 100_000_000, 4.0),    # 200 Mb/s
                              ("alpha", "beta", 100_000_000, 2.0),    # 400 Mb/s
                              ("alpha", "beta", 10_000, 0.001),       # latency, not rate
                              (None, "gamma", 50_000_000, 1.0),
                              ("beta", "beta", 100_000_000, 1.0)])    # not a transfer
    assert got == {("alpha", "beta"): pytest.approx(200.0), (None, "gamma"): 400.0}


def test_data_on_a_site_moves_nothing_there_and_measured_bandwidth_counts() -> None:
    from diamond_jupyter.placement import StageData

    pair = [alpha(), gamma()]  # both idle: without data, gamma (listed later) ties alpha
    data = StageData({"gamma": 10_000_000_000})  # 10 GB already on gamma
    p = place(spec(), pair, now=NOW, stage_data=data)
    assert p.choice == "gamma"
    a, g = verdict(p, "alpha"), verdict(p, "gamma")
    assert g.stage_in_s == 0
    assert a.stage_in_s == pytest.approx(10_000_000_000 * 8 / 1000e6)  # the default 1 Gb/s
    measured = StageData({"gamma": 10_000_000_000}, {("gamma", "alpha"): 8000.0})
    a2 = verdict(place(spec(), pair, now=NOW, stage_data=measured), "alpha")
    assert a2.stage_in_s == pytest.approx(10.0)  # 80 Gb at the measured 8 Gb/s


def test_a_step_whose_inputs_come_later_waits_for_them_where_they_are() -> None:
    """10 GB are made on alpha by a step that ends in 4 h; alpha's nodes are busy for 3 h,
    gamma is idle now. Placed for now, gamma wins (its queue is empty, the copy takes
    80 s). Placed for when the inputs exist, alpha's queue has cleared by then and the copy
    to gamma is time lost: alpha."""
    from diamond_jupyter.placement import StageData

    pair = [busy_alpha(), gamma()]
    now_data = StageData({"alpha": 10_000_000_000})
    assert place(spec(), pair, now=NOW, stage_data=now_data).choice == "gamma"
    later = StageData({"alpha": 10_000_000_000}, ready_at=NOW + timedelta(hours=4))
    p = place(spec(), pair, now=NOW, stage_data=later)
    assert p.choice == "alpha", p.explain()
    a, g = verdict(p, "alpha"), verdict(p, "gamma")
    assert a.inputs_at == NOW + timedelta(hours=4)
    assert g.inputs_at == NOW + timedelta(hours=4, seconds=80)
    assert g.estimated_finish - a.estimated_finish == timedelta(seconds=80)
    assert any("inputs are expected in" in n for n in g.notes)


async def test_federation_sizes_stage_in_where_it_is(tmp_path, monkeypatch) -> None:
    """Sizes come from the source's own place (a site over its transport, or the server's
    disk), and past transfers give the bandwidth."""
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import JobSpec, StageEntry
    from diamond_jupyter.store import Store
    from diamond_jupyter.store.codec import to_ts

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    (home / "big.dat").write_bytes(b"x" * 3_000_000)
    local = tmp_path / "root" / "in.dat"
    local.parent.mkdir()
    local.write_bytes(b"y" * 2_000_000)
    fed = Federation(FederationConfig(sites=[SiteConfig(
        name="alpha", scheduler="slurm", transport=TransportConfig(kind="local"))]),
        store=Store(tmp_path / "s.sqlite3"))
    fed.server_root = local.parent
    try:
        rec = fed.store.record_transfer("sftp", "in.dat", "alpha:in.dat")
        rec = fed.store.update_transfer(rec.id, state="SUCCEEDED", bytes=50_000_000)
        with fed.store._write() as c:  # it took 2 s: 200 Mb/s
            c.execute("UPDATE transfers SET created_at = ? WHERE id = ?",
                      (to_ts(rec.updated_at - timedelta(seconds=2)), rec.id))
        job = JobSpec(command="true", stage_in=[
            StageEntry(source="alpha:~/big.dat", destination="big.dat"),
            StageEntry(source="in.dat", destination="in.dat"),
            StageEntry(source="alpha:~/missing.dat", destination="m.dat")])
        data = await fed.stage_data(job)
        assert data.sources == {"alpha": 3_000_000, None: 2_000_000}
        assert data.bandwidth_mbps == {(None, "alpha"): pytest.approx(200.0)}
    finally:
        await fed.close()


def test_spread_draws_keep_the_classs_sum_but_not_its_shape():
    """`ratio_fn(cal, "spread")` (measured by benchmarks.prediction, not used by placement):
    successive jobs of a class get evenly spread quantiles of its ratios, so a hundred of
    them sum to about a hundred times the mean, with most of them short."""
    from diamond_jupyter.calibration import ratio_fn

    runs = [RunSample("compute", 32, 3600, (0.5 if i % 10 == 0 else 0.01) * 3600, float(i))
            for i in range(100)]
    f = ratio_fn(SiteCalibration(runs), "spread")
    assert f is not None
    draws = [f("compute", 32) for _ in range(100)]
    mean = 0.1 * 0.5 + 0.9 * 0.01
    assert sum(draws) == pytest.approx(100 * mean, rel=0.1)
    assert sorted(draws)[80] == 0.01 and max(draws) == 0.5


def test_spread_running_jobs_end_at_spread_quantiles_of_those_that_ran_as_long():
    """`ratio_fn(cal, "spread_running")` (measured, not used by placement): running jobs of
    a class that ran 5% of their walltime end at spread quantiles of the jobs that ran at
    least that long (here 0.1 or 0.5), not all at their median; queued work at the mean."""
    from diamond_jupyter.calibration import ratio_fn

    runs = [RunSample("compute", 32, 3600, (0.5 if i % 4 == 0 else
                                            0.1 if i % 4 == 1 else 0.01) * 3600, float(i))
            for i in range(100)]
    cal = SiteCalibration(runs)
    f, median = ratio_fn(cal, "spread_running"), ratio_fn(cal, "median")
    assert f is not None and median is not None
    ends = [f("compute", 32, 0.05) for _ in range(20)]
    assert set(ends) == {0.1, 0.5} and 8 <= ends.count(0.1) <= 12
    assert median("compute", 32, 0.05) == pytest.approx(0.3)  # where no job of it ended
    assert f("compute", 32) == pytest.approx(cal.ratio("compute", 32).mean)


def test_the_prior_variant_counts_the_walltime_where_few_ran_as_long():
    """The benchmark-only "prior" ratio: with fewer than MIN_SAMPLES finished jobs that ran
    as long as a running job, the walltime (1.0) is one more of them; with enough, it is
    the plain conditioned median."""
    from diamond_jupyter.calibration import MIN_SAMPLES, RunSample, SiteCalibration, ratio_fn

    few = SiteCalibration([RunSample("p", 32, 600.0, r * 600.0, k) for k, r in
                           enumerate([0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.3, 0.5])])
    plain, prior = ratio_fn(few, "median"), ratio_fn(few, "prior")
    assert plain("p", 32, 0.25) == pytest.approx(0.4)  # 0.3 and 0.5 ran as long
    assert prior("p", 32, 0.25) == pytest.approx(0.5)  # 0.3, 0.5 and the walltime
    many = SiteCalibration([RunSample("p", 32, 600.0, r * 600.0, k) for k, r in
                            enumerate([0.3] * MIN_SAMPLES + [0.5] * MIN_SAMPLES)])
    assert ratio_fn(many, "prior")("p", 32, 0.25) == ratio_fn(many, "median")("p", 32, 0.25)
    assert prior("p", 32) == plain("p", 32)  # a queued job: the class's median


def test_the_prior_variant_past_every_finished_job_is_the_median_rule():
    from diamond_jupyter.calibration import RunSample, SiteCalibration, ratio_fn

    cal = SiteCalibration([RunSample("p", 32, 600.0, r * 600.0, k)
                           for k, r in enumerate([0.1, 0.2, 0.3, 0.4, 0.5])])
    for share in (0.55, 0.9):  # just past the longest (ending now), and far past it
        assert ratio_fn(cal, "prior")("p", 32, share) == ratio_fn(cal, "median")("p", 32, share)


def test_request_classes_step_by_four() -> None:
    from diamond_jupyter.calibration import request_class

    assert [request_class(s) for s in (None, 0, 60, 240, 241, 900, 3600, 14400, 86400)] == \
        [None, None, "<=240s", "<=240s", "<=960s", "<=960s", "<=3840s", "<=15360s", "long"]


def test_by_request_a_job_runs_the_share_of_jobs_that_asked_as_much() -> None:
    """Day-long requests run 5% of them, ten-minute ones 80%: split by request, each
    class has its own share; a request class with too few jobs falls back to the size
    class, as without the split."""
    from diamond_jupyter.calibration import ratio_fn

    day = [RunSample("p", 8, 86400.0, 0.05 * 86400.0, float(i)) for i in range(10)]
    short = [RunSample("p", 8, 600.0, 0.8 * 600.0, float(10 + i)) for i in range(10)]
    odd = [RunSample("p", 8, 3600.0, 0.5 * 3600.0, 30.0)]
    plain = SiteCalibration(day + short + odd)
    split = SiteCalibration(day + short + odd, by_request=True)
    assert plain.ratio("p", 8, 600.0).key == "p/5-16"  # no split asked: one class
    assert split.ratio("p", 8, 600.0).median == pytest.approx(0.8)
    assert split.ratio("p", 8, 86400.0).median == pytest.approx(0.05)
    assert split.ratio("p", 8, 3600.0).key == "p/5-16"  # one job asked an hour: too few
    assert split.ratio("p", 8).key == "p/5-16"  # no request known
    mean = ratio_fn(split, "mean")
    assert mean("p", 8, None, 600.0) == pytest.approx(0.8)
    assert mean("p", 8, None, 86400.0) == pytest.approx(0.05)
    # a running day-long job 10% in: of the day-long jobs none ran as long (just past them)
    assert ratio_fn(split, "median")("p", 8, 0.1, 86400.0) == pytest.approx(0.55, abs=1e-4)


def test_a_job_seen_running_a_second_is_not_taken_past_jobs_recorded_at_one_second():
    """Starts and ends are whole seconds. A class whose jobs end within a second or two
    (recorded as 1 s, ratio 0.001 of a 1,000 s request) and a few that ran long: a job seen
    running 1.1 s has not outlived the short ones (it may have started 0.9 s later than
    stamped), so it ends by them, not by the long ones (found on Grid Engine under a
    fast-turning queue: a job seen 1 s into its run was predicted to run 130 s more and
    ended within seconds)."""
    from diamond_jupyter.calibration import ratio_fn

    runs = [RunSample("all.q", 8, 1000, 1.0 if i % 4 else 400.0, float(i)) for i in range(40)]
    f = ratio_fn(SiteCalibration(runs), "median")
    assert f is not None
    assert f("all.q", 8, 1.1 / 1000, 1000) == pytest.approx(0.001)
    # past the slack it has outlived them: then only the long ones speak for it
    assert f("all.q", 8, 3.5 / 1000, 1000) == pytest.approx(0.4)


# -- running jobs as right-censored runtimes (`with_survivors`; measured, not used) ----------

def test_without_running_jobs_the_ratios_are_the_finished_ones():
    assert with_survivors([0.3, 0.1], []) == [0.3, 0.1]


def test_a_running_job_draws_from_the_finished_jobs_that_ran_longer_than_it_has():
    """Kaplan-Meier over ends 0.2, 0.4, 0.6, 0.8 and one job running at 0.3: of those
    that ran longer (0.4, 0.6, 0.8) its median is 0.6; ends before it say nothing."""
    assert with_survivors([0.2, 0.4, 0.6, 0.8], [0.3]) == [0.2, 0.4, 0.6, 0.8, 0.6]


def test_running_jobs_past_every_finished_one_count_as_running_to_their_request():
    """Ten short jobs ended and ten have run longer than any of them: their runtimes are
    unknown but at most their requests, so the class's median rises from 0.1 to halfway."""
    ratios = with_survivors([0.1] * 10, [0.5] * 10)
    assert sorted(ratios) == [0.1] * 10 + [1.0] * 10
    cal = SiteCalibration([RunSample("p", 4, 1000.0, 100.0, float(i)) for i in range(10)]
                          + [RunSample("p", 4, 1000.0, 500.0 + CLOCK_SLACK_S, 99.0,
                                       running=True) for _ in range(10)])
    r = cal.ratio("p", 4)
    assert r is not None and r.samples == 20 and r.median == pytest.approx(0.55)


def test_running_jobs_are_spread_over_what_the_longer_runs_did():
    ended = [0.1 * k for k in range(1, 11)]  # 0.1 .. 1.0
    drawn = with_survivors(ended, [0.05] * 4)[10:]
    assert len(set(drawn)) == 4 and all(0.05 < d <= 1.0 for d in drawn)


def test_running_jobs_alone_do_not_make_a_class_known():
    """A class needs MIN_SAMPLES finished jobs; running ones only correct a known class."""
    cal = SiteCalibration([RunSample("p", 4, 1000.0, 100.0, 1.0, running=True)] * 20
                          + [RunSample("q", 4, 1000.0, 100.0, float(i)) for i in range(5)])
    assert cal.exact(("p", "2-4")) is None and cal.exact(("q", "2-4")) is not None


def test_with_running_jobs_the_history_is_of_the_jobs_that_started_in_the_window():
    """Ended jobs are every length alike only in a steady state; beside the running jobs
    (the long ones) each job counts once when the history is of those that started in the
    window: a job that started before it and ended in it is left out."""
    now = 100_000.0
    early = RunSample("p", 4, 1000.0, 900.0, now - 100)  # started 1,000 s ago
    late = RunSample("p", 4, 1000.0, 50.0, now - 10)  # started 60 s ago
    running_old = RunSample("p", 4, 1000.0, 700.0, now, running=True)
    running_new = RunSample("p", 4, 1000.0, 100.0, now, running=True)
    kept = started_within([early, late, running_old, running_new], 500.0)
    assert kept == [late, running_new]


def test_a_fresh_sites_short_history_is_corrected_by_its_long_running_jobs():
    """A site whose background started together: five short jobs ended, five long ones
    still run. The ended jobs alone say 0.05 of the request; counted with the running
    ones (all started in the window), the class's median is past the short ones."""
    now = 10_000.0
    ended = [RunSample("p", 4, 1000.0, 50.0, now - 100 + i) for i in range(5)]
    running = [RunSample("p", 4, 1000.0, 400.0, now, running=True) for _ in range(5)]
    alone = SiteCalibration(ended)
    both = SiteCalibration(ended + running, cohort_s=3600.0)
    assert alone.ratio("p", 4).median == pytest.approx(0.05)
    assert both.ratio("p", 4).median > 0.4


def test_too_few_jobs_started_in_the_window_keeps_the_ended_ones_alone():
    now = 100_000.0
    ended = [RunSample("p", 4, 1000.0, 900.0, now - 100 + i) for i in range(6)]  # started early
    running = [RunSample("p", 4, 1000.0, 100.0, now, running=True)]
    cal = SiteCalibration(ended + running, cohort_s=500.0)
    r = cal.ratio("p", 4)
    assert r is not None and r.samples == 6 and r.median == pytest.approx(0.9)


def test_running_samples_are_the_views_running_jobs_censored_at_their_elapsed_time():
    from diamond_jupyter.calibration import running_samples

    jobs = [running("r1", "a1", 8, left_s=3 * H),  # 4 h asked, 1 h run
            running("r2", "a2", 4, left_s=H, walltime_s=2 * H),
            pending("p1", 1, 8, 4 * H),
            JobStatus(native_id="r3", state=JobState.RUNNING, cpus=8)]  # no start known
    got = running_samples(jobs, NOW)
    assert [(s.cpus, s.requested_s, s.runtime_s, s.running) for s in got] == [
        (8, 4 * H, 1 * H, True), (4, 2 * H, 1 * H, True)]
    assert got[0].ended_at == NOW.timestamp()
    # a class whose finished jobs all ran 5% of their request, and whose running jobs have
    # run half of theirs already: counted, the running ones move the class's ratios up
    ended = [RunSample(None, 8, 4 * H, 0.05 * 4 * H, NOW.timestamp() - i) for i in range(10)]
    alive = running_samples([running(f"r{i}", "a1", 8, left_s=2 * H) for i in range(10)], NOW)
    before = SiteCalibration(ended).ratio(None, 8)
    after = SiteCalibration([*ended, *alive]).ratio(None, 8)
    assert after.median > before.median


def test_capped_by_waits_caps_only_on_enough_waits_and_no_longer_queue():
    """Session 33's benchmark-only `recent_cap`: a calibrated start far above the site's
    recent waits of its class is capped at their bound, but only where that bound rests on
    MIN_CAP_WAITS waits and the queue ahead is no longer than when those jobs queued."""
    from diamond_jupyter.calibration import MIN_CAP_WAITS, capped_by_waits

    assert capped_by_waits(280.0, (90.0, MIN_CAP_WAITS), 20, 25) == 90.0
    assert capped_by_waits(60.0, (90.0, MIN_CAP_WAITS), 20, 25) == 60.0  # a cap, not a floor
    assert capped_by_waits(280.0, (90.0, MIN_CAP_WAITS - 1), 20, 25) == 280.0  # too few
    assert capped_by_waits(280.0, (90.0, 100), 26, 25) == 280.0  # a burst since
    assert capped_by_waits(280.0, (90.0, 100), 20, None) == 280.0  # no queue measured
    assert capped_by_waits(280.0, None, 0, 25) == 280.0


def test_queue_when_waited_counts_the_jobs_waiting_at_each_started_jobs_submission():
    from diamond_jupyter.calibration import QueueWait, queue_when_waited

    def wait(sub: float, start: float | None, part: str = "short") -> QueueWait:
        return QueueWait(part, 1, (start if start is not None else 1000.0) - sub,
                         waiting=start is None, submitted_at=sub)
    waits = [wait(100, 200), wait(150, 300), wait(180, 500), wait(550, None),
             wait(560, None), wait(140, None, "long"),  # another partition
             QueueWait("short", 1, 5.0)]  # no submission time: left out
    # the first: none waiting then; the second: the first (started after); the third:
    # both; median 1
    assert queue_when_waited(waits, "short") == 1
    assert queue_when_waited(waits, "short,long") == 1  # the first partition named
    assert queue_when_waited([w for w in waits if w.waiting], "short") is None
