"""The seventh sweep of SWF logs unlike the shared ones, each written here: a log of several
machines in its partition field (a grid's clusters, a center's thin, fat and hybrid nodes)
replayed one partition at a time, header lines typed with '=' or blanks, after the data or
among it, with keys the reader does not use, every wait unknown, a preempted job's parts
without their summary, a header's MaxJobs over the jobs there are, a --duration longer than
the log, and fields separated by tabs and runs of blanks with trailing fields missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diamond_jupyter.cli.main import main as cli
from diamond_jupyter.model import BadInput
from diamond_jupyter.testbed import trace
from diamond_jupyter.testbed.clusters import cluster
from diamond_jupyter.testbed.trace import plan_replay, read_swf


def _line(number: int, submit: float, wait: float = 0, run: float = 100, procs: int = 4,
          req: float = 600, status: int = 1, partition: int = 1, preceding: int = -1,
          think: float = -1) -> str:
    """One SWF job line (18 fields) of the values a test names."""
    return (f"{number} {submit:g} {wait:g} {run:g} {procs} -1 -1 {procs} {req:g} -1 {status} "
            f"{number % 5 + 1} 1 -1 1 {partition} {preceding} {think:g}\n")


def _cpus(plan) -> dict[int, int]:
    """Job number -> CPUs the plan gives it."""
    return {int(j.name.split("-", 2)[2].split(".")[0]): j.nodes * j.cpus_per_node
            for j in plan.jobs}


# ---- a log of several machines: one partition replayed as its own machine ----------------

GRID_HEADER = ("; Version: 2.2\n; Computer: a grid of three clusters\n; MaxNodes: 700\n"
               "; MaxProcs: 2208\n; MaxPartitions: 3\n"
               "; Partition: 1 wide (1600 processors)\n"
               "; Partition: 2 fat: 32 nodes x 16 cores\n"
               "; Partition: 3 small\n")


def _grid(tmp_path: Path) -> Path:
    """Three clusters in one log: 1 of 1,600 processors, 2 of 512, 3 of a size the header
    does not give (its jobs held 50 at most at once). Each cluster's jobs fill it in turn:
    a job of the whole partition for 50 s, then two of half and two serial ones at once."""
    rows, n = [], 0
    for part, size in ((1, 1600), (2, 512), (3, 48)):
        for k, procs in enumerate((size, size // 2, size // 2, 1, 1)):
            n += 1
            rows.append(_line(n, 100 * k + part, 0, 3000 if k else 50, procs, partition=part))
    path = tmp_path / "grid.swf"
    path.write_text(GRID_HEADER + "".join(rows))
    return path


def test_a_partition_is_replayed_on_its_own_machines_size(tmp_path: Path) -> None:
    """--partition 2 of a grid log: a job of all 512 of the fat cluster's processors was an
    eighth of the grid's 2,208 (its share of the whole machine before, 4 of alpha's 16 CPUs,
    as the README said); replayed alone it fills alpha, and the grid's other clusters' jobs
    are not replayed on it."""
    log = read_swf(_grid(tmp_path))
    assert log.max_procs == 2208
    assert log.partitions == ((1, "wide", 1600), (2, "fat", 512), (3, "small", 0))
    fat = trace.one_partition(log, "2")
    assert fat.max_procs == 512 and len(fat.table) == 5
    assert set(fat.table.partition) == {2}
    plan = plan_replay(fat, cluster("alpha"), start=1, duration_s=10, scale=60)
    total = cluster("alpha").nodes * cluster("alpha").cpus
    cpus = _cpus(plan)  # the serial jobs, 1/512 of it, are one CPU each, thinned to the load
    assert {6: total, 7: total // 2, 8: total // 2}.items() <= cpus.items()
    assert set(cpus) <= {6, 7, 8, 9, 10} and all(cpus[n] == 1 for n in set(cpus) & {9, 10})
    assert any("partition 2 (fat)" in n and "512 processors" in n for n in plan.notes)


def test_a_partition_is_named_by_its_header_name_in_any_case(tmp_path: Path) -> None:
    log = read_swf(_grid(tmp_path))
    wide = trace.one_partition(log, "WIDE")
    assert wide.max_procs == 1600 and set(wide.table.partition) == {1}
    assert wide.name == trace.one_partition(log, "1").name


def test_a_partition_without_a_size_is_what_its_jobs_held_and_said(tmp_path: Path) -> None:
    """Partition 3's header line names it and no size: its machine is what its jobs held at
    once (24 + 24 + 1 + 1 = 50 running together after the job of 48), and the note says
    where that came from."""
    small = trace.one_partition(read_swf(_grid(tmp_path)), "3")
    assert small.max_procs == 50
    assert any("gives the partition no size" in n for n in small.notes)


def test_an_unknown_partition_names_the_ones_in_the_log(tmp_path: Path, capsys) -> None:
    """A partition that is not in the log is one line naming the partitions there are, with
    their names and job counts, and what is accepted (exit 2), not an empty replay."""
    path = _grid(tmp_path)
    with pytest.raises(BadInput, match=r"no partition '7'.*1 \(wide\): 5 job\(s\), 2 \(fat\): 5 "
                                       r"job\(s\), 3 \(small\): 5 job\(s\).*numbers or names"):
        trace.one_partition(read_swf(path), "7")
    assert cli(["testbed", "load", "--trace", str(path), "--site", "alpha", "--partition",
                "thin", "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no partition 'thin'" in err and "2 (fat)" in err and len(err.splitlines()) == 1


def test_partition_lines_in_nodes_and_under_a_plural_key(tmp_path: Path) -> None:
    """A header of MaxNodes 100 and MaxProcs 800 (8 a node) whose lines say "Partitions:"
    and give a partition in nodes: 12 nodes are 96 processors; a line without a number is
    no partition, a count of cores it does not give is no size."""
    path = tmp_path / "nodes.swf"
    path.write_text("; MaxNodes: 100\n; MaxProcs: 800\n; Partitions: 1 - batch: 88 nodes\n"
                    "; Partitions: 2 gpu (12 nodes, 4 GPUs each)\n; Partitions: none here\n"
                    + _line(1, 0, 0, 100, 96, partition=2)
                    + _line(2, 1, 0, 100, 700, partition=1))
    log = read_swf(path)
    assert log.partitions == ((1, "batch", 704), (2, "gpu", 96))
    gpu = trace.one_partition(log, "gpu")
    assert gpu.max_procs == 96
    plan = plan_replay(gpu, cluster("alpha"), start=0, duration_s=1)
    assert _cpus(plan) == {1: cluster("alpha").nodes * cluster("alpha").cpus}


def test_a_request_over_its_partition_is_the_partition(tmp_path: Path) -> None:
    """A job of partition 2 (64 processors) sized by its request alone (field 5 is -1) asked
    for 128, within the whole machine's 256: replayed alone, partition 2 stays 64 and the
    job holds all of it (before the cap the partition grew to 128, each job half its
    share); a note names the partition."""
    path = tmp_path / "asked.swf"
    over = _line(2, 10, 0, 500, 128, partition=2).split()
    over[4] = "-1"  # no allocated count: sized by its request
    path.write_text("; MaxProcs: 256\n; Partition: 1 main (192 processors)\n"
                    "; Partition: 2 small (64 processors)\n"
                    + _line(1, 0, 0, 500, 32, partition=2) + " ".join(over) + "\n"
                    + _line(3, 20, 0, 500, 192, partition=1))
    small = trace.one_partition(read_swf(path), "small")
    assert small.max_procs == 64 and list(small.table.procs) == [32, 64]
    assert any("partition 2 (small)'s 64 processors" in n for n in small.notes)


def test_a_unix_time_start_in_a_partition_names_the_log_seconds(tmp_path: Path) -> None:
    """--start given as a Unix time of a moment before the partition's first job but in the
    log: refused naming the log seconds it means, as for a whole log."""
    path = tmp_path / "unix.swf"
    path.write_text("; UnixStartTime: 1262300400\n; MaxProcs: 64\n"
                    + _line(1, 0, 0, 500, 8, partition=1)
                    + "".join(_line(n, 1000 * n, 0, 500, 8, partition=2) for n in range(2, 9)))
    late = trace.one_partition(read_swf(path), "2")
    with pytest.raises(BadInput, match="that moment is --start 500"):
        plan_replay(late, cluster("alpha"), start=1262300400 + 500, duration_s=10)


def test_a_grid_of_many_partitions_is_named_in_part(tmp_path: Path) -> None:
    """A grid's log of 40 clusters (and jobs with no partition): the error names the first
    twelve, how many more and the last, and the jobs that give none, in one line."""
    path = tmp_path / "lcg.swf"
    path.write_text("; MaxProcs: 4000\n" + "".join(
        _line(n, n, 0, 100, 2, partition=n % 41 - 1) for n in range(1, 200)))
    with pytest.raises(BadInput) as e:
        trace.one_partition(read_swf(path), "77")
    text = str(e.value)
    assert "0: 5 job(s), 1: 5 job(s)" in text and "11: 5 job(s) and 28 more (39 the last)" in text
    assert "12: " not in text and "4 job(s) give none (-1)" in text and "\n" not in text


def test_a_log_without_partitions_refuses_one(tmp_path: Path) -> None:
    """Lines of 15 fields (an old conversion without the partition field) or -1 in it: the
    log has no partitions, so --partition is refused saying to replay it whole."""
    path = tmp_path / "old.swf"
    path.write_text("; MaxProcs: 64\n" + "".join(
        " ".join(_line(n, 10 * n).split()[:15]) + "\n" for n in range(1, 6)))
    log = read_swf(path)
    assert set(log.table.partition) == {-1}
    with pytest.raises(BadInput, match="gives no partitions.*without --partition"):
        trace.one_partition(log, "1")


def test_the_command_line_replays_one_partition_per_trace(tmp_path: Path, capsys) -> None:
    """`--trace grid --site alpha --partition fat --trace grid --site beta --partition 1`:
    each site gets one cluster of the grid, sized by that cluster, and the summary says
    which; 'all' replays the whole log."""
    path = str(_grid(tmp_path))
    assert cli(["testbed", "load", "--trace", path, "--site", "alpha", "--partition", "fat",
                "--trace", path, "--site", "beta", "--partition", "1", "--start", "1",
                "--duration", "10", "--dry-run", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [t["log"] for t in got["traces"]] == ["grid partition 2", "grid partition 1"]
    by_site = {}
    for j in got["jobs"]:
        by_site.setdefault(j["site"], set()).add(int(j["name"].split("-")[2]))
    assert {6, 7, 8} <= by_site["alpha"] <= {6, 7, 8, 9, 10}
    assert {1, 2, 3} <= by_site["beta"] <= {1, 2, 3, 4, 5} and len(by_site) == 2
    assert cli(["testbed", "load", "--trace", path, "--site", "alpha", "--partition", "all",
                "--start", "1", "--duration", "10", "--dry-run", "--json"]) == 0
    whole = json.loads(capsys.readouterr().out)
    numbers = {int(j["name"].split("-")[2]) for j in whole["jobs"]}
    assert whole["traces"][0]["log"] == "grid"
    assert all(numbers & set(range(k, k + 5)) for k in (1, 6, 11))  # every cluster's jobs


@pytest.mark.parametrize("args, words", [
    (["--partition", "1", "--partition", "2"], "give each --trace its --partition"),
    (["--profile", "busy", "--partition", "1"], "go with --trace"),
])
def test_partitions_that_do_not_pair_with_traces_are_refused(tmp_path: Path, capsys,
                                                             args: list[str], words: str
                                                             ) -> None:
    trace_args = [] if "--profile" in args else ["--trace", str(_grid(tmp_path)), "--site",
                                                 "alpha"]
    assert cli(["testbed", "load", *trace_args, *args, "--dry-run"]) == 2
    assert words in capsys.readouterr().err


def test_a_partition_and_its_whole_log_on_two_sites_draw_two_windows(tmp_path: Path) -> None:
    """The whole log and one of its partitions hold the same jobs: given for two sites from
    one seed, the second draws another window (as a log given twice does), so no job is
    replayed twice at once; the same partition given twice does too."""
    path = tmp_path / "busy_grid.swf"
    rows = [_line(n, 600 * n, 0, 1800, 8, partition=n % 2 + 1) for n in range(1, 2000)]
    path.write_text("; MaxProcs: 128\n; Partition: 1 a (64 processors)\n"
                    "; Partition: 2 b (64 processors)\n" + "".join(rows))
    sites = [(path, cluster("alpha")), (path, cluster("beta"))]
    for partitions in ([None, "1"], ["1", None], ["a", "1"]):
        first, second = trace.plan_replays(sites, seed=5, duration_s=120, partitions=partitions)
        assert first.window != second.window, partitions
        assert not ({j.name for j in first.jobs} & {j.name for j in second.jobs})


def test_a_start_anywhere_in_the_log_is_a_moment_of_each_partition(tmp_path: Path) -> None:
    """--start 1 where partition 2's first job came at 2 s: a moment of the grid, before that
    cluster's first job, not "outside the log"; a start past the whole log still is."""
    fat = trace.one_partition(read_swf(_grid(tmp_path)), "2")
    assert fat.span[0] == 2
    assert plan_replay(fat, cluster("alpha"), start=1, duration_s=10).arrivals_in_log == 5
    with pytest.raises(BadInput, match="outside the log grid partition 2.*between 1 and 403"):
        plan_replay(fat, cluster("alpha"), start=5000, duration_s=10)


# ---- header lines as typed, where they stand, and keys not used --------------------------

@pytest.mark.parametrize("header", ["; MaxProcs = 256\n", "; MaxProcs 256\n",
                                    ";MAX_PROCS=256\n", "; Max Procs =  256 (16 nodes)\n"])
def test_header_values_after_an_equals_sign_or_blanks_are_read(tmp_path: Path,
                                                               header: str) -> None:
    """Before: only "Key: value" was read; "MaxProcs = 256" was no header, and the machine
    became what its jobs held at once (40 of 256), each job six times its share."""
    path = tmp_path / "typed.swf"
    path.write_text(header + "".join(_line(n, 10 * n, 0, 100, 4) for n in range(1, 20)))
    assert read_swf(path).max_procs == 256


def test_header_lines_after_and_among_the_data_with_unknown_keys(tmp_path: Path) -> None:
    """The header's fields in no usual order: notes the reader does not use (Acknowledge,
    Information, Conversion, Preemption, AllowOveruse, TimeZoneString, StartTime, a key of
    its own), a ';' line between job lines, MaxProcs after the last job. Every line of
    numbers is a job; MaxProcs sizes the machine wherever it stands."""
    path = tmp_path / "scattered.swf"
    rows = [_line(n, 60 * n, 5, 500, 8) for n in range(1, 41)]
    path.write_text("; Acknowledge: the operators 2 times\n; Information: http://example.org\n"
                    + "".join(rows[:20]) + "; Conversion: by hand, 3 passes\n"
                    "; Preemption: Yes\n; AllowOveruse: No\n; SiteSpecific: 77\n"
                    "; TimeZoneString: Europe/Paris\n; StartTime: Tue Mar 3 10:00:00 CET 2009\n"
                    + "".join(rows[20:]) + "; MaxProcs: 512\n")
    log = read_swf(path)
    assert log.max_procs == 512 and len(log.table) == 40 and log.notes == ()


def test_tabs_runs_of_blanks_and_trailing_fields_missing(tmp_path: Path) -> None:
    """Fields separated by tabs and several blanks, lines of 16 fields (the partition the
    last) and of 11: each reads as its 18-field copy, the partition where it is given."""
    full = [_line(n, 30 * n, 2, 300, 2, partition=2) for n in range(1, 9)]
    mixed = []
    for k, line in enumerate(full):
        fields = line.split()[:16] if k % 2 else line.split()[:11]
        mixed.append(("\t" if k % 3 else "   ").join(fields) + " \t\n")
    (tmp_path / "full.swf").write_text("; MaxProcs: 16\n" + "".join(full))
    (tmp_path / "mixed.swf").write_text("; MaxProcs: 16\n" + "".join(mixed))
    a, b = read_swf(tmp_path / "full.swf"), read_swf(tmp_path / "mixed.swf")
    assert list(b.table.partition) == [-1, 2] * 4
    assert (list(a.table.submit), list(a.table.run), list(a.table.procs)) == (
        list(b.table.submit), list(b.table.run), list(b.table.procs))


# ---- waits unknown, preempted parts, counts the header promises --------------------------

def test_a_log_where_every_wait_is_unknown_says_no_queue_is_rebuilt(tmp_path: Path) -> None:
    """Every wait -1 (a log that recorded submissions and runs only): each job is taken to
    start at its submission, so nothing waits at the window's start. Before: the plan said
    nothing of it (only a load over the machine was noted); now a note says how many jobs
    had no wait and what that means for the queue at the window's start."""
    path = tmp_path / "nowait.swf"
    path.write_text("; MaxProcs: 64\n" + "".join(_line(n, 100 * n, -1, 500, 4)
                                                 for n in range(1, 200)))
    plan = plan_replay(read_swf(path), cluster("alpha"), start=5000, duration_s=60)
    assert plan.queued_at_start == 0 and plan.running_at_start == 4
    [note] = [n for n in plan.notes if "no recorded wait" in n]
    assert note.startswith(f"{plan.running_at_start + plan.arrivals_in_log} of the window's")
    assert "queue rebuilt at the window's start" in note


def test_a_log_with_known_waits_says_nothing_of_unknown_ones(tmp_path: Path) -> None:
    path = tmp_path / "waits.swf"
    path.write_text("; MaxProcs: 64\n" + "".join(_line(n, 100 * n, 700, 500, 4)
                                                 for n in range(1, 200)))
    plan = plan_replay(read_swf(path), cluster("alpha"), start=5000, duration_s=60)
    assert plan.queued_at_start > 0
    assert not any("no recorded wait" in n for n in plan.notes)


def test_a_preempted_jobs_parts_run_one_after_the_other(tmp_path: Path) -> None:
    """A job preempted twice, its three parts (status 2, 2, 3) without a summary line: each
    part's wait is from the job's one submission (10, 300, 600 s). Before: the three were
    submitted together at the window's start and ran at once, one job three times over. Now
    each part waits for the part before it and the time the job was out (190 and 200 log
    seconds, scaled), and a note says so."""
    path = tmp_path / "preempted.swf"
    path.write_text("; MaxProcs: 64\n; Preemption: Yes\n" + _line(1, 0, 10, 100, 8, status=2)
                    + _line(1, 0, 300, 100, 8, status=2) + _line(1, 0, 600, 100, 8, status=3)
                    + _line(2, 5, 0, 50, 2))
    plan = plan_replay(read_swf(path), cluster("alpha"), start=0, duration_s=20, scale=10)
    by_name = {j.name: j for j in plan.jobs}
    assert (by_name["trace-arrive-1"].after, by_name["trace-arrive-1.2"].after,
            by_name["trace-arrive-1.3"].after) == (None, "trace-arrive-1", "trace-arrive-1.2")
    assert (by_name["trace-arrive-1.2"].think_s, by_name["trace-arrive-1.3"].think_s) == (
        19.0, 20.0)
    assert by_name["trace-arrive-2"].after is None
    assert any("only the last part ends its job" in n for n in plan.notes)


def test_two_joined_logs_repeating_a_number_are_not_chained_as_parts(tmp_path: Path) -> None:
    """Job 1 twice with status 1 (two logs joined): two jobs of their own, neither waits."""
    path = tmp_path / "joined.swf"
    path.write_text("; MaxProcs: 64\n" + _line(1, 0, 0, 100, 8) + _line(1, 50, 0, 100, 8))
    plan = plan_replay(read_swf(path), cluster("alpha"), start=0, duration_s=20, scale=10)
    assert [j.after for j in plan.jobs] == [None, None]


def test_maxjobs_over_the_jobs_there_are_is_said(tmp_path: Path) -> None:
    """A header's MaxJobs 5,000 over a file of 199 jobs (no MaxRecords): a download broken
    off, said as MaxRecords is; a checkpointed job's lines count once against MaxJobs."""
    path = tmp_path / "short.swf"
    path.write_text("; MaxJobs: 5000\n; MaxProcs: 64\n" + "".join(
        _line(n, 100 * n, 0, 500, 4) for n in range(1, 200)))
    [note] = read_swf(path).notes
    assert "MaxJobs 5000" in note and "199 jobs" in note and "cut off" in note
    whole = tmp_path / "whole.swf"
    whole.write_text("; MaxJobs: 2\n; MaxRecords: 4\n; MaxProcs: 64\n"
                     + _line(1, 0, 10, 100, 8, status=2) + _line(1, 0, 300, 100, 8, status=2)
                     + _line(1, 0, 600, 100, 8, status=3) + _line(2, 5, 0, 50, 2))
    assert read_swf(whole).notes == ()


def test_a_duration_longer_than_the_log_says_when_arrivals_end(tmp_path: Path) -> None:
    """--duration 100,000 s at --scale 60 over a log of three minutes: the window is the
    whole log and then nothing. Before: said nothing (a replay of a day with load for its
    first seconds); now a note says after how many real seconds no job arrives."""
    path = tmp_path / "brief.swf"
    path.write_text("; MaxProcs: 16\n" + "".join(_line(n, 10 * n, 0, 100, 4)
                                                 for n in range(1, 19)))
    plan = plan_replay(read_swf(path), cluster("alpha"), seed=3, duration_s=100000, scale=60)
    assert plan.window[0] == 10
    assert plan.arrivals_in_log == 18
    [note] = [n for n in plan.notes if "past the log's last submission" in n]
    assert "no job arrives after 3 s of the replay" in note
    inside = plan_replay(read_swf(path), cluster("alpha"), start=10, duration_s=2, scale=60)
    assert not any("past the log's last submission" in n for n in inside.notes)


def test_a_window_in_a_quiet_spell_says_so(tmp_path: Path) -> None:
    """A machine busy for two days, then a week with one small short job, then busy again:
    a window in that week has an arrival (so it is not redrawn) but almost no load. Before:
    the plan said nothing, a replay of an idle site looking like a replay of the log; now a
    note gives the window's and the whole log's utilization and what draws a busier one."""
    rows, n = [], 0
    for base in (0, 9 * 86400):
        for k in range(300):
            n += 1
            rows.append(_line(n, base + 600 * k, 0, 3000, 16))
    n += 1
    rows.append(_line(n, 5 * 86400, 0, 600, 4))  # a quarter of a CPU of alpha: no thinning
    path = tmp_path / "quiet.swf"
    path.write_text("; MaxProcs: 128\n" + "".join(sorted(rows, key=lambda r: float(
        r.split()[1]))))
    log = read_swf(path)
    quiet = plan_replay(log, cluster("alpha"), start=5 * 86400 - 600, duration_s=60)
    assert quiet.arrivals_in_log == 1
    [note] = [x for x in quiet.notes if "quiet spell" in x]
    assert f"{log.utilization:.1%} over the whole log" in note
    busy = plan_replay(log, cluster("alpha"), start=86400, duration_s=60)
    assert busy.jobs and not any("quiet spell" in x for x in busy.notes)


@pytest.mark.parametrize("value, procs", [("2 048", 2048), ("163\u202f840", 163840),
                                          ("1 024 (256 nodes)", 1024)])
def test_thousands_set_apart_by_blanks_are_one_number(tmp_path: Path, value: str,
                                                      procs: int) -> None:
    """"MaxProcs: 2 048" (a thousands gap, as typed in much of Europe): before, read as 2,
    and the machine taken from what its jobs held at once; now 2,048."""
    path = tmp_path / "gap.swf"
    path.write_text(f"; MaxProcs: {value}\n" + "".join(_line(n, 10 * n, 0, 100, 4)
                                                        for n in range(1, 20)))
    assert read_swf(path).max_procs == procs


def test_a_preempted_job_running_at_the_window_start_resumes_after_it(tmp_path: Path) -> None:
    """The window starts while the first part runs: that part is replayed running (what it
    had left), the next waits for it and then the 100 s the job was out; a job submitted
    after the preempted one (field 17) waits for its last part, not its first."""
    path = tmp_path / "midway.swf"
    path.write_text("; MaxProcs: 64\n" + _line(1, 0, 0, 400, 8, status=2)
                    + _line(1, 0, 500, 300, 8, status=4)
                    + _line(2, 900, 0, 100, 4, preceding=1, think=50))
    plan = plan_replay(read_swf(path), cluster("alpha"), start=100, duration_s=20, scale=60)
    by_name = {j.name: j for j in plan.jobs}
    run, resumed = by_name["trace-run-1"], by_name["trace-wait-1.2"]
    assert run.runtime_s == 5.0 and resumed.after == "trace-run-1"
    assert resumed.think_s == pytest.approx(100 / 60, abs=0.001)
    assert by_name["trace-arrive-2"].after == "trace-wait-1.2"


def test_a_cleaned_log_under_its_maxjobs_is_not_called_cut_off(tmp_path: Path) -> None:
    """A cleaned log (its flurries removed) has fewer jobs than its MaxJobs by design."""
    path = tmp_path / "cln.swf"
    path.write_text("; MaxJobs: 500\n; MaxProcs: 64\n; Note: Cleaned log: flurries removed "
                    "(user=3, 301 jobs)\n" + "".join(_line(n, 100 * n, 0, 500, 4)
                                                     for n in range(1, 200)))
    assert read_swf(path).notes == ()


def test_a_partition_of_unknown_waits_is_no_larger_than_its_machine(tmp_path: Path) -> None:
    """A partition with no size in the header whose jobs record no wait (-1), as
    LLNL-Thunder's: each is taken to start at its submission, so what they "held at once"
    is the work offered, not run. Before: its machine was that peak, 3 times the whole
    log's 256 processors, and every job a third of its share; now at most the whole
    machine, and said. A partition whose waits are known is what its jobs held."""
    rows = [_line(n, 60 * n, -1, 36000, 16, partition=1) for n in range(1, 200)]
    rows += [_line(n, 60 * n + 1, 0, 30, 4, partition=2) for n in range(200, 210)]
    path = tmp_path / "offered.swf"
    path.write_text("; MaxProcs: 256\n; Partition: 1 pbatch\n; Partition: 2 pdebug\n"
                    + "".join(sorted(rows, key=lambda r: float(r.split()[1]))))
    batch = trace.one_partition(read_swf(path), "pbatch")
    assert batch.max_procs == 256
    assert any("taken as the whole machine's 256" in n for n in batch.notes)
    debug = trace.one_partition(read_swf(path), "pdebug")
    assert debug.max_procs == 4 and not any("the whole machine's" in n for n in debug.notes)


# ---- lines that are not SWF's: named for what they are ------------------------------------

@pytest.mark.parametrize("sep, words", [(", ", "commas"), (";", "semicolons"),
                                        ("|", "bars")])
def test_fields_separated_otherwise_are_named_with_their_separator(tmp_path: Path, sep: str,
                                                                   words: str) -> None:
    """"1, 0, 10, ..." (a comma after each field: before, "fields must be numbers") and
    "1;0;10;..." (before, "18 fields, this one 1"): the line is named with its separator
    and what SWF separates by."""
    path = tmp_path / "sep.swf"
    path.write_text("; MaxProcs: 64\n" + sep.join(_line(1, 0).split()) + "\n")
    with pytest.raises(BadInput, match=rf"sep.swf:2: the fields are separated by {words}.*"
                                       "spaces or tabs"):
        read_swf(path)


def test_a_row_of_column_names_is_named_as_one(tmp_path: Path) -> None:
    """A spreadsheet's export with its column names as the first row: before, "fields must
    be numbers"; now named as a row of words with where SWF's header lines go."""
    path = tmp_path / "titled.swf"
    path.write_text("Job Submit Wait Run Procs CPU Mem ReqProcs ReqTime ReqMem Status User "
                    "Group App Queue Partition Preceding Think\n" + _line(1, 0))
    with pytest.raises(BadInput, match=r"titled.swf:1: a row of words, not numbers.*start "
                                       "with ';'"):
        read_swf(path)


@pytest.mark.parametrize("line, procs", [
    ("3 hybrid: 16 nodes, 8 cores each", 128),
    ("3 hybrid (16 nodes, each with 8 cores, 2 GPUs)", 128),
    ("3 hybrid: 16 nodes of 8 cores", 128),
    ("3 hybrid 1,600 processors", 1600),
])
def test_a_partition_line_gives_nodes_times_their_size(tmp_path: Path, line: str,
                                                       procs: int) -> None:
    """"16 nodes, 8 cores each": before, 8 (the first count of cores), each job of the
    partition 16 times its share; now 16 x 8."""
    path = tmp_path / "hybrid.swf"
    path.write_text(f"; MaxProcs: 4096\n; Partition: {line}\n" + _line(1, 0, 0, 100, 8,
                                                                        partition=3))
    assert read_swf(path).partitions == ((3, "hybrid", procs),)
    assert trace.one_partition(read_swf(path), "hybrid").max_procs == procs


def test_a_partition_line_larger_than_the_machine_is_the_machine(tmp_path: Path) -> None:
    """A Partition line of 512 processors in a log whose MaxProcs (and jobs) say 256: a part
    is no larger than the whole; before, each job of it was half its share."""
    path = tmp_path / "big.swf"
    path.write_text("; MaxProcs: 256\n; Partition: 1 all (512 processors)\n"
                    + _line(1, 0, 0, 100, 256) + _line(2, 200, 0, 100, 64))
    whole = trace.one_partition(read_swf(path), "all")
    assert whole.max_procs == 256
    assert any("gives 512 processors, more than the whole machine's 256" in n
               for n in whole.notes)
