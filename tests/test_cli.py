"""The CLI's shared promises: every command has --help, errors are one line with exit 2."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from interleave_bench.cli import COMMAND_MODULES, build_parser, main


def cli(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "interleave_bench", *args], capture_output=True, text=True, **kw)


def test_every_command_is_registered():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    names = set(sub.choices)
    expected = {m.replace("_", "-") for m in COMMAND_MODULES}
    assert names == expected


@pytest.mark.parametrize("command", sorted({m.replace("_", "-") for m in COMMAND_MODULES}))
def test_help_for_each_command(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    assert "usage: interleave-bench " + command in capsys.readouterr().out


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out


def test_input_error_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "s.jsonl"
    # a session (turns and threads) without its version: a file of another kind is refused before
    bad.write_text('{"session_id": "a", "threads": [], "turns": []}\n', encoding="utf-8")
    proc = cli("validate", str(bad))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert f"{bad}:1: version: required field is missing" in proc.stderr


def test_version():
    proc = cli("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("interleave-bench ")


def test_summary_line_counts_time_tokens_and_cost():
    from interleave_bench.llm.client import RunStats, Usage
    from interleave_bench.llm.prices import Price
    from interleave_bench.progress import summary_line

    class FakeLLM:  # 1,000 fresh input tokens at $10, 200 cached at $1, 300 output at $1 a million
        stats = RunStats(calls=3, cached=2, failed=1, paid=Usage(1200, 200, 300), price=Price(10, 1, 1))

    line = summary_line("route", {"sessions": 1, "messages": 2, "runs scored": 1}, 2.25, FakeLLM())
    assert line == ("done: route: 1 session, 2 messages, 1 run scored; 2.2s; 3 paid calls, 2 cached, 1 failed; "
                    "tokens 1,200 in / 300 out; $0.0105")
    FakeLLM.stats.price = None  # paid calls at no known price: no figure
    assert summary_line("route", {}, 1.0, FakeLLM()).endswith("tokens 1,200 in / 300 out; cost unknown")


def test_the_summary_line_gives_what_was_handled_a_second():
    from interleave_bench.progress import summary_line

    counts = {"sessions": 2, "messages": 15_096}
    # 15,096 messages in 4.4 s: 3,430.9 a second
    assert summary_line("route x", counts, 4.4, rate=("messages", 15_096)) == \
        "done: route x: 2 sessions, 15,096 messages; 4.4s, 3,431 messages/s"
    # a resumed run that routed nothing now says no rate (not 0/s, nor the file's messages over no work)
    assert summary_line("route x", counts, 0.6, rate=("messages", 0)).endswith("; 0.6s")
    assert summary_line("route x", counts, 0.0, rate=("messages", 5)).endswith("; 0.0s")


def test_a_missing_command_module_is_an_error_not_a_missing_command(monkeypatch):
    import interleave_bench.cli as cli_module

    monkeypatch.setattr(cli_module, "COMMAND_MODULES", (*COMMAND_MODULES, "no_such_command"))
    with pytest.raises(ModuleNotFoundError, match="no_such_command"):
        build_parser()


def test_a_folder_given_for_an_output_file_is_one_line_exit_2(tmp_path, capsys):
    from _route_util import standard_sessions, write_data

    data = write_data(tmp_path / "data", standard_sessions()[:2])
    main(["baselines", str(data)])
    pred = str(data / "predictions" / "closed-stay.jsonl")
    folder = tmp_path / "out"
    folder.mkdir()
    capsys.readouterr()
    for argv in (["route", str(data), "--mode", "closed", "--policy", "stay", "--out", str(folder)],
                 ["score", str(data), pred, "--out", str(folder)],
                 ["report", str(data), pred, "--html", str(folder)],
                 ["mid-reply", "--dry-run", "--out", str(folder)]):
        assert main(argv) == 2, argv
        assert capsys.readouterr().err.strip() == f"error: {folder}: is a folder, not a file", argv
    assert list(folder.iterdir()) == []


def test_a_file_the_system_will_not_open_is_one_line_exit_2(tmp_path, capsys):
    # a symlink loop and a name too long stand in for a file without read permission (chmod 000),
    # which a test run as root could still read: each was 'internal error: OSError'/'PermissionError'
    from _route_util import standard_sessions, write_data

    data = write_data(tmp_path / "data", standard_sessions()[:1])
    loop, other = tmp_path / "loop.jsonl", tmp_path / "other.jsonl"
    loop.symlink_to(other)
    other.symlink_to(loop)
    long_name = tmp_path / ("a" * 300 + ".jsonl")
    for argv, named, why in ((["validate", str(loop)], loop, "too many levels of symbolic links"),
                             (["compare", str(data), str(loop), str(loop)], loop, "too many levels of symbolic links"),
                             (["validate", str(long_name)], long_name, "file name too long")):
        assert main(argv) == 2, argv
        assert capsys.readouterr().err.strip() == f"error: {named}: {why}", argv


def test_an_os_error_of_a_file_is_redacted_and_one_line(monkeypatch, capsys):
    import argparse

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secretvalue-0123456789")

    def refused(args: argparse.Namespace) -> int:
        raise PermissionError(13, "Permission denied", "/data/sk-secretvalue-0123456789/p.jsonl")

    monkeypatch.setattr("interleave_bench.commands.validate.run", refused)
    assert main(["validate", "x.jsonl"]) == 2
    assert capsys.readouterr().err.strip() == "error: /data/[redacted]/p.jsonl: permission denied"


def test_a_fifo_is_refused_in_one_line_not_waited_on(tmp_path, capsys):
    import os
    import threading

    from _route_util import standard_sessions, write_data

    data = write_data(tmp_path / "data", standard_sessions()[:1])
    fifo = tmp_path / "p.jsonl"
    os.mkfifo(fifo)
    for argv in (["validate", str(fifo)], ["compare", str(data), str(fifo), str(fifo)], ["vet", str(fifo)],
                 ["score-facts", str(fifo)], ["mid-reply", str(fifo), "--dry-run"]):
        # a writer that opens the FIFO whenever a command opens it to read, so a command that would
        # wait on it for ever reads an empty file instead (and fails the assertion, not the suite)
        stop = threading.Event()

        def write_nothing() -> None:
            while not stop.is_set():
                open(fifo, "wb").close()

        writer = threading.Thread(target=write_nothing, daemon=True)
        writer.start()
        code = main(argv)
        err = capsys.readouterr().err
        stop.set()
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # lets the writer's last open go on
        writer.join()
        os.close(fd)
        assert code == 2, argv
        assert f"error: {fifo}: is not a regular file (a FIFO, socket or device)" in err.splitlines(), (argv, err)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_import_says_what_its_input_is_when_it_is_not_the_kind_it_reads(tmp_path, capsys):
    fifo = tmp_path / "in"
    os.mkfifo(fifo)
    plain = tmp_path / "plain.txt"
    plain.write_text("x\n", encoding="utf-8")
    out = str(tmp_path / "out")
    cases = [
        (["import", "inspect", str(fifo), "--out", out], f"{fifo}: is not a regular file (a FIFO, socket or device)"),
        (["import", "inspect", str(tmp_path / "none.eval"), "--out", out], f"{tmp_path / 'none.eval'}: no such file"),
        (["import", "irc", str(fifo), "--out", out], f"{fifo}: is not a folder (a FIFO, socket or device)"),
        (["import", "sgd", str(fifo), "--out", out], f"{fifo}: is not a folder (a FIFO, socket or device)"),
        (["import", "sgd", str(plain), "--out", out], f"{plain}: is a file, not a folder"),
        (["import", "irc", str(tmp_path / "none"), "--out", out], f"{tmp_path / 'none'}: no such folder"),
    ]
    for argv, line in cases:
        assert main(argv) == 2, argv
        assert capsys.readouterr().err.splitlines() == [f"error: {line}"], argv


def test_a_fifo_given_as_data_or_as_an_output_is_named_as_one(tmp_path, capsys):
    from interleave_bench.errors import InputError
    from interleave_bench.io import atomic_write_text, sessions_file

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="is not a regular file"):
        sessions_file(fifo)
    with pytest.raises(InputError, match="is not a regular file .* give a file's path"):
        atomic_write_text(fifo, "x")
    assert fifo.is_fifo()  # left as it was, not replaced by a file
    with pytest.raises(InputError, match="no such file or folder"):
        sessions_file(tmp_path / "absent")
    assert main(["score", str(fifo), str(tmp_path / "p.jsonl")]) == 2
    assert capsys.readouterr().err.strip().endswith("is not a regular file (a FIFO, socket or device)")


def test_ctrl_c_while_a_command_loads_is_one_line_and_exit_130(monkeypatch, capsys):
    """Ctrl-C before a command runs (its modules still importing) gives no traceback."""
    import pytest

    from interleave_bench import cli as cli_module

    def loading(argv=None):
        raise KeyboardInterrupt  # as an import deep in a command module would be stopped

    monkeypatch.setattr(cli_module, "build_parser", loading)
    monkeypatch.setattr(cli_module.gc, "freeze", lambda: None)  # the test process goes on
    with pytest.raises(SystemExit) as exc:
        cli_module.entry()
    assert exc.value.code == 130
    assert capsys.readouterr().err == "interrupted before the command began: nothing was done\n"


#: options read as ``int`` by argparse itself: none
PLAIN_INT_OPTIONS: set[str] = set()
OUTSIDE_64_BITS = ("18446744073709551616", "9223372036854775808", "-9223372036854775809")


def whole_number_options() -> list[tuple[str, str]]:
    """``(command, option)`` of every whole-number option of every command."""
    from interleave_bench.options import whole_number

    shared = whole_number().__qualname__
    found = []
    for command in sorted({m.replace("_", "-") for m in COMMAND_MODULES}):
        sub = next(a for a in build_parser([command])._actions if a.dest == "command").choices[command]
        for action in sub._actions:
            if action.type is int:
                assert set(action.option_strings) <= PLAIN_INT_OPTIONS, (command, action.option_strings)
            elif getattr(action.type, "__qualname__", None) == shared:
                found.append((command, action.option_strings[0]))
    return found


def test_every_whole_number_option_is_read_by_the_one_shared_type():
    found = whole_number_options()
    for option in [("route", "--seed"), ("generate", "--seed"), ("generate", "--sessions"), ("score", "--seed"),
                   ("score", "--bootstrap"), ("compare", "--seed"), ("facts", "--limit"), ("demo", "--v1-sessions")]:
        assert option in found


@pytest.mark.parametrize("command,option", whole_number_options())
def test_a_whole_number_no_file_holds_is_refused_as_the_option_is_read(command, option, capsys):
    """A value outside 64 bits was taken, written into the run's files, and refused when the rerun
    read them back (so an interrupted run could not resume)."""
    for value in OUTSIDE_64_BITS:
        with pytest.raises(SystemExit) as stop:
            main([command, f"{option}={value}"])
        err = capsys.readouterr().err.strip()
        assert stop.value.code == 2 and "\n" not in err, err
        assert err.startswith(f"error: interleave-bench {command}: argument {option}: the integer {value} is outside "
                              f"64 bits"), err
    with pytest.raises(SystemExit):
        main([command, option, "12abc"])
    assert f"argument {option}: must be a whole number, got '12abc'" in capsys.readouterr().err


def test_a_run_with_the_largest_seed_a_file_holds_resumes(tmp_path, capsys):
    from _score_util import many_sessions, write_jsonl

    data = write_jsonl(tmp_path / "data" / "sessions.jsonl", many_sessions(2, turns=4))
    argv = ["route", str(data.parent), "--mode", "closed", "--policy", "bm25", "--merge", "all", "--split", "all",
            "--out", str(tmp_path / "b.jsonl")]
    assert main([*argv, "--seed", "9223372036854775807"]) == 0
    capsys.readouterr()
    assert main([*argv, "--seed", "9223372036854775807"]) == 0
    assert "0 sessions, 2 already done" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*argv, "--seed", "9223372036854775808"])
    assert "argument --seed: the integer 9223372036854775808 is outside 64 bits" in capsys.readouterr().err


def test_the_debug_traceback_of_an_internal_error_holds_no_secret(tmp_path, monkeypatch, capsys):
    """``INTERLEAVE_DEBUG=1`` prints an unexpected error's traceback, redacted as every other line:
    a token of the environment and a key given on the command line in its message are ``[redacted]``."""
    from interleave_bench import redaction
    from interleave_bench.commands import validate

    token, given = "tok9Secret123456", "abcdEFGH12345678given"
    monkeypatch.setattr(redaction, "_GIVEN", set())
    redaction.add_secret(given)
    monkeypatch.setenv("MY_SERVICE_TOKEN", token)

    def fails(path):
        raise RuntimeError(f"cannot start with {token} {{'api_key': '{given}'}}")

    monkeypatch.setattr(validate, "sniff", fails)
    data = tmp_path / "s.jsonl"
    data.write_text("{}\n", encoding="utf-8")
    for debug, shown in (("1", "Traceback (most recent call last):"), ("", "(set INTERLEAVE_DEBUG=1 for details)")):
        monkeypatch.setenv("INTERLEAVE_DEBUG", debug)
        assert main(["validate", str(data)]) == 1
        err = capsys.readouterr().err
        assert shown in err and "cannot start with [redacted] {'api_key': '[redacted]'}" in err, err
        assert token not in err and given not in err
