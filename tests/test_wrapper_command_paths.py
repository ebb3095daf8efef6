"""A configured command path (`commands: {qacct: /opt/sge/bin/qacct}`) is the program the
older `sh -c` wrappers run too, not only a command's first word: each wrapper is run for
real through the local transport, with every scheduler program it starts existing only at
its configured path and logging that it ran."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.sites import Site, with_command_paths
from diamond_jupyter.transports.base import CommandResult

Wrapper = Callable[[Any], list[str]]

# (scheduler, which wrapper, how the dialect builds it, the programs it must run)
CASES: list[tuple[str, str, Wrapper, tuple[str, ...]]] = [
    ("sge", "accounting", lambda c: c.accounting_argv(["7", "8"]), ("qacct",)),
    ("sge", "find by name", lambda c: c.find_by_name_argv("nm"), ("qstat", "qacct")),
    ("sge", "find by name and user", lambda c: c.find_by_name_argv("nm", "ana"),
     ("qstat", "qacct")),
    ("sge", "held submit", lambda c: c.submit_argv("/nonexistent/job.sh", hold=True),
     ("qsub",)),
    ("sge", "queues", lambda c: c.snapshot_argvs()["queues"], ("qconf",)),
    ("sge", "scheduler config", lambda c: c.snapshot_argvs()["sconf"], ("qconf",)),
    ("sge", "complexes", lambda c: c.snapshot_argvs()["complexes"], ("qconf",)),
    ("sge", "quotas", lambda c: c.snapshot_argvs()["quotas"], ("qconf",)),
    ("sge", "throttles", lambda c: c.followup_argvs(
        {"queue": "<job_info><job_info><job_list state='pending'><JB_job_number>5"
                  "</JB_job_number><tasks>1-4:1</tasks></job_list></job_info></job_info>"}
    )["throttles"], ("qstat",)),
    *[("sge", key, lambda c, k=key: c.snapshot_argvs()[k], ("qconf",))
      for key in ("pe_rules", "hostgroups", "access_lists", "projects", "calendars")],
    *[("lsf", key, lambda c, k=key: c.snapshot_argvs()[k], (program,))
      for key, program in (("queue_users", "bqueues"), ("queue_long", "bqueues"),
                           ("shared_resources", "bhosts"), ("job_rusage", "bjobs"))],
    ("slurm", "QOS", lambda c: c.snapshot_argvs()["qos"], ("sacctmgr",)),
    ("slurm", "reservations", lambda c: c.snapshot_argvs()["reservations"], ("scontrol",)),
    ("slurm", "licenses", lambda c: c.snapshot_argvs()["licenses"], ("scontrol",)),
    ("slurm", "associations", lambda c: c.snapshot_argvs()["assoc"], ("sacctmgr",)),
    ("slurm", "association usage", lambda c: c.snapshot_argvs()["assoc_usage"],
     ("sshare",)),
    ("slurm", "QOS usage", lambda c: c.snapshot_argvs()["qos_usage"], ("scontrol",)),
    ("slurm", "config", lambda c: c.snapshot_argvs()["config"], ("scontrol",)),
    ("slurm", "priority factors", lambda c: c.snapshot_argvs()["priority_factors"],
     ("sshare", "sacctmgr")),
    ("slurm", "job priorities", lambda c: c.snapshot_argvs()["job_priorities"], ("sprio",)),
    ("lsf", "queue limits", lambda c: c.snapshot_argvs()["queue_limits"], ("bqueues",)),
    ("lsf", "host groups", lambda c: c.snapshot_argvs()["host_groups"], ("bmgroup",)),
    ("lsf", "user groups", lambda c: c.snapshot_argvs()["user_groups"], ("bugroup",)),
    ("lsf", "limits", lambda c: c.snapshot_argvs()["limits"], ("blimits",)),
    ("lsf", "resource names", lambda c: c.snapshot_argvs()["resource_names"], ("lsinfo",)),
    ("lsf", "host partitions", lambda c: c.snapshot_argvs()["host_partitions"],
     ("bhpart",)),
    ("lsf", "arrays", lambda c: c.snapshot_argvs()["arrays"], ("bjobs",)),
    ("pbs", "find by name", lambda c: c.find_by_name_argv("nm"), ("qselect",)),
    ("pbs", "reservations", lambda c: c.snapshot_argvs()["reservations"], ("pbs_rstat",)),
    ("pbs", "accounting", lambda c: c.accounting_argv(["7.s", "8.s"]), ("tracejob",)),
    ("lsf", "accounting", lambda c: c.accounting_argv(["7", "8"]), ("bhist",)),
    ("flux", "queue config", lambda c: c.snapshot_argvs()["queue_config"], ("flux",)),
    ("flux", "several releases", lambda c: c.release_argv(["f1", "f2"]), ("flux",)),
]


def fake_programs(home: Path, names: tuple[str, ...], log: Path) -> dict[str, str]:
    """Each of `names` at a path of its own (nowhere on the PATH), logging its run."""
    where = home / "site-bin"
    where.mkdir()
    paths = {}
    for name in names:
        program = where / f"site-{name}"
        program.write_text(f'#!/bin/sh\necho "{name} $*" >> \'{log}\'\nexit 0\n')
        program.chmod(0o755)
        paths[name] = str(program)
    return paths


@pytest.mark.parametrize(("scheduler", "wrapper", "build", "programs"), CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
async def test_a_wrapper_runs_each_program_from_its_configured_path(
        tmp_path: Path, scheduler: str, wrapper: str, build: Wrapper,
        programs: tuple[str, ...]) -> None:
    log = tmp_path / "ran.log"
    log.touch()
    cfg = SiteConfig(name="wren", scheduler=scheduler, workdir=str(tmp_path / "w"),
                     transport=TransportConfig(kind="local"),
                     commands=fake_programs(tmp_path, programs, log))
    site = Site(cfg)
    try:
        await site.run(build(site.commands), check=False)
    finally:
        await site.close()
    ran = {line.split(" ", 1)[0] for line in log.read_text().splitlines()}
    assert ran == set(programs), f"{wrapper}: ran {sorted(ran)}"


def test_only_a_program_started_as_a_command_takes_its_path() -> None:
    """Not a word in double quotes, an assignment, a longer name, nor any single-quoted
    text (a value shlex.quote gave, an awk program)."""
    script = ('echo "qstat said"; x=qstat; qstatx -j 1; for q in $(qconf -sql); do '
              'exec qconf -sq "$q"; done; timeout -s KILL 10 qstat -j 2 | qstat -f; '
              'timeout -k 5 9 qconf -sc && timeout -v 9 qconf -ss; '
              "echo 'a; qstat b' | awk '{ qstat }'")
    paths = {"qstat": "/opt/it's/qstat", "qconf": "/opt/sge/qconf"}
    assert with_command_paths(script, paths) == (
        'echo "qstat said"; x=qstat; qstatx -j 1; for q in $(/opt/sge/qconf -sql); do '
        "exec /opt/sge/qconf -sq \"$q\"; done; timeout -s KILL 10 '/opt/it'\"'\"'s/qstat' "
        "-j 2 | '/opt/it'\"'\"'s/qstat' -f; timeout -k 5 9 /opt/sge/qconf -sc && "
        "timeout -v 9 /opt/sge/qconf -ss; echo 'a; qstat b' | awk '{ qstat }'")


class Recording:
    """A transport that answers the home query and records every command."""

    def __init__(self) -> None:
        self.commands: list[list[str]] = []

    async def run(self, argv, **_kw) -> CommandResult:
        self.commands.append(list(argv))
        out = "/home/u\n" if "$HOME" in argv[-1] else ""
        return CommandResult(argv=list(argv), exit_status=0, stdout=out, stderr="",
                             duration_s=0.0)


async def test_a_relative_path_in_a_wrapper_run_elsewhere_is_made_absolute() -> None:
    """From another directory `bin/qacct` (in the home) would name another program: the
    home is asked, once, and the script runs the home's."""
    cfg = SiteConfig(name="a", scheduler="sge", workdir="/scratch/u/diamond",
                     commands={"qacct": "bin/qacct", "qstat": "/opt/sge/qstat"})
    rec = Recording()
    site = Site(cfg, transport=rec)  # type: ignore[arg-type]
    await site.run(site.commands.accounting_argv(["7"]), cwd="/scratch/u/run")
    asked_home = [c for c in rec.commands if "$HOME" in c[-1]]
    assert len(asked_home) == 1
    assert "do /home/u/bin/qacct -j" in rec.commands[-1][2]
    await site.run(site.commands.find_by_name_argv("nm"), cwd="/scratch/u/run")
    assert len([c for c in rec.commands if "$HOME" in c[-1]]) == 1
    assert "/opt/sge/qstat -xml" in rec.commands[-1][2]
