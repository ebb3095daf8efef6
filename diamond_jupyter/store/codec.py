"""How values are written to and read from the store: UTC ISO text, redacted JSON, rows
decoded into models. Every JSON blob and free text goes through `redact()`."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from ..log_lines import one_line_logger
from ..model import Event, Job, JobSpec, JobState, copied
from .frozen import frozen
from .model import TaskRecord, TransferRecord
from .seal import Sealer

log = one_line_logger("diamond_jupyter.store")

# -- secrets -----------------------------------------------------------------------------

REDACTED = "***"
_SECRET_KEY = re.compile(
    r"token(?!iz)|secret|passw(?:or)?d|passphrase|(?:^|_)(?:pass|pwd)(?:_|$)|api[_-]?key|"
    r"private[_-]?key|access[_-]?key|credential|authorization|cookie|(?:^|_)jwt(?:_|$)",
    re.I,
)
# Every pattern here runs in linear time on any text (job output and prompts are hostile):
# an assignment is found as `NAME=` (a whole word, one pass), its name checked apart, its
# value matched where it starts; a PEM block is found by its BEGIN and END lines, not by a
# lazy `.*?` that would rescan the text from every BEGIN.
# A NAME is a whole run of word characters and hyphens (the lookbehind: only where a run
# starts, so a long `a-a-a-...` is scanned once), then an optional closing quote and blanks,
# then = or : (`PASS=x`, `--password=x`, `"password": "x"`, `api_key = 'x'`, an HTTP header
# `Authorization: Bearer x` or `X-Api-Key: x`).
_ASSIGN_NAME = re.compile(r"(?<![A-Za-z0-9_-])([A-Za-z0-9_-]+)[\"']?[ \t]*[=:][ \t]*")
_SECRET_NAME = _SECRET_KEY  # a variable's name in text, as a key in data (DB_PASS, MYSQL_PWD)
# the value: quoted, or up to a blank, a shell operator or a quote; an HTTP authorization
# scheme before it (Bearer, Basic, ...) is kept, the credential after it is not
_ASSIGN_VALUE = re.compile(r"(?![0-9]+\b)(?:(?i:bearer|basic|token|digest|negotiate)[ \t]+)?"
                           r"(?:\"[^\"]*\"|'[^']*'|[^\s;&|\"']+)")
_SECRET_VALUE = re.compile(
    r"sk-ant-[\w-]{10,}|sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}"
    r"|glpat-[\w-]{20,}|xox[abposr]-[\w-]{10,}|AKIA[0-9A-Z]{16}"
    # Hugging Face and Google API keys, JSON web tokens: each only where a word starts (so
    # a run of "eyJeyJ..." is scanned once, not from each of its letters)
    r"|(?<![\w-])(?:hf_[A-Za-z0-9]{30,}|AIza[\w-]{35}"
    r"|eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,})"
)
# what each of _SECRET_VALUE's shapes starts with (a text holding none is not searched)
_SECRET_VALUE_STARTS = ("sk-", "gh", "github_pat_", "glpat-", "xox", "AKIA", "hf_", "AIza",
                        "eyJ")
# the password of a URL's user: https://me:PASSWORD@host keeps `https://me:` (its user)
_URL_PASSWORD = re.compile(r"(://[^\s/:@]+:)[^\s/@]+(?=@)")
_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
_PEM_END = re.compile(r"-----END [A-Z ]*PRIVATE KEY-----")


# What a secret's name holds (what _SECRET_KEY looks for, its anchors left out, `key` for
# each *_key), in ASCII lower case: a name of [A-Za-z0-9_-] that _SECRET_KEY finds holds one.
# A text whose runs of such characters holding one are neither assigned nor given as options
# is not scanned for assignments and options at all (a job's script names its `secret` file,
# no secret). Found with str.find in the text lowered (a regex tries every position).
_SECRET_HINTS = ("token", "secret", "pass", "pwd", "key", "credential", "authorization",
                 "cookie", "jwt")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_ASSIGNED = re.compile(r"[\"']?[ \t]*[=:]")  # what follows an assigned name (_ASSIGN_NAME)


def _secret_hints(text: str) -> list[int]:
    """Where each secret hint starts in `text` (its ASCII letters in either case), sorted."""
    low = text.lower() if text.isascii() else text.translate(_ASCII_LOWER)  # same length
    found = []
    for hint in _SECRET_HINTS:
        at = low.find(hint)
        while at >= 0:
            found.append(at)
            at = low.find(hint, at + len(hint))
    return sorted(found)


def _secret_named_runs(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each maximal run of name characters holding a secret hint, in order,
    each once; every character looked at a bounded number of times (hostile text)."""
    end, size = -1, len(text)
    for start in _secret_hints(text):
        if start < end:
            continue  # in the run just given
        end = start
        while start > 0 and text[start - 1] in _NAME_CHARS:
            start -= 1
        while end < size and text[end] in _NAME_CHARS:
            end += 1
        yield start, end


def _may_assign_secret(text: str) -> bool:
    """Whether a secret-looking name in `text` is followed by = or : (else no assignment is
    redacted: `_redact_assignments` leaves the text as it is)."""
    return any(_ASSIGNED.match(text, end) for _, end in _secret_named_runs(text))


def _may_give_secret_option(text: str) -> bool:
    """Whether a secret-looking name in `text` starts with '-' or follows `setenv` and
    blanks (else `_redact_spaced` leaves the text as it is)."""
    for start, _ in _secret_named_runs(text):
        if text[start] == "-":
            return True
        before = start
        while before > 0 and text[before - 1] in " \t":
            before -= 1
        if before < start and text[max(before - 6, 0):before] == "setenv":
            return True
    return False


def _redact_assignments(text: str) -> str:
    """`NAME=value` (or `NAME: value`) -> `NAME=***` where NAME looks secret (a number is
    kept: TOKENS=3; an authorization scheme too: `Authorization: Bearer ***`)."""
    return _redact_assignments_scanned(text) if _may_assign_secret(text) else text


def _redact_assignments_scanned(text: str) -> str:
    """`_redact_assignments`, every assignment of `text` looked at."""
    out, last = [], 0
    for m in _ASSIGN_NAME.finditer(text):
        if m.start() < last or not _SECRET_NAME.search(m.group(1)):
            continue
        v = _ASSIGN_VALUE.match(text, m.end())
        if v is None or v.end() == m.end():
            continue
        scheme = v.group().split()[0] if v.group()[:1] not in "\"'" and \
            len(v.group().split()) > 1 else ""
        out += [text[last:m.end()], f"{scheme} " if scheme else "", REDACTED]
        last = v.end()
    return "".join(out) + text[last:] if out else text


# Secrets given as command options, not as NAME=value: `curl -u me:PASS`, `sshpass -p PASS`,
# `mysql -pPASS`, `wget --http-password PASS` (an option is a word: after a blank). An option
# means a password only after its command (`-p` is a port to ssh, `-u` a user to docker), so
# the text is cut once into segments, each running from a command word to the next command
# word or shell separator (`;`, `&`, `|`, a newline not continued by a backslash), and each
# segment is searched for its own command's options. Segments never overlap: one pass.
_OPTION_COMMAND = re.compile(
    r"(?<![\w.-])(curl|wget|sshpass|mysql(?:dump|admin|import|check|sh)?|mariadb(?:-\w+)?)"
    r"(?![\w.-])")
_SEGMENT_END = re.compile(_OPTION_COMMAND.pattern + r"|(?<!\\)\n|[;&|]")
_OPTION_VALUE = r"(\"[^\"]*\"|'[^']*'|[^\s;&|\"']+)"
# curl's `-u USER:PASS`, `-uUSER:PASS`, `--user USER:PASS`, `--proxy-user`, `-U`: the
# password after the first colon goes, the user stays
_CURL_USER = re.compile(r"(?<!\S)(?:-[uU][ \t]*|--(?:proxy-)?user(?:=|[ \t]+))"
                        + _OPTION_VALUE)
# wget's passwords given apart from their option (`--password=PASS` is an assignment)
_WGET_PASSWORD = re.compile(r"(?<!\S)--(?:(?:http|ftp|proxy)-)?passw(?:or)?d[ \t]+"
                            + _OPTION_VALUE)
# mysql's password is only ever attached (`-pPASS`); `-p db` asks for it, `-P 3306` is a port
_MYSQL_PASSWORD = re.compile(r"(?<!\S)-p" + _OPTION_VALUE)
# sshpass's `-p PASS` or `-pPASS`, among its own options only (before the command it runs)
_SSHPASS_WORD = re.compile(r"[^\s;&|]+")


def _literal(value: str) -> bool:
    """Whether an option's value is written out (a variable such as $PASS is no secret)."""
    inner = value.strip("\"'")
    return bool(inner) and not inner.startswith("$") and inner != REDACTED


def _user_password(m: re.Match[str]) -> str:
    """`USER:PASS` (quoted or not) -> `USER:***`; a value without a colon is a user alone."""
    value = m.group(1)
    user, colon, password = value.partition(":")
    quote = value[0] if value[0] in "\"'" and value.endswith(value[0]) and len(value) > 1 else ""
    if not colon or not _literal(password):
        return m.group()
    return m.group()[:m.start(1) - m.start()] + user + ":" + REDACTED + quote


def _whole_value(m: re.Match[str]) -> str:
    if not _literal(m.group(1)):
        return m.group()
    return m.group()[:m.start(1) - m.start()] + REDACTED


def _sshpass_options(segment: str) -> str:
    """The value of sshpass's -p, looked for among the options before its command only."""
    words = _SSHPASS_WORD.finditer(segment)
    next(words)  # `sshpass` itself
    for word in words:
        if not word.group().startswith("-"):
            break  # the command sshpass runs: its own options are not sshpass's
        option = word.group()
        if option == "-p":
            value = next(words, None)
            if value is not None and _literal(value.group()):
                return segment[:value.start()] + REDACTED + segment[value.end():]
            return segment
        if option.startswith("-p"):
            if _literal(option[2:]):
                return segment[:word.start() + 2] + REDACTED + segment[word.end():]
            return segment
        if option in ("-f", "-d", "-P"):
            next(words, None)  # its value
    return segment


_OPTION_COMMANDS = ("curl", "wget", "sshpass", "mysql", "mariadb")  # (what it starts with)


def _redact_options(text: str) -> str:
    """Passwords given as command options (see _OPTION_COMMAND) -> ***."""
    if not any(command in text for command in _OPTION_COMMANDS):
        return text  # no such command: nothing looked for
    out, last, pos = [], 0, 0
    while (start := _OPTION_COMMAND.search(text, pos)) is not None:
        end = _SEGMENT_END.search(text, start.end())
        stop = end.start() if end is not None else len(text)
        segment, command = text[start.start():stop], start.group(1)
        if command == "curl":
            segment = _CURL_USER.sub(_user_password, segment)
        elif command == "wget":
            segment = _WGET_PASSWORD.sub(_whole_value, segment)
        elif command == "sshpass":
            segment = _sshpass_options(segment)
        else:  # the mysql and mariadb clients
            segment = _MYSQL_PASSWORD.sub(_whole_value, segment)
        out += [text[last:start.start()], segment]
        last = pos = stop
    return "".join(out) + text[last:] if out else text


# Any program's secret given as an option apart from its value (`--password PASS`,
# `--api-key KEY`, `-token KEY`), and csh's `setenv NAME VALUE`: the name is a whole word
# found in one pass (as _ASSIGN_NAME), checked apart, its value matched where it starts. A
# name that says the value is where the secret is kept (`--token-file PATH`) is no secret.
_SPACED_NAME = re.compile(r"(?<![\w-])(?:--?|setenv[ \t]+)([A-Za-z0-9_-]+)[ \t]+")
_NOT_THE_SECRET = re.compile(r"[_-](?:file|path|dir|env|var|name|type)$", re.I)


def _redact_spaced(text: str) -> str:
    """`--password PASS` or `setenv API_TOKEN KEY` -> the value is *** (a number, another
    option or a variable stays: `--max-tokens 100`, `--token -v`, `--token $TOKEN`)."""
    return _redact_spaced_scanned(text) if _may_give_secret_option(text) else text


def _redact_spaced_scanned(text: str) -> str:
    """`_redact_spaced`, every option of `text` looked at."""
    out, last = [], 0
    for m in _SPACED_NAME.finditer(text):
        name = m.group(1)
        if m.start() < last or not _SECRET_NAME.search(name) or _NOT_THE_SECRET.search(name):
            continue
        v = _ASSIGN_VALUE.match(text, m.end())
        if v is None or v.end() == m.end() or v.group()[:1] == "-" or not _literal(v.group()):
            continue
        out += [text[last:m.end()], REDACTED]
        last = v.end()
    return "".join(out) + text[last:] if out else text


def _redact_pem(text: str) -> str:
    """Each BEGIN ... PRIVATE KEY ... END block -> ***; the text is scanned once."""
    out, last, pos = [], 0, 0
    while (b := _PEM_BEGIN.search(text, pos)) is not None:
        e = _PEM_END.search(text, b.end())
        if e is None:
            break  # no END after this BEGIN: none after any later BEGIN either
        out += [text[last:b.start()], REDACTED]
        last = pos = e.end()
    return "".join(out) + text[last:] if out else text


# A secret the user keeps in the environment (ANTHROPIC_API_KEY, a Globus or slurmrestd
# token) may come back in any shape, e.g. quoted by a site's error: its value goes wherever it
# appears. Only values long enough not to be a common word (`DB_PASS=x` would hide every x).
MIN_ENVIRONMENT_SECRET = 12


def _secret_named(name: str | bytes) -> bool:
    said = os.fsdecode(name)
    return bool(_SECRET_KEY.search(said)) and not _NOT_THE_SECRET.search(said)


# The environment's names, as last seen, and which of them are secret-named: worked out again
# only when a name comes or goes (one snapshot, swapped whole: safe between threads).
_names_seen: tuple[frozenset[str | bytes], tuple[str | bytes, ...]] = (frozenset(), ())


def _held_secret_names(held: Mapping[Any, Any]) -> tuple[str | bytes, ...]:
    """The names of `held` (the environment) that look secret (ANTHROPIC_API_KEY, ...)."""
    global _names_seen
    seen, named = _names_seen
    if held.keys() != seen:  # one set comparison: no name decoded, no pattern run
        seen = frozenset(held.keys())
        named = tuple(name for name in seen if _secret_named(name))
        _names_seen = (seen, named)
    return named


@lru_cache(maxsize=8)
def _environment_secrets(values: tuple[str | bytes | None, ...]) -> re.Pattern[str] | None:
    """One pattern of the secret-named variables' values (None: none long enough)."""
    said = (os.fsdecode(v) for v in values if v is not None)
    longest_first = sorted({v for v in said if len(v) >= MIN_ENVIRONMENT_SECRET}, key=len,
                           reverse=True)
    return re.compile("|".join(map(re.escape, longest_first))) if longest_first else None


# Secret-named variables a sites file gives a site's commands (`env: {SLURM_JWT: ...}`): their
# values are redacted as the environment's are (sbatch may echo them in an error)
_GIVEN_SECRETS: tuple[str, ...] = ()


def hold_secret_values(named: Mapping[str, str]) -> None:
    """From here on, the values of the secret-named variables in `named` (a site's `env:`)
    are redacted wherever they appear, as the environment's own are."""
    global _GIVEN_SECRETS
    given = {str(v) for k, v in named.items() if _secret_named(str(k))}
    _GIVEN_SECRETS = tuple(sorted(given.union(_GIVEN_SECRETS)))


# Each slurmrestd site's last two tokens (site -> JWTs, newest last), held as they are
# fetched: a site (or what stands before it) may quote a token back in an error, also the
# one a request still in flight as it was renewed carried
_SITE_TOKENS: dict[str, tuple[str, ...]] = {}


def hold_site_token(site: str, token: str) -> None:
    """From here on (until `site` fetched two others), `token` is redacted wherever it
    appears, as the environment's secrets are."""
    held = tuple(t for t in _SITE_TOKENS.get(site, ()) if t != token)
    _SITE_TOKENS[site] = (*held, token)[-2:]


def redact_environment(text: str) -> str:
    """`text` without the values of secret-named environment variables (and of those a
    sites file gave a site: `hold_secret_values`). Their pattern is built once for each set
    of those values (a secret set or changed is seen at once), then only run over `text`:
    every stored string and shown error comes here."""
    found = _environment_pattern()
    return found.sub(REDACTED, text) if found is not None else text


def _environment_pattern() -> re.Pattern[str] | None:
    """The pattern of the secret values `redact_environment` removes, as they are now."""
    # the environment as the process holds it (undecoded: no copy made for each string)
    held = getattr(os.environ, "_data", os.environ)
    return _environment_secrets(tuple(map(held.get, _held_secret_names(held)))
                                + _GIVEN_SECRETS
                                + tuple(t for held in _SITE_TOKENS.values() for t in held))


def redact(value: Any, _secret: bool = False) -> Any:
    """Copy of a JSON-like value with secrets replaced by "***".

    Strings under a secret-looking key (TOKEN, PASSWORD, SECRET, API_KEY...) are replaced
    whole; numbers are kept (token counts are not secrets). Other strings lose `NAME=value`
    assignments to secret-looking names and well-known key shapes (sk-..., ghp_..., AKIA...),
    and the values of secret-named environment variables (`redact_environment`).
    """
    return _redacted(value, _secret, _environment_pattern())


def _redacted(value: Any, secret: bool, environment: re.Pattern[str] | None) -> Any:
    """`redact`, the environment's secrets being `environment` (looked up once a value)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            k = str(k)
            under = secret or _secret_key(k)
            # a leaf read here: no call for each of a spec's hundred values
            out[k] = v if v is None or type(v) in _KEPT_LEAVES else \
                _redacted_string(v, under, environment) if type(v) is str else \
                _redacted(v, under, environment)
        return out
    if isinstance(value, (list, tuple)):
        return [_redacted(v, secret, environment) for v in value]
    if isinstance(value, str):
        return _redacted_string(value, secret, environment)
    return value


_KEPT_LEAVES = frozenset({int, float, bool})  # numbers are kept (token counts are no secret)


def _redacted_string(value: str, secret: bool, environment: re.Pattern[str] | None) -> str:
    if secret:
        return REDACTED if value else value
    if len(value) > REDACTED_KEPT_CHARS:  # (a script) redacted afresh each time
        return _redacted_text.__wrapped__(value, environment)
    return _redacted_text(value, environment)


# the strings whose redaction is kept (with the environment's secrets as they were then): a
# workflow's thousand steps store the same field values, names and paths again and again, and
# every stored dict's keys are the same few (issue 17)
REDACTED_KEPT = 4096
REDACTED_KEPT_CHARS = 4096


@lru_cache(maxsize=REDACTED_KEPT)
def _secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key))


@lru_cache(maxsize=REDACTED_KEPT)
def _redacted_text(value: str, environment: re.Pattern[str] | None) -> str:
    """`value` without the secrets its own text shows (assignments, options, PEM keys, a
    URL's password, well-known key shapes) and those of `environment`: a pure function of
    both, so kept per string and pattern (a secret set in the environment makes a new
    pattern, and every string is redacted afresh)."""
    value = _redact_options(_redact_spaced(_redact_assignments(_redact_pem(value))))
    value = _URL_PASSWORD.sub(lambda m: m.group(1) + REDACTED, value)
    if any(start in value for start in _SECRET_VALUE_STARTS):
        value = _SECRET_VALUE.sub(REDACTED, value)
    return environment.sub(REDACTED, value) if environment is not None else value


def to_ts(dt: datetime | None) -> str | None:
    """Fixed-width UTC ISO text, so that text order is time order."""
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).isoformat(timespec="microseconds")


def from_ts(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def to_js(value: Any) -> str | None:
    if value is None:
        return None
    return redacted_js(value)[0]


def redacted_js(value: Any) -> tuple[str, Any]:
    """(`to_js(value)`, the redacted value it holds): the value as `from_js` reads that
    text back (fresh lists and dicts of JSON's types), with no read of it."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    plain = redact(to_jsonable_python(value))
    return json.dumps(plain, separators=(",", ":")), plain


def to_js_sealed(value: Any, sealer: Sealer) -> tuple[str | None, str | None]:
    """(the redacted JSON the store shows, the whole JSON sealed where redaction changed
    it, else None): what runs again is what was given, secrets included (store/seal.py)."""
    if value is None:
        return None, None
    # made JSON-able once, for both texts
    plain = value.model_dump(mode="json") if isinstance(value, BaseModel) \
        else to_jsonable_python(value)
    whole = json.dumps(plain, separators=(",", ":"))
    shown = json.dumps(redact(plain), separators=(",", ":"))
    return shown, (sealer.seal(whole) if shown != whole else None)


def from_js(text: str | None, default: Any = None) -> Any:
    return json.loads(text) if text else default


# Jobs read for estimates (calibration, runtimes, the model's own error) kept by what their
# row holds: each of a workflow's submits reads the same few hundred newest jobs, and decoding
# and validating them again took most of its time (500 steps: minutes). Keyed by the stored
# text itself, a row changed on disk (by us or anyone) is decoded and validated again.
SHARED_READS = 2048
_JOB_COLUMNS = ("id", "site", "native_id", "name", "state", "token", "submitted_at",
                "started_at", "ended_at", "exit_code", "reason", "workdir", "stdout_path",
                "stderr_path", "spec", "placement", "origin", "reused_by", "hedge_group",
                "tasks")
_shared_jobs: OrderedDict[tuple[Any, ...], Job] = OrderedDict()
_shared_lock = threading.Lock()


# The specs this process wrote whole (redaction changed nothing), kept by their stored text:
# a read of such a row (a bind returns its job; the monitor and the estimates read it shared)
# copies the spec written instead of validating its text again. The text is that spec's own
# JSON, so the spec read back is the one written.
WRITTEN_SPECS_KEPT = 1024
_written_specs: OrderedDict[str, JobSpec] = OrderedDict()


def spec_js_sealed(spec: JobSpec | None, sealer: Sealer) -> tuple[str | None, str | None]:
    """`to_js_sealed` of a job's spec, the spec kept (a copy) for the reads of its text."""
    shown, sealed = to_js_sealed(spec, sealer)
    if shown is not None and sealed is None and type(spec) is JobSpec:
        kept = copied(spec)
        with _shared_lock:
            _written_specs[shown] = kept
            _written_specs.move_to_end(shown)
            while len(_written_specs) > WRITTEN_SPECS_KEPT:
                _written_specs.popitem(last=False)
    return shown, sealed


def _written_spec(text: str) -> JobSpec | None:
    with _shared_lock:
        return _written_specs.get(text)


def _read_spec(text: str) -> JobSpec:
    """The spec a row's `text` holds, of its own (to change)."""
    if (kept := _written_spec(text)) is not None:
        return copied(kept)
    return JobSpec.model_validate_json(text, context={"stored": True})


@lru_cache(maxsize=SHARED_READS)
def _shared_spec(text: str) -> JobSpec:
    if (kept := _written_spec(text)) is not None:
        return frozen(kept)  # (frozen copies every model, list and dict it holds)
    return frozen(JobSpec.model_validate_json(text, context={"stored": True}))


def forget_shared_reads() -> None:
    """Drop every job and spec `row_to_job(row, shared=True)` kept, and the specs kept as
    written."""
    with _shared_lock:
        _shared_jobs.clear()
        _written_specs.clear()
    _shared_spec.cache_clear()


def row_to_job_fields(row: sqlite3.Row) -> Job:
    """The job a row holds without its spec (None): for the checks of a write that read
    its id, state, times and exit code only (no spec decoded and validated for them)."""
    return _decoded_job(row, shared_spec=False, with_spec=False)


def row_to_job(row: sqlite3.Row, shared: bool = False) -> Job:
    """The job a row holds. `shared` (for readers that never change what they get): the
    object an earlier read of the same row content returned, or a job whose spec is shared
    with other rows of the same spec text, read-only to any depth (store/frozen.py); else a
    job of its own."""
    if not shared:
        return _decoded_job(row, shared_spec=False)
    key = tuple(row[c] for c in _JOB_COLUMNS)
    with _shared_lock:
        job = _shared_jobs.get(key)
        if job is not None:
            _shared_jobs.move_to_end(key)
            return job
    job = frozen(_decoded_job(row, shared_spec=True))
    with _shared_lock:
        _shared_jobs[key] = job
        while len(_shared_jobs) > SHARED_READS:
            _shared_jobs.popitem(last=False)
    return job


def _decoded_job(row: sqlite3.Row, shared_spec: bool, with_spec: bool = True) -> Job:
    spec = None
    if with_spec and row["spec"]:
        try:
            spec = _shared_spec(row["spec"]) if shared_spec else _read_spec(row["spec"])
        except ValidationError as e:  # an old/foreign spec must not break listing
            log.warning("job %s: stored spec no longer validates (%s); kept on disk", row["id"], e)
    try:
        state = JobState(row["state"])
    except ValueError:
        state = JobState.UNKNOWN
    return Job(
        id=row["id"], site=row["site"], native_id=row["native_id"], name=row["name"],
        state=state, token=row["token"], submitted_at=from_ts(row["submitted_at"]),
        started_at=from_ts(row["started_at"]), ended_at=from_ts(row["ended_at"]),
        exit_code=row["exit_code"], reason=row["reason"], workdir=row["workdir"],
        stdout_path=row["stdout_path"], stderr_path=row["stderr_path"], spec=spec,
        placement=from_js(row["placement"]), origin=from_js(row["origin"]),
        reused_by=row["reused_by"], hedge_group=row["hedge_group"],
        tasks=_task_states(row["tasks"]),
    )


def _task_states(text: str | None) -> dict[str, JobState] | None:
    """A job array's stored task states; a state this version does not know is left out."""
    stored = from_js(text)
    if not isinstance(stored, dict):
        return None
    return {str(k): JobState(v) for k, v in stored.items() if v in JobState.__members__}


def row_to_event(row: sqlite3.Row) -> Event:
    return Event(seq=row["seq"], kind=row["kind"], at=from_ts(row["at"]), job_id=row["job_id"],
                 site=row["site"], data=from_js(row["data"], {}))


def row_to_transfer(row: sqlite3.Row) -> TransferRecord:
    d = dict(row)
    d["data"] = from_js(d["data"], {})
    return TransferRecord.model_validate(d)


def row_to_task(row: sqlite3.Row) -> TaskRecord:
    d = dict(row)
    d["data"], d["waiting_on"] = from_js(d["data"], {}), from_js(d["waiting_on"], [])
    return TaskRecord.model_validate(d)
