"""`diamond`: the command-line face. Every subcommand calls the Federation facade."""

from __future__ import annotations

import argparse
import io
import json
import os
import shlex
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from ..model import BadInput, DiamondError, visible
from ..option_types import (
    StoreOnce,
    near_choice,
    pasted_dash,
    too_many_arguments,
    unknown_option,
)
from .agent import add_agent_commands
from .common import EXIT_CODES, LeftClosing, common_options
from .describe import add_describe_command
from .jobs import add_job_commands, add_transfer_command
from .login import add_login_command
from .resume import add_resume_command
from .testbed import add_testbed_commands
from .workflow import add_workflow_command

if TYPE_CHECKING:
    import logging


class _Parser(argparse.ArgumentParser):
    """argparse, with three changes: an unknown option is reported by the subcommand it was
    given to (its usage, not the top-level one), an option taking one value may not be given
    two, and with --json the error is also printed as JSON on stdout, as every other error
    of a --json run is."""

    json_errors = False  # set by `main` when the command line asks for --json

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # no option read from a prefix of its name: `submit --time 90 --wait` waited 90 s
        # (--timeout) for a job given no time limit
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.register("action", None, StoreOnce)
        self.register("action", "store", StoreOnce)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if args is not None and (why := pasted_dash(list(args), self._option_string_actions,
                                                    every=self._subparsers is None)):
            self.error(why)
        self._given = list(args or [])
        ns, extra = super().parse_known_args(args, namespace)
        if extra and self._subparsers is None:
            unknown = next((a for a in extra if a.startswith("-") and a != "-"), None)
            if unknown is not None:
                self.error(self._unknown_option(unknown.split("=", 1)[0]))
            self.error(self._too_many(extra))
        return ns, extra

    def _too_many(self, extra: list[str]) -> str:
        return too_many_arguments(self.prog, self._positionals._group_actions, extra)

    def error(self, message: str) -> NoReturn:
        given = getattr(self, "_given", [])
        if self._subparsers is None and message.startswith("the following arguments are"):
            # `cancel --all`: the unknown option is the slip, not the job left out
            unknown = next((a for a in given if a.startswith("-") and a not in ("-", "--")
                            and a.split("=", 1)[0] not in self._option_string_actions), None)
            if unknown is not None:
                message = self._unknown_option(unknown.split("=", 1)[0])
        elif message.endswith(": expected one argument"):
            message += self._dash_value(given)
        elif ": invalid choice: " in message:
            message = near_choice(message, self._actions, getattr(self, "_given", []))
        # an argument quoted back (`cancel JOB <OSC 52 ...>`) is shown, never acted on by
        # the terminal: it wrote the clipboard, the title
        message = visible(message)
        if _Parser.json_errors:
            _json_error("bad-input", f"{self.prog}: {message}")
        super().error(message)

    def _dash_value(self, given: list[str]) -> str:
        """`--mem -5G`: the value after an option taking one starts with '-', so argparse
        read it as an option: what to write when it is the value meant."""
        for option, value in zip(given, given[1:], strict=False):
            action = self._option_string_actions.get(option)
            if action is not None and action.nargs is None and value.startswith("-") \
                    and len(value) > 1:
                return (f" ({value!r} after {option} starts with '-', so it was read as an "
                        f"option; if it is the value, write {option}={value})")
        return ""

    def _unknown_option(self, given: str) -> str:
        return unknown_option(given, self._option_string_actions)



def _json_error(reason: str, message: str) -> None:
    print(json.dumps({"reason": reason, "message": message}, indent=2))


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    ap = _Parser(prog="diamond", description=__doc__, epilog=EXIT_CODES)
    ap.add_argument("--version", action="version", version=__version__)
    # also before the subcommand (`diamond --config x.yaml sites` said "invalid choice")
    ap.add_argument("--json", action="store_true", dest="json_first",
                    help="machine-readable output (also after the subcommand)")
    ap.add_argument("--config", dest="config_first", metavar="FILE",
                    help="sites file (also after the subcommand)")
    # not required: with no command, `main` says how to begin (no sites file) or lists them
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, fn, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help)
        common_options(p)
        p.set_defaults(fn=fn)
        return p

    add_job_commands(add)
    add_agent_commands(sub, common_options)
    add_testbed_commands(sub, common_options)
    add_transfer_command(add)
    add_describe_command(add)
    add_login_command(add)
    add_resume_command(add)
    add_workflow_command(sub, common_options)
    return ap


def _options_before_the_command(parser: argparse.ArgumentParser,
                                args: argparse.Namespace) -> None:
    """`diamond --json --config F sites` means `diamond sites --json --config F`."""
    if getattr(args, "json_first", False) and hasattr(args, "json"):
        args.json = True
    first, after = getattr(args, "config_first", None), getattr(args, "config", None)
    if first is not None and after is not None and first != after:
        parser.error(f"--config is given twice ({first!r} and {after!r}); give it once")
    if first is not None and hasattr(args, "config"):
        args.config = first


FIRST_RUN_EXAMPLE = """\
sites:
  - name: mycluster            # your name for it: `--site mycluster`
    scheduler: slurm           # or pbs, lsf, flux, sge
    transport:
      host: login.example.org  # the login node you ssh to
      user: alice              # your account there
      key_file: ~/.ssh/id_ed25519
"""


def _no_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """`diamond` alone: without a sites file, how to begin (what to write, where, how to
    check it); with one, the commands. Exit 2 either way: no command is no work done."""
    from ..config import default_config_path, sites_file_path

    given = args.config_first
    try:
        path = sites_file_path(given) if given else default_config_path()
    except BadInput as e:  # `--config ~nosuchuser/sites.yaml`
        print(f"diamond: {e}", file=sys.stderr)
        if getattr(args, "json_first", False):
            _json_error("bad-input", str(e))
        return 2
    if path.is_file():
        message = f"no command given (sites file: {path})"
        print(parser.format_help().rstrip() + f"\n\ndiamond: {message}", file=sys.stderr)
    else:
        message = f"no command given, and no sites file at {path}"
        print(f"diamond: {message}.\n\n"
              "First run: write the clusters you use into that file, e.g.\n\n"
              + FIRST_RUN_EXAMPLE + "\n"
              "Then check it: `diamond sites` lists the sites, `diamond describe mycluster` "
              "connects and shows what it found.\n"
              "Elsewhere: give `--config FILE` or set DIAMOND_CONFIG. To try diamond on local "
              "test clusters: `diamond testbed up`.\n"
              "Commands: `diamond --help`.", file=sys.stderr)
    if getattr(args, "json_first", False):
        _json_error("bad-input", message)
    return 2


def _quiet_logs() -> None:
    """Failures reach the user as one line; library chatter only with DIAMOND_LOG=debug."""
    import logging
    import os

    level = os.environ.get("DIAMOND_LOG", "").upper()
    handler = logging.StreamHandler()
    handler.setFormatter(log_formatter())
    logging.basicConfig(level=getattr(logging, level, logging.CRITICAL) if level else
                        logging.CRITICAL, handlers=[handler])


def log_formatter() -> logging.Formatter:
    """Log lines as the terminal shows them: a message (a site's error, a job's name) on
    its one line, written out (`one_line`); a traceback after it on its lines (`visible`)."""
    import logging

    from ..model import one_line, visible

    class Shown(logging.Formatter):
        def formatMessage(self, record: logging.LogRecord) -> str:
            return one_line(super().formatMessage(record))

        def format(self, record: logging.LogRecord) -> str:
            return visible(super().format(record))

    return Shown("%(levelname)s %(name)s: %(message)s")


def _shown_in_any_encoding() -> None:
    """A terminal whose encoding cannot write a character (LANG=C: ASCII) gets it written as
    an escape (\\xfc), not a traceback in place of the whole answer."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


def _one_line(e: BaseException) -> str:
    """Errors are one line on stderr, whatever text a library (or a site's stderr) put in
    them, its control characters shown, never acted on by the terminal; a secret in them
    (a site's error may echo a token from the environment) shown as *** (every face's way)."""
    from ..federation import Federation
    from ..model import visible

    said = Federation.error_said(e)
    return visible(" | ".join(part.strip() for part in said.splitlines() if part.strip()))


def main(argv: list[str] | None = None) -> int:
    _quiet_logs()
    _shown_in_any_encoding()
    argv = sys.argv[1:] if argv is None else list(argv)
    _Parser.json_errors = "--json" in argv
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "fn", None) is None:  # `diamond` alone, or with options only
        return _no_command(parser, args)
    _options_before_the_command(parser, args)
    try:
        return args.fn(args) or 0
    except BadInput as e:
        return _fail(args, e, 2, "bad-input")
    except DiamondError as e:  # a site, the network or the engine failed: exit 1
        return _fail(args, e, 1, "failed")
    except KeyboardInterrupt as e:  # Ctrl-C: no traceback, and what became of the work
        line = _interrupted(args)
        print(f"diamond: {line}", file=sys.stderr)
        if getattr(args, "json", False):
            _json_error("interrupted", line)
        if isinstance(e, LeftClosing):  # its engine still closing: not waited for
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(130)
        return 130
    except BrokenPipeError:  # e.g. `diamond jobs | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        return _fail(args, e, 1, "failed")


def _interrupted(args: argparse.Namespace) -> str:
    """What Ctrl-C left behind: only this command stopped; jobs keep running (nothing is
    cancelled on the way out), with the command that follows them."""
    from ..model import visible

    job, command = getattr(args, "job", None), getattr(args, "command", None)
    typed = shlex.quote(job) if job else None  # the id as the user typed it, as a shell word
    if command == "wait" and job:
        return visible(f"stopped waiting; {job} keeps running (follow it: `diamond wait "
                       f"{typed}` or `diamond status {typed}`; stop it: `diamond cancel "
                       f"{typed}`)")
    if command == "logs" and getattr(args, "follow", False) and job:
        return visible(f"stopped following; {job} keeps running (`diamond logs {typed}` "
                       f"later shows its output; stop it: `diamond cancel {typed}`)")
    if command == "submit" and getattr(args, "started", None):
        job = args.started
        return visible(f"interrupted; {job} was submitted and keeps running (follow it: "
                       f"`diamond wait {job}`; stop it: `diamond cancel {job}`)")
    if command == "submit" and getattr(args, "unsure", None):
        job = args.unsure
        return visible(f"stopped checking; {job} is kept open, as its site may have taken it "
                       f"(do not submit it again; `diamond status {job}` tells once the "
                       f"engine has looked it up by its token)")
    if command == "submit":
        return ("interrupted; a job that reached its site keeps running (`diamond jobs` "
                "lists it, with its id)")
    if command == "workflow" and getattr(args, "workflow_command", None) == "run":
        wf = getattr(args, "started", None)
        if wf:
            return visible(f"stopped waiting; workflow {wf} is not cancelled (follow it: "
                           f"`diamond workflow status {wf}`; stop it: `diamond workflow "
                           f"cancel {wf}`)")
        return ("interrupted; a workflow that started is not cancelled (`diamond workflow "
                "list` shows its id; `diamond workflow status ID` follows it)")
    return "interrupted" + (f"; {job} is not cancelled" if job and command != "cancel"
                            else "")


def _fail(args: argparse.Namespace, e: BaseException, code: int, reason: str) -> int:
    """The one-line reason on stderr; with --json, also {"reason", "message"} on stdout (a
    script reading the output gets JSON whatever happened)."""
    line = _one_line(e)
    print(f"diamond: {line}", file=sys.stderr)
    if getattr(args, "json", False):
        _json_error(reason, line)
    return code
