"""``report --html`` and ``leaderboard show --html``: one self-contained page that parses as HTML."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

import _hub_util as u
from _hub_util import hub  # noqa: F401  (the fixture)


class Page(HTMLParser):
    """Collects what the tests check: tags, images, outside references, headings, unclosed tags."""

    VOID = {"meta", "img", "br", "hr", "link", "input", "wbr"}

    def __init__(self, text: str):
        super().__init__()
        self.stack: list[str] = []
        self.images: list[str] = []
        self.outside: list[str] = []
        self.headings: list[str] = []
        self.mismatched: list[str] = []
        self._in_heading = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.images.append(a.get("src") or "")
        for key in ("src", "href"):
            if a.get(key) and not a[key].startswith("data:"):
                self.outside.append(a[key])
        if tag not in self.VOID:
            self.stack.append(tag)
        self._in_heading = tag == "h2"

    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag:
            self.mismatched.append(tag)
        self._in_heading = False

    def handle_data(self, data):
        if self._in_heading:
            self.headings.append(data)


def _demo(tmp_path, monkeypatch, capsys) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INTERLEAVE_NO_PROGRESS", "1")
    code, _, err = u.cli(["demo", "--sessions", "8", "--bootstrap", "50"], capsys)
    assert code == 0, err
    return tmp_path / "data" / "interleave-v0-demo"


def test_report_of_the_demo_runs_is_one_self_contained_page_with_plots(tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    data = _demo(tmp_path, monkeypatch, capsys)
    out = tmp_path / "site" / "report.html"
    code, stdout, err = u.cli(["report", str(data), str(data / "predictions"), "--html", str(out),
                               "--bootstrap", "50", "--compare", "closed-stay", "closed-bm25"], capsys)
    assert code == 0, err
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]  # one file, nothing beside it
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    page = Page(text)
    assert page.stack == [] and page.mismatched == []
    assert page.outside == []  # no outside reference: the page works offline, alone
    # the demo's runs are all free: the cost section says so instead of stacking every label at x = 0
    # the demo's local runs carry a confidence: their reliability diagram is the fourth plot
    assert len(page.images) == 4 and all(src.startswith("data:image/png;base64,") for src in page.images)
    assert "Every system here costs the same, 0.00000000 USD per message" in text
    assert page.headings == ["Results", "Accuracy with its 95% interval", "Accuracy against cost per message",
                             "Outcomes", "Calibration of the confidence", "Flipped messages"]
    assert re.search(r'<td>closed-local</td><td class="num">0\.\d{4}</td><td class="num">all</td>', text)  # its ECE
    assert "closed-oracle" in text and "open-bm25" in text and "closed-bm25 against closed-stay" in text
    assert "matplotlib is not installed" not in text


def test_without_matplotlib_the_page_says_so_and_keeps_the_tables(tmp_path, monkeypatch, capsys):
    import interleave_bench.reports.page as h

    data = _demo(tmp_path, monkeypatch, capsys)
    monkeypatch.setattr(h, "have_matplotlib", lambda: False)
    out = tmp_path / "report.html"
    code, stdout, err = u.cli(["report", str(data), str(data / "predictions" / "closed-bm25.jsonl"), "--html",
                               str(out), "--bootstrap", "0"], capsys)
    assert code == 0, err
    assert "no plots: matplotlib is not installed" in stdout
    text = out.read_text(encoding="utf-8")
    page = Page(text)
    assert page.images == [] and "Plots are not drawn: matplotlib is not installed" in text
    assert "<td>closed-bm25</td>" in text and page.headings[0] == "Results"


def test_report_refuses_an_unknown_comparison_in_one_line(tmp_path, monkeypatch, capsys):
    data = _demo(tmp_path, monkeypatch, capsys)
    code, _, err = u.cli(["report", str(data), str(data / "predictions"), "--html", str(tmp_path / "r.html"),
                          "--bootstrap", "0", "--compare", "closed-bm25", "nope"], capsys)
    assert code == 2 and err.count("\n") == 1 and "no run named nope" in err


def test_leaderboard_show_html_renders_the_board_the_same_way(hub, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    import _board_util

    data, preds = _board_util.baselines(tmp_path / "data")
    stay = _board_util.score_file(data, preds["closed-stay"], bootstrap=1000)
    code, _, err = u.cli(["leaderboard", "add", str(preds["closed-bm25"]), str(preds["closed-stay"]), "--data", str(data),
                          "--repo", "org/board"], capsys)
    assert code == 0, err
    out = tmp_path / "board.html"
    code, stdout, err = u.cli(["leaderboard", "show", "--repo", "org/board", "--html", str(out)], capsys)
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    page = Page(text)
    # both baselines cost nothing: the accuracy plot, and a line instead of a cost plot of one point
    assert page.stack == [] and page.outside == [] and len(page.images) == 1
    assert "Every system here costs the same, 0.00000000 USD per message" in text
    assert page.headings == ["split dev, mode closed"]
    lo, hi = stay["intervals"]["accuracy"]
    assert "<td>closed-stay</td>" in text and f"{stay['metrics']['accuracy']:.4f} [{lo:.4f}, {hi:.4f}]" in text


@pytest.mark.parametrize("target", ["predictions", "symlink to the predictions", "sessions"])
def test_report_refuses_an_html_path_that_is_an_input_before_any_work(tmp_path, monkeypatch, capsys, target):
    from _score_util import many_sessions, oracle_rows, write_jsonl

    ss = many_sessions(4)
    data = write_jsonl(tmp_path / "data" / "sessions.jsonl", ss)
    pred = write_jsonl(tmp_path / "data" / "predictions" / "closed-oracle.jsonl", oracle_rows(ss, "closed"))
    html = {"predictions": pred, "sessions": data, "symlink to the predictions": tmp_path / "page.html"}[target]
    if target == "symlink to the predictions":
        html.symlink_to(pred)
    before = (data.read_bytes(), pred.read_bytes())
    code, _, err = u.cli(["report", str(data.parent), str(pred.parent), "--html", str(html), "--bootstrap", "0"], capsys)
    what = "the sessions file" if target == "sessions" else "the predictions file"
    assert code == 2 and err == f"error: report: --html {html} is one of the inputs ({what}); choose another path\n"
    assert (data.read_bytes(), pred.read_bytes()) == before
