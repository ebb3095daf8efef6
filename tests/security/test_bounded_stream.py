"""Streamed lines (the job's event channel, `tail -F`) are bounded: a job that writes one
15 MB "line" costs the server at most `max_line` characters, and the lines after it arrive."""

from __future__ import annotations

import time

from diamond_jupyter.transports.base import MAX_STREAM_LINE, LineSplitter

CHUNK = 64 * 1024


def test_a_15mb_line_is_cut_and_the_next_lines_still_arrive():
    s = LineSplitter()
    big = b"\r" + b"#" * (15 << 20)
    out: list[str] = []
    t0 = time.thread_time()
    out += s.feed(b"before\n")
    for i in range(0, len(big), CHUNK):
        out += s.feed(big[i:i + CHUNK])
        assert len(s._buf) <= MAX_STREAM_LINE  # never more held than one line's worth
    out += s.feed(b"\nafter\nlast")
    out += s.end()
    secs = time.thread_time() - t0
    assert out[0] == "before" and out[-2:] == ["after", "last"]
    assert len(out) == 4 and len(out[1]) == MAX_STREAM_LINE  # was one 15 MB string
    assert secs < 2.0, f"{secs:.2f} s"


def test_lines_split_across_chunks_and_multibyte_characters_are_kept():
    s = LineSplitter(max_line=10)
    data = "ünï\nabc\n0123456789ABC\nok\n".encode()
    out = [ln for i in range(len(data)) for ln in s.feed(data[i:i + 1])] + s.end()
    assert out == ["ünï", "abc", "0123456789", "ok"]
