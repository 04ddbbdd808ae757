"""Reading and writing the project's source files as a hostile repository cannot abuse.

A repository can commit a symbolic link: `x.py -> /dev/zero` would be read forever, a
link to a FIFO would block, and a link to `~/.ssh/config` or to a file in another project
would be read (and, with `--fix`, written). So discovery checks only files that are, or
link to, regular files under the project root (`link_problem`), every read takes at most
one byte more than the parser accepts from a regular file (`read_source`), and idemlint
writes only to regular files that are not links, under the root (`write_problem`).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

# the largest source idemlint analyses; a larger one is reported (IDM900), not read whole
MAX_BYTES = 8 * 1024 * 1024


def read_source(path: Path | str) -> bytes:
    """The first MAX_BYTES + 1 bytes of a regular file (enough for the parser to refuse a
    larger one). Raises OSError, also for anything but a regular file."""
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        with open(handle, "rb", closefd=False) as stream:
            return stream.read(MAX_BYTES + 1)
    finally:
        os.close(handle)


def _under(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def link_problem(text: str, root: str) -> str | None:
    """Why the symbolic link `text` (or a file reached through a linked folder) is not read,
    or None: it must lead to a regular file under the (resolved) project `root`."""
    real = os.path.realpath(text)
    try:
        regular = stat.S_ISREG(os.stat(real).st_mode)
    except OSError:
        return "a broken symbolic link"
    if not regular:
        return "a symbolic link to something that is not a regular file"
    if not _under(real, root):
        return "a symbolic link to a file outside the project root"
    return None


def write_problem(path: Path | str, root: Path) -> str | None:
    """Why idemlint must not rewrite `path`, or None: only a regular file that is not a link,
    under the project root, is written (a link would write through to its target)."""
    text = os.fspath(path)
    try:
        mode = os.lstat(text).st_mode
    except OSError as error:
        return (error.strerror or str(error)).lower()
    if stat.S_ISLNK(mode):
        return "it is a symbolic link; fix the file it links to"
    if not stat.S_ISREG(mode):
        return "not a regular file"
    if not _under(os.path.realpath(text), os.path.realpath(root)):
        return "it is outside the project root"
    return None


def encode_like(original: bytes, text: str) -> bytes:
    """Bytes for the fixed text in the original file's encoding (cookie, BOM, line endings
    are already in `text`)."""
    import io
    import tokenize

    encoding, _ = tokenize.detect_encoding(io.BytesIO(original).readline)
    return text.encode(encoding)
