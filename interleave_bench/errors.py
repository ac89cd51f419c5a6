"""The project's error types.

Every problem with input a user gave us is an :class:`InputError` whose message names the file, the
line and the field, so the CLI can print it as one line and exit 2. Anything else that stops a run on
purpose (a missing key, a model that keeps failing) is a :class:`UsageError`, also exit 2.
"""

from __future__ import annotations


class InterleaveError(Exception):
    """Base class of the errors the CLI reports as one line with exit code 2."""


class InputError(InterleaveError):
    """Bad input: ``file:line: field: what is wrong``.

    ``line`` is 1-based for JSONL files and ``None`` where a file has no meaningful line (a JSON
    document, a whole-file problem). ``field`` is a dotted path such as ``turns[3].gold.action``.
    """

    def __init__(self, path: str, line: int | None, field: str | None, message: str):
        self.path = str(path)
        self.line = line
        self.field = field
        self.message = message
        super().__init__(self.format())

    def __reduce__(self):
        # rebuilt field by field (its constructor's arguments are not its ``args``), so an error
        # raised in a worker process reaches the command as it was
        return (_restore, (type(self), self.args, self.__dict__))

    def format(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


def _restore(cls: type, args: tuple, state: dict) -> InputError:
    """An :class:`InputError` rebuilt from its ``args`` and attributes (unpickling)."""
    err = cls.__new__(cls)
    err.args = args
    err.__dict__.update(state)
    return err


class InputErrors(InputError):
    """Several input errors found in one pass; ``str()`` is the first, ``errors`` holds all."""

    def __init__(self, errors: list[InputError]):
        assert errors
        self.errors = errors
        first = errors[0]
        super().__init__(first.path, first.line, first.field, first.message)
        extra = len(errors) - 1
        if extra:
            self.message = f"{first.message} (and {extra} more error{'s' if extra > 1 else ''})"
            self.args = (self.format(),)

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.args[0]


class UsageError(InterleaveError):
    """A run cannot go on for a reason the user can fix (missing key, bad option, failed model)."""
