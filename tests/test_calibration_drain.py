"""Two bounds on a new job's wait measured against real logs (`benchmarks.prediction`):
QBETS' history cut at a change in a class's waits (`regime_waits`), and the time a user's
own backlog takes to start at the rate the site has been starting that user's jobs
(`own_drain_bound`)."""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta, timezone

import pytest

from diamond_jupyter.calibration import (
    CONFIDENCE,
    MIN_DRAIN_STARTS,
    QueueWait,
    RecentWaits,
    own_drain_bound,
    poisson_rate_lower,
    regime_waits,
)

NOW = 1_800_000_000.0  # epoch seconds
HOUR = 3600.0


def _started(user: str, submitted_h_ago: float, wait_s: float, cpus: int = 1) -> QueueWait:
    return QueueWait("all", cpus, wait_s, submitted_at=NOW - submitted_h_ago * HOUR, user=user)


def _waiting(user: str, submitted_h_ago: float) -> QueueWait:
    return QueueWait("all", 1, submitted_h_ago * HOUR, waiting=True,
                     submitted_at=NOW - submitted_h_ago * HOUR, user=user)


def _poisson_at_least(mean: float, count: int) -> float:
    return 1 - sum(math.exp(-mean) * mean ** k / math.factorial(k) for k in range(count))


@pytest.mark.parametrize("count", [1, 5, 40])
def test_the_rate_lower_bound_is_the_poisson_confidence_limit(count):
    rate = poisson_rate_lower(count, 1000.0)
    assert rate < count / 1000.0  # below the rate seen
    # at that rate `count` events in the span are exactly as unlikely as the 5% allowed
    assert _poisson_at_least(rate * 1000.0, count) == pytest.approx(1 - CONFIDENCE, rel=1e-6)
    assert poisson_rate_lower(count + 1, 1000.0) > rate  # more events: a higher rate
    assert poisson_rate_lower(count, 2000.0) == pytest.approx(rate / 2)


def test_one_event_gives_the_textbook_limit_and_none_gives_zero():
    assert poisson_rate_lower(1, 1.0) == pytest.approx(-math.log(CONFIDENCE), rel=1e-6)
    assert poisson_rate_lower(0, 100.0) == 0.0
    assert poisson_rate_lower(3, 0.0) == 0.0


def test_a_backlog_drains_at_its_users_recent_rate():
    """A user who has had 20 jobs started over the 4 h since their burst began: a new job
    behind 40 of their own waits about 8 h for those, longer at the rate's lower bound."""
    burst = [_started("heavy", 4.0, (4.0 - 0.2 * (k + 1)) * HOUR) for k in range(20)]
    burst += [_waiting("heavy", 4.0) for _ in range(60)]
    others = [_started(f"u{k}", 1.0, 60.0) for k in range(50)]  # not this user's starts
    bound, starts = own_drain_bound(burst + others, "heavy", 40, NOW)
    assert starts == 20
    assert bound == pytest.approx(40 / poisson_rate_lower(20, 4 * HOUR))
    assert 8 * HOUR < bound < 16 * HOUR
    # further back in line: proportionally longer
    assert own_drain_bound(burst, "heavy", 80, NOW)[0] == pytest.approx(2 * bound)


def test_the_busy_span_starts_at_the_users_earliest_job_within_the_window():
    """The same 20 starts over 1 h of backlog say a faster rate than over 4 h, and a
    backlog older than the window counts the window only."""
    recent = [_started("u", 1.0, (1.0 - 0.05 * (k + 1)) * HOUR) for k in range(20)]
    slow = [_started("u", 4.0, (4.0 - 0.2 * (k + 1)) * HOUR) for k in range(20)]
    assert own_drain_bound(recent, "u", 10, NOW)[0] == pytest.approx(
        own_drain_bound(slow, "u", 10, NOW)[0] / 4)
    old = slow + [_waiting("u", 30.0)]  # waiting since long before the 6 h window
    assert own_drain_bound(old, "u", 10, NOW)[0] == pytest.approx(
        10 / poisson_rate_lower(20, 6 * HOUR))


def test_no_drain_bound_without_a_user_a_backlog_or_enough_starts():
    waits = [_started("u", 2.0, (2.0 - 0.1 * (k + 1)) * HOUR) for k in range(10)]
    assert own_drain_bound(waits, None, 10, NOW) is None
    assert own_drain_bound(waits, "u", 0, NOW) is None
    assert own_drain_bound(waits, "u", None, NOW) is None
    assert own_drain_bound(waits, "stranger", 10, NOW) is None
    few = waits[:MIN_DRAIN_STARTS - 1]
    assert own_drain_bound(few, "u", 10, NOW) is None
    assert own_drain_bound(waits[:MIN_DRAIN_STARTS], "u", 10, NOW) is not None


def _series(waits_s: list[float], cpus: int = 1) -> list[QueueWait]:
    """Waits of jobs submitted a minute apart, ending 1 h before NOW, in this order."""
    n = len(waits_s)
    return [QueueWait("all", cpus, w, submitted_at=NOW - HOUR - 60.0 * (n - i), user="u")
            for i, w in enumerate(waits_s)]


def test_a_class_keeps_its_waits_since_they_changed():
    rng = random.Random(3)
    short = [rng.uniform(10, 100) for _ in range(40)]
    long = [rng.uniform(5000, 9000) for _ in range(30)]
    shifted = _series(short + long)
    kept = regime_waits(shifted)
    assert sorted(w.wait_s for w in kept) == sorted(long)
    # the 90% bound rests on the 30 waits since the change
    assert RecentWaits(shifted, regime=True).bound("all", 1)[1] == 30
    # a steady class, another class, and waits without a submission time are kept whole
    steady = _series([rng.uniform(10, 9000) for _ in range(70)], cpus=32)
    untimed = [QueueWait("all", 1, 5.0)]
    kept = regime_waits(shifted + steady + untimed)
    assert len(kept) == 30 + 70 + 1
    assert untimed[0] in kept


def test_after_waits_shorten_the_bound_falls_to_the_new_ones():
    rng = random.Random(4)
    long = [rng.uniform(5000, 9000) for _ in range(40)]
    short = [rng.uniform(10, 100) for _ in range(30)]
    waits = _series(long + short)
    assert RecentWaits(waits).bound("all", 1)[0] > 5000
    assert RecentWaits(waits, regime=True).bound("all", 1)[0] <= 100


# --- in the engine: placement's bound --------------------------------------------------

def _site(user: str, backlog: int) -> tuple:
    """One 8-CPU node, 4 CPUs busy; `backlog` 1-CPU jobs of `user` waiting (held by a
    per-user limit the view does not show), one of another user's."""
    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.model import JobState, JobStatus, Node, Partition, SiteSnapshot

    now = datetime.fromtimestamp(NOW, timezone.utc)
    node = Node(name="n1", cpus=8, cpus_allocated=4, state="mixed", partitions=["all"])
    running = [JobStatus(native_id="r1", state=JobState.RUNNING, cpus=4, walltime_s=3600.0,
                         partition="all", user=user, node_list="n1",
                         started_at=now - timedelta(minutes=10))]
    waiting = [JobStatus(native_id=f"w{k}", state=JobState.PENDING, cpus=1, walltime_s=600.0,
                         partition="all", user=user if k else "other",
                         submitted_at=now - timedelta(hours=4)) for k in range(backlog + 1)]
    return SiteConfig(name="s", scheduler="slurm"), SiteSnapshot(
        site="s", taken_at=now, nodes=[node], jobs=running + waiting, user=user,
        partitions=[Partition(name="all", default=True)])


def _calibration(user: str):
    from diamond_jupyter.calibration import RunSample, SiteCalibration

    runs = [RunSample("all", 1, 600.0, 300.0, NOW - 60.0 * k) for k in range(20)]
    # the user's 20 starts over the 4 h their backlog has waited, each after a short wait
    starts = {f"d{k}": QueueWait("all", 1, 60.0, submitted_at=NOW - (4.0 - 0.2 * k) * HOUR,
                                 user=user) for k in range(20)}
    return SiteCalibration(runs, queued=starts)


def test_placement_bounds_a_job_behind_its_users_backlog_by_their_start_rate():
    from diamond_jupyter.model import JobSpec, Resources
    from diamond_jupyter.placement import place

    spec = JobSpec(name="j", command="true",
                   resources=Resources(nodes=1, tasks=1, cpus_per_task=1, walltime_s=600))
    now = datetime.fromtimestamp(NOW, timezone.utc)
    cfg, snap = _site("me", 30)
    v = place(spec, [(cfg, snap)], now=now, calibration={"s": _calibration("me")}).verdict("s")
    assert v is not None and v.feasible
    behind = 30 / poisson_rate_lower(20, 4 * HOUR)  # 30 of theirs ahead, 20 starts in 4 h
    assert (v.start_bound - now).total_seconds() == pytest.approx(behind, rel=1e-3)
    assert any("your jobs queued ahead" in n for n in v.notes)
    # another login (none of the backlog theirs): no such bound
    cfg, snap = _site("me", 30)
    other = snap.model_copy(update={"user": "someone"})
    w = place(spec, [(cfg, other)], now=now, calibration={"s": _calibration("me")}).verdict("s")
    assert w.start_bound is None or (w.start_bound - now).total_seconds() < behind / 2
    assert not any("your jobs queued ahead" in n for n in w.notes)

