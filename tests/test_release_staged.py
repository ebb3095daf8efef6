"""A job submitted held (`diamond submit --hold`) whose stage-in is still copying: a release
asked then was sent to the scheduler at once, and the job could start without its input.
Now the release is kept (recorded, so a restart loses nothing) and carried out by the
staging once the input has arrived; asked after that, it is sent at once. No test bed."""

from __future__ import annotations

import asyncio

import pytest
from held_staging import NATIVE_ID, HeldStaging

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput

WAIT_S = 60


async def _event(fed, job_id: str, kind: str):
    async def seen():
        while not (evs := fed.store.events_since(0, kinds=[kind], job_id=job_id, limit=1)):
            await asyncio.sleep(0.05)
        return evs[0]
    return await asyncio.wait_for(seen(), WAIT_S)


async def submitted_copying(bed: HeldStaging, *, stage_out: bool = False):
    """An engine that has submitted the held staged job, its stage-in still copying."""
    fed = bed.engine(archive_reachable=False)
    await fed.start(recover=False)
    job = await fed.submit(bed.spec(stage_out=stage_out), "here", hold=True)
    assert job.native_id == NATIVE_ID
    await _event(fed, job.id, "stage.in.started")
    return fed, job


async def test_a_release_during_the_stage_in_is_kept_and_carried_out_after_a_restart(
        tmp_path):
    bed = HeldStaging(tmp_path)
    fed, job = await submitted_copying(bed)
    try:
        assert (await fed.release(job.id)).id == job.id
        assert bed.releases() == []  # not while its input is copying
        said = fed.release_waiting(job.id)
        assert said == (f"release of {job.id} kept: its stage-in (1 entry) is still copying; "
                        "it is released when its input has arrived (`diamond status "
                        f"{job.id}`; a failed stage-in fails it instead)")
    finally:
        await fed.close()
    # the next engine (the sites file now reaching archive) resumes the staging: the kept
    # release is carried out once the input is there
    again = bed.engine(archive_reachable=True)
    await again.start()
    try:
        released = await _event(again, job.id, "job.released")
        done = again.store.events_since(0, kinds=["stage.in.done"], job_id=job.id, limit=1)
        assert done and done[0].seq < released.seq
        assert bed.releases() == [f"scontrol release {NATIVE_ID}"]
        assert (tmp_path / "wd" / "in.dat").read_text() == "input words\n"
        assert again.release_waiting(job.id) is None
    finally:
        await again.close()


async def test_a_held_job_not_asked_to_be_released_stays_held_after_its_stage_in(tmp_path):
    """...and a release asked after it is sent at once, and recorded, so that an engine
    resuming the staging later (for its stage-out) does not send it again."""
    bed = HeldStaging(tmp_path)
    fed, job = await submitted_copying(bed, stage_out=True)
    await fed.close()
    again = bed.engine(archive_reachable=True)
    await again.start()
    try:
        await _event(again, job.id, "stage.in.done")
        assert again.release_waiting(job.id) is None
        assert bed.releases() == []  # held by the user: only a release starts it
        await again.release(job.id)  # asked now: sent at once
        assert bed.releases() == [f"scontrol release {NATIVE_ID}"]
    finally:
        await again.close()
    # an engine resuming the staging (it waits for the job's end) does not release it again
    third = bed.engine(archive_reachable=True)
    assert not third.journal.bus._queues
    await third.start()
    try:
        assert third.store.list_transfers(states=["ACTIVE"], kinds=["stage"], limit=None)
        bus = third.journal.bus

        async def past_its_release() -> None:  # the staging awaits the job's end
            while not bus._queues:
                await asyncio.sleep(0.05)
        await asyncio.wait_for(past_its_release(), WAIT_S)
        third.journal.apply(job.id, job.state.COMPLETED, source="test")
        rec = third.store.get_transfer(f"stage-{job.token}")
        while rec.state == "ACTIVE":
            await asyncio.sleep(0.05)
            rec = third.store.get_transfer(f"stage-{job.token}")
        assert rec.state == "SUCCEEDED"
        assert bed.releases() == [f"scontrol release {NATIVE_ID}"]
    finally:
        await third.close()


async def test_a_release_of_an_ended_job_says_so(tmp_path):
    bed = HeldStaging(tmp_path)
    fed, job = await submitted_copying(bed)
    try:
        await fed.cancel(job.id)
        fed.journal.apply(job.id, job.state.CANCELLED, source="test")
        with pytest.raises(BadInput, match=rf"^{job.id} has ended \(CANCELLED\): nothing to "
                                           "release$"):
            await fed.release(job.id)
    finally:
        await fed.close()


async def test_fault_a_cancel_during_a_stage_in_copys_backoff_does_not_wait_it_out(tmp_path):
    """The stage-in's copy waits an hour (backoff_s: 3600) before its second try: the
    job's cancel, which waits for the copy to stop, waited that hour out."""
    bed = HeldStaging(tmp_path, backoff_s=3600)
    fed, job = await submitted_copying(bed)
    try:
        retry = await _event(fed, job.id, "transfer.retry")
        assert retry.data["in_s"] == 3600
        await asyncio.wait_for(fed.cancel(job.id), WAIT_S)
        copies = [t for t in fed.store.list_transfers(limit=None)
                  if t.id.startswith(f"{job.token}-in-")]
        assert copies and {t.state for t in copies} == {"CANCELLED"}, copies
        assert bed.releases() == []
    finally:
        await fed.close()


@pytest.mark.parametrize("directive", ["#SBATCH --hold", "#SBATCH -H", "#PBS -h", "#BSUB -H",
                                       "#$ -h"])
def test_a_scripts_own_hold_is_read_as_the_users(directive):
    assert Federation.parse(f"#!/bin/sh\n{directive}\necho hi\n").hold


async def test_a_job_held_by_its_script_stays_held_after_its_stage_in(tmp_path):
    """`#SBATCH --hold` in the script is the user's hold as the submit's `hold` is: its
    staging no longer releases it once the input is there; the user's release does."""
    bed = HeldStaging(tmp_path)
    held = Federation.parse("#!/bin/sh\n#SBATCH --hold\ncat in.dat\n")
    spec = bed.spec().model_copy(update={"hold": held.hold})
    fed = bed.engine(archive_reachable=True)
    await fed.start(recover=False)
    try:
        job = await fed.submit(spec, "here")
        await _event(fed, job.id, "stage.in.done")
        rec = fed.store.get_transfer(f"stage-{job.token}")
        while rec.state == "ACTIVE":  # its staging has decided (and ended: no stage-out)
            await asyncio.sleep(0.05)
            rec = fed.store.get_transfer(f"stage-{job.token}")
        assert rec.state == "SUCCEEDED"
        assert (tmp_path / "wd" / "in.dat").read_text() == "input words\n"
        assert bed.releases() == []  # held by the script's user: only a release starts it
        await fed.release(job.id)
        assert bed.releases() == [f"scontrol release {NATIVE_ID}"]
    finally:
        await fed.close()
