"""Under JupyterHub, the server's event stream (/api/events/subscribe) closed once the hub no
longer accepts the token that opened it: revoked, expired, or its access to this server
taken away. The stream is checked as often as the REST routes are: through the hub's answer
cached for `DiamondApp.hub_token_check_s`, so no frame waits for the hub and one lookup per
token per bound serves the stream and the routes alike. While the hub cannot be asked (down,
restarting) the stream stays open, for HUB_DOWN_BOUNDS times that bound at most: a hub
restart is ridden out, a hub gone for good leaves no stream unchecked."""

from __future__ import annotations

import time
from typing import Any

from jupyter_server.services.events.handlers import SubscribeWebsocket
from tornado.ioloop import PeriodicCallback
from tornado.web import HTTPError

# How often an open stream looks at the hub's cached answer (s): a closed stream is seen
# within the bound plus this.
RECHECK_S = 1.0
POLICY_VIOLATION = 1008  # RFC 6455: the endpoint refuses the connection by its policy
TRY_AGAIN_LATER = 1013  # RFC 6455 registry: the service is unavailable for now
# How many token-check bounds (DiamondApp.hub_token_check_s) an open stream waits for a hub
# that does not answer before it is closed: 60 s with the default bound of 5 s
HUB_DOWN_BOUNDS = 12
# a close reason is at most 123 bytes
REVOKED_REASON = ("the hub no longer accepts this stream's token (revoked or expired): "
                  "open the stream again with a valid token")
NO_ACCESS_REASON = ("this stream's token no longer grants access to this server: open the "
                    "stream again with one that does")


def hub_down_reason(seconds: int) -> str:
    return (f"the hub has not answered for {seconds} s, so this stream's token cannot be "
            "checked: open the stream again once the hub is back")


class HubCheckedSubscribeWebsocket(SubscribeWebsocket):
    """jupyter_server's event stream, its token asked of the hub again while it is open."""

    _recheck: PeriodicCallback | None = None
    _checking = False
    _hub_token = ""
    _session_id = ""
    _hub_silent_since: float | None = None  # monotonic time of the first unanswered check

    @property
    def hub_auth(self) -> Any:
        return self.identity_provider.hub_auth

    def open(self) -> None:  # type: ignore[override]
        super().open()
        # what authenticated the upgrade: a token (URL or header) or the login cookie's
        self._hub_token = self.hub_auth.get_token(self) or ""
        self._session_id = self.hub_auth.get_session_id(self) or ""
        if not self._hub_token:  # nothing the hub can revoke: the cookie check stands
            return
        self._recheck = PeriodicCallback(self._check_token, RECHECK_S * 1000)
        self._recheck.start()

    def on_close(self) -> None:
        if self._recheck is not None:
            self._recheck.stop()
            self._recheck = None
        super().on_close()

    async def _check_token(self) -> None:
        if self._checking or self.ws_connection is None:
            return
        self._checking = True
        try:
            user = await self.hub_auth.user_for_token(
                self._hub_token, session_id=self._session_id, sync=False)
        except HTTPError as e:  # the hub does not answer: asked again at the next check
            self._hub_silent(e.log_message or str(e))
            return
        finally:
            self._checking = False
        self._hub_silent_since = None
        if user is None:
            self._refuse(REVOKED_REASON)
        elif not self.hub_auth.check_scopes(self.hub_auth.access_scopes, user):
            self._refuse(NO_ACCESS_REASON)

    def _hub_silent(self, why: str) -> None:
        """One more check the hub did not answer; the stream closed once that has lasted
        HUB_DOWN_BOUNDS token-check bounds."""
        now = time.monotonic()
        if self._hub_silent_since is None:
            self._hub_silent_since = now
            self.log.warning("diamond: event stream's token not checked, the hub did not "
                             "answer: %s", why)
        grace_s = HUB_DOWN_BOUNDS * (self.hub_auth.cache_max_age or 5)
        if now - self._hub_silent_since >= grace_s:
            self._refuse(hub_down_reason(int(grace_s)), TRY_AGAIN_LATER)

    def _refuse(self, reason: str, code: int = POLICY_VIOLATION) -> None:
        self.log.info("diamond: event stream closed: %s", reason)
        if self._recheck is not None:
            self._recheck.stop()
            self._recheck = None
        self.close(code, reason)


def hub_checked_stream_route(identity_provider: Any) -> list[tuple[str, type]]:
    """The route that puts the checked stream in place of jupyter_server's (an extension's
    routes are matched first), or none outside JupyterHub."""
    if getattr(identity_provider, "hub_auth", None) is None:
        return []
    return [(r"/api/events/subscribe", HubCheckedSubscribeWebsocket)]
