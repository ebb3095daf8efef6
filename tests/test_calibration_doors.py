"""Borrowed ratios, the dashboard and second doors.

The dashboard's queue predictions borrow the other sites' ratios for a site with too few
finished jobs of its own, as placement does, and say so (source "borrowed"): the sidebar
and `diamond place` agree. An entry that is a second door to a cluster listed already
(`metadata.door_to` naming it; alpha-pbs and beta-rest on the test bed) reads the same
machines' jobs: the pool and the pooled runtime share count them once. `auto: false` alone
does not make an entry a door."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml

from diamond_jupyter.calibration import RunSample, SiteCalibration, borrowed
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import (
    JobSpec,
    JobState,
    JobStatus,
    Node,
    Partition,
    Resources,
    SiteSnapshot,
    utcnow,
)
from diamond_jupyter.placement import place
from diamond_jupyter.store import Store

PROBE = JobSpec(name="probe", command="sleep 20",
                resources=Resources(nodes=1, tasks=1, cpus_per_task=8, walltime_s=60))


def samples(ratios: list[float], cpus: int = 8, asked_s: float = 1000.0) -> list[RunSample]:
    return [RunSample("batch", cpus, asked_s, r * asked_s, float(i))
            for i, r in enumerate(ratios)]


def grid_engine_queue(now: datetime, name: str = "sgeq") -> SiteSnapshot:
    """One 8-slot host running an 8-slot job 100 s into its 1000 s; two 8-slot jobs
    waiting, 1000 s asked each."""
    node = Node(name="s1", cpus=8, cpus_allocated=8, state="alloc", partitions=["all.q"])
    jobs = [JobStatus(native_id="99", state=JobState.RUNNING, cpus=8, walltime_s=1000.0,
                      partition="all.q", node_list="s1",
                      started_at=now - timedelta(seconds=100))]
    jobs += [JobStatus(native_id=str(100 + i), state=JobState.PENDING, cpus=8,
                       walltime_s=1000.0, reason="") for i in range(2)]
    return SiteSnapshot(site=name, taken_at=now, nodes=[node], jobs=jobs,
                        partitions=[Partition(name="all.q", default=True)], backfill="none")


def federation(tmp_path: Path) -> Federation:
    """sgeq (Grid Engine, no finished jobs of its own), other, and other-pbs: a second
    door to other's machines (`auto: false`, `door_to: other`)."""
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [
        {"name": "sgeq", "scheduler": "sge", "transport": {"kind": "local"}},
        {"name": "other", "scheduler": "slurm", "transport": {"kind": "local"}},
        {"name": "other-pbs", "scheduler": "pbs", "auto": False,
         "transport": {"kind": "local"}, "metadata": {"door_to": "other"}}]}))
    return Federation(sites, store=Store(tmp_path / "s.sqlite3"))


# the other site's 8-slot jobs ran 2% and 20% of their requests (mean 0.11). A second door
# reads the same jobs; here its record differs (every job to its walltime), so that
# counting it would show: the pool's mean would be 0.555 and its jobs 60.
OTHER = SiteCalibration(samples([0.02, 0.2] * 15))
DOOR = SiteCalibration(samples([1.0] * 30))


def test_a_second_door_borrows_but_does_not_lend() -> None:
    thin = SiteCalibration([])
    twice = borrowed({"thin": thin, "other": OTHER, "other-pbs": DOOR})
    assert twice["thin"].ratio("batch", 8).samples == 60  # without the doors: counted twice
    once = borrowed({"thin": thin, "other": OTHER, "other-pbs": DOOR}, doors={"other-pbs"})
    r = once["thin"].ratio("batch", 8)
    assert (r.samples, r.mean) == (30, pytest.approx(0.11))
    # a thin second door known only as a door (no first door named) borrows the pool
    door = borrowed({"other": OTHER, "other-pbs": SiteCalibration([])}, doors={"other-pbs"})
    assert door["other-pbs"].borrows and door["other-pbs"].ratio("batch", 8).samples == 30


# a third site whose 8-slot jobs ran 90% of their requests: the pool's mean is 0.505
THIRD = SiteCalibration(samples([0.9] * 30))


def test_a_thin_second_door_reads_its_first_doors_ratios_not_the_pool() -> None:
    """Before, a thin second door (a slurmrestd door whose accounting read no jobs)
    borrowed every site's ratios, third's included; its cluster's own jobs are its first
    door's."""
    thin = SiteCalibration([])
    cals = {"other": OTHER, "other-pbs": thin, "third": THIRD, "sgeq": SiteCalibration([])}
    out = borrowed(cals, doors={"other-pbs": "other"})
    door = out["other-pbs"]
    r = door.ratio("batch", 8)
    assert (r.samples, r.mean, door.borrows, door.ratios_of) == (
        30, pytest.approx(0.11), False, "other")
    assert thin.ratio("batch", 8) is None and thin.ratios_of is None  # the input untouched
    # another thin site still borrows the pool of other and third, the door not in it
    pooled = out["sgeq"].ratio("batch", 8)
    assert out["sgeq"].borrows and (pooled.samples, pooled.mean) == (60, pytest.approx(0.505))
    # a first door that is thin itself lends nothing: the door borrows the pool
    out = borrowed({"other": SiteCalibration([]), "other-pbs": thin, "third": THIRD},
                   doors={"other-pbs": "other"})
    assert out["other-pbs"].borrows and out["other-pbs"].ratio("batch", 8).mean == \
        pytest.approx(0.9)


def test_placement_says_a_thin_door_rests_on_its_first_doors_jobs(tmp_path) -> None:
    fed = federation(tmp_path)
    try:
        doors = fed.sites.second_doors()
        now = utcnow()
        cals = {"sgeq": SiteCalibration([]), "other": OTHER, "other-pbs": SiteCalibration([]),
                "third": THIRD}
        pl = place(PROBE, [(fed.sites["other-pbs"].cfg, grid_engine_queue(now, "other-pbs"))],
                   now=now, calibration=cals, doors=doors)
        v = pl.verdict("other-pbs")
        assert v is not None and v.feasible, pl.explain()
        assert (v.calibration_samples, v.calibration_borrowed) == (30, False)
        assert "its runtimes rest on 30 jobs of other (*), the same cluster" in \
            " ".join(v.notes)
        # planned with other's 0.11 (as sgeq is above), not the pool's 0.505
        assert (v.estimated_start - now).total_seconds() == pytest.approx(320.0, abs=1)
    finally:
        fed.store.close()


def test_placement_pools_a_cluster_once_for_the_queue_and_the_runtime(tmp_path) -> None:
    fed = federation(tmp_path)
    try:
        doors = fed.sites.second_doors()
        assert doors == {"other-pbs": "other"}
        now = utcnow()
        cfg = fed.sites["sgeq"].cfg
        cals = {"sgeq": SiteCalibration([]), "other": OTHER, "other-pbs": DOOR}
        pl = place(PROBE, [(cfg, grid_engine_queue(now))], now=now, calibration=cals,
                   doors=doors)
        v = pl.verdict("sgeq")
        assert v is not None and v.feasible, pl.explain()
        assert (v.calibration_samples, v.calibration_borrowed) == (30, True)
        # worked by hand (test_calibration_borrowed): the running job ends at 200 s of its
        # request, 100 s from now; each waiting one runs 0.11 of 1000 s
        assert (v.estimated_start - now).total_seconds() == pytest.approx(320.0, abs=1)
        assert pl.runtime_basis == ("11% of the walltime, as 30 recent jobs of its size "
                                    "used of theirs (every site)")
        counted_twice = place(PROBE, [(cfg, grid_engine_queue(now))], now=now,
                              calibration=cals)
        assert counted_twice.verdict("sgeq").calibration_samples == 60
        assert "as 60 recent jobs" in counted_twice.runtime_basis
    finally:
        fed.store.close()


async def dashboard_rows(tmp_path: Path, cals: dict[str, SiteCalibration]
                         ) -> dict[str, dict | None]:
    """sgeq's predicted starts on the dashboard, from these calibrations (what placement
    last read) and the queues the sites last showed."""
    fed = federation(tmp_path)
    taken = utcnow()
    snaps = {"sgeq": grid_engine_queue(taken),
             **{n: SiteSnapshot(site=n, taken_at=taken) for n in ("other", "other-pbs")}}

    async def snapshots(**_kw: object) -> dict[str, SiteSnapshot]:
        return snaps

    async def calibration(**_kw: object) -> dict[str, SiteCalibration]:
        return cals
    fed.snapshots = snapshots  # type: ignore[method-assign]
    fed.calibration = calibration  # type: ignore[method-assign]
    try:
        d = await fed.dashboard(user="me")
    finally:
        fed.store.close()
    site = next(s for s in d["sites"] if s["name"] == "sgeq")
    return {r["id"]: r["predicted_start"] for r in site["queue"]}


async def test_the_dashboard_borrows_as_placement_does_and_says_so(tmp_path) -> None:
    rows = await dashboard_rows(tmp_path, {"sgeq": SiteCalibration([]), "other": OTHER,
                                           "other-pbs": DOOR})
    assert rows["99"] is None  # running
    # as placement plans it (the test above): the running job ends 100 s from now, the
    # first waiting job starts then and runs 110 s; the bound is the walltime plan's (the
    # running job at its 1000 s, then each waiting one: 900 s, then 1,900 s)
    first, second = rows["100"], rows["101"]
    assert first["source"] == second["source"] == "borrowed"
    assert first["median_s"] == pytest.approx(100, abs=2)
    assert second["median_s"] == pytest.approx(210, abs=2)
    assert (first["p90_s"], second["p90_s"]) == (pytest.approx(900, abs=2),
                                                 pytest.approx(1900, abs=2))


async def test_the_dashboard_has_nothing_to_borrow_without_a_calibrated_site(tmp_path) -> None:
    # no estimate from the scheduler and nobody to borrow from: no prediction, as before
    rows = await dashboard_rows(tmp_path, {"sgeq": SiteCalibration([])})
    assert rows == {"99": None, "100": None, "101": None}


def test_second_doors_are_the_entries_with_a_door_to_another_listed_entry(tmp_path) -> None:
    """`auto: false` alone (alpha-cheap: kept out of `--site auto` for its cost) made an
    entry a second door before, so its jobs lent nothing to the pool."""
    sites = tmp_path / "sites.yaml"
    local = {"kind": "local"}
    sites.write_text(yaml.safe_dump({"sites": [
        {"name": "alpha", "transport": local},
        {"name": "alpha-pbs", "scheduler": "pbs", "auto": False, "transport": local,
         "metadata": {"door_to": "alpha"}},
        {"name": "alpha-cheap", "auto": False, "transport": local},
        {"name": "alpha-mfa", "transport": local, "metadata": {"door_to": "alpha"}},
        {"name": "beta", "transport": local, "metadata": {"door_to": "beta"}},  # itself
        {"name": "gamma", "transport": local, "metadata": {"door_to": "gone"}}]}))
    fed = Federation(sites, store=Store(tmp_path / "s.sqlite3"))
    try:
        assert fed.sites.second_doors() == {"alpha-pbs": "alpha", "alpha-mfa": "alpha"}
    finally:
        fed.store.close()


@pytest.mark.parametrize("door_to, lent", [(None, 60), ("other", 30)])
def test_an_auto_false_entry_lends_to_the_pool_unless_it_names_its_first_door(
        tmp_path, door_to, lent) -> None:
    """other-pbs's 30 jobs are pooled for sgeq unless it says it is a door to other."""
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [
        {"name": "sgeq", "scheduler": "sge", "transport": {"kind": "local"}},
        {"name": "other", "scheduler": "slurm", "transport": {"kind": "local"}},
        {"name": "other-pbs", "scheduler": "pbs", "auto": False,
         "transport": {"kind": "local"},
         **({"metadata": {"door_to": door_to}} if door_to else {})}]}))
    fed = Federation(sites, store=Store(tmp_path / "s.sqlite3"))
    try:
        now = utcnow()
        pl = place(PROBE, [(fed.sites["sgeq"].cfg, grid_engine_queue(now))], now=now,
                   calibration={"sgeq": SiteCalibration([]), "other": OTHER,
                                "other-pbs": DOOR}, doors=fed.sites.second_doors())
        v = pl.verdict("sgeq")
        assert v is not None and (v.calibration_samples, v.calibration_borrowed) == (lent, True)
    finally:
        fed.store.close()
