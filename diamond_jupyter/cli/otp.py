"""One-time codes in the CLI: every connection the command opens to a site that asks for one
(keyboard-interactive) is answered on the terminal, without echo; scripts give the code in
DIAMOND_OTP instead (used for one prompt, once)."""

from __future__ import annotations

import contextlib
import getpass
import os
import sys
import threading
from collections.abc import Callable

from ..model import SiteError as LoginCancelled

OTP_ENV = "DIAMOND_OTP"
Prompts = list[tuple[str, bool]]


def _has_terminal() -> bool:
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return False
    os.close(fd)
    return True


def terminal_asker(env: dict[str, str] | None = None) -> Callable[[str, str, Prompts], list[str]]:
    """The CLI's interactive handler. The code in DIAMOND_OTP (taken out of the environment, so
    no child process inherits it) answers the first prompt that hides its input; later ones,
    and every one when it is unset, are asked on the terminal. No terminal and no code:
    LoginCancelled, so the command fails with the reason instead of waiting."""
    env = os.environ if env is None else env
    given: list[str] = [env.pop(OTP_ENV)] if env.get(OTP_ENV) else []
    lock = threading.Lock()  # one prompt at a time on the terminal

    def ask(title: str, instructions: str, prompts: Prompts) -> list[str]:
        answers = []
        with lock:
            for text, echo in prompts:
                if given and not echo:
                    answers.append(given.pop())
                    continue
                if not _has_terminal():
                    raise LoginCancelled(f"the site asks {text.strip()!r} and there is no "
                                         f"terminal to ask on; give the code in {OTP_ENV}")
                with contextlib.suppress(OSError), open("/dev/tty", "w") as tty:
                    for line in (title, instructions):
                        if line.strip():
                            tty.write(line.strip() + "\n")
                try:
                    answers.append(input(text) if echo and sys.stdin.isatty()
                                   else getpass.getpass(text))
                except (EOFError, KeyboardInterrupt):
                    raise LoginCancelled("the prompt was closed without an answer") from None
        return answers

    return ask
