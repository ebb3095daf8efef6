"""The 90% start bound (issue 15) on the moments of real centers' logs of the twenty-seventh
sweep (`test_placement_unseen27`): a job that starts now on room no waiting job can take
gets no bound from other jobs' waits, and a bound is never before the start."""

from __future__ import annotations

import pytest
from test_placement_unseen27 import NOW, placed, site, start

from diamond_jupyter.placement import SiteVerdict


def bound(v: SiteVerdict | None) -> float | None:
    """v's 90% bound, seconds after NOW (None: no bound)."""
    assert v is not None, v
    return None if v.start_bound is None else (v.start_bound - NOW).total_seconds()


def test_a_small_job_on_idle_nodes_no_waiting_job_fits_starts_now_bound_and_all():
    """K: 3 nodes idle, 70 waiting, each of at least 6 nodes: none fits the 3. A 1-node
    5-minute job starts now, and its bound is now, not the 59:07:00 that 1408 (17 nodes)
    waited before it started."""
    p = placed("#SBATCH -N 1 -t 0:05:00", site("K"))
    v = p.verdict("K")
    assert (start(v), bound(v)) == (0, 0), p.explain()
    assert "+0:00:00 simulation +0:00:00 +0:00:00 " in p.explain()
    assert not any(n.startswith("90% bound") for n in v.notes), v.notes


def test_idle_room_a_waiting_job_fits_is_not_promised_to_a_new_job():
    """H: 135 nodes idle and 667 waiting, 482 of them user 132's 1-node jobs Maui holds to
    their user's limits: each fits the idle room and may take it as a limit lifts. A 1-node
    job starts now in the simulation, but its bound is not set to now (too few of the
    site's jobs started lately to bound it: none). On K and A no waiting job fits the idle
    nodes: the bound is now."""
    p = placed("#SBATCH -N 1 -t 0:05:00", site("H"))
    v = p.verdict("H")
    assert start(v) == 0 and bound(v) is None, p.explain()
    for key in ("K", "A"):
        v = placed("#SBATCH -N 1 -t 0:05:00", site(key)).verdict(key)
        assert (start(v), bound(v)) == (0, 0), key


def test_a_start_past_the_waits_bound_is_its_own_bound():
    """B: 8 nodes start past 30 days, behind 2414 81 h jobs; the site's recent waits end
    well before that. The bound is the start, not empty."""
    p = placed("#SBATCH -N 8 -t 2:00:00", site("B"))
    v = p.verdict("B")
    assert start(v) > 30 * 24 * 3600 and bound(v) == start(v), p.explain()
    assert any(n.startswith("90% bound ") and n.endswith("end before it") for n in v.notes), \
        v.notes
    row = next(line for line in p.explain().splitlines() if line.startswith("* B "))
    assert "  -  " not in row.split("simulation")[1][:30]
    assert "  B: 90% bound 36-10:50:50, the start: the waits of 2417 jobs of 1-64 nodes" \
        in p.explain()


@pytest.mark.parametrize("key", ["T", "O", "H", "B", "K", "A", "S", "F"])
def test_no_bound_is_before_its_start(key):
    """On every moment, for a small and a large job: a bound is at or after the start."""
    for script in ("#SBATCH -N 1 -t 0:05:00", "#SBATCH -N 8 -t 2:00:00",
                   "#SBATCH -N 3 -t 0:05:00"):
        v = placed(script, site(key)).verdict(key)
        if v.feasible and v.estimated_start is not None and bound(v) is not None:
            assert bound(v) >= start(v), (key, script)


def test_a_waiting_job_is_bound_by_the_waits_of_jobs_of_its_size():
    """K: an 8-node 2 h job starts at +9:54:42. Of the 56 recent waits, 55 (at least
    MIN_SIMILAR_WAITS, 46) are of 4-16 nodes: user 18's 6-16-node jobs waiting about an
    hour and a 16-node job started after 53:08. The 17-node job that waited 59:07 is not
    among them: the bound is 53:08, and `explain` says from which jobs."""
    p = placed("#SBATCH -N 8 -t 2:00:00", site("K"))
    v = p.verdict("K")
    assert start(v) == 9 * 3600 + 54 * 60 + 42 and bound(v) == 53 * 3600 + 8 * 60, p.explain()
    assert v.bound_class == "4-16 nodes", v.bound_class
    assert "  K: 90% bound 2-05:08:00: the waits of 55 jobs of 4-16 nodes here recently" \
        in p.explain().splitlines()
