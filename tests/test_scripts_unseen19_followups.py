"""Follow-ups of the nineteenth sweep of batch scripts (tests/test_scripts_unseen19.py).

A dependency's job ids name jobs of the scheduler the script was written for: translated to
another scheduler they name nothing there (or another user's job), yet were carried as
written. A Slurm `--output=$HOME/x` (sbatch writes it literally) reached Grid Engine, which
expands $HOME, unsaid. PBS chunks of different shapes naming their hosts reached Slurm's
heterogeneous job without them (said dropped), and a Slurm hetjob's per-component
`--nodelist` kept every later component unread."""

from __future__ import annotations

import pytest

from diamond_jupyter.cli.main import main
from diamond_jupyter.dialects import get_script_dialect
from diamond_jupyter.dialects.translate import SCRIPT_DIALECTS, translate
from diamond_jupyter.model import Dependency

# (source dialect, directive, the option as said, the id as said)
_DEPENDENCIES = [
    ("slurm", "#SBATCH --dependency=afterok:1234", "--dependency", "1234"),
    ("pbs", "#PBS -W depend=afterok:1234.server", "-W depend", "1234.server"),
    ("lsf", '#BSUB -w "done(1234)"', "-w", "1234"),
    ("sge", "#$ -hold_jid 1234", "-hold_jid", "1234"),
    ("flux", "#flux: --dependency=afterok:\u0192A8bn3Lq", "--dependency", "\u0192A8bn3Lq"),
]


def _script(line: str) -> str:
    return f"#!/bin/bash\n{line}\n./app\n"


@pytest.mark.parametrize(("source", "line", "option", "jid"), _DEPENDENCIES)
def test_a_dependency_on_a_source_job_is_not_written_for_another_scheduler(
        source: str, line: str, option: str, jid: str) -> None:
    """Each translation to another scheduler drops it, saying the option, the id and whose
    job it is; the source's own dialect keeps it."""
    for target in SCRIPT_DIALECTS:
        script, warnings, spec = translate(_script(line), target, source)
        assert spec.dependencies and spec.dependencies[0].scheduler == source
        back = get_script_dialect(target).parse_script(script)
        if target == source:
            assert [i for d in back.dependencies for i in d.job_ids] == [jid], target
            assert not [w for w in warnings if "site the script was written for" in w]
            continue
        assert back.dependencies == [] and "1234" not in script, target
        said = [w for w in warnings if w.startswith("dropped: dependency ")
                and f"({source} {option}: job {jid} is a job of the {source} site the "
                    "script was written for" in w]
        assert len(said) == 1, (target, warnings)
        assert f"on {target} that id names no job" in said[0]


@pytest.mark.parametrize(("source", "line", "target", "want"), [
    ("slurm", "#SBATCH --dependency=afterok:1234", "pbs", "#PBS -W depend=afterok:1234"),
    ("pbs", "#PBS -W depend=afterok:1234", "slurm", "#SBATCH --dependency=afterok:1234"),
    ("lsf", '#BSUB -w "done(1234)"', "sge", "#$ -hold_jid 1234"),
    ("sge", "#$ -hold_jid 1234", "lsf", '#BSUB -w "ended(1234)"'),
])
def test_ids_said_to_be_the_targets_are_written(source: str, line: str, target: str,
                                                want: str) -> None:
    script, warnings, _ = translate(_script(line), target, source, dependency_ids="target")
    assert want in script.splitlines()
    assert not [w for w in warnings if "site the script was written for" in w]


def test_dependency_ids_takes_source_or_target_only() -> None:
    with pytest.raises(Exception, match=r"dependency_ids 'mine'.*source.*target"):
        translate(_script("#SBATCH --dependency=afterok:1"), "pbs", "slurm",
                  dependency_ids="mine")  # type: ignore[arg-type]


def test_the_cli_takes_the_ids_as_the_targets_when_told(tmp_path, capsys) -> None:
    path = tmp_path / "job.sh"
    path.write_text(_script("#SBATCH --dependency=afterok:77"))
    assert main(["translate", "--to", "pbs", str(path)]) == 0
    out = capsys.readouterr()
    assert "depend" not in out.out and "dropped: dependency afterok:77 (slurm" in out.err
    assert main(["translate", "--to", "pbs", "--target-job-ids", str(path)]) == 0
    assert "#PBS -W depend=afterok:77" in capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("target", list(SCRIPT_DIALECTS))
def test_a_dependency_the_engine_adds_is_written_for_any_scheduler(target: str) -> None:
    """The workflow engine waits on a job of the site the step goes to: a dependency
    added to a parsed step (no scheduler of its own) is written whatever the script's
    dialect."""
    spec = get_script_dialect("slurm").parse_script("#!/bin/bash\n#SBATCH -n 1\n./a\n")
    spec.dependencies.append(Dependency(kind="afterok", job_ids=["77"]))
    rendered = get_script_dialect(target).render_script(spec)
    back = get_script_dialect(target).parse_script(rendered.script)
    assert [i for d in back.dependencies for i in d.job_ids] == ["77"], rendered.script
    assert not [w for w in rendered.warnings if "77" in w and w.startswith("dropped")]


# ---------------------------------------------------------------- $HOME in a Slurm output

def test_slurm_home_in_an_output_path_is_said_for_grid_engine() -> None:
    text = ("#!/bin/bash\n#SBATCH -n 1\n#SBATCH --output=$HOME/logs/%j.out\n"
            "#SBATCH --error=/scratch/e.txt\n./a\n")
    script, warnings, _ = translate(text, "sge", "slurm")
    assert "#$ -o $HOME/logs/$JOB_ID.out" in script.splitlines()
    assert [w for w in warnings if w.startswith("approximated: $HOME")] == [
        "approximated: $HOME in output path '$HOME/logs/%j.out' (sbatch writes it literally, "
        "under a directory named $HOME) is expanded by Grid Engine to the job owner's home "
        "directory; the output goes there (write the directory's path without $ to keep the "
        "Slurm file's place)"]
    for target in ("slurm", "pbs", "lsf", "flux"):  # none of them expands it either
        _, warnings, _ = translate(text, target, "slurm")
        assert not [w for w in warnings if w.startswith("approximated: $HOME")], target


# ---------------------------------------------------------------- hosts of each shape

_PBS_HOSTS = "#!/bin/bash\n#PBS -l select=1:ncpus=4:host=a+1:ncpus=8:host=b\n" \
             "#PBS -l walltime=1:00:00\n./a\n"


def _components(script: str) -> list[list[str]]:
    """A Slurm script's #SBATCH lines, component by component."""
    out: list[list[str]] = [[]]
    for line in script.splitlines():
        if line == "#SBATCH hetjob":
            out.append([])
        elif line.startswith("#SBATCH "):
            out[-1].append(line)
    return out


def test_pbs_chunks_of_two_shapes_on_named_hosts_reach_slurm_component_by_component():
    script, warnings, _ = translate(_PBS_HOSTS, "slurm", "pbs")
    first, second = _components(script)
    assert "#SBATCH --nodelist=a" in first and "#SBATCH --cpus-per-task=4" in first
    assert "#SBATCH --nodelist=b" in second and "#SBATCH --cpus-per-task=8" in second
    assert "kept: #PBS -l select=1:ncpus=4:host=a+1:ncpus=8:host=b as the --nodelist of " \
        "each hetjob component (component 0: a, component 1: b)" in warnings
    assert not [w for w in warnings if w.startswith("dropped")], warnings
    # read back as the same job: two components, each with its host
    back = get_script_dialect("slurm").parse_script(script)
    assert [(c.nodes, c.cpus_per_task) for c in back.components] == [(1, 4), (1, 8)]
    assert back.metadata["slurm_component_nodelists"] == ["b"]
    again, _, _ = translate(script, "slurm", "slurm")
    assert again == script


def test_a_chunk_naming_no_host_gets_no_nodelist():
    text = "#!/bin/bash\n#PBS -l select=2:ncpus=4+1:ncpus=8:host=b\n./a\n"
    script, warnings, _ = translate(text, "slurm", "pbs")
    first, second = _components(script)
    assert not [x for x in first if "nodelist" in x] and "#SBATCH --nodelist=b" in second
    assert any("component 0: any host, component 1: b" in w for w in warnings)


def test_other_schedulers_still_say_the_hosts_of_each_shape_dropped():
    for target in ("lsf", "flux"):  # (Grid Engine refuses the two shapes: one -pe size)
        _, warnings, _ = translate(_PBS_HOSTS, target, "pbs")
        assert any(w.startswith("dropped: #PBS -l select=1:ncpus=4:host=a") and
                   "the chunks differ" in w for w in warnings), target


_SLURM_HET = ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --cpus-per-task=4\n"
              "#SBATCH --nodelist=a\n#SBATCH --time=1:00:00\n#SBATCH hetjob\n"
              "#SBATCH --nodes=2\n#SBATCH --cpus-per-task=8\n#SBATCH --nodelist=b[1-2]\n./a\n")


def test_a_slurm_hetjob_component_naming_its_hosts_is_read():
    """It kept every later component unread (only the first counted)."""
    spec = get_script_dialect("slurm").parse_script(_SLURM_HET)
    assert [(c.nodes, c.cpus_per_task) for c in spec.components] == [(1, 4), (2, 8)]
    assert spec.metadata["slurm_component_nodelists"] == ["b[1-2]"]
    script, _, _ = translate(_SLURM_HET, "slurm", "slurm")
    assert [[x for x in c if "nodelist" in x] for c in _components(script)] == [
        ["#SBATCH --nodelist=a"], ["#SBATCH --nodelist=b[1-2]"]]


def test_a_slurm_hetjob_reaches_pbs_as_chunks_on_their_hosts():
    script, warnings, _ = translate(_SLURM_HET, "pbs", "slurm")
    assert "#PBS -l select=1:ncpus=4:host=a+1:ncpus=8:host=b1+1:ncpus=8:host=b2" \
        in script.splitlines()
    assert "kept: --nodelist=b[1-2] of hetjob component 1 as its chunks on b1, b2 (host=)" \
        in warnings
    assert not [w for w in warnings if w.startswith("dropped")], warnings
    back = get_script_dialect("pbs").parse_script(script)
    assert sum(c.nodes or 0 for c in back.components) == 3


def test_a_component_not_one_node_a_host_is_said_dropped_for_pbs():
    text = _SLURM_HET.replace("--nodelist=b[1-2]", "--nodelist=b1")
    script, warnings, _ = translate(text, "pbs", "slurm")
    assert "host=b1" not in script and "host=a" in script
    assert any(w.startswith("dropped: --nodelist=b1 of hetjob component 1 (its 2:ncpus=8")
               for w in warnings), warnings
