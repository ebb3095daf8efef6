"""The 30 recorded sites of `benchmarks/place_latency` (and `place_identity`): each copy of
the recorded queue runs on its own copy of the recorded nodes, as a real site's jobs are
spread over its nodes, not piled on the first ones."""

from __future__ import annotations

from datetime import timezone

from benchmarks.place_latency import _hosts_of_copy, _replicated
from diamond_jupyter.dialects.outputs_common import expand_hostlist
from diamond_jupyter.dialects.slurm_commands import SlurmCommands


def test_a_copy_renames_hosts_and_hostlists_as_its_nodes_are_renamed():
    assert _hosts_of_copy("c1", 0) == "c1"
    assert [_hosts_of_copy(h, 3) for h in ("c1", "c2", "c[1-2]", "g1", "c[1-2],g1")] == [
        "c7", "c8", "c[7-8]", "g4", "c[7-8],g4"]


def test_running_jobs_of_every_queue_copy_hold_nodes_of_the_site_spread_over_its_copies():
    outputs, _ = _replicated(1, 0)
    snap = SlurmCommands(jobcomp=True, tz=timezone.utc).parse_snapshot("site00", outputs)
    names = {n.name for n in snap.nodes}
    copies = len(names) // 3  # the recorded c1, c2, g1 once a copy
    held = [set(expand_hostlist(j.node_list or "")) for j in snap.running]
    assert all(h and h <= names for h in held), "a running job on a node the site lacks"
    queue_copies = len(snap.running) // 3  # the recorded three running jobs once a copy
    used = set().union(*held)
    assert len(used) == 3 * min(copies, queue_copies), sorted(used)[:9]
    # the k-th copy's wide job holds the k-th copy's two CPU nodes
    wide = next(j for j in snap.running if j.native_id == "1016")
    assert wide.node_list == "c[3-4]"


def test_the_profile_holds_the_decisions_and_not_the_parse():
    """`--profile`: what a decision spends, without the parse done before it."""
    import cProfile
    import pstats

    from benchmarks.place_latency import profile_report, recorded

    prof = cProfile.Profile()
    recorded(2, 1, 1, cpu=True, profile=prof)
    called = {name for _, _, name in pstats.Stats(prof).stats}
    assert {"place", "earliest_start"} <= called
    assert "parse_snapshot" not in called
    report = profile_report(prof, 5)
    assert report.count("Ordered by: cumulative time") == 1
    assert report.count("Ordered by: internal time") == 1
