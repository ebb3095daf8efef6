"""Globus login and tokens: the native-app flow from a notebook, client credentials for services.

Tokens live in `default_data_dir()/globus-tokens.json` (mode 0600, written atomically) and are
refreshed by the SDK's authorizers, which write the new tokens back. Tokens are never logged,
put in events or in the store. Configuration from the environment:
`DIAMOND_GLOBUS_CLIENT_ID` (a registered native app, or the confidential client) and
`DIAMOND_GLOBUS_CLIENT_SECRET` (client credentials: a service deployment).
"""

from __future__ import annotations

import json
import os
import secrets
import time
from pathlib import Path
from typing import Any

import globus_sdk
from globus_sdk.authorizers import GlobusAuthorizer
from globus_sdk.transport import RetryConfig

from ..config import default_data_dir
from ..model import BadInput
from ..private_files import others_problem

TRANSFER_RS = "transfer.api.globus.org"
TRANSFER_SCOPE = "urn:globus:auth:scope:transfer.api.globus.org:all"


def token_path() -> Path:
    return default_data_dir() / "globus-tokens.json"


def _write_private(path: Path, data: dict[str, Any]) -> None:
    """Write JSON readable by the owner only (0600 from the first byte), then rename over."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(data, f)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


class GlobusAuth:
    """Login state and authorizers for the Transfer API."""

    def __init__(self, client_id: str | None = None, client_secret: str | None = None, *,
                 path: Path | None = None, scopes: list[str] | None = None) -> None:
        self.client_id = client_id or os.environ.get("DIAMOND_GLOBUS_CLIENT_ID")
        self.client_secret = client_secret or os.environ.get("DIAMOND_GLOBUS_CLIENT_SECRET")
        self.path = path or token_path()
        self.scopes = scopes or [TRANSFER_SCOPE]

    # -- the token file --------------------------------------------------------------------
    def load(self) -> dict[str, Any]:
        # a token file another user planted would send the user's transfers through that
        # user's Globus login (and one others can write, through anyone's)
        if problem := others_problem(self.path, "the Globus token file"):
            raise BadInput(problem)
        try:
            return json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}

    def _save_tokens(self, kind: str, tokens: dict[str, Any]) -> None:
        data = self.load()
        data.update({"kind": kind, "client_id": self.client_id})
        data.setdefault("by_resource", {}).update(tokens)
        data.pop("pending", None)
        _write_private(self.path, data)

    @property
    def logged_in(self) -> bool:
        if self.client_secret:
            return bool(self.client_id)
        tok = self.load().get("by_resource", {}).get(TRANSFER_RS, {})
        return bool(tok.get("refresh_token") or tok.get("access_token"))

    def logout(self) -> None:
        self.path.unlink(missing_ok=True)

    # -- native-app flow (a person in a notebook) ------------------------------------------
    def _native(self) -> globus_sdk.NativeAppAuthClient:
        if not self.client_id:
            raise BadInput("Globus login needs a native app client id "
                           "(set DIAMOND_GLOBUS_CLIENT_ID)")
        return globus_sdk.NativeAppAuthClient(self.client_id)

    def start_login(self) -> str:
        """The URL to open; the user pastes back the code shown at its end (`finish_login`).
        The PKCE verifier is kept in the 0600 token file so another process may finish."""
        verifier = secrets.token_urlsafe(64)[:80]
        client = self._native()
        client.oauth2_start_flow(self.scopes, refresh_tokens=True, verifier=verifier)
        url = client.oauth2_get_authorize_url()
        data = self.load()
        data["pending"] = {"verifier": verifier, "client_id": self.client_id,
                           "scopes": self.scopes, "at": time.time()}
        _write_private(self.path, data)
        return url

    def finish_login(self, code: str) -> dict[str, Any]:
        pending = self.load().get("pending")
        if not pending:
            raise BadInput("no Globus login in progress: start one first")
        client = self._native()
        client.oauth2_start_flow(pending["scopes"], refresh_tokens=True,
                                 verifier=pending["verifier"])
        try:
            res = client.oauth2_exchange_code_for_tokens(code.strip())
        except globus_sdk.AuthAPIError as e:
            raise BadInput(f"Globus rejected the code: {e.message}") from None
        self._save_tokens("native", dict(res.by_resource_server))
        return self.status()

    def status(self) -> dict[str, Any]:
        """What a face may show: no token material."""
        tok = self.load().get("by_resource", {}).get(TRANSFER_RS, {})
        return {"logged_in": self.logged_in, "kind": "client" if self.client_secret else
                "native", "expires_at": tok.get("expires_at_seconds"),
                "scopes": tok.get("scope")}

    # -- authorizers ---------------------------------------------------------------------
    def _on_refresh(self, res: globus_sdk.OAuthTokenResponse) -> None:
        self._save_tokens("client" if self.client_secret else "native",
                          dict(res.by_resource_server))

    def authorizer(self) -> GlobusAuthorizer:
        tok = self.load().get("by_resource", {}).get(TRANSFER_RS, {})
        if self.client_secret:
            if not self.client_id:
                raise BadInput("DIAMOND_GLOBUS_CLIENT_SECRET needs DIAMOND_GLOBUS_CLIENT_ID")
            cc = globus_sdk.ConfidentialAppAuthClient(self.client_id, self.client_secret)
            return globus_sdk.ClientCredentialsAuthorizer(
                cc, self.scopes, access_token=tok.get("access_token"),
                expires_at=tok.get("expires_at_seconds"), on_refresh=self._on_refresh)
        if not tok.get("refresh_token"):
            raise BadInput("not logged in to Globus: run the login (`%diamond globus login`, "
                           "or Federation.globus_login()) first")
        return globus_sdk.RefreshTokenAuthorizer(
            tok["refresh_token"], self._native(), access_token=tok.get("access_token"),
            expires_at=tok.get("expires_at_seconds"), on_refresh=self._on_refresh)

    def transfer_client(self) -> globus_sdk.TransferClient:
        # retries are ours (same submission id), so the SDK's own are off
        return globus_sdk.TransferClient(authorizer=self.authorizer(),
                                         retry_config=RetryConfig(max_retries=0))
