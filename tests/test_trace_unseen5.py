"""The fifth sweep of SWF logs unlike the shared ones, each written here by hand and small:
headers with every standard field (in other spellings, repeated by joined logs), jobs
without a requested time, checkpointed jobs whose parts surround their summary, partitions
beyond the header's list, logs compressed in several members or twice, in formats not read,
web pages and CSV saved as logs; and the memory of a long log whose window is at its end."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import diamond_jupyter.dialects.slurm_script  # noqa: F401  (imported by a plan: not its memory)
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import SwfJob, plan_replay, read_swf


def _line(number: int, submit: float, wait: float = 0, run: float = 100, procs: int = 4,
          req: float = 600, status: int = 1, alloc: int | None = None, partition: int = 1,
          preceding: int = -1, think: float = -1) -> str:
    """One SWF job line (18 fields) of the values a test names."""
    given = procs if alloc is None else alloc
    return (f"{number} {submit:g} {wait:g} {run:g} {given} -1 -1 {procs} {req:g} -1 {status} "
            f"{number % 7 + 1} 1 -1 1 {partition} {preceding} {think:g}\n")


def _number(name: str) -> int:
    return int(name.split("-", 2)[2].split(".")[0])  # trace-arrive-17.2 -> 17


# ---- a long log whose window is at its end: memory ----------------------------------------

def _long_log(path: Path, jobs: int) -> list[tuple[float, float, float, int]]:
    """A log of `jobs` jobs, one a minute, each waiting up to an hour and running up to three;
    its (submit, wait, run, procs), computed here."""
    rows = []
    with open(path, "w") as fh:
        fh.write("; Version: 2.2\n; MaxProcs: 1024\n; MaxNodes: 256\n")
        for n in range(1, jobs + 1):
            submit, wait, run = n * 60.0, float(n * 37 % 3600), float(n * 53 % 10800 + 1)
            procs = 1 << n % 4
            rows.append((submit, wait, run, procs))
            fh.write(_line(n, submit, wait, run, procs, req=14400))
    return rows


def test_a_window_at_the_end_of_a_long_log_holds_only_its_own_jobs(tmp_path: Path) -> None:
    """60,000 jobs, a window of 600 log minutes at the very end. Before: the reader made an
    object of every job (some 300 bytes each) and kept them all; its peak grew with the
    log. Now its jobs are kept as columns of numbers and a plan makes objects of its
    window's jobs only: the peak is under 120 bytes a job of the log (about a third), and
    the job objects alive are the window's."""
    path = tmp_path / "long.swf"
    rows = _long_log(path, 60_000)
    last = rows[-1][0]
    start = last - 600 * 60 + 1
    gc.collect()
    tracemalloc.start()
    try:
        log = read_swf(path)
        plan = plan_replay(log, cluster("alpha"), start=start, duration_s=600, scale=60)
        _, peak = tracemalloc.get_traced_memory()
        alive = sum(type(o) is SwfJob for o in gc.get_objects())
    finally:
        tracemalloc.stop()
    # the window's jobs, counted here from the rows: those running, waiting, arriving
    end = start + 600 * 60
    running = sum(1 for s, w, r, _ in rows if s < start and s + w <= start < s + w + r)
    queued = sum(1 for s, w, _, _ in rows if s < start < s + w)
    arrivals = sum(1 for s, _, _, _ in rows if start <= s < end)
    window = list(log.table.window(start, end))
    assert len(window) == running + queued + arrivals and running > 100 and queued > 10
    assert plan.arrivals_in_log == arrivals
    assert plan.running_at_start + plan.queued_at_start + plan.arrivals_kept == len(plan.jobs)
    assert alive <= running + queued + arrivals, alive
    assert peak < 120 * len(rows), peak
    assert len(log.table) == len(rows) and log.max_procs == 1024
