"""The routing prompt: per-language text files under ``interleave_bench/data/prompts/``.

``route.<lang>.txt`` holds sections marked ``[[name]]``: ``system`` (the task and the payload),
``closed`` / ``open`` (the mode), ``one`` / ``each`` (the answer format) and ``fix`` (the corrective
message after an unusable answer, with ``{problem}``). A language without a file falls back to
English. Adding a language is adding a file with the same sections.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path

from ..errors import UsageError

PROMPT_DIR = Path(__file__).resolve().parent.parent / "data" / "prompts"
#: the language used when the data's language has no prompt file
FALLBACK_LANG = "en"
SECTIONS = ("system", "closed", "open", "one", "each", "fix")
_MARK = re.compile(r"^\[\[([a-z]+)\]\]\s*$", re.MULTILINE)


def prompt_lang(lang: str) -> str:
    """The prompt language for a data language: its primary subtag if there is a file, else English."""
    primary = (lang or "").replace("_", "-").split("-")[0].lower()
    return primary if (PROMPT_DIR / f"route.{primary}.txt").is_file() else FALLBACK_LANG


@lru_cache(maxsize=None)
def sections(lang: str) -> dict[str, str]:
    """The sections of the prompt file of ``lang`` (after fallback), each stripped."""
    path = PROMPT_DIR / f"route.{prompt_lang(lang)}.txt"
    text = path.read_text(encoding="utf-8")
    parts = _MARK.split(text)
    found = {parts[k]: parts[k + 1].strip() for k in range(1, len(parts) - 1, 2)}
    missing = [s for s in SECTIONS if not found.get(s)]
    if missing:
        raise UsageError(f"{path}: prompt file lacks the section(s) {', '.join(missing)}")
    return found


def system_prompt(lang: str, mode: str, each: bool) -> str:
    """The system message: the task, the mode, and the answer format (one decision or one each)."""
    s = sections(lang)
    return "\n\n".join((s["system"], s[mode], s["each" if each else "one"]))


def fix_message(lang: str, problem: str) -> str:
    """The corrective user message sent with the retry of an unusable answer."""
    return sections(lang)["fix"].replace("{problem}", problem)


def prompt_fingerprint() -> str:
    """SHA-256 over every routing prompt file (name and bytes), so a prompt change is traceable."""
    h = hashlib.sha256()
    for path in sorted(PROMPT_DIR.glob("route.*.txt")):
        h.update(path.name.encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return "sha256:" + h.hexdigest()[:16]
