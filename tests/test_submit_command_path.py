"""A configured command path relative to the home (`commands: {sbatch: bin/x}`) names the
same program wherever the submit runs: from the home it stays relative, from the job's
working directory it is made absolute. The home is asked for only when such a path needs
it."""

from __future__ import annotations

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.model import JobSpec
from diamond_jupyter.sites import Site
from diamond_jupyter.transports.base import CommandResult

HOME = "/home/u"


class Recording:
    """A transport that answers the home query and a submit, and records every command."""

    def __init__(self) -> None:
        self.commands: list[list[str]] = []

    async def run(self, argv, **_kw) -> CommandResult:
        self.commands.append(list(argv))
        out = f"{HOME}\n" if "$HOME" in argv[-1] else "4242\n"
        return CommandResult(argv=list(argv), exit_status=0, stdout=out, stderr="",
                             duration_s=0.0)


def site(commands: dict[str, str]) -> tuple[Site, Recording]:
    cfg = SiteConfig(name="a", scheduler="slurm", workdir="/scratch/u/diamond",
                     commands=commands)
    rec = Recording()
    return Site(cfg, transport=rec), rec  # type: ignore[arg-type]


def home_asked(rec: Recording) -> int:
    return sum("$HOME" in c[-1] for c in rec.commands)


async def test_a_relative_submit_command_is_made_absolute_from_the_jobs_directory():
    s, rec = site({"sbatch": "bin/logged-sbatch"})
    sub = await s.submit(JobSpec(command="true", working_directory="/scratch/u/run"), "t1")
    assert sub.native_id == "4242" and home_asked(rec) == 1
    line = rec.commands[-1][-1]
    assert f"{HOME}/bin/logged-sbatch " in line and "./bin" not in line and "~/" not in line


async def test_a_tilde_submit_command_is_the_homes_from_the_jobs_directory():
    s, rec = site({"sbatch": "~/wrappers/sbatch"})
    await s.submit(JobSpec(command="true", working_directory="/scratch/u/run"), "t2")
    assert f"{HOME}/wrappers/sbatch " in rec.commands[-1][-1]


async def test_an_absolute_submit_command_needs_no_home():
    s, rec = site({"sbatch": "/opt/slurm/bin/sbatch"})
    await s.submit(JobSpec(command="true", working_directory="/scratch/u/run"), "t3")
    assert home_asked(rec) == 0
    assert "/opt/slurm/bin/sbatch " in rec.commands[-1][-1]


async def test_a_command_run_elsewhere_asks_for_the_home_only_for_a_relative_path():
    s, rec = site({"squeue": "/opt/slurm/bin/squeue", "scancel": "bin/scancel"})
    await s.run(["squeue", "--me"], cwd="/scratch/u/run")
    assert home_asked(rec) == 0 and rec.commands[-1][0] == "/opt/slurm/bin/squeue"
    await s.run(["env", "-u", "X", "scancel", "1"], cwd="/scratch/u/run")
    assert home_asked(rec) == 1 and rec.commands[-1][3] == f"{HOME}/bin/scancel"
    await s.run(["scancel", "2"])  # from the home, where ./bin is the same program
    assert rec.commands[-1][0] == "bin/scancel"


async def test_a_configured_bhist_path_is_the_one_lsf_accounting_runs(tmp_path):
    """`commands: {bhist: PATH}` is accepted for an LSF site; the accounting query runs
    bhist inside `sh -c` (its status dropped), where the path was not applied: a site whose
    LSF programs are off the PATH read no history, and a job bjobs had forgotten was taken
    as lost. Run for real through the local transport, with a bhist only at that path."""
    bhist = tmp_path / "lsf-bin" / "bhist"
    bhist.parent.mkdir()
    bhist.write_text("#!/bin/sh\nshift 3\nfor j do\n"  # past -l -n N
                     "echo \"Job <$j>, User <ana>, Project <default>, Command <true>\"\n"
                     "echo 'Sun Dec  6 07:47:38: Submitted from host <l>, to Queue <q>, "
                     "CWD <$HOME>;'\n"
                     "echo 'Sun Dec  6 07:57:39: Done successfully. The CPU time used is "
                     "0.0 seconds;'\necho '%s'\ndone\n" % ("-" * 78))
    bhist.chmod(0o755)
    cfg = SiteConfig(name="wren", scheduler="lsf", workdir=str(tmp_path / "w"),
                     transport=TransportConfig(kind="local"), commands={"bhist": str(bhist)})
    s = Site(cfg)
    try:
        res = await s.run(s.commands.accounting_argv(["4101", "4102"]), check=False)
        records = s.commands.parse_accounting(res.stdout)
    finally:
        await s.close()
    assert [(r.native_id, r.state.value, r.exit_code) for r in records] == [
        ("4101", "COMPLETED", 0), ("4102", "COMPLETED", 0)]
