"""Text from the data in a printed table: a message may hold any character, and a control
character printed as it is recolours the terminal (an escape sequence) or overwrites what the
table shows (a carriage return). Every cell shows such a character as its escape."""

from __future__ import annotations

import json
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from interleave_bench.cli import main
from interleave_bench.reports.tables import cell, table
from interleave_bench.text import escape_unshown

def raw(text: str) -> list[str]:
    """The characters of ``text`` no printed cell may hold, by their Unicode category (control,
    format, surrogate, private, unassigned, line and paragraph separators), not the code's own list."""
    return [c for c in text if unicodedata.category(c)[0] == "C" or unicodedata.category(c) in ("Zl", "Zp")]


def test_a_cell_escapes_control_characters_and_keeps_the_rest():
    assert cell("a\x1b[31mRED\x1b[0m\rFORGED") == "a\\x1b[31mRED\\x1b[0m\\x0dFORGED"
    assert cell("one\ntwo\tthree") == "one two three"
    assert cell("x\x0b\x0c\x1c\x85\u2028\u202ey") == "x\\x0b\\x0c\\x1c\\x85\\u2028\\u202ey"
    assert cell("a|b") == "a\\|b"
    assert cell("café 👍 好的") == "café 👍 好的"  # printable text as it is
    assert cell("\u200e\ufeff\u061c\u200d") == "\\u200e\\ufeff\\u061c\\u200d"  # unseen format characters escaped
    assert cell("a\u3164b\u115fc") == "a\\u3164b\\u115fc"  # fillers that show nothing: escaped too
    assert cell(0.25) == "0.25"


@given(st.lists(st.text(), min_size=1, max_size=4))
def test_a_table_row_is_one_line_without_a_raw_control_character(cells):
    lines = table([cells], [f"h{k}" for k in range(len(cells))]).split("\n")
    assert len(lines) == 3 and not raw(lines[2])
    assert lines[2].count("|") - lines[2].count("\\|") == len(cells) + 1  # no cell adds a column


def test_compare_prints_a_message_with_escape_codes_escaped(tmp_path, capsys):
    """The hostile repro: ``compare``'s flips table carried ESC[31m, a bare CR, VT, FF and U+2028 raw."""
    data = tmp_path / "esc"
    assert main(["generate", "--sessions", "4", "--offline", "--out", str(data)]) == 0
    path = data / "sessions.jsonl"
    sessions = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for s in sessions:
        for t in s["turns"]:
            t["text"] += " \x1b[31mRED\x1b[0m\rFORGED\x0b\x0c\u2028"
    path.write_text("".join(json.dumps(s) + "\n" for s in sessions), encoding="utf-8")
    assert main(["baselines", str(data), "--split", "all", "--mode", "closed"]) == 0
    capsys.readouterr()
    runs = [str(data / "predictions" / f"closed-{p}.jsonl") for p in ("oracle", "stay")]
    assert main(["compare", str(data), *runs, "--split", "all", "--bootstrap", "0", "--show", "5"]) == 0
    out = capsys.readouterr().out
    assert "\\x1b[31mRED\\x1b[0m\\x0dFORGED\\x0b\\x0c\\u2028" in out
    assert not raw(out.replace("\n", ""))


def test_escape_unshown_escapes_what_shows_nothing_and_keeps_the_rest():
    assert escape_unshown("runs/a\nb.jsonl") == "runs/a\\x0ab.jsonl"
    assert escape_unshown("a\tb\x1b[31m\u202e\udcff") == "a\\x09b\\x1b[31m\\u202e\\udcff"  # (\udcff: a byte not UTF-8)
    assert escape_unshown("café 👍 好的.jsonl") == "café 👍 好的.jsonl"


def test_the_wrote_lines_of_route_and_score_show_a_line_break_in_a_path_escaped(tmp_path, capsys):
    """The hostile repro: a predictions file named ``run\\nx.jsonl`` split score's ``wrote`` line in two."""
    data = tmp_path / "d"
    assert main(["generate", "--sessions", "2", "--offline", "--out", str(data)]) == 0
    capsys.readouterr()
    pred = tmp_path / "run\nx.jsonl"
    assert main(["route", str(data), "--mode", "closed", "--policy", "stay", "--split", "all", "--out", str(pred)]) == 0
    assert main(["route", str(data), "--mode", "closed", "--policy", "stay", "--split", "all", "--out", str(pred)]) == 0
    assert main(["score", str(data), str(pred), "--split", "all", "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out.splitlines()
    shown = str(tmp_path / "run\\x0ax")
    assert [line for line in out if line.startswith(("wrote ", "kept "))] == [
        f"wrote {shown}.jsonl ({pred.read_text().count(chr(10)):,} rows)",
        f"kept {shown}.jsonl ({pred.read_text().count(chr(10)):,} rows, already complete)",
        f"wrote {shown}.all.score.json"]
    assert not any(line.startswith("x.") for line in out)
