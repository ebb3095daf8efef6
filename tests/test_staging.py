"""Staged jobs on the real test bed: stage-in overlaps the queue wait (held, then released),
a failed stage-in fails the job, stage-out brings results back after completion."""

from __future__ import annotations

import secrets

import pytest

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec, JobState, StageEntry
from diamond_jupyter.store import Store
from diamond_jupyter.transfer import Location
from diamond_jupyter.transfer.staging import resolve

pytestmark = pytest.mark.testbed


@pytest.fixture
def fed(testbed_fed):
    return testbed_fed


def test_resolve_paths():
    sites = {"alpha": 1, "beta": 2}
    e = StageEntry(source="alpha:data/in.bin", destination="in.bin")
    assert resolve(e, sites, "beta", "/w/j1", "in") == (Location("alpha", "data/in.bin"),
                                                         Location("beta", "/w/j1/in.bin"))
    e = StageEntry(source="out/res.txt", destination="/srv/res.txt")
    assert resolve(e, sites, "beta", "/w/j1", "out") == (Location("beta", "/w/j1/out/res.txt"),
                                                          Location(None, "/srv/res.txt"))
    e = StageEntry(source="/srv/x", destination="")
    assert resolve(e, sites, "beta", "~/w", "in")[1] == Location("beta", "~/w/x")


def at(events, kind, **match):
    for e in events:
        if e.kind == kind and all(e.data.get(k) == v for k, v in match.items()):
            return e.at
    raise AssertionError(f"no {kind} {match} in {[e.kind for e in events]}")


async def test_stage_in_overlaps_the_queue_wait(fed, tmp_path):
    d = f"xfer-test/{secrets.token_hex(4)}"
    res = await fed.site("alpha").transport.run(
        ["sh", "-c", f"mkdir -p {d} && head -c 100M /dev/urandom > {d}/in.bin && "
                     f"sha256sum {d}/in.bin"], check=True, timeout=120)
    want = res.stdout.split()[0]
    spec = JobSpec(name="staged", script="sha256sum in.bin\n",
                   stage_in=[StageEntry(source=f"alpha:{d}/in.bin", destination="in.bin")],
                   stage_out=[StageEntry(source="in.bin", destination=str(tmp_path / "o.bin"))])
    job = await fed.submit(spec, "beta")
    done = await fed.wait(job.id, timeout=300)
    assert done.state == JobState.COMPLETED, done.reason
    assert (await fed.logs(job.id))["stdout"].split()[0] == want  # the job saw the data
    async for ev in fed.events(since=0):  # stage-out runs after completion
        if ev.kind.startswith("stage.out.") and ev.kind != "stage.out.started":
            assert ev.kind == "stage.out.done", ev.data
            break
    evs = fed.store.events_since(0, job_id=job.id, limit=None)
    submitted = at(evs, "job.submitted")
    stage_start, stage_done = at(evs, "stage.in.started"), at(evs, "stage.in.done")
    released = at(evs, "job.released")
    assert stage_start <= submitted < stage_done <= released <= done.started_at
    stage_s = (stage_done - stage_start).total_seconds()
    queue_s = (done.started_at - submitted).total_seconds()
    overlap_s = (stage_done - submitted).total_seconds()
    print(f"\nstaged job {job.id}: stage-in {stage_s:.2f} s, queue wait {queue_s:.2f} s, "
          f"overlap {overlap_s:.2f} s ({overlap_s / stage_s:.0%} of the stage-in hidden); "
          f"submitted {submitted.time()}, stage-in done {stage_done.time()}, "
          f"released {released.time()}, started {done.started_at.time()}")
    assert overlap_s > 0.5 * stage_s
    prog = [e for e in evs if e.kind == "transfer.progress"]
    assert prog and prog[-1].data["bytes_done"] == 100 << 20
    import hashlib

    h = hashlib.sha256()
    with open(tmp_path / "o.bin", "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    assert h.hexdigest() == want  # stage-out brought it back to the server
    await fed.site("alpha").transport.run(["rm", "-rf", d])


async def test_failed_stage_in_fails_the_held_job(fed):
    spec = JobSpec(name="nodata", script="echo should-not-run\n",
                   stage_in=[StageEntry(source="alpha:no/such/file.dat", destination="x")])
    job = await fed.submit(spec, "gamma")
    done = await fed.wait(job.id, timeout=120)
    assert done.state == JobState.FAILED
    assert done.reason.startswith("stage-in of alpha:no/such/file.dat failed: ")
    assert "no such file" in done.reason
    assert done.started_at is None  # it never ran
    async for ev in fed.events(since=0):
        if ev.kind == "stage.in.failed":
            assert ev.data["reason"] == done.reason
            break
    st = await fed.site("gamma").statuses([done.native_id])  # the held job was cancelled
    assert not st or st[0].state.terminal


async def test_user_hold_is_kept_after_stage_in(fed, tmp_path):
    src = tmp_path / "small.txt"
    src.write_text("x\n")
    spec = JobSpec(script="cat small.txt\n", stage_in=[StageEntry(source=str(src),
                                                                  destination="small.txt")])
    job = await fed.submit(spec, "alpha", hold=True)
    async for ev in fed.events(since=0):
        if ev.kind in ("stage.in.done", "stage.in.failed"):
            assert ev.kind == "stage.in.done"
            break
    assert not any(e.kind == "job.released" for e in fed.store.events_since(0, job_id=job.id))
    await fed.cancel(job.id)
    assert (await fed.wait(job.id, timeout=120)).state == JobState.CANCELLED


async def test_engine_restarted_mid_stage_in_finishes_the_job(tb, tmp_path):
    """The engine closes while the stage-in copies; a new engine on the same store resumes
    the copy from its partial file, releases the job and runs its stage-out."""
    store = tmp_path / "store.sqlite"
    fed1 = Federation(tb.config_path, store=Store(store), poll_interval_s=30, min_poll_s=0.5)
    await fed1.start()
    d = f"xfer-test/{secrets.token_hex(4)}"
    res = await fed1.site("alpha").transport.run(
        ["sh", "-c", f"mkdir -p {d} && head -c 150M /dev/urandom > {d}/in.bin && "
                     f"sha256sum {d}/in.bin"], check=True, timeout=120)
    want = res.stdout.split()[0]
    spec = JobSpec(name="staged-restart", script="sha256sum in.bin\n",
                   stage_in=[StageEntry(source=f"alpha:{d}/in.bin", destination="in.bin")],
                   stage_out=[StageEntry(source="in.bin", destination=str(tmp_path / "o.bin"))])
    job = await fed1.submit(spec, "gamma")
    async for ev in fed1.events(since=0):  # some of the stage-in has arrived
        if ev.kind == "transfer.progress" and ev.data["bytes_done"] > 0:
            break
    await fed1.close()
    fed1.store.close()
    fed2 = Federation(tb.config_path, store=Store(store), poll_interval_s=30, min_poll_s=0.5)
    try:
        await fed2.start()  # resumes the copy and the staging
        done = await fed2.wait(job.id, timeout=300)
        assert done.state == JobState.COMPLETED, done.reason
        assert (await fed2.logs(job.id))["stdout"].split()[0] == want
        async for ev in fed2.events(since=0):
            if ev.kind in ("stage.out.done", "stage.out.failed"):
                assert ev.kind == "stage.out.done", ev.data
                break
        evs = fed2.store.events_since(0, job_id=job.id, limit=None)
        kinds = [e.kind for e in evs]
        assert kinds.count("stage.in.started") == 1 and kinds.count("stage.in.resumed") == 1
        assert kinds.count("stage.in.done") == 1 and kinds.count("job.released") == 1
        assert "stage.in.failed" not in kinds
        xfer = fed2.store.get_transfer(f"{done.token}-in-0")
        assert xfer.state == "SUCCEEDED" and xfer.data["resumed_from"] > 0  # not from scratch
        assert fed2.store.get_transfer(f"stage-{done.token}").state == "SUCCEEDED"
        import hashlib

        assert hashlib.sha256((tmp_path / "o.bin").read_bytes()).hexdigest() == want
    finally:
        await fed2.site("alpha").transport.run(["rm", "-rf", d])
        await fed2.close()
