"""The protocol every scheduler dialect implements. Dialects are pure: no I/O."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from ..model import JobSpec, JobStatus, SiteSnapshot


@dataclass
class Rendered:
    """A rendered script plus what could not be expressed exactly."""

    script: str
    # One human line per dropped or approximated directive, naming it.
    warnings: list[str] = field(default_factory=list)


class Dialect(Protocol):
    name: str  # "slurm", "pbs", "lsf", "flux", "sge"
    sentinel: str  # "#SBATCH", "#PBS", "#BSUB", "#flux:", "#$"

    def parse_script(self, text: str) -> JobSpec:
        """Directives of a batch script -> JobSpec (raise BadInput on nonsense)."""

    def render_script(self, spec: JobSpec) -> Rendered:
        """JobSpec -> script in this dialect."""

    def job_name(self, name: str) -> str:
        """The job name as the scheduler keeps it once rendered (a dialect changes a name its
        submit command would misread): what a lookup by name must ask for."""


class SchedulerCommands(Protocol):
    """Command lines and output parsers for one scheduler (pure: argv in, models out).

    The site layer runs the argv lists (shell-quoted by the transport) and hands
    the raw stdout back to the parse_* functions.
    """

    name: str

    def submit_argv(self, script_path: str, *, hold: bool = False) -> list[str]: ...
    def parse_submit(self, stdout: str) -> str:
        """Native job id from the submit command's output."""

    def status_argv(self, native_ids: list[str]) -> list[str]:
        """One command that reports every given job still known to the queue."""

    def parse_status(self, stdout: str, skipped: list[str] | None = None
                     ) -> list[JobStatus]:
        """The records of the status command's output. `skipped`: where to say what is
        left out (else SiteError); a job poll passes `MessagesOnly`, which takes the
        messages around the records but not a record that cannot be read."""

    def accounting_argv(self, native_ids: list[str]) -> list[str] | None:
        """One command for finished jobs (None if the scheduler has no accounting)."""

    def parse_accounting(self, stdout: str, skipped: list[str] | None = None
                         ) -> list[JobStatus]: ...

    # where accounting stops (`AccountingReach` gives each the default: no bound)
    accounting_takes_turns: bool
    """Whether `accounting_argv`'s command reaches only the jobs it has time for, so the
    jobs take turns (those waiting longest first)."""

    def accounting_reached(self, stdout: str) -> list[str] | None:
        """The jobs the accounting command whose output is `stdout` asked about (None: every
        job it was given)."""

    @property
    def accounting_reach(self) -> str | None:
        """How far back accounting reads, as the reason a job it did not find is lost says
        (None: no bound worth saying)."""

    def cancel_argv(self, native_ids: list[str]) -> list[str]: ...
    def release_argv(self, native_ids: list[str]) -> list[str]: ...
    def find_by_name_argv(self, name: str) -> list[str]:
        """Queue query for jobs carrying an idempotency token in their name."""

    def snapshot_argvs(self) -> dict[str, list[str]]:
        """Named commands whose outputs together describe the site (batched by the site layer)."""

    # optional: `followup_argvs(outputs) -> dict[str, list[str]]`, named commands the site
    # layer runs after that batch, asked from its outputs (Grid Engine's array throttles,
    # only when an array waits); never cached

    def parse_snapshot(self, site: str, outputs: dict[str, str]) -> SiteSnapshot: ...


class AccountingReach:
    """`SchedulerCommands`' accounting bounds for a scheduler whose accounting asks every
    job it is given and reads back without a bound worth saying (Slurm's, Flux's, ...); a
    dialect whose accounting stops somewhere overrides them."""

    accounting_takes_turns = False

    def accounting_reached(self, stdout: str) -> list[str] | None:
        return None

    @property
    def accounting_reach(self) -> str | None:
        return None


_PRIVATE_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")


class PrivateArgv(list[str]):
    """An argv whose program also needs `private_env`: variables that must reach it without
    showing on any command line (`ps` shows every user's command lines on a login node; a
    process's environment only its owner can read). `private_shell` turns it into a
    command that reads their values from its stdin."""

    def __init__(self, argv: list[str], private_env: dict[str, str]) -> None:
        super().__init__(argv)
        for name, value in private_env.items():
            if not _PRIVATE_NAME.fullmatch(name) or "\n" in value or "\0" in value:
                raise ValueError(f"unusable private variable {name}")
        self.private_env = dict(private_env)


def private_values(argv: list[str]) -> dict[str, str]:
    """The variables `argv` needs off the command line ({} for a plain argv)."""
    return dict(getattr(argv, "private_env", {}))


def private_lines(names: list[str], first: int = 0) -> tuple[list[str], str]:
    """Shell that reads one stdin line per name into `_dj<first>`, `_dj<first+1>`, ...
    (`IFS= read -r`: the line as sent), and the assignment prefix that gives each name its
    value for one command (`NAME="$_dj0" ...`; exported to that command only). Only fixed
    names (checked by PrivateArgv) and fixed variable references: no value is shell text."""
    reads, prefix = [], []
    for i, name in enumerate(names, first):
        reads.append(f"IFS= read -r _dj{i} || exit 255")
        prefix.append(f'{name}="$_dj{i}"')
    return reads, " ".join(prefix)


def private_shell(argv: list[str]) -> tuple[list[str], bytes | None]:
    """`argv` as a command that reads its private variables' values from stdin and then
    runs it with them set, and the stdin to send (None for a plain argv: unchanged). The
    values never appear on a command line: not the shell's (a fixed text), not the
    program's."""
    env = private_values(argv)
    if not env:
        return list(argv), None
    reads, _ = private_lines(list(env))
    exports = [f'export {name}="$_dj{i}"' for i, name in enumerate(env)]
    script = "\n".join([*reads, *exports, 'exec "$@"'])
    stdin = "".join(f"{v}\n" for v in env.values()).encode()
    return ["sh", "-c", script, "sh", *argv], stdin
