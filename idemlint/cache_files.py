"""How a cache file is written and read back: atomically, by this user only, checksummed.

A cache folder is shared with nothing: it is created 0700, each file 0600, and a file is read
back only if it is a regular file this user owns that no one else can write, and its checksum
matches. A truncated, corrupt or planted file is a miss, never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

CHECKSUM_SIZE = 16


def read_checked(path: Path, magic: bytes) -> bytes | None:
    """The payload of a file written by `_write_checked`, or None if missing, corrupt, or not
    a regular file that only this user can have written (see `_trusted`)."""
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not trusted(path, os.fstat(handle)):
            return None
        with open(handle, "rb", closefd=False) as stream:
            data = stream.read()
    except OSError:
        return None
    finally:
        os.close(handle)
    checksum = data[len(magic) : len(magic) + CHECKSUM_SIZE]
    payload = data[len(magic) + CHECKSUM_SIZE :]
    if not data.startswith(magic) or hashlib.blake2b(payload, digest_size=CHECKSUM_SIZE).digest() != checksum:
        return None
    return payload


_warned: set[str] = set()


def trusted(path: Path, status: os.stat_result) -> bool:
    """Whether a cache file may be read: a regular file owned by this user and writable by no
    one else. Another's file is ignored (with one warning a run), never read."""
    import stat as stat_module

    if not stat_module.S_ISREG(status.st_mode):
        return False
    reason = ""
    if hasattr(os, "getuid") and status.st_uid != os.getuid():
        reason = "it is owned by another user"
    elif hasattr(os, "getuid") and status.st_mode & 0o022:
        reason = "others can write to it"
    if not reason:
        return True
    if not _warned:
        import sys

        print(f"idemlint: warning: ignoring the cache file {path}: {reason}", file=sys.stderr)
    _warned.add(str(path))
    return False


def private_folder(folder: Path) -> None:
    """Make `folder` and its missing parents, each readable by this user only (0700)."""
    missing = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    for each in reversed(missing):
        with contextlib.suppress(FileExistsError):
            each.mkdir(mode=0o700)


def write_checked(path: Path, magic: bytes, payload: bytes) -> bool:
    """Write atomically: a temporary file in the same folder (created 0600, in a 0700
    folder), renamed over the old one (a link there is replaced, not followed)."""
    import tempfile

    temporary = ""
    try:
        private_folder(path.parent)
        with tempfile.NamedTemporaryFile("wb", dir=path.parent, delete=False, suffix=".tmp") as handle:
            temporary = handle.name
            handle.write(magic + hashlib.blake2b(payload, digest_size=CHECKSUM_SIZE).digest() + payload)
        os.replace(temporary, path)
    except OSError:
        if temporary:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        return False
    return True
