"""The test bed itself: real clusters, reached over SSH, and a clean teardown."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import statistics
from pathlib import Path

import pytest

from diamond_jupyter import testbed
from diamond_jupyter.cli import main as cli
from diamond_jupyter.testbed import load
from diamond_jupyter.transports import make_transport


async def _sbatch_and_read(cfg) -> tuple[str, str]:
    """Plain sbatch over SSH, wait for the output file through the job's own completion."""
    t = make_transport(cfg.transport, site=cfg.name)
    try:
        res = await t.run(["sbatch", "--parsable", "-o", "smoke-%j.out", "--wrap",
                           "hostname; echo cpus=$SLURM_CPUS_ON_NODE"], check=True)
        jid = res.stdout.strip().split(";")[0]
        # srun-free wait: sbatch --wait on a dependent no-op blocks until the job ended
        await t.run(["sbatch", "--wait", "-o", "/dev/null", f"--dependency=afterany:{jid}",
                     "--wrap", "true"], check=True, timeout=60)
        out = await t.get_bytes(f"smoke-{jid}.out")
        return jid, out.decode()
    finally:
        await t.close()


def _slurm_hosts(tb):
    """One entry per Slurm cluster reached over SSH (not a second door to one)."""
    return [s for s in tb.config.sites if s.scheduler == "slurm" and s.transport.kind == "ssh"
            and "door_to" not in s.metadata]


def test_sbatch_over_ssh_on_every_cluster(tb):
    sites = _slurm_hosts(tb)
    assert len(sites) >= 3

    async def go():
        return await asyncio.gather(*(_sbatch_and_read(s) for s in sites))
    for site, (jid, out) in zip(sites, asyncio.run(go()), strict=True):
        assert out.splitlines()[0] == site.name, out  # the job ran on that cluster's host
        assert "cpus=" in out
        assert int(jid) >= 100000  # each cluster numbers its jobs in its own range


def test_clusters_differ_as_real_centers_do(tb):
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    async def go():
        async with Federation(tb.config_path, store=Store(tb.base / "probe.sqlite")) as fed:
            return await fed.snapshots(max_age_s=0)
    snaps = asyncio.run(go())
    a, b, g = snaps["alpha"], snaps["beta"], snaps["gamma"]
    assert len(a.nodes) == 4 and all(n.gpus == 0 for n in a.nodes)
    assert len(b.nodes) == 2 and all("arch=aarch64" in n.features for n in b.nodes)
    assert min(n.cpus for n in b.nodes) > max(n.cpus for n in a.nodes)
    assert len(g.nodes) == 2 and all(n.gpus == 2 for n in g.nodes)
    limits = {p.name: p.max_time_s for p in g.partitions}
    assert limits["short"] == 1800 and limits["long"] > 1800
    assert all(s.speed_factor > 0 and s.charge_factor > 0 for s in tb.config.sites)


def test_finished_jobs_visible_through_accounting(tb):
    cfg = tb.config.site("beta")

    async def go():
        t = make_transport(cfg.transport, site=cfg.name)
        try:
            r = await t.run(["sbatch", "--parsable", "--wait", "-o", "/dev/null", "--wrap",
                             "exit 3"], timeout=60)
            jid = r.stdout.strip()
            acct = await t.run(["sacct", "-c", "-P", "-n", "-o", "jobid,state,exitcode",
                                "-j", jid], check=True)
            return jid, acct.stdout
        finally:
            await t.close()
    jid, acct = asyncio.run(go())
    assert f"{jid}|FAILED|3:0" in acct


def test_up_is_idempotent_and_cli_ssh(tb, capsys):
    info = testbed.up()
    assert info["config"] == str(tb.config_path)
    assert cli(["testbed", "ssh", "gamma", "--", "hostname"]) == 0
    assert capsys.readouterr().out.strip() == "gamma"
    assert cli(["testbed", "status", "--json"]) == 0
    assert '"up": true' in capsys.readouterr().out


def _slurmstepds() -> list[int]:
    """Every live Slurm job step on this machine (only the test bed runs Slurm here); a
    killed one is a zombie until init reaps it, and holds nothing then."""
    out = []
    for p in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if (p.name.isdigit() and (p / "comm").read_text().strip() == "slurmstepd"
                    and (p / "stat").read_text().rsplit(") ", 1)[1][0] != "Z"):
                out.append(int(p.name))
    return out


def _grid_engine_jobs() -> list[int]:
    """Every live Grid Engine shepherd (one per running job) on this machine."""
    out = []
    for p in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if (p.name.isdigit() and (p / "comm").read_text().startswith("sge_shepherd")
                    and (p / "stat").read_text().rsplit(") ", 1)[1][0] != "Z"):
                out.append(int(p.name))
    return out


def test_down_leaves_nothing_behind(tb):
    async def start_steps() -> list[str]:  # two jobs per cluster, each ignoring SIGTERM
        ids = []
        for cfg in _slurm_hosts(tb):
            t = make_transport(cfg.transport, site=cfg.name)
            try:
                for _ in range(2):
                    r = await t.run(["sbatch", "--parsable", "-o", "/dev/null", "--wrap",
                                     "trap '' TERM; sleep 600"], check=True)
                    ids.append(r.stdout.strip())
                # the scheduler says when the first one runs (its job step exists)
                await t.run(["sh", "-c", f"until squeue -h -j {ids[-2]} -t R | grep -q .; "
                             "do sleep 0.1; done"], check=True, timeout=120)
            finally:
                await t.close()
        for cfg in tb.config.sites:  # Grid Engine: two jobs under their shepherds
            if cfg.scheduler != "sge":
                continue
            t = make_transport(cfg.transport, site=cfg.name)
            try:
                for _ in range(2):
                    r = await t.run(["sh", "-c", "echo \"trap '' TERM; sleep 600\" | qsub "
                                     "-terse -S /bin/sh -o /dev/null -j y"], check=True)
                    ids.append(r.stdout.strip())
                both = f"'^ *({ids[-2]}|{ids[-1]}) '"
                await t.run(["sh", "-c", f"until [ $(qstat -s r | grep -cE {both}) = 2 ]; "
                             "do sleep 0.1; done"], check=True, timeout=120)
            finally:
                await t.close()
        return ids
    asyncio.run(start_steps())
    steps = _slurmstepds()
    assert len(steps) >= 3  # one batch step per cluster at least
    assert set(steps) <= set(testbed.control._our_processes(testbed.control.base_dir()))
    shepherds = _grid_engine_jobs()
    assert len(shepherds) == 2 * sum(s.scheduler == "sge" for s in tb.config.sites)
    info = testbed.down()
    assert info["leftovers"] == [] and testbed.leftovers() == []
    assert _slurmstepds() == []  # no job step outlives its cluster
    assert _grid_engine_jobs() == []
    assert not testbed.status()["up"]
    again = testbed.up()  # later tests use it again; also proves a cold bring-up
    assert again["sites"] and testbed.status()["up"]  # (its time is the benchmarks' business)


def test_up_starts_a_daemon_whose_pid_file_names_another_process(tb, tmp_path):
    """A pid file outlives its daemon (a kill, a reboot with /tmp kept); its number may then
    belong to any process. `up` starts the daemon again instead of waiting for nodes whose
    slurmd never runs (CI once timed out so on gamma)."""
    import shutil
    import subprocess

    from diamond_jupyter.testbed.clusters import cluster
    from diamond_jupyter.testbed.configs import cluster_dir

    base, c = testbed.control.base_dir(), cluster("gamma")
    testbed.stop_site("gamma", ("slurm",))
    exe = tmp_path / "sleep"
    shutil.copy(shutil.which("sleep"), exe)
    other = subprocess.Popen([str(exe), "600"])  # holds the number the pid file names
    try:
        (cluster_dir(base, c) / "run" / f"slurmd-{c.node_names[0]}.pid").write_text(
            f"{other.pid}\n")
        info = testbed.up()
        assert f"gamma slurmd {c.node_names[0]}" in info["started"]
        assert testbed.status()["up"]
        assert other.poll() is None  # not ours: left alone
    finally:
        other.kill()
        other.wait()


def test_prerequisites_are_named(monkeypatch):
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(testbed.host, "SBIN", ("/nonexistent",))
    with pytest.raises(testbed.TestbedError) as e:
        testbed.check_prerequisites()
    msg = str(e.value)
    assert "root is required" in msg
    assert "slurmctld" in msg and "munge" in msg and "apt-get install" in msg


def test_load_plan_follows_the_documented_model():
    a = load.plan("busy", seed=7, duration_s=120)
    assert a == load.plan("busy", seed=7, duration_s=120)  # reproducible
    assert a != load.plan("busy", seed=8, duration_s=120)
    sizes = [j.nodes for j in a]
    assert all(n & (n - 1) == 0 for n in sizes)  # powers of two
    runtimes = sorted(j.runtime_s for j in a)
    assert statistics.median(runtimes) < statistics.mean(runtimes)  # right-skewed (log-normal)
    times = [j.at_s for j in a]
    assert len(times) > len(set(times))  # arrivals come in bursts
    assert all(0 <= t < 120 for t in times)
    skew = load.plan("skewed", seed=1, duration_s=120)
    per = {s: sum(1 for j in skew if j.site == s) for s in ("alpha", "beta", "gamma")}
    assert per["alpha"] > per["beta"] and per["alpha"] > per["gamma"]
    with pytest.raises(ValueError, match="accepted"):
        load.plan("nope", 1, 10)


def test_cancel_named_ends_only_the_prefixed_jobs_in_batches(tmp_path):
    """A local Slurm site whose `squeue` prints a queue of this run's jobs among others' and
    whose `scancel` records its argv: only the prefixed ids reach scancel, 200 to a call."""
    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.sites import Site

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ours = [f"{1000 + n} bpl1x2-load-{n}" for n in range(401)]
    others = ["7 load-7", "8 bpl1x3-load-1", "9 bpl1x2-load-9 spaced", "10_[1-3] bpl1x2"]
    (tmp_path / "queue.txt").write_text("\n".join(others[:2] + ours + others[2:]) + "\n")
    for name, body in {"squeue": f'cat {tmp_path / "queue.txt"}',
                       "scancel": f'echo "$*" >> {tmp_path / "scancel.log"}'}.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    site = Site(SiteConfig(name="s", scheduler="slurm", transport={"kind": "local"},
                           preamble=f'PATH={bin_dir}:"$PATH"; export PATH'))

    assert asyncio.run(load.cancel_named(site, "bpl1x2-")) == 401
    calls = [line.split() for line in (tmp_path / "scancel.log").read_text().splitlines()]
    assert [len(c) for c in calls] == [200, 200, 1]
    assert [i for c in calls for i in c] == [str(1000 + n) for n in range(401)]
    with pytest.raises(ValueError, match="prefix"):
        asyncio.run(load.cancel_named(site, ""))


def test_load_jobs_go_to_each_scheduler_in_its_own_words():
    """sbatch for Slurm; qsub of the sleep binary for Grid Engine: one host's slots in the smp
    environment, several hosts' in mpi, the request as h_rt; anything else is refused."""
    j = load.LoadJob(at_s=0, site="delta", nodes=2, cpus_per_node=4, runtime_s=7.5,
                     walltime_min=3, name="bpl1x2-trace-run-9")
    assert load.submit_argv(j, "sge") == [
        "qsub", "-terse", "-N", "bpl1x2-trace-run-9", "-b", "y", "-o", "/dev/null", "-j", "y",
        "-pe", "mpi", "8", "-l", "h_rt=180", "sleep", "7.5"]
    one = load.submit_argv(dataclasses.replace(j, nodes=1, partition="short.q"), "sge")
    assert one[one.index("-pe") + 1:one.index("-pe") + 3] == ["smp", "4"]
    assert one[-4:] == ["-q", "short.q", "sleep", "7.5"]
    slurm = load.submit_argv(dataclasses.replace(j, gpus=1), "slurm")
    assert slurm[:2] == ["sbatch", "--parsable"] and "--gres=gpu:1" in slurm
    assert slurm[-2:] == ["--wrap", "sleep 7.5"]
    with pytest.raises(ValueError, match="no GPUs"):
        load.submit_argv(dataclasses.replace(j, gpus=1), "sge")
    with pytest.raises(ValueError, match="accepted: slurm, sge"):
        load.submit_argv(j, "pbs")


def test_cancel_named_on_grid_engine_reads_qstat_xml(tmp_path):
    """A local Grid Engine site whose qstat prints this run's jobs among others' (a job on two
    hosts listed twice) and whose qdel records its argv: only the prefixed ids, once each."""
    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.sites import Site

    def job(number: int, name: str, state: str = "running") -> str:
        return (f'<job_list state="{state}"><JB_job_number>{number}</JB_job_number>'
                f"<JB_name>{name}</JB_name><state>r</state></job_list>")
    xml = ("<?xml version='1.0'?><job_info><queue_info>"
           + job(5, "bpl1x2-trace-run-1") + job(5, "bpl1x2-trace-run-1") + job(6, "mine")
           + "</queue_info><job_info>" + job(7, "bpl1x2-trace-wait-2", "pending")
           + job(8, "bpl1x3-trace-wait-3", "pending") + "</job_info></job_info>")
    (tmp_path / "qstat.xml").write_text(xml)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in {"qstat": f'cat {tmp_path / "qstat.xml"}',
                       "qdel": f'echo "$*" >> {tmp_path / "qdel.log"}'}.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    site = Site(SiteConfig(name="s", scheduler="sge", transport={"kind": "local"},
                           preamble=f'PATH={bin_dir}:"$PATH"; export PATH'))
    assert asyncio.run(load.cancel_named(site, "bpl1x2-", "sge")) == 2
    assert (tmp_path / "qdel.log").read_text().split() == ["5", "7"]
    (tmp_path / "qstat.xml").write_text("error: commlib error: got select error")
    assert asyncio.run(load.cancel_named(site, "bpl1x2-", "sge")) == 0


def test_depth_misleads_leaves_no_site_idle():
    """Every site of the test bed carries load, the Grid Engine site included when there is
    one: an idle site would be a fixed home no policy can beat; the Slurm sites' streams are
    what they were before it joined, draw for draw (it is drawn last)."""
    from diamond_jupyter.testbed.clusters import CLUSTERS

    jobs = load.plan("depth_misleads", seed=3, duration_s=120, time_scale=150)
    assert {j.site for j in jobs} == {c.name for c in CLUSTERS}
    slurm = [j for j in jobs if j.site != "delta"]
    assert slurm == load.plan("depth_misleads", seed=3, duration_s=120, time_scale=150,
                              sites=["alpha", "beta", "gamma"])


def test_load_submits_and_stops_by_itself(tb):
    jobs = load.plan("busy", seed=3, duration_s=8, time_scale=600)
    assert jobs
    res = asyncio.run(asyncio.wait_for(load.run(str(tb.config_path), jobs), 60))
    assert sum(res["submitted"].values()) == len(jobs) and res["failed"] == 0
