"""Atomic file writes: a reader (or a crash) never sees a half-written file.

Why: checkpoints, progress files and rendered content are written while a learner may press
Ctrl-C. We write to a temporary file in the same directory, flush it to disk, then
``os.replace`` it over the target, which is atomic on POSIX and Windows.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, creating parent folders. Returns the path."""
    path = Path(path)
    make_parent(path)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # name the file the caller asked for, not our temporary name
        exc.filename = str(path)
        raise
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates files readable by the owner only; give the usual 0666 & ~umask.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp_name, 0o666 & ~umask)
        os.replace(tmp_name, path)
        fsync_dir(path.parent)  # the rename itself must survive a power cut too
    except BaseException as exc:
        # Leave no temporary file behind, even on KeyboardInterrupt.
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(path)  # "File too large" alone does not say which file
        raise
    return path


def make_parent(path: Path) -> None:
    """Create the folders above ``path``; a file standing where a folder should be is a
    NotADirectoryError that names it (``mkdir`` alone reports "it already exists")."""
    for ancestor in reversed(path.parents):
        if ancestor.exists() and not ancestor.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, f"{ancestor} is a file, not a folder, so "
                                     f"{path} cannot be written there")
    path.parent.mkdir(parents=True, exist_ok=True)


def require_writable(path: str | os.PathLike, what: str = "output") -> Path:
    """Check, before long work, that ``path`` can be written later: not a folder, its folder
    made if missing and writable. An OSError naming the path otherwise (a measurement that
    runs for ten minutes should not fail at its last line)."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, f"{what} {path} is a folder; give a file name")
    make_parent(path)
    if not os.access(path.parent, os.W_OK):
        raise PermissionError(errno.EACCES, f"{what} {path}: the folder {path.parent} is not "
                              "writable")
    return path


def atomic_write_files(contents: dict[Path, bytes]) -> list[Path]:
    """Write several files as one unit, as far as a file system allows.

    Every file is first written in full to a temporary name beside its target (a full disk or
    a permission error fails here, before any target changes, and the temporaries are
    removed); only then are all renamed into place, which does not need disk space.
    """
    staged: list[tuple[str, Path]] = []
    created: list[Path] = []  # folders made here, removed again if the write fails
    try:
        for path, data in contents.items():
            path = Path(path)
            for folder in reversed(path.parents):
                if not folder.exists():
                    folder.mkdir()
                    created.append(folder)
            fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                                            dir=path.parent)
            staged.append((tmp_name, path))
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp_name, 0o666 & ~umask)
    except BaseException as exc:
        for tmp_name, _ in staged:
            try:
                os.unlink(tmp_name)
            except FileNotFoundError:
                pass
        for folder in reversed(created):
            try:
                folder.rmdir()
            except OSError:
                pass
        if isinstance(exc, OSError) and exc.filename is None and staged:
            exc.filename = str(staged[-1][1])
        raise
    for tmp_name, path in staged:
        os.replace(tmp_name, path)
        fsync_dir(path.parent)
    return [path for _, path in staged]


def atomic_write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (UTF-8 by default)."""
    return atomic_write_bytes(path, text.encode(encoding))


def atomic_write_json(path: str | os.PathLike, obj: Any, indent: int | None = 2) -> Path:
    """Serialise ``obj`` as JSON and write it atomically."""
    return atomic_write_text(path, json.dumps(obj, indent=indent, ensure_ascii=False) + "\n")


def fsync_dir(path: str | os.PathLike) -> None:
    """Flush a directory's entries (a rename into it) to disk; a no-op where unsupported."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def require_file(path: str | os.PathLike, what: str = "file") -> Path:
    """``path`` as a Path if it is a readable regular file; else an OSError that says what it
    is instead (missing, a directory, a symbolic-link loop, a device...), naming the path.

    The error also carries ``what`` and ``path`` as attributes, for the command line to say
    it in the reader's language (``commands/_exit.py``); its text is the English sentence."""
    import stat

    path = Path(path)
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        error = type(exc)(exc.errno, f"{what} {path}: {_PLAIN.get(exc.errno or -1, exc.strerror)}")
    else:
        if stat.S_ISREG(mode):
            return path
        error = IsADirectoryError(errno.EISDIR, f"{what} {path} is a directory, not a file") \
            if stat.S_ISDIR(mode) else \
            OSError(errno.EINVAL, f"{what} {path} is not a regular file (a device, pipe or socket?)")
    error.what, error.path = what, path
    raise error from None


# errno -> what it means, in plain words (the [Errno N] text is for programmers).
_PLAIN = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EFBIG: "the file would exceed the file-size limit",
    errno.EACCES: "permission denied",
    errno.EPERM: "the operation is not permitted",
    errno.EROFS: "the file system is read-only",
    errno.ENOENT: "no such file or directory",
    errno.EISDIR: "it is a directory, not a file",
    errno.ENOTDIR: "a part of the path is a file, not a directory",
    errno.ELOOP: "it is a symbolic link loop",
    errno.EEXIST: "it already exists",
    errno.ENOTEMPTY: "the directory is not empty",
    errno.ENAMETOOLONG: "the name is too long",
    errno.EIO: "an input/output error occurred (a failing disk?)",
    errno.EMFILE: "too many files are open",
    errno.ENOMEM: "the system is out of memory",
}


def plain_reason(exc: OSError) -> str:
    """What went wrong, in plain words, without a path ("the disk is full")."""
    return _PLAIN.get(exc.errno or -1, exc.strerror or str(exc))


def error_paths(exc: OSError) -> str | None:
    """The path(s) of a file error as one text ("a -> b" for a rename), None when it has none."""
    paths = [os.fsdecode(p) for p in (exc.filename, getattr(exc, "filename2", None))
             if p is not None]
    return " -> ".join(paths) if paths else None


def describe_os_error(exc: OSError) -> str:
    """One sentence for a file error: the path(s) and what went wrong, in plain words."""
    paths = error_paths(exc)
    if paths is None:  # our own messages (require_file) carry the path in strerror already
        return exc.strerror or _PLAIN.get(exc.errno or -1, str(exc))
    return f"{paths}: {plain_reason(exc)}"
