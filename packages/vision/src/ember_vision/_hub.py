"""torch.hub's cache and download, as torchvision uses them: ``$TORCH_HOME/hub/checkpoints``.

ember has no ``hub`` module below this package yet, so the few functions torchvision calls
live here. A file already in the cache is loaded with ember's safe loader
(``weights_only=True``); a missing one is downloaded when a network answers, and otherwise
the error names the URL and the path to put the file at.
"""
import hashlib
import os
import re
import shutil
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

import ember_tensor

__all__ = ["get_dir", "download_url_to_file", "load_state_dict_from_url", "OfflineError"]

# torch.hub: the hash prefix in a checkpoint's name, "resnet18-f37072fd.pth".
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
DOWNLOAD_TIMEOUT_S = 30


class OfflineError(RuntimeError):
    """A file could not be downloaded: says where it comes from and where to put it by hand."""


def get_dir():
    """The hub folder: ``$TORCH_HOME/hub``, else ``$XDG_CACHE_HOME/torch/hub``, else ``~/.cache/torch/hub``."""
    torch_home = os.getenv("TORCH_HOME")
    if torch_home is None:
        torch_home = os.path.join(os.getenv("XDG_CACHE_HOME", os.path.join("~", ".cache")), "torch")
    return os.path.join(os.path.expanduser(torch_home), "hub")


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download ``url`` to the path ``dst`` (through a temporary file, so a failed download
    leaves nothing), checking that the SHA-256 starts with ``hash_prefix`` when given.

    Raises:
        OfflineError: no network, or the server did not answer; the message says where to
            put the file by hand.
    """
    folder = os.path.dirname(os.path.abspath(dst))
    os.makedirs(folder, exist_ok=True)
    try:
        response = urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S)
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise OfflineError(
            f"Could not download {url} ({error}). Without a network, fetch that file elsewhere and "
            f"put it at {dst}") from None
    sha256 = hashlib.sha256()
    with response, tempfile.NamedTemporaryFile(delete=False, dir=folder, suffix=".partial") as tmp:
        total, done = int(response.headers.get("Content-Length") or 0), 0
        while chunk := response.read(1 << 20):
            tmp.write(chunk)
            sha256.update(chunk)
            done += len(chunk)
            if progress and total:
                sys.stderr.write(f"\r{os.path.basename(dst)}: {100 * done // total}%")
    if progress and total:
        sys.stderr.write("\n")
    digest = sha256.hexdigest()
    if hash_prefix is not None and not digest.startswith(hash_prefix):
        os.remove(tmp.name)
        raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
    shutil.move(tmp.name, dst)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=True):
    """The object saved at ``url``, from the hub cache, downloading it first if it is missing.

    Args:
        url: the file's URL; its last path component is the cached file's name.
        model_dir: the cache folder (default ``get_dir()/checkpoints``).
        map_location: as in ``ember.load``.
        progress: print download progress to stderr.
        check_hash: on download, the SHA-256 must start with the hex digits after the last
            ``-`` in the file name (torchvision's convention).
        file_name: the cached file's name, if not the URL's.
        weights_only: ember's safe loader (default True; torch.hub's default is False).
    """
    model_dir = model_dir or os.path.join(get_dir(), "checkpoints")
    filename = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        hash_prefix = None
        if check_hash:
            match = HASH_REGEX.search(filename)
            hash_prefix = match.group(1) if match else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    return ember_tensor.load(cached_file, map_location=map_location, weights_only=weights_only)
