"""A flux batch script whose commands hold a line flux reads as a directive (a
here-document's `# flux: -N 4` for an inner job): flux batch refuses it (RFC 36: directives
stop at the first command, and one after it is an orphan), so submitting it to a flux site
is refused here, naming the line and what to write instead, whatever scheduler the script
was written for; other sites run it. The tests marked `fault` failed before."""

from __future__ import annotations

import pytest

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.dialects import get_script_dialect
from diamond_jupyter.model import BadInput, JobSpec
from diamond_jupyter.sites import Site

HEREDOC = ("cat > inner.sh <<'END'\n#!/bin/bash\n# flux: -N 4\nhostname\nEND\n"
           "flux batch inner.sh\n")
FLUX = "#!/bin/bash\n# flux: -N 1\n# flux: -t 10m\n" + HEREDOC
SLURM = "#!/bin/bash\n#SBATCH -N 1\n#SBATCH -t 10\n" + HEREDOC


def _site(scheduler: str) -> Site:
    return Site(SiteConfig(name="s1", scheduler=scheduler, workdir="/w",
                           transport=TransportConfig(kind="local")))


def _prepared(scheduler: str, script: str, dialect: str) -> JobSpec:
    spec = get_script_dialect(dialect).parse_script(script)
    return _site(scheduler).prepare(spec, "c0ffee000001")


@pytest.mark.parametrize("script,dialect", [(FLUX, "flux"), (SLURM, "slurm")])
def test_fault_a_here_documents_flux_directive_is_refused_at_submit_to_flux(script, dialect):
    """It was noted at most, and the script went to flux batch, which refused it."""
    with pytest.raises(BadInput) as e:
        _prepared("flux", script, dialect)
    said = str(e.value)
    assert said.startswith("site 's1' (flux): line 3 of the job's commands, `# flux: -N 4`, "
                           "is a flux directive after the first command: flux batch refuses "
                           "the script (an orphan directive"), said
    assert "move it up among the job's directives" in said and \
        "write that script to a file of its own" in said and "\n" not in said, said


@pytest.mark.parametrize("line", ["flux: --queue=debug", "-- flux: -N 2", "  #FLUX: -c 2"])
def test_fault_any_line_flux_reads_as_a_directive_is_refused(line):
    """In a Slurm script's commands (a flux script's own are refused as it is read)."""
    with pytest.raises(BadInput, match=f"line 2 of the job's commands, `{line.strip()}`, "
                                       "is a flux directive after the first command"):
        _prepared("flux", f"#!/bin/bash\n#SBATCH -N 1\nhostname\n{line}\n", "slurm")


@pytest.mark.parametrize("scheduler", ["slurm", "pbs", "lsf", "sge"])
def test_other_schedulers_take_the_here_document_as_written(scheduler):
    spec = _prepared(scheduler, SLURM, "slurm")
    assert "# flux: -N 4\n" in spec.script


@pytest.mark.parametrize("body", [
    "echo '# flux: -N 4' > inner.sh\n",          # a line starting with a letter
    "printf '# flux: -N 4\\n' > inner.sh\n",
    "# a comment about flux\nhostname\n",         # `flux` not followed by `:`
    "# fluxion: -N 4\n",
])
def test_lines_flux_does_not_read_as_directives_are_submitted(body):
    spec = _prepared("flux", f"#!/bin/bash\n# flux: -N 1\nhostname\n{body}", "flux")
    assert body in spec.script
    assert "#flux: --nodes=1" in _site("flux").script.render_script(spec).script
