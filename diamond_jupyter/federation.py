"""The Federation: one asyncio facade over sites, placement, monitoring and the store.

Faces (magics, sidebar/REST, CLI, agent) call only this class.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import functools
import math
import os
import re
import secrets
import stat
import time
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from .aio import KeptTasks, KeyedLocks
from .calibration import (
    OWN_ERROR_SAMPLES,
    RECENT_WAITS_S,
    CalibrationCache,
    PredictionSample,
    RunSample,
    SampleBasis,
    SiteCalibration,
    measured_bandwidth,
    queue_waits,
    run_sample,
    running_samples,
    sample_basis,
)
from .capabilities import SiteCapabilities
from .config import FederationConfig, default_config_path, load_config
from .dialects.begin_time import MOST_BEGIN_AFTER_S, slurm_parts
from .dialects.scripts_common import SubmitWait, set_components, sizes_off_components
from .dialects.translate import SCRIPT_DIALECTS
from .federation_agent import AgentMixin
from .federation_auth import LoginMixin
from .federation_dashboard import DashboardMixin
from .federation_data import DataMixin
from .federation_discover import DiscoverMixin
from .federation_hedge import HedgeMixin
from .federation_lookout import LookoutMixin
from .federation_needs import NeedsMixin, job_trees, scan_off_loop
from .federation_plan import PlanChanged, PlanMixin, check_token, new_token, sha256
from .federation_predict import Predictions
from .federation_stuck import StuckMixin
from .federation_waits import WaitNotesMixin
from .federation_workflow import WorkflowMixin
from .fetch_guard import (
    FetchResult,
    bounded,
    canonical,
    choose,
    link_line,
    not_regular,
    too_large_line,
)
from .job_dependencies import JobDependency, UpstreamStep, dependencies_of, wanted_ids
from .journal import Journal
from .leases import EngineLease, Fence, LeaseLost
from .log_lines import one_line_logger
from .model import (
    TERMINAL_STATES,
    ZERO_TIME_LIMIT,
    BadInput,
    DiamondError,
    Directive,
    Event,
    Job,
    JobSpec,
    JobState,
    JobStatus,
    SiteError,
    SiteSnapshot,
    SubmitUnsure,
    check_field,
    check_spec,
    check_text,
    one_line,
    utcnow,
    visible,
)
from .model import task_ids as task_ids_of
from .placement import OwnRuntimePlans, Placement, StageData, other_pbs_server
from .script_body import MAX_SCRIPT_BYTES, runs_commands
from .site_kinds import make_site
from .sites import EventChannel, NotARegularFile, Site, Sites, carries_a_token, prepared_notes
from .sites_file_watch import SitesFileWatch
from .store import (
    FinishedJobs,
    NewestJobs,
    NewestTransfers,
    Store,
    StoreError,
    TransferRecord,
    hold_secret_values,
    plan_taken,
    redact,
    redact_environment,
)
from .summary import SiteSummary, site_summary
from .transports import (
    AuthError,
    CommandFailed,
    CommandNotSent,
    CommandTimeout,
    ConnectionLost,
    HostKeyError,
    OutputTooLarge,
)
from .transports.base import FileStat, LeftItsDirectory

log = one_line_logger(__name__)
# a view read more than this many poll intervals ago has missed a poll (a monitor polls a
# busy site at most one interval apart): placement says how old it is
STALE_VIEW_POLLS = 2
# the agent's API key variables by default (agent/config.py): never handed to a local site's
# commands, whatever face started the engine
AGENT_KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
HELD_SWEEP_S = 15.0  # a long-lived engine looks for held stagings and transfers this often
HELD_SWEEP_MAX = 20  # at most this many stagings, and as many transfers, taken a sweep


MAX_LINKS_RESOLVED = 200  # a fetch's result links asked where they lead (one request each)
LINKS_AT_ONCE = 12  # of those, asked at the same time
FOLLOW_READ_S = 2.0  # `logs --follow`: how often a running job's log is read
FOLLOW_CHUNK_BYTES = 256 << 10  # and at most how much of it at once (base64 on the way)
# `logs` of a job stored as not started answers from the store when its state was learned
# this recently (a poll or a push of its own site's); an older one is asked of the site first
LOGS_TRUST_STATE_S = 30.0
# shell syntax no queue, QOS or reservation name holds: a face's option holding it
# (`--partition 'gpu;rm'`) reached the script quoted and was refused only by the scheduler.
# Grid Engine's queue lists take wildcards and `!` (`-q '*@node01'`): those stay allowed
_SHELL_SYNTAX = re.compile(r"[;|&$`'\"<>()\\]")
MAX_LOG_LINES = 10**9  # the last lines of a log a face may ask for (bytes are bounded too)
_MAX_ROWS = 2**63 - 1  # a listing's limit and offset: what SQLite's integers hold


def _whole(name: str, value: int | None, least: int, most: int, *,
           none: bool = False) -> None:
    """BadInput naming `name` unless `value` is a whole number from `least` to `most` (or
    None, with `none`): a face that passes any int (the magics' options) gets the one-line
    reason the command line gives, not a store error blaming an option never given."""
    if value is None and none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
        raise BadInput(f"{name} must be a whole number from {least} to {most}, not "
                       f"{str(value)[:40]}")


def _planted_link_owner(path: Path) -> int | None:
    """The uid of another user who made `path`, a symbolic link, in a directory others may
    write (group or world) and that user does not own: whoever planted it chose where a
    write through it lands (Linux's fs.protected_symlinks rule, which may be off). None
    for any other path, and for links of this user, of root or of the directory's owner."""
    try:
        link = os.lstat(path)
        if not stat.S_ISLNK(link.st_mode) or link.st_uid in (os.getuid(), 0):
            return None
        parent = os.stat(path.parent)
    except OSError:
        return None
    shared = parent.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    return link.st_uid if shared and link.st_uid != parent.st_uid else None


SCRIPT_SUFFIXES = (".sh", ".slurm", ".sbatch", ".pbs", ".qsub", ".lsf", ".bsub", ".flux",
                   ".sge", ".job", ".bash")  # what a job script file is commonly named


def _directory_given(directory: Path, given: str) -> str:
    """What a script path that is a directory is refused with: the job script files in it,
    when there are any (`diamond submit run/` for `run/job.sh`)."""
    try:
        found = sorted(p.name for p in directory.iterdir()
                       if p.suffix in SCRIPT_SUFFIXES and p.is_file())
    except OSError:
        found = []
    shown = ", ".join(found[:5]) + (f" ... ({len(found)} in all)" if len(found) > 5 else "")
    inside = f"; script files in it: {shown}" if found else ""
    return (f"{given} is a directory, not a job script: give the script's file "
            f"(e.g. {given.rstrip('/')}/{found[0] if found else 'job.sh'}){inside}")


def _check_dest_dir(dest: Path) -> None:
    """BadInput when a fetch's destination, or the nearest part of it that exists, is no
    directory (a file, a FIFO, /dev/null): it ended in a FileExistsError, a traceback on the
    command line and a 500 over REST, after the site was asked; or when a part of it is a
    symbolic link another user owns (planted in a shared directory, it sent the job's files
    where that user chose)."""
    from .transports.base import special_kind

    whole = Path(os.path.abspath(dest))
    for part in (whole, *whole.parents):
        if (owner := _planted_link_owner(part)) is not None:
            raise BadInput(f"dest: {dest}" + ("" if part == whole else f" (its part {part})")
                           + f" is a symbolic link another user (uid {owner}) made in a "
                           f"shared directory, leading to {os.readlink(part)}: a fetch does "
                           "not write through it; give another directory")
    at = dest
    while not os.path.lexists(at) and at.parent != at:
        at = at.parent
    if os.path.isdir(at):
        return
    try:
        kind = special_kind(os.stat(at).st_mode) or "a file"
    except OSError:
        kind = "a link to nothing"
    where = "" if at == dest else f" (its part {at})"
    raise BadInput(f"dest: {dest}{where} is {kind}, not a directory: a fetch writes the job's "
                   "files into a directory (made when missing); give a directory")


def script_text(data: bytes | str, what: str) -> str:
    """`data` as script text (bytes not UTF-8 replaced); BadInput when it is binary (NUL) or
    longer than a job script may be (MAX_SCRIPT_BYTES, as a script file read from disk: a
    tool call's or a cell's script is bounded too)."""
    size = len(data) if isinstance(data, bytes) or len(data) * 4 <= MAX_SCRIPT_BYTES \
        else len(data.encode("utf-8", errors="surrogatepass"))
    if size > MAX_SCRIPT_BYTES:
        raise BadInput(f"{what} is {size} bytes, more than the {MAX_SCRIPT_BYTES} a job "
                       "script may hold (Slurm's own bound, max_script_size, is 4 MB by "
                       "default); keep the data in files the script reads")
    if isinstance(data, bytes):
        data = data.decode("utf-8", errors="replace")
    if "\0" in data:
        raise BadInput(f"{what} is a binary file (it contains NUL bytes at offset "
                       f"{data.index(chr(0))}); a job script must be text")
    return data


CALIBRATION_TTL_S = 300.0  # the accounting query per site, at most this often
# ... unless the last one found this few jobs (a site just set up, or quiet): then every
# THIN_TTL_S, so that a cold start learns within a minute, not five
THIN_HISTORY_JOBS, THIN_TTL_S = 50, 60.0
OWN_PREDICTIONS_LOOKBACK = 500  # the user's newest jobs read for the model's own error
FINISHED_LOOKBACK = 500  # the store's newest finished jobs read for runtimes and calibration
# the median runtime per application and the share of their walltime the user's jobs ran
RuntimeHistory = tuple[dict[str, float], float | None]
OWN_ACTIVE_LOOKBACK = 500  # the user's newest queued and running jobs planned at their own runtimes
ENDED_STATES = (JobState.COMPLETED, JobState.FAILED, JobState.TIMEOUT)  # calibrate runtimes
CALIBRATION_WINDOW_S = 6 * 3600.0  # jobs that ended this recently calibrate predictions
BANDWIDTH_LOOKBACK = 200  # the newest transfers whose copies measure the sites' bandwidth
ENDED_LOOKBACK = 200  # a site's most recent finished jobs checked against its running view
SAME_START_S = 60.0  # a view's running job is the store's when their starts are this close
AFTER_END_S = 5.0  # a view's job that started this long after the store's ended is another



# Directives that submit the job to another cluster than the site's own. Slurm's answer is
# then "ID;CLUSTER" with an ID of that cluster, which the engine would look up (and cancel)
# on the site's cluster, where the same number is another job.
_ANOTHER_CLUSTER = {("slurm", "--clusters")}


def _submit_wait(d: Directive) -> SubmitWait | None:
    """Whether a kept directive makes its scheduler's submit command wait (its dialect's
    rule): one the job needs a terminal for is refused before anything is submitted."""
    script = SCRIPT_DIALECTS.get(d.dialect)
    return script.submit_wait(d) if script is not None else None


def _started_in(start: datetime | None, job: Job, task: bool) -> bool:
    """Whether a view's record that started at `start` can be the ended `job` (not another
    job given its reused id): a plain job's start is its own (within SAME_START_S); an array
    task's lies within the array's run (the store keeps its first task's start). A record
    that started after the job ended (beyond AFTER_END_S) is another job: the scheduler gave
    the id again (restarted, its ids counted anew), also where the job never started."""
    if start is None:
        return True
    if job.ended_at is not None and start > job.ended_at + timedelta(seconds=AFTER_END_S):
        return False
    if job.started_at is None:
        return True
    slack = timedelta(seconds=SAME_START_S)
    if not task:
        return abs(start - job.started_at) <= slack
    end = job.ended_at or start
    return job.started_at - slack <= start <= end + slack

class Federation(DataMixin, AgentMixin, PlanMixin, DiscoverMixin, NeedsMixin, WorkflowMixin,
                 HedgeMixin, WaitNotesMixin, StuckMixin, DashboardMixin, LoginMixin,
                 LookoutMixin):
    def __init__(self, config: FederationConfig | str | Path | None = None, *,
                 store: Store | None = None, poll_interval_s: float = 60.0,
                 min_poll_s: float = 2.0, store_poll_s: float | None = None,
                 allowed_sites: Iterable[str] | None = None, intent_grace_s: float = 120.0,
                 intent_sweep_s: float | None = 30.0,
                 unsure_submit_settle_s: float | None = None,
                 use_login_holders: bool = True,
                 private_vars: Iterable[str] = AGENT_KEY_VARS,
                 sites_file: SitesFileWatch | None = None, read_by: str = "engine") -> None:
        """`use_login_holders`: connect through a login kept by `login(persist_s=...)` when
        one is there (a command's engine); a long-lived engine (the Jupyter server, a
        kernel's, MCP) connects itself, so its background work never keeps a holder past
        its idle time nor ends with it.
        `intent_grace_s`: how old an unbound submit intent must be before recovery looks
        its token up (younger ones may be another process's submit in flight);
        `intent_sweep_s`: how often a started Federation does so (None: only at start);
        `unsure_submit_settle_s`: how old an intent whose token finds no job must be before
        it is closed as never submitted (its submit may still reach the queue; None: the
        sites file's `unsure_submit_settle_s`);
        `private_vars`: variables of this process's environment (the agent's API key) that
        a local site's commands never get: sbatch would export them into the job;
        `sites_file`: the sites file `config` was read from, as it was then (made here when
        `config` is the file's path, or none, the default file), and `read_by` how
        `sites_file_changed` names this engine's process ("Jupyter server", "kernel")."""
        if sites_file is None and not isinstance(config, FederationConfig):
            sites_file = SitesFileWatch.now(config or default_config_path(), read_by)
        self.sites_file = sites_file  # taken before the read: an edit meanwhile is said
        cfg = config if isinstance(config, FederationConfig) else load_config(config)
        if unsure_submit_settle_s is None:
            unsure_submit_settle_s = cfg.unsure_submit_settle_s
        allowed = set(allowed_sites) if allowed_sites is not None else None
        self.config = cfg
        for site_cfg in cfg.sites:  # a token given a site's commands is redacted as the
            hold_secret_values(site_cfg.env)  # environment's: sbatch may echo it
        self.allowed_sites = allowed  # None: every site of the sites file
        self.sites = Sites(
            (make_site(s, private_vars=private_vars) for s in cfg.sites
             if allowed is None or s.name in allowed),
            allowed=allowed, configured=[s.name for s in cfg.sites])
        for site in self.sites.values():
            site.use_login_holder(use_login_holders)
        self.store = store or Store(cfg.store)
        # a view older than this missed a poll at least: `place --explain` says its age
        self.view_stale_after_s = STALE_VIEW_POLLS * poll_interval_s
        self.journal = Journal(self.store, self.sites, poll_interval_s=poll_interval_s,
                               min_poll_s=min_poll_s,
                               unsure_submit_settle_s=unsure_submit_settle_s)
        self._correct_older_records()  # its events published by the journal's next drain
        self.monitors = self.journal.monitors
        self.lease = EngineLease(self.store.beats)
        self.store_poll_s = store_poll_s
        self._tasks: list[asyncio.Task] = []
        self._lookouts: dict[str, asyncio.Task] = {}  # token: the search for a lost submit
        self._predictions = Predictions()  # explicit sites' predicted starts, in flight
        # the specs of reserved workflow submits, prepared before their batch's reservation
        self._reserved_ready: dict[str, JobSpec] = {}
        self._started = False
        self._mover: Any = None  # transfer.TransferManager, made on first use
        self._calibrated: dict[str, tuple[float, list[JobStatus]]] = {}  # site: (when, jobs)
        # each site's calibration built from them, rebuilt only when its inputs change
        self._calibrations = CalibrationCache()
        self._own_plans = OwnRuntimePlans()  # own_runtimes' plans, kept between submits
        # the newest jobs and the queued ones, read for estimates: kept between submits,
        # brought up to date from the rows changed since (`Store.newest_jobs`)
        self._newest = NewestJobs.of(None, OWN_PREDICTIONS_LOOKBACK)
        self._active = NewestJobs.of([JobState.PENDING, JobState.RUNNING], OWN_ACTIVE_LOOKBACK)
        self._ended = NewestJobs.of(ENDED_STATES, FINISHED_LOOKBACK)
        self._completed = NewestJobs.of([JobState.COMPLETED], FINISHED_LOOKBACK)
        self._sample_bases: dict[str, tuple[Job, SampleBasis | None]] = {}  # by job id
        # the newest transfers, for the measured bandwidth (`stage_data`), kept likewise
        self._copies = NewestTransfers(BANDWIDTH_LOOKBACK)
        self._bandwidth: tuple[list[TransferRecord], tuple[str, ...],
                               dict[tuple[str | None, str | None], float]] | None = None
        self._own_runs: tuple[list[Job], dict[str, list[tuple[str | None, RunSample]]]] | None \
            = None  # `_own_run_samples`' last answer and the jobs it read
        self._history: tuple[list[Job], RuntimeHistory] | None = None  # `runtime_history`'s
        self.intent_grace_s, self.intent_sweep_s = intent_grace_s, intent_sweep_s
        self.held_sweep_s = HELD_SWEEP_S  # a long-lived engine looks for held work this often
        self.logs_trust_state_s = LOGS_TRUST_STATE_S  # see LOGS_TRUST_STATE_S
        self._waits_noted: dict[str, float] = {}
        self._hedge_gated: set[tuple[str, str]] = set()
        self._hedge_locks = KeyedLocks()  # by group, while a settle holds or awaits it
        self._hedge_retries: dict[str, asyncio.TimerHandle] = {}
        self._hedge_retry_delay: dict[str, float] = {}
        self._hedge_settles = KeptTasks()
        self._hedges_closing = False
        self.journal.subscribe(self._hedge_on_event)  # a copy's start settles its group
        self.keep_usage()  # every snapshot taken adds to its site's usage series

    # -- life cycle -------------------------------------------------------------------
    async def start(self, *, recover: bool = True, resume_held: bool = False,
                    discover_sites: bool = False) -> Federation:
        """Start the engine and return it (a second call does nothing). With `recover` (the
        server's engine; the CLI and kernels pass False) first re-attach every unfinished job in
        the store to its site's monitor and resolve submissions whose answer was lost, by their
        token; then keep this engine's lease alive, follow the events other processes write to
        the shared store (when `store_poll_s` was given) and look lost submissions up every
        `intent_sweep_s` while running. With `resume_held` (a long-lived engine that does not
        recover: a kernel's, `diamond resume`) take and drive the held work no live engine
        drives (`resume_held`). Either way, look for held work again every `held_sweep_s`
        (work handed over after the start: a CLI's engine that closed), at most
        HELD_SWEEP_MAX stagings and as many transfers a sweep. With `discover_sites` (a
        long-lived engine) every site not discovered yet is discovered in the background
        from the start on (`discover_behind`): nothing here waits for it."""
        if self._started:
            return self
        self._started = True
        if discover_sites:  # first: beside the recovery, which may take a while
            self._tasks.extend(self.discover_behind())
        self._hedges_closing = False
        if recover:
            await self.recover(intent_grace_s=self.intent_grace_s)
        elif resume_held:
            await self.resume_held()
        self.journal.attention.rearm()
        self.lease.ensure_beating()
        if self.store_poll_s:
            self._tasks.append(asyncio.ensure_future(self.journal.follow_store(self.store_poll_s)))
        if recover and self.intent_sweep_s:
            self._tasks.append(asyncio.ensure_future(self._sweep_intents()))
        if (recover or resume_held) and self.held_sweep_s:
            self._tasks.append(asyncio.ensure_future(self._sweep_held(self.held_sweep_s)))
        if recover or resume_held:  # each lost submit a face was told is looked for
            self.resume_lookouts()
        if recover:
            await self._start_workflows()
        return self

    async def close(self) -> None:
        """Stop what `start` started (workflow engine, monitors, lease, store follower,
        transfers, discoveries in flight: each cancelled and waited for, its command killed)
        and close every site's connection. Jobs keep running on their sites and the
        store keeps their state: a later `start` in any process picks them up. An agent service
        over this Federation is closed by the face that owns it, first."""
        await self._close_workflows()
        await self._close_hedges()
        await self._stop_lookouts()
        await self._predictions.close()
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.gather(*(site.discovery.stop() for site in self.sites.values()))
        await self.journal.stop()
        await self._close_data()
        await asyncio.gather(*(s.close() for s in self.sites.values()), return_exceptions=True)
        self._started = False

    def _correct_older_records(self) -> None:
        """Once, as the engine opens its store (every face's engine, started or not: `diamond
        jobs` never starts one): record as CANCELLED each hedged loser an engine from before
        that rule recorded COMPLETED, so that reads (`jobs`, `status`) only read. A store that
        cannot be written is still read, the records as they are (said in the log)."""
        try:
            self.store.correct_losers_completed()
        except DiamondError as e:
            log.warning("hedged copies recorded COMPLETED were not corrected: %s", e)

    async def __aenter__(self) -> Federation:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def recover(self, *, intent_grace_s: float = 120.0) -> None:
        """Resolve every submit intent older than `intent_grace_s` (its token looked up on its
        site: bound to the job the scheduler has, else marked never submitted once it is older
        than the settle time; a younger one is left for a later sweep), follow every
        unfinished job again, resume unfinished transfers and stage-ins, and publish what the
        opening of the store corrected (`_correct_older_records`). `start` calls it; calling
        it again is safe. Raises DiamondError only when the store cannot be read."""
        await self.journal.recover_intents(intent_grace_s)
        for job in self.store.unfinished_jobs():
            self.journal.track(job)
        await self._finish_cancels()
        await self._resume_data()
        await self.journal.drain()
        await self._recover_hedges()

    async def _finish_cancels(self) -> None:
        """Send again the cancel of each unfinished job recorded as requested (its server
        may have died before it went out) that its site, asked first, still has in the
        queue; the site's refusal or silence is logged (the monitor follows the job)."""
        for job in self.store.unfinished_jobs():
            if not (job.native_id and job.site in self.sites):
                continue
            intent = self.journal.cancel_intent(job.id)
            if intent is None or self.journal.is_loser_cancel(intent):
                continue  # a hedged loser's is finished by its hedge (`_recover_hedges`)
            try:
                job = await self.journal.refresh(job.id)
                if not job.state.terminal and not job.reused_by:
                    await self.sites[job.site].cancel(self.sites[job.site].native_ids_of(job))
            except DiamondError as e:
                log.warning("the cancel of %s was not sent again: %s", job.id, e)

    def held_work(self) -> dict[str, list[str]]:
        """The unfinished stagings, transfers and workflows that no live engine drives (their
        engine closed, handing them over, or died): their ids by kind, read from the store."""
        from .leases import alive

        def free(data: dict[str, Any]) -> bool:
            return not alive(data.get("owner"), self.store.beats)

        active = ["PENDING", "ACTIVE"]
        held: dict[str, list[str]] = {
            "stagings": [r.id for r in self.store.list_transfers(
                states=active, limit=None, kinds=["stage"]) if free(r.data)],
            "transfers": [r.id for r in self.store.list_transfers(states=active, limit=None)
                          if r.kind in ("sftp", "globus") and free(r.data)],
            "workflows": [w.id for w in self.store.unfinished_workflows() if free(w.data)]}
        return {k: v for k, v in held.items() if v}

    async def resume_held(self, limit: int | None = None) -> dict[str, list[str]]:
        """Take the held work no live engine drives (see `held_work`) and drive it here until
        this engine closes (closing hands it back). Each item is claimed in the store first, in
        one write, so two engines never drive one item; an owner that died, or stopped
        beating for `leases.STALE_S`, loses its claims. Returns what was taken, by kind (the
        jobs of the stagings taken, the transfers, the workflows). `limit`: at most so many
        stagings and so many transfers (the rest is left for a later call)."""
        if not self.held_work():
            return {}
        stagings, transfers = await self._resume_data(limit)
        engine = self.workflow_engine
        workflows = await engine.resume()
        engine.start_sweeping()  # and any handed over later
        if stagings or workflows:  # this engine must hear their jobs end
            for job in self.store.unfinished_jobs():
                self.journal.track(job)
        taken = {"stagings": stagings, "transfers": transfers, "workflows": workflows}
        return {k: v for k, v in taken.items() if v}

    async def _sweep_held(self, every_s: float) -> None:
        """Take held work handed over after the start (a staging or a copy whose engine closed
        or died), every `every_s`, a bounded amount a sweep (workflows: their own sweep)."""
        while True:
            await asyncio.sleep(every_s)
            try:
                taken = await self.resume_held(limit=HELD_SWEEP_MAX)
            except DiamondError as e:
                log.info("looking for held work failed: %s", e)
                continue
            if taken:
                log.info("took held work: %s", taken)

    async def _sweep_intents(self) -> None:
        """An intent left unbound while this process runs (the connection dropped during a
        submit, or another process died mid-submit) is resolved once it is older than the
        grace period, not only at the next start."""
        while True:
            await asyncio.sleep(self.intent_sweep_s or 30.0)
            try:
                await self.journal.recover_intents(self.intent_grace_s)
            except DiamondError as e:
                log.info("intent recovery failed: %s", e)

    # -- events -----------------------------------------------------------------------
    def subscribe(self, callback: Callable[[Event], Any]) -> Callable[[], None]:
        """Call `callback(event)` for each event published from now on, in order (a coroutine
        function's coroutine is scheduled on the loop); returns the function that unsubscribes.
        Events are stored before they are published, so a subscriber that missed some replays
        them with `events_since`."""
        return self.journal.subscribe(callback)

    def events(self, since: int | None = None) -> AsyncIterator[Event]:
        """An async iterator over the stored events after `since` (None: only those published
        from now on), then the live ones, with no gap and no repeat. It never ends by itself:
        the caller stops iterating."""
        return self.journal.events(since)

    # -- discovery ----------------------------------------------------------------------
    def site(self, name: str) -> Site:
        """The configured and allowed site `name`. BadInput naming the known sites when it is
        unknown, or saying it is not allowed here."""
        return self.sites.require(name)

    def site_configs(self) -> list[dict[str, Any]]:
        """Every usable site's configuration as the faces show it (JSON-ready; the transport
        described by itself, without secrets), in the sites file's order."""
        # a preamble's `export X_TOKEN=...`, an env value under a secret-looking name, a
        # token command: shown as the store would keep them (***)
        return [self.redacted(s.describe()) for s in self.sites.values()]

    def sites_file_changed(self) -> str | None:
        """What to tell a user whose sites file was edited, removed or created since this
        engine read it (its sites are those it read until its process restarts); None
        when the file is as read, or the engine was given its configuration, not a file.
        Cheap enough for every listing: one stat, a hash only when the stat changed."""
        return self.sites_file.note() if self.sites_file is not None else None

    async def snapshot(self, site: str, *, max_age_s: float = 15.0) -> SiteSnapshot:
        """Site `site`'s live state (nodes, partitions, queue) from one batched scheduler query,
        or the cached snapshot when it is at most `max_age_s` old. An unreachable site does not
        raise: its snapshot says `reachable=False` with the reason (and keeps the last known
        capabilities). BadInput for a site that is not configured or not allowed."""
        return await self.site(site).snapshot(max_age_s=max_age_s)

    async def snapshots(self, *, max_age_s: float = 15.0, only: Collection[str] | None = None
                        ) -> dict[str, SiteSnapshot]:
        """Every usable site's snapshot (only those of `only`, when given), as `snapshot`
        gives it, queried concurrently; by site name. Never raises for an unreachable site."""
        snaps = await asyncio.gather(*(s.snapshot(max_age_s=max_age_s)
                                       for n, s in self.sites.items()
                                       if only is None or n in only))
        out = {s.site: s for s in snaps}
        self.note_waits(out)  # the scheduler's estimates, for the wait calibration
        return out

    def site_summary(self, name: str, snap: SiteSnapshot | None) -> SiteSummary:
        """The row every face shows for site `name` (configuration, and unless `snap` is None
        capacity and occupancy counted with placement's node-usability rule). BadInput for a
        site that is not configured or not allowed."""
        return site_summary(self.site(name).cfg, snap)

    async def site_summaries(self, *, max_age_s: float = 15.0,
                             offline: bool = False) -> list[SiteSummary]:
        """Every usable site's row, in the sites file's order, from snapshots at most
        `max_age_s` old (an unreachable site's row says so); with `offline`, configuration
        only, without contacting any site."""
        snaps = {} if offline else await self.snapshots(max_age_s=max_age_s)
        return [site_summary(s.cfg, snaps.get(n)) for n, s in self.sites.items()]

    # -- placement ------------------------------------------------------------------------
    async def place(self, spec: JobSpec, *, policy: str = "diamond", stage_in_bytes: int = 0,
                    sites: Collection[str] | None = None,
                    stage_data: StageData | None = None,
                    max_age_s: float = 15.0, named_site: bool = False) -> Placement:
        """Rank the usable sites (only `sites`, when given) for `spec` under `policy`
        ("diamond": earliest estimated finish, then cheapest; or min_cost, fewest_pending,
        first_ready, random, fixed), from live snapshots, the calibrated runtimes of past jobs,
        the sites' capabilities and the stage-in's size (`stage_data`, measured when the spec
        stages data and none is given; `stage_in_bytes` adds to it). Every site that cannot run
        the job carries its reasons. Returns the Placement (its `choice` is None when no site
        can run it); BadInput for an unknown policy. `max_age_s`: how old a snapshot may be
        (0: ask the sites now). A script waiting on job ids runs only on the site whose jobs
        they are (`dependency_bound`; every other INCOMPATIBLE), unless `named_site`: the
        user named the one site in `sites`."""
        from .placement import place

        check_spec(spec)  # parsers fill a spec field by field: its bounds hold here too
        await scan_off_loop(spec)
        only = list(sites) if sites else None
        finished = self.finished_jobs()  # one read serves the decision
        history, own_share = self.runtime_history(finished)
        snaps, cals, caps = await asyncio.gather(
            self.snapshots(max_age_s=max_age_s, only=only),
            self.calibration(finished=finished, history=(history, own_share)),
            self.capabilities(only=only, trees=job_trees(spec)))
        # an entry that is a second door to a listed cluster is ranked only when asked for
        pairs = [(self.sites[n].cfg, snaps[n]) for n in self.sites
                 if (n in only if only else self.sites[n].cfg.auto)]
        if stage_data is None and spec.stage_in:
            stage_data = await self.stage_data(spec)
        return place(spec, pairs, stage_in_bytes=stage_in_bytes, policy=policy,
                     history=history, own_share=own_share, calibration=cals,
                     capabilities=caps, stage_data=stage_data, ended=self.ended_in_view(snaps),
                     doors=self.sites.second_doors(),
                     bound_to=None if named_site else self.dependency_bound(spec),
                     stale_after_s=self.view_stale_after_s)

    def ended_in_view(self, snaps: dict[str, SiteSnapshot]) -> dict[str, set[str]]:
        """Per site, the native ids of this store's jobs that a view still lists as running
        although the engine has heard them end (the job's own end line arrives before the
        scheduler's view drops it: Grid Engine lists a finished job for a moment). A job is
        matched by its native id and its start, so a reused id is not taken for it; an array
        task's record (Slurm's `123_7`, `123_[8-100]`, Grid Engine's `9.3`, `9.4-100:1`) by
        its array's id (the site's `job_id_of`) and a start within the array's run."""
        out: dict[str, set[str]] = {}
        for site, snap in snaps.items():
            if not snap.running:
                continue
            done: dict[str, Job] = {}
            for j in self.store.list_jobs(site=site, states=TERMINAL_STATES,
                                          limit=ENDED_LOOKBACK, read_only=True):  # newest first
                if j.native_id and j.ended_at and j.ended_at <= snap.taken_at:
                    done.setdefault(j.native_id, j)
            owner = self.sites[site].job_id_of if site in self.sites else None
            for r in snap.running:
                array = owner(r.native_id) if owner is not None else r.native_id
                j = done.get(r.native_id) or done.get(array)
                if j is not None and _started_in(r.started_at, j, array != r.native_id):
                    out.setdefault(site, set()).add(r.native_id)
        return out

    async def stage_data(self, spec: JobSpec) -> StageData:
        """The stage-in of `spec` measured for placement: its bytes by source location and the
        bandwidth past transfers achieved between sites. A source that cannot be sized counts as
        0 bytes here (the submit reports it). Never raises for a missing source."""
        from .transfer import confine, parse_location

        sources: dict[str | None, int] = {}
        for entry in spec.stage_in:
            try:
                loc = confine(parse_location(entry.source, self.sites), self.server_root)
                size = await self._size_of(loc.site, loc.path)
            except (BadInput, DiamondError, OSError):
                continue
            sources[loc.site] = sources.get(loc.site, 0) + size
        return StageData(sources, dict(self.measured_bandwidth()))

    def measured_bandwidth(self) -> dict[tuple[str | None, str | None], float]:
        """Megabits/s per (source site, destination site; None: the server) that the copies
        among the newest BANDWIDTH_LOOKBACK transfers achieved (`calibration.
        measured_bandwidth`); worked out again only when one of those transfers changed."""
        copies, names = self.store.newest_transfers(self._copies), tuple(self.sites)
        if self._bandwidth is not None and self._bandwidth[0] is copies \
                and self._bandwidth[1] == names:
            return self._bandwidth[2]
        self._bandwidth = (copies, names, measured_bandwidth(self._finished_copies(copies)))
        return self._bandwidth[2]

    def _finished_copies(self, transfers: Iterable[TransferRecord]
                         ) -> list[tuple[str | None, str | None, int, float]]:
        """(source site, destination site, bytes, seconds) of each of `transfers` that
        copied something and succeeded, between places named as this federation names
        them (None: the server); the others left out."""
        from .transfer import parse_location

        finished = []
        for t in transfers:
            if t.state == "SUCCEEDED" and t.bytes:
                try:
                    src = parse_location(t.src, self.sites).site
                    dst = parse_location(t.dst, self.sites).site
                except BadInput:
                    continue
                finished.append((src, dst, t.bytes,
                                 (t.updated_at - t.created_at).total_seconds()))
        return finished

    async def _size_of(self, site: str | None, path: str) -> int:
        if site is None:
            p = Path(path).expanduser()
            if p.is_dir():
                return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
            return p.stat().st_size
        st = await self.sites[site].stat(path)
        return st.size if st is not None else 0

    async def calibration(self, *, max_age_s: float = CALIBRATION_TTL_S, fetch: bool = True,
                          running: dict[str, SiteSnapshot] | None = None,
                          cohort_s: float | None = None, finished: FinishedJobs | None = None,
                          history: RuntimeHistory | None = None
                          ) -> dict[str, SiteCalibration]:
        """Per usable site, the runtime/request ratios of jobs that ended in the last
        CALIBRATION_WINDOW_S: other users', from one accounting query per site when the
        cached ones are older than `max_age_s` (THIN_TTL_S when they were fewer than
        THIN_HISTORY_JOBS); this store's own only where the accounting gives none. A site
        whose accounting cannot be read keeps what it had (or only the store's jobs); errors
        other than a site's are raised. Without `fetch`, from what was read before only (no
        site is asked).

        `running` (measured by `benchmarks.placement`, not used by placement): each site's
        running jobs in these views count as right-censored runtimes
        (`calibration.with_survivors`), over the jobs that started in the `cohort_s` before
        the view when given (`calibration.started_within`).

        `finished` (the store's `finished_jobs`) and `history` (`runtime_history` of them):
        what the caller read already for the same decision; read here when not given."""
        now = time.monotonic()

        def ttl(n: str) -> float:
            jobs = self._calibrated.get(n, (0.0, []))[1]
            return min(max_age_s, THIN_TTL_S) if len(jobs) < THIN_HISTORY_JOBS else max_age_s
        stale = [n for n in self.sites if fetch
                 and now - self._calibrated.get(n, (-math.inf, []))[0] > ttl(n)]
        if stale:
            since = utcnow() - timedelta(seconds=CALIBRATION_WINDOW_S)
            got = await asyncio.gather(*(self.sites[n].recent_jobs(since) for n in stale),
                                       return_exceptions=True)
            for n, jobs in zip(stale, got, strict=True):
                if isinstance(jobs, BaseException):
                    if not isinstance(jobs, DiamondError):
                        raise jobs
                    jobs = self._calibrated.get(n, (0.0, []))[1]
                else:
                    self.note_starts(n, jobs)  # accounting knows starts views missed
                self._calibrated[n] = (now, jobs)
        if finished is None:
            finished = self.finished_jobs()
        own = self._own_run_samples(finished.ended)
        out, at = {}, utcnow()
        predicted = self.prediction_samples()
        expected = self.own_runtimes(history or self.runtime_history(finished))
        logins = await self._logins_of_tokened(fetch)
        for n in self.sites:
            read = self._calibrated.get(n, (0.0, []))  # (when, jobs): a new one per query
            mine = own.get(n, [])
            ids = {nid for nid, s in mine if s.ended_at >= time.time() - CALIBRATION_WINDOW_S}
            login = logins.get(n)
            waits = self.wait_calibration_samples(n, time.time() - CALIBRATION_WINDOW_S)
            alive = running_samples(running[n].jobs, at) if running and n in running else []
            # what the ratios' samples are made of, compared in place of the samples (a
            # walk of every accounting record) while the accounting read is the same one;
            # none for running views (their samples are stamped with the moment)
            inputs = None if alive else (read, frozenset(ids), tuple(mine), login,
                                         tuple(waits), cohort_s)
            out[n] = self._calibrations.site(
                n, functools.partial(self._calibration_samples, n, read[1], ids, mine, login,
                                     alive),
                wait=waits, queued=queue_waits(read[1], at, RECENT_WAITS_S),
                own=predicted.get(n, ()), cohort_s=cohort_s, own_runtimes=expected.get(n),
                inputs=inputs)
        return out

    def _own_run_samples(self, ended: list[Job]
                         ) -> dict[str, list[tuple[str | None, RunSample]]]:
        """Per site, (native id, runtime sample) of each of the store's `ended` jobs that
        ran with a walltime; kept while `ended` is the same list (`Store.newest_jobs`
        answers the same one until one of its jobs changes)."""
        if self._own_runs is not None and self._own_runs[0] is ended:
            return self._own_runs[1]
        own: dict[str, list[tuple[str | None, RunSample]]] = {}
        for job in ended:
            res = job.spec.resources if job.spec else None
            if job.spec and res and res.walltime_s and job.started_at and job.ended_at:
                cpus = (res.tasks or res.nodes or 1) * (res.cpus_per_task or 1)
                own.setdefault(job.site, []).append((job.native_id, RunSample(
                    job.spec.queue, cpus, res.walltime_s,
                    (job.ended_at - job.started_at).total_seconds(), job.ended_at.timestamp())))
        self._own_runs = (ended, own)
        return own

    def _calibration_samples(self, n: str, jobs: list[JobStatus], ids: set[str | None],
                             mine: list[tuple[str | None, RunSample]], login: str | None,
                             alive: list[RunSample]) -> list[RunSample]:
        """Site `n`'s runtime samples from its accounting `jobs` (the records not of the
        store's jobs that ended in the window, `ids`), its store's own ended jobs (`mine`)
        and the running ones (`alive`)."""
        # The queue is other users' work: the accounting's jobs that are not the store's
        # calibrate it. The store's (one user's few kinds, which on a quiet site would
        # set a class's ratio) stand in only where the accounting gives none.
        job_of = self.sites[n].job_id_of  # an array task's record is its array's
        # the login's jobs that carry an engine's token are the user's too, from a
        # store this one does not hold (another engine of theirs, a store started
        # afresh): one user's kinds, standing in with the store's own
        others, elsewhere = [], []
        for j in jobs:
            if job_of(j.native_id) not in ids and (s := run_sample(j)) is not None:
                theirs = carries_a_token(j) and j.user in (None, login)
                (elsewhere if theirs else others).append(s)
        ended = others or [*(s for _, s in mine), *elsewhere]
        return [*ended, *alive] if ended else ended

    def finished_jobs(self) -> FinishedJobs:
        """The store's newest finished jobs (`Store.finished_jobs(FINISHED_LOOKBACK)`), kept
        between decisions: read again are only the rows changed since."""
        return FinishedJobs(self.store.newest_jobs(self._ended),
                            self.store.newest_jobs(self._completed))

    def own_runtimes(self, history: RuntimeHistory | None = None
                     ) -> dict[str, dict[str, float]]:
        """Per site, the user's own queued and running jobs there (native id -> seconds):
        how long each is expected to run (`placement.OwnRuntimePlans`, from the store's
        completed jobs: its application's runtime, else the share of their walltime the
        user's jobs ran; over the site's speed factor, never past its walltime). A site's
        calibration plans them so: other users' ratio of their class says nothing of them
        (under `depth_misleads` alpha's load ran 0.4% of its requests, the benchmark's
        probes a third: each probe queued or running ahead of a new one was planned to end
        at once, and alpha predicted 0-40 s where it started after 17-91 s; issue 15).
        `history`: `runtime_history()`'s answer when the caller has it."""
        history, share = history or self.runtime_history()
        jobs = self.store.newest_jobs(self._active)
        speeds = {n: site.cfg.speed_factor or 1.0 for n, site in self.sites.items()}
        return self._own_plans.runtimes(jobs, speeds, history, share)

    async def _logins_of_tokened(self, fetch: bool) -> dict[str, str | None]:
        """The login's user name of each site whose accounting history holds jobs carrying
        an engine's token (`id -un`, once per site; without `fetch`, only those known)."""
        sites = [n for n in self.sites
                 if any(carries_a_token(j) for j in self._calibrated.get(n, (0.0, []))[1])]
        if not fetch:
            return {n: self.sites[n].known_login for n in sites}
        # a login not told: only the records that name no owner are the user's
        names = await asyncio.gather(*(self.sites[n].login_user() for n in sites),
                                     return_exceptions=True)
        return {n: None if isinstance(x, BaseException) else x
                for n, x in zip(sites, names, strict=True)}

    def prediction_samples(self, since: datetime | None = None
                           ) -> dict[str, list[PredictionSample]]:
        """Per site, the user's own recent jobs (submitted since `since`, default
        RECENT_WAITS_S ago) with the wait their placement's model predicted and the wait
        they had, or have had so far: the OWN_ERROR_SAMPLES most recently submitted, those
        the correction rests on (`calibration.own_error`'s choice), newest created first.
        Jobs held or waiting on others (their wait is not the queue's), and those submitted
        long after their placement (an approval), are left out."""
        now = utcnow()
        since = since or now - timedelta(seconds=RECENT_WAITS_S)
        per_site: dict[str, list[SampleBasis]] = {}
        bases: dict[str, tuple[Job, SampleBasis | None]] = {}
        for job in self.store.newest_jobs(self._newest):  # newest first
            if job.submitted_at is None or job.submitted_at < since:
                continue
            if job.spec is None or job.spec.hold or job.spec.dependencies:
                continue
            kept = self._sample_bases.get(job.id)  # read again only when its row changed
            basis = kept[1] if kept and kept[0] is job else sample_basis(job)
            bases[job.id] = (job, basis)
            if basis is not None:
                per_site.setdefault(job.site, []).append(basis)
        self._sample_bases = bases
        out: dict[str, list[PredictionSample]] = {}
        for site, found in per_site.items():
            # own_error's stable sort by submission, its last ones, kept in this order: a
            # sample per queued job (each to `now`) made every submit slower as they grew
            chosen = sorted(range(len(found)), key=lambda i: found[i].submitted.timestamp())
            out[site] = [found[i].at(now) for i in sorted(chosen[-OWN_ERROR_SAMPLES:])]
        return out

    def accounting(self, site: str) -> list[JobStatus]:
        """The finished jobs the last accounting query of `site` returned (for calibration);
        empty before the first `calibration` or for an unknown site."""
        return list(self._calibrated.get(site, (0.0, []))[1])

    def runtime_history(self, finished: FinishedJobs | None = None) -> RuntimeHistory:
        """From one read of the store's completed jobs (those of `finished` when the caller
        read them already: the store's `finished_jobs`): the median observed runtime (s, at
        speed 1.0: scaled by the site's speed factor) per application (a spec's
        `metadata.application`), and the mean share of its walltime those with one ran
        (what the user's next job of an unknown kind may expect to use; None with fewer
        than MIN_SAMPLES such jobs; a run shorter than the calibration's MIN_HOLD_S counts as
        that)."""
        from .calibration import MIN_HOLD_S, MIN_SAMPLES

        runs: dict[str, list[float]] = {}
        shares = []
        completed = finished.completed if finished is not None else self.store.list_jobs(
            states=[JobState.COMPLETED], limit=FINISHED_LOOKBACK, read_only=True)
        if self._history is not None and self._history[0] is completed:
            return self._history[1]  # the same jobs (`Store.newest_jobs`' same answer)
        for job in completed:
            if not (job.spec and job.started_at and job.ended_at):
                continue
            speed = self.sites[job.site].cfg.speed_factor if job.site in self.sites else 1
            ran = (job.ended_at - job.started_at).total_seconds() * speed
            if app := job.spec.metadata.get("application"):
                runs.setdefault(app, []).append(ran)
            if wall := job.spec.resources.walltime_s:
                shares.append(min(1.0, max(MIN_HOLD_S, ran) / wall))
        share = sum(shares) / len(shares) if len(shares) >= MIN_SAMPLES else None
        history = {a: sorted(v)[len(v) // 2] for a, v in runs.items()}, share
        self._history = (completed, history)
        return history

    def dependency_bound(self, spec: JobSpec) -> tuple[set[str], str] | None:
        """Where a job whose script waits on job ids (dependencies read from a script, which
        name jobs of one cluster of its scheduler) may run: (the sites of the cluster whose job
        this store knows by that native id, its other doors included, why); (no site, why)
        when no site, or several, have such a job; None without such dependencies (the
        workflow engine's own carry no scheduler and are placed freely)."""
        deps = [d for d in spec.dependencies if d.scheduler is not None and d.job_ids]
        if not deps:
            return None
        said = " ".join(f"{d.kind}:{':'.join(d.job_ids)}" for d in deps)
        doors = self.sites.second_doors()
        found: dict[str, set[str]] = {}  # cluster (its first door): the ids known there
        for d in deps:
            for job_id in d.job_ids:
                for site in self.store.sites_of_native_id(job_id):
                    if site in self.sites and self.sites[site].cfg.scheduler == d.scheduler:
                        found.setdefault(doors.get(site, site), set()).add(job_id)
        if len(found) == 1:
            cluster, ids = next(iter(found.items()))
            sites = {cluster, *(n for n, first in doors.items() if first == cluster)}
            return sites, (f"the script's dependency ({said}) names job {', '.join(sorted(ids))}"
                           f" of site {cluster}: it runs there only (elsewhere the dependency"
                           " is dropped or names another job)")
        where = (f"job ids known at several sites ({', '.join(sorted(found))})" if found
                 else "no job this store knows")
        return set(), (f"the script's dependency ({said}) names a job of one {deps[0].scheduler}"
                       f" cluster ({where}): name the site whose job it is with --site")

    # -- jobs -------------------------------------------------------------------------------
    def check_submittable(self, spec: JobSpec) -> None:
        """Check what every submit checks before anything else: a script body or command, text
        (no NUL), every server path inside the server's root, every field one printable line.
        Raises BadInput naming the field; returns nothing when `spec` may be submitted. A
        job given as components (an API caller's hetjob) without a size of its own, or only
        sizes those components make, gets their whole shape as its resources here: the
        scripts render components only beside that shape, so they were dropped unsaid, the
        job run (and placed) as one node of one task."""
        if spec.components and not sizes_off_components(spec):
            set_components(spec, spec.components)
        body = script_text(spec.script or spec.command or "", "the job script")
        if not runs_commands(body):  # (a caller on the event loop scans it first: scan_off_loop)
            raise BadInput("the job has no script body or command: a script of only "
                           "directives and comments runs nothing; write the commands the "
                           "job runs after its directives")
        self._check_server_paths(spec)
        check_spec(spec)  # parsers fill a spec field by field: check it whole
        begin = slurm_parts(spec.begin) if spec.begin is not None else None
        if spec.begin is not None and begin is None:
            # a script's unreadable --begin stays its directive (sbatch refuses it); a field's
            # was left out of every script, so the job would start at once, unsaid
            raise BadInput(f"begin {spec.begin!r} is not a start time (as sbatch --begin reads:"
                           " now+1hour, 16:00, tomorrow, 2026-12-31T09:00 ...); give one, or "
                           "leave begin out to start as soon as the job can")
        if begin is not None and (later := begin.after_s or 0) > MOST_BEGIN_AFTER_S:
            # sbatch's strtol and flux's double wrap or clip such a number: a start long
            # ago, or at once, not the wait asked
            raise BadInput(f"begin {spec.begin!r} is {later} s after the submission, past "
                           f"the {MOST_BEGIN_AFTER_S} s (100 years) a start time may be; give "
                           "a nearer one (now+2days, 2030-01-01T09:00 ...), or leave begin out")
        for d in spec.unknown:
            if (d.dialect, d.option) in _ANOTHER_CLUSTER:
                raise BadInput(f"{d.raw.strip()!r} sends the job to another cluster than the "
                               "site's: its job number would name a job of the site's own "
                               "cluster (followed and cancelled in its place); make that "
                               "cluster a site of its own and submit there")
            if (wait := _submit_wait(d)) is not None and wait.refuse:
                raise BadInput(f"{d.raw.strip()!r}: {wait.what}; {wait.why}: {wait.instead}")

    async def submit(self, spec: JobSpec, site: str = "auto", *, origin: dict | None = None,
                     hold: bool = False, token: str | None = None,
                     script_sha256: str | None = None, force: bool = False,
                     hedge: int | None = None, hedge_group: str | None = None,
                     placement: dict[str, Any] | None = None, fence: Fence | None = None,
                     reserved: bool = False) -> Job:
        """Submit `spec` to `site` ("auto": the placement's choice, BadInput with every site's
        reason when none can run it) and return the recorded Job (state PENDING or later). The
        intent is stored durably with a fresh `token` (or the given one) before the scheduler is
        asked, and the token travels in the job's name/comment, so a crash or a lost answer
        never submits twice or loses the job; with `hold` the job starts held (`release` starts
        it). An approved plan passes its `token` and the `script_sha256` of its rendered script:
        a script that would differ raises PlanChanged before anything is recorded. BadInput for
        a spec the site cannot run (naming what an explicit site lacks, unless `force`) or a
        site not allowed; SiteError when the site is unreachable.
        With `hedge` N (site "auto" only) copies go to the N best sites allowing it and the
        first to start runs (`submit_hedged`); `hedge_group` and `placement` mark one such
        copy (internal). `fence`: the lease of the workflow whose step this is (internal):
        LeaseLost, and nothing submitted, once another engine took the workflow over.
        `reserved`: the intent of `token` was recorded already, durably, with a batch of a
        workflow's steps (`WorkflowsMixin.reserve_step_submits`; internal): it is given its
        prepared spec here, and closed as never submitted when this call fails before it.
        """
        if not reserved:
            return await self._submit_one(spec, site, origin=origin, hold=hold, token=token,
                                      script_sha256=script_sha256, force=force, hedge=hedge,
                                      hedge_group=hedge_group, placement=placement,
                                      fence=fence)
        if token is None or hedge not in (None, 1) or script_sha256 is not None:
            raise BadInput("a reserved submit is one step's, with its token, unhedged")
        filled: list[bool] = []  # set once the intent holds the prepared spec
        try:
            return await self._submit_one(spec, site, origin=origin, hold=hold, token=token,
                                      force=force, placement=placement, fence=fence,
                                      reserved=filled)
        except BaseException as e:
            if not filled:  # failed before its intent was filled: nothing was sent
                with contextlib.suppress(DiamondError):
                    await self.journal.close_never_submitted(
                        token, f"not submitted: {e}" if str(e) else "not submitted")
            raise
        finally:
            self.journal.in_flight.discard(token)  # in flight since its batch was reserved
            self._reserved_ready.pop(token, None)

    async def prepare_reserved(self, spec: JobSpec, site: str, token: str) -> JobSpec:
        """A workflow step's `spec` checked for `site` and prepared as its submit with
        `token` sends it, as `submit` does before recording an intent, ahead of its batch's
        reservation (`WorkflowOps.reserve_submits`): the reservation records this prepared
        spec, and `submit(reserved=True)` of `token` sends it as recorded (no second
        preparation, no fill of the intent). Raises what that submit would raise."""
        await scan_off_loop(spec)
        self.check_submittable(spec)
        checked = await self.check_site(spec, site)
        target = self.site(site)
        await self._site_ready(target, spec)
        prepared = target.prepare(await self.adapt_to_site(site, spec, checked), token)
        self._reserved_ready[token] = prepared
        return prepared

    def drop_prepared(self, tokens: Iterable[str]) -> None:
        """The prepared specs of reserved submits that will not be sent (`prepare_reserved`)."""
        for token in tokens:
            self._reserved_ready.pop(token, None)

    @staticmethod
    async def _site_ready(target: Site, spec: JobSpec) -> None:
        """BadInput for a job `target` must not take whatever the force; what preparing
        `spec` for it reads of the site (its home, its job name limit) known."""
        if elsewhere := other_pbs_server(spec, target.cfg):  # even with `force`
            raise BadInput(elsewhere)
        await target.know_home(spec.working_directory, spec.stdout, spec.stderr)
        await target.know_name_limit()  # the name as the scheduler will keep it

    async def _submit_one(self, spec: JobSpec, site: str = "auto", *,
                          origin: dict | None = None, hold: bool = False, token: str | None = None,
                      script_sha256: str | None = None, force: bool = False,
                      hedge: int | None = None, hedge_group: str | None = None,
                      placement: dict[str, Any] | None = None, fence: Fence | None = None,
                      reserved: list[bool] | None = None) -> Job:
        """`submit`; `reserved` (a list) when the intent of `token` is recorded already: it
        is filled here (unless it was recorded prepared: `prepare_reserved`), and True
        appended to the list once it is."""
        if hedge is not None and hedge != 1:
            self.check_hedge_site(hedge, site)
            if token is not None or script_sha256 is not None:
                raise BadInput("a hedged submission cannot be an approved single-site plan")
            return await self.submit_hedged(spec, hedge, origin=origin, hold=hold)
        # prepared (checked and adapted) before its batch was reserved: sent as recorded
        ready = self._reserved_ready.pop(token, None) \
            if reserved is not None and token is not None and not force else None
        if ready is not None:
            target, prepared, planned = self.site(site), ready, False
            placement = placement if site != "auto" else None
        else:
            await scan_off_loop(spec)
            self.check_submittable(spec)
            placement = placement if site != "auto" else None
            checked: SiteCapabilities | None = None  # what the site was checked against
            if site == "auto":
                if (bound := self.dependency_bound(spec)) is not None and not bound[0]:
                    raise BadInput(bound[1])  # before anything is placed or sent
                pl = await self.place(spec)
                if pl.choice is None:
                    raise pl.no_choice()
                site = pl.choice
                placement = pl.model_dump(mode="json")
                chosen = pl.verdict(site)
                if not spec.queue and chosen is not None and chosen.partition:
                    spec = spec.model_copy(update={"queue": chosen.partition})
            elif script_sha256 is None:  # an approved plan was checked when it was made
                checked = await self.check_site(spec, site, force=force)
            target = self.site(site)
            await self._site_ready(target, spec)
            if token is not None and reserved is None:
                check_token(token)
                if (done := self.store.job_by_token(token)) is not None:
                    if done.native_id:
                        return done  # this plan was submitted already: never twice
                    raise plan_taken(token, done)  # in flight, or closed as never submitted
            # another engine may submit the same approved plan
            planned = token is not None and reserved is None
            token = token or new_token()
            spec = await self.adapt_to_site(site, spec, checked)  # modules, container runtime
            prepared = target.prepare(spec, token, hedged=hedge_group is not None)
            if script_sha256 is not None and sha256(target.render(
                    target.scheduler_spec(prepared, token)).script) != script_sha256:
                raise PlanChanged(f"the batch script for {site} would differ from the "
                                  "approved one")
        secret = secrets.token_hex(32)  # signs the job's event lines; only on the site

        def upload() -> asyncio.Future:
            return asyncio.ensure_future(target.upload(prepared, token, secret=secret))
        # The script's upload submits nothing, so it overlaps the intent's durable write
        # (an fsync, in a thread); the submit command itself runs only after that write. A
        # plan's token may be another engine's intent: its job directory (script, secret)
        # is written only once the intent is this engine's.
        uploading = None if planned else upload()
        try:
            if reserved is not None:  # no fsync (NORMAL): here, not a thread's round trip
                if ready is None or placement is not None:  # (else recorded as prepared)
                    self.store.fill_intent(token, prepared, placement, fence)
                reserved.append(True)
            else:
                job = await asyncio.to_thread(self.store.record_intent, site, token, prepared,
                                              placement, origin, hedge_group, fence, True)
        except BaseException:
            if uploading is not None:
                uploading.cancel()
                await asyncio.gather(uploading, return_exceptions=True)
            target.forget_upload(token)
            raise
        uploading = uploading or upload()
        with contextlib.suppress(Exception):  # a failed upload: submit sends the script itself
            await uploading
        if reserved is None:  # its intent's event (a reserved one's went with its batch)
            await self.journal.drain()
        try:  # the lease again, just before the scheduler is asked (a stall since the intent)
            self.store.check_fence(fence)
        except LeaseLost as lost:
            await self.journal.close_never_submitted(token, str(lost))
            raise
        staged = self._stage_begin(site, token, prepared, hold)  # None without stage entries
        self.monitors[site].expect(token, secret)
        self.journal.in_flight.add(token)  # not "lost" to a concurrent intent sweep meanwhile
        lost: str | None = None  # why the submit's answer was lost after it was sent
        try:
            sub = await self._submit_staged(target, prepared, token, hold, staged, secret)
        except CommandNotSent as e:  # the connection failed before the command went out
            reason = f"{site}: the submit could not be sent ({e})"
            await self.journal.close_never_submitted(token, reason)
            raise SiteError(f"{reason}; nothing was submitted: try again when the site can "
                            "be reached") from None
        except (AuthError, HostKeyError) as e:  # refused at the door: nothing was sent
            self.store.mark_never_submitted(token, f"{site}: the submit could not be sent ({e})")
            await self.journal.drain()
            said = f"{e}; nothing was submitted: {_door_advice(site, e)}"
            raise (AuthError(said, interactive=e.interactive, door=e.door)
                   if isinstance(e, AuthError) else HostKeyError(said)) from None
        except (CommandTimeout, ConnectionLost) as e:  # perhaps sent, then no answer
            lost = f"{site}: the submit's answer did not come ({e})"
        except CommandFailed as e:  # the scheduler refused it: nothing was submitted
            said = " ".join(e.result.stderr.split())[-500:] \
                or f"exit status {e.result.exit_status}"
            unsure = getattr(target.commands, "submit_unsure", None)
            unanswered = getattr(target.commands, "status_unanswered", None)
            if unsure is not None and unsure(e.result.exit_status, e.result.stderr):
                lost = f"{site}: the scheduler's answer to the submit was lost ({said})"
            elif unanswered is not None and unanswered(e.result.exit_status,
                                                       e.result.stderr):
                # not the job's fault: the scheduler was not reached (down, restarting, its
                # configuration not found), a site failure (exit 1), not bad input
                reason = f"{site}: the scheduler did not answer the submit ({said})"
                await self.journal.close_never_submitted(token, reason)
                raise SiteError(f"{reason}; nothing was submitted: try again when the "
                                "scheduler is up") from None
            else:
                refusal = f"{site} refused the job: {said}"
                await self.journal.close_never_submitted(token, refusal)
                raise BadInput(refusal) from None
        except (BadInput, DiamondError) as e:
            if isinstance(e, BadInput):
                await self.journal.close_never_submitted(token, str(e))
            raise  # a SiteError leaves the intent: recovery finds the job by its token
        finally:
            self.journal.in_flight.discard(token)
        if lost is not None:
            native_id = await self._find_unsure_submit(target, token, lost)
            said = [f"{lost}; the job was found in the queue by its token"]
            task_ids = task_ids_of(self.store.get_job(token))
        else:
            native_id, said, task_ids = sub.native_id, sub.warnings, sub.tasks
        # each module renamed for the site, each directive dropped/approximated: kept with
        # the binding, in one write
        try:
            job = self.store.bind_native_id(token, native_id, task_ids=task_ids,
                                            warnings=prepared_notes(prepared) + list(said))
        except StoreError as e:  # the scheduler has the job: never let it be sent again
            raise StoreError(
                f"{site} took the job as {native_id} (submission {token}), but {e}: do not "
                "submit it again; once the store can be written, diamond finds the job by "
                "its token and records it") from None
        await self.journal.drain()
        self.journal.track(job)
        if placement is None and hedge_group is None and not (hold or spec.hold) \
                and not spec.dependencies:
            self._predictions.start(self, job, spec)  # a site given by name, free to start
        if staged is not None:
            staged.submitted(job.id)  # released when its stage-in has arrived
        if hedge_group is not None:  # another copy may have won already: stop this one
            await self._hedge_settle(hedge_group)
            job = self.store.get_job(token)
        return job

    async def _find_unsure_submit(self, target: Site, token: str, lost: str) -> str:
        """The native id of the job a submit whose answer was `lost` queued, looked up by its
        token once. Not found (yet), or the site cannot be asked: the intent stays open for
        the journal's reconciliation, which binds the job when it shows in the queue or
        closes it as never submitted after the settle time, and SiteError says so."""
        job = self.store.get_job(token)
        if job.spec is not None and target.flux_array(job.spec) is not None:
            await self.journal.recover_intent(job)  # its tasks not queued yet queued now
            if (bound := self.store.get_job(token)).native_id:
                return bound.native_id
            found = []
        else:
            try:
                found = await target.find_by_token(job.name, token)
            except DiamondError:
                found = []
        if found:
            return found[0].native_id
        raise SubmitUnsure(
            f"{lost}: the scheduler may have taken the job; diamond is checking by its "
            f"token (bound to the job if it shows in the queue, else closed as never "
            f"submitted after {self.journal.unsure_submit_settle_s:g}s): do not submit it "
            f"again; `diamond status {job.id}` tells", job.id,
            self.journal.unsure_submit_settle_s, lost)

    async def find_lost_submit(self, job_id: str, *,
                               on_look: Callable[[float], Any] | None = None) -> Job:
        """Job `job_id`, whose submit's answer was lost (SubmitUnsure), looked for by its
        token again and again (waits doubling from 0.5 s, at most 5 s) until it shows in the
        queue (bound and followed), or its intent is the settle time old (closed as never
        submitted), or the site still cannot be asked then (left open). `on_look(seconds
        left)` is called before each look. The job as stored then."""
        return await self.journal.look_for_lost_submit(self.store.get_job(job_id),
                                                       on_look=on_look)

    def job(self, job_id: str) -> Job:
        """The stored job `job_id` (SITE:NATIVE, a provisional SITE:pending-TOKEN, or a
        submission token); no site is asked. BadInput saying whether the id is unknown or
        malformed."""
        return self.store.get_job(job_id)

    def dependencies(self, job_id: str) -> list[JobDependency]:
        """What job `job_id` waits for: each scheduler dependency it holds and, for a
        workflow step's job, each upstream step its workflow holds it behind; each satisfied,
        waiting or never to be satisfied. No site is asked. BadInput for an unknown job."""
        job = self.store.get_job(job_id)
        return self.dependencies_of_jobs([job])[job.id]

    def dependencies_of_jobs(self, jobs: Iterable[Job]) -> dict[str, list[JobDependency]]:
        """`dependencies` of each of `jobs` by id, in one pass: the jobs they wait for, their
        workflows and those workflows' step jobs each read once for all of them (no read per
        job). No site is asked."""
        jobs = list(jobs)

        def scheduler_of(name: str) -> str | None:
            return site.script.name if (site := self.sites.get(name)) else None

        found = self.store.jobs_with_ids(wanted_ids(jobs, scheduler_of))
        steps = self._upstream_steps(jobs)
        return {job.id: dependencies_of(job, found.get, steps.get(job.id),
                                        scheduler_of(job.site)) for job in jobs}

    def _upstream_steps(self, jobs: list[Job]) -> dict[str, list[UpstreamStep]]:
        """The upstream steps of each of `jobs` that runs a workflow step (none for another
        job, or a gate), by job id, as its workflow record holds them."""
        from .workflow.model import Workflow

        step_of = {}
        for job in jobs:
            origin = job.origin or {}
            wid, name = origin.get("workflow"), origin.get("step")
            if isinstance(wid, str) and isinstance(name, str) and not origin.get("gate"):
                step_of[job.id] = (wid, name)
        records = self.store.workflows_with_ids(wid for wid, _ in step_of.values())
        needs: dict[str, list[tuple[str, str, str | None]]] = {}  # job -> (need, phase, token)
        for jid, (wid, name) in step_of.items():
            if (rec := records.get(wid)) is None:
                continue
            wf = Workflow.model_validate(rec.spec)
            if name in {s.name for s in wf.steps}:
                needs[jid] = [(need, rec.step(need).phase, rec.step(need).token)
                              for need in wf.step(name).needs]
        by_token = self.store.jobs_with_tokens(
            token for rows in needs.values() for _, _, token in rows if token)
        return {jid: [UpstreamStep(name=need, phase=phase,
                                   job=by_token.get(token) if token else None)
                      for need, phase, token in rows] for jid, rows in needs.items()}

    def submit_notes(self, job_id: str) -> list[str]:
        """What the submit of job `job_id` changed or left out to fit its site, one line
        each: modules renamed, the name changed, each directive dropped or approximated in
        the translation, body lines kept as they are. No site is asked."""
        job = self.store.get_job(job_id)
        return [str(w) for e in self.store.events_since(0, kinds=["job.warnings"],
                                                        job_id=job.id, limit=None)
                for w in (e.data or {}).get("warnings") or []]

    async def predicted(self, job_id: str) -> Job:
        """Job `job_id` once the start predicted for it is recorded (a job sent to an
        explicit site gets its prediction just after the submit; waits at most 10 s), or as
        stored when none is coming."""
        return await self._predictions.wait(self, self.store.get_job(job_id).id)

    def jobs(self, *, site: str | None = None, states: Iterable[JobState | str] | None = None,
             name_like: str | None = None, limit: int | None = 50, offset: int = 0) -> list[Job]:
        """Stored jobs, newest first: only `site`'s, only in `states`, whose name contains
        `name_like`; at most `limit` (None: all) after skipping `offset`. No site is asked.
        BadInput for a site neither configured nor holding stored jobs (a typo listed
        nothing, as if the site had no jobs)."""
        _whole("limit", limit, 0, _MAX_ROWS, none=True)  # the magics pass any int
        _whole("offset", offset, 0, _MAX_ROWS)
        if site is not None and site not in self.sites \
                and not self.store.list_jobs(site=site, limit=1):
            self.sites.require(site)
        return self.store.list_jobs(site=site, states=states, name_like=name_like, limit=limit,
                                    offset=offset)

    async def status(self, job_id: str, *, refresh: bool = False) -> Job:
        """Job `job_id` as stored or, with `refresh`, after asking its site's scheduler now (the
        answer is applied to the store and published as events first). BadInput for an unknown
        job; a refresh from an unreachable site keeps the stored state."""
        if refresh:
            return await self.journal.refresh(job_id)
        return self.store.get_job(job_id)

    async def wait(self, job_id: str, *, until: Callable[[Job], bool] | Iterable[JobState] | None
                   = None, timeout: float | None = None, refresh: bool = False,
                   on_trouble: Callable[[str], Any] | None = None) -> Job:
        """Suspend until job `job_id` satisfies `until` (a predicate on the Job, or a set of
        states; default: any terminal state) and return it. Event-driven: woken by the job's
        events, with the monitor's polling as the safety net; with `refresh`, its site is
        asked once first. A site that cannot be reached does not end the wait: it is asked
        again with backoff, and `on_trouble(note)` is called once saying so. SiteError after
        `timeout` seconds (naming a site that has not answered); BadInput for an unknown job,
        or an unfinished one on a site the sites file no longer lists (nothing would ever
        wake the wait)."""
        job = self.store.get_job(job_id)
        if not job.state.terminal:
            self._job_site(job)
        if refresh:
            with contextlib.suppress(SiteError):  # the monitor keeps it; the wait says so
                await self.journal.refresh(job_id)
        return await self.journal.wait(job_id, until=until, timeout=timeout,
                                       on_trouble=on_trouble)

    async def cancel(self, job_id: str) -> Job:
        """Ask the job's scheduler to cancel job `job_id` and return the job once the request is
        recorded (its state changes when the scheduler confirms; a finished job is returned as
        it is). A job held for its stage-in has its copies stopped too, and is recorded
        CANCELLED by its staging, never released. BadInput when the job has no scheduler id
        yet or its native id now belongs to a newer job; SiteError when the site refuses or
        is unreachable."""
        job = self.store.get_job(job_id)
        if job.state.terminal:
            return job
        if job.hedge_group and not self.store.hedge(job.hedge_group).decided:
            return await self.cancel_hedge(job.hedge_group, job.id)  # no copy started yet
        if not job.native_id:
            raise BadInput(f"{job_id} has no scheduler id yet; try again in a moment")
        self._refuse_reused(job, "cancelling")
        site = self._job_site(job)
        # recorded before it is sent: a server killed once the cancel went out still has
        # it (recovery sends it again to a job still in the queue: `_finish_cancels`)
        if not self.journal.cancel_requested(job.id):
            self.store.append_event(Event(kind="job.cancel-requested", job_id=job.id,
                                          site=job.site))
        try:
            await site.cancel(site.native_ids_of(job))
        except DiamondError as e:
            self.store.append_event(Event(kind="job.cancel-failed", job_id=job.id,
                                          site=job.site, data={"reason": str(e)}))
            raise
        await self._stop_stage_in(job)
        await self.journal.drain()
        self.journal.kick(job)
        return self.store.get_job(job.token or job.id)

    async def release(self, job_id: str) -> Job:
        """Release a job submitted with `hold` and return it. One whose stage-in is still
        copying is not released yet: the request is recorded (kept across a restart) and
        its staging releases the job once its input is there (`release_waiting` says so).
        BadInput for an unknown job, one that has ended, has no scheduler id yet, or whose
        native id now belongs to a newer job; SiteError when the site refuses."""
        job = self.store.get_job(job_id)
        if job.state.terminal:
            raise BadInput(f"{job.id} has ended ({job.state.value}): nothing to release")
        if not job.native_id:
            raise BadInput(f"{job.id} has no scheduler id yet; try again in a moment")
        self._refuse_reused(job, "releasing")
        if job.spec is not None and job.spec.stage_in:
            # recorded before the stage-in is looked at: a staging that ends its stage-in
            # after this look finds the request, one that ended it before is looked past
            self.store.append_event(Event(kind="job.release-requested", job_id=job.id,
                                          site=job.site))
            if self.journal.stage_in_pending(job):
                return job
        self._job_site(job)
        try:
            await self.journal.release_once(job)
        except DiamondError:
            if not self.store.events_since(0, kinds=["job.released"], job_id=job.id, limit=1):
                raise  # not the staging's own release of it just before
            return job
        if job.spec is not None and job.spec.stage_in:  # its staging, resumed, sees it done
            self.store.append_event(Event(kind="job.released", job_id=job.id, site=job.site,
                                          data={"native_id": job.native_id}))
        return job

    def release_waiting(self, job_id: str) -> str | None:
        """What a release of job `job_id` asked during its stage-in waits for, None when no
        release is waiting (none asked, or the job released or ended). No site is asked."""
        job = self.store.get_job(job_id)
        if not (self.journal.release_requested(job.id) and self.journal.stage_in_pending(job)):
            return None
        entries = len(job.spec.stage_in) if job.spec else 0
        return (f"release of {job.id} kept: its stage-in ({entries} entr"
                f"{'y' if entries == 1 else 'ies'}) is still copying; it is released when "
                f"its input has arrived (`diamond status {job.id}`; a failed stage-in fails "
                "it instead)")

    def _job_site(self, job: Job) -> Site:
        """The site job `job` is on; BadInput saying so when the sites file no longer lists
        it (a bare "unknown site 'gone'" read as a typo in the command)."""
        if job.site in self.sites or job.site in self.sites.configured:
            return self.sites.require(job.site)  # configured but not allowed here: says so
        known = ", ".join(self.sites) or "none"
        raise BadInput(f"{job.id} is on site {job.site!r}, which this sites file does not "
                       f"list (known: {known}); `diamond status {job.id}` shows what is "
                       "stored")

    @staticmethod
    def _refuse_unsubmitted(job: Job, what: str) -> None:
        """A job its scheduler never took (refused at submit, or its submit still under way)
        has nothing on the site: say so, not "stdout log ... is missing"."""
        if job.native_id:
            return
        if job.state.terminal:
            why = f" ({job.reason})" if job.reason else ""
            raise BadInput(f"{job.id} never reached {job.site}'s scheduler{why}: it has {what}")
        raise BadInput(f"{job.id} has no scheduler id yet (its submit is under way): it has "
                       f"{what} yet; try again in a moment")

    @staticmethod
    def _refuse_reused(job: Job, action: str) -> None:
        """A job whose native id a newer job got is no longer in the queue: acting on that
        id would hit the newer job."""
        if job.reused_by:
            raise BadInput(f"not {action} {job.id}: it has left {job.site}'s queue and its "
                           f"native id {job.native_id} now belongs to {job.reused_by}")

    async def logs(self, job_id: str, *, lines: int = 100) -> dict[str, str]:
        """The last `lines` lines of the job's stdout and stderr (each at most the sites file's
        `log_tail_bytes`), as {"stdout", "stderr", "missing", "notes"}; "missing" holds one
        line per log file not on the site yet (empty when both were read), "notes" one per
        file whose start was left out (what an appended-to file held before the job's wrapper
        started) or that may hold an earlier job's output. Job output is untrusted text.
        BadInput for an unknown job or `lines` out of 1 to 1e9, SiteError when the site is
        unreachable."""
        _whole("lines", lines, 1, MAX_LOG_LINES)  # `--lines -5` showed nothing, said nothing
        job = self.store.get_job(job_id)
        self._refuse_unsubmitted(job, "no logs")
        site = self._job_site(job)
        if job.state is JobState.PENDING:
            learned_s = self._state_age_s(job)
            if learned_s is not None and learned_s <= self.logs_trust_state_s:
                return self._logs_not_started(site, job, learned_s)  # a poll saw it just now
            # stale, or only the submit's: the scheduler is asked, then the files are read
            # (a job it does not list yet, or one requeued, may have logs all the same)
            with contextlib.suppress(SiteError):
                job = await self.journal.refresh(job.token or job.id)
        texts, missing, notes = {}, [], []
        await site.know_home()  # the job's directory may be under the home
        await site.know_name_limit()  # the log's name may hold the job's name
        starts = await self._output_starts(site, job)
        for stream, pattern in (("stdout", job.stdout_path), ("stderr", job.stderr_path)):
            spelled, unspelled = await self._flux_spellings(site, job, pattern)
            path, unknowable = self._log_file(site, job, spelled) if spelled else (None, None)
            if unknowable:
                known = unspelled or "known only to the running job"
                missing.append(f"{stream} log {pattern}: its name holds {unknowable}, {known}; "
                               "`diamond files` lists the job's files")
                texts[stream] = ""
                continue
            start = starts.get(stream, 0) if starts is not None else 0
            try:
                text = (await site.tail(path, lines, max_bytes=self.config.log_tail_bytes,
                                        start=start) if path else "")
            except NotARegularFile as e:  # the other stream is still shown
                missing.append(f"{stream} log: {e}")
                texts[stream] = ""
                continue
            if text is None and job.state is JobState.PENDING:
                missing.append(self._not_there_yet(stream, path, job, "just now"))
            elif text is None:
                when = " (the job has not started)" if job.state.rank < 2 else ""
                missing.append(f"{stream} log {path} is missing on {job.site}{when}")
            elif start:
                notes.append(f"{stream} log {path}: its first {start} bytes, there before "
                             "this job started (an earlier job's, appended to), not shown")
            elif path and stream not in (starts or {}) and self._appended(site, job, path):
                notes.append(f"{stream} log {path} is appended to, not overwritten: it may "
                             "hold an earlier job's output before this job's")
            texts[stream] = text or ""
        # one line per missing file, one per note (neither is the job's output): a path or a
        # reason holding a newline cannot start a line of its own
        return texts | {"missing": "\n".join(map(one_line, missing)),
                        "notes": "\n".join(map(one_line, notes))}

    def _state_age_s(self, job: Job) -> float | None:
        """Seconds since job `job`'s stored state was last learned from its scheduler (the
        last change a poll or a push recorded); None when none was. A monitor's poll that
        did not list the job is no such knowledge."""
        changed = self.store.state_learned_at(job.id)
        return max(0.0, time.time() - changed.timestamp()) if changed else None

    def _logs_not_started(self, site: Site, job: Job, learned_s: float) -> dict[str, str]:
        """`logs` of a job its site has not started: one "missing" line per log, said from
        the stored state (learned `learned_s` seconds ago), nothing read from the site."""
        when = "just now" if learned_s < 1 else f"{learned_s:.0f} s ago"
        missing = []
        for stream, pattern in (("stdout", job.stdout_path), ("stderr", job.stderr_path)):
            if pattern:
                path, unknowable = self._log_file(site, job, pattern)
                missing.append(self._not_there_yet(stream, pattern if unknowable else path,
                                                   job, when))
        return {"stdout": "", "stderr": "", "missing": "\n".join(map(one_line, missing)),
                "notes": ""}

    @staticmethod
    def _not_there_yet(stream: str, path: str | None, job: Job, when: str) -> str:
        """The "missing" line of a log of pending job `job`, its state learned `when`."""
        why = f" ({job.reason})" if job.reason else ""
        return (f"{stream} log {path}: not there yet on {job.site} (the job has not "
                f"started); {job.id} was {job.state.value}{why} {when}")

    async def follow_logs(self, job_id: str, write: Callable[[str], Any], *,
                          interval_s: float = FOLLOW_READ_S,
                          on_trouble: Callable[[str], Any] | None = None,
                          on_note: Callable[[str], Any] | None = None,
                          stream: str = "stdout") -> Job:
        """Write job `job_id`'s `stream` log (stdout, or stderr) with `write(text)` as it
        grows, from what it holds now,
        until the job ends; then its last bytes, and return the ended job (an ended job: its
        whole stdout at once). The end is awaited as `wait` awaits it (the job's events, the
        monitor's polling as the safety net); meanwhile the log is read every `interval_s`
        seconds, only the bytes past those read (UTF-8 decoded across reads, bad bytes
        replaced as `logs` does). `on_note(line)`: what was left out or is missing, as
        `logs` says it. BadInput for an unknown job, one its scheduler never took, an
        output path only the running job knows, stderr of a job that writes it to its stdout
        log, or a site without a shell (slurmrestd); SiteError when the site cannot read the
        log."""
        if stream not in ("stdout", "stderr"):
            raise BadInput(f"a job's log to follow is stdout or stderr, not {stream!r}")
        job = self.store.get_job(job_id)
        if job.state.terminal:
            self._refuse_unsubmitted(job, "no logs")
        if stream == "stderr" and (not job.stderr_path or job.stderr_path == job.stdout_path):
            raise BadInput(f"{job.id} writes its stderr into its stdout log (no stderr file of "
                           "its own): follow it without --stderr")
        if refusal := self._job_site(job).follow_refusal:
            raise BadInput(refusal)
        ended = asyncio.ensure_future(self.wait(job_id, on_trouble=on_trouble))
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        path: str | None = None
        offset = 0
        try:
            while True:
                last = ended.done() or job.state.terminal
                job = ended.result() if ended.done() else self.store.get_job(job.token or job.id)
                if path is None and job.native_id and (job.state.rank >= 2 or last):
                    path, offset = await self._followed_log(job, on_note, stream)
                if path is not None:
                    offset = await self._write_new(self._job_site(job), path, offset,
                                                   decoder, write)
                if last:
                    if tail := decoder.decode(b"", final=True):
                        write(tail)
                    if path is not None and on_note is not None and \
                            await self._job_site(job).stat(path) is None:
                        on_note(f"{stream} log {path} is missing on {job.site}")
                    return job
                await asyncio.wait({ended}, timeout=interval_s)
        finally:
            ended.cancel()
            await asyncio.gather(ended, return_exceptions=True)

    async def _followed_log(self, job: Job, on_note: Callable[[str], Any] | None,
                            stream: str = "stdout") -> tuple[str, int]:
        """The file of the started job's `stream` (stdout or stderr) on its site, and the
        byte it is followed from (past what an appended-to file held before the job's
        wrapper started)."""
        site = self._job_site(job)
        await site.know_home()  # the job's directory may be under the home
        await site.know_name_limit()  # the log's name may hold the job's name
        pattern = job.stderr_path if stream == "stderr" else job.stdout_path
        spelled, unspelled = await self._flux_spellings(site, job, pattern)
        if not spelled:
            raise BadInput(f"{job.id} has no {stream} log path recorded; `diamond files "
                           f"{job.id}` lists the job's files")
        path, unknowable = self._log_file(site, job, spelled)
        if unknowable:
            known = unspelled or "known only to the running job"
            raise BadInput(f"{job.id}'s {stream} log {spelled}: its name holds {unknowable}, "
                           f"{known}; `diamond files {job.id}` lists the job's files")
        start = ((await self._output_starts(site, job)) or {}).get(stream, 0)
        if on_note is not None and start:
            on_note(f"{stream} log {path}: its first {start} bytes, there before this job "
                    "started (an earlier job's, appended to), not shown")
        return path, start

    @staticmethod
    async def _write_new(site: Site, path: str, offset: int, decoder: codecs.IncrementalDecoder,
                         write: Callable[[str], Any]) -> int:
        """Write what the file `path` holds past byte `offset` (from its start again when it
        was cut shorter), read a chunk at a time; the offset read up to."""
        st = await site.stat(path)
        if st is None:
            return offset
        if st.size < offset:  # truncated, or a new file in its place
            offset = 0
        while offset < st.size:
            data = await site.read_from(path, offset, min(st.size - offset, FOLLOW_CHUNK_BYTES))
            if not data:  # gone or cut shorter since its size was asked: the next read sees
                break
            offset += len(data)
            if text := decoder.decode(data):
                write(text)
        return offset

    @staticmethod
    async def _flux_spellings(site: Site, job: Job, pattern: str | None
                              ) -> tuple[str | None, str | None]:
        """`pattern` with flux's emoji form of the job's id (`{{id.emoji}}`) as the site's
        flux spells it (its own list; the words form is spelled locally, with the other
        forms); with why not, where it did not."""
        from .dialects.flux_commands import ID_SPELLINGS

        if not pattern or not job.native_id or site.script.name != "flux":
            return pattern, None
        for form in ID_SPELLINGS:
            if (tag := f"{{{{id.{form}}}}}") in pattern:
                try:
                    pattern = pattern.replace(tag, await site.job_id_spelled(job.native_id,
                                                                             form))
                except (SiteError, BadInput) as e:
                    return pattern, f"which the site's flux did not spell ({e})"
        return pattern, None

    @staticmethod
    def _log_file(site: Site, job: Job, pattern: str) -> tuple[str, str | None]:
        """The file the scheduler writes for the job's output path `pattern` (neutral,
        Slurm-style: `run-%x-%j.log`): the job's id and name where its scheduler puts them
        in; or, when the name holds what only the running job knows (an array task's
        index), `pattern` and what that is."""
        from .dialects.scripts_common import output_file_name

        spec = job.spec
        name = spec.name if spec else job.name
        if spec is not None and job.token:  # the name as the scheduler keeps it
            name = site.script.job_name(site.scheduler_spec(spec, job.token).name or "")
        # a site whose submit command is given the paths (Slurm's qsub) hands them to sbatch
        target = "slurm" if getattr(site.commands, "submit_paths", False) \
            else site.script.name
        if target == "pbs" and (getattr(getattr(site, "cfg", None), "flavor", None) == "torque" or (
                spec is not None and spec.source_dialect == "pbs"
                and spec.metadata.get("pbs_flavor") == "torque")):
            target = "torque"  # Torque's -o/-e take no pattern (PBS Pro's ^array_index^)
        return output_file_name(pattern, target, job_id=job.native_id or "", name=name,
                                array=bool(spec and spec.array))

    @staticmethod
    async def _output_starts(site: Site, job: Job) -> dict[str, int] | None:
        """How long the job's output files were when its wrapper started ({} when it noted
        none, e.g. output to a spool file); None when there is no such note (not started,
        or a site without the wrapper)."""
        from .wrapper import output_offsets_file, parse_output_offsets

        if not job.token or site.event_channel is EventChannel.NONE:
            return None
        text = await site.tail(output_offsets_file(site.job_dir(job.token)), 5)
        return parse_output_offsets(text) if text is not None else None

    @staticmethod
    def _appended(site: Site, job: Job, path: str) -> bool:
        """Whether the job's output file `path` is one it appends to and not its own new
        file (the engine's default files are in the job's own directory)."""
        from .dialects.scripts_common import output_mode_of

        own = job.token and path.startswith(site.expand(site.job_dir(job.token)) + "/")
        return bool(job.spec) and not own and output_mode_of(job.spec) == "append"

    async def files(self, job_id: str) -> list[str]:
        """The result files in the job's working directory, as paths on its site (listed over
        SFTP, never by a shell). BadInput for an unknown job, SiteError when the site is
        unreachable."""
        job = self.store.get_job(job_id)
        return await self._job_site(job).job_files(job)

    async def fetch_pairs(self, job_id: str, dest: str | Path | None = None
                          ) -> tuple[Path, list[tuple[str, Path]]]:
        """Where `fetch` would write: the local destination directory (`dest`, else
        ./SITE-NUMBER; inside the server's root when there is one) and a (remote path, local
        path) pair per result file; paths that would leave the directory are left out. Nothing
        is copied. BadInput for an unknown job or a destination outside the server's root."""
        dest_dir, pairs, stats = await self._fetch_listing(job_id, dest)
        return dest_dir, not_regular(dest_dir, pairs, {p: f.mode for p, f in stats.items()})[0]

    async def _fetch_listing(self, job_id: str, dest: str | Path | None
                             ) -> tuple[Path, list[tuple[str, Path]], dict[str, FileStat]]:
        """`fetch_pairs` and each result file's listing (remote path -> its size and mode),
        from the one listing of the job's directory; the pairs include the FIFOs, devices,
        sockets and symbolic links there (for `fetch_choice` to name, never to copy)."""
        if dest is not None:
            check_text("dest", str(dest))  # a NUL or a newline names no directory
        job = self.store.get_job(job_id)
        self._refuse_unsubmitted(job, "no result files")
        site = self._job_site(job)
        dest_dir = Path(dest or Path.cwd() / job.id.replace(":", "-"))
        if self.server_root is not None:  # in a server: only inside its root directory
            from .transfer import Location, confine

            rel = str(dest or job.id.replace(":", "-"))
            dest_dir = Path(confine(Location(None, rel), self.server_root).path)
        _check_dest_dir(dest_dir)  # before the site is asked
        wd = job.workdir or (job.spec.working_directory if job.spec else "")
        wd = await site.resolve(wd) if wd else wd
        pairs = []
        listed = await site.job_file_stats(job, special=True)
        if not listed and wd and job.state.terminal and await site.real_path(wd) is None:
            raise SiteError(
                f"{job.id}'s working directory {wd} is no longer on {job.site} (removed since "
                f"the job ended {job.state.value}: a purge of scratch space, or by hand): "
                "nothing to fetch")
        for remote in (f.path for f in listed):
            inside = wd and remote.startswith(wd)
            rel = remote[len(wd):].lstrip("/") if inside else Path(remote).name
            if ".." not in Path(rel).parts:
                pairs.append((remote, dest_dir / rel))
        return dest_dir, pairs, {f.path: f for f in listed}

    async def _link_lines(self, job: Job, links: list[str]) -> dict[str, str]:
        """Why each result file in `links` (symbolic links, by remote path) is not fetched,
        naming where it leads (fetch_guard.link_line), resolved on the site without reading
        through it, LINKS_AT_ONCE at a time, in the order of `links`; past
        MAX_LINKS_RESOLVED links the rest are named without looking."""
        if not links:
            return {}
        site = self._job_site(job)
        wd = job.workdir or (job.spec.working_directory if job.spec else "")
        job_dir = await site.real_path(wd) if wd else None
        asking = asyncio.Semaphore(LINKS_AT_ONCE)

        async def line(remote: str) -> str:
            async with asking:
                got = await site.link_target(remote)
            return link_line(*got, job_dir) if got else \
                "a symbolic link, gone since the listing; not fetched"
        asked = links[:MAX_LINKS_RESOLVED]
        out: dict[str, str] = {}
        # every one ended before an error is raised (the first in order): none left running
        for remote, got in zip(asked, await asyncio.gather(*map(line, asked),
                                                            return_exceptions=True), strict=True):
            if isinstance(got, BaseException):
                raise got
            out[remote] = got
        return out

    def _fetch_bound(self, max_file_bytes: int | None) -> tuple[int, str]:
        """The fetch's bound on one file's size, and where it comes from (for messages).
        BadInput for a bound that is not a positive whole number."""
        if max_file_bytes is None:
            return self.config.fetch_max_file_bytes, "fetch_max_file_bytes in the sites file"
        if isinstance(max_file_bytes, bool) or not isinstance(max_file_bytes, int) \
                or max_file_bytes <= 0:
            raise BadInput(f"max_file_bytes: expected a whole number of bytes above 0, not "
                           f"{max_file_bytes!r}")
        return max_file_bytes, "the bound this fetch was given"

    async def fetch_choice(self, job_id: str, dest: str | Path | None = None, *,
                           files: Iterable[str] | None = None, overwrite: bool = False,
                           max_file_bytes: int | None = None
                           ) -> tuple[Path, list[tuple[str, Path]], list[str]]:
        """What a fetch would write: the destination directory, the (remote, local) pairs it
        would copy and one "REL: why" line per result file it would skip (a hidden name not
        named in `files`, an existing file no fetch of this job wrote, unless `overwrite`, a
        file above `max_file_bytes` (else the sites file's `fetch_max_file_bytes`) or beyond
        the room at the destination: see fetch_guard). Nothing is copied. BadInput as
        `fetch_pairs`, or for a name in `files` the job has no result file for."""
        job = self.store.get_job(job_id)
        bound, setting = self._fetch_bound(max_file_bytes)
        dest_dir, pairs, stats = await self._fetch_listing(job.id, dest)
        chosen, skipped = choose(job.id, dest_dir, pairs, files=files, overwrite=overwrite,
                                 ours=self.store.fetched_by)
        links = await self._link_lines(job, [r for r, _ in chosen
                                             if stat.S_ISLNK(stats[r].mode)])
        chosen, odd = not_regular(dest_dir, chosen, {p: f.mode for p, f in stats.items()},
                                  links)
        chosen, big = bounded(dest_dir, chosen, {p: f.size for p, f in stats.items()},
                              bound=bound, setting=setting)
        return dest_dir, chosen, skipped + odd + big

    async def fetch(self, job_id: str, dest: str | Path | None = None, *,
                    only: set[str] | None = None, files: Iterable[str] | None = None,
                    overwrite: bool = False, max_file_bytes: int | None = None
                    ) -> FetchResult:
        """Copy the job's result files (only the remote paths in `only`, only the relative
        paths in `files`, when given) into the destination `fetch_pairs` names. Safe by
        default: a hidden name is fetched only when named in `files`, and an existing local
        file is replaced only when this job's earlier fetch wrote it and it is unchanged, or
        with `overwrite`; a file larger than the fetch's bound (`max_file_bytes`, else the
        sites file's `fetch_max_file_bytes`), before the copy or grown past it during it, or
        than the room left at the destination, is not written either; the others are
        skipped and listed in the result (fetch_guard). BadInput as `fetch_choice`;
        SiteError when the site is unreachable."""
        job = self.store.get_job(job_id)
        site = self._job_site(job)
        bound, setting = self._fetch_bound(max_file_bytes)
        dest_dir, chosen, skipped = await self.fetch_choice(
            job.id, dest, files=files, overwrite=overwrite, max_file_bytes=max_file_bytes)
        out = FetchResult(dest_dir, skipped=skipped)
        workdir = job.workdir or (job.spec.working_directory if job.spec else None)
        for remote, local in chosen:
            if only is not None and remote not in only:
                continue
            local.parent.mkdir(parents=True, exist_ok=True)
            try:
                await site.fetch(remote, str(local), max_bytes=bound, within=workdir)
            except OutputTooLarge:  # it grew past the bound after the listing
                out.skipped.append(too_large_line(local.relative_to(dest_dir).as_posix(),
                                                  None, bound, setting))
                continue
            except LeftItsDirectory:  # the job made it a link after the listing
                out.skipped.append(f"{local.relative_to(dest_dir).as_posix()}: became a "
                                   "symbolic link, or was reached through one out of the "
                                   "job's directory, after it was listed: not fetched")
                continue
            self.store.note_fetched(job.id, canonical(local))
            out.paths.append(local)
        return out

    # -- translation (pure) --------------------------------------------------------------------
    @staticmethod
    def translate(text: str, to: str, from_: str | None = None, *,
                  dependency_ids: Literal["source", "target"] = "source"
                  ) -> tuple[str, list[str], JobSpec]:
        """Translate batch script `text` into dialect `to` (from `from_`, else the dialect
        detected): the script, one warning per directive dropped, approximated or kept as is,
        and the scheduler-neutral JobSpec in between. A dependency's job ids name jobs of the
        source's site, so another scheduler gets none (said), unless `dependency_ids` is
        "target". Pure; BadInput for an unknown dialect or a request the target cannot
        carry exactly."""
        from .dialects.translate import translate

        return translate(text, to, from_, dependency_ids=dependency_ids)

    @staticmethod
    def check_config(path: str | Path | None = None) -> FederationConfig:
        """The sites file at `path` (else $DIAMOND_CONFIG, else the default), read and
        checked without opening anything: BadInput naming the mistake."""
        return load_config(path)

    @staticmethod
    def redacted(value: Any) -> Any:
        """`value` (text, or JSON-like data) with what the store would not keep (passwords,
        tokens, keys) replaced by ***: for what a face logs or shows of the configuration (a
        request's error may quote what the user sent)."""
        return redact(value)

    @staticmethod
    def error_said(error: BaseException) -> str:
        """What every face (CLI, magics, REST, MCP) shows of `error`. A site's or the engine's
        words (a DiamondError other than BadInput) as the store keeps them: secrets ***. Bad
        input whole, as it may quote what the user sent (theirs to see), but for the values of
        this process's secret-named environment variables (ANTHROPIC_API_KEY, a Globus or
        slurmrestd token ...): a site's refusal may echo one."""
        text = str(error)
        if isinstance(error, DiamondError) and not isinstance(error, BadInput):
            return redact(text)
        return redact_environment(text)

    @staticmethod
    def read_script(path: str | Path, *, name: str | None = None) -> str:
        """The job script file at `path` as text (bytes that are not UTF-8 replaced). BadInput
        when it cannot be read or is binary, or is a pipe nothing writes to; `name`: how
        messages name it (default: `path`)."""
        from .transports.base import read_named_file

        whole = Path(os.path.abspath(Path(path).expanduser()))
        said = str(path) if name is None else name
        for part in (whole, *whole.parents):  # a link planted in /tmp sends what it leads to
            if (owner := _planted_link_owner(part)) is not None:
                raise BadInput(f"{said}" + ("" if part == whole else f" (its part {part})")
                               + f" is a symbolic link another user (uid {owner}) made in a "
                               f"shared directory, leading to {os.readlink(part)}: a job "
                               "script is not read through it; give your own file")
        try:  # a pipe is read as its writer fills it (`<(./make.sh)`); /dev/zero never ends
            data = read_named_file(whole, MAX_SCRIPT_BYTES, name=said,
                                   instead="give the job script's file, or a pipe its "
                                   "writer fills")
        except IsADirectoryError:
            raise BadInput(_directory_given(whole, said)) from None
        except OSError as e:
            raise BadInput(f"cannot read {said}: {e.strerror}") from None
        if len(data) > MAX_SCRIPT_BYTES:
            raise BadInput(f"{said}: more than {MAX_SCRIPT_BYTES} bytes, more than a job "
                           "script holds (Slurm's own bound, max_script_size, is 4 MB by "
                           "default): not read further")
        return script_text(data, said)

    @staticmethod
    def walltime_seconds(text: str) -> int:
        """A time limit in any sbatch `--time` form (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S) in
        seconds. Pure; BadInput naming the accepted forms."""
        from .dialects.slurm_script import fmt_slurm_time, parse_slurm_time

        secs = parse_slurm_time(text)
        if secs is None:
            raise BadInput(f"--time {text!r}: expected minutes, HH:MM:SS or D-HH[:MM[:SS]]"
                           f"{_time_with_unit_hint(text)}")
        if over := _time_field_over(text.strip()):
            raise BadInput(f"--time {text!r}: {over} is out of range (minutes and seconds "
                           f"run 0-59, hours 0-23 after a day; {fmt_slurm_time(secs)} is the "
                           "same time written in range)")
        if secs == 0:
            raise BadInput(f"--time {text!r}: {ZERO_TIME_LIMIT}")
        return secs

    @staticmethod
    def parse(text: str, dialect: str | None = None) -> JobSpec:
        """A batch script in any dialect (`dialect`, else detected from its directives) as a
        JobSpec; a script without any directive is run as is. Pure; BadInput when it is empty or
        binary, when two dialects' directives tie, or naming a directive's bad value."""
        from .dialects import get_script_dialect
        from .dialects.scripts_common import plain_script
        from .dialects.translate import count_sentinels, detect_dialect

        if not text.strip():
            raise BadInput("the job script is empty")
        script_text(text, "the job script")
        if dialect is None and not any(count_sentinels(text).values()):
            return plain_script(text)
        return get_script_dialect(dialect or detect_dialect(text)).parse_script(text)

    @classmethod
    def spec_from_text(cls, text: str, dialect: str | None = None, *, name: str | None = None,
                       default_name: str | None = None,
                       overrides: dict[str, Any] | None = None,
                       said_as: Mapping[str, str] | None = None) -> JobSpec:
        """The one way a face turns script text into a JobSpec: `parse` (any dialect, or a
        plain script run as is), then the face's options. `overrides` maps `queue` to the
        spec's queue, the needs (`needs.NEED_OPTIONS`: arch, software, container, gpu_type,
        memory) through `needs.with_options`, `force` to nothing (the submit's business),
        and any other key to a `Resources` field (None values are ignored);
        `name` replaces the script's job name, `default_name` is used when it has none.
        BadInput as `parse`, or naming the override that does not fit (as `said_as` names
        it, see `apply_options`); a directive's value that would not show as itself names
        the directive's line."""
        spec = cls.parse(text, dialect)
        _check_directive_lines(text)
        return cls.apply_options(spec, name=name, default_name=default_name,
                                 overrides=overrides, said_as=said_as)

    @staticmethod
    def apply_options(spec: JobSpec, *, name: str | None = None,
                      default_name: str | None = None,
                      overrides: dict[str, Any] | None = None,
                      said_as: Mapping[str, str] | None = None) -> JobSpec:
        """A face's options applied to a spec, as `spec_from_text` applies them to the spec
        it parsed (a face given a JobSpec rather than a script uses this). Pure; BadInput
        naming the option whose value cannot be read, as the face calls it: `said_as` maps
        `name` and an override's key to the face's word (`queue` to `--partition`)."""
        from .needs import NEED_OPTIONS, with_options

        for key, value in ((overrides or {}) | {"name": name}).items():
            if value is not None and key not in NEED_OPTIONS and key != "force":
                check_field((said_as or {}).get(key, key), value, key)
            if key in ("queue", "qos", "reservation") and isinstance(value, str) and \
                    (odd := _SHELL_SYNTAX.search(value)):  # a script's ${PART} is kept
                what = "partition or queue" if key == "queue" else key
                raise BadInput(f"{(said_as or {}).get(key, key)} {value!r} holds "
                               f"{odd.group()!r}, and no scheduler's {what} name holds one "
                               "(it is shell syntax); give the name as the scheduler lists "
                               "it (letters, digits, _ . -)")

        spec = with_options(spec, **{k: v for k, v in (overrides or {}).items()
                                     if k in NEED_OPTIONS}, said_as=said_as)
        upd: dict[str, Any] = {}
        res: dict[str, Any] = {}
        for key, value in (overrides or {}).items():
            if value is None or key in NEED_OPTIONS or key == "force":
                continue
            if key == "queue":
                upd["queue"] = value
            else:
                res[key] = value
        if res:
            upd["resources"] = spec.resources.model_copy(update=res)
        if name or (default_name and not spec.name):
            upd["name"] = name or default_name
        return spec.model_copy(update=upd) if upd else spec


    # -- read-only queries for the REST face (server extension) --------------------------------
    def count_jobs(self, site: str | None = None, states: Iterable[JobState | str] | None = None,
                   name_like: str | None = None) -> int:
        """How many stored jobs `jobs` would list with these filters and no limit."""
        return self.store.count_jobs(site=site, states=states, name_like=name_like)

    def events_since(self, seq: int = 0, *, kinds: Iterable[str] | None = None,
                     job_id: str | None = None, limit: int | None = 1000) -> list[Event]:
        """Stored events with a sequence number above `seq`, oldest first: only these `kinds`,
        only job `job_id`'s; at most `limit` (None: all). What a reconnecting client replays."""
        return self.store.events_since(seq, kinds=kinds, job_id=job_id, limit=limit)

    def last_seq(self) -> int:
        """The sequence number of the newest stored event (0 when there is none)."""
        return self.store.last_seq()

    def transfers(self, *, limit: int | None = 50, offset: int = 0) -> list[dict[str, Any]]:
        """Stored transfers, newest first, as JSON-ready dicts: at most `limit` (None: all)
        after skipping `offset`."""
        return [t.model_dump(mode="json")
                for t in self.store.list_transfers(limit=limit, offset=offset)]


_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _check_directive_lines(text: str) -> None:
    """BadInput naming the first directive line (any scheduler's) holding a character that
    does not show as itself, as the user wrote it (`line 2 (#SBATCH -J)`), not as the spec
    field it fills."""
    from .dialects.body import SENTINELS

    for number, line in enumerate(text.splitlines(), 1):
        if any(rx.match(line) for rx in SENTINELS.values()):
            check_text(f"line {number} ({visible(' '.join(line.split()[:2]))})", line,
                       unshown=True)


def _door_advice(site: str, refused: Exception) -> str:
    """What to do after `site`'s door refused the login (an SSH key, a one-time code,
    slurmrestd's token) or its SSH host key did not match, so that a submit was never sent."""
    if getattr(refused, "door", None) == "slurmrestd":
        return (f"check the token {site} is given (token_command or token_file in its sites "
                "entry) and that slurmrestd takes it for this user, then submit again")
    if getattr(refused, "interactive", False):
        return (f"log in to {site} (`diamond login {site}`, or the site's Log in button in "
                "JupyterLab), then submit again")
    if isinstance(refused, AuthError):
        return (f"check {site}'s credentials in the sites file (key_file, cert_file, the "
                "ssh_config's IdentityFile or the agent) and that the site accepts that key, "
                "then submit again")
    return f"check {site}'s host key (known_hosts) before submitting again"


def _time_field_over(text: str) -> str | None:
    """The field of a parsed `--time` past its clock range (`1:60:00`: 60 minutes;
    `1-25:00:00`: 25 hours after a day), which sbatch carries over unsaid; None when each
    is in range. The leading field (minutes alone, hours of H:M:S, days) is unbounded."""
    day, _, clock = text.rpartition("-")
    fields = clock.split(":")
    if day:  # D-H, D-H:M, D-H:M:S: every clock field bounded
        named = list(zip(("hours", "minutes", "seconds")[:len(fields)], fields, strict=True))
    else:  # M, M:S, H:M:S: the first unbounded
        names = ("hours", "minutes", "seconds")[3 - len(fields):]
        named = list(zip(names, fields, strict=True))[1:]
    for name, value in named:
        if int(value) > (23 if name == "hours" else 59):
            return f"{int(value)} {name}"
    return None


def _time_with_unit_hint(text: str) -> str:
    """For a time written with a unit (`90m`, `2h`, `1d`), which sbatch's form has not: the
    same time in that form, to give instead."""
    import re

    from .dialects.slurm_script import fmt_slurm_time

    m = re.fullmatch(r"\s*([0-9]{1,7})\s*(s|sec|m|min|h|hr|hours?|d|days?)\s*", text.lower())
    if not m:
        return ""
    secs = int(m.group(1)) * _UNIT_SECONDS[m.group(2)[0]]
    return f" ({text.strip()} is --time {fmt_slurm_time(secs)})"

