"""Follow-ups to the seventeenth sweep of batch scripts (tests/test_scripts_unseen17.py): an
LSF error file named without an output file (LSF mails the job's stdout, the others write
it to their default file) is said in both directions; a PBS Pro shrink-to-fit job is placed
with its min_walltime as the time it may be cut to and its max_walltime as its limit, and
Slurm's --time-min reaches PBS as min_walltime (with --time as max_walltime); a padded
array index (`%4a`) reaching LSF and Grid Engine is said."""

from __future__ import annotations

from pathlib import Path

from test_placement_cases import NOW, H, _node, only, reasons, run

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.translate import get_script_dialect, translate
from diamond_jupyter.model import Partition, SiteSnapshot

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen17"


def _stdout_said(warnings: list[str]) -> list[str]:
    return [w for w in warnings if w.startswith("approximated: stdout:")]


def test_lsf_error_file_alone_says_where_stdout_goes_elsewhere():
    """bsub -eo FILE without -o: stderr to FILE, stdout mailed with the job report. Slurm,
    PBS, Grid Engine and flux write stdout to their default file instead: it was unsaid."""
    text = (HERE / "lsf" / "eo_only_no_o.lsf").read_text()
    defaults = {"slurm": "slurm-%j.out", "pbs": "<job name>.o<job number>",
                "sge": "<job name>.o<job id>", "flux": "flux-{{id}}.out"}
    for target, default in defaults.items():
        script, warnings, _ = translate(text, target, "lsf")
        back = get_script_dialect(target).parse_script(script)
        assert back.stdout is None and back.stderr, target  # (PBS keeps %J's literally)
        assert _stdout_said(warnings) == [
            "approximated: stdout: only an error file is named (errors.%j.log); lsf mails it "
            f"to the submitter (no -o), {target} writes it to its default file, {default}"]
    # in its own dialect nothing moves
    _, warnings, _ = translate(text, "lsf", "lsf")
    assert _stdout_said(warnings) == []


def test_error_file_alone_reaching_lsf_says_its_stdout_is_mailed():
    sources = {"slurm": "#SBATCH -e e.log\n#SBATCH -t 5", "pbs": "#PBS -e e.log",
               "sge": "#$ -e e.log", "flux": "#flux: --error=e.log"}
    for source, header in sources.items():
        script, warnings, _ = translate(f"#!/bin/bash\n{header}\n./a\n", "lsf", source)
        assert "#BSUB -e" in script and "#BSUB -o" not in script
        said = _stdout_said(warnings)
        assert len(said) == 1 and said[0].endswith(
            "lsf mails it to the submitter (no -o)"), (source, warnings)
    # both files named, or one joined file: stdout goes where it went
    for text, source in (("#!/bin/bash\n#SBATCH -o o.log\n#SBATCH -e e.log\n./a\n", "slurm"),
                         ("#!/bin/bash\n#PBS -e e.log\n#PBS -j eo\n./a\n", "pbs"),
                         ("#!/bin/bash\n#SBATCH -o o.log\n./a\n", "slurm")):
        assert _stdout_said(translate(text, "lsf", source)[1]) == []
    # between two schedulers that write a default file: not said
    assert _stdout_said(translate("#!/bin/bash\n#SBATCH -e e.log\n./a\n", "pbs", "slurm")[1]) \
        == []


def test_slurm_time_min_reaches_pbs_as_min_walltime():
    """sbatch --time-min beside --time is PBS Pro's shrink-to-fit job; it was said dropped
    and the job sent with its full walltime."""
    script, warnings, _ = translate(
        "#!/bin/bash\n#SBATCH -N 2 --time=6:00:00 --time-min=1:00:00\n./a\n", "pbs", "slurm")
    assert "#PBS -l min_walltime=01:00:00\n#PBS -l max_walltime=06:00:00\n" in script
    assert "walltime=06" not in script.replace("max_walltime", "")
    assert ("kept: #SBATCH -N 2 --time=6:00:00 --time-min=1:00:00 as -l min_walltime=01:00:00"
            ", -l max_walltime=06:00:00 (a shrink-to-fit job: PBS Pro sets its walltime "
            "between its --time-min and its --time as it starts)") in warnings
    assert not any(w.startswith("dropped:") and "time-min" in w for w in warnings)
    # and back: the same job
    again, _, _ = translate(script, "slurm", "pbs")
    assert "#SBATCH --time=06:00:00\n#SBATCH --time-min=01:00:00\n" in again
    # --time-min alone: up to the queue's limit
    script, warnings, _ = translate("#!/bin/bash\n#SBATCH --time-min=30\n./a\n", "pbs",
                                    "slurm")
    assert "#PBS -l min_walltime=00:30:00\n" in script and "max_walltime" not in script
    assert any("from its --time-min up to the queue's limit" in w for w in warnings)
    # a --time-min above --time (not a range): kept out, said dropped as before
    script, warnings, _ = translate("#!/bin/bash\n#SBATCH -t 10 --time-min=30\n./a\n", "pbs",
                                    "slurm")
    assert "#PBS -l walltime=00:10:00" in script and "min_walltime" not in script
    assert any(w.startswith("dropped:") and "--time-min 30" in w for w in warnings)


def _pbs_queue_of(max_h: float):
    """A PBS site whose one queue, workq, takes at most `max_h` hours."""
    nodes = [_node("c1", 72, 256000, ["workq"]), _node("c2", 72, 256000, ["workq"])]
    return (SiteConfig(name="pbs", scheduler="pbs"),
            SiteSnapshot(site="pbs", taken_at=NOW, nodes=nodes, partitions=[
                Partition(name="workq", default=True, max_time_s=int(max_h * H),
                          nodes=["c1", "c2"])]))


def test_pbs_shrink_to_fit_job_is_placed_with_its_walltime_range():
    """min_walltime=1h, max_walltime=6h: PBS Pro gives it a walltime between the two. It
    was placed with no time limit at all (an hour assumed): a queue of 4 h was taken as
    holding the whole job, a queue of 30 min as well."""
    script = (HERE / "pbs" / "pro_min_max_walltime.pbs").read_text()
    script = script.removeprefix("#!/bin/bash\n").replace("mpiexec ./restartable_solver\n",
                                                           "")
    # the 8 h queue takes it whole: its runtime is bounded by the max, not an hour
    v = only(run(script, _pbs_queue_of(8)), "pbs", "workq")
    assert v.estimated_runtime_s == 6 * H, v
    # the 4 h queue: PBS sets its walltime to the queue's limit, above its min
    v = only(run(script, _pbs_queue_of(4)), "pbs", "workq")
    assert v.estimated_runtime_s == 4 * H
    assert ("queue workq: time limit cut to 4:00:00, its resources_max.walltime (at least "
            "the job's min_walltime 1:00:00, below its max_walltime 6:00:00)") in v.notes, v
    assert ("expected runtime 6:00:00 exceeds the limit queue workq cuts its walltime to "
            "4:00:00: the job may time out") in v.notes
    # a 30 min queue cannot give it even its min
    p = run(script, _pbs_queue_of(0.5))
    assert reasons(p, "pbs") == ("walltime 6:00:00 above queue workq resources_max.walltime "
                                 "0:30:00 (and min_walltime 1:00:00 too)")
