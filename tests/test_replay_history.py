"""A replayed log's history: the jobs that ended before the window, written into the Slurm
site's accounting as if the site had replayed the log that long already."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime, timedelta

import pytest

from diamond_jupyter.testbed import load, trace
from diamond_jupyter.testbed.clusters import cluster

SCALE = 60.0


def _log(tmp_path, jobs):
    """An SWF file of (number, submit, wait, run, procs, requested time, status) rows on a
    machine of 64 processors."""
    lines = ["; MaxProcs: 64", f"; MaxJobs: {len(jobs)}"]
    for n, submit, wait, run, procs, req, status in jobs:
        lines.append(f"{n} {submit} {wait} {run} {procs} -1 -1 {procs} {req} -1 {status} "
                     "1 1 -1 1 -1 -1 -1")
    p = tmp_path / "small.swf"
    p.write_text("\n".join(lines) + "\n")
    return trace.read_swf(p)


def test_history_holds_the_jobs_that_ended_before_the_window_scaled_and_sized(tmp_path):
    start = 100_000.0
    log = _log(tmp_path, [
        (1, 10_000, 0, 3_000, 16, 7_200, 1),    # ended at 13,000: 87,000 s before
        (2, 90_000, 600, 2_400, 32, 3_600, 1),  # ended at 93,000: 7,000 s before
        (3, 96_000, 0, 1_000, 8, 3_600, 5),     # ended at 97,000, cancelled
        (4, 99_000, 0, 5_000, 8, 7_200, 1),     # running at the window's start
        (5, 100_500, 0, 60, 4, 600, 1),         # an arrival
        (6, 2_000, 0, 1_000, 4, 1_200, 1),      # ended 97,000 s before: outside 25 min x 60
    ])
    c = cluster("beta")
    plan = trace.plan_replay(log, c, scale=SCALE, duration_s=60, start=start,
                             history_s=1500.0)
    got = {h.name: h for h in plan.history}
    assert sorted(got) == ["trace-hist-1", "trace-hist-2", "trace-hist-3"]
    h = got["trace-hist-2"]
    assert (h.submit_s, h.start_s, h.end_s) == pytest.approx(
        (-10_000 / SCALE, -9_400 / SCALE, -7_000 / SCALE), abs=1e-3)
    assert h.walltime_min == 1  # 3,600 s asked / 60 = 60 real s: one Slurm minute
    assert h.cpus == round(32 / 64 * c.nodes * c.cpus) and h.nodes == 1
    assert got["trace-hist-3"].status == 5
    assert all(h.end_s < 0 for h in plan.history)
    assert plan.summary()["history_jobs"] == 3
    # asked for none, none (the plan is as before)
    assert trace.plan_replay(log, c, scale=SCALE, duration_s=60, start=start).history == []


def test_history_keeps_the_latest_jobs_at_most(tmp_path, monkeypatch):
    monkeypatch.setattr(trace, "HISTORY_MAX", 3)
    log = _log(tmp_path, [(n, n * 100, 0, 50, 1, 600, 1) for n in range(1, 11)]
               + [(11, 5_000, 0, 10, 1, 600, 1)])
    plan = trace.plan_replay(log, cluster("alpha"), scale=SCALE, duration_s=10, start=2_000,
                             history_s=3600.0)
    assert [h.name for h in plan.history] == ["trace-hist-8", "trace-hist-9", "trace-hist-10"]


def test_history_lines_are_slurms_own_accounting_lines():
    c = cluster("beta")
    now = datetime(2026, 12, 4, 12, 0, 0)
    h = trace.HistoryJob(name="trace-hist-7", submit_s=-700.0, start_s=-600.0, end_s=-60.5,
                         nodes=1, cpus=8, walltime_min=15, partition=None, status=5)
    (line,) = load.history_lines([h], c, now, prefix="p-")
    fields = dict(re.findall(r"(\w+)=(\S*)", line))
    default = next(p.name for p in c.partitions if p.default)
    assert fields["Name"] == "p-trace-hist-7" and fields["JobState"] == "CANCELLED"
    assert fields["Partition"] == default and fields["TimeLimit"] == "15"
    assert fields["ProcCnt"] == "8" and fields["NodeCnt"] == "1"
    assert fields["SubmitTime"] == "2026-12-04T11:48:20"
    assert fields["StartTime"] == "2026-12-04T11:50:00"
    assert fields["EndTime"] == "2026-12-04T11:58:59"
    assert int(fields["JobId"]) < 2**31 and line.endswith("\n")


def test_grid_engine_history_lines_are_accounting_records():
    c = cluster("delta")
    now = datetime(2026, 12, 4, 12, 0, 0)
    h = trace.HistoryJob(name="trace-hist-7", submit_s=-700.0, start_s=-600.0, end_s=-60.0,
                         nodes=1, cpus=4, walltime_min=15, partition=None, status=1)
    (line,) = load.sge_history_lines([h], c, now, prefix="p-")
    f = line.rstrip("\n").split(":")
    assert len(f) == 45  # accounting(5) of SGE 8.1.9
    assert f[4] == "p-trace-hist-7" and f[34] == "4" and f[39] == "-l h_rt=900 -pe smp 4"
    start, end = int(f[9]), int(f[10])
    assert end - start == 540 == int(f[13]) and end == int(now.timestamp()) - 60
    assert (f[11], f[12]) == ("0", "0")


@pytest.mark.testbed
@pytest.mark.parametrize("site", ["beta", "delta"])
def test_the_sites_accounting_reads_the_written_history(tb, tmp_path, site):
    """Through the real `sacct -c` of a Slurm cluster and `qacct` of Grid Engine's delta,
    as the engine's calibration asks."""
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    log = _log(tmp_path, [(n, 1_000 * n, 30, 900, 8, 3_600, 1) for n in range(1, 6)]
               + [(6, 7_000, 0, 60, 8, 3_600, 1)])
    plan = trace.plan_replay(log, cluster(site), scale=SCALE, duration_s=10, start=6_500,
                             history_s=600.0)
    prefix = f"hist{datetime.now():%H%M%S%f}-"
    # appended: the suite's other jobs stay in the site's accounting
    assert (load.write_history([plan], prefix, replace=False)
            == {site: len(plan.history)} != {site: 0})

    async def go():
        fed = Federation(tb.config_path, store=Store(tmp_path / "s.sqlite"), poll_interval_s=30)
        try:
            return await fed.sites[site].recent_jobs(datetime.now().astimezone()
                                                       - timedelta(seconds=700))
        finally:
            await fed.close()
    jobs = asyncio.run(go())
    want = {h.end_s: h for h in plan.history}
    first = load.HISTORY_ID_BASE if site == "beta" else load.SGE_HISTORY_ID_BASE
    seen = [j for j in jobs if int(j.native_id) >= first]
    assert len(seen) >= len(want)
    mine = [j for j in seen if j.walltime_s == 60 and j.cpus == plan.history[0].cpus]
    assert len(mine) >= len(want)
    for j in mine[-len(want):]:
        assert j.started_at and j.ended_at
        assert abs((j.ended_at - j.started_at).total_seconds() - 900 / SCALE) <= 1


@pytest.mark.parametrize("args, words", [
    (["--profile", "busy", "--history", "600"], "go with --trace"),
    (["--history", "-5"], "argument --history: expected a number of real seconds, 0 or more"),
    (["--history", "nan"], "argument --history: expected a number of real seconds, 0 or more"),
])
def test_history_that_cannot_be_written_is_refused(tmp_path, capsys, args, words):
    from diamond_jupyter.cli import main as cli

    log = tmp_path / "small.swf"
    _log(tmp_path, [(1, 100, 0, 60, 4, 600, 1), (2, 200, 0, 60, 4, 600, 1)])
    trace_args = [] if "--profile" in args else ["--trace", str(log), "--site", "alpha"]
    try:  # a value of no number is refused by the option's type (argparse exits)
        code = cli(["testbed", "load", *trace_args, *args, "--dry-run"])
    except SystemExit as e:
        code = e.code
    assert code == 2
    assert words in capsys.readouterr().err


def test_a_dry_run_counts_the_history_it_would_write(tmp_path, capsys):
    import json

    from diamond_jupyter.cli import main as cli

    log = tmp_path / "small.swf"
    _log(tmp_path, [(n, 100 * n, 0, 60, 4, 600, 1) for n in range(1, 40)])
    assert cli(["testbed", "load", "--trace", str(log), "--site", "beta", "--start", "3000",
                "--duration", "5", "--history", "600", "--dry-run", "--json"]) == 0
    [t] = json.loads(capsys.readouterr().out)["traces"]
    assert t["history_jobs"] == 29  # jobs 1-29 ended before log second 3,000


@pytest.mark.parametrize("site", ["beta", "delta"])
def test_the_history_replaces_what_the_accounting_held(tmp_path, site):
    """A run just before (another benchmark's jobs, minutes old) must not stay the newest
    samples of the replayed log's past: by default the history takes the file's place (in
    place, the same file), and `replace=False` appends."""
    from diamond_jupyter.testbed.configs import cluster_dir
    from diamond_jupyter.testbed.gridengine import sge_dir

    c = cluster(site)
    path = (sge_dir(tmp_path, c) / "cell" / "common" / "accounting" if c.scheduler == "sge"
            else cluster_dir(tmp_path, c) / "jobcomp.txt")
    path.parent.mkdir(parents=True)
    path.write_text("an earlier run's job line\n")
    inode = path.stat().st_ino
    log = _log(tmp_path, [(n, 1_000 * n, 30, 900, 8, 3_600, 1) for n in range(1, 6)]
               + [(6, 7_000, 0, 60, 8, 3_600, 1)])
    plan = trace.plan_replay(log, c, scale=SCALE, duration_s=10, start=6_500,
                             history_s=600.0)
    assert load.write_history([plan], "p-", base=tmp_path) == {site: 5}
    kept = path.read_text().splitlines()
    assert len(kept) == 5 and "earlier run" not in path.read_text()
    assert path.stat().st_ino == inode  # the scheduler's open file, not a new one
    assert load.write_history([plan], "q-", base=tmp_path, replace=False) == {site: 5}
    assert path.read_text().splitlines()[:5] == kept and len(path.read_text().splitlines()) == 10


@pytest.mark.testbed
def test_slurmctld_appends_to_its_jobcomp_file_so_cutting_it_in_place_is_safe(tb):
    """`write_history` cuts the jobcomp file in place while slurmctld holds it open: its
    later lines land after the history only if it writes with O_APPEND (else at its old
    offset, leaving a hole of zero bytes that `sacct -c` cannot read)."""
    import os

    from diamond_jupyter.testbed.clusters import base_dir

    seen = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith(str(base_dir())) and target.endswith("/jobcomp.txt"):
                with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                    flags = int(re.search(r"flags:\s*(\d+)", f.read()).group(1), 8)
                seen[target] = bool(flags & os.O_APPEND)
    assert len(seen) >= 3 and all(seen.values()), seen  # alpha, beta and gamma


def test_a_run_puts_the_accounting_back_as_it_found_it(tmp_path):
    """The placement benchmark writes a log's history in place of the sites' accounting for
    its run only: afterwards the files hold what they held before (in place, the scheduler's
    open file), so the next run, of another background, is not calibrated on that log's
    past (seeds 95-97 of session 24 were, which moved their `depth_misleads` predictions)."""
    from diamond_jupyter.testbed.clusters import cluster as named

    paths = {}
    for site in ("beta", "delta"):
        paths[site] = p = load.accounting_path(named(site), tmp_path)
        p.parent.mkdir(parents=True)
        p.write_text(f"{site}: an earlier run's job line\n")
    inodes = {s: p.stat().st_ino for s, p in paths.items()}
    saved = load.save_accounting(["beta", "delta", "gamma"], base=tmp_path)  # gamma: none
    log = _log(tmp_path, [(n, 1_000 * n, 30, 900, 8, 3_600, 1) for n in range(1, 6)]
               + [(6, 7_000, 0, 60, 8, 3_600, 1)])
    plans = [trace.plan_replay(log, named(s), scale=SCALE, duration_s=10, start=6_500,
                               history_s=600.0) for s in ("beta", "delta")]
    assert load.write_history(plans, "p-", base=tmp_path) == {"beta": 5, "delta": 5}
    assert "earlier run" not in paths["beta"].read_text()
    load.restore_accounting(saved)
    for site, p in paths.items():
        assert p.read_text() == f"{site}: an earlier run's job line\n"
        assert p.stat().st_ino == inodes[site]
