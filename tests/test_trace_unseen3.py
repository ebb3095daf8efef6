"""The third sweep of SWF logs unlike the shared ones (`fixtures/swf_unseen3/make_fixtures.py`):
lines in start order, dependent jobs, every status, lost sizes, no overuse, an interactive
queue, a machine idle most of the time, UTF-16, a log ending in a rush, a log where nothing
ran; and the command line's edges: numbers that are not (nan, inf), scales of 1 and 3600,
windows at the end and beyond, hash seeds, cut-off gzips, directories, long logs' memory."""

from __future__ import annotations

import asyncio
import gzip
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from sweep_helpers import (
    assert_regenerated,
    fake_load_site,
    replay_number,
    sound_replays,
    swf_rows,
    traced_memory,
    whole_window,
)

from benchmarks import prediction
from diamond_jupyter.cli.main import main as cli
from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed import load
from diamond_jupyter.testbed.clusters import CLUSTERS, cluster
from diamond_jupyter.testbed.load import LoadJob, submit_argv
from diamond_jupyter.testbed.trace import plan_replay, plan_replays, read_swf

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "swf_unseen3"
UNSEEN = sorted(FIXTURES.glob("*.swf"))
RAN_SOME = [p for p in UNSEEN if p.stem != "none_ran"]
SITES = [c.name for c in CLUSTERS]


def _cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60
         ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                          capture_output=True, text=True, timeout=timeout,
                          cwd=HERE.parent, env={**os.environ, **(env or {})})


# ---- the fixtures ------------------------------------------------------------------------

def test_the_fixtures_are_there_small_and_regenerated_alike(tmp_path: Path) -> None:
    assert len(UNSEEN) == 10, UNSEEN
    assert all(p.stat().st_size < 50_000 for p in UNSEEN)
    assert_regenerated(FIXTURES, UNSEEN, tmp_path)


@pytest.mark.parametrize("site", SITES)
@pytest.mark.parametrize("path", RAN_SOME, ids=[p.stem for p in RAN_SOME])
def test_every_log_reads_and_replays_sensibly(path: Path, site: str) -> None:
    log = read_swf(path)
    ran = {j.number for j in log.jobs if j.run > 0 and j.procs > 0}
    for plan in sound_replays(log, site, ran):  # arrivals in sparse.swf too
        assert 0 < plan.log_utilization <= 1.0, plan.summary()
        names = [j.name for j in plan.jobs]
        for k, j in enumerate(plan.jobs):
            assert 0 <= j.at_s <= 600 and j.runtime_s >= 0
            assert j.after is None or j.after in names[:k], j  # waits for an earlier job


# ---- lines in start order, jobs of one second ---------------------------------------------

def test_lines_in_start_order_are_read_in_submit_order() -> None:
    """start_order.swf lists jobs as they started; bursts of six share a submit second and
    are listed from the highest number down. Read: by submit time, then job number."""
    rows = swf_rows(FIXTURES / "start_order.swf")
    assert [r[1] for r in rows] != sorted(r[1] for r in rows)
    log = read_swf(FIXTURES / "start_order.swf")
    assert [(j.submit, j.number) for j in log.jobs] == sorted((r[1], int(r[0])) for r in rows)


def test_a_burst_of_one_second_arrives_at_once_in_job_number_order() -> None:
    log = read_swf(FIXTURES / "start_order.swf")
    second = log.jobs[1].submit  # the first burst
    burst = [j.number for j in log.jobs if j.submit == second]
    assert len(burst) == 6
    plan = plan_replay(log, cluster("beta"), start=second, duration_s=0.5)
    arrived = [j for j in plan.jobs if j.name.startswith("trace-arrive-")]
    assert [replay_number(j.name) for j in arrived] == sorted(burst)
    assert {j.at_s for j in arrived} == {0.0}


def test_a_log_in_start_order_plans_as_its_copy_in_submit_order(tmp_path: Path) -> None:
    text = (FIXTURES / "start_order.swf").read_text().splitlines()
    header = [t for t in text if t.startswith(";")]
    jobs = sorted((t for t in text if not t.startswith(";")),
                  key=lambda t: (float(t.split()[1]), int(t.split()[0])))
    copy = tmp_path / "start_order.swf"  # the same name: the same seeded draws
    copy.write_text("\n".join(header + jobs) + "\n")
    for seed in (1, 2, 3):
        a = plan_replay(read_swf(FIXTURES / "start_order.swf"), cluster("gamma"), seed=seed)
        b = plan_replay(read_swf(copy), cluster("gamma"), seed=seed)
        assert a.jobs == b.jobs and a.window == b.window


# ---- dependent jobs -----------------------------------------------------------------------

def test_a_dependent_job_waits_for_its_replayed_predecessor() -> None:
    """chains.swf: 60 jobs name their preceding job (field 17) and were submitted their
    think time (field 18) after it ended. Replayed whole on beta, each is held until its
    predecessor ends (before: submitted at its time whatever the site did with the
    predecessor), and arrives no earlier than the predecessor's end in the log."""
    rows = swf_rows(FIXTURES / "chains.swf")
    preceding = {int(r[0]): int(r[16]) for r in rows if r[16] > 0}
    assert len(preceding) == 60
    log = read_swf(FIXTURES / "chains.swf")
    plan = plan_replay(log, cluster("beta"), start=log.span[0], duration_s=whole_window(log))
    by_number = {replay_number(j.name): j for j in plan.jobs}
    assert len(by_number) == len(rows)  # beta holds every job: none thinned
    for number, pred in preceding.items():
        job, before = by_number[number], by_number[pred]
        assert job.after == before.name, job
        assert job.at_s >= before.at_s + before.runtime_s - 0.01, (job, before)
    assert all(j.after is None for n, j in by_number.items() if n not in preceding)


def test_a_dependent_job_whose_predecessor_was_thinned_is_not_held() -> None:
    log = read_swf(FIXTURES / "chains.swf")
    preceding = {j.number: j.preceding for j in log.jobs}
    held = 0
    for seed in range(1, 9):
        plan = plan_replay(log, cluster("delta"), seed=seed)  # 16 CPUs: thinned
        names = {replay_number(j.name): j.name for j in plan.jobs}
        assert plan.arrivals_kept < plan.arrivals_in_log
        for j in plan.jobs:
            pred = preceding[replay_number(j.name)]
            assert j.after == names.get(pred), j
            held += j.after is not None
    assert held > 0


def test_a_held_job_is_submitted_with_its_predecessors_id() -> None:
    j = LoadJob(at_s=0, site="alpha", nodes=1, cpus_per_node=2, runtime_s=5, walltime_min=1,
                name="trace-arrive-5", after="trace-arrive-4")
    slurm = submit_argv(j, "slurm", "1234")
    assert "--dependency=afterany:1234" in slurm and slurm[-2:] == ["--wrap", "sleep 5"]
    sge = submit_argv(j, "sge", "77")
    assert sge[sge.index("-hold_jid") + 1] == "77"
    assert not any("depend" in a or a == "-hold_jid" for a in
                   submit_argv(j, "slurm") + submit_argv(j, "sge"))


def test_load_run_holds_a_job_on_the_id_its_predecessor_got(monkeypatch) -> None:
    """The site's id of the predecessor (sbatch --parsable prints "id;cluster") goes to the
    dependent job; a dependency the scheduler refuses (the predecessor long purged) is
    dropped and the job submitted plain."""
    calls: list[list[str]] = []

    def answer(argv: list[str]) -> SimpleNamespace:
        calls.append(argv)
        refused = "--dependency=afterany:102" in argv  # b's id: forgotten
        return SimpleNamespace(exit_status=1 if refused else 0,
                               stdout=f"{100 + len(calls)};alpha\n")

    fake_load_site(monkeypatch, "alpha", "slurm", answer)
    base = dict(at_s=0.0, site="alpha", nodes=1, cpus_per_node=1, runtime_s=1, walltime_min=1)
    jobs = [LoadJob(**base, name="a"), LoadJob(**base, name="b", after="a"),
            LoadJob(**base, name="c", after="b")]
    res = asyncio.run(load.run("unused.yaml", jobs))
    assert res["submitted"] == {"alpha": 3} and res["failed"] == 0
    assert "--dependency=afterany:101" in calls[1]  # b after a (id 101)
    assert "--dependency=afterany:102" in calls[2]  # c after b (id 102): refused ...
    assert not any(a.startswith("--dependency") for a in calls[3])  # ... then plain


def test_the_dry_run_says_what_a_job_waits_for(capsys) -> None:
    assert cli(["testbed", "load", "--trace", str(FIXTURES / "chains.swf"), "--site", "beta",
                "--start", "892", "--duration", "7000", "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "after=trace-arrive-" in text


# ---- statuses, sizes, runtimes ------------------------------------------------------------

def test_every_status_replays_what_ran_and_only_that() -> None:
    """status_mix.swf: completed (1), failed after running or at once (0), cancelled in the
    queue (5 with wait and run -1, or run 0) or while running (5), lost (-1), and parts of
    swapped jobs without a summary (2, 2, 3 or 4): each part that ran is a job of its own."""
    rows = swf_rows(FIXTURES / "status_mix.swf")
    assert {int(r[10]) for r in rows} == {-1, 0, 1, 2, 3, 4, 5}
    log = read_swf(FIXTURES / "status_mix.swf")
    plan = plan_replay(log, cluster("beta"), start=log.span[0], duration_s=whole_window(log))
    want: dict[int, int] = {}
    for r in rows:
        if r[3] > 0:
            want[int(r[0])] = want.get(int(r[0]), 0) + 1
    got: dict[int, int] = {}
    for j in plan.jobs:
        got[replay_number(j.name)] = got.get(replay_number(j.name), 0) + 1
    assert got == want
    parts = {int(r[0]) for r in rows if r[10] in (2, 3, 4)}
    assert parts and all(got[n] == 3 for n in parts)
    assert {f"trace-arrive-{n}.3" for n in parts} <= {j.name for j in plan.jobs}


def test_swapped_out_parts_load_the_machine_only_while_they_ran() -> None:
    """Over a window holding the whole log, its busy processor-seconds are the sum of run
    x processors of every line that ran: the ten minutes between parts are not busy."""
    rows = swf_rows(FIXTURES / "status_mix.swf")
    log = read_swf(FIXTURES / "status_mix.swf")
    last_end = max(r[1] + max(r[2], 0) + r[3] for r in rows)
    duration = (last_end - log.span[0]) / 60 + 1
    plan = plan_replay(log, cluster("beta"), start=log.span[0], duration_s=duration)
    busy = sum(r[3] * r[4] for r in rows if r[3] > 0 and r[4] > 0)
    assert plan.log_utilization == pytest.approx(busy / (64 * duration * 60))


def test_jobs_that_ran_without_a_size_are_counted_in_a_note() -> None:
    """sizes_missing.swf: 20 jobs ran with 0 or -1 allocated and -1 requested processors.
    They cannot be replayed; before, they were dropped without a word."""
    rows = swf_rows(FIXTURES / "sizes_missing.swf")
    sizeless = sorted(int(r[0]) for r in rows if r[3] > 0 and r[4] <= 0 and r[7] <= 0)
    assert len(sizeless) == 20
    log = read_swf(FIXTURES / "sizes_missing.swf")
    assert "20 job(s) ran with no processor count" in log.notes[0]
    assert f"job {sizeless[0]}" in log.notes[0]
    plan = plan_replay(log, cluster("alpha"), seed=1)
    assert log.notes[0] in plan.notes
    assert not {replay_number(j.name) for j in plan.jobs} & set(sizeless)


def test_jobs_that_ran_zero_seconds_are_no_load() -> None:
    rows = swf_rows(FIXTURES / "sizes_missing.swf")
    instant = {int(r[0]) for r in rows if r[3] == 0}
    assert len(instant) == 20
    log = read_swf(FIXTURES / "sizes_missing.swf")
    plan = plan_replay(log, cluster("beta"), start=log.span[0], duration_s=whole_window(log))
    replayed = {replay_number(j.name) for j in plan.jobs}
    assert not replayed & instant
    assert replayed == {int(r[0]) for r in rows if r[3] > 0 and max(r[4], r[7]) > 0}


@pytest.mark.parametrize("scale", [60.0, 1.0])
def test_without_overuse_a_kill_past_the_request_is_its_limit(scale: float) -> None:
    """no_overuse.swf (AllowOveruse: No): a quarter of the jobs were killed (status 0) up to
    59 s past their request. Each limit is the request, or the run where it went past, in
    whole minutes of the scaled time: never less than the run, at most a minute more."""
    rows = {int(r[0]): r for r in swf_rows(FIXTURES / "no_overuse.swf")}
    killed = {n for n, r in rows.items() if r[3] > r[8]}
    assert len(killed) >= 40 and all(rows[n][10] == 0 and rows[n][3] - rows[n][8] < 60
                                     for n in killed)
    log = read_swf(FIXTURES / "no_overuse.swf")
    plan = plan_replay(log, cluster("alpha"), start=log.span[0],
                       duration_s=whole_window(log, scale), scale=scale)
    assert {replay_number(j.name) for j in plan.jobs} & killed
    for j in plan.jobs:
        r = rows[replay_number(j.name)]
        assert j.walltime_min == max(1, math.ceil(max(r[8], r[3]) / scale / 60)), j
        assert j.runtime_s <= j.walltime_min * 60


# ---- queues ------------------------------------------------------------------------------

@pytest.mark.parametrize("site, limit", [("gamma", 30), ("alpha", 24 * 60)])
def test_interactive_jobs_are_load_with_the_default_partitions_limit(site: str,
                                                                     limit: int) -> None:
    """interactive.swf: queue 0 is interactive (started at once, no requested time, under
    an hour). They held processors, so they are replayed; without a request each gets the
    default partition's limit (gamma: 30 min, alpha: a day) where its run fits it."""
    rows = {int(r[0]): r for r in swf_rows(FIXTURES / "interactive.swf")}
    interactive = {n for n, r in rows.items() if r[14] == 0}
    assert len(interactive) == 120 and all(rows[n][8] == -1 for n in interactive)
    log = read_swf(FIXTURES / "interactive.swf")
    plan = plan_replay(log, cluster(site), start=log.span[0], duration_s=whole_window(log))
    replayed = [j for j in plan.jobs if replay_number(j.name) in interactive]
    assert len(replayed) >= 60  # thinned to the log's load, not dropped
    for j in replayed:
        if j.runtime_s <= limit * 60:
            assert (j.partition, j.walltime_min) == (None, limit), j
        assert j.runtime_s <= j.walltime_min * 60


# ---- windows -----------------------------------------------------------------------------

def test_a_machine_idle_most_of_the_time_gets_a_drawn_window_with_arrivals() -> None:
    """sparse.swf: sixty days, jobs on two afternoons. Before, 13 of seeds 1-20 drew a
    window of no arrival twenty times over and replayed nothing; a window chosen in the
    idle weeks still says it is empty."""
    log = read_swf(FIXTURES / "sparse.swf")
    span = 600 * 60
    for seed in range(1, 31):
        plan = plan_replay(log, cluster("alpha"), seed=seed)
        assert plan.arrivals_in_log > 0 and plan.jobs, (seed, plan.window)
        assert log.span[0] + 86400 <= plan.window[0] <= log.span[1] - span
        again = plan_replay(log, cluster("alpha"), seed=seed)
        assert again.window == plan.window and again.jobs == plan.jobs
    idle = plan_replay(log, cluster("alpha"), start=35 * 86400)
    assert idle.jobs == [] and "another --seed or --start" in idle.notes[-1]


def test_a_window_at_the_very_end_rebuilds_the_queue_standing_there() -> None:
    """busy_end.swf ends in a rush: at its last submission jobs run and others wait. On
    alpha (32 CPUs, as the log's machine) sizes map one to one and nothing is thinned."""
    rows = swf_rows(FIXTURES / "busy_end.swf")
    log = read_swf(FIXTURES / "busy_end.swf")
    last = log.span[1]
    ran = [r for r in rows if r[3] > 0]
    running = sorted(int(r[0]) for r in ran if r[1] < last and r[1] + r[2] <= last
                     < r[1] + r[2] + r[3])
    waiting = [int(r[0]) for r in sorted(ran, key=lambda r: (r[1], r[0]))
               if r[1] < last and r[1] + r[2] > last]
    arriving = [int(r[0]) for r in ran if r[1] == last]
    assert running and len(waiting) >= 5 and arriving
    plan = plan_replay(log, cluster("alpha"), start=last, duration_s=10)
    assert (plan.running_at_start, plan.queued_at_start) == (len(running), len(waiting))
    kinds = {k: [replay_number(j.name) for j in plan.jobs if j.name.startswith(f"trace-{k}-")]
             for k in ("run", "wait", "arrive")}
    assert sorted(kinds["run"]) == running and kinds["wait"] == waiting
    assert kinds["arrive"] == arriving
    end = {int(r[0]): r[1] + r[2] + r[3] for r in ran}
    for j in plan.jobs:
        if j.name.startswith("trace-run-"):
            assert j.runtime_s == round((end[replay_number(j.name)] - last) / 60, 2)


def test_start_beyond_the_log_is_one_line_naming_its_range(capsys) -> None:
    rows = swf_rows(FIXTURES / "busy_end.swf")
    first, last = min(r[1] for r in rows), max(r[1] for r in rows)
    assert cli(["testbed", "load", "--trace", str(FIXTURES / "busy_end.swf"), "--site",
                "alpha", "--start", str(last + 1), "--dry-run", "--json"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert "\n" not in err and f"between {first:.0f} and {last:.0f} s" in err
    assert "outside the log busy_end" in err
    assert json.loads(captured.out)["reason"] == "bad-input"


@pytest.mark.parametrize("flag, value", [("--scale", "nan"), ("--scale", "inf"),
                                         ("--duration", "inf"), ("--duration", "nan"),
                                         ("--duration", "0"), ("--duration", "-5"),
                                         ("--start", "nan")])
def test_numbers_that_are_not_are_refused_in_one_line(capsys, flag: str, value: str) -> None:
    """argparse takes "nan" and "inf" for floats. Before: --scale nan was a traceback,
    --duration inf a plan whose JSON held Infinity (not JSON) with every job thinned away.
    Refused by the option's type, as `submit --timeout nan` is: one error line."""
    with pytest.raises(SystemExit) as e:
        cli(["testbed", "load", "--trace", str(FIXTURES / "busy_end.swf"), "--site",
             "alpha", flag, value, "--dry-run", "--json"])
    captured = capsys.readouterr()
    assert e.value.code == 2, captured
    err = captured.err.strip().splitlines()[-1]
    assert err.startswith("diamond testbed load: error: argument ") and flag in err
    assert "expected a number" in err and f"(got {value!r})" in err, err
    assert json.loads(captured.out)["reason"] == "bad-input"


@pytest.mark.parametrize("args, says", [
    (["--scale", "1e-310"], "--scale must be at least 0.001"),
    (["--duration", "1e300", "--scale", "1e300"], "more log seconds than a number holds"),
    (["--start", "1e300"], "--start 1e+300 is outside the log busy_end"),
])
def test_numbers_too_large_or_small_for_a_replay_are_refused(capsys, args: list[str],
                                                             says: str) -> None:
    """Before: --scale 1e-310 overflowed into a traceback (a runtime of infinite seconds);
    a start of 1e300 was written out in 301 digits."""
    assert cli(["testbed", "load", "--trace", str(FIXTURES / "busy_end.swf"), "--site",
                "alpha", *args, "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and "\n" not in err and len(err) < 200, err


def test_the_library_refuses_them_too() -> None:
    log = read_swf(FIXTURES / "busy_end.swf")
    for kwargs in ({"scale": math.nan}, {"duration_s": math.inf}, {"start": math.nan}):
        with pytest.raises(BadInput, match="number"):
            plan_replay(log, cluster("alpha"), **kwargs)


@pytest.mark.parametrize("duration", ["inf", "-1"])
def test_a_profile_of_no_finite_duration_is_refused_not_run(duration: str) -> None:
    """Before: `--profile busy --duration inf` drew arrivals for ever (memory growing),
    and --duration -1 planned nothing without a word."""
    r = _cli("testbed", "load", "--profile", "busy", "--duration", duration, "--dry-run",
             timeout=60)
    assert r.returncode == 2, r
    assert ("argument --duration: expected a number of real seconds above 0"
            in r.stderr), r.stderr


def test_scale_one_replays_log_seconds_as_real_seconds() -> None:
    log = read_swf(FIXTURES / "busy_end.swf")
    rows = {int(r[0]): r for r in swf_rows(FIXTURES / "busy_end.swf")}
    start = log.span[0]
    plan = plan_replay(log, cluster("alpha"), start=start, duration_s=3600, scale=1)
    assert plan.window == (start, start + 3600)
    arrived = [j for j in plan.jobs if j.name.startswith("trace-arrive-")]
    assert arrived
    for j in arrived:
        r = rows[replay_number(j.name)]
        assert j.at_s == r[1] - start and j.runtime_s == r[3]
        assert j.walltime_min == math.ceil(max(r[8], r[3]) / 60)


def test_scale_3600_replays_weeks_in_minutes_in_order() -> None:
    """A 10-minute replay at 3600 is 25 days of the log: all of busy_end.swf, in submit
    order, every limit at least a minute, runtimes to the hundredth of a second (at least
    one hundredth)."""
    log = read_swf(FIXTURES / "busy_end.swf")
    rows = {int(r[0]): r for r in swf_rows(FIXTURES / "busy_end.swf")}
    plan = plan_replay(log, cluster("beta"), start=log.span[0], duration_s=600, scale=3600)
    assert plan.arrivals_in_log == len(rows)
    ats = [j.at_s for j in plan.jobs]
    assert ats == sorted(ats) and ats[-1] <= (log.span[1] - log.span[0]) / 3600 + 0.001
    for j in plan.jobs:
        # a run under 18 s is a hundredth of a second at least: it ran (tests/test_trace_unseen4)
        assert j.walltime_min >= 1
        assert j.runtime_s == max(0.01, round(rows[replay_number(j.name)][3] / 3600, 2))


# ---- determinism -------------------------------------------------------------------------

def test_the_plan_is_the_same_under_any_hash_seed() -> None:
    args = ("testbed", "load", "--trace", str(FIXTURES / "status_mix.swf"), "--site", "gamma",
            "--trace", str(FIXTURES / "chains.swf"), "--site", "delta",
            "--trace", str(FIXTURES / "status_mix.swf"), "--site", "beta",
            "--seed", "11", "--dry-run", "--json")
    a, b = (_cli(*args, env={"PYTHONHASHSEED": h}) for h in ("0", "4242"))
    assert a.returncode == b.returncode == 0, (a.stderr, b.stderr)
    assert a.stdout == b.stdout and json.loads(a.stdout)["jobs"]


def test_the_same_seed_gives_the_same_plans_in_one_process() -> None:
    pairs = [(FIXTURES / "interactive.swf", cluster("alpha")),
             (FIXTURES / "interactive.swf", cluster("gamma"))]
    one, two = (plan_replays(pairs, seed=5) for _ in range(2))
    assert [p.jobs for p in one] == [p.jobs for p in two]
    assert one[0].window != one[1].window  # a log on two sites: two windows


# ---- files -------------------------------------------------------------------------------

def test_a_log_saved_as_utf16_reads_as_its_utf8_copy(tmp_path: Path) -> None:
    """utf16.swf: a Windows editor's "Unicode" (UTF-16 with a byte-order mark, CRLF).
    Before: "line 1: this is not text"."""
    raw = (FIXTURES / "utf16.swf").read_bytes()
    assert raw[:2] == b"\xff\xfe"
    copy = tmp_path / "utf16.swf"
    copy.write_text(raw.decode("utf-16"))
    log = read_swf(FIXTURES / "utf16.swf")
    assert log.jobs == read_swf(copy).jobs and len(log.jobs) == 120 and log.max_procs == 32
    packed = tmp_path / "packed.swf.gz"
    packed.write_bytes(gzip.compress(raw))
    assert read_swf(packed).jobs == log.jobs


def test_classic_mac_line_ends_read_as_lines(tmp_path: Path) -> None:
    text = (FIXTURES / "busy_end.swf").read_text()
    mac = tmp_path / "busy_end.swf"
    mac.write_bytes(text.replace("\n", "\r").encode())
    assert read_swf(mac).jobs == read_swf(FIXTURES / "busy_end.swf").jobs


def test_a_cut_off_gzip_names_the_line_it_breaks_after(tmp_path: Path) -> None:
    text = (FIXTURES / "chains.swf").read_bytes()
    packed = gzip.compress(text)
    cut = tmp_path / "chains.swf.gz"
    cut.write_bytes(packed[:len(packed) // 2])
    with pytest.raises(BadInput) as e:
        read_swf(cut)
    message = str(e.value)
    assert "\n" not in message and str(cut) in message
    lines = int(message.split("after line ")[1].split()[0])
    assert 0 < lines < text.count(b"\n")
    assert "accepted: a whole SWF file" in message


def test_a_damaged_gzip_is_named_not_a_traceback(tmp_path: Path) -> None:
    """Ten bytes flipped inside the compressed data: zlib's own error. Before: a traceback
    (zlib.error is no OSError)."""
    packed = bytearray(gzip.compress((FIXTURES / "chains.swf").read_bytes()))
    packed[2000:2010] = bytes(b ^ 0xFF for b in packed[2000:2010])
    damaged = tmp_path / "chains.swf.gz"
    damaged.write_bytes(bytes(packed))
    with pytest.raises(BadInput, match=r"chains\.swf\.gz is not a readable gzip file: it is "
                                       r"cut off or damaged (after line \d+|before its first)"):
        read_swf(damaged)


def test_a_cut_off_second_trace_plans_nothing(tmp_path: Path, capsys) -> None:
    cut = tmp_path / "cut.swf.gz"
    packed = gzip.compress((FIXTURES / "chains.swf").read_bytes())
    cut.write_bytes(packed[:len(packed) // 3])
    assert cli(["testbed", "load", "--trace", str(FIXTURES / "busy_end.swf"), "--site",
                "alpha", "--trace", str(cut), "--site", "beta", "--dry-run", "--json"]) == 2
    captured = capsys.readouterr()
    assert set(json.loads(captured.out)) == {"reason", "message"}  # no jobs, no plans
    assert "is cut off or damaged after line" in captured.err


def test_a_directory_is_named_with_the_logs_in_it(tmp_path: Path, capsys) -> None:
    """Before: "cannot read the trace D: Is a directory", nothing of what to give."""
    with pytest.raises(BadInput, match=r"is a directory: give one log file in it "
                                       r"\(busy_end\.swf, chains\.swf, interactive\.swf, "
                                       r"\.\.\.\) \(accepted: an SWF text file"):
        read_swf(FIXTURES)
    with pytest.raises(BadInput, match=r"is a directory: give one log file \(accepted"):
        read_swf(tmp_path)
    assert cli(["testbed", "load", "--trace", str(FIXTURES), "--site", "alpha",
                "--dry-run"]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_a_long_log_is_read_without_doubling_its_memory(tmp_path: Path) -> None:
    """60,000 jobs: the reader's peak stays within half again what the read log holds.
    Before: twice (the machine's peak was counted from a list of 120,000 event tuples)."""
    path = tmp_path / "long.swf"
    with open(path, "w") as fh:
        fh.write("; MaxProcs: 256\n")
        for n in range(1, 60_001):
            fh.write(f"{n} {n * 7} {n % 600} {n % 5000 + 1} {1 << n % 6} -1 -1 "
                     f"{1 << n % 6} 7200 -1 1 {n % 40} 1 -1 1 1 -1 -1\n")
    with traced_memory() as memory:
        log = read_swf(path)
    assert len(log.jobs) == 60_000
    assert memory.peak < 1.5 * memory.held, memory


# ---- a log where nothing ran --------------------------------------------------------------

def test_a_log_where_nothing_ran_says_no_window_loads_the_site() -> None:
    """none_ran.swf: every job cancelled in the queue. Before, each plan advised another
    --seed or --start, which draws another window of nothing."""
    log = read_swf(FIXTURES / "none_ran.swf")
    assert log.max_procs == 16
    for seed in (1, 2):
        plan = plan_replay(log, cluster("alpha"), seed=seed)
        assert plan.jobs == [] and plan.log_utilization == plan.site_utilization == 0
        assert "no window of it loads alpha" in plan.notes[-1]
        assert not any("another --seed" in n for n in plan.notes)


@pytest.mark.parametrize("name", ["none_ran", "sparse", "status_mix", "sizes_missing",
                                  "utf16", "interactive"])
def test_the_prediction_benchmark_runs_on_them(name: str) -> None:
    r = prediction.run_log(FIXTURES / f"{name}.swf", moments=2, seed=1, new_jobs=False)
    assert set(r["models"]) == set(prediction.MODELS)
    for s in r["models"].values():
        assert all(v is None or math.isfinite(v) for v in s.values())
