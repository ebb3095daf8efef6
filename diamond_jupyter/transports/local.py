"""A cluster reachable from the server itself: asyncio subprocesses, no shell for argv."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import stat as stat_mod
import tempfile
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..aio import within
from ..model import SiteError
from .base import (
    DEFAULT_COMMAND_TIMEOUT_S,
    DEFAULT_MAX_OUTPUT_BYTES,
    FORMAT_VARS,
    CommandResult,
    CommandTimeout,
    FileStat,
    LineSplitter,
    StreamOverflow,
    check_argv,
    check_env,
    fetch_too_large,
    file_too_large,
    listed,
    open_regular,
    output_too_large,
    read_at_most,
    result_or_raise,
    safe_mode,
)
from .child import Child

# Kept although they start with SLURM_: configuration, not the context of an enclosing job.
KEEP_VARS = frozenset({"SLURM_CONF"})
_DROP_PREFIXES = ("SLURM_", "SQUEUE_", "SINFO_", "SACCT_", "SBATCH_", "SALLOC_", "SRUN_",
                  "JUPYTERHUB_")
# The hub's token under its old name: with JUPYTERHUB_*, never handed to a scheduler (sbatch
# exports its environment into the job, onto compute nodes other users share).
_DROP_VARS = frozenset({"JPY_API_TOKEN"})


def clean_environ(environ: Mapping[str, str], keep: frozenset[str] = KEEP_VARS,
                  private: frozenset[str] = frozenset()) -> dict[str, str]:
    """A copy of `environ` without what a surrounding Slurm job or a user's format settings put
    there (a single-user server may itself run inside a job, as under batchspawner), nor the
    JupyterHub's variables and token its spawner gave the server, nor the PRIVATE ones (the
    agent's API key: sbatch would export it into the job, where a site's admins read it)."""
    return {
        k: v
        for k, v in environ.items()
        if k not in private and (k in keep or not (k.startswith(_DROP_PREFIXES)
                                                   or k in FORMAT_VARS or k in _DROP_VARS))
    }


KILL_DRAIN_S = 5.0  # after the kill: how long the pipes may take to reach EOF


class LocalTransport:
    kind = "local"

    def __init__(self, site: str, workdir: str | None = None, *, keep_vars=KEEP_VARS,
                 command_timeout_s: float = DEFAULT_COMMAND_TIMEOUT_S,
                 max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
                 private_vars: Iterable[str] = ()):
        self.name = site
        self.command_timeout_s = command_timeout_s
        self.max_output_bytes = max_output_bytes
        self.workdir = str(Path(workdir or "~").expanduser())
        self.keep_vars = frozenset(keep_vars)
        self.private_vars = frozenset(private_vars)  # never handed to a command
        self.commands_run = 0

    def describe(self) -> dict[str, Any]:
        return {"site": self.name, "kind": "local", "workdir": self.workdir}

    def __repr__(self) -> str:
        return f"LocalTransport({self.name!r}, workdir={self.workdir!r})"

    def _path(self, p: str) -> Path:
        q = Path(p).expanduser()
        return q if q.is_absolute() else Path(self.workdir) / q

    def _spawn_args(self, argv: list[str], env: dict[str, str] | None, preamble: str):
        full_env = clean_environ(os.environ, self.keep_vars, self.private_vars)
        full_env.update(check_env(env))
        argv = check_argv(argv)
        if preamble.strip():  # trusted site config, then exec the argv verbatim
            argv = ["/bin/sh", "-c", f'{preamble.rstrip()}\nexec "$@"', "sh", *argv]
        return argv, dict(env=full_env, cwd=self.workdir, start_new_session=True)

    @staticmethod
    async def _kill(proc: Child) -> None:
        proc.kill_group()  # own session: the preamble's children too

        async def drain() -> None:
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    while await stream.read(1 << 16):
                        pass

        # a reader stopped early (output over the cap, a timeout) left the pipes paused: what
        # is left is thrown away; a process that left the session (setsid) may still hold a
        # pipe and write: then (or when cancelled) the pipes are no longer listened to
        try:
            await within(drain(), KILL_DRAIN_S)
        except asyncio.TimeoutError:
            proc.close_pipes()
        except asyncio.CancelledError:
            proc.close_pipes()
            raise
        await proc.wait()

    async def run(
        self,
        argv: list[str],
        *,
        stdin: bytes | None = None,
        env: dict[str, str] | None = None,
        preamble: str = "",
        timeout: float | None = None,
        check: bool = False,
    ) -> CommandResult:
        args, kw = self._spawn_args(argv, env, preamble)
        timeout = self.command_timeout_s if timeout is None else timeout
        t0 = time.monotonic()
        self.commands_run += 1
        try:
            proc = await Child.start(args, stdin=stdin is not None, **kw)
        except (FileNotFoundError, PermissionError) as e:  # same status a shell would give
            res = CommandResult(list(argv), 127, "", f"{argv[0]}: {e.strerror}\n", 0.0)
            return result_or_raise(self.name, res, check)
        try:
            out, err = await within(self._communicate(proc, stdin), timeout)
        except asyncio.TimeoutError:
            raise CommandTimeout(f"{self.name}: {argv[0]} timed out after {timeout:g} s "
                                 "(stopped)") from None
        except StreamOverflow as e:
            raise output_too_large(self.name, argv[0], e.stream, self.max_output_bytes) \
                from None
        finally:
            await asyncio.shield(self._kill(proc))
        res = CommandResult(
            list(argv),
            proc.returncode if proc.returncode is not None else -1,
            out.decode("utf-8", "replace"),
            err.decode("utf-8", "replace"),
            time.monotonic() - t0,
        )
        return result_or_raise(self.name, res, check)

    run_fast = run  # no session setup to save here

    async def _communicate(self, proc: Child,
                           stdin: bytes | None) -> tuple[bytes, bytes]:
        """`proc.communicate(stdin)`, but each stream is read up to `max_output_bytes` only:
        one byte more raises StreamOverflow (the caller kills the process group)."""
        assert proc.stdout is not None and proc.stderr is not None
        cap = self.max_output_bytes

        async def feed() -> None:
            if proc.stdin is None:
                return
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                if stdin:  # a command that exits without reading it: as communicate()
                    proc.stdin.write(stdin)
                    await proc.stdin.drain()
                proc.stdin.close()

        async def read(stream: asyncio.StreamReader, name: str) -> bytes:
            buf = bytearray()
            while chunk := await stream.read(min(1 << 16, cap + 1 - len(buf))):
                buf += chunk
                if len(buf) > cap:
                    raise StreamOverflow(name)
            return bytes(buf)

        tasks = [asyncio.ensure_future(feed()),
                 asyncio.ensure_future(read(proc.stdout, "stdout")),
                 asyncio.ensure_future(read(proc.stderr, "stderr"))]
        try:
            _, out, err = await asyncio.gather(*tasks)
        finally:
            for t in tasks:  # one failed (or we were cancelled): the others stop too
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)  # off the pipes first
        await proc.wait()
        return out, err

    async def open_stream(
        self, argv: list[str], *, env: dict[str, str] | None = None, preamble: str = ""
    ) -> AsyncIterator[str]:
        """Yield stdout lines of a long-lived command; it is killed when the iteration ends."""
        args, kw = self._spawn_args(argv, env, preamble)
        proc = await Child.start(args, stderr=False, **kw)
        assert proc.stdout is not None
        lines = LineSplitter()
        try:
            while chunk := await proc.stdout.read(65536):
                for line in lines.feed(chunk):
                    yield line
            for line in lines.end():
                yield line
        finally:
            await asyncio.shield(self._kill(proc))

    # ---- files (blocking I/O in a thread) ----
    def _put(self, data: bytes, path: Path, mode: int) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            os.fchmod(fd, mode)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    async def put_bytes(self, data: bytes, remote_path: str, mode: int = 0o644) -> None:
        try:
            await asyncio.to_thread(self._put, data, self._path(remote_path), mode)
        except OSError as e:
            raise SiteError(f"{self.name}: cannot write {remote_path}: {e.strerror}") from None

    async def get_bytes(self, remote_path: str) -> bytes:
        """The whole file, when it holds at most `max_output_bytes` (else OutputTooLarge);
        only a regular file (a FIFO would block, a device never end)."""
        cap = self.max_output_bytes

        def read() -> bytes:
            with open_regular(self._path(remote_path)) as f:
                return read_at_most(f, cap + 1)
        try:
            data = await asyncio.to_thread(read)
        except OSError as e:
            raise SiteError(f"{self.name}: cannot read {remote_path}: {e.strerror}") from None
        if len(data) > cap:
            raise file_too_large(self.name, remote_path, cap)
        return data

    async def put_file(self, local_path: str, remote_path: str, mode: int | None = None) -> None:
        src = Path(local_path)
        data = await asyncio.to_thread(src.read_bytes)
        m = mode if mode is not None else stat_mod.S_IMODE(src.stat().st_mode)
        await self.put_bytes(data, remote_path, m)

    def _copy_out(self, src: Path, dst: Path, max_bytes: int | None = None,
                  within: str | None = None) -> None:
        """Stream `src` into a new private temp file beside `dst`, then rename it over; the
        mode is the source's without setuid, setgid, sticky or world-write bits. More than
        `max_bytes` (its size when opened, or what it grows to): OutputTooLarge, nothing
        left behind. `within`: as `open_regular`'s."""
        with open_regular(src, within=within) as f:
            size = os.fstat(f.fileno()).st_size
            if max_bytes is not None and size > max_bytes:  # a sparse file's holes count
                raise fetch_too_large(self.name, str(src), size, max_bytes)
            fd, tmp = tempfile.mkstemp(prefix=f".{dst.name}.", suffix=".tmp", dir=dst.parent)
            try:
                with os.fdopen(fd, "wb") as out:
                    if max_bytes is None:
                        shutil.copyfileobj(f, out, 1 << 20)
                    else:
                        left = max_bytes + 1
                        while left > 0 and (chunk := f.read(min(left, 1 << 20))):
                            out.write(chunk)
                            left -= len(chunk)
                        if left <= 0:  # it grew past the bound while copied
                            raise fetch_too_large(self.name, str(src), None, max_bytes)
                    os.fchmod(out.fileno(), safe_mode(os.fstat(f.fileno()).st_mode))
                os.replace(tmp, dst)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise

    async def get_file(self, remote_path: str, local_path: str, *,
                       max_bytes: int | None = None, within: str | None = None) -> None:
        try:
            await asyncio.to_thread(self._copy_out, self._path(remote_path), Path(local_path),
                                    max_bytes, None if within is None
                                    else str(self._path(within)))
        except OSError as e:
            raise SiteError(f"{self.name}: cannot fetch {remote_path}: {e.strerror}") from None

    async def read_end(self, path: str, max_bytes: int) -> bytes | None:
        """The last `max_bytes` bytes of a file (None: no such file)."""
        def read() -> bytes:  # a regular file only, and never more than max_bytes of it
            with open_regular(self._path(path)) as f:
                size = os.fstat(f.fileno()).st_size
                f.seek(max(0, size - int(max_bytes)))
                return read_at_most(f, int(max_bytes))
        try:
            return await asyncio.to_thread(read)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise SiteError(f"{self.name}: cannot read {path}: {e.strerror}") from None

    async def stat(self, path: str, *, follow_links: bool = True) -> FileStat | None:
        p = self._path(path)
        try:
            st = await asyncio.to_thread(p.stat, follow_symlinks=follow_links)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise SiteError(f"{self.name}: cannot stat {path}: {e.strerror}") from None
        return FileStat(str(p), st.st_size, st.st_mode, st.st_mtime, stat_mod.S_ISDIR(st.st_mode))

    async def link_target(self, path: str) -> tuple[str, str | None]:
        p = self._path(path)
        try:
            text = await asyncio.to_thread(os.readlink, p)
        except FileNotFoundError:  # gone since it was listed
            raise
        except OSError as e:
            raise SiteError(f"{self.name}: cannot read the link {path}: {e.strerror}") from None
        return text, await self.real_path(str(p))

    async def real_path(self, path: str) -> str | None:
        try:
            return await asyncio.to_thread(os.path.realpath, self._path(path), strict=True)
        except OSError:  # missing, a loop, or a directory on the way not readable
            return None

    async def list_files(self, root: str, *, max_depth: int = 3, limit: int = 10000,
                         special: bool = False) -> list[FileStat]:
        """Regular files under `root` (and with `special` the FIFOs, devices, sockets and
        links: see Transport.list_files); links not followed."""
        base = self._path(root)

        def walk() -> list[FileStat]:
            out: list[FileStat] = []
            todo = [("", 1)]
            while todo and len(out) < limit:
                rel, depth = todo.pop()
                try:
                    entries = sorted(os.scandir(base / rel if rel else base),
                                     key=lambda e: e.name)
                except (FileNotFoundError, NotADirectoryError, PermissionError):
                    continue
                for e in entries:
                    sub = f"{rel}/{e.name}" if rel else e.name
                    st = e.stat(follow_symlinks=False)
                    if stat_mod.S_ISDIR(st.st_mode) and depth < max_depth:
                        todo.append((sub, depth + 1))
                    elif listed(st.st_mode, special) and len(out) < limit:
                        out.append(FileStat(f"{root.rstrip('/')}/{sub}", st.st_size,
                                            st.st_mode, st.st_mtime, False))
            return out

        return await asyncio.to_thread(walk)

    async def close(self) -> None:
        return None
