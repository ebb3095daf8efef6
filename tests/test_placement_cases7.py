"""Placement cases worked by hand, seventh sweep: every component of a Slurm heterogeneous
job (`#SBATCH hetjob`) placed on its own partition and nodes, the job starting when all
of them can; Slurm association limits (`sacctmgr show assoc`: GrpTRES, GrpJobs, MaxJobs,
MaxSubmitJobs, MaxTRESPerJob on the user's association and its parents); PBS group,
project and server limits and Torque's `max_user_run`; LSF `JL/U` and `blimits`;
`OverSubscribe=YES:N` with `--oversubscribe`; then more sites of every scheduler. Each
case asserts the verdict per site, the partition chosen, the start and that the reason
names the real cause."""

from __future__ import annotations

import os
import subprocess
from datetime import timedelta, timezone

import pytest
from test_placement_cases import NOW, H, has_note, hera, only, pbs_site, reasons, run
from test_placement_cases5 import PARTITIONS, busy, node_lines
from test_placement_cases6 import _pbs_job, kestrel, pending, running
from test_placement_cases6 import slurm as slurm6

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.slurm_commands import parse_assoc, parse_job_qos
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput
from diamond_jupyter.placement import place

# --------------------------------------------------------------- heterogeneous jobs

CPU_THEN_GPU = ("#SBATCH -N 2 -n 64 -p cpu -t 2:00:00\n#SBATCH hetjob\n"
                "#SBATCH -p gpu --gres=gpu:a100:2 -c 8")


def test_a_hetjob_places_each_component_on_its_own_partition():
    # component 0: 2 nodes of cpu; component 1: 2 A100 on one node of gpu. hera has both
    # idle: READY in cpu; ares (aarch64, partition main only, no GPU) has neither
    p = run(CPU_THEN_GPU)
    v = only(p, "hera", "cpu")
    assert v.verdict == "READY" and v.estimated_start == NOW
    assert has_note(v, "hetjob component 1 runs in partition gpu, can start +0:00:00")
    why = reasons(p, "ares")
    assert "hetjob component 0: partition 'cpu' not found (site has: main)" in why
    assert "hetjob component 1: no GPU of type 'a100' (site has: none)" in why


def test_a_gpu_component_is_asked_of_the_site_even_when_the_first_fits():
    # component 1 asks 8 A100 on one node: hera's A100 nodes hold 4. Before, only the
    # first component was checked and hera ran the job
    p = run("#SBATCH -N 1 -n 16 -p cpu -t 1:00:00\n#SBATCH hetjob\n"
            "#SBATCH -p gpu --gres=gpu:a100:8")
    assert p.choice is None
    assert reasons(p, "hera").startswith("hetjob component 1: ")
    assert "8 GPUs" in reasons(p, "hera")
    # `place --explain` names the component that cannot run
    assert "hera INCOMPATIBLE hetjob component 1: " in p.explain()


def test_a_later_component_without_a_partition_goes_to_the_default_one():
    # --partition is not propagated: component 1 runs in hera's default partition, cpu,
    # whose nodes have no GPU, though the site's gpu partition has them
    p = run("#SBATCH -N 1 -n 16 -p cpu -t 1:00:00\n#SBATCH hetjob\n"
            "#SBATCH --gres=gpu:a100:2 -c 8")
    assert reasons(p, "hera").startswith(
        "hetjob component 1 (no --partition: the default, cpu): partition cpu: no GPU of "
        "type 'a100'")


def test_a_later_component_without_a_partition_at_a_site_without_a_default():
    cfg, snap = hera()
    for part in snap.partitions:
        part.default = False
    p = run("#SBATCH -N 1 -p cpu -t 1:00:00\n#SBATCH hetjob\n#SBATCH -N 1", (cfg, snap))
    assert reasons(p, "hera").startswith(
        "hetjob component 1 (no --partition, and the site has no default partition: sbatch "
        "refuses it): ")
    # the sites file's default partition does not reach it: the engine names the first
    # component's partition only, and sbatch sends the others to the scheduler's default
    p = run("#SBATCH -N 1 -p cpu -t 1:00:00\n#SBATCH hetjob\n#SBATCH -N 1",
            (cfg.model_copy(update={"default_partition": "cpu"}), snap))
    assert reasons(p, "hera").startswith("hetjob component 1 (no --partition, and the site "
                                         "has no default partition")


def test_a_hetjob_starts_when_every_component_can():
    # g01 and g02 (every A100) are held by jobs ending in 2 h and 3 h; the CPU component
    # could start now, but the job starts with its GPU component: +2 h
    jobs = [busy("11", "g01", 2, 64, "gpu", walltime_h=4, gpus=4),
            busy("12", "g02", 3, 64, "gpu", walltime_h=4, gpus=4)]
    site = hera(jobs=jobs, alloc={"g01": (64, 4), "g02": (64, 4)})
    v = only(run(CPU_THEN_GPU, site), "hera", "cpu")
    assert v.verdict == "BUSY" and v.estimated_start == NOW + timedelta(hours=2)
    assert v.estimated_finish == NOW + timedelta(hours=4)  # 2 h of walltime from then
    assert has_note(v, "hetjob component 1 runs in partition gpu, can start +2:00:00")
    assert v.start_bound is None or v.start_bound >= v.estimated_start


def test_hetjob_components_do_not_share_what_one_of_them_takes():
    # g02 is held for 3 h; g01 is free. Two components of 4 A100 each: alone, each starts
    # now on g01, together the second waits for g02: the job starts at +3 h (before: now)
    site = hera(jobs=[busy("12", "g02", 3, 64, "gpu", walltime_h=4, gpus=4)],
                alloc={"g02": (64, 4)})
    v = only(run("#SBATCH -p gpu --gres=gpu:a100:4 -t 1:00:00\n#SBATCH hetjob\n"
                 "#SBATCH -p gpu --gres=gpu:a100:4", site), "hera", "gpu")
    assert (v.verdict, v.estimated_start) == ("BUSY", NOW + timedelta(hours=3))
    # two of 2 A100 and 8 CPUs each share g01 (4 A100, 64 CPUs): now
    v = run("#SBATCH -p gpu --gres=gpu:a100:2 -c 8 -t 1:00:00\n#SBATCH hetjob\n"
            "#SBATCH -p gpu --gres=gpu:a100:2 -c 8", site).verdict("hera")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_a_hetjob_time_limit_is_propagated_to_later_components():
    # --time is propagated: 30 h is above gpu's 24 h MaxTime for component 1 (cpu's is 48
    # h); component 1 with its own 2 h fits
    p = run("#SBATCH -N 1 -p cpu -t 30:00:00\n#SBATCH hetjob\n#SBATCH -p gpu --gres=gpu:1")
    assert reasons(p, "hera") == ("hetjob component 1: walltime 1-06:00:00 above partition "
                                  "gpu MaxTime 1-00:00:00")
    only(run("#SBATCH -N 1 -p cpu -t 30:00:00\n#SBATCH hetjob\n"
             "#SBATCH -p gpu --gres=gpu:1 -t 2:00:00"), "hera", "cpu")


def test_a_later_components_exclude_does_not_bind_the_first():
    # component 0 takes all 4 nodes of cpu; component 1's --exclude=c01 is its own (it
    # runs in debug, which holds c01-c02): before, it took c01 from component 0 too
    v = only(run("#SBATCH -N 4 -p cpu -t 0:20:00\n#SBATCH hetjob\n"
                 "#SBATCH -p debug -N 1 --exclude=c01"), "hera", "cpu")
    assert v.verdict == "READY"


def test_a_hetjob_runs_only_at_a_slurm_site():
    # translated for PBS the later components are dropped: the job is not run there
    p = run("#SBATCH -N 1 -n 2 -t 1:00:00\n#SBATCH hetjob\n"
            "#SBATCH -p gpu --gres=gpu:1 --comment=workers", pbs_site(), hera())
    assert "a Slurm heterogeneous job of 2 components (#SBATCH hetjob): pbs has no form " \
        "for its later components" in reasons(p, "pbs")
    only(p, "hera")


def test_a_later_components_bad_option_is_refused_naming_the_component():
    spec = Federation.parse("#!/bin/bash\n#SBATCH -N 1\n#SBATCH hetjob\n"
                            "#SBATCH --mem=1.5G\n./app\n")
    with pytest.raises(BadInput, match=r"heterogeneous job component 1 .*bad memory size"):
        place(spec, [hera()], now=NOW)
    # the line is quoted as written, not numbered within the component alone
    spec = Federation.parse("#!/bin/bash\n#SBATCH -N 1\n#SBATCH hetjob\n"
                            "#SBATCH -p gpu -N abc\n./app\n")
    with pytest.raises(BadInput) as got:
        place(spec, [hera()], now=NOW)
    assert "line 2" not in str(got.value)
    assert str(got.value).startswith("heterogeneous job component 1 (after #SBATCH hetjob "
                                     "number 1): bad node count 'abc'")
    assert str(got.value).endswith("(the line `#SBATCH -p gpu -N abc`)")


def test_a_hetjob_of_three_components_names_each_one_that_cannot_run():
    p = run("#SBATCH -p cpu -N 1 -t 1:00:00\n#SBATCH hetjob\n#SBATCH -p gpu -N 3 "
            "--gres=gpu:a100:1\n#SBATCH hetjob\n#SBATCH -p debug -N 2")
    why = reasons(p, "hera")
    assert why.startswith("hetjob component 1: ") and "hetjob component 2: " in why
    assert "hetjob component 0" not in why
    assert H == 3600


# --------------------------------------------------------------- Slurm association limits

# `sacctmgr -nP show assoc format=ASSOC_FIELDS`: User, Account, Partition, DefaultQOS, QOS,
# ParentName, GrpTRES, GrpJobs, GrpSubmitJobs, MaxJobs, MaxSubmitJobs, MaxTRES; account
# lines (User empty) for proj and the accounts above it: proj under dept under root
def assoc_text(user: str = "", proj: str = "", dept: str = "", other: str = "",
               qos: str = "normal") -> str:
    """alice's association with account proj (and one with account other), then the
    account lines; each argument: the six limit fields of that line ('' none); `qos`:
    the QOS her associations may use."""
    def six(fields: str) -> str:
        return fields or "|||||"

    return (f"user|alice\nalice|proj||normal|{qos}||{six(user)}\n"
            f"alice|other|||{qos}||{six(other)}\n"
            f"|proj||||dept|{six(proj)}\n|dept||||root|{six(dept)}\n|root|||||||||||\n")


def kronos(*queue: str, accounts: dict[str, str] | None = None, assoc: str = "",
           alloc: dict[str, int] | None = None, partitions: str = PARTITIONS,
           shares: dict[str, str] | None = None):
    """olympus's nodes and partitions (the fifth sweep's), with the queue's jobs' accounts
    and sharing (`squeue -o '%i|%q|%a|%h'`) and alice's associations `assoc`."""
    shares = shares or {}
    ids = list(dict.fromkeys([*(accounts or {}), *shares]))
    outputs = {"partitions": partitions, "nodes": node_lines(alloc=alloc),
               "queue": "\n".join(queue),
               "queue_qos": "".join(f"{j}|normal|{(accounts or {}).get(j, 'proj')}|"
                                    f"{shares.get(j, 'OK')}\n" for j in ids),
               "qos": "normal||||||||||\n", "assoc": assoc}
    snap = slurm6.parse_snapshot("kronos", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="kronos", metadata={"architecture": "x86_64"}), snap


def test_association_limits_are_read_with_the_accounts_above():
    user, got = parse_assoc(assoc_text(user="cpu=64||||4|cpu=32", proj="|2|10|||",
                                       dept="gres/gpu=8|||||"))
    assert user == "alice"
    mine, other, proj, dept, root = got
    assert (mine.level, mine.account, mine.grp_tres, mine.max_submit_jobs,
            mine.max_tres_per_job) == ("user", "proj", {"cpu": 64}, 4, {"cpu": 32})
    assert (proj.level, proj.parent, proj.grp_jobs, proj.grp_submit_jobs) == \
        ("account", "dept", 2, 10)
    assert dept.grp_tres == {"gres/gpu": 8} and root.parent is None
    # an older recording of five fields still reads, without limits
    _, old = parse_assoc("user|alice\nalice|proj||normal|normal\n")
    assert old[0].grp_tres == {} and old[0].max_jobs is None
    # the jobs' accounts come with their QOS; a `%i|%q` recording has none
    assert parse_job_qos("7|normal|proj\n", field=2) == {"7": "proj"}
    assert parse_job_qos("7|normal\n", field=2) == {}
    _, snap = kronos(running("7", "bob", "n1", 4, 1, 4), accounts={"7": "proj"})
    assert (snap.jobs[0].account, snap.jobs[0].qos) == ("proj", "normal")
    assert "Account:0|" in " ".join(slurm6.snapshot_argvs()["queue_qos"])


def test_the_probe_walks_up_the_accounts(tmp_path):
    # a stand-in sacctmgr answers as a site would: the probe prints alice's lines, then
    # the account lines of proj and other, of dept, of root, and stops there
    fake = tmp_path / "sacctmgr"
    fake.write_text("#!/bin/sh\ncase \"$*\" in\n"
                    "  *user=*) echo 'alice|proj||normal|normal||||||3|';;\n"
                    "  *account=proj*) echo '|proj||||dept||2||||'; echo 'bob|proj||||||||||';;\n"
                    "  *account=dept*) echo '|dept||||root|cpu=512|||||';;\n"
                    "  *account=root*) echo '|root|||||||||||';;\n"
                    "  *) echo unexpected >&2; exit 1;;\nesac\n")
    (tmp_path / "id").write_text("#!/bin/sh\necho alice\n")
    for f in (fake, tmp_path / "id"):
        f.chmod(0o755)
    argv = slurm6.snapshot_argvs()["assoc"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30,
                         env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"})
    user, got = parse_assoc(out.stdout)
    assert user == "alice"
    assert [(a.level, a.account, a.parent) for a in got] == [
        ("user", "proj", None), ("account", "proj", "dept"), ("account", "dept", "root"),
        ("account", "root", None)]
    assert got[0].max_submit_jobs == 3 and got[2].grp_tres == {"cpu": 512}


def test_the_users_association_cpu_limit_in_use_makes_the_job_wait():
    # alice's association (proj): GrpTRES cpu=64. Her jobs hold 48 (ending in 1 h) and 16
    # (3 h); bob's 48 do not count. 8 more CPUs fit once her 48 end: +1 h (AssocGrpCpuLimit)
    site = kronos(running("1", "alice", "n1", 48, 3, 4), running("2", "alice", "n2", 16, 1, 4),
                  running("3", "bob", "n3", 48, 1, 4),
                  accounts={"1": "proj", "2": "proj", "3": "proj"},
                  assoc=assoc_text(user="cpu=64|||||"), alloc={"n1": 48, "n2": 16, "n3": 48})
    p = run("#SBATCH -A proj -c 8 -p compute", site)
    v = only(p, "kronos", "compute")
    assert v.verdict == "BUSY" and v.estimated_start == NOW + timedelta(hours=1)
    assert "kronos waits: your association (user alice, account proj)'s GrpTRES cpu=64 is " \
        "in use: its running jobs hold 64 CPUs, the job needs 8" in p.explain()
    assert p.explain().rstrip().endswith("(AssocGrpCpuLimit)")
    # under account other (no limit) it starts now on n4
    assert run("#SBATCH -A other -c 8 -p compute", site).verdict("kronos").verdict == "READY"


def test_an_account_group_job_limit_counts_every_users_jobs_of_the_account():
    # account proj: GrpJobs=2; bob's and carol's jobs run under proj (ending in 2 h and
    # 4 h); dave's runs under other. alice's job waits for bob's: +2 h (AssocGrpJobsLimit)
    site = kronos(running("1", "bob", "n1", 4, 2, 4), running("2", "carol", "n1", 4, 0, 4),
                  running("3", "dave", "n2", 4, 0, 4),
                  accounts={"1": "proj", "2": "proj", "3": "other"},
                  assoc=assoc_text(proj="|2||||"), alloc={"n1": 8, "n2": 4})
    v = run("#SBATCH -A proj -c 2 -p compute", site).verdict("kronos")
    assert v.estimated_start == NOW + timedelta(hours=2)
    assert has_note(v, "account proj's association's GrpJobs is 2 and 2 of its jobs run: it "
                       "waits until one of them ends (AssocGrpJobsLimit)")


def test_a_parent_accounts_gpu_limit_counts_the_jobs_below_it():
    # dept (above proj): GrpTRES gres/gpu=8; bob's 8 A100 under proj end in 2 h: 2 more
    # GPUs wait for them (AssocGrpGRES), though g3's L40S are idle
    site = kronos(running("1", "bob", "g1", 16, 2, 4, "gpu", gpus=4),
                  running("2", "bob", "g2", 16, 2, 4, "gpu", gpus=4),
                  accounts={"1": "proj", "2": "proj"}, assoc=assoc_text(dept="gres/gpu=8|||||"),
                  alloc={"g1": 16, "g2": 16})
    v = run("#SBATCH -A proj -p gpu --gres=gpu:2", site).verdict("kronos")
    assert v.estimated_start == NOW + timedelta(hours=2)
    assert has_note(v, "account dept's association's GrpTRES gres/gpu=8 is in use") \
        and has_note(v, "(AssocGrpGRES)")


def test_max_jobs_set_on_the_account_holds_each_user_unless_nearer_sets_its_own():
    # proj's account line: MaxJobs=2 (each user); alice runs two under proj (1 h and 3 h
    # left): the third waits +1 h (AssocMaxJobsLimit); bob's jobs are his own
    jobs = (running("1", "alice", "n1", 2, 3, 4), running("2", "alice", "n1", 2, 1, 4),
            running("3", "bob", "n1", 2, 1, 4))
    acc = {"1": "proj", "2": "proj", "3": "proj"}
    v = run("#SBATCH -A proj -p compute", kronos(*jobs, accounts=acc, alloc={"n1": 6},
                                                 assoc=assoc_text(proj="|||2||"))
            ).verdict("kronos")
    assert v.estimated_start == NOW + timedelta(hours=1)
    assert has_note(v, "account proj's association's MaxJobs is 2 and 2 of your jobs run "
                       "under account proj: it waits until one of them ends "
                       "(AssocMaxJobsLimit)")
    # her own association's MaxJobs=5 is nearer: it starts now
    v = run("#SBATCH -A proj -p compute", kronos(*jobs, accounts=acc, alloc={"n1": 6},
            assoc=assoc_text(user="|||5||", proj="|||2||"))).verdict("kronos")
    assert v.verdict == "READY"


def test_submit_limits_of_the_association_refuse_the_job():
    # MaxSubmitJobs=3 on alice's association: two running and one pending of hers under
    # proj: sbatch refuses a fourth (AssocMaxSubmitJobLimit)
    jobs = (running("1", "alice", "n1", 2, 1, 4), running("2", "alice", "n1", 2, 1, 4),
            pending("3", "alice", 2))
    acc = {"1": "proj", "2": "proj", "3": "proj"}
    p = run("#SBATCH -A proj -p compute", kronos(*jobs, accounts=acc, alloc={"n1": 4},
                                                 assoc=assoc_text(user="||||3|")))
    v = p.verdict("kronos")
    assert v.verdict == "RESTRICTED"
    assert "your association (user alice, account proj)'s MaxSubmitJobs is 3 and you have " \
        "3 jobs queued or running under account proj" in reasons(p, "kronos")
    # GrpSubmitJobs=3 on proj counts everyone's (a pending array of 2 tasks is 2)
    jobs = (running("1", "bob", "n1", 2, 1, 4), pending("4_[1-2]", "carol", 2))
    p = run("#SBATCH -A proj -p compute", kronos(*jobs, accounts={"1": "proj", "4_[1-2]": "proj"},
                                                 alloc={"n1": 2}, assoc=assoc_text(proj="||3|||")))
    assert "account proj's association's GrpSubmitJobs is 3 and 3 of its jobs are queued or " \
        "running: the submit is refused until one ends (AssocGrpSubmitJobsLimit)" \
        in reasons(p, "kronos")


def test_a_job_above_an_association_maximum_never_runs():
    # MaxTRES cpu=32 on alice's association: 48 CPUs never start (AssocMaxCpuPerJobLimit);
    # dept's GrpTRES cpu=64: 96 CPUs over two nodes never do either (AssocGrpCpuLimit)
    p = run("#SBATCH -A proj -c 48 -p compute",
            kronos(assoc=assoc_text(user="|||||cpu=32")))
    assert "needs 48 CPUs in all, your association (user alice, account proj) allows 32 a " \
        "job (MaxTRES cpu=32): it would never start (AssocMaxCpuPerJobLimit)" \
        in reasons(p, "kronos")
    p = run("#SBATCH -A proj -N 2 --ntasks-per-node=48 -p compute",
            kronos(assoc=assoc_text(dept="cpu=64|||||")))
    assert "account dept's association allows 64 at once (GrpTRES cpu=64)" \
        in reasons(p, "kronos")
    # the account whose limits hold is the one the job names: under other, it runs
    only(run("#SBATCH -A other -c 48 -p compute", kronos(assoc=assoc_text(user="|||||cpu=32"))),
         "kronos", "compute")


# --------------------------------------------------------------- PBS group, project, server

def pbs_job(jid: str, owner: str, queue: str, ncpus: int, *, group: str = "users",
            project: str | None = None, mem: str | None = None, **kw) -> tuple:
    """A job as `qstat -f -F json` prints it, with its egroup, project and memory."""
    jid_, attrs = _pbs_job(jid, owner, queue, ncpus, **kw)
    attrs["egroup"] = group
    attrs["project"] = project or "_pbs_project_default"
    if mem:
        attrs["Resource_List"]["mem"] = mem
    return jid_, attrs


def lark(*jobs: tuple, group: str | None = "chem", queues: dict | None = None,
         server: dict | None = None):
    """kestrel's nodes (the sixth sweep's PBS Pro site), one queue `workq` (24 h) unless
    `queues` says otherwise, probed as alice of primary group `group`."""
    cfg, snap = kestrel(*jobs, queues=queues or {"workq": {
        "queue_type": "Execution", "enabled": "True", "started": "True",
        "resources_max": {"walltime": "24:00:00"}}}, server=server)
    return cfg, snap.model_copy(update={"group": group})


def _queue(**limits: object) -> dict:
    return {"workq": {"queue_type": "Execution", "enabled": "True", "started": "True",
                      "resources_max": {"walltime": "24:00:00"}, **limits}}


def test_pbs_group_project_server_and_memory_limits_are_read():
    cfg, snap = lark(pbs_job("1", "bob", "workq", 4, group="chem", project="climate",
                             mem="8gb"),
                     queues=_queue(max_run="[g:PBS_GENERIC=3],[g:chem=2]",
                                   max_run_res={"mem": "[u:PBS_GENERIC=256gb]",
                                                "ncpus": "[p:climate=64]"}),
                     server={"max_queued": "[u:PBS_GENERIC=5]", "max_run": "4"})
    got = {(x.attribute, x.resource, x.scope, x.who, x.value, x.on)
           for x in snap.partitions[0].limits}
    assert got == {("max_run", "jobs", "g", "PBS_GENERIC", 3, "queue"),
                   ("max_run", "jobs", "g", "chem", 2, "queue"),
                   ("max_run", "mem", "u", "PBS_GENERIC", 262144, "queue"),
                   ("max_run", "ncpus", "p", "climate", 64, "queue"),
                   ("max_queued", "jobs", "u", "PBS_GENERIC", 5, "server"),
                   ("max_run", "jobs", "o", "PBS_ALL", 4, "server")}
    j = snap.jobs[0]
    assert (j.group, j.account, j.memory_mb) == ("chem", "climate", 8192)
    assert snap.group == "chem"
    assert PbsCommands().snapshot_argvs()["group"] == ["id", "-gn"]


def test_a_pbs_group_limit_counts_the_groups_jobs():
    # workq: max_run [g:PBS_GENERIC=3],[g:chem=2]. bob and carol (group chem) run one job
    # each, ending in 1 h and 3 h; alice is of chem: +1 h. As group phys (its generic 3
    # and no job running), or with -W group_list=phys, it starts now
    jobs = (pbs_job("1", "bob", "workq", 4, group="chem", started_h=3),
            pbs_job("2", "carol", "workq", 4, group="chem", started_h=1))
    q = _queue(max_run="[g:PBS_GENERIC=3],[g:chem=2]")
    v = run("#PBS -l select=1:ncpus=4", lark(*jobs, queues=q)).verdict("kestrel")
    assert v.estimated_start == NOW + timedelta(hours=1)
    assert has_note(v, "queue workq's max_run [g:chem=2]: group chem's running jobs in it "
                       "hold 2 jobs: it waits until enough of them end")
    assert run("#PBS -l select=1:ncpus=4", lark(*jobs, queues=q, group="phys")).verdict(
        "kestrel").estimated_start == NOW
    assert run("#PBS -l select=1:ncpus=4\n#PBS -W group_list=phys",
               lark(*jobs, queues=q)).verdict("kestrel").estimated_start == NOW


def test_a_pbs_project_cpu_limit_holds_only_the_projects_jobs():
    # max_run_res.ncpus [p:climate=64]: climate's running jobs hold 64 CPUs (2 h left);
    # a job of -P climate waits +2 h, one of the default project starts now
    jobs = (pbs_job("1", "bob", "workq", 64, project="climate", started_h=2),)
    q = _queue(max_run_res={"ncpus": "[p:climate=64]"})
    v = run("#PBS -P climate\n#PBS -l select=1:ncpus=8", lark(*jobs, queues=q)).verdict(
        "kestrel")
    assert v.estimated_start == NOW + timedelta(hours=2)
    assert has_note(v, "queue workq's max_run_res.ncpus [p:climate=64]: project climate's "
                       "running jobs in it hold 64 CPUs")
    assert run("#PBS -l select=1:ncpus=8", lark(*jobs, queues=q)).verdict(
        "kestrel").estimated_start == NOW
    # 128 CPUs of climate at once are more than it may ever run
    p = run("#PBS -P climate\n#PBS -l select=2:ncpus=64", lark(queues=q))
    assert reasons(p, "kestrel") == ("needs 128 CPUs, queue workq's max_run_res.ncpus "
                                     "[p:climate=64] allows less running at once")


def test_everyones_gpu_limit_in_brackets():
    # max_run_res.ngpus [o:PBS_ALL=6]: 4 GPUs run (bob, 1 h left): 4 more wait +1 h
    jobs = (pbs_job("1", "bob", "workq", 8, host="k5", ngpus=4, started_h=3),)
    q = _queue(max_run_res={"ngpus": "[o:PBS_ALL=6]"})
    v = run("#PBS -l select=1:ncpus=8:ngpus=4", lark(*jobs, queues=q)).verdict("kestrel")
    assert v.estimated_start == NOW + timedelta(hours=1)
    assert has_note(v, "max_run_res.ngpus [o:PBS_ALL=6]: running jobs in it hold 4 GPUs")


def test_the_servers_own_limits_count_every_queues_jobs():
    # the server: max_queued [u:PBS_GENERIC=3]; alice has two jobs in workq and one in big:
    # qsub refuses a fourth wherever it goes
    q = {**_queue(), "big": {"queue_type": "Execution", "enabled": "True", "started": "True",
                             "resources_max": {"walltime": "48:00:00"}}}
    jobs = (pbs_job("1", "alice", "workq", 4), pbs_job("2", "alice", "workq", 4, state="Q"),
            pbs_job("3", "alice", "big", 4, host="k2"))
    p = run("#PBS -l select=1:ncpus=4", lark(*jobs, queues=q,
                                             server={"max_queued": "[u:PBS_GENERIC=3]"}))
    assert p.verdict("kestrel").verdict == "RESTRICTED"
    assert "the server's max_queued [u:PBS_GENERIC=3]: you have 3 jobs queued or running " \
        "on it and the job adds 1" in reasons(p, "kestrel")
    # the server's max_run = 2 (everyone's): bob's two running jobs (1 h and 2 h left)
    jobs = (pbs_job("4", "bob", "workq", 4, started_h=3), pbs_job("5", "bob", "big", 4,
                                                                 started_h=2, host="k2"))
    v = run("#PBS -l select=1:ncpus=4", lark(*jobs, queues=q, server={"max_run": "2"})
            ).verdict("kestrel")
    assert v.estimated_start == NOW + timedelta(hours=1)
    assert has_note(v, "the server's max_run [o:PBS_ALL=2]: running jobs on it hold 2 jobs")


def test_a_pbs_memory_limit_per_user():
    # max_run_res.mem [u:PBS_GENERIC=256gb]: alice runs 200 GB (2 h left); 100 GB more
    # waits +2 h, 40 GB starts now, 300 GB (two chunks of 150) never runs there
    jobs = (pbs_job("1", "alice", "workq", 4, mem="200gb", started_h=2),)
    q = _queue(max_run_res={"mem": "[u:PBS_GENERIC=256gb]"})
    v = run("#PBS -l select=1:ncpus=4:mem=100gb", lark(*jobs, queues=q)).verdict("kestrel")
    assert v.estimated_start == NOW + timedelta(hours=2)
    assert has_note(v, "max_run_res.mem [u:PBS_GENERIC=262144mb]: your running jobs in it "
                       "hold 204800 MB memory")
    assert run("#PBS -l select=1:ncpus=4:mem=40gb", lark(*jobs, queues=q)).verdict(
        "kestrel").estimated_start == NOW
    assert reasons(run("#PBS -l select=2:ncpus=4:mem=150gb", lark(queues=q)), "kestrel") == (
        "needs 307200 MB memory, queue workq's max_run_res.mem [u:PBS_GENERIC=262144mb] "
        "allows less running at once")


# --------------------------------------------------------------- Torque: its own limits

# wren, a Torque site as its own commands print it (text: Torque has no JSON)
WREN_NODES = "".join(
    f"n0{i}\n     state = {state}\n     power_state = Running\n     np = 16\n"
    f"     properties = compute\n     ntype = cluster\n{jobs}"
    f"     status = opsys=linux,ncpus=16,physmem=65843200kb,availmem=60000000kb,"
    "loadave=0.00\n     mom_service_port = 15002\n     gpus = 0\n\n"
    for i, state, jobs in ((1, "free", "     jobs = 0-3/11.wren,4-7/12.wren\n"),
                           (2, "free", ""), (3, "free", ""), (4, "down", "")))
WREN_QUEUES = """Queue: batch
    queue_type = Execution
    max_user_run = 2
    total_jobs = 2
    resources_max.walltime = 48:00:00
    resources_max.nodes = 2
    resources_default.walltime = 01:00:00
    enabled = True
    started = True

Queue: short
    queue_type = Execution
    max_running = 1
    resources_max.walltime = 01:00:00
    enabled = True
    started = True
"""
WREN_SERVER = """Server: wren
    server_state = Active
    default_queue = batch
    max_user_queuable = 3
    scheduling = True
"""


def _torque_job(jid: str, owner: str, queue: str, state: str, started_h: float,
                host: str = "n01/0-3") -> str:
    start = int((NOW - timedelta(hours=started_h)).timestamp())
    run_ = f"<exec_host>{host}</exec_host><start_time>{start}</start_time>" \
        if state == "R" else ""
    return (f"<Job><Job_Id>{jid}.wren</Job_Id><Job_Name>j{jid}</Job_Name><Job_Owner>{owner}"
            f"@login</Job_Owner><job_state>{state}</job_state><queue>{queue}</queue>"
            f"<egroup>users</egroup><qtime>{start - 60}</qtime><Resource_List><nodes>1:ppn=4"
            f"</nodes><nodect>1</nodect><walltime>04:00:00</walltime></Resource_List>{run_}"
            "</Job>")


def wren(*jobs: str, server: str = WREN_SERVER):
    outputs = {"nodes": WREN_NODES, "queues": WREN_QUEUES, "server": server,
               "queue": f"<Data>{''.join(jobs)}</Data>", "user": "alice\n", "group": "users\n"}
    torque = PbsCommands(flavor="torque", tz=timezone.utc)
    snap = torque.parse_snapshot("wren", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="wren", scheduler="pbs", flavor="torque"), snap


def test_torque_sites_are_read_with_their_nodes_queues_and_limits():
    argvs = PbsCommands(flavor="torque").snapshot_argvs()
    assert argvs["queues"] == ["qstat", "-Q", "-f"] and argvs["nodes"] == ["pbsnodes", "-a"]
    _, snap = wren()
    n1 = next(n for n in snap.nodes if n.name == "n01")
    assert (n1.cpus, n1.cpus_allocated, n1.memory_mb) == (16, 8, 64300)
    parts = {p.name: p for p in snap.partitions}
    assert parts["batch"].default and parts["batch"].max_nodes == 2
    assert parts["batch"].max_time_s == 48 * H and parts["short"].max_running == 1
    assert {(x.attribute, x.scope, x.who, x.value, x.on) for x in parts["batch"].limits} == {
        ("max_run", "u", "PBS_GENERIC", 2, "queue"),
        ("max_queued", "u", "PBS_GENERIC", 3, "server")}


def test_torque_max_user_run_makes_the_users_third_job_wait():
    # batch: max_user_run = 2; alice runs two jobs there (ending in 1 h and 3 h): +1 h
    site = wren(_torque_job("11", "alice", "batch", "R", 3),
                _torque_job("12", "alice", "batch", "R", 1, host="n01/4-7"))
    v = only(run("#PBS -q batch\n#PBS -l nodes=1:ppn=4,walltime=2:00:00", site), "wren",
             "batch")
    assert v.estimated_start == NOW + timedelta(hours=1)
    assert has_note(v, "queue batch's max_run [u:PBS_GENERIC=2]: your running jobs in it "
                       "hold 2 jobs")
    # bob's jobs do not count against her
    site = wren(_torque_job("11", "bob", "batch", "R", 3),
                _torque_job("12", "bob", "batch", "R", 1, host="n01/4-7"))
    assert run("#PBS -q batch\n#PBS -l nodes=1:ppn=4,walltime=2:00:00", site).verdict(
        "wren").estimated_start == NOW


def test_torque_server_max_user_queuable_refuses_the_submit():
    site = wren(_torque_job("11", "alice", "batch", "R", 3),
                _torque_job("12", "alice", "short", "Q", 0),
                _torque_job("13", "alice", "batch", "Q", 0))
    p = run("#PBS -l nodes=1:ppn=4,walltime=0:30:00", site)
    assert p.verdict("wren").verdict == "RESTRICTED"
    assert "the server's max_queued [u:PBS_GENERIC=3]: you have 3 jobs queued or running " \
        "on it" in reasons(p, "wren")
    # three nodes up (n04 is down): nodes=3 is above batch's resources_max.nodes
    assert "needs 3 nodes, queue batch allows at most 2" in reasons(
        run("#PBS -q batch\n#PBS -l nodes=3:ppn=4", wren()), "wren")


# --------------------------------------------------------------- LSF: JL/U and blimits

# heron, an LSF site as the probe reads it: h1-h4 32 CPUs 256 GB; queues normal (24 h, the
# default) and long (7 days); `bqueues -l` gives normal a JL/U of 32 slots
HERON_BQUEUES_L = """QUEUE: normal
  -- For normal jobs

PARAMETERS/STATISTICS
PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV PJOBS
 30   20  Open:Active       -   32    -    -    24     0    24     0     0    0     0
Interval for a host to accept two jobs is 0 seconds

QUEUE: long
  -- For long jobs

PARAMETERS/STATISTICS
PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV PJOBS
 20   20  Open:Active       -    -    -    -     0     0     0     0     0    0     0
"""
HERON_BLIMITS = """INTERNAL RESOURCE LIMITS:

NAME            USERS       QUEUES      HOSTS       PROJECTS    SLOTS   MEM      TMP  SWP  JOBS
gpu_team        ug_ml/      long        -           -           40/48   -        -    -    -
per_proj        -           -           -           climate     -       -        -    -    3/3
"""


def _bjob(jid: str, user: str, queue: str, slots: int, started_h: float, limit_h: int = 4,
          host: str = "h1") -> dict:
    def t(hours: float) -> str:
        return (NOW + timedelta(hours=hours)).strftime("%b %d %H:%M:%S %Y")
    return {"JOBID": jid, "STAT": "RUN", "USER": user, "QUEUE": queue, "JOB_NAME": f"j{jid}",
            "SUBMIT_TIME": t(-started_h - 1), "START_TIME": t(-started_h), "SLOTS": str(slots),
            "EXEC_HOST": host, "RUNTIMELIMIT": f"{limit_h * 60}.0/{host}"}


def heron(*jobs: dict, limits: str | None = HERON_BLIMITS, user: str = "alice",
          gpus: dict[str, int] | None = None):
    import json

    hosts = {"RECORDS": [{"HOST_NAME": f"h{i}", "STATUS": "ok", "MAX": "32", "NJOBS": "0",
                          "RUN": "0"} for i in range(1, 5)]}
    lshosts = {"RECORDS": [{"HOST_NAME": f"h{i}", "type": "X86_64", "model": "EPYC",
                            "ncpus": "32", "maxmem": "256G", "RESOURCES": "",
                            "NGPUS": str((gpus or {}).get(f"h{i}", 0))}
                           for i in range(1, 5)]}
    queues = {"RECORDS": [{"QUEUE_NAME": "normal", "STATUS": "Open:Active", "MAX": "-",
                           "RUNLIMIT": "1440.0 min"},
                          {"QUEUE_NAME": "long", "STATUS": "Open:Active", "MAX": "-",
                           "RUNLIMIT": "10080.0 min"}]}
    outputs = {"hosts": json.dumps(hosts), "lshosts": json.dumps(lshosts),
               "queues": json.dumps(queues), "queue": json.dumps({"RECORDS": list(jobs)}),
               "user_groups": "GROUP_NAME    USERS\nug_ml      alice dave\n",
               "user": f"{user}\n", "queue_long": HERON_BQUEUES_L,
               **({"limits": limits} if limits is not None else {})}
    snap = LsfCommands(tz=timezone.utc).parse_snapshot("heron", outputs)
    snap = snap.model_copy(update={"taken_at": NOW})
    snap.partitions[0].default = True
    return SiteConfig(name="heron", scheduler="lsf"), snap


def test_lsf_jl_u_and_blimits_are_read():
    _, snap = heron()
    assert {p.name: p.max_slots_per_user for p in snap.partitions} == {"normal": 32,
                                                                      "long": None}
    assert [(x.name, x.users, x.queues, x.projects, x.resource, x.used, x.limit)
            for x in snap.lsf_limits] == [
        ("gpu_team", ["ug_ml/"], ["long"], None, "slots", 40, 48),
        ("per_proj", None, None, ["climate"], "jobs", 3, 3)]
    argvs = LsfCommands().snapshot_argvs()
    assert "bqueues -l" in argvs["queue_long"][-1] and "blimits" in argvs["limits"][-1]
    assert "limits" in LsfCommands.live_outputs
    assert heron(limits=None)[1].lsf_limits is None  # not asked: not known


def test_lsf_jl_u_holds_the_users_running_slots_in_the_queue():
    # normal: JL/U 32; alice's jobs there hold 24 slots (16 end in 1 h, 8 in 3 h): 16 more
    # wait +1 h; 8 start now; 40 never run in normal, so the engine takes long
    site = heron(_bjob("1", "alice", "normal", 16, 3), _bjob("2", "alice", "normal", 8, 1,
                                                            host="h2"), limits=None)
    v = run("#BSUB -q normal\n#BSUB -n 16\n#BSUB -R span[hosts=1]", site).verdict("heron")
    assert v.estimated_start == NOW + timedelta(hours=1)
    assert has_note(v, "queue normal's JL/U is 32 slots and your running jobs in it hold 24")
    assert run("#BSUB -q normal\n#BSUB -n 8", site).verdict("heron").estimated_start == NOW
    p = run("#BSUB -q normal\n#BSUB -n 40", site)
    assert reasons(p, "heron") == ("needs 40 slots, queue normal's JL/U allows 32 slots of a "
                                   "user's running jobs at once")
    assert only(run("#BSUB -n 40", site), "heron", "long").estimated_start == NOW


def test_lsf_blimits_of_a_user_group_in_a_queue():
    # gpu_team: ug_ml/ (alice is in it) may hold 48 slots in long, 40 in use (dave's 40,
    # ending in 2 h): 16 more wait +2 h; as bob (not in ug_ml) it starts now
    jobs = (_bjob("5", "dave", "long", 32, 2, host="h3"), _bjob("6", "dave", "long", 8, 2,
                                                                  host="h4"))
    v = run("#BSUB -q long\n#BSUB -n 16", heron(*jobs)).verdict("heron")
    assert v.estimated_start == NOW + timedelta(hours=2)
    assert has_note(v, "limit gpu_team (lsb.resources, blimits): 40 of its 48 slots are in "
                       "use and the job needs 16")
    assert run("#BSUB -q long\n#BSUB -n 16", heron(*jobs, user="bob")).verdict(
        "heron").estimated_start == NOW
    assert "needs 64 slots, limit gpu_team (lsb.resources, blimits) allows 48" in reasons(
        run("#BSUB -q long\n#BSUB -n 64", heron(*jobs)), "heron")


def test_lsf_blimits_of_a_project():
    # per_proj: project climate runs 3 jobs at most, 3 do: a job of -P climate waits, one
    # of no project starts now
    jobs = (_bjob("7", "bob", "normal", 1, 3), _bjob("8", "bob", "normal", 1, 2),
            _bjob("9", "bob", "normal", 1, 1))
    v = run("#BSUB -P climate\n#BSUB -n 1", heron(*jobs)).verdict("heron")
    assert v.verdict == "BUSY" and v.estimated_start > NOW
    assert has_note(v, "limit per_proj (lsb.resources, blimits): 3 of its 3 jobs are in use")
    assert run("#BSUB -n 1", heron(*jobs)).verdict("heron").estimated_start == NOW


# --------------------------------------------------------------- OverSubscribe=YES:N

# olympus's partitions with compute (the first) of OverSubscribe=YES:2
YES2 = PARTITIONS.replace(
    "Hidden=NO OverSubscribe=NO PreemptMode=OFF State=UP TotalCPUs=192 TotalNodes=4",
    "Hidden=NO OverSubscribe=YES:2 PreemptMode=OFF State=UP TotalCPUs=192 TotalNodes=4", 1)


def test_oversubscribe_yes_shares_cpus_only_with_jobs_that_asked():
    # compute: OverSubscribe=YES:2. n1-n4 are full (48 CPUs each, 2 h left); n2's job
    # asked --oversubscribe (squeue %h YES), the others hold theirs (OK). A job of 8 CPUs
    # with --oversubscribe starts now on n2 (2 x 48 - 48 = 48 left to share); without it,
    # or where no running job shares, it waits +2 h
    assert "OverSubscribe=YES:2" in YES2
    jobs = [running(str(i), "bob", f"n{i}", 48, 2, 4) for i in range(1, 5)]
    full = {f"n{i}": 48 for i in range(1, 5)}
    site = kronos(*jobs, partitions=YES2, alloc=full, shares={"2": "YES"})
    assert next(j for j in site[1].jobs if j.native_id == "2").shares is True
    v = run("#SBATCH -p compute -c 8 -s", site).verdict("kronos")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert has_note(v, "partition compute: it starts now on n2, sharing CPUs with the jobs "
                       "there that share theirs (OverSubscribe=YES:2 and --oversubscribe)")
    v = run("#SBATCH -p compute -c 8", site).verdict("kronos")
    assert v.estimated_start == NOW + timedelta(hours=2)
    nobody = kronos(*jobs, partitions=YES2, alloc=full)
    v = run("#SBATCH -p compute -c 8 --oversubscribe", nobody).verdict("kronos")
    assert v.estimated_start == NOW + timedelta(hours=2)


# --------------------------------------------------------------- more sites, every scheduler
# hera (the first sweep's): c01-c02 32 CPUs 128000 MB (cpu, debug); c03-c04 128 CPUs
# 512000 MB avx512 (cpu); g01-g02 64 CPUs 256000 MB 4 A100 (gpu); v01 32 CPUs 192000 MB
# 2 V100 (gpu). cpu: default, 48 h, at most 4 nodes; debug: 30 min, 1 node; gpu: 24 h.

@pytest.mark.parametrize("ask", ["--gpus=a100:2", "--gres=gpu:a100:2",
                                 "--constraint=a100 --gres=gpu:2"])
def test_three_spellings_of_two_a100_land_on_an_a100_node(ask):
    v = only(run(f"#SBATCH {ask} -t 1:00:00"), "hera", "gpu")
    assert v.verdict == "READY"


def test_a_gpu_type_count_above_its_nodes_wants_more_nodes_than_there_are():
    # --gpus=v100:4 (the job's total, no node count): v01 holds 2, so Slurm needs 2 nodes
    # of V100 and hera has one
    p = run("#SBATCH --gpus=v100:4 -t 1:00:00")
    assert "needs 2 nodes, partition gpu has only 1 that can run it (others: no GPU of type " \
        "'v100' (its nodes have: a100))" in reasons(p, "hera")


def test_gpus_per_node_over_nodes_of_mixed_gpu_counts():
    # 2 GPUs on each of 3 nodes: g01, g02 (4 each) and v01 (2) all hold 2: READY in gpu
    only(run("#SBATCH -N 3 --gpus-per-node=2 -t 1:00:00"), "hera", "gpu")
    # 4 on each of 3: v01 holds 2, so only 2 nodes can
    p = run("#SBATCH -N 3 --gpus-per-node=4 -t 1:00:00")
    assert "needs 3 nodes, partition gpu has only 2 that can run it" in reasons(p, "hera")
    # typed: 2 A100 on each of 3 nodes: two A100 nodes only
    p = run("#SBATCH -N 3 --gpus-per-node=a100:2 -t 1:00:00")
    assert "needs 3 nodes, partition gpu has only 2 that can run it (others: no GPU of type " \
        "'a100' (its nodes have: v100))" in reasons(p, "hera")


def test_memory_per_gpu_times_four_against_the_a100_nodes():
    # 4 x 60 GB = 245760 MB fits g01's 256000 MB; 4 x 80 GB = 327680 MB fits no node
    only(run("#SBATCH --gpus-per-node=4 --mem-per-gpu=60G -t 1:00:00"), "hera", "gpu")
    p = run("#SBATCH --gpus-per-node=4 --mem-per-gpu=80G -t 1:00:00")
    assert p.choice is None and "327680 MB" in reasons(p, "hera")


@pytest.mark.parametrize("state, why", [
    ("drain", "others drained g01"), ("down", "others down g01"),
    ("maint", "others in maintenance: g01"),
    ("reserved", "others in a reservation the job is not in: g01")])
def test_a100_nodes_held_out_leave_one_for_a_two_node_job(state, why):
    # g01 out of service: 2 nodes of 4 A100 have only g02 to run on; the reason says why
    site = hera(states={"g01": state})
    p = run("#SBATCH -N 2 --gres=gpu:a100:4 -t 1:00:00", site)
    assert f"needs 2 nodes, partition gpu has only 1 usable ({why})" in reasons(p, "hera")
    one = run("#SBATCH -N 1 --gres=gpu:a100:4 -t 1:00:00", site).verdict("hera")
    assert one.verdict == "READY"  # g02 is free


def test_a_mixed_node_with_room_starts_the_job_now_an_allocated_one_does_not():
    jobs = [busy("21", "c03", 2, 64, "cpu"), busy("22", "c04", 3, 128, "cpu")]
    site = hera(jobs=jobs, alloc={"c03": (64, 0), "c04": (128, 0)},
                states={"c03": "mixed", "c04": "allocated"})
    v = only(run("#SBATCH -c 64 -p cpu -t 1:00:00", site), "hera", "cpu")
    assert v.verdict == "READY"  # c03 has 64 free
    v = run("#SBATCH -c 100 -p cpu -t 1:00:00", site).verdict("hera")
    assert v.estimated_start == NOW + timedelta(hours=2)  # c03's 64 free after 2 h


def test_nodelist_and_exclude_bind_the_job():
    v = only(run("#SBATCH --nodelist=c03 -c 64 -t 1:00:00"), "hera", "cpu")
    assert v.verdict == "READY"
    p = run("#SBATCH --nodelist=g01 -p cpu -t 1:00:00")
    assert "partition cpu does not hold node(s) g01 named by --nodelist" in reasons(p, "hera")
    # the 128-CPU nodes excluded: 64 CPUs on one node fit nowhere else in cpu. Before, the
    # reason was "no single node meets all the requirements together"
    p = run("#SBATCH --exclude=c03,c04 -c 64 -p cpu -t 1:00:00")
    assert reasons(p, "hera") == ("partition cpu: needs 64 CPUs per node, largest node has "
                                  "32; --exclude takes c03, c04")


def test_a_partition_list_picks_one_partition_never_both():
    # 5 nodes: cpu holds 4 (at most 4), gpu 3: together 7, but a job runs in one
    p = run("#SBATCH -N 5 -p cpu,gpu -t 1:00:00")
    assert p.choice is None
    # 3 nodes of 16 CPUs: cpu (c01-c04) and gpu (3 nodes) could both run it alone;
    # both start now: the site's default partition wins the tie
    assert reasons(p, "hera") == ("needs 5 nodes, partition cpu allows at most 4 | needs 5 "
                                  "nodes, partition gpu has only 3")
    only(run("#SBATCH -N 3 --ntasks-per-node=16 -p cpu,gpu -t 1:00:00"), "hera", "cpu")


def test_max_nodes_max_time_and_time_min_of_the_debug_partition():
    assert "partition debug allows at most 1" in reasons(
        run("#SBATCH -N 2 -p debug -t 0:10:00"), "hera")
    assert "above partition debug MaxTime" in reasons(
        run("#SBATCH -p debug -t 1:00:00"), "hera")
    v = only(run("#SBATCH -p debug -t 1:00:00 --time-min=0:20:00"), "hera", "debug")
    assert has_note(v, "time limit cut to --time-min 0:20:00")


def test_a_qos_the_partition_does_not_allow():
    cfg, snap = hera()
    gpu = next(p for p in snap.partitions if p.name == "gpu")
    gpu.allowed_qos = ["gpuq"]
    p = run("#SBATCH -p gpu --qos=normal --gres=gpu:1 -t 1:00:00", (cfg, snap))
    assert p.verdict("hera").verdict == "RESTRICTED"
    assert "QOS 'normal' not allowed in partition 'gpu' (allowed: gpuq)" in reasons(p, "hera")
    only(run("#SBATCH -p gpu --qos=gpuq --gres=gpu:1 -t 1:00:00", (cfg, snap)), "hera", "gpu")


def test_a_powered_down_cloud_node_boots_for_the_job():
    # olympus's cloud partition: c1-c2 powered down (IDLE+CLOUD+POWERED_DOWN); a job
    # there waits for its node's boot (planned within ResumeTimeout), said
    cfg, snap = kronos()
    v = only(run("#SBATCH -p cloud -c 16 -t 1:00:00", (cfg, snap)), "kronos", "cloud")
    assert any("boot" in n for n in v.notes), v.notes


# PBS: cpu1 4 CPUs 16000 MB; gpu1, gpu2 2 CPUs 16000 MB 1 V100 each; queue workq

def test_pbs_select_with_host_and_vnode():
    only(run("#PBS -l select=1:ncpus=2:host=gpu1", pbs_site()), "pbs", "workq")
    only(run("#PBS -l select=1:ncpus=1:vnode=gpu2", pbs_site()), "pbs", "workq")
    # before, the host a chunk names was not read: these ran on cpu1
    assert reasons(run("#PBS -l select=1:ncpus=4:host=gpu1", pbs_site()), "pbs") == (
        "host gpu1 named by the select: needs 4 ncpus per vnode, largest vnode has 2")
    assert reasons(run("#PBS -l select=1:ncpus=1:vnode=cpu9", pbs_site()), "pbs") == (
        "host cpu9 named by the select (host=/vnode=) is not one of the site's nodes "
        "(cpu1, gpu1, gpu2)")
    # two chunks on gpu1 (2 CPUs): 2 x 1 fit, 2 x 2 do not
    only(run("#PBS -l select=2:ncpus=1:host=gpu1", pbs_site()), "pbs", "workq")
    assert run("#PBS -l select=2:ncpus=2:host=gpu1", pbs_site()).choice is None
    # a chunk of a GPU on cpu1 (no GPU), beside one of 4 CPUs
    assert reasons(run("#PBS -l select=1:ncpus=4+1:ncpus=1:ngpus=1:host=cpu1", pbs_site()),
                   "pbs") == ("chunk 2 (1:ncpus=1:ngpus=1:host=cpu1): host cpu1 named by the "
                              "chunk: no GPUs on any node")


def test_pbs_place_pack_on_hosts_too_small():
    # pack: every chunk on one host. 2 x 2 CPUs fit cpu1 (4); 2 x 3 fit no host
    only(run("#PBS -l select=2:ncpus=2\n#PBS -l place=pack", pbs_site()), "pbs", "workq")
    p = run("#PBS -l select=2:ncpus=3\n#PBS -l place=pack", pbs_site())
    assert reasons(p, "pbs") == "needs 6 ncpus per vnode (select=2:ncpus=3, place=pack), " \
        "largest vnode has 4"
    # scatter: one chunk a host: 3 chunks of 2 CPUs over cpu1, gpu1, gpu2
    only(run("#PBS -l select=3:ncpus=2\n#PBS -l place=scatter", pbs_site()), "pbs", "workq")


# LSF: heron h1-h4 32 CPUs

def test_lsf_ptile_on_hosts_of_32():
    # -n 48 with ptile=24: 2 hosts of 24; ptile=40 above every host's 32
    only(run("#BSUB -n 48\n#BSUB -R \"span[ptile=24]\"", heron(limits=None)), "heron")
    p = run("#BSUB -n 48\n#BSUB -R \"span[ptile=40]\"", heron(limits=None))
    assert "needs 40 slots per host, largest host has 32" in reasons(p, "heron")
    # span[hosts=1]: all 48 on one host: none has 48
    p = run("#BSUB -n 48\n#BSUB -R \"span[hosts=1]\"", heron(limits=None))
    assert p.choice is None


# Grid Engine: s1-s4 16 slots 64000 MB, all.q, PEs smp and mpi

def sge4():
    from test_placement_cases import _node

    nodes = [_node(f"s{i}", 16, 64000, ["all.q"]) for i in range(1, 5)]
    from diamond_jupyter.model import Partition, SiteSnapshot
    return (SiteConfig(name="sge", scheduler="sge"),
            SiteSnapshot(site="sge", taken_at=NOW, nodes=nodes, parallel_environments=["smp"],
                         pe_rules={"smp": "$pe_slots"},
                         partitions=[Partition(name="all.q", default=True,
                                               nodes=[n.name for n in nodes])]))


def test_grid_engine_smp_above_a_hosts_slots():
    # smp ($pe_slots): every slot on one host of 16
    only(run("#$ -pe smp 16\n#$ -l h_rt=1:00:00", sge4()), "sge", "all.q")
    assert reasons(run("#$ -pe smp 24\n#$ -l h_rt=1:00:00", sge4()), "sge").startswith(
        "needs 24")


def test_grid_engine_h_vmem_is_per_slot():
    # h_vmem=4G x 16 slots = 64 GB: above s1's 64000 MB (65536 MB asked); 3G x 16 fits
    p = run("#$ -pe smp 16\n#$ -l h_vmem=4G\n#$ -l h_rt=1:00:00", sge4())
    assert p.choice is None and "65536 MB" in reasons(p, "sge")
    only(run("#$ -pe smp 16\n#$ -l h_vmem=3G\n#$ -l h_rt=1:00:00", sge4()), "sge")


# Flux: f0-f3 16 cores 64000 MB, 1 A100 each, no partitions

def flux4():
    from test_placement_cases import _node

    from diamond_jupyter.model import SiteSnapshot
    nodes = [_node(f"f{i}", 16, 64000, [], gpus=1, gtype="a100") for i in range(4)]
    return (SiteConfig(name="flux", scheduler="flux"),
            SiteSnapshot(site="flux", taken_at=NOW, nodes=nodes))


def test_flux_nodes_and_tasks_on_its_resource_set():
    # -N 2 -n 8: 4 tasks a node, 1 core each: READY; -N 2 -n 8 -c 8: 32 cores a node
    only(run("#flux: -N 2\n#flux: -n 8", flux4()), "flux", None)
    assert "needs 32 cores per node (4 tasks x 8 cores), largest node has 16" in reasons(
        run("#flux: -N 2\n#flux: -n 8\n#flux: -c 8", flux4()), "flux")
    # -N 5: four nodes only
    assert "needs 5 nodes" in reasons(run("#flux: -N 5\n#flux: -n 5", flux4()), "flux")


def test_lsf_select_on_host_fields_picks_the_hosts_that_meet_it():
    # h3-h4 hold 2 GPUs each: select[ngpus>0] keeps the job to them (before, the term was
    # ignored and the job went to h1); none of heron's hosts holds 4
    site = heron(limits=None, gpus={"h3": 2, "h4": 2})
    jobs_on = heron(_bjob("1", "bob", "normal", 32, 1, host="h3"),
                    _bjob("2", "bob", "normal", 32, 3, host="h4"), limits=None,
                    gpus={"h3": 2, "h4": 2})
    assert only(run("#BSUB -n 4\n#BSUB -R \"select[ngpus>0]\"", site), "heron").verdict \
        == "READY"
    # h1 and h2 are idle, but the GPU hosts are full: +1 h, when bob's job on h3 ends
    v = run("#BSUB -n 4\n#BSUB -R \"select[ngpus>0]\"", jobs_on).verdict("heron")
    assert v.estimated_start == NOW + timedelta(hours=1)
    assert reasons(run("#BSUB -n 4\n#BSUB -R \"select[ngpus>=4]\"", site), "heron") == (
        "no host meets select[ngpus>=4] that can run it (hosts: h1, h2, h3, h4)")
    # memory and type terms, an alternative, and a term this code cannot tell (noted)
    only(run("#BSUB -n 4\n#BSUB -R \"select[maxmem>200000 && type==X86_64]\"", site),
         "heron")
    assert reasons(run("#BSUB -n 4\n#BSUB -R \"select[maxmem>300000]\"", site), "heron") \
        .startswith("no host meets select[maxmem>300000]")
    only(run("#BSUB -n 4\n#BSUB -R \"select[ngpus>2 || maxmem>200000]\"", site), "heron")
    # a term lshosts does not give (since the eighth sweep, model is read: tests 8)
    v = only(run("#BSUB -n 4\n#BSUB -R \"select[swp>1000]\"", site), "heron")
    assert any(n.startswith("select[] term 'swp>1000': ") for n in v.not_checked), \
        v.not_checked


def test_grid_engine_h_vmem_times_the_slots_each_host_gets_by_the_pe_rule():
    # s1-s4: 16 slots, 64000 MB. h_vmem is per slot: a host holds the slots its rule puts
    # there times it. $fill_up spreads 40 slots of 4G where memory lets 15 a host: READY;
    # a fixed rule of 4 slots a host at 16G (65536 MB) fits no host, at 15G it does;
    # $round_robin puts 2 of 8 slots on each host (2 x 8G)
    cfg, snap = sge4()
    snap.pe_rules = {"smp": "$pe_slots", "mpi": "$fill_up", "rr": "$round_robin", "four": "4"}
    snap.parallel_environments = ["smp", "mpi", "rr", "four"]
    site = (cfg, snap)
    only(run("#$ -pe mpi 40\n#$ -l h_vmem=4G", site), "sge", "all.q")
    assert reasons(run("#$ -pe four 12\n#$ -l h_vmem=16G", site), "sge") == (
        "needs 65536 MB memory per host, largest host has 64000 MB")
    only(run("#$ -pe four 12\n#$ -l h_vmem=15G", site), "sge", "all.q")
    only(run("#$ -pe rr 8\n#$ -l h_vmem=8G", site), "sge", "all.q")
    assert reasons(run("#$ -pe mpi 65", site), "sge").startswith("needs 5 hosts (65 tasks, 16 "
                                                                 "to a host)")


def test_flux_gpus_per_task_over_nodes_of_one_gpu():
    # -g is per task: -N 2 -n 4 -g 1 puts 2 tasks, 2 GPUs, on nodes of 1; -n 4 -g 1 takes
    # 4 nodes (one task each), -n 5 -g 1 five, one more than the site has
    assert reasons(run("#flux: -N 2\n#flux: -n 4\n#flux: -g 1", flux4()), "flux") == (
        "needs 2 GPUs per node, largest node has 1")
    only(run("#flux: -n 4\n#flux: -g 1", flux4()), "flux", None)
    assert reasons(run("#flux: -n 5\n#flux: -g 1", flux4()), "flux").startswith(
        "needs 5 nodes (5 tasks, 1 to a node)")


def test_exclusive_waits_for_a_node_to_empty_on_a_mixed_partition():
    # every cpu node runs a 4-CPU job (c01, c02 2 h left, c03 1 h, c04 3 h): --exclusive
    # takes a whole node, the first to empty (c03, +1 h); two avx512 nodes need c04 too
    jobs = [busy("1", "c01", 2, 4, "cpu"), busy("2", "c02", 2, 4, "cpu"),
            busy("3", "c03", 1, 4, "cpu"), busy("4", "c04", 3, 4, "cpu")]
    site = hera(jobs=jobs, alloc={n: (4, 0) for n in ("c01", "c02", "c03", "c04")})
    v = run("#SBATCH --exclusive -p cpu -N 1 -t 1:00:00", site).verdict("hera")
    assert v.estimated_start == NOW + timedelta(hours=1)
    v = run("#SBATCH --exclusive -p cpu -N 2 -C avx512 -t 1:00:00", site).verdict("hera")
    assert v.estimated_start == NOW + timedelta(hours=3)
    # without --exclusive 4 CPUs start now beside them
    assert run("#SBATCH -p cpu -c 4 -t 1:00:00", site).verdict("hera").verdict == "READY"


def test_the_latest_of_a_qos_and_an_association_limit_holds():
    # QOS few: MaxJobsPerUser=2, alice runs 2 under it (30 min and 2 h left); her
    # association's MaxJobs=3 allows a third now: the QOS holds her until +30 min. With
    # MaxJobs=1 on the association, it waits until both of hers end: +2 h
    jobs = (running("21", "alice", "n1", 2, 3.5, 4), running("22", "alice", "n1", 2, 2, 4))
    acc = {"21": "proj", "22": "proj"}
    qos = "few||||||3||2|\nnormal||||||||||\n"
    outputs = {"partitions": PARTITIONS, "nodes": node_lines(alloc={"n1": 4}),
               "queue": "\n".join(jobs),
               "queue_qos": "".join(f"{j}|few|{a}|OK\n" for j, a in acc.items()),
               "qos": qos, "assoc": assoc_text(user="|||3||", qos="normal,few")}
    snap = slurm6.parse_snapshot("k", outputs).model_copy(update={"taken_at": NOW})
    site = (SiteConfig(name="k", metadata={"architecture": "x86_64"}), snap)
    v = run("#SBATCH -A proj -q few -c 2 -p compute", site).verdict("k")
    assert v.estimated_start == NOW + timedelta(minutes=30)
    assert any("(QOSMaxJobsPerUserLimit)" in w for w in v.waits_for)
    assert not any("Assoc" in w for w in v.waits_for)
    outputs["assoc"] = assoc_text(user="|||1||", qos="normal,few")  # until both end: +2 h
    snap = slurm6.parse_snapshot("k", outputs).model_copy(update={"taken_at": NOW})
    v = run("#SBATCH -A proj -q few -c 2 -p compute", (site[0], snap)).verdict("k")
    assert v.estimated_start == NOW + timedelta(hours=2)
    assert any("(AssocMaxJobsLimit)" in w for w in v.waits_for)


def test_gpu_options_that_spread_tasks_over_a100_nodes():
    # 6 tasks of a GPU each: 4 on g01 and 2 on g02 (gpu); 6 A100 at 16 CPUs a GPU: at most
    # 64 CPUs on a node of 4 (g01 has 64): READY; 8 A100 at 20 CPUs a GPU: 80 CPUs on each
    # of two A100 nodes of 64: none
    only(run("#SBATCH --gpus-per-task=1 -n 6 -t 1:00:00"), "hera", "gpu")
    only(run("#SBATCH --cpus-per-gpu=16 --gpus=a100:6 -t 1:00:00"), "hera", "gpu")
    p = run("#SBATCH --cpus-per-gpu=20 --gpus=a100:8 -t 1:00:00")
    assert reasons(p, "hera").startswith("no single node meets all the requirements "
                                         "together (GPU a100 on g01, g02; 4 GPUs on g01, g02;"
                                         " 80 CPUs on c03, c04)")
    # 2 V100 and 40 CPUs: v01 holds the GPUs but 32 CPUs
    assert "GPU v100 on v01" in reasons(
        run("#SBATCH -p gpu --gpus-per-node=v100:2 -N 1 -c 40 -t 1:00:00"), "hera")


def test_a_node_count_range_takes_its_least():
    # -N 2-4 with 100 CPUs a node: c03 and c04 (128) are two: READY; -N 3-4: three nodes
    # of 100 are more than cpu has
    only(run("#SBATCH -N 2-4 -p cpu -c 100 -t 1:00:00"), "hera", "cpu")
    assert reasons(run("#SBATCH -N 3-4 -p cpu -c 100 -t 1:00:00"), "hera") == (
        "needs 3 nodes, partition cpu has only 2 that can run it (others: needs 100 CPUs per "
        "node, largest node has 32)")


def test_torque_nodes_ppn_on_wren():
    # batch holds 2 nodes a job (resources_max.nodes); 3 go to short (1 h), whose one
    # running slot (max_running) and n04 down leave the job to wait; 70 GB is above every
    # node's 64300 MB; 72 h above every queue's limit
    only(run("#PBS -l nodes=2:ppn=16,walltime=1:00:00", wren()), "wren", "batch")
    v = only(run("#PBS -l nodes=3:ppn=16,walltime=1:00:00", wren()), "wren", "short")
    assert has_note(v, "needs 3 nodes, queue batch allows at most 2")
    v = run("#PBS -l nodes=1:ppn=16,walltime=0:30:00\n#PBS -q short",
            wren(_torque_job("13", "bob", "short", "R", 0.5, host="n02/0-3"))).verdict("wren")
    assert v.estimated_start == NOW + timedelta(hours=3.5)  # bob's 4 h job ends then
    assert any("queue short runs at most 1 job at once (max_run)" in w for w in v.waits_for)
    assert reasons(run("#PBS -l nodes=1:ppn=4,mem=70gb", wren()), "wren") == (
        "needs 71680 MB memory per node, largest node has 64300 MB")
    assert reasons(run("#PBS -l nodes=1:ppn=4,walltime=72:00:00", wren()), "wren") == (
        "walltime 3-00:00:00 above every queue's resources_max.walltime here (the "
        "longest: batch, "
        "2-00:00:00)")



def test_pbs_exclusive_placement_waits_for_an_empty_host():
    # every host runs a 1-CPU job (cpu1's ends in 1 h, gpu1's in 2 h, gpu2's in 3 h): a
    # chunk of 1 CPU starts now beside them; place=excl waits for cpu1 to empty, +1 h;
    # two chunks scatter:excl for cpu1 and gpu1, +2 h
    from diamond_jupyter.model import JobState, JobStatus

    cfg, snap = pbs_site()
    for n in snap.nodes:
        n.cpus_allocated, n.state = 1, "mixed"
    snap.jobs = [JobStatus(native_id=str(i), state=JobState.RUNNING, node_list=n, cpus=1,
                           nodes=1, partition="workq", walltime_s=4 * H,
                           started_at=NOW - timedelta(hours=4 - h))
                 for i, (n, h) in enumerate((("cpu1", 1), ("gpu1", 2), ("gpu2", 3)))]
    site = (cfg, snap)
    assert run("#PBS -l select=1:ncpus=1", site).verdict("pbs").verdict == "READY"
    v = run("#PBS -l select=1:ncpus=1\n#PBS -l place=excl", site).verdict("pbs")
    assert v.estimated_start == NOW + timedelta(hours=1)
    v = run("#PBS -l select=2:ncpus=1\n#PBS -l place=scatter:excl", site).verdict("pbs")
    assert v.estimated_start == NOW + timedelta(hours=2)


def test_a_users_association_limit_is_not_counted_when_the_user_is_not_known():
    # accounting answered but not who the probe ran as; a queue entry without its user
    # is nobody's: her association's GrpJobs=1 holds nothing (before, it counted as hers)
    from diamond_jupyter.model import JobState, JobStatus

    cfg, snap = kronos(assoc=assoc_text(user="|1||||").replace("user|alice\n", ""))
    snap = snap.model_copy(update={"jobs": [JobStatus(
        native_id="5", state=JobState.RUNNING, node_list="n1", cpus=2, nodes=1,
        partition="compute", account="proj", walltime_s=4 * H,
        started_at=NOW - timedelta(hours=1))]})
    assert snap.user is None
    v = run("#SBATCH -A proj -p compute -c 2", (cfg, snap)).verdict("kronos")
    assert v.verdict == "READY"


def test_lsf_ptile_on_hosts_of_different_sizes():
    # osprey (the sixth sweep's): c1-c4 40 CPUs (queue normal), f1-f2 128 (fat, chemists
    # only: alice is one), g1-g2 64 (gpu), vip on every host (bob only). 160 slots at 40 a
    # host: the four c hosts; 200: five hosts of 40, which only vip has (every host), and
    # vip is bob's: RESTRICTED; 256 at 64 in gpu: four hosts, gpu has two; at 128: fat's
    # two for alice, none for dave (not a chemist)
    from test_placement_cases6 import osprey

    only(run("#BSUB -n 160\n#BSUB -R \"span[ptile=40]\"", osprey()), "osprey", "normal")
    p = run("#BSUB -n 200\n#BSUB -R \"span[ptile=40]\"", osprey())
    assert p.verdict("osprey").verdict == "RESTRICTED"
    assert "you (alice) are not among queue vip's USERS (bob): bsub refuses it" in reasons(
        p, "osprey")
    assert reasons(run("#BSUB -n 256\n#BSUB -R \"span[ptile=64]\"\n#BSUB -q gpu", osprey()),
                   "osprey") == "needs 4 hosts, queue gpu has only 2"
    only(run("#BSUB -n 256\n#BSUB -R \"span[ptile=128]\"", osprey()), "osprey", "fat")
    p = run("#BSUB -n 256\n#BSUB -R \"span[ptile=128]\"", osprey(user="dave"))
    assert "you (dave) are not among queue fat's USERS (ug_chem/)" in reasons(p, "osprey")
