"""The 90% bound on a start from a site's recent waits, its level set online (adaptive
conformal inference): it widens where recent bounds missed more than a tenth of the starts,
narrows where they missed fewer, and bounds a job queued behind its user's own jobs by the
waits of jobs behind as many of theirs."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

from diamond_jupyter.calibration import (
    QUANTILE,
    QueueWait,
    RecentWaits,
    ahead_class,
    level_bound,
    own_ahead,
    queue_waits,
)
from diamond_jupyter.model import JobState, JobStatus

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=timezone.utc)
T0 = NOW.timestamp() - 6 * 3600


def _wait(at_s: float, wait_s: float, user: str = "u", waiting: bool = False) -> QueueWait:
    """A job submitted `at_s` into the window that waited `wait_s` (so far, `waiting`)."""
    return QueueWait("compute", 1, wait_s, waiting=waiting, submitted_at=T0 + at_s, user=user)


def _steady(n: int, rng: random.Random, user=lambda k: f"u{k}") -> list[QueueWait]:
    """n jobs a minute apart, each of another user, exponential waits of 10 min mean."""
    return [_wait(60.0 * k, rng.expovariate(1 / 600), user(k)) for k in range(n)]


def test_without_submission_times_or_adaptive_the_bound_is_the_fixed_qbets_one():
    waits = [QueueWait("compute", 1, 60.0 * i) for i in range(1, 71)]  # 1..70 min
    recent = RecentWaits(waits, adaptive=True)
    assert recent.adapted().level == QUANTILE and recent.adapted().outcomes == 0
    assert recent.bound("compute", 1) == (68 * 60.0, 70)  # 68th of 70: QBETS 90%, 95%
    # placement's (not adaptive): the same with submission times and users
    timed = _steady(70, random.Random(1))
    fixed = RecentWaits(timed)
    assert fixed.adapted(0).outcomes == 0
    k = sorted(w.wait_s for w in timed)[67]
    assert fixed.bound("compute", 1, 0) == fixed.bound("compute", 1) == (k, 70)


def test_on_a_steady_queue_the_misses_track_a_tenth():
    """Each job's bound computed from what was known at its submission, at the level then:
    over the window's outcomes about a tenth are misses."""
    for seed in (1, 2, 3):
        got = RecentWaits(_steady(360, random.Random(seed)), adaptive=True).adapted(0)
        assert got.outcomes > 250
        assert 0.07 <= got.misses / got.outcomes <= 0.13, (seed, got)


def test_the_level_rises_after_misses_and_falls_after_starts_within():
    """Waits that grow along the window: each bound, from the shorter waits before it,
    misses more than a tenth, so the level rises; waits that shrink: fewer, it falls."""
    growing = [_wait(60.0 * k, 10.0 * k, f"u{k}") for k in range(200)]
    shrinking = [_wait(60.0 * k, 10.0 * (200 - k), f"u{k}") for k in range(200)]
    up = RecentWaits(growing, adaptive=True).adapted(0)
    down = RecentWaits(shrinking, adaptive=True).adapted(0)
    assert up.level > QUANTILE > down.level
    assert up.misses > 0.1 * up.outcomes > down.misses


def test_a_job_behind_its_users_own_is_bound_by_the_waits_of_jobs_that_were():
    """Jobs arrive a minute apart and start within 5 minutes; every hour one user submits
    ten jobs at once that wait together for an hour or more. The fixed bound over every
    wait is set by the bursts, for every job; with the class of own jobs ahead, a job
    behind none of its own is bound by the waits of such jobs (minutes), one behind five
    of its own by the bursts' (an hour and more)."""
    rng = random.Random(7)
    waits = []
    for k in range(300):
        at = 60.0 * k
        waits.append(_wait(at, rng.uniform(0, 300), f"u{k}"))
        if k % 60 == 0:
            waits += [_wait(at + 1 + i, 3600.0 + 60 * i, "burst") for i in range(10)]
    recent = RecentWaits(waits, adaptive=True)
    assert recent.adapted(0).outcomes >= 250 and recent.adapted(5).outcomes >= 20
    fixed = RecentWaits([QueueWait(w.partition, w.cpus, w.wait_s) for w in waits])
    plain = fixed.bound("compute", 1)
    narrow, wide = recent.bound("compute", 1, 0), recent.bound("compute", 1, 5)
    assert plain is not None and narrow is not None and wide is not None
    assert narrow[0] <= 300.0 and wide[0] >= 3600.0 and plain[0] >= 3600.0
    assert wide[1] < 50  # the waits of jobs that were behind 4-15 of their own
    # the user not known: every wait, at the level of no class of jobs ahead
    assert recent.bound("compute", 1, None) == (plain[0], 350)


def test_an_outcome_counts_only_once_known():
    """A job still waiting under its bound has no outcome yet; one waiting past it is a
    miss already (its bound has passed)."""
    rng = random.Random(3)
    base = _steady(60, rng)
    end = max(w.submitted_at + w.wait_s for w in base) - T0
    counted = RecentWaits(base, adaptive=True).adapted(0).outcomes
    young = RecentWaits([*base, _wait(end - 1.0, 1.0, "new", waiting=True)],
                        adaptive=True).adapted(0)
    assert young.outcomes == counted  # waited a second: not yet due
    old = RecentWaits([*base, _wait(60.0, end - 60.0, "stuck", waiting=True)],
                      adaptive=True).adapted(0)
    assert old.outcomes >= counted + 1 and old.misses >= 1


def test_a_level_past_one_is_the_longest_wait_seen():
    obs = sorted((60.0 * i, False) for i in range(1, 101))
    assert level_bound(obs, 1.04) == 6000.0
    assert level_bound(obs, 0.8) < level_bound(obs, 0.9) < level_bound(obs, 0.95) < 6000.0
    assert level_bound(obs[:10], 0.9) is None  # too few for the 90% bound at all
    # a job still waiting past every start: the longest wait seen is its
    assert level_bound(sorted([*obs, (7000.0, True)]), 1.02) == 7000.0


def test_own_jobs_ahead_are_read_from_the_queue():
    ahead = [JobStatus(native_id=str(k), state=JobState.PENDING, user="ann" if k % 2 else "bob")
             for k in range(10)]
    assert own_ahead(ahead, "ann") == 5 and own_ahead(ahead, "cy") == 0
    assert own_ahead(ahead, None) is None  # the user is not known
    assert [ahead_class(k) for k in (None, 0, 1, 3, 4, 15, 16, 63, 64, 500)] == [
        "*", "0", "1-3", "1-3", "4-15", "4-15", "16-63", "16-63", "64+", "64+"]


def test_queue_waits_carry_submission_and_user():
    job = JobStatus(native_id="7", state=JobState.PENDING, user="ann", partition="compute",
                    cpus=2, submitted_at=NOW - timedelta(minutes=5))
    w = queue_waits([job], NOW, 6 * 3600.0)["7"]
    assert (w.user, w.waiting, w.wait_s) == ("ann", True, 300.0)
    assert w.submitted_at == (NOW - timedelta(minutes=5)).timestamp()
    old = job.model_copy(update={"native_id": "8", "submitted_at": NOW - timedelta(days=2)})
    assert set(queue_waits([job, old], NOW, 6 * 3600.0)) == {"7"}  # submitted in the window
    assert set(queue_waits([job, old], NOW, 6 * 3600.0, every_waiting=True)) == {"7", "8"}
