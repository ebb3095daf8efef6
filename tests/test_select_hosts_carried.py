"""Follow-ups of script sweep 18: the hosts a PBS `select` names, and sbatch's `--chdir`.

PBS Pro's `select=1:ncpus=8:host=n1+1:ncpus=8:host=n2` runs each chunk on the host it
names: the job holds every host named, as Slurm's `--nodelist` (which, beside a larger
`-N`, holds those hosts and others up to the count). LSF `-m "n1 n2"`, Grid Engine
`-l hostname=n1|n2` and flux `--requires=host:` take the job's nodes from among the hosts
named: the same job when it takes exactly as many nodes as are named. These were all said
dropped before; a chunk's `vnode=`, chunks sharing a host and chunks of differing shapes
(which chunk goes where) still are, with the reason. The other way, a job naming exactly
as many hosts as it takes nodes reaches PBS as one chunk on each host.

sbatch stores `--chdir` as given (made absolute: slurm_opt.c's arg_set_chdir) and
slurmstepd starts the batch script there; only the stdio file names go through its
pattern expansion (fname_create), so `%u`/`%x` in `--chdir` are characters of the path.
LSF's `-cwd`, which fills in `%J`/`%U`..., so takes such a path otherwise: said."""

from __future__ import annotations

import pytest
from test_placement_cases import hera, reasons, run
from test_placement_cases5 import gridq, lsfq, pbsq
from test_placement_cases7 import flux4

from diamond_jupyter.dialects.translate import translate


def _pbs(select: str) -> str:
    return f"#!/bin/bash\n#PBS -l select={select}\n#PBS -l walltime=01:00:00\n./app\n"


def _lines(script: str) -> list[str]:
    """The script's directive lines (every scheduler's start with `#`)."""
    return [x for x in script.splitlines() if x.startswith("#") and not x.startswith("#!")]


def _said(warnings: list[str], *parts: str) -> bool:
    return any(all(p in w for p in parts) for w in warnings)


@pytest.mark.parametrize("target, line", [
    ("slurm", "#SBATCH --nodelist=node042"),
    ("lsf", "#BSUB -m node042"),
    ("sge", "#$ -l hostname=node042"),
    ("flux", "#flux: --requires=host:node042"),
])
def test_one_chunk_on_a_named_host_reaches_every_scheduler(target: str, line: str) -> None:
    script, warnings, _ = translate(_pbs("1:host=node042:ncpus=16:mpiprocs=16"), target)
    assert line in _lines(script)
    assert _said(warnings, "kept: #PBS -l select=1:host=node042")
    assert not _said(warnings, "dropped:", "host")


def test_chunks_of_one_shape_each_on_its_host() -> None:
    text = _pbs("1:ncpus=8:host=n1+1:ncpus=8:host=n2")
    slurm = _lines(translate(text, "slurm")[0])
    assert "#SBATCH --nodelist=n1,n2" in slurm and "#SBATCH --nodes=2" in slurm
    assert '#BSUB -m "n1 n2"' in _lines(translate(text, "lsf")[0])
    assert "#flux: --requires=host:n1,n2" in _lines(translate(text, "flux")[0])


def test_some_chunks_named_reach_slurm_as_at_least_those_hosts() -> None:
    """Two of three chunks name hosts: PBS puts those two there and the third anywhere,
    which sbatch's --nodelist with -N 3 means; "3 nodes from among n1, n2" does not."""
    text = _pbs("1:ncpus=8:host=n1+1:ncpus=8:host=n2+1:ncpus=8")
    slurm = _lines(translate(text, "slurm")[0])
    assert "#SBATCH --nodelist=n1,n2" in slurm and "#SBATCH --nodes=3" in slurm
    for target in ("lsf", "flux"):
        script, warnings, _ = translate(text, target)
        assert "n1" not in script
        assert _said(warnings, "dropped:", "asks 3 node(s) of the 2 host(s)")


@pytest.mark.parametrize("select, why", [
    ("1:ncpus=8:host=node017+1:ncpus=8:vnode=node018[0]", "vnode= names one of PBS's"),
    ("2:ncpus=4:host=n1", "share host n1"),
    ("1:ncpus=8:host=n1+1:ncpus=32:ngpus=2:host=n2", "lose which chunk runs where"),
])
def test_what_a_host_list_cannot_say_is_said_dropped(select: str, why: str) -> None:
    # (chunks of two shapes reach Slurm as hetjob components, each with its own hosts:
    # tests/test_scripts_unseen19_followups.py)
    for target in ("lsf", "flux") if "which chunk" in why else ("slurm", "lsf", "flux"):
        script, warnings, _ = translate(_pbs(select), target)
        assert "nodelist" not in script and "host:" not in script and "-m " not in script
        assert _said(warnings, "dropped: #PBS -l select=", why), (target, warnings)


def test_a_job_naming_its_hosts_reaches_pbs_as_one_chunk_on_each() -> None:
    slurm = ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=4\n#SBATCH -w n[1-2]\n"
             "#SBATCH -t 10\n./app\n")
    script, warnings, _ = translate(slurm, "pbs")
    assert "#PBS -l select=1:ncpus=4:mpiprocs=4:host=n1+1:ncpus=4:mpiprocs=4:host=n2" \
        in _lines(script)
    assert _said(warnings, "kept: #SBATCH -w n[1-2] as one chunk on each of n1,n2")
    # and back: the chunks' hosts are Slurm's node list again
    back = _lines(translate(script, "slurm")[0])
    assert "#SBATCH --nodelist=n1,n2" in back and "#SBATCH --nodes=2" in back
    sge = "#!/bin/bash\n#$ -l hostname=n7\n#$ -pe smp 4\n#$ -l h_rt=600\n./app\n"
    assert "#PBS -l select=1:ncpus=4:host=n7" in _lines(translate(sge, "pbs")[0])


def test_hosts_over_chunks_of_two_shapes_do_not_reach_pbs() -> None:
    """-n 6 at most 4 a node: a chunk of 4 tasks and one of 2; which takes n1 is unknown."""
    slurm = ("#!/bin/bash\n#SBATCH -N 2\n#SBATCH -n 6\n#SBATCH --ntasks-per-node=4\n"
             "#SBATCH -w n[1-2]\n#SBATCH -t 10\n./app\n")
    script, warnings, _ = translate(slurm, "pbs")
    assert "host=" not in script
    assert _said(warnings, "dropped: #SBATCH -w n[1-2]", "which one runs on which host")


def test_a_slurm_site_places_a_pbs_job_on_the_hosts_it_names_only() -> None:
    assert run(_pbs("1:ncpus=8:host=c03"), hera()).verdict("hera").feasible
    assert reasons(run(_pbs("1:ncpus=8:host=zz9"), hera()), "hera") == \
        "#PBS -l select=1:ncpus=8:host=zz9 names host(s) this site does not have: zz9"
    # c02 has 32 CPUs: a chunk of 100 there cannot run, whatever the other chunk finds
    assert "needs 100 CPUs per node, largest node has 32" in reasons(
        run(_pbs("1:ncpus=100:host=c02+1:ncpus=100"), hera()), "hera")
    assert run(_pbs("1:ncpus=100:host=c03+1:ncpus=100"), hera()).verdict("hera").feasible


def test_a_flux_site_checks_the_carried_hosts() -> None:
    assert run(_pbs("1:ncpus=4:host=f0"), flux4()).verdict("flux").feasible
    assert reasons(run(_pbs("1:ncpus=4:host=f9"), flux4()), "flux") == \
        "#PBS -l select=1:ncpus=4:host=f9 names host(s) this site does not have: f9"


def test_lsf_and_grid_engine_sites_check_the_carried_hosts() -> None:
    assert run(_pbs("1:ncpus=8:host=h2"), lsfq()).verdict("lsfq").feasible
    assert reasons(run(_pbs("1:ncpus=8:host=h1+1:ncpus=8:host=h9"), lsfq()), "lsfq") == (
        "#PBS -l select=1:ncpus=8:host=h1+1:ncpus=8:host=h9 names host(s) this site does not "
        "have: h9 (bsub refuses -m naming a host it does not know)")
    assert run(_pbs("1:ncpus=1:mpiprocs=1:host=s2"), gridq()).verdict("sgeq").feasible
    assert reasons(run(_pbs("1:ncpus=1:mpiprocs=1:host=s9"), gridq()), "sgeq") == \
        "#PBS -l select=1:ncpus=1:mpiprocs=1:host=s9 names host(s) this site does not have: s9"


def test_a_pbs_site_checks_a_slurm_node_list_it_is_sent() -> None:
    job = "#SBATCH -N 1\n#SBATCH -n 4\n#SBATCH {}\n#SBATCH -w {}\n#SBATCH -t 10"
    assert run(job.format("-J a", "v3"), pbsq()).verdict("pbsq").feasible
    assert reasons(run(job.format("-J a", "zz9"), pbsq()), "pbsq") == \
        "#SBATCH -w zz9 names host(s) this site does not have: zz9"
    assert "needs 4 GPUs per vnode, largest vnode has 2" in reasons(
        run(job.format("--gpus-per-node=4", "v3"), pbsq()), "pbsq")


def test_sbatch_chdir_patterns_are_path_characters() -> None:
    text = "#!/bin/bash\n#SBATCH -n 1\n#SBATCH --chdir=/scratch/%u/%x\n#SBATCH -t 10\n./app\n"
    script, warnings, spec = translate(text, "lsf")
    assert spec.working_directory == "/scratch/%u/%x"
    assert "#BSUB -cwd /scratch/%u/%x" in _lines(script)
    assert _said(warnings, "--chdir=/scratch/%u/%x: %u, %x kept as written",
                 "--output, --error and --input only")
    # `%%` is sbatch's own escape, not a pattern: nothing to say
    plain = translate(text.replace("%u/%x", "100%%"), "sge")[1]
    assert not _said(plain, "kept as written (sbatch fills")


def test_characters_lsf_would_fill_in_are_said_at_lsf() -> None:
    text = "#!/bin/bash\n#SBATCH -n 1\n#SBATCH --chdir=/scratch/%J/%U\n#SBATCH -t 10\n./app\n"
    warnings = translate(text, "lsf")[1]
    assert _said(warnings, "%J, %U in working directory '/scratch/%J/%U': slurm takes them "
                 "as written; LSF fills them in")
    assert not _said(translate(text, "sge")[1], "LSF fills")


def test_grid_engine_queue_instances_carry_their_hosts() -> None:
    text = "#!/bin/bash\n#$ -q all.q@node07\n#$ -l h_rt=00:30:00\n./app\n"
    script, warnings, _ = translate(text, "slurm")
    assert "#SBATCH --partition=all.q" in _lines(script)
    assert "#SBATCH --nodelist=node07" in _lines(script)
    assert _said(warnings, "kept: #$ -q all.q@node07 as --nodelist=node07")
    assert "#BSUB -m node07" in _lines(translate(text, "lsf")[0])
    group = translate(text.replace("all.q@node07", "all.q@@gpus"), "slurm")
    assert "nodelist" not in group[0]
    assert _said(group[1], "dropped: #$ -q all.q@@gpus", "host group or pattern")
    assert reasons(run("#$ -q all.q@s9\n#$ -l h_rt=00:20:00", gridq()), "sgeq") == \
        "#$ -q all.q@s9 names host(s) this site does not have: s9"


# Torque's node specs (qsub -l nodes): each begins with a node count or a host name, and
# the bare words after it are properties; a spec led by a name runs on that host.
def _torque(nodes: str) -> str:
    return f"#!/bin/bash\n#PBS -l nodes={nodes}\n#PBS -l walltime=01:00:00\n./app\n"


def test_torque_hosts_reach_other_schedulers() -> None:
    text = _torque("host1:ppn=4+host2:ppn=4")
    script, warnings, spec = translate(text, "slurm")
    assert "#SBATCH --nodelist=host1,host2" in _lines(script)
    assert "#SBATCH --nodes=2" in _lines(script)
    assert _said(warnings, "kept: #PBS -l nodes=host1:ppn=4+host2:ppn=4 as "
                 "--nodelist=host1,host2")
    assert spec.constraints.features == []  # host names are not properties
    assert '#BSUB -m "host1 host2"' in _lines(translate(text, "lsf")[0])
    assert "#$ -l hostname=host1|host2" in _lines(translate(text, "sge")[0])
    assert "#flux: --requires=host:host1,host2" in _lines(translate(text, "flux")[0])
    bare = _lines(translate(_torque("host1+host2"), "slurm")[0])
    assert "#SBATCH --nodelist=host1,host2" in bare and "#SBATCH --nodes=2" in bare
    # at its own PBS the line stays as written
    assert "#PBS -l nodes=host1:ppn=4+host2:ppn=4" in _lines(translate(text, "pbs")[0])


@pytest.mark.parametrize("nodes, feature", [("2:ppn=4", None), ("1:ppn=4:gpu", "gpu")])
def test_torque_counts_and_properties_name_no_host(nodes: str, feature: str | None) -> None:
    script, warnings, spec = translate(_torque(nodes), "slurm")
    assert "nodelist" not in script and not _said(warnings, "host")
    assert spec.constraints.features == ([feature] if feature else [])


def test_torque_count_beside_a_named_host() -> None:
    """`nodes=2:ppn=4+node07:ppn=4`: node07 and two others: Slurm's --nodelist beside
    -N 3; a host list the job's nodes come from among (LSF -m) would not say that."""
    text = _torque("2:ppn=4+node07:ppn=4")
    slurm = _lines(translate(text, "slurm")[0])
    assert "#SBATCH --nodelist=node07" in slurm and "#SBATCH --nodes=3" in slurm
    script, warnings, _ = translate(text, "lsf")
    assert "node07" not in script
    assert _said(warnings, "dropped: #PBS -l nodes=2:ppn=4+node07:ppn=4",
                 "asks 3 node(s) of the 1 host(s)")


def test_torque_hosts_shared_are_said_dropped() -> None:
    script, warnings, _ = translate(_torque("n1:ppn=4+n1:ppn=4"), "slurm")
    assert "nodelist" not in script
    assert _said(warnings, "dropped: #PBS -l nodes=n1:ppn=4+n1:ppn=4", "sharing one host")


def test_sites_check_torque_hosts() -> None:
    assert run(_torque("c03:ppn=8"), hera()).verdict("hera").feasible
    assert reasons(run(_torque("zz9:ppn=8"), hera()), "hera") == \
        "#PBS -l nodes=zz9:ppn=8 names host(s) this site does not have: zz9"
    assert reasons(run(_torque("h1:ppn=8+h9:ppn=8"), lsfq()), "lsfq") == (
        "#PBS -l nodes=h1:ppn=8+h9:ppn=8 names host(s) this site does not have: h9 (bsub "
        "refuses -m naming a host it does not know)")
