"""Claims on long-running work (transfers, stagings, agent tasks) among engines sharing a
store: a live engine's claim holds; a closed engine's, a dead process's, or a silent other
host's does not."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from lease_helpers import age_heartbeat

from diamond_jupyter import leases
from diamond_jupyter.store import Store


def test_a_claim_holds_while_its_engine_lives(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    rec = store.record_transfer("sftp", "a:x", "b:x")
    a, b = leases.new_engine_id(), leases.new_engine_id()
    leases.register(a)
    leases.register(b)
    try:
        assert store.claim_transfer(rec.id, a).data["owner"] == a
        assert store.claim_transfer(rec.id, b) is None  # a runs it
        assert store.claim_transfer(rec.id, a) is not None  # again by a: fine
        leases.unregister(a)  # a closed (without giving it back)
        assert store.claim_transfer(rec.id, b).data["owner"] == b
        store.release_transfer(rec.id, a)  # not a's any more: nothing changes
        assert store.get_transfer(rec.id).data["owner"] == b
        store.release_transfer(rec.id, b)
        assert store.get_transfer(rec.id).data["owner"] is None
    finally:
        leases.unregister(a)
        leases.unregister(b)


def test_a_dead_process_or_a_silent_host_holds_nothing(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    me = leases.new_engine_id()
    leases.register(me)
    try:
        child = subprocess.run([sys.executable, "-c", "from diamond_jupyter import leases;"
                                "print(leases.new_engine_id())"], capture_output=True,
                               text=True, check=True, env={**os.environ})
        dead = child.stdout.strip()
        assert not leases.alive(dead)  # its process has exited
        task = store.create_task("p", data={"owner": dead})
        assert store.claim_task(task.id, me).data["owner"] == me
        other = f"elsewhere:{os.getpid()}:1:abcd"
        assert not leases.alive(other, store.beats)  # no heartbeat at all
        now = [0.0]
        store.beats.clock = lambda: now[0]  # this reader's own clock
        leases.beat(store.beats, other)
        assert leases.alive(other, store.beats)
        now[0] += leases.STALE_S + 5  # its beat unchanged that long, as we saw it
        assert not leases.alive(other, store.beats)
        waiting = store.create_task("q", state="waiting", data={"owner": other})
        got = store.claim_task(waiting.id, me, states=("waiting",), to_state="running")
        assert got.state == "running" and got.waiting_on == []
        assert store.claim_task(waiting.id, me, states=("waiting",)) is None  # not waiting now
    finally:
        leases.unregister(me)


def test_an_engine_dropped_without_closing_holds_nothing(tmp_path):
    """An engine object dropped without `release` (its face crashed, its loop gone) kept its
    id registered for the life of the process: its claims were never taken over."""
    import gc

    store = Store(tmp_path / "s.sqlite")
    rec = store.record_transfer("sftp", "a:x", "b:x")
    crashed, other = leases.EngineLease(store.beats), leases.EngineLease(store.beats)
    try:
        assert store.claim_transfer(rec.id, crashed.id) is not None
        assert store.claim_transfer(rec.id, other.id) is None  # still held
        crashed = None
        gc.collect()
        assert store.claim_transfer(rec.id, other.id).data["owner"] == other.id
    finally:
        other.release()


def test_a_live_engine_that_stopped_beating_loses_its_claims(tmp_path):
    """An engine of a live process (this one, or another on this host) whose heartbeat is
    older than STALE_S (its loop stopped) is taken over; a fresh one is not."""
    store = Store(tmp_path / "s.sqlite")
    hung, other = leases.EngineLease(store.beats), leases.EngineLease(store.beats)
    try:
        rec = store.record_transfer("sftp", "a:x", "b:x")
        assert store.claim_transfer(rec.id, hung.id) is not None
        assert store.claim_transfer(rec.id, other.id) is None
        age_heartbeat(store, hung.id)
        assert not leases.alive(hung.id, store.beats)
        assert store.claim_transfer(rec.id, other.id).data["owner"] == other.id
        parent = f"{leases.HOST}:{os.getppid()}:{leases._start_time(os.getppid())}:beef"
        leases.beat(store.beats, parent)
        assert leases.alive(parent, store.beats)  # a live process, beating
        age_heartbeat(store, parent)
        assert not leases.alive(parent, store.beats)
        leases.stop_beating(store.beats, parent)  # it closed: its heartbeat is gone
        assert not leases.alive(parent, store.beats)
    finally:
        hung.release()
        other.release()


def test_two_engines_racing_for_one_item_one_takes_it(tmp_path):
    """Two engines, each on its own connection, claim the same items at the same moment:
    each item gets exactly one owner."""
    import threading

    path = tmp_path / "s.sqlite"
    ids = [Store(path).record_transfer("sftp", "a:x", f"b:{i}").id for i in range(20)]
    engines = [leases.EngineLease(Store(path).beats) for _ in range(2)]
    won: dict[str, list[str]] = {e.id: [] for e in engines}
    gate = threading.Barrier(2)

    def take(engine: leases.EngineLease) -> None:
        store = Store(path)
        gate.wait()
        for i in ids:
            if store.claim_transfer(i, engine.id) is not None:
                won[engine.id].append(i)
    try:
        threads = [threading.Thread(target=take, args=(e,)) for e in engines]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(won[engines[0].id] + won[engines[1].id]) == sorted(ids)
        assert not set(won[engines[0].id]) & set(won[engines[1].id])
        owners = {Store(path).get_transfer(i).data["owner"] for i in ids}
        assert owners <= {e.id for e in engines}
    finally:
        for e in engines:
            e.release()


def test_another_hosts_engine_is_judged_by_its_beats_changing_not_by_its_clock(tmp_path):
    """Hosts sharing a store may disagree on the time. An engine of another host whose clock
    is an hour behind ours looked dead at its every beat (its work was taken over and run
    twice); one whose clock is an hour ahead, once gone, looked alive for an hour. Now the
    reader watches the beat change on its own clock: alive while it changes, gone once it
    has not for STALE_S, whatever the writer's clock says."""
    store = Store(tmp_path / "s.sqlite")
    me = leases.new_engine_id()
    leases.register(me)
    now = [1000.0]
    store.beats.clock = lambda: now[0]
    try:
        for skew in (-3600.0, 3600.0):
            other = f"elsewhere:{os.getpid()}:1:{'behind' if skew < 0 else 'ahead'}"
            rec = store.record_transfer("sftp", "alpha:x", f"beta:{other}")

            def beat_at(t: float, other: str = other) -> None:  # the writer's own clock
                with store._write() as c:
                    c.execute("INSERT INTO engines (id, beat_at) VALUES (?, ?) ON CONFLICT(id)"
                              " DO UPDATE SET beat_at = excluded.beat_at", (other, t))
            writer = time.time() + skew
            beat_at(writer)
            store.claim_transfer(rec.id, other)
            for _ in range(5):  # it beats every BEAT_S, for longer than STALE_S in all
                now[0] += leases.BEAT_S
                writer += leases.BEAT_S
                beat_at(writer)
                assert leases.alive(other, store.beats), skew
                assert store.claim_transfer(rec.id, me) is None  # never taken from it
            now[0] += leases.STALE_S - 1  # then it stops beating
            assert leases.alive(other, store.beats)
            now[0] += 2
            assert not leases.alive(other, store.beats)
            assert store.claim_transfer(rec.id, me).data["owner"] == me
    finally:
        leases.unregister(me)
