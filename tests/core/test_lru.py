"""The caches behind the rendered images, the metrics' prepared references and the Java batches (METEOR, PTB)."""

from __future__ import annotations

import threading

from annotator.lru import LRUCache


def test_a_weight_bound_drops_the_least_recently_used_first():
    cache = LRUCache(10, weight=len)
    cache.put("a", b"12345")
    cache.put("b", b"1234")
    assert cache.get("a") == b"12345"  # "a" is now the most recently used
    cache.put("c", b"123")
    assert cache.get("b") is None and cache.get("a") == b"12345" and cache.get("c") == b"123"
    cache.put("big", b"x" * 11)  # heavier than the whole bound: not kept, nothing else dropped for it
    assert cache.get("big") is None and cache.get("a") == b"12345"
    cache.put("a", b"1")  # a replaced value's weight is given back
    cache.put("d", b"123456")
    assert [cache.get(k) for k in ("a", "c", "d")] == [b"1", b"123", b"123456"]


def test_without_a_weight_the_bound_counts_entries():
    cache = LRUCache(2)
    cache.put(1, "x")
    cache.put(2, "y")
    cache.get(1)
    cache.put(3, "z")
    assert (cache.get(1), cache.get(2), cache.get(3)) == ("x", None, "z")
    cache.clear()
    assert cache.get(1) is None


def test_threads_never_leave_it_over_its_bound():
    cache = LRUCache(100, weight=len)

    def work(n: int) -> None:
        for i in range(2000):
            cache.put((n, i % 50), b"x" * (i % 7 + 1))
            cache.get((n, (i * 7) % 50))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache._size == sum(len(v) for v in cache._data.values()) <= 100


def test_batch_cache_names_what_is_missing_and_starts_afresh_past_its_limit():
    from annotator.lru import BatchCache
    cache = BatchCache(limit=3)
    assert cache.missing(["a", "b", "a"]) == ["a", "b"]
    assert cache.answers(["a", "b", "a"], {"a": 1, "b": 2}) == [1, 2, 1]
    assert cache.missing(["b", "c"]) == ["c"]
    assert cache.answers(["c", "b"], {"c": 3}) == [3, 2]
    # A fourth answer would pass the limit: the cache drops what it held and keeps the new batch.
    assert cache.answers(["d"], {"d": 4}) == [4]
    assert cache.missing(["a", "d"]) == ["a"]
    cache.clear()
    assert cache.missing(["d"]) == ["d"]
