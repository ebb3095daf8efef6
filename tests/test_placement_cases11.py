"""Placement cases worked by hand, eleventh sweep: what the tenth left unread. LSF's
older `PROCLIMIT` (and `TASKLIMIT`) in `bqueues -l`; PBS's `backfill_depth`; Grid Engine
host consumables; PBS `place=group=` counting the queued jobs ahead per group. Each case
asserts the verdict per site, the partition, the start and that the reason names the
real cause."""

from __future__ import annotations

import re
from datetime import timedelta

from test_placement_cases import NOW, hours, only, reasons, run

H = 3600


# --------------------------------------------------------------- LSF PROCLIMIT / TASKLIMIT

def _bqueues_l(title: str, values: str) -> str:
    return ("QUEUE: normal\n  -- For normal jobs\n\nPARAMETERS/STATISTICS\n"
            "PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV\n"
            " 30   20  Open:Active       -    -    -    -     0     0     0     0     0    0\n"
            "Interval for a host to accept two jobs is 0 seconds\n\n"
            f" {title}\n {values}\n\nSCHEDULING PARAMETERS\n")


def test_lsf_proclimit_in_bqueues_l_is_the_task_limit():
    # An LSF older than `bqueues -o` (its queue_limits answer nothing) says the queue's
    # limit in `bqueues -l` as PROCLIMIT (TASKLIMIT since 9.1.3), lsb.queues'
    # `[min [default]] max`. Before, neither was read: a 64-task job was READY on wren
    from test_placement_cases8 import wren
    job = '#BSUB -n {}\n#BSUB -R "span[hosts=1]"\n#BSUB -W 1:00'
    for title in ("PROCLIMIT", "TASKLIMIT"):
        # one number: the maximum (48)
        site = wren(queue_long=_bqueues_l(title, "48"))
        assert (site[1].partitions[0].min_cpus, site[1].partitions[0].max_cpus) == (None, 48)
        assert reasons(run(job.format(64), site), "wren") == \
            "needs 64 slots in all, queue normal allows a job at most 48"
        assert only(run(job.format(48), site), "wren", "normal").verdict == "READY"
        # two: minimum 4, maximum 64
        site = wren(queue_long=_bqueues_l(title, "4 64"))
        assert reasons(run(job.format(2), site), "wren") == \
            "needs 2 slots in all, queue normal takes only jobs of at least 4"
        assert only(run(job.format(4), site), "wren", "normal").verdict == "READY"
        # three: minimum 2, default 8, maximum 16 (a unit word after them is tolerated)
        site = wren(queue_long=_bqueues_l(title, "2 8 16 processors"))
        assert (site[1].partitions[0].min_cpus, site[1].partitions[0].max_cpus) == (2, 16)


def test_lsf_task_limit_sections_of_each_queue_and_odd_ones_are_not_limits():
    from diamond_jupyter.dialects.lsf_commands import parse_task_limits
    two = _bqueues_l("PROCLIMIT", "8") + _bqueues_l("TASKLIMIT", "1 2").replace(
        "QUEUE: normal", "QUEUE: short")
    assert parse_task_limits(two) == {"normal": (None, 8), "short": (1, 2)}
    # not rising, zero, four numbers, words: no limit read
    for bad in ("8 4", "0 4", "1 2 3 4", "unlimited", "-"):
        assert parse_task_limits(_bqueues_l("TASKLIMIT", bad)) == {}, bad


# --------------------------------------------------------------- PBS backfill_depth

def _pjob(jid: str, owner: str, hosts: int, *, ends_h: float | None = None,
          queued_h: float = 1, limit_h: int = 1, host: str = "p1") -> tuple:
    """A PBS job of `hosts` whole 64-CPU hosts: running on `host` until `ends_h` (its
    walltime `limit_h` then ends), else waiting since `queued_h` hours ago."""
    from test_placement_cases6 import _epoch
    attrs = {"Job_Name": f"j{jid}", "Job_Owner": f"{owner}@login1", "queue": "workq",
             "job_state": "R" if ends_h is not None else "Q",
             "qtime": _epoch(-queued_h if ends_h is None else ends_h - limit_h - 1),
             "Resource_List": {"ncpus": 64 * hosts, "nodect": hosts,
                               "select": f"{hosts}:ncpus=64", "place": "scatter",
                               "walltime": f"{limit_h:02d}:00:00"}}
    if ends_h is not None:
        attrs |= {"stime": _epoch(ends_h - limit_h), "exec_host": f"{host}/0*64"}
    return f"{jid}.srv", attrs


def moira(*jobs: tuple, server: int | None = None, queue: int | None = None,
          switches: dict[str, str] | None = None):
    """A PBS Pro site of three 64-CPU hosts (p1-p3), one queue; `server`, `queue`: the
    server's and the queue's backfill_depth, where set; `switches`: its hosts instead,
    each with its value of a string resource `switch`."""
    import json
    from datetime import timezone

    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.dialects.pbs_commands import PbsCommands
    used = {a["exec_host"].split("/")[0]: 64 for _, a in jobs if "exec_host" in a}
    hosts = switches or {"p1": None, "p2": None, "p3": None}
    nodes = {h: {"state": "job-busy" if h in used else "free",
                 "resources_available": {"ncpus": 64, "mem": "262144000kb",
                                         **({"switch": sw} if sw else {})},
                 "resources_assigned": {"ncpus": used.get(h, 0)}} for h, sw in hosts.items()}
    q = {"queue_type": "Execution", "enabled": "True", "started": "True",
         "resources_max": {"walltime": "24:00:00"},
         **({"backfill_depth": queue} if queue is not None else {})}
    srv = {"default_queue": "workq", **({"backfill_depth": server} if server is not None
                                        else {})}
    out = {"nodes": json.dumps({"nodes": nodes}), "queues": json.dumps({"Queue": {"workq": q}}),
           "server": json.dumps({"Server": {"srv": srv}}),
           "queue": json.dumps({"Jobs": dict(jobs)}), "user": "alice\n"}
    snap = PbsCommands(tz=timezone.utc).parse_snapshot("moira", out)
    return SiteConfig(name="moira", scheduler="pbs"), snap.model_copy(update={"taken_at": NOW})


# p1 frees at +1 h, p2 at +3 h, p3 at +5 h. Waiting: q1, all three hosts for 1 h (its
# earliest: +5 h to +6 h), then q2, two hosts for 1 h (the earliest two hosts free for an
# hour before q1's slot: p1 and p2, +3 h to +4 h)
MOIRA_JOBS = (_pjob("1", "bob", 1, ends_h=1, limit_h=2, host="p1"),
              _pjob("2", "bob", 1, ends_h=3, limit_h=4, host="p2"),
              _pjob("3", "bob", 1, ends_h=5, limit_h=6, host="p3"),
              _pjob("4", "carol", 3, queued_h=2), _pjob("5", "dave", 2, queued_h=1))
ONE_HOST_3H = "#PBS -l select=1:ncpus=64\n#PBS -l walltime=3:00:00"


def test_pbs_backfill_depth_protects_that_many_top_jobs():
    # A host for 3 h. Depth 1 (unset, EASY): only q1 is kept; on p1 from +1 h to +4 h it
    # ends before q1's +5 h: +1 h. Depth 2 (the server's): q2's slot (p1, p2 from +3 h)
    # is kept too, and p1 to +4 h would delay it; after q2 (+4 h) 3 h would delay q1
    # (+5 h); so after q1 ends: +6 h. Before, backfill_depth was not read: +1 h at both
    for depth, at in ((None, 1), (1, 1), (2, 6)):
        v = only(run(ONE_HOST_3H, moira(*MOIRA_JOBS, server=depth)), "moira", "workq")
        assert (v.verdict, v.estimated_start) == ("BUSY", hours(at)), depth
    v = only(run(ONE_HOST_3H, moira(*MOIRA_JOBS, server=2)), "moira", "workq")
    assert "queue workq: backfill_depth 2: backfilling delays none of the first 2 waiting " \
        "jobs" in v.notes
    # the queue's own backfill_depth overrides the server's
    v = only(run(ONE_HOST_3H, moira(*MOIRA_JOBS, server=2, queue=1)), "moira", "workq")
    assert v.estimated_start == hours(1)
    v = only(run(ONE_HOST_3H, moira(*MOIRA_JOBS, server=1, queue=3)), "moira", "workq")
    assert v.estimated_start == hours(6)


def test_pbs_backfill_depth_zero_turns_backfilling_off():
    # A host for 5 h. EASY: from +1 h it would run past q1's +5 h: it waits until q1
    # ends, +6 h. Depth 0 turns backfilling off: whatever fits starts, in priority order,
    # nothing kept for later: p1 at +1 h
    five = ONE_HOST_3H.replace("3:00:00", "5:00:00")
    assert only(run(five, moira(*MOIRA_JOBS)), "moira", "workq").estimated_start == hours(6)
    v = only(run(five, moira(*MOIRA_JOBS, server=0)), "moira", "workq")
    assert v.estimated_start == hours(1)
    assert "queue workq: backfill_depth 0: backfilling is off, a job starts only where it " \
        "fits at once" in v.notes


def test_pbs_backfill_depth_is_read_from_server_and_queue():
    site = moira(server=4)[1]
    assert site.partitions[0].backfill_depth == 4
    assert moira(server=4, queue=0)[1].partitions[0].backfill_depth == 0
    # unset, or not a whole number: not read (PBS's default, 1)
    assert moira()[1].partitions[0].backfill_depth is None
    assert moira(server="-2")[1].partitions[0].backfill_depth is None


# --------------------------------------------------------------- PBS place=group

def test_pbs_place_group_counts_a_queued_job_in_the_group_it_lands_in():
    # p1-p2 on sw1, p3-p5 on sw2; bob's host p3 until +2 h. carol's 2-host job (3 h)
    # waits ahead: it starts at once on the first hosts free, p1 and p2 (sw1). Two hosts
    # grouped by switch: sw2's p4 and p5 are free now. Before, carol's job was counted in
    # both groups: on sw2 it took p4-p5 to +3 h and the job waited +3 h everywhere
    switches = {"p1": "sw1", "p2": "sw1", "p3": "sw2", "p4": "sw2", "p5": "sw2"}
    jobs = (_pjob("1", "bob", 1, ends_h=2, limit_h=4, host="p3"),
            _pjob("2", "carol", 2, queued_h=1, limit_h=3))
    two = "#PBS -l select=2:ncpus=64\n#PBS -l place=scatter:group=switch\n" \
        "#PBS -l walltime=1:00:00"
    v = only(run(two, moira(*jobs, switches=switches)), "moira", "workq")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert v.notes[0].startswith("place=group=switch: its chunks go to the hosts of "
                                 "switch=sw2 (p3, p4, p5)")
    # three hosts: only sw2 has them, and p3 frees at +2 h (carol's job is on sw1)
    v = only(run(two.replace("select=2", "select=3"), moira(*jobs, switches=switches)),
             "moira", "workq")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    # carol's job asks 3 hosts: only sw2 holds it; it starts there at +2 h (p3) and runs
    # to +5 h; our 2 hosts for 1 h: sw1 now (carol's not counted there)
    jobs3 = (jobs[0], _pjob("2", "carol", 3, queued_h=1, limit_h=3))
    v = only(run(two, moira(*jobs3, switches=switches)), "moira", "workq")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert "switch=sw1 (p1, p2)" in v.notes[0]


# --------------------------------------------------------------- Grid Engine host consumables

def _ge_job(jid: str, owner: str, slots: int, left_h: float, limit_h: int = 4,
            **asks: str) -> str:
    """A running job's `qstat -f -xml -r` entry: `slots` slots (smp), h_rt `limit_h`
    hours of which `left_h` are left, and its other hard requests (`asks`)."""
    start = (NOW + timedelta(hours=left_h - limit_h)).strftime("%Y-%m-%dT%H:%M:%S")
    reqs = "".join(f'<hard_request name="{k}" resource_contribution="0.000000">{v}'
                   "</hard_request>" for k, v in {"h_rt": str(limit_h * H), **asks}.items())
    return (f'<job_list state="running"><JB_job_number>{jid}</JB_job_number>'
            f"<JB_name>j{jid}</JB_name><JB_owner>{owner}</JB_owner><state>r</state>"
            f"<JAT_start_time>{start}</JAT_start_time><slots>{slots}</slots>"
            f'<requested_pe name="smp">{slots}</requested_pe>{reqs}</job_list>')


def gaia(jobs: dict[str, list[str]], left: dict[str, dict[str, str]], complexes: str = "",
         glob: dict[str, str] | None = None, pending: str = "", throttles: str = ""):
    """A Grid Engine site of two 16-slot hosts (s1, s2; 64 GB each), one queue all.q;
    `jobs`: the running jobs' entries on each host; `left`: each host's host consumables
    as `qhost -F` prints what is left of them (hc:NAME=VALUE); `complexes`: `qconf -sc`;
    `glob`: the global host's consumables left (gc:NAME=VALUE); `pending`: the waiting
    jobs' entries; `throttles`: the `qstat -j` lines of the snapshot's "throttles"."""
    from datetime import timezone

    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.dialects.sge_commands import SgeCommands
    snap = SgeCommands(tz=timezone.utc).parse_snapshot(
        "gaia", gaia_outputs(jobs, left, complexes, glob, pending, throttles))
    return SiteConfig(name="gaia", scheduler="sge"), snap.model_copy(update={"taken_at": NOW})


def gaia_outputs(jobs: dict[str, list[str]], left: dict[str, dict[str, str]],
                 complexes: str = "", glob: dict[str, str] | None = None, pending: str = "",
                 throttles: str = "") -> dict[str, str]:
    """`gaia`'s site as its snapshot's commands print it, by output name."""
    used = {h: sum(int(x) for j in js for x in re.findall(r"<slots>(\d+)</slots>", j))
            for h, js in jobs.items()}
    inst = "".join(
        f"<Queue-List><name>all.q@{h}</name><qtype>BIP</qtype><slots_used>{used.get(h, 0)}"
        "</slots_used><slots_resv>0</slots_resv><slots_total>16</slots_total><load_avg>0.5"
        f"</load_avg><arch>lx-amd64</arch>{''.join(jobs.get(h, []))}</Queue-List>"
        for h in ("s1", "s2"))
    qstat = f"<?xml version='1.0'?><job_info><queue_info>{inst}</queue_info>" \
        f"<job_info>{pending}</job_info></job_info>"
    hosts = "".join(
        f"<host name='{h}'><hostvalue name='arch_string'>lx-amd64</hostvalue>"
        "<hostvalue name='num_proc'>16</hostvalue><hostvalue name='load_avg'>0.5</hostvalue>"
        "<hostvalue name='mem_total'>64.0G</hostvalue><resourcevalue name='slots' "
        f"dominance='hf'>{16 - used.get(h, 0)}</resourcevalue>"
        "<resourcevalue name='mem_free' dominance='hl'>60.000G</resourcevalue>"
        + "".join(f"<resourcevalue name='{k}' dominance='hc'>{v}</resourcevalue>"
                  for k, v in left.get(h, {}).items()) + "</host>" for h in ("s1", "s2"))
    gc = "".join(f"<resourcevalue name='{k}' dominance='gc'>{v}</resourcevalue>"
                 for k, v in (glob or {}).items())
    qhost = f"<?xml version='1.0'?><qhost><host name='global'>{gc}</host>{hosts}</qhost>"
    return {"queue": qstat, "hosts": qhost, "queues": "qname all.q\nh_rt 24:00:00\n",
            "complexes": complexes, "throttles": throttles}


def _gaia_vmem():
    # s1: bob's 8 slots at 6G each (48G of s1's h_vmem) until +2 h: 16G left. s2: carol's
    # 16 slots at 1G (16G) until +3 h: 48G left, no slot
    return gaia({"s1": [_ge_job("1", "bob", 8, 2, h_vmem="6G")],
                 "s2": [_ge_job("2", "carol", 16, 3, h_vmem="1G")]},
                {"s1": {"h_vmem": "16.000G"}, "s2": {"h_vmem": "48.000G"}})


def test_grid_engine_h_vmem_host_consumable_is_what_is_left_on_the_host():
    site = _gaia_vmem()
    s1, s2 = site[1].nodes
    # what the host has: what is left plus what its running jobs asked (per slot x slots)
    assert (s1.memory_mb, s1.memory_allocated) == (65536, 49152)
    assert (s2.memory_mb, s2.memory_allocated) == (65536, 16384)
    # 4 slots at 8G: 32G on one host. s1 has 8 slots free but 16G of h_vmem left: it
    # waits for bob's job (+2 h); s2 has no slot until +3 h. Before, h_vmem in use was
    # not read: READY now on s1, where Grid Engine would not start it
    job = "#$ -pe smp 4\n#$ -l h_vmem={}\n#$ -l h_rt=1:00:00"
    v = only(run(job.format("8G"), site), "gaia", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    # 4G a slot: 16G, what s1 has left: now
    v = only(run(job.format("4G"), site), "gaia", "all.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_grid_engine_h_vmem_capacity_set_below_the_hosts_memory():
    # s1's h_vmem is 32G (24G left beside bob's 8 slots at 1G), on 64 GB of memory: a
    # job of 4 slots at 9G (36G) never fits s1, though 8 slots are free there; s2 (64G)
    # runs it once carol's 16 slots end (+3 h). Before, s1's 64 GB was taken: READY now.
    # 4 slots at 17G (68G): no host has that much h_vmem
    site = gaia({"s1": [_ge_job("1", "bob", 8, 2, h_vmem="1G")],
                 "s2": [_ge_job("2", "carol", 16, 3, h_vmem="1G")]},
                {"s1": {"h_vmem": "24.000G"}, "s2": {"h_vmem": "48.000G"}})
    assert site[1].nodes[0].memory_mb == 32768
    job = "#$ -pe smp 4\n#$ -l h_vmem={}\n#$ -l h_rt=1:00:00"
    v = only(run(job.format("9G"), site), "gaia", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))
    assert reasons(run(job.format("17G"), site), "gaia") == \
        "needs 69632 MB memory per host, largest host has 65536 MB"


def test_grid_engine_complex_amounts():
    from diamond_jupyter.dialects.sge_commands import amount
    assert amount("30.000G") == 30 * 1024**3 and amount("2g") == 2e9
    assert amount("512M") == 512 * 1024**2 and amount("4") == 4.0
    assert amount("INFINITY") is None and amount("TRUE") is None and amount(None) is None


def test_grid_engine_other_host_consumables_a_job_asks():
    # mem_free a host consumable. s1: bob's 8 slots at 4G each (32G) until +2 h, 8G left
    # (40G in all); s2: carol's 16 slots at 1G until +3 h, 48G left (64G in all)
    site = gaia({"s1": [_ge_job("1", "bob", 8, 2, mem_free="4G")],
                 "s2": [_ge_job("2", "carol", 16, 3, mem_free="1G")]},
                {"s1": {"mem_free": "8.000G"}, "s2": {"mem_free": "48.000G"}})
    assert site[1].nodes[0].consumables_total == {"mem_free": 40 * 1024**3}
    job = "#$ -pe smp 4\n#$ -l mem_free={}\n#$ -l h_rt=1:00:00"
    # 4 slots at 3G: 12G a host. s1 has 8 free slots but 8G left: it waits for bob's job
    # (+2 h); s2 has no slot until +3 h. Before, -l mem_free was kept unread: READY now
    v = only(run(job.format("3G"), site), "gaia", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    # 2G a slot: 8G, what s1 has left: now
    assert only(run(job.format("2G"), site), "gaia", "all.q").estimated_start == NOW
    # 11G a slot: 44G, above s1's 40G in all: s2 once carol's job ends (+3 h)
    v = only(run(job.format("11G"), site), "gaia", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))
    # 17G a slot: 68G, no host has that much (of mem_free, nor of memory: mem_free is the
    # job's memory since the thirteenth sweep's follow-ups)
    assert reasons(run(job.format("17G"), site), "gaia") == (
        "needs 68G of host consumable mem_free per host (4 slots x 17G), the most a host "
        "has is 64G | needs 69632 MB memory per host, largest host has 65536 MB")
    # a request no host has as a host consumable (a global or load value): not checked
    v = only(run("#$ -pe smp 4\n#$ -l scratch=500G\n#$ -l h_rt=1:00:00", site), "gaia",
             "all.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_parts_held_together_keep_the_room_of_the_first_backfill_depth_jobs():
    # a job of several parts starts in what the queued jobs ahead leave: under EASY the
    # blocked head's room is kept, with PBS's backfill_depth N the first N's (a queued
    # job's (start, end, node, CPUs, GPUs, place in the queue)); one started by then
    # always holds its room
    from diamond_jupyter.placement_sim import SimState, _kept_for
    st = SimState(["a", "b", "c"], [8, 8, 8], [0, 0, 0], [8, 8, 8], [0, 0, 0], [], [])
    held = [(0.0, 5.0, 0, 8, 0, 0), (4.0, 9.0, 1, 8, 0, 1), (6.0, 9.0, 2, 8, 0, 2),
            (7.0, 9.0, 2, 4, 0, 3)]
    ranks = lambda kept: sorted(h[5] for h in kept)  # noqa: E731
    assert ranks(_kept_for(held, 1.0, "easy", st)) == [0, 1]
    assert ranks(_kept_for(held, 1.0, "easy", st, top=2)) == [0, 1, 2]
    assert ranks(_kept_for(held, 1.0, "easy", st, top=3)) == [0, 1, 2, 3]
    assert ranks(_kept_for(held, 1.0, "none", st, top=3)) == [0]


def test_grid_engine_hc_gpu_is_what_is_left_not_the_hosts_gpus():
    # s1 has 2 GPUs; bob's job (4 slots, -l gpu=1: the job's one GPU) holds one until
    # +2 h: qhost -F says hc:gpu=1 left. s2 has none. A job of 2 GPUs waits for bob's.
    # Before, the 1 left was taken as s1's GPUs: refused, "largest node has 1"
    site = gaia({"s1": [_ge_job("1", "bob", 4, 2, gpu="1")]},
                {"s1": {"gpu": "1.000000"}, "s2": {"gpu": "0.000000"}})
    s1 = site[1].nodes[0]
    assert (s1.gpus, s1.gpus_allocated) == (2, 1)
    v = only(run("#$ -l gpu=2\n#$ -l h_rt=1:00:00", site), "gaia", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    assert only(run("#$ -l gpu=1\n#$ -l h_rt=1:00:00", site), "gaia",
                "all.q").estimated_start == NOW


QCONF_SC = """#name      shortcut   type        relop requestable consumable default  urgency
#-------------------------------------------------------------------------------
arch       a          RESTRING    ==    YES         NO         NONE     0
h_vmem     h_vmem     MEMORY      <=    YES         YES        0        0
lic        lic        INT         <=    YES         JOB        0        0
mem_free   mf         MEMORY      <=    YES         YES        0        0
scratch    scr        MEMORY      <=    YES         YES        1G       0
slots      s          INT         <=    YES         YES        1        1000
# >#< starts a comment but comments are not saved across edits --------
"""


def test_grid_engine_complexes_say_how_a_consumable_is_taken():
    from diamond_jupyter.dialects.sge_commands import parse_complexes
    got = parse_complexes(QCONF_SC)
    assert sorted(got) == ["h_vmem", "lic", "mem_free", "scratch", "slots"]
    assert (got["lic"].per, got["mem_free"].shortcut, got["scratch"].default) == \
        ("job", "mf", 1024**3)
    assert parse_complexes("") is None
    # s1: bob's 8 slots asked lic=1 (JOB: once, not per slot) and mf=4G (mem_free's
    # shortcut, per slot: 32G) and no scratch (its default 1G a slot: 8G); qhost -F left
    # lic 2, mem_free 8G, scratch 92G: s1 has 3 licences, 40G mem_free, 100G scratch.
    # s2 offers none of them
    site = gaia({"s1": [_ge_job("1", "bob", 8, 2, lic="1", mf="4G")]},
                {"s1": {"lic": "2", "mem_free": "8.000G", "scratch": "92.000G"}}, QCONF_SC)
    assert site[1].nodes[0].consumables_total == {
        "lic": 3.0, "mem_free": 40 * 1024**3, "scratch": 100 * 1024**3}
    job = "#$ -pe smp 4\n#$ -l {}\n#$ -l h_rt=1:00:00"
    # lic=3 is the job's 3 (JOB), not 12: 2 left, it waits for bob's (+2 h). Without
    # the complexes it was read per slot: 12 of s1's 10 (2 + 8 x 1): refused
    v = only(run(job.format("lic=3"), site), "gaia", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    assert reasons(run(job.format("lic=4"), site), "gaia") == (
        "needs 4 of host consumable lic per host (once a job), the most a host has is 3")
    # mf=3G is mem_free's: 12G of the 8G left: +2 h
    v = only(run(job.format("mf=3G"), site), "gaia", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    # a job that asks no scratch takes its default, 1G a slot: 4G, left: now on s1
    v = only(run(job.format("mf=2G"), site), "gaia", "all.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    # 24G of scratch a slot (96G): 92G left, it waits
    v = only(run(job.format("mf=1G,scratch=24G"), site), "gaia", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    # s2 now offers mem_free (48G left) but has no scratch: a job that does not ask for
    # scratch is not held to its default there: 6G a slot (24G) starts on s2 now (s1 has
    # 8G left)
    site = gaia({"s1": [_ge_job("1", "bob", 8, 2, lic="1", mf="4G")]},
                {"s1": {"lic": "2", "mem_free": "8.000G", "scratch": "92.000G"},
                 "s2": {"mem_free": "48.000G"}}, QCONF_SC)
    v = only(run(job.format("mf=6G"), site), "gaia", "all.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


# --------------------------------------------------------------- twelfth sweep

def test_lsf_job_without_n_takes_the_queues_default_task_count():
    # lsb.queues TASKLIMIT: a job submitted without -n gets the default (of two numbers,
    # the minimum; of three, the middle one), and is held to the minimum only after.
    # Before, it was one task: refused by a minimum of 4, started at once with 1 CPU
    # where the default was 48
    from test_placement_cases8 import _wjob, wren
    bare = "#BSUB -W 1:00"
    site = wren(queue_long=_bqueues_l("TASKLIMIT", "4 64"))
    assert site[1].partitions[0].default_tasks == 4
    v = only(run(bare, site), "wren", "normal")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert "queue normal: no task count asked, it gets TASKLIMIT's default 4 tasks" in v.notes
    # an explicit -n below the minimum is still refused
    assert reasons(run("#BSUB -n 2\n" + bare, site), "wren") == \
        "needs 2 slots in all, queue normal takes only jobs of at least 4"
    # default 48: the 64-slot hosts w3 and w4 are busy until +2 h (bob's 40 slots on
    # each), the 32-slot hosts w1, w2 are free: 48 tasks wait for w3 (+2 h)
    busy = (_wjob("1", "bob", 40, "w3", 2), _wjob("2", "bob", 40, "w4", 3))
    site = wren(*busy, queue_long=_bqueues_l("TASKLIMIT", "2 48 64"))
    v = only(run(bare, site), "wren", "normal")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    # a job that asks its own count is not given the default: 8 tasks start now
    v = only(run("#BSUB -n 8\n" + bare, site), "wren", "normal")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    # one number (a maximum): the default is 1, nothing changes
    site = wren(*busy, queue_long=_bqueues_l("TASKLIMIT", "48"))
    assert site[1].partitions[0].default_tasks == 1
    assert only(run(bare, site), "wren", "normal").estimated_start == NOW


def test_lsf_task_defaults_read_from_bqueues_l():
    from diamond_jupyter.dialects.lsf_commands import parse_task_defaults
    for values, want in (("8", 1), ("2 16", 2), ("2 8 16 tasks", 8)):
        assert parse_task_defaults(_bqueues_l("TASKLIMIT", values)) == {"normal": want}
    assert parse_task_defaults(_bqueues_l("TASKLIMIT", "8 4")) == {}


def _gaia_mpi(*args):
    """`gaia` with a PE `mpi` of 8 slots a host (allocation_rule 8)."""
    cfg, snap = gaia(*args)
    return cfg, snap.model_copy(update={"pe_rules": {"mpi": "8", "smp": "$pe_slots"}})


def test_grid_engine_job_consumable_is_asked_of_the_master_host_only():
    # sge_complex(5): a consumable JOB is taken once, in the master task's queue: a job of
    # several hosts needs it on one of them, not on each. 16 slots, 8 a host: s1 and s2.
    # Only s1 has licences (3): before, each host had to hold the lic asked: refused
    mpi = "#$ -pe mpi 16\n#$ -l lic={}\n#$ -l h_rt=1:00:00"
    site = _gaia_mpi({}, {"s1": {"lic": "3"}}, QCONF_SC)
    v = only(run(mpi.format(1), site), "gaia", "all.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert reasons(run(mpi.format(4), site), "gaia") == (
        "needs 4 of host consumable lic on its master host (once a job), the most a host "
        "has is 3")
    # bob holds s1's 3 licences until +2 h, s2 has 2 left: a job of 1 starts now with its
    # master on s2 (before, s1 was held for its licences: +2 h); one of 3 waits for bob's
    site = _gaia_mpi({"s1": [_ge_job("1", "bob", 4, 2, lic="3")]},
                     {"s1": {"lic": "0"}, "s2": {"lic": "2"}}, QCONF_SC)
    v = only(run(mpi.format(1), site), "gaia", "all.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = only(run(mpi.format(3), site), "gaia", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    # a job on one host is held to it there, as before: 8 slots (smp) and lic=3 on s1
    # only, after bob's job
    v = only(run("#$ -pe smp 8\n#$ -l lic=3\n#$ -l h_rt=1:00:00", site), "gaia", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))


def moira_queues(jobs: dict[str, tuple], depths: dict[str, int | None],
                 server: int | None = None):
    """`moira` with the queues of `depths` (each with its own backfill_depth, where not
    None); `jobs`: each queued or running job by the queue it is in."""
    import json

    from diamond_jupyter.dialects.pbs_commands import PbsCommands
    placed = tuple((jid, {**attrs, "queue": q}) for q, js in jobs.items()
                   for jid, attrs in js)
    cfg, _ = moira(*placed, server=server)
    queues = {q: {"queue_type": "Execution", "enabled": "True", "started": "True",
                  "resources_max": {"walltime": "24:00:00"},
                  **({"backfill_depth": d} if d is not None else {})}
              for q, d in depths.items()}
    used = {a["exec_host"].split("/")[0] for _, a in placed if "exec_host" in a}
    nodes = {h: {"state": "job-busy" if h in used else "free",
                 "resources_available": {"ncpus": 64, "mem": "262144000kb"},
                 "resources_assigned": {"ncpus": 64 if h in used else 0}}
             for h in ("p1", "p2", "p3")}
    srv = {"default_queue": "workq", **({"backfill_depth": server} if server is not None
                                        else {})}
    from datetime import timezone
    out = {"nodes": json.dumps({"nodes": nodes}), "queues": json.dumps({"Queue": queues}),
           "server": json.dumps({"Server": {"srv": srv}}),
           "queue": json.dumps({"Jobs": dict(placed)}), "user": "alice\n"}
    snap = PbsCommands(tz=timezone.utc).parse_snapshot("moira", out)
    return cfg, snap.model_copy(update={"taken_at": NOW})


def test_pbs_queue_backfill_depth_counts_the_top_jobs_of_that_queue():
    # PBS: a queue's own backfill_depth is how many of ITS top jobs backfill may not
    # delay; the server's counts the top jobs of the queues without one, together.
    # MOIRA_JOBS' running jobs; q1 (3 hosts) in workq, q2 (2 hosts) in longq; our job,
    # a host for 3 h: past q1 alone +1 h, past both +6 h (as in the depth-2 case above)
    running, q1, q2 = MOIRA_JOBS[:3], MOIRA_JOBS[3], MOIRA_JOBS[4]
    job = ONE_HOST_3H + "\n#PBS -q {}"

    def start(depths, server=None, queue="workq"):
        site = moira_queues({"workq": (*running, q1), "longq": (q2,)}, depths, server)
        return only(run(job.format(queue), site), "moira", queue)

    # no depth anywhere (1, EASY): q1 only is kept: +1 h
    assert start({"workq": None, "longq": None}).estimated_start == hours(1)
    # each queue its own depth 1: q1 is workq's top job, q2 longq's: both kept, +6 h.
    # Before, the probe's queue's 1 was the whole site's: +1 h
    v = start({"workq": 1, "longq": 1})
    assert v.estimated_start == hours(6)
    # the server's 2 shared by workq and longq: both kept (+6 h); our job in a queue
    # of its own depth 1 leaves them kept. Before, its queue's 1 counted every queue's
    # jobs: +1 h
    assert start({"workq": None, "longq": None}, server=2).estimated_start == hours(6)
    v = start({"workq": None, "longq": None, "express": 1}, server=2, queue="express")
    assert v.estimated_start == hours(6)
    assert "queue express: backfill_depth 1" not in " ".join(v.notes)
    # workq's own 1 keeps q1; longq (the server's 1, shared with express) keeps q2
    # (its first): +6 h; with longq's own 0 nothing of it is kept: +1 h
    assert start({"workq": 1, "longq": None}, server=1).estimated_start == hours(6)
    assert start({"workq": 1, "longq": 0}, server=1).estimated_start == hours(1)
    site = moira_queues({"workq": (q1,)}, {"workq": 3, "longq": None}, server=2)
    assert [(p.name, p.backfill_depth, p.backfill_depth_own)
            for p in site[1].partitions] == [("workq", 3, True), ("longq", 2, False)]


def test_grid_engine_global_consumables_are_checked():
    # qhost -F's global host: gc:lic=1 left of the cluster's licences; bob's job on s1
    # (4 slots, lic=1 a slot: 4) until +2 h: the cluster has 5. Before, a global
    # consumable was not checked: a job of 8 licences READY now
    site = gaia({"s1": [_ge_job("1", "bob", 4, 2, lic="1")]}, {}, glob={"lic": "1.000000"})
    assert (site[1].global_consumables_left, site[1].global_consumables_total) == \
        ({"lic": 1.0}, {"lic": 5.0})
    job = "#$ -pe smp {}\n#$ -l lic=1\n#$ -l h_rt=1:00:00"
    # 1 slot, 1 licence: left now
    assert only(run(job.format(1), site), "gaia", "all.q").estimated_start == NOW
    # 2 slots, 2 licences (per slot): 1 left, it waits for bob's job (+2 h), though s2
    # is empty
    v = only(run(job.format(2), site), "gaia", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    # 6 slots: 6 licences, the cluster has 5
    assert reasons(run(job.format(6), site), "gaia") == \
        "needs 6 of global consumable lic, the cluster has 5"
    # a JOB complex is taken once: lic=1 of a 6-slot job is 1, left now
    site = gaia({"s1": [_ge_job("1", "bob", 4, 2, lic="1")]}, {}, QCONF_SC,
                glob={"lic": "4.000000"})
    assert site[1].global_consumables_total == {"lic": 5.0}
    assert only(run(job.format(6), site), "gaia", "all.q").estimated_start == NOW
    # a global host without consumables: nothing read
    assert gaia({}, {})[1].global_consumables_left is None
