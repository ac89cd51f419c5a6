"""The checks across the fields of a session, written once, on arrays over a block of sessions.

:func:`session_arrays` takes sessions (records of :class:`~.schema.Session`, or the compiled
structs the scorer decodes: the same fields) and numbers their threads: each id, twin, gold
thread, gold reference, judge thread and judge candidate becomes a thread number in its session
(-1 where it names none). :func:`defects` holds every check as a mask over those arrays, so a
block is judged with a few array operations and no Python loop per turn:

- threads: an id twice in a session, a reserved id (``CLARIFY``, ``ERROR``, ``none``,
  ``ambiguous``, and what a model router reads as a new topic: ``new`` in any case, ``new:<n>``),
  a thread its own twin or the twin of no thread of the session;
- turns: numbered 0..n-1 in order (the first break of a session only), style ``oneoff`` with
  action ``oneoff`` and only with it, a gold thread for every action but ``oneoff`` and none for
  it, gold references, the judge's thread (or ``none``, ``ambiguous``) and candidates that name
  threads of the session.

:func:`~.schema.check_session` (``validate``, the readers, importers and publishers) names each
defect a session has (:func:`problems_of`); the scorer (:func:`~.score.datafile.columns_of`) only
asks whether a block has one, and then leaves naming it to the readers, which name every one.

:func:`doubts` holds, on the same arrays, what valid labels say against the rules they are written
by (``ambiguous`` against the independent reading, an action against where its message stands):
no defect, since data labelled elsewhere may go by rules of its own; ``validate`` warns of each
kind (:func:`doubts_named`).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain, compress, islice
from operator import attrgetter, eq
from typing import Any, Sequence

import numpy as np

from .schema import (ACTIONS, JUDGE_AMBIGUOUS, JUDGE_NONE, MIN_CANDIDATES, NEW_TOPIC, SPECIAL_LABELS, STYLES,
                     THREAD_MOVES, agreeing_judge, reads_as_new_topic)

#: judge codes beside thread numbers
J_NONE, J_AMBIGUOUS = -1, -2
#: what no thread id may be: these, and any id a model router reads as a new topic
#: (:func:`is_reserved`), which no answer could route to
RESERVED = (*SPECIAL_LABELS, JUDGE_NONE, JUDGE_AMBIGUOUS, NEW_TOPIC)
ONEOFF_ACTION = ACTIONS.index("oneoff")
ONEOFF_STYLE = STYLES.index("oneoff")
ACTION_CODE = {a: k for k, a in enumerate(ACTIONS)}
STYLE_CODE = {s: k for k, s in enumerate(STYLES)}

_THREADS, _TURNS = attrgetter("threads"), attrgetter("turns")
_ID, _TWIN = attrgetter("id"), attrgetter("twinOf")
_I, _GOLD, _STYLE, _JUDGE = (attrgetter(a) for a in ("i", "gold", "style", "judge"))
_THREAD, _THREAD_ACTION, _REFS, _CANDIDATES = (attrgetter(a) for a in ("thread", "action", "refs", "candidates"))
_AMBIGUOUS = attrgetter("ambiguous")
#: each action's move (:data:`~.schema.THREAD_MOVES`) as a code, by action code (-1 for ``oneoff``)
MOVES = tuple(dict.fromkeys(THREAD_MOVES.values()))
MOVE_CODE = np.array([MOVES.index(THREAD_MOVES[a]) if a in THREAD_MOVES else -1 for a in ACTIONS], dtype=np.int8)
OPENS, STAYS, MOVES_ON = (MOVES.index(m) for m in ("new", "continue", "move"))


class Vocab:
    """One dictionary of strings for a block: strings -> int codes (thread ids, labels, tags...)."""

    def __init__(self) -> None:
        self.code: dict[str, int] = {}

    def encode_words(self, words: list[str | None], nulls: bool = False) -> np.ndarray:
        """Codes of a list of strings (``None`` -> -1 when ``nulls``), new ones numbered in order
        of first use."""
        code = self.code
        lookup = {**code, None: -1} if nulls else code
        try:  # most often every word is known already: one pass
            return np.fromiter(map(lookup.__getitem__, words), dtype=np.int64, count=len(words))
        except KeyError:
            pass
        new = set(words).difference(code)
        new.discard(None)  # type: ignore[arg-type]
        for w in sorted(new, key=words.index):  # in order of first use
            code[w] = len(code)
        lookup = {**code, None: -1} if nulls else code
        return np.fromiter(map(lookup.__getitem__, words), dtype=np.int64, count=len(words))

    def encode(self, col) -> np.ndarray:
        """Codes of a pyarrow string column (nulls -> -1)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if col is None or len(col) == 0:
            return np.zeros(0, dtype=np.int64)
        enc = pc.dictionary_encode(col)
        if isinstance(enc, pa.ChunkedArray):
            enc = enc.combine_chunks()
        local = enc.dictionary.to_pylist()
        table = np.array([self.code.setdefault(w, len(self.code)) for w in local] + [-1], dtype=np.int64)
        idx = enc.indices.fill_null(len(local)).to_numpy(zero_copy_only=False).astype(np.int64)
        return table[idx]

    def words(self) -> list[str]:
        """Every string seen, by code."""
        return list(self.code)


def offsets(lengths: list[int] | np.ndarray) -> np.ndarray:
    """The start of each part and the end of the last, from the parts' lengths."""
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def thread_numbers(keys: np.ndarray, numbers: np.ndarray, width: int, sess: np.ndarray,
                   codes: np.ndarray) -> np.ndarray:
    """Each (session, vocab code)'s thread number in its session, -1 where it names none, given
    the block's thread keys (``session * width + code``, ascending) and each one's number."""
    ok = (codes >= 0) & (codes < width)
    if not len(keys):
        return np.full(len(codes), -1, dtype=np.int64)
    wanted = sess * width + np.where(ok, codes, 0)
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return np.where(ok & (keys[at] == wanted), numbers[at], -1)


def _exploded(lists: list[Any]) -> tuple[np.ndarray, list[str]]:
    """For lists (``None`` or empty for none) of strings, one per turn: the turn of each string
    (ascending) and the strings in order."""
    owners = list(compress(range(len(lists)), lists))
    return np.repeat(np.array(owners, dtype=np.int64), [len(lists[k]) for k in owners]), [w for k in owners for w in lists[k]]


@dataclass
class SessionArrays:
    """A block of sessions with every thread reference numbered (see the module's text). Thread
    arrays run over every thread of every session, turn arrays over every turn, the reference
    arrays over every gold reference and judge candidate."""

    sessions: Sequence[Any]
    vocab: Vocab
    id_words: int  # the codes below this are the thread ids' (coded first)
    width: int  # codes at or above this are no thread id
    thread_start: np.ndarray  # (sessions + 1) offsets into the thread arrays
    thread_session: np.ndarray
    thread_code: np.ndarray  # vocab code of each thread's id
    thread_key: np.ndarray  # session * width + code of every thread, ascending (stable)
    thread_pos: np.ndarray  # the thread number of each, in that order
    key_order: np.ndarray  # each thread_key entry's place in the thread arrays
    twin: np.ndarray  # code of each thread's twinOf, -1 for none
    turn_start: np.ndarray  # (sessions + 1) offsets into the turn arrays
    turn_session: np.ndarray
    turns: list[Any]
    golds: list[Any]
    judges: list[Any]
    i: np.ndarray
    action: np.ndarray  # index into ACTIONS
    style: np.ndarray  # index into STYLES
    gold_code: np.ndarray  # -1 for a null gold thread
    gold: np.ndarray  # thread number, -1 for none
    judge: np.ndarray  # thread number, J_NONE, J_AMBIGUOUS, or below J_AMBIGUOUS for no thread
    ref_turn: np.ndarray  # gold refs, exploded: turn (ascending), thread number
    ref_thread: np.ndarray
    cand_turn: np.ndarray  # judge candidates, exploded likewise
    cand_thread: np.ndarray

    def number(self, sess: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Each (session, vocab code)'s thread number in its session, -1 where it names none."""
        return thread_numbers(self.thread_key, self.thread_pos, self.width, sess, codes)


#: a judge thread that names no thread, nor ``none`` or ``ambiguous``
_J_UNKNOWN = -3


def session_arrays(sessions: Sequence[Any]) -> SessionArrays:
    """The :class:`SessionArrays` of ``sessions`` (records or compiled structs), their words coded
    in a vocabulary of their own: thread ids first, then twins, gold threads, judge threads, judge
    candidates and gold references, each new word in order of first use."""
    vocab = Vocab()
    thread_lists = list(map(_THREADS, sessions))
    threads = list(chain.from_iterable(thread_lists))
    thread_code = vocab.encode_words(list(map(_ID, threads)))
    id_words = len(vocab.code)
    width = max(id_words, 1) + 8
    thread_start = offsets(list(map(len, thread_lists)))
    th_sess = np.repeat(np.arange(len(sessions)), np.diff(thread_start))
    thread_key = th_sess * width + thread_code
    thread_pos = np.arange(len(threads)) - thread_start[th_sess]
    order = np.argsort(thread_key, kind="stable")
    twins = list(map(_TWIN, threads))
    twin = vocab.encode_words(twins, nulls=True) if twins.count(None) != len(twins) else np.full(len(threads), -1)

    turn_lists = list(map(_TURNS, sessions))
    turn_start = offsets(list(map(len, turn_lists)))
    turns = list(chain.from_iterable(turn_lists))
    tu_sess = np.repeat(np.arange(len(sessions)), np.diff(turn_start))
    golds, judges = list(map(_GOLD, turns)), list(map(_JUDGE, turns))
    out = SessionArrays(
        sessions=sessions, vocab=vocab, id_words=id_words, width=width, thread_start=thread_start, thread_session=th_sess,
        thread_code=thread_code, thread_key=thread_key[order], thread_pos=thread_pos[order], key_order=order,
        twin=twin, turn_start=turn_start, turn_session=tu_sess, turns=turns, golds=golds, judges=judges,
        i=np.fromiter(map(_I, turns), dtype=np.int64, count=len(turns)),
        action=np.fromiter(map(ACTION_CODE.__getitem__, map(_THREAD_ACTION, golds)), dtype=np.int8, count=len(turns)),
        style=np.fromiter(map(STYLE_CODE.__getitem__, map(_STYLE, turns)), dtype=np.int8, count=len(turns)),
        gold_code=vocab.encode_words(list(map(_THREAD, golds)), nulls=True),
        gold=np.zeros(0, dtype=np.int64), judge=np.zeros(0, dtype=np.int64),
        ref_turn=np.zeros(0, dtype=np.int64), ref_thread=np.zeros(0, dtype=np.int64),
        cand_turn=np.zeros(0, dtype=np.int64), cand_thread=np.zeros(0, dtype=np.int64),
    )
    out.gold = out.number(tu_sess, out.gold_code)
    j_codes = vocab.encode_words(list(map(_THREAD, judges)))
    judge = out.number(tu_sess, j_codes)
    judge[judge < 0] = _J_UNKNOWN
    for word, code in ((JUDGE_NONE, J_NONE), (JUDGE_AMBIGUOUS, J_AMBIGUOUS)):
        if word in vocab.code:
            judge[j_codes == vocab.code[word]] = code
    out.judge = judge
    cand_turn, cands = _exploded(list(map(_CANDIDATES, judges)))
    if cands:
        out.cand_turn, out.cand_thread = cand_turn, out.number(tu_sess[cand_turn], vocab.encode_words(cands))
    ref_turn, refs = _exploded(list(map(_REFS, golds)))
    if refs:
        out.ref_turn, out.ref_thread = ref_turn, out.number(tu_sess[ref_turn], vocab.encode_words(refs))
    return out


@dataclass
class Defects:
    """Every check of the module's text as a mask over :class:`SessionArrays` (thread, turn or
    reference arrays)."""

    repeated_id: np.ndarray  # threads: an id an earlier thread of the session has
    reserved_id: np.ndarray
    own_twin: np.ndarray
    unknown_twin: np.ndarray
    numbering: np.ndarray  # turns: the first turn of its session out of 0..n-1
    style: np.ndarray
    oneoff_thread: np.ndarray  # a one-off naming a thread
    null_thread: np.ndarray  # another action naming none
    unknown_gold: np.ndarray
    unknown_judge: np.ndarray
    unknown_ref: np.ndarray  # gold refs
    unknown_cand: np.ndarray  # judge candidates

    def any(self) -> bool:
        return any(bool(mask.any()) for mask in vars(self).values())


def defects(a: SessionArrays) -> Defects:
    """The :class:`Defects` of a block."""
    n = len(a.thread_code)
    none = np.zeros(n, dtype=bool)
    repeated = none.copy()
    repeated[a.key_order[1:][a.thread_key[1:] == a.thread_key[:-1]]] = True  # (stable: the later one)
    reserved = [code for w, code in islice(a.vocab.code.items(), a.id_words) if is_reserved(w)]  # the ids coded first
    has_twin = a.twin >= 0
    own = has_twin & (a.twin == a.thread_code)
    local = np.arange(len(a.i)) - a.turn_start[a.turn_session]
    off = np.flatnonzero(a.i != local)
    numbering = np.zeros(len(a.i), dtype=bool)
    if len(off):
        numbering[off[np.unique(a.turn_session[off], return_index=True)[1]]] = True
    oneoff = a.action == ONEOFF_ACTION
    named = a.gold_code >= 0
    return Defects(
        repeated_id=repeated,
        reserved_id=np.isin(a.thread_code, reserved) if reserved else none,
        own_twin=own,
        unknown_twin=has_twin & ~own & (a.number(a.thread_session, a.twin) < 0) if has_twin.any() else none,
        numbering=numbering,
        style=oneoff != (a.style == ONEOFF_STYLE),
        oneoff_thread=oneoff & named,
        null_thread=~(oneoff | named),
        unknown_gold=~oneoff & named & (a.gold < 0),
        unknown_judge=a.judge == _J_UNKNOWN,
        unknown_ref=a.ref_thread < 0,
        unknown_cand=a.cand_thread < 0,
    )


def problems_of(a: SessionArrays, d: Defects) -> list[list[tuple[str, str]]]:
    """Per session, ``(field, message)`` for each of its defects: its threads' in order, then its
    turns' in order (numbering, style, gold thread, gold references, judge thread, candidates)."""
    if not d.any():
        return [[] for _ in a.sessions]
    threads = list(chain.from_iterable(map(_THREADS, a.sessions)))
    found: list[tuple[int, int, int, float, str, str]] = []  # session, part, place in it, check, field, message

    def thread(k: int) -> tuple[int, str]:
        s = int(a.thread_session[k])
        return s, f"threads[{k - int(a.thread_start[s])}]"

    def turn(k: int) -> tuple[int, str]:
        s = int(a.turn_session[k])
        return s, f"turns[{k - int(a.turn_start[s])}]"

    def add(mask: np.ndarray, part: int, check: float, field: str, message: Any, owner: Any = None) -> None:
        """Each masked entry's defect: ``field`` after its thread's or turn's place, ``message(k)``;
        for a reference, ``owner(k)`` is ``(turn, place in its list)``."""
        for k in np.flatnonzero(mask).tolist():
            at, place = (k, None) if owner is None else owner(k)
            s, name = (thread if part == 0 else turn)(at)
            start = int((a.thread_start if part == 0 else a.turn_start)[s])
            order = check if place is None else check + place / (1 + place)
            found.append((s, part, at - start, order, name + (field if place is None else f"{field}[{place}]"),
                          message(at) if place is None else message(at, place)))

    gold, judge = a.golds, a.judges
    add(d.repeated_id, 0, 0, ".id", lambda k: f"duplicate thread id {threads[k].id!r}")
    add(d.reserved_id, 0, 1, ".id", lambda k: reserved_problem(threads[k].id))
    add(d.own_twin, 0, 2, ".twinOf", lambda k: "a thread cannot be its own twin")
    add(d.unknown_twin, 0, 2, ".twinOf", lambda k: f"{threads[k].twinOf!r} is not a thread of this session")
    add(d.numbering, 1, 0, ".i", lambda k: f"expected {k - int(a.turn_start[a.turn_session[k]])} (turns run 0..n-1 "
                                           f"in order), got {a.turns[k].i}")
    add(d.style, 1, 1, ".style", lambda k: f"style 'oneoff' goes with action 'oneoff' and only with it, got style "
                                           f"{a.turns[k].style!r} with action {gold[k].action!r}")
    add(d.oneoff_thread, 1, 2, ".gold.thread", lambda k: f"a one-off has no thread, got {gold[k].thread!r}")
    add(d.null_thread, 1, 2, ".gold.thread", lambda k: f"null is only allowed for action 'oneoff', not {gold[k].action!r}")
    add(d.unknown_gold, 1, 2, ".gold.thread", lambda k: f"{gold[k].thread!r} is not a thread of this session")
    add(d.unknown_ref, 1, 3, ".gold.refs", lambda k, r: f"{gold[k].refs[r]!r} is not a thread of this session",
        lambda r: _owner(a.ref_turn, r))
    add(d.unknown_judge, 1, 4, ".judge.thread",
        lambda k: f"{judge[k].thread!r} is not a thread of this session, 'none' or 'ambiguous'")
    add(d.unknown_cand, 1, 5, ".judge.candidates", lambda k, c: f"{judge[k].candidates[c]!r} is not a thread of this session",
        lambda c: _owner(a.cand_turn, c))
    out: list[list[tuple[str, str]]] = [[] for _ in a.sessions]
    for s, _, _, _, field, message in sorted(found, key=lambda f: f[:4]):
        out[s].append((field, message))
    return out


@dataclass
class Doubts:
    """What a block's labels say against the rules they are written by (:func:`doubts`), as masks
    over the turns: no error, since data labelled elsewhere may follow rules of its own, but each
    changes figures (``ambiguous`` decides which messages are strict; the action, the breakdown by
    action). ``validate`` warns of each kind; the project's generators and importers give none."""

    ambiguous_agreeing: np.ndarray  # ambiguous, yet judge.thread is the gold one (schema.agreeing_judge)
    disputed_unmarked: np.ndarray  # not ambiguous, yet judge.thread is another
    first_not_new: np.ndarray  # a thread's first message whose action is not new
    new_not_first: np.ndarray  # new on a later message of its thread
    continue_moving: np.ndarray  # continue on another thread than the thread message before
    move_staying: np.ndarray  # switch or return on the thread of the thread message before
    few_candidates: np.ndarray  # judge.thread ambiguous with fewer than MIN_CANDIDATES distinct candidates
    first_turn: np.ndarray  # each turn's thread's first message, its place in the session (-1: a one-off)
    previous: np.ndarray  # the thread number of each turn's thread message before it (-1: none)

    def kinds(self) -> dict[str, np.ndarray]:
        """Each kind's mask, in the order ``validate`` reports them."""
        return {k: v for k, v in vars(self).items() if k not in ("first_turn", "previous")}


def doubts(a: SessionArrays) -> Doubts:
    """The :class:`Doubts` of a block of valid sessions (:func:`defects` finds none). ``ambiguous``
    should be true exactly where ``judge.thread`` is not what agrees with the gold label
    (:func:`~.schema.agreeing_judge`). Each thread message's action should make the move where it
    stands (:data:`~.schema.THREAD_MOVES`), read from the gold threads of the messages before it,
    one-offs passed over: ``new`` on a thread's first message and only there, ``continue`` on the
    thread of the thread message before, ``switch`` or ``return`` on another (which of the two, the
    length of the gap decides by a rule of the writer's, not checked here)."""
    n = len(a.i)
    agrees = np.fromiter(map(eq, map(_THREAD, a.judges), map(agreeing_judge, map(_THREAD, a.golds))), dtype=bool, count=n)
    ambiguous = np.fromiter(map(_AMBIGUOUS, a.turns), dtype=bool, count=n)
    at = np.flatnonzero(a.gold >= 0)  # the thread messages, in order
    sess, gold = a.turn_session[at], a.gold[at]
    _, first_of, thread_of = np.unique(sess * a.width + gold, return_index=True, return_inverse=True)
    first = np.zeros(len(at), dtype=bool)
    first[first_of] = True
    previous = np.concatenate(([-1], gold[:-1]))
    previous[np.concatenate(([True], sess[1:] != sess[:-1]))] = -1
    same = previous == gold
    move = MOVE_CODE[a.action[at]]

    def turns(mask: np.ndarray) -> np.ndarray:
        out = np.zeros(n, dtype=bool)
        out[at[mask]] = True
        return out

    first_turn = np.full(n, -1, dtype=np.int64)
    first_turn[at] = at[first_of[thread_of.reshape(-1)]] - a.turn_start[sess]
    before = np.full(n, -1, dtype=np.int64)
    before[at] = previous
    return Doubts(
        ambiguous_agreeing=ambiguous & agrees,
        disputed_unmarked=~ambiguous & ~agrees,
        first_not_new=turns(first & (move != OPENS)),
        new_not_first=turns(~first & (move == OPENS)),
        continue_moving=turns(~first & (move == STAYS) & ~same),
        move_staying=turns(~first & (move == MOVES_ON) & same),
        few_candidates=np.fromiter((j.thread == JUDGE_AMBIGUOUS and len(set(j.candidates or ())) < MIN_CANDIDATES
                                    for j in a.judges), dtype=bool, count=n),
        first_turn=first_turn,
        previous=before,
    )


def doubts_named(a: SessionArrays, d: Doubts) -> list[tuple[str, int, int, str, str]]:
    """For each kind of :class:`Doubts` the block has, in order: ``(kind, turns of that kind, session
    of the first, field, message)``, the first named as :func:`problems_of` names a defect."""
    threads = list(chain.from_iterable(map(_THREADS, a.sessions)))

    def thread_id(k: int, number: int) -> str:
        return threads[int(a.thread_start[a.turn_session[k]]) + number].id

    def ambiguity(k: int, marked: bool) -> str:
        gold, judge = a.golds[k].thread, a.judges[k].thread
        if gold is None:
            said = f"judge.thread {'is' if marked else f'{judge!r} is not'} {JUDGE_NONE!r}, as for a one-off"
        else:
            said = f"judge.thread {'equals' if marked else f'{judge!r} differs from'} gold.thread ({gold!r})"
        return f"{str(marked).lower()}, but {said}; ambiguous is true exactly where they differ"

    def action(k: int) -> str:
        return repr(a.golds[k].action)

    messages = {
        "ambiguous_agreeing": (".ambiguous", lambda k: ambiguity(k, True)),
        "disputed_unmarked": (".ambiguous", lambda k: ambiguity(k, False)),
        "first_not_new": (".gold.action", lambda k: f"{action(k)} on the first message of thread "
                                                    f"{a.golds[k].thread!r}: a thread's first message is 'new'"),
        "new_not_first": (".gold.action", lambda k: f"'new' on thread {a.golds[k].thread!r}, which began at turn "
                                                    f"{int(d.first_turn[k])}: only a thread's first message is 'new'"),
        "continue_moving": (".gold.action", lambda k: f"'continue' on thread {a.golds[k].thread!r} after a message of "
                                                      f"{thread_id(k, int(d.previous[k]))!r} (one-offs passed over): "
                                                      "a move to another thread is 'switch' or 'return'"),
        "move_staying": (".gold.action", lambda k: f"{action(k)} on thread {a.golds[k].thread!r} right after a message "
                                                   "of it (one-offs passed over): staying on a thread is 'continue'"),
        "few_candidates": (".judge.candidates", lambda k: f"{len(set(a.judges[k].candidates or ()))} distinct thread "
                                                          f"id(s) beside judge.thread {JUDGE_AMBIGUOUS!r}: an ambiguous "
                                                          f"reading names the {MIN_CANDIDATES} or more threads it could be"),
    }
    out = []
    for kind, mask in d.kinds().items():
        found = np.flatnonzero(mask)
        if len(found):
            k = int(found[0])
            s = int(a.turn_session[k])
            field, message = messages[kind]
            out.append((kind, len(found), s, f"turns[{k - int(a.turn_start[s])}]{field}", message(k)))
    return out


def is_reserved(thread_id: str) -> bool:
    """Whether no thread may have ``thread_id``: a word of :data:`RESERVED`, or one a model
    router's answer reads as a new topic (``New``, ``new:2``: :func:`~.schema.reads_as_new_topic`)."""
    return thread_id in RESERVED or reads_as_new_topic(thread_id)


def reserved_problem(thread_id: str) -> str:
    """What is wrong with a reserved thread id, in the words :func:`problems_of` uses."""
    why = f" (a model router reads an answer {thread_id!r} as a new topic)" if reads_as_new_topic(thread_id) else ""
    return f"{thread_id!r} is reserved and cannot be a thread id{why}"


def _owner(turn: np.ndarray, k: int) -> tuple[int, int]:
    """The turn of an exploded list's entry ``k`` and its place in that turn's list."""
    return int(turn[k]), k - int(np.searchsorted(turn, turn[k]))
