"""Follow-ups of the fifteenth sweep: what it found and left (README, "Left by the
fifteenth sweep"), each worked by hand."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects.slurm_script import SlurmScript
from diamond_jupyter.dialects.translate import translate
from diamond_jupyter.model import BadInput

# --mem is carried into the components after it (sbatch's option table resets
# --mem-per-cpu and --mem-per-gpu in each component, not --mem); --mem-per-cpu is not
_HETJOB_MEM = """#!/bin/bash
#SBATCH -N 1 -n 4 --mem=64G -t 10
#SBATCH hetjob
#SBATCH -N 2 -n 8
#SBATCH hetjob
#SBATCH -N 1 -n 2 --mem-per-cpu=1G
#SBATCH hetjob
#SBATCH -N 1 -n 1
srun ./a
"""


def test_hetjob_mem_is_carried_into_later_components_as_sbatch_does():
    """Placement read a later component without memory of its own as the --mem before it
    (as sbatch does), the parser as no memory: another scheduler's translation asked none
    for it. Both now give it the --mem before it; one with --mem-per-cpu keeps its own,
    and the one after that takes the last --mem again (--mem-per-cpu is not carried)."""
    spec = SlurmScript().parse_script(_HETJOB_MEM)
    got = [(c.memory_mb, c.memory_per_cpu_mb) for c in spec.components]
    assert got == [(65536, None), (65536, None), (None, 1024), (65536, None)], got
    script, _, _ = translate(_HETJOB_MEM, "pbs", "slurm")
    assert ("select=1:ncpus=4:mpiprocs=4:mem=64gb+2:ncpus=4:mpiprocs=4:mem=64gb"
            "+1:ncpus=2:mpiprocs=2:mem=2gb+1:ncpus=1:mpiprocs=1:mem=64gb") in script, script


def test_hetjob_mem_per_cpu_first_is_not_carried():
    """--mem-per-cpu is reset in each component: a later one asks no memory."""
    spec = SlurmScript().parse_script(_HETJOB_MEM.replace("--mem=64G", "--mem-per-cpu=2G"))
    assert [c.memory_mb for c in spec.components] == [None, None, None, None]


def test_chunks_reach_slurm_without_a_carried_mem():
    """PBS chunks of which a later one asks no memory: written as `--mem` for the first,
    sbatch would carry it into the next component (64 GB more on each of 4 nodes). The
    first's memory goes as the same memory per CPU (not carried) where its CPUs divide it;
    where they do not, the translation is refused (it would ask more), not silently wrong."""
    text = ("#!/bin/bash\n#PBS -l select=1:ncpus=8:mem=64gb+4:ncpus=32:mpiprocs=32\n"
            "#PBS -l walltime=1:00:00\n./a\n")
    script, _, _ = translate(text, "slurm", "pbs")
    first, later = script.split("#SBATCH hetjob\n")
    assert "#SBATCH --mem-per-cpu=8G\n" in first and "--mem" not in later, script
    back = SlurmScript().parse_script(script)
    assert [c.memory_mb for c in back.components] == [None, None]
    assert back.components[0].memory_per_cpu_mb == 8192
    with pytest.raises(BadInput, match="cannot express the pbs request for 65536 MB"):
        translate(text.replace("ncpus=8:mem", "ncpus=6:mem"), "slurm", "pbs")


@pytest.mark.parametrize("dialect, line, said", [
    ("slurm", "#SBATCH --test-only", "sbatch --test-only only says when and where the job "
     "would start and submits no job: refused at submit, since the engine would find no "
     "job to follow; remove it to submit the job"),
    ("flux", "#flux: --dry-run", "flux batch --dry-run prints the jobspec and submits no "
     "job: refused at submit"),
    ("pbs", "#PBS -I", "qsub -I runs an interactive job"),
])
def test_an_option_refused_at_submit_is_said_when_kept(dialect, line, said):
    """Translated into its own scheduler, `--test-only` (flux `--dry-run`, qsub `-I`) was
    written back unsaid, where every other kept option is said: the user learnt only at
    submit that the engine refuses it. Now the translation says it kept it and why."""
    text = f"#!/bin/bash\n{line}\nhostname\n"
    script, warnings, _ = translate(text, dialect, dialect)
    assert line in script
    assert any(w.startswith(f"kept: {line} ({said}") for w in warnings), warnings


@pytest.mark.parametrize("flags, batch, resv", [
    ("R:", False, True), ("r:", False, True), ("B:", True, False), ("RB:", True, True),
    ("BR:", True, True), ("", False, False),
])
def test_a_slurm_signal_with_r_or_b_reaches_lsf_and_flux(flags, batch, resv):
    """`--signal=R:SIGUSR2@300` was said dropped everywhere: R: was taken for something
    other than a signal before the limit. sbatch reads R (may overlap a reservation with
    MaxStartDelay) and B (the batch shell alone) as flags before the signal (RB: and BR:
    both, any case), so the signal is carried, and what the target has no form for said."""
    text = f"#!/bin/bash\n#SBATCH -t 1:00:00\n#SBATCH --signal={flags}SIGUSR2@300\n./a\n"
    lsf, warnings, _ = translate(text, "lsf", "slurm")
    assert "#BSUB -wa USR2\n#BSUB -wt 5\n" in lsf, lsf
    said = [w for w in warnings if "--signal" in w]
    assert len(said) == 1 and said[0].startswith("approximated:"), warnings
    assert ("R: (the job may overlap a reservation with MaxStartDelay) dropped, no lsf "
            "equivalent" in said[0]) is resv
    assert ("B: (the batch shell alone) is not said there" in said[0]) is batch
    flux, _, _ = translate(text, "flux", "slurm")
    assert "#flux: --signal=USR2@5m\n" in flux
    # its own scheduler gets it as written
    assert f"#SBATCH --signal={flags}SIGUSR2@300\n" in translate(text, "slurm", "slurm")[0]


@pytest.mark.parametrize("target, why", [
    ("pbs", "qsub has no option for a signal before the walltime"),
    ("sge", "qsub has no option for it: -notify sends SIGUSR2 before a SIGKILL"),
])
def test_a_signal_before_the_limit_to_pbs_and_grid_engine_is_said_dropped_with_why(target,
                                                                                    why):
    """PBS and Grid Engine have no signal at a time the job sets before its limit (Grid
    Engine's -notify warns the queue's notify time before a kill or suspend; a soft s_rt
    ends the job soon after its signal): said dropped, with why, once per signal."""
    text = "#!/bin/bash\n#SBATCH -t 1:00:00\n#SBATCH --signal=R:USR1@120\n./a\n"
    script, warnings, _ = translate(text, target, "slurm")
    assert "notify" not in script and "s_rt" not in script
    said = [w for w in warnings if "--signal" in w]
    assert said == [f"dropped: #SBATCH --signal=R:USR1@120 (--signal R:USR1@120: a signal "
                    f"120 s before the time limit; {why}" + said[0].split(why, 1)[1]], warnings


def test_signal_flags_as_sbatch_reads_them():
    """sbatch reads an R, then a B, then an R again before the colon (`RR:` is R; `BB:`
    is no signal: sbatch refuses it, and it is not carried)."""
    text = "#!/bin/bash\n#SBATCH -t 1:00:00\n#SBATCH --signal=RR:USR1@120\n./a\n"
    assert "#BSUB -wa USR1\n" in translate(text, "lsf", "slurm")[0]
    lsf, warnings, _ = translate(text.replace("RR:", "BB:"), "lsf", "slurm")
    assert "-wa" not in lsf
    assert any(w.startswith("dropped: #SBATCH --signal=BB:USR1@120") for w in warnings)


# ------------------------------------------------------------ PBS -q queue@server

def _pbs_site(servers: list[str] | None):
    from test_placement_cases5 import pbsq

    cfg, snap = pbsq()
    return cfg.model_copy(update={"pbs_servers": servers}), snap


@pytest.mark.parametrize("servers, feasible", [
    (None, False), (["pbs02"], False), (["pbs01"], True), (["PBS01.example.org"], True),
    (["pbs01.other.org"], True), (["pbs010", "pbs0"], False),
])
def test_a_queue_at_another_pbs_server_is_refused_unless_the_site_lists_it(servers,
                                                                            feasible):
    """`#PBS -q workq@pbs01`: qsub sends the job to the server pbs01. Placement judged the
    site's own queue workq and called it READY, though the job would run on another
    server (and be followed, cancelled, on the site's). Refused there, naming the server
    and what is accepted, unless the site's entry lists pbs01 as its own server."""
    from test_placement_cases import run

    p = run("#PBS -q workq@pbs01\n#PBS -l select=1:ncpus=8\n#PBS -l walltime=1:00:00",
            _pbs_site(servers))
    v = p.verdict("pbsq")
    assert v.feasible is feasible, p.explain()
    if not feasible:
        assert v.verdict == "INCOMPATIBLE" and v.reasons[0].startswith(
            "-q workq@pbs01: qsub would send the job to the PBS server pbs01, not to site "
            "pbsq's own ("), v.reasons
        assert "write -q workq to run it in pbsq's queue workq, or add pbs01 to the entry's " \
            "pbs_servers" in v.reasons[0]
    else:
        assert v.partition == "workq"
    # the same job without a server, or with another queue given since, is the site's own
    assert run("#PBS -q workq\n#PBS -l select=1:ncpus=8\n#PBS -l walltime=1:00:00",
               _pbs_site(servers)).verdict("pbsq").feasible


def test_pbs_servers_is_for_pbs_sites():
    from diamond_jupyter.config import SiteConfig

    with pytest.raises(ValueError, match="pbs_servers is for scheduler pbs"):
        SiteConfig(name="s", scheduler="slurm", pbs_servers=["pbs01"])


async def test_submit_refuses_a_queue_at_another_server_even_forced(tmp_path, monkeypatch):
    """An explicit PBS site: qsub would have sent the job elsewhere and the engine looked
    for it on the site's server. Refused before anything runs (even with force: the
    engine could not follow it); once the entry lists the server, submitted as written."""
    from tests.test_submit_waits import _fed

    text = "#!/bin/bash\n#PBS -q workq@pbs01\n#PBS -l walltime=10:00\necho hi\n"
    fed = _fed(tmp_path, monkeypatch)
    try:
        with pytest.raises(BadInput, match=r"^-q workq@pbs01: qsub would send the job to the "
                                           r"PBS server pbs01, not to site pbs's own"):
            await fed.submit(fed.spec_from_text(text, None), "pbs", force=True)
        assert fed.store.list_jobs() == [] and not (tmp_path / "pbs.script").exists()
        cfg = fed.sites["pbs"].cfg
        fed.sites["pbs"].cfg = cfg.model_copy(update={"pbs_servers": ["pbs01"]})
        job = await fed.submit(fed.spec_from_text(text, None), "pbs")
        assert job.native_id and "#PBS -q workq@pbs01\n" in (tmp_path / "pbs.script").read_text()
    finally:
        await fed.close()


# ------------------------------------------------ --overcommit, --core-spec and CoreSpecCount

def test_overcommit_with_exclusive_is_one_tasks_cpus_a_whole_node():
    """`-N 1 -n 64 --overcommit --exclusive`: the job gets its node whole and runs its 64
    tasks there, overcommitted. Placed as 64 tasks x 1 CPU, it was refused on the 32-CPU
    debug nodes; now as --overcommit alone is (one task's CPUs a node), on whole nodes."""
    from test_placement_cases import hera, run

    v = run("#SBATCH -N 1 -n 64 -t 10 --overcommit --exclusive -p debug", hera()).verdict("hera")
    assert v.verdict == "READY" and v.partition == "debug", v.reasons
    # a task's CPUs still have to fit a node
    v = run("#SBATCH -N 1 -n 64 -c 40 -t 10 -O --exclusive -p debug", hera()).verdict("hera")
    assert v.verdict == "INCOMPATIBLE"
    assert "needs 40 CPUs per node, largest node has 32" in " ".join(v.reasons)


def test_a_jobs_core_spec_takes_the_place_of_the_nodes_core_spec_count():
    """theia's n1 keeps 2 cores (CoreSpecCount=2, 4 threads) for the system: 60 of its 64
    CPUs are for jobs, already out of its count. A job's `--core-spec=N` takes the place
    of that default (sbatch(1)): it was subtracted again, so `--core-spec=2 -n 60` was
    refused on n1 (56 left) and `--core-spec=4` saw 52 CPUs where it has 56."""
    from test_placement_cases import run
    from test_placement_cases10 import _spec_site

    cfg, snap = _spec_site("CoreSpecCount=2")
    one = snap.model_copy(update={"nodes": [n for n in snap.nodes if n.name == "n1"]})
    assert one.nodes[0].cpus == 60 and one.nodes[0].spec_cores == 2
    ok = run("#SBATCH -N 1 -n 60 --core-spec=2 -t 1:00:00", (cfg, one)).verdict("theia")
    assert ok.verdict == "READY", ok.reasons
    assert run("#SBATCH -N 1 -n 56 --core-spec=4 -t 1:00:00", (cfg, one)).verdict(
        "theia").verdict == "READY"
    refused = run("#SBATCH -N 1 -n 57 --core-spec=4 -t 1:00:00", (cfg, one)).verdict("theia")
    assert "--core-spec=4 leaves the largest node 56" in " ".join(refused.reasons)
    # a job asking fewer than the node keeps: the node's count stays (the larger is kept)
    refused = run("#SBATCH -N 1 -n 62 --core-spec=1 -t 1:00:00", (cfg, one)).verdict("theia")
    assert "--core-spec=1 leaves the largest node 60" in " ".join(refused.reasons)


# ------------------------------------------------------------ Grid Engine -now y

@pytest.mark.parametrize("now, busy, verdict", [
    ("y", True, "INCOMPATIBLE"), ("yes", True, "INCOMPATIBLE"), ("n", True, "BUSY"),
    ("y", False, "READY"), (None, True, "BUSY"),
])
def test_grid_engine_now_y_is_judged_against_the_queue(now, busy, verdict):
    """`-now y`: qsub schedules the job at once or refuses it ("could not be scheduled,
    try again later"). Placement called a full site BUSY (the job would wait an hour)
    and chose it; there it is refused, saying when it would have started."""
    from test_placement_cases import run, sge_site

    cfg, snap = sge_site()
    if busy:
        for n in snap.nodes:
            n.cpus_allocated, n.state = 16, "alloc"
    text = "#$ -pe smp 4\n#$ -l h_rt=1:00:00" + (f"\n#$ -now {now}" if now else "")
    v = run(text, (cfg, snap)).verdict("sge")
    assert v.verdict == verdict, (v.verdict, v.reasons)
    if verdict == "INCOMPATIBLE":
        assert v.reasons == ["-now y: Grid Engine starts the job at once or refuses it, and "
                             "sge cannot start it now: it would start in about 1:00:00; drop "
                             "-now y to let it wait in the queue"]
    # qsub's last -now wins
    v = run(text + "\n#$ -now n", (cfg, snap)).verdict("sge")
    assert v.verdict == ("BUSY" if busy else "READY")
