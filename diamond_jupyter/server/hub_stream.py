"""Under JupyterHub, the server's event stream (/api/events/subscribe) closed once the hub no
longer accepts the token that opened it: revoked, expired, or its access to this server
taken away. The stream is checked as often as the REST routes are: through the hub's answer
cached for `DiamondApp.hub_token_check_s`, so no frame waits for the hub and one lookup per
token per bound serves the stream and the routes alike."""

from __future__ import annotations

from typing import Any

from jupyter_server.services.events.handlers import SubscribeWebsocket
from tornado.ioloop import PeriodicCallback
from tornado.web import HTTPError

# How often an open stream looks at the hub's cached answer (s): a closed stream is seen
# within the bound plus this.
RECHECK_S = 1.0
POLICY_VIOLATION = 1008  # RFC 6455: the endpoint refuses the connection by its policy
# a close reason is at most 123 bytes
REVOKED_REASON = ("the hub no longer accepts this stream's token (revoked or expired): "
                  "open the stream again with a valid token")
NO_ACCESS_REASON = ("this stream's token no longer grants access to this server: open the "
                    "stream again with one that does")


class HubCheckedSubscribeWebsocket(SubscribeWebsocket):
    """jupyter_server's event stream, its token asked of the hub again while it is open."""

    _recheck: PeriodicCallback | None = None
    _checking = False
    _hub_token = ""
    _session_id = ""

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
            self.log.warning("diamond: event stream's token not checked, the hub did not "
                             "answer: %s", e.log_message)
            return
        finally:
            self._checking = False
        if user is None:
            self._refuse(REVOKED_REASON)
        elif not self.hub_auth.check_scopes(self.hub_auth.access_scopes, user):
            self._refuse(NO_ACCESS_REASON)

    def _refuse(self, reason: str) -> None:
        self.log.info("diamond: event stream closed: %s", reason)
        if self._recheck is not None:
            self._recheck.stop()
            self._recheck = None
        self.close(POLICY_VIOLATION, reason)


def hub_checked_stream_route(identity_provider: Any) -> list[tuple[str, type]]:
    """The route that puts the checked stream in place of jupyter_server's (an extension's
    routes are matched first), or none outside JupyterHub."""
    if getattr(identity_provider, "hub_auth", None) is None:
        return []
    return [(r"/api/events/subscribe", HubCheckedSubscribeWebsocket)]
