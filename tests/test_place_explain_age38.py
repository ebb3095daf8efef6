"""`place --explain` says how old a site's view is, and names the nodes that take no job.

A view read long before the decision (a site unreachable since, its last view kept; a
cached view) is judged as it is, but the explanation says, once per site, how long ago it
was read and why; `--json` carries the same (`view_read_at`, `view_age_s`,
`unreachable_since`). A partition short of usable nodes names the others by state in
hostlist form, with the admin's reason where Slurm gives one, capped like the other long
lists of the explanation."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from test_placement_cases import NOW, _node, hera, reasons, run
from test_placement_cases25 import lyra, on_lyra

from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
from diamond_jupyter.dialects import slurm_rest
from diamond_jupyter.dialects.outputs_common import compact_hostlist, expand_hostlist
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.federation import Federation
from diamond_jupyter.placement import place
from diamond_jupyter.placement_explain import MAX_RANGES_NAMED
from diamond_jupyter.store import Store

TWO_H = timedelta(hours=2, minutes=14, seconds=3)
JOB = "#SBATCH -N 1 -c 4 -t 1:00:00"


# ---- hostlist form --------------------------------------------------------------------------

@pytest.mark.parametrize("names, hostlist", [
    (["n01", "n02", "n03", "n04"], "n[01-04]"),
    (["n07"], "n07"),
    (["n04", "n01", "n02", "g1", "n01"], "n[01-02,04],g1"),
    (["n9", "n10", "n11"], "n[9-11]"),
    (["r1n1", "r1n2", "r2n1"], "r1n[1-2],r2n1"),
    (["n099", "n100"], "n[099-100]"),
    (["n08", "n09", "n10", "n11"], "n[08-11]"),
    (["n02", "n10", "n9", "n100"], "n[02,10,100],n9"),
    (["n001", "n10", "n002"], "n[001-002],n10"),
    (["login", "n1"], "login,n1"),
])
def test_names_fold_into_a_hostlist_that_expands_back(names, hostlist):
    assert compact_hostlist(names) == (hostlist, 0)
    assert sorted(expand_hostlist(hostlist)) == sorted(set(names))


def test_a_hostlist_capped_counts_the_names_left_out():
    names = [f"n{i:02d}" for i in range(1, 40, 2)]  # 20 lone names: 20 runs
    assert compact_hostlist(names, 3) == ("n[01,03,05]", 17)
    assert compact_hostlist(["a", "b", "c1", "c2"], 1) == ("a", 3)


# ---- the nodes that take no job, named -------------------------------------------------------

def test_slurm_reason_is_read_without_its_stamp():
    line = ("NodeName=n07 CPUTot=8 CPUAlloc=0 RealMemory=16000 State=IDLE+DRAIN "
            "Partitions=batch Reason=bad disk sda [root@2026-03-01T08:00:00]")
    node, = SlurmCommands().parse_nodes(line)
    assert (node.state, node.reason) == ("idle+drain", "bad disk sda")
    bare, = SlurmCommands().parse_nodes(line.split(" Reason=")[0])
    assert bare.reason is None


def test_slurmrestd_reason_is_read():
    text = json.dumps({"nodes": [
        {"name": "n07", "state": ["IDLE", "DRAIN"], "reason": "fan failed"},
        {"name": "n08", "state": ["IDLE"], "reason": ""}]})
    assert [(n.state, n.reason) for n in slurm_rest.parse_nodes(text)] == [
        ("idle+drain", "fan failed"), ("idle", None)]


def test_down_and_drained_nodes_are_named_by_state_with_the_reason():
    """Before: "(others down or drained)", naming neither the nodes nor their states."""
    cfg, snap = lyra(states={"c01": "DOWN*", "c02": "DOWN", "c03": "IDLE+DRAIN",
                             "c04": "MIXED+DRAIN"})
    snap.nodes[2].reason = "bad disk"
    v, said = on_lyra("#SBATCH -p cpu -N 1 -c 8 -t 2:00:00", (cfg, snap))
    assert v.reasons == ["needs 1 node, partition cpu has only 0 usable (others down "
                         "c[01-02]; drained c03 (bad disk); draining c04)"], said
    assert "down c[01-02]; drained c03 (bad disk); draining c04" in said


def test_many_held_nodes_are_capped_and_counted():
    """Every other node of fifteen down: lone names, as many runs as the cap, the rest
    counted."""
    nodes = [_node(f"n{i:02d}", 32, 128000, ["batch"], state="idle" if i == 0 else "down")
             for i in range(0, 30, 2)]
    cfg, _ = hera()
    site = (cfg.model_copy(update={"name": "wide"}),
            _snapshot("wide", nodes, "batch"))
    said = reasons(run("#SBATCH -N 2 -p batch -t 1:00:00", site), "wide")
    shown = ",".join(f"{i:02d}" for i in range(2, 2 + 2 * MAX_RANGES_NAMED, 2))
    assert said == (f"needs 2 nodes, partition batch has only 1 usable (others down "
                    f"n[{shown}] and {14 - MAX_RANGES_NAMED} more nodes)")


def _snapshot(site: str, nodes, partition: str):
    from diamond_jupyter.model import Partition, SiteSnapshot

    return SiteSnapshot(site=site, taken_at=NOW, nodes=nodes, partitions=[Partition(
        name=partition, default=True, nodes=[n.name for n in nodes],
        total_nodes=len(nodes), total_cpus=sum(n.cpus for n in nodes))])


# ---- how old the view is ---------------------------------------------------------------------

def test_a_view_read_long_ago_says_its_age_once_and_decides_the_same():
    cfg, snap = lyra()
    old = snap.model_copy(update={"taken_at": NOW - TWO_H})
    spec = Federation.parse(f"#!/bin/bash\n{JOB}\n./app\n")
    told = place(spec, [(cfg, old)], now=NOW, stale_after_s=120)
    quiet = place(spec, [(cfg, old)], now=NOW)
    v = told.verdict("lyra")
    assert (v.view_read_at, v.view_age_s, v.unreachable_since) == (NOW - TWO_H, 8043.0, None)
    line = "  lyra view read 2:14:03 ago (read at 2026-03-01T06:45:57+00:00, not asked again " \
        "since)"
    assert told.explain().splitlines().count(line) == 1, told.explain()
    assert "view read" not in quiet.explain()
    assert told.model_dump(mode="json")["ranked"][0]["view_age_s"] == 8043.0
    # the decision is the one made without the word
    assert (told.choice, v.verdict, v.estimated_start) == (
        quiet.choice, quiet.verdict("lyra").verdict, quiet.verdict("lyra").estimated_start)


def test_a_view_within_the_poll_margin_says_nothing():
    cfg, snap = lyra()
    fresh = snap.model_copy(update={"taken_at": NOW - timedelta(seconds=119)})
    spec = Federation.parse(f"#!/bin/bash\n{JOB}\n./app\n")
    p = place(spec, [(cfg, fresh)], now=NOW, stale_after_s=120)
    assert p.verdict("lyra").view_read_at is None and "view read" not in p.explain()


def test_an_unreachable_sites_kept_view_says_since_when():
    cfg, snap = lyra()
    gone = snap.model_copy(update={
        "reachable": False, "error": "lyra: ssh: timed out", "taken_at": NOW,
        "read_at": NOW - TWO_H, "unreachable_since": NOW - timedelta(hours=2)})
    spec = Federation.parse(f"#!/bin/bash\n{JOB}\n./app\n")
    p = place(spec, [(cfg, gone)], now=NOW, stale_after_s=120)
    assert p.verdict("lyra").verdict == "UNREACHABLE"
    assert "  lyra view read 2:14:03 ago (site unreachable since 2026-03-01T07:00:00+00:00)" \
        in p.explain().splitlines(), p.explain()


async def test_a_site_gone_keeps_when_its_view_was_read_and_since_when(tmp_path):
    """A Slurm site on the local transport answers, then its scheduler fails twice: its
    snapshot keeps the view's read time and the first failure's, and `place --explain`
    says both (the poll interval 0 here: any age is past it)."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    tools = {"squeue": "exit 0", "sacct": "exit 0", "scontrol": """case "$*" in
  *partition*) echo 'PartitionName=batch Default=YES MaxTime=01:00:00 Nodes=c1 State=UP' ;;
  *node*) echo 'NodeName=c1 CPUTot=8 CPUAlloc=0 RealMemory=16000 State=IDLE Partitions=batch' ;;
esac"""}
    for name, body in tools.items():
        (bin_ / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_ / name).chmod(0o755)
    cfg = SiteConfig(name="solo", workdir=str(tmp_path), transport=TransportConfig(kind="local"),
                     commands={name: str(bin_ / name) for name in tools})
    fed = Federation(FederationConfig(sites=[cfg]), store=Store(tmp_path / "s.sqlite"),
                     poll_interval_s=0.0)
    spec = Federation.parse("#!/bin/bash\n#SBATCH -c 4 -t 10\n./app\n")
    try:
        read = await fed.snapshot("solo", max_age_s=0)
        assert read.reachable and read.read_at is None and read.unreachable_since is None
        for name in ("squeue", "scontrol"):  # the scheduler stops answering
            (bin_ / name).write_text("#!/bin/sh\necho 'slurm_load_jobs error' >&2\nexit 1\n")
        first = await fed.snapshot("solo", max_age_s=0)
        assert not first.reachable and first.nodes == read.nodes
        assert (first.read_at, first.unreachable_since) == (read.taken_at, first.taken_at)
        p = await fed.place(spec, max_age_s=0)
        v = p.verdict("solo")
        assert (v.view_read_at, v.unreachable_since) == (read.taken_at, first.taken_at)
        since = first.taken_at.isoformat(timespec="seconds")
        assert any(line.startswith("  solo view read ") and line.endswith(
            f" ago (site unreachable since {since})") for line in p.explain().splitlines()), \
            p.explain()
    finally:
        await fed.close()


async def test_a_site_that_answers_says_nothing_of_its_age(tmp_path):
    """The usual poll interval (60 s): a view just read is not old."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for name, body in {"squeue": "exit 0", "sacct": "exit 0", "scontrol": "exit 0"}.items():
        (bin_ / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_ / name).chmod(0o755)
    cfg = SiteConfig(name="solo", workdir=str(tmp_path), transport=TransportConfig(kind="local"),
                     commands={n: str(bin_ / n) for n in ("squeue", "sacct", "scontrol")})
    fed = Federation(FederationConfig(sites=[cfg]), store=Store(tmp_path / "s.sqlite"))
    try:
        p = await fed.place(Federation.parse("#!/bin/bash\n#SBATCH -c 4 -t 10\n./app\n"))
        assert p.verdict("solo").view_read_at is None and "view read" not in p.explain()
    finally:
        await fed.close()
