"""The protocol every scheduler dialect implements. Dialects are pure: no I/O."""

from __future__ import annotations

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

    def parse_status(self, stdout: str) -> list[JobStatus]: ...
    def accounting_argv(self, native_ids: list[str]) -> list[str] | None:
        """One command for finished jobs (None if the scheduler has no accounting)."""

    def parse_accounting(self, stdout: str) -> list[JobStatus]: ...
    def cancel_argv(self, native_ids: list[str]) -> list[str]: ...
    def release_argv(self, native_ids: list[str]) -> list[str]: ...
    def find_by_name_argv(self, name: str) -> list[str]:
        """Queue query for jobs carrying an idempotency token in their name."""

    def snapshot_argvs(self) -> dict[str, list[str]]:
        """Named commands whose outputs together describe the site (batched by the site layer)."""

    def parse_snapshot(self, site: str, outputs: dict[str, str]) -> SiteSnapshot: ...
