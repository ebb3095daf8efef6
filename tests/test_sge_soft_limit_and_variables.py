"""Sweep 14's follow-ups: Grid Engine's `-l s_rt` (SIGUSR1 that long into the run, queue_conf(5))
carried as the warning signal Slurm, flux and LSF can send before a time limit, and the
scheduler variables without a prefix (Grid Engine's `$QUEUE`, PBS Pro's `$NCPUS`) and
`$TMPDIR` mapped or said, never passed silently."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects.body import translate_body
from diamond_jupyter.dialects.translate import translate

SGE = "#!/bin/bash\n#$ -l h_rt=2:00:00,s_rt=1:50:00\n#$ -pe smp 4\n#$ -j y\n{body}\n"


def _said(warnings: list[str], text: str) -> list[str]:
    return [w for w in warnings if text in w]


@pytest.mark.parametrize("target, line, seconds_said", [
    ("slurm", "#SBATCH --signal=USR1@600", "600 s"),
    ("flux", "#flux: --signal=USR1@10m", "600 s"),
    ("lsf", "#BSUB -wa USR1\n#BSUB -wt 10", "600 s"),
])
def test_s_rt_below_h_rt_is_a_warning_signal(target, line, seconds_said):
    script, warnings, _ = translate(SGE.format(body="echo"), target, "sge")
    assert line in script
    said = _said(warnings, "s_rt=1:50:00")
    assert len(said) == 1 and said[0].startswith("approximated:")
    assert f"a signal {seconds_said} before the time limit" in said[0]
    # Grid Engine's end at s_rt + notify is not kept, and that is said
    assert "notify time after s_rt" in said[0]
    assert not _said(warnings, "dropped:")


def test_s_rt_goes_to_pbs_and_grid_engine_not_otherwise():
    _, warnings, _ = translate(SGE.format(body="echo"), "pbs", "sge")
    assert _said(warnings, "dropped: #$ -l h_rt=2:00:00,s_rt=1:50:00 (-l s_rt")


@pytest.mark.parametrize("limits", [
    "-l s_rt=1:00:00",  # no h_rt: no time limit to count the signal from
    "-l h_rt=1:00:00,s_rt=1:00:00",  # h_rt ends it first
    "-l h_rt=1:00:00,s_rt=2:00:00",
    "-l h_rt=1:00:00,s_rt=INFINITY",
])
def test_s_rt_that_sends_no_warning_before_the_limit_stays_dropped(limits):
    script, warnings, _ = translate(f"#!/bin/bash\n#$ {limits}\necho\n", "slurm", "sge")
    assert "--signal" not in script
    assert _said(warnings, "dropped:") and _said(warnings, "s_rt")


def test_s_rt_with_empty_fields_and_seconds():
    # 1:: is an hour; h_rt 5400 s: USR1 at 3600 s, 1800 s before the limit
    script, _, _ = translate("#!/bin/bash\n#$ -l h_rt=5400\n#$ -l s_rt=1::\necho\n",
                             "slurm", "sge")
    assert "#SBATCH --signal=USR1@1800" in script


def test_a_soft_request_s_rt_is_not_a_signal():
    script, warnings, _ = translate(
        "#!/bin/bash\n#$ -l h_rt=2:00:00\n#$ -soft -l s_rt=1:50:00\necho\n", "slurm", "sge")
    assert "--signal" not in script
    assert _said(warnings, "s_rt=1:50:00")


@pytest.mark.parametrize("target, expected, unsaid", [
    ("slurm", "$SLURM_JOB_PARTITION", True),
    ("pbs", "$PBS_QUEUE", True),
    ("lsf", "$LSB_QUEUE", True),
    ("flux", "$QUEUE", False),  # flux has no such variable: kept, said
])
def test_grid_engine_queue_variable(target, expected, unsaid):
    script, warnings, _ = translate(SGE.format(body='echo "$QUEUE"'), target, "sge")
    assert f'echo "{expected}"' in script
    assert bool(_said(warnings, "$QUEUE (queue)")) is not unsaid


def test_queue_variables_between_the_others():
    body, notes = translate_body("echo $PBS_QUEUE ${SLURM_JOB_PARTITION:-x}", "pbs", "lsf")
    assert body == "echo $LSB_QUEUE ${SLURM_JOB_PARTITION:-x}"
    body, _ = translate_body("echo ${SLURM_JOB_PARTITION:-x}", "slurm", "sge")
    assert body == "echo ${QUEUE:-x}"


def test_pbs_ncpus_of_one_task_is_its_cpus_else_said():
    one = "#!/bin/bash\n#PBS -l select=1:ncpus=8\n#PBS -j oe\nexport OMP_NUM_THREADS=$NCPUS\n"
    script, warnings, _ = translate(one, "slurm", "pbs")
    assert "export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK" in script
    assert not _said(warnings, "NCPUS")
    # ompthreads sets NCPUS apart from the chunk's CPUs: kept and said
    threads = one.replace("ncpus=8", "ncpus=8:ompthreads=4")
    script, warnings, _ = translate(threads, "slurm", "pbs")
    assert "=$NCPUS" in script
    assert _said(warnings, "kept: line 4: $NCPUS (first chunk's threads) has no slurm "
                           "equivalent")
    # several chunks: NCPUS is the first one's alone
    many = one.replace("select=1:ncpus=8", "select=2:ncpus=8:mpiprocs=8")
    script, warnings, _ = translate(many, "lsf", "pbs")
    assert "=$NCPUS" in script and _said(warnings, "$NCPUS (first chunk's threads)")


def test_the_scripts_own_variables_of_those_names_are_left_alone():
    body, notes = translate_body("QUEUE=long\nexport NCPUS=4\necho $QUEUE $NCPUS $JOB_ID",
                                 "sge", "slurm")
    assert body.splitlines()[-1] == "echo $QUEUE $NCPUS $SLURM_JOB_ID"
    assert notes == []
    body, notes = translate_body("for NCPUS in 1 2; do echo $NCPUS; done", "pbs", "slurm",
                                 one_task_cpus=True)
    assert body == "for NCPUS in 1 2; do echo $NCPUS; done" and notes == []


@pytest.mark.parametrize("source, target, said", [
    ("sge", "slurm", True), ("pbs", "slurm", True), ("slurm", "pbs", True),
    ("sge", "lsf", True), ("pbs", "flux", True),
    ("sge", "pbs", False), ("pbs", "sge", False),  # both make one of the job's own
])
def test_tmpdir_meaning_said_where_it_differs(source, target, said):
    _, notes = translate_body('cp in "$TMPDIR"/\ncd ${TMPDIR}', source, target)
    tmp = [n for n in notes if "$TMPDIR" in n]
    assert len(tmp) == (2 if said else 0)
    if said:
        assert tmp[0].startswith("kept: line 1: $TMPDIR: under ")
    # a script that sets TMPDIR itself means its own directory
    _, notes = translate_body('TMPDIR=/scratch/me\ncd "$TMPDIR"', source, target)
    assert not [n for n in notes if "$TMPDIR" in n]


def test_lsf_and_slurm_variables_without_their_prefix():
    # LSF's LS_SUBCWD is the submit directory (mapped), LS_EXECCWD has no equivalent
    # (said); Slurm's SLURMD_NODENAME (the node the script runs on) is said elsewhere.
    # Before, all three passed unsaid: their names lack LSB_ and SLURM_
    body, notes = translate_body("cd $LS_SUBCWD; echo $LS_EXECCWD", "lsf", "slurm")
    assert body == "cd $SLURM_SUBMIT_DIR; echo $LS_EXECCWD"
    assert notes == ["kept: line 1: $LS_EXECCWD has no slurm equivalent"]
    body, notes = translate_body("echo ${SLURMD_NODENAME}", "slurm", "pbs")
    assert body == "echo ${SLURMD_NODENAME}"
    assert notes == ["kept: line 1: $SLURMD_NODENAME has no pbs equivalent"]
