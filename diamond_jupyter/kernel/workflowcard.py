"""The workflow card: the DAG of a workflow's steps, each with its site, job and state, shown
with a display id and replaced in place as the workflow progresses (as the job card is).

The bundle (HTML, text and `application/vnd.diamond.workflow+json`) is what the notebook
saves, so a reopened notebook shows how the workflow ended without a kernel.
"""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import Future
from datetime import datetime, timezone
from typing import Any

from ..model import DiamondError, one_line
from .jobcard import COLORS, _shell, color, in_kernel, shown_html

MIME = "application/vnd.diamond.workflow+json"
TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}


def depths(steps: list[dict[str, Any]]) -> dict[str, int]:
    """Each step's layer in the DAG: 0 for a step that needs none, else 1 + its deepest need."""
    needs = {s["name"]: s.get("needs") or [] for s in steps}
    out: dict[str, int] = {}

    def depth(n: str, seen: frozenset[str] = frozenset()) -> int:
        if n not in out:
            ups = [m for m in needs.get(n, []) if m in needs and m not in seen]
            out[n] = 1 + max((depth(m, seen | {n}) for m in ups), default=-1)
        return out[n]
    for s in steps:
        depth(s["name"])
    return out


def render_text(wf: dict[str, Any]) -> str:
    # names and reasons come from sites and jobs: each written out on its line
    shown = {k: one_line(str(wf.get(k) or "")) for k in ("name", "id", "reason")}
    lines = [f"workflow {shown['name']} {shown['id']}: {wf['state']}"
             + (f" ({shown['reason']})" if shown["reason"] else "")]
    d = depths(wf["steps"])
    for s in wf["steps"]:
        needs = f" <- {', '.join(map(one_line, s['needs']))}" if s.get("needs") else ""
        gang = f" [gang {one_line(s['gang'])}]" if s.get("gang") else ""
        lines.append(f"{'  ' * (d[s['name']] + 1)}{one_line(s['name'])}: {s['state']} "
                     f"{one_line(s.get('site') or '-')} {one_line(s.get('job') or '-')}"
                     f"{gang}{needs}")
    return "\n".join(lines)


def render_html(wf: dict[str, Any]) -> str:
    e = shown_html
    d = depths(wf["steps"])
    layers: dict[int, list[dict[str, Any]]] = {}
    for s in wf["steps"]:
        layers.setdefault(d[s["name"]], []).append(s)
    cols = []
    for level in sorted(layers):
        boxes = []
        for s in layers[level]:
            st = s["state"]
            needs = (f"<div style='font-size:85%;opacity:.75'>after {e(', '.join(s['needs']))}"
                     "</div>") if s.get("needs") else ""
            gang = f" <span title='gang'>⧉ {e(s['gang'])}</span>" if s.get("gang") else ""
            retry = f" (attempt {s['attempt'] + 1})" if s.get("attempt") else ""
            reason = (f"<div style='font-size:85%;color:{COLORS['FAILED']}'>{e(s['reason'])}"
                      "</div>") if s.get("reason") and st in ("FAILED", "CANCELLED") else ""
            boxes.append(
                f"<div data-diamond-step='{e(s['name'])}' data-diamond-state='{e(st)}' "
                f"style='border:1px solid {color(st)};border-left:5px solid {color(st)};"
                "border-radius:4px;padding:4px 8px;margin:4px 0;min-width:11em'>"
                f"<b>{e(s['name'])}</b>{gang}<br>"
                f"<span style='color:{color(st)};font-weight:600'>{e(st)}</span>{retry} "
                f"on {e(s.get('site') or '-')}<br><code>{e(s.get('job') or '-')}</code>"
                f"{needs}{reason}</div>")
        cols.append(f"<div style='display:flex;flex-direction:column'>{''.join(boxes)}</div>")
    arrows = "<div style='align-self:center;opacity:.6'>→</div>".join(cols)
    head = (f"<div><b>workflow {e(wf.get('name', ''))}</b> <code>{e(wf['id'])}</code> "
            f"<span style='color:{color(wf['state'])};font-weight:600'>{e(wf['state'])}</span>"
            + (f" <span style='opacity:.75'>{e(wf['reason'])}</span>" if wf.get("reason")
               else "") + "</div>")
    return (f"<div class='diamond-workflow' data-diamond-workflow='{e(wf['id'])}' "
            f"data-diamond-state='{e(wf['state'])}'>{head}"
            f"<div style='display:flex;gap:10px;align-items:flex-start'>{arrows}</div></div>")


def bundle(wf: dict[str, Any]) -> dict[str, Any]:
    return {"text/plain": render_text(wf), "text/html": render_html(wf),
            MIME: {"version": 1, "workflow": wf,
                   "rendered_at": datetime.now(timezone.utc).isoformat()}}


class WorkflowHandle:
    """A workflow followed in the background; `wait()`, `cancel()`, `status`, `steps`."""

    def __init__(self, engine: Any, wf: dict[str, Any]) -> None:
        self._engine = engine
        self._wf = wf
        self.id: str = wf["id"]
        self._lock = threading.Lock()
        self._ended = threading.Event()
        self._display_id = f"diamond-wf-{uuid.uuid4().hex}"
        self._parent: dict[str, Any] | None = None
        self._shown = False
        self._follow: Future | None = None
        self._error: BaseException | None = None

    def follow(self) -> WorkflowHandle:
        if self._follow is None:
            self._follow = self._engine.spawn(self._run())
        return self

    async def _run(self) -> None:
        try:
            await self._engine.watch_workflow(self.id, self._on_change)
        except Exception as e:  # surfaced by wait()
            self._error = e
        self._ended.set()

    def _on_change(self, wf: dict[str, Any]) -> None:
        with self._lock:
            if wf == self._wf and self._shown:
                return
            self._wf = wf
        if wf["state"] in TERMINAL:
            self._ended.set()
        self._update()

    @property
    def workflow(self) -> dict[str, Any]:
        with self._lock:
            return dict(self._wf)

    @property
    def state(self) -> str:
        return self.workflow["state"]

    @property
    def steps(self) -> list[dict[str, Any]]:
        return list(self.workflow["steps"])

    def wait(self, timeout: float | None = None) -> dict[str, Any]:
        if not self._ended.wait(timeout):
            raise DiamondError(f"workflow {self.id} still {self.state} after {timeout}s")
        if self._error is not None:
            raise self._error
        return self.workflow

    def cancel(self) -> WorkflowHandle:
        self._on_change(self._engine.call(self._engine.cancel_workflow(self.id)))
        return self

    # -- display -----------------------------------------------------------------------
    def _ipython_display_(self) -> None:
        from IPython.display import display

        pub = getattr(_shell(), "display_pub", None)
        self._parent = getattr(pub, "parent_header", None)
        display(bundle(self.workflow), raw=True, display_id=self._display_id)
        self._shown = True

    def _update(self) -> None:
        from IPython.display import update_display

        wf = self.workflow
        if not self._shown or (not in_kernel() and wf["state"] not in TERMINAL):
            return
        pub = getattr(_shell(), "display_pub", None)
        token = None
        if self._parent and hasattr(pub, "set_thread_parent"):
            token = pub.set_thread_parent(self._parent)
        try:
            update_display(bundle(wf), raw=True, display_id=self._display_id)
        except Exception:  # a display problem must not stop following the workflow
            pass
        finally:
            if token is not None:
                pub.reset_thread_parent(token)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(render_text(self.workflow))

    def __repr__(self) -> str:
        return f"<WorkflowHandle {self.id} {self.state}>"
