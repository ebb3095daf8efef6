"""`diamond`: the command-line face. Every subcommand calls the Federation facade."""

from __future__ import annotations

import argparse
import os
import sys

from ..model import BadInput, DiamondError
from .agent import add_agent_commands
from .common import common_options
from .describe import add_describe_command
from .jobs import add_job_commands, add_transfer_command
from .login import add_login_command
from .testbed import add_testbed_commands
from .workflow import add_workflow_command


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    ap = argparse.ArgumentParser(prog="diamond", description=__doc__)
    ap.add_argument("--version", action="version", version=__version__)
    sub = ap.add_subparsers(dest="command", required=True)

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
    add_workflow_command(sub, common_options)
    return ap


def _quiet_logs() -> None:
    """Failures reach the user as one line; library chatter only with DIAMOND_LOG=debug."""
    import logging
    import os

    level = os.environ.get("DIAMOND_LOG", "").upper()
    logging.basicConfig(level=getattr(logging, level, logging.CRITICAL) if level else
                        logging.CRITICAL, format="%(levelname)s %(name)s: %(message)s")


def _one_line(e: BaseException) -> str:
    """Errors are one line on stderr, whatever text a library (or a site's stderr) put in
    them, its control characters shown, never acted on by the terminal."""
    from ..model import visible

    return visible(" | ".join(part.strip() for part in str(e).splitlines() if part.strip()))


def main(argv: list[str] | None = None) -> int:
    _quiet_logs()
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args) or 0
    except BadInput as e:
        print(f"diamond: {_one_line(e)}", file=sys.stderr)
        return 2
    except DiamondError as e:
        print(f"diamond: {_one_line(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `diamond jobs | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        print(f"diamond: {_one_line(e)}", file=sys.stderr)
        return 1
