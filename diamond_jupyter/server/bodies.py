"""REST request bodies: the skills' input models (one validation for every face), with the
fields only REST carries. An unknown key is refused by `DiamondHandler.parse` (400 naming it
and the accepted fields); a bad value is a ValidationError, which `api` answers with 400
naming the field."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from ..model import BadInput, JobSpec, Resources, check_nesting, check_request
from ..skills_models import FetchInput, PlaceInput, SubmitInput, TransferInput, TranslateInput

_REST = ConfigDict(extra="ignore")


def _flat_origin(v: dict[str, Any] | None) -> dict[str, Any] | None:
    if v is not None:
        check_nesting("origin", v)  # BadInput (400) before anything is stored
    return v


# where a request came from ({"path", "cell_id"} of a cell): stored with what it started
Origin = Annotated[dict[str, Any] | None, AfterValidator(_flat_origin)]


# A job's settings, by their JobSpec/Resources names or the CLI's options: given beside
# `script` (`{"script": ..., "nodes": 4}`, `"hold": true`) they were ignored like any unknown
# key, and the job ran without them
_JOB_SETTINGS = (set(JobSpec.model_fields) | set(Resources.model_fields)
                 | {"partition", "time", "walltime", "gpus", "mem", "features"}) - {
    "metadata", "unknown"}


def refuse_job_settings(body: Any, fields: dict[str, Any]) -> Any:
    """A top-level key of a job's body that is a job setting this body has no field for:
    BadInput naming it and where such a setting goes (other unknown keys: `parse` refuses)."""
    if isinstance(body, dict):
        for key in body:
            if key in _JOB_SETTINGS and key not in fields:
                raise BadInput(f"{key}: a job setting this request has no field for (it would "
                               "be ignored); write it in the script's directives, or send "
                               "`spec` (a JobSpec) holding it")
    return body


class PlaceBody(PlaceInput):
    model_config = _REST
    dialect: str | None = Field(None, description="the script's dialect (default: detected)")

    @model_validator(mode="before")
    @classmethod
    def _settings_placed(cls, body: Any) -> Any:
        return refuse_job_settings(body, cls.model_fields)


class SubmitBody(SubmitInput):
    model_config = _REST
    site: str | None = "auto"  # type: ignore[assignment]  # null or "" mean auto, as ever
    dialect: str | None = Field(None, description="the script's dialect (default: detected)")
    origin: Origin = Field(None, description='{"path", "cell_id"} of a cell')
    force: bool = Field(False, description="submit to the site given even if it lacks what "
                        "the job needs")

    @model_validator(mode="before")
    @classmethod
    def _settings_placed(cls, body: Any) -> Any:
        return refuse_job_settings(body, cls.model_fields)


class TranslateBody(TranslateInput):
    model_config = _REST
    from_dialect: str | None = Field(None, validation_alias=AliasChoices("from", "from_dialect"))


class TransferBody(TransferInput):
    model_config = _REST
    wait: bool = Field(False, description="answer when the transfer has ended")


class FetchBody(FetchInput):
    model_config = _REST


class AskBody(BaseModel):
    """An agent task (no skill starts one: the agent is what calls the skills)."""

    model_config = _REST
    prompt: str = Field(description="the request, in plain words")
    approval: Literal["auto", "ask", "dry-run"] | None = None
    origin: Origin = None
    # when a job the task waits on can never start where it is
    on_stuck: Literal["ask", "resubmit-elsewhere", "wait"] = "ask"

    @field_validator("prompt")
    @classmethod
    def _said(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("give the request in plain words")
        check_request(v, "prompt")  # BadInput as it is (400), before the LLM's setup (503)
        return v


class ApproveBody(BaseModel):
    """An approval names at most the plan shown: an edited plan or script sent with it is
    refused, never ignored (what runs is the plan the task awaits, as shown)."""
    model_config = ConfigDict(extra="forbid")
    plan_sha256: str | None = None  # the pending plan shown (a task's pending.plan_sha256)


class RejectBody(BaseModel):
    model_config = _REST
    reason: str | None = None
