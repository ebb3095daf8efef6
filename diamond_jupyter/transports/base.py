"""The transport contract: run commands and move bytes on a site. Nothing about schedulers."""

from __future__ import annotations

import codecs
import errno
import os
import re
import shlex
import stat as stat_mod
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO, Literal, Protocol, runtime_checkable

from ..model import BadInput, SiteError

# Variables that change the output format of scheduler commands when set in a user's
# environment (Parsl's Slurm provider met them). Cleared for every command so that parsers
# see defaults.
FORMAT_VARS = (
    "SQUEUE_FORMAT",
    "SQUEUE_FORMAT2",
    "SQUEUE_SORT",
    "SINFO_FORMAT",
    "SINFO_SORT",
    "SACCT_FORMAT",
    "SLURM_TIME_FORMAT",
)

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# (title, instructions, [(prompt, echo), ...]) -> answers; may also return an awaitable.
InteractiveHandler = Callable[[str, str, list[tuple[str, bool]]], Any]


@dataclass
class CommandResult:
    argv: list[str]
    exit_status: int
    stdout: str
    stderr: str
    duration_s: float

    @property
    def ok(self) -> bool:
        return self.exit_status == 0


@dataclass
class FileStat:
    path: str
    size: int
    mode: int  # full st_mode (use stat.S_IMODE / S_ISDIR)
    mtime: float
    is_dir: bool


def listed(mode: int, special: bool) -> bool:
    """Whether a directory listing's entry of `mode` (not followed) is listed: a regular
    file; with `special`, also what is neither a file nor a directory (a FIFO, a device, a
    socket, a symbolic link), which a job may leave among its results (to be named, never
    read)."""
    if stat_mod.S_ISREG(mode):
        return True
    return special and not stat_mod.S_ISDIR(mode)


def open_regular(path: str | os.PathLike[str], *, within: str | None = None) -> BinaryIO:
    """`path` opened for reading, only when it is a regular file (a link to one is followed,
    unless `within`). A FIFO, a device or a socket (made by a job where its output was,
    between a listing and the copy) would block the copy for ever or never end (/dev/zero):
    OSError saying so. The open itself does not block (O_NONBLOCK: a FIFO without a writer).
    `within` (a directory): the file is not a link and the file opened lies in it, its own
    links resolved, else LeftItsDirectory (checked on what was opened, not before)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | (os.O_NOFOLLOW if within is not None else 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if within is not None and e.errno == errno.ELOOP:
            raise LeftItsDirectory(f"{path} is a symbolic link") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat_mod.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, a device or a socket)",
                          str(path))
        if within is not None:
            try:  # where the open file is (Linux), else where its path leads now
                opened = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                opened = os.path.realpath(path)
            if not inside(opened, os.path.realpath(within)):
                raise LeftItsDirectory(f"{path} is reached through a link out of {within}")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


PIPE_SILENCE_S = 10.0  # how long a pipe named as a file may stay silent before it is refused


def read_named_file(path: str | os.PathLike[str], limit: int, *, name: str, instead: str,
                    special: Literal["read", "refuse"] = "read",
                    silence_s: float | None = None) -> bytes:
    """At most `limit` + 1 bytes of a file a person named (a job script, a workflow, an
    ssh_config), so the caller can tell it is too large; never a wait for ever.

    Opened without waiting (a FIFO with no writer blocks `open`). What is not a regular file:
    with `special="refuse"`, BadInput naming its kind; with `"read"`, a FIFO or pipe
    (`<(./make.sh)`, /dev/stdin) is read as its writer fills it, but one silent for
    `silence_s` (default PIPE_SILENCE_S; no writer, or one gone quiet) is BadInput, and a
    device is read up to the bound (/dev/zero stops there). `name` is how messages name the
    file, `instead` what they tell the user to give. IsADirectoryError for a directory;
    other OSError as `open` raises it."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if stat_mod.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        kind = special_kind(mode)
        if kind is not None and special == "refuse":
            raise BadInput(f"{name} is not a file but {kind}, which may never end (a read "
                           f"would wait for ever): not read; {instead}")
        if not stat_mod.S_ISFIFO(mode):
            os.set_blocking(fd, True)
            return read_at_most(f, limit + 1)
        return _read_pipe(fd, limit + 1, name, instead,
                          PIPE_SILENCE_S if silence_s is None else silence_s)


def _read_pipe(fd: int, n: int, name: str, instead: str, silence_s: float) -> bytes:
    """Up to `n` bytes of the non-blocking pipe `fd`, to its writer's end; BadInput when it
    stays silent for `silence_s` (Linux reports a FIFO that never had a writer as silent,
    not ended)."""
    import select

    poller = select.poll()
    poller.register(fd, select.POLLIN)
    parts: list[bytes] = []
    left = n
    while left > 0:
        if not poller.poll(silence_s * 1000):
            raise BadInput(f"{name}: a pipe that nothing wrote to for {silence_s:g} s "
                           f"({'it stopped' if parts else 'no writer'}); {instead}")
        try:
            chunk = os.read(fd, min(left, 1 << 16))
        except BlockingIOError:
            continue
        if not chunk:  # the writer closed it: the whole text
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def read_at_most(f: BinaryIO, n: int) -> bytes:
    """Up to `n` bytes from `f`, in 1 MiB reads (one `read(n)` would set aside n bytes
    however small the file)."""
    parts: list[bytes] = []
    left = n
    while left > 0 and (chunk := f.read(min(left, 1 << 20))):
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def special_kind(mode: int) -> str | None:
    """What an entry that is neither a regular file nor a directory is ("a FIFO", "a
    character device", ...): a copy never writes over one (renamed into place, its part
    file replaced /dev/null or a FIFO another program reads); None for a file or a
    directory."""
    if stat_mod.S_ISREG(mode) or stat_mod.S_ISDIR(mode):
        return None
    for test, kind in ((stat_mod.S_ISFIFO, "a FIFO"), (stat_mod.S_ISCHR, "a character device"),
                       (stat_mod.S_ISBLK, "a block device"), (stat_mod.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


SAFE_MODE_BITS = 0o775  # no setuid, setgid, sticky or world-write on a file we create


def safe_mode(mode: int) -> int:
    """The permission bits a copied or fetched file keeps from its source's mode: the same
    read/execute access (a private 0600 source stays private) without setuid, setgid, sticky
    or world-write."""
    return stat_mod.S_IMODE(mode) & SAFE_MODE_BITS


class CommandFailed(SiteError):
    """A command exited non-zero under `check=True`; the result is attached."""

    def __init__(self, message: str, result: CommandResult):
        super().__init__(message)
        self.result = result


class CommandTimeout(SiteError):
    pass


class ConnectionLost(SiteError):
    """The connection to the site dropped while a command or a transfer was under way: the
    command may have run (and may still be running) there."""


class CommandNotSent(SiteError):
    """The command never reached the site: its channel could not be opened (the connection
    gone before, or the server refusing the session), so it did not run there."""


class HostKeyError(SiteError):
    """Unknown or changed host key: never retried. Raised before any command is sent."""


class AuthError(SiteError):
    """No offered credential was accepted: never retried, and no command was sent.
    `interactive`: the server wanted a one-time code (asked, refused, or none could be asked):
    the transport then waits for the user to log in again instead of trying on its own (a
    retry loop could lock the account). `door`: "ssh", or "slurmrestd" (its token refused)."""

    def __init__(self, message: str, *, interactive: bool = False, door: str = "ssh") -> None:
        super().__init__(message)
        self.interactive, self.door = interactive, door


DEFAULT_COMMAND_TIMEOUT_S = 300.0  # a command given no timeout (None) gets the site's default
DEFAULT_MAX_OUTPUT_BYTES = 64 << 20  # per stream of one command (TransportConfig's default)


class OutputTooLarge(SiteError):
    """A command printed more than the transport's `max_output_bytes` on stdout or stderr (or
    a reply or file was larger): reading stopped, the command was ended, nothing is kept.
    `cap`: the bytes allowed; `stream`: stdout or stderr, for a command."""

    def __init__(self, message: str, *, cap: int = 0, stream: str = "") -> None:
        super().__init__(message)
        self.cap, self.stream = cap, stream


class LeftItsDirectory(SiteError):
    """A result file that, when it was opened to be copied, was a symbolic link or was
    reached through one out of the job's directory (a job may swap a file it listed for a
    link to the user's own files between the listing and the copy): nothing was copied."""


def inside(path: str, root: str) -> bool:
    """Whether the normalised path `path` is `root` or under it (both absolute)."""
    root = root.rstrip("/") or "/"
    return path == root or path.startswith(root if root == "/" else root + "/")


class StreamOverflow(Exception):
    """Inside a transport: one stream of a command passed the cap; becomes OutputTooLarge."""

    def __init__(self, stream: str) -> None:  # "stdout" or "stderr"
        super().__init__(stream)
        self.stream = stream


def file_too_large(site: str, path: str, cap: int) -> OutputTooLarge:
    return OutputTooLarge(
        f"{site}: {path} holds more than {cap} bytes (the transport's max_output_bytes): "
        "not read whole; fetch it to a file instead", cap=cap)


def fetch_too_large(site: str, path: str, size: int | None, cap: int) -> OutputTooLarge:
    """A file a copy refused: larger than the copy's bound (`size` when it was known)."""
    held = f"{size} bytes" if size is not None else "more"
    return OutputTooLarge(f"{site}: {path} holds {held}, more than the {cap} bytes this copy "
                          "allows: not copied", cap=cap)


def output_too_large(site: str, what: str, stream: str, cap: int) -> OutputTooLarge:
    """The error for `what` (a command's argv[0], a request, a file) passing the cap."""
    return OutputTooLarge(
        f"{site}: {what} printed more than {cap} bytes on {stream} (the transport's "
        "max_output_bytes): stopped reading it and ended the command", cap=cap, stream=stream)


@runtime_checkable
class Transport(Protocol):
    name: str  # the site name

    async def run(
        self,
        argv: list[str],
        *,
        stdin: bytes | None = None,
        env: dict[str, str] | None = None,
        preamble: str = "",
        timeout: float | None = None,  # None: the site's command_timeout_s (CommandTimeout)
        check: bool = False,
    ) -> CommandResult: ...

    async def run_fast(
        self,
        argv: list[str],
        *,
        stdin: bytes | None = None,
        env: dict[str, str] | None = None,
        preamble: str = "",
        timeout: float | None = None,
        check: bool = False,
    ) -> CommandResult:
        """`run` for short, non-streaming commands, on a cheaper path where there is one
        (SSH: a long-lived remote shell). Same quoting, result and errors as `run`."""
        ...

    async def put_bytes(self, data: bytes, remote_path: str, mode: int = 0o644) -> None: ...

    async def get_bytes(self, remote_path: str) -> bytes: ...

    async def put_file(
        self, local_path: str, remote_path: str, mode: int | None = None
    ) -> None: ...

    async def get_file(self, remote_path: str, local_path: str, *,
                       max_bytes: int | None = None, within: str | None = None) -> None:
        """Copy a file here; a file holding more than `max_bytes` (its size when opened, or
        what it grows to while copied) is not copied: `fetch_too_large`. `within` (a
        directory on the site): a file that is a link, or is reached through one out of it,
        when opened is not copied either: LeftItsDirectory."""
        ...

    async def stat(self, path: str, *, follow_links: bool = True) -> FileStat | None:
        """What `path` is (None: nothing there); with `follow_links=False`, a symbolic link
        itself (its mode S_ISLNK), not what it leads to."""
        ...

    async def read_end(self, path: str, max_bytes: int) -> bytes | None:
        """The last `max_bytes` bytes of a file (the whole of a smaller one), without running
        a command; None when it does not exist."""
        ...

    async def list_files(self, root: str, *, max_depth: int = 3, limit: int = 10000,
                         special: bool = False) -> list[FileStat]:
        """Regular files under `root`, without running a command (no user value can become
        an option); symbolic links are not followed. Missing root: []. With `special`, also
        the FIFOs, devices, sockets and links (never read: a caller names them; see
        `listed`)."""
        ...

    async def link_target(self, path: str) -> tuple[str, str | None]:
        """What the symbolic link `path` holds, as written, and the absolute path it leads
        to with every link on the way resolved (None when it leads nowhere: a missing
        target, a loop). Nothing is read through it."""
        ...

    async def real_path(self, path: str) -> str | None:
        """`path` absolute, every link in it resolved (None when it does not resolve)."""
        ...

    def open_stream(
        self, argv: list[str], *, env: dict[str, str] | None = None, preamble: str = ""
    ) -> AsyncIterator[str]: ...

    async def close(self) -> None: ...

    def describe(self) -> dict[str, Any]: ...


def check_argv(argv: Sequence[str]) -> list[str]:
    if isinstance(argv, str) or not argv or not all(isinstance(a, str) for a in argv):
        raise BadInput("a command must be a non-empty list of strings")
    if any("\0" in a for a in argv):
        raise BadInput("a command argument contains a NUL byte")
    if argv[0].startswith("-") or "=" in argv[0]:
        # `env ... PROG` (and the shell's `exec PROG`) would read it as an option of their
        # own or a variable to set, and run what follows it instead
        raise BadInput(f"{argv[0][:80]!r} is not a program: a program's name may not start "
                       "with '-' or hold '='")
    return list(argv)


def check_env(env: dict[str, str] | None) -> dict[str, str]:
    env = dict(env or {})
    for k, v in env.items():
        if not _ENV_NAME.match(k):
            raise BadInput(f"invalid environment variable name {k!r}")
        if not isinstance(v, str) or "\0" in v:
            raise BadInput(f"invalid value for environment variable {k}")
    return env


def render_command(
    argv: Sequence[str], env: dict[str, str] | None = None, preamble: str = ""
) -> str:
    """The remote command line for a POSIX login shell; every argv/env item is quoted.

    `preamble` is a trusted shell fragment from the site's configuration (e.g. ``module load
    slurm``), written by the site admin, never user input; it runs before the command, which
    then replaces the shell (``exec``).
    """
    env = check_env(env)
    parts = ["env"]
    for v in FORMAT_VARS:
        parts += ["-u", v]
    parts += [f"{k}={v}" for k, v in env.items()]
    cmd = shlex.join(parts + check_argv(argv))
    if preamble.strip():
        return f"cd ~ || exit 255\n{preamble.rstrip()}\nexec {cmd}"
    return f"cd ~ && exec {cmd}"


def render_shell_command(
    argv: Sequence[str], env: dict[str, str] | None = None, preamble: str = ""
) -> str:
    """`render_command` for a POSIX shell that runs the line in a subshell (the SSH
    transport's long-lived shell): the same environment and quoting, set up with builtins
    (`unset`, `export`) instead of an `env` process, which costs a process start."""
    env = check_env(env)
    setup = " && ".join([f"unset {' '.join(FORMAT_VARS)}",
                         *(f"export {k}={shlex.quote(v)}" for k, v in env.items())])
    cmd = f"{setup} && exec {shlex.join(check_argv(argv))}"
    if preamble.strip():
        return f"cd ~ || exit 255\n{preamble.rstrip()}\n{cmd}"
    return f"cd ~ && {cmd}"


def render_stream_command(
    argv: Sequence[str], env: dict[str, str] | None = None, preamble: str = ""
) -> str:
    """Like `render_command`, but the command is killed when the channel's stdin closes.

    sshd leaves a non-pty command running when the client goes away; a watcher reading the
    channel's stdin kills it on EOF, so a cancelled `tail -F` does not linger on the site.
    """
    cmd = render_command(argv, env)[len("cd ~ && exec ") :]
    pre = f"{preamble.rstrip()}\n" if preamble.strip() else ""
    return (
        "cd ~ || exit 255\nexec 3<&0 </dev/null\n"
        f"{pre}{cmd} 3<&- &\np=$!\n"
        "{ read -r _ <&3; kill $p; } >/dev/null 2>&1 &\nw=$!\nexec 3<&-\n"
        "wait $p; s=$?; kill $w 2>/dev/null; exit $s"
    )


MAX_STREAM_LINE = 1 << 20  # characters of one streamed line kept; the rest is dropped


class LineSplitter:
    """Bytes in, complete text lines out (UTF-8 decoded incrementally, bad bytes replaced).

    A line longer than `max_line` (a job's output is untrusted) is cut to that length and
    given out as soon as it is that long; what follows it up to the next newline is dropped,
    so memory and work per byte stay bounded however long the line grows."""

    def __init__(self, max_line: int = MAX_STREAM_LINE) -> None:
        self._dec = codecs.getincrementaldecoder("utf-8")("replace")
        self._buf = ""
        self.max_line = max_line
        self._skipping = False  # inside a line already cut and given out

    def feed(self, data: bytes) -> list[str]:
        text = self._dec.decode(data)
        if self._skipping:
            nl = text.find("\n")
            if nl < 0:
                return []
            text, self._skipping = text[nl + 1 :], False
        *lines, rest = (self._buf + text).split("\n")
        lines = [ln if len(ln) <= self.max_line else ln[: self.max_line] for ln in lines]
        if len(rest) > self.max_line:
            lines.append(rest[: self.max_line])
            rest, self._skipping = "", True
        self._buf = rest
        return lines

    def end(self) -> list[str]:
        rest, self._buf = self._buf + self._dec.decode(b"", final=True), ""
        if self._skipping:
            return []
        return [rest[: self.max_line]] if rest else []


def result_or_raise(site: str, res: CommandResult, check: bool) -> CommandResult:
    if check and res.exit_status != 0:
        tail = (res.stderr.strip().splitlines() or [""])[-1][:300]
        raise CommandFailed(
            f"{site}: {shlex.join(res.argv)[:200]} exited with status {res.exit_status}"
            + (f": {tail}" if tail else ""),
            res,
        )
    return res
