"""Helpers shared by the mid-reply tests: small case files, running the CLI, reading its output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _cli_util import run_cli  # noqa: F401  (the mid-reply tests import it from here)

EN_CATALOG = [
    {"id": "trip", "title": "Lisbon trip", "summary": "Five days in Lisbon in May.",
     "entities": ["Lisbon", "Sintra"], "keywords": ["flights", "hotel", "itinerary"], "lastState": "Flights booked."},
    {"id": "deck", "title": "Q3 sales deck", "summary": "Slides for the quarterly review.",
     "entities": ["Priya", "EMEA"], "keywords": ["revenue", "table", "slides"], "lastState": "Outline agreed."},
    {"id": "run", "title": "Half-marathon training", "summary": "Twelve-week plan.",
     "entities": ["Dana"], "keywords": ["long run", "intervals", "knee"], "lastState": "Week 6 done."},
]
RUNNING_DECK = {"topicId": "deck", "request": "Build the revenue table for slide 3.", "progress": "Two rows filled."}


def case(cid: str, text: str, expect: str, *, how: str = "interjection", tags: list[str] | None = None,
         lang: str = "en", running: dict[str, str] | None = None) -> dict[str, Any]:
    return {"id": cid, "lang": lang, "running": running or RUNNING_DECK, "how": how, "text": text,
            "expect": expect, "tags": tags or []}


def small_case_file(tmp_path: Path, cases: list[dict[str, Any]], name: str = "cases.json") -> Path:
    """A case file with the English catalog above and the given cases."""
    path = tmp_path / name
    path.write_text(json.dumps({"about": "test", "catalogs": {"en": EN_CATALOG}, "cases": cases},
                               ensure_ascii=False), encoding="utf-8")
    return path


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def table_row(stdout: str, group: str) -> list[str]:
    """The cells of one row of the printed markdown table (``**all**``, ``lang=en``, ...)."""
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == group:
            return cells
    raise AssertionError(f"no table row {group!r} in:\n{stdout}")
