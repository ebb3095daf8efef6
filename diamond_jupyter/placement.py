"""Placement: which sites can run a JobSpec, and which will finish it soonest.

Pure code: sites come in as (SiteConfig, SiteSnapshot) pairs, nothing is fetched.

Per site the verdict is one of READY (can start now, within READY_TOLERANCE_S), BUSY
(feasible but must wait), RESTRICTED (only partitions/accounts it may not use),
INCOMPATIBLE (no node or partition can ever run it; reasons say why) or UNREACHABLE.

Estimates, for a feasible site:
- start: the scheduler's estimate for this probe when given (`estimates`), else the
  backfill simulation of `placement_sim` over the snapshot, which follows the scheduler's
  `estimated_start` of pending jobs where the snapshot has them (start_source "scheduler"
  in both cases, "simulation" otherwise). Each usable partition is simulated; the one with
  the earliest start wins (ties: the site's default partition). A site with too few
  finished jobs of its own to calibrate its queue borrows the other sites' ratios
  (`calibration.borrowed`; "N elsewhere" in `explain`).
- 90% bound on the start: the simulation with every job at its class's upper runtime
  ratio (see `calibration`); for a job that may wait, at least the QBETS bound of how
  long the site's recent jobs of a similar size waited (`calibration.site_waits`, from its
  accounting and its view; `RecentWaits.similar_bound`, else its size class), and
  behind the user's own waiting jobs at least the time
  those take at the rate the site started theirs lately (`calibration.site_drain`). A job
  that fits now on idle resources no waiting job fits (nothing queued, or every waiting
  job larger than that room) is certain: its bound is its start, whatever other jobs
  waited. A bound is never before the start: where the waits end sooner, it is the start. A
  view read longer ago than `stale_after_s`, which shows jobs submitted in as long before
  it, cannot show the jobs that arrived since: its bound is at least its start put off by
  the view's age, or with those arrivals replayed ahead (`placement_stale`), and it is
  not READY.
- a job array: START and FINISH are its first task's; its last task's end (its lanes,
  `placement_sim.probe_lanes`, the last planned behind the others) is a note, in `explain`,
  and what "diamond" ranks it by (`placement_rank.ranked_finish`).
- runtime: base / speed_factor, base = history[spec.metadata['application']] (seconds at
  speed 1.0) if known; else the walltime times the share of their walltime the user's own
  recent jobs ran (`own_share`), else that of every site's recent jobs of its size
  (`calibration.pooled_share`): users ask for several times what they use, and with the
  walltime as runtime a faster site's gain looks that many times larger than it is; else
  the walltime, else DEFAULT_RUNTIME_S; never above the walltime (`RuntimePrior`).
- stage-in: stage_in_bytes over the site's metadata['bandwidth_mbps'] (megabits/s,
  default DEFAULT_BANDWIDTH_MBPS); finish = max(start, ready + stage_in) + runtime, where
  ready is now, or later for a workflow step whose inputs are still being made
  (`StageData.ready_at`).
- cost: node-hours x charge_factor, a shared node billed by the largest share of it the
  job takes (CPUs, GPUs or memory), as Slurm's MAX_TRES billing; exclusive = whole node.

Ranking ("diamond"): earliest estimated finish (from the median start). Finishes equal
within noise (FINISH_NOISE_FRACTION of the time to the earliest finish, or the starts'
uncertainty, their bound past their start, up to FINISH_NOISE_S) go to the surer start
(the lower 90% bound; a site without a bound counts its start), then to the cheapest. A
job that fits on idle resources with nothing queued ahead starts now for certain: its
bound is its start. (The bound does not weigh on
the finish itself: below ~30 samples it is the walltime simulation, a worst case, and
just above, the QBETS bound is the largest sample; on the test bed's real-log and
depth_misleads seeds 14 and 22 a risk-weighted finish chose worse than the median.)
`Placement.why_not(site)` says why a site lost (later start, longer runtime from
its speed factor, slower stage-in, or higher cost at an equal finish).

What the job needs (`needs.needs_of`: constraint expressions, architecture, GPU type and
memory from its directives and options; software, containers and MPI from its body) is
checked against the site's nodes (architecture field, features, GPUs, memory) and its
capabilities (`capabilities.SiteCapabilities`: software modules matched across spellings
by `software`, container runtimes, MPI stacks). A kind of capability the site leaves
unknown is not checked.
An explicit spec.queue binds: a site without that partition is INCOMPATIBLE (a Slurm list
`a,b`: any of them). GPU models are compared across spellings (`needs.gpu_key`). On a
Slurm site, `--gpus=N` without a node count takes as many nodes as N needs, `--nodelist`
and `--exclude` bind, and `--time-min` lets a partition cut a longer walltime to its
MaxTime. A PBS Pro job's chunks share hosts as its `place` says (`_pbs_chunks`).

Helpers: `placement_fit` (request per node, reasons), `placement_sim` (backfill),
`placement_hosts` (the hosts a job's host terms leave it), `placement_resv` (Slurm reservations),
`placement_ahead` (what the job meets of the jobs ahead of it: preemption, suspended jobs,
backfill passing it over, jobs waiting for a begin time or a dependency), `placement_rank` (the
order of the feasible sites, and why each lost), `placement_node_notes` (nodes powered
down, not responding or rebooting, and where a job starting now lands).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from fnmatch import fnmatchcase
from math import ceil
from typing import Literal

from pydantic import BaseModel, Field, PrivateAttr, computed_field

from diamond_jupyter.wording import quantity

from .calibration import (
    MIN_CONFORMAL_WAITS,
    MIN_QBETS_WAITS,
    RECENT_WAITS_S,
    WAIT_BASIS_NOTE_START,
    WAIT_FLOOR_S,
    SiteCalibration,
    borrowed,
    capped_by_waits,
    describe_start,
    pooled_share,
    queue_when_waited,
    site_waits_and_drain,
    wait_basis,
)
from .capabilities import SiteCapabilities, from_metadata
from .config import SiteConfig
from .dialects.flux_script import array_refusal as flux_array_refusal
from .dialects.outputs_common import count_array_tasks, job_hosts
from .dialects.scripts_common import sge_time
from .digits import ascii_digits
from .model import (
    NOT_STARTED,
    PER_GPU,
    UNREPORTED_BF_WINDOW,
    UNREPORTED_MAX_ARRAY,
    UNREPORTED_QUEUE_REQUIRES,
    UNREPORTED_SCHEDULER_TYPE,
    BadInput,
    DiamondError,
    Job,
    JobSpec,
    JobState,
    Node,
    Partition,
    Resources,
    SiteError,
    SiteSnapshot,
    hms,
    utcnow,
)
from .needs import (
    Constraint,
    Feature,
    Needs,
    Op,
    gpu_family_note,
    metadata_arch,
    needs_of,
    node_arch,
    node_gpu_models,
)
from .placement_ahead import (
    _backfill_passes_over,
    _backfill_tests_from,
    _preempted_on,
    _preempts,
    _suspended_hold,
    _suspended_notes,
    _waiting_notes,
    _waits_on_dependency,
    partition_passes_over,
    preemption_delays,
    preemption_off_note,
    qos_victims,
    site_passes_over,
    tiers_preempt,
    user_partition_passes_over,
)
from .placement_explain import (
    NotChecked,
    cut_reasons,
    grouped_refusals,
    held_nodes_text,
    merged_unchecked,
    refused_lines,
    refused_text,
    stale_view,
    unchecked_lines,
    view_age_line,
)
from .placement_fair_share import (
    FairShareView,
    fair_share_misses,
    fair_share_unread,
    fair_share_view,
)
from .placement_fit import (
    SLURM_WORDS,
    NodeNames,
    Req,
    Words,
    _few,
    array_span_said,
    array_too_large,
    aware,
    bracket_parts,
    complex_notes,
    consumables_short,
    counted_nodes,
    counted_parts,
    flux_requires_miss,
    global_misses,
    global_wait,
    most_gpus,
    no_time_limit,
    node_checks,
    node_power,
    node_reserved,
    node_returning,
    node_usable,
    pack_chunks,
    partition_members,
    partition_misses,
    request,
    seen_out_at,
    site_nodes,
    time_limit,
    timeouts_by_node,
    timeouts_of,
    with_complexes,
    words_of,
)
from .placement_het import (
    HET_SUBMIT_JOBS,
    _hold_together,
    _occupy,
    as_one_shape,
    combine,
    components_under_qos,
    counted_as_jobs,
    first_component,
    het_components,
    in_default,
    label,
    one_shape_sent,
    over_limits_together,
    refuse,
    shape_components,
)
from .placement_hosts import (
    _among_misses,
    _chunk_fit,
    _flux_hosts,
    _grouped_short,
    _host_misses,
    _hosts_among,
    _lsf_hosts,
    _lsf_terms,
    _meeting,
    _named_hosts,
    _pbs_chunks,
    _pbs_named_hosts,
    lsf_select_hosts,
)
from .placement_limits import (
    ARRAY_PARTS,
    HET_PARTS,
    Wait,
    _limit_misses,
    _qos_misses,
    _totals,
    assoc_job_misses,
    assoc_minutes_held,
    assoc_misses,
    assoc_submit_refused,
    assoc_wait,
    force_share,
    job_qos,
    license_misses,
    license_wait,
    lsf_host_limits,
    lsf_limits,
    lsf_resource_misses,
    lsf_resource_wait,
    lsf_slots,
    lsf_user_misses,
    minutes_unread_said,
    minutes_used_unread,
    pbs_group,
    pbs_limits,
    pbs_project,
    qos_minutes_held,
    qos_submit_refused,
    qos_wait,
    queue_user_misses,
    sge_project,
    sge_submit_refused,
    sge_user_jobs_wait,
    shared_room_now,
    shares_by_force,
    user_acl_misses,
)
from .placement_node_notes import (
    _boot_note,
    _closed_note,
    _landing_note,
    _overrun_note,
    _returning_note,
)
from .placement_pbs_resv import pbs_reservations
from .placement_priority import PriorityView, priority_view
from .placement_rank import (
    _lost_because,
    rank,
)
from .placement_resv import (
    _RESV_END,
    _magnetic,
    _magnetic_open,
    _named_reservation,
    _past_reservation_end,
    _reservation_end,
    _reservations_held,
    reservations_waited_for,
)
from .placement_sge import (
    QueueFit,
    SlotPlan,
    _by_pe_rule,
    _master_queues,
    _pe_rule,
    _sge_master,
    instance_slots,
    instance_slots_short,
    master_and_slaves,
    master_holding,
    pe_offered,
    queue_consumable_fit,
)
from .placement_sge_limits import reopened, sge_queue_limits, site_zone
from .placement_sge_names import with_full_names
from .placement_sim import (
    WHOLE,
    Demand,
    Reservation,
    Shape,
    SimState,
    build_state,
    calibrated_view,
    earliest_start,
    fifo_jobs_ahead,
    held_no_later,
    hold_horizon,
    pending_demands,
    preempted,
    probe_lanes,
    queue_held,
    queue_starts,
    reservation_for,
    slots_position,
    spread_words,
    together_start,
)
from .placement_slurm_sched import (
    LINEAR_WHOLE,
    MAX_CONTIGUOUS_RUNS,
    OWN_UNRESERVED_SAID,
    UNRESERVED_AHEAD_SAID,
    asks_contiguous,
    behind_unreserved,
    contiguous_room,
    contiguous_runs,
    enforced_everywhere,
    on_resolution,
    own_unreserved,
    requires_reservation,
    slurm_config_view,
    unreserved_jobs,
)
from .placement_stale import is_stale_note, replayed_arrivals, stale_note
from .placement_time import HORIZON_S, READY_TOLERANCE_S, job_window, plus_seconds

DEFAULT_RUNTIME_S = 3600.0
DEFAULT_BANDWIDTH_MBPS = 1000.0
POLICIES = ("diamond", "fewest_pending", "random", "fixed", "min_cost", "first_ready")
# LSF resource-requirement sections placement does not model: why each is not checked
LSF_UNCHECKED = {
    "same": "every host of the job must have the same value of the resource; LSF applies "
            "it, so the job may start later than said",
    "order": "the order LSF picks hosts in; the hosts estimated here may not be the ones it "
             "picks",
    "cu": "compute units, e.g. enclosures or racks, are not read from the site; LSF applies "
          "it, so the job may start later than said",
}

# a job's unknown -R section placement does not model: `-R same`, or `-R{2} cu` for the
# second term of a compound requirement (`2*{same[model]} + 4*{cu[type=rack]}`)
_LSF_UNCHECKED_OPTION = re.compile(r"-R(?:\{([0-9]+)\})? (" + "|".join(LSF_UNCHECKED) + ")")


def _lsf_unchecked_note(m: re.Match[str], value: str) -> str:
    """Why the job's `value` (a same[], order[] or cu[] section) is not checked here."""
    where = f" (term {m.group(1)} of the compound requirement)" if m.group(1) else ""
    return f"-R {value}{where}: {LSF_UNCHECKED[m.group(2)]}"


Verdict = Literal["READY", "BUSY", "RESTRICTED", "INCOMPATIBLE", "UNREACHABLE"]


class SiteVerdict(BaseModel):
    """One site's answer for one job; estimates are set only when `feasible`."""

    site: str
    feasible: bool = False
    verdict: Verdict
    reasons: list[str] = Field(default_factory=list)  # why not feasible (exact)
    # UNREACHABLE, and its capabilities as last read refuse the job: waiting will not help
    last_read_refuses: bool = False
    # why a feasible job must wait beyond its resources: limits already in use (a QOS's
    # group or per-user limits, a queue's max_run), in the scheduler's words where it has
    waits_for: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # e.g. partitions passed over
    # limits the job meets that the site does not report, each said once: not checked
    not_checked: list[str] = Field(default_factory=list)
    # the job loads modules and the site's are not known: an equal finish elsewhere wins
    software_unknown: bool = Field(default=False, exclude=True)
    # nodes' reasons cut in `reasons`/`notes`, in full (`placement_explain.cut_reasons`)
    node_reasons: list[str] = Field(default_factory=list)
    partition: str | None = None
    estimated_start: datetime | None = None
    start_source: Literal["scheduler", "simulation", "calibrated"] | None = None
    raw_start: datetime | None = None  # the scheduler's estimate or the walltime simulation
    start_bound: datetime | None = None  # 90% upper bound (calibrated sites only)
    calibration_samples: int = 0  # finished jobs the calibration rests on
    calibration_class: str | None = None  # which class of them ("batch/2-4", "*")
    # the site had too few finished jobs of its own: the ratios are other sites' jobs'
    # (`calibration.PooledRatios`), calibration_samples of them
    calibration_borrowed: bool = False
    wait_ratio: float | None = None  # actual wait / the scheduler's estimate (median)
    wait_samples: int = 0  # pending jobs whose estimate and actual start it rests on
    wait_class: str | None = None
    # the jobs whose recent waits bound the start ("4-16 nodes", "every
    # size": too few of any narrower class; `calibration.similar_classes`; "every size,
    # few": too few for 95% confidence, the conformal bound of `RecentWaits.few_bound`,
    # 90% on average only); None: not bound so (too few waits: a note says how many)
    bound_class: str | None = None
    # where the user's own recent jobs here waited longer than the model predicted for
    # them (own_wait_ratio x, the median of own_samples), estimated_start is moved out by
    # it; model_start is the model's start before (None when nothing was corrected)
    own_wait_ratio: float | None = None
    # with fewer of them than a ratio needs: moved by own_shift_s seconds instead
    own_shift_s: float | None = None
    own_samples: int = 0
    # the oldest of the user's jobs queued here, no larger than this one, has waited this
    # long (s) without starting: the start is no sooner than OWN_QUEUED_FACTOR times it
    own_queued_s: float | None = None
    model_start: datetime | None = None
    estimated_runtime_s: float | None = None
    stage_in_s: float | None = None
    inputs_at: datetime | None = None  # a workflow step's inputs here (made, then copied)
    estimated_finish: datetime | None = None  # from the median start
    cost: float | None = None
    billed_nodes: float | None = None  # nodes x the share of a node billed (cost's base)
    score: float | None = None  # the policy's key: lower is better
    queue_depth: int = 0  # pending jobs at the site
    running: int = 0
    speed_factor: float | None = None  # the site's, for explaining runtimes
    # its expected runtime exceeds the time limit it gets here: killed there before it
    # ends, so it is ranked after the sites where it is expected to end
    may_time_out: bool = False
    # the view judged was read long before the decision (`place`'s stale_after_s): when,
    # how long before, and since when the site has not answered (None: it answers)
    view_read_at: datetime | None = None
    view_age_s: float | None = None
    unreachable_since: datetime | None = None
    # what the job takes in its partition, for a heterogeneous job's components placed
    # together: (nodes, CPUs a node or WHOLE, GPUs a node, the names of the nodes it may use)
    _shape: tuple[int, int, int, frozenset[str]] | None = PrivateAttr(default=None)
    _walltime_s: float = PrivateAttr(default=0.0)  # what the scheduler plans the job with
    # a job array: how long after estimated_finish (its first task's) its last task ends;
    # "diamond" ranks it by that end (`placement_rank.ranked_finish`)
    _array_tail_s: float = PrivateAttr(default=0.0)


@dataclass(frozen=True)
class RuntimePrior:
    """What a job is expected to run, before any site's speed: `base_s` seconds (at speed
    1.0), else `share` of its walltime, else its walltime; `basis` says why, for people."""

    base_s: float | None = None
    share: float | None = None
    basis: str = "the walltime (nothing to learn from)"

    def runtime_s(self, walltime_s: float | None) -> float:
        if self.base_s is not None:
            return self.base_s
        if walltime_s:
            return walltime_s * (self.share if self.share is not None else 1.0)
        return DEFAULT_RUNTIME_S


def runtime_prior(spec: JobSpec, history: dict[str, float], own_share: float | None,
                  cals: Collection[SiteCalibration]) -> RuntimePrior:
    """The runtime a job is expected to have: its application's history, else its walltime
    scaled by what the user's own jobs used of theirs, else by what every site's recent
    jobs of its size used, else its walltime."""
    app = spec.metadata.get("application")
    if app is not None and app in history:
        return RuntimePrior(base_s=history[app],
                            basis=f"{hms(history[app])} at speed 1, as {app} ran before")
    if own_share is not None:
        return RuntimePrior(share=own_share, basis=f"{own_share:.0%} of the walltime, as "
                            "your recent jobs used of theirs")
    whole = request(spec, 1 << 30)  # its CPUs in all, however the nodes split them
    pooled = pooled_share(cals, whole.nodes * whole.cpn)
    if pooled is not None:
        share, n = pooled
        return RuntimePrior(share=share, basis=f"{share:.0%} of the walltime, as {n} recent "
                            "jobs of its size used of theirs (every site)")
    return RuntimePrior()


def planned_runtime(spec: JobSpec, history: dict[str, float], share: float | None,
                    speed: float) -> float | None:
    """How long the user's own job of `spec` is expected to run on a site of `speed`
    (`runtime_prior` from the user's history alone, never past its walltime); None when
    nothing is known of the user's jobs: their class's ratio plans it."""
    walltime = spec.resources.walltime_s
    prior = runtime_prior(spec, history, share, ())
    if prior.base_s is None and (prior.share is None or not walltime):
        return None
    ran = prior.runtime_s(walltime) / speed
    return min(ran, walltime) if walltime else ran


class OwnRuntimePlans:
    """The user's own queued and running jobs' runtimes (`planned_runtime`), kept between
    calls: a job's plan stands while its spec (the same object: the store's read_only reads
    share one per stored text), site, speed and the whole history do, so a submit plans
    only new or changed jobs, not every queued one again."""

    def __init__(self) -> None:
        self._history: tuple[dict[str, float], float | None] | None = None
        # per job id: its spec, site, speed factor, the seconds planned (None: nothing known)
        self._plans: dict[str, tuple[JobSpec, str, float, float | None]] = {}

    def runtimes(self, jobs: Iterable[Job], speeds: Mapping[str, float],
                 history: dict[str, float], share: float | None
                 ) -> dict[str, dict[str, float]]:
        """Per site, native id -> the seconds each of `jobs` is expected to run there: those
        with a spec and a native id, at a site of `speeds` (its speed factor); a job of
        which nothing is known is left out. Only these jobs' plans are kept."""
        if self._history != (history, share):
            self._history, self._plans = (dict(history), share), {}
        plans: dict[str, tuple[JobSpec, str, float, float | None]] = {}
        out: dict[str, dict[str, float]] = {}
        for job in jobs:
            if not (job.spec and job.native_id and job.site in speeds):
                continue
            speed = speeds[job.site]
            kept = self._plans.get(job.id)
            if kept and kept[0] is job.spec and kept[1:3] == (job.site, speed):
                ran = kept[3]
            else:
                ran = planned_runtime(job.spec, history, share, speed)
            plans[job.id] = (job.spec, job.site, speed, ran)
            if ran is not None:
                out.setdefault(job.site, {})[job.native_id] = ran
        self._plans = plans
        return out


@dataclass(frozen=True)
class StageData:
    """A job's stage-in: bytes by the site they are on (None: the server), and measured
    megabits/s per (source, destination) from past transfers (else the site's figure)."""

    sources: dict[str | None, int]
    bandwidth_mbps: dict[tuple[str | None, str | None], float] = field(default_factory=dict)
    ready_at: datetime | None = None  # when the inputs exist (an upstream step's predicted
    # end): their copy starts then, so a site whose queue clears before it loses nothing


class Placement(BaseModel):
    """`ranked`: feasible sites best first (by the policy), then infeasible ones."""

    policy: str
    choice: str | None = None
    ranked: list[SiteVerdict] = Field(default_factory=list)
    now: datetime = Field(default_factory=utcnow)
    needs: list[str] = Field(default_factory=list)  # what the job needs, one phrase each
    runtime_basis: str | None = None  # what the runtimes rest on (`RuntimePrior.basis`)

    def verdict(self, site: str) -> SiteVerdict | None:
        return next((v for v in self.ranked if v.site == site), None)

    def predicted_start(self, site: str | None = None) -> str | None:
        """The chosen (or named) site's start for people: '≈ 3 min (90%: < 11 min)', or
        "≈ 3 min (scheduler's estimate)" when that is all there is."""
        v = self.verdict(site or self.choice or "")
        if v is None or v.estimated_start is None:
            return None
        bound = (v.start_bound - self.now).total_seconds() if v.start_bound else None
        text = describe_start((v.estimated_start - self.now).total_seconds(), bound)
        return text + (" (scheduler's estimate)" if v.start_source == "scheduler"
                       and bound is None else "")

    def summary(self) -> str:
        """One line: the choice, or every site's reason when none can run the job."""
        if self.choice:
            return f"{self.choice} (policy {self.policy})"
        parts = [f"{v.site}: {'; '.join(v.reasons) or v.verdict.lower()}" for v in self.ranked]
        return "no site can run this job: " + (" | ".join(parts) or "no sites configured")

    def unreachable(self) -> list[str]:
        """The sites that could not be asked (the job may well fit there)."""
        return [v.site for v in self.ranked if v.verdict == "UNREACHABLE"]

    def no_choice(self) -> DiamondError:
        """The error of a placement without a choice: bad input (exit 2) when every site
        refused the job itself (an unreachable one by its capabilities as last read), a
        site failure (exit 1) when one could not be asked and was never read or as last
        read could run it: then trying again later may place it."""
        unknown = [v for v in self.ranked if v.verdict == "UNREACHABLE"
                   and not v.last_read_refuses]
        return (SiteError if unknown else BadInput)(self.summary())

    def why_not(self, site: str, winner: str | None = None) -> str:
        """Why `site` was passed over for `winner` (default: the choice), in plain words."""
        v, w = self.verdict(site), self.verdict(winner or self.choice or "")
        if v is None:
            return "not ranked"
        if not v.feasible:
            return "; ".join(v.reasons) or v.verdict.lower()
        if w is None or not w.feasible or w.estimated_finish is None \
                or v.estimated_finish is None:
            return "ranked lower"
        return _lost_because(v, w, self.now, self.policy)

    def explain(self) -> str:
        """A plain-text table: one line per site, best first, infeasible with reasons.

        START is the start the ranking used: calibrated where the site has finished jobs
        to learn from (SOURCE "calibrated"), else the scheduler's or the simulation's; RAW
        is the scheduler's estimate or the walltime-based simulation; 90% the calibrated
        upper bound; N the finished jobs the calibration rests on ("N elsewhere": other
        sites' jobs, where the site has too few of its own); WAIT× the median of
        actual wait / the scheduler's estimated wait here, with its sample count (it
        corrects a start that rests on the scheduler's estimates); OWN× how the user's
        own recent jobs here waited against what was predicted for them (it corrects
        START). Refused sites with the same verdict and reasons share a row naming them; a
        refusal too long for its row shows the deciding reason and counts the rest. Under
        the table, one block per site in the table's order: every reason a refused site's
        row counted ("SITE refused: ..."), each limit in
        use a feasible site's job waits for ("SITE waits: ..."), notes on its estimate
        (borrowed ratios; where too few of the user's jobs here for OWN× moved START by
        seconds, how many and which way), then each limit it meets that the site does not
        report, once ("SITE not checked: ...", `placement_explain`)."""
        head = ("", "SITE", "VERDICT", "PARTITION", "START", "SOURCE", "RAW", "90%", "N",
                "WAIT×(N)", "OWN×(N)", "RUNTIME", "STAGE-IN", "FINISH", "COST")
        rows: list[tuple[str, ...]] = []
        for v in self.ranked:
            mark = "*" if v.site == self.choice else ""
            if v.feasible and v.estimated_start and v.estimated_finish:
                def rel(t: datetime | None) -> str:
                    return "+" + hms((t - self.now).total_seconds()) if t else "-"
                rows.append((mark, v.site, v.verdict, v.partition or "-",
                             rel(v.estimated_start), v.start_source or "-", rel(v.raw_start),
                             rel(v.start_bound), f"{v.calibration_samples} elsewhere"
                             if v.calibration_borrowed else str(v.calibration_samples),
                             f"{v.wait_ratio:.2f}({v.wait_samples})"
                             if v.wait_ratio is not None else "-",
                             f"{v.own_wait_ratio:.2f}({v.own_samples})"
                             if v.own_wait_ratio is not None else "-",
                             hms(v.estimated_runtime_s or 0),
                             hms(v.stage_in_s or 0),
                             "+" + hms((v.estimated_finish - self.now).total_seconds()),
                             f"{v.cost:.2f}" if v.cost is not None else "-"))
            else:  # infeasible: why; feasible without a start: why not (its first note)
                why = v.reasons or (v.notes[:1] if v.feasible else [])
                rows.append((mark, v.site, v.verdict,
                             refused_text(why, blocks_below=True) or "-"))
        rows = grouped_refusals(rows, [len(r) < len(head) and not v.feasible
                                       for r, v in zip(rows, self.ranked, strict=True)])
        full = [head, *(r for r in rows if len(r) == len(head))]
        widths = [max(len(r[i]) for r in full) for i in range(len(head))]
        for i in range(3):  # a short (infeasible) row's mark, site and verdict align too
            widths[i] = max([widths[i], *(len(r[i]) for r in rows)])
        lines = [f"policy {self.policy}; choice {self.choice or 'none'}; "
                 f"now {self.now.isoformat(timespec='seconds')}"
                 + (f"; needs {', '.join(self.needs)}" if self.needs else "")
                 + (f"; runtime: {self.runtime_basis}" if self.runtime_basis else "")]
        for r in [head, *rows]:
            cells = [c.ljust(widths[i]) for i, c in enumerate(r)] if len(r) == len(head) \
                else [r[0].ljust(widths[0]), r[1].ljust(widths[1]), r[2].ljust(widths[2]), r[3]]
            lines.append(" ".join(cells).rstrip())
        unchecked = self.not_checked
        for v in self.ranked:  # per site one block, in the table's order
            if v.view_read_at is not None:
                lines.append(view_age_line(v.site, v.view_read_at, v.unreachable_since,
                                           self.now))
                lines += [f"  {v.site}: {n}" for n in v.notes if is_stale_note(n)]
            lines += [f"  {v.site}: {n}" for n in v.notes if v.feasible and n.startswith(
                (ARRAY_NOTE_START, NO_BACKFILL_NOTE_START, BOUND_NOTE_START,
                 OWN_QUEUED_NOTE_START, SPREAD_NOTE_START, WAIT_BASIS_NOTE_START))]
            lines += refused_lines(v.site, v.reasons) if not v.feasible else []
            lines += [f"  {v.site} waits: {why}" for why in v.waits_for if v.feasible]
            if v.feasible and v.calibration_borrowed:
                lines.append(f"  {v.site}: {_borrowed_note(v)}")
            if v.feasible and v.own_shift_s is not None:
                lines.append(f"  {v.site}: {_own_shift_note(v.own_shift_s, v.own_samples)}")
            lines += unchecked_lines(v.site, [n for n in unchecked if n.site == v.site])
            lines += [f"  {v.site} node reason in full: {why}" for why in v.node_reasons]
        return "\n".join(lines)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def not_checked(self) -> list[NotChecked]:
        """Every site's not-checked limits, each once (`SiteVerdict.not_checked` merged)."""
        return [n for v in self.ranked for n in merged_unchecked(v.site, v.not_checked)]


# a site whose own earlier job (no larger) still waits starts a new one no sooner than
# this many times that job's wait so far: chosen on the even seeds of every kept placement
# run and checked on the odd ones (`python -m benchmarks.decision_replay`, "own job queued";
# benchmarks/README.md)
OWN_QUEUED_FACTOR = 3.0
OWN_QUEUED_NOTE_START = "your job queued here "


def _own_queued_note(queued_s: float, start_s: float, floor_s: float) -> str:
    """What the user's own job still queued on a site did to its start
    (`SiteVerdict.own_queued_s`)."""
    return (f"{OWN_QUEUED_NOTE_START}{hms(queued_s)} ago (no larger than this one) has not "
            f"started: this one queues behind it, start {hms(start_s)} -> {hms(floor_s)} "
            f"({OWN_QUEUED_FACTOR:g}x that wait; ranked later)")


def _own_shift_note(shift_s: float, jobs: int) -> str:
    """What the user's own few jobs on a site said of its start (`SiteVerdict.own_shift_s`)."""
    return (f"own jobs here started {abs(shift_s):.0f} s "
            f"{'later' if shift_s > 0 else 'sooner'} than predicted "
            f"({jobs} job{'s' if jobs != 1 else ''})")


def _borrowed_note(v: SiteVerdict) -> str:
    return (f"its runtimes rest on {quantity(v.calibration_samples, 'job')} of other sites ("
            f"{v.calibration_class}): too few jobs finished here to calibrate its queue")


SPREAD_NOTE_START = "spread: "  # where tasks without a node count go (`Demand.spread`)
ARRAY_NOTE_START = "array of "  # a note on a job array's last task (`_array_last_task`)
# a note on a site without backfill (Slurm's sched/builtin, `_fifo_note`)
NO_BACKFILL_NOTE_START = "no backfill on this site"
BOUND_NOTE_START = "90% bound "  # what set the 90% bound: recent waits (of which jobs), a drain
# `SiteVerdict.bound_class` of a bound from too few recent waits for 95% confidence
# (`RecentWaits.few_bound`)
FEW_WAITS_CLASS = "every size, few"


def _few_waits_words(n: int) -> str:
    return (f"only {n}: too few for 95% confidence ({MIN_QBETS_WAITS} needed), so 90% "
            "on average")


def _no_waits_bound_note(n: int, bound: bool) -> str:
    """Why a job that may wait has no bound from the site's recent waits (`bound`: it has
    one from elsewhere: the queue's simulation, the user's backlog)."""
    jobs = f"only {quantity(n, 'job')}" if n else "no job"
    return (f"{BOUND_NOTE_START}{'without recent waits' if bound else 'not given'}: {jobs} "
            f"started or waited here in the last {RECENT_WAITS_S / 3600:.0f} h, fewer than "
            f"the {MIN_CONFORMAL_WAITS} a bound from them needs")


def _evaluate(spec: JobSpec, cfg: SiteConfig, snap: SiteSnapshot, now: datetime,
              stage_bytes: int, prior: RuntimePrior, estimates: dict[str, datetime],
              cal: SiteCalibration | None = None, data: StageData | None = None,
              caps: SiteCapabilities | None = None, needs: Needs | None = None,
              ended: Collection[str] = ()) -> SiteVerdict:
    v = SiteVerdict(site=cfg.name, verdict="INCOMPATIBLE", queue_depth=len(snap.pending),
                    running=len(snap.running), speed_factor=cfg.speed_factor)
    if not snap.reachable:
        v.verdict = "UNREACHABLE"
        # the site's error names it already ("lyra: squeue timed out"): said once
        error = (snap.error or "").removeprefix(f"{cfg.name}: ")
        v.reasons = [f"site unreachable: {error}" if error else "site unreachable"]
        if snap.nodes:  # its capabilities as last read are kept: do they refuse the job?
            last = _evaluate(spec, cfg, snap.model_copy(update={"reachable": True, "jobs": []}),
                             now, stage_bytes, prior, {}, None, data, caps, needs)
            if not last.feasible:
                v.last_read_refuses = True
                v.reasons.append("as last read, it could not run the job either: "
                                 + "; ".join(last.reasons))
        return v
    # said whatever the verdict: a site that refuses the job now may take it later
    v.not_checked += _limits_not_reported(spec, cfg, snap)
    resv_refused, resv_hosts, resv_wait = _named_reservation(spec, cfg, snap, now)
    if resv_refused:
        v.verdict = "RESTRICTED"
        v.reasons = resv_refused
        return v
    pbs_resv = pbs_reservations(spec, cfg, snap, now)  # a PBS job of a reservation's queue
    v.not_checked += pbs_resv.not_checked
    if pbs_resv.refused:
        v.verdict, v.reasons = "RESTRICTED", pbs_resv.refused
        return v
    v.notes += pbs_resv.notes
    snap = reopened(pbs_resv.snap, cfg, now)  # Grid Engine instances a calendar closes now
    if cfg.scheduler == "sge":  # complexes asked by shortcut (`-l a=lx-amd64`): by name
        spec = with_full_names(spec, snap)
    resv_hosts = pbs_resv.hosts if resv_hosts is None else resv_hosts
    resv_wait = resv_wait or pbs_resv.wait
    resv_name = spec.reservation or pbs_resv.queue
    resv_end = _reservation_end(spec, cfg, snap)
    if resv_end is not None and (miss := _past_reservation_end(spec, snap, now, resv_end)):
        v.reasons = [miss]
        return v
    if cfg.scheduler == "flux" and (flux_array := flux_array_refusal(spec)):
        v.reasons = [flux_array]
        return v
    if cfg.scheduler == "slurm":
        lic_refused, lic_unchecked, lic_said = license_misses(spec, snap)
        if array_miss := array_too_large(spec, snap):
            lic_refused = [array_miss, *lic_refused]
        if lic_refused:
            v.reasons = lic_refused
            return v
        v.not_checked += lic_unchecked
        v.notes += lic_said
    if cfg.scheduler == "sge" and (full := sge_submit_refused(snap)):
        v.reasons = [full]  # qsub's max_u_jobs / max_jobs
        return v
    if cfg.scheduler == "lsf":
        rusage_refused, rusage_unchecked = lsf_resource_misses(spec, snap)
        if rusage_refused:
            v.reasons = rusage_refused
            return v
        v.not_checked += rusage_unchecked
    magnetic = _magnetic(spec, cfg, snap, now)
    snap, resv_said = _reservations_held(spec, snap, now, {r.name for r in magnetic},
                                         site_zone(cfg, snap)[0])
    v.notes += resv_said
    snap = _magnetic_open(snap, magnetic)
    if cfg.scheduler == "slurm":  # its QOS's flags, memory not consumable
        snap, config_said = slurm_config_view(spec, snap, spec.account or cfg.default_account)
        v.notes += config_said
    for r in magnetic:
        v.notes.append(f"reservation {r.name} is MAGNETIC and open to you: Slurm may run the "
                       "job on its nodes without --reservation (inside it, not across its "
                       "edge)")
    nodes = site_nodes(snap)
    pe = spec.metadata.get("sge_pe")  # a Grid Engine job's parallel environment
    pe = pe if isinstance(pe, str) and pe else None
    rule = _pe_rule(pe, snap.pe_rules) if pe and cfg.scheduler == "sge" else None
    if rule is not None:
        spec, miss = _by_pe_rule(spec, pe or "", rule)
        if miss:
            v.reasons = [miss]
            return v
    one_thread = cfg.scheduler == "slurm" and _one_thread_a_core(spec)
    if one_thread:  # a task's CPUs are whole cores: count each node's cores
        nodes = [_cores_of(n) for n in nodes]
    req = request(spec, max((n.cpus for n in nodes), default=0), most_gpus(spec, nodes),
                  spread_gpus=cfg.scheduler == "slurm",
                  most_memory=max((n.memory_mb for n in nodes), default=0))
    gpu_biggest = max((n.cpus for n in nodes if n.gpus), default=0)
    if req.gpn and spec.resources.tasks and spec.resources.tasks_per_node is None \
            and spec.resources.nodes is None and 0 < gpu_biggest < max(n.cpus for n in nodes):
        # tasks of a job that asks GPUs spread over the nodes that hold GPUs, as many to a
        # node as the largest of those has CPUs (not a CPU-only node's, which it never gets)
        req = request(spec, gpu_biggest, most_gpus(spec, nodes),
                      spread_gpus=cfg.scheduler == "slurm",
                      most_memory=max((n.memory_mb for n in nodes if n.gpus), default=0))
    if (req.tasks_per_socket or req.tasks_per_core) and spec.resources.nodes is None \
            and spec.resources.tasks_per_node is None and spec.resources.tasks:
        # tasks without a node count: as many to a node as its sockets or cores let in
        # (`--ntasks-per-socket`, `--ntasks-per-core`), not its CPUs alone
        room = max((min(n.cpus // req.cpt, req.task_cap(n) or n.cpus) for n in nodes),
                   default=0)
        req = request(spec, room * req.cpt, most_gpus(spec, nodes),
                      spread_gpus=cfg.scheduler == "slurm",
                      most_memory=max((n.memory_mb for n in nodes), default=0))
    plain = req
    # Grid Engine: JOB consumables, defaults; a JOB one that is a host's or queue's
    # consumable here is asked of a job's master host alone
    req = with_complexes(req, snap.sge_complexes, {
        name for n in nodes for name in (n.consumables_total or {})} | {
        name for q in snap.partitions for have in (q.queue_consumables or {}).values()
        for name in have}, snap.gpu_complex)
    complexes_said = complex_notes(plain, req, snap.sge_complexes)
    site_arch = metadata_arch(cfg.metadata.get("architecture"))
    words = words_of(cfg.scheduler, cfg.flavor)  # reasons in the site's scheduler's names
    packed = spec.metadata.get("pbs_select_chunks") if cfg.scheduler == "pbs" else None
    # tasks over any nodes: a node takes part if it holds one of them (how many each holds
    # is the simulation's)
    task = _task_spread(req, _spreads(cfg, spec))
    need = _one_node(req, _spreads(cfg, spec)) if task else req
    reasons, fit = node_checks(need, nodes, site_arch, words=words, shape=(
        f"select={packed['raw']}, place=pack" if isinstance(packed, dict) else None),
        task=task)
    if reasons and not isinstance(packed, dict):
        named = _named_partitions_misses(spec, snap, nodes, need, site_arch, words, task)
        if (named and named[0].partition(": ")[2] != "; ".join(reasons)) or len(named) > 1:
            reasons = named  # its partitions' nodes say otherwise than the site's: theirs
    reasons += global_misses(req, snap.global_consumables_total)
    if resv_hosts is not None:  # a job of a reservation (not FLEX) runs on its nodes only
        if fit and not fit & resv_hosts:
            reasons.append(f"reservation {resv_name}'s nodes ({_few(resv_hosts)}) "
                           "cannot run it: " + partition_misses(
                               req, [n for n in nodes if n.name in resv_hosts], site_arch,
                               words))
        fit &= resv_hosts
    if cfg.scheduler == "flux" and (named := _flux_hosts(spec, nodes)) is not None:
        allowed, said = named  # --requires=host:/-host:/rank: (RFC 35): those nodes only
        if fit and not fit & allowed:
            reasons.append(f"{said}: " + (partition_misses(
                req, [n for n in nodes if n.name in allowed], site_arch, words)
                if allowed else "no node of the site is one of them"))
        fit &= allowed
        up = [n for n in nodes if n.name in fit and node_usable(n, bool(spec.reservation))]
        if fit and len(up) < req.nodes:
            down = sorted(f"{n.name} {n.state}" for n in nodes if n.name in fit
                          and n not in up)
            reasons.append(f"{said}: needs {req.nodes} node{'s' if req.nodes > 1 else ''}, "
                           f"{len(up)} of them usable ({', '.join(down)})")
    if req.arch and (unknown := {n.name for n in nodes if n.name in fit
                                 and node_arch(n, site_arch) is None}):
        # such nodes pass the architecture check: the job must be told it was not made
        v.not_checked.append(f"the job's architecture {req.arch}: {_few(unknown)} report "
                             "none and the sites file's metadata.architecture names none, "
                             "so it may run on another")
    if req.mem and (blind := {n.name for n in nodes if n.name in fit and not n.memory_mb}):
        # such nodes pass the memory check: the job must be told it was not made
        shown = " (flux resource list shows none)" if cfg.scheduler == "flux" else ""
        v.not_checked.append(f"the job's memory, {req.mem} MB a node: {_few(blind)} report "
                             f"no memory{shown}, so it may not fit there")
    unbound: dict[str, int] = {}  # nodes whose GPUs' sockets hold too few CPUs for it
    if cfg.scheduler == "slurm" and req.gpn and _enforce_binding(spec) and fit:
        unbound = {n.name: c for n in nodes if n.name in fit
                   and (c := _bound_cpus(n, req.gpn)) < req.cpn}
        if fit <= set(unbound):
            reasons.append(_binding_miss(req, max(unbound.values()), "any node"))
        fit -= set(unbound)
    if cfg.scheduler == "slurm" and (req.nodelist or req.exclude):
        reasons += _named_hosts(req, nodes, fit, site_arch)
        fit -= set(req.exclude)
        if req.nodelist:
            req = replace(req, nodes=max(req.nodes, len(req.nodelist)))
    lsf_m = next((d.value for d in spec.unknown if d.dialect == "lsf" and d.option == "-m"),
                 None) if cfg.scheduler == "lsf" else None
    if lsf_m:  # `bsub -m "hosts or groups"`: the job runs on some of them only
        why, fit = _lsf_hosts(lsf_m, snap, nodes, fit, req, site_arch)
        reasons += why
    if among := _hosts_among(spec, cfg):  # flux host: or `-l hostname=`, kept at this site
        why, fit = _among_misses(among, cfg.scheduler, req, nodes, fit, site_arch, words)
        reasons += why
    unread_select: list[str] = []  # LSF select[] terms (flux queries) not checked: why
    if cfg.scheduler == "lsf":  # `-R "select[ngpus>0 && maxmem>200000]"`: hosts that meet it
        for d in spec.unknown:
            if d.dialect == "lsf" and d.option == "-R select" and d.value:
                meet, unread = lsf_select_hosts(d.value, nodes)
                unread_select += unread
                if meet is not None and not meet & fit:
                    reasons.append(f"no host meets {d.value} that can run it (hosts: "
                                   f"{_few({n.name for n in nodes})})")
                fit &= meet if meet is not None else fit
        unread_select += [_lsf_unchecked_note(m, d.value) for d in spec.unknown
                          if d.dialect == "lsf" and d.value
                          and (m := _LSF_UNCHECKED_OPTION.fullmatch(d.option))]
    if cfg.scheduler == "flux":  # a --requires query of more than one property: kept unread
        unread_select += [f"--requires={d.value}: only a query of one property is read; "
                          "flux may give the job none of the nodes counted for it"
                          for d in spec.unknown
                          if d.dialect == "flux" and d.option == "--requires" and d.value]
    chunks = _pbs_chunks(spec, cfg, nodes, site_arch)
    if chunks is None and cfg.scheduler == "lsf":
        # an LSF job's compound terms, each on the hosts -m and select[] leave it (none
        # left: the reasons above say why)
        allowed = {n.name for n in nodes} if resv_hosts is None else set(resv_hosts)
        if lsf_m:
            allowed = _lsf_hosts(lsf_m, snap, nodes, allowed, req, site_arch)[1]
        for d in spec.unknown:
            if d.dialect == "lsf" and d.option == "-R select" and d.value:
                meet = lsf_select_hosts(d.value, nodes)[0]
                allowed &= meet if meet is not None else allowed
        chunks = _lsf_terms(spec, nodes, site_arch, allowed) if allowed else None
    if chunks is not None:  # a PBS site gets the chunks as written, not their superset
        # a Slurm hetjob's components reach PBS as its chunks, one a component, in order
        names = [f"hetjob component {i} (its chunk {t})" for i, t in enumerate(chunks[2])] \
            if cfg.scheduler == "pbs" and spec.source_dialect == "slurm" else None
        reasons, fit, req = _chunk_fit(chunks, req, nodes, names)
    elif cfg.scheduler == "pbs" and (named := _pbs_named_hosts(spec)):
        # one chunk on the host (or vnode) it names: like Slurm's --nodelist
        reasons += _host_misses(named, req, nodes, fit, site_arch, "the select", words)
        fit &= set(named)
    from .software import needs_reasons

    caps = caps if caps is not None else from_metadata(cfg.name, cfg.metadata)
    job_needs = needs or needs_of(spec)
    reasons = needs_reasons(job_needs, caps) + reasons
    if caps.software is None and (loads := {s.full for s in job_needs.software
                                            if not s.unchecked}):
        # the site's modules are not known (not discovered, a listing that could not be
        # read): the job's loads are not held against it, and a site that has them is
        # preferred to it on an equal finish
        v.software_unknown = True
        v.not_checked.append(f"software {_few(loads)}: the site's modules are not known "
                             f"(`diamond describe {cfg.name}` says why)")
    if pe and snap.parallel_environments is not None \
            and not pe_offered(pe, snap.parallel_environments):
        reasons.append(f"parallel environment '{pe}' not found (site has: "
                       f"{', '.join(sorted(snap.parallel_environments)) or 'none'})")
    if reasons:
        v.reasons = reasons
        return v
    in_resv = bool(spec.reservation)
    usable = {n.name for n in nodes if node_usable(n, in_resv)}
    # out now but back by themselves (not responding, rebooting): capacity, not free
    seen = seen_out_at(snap.read_at or snap.taken_at, now)
    own_timeouts = timeouts_by_node(snap.partitions, snap.node_timeouts)
    back = {n.name: b for n in nodes if (b := node_returning(
        n, in_resv, own_timeouts.get(n.name, snap.node_timeouts), now, seen)) is not None}
    # of them, those power saving has off, booting or going off (taking jobs once booted)
    power = {x: kind for n in nodes if (x := n.name) in back and node_usable(n, in_resv)
             and (kind := node_power(n)) is not None}
    parts = snap.partitions or [Partition(name="", default=True)]
    members = partition_members(snap, nodes) if snap.partitions \
        else {"": NodeNames(n.name for n in nodes)}
    default = cfg.default_partition or next((p.name for p in parts if p.default), None)
    known = {p.name for p in snap.partitions}
    stale_default: list[str] = []
    if cfg.default_partition and known and cfg.default_partition not in known:
        # a sites file written before the center renamed or retired the partition
        default = next((p.name for p in parts if p.default), None)
        stale_default.append(f"the sites file's default_partition {cfg.default_partition!r} is not "
                       f"a partition of {cfg.name} (it has: {', '.join(sorted(known))}); "
                       f"not used{f': the default is {default}' if default else ''}")
    account = spec.account or cfg.default_account
    route: Partition | None = None  # a PBS routing queue the job names
    if spec.queue:  # Slurm takes a list (`-p debug,gpu`): the job starts in any of them
        named = {q.strip() for q in spec.queue.split(",") if q.strip()}
        route = next((p for p in parts if p.name in named and p.routes_to is not None), None)
        if route is not None:  # it goes on to the first of its destinations that takes it
            named = set(route.routes_to or [])
        if cfg.scheduler == "sge":  # a wc_queue_list (sge_types(1)): `*.q` as a pattern
            named = {p.name for p in parts if any(fnmatchcase(p.name, q) for q in named)}
        parts = [p for p in parts if p.name in named and p.routes_to is None]
        if not parts:
            v.reasons = [f"{words.part} '{spec.queue}' not found (site has: "
                         f"{', '.join(p.name for p in snap.partitions) or 'none'})"
                         if route is None else f"routing queue {route.name} sends jobs to "
                         f"{', '.join(route.routes_to or []) or 'no queue'}, none of them "
                         "here"]
            return v
    else:  # a hidden partition (Slurm Hidden=YES) takes only the jobs that name it; a
        # routing queue runs none
        parts = [p for p in parts if not p.hidden and p.routes_to is None] or parts
    master_note: list[str] = []
    master_hosts: set[str] | None = None  # where a -masterq job's master task may run
    if cfg.scheduler == "sge" and snap.partitions and (master := _master_queues(spec)):
        mq, why = _sge_master(master, snap.partitions, members)
        if why:
            v.reasons = [why]
            return v
        # its master task in a master queue, its other slots in any queue of its PE
        if not spec.queue:  # a master queue is one the job may use
            parts = parts + [q for q in snap.partitions if q.name in mq and q not in parts]
        plan = master_and_slaves(master, mq, parts, members, pe, req, spec.queue)
        if plan.why:
            v.reasons = [plan.why]
            return v
        parts, master_hosts = plan.parts, plan.master_hosts
        if master_hosts is not None:  # a JOB consumable is its master's host's to hold
            master_hosts, why_not = master_holding(req, master_hosts, nodes)
            if why_not:
                v.reasons = why_not
                return v
        members = {**members, **plan.members}
        master_note += [plan.note] if plan.note else []
    slots_from: SlotPlan | None = None  # a PE job's slots from several queue instances
    if cfg.scheduler == "sge" and pe and req.cpn > 1 and master_hosts is None \
            and not _master_queues(spec):
        slots_from = instance_slots(parts, members, pe, req)
        parts, members = slots_from.parts, {**members, **slots_from.members}
    good, problems, restricted_only = [], [], False
    r = spec.resources  # tasks without a node count: said how they were spread (below)
    # a job array's tasks count one job each against the submit limits, as a heterogeneous
    # job's components do (those under the same QOS, of the same account)
    array_tasks = (count_array_tasks(spec.array.expression) or 1) if spec.array else 1
    het_jobs = spec.metadata.get(HET_SUBMIT_JOBS)
    qos_adds, assoc_adds, parts_said = (het_jobs["qos"], het_jobs["account"], HET_PARTS) \
        if isinstance(het_jobs, dict) else (array_tasks, array_tasks, ARRAY_PARTS)
    too_long: dict[str, int] = {}  # partitions whose MaxTime the walltime is above
    cut: list[str] = []  # partitions that cut the time limit down (--time-min)
    brackets = bracket_parts(req)  # `[a|b]`: every node meets the same alternative
    counted = counted_parts(req)  # `a100*2`: so many of the job's nodes, in one partition
    # what the job asks in each partition (its defaults and limits of memory, time and
    # sharing), and the nodes there that can give it
    reqs, fits, adjusted = {}, {}, {}
    spreads = _spreads(cfg, spec)
    queue_unchecked: dict[str, list[str]] = {}  # a queue's own RES_REQ not checked: why
    qos_of: dict[str, str | None] = {}  # the QOS the job runs under, by partition
    holds: dict[str, list[Wait]] = {}  # limits in use it waits for, by partition
    queue_fits: dict[str, QueueFit] = {}  # Grid Engine queue consumables, by queue
    # LSF queues whose RES_REQ select[] leaves no host; Grid Engine queues whose hosts'
    # own h_rt all fall short of the job's walltime
    select_miss: dict[str, str] = {}
    queue_consumables = cfg.scheduler == "sge" and any(q.queue_consumables
                                                        for q in snap.partitions)
    part_max = {p.name: float(p.max_time_s) for p in snap.partitions if p.max_time_s}
    lic_wait, lic_unknown = license_wait(spec, snap, now, part_max) \
        if cfg.scheduler == "slurm" else lsf_resource_wait(spec, snap, now, part_max) \
        if cfg.scheduler == "lsf" else (None, None)
    sge_limits = sge_queue_limits(spec, cfg, snap, parts, members, fit, req.nodes * req.cpn,
                                  req.cpn, now, part_max, req)  # resource quotas, calendars
    v.not_checked += sge_limits.not_checked
    for p in parts:
        reqs[p.name], adjusted[p.name] = _in_partition(req, spec, p, nodes, members)
        adjusted[p.name] += sge_limits.notes.get(p.name, [])
        smt = [n for n in snap.nodes if n.name in members.get(p.name, [])
               and (n.threads_per_core or 1) > 1] if one_thread else []
        if smt:
            big = max(smt, key=lambda n: n.cpus)
            adjusted[p.name].append(
                f"partition {p.name}: one task a core (--hint=nomultithread): its nodes of "
                f"{big.threads_per_core} threads a core give a job their cores only "
                f"({big.cpus // (big.threads_per_core or 1)} of {quantity(big.cpus, 'CPU')})")
        # a job spread thinner here (tasks over the partition's smaller nodes, or over more
        # nodes for MaxMemPerCPU's extra CPUs) is judged on them anew; otherwise among the
        # nodes that hold the site-wide request
        thinner = reqs[p.name].cpn < req.cpn or reqs[p.name].mem < req.mem
        task_p = _task_spread(reqs[p.name], spreads)
        fits[p.name] = fit if reqs[p.name] == req or chunks is not None else node_checks(
            _one_node(reqs[p.name], spreads) if task_p else reqs[p.name],
            [n for n in nodes if n.name in members.get(p.name, []) and
             (n.name in fit or thinner) and n.name not in req.exclude],
            site_arch, whole_site=False, words=words, task=task_p)[1] if fit else set()
        if queue_consumables:  # Grid Engine queue consumables (qc:)
            queue_fits[p.name] = qf = queue_consumable_fit(
                _one_node(reqs[p.name], spreads), p, members.get(p.name, []), nodes, snap,
                now, part_max)
            fits[p.name] = fits[p.name] - qf.never
        if cfg.scheduler == "sge" and p.instance_slots_taken:  # its instances' free slots
            qf = queue_fits.get(p.name) or QueueFit()
            before = set(qf.short)
            queue_fits[p.name] = qf = instance_slots_short(
                qf, _one_node(reqs[p.name], spreads), p, members.get(p.name, []), snap, now,
                part_max)
            fits[p.name] = fits[p.name] - qf.never
            if held := (qf.short - before) & fits[p.name]:
                adjusted[p.name].append(
                    f"queue {p.name}: its "
                    + ("instances on " if len(held) > 1 else "instance on ")
                    + f"{_few(held)} {'have' if len(held) > 1 else 'has'} fewer than "
                    f"{quantity(max(reqs[p.name].cpn, 1), 'slot')} free (qstat -f: slots_total "
                    "less used and reserved): the job waits there for that queue's own running "
                    "jobs, whatever the host's other queues have free")
        fits[p.name] -= sge_limits.never_hosts.get(p.name, set())
        if slots_from is not None:  # hosts whose instances hold too few slots for it
            fits[p.name] = fits[p.name] - slots_from.short.get(p.name, set())
            adjusted[p.name] += [n for n in slots_from.notes if n.endswith(f"-q {p.name}")]
        queue_unchecked[p.name] = [f"queue {p.name}'s RES_REQ {x}: "
                                   f"{LSF_UNCHECKED[x.partition('[')[0]]}"
                                   for x in p.res_req_unchecked or []]
        if p.requires and not members.get(p.name):  # flux: no node has what it requires
            select_miss[p.name] = flux_requires_miss(p, nodes)
        if cfg.scheduler == "lsf" and p.res_req_select:  # the queue's own select[] too
            meet, unread = lsf_select_hosts(
                p.res_req_select, [n for n in nodes if n.name in members.get(p.name, [])])
            queue_unchecked.setdefault(p.name, []).extend(
                f"queue {p.name}'s RES_REQ {u}" for u in unread)
            if meet is not None:
                if (runs := fits[p.name] & set(members.get(p.name, []))) and not runs & meet:
                    select_miss[p.name] = (f"queue {p.name}: no host that can run the job "
                                           f"({_few(runs)}) meets its RES_REQ "
                                           f"{p.res_req_select} (bqueues -l)")
                fits[p.name] &= meet
        wall = reqs[p.name].walltime
        # Grid Engine: an h_rt of each host's own (a walltime above the longest of them is
        # said as for any queue)
        if p.instance_time_s and wall and (p.max_time_s or wall) >= wall:
            short = {h for h, t in p.instance_time_s.items() if t is not None and t < wall}
            runs = fits[p.name] & set(members.get(p.name, []))
            if runs and runs <= short:
                select_miss[p.name] = (
                    f"walltime {hms(wall)} above queue {p.name}'s h_rt on every "
                    f"host that can run the job (" + ", ".join(
                        f"{h} {hms(p.instance_time_s[h] or 0)}" for h in sorted(runs)[:4])
                    + (", ..." if len(runs) > 4 else "") + "; qconf -sq)")
            elif short & runs:
                adjusted[p.name].append(
                    f"queue {p.name}: {_few(short & runs)} of a shorter h_rt than the "
                    f"walltime {hms(wall)} (qconf -sq): passed over")
            fits[p.name] -= short
    wide = {p.name: len([x for x in members.get(p.name, []) if x in fits[p.name]])
            for p in parts}
    whole_req = req
    largest = max((len([x for x in members.get(q.name, []) if x in fit])
                   for q in snap.partitions), default=0)
    job_soft = _asked_soft_time(spec)
    held_seen: list[Node] = []  # nodes named with their reasons, for `cut_reasons`
    for p in parts:
        restr, other = [], []
        req, pfit = reqs[p.name], fits[p.name]
        spread = f" ({r.tasks} tasks, {req.tpn} to a {words.node})" if r.tasks and r.nodes is None \
            and not r.tasks_per_node and req.nodes > 1 else ""
        by_counts = f" (constraint '{req.constraint.text()}' takes {req.nodes})" \
            if req.counted_floor == req.nodes > (r.nodes or 0) and req.constraint else ""
        spread = by_counts or spread
        if cfg.allowed_partitions is not None and p.name not in cfg.allowed_partitions:
            restr.append(f"{words.part} '{p.name}' not allowed "
                         f"(allowed: {', '.join(cfg.allowed_partitions) or 'none'})")
        if p.allowed_accounts is not None and account not in p.allowed_accounts:
            restr.append(f"account '{account or 'none'}' not allowed in partition '{p.name}' "
                         f"(allowed: {', '.join(p.allowed_accounts) or 'none'})")
        if p.root_only and snap.user != "root":
            restr.append(f"partition '{p.name}' takes root's jobs only (RootOnly=YES)")
        if p.req_resv and not spec.reservation:
            restr.append(f"partition '{p.name}' takes only jobs of a reservation (ReqResv=YES); "
                         "name one with --reservation")
        if p.denied_accounts and account in p.denied_accounts:
            restr.append(f"account '{account}' denied in partition '{p.name}' (DenyAccounts: "
                         f"{', '.join(p.denied_accounts)})")
        qos, qos_note = job_qos(spec.qos, p, snap, account)
        qos_of[p.name] = qos
        if cfg.scheduler == "slurm" and (needs_resv := requires_reservation(spec, qos, snap)):
            restr.append(needs_resv)
        if qos_note:
            adjusted[p.name].append(f"partition {p.name}: {qos_note}")
        restr += assoc_misses(spec.qos, p, snap, account)
        if qos and p.allowed_qos is not None and qos not in p.allowed_qos:
            restr.append(f"QOS '{qos}' not allowed in partition '{p.name}' (allowed: "
                         f"{', '.join(p.allowed_qos) or 'none'})"
                         + ("" if spec.qos else f": {qos_note}"))
        restr += qos_submit_refused(
            p, qos, snap, qos_adds, parts_said,
            (lambda name, p=p, qos=qos: components_under_qos(het_jobs, name, p, qos, snap))
            if isinstance(het_jobs, dict) else None)
        restr += assoc_submit_refused(p, account, snap, assoc_adds, parts_said)
        refused, unsure = lsf_user_misses(p, snap)
        restr += refused
        adjusted[p.name] += unsure
        refused, unsure = fair_share_misses(p, snap)  # LSF USER_SHARES
        restr += refused
        adjusted[p.name] += unsure
        refused, unsure = queue_user_misses(p, snap)
        restr += refused
        adjusted[p.name] += unsure
        if cfg.scheduler == "sge" and (project := sge_project(spec)) \
                and project in (snap.project_acls or {}):
            refused, unsure = user_acl_misses(f"project {project}",
                                              (snap.project_acls or {})[project], snap)
            restr += refused
            adjusted[p.name] += unsure
        if lsf_m and (mine := set(members.get(p.name, []))) and not mine & fit:
            other.append(f"queue {p.name} uses none of the hosts -m names ({lsf_m}): bsub "
                         "refuses it (its HOSTS: "
                         f"{_few(mine)})")
        groups = cfg.metadata.get("groups")  # the user's Unix groups, where the site says
        runs_as = pbs_group(spec, snap) if cfg.scheduler == "pbs" else None
        if p.allowed_groups is not None and runs_as is not None:
            # PBS checks the one group the job runs as (its -W group_list, else the user's
            # primary group) against the queue's acl_groups
            if runs_as not in p.allowed_groups:
                restr.append(f"queue '{p.name}' takes the jobs of groups "
                             f"{', '.join(p.allowed_groups)} only (acl_groups); the job runs "
                             f"as group '{runs_as}' (name another with -W group_list=)")
        elif p.allowed_groups is not None and cfg.scheduler != "pbs" \
                and isinstance(groups, list) \
                and not set(p.allowed_groups) & {str(g) for g in groups}:
            restr.append(f"none of your groups ({', '.join(map(str, groups)) or 'none'}) may "
                         f"use partition '{p.name}' (AllowGroups: "
                         f"{', '.join(p.allowed_groups)})")
        if qos and p.denied_qos and qos in p.denied_qos:
            restr.append(f"QOS '{qos}' denied in partition '{p.name}' (DenyQos: "
                         f"{', '.join(p.denied_qos)})")
        if not _is_up(p) and p.opens_at is None:
            other.append(f"{words.part} '{p.name}' is {_state_said(p)}")
        if pe and p.parallel_environments is not None \
                and not pe_offered(pe, p.parallel_environments):
            other.append(f"queue {p.name} does not offer parallel environment '{pe}' "
                         f"(its pe_list: {' '.join(p.parallel_environments) or 'NONE'})")
        limit = time_limit(req, p.max_time_s)
        if cfg.scheduler == "slurm" and p.max_time_s and (endless := no_time_limit(spec)):
            other.append(f"`{endless}` asks no time limit, above {words.where(p.name)} "
                         f"{words.time_cap} {hms(p.max_time_s)} (slurmctld holds it: "
                         "PartitionTimeLimit); give a --time within it")
        if req.walltime and limit is None:
            other.append(f"walltime {hms(req.walltime)} above {words.where(p.name)} "
                         f"{words.time_cap} {hms(p.max_time_s)}"
                         + (f" (and {req.time_min_name} {hms(req.time_min)} too)"
                            if req.time_min is not None else ""))
            too_long[p.name] = p.max_time_s or 0
        elif limit != req.walltime:
            cut.append(f"partition {p.name}: time limit cut to --time-min {hms(limit)} "
                       f"(the walltime is above its MaxTime {hms(p.max_time_s)})"
                       if req.time_min_name == "--time-min" else
                       f"{words.where(p.name)}: time limit cut to {hms(limit)}, its "
                       f"{words.time_cap} (at least the job's {req.time_min_name} "
                       f"{hms(req.time_min or 0)}, below its max_walltime "
                       f"{hms(req.walltime or 0)})")
        if job_soft is not None and p.soft_time_s is not None and job_soft > p.soft_time_s:
            other.append(f"s_rt {hms(job_soft)} above {words.where(p.name)}'s s_rt "
                         f"{hms(p.soft_time_s)} (Grid Engine runs a job only in a queue whose "
                         "limits hold what it asks)")
        if (soft := _soft_limit(p)) is not None and (limit or p.max_time_s or soft + 1) > soft:
            cut.append(f"{words.where(p.name)}: its s_rt {hms(p.soft_time_s)} ends the job at "
                       f"{hms(soft)} (Grid Engine sends SIGUSR1 at s_rt, then ends it after the "
                       f"queue's notify {hms(p.notify_s or 0)}), before its "
                       + (f"h_rt {hms(limit)}" if limit else "limit"))
        mine = members.get(p.name, [])
        if missing := [h for h in req.nodelist if h not in mine]:
            other.append(f"partition {p.name} does not hold node(s) {', '.join(missing)} "
                         "named by --nodelist")
        other.extend(_limit_misses(req, p, chunks, words))
        other.extend(_qos_misses(req, p, qos, snap))
        other.extend(assoc_job_misses(req, p, account, snap))
        restr += assoc_minutes_held(req, p, account, snap)
        restr += qos_minutes_held(req, p, qos, snap)
        holds[p.name] = [w for w in (qos_wait(req, p, qos, snap, now, part_max),
                                     assoc_wait(req, p, account, snap, now, part_max),
                                     resv_wait, lic_wait) if w]
        restr += sge_limits.restricted.get(p.name, [])
        other += sge_limits.refused.get(p.name, [])
        holds[p.name] += sge_limits.waits.get(p.name, [])
        if p.opens_at is not None and not _is_up(p):  # LSF: outside its time windows
            holds[p.name].append(Wait(
                max(0.0, (aware(p.opens_at) - now).total_seconds()),
                f"queue {p.name} dispatches no job outside its run and dispatch windows "
                f"(Open:Inact_Win): LSF dispatches it once they open, "
                f"{p.opens_at:%a %H:%M} the cluster's time"))
        if p.limits:  # a PBS queue's max_queued / max_run of the user's or everyone's
            totals = _totals(req, chunks)
            refused, never, wait = pbs_limits(
                p, {"jobs": 1, "ncpus": totals[0], "ngpus": totals[2], "mem": totals[1]},
                snap, now, part_max, group=pbs_group(spec, snap),
                project=pbs_project(spec, cfg.flavor))
            restr += refused
            other += never
            holds[p.name] += [wait] if wait else []
        if cfg.scheduler == "sge" and (wait := sge_user_jobs_wait(snap, now, part_max)):
            holds[p.name].append(wait)  # the cell's maxujobs of the user's running jobs
        if cfg.scheduler == "lsf":  # JL/U and the lsb.resources limits in use
            never, wait = lsf_limits(req, lsf_slots(req, spec), p, account, snap, now,
                                     part_max)
            other += never
            holds[p.name] += [wait] if wait else []
            pfit = fits[p.name] = _lsf_host_limited(req, p, account, snap, now, part_max,
                                                    pfit, members, other, holds, adjusted)
            wide[p.name] = len([x for x in members.get(p.name, []) if x in pfit])
        sockets = max((n.sockets or 0 for n in nodes if n.name in mine), default=0)
        queue_why = queue_fits[p.name].why if p.name in queue_fits else None
        if slots_from is not None and p.name in slots_from.why:
            queue_why = "; ".join(filter(None, (slots_from.why[p.name], queue_why)))
        if p.name in select_miss:  # no host left by the queue's own select[] or h_rt
            other.append(select_miss[p.name])
        elif queue_why and wide[p.name] < req.nodes:  # its instances lack a consumable
            other.append(queue_why)
        elif master_hosts is not None and pfit and not pfit & master_hosts:
            other.append(f"-masterq: no host of its master queue ({_few(master_hosts)}) "
                         f"can run the master task's share of the job ({quantity(req.cpn, 'slot')}"
                         + (f", {quantity(req.gpn, 'GPU')}" if req.gpn else "") + ")"
                         + (f"; {queue_why}" if queue_why else ""))
        elif (capped := _cpus_cap_miss(req, r, p, wide[p.name], sockets, words)) is not None:
            other.append(capped)
        elif p.max_nodes is not None and req.nodes > p.max_nodes:
            other.append(f"needs {words.nodes(req.nodes)}{by_counts}, {words.where(p.name)} "
                         f"allows at most {p.max_nodes}")
        elif p.min_nodes is not None and _nodes_counted(req, spec, cfg.scheduler) < p.min_nodes:
            other.append(f"needs {words.nodes(_nodes_counted(req, spec, cfg.scheduler))}, "
                         f"{words.where(p.name)} takes only jobs of at least {p.min_nodes} "
                         f"({'NNODES' if cfg.scheduler == 'flux' else 'MinNodes'})")
        elif chunks is not None:
            if pack_chunks(chunks[0], [n for n in nodes if n.name in mine and n.name in fit
                                       and n.name in usable], chunks[1], chunks[4]) is None:
                held = [n for n in nodes if n.name in mine and n.name in fit
                        and n.name not in usable]  # named by state, with the admin's reason
                held_seen += held
                other.append(f"{words.where(p.name)}: its usable {words.node}s cannot hold the "
                             f"{'terms' if chunks[1] == 'terms' else 'chunks'} "
                             f"({'+'.join(chunks[2])})"
                             + (f" ({_held_why(held)})" if held else ""))
        elif wide[p.name] < req.nodes and wide[p.name] < len(mine):
            # some of its nodes cannot run the job at all: say which need they miss
            # (a node the job excludes is not one it could run on: said apart)
            out = sorted(x for x in mine if x in req.exclude and x not in pfit)
            # nodes outside the reservation the job names: said apart too
            unreserved = {x for x in mine if resv_hosts is not None and x not in resv_hosts
                          and x not in pfit and x not in out}
            left = [n for n in nodes if n.name in mine and n.name not in pfit
                    and n.name not in out and n.name not in unreserved]
            # an LSF job's own select[] (or -m) already left some out: said of the others
            kept = [n for n in left if n.name in fit] if cfg.scheduler == "lsf" else []
            task = _task_spread(req, spreads)
            missed = partition_misses(_one_node(req, spreads) if task else req, kept or left,
                                      site_arch, words, task) if left else \
                f"no {words.node} left"
            if unreserved:
                missed = (f"{missed}; " if left else "") + f"not in reservation " \
                    f"{resv_name}: {_few(unreserved)}"
            if left and all(n.name in unbound for n in left):
                missed = _binding_miss(req, max(unbound[n.name] for n in left), "its nodes")
            if out:
                missed += f"; --exclude takes {_few(set(out))}"
            if not wide[p.name]:
                other.append(f"{words.where(p.name)}: {missed}")
            else:
                other.append(f"needs {words.nodes(req.nodes)}, {words.where(p.name)} has only "
                             f"{wide[p.name]} that can run it (others: {missed})")
        elif wide[p.name] < req.nodes:
            other.append(f"needs {words.nodes(req.nodes)}{spread}, largest {words.part} "
                         f"has {wide[p.name]}" if wide[p.name] >= largest
                         and req == whole_req and p.name else
                         f"needs {words.nodes(req.nodes)}{spread}, {words.where(p.name)} has "
                         f"only {wide[p.name]}")
        elif short := _grouped_short(req, counted, brackets, p.name, [
                n for n in nodes if n.name in mine and n.name in pfit], site_arch):
            other.extend(short)
        else:
            up = len([x for x in members.get(p.name, []) if x in pfit
                      and (x in usable or x in back)])
            if up < req.nodes:
                held = [n for n in nodes if n.name in mine and n.name in pfit
                        and n.name not in usable]
                held_seen += held
                other.append(f"needs {words.nodes(req.nodes)}, {words.where(p.name)} has only {up} "
                             f"usable ({_held_why(held)})")
        other += _size_causes(other, adjusted[p.name])
        restricted_only |= bool(restr) and not other
        if restr or other:
            problems.extend(restr + other)
        else:
            good.append(p)
    req = whole_req
    problems = list(dict.fromkeys(problems))
    v.node_reasons = list(dict.fromkeys(cut_reasons(held_seen)))
    if not good and too_long and len(parts) > 1:
        scope = f"every destination of routing queue {route.name}" if route is not None else \
            f"every {words.part} it names" if spec.queue else ""
        problems = _too_long_everywhere(req, parts, too_long, problems, scope, words)
    if not good:
        v.verdict = "RESTRICTED" if restricted_only else "INCOMPATIBLE"
        v.reasons = problems
        return v
    if cfg.scheduler == "slurm" and spec.queue \
            and (all_limits := enforced_everywhere(reqs, parts, snap)):
        v.reasons = [all_limits]
        return v
    if route is not None:  # the first destination that takes it, in the route's order
        order = route.routes_to or []
        good = [min(good, key=lambda p: order.index(p.name))]
    v.notes += problems + [c for c in cut if any(c.startswith(f"{words.where(p.name)}:")
                                                 for p in good)] + stale_default
    if route is not None:
        v.notes.append(f"routing queue {route.name} sends it to {good[0].name} (the first "
                       f"of {', '.join(route.routes_to or [])} that takes it)")
    on_counted, only_counted = counted_nodes(req, nodes, site_arch)
    risky = {p.name: by for p in good if tiers_preempt(snap) and (by := _preempted_on(
        p, snap.partitions, members, fits[p.name], on_counted, only_counted)) is not None}
    if risky and len(risky) < len(good) and not spec.queue:
        # the engine never moves a job where it may be preempted while a partition where
        # it may not can run it (the user may name such a partition)
        v.notes += [f"partition {name} passed over: {risky[name]}" for name in risky]
        good = [p for p in good if p.name not in risky]
    elif len(risky) > 1:  # at an equal start, one never preempted first, then the highest
        # PriorityTier (fewer partitions preempt it), not the order scontrol printed them in
        good = sorted(good, key=lambda p: (p.name in risky, -p.tier
                                           if p.name in risky else 0))
    if req.spread:
        v.notes.append(f"its {quantity(spec.resources.gpus_per_node, 'GPU')} (the job's, no node "
                       f"count) "
                       f"take {quantity(req.nodes, 'node')} here, {quantity(req.gpn, 'GPU')} on "
                       f"each")
    master_said = "a host of its master queue"
    if cfg.scheduler == "sge" and master_hosts is None and req.nodes > 1:
        # a JOB host consumable of a job of several hosts: its master task's host holds it,
        # one of those that have enough (the other hosts need none)
        every = {n.name for n in nodes}
        holders, _ = master_holding(req, every, nodes)
        if holders and holders != every:
            master_hosts, master_said = holders, "a host holding its JOB consumables"
    _estimate(v, reqs, spec, cfg, snap, nodes, members, good,
              {p.name: fits[p.name] & (usable | set(back)) for p in good}, default, now,
              stage_bytes, prior, estimates, cal, data, ended, holds, chunks, queue_fits,
              master_hosts, master_said)
    if snap.queue_error:
        _queue_unknown(v, snap.queue_error)
    elif lic_unknown:
        _start_unknown(v, lic_unknown)
    v.notes += adjusted.get(v.partition or "", [])
    v.not_checked += unread_select + queue_unchecked.get(v.partition or "", [])
    v.notes += master_note + complexes_said
    if req.gpu_type:  # a model matched by family only (the site says no memory or form)
        where = fits.get(v.partition or "")
        said = gpu_family_note(req.gpu_type, [m for n in nodes if where is None
                                              or n.name in where for m in node_gpu_models(n)])
        v.notes += [said] if said else []
    if v.partition is not None and cfg.scheduler == "slurm":
        v.notes += _overrun_note(v.partition, set(fits.get(v.partition, ())) & set(
            members.get(v.partition, [])), snap, now)
    if v.partition is not None and v.verdict != "READY":
        out = [n for n in nodes if n.name in back and n.name in fits.get(v.partition, ())
               and n.name in members.get(v.partition, [])]
        v.notes += _returning_note(v.partition, out, back, timeouts_of(
            own_timeouts, [n.name for n in out], snap.node_timeouts), power, seen)
        if cfg.scheduler == "lsf":
            v.notes += _closed_note(v.partition, [
                n for n in nodes if n.name in fits.get(v.partition, ())
                and n.name in members.get(v.partition, [])])
    if v.partition is not None and v.verdict == "READY":
        ready = [n for n in nodes if n.name in fits[v.partition] and n.name in usable
                 and n.name in members.get(v.partition, [])]
        v.notes += _boot_note(v.partition, reqs[v.partition], ready, timeouts_of(
            own_timeouts, [n.name for n in ready], snap.node_timeouts))
        chosen_p = next((p for p in good if p.name == v.partition), None)
        if chosen_p is not None:
            v.notes += _landing_note(chosen_p, reqs[v.partition], ready)
    chosen = next((p for p in good if p.name == v.partition), None)
    if chosen is not None:
        v.notes += _unchecked(chosen, qos_of.get(chosen.name), cfg,
                              pbs_group(spec, snap) if cfg.scheduler == "pbs" else None)
    asked = {f.name.lower() for f in _features_in(req.constraint)}
    if v.partition is not None and asked:
        ready = [n for n in nodes if n.name in fits[v.partition]
                 and n.name in members.get(v.partition, [])]
        if ready and all(asked & {f.lower() for f in n.reboot_features} for n in ready):
            later = sorted({f for n in ready for f in n.reboot_features if f.lower() in asked})
            v.notes.append(f"feature{'s' if len(later) > 1 else ''} {', '.join(later)} not "
                           f"active on the nodes of {v.partition} that can run it "
                           f"({_few({n.name for n in ready})}): Slurm reboots them into it "
                           "first (AvailableFeatures, a node_features plugin), minutes more")
    switches = next((d.value for d in spec.unknown if d.dialect == "slurm"
                     and d.option == "--switches" and d.value), None)
    if switches and cfg.scheduler == "slurm":
        count, _, wait = switches.partition("@")
        v.not_checked.append(f"--switches={switches}: the site's network topology is not "
                             "read; under a tree topology Slurm holds the job until its "
                             f"nodes hang off at most {count} leaf switch"
                             f"{'es' if count != '1' else ''}, for at most "
                             + (wait if wait else "max_switch_wait (300 s unless the site "
                                "sets another)") + ", then starts it where it can")
    if v.partition in risky:
        v.notes.append(f"partition {v.partition}: {risky[v.partition]}")
    if v.verdict == "BUSY" and not v.waits_for and v.partition is not None:
        # no limit in use: a reservation ahead on its nodes is why it waits
        v.waits_for = reservations_waited_for(resv_said, snap, members.get(v.partition, []))
    return v


def _lsf_host_limited(req: Req, p: Partition, account: str | None, snap: SiteSnapshot,
                      now: datetime, part_max: dict[str, float], pfit: set[str],
                      members: dict[str, list[str]], other: list[str],
                      holds: dict[str, list[Wait]], adjusted: dict[str, list[str]]
                      ) -> set[str]:
    """The hosts of queue `p` the job may use under the `blimits` limits on hosts: those
    whose limit is below what it asks of a host are never used (a reason when too few are
    left); those in use up to their limit are passed over while enough others are free,
    else it waits for enough of their jobs to end (`holds`)."""
    banned, full = lsf_host_limits(req, p, account, snap, now, part_max)
    if not banned and not full:
        return pfit
    mine = [x for x in members.get(p.name, []) if x in pfit]
    kept = [x for x in mine if x not in banned]
    if len(kept) < req.nodes <= len(mine):
        why = next(banned[x] for x in mine if x in banned)
        other.append(f"needs {req.nodes} host{'s' if req.nodes > 1 else ''}, queue {p.name} "
                     f"has {len(kept)} its host limits let it use ({why})")
        return pfit  # said once: the hosts' sizes do not add another reason
    pfit = pfit - set(banned)
    now_ok = [x for x in kept if x not in full]
    held = [x for x in kept if x in full]
    if not held:
        return pfit
    if len(now_ok) >= req.nodes:
        adjusted[p.name].append(f"queue {p.name}: hosts {_few(set(held))} passed over: "
                                f"{full[held[0]][0]}")
        return pfit - set(held)
    ats = sorted(full[x][1] for x in held)
    at = ats[min(len(ats), req.nodes - len(now_ok)) - 1]
    holds[p.name].append(Wait(at, f"{full[held[0]][0]}: it waits until enough of the jobs "
                                  "on those hosts end"))
    return pfit


# each scheduler's hold at submission and the command that releases the job
_RELEASE = {"slurm": ("sbatch -H", "scontrol release"), "pbs": ("qsub -h", "qrls"),
            "sge": ("qsub -h", "qrls"), "lsf": ("bsub -H", "bresume"),
            "flux": ("flux batch --urgency=0", "flux job urgency ID default")}


def _held_said(scheduler: str) -> str:
    """The not-checked line of a job submitted held: when it starts is the user's call."""
    hold, release = _RELEASE.get(scheduler, ("held", "a release"))
    return (f"when the job is released: it is submitted held ({hold}) and starts only once "
            f"released ({release}); the start shown is the one a release now would give")


def _qos_preempts_said(under: str | None, jobs: Mapping[str, float], snap: SiteSnapshot
                       ) -> str:
    """The note of a job whose QOS preempts running jobs (preempt/qos), `jobs` theirs by
    native id with their QOS's GraceTime."""
    qos_of = {j.native_id: j.qos for j in snap.running}
    names = sorted({q for i in jobs if (q := qos_of.get(i))})
    graces = sorted({g for g in jobs.values() if g})
    grace = f", after a GraceTime of {', '.join(hms(g) for g in graces)}" if graces else ""
    return (f"PreemptType=preempt/qos: the job's QOS {under} preempts QOS "
            f"{', '.join(names)}: {quantity(len(jobs), 'running job')} of theirs count as "
            f"free once stopped{grace}")


def _preemption_delay_said(victims: Collection[str], snap: SiteSnapshot) -> str:
    """What delays the preempted jobs' stop, as said after "they count as free": each
    partition's GraceTime, the site's PreemptExemptTime ("" where neither)."""
    grace = {q: g for q, g in preemption_delays(victims, snap).items() if g}
    said = [f"partition {q}'s GraceTime {hms(g)} lets them run on" for q, g in
            sorted(grace.items())]
    if snap.preempt_exempt_s:
        said.append(f"PreemptExemptTime {hms(snap.preempt_exempt_s)} keeps each until it "
                    "has run that long")
    return f" once stopped ({'; '.join(said)})" if said else ""


def _state_said(p: Partition) -> str:
    """A partition's state as a user reads it (PBS's enabled but not started spelled out)."""
    if p.state == NOT_STARTED:
        return "not started: takes jobs, runs none until started"
    return p.state


def _nodes_counted(req: Req, spec: JobSpec, scheduler: str) -> int:
    """The nodes a queue's least nodes is compared with: flux counts those its jobspec asks
    (policy.limits.job-size.min.nnodes; none without -N), the others the job's nodes."""
    return (spec.resources.nodes or 0) if scheduler == "flux" else req.nodes


def _is_up(p: Partition) -> bool:
    return p.state.upper() in ("UP", "OPEN", "ACTIVE")


def _too_long_everywhere(req: Req, parts: list[Partition], too_long: dict[str, int],
                         problems: list[str], scope: str = "", words: Words = SLURM_WORDS
                         ) -> list[str]:
    """One reason for a walltime above the MaxTime of every partition (the longest named),
    or of every partition that is up, the ones it fits said to be down (they would take
    it once up: not "above every partition's"); else `problems` as they are. `scope`: the
    partitions the job may go to when it names some (a list, a routing queue's
    destinations), said so (not "every partition here": others may take it). `words`: the
    site's scheduler's names."""
    fits = [p for p in parts if p.name not in too_long]
    if any(_is_up(p) for p in fits):
        return problems
    up_long = {n: t for n, t in too_long.items() if _is_up(next(p for p in parts
                                                                if p.name == n))}
    if fits and not up_long:
        return problems  # no partition is up: each one's reason says so
    pool = up_long if fits else too_long
    longest = max(pool, key=lambda n: pool[n])
    wall = f"walltime {hms(req.walltime)} above"
    cap, part = words.time_cap, words.part
    where = (f"the {cap} of {scope}" if scope else f"every {part}'s {cap} here") \
        if not fits else f"the {cap} of {scope or f'every {part}'} that is up"
    said = f"{wall} {where} (the longest: {longest}, {hms(pool[longest])})" + (
        f", and {req.time_min_name} {hms(req.time_min)} too" if req.time_min is not None
        else "")
    down = [f"{part} '{p.name}' is {_state_said(p)}" for p in fits]
    if fits:
        said += "; " + ", ".join(
            f"{part} {p.name} ("
            + (f"{cap} {hms(p.max_time_s)}" if p.max_time_s else f"no {cap}")
            + f") would take it but is {_state_said(p)}" for p in fits)
    return [said] + [x for x in problems if not x.startswith(wall) and x not in down]


def _features_in(expr: Constraint | None) -> list[Feature]:
    """Every feature a constraint names, at any depth."""
    if isinstance(expr, Feature):
        return [expr]
    if isinstance(expr, Op):
        return [f for item in expr.items for f in _features_in(item)]
    return []


def _queue_unknown(v: SiteVerdict, why: str) -> None:
    """A site whose queue could not be read can run the job (its nodes say so), but when is
    unknown: no start, bound or finish (it ranks after every site with one), never READY."""
    _start_unknown(v, f"queue unknown, so its start cannot be estimated ({why})")


def _start_unknown(v: SiteVerdict, why: str) -> None:
    """The job can run here but waits for how long is not known (`why`): no start, bound or
    finish (it ranks after every site with one), never READY."""
    v.verdict = "BUSY"
    v.estimated_start = v.raw_start = v.start_bound = v.estimated_finish = None
    v.model_start, v.start_source = None, None
    v.notes.insert(0, why)


def _limits_not_reported(spec: JobSpec, cfg: SiteConfig, snap: SiteSnapshot) -> list[str]:
    """The limits the job meets at this site whose value or use the site does not report
    (`SiteVerdict.not_checked`): a Slurm site's MaxArraySize for an array, and the
    GrpTRESMins of every partition the job may use (under the QOS it would run with there)
    whose use is not known."""
    out = []
    if cfg.scheduler == "slurm" and spec.array and not array_too_large(spec, snap) \
            and (who := snap.unreported.get(UNREPORTED_MAX_ARRAY)):
        out.append(f"{who} does not report MaxArraySize (the array's largest index must be "
                   "below it)")
    parts = snap.partitions or [Partition(name="", default=True)]
    if spec.queue:
        named = {q.strip() for q in spec.queue.split(",") if q.strip()}
        parts = [p for p in parts if p.name in named and p.routes_to is None]
    else:
        parts = [p for p in parts if not p.hidden and p.routes_to is None] or parts
    account = spec.account or cfg.default_account
    unread: list[tuple[str, str, str]] = []  # GrpTRESMins met, use not known
    for p in parts:
        qos = job_qos(spec.qos, p, snap, account)[0]
        unread += [n for n in minutes_used_unread(p, qos, account, snap) if n not in unread]
    out += minutes_unread_said(unread, snap)
    if cfg.scheduler == "flux":
        out += _flux_queue_properties(spec, snap)
    if cfg.scheduler == "lsf":
        out += fair_share_unread(parts, snap)
    if cfg.scheduler == "slurm" and (bf_window := _bf_window_unreported(snap)):
        out.append(bf_window)
    if cfg.scheduler == "slurm" and (sched := _scheduler_type_unreported(snap)):
        out.append(sched)
    return out


def _scheduler_type_unreported(snap: SiteSnapshot) -> str | None:
    """The not-checked line of a Slurm site whose SchedulerType is not known (slurmrestd
    serves no slurm.conf): its start is planned with backfill, which sched/builtin lacks
    (said wherever the job may wait: dropped where it starts at once)."""
    if snap.backfill is not None or not (who := snap.unreported.get(UNREPORTED_SCHEDULER_TYPE)):
        return None
    return (f"{who} does not report SchedulerType: backfill (sched/backfill) is assumed for "
            "this site; under sched/builtin the job waits for every job ahead of it")


def _flux_queue_properties(spec: JobSpec, snap: SiteSnapshot) -> list[str]:
    """A flux queue (the job's, else the default) whose `requires` (flux-config-queues(5))
    was not read, `flux config get queues` not answering: every node was counted, though
    flux's queues usually require a property of their name (said where some nodes only
    have it)."""
    why = snap.unreported.get(UNREPORTED_QUEUE_REQUIRES)
    if why is None:
        return []
    named = [q.strip() for q in (spec.queue or "").split(",") if q.strip()] or \
        [p.name for p in snap.partitions if p.default]
    up = {p.name for p in snap.partitions if p.state == "UP"}
    out = []
    for name in (n for n in named if n in up):  # a queue down runs nothing anyway
        having = {n.name for n in snap.nodes if name in n.features}
        out.append(f"queue requires ({why}): which nodes queue {name} may use is not "
                   "known; every node was counted"
                   + (f", though only {_few(having)} have property '{name}': if the queue "
                      "requires it, the job gets only those"
                      if having and len(having) < len(snap.nodes) else ""))
    return out


def _bf_window_unreported(snap: SiteSnapshot) -> str | None:
    """The not-checked line of a Slurm site that does not report its backfill window (said
    wherever the job may wait: dropped where it starts at once)."""
    if snap.bf_window_s is not None or not (who := snap.unreported.get(UNREPORTED_BF_WINDOW)):
        return None
    return (f"{who} does not report the backfill window, SchedulerParameters' bf_window (a "
            "start past it keeps no backfill slot)")


def _unchecked(p: Partition, qos: str | None, cfg: SiteConfig,
               runs_as: str | None = None) -> list[str]:
    """What the chosen partition may still do to the job that the snapshot cannot tell:
    access by QOS (`qos`: the job's, None when not known) or group the job or the site
    does not name (`runs_as`: the group a PBS job runs as, where known), CPUs shared by
    force."""
    out = []
    if p.allowed_qos is not None and not qos:
        out.append(f"partition {p.name} takes QOS {', '.join(p.allowed_qos)} only; the job "
                   "names none, so its account's default QOS must be one of them")
    if p.allowed_groups is not None and cfg.scheduler == "pbs":
        if runs_as is None:
            out.append(f"queue {p.name} takes the jobs of groups "
                       f"{', '.join(p.allowed_groups)} only (acl_groups); the group the "
                       "job runs as is not known here")
    elif p.allowed_groups is not None and not isinstance(cfg.metadata.get("groups"), list):
        out.append(f"partition {p.name} is for groups {', '.join(p.allowed_groups)} only "
                   "(AllowGroups); your groups are not known here")
    if (p.oversubscribe or "").upper().startswith("FORCE"):
        out.append(f"partition {p.name} shares CPUs between jobs (OverSubscribe="
                   f"{p.oversubscribe}): the job may run time-sliced with others")
    return out


def _size_causes(misses: list[str], adjusted: list[str]) -> list[str]:
    """The changes a partition's rules made to the job's size that explain `misses`: a
    default memory where memory is short, CPUs raised for memory where CPUs or memory are."""
    mem = any("memory" in m for m in misses)
    cpus = mem or any("CPUs" in m for m in misses)
    return [a for a in adjusted if ("no memory asked" in a and mem)
            or (("MaxMemPerCPU" in a or "no CPUs asked" in a or "one task a core" in a)
                and cpus)]


def _enforce_binding(spec: JobSpec) -> bool:
    return any(d.dialect == "slurm" and d.option == "--gres-flags" and "enforce-binding"
               in (d.value or "") for d in spec.unknown)


def _binding_miss(req: Req, most: int, where: str) -> str:
    return (f"--gres-flags=enforce-binding: its {quantity(req.cpn, 'CPU')} a node must be on the "
            f"sockets of its {quantity(req.gpn, 'GPU')}, which hold at most "
            f"{quantity(most, 'CPU')} on {where}")


def _bound_cpus(n: Node, gpus: int) -> int:
    """The CPUs of node `n` on the fewest sockets whose bound GPUs make `gpus` (its GPUs'
    socket affinity, `Gres=gpu:2(S:0),gpu:2(S:1)`); all its CPUs where that is not said."""
    if not n.gpu_sockets or not n.sockets:
        return n.cpus
    used, have = 0, 0
    for count in sorted(n.gpu_sockets.values(), reverse=True):
        if have >= gpus:
            break
        used, have = used + 1, have + count
    return n.cpus // n.sockets * used if have >= gpus else 0


def _asks_to_share(spec: JobSpec) -> bool:
    """Slurm `--oversubscribe` (`-s`): the job may share its CPUs where a partition of
    OverSubscribe=YES lets jobs that ask."""
    return any(d.dialect == "slurm" and d.option == "--oversubscribe" for d in spec.unknown)


def _exclusive_kind(spec: JobSpec) -> str | None:
    """A Slurm job's `--exclusive=user|mcs|topo` (nodes shared only with the user's own
    jobs, those of its MCS label, or none on its topology); None otherwise."""
    return next(((d.value or "").strip().lower() for d in spec.unknown
                 if d.dialect == "slurm" and d.option == "--exclusive"), None)


def _named_partitions_misses(spec: JobSpec, snap: SiteSnapshot, nodes: list[Node], req: Req,
                             site_arch: str | None, words: Words, task: bool = False
                             ) -> list[str]:
    """Why no node can run the job, said of the partitions it names alone (their nodes,
    not the site's largest elsewhere); [] where it names none, or one not here. `task`:
    `req` is one task of tasks that go over any nodes (`node_checks`)."""
    if not spec.queue or not snap.partitions:
        return []
    names = [q.strip() for q in spec.queue.split(",") if q.strip()]
    parts = {p.name: p for p in snap.partitions}
    if not names or any(n not in parts or parts[n].routes_to is not None for n in names):
        return []
    members = partition_members(snap, nodes)
    out = []
    for name in names:
        mine = [n for n in nodes if n.name in members.get(name, [])]
        if not mine:
            return []
        out.append(f"{words.where(name)}: "
                   f"{partition_misses(req, mine, site_arch, words, task)}")
    return out


def _one_thread_a_core(spec: JobSpec) -> bool:
    """Whether a Slurm job uses one hardware thread of each core (`--hint=nomultithread`,
    `--threads-per-core=1`): its tasks' CPUs are whole cores."""
    kept = {d.option: (d.value or "").strip() for d in spec.unknown if d.dialect == "slurm"}
    return "nomultithread" in kept.get("--hint", "").split(",") \
        or kept.get("--threads-per-core") == "1"


def _cores_of(n: Node) -> Node:
    """Node `n` counted in cores: its CPUs (and those in use) over its threads a core."""
    t = n.threads_per_core or 1
    if t <= 1:
        return n
    return n.model_copy(update={"cpus": n.cpus // t, "cpus_allocated": ceil(
        n.cpus_allocated / t)})


def _held_why(held: list[Node]) -> str:
    """Why a partition's nodes that could run the job take no new one, in a few words, the
    nodes named by state (`held_nodes_text`)."""
    resv = [n.name for n in held if node_reserved(n) and node_usable(n, True)]
    maint = [n.name for n in held if {"maint", "maintenance"} & set(
        re.split(r"[^a-z]+", n.state.lower()))]
    if resv and len(resv) == len(held):
        return f"others in a reservation the job is not in: {', '.join(resv)}"
    if maint and len(maint) == len(held):
        # a DOWN node in a MAINT reservation is both: it stays out when the reservation ends
        down = {n.name for n in held if "down" in re.split(r"[^a-z]+", n.state.lower())}
        return "others in maintenance: " + ", ".join(
            f"{m} (down too: out after the maintenance ends)" if m in down else m for m in maint)
    # Slurm FUTURE: a node defined for later, not yet in service (it takes no job)
    future = [n.name for n in held if "future" in re.split(r"[^a-z]+", n.state.lower())]
    later = f"; not yet in service (FUTURE): {', '.join(future)}" if future else ""
    if future and len(future) == len(held):
        return f"others not yet in service (FUTURE): {', '.join(future)}"
    return "others " + held_nodes_text([n for n in held if n.name not in future],
                                       {n: "in a reservation" for n in resv}) + later


def _in_partition(req: Req, spec: JobSpec, p: Partition, nodes: list[Node],
                  members: dict[str, list[str]]) -> tuple[Req, list[str]]:
    """What the job asks in partition `p`, by Slurm's rules, with a note for each change:
    a job that gives no time limit runs with its DefaultTime; one that asks no memory
    gets DefMemPerCPU for each CPU (or DefMemPerNode); memory per CPU above MaxMemPerCPU
    raises its CPUs per task until each CPU's share is under it (slurm.conf: "the job's
    count of CPUs per task will try to automatically increase"); OverSubscribe=EXCLUSIVE
    gives it whole nodes."""
    r, notes = spec.resources, []
    out = req
    if not req.walltime and p.default_time_s:
        out = replace(out, walltime=float(p.default_time_s))
    if (p.oversubscribe or "").upper().startswith("EXCLUSIVE") and not out.whole:
        out = replace(out, whole=True)
        if p.oversubscribe != LINEAR_WHOLE:  # select/linear: said once, for the site
            notes.append(f"partition {p.name} gives every job whole nodes "
                         "(OverSubscribe=EXCLUSIVE)")
    out = _default_tasks(out, spec, p, nodes, members, notes)
    asked = req.mem > 0 or r.memory_mb is not None
    out, asked, queue_span = _queue_res_req(out, spec, p, asked, notes)
    per_gpu = spec.metadata.get(PER_GPU) if isinstance(spec.metadata.get(PER_GPU), dict) \
        else {}
    cpg = p.def_cpus_per_gpu
    if cpg and out.gpn and r.cpus_per_task is None and "cpus-per-gpu" not in per_gpu \
            and not any(d.option == "--cpus-per-gpu" for d in spec.unknown) \
            and cpg * out.gpn > out.cpn:
        out = replace(out, cpn=cpg * out.gpn)
        notes.append(f"partition {p.name}: no CPUs asked, it gets DefCpuPerGPU {cpg} x "
                     f"{quantity(out.gpn, 'GPU')} = {quantity(out.cpn, 'CPU')} a node")
    if not asked and out.gpn and p.def_mem_per_gpu_mb:
        out = replace(out, mem=p.def_mem_per_gpu_mb * out.gpn)
        notes.append(f"partition {p.name}: no memory asked, it gets DefMemPerGPU "
                     f"{p.def_mem_per_gpu_mb} MB x {quantity(out.gpn, 'GPU')} = {out.mem} MB a "
                     f"node")
        asked = True
    per_cpu = r.memory_per_cpu_mb if r.memory_per_cpu_mb and not r.memory_mb else None
    default_per_cpu = not asked and bool(p.def_mem_per_cpu_mb)
    if default_per_cpu:
        per_cpu = p.def_mem_per_cpu_mb
        out = replace(out, mem=(per_cpu or 0) * out.cpn)
    elif not asked and p.def_mem_per_node_mb:
        out = replace(out, mem=p.def_mem_per_node_mb)
        notes.append(f"partition {p.name}: no memory asked, it gets DefMemPerNode "
                     f"{out.mem} MB a node")
    mine = [x for x in nodes if x.name in members.get(p.name, [])]
    # the most tasks one of its nodes holds (`most`, read only where needed): its CPUs, and
    # its sockets or cores where `--ntasks-per-socket`/`--ntasks-per-core` limit them
    if r.tasks and r.nodes is None and not r.tasks_per_node and not req.spread \
            and not r.gpus_per_task and not queue_span and not req.overcommit \
            and (most := max((min(x.cpus // out.cpt, out.task_cap(x) or x.cpus)
                              for x in mine), default=0)) and out.tpn > most:
        # tasks without a node count: as many to a node as the partition's own nodes hold
        # (the site's largest node may be in another partition)
        tpn, n = most, ceil(r.tasks / most)
        if out.counted_floor > n:  # its feature counts take more nodes: the tasks spread
            tpn, n = ceil(r.tasks / out.counted_floor), out.counted_floor
        out = replace(out, tpn=tpn, nodes=n, cpn=out.cpt * tpn,
                      mem=out.mem if r.memory_mb else out.mem // out.tpn * tpn)
    cap = p.max_mem_per_cpu_mb
    factor = ceil(per_cpu / cap) if per_cpu and cap and per_cpu > cap else 1
    free_tasks = bool(r.tasks and r.nodes is None and not r.tasks_per_node and not req.spread
                      and not r.gpus_per_task and not queue_span and not req.overcommit)
    if per_cpu and (factor > 1 or out.mem != req.mem or free_tasks):
        cpt, tpn, n, share = out.cpt * factor, out.tpn, out.nodes, ceil(per_cpu / factor)
        if free_tasks:
            # tasks without a node count: as many to a node as its CPUs and memory hold
            fits = max((min(x.cpus // cpt, x.memory_mb // (share * cpt) if x.memory_mb
                            else x.cpus) for x in mine), default=1)
            tpn = max(1, min(r.tasks, fits))
            n = ceil(r.tasks / tpn)
            if out.counted_floor > n:  # its feature counts take more nodes: tasks spread
                tpn, n = ceil(r.tasks / out.counted_floor), out.counted_floor
        out = replace(out, cpt=cpt, tpn=tpn, nodes=n, cpn=cpt * tpn, mem=share * cpt * tpn)
        if factor > 1:
            notes.append(f"partition {p.name}: {per_cpu} MB per CPU is above its "
                         f"MaxMemPerCPU {cap} MB, so each task gets {quantity(cpt, 'CPU')} "
                         f"({out.cpn} a "
                         f"node, {share} MB each)")
    if cap and r.memory_mb and not r.memory_per_cpu_mb and out.mem > cap * out.cpn:
        # memory a node above MaxMemPerCPU x its CPUs: slurmctld raises the job's CPUs a
        # node (pn_min_cpus) until each CPU's share is under the cap
        cpn = ceil(out.mem / cap)
        notes.append(f"partition {p.name}: {out.mem} MB a node is above its MaxMemPerCPU "
                     f"{cap} MB x {quantity(out.cpn, 'CPU')}, so the job gets "
                     f"{quantity(cpn, 'CPU')} a node")
        out = replace(out, cpn=cpn)
    if default_per_cpu and out.whole and mine:
        # a job of whole nodes is given every CPU of each, and DefMemPerCPU for each one
        each = ", ".join(f"{(per_cpu or 0) * c} MB on a node of {c}"
                         for c in sorted({x.cpus for x in mine}))
        notes.append(f"partition {p.name}: no memory asked, it gets DefMemPerCPU "
                     f"{per_cpu} MB x every CPU of each of its nodes (it has them whole): "
                     f"{each}")
    elif default_per_cpu:
        notes.append(f"partition {p.name}: no memory asked, it gets DefMemPerCPU "
                     f"{per_cpu} MB x {quantity(out.cpn, 'CPU')} = {out.mem} MB a node")
    return out, notes


def _queue_res_req(req: Req, spec: JobSpec, p: Partition, asked: bool,
                   notes: list[str]) -> tuple[Req, bool, bool]:
    """An LSF queue's RES_REQ rusage[mem] and span[] merged with the job's as bsub
    merges them (lsb.queues(5)): the job's own value of a section wins, the queue's
    applies where the job has none. (the request, memory now asked, a queue span set)"""
    r = spec.resources
    if p.res_req_mem_mb and not asked:  # per slot, as a job's rusage[mem]
        req = replace(req, mem=p.res_req_mem_mb * max(req.cpn, 1))
        notes.append(f"queue {p.name}: no memory asked, it gets its RES_REQ rusage[mem="
                     f"{p.res_req_mem_mb}] a slot: {req.mem} MB a host")
        asked = True
    span = p.res_req_span
    if not span or not r.tasks or r.nodes is not None or r.tasks_per_node is not None:
        return req, asked, False
    tpn = r.tasks if span == "hosts=1" else int(span.partition("=")[2])
    tpn = min(tpn, r.tasks)
    nodes = ceil(r.tasks / tpn)
    mem = req.mem // max(req.tpn, 1) * tpn if req.mem else 0
    notes.append(f"queue {p.name}: its RES_REQ span[{span}] places the job's {r.tasks} "
                 f"tasks {tpn} to a host ({nodes} host{'s' if nodes > 1 else ''})")
    return replace(req, tpn=tpn, nodes=nodes, cpn=req.cpt * tpn, mem=mem), asked, True


def _default_tasks(req: Req, spec: JobSpec, p: Partition, nodes: list[Node],
                   members: dict[str, list[str]], notes: list[str]) -> Req:
    """A job that asks no task count (no tasks, nodes or CPUs per task: rendered without
    `bsub -n`) gets the queue's default (LSF TASKLIMIT), one slot a task, as many to a host
    as the queue's largest host holds; its memory (LSF rusage, per slot) for each."""
    r = spec.resources
    n = p.default_tasks
    if not n or n <= req.cpn or r.tasks or r.nodes or r.cpus_per_task or r.tasks_per_node:
        return req
    big = max((x.cpus for x in nodes if x.name in members.get(p.name, [])), default=0)
    tpn = min(n, big) if big else n
    notes.append(f"queue {p.name}: no task count asked, it gets TASKLIMIT's default {n} "
                 "tasks")
    return replace(req, cpt=1, tpn=tpn, nodes=ceil(n / tpn), cpn=tpn, mem=req.mem * tpn)


def _queue_full(p: Partition, snap: SiteSnapshot, now: datetime,
                part_max: dict[str, float]) -> tuple[float, str] | None:
    """When a queue that runs at most `max_running` jobs at once (PBS max_run) has room
    for the job, after its running jobs and those waiting in it ahead (seconds from now,
    from walltimes), and why; None when it has room now."""
    if p.max_running is None:
        return None
    mine = [j for j in snap.running if j.partition == p.name]
    ahead = [j for j in snap.pending if j.partition == p.name
             and not (j.reason and "held" in j.reason.lower())]
    need = len(mine) + len(ahead) - p.max_running + 1
    if need <= 0 or not mine:
        return None
    ends = sorted(max(0.0, (aware(j.started_at) - now).total_seconds()
                      + float(j.walltime_s or part_max.get(p.name) or DEFAULT_RUNTIME_S))
                  if j.started_at else DEFAULT_RUNTIME_S for j in mine)
    at = ends[min(need, len(ends)) - 1]
    return at, (f"queue {p.name} runs at most {quantity(p.max_running, 'job')} at once (max_run) "
                f"and runs {len(mine)}" + (f", {len(ahead)} waiting ahead" if ahead else "")
                + f": the job waits for {'one' if need == 1 else need} of them to end")


def _asked_soft_time(spec: JobSpec) -> int | None:
    """The hard `-l s_rt` a Grid Engine script asks (seconds; the last one, as qsub keeps
    it): a queue whose own s_rt is shorter takes no such job. None: none asked, or a value
    that is no time (INFINITY)."""
    asked = [d.value for d in spec.unknown if d.dialect == "sge" and d.option == "-l s_rt"
             and d.value]
    return sge_time(asked[-1].partition("=")[2].strip()) if asked else None


def _soft_limit(p: Partition | None) -> float | None:
    """When a Grid Engine queue's s_rt ends a job: s_rt, then its notify time (the
    default 60 s where not read); None without an s_rt."""
    if p is None or p.soft_time_s is None:
        return None
    return float(p.soft_time_s + (p.notify_s if p.notify_s is not None else 60))


def _sched_tier(p: Partition) -> int | None:
    """The tier the scheduler takes a partition's waiting jobs by: Slurm's PriorityTier,
    a PBS queue's Priority."""
    return p.priority_tier if p.priority_tier is not None else p.queue_priority


def _tier_of(partition: str | None, tiers: dict[str, int]) -> float:
    """The PriorityTier a waiting job is scheduled by: its partition's (of a list, the
    highest); unknown: first (it is never put behind the probe)."""
    known = [tiers[x] for x in (partition or "").split(",") if x in tiers]
    return max(known) if known else float("inf")


def _longest_limit(st: SimState, queue: list[Demand], short: Demand, early: float,
                   full: float, reservation: Reservation, at: int | None) -> float:
    """The time limit Slurm's backfill gives a `--time-min` job it starts at `early` with
    a lowered limit: the longest (to the minute, below its full limit `full`) with which
    it still starts then; `short` is the job at its --time-min."""
    lo, hi = short.duration, full  # lo starts it at `early`; hi does not
    while hi - lo > 60:
        mid = lo + (hi - lo) // 120 * 60 or lo + 60
        got = earliest_start(st, queue, replace(short, duration=mid, done=False, start=None,
                                                held=None), reservation=reservation,
                             probe_at=at)
        if got is not None and got <= early:
            lo = mid
        else:
            hi = mid
    return lo


def _own_estimate(estimates: dict[str, datetime], site: str, partition: str
                  ) -> datetime | None:
    """The scheduler's own start estimate for this job in `partition`, else at `site`."""
    return estimates.get(f"{site}:{partition}") or estimates.get(site)


def _estimate(v: SiteVerdict, reqs: dict[str, Req], spec: JobSpec, cfg: SiteConfig,
              snap: SiteSnapshot, nodes: list[Node], members: dict[str, list[str]],
              good: list[Partition], fits: dict[str, set[str]], default: str | None,
              now: datetime, stage_bytes: int, prior: RuntimePrior,
              estimates: dict[str, datetime], cal: SiteCalibration | None = None,
              data: StageData | None = None, ended: Collection[str] = (),
              holds: dict[str, list[Wait]] | None = None, chunks: tuple | None = None,
              queue_fits: dict[str, QueueFit] | None = None,
              master_hosts: set[str] | None = None,
              master_said: str = "a host of its master queue") -> None:
    """The start, runtime, finish and cost of the job in the best of the `good`
    partitions (`reqs`: what it asks in each, `fits`: the usable nodes that can give it,
    `holds`: the limits in use it waits for in each, QOS or queue limits; `chunks`: a PBS
    job's chunks (`_pbs_chunks`), which start when every one finds room at once;
    `queue_fits`: the Grid Engine queues whose instances have too little of a consumable
    left now, the hosts held until running jobs there give enough back; `master_hosts`:
    where a Grid Engine job's master task must run, `-masterq` or the hosts holding its
    JOB consumables, its other slots on any of the partition's hosts, `master_said`)."""
    words = words_of(cfg.scheduler, cfg.flavor)
    part_max = {p.name: float(p.max_time_s) for p in snap.partitions if p.max_time_s}
    own_only = _exclusive_kind(spec) in ("user", "mcs") and cfg.scheduler == "slurm"
    spreads = _spreads(cfg, spec)
    task_mem = min(_task_memory(reqs[p.name], spreads) for p in good)
    rooms = {n.name: room for n in nodes
             if (room := memory_room(n, spreads, reqs[good[0].name])) is not None}
    # a spread job's tasks each node's free memory holds now (where the snapshot says)
    task_fit = (reqs[good[0].name].cpt, reqs[good[0].name].gpt,
                {h: free // task_mem for h, (free, _) in rooms.items() if free is not None}
                ) if task_mem else None
    host_short = set.intersection(*(consumables_short(_one_node(reqs[p.name], spreads), nodes)
                                    for p in good))
    views: dict[frozenset[str], tuple] = {}

    def views_for(name: str) -> tuple:
        """The live state, the queue, the calibrated view and the queue it was made of in
        which partition `name` is simulated: its queue instances short of a consumable
        held (one for all the partitions where none is)."""
        qf = (queue_fits or {}).get(name)
        short = host_short | (qf.short if qf else set())
        until = {h: j for h, j in (qf.until if qf else {}).items() if h not in host_short}
        key = frozenset([*short, *(f"{h}={j}" for h, j in until.items())])
        if key not in views:
            st = build_state(snap, nodes, members, now, part_max, ended=ended,
                             in_reservation=bool(spec.reservation),
                             probe_mem=min(_one_node(reqs[p.name], spreads).mem
                                           for p in good), short=short,
                             short_until=until, task_fit=task_fit)
            pending = queue = pending_demands(snap, st, members, now, part_max)
            calibrated = calibrated_view(st, queue, cal)
            if calibrated is not None and any(d.sched and d.now_ok for d in queue):
                # the scheduler's estimates were planned from walltimes: a job waiting only
                # for priority or resources starts no later than the calibrated plan has it
                # (running jobs ending early), in the room that opens, before any probe
                # behind it; held to its estimate, the walltime plan would leave that room
                # to the probe
                queue = held_no_later(queue, queue_starts(*calibrated, reservation,
                                                          until=hold_horizon(queue)))
            views[key] = (st, queue, calibrated, pending)
        return views[key]

    reservation = snap.backfill or reservation_for(cfg.scheduler)
    raw_st, raw_queue, calibrated, _ = views_for(good[0].name)
    idx = raw_st.index()
    # Grid Engine (urgency weighed in, as by default) puts a job asking more slots ahead
    by_slots = (snap.queue_order or ("slots" if cfg.scheduler == "sge" else "submit")) \
        == "slots"
    # a start time holds the job on every scheduler (sbatch --begin, qsub -a, bsub -b, flux
    # --begin-time; a day of the month without its month at its own scheduler's sites); a
    # --deadline is Slurm's alone
    begin, deadline = job_window(spec, now, cfg.scheduler)
    deadline = deadline if cfg.scheduler == "slurm" else None
    begin_s = max(0.0, (begin - now).total_seconds()) if begin is not None else 0.0
    if begin_s > 0:
        said = "--begin" if cfg.scheduler == "slurm" else "begin time"
        v.notes.append(f"{said} {begin:%Y-%m-%d %H:%M}: it starts no sooner (+{hms(begin_s)})")
    if spec.hold:  # submitted held: no scheduler starts it before it is released
        v.not_checked.append(_held_said(cfg.scheduler))
    # Grid Engine global consumables: it starts once enough of each is left
    held_s, said_global = global_wait(reqs[good[0].name], snap, now, part_max)
    v.notes += said_global
    begin_s = max(begin_s, held_s)
    # Slurm PriorityTier (PBS queue Priority) by partition, where the partitions differ in
    # it: the jobs waiting in a higher tier go first, those of a lower one after the probe
    tiers = {p.name: t for p in snap.partitions if (t := _sched_tier(p)) is not None}
    tiers = tiers if len(set(tiers.values())) > 1 else {}
    best: tuple[float, int, int, str, str, float, str] | None = None
    waiting: dict[str, list[str]] = {}  # the limits in use it waits for, by partition
    simulators: dict[str, Callable[..., float]] = {}
    probes: dict[str, Demand] = {}  # the job as each partition's simulation places it
    lowered: dict[str, float] = {}  # the time limit --time-min lowers it to, by partition
    site_arch = metadata_arch(cfg.metadata.get("architecture"))
    # Slurm's bf_max_job_user reached by the user's jobs waiting: its backfill passes
    # the job over, which then starts only in priority order
    mine_waiting = _backfill_passes_over(cfg, snap)
    # the waiting jobs Slurm's backfill keeps no slot for (QOS NoReserve,
    # bf_min_prio_reserve, bf_min_age_reserve): they wait behind the job's slot
    unreserved = unreserved_jobs(snap, now) if cfg.scheduler == "slurm" \
        and reservation != "fifo" else {}
    fifo_ahead: dict[str, int] = {}  # no backfill: the jobs ahead in each partition
    for order, p in enumerate(good):
        req, fit = reqs[p.name], fits[p.name]
        raw_st, raw_queue, calibrated, _ = views_for(p.name)
        counted, brackets = counted_parts(req), bracket_parts(req)
        elig = [idx[x] for x in members.get(p.name, []) if x in fit
                and (len(req.nodelist) < req.nodes or x in req.nodelist)]
        dur = time_limit(req, p.max_time_s) or part_max.get(p.name) or DEFAULT_RUNTIME_S

        # a job sharing nodes with its user's jobs only (--exclusive=user, or a partition
        # of ExclusiveUser=YES): an empty node when none is free
        user_only = own_only or (p.exclusive_user and cfg.scheduler == "slurm")
        probe = Demand(req.nodes, WHOLE if req.whole or user_only else req.cpn, req.gpn, dur,
                       elig, not_before=begin_s)
        # what some of its nodes must meet together: `a100*2` (so many of them with a100:
        # it waits for those too) and `[a|b]` (all of them a, or all b: the earliest of
        # either); each simulated alone, the job starts no sooner than all of them allow
        groups = [[Demand(c.count or 1, probe.cpus, probe.gpus, dur, with_it,
                          not_before=begin_s)]
                  for c in counted if (with_it := _meeting(c, elig, nodes, idx, site_arch))]
        groups += [[Demand(req.nodes, probe.cpus, probe.gpus, dur, with_it, not_before=begin_s)
                    for alt in c.items if (with_it := _meeting(alt, elig, nodes, idx,
                                                               site_arch))]
                   for c in brackets]
        contiguous = cfg.scheduler == "slurm" and req.nodes > 1 and asks_contiguous(spec)
        if contiguous and not snap.nodes:  # the nodes made up from the partitions' lists
            said = (f"partition {p.name}: --contiguous: not checked, scontrol show node "
                    "listed no nodes (Slurm's node order is not known): the start is planned "
                    "as if any of its nodes would do")
            if said not in v.not_checked:
                v.not_checked.append(said)
        elif contiguous:
            # --contiguous: each run of adjacent nodes apart, the earliest of them
            runs = contiguous_runs(elig, req.nodes)
            if len(runs) <= MAX_CONTIGUOUS_RUNS:
                groups.append([Demand(req.nodes, probe.cpus, probe.gpus, dur, run,
                                      not_before=begin_s) for run in runs])
                said = (f"partition {p.name}: --contiguous: its {req.nodes} nodes must be "
                        "adjacent in Slurm's node order (as scontrol show node lists them): "
                        + (f"{quantity(len(runs), 'run')} of them can run it, each planned "
                           "apart, the earliest taken" if runs else
                           f"no {req.nodes} of those it may use are adjacent (down, drained "
                           "or other partitions' nodes between them): it does not start "
                           "there until some are"))
            else:
                said = (f"partition {p.name}: --contiguous: {len(runs)} runs of "
                        f"{req.nodes} adjacent nodes, too many to plan each: the start is "
                        "planned as if any of its nodes would do")
            if said not in v.notes:
                (v.notes if len(runs) <= MAX_CONTIGUOUS_RUNS else v.not_checked).append(said)
        # a PBS job's chunks, each on the nodes of the queue that can hold one of it: the
        # probe above asks the least any chunk asks; they start when all find room at once
        shapes = [Shape(r.nodes, r.cpn, r.gpn, frozenset(i for i in elig
                                                         if nodes[i].name in ok), own)
                  for (r, ok), own in zip(chunks[0], chunks[4], strict=True)] \
            if chunks is not None else []
        if not shapes and master_hosts is not None and req.nodes > 1:
            # -masterq: one host of the master queue for the master task's share, the
            # others anywhere its other slots may go, each host its own share
            each = WHOLE if req.whole else req.cpn
            shapes = [Shape(1, each, req.gpn, frozenset(
                i for i in elig if nodes[i].name in master_hosts)),
                Shape(req.nodes - 1, each, req.gpn, frozenset(elig))]
        if not shapes and req.nodelist and len(req.nodelist) < req.nodes:
            # --nodelist names fewer nodes than it asks: those, and others beside them
            named = frozenset(idx[x] for x in req.nodelist if x in idx)
            each = WHOLE if req.whole or user_only else req.cpn
            shapes = [Shape(len(named), each, req.gpn, named),
                      Shape(req.nodes - len(named), each, req.gpn, frozenset(elig) - named)]

        if _spread(req, spreads) and not (user_only or groups or shapes):
            # tasks without a node count: as many on each node as it has room for, on at
            # most the partition's node limit
            probe = replace(probe, nodes=min(req.free_tasks, p.max_nodes or req.free_tasks),
                            cpus=req.cpt, gpus=req.gpt, spread=req.free_tasks,
                            most={idx[h]: total // task_mem for h, (_, total) in rooms.items()}
                            if task_mem else None)

        # PBS backfill_depth (the queue's, else the server's): 0 turns backfilling off
        # (whatever fits starts, in priority order); N protects the first N blocked jobs
        depth = p.backfill_depth if cfg.scheduler == "pbs" and reservation == "easy" else None
        res: Reservation = "none" if depth == 0 else reservation
        # a queue's own depth counts the top jobs among its own jobs; the server's, those
        # of the queues without one, together
        top_by = {q.name: q.backfill_depth for q in snap.partitions
                  if q.backfill_depth_own and q.backfill_depth is not None} \
            if depth is not None and res == "easy" else {}
        shared = next((q.backfill_depth for q in snap.partitions if not q.backfill_depth_own
                       and q.backfill_depth is not None and q.routes_to is None), 1) \
            if top_by else depth
        top = shared if shared is not None and shared > 1 else 1
        if top_by:  # the probe counts among its queue's jobs, where that has its own
            probe = replace(probe, partition=p.name)
        if depth is not None and depth != 1:
            said = (f"queue {p.name}: backfill_depth {depth}: " + (
                "backfilling is off, a job starts only where it fits at once" if depth == 0
                else f"backfilling delays none of the first {depth} waiting jobs"
                + (" of this queue (its own depth)" if p.name in top_by else "")))
            if said not in v.notes:
                v.notes.append(said)

        fair = fair_share_view(p, snap) if cfg.scheduler == "lsf" else None
        if fair is not None and (said := fair.note()) and said not in v.notes:
            v.notes.append(said)
        # Slurm multifactor: the new job's own priority among the waiting jobs
        ranked, unread = priority_view(p, snap, spec, req) if cfg.scheduler == "slurm" \
            else (None, [])
        v.not_checked += [u for u in unread if u not in v.not_checked]

        # preempt/qos: the running jobs the job's QOS preempts (by native id)
        under = job_qos(spec.qos, p, snap, spec.account or cfg.default_account)[0]
        if cfg.scheduler == "slurm" and reservation != "fifo" and (why := own_unreserved(
                snap, under, ranked.priority if ranked is not None else None)):
            said = (f"partition {p.name}: {OWN_UNRESERVED_SAID} ({why}): it starts where "
                    "it delays no job that keeps one, and jobs behind it may start first and "
                    "delay it, so the start said is its earliest")
            if said not in v.notes:
                v.notes.append(said)
        part_waiting = partition_passes_over(cfg, snap, p.name,
                                             ranked.lower if ranked is not None else None)
        user_part_waiting = user_partition_passes_over(
            cfg, snap, p.name, ranked.lower if ranked is not None else None)
        site_waiting = site_passes_over(cfg, snap, ranked.lower if ranked is not None else None)
        by_qos = qos_victims(under, snap)
        if by_qos and (said := _qos_preempts_said(under, by_qos, snap)) not in v.notes:
            v.notes.append(said)

        def simulate(st: SimState, queue: list[Demand], probe: Demand = probe,
                     name: str = p.name, groups: list[list[Demand]] = groups,
                     req: Req = req, tier: int | None = _sched_tier(p),
                     shapes: list[Shape] = shapes,
                     victims: frozenset[str] = _preempts(p, snap, members),
                     suspended: frozenset[str] = frozenset(h for hs in _suspended_hold(
                         snap, _preempts(p, snap, members), req.mem).values() for h in hs),
                     res: Reservation = res, top: int = top,
                     top_by: dict[str, int] = top_by,
                     fair: FairShareView | None = fair,
                     ranked: PriorityView | None = ranked,
                     by_qos: dict[str, float] = by_qos,
                     part_waiting: set[str] | None = part_waiting,
                     user_part_waiting: set[str] | None = user_part_waiting,
                     site_waiting: set[str] | None = site_waiting) -> float:
            if victims or by_qos:  # the running jobs it preempts give their nodes (after
                # GraceTime)
                st = preempted(st, victims, held=suspended,
                               grace=preemption_delays(victims, snap),
                               exempt=snap.preempt_exempt_s or 0.0, jobs=by_qos)
            if tier is not None and tiers:  # a higher PriorityTier (queue Priority) first
                queue = sorted((d for d in queue if _tier_of(d.partition, tiers) >= tier),
                               key=lambda d: -_tier_of(d.partition, tiers))
            if mine_waiting is not None and (tested := _backfill_tests_from(
                    st, queue, name, res, top, mine_waiting, snap)) > probe.not_before:
                if not any(n.startswith(f"partition {name}: Slurm's backfill tests") for n in
                           v.notes):  # the first (walltime) view's
                    v.notes.append(
                        f"partition {name}: Slurm's backfill tests at most "
                        f"{snap.bf_max_job_user} waiting jobs of a user (bf_max_job_user) and "
                        f"{len(mine_waiting)} of yours wait: it passes the job over until "
                        f"enough of them have started, or the jobs waiting ahead in partition "
                        f"{name} have (in priority order): +{hms(tested)}")
                probe = replace(probe, not_before=tested)
            for waiting, cap, of, ahead in (
                    (part_waiting, snap.bf_max_job_part, "a partition (bf_max_job_part)",
                     f"wait ahead of it in {name}"),
                    (user_part_waiting, snap.bf_max_job_user_part,
                     "a user in a partition (bf_max_job_user_part)",
                     f"of yours wait ahead of it in {name}"),
                    (site_waiting, snap.bf_max_job_test, "the site (bf_max_job_test)",
                     "wait ahead of it")):
                if waiting is None or (tested := _backfill_tests_from(
                        st, queue, name, res, top, waiting, snap, cap=cap)) <= probe.not_before:
                    continue
                said = f"partition {name}: Slurm's backfill tests at most {cap} waiting jobs " \
                    f"of {of}"
                if not any(n.startswith(said) for n in v.notes):  # the first view's
                    v.notes.append(f"{said} and {len(waiting)} {ahead}: it passes the job "
                                   "over until enough of them have started (in priority "
                                   f"order): +{hms(tested)}")
                probe = replace(probe, not_before=tested)
            at = slots_position(queue, req.nodes * max(req.cpn, 1), st.cap_c) \
                if by_slots else None
            if fair is not None:  # LSF fair share: lower priorities wait behind it
                queue, at = fair.order(queue)
            elif ranked is not None:  # Slurm multifactor: lower priorities wait behind it
                if queue and not any(n.startswith(f"partition {name}: your job's priority")
                                     for n in v.notes):  # the first (walltime) view's
                    v.notes.append(ranked.note(queue, tiers, tier))
                queue, at = ranked.order(queue, tiers, tier)
            if unreserved:  # those ahead that keep no slot go behind its slot
                before = queue[:len(queue) if at is None else at]
                queue, at = behind_unreserved(queue, at, unreserved)
                moved = [d.native_id for d in before if d.native_id in unreserved]
                if moved and not any(n.startswith(f"partition {name}: "
                                                  f"{UNRESERVED_AHEAD_SAID}") for n in v.notes):
                    whys = sorted({unreserved[x] for x in moved if x})
                    v.notes.append(
                        f"partition {name}: {UNRESERVED_AHEAD_SAID} "
                        f"{quantity(len(set(moved)), 'waiting job')} ahead ("
                        + "; ".join(whys) + "): they start only where they delay no job "
                        "that keeps one, so the job is planned before them")
            if res == "fifo" and name not in fifo_ahead:  # the first (walltime) view's
                fifo_ahead[name] = fifo_jobs_ahead(st, queue if at is None else queue[:at],
                                                   probe)
            start = earliest_start(st, queue, probe, reservation=res, probe_at=at, top=top,
                                   top_by=top_by or None)
            if probe.spread and start is not None and len(probe.shares or ()) > 1 and not any(
                    n.startswith(SPREAD_NOTE_START) and f", {words.where(name)}," in n
                    for n in v.notes):  # over several nodes; the first (walltime) view's
                hosts = [st.names[n] for n in sorted(probe.shares or ())] if task_mem else []
                unknown = [h for h in hosts if h not in rooms]
                unheld = [h for h in hosts if h in rooms and rooms[h][0] is None]
                v.notes.append(f"{SPREAD_NOTE_START}{spread_words(probe, st.names)}, "
                               f"{words.where(name)}, at +{hms(start)} (no node count "
                               "asked: its tasks go wherever room is" + (
                                   f"; memory unknown on {', '.join(unknown)}: its tasks "
                                   "there counted by CPUs alone" if unknown else "") + (
                                   f"; allocated memory unknown on {', '.join(unheld)}: its "
                                   "tasks there counted by CPUs and the node's whole memory"
                                   if unheld else "") + ")")
            if req.time_min is not None and req.time_min < probe.duration:
                # --time-min: Slurm lowers the time limit, to no less than it, where that
                # lets the job start sooner (a backfill gap shorter than its full limit)
                short = replace(probe, duration=float(req.time_min), limit=None, done=False,
                                start=None, held=None)
                early = earliest_start(st, queue, short, reservation=res,
                                       probe_at=at, top=top, top_by=top_by or None)
                if early is not None and (start is None or early < start):
                    if name not in lowered:  # the first (walltime) view's: Slurm's plan
                        lowered[name] = _longest_limit(st, queue, short, early,
                                                       probe.duration, res, at)
                    said = (f"partition {name}: {req.time_min_name} {hms(req.time_min)}: "
                            f"{'PBS Pro' if req.time_min_name == 'min_walltime' else 'Slurm'} "
                            "lowers its time limit (to no less than that) to start it at "
                            f"+{hms(early)}, sooner than its full limit lets it"
                            + (f" (+{hms(start)})" if start is not None else "")
                            + f": to {hms(lowered[name])}, the longest that starts it then")
                    if said not in v.notes:
                        v.notes.append(said)
                    start = early
            for group in groups:
                starts = [x for d in group if (x := earliest_start(
                    st, queue, d, reservation=res, probe_at=at, top=top,
                    top_by=top_by or None)) is not None]
                start = None if start is None or not starts else max(start, min(starts))
            if start is not None and shapes:
                how = chunks[1] if chunks else "scatter" if master_hosts is not None \
                    else "free"  # -masterq: the master's host and the others apart
                at_once, by_queue = together_start(
                    st, shapes, start, how, empty_only=req.whole,
                    held=queue_held(st, queue, res, at, top), duration=probe.planned,
                    reservation=res, top=top)
                ahead = ", leaving the queued jobs ahead their room" if by_queue else ""
                part = "term" if chunks and chunks[1] == "terms" else "chunk"
                said = f"{words.where(name)}: its {part}s find room all at once{ahead} at " \
                    f"+{hms(at_once or 0)} (alone, each {part} finds it sooner)" if chunks \
                    else f"queue {name}: {master_said} finds room with the " \
                    f"others it asks{ahead} at +{hms(at_once or 0)}" \
                    if master_hosts is not None \
                    else f"partition {name}: the nodes --nodelist names find room with " \
                    f"the others it asks{ahead} at +{hms(at_once or 0)}"
                if at_once is not None and at_once > start and said not in v.notes:
                    v.notes.append(said)
                start = at_once
            if start is None:
                v.notes.append(f"{words.where(name)}: simulation found no start")
                return HORIZON_S
            return start
        simulators[p.name] = simulate
        probes[p.name] = probe
        victims = _preempts(p, snap, members)
        # the partitions preempted whose jobs run now on p's nodes the job could use (only
        # those are said: not those on nodes of a GPU kind or feature it did not ask)
        could_use = fit & set(members.get(p.name, []))
        if (on_counted := counted_nodes(req, nodes, site_arch))[1]:
            could_use &= set().union(*on_counted[0])
        if victims and (running_victims := {
                j.partition for j in snap.running if j.partition in victims
                and set(job_hosts(j.node_list)) & could_use}):
            modes = sorted({(q.name, (q.preempt_mode or "").upper(), q.tier)
                            for q in snap.partitions if q.name in running_victims})
            v.notes.append(f"partition {p.name}: its jobs preempt the running jobs of "
                           + ", ".join(f"partition {n} (PreemptMode={m}, PriorityTier {t})"
                                       for n, m, t in modes)
                           + f" on its nodes (its PriorityTier {p.priority_tier}): they count "
                           "as free" + _preemption_delay_said(running_victims, snap))
            for q, held in _suspended_hold(snap, running_victims, req.mem).items():
                if not (hosts := [h for h in held if h in could_use]):
                    continue
                mode = next((x.preempt_mode or "").upper() for x in snap.partitions
                            if x.name == q)
                v.notes.append(f"partition {p.name}: the jobs of partition {q} are suspended, "
                               f"not ended (PreemptMode={mode}): they keep their memory on "
                               f"{', '.join(hosts)}, which leaves less than the job's "
                               f"{req.mem} MB a node there: it waits for them to end")
        if (off := preemption_off_note(p, snap, members)) and off not in v.notes:
            v.notes.append(off)
        est = _own_estimate(estimates, cfg.name, p.name)
        if est is not None:
            raw, source = max(0.0, (aware(est) - now).total_seconds()), "scheduler"
        else:
            raw = simulate(raw_st, raw_queue)
            es = set(elig)
            sched = any(d.sched and es.intersection(d.eligible) for d in raw_queue)
            source = "scheduler" if sched else "simulation"
        start, raw_source = raw, source
        if calibrated is not None:
            # the scheduler plans with walltimes: what its plan starts (backfills) by then
            # starts by then, however early the running jobs end (so a start now stays)
            start = min(simulate(*calibrated), raw) if raw > 0 else 0.0
            source = "calibrated"
        waiting[p.name] = []
        if (full := _queue_full(p, snap, now, part_max)) is not None:
            floor, why = full  # the queue runs no more jobs at once until one ends
            raw, start = max(raw, floor), max(start, floor)
            v.notes.append(why)
            waiting[p.name].append(why)
        force = force_share(p, asked=cfg.scheduler == "slurm" and _asks_to_share(spec))
        by_force = shares_by_force(p)
        if (force or user_only) and raw > 0 and (room := contiguous_room(shared_room_now(
                req, [n for n in nodes if n.name in fit and n.name in members.get(p.name, [])
                      and (len(req.nodelist) < req.nodes or n.name in req.nodelist)],
                snap, force=force, own_only=user_only, every_job_shares=by_force),
                req.nodes, idx if contiguous and snap.nodes else None)):
            raw = start = 0.0  # CPUs shared by force, or nodes only the user's jobs use
            v.notes.append(f"partition {p.name}: it starts now on {_few(set(room))}, "
                           + (f"sharing CPUs with the jobs there (OverSubscribe=FORCE:{force}"
                              ", time-sliced or oversubscribed)" if force and by_force else
                              f"sharing CPUs with the jobs there that share theirs "
                              f"(OverSubscribe=YES:{force} and --oversubscribe)" if force else
                              "whose running jobs are all yours ("
                              + ("--exclusive=user)" if own_only else
                                 f"partition {p.name} is ExclusiveUser=YES)")))
        for held in (holds or {}).get(p.name, []):
            raw, start = max(raw, held.seconds), max(start, held.seconds)
            where = words.where(p.name)  # not said twice where the reason names it first
            v.notes.append(held.why if held.why.startswith((f"{where} ", f"{where}'s "))
                           else f"{where}: {held.why}")
            waiting[p.name].append(held.why)
        if cfg.scheduler == "slurm" and reservation != "fifo" and est is None \
                and (grid := snap.bf_resolution_s) and raw > 0 \
                and on_resolution(start, now, grid) > start:
            # the backfill keeps its plan's times on a grid of bf_resolution seconds
            raw, start = on_resolution(raw, now, grid), on_resolution(start, now, grid)
            v.notes.append(f"partition {p.name}: Slurm's backfill plans starts and ends on a "
                           f"grid of {hms(grid)} (bf_resolution={grid}): the start "
                           f"rounds up to +{hms(start)}")
        cand = (start, p.name != default, order, p.name, source, raw, raw_source)
        best = cand if best is None or cand < best else best
    assert best is not None
    start_s, _, _, pname, source, raw_s, raw_source = best
    if raw_s <= 0:  # a job that starts now needs no slot in the backfill plan, nor
        # goes before the jobs that keep none
        v.notes = [n for n in v.notes if OWN_UNRESERVED_SAID not in n
                   and UNRESERVED_AHEAD_SAID not in n]
    v.waits_for = waiting.get(pname, [])
    req, fit = reqs[pname], fits[pname]
    raw_st, raw_queue, calibrated, pending = views_for(pname)
    if raw_st.suspended:
        v.notes.extend(n for n in _suspended_notes(pname, raw_st, snap, members.get(pname, []),
                                                   raw_s) if n not in v.notes)
    if any(j.reason for j in snap.pending) and (
            cfg.scheduler == "slurm" or any(_waits_on_dependency(j) for j in snap.pending)):
        # (the other schedulers' jobs: those waiting on a dependency; the rest is Slurm's)
        v.notes.extend(n for n in _waiting_notes(pname, snap, members, raw_s, now,
                                                 raw_queue, raw_st, reservation,
                                                 None if cfg.scheduler == "slurm"
                                                 else words.where(pname))
                       if n not in v.notes)
    if raw_s <= 0 or reservation == "fifo":  # no backfill window to be past
        v.not_checked = [n for n in v.not_checked
                         if n not in (_bf_window_unreported(snap),
                                      _scheduler_type_unreported(snap))]
    if pname in fifo_ahead:
        v.notes.append(f"{NO_BACKFILL_NOTE_START} (SchedulerType=sched/builtin): it starts "
                       f"after the {fifo_ahead[pname]} jobs ahead of it in partition {pname}, "
                       "in priority order; no job passes one waiting ahead")
    if cfg.scheduler == "slurm" and snap.bf_window_s and raw_s > snap.bf_window_s \
            and reservation != "fifo":
        v.notes.append(f"partition {pname}: the start, +{hms(raw_s)}, is past Slurm's backfill "
                       f"window (bf_window {snap.bf_window_s / 60:.0f} min): the backfill keeps "
                       "no slot for the job until then, so a job that fits now may start "
                       "before it and delay it")
    bound_s: float | None = None
    if calibrated is not None:  # the bound of the chosen partition only (a simulation each)
        upper = calibrated_view(raw_st, pending, cal, bound=True) if raw_s > 0 else None
        bound_s = min(simulators[pname](*upper), raw_s) if upper is not None else 0.0
        bound_s = max(bound_s, start_s)
    w = cal.wait.ratio(pname, req.nodes * (req.cpn or 1), max(raw_s, WAIT_FLOOR_S)) \
        if cal is not None and cal.wait is not None else None
    if w is not None:
        v.wait_ratio, v.wait_samples, v.wait_class = w.median, w.samples, w.key
        # this scheduler's estimates, as they turned out here: for its estimate of this
        # job, or a simulation that followed its estimates for the queue where no
        # runtimes calibrate one (a calibrated simulation does not follow them, and the
        # ratio of other jobs' estimates says nothing of it)
        own = _own_estimate(estimates, cfg.name, pname) is not None
        if raw_source == "scheduler" and (own or calibrated is None):
            start_s, source = raw_s * w.median, "calibrated"
            v.notes.append(wait_basis(raw_s, w))
            ups = [u for u in (bound_s, raw_s * w.upper if w.bounded else None) if u is not None]
            bound_s = max(*ups, start_s) if ups else None  # no bound without enough samples
    own = cal.own if cal is not None else None
    # the user's own recent jobs here waited longer (or, every one of them, shorter) than
    # this model predicted for them: their start and its bound move by that
    # (`OwnError.engine_ratio`, replayed on every kept run: benchmarks/README.md); from
    # fewer jobs than a ratio needs, by their seconds (`calibration.own_error`)
    ratio = None if own is None else own.engine_ratio()
    if own is not None and (ratio is not None or own.ratio is None and own.shift_s is not None) \
            and not (start_s == 0 and not snap.pending):
        model_s, (start_s, bound_s) = start_s, own.applied(start_s, bound_s, ratio)
        v.own_samples, v.model_start = own.samples, plus_seconds(now, model_s)
        if ratio is not None:
            v.own_wait_ratio = ratio
            v.notes.append(f"your {own.samples} recent jobs here waited {ratio:.2g}x what "
                           f"was predicted: start {hms(model_s)} -> {hms(start_s)}")
        else:
            v.own_shift_s = own.shift_s
            v.notes.append(_own_shift_note(own.shift_s, own.samples)
                           + f": start {hms(model_s)} -> {hms(start_s)}")
    queued_s = cal.own_queued_ahead_s(req.nodes * (req.cpn or 1)) if cal is not None else None
    if queued_s is not None and snap.pending and start_s < OWN_QUEUED_FACTOR * queued_s:
        # the user's own job of no larger size, queued here earlier, has not started: this
        # one queues behind it, and a wait already that long says the queue moves slowly
        # here (the view's plan and calibration missed what holds it)
        v.own_queued_s, floor_s = queued_s, OWN_QUEUED_FACTOR * queued_s
        v.notes.append(_own_queued_note(queued_s, start_s, floor_s))
        start_s = floor_s
        bound_s = None if bound_s is None else max(bound_s, floor_s)
    too_few: int | None = None  # the site's recent waits where too few to bound by
    if start_s == 0 and (not snap.pending or raw_s == 0 and not _could_take_room(
            raw_st, pending, fit)):
        # idle resources no waiting job can take first (none queued, or none fits the
        # room free now): the job starts now, whatever other jobs' waits were
        bound_s = 0.0 if bound_s is None else bound_s
    else:  # it may wait: as long as this site's recent jobs did, whatever the model says
        recent, drained = site_waits_and_drain(cal.queued if cal else None, snap.jobs, now,
                                               snap.user)
        cpus = req.nodes * (req.cpn or 1)
        similar = recent.similar_bound(pname, req.nodes, cpus)
        waited = (similar.seconds, similar.samples) if similar else recent.bound(pname, cpus)
        v.bound_class = similar.of if similar else "every size" if waited else None
        of = f" of {v.bound_class}" if waited else ""
        # a calibrated site (the engine calibrates every one from its accounting) with too
        # few recent waits for 95% confidence: the conformal bound, said so; with too few
        # for any, why there is none from them
        few = recent.few_bound() if waited is None and cal is not None else None
        if few is not None:
            waited, v.bound_class = few, FEW_WAITS_CLASS
            of = f" of every size ({_few_waits_words(few[1])})"
        elif waited is None and cal is not None:
            too_few = recent.count
        if cal is not None and cal.recent_cap and source == "calibrated":
            part = pname.split(",")[0]
            start_s = capped_by_waits(start_s, waited, sum(
                1 for j in snap.pending if (j.partition or "").split(",")[0] == part),
                queue_when_waited(recent.waits, pname))
        if waited is not None and waited[0] > (start_s if bound_s is None else bound_s):
            bound_s = waited[0]
            v.notes.append(f"{BOUND_NOTE_START}{hms(bound_s)}: the waits of "
                           f"{quantity(waited[1], 'job')}{of} here recently")
        # behind the user's own waiting jobs: as long as those take to start at the rate
        # this site has been starting theirs (per-user limits, fair share)
        if drained is not None and drained[0] > (start_s if bound_s is None else bound_s):
            bound_s = drained[0]
            v.notes.append(f"{BOUND_NOTE_START}{hms(bound_s)}: your jobs queued ahead, at the "
                           f"rate {drained[1]} of yours started here lately")
        if bound_s is None and waited is not None:  # the waits end before the start
            bound_s = start_s
            v.notes.append(f"{BOUND_NOTE_START}{hms(bound_s)}, the start: the waits of "
                           f"{quantity(waited[1], 'job')}{of} here recently (90% within "
                           f"{hms(waited[0])}) end before it")
    if bound_s is not None:  # a bound is never before the start
        bound_s = max(bound_s, start_s)
    if too_few is not None:
        v.notes.append(_no_waits_bound_note(too_few, bound_s is not None))
    v.raw_start = plus_seconds(now, raw_s)
    v.start_bound = None if bound_s is None else plus_seconds(now, bound_s)
    if cal is not None:
        r = cal.ratio(pname, req.nodes * (req.cpn or 1))
        v.calibration_samples = r.samples if r else 0
        v.calibration_class = r.key if r else None
        v.calibration_borrowed = r is not None and cal.borrows
        if v.calibration_borrowed:
            v.notes.append(_borrowed_note(v))
        elif r is not None and cal.ratios_of:
            v.notes.append(f"its runtimes rest on {quantity(r.samples, 'job')} of {cal.ratios_of} "
                           f"({r.key}), the same cluster: too few jobs finished through "
                           "this door to calibrate its queue")
    max_time = next((p.max_time_s for p in good if p.name == pname), None)
    # a job that gives no time limit runs until the partition's MaxTime at most
    limit = time_limit(req, max_time) or (max_time if not req.walltime else None)
    soft = _soft_limit(next((p for p in good if p.name == pname), None))
    if soft is not None and (limit is None or soft < limit):
        limit = soft  # Grid Engine's s_rt (and notify) ends it first
    runtime = prior.runtime_s(req.walltime) / (cfg.speed_factor or 1.0)
    cut_to = lowered.get(pname)  # the plan starts it sooner with that limit, ended there
    if cut_to is not None and (limit is None or cut_to < limit):
        limit = cut_to
    if limit and runtime > limit:
        given = "walltime" if req.walltime else \
            f"time limit partition {pname} gives a job that sets none"
        if req.walltime and limit < req.walltime and req.time_min is not None:
            given = f"the limit {words.where(pname)} cuts its walltime to"
        if cut_to is not None and limit == cut_to:
            given = f"time limit {req.time_min_name} lowers it to"
        v.notes.append(f"expected runtime {hms(runtime)} exceeds {given} "
                       f"{hms(limit)}: the job may time out")
        v.may_time_out = True
        runtime = float(limit)
    mbps = float(cfg.metadata.get("bandwidth_mbps") or DEFAULT_BANDWIDTH_MBPS)
    stage = stage_bytes * 8 / (mbps * 1e6)
    if data is not None:  # where the inputs are: data already on this site moves nothing
        for src, nbytes in data.sources.items():
            if src != cfg.name and nbytes:
                rate = data.bandwidth_mbps.get((src, cfg.name)) or mbps
                stage += nbytes * 8 / (rate * 1e6)
    sizes = [n for n in nodes if n.name in members.get(pname, []) and n.name in fit]
    if _task_spread(req, spreads):  # billed on the nodes that hold its share of a node
        sizes = [n for n in sizes if n.cpus >= req.cpn and n.gpus >= req.gpn
                 and (not n.memory_mb or n.memory_mb >= req.mem)] or sizes
    share = 1.0
    if not req.whole and sizes:
        small = min(sizes, key=lambda n: (n.cpus, n.gpus, n.memory_mb))
        share = min(1.0, max(req.cpn / small.cpus if small.cpus else 1.0,
                             req.gpn / small.gpus if small.gpus else 0.0,
                             req.mem / small.memory_mb if small.memory_mb else 0.0))
    chosen_p = next((p for p in good if p.name == pname), None)
    user_only = own_only or bool(chosen_p and chosen_p.exclusive_user
                                 and cfg.scheduler == "slurm")
    v._shape = (req.nodes, WHOLE if req.whole or user_only else req.cpn, req.gpn, frozenset(
        x for x in members.get(pname, []) if x in fit
        and (len(req.nodelist) < req.nodes or x in req.nodelist)))
    v._walltime_s = float(time_limit(req, chosen_p.max_time_s if chosen_p else None)
                          or DEFAULT_RUNTIME_S)
    if deadline is not None:  # sbatch --deadline: removed when it cannot end by then
        cut = req.time_min if req.time_min is not None and req.time_min < v._walltime_s \
            else None
        shortest = cut if cut is not None else v._walltime_s
        latest = (deadline - now).total_seconds() - shortest
        if raw_s > latest:
            v.reasons = [f"--deadline {deadline:%Y-%m-%d %H:%M}: the job can start at "
                         f"+{hms(raw_s)}, but with its "
                         + (f"--time-min {hms(shortest)}" if cut is not None else
                            f"time limit {hms(shortest)}")
                         + f" it must start by +{hms(max(0.0, latest))} to end by then: "
                         "Slurm removes a job that cannot (state DEADLINE)"]
            v.verdict, v.partition = "INCOMPATIBLE", None
            return
        ends = plus_seconds(now, raw_s + v._walltime_s)
        if ends > deadline:
            v.notes.append(f"--deadline {deadline:%Y-%m-%d %H:%M}: Slurm cuts its time limit "
                           f"to end by then ({hms((deadline - now).total_seconds() - raw_s)}"
                           f", at least its --time-min {hms(shortest)})")
        else:
            v.notes.append(f"--deadline {deadline:%Y-%m-%d %H:%M}: it must start by "
                           f"+{hms(latest)} (Slurm removes a job that cannot end by then)")
        start_s = min(start_s, max(latest, 0.0))
    resv_end = _reservation_end(spec, cfg, snap)
    if resv_end is not None:  # it must end by its reservation's end: start by then
        latest = (resv_end - now).total_seconds() - v._walltime_s
        if raw_s > latest:
            v.reasons = [f"its reservation {spec.reservation} ends at {resv_end:%Y-%m-%d %H:%M}"
                         f": the job can start at +{hms(raw_s)}, but with its time limit "
                         f"{hms(v._walltime_s)} it must start by +{hms(max(0.0, latest))}: "
                         f"{_RESV_END}"]
            v.verdict, v.partition = "INCOMPATIBLE", None
            return
        v.notes.append(f"reservation {spec.reservation} ends at {resv_end:%Y-%m-%d %H:%M}: "
                       f"the job must start by +{hms(latest)} to end inside it ({_RESV_END})")
        start_s = min(start_s, max(latest, 0.0))
    if cfg.scheduler == "sge":
        start_s, said = _scheduler_run(snap, start_s, _now_or_never(spec))
        v.notes += said
        if said and v.start_bound is not None:  # a bound is never before the start
            v.start_bound = max(v.start_bound, plus_seconds(now, start_s))
    v.feasible = True
    v.partition = pname or None
    v.verdict = "READY" if start_s <= READY_TOLERANCE_S else "BUSY"
    v.estimated_start = plus_seconds(now, start_s)
    v.start_source = source  # type: ignore[assignment]
    v.estimated_runtime_s = runtime
    v.stage_in_s = stage
    ready = now
    if data is not None and data.ready_at is not None and aware(data.ready_at) > now:
        ready = aware(data.ready_at)
        v.notes.append(f"its inputs are expected in {hms((ready - now).total_seconds())} "
                       f"(the steps it needs end then), and copied here in {hms(stage)}")
        v.inputs_at = plus_seconds(ready, stage)
    v.estimated_finish = plus_seconds(max(v.estimated_start, plus_seconds(ready, stage)), runtime)
    v.billed_nodes = req.nodes * share
    v.cost = v.billed_nodes * runtime / 3600 * cfg.charge_factor
    if spec.array is not None and pname in probes:
        _array_last_task(v, spec, simulators[pname], probes[pname], raw_st, raw_queue,
                         raw_s, now)


def _spreads(cfg: SiteConfig, spec: JobSpec) -> str:
    """The site's scheduler where tasks without a node count go wherever room is (Slurm;
    Grid Engine's $fill_up and $round_robin, read into tasks), else "": the probe is then
    so many tasks over any nodes (`Demand.spread`), and a host with room for one of them
    is not short."""
    return cfg.scheduler if cfg.scheduler in ("slurm", "sge") and spec.array is None else ""


def _spread(req: Req, spreads: str) -> bool:
    """Whether the job's tasks go over any nodes (`Req.free_tasks` on a site that `spreads`
    them), not on named or whole nodes."""
    return bool(spreads and req.free_tasks) and not (req.nodelist or req.whole)


def _one_node(req: Req, spreads: str) -> Req:
    """What a node must have room for to take part in the job: one task where its tasks may
    spread over any nodes (`_spread`), else its share of a node. Slurm's memory per node
    (`--mem`) is asked in full of each node however few tasks it holds (Grid Engine's is
    written per slot)."""
    if _spread(req, spreads):
        return replace(req, nodes=1, tpn=1, cpn=req.cpt, gpn=req.gpt,
                       mem=req.mem if req.mem_per_node and spreads == "slurm"
                       else req.mem // max(req.tpn, 1))
    return req


def _task_spread(req: Req, spreads: str) -> bool:
    """Whether a node takes part in the job if it holds one of its tasks: they go over any
    nodes (`_spread`), with no feature count or alternative that every node must meet."""
    return _spread(req, spreads) and not (counted_parts(req) or bracket_parts(req))


def _task_memory(req: Req, spreads: str) -> int:
    """The memory (MB) each task of a spread job asks of the node it runs on (`--mem-per-cpu`,
    Grid Engine's h_vmem per slot); 0 where none is asked a task (Slurm's `--mem`, asked in
    full of each node however few tasks it holds) or the tasks do not spread."""
    if not _spread(req, spreads) or (req.mem_per_node and spreads == "slurm"):
        return 0
    return _one_node(req, spreads).mem


def memory_room(node: Node, spreads: str, req: Req) -> tuple[int | None, int] | None:
    """A node's memory free now and in all (MB) as its scheduler counts it for the job:
    Slurm's RealMemory less AllocMem, Grid Engine's h_vmem consumable where the job asks
    h_vmem; None where the snapshot does not say; free now None where it gives the memory
    but not what its jobs hold (`Node.memory_allocated_unknown`)."""
    if not node.memory_mb:
        return None
    if spreads == "sge" and not (req.mem_complex == "h_vmem"
                                 and "h_vmem" in (node.consumables_left or {})):
        return None
    if node.memory_allocated_unknown and spreads == "slurm":
        return None, node.memory_mb
    return max(0, node.memory_mb - node.memory_allocated), node.memory_mb


def _array_last_task(v: SiteVerdict, spec: JobSpec, simulate: Callable[..., float],
                     probe: Demand, st: SimState, queue: list[Demand], raw_s: float,
                     now: datetime) -> None:
    """A job array's last task: its tasks run in lanes (`probe_lanes`: its `%k` throttle,
    the room its nodes hold), each lane's tasks back to back; the last lane is planned
    behind the queue and the others, and ends its tasks' expected runtimes after it
    starts (moved as the first task's start was from the plan's). Said in `notes` and
    `explain`; START and FINISH stay the first task's."""
    tasks = count_array_tasks(spec.array.expression) if spec.array else None
    if not tasks or tasks < 2 or v.estimated_start is None or not v.estimated_runtime_s:
        return
    throttle = spec.array.expression.partition("%")[2].strip() if spec.array else ""
    limit = int(throttle) if ascii_digits(throttle) and int(throttle) > 0 else None
    lanes = probe_lanes(st, probe, tasks, limit)
    first_s = (v.estimated_start - now).total_seconds()
    last_s = first_s
    if len(lanes) > 1:
        planned = simulate(st, [*queue, *lanes[:-1]], probe=lanes[-1])
        last_s = first_s + max(0.0, planned - raw_s)
    runtime = v.estimated_runtime_s
    ends_s = max(first_s + lanes[0].tasks * runtime, last_s + lanes[-1].tasks * runtime)
    width = len(lanes)
    why = f"its throttle %{limit}" if limit is not None and width == limit else \
        "no throttle" if width == tasks else "as many as its nodes hold together"
    v.notes.append(f"{ARRAY_NOTE_START}{tasks} tasks, at most {width} at a time ({why}): "
                   f"the first starts +{hms(first_s)}, the last ends +{hms(ends_s)}")
    if v.estimated_finish is not None:
        v._array_tail_s = max(0.0, ends_s - (v.estimated_finish - now).total_seconds())


def _cpus_cap_miss(req: Req, r: Resources, p: Partition, can_run: int, sockets: int = 0,
                   words: Words = SLURM_WORDS) -> str | None:
    """Why a partition's MaxCPUsPerNode (the CPUs a job may use on any of its nodes), or
    its MaxCPUsPerSocket times the sockets of its nodes (`sockets`, the most; 0: not
    known), rules the job out, else None. Tasks without a node count spread over more
    nodes, as Slurm spreads them, when enough of the partition's nodes can run them."""
    cap = p.max_cpus_per_node
    is_cap, at_cap = f"its MaxCPUsPerNode is {cap}", f"its MaxCPUsPerNode {cap}"
    if p.max_slots_per_host is not None and (cap is None or p.max_slots_per_host < cap):
        cap = p.max_slots_per_host  # LSF's HJOB_LIMIT: the queue's slots on one host
        is_cap, at_cap = f"its HJOB_LIMIT (JL/H) is {cap}", f"its HJOB_LIMIT (JL/H) {cap}"
    if p.max_cpus_per_socket is not None and sockets and (
            cap is None or p.max_cpus_per_socket * sockets < cap):
        cap = p.max_cpus_per_socket * sockets
        at_cap = f"its MaxCPUsPerSocket {p.max_cpus_per_socket} x {sockets} sockets"
        is_cap, at_cap = f"{at_cap} allows {cap}", f"{at_cap} ({cap} a node)"
    if cap is None or req.cpn <= cap:
        return None
    if r.tasks and r.nodes is None and not r.tasks_per_node and req.cpt <= cap:
        need = ceil(r.tasks / (cap // req.cpt))
        if need <= can_run and (p.max_nodes is None or need <= p.max_nodes):
            return None
        return (f"{words.where(p.name)}: needs {words.nodes(need)} at {at_cap} ({r.tasks} "
                f"{words.tasks} of {words.cpus_counted(req.cpt)}), has {can_run} that can run it")
    return f"{words.where(p.name)}: needs {req.cpn} {words.cpus} per {words.node}, {is_cap}"


def _pbs_group_key(spec: JobSpec) -> str | None:
    """The resource a PBS job's `-l place=group=RES` groups its chunks by (pbs_resources:
    every chunk on vnodes that share one value of RES), else None."""
    return next((d.option.split("=", 1)[1] for d in spec.unknown if d.dialect == "pbs"
                 and d.option.startswith("-l place:group=") and d.option.split("=", 1)[1]),
                None)


def _scheduler_run(snap: SiteSnapshot, start_s: float, immediate: bool
                   ) -> tuple[float, list[str]]:
    """A Grid Engine job starts only at a scheduler run: one it could start at once waits
    for the first after its submit, a later one for the first after the end it waits for
    (`SiteSnapshot.sge_submit_run_s`, `sge_finish_run_s`). Planned at that bound where it
    is longer than a start now (READY_TOLERANCE_S); else as it is, unsaid. `immediate`
    (`-now y`): qsub has it scheduled at once, no run waited for."""
    now_ = start_s <= READY_TOLERANCE_S
    if now_ and immediate:
        return start_s, []
    wait = snap.sge_submit_run_s if now_ else snap.sge_finish_run_s
    if not wait or wait <= READY_TOLERANCE_S:
        return start_s, []
    after = "its submit (flush_submit_sec, else schedule_interval)" if now_ else \
        "the end it waits for (flush_finish_sec, else schedule_interval)"
    return start_s + wait, [
        f"Grid Engine dispatches jobs only at its scheduler's runs: the first after {after} "
        f"comes within {hms(wait)}, planned then"]


def _now_or_never(spec: JobSpec) -> bool:
    """Whether a Grid Engine script asks `-now y` (qsub's last -now wins): the job is
    scheduled at once or qsub refuses it ("could not be scheduled, try again later")."""
    said = [d.value for d in spec.unknown if d.dialect == "sge" and d.option == "-now"]
    return bool(said) and (said[-1] or "").strip().lower() in ("y", "yes")


def _refused_later(v: SiteVerdict, now: datetime) -> SiteVerdict:
    """A `-now y` job the site cannot start at once: refused there, saying when it would
    have started and what it would wait for."""
    when = f"it would start in about {hms((v.estimated_start - now).total_seconds())}" \
        if v.estimated_start else "it would wait"
    why = f" (waiting for {'; '.join(v.waits_for)})" if v.waits_for else ""
    return SiteVerdict(site=v.site, verdict="INCOMPATIBLE", reasons=[
        f"-now y: Grid Engine starts the job at once or refuses it, and {v.site} cannot "
        f"start it now: {when}{why}; drop -now y to let it wait in the queue"],
        queue_depth=v.queue_depth, running=v.running, speed_factor=v.speed_factor)


def _same_server(a: str, b: str) -> bool:
    """Whether two PBS server names name one host: equal, or one a short name of the
    other (`pbs01` and `pbs01.example.org`), in any case."""
    a, b = a.lower(), b.lower()
    return a == b or ("." not in a or "." not in b) and a.split(".")[0] == b.split(".")[0]


def other_pbs_server(spec: JobSpec, cfg: SiteConfig) -> str | None:
    """Why a PBS site cannot take a job whose `-q queue@server` names another PBS server
    than its own (qsub sends the job there: its queues are not the site's, and the engine
    would follow and cancel the job on the site's server, which does not hold it), or
    None. The site's own server is named by its sites-file entry's `pbs_servers`."""
    kept = spec.metadata.get("pbs_queue_server")
    if cfg.scheduler != "pbs" or spec.source_dialect != "pbs" or not isinstance(kept, dict) \
            or kept.get("as") != spec.queue:  # another queue since: the server not written
        return None
    raw = str(kept.get("raw", ""))
    server = raw.partition("@")[2]
    own = cfg.pbs_servers or []
    if not server or any(_same_server(server, n) for n in own):
        return None
    listed = (f"its server: {', '.join(own)}" if own
              else "its sites-file entry names no pbs_servers")
    return (f"-q {raw}: qsub would send the job to the PBS server {server}, not to site "
            f"{cfg.name}'s own ({listed}); the engine follows and cancels a job on the "
            f"site's server, and judged the site's queues: write -q {spec.queue} to run it "
            f"in {cfg.name}'s queue {spec.queue}, or add {server} to the entry's "
            f"pbs_servers if it is {cfg.name}'s server")


def _in_one_group(key: str, spec: JobSpec, cfg: SiteConfig, snap: SiteSnapshot,
                  judge: Callable[[SiteSnapshot], SiteVerdict], now: datetime
                  ) -> SiteVerdict:
    """A PBS job of `place=group=KEY` judged on the hosts of each value of KEY alone (their
    running jobs with them, and the queued jobs ahead that the simulation of the whole
    site starts there: `_queued_hosts`), the group where it starts soonest taken; refused
    when no host has KEY, or no one group can hold it."""
    values: dict[str, list[str]] = {}
    for n in snap.nodes:
        for f in n.features:
            if f.startswith(f"{key}="):
                values.setdefault(f.split("=", 1)[1], []).append(n.name)
    if not values:
        return SiteVerdict(site=cfg.name, verdict="INCOMPATIBLE", reasons=[
            f"place=group={key}: no host here has a value of {key} (pbsnodes "
            "resources_available), so no group can hold its chunks"])
    tried: list[tuple[str, SiteVerdict]] = []
    lands = _queued_hosts(snap, now)
    for val, hosts in sorted(values.items()):
        mine = set(hosts)
        # a queued job ahead runs in one group: counted where it lands, not in every one
        # (one the simulation never starts, in every one: it holds nothing anywhere)
        jobs = [j for j in snap.jobs if (set(job_hosts(j.node_list)) & mine
                                         if j.state == JobState.RUNNING else
                                         j.native_id not in lands
                                         or lands[j.native_id] & mine)]
        sub = snap.model_copy(update={"nodes": [n for n in snap.nodes if n.name in mine],
                                      "jobs": jobs})
        tried.append((val, judge(sub)))
    ok = [(val, w) for val, w in tried if w.feasible]
    if not ok:
        first = tried[0][1]
        first.reasons = [f"place=group={key}: no one {key} holds every chunk (" + "; ".join(
            f"{key}={val} ({_few(set(values[val]))}): {'; '.join(w.reasons)}"
            for val, w in tried) + ")"]
        first.verdict = "RESTRICTED" if all(w.verdict == "RESTRICTED" for _, w in tried) \
            else "INCOMPATIBLE"
        return first
    val, best = min(ok, key=lambda x: (x[1].estimated_finish is None, x[1].estimated_finish
                                        .timestamp() if x[1].estimated_finish else 0.0, x[0]))
    best.notes.insert(0, f"place=group={key}: its chunks go to the hosts of {key}={val} "
                         f"({_few(set(values[val]))})"
                      + (f", the soonest of {len(values)} groups" if len(values) > 1 else ""))
    return best


def _queued_hosts(snap: SiteSnapshot, now: datetime) -> dict[str, set[str]]:
    """Where each queued job starts in the simulation of the whole site's queue (EASY, the
    raw walltimes: PBS's own view), by native id: its hosts. One it never starts is left
    out."""
    nodes = site_nodes(snap)
    members = partition_members(snap, nodes) if snap.partitions else \
        {"": [n.name for n in nodes]}
    part_max = {p.name: float(p.max_time_s) for p in snap.partitions if p.max_time_s}
    st = build_state(snap, nodes, members, now, part_max)
    queue = pending_demands(snap, st, members, now, part_max)
    queue_starts(st, queue, snap.backfill or reservation_for("pbs"))
    return {d.native_id: {st.names[n] for n, _, _ in d.held} for d in queue
            if d.native_id is not None and d.start is not None and d.held}


def _could_take_room(st: SimState, queue: list[Demand], usable: Collection[str]) -> bool:
    """Whether a waiting job of `queue` fits now in the room free on the nodes of `usable`
    (names) it may use: each asks its nodes among those with its CPUs (a whole node: all of
    them) and GPUs free. Such a job, held back by a limit or a hold that may lift, can take
    that room before a new job; one that fits nowhere in it cannot."""
    usable = set(usable)
    mine = {i for i, name in enumerate(st.names) if name in usable}
    for d in queue:
        room = sum(1 for i in d.eligible if i in mine and st.free_g[i] >= d.gpus and (
            st.free_c[i] == st.cap_c[i] if d.cpus == WHOLE else st.free_c[i] >= d.cpus))
        if room >= d.nodes:
            return True
    return False


def _widen_for_arrivals(v: SiteVerdict, snap: SiteSnapshot, now: datetime,
                        judge: Callable[[SiteConfig, SiteSnapshot], SiteVerdict],
                        cfg: SiteConfig) -> None:
    """A view read long ago cannot show the jobs that arrived since (`placement_stale`):
    where it shows jobs submitted in as long before it was read (the site's usual gap
    between submissions is shorter than the view's age), its start stays the median, its
    90% bound is the later of the start with those arrivals replayed ahead of the job and
    the start put off by the view's age, and a start now is no longer READY."""
    if v.view_age_s is None or v.estimated_start is None:
        return
    busier, arrived = replayed_arrivals(snap, now)
    if not arrived:
        return
    start_s = (v.estimated_start - now).total_seconds()
    w = judge(cfg, busier)
    replayed_s = (w.estimated_start - now).total_seconds() \
        if w.feasible and w.estimated_start is not None else HORIZON_S
    bound_s = max(replayed_s, start_s + v.view_age_s)
    if v.start_bound is not None and bound_s <= (v.start_bound - now).total_seconds():
        return
    v.start_bound = plus_seconds(now, bound_s)
    v.notes.append(stale_note(v.view_age_s, arrived, replayed_s, bound_s))
    if v.verdict == "READY" and bound_s > READY_TOLERANCE_S:
        v.verdict = "BUSY"


def place(spec: JobSpec, sites: list[tuple[SiteConfig, SiteSnapshot]], *,
          now: datetime | None = None, stage_in_bytes: int = 0,
          history: dict[str, float] | None = None, policy: str = "diamond",
          seed: int | None = None, home: str | None = None,
          estimates: dict[str, datetime] | None = None,
          calibration: dict[str, SiteCalibration] | None = None,
          stage_data: StageData | None = None,
          capabilities: dict[str, SiteCapabilities] | None = None,
          ended: dict[str, Collection[str]] | None = None,
          own_share: float | None = None, doors: Collection[str] = (),
          bound_to: tuple[Collection[str], str] | None = None,
          stale_after_s: float | None = None) -> Placement:
    """Rank `sites` for `spec` under `policy` (see POLICIES); lower score is better.

    `bound_to`: (the only sites that may run the job, why): every other site is
    INCOMPATIBLE for that reason (a script's dependency on one cluster's job).

    `estimates` maps "SITE" or "SITE:PARTITION" to the scheduler's own start estimate for
    this job (e.g. from `sbatch --test-only`). `seed` is for "random", `home` for "fixed".
    `calibration` maps a site to the runtime/request ratios of its recent jobs: its start
    is then the calibrated simulation's, with a 90% bound (see `calibration`).
    `stage_data`: the stage-in's bytes by location; each site's stage-in time counts only
    what is elsewhere, at the measured bandwidth where there is one.
    `capabilities`: what each site has (software, container runtimes, MPI), else what its
    sites-file metadata says.
    `ended`: per site, native ids of jobs its view still lists as running that are known
    to have ended (`Federation.ended_in_view`): their resources count as free now.
    `history` (seconds at speed 1.0 per application) and `own_share` (the share of their
    walltime the user's recent jobs ran) give the job's runtime (`runtime_prior`).
    `doors`: calibrated entries that are second doors to a cluster listed already
    (`Sites.second_doors`, each mapped to its first door): their jobs are not pooled a
    second time (`calibration.borrowed`, `pooled_share`); a thin one reads its first door's.
    `stale_after_s`: a site whose view was read longer than this before `now` says how long
    (`SiteVerdict.view_read_at`); the view is judged as it is.
    """
    if policy not in POLICIES:
        raise BadInput(f"unknown placement policy {policy!r} (known: {', '.join(POLICIES)})")
    if policy == "fixed" and home not in {c.name for c, _ in sites}:
        raise BadInput(f"policy 'fixed' needs home= one of the sites (got {home!r})")
    now = aware(now or utcnow())
    job_window(spec, now)  # an unreadable start time is refused, as its submit is
    cals = borrowed(calibration or {}, doors)  # a site with too few jobs of its own: other sites'
    needs = needs_of(spec)  # read once: the body is scanned for modules, containers, MPI
    prior = runtime_prior(spec, history or {}, own_share,
                          [c for n, c in cals.items() if n not in doors])
    kept_later = het_components(spec)  # a Slurm heterogeneous job's later components
    kept_first = first_component(spec) if kept_later else spec
    if kept_later:  # each component a job against the submit limits
        kept_first, *kept_later = counted_as_jobs([kept_first, *kept_later])
    kept_needs = [needs_of(c) for c in kept_later]
    # a job of several shapes read whole: a heterogeneous job on a Slurm site (elsewhere
    # PBS chunks, LSF compound terms, or its largest shape)
    shaped = [] if kept_later else counted_as_jobs(shape_components(spec))
    shaped_needs = [needs_of(c) for c in shaped[1:]]

    def judge(c: SiteConfig, s: SiteSnapshot) -> SiteVerdict:
        if bound_to is not None and c.name not in bound_to[0]:
            return SiteVerdict(site=c.name, verdict="INCOMPATIBLE", reasons=[bound_to[1]],
                               queue_depth=len(s.pending))
        if s.reachable and (elsewhere := other_pbs_server(spec, c)):
            return SiteVerdict(site=c.name, verdict="INCOMPATIBLE", reasons=[elsewhere],
                               queue_depth=len(s.pending))
        caps = (capabilities or {}).get(c.name)
        # a Slurm site behind slurmrestd is sent one job description: no hetjob
        sched = "slurmrestd" if c.transport.kind == "slurmrestd" else c.scheduler
        if shaped and sched == "slurm":
            first, later, later_needs = shaped[0], shaped[1:], shaped_needs
        else:
            first, later, later_needs = kept_first, kept_later, kept_needs
        one_why = one_shape_sent(spec, c.scheduler, c.transport.kind) if shaped else None
        refused, said = None, None
        if one_why is not None:  # the site gets the shapes as one: place what it gets
            first, refused, said = as_one_shape(spec, one_why)
            later = []
        group = _pbs_group_key(first) if c.scheduler == "pbs" and s.reachable else None
        if group is not None:  # `place=group=RES`: every chunk on hosts of one RES value
            v = _in_one_group(group, first, c, s, lambda snap: _evaluate(
                first, c, snap, now, stage_in_bytes, prior, estimates or {},
                cals.get(c.name), stage_data, caps, needs, (ended or {}).get(c.name, ())),
                now)
        else:
            v = _evaluate(first, c, s, now, stage_in_bytes, prior, estimates or {},
                          cals.get(c.name), stage_data, caps, needs,
                          (ended or {}).get(c.name, ()))
        if refused and v.verdict != "UNREACHABLE":
            return SiteVerdict(site=c.name, verdict="INCOMPATIBLE", reasons=[refused],
                               queue_depth=v.queue_depth, running=v.running,
                               speed_factor=v.speed_factor)
        if said and v.verdict != "UNREACHABLE":
            v.notes.insert(0, said)
        if later:  # every component must fit; the job starts when all of them can
            sent = [in_default(comp, s) for comp in later]
            others: list[SiteVerdict] = []
            if sched == "slurm" and v.verdict != "UNREACHABLE":
                # the components start together: what one that starts now takes is not
                # free for the next
                held = _occupy(first, c, s, v, now)
                for comp, n in zip(sent, later_needs, strict=True):
                    w = _evaluate(comp, c, held, now, 0, prior, estimates or {},
                                  cals.get(c.name), None, caps, n, (ended or {}).get(c.name, ()))
                    others.append(w)
                    held = _occupy(comp, c, held, w, now)
            labels = [label(i, comp, x.queue) for i, (comp, x)
                      in enumerate(zip([first, *later], [first, *sent], strict=True))]
            combine(v, others, labels, sched,
                    lambda t: "+" + hms((t - now).total_seconds()))
            if v.feasible and sched == "slurm" and \
                    (over := over_limits_together([first, *sent], [v, *others], s)):
                refuse(v, over)
            if v.feasible and sched == "slurm":
                _hold_together(v, others, s, now, (ended or {}).get(c.name, ()))
        if c.scheduler == "sge" and v.feasible and v.verdict != "READY" and _now_or_never(spec):
            return _refused_later(v, now)
        return v

    verdicts = [judge(c, s) for c, s in sites]
    for v, (c, s) in zip(verdicts, sites, strict=True):
        v.view_read_at, v.unreachable_since = stale_view(s, now, stale_after_s)
        v.view_age_s = (now - v.view_read_at).total_seconds() if v.view_read_at else None
        if v.view_age_s is not None and v.feasible and v.estimated_start is not None:
            _widen_for_arrivals(v, s, now, judge, c)
    ranked, choice = rank(verdicts, now, policy, home=home, seed=seed)
    return Placement(policy=policy, choice=choice, ranked=ranked, now=now,
                     needs=needs.summary() + array_span_said(spec),
                     runtime_basis=prior.basis)
