"""The ``local`` router's topic profiles: what the cache keeps between messages."""

from __future__ import annotations

from interleave_bench.route import local_profile
from interleave_bench.route.base import Message, RouterView, TopicView
from interleave_bench.route.local_profile import ProfileCache


def _view(session: str, labels: list[str]) -> RouterView:
    topics = tuple(TopicView(lab, lab, None, (Message(0, f"{lab} words here"),)) for lab in labels)
    return RouterView(session, "en", "open", (), topics, (), None, (Message(1, "next"),))  # type: ignore[arg-type]


def test_a_full_cache_drops_other_sessions_before_the_one_being_routed(monkeypatch):
    monkeypatch.setattr(local_profile, "PROFILE_CACHE_MAX", 3)
    cache = ProfileCache()
    a = _view("a", ["t1", "t2"])
    kept = [cache.get(a, t) for t in a.topics]
    b = _view("b", ["t1"])
    cache.get(b, b.topics[0])  # the cache is full now: 3 profiles
    # a new profile of session a: b's go, a's own stay the very objects they were
    a2 = _view("a", ["t1", "t2", "t3"])
    fresh = cache.get(a2, a2.topics[2])
    assert all(cache.get(a2, t) is p for t, p in zip(a2.topics, kept))
    assert fresh.tf == {"t3": 1, "words": 1, "here": 1}
    assert sorted(k[0] for k in cache._store) == ["a", "a", "a"]
    # a session alone over the limit starts over, as before
    a3 = _view("a", ["t1", "t2", "t3", "t4"])
    cache.get(a3, a3.topics[3])
    assert len(cache._store) == 1
