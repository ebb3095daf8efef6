"""The base handler: authentication, error mapping, access to the Federation."""

from __future__ import annotations

import asyncio
import difflib
import functools
import json
import re
import sys
from collections.abc import Awaitable, Callable
from http.client import responses
from typing import TYPE_CHECKING, Any, TypeVar

from jupyter_server.base.handlers import APIHandler
from pydantic import BaseModel, ValidationError
from tornado.web import _ARG_DEFAULT, HTTPError, RequestHandler

from ..digits import ascii_digits
from ..model import (
    BadInput,
    DiamondError,
    Job,
    JobSpec,
    SiteError,
    field_problem,
    spec_error_at,
    visible,
)
from ..option_types import list_limit_refusal
from ..script_body import MAX_SCRIPT_BYTES
from ..wording import unknown_field
from .bodies import PlaceBody, SubmitBody

if TYPE_CHECKING:
    from ..federation import Federation
    from .app import DiamondApp

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
_INTEGER = re.compile(r"[+-]?[0-9]+")
# The largest number SQLite stores (offsets, sequence numbers): beyond it a query overflows
MAX_QUERY_INT = 2**63 - 1
MAX_LIMIT = 500  # the most rows one page of a list holds
B = TypeVar("B", bound=BaseModel)
T = TypeVar("T")
# what a body may be labelled besides JSON's own types: a form's type is what `curl -d` and
# Tornado's client give any body, so JSON under it is read (a form's fields are refused)
FORM_TYPE = "application/x-www-form-urlencoded"
BODY_METHODS = ("POST", "PUT", "PATCH")


class ApiError(HTTPError):
    """An HTTP error with a machine-readable `reason` for the JSON body."""

    def __init__(self, status: int, code: str, message: str,
                 headers: dict[str, str] | None = None) -> None:
        from ..federation import Federation

        # the server log gets the message without secrets (it may quote the request);
        # the client, who sent them, gets it whole
        logged = Federation.redacted(message)
        super().__init__(status, log_message=logged.replace("%", "%%"))
        self.code, self.message, self.headers = code, message, headers or {}


def _said(error: BaseException) -> str:
    from ..federation import Federation

    return Federation.error_said(error)


def api(method: F) -> F:
    """Map engine errors to HTTP statuses (BadInput 400, SiteError 502, others 500)."""

    @functools.wraps(method)
    async def inner(self: DiamondHandler, *args: Any, **kwargs: Any) -> Any:
        try:
            return await method(self, *args, **kwargs)
        except BadInput as e:  # it may quote the client's own request (kept) or a site's
            # words (a refusal that echoes a token from this server's environment: not kept)
            raise ApiError(400, "bad-input", _said(e)) from None
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "body"
            raise ApiError(400, "bad-input", f"{where}: {first['msg']}") from None
        # a site's or the engine's words are not the client's own: they may quote a secret
        # (a site's error echoing a token from the environment), so they go redacted
        except SiteError as e:
            raise ApiError(502, "site-error", _said(e)) from None
        except DiamondError as e:
            raise ApiError(500, "engine-error", _said(e)) from None

    return inner  # type: ignore[return-value]


def found_or_404(lookup: Callable[[str], T], key: str,
                 unknown: type[DiamondError] = DiamondError) -> T:
    """What `lookup` finds for `key`, or 404 with its message where it raises `unknown`."""
    try:
        return lookup(key)
    except unknown as e:
        raise ApiError(404, "not-found", str(e)) from None


class DiamondHandler(APIHandler):
    auth_resource = "diamond"
    # a route whose POST reads only its path (cancel, release, login): a body it is sent is
    # refused by `refuse_a_body` (400), whatever its Content-Type, never passed over
    takes_no_body = False

    def _request_summary(self) -> str:
        """The request as Tornado logs an error's (`404 GET /path?query (ip)`): its query
        without secrets (a `?token=...` given in the URL is the server's own token)."""
        from ..federation import Federation

        return Federation.redacted(super()._request_summary())

    async def prepare(self) -> None:  # type: ignore[override]
        await super().prepare()
        # Refuse before method dispatch, so that even an unsupported method answers 403.
        if not self.current_user and self.request.method != "OPTIONS":
            raise HTTPError(403, log_message="authentication required")
        size, limit = len(self.request.body or b""), self.app.max_body_bytes
        if size > limit:  # before any parsing, redaction or storing of it
            raise ApiError(413, "too-large", f"the request body is {size} bytes; this server "
                           f"accepts at most {limit} (DiamondApp.max_body_bytes), for a job "
                           f"script of at most {MAX_SCRIPT_BYTES} bytes and the rest of "
                           "the body")
        self._refuse_other_than_json()

    def _refuse_other_than_json(self) -> None:
        """415 for a body labelled another type than JSON on a route that takes it (e.g.
        `text/plain`, which any web page may send without the browser asking the server);
        an unlabelled or empty body is let through."""
        method = self.request.method or ""
        if method not in BODY_METHODS or not (self.request.body or b"").strip() or \
                self.takes_no_body or \
                getattr(type(self), method.lower()) is getattr(RequestHandler, method.lower()):
            return
        kind = self._content_type()
        if kind and kind not in ("application/json", FORM_TYPE) and not kind.endswith("+json"):
            raise ApiError(415, "unsupported-media-type", f"the request body was sent as "
                           f"{kind}; this API reads JSON only: send it with Content-Type: "
                           "application/json")

    def _content_type(self) -> str:
        """The request's media type, lower case, without its parameters ("" when unsaid)."""
        return self.request.headers.get("Content-Type", "").split(";")[0].strip().lower()

    @property
    def app(self) -> DiamondApp:
        return self.settings["diamond_app"]

    def sites_file_note(self) -> dict[str, str]:
        """`{"sites_file_changed": what to do}` when the sites file was edited, removed or
        created since the engine read it, else {} (a reply's fields, added to a listing of
        sites). Without an engine (no sites file, or a bad one, at the start) the app's
        record of the file at the start says it."""
        fed = self.app.federation
        note = fed.sites_file_changed() if fed is not None else self.app.sites_file_read.note()
        return {"sites_file_changed": note} if note else {}

    async def fed(self) -> Federation:
        """The started Federation, or 503 with the reason it is not configured."""
        fed = await self.app.ensure_started()
        if fed is None:
            raise ApiError(503, "not-configured", self.app.error or "diamond is not configured")
        return fed

    async def fed_with_site(self, name: str) -> Federation:
        """The started Federation, or 404 when it lists no site `name`."""
        fed = await self.fed()
        self.site_config_or_404(fed, name)
        return fed

    def site_config_or_404(self, fed: Federation, name: str) -> dict[str, Any]:
        """Site `name`'s configuration, or 404 when the Federation lists no such site."""
        configs = fed.site_configs()
        cfg = next((c for c in configs if c["name"] == name), None)
        if cfg is None:  # the command line's words: the site meant and the known ones
            from ..config import unknown_site_message

            raise ApiError(404, "not-found",
                           unknown_site_message(name, [c["name"] for c in configs]))
        return cfg

    def job_or_404(self, fed: Federation, job_id: str) -> Job:
        return found_or_404(fed.job, job_id, BadInput)

    # -- request helpers ----------------------------------------------------------------
    def body(self) -> dict[str, Any]:
        """The request's JSON object. A key given twice in one object is refused: JSON
        readers disagree on which value counts (Python keeps the last, many the first), so
        what a proxy, a log or a person read could differ from what the engine acts on."""
        # a UTF-8 byte order mark (some Windows tools write one) is no part of the JSON
        raw = self.request.body.removeprefix(b"\xef\xbb\xbf").strip()
        if not raw:
            return {}
        try:
            data = json.loads(raw.decode("utf-8"), object_pairs_hook=_once_each)
        except UnicodeDecodeError as e:
            raise ApiError(400, "bad-input", f"the request body is not UTF-8 text (byte "
                           f"{e.start}); send JSON encoded as UTF-8") from None
        except _KeyTwice as e:
            raise ApiError(400, "bad-input", f"the request body gives the key {e.key!r} twice "
                           "in one object; give each key once") from None
        except json.JSONDecodeError as e:
            raise ApiError(400, "bad-input", f"the request body is not valid JSON ({e.msg} at "
                           f"line {e.lineno}, column {e.colno}){self._form_hint(raw)}"
                           ) from None
        except ValueError:  # Python's bound on the digits of a whole number it converts
            raise ApiError(400, "bad-input", "the request body holds a whole number of more "
                           f"than {sys.get_int_max_str_digits()} digits; no field takes one"
                           ) from None
        except RecursionError:
            raise ApiError(400, "bad-input", "the request body nests lists or objects too "
                           "deeply to read; give it a flatter shape") from None
        if not isinstance(data, dict):
            raise ApiError(400, "bad-input", "the request body must be a JSON object of "
                           f'named fields ({{"field": value, ...}}), not {_json_kind(data)}'
                           + ("; send the one object itself, not a list holding it"
                              if isinstance(data, list) and len(data) == 1
                              and isinstance(data[0], dict) else ""))
        if (where := _no_text_at(data)) is not None:
            raise ApiError(400, "bad-input", f"the request body's {where} holds a lone "
                           "surrogate (a \\ud800-\\udfff escape without its pair), which is "
                           "no text: send the character itself, or its escaped pair")
        return data

    def refuse_a_body(self, route: str) -> None:
        """ApiError 400 for a body sent to `route` (e.g. "POST jobs/ID/cancel"), which reads
        none: what it asked for would silently not happen. No body, whitespace or `{}` (what
        clients send for "nothing") is let through, whatever its Content-Type."""
        raw = (self.request.body or b"").removeprefix(b"\xef\xbb\xbf").strip()
        if re.fullmatch(rb"(\{\s*\})?", raw):
            return
        shown = raw[:60].decode("utf-8", "replace")
        more = f" ({len(raw)} bytes)" if len(raw) > 60 else ""
        route = visible(route if len(route) <= 160 else route[:150] + "...")
        raise ApiError(400, "bad-input", f"{route} takes no body, and was sent {shown!r}"
                       f"{more}; nothing was done: send no body (or {{}})")

    def _form_hint(self, raw: bytes) -> str:
        """What to send instead, when the body is an HTML form's (not JSON gone wrong:
        curl -d and many clients label any body a form's)."""
        kind = self._content_type()
        if kind == FORM_TYPE and raw[:1] not in (b"{", b"["):
            return (f"; it was sent as {kind} (curl -d, an HTML form): send a JSON object, "
                    "with Content-Type: application/json")
        return ""

    def only_query_args(self, *accepted: str) -> None:
        """ApiError 400 naming a query argument this route does not read: a misspelt filter
        (`kind=` for `kinds=`) was passed over, and every record came back as if filtered.
        The server's own (`token`, `_xsrf`) are always let through, and so is JupyterLab's
        cache-buster: its `ServerConnection.makeRequest` adds the time in ms, bare, to every
        GET (`events?since=5&1733400000000`); refused, the sidebar's heartbeat stopped."""
        unknown = sorted(k for k, v in self.request.query_arguments.items()
                         if k not in {*accepted, "token", "_xsrf"}
                         and not (ascii_digits(k) and not any(v)))
        if unknown:
            raise ApiError(400, "bad-input", f"query argument {unknown[0]!r} is not one this "
                           f"route reads (accepted: {', '.join(accepted)})")

    def get_query_argument(self, name: str, default: Any = _ARG_DEFAULT,
                           strip: bool = True) -> Any:
        """The query argument `name`; ApiError 400 when it is given twice with two values
        (`jobs?site=x&site=here` listed here's jobs: the last one silently won)."""
        given = list(dict.fromkeys(self.get_query_arguments(name, strip=strip)))
        if len(given) > 1:
            shown = " and ".join(repr(v[:40]) for v in given[:2])
            raise ApiError(400, "bad-input", f"query argument {name!r} is given twice ({shown}); "
                           "give it once")
        return super().get_query_argument(name, default, strip)

    def page_args(self) -> tuple[int, int]:
        """A list's `limit` (50 unless given, 1 to MAX_LIMIT, as the command line's `--limit`
        takes 1 or more) and `offset` (0 unless given)."""
        return self.limit_arg(50), self.int_arg("offset", 0) or 0

    def limit_arg(self, default: int, most: int = MAX_LIMIT) -> int:
        """A list's `limit` query argument (`default` unless given), refused in the words
        the command line's `--limit` says (`option_types.list_limit_refusal`)."""
        raw = self.get_query_argument("limit", None)
        if raw in (None, ""):
            return default
        if (problem := list_limit_refusal(raw, most)) is not None:
            raise ApiError(400, "bad-input", f"limit: {problem}")
        return int(raw)

    def int_arg(self, name: str, default: int | None, *, lo: int = 0,
                hi: int | None = None) -> int | None:
        raw = self.get_query_argument(name, None)
        if raw in (None, ""):
            return default
        # ASCII digits only: int() also takes '1_0', Arabic-Indic or full-width digits
        if not _INTEGER.fullmatch(raw):
            raise ApiError(400, "bad-input", f"{name} must be an integer, not {raw!r}")
        top = MAX_QUERY_INT if hi is None else hi
        val = int(raw) if len(raw) <= 20 else top + 1  # (a million digits: no int() of it)
        if val < lo or val > top:
            raise ApiError(400, "bad-input", f"{name} must be between {lo} and {top}")
        return val

    def parse(self, model: type[B], extra: dict[str, Any] | None = None) -> B:
        """The JSON body (with `extra`, e.g. path arguments) as `model`; a bad field is a
        ValidationError, which `api` answers with 400 naming it."""
        body = self.body() | (extra or {})
        _refuse_misspelt_fields(model, body)
        try:
            parsed = model.model_validate(body)
        except ValidationError as e:
            first = e.errors()[0]
            if not first["loc"]:
                raise
            raise BadInput(field_problem(model, first)) from None
        except BadInput as e:  # a spec's own checks: said as the others, with its place
            raise BadInput(spec_error_at(model, body, e)) from None
        # after the model's own checks, which say more of a job setting sent beside a script
        _refuse_unknown_fields(model, body)
        return parsed

    async def spec_from(self, fed: Federation, body: PlaceBody | SubmitBody) -> JobSpec:
        """The body's JobSpec, built as the skills build theirs (`skills.spec_of`: its `spec`,
        or its `script` parsed by the facade; its name and needs), in a worker thread (off
        the server's event loop)."""
        from ..skills import spec_of

        return await asyncio.to_thread(spec_of, fed, body)

    def reply(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.finish(json.dumps(data))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        self.set_header("Content-Type", "application/json")
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, ApiError):
            for name, value in exc.headers.items():  # set here: sending an error clears them
                self.set_header(name, value)
            reply = {"reason": exc.code, "message": exc.message}
        elif isinstance(exc, HTTPError):
            text = responses.get(status_code, "error")
            msg = exc.log_message % exc.args if exc.log_message and exc.args else exc.log_message
            reply = {"reason": (exc.reason or text).lower().replace(" ", "-"),
                     "message": msg or text}
        else:
            reply = {"reason": "internal-error", "message": "unhandled error (see server log)"}
        self.finish(json.dumps(reply))


def _field_names(model: type[BaseModel]) -> list[str]:
    """The names a body of `model` may give its fields by: each field's, or its aliases."""
    names: list[str] = []
    for name, info in model.model_fields.items():
        alias = info.validation_alias
        choices = getattr(alias, "choices", None) or ([alias] if isinstance(alias, str) else [])
        names += [c for c in choices if isinstance(c, str)] or [info.alias or name]
    return names


def _refuse_misspelt_fields(model: type[BaseModel], body: Any) -> None:
    """A body's key that is not a field but nearly one (`form` for `from`): BadInput naming
    both, not the field left at its default unsaid (before the model's checks, which would
    call the field it meant missing)."""
    if not isinstance(body, dict):
        return
    names = _field_names(model)
    for key in body:
        if isinstance(key, str) and key not in names and key not in model.model_fields \
                and difflib.get_close_matches(key, names, n=1, cutoff=0.75):
            raise BadInput(unknown_field(key, names, "the body"))


def _refuse_unknown_fields(model: type[BaseModel], body: Any) -> None:
    """A body's key that is no field of `model`: BadInput naming it and the accepted ones,
    never passed over (what it asked for would silently not happen)."""
    if not isinstance(body, dict):
        return
    names = _field_names(model)
    for key in body:
        if key not in names and key not in model.model_fields:
            raise BadInput(unknown_field(key, names, "the body"))


_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _no_text_at(data: Any) -> str | None:
    """Where a JSON body holds a string (a key or a value) with a lone surrogate, which no
    record, event or command can carry (storing it failed with a 500); None if nowhere.
    Walked without recursion (the body's nesting is bounded by its parser only)."""
    todo: list[tuple[str, Any]] = [("", data)]
    while todo:
        where, v = todo.pop()
        if isinstance(v, str) and _LONE_SURROGATE.search(v):
            return where or "value"
        if isinstance(v, dict):
            for k, x in v.items():
                if _LONE_SURROGATE.search(k):
                    return f"{where}.{ascii(k)}".lstrip(".") + " (a key)"
                todo.append((f"{where}.{k}".lstrip("."), x))
        elif isinstance(v, list):
            todo += [(f"{where}[{i}]", x) for i, x in enumerate(v)]
    return None


def _json_kind(value: Any) -> str:
    """What a JSON value is, in words: "an array", "null", "a string"..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    return {list: "an array", str: "a string"}.get(type(value), "a number")


class _KeyTwice(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(f"key {key!r} given twice")
        self.key = key


def _once_each(items: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict; _KeyTwice where a key comes twice."""
    out: dict[str, Any] = {}
    for key, value in items:
        if key in out:
            raise _KeyTwice(key)
        out[key] = value
    return out
