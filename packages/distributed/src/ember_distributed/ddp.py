"""DistributedDataParallel: data-parallel training with gradients averaged over the ranks.

How it works, as PyTorch's does:

- At construction, rank 0's parameters and buffers are broadcast, so every replica
  starts equal.
- Parameters are grouped into buckets of about ``bucket_cap_mb`` (in reverse order of
  ``parameters()``, the order in which backward tends to produce their gradients). A
  post-accumulate-grad hook on each parameter notes its gradient ready; when a bucket is
  complete, its gradients are copied into one flat buffer and an asynchronous all-reduce
  starts at once, while backward goes on computing the rest: communication overlaps
  computation.
- Buckets are reduced in index order on every rank (MPI needs the same order of calls
  everywhere); when the last one is started, the gradients are averaged and written back
  into ``.grad``.

It wraps any object with PyTorch's module protocol (``parameters()``, ``__call__``,
``state_dict()``, ``train()``...): ember-distributed does not import ember-nn. The
meta-package also exposes it as ``ember.nn.parallel.DistributedDataParallel``.
"""

import contextlib

import numpy as np

import ember_autograd
import ember_tensor

from ._collectives import broadcast
from ._group import resolve
from ._mpi import mpi, reduction_dtype
from ._work import Work

__all__ = ["DistributedDataParallel"]


class _Bucket:
    """Parameters whose gradients are all-reduced together, through one flat buffer."""

    def __init__(self, params):
        self.params = params
        dtype = params[0].dtype
        self.flat = np.zeros(sum(p.numel() for p in params), dtype=reduction_dtype(dtype) or dtype.np)
        self.pending = len(params)
        self.work = None

    def pack(self):
        """Copy the gradients into the flat buffer (zeros for a parameter that got none)."""
        start = 0
        for p in self.params:
            end = start + p.numel()
            if p.grad is None:
                self.flat[start:end] = 0
            else:
                self.flat[start:end] = p.grad.detach().cpu().contiguous().numpy().reshape(-1)
            start = end

    def unpack(self, divisor):
        """Write the averaged gradients back into each parameter's ``.grad``."""
        np.divide(self.flat, divisor, out=self.flat)
        start = 0
        for p in self.params:
            end = start + p.numel()
            values = ember_tensor.from_numpy(self.flat[start:end].astype(p.dtype.np).reshape(tuple(p.shape)))
            if p.grad is None:
                p.grad = values.to(p.device)
            else:
                p.grad.detach().copy_(values)
            start = end


class DistributedDataParallel:
    """Wrap ``module`` so that backward averages its gradients over the process group.

    Args:
        module: the model (anything with ``parameters()``, ``buffers()``, ``__call__``).
        device_ids, output_device, dim: accepted for PyTorch compatibility (one device
            per process: the module stays where it is).
        broadcast_buffers: broadcast rank 0's buffers (batch-norm statistics) at every forward.
        process_group: the group to average over (default: the world).
        bucket_cap_mb: size of a gradient bucket in MiB.
        find_unused_parameters: walk the autograd graph after each forward and mark
            parameters that did not take part as ready (they contribute zeros), so that
            backward does not wait for them.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=25, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        self.module = module
        self.process_group = resolve(process_group)
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self._params = [p for p in module.parameters() if p.requires_grad]
        if not self._params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self._sync_module_states()
        self._buckets = _make_buckets(self._params, bucket_cap_mb * 1024 * 1024)
        self._bucket_of = {id(p): b for b in self._buckets for p in b.params}
        self._next_bucket = 0
        self._in_flight = False
        self._hooks = [p.register_post_accumulate_grad_hook(self._on_grad_ready) for p in self._params]

    # --- the module protocol, delegated --------------------------------------------------

    def __call__(self, *inputs, **kwargs):
        return self.forward(*inputs, **kwargs)

    def forward(self, *inputs, **kwargs):
        """Run the wrapped module (after syncing buffers), and prepare the gradient reduction."""
        if self._in_flight:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This "
                "error indicates that your module has parameters that were not used in producing loss. You can "
                "enable unused parameter detection by passing the keyword argument "
                "`find_unused_parameters=True` to `DistributedDataParallel`.")
        if self.broadcast_buffers and self.require_backward_grad_sync:
            for buffer in self.module.buffers():
                broadcast(buffer, src=self.process_group.ranks[0], group=self.process_group)
        output = self.module(*inputs, **kwargs)
        if self.require_backward_grad_sync and ember_autograd.is_grad_enabled():
            self._reset()
            if self.find_unused_parameters:
                used = _parameters_reached(output)
                for p in self._params:
                    if id(p) not in used:
                        self._on_grad_ready(p)
        return output

    def parameters(self, recurse=True):
        return self.module.parameters(recurse)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self.module.named_parameters(prefix=_join(prefix, "module"), recurse=recurse)

    def buffers(self, recurse=True):
        return self.module.buffers(recurse)

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self.module.named_buffers(prefix=_join(prefix, "module"), recurse=recurse)

    def children(self):
        yield self.module

    def modules(self):
        yield self
        yield from self.module.modules()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        return self.module.state_dict(destination=destination, prefix=prefix + "module.", keep_vars=keep_vars)

    def load_state_dict(self, state_dict, strict=True):
        stripped = {k[len("module."):] if k.startswith("module.") else k: v for k, v in state_dict.items()}
        return self.module.load_state_dict(stripped, strict=strict)

    def train(self, mode=True):
        self.module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    @property
    def training(self):
        return self.module.training

    def zero_grad(self, set_to_none=True):
        self.module.zero_grad(set_to_none=set_to_none)

    def to(self, *args, **kwargs):
        self.module.to(*args, **kwargs)
        return self

    def __repr__(self):
        return f"DistributedDataParallel(\n  (module): {self.module!r}\n)"

    @contextlib.contextmanager
    def no_sync(self):
        """Inside, backward accumulates gradients locally; the next synced backward averages them."""
        previous, self.require_backward_grad_sync = self.require_backward_grad_sync, False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    # --- the reduction ---------------------------------------------------------------------

    def _sync_module_states(self):
        root = self.process_group.ranks[0]
        for tensor in [*self.module.parameters(), *self.module.buffers()]:
            broadcast(tensor.detach(), src=root, group=self.process_group)

    def _reset(self):
        for bucket in self._buckets:
            bucket.pending = len(bucket.params)
            bucket.work = None
        self._next_bucket = 0
        self._in_flight = True

    def _on_grad_ready(self, param):
        if not self.require_backward_grad_sync or not self._in_flight:
            return
        bucket = self._bucket_of[id(param)]
        bucket.pending -= 1
        # Start every complete bucket in index order: all ranks must issue them alike.
        while self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].pending == 0:
            self._launch(self._buckets[self._next_bucket])
            self._next_bucket += 1
        if self._next_bucket == len(self._buckets):
            self._finish()

    def _launch(self, bucket):
        bucket.pack()
        pg = self.process_group
        request = pg.comm.Iallreduce(mpi().IN_PLACE, bucket.flat, op=mpi().SUM)
        bucket.work = Work([request], f"DistributedDataParallel gradient all_reduce on ranks {pg.ranks}",
                           pg.timeout)

    def _finish(self):
        for bucket in self._buckets:
            bucket.work.wait()
            bucket.unpack(self.process_group.size())
        self._in_flight = False


def _make_buckets(params, capacity):
    buckets, current, size = [], [], 0
    for p in reversed(params):
        nbytes = p.numel() * p.element_size()
        if current and (size + nbytes > capacity or p.dtype is not current[0].dtype):
            buckets.append(_Bucket(current))
            current, size = [], 0
        current.append(p)
        size += nbytes
    if current:
        buckets.append(_Bucket(current))
    return buckets


def _join(prefix, name):
    return f"{prefix}.{name}" if prefix else name


def _parameters_reached(output):
    """ids of the leaf tensors the autograd graph of ``output`` reaches."""
    roots = [t.grad_fn for t in _tensors_in(output) if getattr(t, "grad_fn", None) is not None]
    seen, reached, stack = set(), set(), list(roots)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            reached.add(id(variable))
        stack.extend(next_node for next_node, _ in node.next_functions)
    return reached


def _tensors_in(value):
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors_in(item)
    elif hasattr(value, "grad_fn"):
        yield value
