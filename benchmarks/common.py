"""Shared helpers: statistics, JSON / markdown / PNG outputs, the test bed's config, and a
private sshd reached through a latency proxy (for the benchmarks that need no test bed)."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import math
import os
import queue
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = RESULTS.parent.parent  # the repository


def median(xs: Sequence[float]) -> float | None:
    return float(statistics.median(xs)) if xs else None


def mean(xs: Sequence[float]) -> float | None:
    return float(statistics.fmean(xs)) if xs else None


def pct(xs: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100), linear interpolation between closest ranks."""
    if not xs:
        return None
    s = sorted(xs)
    k = (len(s) - 1) * q / 100
    lo, hi = math.floor(k), math.ceil(k)
    return float(s[lo] + (s[hi] - s[lo]) * (k - lo))


def ratio(a: float | None, b: float | None, floor: float = 0.0) -> float | None:
    """a / max(b, floor); None when undefined."""
    if a is None or b is None:
        return None
    d = max(b, floor)
    return a / d if d > 0 else None


def rnd(x: Any, nd: int = 4) -> Any:
    if isinstance(x, float):
        return round(x, nd)
    if isinstance(x, dict):
        return {k: rnd(v, nd) for k, v in x.items()}
    if isinstance(x, list):
        return [rnd(v, nd) for v in x]
    return x


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    p.add_argument("--config", help="sites file (default: bring the test bed up, use its)")
    p.add_argument("--out", default=str(RESULTS),
                   help="directory for NAME.json/.md/.png ('' to write nothing)")
    p.add_argument("--tag", default="", help="suffix for the output file names")
    return p


def config_path(given: str | None) -> str:
    """The sites file: given, $DIAMOND_CONFIG, or the test bed's (brought up if needed)."""
    if given or os.environ.get("DIAMOND_CONFIG"):
        return given or os.environ["DIAMOND_CONFIG"]
    from diamond_jupyter import testbed

    testbed.lock.hold()
    return testbed.up()["config"]


def primary_sites(config: str) -> list[str]:
    """The sites `--site auto` ranks: one entry per cluster, without the test bed's second
    doors to them (alpha-pbs, beta-rest), which would count a cluster twice."""
    from diamond_jupyter.config import load_config

    return [s.name for s in load_config(config).sites if s.auto]


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.3f}" if abs(v) < 100 else f"{v:.1f}"
        return "-" if v is None else str(v)
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def emit(name: str, args: argparse.Namespace, data: dict[str, Any], md: str,
         plot: Callable[[Any], None] | None = None) -> None:
    """Write NAME.json, NAME.md and NAME.png under --out; print JSON or the table."""
    data = rnd(data)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        stem = name + (f"-{args.tag}" if args.tag else "")
        (out / f"{stem}.json").write_text(json.dumps(data, indent=2) + "\n")
        (out / f"{stem}.md").write_text(md)
        if plot is not None:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
            plot(ax)
            fig.tight_layout()
            fig.savefig(out / f"{stem}.png")
            plt.close(fig)
    print(json.dumps(data, indent=2) if args.json else md, flush=True)


def two_lines(xs: Sequence[float], first: tuple[str, Sequence[float]],
              second: tuple[str, Sequence[float]], *, xlabel: str, ylabel: str,
              title: str) -> Callable[[Any], None]:
    """An `emit` plot of two labelled series (label, values) over `xs`: circles, then
    squares."""
    def plot(ax: Any) -> None:
        for (label, ys), style in ((first, "o-"), (second, "s-")):
            ax.plot(xs, ys, style, label=label)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend()
    return plot


def load_by_path(name: str, path: Path) -> Any:
    """The module at `path` (outside any package), imported under `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def sshd_helper() -> Any:
    """tests/sshd_helper.py (the private sshd the transport tests start), loaded by path."""
    return load_by_path("diamond_sshd_helper", ROOT / "tests" / "sshd_helper.py")


@contextlib.contextmanager
def private_sshd(work_prefix: str) -> Iterator[tuple[Any, Path]]:
    """A real OpenSSH sshd of its own on 127.0.0.1 (no test bed) and a scratch directory
    holding an empty ssh_config (`empty_ssh_config`); both removed on the way out."""
    helper = sshd_helper()
    base = helper.make_base("diamond-bench-sshd-")
    sshd = helper.Sshd(base).start()
    try:
        with tempfile.TemporaryDirectory(prefix=work_prefix) as tmp:
            work = Path(tmp)
            (work / "empty_ssh_config").write_text("")
            yield sshd, work
    finally:
        sshd.stop()
        helper.remove_base(base)


class DelayProxy:
    """A TCP proxy on 127.0.0.1 that delivers each chunk `one_way_s` after it arrived, in
    order, in both directions (a link's latency, not its bandwidth)."""

    def __init__(self, target_port: int, one_way_s: float):
        self.target_port, self.one_way_s = target_port, one_way_s
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target_port))
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._open += [client, server]
            for src, dst in ((client, server), (server, client)):
                held: queue.Queue[tuple[float, bytes]] = queue.Queue()
                threading.Thread(target=self._read, args=(src, held), daemon=True).start()
                threading.Thread(target=self._write, args=(dst, held), daemon=True).start()

    def _read(self, src: socket.socket, held: queue.Queue[tuple[float, bytes]]) -> None:
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            held.put((time.monotonic() + self.one_way_s, data))
            if not data:
                return

    def _write(self, dst: socket.socket, held: queue.Queue[tuple[float, bytes]]) -> None:
        while True:
            due, data = held.get()
            if (wait := due - time.monotonic()) > 0:
                time.sleep(wait)
            try:
                if not data:
                    dst.shutdown(socket.SHUT_WR)
                    return
                dst.sendall(data)
            except OSError:
                return

    def close(self) -> None:
        self.sock.close()
        for s in self._open:
            s.close()


def delayed_door(sshd: Any, rtt_ms: float, workdir: Path) -> tuple[DelayProxy, dict[str, Any]]:
    """A DelayProxy adding `rtt_ms` of round trip in front of `sshd`, and the SSH transport
    settings (a TransportConfig's fields) that reach the sshd through it: the sshd's host
    key recorded for the proxy's port in WORKDIR/known_hosts, WORKDIR/empty_ssh_config (see
    private_sshd) as the ssh_config. The caller closes the proxy."""
    proxy = DelayProxy(sshd.port, rtt_ms / 2000)
    known_hosts = workdir / "known_hosts"
    known_hosts.write_text(
        sshd.known_hosts_line().replace(f"]:{sshd.port} ", f"]:{proxy.port} "))
    door = {"kind": "ssh", "host": "127.0.0.1", "port": proxy.port, "user": sshd.user,
            "key_file": str(sshd.client_key), "use_agent": False,
            "known_hosts": str(known_hosts),
            "ssh_config": str(workdir / "empty_ssh_config"), "connect_timeout_s": 30}
    return proxy, door
