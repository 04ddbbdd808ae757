"""The real pre-commit, running this repository's hook with `try-repo` on a scratch repository."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import lint

ROOT = Path(__file__).resolve().parent.parent
BUGGY = """\
import uuid

import requests


def charge(order):
    for attempt in range(2):
        try:
            return requests.post("https://pay.example", headers={"Idempotency-Key": str(uuid.uuid4())}, timeout=5)
        except requests.ConnectionError:
            pass
"""
CLEAN = "import requests\n\n\ndef ping():\n    return requests.get('https://pay.example/health', timeout=5)\n"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("scratch")
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "ci@example.invalid")
    git(repo, "config", "user.name", "ci")
    (repo / "buggy.py").write_text(BUGGY)
    (repo / "clean.py").write_text(CLEAN)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    return repo


def try_repo(scratch: Path, *files: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(scratch.parent / "pre-commit-home")}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "idemlint", "--files", *files],
        cwd=scratch,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )


def test_hook_fails_on_a_buggy_file_and_names_the_finding(scratch: Path) -> None:
    result = try_repo(scratch, "buggy.py")
    assert result.returncode == 1, result.stdout + result.stderr
    (finding,) = lint(BUGGY).findings
    marker = " [*]" if finding.fix is not None and finding.fix.safe else ""  # fixable, as ruff marks it
    assert f"buggy.py:{finding.line}:{finding.col}: IDM001{marker} {finding.message}" in result.stdout


def test_hook_passes_on_a_clean_file(scratch: Path) -> None:
    result = try_repo(scratch, "clean.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout


def readme_block(language: str, contains: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = text.split(f"```{language}\n")[1:]
    return next(b.split("```")[0] for b in blocks if contains in b)


def test_readme_snippet_names_the_hooks_this_repository_defines() -> None:
    import yaml

    snippet = yaml.safe_load(readme_block("yaml", "repos:"))
    hooks = {h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    listed = {h["id"] for h in snippet["repos"][0]["hooks"]} | {"idemlint-fix"}
    assert listed == hooks
    assert all(
        h["require_serial"] and "--force-exclude" in h["entry"]
        for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    )


def test_the_readme_snippet_runs_pinned_to_a_commit(scratch: Path) -> None:
    """The README's configuration as written, with only the repository URL pointed at this
    clone and `rev` at its HEAD commit: pre-commit installs idemlint from that commit and runs it."""
    import yaml

    config = yaml.safe_load(readme_block("yaml", "repos:"))
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    config["repos"][0]["repo"] = str(ROOT)
    config["repos"][0]["rev"] = head.stdout.strip()
    (scratch / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    env = {**os.environ, "PRE_COMMIT_HOME": str(scratch.parent / "pre-commit-home")}
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--files", "buggy.py", "clean.py"],
        cwd=scratch,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "buggy.py:" in result.stdout and "IDM001" in result.stdout


def test_the_readme_pip_line_installs_from_a_commit(tmp_path: Path) -> None:
    """`pip install "git+URL@SHA"`, the README's form, pointed at this clone's HEAD."""
    line = next(line for line in readme_block("yaml", "pip install").splitlines() if "pip install" in line)
    requirement = line.split("pip install ", 1)[1].strip().strip('"')
    assert requirement.startswith("git+https://github.com/idemlint/idemlint@")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    local = f"git+{ROOT.as_uri()}@{head.stdout.strip()}"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(tmp_path / "site"), local],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "idemlint" / "cli.py").is_file()
