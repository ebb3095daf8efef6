"""The agent in a notebook: `ask(engine, text)` starts a task on the engine (in-process, or
the user's Jupyter server over REST) and returns a `TaskHandle` whose cell output follows
the task's steps live and ends with its answer; `approve` / `reject` decide a waiting plan.

The magics call `ask(engine, text, origin=...)` for `%%diamond ask` and
`approve(engine, task_id)` for `%diamond approve TASK`.
"""

from __future__ import annotations

import html
import json
import threading
from typing import Any

from ..federation_plan import describe_plan
from ..log_lines import one_line_logger
from ..model import DiamondError, one_line, visible
from .tasks import FINAL_STATES

log = one_line_logger(__name__)
SHOWN_STEPS = 12


class TaskHandle:
    """A task as a cell output: steps, the plan awaiting approval, the answer."""

    def __init__(self, engine: Any, task: dict[str, Any]) -> None:
        self._engine, self._task = engine, task
        self._lock = threading.Lock()
        self._final = threading.Event()
        self._display: Any = None
        self._update(task)

    @property
    def id(self) -> str:
        return self._task["id"]

    @property
    def state(self) -> str:
        return self._task["state"]

    @property
    def answer(self) -> str | None:
        return self._task.get("answer")

    @property
    def task(self) -> dict[str, Any]:
        return self._task

    def result(self, timeout: float | None = None) -> str | None:
        """Block until the task is done, failed or rejected; its answer."""
        if not self._final.wait(timeout):
            raise TimeoutError(f"task {self.id} is still {self.state}")
        if self.state == "failed":
            raise DiamondError(f"task {self.id} failed: {self._task.get('error')}")
        return self.answer

    def _update(self, task: dict[str, Any]) -> None:
        with self._lock:
            self._task = task
            if task["state"] in FINAL_STATES:
                self._final.set()
            shown = self._display
        if shown is not None:
            try:
                shown.update(self._bundle(), raw=True)
            except Exception:  # the kernel may be gone; the task goes on regardless
                log.debug("task display update failed", exc_info=True)

    def _bundle(self) -> dict[str, str]:
        return {"text/plain": repr(self), "text/html": self._repr_html_()}

    def _ipython_display_(self) -> None:
        """Shown once with a display id; later states replace it in the same cell."""
        from IPython.display import display

        if self._display is None:
            self._display = display(self._bundle(), raw=True, display_id=True)
        else:
            display(self._bundle(), raw=True)

    def _lines(self) -> list[str]:
        t = self._task
        out = [f"agent task {t['id']}: {t['state']}"]
        for s in (t.get("steps") or [])[-SHOWN_STEPS:]:
            d = s.get("data") or {}
            what = d.get("text") or d.get("tool") or d.get("cause") or ""
            if s["kind"] == "tool_call":
                what = f"{d.get('tool')}({json.dumps(d.get('input'), default=str)[:120]})"
            out.append(f"  {s['kind']:<11} {one_line(str(what)[:200])}")  # one row a step
        if t["state"] == "awaiting_approval" and t.get("pending"):
            out.append("  awaits approval of this plan (exactly this runs once approved):")
            out += ["    " + line for line in
                    describe_plan((t["pending"] or {}).get("plan")).splitlines()]
            shown = (t["pending"] or {}).get("plan_sha256")
            named = f" --plan {shown}" if shown else ""  # approves this plan only
            out.append(f"  %diamond approve {t['id']}{named}   or   %diamond reject {t['id']}")
        if t.get("answer"):
            out.append(t["answer"])
        if t.get("error"):
            out.append(f"error: {one_line(str(t['error']))}")
        return out

    def __repr__(self) -> str:
        # the model's words and its tools' inputs may echo job output (untrusted): a
        # terminal shows their control sequences written out, never acts on them
        return visible("\n".join(self._lines()))

    def _repr_html_(self) -> str:
        return (f'<pre data-diamond-task="{html.escape(self.id)}" '
                f'data-diamond-task-state="{html.escape(self.state)}">'
                + html.escape(repr(self)) + "</pre>")


# -- following a task on either engine -------------------------------------------------------

async def _follow_local(engine: Any, handle: TaskHandle) -> None:
    import asyncio

    fed = await engine.fed()
    q: asyncio.Queue[None] = asyncio.Queue()

    def on(ev: Any) -> None:
        if ev.kind.startswith("agent.") and ev.data.get("task_id") == handle.id:
            q.put_nowait(None)
    unsub = fed.subscribe(on)
    try:
        while True:
            task = fed.task(handle.id)
            handle._update(task)
            if task["state"] in FINAL_STATES:
                return
            await q.get()
            while not q.empty():
                q.get_nowait()
    finally:
        unsub()


async def _follow_server(engine: Any, handle: TaskHandle) -> None:
    """The server's event websocket (agent-step events of this task), re-reading the task
    on each; reconnects with backoff."""
    import asyncio

    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    ws_url = "ws" + engine.url[4:] + "api/events/subscribe"
    delay = 0.5
    while True:
        try:
            conn = await websocket_connect(HTTPRequest(ws_url, headers=engine._headers()))
            while True:
                task = await engine.request("GET", f"tasks/{handle.id}")
                handle._update(task)
                if task["state"] in FINAL_STATES:
                    conn.close()
                    return
                while True:
                    msg = await conn.read_message()
                    if msg is None:
                        raise ConnectionError("event stream closed")
                    data = json.loads(msg)
                    if "agent-step" in str(data.get("schema_id", "")) and \
                            data.get("task_id") == handle.id:
                        break
        except asyncio.CancelledError:
            raise
        except DiamondError:
            raise
        except Exception as e:
            log.info("diamond: task event stream lost (%s)", e)
        await asyncio.sleep(delay)  # reconnect backoff, not synchronisation
        delay = min(delay * 2, 30.0)


async def _start(engine: Any, text: str, approval: str | None,
                 origin: dict[str, Any] | None) -> dict[str, Any]:
    if engine.kind == "server":  # no approval given: the server's DiamondApp.agent_approval
        body = {"prompt": text} | ({"approval": approval} if approval else {}) | (
            {"origin": origin} if origin else {})
        return await engine.request("POST", "tasks", body)
    agent = await engine.agent()
    return await agent.ask(text, approval=approval or "ask", origin=origin)


def ask(engine: Any, text: str, *, approval: str | None = None,
        origin: dict[str, Any] | None = None) -> TaskHandle:
    """Start a task (`%%diamond ask`); the handle's output follows it to its answer.
    `approval` None: "ask" (in-process) or the server's default (DiamondApp.agent_approval).
    """
    task = engine.call(_start(engine, text, approval, origin))
    handle = TaskHandle(engine, task)
    follow = _follow_server if engine.kind == "server" else _follow_local
    engine.spawn(follow(engine, handle))
    return handle


ask_in_notebook = ask


def _decide(engine: Any, task_id: str, verb: str, plan_sha256: str | None = None
            ) -> TaskHandle:
    async def go() -> dict[str, Any]:
        if engine.kind == "server":
            body = {"plan_sha256": plan_sha256} if plan_sha256 else {}
            return await engine.request("POST", f"tasks/{task_id}/{verb}", body)
        agent = await engine.agent()
        return await (agent.approve(task_id, plan_sha256) if verb == "approve"
                      else agent.reject(task_id))
    handle = TaskHandle(engine, engine.call(go()))
    if handle.state not in FINAL_STATES:
        engine.spawn((_follow_server if engine.kind == "server" else _follow_local)(
            engine, handle))
    return handle


def approve(engine: Any, task_id: str, plan_sha256: str | None = None) -> TaskHandle:
    """`%diamond approve TASK [--plan SHA256]`: run the plan the task awaits (with SHA256,
    only while it is that plan); the task goes on."""
    return _decide(engine, task_id, "approve", plan_sha256)


def reject(engine: Any, task_id: str) -> TaskHandle:
    return _decide(engine, task_id, "reject")
