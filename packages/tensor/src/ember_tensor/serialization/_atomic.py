"""Writing a checkpoint to a path atomically: readers see the old file or the whole new one.

On Linux the bytes go into an unnamed file (``O_TMPFILE``) in the target's directory,
which is fsynced and then linked into place: a save killed mid-write leaves nothing on
disk, because the kernel frees an unnamed file when its last descriptor closes. Elsewhere
(or on a filesystem without ``O_TMPFILE``) a named temporary ``.ember-save-<pid>-*.tmp``
is written and renamed; temporaries whose process is gone are removed at the next save
into that directory.
"""
import contextlib
import errno
import glob
import os
import tempfile

__all__ = ["atomic_write", "TEMP_PREFIX"]

TEMP_PREFIX = ".ember-save-"


def _fsync_directory(directory):
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems cannot fsync a directory; the rename is still atomic
    finally:
        os.close(fd)


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temporaries(directory):
    """Delete ``.ember-save-<pid>-*.tmp`` files in `directory` whose saving process has exited."""
    for path in glob.glob(os.path.join(glob.escape(directory), TEMP_PREFIX + "*.tmp")):
        pid_text = os.path.basename(path)[len(TEMP_PREFIX):].split("-", 1)[0]
        if pid_text.isdigit() and not _pid_alive(int(pid_text)):
            with contextlib.suppress(OSError):
                os.unlink(path)


def _open_unnamed(directory):
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None:
        return None
    try:
        return os.open(directory, flag | os.O_WRONLY, 0o666)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT, errno.EACCES):
            return None  # the filesystem has no O_TMPFILE: fall back to a named temporary
        raise


def _link_into_place(fd, path, directory):
    # linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH; the /proc link works for any user.
    # link() refuses an existing target, so link to a fresh name and rename over the target.
    for attempt in range(100):
        staging = os.path.join(directory, f"{TEMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}.tmp")
        try:
            os.link(f"/proc/self/fd/{fd}", staging, follow_symlinks=True)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"could not find a free temporary name in {directory}")
    try:
        os.replace(staging, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staging)
        raise


def atomic_write(path, write):
    """Call ``write(fileobj)`` and put the result at `path` atomically.

    Raises PyTorch's "Parent directory ... does not exist." when the directory is missing.
    """
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise RuntimeError(f"Parent directory {directory} does not exist.")
    remove_stale_temporaries(directory)
    fd = _open_unnamed(directory) if os.path.isdir("/proc/self/fd") else None
    if fd is not None:
        try:
            with os.fdopen(fd, "wb", closefd=False) as fh:
                write(fh)
                fh.flush()
                os.fsync(fh.fileno())
            try:
                _link_into_place(fd, path, directory)
            except OSError:
                fd_used = False
            else:
                fd_used = True
        finally:
            os.close(fd)
        if fd_used:
            _fsync_directory(directory)
            return
        # /proc linking refused (a restricted container): write again through a named temporary.
    fd, tmp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
