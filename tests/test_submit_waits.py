"""Options that make a scheduler's submit command wait, submitted through the Federation
to recorded sites of every scheduler (a local site whose submit command keeps the script it
was given and answers a job id). An interactive job (LSF `-I*`, `-XF`; PBS `-I`, `-X`,
`-W interactive=true`) needs the submitting terminal: refused before anything runs, saying
what to do instead. An option that only makes the submit command wait for the job's end
(Slurm `--wait`, LSF `-K`, PBS `-W block=true`, Grid Engine `-sync y`, flux `--wait`,
`--wait-event`, `--watch`) is dropped with a warning: the job runs the same and the engine
follows it. Before, each was written back as kept, and the submit hung until its
time-out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.model import BadInput, JobSpec

# the submit command of each scheduler, as the engine runs it, and its answer
SUBMIT = {"slurm": ("sbatch", "77"), "pbs": ("qsub", "77.server"),
          "lsf": ("bsub", "Job <77> is submitted to queue <normal>."),
          "flux": ("flux", "f2Ab"), "sge": ("qsub", "77")}


def _fed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """One local site of each scheduler; its submit command copies the script it got (its
    last argument, else its input) to `<site>.script` and answers a job id."""
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    sites = []
    for kind, (program, answer) in SUBMIT.items():
        fake = tmp_path / f"{kind}-submit"
        kept = tmp_path / f"{kind}.script"
        fake.write_text('#!/bin/sh\nlast=""\nfor a in "$@"; do last="$a"; done\n'
                        f'if [ -f "$last" ]; then cat "$last" > {kept}; '
                        f"else cat > {kept}; fi\necho '{answer}'\n")
        fake.chmod(0o755)
        sites.append(SiteConfig(name=kind, scheduler=kind,
                                transport=TransportConfig(kind="local"),
                                workdir=str(tmp_path / kind), commands={program: str(fake)}))
    fed = Federation(FederationConfig(sites=sites), store=Store(tmp_path / "s.sqlite"))

    async def same(site: str, spec: JobSpec, caps: Any = None) -> JobSpec:
        return spec

    async def fits(spec: JobSpec, site: str, **kw: Any) -> None:
        return None
    monkeypatch.setattr(fed, "adapt_to_site", same)
    monkeypatch.setattr(fed, "check_site", fits)
    return fed


@pytest.mark.parametrize("site,lines,gone,stays", [
    ("slurm", "#SBATCH -t 5\n#SBATCH --wait", "--wait", "#SBATCH --time"),
    ("slurm", "#SBATCH -W\n#SBATCH -t 5", "#SBATCH -W", "#SBATCH --time"),
    ("lsf", "#BSUB -W 5\n#BSUB -K", "-K", "#BSUB -W"),
    ("pbs", "#PBS -l walltime=0:05:00\n#PBS -W block=true", "block", "walltime"),
    ("pbs", "#PBS -l walltime=0:05:00\n#PBS -W block=true,umask=022", "block",
     "#PBS -W umask=022"),
    ("sge", "#$ -l h_rt=300\n#$ -sync y", "-sync", "h_rt"),
    ("flux", "#FLUX: -t 5m\n#FLUX: --wait", "--wait", "#flux: --time-limit"),
    ("flux", "#FLUX: -t 5m\n#FLUX: --wait-event=clean", "--wait", "#flux: --time-limit"),
    ("flux", "#FLUX: -t 5m\n#FLUX: --watch", "--watch", "#flux: --time-limit"),
])
async def test_an_option_that_waits_for_the_jobs_end_is_dropped_with_a_warning(
        tmp_path, monkeypatch, site, lines, gone, stays):
    fed = _fed(tmp_path, monkeypatch)
    try:
        spec = fed.spec_from_text(f"#!/bin/bash\n{lines}\necho hi\n", None)
        rendered = fed.site(site).render(spec)
        assert any(w.startswith("dropped: ") and "the engine follows the job itself" in w
                   for w in rendered.warnings), rendered.warnings
        job = await fed.submit(spec, site)
        assert job.native_id is not None and job.native_id.startswith(SUBMIT[site][1][:1]
                                                                      if site == "flux"
                                                                      else "77")
        sent = [x for x in (tmp_path / f"{site}.script").read_text().splitlines()
                if x.startswith("#") and not x.startswith("#!")]
        assert not [x for x in sent if gone in x] and [x for x in sent if stays in x], sent
    finally:
        await fed.close()


@pytest.mark.parametrize("site,line,said", [
    ("lsf", "#BSUB -Is", "bsub -Is runs an interactive job"),
    ("lsf", "#BSUB -I", "bsub -I runs an interactive job"),
    ("lsf", "#BSUB -Ip", "bsub -Ip runs an interactive job"),
    ("lsf", "#BSUB -ISs", "bsub -ISs runs an interactive job"),
    ("lsf", "#BSUB -IX", "bsub -I runs an interactive job"),  # read as -I and -X
    ("lsf", "#BSUB -XF", "bsub -XF forwards the job's X11 windows"),
    ("pbs", "#PBS -I", "qsub -I runs an interactive job"),
    ("pbs", "#PBS -X", "qsub -X forwards an interactive job's X11 windows"),
    ("pbs", "#PBS -W interactive=true", "-W interactive=true runs an interactive job"),
])
async def test_an_interactive_job_is_refused_before_anything_runs(tmp_path, monkeypatch,
                                                                 site, line, said):
    fed = _fed(tmp_path, monkeypatch)
    try:
        spec = fed.spec_from_text(f"#!/bin/bash\n{line}\necho hi\n", None)
        with pytest.raises(BadInput) as refused:
            await fed.submit(spec, site)
        why = str(refused.value)
        assert why.startswith(f"{line.strip()!r}: {said}")
        assert "remove it to run the script as a batch job" in why \
            or "remove it (a batch job has no display)" in why
        assert fed.store.list_jobs() == [] and not (tmp_path / f"{site}.script").exists()
        # placed anywhere, it is refused too: the job wants a terminal wherever it runs
        with pytest.raises(BadInput, match="interactive|X11"):
            await fed.plan_submit(spec, "slurm")
    finally:
        await fed.close()


def test_options_that_wait_for_nothing_are_kept():
    # `-sync n` waits for nothing; LSF -W is the run limit, PBS -W depend a dependency
    from diamond_jupyter.dialects import get_script_dialect

    for kind, text, kept in (("sge", "#$ -sync n\n", "-sync n"),
                             ("pbs", "#PBS -W umask=022\n", "-W umask=022")):
        d = get_script_dialect(kind)
        out = d.render_script(d.parse_script("#!/bin/bash\n" + text + "echo hi\n"))
        assert kept in out.script and not any("engine follows" in w for w in out.warnings)
