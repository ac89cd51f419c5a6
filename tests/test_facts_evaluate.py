"""The shared-facts evaluate module returns exactly ``score-facts --json``'s metrics; its examples
run; the metric table's facts entries are documented at their anchors in docs/facts.md."""

from __future__ import annotations

import doctest
import importlib.util
import json
import re
from pathlib import Path

from interleave_bench.cli import main
from interleave_bench.score.table import METRICS, family, metric, rounded

from _facts_util import write_data
from test_midreply_metrics import evaluate_caches  # noqa: F401 - the fixture

REPO = Path(__file__).resolve().parents[1]
METRIC_DIR = REPO / "interleave_bench" / "metrics" / "interleave_shared_facts"


def test_evaluate_load_equals_score_facts_json(evaluate_caches, tmp_path, capsys, monkeypatch):  # noqa: F811
    import evaluate

    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    data = write_data(tmp_path / "data")
    ran = main(["facts", str(data), "--dry-run", "--out", str(tmp_path / "run.jsonl")])
    capsys.readouterr()
    code = main(["score-facts", str(tmp_path / "run.jsonl"), "--json"])
    out, _ = capsys.readouterr()
    doc = json.loads(out)
    assert ran == code == (0 if doc["passed"] else 1)
    lines = [x for x in (tmp_path / "run.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    got = evaluate.load(str(METRIC_DIR)).compute(predictions=lines)
    assert got == doc["metrics"]
    assert got["strategies"]["oracle"]["answer_accuracy"]["value"] == 1.0


def test_a_repeated_answer_is_named_by_its_index_and_the_firsts(evaluate_caches, tmp_path, monkeypatch):  # noqa: F811
    """The module numbers its rows from 0: the second answer and the first it repeats are both said
    that way, not as a file's lines."""
    import evaluate
    import pytest

    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    data = write_data(tmp_path / "data")
    # finished, and not passed: the fake model's facts and summary strategies tie (docs/facts.md)
    assert main(["facts", str(data), "--dry-run", "--out", str(tmp_path / "run.jsonl")]) == 1
    lines = [x for x in (tmp_path / "run.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    k = next(i for i, x in enumerate(lines) if json.loads(x)["kind"] == "answer")
    with pytest.raises(ValueError) as refused:
        evaluate.load(str(METRIC_DIR)).compute(predictions=[*lines, lines[k]])
    said = str(refused.value)
    assert said.startswith(f"predictions[{len(lines)}].probe: second answer row for session ") and \
        said.endswith(f"(first at predictions[{k}]); remove it"), said


def test_evaluate_module_docstring_examples_run(evaluate_caches):  # noqa: F811
    spec = importlib.util.spec_from_file_location("interleave_shared_facts_doctest",
                                                  METRIC_DIR / "interleave_shared_facts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 10 and result.failed == 0


def test_evaluate_module_has_one_import_per_line_and_a_card():
    source = (METRIC_DIR / "interleave_shared_facts.py").read_text(encoding="utf-8")
    for line in source.splitlines():
        if line.startswith(("import ", "from ")):
            assert "," not in line, line
    card = (METRIC_DIR / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n") and "\n---\n" in card[4:]
    assert "# Metric Card for InterleaveBench Shared Facts" in card
    assert (METRIC_DIR / "app.py").is_file()


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors (lower case, punctuation dropped, spaces to hyphens) and explicit
    ``<a id="...">`` anchors."""
    out = set(re.findall(r'<a id="([^"]+)"></a>', markdown))
    for line in markdown.splitlines():
        m = re.match(r"^#{1,6}\s+(.*)$", line)
        if m:
            out.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return out


def test_every_facts_metric_is_documented_at_its_anchor_and_every_documented_one_is_in_the_table():
    entries = family("facts")
    assert entries and all(m.family == "facts" for m in entries)
    for m in entries:
        path, _, anchor = m.doc.partition("#")
        assert anchor in _anchors((REPO / path).read_text(encoding="utf-8")), m.doc
    doc = (REPO / "docs" / "facts.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Metrics"): doc.index("## Gates")]
    documented = {k for pair in re.findall(r"^`(\w+)`(?: and `(\w+)`)?:", section, flags=re.M) for k in pair if k}
    assert documented == {m.key for m in entries}


def test_table_lookup_and_rounding():
    assert metric("answer_accuracy").interval == "wilson"
    assert rounded("answer_accuracy", 2 / 3) == 0.6667 and rounded("context_tokens", 12.345) == 12.3
    assert rounded("facts_only_right", 3) == 3 and rounded("answer_accuracy", None) is None
    assert [k for k, m in METRICS.items() if m.family == "facts"] == [m.key for m in family("facts")]
    try:
        metric("nope")
    except ValueError as exc:
        assert "unknown metric 'nope'" in str(exc)
    else:
        raise AssertionError("no error for an unknown key")
