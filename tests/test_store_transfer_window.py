"""Placement's measured bandwidth comes from the newest transfers (`Store.newest_transfers`):
kept between submits and brought up to date from the rows changed since (the transfers
table's clock, schema v12), so a submit decodes what changed, not the last 200 transfers
again. The answer must be the plain read's, and the bandwidth figures the full read's, after
every kind of write (new copies, state changes, a row moved back in time, deletions, another
connection's writes). The work is counted (rows read), never timed."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

import pytest

from diamond_jupyter.calibration import measured_bandwidth
from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
from diamond_jupyter.federation import BANDWIDTH_LOOKBACK, Federation
from diamond_jupyter.model import BadInput
from diamond_jupyter.store import NewestTransfers, Store
from diamond_jupyter.store.codec import to_ts
from diamond_jupyter.transfer import parse_location

PLACES = ["/data/in", "alpha:/scratch/in", "beta:/in", "alpha:/out", "/out", "gamma:/x"]


def _same(store: Store, window: NewestTransfers) -> None:
    """The window answers what a plain read of the same transfers answers, field by field."""
    got = store.newest_transfers(window)
    assert [t.model_dump() for t in got] == \
        [t.model_dump() for t in store.list_transfers(limit=window.limit)]


def _full_read_bandwidth(fed: Federation) -> dict[tuple[str | None, str | None], float]:
    """The figures as placement measured them before the window: the newest transfers read
    and decoded whole."""
    finished = []
    for t in fed.store.list_transfers(limit=BANDWIDTH_LOOKBACK):
        if t.state == "SUCCEEDED" and t.bytes:
            try:
                src = parse_location(t.src, fed.sites).site
                dst = parse_location(t.dst, fed.sites).site
            except BadInput:
                continue
            finished.append((src, dst, t.bytes, (t.updated_at - t.created_at).total_seconds()))
    return measured_bandwidth(finished)


def _copy(store: Store, rng: random.Random, kind: str = "sftp") -> str:
    src, dst = rng.sample(PLACES, 2)
    rec = store.record_transfer(kind, src, dst)
    if rng.random() < 0.8:
        store.update_transfer(rec.id, state=rng.choice(["SUCCEEDED", "SUCCEEDED", "FAILED"]),
                              bytes=rng.choice([500_000, 5_000_000, 80_000_000]))
    _age(store, rec.id, rng.uniform(0.5, 30.0), rng.uniform(0, 3600))
    return rec.id


def _age(store: Store, transfer_id: str, took_s: float, ago_s: float) -> None:
    """Move a transfer back in time (its copy took `took_s`, it began `ago_s` before its
    last update): records' times are the clock's, so tests set them."""
    rec = store.get_transfer(transfer_id)
    end = rec.updated_at - timedelta(seconds=ago_s)
    with store._write() as c:
        c.execute("UPDATE transfers SET created_at = ?, updated_at = ? WHERE id = ?",
                  (to_ts(end - timedelta(seconds=took_s)), to_ts(end), transfer_id))


def test_a_window_decodes_only_the_transfers_changed_since(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    rng = random.Random(3)
    try:
        ids = [_copy(store, rng) for _ in range(12)]
        window = NewestTransfers(5)
        _same(store, window)
        assert (window.full_reads, window.rows_read) == (1, 5)
        assert store.newest_transfers(window) is store.newest_transfers(window)  # no change
        assert window.rows_read == 5
        store.record_transfer("sftp", "/a", "alpha:/a")  # one new transfer: its row alone
        _same(store, window)
        assert (window.full_reads, window.rows_read) == (1, 6)
        store.record_transfer("stage", "/b", "alpha:/b")  # a staged job's: never a member
        before = store.newest_transfers(window)
        assert store.newest_transfers(window) is before and window.full_reads == 1
        store.update_transfer(ids[0], state="FAILED")  # older than the window: stays out
        _same(store, window)
        assert window.full_reads == 1
        with store._write() as c:  # a deletion cannot be told from the rows: read whole
            c.execute("DELETE FROM transfers WHERE id = ?", (ids[-1],))
        _same(store, window)
        assert window.full_reads == 2
    finally:
        store.close()


def test_a_member_moved_back_in_time_out_of_a_full_window_reads_it_whole(
        tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    try:
        ids = [store.record_transfer("sftp", f"/f{i}", "alpha:/f").id for i in range(6)]
        window = NewestTransfers(3)
        _same(store, window)
        _age(store, ids[-1], 1.0, 7200)  # the newest becomes the oldest: ids[2] comes in
        _same(store, window)
        assert window.full_reads == 2
        assert [t.id for t in store.newest_transfers(window)] == ids[-2:-5:-1]
    finally:
        store.close()


def test_a_window_sees_another_connections_writes(tmp_path: Path) -> None:
    """Another engine sharing the store file (its own connection) writes: the triggers
    advance the clock for it too."""
    one, two = Store(tmp_path / "s.sqlite"), Store(tmp_path / "s.sqlite")
    try:
        first = one.record_transfer("sftp", "/a", "alpha:/a")
        window = NewestTransfers(4)
        _same(one, window)
        two.record_transfer("globus", "/b", "beta:/b")
        two.update_transfer(first.id, state="SUCCEEDED", bytes=9_000_000)
        _same(one, window)
        assert window.full_reads == 1 and len(one.newest_transfers(window)) == 2
        _same(two, window)  # read from another store: whole
        assert window.full_reads == 2
    finally:
        one.close()
        two.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_bandwidth_figures_are_the_full_reads_after_any_writes(tmp_path: Path,
                                                                   seed: int) -> None:
    """A federation's measured bandwidth, kept between placements, equals the full read's
    after each of a seeded run of writes, and is worked out again only when a transfer of
    the newest ones changed."""
    rng = random.Random(seed)
    sites = [SiteConfig(name=n, scheduler="slurm", transport=TransportConfig(kind="local"))
             for n in ("alpha", "beta", "gamma")]
    fed = Federation(FederationConfig(sites=sites), store=Store(tmp_path / "s.sqlite"))
    store = fed.store
    try:
        ids = [_copy(store, rng) for _ in range(BANDWIDTH_LOOKBACK + 40)]
        assert fed.measured_bandwidth() == _full_read_bandwidth(fed) != {}
        kept = fed.measured_bandwidth()
        assert fed.measured_bandwidth() is kept  # nothing changed: nothing worked out again
        for _ in range(60):
            what = rng.choice(["copy", "copy", "stage", "state", "age", "delete"])
            if what == "copy":
                ids.append(_copy(store, rng))
            elif what == "stage":
                _copy(store, rng, kind="stage")
            elif what == "state":
                store.update_transfer(rng.choice(ids), state="SUCCEEDED",
                                      bytes=rng.choice([2_000_000, 40_000_000]))
            elif what == "age":
                _age(store, rng.choice(ids), rng.uniform(1, 20), rng.uniform(0, 7200))
            else:
                gone = ids.pop(rng.randrange(len(ids)))
                with store._write() as c:
                    c.execute("DELETE FROM transfers WHERE id = ?", (gone,))
            assert fed.measured_bandwidth() == _full_read_bandwidth(fed), what
            _same(store, fed._copies)
        # a placement that sees no change decodes no row
        read = fed._copies.rows_read
        for _ in range(20):
            fed.measured_bandwidth()
        assert fed._copies.rows_read == read
    finally:
        store.close()


def test_a_store_from_before_the_clock_keeps_its_transfers_in_the_window(
        tmp_path: Path) -> None:
    """A v11 store's transfers are the window's after the migration to v12."""
    import sqlite3

    from diamond_jupyter.store import db

    path = tmp_path / "s.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    for migration in db.MIGRATIONS[:11]:
        db.apply_migration(conn, migration)
    conn.executemany("INSERT INTO transfers (id, kind, src, dst, state, bytes, created_at,"
                     " updated_at) VALUES (?, 'sftp', '/a', 'alpha:/a', 'SUCCEEDED', ?, ?, ?)",
                     [(f"t{i}", 1_000_000 * (i + 1), f"2026-01-01T00:00:{i:02d}+00:00",
                       f"2026-01-01T00:01:{i:02d}+00:00") for i in range(5)])
    conn.execute("PRAGMA user_version = 11")
    conn.close()
    store = Store(path)
    try:
        window = NewestTransfers(3)
        _same(store, window)
        assert [t.id for t in store.newest_transfers(window)] == ["t4", "t3", "t2"]
        store.update_transfer("t1", state="FAILED")  # the clock goes on from the old rows
        store.record_transfer("sftp", "/b", "alpha:/b")
        _same(store, window)
        assert window.full_reads == 1
    finally:
        store.close()
