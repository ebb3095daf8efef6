"""The `diamond` command line: `main` parses and runs one subcommand."""

from __future__ import annotations

try:
    from .main import main
except KeyboardInterrupt:  # Ctrl-C while the command line's modules load (seconds on a busy
    import sys  # machine): one line and Ctrl-C's exit status, not a traceback of the imports

    print("diamond: interrupted while starting: nothing was done", file=sys.stderr)
    raise SystemExit(130) from None

__all__ = ["main"]
