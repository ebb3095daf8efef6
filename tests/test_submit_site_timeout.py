"""A submit (and a cancel, a release) is given the site's `command_timeout_s`, not a fixed
60 s (queries: at most 60 s, the site's when shorter): a hung `sbatch` is cut at the
configured time and the submit goes the lost-answer way (the job looked up by its token),
neither lost nor sent twice. A real engine and store, a local Slurm site whose `sbatch` and
`squeue` are fakes; no test bed."""

from __future__ import annotations

import asyncio
import getpass
import os
import time

from local_slurm import LocalSlurmQueue
from one_site_engine import one_site_federation

from diamond_jupyter.model import JobSpec
from diamond_jupyter.sites import Site, token_tag


def _with_timeout(queue: LocalSlurmQueue, seconds: float) -> dict:
    cfg = queue.site.cfg.model_dump(mode="json")
    cfg["transport"]["command_timeout_s"] = seconds
    return cfg


def _hung_sbatch(queue: LocalSlurmQueue, tmp_path) -> tuple[os.PathLike, os.PathLike]:
    """`sbatch` that queues the job (its token from the script), says so on a FIFO the test
    reads, then hangs (reading a FIFO nobody writes). Returns the FIFO and the calls file."""
    started, hang = tmp_path / "started.fifo", tmp_path / "hang.fifo"
    os.mkfifo(started)
    os.mkfifo(hang)
    calls = tmp_path / "sbatch-calls.txt"
    sbatch = queue.bin_dir / "sbatch"
    sbatch.write_text(
        f'#!/bin/sh\necho "sbatch $*" >> {calls}\nfor last; do :; done\n'
        f'tok=$(grep -o "{token_tag("")}[0-9a-f]*" "$last" | head -n 1)\n'
        f'echo "4243|PENDING|N/A|N/A|2026-01-01T00:00:00|10:00|1|1|{getpass.getuser()}|'
        f'debug|N/A||Priority|$tok|job" >> {queue.queue}\n'
        f"echo started > {started}\nread never < {hang}\n")
    sbatch.chmod(0o755)
    return started, calls


async def test_a_hung_sbatch_is_cut_at_the_sites_timeout_and_the_job_found_by_token(
        tmp_path):
    queue = LocalSlurmQueue(tmp_path)
    started, calls = _hung_sbatch(queue, tmp_path)
    fed = one_site_federation(tmp_path, _with_timeout(queue, 3), poll_interval_s=3600,
                              min_poll_s=3600, unsure_submit_settle_s=0.5)
    try:
        spec = JobSpec(name="hung", command="true", working_directory=str(tmp_path))
        submit = asyncio.ensure_future(fed.submit(spec, "alpha", force=True))
        said = await asyncio.to_thread(started.read_text)  # the fake sbatch is running
        t0 = time.monotonic()
        job = await submit
        waited = time.monotonic() - t0
    finally:
        await fed.close()
    assert said == "started\n"
    assert waited < 30, waited  # the site's 3 s, not the former fixed 60 s
    assert job.native_id == "4243" and not job.state.terminal
    assert len(calls.read_text().splitlines()) == 1  # not submitted twice
    assert fed.store.intents_without_native_id() == []
    [note] = fed.submit_notes(job.id)
    assert note == ("alpha: the submit's answer did not come (alpha: sbatch timed out after "
                    "3 s (stopped)); the job was found in the queue by its token"), note


async def test_scheduler_commands_are_given_the_sites_timeout(tmp_path, monkeypatch):
    """Longer than the former 60 s as well: submit and cancel get it; a queue query keeps
    its 60 s bound (the site's timeout when shorter, as the hung submit's lookup above)."""
    queue = LocalSlurmQueue(tmp_path)
    site = Site(queue.site.cfg.model_copy(update={"transport": queue.site.cfg.transport
                                                  .model_copy(update={"command_timeout_s":
                                                                      450.0})}))
    given: list[tuple[str, float | None]] = []
    real = site.transport.run_fast

    async def noting(argv, **kw):
        given.append((" ".join(argv), kw.get("timeout")))
        return await real(argv, **kw)

    monkeypatch.setattr(site.transport, "run_fast", noting)
    (queue.bin_dir / "sbatch").write_text("#!/bin/sh\necho 77\n")
    (queue.bin_dir / "sbatch").chmod(0o755)
    (queue.bin_dir / "scancel").write_text("#!/bin/sh\nexit 0\n")
    (queue.bin_dir / "scancel").chmod(0o755)
    spec = JobSpec(name="t", command="true", working_directory=str(tmp_path))
    sub = await site.submit(spec, "0123456789abcdef")
    queue.add(sub.native_id, "0123456789abcdef", "t")
    [seen] = await site.statuses([sub.native_id])
    assert seen.native_id == "77"
    await site.cancel([sub.native_id])
    for what, timeout in (("sbatch", 450.0), ("scancel", 450.0), ("squeue", 60.0)):
        timeouts = {t for line, t in given if what in line}
        assert timeouts == {timeout}, (what, given)  # a query: at most 60 s
