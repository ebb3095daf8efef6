"""Second doors to test-bed clusters: the same Slurm cluster spoken to another way.

- `alpha-pbs`: alpha through Slurm's own PBS/Torque wrappers (slurm-wlm-torque: qsub,
  qstat, qdel, qrls, pbsnodes) and the `pbs` dialect, over SSH. The package conflicts in
  dpkg with gridengine-client (both ship qsub), so scripts/install.sh unpacks it into a
  private prefix (`TORQUE_PREFIX`) which the site entry's `commands:` point at.
- `beta-rest`: beta through Slurm's REST API: slurmrestd in beta's namespace with
  rest_auth/jwt, slurmctld accepting auth/jwt beside munge (a key the test bed makes under
  its state directory), and the test user's tokens from `scontrol token`, run as that user
  (as on a login node) by a small script the sites file names. No SSH for scheduling; its
  file door (logs, results) is SFTP to beta's login node, host key checked.

An entry whose parts are not installed is left out of the sites file, with the reason.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
from pathlib import Path

from .clusters import HOME, USER, ClusterDef
from .configs import cluster_dir
from .host import _in_ns, _pid, _which

TORQUE_PREFIX = Path(os.environ.get("DIAMOND_TORQUE_PREFIX", "/opt/diamond/slurm-torque"))
TORQUE_COMMANDS = ("qsub", "qstat", "qdel", "qrls", "pbsnodes")
PBS_CLUSTER, REST_CLUSTER = "alpha", "beta"
REST_PORT = 6820
REST_API = "v0.0.38"  # the newest OpenAPI plugin Slurm 22.05's slurmrestd offers
JWT_PLUGIN_DIRS = ("/usr/lib/x86_64-linux-gnu/slurm-wlm", "/usr/lib/aarch64-linux-gnu/slurm-wlm",
                   "/usr/lib/slurm", "/usr/lib64/slurm")


def _plugin(name: str) -> bool:
    return any(Path(d, name).exists() for d in JWT_PLUGIN_DIRS)


def pbs_missing() -> str | None:
    """Why the PBS door cannot open here (None: it can)."""
    absent = [c for c in TORQUE_COMMANDS if not os.access(TORQUE_PREFIX / "bin" / c, os.X_OK)]
    if absent:
        return (f"Slurm's Torque wrappers are not unpacked in {TORQUE_PREFIX}/bin (missing "
                f"{', '.join(absent)}); ./scripts/install.sh puts them there")
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        # present, not loaded: loading Slurm.pm reads a slurm.conf the host does not have
        find = ('for my $m ("Slurm.pm", "Switch.pm") { my $ok = 0; '
                'for (@INC) { $ok = 1 if -f "$_/$m" } exit 1 unless $ok } exit 0')
        if subprocess.run(["perl", "-e", find], capture_output=True,
                          timeout=20).returncode == 0:
            return None
    return "the wrappers' Perl modules are missing (Debian packages libslurm-perl, " \
           "libslurmdb-perl, libswitch-perl)"


def rest_missing() -> str | None:
    """Why the REST door cannot open here (None: it can)."""
    if not _which("slurmrestd"):
        return "slurmrestd is not installed (Debian package slurmrestd)"
    if not (_plugin("auth_jwt.so") and _plugin("rest_auth_jwt.so")):
        return "Slurm's JWT plugins are not installed (Debian package slurm-wlm-jwt-plugin)"
    return None


def jwt_key(base: Path, c: ClusterDef) -> Path:
    return cluster_dir(base, c) / "jwt" / "jwt_hs256.key"


def slurm_conf_lines(base: Path, c: ClusterDef) -> list[str]:
    """slurm.conf lines that let the REST cluster's slurmctld accept JWTs beside munge."""
    if c.name != REST_CLUSTER or rest_missing():
        return []
    return ["AuthAltTypes=auth/jwt", f"AuthAltParameters=jwt_key={jwt_key(base, c)}"]


def with_conf_lines(conf: str, base: Path, c: ClusterDef) -> str:
    """`conf` (a slurm.conf's text) with `slurm_conf_lines` before its node lines."""
    extra = slurm_conf_lines(base, c)
    if not extra:
        return conf
    head, sep, tail = conf.partition("\nNodeName=")
    return head + "\n" + "\n".join(extra) + sep + tail


def prepare(base: Path, c: ClusterDef) -> None:
    """The REST cluster's JWT key (root-only, made once) and the REST site's workdir in the
    test user's home there (the API cannot make directories)."""
    if c.name != REST_CLUSTER or rest_missing():
        return
    key = jwt_key(base, c)
    key.parent.mkdir(mode=0o700, exist_ok=True)
    if not key.exists():
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(32))
    import pwd

    pw = pwd.getpwnam(USER)
    work = cluster_dir(base, c) / "home" / ".diamond-rest"
    work.mkdir(mode=0o700, exist_ok=True)
    os.chown(work, pw.pw_uid, pw.pw_gid)
    token = token_script(base)
    token.parent.mkdir(mode=0o755, exist_ok=True)
    token.write_text(
        "#!/bin/sh\n"
        f"# The test user's own JWT for {c.name}'s REST API, as they would get it on a login\n"
        "# node: `scontrol token` run as themselves (munge proves who they are).\n"
        f"exec nsenter --net=/run/netns/{c.netns} runuser -u {USER} -- env "
        f"SLURM_CONF={cluster_dir(base, c) / 'etc' / 'slurm.conf'} "
        "scontrol token lifespan=${DIAMOND_TOKEN_LIFESPAN:-1800}\n")
    os.chmod(token, 0o700)


def token_script(base: Path) -> Path:
    return base / "rest" / f"{REST_CLUSTER}-token"


def rest_pid_file(base: Path, c: ClusterDef) -> Path:
    # not slurm*.pid: `down` waits for those to stop after `scontrol shutdown`
    return cluster_dir(base, c) / "run" / "restd.pid"


def rest_running(base: Path, c: ClusterDef) -> bool:
    return bool(_pid(rest_pid_file(base, c)))


def rest_answers(c: ClusterDef) -> bool:
    try:
        with socket.create_connection((c.ip, REST_PORT), timeout=0.5):
            return True
    except OSError:
        return False


def start_rest(base: Path, c: ClusterDef) -> list[str]:
    """slurmrestd in the cluster's namespace (not root, as it insists), unless running.
    It runs in the cluster's log directory: slurmrestd does not leave the directory it is
    started from, and it exits at its next job submit ("getcwd failed") once that directory
    is gone (a benchmark's removed clone)."""
    if c.name != REST_CLUSTER or rest_missing() or rest_running(base, c):
        return []
    d = cluster_dir(base, c)
    log = open(d / "log" / "slurmrestd.log", "ab")  # noqa: SIM115 - handed to the daemon
    try:
        env = {**os.environ, "SLURM_JWT": "daemon"}
        proc = subprocess.Popen(
            _in_ns(c, base, _which("slurmrestd") or "slurmrestd", "-u", "nobody", "-a",
                   "rest_auth/jwt", "-s", f"openapi/{REST_API}", f"{c.ip}:{REST_PORT}"),
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
            start_new_session=True, cwd=d / "log")  # as slurmctld: never its starter's cwd
    finally:
        log.close()
    rest_pid_file(base, c).write_text(f"{proc.pid}\n")
    return [f"{c.name} slurmrestd"]


def rest_pid_files(base: Path, c: ClusterDef) -> list[Path]:
    return [rest_pid_file(base, c)] if c.name == REST_CLUSTER else []


def site_entries(base: Path, clusters: dict[str, ClusterDef],
                 ssh_entry: dict[str, dict]) -> tuple[list[dict], list[dict]]:
    """(sites-file entries of the doors that can open here, [{"name", "why"}] of those left
    out). `ssh_entry`: the SSH entries already written, by cluster name."""
    entries, left_out = [], []
    if PBS_CLUSTER in clusters and PBS_CLUSTER in ssh_entry:
        why = pbs_missing()
        if why:
            left_out.append({"name": f"{PBS_CLUSTER}-pbs", "why": why})
        else:
            src = ssh_entry[PBS_CLUSTER]
            entries.append({
                "name": f"{PBS_CLUSTER}-pbs", "scheduler": "pbs", "flavor": "slurm",
                "auto": False, "transport": dict(src["transport"]),
                "commands": {c: str(TORQUE_PREFIX / "bin" / c) for c in TORQUE_COMMANDS},
                "workdir": f"{HOME}/.diamond-pbs",
                "default_partition": src.get("default_partition"), "jobcomp": True,
                "charge_factor": src.get("charge_factor", 1.0),
                "speed_factor": src.get("speed_factor", 1.0),
                "metadata": {**src.get("metadata", {}), "door_to": PBS_CLUSTER},
            })
    if REST_CLUSTER in clusters and REST_CLUSTER in ssh_entry:
        why = rest_missing()
        if why:
            left_out.append({"name": f"{REST_CLUSTER}-rest", "why": why})
        else:
            c, src = clusters[REST_CLUSTER], ssh_entry[REST_CLUSTER]
            entries.append({
                "name": f"{REST_CLUSTER}-rest", "scheduler": "slurm", "auto": False,
                "transport": {"kind": "slurmrestd", "url": f"http://{c.ip}:{REST_PORT}",
                              "api_version": REST_API, "user": USER,
                              "token_command": [str(token_script(base))],
                              "command_timeout_s": 60},
                # the file door: SFTP to beta's login node, as the SSH entry reaches it
                "files": dict(src["transport"]),
                "workdir": f"{HOME}/.diamond-rest",
                "default_partition": src.get("default_partition"),
                "charge_factor": src.get("charge_factor", 1.0),
                "speed_factor": src.get("speed_factor", 1.0),
                "metadata": {**src.get("metadata", {}), "door_to": REST_CLUSTER},
            })
    return entries, left_out
