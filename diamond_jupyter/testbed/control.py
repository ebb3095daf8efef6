"""Bring the test bed up and down: munged, and per cluster a network namespace with
its own slurmctld, slurmd per node, and sshd, reached as a plain user over SSH."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import time
from pathlib import Path

from ..digits import ascii_digits
from ..model import BadInput
from . import doors, lock, mfa
from . import gridengine as ge
from .clusters import CLUSTERS, HOME, USER, base_dir
from .configs import cluster_dir, gres_conf, slurm_conf, sshd_config
from .host import (
    APT,
    REQUIRED,
    SBIN,
    TestbedError,
    _ctl,
    _ctl_env,
    _descendants,
    _gone,
    _in_ns,
    _pid,
    _run,
    _wait,
    _which,
    check_prerequisites,
)
from .pieces import (
    _ensure_keys,
    _ensure_user,
    _make_netns,
    _nodes_idle,
    _nodes_report,
    _prepare_cluster,
    _sshd_up,
    _start_cluster,
    _start_munge,
    _write_config,
    net_files,
)

__all__ = ["APT", "REQUIRED", "SBIN", "TestbedError", "check_prerequisites", "down",
           "leftovers", "restart_slurmctld", "restart_sshd", "start_site", "status",
           "stop_site", "up", "wait_ended"]


# ---------------------------------------------------------------- public


def _open_jobcomp(base: Path, c) -> None:
    """slurmctld resets the accounting file's mode whenever it (re)opens it; `sacct -c`
    run by users needs it readable and writable (it opens it read-write)."""
    with contextlib.suppress(FileNotFoundError):
        os.chmod(cluster_dir(base, c) / "jobcomp.txt", 0o666)


def status() -> dict:
    base = base_dir()
    munged = bool(_pid(base / "munge" / "munged.pid"))
    out: dict = {"base": str(base), "munged": munged, "sites": []}
    for c in CLUSTERS:
        if c.scheduler == "sge":
            out["sites"].append(ge.site_status(base, c))
            continue
        d = cluster_dir(base, c)
        nodes = {n: bool(_pid(d / "run" / f"slurmd-{n}.pid")) for n in c.node_names}
        out["sites"].append({
            "name": c.name, "netns": Path(f"/run/netns/{c.netns}").exists(), "ip": c.ip,
            "slurmctld": bool(_pid(d / "run" / "slurmctld.pid")),
            "slurmd": nodes, "sshd": bool(_pid(d / "run" / "sshd.pid")),
            # slurmrestd where the cluster has a REST door (None: it has none)
            "rest": doors.rest_running(base, c) if doors.rest_pid_files(base, c)
            and not doors.rest_missing() else None,
            # the MFA and certificate doors' sshd where the cluster has them
            "doors_sshd": mfa.running(base, c) if mfa.serves(c) else None,
        })
    s = out["sites"]
    out["up"] = out["munged"] and all(
        ge.site_up(x) if x.get("scheduler") == "sge" else
        x["netns"] and x["slurmctld"] and x["sshd"] and all(x["slurmd"].values())
        and x.get("rest") is not False and x.get("doors_sshd") is not False for x in s)
    cfg = base / "sites.yaml"
    out["config"] = str(cfg) if cfg.exists() else None
    return out


def up(timeout: float = 60) -> dict:
    """Start what is not running (idempotent); returns {"config": PATH, "sites": [...],
    "started": [...]}. A partly running bed is repaired, not restarted: daemons that run
    are left alone, so queued and running jobs and the job ids survive."""
    check_prerequisites()
    base = base_dir()
    t0 = time.monotonic()
    st = status()
    started: list[str] = []
    if st["up"]:
        started += _apply_config_changes(base, timeout)
        for c in CLUSTERS:  # a running slurmrestd that does not answer is named here
            _wait_rest(base, c, timeout)
    else:
        running = any([st["munged"], *[x["netns"] or x.get("slurmctld") or x.get("qmaster")
                                       or x["sshd"] for x in st["sites"]]])
        if running and not (base / "sites.yaml").exists():
            down()  # daemons without the files that describe them: start clean
        base.mkdir(parents=True, exist_ok=True)
        os.chmod(base, 0o755)
        _ensure_user()
        _ensure_keys(base)
        if not _pid(base / "munge" / "munged.pid"):
            _start_munge(base)
            started.append("munged")
        for c in CLUSTERS:
            if not all(Path(f"/run/netns/{n}").exists() for n in _namespaces(c)):
                _stop_daemons(base, c, ("slurm", "sshd"))  # stranded in a lost namespace
            if c.scheduler == "sge":
                ge.make_netns(c)
                ge.prepare(base, c)
                started += ge.start(base, c)
                continue
            stale = _stale_parts(base, c)
            _prepare_cluster(base, c)
            _make_netns(c)
            if stale:  # running with an older configuration: restart those daemons
                _stop_daemons(base, c, stale)
            started += _start_cluster(base, c)
        for c in CLUSTERS:
            ready = (lambda c=c: ge.ready(base, c)) if c.scheduler == "sge" else \
                (lambda c=c: _nodes_idle(base, c))
            _wait(ready, timeout, f"{c.name}'s nodes to be idle", None
                  if c.scheduler == "sge" else (lambda c=c: _nodes_report(base, c)))
            _wait(lambda c=c: _sshd_up(c), timeout, f"{c.name}'s sshd")
            _wait_rest(base, c, timeout)
            if mfa.serves(c):
                _wait(lambda c=c: mfa.answers(c), timeout, f"{c.name}'s MFA door")
    for c in CLUSTERS:
        _open_jobcomp(base, c)
    cfg = _write_config(base)
    (base / "state.json").write_text(json.dumps({"up_s": time.monotonic() - t0}))
    guarded = mfa.config_file(base)
    return {"config": str(cfg), "sites": _listed(cfg), "left_out": _left_out(base),
            "mfa_config": str(guarded) if guarded.exists() else None,
            "mfa_sites": _listed(guarded) if guarded.exists() else [],
            "started": started, "seconds": round(time.monotonic() - t0, 3)}


def _listed(cfg: Path) -> list[dict]:
    """Every site entry of the sites file written: name, scheduler, transport, file door
    (where the transport moves no files), door."""
    import yaml

    out = []
    for e in (yaml.safe_load(cfg.read_text()) or {}).get("sites", []):
        out.append({"name": e["name"], "scheduler": e.get("scheduler", "slurm"),
                    **({"flavor": e["flavor"]} if e.get("flavor") else {}),
                    "transport": (e.get("transport") or {}).get("kind", "ssh"),
                    **({"files": e["files"].get("kind", "ssh")} if e.get("files") else {}),
                    "cluster": (e.get("metadata") or {}).get("door_to", e["name"]),
                    "auto": e.get("auto", True)})
    return out


def _left_out(base: Path) -> list[dict]:
    """Site entries the test bed would list but cannot here, each with the reason."""
    clusters = {c.name: c for c in CLUSTERS}
    stub = {c.name: {"transport": {}} for c in CLUSTERS}
    out = doors.site_entries(base, clusters, stub)[1] + mfa.site_entries(base, clusters, stub)[1]
    if (why := ge.check_installed()) is not None:  # delta is then not in CLUSTERS at all
        out.append({"name": "delta", "why": why})
    return out


def _wait_rest(base: Path, c, timeout: float) -> None:
    if doors.rest_pid_files(base, c) and not doors.rest_missing():
        _wait(lambda: doors.rest_answers(c), timeout, f"{c.name}'s slurmrestd")


SITE_PARTS = ("slurm", "sshd", "rest")  # "slurm": the scheduler daemons, whichever it runs


def _namespaces(c) -> list[str]:
    return ge.netns_names(c) if c.scheduler == "sge" else [c.netns]


def _stale_parts(base: Path, c) -> tuple[str, ...]:
    """The daemons of cluster c that run from files this version would write otherwise."""
    d = cluster_dir(base, c)

    def differs(name: str, text: str) -> bool:
        try:
            return (d / "etc" / name).read_text() != text
        except FileNotFoundError:
            return False  # nothing written yet: nothing runs from it
    parts = []
    conf = doors.with_conf_lines(slurm_conf(base, c), base, c)  # as pieces writes it
    if differs("slurm.conf", conf) or differs("gres.conf", gres_conf(base, c)):
        parts.append("slurm")
    if differs("sshd_config", sshd_config(base, c)) or (
            mfa.serves(c) and differs(mfa.conf_file(base, c).name, mfa.door_sshd_config(base, c))):
        parts.append("sshd")
    if (d / "etc" / "slurm.conf").exists() and (any(
            not (d / "net" / n).is_file() or (d / "net" / n).read_text() != t
            for n, t in net_files(c).items()) or (d / "net" / "resolv.conf").exists()):
        parts = ["slurm", "sshd"]  # their mount namespace lacks the host's name files
    return tuple(parts)


def _apply_config_changes(base: Path, timeout: float) -> list[str]:
    """A bed that runs from an older version's files (slurm.conf, gres.conf, sshd_config)
    gets the new ones and restarts only those daemons: slurmctld keeps its saved state, so
    queued and running jobs and the job ids survive."""
    started: list[str] = []
    for c in CLUSTERS:
        if c.scheduler == "sge":
            continue  # Grid Engine's files are its own (gridengine.py)
        stale = _stale_parts(base, c)
        if not stale:
            if not (cluster_dir(base, c) / "modules").is_dir() or \
                    not (cluster_dir(base, c) / "home" / ".bashrc").is_file() or \
                    not mfa.prepared(base, c):
                _prepare_cluster(base, c)  # files an older version did not write
            continue
        _prepare_cluster(base, c)
        _stop_daemons(base, c, stale)
        started += _start_cluster(base, c, stale)
        if "slurm" in stale:
            _wait(lambda c=c: _nodes_idle(base, c), timeout, f"{c.name}'s nodes to be idle",
                  lambda c=c: _nodes_report(base, c))
        if "sshd" in stale:
            _wait(lambda c=c: _sshd_up(c), timeout, f"{c.name}'s sshd")
    return started


def _stop_daemons(base: Path, c, parts: tuple[str, ...], timeout: float = 30) -> list[str]:
    """SIGTERM the cluster's daemons of `parts` (slurmctld saves its state; running job
    steps outlive slurmd) and, for sshd, its sessions; returns what was stopped."""
    d = cluster_dir(base, c)
    if c.scheduler == "sge":
        got = ge.stop(base, c, parts)
        pids = [p for _, ps in got for p in ps]
        _wait(lambda: _gone(pids), timeout, f"{c.name}'s daemons to stop")
        return [what for what, _ in got]
    files = []
    if "slurm" in parts:
        files += [d / "run" / "slurmctld.pid",
                  *(d / "run" / f"slurmd-{n}.pid" for n in c.node_names)]
    if "sshd" in parts:
        files += [d / "run" / "sshd.pid", *mfa.pid_files(base, c)]
    if "rest" in parts:
        files += doors.rest_pid_files(base, c)
    stopped, pids = [], []
    for f in files:
        pid = _pid(f)
        if not pid:
            continue
        victims = [pid, *(_descendants(pid) if f.name.startswith("sshd") else [])]
        for p in victims:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGTERM if p == pid else signal.SIGKILL)
        pids += victims
        stopped.append(f"{c.name} {f.stem.removesuffix('.pid')}")
    _wait(lambda: _gone(pids), timeout, f"{c.name}'s daemons to stop")
    return stopped


def _site_parts(parts: tuple[str, ...] | None) -> tuple[str, ...]:
    parts = tuple(parts or SITE_PARTS)
    bad = [p for p in parts if p not in SITE_PARTS]
    if bad:
        raise BadInput(f"unknown part {bad[0]!r} (parts: {', '.join(SITE_PARTS)})")
    return parts


def stop_site(site: str, parts: tuple[str, ...] | None = None) -> dict:
    """Stop one site (its sshd and Slurm daemons, or only `parts`), leaving the others and
    every job's state alone: `start_site` or `up` brings it back."""
    from .clusters import cluster

    c, base = _known_cluster(site, cluster), base_dir()
    stopped = _stop_daemons(base, c, _site_parts(parts))
    return {"site": c.name, "stopped": stopped}


def start_site(site: str, parts: tuple[str, ...] | None = None, timeout: float = 60) -> dict:
    """Start what of one site is not running; returns once its nodes and sshd answer."""
    from .clusters import cluster

    c, base = _known_cluster(site, cluster), base_dir()
    if not (base / "sites.yaml").exists() or not Path(f"/run/netns/{c.netns}").exists():
        raise TestbedError("the test bed is not up; run `diamond testbed up`")
    parts = _site_parts(parts)
    if c.scheduler == "sge":
        started = ge.start(base, c, parts)
        if "slurm" in parts:
            _wait(lambda: ge.ready(base, c), timeout, f"{c.name}'s exec hosts")
        if "sshd" in parts:
            _wait(lambda: _sshd_up(c), timeout, f"{c.name}'s sshd")
        return {"site": c.name, "started": started}
    started = _start_cluster(base, c, parts)
    if "slurm" in parts:
        _wait(lambda: _nodes_idle(base, c), timeout, f"{c.name}'s nodes to be idle",
              lambda: _nodes_report(base, c))
        _open_jobcomp(base, c)
    if "sshd" in parts:
        _wait(lambda: _sshd_up(c), timeout, f"{c.name}'s sshd")
    if "rest" in parts:
        _wait_rest(base, c, timeout)
    return {"site": c.name, "started": started}


def _known_cluster(site: str, cluster):
    try:
        return cluster(site)
    except LookupError:
        raise BadInput(f"unknown test-bed site {site!r} (sites: "
                           f"{', '.join(c.name for c in CLUSTERS)})") from None


def _kill_pidfile(path: Path, sig: int = signal.SIGTERM) -> int | None:
    pid = _pid(path)
    if pid:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return None
    return pid


def _netns_inodes() -> set[int]:
    """The test bed's network namespaces that still have a name."""
    out = set()
    for c in CLUSTERS:
        for name in _namespaces(c):
            with contextlib.suppress(OSError):
                out.add(os.stat(f"/run/netns/{name}").st_ino)
    return out


def _uses_base(proc: Path, under: re.Pattern[str]) -> bool:
    """A job step (slurmstepd) names the test bed nowhere on its command line; it is known
    by what it holds: its cwd, open files (the node's log and spool, "(deleted)" once the
    directory went) or the /etc/slurm bind mount of its cluster."""
    links = [proc / "cwd", *(proc / "fd").iterdir()]
    for link in links:
        with contextlib.suppress(OSError):
            if under.search(os.readlink(link)):
                return True
    with contextlib.suppress(OSError):
        return bool(under.search((proc / "mountinfo").read_text()))
    return False


def _our_processes(base: Path) -> dict[int, str]:
    """Live processes of the test bed: started from its files, inside one of its network
    namespaces, or Slurm job steps holding its files (those outlive `scontrol shutdown`)."""
    under = re.compile(re.escape(str(base)) + r"(?=/|\s|$)")  # not /tmp/diamond-testbed.lock
    spaces = _netns_inodes()
    mine = lock.ancestors()
    out = {}
    for p in Path("/proc").iterdir():
        if not ascii_digits(p.name) or int(p.name) in mine:
            continue
        try:
            cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (p / "stat").read_text()
            comm, state = stat[stat.index("(") + 1:stat.rindex(")")], stat.rsplit(") ", 1)[1][0]
            if state == "Z" or not cmd:  # zombies and kernel threads
                continue
            ours = (under.search(cmd) is not None
                    or any(f"/run/netns/{c.netns}" in cmd for c in CLUSTERS)
                    or os.stat(p / "ns" / "net").st_ino in spaces
                    or (comm.startswith(("slurm", "sge_")) and _uses_base(p, under)))
        except (OSError, ValueError, IndexError):
            continue
        if ours:
            out[int(p.name)] = cmd.strip()
    return out


def _stop(pids: list[int], grace: float, timeout: float, what: str) -> None:
    """SIGTERM, then SIGKILL whatever is still there after `grace` seconds (job steps whose
    slurmd is gone ignore SIGTERM)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        try:
            _wait(lambda: _gone(pids), grace if sig == signal.SIGTERM else timeout, what)
            return
        except TestbedError:
            if sig == signal.SIGKILL:
                raise


def leftovers() -> list[str]:
    """Everything of the test bed still present on the machine (empty after `down`)."""
    base = base_dir()
    found = [f"process {pid}: {cmd[:120]}" for pid, cmd in _our_processes(base).items()]
    for c in CLUSTERS:
        found += [f"network namespace {n}" for n in _namespaces(c)
                  if Path(f"/run/netns/{n}").exists()]
    links = _run("ip", "-o", "link", "show", check=False).stdout
    found += [f"veth {c.name}" for c in CLUSTERS if f"dtbh{c.index}" in links]
    mounts = Path("/proc/self/mountinfo").read_text()
    found += [f"mount {line.split()[4]}" for line in mounts.splitlines()
              if str(base) in line or "/run/netns/dtb-" in line]
    if _run("getent", "passwd", USER, check=False).returncode == 0:
        found.append(f"user {USER}")
    if base.exists():
        found.append(f"directory {base}")
    return found


def down(timeout: float = 30) -> dict:
    check_prerequisites()
    base = base_dir()
    t0 = time.monotonic()
    pids: list[int] = []
    for c in CLUSTERS:
        d = cluster_dir(base, c)
        if _pid(d / "run" / "slurmctld.pid") and Path(f"/run/netns/{c.netns}").exists():
            _ctl(base, c, "scontrol", "shutdown", check=False)
        for f in (d / "run").glob("slurm*.pid") if (d / "run").exists() else []:
            p = _pid(f)
            if p:
                pids.append(p)
    try:
        _wait(lambda: _gone(pids), 10, "Slurm daemons to stop")
    except TestbedError:
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
    for c in CLUSTERS:  # Grid Engine: qmaster saves its spool, execds leave their jobs
        if c.scheduler == "sge":
            pids += [p for _, ps in ge.stop(base, c, ("slurm",), kill=True) for p in ps]
    _run("pkill", "-KILL", "-u", USER, check=False)  # leftover job steps and ssh sessions
    for c in CLUSTERS:
        d = cluster_dir(base, c)
        for f in [d / "run" / "sshd.pid", *mfa.pid_files(base, c)]:
            p = _kill_pidfile(f)
            if p:
                pids.append(p)
    m = _kill_pidfile(base / "munge" / "munged.pid")
    if m:
        pids.append(m)
    _wait(lambda: _gone(pids), timeout, "daemons to stop")
    # job steps of running or unfinished jobs, a second munged a racing `up` started, ...
    _stop(list(_our_processes(base)), 1.0, timeout, "job steps and stray processes to stop")
    for c in CLUSTERS:
        for name in _namespaces(c):
            if Path(f"/run/netns/{name}").exists():
                _run("ip", "netns", "del", name, check=False)
        _run("ip", "link", "del", f"dtbh{c.index}", check=False)
    if _run("getent", "passwd", USER, check=False).returncode == 0:
        _run("userdel", "--remove", USER, check=False)
        if HOME.exists():
            shutil.rmtree(HOME, ignore_errors=True)
    shutil.rmtree(base, ignore_errors=True)
    return {"down": True, "seconds": round(time.monotonic() - t0, 3), "leftovers": leftovers()}



# ---------------------------------------------------------------- faults (for tests)


def restart_sshd(site: str, timeout: float = 30, while_down=None) -> None:
    """SIGKILL a site's sshd with its per-connection children (every session drops), call
    `while_down()` if given, start sshd again and return once it answers."""
    from .clusters import cluster

    c, base = cluster(site), base_dir()
    pid = _pid(cluster_dir(base, c) / "run" / "sshd.pid")
    victims = [pid, *_descendants(pid)] if pid else []
    for p in victims:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)
    _wait(lambda: _gone(victims), 10, f"{site}'s sshd to die")
    if while_down is not None:
        while_down()
    Path("/run/sshd").mkdir(exist_ok=True)
    argv = (_which("sshd") or "sshd", "-f", str(cluster_dir(base, c) / "etc" / "sshd_config"))
    _run(*(ge.in_host(base, c, ge.hosts(c)[0], *argv) if c.scheduler == "sge"
           else _in_ns(c, base, *argv)))
    _wait(lambda: _sshd_up(c), timeout, f"{site}'s sshd")


def restart_slurmctld(site: str, timeout: float = 30) -> None:
    """SIGTERM a site's slurmctld (it saves state) and start it again WITHOUT `-c`, so
    queued and running jobs survive; return once `scontrol ping` says UP."""
    from .clusters import cluster

    c, base = cluster(site), base_dir()
    pid = _kill_pidfile(cluster_dir(base, c) / "run" / "slurmctld.pid")
    _wait(lambda: _gone([pid] if pid else []), timeout, f"{site}'s slurmctld to stop")
    _run(*_in_ns(c, base, _which("slurmctld") or "slurmctld"))
    _wait(lambda: "UP" in _ctl(base, c, "scontrol", "ping", check=False).stdout, timeout,
          f"{site}'s slurmctld")
    _open_jobcomp(base, c)


def wait_ended(site: str, native_ids: list[str], timeout: float = 900) -> None:
    """Block until the cluster has ended these jobs: `sbatch --wait` of a no-op that depends
    on them, from this host inside the cluster's namespace (so it works while the site's
    sshd is down). The scheduler says when; `timeout` only stops a hung cluster."""
    from .clusters import cluster

    c, base = cluster(site), base_dir()
    _run("nsenter", f"--net=/run/netns/{c.netns}", "sbatch", "--wait", "--quiet", "-D", "/",
         "-o", "/dev/null", "-J", "dmd-wait-ended", f"--dependency=afterany:{':'.join(native_ids)}",
         "--wrap", "true", env=_ctl_env(base, c), timeout=timeout)
