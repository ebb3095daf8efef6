"""Placement cases, thirtieth sweep: what real Slurm queues do that the predictions missed
before. On vega (test_placement_cases28, read whole from what its commands print):
preemption as the site configures it (a preempted partition's GraceTime, the site's
PreemptExemptTime, PreemptType preempt/none, and preempt/qos with a QOS's Preempt list and
GraceTime); reservations that recur
(DAILY, HOURLY, WEEKDAY) or float ahead of now (TIME_FLOAT); on selene
(test_placement_slurm_new_job_priority) a job's own `--nice`; a job submitted held; and a
Grid Engine cell's `maxujobs` (test_placement_pbs_resv_ge_rqs's cell).

vega (test_placement_cases28):
  a01-a04  48 CPUs  192000 MB               batch, shared, standby
  b01-b02 128 CPUs  512000 MB               batch, standby
  g01-g02  64 CPUs  256000 MB 4 A100        gpu, standby
  g03      64 CPUs  256000 MB 2 A100        gpu, standby
  batch default, 2 days, PriorityTier 1; gpu 1 day, PriorityTier 10; standby 4 h,
  PriorityTier 0, PreemptMode=REQUEUE
NOW is Sunday 2026-03-01 09:00 UTC. Each case's docstring works its answer out from these
numbers."""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from test_placement_cases import NOW, has_note, hours, reservation, run
from test_placement_cases25 import qos
from test_placement_cases28 import (
    NODES,
    notes,
    partitions,
    placed,
    running,
    starts_in,
    vega,
    whole,
)
from test_placement_pbs_resv_ge_rqs import _ge_entry, _ge_site, _smp
from test_placement_slurm_new_job_priority import FOUR, _one, factors, selene

from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.placement_resv import _occurrences
from diamond_jupyter.testbed.clusters import base_dir, cluster
from diamond_jupyter.testbed.host import _ctl

# ---- preemption as the site configures it ------------------------------------------------

# every A100 held by a standby job that has run 1 h of its 4 h (3 h left)
GPU_STANDBY = [running(f"20{i}", g, 64, 3, partition="standby", limit_h=4,
                       gpus=2 if g == "g03" else 4) for i, g in enumerate(("g01", "g02", "g03"))]
GPU_JOB = "#SBATCH --gres=gpu:a100:4 -t 2:00:00"


def standby_gpus(grace: str = "0", config: str = ""):
    """vega with every GPU taken by standby jobs; standby's GraceTime `grace` (seconds) and
    `config` as `scontrol show config` lines."""
    parts = "".join(line.replace("GraceTime=0 ", f"GraceTime={grace} ")
                    if line.startswith("PartitionName=standby ") else line
                    for line in partitions().splitlines(keepends=True))
    return vega(*GPU_STANDBY, held=whole("g01", "g02", "g03"), parts=parts, config=config)


def test_grace_time_and_the_preemption_settings_are_read():
    _, snap = standby_gpus("300", "PreemptType = preempt/partition_prio\n"
                                  "PreemptExemptTime = 01:30:00\n")
    assert {p.name: p.grace_time_s for p in snap.partitions if p.name in (
        "standby", "batch")} == {"standby": 300, "batch": 0}
    assert (snap.preempt_type, snap.preempt_exempt_s) == ("preempt/partition_prio", 5400.0)
    assert SlurmCommands.parse_preemption("PreemptType = preempt/none\n"
                                          "PreemptExemptTime = -1\n") == ("preempt/none", None)
    # an older `scontrol show config` without the lines: not read, as before
    assert SlurmCommands.parse_preemption("ClusterName = vega\n") == (None, None)


def test_a_preempted_partitions_grace_time_delays_the_start():
    """standby's GraceTime=300: Slurm signals its jobs and lets them run 5 minutes before
    stopping them, so the gpu job starts at +0:05, not now (before: now, GraceTime not
    read); the note says why."""
    p, said = placed(GPU_JOB, standby_gpus("300"))
    assert (p.verdict("vega").partition, round(starts_in(p) * 3600)) == ("gpu", 300), said
    assert any("count as free once stopped (partition standby's GraceTime 0:05:00 lets them "
               "run on)" in n for n in notes(p)), said


def test_a_grace_time_longer_than_the_jobs_rest_ends_with_the_job():
    """A GraceTime of 5 hours does not keep the standby jobs past their own end at +3 h."""
    p, said = placed(GPU_JOB, standby_gpus(str(5 * 3600)))
    assert starts_in(p) == 3, said


def test_preempt_exempt_time_keeps_a_job_until_it_has_run_that_long():
    """PreemptExemptTime = 02:00:00: the standby jobs have run 1 h, so none may be preempted
    for another hour: +1 h (before: now)."""
    p, said = placed(GPU_JOB, standby_gpus(config="PreemptExemptTime = 02:00:00\n"))
    assert starts_in(p) == 1, said
    assert any("PreemptExemptTime 2:00:00 keeps each until it has run that long" in n
               for n in notes(p)), said
    # with standby's GraceTime after it: +1 h 5 min
    p, said = placed(GPU_JOB, standby_gpus("300", "PreemptExemptTime = 02:00:00\n"))
    assert round(starts_in(p) * 3600) == 3600 + 300, said


@pytest.mark.parametrize("kind, how", [
    ("preempt/none", "preempts no job"),
    ("preempt/qos", "preempts by QOS, not by partition")])
def test_a_site_that_does_not_preempt_by_partition_leaves_the_lower_tiers_jobs_running(
        kind: str, how: str):
    """PreemptType preempt/none (Slurm's default) or preempt/qos: gpu's PriorityTier 10
    preempts nothing of standby's, so the job waits for the standby jobs' end, +3 h
    (before: now, as if preempt/partition_prio), and is told why."""
    p, said = placed(GPU_JOB, standby_gpus(config=f"PreemptType = {kind}\n"))
    assert (p.verdict("vega").partition, starts_in(p)) == ("gpu", 3), said
    assert any(f"partition gpu: PreemptType={kind} {how}: the running jobs of partition "
               "standby (a lower PriorityTier) keep their nodes until they end" in n
               for n in notes(p)), said
    assert not any("they count as free" in n for n in notes(p)), said


def test_under_preempt_qos_the_jobs_qos_preempts_the_qos_its_preempt_names():
    """preempt/qos; QOS normal (alice's default) has Preempt=scav, and the standby jobs run
    under scav, GraceTime 2 minutes: they stop 2 minutes after the gpu job asks, +0:02
    (before: now by tier alone; with the QOS not read, +3 h). Under another QOS whose
    Preempt names none, they keep their nodes: +3 h."""
    qos_lines = (qos("normal", Preempt="scav", PreemptMode="cluster")
                 + qos("scav", PreemptMode="requeue", GraceTime="00:02:00"))
    jobs = "".join(f"20{i}|scav|proj|OK\n" for i in range(3))
    site = vega(*GPU_STANDBY, held=whole("g01", "g02", "g03"), qos=qos_lines,
                queue_qos=jobs, config="PreemptType = preempt/qos\n")
    assert (site[1].qos["normal"].preempts, site[1].qos["scav"].grace_time_s) == (["scav"], 120)
    p, said = placed(GPU_JOB, site)
    assert round(starts_in(p) * 3600) == 120, said
    assert "PreemptType=preempt/qos: the job's QOS normal preempts QOS scav: 3 running jobs " \
        "of theirs count as free once stopped, after a GraceTime of 0:02:00" in notes(p), said
    p, said = placed(GPU_JOB, vega(*GPU_STANDBY, held=whole("g01", "g02", "g03"),
                                   qos=qos("normal") + qos("scav"), queue_qos=jobs,
                                   config="PreemptType = preempt/qos\n"))
    assert starts_in(p) == 3, said


@pytest.mark.parametrize("site_mode, hours_", [("OFF", 3), ("REQUEUE", 0)])
def test_a_qos_preempt_mode_of_cluster_goes_by_the_sites_preempt_mode(site_mode: str,
                                                                     hours_: int):
    """preempt/qos; scav (the standby jobs' QOS) has PreemptMode=cluster, the site's
    (`scontrol show config`). Site PreemptMode=OFF: nothing is preempted, the gpu job waits
    for the standby jobs' end, +3 h (before: +0:02, as if cluster were a mode of its own);
    REQUEUE: they stop after scav's GraceTime, +0:02."""
    qos_lines = (qos("normal", Preempt="scav", PreemptMode="cluster")
                 + qos("scav", PreemptMode="cluster", GraceTime="00:02:00"))
    jobs = "".join(f"20{i}|scav|proj|OK\n" for i in range(3))
    site = vega(*GPU_STANDBY, held=whole("g01", "g02", "g03"), qos=qos_lines, queue_qos=jobs,
                config=f"PreemptMode = {site_mode}\nPreemptType = preempt/qos\n")
    assert site[1].site_preempt_mode == site_mode
    p, said = placed(GPU_JOB, site)
    assert round(starts_in(p) * 3600) == (hours_ * 3600 or 120), said


def test_where_nothing_is_preempted_a_lower_tier_is_not_passed_over_as_risky():
    """The 96-CPU job fits only b01-b02 (batch and standby). Under partition_prio standby is
    passed over (batch's jobs may preempt it: test_placement_cases28); under preempt/none no
    job of standby is ever preempted, so nothing is passed over for that."""
    p, said = placed("#SBATCH -c 96 -t 2:00:00", vega(config="PreemptType = preempt/none\n"))
    assert starts_in(p) == 0, said
    assert not any("passed over: the job may be preempted" in n for n in notes(p)), said


# ---- reservations that recur or float ----------------------------------------------------

def _resv(flags: str, start_h: float, end_h: float, nodes: str = "b[01-02]") -> str:
    return reservation("rr", nodes, start_h, end_h, flags=flags, node_count=2, cores=256)


B_JOB = "#SBATCH -p batch -c 128 -t {}"  # only b01-b02 have 128 CPUs


@pytest.mark.parametrize("flags, window, limit", [
    # DAILY from 10:00 to 12:00 leaves 22 h between its windows: 23 h never fit (before: at
    # 12:00, +3 h, as if the reservation came once)
    ("MAINT,DAILY,SPEC_NODES", (1, 3), "23:00:00"),
    # WEEKLY for 6 days from 10:00 leaves a day between its windows: 30 h never fit
    # (before: at its end, +145 h)
    ("WEEKLY,SPEC_NODES", (1, 145), "1-06:00:00")])
def test_a_recurring_reservation_a_job_never_fits_between_refuses_its_nodes(
        flags: str, window: tuple[float, float], limit: str):
    p, said = placed(B_JOB.format(limit), vega(reservations=_resv(flags, *window)))
    v = p.verdict("vega")
    assert v.estimated_start is None and v.reasons, said
    recurs = flags.split(",")[-2]
    assert f"reservation rr takes b[01-02]: it recurs ({recurs}) from 2026-03-01 10:00, and " \
        f"the job, of a time limit of {limit}, never fits between its windows, so Slurm " \
        "never starts it there" in notes(p), said
    assert any("in a reservation that never leaves the job room b[01-02]" in r
               for r in v.reasons), said


@pytest.mark.parametrize("flags, window, limit, start_h, opens", [
    # DAILY: 21 h fits the 22 h between two windows: it starts at 12:00, +3 h
    ("MAINT,DAILY,SPEC_NODES", (1, 3), "21:00:00", 3, "2026-03-01 12:00"),
    # WEEKDAY from Monday 10:00 to 12:00 (+25 h to +27 h), Monday to Friday: 30 h fit only
    # between Friday 12:00 and Monday 10:00, +123 h (before: Monday 12:00, +27 h, into
    # Tuesday's window)
    ("WEEKDAY,SPEC_NODES", (25, 27), "1-06:00:00", 123, "2026-03-06 12:00")])
def test_a_job_that_fits_between_recurring_windows_starts_in_the_first_gap_long_enough(
        flags: str, window: tuple[float, float], limit: str, start_h: float, opens: str):
    p, said = placed(B_JOB.format(limit), vega(reservations=_resv(flags, *window)))
    assert starts_in(p) == start_h, said
    recurs = flags.split(",")[-2]
    assert any(f"it recurs ({recurs}): the first gap between its windows long enough for the "
               f"job opens at {opens}" in n for n in notes(p)), said


def test_an_hourly_reservation_lets_in_only_what_fits_between_its_windows():
    """HOURLY from 09:30 to 09:36: 54 minutes between windows. A 2 h job never starts on
    b01-b02 (before: at 09:36); a 50-minute one cannot end before 09:30 and starts at
    09:36, +0:36."""
    site = vega(reservations=_resv("HOURLY,SPEC_NODES", 0.5, 0.6))
    p, said = placed(B_JOB.format("2:00:00"), site)
    assert p.verdict("vega").estimated_start is None, said
    p, said = placed(B_JOB.format("50:00"), site)
    assert round(starts_in(p) * 60) == 36, said


def test_a_floating_reservation_is_never_reached():
    """TIME_FLOAT: its start stays 2 h ahead of now. A 3 h job never fits before it, and it
    never comes, so b01-b02 never take the job (before: at its shown end, +4 h); a 1 h job
    starts now."""
    site = vega(reservations=_resv("TIME_FLOAT,SPEC_NODES", 2, 4))
    p, said = placed(B_JOB.format("3:00:00"), site)
    assert p.verdict("vega").estimated_start is None, said
    assert "reservation rr takes b[01-02]: its start floats 2:00:00 ahead (TIME_FLOAT), and " \
        "the job, of a time limit of 3:00:00, never fits between its windows, so Slurm " \
        "never starts it there" in notes(p), said
    p, said = placed(B_JOB.format("1:00:00"), site)
    assert starts_in(p) == 0, said


def test_a_reservation_that_comes_once_still_lets_the_job_start_after_it():
    """The same window without a recurring flag: the 23 h job starts at its end, +3 h."""
    p, said = placed(B_JOB.format("23:00:00"), vega(reservations=_resv(
        "MAINT,SPEC_NODES", 1, 3)))
    assert starts_in(p) == 3, said


def test_nodes_outside_a_recurring_reservation_still_take_the_job():
    """A DAILY reservation on b01 alone: the 23 h job starts now on b02."""
    p, said = placed(B_JOB.format("23:00:00"), vega(reservations=_resv(
        "DAILY,SPEC_NODES", 1, 3, nodes="b01")))
    assert starts_in(p) == 0, said


def test_a_weekday_reservation_repeats_on_the_clusters_days_and_clock():
    """A cluster in Los Angeles: WEEKDAY from Monday 18:00 to 20:00 there (Tuesday 02:00 to
    04:00 UTC). Its last window of the week is Friday evening there (Saturday in UTC), and
    the next one Monday evening after summer time began (an hour earlier in UTC): a 45 h
    job fits between Friday 20:00 and Monday 18:00 there, from Saturday 04:00 UTC, +139 h
    (before: the windows fell on UTC's weekdays, Tuesday to Saturday there, and the job
    started Friday 04:00 UTC, +115 h, into Friday's window)."""
    line = re.sub(r"StartTime=[^ ]+ EndTime=[^ ]+", "StartTime=2026-03-02T18:00:00-08:00 "
                  "EndTime=2026-03-02T20:00:00-08:00", _resv("WEEKDAY,SPEC_NODES", 1, 3))
    cfg, snap = vega(reservations=line)
    cfg = cfg.model_copy(update={"metadata": {**cfg.metadata,
                                              "timezone": "America/Los_Angeles"}})
    p, said = placed(B_JOB.format("1-21:00:00"), (cfg, snap))
    assert starts_in(p) == 139, said
    assert any("it recurs (WEEKDAY): the first gap between its windows long enough for the "
               "job opens at 2026-03-07 04:00" in n for n in notes(p)), said


def test_a_daily_reservation_keeps_its_hours_on_the_clusters_clock_across_summer_time():
    """DAILY from 10:00 to 12:00 in New York, from Saturday 2026-03-07 (15:00 UTC): summer
    time begins on Sunday, and Monday's window opens at 10:00 there, 14:00 UTC (before:
    24 h steps of UTC, 15:00, 11:00 there); HOURLY keeps to whole hours of UTC."""
    line = re.sub(r"StartTime=[^ ]+ EndTime=[^ ]+", "StartTime=2026-03-07T10:00:00-05:00 "
                  "EndTime=2026-03-07T12:00:00-05:00", _resv("DAILY,SPEC_NODES", 1, 3))
    r = SlurmCommands().parse_reservations(line)[0]
    windows = _occurrences(r, NOW, ZoneInfo("America/New_York"))
    assert [(a.isoformat(), b.hour) for a, b in windows[:3]] == [
        ("2026-03-07T15:00:00+00:00", 17), ("2026-03-08T14:00:00+00:00", 16),
        ("2026-03-09T14:00:00+00:00", 16)]
    hourly = _occurrences(r.model_copy(update={"flags": ["HOURLY"]}), NOW,
                          ZoneInfo("America/New_York"))
    assert {(b - a).total_seconds() for a, b in hourly} == {7200} and \
        (hourly[30][0] - hourly[0][0]).total_seconds() == 30 * 3600


# ---- a job's own --nice ------------------------------------------------------------------

def test_nice_lowers_the_jobs_priority_behind_more_waiting_jobs():
    """selene: the job's priority is 2410, behind job 41 (3000) only: +15 h. --nice=500 takes
    500 off: 1910, behind 41 and 42 (2000): +25 h (before: +15 h, --nice not read)."""
    v, p = _one(FOUR + " --nice=500", selene(factors()))
    assert v.estimated_start == hours(25), p.explain()
    assert has_note(v, "your job's priority ~ 1910 (") and has_note(v, "less --nice 500"), \
        v.notes
    # --nice without a value is sbatch's 100: 2310, still behind 41 only
    v, p = _one(FOUR + " --nice", selene(factors()))
    assert v.estimated_start == hours(15) and has_note(v, "~ 2310 ("), v.notes


# ---- a job submitted held ----------------------------------------------------------------

def test_a_job_submitted_held_is_said_to_start_only_once_released():
    """sbatch -H: nothing starts the job until it is released; the start shown is the one a
    release now gives, and --explain says so (before: nothing said)."""
    p, said = placed("#SBATCH -H -c 8 -t 2:00:00", vega(held=whole(*NODES[:6])))
    assert any("submitted held (sbatch -H) and starts only once released (scontrol release)"
               in n for n in p.verdict("vega").not_checked), said
    plain, _ = placed("#SBATCH -c 8 -t 2:00:00", vega(held=whole(*NODES[:6])))
    assert not any("held" in n for n in plain.verdict("vega").not_checked)


# ---- Grid Engine: the cell's maxujobs ----------------------------------------------------

def _cell(maxujobs: str, *owners_left: tuple[str, float], waiting: str = ""):
    """test_placement_pbs_resv_ge_rqs's cell (s1, s2: 16 slots each, all.q), probed as
    alice; one running 1-slot job on s1 for each (owner, hours left), and `qconf -ssconf`
    with `maxujobs`; `waiting`: pending entries of the queue."""
    jobs = {"s1": [_ge_entry(str(i + 1), who, 1, left)
                   for i, (who, left) in enumerate(owners_left)]}
    cfg, snap = _ge_site(jobs=jobs, groups={"sconf": f"maxujobs {maxujobs}\n"
                                                      "max_reservation 0\n"})
    if waiting:
        more = SgeCommands(tz=timezone.utc).parse_status(
            f"<?xml version='1.0'?><job_info><queue_info></queue_info><job_info>{waiting}"
            "</job_info></job_info>")
        snap = snap.model_copy(update={"jobs": [*snap.jobs, *more]})
    return cfg, snap


def _pending(jid: str, owner: str, h_rt: int) -> str:
    return (f'<job_list state="pending"><JB_job_number>{jid}</JB_job_number>'
            f"<JB_name>j{jid}</JB_name><JB_owner>{owner}</JB_owner><state>qw</state>"
            f"<JB_submission_time>2026-03-01T08:00:00</JB_submission_time><slots>1</slots>"
            f'<hard_request name="h_rt" resource_contribution="0.000000">{h_rt * 3600}'
            "</hard_request></job_list>")


def test_maxujobs_is_read_from_the_scheduler_configuration():
    assert _cell("2")[1].sge_max_user_jobs == 2
    assert _cell("0")[1].sge_max_user_jobs is None  # 0: no limit


def test_a_user_at_maxujobs_waits_for_one_of_their_jobs_to_end():
    """maxujobs 2 and alice runs two jobs (ending at +1 h and +2 h) though 30 slots are
    free: her new job waits for the first to end, +1 h (before: now)."""
    v = run(_smp(4), _cell("2", ("alice", 1), ("alice", 2))).verdict("delta")
    assert v.estimated_start == hours(1), (v.reasons, v.notes)
    assert any("the cell's maxujobs is 2 and 2 of your jobs run: it waits until one of them "
               "ends" in n for n in v.notes + v.waits_for), v.notes


def test_other_users_jobs_and_a_limit_not_reached_leave_the_job_to_start_now():
    assert run(_smp(4), _cell("2", ("bob", 1), ("bob", 2))).verdict(
        "delta").estimated_start == NOW
    assert run(_smp(4), _cell("3", ("alice", 1), ("alice", 2))).verdict(
        "delta").estimated_start == NOW


def test_the_users_older_waiting_job_takes_the_freed_turn_first():
    """maxujobs 2, alice runs two (to +1 h, +2 h) and her older 3 h job waits for the limit:
    it takes the turn at +1 h, the new job the next at +2 h."""
    v = run(_smp(4), _cell("2", ("alice", 1), ("alice", 2),
                           waiting=_pending("9", "alice", 3))).verdict("delta")
    assert v.estimated_start == hours(2), (v.reasons, v.notes)
    assert any("1 older job of yours waiting ahead" in n for n in v.notes + v.waits_for)


def _admitting(max_u_jobs: int, max_jobs: int, *owners: str):
    """The cell with one running job of each of `owners` (to +1 h) and the global
    configuration's max_u_jobs and max_jobs as `qconf -sconf global` prints them."""
    jobs = {"s1": [_ge_entry(str(i + 1), who, 1, 1) for i, who in enumerate(owners)]}
    return _ge_site(jobs=jobs, groups={"sconf": "maxujobs 0\nmax_reservation 0\n"
                                                f"max_u_jobs {max_u_jobs}\n"
                                                f"max_jobs {max_jobs}\n"})


def test_max_u_jobs_and_max_jobs_are_read_after_the_scheduler_configuration():
    snap = _admitting(2, 100)[1]
    assert (snap.sge_max_u_jobs, snap.sge_max_jobs, snap.sge_max_user_jobs) == (2, 100, None)
    assert "qconf -sconf global" in " ".join(SgeCommands().snapshot_argvs()["sconf"])


@pytest.mark.parametrize("limits, owners, said", [
    ((2, 0), ("alice", "alice"), "your active jobs (waiting or running) are 2, and the "
                                 "cell's max_u_jobs (qconf -sconf) admits 2"),
    ((0, 3), ("bob", "bob", "carol"), "the cell's active jobs (waiting or running) are 3, "
                                      "and the cell's max_jobs (qconf -sconf) admits 3")])
def test_qsub_refuses_a_job_past_max_u_jobs_or_max_jobs(limits, owners, said):
    """max_u_jobs 2 and alice has 2 jobs active; or max_jobs 3 and the cell has 3: qsub
    refuses a new one, though the cell has 30 free slots (before: it started now)."""
    v = run(_smp(4), _admitting(*limits, *owners)).verdict("delta")
    assert v.estimated_start is None and any(said in r for r in v.reasons), v.reasons


def test_below_max_u_jobs_and_max_jobs_the_job_starts_now():
    v = run(_smp(4), _admitting(2, 3, "alice", "bob")).verdict("delta")
    assert v.estimated_start == NOW, v.reasons


# ---- the real test bed: what scontrol prints of these ------------------------------------

@pytest.mark.testbed
@pytest.mark.parametrize("flags", ["DAILY", "TIME_FLOAT"])
def test_the_test_beds_scontrol_prints_the_flags_and_settings_read_here(tb, flags: str):
    """On alpha (Slurm 22.05): a reservation made with Flags=DAILY or TIME_FLOAT is read
    back with that flag and its 2 h window starting an hour ahead, and `scontrol show
    config` gives the PreemptType and PreemptExemptTime lines parse_preemption reads.
    The reservation is deleted after."""
    base, alpha = base_dir(), cluster("alpha")
    node = _ctl(base, alpha, "sinfo", "-h", "-N", "-o", "%N").stdout.split()[0]
    name = f"cases30-{uuid.uuid4().hex[:8]}"
    start = "now+60minutes" if flags == "TIME_FLOAT" else \
        (datetime.now() + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S")
    _ctl(base, alpha, "scontrol", "create", "reservation", f"ReservationName={name}",
         f"StartTime={start}", "Duration=120", f"Nodes={node}", "Users=root",
         f"Flags={flags}")
    try:
        shown = _ctl(base, alpha, "scontrol", "show", "reservation", "-o", name).stdout
        (r,) = SlurmCommands(tz=datetime.now().astimezone().tzinfo).parse_reservations(shown)
        assert flags in r.flags and r.nodes == [node], shown
        assert r.start is not None and r.end is not None, shown
        assert r.end - r.start == timedelta(hours=2), shown
        ahead = (r.start - datetime.now().astimezone()).total_seconds()
        assert 55 * 60 < ahead <= 61 * 60, shown
    finally:
        _ctl(base, alpha, "scontrol", "delete", f"ReservationName={name}", check=False)
    config = _ctl(base, alpha, "scontrol", "show", "config").stdout
    kind, exempt = SlurmCommands.parse_preemption(config)
    assert kind is not None and kind.startswith("preempt/"), config
    assert exempt is None and "PreemptExemptTime" in config  # 00:00:00 here: none


def test_two_reservations_of_one_window_on_a_node_hold_it_as_one():
    """A DAILY one and a one-off one, both 10:00 to 12:00 on b01-b02: the 21 h job starts
    at 12:00, +3 h (two windows alike once made the comparison fail)."""
    both = _resv("DAILY,SPEC_NODES", 1, 3) + _resv("SPEC_NODES", 1, 3).replace(
        "ReservationName=rr", "ReservationName=once")
    p, said = placed(B_JOB.format("21:00:00"), vega(reservations=both))
    assert starts_in(p) == 3, said
