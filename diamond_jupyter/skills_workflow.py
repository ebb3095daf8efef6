"""Workflow skills: run a DAG of job steps across sites, and follow it (`ctx` is the
skills' SkillContext)."""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class RunWorkflowInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    workflow: str | dict[str, Any] = Field(description=(
        "the workflow as YAML text or a mapping: {name, steps: [{name, script, site ('auto', "
        "a site, or a list of sites placement chooses among), needs: [step], inputs: "
        "[{from: step, path, as?, size?}], outputs, gang, "
        "retries, on_failure: 'resubmit-elsewhere' | 'stop'}]}"))


class WorkflowIdInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    workflow_id: str = Field(description="a workflow id, as returned by run_workflow")


class WorkflowOutput(BaseModel):
    """{"id", "state", "steps": [{"name", "site", "job", "state"}]}; with `dry_run` nothing
    was done and `plan` says what would have been."""

    model_config = ConfigDict(extra="ignore")
    workflow: dict[str, Any] | None = None
    dry_run: bool = False
    plan: dict[str, Any] | None = None
    message: str = ""


async def _run_plan(ctx: Any, inp: RunWorkflowInput) -> dict[str, Any]:
    return await ctx.fed.plan_workflow(inp.workflow)


async def run_workflow(ctx: Any, inp: RunWorkflowInput) -> WorkflowOutput:
    wid = None
    if ctx.call_key:  # the same tool call after a restart finds the workflow it started
        wid = "wf-agent-" + hashlib.sha256(ctx.call_key.encode()).hexdigest()[:16]
    origin = {**(ctx.origin or {}), **({"call": ctx.call_key} if ctx.call_key else {})}
    if ctx.approved is not None:
        view = await ctx.fed.run_workflow_approved(inp.workflow, ctx.approved, origin=origin,
                                                   workflow_id=wid)
    else:
        view = await ctx.fed.run_workflow(inp.workflow, origin=origin, workflow_id=wid)
    return WorkflowOutput(workflow=view.contract(), message=f"workflow {view.id} started: "
                          "its steps are queued (downstream ones held until their inputs "
                          "arrive); follow it with workflow_status")


async def workflow_status(ctx: Any, inp: WorkflowIdInput) -> WorkflowOutput:
    view = await ctx.fed.workflow_status(inp.workflow_id, refresh=True)
    return WorkflowOutput(workflow=view.contract(), message=view.state.value)
