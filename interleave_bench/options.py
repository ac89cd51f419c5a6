"""Numbers given on the command line, read once for every command: ``type=whole_number()`` and
``type=number()``.

A number a command takes ends up in a file the project writes (a run's options, a manifest's
plan, a score document's seed), and every reader holds integers to 64 bits
(:func:`~.json_text.find_bad_value`), so an option is held to the same range as it is read: a
command never writes a file that it, or a rerun resuming it, would then refuse.
"""

from __future__ import annotations

import argparse
import math
import numbers
import re
from typing import Any, Callable, Optional

from .errors import UsageError
from .json_text import INT64_MAX, INT64_MIN
from .strictjson import shown_digits


def range_problem(n: int, least: Optional[int] = None, most: Optional[int] = None) -> Optional[str]:
    """What is wrong with ``n`` for a number that must lie in ``least``..``most`` (either may be
    open), else None."""
    if least is not None and most is not None and not least <= n <= most:
        return f"must be {least:,} to {most:,}, got {n}"
    if least is not None and n < least:
        return f"must be {least:,} or more, got {n}"
    if most is not None and n > most:
        return f"must be at most {most:,}, got {n}"
    return None


def read_whole_number(text: str, least: Optional[int] = None, most: Optional[int] = None) -> int:
    """``text`` as a whole number in ``least``..``most`` and within 64 bits (what every file the
    project reads holds); raises :class:`ValueError` saying what is wrong with it."""
    try:
        n = int(text)
    except ValueError:
        digits = text.strip().lstrip("+-").replace("_", "")
        if digits.isdigit():  # more digits than int() reads: far outside 64 bits
            raise ValueError(f"the integer {shown_digits(text.strip())} is outside 64 bits") from None
        raise ValueError(f"must be a whole number, got {text!r}") from None
    if not INT64_MIN <= n <= INT64_MAX:
        raise ValueError(f"the integer {shown_digits(str(n))} is outside 64 bits")
    problem = range_problem(n, least, most)
    if problem is not None:
        raise ValueError(problem)
    return n


def whole_number_problem(value: Any, least: Optional[int] = None, most: Optional[int] = None) -> Optional[str]:
    """What is wrong with ``value``, given from Python, as a whole number in ``least``..``most``
    and within 64 bits, else None: the check :func:`read_whole_number` makes of the command line's
    text, made of a value (``True``, ``1.5`` or NaN is no whole number)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return f"must be a whole number, got {value!r}"
    n = int(value)
    if not INT64_MIN <= n <= INT64_MAX:
        return f"must be within 64 bits, got {shown_digits(str(n))}"
    return range_problem(n, least, most)


def check_whole_number(value: Any, name: str, least: Optional[int] = None, most: Optional[int] = None) -> int:
    """``value`` as an ``int`` when :func:`whole_number_problem` finds nothing wrong with it; else
    :class:`~.errors.UsageError` in one line naming ``name`` (``--seed``, ``seed``)."""
    problem = whole_number_problem(value, least, most)
    if problem is not None:
        raise UsageError(f"{name} {problem}")
    return int(value)


def check_flag(value: Any, name: str) -> bool:
    """``value`` when it is ``True`` or ``False`` (a flag given from Python, as ``--fresh`` is on
    the command line); else :class:`~.errors.UsageError` naming ``name``."""
    if not isinstance(value, bool):
        raise UsageError(f"{name} must be True or False, got {value!r}")
    return value


def whole_number(least: Optional[int] = None, most: Optional[int] = None,
                 problem: Optional[Callable[[int], Optional[str]]] = None) -> Callable[[str], int]:
    """The ``type`` of a whole-number option: :func:`read_whole_number` with these bounds, then
    ``problem`` (what else is wrong with the number, else None) when given; a bad value is
    argparse's one line naming the option (exit 2)."""

    def whole_number(text: str) -> int:
        try:
            n = read_whole_number(text, least, most)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        wrong = problem(n) if problem is not None else None
        if wrong is not None:
            raise argparse.ArgumentTypeError(wrong)
        return n

    return whole_number


#: a number as an option takes it: digits with a sign, a decimal point and an exponent, each if
#: any; not Python's other forms (``0_5``, which ``float`` reads as 5; ``nan``, ``inf``, blanks)
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def read_number(text: str) -> float:
    """``text`` as a finite number, ``-0`` read as 0 (one file name and one curve point for a
    threshold of 0, however written); raises :class:`ValueError` echoing ``text`` when it is
    no plain number (:data:`_NUMBER`)."""
    if not _NUMBER.fullmatch(text):
        raise ValueError(f"must be a number, got {text!r}")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"must be a finite number, got {text!r}")
    return unsigned_zero(value)


def unsigned_zero(value: float) -> float:
    """``value`` as a float, ``-0.0`` read as 0.0: how a number option, or one a file holds that an
    option gave (a run record's threshold), is read, so ``-0`` and ``0`` are one value everywhere
    (``f"{-0.0:g}"`` is ``-0``: another file name, another point of a curve)."""
    return float(value) + 0.0  # (-0.0 + 0.0 is 0.0)


def number() -> Callable[[str], float]:
    """The ``type`` of a number option (``--threshold``, ``--same``): :func:`read_number`, a bad
    value being argparse's one line naming the option (exit 2); its range is the option's own check."""

    def number(text: str) -> float:
        try:
            return read_number(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return number
