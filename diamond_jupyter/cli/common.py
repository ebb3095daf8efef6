"""What every `diamond` subcommand shares: the common options, printing (text or --json),
opening the Federation, and reading a batch script."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..digits import ascii_digits
from ..model import BadInput, Job, JobSpec, array_tasks_said, one_line, visible
from ..option_types import SPEC_OPTIONS

if TYPE_CHECKING:
    from ..summary import SiteSummary


def out(args: argparse.Namespace, data: Any, text: str | None = None) -> None:
    """`data` as JSON with --json (or when there is no text form), else `text`."""
    if args.json or text is None:
        print(json.dumps(data, indent=2, default=str))  # JSON writes control characters out
    else:
        print(visible(text))  # names, reasons, errors from sites: shown, never acted on


_DECIMAL = re.compile(r"\s*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*")


def seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above 0 (`--timeout nan` waited forever,
    `--timeout -1` "timed out after -1s")."""
    # digits 0-9 only, as counts take them: float() also reads `１_0` and `３`
    value = float(text) if _DECIMAL.fullmatch(text) else math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0 (e.g. 30), "
                                         f"not {text!r}")
    return value


def walltime(text: str) -> int:
    """An argparse type: a time limit in any sbatch --time form, in seconds."""
    from ..federation import Federation
    from ..model import BadInput

    try:
        return Federation.walltime_seconds(text)
    except BadInput as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix(f"--time {text!r}: ")
                                         + f", not {text!r}") from None


_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def byte_size(text: str) -> int:
    """An argparse type: a size in bytes above 0, with an optional binary unit K, M, G or T
    (`500M`, `2G`, `1048576`)."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = t[-1:] if t[-1:] in _SIZE_UNITS else ""
    digits = t[:-1] if unit else t
    if not ascii_digits(digits) or int(digits) <= 0:
        raise argparse.ArgumentTypeError(f"expected a size above 0 in bytes, optionally with "
                                         f"K, M, G or T (e.g. 500M, 2G), not {text!r}")
    return int(digits) * _SIZE_UNITS[unit]


EXIT_CODES = ("exit status: 0 when done; 2 on bad input (what was given, where, what is "
              "accepted: one line on stderr); 1 when a site, the network or the job failed "
              "(the reason on stderr); 130 when interrupted (Ctrl-C). With --json an error "
              "is also {\"reason\", \"message\"} on stdout.")


def common_options(p: argparse.ArgumentParser) -> None:
    """--json and --config, and the exit statuses in the help's last lines (every
    subcommand's)."""
    p.epilog = f"{p.epilog}\n\n{EXIT_CODES}" if p.epilog else EXIT_CODES
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--config", help="sites file (else $DIAMOND_CONFIG, else the default)")


def job_line(job: Job) -> str:
    extra = f" exit={job.exit_code}" if job.exit_code is not None else ""
    said = job.reason and job.reason != f"exit code {job.exit_code}"
    reason = f" ({one_line(job.reason or '')})" if said else ""
    if job.reused_by:
        reason += f" [native id reused by {job.reused_by}]"
    if (tasks := array_tasks_said(job)) is not None:
        reason += f" [{tasks}]"
    # tab-separated: a tab or newline in a name or a reason is written out
    return f"{job.id}\t{job.state.value}{extra}\t{one_line(job.name or '')}{reason}"


def site_row(summary: SiteSummary) -> dict[str, Any]:
    """A site's row as `diamond sites --json` prints it (partitions by name)."""
    return summary.model_dump(mode="json") | {"partitions": [p.name for p in summary.partitions]}


STDIN = "-"  # a script argument that means standard input (unless a file is named so)
STDIN_JOB_NAME = "stdin"  # the job name of a script piped in that names none


def from_stdin(path: str) -> bool:
    """Whether the script argument `path` means standard input: `-`, no file of that name."""
    return path == STDIN and not os.path.lexists(path)


def read_script(path: str, command: str) -> str:
    """The script the `command` (submit, place, translate) was given: the file at `path`, or
    standard input for `-` (`./make_job.sh | diamond submit -`). BadInput for a `-` whose
    standard input is a terminal (a read would wait for typing no one meant)."""
    from ..federation import Federation

    if not from_stdin(path):
        return Federation.read_script(path)
    if _stdin_is_terminal():
        raise BadInput(f"- reads the job script from standard input, which is a terminal "
                       f"here: pipe it in (./make_job.sh | diamond {command} -, or "
                       f"diamond {command} - < job.sh), or name its file")
    text = Federation.read_script("/dev/stdin", name="the script on standard input")
    if not text.strip():
        raise BadInput(f"- reads the job script from standard input, and it held nothing"
                       f"{' but blanks' if text else ''}: pipe the script in, or name its "
                       "file")
    return text


def _stdin_is_terminal() -> bool:
    try:
        return os.isatty(0)
    except OSError:  # no standard input at all: opening it says so
        return False


def spec_from_file(path: str, dialect: str | None = None, *, name: str | None = None,
                   overrides: dict[str, Any] | None = None,
                   command: str = "submit") -> JobSpec:
    """A batch script in any dialect; a script without directives is run as is."""
    from ..federation import Federation

    # the file's name, its bytes that are not UTF-8 as "_" (the name of `caf\xe9.sh` was
    # no text, and its submit failed in the store)
    stem = STDIN_JOB_NAME if from_stdin(path) else \
        Path(path).stem.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return Federation.spec_from_text(read_script(path, command), dialect, name=name,
                                     default_name=stem.replace("\ufffd", "_"),
                                     overrides=overrides, said_as=SPEC_OPTIONS)


def federation(args: argparse.Namespace, **kw: Any):
    """The engine, in this process; a site asking for a one-time code is answered on the
    terminal or from DIAMOND_OTP."""
    from ..federation import Federation
    from .otp import terminal_asker

    fed = Federation(args.config, **kw)
    fed.set_interactive_handler(terminal_asker())
    return fed


async def with_fed(args: argparse.Namespace, fn: Callable[[Any], Awaitable[Any]], *,
                   resume_held: bool = False, **kw: Any) -> Any:
    """Run `fn` on an engine in this process. `resume_held` (a long-lived command): the engine
    also drives the held work no live engine drives while `fn` runs; otherwise held work left
    after closing is handed to a background `diamond resume`."""
    from .handover import hand_over

    fed = federation(args, **kw)
    try:
        await fed.start(recover=False, resume_held=resume_held)
        return await fn(fed)
    finally:
        await fed.close()
        hand_over(fed, args)


STOP_GRACE_S = 1.0  # after Ctrl-C, how long the engine gets to close before the command leaves


class LeftClosing(KeyboardInterrupt):
    """Ctrl-C, and the engine had not closed within STOP_GRACE_S: `main` exits at once (no
    wait for its threads, blocked on a site perhaps)."""


def with_fed_interruptible(args: argparse.Namespace, fn: Callable[[Any], Awaitable[Any]],
                           **kw: Any) -> Any:
    """`asyncio.run(with_fed(args, fn, **kw))` for a command that runs until a job ends: the
    engine runs on a thread of its own while this (main) thread waits in short steps, so a
    Ctrl-C is seen at once whatever the engine waits on. It then cancels the engine's work
    (closing it as usual) and raises KeyboardInterrupt; LeftClosing when the engine has not
    closed within STOP_GRACE_S."""
    import asyncio
    import threading

    done, stop = threading.Event(), threading.Event()
    outcome: dict[str, Any] = {}
    running: dict[str, Any] = {}

    async def engine() -> Any:
        running["loop"], running["task"] = asyncio.get_running_loop(), asyncio.current_task()
        if stop.is_set():  # Ctrl-C came before the task could be named
            raise asyncio.CancelledError
        return await with_fed(args, fn, **kw)

    def work() -> None:
        try:
            outcome["value"] = asyncio.run(engine())
        except BaseException as e:  # handed to the main thread, raised there
            outcome["error"] = e
        finally:
            done.set()

    # a daemon: a thread still closing after Ctrl-C never holds the process (LeftClosing)
    thread = threading.Thread(target=work, name="diamond-engine", daemon=True)
    try:
        thread.start()
        while not done.wait(0.2):  # short steps: a signal another thread took is seen soon
            pass
    except KeyboardInterrupt:
        stop.set()
        if "loop" in running:
            with contextlib.suppress(RuntimeError):  # its loop already closed
                running["loop"].call_soon_threadsafe(running["task"].cancel)
        try:
            closed = not thread.is_alive() or done.wait(STOP_GRACE_S)
        except KeyboardInterrupt:  # a second Ctrl-C: no more waiting
            closed = False
        if not closed:
            raise LeftClosing from None
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
