"""On the real test bed (Slurm 22.05): a parent that fails once is run again on its site,
and its child, queued there behind an afterok on the failed job, keeps its job: the engine
moves that afterok to the new job with `scontrol update JobId=... Dependency=...`. Slurm
leaves such a child pending (DependencyNeverSatisfied; the test bed does not set
kill_invalid_depend), so the job the engine kept is the one that runs. The engine's side is
tested on recorded operations in test_workflow_retry_keeps.py; this is the scheduler's."""

from __future__ import annotations

import asyncio
import contextlib
import re
import textwrap
import uuid
from typing import Any

import pytest

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobState
from diamond_jupyter.workflow.model import StepView, WorkflowView

pytestmark = pytest.mark.testbed

# parent fails on its first run (its marker is not there yet) and runs 30 s on its second,
# long enough for the child's dependency to be read while it still waits
RETRIED = textwrap.dedent("""\
    name: retry-keeps
    steps:
      - name: parent
        site: alpha
        retries: 1
        script: |
          #!/bin/bash
          #SBATCH -t 5
          marker="$HOME/.diamond-retry-keeps-TAG"
          if [ ! -e "$marker" ]; then touch "$marker"; exit 3; fi
          rm -f "$marker"
          sleep 30
      - name: child
        site: alpha
        needs: [parent]
        script: |
          #!/bin/bash
          #SBATCH -t 5
          echo child ran
    """)


def _step(view: WorkflowView, name: str) -> StepView:
    return next(s for s in view.steps if s.name == name)


async def _moved(fed: Federation, wid: str) -> dict[str, Any]:
    """The `redepended` note of the workflow's first dependency move, once it is stored."""
    async with contextlib.aclosing(fed.events(0)) as events:
        async for ev in events:
            if ev.kind == "workflow.step" and ev.data.get("workflow_id") == wid \
                    and ev.data.get("redepended"):
                return ev.data["redepended"]
    raise AssertionError("the event stream ended")


async def test_a_kept_childs_afterok_moves_to_the_new_parent_job_on_slurm(testbed_fed):
    fed = testbed_fed
    view = await fed.run_workflow(RETRIED.replace("TAG", uuid.uuid4().hex))
    first_parent, child = (_step(view, "parent").job, _step(view, "child").job)
    assert first_parent and child, view
    done = asyncio.ensure_future(fed.wait_workflow(view.id, timeout=420))
    try:
        moved = await asyncio.wait_for(_moved(fed, view.id), 300)
        new_parent = fed.job(_step(fed.workflow(view.id), "parent").job or "")
        assert new_parent.id != first_parent and moved == {
            "job": child, "afterok": [new_parent.native_id]}
        # what Slurm itself now holds for the child: the new job, not the failed one
        shown = await fed.sites["alpha"].run(
            ["scontrol", "show", "job", fed.job(child).native_id or ""], check=True)
        dependency = re.search(r"\bDependency=(\S+)", shown.stdout)
        assert dependency is not None, shown.stdout
        assert re.findall(r"afterok:(\d+)", dependency.group(1)) == [new_parent.native_id], \
            shown.stdout
        finished = await done
    finally:
        done.cancel()
    assert finished.state == JobState.COMPLETED, finished
    assert (_step(finished, "parent").attempt, _step(finished, "parent").job) == (
        1, new_parent.id)
    assert _step(finished, "child").job == child  # the job kept in the queue is the one run
    assert fed.job(first_parent).state == JobState.FAILED
    ran, parent = fed.job(child), fed.job(new_parent.id)
    assert ran.state == JobState.COMPLETED and parent.state == JobState.COMPLETED
    assert ran.started_at is not None and parent.ended_at is not None
    # to the second, as Slurm keeps them (a time the job's own wrapper said has a fraction)
    assert ran.started_at.replace(microsecond=0) >= parent.ended_at.replace(microsecond=0), \
        (ran, parent)
    assert [d.job_ids for d in ran.spec.dependencies if d.kind == "afterok"] == [
        [new_parent.native_id]]  # its record says what Slurm held
    assert (await fed.logs(child))["stdout"].strip() == "child ran"
