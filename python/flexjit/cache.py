"""The disk kernel cache that engines share (docs/cache.md): where it is, what is in it, emptying it."""

from . import _flexjit


def directory():
    """$FLEXJIT_CACHE_DIR, else $XDG_CACHE_HOME/flexjit, else ~/.cache/flexjit ("" without a home)."""
    return _flexjit.default_cache_directory()


def list(path=None):
    """[(key, bytes, modified seconds since the epoch)] of the kernel files, sorted by key."""
    return _flexjit.cache_list(path)


def stats(path=None):
    return _flexjit.cache_stats(path)


def clear(path=None):
    """Removes the kernel files (and nothing else); returns how many went."""
    return _flexjit.cache_clear(path)
