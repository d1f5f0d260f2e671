"""``torch.hub``: the hub cache (``$TORCH_HOME/hub``), downloads into it, and models
published by a ``hubconf.py``.

`load_state_dict_from_url` returns what `ember.load` reads from a cached checkpoint,
downloading it first when it is missing (``file://`` URLs work too). Without a network the
error names the URL and the path to put the file at by hand. `load`, `list` and `help`
serve a repository's ``hubconf.py`` from a local folder (``source="local"``); a GitHub
repository is fetched the same way when a network answers, and otherwise the error says
where to unpack it.
"""
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

from . import serialization

__all__ = ["get_dir", "set_dir", "download_url_to_file", "load_state_dict_from_url", "load", "list", "help",
           "OfflineError"]

# torch.hub: the hash prefix in a checkpoint's name, "resnet18-f37072fd.pth".
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
DOWNLOAD_TIMEOUT_S = 30


class OfflineError(RuntimeError):
    """A file could not be downloaded: says where it comes from and where to put it by hand."""


_hub_dir = None  # set_dir's folder, ahead of the environment


def get_dir():
    """The hub folder: `set_dir`'s, else ``$TORCH_HOME/hub``, else
    ``$XDG_CACHE_HOME/torch/hub``, else ``~/.cache/torch/hub``."""
    if _hub_dir is not None:
        return _hub_dir
    torch_home = os.getenv("TORCH_HOME")
    if torch_home is None:
        torch_home = os.path.join(os.getenv("XDG_CACHE_HOME", os.path.join("~", ".cache")), "torch")
    return os.path.join(os.path.expanduser(torch_home), "hub")


def set_dir(d):
    """Use folder `d` as the hub folder from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


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
                             file_name=None, weights_only=False):
    """The object saved at ``url``, from the hub cache, downloading it first if it is missing.

    Args:
        url: the file's URL; its last path component is the cached file's name.
        model_dir: the cache folder (default ``get_dir()/checkpoints``).
        map_location: as in ``ember.load``.
        progress: print download progress to stderr.
        check_hash: on download, the SHA-256 must start with the hex digits after the last
            ``-`` in the file name (torchvision's convention).
        file_name: the cached file's name, if not the URL's.
        weights_only: load with ember's safe loader (torch.hub's default, False, unpickles
            anything: pass True for files from elsewhere).
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
    return serialization.load(cached_file, map_location=map_location, weights_only=weights_only)


# --- hubconf.py repositories --------------------------------------------------------------


def _repository_folder(repo_or_dir, source, force_reload, skip_validation, trust_repo):
    """The local folder holding the repository's hubconf.py (downloaded for "github")."""
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "local":
        return os.path.expanduser(os.fspath(repo_or_dir))
    owner_name, _, ref = repo_or_dir.partition(":")
    if "/" not in owner_name:
        raise ValueError(f"Invalid input: repo_or_dir must be of the form 'repo_owner/repo_name[:ref]', "
                         f"got {repo_or_dir!r}")
    owner, name = owner_name.split("/", 1)
    ref = ref or "main"
    folder = os.path.join(get_dir(), f"{owner}_{name}_{ref.replace('/', '_')}")
    if force_reload or not os.path.isdir(folder):
        url = f"https://github.com/{owner}/{name}/zipball/{ref}"
        archive = folder + ".zip"
        download_url_to_file(url, archive, progress=False)
        shutil.rmtree(folder, ignore_errors=True)
        with tempfile.TemporaryDirectory(dir=get_dir()) as unpacked:
            shutil.unpack_archive(archive, unpacked, "zip")
            (top,) = os.listdir(unpacked)  # GitHub's zipball holds one folder
            shutil.move(os.path.join(unpacked, top), folder)
        os.remove(archive)
    return folder


def _hubconf(folder):
    """The repository's hubconf module (its folder is put on sys.path, as PyTorch does)."""
    path = os.path.join(folder, "hubconf.py")
    if not os.path.exists(path):
        raise FileNotFoundError(f"[Errno 2] No such file or directory: '{path}'")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location("hubconf", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _entrypoint(hubconf, model):
    entry = getattr(hubconf, model, None) if isinstance(model, str) else None
    if entry is None or not callable(entry):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return entry


def _source_of(github):
    """list/help take a GitHub "owner/name[:ref]"; ember also takes a local folder there."""
    return "local" if os.path.isdir(os.path.expanduser(str(github))) else "github"


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):  # noqa: A001
    """The names of the entry points (public callables) of a repository's hubconf.py."""
    hubconf = _hubconf(_repository_folder(github, _source_of(github), force_reload, skip_validation, trust_repo))
    return [name for name, value in vars(hubconf).items() if callable(value) and not name.startswith("_")
            and getattr(value, "__module__", None) == "hubconf"]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):  # noqa: A001
    """The docstring of entry point `model`."""
    hubconf = _hubconf(_repository_folder(github, _source_of(github), force_reload, skip_validation, trust_repo))
    return _entrypoint(hubconf, model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """``model(*args, **kwargs)`` from the repository's hubconf.py: a local folder with
    ``source="local"``, else ``"owner/name[:ref]"`` on GitHub (downloaded into the hub folder)."""
    folder = _repository_folder(repo_or_dir, source, force_reload, skip_validation, trust_repo)
    return _entrypoint(_hubconf(folder), model)(*args, **kwargs)
