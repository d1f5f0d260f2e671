"""What the generated modules of row prologues (softmax, layer norm) share on the CPU.

A row prologue computes an elementwise program's values a block of rows at a time into
a small buffer and hands the block to one of eager's row kernels. This module writes the
parts of such a module that do not depend on the kernel: the scalar helpers and the
program (a function of its own, no fastmath: eager's op-by-op arithmetic, no multiply-add
contracted into ``x * s + m``), and `_values`, which fills the buffer.

Every operand is read through a 1-d buffer with an offset and three element strides
(`plan.rows_along`: row ``o`` starts at ``(o // nb) * soa + (o % nb) * sob``, its
elements ``sr`` apart), so one compiled kernel serves contiguous, strided and broadcast
(stride 0) operands alike.
"""
__all__ = ["ROWS_BLOCK", "program_source", "values_source", "operand_params"]

# Elements of program values a block (128-256 KiB: it stays in L2); a block is one call
# from Python into the compiled loops.
ROWS_BLOCK = 32768

_VALUES = '''

@njit(cache=True, nogil=True, error_model="numpy")
def _values(tmp, o_lo, m, nb, {operands}):
    # The program's values of rows o_lo..o_lo+m into tmp (no fastmath: eager's arithmetic).
    n = tmp.shape[1]
    for i in range(m):
        o = o_lo + i
        oa = o // nb
        ob = o - oa * nb
{starts}
        row = tmp[i]
        if {contiguous}:
{slices}
            for j in range(n):
                row[j] = f({sliced})
        else:
            for j in range(n):
                row[j] = f({indexed})
'''


def operand_params(arity):
    """The kernel parameters of `arity` operands: ``b0, soa0, sob0, sr0, ...``."""
    return ", ".join(f"b{k}, soa{k}, sob{k}, sr{k}" for k in range(arity))


def program_source(scalar_source, name, used):
    """The scalar helpers `used` (inlined, from `scalar_functions`), the program
    `scalar_source` defining `name`, and ``f``, its inlined compiled function. The module's
    header imports ``njit`` and ``_scalar``."""
    parts = [f'{op} = njit(inline="always", error_model="numpy")(_scalar.{op})\n' for op in used]
    parts.append("\n" + scalar_source)
    parts.append(f'\nf = njit(inline="always", error_model="numpy")({name})\n')
    return "".join(parts)


def values_source(arity):
    """The source of ``_values(tmp, o_lo, m, nb, <operands>)`` over `arity` operands."""
    ks = range(arity)
    return _VALUES.format(
        operands=operand_params(arity),
        starts="\n".join(f"        p{k} = oa * soa{k} + ob * sob{k}" for k in ks),
        contiguous=" and ".join(f"sr{k} == 1" for k in ks),
        slices="\n".join(f"            v{k} = b{k}[p{k}:p{k} + n]" for k in ks),
        sliced=", ".join(f"v{k}[j]" for k in ks),
        indexed=", ".join(f"b{k}[p{k} + j * sr{k}]" for k in ks))
