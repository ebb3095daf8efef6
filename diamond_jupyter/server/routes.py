"""The REST API's route table: every path under /diamond/api and its handler."""

from __future__ import annotations

from tornado.web import HTTPError

from .base import ApiError, DiamondHandler
from .dashboard import DashboardHandler, UsageHandler
from .describe import DescribeHandler
from .handlers import (
    EventsHandler,
    JobCancelHandler,
    JobFetchHandler,
    JobFilesHandler,
    JobHandler,
    JobLogsHandler,
    JobReleaseHandler,
    JobsHandler,
    OpenAPIHandler,
    PlaceHandler,
    SiteHandler,
    SitesHandler,
    SnapshotHandler,
    StateHandler,
    TaskApproveHandler,
    TaskHandler,
    TaskRejectHandler,
    TasksHandler,
    TransferCancelHandler,
    TransfersHandler,
    TranslateHandler,
)
from .login import LoginPromptHandler, LoginsHandler, SiteLoginHandler
from .workflows import (
    WorkflowApproveHandler,
    WorkflowCancelHandler,
    WorkflowHandler,
    WorkflowPlanHandler,
    WorkflowsHandler,
)

JOB = r"(?P<job_id>[^/]+)"
SITE = r"(?P<name>[^/]+)"
WORKFLOW = r"(?P<workflow_id>[^/]+)"
PROMPT = r"(?P<prompt_id>[^/]+)"
TRANSFER = r"(?P<transfer_id>[^/]+)"
TASK = r"(?P<name>[^/]+)"  # a task id (the group is named like SITE's on purpose: one sample)


def routes() -> list[tuple[str, type[DiamondHandler]]]:
    p = "/diamond/api"
    return [
        (f"{p}/state", StateHandler),
        (f"{p}/sites", SitesHandler),
        (f"{p}/sites/{SITE}", SiteHandler),
        (f"{p}/sites/{SITE}/snapshot", SnapshotHandler),
        (f"{p}/sites/{SITE}/describe", DescribeHandler),
        (f"{p}/sites/{SITE}/usage", UsageHandler),
        (f"{p}/dashboard", DashboardHandler),
        (f"{p}/sites/{SITE}/login", SiteLoginHandler),
        (f"{p}/logins", LoginsHandler),
        (f"{p}/logins/{PROMPT}", LoginPromptHandler),
        (f"{p}/place", PlaceHandler),
        (f"{p}/jobs", JobsHandler),
        (f"{p}/jobs/{JOB}", JobHandler),
        (f"{p}/jobs/{JOB}/cancel", JobCancelHandler),
        (f"{p}/jobs/{JOB}/release", JobReleaseHandler),
        (f"{p}/jobs/{JOB}/logs", JobLogsHandler),
        (f"{p}/jobs/{JOB}/files", JobFilesHandler),
        (f"{p}/jobs/{JOB}/fetch", JobFetchHandler),
        (f"{p}/translate", TranslateHandler),
        (f"{p}/events", EventsHandler),
        (f"{p}/transfers", TransfersHandler),
        (f"{p}/transfers/{TRANSFER}/cancel", TransferCancelHandler),
        (f"{p}/tasks", TasksHandler),
        (f"{p}/tasks/{TASK}", TaskHandler),
        (f"{p}/tasks/{TASK}/approve", TaskApproveHandler),
        (f"{p}/tasks/{TASK}/reject", TaskRejectHandler),
        (f"{p}/workflows", WorkflowsHandler),
        (f"{p}/workflows/{WORKFLOW}", WorkflowHandler),
        (f"{p}/workflows/{WORKFLOW}/cancel", WorkflowCancelHandler),
        (f"{p}/workflows/{WORKFLOW}/plan", WorkflowPlanHandler),
        (f"{p}/workflows/{WORKFLOW}/approve", WorkflowApproveHandler),
        (f"{p}/openapi.yaml", OpenAPIHandler),
        # last: what no route above takes (its group named as a site's: one sample fills it)
        (f"{p}/(?P<name>.*)", NoRouteHandler),
        (p, NoRouteHandler),  # /diamond/api itself, without its last '/'
    ]


class NoRouteHandler(DiamondHandler):
    """A path under /diamond/api that names no route: 404 with a JSON message naming the
    path and the routes there are (Jupyter's HTML page was the answer), for every method,
    once authenticated."""

    async def prepare(self) -> None:  # type: ignore[override]
        await super().prepare()
        import re

        from jupyter_core.utils import ensure_async
        from jupyter_server.auth.utils import HTTP_METHOD_TO_AUTH_ACTION

        from ..model import visible

        # authorized as every route is (`@authorized`): a user the server's authorizer
        # denies the diamond resource learns nothing of the API, not even its routes
        action = HTTP_METHOD_TO_AUTH_ACTION.get((self.request.method or "").upper(), "write")
        if not await ensure_async(self.authorizer.is_authorized(
                self, self.current_user, action, self.auth_resource)):
            raise HTTPError(403, log_message=f"not authorized to {action} on diamond")

        path = self.request.path  # the server's base_url, then diamond/api...
        base = self.base_url.rstrip("/")  # which may hold /diamond/api itself (a hub's
        # user `diamond` with a server `api`)
        path = path[len(base):] if path.startswith(base + "/") else \
            path[path.find("/diamond/api"):]
        named = [r for r, h in routes() if h is not NoRouteHandler]
        tops = sorted({r.removeprefix("/diamond/api/").split("/")[0] for r in named})
        near = ""
        if path.endswith("/") and any(re.fullmatch(r, path.rstrip("/")) for r in named):
            near = f" (without the last '/': {visible(path.rstrip('/'))})"
        raise ApiError(404, "not-found", f"no API route {visible(path)}{near}; the routes "
                       f"start /diamond/api/ with {', '.join(tops)} (GET /diamond/api/"
                       "openapi.yaml describes each)")
