"""Following the user's jobs does not depend on the size of everyone else's queue. The whole
queue is one command's (or one request's) output; larger than the transport's
`max_output_bytes` it cannot be read, and then:

- the job-state query that follows jobs asks only for the user's jobs (Slurm `squeue -j IDS`,
  Grid Engine `qstat -xml`, the login's own, not `-u '*'`; slurmrestd asks each job alone,
  `GET job/ID`, when `GET jobs` is over the cap), so the follow goes on;
- the snapshot keeps the site reachable with its nodes and partitions, and says its queue
  is unknown and why (`queue_error`); the site's row shows the queue as unknown (not as 0
  jobs) and placement gives the site no start, ranking it after sites whose start is known.

Sites on the local transport with scheduler commands written here, and a slurmrestd served
here (no test bed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from stand_in_slurmrestd import StandInSlurmrestd

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.model import JobSpec, JobState, Node, Partition, Resources, SiteSnapshot
from diamond_jupyter.placement import place
from diamond_jupyter.sites import Site
from diamond_jupyter.summary import site_summary
from diamond_jupyter.transports import make_transport

CAP = 4096
FIXTURES = Path(__file__).parent / "fixtures" / "outputs"


def _tool(bin_: Path, name: str, body: str) -> None:
    (bin_ / name).write_text(f"#!/bin/sh\n{body}\n")
    (bin_ / name).chmod(0o755)


# A queue of everyone's jobs far larger than the cap; the user's own job 7 asked by id
FLOOD = 'head -c 100000 /dev/zero | tr "\\0" x; echo'
MINE = ("7|RUNNING|2026-12-04T10:00:05|N/A|2026-12-04T10:00:00|1:00:00|1|2|me|batch|N/A|c1|"
        "None|(null)|mine")
SQUEUE = f"""case " $* " in
  *" -j "*) echo '{MINE}' ;;
  *) {FLOOD} ;;
esac"""
PARTITION = ("PartitionName=batch Default=YES MaxTime=01:00:00 Nodes=c1 State=UP TotalNodes=1 "
             "TotalCPUs=8")
NODE = "NodeName=c1 CPUTot=8 CPUAlloc=2 RealMemory=16000 State=MIXED Partitions=batch"
SCONTROL = f"""case "$*" in
  *partition*) echo '{PARTITION}' ;;
  *node*) echo '{NODE}' ;;
esac"""


@pytest.fixture
async def slurm_site(tmp_path):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    _tool(bin_, "squeue", SQUEUE)
    _tool(bin_, "scontrol", SCONTROL)
    _tool(bin_, "sacct", "exit 0")
    cfg = SiteConfig(name="big", workdir=str(tmp_path),
                     transport={"kind": "local", "max_output_bytes": CAP},
                     commands={p: str(bin_ / p) for p in ("squeue", "scontrol", "sacct")})
    site = Site(cfg, transport=make_transport(cfg.transport, "big", workdir=str(tmp_path)))
    yield site
    await site.close()


async def test_a_queue_over_the_cap_leaves_the_site_reachable_with_its_queue_unknown(
        slurm_site):
    snap = await slurm_site.snapshot(max_age_s=0)
    assert snap.reachable and snap.error is None
    assert [p.name for p in snap.partitions] == ["batch"] and [n.name for n in snap.nodes] \
        == ["c1"]
    assert snap.jobs == []
    assert snap.queue_error == (
        f"queue not read: big: the whole queue is more than {CAP} bytes on stdout (the "
        "transport's max_output_bytes; raise it for a site this busy). Your own jobs are "
        "still followed, asked by id")
    # the capabilities were kept: the next snapshot asks the queue alone, and says so again
    again = await slurm_site.snapshot(max_age_s=0)
    assert again.reachable and again.nodes and again.queue_error


async def test_the_users_jobs_are_still_followed(slurm_site):
    await slurm_site.snapshot(max_age_s=0)  # the whole queue fails...
    (st,) = await slurm_site.statuses(["7"])  # ...the follow, by ids, does not
    assert st.native_id == "7" and st.state == JobState.RUNNING and st.name == "mine"


async def test_the_sites_row_shows_the_queue_unknown_not_empty(slurm_site):
    snap = await slurm_site.snapshot(max_age_s=0)
    row = site_summary(slurm_site.cfg, snap)
    assert row.reachable and row.nodes == 1 and row.cpus_total == 8
    assert row.running is None and row.pending is None
    assert row.queue_error == snap.queue_error


# -- placement ----------------------------------------------------------------------------------

def _snap(name: str, **kw) -> tuple[SiteConfig, SiteSnapshot]:
    cfg = SiteConfig(name=name, transport=TransportConfig(kind="local"))
    return cfg, SiteSnapshot(site=name, partitions=[Partition(
        name="batch", default=True, max_time_s=7200, nodes=["n1"], total_nodes=1)],
        nodes=[Node(name="n1", cpus=8, memory_mb=16000, state="idle", partitions=["batch"])],
        **kw)


SPEC = JobSpec(script="true\n", resources=Resources(cpus_per_task=2, walltime_s=600))


def test_placement_gives_a_site_with_an_unknown_queue_no_start_and_ranks_it_last():
    unknown = _snap("unknown", queue_error="queue not read: too large")
    known = _snap("known")
    pl = place(SPEC, [unknown, known])
    assert pl.choice == "known"
    v = pl.verdict("unknown")
    assert v.feasible and v.verdict == "BUSY"  # its nodes can run it; when is unknown
    assert v.estimated_start is None and v.estimated_finish is None
    assert any("queue unknown" in n and "too large" in n for n in v.notes)
    assert [r.site for r in pl.ranked] == ["known", "unknown"]
    assert "queue unknown" in pl.explain()
    # alone, it is still the choice: the job can run there, its start is just not known
    alone = place(SPEC, [unknown])
    assert alone.choice == "unknown" and alone.predicted_start("unknown") is None


def test_the_same_site_with_its_queue_read_is_ready():
    pl = place(SPEC, [_snap("known")])
    v = pl.verdict("known")
    assert v.verdict == "READY" and v.estimated_start is not None


# -- Grid Engine: the follow asks for the login's own jobs ----------------------------------

def test_grid_engine_follows_the_logins_own_jobs_not_everyones():
    argv = SgeCommands().status_argv(["7"])
    assert argv[0] == "qstat" and "-u" not in argv and "*" not in argv
    assert "-u" in SgeCommands().snapshot_argvs()["queue"]  # the snapshot reads everyone's


async def test_grid_engine_follow_survives_a_queue_over_the_cap(tmp_path):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    own = FIXTURES / "sge" / "qstat_xml.xml"
    # everyone's jobs (`-u *`, the snapshot's `qstat -f`) flood; the login's own are small
    _tool(bin_, "qstat", f'case " $* " in *" -u "*|*" -f "*) {FLOOD} ;; *) cat {own} ;; esac')
    cfg = SiteConfig(name="delta", scheduler="sge", workdir=str(tmp_path),
                     transport={"kind": "local", "max_output_bytes": CAP},
                     commands={"qstat": str(bin_ / "qstat")})
    site = Site(cfg, transport=make_transport(cfg.transport, "delta", workdir=str(tmp_path)))
    try:
        want = site.fold_arrays(SgeCommands().parse_status(own.read_text()))  # jobs, arrays
        ids = [s.native_id for s in want if not s.state.terminal][:2]
        got = await site.statuses(ids)
        assert {s.native_id for s in got} >= set(ids)
    finally:
        await site.close()


# -- slurmrestd: each job alone when the whole queue is over the cap -------------------------

@pytest.fixture
async def rest_site(tmp_path):
    jobs = json.loads((FIXTURES / "slurmrestd" / "jobs.json").read_text())
    unknown = (FIXTURES / "slurmrestd" / "job_unknown.json").read_text()

    def answer(method: str, path: str, body: bytes) -> tuple[int, str]:
        one = re.search(r"/job/(\d+)$", path)
        if not one:
            return 200, json.dumps({**jobs, "jobs": jobs["jobs"] * 20})
        mine = [j for j in jobs["jobs"] if str(j["job_id"]) == one.group(1)]
        return (200, json.dumps({**jobs, "jobs": mine})) if mine else (500, unknown)

    async with StandInSlurmrestd(answer=answer) as rest:
        site = rest.site(tmp_path, "beta-rest", connect_timeout_s=2, max_output_bytes=60000)
        yield site, [str(j["job_id"]) for j in jobs["jobs"]], rest
        await site.close()


async def test_slurmrestd_follows_each_job_alone_when_the_queue_is_over_the_cap(rest_site):
    site, ids, rest = rest_site
    got = await site.statuses([ids[0], ids[1], "999999"])
    assert sorted(s.native_id for s in got) == sorted(ids[:2])  # 999999: gone, not an error
    assert any(p.endswith("/jobs") for p in rest.paths)
    assert [p.rsplit("/", 1)[1] for p in rest.paths if "/job/" in p] == [
        ids[0], ids[1], "999999"]


async def test_slurmrestd_snapshot_keeps_nodes_with_the_queue_unknown(rest_site):
    site, _, _ = rest_site
    site._caps = {"nodes": (FIXTURES / "slurmrestd" / "nodes.json").read_text(),
                  "partitions": (FIXTURES / "slurmrestd" / "partitions.json").read_text()}
    site._caps_at = float("inf")  # capabilities fresh: the queue alone is asked
    snap = await site.snapshot(max_age_s=0)
    assert snap.reachable and snap.nodes and snap.jobs == []
    assert snap.queue_error and "larger than 60000 bytes" in snap.queue_error
