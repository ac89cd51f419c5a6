"""Vetting data before it is published: secrets and personal data in every text field.

Model-written data can carry what must never go public: a key pasted into a prompt, a real-looking
e-mail address or phone number, a card or bank account number, a URL with a password in it, a
local file path naming a user, an IP address. :func:`scan_text` finds them in one string;
:func:`vet_paths` walks every string of every JSON/JSONL file given (sessions of any version,
mid-reply case files, manifests; a folder stands for the JSON and JSONL files under it) and
returns one :class:`Finding` per match, naming file, line, field (a JSON path such as
``turns[3].text``) and kind, with the match masked. Nothing here ever prints or stores a match
unmasked.

Precision matters as much as recall: a vetting step that cries wolf on every date gets switched
off. So card numbers must pass the Luhn check and carry a card network's prefix, IBANs must pass
the mod-97 check, phone numbers must have a phone number's shape (a ``+`` country code, or the
grouping of a national number), and ids, dates, prices, times and version numbers are not
matched. An allowlist (``vet-allow.txt``) accepts findings known to be fakes, each with a reason.
"""

from __future__ import annotations

import ipaddress
import json
import math
import os
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from .errors import InputError
from .io import iter_json_lines

# --- kinds -------------------------------------------------------------------------------------------

API_KEY = "api-key"
HIGH_ENTROPY = "high-entropy"
EMAIL = "email"
PHONE = "phone"
IBAN = "iban"
CARD = "card"
URL_CREDENTIALS = "url-credentials"
LOCAL_PATH = "local-path"
IP_ADDRESS = "ip-address"
#: every kind of finding, in the order detectors run: where two match the same text, the earlier wins
#: (a key inside a URL is reported once, as the URL's credentials; a card number is not also a phone)
KINDS = (API_KEY, URL_CREDENTIALS, EMAIL, IBAN, CARD, IP_ADDRESS, PHONE, LOCAL_PATH, HIGH_ENTROPY)

#: the allowlist read by default, from the current folder, when it exists
DEFAULT_ALLOWLIST = "vet-allow.txt"
#: file types vetted inside a folder: the project's data is JSON Lines or JSON documents
VETTED_SUFFIXES = (".jsonl", ".json")

# --- detectors ---------------------------------------------------------------------------------------

# Boundaries are ASCII-only on purpose: in Python's Unicode regexes a Chinese character is a word
# character, so ``\b`` would hide "密钥是sk-..." or "手机13812345678" from every detector.
_NOT_ALNUM_BEFORE = r"(?<![A-Za-z0-9])"
_NOT_ALNUM_AFTER = r"(?![A-Za-z0-9])"
_NOT_DIGIT_BEFORE = r"(?<![0-9])"
_NOT_DIGIT_AFTER = r"(?![0-9])"

#: the key and token formats of common providers and of the Hugging Face Hub
API_KEY_PATTERNS = tuple(
    re.compile(p)
    for p in (
        _NOT_ALNUM_BEFORE + r"sk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{20,}",  # OpenAI, DeepSeek, Anthropic
        _NOT_ALNUM_BEFORE + r"(?:hf|api_org)_[A-Za-z0-9]{30,}",  # Hugging Face user and org tokens
        _NOT_ALNUM_BEFORE + r"gh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
        _NOT_ALNUM_BEFORE + r"github_pat_[A-Za-z0-9_]{22,}",  # GitHub fine-grained tokens
        _NOT_ALNUM_BEFORE + r"glpat-[A-Za-z0-9_-]{20,}",  # GitLab personal tokens
        _NOT_ALNUM_BEFORE + r"(?:AKIA|ASIA)[0-9A-Z]{16}" + _NOT_ALNUM_AFTER,  # AWS access key ids
        _NOT_ALNUM_BEFORE + r"AIza[0-9A-Za-z_-]{35}",  # Google API keys
        _NOT_ALNUM_BEFORE + r"xox[abposr]-[A-Za-z0-9-]{10,}",  # Slack tokens
        _NOT_ALNUM_BEFORE + r"(?:sk|rk)_live_[A-Za-z0-9]{16,}",  # Stripe secret and restricted keys
        _NOT_ALNUM_BEFORE + r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",  # JSON web tokens
        r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----",  # PEM private keys
        r"(?i:bearer)\s+[A-Za-z0-9._~+/-]{20,}=*",  # an HTTP Authorization header pasted whole
    )
)

#: a long run of key-alphabet characters; :func:`_is_high_entropy` decides whether it is random
_TOKEN_RUN = re.compile(r"(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_=-]{%d,}" % 32)
#: shortest token the entropy test judges: shorter random strings are too few to tell from words
MIN_ENTROPY_LENGTH = 32
#: bits per character above which a mixed-case alphanumeric run is taken as random: 32 random
#: base62 characters score about 4.5, long identifiers and words stay under 4.1
MIN_ENTROPY_BITS = 4.2

_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}" + _NOT_ALNUM_AFTER)
#: domains reserved for examples and tests (RFC 2606, RFC 6761): addresses there reach no one
RESERVED_EMAIL_DOMAINS = ("example.com", "example.org", "example.net")
RESERVED_TLDS = ("example", "test", "invalid", "localhost")

_URL_USERINFO = re.compile(r"(?i)[a-z][a-z0-9+.-]*://[^\s/@:\"'<>]+:[^\s/@\"'<>]+@[^\s\"'<>]+")
_URL_SECRET_PARAM = re.compile(
    r"(?i)[a-z][a-z0-9+.-]*://[^\s\"'<>]*[?&](?:access_token|api_key|apikey|token|key|password|secret|sig|signature)="
    r"[^\s&\"'<>]{8,}[^\s\"'<>]*"
)

_IBAN = re.compile(_NOT_ALNUM_BEFORE + r"[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?" + _NOT_ALNUM_AFTER)
#: IBAN lengths (ISO 13616): the shortest country format has 15 characters, the longest 34
IBAN_LENGTHS = (15, 34)

_CARD = re.compile(_NOT_DIGIT_BEFORE + r"[0-9](?:[ -]?[0-9]){12,18}" + _NOT_DIGIT_AFTER)
#: issuer prefixes of the card networks (Visa, Mastercard, Amex, Discover, JCB, UnionPay, Diners):
#: a number that passes Luhn but starts otherwise is an order or tracking number, not a card
CARD_PREFIXES = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[47]|6011|64[4-9]|65|35|62|36|38|30[0-5])")

_IPV4 = re.compile(r"(?<![A-Za-z0-9.])(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?![0-9]|\.[0-9])")
_IPV6 = re.compile(r"(?<![A-Za-z0-9:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![A-Za-z0-9:])")
#: address blocks reserved for documentation (RFC 5737, RFC 3849): known fakes by definition
DOCUMENTATION_NETWORKS = tuple(
    ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
)

#: a phone number is not the tail or head of a longer run of digit groups ("12 000 000 000")
_NOT_IN_DIGIT_GROUPS_BEFORE = r"(?<![0-9])(?<![0-9][ .-])"
_NOT_IN_DIGIT_GROUPS_AFTER = r"(?![0-9])(?![ .-][0-9])"
_PHONE_PATTERNS = tuple(
    re.compile(_NOT_IN_DIGIT_GROUPS_BEFORE + p + _NOT_IN_DIGIT_GROUPS_AFTER)
    for p in (
        # international: a + country code, then groups (+86 138 0013 8000, +44 (0)20 7946 0958, +12025550143)
        r"\+[0-9]{1,3}(?:[ .-]?\(?[0-9]{1,4}\)?){1,5}[ .-]?[0-9]{2,}",
        # North American: (202) 555-0143, 202-555-0143, 202.555.0143
        r"(?:\([2-9][0-9]{2}\) ?|[2-9][0-9]{2}[ .-])[0-9]{3}[ .-][0-9]{4}",
        # Chinese mobile numbers: 13800138000, 138-0013-8000, 138 0013 8000
        r"1[3-9][0-9](?:[ -]?[0-9]{4}){2}",
        # national numbers with a trunk 0: 020 7946 0958, 07700 900123, 010-62345678, 01 23 45 67 89
        r"0[0-9]{1,4}[ -][0-9]{3,4}[ -]?[0-9]{3,4}",
        r"0[1-9](?:[ .][0-9]{2}){4}",
    )
)
#: digits in a phone number (E.164 allows at most 15; no national format has fewer than 8)
PHONE_DIGITS = (8, 15)

_LOCAL_PATH = re.compile(
    r"(?:(?<![A-Za-z0-9_.~/-])/(?:home|Users|root)/|(?<![A-Za-z0-9])[A-Za-z]:[\\/](?:Users|Documents and Settings)[\\/]"
    r"|\\\\[A-Za-z0-9_.-]+\\[A-Za-z0-9_$.-]+\\)"
    r"[^\s\"'<>|,;，。；：、）)]*"
)


@dataclass(frozen=True)
class Match:
    """One detector hit in a string: its kind and the exact text (never shown unmasked)."""

    kind: str
    text: str
    start: int
    end: int


def luhn_ok(digits: str) -> bool:
    """True when a digit string passes the Luhn check that every payment card number satisfies."""
    total = 0
    for k, ch in enumerate(reversed(digits)):
        d = int(ch)
        if k % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def iban_ok(text: str) -> bool:
    """True when ``text`` (spaces allowed) is an IBAN whose mod-97 check gives 1 (ISO 13616)."""
    s = text.replace(" ", "").upper()
    if not (IBAN_LENGTHS[0] <= len(s) <= IBAN_LENGTHS[1]) or not re.fullmatch(r"[A-Z]{2}[0-9]{2}[A-Z0-9]+", s):
        return False
    moved = s[4:] + s[:4]
    return int("".join(str(int(ch, 36)) for ch in moved)) % 97 == 1


def shannon_bits(text: str) -> float:
    """Shannon entropy of the characters of ``text``, in bits per character."""
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values()) if n else 0.0


def _is_high_entropy(token: str) -> bool:
    core = token.strip("=-_")
    if len(core) < MIN_ENTROPY_LENGTH:
        return False
    # hex digests (git commits, file fingerprints) and UUIDs are lower case only: they identify
    # content, they open nothing; a random key mixes cases and digits
    if not (re.search(r"[a-z]", core) and re.search(r"[A-Z]", core) and re.search(r"[0-9]", core)):
        return False
    return shannon_bits(core) >= MIN_ENTROPY_BITS


def _email_ok(text: str) -> bool:
    domain = text.rsplit("@", 1)[1].lower()
    if domain in RESERVED_EMAIL_DOMAINS or any(domain.endswith("." + d) for d in RESERVED_EMAIL_DOMAINS):
        return False
    return domain.rsplit(".", 1)[-1] not in RESERVED_TLDS


def _card_ok(text: str) -> bool:
    digits = re.sub(r"[ -]", "", text)
    if not 13 <= len(digits) <= 19 or not CARD_PREFIXES.match(digits):
        return False
    # separators, where present, sit between groups of at least three digits (4-4-4-4, 4-6-5):
    # "2024-05-14 1234" style runs of dates and counts are not card numbers
    groups = re.split(r"[ -]", text)
    if len(groups) > 1 and min(len(g) for g in groups) < 3:
        return False
    return luhn_ok(digits)


#: a dotted quad of one-digit parts ("1.2.3.4") reads as a version number far more often than as a
#: real address
_VERSION_LIKE_QUAD = re.compile(r"^[0-9]\.[0-9]\.[0-9]\.[0-9]$")


def _ip_ok(text: str) -> bool:
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        return False
    if addr.version == 4 and _VERSION_LIKE_QUAD.match(text):
        return False
    if addr.version == 6 and not re.search(r"[0-9]", text.replace(":", "")):
        return False  # "::" alone, or "a::b" written as C++ scope, is no address worth reporting
    if addr.is_loopback or addr.is_unspecified or addr.is_multicast:
        return False
    return not any(addr in net for net in DOCUMENTATION_NETWORKS)


def _phone_ok(text: str) -> bool:
    digits = re.sub(r"[^0-9]", "", text)
    if not PHONE_DIGITS[0] <= len(digits) <= PHONE_DIGITS[1]:
        return False
    # groups of exactly three digits after the first are an amount's thousands ("300 000 000")
    groups = re.split(r"[ .-]", text)
    return text.startswith("+") or len(groups) < 3 or any(len(g) != 3 for g in groups[1:])


def _finditer(kind: str, pattern: re.Pattern[str], text: str, ok: Any = None) -> Iterator[Match]:
    for m in pattern.finditer(text):
        found = m.group(0).rstrip(".,;:!?")
        if ok is None or ok(found):
            yield Match(kind, found, m.start(), m.start() + len(found))


def _candidates(text: str) -> Iterator[Match]:
    """Every detector's hits in ``text``, in :data:`KINDS` order."""
    for p in API_KEY_PATTERNS:
        yield from _finditer(API_KEY, p, text)
    yield from _finditer(URL_CREDENTIALS, _URL_USERINFO, text)
    yield from _finditer(URL_CREDENTIALS, _URL_SECRET_PARAM, text)
    yield from _finditer(EMAIL, _EMAIL, text, _email_ok)
    yield from _finditer(IBAN, _IBAN, text, iban_ok)
    yield from _finditer(CARD, _CARD, text, _card_ok)
    yield from _finditer(IP_ADDRESS, _IPV4, text, _ip_ok)
    yield from _finditer(IP_ADDRESS, _IPV6, text, _ip_ok)
    for p in _PHONE_PATTERNS:
        yield from _finditer(PHONE, p, text, _phone_ok)
    yield from _finditer(LOCAL_PATH, _LOCAL_PATH, text)
    yield from _finditer(HIGH_ENTROPY, _TOKEN_RUN, text, _is_high_entropy)


def scan_text(text: str) -> list[Match]:
    """The findings in one string, in order of position; overlapping hits are reported once.

    The text is NFKC-normalised first, so full-width digits and letters ("１３８...") are read as
    their ASCII forms. Where hits overlap, the kind that comes first in :data:`KINDS` wins.
    """
    norm = unicodedata.normalize("NFKC", text)
    taken: list[tuple[int, int]] = []
    found: list[Match] = []
    for m in _candidates(norm):
        if m.end <= m.start or any(m.start < e and s < m.end for s, e in taken):
            continue
        taken.append((m.start, m.end))
        found.append(m)
    return sorted(found, key=lambda m: m.start)


# --- masking -----------------------------------------------------------------------------------------

#: at most this many characters of a match are shown at each end; the rest become ``*``
MASK_KEEP = 3


def mask(text: str) -> str:
    """``text`` with all but a few characters at its ends replaced by ``*``.

    At most a quarter of the characters stay visible (none for a string under eight characters),
    so a masked key or number cannot be used or looked up.
    """
    n = len(text)
    keep = min(MASK_KEEP, n // 8)
    if keep == 0:
        return "*" * n
    return text[:keep] + "*" * (n - 2 * keep) + text[n - keep:]


# --- allowlist ---------------------------------------------------------------------------------------


@dataclass
class AllowRule:
    """One allowlist line: findings (of ``kind``, or any kind) whose whole text matches ``pattern``."""

    pattern: re.Pattern[str]
    kind: Optional[str]
    reason: str
    path: str
    line: int
    used: int = 0

    def accepts(self, kind: str, text: str) -> bool:
        return (self.kind is None or self.kind == kind) and self.pattern.fullmatch(text) is not None


_ALLOW_LINE = re.compile(r"^(?:(?P<kind>[a-z0-9-]+):)?(?P<pattern>.*?)\s+#\s*(?P<reason>.*)$")


def read_allowlist(path: str | os.PathLike) -> list[AllowRule]:
    """The rules of an allowlist file: ``[KIND:]PATTERN  # REASON`` per line.

    ``PATTERN`` is a regular expression that must match a finding's whole (unmasked) text; a
    ``KIND:`` prefix limits it to one kind (:data:`KINDS`). Blank lines and lines starting with
    ``#`` are comments. Raises :class:`InputError` naming the line for a missing reason, an unknown
    kind or a pattern that does not compile.
    """
    name = str(path)
    rules: list[AllowRule] = []
    for line, raw in iter_json_lines(path):  # any UTF-8 text, line by line, blank lines skipped
        text = raw.strip()
        if text.startswith("#"):
            continue
        m = _ALLOW_LINE.match(text)
        if m is None or not m.group("reason").strip() or not m.group("pattern"):
            raise InputError(name, line, None, "expected `[KIND:]PATTERN  # REASON`: every accepted pattern needs a reason")
        kind = m.group("kind")
        if kind is not None and kind not in KINDS:
            raise InputError(name, line, "kind", f"{kind!r} is not one of {', '.join(KINDS)}")
        try:
            pattern = re.compile(m.group("pattern"))
        except re.error as exc:
            raise InputError(name, line, "pattern", f"not a regular expression: {exc}") from None
        rules.append(AllowRule(pattern, kind, m.group("reason").strip(), name, line))
    return rules


# --- walking files -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One finding: where (file, line, JSON path) and what (kind, masked text, allowed by which rule)."""

    path: str
    line: Optional[int]
    field: str
    kind: str
    masked: str
    allowed_by: Optional[str] = None  # the allowlist's "file:line (reason)" when it accepts this

    def format(self) -> str:
        """``file:line: field: kind: masked`` (the project's error-line shape)."""
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        tail = f" (allowed by {self.allowed_by})" if self.allowed_by else ""
        return f"{where}: {self.field}: {self.kind}: {self.masked}{tail}"


@dataclass
class VetReport:
    """What :func:`vet_paths` found: findings (allowed ones included), what it read, and what it could not."""

    findings: list[Finding] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    records: int = 0
    strings: int = 0
    errors: list[InputError] = field(default_factory=list)
    unused_rules: list[AllowRule] = field(default_factory=list)

    @property
    def blocking(self) -> list[Finding]:
        """The findings no allowlist rule accepts."""
        return [f for f in self.findings if f.allowed_by is None]

    @property
    def allowed(self) -> list[Finding]:
        return [f for f in self.findings if f.allowed_by is not None]

    @property
    def clean(self) -> bool:
        """True when every file was read and nothing blocking was found."""
        return not self.errors and not self.blocking

    def by_kind(self) -> dict[str, int]:
        """Blocking findings per kind, in :data:`KINDS` order."""
        c = Counter(f.kind for f in self.blocking)
        return {k: c[k] for k in KINDS if c[k]}

    def summary(self) -> str:
        """One line: files, records and strings read, findings (by kind) and allowed ones."""
        kinds = ", ".join(f"{k} {n}" for k, n in self.by_kind().items())
        found = f"{len(self.blocking)} finding{'s' if len(self.blocking) != 1 else ''}" + (f" ({kinds})" if kinds else "")
        return (f"{len(self.files)} file{'s' if len(self.files) != 1 else ''}, {self.records:,} records, "
                f"{self.strings:,} text fields: {found}, {len(self.allowed)} allowed")


def _key_path(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def iter_strings(obj: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """``(JSON path, string)`` for every string value in a parsed JSON value, in document order.

    Paths read like the project's error fields: ``turns[3].text``, ``threads[0].facts[1].value``.
    """
    if isinstance(obj, str):
        yield prefix or "(value)", obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from iter_strings(v, _key_path(prefix, str(k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from iter_strings(v, f"{prefix}[{i}]")


def iter_document_strings(text: str, path: str) -> Iterator[tuple[int, str, str]]:
    """``(line, JSON path, string)`` for every string value of a JSON document, with its line.

    A JSON document (a mid-reply case file, a manifest) spans many lines; naming the line of each
    string lets an editor jump to a finding. Raises :class:`InputError` for text that is not JSON.
    """
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, exc.lineno, None, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    ws = re.compile(r"[ \t\r\n]*")
    scalar = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")
    line_at = _LineCounter(text)

    def skip(pos: int) -> int:
        return ws.match(text, pos).end()  # type: ignore[union-attr]

    def value(pos: int, where: str, out: list[tuple[int, str, str]]) -> int:
        pos = skip(pos)
        ch = text[pos]
        if ch == '"':
            s, end = json.decoder.scanstring(text, pos + 1)
            out.append((line_at(pos), where or "(value)", s))
            return end
        if ch == "{":
            pos = skip(pos + 1)
            if text[pos] == "}":
                return pos + 1
            while True:
                key, pos = json.decoder.scanstring(text, skip(pos) + 1)
                pos = skip(pos) + 1  # the colon
                pos = skip(value(pos, _key_path(where, key), out))
                if text[pos] == "}":
                    return pos + 1
                pos += 1  # the comma
        if ch == "[":
            pos = skip(pos + 1)
            if text[pos] == "]":
                return pos + 1
            k = 0
            while True:
                pos = skip(value(pos, f"{where}[{k}]", out))
                k += 1
                if text[pos] == "]":
                    return pos + 1
                pos += 1
        m = scalar.match(text, pos)
        assert m is not None  # json.loads accepted the text
        return m.end()

    out: list[tuple[int, str, str]] = []
    value(0, "", out)
    yield from out


class _LineCounter:
    """Line numbers of increasing offsets in one text, without rescanning from the start."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.line = 1

    def __call__(self, pos: int) -> int:
        if pos < self.pos:
            self.pos, self.line = 0, 1
        self.line += self.text.count("\n", self.pos, pos)
        self.pos = pos
        return self.line


def expand_paths(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """The files to vet: files as given; a folder stands for the JSON and JSONL files under it.

    Hidden files and folders (a generator's work file, ``.git``, caches) are left out.
    """
    out: list[Path] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            found = sorted(
                q for q in p.rglob("*")
                if q.is_file() and q.suffix in VETTED_SUFFIXES
                and not any(part.startswith(".") for part in q.relative_to(p).parts)
            )
            out.extend(found)
        else:
            out.append(p)
    return out


def _vet_strings(report: VetReport, rules: list[AllowRule], path: str, items: Iterable[tuple[Optional[int], str, str]]) -> None:
    for line, where, s in items:
        report.strings += 1
        for m in scan_text(s):
            rule = next((r for r in rules if r.accepts(m.kind, m.text)), None)
            allowed = None
            if rule is not None:
                rule.used += 1
                allowed = f"{rule.path}:{rule.line} ({rule.reason})"
            report.findings.append(Finding(path, line, where, m.kind, mask(m.text), allowed))


def vet_file(path: Path, report: VetReport, rules: list[AllowRule]) -> None:
    """Vet one file into ``report``; raises :class:`InputError` when it cannot be read."""
    name = str(path)
    if path.suffix == ".jsonl":
        items: list[tuple[Optional[int], str, str]] = []
        for line, text in iter_json_lines(path):
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(name, line, None, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
            report.records += 1
            items.extend((line, where, s) for where, s in iter_strings(obj))
        _vet_strings(report, rules, name, items)
        return
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(name, None, None, "no such file or folder") from None
    except IsADirectoryError:
        raise InputError(name, None, None, "is a folder, not a file") from None
    except UnicodeDecodeError as exc:
        raise InputError(name, None, None, f"not UTF-8 text ({exc.reason})") from None
    if path.suffix != ".json":
        raise InputError(name, None, None, "not a JSON or JSONL file (vet reads .json and .jsonl)")
    report.records += 1
    _vet_strings(report, rules, name, iter_document_strings(text, name))


def vet_paths(
    paths: Iterable[str | os.PathLike],
    *,
    allowlist: Optional[str | os.PathLike] = None,
    progress_bar: Any = None,
) -> VetReport:
    """Vet every string of every file under ``paths``; returns the findings and what was read.

    ``allowlist`` names a ``vet-allow.txt`` (see :func:`read_allowlist`); an unreadable allowlist
    raises :class:`InputError`. A file that cannot be read (missing, not UTF-8, not JSON) is
    recorded in ``errors`` and the others are still vetted. ``progress_bar`` wraps the file list.
    """
    rules = read_allowlist(allowlist) if allowlist is not None else []
    report = VetReport()
    paths = list(paths)
    for p in paths:
        if Path(p).is_dir() and not expand_paths([p]):
            report.errors.append(InputError(str(p), None, None, f"no {' or '.join(VETTED_SUFFIXES)} files in this folder"))
    files = expand_paths(paths)
    for p in (progress_bar(files) if progress_bar else files):
        if not p.exists():
            report.errors.append(InputError(str(p), None, None, "no such file or folder"))
            continue
        try:
            vet_file(p, report, rules)
        except InputError as exc:
            report.errors.append(exc)
            continue
        report.files.append(str(p))
    report.unused_rules = [r for r in rules if r.used == 0]
    return report


def default_allowlist() -> Optional[Path]:
    """``vet-allow.txt`` in the current folder when there is one, else None."""
    p = Path(DEFAULT_ALLOWLIST)
    return p if p.is_file() else None
