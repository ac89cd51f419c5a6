"""Bad input is one line, even where a library's own message (pyarrow's, say) holds line breaks."""

from __future__ import annotations

from interleave_bench.cli import main
from interleave_bench.errors import InputError, UsageError, exc_text, one_line

from _score_util import many_sessions, write_jsonl


def test_a_garbage_parquet_file_is_one_line_naming_it(tmp_path, capsys):
    data = write_jsonl(tmp_path / "sessions.jsonl", many_sessions(2))
    bad = tmp_path / "x.parquet"
    bad.write_bytes(b"PAR1\0\0\0\0PAR1")
    for argv in (["score", data, bad], ["validate", bad]):
        assert main([str(a) for a in argv]) == 2
        err = capsys.readouterr().err
        first = err.splitlines()[0]
        assert first.startswith(f"error: {bad}: not a Parquet file (") and first.endswith(".)"), err
        assert err.count("error:") == 1 and "\n)" not in err


def test_a_message_with_line_breaks_is_made_one_line():
    assert one_line("a\n  b\r\nc  \n") == "a b c"
    assert one_line("already one line  ") == "already one line  "
    assert InputError("f.jsonl", 3, "pred", "bad\n  thing").format() == "f.jsonl:3: pred: bad thing"
    assert exc_text(ValueError("said\nthis\n")) == "said this" and exc_text(ValueError()) == "ValueError"


def test_the_cli_prints_any_error_it_reports_as_one_line(monkeypatch, capsys):
    import interleave_bench.commands.validate as validate

    def fail(args):
        raise UsageError("first\nsecond")

    monkeypatch.setattr(validate, "run", fail)
    assert main(["validate", "x"]) == 2
    assert capsys.readouterr().err == "error: first second\n"
