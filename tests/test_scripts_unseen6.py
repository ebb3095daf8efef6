"""Faults found by the sixth sweep of unseen batch scripts (its fixtures follow)."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, request_totals, translate
from diamond_jupyter.model import BadInput
from tests.scripts_unseen_check import check_translation


@pytest.mark.parametrize(("lines", "per_chunk", "slot_mem"), [
    ("-n 32 --mem=64g", "select=32:ncpus=1:mpiprocs=1:mem=2gb", "rusage[mem=2GB]"),
    ("-n 4 --mem=8G", "select=4:ncpus=1:mpiprocs=1:mem=2gb", "rusage[mem=2GB]"),
    ("-n 2 -c 4 --mem=8G", "select=2:ncpus=4:mpiprocs=1:mem=4gb", "rusage[mem=4GB]"),
    ("-n 3 --mem=8G", "select=3:ncpus=1:mpiprocs=1:mem=2730mb", "rusage[mem=2730MB]"),
])
def test_memory_per_node_without_a_node_count_reaches_pbs_and_lsf(
        lines: str, per_chunk: str, slot_mem: str) -> None:
    """`#SBATCH -n 4 --mem=8G` (no --nodes: the tasks go where Slurm puts them, 8G on each
    node, read as one node's 8G) was refused by the PBS and LSF translations: each task's
    chunk (slot) asked for the whole 8G, 32G in all. Now the memory is shared by the tasks,
    rounded down (never more than asked), and reported."""
    text = f"#!/bin/bash\n#SBATCH {lines}\nsrun ./a\n"
    want = request_totals(get_script_dialect("slurm").parse_script(text))["memory_mb"]
    for target, line in (("pbs", f"#PBS -l {per_chunk}"), ("lsf", f'#BSUB -R "{slot_mem}')):
        script, warnings, _ = translate(text, target, "slurm")
        assert any(x.startswith(line) for x in script.splitlines()), script
        got = request_totals(get_script_dialect(target).parse_script(script))["memory_mb"]
        assert want - int(lines.split()[1]) < got <= want  # rounded down by under a task's MB
        assert any(w.startswith("approximated: memory") and "per node as" in w
                   for w in warnings), warnings
        check_translation(text, "slurm", target)
    # a node count keeps the node's memory on each node, as before
    one = translate("#!/bin/bash\n#SBATCH -N 1 -n 4 --mem=8G\nsrun ./a\n", "pbs", "slurm")[0]
    assert "#PBS -l select=1:ncpus=4:mpiprocs=4:mem=8gb" in one.splitlines()


def test_torque_node_exclusive_flag_is_read_back() -> None:
    """The PBS renderer writes a Torque job's exclusive nodes as `#PBS -n` (qsub -n, node
    exclusive), but the reader kept `-n` as an unknown option: a Torque script with
    naccesspolicy=singlejob came back from its own dialect not exclusive, with `-n` kept,
    and every other scheduler lost the exclusivity."""
    text = ("#!/bin/bash\n#PBS -l nodes=1:ppn=20,walltime=3600\n#PBS -l naccesspolicy=singlejob\n"
            "#PBS -W x=QOS:long\n./a\n")
    own = translate(text, "pbs", "pbs")[0]
    assert "#PBS -n" in own.splitlines()
    back = get_script_dialect("pbs").parse_script(own)
    assert back.constraints.exclusive is True and back.unknown == \
        get_script_dialect("pbs").parse_script(text).unknown
    spec = get_script_dialect("pbs").parse_script(
        "#!/bin/bash\n#PBS -l nodes=2:ppn=8\n#PBS -n\n./a\n")
    assert (spec.constraints.exclusive, spec.unknown) == (True, [])
    assert "#SBATCH --exclusive" in translate(
        "#!/bin/bash\n#PBS -l nodes=2:ppn=8\n#PBS -n\n./a\n", "slurm", "pbs")[0].splitlines()


@pytest.mark.parametrize(("dialect", "line", "value", "form"), [
    ("slurm", "#SBATCH --array=1-5:0", "1-5:0", "0-99:2%10"),
    ("slurm", "#SBATCH --array=0-15%0", "0-15%0", "0-99:2%10"),
    ("slurm", "#SBATCH -a 9-3", "9-3", "0-99:2%10"),
    ("pbs", "#PBS -J 5-1", "5-1", "1-100:2"),
    ("pbs", "#PBS -J 1-10:0", "1-10:0", "1-100:2"),
    ("pbs", "#PBS -t 1-4%0", "1-4%0", "1-10%2"),
    ("lsf", '#BSUB -J "scan[1-10:0]"', "scan[1-10:0]", "sweep[1-100:2]%10"),
    ("lsf", '#BSUB -J "scan[8-2]%2"', "scan[8-2]%2", "sweep[1-100:2]%10"),
    ("sge", "#$ -t 1-10:0", "1-10:0", "1-100:2"),
    ("sge", "#$ -t 10-1", "10-1", "1-100:2"),
])
def test_a_job_array_no_scheduler_runs_is_bad_input_naming_the_line(
        dialect: str, line: str, value: str, form: str) -> None:
    """A step or a running limit of 0, or a range that runs backwards, is refused by sbatch,
    qsub and bsub. The readers took it, and every translation (into the script's own
    dialect too) then failed with `array.expression '1-5:0' is not ...`, naming no line.
    Now bad input at the line, with the form its scheduler takes."""
    text = f"#!/bin/bash\n{line}\n./a\n"
    for call in (lambda: get_script_dialect(dialect).parse_script(text),
                 lambda: translate(text, dialect, dialect)):
        with pytest.raises(BadInput) as exc:
            call()
        msg = str(exc.value)
        assert msg.startswith(f"line 2: bad job array {value!r} in `{line}`"), msg
        assert msg.endswith(f"e.g. {form}"), msg


@pytest.mark.parametrize(("dialect", "lines", "limit"), [
    ("sge", "#$ -t 1-10\n#$ -tc 0", "-tc"),
    ("pbs", "#PBS -J 1-10\n#PBS -W max_run_subjobs=0", "max_run_subjobs"),
])
def test_a_running_limit_of_zero_is_bad_input(dialect: str, lines: str, limit: str) -> None:
    """Grid Engine's -tc and PBS Pro's max_run_subjobs asked for 'a positive integer' but
    took 0, making the array `1-10%0`, which no translation could write."""
    with pytest.raises(BadInput, match=rf"line 3: bad {limit}.*expected a positive integer"):
        get_script_dialect(dialect).parse_script(f"#!/bin/bash\n{lines}\n./a\n")


@pytest.mark.parametrize("value", ["afterok:12:", "afterok::12", "afterany:12,afterok:"])
def test_pbs_an_empty_job_id_in_a_dependency_is_kept_as_written(value: str) -> None:
    """`-W depend=afterok:12:` gave the job a dependency on the job '' (job_ids
    ['12', '']), written back as `afterok:12` everywhere, the script's own PBS included,
    without a word. Now kept as written, as Slurm's reader keeps an --dependency it cannot
    read, and reported elsewhere."""
    text = f"#!/bin/bash\n#PBS -W depend={value}\n./a\n"
    spec = get_script_dialect("pbs").parse_script(text)
    assert (spec.dependencies, [d.option for d in spec.unknown]) == ([], ["-W"])
    assert f"#PBS -W depend={value}" in translate(text, "pbs", "pbs")[0].splitlines()
    warnings = translate(text, "slurm", "pbs")[1]
    assert any(w.startswith(f"dropped: #PBS -W depend={value}") for w in warnings), warnings
