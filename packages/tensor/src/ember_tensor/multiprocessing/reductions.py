"""The reducer multiprocessing's pickler uses for tensors: the storage's shared segment
(its descriptor, passed by multiprocessing) and the tensor's place in it, instead of its
bytes. Only multiprocessing's pickler uses it; `pickle` and `torch.save` still copy.
"""
from multiprocessing.reduction import DupFd, ForkingPickler

from .._backends.cpu import shared_memory, storage as cpu_storage
from .._device import CPU
from .._dtype import _dtype_by_name
from .._tensor import Storage, Tensor

__all__ = ["init_reductions", "reduce_tensor", "rebuild_tensor"]


def reduce_tensor(tensor):
    """(rebuild_tensor, args) for a CPU tensor, its storage moved to shared memory first;
    a CUDA tensor pickles as usual (a copy: ember has no CUDA IPC)."""
    if tensor._device != CPU:
        return tensor.__reduce_ex__(4)
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
                           "autograd does not support crossing process boundaries.  If you just want to "
                           "transfer the data, call detach() on the tensor before serializing (e.g., putting "
                           "it on the queue).")
    tensor.share_memory_()
    buf = tensor._storage.buf
    fd, nbytes = shared_memory.descriptor_of(buf)
    layout = (tuple(tensor.shape), tensor.stride(), cpu_storage.offset_of(tensor._data, buf))
    return rebuild_tensor, (DupFd(fd), nbytes, buf.size, tensor._dtype.name, layout, tensor.requires_grad)


def rebuild_tensor(dup_fd, nbytes, size, dtype_name, layout, requires_grad):
    """The tensor `reduce_tensor` described, over the same shared pages."""
    dtype = _dtype_by_name(dtype_name)
    buf = shared_memory.attach(dup_fd.detach(), nbytes, size, dtype.np)
    shape, strides, offset = layout
    tensor = Tensor._wrap(cpu_storage.as_strided(buf, shape, strides, offset), dtype, CPU, Storage(buf), offset)
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


def init_reductions():
    """Register `reduce_tensor` with multiprocessing's pickler (done at import)."""
    ForkingPickler.register(Tensor, reduce_tensor)
