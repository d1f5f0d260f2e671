"""No CPU kernel helper can take its fast-math flags from whichever caller compiles it first.

A Numba function whose decorator leaves ``fastmath`` unset is compiled with its caller's
flags (Numba's ``inherit_if_not_set("fastmath")``), and the disk cache keeps that first
version: a helper shared by a fast-math kernel and an exact one returns the fast-math
result to both once the fast-math caller ran first (the float32 exp returned exact powers
of two that way, eleventh session). This test reads the kernel sources: every compiled
function that a fast-math function calls by name — a function of its own module or one
imported from a sibling module of `_backends/cpu/kernels` — must say its own ``fastmath``
(``False`` included) or be inlined at Numba's level (``inline="always"``: then it is the
caller's code, compiled with the caller's flags on purpose).
"""
import ast
import pathlib

import ember_tensor

KERNELS = pathlib.Path(ember_tensor.__file__).parent / "_backends" / "cpu" / "kernels"
_DECORATORS = ("njit", "jit", "register_jitable")


def _options(decorator, option_dicts):
    """The keyword options of a `@njit(...)` decorator, `**OPTIONS` dicts expanded; None
    when the decorator is not a Numba compile."""
    call = decorator if isinstance(decorator, ast.Call) else None
    name = ast.unparse(call.func if call else decorator).split(".")[-1]
    if name not in _DECORATORS:
        return None
    options = {}
    for keyword in call.keywords if call else ():
        if keyword.arg is None:
            options.update(option_dicts.get(ast.unparse(keyword.value), {"fastmath": "<unknown>"}))
        else:
            options[keyword.arg] = ast.unparse(keyword.value)
    return options


def _module_dicts(tree):
    """Module-level `NAME = dict(...)` option dicts, by name."""
    dicts = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and ast.unparse(node.value.func) == "dict" and isinstance(node.targets[0], ast.Name)):
            dicts[node.targets[0].id] = {k.arg: ast.unparse(k.value) for k in node.value.keywords}
    return dicts


def _compiled_functions(path):
    """{name: (options, FunctionDef)} of the Numba-compiled functions of one source file,
    and {name: [FunctionDef]} of the `@overload(name)` implementations it defines."""
    tree = ast.parse(path.read_text())
    dicts = _module_dicts(tree)
    found, overloads = {}, {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                options = _options(decorator, dicts)
                if options is not None:
                    found[node.name] = (options, node)
                elif (isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith("overload")
                        and isinstance(decorator.args[0], ast.Name)):
                    overloads.setdefault(decorator.args[0].id, []).append(node)
    return tree, found, overloads


def _called_names(node, overloads):
    """The plain names `node` calls, and through an overloaded name, the names its
    implementations' lambdas call (those lambdas are compiled with the caller's flags)."""
    names, seen = set(), set()
    pending = [node]
    while pending:
        body = pending.pop()
        for call in ast.walk(body):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id not in seen:
                seen.add(call.func.id)
                names.add(call.func.id)
                pending.extend(overloads.get(call.func.id, ()))
    return names


def _visible_functions(tree, own, modules):
    """The compiled functions a module's code can call by a plain name: its own and those
    it imports from sibling kernel modules (`from .exp32 import exp32 as _exp32`)."""
    visible = dict(own)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module in modules:
            for alias in node.names:
                if alias.name in modules[node.module]:
                    visible[alias.asname or alias.name] = modules[node.module][alias.name]
    return visible


def _inheriting_calls():
    parsed = {path.stem: _compiled_functions(path) for path in sorted(KERNELS.glob("*.py"))}
    modules = {stem: functions for stem, (_, functions, _) in parsed.items()}
    problems = []
    for stem, (tree, own, overloads) in parsed.items():
        visible = _visible_functions(tree, own, modules)
        for name, (options, node) in own.items():
            if options.get("fastmath") in (None, "False"):
                continue
            for called in sorted(_called_names(node, overloads)):
                callee = visible.get(called)
                if callee is None:
                    continue
                callee_options = callee[0]
                if "fastmath" not in callee_options and callee_options.get("inline") != "'always'":
                    problems.append(f"{stem}.{name} (fastmath={options['fastmath']}) calls {called}")
    return problems


def test_the_scan_sees_the_kernels():
    # The scan must find the fast-math kernels it guards (softmax's rows, the RNN gates),
    # or it would pass on an empty tree.
    parsed = {path.stem: _compiled_functions(path)[1] for path in KERNELS.glob("*.py")}
    fast = {f"{stem}.{name}" for stem, functions in parsed.items()
            for name, (options, _) in functions.items() if options.get("fastmath") not in (None, "False")}
    assert {"row_passes.sum_exp_and_max", "softmax._rows_softmax", "rnn.lstm_gates_forward"} <= fast


def test_a_helper_without_its_own_flags_is_caught(tmp_path, monkeypatch):
    source = (
        "from numba import njit\n"
        "@njit(cache=True)\n"
        "def helper(x):\n    return x + 1.0\n"
        "@njit(fastmath=True)\n"
        "def kernel(x):\n    return helper(x)\n"
        "def typed(x):\n    return x\n"
        "@overload(typed)\n"
        "def typed_overload(x):\n    return lambda x: helper(x)\n"
        "@njit(fastmath={'contract'})\n"
        "def through_an_overload(x):\n    return typed(x)\n"
    )
    (tmp_path / "demo.py").write_text(source)
    monkeypatch.setattr(__import__(__name__), "KERNELS", tmp_path)
    assert _inheriting_calls() == ["demo.kernel (fastmath=True) calls helper",
                                   "demo.through_an_overload (fastmath={'contract'}) calls helper"]


def test_no_fast_math_kernel_calls_a_helper_without_its_own_flags():
    assert _inheriting_calls() == []
