"""What may leave for the Hub: no secret of this process in a file uploaded or a text published.

Everything ``push`` (and ``release``) and ``push-metrics`` send is public once committed: the files,
the commit message, the tag, the repo's name. Before the first request each is searched for the
secrets :func:`~interleave_bench.redaction.secret_sources` names (the environment's keys, the Hub
token however it was given, in every form a file may hold them), a file's path in the repo too (a
file or folder named with a key publishes it as its content would), and one that holds any is
refused in one line naming the file or the option and the secret's name, never its value (exit 2,
nothing sent). A text given on the command line (and a name on the leaderboard) is refused too
when it holds a secret whoever's it is (:func:`published_secret`): a key by its shape or a URL's
credentials (what :mod:`~interleave_bench.vet` reports as such), a key-shaped value redaction takes
out (a ``Basic`` token, ``?client_secret=...``), or a secret setting given its value
(``password=...``); a word that only names a secret's place (``Bearer``, ``Authorization:``,
``?token=abc``) is no secret, and such a text is sent as given.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterable, Optional

from ..errors import InputError, InputErrors, UsageError
from ..redaction import (GIVEN_SECRET, SECRET_MIN_CHARS, is_secret_name, is_secret_setting, looks_like_key, redact,
                         secret_sources, secrets_named_in)
from ..vet import API_KEY, URL_CREDENTIALS, scan_text

#: bytes of a file searched at a time (a secret across two blocks is found: they overlap)
SCAN_BLOCK = 1 << 20
#: what :func:`~interleave_bench.vet.scan_text` finds that a published text is refused for, whoever's
#: secret it is: a key by its shape (``sk-...``, ``hf_...``, ``ghp_...``), a URL's password or key
SHAPED_SECRETS = (API_KEY, URL_CREDENTIALS)
#: what a Parquet file starts with: its values are searched too, as compression hides them from its bytes
PARQUET_MAGIC = b"PAR1"


def held(names: list[str]) -> str:
    """``the value of HF_TOKEN`` / ``the values of HF_TOKEN, OPENAI_API_KEY``: what a refusal says
    is held, by the secrets' names (:func:`~interleave_bench.redaction.secret_sources`)."""
    shown = [("the Hub token or a key this run was given" if n == GIVEN_SECRET else n) for n in names]
    return f"the value{'s' if len(shown) > 1 else ''} of {', '.join(shown)}"


def secrets_in_bytes(data: bytes) -> list[str]:
    """The names of the secrets ``data`` (a file's content) holds as UTF-8 text, in any of their forms."""
    return [name for name, forms in secret_sources() if any(f.encode("utf-8") in data for f in forms)]


def secrets_in_file(path: Path) -> list[str]:
    """The names of the secrets the file at ``path`` holds: in its bytes, read a block at a time,
    and, for a Parquet file, in its values too."""
    sources = [(name, [f.encode("utf-8") for f in forms]) for name, forms in secret_sources()]
    if not sources:
        return []
    overlap = max(len(f) for _, forms in sources for f in forms) - 1
    found: set[str] = set()
    tail = b""
    with open(path, "rb") as fh:
        head = fh.read(len(PARQUET_MAGIC))
        fh.seek(0)
        for block in iter(lambda: fh.read(SCAN_BLOCK), b""):
            window = tail + block
            found.update(name for name, forms in sources if name not in found and any(f in window for f in forms))
            tail = window[-overlap:] if overlap else b""
    if head == PARQUET_MAGIC:
        found.update(_secrets_in_parquet_values(path))
    return [name for name, _ in sources if name in found]


def _secrets_in_parquet_values(path: Path) -> list[str]:
    """The names of the secrets a Parquet file's values hold (as JSON text, a batch of rows at a
    time); none when it cannot be read as Parquet (its bytes were searched)."""
    import pyarrow.parquet as pq

    found: list[str] = []
    try:
        for batch in pq.ParquetFile(path).iter_batches():
            text = json.dumps(batch.to_pylist(), ensure_ascii=False, default=str)
            found += [n for n in secrets_named_in(text) if n not in found]
    except Exception:  # noqa: BLE001 - not readable as Parquet: what its bytes hold was found
        return found
    return found


def refuse_secret_files(files: Iterable[tuple[Path, str, str]]) -> None:
    """Refuse, before anything is sent, every file that holds a secret in its content or in its path
    in the repo: ``files`` are ``(path to read, path in the repo, name shown)``; raises
    :class:`InputError` (one line per file, naming the secrets) when any does."""
    _refuse((shown, secrets_named_in(in_repo), secrets_in_file(path)) for path, in_repo, shown in files)


def refuse_secret_contents(contents: Iterable[tuple[bytes, str, str]]) -> None:
    """:func:`refuse_secret_files` for contents held in memory: ``(bytes to upload, path in the repo,
    name shown)``."""
    _refuse((shown, secrets_named_in(in_repo), secrets_in_bytes(data)) for data, in_repo, shown in contents)


def _refuse(found: Iterable[tuple[str, list[str], list[str]]]) -> None:
    """Raise one :class:`InputError` per file of ``found``, ``(name shown, the secrets its path in
    the repo holds, those its content holds)``, that holds any: one line naming both."""
    errors = [InputError(shown, None, None, _file_refusal(in_name, in_content))
              for shown, in_name, in_content in found if in_name or in_content]
    if errors:
        raise errors[0] if len(errors) == 1 else InputErrors(errors)


def _file_refusal(in_name: list[str], in_content: list[str]) -> str:
    """Why a file is refused: the secrets its path in the repo holds (``in_name``) and those its
    content holds (``in_content``), and what to do."""
    if not in_name:
        return f"holds {held(in_content)}: a secret is never uploaded; take it out of the file (nothing was sent)"
    also = f", and it holds {held(in_content)}" if in_content else ""
    fix = "rename it and take it out of the file" if in_content else "rename it"
    return (f"its path in the repo holds {held(in_name)}{also}: a secret is never uploaded, not even in a name; "
            f"{fix} (nothing was sent)")


def published_secret(text: str) -> Optional[str]:
    """What a text to be published holds of a secret, for a refusal (never the secret itself), else
    None: a secret of :func:`~interleave_bench.redaction.secret_sources` (by its variable's name),
    one of :data:`SHAPED_SECRETS` (a key by its shape, a URL's password), or any other value that
    :func:`~interleave_bench.redaction.redact` takes out and that looks like a key (a ``Basic``
    header's token, ``?client_secret=...``). Prose that only names a secret's place (``Fix bearer
    tokenizer_config handling``, ``the Authorization: header``, ``?token=abc``) holds none."""
    names = secrets_named_in(text)
    if names:
        return held(names)
    if any(m.kind in SHAPED_SECRETS for m in scan_text(text)):
        return "what looks like a key or a password"
    kept = redact(text)
    if kept != text and any(looks_like_key(w) and w not in kept for w in _WORDS.split(text)):
        return "what looks like a key or a password"
    for m in _ASSIGNED.finditer(text):  # password=..., "token": "...", secret: ...
        name, value = m.group(1), m.group(2)
        if (is_secret_setting(name) and len(value) >= SECRET_MIN_CHARS) or (is_secret_name(name) and looks_like_key(value)):
            return f"what looks like the value of a secret ({name})"
    return None


#: a value given to a name in a text: ``password=...``, ``"token": "..."``, ``secret: ...``
_ASSIGNED = re.compile(r"""(?<![\w.-])([A-Za-z_][\w.-]*)["']?[ \t]*[:=][ \t]*["']?([^\s"',;)]+)""")


#: what splits a text into the words :func:`published_secret` looks at
_WORDS = re.compile(r"[\s=&?:,;'\"()<>]+")


def refuse_secret_text(option: str, text: Optional[str]) -> None:
    """Refuse (:class:`UsageError`, one line) a text given as ``option`` (``--message``) that would
    be published and holds a secret (:func:`published_secret`): it is never sent, redacted or not."""
    if not text:
        return
    what = published_secret(text)
    if what is not None:
        raise UsageError(f"{option} holds {what}: it would be published on the Hub; give it without (nothing was sent)")
