"""The result cache: one file per project and run-wide key, trusted by file stat first.

A warm run (nothing changed since the last one) must cost little more than start-up, so a
file's entry is found without reading the file: the entry keeps the file's size, mtime,
ctime and inode, and when all four match it is served as it is. When they differ, the file
is read and its content hash compared (a `touch`, a checkout of the same text); only a
different hash means checking the file again.

One file holds every entry for a project root and one run-wide key (idemlint's version, the
rules selected, the configuration, the project index's digest), so a warm run reads one file
instead of one per source file. Entries are plain tuples written with `marshal` behind a
magic line and a checksum: a truncated or corrupt file (or one from another version) is
ignored and rebuilt. It is written to a temporary file and renamed over the old one, so
concurrent runs (pre-commit starts several) never see half a file; the last writer wins,
after merging the entries already on disk.

A stat is trusted only when the file was last changed a while before it was read: an edit
in the same clock tick as the read, keeping the size, would otherwise look unchanged (git's
"racily clean" problem). Such a file's entry keeps only the hash, and the next run reads it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields, is_dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Generic, TypeVar

from idemlint import __version__, plain_data
from idemlint import finding as finding_module
from idemlint.analysis.project_index import ProjectIndex
from idemlint.cache_files import CHECKSUM_SIZE as CHECKSUM_SIZE
from idemlint.cache_files import private_folder, read_checked, write_checked
from idemlint.finding import Finding
from idemlint.reading import read_source

MAGIC = b"idemlint-results-3\n"
# a stat is trusted only if the file changed at least this long before it was read
RACY_NS = 2_000_000_000
# entries kept per cache file: those of the current run always, older ones up to this many
MAX_ENTRIES = 200_000
# run-wide keys (cache files) kept per project: a few selections or configurations in turn
MAX_FILES = 8

clock = time.time_ns  # when a run starts (tests move it on)

Stamp = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode
# (stat stamp, or None: read the file to compare; content hash; its findings, or its audit
# rows; (name, digest) of each index function the file names; whether it was parsed)
Entry = tuple["Stamp | None", bytes, tuple[Any, ...], tuple[tuple[str, str], ...], bool]
_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")

# part of the run-wide key: a finding class with a new field starts afresh
SHAPE = repr(
    sorted(
        (name, tuple(f.name for f in fields(cls)))
        for name, cls in vars(finding_module).items()
        if isinstance(cls, type) and is_dataclass(cls) and cls.__module__ == finding_module.__name__
    )
)
_RESULTS = tuple[str, dict[str, Any]]  # (salt, key -> entry, each checked when it is loaded)


def stamp(stat: os.stat_result) -> Stamp:
    return (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)


def settled(now: Stamp, started: int) -> bool:
    """Whether a stat can be trusted: the file last changed a while before `started`."""
    return max(now[1], now[2]) < started - RACY_NS


def trusted_stamp(now: Stamp | None, started: int) -> Stamp | None:
    """The stat to record for a file just read: None when it cannot be trusted next time."""
    return now if now is not None and settled(now, started) else None


def content_hash(source: bytes) -> bytes:
    return hashlib.blake2b(source, digest_size=16).digest()


def depended_on(source: bytes, functions: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The project functions a file names (by identifier), with their digests now: its cached
    result holds only while these are unchanged."""
    if not functions:
        return ()
    names = {token.decode() for token in set(_IDENTIFIER.findall(source))}
    return tuple(sorted((name, functions[name]) for name in names if name in functions))


def file_key(real: Path | str, shown: str, kind: str | None, anchor: str | None) -> str:
    return f"{real}\0{shown}\0{kind}\0{anchor}"


Item = TypeVar("Item")


class ResultCache(Generic[Item]):
    """The entries of one project and run-wide key; `save` writes back what changed. An entry
    holds, besides the file's findings, the digests of the project functions the file names
    (`functions`: name -> digest): editing a helper re-checks the files that name it."""

    def __init__(
        self,
        directory: Path,
        salt: str,
        functions: Mapping[str, str] | None = None,
        item: type[Item] = Finding,  # type: ignore[assignment]
        kind: str = "results",
    ) -> None:
        """`item`: what an entry lists for its file (a Finding; `audit` stores its rows);
        `kind`: the name its files start with, so each command keeps its own."""
        self.functions: Mapping[str, str] = functions or {}
        self.folder = directory / __version__
        self.kind = kind
        self.path = self.folder / f"{kind}-{salt[:32]}.bin"
        self.entry_type: Any = tuple[Stamp | None, bytes, tuple[item, ...], tuple[tuple[str, str], ...], bool]  # type: ignore[valid-type]
        self.salt = salt
        self.directory = directory
        self.entries = self._load(self.path)
        self.changed: dict[str, Entry] = {}
        self.used: set[str] = set()
        self.started = clock()
        self.unparsed = 0  # the hits that were files no rule's words are in

    def _load(self, path: Path) -> dict[str, Entry]:
        payload = read_checked(path, MAGIC)
        if payload is None:
            return {}
        try:
            salt, stored = plain_data.loads(payload, _RESULTS)
        except plain_data.Corrupt:
            return {}
        if salt != self.salt:
            return {}
        entries: dict[str, Entry] = {}
        check = plain_data.decoder(self.entry_type)
        for key, entry in stored.items():
            with contextlib.suppress(plain_data.Corrupt):
                entries[key] = check(entry)  # a malformed entry is dropped: its file is checked again
        return entries

    def lookup(
        self, key: str, real: Path | str, read_new: bool = True
    ) -> tuple[list[Item] | None, bytes | None, Stamp | None, bytes]:
        """(cached findings or None, the source if it was read, the file's stamp, its hash).
        Without `read_new`, a file with no usable entry is not read (nor hashed): the caller
        has it read where it is checked.

        An OSError from reading the file propagates: the caller reports it."""
        self.used.add(key)
        entry = self.entries.get(key)
        if entry is not None and not self._current(entry[3]):
            entry = None  # a helper it names has changed: recompute
        try:
            now = stamp(os.stat(real))
        except OSError:
            now = None
        if entry is not None and now is not None and entry[0] == now:
            self.unparsed += not entry[4]
            return list(entry[2]), None, now, entry[1]
        if entry is None and not read_new:
            if now is None:
                os.stat(real)  # the file's own error, for the caller to report
            return None, None, now, b""
        source = read_source(real)
        digest = content_hash(source)
        if entry is not None and entry[1] == digest:
            if trusted_stamp(now, self.started) not in (None, entry[0]):
                self.changed[key] = (now, digest, entry[2], entry[3], entry[4])  # next time, the stat is enough
            self.unparsed += not entry[4]
            return list(entry[2]), source, now, digest
        return None, source, now, digest

    def _current(self, depends: tuple[tuple[str, str], ...]) -> bool:
        return all(self.functions.get(name) == digest for name, digest in depends)

    def put(
        self,
        key: str,
        now: Stamp | None,
        digest: bytes,
        findings: Sequence[Item],
        depends: tuple[tuple[str, str], ...] = (),
        parsed: bool = True,
    ) -> None:
        """Record a file's findings; `depends`: `depended_on(source, functions)` of its source;
        `parsed`: False for a file no rule's words are in."""
        try:
            plain_data.to_plain(findings)
        except ValueError:
            return  # a finding holding something that is not plain data: not cached
        self.changed[key] = (trusted_stamp(now, self.started), digest, tuple(findings), depends, parsed)

    def save(self) -> None:
        """Merge the changes into the file on disk (another run may have written it since)."""
        if not self.changed:
            with contextlib.suppress(OSError):
                os.utime(self.path)  # most recently used: the last to be pruned
            return
        entries = self._load(self.path)
        entries.update(self.changed)
        if len(entries) > MAX_ENTRIES:
            keep = self.used | set(self.changed)
            entries = {k: v for k, v in entries.items() if k in keep}
        try:
            payload = plain_data.dumps((self.salt, entries))
        except ValueError:
            return  # a finding holding something marshal cannot write: do without the cache
        with contextlib.suppress(OSError):
            ignore = self.directory / ".gitignore"
            if not ignore.exists():
                private_folder(self.directory)
                ignore.write_text("# Created by idemlint: cached results, safe to delete.\n*\n")
        if not write_checked(self.path, MAGIC, payload):
            return  # a cache that cannot be written only costs time
        prune_stores(self.folder, self.kind)


def prune_stores(folder: Path, kind: str) -> None:
    """Keep the `MAX_FILES` stores of `kind` most recently used (a hit touches its store)."""
    with contextlib.suppress(OSError):
        others = sorted(folder.glob(f"{kind}-*.bin"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in others[MAX_FILES:]:
            old.unlink()


INDEX_MAGIC = b"idemlint-index-64\n"  # bump with the index format: tests/test_warm_path.py pins it

Manifest = tuple[tuple[str, "Stamp | None", bytes], ...]  # (file, stat or None, content hash) each
IndexDigests = tuple[str, dict[str, str]]
# (key, manifest, the index as plain data, its digests), checked when read
_STORED_INDEX = tuple[str, tuple[tuple[str, Stamp | None, bytes], ...], bytes, tuple[str, dict[str, str]]]
_LISTING = tuple[str, tuple[str, ...], tuple[Stamp | None, ...], tuple[str, ...]]


def cached_index(
    files: Iterable[str],
    directory: Path | None,
    key: str,
    build: Callable[[list[str], Callable[[Path], bytes]], ProjectIndex],
) -> ProjectIndex:
    """`build(files, read)`, or the index it built last time for the same files (same stat, or
    same content) and the same `key` (what else the index depends on: its configuration and
    root). Facts are the builder's own: the whole index is stored, not a copy of its logic.
    The builder reads each file through `read`, which records its stat and hash for the
    manifest stored beside the index: a cold run reads every file once."""
    paths = list(dict.fromkeys(files))
    if directory is None:
        return build(paths, read_source)
    store = _index_store(directory, key)
    manifest, blob, digest = _stored_index(store, key, paths)
    found = _index_of(blob)
    if found is not None:
        if index_digests(found) != digest:  # stored by a build whose digests were computed otherwise
            write_checked(store, INDEX_MAGIC, plain_data.dumps((key, manifest, blob, index_digests(found))))
        return found
    started = clock()
    recorded: dict[str, tuple[Stamp | None, bytes]] = {}

    def read(path: Path) -> bytes:
        name = str(path)
        try:
            now: Stamp | None = stamp(os.stat(name))  # before the read: a change meanwhile shows next time
        except OSError:
            now = None
        source = read_source(path)
        recorded[name] = (trusted_stamp(now, started), content_hash(source))
        return source

    built = build(paths, read)
    # a file the builder could not read (or did not ask for) is recorded as unreadable
    fresh = tuple((name, *recorded.get(name, (None, b""))) for name in paths)
    with contextlib.suppress(ValueError):
        stored = plain_data.dumps((key, fresh, plain_data.dumps(built), index_digests(built)))
        if write_checked(store, INDEX_MAGIC, stored):
            prune_stores(store.parent, "index")
    return built


def _index_of(blob: bytes | None) -> ProjectIndex | None:
    """The index stored as plain data in `blob`, every field checked; None if it is not one."""
    if blob is None:
        return None
    from idemlint.analysis.summary_records import Summary

    # what the index's annotations name that their modules import only for type checking; a
    # stored `Step` holds no CST node (its path and line say where), so its `node` is None
    names = {"Summary": Summary, "cst": SimpleNamespace(CSTNode=type(None))}
    try:
        found: ProjectIndex = plain_data.loads(blob, ProjectIndex, names)
    except plain_data.Corrupt:
        return None
    return found


def index_digests(index: ProjectIndex) -> IndexDigests:
    """What the results cache keys on: the index's structure (run-wide) and, by name, what
    its functions do (per file, for the names the file holds)."""
    return index.structure_digest, index.function_digests


def stored_index(files: Iterable[str], directory: Path, key: str) -> ProjectIndex | None:
    """The index `cached_index` stored for these files and `key`, if none of them changed
    since; None otherwise. Never builds one (the flake8 plugin asks, one file at a time)."""
    _manifest, blob, _digest = _stored_index(_index_store(directory, key), key, list(files))
    return _index_of(blob)


def stored_index_digest(files: Iterable[str], directory: Path, key: str) -> IndexDigests | None:
    """The digests of the index `cached_index` would reuse for these files and `key`, without
    loading the index (a warm run needs only these, for the results' keys); None when it would
    build a new one."""
    _manifest, blob, digest = _stored_index(_index_store(directory, key), key, list(files))
    return digest if blob is not None else None


def index_is_stored(directory: Path, key: str) -> bool:
    """Whether `cached_index` stored an index for `key` (current or not)."""
    return _index_store(directory, key).is_file()


def _index_store(directory: Path, key: str) -> Path:
    return directory / __version__ / f"index-{hashlib.sha256(key.encode()).hexdigest()[:32]}.bin"


def _stored_index(store: Path, key: str, paths: list[str]) -> tuple[Manifest, bytes | None, Any]:
    """(the manifest of `paths` as they are now, the stored index (plain data) or None when it
    is not for these files' contents and `key`, its digest; the manifest is left empty then).
    A manifest entry whose stat changed but not its content is written back, so that the
    next run trusts the stat again."""
    started = clock()
    unique = list(dict.fromkeys(paths))
    stored = read_checked(store, INDEX_MAGIC)
    if stored is None:
        return (), None, ""
    try:
        old_key, old_manifest, blob, digest = plain_data.loads(stored, _STORED_INDEX)
    except plain_data.Corrupt:
        return (), None, ""
    if old_key != key or len(old_manifest) != len(unique):
        return (), None, ""
    manifest: list[tuple[str, Stamp | None, bytes]] = []
    for name, old in zip(unique, old_manifest, strict=True):
        try:
            now: Stamp | None = stamp(os.stat(name))
        except OSError:
            now = None
        if old[0] == name and old[1] is not None and old[1] == now:
            manifest.append(old)
            continue
        try:
            content = content_hash(read_source(name))
        except OSError:
            content = b""
        if old[0] != name or old[2] != content:
            return (), None, ""  # nothing to reuse: no need to read the rest
        manifest.append((name, trusted_stamp(now, started), content))
    if tuple(manifest) != old_manifest:
        write_checked(store, INDEX_MAGIC, plain_data.dumps((key, tuple(manifest), blob, digest)))
    else:
        with contextlib.suppress(OSError):
            os.utime(store)  # most recently used: the last to be pruned
    return tuple(manifest), blob, digest


LISTING_MAGIC = b"idemlint-listing-2\n"


def _stamps(paths: Iterable[str]) -> tuple[Stamp | None, ...]:
    out: list[Stamp | None] = []
    for name in paths:
        try:
            out.append(stamp(os.stat(name)))
        except OSError:
            out.append(None)
    return tuple(out)


def cached_listing(directory: Path, key: str, walk: Callable[[], tuple[list[str], list[str], bool]]) -> list[str]:
    """The files `walk()` lists, or the list it gave last time for the same `key` while every
    path it watched has the same stat (or is still missing). `walk` returns (files, watched
    paths, whether the listing may be kept): a folder's stat changes when a name in it is
    added, removed or renamed, so watching the folders walked (and the ignore files that
    applied) finds every change to the listing. Kept only when nothing watched changed in
    the last moments before the walk (see RACY_NS), like a file's stat in the results."""
    store = directory / __version__ / f"listing-{hashlib.sha256(key.encode()).hexdigest()[:32]}.bin"
    stored = read_checked(store, LISTING_MAGIC)
    if stored is not None:
        with contextlib.suppress(plain_data.Corrupt):
            old_key, watched, stamps, listed = plain_data.loads(stored, _LISTING)
            if old_key == key and _stamps(watched) == stamps:
                return list(listed)
    started = clock()
    files, watched, keep = walk()
    now = _stamps(watched)
    if keep and all(s is None or settled(s, started) for s in now):
        with contextlib.suppress(ValueError):
            write_checked(store, LISTING_MAGIC, plain_data.dumps((key, tuple(watched), now, tuple(files))))
    return files
