"""``torch.distributed.device_mesh``: ranks laid out as an n-dimensional array.

A DeviceMesh of shape ``(2, 4)`` over 8 ranks has one process group per row and one per
column: along dimension 1 (``"tp"``, say) rank 5 talks to ranks 4-7, along dimension 0
(``"dp"``) to ranks 1 and 5. Sharding strategies name a dimension instead of building
groups themselves: HSDP shards over one dimension and replicates over the other.

Every rank of the world must make the mesh (its groups are made collectively, one MPI
``Split`` per dimension). ``mesh["dp"]`` slices out the sub-mesh through this rank along
the named dimensions; it reuses the parent's groups, so slicing communicates nothing.
"""

import math

import numpy as np

import ember_tensor

from ._group import GroupMember, ProcessGroup, _default, get_rank
from ._mpi import mpi
from ._work import guarded

__all__ = ["DeviceMesh", "init_device_mesh"]


class DeviceMesh:
    """Ranks arranged as an n-d array, with one process group per dimension for this rank.

    Args:
        device_type: ``"cpu"`` or ``"cuda"`` (a device type, not a device with an index).
        mesh: the global ranks, as a (nested) list, NumPy array or integer tensor.
        mesh_dim_names: a name per dimension (``("dp", "tp")``), needed to slice with ``mesh["dp"]``.

    >>> # on 4 ranks: mesh = DeviceMesh("cpu", [[0, 1], [2, 3]], mesh_dim_names=("dp", "tp"))
    >>> # mesh["tp"].get_group() is the group of this rank's row
    """

    def __init__(self, device_type, mesh, *, mesh_dim_names=None, backend_override=None, _init_backend=True):
        _check_device_type(device_type)
        self._device_type = device_type
        array = np.array(mesh.tolist() if hasattr(mesh, "tolist") else mesh, dtype=np.int64)
        self._mesh = array
        self._mesh_dim_names = _check_names(mesh_dim_names, array.ndim)
        world = _default()
        if array.size > world.size():
            raise RuntimeError(f"Mesh should not be bigger than default world size {world.size()}, but found "
                               f"{array.size} ranks!")
        if len(set(array.reshape(-1).tolist())) != array.size:
            raise AssertionError("Please use a non-overlapping layout when creating a DeviceMesh.")
        me = world.rank()
        where = np.argwhere(array == me)
        self._coordinate = tuple(int(i) for i in where[0]) if len(where) else None
        self._groups = [_make_dim_group(world, array, dim, self._coordinate) for dim in range(array.ndim)]

    @classmethod
    def _sliced(cls, parent, dims):
        """The sub-mesh of ``parent`` through this rank along ``dims`` (shares the parent's groups)."""
        mesh = cls.__new__(cls)
        mesh._device_type = parent._device_type
        index = tuple(slice(None) if d in dims else parent._coordinate[d] for d in range(parent.ndim))
        mesh._mesh = parent._mesh[index]
        mesh._mesh_dim_names = tuple(parent._mesh_dim_names[d] for d in dims)
        mesh._coordinate = tuple(parent._coordinate[d] for d in dims)
        mesh._groups = [parent._groups[d] for d in dims]
        return mesh

    @property
    def device_type(self):
        """The device type the mesh was made for (``"cpu"``, ``"cuda"``)."""
        return self._device_type

    @property
    def mesh(self):
        """The global ranks, as an integer tensor of the mesh's shape."""
        return ember_tensor.from_numpy(self._mesh.copy())

    @property
    def mesh_dim_names(self):
        """The dimensions' names, or None."""
        return self._mesh_dim_names

    @property
    def ndim(self):
        """The number of mesh dimensions."""
        return self._mesh.ndim

    @property
    def shape(self):
        """The mesh's shape."""
        return tuple(self._mesh.shape)

    def size(self, mesh_dim=None):
        """The number of ranks in the mesh, or along ``mesh_dim``."""
        return self._mesh.size if mesh_dim is None else self._mesh.shape[mesh_dim]

    def get_rank(self):
        """This process's global rank."""
        return get_rank()

    def get_coordinate(self):
        """This rank's index in the mesh (a tuple), or None when it is not in the mesh."""
        return self._coordinate

    def get_group(self, mesh_dim=None):
        """The process group of this rank along ``mesh_dim`` (an index or a name).

        Raises RuntimeError for a mesh of more than one dimension when no dimension is named.
        """
        if self.ndim > 1 and mesh_dim is None:
            raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions",
                               "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.",
                               "If you want to get the list of all the ProcessGroups in the DeviceMesh,"
                               "please use `get_all_groups()` instead.")
        return self._groups[self._dim_index(mesh_dim or 0)]

    def get_all_groups(self):
        """This rank's process group along each dimension."""
        return list(self._groups)

    def get_local_rank(self, mesh_dim=None):
        """This rank's index along ``mesh_dim`` (an index or a name)."""
        if self.ndim > 1 and mesh_dim is None:
            raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions",
                               "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.")
        return self._groups[self._dim_index(mesh_dim or 0)].rank()

    def _dim_index(self, mesh_dim):
        if isinstance(mesh_dim, str):
            if self._mesh_dim_names is None:
                raise KeyError("No `mesh_dim_names` found.")
            if mesh_dim not in self._mesh_dim_names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist.",
                               f"Available mesh dimensions are: mesh_dim_names={self._mesh_dim_names}")
            return self._mesh_dim_names.index(mesh_dim)
        return int(mesh_dim)

    def __getitem__(self, mesh_dim_names):
        """The sub-mesh through this rank along the named dimensions (``mesh["dp"]``)."""
        if self._mesh_dim_names is None:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else tuple(mesh_dim_names)
        if names == self._mesh_dim_names:
            return self
        if not all(n in self._mesh_dim_names for n in names):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names are "
                           f"{list(self._mesh_dim_names)}.")
        dims = [self._mesh_dim_names.index(n) for n in names]
        if dims != sorted(dims):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Mesh dim indices should be in ascending "
                           "order.")
        if self._coordinate is None:
            raise RuntimeError(f"Rank {get_rank()} is not part of the mesh {self!r}: it has no sub-mesh")
        return DeviceMesh._sliced(self, dims)

    def __repr__(self):
        shape = (f"({', '.join(f'{k}={v}' for k, v in zip(self._mesh_dim_names, self.shape))})"
                 if self._mesh_dim_names else f"{self.shape}")
        strides = tuple(s // self._mesh.itemsize for s in np.ascontiguousarray(self._mesh).strides)
        return f"DeviceMesh({shape}, '{self._device_type}', stride={strides})"

    def __eq__(self, other):
        return (isinstance(other, DeviceMesh) and self._device_type == other._device_type
                and self._mesh_dim_names == other._mesh_dim_names and np.array_equal(self._mesh, other._mesh))

    def __hash__(self):
        return hash((self._device_type, self._mesh_dim_names, self._mesh.tobytes(), self._mesh.shape))


def _check_device_type(device_type):
    if not isinstance(device_type, str) or ":" in device_type:
        raise RuntimeError(f"Device type with index is not supported but got {device_type}. ",
                           "If you maintained a 'torch.device' object, it's recommended to pass in 'device.type'.")


def _check_names(names, ndim):
    if names is None:
        return None
    names = tuple(names)
    if len(set(names)) != len(names):
        raise RuntimeError(f"Each mesh_dim_name must be unique. Found repeated mesh_dim_name in mesh_dim_names "
                           f"{names}")
    if len(names) != ndim:
        raise RuntimeError(f"mesh_shape and mesh_dim_names should have same length! Found len(mesh_dim_names): "
                           f"{len(names)} and len(mesh_shape):{ndim}.")
    return names


def _make_dim_group(world, array, dim, coordinate):
    """This rank's group along ``dim``: the ranks that share its other coordinates.

    One ``Split`` makes every group of the dimension at once (the colour is the index of
    the rank's line along ``dim``); every rank of the world takes part, in the mesh or not.
    """
    lines = np.moveaxis(array, dim, -1).reshape(-1, array.shape[dim])
    MPI = mpi()
    if coordinate is None:
        guarded(world.comm, "init_device_mesh", world.timeout, lambda: world.comm.Split(MPI.UNDEFINED, 0))
        return GroupMember.NON_GROUP_MEMBER
    me = world.rank()
    line = next(i for i, ranks in enumerate(lines) if me in ranks)
    ranks = [int(r) for r in lines[line]]
    comm = guarded(world.comm, "init_device_mesh", world.timeout, lambda: world.comm.Split(line, ranks.index(me)))
    return ProcessGroup(comm, ranks, world.timeout, world.backend)


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """A DeviceMesh of ``mesh_shape`` over ranks 0..prod(mesh_shape)-1 in row-major order.

    >>> # on 4 ranks: mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("replicate", "shard"))
    >>> # mesh["shard"].size() == 2; mesh.get_local_rank("replicate") is this rank's row
    """
    if mesh_dim_names is not None:
        _check_names(mesh_dim_names, len(mesh_shape))
    _check_device_type(device_type)
    ranks = np.arange(math.prod(mesh_shape), dtype=np.int64).reshape(tuple(mesh_shape))
    return DeviceMesh(device_type, ranks, mesh_dim_names=mesh_dim_names, backend_override=backend_override)
