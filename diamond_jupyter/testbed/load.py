"""Background load: a reproducible stream of jobs that keeps the test bed's queues busy.

Workload model (in the style of the Lublin-Feitelson model of parallel workloads):
- sizes: a job is serial with probability p_serial, else its node count is a power of two
  2^k with k uniform over what the cluster has (more small jobs than big ones follows from
  the cap), and it uses a power-of-two share of each node's cores;
- runtimes: log-normal (median `runtime_median_min` center-minutes, shape `runtime_sigma`),
  truncated to the partition's MaxTime; walltime requests over-estimate by 1.2-3x, as
  users do;
- arrivals: bursts; burst starts form a Poisson process (rate per site), each burst
  submits a geometric number of jobs at once.
Time is scaled: `time_scale` center-seconds pass per real second (default 60: one
center-minute per second), so minutes of a real center become seconds here.

Optional per-site keys of a profile extend the job model (profiles without them are
unchanged, draw for draw):
- `nodes` / `cpus`: a fixed node count / CPUs per node for every non-serial job (instead of
  the power-of-two draws); `gpus`: GPUs per node each job requests (`--gres=gpu:N`);
- `initial`: jobs submitted at t = 0 on top of the stream, the backlog a center's queue
  already has when one arrives (it is never empty at steady state);
- `time_scale`: this site's own scale, overriding the plan's; 1 = real time, so the
  walltime requests (Slurm minutes) over-estimate the real runtimes by the model's 1.2-3x
  and the site's queue can be reasoned about from walltimes as at a real center.

Profile `depth_misleads` is the Diamond Agent paper's point (a queue's depth is a poor
predictor of its wait; the sizes and runtimes of the queued work, and the sites' speeds,
decide it):
- alpha (home, speed 1.0): the `skewed` profile's alpha stream (overloaded, tens pending);
- beta (speed 1.5): MANY short jobs (one node, 1-64 of its 64 cores, median 5 s real,
  walltime 1 min; a backlog of 40 at the start, ~90 a minute, ~85% of its cores): a deep
  queue (often 10+ pending) that drains within seconds;
- gamma (fastest, speed 2.0): FEW long jobs (median 3 min real, walltime 4-9 min), each
  taking a whole node (32 cores and both GPUs); a backlog of 3 at the start and ~1 a
  minute: both nodes stay full, with 0-3 jobs pending, so a new job waits minutes although
  the queue looks the shortest;
- delta (the Grid Engine site, speed 0.9, when the test bed has one): the `busy` stream, so
  no site stands idle (an idle site is a fixed home that wins every round).

The load is submitted with sbatch on Slurm sites and qsub on Grid Engine sites.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..dialects import get_commands
from ..dialects.base import private_shell
from ..model import SiteError
from .clusters import CLUSTERS, SLURM_CLUSTERS, ClusterDef

if TYPE_CHECKING:
    from ..config import SiteConfig

PROFILES: dict[str, dict[str, dict]] = {
    # per site: burst rate (bursts per real minute), mean burst size, runtime median (center
    # minutes) and sigma, serial share
    "light": {c.name: dict(rate=2, burst=2, median=3, sigma=0.8, serial=0.5)
              for c in SLURM_CLUSTERS},
    "busy": {c.name: dict(rate=6, burst=3, median=6, sigma=1.0, serial=0.3)
             for c in SLURM_CLUSTERS},
    # one site much busier than the others: where a fixed home site is a bad choice
    "skewed": {
        "alpha": dict(rate=12, burst=4, median=10, sigma=0.9, serial=0.2),
        "beta": dict(rate=3, burst=2, median=4, sigma=0.8, serial=0.4),
        "gamma": dict(rate=2, burst=2, median=3, sigma=0.7, serial=0.5),
    },
    # queue depth misleads (see the module docstring); beta and gamma run in real time
    "depth_misleads": {
        "alpha": dict(rate=12, burst=4, median=10, sigma=0.9, serial=0.2),
        "beta": dict(rate=30, burst=3, median=1 / 12, sigma=0.5, serial=0.3, nodes=1,
                     initial=40, time_scale=1),
        "gamma": dict(rate=0.7, burst=1.5, median=3, sigma=0.4, serial=0, nodes=1, cpus=32,
                      gpus=2, initial=3, time_scale=1),
        # the Grid Engine site (when the test bed has one): the `busy` stream, so that no
        # site stands idle for a fixed home to win every round on
        "delta": dict(rate=6, burst=3, median=6, sigma=1.0, serial=0.3),
    },
    # busy CPU sites, and a GPU site whose GPUs are the bottleneck (the workflow benchmark's
    # downstream site): each job one node, 8 of its 32 cores and one of its 2 GPUs, median
    # 20 s real; ~8 jobs a minute keep gamma's 4 GPUs ~80% busy, with a standing queue
    "gpu_queue": {
        "alpha": dict(rate=6, burst=3, median=6, sigma=1.0, serial=0.3),
        "beta": dict(rate=6, burst=3, median=6, sigma=1.0, serial=0.3),
        "gamma": dict(rate=5.5, burst=1.5, median=1 / 3, sigma=0.5, serial=0, nodes=1,
                      cpus=8, gpus=1, initial=8, time_scale=1),
    },
}


NAME_PREFIX = "load-"  # every load job is named load-N


@dataclass(frozen=True)
class LoadJob:
    at_s: float  # real seconds after the start
    site: str
    nodes: int
    cpus_per_node: int
    runtime_s: float  # real seconds
    walltime_min: int  # requested, Slurm minutes (center time)
    name: str
    gpus: int = 0  # per node (--gres=gpu:N)
    partition: str | None = None  # None: the cluster's default
    after: str | None = None  # the name of a job of the same plan this one waits for
    think_s: float = 0.0  # real seconds after `after` has ended before this one may start


def _geometric(rng: random.Random, mean: float) -> int:
    p = 1.0 / max(mean, 1.0)
    return 1 + int(math.log(1 - rng.random()) / math.log(1 - p)) if p < 1 else 1


def plan(profile: str, seed: int, duration_s: float, time_scale: float = 60.0,
         sites: list[str] | None = None) -> list[LoadJob]:
    """The whole job stream, decided up front from the seed (pure, reproducible)."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r} (accepted: {', '.join(PROFILES)})")
    rng = random.Random(seed)
    jobs: list[LoadJob] = []
    for c in CLUSTERS:
        if sites and c.name not in sites:
            continue
        p = PROFILES[profile].get(c.name)
        if not p:
            continue
        scale = p.get("time_scale", time_scale)
        for _ in range(p.get("initial", 0)):
            jobs.append(_job(rng, c, p, 0.0, scale, len(jobs)))
        t = 0.0
        while True:
            t += rng.expovariate(p["rate"] / 60.0)
            if t >= duration_s:
                break
            for _ in range(_geometric(rng, p["burst"])):
                jobs.append(_job(rng, c, p, t, scale, len(jobs)))
    return sorted(jobs, key=lambda j: j.at_s)


def _job(rng: random.Random, c: ClusterDef, p: dict, t: float, scale: float, n: int) -> LoadJob:
    gpus = 0
    if p["serial"] and rng.random() < p["serial"]:
        nodes, cpus = 1, 1
    else:
        nodes = p.get("nodes") or 2 ** rng.randint(0, int(math.log2(c.nodes)))
        cpus = p.get("cpus") or 2 ** rng.randint(0, int(math.log2(c.cpus)))
        gpus = min(p.get("gpus", 0), c.gpus)
    max_min = _max_minutes(c)
    run_min = min(rng.lognormvariate(math.log(p["median"]), p["sigma"]), max_min * 0.8)
    wall = min(max_min, max(1, math.ceil(run_min * rng.uniform(1.2, 3.0))))
    return LoadJob(at_s=round(t, 3), site=c.name, nodes=nodes, cpus_per_node=cpus,
                   runtime_s=round(run_min * 60 / scale, 2), walltime_min=wall,
                   name=f"{NAME_PREFIX}{n}", gpus=gpus)


def _max_minutes(c: ClusterDef) -> int:
    from ..dialects.slurm_script import parse_slurm_time

    default = next(p for p in c.partitions if p.default)
    return (parse_slurm_time(default.max_time) or 86400) // 60


LOADED_SCHEDULERS = ("slurm", "sge")  # the schedulers `submit_argv` can load


def submit_argv(j: LoadJob, scheduler: str, after_id: str | None = None, *,
                hold: bool = False) -> list[str]:
    """The plain submit command of one load job on a site run by `scheduler`: sbatch with a
    wrapped sleep, or Grid Engine's qsub of the sleep binary (`-b y`), its slots in the `smp`
    parallel environment on one host or `mpi` across hosts, its walltime as `h_rt`; held
    until the job `after_id` (the site's id of `j.after`) has ended, when given; `hold`:
    held until released (a think time after the predecessor's end)."""
    if scheduler == "slurm":
        return ["sbatch", "--parsable", *(["--hold"] if hold else []), "-J", j.name,
                "-N", str(j.nodes),
                f"--ntasks-per-node={j.cpus_per_node}",
                *([f"--gres=gpu:{j.gpus}"] if j.gpus else []),
                *([f"--partition={j.partition}"] if j.partition else []),
                *([f"--dependency=afterany:{after_id}"] if after_id else []),
                "-t", str(j.walltime_min), "-o", "/dev/null", "--wrap", f"sleep {j.runtime_s}"]
    if scheduler == "sge":
        if j.gpus:
            raise ValueError(f"load job {j.name}: Grid Engine sites here have no GPUs")
        return ["qsub", "-terse", *(["-h"] if hold else []), "-N", j.name, "-b", "y",
                "-o", "/dev/null", "-j", "y",
                "-pe", "smp" if j.nodes == 1 else "mpi", str(j.nodes * j.cpus_per_node),
                "-l", f"h_rt={j.walltime_min * 60}",
                *(["-hold_jid", after_id] if after_id else []),
                *(["-q", j.partition] if j.partition else []), "sleep", str(j.runtime_s)]
    raise ValueError(f"no background load for scheduler {scheduler!r} "
                     f"(accepted: {', '.join(LOADED_SCHEDULERS)})")


END_POLL_S = 1.0  # how often a site is asked whether the predecessors waited on have ended


class _Ends:
    """The moments a site's jobs end, for jobs held a think time after them: every watched
    job asked about in one status query a poll (`END_POLL_S`), from its submission on. A job
    the queue no longer lists, or lists as ended, has ended (seen at most a poll late); a
    query the scheduler did not answer says nothing."""

    def __init__(self, transport: _Runs, scheduler: str) -> None:
        self._transport, self._commands = transport, get_commands(scheduler)
        self._ended: dict[str, asyncio.Future] = {}  # job id -> the loop time it was seen ended
        self._poller: asyncio.Task | None = None

    def watch(self, job_id: str) -> asyncio.Future:
        """A future of the (loop) time the job `job_id` was first seen no longer waiting or
        running."""
        if job_id not in self._ended:
            self._ended[job_id] = asyncio.get_running_loop().create_future()
        if self._poller is None or self._poller.done():
            self._poller = asyncio.create_task(self._poll())
        return self._ended[job_id]

    async def _live(self, ids: list[str]) -> set[str] | None:
        """Which of `ids` wait or run; None when the scheduler did not answer."""
        argv, stdin = private_shell(self._commands.status_argv(ids))
        res = await self._transport.run(argv, stdin=stdin)
        if res.exit_status != 0:
            unanswered = getattr(self._commands, "status_unanswered", None)
            if unanswered is not None and unanswered(res.exit_status, res.stderr or ""):
                return None
            if len(ids) > 1:  # one id long purged fails the query of all (Slurm)
                alone = [await self._live([i]) for i in ids]
                return None if None in alone else set().union(*alone)
            return set()
        try:
            listed = self._commands.parse_status(res.stdout)
        except SiteError:
            return None
        return {s.native_id for s in listed if not s.state.terminal} & set(ids)

    def close(self) -> None:
        if self._poller is not None:
            self._poller.cancel()

    async def _poll(self) -> None:
        loop = asyncio.get_running_loop()
        while waiting := [i for i, ended in self._ended.items() if not ended.done()]:
            live = await self._live(waiting)
            if live is not None:
                now = loop.time()
                for job_id in waiting:
                    if job_id not in live:
                        self._ended[job_id].set_result(now)
            if any(not ended.done() for ended in self._ended.values()):
                await asyncio.sleep(END_POLL_S)


async def run(config_path: str, jobs: list[LoadJob]) -> dict:
    """Submit the planned jobs at their times over SSH with plain sbatch or qsub (the site's
    scheduler); returns counts.

    Jobs are submitted one after another in plan order (a job late on its time goes at once),
    so jobs planned for the same moment reach the scheduler in that order: a rebuilt queue
    keeps its running jobs ahead of its waiting ones. A job with a think time after its
    predecessor is submitted dependent, and held unless that end and think time are past;
    the predecessor is watched from its own submission, and the held job released a think
    time after its end: the run returns when every such job is.
    """
    from ..config import load_config
    from ..transports import make_transport

    cfg = load_config(config_path)
    sites = {s.name: s for s in cfg.sites if s.scheduler in LOADED_SCHEDULERS}
    transports = {n: make_transport(s.transport, site=n) for n, s in sites.items()}
    ends = {n: _Ends(t, sites[n].scheduler) for n, t in transports.items()}
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    submitted: dict[str, int] = {}
    ids: dict[tuple[str, str], str] = {}  # (site, job name) -> the scheduler's job id
    releases: list[asyncio.Task] = []
    failed = 0

    # the predecessors of jobs with a think time are watched from their own submission: the
    # think time runs from their end, which may come before the dependent job's submission
    watched = {(j.site, j.after) for j in jobs if j.after and j.think_s > 0}
    end_of: dict[tuple[str, str], asyncio.Future] = {}  # (site, name) -> its end (loop time)

    async def release_after(site: str, scheduler: str, job_id: str, ended: asyncio.Future,
                            think_s: float) -> None:
        nonlocal failed
        await asyncio.sleep(max(0.0, await ended + think_s - loop.time()))
        argv = get_commands(scheduler).release_argv([job_id])
        for _ in range(2):  # once more after a poll's pause: a controller busy a moment
            if (await transports[site].run(argv)).exit_status == 0:
                return
            await asyncio.sleep(END_POLL_S)
        failed += 1  # left held: counted with the refused

    async def one(j: LoadJob) -> None:
        nonlocal failed
        scheduler = sites[j.site].scheduler
        after_id = ids.get((j.site, j.after)) if j.after else None
        ended = end_of.get((j.site, j.after)) if after_id and j.think_s > 0 else None
        # held unless the predecessor's end and the think time after it are past already
        hold = ended is not None and not (ended.done()
                                          and ended.result() + j.think_s <= loop.time())
        res = await transports[j.site].run(submit_argv(j, scheduler, after_id, hold=hold))
        if res.exit_status != 0 and after_id:
            # the predecessor ended long ago and its scheduler forgot it (Slurm refuses a
            # dependency on a purged job): nothing is left to wait for
            hold = False
            res = await transports[j.site].run(submit_argv(j, scheduler))
        if res.exit_status == 0:
            submitted[j.site] = submitted.get(j.site, 0) + 1
            # sbatch --parsable: "id" or "id;cluster"; qsub -terse: "id"
            ids[(j.site, j.name)] = job_id = res.stdout.strip().split(";")[0]
            if (j.site, j.name) in watched:
                end_of[(j.site, j.name)] = ends[j.site].watch(job_id)
            if hold and ended is not None:
                releases.append(asyncio.create_task(
                    release_after(j.site, scheduler, job_id, ended, j.think_s)))
        else:
            failed += 1

    per_site: dict[str, list[LoadJob]] = {}
    for j in sorted(jobs, key=lambda j: j.at_s):  # stable: plan order among equal times
        if j.site in transports:
            per_site.setdefault(j.site, []).append(j)

    async def stream(site_jobs: list[LoadJob]) -> None:
        for j in site_jobs:
            await asyncio.sleep(max(0.0, t0 + j.at_s - loop.time()))
            await one(j)
    try:
        await asyncio.gather(*(stream(js) for js in per_site.values()))
        await asyncio.gather(*releases)
    finally:
        for task in releases:
            task.cancel()
        for watch in ends.values():
            watch.close()
        await asyncio.gather(*(t.close() for t in transports.values()))
    return {"submitted": submitted, "failed": failed, "jobs": len(jobs),
            "released": len(releases)}


CANCEL_BATCH = 200  # job ids to one scancel


class _Runs(Protocol):
    """A Site or a transport: anything that runs an argv on a cluster."""

    async def run(self, argv: list[str], *, stdin: bytes | None = ...,
                  check: bool = ...) -> Any: ...


async def cancel_named(site: _Runs, prefix: str, scheduler: str = "slurm") -> int:
    """Cancel the jobs in a Slurm or Grid Engine site's queue whose names start with
    `prefix`, never anyone else's, CANCEL_BATCH ids to a scancel or qdel; returns how many
    were asked to end. The ids come from squeue or `qstat -xml` and pass the dialect's check
    before they reach the cancel command's argv."""
    if not prefix:
        raise ValueError("cancel_named needs a job name prefix (a blank one matches every job)")
    if scheduler == "sge":
        out = await site.run(["qstat", "-xml"], check=False)  # the user's own jobs
        ids = _sge_named(out.stdout, prefix)
    else:
        out = await site.run(["squeue", "-h", "-o", "%i %j"], check=False)
        ids = [row.split()[0] for row in out.stdout.splitlines()
               if len(row.split()) == 2 and row.split()[1].startswith(prefix)]
    commands = get_commands(scheduler)
    for k in range(0, len(ids), CANCEL_BATCH):
        await site.run(commands.cancel_argv(ids[k:k + CANCEL_BATCH]), check=False)
    return len(ids)


def _sge_named(xml_text: str, prefix: str) -> list[str]:
    """The job numbers in `qstat -xml` whose names start with `prefix`, read by the Grid
    Engine dialect (a job spread over hosts is one job); nothing when the output is not
    qstat's XML."""
    try:
        jobs = get_commands("sge").parse_status(xml_text)
    except SiteError:
        return []
    return [j.native_id for j in jobs if (j.name or "").startswith(prefix)]


async def cancel(config_path: str | Path, prefix: str = NAME_PREFIX) -> int:
    """Cancel what a load left in the Slurm and Grid Engine sites' queues (the jobs whose
    names start with `prefix`: load-N unless the caller renamed them); returns how many
    were still listed (a cancelled job stays until it has left its nodes, so 0 means
    none is left); a site that cannot be reached is passed over."""
    from ..config import load_config
    from ..transports import make_transport

    async def one(site: SiteConfig) -> int:
        t = make_transport(site.transport, site=site.name)
        try:
            return await cancel_named(t, prefix, site.scheduler)
        finally:
            await t.close()

    sites = [s for s in load_config(config_path).sites
             if s.scheduler in LOADED_SCHEDULERS and s.transport.kind == "ssh"]
    got = await asyncio.gather(*(one(s) for s in sites), return_exceptions=True)
    return sum(n for n in got if isinstance(n, int))


def describe(jobs: list[LoadJob]) -> list[dict]:
    return [asdict(j) for j in jobs]


HISTORY_USER = "history(64999)"  # the owner the seeded accounting lines name (no such login)
HISTORY_ID_BASE = 1_000_000_000  # their job ids: far above any the test bed gives (int32)
# SWF field 11 -> how the job ended: 0 failed, 1 completed, 5 cancelled; of a job's parts,
# 2 one stopped to resume later (preempted, killed from outside), 3 the last part of a job
# that completed, 4 of one that failed; -1 (unknown) ran, and nothing says it failed
_SWF_STATE = {0: "FAILED", 1: "COMPLETED", 2: "PREEMPTED", 3: "COMPLETED", 4: "FAILED",
              5: "CANCELLED"}
# Grid Engine's accounting (failed, exit_status) of each: a kill from outside is failed 100
# with SIGKILL's 137, as qdel leaves it
_SGE_END = {"COMPLETED": (0, 0), "FAILED": (0, 1), "CANCELLED": (100, 137),
            "PREEMPTED": (100, 137)}


def history_state(status: int) -> str:
    """The Slurm state a history job of SWF status `status` ended in."""
    return _SWF_STATE.get(status, "COMPLETED")


def history_lines(jobs: list, c: ClusterDef, now: datetime, prefix: str = "") -> list[str]:
    """The accounting lines (Slurm's jobcomp/filetxt format, as `sacct -c` reads it) of a
    replay's history jobs (`trace.HistoryJob`), their times relative to `now` (local
    time, as slurmctld writes them)."""
    default = next((p.name for p in c.partitions if p.default), None) or (
        c.partitions[0].name if c.partitions else "compute")

    def t(offset_s: float) -> str:
        return (now + timedelta(seconds=offset_s)).strftime("%Y-%m-%dT%H:%M:%S")

    out = []
    # a job cancelled while it waited (`h.started` False) is written as slurmctld writes
    # one: CANCELLED, its start and end the moment it was cancelled
    for k, h in enumerate(jobs):
        state = history_state(h.status)
        out.append(
            f"JobId={HISTORY_ID_BASE + c.index * 10_000_000 + k} UserId={HISTORY_USER} "
            f"GroupId={HISTORY_USER} Name={prefix}{h.name} JobState={state} "
            f"Partition={h.partition or default} TimeLimit={h.walltime_min} "
            f"StartTime={t(h.start_s)} EndTime={t(h.end_s)} NodeList=(null) "
            f"NodeCnt={h.nodes} ProcCnt={h.cpus} WorkDir=/ ReservationName= "
            f"Tres=cpu={h.cpus},node={h.nodes},billing={h.cpus} Account= QOS= WcKey= "
            f"Cluster=unknown SubmitTime={t(h.submit_s)} EligibleTime={t(h.submit_s)} "
            f"DerivedExitCode=0:0 ExitCode={'0:0' if state == 'COMPLETED' else '1:0'} \n")
    return out


SGE_HISTORY_ID_BASE = 8_000_000  # Grid Engine job numbers of the seeded lines


def sge_history_lines(jobs: list, c: ClusterDef, now: datetime, prefix: str = "") -> list[str]:
    """The same history as Grid Engine's accounting file lines (accounting(5) of SGE
    8.1.9: colon-separated, times in epoch seconds, the request in the category), as
    `qacct -j` reads them."""
    out = []
    # Grid Engine writes no accounting record of a job deleted before it started: one
    # cancelled while it waited is not written (Slurm's jobcomp line holds it)
    for k, h in enumerate(h for h in jobs if h.started):
        submit, start, end = (int((now + timedelta(seconds=x)).timestamp())
                              for x in (h.submit_s, h.start_s, h.end_s))
        failed, code = _SGE_END[history_state(h.status)]
        usage = ":".join(["0.000000"] * 3 + ["0"] * 14)  # ru_utime .. ru_nivcsw
        out.append(
            f"all.q:{c.node_names[0]}:history:history:{prefix}{h.name}:"
            f"{SGE_HISTORY_ID_BASE + k}:sge:0:{submit}:{start}:{end}:{failed}:{code}:"
            f"{max(0, end - start)}:{usage}:NONE:defaultdepartment:smp:{h.cpus}:0:"
            f"0.000000:0.000000:0.000000:-l h_rt={h.walltime_min * 60} -pe smp {h.cpus}:"
            "0.000000:NONE:0.000000:0:0\n")
    return out


def write_history(plans: list, prefix: str = "", base: Path | None = None,
                  now: datetime | None = None, replace: bool = True) -> dict[str, int]:
    """Write each replay's history (`trace.plan_replay(history_s=...)`) into its site's
    accounting (a Slurm site's jobcomp file, Grid Engine's accounting file), as if the site
    had replayed the log before the window: the engine's calibration then reads the log's
    own recent jobs. With `replace` (the default) the history takes the place of what the
    file held, so the jobs of a run just before (another benchmark's, minutes old, hence
    the newest samples) do not stand in the log's past; without it the lines are appended.
    The file is cut in place, not swapped: slurmctld keeps its jobcomp file open for
    appending (O_APPEND), so its later lines follow the history. Returns the lines
    written per site."""
    from .clusters import base_dir, cluster

    base = base or base_dir()
    now = now or datetime.now()
    written: dict[str, int] = {}
    for plan in plans:
        c = cluster(plan.site)
        if not plan.history:
            continue
        lines = (sge_history_lines if c.scheduler == "sge" else history_lines)(
            plan.history, c, now, prefix)
        path = accounting_path(c, base)
        if replace and path.exists():
            os.truncate(path, 0)
        with open(path, "a") as f:
            f.write("".join(lines))
        written[plan.site] = written.get(plan.site, 0) + len(lines)
    return written


def accounting_path(c: ClusterDef, base: Path) -> Path:
    """Where a test-bed cluster keeps its accounting: Slurm's jobcomp file, Grid Engine's
    accounting file."""
    if c.scheduler == "sge":
        from .gridengine import sge_dir

        return sge_dir(base, c) / "cell" / "common" / "accounting"
    from .configs import cluster_dir

    return cluster_dir(base, c) / "jobcomp.txt"


def save_accounting(sites: list[str], base: Path | None = None) -> dict[Path, bytes]:
    """The accounting files of `sites` as they are now (`restore_accounting` puts them
    back): a run that writes a replayed log's history leaves the sites as it found them, so
    the next run (another background's) is not calibrated on that log's past."""
    from .clusters import base_dir, cluster

    base = base or base_dir()
    paths = {accounting_path(cluster(site), base) for site in sites}
    return {p: p.read_bytes() for p in paths if p.exists()}


def restore_accounting(saved: dict[Path, bytes]) -> None:
    """Put back what `save_accounting` read, in place (the scheduler's open file, which it
    appends to: its later lines follow)."""
    for path, data in saved.items():
        os.truncate(path, 0)
        with open(path, "ab") as f:
            f.write(data)
