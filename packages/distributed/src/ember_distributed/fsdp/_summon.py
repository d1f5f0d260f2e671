"""``FSDP.summon_full_params``: the full parameters on the modules, outside forward.

Inside the context every unit's flat shard is all-gathered and each original parameter
is put back on its module as a full Parameter (``model.module[0].weight``); on exit,
with ``writeback=True``, this rank's rows of each (changed or not) are copied back into
the flat shard, so edits made inside (under ``no_grad``) persist, as in PyTorch.
"""

import contextlib

import numpy as np

import ember_tensor

from .._group import resolve

__all__ = []


@contextlib.contextmanager
def summon_full_params(model, recurse=True, writeback=True, rank0_only=False, offload_to_cpu=False,
                       with_grads=False):
    """Gather the full parameters onto the modules for the duration of the context."""
    if rank0_only and writeback:
        raise NotImplementedError("writeback=True and rank0_only=True is not supported, as model parameter shapes "
                                  "will be different across ranks, and writing to them can lead to inconsistencies "
                                  "across ranks when the context is exited.")
    if with_grads:
        raise NotImplementedError("ember's summon_full_params does not gather gradients (with_grads=True)")
    units = [entry for entry in model._units if recurse or entry[0] is model.module]
    shown = []
    for _, unit, flat in units:
        fulls = unit.gather_full(unit.segments(flat.detach().numpy()))  # a collective: every rank takes part
        if rank0_only and resolve(None).rank() != 0:
            continue
        for spec, full in zip(unit.specs, fulls):
            param = type(flat)(ember_tensor.from_numpy(np.ascontiguousarray(full)), requires_grad=flat.requires_grad)
            object.__setattr__(spec.module, spec.name, param)  # the module's own attribute while inside
            shown.append((unit, flat, spec, param))
    try:
        yield
    finally:
        by_unit = {}
        for unit, flat, spec, param in shown:
            vars(spec.module).pop(spec.name, None)
            by_unit.setdefault(id(unit), (unit, flat, {}))[2][id(spec)] = param
        if writeback:
            for unit, flat, params in by_unit.values():
                chunks = [unit.shard_of(spec, params[id(spec)].detach().numpy()) for spec in unit.specs]
                flat.detach().copy_(ember_tensor.from_numpy(unit.pack(chunks, dtype=unit.dtype.np)))
