"""ember-distributed: ``torch.distributed`` on MPI.

Process groups, collectives, point-to-point, DistributedDataParallel, ``device_mesh``,
``fsdp`` and a launcher, on MPI through mpi4py (the ``mpich`` wheel supplies ``mpiexec``)::

    # mpiexec -n 2 python hello.py   or   python -m ember_distributed.run --nproc-per-node 2 hello.py
    import ember_distributed as dist
    dist.init_process_group("mpi")
    print(f"Hello from process {dist.get_rank()} (out of {dist.get_world_size()})!")

Importing this package does not start MPI: ``init_process_group`` does.
"""

import ember_autograd
import ember_tensor
from ember_tensor.version import check_layers

__version__ = "0.1.0"

_NEEDED_BY = f"ember-distributed {__version__}"
check_layers(__file__, _NEEDED_BY)

from ._group import (  # noqa: E402
    Backend, GroupMember, ProcessGroup, default_pg_timeout, destroy_process_group, get_backend, get_global_rank,
    get_group_rank, get_process_group_ranks, get_rank, get_world_size, group, init_process_group, is_available,
    is_gloo_available, is_initialized, is_mpi_available, is_nccl_available, new_group, new_subgroups,
    new_subgroups_by_enumeration,
)
from ._errors import DistBackendError, DistError, DistNetworkError, DistStoreError, QueueEmptyError  # noqa: E402
from ._store import FileStore, HashStore, PrefixStore, Store, TCPStore  # noqa: E402
from ._work import DistributedTimeoutError, Work  # noqa: E402
from ._collectives import (  # noqa: E402
    ReduceOp, all_gather, all_gather_into_tensor, all_gather_single, all_reduce, all_to_all, all_to_all_single,
    barrier, broadcast, gather, monitored_barrier, reduce, reduce_scatter, reduce_scatter_single,
    reduce_scatter_tensor, scatter,
)
from ._environment import get_node_local_rank, is_torchelastic_launched  # noqa: E402
from .device_mesh import DeviceMesh, init_device_mesh  # noqa: E402
from ._p2p import P2POp, batch_isend_irecv, irecv, isend, recv, send  # noqa: E402
from ._objects import all_gather_object, broadcast_object_list, gather_object, scatter_object_list  # noqa: E402
from ._spawn import ProcessExitedException, ProcessRaisedException, spawn  # noqa: E402
from .ddp import DistributedDataParallel  # noqa: E402

__all__ = [
    "Backend", "GroupMember", "ProcessGroup", "default_pg_timeout", "destroy_process_group", "get_backend",
    "get_global_rank", "get_group_rank", "get_process_group_ranks", "get_rank", "get_world_size", "group",
    "init_process_group", "is_available", "is_gloo_available", "is_initialized", "is_mpi_available",
    "is_nccl_available", "new_group", "new_subgroups", "new_subgroups_by_enumeration", "DistributedTimeoutError",
    "Work", "ReduceOp", "all_gather", "all_gather_into_tensor", "all_reduce", "all_to_all", "all_to_all_single",
    "barrier", "broadcast", "gather", "monitored_barrier", "reduce", "reduce_scatter", "reduce_scatter_tensor",
    "scatter", "irecv", "isend", "recv", "send", "P2POp", "batch_isend_irecv", "all_gather_object",
    "broadcast_object_list", "gather_object", "scatter_object_list", "spawn", "ProcessExitedException",
    "ProcessRaisedException", "DistributedDataParallel", "DistError", "DistBackendError", "DistStoreError",
    "QueueEmptyError",
    "DistNetworkError", "Store", "TCPStore", "FileStore", "HashStore", "PrefixStore", "all_gather_single",
    "reduce_scatter_single", "get_node_local_rank", "is_torchelastic_launched", "DeviceMesh", "init_device_mesh",
]
