"""Per-job submit latency: the engine over SSH vs local sbatch (floor) vs fresh `ssh sbatch`.

The three ways submit the same rendered job script (the engine's, wrapper included) to one
test-bed cluster, interleaved in a shuffled order each iteration so drift and noise hit all
three alike. Jobs are submitted held (`--hold`), so the shared test bed runs nothing, and
are cancelled at the end.
- engine: `Federation.submit` on its pooled, warm SSH connection: record the intent
  (SQLite), render, ONE remote command (script on stdin: mkdir + write + sbatch), bind.
- floor: `sbatch --parsable --hold FILE` run inside the cluster's network namespace as the
  test user (a long-lived helper there times each sbatch process: nothing else counted).
- ssh: a fresh system `ssh` per job (test-bed key, known_hosts) running the same sbatch.
- noop (context, not a target): `true` on the engine's pooled connection: the cost of one
  remote command (sshd session + login shell) before any sbatch.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from .common import config_path, emit, markdown_table, mean, median, parser, pct, ratio

FLOOR_HELPER = r"""
import os, subprocess, sys, time
argv = sys.argv[1:]
for _ in sys.stdin:
    t0 = time.perf_counter()
    r = subprocess.run(argv, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    print(f"{dt} {r.returncode} {r.stdout.strip() or r.stderr.strip()[:200]}", flush=True)
"""


def _ssh_argv(cfg, remote: list[str]) -> list[str]:
    t = cfg.transport
    return ["ssh", "-F", "/dev/null", "-i", t.key_file, "-o", f"UserKnownHostsFile={t.known_hosts}",
            "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
            "-o", "ControlMaster=no", "-o", "ControlPath=none", "-p", str(t.port),
            f"{t.user}@{t.host}", *remote]


async def bench(config: str, site: str, n: int, warmup: int, seed: int) -> dict:
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import JobSpec
    from diamond_jupyter.store import Store
    from diamond_jupyter.testbed.clusters import HOME, USER, base_dir, cluster

    tmp = Path(tempfile.mkdtemp(prefix="bench-submit-"))
    fed = Federation(config, store=Store(tmp / "store.sqlite"))
    s = fed.site(site)
    spec = JobSpec(command="true", name="bench-submit")
    # the same script the engine submits, as a file on the cluster's "shared" home
    script = s.render(s.prepare(spec, "floor0000000")).script
    host_dir = base_dir() / "clusters" / site / "home" / ".diamond" / "bench-submit"
    fresh = not host_dir.parent.exists()  # a new test bed: the engine's directory is the user's
    host_dir.mkdir(parents=True, exist_ok=True)
    (host_dir / "job.sh").write_text(script)
    if fresh:
        shutil.chown(host_dir.parent, USER, USER)
    shutil.chown(host_dir, USER, USER)
    shutil.chown(host_dir / "job.sh", USER, USER)
    sbatch = ["sbatch", "--parsable", "--hold"]
    c = cluster(site)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SQUEUE_"))}
    env["SLURM_CONF"] = str(base_dir() / "clusters" / site / "etc" / "slurm.conf")
    helper = subprocess.Popen(
        ["nsenter", f"--net=/run/netns/{c.netns}", "runuser", "-u", USER, "--",
         "/usr/bin/python3", "-c", FLOOR_HELPER, *sbatch, str(host_dir / "job.sh")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd="/")
    ssh_cmd = _ssh_argv(s.cfg, [*sbatch, f"{HOME}/.diamond/bench-submit/job.sh"])
    ids: list[str] = []
    # the same engine with the script sent in the submit command itself (no upload ahead)
    fed1 = Federation(config, store=Store(tmp / "store1.sqlite"))

    async def no_upload(*args, **kwargs):
        return None
    fed1.site(site).upload = no_upload
    times: dict[str, list[float]] = {"engine": [], "engine_one_command": [], "floor": [],
                                     "ssh": [], "noop": []}
    phases: dict[str, list[float]] = {}  # inside the engine's submits (see `timed`)
    measuring = False

    def timed(obj: object, attr: str, phase: str) -> None:
        """Time every call of obj.attr (sync or async) as `phase` while measuring."""
        fn = getattr(obj, attr)

        def keep(t0: float) -> None:
            if measuring:
                phases.setdefault(phase, []).append(time.perf_counter() - t0)
        if asyncio.iscoroutinefunction(fn):
            async def wrapped_async(*a, **kw):
                t0 = time.perf_counter()
                try:
                    return await fn(*a, **kw)
                finally:
                    keep(t0)
            setattr(obj, attr, wrapped_async)
        else:
            def wrapped(*a, **kw):
                t0 = time.perf_counter()
                try:
                    return fn(*a, **kw)
                finally:
                    keep(t0)
            setattr(obj, attr, wrapped)
    timed(fed.store, "record_intent", "intent (durable, in a thread)")
    timed(s, "upload", "upload (overlaps the intent)")
    timed(s, "render", "render")
    timed(s, "submit", "submit command (sbatch)")
    timed(fed.store, "bind_native_id", "bind")

    async def engine() -> float:
        nonlocal measuring
        measuring = measured
        t0 = time.perf_counter()
        job = await fed.submit(spec, site, hold=True)
        dt = time.perf_counter() - t0
        measuring = False
        ids.append(job.native_id or "")
        return dt

    async def engine_one_command() -> float:
        t0 = time.perf_counter()
        job = await fed1.submit(spec, site, hold=True)
        dt = time.perf_counter() - t0
        ids.append(job.native_id or "")
        return dt

    async def noop() -> float:  # context: one command on the same pooled connection
        t0 = time.perf_counter()
        await s.transport.run(["true"], check=True)
        return time.perf_counter() - t0

    def floor() -> float:
        assert helper.stdin and helper.stdout
        helper.stdin.write("go\n")
        helper.stdin.flush()
        dt, rc, out = helper.stdout.readline().split(" ", 2)
        if rc != "0":
            raise RuntimeError(f"local sbatch failed: {out}")
        ids.append(out.strip())
        return float(dt)

    def ssh() -> float:
        t0 = time.perf_counter()
        r = subprocess.run(ssh_cmd, capture_output=True, text=True)
        dt = time.perf_counter() - t0
        if r.returncode != 0:
            raise RuntimeError(f"ssh sbatch failed: {r.stderr.strip()}")
        ids.append(r.stdout.strip())
        return dt

    rng = random.Random(seed)
    try:
        for i in range(warmup + n):
            measured = i >= warmup
            order = ["engine", "engine_one_command", "floor", "ssh", "noop"]
            rng.shuffle(order)
            for way in order:
                if way in ("engine", "engine_one_command", "noop"):
                    dt = await {"engine": engine, "noop": noop,
                                "engine_one_command": engine_one_command}[way]()
                else:
                    dt = await asyncio.get_running_loop().run_in_executor(
                        None, floor if way == "floor" else ssh)
                if i >= warmup:
                    times[way].append(dt)
    finally:
        if helper.stdin:
            helper.stdin.close()
        helper.wait(10)
        good = [i for i in ids if i.isdigit()]
        for k in range(0, len(good), 200):
            await s.run(s.commands.cancel_argv(good[k:k + 200]), check=False)
        await fed.close()
        await fed1.close()
        shutil.rmtree(tmp, ignore_errors=True)
    med = {k: median(v) for k, v in times.items()}
    return {
        "site": site, "n": n, "warmup": warmup, "seed": seed,
        "median_s": med,
        "p90_s": {k: pct(v, 90) for k, v in times.items()},
        "ratio_engine_over_floor": ratio(med["engine"], med["floor"]),
        "ratio_ssh_over_engine": ratio(med["ssh"], med["engine"]),
        "mean_s": {k: mean(v) for k, v in times.items()},
        "ratio_engine_over_floor_means": ratio(mean(times["engine"]), mean(times["floor"])),
        "ratio_engine_one_command_over_floor": ratio(med["engine_one_command"], med["floor"]),
        "engine_phases_median_s": {k: median(v) for k, v in phases.items()},
        "engine_phases_n": {k: len(v) for k, v in phases.items()},
        "samples_s": times,
    }


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--site", default="alpha")
    p.add_argument("-n", "--n", type=int, default=40, help="measured submits per way")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    res = asyncio.run(bench(config_path(args.config), args.site, args.n, args.warmup,
                            args.seed))
    rows = [(way, res["median_s"][way] * 1000, res["mean_s"][way] * 1000,
             res["p90_s"][way] * 1000)
            for way in ("floor", "engine", "engine_one_command", "ssh", "noop")]
    phases = [(k, v * 1000) for k, v in res["engine_phases_median_s"].items()]
    md = (f"## submit latency on {res['site']} (n={res['n']} each)\n\n"
          + markdown_table(["way", "median ms", "mean ms", "p90 ms"], rows)
          + f"\nengine / floor = {res['ratio_engine_over_floor']:.3f} (medians; target <= "
          f"1.3), {res['ratio_engine_over_floor_means']:.3f} (means); ssh / engine = "
          f"{res['ratio_ssh_over_engine']:.2f} (target >= 5); engine with the script in "
          f"the submit command / floor = {res['ratio_engine_one_command_over_floor']:.3f}\n\n"
          "Inside the engine's submits (medians; the upload overlaps the intent):\n\n"
          + markdown_table(["phase", "median ms"], phases))

    def plot(ax) -> None:
        ways = ["floor", "engine", "ssh"]
        ax.boxplot([[t * 1000 for t in res["samples_s"][w]] for w in ways], tick_labels=[
            "local sbatch\n(floor)", "engine\n(pooled SSH)", "fresh ssh\nper job"])
        ax.set_ylabel("submit latency (ms)")
        ax.set_yscale("log")
        ax.set_title(f"submit latency on {res['site']}: engine/floor "
                     f"{res['ratio_engine_over_floor']:.2f}x, ssh/engine "
                     f"{res['ratio_ssh_over_engine']:.1f}x")
    emit("submit", args, res, md, plot)
    return res


if __name__ == "__main__":
    main()
