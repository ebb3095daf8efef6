"""The predicted start of a job sent to an explicit site (`--site alpha`).

A placed job carries its prediction in the placement that chose its site. A job sent to a
site by name was not placed, so its start is predicted just after the submit, off the submit
path (the prediction reads queue snapshots and accounting, which a submit must not wait
for): the placement is made for that site alone, marked `policy: explicit`, recorded on the
job with a `job.updated` event, and every face (JSON, job card, sidebar) shows it as it
shows a placed job's.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from .log_lines import one_line_logger
from .model import EXPLICIT_POLICY, Job, JobSpec, predicted_start

if TYPE_CHECKING:
    from .placement import Placement

log = one_line_logger(__name__)

PREDICT_TIMEOUT_S = 10.0


def explicit_placement(pl: Placement, site: str) -> dict[str, Any] | None:
    """The placement to record for a job sent to `site` by name, or None when placement has
    no estimate there (nothing to predict)."""
    v = pl.verdict(site)
    if v is None or not v.feasible or v.estimated_start is None:
        return None
    return pl.model_copy(update={"policy": EXPLICIT_POLICY, "choice": site}).model_dump(mode="json")


async def predict_explicit(fed: Any, job: Job, spec: JobSpec) -> Job:
    """Place `spec` on the job's own site and record that placement on the job (the job as
    stored afterwards). A site that cannot be read leaves the job without a prediction."""
    try:
        pl = await fed.place(spec, sites=[job.site], named_site=True)
    except Exception as e:  # best effort, off the submit path: the job is submitted
        log.info("%s: no predicted start: %s", job.id, e)
        return fed.store.get_job(job.id)
    placement = explicit_placement(pl, job.site)
    if placement is None:
        return fed.store.get_job(job.id)
    now = fed.store.get_job(job.id)
    fed.store.set_placement(job.id, placement, {
        "predicted_start": predicted_start(now.model_copy(update={"placement": placement}))})
    await fed.journal.drain()
    return fed.store.get_job(job.id)


class Predictions:
    """The predictions in flight, by job id (a face may wait for one: `diamond submit`)."""

    def __init__(self) -> None:
        self.tasks: dict[str, asyncio.Task] = {}

    def start(self, fed: Any, job: Job, spec: JobSpec) -> None:
        task = asyncio.ensure_future(predict_explicit(fed, job, spec))
        self.tasks[job.id] = task
        task.add_done_callback(lambda _t: self.tasks.pop(job.id, None))

    async def wait(self, fed: Any, job_id: str, timeout: float = PREDICT_TIMEOUT_S) -> Job:
        task = self.tasks.get(job_id)
        if task is not None:
            done, _ = await asyncio.wait({task}, timeout=timeout)
            if not done:
                log.info("%s: the predicted start is late; printed without it", job_id)
        return fed.store.get_job(job_id)

    async def close(self) -> None:
        for t in self.tasks.values():
            t.cancel()
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)
