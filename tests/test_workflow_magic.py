"""`%%diamond workflow` in a real kernel (in-process engine) on the real test bed: the live DAG
card is replaced in place until the workflow ends, from the kernel's background thread."""

from __future__ import annotations

from typing import Any

import pytest
from test_magics import kernel_env, kernel_factory  # noqa: F401 - the fixture

from diamond_jupyter.kernel.workflowcard import MIME

pytestmark = [pytest.mark.testbed, pytest.mark.timeout(300)]

CELL = """%%diamond workflow
name: magic
steps:
  - {name: make, site: alpha, script: "#!/bin/bash\\necho made > m.txt\\n"}
  - name: use
    site: gamma
    needs: [make]
    inputs: [{from: make, path: m.txt}]
    script: |
      #!/bin/bash
      cat m.txt
"""


def test_the_dag_card_follows_the_workflow(tb, data_dir, kernel_factory):  # noqa: F811
    k = kernel_factory(kernel_env(tb, data_dir))
    k.execute("%load_ext diamond_jupyter")
    mid = k.execute(CELL)
    idle = k.index_of_idle(mid)
    shown = [m for m in k.outputs(mid) if m["msg_type"] == "display_data"]
    assert shown, k.text(mid)
    first = shown[0]["content"]
    wf = first["data"][MIME]["workflow"]
    assert [s["name"] for s in wf["steps"]] == ["make", "use"] and wf["state"] != "COMPLETED"
    assert all(s["job"] for s in wf["steps"])  # both queued at once
    display_id = first["transient"]["display_id"]

    def final(m: dict[str, Any]) -> bool:
        c = m["content"]
        return (m["msg_type"] == "update_display_data"
                and c.get("transient", {}).get("display_id") == display_id
                and c["data"][MIME]["workflow"]["state"] == "COMPLETED")
    upd = k.read_until(final, timeout=240)
    assert k.log.index(upd) > idle and upd["parent_header"].get("msg_id") == mid
    html = upd["content"]["data"]["text/html"]
    assert "data-diamond-workflow=" in html and "data-diamond-step='use'" in html
    assert html.count("data-diamond-state='COMPLETED'") == 3  # the workflow and both steps
    assert [s["site"] for s in upd["content"]["data"][MIME]["workflow"]["steps"]] == [
        "alpha", "gamma"]
    mid2 = k.execute("wf = _\nprint(wf.wait(timeout=60)['state'], wf.steps[1]['job'])")
    state, job = k.text(mid2, "stdout").split()
    assert state == "COMPLETED" and job.startswith("gamma:")
    mid3 = k.execute(f"%diamond logs {job}")
    assert "made" in k.text(mid3)
