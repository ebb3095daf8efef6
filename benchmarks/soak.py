"""Soak: jobs through a real `jupyter server`'s REST API while sshd, slurmctld and the server die.

Load: `--jobs` jobs spread evenly over `--minutes`, across the test bed's sites (alpha,
beta, gamma and `auto` in turn), each a `sleep` of U(1, 30) s; some exit 3 (FAILED), some
are cancelled through the API while they run (CANCELLED), some outlive a 1-minute walltime
(TIMEOUT). Faults meanwhile: one site's sshd SIGKILLed with its sessions and restarted
every `--sshd-every` s, each slurmctld restarted once, and the server SIGKILLed and
restarted twice. The client is a careful one: after an ambiguous failure (connection lost,
5xx) it looks the job up by its unique name once the server answers, and submits again
only if the server has no record of it, or recorded it as never submitted.

At the end (every job terminal, or `--settle` s after the last submit) the server is
stopped and the server's store is compared with each cluster's own accounting (the
`jobcomp` file slurmctld writes, and `squeue` for anything still queued):
- lost: intended jobs the store does not hold in a terminal state (no record, or still
  pending/running), or whose scheduler job the store does not hold (ran untracked, or the
  store closed it as never submitted although the scheduler has it);
- duplicated: intended jobs the scheduler ran more than once (more than one scheduler job
  with the job's name, i.e. its token or a second submission of it);
- wrong_state: jobs whose store state differs from the scheduler's accounting state, or
  whose store native id is not the scheduler's id for the token;
- events_missing: jobs without `job.submitted`, then `job.state` RUNNING (unless the
  scheduler never started the job), then the terminal `job.state`, in that order.

    python -m benchmarks.soak --json                       # 500 jobs, 10 minutes, ~13 min
    python -m benchmarks.soak --jobs 20 --minutes 1        # a small one

The faults act on the test bed itself: without `--config` the benchmark brings it up and
holds it (testbed.lock) for the whole run; with `--config`, hold it yourself.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .common import config_path, emit, markdown_table, parser

TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}
SITES = ("alpha", "beta", "gamma", "auto")
NEVER_SUBMITTED = "did not reach the scheduler"
MAX_REFUSALS = 5


def log(msg: str) -> None:
    print(f"[soak {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the server


class Server:
    """A real `jupyter server` with the diamond extension; SIGKILL and restart on demand."""

    def __init__(self, tmp: Path, sites_file: str, store: Path) -> None:
        self.tmp, self.store = tmp, store
        self.port = _free_port()
        self.token = secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}"
        cfg_dir = tmp / "config"
        cfg_dir.mkdir(parents=True, exist_ok=True)
        (cfg_dir / "jupyter_server_config.json").write_text(json.dumps({
            "ServerApp": {"jpserver_extensions": {"diamond_jupyter": True}},
            "DiamondApp": {"sites_file": sites_file, "store_path": str(store)},
        }))
        (tmp / "root").mkdir(exist_ok=True)
        self.env = {**os.environ, "JUPYTER_CONFIG_DIR": str(cfg_dir),
                    "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
                    "DIAMOND_DATA_DIR": str(tmp / "data")}
        self.env.pop("DIAMOND_CONFIG", None)
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self.lock = threading.Lock()

    def start(self, timeout: float = 120.0) -> float:
        t0 = time.monotonic()
        with (self.tmp / "server.log").open("a") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root",
                 f"--port={self.port}", "--ip=127.0.0.1", "--ServerApp.port_retries=0",
                 f"--IdentityProvider.token={self.token}",
                 f"--ServerApp.root_dir={self.tmp / 'root'}"],
                stdout=out, stderr=subprocess.STDOUT, env=self.env, cwd=self.tmp)
        self.starts += 1
        while True:
            with contextlib.suppress(OSError, urllib.error.URLError):
                if request(self, "GET", "sites", timeout=10)[0] == 200:
                    return time.monotonic() - t0
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter server exited ({self.proc.returncode}); "
                                   f"see {self.tmp / 'server.log'}")
            if time.monotonic() - t0 > timeout:
                raise RuntimeError("jupyter server did not answer")
            time.sleep(0.2)

    def kill(self) -> None:
        """SIGKILL: no shutdown hook runs, in-flight requests are cut."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(server: Server, method: str, path: str, body: Any = None,
            timeout: float = 120.0, **query: Any) -> tuple[int, Any]:
    """(status, parsed body); raises OSError/URLError when the server is unreachable or
    the connection drops (an ambiguous outcome for a POST)."""
    url = f"{server.url}/diamond/api/{path}"
    if query:
        url += "?" + urllib.parse.urlencode(query)
    data = json.dumps(body).encode() if body is not None else (b"{}" if method == "POST"
                                                                else None)
    req = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"token {server.token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read() or b"null")
        except ValueError:
            return e.code, None


# ---------------------------------------------------------------- the load


@dataclass
class Intended:
    i: int
    name: str
    site: str
    kind: str  # ok | fail | cancel | timeout
    sleep_s: float
    job_id: str | None = None  # the id the server gave (or the client found by name)
    attempts: int = 0
    resubmitted: int = 0
    refusals: int = 0
    refused: str | None = None  # refused every time it was tried
    accepted_s: float | None = None  # when the server accepted it (s into the run)
    cancel_sent: bool = False
    adopted_pending: bool = False  # found by name after an ambiguous failure, not yet bound
    notes: list[str] = field(default_factory=list)

    def spec(self) -> dict[str, Any]:
        if self.kind == "fail":
            cmd, wall = f"sleep {self.sleep_s:g}; exit 3", 600
        elif self.kind in ("cancel", "timeout"):
            cmd, wall = "sleep 300", 60 if self.kind == "timeout" else 600
        else:
            cmd, wall = f"sleep {self.sleep_s:g}", 600
        return {"command": cmd, "name": self.name,
                "resources": {"cpus_per_task": 1, "walltime_s": wall}}


def plan(run: str, n: int, seed: int) -> list[Intended]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        r = rng.random()
        kind = "fail" if r < 0.08 else "cancel" if r < 0.12 else "timeout" if r < 0.13 else "ok"
        out.append(Intended(i, f"soak-{run}-{i:05d}", SITES[i % len(SITES)], kind,
                            round(rng.uniform(1, 30), 1)))
    return out


class Client:
    """Submits through the REST API as a careful user would (see the module docstring)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.ambiguous = 0

    def wait_server(self) -> None:
        while True:
            with contextlib.suppress(OSError, urllib.error.URLError, ValueError):
                if request(self.server, "GET", "sites", timeout=10)[0] == 200:
                    return
            time.sleep(0.5)

    def find(self, job: Intended) -> list[dict[str, Any]]:
        while True:
            try:
                code, body = request(self.server, "GET", "jobs", name=job.name, limit=50)
                if code == 200:
                    return [j for j in body["jobs"] if _named(j.get("name"), job.name)]
            except (OSError, urllib.error.URLError, ValueError):
                pass
            self.wait_server()

    def submit(self, job: Intended) -> None:
        while True:
            job.attempts += 1
            try:
                code, body = request(self.server, "POST", "jobs",
                                     {"spec": job.spec(), "site": job.site})
            except (OSError, urllib.error.URLError, ValueError) as e:
                code, body = -1, {"message": str(e)}
            if code == 201:
                job.job_id = body["id"]
                return
            if 400 <= code < 500:  # refused: nothing was submitted; a user tries again
                job.refusals += 1
                job.notes.append(f"attempt {job.attempts}: refused {code} {str(body)[:200]}")
                if job.refusals >= MAX_REFUSALS:
                    job.refused = f"{code}: {body}"
                    return
                time.sleep(2.0)
                continue
            # ambiguous: the job may or may not have been recorded and submitted
            self.ambiguous += 1
            job.notes.append(f"attempt {job.attempts}: {code} {str(body)[:160]}")
            self.wait_server()
            found = self.find(job)
            live = [j for j in found if NEVER_SUBMITTED not in (j.get("reason") or "")]
            if live:
                job.job_id = live[0]["id"]
                job.adopted_pending = not live[0].get("native_id")
                return
            if found:
                job.resubmitted += 1
            time.sleep(0.5)

    def recheck(self, jobs: list[Intended]) -> None:
        """A job adopted while its submit was unresolved: once the server resolves it, it is
        either bound (done) or closed as never submitted (then submit it again)."""
        for job in jobs:
            if not job.adopted_pending or not job.job_id:
                continue
            cur = self.get(job.job_id)
            if cur is None:
                continue
            if cur.get("native_id"):
                job.adopted_pending = False
            elif NEVER_SUBMITTED in (cur.get("reason") or ""):
                job.adopted_pending = False
                job.resubmitted += 1
                job.notes.append(f"{job.job_id} closed as never submitted: submitted again")
                self.submit(job)

    def get(self, job_id: str) -> dict[str, Any] | None:
        try:
            code, body = request(self.server, "GET", "jobs/" + urllib.parse.quote(job_id),
                                 timeout=30)
        except (OSError, urllib.error.URLError, ValueError):
            return None
        return body if code == 200 else None

    def cancel(self, job_id: str) -> bool:
        try:
            code, _ = request(self.server, "POST",
                              "jobs/" + urllib.parse.quote(job_id) + "/cancel", timeout=60)
        except (OSError, urllib.error.URLError, ValueError):
            return False
        return code == 200


# ---------------------------------------------------------------- the faults


@dataclass
class Fault:
    at_s: float
    what: str
    site: str | None = None
    done_at_s: float | None = None
    took_s: float | None = None
    error: str | None = None


def fault_plan(seconds: float, sshd_site: str, sshd_every: float,
               sites: list[str]) -> list[Fault]:
    faults = [Fault(t, "sshd", sshd_site)
              for t in (sshd_every * k for k in range(1, int(seconds // sshd_every) + 1))
              if t < seconds]
    if not faults and seconds >= 10:
        faults.append(Fault(seconds * 0.5, "sshd", sshd_site))
    for k, s in enumerate(sites):
        faults.append(Fault(seconds * (0.2 + 0.25 * k), "slurmctld", s))
    faults += [Fault(seconds * 0.35, "server"), Fault(seconds * 0.8, "server")]
    return sorted(faults, key=lambda f: f.at_s)


def run_faults(faults: list[Fault], server: Server, t0: float, stop: threading.Event) -> None:
    from diamond_jupyter.testbed import control

    for f in faults:
        if stop.wait(max(0.0, t0 + f.at_s - time.monotonic())):
            return
        t = time.monotonic()
        log(f"fault: {f.what} {f.site or ''}")
        try:
            if f.what == "sshd":
                control.restart_sshd(f.site)
            elif f.what == "slurmctld":
                control.restart_slurmctld(f.site)
            else:
                with server.lock:
                    server.kill()
                    server.start()
        except Exception as e:  # recorded in the result; the run goes on
            f.error = f"{type(e).__name__}: {e}"
            log(f"fault {f.what} failed: {f.error}")
        f.done_at_s, f.took_s = t - t0, time.monotonic() - t


# ---------------------------------------------------------------- the scheduler's view


def accounting(sites: list[str], prefix: str) -> dict[str, dict[str, dict[str, str]]]:
    """Per site: scheduler job id -> {name, token, state, nodes} for this run's jobs, from
    slurmctld's jobcomp file (finished jobs) and squeue (anything still queued). The token
    is the job directory's name (the engine's working directory `.../jobs/TOKEN`)."""
    from diamond_jupyter.testbed.clusters import base_dir, cluster
    from diamond_jupyter.testbed.configs import cluster_dir
    from diamond_jupyter.testbed.host import _ctl

    out: dict[str, dict[str, dict[str, str]]] = {}
    base = base_dir()
    for s in sites:
        c = cluster(s)
        jobs: dict[str, dict[str, str]] = {}
        q = _ctl(base, c, "squeue", "-h", "-t", "all", "-o", "%i|%j|%T|%N|%Z", check=False)
        for line in q.stdout.splitlines():
            jid, name, state, nodes, wd = (line.split("|") + [""] * 5)[:5]
            if name.startswith(prefix):
                jobs[jid] = {"name": name, "token": wd.rstrip("/").rpartition("/")[2],
                             "state": state, "nodes": nodes, "source": "squeue"}
        path = cluster_dir(base, c) / "jobcomp.txt"
        text = path.read_text(errors="replace") if path.exists() else ""
        for line in text.splitlines():
            kv = dict(p.split("=", 1) for p in line.split(" ") if "=" in p)
            if kv.get("Name", "").startswith(prefix) and "JobId" in kv:
                jobs[kv["JobId"]] = {
                    "name": kv["Name"], "state": kv.get("JobState", ""),
                    "token": kv.get("WorkDir", "").rstrip("/").rpartition("/")[2],
                    "nodes": kv.get("NodeList", ""), "source": "jobcomp"}
        out[s] = jobs
    return out


def norm_state(native: str) -> str:
    s = native.split()[0].upper() if native else ""
    if s in TERMINAL:
        return s
    if s in ("NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PREEMPTED"):
        return "FAILED"
    return s  # PENDING, RUNNING, ... : not terminal


def check(intended: list[Intended], store_path: Path,
          acct: dict[str, dict[str, dict[str, str]]]) -> dict[str, Any]:
    from diamond_jupyter.store import Store

    # scheduler jobs by token and by intended job (its name)
    by_token: dict[str, list[tuple[str, str, dict[str, str]]]] = {}
    by_name: dict[str, set[tuple[str, str]]] = {}
    for site, jobs in acct.items():
        for jid, a in jobs.items():
            by_token.setdefault(a["token"], []).append((site, jid, a))
            by_name.setdefault(a["name"].partition(".dmd-")[0], set()).add((site, jid))
    lost, duplicated, wrong, missing, ev_dup = [], [], [], [], []
    with Store(store_path) as st:
        stored = {j.token: j for j in st.list_jobs(limit=None) if j.token}
        bound_tokens = {t for t, j in stored.items() if j.native_id}
        for job in intended:
            mine = [j for j in stored.values() if _named(j.name, job.name)]
            ran = by_name.get(job.name, set())
            if len(ran) > 1 or any(len(by_token.get(j.token or "", [])) > 1 for j in mine):
                duplicated.append({"job": job.name, "scheduler": sorted(ran)})
            untracked = [(s, jid) for s, jid in ran if acct[s][jid]["token"] not in bound_tokens]
            live = [j for j in mine if j.native_id]
            if job.refused:
                continue
            if not live or not all(j.state.value in TERMINAL for j in live) or untracked:
                lost.append({"job": job.name, "store": [(j.id, j.state.value, j.reason)
                                                         for j in mine],
                             "untracked_scheduler_jobs": untracked})
            for j in live:
                sched = by_token.get(j.token or "", [])
                ids = {jid for _, jid, _ in sched}
                acct_states = {norm_state(a["state"]) for _, _, a in sched}
                if not sched or ids != {j.native_id} or acct_states != {j.state.value}:
                    wrong.append({"job": j.id, "store": j.state.value,
                                  "scheduler": [(s, jid, a["state"]) for s, jid, a in sched]})
                evs = st.events_since(0, job_id=j.id, limit=None)
                order = [("submitted" if e.kind == "job.submitted" else e.data.get("state"))
                         for e in evs if e.kind in ("job.submitted", "job.state")]
                started = any(a["nodes"] not in ("", "(null)", "None assigned")
                              for _, _, a in sched) or "RUNNING" in order
                need = ["submitted", *(["RUNNING"] if started else []), j.state.value]
                if not _in_order(order, need):
                    missing.append({"job": j.id, "events": order, "needed": need})
                if len([s for s in order if s != "submitted"]) != len(
                        {s for s in order if s != "submitted"}):
                    ev_dup.append({"job": j.id, "events": order})
        finals: dict[str, int] = {}
        for j in stored.values():
            finals[j.state.value] = finals.get(j.state.value, 0) + 1
    return {"lost": lost, "duplicated": duplicated, "wrong_state": wrong,
            "events_missing": missing, "events_repeated": ev_dup, "store_states": finals}


def _named(name: str | None, intended: str) -> bool:
    """The store's (or the scheduler's) name of an intended job: the name itself, or with
    the token appended (`NAME.dmd-TOKEN`) where the scheduler has no comment for it."""
    return name is not None and (name == intended or name.startswith(intended + ".dmd-"))


def _in_order(seq: list[str], need: list[str]) -> bool:
    k = 0
    for s in seq:
        if k < len(need) and s == need[k]:
            k += 1
    return k == len(need)


# ---------------------------------------------------------------- the run


def bench(config: str, n: int, minutes: float, seed: int, sshd_site: str, sshd_every: float,
          settle: float, keep: bool) -> dict[str, Any]:
    run = secrets.token_hex(3)
    tmp = Path(tempfile.mkdtemp(prefix="bench-soak-"))
    store = tmp / "store.sqlite3"
    server = Server(tmp, config, store)
    intended = plan(run, n, seed)
    seconds = minutes * 60
    sites = [s for s in SITES if s != "auto"]
    faults = fault_plan(seconds, sshd_site, sshd_every, sites)
    client = Client(server)
    stop = threading.Event()
    first_start_s = server.start()
    log(f"run {run}: {n} jobs over {seconds:.0f} s, {len(faults)} faults; server up in "
        f"{first_start_s:.1f} s ({tmp})")
    t0 = time.monotonic()
    faulter = threading.Thread(target=run_faults, args=(faults, server, t0, stop), daemon=True)
    faulter.start()
    cancels: list[Intended] = []
    try:
        for job in intended:
            due = t0 + seconds * job.i / max(n, 1)
            if (d := due - time.monotonic()) > 0:
                time.sleep(d)
            client.submit(job)
            job.accepted_s = time.monotonic() - t0
            if job.kind == "cancel" and job.job_id:
                cancels.append(job)
            _cancel_running(client, cancels)
            if job.i % 10 == 0:
                client.recheck(intended)
            if job.i % 50 == 0:
                log(f"submitted {job.i + 1}/{n}")
        submit_end_s = time.monotonic() - t0
        faulter.join(max(0.0, t0 + seconds + 120 - time.monotonic()))
        deadline = time.monotonic() + settle
        done: set[str] = set()
        while True:  # until every job is terminal in the store (or the deadline)
            _cancel_running(client, cancels)
            client.recheck(intended)
            for j in intended:
                if j.name in done or not j.job_id or j.refused or j.adopted_pending:
                    continue
                if (client.get(j.job_id) or {}).get("state") in TERMINAL:
                    done.add(j.name)
            if len(done) == sum(1 for j in intended if not j.refused) or \
                    time.monotonic() > deadline:
                break
            time.sleep(5)
        settle_s = time.monotonic() - t0 - submit_end_s
        stop.set()
    finally:
        stop.set()
        faulter.join(60)
        server.stop()
    log("collecting the scheduler's accounting")
    deadline = time.monotonic() + 120  # the scheduler may still be ending the last jobs
    while True:
        acct = accounting(sites, f"soak-{run}-")
        running = [jid for jobs in acct.values() for jid, a in jobs.items()
                   if a["source"] == "squeue" and norm_state(a["state"]) not in TERMINAL]
        if not running or time.monotonic() > deadline:
            break
        time.sleep(5)
    found = check(intended, store, acct)
    counts = {k: len(found[k]) for k in ("lost", "duplicated", "wrong_state", "events_missing")}
    res = {
        "jobs": n, **counts,
        "run": run, "minutes": minutes, "seed": seed,
        "events_repeated": len(found["events_repeated"]),
        "refused": sum(1 for j in intended if j.refused),
        "refusals": sum(j.refusals for j in intended),
        "ambiguous_submits": client.ambiguous,
        "resubmitted": sum(j.resubmitted for j in intended),
        "planned": {k: sum(1 for j in intended if j.kind == k)
                    for k in ("ok", "fail", "cancel", "timeout")},
        "store_states": found["store_states"],
        "scheduler_jobs": sum(len(v) for v in acct.values()),
        "server_starts": server.starts,
        "submit_phase_s": submit_end_s, "settle_s": settle_s,
        "faults": [f.__dict__ for f in faults],
        "details": {k: found[k][:50] for k in ("lost", "duplicated", "wrong_state",
                                               "events_missing", "events_repeated")},
        "accepted_s": [j.accepted_s for j in intended],
        "client_notes": {j.name: j.notes for j in intended if j.notes},
    }
    if keep:
        res["tmp"] = str(tmp)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return res


def _cancel_running(client: Client, cancels: list[Intended]) -> None:
    """Cancel each `cancel` job once it runs (so it ends CANCELLED, not by its own sleep)."""
    for job in cancels:
        if job.cancel_sent or not job.job_id:
            continue
        cur = client.get(job.job_id)
        if cur is None:
            continue
        state = cur.get("state")
        if state in TERMINAL or (state == "RUNNING" and client.cancel(cur["id"])):
            job.cancel_sent = True


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=500)
    p.add_argument("--minutes", type=float, default=10.0, help="length of the submit phase")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--sshd-site", default="beta", help="the site whose sshd is restarted")
    p.add_argument("--sshd-every", type=float, default=60.0, help="seconds between restarts")
    p.add_argument("--settle", type=float, default=300.0,
                   help="after the last submit, wait this long at most for every job to end")
    p.add_argument("--keep", action="store_true", help="keep the server's store and log")
    args = p.parse_args(argv)
    r = bench(config_path(args.config), args.jobs, args.minutes, args.seed, args.sshd_site,
              args.sshd_every, args.settle, args.keep)
    faults = ", ".join(f"{f['what']}{'(' + f['site'] + ')' if f['site'] else ''}@{f['at_s']:.0f}s"
                       + (" FAILED" if f["error"] else "") for f in r["faults"])
    md = (f"## soak: {r['jobs']} jobs over {r['minutes']:g} min, seed {r['seed']}\n\n"
          + markdown_table(["count", "value", "target"], [
              ("jobs", r["jobs"], ""),
              ("lost", r["lost"], 0), ("duplicated", r["duplicated"], 0),
              ("wrong_state", r["wrong_state"], 0), ("events_missing", r["events_missing"], 0),
              ("events repeated (info)", r["events_repeated"], ""),
              ("ambiguous submits / resubmitted", f"{r['ambiguous_submits']} / "
               f"{r['resubmitted']}", ""),
              ("refusals (retried) / refused for good", f"{r['refusals']} / {r['refused']}",
               "- / 0"),
              ("store states", r["store_states"], ""),
              ("scheduler jobs", r["scheduler_jobs"], r["jobs"]),
              ("server starts", r["server_starts"], 3)])
          + f"\nFaults: {faults}.\n")

    def plot(ax) -> None:
        colors = {"sshd": "tab:blue", "slurmctld": "tab:orange", "server": "tab:red"}
        acc = sorted(t for t in r["accepted_s"] if t is not None)
        ax.plot(acc, range(1, len(acc) + 1), color="black", lw=1.2, label="jobs accepted")
        for what, c in colors.items():
            for k, f in enumerate(x for x in r["faults"] if x["what"] == what):
                ax.axvline(f["at_s"], color=c, lw=1, alpha=0.8,
                           label=f"{what} restart" if k == 0 else None)
        ax.set_xlabel("seconds into the run")
        ax.set_ylabel("jobs accepted by the server")
        ax.legend(loc="upper left", fontsize=8)
        ax.set_title(f"soak, {r['jobs']} jobs: lost {r['lost']}, duplicated {r['duplicated']},"
                     f" wrong_state {r['wrong_state']}, events_missing {r['events_missing']}",
                     fontsize=9)
    emit("soak", args, r, md, plot)
    return r


if __name__ == "__main__":
    main()
