"""The job card: a mime bundle (HTML, text and `application/vnd.diamond.job+json`) shown with a
display id and replaced in place as the job progresses.

The bundle is what the notebook saves, so a reopened notebook, nbviewer and nbconvert show the
job's last known state without a kernel. In JupyterLab the diamond extension renders the JSON
part as a live card (buttons, elapsed time) that follows the job through the server's events,
whatever became of the kernel that showed it.

Cards are updated from the engine's background thread: display updates are parented to the
cell that first showed the card, so frontends route them to its output.
"""

from __future__ import annotations

import html
import uuid
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..model import (
    EXPLICIT_POLICY,
    Job,
    JobState,
    array_tasks_said,
    hms,
    one_line,
    predicted_start,
    visible,
)
from ..placement import Placement

if TYPE_CHECKING:
    from .handle import JobHandle

MIME = "application/vnd.diamond.job+json"
CARD_VERSION = 1
# One colour per state, shared with the sidebar (style/base.css defines the same variables).
COLORS = {"PENDING": "#b26a00", "RUNNING": "#1565c0", "COMPLETED": "#2e7d32",
          "FAILED": "#c62828", "CANCELLED": "#6d4c41", "TIMEOUT": "#ad1457",
          "UNKNOWN": "#616161"}
# Text on a state's colour: white, dark in a dark theme (where the colours are lighter).
INK = "var(--jp-diamond-state-ink, white)"
BAR_WIDTH = 30  # characters of the text timeline
TAIL_SHOWN = 20  # lines of stdout / stderr on the card


def color(state: str) -> str:
    """The state's colour: the JupyterLab theme's variable when there is one, else the hex."""
    return f"var(--jp-diamond-state-{state.lower()}, {COLORS.get(state, COLORS['UNKNOWN'])})"


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


def time_limit(job: Job) -> int | None:
    return job.spec.resources.walltime_s if job.spec and job.spec.resources else None


def why(job: Job) -> str:
    """Why the job runs where it does, from the placement's ranked verdicts."""
    pl = job.placement
    if not pl or pl.get("policy") == EXPLICIT_POLICY:
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
                bits.append(f"est. start +{hms(wait, days=False)}")
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


def elapsed(job: Job, limit: int | None) -> str:
    """'running 0:00:05 of 0:05:00' (or without the limit when none was asked)."""
    q, r = timing(job)
    of = f" of {hms(limit, days=False)} limit" if limit else ""
    if job.started_at is None:
        if job.state.terminal:
            return f"queued {hms(q, days=False)}, never ran"
        return f"queued {hms(q, days=False)} (since {_clock(job.submitted_at)})"
    live = "" if job.state.terminal else " so far"
    return f"queued {hms(q, days=False)} · ran {hms(r, days=False)}{of}{live}"


def _failed(job: Job) -> bool:
    return job.state.terminal and job.state != JobState.COMPLETED


def _tail(text: str | None) -> str:
    lines = (text or "").rstrip("\n").splitlines()
    return "\n".join(lines[-TAIL_SHOWN:])


# what a card whose submit's answer was lost says in its state's place
LOOKOUT_LABELS = {"looking": "LOOKING FOR IT", "never-submitted": "NEVER SUBMITTED"}


def lookout_of(extras: dict[str, Any]) -> dict[str, Any] | None:
    """Where the search for a job whose submit's answer was lost stands (None: any other
    job, or one found, which shows as itself)."""
    lookout = extras.get("lookout")
    return lookout if isinstance(lookout, dict) and lookout.get("state") in LOOKOUT_LABELS \
        else None


def render_text(job: Job, extras: dict[str, Any]) -> str:
    q, r = timing(job)
    if (lookout := lookout_of(extras)) is not None:
        return (f"{job.id}  {LOOKOUT_LABELS[lookout['state']]}  {one_line(job.name or '')}"
                .rstrip() + f"\n  site: {job.site}\n  {one_line(lookout.get('message', ''))}")
    # the name, the reasons and the error are a job's and a site's text: each on its line
    lines = [f"{job.id}  {job.state.value}  {one_line(job.name or '')}".rstrip(),
             f"  site: {job.site} — {one_line(why(job))}",
             f"  {elapsed(job, extras.get('time_limit_s'))}  [{_text_bar(q, r)}]"]
    if (p := waiting_for(job)) is not None:
        lines.insert(2, f"  predicted start {p}")
    if (tasks := array_tasks_said(job)) is not None:
        lines.insert(2, f"  {tasks}")
    if job.state.terminal:
        lines.append(f"  outcome: {one_line(outcome(job))}")
    for key in ("stdout", "stderr"):
        tail = _tail(extras.get(key))
        if tail and (key == "stdout" or _failed(job)):
            lines.append(f"  {key} (tail):")
            lines += [f"    {ln}" for ln in tail.splitlines()]
    if extras.get("files"):
        lines.append("  files: " + ", ".join(map(one_line, extras["files"])))
    if extras.get("error"):
        lines.append(f"  ({one_line(extras['error'])})")
    # what a terminal IPython prints: the job's colours, never its other control sequences
    return visible("\n".join(lines), keep_colour=True)


def _text_bar(q: float | None, r: float | None) -> str:
    total = (q or 0) + (r or 0)
    if total <= 0:
        return "." * BAR_WIDTH
    nq = round(BAR_WIDTH * (q or 0) / total)
    return "." * nq + "#" * (BAR_WIDTH - nq)


def shown_html(text: str) -> str:
    """Text from a job or a scheduler as HTML: escaped, and each control character written
    out (a bidirectional override could reorder what the notebook shows)."""
    return html.escape(visible(text))


def header_html(job: Job) -> str:
    e = shown_html
    return (f'<div data-diamond-job="{e(job.id)}" data-diamond-state="{job.state.value}">'
            f"<b>{e(job.id)}</b> &nbsp;<span style='background:{color(job.state.value)};"
            f"color:{INK};padding:0 6px;border-radius:3px'>{job.state.value}</span>"
            f" &nbsp;<code>{e(job.name or '')}</code></div>")


def why_html(job: Job) -> str:
    out = f"<div><b>{shown_html(job.site)}</b> — {shown_html(why(job))}</div>"
    if (p := waiting_for(job)) is not None:
        out += f"<div data-diamond-predicted=''>predicted start {shown_html(p)}</div>"
    return out


def waiting_for(job: Job, now: datetime | None = None) -> str | None:
    """A queued job's predicted start from now, '≈ 3 min (90%: < 11 min)'; None once it
    started or ended, or when it has no prediction."""
    if job.started_at is not None or job.state.terminal:
        return None
    p = predicted_start(job, now or datetime.now(timezone.utc))
    return p["text"] if p else None


def timing_html(job: Job, limit: int | None = None) -> str:
    q, r = timing(job)
    # the bar spans the time limit when the job has one and stays within it
    span = max((q or 0) + (limit or r or 0), (q or 0) + (r or 0))
    qp = 100 * (q or 0) / span if span > 0 else 100
    rp = 100 * (r or 0) / span if span > 0 else 0
    run_color = color(job.state.value if job.state.terminal else "RUNNING")
    return ("<div style='display:flex;height:10px;width:320px;background:#eee;"
            "border-radius:3px;overflow:hidden'>"
            f"<div title='queued' style='width:{qp:.1f}%;background:{color('PENDING')}'></div>"
            f"<div title='running' style='width:{rp:.1f}%;background:{run_color}'></div>"
            f"</div><div style='font-size:90%'>{shown_html(elapsed(job, limit))}</div>")


def result_html(job: Job, extras: dict[str, Any]) -> str:
    e = shown_html
    pre = "<pre style='max-height:12em;overflow:auto;margin:0'>"
    out = []
    if (tasks := array_tasks_said(job)) is not None:
        out.append(f"<div>{e(tasks)}</div>")
    if job.state.terminal:
        out.append(f"<div><b>outcome:</b> {e(outcome(job))}</div>")
    if _failed(job) and _tail(extras.get("stderr")):
        out.append(f"<div><b>stderr (tail)</b></div>{pre}{e(_tail(extras['stderr']))}</pre>")
    if _tail(extras.get("stdout")):
        out.append(f"<div><b>stdout (tail)</b></div>{pre}{e(_tail(extras['stdout']))}</pre>")
    if extras.get("files"):
        out.append("<div><b>files:</b> " + ", ".join(f"<code>{e(f)}</code>"
                                                     for f in extras["files"]) + "</div>")
    if extras.get("error"):
        out.append(f"<div style='color:{COLORS['FAILED']}'>{e(extras['error'])}</div>")
    return "".join(out)


def lookout_html(job: Job, lookout: dict[str, Any]) -> str:
    """The card of a job whose submit's answer was lost, while it is looked for by its token
    and once it is closed as never submitted."""
    e, state = shown_html, lookout["state"]
    tint = COLORS["UNKNOWN"] if state == "looking" else COLORS["FAILED"]
    return ("<div class='diamond-jobcard' style='border:1px solid #ccc;padding:6px;"
            f"border-radius:4px'><div data-diamond-job=\"{e(job.id)}\" "
            f'data-diamond-state="{job.state.value}" data-diamond-lookout="{e(state)}">'
            f"<b>{e(job.id)}</b> &nbsp;<span style='background:{tint};color:white;"
            f"padding:0 6px;border-radius:3px'>{e(LOOKOUT_LABELS[state])}</span>"
            f" &nbsp;<code>{e(job.name or '')}</code></div><div><b>{e(job.site)}</b> — "
            f"{e(str(lookout.get('message', '')))}</div></div>")


def render_html(job: Job, extras: dict[str, Any]) -> str:
    if (lookout := lookout_of(extras)) is not None:
        return lookout_html(job, lookout)
    return ("<div class='diamond-jobcard' style='border:1px solid #ccc;padding:6px;"
            f"border-radius:4px'>{header_html(job)}{why_html(job)}"
            f"{timing_html(job, extras.get('time_limit_s'))}{result_html(job, extras)}</div>")


def card_json(job: Job, extras: dict[str, Any]) -> dict[str, Any]:
    """The machine-readable part: what the JupyterLab card renders (and re-attaches from)."""
    return {
        "version": CARD_VERSION,
        "job": job.model_dump(mode="json", exclude={"spec", "token"})
        | {"predicted_start": predicted_start(job)},
        "time_limit_s": extras.get("time_limit_s"),
        "stdout_tail": _tail(extras.get("stdout")) or None,
        "stderr_tail": _tail(extras.get("stderr")) or None,
        "files": list(extras.get("files") or []),
        "error": extras.get("error"),
        # a submit whose answer was lost: {state: looking|found|never-submitted, message, ...}
        "lookout": extras.get("lookout"),
        "rendered_at": datetime.now(timezone.utc).isoformat(),
    }


def bundle(job: Job, extras: dict[str, Any]) -> dict[str, Any]:
    return {"text/plain": render_text(job, extras), "text/html": render_html(job, extras),
            MIME: card_json(job, extras)}


# -- presentation ------------------------------------------------------------------------------

def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def in_kernel() -> bool:
    return getattr(_shell(), "kernel", None) is not None


class Card:
    """The bundle with a display id; `update_display` replaces it in place."""

    def __init__(self, handle: JobHandle) -> None:
        self.handle = handle
        self.display_id = f"diamond-{uuid.uuid4().hex}"
        self._parent: dict[str, Any] | None = None
        self._shown = False
        self.live = in_kernel()  # a terminal prints every update: only show the end there

    def show(self) -> None:
        from IPython.display import display

        pub = getattr(_shell(), "display_pub", None)
        self._parent = getattr(pub, "parent_header", None)
        display(bundle(*self.handle.snapshot()), raw=True, display_id=self.display_id)
        self._shown = True

    def update(self, handle: JobHandle, here: bool = False) -> None:
        """Replace every view of the card; `here`: parented to the running cell rather than
        to the cell that showed it."""
        from IPython.display import update_display

        job, extras = handle.snapshot()
        if not self._shown or (not self.live and not (job.state.terminal
                                                     and "stdout" in extras)):
            return
        pub = getattr(_shell(), "display_pub", None)
        token = None
        if self._parent and not here and hasattr(pub, "set_thread_parent"):
            token = pub.set_thread_parent(self._parent)
        try:
            update_display(bundle(job, extras), raw=True, display_id=self.display_id)
        finally:
            if token is not None:
                pub.reset_thread_parent(token)


def show(handle: JobHandle) -> None:
    """Display the handle's card (one card per handle; showing it again adds a view)."""
    card = handle._card
    if card is None:
        card = Card(handle)
        handle._attach(card)
    card.show()
