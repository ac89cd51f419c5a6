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
