"""Whether a cache file in the workspace is one this user's manifesto wrote.

``out/.cache`` lives in the workspace, and a repository can commit one: a clone then arrives
with a build manifest, a stat cache and a store that a stranger wrote. So every such file
carries a MAC (keyed BLAKE2b-128) under a key of this user's, kept outside every workspace:
``$XDG_STATE_HOME/llm-manifesto/cache-key`` (else ``~/.local/state/llm-manifesto/cache-key``),
32 random bytes made once with mode 0600. A file whose MAC does not verify was not written
under this key: it is a miss, never decoded, never followed, never a path. A cloned
``out/.cache`` therefore costs a cold build and nothing more.

When the key cannot be kept (no home folder, a read-only one, a key file that is not a
regular file of this user's), the process uses a key of its own, made at random: every
cache is then cold in each new process, and nothing is trusted that this process did not
write. The build's worker processes are given the parent's key (:func:`adopt`).
"""

from __future__ import annotations

import os

__all__ = ["KEY_BYTES", "MAC_BYTES", "key", "key_path", "mac", "verify", "adopt"]

KEY_BYTES = 32
MAC_BYTES = 16
_FILE = "cache-key"

_key: bytes | None = None


def key_path(environ=None) -> str | None:
    """Where the key lives (None when neither XDG_STATE_HOME nor a home folder is known)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):  # the XDG rule: a relative value is ignored
        home = env.get("HOME", "") or os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".local", "state")
    return os.path.join(base, "llm-manifesto", _FILE)


def key() -> bytes:
    """This user's cache key (read, or made once); a random one for this process when it
    cannot be kept."""
    global _key
    if _key is None:
        path = key_path()
        found = None
        if path is not None:
            try:
                found = _read(path)
                if found is None:
                    found = _make(path)
            except OSError:
                found = None
        _key = found if found is not None else os.urandom(KEY_BYTES)
    return _key


def adopt(value: bytes) -> None:
    """Use ``value`` as the key (a worker process given its parent's)."""
    global _key
    if type(value) is not bytes or len(value) != KEY_BYTES:
        raise ValueError("a cache key is 32 bytes")
    _key = value


def mac(data) -> bytes:
    """The MAC of ``data`` (bytes or a memoryview) under this user's key."""
    try:
        from _blake2 import blake2b  # builtin: hashlib would load OpenSSL on a no-op build
    except ImportError:  # pragma: no cover - other interpreters
        from hashlib import blake2b
    return blake2b(data, key=key(), digest_size=MAC_BYTES).digest()


def verify(data, tag) -> bool:
    """Whether ``tag`` is the MAC of ``data`` (compared in constant time)."""
    from _operator import _compare_digest as compare_digest  # hmac's, without importing hashlib

    return type(tag) is bytes and len(tag) == MAC_BYTES and compare_digest(mac(data), tag)


def _read(path: str) -> bytes | None:
    """The key at ``path``; None when absent or not a key of this user's (then it is made anew)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError:  # a link (ELOOP), a FIFO with no writer...: not a key; made anew beside it
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            return None
        data = os.read(fd, KEY_BYTES + 1)
        if len(data) != KEY_BYTES:
            return None
        if st.st_mode & 0o077:  # readable by others: whoever reads it can forge cache files
            return None
        return data
    finally:
        os.close(fd)


def _make(path: str) -> bytes:
    """A new key at ``path`` (made atomically; another process's key made meanwhile wins)."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    fresh = os.urandom(KEY_BYTES)
    tmp = os.path.join(folder, f".{_FILE}.{os.urandom(6).hex()}.tmp~")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            os.write(fd, fresh)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # never replaces a key another process made first
        except FileExistsError:
            theirs = _read(path)
            if theirs is not None:
                return theirs
            os.replace(tmp, path)  # the file there is not a key: this one takes its place
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    return fresh
