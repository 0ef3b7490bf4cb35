"""Values derived from an immutable object, cached beside it rather than inside it.

Skeletons, clip tracks and the like are frozen dataclasses: nothing may be written into them
(not even into ``__dict__``, which would also travel with them through pickling to worker
processes). What is computed from one of them once — kernel arrays, joint layouts, the app's
bone sizes, a track's interpolation slopes — is kept here, keyed on the object's identity, and
dropped when the object is garbage collected.

Identity (not equality) is the key: the objects hold NumPy arrays, so they are not hashable,
and two equal skeletons built separately may as well compute their own values. The entry is
removed by a ``weakref.finalize`` that runs when the object dies, before its ``id`` can be
reused.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_STORE: dict[int, dict[str, Any]] = {}
_LOCK = threading.Lock()


def cache_of(obj: object) -> dict[str, Any]:
    """The cache dict of ``obj`` (created on first use; freed with ``obj``).

    Args:
        obj: any object that supports weak references (frozen dataclasses do).

    Returns:
        A dict private to ``obj``; callers choose their own keys (prefix them with the module).
    """
    key = id(obj)
    entry = _STORE.get(key)
    if entry is None:
        with _LOCK:
            entry = _STORE.get(key)
            if entry is None:
                entry = _STORE[key] = {}
                weakref.finalize(obj, _STORE.pop, key, None)
    return entry


def cached(obj: object, key: str, build: Callable[[], T]) -> T:
    """``build()`` computed once per ``obj`` and ``key``, then returned from the cache.

    Args:
        obj: the immutable object the value is derived from (e.g. a ``Skeleton``).
        key: the value's name, unique across modules (e.g. ``"kinematics.kernel_args"``).
        build: computes the value from ``obj`` (called at most once while ``obj`` lives, barring
            a race between threads, in which case both results are equal).

    Returns:
        The cached value.
    """
    entry = cache_of(obj)
    try:
        return entry[key]
    except KeyError:
        value = entry[key] = build()
        return value


__all__ = ["cache_of", "cached"]
