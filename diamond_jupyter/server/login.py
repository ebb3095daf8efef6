"""Logins to sites whose SSH door asks for a one-time code, answered in the browser.

`POST /diamond/api/sites/NAME/login` connects to the site (the user's action: one attempt).
When the site asks, the server holds a pending prompt and emits a `login-prompt` event; the
sidebar shows a dialog and answers with `POST /diamond/api/logins/ID` (or closes it:
`DELETE`). The login request then answers with the outcome. Answers are handed to the
connection and forgotten: never logged, emitted, stored or returned.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jupyter_server.auth.decorator import authorized
from tornado.web import authenticated

from ..model import SiteError
from .base import ApiError, DiamondHandler, api
from .events import LOGIN_PROMPT
from .handlers import _Rows

if TYPE_CHECKING:
    from collections.abc import Callable

MAX_ANSWER_CHARS = 256


@dataclass
class Pending:
    id: str
    site: str
    title: str
    instructions: str
    prompts: list[tuple[str, bool]]
    expires_at: float
    answer: asyncio.Future = field(repr=False)

    def view(self) -> dict[str, Any]:
        return {"id": self.id, "site": self.site, "title": self.title,
                "instructions": self.instructions,
                "prompts": [{"text": t, "echo": e} for t, e in self.prompts],
                "expires_in_s": max(0, round(self.expires_at - time.monotonic()))}


class LoginBroker:
    """The prompts waiting for the user's answer, by id. `timeout_s` stays below sshd's
    LoginGraceTime (120 s by default), after which the site would hang up anyway."""

    def __init__(self, emit: Callable[[str, dict[str, Any]], None], timeout_s: float = 110.0):
        self.emit, self.timeout_s = emit, timeout_s
        self.pending: dict[str, Pending] = {}
        self._n = itertools.count(1)

    def asker(self, site: str):
        """The interactive handler of one login to `site`."""

        async def ask(title: str, instructions: str, prompts: list[tuple[str, bool]]) -> list[str]:
            loop = asyncio.get_running_loop()
            p = Pending(f"{next(self._n)}-{secrets.token_hex(6)}", site, title, instructions,
                        list(prompts), time.monotonic() + self.timeout_s, loop.create_future())
            self.pending[p.id] = p
            self.emit(LOGIN_PROMPT, p.view() | {"phase": "asked"})
            try:
                return await asyncio.wait_for(asyncio.shield(p.answer), self.timeout_s)
            except asyncio.TimeoutError:
                self.emit(LOGIN_PROMPT, p.view() | {"phase": "expired"})
                raise SiteError(f"nobody answered within {self.timeout_s:g} s") from None
            finally:
                self.pending.pop(p.id, None)

        return ask

    def answer(self, prompt_id: str, answers: list[str] | None) -> Pending:
        """Hand the user's answers (None: the dialog was closed) to the waiting login."""
        p = self.pending.pop(prompt_id, None)
        if p is None or p.answer.done():
            raise ApiError(404, "not-found", f"no login prompt {prompt_id!r} is waiting (it was "
                           "answered, closed or expired)")
        if answers is None:
            p.answer.set_exception(SiteError("the dialog was closed"))
            self.emit(LOGIN_PROMPT, p.view() | {"phase": "cancelled"})
        else:
            p.answer.set_result(answers)
            self.emit(LOGIN_PROMPT, p.view() | {"phase": "answered"})
        return p


def broker(handler: DiamondHandler) -> LoginBroker:
    app = handler.app
    if getattr(app, "login_broker", None) is None:
        app.login_broker = LoginBroker(app.bridge.emit, app.login_prompt_timeout_s)
    return app.login_broker


class SiteLoginHandler(_Rows):
    takes_no_body = True

    @authenticated
    @authorized
    @api
    async def post(self, name: str) -> None:
        """Log in to site `name` now (one attempt). 200 {"site", "new_connection"}; 502 with
        the reason when the code was refused or not given. A new connection refreshes the
        site's row (a site-snapshot event), so the sidebar shows it reachable at once."""
        self.refuse_a_body(f"POST sites/{name}/login")
        fed = await self.fed_with_site(name)
        res = await fed.login(name, broker(self).asker(name))
        if res["new_connection"]:
            await self.site_rows(fed, [name], max_age_s=0)
        self.reply(res)


class LoginsHandler(DiamondHandler):
    @authenticated
    @authorized
    @api
    async def get(self) -> None:
        """The prompts waiting for an answer (a sidebar opened after the event shows them)."""
        self.reply({"prompts": [p.view() for p in broker(self).pending.values()]})


class LoginPromptHandler(DiamondHandler):
    @authenticated
    @authorized
    @api
    async def post(self, prompt_id: str) -> None:
        """Answer prompt `prompt_id`: {"answers": ["123456"]}, one per prompt."""
        body = self.body()
        unknown = [k for k in body if k != "answers"]
        if unknown:
            raise ApiError(400, "bad-input", f"unknown field {unknown[0][:60]!r} in the body "
                           "(accepted: answers)")
        answers = body.get("answers")
        p = broker(self).pending.get(prompt_id)
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise ApiError(400, "bad-input", "answers must be a list of strings, one per prompt")
        if p is not None and len(answers) != len(p.prompts):
            raise ApiError(400, "bad-input", f"answers has {len(answers)} item(s); the prompt "
                           f"asks {len(p.prompts)}")
        if any(len(a) > MAX_ANSWER_CHARS for a in answers):
            raise ApiError(400, "bad-input", f"an answer is longer than {MAX_ANSWER_CHARS} "
                           "characters")
        broker(self).answer(prompt_id, answers)
        self.reply({"id": prompt_id, "answered": True})

    @authenticated
    @authorized
    @api
    async def delete(self, prompt_id: str) -> None:
        """Close prompt `prompt_id` without an answer: its login fails, nothing is sent."""
        broker(self).answer(prompt_id, None)
        self.reply({"id": prompt_id, "answered": False})
