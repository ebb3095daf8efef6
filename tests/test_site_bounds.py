"""An explicit Slurm site asked for more than any of its nodes or partitions can ever give
(100000 CPUs on a node, more nodes or GPUs than it has, a run time past every MaxTime) is
refused before anything reaches sbatch, naming the largest node (or the longest partition)
and what would be accepted; a site whose nodes are not known takes the job as before. The
site is a local one answering with recorded real `scontrol` outputs (nodes c1, c2: 8 CPUs;
g1: 16 CPUs, 2 GPUs; partitions debug 1 h, long 2 days, gpu unlimited). Then the same of
PBS, LSF, Grid Engine and Flux sites answering with their recorded outputs, in each
scheduler's words (queue, vnode, host, slots, cores) and limits (resources_max, RUNLIMIT
and TASKLIMIT, h_rt, TLIMIT, NNODES, NCORES and NGPUS), a PBS routing queue's own
resources_max and the server's."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml
from everyday_setup import run_cli
from local_slurm import RECORDED, recorded_sites_file
from sweep_helpers import fake_slurm_commands

from diamond_jupyter.dialects import get_script_dialect
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, JobSpec, Resources
from diamond_jupyter.store import Store


def _sites(tmp_path: Path) -> Path:
    """The recorded site `rec`, its sbatch recording each call in tmp_path/calls."""
    (tmp_path / "queue.txt").write_text("")
    sites = recorded_sites_file(tmp_path, RECORDED / "scontrol_node.txt", tmp_path / "queue.txt")
    for prog, body in {"sbatch": f'echo "sbatch $*" >> {tmp_path}/calls\necho 4242\n',
                       "sacct": "exit 0\n"}.items():
        (tmp_path / "bin" / prog).write_text("#!/bin/sh\n" + body)
        (tmp_path / "bin" / prog).chmod(0o755)
    entry = yaml.safe_load(sites.read_text())
    entry["store"] = str(tmp_path / "store.sqlite3")
    sites.write_text(yaml.safe_dump(entry))
    return sites


def _sbatch_calls(tmp_path: Path) -> list[str]:
    calls = tmp_path / "calls"
    return calls.read_text().splitlines() if calls.exists() else []


@pytest.fixture
async def rec(tmp_path) -> AsyncIterator[Federation]:
    fed = Federation(_sites(tmp_path), store=Store(tmp_path / "store.sqlite3"),
                     poll_interval_s=3600, min_poll_s=3600)
    await fed.start(recover=False)
    yield fed
    await fed.close()


def _script(*directives: str) -> JobSpec:
    text = "#!/bin/bash\n" + "".join(f"#SBATCH {d}\n" for d in directives) + "hostname\n"
    return get_script_dialect("slurm").parse_script(text)


@pytest.mark.parametrize("directives,said", [
    (["--cpus-per-task=100000"], "needs 100000 CPUs on one node, the largest node (g1) has "
     "16: ask at most 16 per node"),
    (["--ntasks-per-node=17"], "needs 17 CPUs on one node, the largest node (g1) has 16"),
    (["--nodes=100000"], "needs 100000 nodes, the site has 3 (largest node g1: 16 CPUs, "
     "2 GPUs, 64000 MB): ask at most 3"),
    (["--ntasks=100000"], "needs 6250 nodes, the site has 3 (largest node g1: "),
    (["--gpus=100000"], "asks 100000 GPUs, the site has 2 in all on 3 nodes (largest node "
     "g1: 16 CPUs, 2 GPUs, 64000 MB): ask at most 2"),
    (["-p long", "-t 9999-00:00:00"], "asks 9999-00:00:00 of run time, partition long "
     "allows at most 2-00:00:00 (MaxTime): ask at most 2-00:00:00"),
    (["-p long,debug", "-t 3-00:00:00"], "asks 3-00:00:00 of run time, the longest "
     "partition it names, long, allows at most 2-00:00:00 (MaxTime)"),
    (["-p debug", "--nodes=3"], "needs 3 nodes, partition debug allows a job at most 2 "
     "(MaxNodes): ask at most 2"),
])
async def test_fault_a_script_asking_more_than_the_site_ever_gives_is_refused_unsent(
        rec, tmp_path, directives, said):
    """Each of these reached sbatch, which alone said no (or queued it forever)."""
    with pytest.raises(BadInput) as e:
        await rec.submit(_script(*directives), "rec")
    assert str(e.value).startswith(f"site rec cannot run this job: {said}"), e.value
    assert _sbatch_calls(tmp_path) == [] and rec.jobs() == []


async def test_fault_the_same_asked_as_options_is_refused_and_the_plan_too(rec, tmp_path):
    spec = JobSpec(command="hostname", resources=Resources(nodes=4, walltime_s=600))
    with pytest.raises(BadInput, match="needs 4 nodes, the site has 3 "):
        await rec.submit(spec, "rec")
    with pytest.raises(BadInput, match="needs 4 nodes, the site has 3 "):
        await rec.plan_submit(spec, "rec")
    assert _sbatch_calls(tmp_path) == []


@pytest.mark.parametrize("directives", [
    ["-p gpu", "-t 9999-00:00:00"],  # gpu has no MaxTime
    ["-t 9999-00:00:00"],  # no partition named: gpu's is one it may get
    ["--nodes=3"], ["--gpus=2"], ["--cpus-per-task=16"], ["--ntasks=40"],
    # a partition the site does not list (a hidden one) may hold larger nodes: not judged
    ["-p secret", "--nodes=8", "-t 9999-00:00:00"],
])
async def test_a_request_some_node_and_partition_can_give_is_submitted(rec, tmp_path,
                                                                       directives):
    job = await rec.submit(_script(*directives), "rec")
    assert job.native_id == "4242" and len(_sbatch_calls(tmp_path)) == 1


async def test_force_submits_what_the_site_would_refuse(rec, tmp_path):
    job = await rec.submit(_script("--nodes=100000"), "rec", force=True)
    assert job.native_id == "4242" and len(_sbatch_calls(tmp_path)) == 1


async def test_a_site_whose_nodes_are_unknown_takes_the_job_as_before(tmp_path):
    """Its scontrol answers nothing: nothing is known to refuse by."""
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{
        "name": "here", "transport": {"kind": "local"}, "workdir": str(tmp_path / "work"),
        "commands": fake_slurm_commands(tmp_path / "fake")}]}))
    fed = Federation(sites, store=Store(tmp_path / "store.sqlite3"), poll_interval_s=3600,
                     min_poll_s=3600)
    await fed.start(recover=False)
    try:
        job = await fed.submit(_script("--nodes=100000", "-t 9999-00:00:00"), "here")
    finally:
        await fed.close()
    assert job.native_id == "4242"
    assert any(c.startswith("sbatch") for c in (tmp_path / "fake" / "calls").read_text()
               .splitlines())


@pytest.mark.parametrize("option,said", [
    (["--gpus", "100000"], "needs 100000 GPUs per node, largest node has 2"),
    (["--memory", "99999999T"], "memory per node, largest node has 64000 MB"),
    (["--nodes", "9"], "needs 9 nodes, the site has 3"),
])
def test_fault_the_cli_exits_2_with_one_line_and_sends_nothing(tmp_path, option, said):
    sites = _sites(tmp_path)
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\nhostname\n")
    res = run_cli("submit", "--config", str(sites), "--site", "rec", *option, str(script),
                  env={"DIAMOND_DATA_DIR": str(tmp_path / "data")})
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert res.stderr.count("\n") == 1 and said in res.stderr, res.stderr
    assert _sbatch_calls(tmp_path) == []


# -- PBS, LSF, Grid Engine and Flux sites answering with their recorded outputs ------------

OUT = RECORDED.parent
# each scheduler's fake commands: what each prints (a recorded output, else nothing) by the
# words of its arguments, the first match winning; its submit command notes the call
_ANSWERS: dict[str, dict[str, list[tuple[str, str]]]] = {
    "pbs": {"pbsnodes": [("*", "pbs/pbsnodes_json.json")],
            "qstat": [("*-Q*", "pbs/qstat_Qf_json.json"), ("*-B*", "pbs/qstat_Bf_json.json"),
                      ("*", "pbs/qstat_f_json.json")],
            "pbs_rstat": [("*", "")]},
    "lsf": {"bhosts": [("*host_name*", "lsf/bhosts_json.json"), ("*", "")],
            "lshosts": [("*", "lsf/lshosts_json.json")],
            "bqueues": [("*runlimit*", "lsf/bqueues_json.json"),
                        ("*max_tasklimit*", "tasklimit.json"), ("*", "")],
            "bjobs": [("*-json*", "lsf/bjobs_json.json"), ("*", "")]},
    "sge": {"qhost": [("*", "sge/qhost_xml.xml")],
            "qconf": [("-sql", "sql.txt"), ("-sq *", "sge/qconf_sq_all.txt"),
                      ("-spl", "sge/qconf_spl.txt"), ("*", "")],
            "qstat": [("*", "sge/qstat_f_xml.xml")]},
    "flux": {"flux": [("resource list*", "flux/flux_resource_list.txt"),
                      ("queue list*", "flux/flux_queue_list.txt"),
                      ("config get*", "config.json"), ("jobs*", "flux/flux_jobs_json.json")]},
}
_SUBMIT = {"pbs": ("qsub", "4242.vbox"), "lsf": ("bsub", "Job <4242> is submitted to queue "
                                                  "<normal>."),
           "sge": ("qsub", "4242"),  # qsub -terse
           "flux": ("flux", "ƒ4242")}


def _recorded_site(tmp_path: Path, scheduler: str, altered: dict[str, str] | None = None
                   ) -> Path:
    """tmp_path/sites.yaml: one local site `rec` of `scheduler` whose commands print the
    recorded outputs (tests/fixtures/outputs/SCHEDULER), its submit command noting each call
    in tmp_path/calls. LSF's short queue has a TASKLIMIT of 32 (`bqueues -o` limits).
    `altered`: what prints instead of a recorded output (by its SCHEDULER/FILE)."""
    bin_dir, here = tmp_path / "bin", tmp_path / "answers"
    bin_dir.mkdir()
    here.mkdir()
    answers = _ANSWERS[scheduler]
    for recorded, text in (altered or {}).items():
        (here / Path(recorded).name).write_text(text)
        answers = {prog: [(glob, Path(path).name if path == recorded else path)
                          for glob, path in cases] for prog, cases in answers.items()}
    (here / "sql.txt").write_text("all.q\n")  # `qconf -sq` prints every queue at once
    (here / "config.json").write_text("{}\n")
    (here / "tasklimit.json").write_text(
        '{"COMMAND":"bqueues","QUEUES":1,"RECORDS":[{"QUEUE_NAME":"short","HOSTS":"all",'
        '"MAX_MEMLIMIT":"-","MAX_TASKLIMIT":"32","MIN_TASKLIMIT":"-"}]}\n')
    submit, says = _SUBMIT[scheduler]
    for prog, prog_answers in answers.items():
        cases = "".join(f"  {glob.replace(' ', chr(92) + ' ')}) {_cat(path, here)} ;;\n"
                        for glob, path in prog_answers)
        noted = "" if prog != submit else \
            f'case "$*" in\n  batch*|-*|/*|*.sh) echo "{prog} $*" >> {tmp_path}/calls; ' \
            f"echo '{says}'; exit 0 ;;\nesac\n"
        if prog == "flux":
            noted = noted.replace("batch*|-*|/*|*.sh", "batch*")
        (bin_dir / prog).write_text(f'#!/bin/sh\n{noted}case "$*" in\n{cases}esac\n')
    if submit not in _ANSWERS[scheduler]:
        (bin_dir / submit).write_text(f'#!/bin/sh\necho "{submit} $*" >> {tmp_path}/calls\n'
                                      f"echo '{says}'\n")
    for prog in bin_dir.iterdir():
        prog.chmod(0o755)
    path = tmp_path / "sites.yaml"
    path.write_text(yaml.safe_dump({"store": str(tmp_path / "store.sqlite3"), "sites": [{
        "name": "rec", "scheduler": scheduler, "transport": {"kind": "local"},
        "workdir": str(tmp_path / "work"),
        "preamble": f'PATH={bin_dir}:"$PATH"; export PATH'}]}, allow_unicode=True))
    return path


def _cat(answer: str, here: Path) -> str:
    """The shell that prints `answer`: a recorded output (SCHEDULER/FILE), a file written
    for the test, or nothing."""
    return f"cat {OUT / answer}" if "/" in answer else f"cat {here / answer}" if answer else ":"


async def _submitted(tmp_path: Path, scheduler: str, script: str, *, force: bool = False,
                     altered: dict[str, str] | None = None) -> str:
    """What submitting `script` to the recorded site of `scheduler` (its outputs `altered`)
    does: the native id, or the refusal's text."""
    fed = Federation(_recorded_site(tmp_path, scheduler, altered),
                     store=Store(tmp_path / "s.sqlite3"), poll_interval_s=3600, min_poll_s=3600)
    await fed.start(recover=False)
    try:
        spec = get_script_dialect(scheduler).parse_script(f"#!/bin/bash\n{script}\nhostname\n")
        try:
            return (await fed.submit(spec, "rec", force=force)).native_id
        except BadInput as e:
            assert fed.jobs() == []
            return str(e)
    finally:
        await fed.close()


@pytest.mark.parametrize("scheduler,script,said", [
    # vbox: node1, node3 8 ncpus, node2 32 ncpus 4 GPUs; workq 24 h (nodect 4), gpu 72 h,
    # route sends to both
    ("pbs", "#PBS -l select=1:ncpus=64", "needs 64 ncpus on one vnode, the largest vnode "
     "(node2) has 32: ask at most 32 per vnode (the ncpus of one chunk)"),
    ("pbs", "#PBS -l select=5:ncpus=8", "needs 5 vnodes, the site has 3 (largest vnode "
     "node2: 32 ncpus, 4 GPUs, 128000 MB): ask at most 3"),
    ("pbs", "#PBS -q workq\n#PBS -l walltime=48:00:00", "asks 2-00:00:00 of run time, queue "
     "workq allows at most 1-00:00:00 (resources_max.walltime): ask at most 1-00:00:00"),
    ("pbs", "#PBS -q route\n#PBS -l walltime=100:00:00", "asks 4-04:00:00 of run time, the "
     "longest queue it names, gpu, allows at most 3-00:00:00 (resources_max.walltime)"),
    # lsf: hostA 8 CPUs, hostB 16, hostC unavail; normal 12 h, short 1 h (TASKLIMIT 32),
    # night no RUNLIMIT
    ("lsf", '#BSUB -n 32 -R "span[hosts=1]"', "needs 32 slots on one host, the largest host "
     "(hostB) has 16: ask at most 16 per host (span[ptile=N], or -n with span[hosts=1])"),
    ("lsf", "#BSUB -q short -n 40", "needs 40 slots in all, queue short allows a job at most "
     "32 (TASKLIMIT): ask at most 32"),
    ("lsf", "#BSUB -q short -W 2:00", "asks 2:00:00 of run time, queue short allows at most "
     "1:00:00 (RUNLIMIT): ask at most 1:00:00"),
    ("lsf", "#BSUB -n 100000", "needs 6250 hosts, the site has 3 (largest host hostB: 16 "
     "slots, 4 GPUs, 257433 MB): ask at most 3"),
    # sge: dn1, dn2 8 slots; all.q 24 h, short.q 30 min
    ("sge", "#$ -pe smp 64", "needs 64 slots on one host, the largest host (dn1) has 8: ask "
     "at most 8 per host"),
    ("sge", "#$ -pe mpi 100", "needs 13 hosts, the site has 2 (largest host dn1: 8 slots, "
     "24166 MB): ask at most 2"),
    ("sge", "#$ -l h_rt=999:00:00", "asks 41-15:00:00 of run time, the longest queue, all.q, "
     "allows at most 1-00:00:00 (h_rt): ask at most 1-00:00:00"),
    ("sge", "#$ -q short.q -l h_rt=1:00:00", "asks 1:00:00 of run time, queue short.q allows "
     "at most 0:30:00 (h_rt)"),
    # flux: node0, node2, node3 8 cores, node1 32 cores 4 GPUs; batch 8 h, debug 1 h (2 nodes)
    ("flux", "#flux: -N 9", "needs 9 nodes, the site has 4 (largest node node1: 32 cores, "
     "4 GPUs): ask at most 4"),
    ("flux", "#flux: -n 1 -c 64", "needs 64 cores on one node, the largest node (node1) has "
     "32: ask at most 32 per node (tasks per node x cores per task)"),
    ("flux", "#flux: -q debug -N 3", "needs 3 nodes, queue debug allows a job at most 2 "
     "(NNODES): ask at most 2"),
    ("flux", "#flux: -t 99h", "asks 4-03:00:00 of run time, the longest queue, batch, allows "
     "at most 8:00:00 (TLIMIT)"),
])
async def test_fault_every_scheduler_refuses_past_its_site_in_its_words_unsent(
        tmp_path, scheduler, script, said):
    """Each of these reached qsub, bsub or flux batch, which alone said no (or queued it
    forever): the check was Slurm's only."""
    got = await _submitted(tmp_path, scheduler, script)
    assert got.startswith(f"site rec cannot run this job: {said}"), got
    assert _sbatch_calls(tmp_path) == []


@pytest.mark.parametrize("scheduler,script", [
    ("pbs", "#PBS -l select=1:ncpus=32"),
    ("pbs", "#PBS -l walltime=72:00:00"),  # gpu's limit
    ("pbs", "#PBS -q route\n#PBS -l walltime=72:00:00"),
    ("lsf", "#BSUB -n 2"),
    ("lsf", "#BSUB -W 9999:00"),  # night has no RUNLIMIT
    ("lsf", "#BSUB -q short -n 32 -W 1:00"),
    ("lsf", "#BSUB -q nosuch -n 100000"),  # a queue bqueues does not list: not judged
    ("sge", "#$ -pe smp 8\n#$ -l h_rt=24:00:00"),
    ("flux", "#flux: -N 4"),
    ("flux", "#flux: -q batch -t 8h"),
])
async def test_what_some_node_and_queue_of_each_scheduler_gives_is_submitted(
        tmp_path, scheduler, script):
    assert "cannot run" not in await _submitted(tmp_path, scheduler, script)
    assert len(_sbatch_calls(tmp_path)) == 1


@pytest.mark.parametrize("scheduler,script", [
    ("pbs", "#PBS -l select=5:ncpus=8"), ("lsf", "#BSUB -q short -n 40"),
    ("sge", "#$ -pe smp 64"), ("flux", "#flux: -N 9")])
async def test_force_submits_past_every_scheduler_s_site(tmp_path, scheduler, script):
    assert "cannot run" not in await _submitted(tmp_path, scheduler, script, force=True)
    assert len(_sbatch_calls(tmp_path)) == 1


# -- limits of a queue beyond its run time and nodes ----------------------------------------

def _recorded(path: str) -> str:
    return (OUT / path).read_text()


# the recorded `flux queue list` with job-size limits: batch 64 cores in all, debug 16 cores
# and 2 GPUs (the columns as flux-core prints a queue's limits.range: MIN-MAX, inf for none)
_FLUX_SIZES = {"flux/flux_queue_list.txt": _recorded("flux/flux_queue_list.txt")
               .replace("0-inf      0-inf batch*", "0-64      0-inf batch*")
               .replace("0-inf      0-inf debug", " 0-16        0-2 debug")}


def _pbs_limits() -> dict[str, str]:
    """The recorded vbox queues and server, the routing queue with its own resources_max
    (48 h, 16 ncpus) and the server's (40 ncpus)."""
    queues = json.loads(_recorded("pbs/qstat_Qf_json.json"))
    queues["Queue"]["route"]["resources_max"] = {"walltime": "48:00:00", "ncpus": 16}
    server = json.loads(_recorded("pbs/qstat_Bf_json.json"))
    server["Server"]["vbox"]["resources_max"] = {"ncpus": 40}
    return {"pbs/qstat_Qf_json.json": json.dumps(queues) + "\n",
            "pbs/qstat_Bf_json.json": json.dumps(server) + "\n"}


@pytest.mark.parametrize("scheduler,script,said", [
    ("flux", "#flux: -q debug -n 32", "needs 32 cores in all, queue debug allows a job at "
     "most 16 (NCORES): ask at most 16"),
    ("flux", "#flux: -n 96", "needs 96 cores in all, the most generous queue, batch, allows "
     "a job at most 64 (NCORES): ask at most 64"),
    ("flux", "#flux: -q debug -n 1 -g 4", "needs 4 GPUs in all, queue debug allows a job at "
     "most 2 (NGPUS): ask at most 2"),
    ("pbs", "#PBS -q route\n#PBS -l walltime=60:00:00", "asks 2-12:00:00 of run time, queue "
     "route allows at most 2-00:00:00 (resources_max.walltime): ask at most 2-00:00:00"),
    ("pbs", "#PBS -q route\n#PBS -l select=1:ncpus=24", "needs 24 ncpus in all, queue route "
     "allows a job at most 16 (resources_max.ncpus): ask at most 16"),
    ("pbs", "#PBS -q gpu\n#PBS -l select=2:ncpus=32", "needs 64 ncpus in all, queue gpu "
     "allows a job at most 40 (resources_max.ncpus): ask at most 40"),
])
async def test_fault_past_a_queue_s_size_limits_is_refused_unsent(tmp_path, scheduler,
                                                                   script, said):
    """Flux's NCORES and NGPUS were not read, nor a PBS routing queue's own resources_max
    (only its destinations'): flux batch and qsub alone said no."""
    altered = _FLUX_SIZES if scheduler == "flux" else _pbs_limits()
    got = await _submitted(tmp_path, scheduler, script, altered=altered)
    assert got.startswith(f"site rec cannot run this job: {said}"), got
    assert _sbatch_calls(tmp_path) == []


@pytest.mark.parametrize("scheduler,script", [
    ("flux", "#flux: -q debug -n 1 -c 16 -g 2"), ("flux", "#flux: -n 56"),
    ("pbs", "#PBS -q route\n#PBS -l select=1:ncpus=16\n#PBS -l walltime=48:00:00"),
])
async def test_within_a_queue_s_size_limits_is_submitted(tmp_path, scheduler, script):
    altered = _FLUX_SIZES if scheduler == "flux" else _pbs_limits()
    assert "cannot run" not in await _submitted(tmp_path, scheduler, script, altered=altered)
    assert len(_sbatch_calls(tmp_path)) == 1


# -- a flux queue's least nodes, cores and GPUs ---------------------------------------------

# the recorded `flux queue list` of job-size minimums: large 2 nodes and 16 cores at least,
# gpu 1 GPU at least (and 2 nodes at most), inherit a minimum of -1 (`inf`: none)
_FLUX_MINIMUMS = {"flux/flux_queue_list.txt": _recorded("flux/flux_queue_list_minimums.txt")}


def test_flux_queue_list_minimums_are_read():
    from diamond_jupyter.dialects.flux_commands import flux_commands
    queues = {p.name: p for p in flux_commands.parse_queues(
        _recorded("flux/flux_queue_list_minimums.txt"))}
    assert [(n, p.min_nodes, p.min_cpus, p.min_gpus) for n, p in queues.items()] == [
        ("batch", None, None, None), ("large", 2, 16, None), ("gpu", None, None, 1),
        ("inherit", None, None, None)]
    assert (queues["inherit"].max_nodes, queues["gpu"].max_nodes, queues["batch"].default) \
        == (4, 2, True)


@pytest.mark.parametrize("script,said", [
    ("#flux: -q large -N 1 -n 16", "needs 1 node, queue large takes only a job of at least 2 "
     "(NNODES): ask at least 2"),
    ("#flux: -q large -n 32", "asks no node count (flux counts the nodes of -N only), queue "
     "large takes only a job of at least 2 (NNODES): ask at least 2"),
    ("#flux: -q large -N 2 -n 8", "needs 8 cores in all, queue large takes only a job of at "
     "least 16 (NCORES): ask at least 16"),
    ("#flux: -q gpu -n 1", "needs 0 GPUs in all, queue gpu takes only a job of at least 1 "
     "(NGPUS): ask at least 1"),
])
async def test_fault_below_a_flux_queue_s_minimum_is_refused_unsent(tmp_path, script, said):
    """The low end of flux's NNODES, NCORES and NGPUS ranges was not read: flux batch alone
    said no ("requested nnodes is under policy limit of 2")."""
    got = await _submitted(tmp_path, "flux", script, altered=_FLUX_MINIMUMS)
    assert got.startswith(f"site rec cannot run this job: {said}"), got
    assert _sbatch_calls(tmp_path) == []


@pytest.mark.parametrize("script", [
    "#flux: -q large -N 2 -n 16", "#flux: -n 1", "#flux: -q inherit -n 1",
    "#flux: -q gpu -n 1 -g 1"])
async def test_at_or_above_a_flux_queue_s_minimum_is_submitted(tmp_path, script):
    assert "cannot run" not in await _submitted(tmp_path, "flux", script,
                                                altered=_FLUX_MINIMUMS)
    assert len(_sbatch_calls(tmp_path)) == 1


async def test_fault_below_every_flux_queue_s_minimum_is_infeasible_in_placement(tmp_path):
    """Placement counted a flux queue of a minimum as any other: a job below it ranked."""
    fed = Federation(_recorded_site(tmp_path, "flux", _FLUX_MINIMUMS),
                     store=Store(tmp_path / "s.sqlite3"), poll_interval_s=3600, min_poll_s=3600)
    await fed.start(recover=False)
    try:
        below, within = (get_script_dialect("flux").parse_script(f"#!/bin/bash\n{s}\nhostname\n")
                         for s in ("#flux: -q large -N 1 -n 16", "#flux: -q large -N 2 -n 16"))
        refused = (await fed.place(below)).verdict("rec")
        taken = (await fed.place(within)).verdict("rec")
    finally:
        await fed.close()
    assert refused is not None and not refused.feasible
    assert any("takes only jobs of at least 2 (NNODES)" in r for r in refused.reasons), \
        refused.reasons
    assert taken is not None and taken.feasible, taken.reasons
