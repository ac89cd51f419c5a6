"""The sessions a run routes: those of its split, read and checked against its mode."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from ..errors import UsageError
from ..io import read_sessions
from ..schema import Session, is_open_only


def select_sessions(data_file: Path, split: str, read: Optional[Sequence[Session]] = None) -> list[Session]:
    """The sessions of ``split`` in ``data_file`` (from ``read`` when the file was read already)."""
    def wanted(s: Session) -> bool:
        return split == "all" or s.split == split

    sessions = list(filter(wanted, read)) if read is not None else read_sessions(data_file, wanted)
    if not sessions:
        raise UsageError(f"{data_file}: no sessions in split {split!r}")
    return sessions


def check_mode_applies(data_file: Path, sessions: Sequence[Session], mode: str, open_option: str = "--mode open") -> None:
    """Raise :class:`UsageError` when ``mode`` is closed and a session is open-only (``open_only``);
    the message tells to use ``open_option``, open mode as the caller spells it (a harness's own)."""
    if mode == "closed":
        for s in sessions:
            if is_open_only(s):
                raise UsageError(f"{data_file}: session {s.session_id!r} is open-only (its conversations are not "
                                 f"known up front): closed mode does not apply, use {open_option}")
