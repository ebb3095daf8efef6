"""Placement follow-ups of the twenty-sixth sweep, on real centers' queue moments
(`trace_sites`): a view read hours ago, jobs waiting past the planning limit, and a job
array's last task. Moment G (KTH SP2 at 3,798,000) is `test_placement_unseen26`'s: 97 of
100 nodes busy, 24 jobs waiting; 2733 (80 nodes) ends at +1:29:14."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from trace_sites import HPC2N, KTH, SETH, SP2, trace_site

from diamond_jupyter import placement_sim
from diamond_jupyter.federation import Federation
from diamond_jupyter.placement import Placement, SiteVerdict, place
from diamond_jupyter.placement_stale import replayed_arrivals

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
G = 3_798_000


def placed(lines: str, *sites, **kw) -> Placement:
    return place(Federation.parse(f"#!/bin/bash\n{lines}\n./app\n"), list(sites), now=NOW,
                 **kw)


def seconds(t: datetime | None) -> float:
    assert t is not None
    return (t - NOW).total_seconds()


def start(v: SiteVerdict | None) -> float:
    assert v is not None and v.feasible, v
    return seconds(v.estimated_start)


# ---- a view read hours ago ------------------------------------------------------------------

def test_a_view_read_two_hours_ago_is_no_longer_ready_now():
    """G as the log shows it 2 h before, read then: 15 nodes idle, 8 of them free for an
    hour (before: READY, certain). 7 jobs the view shows were submitted in the 2 h before
    it was read, so more have arrived since: the log's 11 did (2795-2811, 4-13 nodes), and
    the job read fresh at G waits for 2733's end, +1:29:14. The stale view keeps its start
    (the median) and says so; its 90% bound, 2 h, covers that."""
    cfg, old = trace_site("G", KTH, G - 2 * 3600, SP2, NOW - timedelta(hours=2))
    assert replayed_arrivals(old, NOW)[1] == 7
    p = placed("#SBATCH -N 8 -t 1:00:00", (cfg, old), stale_after_s=600)
    v = p.verdict("G")
    assert (v.verdict, start(v), seconds(v.start_bound)) == ("BUSY", 0, 7200), p.explain()
    fresh = placed("#SBATCH -N 8 -t 1:00:00", trace_site("G", KTH, G, SP2, NOW)).verdict("G")
    assert start(fresh) == 5354 <= seconds(v.start_bound)
    assert "G: the view misses what arrived since it was read: 7 jobs were submitted in " \
        "the 2:00:00 before (one every 0:17:09)" in p.explain()


def test_the_bound_grows_with_the_views_age_and_a_fresh_view_is_unchanged():
    """The same moment read 1 h and 4 h before: the older view's bound is the later; read
    now, the view is what it says (READY, no word) and its bound is its start: no job
    waiting there fits the room the job starts in."""
    bounds = []
    for hours in (1, 4):
        cfg, old = trace_site("G", KTH, G - hours * 3600, SP2, NOW - timedelta(hours=hours))
        v = placed("#SBATCH -N 2 -t 1:00:00", (cfg, old), stale_after_s=600).verdict("G")
        assert start(v) == 0 and v.verdict == "BUSY"
        bounds.append(seconds(v.start_bound))
    assert hours * 3600 <= bounds[1] and bounds[0] < bounds[1], bounds
    p = placed("#SBATCH -N 2 -t 0:20:00", trace_site("G", KTH, G, SP2, NOW),
               stale_after_s=600)
    v = p.verdict("G")
    assert (v.verdict, start(v), v.start_bound) == ("READY", 0, NOW)
    assert "view" not in p.explain()


# ---- jobs waiting past the planning limit ---------------------------------------------------

@pytest.mark.parametrize(("log", "at_s", "machine", "lines", "expected"), [
    (KTH, 13_400_000, SP2, "#SBATCH -N 1 -t 1:00:00", 5400),
    (KTH, 12_200_000, SP2, "#SBATCH -N 1 -t 1:00:00", 1852),
    (HPC2N, 46_500_000, SETH, "#SBATCH -N 2 -t 1:00:00", 3300),
])
def test_jobs_past_the_planning_limit_keep_their_slots_from_a_new_job(
        log, at_s, machine, lines, expected, monkeypatch):
    """KTH at 13,400,000: 63 nodes idle, 39 jobs waiting, of which a plan over 100 nodes
    reserves for the first 20 at each event (PLAN_BUDGET); behind them wait 19 more
    (12203-12221, all but one 15-minute jobs of 1-45 nodes). Before, the new job, past
    them all, started now on an idle node where it fit around the first 20's slots (0 s;
    180 s at 12,200,000, 33 waiting; 30-90 s on Seth at 46,500,000, 125 waiting, a plan of
    8 there): its hour there would have delayed jobs ahead that Slurm's backfill, testing
    far deeper (bf_max_job_test), keeps slots for. Now it starts where it delays none of
    them: as a plan of every job ahead has it."""
    cfg, snap = trace_site("s", log, at_s, machine, NOW)
    assert len(snap.pending) > 2000 // len(snap.nodes)
    bounded = start(placed(lines, (cfg, snap)).verdict("s"))
    monkeypatch.setattr(placement_sim, "PLAN_BUDGET", 10**7)  # every job ahead planned
    assert bounded == start(placed(lines, (cfg, snap)).verdict("s")) == expected


# ---- a job array's last task ----------------------------------------------------------------

A = 9_565_200  # KTH SP2: 37 nodes idle; 7627 (80 nodes) waits for +10:29:14; 7822's 8 end at
# +5:21:12


@pytest.mark.parametrize(("array", "said"), [
    ("0-79", "array of 80 tasks, at most 80 at a time (no throttle): the first starts "
             "+0:00:00, the last ends +3:00:00"),
    ("0-119", "array of 120 tasks, at most 100 at a time (as many as its nodes hold "
              "together): the first starts +0:00:00, the last ends +4:00:00"),
    ("0-39%10", "array of 40 tasks, at most 10 at a time (its throttle %10): the first "
                "starts +0:00:00, the last ends +4:00:00"),
])
def test_an_arrays_last_task_ends_when_its_rounds_are_done(array, said):
    """A: whole-node tasks of an hour. 80 tasks: 37 start now on the idle nodes, 37 at
    +1:00:00 when those end, the last 6 at +2:00:00 (each an hour ending before 7627's
    slot): the last ends at +3:00:00, not the first task's +1:00:00 (before: only that
    was shown). 120 tasks, in at most 100 lanes (A's nodes): 37, 37, 37, then 9 at
    +3:00:00, ending at +4:00:00. 40 under %10: 4 rounds of 10, all on the
    idle nodes: +4:00:00. FINISH stays the first task's."""
    p = placed(f"#SBATCH -N 1 --exclusive -t 1:00:00 --array={array}",
               trace_site("A", KTH, A, SP2, NOW))
    v = p.verdict("A")
    assert (start(v), seconds(v.estimated_finish)) == (0, 3600)
    assert said in v.notes and f"  A: {said}" in p.explain().splitlines()


def test_an_array_waiting_behind_a_queue_ends_its_tasks_after_the_first_starts():
    """G (3 nodes idle, 24 jobs waiting): 6 one-node tasks of 20 minutes. 3 start now on
    the idle nodes (20 minutes delay no one); the other 3 find room only between the six
    4-node 20-minute jobs ahead (2806-2811), which take the freed nodes in turn from
    +0:23:30: the last starts at +1:23:30 and ends at +1:43:30 (the first task's FINISH
    is +0:20:00). A plain job's `explain` says nothing of arrays."""
    g = trace_site("G", KTH, G, SP2, NOW)
    p = placed("#SBATCH -N 1 --exclusive -t 0:20:00 --array=1-6", g)
    assert start(p.verdict("G")) == 0
    assert "  G: array of 6 tasks, at most 6 at a time (no throttle): the first starts " \
        "+0:00:00, the last ends +1:43:30" in p.explain().splitlines()
    assert "array of" not in placed("#SBATCH -N 1 -t 0:20:00", g).explain()
