"""A seventh set of realistic batch scripts (tests/fixtures/scripts_unseen7/<dialect>/), and
PBS chunk lists of several shapes read as what they are.

The chunk lists first: `-l select=1:ncpus=8:mem=64gb+4:ncpus=32:mpiprocs=32` (a head node
and workers), three different chunks, Torque `nodes=` lists of different shapes were read
as their largest shape on every node (five nodes of 32 tasks with 64 GB each, where the job
asks for 129 tasks and 64 GB). They are now a job of several shapes (`JobSpec.components`):
its totals summed over the chunks, a Slurm heterogeneous job (`#SBATCH hetjob`), PBS chunks
as written, and for LSF, flux and Grid Engine (one shape each) the totals spread evenly and
rounded down, said in a warning. A Slurm hetjob whose later components ask only for sizes
is read the same way.

The fixtures: see the EXPECTED table's comments. Each is parsed, its needs read, translated
into every dialect (its own too) and read back; the key values are what each scheduler's
documentation says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import (
    SCRIPT_DIALECTS,
    get_script_dialect,
    request_totals,
    translate,
)
from diamond_jupyter.needs import needs_of
from tests.scripts_unseen_check import (
    check_translation,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen7"
G = 1024  # MB in a GB

# ---------------------------------------------------------------- chunk lists of several shapes

_CHUNKS = [
    # a head node with memory and four MPI workers
    ("select=1:ncpus=8:mem=64gb+4:ncpus=32:mpiprocs=32",
     dict(nodes=5, tasks=129, cpus=136, gpus=None, memory_mb=64 * G)),
    # three different chunks: a small head, CPU workers, one GPU node
    ("select=1:ncpus=4:mem=16gb+2:ncpus=64:mpiprocs=64:mem=200gb+1:ncpus=16:ngpus=4:mem=100gb",
     dict(nodes=4, tasks=130, cpus=148, gpus=4, memory_mb=(16 + 400 + 100) * G)),
    # hybrid MPI+OpenMP workers (4 CPUs a rank) and a post-processing chunk
    ("select=2:ncpus=64:mpiprocs=16:mem=128gb+1:ncpus=8:mpiprocs=8:mem=32gb",
     dict(nodes=3, tasks=40, cpus=136, gpus=None, memory_mb=288 * G)),
    # Torque: different ppn and GPUs per node, one job-wide memory
    ("nodes=1:ppn=4:gpus=2+3:ppn=16",
     dict(nodes=4, tasks=52, cpus=52, gpus=2, memory_mb=None)),
]


@pytest.mark.parametrize(("select", "totals"), _CHUNKS)
def test_pbs_chunks_of_different_shapes_are_their_sums(select: str,
                                                       totals: dict[str, Any]) -> None:
    """Chunks that differ were read as as many nodes as all of them, each of the largest
    chunk's size (`select=1:ncpus=8:mem=64gb+4:ncpus=32:mpiprocs=32`: 160 tasks and 320 GB
    where the job asks for 129 tasks and 64 GB; every translation then refused or asked for
    more). Now the job's totals are the chunks' sums; placement still asks each node for
    the largest chunk (the resources)."""
    text = f"#!/bin/bash\n#PBS -l {select}\n#PBS -l walltime=02:00:00\n./run\n"
    spec = get_script_dialect("pbs").parse_script(text)
    assert request_totals(spec) == totals
    assert len(spec.components) == select.count("+") + 1
    assert any("read as a job of" in n for n in spec.metadata["parse_notes"])
    # the PBS round trip keeps the chunks as written
    own = translate(text, "pbs", "pbs")[0]
    assert f"#PBS -l {select}" in own.splitlines()
    # Slurm: a heterogeneous job, one component a chunk, read back with the same totals
    script, warnings, _ = translate(text, "slurm", "pbs")
    assert script.count("#SBATCH hetjob") == select.count("+")
    back = get_script_dialect("slurm").parse_script(script)
    assert request_totals(back) == totals and back.unknown == []
    assert back.resources.walltime_s == 7200
    # each node must still hold the largest chunk (placement's question)
    assert needs_of(back).gpus == needs_of(spec).gpus
    for target in SCRIPT_DIALECTS:
        check_translation(text, "pbs", target)


@pytest.mark.parametrize("target", ["lsf", "flux", "sge"])
def test_a_job_of_several_shapes_reaches_one_shape_schedulers_said(target: str) -> None:
    """LSF, flux and Grid Engine ask for one shape: the nodes and tasks as they are, the
    CPUs, GPUs and memory spread evenly and rounded down, in one warning naming the shapes
    (they refused the translation: the largest shape on every node is more than asked)."""
    text = ("#!/bin/bash\n#PBS -l select=1:ncpus=8:mem=64gb+4:ncpus=32:mpiprocs=32\n"
            "#PBS -l walltime=1:00:00\n./run\n")
    script, warnings, spec = translate(text, target, "pbs")
    said = [w for w in warnings if w.startswith("approximated: a job of 2 shapes")]
    assert len(said) == 1, warnings
    assert "1 node, 1 task, 8 CPUs, 65536MB of memory + 4 nodes, 128 tasks, 128 CPUs" in said[0]
    assert "CPUs 136 -> 129" in said[0]
    back = request_totals(get_script_dialect(target).parse_script(script))
    assert back["tasks"] == 129
    assert all(back[q] is None or back[q] <= request_totals(spec)[q] for q in back)


def test_slurm_hetjob_of_sizes_is_a_job_of_several_shapes() -> None:
    """A hetjob whose later components ask only for sizes was read as its first component
    alone (placement and every translation saw one node of 8 CPUs); now its totals are the
    components' sums, PBS gets a chunk per component, and its own Slurm the same job."""
    text = ("#!/bin/bash\n#SBATCH --job-name=coupled --time=02:00:00\n"
            "#SBATCH -N 1 -n 1 -c 8 --mem=64G\n#SBATCH hetjob\n"
            "#SBATCH --nodes=4 --ntasks-per-node=32 --gpus-per-node=a100:4\n"
            "srun ./a : ./b\n")
    spec = get_script_dialect("slurm").parse_script(text)
    assert request_totals(spec) == dict(nodes=5, tasks=129, cpus=136, gpus=16,
                                        memory_mb=64 * G)
    assert spec.unknown == [] and spec.resources.gpu_type == "a100"
    assert needs_of(spec).gpus == 4 and needs_of(spec).gpu_type == "a100"
    pbs = translate(text, "pbs", "slurm")[0]
    assert "#PBS -l select=1:ncpus=8:mpiprocs=1:mem=64gb+4:ncpus=32:mpiprocs=32:ngpus=4" \
        in pbs.splitlines()
    own, warnings, _ = translate(text, "slurm", "slurm")
    assert "#SBATCH hetjob\n#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=32\n" \
        "#SBATCH --gpus-per-node=a100:4" in own
    assert not any("GPU type" in w for w in warnings), warnings
    for target in SCRIPT_DIALECTS:
        check_translation(text, "slurm", target)
    # a later component with options of its own (a partition) is still kept as written
    other = text.replace("--gpus-per-node=a100:4", "--gpus-per-node=a100:4 -p gpu")
    kept = get_script_dialect("slurm").parse_script(other)
    assert kept.components == [] and [d.option for d in kept.unknown][:2] == \
        ["hetjob", "--nodes"]


def test_a_changed_request_is_one_shape_again() -> None:
    """A face that changes a job of several shapes (`--memory`) makes it one shape: the
    components no longer count, the resources are rendered."""
    from diamond_jupyter.needs import with_options

    spec = get_script_dialect("pbs").parse_script(
        "#!/bin/bash\n#PBS -l select=1:ncpus=8+2:ncpus=4:mpiprocs=4\n./run\n")
    assert request_totals(spec)["tasks"] == 9
    changed = with_options(spec, memory="8G")
    assert request_totals(changed) == dict(nodes=3, tasks=12, cpus=24, gpus=None,
                                           memory_mb=3 * 8 * G)
    assert "+" not in get_script_dialect("pbs").render_script(changed).script


@pytest.mark.parametrize(("target", "line"), [
    ("slurm", "#SBATCH --array=1-100%8"), ("lsf", "#BSUB -J array[1-100]%8"),
    ("sge", "#$ -tc 8"), ("pbs", "#PBS -J 1-100%8")])
def test_pbs_pro_array_throttle_is_kept(target: str, line: str) -> None:
    """PBS Pro's `-J 1-100%8` (at most 8 subjobs at once): the limit reaches every
    scheduler that has one; flux (no arrays in flux batch) says the array is dropped."""
    text = "#!/bin/bash\n#PBS -J 1-100%8\n#PBS -l select=1:ncpus=1\n./run\n"
    assert line in translate(text, target, "pbs")[0].splitlines()
    warnings = translate(text, "flux", "pbs")[1]
    assert any(w.startswith("dropped: array 1-100%8") for w in warnings)


def test_an_indented_sbatch_line_is_a_comment() -> None:
    """sbatch reads a directive only where a line starts with `#SBATCH` (src/sbatch/opt.c
    compares the line's first characters; other lines starting with white space then `#`
    are comments). An indented `  #SBATCH --time=48:00:00` was read as a directive: the
    job got a limit sbatch never sets, and every translation carried it. Now it is noted
    as ignored and stays in the body as the comment it is."""
    text = ("#!/bin/bash\n#SBATCH -N 1 -n 4\n  #SBATCH --time=48:00:00\n"
            "\t#SBATCH --partition=long\n#SBATCH -J ok\nsrun ./a\n")
    spec = get_script_dialect("slurm").parse_script(text)
    assert (spec.resources.walltime_s, spec.queue, spec.name) == (None, None, "ok")
    notes = [n for n in spec.metadata["parse_notes"] if "indented" in n]
    assert [n.split(":")[0] for n in notes] == ["line 3", "line 4"]
    assert "  #SBATCH --time=48:00:00" in (spec.script or "")
    # only indented lines: no directive sbatch reads
    from diamond_jupyter.dialects.translate import detect_dialect
    from diamond_jupyter.model import BadInput
    with pytest.raises(BadInput, match="no batch directives"):
        detect_dialect("#!/bin/bash\n  #SBATCH -N 2\nsrun ./a\n")


def test_slurm_a_repeated_export_is_the_last_one() -> None:
    """sbatch keeps the last `--export` whole (a string option: the later value replaces
    the earlier). The reader merged them: `--export=A=1,C` then `--export=ALL,B=2` gave
    the job A=1 and C too, which sbatch never passes. A repeated `--mail-type` adds up
    (sbatch ORs the events), each event once (BEGIN twice was listed twice)."""
    text = ("#!/bin/bash\n#SBATCH --export=A=1,C\n#SBATCH --export=ALL,B=2\n"
            "#SBATCH --mail-type=BEGIN\n#SBATCH --mail-type=BEGIN,END\n"
            "#SBATCH --mail-type=NONE\n./a\n")
    spec = get_script_dialect("slurm").parse_script(text)
    env = spec.environment
    assert (env.export_all, env.variables, env.passed) == (True, {"B": "2"}, [])
    assert spec.mail_events == ["begin", "end"]
    own = translate(text, "slurm", "slurm")[0].splitlines()
    assert "#SBATCH --export=ALL,B=2" in own and "#SBATCH --mail-type=BEGIN,END" in own
    # a later value that cannot be read is kept alone, the earlier one gone
    odd = get_script_dialect("slurm").parse_script(
        "#!/bin/bash\n#SBATCH --export=A=1\n#SBATCH --export=ALL,=x\n./a\n")
    assert odd.environment.variables == {} and [d.value for d in odd.unknown] == ["ALL,=x"]


@pytest.mark.parametrize(("lines", "back"), [
    ("#PBS -l ncpus=96\n#PBS -l mem=380GB", ["#PBS -l ncpus=96", "#PBS -l mem=380gb"]),
    ("#PBS -l ncpus=16\n#PBS -l ngpus=2", ["#PBS -l ncpus=16", "#PBS -l ngpus=2"]),
])
def test_pbs_job_wide_resources_come_back_job_wide(lines: str, back: list[str]) -> None:
    """`-l ncpus=96 -l mem=380GB` asks for the job's CPUs and memory, shaped by the server
    (NCI Gadi spreads them over whole 48-core nodes). The script's own PBS got
    `select=1:ncpus=96:mem=380gb` back: one host of 96 CPUs (none exists there), read back
    as one node and one task where the script named neither. Now written back job-wide."""
    text = f"#!/bin/bash\n{lines}\n#PBS -l walltime=1:00:00\n./a\n"
    own = translate(text, "pbs", "pbs")[0].splitlines()
    assert all(x in own for x in back) and not any("select=" in x for x in own), own
    spec = get_script_dialect("pbs").parse_script(text)
    assert request_totals(get_script_dialect("pbs").parse_script("\n".join(own))) == \
        request_totals(spec)
    # from another scheduler, one chunk as before
    assert "#PBS -l select=1:ncpus=8" in translate(
        "#!/bin/bash\n#SBATCH -c 8\n./a\n", "pbs", "slurm")[0].splitlines()
