"""Distributed checkpoints in a directory: each rank writes its own file, rank 0 the metadata.

Layout of ``checkpoint_id/``:

- ``__<rank>_0.safetensors``: the tensors this rank saves, in the safetensors format
  (ember_tensor.serialization.safetensors: no pickled code, so loading runs none). A
  ShardedChunk is saved as its rows under ``<key>@<row_offset>``; a plain tensor is
  taken as replicated and saved once, by the lowest rank (of the group) that has it.
- ``.metadata``: JSON, written by rank 0 once every rank has written: for each key, the
  global shape, dtype and where each block of rows is; plain values (ints, floats,
  strings, lists of them) are stored there too.

Loading reads, for every tensor it is asked to fill, the blocks of rows that overlap the
rows it holds, so a checkpoint saved on N ranks loads onto any number (resharding), into
full tensors as well as into chunks.
"""

import json
import os

import numpy as np

import ember_tensor
from ember_tensor.serialization import safetensors

from .._group import is_initialized, resolve
from .._objects import all_gather_object, broadcast_object_list
from .._sharded_chunk import ShardedChunk

__all__ = ["FileSystemWriter", "FileSystemReader", "save", "load", "Metadata"]

_METADATA = ".metadata"


class FileSystemWriter:
    """Where ``save`` writes: a directory (made if missing)."""

    def __init__(self, path, single_file_per_rank=True, sync_files=True, thread_count=1,
                 per_thread_copy_ahead=10_000_000, cache_staged_state_dict=False, overwrite=True):
        self.path = os.fspath(path)
        self.overwrite = overwrite


class FileSystemReader:
    """Where ``load`` reads: a directory written by ``save``."""

    def __init__(self, path):
        self.path = os.fspath(path)


class Metadata:
    """What a checkpoint holds: ``state_dict_metadata`` maps each key to its entry."""

    def __init__(self, state_dict_metadata):
        self.state_dict_metadata = state_dict_metadata


def _flatten(state_dict, prefix=""):
    """Nested dicts -> {"a.b": value}: an optimizer's and a model's state in one checkpoint."""
    flat = {}
    for key, value in state_dict.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def _is_tensor(value):
    return isinstance(value, ember_tensor.Tensor)


def save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None, process_group=None, no_dist=False,
         use_collectives=True):
    """Save ``state_dict`` (tensors, ShardedChunks, plain values; nested dicts) as a sharded
    checkpoint; every rank of the group must call it. Returns the Metadata."""
    path = _path(checkpoint_id, storage_writer)
    os.makedirs(path, exist_ok=True)
    pg = resolve(process_group) if not no_dist and is_initialized() else None
    rank = pg.ranks[pg.rank()] if pg else 0
    flat = _flatten(state_dict)
    tensors, entries, plain = {}, {}, {}
    for key, value in flat.items():
        if isinstance(value, ShardedChunk):
            local = value.local.detach().cpu().contiguous()
            name = f"{key}@{value.row_offset}"
            tensors[name] = local
            entries[key] = (list(value.global_shape), str(local.dtype), name, value.row_offset, local.shape[0])
        elif _is_tensor(value):
            t = value.detach().cpu().contiguous()
            entries[key] = (list(t.shape), str(t.dtype), key, 0, t.shape[0] if t.dim() else 1)
            tensors[key] = t
        else:
            plain[key] = value
    everyone = [None] * pg.size() if pg else [None]
    if pg:
        all_gather_object(everyone, (rank, sorted(entries)), group=pg)
    else:
        everyone = [(rank, sorted(entries))]
    # a replicated (plain) tensor is written once, by the first rank that has it
    first_holder = {}
    for holder, keys in everyone:
        for key in keys:
            first_holder.setdefault(key, holder)
    mine = {}
    for key, (shape, dtype, name, offset, rows) in entries.items():
        if isinstance(flat[key], ShardedChunk) or first_holder[key] == rank:
            mine[key] = (shape, dtype, name, offset, rows)
    filename = f"__{rank}_0.safetensors"
    safetensors.save_file({mine[k][2]: tensors[mine[k][2]] for k in mine}, os.path.join(path, filename))
    written = [None] * pg.size() if pg else [None]
    if pg:
        all_gather_object(written, (filename, mine), group=pg)
    else:
        written = [(filename, mine)]
    metadata = {"tensors": {}, "values": plain}
    for filename, blocks in written:
        for key, (shape, dtype, name, offset, rows) in blocks.items():
            entry = metadata["tensors"].setdefault(key, {"shape": shape, "dtype": dtype, "blocks": []})
            entry["blocks"].append({"file": filename, "key": name, "row_offset": offset, "rows": rows})
    if rank == (pg.ranks[0] if pg else 0):
        with open(os.path.join(path, _METADATA), "w") as f:
            json.dump(metadata, f)
    if pg:
        broadcast_object_list([None], src=pg.ranks[0], group=pg)  # everyone returns once the metadata exists
    return Metadata(metadata["tensors"])


def load(state_dict, *, checkpoint_id=None, storage_reader=None, planner=None, process_group=None, no_dist=False):
    """Fill ``state_dict``'s tensors and ShardedChunks in place from a checkpoint, whatever
    the number of ranks that saved it; plain values are replaced in the dict."""
    path = _path(checkpoint_id, storage_reader)
    with open(os.path.join(path, _METADATA)) as f:
        metadata = json.load(f)
    files = {}

    def block(entry):
        if entry["file"] not in files:
            files[entry["file"]] = safetensors.load_file(os.path.join(path, entry["file"]))
        return files[entry["file"]][entry["key"]].numpy()

    _fill(state_dict, "", metadata, block)


def _fill(state_dict, prefix, metadata, block):
    for key in list(state_dict):
        name = f"{prefix}{key}"
        value = state_dict[key]
        if isinstance(value, dict):
            _fill(value, name + ".", metadata, block)
            continue
        if not (_is_tensor(value) or isinstance(value, ShardedChunk)):
            if name not in metadata["values"]:
                raise RuntimeError(f"Missing key in checkpoint state_dict: {name}.")
            state_dict[key] = metadata["values"][name]
            continue
        if name not in metadata["tensors"]:
            raise RuntimeError(f"Missing key in checkpoint state_dict: {name}.")
        entry = metadata["tensors"][name]
        target, start = (value.local, value.row_offset) if isinstance(value, ShardedChunk) else (value, 0)
        shape = tuple(entry["shape"])
        if not isinstance(value, ShardedChunk) and tuple(target.shape) != shape:
            raise RuntimeError(f"Size mismatch for {name}: the checkpoint has shape {shape}, the state_dict "
                               f"{tuple(target.shape)}")
        rows = target.shape[0] if target.dim() else 1
        out = np.empty((rows,) + shape[1:], dtype=target.dtype.np) if shape else np.empty((1,), target.dtype.np)
        filled = 0
        for b in entry["blocks"]:
            lo, hi = max(start, b["row_offset"]), min(start + rows, b["row_offset"] + b["rows"])
            if lo < hi:
                data = block(b).reshape((b["rows"],) + shape[1:]) if shape else block(b).reshape(1)
                out[lo - start:hi - start] = data[lo - b["row_offset"]:hi - b["row_offset"]]
                filled += hi - lo
            if filled >= rows and not isinstance(value, ShardedChunk):
                break
        if filled < rows:
            raise RuntimeError(f"The checkpoint does not hold rows {start}:{start + rows} of {name}")
        target.detach().copy_(ember_tensor.from_numpy(out.reshape(tuple(target.shape))))


def _path(checkpoint_id, storage):
    if storage is not None:
        return storage.path
    if checkpoint_id is None:
        raise RuntimeError("`checkpoint_id` must be specified if storage_writer/storage_reader is None.")
    return os.fspath(checkpoint_id)
