"""The shared-facts system protocol: what any memory system implements to be measured.

A system is a class loaded with ``--system module:Class``. The run makes one instance per session,
``Class(context)``, and calls, in turn order:

- ``await observe(exchange)`` after every finished exchange of a topic (user message + reply);
- ``await candidates(request)`` before a request is routed: facts of *other* topics the request
  may need (offered to the router, which may name some to import);
- ``await deliver(topic, request, imported)`` when ``topic`` is about to answer ``request``:
  structured :class:`FactLine` items (``source`` topic, ``key``, ``value``, ``notice``); a line
  with no value is a withdrawal notice.

Delivery verdicts are computed from these structured lines, never from prose. ``briefing(lines)``
(optional) renders them as the text an assistant would receive; :func:`briefing` is the default.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol, Sequence, runtime_checkable

from ..errors import UsageError


@dataclass(frozen=True)
class Topic:
    id: str
    title: str


@dataclass(frozen=True)
class SystemContext:
    """What a system gets once per session: the model client (None when the run has none), the
    session's id and language, and its topics."""

    llm: Any
    session_id: str
    lang: str
    topics: tuple[Topic, ...]


@dataclass(frozen=True)
class Exchange:
    """A finished exchange of ``topic`` at ``turn``: the user's message and the assistant's reply."""

    topic: str
    turn: int
    user: str
    assistant: str


@dataclass(frozen=True)
class Request:
    """A message about to be routed or answered: its text, the recent messages before it (oldest
    first), the topic the chat was in (None at the start) and the turn it follows."""

    text: str
    turn: int
    current: Optional[str] = None
    recent: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class FactLine:
    """One delivered or offered fact: ``value`` None is a withdrawal notice; ``notice`` says a value
    delivered earlier changed or was withdrawn."""

    source: str
    key: str
    value: Optional[str]
    notice: Optional[str] = None


@runtime_checkable
class SharedFactsSystem(Protocol):
    name: str

    async def observe(self, exchange: Exchange) -> None: ...

    async def candidates(self, request: Request) -> list[FactLine]: ...

    async def deliver(self, topic: str, request: Request, imported: Sequence[FactLine]) -> list[FactLine]: ...


def briefing(lines: Sequence[FactLine], titles: dict[str, str]) -> str:
    """The notes an assistant receives: one line per fact, ``- "<source title>" <key>: <value>``,
    a withdrawal as ``... : withdrawn (not settled any more)``, a notice in brackets. Empty for none."""
    out = []
    for ln in lines:
        src = titles.get(ln.source, ln.source)
        value = ln.value if ln.value is not None else "withdrawn (not settled any more)"
        note = f" [{ln.notice}]" if ln.notice else ""
        out.append(f'- "{src}" {ln.key}: {value}{note}')
    return ("Facts from other topics:\n" + "\n".join(out)) if out else ""


def load_system(spec: str) -> type:
    """The system class named ``module:Class`` (``reference`` is the project's own); raises
    :class:`UsageError` with what went wrong."""
    if spec == "reference":
        from .reference import ReferenceSystem

        return ReferenceSystem
    mod, sep, cls = spec.partition(":")
    if not sep or not mod or not cls:
        raise UsageError(f"--system {spec!r}: expected 'reference' or 'module:Class'")
    try:
        module = importlib.import_module(mod)
    except ImportError as exc:
        raise UsageError(f"--system {spec!r}: cannot import {mod!r}: {exc}") from None
    found = getattr(module, cls, None)
    if not isinstance(found, type):
        raise UsageError(f"--system {spec!r}: {mod!r} has no class {cls!r}")
    for method in ("observe", "candidates", "deliver"):
        if not callable(getattr(found, method, None)):
            raise UsageError(f"--system {spec!r}: {cls} has no {method}() (see docs/facts.md#the-protocol)")
    return found


def system_name(spec: str, cls: type) -> str:
    """The name a system's results carry: its ``name`` attribute, else the class name."""
    return "reference" if spec == "reference" else str(getattr(cls, "name", None) or cls.__name__)
