"""Claims on long-running work (transfers, stagings, agent tasks) among engines sharing a
store: a live engine's claim holds; a closed engine's, a dead process's, or a silent other
host's does not."""

from __future__ import annotations

import os
import subprocess
import sys
import time

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
        leases.beat(store.beats, other)
        assert leases.alive(other, store.beats)
        old = time.time() - leases.STALE_S - 5
        os.utime(store.beats / other, (old, old))
        assert not leases.alive(other, store.beats)
        waiting = store.create_task("q", state="waiting", data={"owner": other})
        got = store.claim_task(waiting.id, me, states=("waiting",), to_state="running")
        assert got.state == "running" and got.waiting_on == []
        assert store.claim_task(waiting.id, me, states=("waiting",)) is None  # not waiting now
    finally:
        leases.unregister(me)
