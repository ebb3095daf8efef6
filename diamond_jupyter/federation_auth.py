"""The Federation's logins: sites whose SSH door asks for a one-time code (keyboard-interactive)
are logged in to by the user through a face, once per connection (a mixin of `Federation`).

A face gives the engine a way to ask the user: the CLI asks on its terminal for every
connection it opens; the server asks only when the user logs in (a dialog), so work in the
background never pops a prompt nobody asked for. A refused or unanswered code is never
retried by the engine: the site waits until the user logs in again.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .transports.base import InteractiveHandler

if TYPE_CHECKING:
    from .sites import Site


class LoginMixin:
    sites: dict[str, Site]

    def site(self, name: str) -> Site:  # provided by Federation
        raise NotImplementedError

    def set_interactive_handler(self, ask: InteractiveHandler | None) -> None:
        """Ask the user through `ask(title, instructions, [(prompt, echo), ...]) -> answers`
        (sync or async) whenever a site's connection wants a one-time code; None: never ask
        (a site that wants one then needs `login`)."""
        for s in self.sites.values():
            s.set_interactive_handler(ask)

    async def login(self, site: str, ask: InteractiveHandler | None = None, *,
                    persist_s: float | None = None,
                    as_ssh_config: bool = False) -> dict[str, Any]:
        """Connect to `site` now, asking `ask` (else the handler set) for a one-time code if the
        site wants one: one attempt, which also clears an earlier failed login. Returns
        {"site", "new_connection"}; AuthError (a SiteError) with the reason when refused.
        Sites reached without SSH have nothing to log in to (new_connection false).
        `persist_s`: leave a login holder keeping the connection for later processes (other
        CLI commands) until that many seconds pass unused (math.inf: until `logout`); the
        reply then has "holder" ({"socket", "pid", "idle_s" (None: until logout),
        "origin"}). BadInput for a site reached without SSH. `as_ssh_config` (with no
        `persist_s`): keep it as the user's ssh_config keeps the host's ssh logins
        (ControlMaster with ControlPersist), "origin" naming that line; the reply's
        "ssh_control_path", when ssh_config shares the host's ssh logins, is ssh's own
        socket, which diamond leaves alone (it keeps the login in its own holder)."""
        s = self.site(site)
        said = s.ssh_config_keeps() if as_ssh_config else None
        reply: dict[str, Any] = {"site": s.name}
        if said is not None and said["control_path"]:
            reply["ssh_control_path"] = said["control_path"]
        origin = None
        if persist_s is None and said is not None and said["idle_s"] is not None:
            persist_s, origin = said["idle_s"], said["origin"]
        if persist_s is None:
            return {**reply, "new_connection": await s.login(ask)}
        held = await s.keep_login(persist_s, ask)
        return {**reply, "new_connection": held["new_connection"],
                "holder": {"socket": held["socket"], "pid": held["pid"],
                           "idle_s": None if math.isinf(persist_s) else persist_s,
                           "origin": origin}}

    async def logout(self, site: str) -> dict[str, Any]:
        """End `site`'s login holder (`login(persist_s=...)`): {"site", "stopped"}, stopped
        false when none was running."""
        s = self.site(site)
        return {"site": s.name, "stopped": await s.end_kept_login()}

    def needs_login(self, site: str) -> bool:
        """Whether `site` waits for the user to log in (its last code was refused, not given,
        or could not be asked)."""
        return self.site(site).needs_login
