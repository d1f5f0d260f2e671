"""torchvision's ``datasets.utils``: download into a dataset folder (through the hub's
downloader, so an offline machine gets an error saying where to put each file), verify
MD5 sums, extract archives."""
import bz2
import gzip
import hashlib
import lzma
import os
import tarfile
import zipfile

from ember_tensor import hub as _hub

__all__ = ["calculate_md5", "check_md5", "check_integrity", "download_url", "extract_archive",
           "download_and_extract_archive", "verify_str_arg"]


def calculate_md5(fpath, chunk_size=1024 * 1024):
    """The hex MD5 of a file."""
    md5 = hashlib.md5(usedforsecurity=False)
    with open(fpath, "rb") as f:
        while chunk := f.read(chunk_size):
            md5.update(chunk)
    return md5.hexdigest()


def check_md5(fpath, md5, **kwargs):
    """Whether the file's MD5 is ``md5``."""
    return md5 == calculate_md5(fpath, **kwargs)


def check_integrity(fpath, md5=None):
    """Whether ``fpath`` exists (and has MD5 ``md5`` when given)."""
    if not os.path.isfile(fpath):
        return False
    return md5 is None or check_md5(fpath, md5)


def download_url(url, root, filename=None, md5=None, max_redirect_hops=3):
    """Download ``url`` to ``root/filename`` unless a file with the right MD5 is there.

    Raises:
        RuntimeError: offline, naming the URL and the path to put the file at; or the MD5
            of the downloaded file is wrong.
    """
    root = os.path.expanduser(root)
    filename = filename or os.path.basename(url)
    fpath = os.path.join(root, filename)
    os.makedirs(root, exist_ok=True)
    if check_integrity(fpath, md5):
        return
    _hub.download_url_to_file(url, fpath, progress=False)
    if not check_integrity(fpath, md5):
        raise RuntimeError(f"File {fpath} downloaded from {url} is not the expected one (MD5 mismatch).")


def extract_archive(from_path, to_path=None, remove_finished=False):
    """Extract a .zip, .tar(.gz/.bz2/.xz), .tgz or a single compressed file (.gz/.bz2/.xz)
    into ``to_path`` (default: beside it); returns ``to_path``."""
    to_path = to_path or os.path.dirname(from_path)
    name = from_path.lower()
    if name.endswith(".zip"):
        with zipfile.ZipFile(from_path) as archive:
            archive.extractall(to_path)
    elif name.endswith((".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tar.xz", ".txz")):
        with tarfile.open(from_path) as archive:
            archive.extractall(to_path, filter="data")
    else:
        openers = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
        suffix = os.path.splitext(name)[1]
        if suffix not in openers:
            raise RuntimeError(f"Extraction of {from_path} not supported")
        target = os.path.join(to_path, os.path.basename(from_path)[:-len(suffix)])
        with openers[suffix](from_path, "rb") as src, open(target, "wb") as dst:
            dst.write(src.read())
    if remove_finished:
        os.remove(from_path)
    return to_path


def download_and_extract_archive(url, download_root, extract_root=None, filename=None, md5=None,
                                 remove_finished=False):
    """``download_url`` then ``extract_archive``."""
    download_root = os.path.expanduser(download_root)
    extract_root = extract_root or download_root
    filename = filename or os.path.basename(url)
    download_url(url, download_root, filename, md5)
    extract_archive(os.path.join(download_root, filename), extract_root, remove_finished)


def verify_str_arg(value, arg=None, valid_values=None, custom_msg=None):
    """``value`` if it is one of ``valid_values``, else torchvision's ValueError."""
    if not isinstance(value, str):
        raise ValueError(f"Expected type str{'' if arg is None else f' for argument {arg}'}, but got type "
                         f"{type(value)}.")
    if valid_values is not None and value not in valid_values:
        msg = custom_msg or (f"Unknown value '{value}' for argument {arg}. Valid values are "
                             f"{{{', '.join(repr(v) for v in valid_values)}}}.")
        raise ValueError(msg)
    return value
