"""What a job or a workflow needs to run again, secrets included, kept out of the store's text.

The store shows every spec redacted (`codec.redact`): `export WANDB_API_KEY=***`. A spec is
also submitted again from the store: a workflow's steps by its engine (after a restart too),
a stuck job moved to another site, a staged job resumed after a restart. Submitting the
redacted text would run something other than what the user approved, so where redaction
changed a spec, its whole JSON is also kept sealed: encrypted and authenticated with Fernet
(the `cryptography` library's recipe, as JupyterHub seals its `auth_state`) under a key the
store file does not hold: `DIAMOND_CRYPT_KEY` (a Fernet key), else a key file made on first
use beside the store, readable by its owner only (`<store>.key`, mode 0600).

A sealed spec that cannot be opened (another key, a lost key file) is never replaced by its
redacted text: `unseal` raises a StoreError that says so.
"""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from ..model import DiamondError

KEY_ENV = "DIAMOND_CRYPT_KEY"


class SealError(DiamondError):
    """A sealed value cannot be made or opened (no usable key, another key, tampering)."""


def key_file_for(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".key")


class Sealer:
    """Seals and opens text with the store's key (read or made on first use)."""

    def __init__(self, store_path: Path) -> None:
        self.key_path = key_file_for(store_path)
        self._fernet: Fernet | None = None

    def _key(self, *, create: bool) -> Fernet:
        if self._fernet is not None:
            return self._fernet
        if env := os.environ.get(KEY_ENV, "").strip():
            self._fernet = _fernet(env.encode(), f"${KEY_ENV}")
            return self._fernet
        try:
            raw = _read_private(self.key_path)
        except FileNotFoundError:
            if not create:
                raise SealError(
                    f"no key to open sealed secrets: neither ${KEY_ENV} nor {self.key_path} "
                    "exists (the key that sealed them is lost)") from None
            raw = self._make_key_file()
        except OSError as e:
            raise SealError(f"cannot read the seal key {self.key_path}: {e}") from e
        self._fernet = _fernet(raw, str(self.key_path))
        return self._fernet

    def _make_key_file(self) -> bytes:
        """A new key in a file only its owner can read; O_EXCL: a key another process made
        first is the one used."""
        key = Fernet.generate_key()
        try:
            fd = os.open(self.key_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            return _read_private(self.key_path)
        try:
            os.write(fd, key + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        return key

    def seal(self, text: str) -> str:
        return self._key(create=True).encrypt(text.encode()).decode("ascii")

    def unseal(self, token: str) -> str:
        try:
            return self._key(create=False).decrypt(token.encode("ascii")).decode()
        except (InvalidToken, UnicodeError, ValueError) as e:
            raise SealError(
                "a sealed secret cannot be opened with this key (sealed under another "
                f"${KEY_ENV} or key file than {self.key_path}, or altered)") from e


def _read_private(path: Path) -> bytes:
    """The key file's text, if it is the user's own and only theirs: a key another user
    made (planted beside a store in a shared directory before the first seal) would seal
    the user's secrets under a key that user holds, and one others can read opens them."""
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        if st.st_uid != os.getuid():
            raise SealError(f"the seal key {path} belongs to another user (uid {st.st_uid}): "
                            f"not used; remove it, or set ${KEY_ENV}")
        if st.st_mode & 0o077:
            raise SealError(f"the seal key {path} can be read by others (mode "
                            f"{st.st_mode & 0o777:04o}): not used; chmod 600 it if it is "
                            "yours, else remove it")
        return fh.read().strip()


def _fernet(raw: bytes, where: str) -> Fernet:
    try:
        if len(base64.urlsafe_b64decode(raw)) != 32:
            raise ValueError
        return Fernet(raw)
    except (ValueError, binascii.Error):
        raise SealError(f"{where} is not a Fernet key (32 bytes, url-safe base64, e.g. the "
                        "output of `python -c 'from cryptography.fernet import Fernet; "
                        "print(Fernet.generate_key().decode())'`)") from None
