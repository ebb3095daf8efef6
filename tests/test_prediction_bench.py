"""The replayed-log prediction benchmark rebuilds a real center's queue view exactly."""

from __future__ import annotations

import gzip

from benchmarks import prediction
from diamond_jupyter.model import JobState
from diamond_jupyter.testbed.trace import read_swf

# job, submit, wait, run, procs, -, -, req procs, req time, -, status (SWF's first fields)
LOG = """; MaxNodes: 2
; MaxProcs: 4
1 0 0 100000 2 -1 -1 2 200000 -1 1
2 10 0 50 2 -1 -1 2 3600 -1 1
3 100 0 90000 2 -1 -1 2 100000 -1 1
4 90000 20000 500 4 -1 -1 4 1000 -1 1
5 90100 25000 500 2 -1 -1 2 -1 -1 1
"""


def _log(tmp_path):
    p = tmp_path / "tiny.swf.gz"
    with gzip.open(p, "wt") as fh:
        fh.write(LOG)
    return p


def test_a_moment_is_the_logs_queue_with_each_waiting_jobs_true_start(tmp_path):
    """At second 95,000: job 1 runs (2 CPUs), job 3 has ended (ran 90,000 s from 100),
    job 2 ended long ago and is out of the 6 h window; jobs 4 and 5 wait. Job 4 asked
    for its walltime and starts at 110,000 (15,000 s from now); job 5 asked for none, so
    it waits in the view but is not scored."""
    path = _log(tmp_path)
    log = read_swf(path)
    assert prediction.max_nodes(path) == 2
    snap, samples, truth = prediction.moment(log, 2, 2, 95_000.0)
    assert [j.native_id for j in snap.running] == ["1"]
    assert [j.native_id for j in snap.pending] == ["4", "5"]
    assert all(j.state == JobState.PENDING for j in snap.pending)
    assert truth == {"4": 15_000.0}
    # job 3 ended 4,900 s ago; job 1 has run 95,000 s so far (a runtime known to be longer)
    assert sorted((s.runtime_s, s.running) for s in samples) == [(90_000.0, False),
                                                                 (95_000.0, True)]
    assert sum(n.cpus_allocated for n in snap.nodes) == 2


def test_every_model_is_scored_and_a_log_without_waits_is_said_so(tmp_path):
    r = prediction.run_log(_log(tmp_path), moments=3, seed=1)
    assert set(r["models"]) == set(prediction.MODELS)
    flat = tmp_path / "flat.swf"
    flat.write_text("; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 60 -1 1\n")
    r = prediction.run_log(flat, moments=3, seed=1)
    assert r["moments"] == 0 and "no waits" in r["note"]


def test_the_score_counts_errors_and_the_bounds_coverage():
    s = prediction.score([(100.0, 400.0, 500.0), (1000.0, 900.0, 800.0)])
    assert s["jobs"] == 2 and s["median_abs_error_s"] == 200.0
    assert s["bound_coverage"] == 0.5 and s["under_predicted"] == 0.5
    assert s["within_2x"] == 1.0  # 300 s floor: 300 vs 400, 1000 vs 900


def test_a_log_without_any_request_asks_for_its_max_runtime(tmp_path):
    """A log that records no requested time gets its MaxRuntime (else its longest run) as
    every job's request, and says so; one with some requests is kept as it is."""
    path = tmp_path / "noreq.swf"
    path.write_text("; MaxProcs: 4\n; MaxRuntime: 86400\n"
                    + "".join(f"{n} {n * 100} 10 50 2 -1 -1 2 -1 -1 1\n" for n in range(1, 6)))
    log, note = prediction.with_requests(read_swf(path))
    assert {j.req_time for j in log.jobs} == {86400.0} and "86400 s" in note
    path.write_text("; MaxProcs: 4\n"
                    + "".join(f"{n} {n * 100} 10 {n * 10} 2 -1 -1 2 -1 -1 1\n"
                              for n in range(1, 6)))
    assert {j.req_time for j in prediction.with_requests(read_swf(path))[0].jobs} == {50.0}
    kept = _log(tmp_path)
    assert prediction.with_requests(read_swf(kept)) == (read_swf(kept), None)
