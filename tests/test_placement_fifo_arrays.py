"""Placement on a Slurm site without backfill, and job arrays ranked by their last task.

- `SchedulerType = sched/builtin` in `scontrol show config` (recorded lines): Slurm starts
  jobs in priority order and, once a job cannot start, starts none behind it on that
  partition's nodes. selene (`test_placement_slurm_new_job_priority`): n01-n03 busy for 5
  more hours, three jobs of 4 whole batch nodes and 10 hours waiting; n04-n06 idle. With
  backfill a one-node hour starts now on an idle node; without, only after those three
  have started (+5 h, +15 h, +25 h).
- A job array is ranked by when its last task ends, not its first: a fast site of one
  node runs 12 tasks one after the other, a slower site of six runs them in two rounds.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from test_placement_cases import NOW, run
from test_placement_cases13 import selene as plain_selene
from test_placement_slurm_new_job_priority import CONFIG, selene

from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.placement_sim import WHOLE, Demand, SimState, earliest_start

BUILTIN = CONFIG + "SchedulerType           = sched/builtin\n"
BACKFILL = CONFIG + "SchedulerType           = sched/backfill\n"
ONE = "#SBATCH -p batch -N 1 -n 1 -t 1:00:00"


@pytest.mark.parametrize(("config", "model"), [
    (BUILTIN, "fifo"), (BACKFILL, None), (CONFIG, None),
    ("SchedulerType = sched/builtin\n", "fifo"), ("SchedulerType=sched/builtin", "fifo"),
])
def test_the_scheduler_type_is_read(config, model):
    assert SlurmCommands.parse_backfill(config) == model
    assert selene(config=config)[1].backfill == model


@pytest.mark.parametrize(("config", "start_h"), [(BACKFILL, 0), (CONFIG, 0), (BUILTIN, 25)])
def test_a_short_job_passes_the_waiting_jobs_only_where_the_site_backfills(config, start_h):
    p = run(ONE, selene(config=config))
    v = p.verdict("selene")
    assert v is not None and v.feasible, p.explain()
    assert v.estimated_start == NOW + timedelta(hours=start_h), p.explain()
    said = ("selene: no backfill on this site (SchedulerType=sched/builtin): it starts after "
            "the 3 jobs ahead of it in partition batch, in priority order; no job passes one "
            "waiting ahead")
    assert (f"  {said}" in p.explain().splitlines()) == (config is BUILTIN), p.explain()


def test_without_backfill_another_partitions_idle_nodes_still_take_the_job_now():
    """The jobs waiting in batch hold back batch's nodes only: big's m01 takes it now."""
    p = run("#SBATCH -p big -N 1 -n 1 -t 1:00:00", selene(config=BUILTIN))
    v = p.verdict("selene")
    assert v is not None and v.estimated_start == NOW, p.explain()
    assert "it starts after the 0 jobs ahead of it in partition big" in p.explain()


def _two_nodes() -> SimState:
    """Two 4-CPU nodes of one partition; node 0 busy for 100 s more."""
    return SimState(["a", "b"], [4, 4], [0, 0], [0, 4], [0, 0],
                    [(100.0, 0, 0, 4, 0)], partition_nodes={"p": frozenset({0, 1})})


@pytest.mark.parametrize(("reservation", "start"), [
    ("plan", 0.0), ("easy", 0.0), ("none", 0.0), ("fifo", 150.0)])
def test_a_small_job_waits_behind_a_blocked_head_only_without_backfill(reservation, start):
    """The head wants both nodes whole for 50 s (from +100 s); a 1-CPU job of 60 s ends
    before it and backfills now, except under FIFO: after the head, at +150 s."""
    head = Demand(2, WHOLE, 0, 50.0, [0, 1], partition="p", native_id="1")
    probe = Demand(1, 1, 0, 60.0, [0, 1])
    assert earliest_start(_two_nodes(), [head], probe, reservation=reservation) == start


def test_a_job_that_can_never_run_holds_nobody_back_without_backfill():
    """Three whole nodes of a two-node partition never start (Slurm: a partition
    constraint): the job behind it starts now; a dependent job waits and holds nothing."""
    never = Demand(3, WHOLE, 0, 50.0, [0, 1], partition="p", native_id="1")
    later = Demand(1, 4, 0, 50.0, [0, 1], partition="p", native_id="2", not_before=500.0,
                   floor=500.0)
    probe = Demand(1, 1, 0, 60.0, [0, 1])
    assert earliest_start(_two_nodes(), [never, later], probe, reservation="fifo") == 0.0


def test_a_job_that_can_never_run_is_never_started_without_backfill():
    probe = Demand(3, WHOLE, 0, 60.0, [0, 1])
    assert earliest_start(_two_nodes(), [], probe, reservation="fifo") is None


# ---- a job array ranked by its last task ----------------------------------------------------

ARRAY = "#SBATCH -p batch -N 1 --exclusive -t 1:00:00 --array=1-12"


def _site(name: str, speed: float, down: tuple[str, ...] = ()):
    cfg, snap = plain_selene(states={n: "DOWN" for n in down})
    return (cfg.model_copy(update={"name": name, "speed_factor": speed}),
            snap.model_copy(update={"site": name}))


def test_an_array_goes_where_its_last_task_ends_first():
    """fast (speed 2, one batch node up): the first task ends at +0:30:00, the twelfth at
    +6:00:00; wide (speed 1, six nodes): the first at +1:00:00, the last at +2:00:00.
    Ranked by the first task, fast won; by the last, wide does."""
    p = run(ARRAY, _site("fast", 2.0, down=("n02", "n03", "n04", "n05", "n06")),
            _site("wide", 1.0))
    fast, wide = p.verdict("fast"), p.verdict("wide")
    assert fast is not None and wide is not None
    assert fast.estimated_finish == NOW + timedelta(minutes=30)  # FINISH: the first task's
    assert wide.estimated_finish == NOW + timedelta(hours=1)
    assert p.choice == "wide", p.explain()
    assert "  fast: array of 12 tasks, at most 1 at a time (as many as its nodes hold " \
        "together): the first starts +0:00:00, the last ends +6:00:00" \
        in p.explain().splitlines(), p.explain()
    assert p.why_not("fast").startswith("finishes 4:00:00 later"), p.why_not("fast")


def test_a_single_job_is_still_ranked_by_its_finish():
    p = run(ARRAY.replace(" --array=1-12", ""),
            _site("fast", 2.0, down=("n02", "n03", "n04", "n05", "n06")), _site("wide", 1.0))
    assert p.choice == "fast", p.explain()
