"""Array throttles of Grid Engine (`qsub -tc N`, read from `qstat -j`'s `maximum
concurrency:`) and LSF (`-J "name[1-100]%N"`, read from `bjobs -A -w`'s ARRAY_SPEC) in
placement's view of the queue: a waiting array's tasks run in at most N lanes, less its
tasks already running (`placement_sim.array_lanes`), as Slurm's `%k` does. Each site is
built from its scheduler's own outputs; each start is worked by hand."""

from __future__ import annotations

import os
import stat
import subprocess
from datetime import timedelta
from pathlib import Path

from test_placement_cases import NOW, hours, only, run
from test_placement_cases8 import _wjob, wren
from test_placement_cases11 import _ge_job, gaia

from diamond_jupyter.dialects.lsf_commands import LsfCommands, parse_array_limits
from diamond_jupyter.dialects.sge_commands import SgeCommands, parse_throttles, waiting_arrays
from diamond_jupyter.model import JobState

H = 3600


# ------------------------------------------------------------------ Grid Engine -tc

def _ge_task(jid: str, task: int, slots: int, left_h: float) -> str:
    """A running task of array `jid` (`qstat -f -xml -r`): h_rt 1 h, `left_h` left."""
    return _ge_job(jid, "bob", slots, left_h, limit_h=1).replace(
        "</job_list>", f"<tasks>{task}</tasks></job_list>")


def _ge_waiting(jid: str, tasks: str, slots: int) -> str:
    """The array's waiting range (qstat's job_info), h_rt 1 h, pe smp `slots`."""
    return (f'<job_list state="pending"><JB_job_number>{jid}</JB_job_number>'
            f"<JB_name>sweep</JB_name><JB_owner>bob</JB_owner><state>qw</state>"
            "<JB_submission_time>2026-01-01T10:00:00</JB_submission_time>"
            f'<slots>{slots}</slots><requested_pe name="smp">{slots}</requested_pe>'
            '<hard_request name="h_rt" resource_contribution="0.000000">3600</hard_request>'
            f"<tasks>{tasks}</tasks></job_list>")


THROTTLED_30 = """job_number:                 30
maximum concurrency:        3
"""


def _gaia_array(throttles: str = THROTTLED_30):
    """gaia (s1, s2: 16 slots each) under Grid Engine's default scheduler configuration
    (max_reservation 0: whatever fits starts). Array 30 of 8-slot tasks of 1 h: tasks 1
    and 2 run on s1 with half an hour left, tasks 3-100 (98) wait; s2 is empty."""
    cfg, snap = gaia({"s1": [_ge_task("30", 1, 8, 0.5), _ge_task("30", 2, 8, 0.5)]}, {},
                     pending=_ge_waiting("30", "3-100:1", 8), throttles=throttles)
    return cfg, snap.model_copy(update={"backfill": "none"})


def test_grid_engine_reads_each_arrays_tc_from_qstat_j():
    assert parse_throttles(THROTTLED_30) == {"30": 3}
    # several jobs; 0 (no limit set), an unread value and a line before any job: none
    text = ("maximum concurrency:        7\njob_number:                 31\n"
            "maximum concurrency:        0\njob_number:                 32\n"
            "maximum concurrency:        x\njob_number:                 33\n"
            "maximum concurrency:        12\n")
    assert parse_throttles(text) == {"33": 12}
    snap = _gaia_array()[1]
    waiting = [j for j in snap.jobs if j.state == JobState.PENDING]
    # the waiting range under its task record's id, with its array's throttle
    assert [(j.native_id, j.array_limit) for j in waiting] == [("30.3-100:1", 3)]
    assert sorted(j.native_id for j in snap.running) == ["30.1", "30.2"]
    # asked after every queue read that has an array waiting, never kept
    assert "throttles" not in SgeCommands().snapshot_argvs()


def test_grid_engine_throttled_array_leaves_room_for_the_probe():
    """-tc 3 with two tasks running: one lane may start now (8 slots of s2), the other two
    when the running tasks end (+0.5 h, on s1). An 8-slot probe of 1 h fits in s2's other
    8 slots now. Without the throttle read, four lanes of the 98 tasks (two hosts of two
    8-slot tasks) take s2 now and s1 at +0.5 h: a lane of 24 tasks on s1 ends first, at
    +24.5 h, and the probe starts then."""
    job = "#$ -pe smp 8\n#$ -l h_rt=1:00:00"
    v = only(run(job, _gaia_array()), "gaia", "all.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = only(run(job, _gaia_array(throttles="")), "gaia", "all.q")
    assert v.estimated_start == hours(24.5)


def test_grid_engine_full_throttle_waits_for_the_running_tasks():
    """-tc 2, both taken by the running tasks: both lanes wait for their end (+0.5 h), so
    nothing of the array starts now and s2's 16 slots are free: an 8-slot probe of 1 h
    starts now, and so does one of 2 h (the lanes go to s1, freed at +0.5 h; with no
    reservation, Grid Engine's default, nothing holds s2 for them)."""
    site = _gaia_array(throttles="job_number: 30\nmaximum concurrency: 2\n")
    lanes = [j for j in site[1].jobs if j.state == JobState.PENDING]
    assert [j.array_limit for j in lanes] == [2]
    for walltime in ("1:00:00", "2:00:00"):
        v = only(run(f"#$ -pe smp 8\n#$ -l h_rt={walltime}", site), "gaia", "all.q")
        assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_the_users_own_array_tasks_are_marked_in_the_queue_view():
    """The dashboard's rows of a Grid Engine array's tasks (`30.1`, `30.3-100:1`) are the
    user's when the engine submitted the array (its native id `30`)."""
    from diamond_jupyter.dashboard import queue_rows

    rows = queue_rows(_gaia_array()[1], NOW, {"30": "gaia:30"})
    assert [(r["id"], r["job"]) for r in rows] == [
        ("30.1", "gaia:30"), ("30.2", "gaia:30"), ("30.3-100:1", "gaia:30")]


def _stand_in(tmp_path: Path, name: str, body: str) -> None:
    p = tmp_path / name
    p.write_text("#!/bin/sh\n" + body)
    p.chmod(p.stat().st_mode | stat.S_IXUSR)


def test_grid_engine_throttle_query_asks_qstat_j_for_the_waiting_arrays_only(tmp_path):
    """The follow-up's shell text, run against a stand-in qstat: the ids of the jobs whose
    waiting record in the queue read has tasks go to one `qstat -j ID,ID`, whose other lines
    are left out; with no array waiting (no task element, or none in the pending list),
    nothing is asked."""
    # qstat -xml writes each element on a line of its own
    xml = "\n".join(("<?xml version='1.0'?><job_info><queue_info><Queue-List><name>all.q@s1"
                     "</name>" + _ge_task("29", 1, 1, 0.5) + "</Queue-List></queue_info>"
                     "<job_info>" + _ge_waiting("41", "4,5", 1) + _ge_waiting("30", "3-100:1", 8)
                     + '<job_list state="pending"><JB_job_number>42</JB_job_number>'
                     "<state>qw</state><slots>1</slots></job_list></job_info></job_info>"
                     ).replace("><", ">\n<").splitlines()) + "\n"
    _stand_in(tmp_path, "qstat", f"""case "$1" in
  -j) echo "$2" > "{tmp_path}/asked"; for j in $(echo "$2" | tr , ' '); do
        printf 'job_number:                 %s\\nexec_file:   job_scripts/%s\\n' "$j" "$j"
        [ "$j" = 30 ] && printf 'maximum concurrency:        3\\n'
        printf '%s\\n' ==============================================================
      done ;;
esac
""")
    argvs = SgeCommands().followup_argvs({"queue": xml})
    assert list(argvs) == ["throttles"]  # array 29's running task is not waiting
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    out = subprocess.run(argvs["throttles"], capture_output=True, text=True, env=env,
                         check=True).stdout
    assert (tmp_path / "asked").read_text().strip() == "30,41"
    assert out.splitlines() == ["job_number:                 30",
                                "maximum concurrency:        3",
                                "job_number:                 41"]
    assert parse_throttles(out) == {"30": 3}
    assert waiting_arrays(xml.replace("<tasks>", "<x>").replace("</tasks>", "</x>")) == []
    assert SgeCommands().followup_argvs({"queue": xml.replace("<tasks>", "<x>")}) == {}
    assert SgeCommands().followup_argvs({}) == {}


def _gaia_site(tmp_path: Path, outputs: dict[str, str]):
    """gaia on the local transport: stand-in qstat, qhost and qconf print `outputs` (as
    `gaia_outputs` gives them) and note each qstat call's arguments in `qstat-calls`."""
    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.sites import Site
    from diamond_jupyter.transports import make_transport

    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for name in ("queue", "hosts", "queues", "complexes", "throttles"):
        (tmp_path / name).write_text(outputs[name] + "\n")  # as the commands end theirs
    _stand_in(bin_, "qstat", f"""echo "$*" >> "{tmp_path}/qstat-calls"
case "$1" in -j) cat "{tmp_path}/throttles" ;; *) cat "{tmp_path}/queue" ;; esac
""")
    _stand_in(bin_, "qhost", f'cat "{tmp_path}/hosts"\n')
    _stand_in(bin_, "qconf", f"""case "$1" in
  -sql) echo all.q ;; -sq) cat "{tmp_path}/queues" ;; -sc) cat "{tmp_path}/complexes" ;;
esac
""")
    cfg = SiteConfig(name="gaia", scheduler="sge", workdir=str(tmp_path),
                     preamble=f'PATH="{bin_}:$PATH"', transport={"kind": "local"})
    return Site(cfg, transport=make_transport(cfg.transport, "gaia", workdir=str(tmp_path)))


async def test_grid_engine_snapshot_asks_throttles_only_when_an_array_waits(tmp_path):
    """The snapshot's batch holds no throttle query: `qstat -j` follows it only when the
    queue it read has an array with tasks waiting. Without one, the queue is the only qstat
    (before, a second whole-queue `qstat -xml -s p` ran on every snapshot); with one, its
    throttle is still read."""
    from test_placement_cases11 import gaia_outputs

    running = {"s1": [_ge_task("30", 1, 8, 0.5), _ge_task("30", 2, 8, 0.5)]}
    calls = tmp_path / "quiet" / "qstat-calls"
    (tmp_path / "quiet").mkdir()
    site = _gaia_site(tmp_path / "quiet", gaia_outputs(running, {}, pending=_ge_waiting(
        "31", "", 8).replace("<tasks></tasks>", ""), throttles=THROTTLED_30))
    try:
        snap = await site.snapshot(max_age_s=0)
        assert [j.native_id for j in snap.jobs if j.state == JobState.PENDING] == ["31"]
        assert calls.read_text().splitlines() == ["-f -xml -r -u *"]
        before = site.scheduler_commands
        await site.snapshot(max_age_s=0)  # the capabilities are cached: the queue alone
        assert site.scheduler_commands - before == 1
        assert calls.read_text().splitlines() == ["-f -xml -r -u *"] * 2
    finally:
        await site.close()
    calls = tmp_path / "array" / "qstat-calls"
    (tmp_path / "array").mkdir()
    site = _gaia_site(tmp_path / "array", gaia_outputs(
        running, {}, pending=_ge_waiting("30", "3-100:1", 8), throttles=THROTTLED_30))
    try:
        snap = await site.snapshot(max_age_s=0)
        assert [(j.native_id, j.array_limit) for j in snap.jobs
                if j.state == JobState.PENDING] == [("30.3-100:1", 3)]
        assert calls.read_text().splitlines() == ["-f -xml -r -u *", "-j 30"]
        before = site.scheduler_commands
        await site.snapshot(max_age_s=0)
        assert site.scheduler_commands - before == 2  # the queue, then its throttles
    finally:
        await site.close()


# ------------------------------------------------------------------ LSF %k

BJOBS_A = """JOBID   ARRAY_SPEC            OWNER  NJOBS PEND DONE  RUN EXIT SSUSP USUSP PSUSP
500     sweep[1-100]%4        bob      100   98    0    2    0     0     0     0
501     other[1-10]           bob       10   10    0    0    0     0     0     0
"""


def _element(jid: str, index: int, stat_: str, host: str | None = None,
             left_h: float = 0.5) -> dict:
    """An element of array 500 (`bjobs -o ... -json`): 32 slots, 1 h."""
    if stat_ == "RUN":
        e = _wjob(jid, "bob", 32, host or "", left_h, limit_h=1)
    else:
        e = {"JOBID": jid, "STAT": "PEND", "USER": "bob", "QUEUE": "normal", "SLOTS": "32",
             "RUNTIMELIMIT": "60.0", "SUBMIT_TIME": (NOW - timedelta(hours=1)).strftime(
                 "%b %d %H:%M:%S %Y")}
    return {**e, "JOB_NAME": f"sweep[{index}]"}


def _wren_array(arrays: str = BJOBS_A):
    """wren (w1, w2: 32 CPUs; w3, w4: 64). Array 500 of 32-slot elements of 1 h: 1 and 2
    run on w1 and w2 with half an hour left, 3-100 (98) wait; w3 and w4 are empty."""
    jobs = [_element("500", 1, "RUN", "w1"), _element("500", 2, "RUN", "w2"),
            *(_element("500", i, "PEND") for i in range(3, 101))]
    return wren(*jobs, arrays=arrays)


def test_lsf_reads_each_arrays_limit_from_bjobs_a():
    assert parse_array_limits(BJOBS_A) == {"500": 4}
    # a spec with steps and lists; a zero, a header, other lines: none
    assert parse_array_limits("7 a.b-c[1-9:2,20]%12 u 6 0 0 0 0 0 0 0\n"
                              "8 z[1-3]%0 u 3 3 0 0 0 0 0 0\nJOBID ARRAY_SPEC\n"
                              "No job array found\n") == {"7": 12}
    snap = _wren_array()[1]
    assert {j.array_limit for j in snap.jobs} == {4}
    assert len(snap.jobs) == 100 and snap.jobs[2].native_id == "500[3]"
    assert "arrays" in LsfCommands.live_outputs


def test_lsf_throttled_array_leaves_hosts_to_the_probe():
    """%4 with two elements running: two lanes start now (w3, 64 slots: both there, or one
    on each of w3 and w4), two at +0.5 h on w1 and w2. A 64-slot probe on one host of 1 h
    (span[hosts=1]) then finds w4 free now. Without the limit read, the 98 elements each
    wait as a job of their own ahead of the probe: four start at each whole hour (w3, w4
    two each) and two at each half hour (w1, w2), 94 by +15 h and 96 by +15.5 h; the last
    two take w3 at +16 h, and the probe w4 then."""
    job = '#BSUB -n 64\n#BSUB -R "span[hosts=1]"\n#BSUB -W 1:00'
    v = only(run(job, _wren_array()), "wren", "normal")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = only(run(job, _wren_array(arrays="")), "wren", "normal")
    assert v.estimated_start == hours(16)


# ------------------------------------------------------------------ Slurm %k, its reason

def test_a_slurm_lane_held_by_a_full_throttle_waits_whatever_its_reason():
    """`900_[3-10%2]` (whole-node tasks of 1 h) waiting for Priority, its two running tasks
    on a1 and a2 with half an hour left: the throttle is full, so no task starts before
    +0.5 h and a two-node probe takes a3 and a4 now. A reason that waits for nothing else
    (Priority, Resources) had let the held lanes start at once, and the probe waited for
    a1 and a2, +0.5 h."""
    from test_placement import alpha, pending, running, spec, verdict

    from diamond_jupyter.placement import place

    jobs = [running("900_1", "a1", 32, left_s=H // 2, walltime_s=H),
            running("900_2", "a2", 32, left_s=H // 2, walltime_s=H),
            pending("900_[3-10%2]", 1, 32, H, reason="Priority")]
    cfg, snap = alpha(jobs, alloc=(32, 32, 0, 0))
    v = verdict(place(spec(nodes=2, cpus=32, walltime=H), [(cfg, snap)], now=snap.taken_at),
                "alpha")
    assert (v.verdict, v.estimated_start) == ("READY", snap.taken_at)


# ------------------------------------------------------------------ translation

THROTTLED = {
    "slurm": ("#!/bin/bash\n#SBATCH --array=1-100%5\n#SBATCH -t 1:00:00\n./app\n",
              "#SBATCH --array=1-100%5"),
    "sge": ("#!/bin/bash\n#$ -t 1-100\n#$ -tc 5\n#$ -l h_rt=1:00:00\n./app\n", "#$ -tc 5"),
    "lsf": ('#!/bin/bash\n#BSUB -J "sweep[1-100]%5"\n#BSUB -W 1:00\n./app\n', "[1-100]%5"),
    "pbs": ("#!/bin/bash\n#PBS -J 1-100%5\n#PBS -l walltime=1:00:00\n./app\n",
            "#PBS -J 1-100%5"),
}


def test_an_array_throttle_translates_between_every_pair_or_is_said_dropped():
    """Slurm `%5`, Grid Engine `-tc 5`, LSF `[1-100]%5` and PBS Pro `-J 1-100%5` carry the
    throttle each to each; flux has no arrays: the array is said dropped, throttle and
    all, never left out silently."""
    from diamond_jupyter.dialects.translate import translate

    for src, (script, _) in THROTTLED.items():
        for dst, (_, carried) in THROTTLED.items():
            if dst != src:
                out, said, spec = translate(script, dst, src)
                assert carried in out, (src, dst, out)
                assert spec.array is not None and spec.array.expression.endswith("%5")
                assert not any("array" in w for w in said), (src, dst, said)
        out, said, _ = translate(script, "flux", src)
        assert [w for w in said if "array 1-100%5" in w] == [
            "dropped: array 1-100%5 (flux batch has no arrays; use flux bulksubmit)"], said


def test_the_users_own_array_tasks_run_their_own_runtime_in_the_plan():
    """The user's array 30 is expected to run 45 min a task (the engine knows it by the
    array's id): its running tasks `30.1` and `30.2`, half an hour in, give s1 back after
    15 min, not at their class's walltime end (+30 min)."""
    from diamond_jupyter.placement import site_nodes
    from diamond_jupyter.placement_sim import build_state, pending_demands, recalibrated

    snap = _gaia_array()[1]
    nodes = site_nodes(snap)
    members = {"all.q": [n.name for n in nodes]}
    st = build_state(snap, nodes, members, NOW, {})
    queue = pending_demands(snap, st, members, NOW, {})
    same = recalibrated(st, queue, lambda *_: 1.0)[0]
    mine = recalibrated(st, queue, lambda *_: 1.0, own={"30": 45 * 60.0})[0]
    assert sorted(r[0] for r in same.releases) == [H / 2, H / 2]
    assert sorted(r[0] for r in mine.releases) == [H / 4, H / 4]
