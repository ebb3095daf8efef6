"""A job killed at its time limit is noticed just after the limit, not at the next
safety-net poll. Grid Engine kills a job past its `h_rt` with SIGKILL at once (queue_conf(5):
"aborted via the SIGKILL signal"; only `s_rt` warns first, with SIGUSR1), so the job's
wrapper writes no end line; the engine waited for its slow poll (minutes with an event
channel) to learn the job had ended. The monitor now polls a few times just after each
running job's limit (its start plus its walltime) until one finds it ended.

A real store and journal, and a real local Slurm site whose `squeue` prints the queue
written here (the monitor is the same for every scheduler); no test bed."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from local_slurm import LocalSlurmQueue

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.journal import Journal
from diamond_jupyter.model import Job, JobSpec, JobState, Resources
from diamond_jupyter.monitor import LIMIT_CHECKS_S
from diamond_jupyter.sites import Site
from diamond_jupyter.store import Store

SLOW = 3600.0  # the safety-net poll: never within a test


def _running(store: Store, native: str, started: datetime, walltime_s: int | None) -> Job:
    spec = JobSpec(name=f"j{native}", command="./run",
                   resources=Resources(walltime_s=walltime_s))
    store.upsert_job(Job(id=f"alpha:{native}", site="alpha", native_id=native,
                         name=spec.name, spec=spec, token=f"tok{native}aa"))
    store.apply_state(f"alpha:{native}", JobState.RUNNING, started_at=started)
    return store.get_job(f"alpha:{native}")


def _line(native: str, state: str) -> str:
    return (f"{native}|{state}|2026-01-01T00:00:01|2026-01-01T00:10:01|2026-01-01T00:00:00|"
            f"10:00|1|1|me|debug|N/A||None||j{native}\n")


async def test_the_next_poll_is_just_after_a_running_jobs_time_limit(tmp_path):
    queue = LocalSlurmQueue(tmp_path)
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {"alpha": queue.site}, poll_interval_s=SLOW, min_poll_s=SLOW)
    mon = journal.monitors["alpha"]
    try:
        now = time.time()
        start = datetime.fromtimestamp(now - 100, timezone.utc)
        near = _running(store, "7", start, walltime_s=130)  # its limit is 30 s from now
        later = _running(store, "8", start, walltime_s=400)
        unlimited = _running(store, "9", start, walltime_s=None)
        for job in (near, later, unlimited):
            mon.tracked[job.token or job.id] = job.native_id or ""
        mon.last_poll_at = now
        first = 30 + LIMIT_CHECKS_S[0]
        assert abs(mon.until_limit_check(now) - first) < 0.01
        # once a poll has started after a check, the next check comes
        mon.last_poll_at = now + first + 0.01
        assert abs(mon.until_limit_check(now) - (30 + LIMIT_CHECKS_S[1])) < 0.01
        # after the last check, only the job whose limit is later calls for a poll
        mon.last_poll_at = now + 30 + LIMIT_CHECKS_S[-1] + 0.01
        assert abs(mon.until_limit_check(now) - (300 + LIMIT_CHECKS_S[0])) < 0.01
        store.apply_state(later.id, JobState.COMPLETED, exit_code=0)
        assert mon.until_limit_check(now) is None  # nothing running with a limit ahead
    finally:
        await journal.stop()


async def test_a_job_killed_at_its_limit_is_noticed_without_the_slow_poll(tmp_path):
    queue = LocalSlurmQueue(tmp_path)
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {"alpha": queue.site}, poll_interval_s=SLOW, min_poll_s=SLOW)
    mon = journal.monitors["alpha"]
    try:
        # its limit passed a moment ago: the scheduler killed it (no wrapper line)
        started = datetime.now(timezone.utc) - timedelta(seconds=60 + LIMIT_CHECKS_S[0])
        job = _running(store, "41", started, walltime_s=60)
        queue.queue.write_text(_line("41", "TIMEOUT"))
        mon.last_poll_at = time.time()  # the last poll was just now
        mon.track(job)

        async def ended() -> None:
            while not store.get_job(job.id).state.terminal:
                await asyncio.sleep(0.05)
        await asyncio.wait_for(ended(), 20)  # a hang guard: the slow poll is an hour
        assert store.get_job(job.id).state == JobState.TIMEOUT
        assert mon.polls == 1
    finally:
        await journal.stop()


# -- a limit the job did not state: its queue's ---------------------------------------------

FIXTURES = Path(__file__).parent / "fixtures" / "outputs" / "sge"


def _queue_conf(name: str, h_rt: str) -> str:
    """One queue as `qconf -sq` prints it (the recorded all.q, renamed, with this h_rt)."""
    text = (FIXTURES / "delta_qconf_sq.txt").read_text().split("\n\n")[0]
    return text.replace("all.q", name).replace("24:00:00", h_rt) + "\n"


def _sge_site(tmp_path: Path, queues: dict[str, str], running: str,
              idle: tuple[str, ...] = ()) -> Site:
    """A real Grid Engine site on the local transport whose `qhost`, `qconf` and `qstat`
    print recorded outputs: queues with these h_rt limits, and the job `running` (its
    qstat <job_list> element) in all.q@dn1, asking no h_rt of its own."""
    bin_dir = tmp_path / "bin-delta"
    bin_dir.mkdir()
    conf = tmp_path / "queues"
    conf.mkdir()
    for name, h_rt in queues.items():
        (conf / name).write_text(_queue_conf(name, h_rt))
    qstat = tmp_path / "qstat.xml"
    qstat.write_text(
        "<?xml version='1.0'?>\n<job_info>\n  <queue_info>\n    <Queue-List>\n"
        "      <name>all.q@dn1</name>\n      <slots_used>1</slots_used>\n"
        "      <slots_resv>0</slots_resv>\n      <slots_total>8</slots_total>\n"
        f"{running}    </Queue-List>\n" + "".join(
            f"    <Queue-List>\n      <name>{q}</name>\n      <slots_used>0</slots_used>\n"
            "      <slots_resv>0</slots_resv>\n      <slots_total>8</slots_total>\n"
            "    </Queue-List>\n" for q in idle)
        + "  </queue_info>\n  <job_info>\n  </job_info>\n</job_info>\n")
    scripts = {
        "qhost": f"cat {FIXTURES / 'delta_qhost_xml.xml'}",
        "qconf": f'case "$1" in -sql) ls {conf};; -sq) cat "{conf}/$2";; *) exit 0;; esac',
        "qstat": f"cat {qstat}",
    }
    for name, body in scripts.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return Site(SiteConfig(name="delta", scheduler="sge", transport=TransportConfig(kind="local"),
                           preamble=f'PATH={bin_dir}:"$PATH"; export PATH'))


def _running_sge(store: Store, started: datetime, queue: str | None = None) -> Job:
    spec = JobSpec(name="j", command="./run", queue=queue)  # no time limit asked
    store.upsert_job(Job(id="delta:6", site="delta", native_id="6", name="j.dmd-cc9aee4da1b7",
                         spec=spec, token="cc9aee4da1b7"))
    store.apply_state("delta:6", JobState.RUNNING, started_at=started)
    return store.get_job("delta:6")


def _job_list(h_rt: int | None = None) -> str:
    asked = f'        <hard_request name="h_rt">{h_rt}</hard_request>\n' if h_rt else ""
    return ('      <job_list state="running">\n        <JB_job_number>6</JB_job_number>\n'
            "        <JB_name>j.dmd-cc9aee4da1b7</JB_name>\n        <JB_owner>me</JB_owner>\n"
            "        <state>r</state>\n"
            "        <JAT_start_time>2026-12-02T04:45:09</JAT_start_time>\n"
            f"        <slots>1</slots>\n{asked}      </job_list>\n")


async def test_fault_a_job_without_a_limit_is_polled_just_after_its_queues_h_rt(tmp_path):
    """A Grid Engine job that asks no h_rt runs to its queue's h_rt and is SIGKILLed there,
    no end line written: the polls come just after the queue's limit, as the queue the site
    was last seen running it in says (before, a job without its own limit had none, and its
    end waited for the slow poll)."""
    site = _sge_site(tmp_path, {"all.q": "0:2:10", "short.q": "0:0:50"}, _job_list())
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {"delta": site}, poll_interval_s=SLOW, min_poll_s=SLOW)
    mon = journal.monitors["delta"]
    try:
        now = time.time()
        job = _running_sge(store, datetime.fromtimestamp(now - 100, timezone.utc))
        mon.tracked[job.token or job.id] = job.native_id or ""
        mon.last_poll_at = now
        assert mon.until_limit_check(now) is None  # nothing known of the site yet
        snap = await site.snapshot()
        assert {p.name: p.max_time_s for p in snap.partitions} == {"all.q": 130,
                                                                   "short.q": 50}
        # seen running in all.q: its limit is 30 s from now (short.q's is not its)
        assert abs(mon.until_limit_check(now) - (30 + LIMIT_CHECKS_S[0])) < 0.01
        store.apply_state(job.id, JobState.COMPLETED, exit_code=0)
        assert mon.until_limit_check(now) is None
    finally:
        await journal.stop()


async def test_fault_a_job_not_seen_in_its_queue_follows_the_queues_it_may_run_in(tmp_path):
    """Not in the last view (it started since): the queue it was sent to (`-q short.q`)
    gives its limit; sent to none, every queue's limit is followed, the shortest first. A
    limit the job asked, or the one the view shows for it, stays the one polled for."""
    site = _sge_site(tmp_path, {"all.q": "0:2:10", "short.q": "0:3:20"}, "")
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {"delta": site}, poll_interval_s=SLOW, min_poll_s=SLOW)
    mon = journal.monitors["delta"]
    try:
        await site.snapshot()
        now = time.time()
        started = datetime.fromtimestamp(now - 100, timezone.utc)
        job = _running_sge(store, started, queue="short.q")
        key = job.token or job.id
        mon.tracked[key] = job.native_id or ""
        mon.last_poll_at = now
        assert abs(mon.until_limit_check(now) - (100 + LIMIT_CHECKS_S[0])) < 0.01
        store.upsert_job(job.model_copy(update={"spec": job.spec.model_copy(
            update={"queue": None})}))
        assert abs(mon.until_limit_check(now) - (30 + LIMIT_CHECKS_S[0])) < 0.01
        # once all.q's checks are past, short.q's limit is still followed
        mon.last_poll_at = now + 30 + LIMIT_CHECKS_S[-1] + 0.01
        assert abs(mon.until_limit_check(now) - (100 + LIMIT_CHECKS_S[0])) < 0.01
        # a limit the job asked wins over its queues'
        store.upsert_job(job.model_copy(update={"spec": job.spec.model_copy(
            update={"queue": None, "resources": Resources(walltime_s=400)})}))
        assert abs(mon.until_limit_check(now) - (300 + LIMIT_CHECKS_S[0])) < 0.01
    finally:
        await journal.stop()


async def test_a_queue_whose_hosts_have_their_own_h_rt_is_followed_at_each(tmp_path):
    """all.q's h_rt is 24 h, but 130 s on dn1 (`[dn1=0:2:10]`): the job seen in all.q is
    looked at just after 130 s, and after 24 h."""
    site = _sge_site(tmp_path, {"all.q": "24:00:00,[dn1=0:2:10]"}, _job_list(),
                     idle=("all.q@dn2",))
    store = Store(tmp_path / "store.sqlite")
    journal = Journal(store, {"delta": site}, poll_interval_s=SLOW, min_poll_s=SLOW)
    mon = journal.monitors["delta"]
    try:
        await site.snapshot()
        now = time.time()
        job = _running_sge(store, datetime.fromtimestamp(now - 100, timezone.utc))
        mon.tracked[job.token or job.id] = job.native_id or ""
        mon.last_poll_at = now
        assert abs(mon.until_limit_check(now) - (30 + LIMIT_CHECKS_S[0])) < 0.01
        mon.last_poll_at = now + 30 + LIMIT_CHECKS_S[-1] + 0.01
        assert abs(mon.until_limit_check(now) - (24 * 3600 - 100 + LIMIT_CHECKS_S[0])) < 0.01
    finally:
        await journal.stop()
