"""The live job card: ipywidgets in a notebook, else text/HTML updated by display id.

Cards are updated from the engine's background thread. Widget state changes travel as comm
messages, which ipykernel accepts from any thread; display updates are parented to the cell
that first showed the card, so frontends route them to its output.
"""

from __future__ import annotations

import html
import os
import uuid
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from .model import Job, JobState
from .placement import Placement

if TYPE_CHECKING:
    from .handle import JobHandle

COLORS = {"PENDING": "#b26a00", "RUNNING": "#1565c0", "COMPLETED": "#2e7d32",
          "FAILED": "#c62828", "CANCELLED": "#6d4c41", "TIMEOUT": "#ad1457",
          "UNKNOWN": "#616161"}
BAR_WIDTH = 30  # characters of the text timeline


def hms(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    s = max(0, round(seconds))
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return f"{h}:{m:02d}:{s:02d}"


def _clock(t: datetime | None) -> str:
    return t.astimezone(timezone.utc).strftime("%H:%M:%S UTC") if t else "-"


def timing(job: Job, now: datetime | None = None) -> tuple[float | None, float | None]:
    """(seconds queued, seconds running) so far."""
    now = now or datetime.now(timezone.utc)
    queued = running = None
    if job.submitted_at:
        queued = ((job.started_at or job.ended_at or now) - job.submitted_at).total_seconds()
    if job.started_at:
        running = ((job.ended_at or now) - job.started_at).total_seconds()
    return queued, running


def why(job: Job) -> str:
    """Why the job runs where it does, from the placement's ranked verdicts."""
    pl = job.placement
    if not pl:
        return "chosen explicitly (--site)"
    ranked = pl.get("ranked") or []
    mine = next((v for v in ranked if v.get("site") == job.site), None)
    parts = [f"chosen by policy {pl.get('policy', '?')}"]
    if mine:
        bits = [mine.get("verdict", "")]
        if mine.get("partition"):
            bits.append(f"partition {mine['partition']}")
        if mine.get("estimated_start") and pl.get("now"):
            try:
                wait = (datetime.fromisoformat(mine["estimated_start"])
                        - datetime.fromisoformat(pl["now"])).total_seconds()
                bits.append(f"est. start +{hms(wait)}")
            except (TypeError, ValueError):
                pass
        parts.append(", ".join(b for b in bits if b))
    others = []
    try:
        placed = Placement.model_validate(pl)
    except ValueError:
        placed = None
    for v in ranked:
        if v.get("site") == job.site:
            continue
        reason = placed.why_not(v.get("site", ""), job.site) if placed else ""
        others.append(f"{v.get('site')} {v.get('verdict', '')}" + (f": {reason}" if reason else ""))
    text = ": ".join(parts)
    return text + (f" (over {', '.join(others)})" if others else "")


def outcome(job: Job) -> str:
    if not job.state.terminal:
        return ""
    code = f", exit code {job.exit_code}" if job.exit_code is not None else ""
    said = job.reason and job.state != JobState.COMPLETED and job.reason.strip() != code[2:]
    reason = f" — {job.reason}" if said else ""
    return f"{job.state.value}{code}{reason}"


def render_text(job: Job, extras: dict[str, Any]) -> str:
    q, r = timing(job)
    lines = [f"{job.id}  {job.state.value}  {job.name or ''}".rstrip(),
             f"  site: {job.site} — {why(job)}",
             f"  queued {hms(q)} | running {hms(r)}  [{_text_bar(q, r)}]"]
    if job.state.terminal:
        lines.append(f"  outcome: {outcome(job)}")
    tail = extras.get("stdout")
    if tail:
        lines.append("  stdout (tail):")
        lines += [f"    {ln}" for ln in tail.rstrip("\n").splitlines()]
    if extras.get("files"):
        lines.append("  files: " + ", ".join(extras["files"]))
    if extras.get("error"):
        lines.append(f"  ({extras['error']})")
    return "\n".join(lines)


def _text_bar(q: float | None, r: float | None) -> str:
    total = (q or 0) + (r or 0)
    if total <= 0:
        return "." * BAR_WIDTH
    nq = round(BAR_WIDTH * (q or 0) / total)
    return "." * nq + "#" * (BAR_WIDTH - nq)


def header_html(job: Job) -> str:
    e = html.escape
    color = COLORS.get(job.state.value, "#616161")
    return (f'<div data-diamond-job="{e(job.id)}" data-diamond-state="{job.state.value}">'
            f"<b>{e(job.id)}</b> &nbsp;<span style='background:{color};color:white;"
            f"padding:0 6px;border-radius:3px'>{job.state.value}</span>"
            f" &nbsp;<code>{e(job.name or '')}</code></div>")


def why_html(job: Job) -> str:
    return f"<div><b>{html.escape(job.site)}</b> — {html.escape(why(job))}</div>"


def timing_html(job: Job) -> str:
    q, r = timing(job)
    total = (q or 0) + (r or 0)
    qp = 100 * (q or 0) / total if total > 0 else 100
    live = "" if job.state.terminal else " (so far)"
    run_color = COLORS["FAILED"] if job.state.terminal and job.state != JobState.COMPLETED \
        else COLORS["RUNNING"]
    if job.started_at is None and job.state.terminal:
        label = f"queued {hms(q)}, never ran"
    elif job.started_at is None:
        label = f"queued since {_clock(job.submitted_at)}"
    else:
        label = f"queued {hms(q)} · running {hms(r)}{live}"
    return ("<div style='display:flex;height:10px;width:320px;background:#eee;"
            "border-radius:3px;overflow:hidden'>"
            f"<div title='queued' style='width:{qp:.1f}%;background:{COLORS['PENDING']}'></div>"
            f"<div title='running' style='flex:1;background:{run_color if r else '#eee'}'>"
            f"</div></div><div style='font-size:90%'>{label}</div>")


def result_html(job: Job, extras: dict[str, Any]) -> str:
    e = html.escape
    out = []
    if job.state.terminal:
        out.append(f"<div><b>outcome:</b> {e(outcome(job))}</div>")
    if extras.get("stdout"):
        out.append("<div><b>stdout (tail)</b></div><pre style='max-height:12em;overflow:auto;"
                   f"margin:0'>{e(extras['stdout'])}</pre>")
    if extras.get("files"):
        out.append("<div><b>files:</b> " + ", ".join(f"<code>{e(f)}</code>"
                                                     for f in extras["files"]) + "</div>")
    if extras.get("error"):
        out.append(f"<div style='color:#c62828'>{e(extras['error'])}</div>")
    return "".join(out)


def render_html(job: Job, extras: dict[str, Any]) -> str:
    return ("<div class='diamond-jobcard' style='border:1px solid #ccc;padding:6px;"
            f"border-radius:4px'>{header_html(job)}{why_html(job)}{timing_html(job)}"
            f"{result_html(job, extras)}</div>")


# -- presentation ------------------------------------------------------------------------------

def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def in_kernel() -> bool:
    return getattr(_shell(), "kernel", None) is not None


def widgets_enabled() -> bool:
    if os.environ.get("DIAMOND_NO_WIDGETS", "").strip() not in ("", "0") or not in_kernel():
        return False
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


class WidgetCard:
    """ipywidgets: each part is its own widget, so an update sends only what changed."""

    def __init__(self, handle: JobHandle) -> None:
        import ipywidgets as w

        self.header, self.why, self.timing, self.result = (w.HTML() for _ in range(4))
        self.box = w.VBox([self.header, self.why, self.timing, self.result])
        self.box.add_class("diamond-jobcard")
        self.update(handle)

    def update(self, handle: JobHandle) -> None:
        job, extras = handle.snapshot()
        self.header.value = header_html(job)
        self.why.value = why_html(job)
        self.timing.value = timing_html(job)
        self.result.value = result_html(job, extras)

    def show(self) -> None:
        from IPython.display import display

        display(self.box)


class TextCard:
    """Text/HTML with a display id; `update_display` replaces it in place."""

    def __init__(self, handle: JobHandle) -> None:
        self.handle = handle
        self.display_id = f"diamond-{uuid.uuid4().hex}"
        self._parent: dict[str, Any] | None = None
        self._shown = False
        self.live = in_kernel()  # a terminal prints every update: only show the end there

    def _repr_html_(self) -> str:
        return render_html(*self.handle.snapshot())

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(render_text(*self.handle.snapshot()))

    def __repr__(self) -> str:
        return render_text(*self.handle.snapshot())

    def show(self) -> None:
        from IPython.display import display

        pub = getattr(_shell(), "display_pub", None)
        self._parent = getattr(pub, "parent_header", None)
        display(self, display_id=self.display_id)
        self._shown = True

    def update(self, handle: JobHandle) -> None:
        from IPython.display import update_display

        job, extras = handle.snapshot()
        if not self._shown or (not self.live and not (job.state.terminal and extras)):
            return
        pub = getattr(_shell(), "display_pub", None)
        token = None
        if self._parent and hasattr(pub, "set_thread_parent"):
            token = pub.set_thread_parent(self._parent)
        try:
            update_display(self, display_id=self.display_id)
        finally:
            if token is not None:
                pub.reset_thread_parent(token)


def show(handle: JobHandle) -> None:
    """Display the handle's card (one card per handle; showing it again adds a view)."""
    card = handle._card
    if card is None:
        card = WidgetCard(handle) if widgets_enabled() else TextCard(handle)
        handle._attach(card)
        card.update(handle)  # whatever changed while the card was being built
    card.show()
