"""A new user's rough edges, one test each: documented paths and snippets that must work as written,
the packaged mid-reply cases from outside a checkout, McNemar's p where the float underflows, the
metric modules docs/hub.md names, and the HTML report's table and cost plot."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import interleave_bench
from interleave_bench.cli import main
from interleave_bench.score.compare import mcnemar_log10
from interleave_bench.reports.page import Point, cost_plot, have_matplotlib, table_html
from interleave_bench.reports.tables import mcnemar_text
from interleave_bench.score.stats import mcnemar_exact

ROOT = Path(__file__).resolve().parents[1]


def code_blocks(path: Path, lang: str = "") -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


# --- documented paths ----------------------------------------------------------------------------


def test_the_readme_workflow_routes_the_folder_its_offline_generation_wrote():
    block = next(b for b in code_blocks(ROOT / "README.md") if "generate --sessions 200 --offline" in b)
    offline = next(line for line in block.splitlines() if "--offline" in line)
    out = re.search(r"--out (\S+)", offline)
    assert out, "the offline line must say where it writes"
    later = [line for line in block.splitlines() if line.startswith("interleave-bench baselines")]
    assert later and all(out.group(1) in line for line in later)


def test_docs_name_no_folder_the_offline_writer_does_not_write():
    """Commands the docs run on offline or dry-run data name the folders ``generate`` writes."""
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in code_blocks(doc):
            for line in block.splitlines():
                if "--dry-run" in line and "data/interleave-v1 " in line:
                    pytest.fail(f"{doc.name}: {line!r} runs on data/interleave-v1, which only a model writes")


def test_export_mid_reply_alone_exports_the_packaged_cases_from_any_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no checkout here: nothing relative to it may be needed
    assert main(["export", "--mid-reply", "--out", "interleavebench"]) == 0
    out = capsys.readouterr().out
    assert "mid_reply" in out and (tmp_path / "interleavebench" / "mid_reply").is_dir()
    assert interleave_bench.data_path("mid_reply/cases.json").endswith(os.path.join("mid_reply", "cases.json"))


def test_the_documented_python_dry_run_generation_works(tmp_path, monkeypatch):
    """docs/generate.md's Python API block, run as written (the fake model registered by generate)."""
    block = next(b for b in code_blocks(ROOT / "docs" / "generate.md", "python") if "model_session(dry_run=True)" in b)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INTERLEAVE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("INTERLEAVE_NO_PROGRESS", "1")
    namespace: dict = {}
    exec(compile(block, "generate.md", "exec"), namespace)
    result = namespace["result"]
    assert result.failed == [] and result.counts["sessions"] == 10
    assert (tmp_path / "data" / "y" / "sessions.jsonl").is_file()
    assert main(["validate", str(tmp_path / "data" / "y" / "sessions.jsonl")]) == 0


# --- McNemar where the float underflows ---------------------------------------------------------


def test_mcnemar_log10_by_hand():
    assert mcnemar_log10(0, 0) == 0.0
    assert math.isclose(mcnemar_log10(0, 10), math.log10(2 / 1024))
    assert math.isclose(mcnemar_log10(9, 1), math.log10(22 / 1024))
    assert mcnemar_log10(3, 4) == 0.0  # p capped at 1
    # 2000 losses and no win: p = 2 / 2**2000, far below the smallest float
    assert mcnemar_exact(2000, 0) == 0.0
    assert math.isclose(mcnemar_log10(2000, 0), -1999 * math.log10(2))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 300), st.integers(0, 300))
def test_mcnemar_log10_is_the_log_of_the_p_value(b, c):
    p = mcnemar_exact(b, c)
    assert mcnemar_log10(b, c) <= 0.0
    if p > 1e-290:
        assert math.isclose(10 ** mcnemar_log10(b, c), p, rel_tol=1e-9)


def test_mcnemar_text_never_says_p_is_0():
    assert mcnemar_text({"mcnemar_p": 0.03125, "mcnemar_log10_p": -1.51}) == "McNemar exact p = 0.03125"
    text = mcnemar_text({"mcnemar_p": 0.0, "mcnemar_log10_p": -601.76})
    assert text == "McNemar exact p < 1e-300 (log10 p = -601.8)" and "= 0" not in text


def test_compare_documents_carry_the_exact_log10_p(tmp_path, capsys):
    from _route_util import write_data

    data = write_data(tmp_path / "data")
    assert main(["baselines", str(data), "--mode", "closed"]) == 0
    capsys.readouterr()
    a, b = data / "predictions" / "closed-stay.jsonl", data / "predictions" / "closed-oracle.jsonl"
    assert main(["compare", str(data), str(a), str(b), "--json", "--bootstrap", "0"]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    assert math.isclose(doc["mcnemar_log10_p"], mcnemar_log10(doc["losses"], doc["wins"]), abs_tol=0.01)


# --- docs/hub.md and the HTML report ------------------------------------------------------------


def test_docs_hub_names_every_metric_module_push_metrics_pushes():
    text = (ROOT / "docs" / "hub.md").read_text(encoding="utf-8")
    section = text[text.index("## Evaluate modules as Spaces"):]
    section = section[: section.index("\n## ", 3)]
    assert len(interleave_bench.metric_names()) == 4
    for name in interleave_bench.metric_names():
        assert f"`{name}`" in section, name


def test_a_table_scrolls_in_its_box_and_an_interval_breaks_only_before_its_bracket():
    html = table_html(["system", "accuracy", "topics/thread"], [["a", "0.606 [0.540, 0.668]", "2.136"]], numeric_from=1)
    assert html.startswith('<div class="table"><table>') and html.endswith("</table></div>")
    assert "0.606 [0.540,&nbsp;0.668]" in html and "topics/<wbr>thread" in html


def test_the_cost_plot_says_so_when_every_cost_is_the_same():
    free = [Point("closed-bm25 (closed)", 0.6, cost=0.0), Point("closed-oracle (closed)", 1.0, cost=0.0),
            Point("x (open)", 0.4, why="no price for the model (set EVAL_PRICES)"), Point("y (open)", 0.5)]
    text = cost_plot(free, "accuracy")
    assert "<img" not in text and "Every system here costs the same, 0.00000000 USD per message" in text
    # each run without a cost, with why when its score file says (a board row does not)
    assert "No known cost: x (open), no price for the model (set EVAL_PRICES); y (open)." in text
    if have_matplotlib():
        priced = [Point("a", 0.6, cost=0.0), Point("b", 0.8, cost=0.00004)]
        assert cost_plot(priced, "accuracy").startswith("<img")
