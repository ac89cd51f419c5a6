"""``interleave-bench <command>``: one parser, one command module each under ``commands/``.

Every command turns the project's errors into one line on stderr and exit code 2; an unexpected
error is one line too (set ``INTERLEAVE_DEBUG=1`` for the traceback).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import traceback
from contextlib import contextmanager
from typing import Any, Iterator, NoReturn, Sequence

from . import __version__
from .errors import InputErrors, InterleaveError, cannot_write, error_line, one_line
from .interrupted import interrupted_line
from .redaction import redact, redact_secrets

#: command modules, in the order ``--help`` lists them; each has ``register(subparsers)``
COMMAND_MODULES = (
    "demo",
    "validate",
    "generate",
    "route",
    "baselines",
    "score",
    "compare",
    "mid_reply",
    "facts",
    "score_facts",
    "vet",
    "export",
    "import",
    "lm_eval_tasks",
    "export_irc",
    "push",
    "push_metrics",
    "release",
    "leaderboard",
    "report",
    "stats",
    "fake_model",
)


class OneLineParser(argparse.ArgumentParser):
    """Bad options are one line on stderr and exit 2, like every other error of the project."""

    def error(self, message: str) -> NoReturn:
        print(error_line(f"{self.prog}: {message} (see {self.prog} --help)"), file=sys.stderr)
        raise SystemExit(2)


def command_module(name: str) -> str | None:
    """The module of command ``name`` (``mid-reply`` -> ``mid_reply``), ``None`` for no command."""
    module = name.replace("-", "_")
    return module if module in COMMAND_MODULES else None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command; only of the command ``argv`` names when it names one (a
    command's imports are paid by that command alone: ``score`` loads no model client)."""
    first = next((a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")), None)
    named = command_module(first) if first else None
    parser = OneLineParser(
        prog="interleave-bench",
        description="Benchmark and toolkit for routing an interleaved chat.",
    )
    parser.add_argument("--version", action="version", version=f"interleave-bench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    for name in (named,) if named else COMMAND_MODULES:
        # a command module that is missing is a broken install: fail loudly rather than drop the command
        importlib.import_module(f"interleave_bench.commands.{name}").register(sub)
    return parser


#: the errors a failed command prints one a line; the rest are counted in one more line (a file
#: given in the wrong place can hold a defect on every line)
SHOWN_ERRORS = 20


@contextmanager
def _writing_stdout(stream: Any) -> Iterator[None]:
    """A block writing standard output: a write the system refuses (a full disk: ``> /dev/full``)
    is the one line of :func:`~.errors.cannot_write` naming standard output (exit 2), and what is
    left unwritten is dropped, so the interpreter's last flush does not fail again on the way out.
    A closed pipe stays a :class:`BrokenPipeError` (exit 0: the reader had what it wanted)."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, stream.fileno())
            os.close(null)
        except (AttributeError, OSError, ValueError):
            pass  # no descriptor of its own (a test's stand-in): nothing is flushed on the way out
        raise cannot_write("standard output", exc) from exc


class _Printed:
    """A standard stream while a command runs: every text written to it passes
    :func:`~.redaction.redact_secrets`, the redaction every file written passes, so no table,
    ``--json`` document, warning or summary line shows a key an input holds (a session id, a path),
    whichever part of the project prints it. Text is passed on a line at a time (what follows the
    last line break, or carriage return, waits for the next write or a flush), so a key is never
    split between two writes; each write goes through ``guard`` (standard output's
    :func:`_writing_stdout`)."""

    def __init__(self, stream: Any, guard: Any = None):
        self._stream = stream
        self._guard = guard or _passed_on
        self._held: list[str] = []  # the parts of the line not ended yet

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def _pass_on(self, text: str) -> None:
        if text:
            with self._guard(self._stream):
                self._stream.write(redact_secrets(text))

    def write(self, text: str) -> int:
        cut = max(text.rfind("\n"), text.rfind("\r")) + 1
        if not cut:  # no line ends: held as a part (a line written in many parts is joined once)
            self._held.append(text)
            return len(text)
        self._held.append(text[:cut])
        line, self._held = "".join(self._held), [text[cut:]]
        self._pass_on(line)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        held, self._held = "".join(self._held), []
        self._pass_on(held)
        with self._guard(self._stream):
            self._stream.flush()

    def pass_held(self) -> None:
        """:meth:`flush` as far as it goes, for a command that stopped: a write refused is not its error."""
        try:
            self.flush()
        except (OSError, InterleaveError):
            pass


@contextmanager
def _passed_on(stream: Any) -> Iterator[None]:
    """A write to standard error: an error it raises is raised as it is."""
    yield


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    stderr, sys.stderr = sys.stderr, _Printed(sys.stderr)
    try:
        return _run(args)
    finally:
        sys.stderr.pass_held()
        sys.stderr = stderr


def _run(args: argparse.Namespace) -> int:
    """Run the command ``args`` names, its output through :class:`_Printed`; the exit code."""
    printed = _Printed(sys.stdout, _writing_stdout)
    stdout, sys.stdout = sys.stdout, printed
    try:
        try:
            try:
                code = args.func(args)
            except BaseException:
                printed.pass_held()  # the start of a line the command printed before it stopped
                raise
            printed.flush()  # what is left of its output: a write refused is the command's error
        finally:
            sys.stdout = stdout
        return int(code or 0)
    except InputErrors as exc:
        for err in exc.errors[:SHOWN_ERRORS]:
            print(error_line(err.format()), file=sys.stderr)
        rest = len(exc.errors) - SHOWN_ERRORS
        if rest > 0:
            files = sorted({str(e.path) for e in exc.errors[SHOWN_ERRORS:] if e.path})
            where = f" in {files[0]}" if len(files) == 1 else ""
            print(error_line(f"{rest:,} more error{'s' if rest > 1 else ''}{where} not shown "
                             "(interleave-bench validate lists every error of a data or predictions file)"), file=sys.stderr)
        return 2
    except InterleaveError as exc:
        print(error_line(one_line(str(exc))), file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        # --fresh starts over: the same command again would too, and route the finished sessions again
        again = "without --fresh" if getattr(args, "fresh", False) is True else "again"
        print(interrupted_line(exc, again), file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        named = exc.filename2 or exc.filename  # (a rename names the file it makes second)
        if named is None or not exc.strerror:
            return _internal_error(exc)
        # a file the system will not open as asked (no permission, a symlink loop, a name too long):
        # the user's to fix, so one line naming it, as bad input is
        print(error_line(f"{os.fsdecode(named)}: {exc.strerror[0].lower()}{exc.strerror[1:]}"), file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the one place that turns surprises into one line
        return _internal_error(exc)


def _internal_error(exc: BaseException) -> int:
    """An unexpected error as one line (its traceback, redacted, with ``INTERLEAVE_DEBUG``); exit 1."""
    if os.environ.get("INTERLEAVE_DEBUG"):
        # the traceback ends in the error's message, which may hold a key: redacted as every line printed
        print(redact("".join(traceback.format_exception(exc))), end="", file=sys.stderr)
    else:
        print(redact(one_line(f"internal error: {type(exc).__name__}: {exc} (set INTERLEAVE_DEBUG=1 for details)")),
              file=sys.stderr)
    return 1


def entry() -> None:
    """The ``interleave-bench`` command: :func:`main` as a process of its own. Before the
    interpreter shuts down, what is left is moved to the collector's permanent generation
    (``gc.freeze``), so the shutdown skips the collector's last pass over every loaded module's
    objects (tens of milliseconds); they are freed as usual, and the system takes the rest.

    Ctrl-C while a command's modules still load (before :func:`main` runs it) is one line and exit
    130 as well, not a traceback from deep inside an import."""
    try:
        code = main()
    except KeyboardInterrupt:
        print("interrupted before the command began: nothing was done", file=sys.stderr)
        code = 130
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
