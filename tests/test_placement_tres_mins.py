"""Slurm TRES-minutes limits of an association (GrpTRESMins, GrpTRESRunMins, MaxTRESMins; `sacctmgr
show assoc`) with what sshare says is used (`sshare -nP -o USAGE_FIELDS`, recorded as
Slurm 22.05 prints it): a job whose walltime x TRES passes what is left is held by Slurm
(AssocGrpCPUMinutesLimit until usage decays: RESTRICTED; AssocGrpCPURunMinutesLimit until
the running jobs' minutes run down: BUSY) or, alone past MaxTRESMins, never runs
(AssocMaxCpuMinutesPerJobLimit: INCOMPATIBLE), the reason naming the limit and what remains.
A job asking no time limit runs with the partition's DefaultTime, else its MaxTime."""

from __future__ import annotations

from datetime import timedelta

from test_placement_cases import NOW, only, reasons, run
from test_placement_cases5 import PARTITIONS, node_lines
from test_placement_cases6 import running
from test_placement_cases6 import slurm as slurm6

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.slurm_commands import (
    ASSOC_FIELDS,
    parse_assoc,
    parse_usage,
    with_usage,
)
from diamond_jupyter.model import Association

# `sshare -nP -o Account,User,GrpTRESRaw,TRESRunMins` as Slurm 22.05 prints it (accounts
# indented by depth; GrpTRESRaw in TRES-minutes)
USAGE = ("root||cpu=250000,mem=0,energy=0,node=6000,billing=250000|cpu=480,mem=0,node=60\n"
         " proj||cpu=99000,mem=0,energy=0,node=2400,billing=99000|cpu=480,mem=0,node=60\n"
         "  proj|alice|cpu=61000,mem=0,energy=0,node=1500,billing=61000|cpu=480,mem=0\n")


def _site(*queue: str, user: str = "", proj: str = "", user_job: str = "",
          proj_job: str = "", qos_job: str = "", usage: str = USAGE):
    """kronos (the seventh sweep's olympus) with alice's association and proj's account
    line carrying `user` / `proj`: GrpTRESMins|GrpTRESRunMins, and `user_job` /
    `proj_job`: MaxTRESMins; `qos_job`: QOS normal's MaxTRESMins; `usage`: what the
    sshare probe printed."""
    assoc = (f"user|alice\nalice|proj||normal|normal||||||||{user or '|'}|{user_job}\n"
             f"|proj||||root|||||||{proj or '|'}|{proj_job}\n|root||||||||||||||\n")
    outputs = {"partitions": PARTITIONS, "nodes": node_lines(alloc={"n1": 8}),
               "queue": "\n".join(queue),
               "queue_qos": "".join(f"{j.split('|')[0]}|normal|proj|OK\n" for j in queue),
               "qos": f"normal||||||||||||||{qos_job}\n", "assoc": assoc, "assoc_usage": usage}
    snap = slurm6.parse_snapshot("kronos", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="kronos", metadata={"architecture": "x86_64"}), snap


def test_sshare_usage_is_read_and_joined_to_the_associations():
    usage = parse_usage(USAGE)
    assert usage[("proj", "")][0]["cpu"] == 99000
    assert usage[("proj", "alice")] == ({"cpu": 61000, "mem": 0, "energy": 0, "node": 1500,
                                         "billing": 61000}, {"cpu": 480, "mem": 0})
    mine, acct = with_usage([Association(account="proj"),
                             Association(account="proj", level="account")], usage, "alice")
    assert (mine.tres_mins_used["cpu"], acct.tres_mins_used["cpu"]) == (61000, 99000)
    assert parse_usage("sshare: error: Problem talking to the database\n") == {}


def test_a_job_past_the_accounts_cpu_minutes_left_is_held_until_usage_decays():
    """proj: GrpTRESMins cpu=100000, 99000 used: 8 CPUs for 3 h (1440) is held, naming
    what is left; 8 CPUs for 1 h (480) runs now."""
    site = _site(proj="cpu=100000|")
    p = run("#SBATCH -A proj -c 8 -t 3:00:00 -p compute", site)
    assert p.verdict("kronos").verdict == "RESTRICTED"
    assert ("needs 1440 cpu-minutes (8 CPUs for 180 min), account proj's association's "
            "GrpTRESMins cpu=100000 has 1000 left (99000 used): Slurm holds it "
            "(AssocGrpCPUMinutesLimit) until usage decays, or for good if it does not"
            ) in reasons(p, "kronos"), reasons(p, "kronos")
    p = run("#SBATCH -A proj -c 8 -t 1:00:00 -p compute", site)
    assert only(p, "kronos", "compute").verdict == "READY"


def test_a_job_past_the_running_minutes_left_waits_as_they_run_down():
    """alice: GrpTRESRunMins cpu=1000; her 8 CPUs end in 1 h (480 to run). 16 CPUs for 1 h
    (960) fit once hers are down to 40, at +55 min; 8 CPUs for 1 h (480) start now."""
    site = _site(running("1", "alice", "n1", 8, 3, 4), user="|cpu=1000")
    p = run("#SBATCH -A proj -c 16 -t 1:00:00 -p compute", site)
    v = only(p, "kronos", "compute")
    assert v.verdict == "BUSY", p.explain()
    assert abs((v.estimated_start - (NOW + timedelta(minutes=55))).total_seconds()) < 1
    assert "GrpTRESRunMins cpu=1000: its running jobs have 480 cpu-minutes still to run, " \
        "the job asks 960: it waits as they run down (AssocGrpCPURunMinutesLimit)" \
        in p.explain()
    p = run("#SBATCH -A proj -c 8 -t 1:00:00 -p compute", site)
    assert only(p, "kronos", "compute").verdict == "READY"


def test_the_association_probe_asks_max_tres_mins_and_reads_it():
    assert ASSOC_FIELDS.endswith(",GrpTRESMins,GrpTRESRunMins,MaxTRESMins")
    user, assocs = parse_assoc("user|alice\nalice|proj||normal|normal||||||||||"
                               "cpu=1000,node=10\n")
    assert (user, assocs[0].max_tres_mins_per_job) == ("alice", {"cpu": 1000, "node": 10})


def test_a_job_past_the_associations_minutes_a_job_never_runs():
    """alice: MaxTRESMins cpu=1000: 8 CPUs for 3 h (1440) pends for good; 8 CPUs for 2 h
    (960) runs. Set only on proj's account line, it holds for alice's jobs too; hers, when
    she has her own, is the one that counts."""
    p = run("#SBATCH -A proj -c 8 -t 3:00:00 -p compute", _site(user_job="cpu=1000"))
    assert p.verdict("kronos").verdict == "INCOMPATIBLE", p.explain()
    assert ("needs 1440 cpu-minutes (8 CPUs for 180 min), your association (user alice, "
            "account proj) allows 1000 a job (MaxTRESMins cpu=1000): Slurm keeps it pending "
            "(AssocMaxCpuMinutesPerJobLimit)") in reasons(p, "kronos"), reasons(p, "kronos")
    p = run("#SBATCH -A proj -c 8 -t 2:00:00 -p compute", _site(user_job="cpu=1000"))
    assert only(p, "kronos", "compute").verdict == "READY"
    p = run("#SBATCH -A proj -c 8 -t 3:00:00 -p compute", _site(proj_job="cpu=1000"))
    assert "account proj's association allows 1000 a job (MaxTRESMins cpu=1000)" \
        in reasons(p, "kronos"), reasons(p, "kronos")
    p = run("#SBATCH -A proj -c 8 -t 3:00:00 -p compute",
            _site(user_job="cpu=2000", proj_job="cpu=1000"))
    assert only(p, "kronos", "compute").verdict == "READY", p.explain()


def test_a_job_asking_no_time_limit_is_checked_with_the_partitions_max_time():
    """long has no DefaultTime: a job asking no time limit gets its MaxTime (7 days), 2 CPUs
    for 10080 min pass the association's and the QOS's MaxTRESMins cpu=5000; in compute
    it gets the DefaultTime (20 min, 40 cpu-minutes) and runs."""
    for site, whose, code in (
            (_site(user_job="cpu=5000"), "your association (user alice, account proj)",
             "AssocMaxCpuMinutesPerJobLimit"),
            (_site(qos_job="cpu=5000"), "the job's QOS normal", "QOSMaxCpuMinutesPerJobLimit")):
        p = run("#SBATCH -A proj -c 2 -p long", site)
        assert p.verdict("kronos").verdict == "INCOMPATIBLE", p.explain()
        assert (f"needs 20160 cpu-minutes (2 CPUs for 10080 min, partition long's MaxTime: "
                f"it asks no time limit), {whose} allows 5000 a job (MaxTRESMins cpu=5000): "
                f"Slurm keeps it pending ({code})") in reasons(p, "kronos"), reasons(p, "kronos")
        p = run("#SBATCH -A proj -c 2 -p compute", site)
        assert only(p, "kronos", "compute").verdict == "READY", p.explain()


# -- sshare failing or silent: the use is not known, never taken as 0 ----------------------

# what the probe printed where sshare has no configuration to reach slurmctld (recorded
# from Slurm 22.05.8's sshare without a slurm.conf in reach): its errors, then the status
SSHARE_FAILED = (
    "sshare: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\n"
    "sshare: error: fetch_config: DNS SRV lookup failed\n"
    "sshare: error: _establish_config_source: failed to fetch config\n"
    "sshare: fatal: Could not establish a configuration source\n"
    "exit status 1\n")


def test_sshare_failing_leaves_each_limit_checked_whole_and_place_says_why_once():
    site = _site(user="cpu=20000|", proj="cpu=100000|", usage=SSHARE_FAILED)
    assert [a.tres_mins_used_known for a in site[1].associations or []
            if a.grp_tres_mins] == [False, False]
    p = run("#SBATCH -A proj -c 8 -t 1:00:00", site)  # compute, long and high: said once
    v = p.verdict("kronos")
    assert v.verdict == "READY", p.explain()
    said = ("what your association (user alice, account proj) and account proj's "
            "association have used of their GrpTRESMins (cpu=20000; cpu=100000) could not "
            "be read (sshare failed (exit 1): sshare: fatal: Could not establish a "
            "configuration source): the job is checked against each whole limit only")
    assert v.not_checked == [said], v.not_checked
    assert p.explain().count(said) == 1, p.explain()


def test_a_job_past_a_whole_limit_whose_use_sshare_did_not_give_is_held_for_good():
    # 48 CPUs for 8 h: 23040 cpu-minutes, past alice's whole cpu=20000 whatever she used
    p = run("#SBATCH -A proj -c 48 -t 8:00:00 -p compute",
            _site(user="cpu=20000|", usage=SSHARE_FAILED))
    assert p.verdict("kronos").verdict == "RESTRICTED", p.explain()
    assert ("needs 23040 cpu-minutes (48 CPUs for 480 min), more than your association "
            "(user alice, account proj)'s whole GrpTRESMins cpu=20000: Slurm holds it "
            "(AssocGrpCPUMinutesLimit) for good") in reasons(p, "kronos"), reasons(p, "kronos")


def test_an_association_sshare_leaves_out_is_not_known_and_the_others_are_checked():
    # sshare answers for proj (99000 of 100000 used) but prints no row of alice's
    without_alice = "".join(x + "\n" for x in USAGE.splitlines() if "|alice|" not in x)
    site = _site(user="cpu=20000|", proj="cpu=100000|", usage=without_alice)
    p = run("#SBATCH -A proj -c 8 -t 3:00:00 -p compute", site)
    assert "account proj's association's GrpTRESMins cpu=100000 has 1000 left (99000 " \
        "used)" in reasons(p, "kronos"), reasons(p, "kronos")
    p = run("#SBATCH -A proj -c 8 -t 1:00:00 -p compute", site)  # 480 of the 1000 left
    assert only(p, "kronos", "compute").verdict == "READY", p.explain()
    assert p.verdict("kronos").not_checked == [
        "what your association (user alice, account proj) has used of its GrpTRESMins "
        "cpu=20000 could not be read (not in sshare's output): the job is checked against "
        "the whole limit only"], p.explain()


def test_sshare_not_answering_in_time_is_the_reason_given():
    v = run("#SBATCH -A proj -c 8 -t 1:00:00 -p compute",
            _site(user="cpu=20000|", usage="exit status 124\n")).verdict("kronos")
    assert v.not_checked == [
        "what your association (user alice, account proj) has used of its GrpTRESMins "
        "cpu=20000 could not be read (sshare did not answer within 10 s): the job is checked "
        "against the whole limit only"], v.not_checked


def test_an_association_without_a_grp_tres_mins_needs_no_use_and_nothing_is_said():
    p = run("#SBATCH -A proj -c 8 -t 1:00:00 -p compute",
            _site(user="|cpu=100000", usage=SSHARE_FAILED))
    assert only(p, "kronos", "compute").verdict == "READY", p.explain()
    assert p.verdict("kronos").not_checked == [] and "sshare" not in p.explain()
