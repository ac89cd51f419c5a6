"""A hostile corpus for every command that reads a user's files.

    python benchmarks/hostile.py [--only score-facts] [--show 5]

Builds malformed inputs from valid ones, field by field (every value no run could write: negative,
string-typed, fractional, boolean, NaN, 1e400, 5,000-digit and 65-bit counts; empty, control
character and wrong-typed ids; unknown kinds, strategies, categories and verdicts; repeated keys,
100,000-deep nesting, broken UTF-8, truncated lines), plus the valid inputs themselves, and runs
each through the command in this process (``interleave_bench.cli.main``):

- ``score-facts`` on result rows, in the project's shapes and the reference implementation's;
- ``score-facts --data`` on v1 data files with hostile probes and timelines (the facts inputs);
- ``vet`` on JSON and JSONL files;
- ``import irc`` on annotation files and logs;
- ``vet --allow`` on allowlists, ``facts --dry-run`` on v1 data and ``export-irc`` on runs on IRC data
  (``benchmarks/hostile_commands.py``);
- ``import inspect`` on inspect logs, ``.eval`` archives and ``.json`` documents (``benchmarks/hostile_inspect.py``);
- and (``benchmarks/hostile_reading.py``) sessions, predictions in JSONL and Parquet, manifests,
  mid-reply case files and the SGD corpus through every command that reads them.

A malformed case must end with exit 2 and exactly one ``error:`` line; a valid one with exit 0 or
1 and no ``error:`` line. Prints the counts per command and kind of outcome: refused with one line,
accepted (valid inputs), internal errors, silently accepted wrong values, and refusals of valid
input; exits 1 when any of the last three is not zero.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_base import (BAD_COUNTS, BAD_IDS, BAD_NAMES, BAD_TEXTS, ROOT, Case, raw_json, table,  # noqa: E402
                          tally)
import hostile_commands  # noqa: E402  (the cases of vet --allow, facts and export-irc)
import hostile_inspect  # noqa: E402  (the cases of import inspect)
import hostile_reading  # noqa: E402  (the cases of every other reading command)

import _facts_util  # noqa: E402  (the scripted v1 session of the facts tests)

# --- score-facts rows --------------------------------------------------------------------------------

ANSWER = {"kind": "answer", "session_id": "s1", "probe": "s1-p1", "strategy": "facts", "category": "cross",
          "lang": "en", "after": 4, "gold": "5 EUR", "answer": "5 EUR", "verdict": "correct",
          "context_tokens": 10, "notes_chars": 3}
REF_ANSWER = {"kind": "answer", "session_id": "s1", "lang": "en", "probe": "s1-p1", "category": "cross",
              "strategy": "summary", "at": 4, "gold": "5 EUR", "answer": "5 EUR", "verdict": "correct",
              "context_tokens": 10, "notes_chars": 3}
DELIVERY = {"kind": "delivery", "session_id": "s1", "probe": "s1-p1", "strategy": "facts", "thread": "t2",
            "source": "t1", "key": "budget", "value": "5 EUR", "notice": None, "verdict": "current"}
REF_DELIVERY = {"kind": "delivery", "session_id": "s1", "probe": "s1-p1", "at": 4, "reader": "t2", "notice": False,
                "verdict": "current", "line": "- budget: 5 EUR"}
ROUTE = {"kind": "route", "session_id": "s1", "turn": 4, "probe": "s1-p1", "gold": "t2", "without": "t2",
         "with": "t2", "offered": 1, "imports": ["t1/budget"], "error": None}
REF_ROUTE = {"kind": "route", "session_id": "s1", "at": 7, "item": None, "gold": "t2", "offered": 1,
             "without": "t2", "with": "t2", "imports": 1}  # a sampled turn: ROUTE routes the probe
SESSION = {"kind": "session", "session_id": "s1", "lang": "en", "probes": ["s1-p1"], "strategies": ["facts"],
           "usage": {"answer": {"calls": 1, "input": 10, "cached_input": 0, "output": 2}}}
REF_SESSION = {"kind": "session", "session_id": "s2", "lang": "en", "probes": 1,  # SESSION is s1's
               "tokens": {"extract": 5, "route": 3, "summary": 2, "answer": 10}, "facts": []}
ERROR = {"kind": "error", "session_id": "s9", "problem": "model call failed"}
REF_ERROR = {"kind": "error", "session_id": "s9", "at": 3, "step": "answer", "error": "model call failed"}

#: each row's fields by what they must be
FIELDS: dict[str, dict[str, tuple[Any, ...]]] = {
    "answer": {"session_id": BAD_IDS, "probe": BAD_IDS, "strategy": BAD_NAMES, "category": BAD_NAMES,
               "verdict": ("great", "", 5, []), "after": BAD_COUNTS, "context_tokens": BAD_COUNTS,
               "notes_chars": BAD_COUNTS, "gold": BAD_TEXTS, "answer": BAD_TEXTS, "lang": ("x\ny", 5)},
    "delivery": {"session_id": BAD_IDS, "probe": BAD_IDS, "verdict": ("fine", "", None, 5), "notice": (5, [], {}),
                 "strategy": BAD_NAMES},
    "route": {"session_id": BAD_IDS, "turn": BAD_COUNTS + (None,), "offered": BAD_COUNTS,
              "imports": (-1, "6", 1.5, True, "NaN", "1e400", "HUGE", [1], {}), "error": (5, [], {}),
              "gold": BAD_TEXTS, "with": BAD_TEXTS},
    "session": {"session_id": BAD_IDS, "probes": (-1, "6", 1.5, True, "HUGE", [""], ["a\nb"], {}),
                "usage": ({"answer": -1}, {"answer": {"input": -5}}, {"answer": "6"}, [], "x", {"answer": 1.5},
                          {"answer": "NaN"}, {"answer": "1e400"}, {"answer": {"input": "HUGE"}}),
                "strategies": (["magic"], "facts", [5])},
    "error": {"session_id": BAD_IDS, "problem": (5, [], {})},
}
#: the fields a row cannot do without (an answer without a verdict is judged from its fields)
REQUIRED = {"answer": ("session_id", "probe", "strategy", "category"), "delivery": ("session_id", "probe", "verdict"),
            "route": ("session_id", "turn"), "session": ("session_id",), "error": ("session_id",)}
REF_FIELDS = {"answer": ("at", BAD_COUNTS), "route": ("at", BAD_COUNTS), "session": ("tokens", FIELDS["session"]["usage"])}


def _rows_case(name: str, lines: list[str], bad: bool, *extra: str, data: Any = None) -> Case:
    def run(folder: Path) -> list[str]:
        path = folder / "results.jsonl"
        path.write_text("".join(x + "\n" for x in lines), encoding="utf-8", errors="surrogateescape")
        args = ["score-facts", str(path), "--json", *extra]
        if data is not None:
            args += ["--data", str(data(folder))]
        return args

    return Case("score-facts", name, bad, run)


def score_facts_cases() -> Iterator[Case]:
    """Each malformed row alone, and again amid a file of valid rows of both shapes."""
    cases = list(_score_facts_cases())
    yield from cases
    middle = [raw_json(r) for r in (ANSWER, REF_DELIVERY, ROUTE, REF_SESSION)]
    for c in cases:
        if c.bad and c.name not in ("an empty file", "blank lines only") and not c.name.startswith("--data"):
            yield _amid(c, middle)


def _amid(case: Case, middle: list[str]) -> Case:
    def run(folder: Path) -> list[str]:
        args = case.run(folder)
        path = Path(args[1])
        lines = path.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
        path.write_text("\n".join(middle[:2] + lines + middle[2:]) + "\n", encoding="utf-8", errors="surrogateescape")
        return args

    return Case(case.command, case.name + " (amid valid rows)", True, run)


def _score_facts_cases() -> Iterator[Case]:
    shapes = {"answer": (ANSWER, REF_ANSWER), "delivery": (DELIVERY, REF_DELIVERY), "route": (ROUTE, REF_ROUTE),
              "session": (SESSION, REF_SESSION), "error": (ERROR, REF_ERROR)}
    valid_file = [raw_json(r) for pair in shapes.values() for r in pair]
    yield _rows_case("valid rows of both shapes", valid_file, False)
    for kind, (ours, theirs) in shapes.items():
        yield _rows_case(f"valid {kind}", [raw_json(ours)], False)
        yield _rows_case(f"valid reference {kind}", [raw_json(theirs)], False)
        for field, values in FIELDS[kind].items():
            for k, v in enumerate(values):
                for shape, row in (("", ours), ("reference ", theirs)):
                    if field not in row and not (field == "usage" and shape):
                        continue
                    target = "tokens" if field == "usage" and shape else field
                    yield _rows_case(f"{shape}{kind}.{target} = {v!r}", [raw_json({**row, target: v})], True)
        if kind in REF_FIELDS:
            field, values = REF_FIELDS[kind]
            for v in values:
                yield _rows_case(f"reference {kind}.{field} = {v!r}", [raw_json({**theirs, field: v})], True)
        for missing in REQUIRED[kind]:
            yield _rows_case(f"{kind} without {missing}", [raw_json({k: v for k, v in ours.items() if k != missing})], True)
        for extra_name, extra_raw in (("NaN", "NaN"), ("1e400", "1e400"), ("-Infinity", "-Infinity"),
                                      ("5,000 digits", "9" * 5000), ("65 bits", str(2**64)),
                                      ("deep nesting", "[" * 100_000 + "]" * 100_000)):
            line = raw_json(ours)[:-1] + f', "extra": {extra_raw}}}'
            yield _rows_case(f"{kind} with an extra field of {extra_name}", [line], True)
        yield _rows_case(f"{kind} with a repeated key", [raw_json(ours)[:-1] + ', "session_id": "s2"}'], True)
        yield _rows_case(f"{kind} cut off", [raw_json(ours)[:-7]], True)
    for kind_value in ("answers", "", 5, None, "ANSWER", "answer\n"):
        yield _rows_case(f"kind = {kind_value!r}", [raw_json({**ANSWER, "kind": kind_value})], True)
    for kind in ("answer", "route", "session"):  # what a file holds one row of, given twice
        for shape, row in (("", shapes[kind][0]), ("reference ", shapes[kind][1])):
            yield _rows_case(f"a {shape}{kind} row twice", [raw_json(row), raw_json(row)], True)
    yield _rows_case("an empty file", [], True)
    yield _rows_case("blank lines only", ["", "   "], True)
    for whole in ("[1, 2]", '"text"', "5", "null", "true", "{", "}"):
        yield _rows_case(f"a line that is {whole!r}", [whole], True)
    yield _rows_case("broken UTF-8", [raw_json(ANSWER).replace("facts", "f\udce9cts")], True)
    # --data: forged verdicts and categories against the scripted session's probes
    data = lambda folder: _facts_util.write_data(folder / "data", [_facts_util.session("en-0001")])  # noqa: E731
    good = {"kind": "answer", "session_id": "en-0001", "probe": "en-0001-p7", "strategy": "facts",
            "category": "stale", "lang": "en", "answer": "It is 900 EUR now.", "verdict": "correct"}
    yield _rows_case("--data: a verdict the judge agrees with", [raw_json(good)], False, data=data)
    yield _rows_case("--data: no verdict, judged from the probe", [raw_json({**good, "verdict": None})], False, data=data)
    for forged in ("stale", "proposal", "wrong", "missing"):
        yield _rows_case(f"--data: verdict {forged} on a correct answer", [raw_json({**good, "verdict": forged})], True, data=data)
    for text, verdict in (("It is 700 EUR.", "correct"), ("undecided", "correct"), ("no idea", "correct")):
        yield _rows_case(f"--data: verdict correct on {text!r}", [raw_json({**good, "answer": text, "verdict": verdict})],
                         True, data=data)
    yield _rows_case("--data: a probe not in the data", [raw_json({**good, "probe": "en-0001-p99"})], True, data=data)
    yield _rows_case("--data: a category not the probe's", [raw_json({**good, "category": "cross"})], True, data=data)
    yield _rows_case("--data: no answer text", [raw_json({**good, "answer": None})], True, data=data)
    routed = {"kind": "route", "session_id": "en-0001", "turn": 10, "probe": "en-0001-p7", "gold": "party",
              "without": "party", "with": "party", "offered": 1, "imports": [], "error": None}
    yield _rows_case("--data: a route row the data agrees with", [raw_json(good), raw_json(routed)], False, data=data)
    for name, forged in (("gold not the probe's topic", {"gold": "move"}), ("a probe not in the data", {"probe": "x"}),
                         ("a sampled turn's gold not its topic", {"probe": None, "turn": 4, "gold": "party"}),
                         ("a sampled turn past the session", {"probe": None, "turn": 13})):
        yield _rows_case(f"--data: a route row with {name}", [raw_json(good), raw_json({**routed, **forged})], True,
                         data=data)


# --- facts inputs: v1 data behind score-facts --data ------------------------------------------------


def facts_data_cases() -> Iterator[Case]:
    good = {"kind": "answer", "session_id": "en-0001", "probe": "en-0001-p7", "strategy": "facts",
            "category": "stale", "lang": "en", "answer": "It is 900 EUR now.", "verdict": "correct"}

    def with_session(mutate: Callable[[dict], Any], raw: bool = False) -> Callable[[Path], Path]:
        def make(folder: Path) -> Path:
            s = _facts_util.session("en-0001")
            out = mutate(s)
            folder.joinpath("data").mkdir(exist_ok=True)
            text = out if raw else raw_json(s)
            (folder / "data" / "sessions.jsonl").write_text(text + "\n", encoding="utf-8")
            return folder / "data"

        return make

    yield _rows_case("facts data: valid", [raw_json(good)], False, data=with_session(lambda s: None))
    mutations: list[tuple[str, Callable[[dict], Any], bool]] = []
    for field, values in (("after", BAD_COUNTS), ("category", BAD_NAMES), ("id", ("", 5, None)),
                          ("gold", (5, [], {})), ("decoys", ("x", [5], {}))):
        for v in values:
            mutations.append((f"probes[6].{field} = {v!r}", lambda s, f=field, v=v: s["probes"][6].__setitem__(f, v), False))
    for field, values in (("turn", BAD_COUNTS), ("status", ("maybe", 5)), ("kind", ("guess", None))):
        for v in values:
            mutations.append((f"timeline[0].{field} = {v!r}", lambda s, f=field, v=v: s["timeline"][0].__setitem__(f, v), False))
    mutations.append(("a timeline event on a thread the session lacks",
                      lambda s: s["timeline"][0].__setitem__("thread", "nowhere"), False))
    mutations.append(("a session nested 100,000 deep", lambda s: "[" * 100_000 + "]" * 100_000, True))
    mutations.append(("a repeated session_id key", lambda s: raw_json(s)[:-1] + ', "session_id": "x"}', True))
    for name, mutate, raw in mutations:
        yield _rows_case(f"facts data: {name}", [raw_json(good)], True, data=with_session(mutate, raw))


# --- vet ---------------------------------------------------------------------------------------------


def _vet_case(name: str, text: str | bytes, bad: bool, suffix: str = ".jsonl") -> Case:
    def run(folder: Path) -> list[str]:
        path = folder / f"input{suffix}"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        (folder / "allow.txt").write_text("", encoding="utf-8")  # no allowlist of the machine's applies
        return ["vet", str(path), "--allow", str(folder / "allow.txt")]

    return Case("vet", name, bad, run)


def vet_cases() -> Iterator[Case]:
    docs = [{"text": "hello"}, {"text": "mail ann@mail.de"}, {"turns": [{"text": "key sk-" + "A1b2C3d4" * 4}]},
            {"a": {"b": ["x", 1, 2.5, None, True]}}]
    for k, d in enumerate(docs):
        for suffix in (".jsonl", ".json"):
            yield _vet_case(f"valid document {k}{suffix}", raw_json(d) + "\n", False, suffix)
    yield _vet_case("a long line of letters", raw_json({"t": "a" * 200_000}) + "\n", False)
    yield _vet_case("a line of many schemes", raw_json({"t": "x://" * 50_000}) + "\n", False)
    for k, d in enumerate(docs):
        for extra_name, extra_raw in (("NaN", "NaN"), ("Infinity", "Infinity"), ("1e400", "1e400"),
                                      ("-1e999", "-1e999"), ("5,000 digits", "9" * 5000), ("65 bits", str(2**64)),
                                      ("-65 bits", "-" + str(2**64)), ("deep list", "[" * 100_000 + "]" * 100_000),
                                      ("deep object", '{"a":' * 50_000 + "1" + "}" * 50_000)):
            line = raw_json(d)[:-1] + f', "extra": {extra_raw}}}'
            for suffix in (".jsonl", ".json"):
                yield _vet_case(f"document {k} with {extra_name}{suffix}", line + "\n", True, suffix)
        for suffix in (".jsonl", ".json"):
            first = next(iter(d))
            yield _vet_case(f"document {k} with a repeated key{suffix}", raw_json(d)[:-1] + f', "{first}": "x"}}\n', True, suffix)
            yield _vet_case(f"document {k} cut off{suffix}", raw_json(d)[:-2] + "\n", True, suffix)
            yield _vet_case(f"document {k} in Latin-1{suffix}", (raw_json(d)[:-1] + ', "n": "caf\u00e9"}\n').encode("latin-1"),
                            True, suffix)
    for whole in ("{", "[1,", '{"a" 1}', "nul", "tru", '{"a": 01}', '{"a": .5}', '{"a": "\\x"}'):
        for suffix in (".jsonl", ".json"):
            yield _vet_case(f"text {whole!r}{suffix}", whole + "\n", True, suffix)
    yield _vet_case("not a JSON file", "plain text\n", True, ".txt")


# --- import irc --------------------------------------------------------------------------------------

IRC = ROOT / "tests" / "data" / "irc" / "dev"
ANNOTATION = "2000-01-01_00.annotation.txt"
LOG = "2000-01-01_00.ascii.txt"


def _irc_case(name: str, bad: bool, annotation: str | None = None, log: bytes | None = None) -> Case:
    def run(folder: Path) -> list[str]:
        d = folder / "corpus" / "dev"
        shutil.copytree(IRC, d)
        if annotation is not None:
            (d / ANNOTATION).write_text(annotation, encoding="utf-8")
        if log is not None:
            (d / LOG).write_bytes(log)
        return ["import", "irc", str(folder / "corpus"), "--out", str(folder / "out")]

    return Case("import irc", name, bad, run)


def irc_cases() -> Iterator[Case]:
    yield _irc_case("the corpus as shipped", False)
    base = (IRC / ANNOTATION).read_text(encoding="utf-8")
    lines = base.splitlines()
    log = (IRC / LOG).read_bytes()
    for bad_line in ("5 3 -", "9 1 -", "3 3", "3 3 - -", "3 3 +", "a 3 -", "3 b -", "-1 3 -", "3 -4 -", "3.0 4 -",
                     "0x3 4 -", "3 99 -", "99 99 -", "3 " + "9" * 5000 + " -", "9" * 5000 + " 3 -", "３ 4 -",
                     "3 ４ -", "3\t4\t", "3 4 - extra", "x" * 100_000, "\x00 1 -", "3 4 -\x00"):
        for at in (0, len(lines)):
            text = "\n".join(lines[:at] + [bad_line] + lines[at:]) + "\n"
            yield _irc_case(f"annotation line {bad_line[:30]!r} at {at}", True, annotation=text)
    yield _irc_case("an annotation with no links", True, annotation="\n\n")
    yield _irc_case("an empty annotation", True, annotation="")
    yield _irc_case("an annotation in Latin-1", True, annotation=base + "3 4 - caf\u00e9\n")
    for name, content in (("NUL bytes", log[:40] + b"\x00\x00" + log[40:]), ("Latin-1 text", log + b"caf\xe9\n"),
                          ("random bytes", bytes(range(256)) * 4), ("a PNG header", b"\x89PNG\r\n\x1a\n" + log),
                          ("UTF-16", log.decode("utf-8").encode("utf-16"))):
        yield _irc_case(f"a log of {name}", True, log=content)
    yield _irc_case("a log too short for its links", True, log=b"[00:00] <a> hi\n")


COMMANDS = {"score-facts": score_facts_cases, "facts inputs": facts_data_cases, "vet": vet_cases, "import irc": irc_cases,
            **hostile_reading.COMMANDS, **hostile_inspect.COMMANDS,
            **hostile_commands.COMMANDS}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=list(COMMANDS), help="one command's cases")
    ap.add_argument("--show", type=int, default=5, help="cases of each failing outcome to print (default 5)")
    args = ap.parse_args()
    chosen = {k: v for k, v in COMMANDS.items() if not args.only or k == args.only}
    counts, failing = tally(((group, case) for group, cases in chosen.items() for case in cases()), args.show)
    total = sum(sum(c.values()) for c in counts.values())
    print("\n".join(table(counts)))
    print(f"hostile: {total} cases over {len(counts)} commands and kinds of input; {failing} not handled as they must be")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
