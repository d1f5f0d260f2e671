"""The one Numba loop of ember's worker pool (`cpu/pool.py`): wait, without the GIL, for a
counter that another thread bumps.

A thread waiting for work on a lock or condition variable sleeps in the kernel, and on a
virtual machine waking it costs 30-60 us (measured: a lock ping-pong between two Python
threads 62 us a round trip on this project's 2-vCPU machines). OpenMP, under PyTorch's
parallel loops and Numba's prange, keeps its threads spinning between parallel regions
instead (a prange of two tiny parts: 2 us). This loop is that spin: it reads the counter
with an atomic acquire load (a plain load may be hoisted out of the loop, since nothing in
it writes memory), with the CPU's pause hint between reads on x86 and, every 64 reads, a
`sched_yield` (on a machine with more runnable threads than cores, a spinning thread would
otherwise hold the core the thread it waits for needs: measured at load 3.4 on 2 cores, a
two-part split of a 64K-element sum 84-128 us with the yield, 350-450 us without), for a
bounded number of reads.

Compiled once (int64 counters only), cached on disk. The intrinsics live in this file, so
Numba's cache, keyed on this file, can never serve a stale kernel.
"""
import os
import platform

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["wait_for_change"]

_POSIX = os.name == "posix"
_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86")


@intrinsic
def _load_acquire(typingctx, counters, index):
    """counters[index] read with an atomic acquire load (int64 array, no bounds check)."""
    signature = types.int64(counters, index)

    def codegen(context, builder, sig, args):
        array = context.make_array(sig.args[0])(context, builder, args[0])
        pointer = builder.gep(array.data, [args[1]])
        return builder.load_atomic(pointer, ordering="acquire", align=8)

    return signature, codegen


@intrinsic
def _pause(typingctx):
    """x86's `pause` (a spin-wait hint: lets the sibling hyperthread run, saves power);
    nothing elsewhere."""
    signature = types.void()

    def codegen(context, builder, sig, args):
        if _X86:
            hint = builder.module.declare_intrinsic("llvm.x86.sse2.pause", fnty=ir.FunctionType(ir.VoidType(), []))
            builder.call(hint, [])
        return context.get_dummy_value()

    return signature, codegen


@intrinsic
def _yield(typingctx):
    """sched_yield(2): give the core to another runnable thread, if any (POSIX; nothing
    elsewhere). Bound by name, not address, so the cached kernel stays valid."""
    signature = types.void()

    def codegen(context, builder, sig, args):
        if _POSIX:
            function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), []),
                                                      "sched_yield")
            builder.call(function, [])
        return context.get_dummy_value()

    return signature, codegen


@njit(cache=True, nogil=True)
def wait_for_change(counters, index, seen, reads, grace):
    """Read counters[index] until it differs from `seen`, at most `reads` times; returns
    the value read last (`seen` when the reads ran out).

    After a change, `grace` more pause hints go by before returning: the thread that
    bumped the counter is then likely inside its own GIL-free kernel, so the caller of
    this function takes the GIL without sleeping for it (a sleeping GIL waiter is woken
    at the same 30-60 us cost as any other sleeper)."""
    for read in range(reads):
        value = _load_acquire(counters, index)
        if value != seen:
            for _ in range(grace):
                _pause()
            return value
        if read & 63 == 63:
            _yield()  # on a busy machine, let the thread we wait for have this core
        else:
            _pause()
    return seen
