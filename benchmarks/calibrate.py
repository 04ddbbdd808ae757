"""Measure idemlint's precision on hand-judged real code and write the calibration table.

    python benchmarks/calibrate.py --mirror CLONES [--corpus ../shared/realcorpus] [--check]

For every repository tree the development corpora (`manifest*.tsv` in `--corpus`) and the
judged sheets in `benchmarks/corpus/` name, the tree is exported at its commit and idemlint
is run over it (`idemlint check --output-format json`). Each finding is labelled: a corpus
row of its code within three lines (a positive row: true; an `ok:` row within two: false), else
a judged sheet's row of its code within two lines (T or M: true; F or S: false), else it is
unlabeled: not counted, and listed (UNLABELED path:line code) with their number at the end, so
that a change bringing new findings is judged before its table is trusted. Per rule code, the true and judged counts are kept for each kind of
evidence and file role, and for the wider groups (`evidence|*`, `*|role`, `*|*`) that a
kind's estimate starts from (idemlint/calibration.py). The table is written to
`idemlint/data/calibration.json` and printed; with `--check`, it is compared with the shipped
one instead (exit 1 when they differ). It also prints how true each confidence level and the
default view (what `idemlint check` shows with no --min-confidence) were on the judged findings,
by the confidence the run gave them: run it twice after a change, the second time with the new
table shipped, for figures that match the table.

This reads `../shared` as development tooling; idemlint itself never reads it.
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHEETS = ROOT / "benchmarks" / "corpus"
TABLE = ROOT / "idemlint" / "data" / "calibration.json"
ANY = "*"
PRIOR_WEIGHT = 5  # what a wider group's estimate counts as, in judged findings (idemlint/calibration.py)


def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def label(finding: dict, corpus_rows: list[dict[str, str]], judged: list[dict[str, str]]) -> bool | None:
    """True, false, or None (unlabeled) for one finding of one tree."""
    line, end = int(finding["line"]), int(finding.get("end_line") or finding["line"])
    for row in corpus_rows:
        expected = row["expected"]
        if row["path"] != finding["path"] or expected.removeprefix("ok:") != finding["code"]:
            continue
        row_line = int(row["line"])
        if expected.startswith("ok:") and abs(row_line - line) <= 2:
            return False
        if not expected.startswith("ok:") and (abs(row_line - line) <= 3 or line <= row_line <= end):
            return True
    for row in judged:
        if row["path"] == finding["path"] and row["code"] == finding["code"] and abs(int(row["line"]) - line) <= 2:
            verdict = row.get("verdict", "").strip().upper()[:1]
            if verdict in ("T", "M"):
                return True
            if verdict in ("F", "S"):
                return False
    return None


Tally = dict[str, collections.Counter[str]]


def measure(
    mirror: Path, corpus: Path, work: Path, labelled: list[dict[str, object]] | None = None
) -> tuple[dict[str, dict[str, dict[str, int]]], Tally]:
    sys.path.insert(0, str(corpus))
    import score_real  # the corpus's own exporter: the same trees the scorer checks

    trees: dict[tuple[str, str], tuple[list[dict[str, str]], list[dict[str, str]]]] = {}
    for manifest in sorted(corpus.glob("manifest*.tsv")):
        for row in score_real.load_manifest(manifest):
            trees.setdefault((row["repo"], row["commit"]), ([], []))[0].append(row)
    for sheet in sorted(SHEETS.glob("*.tsv")):
        for row in rows_of(sheet):
            if row.get("repo") and row.get("commit"):
                trees.setdefault((row["repo"], row["commit"]), ([], []))[1].append(row)
    counts: dict[str, dict[str, collections.Counter[str]]] = collections.defaultdict(
        lambda: collections.defaultdict(collections.Counter)
    )
    views: Tally = collections.defaultdict(collections.Counter)  # per level, and the default view
    from idemlint.calibration import shown_by_default  # the default view as the run's confidence makes it

    # every finding, whatever its confidence: the table is what decides confidence
    command = [sys.executable, "-m", "idemlint", "check", "--output-format", "json", "--exit-zero", "--no-cache"]
    command += ["--min-confidence", "low"]
    for (repo, commit), (corpus_rows, judged) in sorted(trees.items()):
        tree = score_real.export(mirror, work, repo, commit)
        out = subprocess.run([*command, "."], cwd=tree, capture_output=True, text=True).stdout
        unlabeled = []
        for finding in json.loads(out or "[]"):
            if finding["code"] in ("IDM800", "IDM900"):
                continue
            verdict = label(finding, corpus_rows, judged)
            if verdict is None:
                unlabeled.append(f"{finding['path']}:{finding['line']} {finding['code']}")
                continue
            evidence, role = finding.get("evidence") or ANY, finding.get("role") or "source"
            for key in (f"{evidence}|{role}", f"{evidence}|{ANY}", f"{ANY}|{role}", f"{ANY}|{ANY}"):
                counts[finding["code"]][key]["judged"] += 1
                counts[finding["code"]][key]["true"] += int(verdict)
            if labelled is not None:
                labelled.append({"repo": repo, "commit": commit, **finding, "true": int(verdict)})
            views[finding["confidence"]]["judged"] += 1
            views[finding["confidence"]]["true"] += int(verdict)
            if shown_by_default(finding["code"], evidence, role, finding["confidence"]):
                views["default view"]["judged"] += 1
                views["default view"]["true"] += int(verdict)
        print(f"  {repo}@{commit[:8]}", file=sys.stderr)
        for where in unlabeled:  # judge these (a sheet in benchmarks/corpus/) before trusting the table
            print(f"    UNLABELED {where}", file=sys.stderr)
        views["unlabeled"]["found"] += len(unlabeled)
    table = {code: {key: dict(c) for key, c in sorted(groups.items())} for code, groups in sorted(counts.items())}
    return table, views


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", required=True, type=Path)
    parser.add_argument("--corpus", default=ROOT.parent / "shared" / "realcorpus", type=Path)
    parser.add_argument("--work", default=Path(tempfile.gettempdir()) / "idemlint-real", type=Path)
    parser.add_argument("--check", action="store_true", help="compare with the shipped table instead of writing it")
    parser.add_argument("--findings", type=Path, help="also write every labelled finding here (JSON lines)")
    options = parser.parse_args()
    labelled: list[dict[str, object]] = []
    measured, views = measure(options.mirror, options.corpus, options.work, labelled)
    if options.findings:
        options.findings.write_text("".join(json.dumps(f, sort_keys=True) + "\n" for f in labelled), encoding="utf-8")
    table = {
        "about": "precision of idemlint's findings on hand-judged real code: benchmarks/calibrate.py writes this",
        "thresholds": {"high": 0.9, "medium": 0.7},
        "prior_weight": PRIOR_WEIGHT,
        "rules": measured,
    }
    for code, groups in measured.items():
        whole = groups.get(f"{ANY}|{ANY}", {})
        print(f"{code}  {whole.get('true', 0):4d}/{whole.get('judged', 0):<4d} true", end="")
        print(f"  ({whole.get('true', 0) / whole['judged']:.0%})" if whole.get("judged") else "")
        for key, c in groups.items():
            if ANY not in key:
                print(f"    {key:<60} {c['true']:4d}/{c['judged']:<4d} ({c['true'] / c['judged']:.0%})")
    for view in ("high", "medium", "low", "default view"):
        c = views.get(view, collections.Counter())
        share = f"({c['true'] / c['judged']:.0%})" if c["judged"] else ""
        print(f"{view:<13} {c['true']:4d}/{c['judged']:<4d} true {share}")
    print(f"unlabeled     {views.get('unlabeled', collections.Counter())['found']:4d} (not counted: judge them)")
    text = json.dumps(table, indent=1, sort_keys=True) + "\n"
    if options.check:
        return 0 if TABLE.read_text(encoding="utf-8") == text else 1
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {TABLE.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
