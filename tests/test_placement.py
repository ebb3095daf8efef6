"""Placement: feasibility reasons, backfill estimates, scoring and policies."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.model import (
    BadInput,
    Constraints,
    JobSpec,
    JobState,
    JobStatus,
    Node,
    Partition,
    Resources,
    SiteSnapshot,
)
from diamond_jupyter.placement import Placement, hms, place
from diamond_jupyter.placement_fit import expand_hostlist

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
H = 3600


def node(name, cpus, mem, gpus=0, features=(), parts=(), alloc=0, galloc=0, state=None):
    st = state or ("idle" if not alloc and not galloc else
                   "allocated" if alloc >= cpus else "mixed")
    return Node(name=name, state=st, cpus=cpus, memory_mb=mem, gpus=gpus,
                cpus_allocated=alloc, gpus_allocated=galloc, features=list(features),
                partitions=list(parts))


def running(jid, node_list, cpus, *, left_s, walltime_s=4 * H, part=None, gpus=None, nodes=1):
    return JobStatus(native_id=jid, state=JobState.RUNNING, node_list=node_list, cpus=cpus,
                     gpus=gpus, nodes=nodes, partition=part, walltime_s=walltime_s,
                     started_at=NOW - timedelta(seconds=walltime_s - left_s))


def pending(jid, nodes, cpus, walltime_s, part=None, est=None, reason=None, gpus=None):
    return JobStatus(native_id=jid, state=JobState.PENDING, nodes=nodes, cpus=cpus,
                     gpus=gpus, walltime_s=walltime_s, partition=part,
                     estimated_start=est, reason=reason)


def alpha(jobs=(), alloc=(0, 0, 0, 0), states=None, **cfg):
    names = [f"a{i}" for i in range(1, 5)]
    nodes = [node(n, 32, 128000, features=["avx2"], parts=["compute", "debug"], alloc=a,
                  state=(states or {}).get(n)) for n, a in zip(names, alloc, strict=True)]
    parts = [Partition(name="compute", default=True, max_time_s=24 * H, nodes=["a[1-4]"]),
             Partition(name="debug", max_time_s=30 * 60, nodes=["a[1-4]"])]
    c = SiteConfig(name="alpha", metadata={"architecture": "x86_64", "software": ["gromacs"],
                                           "container_runtimes": ["apptainer"]}, **cfg)
    return c, SiteSnapshot(site="alpha", taken_at=NOW, partitions=parts, nodes=nodes,
                           jobs=list(jobs))


def beta(jobs=(), **cfg):
    nodes = [node(n, 64, 262144, features=["arch=aarch64"], parts=["main"])
             for n in ("b1", "b2")]
    parts = [Partition(name="main", default=True, max_time_s=48 * H)]
    c = SiteConfig(name="beta", metadata={"software": ["lammps"], "container_runtimes": []},
                   **cfg)
    return c, SiteSnapshot(site="beta", taken_at=NOW, partitions=parts, nodes=nodes,
                           jobs=list(jobs))


def gamma(jobs=(), galloc=(0, 0), alloc=(0, 0), short=("g1", "g2"), **cfg):
    nodes = []
    for n, g, a in zip(("g1", "g2"), galloc, alloc, strict=True):
        ps = ["long"] + (["short"] if n in short else [])
        nodes.append(node(n, 48, 192000, gpus=2, parts=ps, alloc=a, galloc=g,
                          features=["x86_64"]))
    parts = [Partition(name="short", default=True, max_time_s=30 * 60),
             Partition(name="long", max_time_s=None)]
    c = SiteConfig(name="gamma", **cfg)
    return c, SiteSnapshot(site="gamma", taken_at=NOW, partitions=parts, nodes=nodes,
                           jobs=list(jobs))


def spec(nodes=1, cpus=4, walltime=H, gpus=None, queue=None, **meta):
    features = meta.pop("features", [])
    res = {k: meta.pop(k) for k in list(meta) if k in Resources.model_fields}
    return JobSpec(name="t", command="true", queue=queue, metadata=meta,
                   constraints=Constraints(features=features),
                   resources=Resources(nodes=nodes, cpus_per_task=cpus, walltime_s=walltime,
                                       gpus_per_node=gpus, **res))


def verdict(p: Placement, site: str):
    v = p.verdict(site)
    assert v is not None
    return v


# --- feasibility reasons ----------------------------------------------------------------

def test_architecture_from_metadata_and_features():
    p = place(spec(architecture="aarch64"), [alpha(), beta(), gamma()], now=NOW)
    assert p.choice == "beta"
    a = verdict(p, "alpha")
    assert a.verdict == "INCOMPATIBLE" and not a.feasible
    assert a.reasons == ["architecture mismatch: job needs aarch64, site has x86_64"]
    assert verdict(p, "gamma").reasons == [
        "architecture mismatch: job needs aarch64, site has x86_64"]
    p = place(spec(architecture="amd64"), [beta()], now=NOW)
    assert verdict(p, "beta").reasons == [
        "architecture mismatch: job needs x86_64, site has aarch64"]


def test_declared_arch_feature_wins_over_reported_arch():
    c, s = beta()
    for n in s.nodes:
        n.architecture = "x86_64"  # a test bed emulating aarch64 on x86 hardware
    assert place(spec(architecture="aarch64"), [(c, s)], now=NOW).choice == "beta"


def test_missing_feature():
    p = place(spec(features=["avx512"]), [alpha()], now=NOW)
    assert verdict(p, "alpha").reasons == ["missing feature 'avx512' (site offers: avx2)"]
    assert place(spec(features=["avx2|sse4"]), [alpha()], now=NOW).choice is None  # sbatch
    assert verdict(place(spec(features=["avx2|sse4"]), [alpha()], now=NOW), "alpha").reasons == [
        "constraint 'avx2|sse4' names feature(s) the site does not have: sse4 (site offers: "
        "avx2)"]  # refuses a feature no node has, even as an alternative (seen on the test bed)
    assert place(spec(features=["[avx2|avx2]"]), [alpha()], now=NOW).choice == "alpha"


def test_gpu_reasons():
    p = place(spec(gpus=1), [alpha(), gamma()], now=NOW)
    assert verdict(p, "alpha").reasons == ["no GPUs on any node"]
    assert p.choice == "gamma"
    p = place(spec(gpus=4), [gamma()], now=NOW)
    assert verdict(p, "gamma").reasons == ["needs 4 GPUs per node, largest node has 2"]


def test_node_size_reasons():
    p = place(spec(cpus=4, tasks_per_node=32), [beta()], now=NOW)
    assert verdict(p, "beta").reasons == [
        "needs 128 CPUs per node (32 tasks x 4 CPUs), largest node has 64"]
    p = place(spec(memory_mb=300000), [beta()], now=NOW)
    assert verdict(p, "beta").reasons == [
        "needs 300000 MB memory per node, largest node has 262144 MB"]


def test_walltime_above_partition_max():
    p = place(spec(gpus=1, walltime=2 * H, queue="short"), [gamma()], now=NOW)
    g = verdict(p, "gamma")
    assert g.verdict == "INCOMPATIBLE"
    assert g.reasons == ["walltime 2:00:00 above partition short MaxTime 0:30:00"]
    # Without a queue the long partition takes it; the short one is noted.
    g = verdict(place(spec(gpus=1, walltime=2 * H), [gamma()], now=NOW), "gamma")
    assert g.feasible and g.partition == "long"
    assert "walltime 2:00:00 above partition short MaxTime 0:30:00" in g.notes


def test_too_many_nodes():
    p = place(spec(nodes=8), [alpha()], now=NOW)
    assert verdict(p, "alpha").reasons == [
        "needs 8 nodes, largest partition has 4",
        "walltime 1:00:00 above partition debug MaxTime 0:30:00"]


def test_partition_not_allowed_is_restricted():
    p = place(spec(queue="debug", walltime=600), [alpha(allowed_partitions=["compute"])],
              now=NOW)
    a = verdict(p, "alpha")
    assert a.verdict == "RESTRICTED"
    assert a.reasons == ["partition 'debug' not allowed (allowed: compute)"]
    assert p.choice is None


def test_account_restriction_and_unknown_partition():
    c, s = alpha()
    s.partitions[0].allowed_accounts = ["physics"]
    s.partitions[1].allowed_accounts = ["physics"]
    a = verdict(place(spec(), [(c, s)], now=NOW), "alpha")
    assert a.verdict == "RESTRICTED"
    assert "account 'none' not allowed in partition 'compute' (allowed: physics)" in a.reasons
    ok = spec().model_copy(update={"account": "physics"})
    assert place(ok, [(c, s)], now=NOW).choice == "alpha"
    a = verdict(place(spec(queue="gpu"), [alpha()], now=NOW), "alpha")
    assert a.reasons == ["partition 'gpu' not found (site has: compute, debug)"]


def test_software_and_container():
    p = place(spec(software=["gromacs/2023"]), [alpha(), beta()], now=NOW)
    assert p.choice == "alpha"
    assert verdict(p, "beta").reasons == [
        "software 'gromacs/2023' not installed (site has: lammps)"]
    p = place(spec(container="docker://lammps:latest"), [alpha(), beta()], now=NOW)
    assert verdict(p, "beta").reasons == [
        "container docker://lammps:latest needs a container runtime, site has none"]
    assert p.choice == "alpha"
    # gamma declares no software: it is not ruled out on that ground
    assert place(spec(software="gromacs"), [gamma()], now=NOW).choice == "gamma"


def test_unreachable_and_down_nodes():
    c, s = alpha()
    s.reachable, s.error = False, "ssh: timed out"
    v = verdict(place(spec(), [(c, s)], now=NOW), "alpha")
    assert v.verdict == "UNREACHABLE" and v.reasons == ["site unreachable: ssh: timed out"]
    down = alpha(states={"a1": "down", "a2": "drain"})
    v = verdict(place(spec(nodes=4), [down], now=NOW), "alpha")
    assert v.verdict == "INCOMPATIBLE"
    assert "needs 4 nodes, partition compute has only 2 usable (others down a1; drained a2)" \
        in v.reasons
    assert place(spec(nodes=2), [down], now=NOW).choice == "alpha"


# --- estimates and scoring --------------------------------------------------------------

def busy_alpha(left_s=3 * H, **cfg):
    jobs = [running(f"r{i}", f"a{i}", 32, left_s=left_s) for i in range(1, 5)]
    return alpha(jobs, alloc=(32, 32, 32, 32), **cfg)


def test_busy_site_loses_to_idle_slower_site():
    p = place(spec(), [busy_alpha(speed_factor=2.0), gamma()], now=NOW)
    a, g = verdict(p, "alpha"), verdict(p, "gamma")
    assert p.choice == "gamma"
    assert a.verdict == "BUSY" and a.start_source == "simulation"
    assert a.estimated_start == NOW + timedelta(hours=3)
    assert a.estimated_runtime_s == 1800
    assert a.estimated_finish == NOW + timedelta(hours=3.5)
    assert g.verdict == "READY" and g.estimated_finish == NOW + timedelta(hours=1)
    assert [v.site for v in p.ranked] == ["gamma", "alpha"]


def test_faster_site_wins_when_both_idle():
    p = place(spec(), [gamma(), alpha(speed_factor=2.0)], now=NOW)
    assert p.choice == "alpha"
    assert verdict(p, "alpha").estimated_finish == NOW + timedelta(minutes=30)


def test_backfill_short_job_runs_before_big_reservation():
    jobs = [running(f"r{i}", f"a{i}", 32, left_s=2 * H) for i in (1, 2, 3)]
    jobs.append(pending("big", 4, 128, 4 * H))
    site = alpha(jobs, alloc=(32, 32, 32, 0))
    short = verdict(place(spec(walltime=H), [site], now=NOW), "alpha")
    assert short.verdict == "READY" and short.estimated_start == NOW
    long = verdict(place(spec(walltime=3 * H), [site], now=NOW), "alpha")
    assert long.verdict == "BUSY"
    assert long.estimated_start == NOW + timedelta(hours=6)  # after the big job


def test_backfill_on_nodes_the_head_does_not_need():
    jobs = [running("r1", "a1", 32, left_s=2 * H), pending("head", 1, 32, 10 * H)]
    site = alpha(jobs, alloc=(32, 32, 32, 0))  # a2, a3: allocations no job explains
    # head takes a4 now; a long probe waits until a1 frees (a2/a3 held for UNKNOWN_HOLD_S)
    v = verdict(place(spec(walltime=5 * H), [site], now=NOW), "alpha")
    assert v.estimated_start == NOW + timedelta(hours=1)


def test_gpu_node_level_resources():
    jobs = [running("r1", "g1", 2, gpus=1, left_s=H, part="long"),
            running("r2", "g2", 2, gpus=1, left_s=2 * H, part="long")]
    site = gamma(jobs, galloc=(1, 1), alloc=(2, 2))
    one = verdict(place(spec(gpus=1, walltime=1200), [site], now=NOW), "gamma")
    assert one.verdict == "READY"
    two = verdict(place(spec(gpus=2, walltime=1200), [site], now=NOW), "gamma")
    assert two.verdict == "BUSY" and two.estimated_start == NOW + timedelta(hours=1)


def test_partition_with_earlier_start_wins():
    jobs = [running("r1", "g1", 48, gpus=2, left_s=2 * H, part="short")]
    site = gamma(jobs, galloc=(2, 0), alloc=(48, 0), short=("g1",))
    v = verdict(place(spec(gpus=1, walltime=1200), [site], now=NOW), "gamma")
    assert v.partition == "long" and v.verdict == "READY"
    v = verdict(place(spec(gpus=1, walltime=1200), [gamma()], now=NOW), "gamma")
    assert v.partition == "short"  # tie: the default partition


def test_scheduler_estimates():
    est = NOW + timedelta(minutes=90)
    jobs = [running(f"r{i}", f"a{i}", 32, left_s=H) for i in range(1, 5)]
    jobs.append(pending("p1", 4, 128, 2 * H, est=est))
    v = verdict(place(spec(), [alpha(jobs, alloc=(32,) * 4)], now=NOW), "alpha")
    assert v.start_source == "scheduler"
    assert v.estimated_start == est + timedelta(hours=2)  # p1 keeps its estimated slot
    probe = NOW + timedelta(minutes=7)
    v = verdict(place(spec(), [busy_alpha()], now=NOW, estimates={"alpha": probe}), "alpha")
    assert v.start_source == "scheduler" and v.estimated_start == probe


def test_stale_scheduler_estimate_does_not_hand_free_nodes_to_the_probe():
    # a4 came free after the scheduler planned p1 (from walltimes) for +2 h: p1 waits only
    # for resources, so the scheduler's next cycle starts it on a4, before the probe
    jobs = [running(f"r{i}", f"a{i}", 32, left_s=H) for i in range(1, 4)]
    late = NOW + timedelta(hours=2)
    for reason, start in (("Priority", NOW + timedelta(hours=1)),
                          ("Resources", NOW + timedelta(hours=1)),
                          (None, NOW + timedelta(hours=1)),
                          ("QOSMaxJobsPerUserLimit", NOW)):  # waits for more: keeps its slot
        q = [*jobs, pending("p1", 1, 32, 2 * H, est=late, reason=reason)]
        v = verdict(place(spec(cpus=32), [alpha(q, alloc=(32, 32, 32, 0))], now=NOW), "alpha")
        assert v.estimated_start == start, reason


def test_held_pending_job_blocks_nobody():
    jobs = [pending("held", 4, 128, 10 * H, reason="JobHeldUser")]
    v = verdict(place(spec(), [alpha(jobs)], now=NOW), "alpha")
    assert v.verdict == "READY" and v.queue_depth == 1


def test_history_stage_in_and_cost():
    s = spec(nodes=2, cpus=8, walltime=2 * H, application="md")
    site = gamma(charge_factor=3.0, speed_factor=2.0, metadata={"bandwidth_mbps": 80})
    v = verdict(place(s, [site], now=NOW, history={"md": 3600}, stage_in_bytes=10**9),
                "gamma")
    assert v.estimated_runtime_s == 1800
    assert v.stage_in_s == pytest.approx(100.0)
    assert v.estimated_finish == NOW + timedelta(seconds=1900)
    assert v.cost == pytest.approx(2 * (8 / 48) * 0.5 * 3.0)
    ex = spec()
    ex.constraints.exclusive = True
    assert verdict(place(ex, [gamma()], now=NOW), "gamma").cost == pytest.approx(1.0)


# --- policies -----------------------------------------------------------------------------

def three_sites():
    return [busy_alpha(charge_factor=0.5), beta(charge_factor=2.0), gamma()]


def test_policies():
    s = spec()
    assert place(s, three_sites(), now=NOW).choice == "gamma"  # idle; tie on finish → cheaper
    assert place(s, three_sites(), now=NOW, policy="min_cost").choice == "alpha"
    few = place(s, [busy_alpha(), beta(jobs=[pending("x", 1, 1, H)] * 3), gamma()], now=NOW,
                policy="fewest_pending")
    assert few.choice == "gamma" and verdict(few, "beta").score == 3
    assert place(s, three_sites(), now=NOW, policy="first_ready").choice == "beta"
    fixed = place(s, three_sites(), now=NOW, policy="fixed", home="alpha")
    assert fixed.choice == "alpha" and fixed.ranked[0].site == "alpha"
    gpu = place(spec(gpus=1), three_sites(), now=NOW, policy="fixed", home="alpha")
    assert gpu.choice is None  # home cannot run it
    picks = {place(s, three_sites(), now=NOW, policy="random", seed=k).choice
             for k in range(30)}
    assert picks == {"alpha", "beta", "gamma"}
    a = place(s, three_sites(), now=NOW, policy="random", seed=7)
    b = place(s, three_sites(), now=NOW, policy="random", seed=7)
    assert [v.site for v in a.ranked] == [v.site for v in b.ranked]
    only_gpu = place(spec(gpus=1), three_sites(), now=NOW, policy="random", seed=1)
    assert only_gpu.choice == "gamma"
    with pytest.raises(BadInput):
        place(s, three_sites(), policy="nope")
    with pytest.raises(BadInput):
        place(s, three_sites(), policy="fixed")
    with pytest.raises(BadInput):
        place(s, three_sites(), policy="fixed", home="nowhere")


def test_ranking_feasible_first_then_restricted():
    p = place(spec(gpus=1, queue="short", walltime=600),
              [alpha(), gamma(allowed_partitions=["long"]), beta()], now=NOW)
    assert [v.verdict for v in p.ranked] == ["RESTRICTED", "INCOMPATIBLE", "INCOMPATIBLE"]
    assert p.choice is None


def test_explain_lists_every_site_and_reason():
    p = place(spec(architecture="x86_64"), [busy_alpha(), beta(), gamma()], now=NOW)
    text = p.explain()
    lines = text.splitlines()
    assert len(lines) == 2 + 3
    for site in ("alpha", "beta", "gamma"):
        assert any(site in ln for ln in lines)
    assert "architecture mismatch: job needs x86_64, site has aarch64" in text
    assert "READY" in text and "BUSY" in text and "+3:00:00" in text
    assert lines[2].startswith("*") and "gamma" in lines[2]


def test_sites_without_partitions_or_nodes():
    flux = (SiteConfig(name="flux"), SiteSnapshot(
        site="flux", nodes=[node("f1", 16, 64000), node("f2", 16, 64000)],
        jobs=[running("r", "f1", 16, left_s=600)]))
    v = verdict(place(spec(nodes=2), [flux], now=NOW), "flux")
    assert v.partition is None and v.estimated_start == NOW + timedelta(minutes=10)
    totals = (SiteConfig(name="tot"), SiteSnapshot(
        site="tot", partitions=[Partition(name="batch", total_nodes=4, total_cpus=128)],
        jobs=[running("r", None, 64, nodes=2, left_s=600, part="batch")]))
    v = verdict(place(spec(nodes=3), [totals], now=NOW.replace(tzinfo=None)), "tot")
    assert v.partition == "batch" and v.verdict == "BUSY"
    assert v.estimated_start == NOW + timedelta(minutes=10)
    assert place(spec(), [], now=NOW).choice is None


def test_partition_specific_scheduler_estimate():
    est = {"gamma:short": NOW + timedelta(hours=2), "gamma:long": NOW + timedelta(hours=1)}
    v = verdict(place(spec(gpus=1, walltime=600), [gamma()], now=NOW, estimates=est), "gamma")
    assert v.partition == "long" and v.start_source == "scheduler" and v.verdict == "BUSY"


# --- helpers and scale --------------------------------------------------------------------

def test_hostlist_and_hms():
    assert expand_hostlist("a[1-3,05],b,c[01-02]x") == ["a1", "a2", "a3", "a05", "b",
                                                        "c01x", "c02x"]
    assert hms(5400) == "1:30:00" and hms(90000) == "1-01:00:00"


def test_large_queue_places():
    jobs = [running(f"r{i}", f"a{i}", 32, left_s=H) for i in range(1, 5)]
    jobs += [pending(f"p{i}", 1 + i % 4, None, (1 + i % 5) * 600) for i in range(10_000)]
    v = verdict(place(spec(), [alpha(jobs, alloc=(32,) * 4)], now=NOW), "alpha")
    assert v.verdict == "BUSY" and v.queue_depth == 10_000
    assert v.estimated_start > NOW + timedelta(hours=1)


def test_kept_per_gpu_cpus_and_memory_are_not_understated() -> None:
    """--cpus-per-gpu / --mem-per-gpu with no exact per-task form stay as written; placement
    still asks each node for C CPUs and M memory per GPU it holds."""
    from diamond_jupyter.dialects.slurm_script import slurm_script
    from diamond_jupyter.placement_fit import request

    def kept_and_request(options: str) -> tuple[list[str], tuple[int, int, int]]:
        spec = slurm_script.parse_script(f"#!/bin/bash\n#SBATCH {options}\nsrun x\n")
        req = request(spec, 64)
        return [d.option for d in spec.unknown], (req.gpn, req.cpn, req.mem)

    # 4 tasks on nodes of 2 GPUs: how many per node is the scheduler's, 16 CPUs at least
    assert kept_and_request("-n 4 --gpus-per-node=2 --cpus-per-gpu=8") == (
        ["--cpus-per-gpu"], (2, 16, 0))
    # 4 tasks of 1 GPU placed 4 to a node here: 4 x 10G there (read as 10G per CPU)
    assert kept_and_request("-n 4 --gpus-per-task=1 --mem-per-gpu=10G") == (
        [], (4, 4, 40 * 1024))
