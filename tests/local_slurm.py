"""A local Slurm site at the wire level: a real `Site` on the local transport whose `squeue`
prints the queue a test writes (a line of SQUEUE_FIELDS per job), for recovery by token
without the test bed; and a sites file of one local Slurm site answering with recorded
real outputs (`recorded_sites_file`); and a local Slurm site whose discovery a test holds
(`held_discovery_site`)."""

from __future__ import annotations

import getpass
import os
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import yaml

from diamond_jupyter.config import SiteConfig, TransportConfig
from diamond_jupyter.model import ArraySpec, Dependency, Job, JobSpec, JobState, utcnow
from diamond_jupyter.sites import Site, token_tag

RECORDED = Path(__file__).parent / "fixtures" / "outputs" / "slurm"  # real Slurm outputs


ONE_PARTITION = ("PartitionName=batch Default=YES MaxTime=01:00:00 Nodes=c1 State=UP "
                 "TotalNodes=1 TotalCPUs=8")


def write_commands(bin_dir: Path, commands: dict[str, str]) -> str:
    """Each of `commands` (a name: its sh body) as an executable script in `bin_dir` (made
    here); the preamble that puts them first on PATH."""
    bin_dir.mkdir()
    for name, body in commands.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return f"export PATH='{bin_dir}':$PATH"


def held_discovery_site(tmp_path: Path, node: str, *, workdir: str,
                        **settings: object) -> SiteConfig:
    """Slurm site `alpha` on the local transport, working in tmp_path/`workdir`: `scontrol`
    answers the partition ONE_PARTITION, the node line `node` (inside sh double quotes, $D
    being tmp_path) and cluster alpha, first waiting for a line on the FIFO tmp_path/go
    (made here) while tmp_path/hold exists; its other commands answer nothing. `settings`,
    the SiteConfig's others."""
    os.mkfifo(tmp_path / "go")
    scontrol = f"""D='{tmp_path}'
[ -e "$D/hold" ] && read -r _ < "$D/go"
case "$*" in
  *partition*) echo '{ONE_PARTITION}' ;;
  *node*) echo "{node}" ;;
  *config*) printf 'ClusterName = alpha\\n' ;;
esac"""
    preamble = write_commands(tmp_path / "bin", {
        "scontrol": scontrol, "squeue": "exit 0", "sacctmgr": "exit 0", "sshare": "exit 0",
        "sprio": "exit 0"})
    return SiteConfig(name="alpha", workdir=str(tmp_path / workdir), preamble=preamble,
                      transport={"kind": "local"}, **settings)


def recorded_sites_file(tmp_path: Path, nodes: Path, queue: Path) -> Path:
    """tmp_path/sites.yaml: one local Slurm site, `rec`, whose `scontrol show partition`
    prints the recorded partitions, `scontrol show node` the file `nodes` and `squeue` the
    file `queue` (each read when asked: a test may rewrite them)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    commands = {"scontrol": f'case "$*" in\n  *partition*) cat '
                            f'{RECORDED / "scontrol_partition.txt"} ;;\n'
                            f'  *node*) cat {nodes} ;;\n  *) exit 1 ;;\nesac\n',
                "squeue": f"cat {queue}\n"}
    for name, body in commands.items():
        (bin_dir / name).write_text("#!/bin/sh\n" + body)
        (bin_dir / name).chmod(0o755)
    path = tmp_path / "sites.yaml"
    path.write_text(yaml.safe_dump({"sites": [{
        "name": "rec", "scheduler": "slurm", "transport": {"kind": "local"},
        "preamble": f'PATH={bin_dir}:"$PATH"; export PATH'}]}))
    return path


SUBMITTED = utcnow() - timedelta(hours=1)  # when `alpha_job`'s jobs were submitted


def alpha_job(native: str, state: JobState = JobState.PENDING, *,
              deps: Sequence[Dependency] = (), tasks: dict[str, JobState] | None = None,
              array: str | None = None, later_s: int = 0, token: str | None = None) -> Job:
    """Site alpha's job `native` (`true`), submitted `later_s` after SUBMITTED: waiting on
    `deps`, an array of `array` (its tasks' last states `tasks`) where given."""
    return Job(id=f"alpha:{native}", site="alpha", native_id=native, state=state,
               tasks=tasks, token=token, submitted_at=SUBMITTED + timedelta(seconds=later_s),
               spec=JobSpec(command="true", dependencies=list(deps),
                            array=ArraySpec(expression=array) if array else None))


def squeue_line(native_id: str, token: str, name: str, *, state: str = "PENDING",
                reason: str = "Priority", user: str | None = None) -> str:
    """squeue's line (SQUEUE_FIELDS, no newline) of a job with `token` in its comment,
    owned by `user` (the login by default)."""
    return (f"{native_id}|{state}|N/A|N/A|2026-01-01T00:00:00|10:00|1|1|"
            f"{user or getpass.getuser()}|debug|N/A||{reason}|{token_tag(token)}|{name}")


class LocalSlurmQueue:
    def __init__(self, tmp_path: Path, site: str = "alpha") -> None:
        bin_dir = tmp_path / f"bin-{site}"
        bin_dir.mkdir()
        self.bin_dir = bin_dir
        self.queue = tmp_path / f"queue-{site}.txt"
        self.queue.write_text("")
        squeue = bin_dir / "squeue"
        squeue.write_text(f"#!/bin/sh\ncat {self.queue}\n")
        squeue.chmod(0o755)
        # the site's accounting knows no job: an empty answer, as sacct gives for ids it
        # has no record of (not the machine's own sacct, which, with no Slurm configured
        # here, says it has no configuration source: a site that does not answer)
        sacct = bin_dir / "sacct"
        sacct.write_text("#!/bin/sh\nexit 0\n")
        sacct.chmod(0o755)
        self.site = Site(SiteConfig(name=site, scheduler="slurm",
                                    transport=TransportConfig(kind="local"),
                                    preamble=f'PATH={bin_dir}:"$PATH"; export PATH'))

    def add(self, native_id: str, token: str, name: str | None) -> None:
        """The job reaches the queue, pending, with the token in its comment, owned by the
        login (as squeue prints a job the login submitted)."""
        with self.queue.open("a") as f:
            f.write(squeue_line(native_id, token, name or "job") + "\n")

    def lists(self, jobs: list[tuple[str, str, str, str, str]]) -> None:
        """From now on squeue lists `jobs` alone: (native id, state, reason, token, name)
        each, owned by the login."""
        self.queue.write_text("".join(
            squeue_line(native, token, name, state=state, reason=reason) + "\n"
            for native, state, reason, token, name in jobs))

    def sbatch_says(self, stderr: str, *, takes_the_job: bool, native_id: str = "4243") -> Path:
        """From now on `sbatch` prints `stderr` and exits 1; with `takes_the_job` it first
        queues the job (its token read from the script's comment), as a controller does whose
        answer is lost on the way back. Each call is noted in the file returned."""
        calls = self.queue.parent / f"sbatch-calls-{self.site.name}.txt"
        take = (f'tok=$(grep -o "{token_tag("")}[0-9a-f]*" "$last" | head -n 1)\n'
                f'echo "{native_id}|PENDING|N/A|N/A|2026-01-01T00:00:00|10:00|1|1|'
                f'{getpass.getuser()}|debug|N/A||Priority|$tok|job" >> {self.queue}\n'
                if takes_the_job else "")
        sbatch = self.bin_dir / "sbatch"
        sbatch.write_text(f'#!/bin/sh\necho "sbatch $*" >> {calls}\n'
                          f'for last; do :; done\n{take}'
                          f"echo '{stderr}' >&2\nexit 1\n")
        sbatch.chmod(0o755)
        return calls

