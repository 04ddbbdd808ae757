"""`idemlint server`'s lifecycle, end to end over stdio as tests/test_server.py drives it: what
the project index may read (never outside the workspace folders, nothing for an `untitled:`
buffer), a prompt exit (on `exit`, on end of input) while an index is still being built, and
bad settings told in the client's log.

A folder of a couple of thousand Python files worth indexing stands for a home folder or a
large repository: indexing it takes seconds, so a test that must answer quickly shows that it
was not read.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from test_server import BUGGY, WAIT, Client, project, run

from idemlint.lsp.checker import Checker, index_scope

QUICK = 5.0  # seconds: a check alone answers well within; indexing the busy folder takes longer
EXIT = 2.0
BUSY_FILES = 2000

BUSY_MODULE = """\
import uuid

import requests


class Job{n}:
    def set_status(self, status):
        if self.complete:
            return
        self.status = status
        self.save()


def call_{n}(order):
    key = str(uuid.uuid4())
    for attempt in range(3):
        response = requests.post("https://x.example/{n}", json={{"id": order.id}}, headers={{"Key": key}})
        if response.ok:
            return response.json()
    return None
"""


@pytest.fixture(scope="module")
def busy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose index takes seconds to build (each module is parsed and summarised)."""
    root = tmp_path_factory.mktemp("busy")
    (root / "pyproject.toml").write_text("[tool.idemlint]\n", encoding="utf-8")
    for n in range(BUSY_FILES):
        folder = root / f"pkg{n // 100}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{n}.py").write_text(BUSY_MODULE.format(n=n), encoding="utf-8")
    return root


@contextlib.asynccontextmanager
async def started(
    cwd: Path, root: Path | None, options: dict[str, Any] | None = None
) -> AsyncIterator[tuple[Client, asyncio.subprocess.Process]]:
    """An initialized server run from `cwd` with `root` as its workspace (None: no workspace);
    killed on the way out if the test left it running."""
    client = Client()
    await client.start_io(sys.executable, "-m", "idemlint.server", cwd=str(cwd))
    process = client._server
    assert process is not None and process.stderr is not None
    drained = asyncio.create_task(process.stderr.read())  # so the server never blocks on it
    try:
        params = lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(),
            root_uri=root.as_uri() if root else None,
            initialization_options=options,
        )
        await asyncio.wait_for(client.initialize_async(params), WAIT)
        client.initialized(lsp.InitializedParams())
        yield client, process
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
        drained.cancel()
        await client.stop()


async def answered_within(client: Client, uri: str, seconds: float) -> list[lsp.Diagnostic]:
    loop = asyncio.get_running_loop()
    start = loop.time()
    diagnostics = await client.diagnostics(uri)
    elapsed = loop.time() - start
    assert elapsed < seconds, f"{uri} took {elapsed:.1f}s"
    return diagnostics


def test_an_untitled_buffer_is_checked_alone(busy: Path) -> None:
    async def body() -> None:
        async with started(cwd=busy, root=None) as (client, _):
            uri = "untitled:Untitled-1"
            client.open(uri, BUGGY)
            assert [d.code for d in await answered_within(client, uri, QUICK)] == ["IDM001"]

    run(body())


def test_a_file_outside_every_workspace_folder_is_checked_alone(busy: Path, tmp_path: Path) -> None:
    async def body() -> None:
        workspace = project(tmp_path)
        async with started(cwd=workspace, root=workspace) as (client, _):
            uri = client.open_file(busy, "outside.py", BUGGY)
            assert [d.code for d in await answered_within(client, uri, QUICK)] == ["IDM001"]

    run(body())


async def _indexing(client: Client, busy: Path) -> str:
    """Open a file of the busy project; return once its index is surely being built."""
    uri = client.open_file(busy, "pay.py", BUGGY)
    await asyncio.sleep(1.0)
    assert client.count(uri) == 0, "the index was built already: the test shows nothing"
    return uri


def test_exit_ends_the_process_promptly_while_an_index_is_built(busy: Path) -> None:
    async def body() -> None:
        async with started(cwd=busy, root=busy) as (client, process):
            await _indexing(client, busy)
            await asyncio.wait_for(client.shutdown_async(None), WAIT)
            client.exit(None)
            assert await asyncio.wait_for(process.wait(), EXIT) == 0

    run(body())


def test_end_of_input_ends_the_process_promptly_while_an_index_is_built(busy: Path) -> None:
    async def body() -> None:
        async with started(cwd=busy, root=busy) as (client, process):
            await _indexing(client, busy)
            assert process.stdin is not None
            process.stdin.close()
            assert await asyncio.wait_for(process.wait(), EXIT) == 1  # no `shutdown` came first

    run(body())


def test_bad_settings_are_logged(tmp_path: Path) -> None:
    async def body() -> None:
        root = project(tmp_path)
        options = {"minConfidence": "bogus", "select": 5, "unsafeFixes": "yes"}
        async with started(cwd=root, root=root, options=options) as (client, _):
            uri = client.open_file(root, "pay.py", BUGGY)
            assert [d.code for d in await client.diagnostics(uri)] == ["IDM001"]  # the defaults stand
            client.workspace_did_change_configuration(
                lsp.DidChangeConfigurationParams(settings={"idemlint": {"ignore": {"IDM001": True}}})
            )
            deadline = asyncio.get_running_loop().time() + WAIT
            while len([m for m in client.logs if "bad setting" in m.message]) < 4:
                assert asyncio.get_running_loop().time() < deadline, [m.message for m in client.logs]
                await asyncio.sleep(0.02)
            bad = [m for m in client.logs if "bad setting" in m.message]
            assert all(m.type == lsp.MessageType.Warning for m in bad)
            assert [m.message for m in bad] == [
                "idemlint: bad setting: unsafeFixes must be true or false, not 'yes': kept False",
                "idemlint: bad setting: minConfidence must be one of low, medium, high, not 'bogus': kept the configured value",
                "idemlint: bad setting: select must be a list of codes, not 5: kept the previous value",
                "idemlint: bad setting: ignore must be a list of codes, not {'IDM001': True}: kept the previous value",
            ]

    run(body())


def test_the_index_reads_only_inside_the_workspace_folder(tmp_path: Path) -> None:
    root = project(tmp_path)
    service, other = root / "service", root / "other"
    for folder in (service, other):
        folder.mkdir()
        (folder / "helpers.py").write_text(BUSY_MODULE.format(n=1), encoding="utf-8")
    (service / "pay.py").write_text(BUGGY, encoding="utf-8")
    assert index_scope(service / "pay.py", root, [root]) == root
    assert index_scope(service / "pay.py", root, [service]) == service  # a monorepo opened at one package
    assert index_scope(service / "pay.py", root, [other]) is None
    assert index_scope(service / "pay.py", root, []) is None

    checker = Checker()
    analysis = checker.analyse((service / "pay.py").as_uri(), 1, BUGGY, "utf-16", (service.resolve(),))
    assert [f.code for f in analysis.findings] == ["IDM001"]
    assert analysis.target.scope == service.resolve()
    [facts] = checker._projects.values()
    assert sorted(path.name for path in facts.files) == ["helpers.py", "pay.py"]
    assert all(path.is_relative_to(service.resolve()) for path in facts.files)
