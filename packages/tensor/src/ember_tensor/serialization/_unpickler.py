"""The unpicklers of ``load``: a restricted one for ``weights_only=True`` and Python's own
for ``weights_only=False``.

The restricted unpickler is an interpreter of pickle opcodes written here, not a
``pickle.Unpickler`` with a filtered ``find_class``: it decides what REDUCE, NEWOBJ and
BUILD may call (PyTorch's rules: only allow-listed callables and types), refuses every
opcode it does not know, bounds every length by the bytes that are really there, and
never recurses, so a hostile file can make it fail but not run code, exhaust the stack
or read memory it was not given.
"""
import collections
import io
import pickle
import pickletools
import struct

from .._tensor import Tensor
from . import _globals

__all__ = ["WeightsUnpickler", "FullUnpickler", "weights_only_error", "globals_in_pickle", "UNSAFE_MESSAGE"]

_MAX_TUPLE_DEPTH = 1000   # hashing a deeper tuple could overflow the C stack
_MAX_LONG_BYTES = 1 << 16


# PyTorch's UNSAFE_MESSAGE: what every weights_only refusal tells the user.
UNSAFE_MESSAGE = ("In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
                  "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely "
                  "succeed, but it can result in arbitrary code execution. Do it only if you got the file from a "
                  "trusted source.")


def weights_only_error(message):
    """The UnpicklingError PyTorch raises when ``weights_only=True`` refuses a file."""
    unsafe = UNSAFE_MESSAGE
    if "was not an allowed global by default" in message:
        text = ("Weights only load failed. This file can still be loaded, to do so you have two options, "
                "do those steps only if you trust the source of the checkpoint. "
                f"\n\t(1) {unsafe}\n\t(2) Alternatively, to load with `weights_only=True` please check the "
                f"recommended steps in the following error message.\n\tWeightsUnpickler error: {message}")
    else:
        text = f"Weights only load failed. {unsafe}\n\nWeightsUnpickler error: {message}"
    return pickle.UnpicklingError(text)


class _Reader:
    """Bounded reads from the pickle's bytes: a short read is an error, never a silent pad."""

    def __init__(self, data):
        self.data = memoryview(data)
        self.pos = 0

    def read(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise pickle.UnpicklingError("pickle data was truncated")
        chunk = bytes(self.data[self.pos:self.pos + n])
        self.pos += n
        return chunk

    def readline(self):
        end = bytes(self.data[self.pos:self.pos + 4096]).find(b"\n")
        if end < 0:
            raise pickle.UnpicklingError("pickle data was truncated (a line has no end)")
        line = bytes(self.data[self.pos:self.pos + end])
        self.pos += end + 1
        return line


# Opcode bytes as ints, so the interpreter's comparisons are plain int compares.
_ADDITEMS = pickle.ADDITEMS[0]
_APPEND = pickle.APPEND[0]
_APPENDS = pickle.APPENDS[0]
_BINBYTES = pickle.BINBYTES[0]
_BINBYTES8 = pickle.BINBYTES8[0]
_BINFLOAT = pickle.BINFLOAT[0]
_BINGET = pickle.BINGET[0]
_BININT = pickle.BININT[0]
_BININT1 = pickle.BININT1[0]
_BININT2 = pickle.BININT2[0]
_BINPERSID = pickle.BINPERSID[0]
_BINPUT = pickle.BINPUT[0]
_BINSTRING = pickle.BINSTRING[0]
_BINUNICODE = pickle.BINUNICODE[0]
_BINUNICODE8 = pickle.BINUNICODE8[0]
_BUILD = pickle.BUILD[0]
_DICT = pickle.DICT[0]
_DUP = pickle.DUP[0]
_EMPTY_DICT = pickle.EMPTY_DICT[0]
_EMPTY_LIST = pickle.EMPTY_LIST[0]
_EMPTY_SET = pickle.EMPTY_SET[0]
_EMPTY_TUPLE = pickle.EMPTY_TUPLE[0]
_FLOAT = pickle.FLOAT[0]
_FRAME = pickle.FRAME[0]
_FROZENSET = pickle.FROZENSET[0]
_GLOBAL = pickle.GLOBAL[0]
_INT = pickle.INT[0]
_LIST = pickle.LIST[0]
_LONG = pickle.LONG[0]
_LONG1 = pickle.LONG1[0]
_LONG4 = pickle.LONG4[0]
_LONG_BINGET = pickle.LONG_BINGET[0]
_LONG_BINPUT = pickle.LONG_BINPUT[0]
_MARK = pickle.MARK[0]
_MEMOIZE = pickle.MEMOIZE[0]
_NEWFALSE = pickle.NEWFALSE[0]
_NEWOBJ = pickle.NEWOBJ[0]
_NEWTRUE = pickle.NEWTRUE[0]
_NONE = pickle.NONE[0]
_POP = pickle.POP[0]
_POP_MARK = pickle.POP_MARK[0]
_PROTO = pickle.PROTO[0]
_REDUCE = pickle.REDUCE[0]
_SETITEM = pickle.SETITEM[0]
_SETITEMS = pickle.SETITEMS[0]
_SHORT_BINBYTES = pickle.SHORT_BINBYTES[0]
_SHORT_BINSTRING = pickle.SHORT_BINSTRING[0]
_SHORT_BINUNICODE = pickle.SHORT_BINUNICODE[0]
_STACK_GLOBAL = pickle.STACK_GLOBAL[0]
_STOP = pickle.STOP[0]
_TUPLE = pickle.TUPLE[0]
_TUPLE1 = pickle.TUPLE1[0]
_TUPLE2 = pickle.TUPLE2[0]
_TUPLE3 = pickle.TUPLE3[0]


class WeightsUnpickler:
    """Unpickles `data` (bytes) allowing only allow-listed globals; storages come from
    ``persistent_load(pid)``."""

    def __init__(self, data, persistent_load):
        self.reader = _Reader(data)
        self.persistent_load = persistent_load
        self.memo = {}
        self.tuple_depth = {}   # id(tuple/frozenset) -> nesting depth
        self.keep = []          # keeps objects in tuple_depth alive so their ids stay unique

    def load(self):
        try:
            return self._run()
        except pickle.UnpicklingError as exc:
            raise weights_only_error(str(exc)) from None
        except RuntimeError:
            # A corrupt storage or an impossible map_location (SerializationError, CUDA
            # missing): the file's data is at fault, not the allow-list, so no advice to
            # retry with weights_only=False.
            raise
        except (IndexError, KeyError, TypeError, ValueError, AttributeError, OverflowError, struct.error,
                UnicodeDecodeError, EOFError, MemoryError, RecursionError) as exc:
            raise weights_only_error(f"the pickle is malformed ({type(exc).__name__}: {exc})") from None

    # -- helpers -------------------------------------------------------------------------

    def _depth_of(self, items):
        depth = 1 + max((self.tuple_depth.get(id(v), 0) for v in items), default=0)
        if depth > _MAX_TUPLE_DEPTH:
            raise pickle.UnpicklingError(f"tuples are nested more than {_MAX_TUPLE_DEPTH} levels deep")
        return depth

    def _tuple(self, items):
        t = tuple(items)
        if t:
            self.tuple_depth[id(t)] = self._depth_of(t)
            self.keep.append(t)
        return t

    def _pop_mark(self):
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    @staticmethod
    def _callable_allowed(obj):
        # torch.Tensor is allowed as a name (``_rebuild_from_type_v2`` names it) but calling
        # it would allocate whatever size the file asks for.
        return obj is not Tensor and _globals.is_allowed_callable(obj)

    def _global(self, module, name):
        if module in ("sys", "os", "posix", "nt"):
            raise pickle.UnpicklingError(
                f"Trying to load unsupported GLOBAL {module}.{name} whose module {module} is blocked.")
        obj = _globals.allowed_global(module, name)
        if obj is None:
            raise pickle.UnpicklingError(_globals.unsupported_global_message(f"{module}.{name}"))
        return obj

    # -- the interpreter -----------------------------------------------------------------

    def _run(self):
        read, readline = self.reader.read, self.reader.readline
        self.stack, self.metastack = [], []
        while True:
            key = read(1)[0]
            stack = self.stack
            if key == _PROTO:
                proto = read(1)[0]
                if proto > 5:
                    raise pickle.UnpicklingError(f"unsupported pickle protocol: {proto}")
            elif key == _FRAME:
                read(8)
            elif key == _STOP:
                if len(stack) != 1 or self.metastack:
                    raise pickle.UnpicklingError("the pickle stops with a malformed stack")
                return stack.pop()
            elif key == _MARK:
                self.metastack.append(stack)
                self.stack = []
            elif key == _POP:
                stack.pop() if stack else self._pop_mark()
            elif key == _POP_MARK:
                self._pop_mark()
            elif key == _DUP:
                stack.append(stack[-1])
            elif key == _NONE:
                stack.append(None)
            elif key == _NEWTRUE:
                stack.append(True)
            elif key == _NEWFALSE:
                stack.append(False)
            elif key == _BININT:
                stack.append(struct.unpack("<i", read(4))[0])
            elif key == _BININT1:
                stack.append(read(1)[0])
            elif key == _BININT2:
                stack.append(struct.unpack("<H", read(2))[0])
            elif key == _INT:
                line = readline()
                stack.append({b"00": False, b"01": True}.get(line) if line in (b"00", b"01") else int(line))
            elif key == _LONG:
                line = readline()
                stack.append(int(line[:-1] if line.endswith(b"L") else line))
            elif key in (_LONG1, _LONG4):
                n = read(1)[0] if key == _LONG1 else struct.unpack("<i", read(4))[0]
                if not 0 <= n <= _MAX_LONG_BYTES:
                    raise pickle.UnpicklingError(f"an integer of {n} bytes is out of range")
                stack.append(int.from_bytes(read(n), "little", signed=True))
            elif key == _BINFLOAT:
                stack.append(struct.unpack(">d", read(8))[0])
            elif key == _FLOAT:
                stack.append(float(readline()))
            elif key in (_BINUNICODE, _SHORT_BINUNICODE, _BINUNICODE8):
                n = {_BINUNICODE: lambda: struct.unpack("<I", read(4))[0],
                     _SHORT_BINUNICODE: lambda: read(1)[0],
                     _BINUNICODE8: lambda: struct.unpack("<Q", read(8))[0]}[key]()
                stack.append(str(read(n), "utf-8", "surrogatepass"))
            elif key in (_SHORT_BINSTRING, _BINSTRING):
                n = read(1)[0] if key == _SHORT_BINSTRING else struct.unpack("<i", read(4))[0]
                # Python 2 str: PyTorch's legacy files hold ASCII here (encoding="ascii" upstream).
                stack.append(read(n).decode("latin1"))
            elif key in (_SHORT_BINBYTES, _BINBYTES, _BINBYTES8):
                n = {_SHORT_BINBYTES: lambda: read(1)[0],
                     _BINBYTES: lambda: struct.unpack("<I", read(4))[0],
                     _BINBYTES8: lambda: struct.unpack("<Q", read(8))[0]}[key]()
                stack.append(read(n))
            elif key == _EMPTY_TUPLE:
                stack.append(())
            elif key == _TUPLE:
                items = self._pop_mark()
                self.stack.append(self._tuple(items))
            elif key in (_TUPLE1, _TUPLE2, _TUPLE3):
                n = {_TUPLE1: 1, _TUPLE2: 2, _TUPLE3: 3}[key]
                if len(stack) < n:
                    raise pickle.UnpicklingError("the stack is too short for TUPLE")
                stack[-n:] = [self._tuple(stack[-n:])]
            elif key == _EMPTY_LIST:
                stack.append([])
            elif key == _LIST:
                items = self._pop_mark()
                self.stack.append(list(items))
            elif key == _APPEND:
                item = stack.pop()
                self._require(stack[-1], list, "append to lists")
                stack[-1].append(item)
            elif key == _APPENDS:
                items = self._pop_mark()
                self._require(self.stack[-1], list, "extend lists")
                self.stack[-1].extend(items)
            elif key == _EMPTY_DICT:
                stack.append({})
            elif key == _DICT:
                items = self._pop_mark()
                self.stack.append(self._fill({}, items))
            elif key == _SETITEM:
                value, k = stack.pop(), stack.pop()
                self._fill(stack[-1], [k, value])
            elif key == _SETITEMS:
                items = self._pop_mark()
                self._fill(self.stack[-1], items)
            elif key == _EMPTY_SET:
                stack.append(set())
            elif key == _ADDITEMS:
                items = self._pop_mark()
                self._require(self.stack[-1], set, "add items to sets")
                self.stack[-1].update(items)
            elif key == _FROZENSET:
                items = self._pop_mark()
                fs = frozenset(items)
                if fs:
                    self.tuple_depth[id(fs)] = self._depth_of(items)
                    self.keep.append(fs)
                self.stack.append(fs)
            elif key == _GLOBAL:
                module = readline().decode("utf-8")
                name = readline().decode("utf-8")
                stack.append(self._global(module, name))
            elif key == _STACK_GLOBAL:
                name, module = stack.pop(), stack.pop()
                if type(name) is not str or type(module) is not str:
                    raise pickle.UnpicklingError("STACK_GLOBAL requires str")
                stack.append(self._global(module, name))
            elif key == _REDUCE:
                args = stack.pop()
                func = stack[-1]
                if not self._callable_allowed(func):
                    raise pickle.UnpicklingError(f"Trying to call reduce for unrecognized function {func!r}")
                if type(args) is not tuple:
                    raise pickle.UnpicklingError("REDUCE arguments must be a tuple")
                stack[-1] = func(*args)
            elif key == _NEWOBJ:
                args = stack.pop()
                cls = stack.pop()
                if not (isinstance(cls, type) and self._callable_allowed(cls)) or type(args) is not tuple:
                    raise pickle.UnpicklingError(
                        "Can only create new object for nn.Parameter or classes allowlisted via "
                        f"`add_safe_globals` but got {cls!r}")
                stack.append(cls(*args) if issubclass(cls, Tensor) else cls.__new__(cls, *args))
            elif key == _BUILD:
                state = stack.pop()
                self._build(stack[-1], state)
            elif key == _BINPERSID:
                pid = stack.pop()
                if type(pid) is not tuple or not pid or pid[0] not in ("storage", b"storage"):
                    raise pickle.UnpicklingError("Only persistent_load of storage is allowed")
                stack.append(self.persistent_load(pid))
            elif key in (_BINPUT, _LONG_BINPUT):
                index = read(1)[0] if key == _BINPUT else struct.unpack("<I", read(4))[0]
                self.memo[index] = stack[-1]
            elif key == _MEMOIZE:
                self.memo[len(self.memo)] = stack[-1]
            elif key in (_BINGET, _LONG_BINGET):
                index = read(1)[0] if key == _BINGET else struct.unpack("<I", read(4))[0]
                if index not in self.memo:
                    raise pickle.UnpicklingError(f"Memo value not found at index {index}")
                stack.append(self.memo[index])
            else:
                raise pickle.UnpicklingError(f"Unsupported operand {key}")

    @staticmethod
    def _require(obj, kind, what):
        if type(obj) is not kind:
            raise pickle.UnpicklingError(f"Can only {what}, but got {type(obj)}")

    @staticmethod
    def _fill(target, items):
        if type(target) not in (dict, collections.OrderedDict, collections.Counter):
            raise pickle.UnpicklingError("Can only SETITEM for dict, collections.OrderedDict, "
                                         f"collections.Counter, but got {type(target)}")
        if len(items) % 2:
            raise pickle.UnpicklingError("odd number of items for SETITEMS")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]
        return target

    def _build(self, inst, state):
        cls = type(inst)
        if cls is collections.OrderedDict:
            if type(state) is not dict or not all(type(k) is str for k in state):
                raise pickle.UnpicklingError("OrderedDict state must be a dict of str")
            inst.__dict__.update(state)
            return
        if cls is Tensor or not _globals.is_allowed_callable(cls):
            raise pickle.UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types allowlisted "
                                         f"via `add_safe_globals`, but got {cls}")
        if hasattr(inst, "__setstate__"):
            inst.__setstate__(state)
            return
        slotstate = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slotstate = state
        if state:
            inst.__dict__.update(state)
        if slotstate:
            for k, v in slotstate.items():
                setattr(inst, k, v)


class FullUnpickler(pickle.Unpickler):
    """Python's unpickler for ``weights_only=False``: it runs whatever the file says, with
    PyTorch's module paths resolved to ember's (see _globals)."""

    def __init__(self, file, persistent_load, **kwargs):
        super().__init__(file, **kwargs)
        self._persistent_load = persistent_load

    def find_class(self, module, name):
        if (module == "torch" or module.startswith("torch.") or f"{module}.{name}" in _globals._BY_NAME
                or _globals.is_aliased_module(module)):
            return _globals.resolve_global(module, name)
        return super().find_class(module, name)

    def persistent_load(self, pid):
        return self._persistent_load(pid)


def globals_in_pickle(data):
    """Every ``module.name`` a pickle names with GLOBAL or STACK_GLOBAL (statically, in order)."""
    found, strings = [], []
    try:
        for opcode, arg, _ in pickletools.genops(io.BytesIO(data)):
            if opcode.name == "GLOBAL":
                module, name = arg.split(" ", 1)
                found.append(f"{module}.{name}")
            elif opcode.name == "STACK_GLOBAL" and len(strings) >= 2:
                found.append(f"{strings[-2]}.{strings[-1]}")
            elif isinstance(arg, str) and "UNICODE" in opcode.name:
                strings.append(arg)
    except (ValueError, EOFError) as exc:
        raise pickle.UnpicklingError(f"the pickle is malformed: {exc}") from None
    return list(dict.fromkeys(found))

