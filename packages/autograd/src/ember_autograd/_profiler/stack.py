"""The Python stack of an op call (``with_stack=True``), as PyTorch's profiler writes it.

Each frame is ``"<file>(<line>): <function>"``, innermost first. Frames inside ember's own
packages (the dispatcher, autograd's recording, a layer's ``forward`` plumbing) are left
out, as PyTorch leaves out its C++ frames, so the stack starts at the user's line. File
names are shortened as PyTorch shortens them: the longest ``sys.path``/site-packages
prefix is removed ("torch/nn/modules/module.py", "my_script.py").
"""
import os
import site
import sys

__all__ = ["StackRecorder"]


def _ember_package_dirs():
    """The folders of the imported ember packages (ember and every ember_*)."""
    dirs = []
    for name, module in list(sys.modules.items()):
        if "." in name or not (name == "ember" or name.startswith("ember_")):
            continue
        path = getattr(module, "__file__", None)
        if path:
            dirs.append(os.path.dirname(os.path.abspath(path)) + os.sep)
    return tuple(dirs)


def _path_prefixes():
    raw = list(sys.path) + list(site.getsitepackages()) + [site.getusersitepackages()]
    return sorted({os.path.abspath(p) + os.sep for p in raw if p}, key=len, reverse=True)


class StackRecorder:
    """Formats the calling Python stack; built once per profile (the prefixes are fixed)."""

    def __init__(self):
        self._skip = _ember_package_dirs()
        self._prefixes = _path_prefixes()
        self._names = {}  # code object's file name -> (skipped?, shortened name)

    def _file(self, filename):
        known = self._names.get(filename)
        if known is None:
            full = os.path.abspath(filename) if not filename.startswith("<") else filename
            if not full.startswith(self._skip):
                self._skip = _ember_package_dirs()  # an ember package imported since (ember_nn, lazily)
            skipped = full.startswith(self._skip)
            short = filename
            for prefix in self._prefixes:
                if full.startswith(prefix):
                    short = full[len(prefix):]
                    break
            known = self._names[filename] = (skipped, short)
        return known

    def __call__(self):
        """The stack of the caller, innermost first, without ember's own frames."""
        entries = []
        frame = sys._getframe(1)
        while frame is not None:
            code = frame.f_code
            skipped, short = self._file(code.co_filename)
            if not skipped:
                entries.append(f"{short}({frame.f_lineno}): {code.co_name}")
            frame = frame.f_back
        return entries
