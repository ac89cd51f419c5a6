"""A byte that is not UTF-8 is reported on its own line, wherever it falls: text is decoded a block
at a time, ahead of the lines handed out, so the reader looks the line up rather than guess it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import interleave_bench.io as io
from interleave_bench.cli import main

PIECES = [b"a", b"{}", b"\n", b"\r", b"\r\n", "é".encode(), "中".encode(), b"\xff", b"\xe4\xb8", b"\x80"]


def expected_line(data: bytes) -> int | None:
    """By hand: the ``\\n`` before the first byte the decoder refuses, plus one (a lone ``\\r`` ends no
    line of a JSON Lines file)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return data[:exc.start].count(b"\n") + 1
    return None


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=60), block=st.integers(1, 9))
def test_the_line_of_the_first_bad_byte_whatever_the_block_size(tmp_path_factory, pieces, block):
    path = tmp_path_factory.mktemp("utf8") / "x.jsonl"
    data = b"".join(pieces)
    path.write_bytes(data)
    assert io.line_of_bad_utf8(path, block) == expected_line(data)


def test_validate_names_the_line_of_a_bad_byte_far_into_a_file(tmp_path, capsys):
    path = tmp_path / "p.jsonl"
    good = b'{"session_id":"s","i":0,"pred":"t1"}\n'
    path.write_bytes(good * 2999 + b'{"session_id":"s","i":0,"pr\xffed":"t1"}\n' + good * 10)
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err.splitlines()[0] == f"error: {path}:3000: not UTF-8 text (invalid start byte)"
