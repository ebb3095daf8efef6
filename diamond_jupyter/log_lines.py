"""The engine's log: one line a message. Its messages carry text from outside (a job's name,
a scheduler's reason or stderr, a site's error); written as `one_line` writes it, a newline
or a terminal escape in them cannot start a forged line in the Jupyter server's log or
drive the terminal that shows it. A traceback (exc_info) stays on its own lines."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from .model import one_line


class OneLineLogger(logging.LoggerAdapter):
    """A module's logger whose every message is formatted first, then written out by
    `one_line` (the record's args are that one line, so a handler's `%(message)s` is too)."""

    def log(self, level: int, msg: object, *args: object, exc_info: Any = None,
            stack_info: bool = False, stacklevel: int = 1,
            extra: Mapping[str, object] | None = None) -> None:
        if not self.isEnabledFor(level):
            return
        try:
            text = str(msg) % args if args else str(msg)
        except (TypeError, ValueError, KeyError):  # arguments that do not fit the message
            text = " ".join([str(msg), *(repr(a) for a in args)])
        # stacklevel + 1: the record names the line that logged, not this method
        self.logger.log(level, "%s", one_line(text), exc_info=exc_info, stack_info=stack_info,
                        stacklevel=stacklevel + 1, extra=extra)


def one_line_logger(name: str) -> OneLineLogger:
    """The logger `name` (`logging.getLogger`), its messages one line each."""
    return OneLineLogger(logging.getLogger(name), {})
