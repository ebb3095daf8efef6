"""Two more doors to the test bed's alpha, the way centers guard their login nodes:

- `alpha-mfa` (port 2222): the user's key AND a one-time code (TOTP) asked through
  keyboard-interactive by PAM (Debian's libpam-google-authenticator). The secret is the
  test user's "phone": `totp_code(base)` computes the current code (RFC 6238).
- `alpha-cert` (port 2223): only keys signed by the test bed's user CA (`ssh-keygen -s`,
  as sshproxy-style services issue them; sshd's TrustedUserCAKeys). The plain key is refused.

One extra sshd in alpha's namespace serves both ports (`Match LocalPort`), in a mount
namespace of its own where /etc/pam.d/sshd is the door's PAM stack (the host's is untouched).
Both entries are `auto: false` with `metadata.door_to: alpha` (the same machines are listed
once for placement and pooled once for calibration) and live
in a sites file of their own, `sites-mfa.yaml`: a face given the main file never meets a
prompt it cannot answer.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import socket
import struct
import time
from pathlib import Path

from .clusters import HOME, USER, ClusterDef
from .configs import cluster_dir, sshd_config
from .host import _in_ns, _pid, _run, _which

CLUSTER = "alpha"
MFA_PORT, CERT_PORT = 2222, 2223
MFA_SITE, CERT_SITE = f"{CLUSTER}-mfa", f"{CLUSTER}-cert"
PAM_DIRS = ("/lib/x86_64-linux-gnu/security", "/lib/aarch64-linux-gnu/security",
            "/usr/lib/x86_64-linux-gnu/security", "/usr/lib/aarch64-linux-gnu/security",
            "/lib/security", "/usr/lib/security", "/usr/lib64/security")
CERT_DAYS = 365


def missing() -> str | None:
    """Why these doors cannot open here (None: they can)."""
    if not any(Path(d, "pam_google_authenticator.so").exists() for d in PAM_DIRS):
        return "the TOTP PAM module is not installed (Debian package libpam-google-authenticator)"
    return None


def serves(c: ClusterDef) -> bool:
    return c.name == CLUSTER and missing() is None


def config_file(base: Path) -> Path:
    """The doors' own sites file (beside sites.yaml, whose faces never face a prompt)."""
    return base / "sites-mfa.yaml"


def mfa_dir(base: Path) -> Path:
    return base / "mfa"


def secret_file(base: Path) -> Path:
    """The TOTP secret (base32), readable by root only: what the user's phone holds."""
    return mfa_dir(base) / "totp.secret"


def ca_key(base: Path) -> Path:
    return base / "ssh" / "user_ca"


def user_cert(base: Path) -> Path:
    """The test key's certificate, signed by the test bed's user CA (not beside the key:
    there, it would be offered to every site)."""
    return base / "ssh" / "certs" / "id_ed25519-cert.pub"


def conf_file(base: Path, c: ClusterDef) -> Path:
    return cluster_dir(base, c) / "etc" / "sshd_config_doors"


def pid_file(base: Path, c: ClusterDef) -> Path:
    # not sshd.pid: restart_sshd and the main door's checks keep to that one
    return cluster_dir(base, c) / "run" / "sshd-doors.pid"


def log_file(base: Path, c: ClusterDef) -> Path:
    """sshd's own log (LogLevel VERBOSE): every accepted and failed authentication."""
    return cluster_dir(base, c) / "log" / "sshd-doors.log"


def pid_files(base: Path, c: ClusterDef) -> list[Path]:
    return [pid_file(base, c)] if serves(c) else []


def totp_code(base: Path, at: float | None = None) -> str:
    """The one-time code the user's authenticator app shows now (RFC 6238: HMAC-SHA1, 30 s
    steps, 6 digits)."""
    return totp(secret_file(base).read_text().strip(), at)


def totp(secret: str, at: float | None = None, step: int = 30, digits: int = 6) -> str:
    key = base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
    counter = int((time.time() if at is None else at) // step)
    mac = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    off = mac[-1] & 0x0F
    value = (struct.unpack(">I", mac[off:off + 4])[0] & 0x7FFFFFFF) % 10 ** digits
    return str(value).zfill(digits)


def door_sshd_config(base: Path, c: ClusterDef) -> str:
    """The main door's sshd_config on the two ports, with PAM, and per port its methods."""
    keep = []
    for line in sshd_config(base, c).splitlines():
        key = line.split(" ", 1)[0]
        if key in ("ListenAddress", "Port", "PidFile", "UsePAM", "KbdInteractiveAuthentication"):
            continue
        keep.append(line)
    return "\n".join([
        f"ListenAddress {c.ip}:{MFA_PORT}",
        f"ListenAddress {c.ip}:{CERT_PORT}",
        f"PidFile {pid_file(base, c)}",
        "UsePAM yes",
        "KbdInteractiveAuthentication yes",
        "LogLevel VERBOSE",
        *[x for x in keep if x],
        f"Match LocalPort {MFA_PORT}",
        "  AuthenticationMethods publickey,keyboard-interactive",
        f"Match LocalPort {CERT_PORT}",
        "  AuthenticationMethods publickey",
        "  AuthorizedKeysFile none",
        "  KbdInteractiveAuthentication no",
        f"  TrustedUserCAKeys {ca_key(base)}.pub",
        "",
    ])


def pam_stack(base: Path) -> str:
    return "\n".join([
        "# the test bed's MFA door: a TOTP code, nothing else (the key was checked by sshd)",
        f"auth required pam_google_authenticator.so secret={mfa_dir(base)}/ga.${{USER}}",
        "account required pam_permit.so",
        "session required pam_permit.so",
        "",
    ])


def _new_secret() -> str:
    return base64.b32encode(os.urandom(20)).decode().rstrip("=")


def prepare(base: Path, c: ClusterDef) -> None:
    """The TOTP secret (made once), the user's authenticator file, the user CA (made once)
    and the test key's certificate, the PAM stack and the door's sshd_config."""
    if not serves(c):
        return
    import pwd

    d = mfa_dir(base)
    d.mkdir(mode=0o755, exist_ok=True)
    os.chmod(d, 0o755)
    sf = secret_file(base)
    if not sf.exists():
        fd = os.open(sf, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(_new_secret() + "\n")
    ga = d / f"ga.{USER}"  # google-authenticator's file: the module reads it as the user
    ga.unlink(missing_ok=True)
    ga.write_text(f'{sf.read_text().strip()}\n" TOTP_AUTH\n" WINDOW_SIZE 3\n')
    pw = pwd.getpwnam(USER)
    os.chown(ga, pw.pw_uid, pw.pw_gid)
    os.chmod(ga, 0o400)
    (d / "pam-sshd").write_text(pam_stack(base))
    ca = ca_key(base)
    if not ca.exists():
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "diamond-testbed user CA",
             "-f", str(ca))
    cert = user_cert(base)
    cert.parent.mkdir(mode=0o755, exist_ok=True)
    if not cert.exists() or cert.stat().st_mtime < time.time() - (CERT_DAYS - 30) * 86400:
        sign(base, base / "ssh" / "id_ed25519.pub", cert, validity=f"-5m:+{CERT_DAYS}d")
    conf_file(base, c).write_text(door_sshd_config(base, c))


def prepared(base: Path, c: ClusterDef) -> bool:
    """Whether `prepare` wrote what this version of the doors needs (or c has none)."""
    return not serves(c) or all(p.exists() for p in (
        user_cert(base), secret_file(base), mfa_dir(base) / f"ga.{USER}", conf_file(base, c)))


def sign(base: Path, pub: Path, cert: Path, *, validity: str, ca: Path | None = None,
         key_id: str = f"{USER}@diamond-testbed") -> Path:
    """`ssh-keygen -s` a certificate for `pub` (principal: the test user) into `cert`."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "key.pub"
        shutil.copyfile(pub, p)
        _run("ssh-keygen", "-q", "-s", str(ca or ca_key(base)), "-I", key_id, "-n", USER,
             "-V", validity, str(p))
        shutil.copyfile(Path(tmp) / "key-cert.pub", cert)
    os.chmod(cert, 0o644)
    return cert


def running(base: Path, c: ClusterDef) -> bool:
    return bool(_pid(pid_file(base, c)))


def answers(c: ClusterDef) -> bool:
    try:
        with socket.create_connection((c.ip, MFA_PORT), timeout=0.5) as s:
            return s.recv(4).startswith(b"SSH")
    except OSError:
        return False


def start(base: Path, c: ClusterDef) -> list[str]:
    """The doors' sshd in the cluster's namespace, unless running."""
    if not serves(c) or running(base, c):
        return []
    Path("/run/sshd").mkdir(exist_ok=True)
    pam = mfa_dir(base) / "pam-sshd"
    sshd = _which("sshd") or "/usr/sbin/sshd"
    argv = _in_ns(c, base, "sh", "-c", f"mount --bind {pam} /etc/pam.d/sshd && exec \"$0\" \"$@\"",
                  sshd, "-f", str(conf_file(base, c)), "-E", str(log_file(base, c)))
    _run(*argv, timeout=30)
    return [f"{c.name} sshd (MFA and certificate doors)"]


def known_hosts_lines(base: Path, c: ClusterDef) -> list[str]:
    if not serves(c):
        return []
    pub = (cluster_dir(base, c) / "ssh" / "ssh_host_ed25519_key.pub").read_text().split()
    return [f"[{c.ip}]:{port} {pub[0]} {pub[1]}" for port in (MFA_PORT, CERT_PORT)]


def site_entries(base: Path, clusters: dict[str, ClusterDef],
                 ssh_entry: dict[str, dict]) -> tuple[list[dict], list[dict]]:
    """(the doors' sites-file entries, [{"name", "why"}] of those left out)."""
    if CLUSTER not in clusters or CLUSTER not in ssh_entry:
        return [], []
    why = missing()
    if why:
        return [], [{"name": MFA_SITE, "why": why}, {"name": CERT_SITE, "why": why}]
    src = ssh_entry[CLUSTER]

    def entry(name: str, port: int, **transport: object) -> dict:
        return {**src, "name": name, "auto": False,
                "transport": {**src.get("transport", {}), "port": port, **transport},
                "workdir": f"{HOME}/.diamond-{name.removeprefix(CLUSTER + '-')}",
                "metadata": {**src.get("metadata", {}), "door_to": CLUSTER}}

    return [entry(MFA_SITE, MFA_PORT),
            entry(CERT_SITE, CERT_PORT, cert_file=str(user_cert(base)))], []
