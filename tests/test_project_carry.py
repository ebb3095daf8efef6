"""A project (PBS Pro `qsub -P project`, Grid Engine `qsub -P project`): both name the
project the job belongs to (its account is `-A` in both), but each was said dropped at the
other (found by the eleventh script sweep). It is now carried over as written, said; a
Torque script's `-P` (a user to run the job as) is not a project and is still dropped."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, translate

PRO = "#!/bin/bash\n#PBS -l select=1:ncpus=4\n#PBS -P chem-ml\n#PBS -A acct1\n./a\n"
SGE = "#!/bin/bash\n#$ -pe smp 4\n#$ -P genomics\n#$ -P lab-x\n#$ -A acct2\n./a\n"
TORQUE = "#!/bin/bash\n#PBS -l nodes=1:ppn=4\n#PBS -P alice\n./a\n"


@pytest.mark.parametrize(("text", "source", "target", "line"), [
    (PRO, "pbs", "sge", "#$ -P chem-ml"),
    (SGE, "sge", "pbs", "#PBS -P lab-x"),  # the last -P wins, as qsub reads them
])
def test_a_project_reaches_the_other_schedulers_minus_p(text, source, target, line) -> None:
    script, warnings, _ = translate(text, target, source)
    assert line in script.splitlines()
    assert any(w.startswith("approximated:") and "project" in w for w in warnings), warnings
    assert not any(w.startswith("dropped:") and " -P " in w and line.split()[-1] in w
                   for w in warnings), warnings
    back = get_script_dialect(target).parse_script(script)
    assert [(d.option, d.value) for d in back.unknown] == [("-P", line.split()[-1])]
    assert back.account in ("acct1", "acct2")  # the account stays the account


def test_a_torque_minus_p_is_a_user_not_a_project() -> None:
    script, warnings, _ = translate(TORQUE, "sge", "pbs")
    assert "-P" not in script.replace("#!/bin/bash", "")
    assert any(w.startswith("dropped: #PBS -P alice") for w in warnings), warnings


@pytest.mark.parametrize("target", ["slurm", "lsf", "flux"])
def test_elsewhere_a_project_is_still_said_dropped(target: str) -> None:
    warnings = translate(PRO, target, "pbs")[1]
    assert any(w.startswith("dropped: #PBS -P chem-ml") for w in warnings), warnings
