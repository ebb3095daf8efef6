"""Job event lines: only a job's own wrapper can move it forward.

The wrapper signs each line with a per-job secret kept in the private job directory; the
monitor accepts a line only when the token, the native id and the signature all match.
An appended `end TOKEN 999999 0` once turned a pending job into COMPLETED with exit 0."""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from pathlib import Path

import pytest
from hostile_corpus import ALL, EVENT_LINES

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec, JobState
from diamond_jupyter.monitor import event_mac, parse_event_line, same_native, wrapper_prologue
from diamond_jupyter.store import Store


def _run_wrapped(tmp_path: Path, body: str, secret: str, job_id: str = "77") -> list[str]:
    ev, sec = tmp_path / "events.log", tmp_path / "secret"
    sec.write_text(secret + "\n")
    script = wrapper_prologue(str(ev), "0a0b0c0d0e0f", str(sec)) + body
    env = {"PATH": os.environ["PATH"], "SLURM_JOB_ID": job_id}
    subprocess.run(["bash", "-c", script], env=env, timeout=30, check=False)
    return ev.read_text().splitlines()


def test_the_wrapper_signs_its_lines_with_the_job_secret(tmp_path):
    secret = "ab" * 32
    lines = _run_wrapped(tmp_path, "echo working\nexit 3\n", secret)
    parsed = [parse_event_line(x) for x in lines]
    assert [(p.kind, p.token, p.native_id, p.rc) for p in parsed] == [
        ("start", "0a0b0c0d0e0f", "77", 0), ("end", "0a0b0c0d0e0f", "77", 3)]
    for p in parsed:
        assert p.mac == event_mac(secret, p.body)
        assert p.mac != event_mac("cd" * 32, p.body)
    assert secret not in (tmp_path / "events.log").read_text()  # never written in clear
    assert oct((tmp_path / "events.log").stat().st_mode & 0o777) == oct(0o600)


def test_a_job_without_its_secret_writes_lines_nobody_accepts(tmp_path):
    lines = _run_wrapped(tmp_path, "true\n", "")
    for p in map(parse_event_line, lines):
        assert p is not None and p.mac != event_mac("ab" * 32, p.body)


@pytest.mark.parametrize("line", EVENT_LINES + ALL)
def test_hostile_event_lines_never_crash_the_parser(line):
    ev = parse_event_line(line)
    assert ev is None or ev.mac != event_mac("ab" * 32, ev.body)


@pytest.mark.parametrize("line_id,job_id,same", [
    ("123", "123", True), ("124", "123", False), ("999999", "123", False),
    ("123.pbs1", "123", True), ("123", "123.pbs1", True),  # PBS short and full ids
    ("ƒ2", "1", True), ("f2", "1", True), ("0x1", "1", True),  # Flux's spellings
    ("0000.0000.0000.0001", "ƒ2", True), ("-", "123", False), ("", "123", False),
])
def test_native_ids_match_whatever_their_spelling(line_id, job_id, same):
    assert same_native(line_id, job_id) is same


# -- on the test bed ---------------------------------------------------------------------------

@pytest.fixture
def fed(testbed_fed):
    return testbed_fed


async def _append(site, line: str) -> None:
    await site.transport.run(["sh", "-c", 'printf "%s\\n" "$1" >> "$2"', "sh", line,
                              site.event_file], check=True)


def _sources(fed: Federation, job_id: str) -> list[tuple[str, str]]:
    return [(e.data.get("state"), e.data.get("source"))
            for e in fed.store.events_since(0, job_id=job_id) if e.kind == "job.state"]


async def test_a_forged_end_line_does_not_end_a_pending_job(fed):
    site = fed.sites["alpha"]
    held = await fed.submit(JobSpec(name="held", script="sleep 300\n"), "alpha", hold=True)
    mon = fed.monitors["alpha"]
    await mon.stream_connected.wait()
    now = f"{time.time():.3f}"
    body = f"{now} end {held.token} {held.native_id} 0"
    forged = [
        body,  # the old format: no signature at all
        f"{body} {'0' * 64}",
        f"{body} {hashlib.sha256(f'{0:064x} {body}'.encode()).hexdigest()}",  # wrong secret
        f"{now} start {held.token} {held.native_id} 0 {'f' * 64}",
    ]
    for line in forged:
        await _append(site, line)
    # a real job's own lines come after the forged ones in the file: once it is done, the
    # monitor has read (and refused) every forged line
    real = await fed.submit(JobSpec(name="real", script="true\n"), "alpha")
    done = await fed.wait(real.id, timeout=120)
    assert done.state == JobState.COMPLETED
    assert ("COMPLETED", "wrapper") in _sources(fed, real.id)
    assert mon.rejected_lines >= 3
    assert fed.job(held.id).state == JobState.PENDING
    assert ("COMPLETED", "wrapper") not in _sources(fed, held.id)
    await fed.cancel(held.id)
    assert (await fed.wait(held.id, timeout=120)).state == JobState.CANCELLED


async def test_a_line_signed_for_another_job_id_is_refused(fed):
    """A reused token or a copied line: the signature holds, the native id does not."""
    site = fed.sites["alpha"]
    job = await fed.submit(JobSpec(name="held", script="sleep 300\n"), "alpha", hold=True)
    mon = fed.monitors["alpha"]
    await mon.stream_connected.wait()
    secret = mon._secrets[job.token]
    body = f"{time.time():.3f} end {job.token} 999999 0"
    await _append(site, f"{body} {event_mac(secret, body)}")
    real = await fed.submit(JobSpec(name="real", script="true\n"), "alpha")
    await fed.wait(real.id, timeout=120)
    assert ("COMPLETED", "wrapper") in _sources(fed, real.id)
    assert fed.job(job.id).state == JobState.PENDING
    await fed.cancel(job.id)
    await fed.wait(job.id, timeout=120)


async def test_event_file_and_job_directory_are_private_and_the_secret_stays_there(fed, tmp_path):
    site = fed.sites["beta"]
    job = await fed.submit(JobSpec(name="p", script="true\n"), "beta")
    done = await fed.wait(job.id, timeout=120)
    assert ("COMPLETED", "wrapper") in _sources(fed, job.id)
    jd = site.job_dir(job.token)
    modes = {p: (await site.transport.stat(p)).mode & 0o777
             for p in (site.event_file, jd, f"{jd}/secret", f"{jd}/job.sh")}
    assert modes == {site.event_file: 0o600, jd: 0o700, f"{jd}/secret": 0o600,
                     f"{jd}/job.sh": 0o700}
    secret = (await site.transport.get_bytes(f"{jd}/secret")).decode().strip()
    assert len(secret) == 64
    # nowhere else in clear: not in the store, its events, the script or the event file
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("store.sqlite*") if p.is_file())
    assert secret.encode() not in stored
    assert secret not in (await site.transport.get_bytes(f"{jd}/job.sh")).decode()
    assert secret not in (await site.transport.get_bytes(site.event_file)).decode()
    assert secret not in repr(fed.store.events_since(0)) + repr(done)
    assert job.token not in (await fed.files(job.id)) and not any(
        p.endswith("/secret") for p in await fed.files(job.id))


async def test_after_a_restart_the_monitor_reads_the_secret_from_the_site(tb, tmp_path):
    store = tmp_path / "store.sqlite"
    async with Federation(tb.config_path, store=Store(store), poll_interval_s=30,
                          min_poll_s=0.5) as f1:
        job = await f1.submit(JobSpec(name="later", script="true\n"), "gamma", hold=True)
    async with Federation(tb.config_path, store=Store(store), poll_interval_s=30,
                          min_poll_s=0.5) as f2:
        assert job.token not in f2.monitors["gamma"]._secrets
        await f2.release(job.id)
        done = await f2.wait(job.id, timeout=120)
        assert done.state == JobState.COMPLETED and done.exit_code == 0
        assert ("COMPLETED", "wrapper") in _sources(f2, job.id)
        assert f2.monitors["gamma"].rejected_lines == 0
