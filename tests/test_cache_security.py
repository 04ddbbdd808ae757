"""What a writer of the cache folder can do: at most make idemlint recompute (issue 31).

Each test plants a hostile entry where a CI cache restored from another branch, or a shared
`IDEMLINT_CACHE_DIR`, would put it, with a valid checksum, and runs idemlint as users do."""

from __future__ import annotations

import hashlib
import marshal
import os
import pickle
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from idemlint import plain_data
from idemlint.cache import CHECKSUM_SIZE, INDEX_MAGIC, MAGIC, ResultCache, content_hash
from idemlint.finding import Finding

from conftest import FLAKE8_EVERY_FINDING

PROJECTS = Path(__file__).parent / "projects"
CROSS_MODULE = "shop/services/notifications.py:13:5: IDM301"  # found only through the project index


class RunsCode:
    """A pickle that runs a shell command when it is loaded."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


def rewrite(path: Path, magic: bytes, payload: bytes) -> None:
    """Store `payload` as the cache would: its magic line and a correct checksum."""
    path.write_bytes(magic + hashlib.blake2b(payload, digest_size=CHECKSUM_SIZE).digest() + payload)


def payload_of(path: Path, magic: bytes) -> bytes:
    return path.read_bytes()[len(magic) + CHECKSUM_SIZE :]


@pytest.fixture
def flat(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    project = tmp_path / "flat"
    shutil.copytree(PROJECTS / "flat", project)
    return project, {**os.environ, "IDEMLINT_CACHE_DIR": str(tmp_path / "cache")}


def saved_cache(folder: Path) -> ResultCache:
    """A results cache holding one clean file, `a.py` beside the cache folder, saved."""
    source = folder.parent / "a.py"
    folder.parent.mkdir(parents=True, exist_ok=True)
    source.write_text("x = 1\n")
    cache = ResultCache(folder, "salt")
    cache.put("a.py", None, content_hash(source.read_bytes()), [])
    cache.save()
    return cache


def run(project: Path, env: dict[str, str], *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, cwd=project, env=env, timeout=300)


# every finding, whatever its confidence: the cache must not change what is found

CHECK = (
    sys.executable,
    "-m",
    "idemlint",
    "check",
    "--exit-zero",
    "--output-format",
    "concise",
    "--min-confidence",
    "low",
)
FLAKE8 = FLAKE8_EVERY_FINDING


def test_a_pickled_index_planted_in_the_cache_runs_nothing(flat: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    project, env = flat
    cold = run(project, env, *CHECK)
    assert CROSS_MODULE in cold.stdout, cold.stdout  # the index was built and used
    (store,) = Path(env["IDEMLINT_CACHE_DIR"]).rglob("index-*.bin")
    key, manifest, _index, digest = marshal.loads(payload_of(store, INDEX_MAGIC))
    marker = tmp_path / "ran"
    rewrite(store, INDEX_MAGIC, marshal.dumps((key, manifest, pickle.dumps(RunsCode(marker)), digest)))

    plugin = run(project, env, *FLAKE8, "shop/services/notifications.py")
    assert not marker.exists()
    assert plugin.returncode in (0, 1) and "Traceback" not in plugin.stderr, plugin.stderr
    assert "notifications.py:13:IDM301" not in plugin.stdout  # the entry was refused: the file alone is checked

    with (project / "shop" / "services" / "notifications.py").open("a") as edited:
        edited.write("# edited: the stored index is loaded, refused, and built again\n")
    warm = run(project, env, *CHECK)
    assert not marker.exists()
    assert warm.stdout == cold.stdout and "Traceback" not in warm.stderr  # rebuilt: the same findings
    key_after, _manifest, index_after, _digest = marshal.loads(payload_of(store, INDEX_MAGIC))
    assert key_after == key and not index_after.startswith(b"\x80")  # plain data again, no pickle


def test_a_code_object_planted_in_the_results_is_never_used(tmp_path: Path) -> None:
    """marshal can hold code objects; the results file is checked against the finding types,
    so a planted one makes its entry corrupt (the file is checked again), not a finding."""
    cache = saved_cache(tmp_path / "cache")
    salt, entries = marshal.loads(payload_of(cache.path, MAGIC))
    planted = compile("import os; os.system('touch ran')", "<planted>", "exec")
    entries["a.py"] = (None, entries["a.py"][1], (planted,), ())
    entries["b.py"] = planted
    rewrite(cache.path, MAGIC, marshal.dumps((salt, entries)))

    reopened = ResultCache(tmp_path / "cache", "salt")
    assert reopened.entries == {}
    assert reopened.lookup("a.py", tmp_path / "a.py")[0] is None


def test_a_stored_value_of_the_wrong_type_is_a_corrupt_entry() -> None:
    finding = Finding("a.py", 3, 1, "IDM001", 3, 9, "n", "m", "s")
    stored = plain_data.dumps((finding,))
    assert plain_data.loads(stored, tuple[Finding, ...]) == (finding,)
    wrong_line = marshal.dumps((("a.py", "3", 1, "IDM001", 3, 9, "n", "m", "s", None, "error", "high", "", ()),))
    with pytest.raises(plain_data.Corrupt):
        plain_data.loads(wrong_line, tuple[Finding, ...])
    with pytest.raises(plain_data.Corrupt):
        plain_data.loads(marshal.dumps(((*plain_data.to_plain(finding), "extra"),)), tuple[Finding, ...])
    with pytest.raises(plain_data.Corrupt):
        plain_data.loads(b"\x00garbage", tuple[Finding, ...])


def test_the_cache_folder_is_private_and_a_file_others_can_write_is_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = saved_cache(tmp_path / "cache" / "project")
    source = tmp_path / "cache" / "a.py"
    assert stat.S_IMODE(cache.path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "cache" / "project").stat().st_mode) == 0o700
    assert stat.S_IMODE(cache.path.stat().st_mode) & 0o077 == 0
    assert ResultCache(tmp_path / "cache" / "project", "salt").lookup("a.py", source)[0] == []

    os.chmod(cache.path, 0o666)
    assert ResultCache(tmp_path / "cache" / "project", "salt").entries == {}
    ResultCache(tmp_path / "cache" / "project", "salt")
    assert capsys.readouterr().err == (
        f"idemlint: warning: ignoring the cache file {cache.path}: others can write to it\n"
    )


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="changing a file's owner needs root")
def test_a_cache_file_owned_by_another_user_is_ignored(tmp_path: Path) -> None:
    cache = saved_cache(tmp_path / "cache")
    os.chown(cache.path, 12345, 12345)
    assert ResultCache(tmp_path / "cache", "salt").entries == {}


def test_a_cache_file_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    cache = saved_cache(tmp_path / "cache")
    elsewhere = tmp_path / "elsewhere.bin"
    cache.path.rename(elsewhere)
    cache.path.symlink_to(elsewhere)
    assert ResultCache(tmp_path / "cache", "salt").entries == {}
