"""The sites file: which clusters exist and how to reach them (YAML)."""

from __future__ import annotations

import datetime
import difflib
import json
import math
import os
import re
import shlex
import stat
import typing
import unicodedata
from collections.abc import Collection
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from .digits import ascii_digits
from .model import BadInput, refuse_boolean_number, software_name_problem, time_value
from .strict_yaml import (
    NumberNotAsWritten,
    alias_hint,
    boolean_word,
    line_of,
    node_at,
    odd_blank_hint,
    strict_read,
    structure_hint,
    tab_hint,
)

SCHEDULERS = ("slurm", "pbs", "lsf", "flux", "sge")
HOUR_S, DAY_S, WEEK_S = 3600, 86400, 7 * 86400  # the most a seconds setting may be
MAX_RECONNECT_ATTEMPTS = 10  # transport.reconnect_attempts
MAX_SSH_SESSIONS = 256  # transport.max_sessions: channels (and threads) one SSH connection runs
MAX_SFTP_CHANNELS = 16  # transport.sftp_channels: SFTP requests one SSH connection has at once
DEFAULT_SFTP_CHANNELS = 4  # transport.sftp_channels not given
# other names centers use for them (lower case); torque also sets pbs flavor torque
SCHEDULER_ALIASES = {"pbspro": "pbs", "pbs_pro": "pbs", "pbs-pro": "pbs", "openpbs": "pbs",
                     "torque": "pbs", "gridengine": "sge", "grid_engine": "sge",
                     "grid-engine": "sge", "uge": "sge", "age": "sge", "sge": "sge",
                     "openlava": "lsf", "spectrum-lsf": "lsf", "flux-framework": "flux",
                     # the product names centers write: Son of Grid Engine, Univa, Open Grid
                     # Scheduler, Altair's and Sun's/Oracle's Grid Engine (one qsub dialect)
                     "son-of-grid-engine": "sge", "soge": "sge", "univa": "sge",
                     "univa-grid-engine": "sge", "open-grid-scheduler": "sge", "ogs": "sge",
                     "altair-grid-engine": "sge", "sun-grid-engine": "sge",
                     "oracle-grid-engine": "sge", "oge": "sge", "ibm-spectrum-lsf": "lsf",
                     "platform-lsf": "lsf", "ibm-lsf": "lsf", "pbs-professional": "pbs",
                     "altair-pbs-pro": "pbs", "altair-pbs-professional": "pbs",
                     "slurm-workload-manager": "slurm", "flux-core": "flux"}
# the programs each scheduler's commands run, whose paths `commands` may set
SCHEDULER_PROGRAMS = {
    "slurm": ("sbatch", "squeue", "sacct", "scancel", "scontrol", "sinfo", "sprio", "sshare",
              "srun", "salloc", "sacctmgr", "sstat", "sreport", "sdiag"),
    "pbs": ("qsub", "qstat", "qdel", "qrls", "qhold", "qalter", "pbsnodes", "qmgr",
            "tracejob", "sacct", "scontrol", "squeue", "qselect", "pbs_rstat"),
    "lsf": ("bsub", "bjobs", "bkill", "bresume", "bstop", "bqueues", "bhosts", "lshosts",
            "bhist", "bacct", "lsid", "lsload", "bmgroup", "bugroup", "bhpart", "blimits",
            "lsinfo"),
    "flux": ("flux",),
    "sge": ("qsub", "qstat", "qdel", "qrls", "qhold", "qalter", "qhost", "qconf", "qacct",
            "qmod"),
}
RESERVED_SITE_NAMES = ("auto",)  # `--site auto` chooses a site
MAX_SITES_FILE_BYTES = 4 << 20
MAX_LOG_TAIL_BYTES = 1 << 30
DEFAULT_FETCH_MAX_FILE_BYTES = 16 << 30  # 16 GiB


def _one_line(value: str) -> str:
    """A value that reaches a command line, a rendered script or a message: one printable
    line (a newline in a partition would end a directive and start a shell line)."""
    bad = next((c for c in value if not c.isprintable()), None)
    if bad is not None:
        raise ValueError(f"must be one line of printable text (it holds {bad!r})")
    return value


# what no partition, account or server name holds, and a shell reads (the faces refuse it
# in a job's partition too): `gpu;rm` in a sites file reached every job's directives
_NAME_SHELL_SYNTAX = re.compile(r"[;|&$`'\"<>()\\]")


def _word(value: str) -> str:
    """A partition, account or similar name: one printable word, not an option, without
    shell syntax (Grid Engine's wildcard queue lists, `*@node01`, `a,b`, are names)."""
    _one_line(value)
    if not value or value.startswith("-") or any(c.isspace() for c in value):
        raise ValueError("must be one word, not starting with - (e.g. debug)")
    if odd := _NAME_SHELL_SYNTAX.search(value):
        raise ValueError(f"{value!r} holds {odd.group()!r}, which no scheduler's partition, "
                         "account or server name holds (it is shell syntax): give the name "
                         "as the scheduler lists it (letters, digits, _ . -, e.g. debug)")
    return value


# Slurm's accounting database keeps an account's name as a MySQL tinytext (255 bytes); the
# other schedulers take no longer name a center gives its projects
ACCOUNT_MAX_BYTES = 255


def _account(value: str) -> str:
    """A `default_account`: one word (`_word`) no longer than a scheduler stores."""
    if (size := len(value.encode())) > ACCOUNT_MAX_BYTES:
        raise ValueError(f"{value[:20]!r}... is {size} bytes long, longer than any "
                         f"scheduler keeps an account's name (Slurm's accounting database "
                         f"stores at most {ACCOUNT_MAX_BYTES}): give the account as "
                         "`sacctmgr show account` or your center lists it, at most "
                         f"{ACCOUNT_MAX_BYTES} characters")
    return value


_SITE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$")


def _foreign_letter(value: str) -> str:
    """The note naming the first letter of `value` outside A-Z and a-z (`ß`, `é`, `ク`):
    job ids and paths carry site names in ASCII; '' when every letter is ASCII."""
    letter = next((c for c in value if not c.isascii() and c.isalpha()), None)
    if letter is None:
        return ""
    return (f" (it holds {letter!r}, {unicodedata.name(letter, 'a letter')}: the letters of "
            "a site name are A-Z and a-z only)")


def _site_name(value: str) -> str:
    if not _SITE_NAME.match(value):
        plain = unicodedata.normalize("NFKC", value)
        spaced = " (it starts or ends with a space: remove it)" \
            if value != value.strip() and _SITE_NAME.match(value.strip()) else \
            f" (it is written in look-alike letters: write {plain!r})" \
            if plain != value and _SITE_NAME.match(plain) else _foreign_letter(value)
        raise ValueError(f"{_printable(repr(value))} is not a site name{spaced}: 1 to 63 "
                         "letters, digits, _ . -, not starting with . or - (it becomes part "
                         "of job ids SITE:ID and of paths)")
    if value.lower() in RESERVED_SITE_NAMES:
        raise ValueError(f"{value!r} is reserved (`--site auto` chooses a site); name the "
                         "site otherwise")
    return value


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _env_name(value: str) -> str:
    if not _ENV_NAME.match(value):
        raise ValueError(f"{_printable(repr(value))} is not an environment variable name "
                         "(letters, digits and _, not starting with a digit)")
    return value


_HOST = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_IPV6 = re.compile(r"^[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*(%[A-Za-z0-9_.-]+)?$")
_USER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@\\-]*\$?$")


def _no_variable(value: str, what: str) -> None:
    """A host or login name is literal: `$HPC_HOST`, `${HOST:-x}` would be read as a name
    (or its `:-` as a port); refused saying where variables are read."""
    if "$" in value:
        raise ValueError(f"{_printable(repr(value))}: a {what} {_WRITTEN_OUT}")


_WRITTEN_OUT = ("is written out, not read from a variable (only the paths of local files, "
                "key_file, cert_file, known_hosts, ssh_config, token_file and store, expand "
                "$VAR and ${VAR:-default})")


def _host(value: str) -> str:
    _no_variable(value, "host")
    if _IPV6.match(value) and re.search(r"%25[A-Za-z]", value):
        raise ValueError(f"{_printable(repr(value))}: %25 is how a URL writes the % before an "
                         "IPv6 address's zone; here the zone follows a plain % "
                         f"({_printable(value.replace('%25', '%', 1))})")
    if not (_HOST.match(value) or _IPV6.match(value)):
        raise ValueError(f"{_printable(repr(value))} is not a host: a host name, an IP "
                         "address or a Host alias of ssh_config (letters, digits, . _ -, not "
                         "starting with -), optionally USER@HOST:PORT or [IPv6]:PORT")
    return value


def _user(value: str) -> str:
    _no_variable(value, "login name")
    if not _USER.match(value):
        raise ValueError(f"{_printable(repr(value))} is not a login name (letters, digits, "
                         ". _ -, not starting with -)")
    return value


def parse_hop(text: str) -> tuple[str | None, str, int | None]:
    """`[ssh://][USER@]HOST[:PORT]` or `[USER@][IPv6][:PORT]` -> (user, host, port); a bare
    IPv6 address has no port. Raises ValueError saying what is accepted."""
    hop = text.strip()
    if hop.startswith("ssh://"):  # ssh's URI form, `ssh://ana@gw:2222/` too
        hop = hop.removeprefix("ssh://").removesuffix("/")
    if m := re.match(r"([A-Za-z][A-Za-z0-9+.-]*)://", hop):  # `https://login.example.org`
        rest = hop[m.end():].split("/")[0]
        raise ValueError(f"{_printable(repr(text))} is a {m.group(1)}:// URL: a host is its "
                         f"name ({_printable(rest) or 'login.example.org'}); a slurmrestd "
                         "door's URL goes in url:, with kind: slurmrestd")
    _no_variable(hop, "host")
    login, slash, path = hop.partition("/")
    login = login.removesuffix(":")
    if slash and login and not re.search(r"\s", hop) and parse_hop(login):
        # scp's `alice@login:/scratch/alice`, `ssh://alice@login:2222/home/alice`
        raise ValueError(f"{_printable(repr(text))}: /{_printable(path)} is a path, which a "
                         f"host does not hold: write the login alone ({_printable(login)}), "
                         "and the directory jobs run in as the site's workdir")
    user, at, hostport = hop.rpartition("@")
    if at and not user:  # `@login`: a user left out was dropped unsaid (the login's own used)
        raise ValueError(f"{_printable(repr(text))}: nothing before '@': write USER@HOST, or "
                         "the host alone for ssh_config's user (or the local one)")
    if at and not hostport.partition(":")[0]:  # `alice@`: the host itself left out
        raise ValueError(f"{_printable(repr(text))}: nothing after '@': write USER@HOST")
    port: str | None = None
    if hostport.startswith("["):
        host, _, rest = hostport[1:].partition("]")
        if rest and not rest.startswith(":"):
            raise ValueError(f"{_printable(repr(text))}: expected [IPv6]:PORT")
        port = rest[1:] if rest else None
    elif hostport.count(":") == 1:
        host, port = hostport.split(":")
    else:
        host = hostport
    if port is not None and not (port.isascii() and ascii_digits(port) and 0 < int(port) < 65536):
        raise ValueError(f"{_printable(repr(text))}: the port must be a number from 1 to "
                         "65535")
    return (_user(user) if user else None), _host(host), (int(port) if port else None)


def _hop_list(value: Any) -> Any:
    """`proxy_jump: [gw1, gw2]` (a YAML list of hops, in order): the chain gw1,gw2."""
    if isinstance(value, list) and value and all(isinstance(h, str) for h in value):
        return ",".join(h.strip() for h in value)
    if isinstance(value, list):
        raise ValueError("proxy_jump is the jump hosts in order, as text (gw1,gw2) or a list "
                         "of host names ([gw1, gw2])")
    return value


def _jump_chain(value: str) -> str:
    """`host`, `user@host:port`, `a,b` (hops in order) or `none`; never an ssh option."""
    _one_line(value)
    if value.strip().lower() != "none":
        hops = [h for h in value.split(",")]
        if any(not h.strip() for h in hops):
            raise ValueError(f"{_printable(repr(value))}: an empty hop (hops are separated "
                             "by single commas: bastion,login)")
        for h in hops:
            parse_hop(h)
    return value


# $NAME, ${NAME}, and the shell's defaults ${NAME:-WORD} (unset or empty) and ${NAME-WORD}
# (unset), WORD holding no `$` or `}`
_PATH_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^${}]*))?\}"
                       r"|([A-Za-z_][A-Za-z0-9_]*))")


def _expand_vars(value: str) -> str:
    """`$HOME/.ssh/id` or `${XDG_RUNTIME_DIR}/jwt`: each variable from this process's
    environment (as ssh_config's IdentityFile reads `${VAR}`), `${VAR:-WORD}` WORD where VAR
    is unset or empty and `${VAR-WORD}` where it is unset, as the shell reads them; one that
    is not set, or a `$` that starts no variable, is refused naming it (it was taken as a
    directory literally named `$HOME` beside the sites file)."""
    if "$" not in value:
        return value

    def one(m: re.Match[str]) -> str:
        var = m.group(1) or m.group(4)
        got = os.environ.get(var)
        if m.group(2) == ":-" and not got or m.group(2) == "-" and got is None:
            return m.group(3)
        if not got:
            raise ValueError(f"{_printable(repr(value))} names ${var}, which is not set in "
                             "this environment (set it, or write the path out)")
        return got

    out = _PATH_VAR.sub(one, value)
    if "$" in _PATH_VAR.sub("", value):
        raise ValueError(f"{_printable(repr(value))}: a $ that starts no variable (write "
                         "$NAME or ${NAME}, letters, digits and _)")
    return out


def _config_path(value: str, info: ValidationInfo) -> str:
    """A local file named in the sites file: a relative path is relative to the sites
    file's directory (not to wherever the command runs); `~` is the user's home; `$VAR`
    and `${VAR}` come from the environment."""
    _one_line(value)
    if not value:
        raise ValueError("must be a path, not empty")
    if value[0].isspace() and value.strip():  # ` /k/id` is no absolute path
        stripped = value.strip()
        read_as = "a name beside the sites file" if (info.context or {}).get("base") \
            else "a name in the current directory"
        meant = f"which makes it {read_as}, not {_printable(stripped)}" \
            if stripped.startswith(("/", "~", "$")) else "part of the file's name as written"
        raise ValueError(f"{_printable(repr(value))}: the path starts with a blank, {meant}: "
                         "remove the blank")
    if os.sep == "/":
        _windows_path(value, "~/dir/file, or dir/file beside the sites file")
    if token := _SSH_TOKEN.search(value):  # `IdentityFile ~/.ssh/id_%r@%h` copied over
        where = ("; or leave it out and keep the line in ssh_config, which is read with its "
                 "tokens" if info.field_name in ("key_file", "cert_file", "known_hosts")
                 else "")
        raise ValueError(f"{_printable(repr(value))}: {token.group()} is a token of "
                         "ssh_config, which the sites file does not expand (it would be part "
                         f"of the file's name, as written): write the path out{where}")
    # `$HOME/x` is `~/x` (each user's own home, as a shared file means it), not this
    # process's $HOME written out: both then pass or fail the same checks
    value = re.sub(r"^\$(HOME\b|\{HOME\})(?=/|$)", "~", value)
    value = _expand_vars(value)
    if value.startswith("~") and (owner := value[1:].split("/", 1)[0]):
        import pwd

        try:  # `~ana/.ssh/id`: Path.expanduser raised RuntimeError where ana is no user
            pwd.getpwnam(owner)
        except KeyError:
            raise ValueError(f"{_printable(repr(value))}: ~{_printable(owner)} is the home of "
                             f"a user {_printable(owner)}, and this machine has none (write "
                             "~/... for your own home, or the path out)") from None
    base = (info.context or {}).get("base") if info.context else None
    if base is not None and not value.startswith(("/", "~")):
        return str(Path(base) / value)
    return value


# ssh_config's tokens in file names (%d home, %h host, %r remote user, %u local user...)
_SSH_TOKEN = re.compile(r"%[CdhijkLlnprTu]")
_WORKDIR_VAR = re.compile(r"^\$(\{)?([A-Za-z_][A-Za-z0-9_]*)(?(1)\})(/.*)?$")


def workdir_variable(workdir: str) -> str | None:
    """VAR of a `$VAR/path` workdir (resolved on the site), else None."""
    m = _WORKDIR_VAR.match(workdir)
    return m.group(2) if m else None


def _windows_path(value: str, instead: str) -> None:
    """Refuse `C:\\Users\\me\\x` (a path copied from Windows): on a POSIX system it is one
    odd name in the current directory."""
    if _WINDOWS_PATH.match(value):
        odd = "backslashes" if value.startswith("\\\\") else "a colon and backslashes" \
            if "\\" in value else "a drive letter's colon"
        raise ValueError(f"{_printable(repr(value))} is a Windows path; paths here are POSIX "
                         f"ones (/ between names), where this is one odd name with {odd} in "
                         f"it: write it with / (e.g. {instead})")
    if m := _WINDOWS_VARIABLE.search(value):
        # the home's own names are `~`; any other is the POSIX variable of that name
        meant = "~" if m.group(1).upper() in ("USERPROFILE", "HOMEPATH", "HOME") \
            else "$" + m.group(1)
        raise ValueError(f"{_printable(repr(value))}: {_printable(m.group())} is a Windows "
                         "variable, which is not expanded here (it would be a directory named "
                         f"{_printable(m.group())}): write {_printable(meant)} (e.g. "
                         f"{_printable(value[:m.start()] + meant + value[m.end():])})")


_WINDOWS_PATH = re.compile(r"^[A-Za-z]:[\\/]|^\\\\")
_WINDOWS_VARIABLE = re.compile(r"%([A-Za-z_][A-Za-z0-9_]*)%")


def _workdir(value: str) -> str:
    """`~/x`, `/x`, a relative path (in the home), `$HOME/x` (the same as `~/x`) or
    `$VAR/x` with VAR set in the login's environment on the site (e.g. $SCRATCH)."""
    _one_line(value)
    if not value.strip():
        raise ValueError("must be a directory, e.g. ~/.diamond")
    _windows_path(value, "/scratch/me/diamond or ~/.diamond")
    m = _WORKDIR_VAR.match(value)
    if value.count("$") != (1 if m else 0):
        login = re.search(r"\$\{?(USER|LOGNAME)\b\}?", value)
        hint = (f"; {login.group()} is the login's name: write it out (e.g. "
                f"{_printable(value[:login.start()])}NAME{_printable(value[login.end():])}), "
                "or start from a variable the site sets per user ($SCRATCH/diamond)"
                if login and not m else "")
        raise ValueError(f"{_printable(repr(value))}: one variable is accepted, at the start "
                         f"(e.g. $SCRATCH/diamond or ${{SCRATCH}}/diamond){hint}")
    if not value.startswith("/") and ".." in value.split("/"):
        raise ValueError(f"{_printable(repr(value))} climbs with '..' from where it starts (a "
                         "relative workdir is taken in the home), as a job's working "
                         "directory may not; give an absolute path (e.g. /scratch/me/diamond)")
    if m and m.group(2) == "HOME":
        return "~" + (m.group(3) or "")
    if value.startswith("~") and value != "~" and not value.startswith("~/"):
        raise ValueError(f"{_printable(repr(value))}: ~user paths are not supported (use "
                         "~/path or an absolute path)")
    return value


def _command_path(value: str) -> str:
    _one_line(value)
    # no '=': `env ... NAME=VALUE` sets a variable (LD_PRELOAD=/x.so) and runs what follows
    if not re.match(r"^[A-Za-z0-9_./~+][A-Za-z0-9_./+@%,:-]*$", value) or \
            value.startswith("~") and not value.startswith("~/"):
        raise ValueError(f"{_printable(repr(value))} is not a program path: one path or "
                         "program name, no arguments, spaces, '=' or shell syntax (e.g. "
                         "/opt/slurm/bin/sbatch; a wrapper script takes the arguments)")
    return value


_SHELL_OPERATORS = {"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1", "|&"}


def _as_argv(value: Any) -> Any:
    """`scontrol token lifespan=3600` written as one string: split as a shell would (it
    is run without one). A pipe, a redirection, a `$VAR` or `~` would reach the program as
    a word of its own (`cut` given to scontrol as an argument): refused, saying how."""
    if not isinstance(value, str):
        return value
    words = shlex.split(value)
    odd = next((w for w in words if w in _SHELL_OPERATORS or _SHELL_WORD.search(w)
                or re.match(r"[0-9]*(?:>|<)", w)), None)  # a redirection: `2>/dev/null`
    if odd is not None:
        raise ValueError(f"{_printable(repr(value))} runs {words[0]} without a shell, so "
                         f"{odd!r} would reach it as written; for a pipeline or variables "
                         f"write it as a list, [bash, -c, {_printable(repr(value))}] (the "
                         "token may be printed bare or as SLURM_JWT=...)")
    return words


Line = Annotated[str, AfterValidator(_one_line)]
Word = Annotated[str, AfterValidator(_word)]
SiteName = Annotated[str, AfterValidator(_site_name)]
EnvName = Annotated[str, AfterValidator(_env_name)]
Host = Annotated[str, AfterValidator(_one_line), AfterValidator(_host)]
User = Annotated[str, AfterValidator(_one_line), AfterValidator(_user)]
Port = Annotated[int, Field(ge=1, le=65535)]
ConfigPath = Annotated[str, AfterValidator(_config_path)]
ProgramPath = Annotated[str, AfterValidator(_command_path)]
_SHELL_WORD = re.compile(r"\$(?:\{[^}]*\}|\(|[A-Za-z_][A-Za-z0-9_]*)|`|^~(?:/|$)")


def _env_value(value: str) -> str:
    """An environment value reaches the command as written (no shell reads it): `$HOME/x`,
    `${SCRATCH}`, `$(cmd)` or `~/x` would arrive literally (SLURM_CONF=$HOME/slurm.conf named
    a file called `$HOME/slurm.conf`), so they are refused with the way to get them."""
    m = _SHELL_WORD.search(value)
    if m:
        raise ValueError(f"{_printable(repr(value))} is passed as written: no shell expands "
                         f"{m.group()!r} in an env value; write the value out, or export it "
                         "in the preamble (export NAME=$HOME/...), which is shell")
    return value


Env = dict[EnvName, Annotated[str, AfterValidator(_one_line), AfterValidator(_env_value)]]


class _Cfg(BaseModel):
    # no unknown keys (a typo is an error, not a silent default); no inf or nan
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_boolean_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """`port: true` or `command_timeout_s: yes` (YAML booleans) were read as 1."""
        return refuse_boolean_number(cls, value, info.field_name)


SSH_ONLY_KEYS = ("host", "port", "user", "key_file", "cert_file", "known_hosts", "ssh_config",
                 "proxy_jump", "sftp_channels")
REST_ONLY_KEYS = ("url", "token_command", "token_file")


class TransportConfig(_Cfg):
    kind: Literal["ssh", "local", "slurmrestd"] = "ssh"
    # a host name, an IP address or a Host alias from ~/.ssh/config; USER@HOST:PORT and
    # [IPv6]:PORT are split into user and port here
    host: Host | None = None
    port: Port | None = None
    user: User | None = None
    key_file: ConfigPath | None = None
    # an OpenSSH certificate for key_file (`ssh-keygen -s`, e.g. from sshproxy), offered first
    cert_file: ConfigPath | None = None
    # the site's known_hosts file, read before those ssh reads; first-use keys go here
    known_hosts: ConfigPath | None = None
    trust_on_first_use: bool = False
    use_agent: bool = True
    ssh_config: ConfigPath | None = None  # default ~/.ssh/config
    # overrides ssh_config's ProxyJump: `bastion`, `user@bastion:2222`, `a,b` or `none`
    proxy_jump: Annotated[str, BeforeValidator(_hop_list), AfterValidator(_jump_chain)] | \
        None = None
    # seconds have an upper bound: past about 9e9 s a socket's timeout overflows (a connect
    # ended in an OverflowError, not a SiteError), and no login takes an hour to answer
    keepalive_s: int = Field(default=30, ge=0, le=DAY_S)
    connect_timeout_s: float = Field(default=10.0, gt=0, le=HOUR_S)
    # A command given no timeout of its own fails (SiteError) after this long.
    command_timeout_s: float = Field(default=300.0, gt=0, le=WEEK_S)
    # A command printing more than this on stdout or on stderr (or a slurmrestd reply body,
    # or a file read whole) is stopped and fails (SiteError): a hostile site, or a queue of
    # many huge job names, cannot make the engine hold unbounded memory.
    max_output_bytes: int = Field(default=64 << 20, ge=4096, strict=True)  # bytes
    # sshd MaxSessions: channels per connection (each command in flight holds one, and a
    # thread); at most MAX_SSH_SESSIONS
    max_sessions: int = Field(default=10, ge=2, le=MAX_SSH_SESSIONS)
    # SFTP channels the connection asks on at once (a fetch's directory listings and link
    # checks; paramiko answers one request at a time per channel): 1 is one at a time; each
    # past the first holds a session slot while open, and half the slots stay for commands.
    # None (not given): DEFAULT_SFTP_CHANNELS, fewer where max_sessions leaves no room; so a
    # written-out configuration (every default in it) reads back, a local site's included
    sftp_channels: int | None = None
    # connects tried (backoff) per call; bounded: a site that is down fails a call in
    # minutes, not never (each try waits up to connect_timeout_s and a pause of up to 8 s)
    reconnect_attempts: int = Field(default=3, ge=1, le=MAX_RECONNECT_ATTEMPTS)
    # slurmrestd: the API's base URL (http[s]://HOST:PORT), its OpenAPI plugin version, and
    # where the user's JWT comes from: a command that prints it (`scontrol token`, as
    # `SLURM_JWT=...` or bare), or a file holding it; neither is ever logged or stored.
    url: str | None = Field(default=None, pattern=r"^https?://[^\s/]+(/[^\s]*)?$")
    api_version: str = Field(default="v0.0.38", pattern=r"^v0\.0\.[0-9]+$")
    token_command: Annotated[list[Line], BeforeValidator(_as_argv),
                             Field(min_length=1)] | None = None
    token_file: ConfigPath | None = None
    token_refresh_s: float = Field(default=60.0, ge=0, le=DAY_S)  # renewed this long before expiry

    @model_validator(mode="before")
    @classmethod
    def _split_host(cls, data: Any) -> Any:
        """`alice@login.example.org:2222` or `[2001:db8::1]:2222` in host: user and port
        taken out (given twice, they must agree)."""
        if not isinstance(data, dict) or not isinstance(data.get("host"), str):
            return data
        try:
            user, host, port = parse_hop(_one_line(data["host"]))
        except ValueError as e:
            raise ValueError(f"host: {e}") from None
        data = {**data, "host": host}
        for key, value in (("user", user), ("port", port)):
            if value is None:
                continue
            given = data.get(key)
            same = str(given) == str(value) or isinstance(given, (int, float)) and \
                not isinstance(given, bool) and given == value
            if given is not None and not same:
                raise ValueError(f"host gives {key} {value} and {key} gives {given}: give it "
                                 "once")
            data[key] = value
        return data

    @field_validator("sftp_channels")
    @classmethod
    def _sftp_channels_in_range(cls, value: int | None) -> int | None:
        if value is not None and not 1 <= value <= MAX_SFTP_CHANNELS:
            raise ValueError(f"{value} is not a number of SFTP channels: give 1 to "
                             f"{MAX_SFTP_CHANNELS} (default {DEFAULT_SFTP_CHANNELS}; 1 asks "
                             "one request at a time)")
        return value

    @model_validator(mode="after")
    def _sftp_channels_fit_the_sessions(self) -> TransportConfig:
        """Extra SFTP channels take session slots only while half of them stay for commands:
        more than that would never open, so asking for them is refused, not ignored."""
        most = max(1, (self.max_sessions - 1) // 2)
        if self.sftp_channels is not None and self.sftp_channels > most:
            raise ValueError(f"sftp_channels: {self.sftp_channels} needs max_sessions "
                             f"{2 * self.sftp_channels + 1} or more (each SFTP channel past "
                             "the first holds a session slot, and half of them stay for "
                             f"commands); with max_sessions {self.max_sessions}, give 1 to "
                             f"{most}")
        return self

    @model_validator(mode="after")
    def _keys_fit_the_kind(self) -> TransportConfig:
        """A key another kind of transport reads is a mistake, not a default: `kind: local`
        with a host would run everything on this machine."""
        if self.token_command and self.token_file:  # the command was used, the file not
            raise ValueError("token_command and token_file: give one (the token comes from "
                             "one of them)")
        only = {"ssh": SSH_ONLY_KEYS, "slurmrestd": REST_ONLY_KEYS}
        for kind, keys in only.items():
            if self.kind == kind:
                continue
            given = [k for k in keys if k in self.model_fields_set
                     and getattr(self, k) is not None]
            if given and not (kind == "ssh" and self.kind == "slurmrestd"
                              and set(given) <= {"user"}):
                raise ValueError(f"{', '.join(given)}: for a transport of kind {kind}, not "
                                 f"{self.kind}")
        return self

    @field_validator("url")
    @classmethod
    def _no_secret_in_url(cls, url: str | None) -> str | None:
        if url is not None and (m := re.search(r"/slurm(?:db)?/v0\.0\.[0-9]+(?:/|$)", url)):
            # the requests add /slurm/VERSION/...: a URL copied with it asked for it twice
            base = url[:m.start()] or url
            raise ValueError(f"url is the API's base ({base}); its version goes in "
                             f"api_version: {m.group().strip('/').split('/')[1]}")
        if url is not None and "@" in url.split("/")[2]:
            # the value is not shown: it may hold a password or token
            raise ValueError("url must not carry a user or password (give user:, and the "
                             "token through token_command or token_file)")
        if url is not None and (url.partition("?")[1] or url.partition("#")[1]):
            # `?token=...`: a secret in the sites file, then in every request line logged
            raise ValueError("url must be the API's base address, without a query or fragment "
                             "(it is not shown: it may hold a token; give the token through "
                             "token_command or token_file)")
        return url


class ClusterConfig(_Cfg):
    """One cluster behind a center's login: its name and the variables that point the
    scheduler's clients at it (e.g. SLURM_CONF)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    env: Env = Field(default_factory=dict)


class DiscoveryConfig(_Cfg):
    """Live discovery of what a site has (scheduler features and GPUs, modules, container
    runtimes, MPI). The site's `metadata` adds to what is found, or replaces it key by key
    with `override`."""

    enabled: bool = True
    ttl_s: float = Field(default=600.0, ge=0, le=WEEK_S)
    override: bool = False
    clusters: list[ClusterConfig] = Field(default_factory=list)  # default: the site alone

    @model_validator(mode="after")
    def _clusters_named_once(self) -> DiscoveryConfig:
        """Each cluster once: a second entry of one name replaced the first's variables."""
        seen: dict[str, int] = {}
        for n, c in enumerate(self.clusters):
            if (first := seen.get(c.name.lower())) is not None:
                raise ValueError(f"clusters: {c.name!r} is given twice (clusters[{first}] "
                                 f"and clusters[{n}]); name each cluster once, with all its env")
            seen[c.name.lower()] = n
        return self


def _scheduler_name(value: Any) -> Any:
    """`SLURM`, `PBSPro`, `OpenPBS`, `Grid Engine`... read as the scheduler they are."""
    if not isinstance(value, str):
        return value
    key = "-".join(value.strip().lower().split())
    return SCHEDULER_ALIASES.get(key, key)


# the sites file's `metadata` keys the engine reads (capabilities, placement); a key spelt
# near one of them, or a common other name for it, is a mistake that would be ignored
METADATA_KEYS = ("architecture", "features", "gpu_models", "software", "container_runtimes",
                 "mpi", "pmi", "groups", "bandwidth_mbps", "door_to", "timezone")
METADATA_SYNONYMS = {"arch": "architecture", "modules": "software", "module": "software",
                     "runtimes": "container_runtimes", "containers": "container_runtimes",
                     "constraints": "features", "gpu_types": "gpu_models", "tz": "timezone",
                     "time_zone": "timezone"}


def _check_names(key: str, value: Any) -> None:
    """A `metadata` list of names (architectures, features, GPU models, runtimes, MPI
    stacks, groups): one string (names separated by commas) or a list of names; a truth
    value, a date or a nested list was turned into a name no site has, or crashed placement
    (`features: true`)."""
    if value is None:
        return
    if isinstance(value, str):
        return
    if isinstance(value, (list, tuple, dict)):  # a mapping: its keys are the names
        for n, entry in enumerate(value, 1):
            if isinstance(entry, bool) or not isinstance(entry, (str, int)):
                raise ValueError(f"{key} entry {n}: {_printable(repr(entry))[:60]} is not a "
                                 f"name (write {key}: [a, b], or one string 'a, b')")
        return
    raise ValueError(f"{key}: a list of names ({key}: [a, b], or one string 'a, b'), not "
                     f"{_printable(repr(value))[:60]}")


# the container runtimes a job's `--container` is matched against (discovery's names, and
# charliecloud, which its `ch-run` is also called)
CONTAINER_RUNTIMES = ("apptainer", "singularity", "podman", "docker", "enroot", "ch-run",
                      "charliecloud", "shifter", "podman-hpc", "sarus")


def known_zone(name: str) -> ZoneInfo | None:
    """The zone of IANA name `name` in this machine's zone database; None for any other
    text: one naming no zone, a path (`../../etc/localtime`), a folder of zones (`Europe`)
    or a name longer than a file name may be (those two were an OSError naming the zone
    database's own path, from a sites file or a site reporting its zone)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def _check_zone(name: Any) -> None:
    """`metadata.timezone`: an IANA zone name this machine's zone database knows; a typo
    (`Europe/Berln`) was ignored and the cluster's times read in the engine's zone, hours
    off. Unset (`timezone:` with nothing after it) stays unset."""
    if name is None:
        return
    accepted = "an IANA time zone name such as Europe/Berlin, Asia/Tokyo or UTC"
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"timezone: {_printable(repr(name))[:60]} is not a time zone name "
                         f"(accepted: {accepted}; leave timezone out for the engine's zone)")
    if known_zone(name) is not None:
        return
    zones = available_timezones()
    by_case = {z.lower(): z for z in zones}
    near = by_case.get(name.strip().lower()) or next(iter(difflib.get_close_matches(
        name.strip(), sorted(zones), n=1, cutoff=0.8)), None)
    hint = f": did you mean {near}?" if near else ""
    raise ValueError(f"timezone: {_printable(repr(name))[:60]} is not a time zone name this "
                     f"machine knows{hint} (accepted: {accepted})")


def _check_runtimes(value: Any) -> None:
    """`metadata.container_runtimes`: a name a letter away from a known runtime (`dockr`) is
    refused naming it; the site never matched a job asking for docker. Other names are kept
    as written (a runtime this list does not know)."""
    names = value.split(",") if isinstance(value, str) else value
    for name in names if isinstance(names, (list, tuple, dict)) else []:
        if not isinstance(name, str) or name.strip().lower() in CONTAINER_RUNTIMES:
            continue
        near = difflib.get_close_matches(name.strip().lower(), CONTAINER_RUNTIMES, n=1,
                                         cutoff=0.8)
        if near:
            raise ValueError(f"container_runtimes: {_printable(repr(name.strip()))}: did you mean "
                             f"{near[0]}? (known: {', '.join(CONTAINER_RUNTIMES)}; another "
                             "name is kept as written)")


def _check_software(software: Any) -> None:
    """`metadata.software`: each entry a module name as discovered ones are checked (they
    reach the job's `module load` lines and the notes on a terminal)."""
    if software is None:
        return
    if isinstance(software, str):
        entries: list[Any] = [e for e in software.split(",") if e.strip()]
    elif isinstance(software, dict):
        entries = list(software)
    elif isinstance(software, list):
        entries = software
    else:
        raise ValueError("software: a list of module names (or one string of names "
                         f"separated by commas), not {type(software).__name__}")
    for n, entry in enumerate(entries, 1):
        if (why := software_name_problem(entry)) is not None:
            raise ValueError(f"software entry {n}: {_printable(why)}")


class SiteConfig(_Cfg):
    name: SiteName
    scheduler: Annotated[Literal["slurm", "pbs", "lsf", "flux", "sge"],
                         BeforeValidator(_scheduler_name)] = "slurm"
    # the scheduler's variant where its commands differ: pbs "pro" (default), "torque",
    # or "slurm" (Slurm's own PBS/Torque wrappers, slurm-wlm-torque)
    flavor: str | None = None
    transport: TransportConfig = Field(default_factory=TransportConfig)
    # the file door of a site whose transport moves no files (slurmrestd): how its logs and
    # result files are reached, e.g. SFTP to the same cluster's login node (kind ssh, host
    # keys checked as for an SSH site) or `local` where the server shares its file system
    files: TransportConfig | None = None
    # chosen by `--site auto`; false for an entry used only when named, e.g. a second door
    # to a cluster listed already (which says so with `metadata.door_to`: its jobs are then
    # not counted twice in the borrowed calibration pool)
    auto: bool = True
    # command paths, e.g. {"sbatch": "/opt/slurm/bin/sbatch"}: one path each, no arguments
    # (a relative path or ~/path is in the login's home)
    commands: dict[str, ProgramPath] = Field(default_factory=dict)
    # shell lines run before every scheduler command (module loads): the one piece of the
    # sites file run as shell text, trusted as the admin wrote it
    preamble: str = ""
    env: Env = Field(default_factory=dict)
    # remote dir for scripts, job outputs and event files: ~/x, /x, x (in the home),
    # $HOME/x or $VAR/x (VAR from the login's environment on the site, e.g. $SCRATCH)
    workdir: Annotated[str, AfterValidator(_workdir)] = "~/.diamond"
    default_partition: Word | None = None
    default_account: Annotated[Word, AfterValidator(_account)] | None = None
    allowed_partitions: Annotated[list[Word], Field(min_length=1)] | None = None
    globus_collection: str | None = Field(
        default=None, pattern=r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}"
                              r"-[0-9a-fA-F]{12}$")
    globus_path_map: dict[Line, Line] = Field(default_factory=dict)
    charge_factor: float = Field(default=1.0, gt=0)
    speed_factor: float = Field(default=1.0, gt=0)  # >1: jobs run faster than the walltime suggests
    jobcomp: bool = False  # Slurm: accounting from jobcomp/filetxt (`sacct -c`)
    # PBS: the longest job name the server takes (older Torque and PBS 12: 15); a name with
    # the engine's token (`NAME.dmd-` and 12 hex digits) longer than this is cut to it and
    # the token travels in the job's environment instead (`-v DIAMOND_TOKEN=...`)
    max_job_name: int | None = Field(default=None, ge=1, le=4096)
    # PBS: the names of the site's own server (PBS_SERVER, its host names): a job's
    # `-q queue@NAME` naming one of them runs here; any other server refuses it here
    pbs_servers: Annotated[list[Word], Field(min_length=1)] | None = None
    # Grid Engine: the consumable complex the site counts GPUs in (`qconf -sc`), where it
    # is not `gpu` (`gpus`, `ngpus`, `cuda`, ...): a job's GPUs are asked by it
    gpu_complex: str | None = None
    hedge: bool = True  # may take copies of hedged submissions (`submit --hedge N`)
    metadata: dict[str, Any] = Field(default_factory=dict)  # architecture, software, ...
    discovery: DiscoveryConfig = Field(default_factory=DiscoveryConfig)

    @model_validator(mode="before")
    @classmethod
    def _torque_is_pbs(cls, data: Any) -> Any:
        """`scheduler: torque` is pbs with flavor torque; `flavor: Torque`, `PBSPro`,
        `OpenPBS` are the flavors they name (they were refused as unknown flavors)."""
        if isinstance(data, dict) and isinstance(data.get("flavor"), str):
            word = "-".join(data["flavor"].strip().lower().split())
            flavor = {"pbspro": "pro", "pbs-pro": "pro", "pbs_pro": "pro", "openpbs": "pro",
                      "pbs-professional": "pro", "altair-pbs-pro": "pro",
                      "slurm-wlm-torque": "slurm"}.get(word, word)
            if flavor in ("pro", "torque", "slurm"):
                data = {**data, "flavor": flavor}
        if isinstance(data, dict) and isinstance(data.get("scheduler"), str) and \
                data["scheduler"].strip().lower() == "torque" and data.get("flavor") is None:
            data = {**data, "flavor": "torque"}
        return data

    @field_validator("metadata")
    @classmethod
    def _metadata_bandwidth(cls, value: dict[str, Any]) -> dict[str, Any]:
        """`bandwidth_mbps` (megabits/s, what placement divides by) as a positive number, or
        with a unit (`10 Gbps`, `1.25 GB/s`) converted; a key spelt near it is refused (it
        was ignored, or `10 Gbps` and 0 crashed placement)."""
        for key in value:
            if key != "bandwidth_mbps" and isinstance(key, str) and \
                    difflib.get_close_matches(key.lower(), ["bandwidth_mbps"], cutoff=0.6):
                raise ValueError(f"{_printable(key)}: did you mean bandwidth_mbps? "
                                 "(megabits per second, e.g. bandwidth_mbps: 10000 or "
                                 "bandwidth_mbps: 10 Gbps)")
        if "bandwidth_mbps" in value:
            value = {**value, "bandwidth_mbps": bandwidth_mbps(value["bandwidth_mbps"])}
        for key in value:
            if not isinstance(key, str) or key in METADATA_KEYS:
                continue
            near = METADATA_SYNONYMS.get(key.lower()) or next(iter(difflib.get_close_matches(
                key.lower(), METADATA_KEYS, n=1, cutoff=0.8)), None)
            if near is not None:
                raise ValueError(f"{_printable(key)}: did you mean {near}? (the keys placement "
                                 f"reads: {', '.join(METADATA_KEYS)}; another key is kept "
                                 "as a note and read by nothing)")
        _check_software(value.get("software"))
        _check_zone(value.get("timezone"))
        for key in ("architecture", "features", "gpu_models", "container_runtimes", "mpi",
                    "pmi", "groups"):
            _check_names(key, value.get(key))
        _check_runtimes(value.get("container_runtimes"))
        if isinstance(value.get("groups"), str):  # `groups: users, hpc`: placement reads a list
            value = {**value, "groups": [g.strip() for g in value["groups"].split(",")
                                         if g.strip()]}
        return value

    def metadata_zone(self) -> ZoneInfo | None:
        """The cluster's time zone its entry gives (`metadata.timezone`, an IANA name such
        as Europe/Berlin), in which its scheduler's times without a zone are read; None when
        unset (those times are then read in the engine's zone). A name that is not a zone
        is refused when the sites file is read; one this machine stopped knowing since
        reads as unset."""
        name = self.metadata.get("timezone")
        return known_zone(name) if isinstance(name, str) and name else None

    @field_validator("preamble")
    @classmethod
    def _preamble_is_text(cls, value: str) -> str:
        if "\0" in value:
            raise ValueError("must not hold a NUL byte")
        half = next((c for c in value if "\ud800" <= c <= "\udfff"), None)
        if half is not None:  # a YAML "\ud800": no script can carry it (a crash at submit)
            raise ValueError(f"holds {half!r}, half of a character (a lone surrogate), which "
                             "is not text: write the character itself")
        return value

    @model_validator(mode="after")
    def _transport_fits(self) -> SiteConfig:
        t = self.transport
        if t.kind == "slurmrestd":
            if self.scheduler != "slurm":
                raise ValueError("a slurmrestd transport needs scheduler: slurm")
            if not t.url:
                raise ValueError("a slurmrestd transport needs url (http://HOST:PORT)")
            if not (t.token_command or t.token_file):
                raise ValueError("a slurmrestd transport needs token_command or token_file")
            if not self.workdir.startswith("/"):
                raise ValueError("a slurmrestd site needs an absolute workdir (the REST API "
                                 "cannot tell the home directory)")
        if self.files is not None:
            if t.kind != "slurmrestd":
                raise ValueError("files (a file door) is for a slurmrestd site; a site over "
                                 f"{t.kind} moves its files itself")
            if self.files.kind not in ("ssh", "local"):
                raise ValueError(f"files.kind must be ssh or local, not {self.files.kind}")
            if self.files.kind == "ssh" and not self.files.host:
                raise ValueError("files over ssh needs a host (files: {host: login...})")
        if self.globus_path_map and not self.globus_collection:
            raise ValueError("globus_path_map needs globus_collection (the site's Globus "
                             "collection id, a UUID such as 6c54cade-bde5-45c1-bdea-"
                             "f4bd71dba2cc): without it no transfer uses Globus, and the map "
                             "would be ignored")
        if self.flavor is not None and self.scheduler != "pbs":
            raise ValueError(f"flavor is for scheduler pbs, not {self.scheduler}")
        if self.flavor not in (None, "pro", "torque", "slurm"):
            raise ValueError(f"unknown pbs flavor {self.flavor!r} (accepted: pro, torque, "
                             "slurm)")
        if self.max_job_name is not None and (self.scheduler != "pbs"
                                              or self.flavor == "slurm"):
            raise ValueError("max_job_name is for PBS Pro and Torque servers (scheduler: pbs, "
                             f"flavor pro or torque), not {self.scheduler}"
                             + (f" flavor {self.flavor}" if self.flavor else "")
                             + ": the others keep the engine's token in the job's comment "
                             "or take longer names")
        if self.gpu_complex is not None:
            if self.scheduler != "sge":
                raise ValueError(f"gpu_complex is for scheduler sge (the Grid Engine complex "
                                 f"a job's GPUs are asked by), not {self.scheduler}")
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", self.gpu_complex):
                raise ValueError(f"gpu_complex {_printable(self.gpu_complex)} is not a "
                                 "complex name (letters, digits and _, not starting with a "
                                 "digit, as `qconf -sc` lists them; e.g. gpu, ngpus, cuda)")
        if self.jobcomp and self.scheduler != "slurm" and self.flavor != "slurm":
            raise ValueError("jobcomp is for scheduler slurm, or pbs with flavor slurm (their "
                             "accounting from the jobcomp/filetxt plugin, `sacct -c`), not "
                             f"{self.scheduler}" + (f" flavor {self.flavor}" if self.flavor
                                                    else "") + ": leave it out")
        if self.pbs_servers is not None and self.scheduler != "pbs":
            raise ValueError(f"pbs_servers is for scheduler pbs (the names a job's "
                             f"`-q queue@SERVER` may give this site's server), not "
                             f"{self.scheduler}")
        programs = SCHEDULER_PROGRAMS[self.scheduler]
        for prog in self.commands:
            if prog not in programs:
                near = difflib.get_close_matches(prog, programs, n=1)
                hint = f"did you mean {near[0]}? " if near else ""
                raise ValueError(f"commands: {_printable(repr(prog))} is not a "
                                 f"{self.scheduler} command ({hint}accepted: "
                                 f"{', '.join(programs)})")
        allowed = self.allowed_partitions
        # (a Grid Engine entry may be a queue list, `all.q,short.q`)
        if allowed and self.scheduler != "sge" and \
                (joined := next((p for p in allowed if "," in p), None)):
            items = ", ".join(x for x in joined.split(",") if x)
            raise ValueError(f"allowed_partitions: {joined!r} names several partitions in "
                             f"one item, and is no partition's name: list each as its own "
                             f"item ([{items}])")
        if allowed and (twice := next((p for n, p in enumerate(allowed)
                                       if p in allowed[:n]), None)):
            raise ValueError(f"allowed_partitions: {twice!r} is listed twice; list each "
                             "partition once")
        if allowed and self.default_partition and self.default_partition not in allowed:
            raise ValueError(f"default_partition {self.default_partition!r} is not in "
                             f"allowed_partitions ({', '.join(allowed)})")
        return self

    @model_serializer(mode="wrap")
    def _as_a_sites_file_takes_it(self, handler: SerializerFunctionWrapHandler) -> Any:
        """The entry without `allowed_partitions` or `pbs_servers` when unset: a sites file
        refuses either written with no value, so a dump written to one reads back as it
        was."""
        data = handler(self)
        for key in ("allowed_partitions", "pbs_servers"):
            if getattr(self, key) is None and isinstance(data, dict):
                data.pop(key, None)
        return data


_RATE = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]([+-]?[0-9]+))?\s*(?:([kKmMgGtT])(i?)"
                   r"(bps|bits?/s|b/s|Bps|B/s|bytes?/s))?")
_PREFIX_POWER = {"k": 1, "m": 2, "g": 3, "t": 4}


def bandwidth_mbps(given: Any) -> float:
    """Megabits per second from a number (already Mbit/s) or a rate with its unit: `10 Gbps`,
    `10 Gbit/s`, `1.25 GB/s` (bytes: x8), `100 MiB/s` (binary); ValueError saying what is
    accepted."""
    accepted = ("bandwidth_mbps: expected a positive number of megabits per second, "
                "or a rate with its unit (10 Gbps, 10 Gbit/s, 1.25 GB/s, 100 MiB/s)")
    mbps: float | None = None
    if isinstance(given, (int, float)) and not isinstance(given, bool):
        mbps = float(given)
    elif isinstance(given, str) and (m := _RATE.fullmatch(given.strip())):
        number, exp, prefix, binary, unit = m.groups()
        mbps = float(f"{number}e{exp or 0}")  # 1e999 is inf (refused below), not an error
        if prefix:
            power = _PREFIX_POWER[prefix.lower()]
            bits = mbps * (1024 if binary else 1000) ** power * (8 if "B" in unit
                                                                 or "byte" in unit else 1)
            mbps = bits / 1e6
    if mbps is None or not 0 < mbps < float("inf"):
        raise ValueError(f"{accepted}, not {_printable(repr(given))}")
    return mbps


class TransferPolicy(_Cfg):
    """Retries of a copy (stage-in, stage-out, transfers) that lost its connection: each try
    resumes where the last one stopped; the waits between tries double up to the maximum."""

    attempts: int = Field(default=6, ge=1)  # tries in all, the first one included
    backoff_s: float = Field(default=1.0, ge=0, le=HOUR_S)  # wait before the second try
    backoff_max_s: float = Field(default=30.0, ge=0, le=DAY_S)

    @model_validator(mode="after")
    def _max_not_below_first(self) -> TransferPolicy:
        """The longest wait is at least the first: `backoff_s: 3600` alone waits an hour
        (the default longest, 30 s, cut it to 30 s without a word); a backoff_max_s given
        below backoff_s is refused (which one was meant is unknown)."""
        if self.backoff_max_s >= self.backoff_s:
            return self
        if "backoff_max_s" not in self.model_fields_set:
            self.backoff_max_s = self.backoff_s
            return self
        raise ValueError(f"backoff_max_s {self.backoff_max_s:g} is below backoff_s "
                         f"{self.backoff_s:g}: the waits start at backoff_s and double "
                         "up to backoff_max_s; give backoff_max_s at least "
                         f"{self.backoff_s:g} (or a smaller backoff_s)")


class FederationConfig(_Cfg):
    sites: list[SiteConfig] = Field(default_factory=list)
    store: ConfigPath | None = None  # SQLite path; default in the user's data dir
    # The most of a log file `logs` returns, whatever the number of lines asked for (one
    # progress-bar "line" can be many megabytes).
    log_tail_bytes: int = Field(1 << 20, gt=0, le=MAX_LOG_TAIL_BYTES)
    # The largest result file a fetch copies, by its size (a sparse file's holes are written
    # out whole at the destination); a larger one is skipped and named. A fetch may ask for
    # another bound (`diamond fetch --max-size`).
    fetch_max_file_bytes: int = Field(DEFAULT_FETCH_MAX_FILE_BYTES, gt=0)
    transfers: TransferPolicy = Field(default_factory=TransferPolicy)
    # How long a submit whose answer was lost is looked for by its token before its intent
    # is closed as never submitted (the scheduler may queue it a little later).
    unsure_submit_settle_s: float = Field(30.0, gt=0, le=HOUR_S)

    @model_validator(mode="before")
    @classmethod
    def _drop_anchor_holders(cls, data: Any) -> Any:
        """Top-level `x-NAME:` keys hold YAML anchors shared by sites (`x-login: &login`,
        then `transport: {<<: *login, host: ...}`) and are otherwise ignored."""
        if isinstance(data, dict):
            return {k: v for k, v in data.items()
                    if not (isinstance(k, str) and k.startswith("x-"))}
        return data

    @field_validator("store")
    @classmethod
    def _store_is_a_file(cls, value: str | None) -> str | None:
        """The store is one SQLite file: a directory (`store: ~/diamond/`) failed only when
        the engine first opened it."""
        if value is not None and (value.endswith("/") or Path(value).expanduser().is_dir()):
            raise ValueError(f"{_printable(repr(value))} is a directory; the store is one "
                             "SQLite file: name the file in it (e.g. "
                             f"{_printable(value.rstrip('/') or '')}/store.sqlite3)")
        return value

    @model_validator(mode="after")
    def _names_differ(self) -> FederationConfig:
        """Site names are told apart whatever their case (paths on a case-insensitive file
        system, `--site Alpha` typed for alpha)."""
        seen: dict[str, int] = {}
        for i, s in enumerate(self.sites):
            j = seen.setdefault(s.name.casefold(), i)
            if j == i:
                continue
            other = self.sites[j].name
            if other == s.name:
                raise ValueError(f"site name {s.name!r} is used twice (sites[{j}] and "
                                 f"sites[{i}]); each site needs its own name")
            raise ValueError(f"site names {other!r} (sites[{j}]) and {s.name!r} (sites[{i}]) "
                             "differ only in case; each site needs its own name")
        return self

    def site(self, name: str) -> SiteConfig:
        for s in self.sites:
            if s.name == name:
                return s
        raise BadInput(unknown_site_message(name, [s.name for s in self.sites]))


def _folded(name: str) -> str:
    """`name` as a person meant it: full-width letters as ASCII, blanks around it dropped,
    case folded."""
    import unicodedata

    return unicodedata.normalize("NFKC", name).strip().casefold()


def closest_site(name: str, known: list[str]) -> str | None:
    """The known site `name` was probably meant for: the same name in another case (`Alpha`
    for alpha; names differ by more than case), in full-width letters or with blanks around
    it (`ａｌｐｈａ` from an input method, a no-break space from a web page), else a near
    spelling (`alpah`)."""
    fold = _folded(name)
    same = [k for k in known if k.casefold() == fold]
    if same:
        return same[0]
    near = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
    return near[0] if near else None


_SITE_AND_MORE = re.compile(r"([^:/@\s]+)([:/@])([^:/@\s]+)")


def site_and_partition(name: str, known: Collection[str]) -> tuple[str, str] | None:
    """(site, partition) when `name` is not a site but a known site with a partition or
    queue written into it: `alpha:gpu`, `alpha/gpu`, or PBS's `gpu@alpha`; else None."""
    m = _SITE_AND_MORE.fullmatch(name.strip())
    if m is None or name in known:
        return None
    first, sep, last = m.groups()
    if sep in ":/" and first in known:
        return first, last
    if sep == "@" and last in known:
        return last, first
    return None


MAX_SHOWN_SITE = 80  # an unknown site name longer than this is shown cut in its error


def unknown_site_message(name: str, known: list[str], what: str = "unknown site") -> str:
    """`unknown site 'Alpha' (did you mean alpha? known: alpha, beta)`."""
    meant = closest_site(name, known)
    hint = f"did you mean {meant}? " if meant else ""
    parts = [p.strip() for p in name.split(",")] if "," in name else []
    if parts and all(p in known for p in parts):  # `--site a,b`: one site is asked for
        hint = ("one site is named here, not a list: name one of them, or give site auto "
                f"with a hedge of {len(set(parts))} for copies on the best sites; ")
    elif _folded(name) == "auto" and "auto" not in known:  # `AUTO`, `Auto`, `auto `, `ａuto`
        hint = "did you mean auto, written in lower case alone, for placement to choose? "
    elif "auto" in parts and all(p in known or p == "auto" for p in parts):
        others = [p for p in dict.fromkeys(parts) if p != "auto"]  # `--site auto,alpha`
        hint = ("auto lets placement choose among every site and is given alone: give site "
                f"auto, or name the one site ({' or '.join(others) or 'a known site'}); ")
    # a pasted blob is named by its start and length, not echoed whole
    shown = repr(name) if len(name) <= MAX_SHOWN_SITE else \
        f"{name[:MAX_SHOWN_SITE // 2]!r}... ({len(name)} characters)"
    return (f"{what} {_printable(shown)} ({hint}known: "
            f"{', '.join(known) or 'none configured'})")


def ssh_file_problem(t: TransportConfig, *, missing_home_files: bool = True) -> str | None:
    """`key_file: PATH does not exist` and the like for an SSH door's local files, else None:
    a missing key or known_hosts file would surface later as a puzzling authentication or
    host key failure, and a private key others can read is refused, as OpenSSH refuses it.
    Without `missing_home_files`, a missing `~/...` file is let pass (a file shared by
    several users names each one's own: checked when the site connects)."""
    def missing(key: str, value: str | None) -> str | None:
        if value is None:
            return None
        path = Path(value).expanduser()
        if path.is_file() or not (missing_home_files or not _home_unseen(value)):
            return None
        said = f"{key}: {path} {'is not a file' if path.exists() else 'does not exist'}"
        if value != value.rstrip():  # the blank is part of the name: shown, and said
            said = (f"{key}: {_printable(repr(str(path)))} "
                    f"{'is not a file' if path.exists() else 'does not exist'} (the path "
                    "ends with a blank, part of the file's name as written: remove it)")
        return said

    problem = missing("key_file", t.key_file)
    key = Path(t.key_file).expanduser() if t.key_file else None
    if problem is None and key is not None and key.is_file():
        st = key.stat()
        mode = st.st_mode & 0o777
        if (kind := _not_a_private_key(key)) is not None:
            problem = f"key_file: {key} {kind}"
        elif st.st_uid != os.geteuid():  # readable here only by root, or by a mode refused next
            problem = (f"key_file: {key} belongs to another user ({_owner(st.st_uid)}): a "
                       "private key logs in as the user it was made for; give a key of your "
                       "own (`ssh-keygen -t ed25519`, its public half added to the site)")
        elif mode & 0o077:
            problem = (f"key_file: {key} can be read by other users (mode {mode:03o}); "
                       f"`chmod 600 {shlex.quote(str(key))}` (OpenSSH refuses such a key too)")
    problem = problem or missing("cert_file", t.cert_file) or missing("ssh_config",
                                                                       t.ssh_config)
    if problem is None and t.ssh_config:
        problem = ssh_config_problem(Path(t.ssh_config).expanduser())
        problem = problem and f"ssh_config: {problem}"
    if not t.trust_on_first_use:  # with it, the file is made at the first connection
        problem = problem or missing("known_hosts", t.known_hosts)
    return problem


def _home_unseen(value: str) -> bool:
    """Whether a path is in a home this process cannot look in: `~/...` (in a shared file,
    each user's own), or `~ana/...` where ana's home is closed to us; `~ana/...` in a home
    we can search is one path, checked as any other."""
    if not value.startswith("~"):
        return False
    if value == "~" or value.startswith("~/"):
        return True
    return not os.access(Path(value.split("/", 1)[0]).expanduser(), os.X_OK)


# how the files people take for a private key begin: an OpenSSH public key or certificate
# line (`ssh-ed25519 AAAA...`, `ecdsa-sha2-...`, `sk-...`), RFC 4716's public key, PuTTY's
_PUBLIC_KEY = re.compile(rb"^(?:ssh-|ecdsa-sha2-|sk-)[A-Za-z0-9@.+-]+ AAAA|^---- BEGIN SSH2 "
                         rb"PUBLIC KEY ----")
_PUTTY_KEY = re.compile(rb"^PuTTY-User-Key-File-[0-9]+:")


def _not_a_private_key(path: Path) -> str | None:
    """Why key file `path` is no private key the SSH library reads, from its first bytes:
    a public key (`~/.ssh/id_ed25519.pub`, the half that goes on the site) or a PuTTY key
    (`.ppk`); None otherwise (the key itself is read when the site connects)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64).lstrip(b"\xef\xbb\xbf")
    except OSError:
        return None
    if _PUBLIC_KEY.match(head):
        private = path.with_suffix("") if path.suffix == ".pub" else None
        meant = f" ({private}?)" if private is not None and private.is_file() else ""
        return ("is a public key (the half that goes on the site, in ~/.ssh/authorized_keys)"
                f": key_file is its private half{meant}")
    if _PUTTY_KEY.match(head):
        return ("is a PuTTY key (.ppk), which the SSH library does not read: convert it "
                f"(`puttygen {shlex.quote(str(path))} -O private-openssh -o ~/.ssh/id_site`) and "
                "name that file")
    return None


def _owner(uid: int) -> str:
    """`uid 1001, bob` (the name when the password database has it)."""
    import pwd

    try:
        return f"uid {uid}, {pwd.getpwuid(uid).pw_name}"
    except KeyError:
        return f"uid {uid}"


def ssh_config_problem(path: Path) -> str | None:
    """Why ssh_config file `path` is not read, as OpenSSH refuses it ("Bad owner or
    permissions"): another user than you or root owns it, or others may write to it. Such a
    file may be changed to send a site to another host, key or jump host. None: it is read
    (also when it is not there: said elsewhere)."""
    try:
        st = path.stat()
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):  # a device or FIFO: refused as no file where it is read
        return None
    if st.st_uid not in (0, os.geteuid()):
        return (f"{path} belongs to another user ({_owner(st.st_uid)}), who may change the "
                "hosts, keys and jump hosts it names; OpenSSH refuses it too (Bad owner or "
                "permissions): use a file of your own")
    if st.st_mode & 0o022:
        return (f"{path} can be written by other users (mode {st.st_mode & 0o777:03o}), who "
                "may change the hosts, keys and jump hosts it names; `chmod go-w "
                f"{shlex.quote(str(path))}` (OpenSSH refuses it too: Bad owner or permissions)")
    return None


def token_file_problem(t: TransportConfig) -> str | None:
    """A slurmrestd door's `token_file` that other users can read: its JWT is a bearer
    token (whoever holds it acts as the user at slurmrestd), so it is refused as a private
    key others can read is. A file not there yet is read (and said) when the site is."""
    if t.kind != "slurmrestd" or not t.token_file:
        return None
    path = Path(t.token_file).expanduser()
    if not path.is_file():
        return None
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        return (f"token_file: {path} can be read by other users (mode {mode:03o}); its JWT "
                "lets whoever reads it act as you at slurmrestd: "
                f"`chmod 600 {shlex.quote(str(path))}`")
    return None


def home_dir() -> Path:
    """The user's home: $HOME when it is an absolute path, else the password database's
    (as ssh does). An empty or relative HOME (`HOME= diamond ...`, a service's environment)
    put the store, its seal key and the Globus tokens in `/` or under the current
    directory: another store for each directory a face ran in."""
    home = os.environ.get("HOME", "")
    if os.path.isabs(home):
        return Path(home)
    import pwd

    return Path(pwd.getpwuid(os.getuid()).pw_dir)


def _xdg_dir(var: str, default: Path) -> Path:
    """$XDG_..._HOME, or `default` when it is unset, empty or relative (the XDG base
    directory specification: a relative path there is invalid and ignored)."""
    value = os.environ.get(var, "")
    return Path(value) if os.path.isabs(value) else default


def sites_file_path(path: str | Path) -> Path:
    """A sites file's path with `~` and `~user` expanded as the shell would (`--config=~/x`
    reaches us unexpanded); BadInput for a `~user` this machine has no user of (pathlib's
    bare RuntimeError, a traceback, before)."""
    try:
        return Path(path).expanduser()
    except RuntimeError:
        owner = str(path)[1:].split("/", 1)[0]
        raise BadInput(f"sites file {_printable(str(path))}: ~{_printable(owner)} is the home "
                       f"of a user {_printable(owner)}, and this machine has none (write "
                       "~/... for your own home, or the path out)") from None


def default_config_path() -> Path:
    env = os.environ.get("DIAMOND_CONFIG")
    if env:  # `~/` expanded: a quoted DIAMOND_CONFIG="~/sites.yaml" was "not found"
        return sites_file_path(env)
    return _xdg_dir("XDG_CONFIG_HOME", home_dir() / ".config") / "diamond" / "sites.yaml"


def default_data_dir() -> Path:
    """$DIAMOND_DATA_DIR (`~/` expanded; empty: unset), else $XDG_DATA_HOME/diamond. BadInput
    for a relative DIAMOND_DATA_DIR: each face (a notebook's kernel, the CLI in another
    directory, the server) would keep its own store there and not see the others' jobs."""
    value = os.environ.get("DIAMOND_DATA_DIR", "")
    if not value:
        return _xdg_dir("XDG_DATA_HOME", home_dir() / ".local" / "share") / "diamond"
    if value == "~" or value.startswith("~/"):
        path = home_dir() / value[2:]
    elif not os.path.isabs(value):
        raise BadInput(f"$DIAMOND_DATA_DIR must be an absolute directory (or ~/...), not "
                       f"{_printable(repr(value))}: relative, each face would keep its own "
                       "store in the directory it runs in")
    else:
        path = Path(value)
    if (blocker := file_in_the_way(path)) is not None:
        where = "is a file" if blocker == path else f"is under {blocker}, a file"
        raise BadInput(f"$DIAMOND_DATA_DIR {_printable(str(path))} {where}: it takes a "
                       "directory (made if missing), e.g. ~/.local/share/diamond")
    return path


def file_in_the_way(path: Path) -> Path | None:
    """The nearest of `path` and its parents that exists, when it is no directory (so no
    directory can be made at `path`); None when a directory is there or can be made."""
    for p in (path, *path.parents):
        if os.path.exists(p):
            return None if os.path.isdir(p) else p
    return None



def _yaml_problem(e: yaml.YAMLError, source: str = "") -> str:
    """One line: where and what (PyYAML's own text spans several lines)."""
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    text = where + " ".join(str(problem).split())
    if problem == "but found another document":  # PyYAML's words for a second `---`
        text = (f"{where}a second YAML document (`---`); a sites file is one document: "
                "list every site under one `sites:`")
    context, first = str(getattr(e, "context", "") or ""), getattr(e, "context_mark", None)
    if problem == "second occurrence" and context.startswith("found duplicate anchor") \
            and first is not None:  # PyYAML's words for `&a` written twice
        anchor = context.split("anchor", 1)[1].split(";", 1)[0].strip().strip("'\"")
        text = (f"{where}the anchor &{_printable(anchor)} is defined a second time (first "
                f"on line {first.line + 1}): give each anchor its own name, and each alias "
                "(*name) the one it means")
    if str(problem).startswith("could not determine a constructor for the tag"):
        text += (" (YAML tags such as !include or !env are not read: a sites file is plain "
                 "YAML in one file; to share settings between sites, write x-common: "
                 "&common {...} above them and <<: *common in each)")
    if str(problem).startswith(("expected escape sequence", "found unknown escape")):
        text += (" (a backslash inside double quotes starts an escape such as \\n or "
                 "\\U0001F600: a Windows path or other text holding backslashes goes in single "
                 "quotes, and a path here is written with /)")
    if "'\\t'" in text:
        text += " " + tab_hint(source, mark, "(indent with spaces: YAML does not allow tabs "
                               "there)")
    return text


# keys whose value is a name, never a number: `default_account: 0815` is text with a 0
_NAME_KEYS = ("name", "default_partition", "default_account", "allowed_partitions",
              "pbs_servers", "user", "host", "flavor", "gpu_complex")
_NUMBER_SAID = re.compile(r"(?P<where>.*?)(?P<key>[^:]+): (?P<text>\S+) is read by YAML as "
                          r"(?P<value>\S+), not as written \((?P<why>[^)]*)\): .*")


def _text_not_number(said: str, e: NumberNotAsWritten) -> str:
    """strict_yaml's refusal of a number not written in decimal, naming the site it is in;
    for a value that is text (a name, `default_account: 0815`; an `env` value,
    `UMASK: 0022`): to quote it, not to write it otherwise, which would be a number still."""
    m = _NUMBER_SAID.fullmatch(said)
    loc = _place_of(e.document, e.problem_mark.index) if m and e.problem_mark else None
    if m is None or loc is None:
        return said
    site = f" {_site_of(e.document, loc)}:" if loc[:1] == ("sites",) and len(loc) > 2 else ""
    where = m["where"].rstrip() + site  # `line 4, column 18: site 'a' (sites[0]):`
    named = [str(x) for x in loc if isinstance(x, str)]
    if not (named[-1:] and named[-1] in _NAME_KEYS or named[-2:-1] == ["env"]):
        return f"{where} {said[len(m['where']):].lstrip()}"
    what = "an env value" if named[-2:-1] == ["env"] else f"a {named[-1]}"
    return (f"{where} {m['key'].strip()}: {m['text']} is read by YAML as the number "
            f"{m['value']} ({m['why']}), but {what} is text: quote it ('{m['text']}')")


def _site_of(root: yaml.Node | None, loc: tuple[Any, ...]) -> str:
    """`site 'alpha' (sites[0])` for a place under ('sites', 0, ...) of the YAML tree `root`
    (`site (sites[0])` where its name is not text)."""
    name = node_at(root, loc[:2] + ("name",))
    written = name.value if isinstance(name, yaml.ScalarNode) and \
        name.tag == "tag:yaml.org,2002:str" else None
    return _where({"sites": [{"name": written}] * (loc[1] + 1)}, loc[:2])


def _place_of(root: yaml.Node | None, index: int) -> tuple[Any, ...] | None:
    """The keys and indices leading to the value that starts at character `index` of the
    YAML tree `root` (None where no value starts there)."""
    todo: list[tuple[tuple[Any, ...], yaml.Node | None]] = [((), root)]
    seen: set[int] = set()
    while todo:
        loc, node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode) and node.start_mark.index == index:
            return loc
        if isinstance(node, yaml.MappingNode):
            todo += [((*loc, getattr(k, "value", "")), v) for k, v in node.value]
        elif isinstance(node, yaml.SequenceNode):
            todo += [((*loc, i), v) for i, v in enumerate(node.value)]
    return None


def _printable(text: str) -> str:
    """Control characters escaped, so that an error stays one readable line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model whose field `loc` names (FederationConfig's sites.0.transport.host:
    TransportConfig), to list the keys it accepts."""
    model: type[BaseModel] | None = FederationConfig
    for part in loc:
        if isinstance(part, int) or model is None:
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            return None
        model = _inner_model(field.annotation)
    return model


def _inner_model(tp: Any) -> type[BaseModel] | None:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp
    for arg in typing.get_args(tp):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


# other names admins give a site's or a transport's keys (ssh_config's keywords, other
# tools' sites files), lower case: the key meant
_KEY_SYNONYMS = {
    "hostname": "host", "identityfile": "key_file", "identity_file": "key_file",
    "private_key": "key_file", "ssh_key": "key_file", "username": "user", "user_name": "user",
    "login_name": "user", "jump_host": "proxy_jump", "jumphost": "proxy_jump",
    "bastion": "proxy_jump", "gateway": "proxy_jump", "proxyjump": "proxy_jump",
    "proxycommand": "proxy_jump", "proxy_command": "proxy_jump",
    "userknownhostsfile": "known_hosts", "certificatefile": "cert_file",
    "certificate": "cert_file", "connecttimeout": "connect_timeout_s",
    "serveraliveinterval": "keepalive_s", "stricthostkeychecking": "trust_on_first_use",
    "identityagent": "use_agent", "forwardagent": "use_agent", "endpoint": "url",
    "base_url": "url", "rest_url": "url", "slurmrestd_url": "url",
    "default_queue": "default_partition", "queue": "default_partition",
    "partition": "default_partition", "allowed_queues": "allowed_partitions",
    "queues": "allowed_partitions", "partitions": "allowed_partitions",
    "project": "default_account", "default_project": "default_account",
    "account": "default_account", "bank": "default_account", "allocation": "default_account",
    "type": "scheduler", "batch_system": "scheduler", "scheduler_type": "scheduler",
    "workload_manager": "scheduler", "resource_manager": "scheduler", "lrms": "scheduler",
    "scratch": "workdir", "work_dir": "workdir", "remote_dir": "workdir",
    "remote_workdir": "workdir", "working_directory": "workdir", "ssh": "transport",
    "connection": "transport", "access": "transport", "environment": "env",
    "environment_variables": "env", "env_vars": "env", "envvars": "env", "variables": "env",
}
# keys that would hold a secret in the file: what to do instead (their values never shown)
_SECRET_INSTEAD = ("no password is kept in the sites file (whoever reads the file would have "
                   "it): log in with a key (key_file, or the agent: use_agent), and answer a "
                   "one-time code with `diamond login SITE`")
_OTHER_WORDS = {
    **dict.fromkeys(("password", "passwd", "passphrase", "key_passphrase", "otp"),
                    _SECRET_INSTEAD),
    **dict.fromkeys(("token", "jwt", "auth_token", "slurm_jwt", "api_key"),
                    "a token is not written in the sites file (whoever reads the file would "
                    "act as you): give token_file (a file only you can read) or "
                    "token_command (e.g. scontrol token)"),
}
# keys a center's admin writes for what a site holds elsewhere: where it goes instead
_MODULE_PATH_INSTEAD = ("module paths are shell, run before each scheduler command: write "
                        "them in the preamble (preamble: | then `module use /PATH` lines)")
_SITE_ELSEWHERE = {
    **dict.fromkeys(("module_paths", "module_path", "modulepath", "modulepaths",
                     "module_use", "modules_path"), _MODULE_PATH_INSTEAD),
    **dict.fromkeys(("modules", "module", "module_load", "load_modules", "modules_load"),
                    "modules the scheduler commands need are loaded in the preamble "
                    "(preamble: | then `module load NAME` lines); the software a site "
                    "offers, for placement, is metadata: {software: [NAME, ...]}"),
    **dict.fromkeys(("qos", "default_qos"),
                    "a QOS is a job's (its qos, or #SBATCH --qos in its script); a job "
                    "that names none runs under its account's default QOS"),
}

# keys other tools give a site's login under, written at the site's level
# (`host:` and `hostname:` are said as the transport's keys, with the others)
_LOGIN_KEYS = ("ssh", "login", "login_host", "login_node", "ssh_host", "ssh_login")

# what a field with a pattern accepts, in words
PATTERN_WORDS = {
    "globus_collection": "a Globus collection id, a UUID such as "
                         "6c54cade-bde5-45c1-bdea-f4bd71dba2cc",
    "url": "an http:// or https:// URL: http(s)://HOST[:PORT][/PATH]",
    "api_version": "slurmrestd's OpenAPI plugin version, v0.0.N (e.g. v0.0.38)",
    "name": "letters, digits, _ . - only",
}
YAML_WORDS = "YAML reads yes/no/on/off/true/false as booleans and bare digits as numbers"


_UUID_IN = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                      r"[0-9a-fA-F]{12}")


def _pattern_hint(err: Any) -> str:
    """What a value copied from elsewhere meant: the collection id inside a Globus web app
    link (`...?origin_id=UUID`, `urn:uuid:UUID`), the scheme a REST URL left out."""
    field, given = str(err["loc"][-1]), err.get("input")
    if not isinstance(given, str):
        return ""
    if field == "globus_collection":
        ids = set(_UUID_IN.findall(given))
        return f" (the id in it is {ids.pop()}: write just that)" if len(ids) == 1 else ""
    if field == "api_version" and re.fullmatch(r"0\.0\.[0-9]+", given.strip()):
        return f" (write v{given.strip()})"
    if field == "url" and "://" not in given and re.fullmatch(r"[\w.-]+(:[0-9]+)?(/\S*)?", given):
        return f" (it has no scheme: write https://{given}, or http:// for a plain one)"
    return ""


_SECONDS = {"ms": 0.001, "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1, "m": 60,
            "min": 60, "mins": 60, "minute": 60, "minutes": 60, "h": 3600, "hr": 3600,
            "hrs": 3600, "hour": 3600, "hours": 3600, "d": 86400, "day": 86400, "days": 86400}
_BYTES = {"b": 1, "byte": 1, "bytes": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 10**3,
          "m": 1 << 20, "mib": 1 << 20, "mb": 10**6, "g": 1 << 30, "gib": 1 << 30,
          "gb": 10**9, "t": 1 << 40, "tib": 1 << 40, "tb": 10**12}
_AMOUNT = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+)\s*")


# a duration as Slurm writes one (sbatch --time): D-HH[:MM[:SS]] or HH:MM:SS
_SLURM_DURATION = re.compile(r"(?:([0-9]+)-([0-9]{1,2})(?::([0-9]{1,2}))?|([0-9]+):([0-9]{1,2}))"
                             r"(?::([0-9]{1,2}))?")
# one as ISO 8601 writes one: P1D, PT1H30M, PT90S
_ISO_DURATION = re.compile(r"P(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+)S)?)?",
                           re.IGNORECASE)


def _duration_seconds(written: str) -> int | None:
    """The seconds of a duration written with a clock (`1-00:00:00`, `2-12`, `00:30:00`),
    units run together (`1h30m`) or in ISO 8601 (`PT1H30M`); None for any other text. A
    bare `MM:SS` is left out: whether 1:30 is minutes or hours is the writer's."""
    text = written.strip()
    if (m := _SLURM_DURATION.fullmatch(text)) and (m[1] is not None or m[6] is not None):
        if m[1] is not None:  # D-HH, D-HH:MM, D-HH:MM:SS
            days, hours, minutes, seconds = m[1], m[2], m[3], m[6]
        else:  # HH:MM:SS
            days, hours, minutes, seconds = "0", m[4], m[5], m[6]
        return ((int(days) * 24 + int(hours)) * 60 + int(minutes or 0)) * 60 + int(seconds or 0)
    if (m := _ISO_DURATION.fullmatch(text)) and any(m.groups()) and not text.upper().endswith("T"):
        d, h, mi, sec = (int(g or 0) for g in m.groups())
        return ((d * 24 + h) * 60 + mi) * 60 + sec
    return time_value(text) if re.search("[A-Za-z]", text) else None


# a number with thousands marked, as a spreadsheet shows it: 1,000,000 or 1_000.000 not
_THOUSANDS = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+")


def _number_hint(field: str, given: Any) -> str:
    """What a number key accepts, in its unit (a key ending in _s holds seconds, one ending
    in _bytes bytes), with the plain number meant by a value written with a unit (`10s`,
    `5m`, `64MiB`), a clock (`1-00:00:00`), thousands marks (`1,000,000`), as a percentage
    or a decimal comma where a factor is wanted (`150%`, `1,5`), or in a form YAML left as
    text (`1.5e6`)."""
    unit = "seconds" if field.endswith("_s") else "bytes" if field.endswith("_bytes") else ""
    plain = f"a plain number of {unit}" if unit else "a plain number"
    example = f"{plain}, e.g. 1.5" if field.endswith("_factor") else f"{plain}, e.g. 30"
    if field == "port":
        return "a plain number, a port from 1 to 65535, e.g. 22" + (
            f": a port {_WRITTEN_OUT}" if isinstance(given, str) and "$" in given else "")
    if not isinstance(given, str):
        if isinstance(given, float) and math.isfinite(given) and given == int(given):
            # `1.0e+9` where a count is whole: YAML read a fraction
            return f"{plain}: write {int(given)}, with no decimal point nor exponent"
        return example
    shown = _printable(given.strip())
    m = _AMOUNT.fullmatch(given)
    factors = _SECONDS if unit == "seconds" else _BYTES if unit == "bytes" else {}
    if m and m.group(2).lower() in factors:
        meant = float(m.group(1)) * factors[m.group(2).lower()]
        return f"{plain}: write {meant:.0f} for {shown}" \
            if meant >= 1 and meant == int(meant) else f"{plain}, without a unit"
    if unit == "seconds" and (seconds := _duration_seconds(given)) is not None:
        return f"{plain}: write {seconds} for {shown}"
    if unit and _THOUSANDS.fullmatch(given.strip()):
        return f"{plain}, without thousands marks: write {shown.replace(',', '')} for {shown}"
    if field.endswith("_factor"):
        written = given.strip()
        if (pm := re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)\s*%", written)):
            return f"{plain}, a factor, not a percentage: write {float(pm[1]) / 100:g} for {shown}"
        if (cm := re.fullmatch(r"([0-9]+),([0-9]+)", written)):
            return f"{plain}, with a decimal point: write {cm[1]}.{cm[2]} for {shown}"
        if (xm := re.fullmatch(r"[x×]\s*([0-9]+(?:\.[0-9]+)?)|([0-9]+(?:\.[0-9]+)?)\s*[x×]",
                                written, re.IGNORECASE)):
            return f"{plain}, the factor alone: write {xm[1] or xm[2]} for {shown}"
    try:
        meant = float(given)
    except ValueError:
        return example
    if math.isfinite(meant) and meant == int(meant):
        return f"{plain}: write {int(meant)} for {shown}"
    return example


def _first_to_say(errors: list[Any]) -> Any:
    """The error a sites file is refused with: the first, but for a required key reported
    missing when the entry holds it misspelt (`Name: a`): then the misspelt key's, which
    names the key to fix and where."""
    first = errors[0]
    if first["type"] != "missing":
        return first
    parent, wanted = tuple(first["loc"][:-1]), str(first["loc"][-1])
    for err in errors[1:]:
        key = str(err["loc"][-1])
        if err["type"] == "extra_forbidden" and tuple(err["loc"][:-1]) == parent and (
                key.lower() == wanted or difflib.get_close_matches(key, [wanted], cutoff=0.75)):
            return err
    return first


def _explain(err: Any) -> str:
    """pydantic's message for one error, with what would be accepted."""
    kind, given = err["type"], err.get("input")
    msg = _printable(str(err["msg"]).removeprefix("Value error, "))
    if kind == "string_pattern_mismatch" and str(err["loc"][-1]) in PATTERN_WORDS:
        return f"expected {PATTERN_WORDS[str(err['loc'][-1])]}{_pattern_hint(err)}"
    if kind == "extra_forbidden":
        model = _model_at(err["loc"][:-1])
        key = str(err["loc"][-1])
        if model is SiteConfig and key in ("partitions", "queues") and isinstance(given, dict):
            return (f"unknown key: per-{key[:-1]} settings are not read (a site's settings hold "
                    "for all its partitions); to limit where its jobs go write "
                    "allowed_partitions: [NAME, ...], and default_partition: NAME for the one "
                    "a job that names none goes to")
        if model is not None:
            keys = list(model.model_fields)
            said = _OTHER_WORDS.get(key.lower()) if model in (SiteConfig,
                                                              TransportConfig) else None
            if model is SiteConfig:
                said = said or _SITE_ELSEWHERE.get(key.lower())
            if model is SiteConfig and key.lower() in _LOGIN_KEYS and isinstance(given, str):
                # `ssh: alice@login` as other tools' host files write a login
                said = (f"a site's SSH login goes in its transport: write transport: "
                        f"{{host: {_printable(given.strip())}}} (USER@HOST:PORT and "
                        "ssh://USER@HOST:PORT are read there)")
            if said is not None:  # a password, a token written out: never kept here
                return f"unknown key: {said}"
            bare = key.strip().rstrip(":").strip()
            if bare != key and bare in keys:  # `'scheduler ': x`, `scheduler:: x`
                extra = "a space inside its quotes" if key.strip() != key else \
                    f"a colon of its own (`{bare}::` or inside quotes)"
                return (f"unknown key: {_printable(repr(key))} is {bare} with {extra}, "
                        f"which YAML keeps in the key: write {bare}: VALUE")
            meant = (model is TransportConfig and {"type": "kind", "protocol": "kind",
                                                   "method": "kind"}.get(key.lower())) \
                or _KEY_SYNONYMS.get(key.lower())
            if model is SiteConfig and (meant or key) in TransportConfig.model_fields and \
                    (meant or key) not in keys:  # `host:` beside `name:`
                door = meant or key
                return (f"unknown key: {door} is the transport's, written under it "
                        f"(transport: {{{door}: ...}}; accepted here: {', '.join(keys)})")
            near = [meant] if meant in keys else [key.lower()] if key.lower() in keys \
                else difflib.get_close_matches(key, keys, n=1, cutoff=0.6)
            if model is TransportConfig and not near:  # `workdir:` (or `wrokdir:`) under it
                site_keys = [k for k in SiteConfig.model_fields if k not in keys]
                mine = [key] if key in site_keys else \
                    difflib.get_close_matches(key, site_keys, n=1, cutoff=0.75)
                where = (f"written beside transport: under the site's `- name:`; accepted "
                         f"here: {', '.join(keys)}")
                if mine and mine[0] == key:
                    return f"unknown key: {key} is the site's, {where}"
                if mine:
                    return f"unknown key (did you mean {mine[0]}? the site's, {where})"
            hint = f"did you mean {near[0]}? " if near else ""
            if model is FederationConfig and not near and key in SiteConfig.model_fields:
                return (f"unknown key: {key} is a key of each site, written in the site's "
                        f"entry under sites: (beside its `- name:`; accepted here: "
                        f"{', '.join(keys)})")
            # `defaults: &login {...}` above the sites, as docker-compose files have them
            anchors = "; a block of your own holding YAML anchors is named x-NAME, e.g. " \
                f"x-{_printable(key)[:40]}" if model is FederationConfig and not near \
                and isinstance(given, (dict, list)) else ""
            return f"unknown key ({hint}accepted: {', '.join(keys)}{anchors})"
        return "unknown key"
    if kind == "literal_error" and isinstance(given, str) and given.strip():
        return msg + _literal_note(str(err["loc"][-1]), given)
    if kind == "literal_error" and isinstance(given, list) and len(given) == 1 and \
            isinstance(given[0], str):  # `scheduler: [slurm]`, `kind: [ssh]`
        return (f"{msg}, not a list: write the one name alone, "
                f"{err['loc'][-1]}: {_printable(given[0])[:40]}")
    if kind == "string_type" and str(err["loc"][-1]) == "preamble" and \
            isinstance(given, list):  # `preamble: [module load slurm, ...]`
        return (f"{msg}, got a list of lines: write preamble: | and the shell lines under "
                "it, indented")
    if kind in ("dict_type", "model_type") and str(err["loc"][-1]) == "env" and \
            _env_pairs(given):  # `env: [SLURM_CONF=/x]`, `env: SLURM_CONF=/x`
        # the values are not shown: one may be a secret (SLURM_JWT=...)
        names = ", ".join(f"{k}: ..." for k in _env_pairs(given))
        shape = "a list of" if isinstance(given, list) else "one"
        return (f"Input should be a valid mapping, not {shape} NAME=value: write env: "
                f"{{{_printable(names)[:120]}}} (a NAME: value line each)")
    if kind == "list_type" and tuple(err["loc"]) == ("sites",) and isinstance(given, dict) \
            and "name" in given and not isinstance(given["name"], dict):
        # one site's keys under `sites:`, its `- ` left out
        shown = _printable(str(given["name"]))[:63]
        return ("Input should be a valid list, got a mapping: one site's keys (name, "
                f"transport...) with no `- ` before them: write `- name: {shown}` and "
                "indent its other keys as far as name")
    if kind == "list_type" and tuple(err["loc"]) == ("sites",) and isinstance(given, dict):
        return ("Input should be a valid list, got a mapping: write each site as an item of "
                "the list, `- name: " + _printable(str(next(iter(given), "mycluster")))[:63]
                + "` with its keys (scheduler, transport...) under it")
    if kind == "string_type" and isinstance(given, list):
        more = {"key_file": " (more keys: IdentityFile lines in ssh_config, or the agent)",
                "known_hosts": " (the files ssh reads are read too: ssh_config's "
                               "UserKnownHostsFile and GlobalKnownHostsFile, else "
                               "~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts)",
                "host": " (another login of the same cluster is another site, with "
                        "auto: false and metadata.door_to naming this one)"}.get(
                            str(err["loc"][-1]), "")
        return f"{msg}, got a list: give one value{more}"
    if kind == "string_type" and isinstance(given, bool):
        return (f"{msg}, got {str(given).lower()} ({YAML_WORDS}: put the value in quotes, "
                "e.g. name: 'no')")
    if kind == "string_type" and given is None and isinstance(err["loc"][-1], int):
        return (f"{msg}, got nothing: the list's item has no value (a `-` alone, or `~`): "
                "write the name meant there, or drop the item")
    if kind == "too_short" and err["loc"][-1] == "allowed_partitions":
        return ("an empty list allows no partition, which would refuse every job: list the "
                "partitions jobs may use ([debug, gpu]), or leave the key out to allow every "
                "partition")
    if kind == "string_type" and given is None:
        return (f"{msg}, got nothing: the key has no value (write '' for an empty one, or "
                "leave the key out)")
    if kind == "string_type" and isinstance(given, datetime.date):
        return (f"{msg}, got the date {given.isoformat()} (YAML reads YYYY-MM-DD as a date: "
                "put the value in quotes)")
    if kind == "string_type" and isinstance(given, (int, float)):
        return f"{msg}, got the number {given!r} ({YAML_WORDS}: put the value in quotes)"
    if kind == "list_type" and isinstance(given, (str, dict)):
        shape = "one value" if isinstance(given, str) else "a mapping"
        return f"{msg}, got {shape} (write a list: [a, b], or one `- a` per line)"
    if given is None and not isinstance(err["loc"][-1] if err["loc"] else 0, int) and kind in (
            "bool_type", "float_type", "int_type", "dict_type", "model_type",
            "model_attributes_type", "literal_error"):  # `speed_factor:`, `transport: ~`
        msg = re.sub(r" or instance of \w+", "", msg).replace("dictionary", "mapping")
        return f"{msg}, got nothing: the key has no value ({_default_of(err['loc'])})"
    if kind in ("bool_type", "bool_parsing"):
        return f"{msg} (true or false)"
    if kind in ("int_parsing", "int_type", "int_from_float", "float_parsing", "float_type",
                "finite_number"):
        return f"{msg} ({_number_hint(str(err['loc'][-1]), given)})"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        # pydantic's "a valid dictionary or instance of TransportConfig" names a class
        msg = re.sub(r" or instance of \w+", "", msg).replace("dictionary", "mapping")
        last = err["loc"][-1] if err["loc"] else None
        shown = _printable(repr(given))
        if last in ("transport", "files") and isinstance(given, str):
            kinds = typing.get_args(TransportConfig.model_fields["kind"].annotation)
            fix = f"{{kind: {given.strip().lower()}}}" if given.strip().lower() in kinds \
                else f"{{host: {_printable(given.strip())}}}" if _HOST.match(given.strip()) \
                else "{host: login.example.org}"
            return f"{msg}, not {shown}: write {last}: {fix}"
        if last == "discovery" and isinstance(given, bool):  # `discovery: false`
            return f"{msg}, not {shown}: write discovery: {{enabled: {str(given).lower()}}}"
        if isinstance(last, int) and (given is None or isinstance(given, (str, int, float))):
            return (f"{msg}, not {shown}: each site is a mapping, e.g. `- name: mycluster` "
                    "with its keys (scheduler, transport...) under it")
        return f"{msg} (a mapping of key: value lines)"
    return msg


def _word_meant(root: yaml.Node | None, err: Any) -> str | None:
    """A text value (a name, a partition, an account) YAML 1.1 read as a boolean or as null
    from a word (`on`, `no`, `null`), found in the file's YAML tree `root`: the word written
    and the line to write, quoted; None for any other error, or a value not written as a
    plain word."""
    given = err.get("input")
    if root is None or err["type"] != "string_type" or not (
            given is None or isinstance(given, bool)):
        return None
    node = node_at(root, tuple(err["loc"]))
    if not isinstance(node, yaml.ScalarNode) or node.style or node.value in ("", "~"):
        return None  # quoted, or `key:`/`~` (nothing written): said as such
    word, last = _printable(node.value), err["loc"][-1]
    read = "no value (null)" if given is None else str(given).lower()
    quoted = f"- '{word}'" if isinstance(last, int) else f"{last}: '{word}'"
    return (f"{_printable(str(err['msg']))}, got {read}: YAML reads `{word}` as {read}, not "
            f"as the word; to mean the word, put the value in quotes: {quoted}")


def _default_of(loc: tuple[Any, ...]) -> str:
    """What to do for a key written with no value at `loc`: its default, where it has one."""
    model = _model_at(tuple(loc[:-1]))
    field = model.model_fields.get(str(loc[-1])) if model is not None else None
    if field is None or field.is_required():
        return "write its value after the colon"
    if field.default_factory is not None:
        return "write its value after the colon, or leave the key out"
    shown = str(field.default).lower() if isinstance(field.default, bool) else \
        repr(field.default)
    return f"write its value after the colon, or leave the key out for its default, {shown}"


# what other names for a scheduler or a transport kind mean here
_KIND_MEANT = {"sftp": "ssh", "scp": "ssh", "openssh": "ssh", "paramiko": "ssh",
               "rest": "slurmrestd", "slurmrest": "slurmrestd", "slurm-rest": "slurmrestd",
               "slurm_rest": "slurmrestd", "restapi": "slurmrestd", "rest-api": "slurmrestd",
               "slurmrestapi": "slurmrestd", "http": "slurmrestd", "https": "slurmrestd",
               "localhost": "local", "shell": "local", "subprocess": "local"}


def _literal_note(field: str, given: str) -> str:
    """What a value a `Literal` refused was likely meant as: `kind: SSH` or `sftp` (ssh),
    `rest` (slurmrestd); `scheduler: moab` (the resource manager it schedules for)."""
    word = given.strip().lower()
    if field == "kind":
        kinds = typing.get_args(TransportConfig.model_fields["kind"].annotation)
        meant = word if word in kinds else _KIND_MEANT.get(word)
        why = " (its files move over SFTP inside it)" if meant == "ssh" and word != "ssh" \
            else ""
        return f", not {_printable(repr(given))}" + (f"; did you mean {meant}?{why}"
                                                      if meant else "")
    if field == "scheduler" and word in ("slurmrestd", "slurm-rest", "slurmrest"):
        return (f"; {_printable(given)} is a door to Slurm, not a scheduler: write scheduler: "
                "slurm with transport: {kind: slurmrestd, url: ...}")
    if field == "scheduler" and word in ("moab", "maui", "moab-torque"):
        return (f"; {_printable(given)} schedules the jobs of a resource manager, whose "
                "commands the engine runs: write that one (scheduler: torque, or slurm)")
    owners = [n for n in SCHEDULERS if word in SCHEDULER_PROGRAMS[n]]
    if field == "scheduler" and owners:  # `sbatch`, `qsub`: a command, not its scheduler
        owners = ["slurm"] if "slurm" in owners else owners
        return (f", not {_printable(repr(given))}: {word} is a command of "
                f"{' and of '.join(owners)}; write scheduler: {' or '.join(owners)}")
    if field == "scheduler":  # `slurn`, `gridengin`: the nearest name the engine knows
        key = "-".join(word.split())
        known = {**{n: n for n in ("slurm", "pbs", "lsf", "flux", "sge")}, **SCHEDULER_ALIASES}
        near = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        if near:
            return (f", not {_printable(repr(given))}; did you mean {near[0]}"
                    + (f" (read as {known[near[0]]})" if known[near[0]] != near[0] else "")
                    + "?")
        return (f", not {_printable(repr(given))} (the engine runs Slurm, PBS Pro/Torque, "
                "LSF, Flux and Grid Engine sites)")
    return ""


def _env_pairs(given: Any) -> dict[str, str]:
    """`NAME=value` items (a list of them, or one string) as the mapping meant, else {}."""
    items = [given] if isinstance(given, str) else given if isinstance(given, list) else []
    pairs = [i.partition("=") for i in items if isinstance(i, str)]
    if not items or len(pairs) != len(items) or not all(
            sep and _ENV_NAME.match(k.strip()) for k, sep, _ in pairs):
        return {}
    return {k.strip(): v.strip() for k, _, v in pairs}


def _where(raw: Any, loc: tuple[Any, ...]) -> str:
    """`site 'alpha' (sites[0]): transport.port` for ('sites', 0, 'transport', 'port')."""
    loc = tuple(x for x in loc if x != "[key]")  # a dict's key: the key itself follows
    parts = [str(x) for x in loc]
    head = ""
    if len(loc) >= 2 and loc[0] == "sites" and isinstance(loc[1], int):
        entry = raw.get("sites", [])[loc[1]] if isinstance(raw.get("sites"), list) else None
        name = entry.get("name") if isinstance(entry, dict) else None
        label = f"site {name!r} " if isinstance(name, str) and name else "site "
        head = f"{label}(sites[{loc[1]}])"
        parts = [str(x) for x in loc[2:]]
    key = ".".join(parts)
    return _printable(": ".join(x for x in (head, key) if x))


MAX_EXPANDED_VALUES = 100_000  # values in the file once its aliases are expanded
MAX_SITES = 1_000  # entries under `sites:` (each is checked, connected and polled)


def _expanded_size(obj: Any, sizes: dict[int, int], open_: set[int]) -> int:
    """How many values `obj` holds with YAML aliases expanded (each shared container is
    measured once); ValueError for a container that holds itself."""
    if not isinstance(obj, (dict, list)):
        return 1
    key = id(obj)
    if key in sizes:
        return sizes[key]
    if key in open_:
        raise ValueError("an alias refers to a value that holds it (a loop)")
    open_.add(key)
    items = [*obj.keys(), *obj.values()] if isinstance(obj, dict) else obj
    size = 1 + sum(_expanded_size(x, sizes, open_) for x in items)
    open_.discard(key)
    sizes[key] = size = min(size, MAX_EXPANDED_VALUES + 1)
    return size


def _not_allowed_hint(p: Path) -> str:
    """Why this user may not read file P, and what to change: the directory on its way that
    cannot be entered, else the file's mode and owner."""
    me = _owner(os.geteuid())
    for d in reversed(p.absolute().parents):  # from / down
        if not os.access(d, os.X_OK):
            try:
                st = d.stat()
            except OSError:
                return f" (the directory {d} cannot be entered by {me})"
            return (f" (the directory {d} cannot be entered by {me}: mode "
                    f"{stat.S_IMODE(st.st_mode):04o}, owner {_owner(st.st_uid)}; let that user "
                    "through it, e.g. chmod o+x, or give a file elsewhere)")
    try:
        st = p.stat()
    except OSError:
        return ""
    return (f" (mode {stat.S_IMODE(st.st_mode):04o}, owner {_owner(st.st_uid)}; this runs as "
            f"{me}: let that user read it, e.g. chmod a+r for a file every user's server "
            "reads, or give one of your own with --config FILE or DIAMOND_CONFIG)")


def _read_text(p: Path, named: bool = True) -> str:
    """The sites file's text. Refused unread: a FIFO, a regular file anyone can write, and,
    when the user named no file (the default under $XDG_CONFIG_HOME), one that belongs to
    another user than the user or root: its `preamble` and `commands` run as the user on
    every site (the only shell text the engine runs as written), so who can write it
    chooses what runs."""
    if p.is_dir():
        raise BadInput(f"sites file {p} is a directory (give the YAML file in it, e.g. "
                       f"{p / 'sites.yaml'})")
    # opened without waiting (a FIFO with no writer would hold the CLI, the kernel or the
    # server forever), then read only if it is no FIFO (/dev/null stays an empty file)
    fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    with open(fd, "rb") as fh:
        st = os.fstat(fd)
        if stat.S_ISFIFO(st.st_mode):
            raise BadInput(f"sites file {p} is not a file but a FIFO (a pipe), which may "
                           "never be written: give the YAML file")
        if stat.S_ISREG(st.st_mode) and st.st_mode & 0o002:
            raise BadInput(f"sites file {p} can be written by anyone (mode "
                           f"{stat.S_IMODE(st.st_mode):04o}): its preamble and commands run "
                           "as you on every site; not read (chmod o-w it)")
        if not named and st.st_uid not in (os.getuid(), 0):
            raise BadInput(f"sites file {p} belongs to another user (uid {st.st_uid}), who "
                           "would choose the commands run as you on every site; not read "
                           "(give your own with --config FILE or DIAMOND_CONFIG)")
        data = fh.read(MAX_SITES_FILE_BYTES + 1)
    if len(data) > MAX_SITES_FILE_BYTES:
        raise BadInput(f"sites file {p} is larger than {MAX_SITES_FILE_BYTES >> 20} MB: not "
                       "a sites file")
    if (wide := _wide_encoding(data)) is not None:
        raise BadInput(f"sites file {p} is {wide} text (as Windows editors save \"Unicode\"), "
                       "not UTF-8: save it as UTF-8")
    return data.decode("utf-8")


def _wide_encoding(data: bytes) -> str | None:
    """`UTF-16` or `UTF-32` when `data` is text in one of them (by its byte-order mark, or
    a NUL beside each letter of its first line), else None. Read as UTF-8 it was "not UTF-8
    at byte 0", or, without a mark, "unacceptable character #x0000"."""
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16"
    head = data[:64]
    if len(head) >= 8 and head.count(0) * 4 >= len(head) * 3:
        return "UTF-32"
    if len(head) >= 4 and (head[1::2].count(0) == len(head[1::2])
                           or head[0::2].count(0) == len(head[0::2])):
        return "UTF-16"
    return None


_TOML_TABLE = re.compile(r"^\s*\[\[?\s*[\w.\"' -]+\s*\]\]?\s*(#.*)?$", re.M)
_KEY_EQUALS = re.compile(r"^\s*[\w.\"-]+\s*=", re.M)


def _other_format_hint(p: Path, text: str) -> str:
    """What to write when a sites file that YAML refuses is TOML or INI (`[[sites]]`,
    `[alpha]`, `name = "alpha"`): only YAML (JSON too, which is YAML) is read."""
    if p.suffix.lower() not in (".toml", ".ini", ".cfg", ".conf") and not (
            _TOML_TABLE.search(text) and _KEY_EQUALS.search(text)):
        return ""
    return ("; it looks like TOML or INI, which is not read: a sites file is YAML (or JSON), "
            "`sites:` and one `- name: alpha` item per site with its keys under it, "
            "`key: value`")


def _json_tabs_as_blanks(text: str) -> str:
    """A JSON sites file indented with tabs (`jq --tab`, an editor's JSON mode) as YAML reads
    it: PyYAML takes no tab between tokens, where JSON does. Valid JSON holds no raw tab
    inside a string, so each of its tabs is a blank: each becomes one (lines and columns
    as written). Any other text is returned as it is."""
    if "\t" not in text or not text.lstrip("\ufeff \t\r\n").startswith(("{", "[")):
        return text
    try:
        json.loads(text.removeprefix("\ufeff"))
    except ValueError:
        return text
    return text.replace("\t", " ")


_SLASH_COMMENT = re.compile(r"^[ \t]*(//|/\*)", re.MULTILINE)


def _slash_comment_hint(text: str) -> str:
    """' (line N starts with //, ...)': a `//` or `/* */` comment (JSONC, a JSON editor's
    habit) that YAML read as text and refused further on."""
    m = _SLASH_COMMENT.search(text)
    if m is None:
        return ""
    line = text.count("\n", 0, m.start()) + 1
    return (f" (line {line} starts with {m.group(1)}, a comment neither JSON nor YAML reads: "
            "remove it, or write it after # as YAML does)")


def _not_a_mapping(raw: Any, root: yaml.Node | None) -> str:
    """Why a file whose whole is a list or one value (read from the YAML tree `root`) is no
    sites file, and where it starts: a list of sites written without `sites:` above it is
    said so."""
    line = f" (line {root.start_mark.line + 1})" if root is not None else ""
    if isinstance(raw, list) and raw and all(isinstance(x, dict) and "name" in x for x in raw):
        return (f"the file is a list of {len(raw)} site(s) with no `sites:` above it{line}: "
                "write `sites:` on its own line first and indent the list under it")
    shape = "a list" if isinstance(raw, list) else \
        f"one value, {_printable(repr(raw))[:60]}"
    return (f"the file holds {shape}{line}, not a mapping: expected `sites:` followed by "
            "entries such as `- name: mycluster`")


def load_config(path: str | Path | None = None) -> FederationConfig:
    """The sites file, checked whole: any error is one line naming the file, the site, the
    key and what would be accepted (BadInput)."""
    read: list[str] = []
    try:
        return _load_config(path, read)
    except BadInput as e:  # a no-break space read as text, not indentation: said where
        hint = odd_blank_hint(read[0], indentation_only=True) if read else ""
        if not hint or hint in str(e):
            raise
        raise BadInput(f"{e}{hint}") from None


def _broken_link(p: Path) -> str | None:
    """The missing file a symbolic link at `p` (or at one of the links it leads through)
    points to, as the link says it; None when `p` is no link left dangling."""
    seen: set[Path] = set()
    while p.is_symlink() and p not in seen:
        seen.add(p)
        target = Path(os.readlink(p))
        p = target if target.is_absolute() else p.parent / target
    return None if not seen or p.exists() or p.is_symlink() else str(p)


def _load_config(path: str | Path | None, read: list[str]) -> FederationConfig:
    """load_config's work; `read` gets the file's text once YAML has read it."""
    # `~/` expanded as the shell would (`--config=~/sites.yaml` reaches us unexpanded)
    p = sites_file_path(path) if path else default_config_path()
    text = ""
    try:
        text = _json_tabs_as_blanks(
            _read_text(p, named=bool(path or os.environ.get("DIAMOND_CONFIG"))))
        raw, root = strict_read(text)
        read.append(text)
    except FileNotFoundError:
        if (broken := _broken_link(p)) is not None:
            raise BadInput(f"sites file {p} is a symbolic link to {broken}, which does not "
                           "exist (point the link at the sites file: ln -sfn FILE "
                           f"{p}, or give --config FILE)") from None
        raise BadInput(
            f"sites file {p} not found (give --config FILE or set DIAMOND_CONFIG;"
            " `diamond testbed up` writes one)"
        ) from None
    except UnicodeDecodeError as e:
        line = e.object[:e.start].count(b"\n") + 1
        raise BadInput(f"sites file {p} is not UTF-8 text (line {line}, byte {e.start}: "
                       "save it as UTF-8)") from None
    except PermissionError as e:
        raise BadInput(f"sites file {p} cannot be read: {e.strerror}{_not_allowed_hint(p)}") \
            from None
    except OSError as e:
        raise BadInput(f"sites file {p} cannot be read: {e.strerror}") from None
    except NumberNotAsWritten as e:  # valid YAML, but not the number written
        raise BadInput(f"sites file {p}: {_text_not_number(_yaml_problem(e, text), e)}") \
            from None
    except yaml.YAMLError as e:
        hint = alias_hint(text, str(getattr(e, "problem", "")), getattr(e, "problem_mark", None))
        hint += structure_hint(text, e)
        raise BadInput(f"sites file {p} is not valid YAML: {_yaml_problem(e, text)}{hint}"
                       f"{odd_blank_hint(text)}{_lookalike_colon_hint(text)}"
                       f"{_other_format_hint(p, text)}{_slash_comment_hint(text)}") from None
    except RecursionError:
        raise BadInput(f"sites file {p} is nested too deeply to be a sites file") from None
    sites = raw.get("sites") if isinstance(raw, dict) else None
    if isinstance(sites, list) and len(sites) > MAX_SITES:
        raise BadInput(f"sites file {p} lists {len(sites)} sites; a sites file lists at most "
                       f"{MAX_SITES} (split them over several sites files)")
    try:
        if _expanded_size(raw, {}, set()) > MAX_EXPANDED_VALUES:
            raise ValueError(f"its aliases expand to more than {MAX_EXPANDED_VALUES} values")
    except (ValueError, RecursionError) as e:
        why = str(e) if isinstance(e, ValueError) else "it is nested too deeply"
        raise BadInput(f"sites file {p} is not a sites file: {why}") from None
    if isinstance(raw, dict) and not raw.get("sites"):  # `site:` for sites: the typo first
        typo = next((k for k in raw if str(k) not in FederationConfig.model_fields
                     and not str(k).startswith("x-")), None)
        if typo is not None:
            what = _explain({"type": "extra_forbidden", "loc": (str(typo),), "msg": ""})
            raise BadInput(f"sites file {p}: {_printable(str(typo))}: {what}"
                           f"{_line_note(root, (typo,))}")
    if raw is None or isinstance(raw, dict) and not raw.get("sites"):
        raise BadInput(f"sites file {p} lists no sites (expected `sites:` followed by "
                       "entries such as `- name: mycluster`)")
    if not isinstance(raw, dict):
        raise BadInput(f"sites file {p}: {_not_a_mapping(raw, root)}"
                       f"{_other_format_hint(p, text)}")
    _partitions_given(raw, p, root)
    try:
        cfg = FederationConfig.model_validate(raw, context={"base": p.parent.absolute()})
    except ValidationError as e:
        errors = e.errors()
        first = _first_to_say(errors)
        said_for = 1 if first is errors[0] else 2  # a misspelt key's, for its missing one
        if first["type"] == "invalid_key" or first["loc"][-1:] == ("[key]",):
            _keys_are_text(raw, p, root)  # `5:`, `true:` named as written
        where = _where(raw, first["loc"])
        what = _word_meant(root, first) or _explain(first)
        more = f" (and {e.error_count() - said_for} more)" \
            if e.error_count() > said_for else ""
        loc = _key_at_fault(raw, tuple(x for x in first["loc"] if x != "[key]"),
                            str(first["msg"]))
        named = re.findall(r"\bsites\[([0-9]+)\]", str(first["msg"]))
        if not loc and named:  # a problem between entries: the line of the last one named
            loc = ("sites", int(named[-1]), "name")
        line = _line_note(root, loc, said=what)
        raise BadInput(f"sites file {p}: {where + ': ' if where else ''}{what}{more}{line}") \
            from None
    folded = _folded_preambles(text, root, cfg)
    for i, s in enumerate(cfg.sites):
        where = f"sites file {p}: site {s.name!r} (sites[{i}])"
        if (directive := _preamble_directive(s)) is not None:
            number, shown, hint = directive
            raise BadInput(f"{where}: preamble line {number} {_printable(repr(shown))[:80]} is "
                           "a job directive, but the preamble runs on the login before each "
                           "scheduler command (submit, queue, cancel ...), never in a job, "
                           f"so it is a comment there; {hint}"
                           f"{_line_note(root, ('sites', i, 'preamble'))}")
        if i in folded:
            shown = s.preamble.strip()
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise BadInput(f"{where}: preamble: a folded block (`preamble: >`) joins its lines "
                           f"into one command line ({_printable(repr(shown))}), which runs as "
                           "one command; write `preamble: |` to keep each line"
                           f"{_line_note(root, ('sites', i, 'preamble'))}")
        if s.transport.kind == "ssh" and not s.transport.host:
            raise BadInput(f"{where}: transport.host: an ssh site needs a host (e.g. "
                           "transport: {host: login.example.org}), or transport kind local"
                           f"{_line_note(root, ('sites', i, 'transport'))}")
        for door, t in (("transport", s.transport), ("files", s.files)):
            problem = ssh_file_problem(t, missing_home_files=False) \
                if t is not None and t.kind == "ssh" else \
                token_file_problem(t) if t is not None else None
            if problem:
                key = problem.split(":", 1)[0]
                raise BadInput(f"{where}: {door}.{problem}"
                               f"{_line_note(root, ('sites', i, door, key))}")
    return cfg


# the list keys whose null is not the key left out: what each is to be written as instead
_LISTS_GIVEN = {
    "allowed_partitions": "list the partitions jobs may use ([debug, gpu], or one `- debug` "
                          "per line), or leave the key out to allow every partition",
    "pbs_servers": "list the names of the site's own PBS server ([pbs01, "
                   "pbs01.example.org], or one `- pbs01` per line), or leave the key out "
                   "when jobs name no server (`-q QUEUE@SERVER`)",
}


def _partitions_given(raw: dict[str, Any], p: Path, root: yaml.Node | None) -> None:
    """BadInput for a site whose `allowed_partitions:` or `pbs_servers:` is written with no
    value (nothing, `~` or `null`, perhaps through a merge key): YAML reads it as null,
    which the model takes as the key left out (every partition allowed, no server of its
    own) where the admin meant a list. Checked on the file, not the model: a configuration
    built in code may leave them None."""
    sites = raw.get("sites")
    for i, entry in enumerate(sites if isinstance(sites, list) else []):
        if not isinstance(entry, dict):
            continue
        key = next((k for k in _LISTS_GIVEN if k in entry and entry[k] is None), None)
        if key is None:
            continue
        loc = ("sites", i, key)
        node = node_at(root, loc)
        written = getattr(node, "value", "")
        said = f"`{written}` is no value" if written else "written with no value"
        raise BadInput(f"sites file {p}: {_where(raw, loc)}: {said} (YAML reads it as null, "
                       f"not a list): {_LISTS_GIVEN[key]}{_line_note(root, loc)}")


# a job directive of each scheduler, at the start of a preamble line
_DIRECTIVE = re.compile(r"\s*#\s*(SBATCH(?=\s)|PBS(?=\s)|BSUB(?=\s)|\$|(?i:flux):)\s*(.*)")


def _preamble_directive(site: SiteConfig) -> tuple[int, str, str] | None:
    """The first line of a site's preamble that is a job directive (`#SBATCH -p gpu`): its
    number, its text and what to write instead; None when there is none."""
    for number, line in enumerate(site.preamble.splitlines(), 1):
        if m := _DIRECTIVE.match(line):
            option = m.group(2).split()[:1]
            hint = {"-p": "a default partition is default_partition: NAME",
                    "--partition": "a default partition is default_partition: NAME",
                    "-q": "a default queue is default_partition: NAME",
                    "-A": "a default account is default_account: NAME",
                    "--account": "a default account is default_account: NAME",
                    "-P": "a default project is default_account: NAME"}.get(
                        (option[0].split("=")[0] if option else ""),
                        "a job's own directives go in its script")
            return number, line.strip(), hint
    return None


def _keys_are_text(raw: dict[str, Any], p: Path, root: yaml.Node | None) -> None:
    """A key YAML read as a number, a boolean or null (`5:` in a site, `true:` under its
    transport), once validation found one: BadInput naming the site, the key as written and
    its line, with the keys accepted there (pydantic said "Keys should be strings"). What
    `x-` blocks and a site's `metadata` hold is anything, and is not looked into."""
    from .strict_yaml import first_key_not_text, key_not_text

    def anything(loc: tuple[Any, ...]) -> bool:
        return len(loc) == 1 and str(loc[0]).startswith("x-") or \
            len(loc) == 4 and loc[0] == "sites" and loc[2] == "metadata"

    found = first_key_not_text(raw, skip=anything)
    if found is None:
        return
    loc, key = found
    said, line = key_not_text(root, loc, key)
    model = _model_at(loc)
    hint = f"accepted here: {', '.join(model.model_fields)}" + (
        ", and x-NAME blocks holding YAML anchors" if model is FederationConfig else "") \
        if model is not None else "quote it if it is meant as text"
    where = _where(raw, loc) or "the top level"
    raise BadInput(f"sites file {p}: {where}: key {_printable(said)}, not a name; {hint}"
                   f"{line}")


# colons of other scripts (an input method's full-width one, a ratio sign) YAML does not
# read as the colon after a key
_LOOKALIKE_COLONS = {"\uff1a": "a full-width colon", "\ufe55": "a small colon",
                     "\u2236": "a ratio sign", "\ua789": "a modifier letter colon"}


def _lookalike_colon_hint(text: str) -> str:
    """' (line N holds ...)': the first line with a colon YAML does not read as one."""
    for number, line in enumerate(text.splitlines(), 1):
        for char, name in _LOOKALIKE_COLONS.items():
            if char in line:
                return (f" (line {number} holds {char!r}, {name} (U+{ord(char):04X}), "
                        "not the ':' YAML reads after a key: type ':' there)")
    return ""


def _folded_preambles(text: str, root: yaml.Node | None, cfg: FederationConfig) -> set[int]:
    """The sites whose preamble is a folded block (`>`) written over several lines of `text`
    (read as the YAML tree `root`): YAML joined them into one line (`module load slurm
    module load gcc`, modules named `module` and `load`)."""
    if not any(s.preamble.strip() and "\n" not in s.preamble.strip() for s in cfg.sites):
        return set()
    sites = next((v for k, v in getattr(root, "value", []) if isinstance(root, yaml.MappingNode)
                  and isinstance(k, yaml.ScalarNode) and k.value == "sites"), None)
    out: set[int] = set()
    for i, entry in enumerate(sites.value if isinstance(sites, yaml.SequenceNode) else []):
        node = next((v for k, v in entry.value if isinstance(k, yaml.ScalarNode)
                     and k.value == "preamble"), None) \
            if isinstance(entry, yaml.MappingNode) else None
        if isinstance(node, yaml.ScalarNode) and node.style == ">" and \
                "\n" not in node.value.strip() and \
                sum(1 for ln in text[node.start_mark.index:node.end_mark.index].split("\n")[1:]
                    if ln.strip()) > 1:  # two lines or more joined
            out.add(i)
    return out


def _key_at_fault(raw: Any, loc: tuple[Any, ...], msg: str) -> tuple[Any, ...]:
    """`loc` and the key a mapping's own check named first in its message (`host: '@login':
    nothing before '@'` raised for the whole transport), so that the line said is the key's."""
    node = raw
    for part in loc:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return loc
    key = re.match(r"([A-Za-z_][\w-]*): ", msg.removeprefix("Value error, "))
    if isinstance(node, dict) and key and key[1] in node:
        return (*loc, key[1])
    return loc


def _line_note(root: yaml.Node | None, loc: tuple[Any, ...], said: str = "") -> str:
    """' (line N)': where in the sites file (read as the YAML tree `root`) `loc` is (a
    problem found after loading); a value YAML read as a boolean from another word (`on`) is
    named too, unless the message `said` tells it already."""
    line = line_of(root, loc)
    word = boolean_word(node_at(root, loc)) if "YAML" not in said else ""
    return f" (line {line}{word})" if line else ""
