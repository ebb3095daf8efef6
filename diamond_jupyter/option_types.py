"""Value types of the options the command line and the magics share (argparse `type=`s):
one definition, so `%diamond submit --hedge 0` is refused as `diamond submit --hedge 0` is."""

from __future__ import annotations

import argparse
from collections.abc import Callable

MAX_HEDGE_COPIES = 8  # the facade's own bound (federation_hedge.MAX_HEDGE)


def count(least: int) -> Callable[[str], int]:
    """An argparse type: a whole number `least` or more (`--lines -5` printed nothing and
    `--limit -1` blamed an `order` the user never gave)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < least:
            raise argparse.ArgumentTypeError(f"expected a whole number, {least} or more, not "
                                             f"{text!r}")
        return value
    return parse


def hedge_count(text: str) -> int:
    """An argparse type: `--hedge N`, the number of copies, 1 (no hedge) to 8."""
    if not text.isdigit() or not 1 <= int(text) <= MAX_HEDGE_COPIES:
        raise argparse.ArgumentTypeError(f"--hedge takes a number of copies from 1 to "
                                         f"{MAX_HEDGE_COPIES}, not {text!r}")
    return int(text)
