"""Input and output models of the skills; their JSON schemas are the tools' schemas."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from .dialects.scripts_common import refuse_sizes_beside_components
from .discovery import SiteDescription as Discovered
from .job_dependencies import JobDependency
from .model import BadInput, Job, JobSpec, Node, Partition, check_text, refuse_boolean_number
from .summary import SiteSummary

Approval = Literal["auto", "ask", "dry-run"]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _no_boolean_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """`"hedge": true` or `"lines": false` from a model or a REST body: no silent 1 or 0."""
        return refuse_boolean_number(cls, value, info.field_name)


class _Out(BaseModel):
    model_config = ConfigDict(extra="ignore")


# a spec's counts that cannot be 0 (a job runs on a node, as a task, on a CPU)
AT_LEAST_ONE = ("nodes", "tasks", "tasks_per_node", "cpus_per_task")


# what a field of JobInput given only blanks is asked to be instead (the CLI's words)
BLANK_SAID = {"name": "a name", "arch": "an architecture", "container": "an image",
              "gpu_type": "a GPU model", "memory": "a size such as 4G"}


class JobInput(_In):
    """Either a batch `script` (any dialect: Slurm, PBS, LSF, Flux, or plain shell) or a
    scheduler-neutral `spec`."""

    script: str | None = Field(None, description="batch script text, any dialect or plain shell")
    spec: JobSpec | None = Field(None, description="scheduler-neutral job description")
    name: str | None = Field(None, description="job name")
    # what the job needs beyond what its script says (its script's needs always count)
    arch: str | None = Field(None, description="CPU architecture needed: x86_64, aarch64...")
    software: list[str] | None = Field(
        None, description="software needed, NAME or NAME/VERSION as any site names it")
    container: str | None = Field(None, description="container image to run the body in")
    gpu_type: str | None = Field(None, description="GPU model needed, e.g. a100")
    memory: str | None = Field(None, description="memory per node, e.g. 64G")

    @field_validator("name", "arch", "container", "gpu_type", "memory")
    @classmethod
    def _not_blank(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Only blanks (`"   "`): refused as the CLI refuses `--name "$UNSET "` (a name of
        blanks was submitted as `___`); an empty one is as absent, as `site: ""` is auto."""
        if value and not value.strip():
            raise BadInput(f"{info.field_name}: expected {BLANK_SAID[info.field_name]}, not "
                           f"{value!r} (an empty or blank value); give the value, or leave "
                           "the field out for the default")
        return value

    @model_validator(mode="after")
    def _one(self) -> JobInput:
        if self.script is not None and not self.script.strip() and self.spec is None:
            raise BadInput("the job script is empty")  # as a file of nothing is said
        if not (self.script or self.spec):
            raise ValueError("give `script` (batch script text) or `spec` (a JobSpec)")
        if self.script and self.spec:  # one job: the other was ignored, unsaid
            raise ValueError("give `script` (batch script text) or `spec` (a JobSpec), not "
                             "both: the job is one of them, and the other would be ignored "
                             "(a spec's own body goes in its `script`)")
        if self.spec is not None:
            for field in AT_LEAST_ONE:  # as the CLI's --nodes and every dialect's directive
                if getattr(self.spec.resources, field) == 0:
                    raise BadInput(f"spec.resources.{field} 0: expected a whole number, 1 or "
                                   "more (leave it out for the site's default)")
            refuse_sizes_beside_components(self.spec)
        return self

    def need_options(self) -> dict[str, Any]:
        """What the job needs beyond its script, as the facade's `overrides`."""
        return self.model_dump(include={"arch", "software", "container", "gpu_type", "memory"})


class Lookout(_Out):
    """Where the search for the job of a submit whose answer was lost stands
    (`Federation.lookout`): "looking" (do not submit it again), "found" (the job, its id and
    site), "never-submitted" (nothing reached the queue: a new submit is safe)."""

    state: Literal["looking", "found", "never-submitted"]
    since: datetime = Field(description="when the search began")
    settle_s: float = Field(description="how long the job is looked for before the submit "
                            "is closed as never submitted (s)")
    message: str = Field(description="what to tell the user")


class JobSummary(_Out):
    id: str
    site: str
    state: str
    name: str | None = None
    native_id: str | None = None
    exit_code: int | None = None
    reason: str | None = None
    submitted_at: datetime | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    workdir: str | None = None
    # only for a job whose submit's answer was lost: where the search for it stands
    lookout: Lookout | None = None
    # what it waits for (`Federation.dependencies`): each satisfied, waiting or never
    depends_on: list[JobDependency] = Field(default_factory=list)

    @classmethod
    def of(cls, job: Job, lookout: dict[str, Any] | None = None,
           depends_on: list[JobDependency] | None = None) -> JobSummary:
        """`job`, with `lookout` (`Federation.lookout`) when its submit's answer was lost and
        what it waits for (`depends_on`)."""
        return cls.model_validate(job.model_dump(exclude={"spec", "placement", "origin",
                                                          "token"})
                                  | {"state": job.state.value, "lookout": lookout,
                                     "depends_on": depends_on or []})


# -- discovery ---------------------------------------------------------------------------------

class DiscoverInput(_In):
    max_age_s: float = Field(15.0, ge=0, description="accept cached snapshots this old (s)")


class DiscoverOutput(_Out):
    sites: list[SiteSummary]
    sites_file_changed: str | None = Field(
        None, description="set when the sites file was edited, removed or created since "
        "this engine read it: the sites listed are those it read (what to do is said)")


class SiteInput(_In):
    site: str = Field(description="site name, as listed by discover_resources")


class SiteDescription(_Out):
    summary: SiteSummary
    partitions: list[Partition]
    nodes: list[Node]
    # found live on the site (modules, runtimes, MPI, node types), merged with the sites file
    discovered: Discovered | None = None
    discovery_error: str | None = None


# -- placement ---------------------------------------------------------------------------------

class SpecifyInput(JobInput):
    site: str = Field(description="the site to check the job against")


class SpecifyOutput(_Out):
    site: str
    feasible: bool
    verdict: str
    reasons: list[str] = Field(default_factory=list)
    suggestions: list[str] = Field(default_factory=list)
    partition: str | None = None
    estimated_start: datetime | None = None
    alternatives: list[str] = Field(default_factory=list, description="sites that can run it")


class PlaceInput(JobInput):
    policy: str = Field("diamond", description="diamond | min_cost | fewest_pending | "
                        "first_ready | random | fixed")


class VerdictSummary(_Out):
    site: str
    verdict: str
    feasible: bool
    reasons: list[str] = Field(default_factory=list)
    partition: str | None = None
    estimated_start: datetime | None = None
    estimated_finish: datetime | None = None
    cost: float | None = None


class PlaceOutput(_Out):
    choice: str | None
    ranked: list[VerdictSummary]
    explain: str


# -- jobs --------------------------------------------------------------------------------------

class SubmitInput(JobInput):
    site: str = Field("auto", description='a site name, or "auto" to let placement choose')
    hedge: int | None = Field(None, ge=1, le=8, description=(
        'with site "auto": submit copies to this many of the best sites at once; the first '
        "copy to start runs the job, the others are cancelled (sites whose policy forbids "
        "it are skipped)"))
    hold: bool = Field(False, description=(
        "submit the job held: the scheduler keeps it waiting until `release` starts it (as "
        "`diamond submit --hold`); the approval's plan says so"))


class ActionOutput(_Out):
    """The result of a costly action; with `dry_run` nothing was done and `plan` says what
    would have been."""

    job: JobSummary | None = None
    dry_run: bool = False
    plan: dict[str, Any] | None = None
    message: str = ""


class JobIdInput(_In):
    job_id: str = Field(description="a job id SITE:NUMBER, as returned by submit")


class StatusInput(JobIdInput):
    refresh: bool = Field(True, description="ask the scheduler now (else the stored state)")


class WaitInput(JobIdInput):
    timeout_s: float | None = Field(None, ge=0, description="give up after this (MCP only; the "
                                    "agent's task sleeps until the job ends)")
    until: Literal["end", "start", "attention"] = Field(
        "end", description='what wakes the task besides the end: "start" (the job started '
        'too), "attention" (it started, or nears its time limit). A job that can never '
        "start where it is always wakes it (the task's on_stuck policy decides what then).")


class WaitOutput(_Out):
    job: JobSummary
    finished: bool
    # why the task woke before the end: {"attention": started|stuck|walltime, "reason"}
    woke: dict[str, Any] | None = None
    resubmitted_as: JobSummary | None = None  # the stuck job's replacement elsewhere


class ResubmitOutput(_Out):
    job: JobSummary  # the new job
    replaced: JobSummary  # the stuck one, cancelled (unless `kept_both`)
    message: str = ""
    # the stuck one started or ended while the new one was submitted: not cancelled
    kept_both: bool = False


class LogsInput(JobIdInput):
    lines: int = Field(100, ge=1, le=10000)


class LogsOutput(_Out):
    stdout: str
    stderr: str
    # why a log shows nothing (one line per file not there yet: the job has not started, or
    # the site lost it), and what was left out of one: empty logs alone read as a fault
    missing: str = ""
    notes: str = ""


class FetchInput(JobIdInput):
    dest: str | None = Field(None, description="local directory (default: ./SITE-NUMBER)")
    files: list[str] | None = Field(None, description=(
        "only these result files (relative paths as listed); a hidden name (.x) is fetched "
        "only when named here"))
    overwrite: bool = Field(False, description=(
        "replace local files that no earlier fetch of this job wrote (default: skip them)"))
    max_file_bytes: int | None = Field(None, gt=0, strict=True, description=(
        "skip result files larger than this many bytes (default: the sites file's "
        "fetch_max_file_bytes, 16 GiB); each one skipped is named with its size"))

    @field_validator("dest")
    @classmethod
    def _one_line(cls, v: str | None) -> str | None:
        if v is not None:
            check_text("dest", v)  # BadInput: a NUL or a newline names no directory
        return v


class FetchOutput(_Out):
    paths: list[str] = Field(default_factory=list)
    # one "RELATIVE-PATH: reason" per result file not written (a hidden name not named, a
    # local file there that no fetch of this job wrote)
    skipped: list[str] = Field(default_factory=list)
    dry_run: bool = False
    plan: dict[str, Any] | None = None
    message: str = ""


class TransferInput(_In):
    src: str = Field(description="SITE:PATH or a local path")
    dst: str = Field(description="SITE:PATH or a local path")
    recursive: bool = False
    via: str | None = Field(None, description='"sftp", "globus" or None (Globus when both '
                            "sites have a collection and a login exists, else SFTP)")
    overwrite: bool = Field(False, description=(
        "copied into a directory, replace files there that no earlier copy to it wrote "
        "(default: leave them, and list each one as skipped)"))


class TransferIdInput(_In):
    transfer_id: str = Field(description="a transfer's id, as its record gives it")


class TransferOutput(_Out):
    transfer: dict[str, Any] | None = None
    skipped: list[str] = Field(default_factory=list)  # each file left, with the reason
    dry_run: bool = False
    plan: dict[str, Any] | None = None
    message: str = ""


class TranslateInput(_In):
    script: str = Field(description="batch script text")
    to: str = Field(description="slurm | pbs | lsf | flux | sge")
    from_dialect: str | None = Field(None, description="source dialect (default: detected)")


class TranslateOutput(_Out):
    script: str
    warnings: list[str]
