"""Held work (a staging, a transfer, a workflow) whose engine closed or died is resumed by any
engine that opens on the store — a CLI's or a kernel's, not only a server's — and never by two.
Two engines on one store in one test; the sites are local (no test bed)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from test_lease_fencing import _fed, _fed_sites

from diamond_jupyter.federation import Federation
from diamond_jupyter.store import Store


async def _stuck_copy(fed: Federation, src: Path, dst: Path) -> str:
    """Start a copy in `fed` that hangs mid-way (its engine will 'crash' there)."""
    started = asyncio.Event()

    async def hang(rec, *_a):
        fed.store.update_transfer(rec.id, state="ACTIVE")
        started.set()
        await asyncio.Event().wait()
    fed.mover._run_sftp = hang  # type: ignore[method-assign]
    rec = await fed.transfer(f"alpha:{src}", f"beta:{dst}", wait=False)
    await asyncio.wait_for(started.wait(), 10)
    return rec.id


async def _finished(fed: Federation, transfer_id: str):
    task = fed.mover._tasks.get(transfer_id)
    if task is not None:
        await asyncio.wait_for(task, 30)
    return fed.store.get_transfer(transfer_id)


_CRASHING_ENGINE = """
import asyncio, sys
from diamond_jupyter.federation import Federation
from diamond_jupyter.store import Store

async def main():
    fed = Federation(sys.argv[1], store=Store(sys.argv[2]))
    await fed.start(recover=False)

    async def hang(rec, *_a):
        fed.store.update_transfer(rec.id, state="ACTIVE")
        print(rec.id, fed.engine_id, flush=True)
        await asyncio.Event().wait()
    fed.mover._run_sftp = hang
    await fed.transfer("alpha:" + sys.argv[3], "beta:" + sys.argv[4], wait=False)
    await asyncio.Event().wait()

asyncio.run(main())
"""


async def test_a_copy_whose_engine_crashed_is_finished_by_the_next_cli_engine(tmp_path):
    """A CLI engine is killed mid-copy (never closed, nothing handed back). Before, only a
    server's start picked the copy up; now any engine that opens resumes it once its owner is
    gone, and not while the owner lives."""
    sites = _fed_sites(tmp_path)
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("payload\n")
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _CRASHING_ENGINE, str(sites), str(tmp_path / "store.sqlite3"),
        str(src), str(dst), stdout=asyncio.subprocess.PIPE)
    try:
        line = await asyncio.wait_for(child.stdout.readline(), 60)
        tid, owner = line.decode().split()
        other = _fed(sites)
        await other.start(recover=False, resume_held=True)
        assert other.held_work() == {}  # its engine lives: not held, not taken
        assert await other.resume_held() == {}
        assert other.store.get_transfer(tid).data["owner"] == owner
    finally:
        child.kill()  # the crash
        await child.wait()
    try:
        assert other.held_work() == {"transfers": [tid]}
        assert await other.resume_held() == {"transfers": [tid]}
        rec = await _finished(other, tid)
        assert rec.state == "SUCCEEDED", rec.error
        assert rec.data["owner"] == other.engine_id
        assert dst.read_text() == "payload\n"
    finally:
        await other.close()


async def test_two_engines_resuming_at_once_drive_a_held_copy_once(tmp_path):
    """A copy handed back by a closing engine is held; two engines that resume at the same
    time: exactly one takes it, the other leaves it alone."""
    sites = _fed_sites(tmp_path)
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("once\n")
    first = _fed(sites)
    await first.start(recover=False)
    tid = await _stuck_copy(first, src, dst)
    await first.close()  # hands the copy back: its claim dies with the engine
    assert first.held_work() == {"transfers": [tid]}

    a, b = _fed(sites), _fed(sites)
    await asyncio.gather(a.start(recover=False), b.start(recover=False))
    try:
        took = await asyncio.gather(a.resume_held(), b.resume_held())
        assert sorted(map(len, took)) == [0, 1]
        winner = a if took[0] else b
        rec = await _finished(winner, tid)
        assert rec.state == "SUCCEEDED" and rec.data["owner"] == winner.engine_id
        assert dst.read_text() == "once\n"
    finally:
        await asyncio.gather(a.close(), b.close())


def _cli(tmp_path: Path, *args: str, handover: str = "1") -> subprocess.CompletedProcess:
    env = {**os.environ, "DIAMOND_DATA_DIR": str(tmp_path / "data"),
           "DIAMOND_CONFIG": str(tmp_path / "sites.yaml"), "DIAMOND_HANDOVER": handover}
    return subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                          capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)


async def _held_copy(tmp_path: Path) -> tuple[str, Path]:
    sites = _fed_sites(tmp_path)
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("handed over\n")
    fed = _fed(sites)
    await fed.start(recover=False)
    tid = await _stuck_copy(fed, src, dst)
    await fed.close()
    return tid, dst


async def test_diamond_resume_drives_held_work_to_its_end_and_exits(tmp_path):
    tid, dst = await _held_copy(tmp_path)
    res = await asyncio.to_thread(_cli, tmp_path, "resume", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == {"transfers": [tid]}
    assert Store(tmp_path / "store.sqlite3").get_transfer(tid).state == "SUCCEEDED"
    assert dst.read_text() == "handed over\n"
    again = await asyncio.to_thread(_cli, tmp_path, "resume", "--json")
    assert json.loads(again.stdout) == {}  # nothing held any more


async def test_a_short_command_hands_held_work_to_a_background_resume(tmp_path):
    """`diamond jobs` (any short command) finds a copy no engine drives: it does not block on
    it, it starts one background `diamond resume`, which finishes it."""
    tid, dst = await _held_copy(tmp_path)
    res = await asyncio.to_thread(_cli, tmp_path, "jobs", "--json")
    assert res.returncode == 0, res.stderr
    assert "handed to `diamond resume` (pid" in res.stderr
    store = Store(tmp_path / "store.sqlite3")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while store.get_transfer(tid).state != "SUCCEEDED" and loop.time() < deadline:
        await asyncio.sleep(0.1)  # the background process works on its own: look again
    assert store.get_transfer(tid).state == "SUCCEEDED"
    assert dst.read_text() == "handed over\n"
    again = await asyncio.to_thread(_cli, tmp_path, "jobs", "--json")
    assert "handed" not in again.stderr  # nothing held now: no second hand-over


async def test_a_workflow_whose_engine_stopped_beating_is_driven_by_one_other_engine(
        tmp_path):
    """A workflow's engine stops beating mid-run (its loop hung, never closed): two engines
    that look for held work at once — exactly one adopts it and submits its next step."""
    from lease_helpers import age_heartbeat
    from test_workflow_unseen import _Ops, _until, load

    from diamond_jupyter import leases
    from diamond_jupyter.model import JobState
    from diamond_jupyter.workflow.engine import WorkflowEngine

    wf = load("""\
        name: pair
        steps:
          - {name: first, site: alpha, script: x}
          - {name: second, site: beta, needs: [first], script: x}
        """)
    store = Store(tmp_path / "s.sqlite")
    owners = [leases.EngineLease(store.beats) for _ in range(3)]
    opses = [_Ops(store) for _ in owners]
    for ops, lease in zip(opses, owners, strict=True):
        ops.engine_id = lease.id
    hung, b, c = (WorkflowEngine(ops) for ops in opses)
    try:
        wid = await hung.run(wf)
        # second (beta) goes in held before first (alpha) has a job (issue 17)
        assert [s[0] for s in opses[0].submits] == ["second", "first"]
        assert await b.resume() == [] and await c.resume() == []  # its owner beats
        age_heartbeat(store, owners[0].id)
        took = await asyncio.gather(b.resume(), c.resume())
        assert sorted(took) == [[], [wid]]
        driver, ops = (b, opses[1]) if took[0] else (c, opses[2])
        assert store.get_workflow(wid).data["owner"] == ops.engine_id
        first = store.job_by_token(store.get_workflow(wid).step("first").token)
        store.apply_state(first.id, JobState.COMPLETED, exit_code=0)
        await driver.advance(wid)
        await _until(driver, wid, {"second": "released"})  # the adopter moves it on
        second = store.get_workflow(wid).step("second").token
        assert ops.releases == [store.job_by_token(second).id]
        assert not (opses[1] if ops is opses[2] else opses[2]).submits
    finally:
        for eng in (hung, b, c):
            await eng.close()
        for lease in owners:
            lease.release()


async def test_a_kernel_engine_takes_a_copy_handed_over_after_its_start(tmp_path):
    """A kernel's engine (long-lived, not a server) looked for held stagings and transfers
    only at its start: a copy a CLI engine handed back later waited for the next kernel, or
    for a `diamond resume`. Now it looks again at every sweep."""
    sites = _fed_sites(tmp_path)
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("later\n")
    kernel = _fed(sites)
    kernel.held_sweep_s = 0.05  # (15 s in use)
    done = asyncio.Event()
    kernel.subscribe(lambda ev: done.set() if ev.kind == "transfer.state"
                     and ev.data.get("state") == "SUCCEEDED" else None)
    await kernel.start(recover=False, resume_held=True)
    try:
        assert kernel.held_work() == {}  # nothing held at its start
        cli = _fed(sites)
        await cli.start(recover=False)
        tid = await _stuck_copy(cli, src, dst)
        await cli.close()  # hands the copy back
        await asyncio.wait_for(done.wait(), 30)
        rec = kernel.store.get_transfer(tid)
        assert rec.state == "SUCCEEDED" and rec.data["owner"] == kernel.engine_id
        assert dst.read_text() == "later\n"
    finally:
        await kernel.close()


async def test_one_look_for_held_work_takes_a_bounded_number(tmp_path):
    sites = _fed_sites(tmp_path)
    first = _fed(sites)
    await first.start(recover=False)
    ids = []
    for i in range(3):
        src = tmp_path / f"in{i}.txt"
        src.write_text(f"{i}\n")
        ids.append(await _stuck_copy(first, src, tmp_path / f"out{i}.txt"))
    await first.close()
    other = _fed(sites)
    await other.start(recover=False)
    try:
        took = await other.resume_held(limit=2)
        assert took == {"transfers": ids[:2]}  # the oldest first
        assert other.held_work() == {"transfers": ids[2:]}
        assert await other.resume_held(limit=2) == {"transfers": ids[2:]}
        for tid in ids:
            assert (await _finished(other, tid)).state == "SUCCEEDED"
    finally:
        await other.close()
