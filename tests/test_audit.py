"""`idemlint audit`: one row per side-effecting call, each column computed from the source."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from idemlint.audit import audit_source
from idemlint.audit_formats import format_json, format_markdown, format_text, summary
from idemlint.cli import cli
from idemlint.config import Config

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).parent / "golden"

SOURCE = """\
import hashlib
import json
import random
import time
import uuid

import aiohttp
import boto3
import braintree
import httpx
import requests
import stripe
import urllib3
from requests.adapters import HTTPAdapter
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_random_exponential
from urllib3.util.retry import Retry

PSP = "https://psp.example/v1"
stripe.max_network_retries = 2
sqs = boto3.client("sqs")
http = urllib3.PoolManager()


def keyed_in_loop(order, key):
    for attempt in range(3):
        try:
            return requests.post(f"{PSP}/charges", json={"id": order.id}, headers={"Idempotency-Key": key}, timeout=5)
        except requests.ConnectionError:
            time.sleep(random.uniform(0, 2))


@retry(retry=retry_if_exception_type(httpx.ConnectError), stop=stop_after_attempt(3), wait=wait_random_exponential())
def regenerated(order):
    return httpx.post(f"{PSP}/payouts", json={"id": order.id}, headers={"Idempotency-Key": str(uuid.uuid4())})


def clocked(order):
    try:
        return requests.patch(f"{PSP}/orders/{order.id}", headers={"Idempotency-Key": str(time.time())}, timeout=5)
    except requests.Timeout:
        order.status = "failed"
        order.save()


def hashed(payload):
    key = hashlib.sha256(json.dumps(payload).encode()).hexdigest()
    try:
        return requests.post(f"{PSP}/transfers", json=payload, headers={"Idempotency-Key": key}, timeout=5)
    except requests.Timeout:
        return None


def refund(charge_id):
    return stripe.Refund.create(charge=charge_id)


def fifo(event):
    sqs.send_message(QueueUrl="https://sqs.example/q.fifo", MessageBody=event.body, MessageGroupId=event.group)


def sale(amount, headers):
    braintree.Transaction.sale({"amount": amount})
    requests.post(f"{PSP}/sales", headers=headers, timeout=5)


async def notify(session: aiohttp.ClientSession, event):
    async with session.post("https://hooks.example/orders", json=event) as response:
        return response.status


def pooled(body):
    return http.request("POST", "https://ledger.example/entries", body=body)


def mounted():
    session = requests.Session()
    session.mount("https://", HTTPAdapter(max_retries=Retry(total=3, backoff_factor=0.5, backoff_jitter=0.5)))
    return session.put("https://inventory.example/items/1", json={"qty": 1})


def charge_card(client, order):
    return client.charge(order.total)
"""


CONFIG = Config(side_effect_calls=("billing.Client.charge",))


def rows() -> list[tuple[object, ...]]:
    """Each row as the text and markdown reports word it."""
    return [
        (r.line, r.library, r.method, r.call, r.target, str(r.key), str(r.retried or "no"), str(r.timeout))
        for r in audit_source(SOURCE, "svc.py", CONFIG)
    ]


def test_every_library_and_column_value() -> None:
    assert rows() == [
        (
            27,
            "requests",
            "POST",
            "requests.post",
            "https://psp.example/v1/charges",
            "sent",
            "retry loop (line 25)",
            "not handled",
        ),
        (
            34,
            "httpx",
            "POST",
            "httpx.post",
            "https://psp.example/v1/payouts",
            "regenerated per attempt (IDM001)",
            "@tenacity.retry (line 32)",
            "not handled",
        ),
        (
            39,
            "requests",
            "PATCH",
            "requests.patch",
            "https://psp.example/v1/orders/{order.id}",
            "clock-derived (IDM002)",
            "urllib3 Retry adapter (line 77), if mounted for this call",
            "treated as failure (IDM302: state set to 'failed')",
        ),
        (
            48,
            "requests",
            "POST",
            "requests.post",
            "https://psp.example/v1/transfers",
            "content hash (IDM003)",
            "urllib3 Retry adapter (line 77), if mounted for this call",
            "caught; outcome not declared a failure",
        ),
        (
            54,
            "stripe",
            "",
            "stripe.Refund.create",
            "stripe.Refund",
            "not sent",
            "stripe max_network_retries (line 19), with stripe's own idempotency keys",
            "not handled",
        ),
        (58, "boto3", "", "sqs.send_message", "https://sqs.example/q.fifo", "not sent", "no", "not handled"),
        (62, "braintree", "", "braintree.Transaction.sale", "braintree.Transaction", "not sent", "no", "not handled"),
        (
            63,
            "requests",
            "POST",
            "requests.post",
            "https://psp.example/v1/sales",
            "unknown (headers built elsewhere)",
            "urllib3 Retry adapter (line 77), if mounted for this call",
            "not handled",
        ),
        (67, "aiohttp", "POST", "session.post", "https://hooks.example/orders", "not sent", "no", "not handled"),
        (
            72,
            "urllib3",
            "POST",
            "http.request",
            "https://ledger.example/entries",
            "not sent",
            "urllib3 Retry adapter (line 77), if mounted for this call",
            "not handled",
        ),
        (
            78,
            "requests",
            "PUT",
            "session.put",
            "https://inventory.example/items/1",
            "not sent",
            "urllib3 Retry adapter (line 77), if mounted for this call",
            "not handled",
        ),
        (82, "custom", "", "client.charge", "client", "not sent", "no", "not handled"),
    ]


@pytest.mark.parametrize(("fmt", "golden"), [("json", "audit_examples.json"), ("markdown", "audit_examples.md")])
def test_golden_report_on_the_examples(monkeypatch: pytest.MonkeyPatch, fmt: str, golden: str) -> None:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(cli, ["audit", "--format", fmt, "examples"])
    assert result.exit_code == 0, result.output
    assert result.stdout == (GOLDEN / golden).read_text(encoding="utf-8")
    if fmt == "json":
        data = json.loads(result.stdout)
        assert [(g["library"], g["unsafe_and_retried"]) for g in data["summary"]] == [("requests", 1), ("boto3", 1)]


def test_text_report_lists_the_summary_then_every_site(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = CliRunner().invoke(cli, ["audit", "examples"]).stdout
    assert out.splitlines()[0] == "External side effects by library and target"
    assert out.count("  ->  ") == 8


def test_json_sites_hold_fields_not_prose() -> None:
    sites = {site["line"]: site for site in json.loads(format_json(audit_source(SOURCE, "svc.py", CONFIG)))["sites"]}
    assert sites[27]["key"] == {"status": "sent", "rule": None, "detail": None}
    assert sites[27]["retried"] == {"kind": "retry loop", "line": 25, "note": None}
    assert sites[27]["timeout"] == {"handling": "not handled", "rule": None, "detail": None}
    assert sites[34]["key"] == {"status": "regenerated per attempt", "rule": "IDM001", "detail": None}
    assert sites[34]["retried"] == {"kind": "@tenacity.retry", "line": 32, "note": None}
    assert sites[39]["retried"] == {"kind": "urllib3 Retry adapter", "line": 77, "note": "if mounted for this call"}
    assert sites[39]["timeout"] == {
        "handling": "treated as failure",
        "rule": "IDM302",
        "detail": "state set to 'failed'",
    }
    assert sites[48]["timeout"] == {"handling": "caught", "rule": None, "detail": "outcome not declared a failure"}
    assert sites[54]["retried"] == {
        "kind": "stripe max_network_retries",
        "line": 19,
        "note": "with stripe's own idempotency keys",
    }
    assert sites[58]["retried"] is None  # nothing retries it
    assert sites[63]["key"] == {"status": "unknown", "rule": None, "detail": "headers built elsewhere"}
    # No field holds a line number inside prose.
    for site in sites.values():
        for field in ("key", "retried", "timeout"):
            assert "(line" not in json.dumps(site[field])


def test_rows_render_the_same_in_text_and_markdown() -> None:
    audit_rows = audit_source(SOURCE, "svc.py", CONFIG)
    text, markdown = format_text(audit_rows, False), format_markdown(audit_rows)
    line = "    key: clock-derived (IDM002); retried: urllib3 Retry adapter (line 77), if mounted for this call; "
    assert line + "timeout: treated as failure (IDM302: state set to 'failed')" in text.splitlines()
    row = "| svc.py:58 | boto3 | ` sqs.send_message ` | ` https://sqs.example/q.fifo ` | not sent | no | not handled |"
    assert row in (markdown.splitlines())
    assert "KeyStatus" not in text + markdown and "None" not in text + markdown
    assert [asdict(r)["retried"] for r in audit_rows if r.line == 58] == [None]


def test_text_summary_counts_one_site_in_the_singular() -> None:
    out = format_text(audit_source(SOURCE, "svc.py", CONFIG), False)
    summary = [line for line in out.splitlines()[1:] if line.startswith("  ")]
    assert "1 sites" not in out
    assert any(" 4 sites, 1 unkeyed, 2 bad key, 3 unsafe and retried" in line for line in summary)
    braintree = next(line for line in summary if line.lstrip().startswith("braintree"))
    assert braintree.split()[2:5] == ["1", "site,", "1"]


def test_in_house_wrappers_and_callers_in_other_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "flat"
    shutil.copytree(Path(__file__).parent / "projects" / "flat", project)
    monkeypatch.chdir(project)
    result = CliRunner().invoke(cli, ["audit", "--format", "json", "."])
    assert result.exit_code == 0, result.output
    sites = {(s["path"], s["line"]): s for s in json.loads(result.stdout)["sites"]}
    wrapper = sites[("shop/services/notifications.py", 13)]
    assert (wrapper["library"], wrapper["call"], wrapper["target"], wrapper["reaches"]) == (
        "in-house",
        "notify()",
        "requests.post()",
        "shop/payments/client.py:27",
    )
    assert (wrapper["key"]["status"], wrapper["retried"]["kind"]) == ("not sent", "@tenacity.retry")
    reached = sites[("shop/payments/client.py", 27)]
    assert reached["retried"] == {
        "kind": "@tenacity.retry in another function",
        "line": None,
        "note": "through notify() at shop/services/notifications.py:13",
    }
    bound = sites[("shop/gateway/verbs.py", 15)]  # the method comes from the caller: POST
    assert (bound["call"], bound["target"], bound["key"]["status"]) == (
        "Core.create()",
        "POST self.session.request()",
        "not sent",
    )
    assert ("shop/gateway/verbs.py", 24) not in sites  # the same core asked for a GET calls nothing
    minted = sites[("shop/services/base.py", 20)]
    assert minted["key"] == {"status": "regenerated per attempt", "rule": "IDM001", "detail": None}
    assert sites[("shop/payments/client.py", 16)]["retried"] is None  # no caller retries it


def test_a_bad_key_is_not_counted_unkeyed_and_a_variable_is_no_address() -> None:
    """Issue 26: `unkeyed` counts calls with no key seen; a key a retry cannot reuse is counted
    apart; a URL held in a variable is shown as a placeholder, not as if it were a host."""
    source = (
        "import time\nimport httpx\n\n\n"
        "def pay(url, body):\n"
        "    return httpx.post(url, json=body)\n\n\n"
        "def capture(body):\n"
        "    key = f'capture-{time.time()}'\n"
        "    return httpx.post('https://psp.example/capture', json=body, headers={'Idempotency-Key': key})\n"
    )
    rows = audit_source(source, "svc.py", CONFIG)
    assert [(r.line, r.target, r.unkeyed, r.bad_key) for r in rows] == [
        (6, "{url}", True, False),
        (11, "https://psp.example/capture", False, True),
    ]
    assert [(g["target"], g["unkeyed"], g["bad_key"]) for g in summary(rows)] == [
        ("https://psp.example", 0, 1),
        ("{url}", 1, 0),
    ]


def test_a_second_audit_reads_unchanged_files_from_its_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26: `audit` keeps a results cache as `check` does. An unchanged file gives its
    stored rows; a file that names a project function that changed is audited again (its
    in-house row must say where the call now is); `--no-cache` audits everything."""
    import idemlint.audit

    project = tmp_path / "flat"
    shutil.copytree(Path(__file__).parent / "projects" / "flat", project)
    monkeypatch.chdir(project)
    audited: list[str] = []
    real_audit = idemlint.audit.audit_source

    def counting(source, path, *args, **kwargs):  # type: ignore[no-untyped-def]
        audited.append(path)
        return real_audit(source, path, *args, **kwargs)

    monkeypatch.setattr(idemlint.audit, "audit_source", counting)

    def run(*options: str) -> dict:  # type: ignore[type-arg]
        result = CliRunner().invoke(cli, ["audit", "--format", "json", *options, "."])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)  # type: ignore[no-any-return]

    first = run()
    files = len(audited)
    assert files > 10
    audited.clear()
    assert run() == first
    assert audited == []
    client = project / "shop" / "payments" / "client.py"
    client.write_text("\n" + client.read_text())  # every line of the helper moves down one
    third = run()
    assert "shop/payments/client.py" in audited and "shop/services/notifications.py" in audited
    assert len(audited) < files  # files that name none of its functions keep their rows
    wrapper = next(s for s in third["sites"] if (s["path"], s["line"]) == ("shop/services/notifications.py", 13))
    assert wrapper["reaches"] == "shop/payments/client.py:28"
    audited.clear()
    assert run("--no-cache") == third
    assert len(audited) == files


def test_every_text_field_of_a_row_is_printable_whatever_built_it() -> None:
    """A row may come back from a cache folder someone else wrote: no field of it (its key,
    retry and timeout parts included) can put a control character on the terminal."""
    from idemlint.audit import AuditRow, KeyStatus, RetriedBy, TimeoutHandling

    row = AuditRow(
        path="a.py",
        line=1,
        library="evil\x1b]0;PWNED\x07",
        call="c",
        method="",
        target="t",
        key=KeyStatus("sent\n::error file=x::forged", detail="d\r"),
        retried=RetriedBy("loop\x1b[2J", None, "n\n"),
        timeout=TimeoutHandling("caught\x07"),
        reaches="x.py:1\n::warning::",
    )
    text = format_text([row], color=False) + format_json([row]) + format_markdown([row])
    assert not any(ord(c) < 32 and c not in "\n" for c in text)
    assert "\n::error" not in text and "\n::warning" not in text


def test_audit_without_the_cache_writes_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--no-cache` neither reads nor writes one: not the results, not the project index."""
    project = tmp_path / "flat"
    shutil.copytree(Path(__file__).parent / "projects" / "flat", project)
    cache_home = tmp_path / "cache"
    monkeypatch.setenv("IDEMLINT_CACHE_DIR", str(cache_home))
    monkeypatch.chdir(project)
    result = CliRunner().invoke(cli, ["audit", "--format", "json", "--no-cache", "."])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["sites"]
    assert not cache_home.exists() or list(cache_home.rglob("*")) == []
    result = CliRunner().invoke(cli, ["audit", "--format", "json", "."])
    assert result.exit_code == 0, result.output
    assert list(cache_home.rglob("*"))  # the same run with the cache does write one
