"""Files the engine keeps for one user (the store, its journal files, its migration copies,
Globus tokens): before
one is used, it must be that user's own. In a shared or world-writable directory (a data dir
under /tmp, a group project space), another local user can plant the file, or a link to
somewhere else, before the user's first run: a store planted so is read by its planter and
written by them (a job, a workflow step, an agent task stored there runs as the user), and a
token file planted so sends the user's transfers through the planter's Globus login."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def others_problem(path: Path, what: str) -> str | None:
    """Why `path` (if it exists) is not safe to use as the user's own `what`: a link or file
    another user owns, or a file others can write. None when it is fine or absent."""
    try:
        link = os.lstat(path)
    except FileNotFoundError:
        return None
    me = os.getuid()
    if stat.S_ISLNK(link.st_mode):
        if link.st_uid != me:
            return (f"{what} {path} is a link made by another user (uid {link.st_uid}) to "
                    f"{os.readlink(path)}: not used; remove it")
        try:
            target = os.stat(path)
        except FileNotFoundError:
            return None  # the user's own link, to a file not made yet
    else:
        target = link
    if target.st_uid != me:
        return (f"{what} {path} belongs to another user (uid {target.st_uid}): not used; "
                "remove it, or give another path")
    if target.st_mode & 0o022:
        return (f"{what} {path} can be written by others (mode "
                f"{stat.S_IMODE(target.st_mode):04o}): not used; chmod 600 it if it is "
                "yours, else remove it")
    return None


def directory_problem(path: Path, what: str) -> str | None:
    """Why the existing directory `path` cannot hold the user's `what`: others can write it
    without the sticky bit (they could replace the file after it is checked)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    if st.st_mode & 0o002 and not st.st_mode & stat.S_ISVTX:
        return (f"the directory {path} of {what} can be written by anyone (mode "
                f"{stat.S_IMODE(st.st_mode):04o}, no sticky bit): another user could "
                "replace the file; use a private directory")
    return None


def own_directory_problem(path: Path, what: str) -> str | None:
    """Why `path` (if it exists) is not safe to use as the user's own directory `what`: a
    link another user made (or one leading nowhere), not a directory, another user's, or
    one others can write (they could add, remove or replace what is in it). None when it is
    fine or absent."""
    try:
        link = os.lstat(path)
    except FileNotFoundError:
        return None
    me = os.getuid()
    if stat.S_ISLNK(link.st_mode) and link.st_uid != me:
        return (f"{what} {path} is a link made by another user (uid {link.st_uid}) to "
                f"{os.readlink(path)}: not used; remove it")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return f"{what} {path} is a link to {os.readlink(path)}, which does not exist: " \
               "not used; remove it"
    if not stat.S_ISDIR(st.st_mode):
        return f"{what} {path} is not a directory: not used; remove it"
    if st.st_uid != me:
        return (f"{what} {path} belongs to another user (uid {st.st_uid}): not used; "
                "remove it, or give the store another path")
    if st.st_mode & 0o022:
        return (f"{what} {path} can be written by others (mode "
                f"{stat.S_IMODE(st.st_mode):04o}): not used; chmod 700 it if it is yours, "
                "else remove it")
    return None
