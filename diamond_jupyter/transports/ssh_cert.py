"""OpenSSH user certificates (`ssh-keygen -s`, as sshproxy-style services issue them): loaded
onto their key for paramiko, and read enough to refuse a stale one with a clear reason before
the server does so without one."""

from __future__ import annotations

import base64
import hashlib
import time
from dataclasses import dataclass
from datetime import datetime, timezone

import paramiko

from ..model import BadInput

FOREVER = 2 ** 64 - 1
# the key-specific fields between the nonce and the serial, by certificate type (PROTOCOL.certkeys)
_KEY_FIELDS = {
    "ssh-ed25519-cert-v01@openssh.com": "s",
    "sk-ssh-ed25519-cert-v01@openssh.com": "ss",
    "ssh-rsa-cert-v01@openssh.com": "mm",
    "ssh-dss-cert-v01@openssh.com": "mmmm",
    "ecdsa-sha2-nistp256-cert-v01@openssh.com": "ss",
    "ecdsa-sha2-nistp384-cert-v01@openssh.com": "ss",
    "ecdsa-sha2-nistp521-cert-v01@openssh.com": "ss",
    "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com": "sss",
}


@dataclass(frozen=True)
class CertInfo:
    path: str
    key_id: str
    serial: int
    principals: tuple[str, ...]
    valid_after: int
    valid_before: int
    ca: str  # the signing CA's fingerprint, "ED25519 SHA256:..."
    public_key: bytes  # the certified key as a plain public key blob

    def label(self) -> str:
        return f"certificate {self.key_id!r} (serial {self.serial}, CA {self.ca})"

    def validity_problem(self, user: str, now: float | None = None) -> str | None:
        """Why the server will refuse this certificate for `user` (None: it may accept it)."""
        now = time.time() if now is None else now
        if self.valid_before != FOREVER and now >= self.valid_before:
            return f"expired at {_iso(self.valid_before)}"
        if now < self.valid_after:
            return f"not valid before {_iso(self.valid_after)}"
        if self.principals and user not in self.principals:
            return f"is for {', '.join(self.principals)}, not for user {user}"
        return None


def _iso(t: int) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def parse(path: str, blob: bytes, cert_type: str) -> CertInfo:
    m = paramiko.Message(blob)
    if m.get_text() != cert_type or cert_type not in _KEY_FIELDS:
        raise BadInput(f"{path}: not an OpenSSH user certificate ({cert_type}); expected "
                       "one of " + ", ".join(sorted(_KEY_FIELDS)))
    m.get_string()  # nonce
    start = m.packet.tell()
    for kind in _KEY_FIELDS[cert_type]:
        m.get_mpint() if kind == "m" else m.get_string()
    plain = paramiko.Message()
    plain.add_string(cert_type.removesuffix("-cert-v01@openssh.com"))
    public_key = plain.asbytes() + blob[start:m.packet.tell()]
    serial, kind = m.get_int64(), m.get_int()
    if kind != 1:
        raise BadInput(f"{path}: a host certificate, not a user certificate")
    key_id = m.get_text()
    names = paramiko.Message(m.get_string())
    principals = []
    while names.get_remainder():
        principals.append(names.get_text())
    after, before = m.get_int64(), m.get_int64()
    m.get_string()  # critical options
    m.get_string()  # extensions
    m.get_string()  # reserved
    ca_blob = m.get_string()
    ca_type = paramiko.Message(ca_blob).get_text()
    digest = base64.b64encode(hashlib.sha256(ca_blob).digest()).decode().rstrip("=")
    short = ca_type.removeprefix("ssh-").split("-")[0].upper()
    return CertInfo(path, key_id, serial, tuple(principals), after, before,
                    f"{short} SHA256:{digest}", public_key)


def load(key: paramiko.PKey, path: str) -> CertInfo:
    """Attach the certificate at `path` to `key` (as paramiko offers it) and describe it.
    BadInput when the file is missing, is no certificate, or certifies another key."""
    try:
        blob = paramiko.PublicBlob.from_file(path)
    except FileNotFoundError:
        raise BadInput(f"certificate file {path} not found (cert_file)") from None
    except (ValueError, OSError, paramiko.SSHException) as e:
        raise BadInput(f"{path} is not an OpenSSH certificate: {e}") from None
    info = parse(path, blob.key_blob, blob.key_type)
    if info.public_key != key.asbytes():
        raise BadInput(f"{path} certifies another key than the site's key_file")
    key.public_blob = blob  # paramiko now offers the certificate for this key
    return info
