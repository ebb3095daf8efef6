"""The second sweep of SWF logs unlike the shared ones (`fixtures/swf_unseen2/make_fixtures.py`):
header comments of every kind, grids of clusters, headers that count nodes, request-only
sizes over the machine, repeated job numbers, jobs run past their request, a workload model
without waits, a flurry, a DOS file's tail, compressed copies; and the thinning's match of
the log's utilization on sites of a few CPUs."""

from __future__ import annotations

import bz2
import gzip
import lzma
import math
import statistics
import zipfile
from pathlib import Path

import pytest
from sweep_helpers import replay_number, sound_replays, whole_window

from benchmarks import prediction
from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed.clusters import CLUSTERS, ClusterDef, PartitionDef, cluster
from diamond_jupyter.testbed.trace import plan_replay, read_swf

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "swf_unseen2"
UNSEEN = sorted(FIXTURES.glob("*.swf"))
FIRST_SWEEP = sorted((HERE / "fixtures" / "swf_unseen").glob("*.swf"))
SITES = [c.name for c in CLUSTERS]


def _shared() -> list[Path]:
    relative = HERE.parents[1] / "shared" / "traces"
    return sorted((relative if relative.is_dir() else Path("/work/shared/traces"))
                  .glob("*.swf.gz"))


def _small(nodes: int, cpus: int) -> ClusterDef:
    """A site of a few CPUs, as small as a test bed's."""
    return ClusterDef(name=f"s{nodes}x{cpus}", index=9, nodes=nodes, cpus=cpus,
                      memory_mb=1000, features=(),
                      partitions=(PartitionDef("batch", "1-00:00:00", default=True),))


def test_the_fixtures_are_there_and_small() -> None:
    assert len(UNSEEN) == 9, UNSEEN
    assert all(p.stat().st_size < 50_000 for p in UNSEEN)


@pytest.mark.parametrize("site", SITES)
@pytest.mark.parametrize("path", UNSEEN, ids=[p.stem for p in UNSEEN])
def test_every_log_reads_and_replays_sensibly(path: Path, site: str) -> None:
    log = read_swf(path)
    ran = {j.number for j in log.jobs if j.run > 0 and j.procs > 0}
    for plan in sound_replays(log, site, ran):
        if plan.log_utilization <= 1.0:  # else the site cannot carry it (a note says so)
            assert abs(plan.site_utilization - plan.log_utilization) < 0.12, plan.summary()
        else:
            assert any("times its machine" in n for n in plan.notes), plan.summary()
        for j in plan.jobs:
            # every fixture's runs fit the test bed's partitions: none is cut short
            assert j.runtime_s <= j.walltime_min * 60, (j, plan.summary())


def test_every_header_comment_and_a_grid_of_clusters() -> None:
    """headers_grid.swf: every header the archive writes (dates with colons, a field on two
    lines, queue and partition descriptions, MaxRuntime, AllowOveruse, ...), five clusters
    of 144 and 64 processors in the partition field, status -1, memory fields, preceding
    jobs and think times, requests of 0."""
    log = read_swf(FIXTURES / "headers_grid.swf")
    assert log.max_procs == 400 and len(log.jobs) == 300 and not log.notes
    assert {j.status for j in log.jobs} == {-1, 0, 1, 5}
    plan = plan_replay(log, cluster("beta"), start=log.span[0], duration_s=whole_window(log))
    replayed = {replay_number(j.name) for j in plan.jobs}
    assert replayed <= {j.number for j in log.jobs if j.run > 0}
    assert {j.status for j in log.jobs if j.number in replayed} == {-1, 0, 1, 5}
    zero = {j.number for j in log.jobs if j.req_time == 0} & replayed
    # a request of 0 is none: the header's MaxRuntime, 259,200 s, 72 min at --scale 60
    # (sweep 15; before: the default partition's limit, two days)
    assert zero
    assert {j.walltime_min for j in plan.jobs if replay_number(j.name) in zero} == {72}


def test_a_maxprocs_header_counting_nodes_is_corrected_by_the_schedule() -> None:
    """header_counts_nodes.swf says MaxProcs 64; its jobs (none over 64) held up to 128 at
    once. Before: the machine was 64, every share doubled and the log's utilization 1.6."""
    log = read_swf(FIXTURES / "header_counts_nodes.swf")
    assert max(j.procs for j in log.jobs) <= 64
    assert log.max_procs == 128
    assert "header says MaxProcs 64" in log.notes[0]
    for seed in range(1, 6):
        plan = plan_replay(log, cluster("alpha"), seed=seed)
        assert plan.log_utilization <= 1.0 and "MaxProcs 64" in plan.notes[0]


def test_shared_logs_keep_their_headers() -> None:
    """A log's rounding overlaps a few jobs (HPC2N held 248 of 240 at moments): not a
    header to correct."""
    sizes = {read_swf(p).name.split("-")[0]: read_swf(p).max_procs for p in _shared()}
    assert sizes == {"HPC2N": 240, "KTH": 100, "LLNL": 4008}


def test_a_blue_gene_counted_in_nodes_is_a_machine_of_nodes() -> None:
    """bluegene_nodes.swf: header 40,960 nodes and 163,840 cores, sizes in nodes (512 up to
    the whole 40,960). Before: shares a quarter of what they were, the load a quarter."""
    log = read_swf(FIXTURES / "bluegene_nodes.swf")
    assert log.max_procs == 40_960 and "counted in nodes" in log.notes[0]
    full = next(j for j in log.jobs if j.procs == 40_960 and j.run > 0)
    plan = plan_replay(log, cluster("alpha"), start=full.submit, duration_s=1)
    assert [(j.nodes, j.cpus_per_node) for j in plan.jobs
            if replay_number(j.name) == full.number] == [(4, 8)]
    utils = [plan_replay(log, cluster("alpha"), seed=s).log_utilization for s in (1, 2, 3)]
    assert statistics.mean(utils) > 0.3  # counted in cores it was under 0.13
    assert read_swf(HERE / "fixtures" / "swf_unseen" / "bluegene.swf").max_procs == 163_840


def test_a_requested_size_over_the_machine_is_the_machine() -> None:
    """request_over_machine.swf: no allocated counts; one job that ran asked for 100,000 of
    64 processors. Before: the machine became 100,000 and every other job one CPU."""
    log = read_swf(FIXTURES / "request_over_machine.swf")
    assert log.max_procs == 64 and "requested more than" in log.notes[0]
    big = next(j for j in log.jobs if j.number == 101)
    assert big.procs == 64
    plan = plan_replay(log, cluster("alpha"), start=log.span[0], duration_s=whole_window(log))
    sizes = {replay_number(j.name): j.nodes * j.cpus_per_node for j in plan.jobs}
    assert sizes[101] == 32 and max(sizes[n] for n in sizes if n != 101) >= 8


def test_repeated_job_numbers_are_each_a_job_of_their_own_name() -> None:
    """numbers_repeat.swf: two logs joined, each numbered from 1."""
    log = read_swf(FIXTURES / "numbers_repeat.swf")
    assert len(log.jobs) == 240 and len({j.number for j in log.jobs}) == 120
    plan = plan_replay(log, cluster("beta"), start=log.span[0], duration_s=whole_window(log))
    names = [j.name for j in plan.jobs]
    assert len(names) == len(set(names)) == len([j for j in log.jobs if j.run > 0])
    assert "trace-arrive-1" in names and "trace-arrive-1.2" in names


def test_partial_lines_without_a_summary_have_names_of_their_own(tmp_path: Path) -> None:
    p = tmp_path / "parts.swf"
    p.write_text("; MaxProcs: 8\n"
                 "1 0 0 100 4 -1 -1 4 600 -1 2 1 1 -1 1 -1 -1 -1\n"
                 "1 0 200 100 4 -1 -1 4 600 -1 3 1 1 -1 1 -1 -1 -1\n")
    plan = plan_replay(read_swf(p), cluster("alpha"), start=0, duration_s=10, scale=60)
    assert sorted(j.name for j in plan.jobs) == ["trace-arrive-1", "trace-arrive-1.2"]


def test_a_job_that_ran_past_its_request_is_not_cut_short() -> None:
    """runs_past_request.swf: a third of its jobs ran 1.1-4x their request (their center
    let them). Before: their limit was the request and the site killed them early."""
    log = read_swf(FIXTURES / "runs_past_request.swf")
    past = {j.number for j in log.jobs if j.run > j.req_time > 0}
    assert len(past) > 50
    plan = plan_replay(log, cluster("alpha"), start=log.span[0], duration_s=whole_window(log))
    by_number = {j.number: j for j in log.jobs}
    for j in plan.jobs:
        n = replay_number(j.name)
        assert j.runtime_s <= j.walltime_min * 60, j
        if n not in past:  # the others keep their users' own requests
            assert j.walltime_min == max(1, math.ceil(by_number[n].req_time / 3600))


def test_a_running_job_past_its_request_keeps_what_it_has_left(tmp_path: Path) -> None:
    """Running at the window's start 30 s past its 60 s request, with 300 s to go: its limit
    is what is left of its run, not its partition's whole day."""
    p = tmp_path / "over.swf"
    p.write_text("; MaxProcs: 8\n"
                 "1 0 0 390 4 -1 -1 4 60 -1 1 1 1 -1 1 -1 -1 -1\n"
                 "2 200 0 10 1 -1 -1 1 60 -1 1 1 1 -1 1 -1 -1 -1\n")
    plan = plan_replay(read_swf(p), cluster("alpha"), start=90, duration_s=10, scale=1)
    [run] = [j for j in plan.jobs if j.name == "trace-run-1"]
    assert run.runtime_s == 300 and run.walltime_min == 5


def test_a_model_without_waits_says_its_offered_load_exceeds_the_machine() -> None:
    """model_no_waits.swf (as Lublin's model): no waits, no requests; its busy hours offer
    more than its 64 processors. Before session 24 each job was taken to start at its
    submission (a utilization over 1, said in a note); now the model's machine is simulated
    (FCFS with EASY backfilling), so no window holds more than the machine, the work over it
    waits in the queue rebuilt at the window's start, and every plan says so."""
    log = read_swf(FIXTURES / "model_no_waits.swf")
    assert all(j.wait == -1 and j.req_time == -1 for j in log.jobs) and log.max_procs == 64
    plans = [plan_replay(log, cluster("alpha"), seed=s) for s in range(1, 9)]
    assert all(p.log_utilization <= 1.0 + 1e-9 for p in plans)
    assert any(p.queued_at_start > 0 for p in plans)
    for p in plans:
        assert any("no recorded wait" in n and "simulated" in n for n in p.notes), p.notes


def test_a_flurry_is_replayed_thinned_to_the_logs_load() -> None:
    """flurry.swf: 700 one-processor jobs within a minute among 150 others."""
    log = read_swf(FIXTURES / "flurry.swf")
    burst = [j for j in log.jobs if j.procs == 1 and 86400 + 3600 <= j.submit < 86400 + 3660]
    assert len(burst) >= 700
    plan = plan_replay(log, cluster("alpha"), start=86400 + 3000, duration_s=60)
    assert plan.arrivals_in_log >= 700
    assert abs(plan.site_utilization - plan.log_utilization) < 0.02


def test_a_dos_end_of_file_mark_and_nul_padding_are_no_lines() -> None:
    raw = (FIXTURES / "dos_tail.swf").read_bytes()
    assert b"\x1a" in raw and b"\0" in raw
    assert len(read_swf(FIXTURES / "dos_tail.swf").jobs) == 100


def test_bzip2_and_xz_are_read_by_their_bytes(tmp_path: Path) -> None:
    plain = FIXTURES / "dos_tail.swf"
    want = read_swf(plain).jobs
    for name, pack in (("a.swf.bz2", bz2.compress), ("b.swf.xz", lzma.compress),
                       ("c.swf", bz2.compress), ("d.swf.gz", lzma.compress)):
        p = tmp_path / name
        p.write_bytes(pack(plain.read_bytes()))
        log = read_swf(p)
        assert log.jobs == want and log.name == name.split(".")[0]
    cut = tmp_path / "cut.swf.bz2"
    cut.write_bytes(bz2.compress(plain.read_bytes())[:300])
    with pytest.raises(BadInput, match="not a readable bzip2 file"):
        read_swf(cut)


def test_an_archive_is_named_not_read_as_lines(tmp_path: Path) -> None:
    z = tmp_path / "log.swf.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.write(FIXTURES / "dos_tail.swf", "log.swf")
    with pytest.raises(BadInput, match="is a zip archive: unpack it first.*gzip, bzip2 or xz"):
        read_swf(z)


@pytest.mark.parametrize("tail, says", [
    ("</pre></body></html>\n", r"has 18 fields, this one 1 \(header and comment lines start "
                               r"with ';'\)"),
    ("# end of log\n", "header and comment lines start with ';'"),
    ("\x89PNG\x00\x01\x02 junk\n", "this is not text"),
])
def test_trailing_garbage_is_named_with_what_is_accepted(tmp_path: Path, tail: str,
                                                         says: str) -> None:
    p = tmp_path / "tail.swf"
    p.write_text("; MaxProcs: 8\n2 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 1 -1 -1 -1\n" + tail)
    with pytest.raises(BadInput, match=rf"tail\.swf:3: .*{says}"):
        read_swf(p)


def test_thinning_matches_the_logs_utilization_on_sites_of_a_few_cpus() -> None:
    """Sites of 4 and 16 CPUs, ten-hour windows of seeds 1-5, on the shared logs and both
    sweeps' fixtures. Before: a single Bernoulli draw missed by 0.07 on average and up to
    0.88 (a few whole-CPU jobs are most of a 4-CPU site)."""
    errors = []
    for path in [*_shared(), *FIRST_SWEEP, *UNSEEN]:
        log = read_swf(path)
        for site in (_small(2, 2), _small(4, 4)):
            for seed in range(1, 6):
                plan = plan_replay(log, site, seed=seed, duration_s=600, scale=60)
                if plan.log_utilization <= 1.0:
                    errors.append(abs(plan.site_utilization - plan.log_utilization))
    assert statistics.mean(errors) < 0.02 and max(errors) < 0.15, (
        statistics.mean(errors), max(errors))


@pytest.mark.parametrize("name", ["header_counts_nodes", "bluegene_nodes", "numbers_repeat",
                                  "model_no_waits", "headers_grid", "runs_past_request"])
def test_the_prediction_benchmark_runs_on_them(name: str) -> None:
    r = prediction.run_log(FIXTURES / f"{name}.swf", moments=2, seed=1, new_jobs=False)
    assert set(r["models"]) == set(prediction.MODELS)
    for s in r["models"].values():
        assert all(v is None or math.isfinite(v) for v in s.values())


def test_gzip_still_named_as_gzip(tmp_path: Path) -> None:
    p = tmp_path / "x.swf.gz"
    p.write_bytes(gzip.compress((FIXTURES / "dos_tail.swf").read_bytes())[:150])
    with pytest.raises(BadInput, match="not a readable gzip file"):
        read_swf(p)
