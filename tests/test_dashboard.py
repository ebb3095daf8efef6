"""The dashboard's data, pure: queue rows (whose job, waits, predicted starts), what is busy,
and the usage series (kept per snapshot, thinned by age, bounded, on disk)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from test_placement import NOW, H, busy_alpha, node, pending, running

from diamond_jupyter.calibration import RunSample, SiteCalibration, WaitSample
from diamond_jupyter.dashboard import (
    MAX_POINTS,
    TIERS,
    busy,
    downsample,
    queue_rows,
    simulated_starts,
    site_entry,
    step_at,
    thin,
    usage_point,
)
from diamond_jupyter.model import JobState, JobStatus, SiteSnapshot
from diamond_jupyter.store import Store


def snap(jobs=(), nodes=None, reachable=True) -> SiteSnapshot:
    nodes = nodes if nodes is not None else [
        node("a1", 32, 1000, gpus=2, alloc=32, galloc=1), node("a2", 32, 1000, alloc=8),
        node("a3", 32, 1000, gpus=4), node("a4", 16, 1000, state="allocated")]
    return SiteSnapshot(site="alpha", taken_at=NOW, nodes=nodes, jobs=list(jobs),
                        reachable=reachable)


def waits(ratio: float, n: int = 40) -> SiteCalibration:
    """A wait calibration whose scheduler estimates came true after `ratio` of the wait
    (spread ±25%)."""
    samples = [WaitSample("compute", 4, 1000.0, ratio * f * 1000.0, float(i))
               for i, f in enumerate([0.75, 1.0, 1.25, 1.0] * (n // 4))]
    cal = SiteCalibration([], wait=samples).wait
    assert cal is not None
    return cal


# -- rows ----------------------------------------------------------------------------------

def test_rows_keep_the_queue_order_and_mark_this_users_jobs():
    r = running("10", "a1", 32, left_s=H, part="compute")
    r = r.model_copy(update={"user": "ann", "submitted_at": NOW - timedelta(hours=4),
                             "name": "sim"})
    p = pending("11", 1, 4, H, part="compute").model_copy(
        update={"user": "me", "submitted_at": NOW - timedelta(minutes=10)})
    q = pending("12", 2, 64, H, part="compute", gpus=2).model_copy(update={"user": "bob"})
    rows = queue_rows(snap([r, p, q]), NOW, {"11": "alpha:11"})
    assert [x["id"] for x in rows] == ["10", "11", "12"]
    assert [(x["mine"], x["job"]) for x in rows] == [(False, None), (True, "alpha:11"),
                                                     (False, None)]
    run, mine, other = rows
    assert run["state"] == "RUNNING" and run["user"] == "ann" and run["name"] == "sim"
    assert run["running_s"] == 3 * H  # started walltime - left ago
    assert run["waited_s"] == H  # submitted 4 h ago, started 3 h ago
    assert mine["state"] == "PENDING" and mine["waited_s"] == 600 and mine["running_s"] is None
    assert (other["nodes"], other["cpus"], other["gpus"], other["partition"]) == \
        (2, 64, 2, "compute")
    assert other["waited_s"] is None  # no submit time in the view


def test_a_pending_job_gets_the_schedulers_estimate_calibrated_when_there_are_samples():
    p = pending("11", 1, 4, H, part="compute", est=NOW + timedelta(hours=2))
    alone = queue_rows(snap([p]), NOW, {})[0]["predicted_start"]
    assert alone == {"median_s": 2 * H, "p90_s": None, "source": "scheduler"}
    cal = waits(0.25)
    calibrated = queue_rows(snap([p]), NOW, {}, cal)[0]["predicted_start"]
    assert calibrated["source"] == "calibrated"
    assert calibrated["median_s"] == pytest.approx(2 * H * 0.25)
    assert calibrated["median_s"] < calibrated["p90_s"] <= 2 * H * 0.25 * 1.25 + 1e-6


def test_too_few_samples_give_a_calibrated_median_without_a_bound():
    p = pending("11", 1, 4, H, part="compute", est=NOW + timedelta(hours=2))
    few = waits(0.5, n=8)  # enough for a median (5), not for the 90% bound at 95%
    got = queue_rows(snap([p]), NOW, {}, few)[0]["predicted_start"]
    assert got == {"median_s": pytest.approx(H), "p90_s": None, "source": "calibrated"}


def test_no_prediction_without_an_estimate_or_once_running():
    p = pending("11", 1, 4, H, part="compute")  # the scheduler planned no start
    r = running("10", "a1", 32, left_s=H).model_copy(
        update={"estimated_start": NOW + timedelta(hours=1)})
    past = pending("12", 1, 4, H, est=NOW - timedelta(minutes=5))
    rows = queue_rows(snap([p, r, past]), NOW, {}, waits(0.25))
    assert rows[0]["predicted_start"] is None and rows[1]["predicted_start"] is None
    assert rows[2]["predicted_start"]["median_s"] == 0  # overdue: starts any moment


def test_busy_counts_allocated_cpus_and_gpus_and_whole_allocated_nodes():
    assert busy(snap()) == {"cpus": 32 + 8 + 0 + 16, "gpus": 1}
    # no node view: what the running jobs hold
    jobs = [running("1", None, 6, left_s=H, gpus=1), running("2", None, 2, left_s=H)]
    assert busy(snap(jobs, nodes=[])) == {"cpus": 8, "gpus": 1}


def test_site_entry_totals_and_an_unreachable_site():
    e = site_entry("alpha", "slurm", snap([pending("1", 1, 1, H)]), NOW, {})
    assert e["totals"] == {"nodes": 4, "cpus": 112, "gpus": 6}
    assert e["busy"] == {"cpus": 56, "gpus": 1} and len(e["queue"]) == 1
    assert e["reachable"] and e["error"] is None and e["scheduler"] == "slurm"
    down = snap(reachable=False).model_copy(update={"error": "ssh: timed out"})
    e = site_entry("alpha", "slurm", down, NOW, {})
    assert not e["reachable"] and e["error"] == "ssh: timed out"
    assert usage_point(down) is None  # an unreachable view adds no point


def test_ten_thousand_rows_build_quickly():
    import time

    jobs = [JobStatus(native_id=str(i), state=JobState.PENDING, user=f"u{i % 50}", cpus=4,
                      nodes=1, partition="compute", submitted_at=NOW - timedelta(seconds=i),
                      estimated_start=NOW + timedelta(seconds=i)) for i in range(10_000)]
    s, cal = snap(jobs), waits(0.5)
    t0 = time.thread_time()
    rows = queue_rows(s, NOW, {"5": "alpha:5"}, cal)
    took = time.thread_time() - t0
    assert len(rows) == 10_000 and rows[5]["mine"] and sum(r["mine"] for r in rows) == 1
    assert took < 1.0, took  # CPU seconds of this thread (typically ~0.05)


def runtimes(ratio: float, n: int = 40) -> SiteCalibration:
    """A runtime calibration: recent jobs ran `ratio` of their walltime request (±20%)."""
    return SiteCalibration([RunSample(None, 32, 1000.0, ratio * f * 1000.0, float(i))
                            for i, f in enumerate([0.8, 1.0, 1.2, 1.0] * (n // 4))])


def test_the_calibrated_simulation_starts_every_queued_job():
    """alpha's four nodes are busy with jobs that asked for 4 h and ran 1 h: by their
    requests the queue starts in 3 h; jobs like them run half their request, so the head
    starts in 1 h, the next behind it, and the bound is later but within the requests'."""
    cfg, s = busy_alpha(left_s=3 * H)
    s.jobs += [pending("p1", 1, 32, H), pending("p2", 4, 128, H), pending("p3", 1, 32, H)]
    starts = simulated_starts(s, runtimes(0.5), NOW)
    assert starts["p1"][0] == pytest.approx(H)
    assert starts["p2"][0] >= starts["p1"][0]  # all four nodes: after the head's node frees
    assert all(m <= b <= 3 * H for m, b in starts.values()), starts
    assert any(b > m for m, b in starts.values())
    assert simulated_starts(s, SiteCalibration([]), NOW) == {}  # no samples: no simulation


def test_a_row_prefers_the_wait_calibrated_estimate_then_the_simulation_then_the_raw_one():
    est = NOW + timedelta(hours=2)
    s = snap([pending("a", 1, 4, H, part="compute", est=est),
              pending("b", 1, 4, H, part="compute"),
              pending("c", 1, 4, H, part="compute", est=est)])
    sim = {"a": (600.0, 900.0), "b": (1200.0, 1500.0)}
    rows = {r["id"]: r["predicted_start"] for r in queue_rows(s, NOW, {}, waits(0.25), sim)}
    assert rows["a"]["median_s"] == 1800 and rows["a"]["source"] == "calibrated"  # waits
    assert rows["b"] == {"median_s": 1200, "p90_s": 1500, "source": "calibrated"}  # simulated
    assert rows["c"]["median_s"] == 1800  # the wait calibration, not simulated
    no_waits = {r["id"]: r["predicted_start"] for r in queue_rows(s, NOW, {}, None, sim)}
    assert no_waits["a"] == {"median_s": 600, "p90_s": 900, "source": "calibrated"}
    assert no_waits["c"] == {"median_s": 2 * H, "p90_s": None, "source": "scheduler"}


# -- usage series ----------------------------------------------------------------------------

def test_a_snapshot_becomes_one_point():
    s = snap([running("1", "a1", 32, left_s=H), pending("2", 1, 1, H), pending("3", 1, 1, H)])
    assert usage_point(s) == {"t": NOW.timestamp(), "busy_cpus": 56, "busy_gpus": 1,
                              "pending": 2, "running": 1}


def test_thin_keeps_the_latest_point_per_bucket_of_each_age_tier():
    now = 1_000_000_020.0  # a multiple of 60 plus 20 s
    recent = [now - 5, now - 15, now - 25]  # the same minute bucket: only now - 5 stays
    assert thin(recent, now) == {now - 15, now - 25}
    old = now - 10 * 3600  # the 5-minute tier; old % 300 == 120
    assert old % 300 == 120
    times = [old, old + 60, old + 120, old + 1000]  # the first three share a bucket
    assert thin(times, now) == {old, old + 60}
    week_old = now - 8 * 86400
    assert thin([week_old, now], now) == {week_old}


def test_a_week_of_snapshots_every_15_s_stays_bounded_and_evenly_spaced():
    now = 2_000_000_000.0
    times = [now - i * 15.0 for i in range(8 * 86400 // 15)]
    kept = sorted(set(times) - thin(times, now))
    budget = sum(int((limit - prev) // step) + 1 for (prev, _), (limit, step)
                 in zip(((0.0, 0.0), *TIERS[:-1]), TIERS, strict=True))
    assert len(kept) <= budget < 900
    gaps = [(b - a, step_at(now - a)) for a, b in zip(kept, kept[1:], strict=False)]
    assert all(gap <= step for gap, step in gaps)  # no hole in the series
    # within a tier the tier's spacing (a bucket cut by a tier's edge may be closer)
    assert sum(gap != step for gap, step in gaps) <= 2 * len(TIERS)
    assert kept[-1] == now and now - kept[0] < TIERS[-1][0]


def test_thin_again_drops_nothing_more():
    now = 2_000_000_000.0
    times = [now - i * 7.0 for i in range(20_000)]
    kept = set(times) - thin(times, now)
    assert thin(kept, now) == set()


def test_downsample_spreads_evenly_and_keeps_both_ends():
    pts = [{"t": float(i), "busy_cpus": i, "busy_gpus": 0, "pending": 0, "running": 0}
           for i in range(3000)]
    out = downsample(pts)
    assert len(out) == MAX_POINTS and out[0] is pts[0] and out[-1] is pts[-1]
    gaps = {b["t"] - a["t"] for a, b in zip(out, out[1:], strict=False)}
    assert max(gaps) - min(gaps) <= 1
    assert downsample(pts[:10]) == pts[:10]


def test_the_store_keeps_the_series_thinned_and_across_a_reopen(tmp_path):
    path = tmp_path / "s.sqlite3"
    now = 2_000_000_000.0
    with Store(path) as st:
        for i in range(200):  # 200 points 15 s apart: 50 minutes, one kept per minute
            t = now - (199 - i) * 15.0
            st.note_usage("alpha", {"t": t, "busy_cpus": i, "busy_gpus": 0, "pending": i % 7,
                                    "running": 1}, now=t)
        st.note_usage("beta", {"t": now, "busy_cpus": 1, "busy_gpus": 1, "pending": 0,
                               "running": 0}, now=now)
        first = st.usage("alpha")
    with Store(path) as st:  # reopened: the same series
        again = st.usage("alpha")
        assert again == first
        assert [p["t"] for p in again] == sorted(p["t"] for p in again)
        assert 50 <= len(again) <= 52  # one per minute bucket
        assert again[-1]["busy_cpus"] == 199  # the latest point is always kept
        assert st.usage("alpha", since=now - 600) == [p for p in again if p["t"] >= now - 600]
        assert [p["busy_gpus"] for p in st.usage("beta")] == [1]


def test_a_store_that_cannot_keep_the_point_does_not_fail_the_snapshot(tmp_path):
    """The usage point is kept from inside the site's snapshot: a store error (here SQLite's
    own, as a locked file gives) is logged, never raised into the snapshot."""
    import sqlite3

    import yaml

    from diamond_jupyter.federation import Federation

    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{"name": "loc", "scheduler": "slurm",
                                                "transport": {"kind": "local"}}]}))
    fed = Federation(sites, store=Store(tmp_path / "s.sqlite3"))

    def locked(*_a, **_k):
        raise sqlite3.OperationalError("database is locked")
    fed.store.note_usage = locked  # type: ignore[method-assign]
    (observe,) = fed.sites["loc"].snapshot_observers
    observe(snap([running("1", "a1", 32, left_s=H)]))  # no raise
    fed.store.close()


def test_a_calibrated_start_is_bound_by_the_sites_recent_waits_too():
    """As in placement: whatever the model says, 10% of this site's recent jobs of the
    class waited over an hour, so the 90% bound is at least that; a start from the
    scheduler alone stays unbounded."""
    from diamond_jupyter.calibration import QueueWait, RecentWaits

    s = snap([pending("b", 1, 4, H, part="compute"),
              pending("c", 1, 4, H, part="compute", est=NOW + timedelta(hours=2))])
    sim = {"b": (1200.0, 1500.0)}
    recent = RecentWaits(QueueWait("compute", 4, 60.0 * i) for i in range(1, 71))  # 1..70 min
    plain = {r["id"]: r["predicted_start"] for r in queue_rows(s, NOW, {}, None, sim)}
    rows = {r["id"]: r["predicted_start"] for r in queue_rows(s, NOW, {}, None, sim,
                                                              waits=recent)}
    assert plain["b"] == {"median_s": 1200, "p90_s": 1500, "source": "calibrated"}
    assert rows["b"] == {"median_s": 1200, "p90_s": 68 * 60, "source": "calibrated"}
    assert rows["c"] == plain["c"] and rows["c"]["source"] == "scheduler"
