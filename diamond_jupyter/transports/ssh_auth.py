"""SSH plumbing for `SSHTransport`: ~/.ssh/config, host key checks, authentication.

Everything here is blocking (paramiko) and runs in the transport's thread pool.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import functools
import getpass
import hashlib
import inspect
import ipaddress
import os
import pwd
import re
import shlex
import socket
import stat
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from hmac import compare_digest as hmac_equal
from pathlib import Path
from typing import Any

import paramiko

from ..config import TransportConfig, parse_hop, ssh_config_problem, ssh_file_problem
from ..digits import ascii_digits
from ..log_lines import one_line_logger
from ..model import BadInput, SiteError, time_value, visible
from . import ssh_cert
from .base import AuthError, HostKeyError, InteractiveHandler, read_named_file
from .ssh_config_lines import (
    KEYWORDS,
    check_line,
    ignore_patterns,
    is_ignored,
    without_comment,
)

log = one_line_logger(__name__)
_append_lock = threading.Lock()
DEFAULT_IDENTITIES = ("~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa")
# ssh's known_hosts files where ssh_config names none (`ssh -G`'s userknownhostsfile under
# the home, and globalknownhostsfile)
DEFAULT_USER_KNOWN_HOSTS = (".ssh/known_hosts", ".ssh/known_hosts2")
DEFAULT_GLOBAL_KNOWN_HOSTS = ("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2")


def ssh_home(user: str | None = None) -> str:
    """The home ssh's `~` (`~USER`) and %d stand for: the password database's, as ssh reads
    it, never $HOME (KeyError: no such user). A uid the database lacks (a container's) falls
    back to $HOME, where ssh would refuse to run."""
    try:
        return (pwd.getpwnam(user) if user else pwd.getpwuid(os.getuid())).pw_dir
    except KeyError:
        if user:
            raise
        return os.path.expanduser("~")


def ssh_path(path: str) -> str:
    """`path` with a leading `~` (`~USER`) as ssh expands it: `ssh_home`'s, not $HOME's
    (KeyError: no such user)."""
    if not path.startswith("~"):
        return path
    user, slash, rest = path[1:].partition("/")
    return ssh_home(user or None) + slash + rest


@dataclass
class HostSpec:
    alias: str
    hostname: str
    port: int = 22
    user: str = ""
    identity_files: list[str] = field(default_factory=list)
    proxy_jump: str | None = None
    # a ProxyCommand of ssh_config that names no jump host: why the host cannot be reached
    # as ssh would reach it (said when the chain is taken from ssh_config)
    proxy_problem: str | None = None
    # ssh_config's UserKnownHostsFile, expanded (None: not given, ssh's defaults; []: none)
    known_hosts_files: list[str] | None = None
    # ssh_config's IdentityAgent: the agent socket ssh uses for this host ("none": no
    # agent, "SSH_AUTH_SOCK": the environment's); None: not given (the environment's)
    identity_agent: str | None = None
    # ssh_config's CertificateFile: certificates offered with the identity they certify
    certificate_files: list[str] = field(default_factory=list)
    # ssh_config's IdentitiesOnly: of the agent's keys, only those of the identity files
    identities_only: bool = False
    # ssh_config's HostKeyAlias: the name the host's key is listed under in known_hosts
    host_key_alias: str | None = None
    # ssh_config's RevokedHostKeys: a file of host keys never to accept
    revoked_host_keys: str | None = None
    # ssh_config's GlobalKnownHostsFile as written (ssh expands nothing in it): the system's
    # known_hosts files in place of DEFAULT_GLOBAL_KNOWN_HOSTS (None: not given; []: none)
    global_known_hosts_files: list[str] | None = None
    # ssh_config's HashKnownHosts: a host trusted on first use is added under its hash
    hash_known_hosts: bool = False
    # ssh_config's ControlMaster, ControlPath and ControlPersist, as written (None: not
    # given): ssh's own connection sharing, which `kept_login` reads
    control_master: str | None = None
    control_path: str | None = None
    control_persist: str | None = None
    # the ControlPath's socket, its tokens expanded as the installed ssh expands them (None:
    # no ControlPath, or `none`)
    control_socket: str | None = None
    # ssh_config's StrictHostKeyChecking as written and the line giving it (None: not
    # given): never makes a check weaker; `yes` keeps trust_on_first_use from adding a key
    strict_host_key_checking: str | None = None
    strict_origin: str = "ssh_config"
    # where ssh_config gives a KnownHostsCommand, which is never run (None: not given)
    known_hosts_command: str | None = None

    @property
    def label(self) -> str:
        return f"{self.user}@{self.hostname}:{self.port}"

    @property
    def known_hosts_name(self) -> str:
        """The host's name in known_hosts: its HostKeyAlias as written (ssh adds no port
        to it), else `host`, `[host]:port` off port 22."""
        if self.host_key_alias:
            return self.host_key_alias
        return self.hostname if self.port == 22 else f"[{self.hostname}]:{self.port}"


# `Match exec CMD` (paramiko runs CMD through a shell while looking a host up, as OpenSSH
# does): the engine runs no command an ssh_config names
_MATCH_EXEC = re.compile(r"^\s*match\b.*?\bexec\b", re.IGNORECASE)


class RawSSHConfig(paramiko.SSHConfig):
    """paramiko's ssh_config reader without its token expansion, which `resolve_host` does
    as OpenSSH does (paramiko read `%%h` as `%` and the host name, put the home for a `~`
    anywhere in a value, left `%p` in an IdentityFile and unknown tokens as text, and no
    `${VAR}`). `origins`: each line read, with the file and line it came from."""

    origins: list[tuple[Path, int, str]] = []
    # the login the sites file gives (as ssh's `-l USER`): what `Match user` is matched on
    given_user: str | None = None

    def _allowed_tokens(self, key: str) -> list[str]:
        return []

    def lookup(self, hostname: str) -> Any:
        """paramiko's lookup, with the second pass over the file only where ssh makes one
        (a `Match final` line, or a name canonicalized): paramiko always made it, so a
        `Match host login.hpc` above `Host hpc` / `HostName login.hpc`, or a `Match user ana`
        above `User ana`, applied where `ssh -G` does not apply it."""
        final = any(m.get("type") == "final" for context in self._config
                    for m in context.get("matches", []))
        first = self._lookup(hostname=hostname)
        first.setdefault("hostname", hostname)
        name = first["hostname"]
        if first.get("canonicalizehostname") in ("yes", "always") and name.count(".") <= int(
                first.get("canonicalizemaxdots", 1)):
            # ssh canonicalizes the HostName (paramiko the alias, dropping the HostName)
            name = self.canonicalize(name, first, first.get("canonicaldomains", "").split())
            first["hostname"] = name
            return self._lookup(name, first, canonical=True, final=True)
        if final or first.get("canonicalizehostname") in ("yes", "always"):
            # ssh's last pass is after canonicalization: `Match canonical` is met in it
            return self._lookup(hostname, first, canonical=True, final=True)
        return first

    def _lookup(self, hostname: str, options: Any = None, canonical: bool = False,
                final: bool = False) -> Any:
        if options is None and self.given_user:  # given first, as on ssh's command line
            options = paramiko.SSHConfigDict(user=self.given_user)
        return super()._lookup(hostname, options, canonical, final)


def _lookup(sshcfg: paramiko.SSHConfig, alias: str, user: str | None) -> Any:
    """ssh_config's options for `alias` logging in as `user` (None: ssh_config's User): a
    `Match user NAME` block applies to the site's own login (it was matched on the local
    user, or on ssh_config's User only)."""
    if not user or not isinstance(sshcfg, RawSSHConfig):
        return sshcfg.lookup(alias)
    seeded = copy.copy(sshcfg)
    seeded.given_user = user
    return seeded.lookup(alias)


def load_ssh_config(path: str | None) -> paramiko.SSHConfig:
    # ssh's own file under the password database's home; a file the sites file names as
    # written there (its `~` is the sites file's)
    p = Path(path).expanduser() if path else Path(ssh_home(), ".ssh", "config")
    if path and not p.exists():
        raise BadInput(f"ssh_config file {p} not found")
    if not p.exists():
        return RawSSHConfig()
    origins = _with_includes(p)
    try:
        cfg = RawSSHConfig.from_text("\n".join(line for _, _, line in origins))
        cfg.origins = origins
        return cfg
    except (paramiko.SSHException, ValueError) as e:  # ConfigParseError, a bad quote
        # (a UTF-8 BOM a Windows editor wrote, `User` without a value): one line, not a
        # traceback from every face
        raise BadInput(f"ssh_config {p}: cannot be read: {visible(str(e))[:200]}; fix that "
                       "line, or set transport.ssh_config to another file") from None


MAX_INCLUDE_DEPTH = 16  # as OpenSSH's readconf
# a line's keyword and its arguments (`Include x`, `Include=x`, `  host  a b`)
# (a keyword may hold digits, IdentityFile2, and stand alone: ssh reads it up to a blank or =)
_KEYWORD = re.compile(r"^\s*([A-Za-z][^\s=]*)(?:\s*=\s*|\s+|$)(.*?)\s*$")


# Match criteria paramiko evaluates; another (OpenSSH's `tagged`, `localnetwork`,
# `sessiontype`, `command`, `version`) it takes as met, applying the block to every host
_MATCH_KNOWN = {"all", "canonical", "final", "host", "originalhost", "user", "localuser"}


def _match_line(p: Path, n: int, line: str, rest: str) -> str:
    """A `Match` line as paramiko should read it: `tagged TAG` is not met (the engine
    asks ssh for no tag, as `ssh` without -P), `!tagged TAG` is; any other criterion
    paramiko does not evaluate is refused, naming it (its block was applied to every
    host)."""
    import shlex

    try:
        words = shlex.split(rest)
    except ValueError:
        return line  # paramiko says what is wrong with it
    kept: list[str] = []
    while words:
        kind = words.pop(0)
        name = kind.lstrip("!").lower()
        if name in ("all", "canonical", "final"):
            kept.append(kind)
            continue
        if not words:
            return line  # a criterion without its value: paramiko says so
        arg = words.pop(0)
        if name == "tagged":
            if not kind.startswith("!"):
                return "Match !localuser *"  # a criterion not met: the block is for no host
            continue
        if name not in _MATCH_KNOWN:
            raise BadInput(f"ssh_config {p} line {n}: 'Match {name}' is not evaluated by the "
                           "SSH library the engine uses (it would apply the block to every "
                           "host); write Host blocks, or set transport.ssh_config to a file "
                           "without it")
        kept += [kind, shlex.quote(arg)]
    return "Match " + (" ".join(kept) or "all")


MAX_SSH_CONFIG_BYTES = 16 << 20  # one ssh_config file; thousands of Host blocks are far less


def _config_text(p: Path) -> str:
    """The text of ssh_config file `p` (the default ~/.ssh/config, or one an Include names).
    Read only when it is a regular file: a FIFO nobody writes would hold every connection
    for ever, /dev/zero never ends."""
    try:
        data = read_named_file(p, MAX_SSH_CONFIG_BYTES, name=f"ssh_config {p}",
                               special="refuse", instead="make it a regular file, or set "
                               "transport.ssh_config to one")
    except IsADirectoryError:
        raise BadInput(f"ssh_config {p} is a directory, not a file: give the config "
                       "file (e.g. ~/.ssh/config), or set transport.ssh_config to one") from None
    except OSError as e:
        raise BadInput(f"ssh_config {p}: cannot be opened: {e.strerror}") from None
    if len(data) > MAX_SSH_CONFIG_BYTES:
        raise BadInput(f"ssh_config {p}: more than {MAX_SSH_CONFIG_BYTES} bytes, more than "
                       "an ssh_config holds: not read; set transport.ssh_config to the file "
                       "meant")
    return data.decode("utf-8", errors="replace")


def _with_includes(p: Path, depth: int = 0,
                   ignored: list[str] | None = None) -> list[tuple[Path, int, str]]:
    """ssh_config's text with each `Include` replaced by the files it names, as OpenSSH
    reads them (paramiko keeps `Include` as an unknown keyword: hosts defined in
    `~/.ssh/config.d/*` were not found, and the alias was dialled as a host name). A
    relative name is under ~/.ssh; globs in lexical order; a name matching nothing is
    skipped. At the top of a file the included Host blocks are taken as written (the
    including file's next lines are for every host again); inside a Host or Match block an
    included file of options only applies to that block, and one with Host blocks of its own
    is refused (ssh includes it only where the block matches: not followed here). A
    `Match exec` line in any of the files is refused, naming it. Each line comes with the
    file and line number it was read from. `ignored`: the patterns of every IgnoreUnknown
    line so far, in any block (an including file's holding in the files it includes, as in
    ssh): a keyword none names is refused here for every host; which of them holds for one
    host is checked when it is looked up (`_check_ignored_unknown`)."""
    import glob
    import shlex

    if (problem := ssh_config_problem(p)) is not None:
        raise BadInput(f"ssh_config {problem}")
    text = _config_text(p)
    out: list[tuple[Path, int, str]] = []
    block: str | None = None  # the Host or Match line the current line is under
    # the lines as paramiko reads them: "\n" ends one, and nothing else does (str.splitlines
    # also breaks at \v, \f, \x1c-\x1e, \x85, U+2028/9, which paramiko takes for blanks:
    # `Match\vexec CMD` was two harmless lines here and one `Match exec` there)
    ignored = [] if ignored is None else ignored  # IgnoreUnknown's patterns so far
    for n, line in enumerate(text.split("\n"), 1):
        line = without_comment(line)
        if _MATCH_EXEC.match(line):
            raise BadInput(f"ssh_config {p} line {n}: 'Match exec' runs a command whenever a "
                           "host is looked up, and the engine runs no command from "
                           "ssh_config; write Host blocks, give the site's host, user and "
                           "proxy_jump in the sites file, or set transport.ssh_config to a "
                           "file without it")
        m = _KEYWORD.match(line)
        word = m.group(1).lower() if m else ""
        if m:
            check_line(p, n, word, m.group(1), m.group(2), ignored)
        if word == "ignoreunknown":
            ignored += ignore_patterns(m.group(2))
        if word == "match":
            line = _match_line(p, n, line, m.group(2))
        if word in ("host", "match"):
            block = line
        if word != "include":
            out.append((p, n, line))
            continue
        if depth >= MAX_INCLUDE_DEPTH:
            raise BadInput(f"ssh_config {p} line {n}: Include nested more than "
                           f"{MAX_INCLUDE_DEPTH} deep (a file that includes itself?)")
        try:
            names = shlex.split(m.group(2)) if m else []
        except ValueError:
            raise BadInput(f"ssh_config {p} line {n}: Include {visible(m.group(2))[:100]!r}: "
                           "an unclosed quote") from None
        files: list[Path] = []
        for name in names:
            # ssh globs the name with GLOB_TILDE, whose `~` is $HOME's (unlike its other
            # paths, `ssh_path`): `ssh -G` reads an Include from $HOME/.ssh
            name = os.path.expanduser(name)
            if not os.path.isabs(name):
                name = os.path.join(os.path.expanduser("~/.ssh"), name)
            # a directory or a broken link is skipped; a FIFO or a device is refused
            files += [Path(f) for f in sorted(glob.glob(name))
                      if os.path.exists(f) and not os.path.isdir(f)]
        texts = [_with_includes(f, depth + 1, ignored) for f in files]
        blocks = next((f for f, t in zip(files, texts, strict=True) for _, _, x in t
                       if (k := _KEYWORD.match(x)) and k.group(1).lower() in
                       ("host", "match")), None)
        if blocks is not None and block is not None:
            raise BadInput(f"ssh_config {p} line {n}: an Include inside a Host or Match block "
                           f"names {blocks}, which has Host or Match blocks of its own (ssh "
                           "reads them only where the enclosing block matches): not followed "
                           "here; move the Include to the top of the file, or give the site's "
                           "host, user and proxy_jump in the sites file")
        out += [line for t in texts for line in t]
        if blocks is not None:
            out.append((p, n, "Host *"))  # this file's next lines are for every host again
    return out


# `login.example.org:2222`, `10.0.0.5:2222`, `[2001:db8::5]:2222` (a port where HostName
# takes none)
_HOST_WITH_PORT = re.compile(r"^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9_.-]+)):([0-9]{1,5})$")


def resolve_host(
    sshcfg: paramiko.SSHConfig,
    alias: str,
    *,
    port: int | None = None,
    user: str | None = None,
    key_file: str | None = None,
    proxy_jump: str | None = None,
) -> HostSpec:
    """Apply ssh_config to `alias`; explicit arguments win, as on the ssh command line (a
    `proxy_jump` given, `none` included, sets aside the file's ProxyJump and ProxyCommand).
    Of ProxyJump and ProxyCommand the first the file gives wins (`ProxyCommand none` too),
    as in ssh. Tokens and `${VAR}` are expanded where OpenSSH expands them (`expand`)."""
    _check_ignored_unknown(sshcfg, alias, user)
    c = _lookup(sshcfg, alias, user)
    if port is None and "port" in c:
        written = c["port"]
        port = _port_number(written)
        if port is None:
            raise BadInput(f"{_origin(sshcfg, 'port', written)}: Port {written!r} of Host "
                           f"{alias} is not a port: a number from 1 to 65535 (or a service "
                           "name of /etc/services, such as ssh)")
    port = port or 22
    user = user or c.get("user") or getpass.getuser()
    # "proxycommand" holds None for `ProxyCommand none`; the one of the two looked up first
    # is the one ssh_config gave first for this host
    first = next((k for k in c if k in ("proxyjump", "proxycommand")), None)
    jump = proxy_jump if proxy_jump is not None else \
        c["proxyjump"] if first == "proxyjump" else ""  # what %j is of (`ssh -J` first)
    ctx = _TokenValues(sshcfg, alias, "", port, user, jump_host(jump),
                       (c.get("hostkeyalias") or "").lower() or alias, openssh_version())
    hostname = expand(ctx, "hostname", c.get("hostname", alias))
    if "hostname" in c and (m := _HOST_WITH_PORT.match(hostname)):
        # ssh dials such a name as written: "Could not resolve hostname", at every command
        raise BadInput(f"{_origin(sshcfg, 'hostname', c['hostname'])}: HostName "
                       f"{hostname!r} of Host {alias} holds a port; ssh_config gives it on a "
                       f"line of its own: HostName {m.group(1) or m.group(2)} and Port "
                       f"{m.group(3)}")
    hostname = _lowercase_name(hostname)
    ctx.host = hostname
    # the sites file's key_file takes its `~` as that file does; ssh_config's, as ssh does
    ids = [os.path.expanduser(key_file)] if key_file else []
    ids += [expand(ctx, "identityfile", i) for i in c.get("identityfile", [])]
    pj = c.get("proxyjump")
    pc = c.get("proxycommand")
    problem = None
    if first == "proxycommand":
        pj = None
    if proxy_jump is None and not pj and pc and pc.strip().lower() != "none":
        try:
            pj = proxy_command_hop(alias, expand(ctx, "proxycommand", pc))
        except BadInput as e:
            problem = str(e)
    elif pj and proxy_jump is None:  # the site's own proxy_jump sets the file's aside
        pj = expand(ctx, "proxyjump", pj)
    known = None if "userknownhostsfile" not in c else [] if \
        c["userknownhostsfile"].strip().lower() == "none" else [
            expand(ctx, "userknownhostsfile", f)
            for f in _file_list(sshcfg, "userknownhostsfile", c["userknownhostsfile"])]
    return HostSpec(
        alias=alias,
        hostname=hostname,
        port=port,
        user=user,
        identity_files=ids,
        proxy_jump=None if not pj or pj.lower() == "none" else pj,
        proxy_problem=problem,
        known_hosts_files=known,
        identity_agent=_agent_path(ctx, c.get("identityagent")),
        certificate_files=[expand(ctx, "certificatefile", f)
                           for f in _every_value(sshcfg, alias, "certificatefile", user)],
        identities_only=c.get("identitiesonly", "no").lower() == "yes",
        host_key_alias=c["hostkeyalias"].lower() if c.get("hostkeyalias") else None,
        revoked_host_keys=expand(ctx, "revokedhostkeys", c["revokedhostkeys"])
        if c.get("revokedhostkeys", "none").lower() != "none" else None,
        global_known_hosts_files=None if "globalknownhostsfile" not in c else [] if
        c["globalknownhostsfile"].strip().lower() == "none" else
        _file_list(sshcfg, "globalknownhostsfile", c["globalknownhostsfile"]),
        hash_known_hosts=c.get("hashknownhosts", "no").lower() == "yes",
        control_master=c.get("controlmaster"),
        control_path=c.get("controlpath"),
        control_socket=expand(ctx, "controlpath", c["controlpath"])
        if c.get("controlpath", "none").lower() != "none" else None,
        control_persist=c.get("controlpersist"),
        strict_host_key_checking=c.get("stricthostkeychecking"),
        strict_origin=_origin(sshcfg, "stricthostkeychecking",
                              c.get("stricthostkeychecking") or ""),
        known_hosts_command=_origin(sshcfg, "knownhostscommand", c["knownhostscommand"])
        if (c.get("knownhostscommand") or "none").lower() != "none" else None,
    )


def _agent_path(ctx: _TokenValues, written: str | None) -> str | None:
    """ssh_config's IdentityAgent with its tokens, `~` and `${VAR}` expanded as ssh does;
    `none`, `SSH_AUTH_SOCK` and `$SSH_AUTH_SOCK` (the environment's socket) as written."""
    if written is None or written.lower() == "none" or written.strip("$") == "SSH_AUTH_SOCK":
        return written
    return expand(ctx, "identityagent", written.strip('"'))


def _port_number(written: str) -> int | None:
    """ssh_config's Port as ssh reads it: a number from 1 to 65535 or a TCP service's name
    (`Port ssh` is 22: it was refused); None for neither."""
    if written.isascii() and ascii_digits(written):
        return int(written) if 0 < int(written) < 65536 else None
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9-]*", written):
        return None
    try:
        return socket.getservbyname(written, "tcp")
    except OSError:
        return None


def _lowercase_name(host: str) -> str:
    """The host dialled as ssh names it: a host name in lower case (`%h` in an IdentityFile
    or ControlPath, the name added to known_hosts), an IP address as written."""
    try:
        ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return host.lower()
    return host


def _file_list(sshcfg: paramiko.SSHConfig, key: str, value: str) -> list[str]:
    """The files of a UserKnownHostsFile or GlobalKnownHostsFile line, split as ssh splits
    them: a path holding blanks is in double quotes (`"~/Library/Application Support/kh"`
    was read as two files, `"~/Library/Application` and `Support/kh"`)."""
    import shlex

    # as written: paramiko takes the quotes off a value quoted whole (`"a b"` read as `a b`,
    # the two files of `a b` unquoted)
    for _, _, line in getattr(sshcfg, "origins", []):
        m = _KEYWORD.match(line)
        if m and m.group(1).lower() == key and value in (m.group(2), m.group(2)[1:-1]):
            value = m.group(2)
            break
    try:
        return shlex.split(value)
    except ValueError:
        raise BadInput(f"{_origin(sshcfg, key, value)}: {_KEYWORD_NAMES[key]} "
                       f"{visible(value)[:100]!r}: an unclosed quote") from None


def _check_ignored_unknown(sshcfg: paramiko.SSHConfig, alias: str, user: str | None) -> None:
    """Refuse a keyword ssh_config does not know that an IgnoreUnknown line names, but not
    one that holds for `alias`: as in ssh, the first IgnoreUnknown of a block matching the
    host is the one that holds, from its line on (one in another host's block held for every
    host here, and a misspelt HostName was passed over instead of refused)."""
    origins = getattr(sshcfg, "origins", [])
    words = [m.group(1) if (m := _KEYWORD.match(line)) else "" for _, _, line in origins]
    unknown = [i for i, w in enumerate(words) if w and w.lower() not in KEYWORDS]
    if not unknown:
        return
    # each IgnoreUnknown line's value made its index: the lookup says which one holds
    marked = [f"IgnoreUnknown @{i}" if w.lower() == "ignoreunknown" else line
              for i, (w, (_, _, line)) in enumerate(zip(words, origins, strict=True))]
    held = _lookup(RawSSHConfig.from_text("\n".join(marked)), alias, user).get("ignoreunknown")
    first = int(held[1:]) if held else len(origins)
    patterns: list[str] = []
    if held and (m := _KEYWORD.match(origins[first][2])):
        patterns = ignore_patterns(m.group(2))
    for i in unknown:
        path, n, _ = origins[i]
        word = visible(words[i])[:60]
        if i > first and is_ignored(words[i], patterns):
            continue
        where = f"{origins[first][0]} line {origins[first][1]}" if held else ""
        why = ("the IgnoreUnknown lines naming it are in blocks that do not match it"
               if not held else f"it comes before the IgnoreUnknown that holds ({where})"
               if i < first else f"the IgnoreUnknown that holds ({where}) does not name it")
        raise BadInput(f"ssh_config {path} line {n}: {word!r} is not an ssh_config keyword, "
                       f"and for Host {alias} {why}: ssh refuses the file for this host too "
                       "(Bad configuration option; only the first IgnoreUnknown of a block "
                       "matching the host holds); name it in one IgnoreUnknown line at the top "
                       f"of the file, above every Host line (IgnoreUnknown "
                       f"{','.join([*patterns, word])}), or remove the line")


@dataclass
class KeptLogin:
    """How long ssh would keep this host's master connection after its last use (ControlMaster
    with ControlPersist): `idle_s` None for until it is told to exit; `origin` the line."""

    idle_s: float | None
    origin: str


_MASTER_ON = ("yes", "auto", "ask", "autoask")


def kept_login(sshcfg: paramiko.SSHConfig, spec: HostSpec) -> KeptLogin | None:
    """The login ssh would keep for `spec`'s host: ControlPersist `yes` or `0` (until told to
    exit) or a time (`30m`: after that long unused), with a ControlMaster sharing it and a
    ControlPath; None when ssh keeps nothing past its command (`ControlPersist no`, none
    given, ControlMaster no, ControlPath none or none given). A ControlPersist value ssh
    refuses is refused, naming its line."""
    persist = (spec.control_persist or "").strip()
    if not persist:
        return None
    origin = _origin(sshcfg, "controlpersist", persist)
    word = persist.lower()
    if word in ("yes", "true"):
        seconds: float | None = None
    elif word in ("no", "false"):
        return None
    elif (value := time_value(persist)) is not None:
        seconds = float(value) or None  # `0`: as yes
    else:
        raise BadInput(f"{origin}: ControlPersist {visible(persist)[:60]!r} is not yes, no or "
                       "a time such as 600, 10m or 1h30m (ssh refuses it too: Bad "
                       "ControlPersist argument)")
    master = (spec.control_master or "no").strip().lower()
    path = (spec.control_path or "none").strip().lower()
    if master not in _MASTER_ON or path == "none":
        return None  # ControlPersist alone: ssh shares and keeps nothing
    return KeptLogin(seconds, f"{origin}: ControlPersist {persist}")


def _every_value(sshcfg: paramiko.SSHConfig, alias: str, key: str, user: str) -> list[str]:
    """Every value ssh_config gives `alias` for `key`, a keyword OpenSSH takes many times
    (CertificateFile: each certificate is tried), in order; paramiko keeps the first only.
    Read by a lookup where those lines are paramiko's IdentityFile, which it keeps all of."""
    origins = getattr(sshcfg, "origins", [])
    if not origins:
        return _listed(_lookup(sshcfg, alias, user).get(key))
    lines = []
    for _, _, line in origins:
        m = _KEYWORD.match(line)
        word = m.group(1).lower() if m else ""
        if word != "identityfile":
            lines.append(f"IdentityFile {m.group(2)}" if m and word == key else line)
    every = RawSSHConfig.from_text("\n".join(lines))
    return _listed(_lookup(every, alias, user).get("identityfile"))


# the OpenSSH release that added `%j` (the ProxyJump host) and put it in `%C`'s hash
JUMP_TOKEN_SINCE = (9, 4)


@functools.cache
def openssh_version() -> tuple[int, int] | None:
    """The installed OpenSSH's release (`ssh -V`: `OpenSSH_9.2p1 ...` -> (9, 2)), whose
    reading of ssh_config's tokens the engine follows, so that a path the user's own ssh
    makes (a ControlPath, an IdentityFile) is the one the engine makes; None when no ssh
    is installed or it names no release."""
    try:
        said = subprocess.run(["ssh", "-V"], capture_output=True, text=True, timeout=10,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"OpenSSH_([0-9]+)\.([0-9]+)", said.stderr + said.stdout)
    return (int(m.group(1)), int(m.group(2))) if m else None


def jump_host(proxy_jump: str) -> str:
    """The host of a ProxyJump's last hop, the one that reaches the target (`ana@gw1:2222,
    gw2` -> `gw2`), as OpenSSH keeps it for `%j`; "" for none."""
    last = proxy_jump.strip().rsplit(",", 1)[-1].strip()
    if not last or last.lower() == "none":
        return ""
    try:
        return parse_hop(last)[1]
    except ValueError:
        return last


@dataclass
class _TokenValues:
    """What ssh_config's tokens stand for, for one host: `%h` the host dialled (after
    HostName), `%n` the name given, `%p` the port, `%r` the remote login, `%j` the host of
    the ProxyJump's last hop. `openssh`: the release whose tokens are read (None: the
    newest rules)."""

    config: paramiko.SSHConfig
    alias: str
    host: str
    port: int
    user: str
    jump: str
    key_alias: str
    openssh: tuple[int, int] | None = None

    @property
    def knows_jump(self) -> bool:
        return self.openssh is None or self.openssh >= JUMP_TOKEN_SINCE

    def value(self, letter: str) -> str | None:
        local = socket.gethostname()
        values = {
            "%": "%", "d": ssh_home(), "h": self.host or self.alias,
            "i": str(os.getuid()), "k": self.key_alias, "L": local.split(".")[0],
            "l": local, "n": self.alias, "p": str(self.port), "r": self.user,
            "u": getpass.getuser()}
        if self.knows_jump:
            values["j"] = self.jump
        if letter == "C":  # a hash of %l%h%p%r, and of %j too from OpenSSH 9.4
            return hashlib.sha1("".join(values.get(x, "") for x in "lhprj").encode()
                                ).hexdigest()
        return values.get(letter)


# the tokens each ssh_config keyword takes (ssh_config(5), TOKENS), and whether it reads
# ${VAR}; any other keyword is taken as written
_PATH_TOKENS = "%CdhijkLlnpru"
_TOKENS = {"hostname": ("%h", False), "proxycommand": ("%hnpr", False),
           "proxyjump": ("%hnpr", False), "identityfile": (_PATH_TOKENS, True),
           "certificatefile": (_PATH_TOKENS, True), "userknownhostsfile": (_PATH_TOKENS, True),
           "revokedhostkeys": (_PATH_TOKENS, True), "controlpath": (_PATH_TOKENS, True),
           "identityagent": (_PATH_TOKENS, True)}
_TOKEN_OR_VARIABLE = re.compile(r"%(.?)|\$\{([^}]*)\}")
_KEYWORD_NAMES = {"hostname": "HostName", "proxycommand": "ProxyCommand",
                  "proxyjump": "ProxyJump", "identityfile": "IdentityFile",
                  "certificatefile": "CertificateFile", "userknownhostsfile":
                  "UserKnownHostsFile", "port": "Port", "revokedhostkeys": "RevokedHostKeys",
                  "globalknownhostsfile": "GlobalKnownHostsFile", "controlpath": "ControlPath",
                  "identityagent": "IdentityAgent"}


def expand(ctx: _TokenValues, key: str, value: str) -> str:
    """ssh_config value `value` of keyword `key` as OpenSSH reads it: a leading `~` is the
    password database's home (files only, `ssh_path`), `%%` is `%`, the keyword's tokens
    (`%h`, `%p`, ...) their values (%d that home too) and, in file paths, `${VAR}` the
    environment's, in one pass. A token the keyword does not take, or a variable not set, is
    bad input naming the file and line (ssh refuses such a line too)."""
    letters, variables = _TOKENS.get(key, ("", False))
    written, name = value, _KEYWORD_NAMES.get(key, key)
    if variables and value.startswith("~"):  # `~/` the user's home, `~USER/` USER's
        user = value[1:].partition("/")[0]
        try:
            value = ssh_path(value)
        except KeyError:
            raise BadInput(f"{_origin(ctx.config, key, written)}: {name} {written!r}: no "
                           f"user {visible(user)[:40]} in the password database (~USER/ is "
                           "USER's home, ~/ yours)") from None

    def one(m: re.Match[str]) -> str:
        if m.group(2) is None:
            letter = m.group(1)
            if letter and letter in letters and (found := ctx.value(letter)) is not None:
                return found
            takes = ", ".join(f"%{x}" for x in letters if x != "j" or ctx.knows_jump)
            zone = " (an IPv6 address's zone is written fe80::1%%eth0 there)" \
                if key == "hostname" and ":" in written.split("%")[0] else ""
            if letter == "j" and "j" in letters and ctx.openssh:
                zone = (" (%j, the ProxyJump host, is read from OpenSSH "
                        f"{'.'.join(map(str, JUMP_TOKEN_SINCE))} on; the ssh installed here "
                        f"is OpenSSH {'.'.join(map(str, ctx.openssh))}, which refuses it "
                        "too: unknown key %j; write the jump host's name out)")
            raise BadInput(f"{_origin(ctx.config, key, written)}: {name} {written!r}: "
                           f"{'%' + letter if letter else 'a % at the end'} is not a token "
                           f"{name} takes (it takes {takes}; %% is a %){zone}")
        if not variables:
            return m.group(0)  # not read in this keyword: as written
        if (found := os.environ.get(m.group(2))) is None:
            raise BadInput(f"{_origin(ctx.config, key, written)}: {name} {written!r} names "
                           f"${{{m.group(2)}}}, which is not set in this environment; set "
                           "it, or write the path out")
        return found

    return _TOKEN_OR_VARIABLE.sub(one, value)


def _origin(sshcfg: paramiko.SSHConfig, key: str, value: str) -> str:
    """`ssh_config FILE line N`: the first line giving keyword `key` the value `value`."""
    for path, n, line in getattr(sshcfg, "origins", []):
        m = _KEYWORD.match(line)
        if m and m.group(1).lower() == key and value in m.group(2):
            return f"ssh_config {path} line {n}"
    return "ssh_config"


def _listed(value: str | list[str] | None) -> list[str]:
    """An ssh_config value paramiko keeps as one string or as a list, as a list."""
    return [] if not value else [value] if isinstance(value, str) else list(value)


def proxy_command_hop(alias: str, command: str) -> str:
    """ssh_config's `ProxyCommand [exec] ssh -W %h:%p [-q] [-p PORT] [-l USER] [USER@]GW` as the
    jump host it names (`USER@GW:PORT`); any other ProxyCommand is bad input saying so: no
    local command is run to connect (it was ignored, and the connection went straight to a
    host that only the proxy reaches)."""
    import shlex

    why = (f"ssh_config gives Host {alias} the ProxyCommand {command!r}, which is not run "
           "(no local command is run to connect): write the jump host as `ProxyJump GW` there, "
           "or `proxy_jump: GW` (`none` to connect directly) in the sites file")
    try:
        words = shlex.split(command)
    except ValueError:
        raise BadInput(why) from None
    if words[:1] == ["exec"]:  # `exec ssh -W ...`: the shell replaced by the same ssh
        words = words[1:]
    if not words or os.path.basename(words[0]) != "ssh" or "-W" not in words:
        raise BadInput(why)
    user = port = None
    dest: list[str] = []
    i = 1
    while i < len(words):
        w = words[i]
        if w in ("-W", "-p", "-l") and i + 1 < len(words):
            if w == "-p":
                port = words[i + 1]
            elif w == "-l":
                user = words[i + 1]
            i += 2
            continue
        if w in ("-q", "-T", "-x", "-4", "-6", "-C", "-a", "-k"):
            i += 1
            continue
        if w.startswith("-"):
            raise BadInput(why)  # an option that changes the connection
        dest.append(w)
        i += 1
    if len(dest) != 1:
        raise BadInput(why)
    hop = dest[0]
    if user and "@" not in hop:
        hop = f"{user}@{hop}"
    if port:
        hop = f"{hop}:{port}"
    try:
        parse_hop(hop)
    except ValueError as e:
        raise BadInput(f"{why} ({e})") from None
    return hop


MAX_JUMPS = 8  # hops in one chain, those ssh_config adds included


def parse_jump(sshcfg: paramiko.SSHConfig, chain: str | None,
               _through: tuple[str, ...] = ()) -> list[HostSpec]:
    """`user@host:port,host2` -> hops, each resolved through ssh_config. A hop that is not
    a host (an ssh option, a bad port) is bad input, never passed on. As ssh does, the first
    hop is reached through its own ssh_config ProxyJump (`Host hop` / `ProxyJump gw`: gw,
    then hop), and so on up the chain; a loop or more than MAX_JUMPS hops is bad input."""
    hops = []
    for item in (chain or "").split(","):
        item = item.strip()
        if not item or item.lower() == "none":
            continue
        try:
            user, host, port = parse_hop(item)
        except ValueError as e:
            raise BadInput(f"proxy_jump: {e}") from None
        hops.append(resolve_host(sshcfg, host, port=port, user=user))
    if hops and hops[0].proxy_problem:
        raise BadInput(hops[0].proxy_problem)
    if hops and hops[0].proxy_jump:
        first = hops[0].label
        if first in _through:
            loop = " -> ".join((*_through[_through.index(first):], first))
            hint = ""
            if len(_through) - _through.index(first) == 1:  # the jump host jumps through itself
                name = first.split("@")[-1].rsplit(":", 1)[0]
                hint = (f"; a Host pattern that matches the jump host too gives it its own "
                        f"ProxyJump (ssh says `jumphost loop`): leave it out with !{name} on "
                        "that Host line")
            raise BadInput(f"proxy_jump: the jump hosts of ssh_config make a loop "
                           f"({loop}){hint}")
        hops = parse_jump(sshcfg, hops[0].proxy_jump, (*_through, first)) + hops
    if len(hops) > MAX_JUMPS:
        raise BadInput(f"proxy_jump: more than {MAX_JUMPS} jump hosts in one chain (with "
                       f"those ssh_config adds: {', '.join(h.label for h in hops)})")
    return hops


def _host_listed(patterns: list[str], name: str) -> bool:
    """Whether a known_hosts line's host list names host `name` (`host` or `[host]:port`),
    as OpenSSH reads it: names and `*`/`?` patterns without regard to case, `|1|` hashed
    names, and a `!pattern` that matches refusing the line for that host (paramiko's own
    lookup compared names exactly: a center's `*.hpc.example.org` line was not found)."""
    listed = False
    for p in patterns:
        if p.startswith("|1|"):
            listed = listed or any(hmac_equal(paramiko.HostKeys.hash_host(n, p), p)
                                   for n in dict.fromkeys((name, name.lower())))
            continue
        negated = p.startswith("!")
        pattern = re.escape(p.removeprefix("!").lower()).replace(r"\*", ".*").replace(r"\?", ".")
        if re.fullmatch(pattern, name.lower()):
            if negated:
                return False
            listed = True
    return listed


def check_local_files(site: str, cfg: TransportConfig) -> None:
    """The files a site's settings name, checked before any connection (see
    `ssh_file_problem`)."""
    problem = ssh_file_problem(cfg)
    if problem:
        raise BadInput(f"site {site}: transport.{problem}")


def fingerprint(key: paramiko.PKey) -> str:
    digest = base64.b64encode(hashlib.sha256(key.asbytes()).digest()).decode().rstrip("=")
    return f"{key.get_name()} SHA256:{digest}"


class HostKeyVerifier:
    """known_hosts checks against the site's own file and exactly the files ssh reads for
    the host: ssh_config's UserKnownHostsFile and GlobalKnownHostsFile, else ssh's defaults
    (under the password database's home). Unknown hosts are refused unless
    trust_on_first_use (then appended to the site's file, else to the first
    UserKnownHostsFile, as ssh adds them); changed keys always are."""

    def __init__(self, site: str, known_hosts: str | None, tofu: bool):
        self.site, self.tofu = site, tofu
        self.given = os.path.expanduser(known_hosts) if known_hosts else None

    def _user_files(self, spec: HostSpec) -> list[str]:
        if spec.known_hosts_files is not None:
            return spec.known_hosts_files
        return [os.path.join(ssh_home(), f) for f in DEFAULT_USER_KNOWN_HOSTS]

    def _files(self, spec: HostSpec) -> list[str]:
        files = [self.given] if self.given else []
        files += self._user_files(spec)
        files += DEFAULT_GLOBAL_KNOWN_HOSTS if spec.global_known_hosts_files is None \
            else spec.global_known_hosts_files
        return list(dict.fromkeys(files))

    def own_file(self, spec: HostSpec) -> str | None:
        """Where a key trusted on first use is added: the site's file, else the first
        UserKnownHostsFile (where ssh adds it); None for `UserKnownHostsFile none`."""
        return self.given or next(iter(self._user_files(spec)), None)

    def _files_note(self, spec: HostSpec) -> str:
        """` (files read: A, B; not there: C)`: the known_hosts files looked in, and a
        GlobalKnownHostsFile holding `~`, a token or a variable, which ssh reads as written."""
        files = self._files(spec)
        read = [f for f in files if os.path.isfile(f)]
        absent = [f for f in files if f not in read]
        note = f"files read: {', '.join(read) or 'none'}"
        note += f"; not there: {', '.join(absent)}" if absent else ""
        literal = [f for f in spec.global_known_hosts_files or []
                   if f.startswith("~") or "%" in f or "${" in f]
        if literal:
            note += (f"; ssh reads GlobalKnownHostsFile {literal[0]} as written (it expands "
                     "no ~, %-token or ${VAR} there): write the path out")
        return f" ({note})"

    def _read(self, f: str) -> tuple[paramiko.HostKeys, dict[str, str],
                                     list[tuple[list[str], str]]] | None:
        """The host keys of known_hosts file `f` and the keys it marks `@revoked` (the key's
        base64, whatever type its line names -> "@revoked in FILE line N"); None when
        unreadable. paramiko's own reader knows no
        `@revoked` or `@cert-authority` marker: it raised InvalidHostKey on such a line
        (every connect failed with a traceback) and would never see a revoked key. Third:
        the host patterns of its `@cert-authority` lines, with where each is."""
        hk, revoked = paramiko.HostKeys(), {}
        authorities: list[tuple[list[str], str]] = []
        try:
            if not stat.S_ISREG(os.stat(f).st_mode):  # a FIFO would be waited on for ever
                log.warning("%s: ignoring known_hosts %s: not a regular file", self.site, f)
                return None
            with open(f, encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError as e:
            log.warning("%s: ignoring unreadable known_hosts %s: %s", self.site, f, e)
            return None
        for n, raw in enumerate(lines, 1):
            line = raw.strip()
            if n == 1 and line.startswith("\ufeff@revoked"):
                # ssh reads a byte-order mark as part of the line's first word, so it never
                # sees this revocation; a key meant revoked is refused here all the same
                parts = line.split()
                if len(parts) >= 4:
                    revoked[parts[3]] = (
                        f"@revoked in {f} line 1, which starts with a byte-order mark: ssh "
                        "passes that line over, and would accept the key; save the file as "
                        "UTF-8 without the mark")
                continue
            if not line or line.startswith("#"):
                continue
            if line.startswith("@"):  # a marker: @revoked HOSTS TYPE KEY, @cert-authority ...
                parts = line.split()
                if parts[0].lower() == "@revoked" and len(parts) >= 3 and \
                        _PUBLIC_KEY_LINE.match(f"{parts[1]} {parts[2]}"):
                    # `@revoked TYPE KEY`, the hosts left out: ssh reads the type as the
                    # hosts and the key as a type, and passes the line over; meant revoked
                    revoked[parts[2]] = (
                        f"@revoked in {f} line {n}, which lists no hosts: ssh passes that "
                        "line over, and would accept the key; write `@revoked * "
                        f"{visible(parts[1])[:40]} KEY`")
                elif parts[0].lower() == "@revoked" and len(parts) >= 4:
                    # ssh reads the marker only in lower case with a blank after it: a
                    # key meant revoked by `@REVOKED` or `@revoked<TAB>` is refused all the same
                    revoked[parts[3]] = f"@revoked in {f} line {n}" + (
                        "" if line.startswith("@revoked ") else
                        f", written {visible(line[:9])!r}: ssh passes that line over, and "
                        "would accept the key; write `@revoked` in lower case, a space after it")
                elif parts[0] == "@cert-authority" and len(parts) >= 4:
                    authorities.append((parts[1].split(","), f"{f} line {n}"))
                continue  # host certificates are not read: such a host is looked up by key
            try:
                entry = paramiko.hostkeys.HostKeyEntry.from_line(line, n)
            except (paramiko.SSHException, paramiko.hostkeys.InvalidHostKey, ValueError):
                continue  # as OpenSSH, a line it cannot read is passed over
            if entry is not None:  # kept as paramiko's `load` keeps it (first line first)
                entry.hostnames = [h for h in entry.hostnames if not hk.check(h, entry.key)]
                if entry.hostnames:
                    hk._entries.append(entry)
        return hk, revoked, authorities

    def _known(self, spec: HostSpec) -> list[tuple[str, paramiko.PKey]]:
        found = []
        for f in self._files(spec):
            if not os.path.exists(f) or (read := self._read(f)) is None:
                continue
            found += [(f, e.key) for e in read[0]._entries
                      if e.key is not None and _host_listed(e.hostnames, spec.known_hosts_name)]
        return found

    def _authority_only(self, spec: HostSpec) -> str | None:
        """Where a `@cert-authority` line names this host (the host is known by its
        certificate there, which is not checked here), else None."""
        for f in self._files(spec):
            read = self._read(f) if os.path.exists(f) else None
            for patterns, where in read[2] if read is not None else []:
                if _host_listed(patterns, spec.known_hosts_name):
                    return where
        return None

    def _revoked(self, spec: HostSpec, key: paramiko.PKey) -> str | None:
        """Where `key` is marked `@revoked` (for any host: such a key must never be
        accepted), else None."""
        for f in self._files(spec):
            read = self._read(f) if os.path.exists(f) else None
            if read is not None and (where := read[1].get(key.get_base64())):
                return where
        return None

    def preferred_key_types(self, spec: HostSpec) -> list[str]:
        types: list[str] = []
        for _, k in self._known(spec):
            name = k.get_name()
            types += ["rsa-sha2-512", "rsa-sha2-256", name] if name == "ssh-rsa" else [name]
        return list(dict.fromkeys(types))

    def verify(self, spec: HostSpec, key: paramiko.PKey) -> None:
        known = self._known(spec)
        name = spec.known_hosts_name
        if where := self._revoked(spec, key) or _listed_revoked(self.site, spec, key):
            raise HostKeyError(f"{self.site}: the host key {fingerprint(key)} offered by {name} "
                               f"is revoked ({where}); refusing to connect "
                               "(possible man-in-the-middle with a stolen key)")
        if any(k.get_name() == key.get_name() and k == key for _, k in known):
            return
        strict = (spec.strict_host_key_checking or "").strip().lower()
        lenient = strict in ("no", "off", "false", "accept-new")
        set_aside = (f"; {spec.strict_origin} sets StrictHostKeyChecking "
                     f"{spec.strict_host_key_checking}, which the engine does not follow: it "
                     "checks every host key against known_hosts") if lenient else ""
        if known:
            f, old = next(((f, k) for f, k in known if k.get_name() == key.get_name()), known[0])
            raise HostKeyError(
                f"{self.site}: HOST KEY FOR {name} HAS CHANGED: offered {fingerprint(key)}, "
                f"{f} has {fingerprint(old)}; refusing to connect (possible man-in-the-middle). "
                f"If the host was really re-keyed, remove the old entry with "
                f"`ssh-keygen -R {shlex.quote(name)} -f {shlex.quote(f)}` and verify the new key"
                + (f"{set_aside}, and refuses a changed one whatever ssh_config says"
                   if strict in ("no", "off", "false") else "")
            )
        own = self.own_file(spec)
        add = (f"add it to {own} (e.g. `ssh-keyscan -p {spec.port} {shlex.quote(spec.hostname)}"
               f" >> {shlex.quote(own)}`)"
               if own else "add it to a known_hosts file, and give that file as known_hosts: "
               "FILE in the sites file")
        files = self._files_note(spec)
        if ca := self._authority_only(spec):
            # ssh would check the host's certificate against that CA. paramiko (5.1) cannot:
            # it asks for the *-cert-v01 host key types last (plain ones first) and, given a
            # certificate, loads it as the key's `public_blob` and checks only the key's
            # signature of the exchange, never the CA's signature, the principals, the
            # validity window or the certificate's type. So the key is checked as a plain
            # key, as ssh falls back to after a certificate it cannot accept; trusting it on
            # first use instead would set the CA aside without a word
            raise HostKeyError(
                f"{self.site}: host {name} is known only through the @cert-authority line "
                f"{ca}, and host certificates are not checked here (the SSH library cannot): "
                f"the host needs its plain key in a known_hosts file; after checking that "
                f"the key it offered, {fingerprint(key)}, is the one the CA certified, {add}"
                f"{files}")
        if self.tofu and strict in ("yes", "true"):
            raise HostKeyError(
                f"{self.site}: host {name} is not in known_hosts{files} (it offered "
                f"{fingerprint(key)}), and {spec.strict_origin} sets StrictHostKeyChecking "
                f"{spec.strict_host_key_checking} for it, so trust_on_first_use does not add "
                f"it; after checking that fingerprint, {add}")
        if not self.tofu:
            unread = next(filter(None, map(_unread_line, self._files(spec))), "")
            raise HostKeyError(
                f"{self.site}: host {name} is not in known_hosts{files} (it offered "
                f"{fingerprint(key)}); after checking that fingerprint, {add} "
                f"or set trust_on_first_use: true for this site{unread}"
                + (f"{set_aside} (trust_on_first_use adds a first-seen key, as accept-new "
                   "does)" if set_aside else "")
                + (f"; the KnownHostsCommand of {spec.known_hosts_command} is not run (the "
                   "engine runs no command from ssh_config): put the keys it gives in "
                   "known_hosts" if spec.known_hosts_command else "")
            )
        if own is None:
            raise HostKeyError(
                f"{self.site}: host {name} is not in known_hosts{files}, and with "
                "UserKnownHostsFile none and no known_hosts for the site there is no file to "
                f"add its key ({fingerprint(key)}) to: give known_hosts: FILE in the sites "
                "file")
        if os.path.exists(own) and not os.path.isfile(own):
            raise HostKeyError(f"{self.site}: host {name} is not in known_hosts, and "
                               f"{own} is not a regular file to add it to")
        with _append_lock:
            p = Path(own)
            p.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with open(p, "a") as fh:
                # HashKnownHosts yes: the name hashed, as ssh writes it (a file read by
                # others does not list where the user logs in)
                listed = paramiko.HostKeys.hash_host(name) if spec.hash_known_hosts else name
                fh.write(f"{listed} {key.get_name()} {key.get_base64()}\n")
        log.warning("%s: trusted new host key for %s on first use: %s", self.site, name,
                    fingerprint(key))


# a public key file's line (`ssh-ed25519 AAAA... root@login`, a host's
# /etc/ssh/ssh_host_*_key.pub) where known_hosts wants the host's name first
_PUBLIC_KEY_LINE = re.compile(r"^(?:ssh-[a-z0-9-]+|ecdsa-sha2-nistp[0-9]+|sk-[a-z0-9@.-]+) AAAA")


def _unread_line(path: str) -> str:
    """`; FILE line N ...`: a line of known_hosts file `path` that neither ssh nor the
    engine reads as a host's key, though meant as one (so the host is "not in known_hosts"
    for a reason the file does not show), else "". A FIFO or a device is not opened (a
    FIFO's open waits for a writer)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return ""
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read(1 << 20).splitlines()
    except OSError:
        return ""
    for n, line in enumerate(lines, 1):
        if n == 1 and line.startswith("\ufeff") and (first := line[1:].split()):
            hosts = "a hashed name" if first[0].startswith("|1|") else first[0][:80]
            return (f"; {path} line 1 starts with a byte-order mark (a Windows editor's), so "
                    "that line is not read (by ssh either): save the file as UTF-8 without it "
                    f"(OpenSSH reads the mark as part of the line's host, {hosts}, which "
                    "then names no host)")
        if _PUBLIC_KEY_LINE.match(line.strip()):
            return (f"; {path} line {n} is a public key file's line (TYPE KEY COMMENT), not a "
                    "known_hosts line, which starts with the host's name: "
                    "`[HOST]:PORT TYPE KEY` (`HOST TYPE KEY` on port 22)")
    return ""


def _listed_revoked(site: str, spec: HostSpec, key: paramiko.PKey) -> str | None:
    """Where ssh_config's RevokedHostKeys file lists `key` (`FILE line N`), else None. As
    ssh, a file that cannot be read refuses the connection: a revoked key must never be
    taken for want of reading the list. A KRL (OpenSSH's binary form) is asked of ssh-keygen
    (`_krl_revoked`)."""
    path = spec.revoked_host_keys
    if path is None:
        return None
    why = None
    try:
        data = read_named_file(Path(path), MAX_SSH_CONFIG_BYTES, name=f"RevokedHostKeys {path}",
                               special="refuse", instead="make it a regular file")
    except (OSError, BadInput) as e:
        why = getattr(e, "strerror", None) or str(e)
    else:
        if data.startswith(KRL_MAGIC):
            return _krl_revoked(site, path, data, key)
    if why is not None:
        raise HostKeyError(f"{site}: ssh_config's RevokedHostKeys {path} cannot be checked "
                           f"({why}); refusing to connect, as ssh does")
    for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        words = line.split()
        if len(words) >= 2 and (words[0], words[1]) == (key.get_name(), key.get_base64()):
            return f"listed in ssh_config's RevokedHostKeys {path} line {n}"
    return None


KRL_MAGIC = b"SSHKRL\n"
KRL_CHECK_SECONDS = 20


def _krl_revoked(site: str, path: str, krl: bytes, key: paramiko.PKey) -> str | None:
    """Whether the key revocation list `krl` (the bytes read, and size-checked, from `path`)
    revokes `key`, as `ssh-keygen -Q -f KRL KEYFILE` answers offline (0 `ok`, 1 `REVOKED`).
    ssh-keygen is given copies of both in a temporary directory only this user can enter,
    so the list it checks is the one read here, whatever happens to `path` meanwhile. Any
    other answer (no ssh-keygen, a KRL it cannot parse) refuses the connection naming why:
    a key is never accepted for want of a check."""
    with tempfile.TemporaryDirectory(prefix="diamond-krl-") as private:
        krl_copy, key_path = Path(private, "revoked.krl"), Path(private, "hostkey.pub")
        krl_copy.write_bytes(krl)
        key_path.write_text(f"{key.get_name()} {key.get_base64()}\n")
        try:
            done = subprocess.run(["ssh-keygen", "-Q", "-f", str(krl_copy), str(key_path)],
                                  capture_output=True, text=True, errors="replace",
                                  stdin=subprocess.DEVNULL, timeout=KRL_CHECK_SECONDS)
        except FileNotFoundError:
            why = "ssh-keygen, which reads a KRL, is not on PATH"
        except subprocess.TimeoutExpired:
            why = f"ssh-keygen -Q gave no answer in {KRL_CHECK_SECONDS} s"
        else:
            if done.returncode == 0 and done.stdout.rstrip().endswith(": ok"):
                return None
            if done.returncode == 1 and done.stdout.rstrip().endswith(": REVOKED"):
                return f"revoked by the key revocation list ssh_config's RevokedHostKeys " \
                       f"{path} (ssh-keygen -Q)"
            said = (done.stderr.strip() or done.stdout.strip()).replace(str(krl_copy), path)
            said = visible(said)[:200]
            why = f"ssh-keygen -Q exited {done.returncode}: {said or 'nothing said'}"
    raise HostKeyError(f"{site}: ssh_config's RevokedHostKeys {path} cannot be checked (a key "
                       f"revocation list, KRL: {why}); refusing to connect, as ssh does")


def tcp_connect(site: str, spec: HostSpec, timeout: float) -> socket.socket:
    """A socket with TCP_NODELAY (one command: ~11 ms instead of ~52 ms on a reused link)."""
    where = f"{spec.hostname}:{spec.port}"
    try:
        sock = socket.create_connection((spec.hostname, spec.port), timeout=timeout)
    except socket.gaierror as e:
        raise SiteError(f"{site}: cannot resolve host {spec.hostname!r}: {e.strerror}") from None
    except ConnectionRefusedError:
        raise SiteError(f"{site}: connection refused by {where} (is sshd running?)") from None
    except TimeoutError:
        raise SiteError(f"{site}: connecting to {where} timed out after {timeout:g} s") from None
    except OSError as e:
        raise SiteError(f"{site}: cannot connect to {where}: {e.strerror or e}") from None
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _load_key(path: str) -> paramiko.PKey | None:
    key, why = _load_key_or_why(path)
    if why is not None and os.path.lexists(path):
        log.info("skipping key %s: %s", path, why)
    return key


def _load_key_or_why(path: str) -> tuple[paramiko.PKey | None, str | None]:
    """The private key at `path`, or why it is not offered (`it does not exist` too).
    A key of yours that others can read is not offered, as ssh ignores it (UNPROTECTED
    PRIVATE KEY FILE): it was, so a login worked here that ssh refused."""
    try:
        st = os.stat(path)
        if st.st_uid == os.geteuid() and st.st_mode & 0o077:
            return None, (f"it can be read by other users (mode {st.st_mode & 0o777:03o}), "
                          f"and ssh ignores such a key too: `chmod 600 {shlex.quote(path)}`")
        return paramiko.PKey.from_path(path), None
    except FileNotFoundError:
        return None, "it does not exist"
    except (paramiko.PasswordRequiredException, TypeError):
        # a key of OpenSSH's format locked by a passphrase raises TypeError ("Key is
        # password-protected") from the cryptography package: it ended every connect
        return None, "it is locked by a passphrase (load it into ssh-agent: `ssh-add KEY`)"
    except (OSError, paramiko.SSHException, ValueError) as e:
        return None, f"it cannot be read as a private key ({visible(str(e))[:120]})"


def agent_socket(identity_agent: str | None) -> str | None:
    """The agent socket ssh would use: ssh_config's IdentityAgent (`none`: no agent;
    `SSH_AUTH_SOCK` or `$SSH_AUTH_SOCK`: the environment's; a path, `~` and `${VAR}`
    expanded), else $SSH_AUTH_SOCK. None: no agent."""
    if identity_agent is None or identity_agent.strip("$") == "SSH_AUTH_SOCK":
        return os.environ.get("SSH_AUTH_SOCK") or None
    if identity_agent.lower() == "none":
        return None
    try:
        path = os.path.expandvars(ssh_path(identity_agent.strip('"')))
    except KeyError:
        return None  # ~USER of no user: no agent
    return None if "$" in path else path  # a variable not set: no agent, as ssh


class _SocketAgent(paramiko.agent.AgentSSH):
    """The agent at one socket (paramiko's Agent reads $SSH_AUTH_SOCK only)."""

    def __init__(self, path: str) -> None:
        super().__init__()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(10)
        conn.connect(path)
        self._connect(conn)


def open_agent(path: str) -> paramiko.agent.AgentSSH:
    return _SocketAgent(path)


def _certified(site: str, spec: HostSpec, path: str) -> tuple[str, paramiko.PKey] | None:
    """The key at `path` with the first of ssh_config's CertificateFile that certifies it
    (as ssh pairs them); None when none does. One out of date is refused, saying so."""
    for cert in spec.certificate_files:
        if cert == f"{path}-cert.pub":
            continue  # paramiko loaded it with the key already
        if not os.path.isfile(cert):
            log.info("%s: ssh_config's CertificateFile %s not found", site, cert)
            continue
        signed = paramiko.PKey.from_path(path)
        try:
            info = ssh_cert.load(signed, cert)
        except BadInput:
            continue  # another key's certificate (or no certificate): not this key's
        if problem := info.validity_problem(spec.user):
            raise AuthError(f"{site}: {info.label()} in {info.path} (ssh_config's "
                            f"CertificateFile) {problem}; get a new certificate (e.g. from "
                            "the center's certificate service)")
        return f"{os.path.basename(path)} with {info.label()}", signed
    return None


def _public_halves(paths: list[str]) -> set[bytes]:
    """The public keys (wire form) of identity files `paths`: each from `PATH.pub`, else
    from the private key when it loads without a passphrase (a key kept in the agent is
    often locked on disk: its .pub names it, as ssh reads it)."""
    found: set[bytes] = set()
    for p in paths:
        try:
            words = Path(f"{p}.pub").read_text(encoding="utf-8", errors="replace").split()
            found.add(base64.b64decode(words[1], validate=True))
            continue
        except (OSError, IndexError, ValueError):
            pass
        if (k := _load_key(p)) is not None:
            k.public_blob = None
            found.add(k.asbytes())
    return found


@dataclass
class _IdentityFile:
    """One IdentityFile's keys as offered: `certified` by a certificate given for it (the
    sites file's cert_file, ssh_config's CertificateFile), the plain key (None when it
    cannot be loaded, e.g. locked by a passphrase), and `own_cert`, the key with its
    KEY-cert.pub; `public` its public key (wire form), by which an agent holding it is
    recognised; `in_agent` once one is."""

    path: str
    certified: list[tuple[str, paramiko.PKey]]
    plain: paramiko.PKey | None
    public: bytes | None
    own_cert: list[tuple[str, paramiko.PKey]] = field(default_factory=list)
    in_agent: bool = False


def _identity_file(site: str, spec: HostSpec, p: str, cert_file: str | None,
                   key_file: str | None) -> _IdentityFile:
    """The keys of identity file `p`: `cert_file` certifies `key_file`; ssh_config's
    CertificateFile the key it names; else its own `KEY-cert.pub`, which paramiko (as
    OpenSSH) loads with it."""
    certified: list[tuple[str, paramiko.PKey]] = []
    own_cert: list[tuple[str, paramiko.PKey]] = []
    k = _load_key(p)
    given = bool(cert_file and key_file and p == os.path.expanduser(key_file))
    if k is not None and k.public_blob is not None and not given:
        own_cert.append((f"{os.path.basename(p)} with its certificate", k))
        k = _load_key(p)
    if k is not None:
        k.public_blob = None  # the plain key
        if given:
            signed = paramiko.PKey.from_path(p)
            info = ssh_cert.load(signed, os.path.expanduser(cert_file or ""))
            if problem := info.validity_problem(spec.user):
                raise AuthError(
                    f"{site}: {info.label()} in {info.path} {problem}; get a new "
                    f"certificate (e.g. from the center's certificate service)")
            certified.append((f"{os.path.basename(p)} with {info.label()}", signed))
        elif (signed_key := _certified(site, spec, p)) is not None:
            certified.append(signed_key)
    if spec.certificate_files:  # ssh then offers only the certificates given, first
        certified, own_cert = own_cert + certified, []
    public = k.asbytes() if k is not None else next(iter(_public_halves([p])), None)
    return _IdentityFile(p, certified, k, public, own_cert)


def _keys(site: str, spec: HostSpec, use_agent: bool, cert_file: str | None = None,
          key_file: str | None = None) -> list[tuple[str, paramiko.PKey]]:
    """(label, key) in the order ssh offers them (sshconnect2.c's pubkey_prepare, checked
    with `ssh -v` on OpenSSH 9.2): the keys of the certificates given (CertificateFile,
    cert_file) first, then the agent's keys that are identity files (in the agent's
    order, signed by the agent, named by their file), then the agent's other keys unless
    IdentitiesOnly, then the identity files the agent does not hold, in ssh_config's order,
    each followed by its KEY-cert.pub."""
    files = [_identity_file(site, spec, p, cert_file, key_file) for p in spec.identity_files]
    held: list[tuple[str, paramiko.PKey]] = []
    others: list[tuple[str, paramiko.PKey]] = []
    sock = agent_socket(spec.identity_agent)
    if use_agent and sock:
        try:
            agent_keys = list(open_agent(sock).get_keys())
        except (paramiko.SSHException, OSError) as e:
            log.info("ssh-agent unavailable: %s", e)
            agent_keys = []
        mine = None if spec.identity_files or not spec.identities_only else \
            _public_halves([ssh_path(p) for p in DEFAULT_IDENTITIES])
        for k in agent_keys:
            blob = k.asbytes()
            match = next((f for f in files if not f.in_agent and f.public == blob), None)
            if match is not None:
                match.in_agent = True
                held.append((match.path, k))
            elif not spec.identities_only or (mine is not None and blob in mine):
                others.append((f"agent:{k.get_name()}", k))
    keys = [c for f in files for c in f.certified] + held + others
    for f in files:  # a KEY-cert.pub after its key, as ssh loads it
        keys += ([(f.path, f.plain)] if f.plain is not None and not f.in_agent else []) \
            + f.own_cert
    if not keys:  # OpenSSH's defaults when nothing else is offered
        keys = [(p, k) for p in map(ssh_path, DEFAULT_IDENTITIES) if (k := _load_key(p))]
    return keys


def wrap_handler(
    handler: InteractiveHandler, loop: asyncio.AbstractEventLoop | None
) -> InteractiveHandler:
    """Call the user's handler (sync or async) from paramiko's thread; skip empty rounds."""

    def call(title: str, instructions: str, prompts: list[tuple[str, bool]]) -> list[str]:
        if not prompts:
            return []
        answer: Any = handler(title, instructions, list(prompts))
        if inspect.isawaitable(answer):
            if loop is None:
                raise SiteError("an async interactive handler needs a running event loop")
            answer = asyncio.run_coroutine_threadsafe(_await(answer), loop).result(600)
        return [str(a) for a in answer]

    return call


async def _await(aw: Any) -> Any:
    return await aw


def _agent_problem(spec: HostSpec, use_agent: bool) -> str:
    """Why no key of ssh-agent was offered, for a refusal (`; ...`), or "": a socket left
    from a closed session (SSH_AUTH_SOCK of a dead tmux or screen) or an agent holding no
    key was said nowhere, and the refusal read as if no agent had been looked for."""
    sock = agent_socket(spec.identity_agent)
    if not use_agent or not sock:
        return ""
    try:
        held = list(open_agent(sock).get_keys())
    except (paramiko.SSHException, OSError) as e:
        return (f"; the ssh-agent at {sock} cannot be reached ({visible(str(e))[:80]}): "
                "start one (`eval $(ssh-agent)`, then `ssh-add KEY`) or set SSH_AUTH_SOCK "
                "to the running one")
    if not held:
        return f"; the ssh-agent at {sock} holds no key (`ssh-add KEY` adds one)"
    return ""


def authenticate(
    t: paramiko.Transport,
    site: str,
    spec: HostSpec,
    cfg: TransportConfig,
    handler: InteractiveHandler | None,
) -> None:
    """publickey (cert_file, key_file, IdentityFile, agent) first, then keyboard-interactive,
    then password through the same handler. Partial success (publickey + one-time code) is
    followed through. The user is asked at most once per method: a refused code is not
    retried."""
    tried: list[str] = []
    allowed = ["publickey", "keyboard-interactive", "password"]
    partial = False
    for label, key in _keys(site, spec, cfg.use_agent, cfg.cert_file,
                             cfg.key_file):
        if "publickey" not in allowed or t.is_authenticated():
            break
        shown = label if " with " in label else os.path.basename(label)
        tried.append(f"publickey {shown}")
        try:
            rest = t.auth_publickey(spec.user, key)
            if rest:  # partial success: the server wants another method as well
                allowed, partial = list(rest), True
                break
        except paramiko.BadAuthenticationType as e:
            allowed = list(e.allowed_types)
        except paramiko.AuthenticationException:
            continue
    asked = 0
    gave_up: Exception | None = None

    def ask(title: str, instructions: str, prompts: list[tuple[str, bool]]) -> list[str]:
        nonlocal asked, gave_up
        if not prompts:
            return []
        asked += 1
        try:
            return list(handler(title, instructions, prompts))  # type: ignore[misc]
        except Exception as e:  # paramiko's thread would swallow it: keep it for the user
            gave_up = e
            raise

    code_wanted = "keyboard-interactive" in allowed and (partial or not t.is_authenticated())
    if not t.is_authenticated() and handler is not None:
        if "keyboard-interactive" in allowed:
            tried.append("keyboard-interactive")
            try:
                t.auth_interactive(spec.user, ask)
            except paramiko.BadAuthenticationType as e:
                allowed = list(e.allowed_types)
            except paramiko.AuthenticationException:
                pass
            except Exception:  # the handler's own error, re-raised by paramiko's thread
                if gave_up is None:
                    raise
        if not t.is_authenticated() and "password" in allowed and not gave_up:
            tried.append("password")
            answers = ask("Password", f"{spec.label}", [("Password: ", False)])
            try:
                t.auth_password(spec.user, answers[0] if answers else "")
            except paramiko.AuthenticationException:
                pass
    if t.is_authenticated():
        return
    what = ", ".join(tried) or ("no key could be offered" if cfg.key_file or
                                spec.identity_files else "no credentials found (no "
                                "key_file, IdentityFile or agent)")
    head = f"{site}: authentication failed for {spec.label} (tried {what})"
    head += _agent_problem(spec, cfg.use_agent) if not any(
        x.startswith("publickey agent:") for x in tried) else ""
    if cfg.key_file and (why := _load_key_or_why(os.path.expanduser(cfg.key_file))[1]):
        head += f"; key_file {cfg.key_file} was not offered: {why}"
    for path in dict.fromkeys(spec.identity_files):
        if path != os.path.expanduser(cfg.key_file or "") and \
                f"publickey {os.path.basename(path)}" not in tried and \
                (why := _load_key_or_why(path)[1]):  # (offered by the agent: not said)
            head += f"; IdentityFile {path} was not offered: {why}"
    if gave_up is not None:
        why = str(gave_up).removeprefix(f"{site}: ")
        raise AuthError(f"{head}: no one-time code was given ({why})", interactive=True)
    if asked:
        raise AuthError(f"{head}: the one-time code was not accepted (one attempt, not "
                        f"retried; log in again with a new code)", interactive=True)
    if code_wanted and partial:
        raise AuthError(f"{head}: the site asks for a one-time code and none can be asked "
                        f"here; log in to {site} first (JupyterLab: the site's Log in button; "
                        f"the CLI asks on the terminal or takes DIAMOND_OTP)", interactive=True)
    refused = [x for x in tried if " certificate" in x]
    hint = "" if handler else "; no interactive handler for one-time codes"
    if refused:
        hint += ("; the site refused the certificate: is it signed by a CA the site trusts "
                 "(sshd TrustedUserCAKeys)?")
    raise AuthError(f"{head}{hint}")
