"""REST routes of workflows: run one, list them, one's state, cancel it, and approve again
the steps of an approved workflow that wait for it (their site or script changed)."""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.decorator import authorized
from pydantic import BaseModel, ConfigDict, Field
from tornado.web import authenticated

from .base import ApiError, DiamondHandler, api
from .bodies import Origin


class WorkflowBody(BaseModel):
    model_config = ConfigDict(extra="ignore")
    workflow: str | dict[str, Any] = Field(description="YAML text or a mapping")
    origin: Origin = None


class ApproveBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    plan: dict[str, Any] = Field(description="the plan from GET .../plan, as shown")


class _WorkflowHandler(DiamondHandler):
    def known(self, fed: Any, workflow_id: str) -> None:
        if (missing := fed.workflow_not_found(workflow_id)) is not None:
            raise ApiError(404, "not-found", missing)


class WorkflowsHandler(_WorkflowHandler):
    @authenticated
    @authorized
    @api
    async def get(self) -> None:
        fed = await self.fed()
        limit = self.limit_arg(50, 1000)
        self.reply({"workflows": [v.contract() for v in fed.workflows(limit=limit)]})

    @authenticated
    @authorized
    @api
    async def post(self) -> None:
        """Record and start a workflow; its steps are queued at once (201)."""
        fed = await self.fed()
        body = self.parse(WorkflowBody)
        view = await fed.run_workflow(body.workflow, origin=body.origin)
        self.set_header("Location", self.request.path.rstrip("/") + "/" + view.id)
        self.reply(view.contract(), 201)


class WorkflowHandler(_WorkflowHandler):
    @authenticated
    @authorized
    @api
    async def get(self, workflow_id: str) -> None:
        fed = await self.fed()
        self.known(fed, workflow_id)
        self.reply(fed.workflow(workflow_id).contract())


class WorkflowCancelHandler(_WorkflowHandler):
    takes_no_body = True

    @authenticated
    @authorized
    @api
    async def post(self, workflow_id: str) -> None:
        self.refuse_a_body(f"POST workflows/{workflow_id}/cancel")
        fed = await self.fed()
        self.known(fed, workflow_id)
        self.reply((await fed.cancel_workflow(workflow_id)).contract())


class WorkflowPlanHandler(_WorkflowHandler):
    @authenticated
    @authorized
    @api
    async def get(self, workflow_id: str) -> None:
        """The workflow's plan to approve again: each step's sites and rendered scripts."""
        fed = await self.fed()
        self.known(fed, workflow_id)
        self.reply(await fed.workflow_approval_plan(workflow_id))


class WorkflowApproveHandler(_WorkflowHandler):
    @authenticated
    @authorized
    @api
    async def post(self, workflow_id: str) -> None:
        """Approve the plan shown: the steps that waited for approval go on (400 when the
        workflow or a script changed since that plan was made: ask for it again)."""
        fed = await self.fed()
        self.known(fed, workflow_id)
        body = self.parse(ApproveBody)
        self.reply((await fed.approve_workflow(workflow_id, body.plan)).contract())
