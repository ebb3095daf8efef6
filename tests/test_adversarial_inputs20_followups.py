"""Follow-ups of sweep 20 (test_adversarial_inputs20.py), without the test bed: a tab in a
job's name reached a Slurm, LSF or Flux queue as is though the note said "blanks become
'_'"; a refused spec field was named by the spec's word (`queue`) where the user wrote
`--partition`; errors raised inside the spec's validator lacked the "submit: spec." the
others carry; and the REST sweeps' site could reach the real /usr/bin/sbatch.

Tests marked `fault` failed on the code before these fixes; the others are guards."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sweep_helpers
from sweep_helpers import sbatch_calls

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.model import JobSpec
from diamond_jupyter.sites import Site

user = sweep_helpers.new_user


def _submitted_script(user) -> str:
    [call] = sbatch_calls(user)
    return Path(call.split()[-1]).read_text()


# ---- (1) a tab in a job's name: the renderer and the note agree, on every scheduler --------

def test_fault_a_tab_in_a_name_reaches_no_slurm_queue_and_is_said(user):
    """`--name 'run<TAB>2'` reached sbatch as is, where it shifts the columns of squeue's
    listing; now the queue gets `run_2` and stderr says so."""
    res = user.run("submit", "--site", "alpha", "--name", "run\t2", "job.sh", code=0)
    assert "diamond: job name 'run\\t2' is 'run_2' in alpha's queue (a name slurm accepts)" \
        in res.stderr.splitlines(), res.stderr
    assert "#SBATCH --job-name=run_2\n" in _submitted_script(user)


_DIRECTIVE = {"slurm": r"#SBATCH --job-name=(.*)", "pbs": r"#PBS -N (.*)",
              "lsf": r"#BSUB -J (.*)", "flux": r"#flux: --job-name=(.*)", "sge": r"#\$ -N (.*)"}


@pytest.mark.parametrize("scheduler", list(_DIRECTIVE))
@pytest.mark.parametrize("name", ["run\t2", "a b\tc", "tab\t\tx"])
def test_fault_the_name_rendered_is_the_name_the_notes_end_with(scheduler, name):
    """Whatever the scheduler, the name its script carries is the last one the notes give,
    and it holds no tab."""
    site = Site(SiteConfig(name="s1", scheduler=scheduler, workdir="/w",
                           transport=TransportConfig(kind="local")))
    spec = site.prepare(JobSpec(name=name, command="true"), "c0ffee000001")
    script = site.script.render_script(spec).script
    [rendered] = [m.group(1) for line in script.splitlines()
                  if (m := re.fullmatch(_DIRECTIVE[scheduler], line))]
    notes = spec.metadata["name_notes"]
    last = re.search(r" (?:as|is) ('[^']*') ", notes[-1]).group(1)
    assert rendered.strip("'\"") == last.strip("'") and "\t" not in rendered, (notes, rendered)


@pytest.mark.parametrize("scheduler", ["slurm", "lsf", "flux"])
def test_fault_translate_says_a_tab_made_underscore(scheduler):
    """`diamond translate` of a spec whose name holds a tab says the change, as for
    brackets (LSF) or a leading digit (PBS)."""
    from diamond_jupyter.dialects import get_script_dialect

    out = get_script_dialect(scheduler).render_script(JobSpec(name="a\tb", command="true"))
    assert any(w.startswith("approximated: job name 'a\\tb' as 'a_b' (")
               and "a tab or other white space in a name shifts the columns" in w
               for w in out.warnings), out.warnings


@pytest.mark.parametrize("scheduler", ["slurm", "lsf", "flux"])
def test_a_plain_blank_is_still_the_engines_to_change(scheduler):
    """(guard) A translation keeps a blank where its scheduler takes one (the engine makes it
    '_' when it submits, with its own note)."""
    from diamond_jupyter.dialects import get_script_dialect

    dialect = get_script_dialect(scheduler)
    assert dialect.job_name("my run") == "my run"
    out = dialect.render_script(JobSpec(name="my run", command="true"))
    assert not [w for w in out.warnings if "job name" in w]
