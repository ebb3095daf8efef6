"""Slurm TRES-minutes limits of a QOS (GrpTRESMins, GrpTRESRunMins, MaxTRESMins; `sacctmgr
show qos`) with what slurmctld says the QOS has used (`scontrol -o show assoc_mgr
flags=qos`, in the shape Slurm 22.05's scontrol prints it): a job whose walltime x TRES
passes what is left is held (QOSGrpCPUMinutesLimit until usage decays: RESTRICTED), waits
as the running jobs' minutes run down (QOSGrpCPURunMinutesLimit: BUSY), or alone passes
MaxTRESMins (never runs; refused at submit under DenyOnLimit), the reason naming the QOS
limit and what remains."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import timedelta

from test_placement_cases import NOW, only, reasons, run
from test_placement_cases5 import PARTITIONS, node_lines
from test_placement_cases6 import running
from test_placement_cases6 import slurm as slurm6

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.slurm_commands import parse_qos, parse_qos_usage, usage_unread

# `scontrol -o show assoc_mgr flags=qos`: one line a QOS, each TRES-minutes limit as
# `name=LIMIT(USED)` (N: no limit), USED in TRES-minutes
_TAIL = ",energy=N(0),billing=N(0),fs/disk=N(0),vmem=N(0),pages=N(0)"
USAGE = (
    "Current Association Manager state\n\nQOS Records\n\n"
    "QOS=normal(1) UsageRaw=5940000.000000 GrpJobs=N(1) GrpSubmitJobs=N(1) "
    f"GrpWall=N(99.00) GrpTRES=cpu=N(8),mem=N(0),node=N(1){_TAIL} "
    f"GrpTRESMins=cpu=N(99000),mem=N(0),node=N(1650){_TAIL} "
    f"GrpTRESRunMins=cpu=N(480),mem=N(0),node=N(60){_TAIL} MaxJobs= MaxSubmitJobs= "
    "MaxWallPJ= MaxTRESPJ= MaxTRESPN= MaxTRESPU= MaxTRESMinsPJ= MinTRESPJ=\n"
    "QOS=long(2) UsageRaw=0.000000 GrpJobs=N(0) GrpSubmitJobs=N(0) GrpWall=N(0.00) "
    f"GrpTRES=cpu=N(0){_TAIL} GrpTRESMins=cpu=N(0){_TAIL} GrpTRESRunMins=cpu=N(0){_TAIL} "
    "MaxJobs= MaxSubmitJobs= MaxWallPJ= MaxTRESPJ= MaxTRESPN= MaxTRESPU= MaxTRESMinsPJ= "
    "MinTRESPJ=\n")


def _site(grp_mins: str = "", run_mins: str = "", job_mins: str = "", flags: str = "",
          *queue: str, usage: str = USAGE):
    """kronos (the seventh sweep's olympus): alice's jobs run under her association's
    default QOS normal, whose Flags|GrpTRESMins|GrpTRESRunMins|MaxTRESMins are given."""
    assoc = "user|alice\nalice|proj||normal|normal|\n|proj||||root\n|root|||||\n"
    outputs = {"partitions": PARTITIONS, "nodes": node_lines(alloc={"n1": 8}),
               "queue": "\n".join(queue),
               "queue_qos": "".join(f"{j.split('|')[0]}|normal|proj|OK\n" for j in queue),
               "qos": f"normal|||||||||||{flags}|{grp_mins}|{run_mins}|{job_mins}\n",
               "assoc": assoc, "qos_usage": usage}
    snap = slurm6.parse_snapshot("kronos", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="kronos", metadata={"architecture": "x86_64"}), snap


def test_the_discovery_query_asks_slurmctld_for_the_qos_usage_and_never_fails_on_it(
        tmp_path):
    argv = slurm6.snapshot_argvs()["qos_usage"]
    assert argv[-2:] == ["-c", "timeout 10 scontrol -o show assoc_mgr flags=qos "
                                '2>&1 || echo "exit status $?"; exit 0']
    assert "GrpTRESMins,GrpTRESRunMins,MaxTRESMins" in " ".join(slurm6.snapshot_argvs()["qos"])
    # an scontrol that fails: the probe still succeeds, with its error and status
    (tmp_path / "scontrol").write_text("#!/bin/sh\necho 'scontrol: error: Access denied' >&2\n"
                                       "exit 3\n")
    (tmp_path / "scontrol").chmod(0o755)
    ran = subprocess.run(argv, capture_output=True, text=True, check=True,
                         env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"})
    assert ran.stdout == "scontrol: error: Access denied\nexit status 3\n"
    assert usage_unread(ran.stdout, "scontrol show assoc_mgr", read_any=False) == \
        "scontrol show assoc_mgr failed (exit 3): scontrol: error: Access denied"


def test_the_qos_usage_is_read_one_line_a_qos_or_over_several_lines():
    usage = parse_qos_usage(USAGE)
    assert usage["normal"][0]["cpu"] == 99000 and usage["normal"][1]["cpu"] == 480
    assert usage["normal"][1]["node"] == 60 and usage["long"][0]["cpu"] == 0
    several = USAGE.replace(" Grp", "\n    Grp").replace(" Max", "\n    Max")
    assert parse_qos_usage(several) == usage
    assert parse_qos_usage("slurm_load_assoc_mgr_info error: Access denied\n") == {}


def test_the_qos_minutes_limits_are_read_and_older_recordings_have_none():
    q = parse_qos("normal|||||||||||DenyOnLimit|cpu=100000|cpu=1000|cpu=600,node=10\n")
    assert (q["normal"].grp_tres_mins, q["normal"].grp_tres_run_mins) == (
        {"cpu": 100000}, {"cpu": 1000})
    assert q["normal"].max_tres_mins_per_job == {"cpu": 600, "node": 10}
    old = parse_qos("normal|||||||||||DenyOnLimit\n")["normal"]
    assert (old.flags, old.grp_tres_mins, old.max_tres_mins_per_job) == (["DenyOnLimit"], {}, {})


def test_a_job_past_the_qos_cpu_minutes_left_is_held_until_usage_decays():
    """normal: GrpTRESMins cpu=100000, 99000 used: 8 CPUs for 3 h (1440) is held, naming
    what is left; 8 CPUs for 1 h (480) runs now."""
    site = _site("cpu=100000")
    p = run("#SBATCH -A proj -c 8 -t 3:00:00 -p compute", site)
    assert p.verdict("kronos").verdict == "RESTRICTED", p.explain()
    assert ("needs 1440 cpu-minutes (8 CPUs for 180 min), QOS normal's GrpTRESMins "
            "cpu=100000 has 1000 left (99000 used): Slurm holds it (QOSGrpCPUMinutesLimit) "
            "until usage decays, or for good if it does not") in reasons(p, "kronos")
    p = run("#SBATCH -A proj -c 8 -t 1:00:00 -p compute", site)
    assert only(p, "kronos", "compute").verdict == "READY"


def test_a_qos_that_does_not_decay_or_denies_on_limit_says_so():
    p = run("#SBATCH -A proj -c 8 -t 3:00:00 -p compute",
            _site("cpu=100000", flags="NoDecay,DenyOnLimit"))
    assert ("has 1000 left (99000 used): sbatch refuses it (DenyOnLimit; "
            "QOSGrpCPUMinutesLimit) until an administrator raises the limit or resets its "
            "usage (NoDecay)") in reasons(p, "kronos"), reasons(p, "kronos")


def test_the_qos_usage_not_known_checks_the_whole_limit_and_says_why_once():
    site = _site("cpu=100000", usage="scontrol: error: Invalid user for SlurmUser\n"
                                     "exit status 1\n")
    assert site[1].qos["normal"].tres_mins_used_known is False
    p = run("#SBATCH -A proj -c 8 -t 3:00:00", site)  # compute, long and high: said once
    assert p.verdict("kronos").verdict == "READY", p.explain()
    said = ("what QOS normal has used of its GrpTRESMins cpu=100000 could not be read "
            "(scontrol show assoc_mgr failed (exit 1): scontrol: error: Invalid user for "
            "SlurmUser): the job is checked against the whole limit only")
    assert p.verdict("kronos").not_checked == [said], p.explain()
    assert p.explain().count(said) == 1


def test_a_job_past_the_whole_qos_limit_whose_use_is_not_known_is_held_for_good():
    # 48 CPUs for 2 days: 138240 cpu-minutes, past the whole cpu=100000 whatever was used
    p = run("#SBATCH -A proj -c 48 -t 2-00:00:00 -p compute",
            _site("cpu=100000", usage="exit status 124\n"))
    assert p.verdict("kronos").verdict == "RESTRICTED", p.explain()
    assert ("needs 138240 cpu-minutes (48 CPUs for 2880 min), more than QOS normal's whole "
            "GrpTRESMins cpu=100000: Slurm holds it (QOSGrpCPUMinutesLimit) for good"
            ) in reasons(p, "kronos"), reasons(p, "kronos")


def test_a_qos_slurmctld_leaves_out_is_not_known_never_taken_as_unused():
    only_long = "".join(x + "\n" for x in USAGE.splitlines() if not x.startswith("QOS=normal"))
    v = run("#SBATCH -A proj -c 8 -t 1:00:00 -p compute",
            _site("cpu=100000", usage=only_long)).verdict("kronos")
    assert v.verdict == "READY" and v.not_checked == [
        "what QOS normal has used of its GrpTRESMins cpu=100000 could not be read (not in "
        "scontrol show assoc_mgr's output): the job is checked against the whole limit "
        "only"], v.not_checked


def test_a_job_past_the_qos_running_minutes_left_waits_as_they_run_down():
    """normal: GrpTRESRunMins cpu=1000; alice's 8 CPUs under it end in 1 h (480 to run).
    16 CPUs for 1 h (960) fit once those are down to 40, at +55 min; 8 CPUs for 1 h start
    now; 16 CPUs for 2 h (1920) alone pass it: never."""
    site = _site("", "cpu=1000", "", "", running("1", "alice", "n1", 8, 3, 4))
    p = run("#SBATCH -A proj -c 16 -t 1:00:00 -p compute", site)
    v = only(p, "kronos", "compute")
    assert v.verdict == "BUSY", p.explain()
    assert abs((v.estimated_start - (NOW + timedelta(minutes=55))).total_seconds()) < 1
    assert "QOS normal's GrpTRESRunMins cpu=1000: its running jobs have 480 cpu-minutes " \
        "still to run, the job asks 960: it waits as they run down " \
        "(QOSGrpCPURunMinutesLimit)" in p.explain()
    assert only(run("#SBATCH -A proj -c 8 -t 1:00:00 -p compute", site),
                "kronos", "compute").verdict == "READY"
    p = run("#SBATCH -A proj -c 16 -t 2:00:00 -p compute", site)
    assert p.verdict("kronos").verdict == "RESTRICTED"
    assert "needs 1920 cpu-minutes (16 CPUs for 120 min), QOS normal's GrpTRESRunMins " \
        "cpu=1000 allows less at once: it would never start (QOSGrpCPURunMinutesLimit)" \
        in reasons(p, "kronos")


def test_a_job_past_the_qos_minutes_a_job_never_runs_or_is_refused_at_submit():
    """normal: MaxTRESMins cpu=1000: 8 CPUs for 3 h (1440) pends for good; under
    DenyOnLimit sbatch refuses it; 8 CPUs for 2 h (960) runs."""
    p = run("#SBATCH -A proj -c 8 -t 3:00:00 -p compute", _site(job_mins="cpu=1000"))
    assert p.verdict("kronos").verdict == "INCOMPATIBLE", p.explain()
    assert ("needs 1440 cpu-minutes (8 CPUs for 180 min), the job's QOS normal allows 1000 "
            "a job (MaxTRESMins cpu=1000): Slurm keeps it pending "
            "(QOSMaxCpuMinutesPerJobLimit)") in reasons(p, "kronos")
    p = run("#SBATCH -A proj -c 8 -t 3:00:00 -p compute",
            _site(job_mins="cpu=1000", flags="DenyOnLimit"))
    assert "(MaxTRESMins cpu=1000): Slurm refuses it at submit (DenyOnLimit)" \
        in reasons(p, "kronos")
    p = run("#SBATCH -A proj -c 8 -t 2:00:00 -p compute", _site(job_mins="cpu=1000"))
    assert only(p, "kronos", "compute").verdict == "READY"


def test_over_slurmrestd_a_qos_minutes_a_job_is_read_and_its_group_minutes_are_not():
    """The recorded dbv0.0.38 reply with a MaxTRESMins (`max.tres.minutes.per.job`) and a
    GrpTRESMins set: the first is read; the second is not (its usage is not served)."""
    from pathlib import Path

    from diamond_jupyter.dialects.slurm_rest import parse_qos as parse_rest_qos

    reply = json.loads((Path(__file__).parent / "fixtures" / "outputs" / "slurmrestd"
                        / "qos_v0.0.38.json").read_text())
    minutes = reply["qos"][0]["limits"]["max"]["tres"]["minutes"]["per"]
    minutes["job"] = [{"type": "cpu", "name": "", "id": 1, "count": 1000}]
    minutes["qos"] = [{"type": "cpu", "name": "", "id": 1, "count": 100000}]
    q = parse_rest_qos(json.dumps(reply))[reply["qos"][0]["name"]]
    assert (q.max_tres_mins_per_job, q.grp_tres_mins) == ({"cpu": 1000}, {})
