"""Logging in to the test bed's MFA door through the Jupyter server, as the sidebar does: the
login request holds a prompt (a login-prompt event and GET logins), the browser answers it
through an authenticated route, and the connection then serves every later request with no
second prompt. A wrong or missing answer is one attempt, never retried; no answer appears in
an event, the server's log or the store."""

from __future__ import annotations

import asyncio
import logging

import pytest
from server_conftest import diamond_config
from test_mfa_testbed import SshdLog, _no_secret_in, _wrong_code

from diamond_jupyter import testbed
from diamond_jupyter.server.login import LOGIN_PROMPT
from diamond_jupyter.testbed import mfa

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
pytestmark = pytest.mark.testbed
MFA = mfa.MFA_SITE


@pytest.fixture
def jp_server_config(tb, tmp_path, data_dir):
    info = testbed.up()
    assert info["mfa_config"], info["left_out"]
    cfg = diamond_config(info["mfa_config"], str(tmp_path / "store.sqlite3"))
    cfg["DiamondApp"]["login_prompt_timeout_s"] = 60.0
    return cfg


@pytest.fixture
def emitted(jp_serverapp):
    """Every diamond event the server emits from now on, and a way to wait for one."""
    seen: list[tuple[str, dict]] = []
    cond = asyncio.Condition()

    async def listener(logger, schema_id, data):
        async with cond:
            seen.append((schema_id, dict(data)))
            cond.notify_all()
    for sid in list(jp_serverapp.event_logger.schemas.schema_ids):
        if sid.startswith("https://diamond-jupyter.org/"):
            jp_serverapp.event_logger.add_listener(schema_id=sid, listener=listener)

    async def wait(pred, what: str, timeout: float = 120) -> dict:
        async def found():
            async with cond:
                while True:
                    for sid, data in seen:
                        if sid == LOGIN_PROMPT and pred(data):
                            return data
                    await cond.wait()
        try:
            return await asyncio.wait_for(found(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"no {what} within {timeout} s; saw {seen}") from None
    return seen, wait


async def _login(api):
    return await api.call("POST", f"sites/{MFA}/login", expect=None)


async def test_dialog_login_once_then_the_connection_serves_every_request(
        api, tb, emitted, caplog, tmp_path):
    caplog.set_level(logging.DEBUG)
    seen, wait = emitted
    log = SshdLog(tb.base)
    snap = await api.get(f"sites/{MFA}/snapshot", params={"max_age": 0})
    assert snap["reachable"] is False and "one-time code" in snap["error"]
    assert not [d for s, d in seen if s == LOGIN_PROMPT]  # background work never prompts
    login = asyncio.ensure_future(_login(api))
    asked = await wait(lambda d: d["phase"] == "asked", "login prompt")
    assert asked["site"] == MFA and asked["prompts"] == [{"text": "Verification code: ",
                                                          "echo": False}]
    listed = (await api.get("logins"))["prompts"]
    assert [p["id"] for p in listed] == [asked["id"]]
    code = mfa.totp_code(tb.base)
    await api.post(f"logins/{asked['id']}", {"answers": [code]})
    res = await login
    assert res.code == 200 and res.body == {"site": MFA, "new_connection": True}, res.body
    await wait(lambda d: d["phase"] == "answered" and d["id"] == asked["id"], "answered")
    for _ in range(3):  # the pooled connection: no second prompt
        snap = await api.get(f"sites/{MFA}/snapshot", params={"max_age": 0})
        assert snap["reachable"] is True, snap
    again = await _login(api)
    assert again.body == {"site": MFA, "new_connection": False}
    assert len([d for s, d in seen if s == LOGIN_PROMPT and d["phase"] == "asked"]) == 1
    assert len(log.lines(r"Accepted keyboard-interactive/pam for diamondtb")) == 1
    assert (await api.get("logins"))["prompts"] == []
    # the code is nowhere: events, the server's log, the store
    assert all(code not in repr(d) for _, d in seen)
    assert code not in caplog.text
    _no_secret_in(tmp_path, code)


async def test_a_wrong_code_is_one_attempt_and_nothing_retries_it(api, tb, emitted, caplog,
                                                                   tmp_path):
    caplog.set_level(logging.DEBUG)
    seen, wait = emitted
    log = SshdLog(tb.base)
    login = asyncio.ensure_future(_login(api))
    asked = await wait(lambda d: d["phase"] == "asked", "login prompt")
    wrong = _wrong_code(tb)
    await api.post(f"logins/{asked['id']}", {"answers": [wrong]})
    res = await login
    assert res.code == 502 and "one-time code was not accepted" in res.body["message"]
    assert wrong not in res.body["message"]
    # background work (snapshots, the monitor) does not try again by itself
    for _ in range(3):
        snap = await api.get(f"sites/{MFA}/snapshot", params={"max_age": 0})
        assert snap["reachable"] is False and "not accepted" in snap["error"]
    assert len(log.lines(r"Failed keyboard-interactive/pam for diamondtb")) == 1
    assert len([d for s, d in seen if s == LOGIN_PROMPT and d["phase"] == "asked"]) == 1
    # answering the old prompt again is refused: it is gone
    stale = await api.call("POST", f"logins/{asked['id']}", {"answers": [wrong]}, expect=404)
    assert "no login prompt" in stale.body["message"]
    # closing the dialog: the login fails with the reason, nothing is sent to the site
    login = asyncio.ensure_future(_login(api))
    second = await wait(lambda d: d["phase"] == "asked" and d["id"] != asked["id"], "prompt")
    await api.call("DELETE", f"logins/{second['id']}")
    res = await login
    assert res.code == 502 and "no one-time code was given (the dialog was closed)" \
        in res.body["message"], res.body
    assert len(log.lines(r"Failed keyboard-interactive/pam for diamondtb")) == 1
    assert all(wrong not in repr(d) for _, d in seen)
    assert wrong not in caplog.text
    _no_secret_in(tmp_path, wrong)


async def test_answers_are_checked(api, tb, emitted):
    _, wait = emitted
    login = asyncio.ensure_future(_login(api))
    asked = await wait(lambda d: d["phase"] == "asked", "login prompt")
    for body, why in [({"answers": "123456"}, "list of strings"),
                      ({"answers": ["1", "2"]}, "asks 1"),
                      ({"answers": ["9" * 300]}, "longer than 256")]:
        r = await api.call("POST", f"logins/{asked['id']}", body, expect=400, validate=False)
        assert why in r.body["message"]
    await api.post(f"logins/{asked['id']}", {"answers": [mfa.totp_code(tb.base)]})
    assert (await login).code == 200
