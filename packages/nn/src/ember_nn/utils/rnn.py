"""``torch.nn.utils.rnn``: PackedSequence and the functions that make and undo it.

A PackedSequence holds a batch of variable-length sequences without padding: ``data``
stacks, time step by time step, the entries of the sequences still running (longest
first), and ``batch_sizes[t]`` says how many there are at step t. Every function here is
made of differentiable ops, so gradients flow through packing and unpacking.
"""
from collections import namedtuple

import numpy as np

import ember_tensor as et

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence", "pack_sequence",
           "unpack_sequence", "unpad_sequence", "invert_permutation"]


class PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """(data, batch_sizes, sorted_indices, unsorted_indices), as PyTorch's."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes, self.sorted_indices,
                                                         self.unsorted_indices)

    @property
    def is_cuda(self):
        return self.data.is_cuda


def invert_permutation(permutation):
    """The permutation that undoes ``permutation`` (None stays None), on its device."""
    if permutation is None:
        return None
    order = np.asarray(permutation.tolist(), dtype=np.int64)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(len(order))
    return et.from_numpy(inverse).to(permutation.device)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) (or (B, T, *) with ``batch_first``) of sequences of ``lengths``."""
    lengths_list = [int(v) for v in (lengths.tolist() if hasattr(lengths, "tolist") else lengths)]
    if any(n <= 0 for n in lengths_list):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths_list, lengths_list[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
        order = list(range(len(lengths_list)))
    else:
        order = sorted(range(len(lengths_list)), key=lambda i: -lengths_list[i])  # stable: ties keep order
        sorted_indices = et.tensor(order, dtype=et.int64, device=input.device)  # on the data's device, as PyTorch's
    if batch_first:
        input = input.transpose(0, 1)
    if max(lengths_list) > input.shape[0]:
        raise RuntimeError(f"Expected sequence length to be larger than or equal to {max(lengths_list)}, but got "
                           f"{input.shape[0]}")
    sorted_lengths = [lengths_list[i] for i in order]
    batch_sizes = [sum(1 for n in sorted_lengths if n > t) for t in range(sorted_lengths[0])]
    x = input if sorted_indices is None else input.index_select(1, sorted_indices)
    data = et.cat([x[t, :size] for t, size in enumerate(batch_sizes)])
    return PackedSequence(data, et.tensor(batch_sizes, dtype=et.int64, device="cpu"), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo pack_padded_sequence: (padded batch, lengths), in the original batch order."""
    data, batch_sizes = sequence.data, [int(v) for v in sequence.batch_sizes.tolist()]
    batch = batch_sizes[0]
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {steps}")
    rows, offset = [], 0
    tail = tuple(data.shape[1:])
    for size in batch_sizes:
        part = data[offset:offset + size]
        if size < batch:
            part = et.cat([part, et.full((batch - size,) + tail, padding_value, dtype=data.dtype, device=data.device)])
        rows.append(part)
        offset += size
    for _ in range(steps, total_length or steps):
        rows.append(et.full((batch,) + tail, padding_value, dtype=data.dtype, device=data.device))
    padded = et.stack(rows)
    lengths = np.array([sum(1 for size in batch_sizes if size > b) for b in range(batch)], dtype=np.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths[np.asarray(sequence.unsorted_indices.tolist())]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, et.from_numpy(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of different lengths (L_i, *) into one padded (T, B, *) tensor."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        if missing:
            pad = et.full((missing,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
            s = et.cat([s, pad] if padding_side == "right" else [pad, s])
        padded.append(s)
    return et.stack(padded, dim=0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of sequences of different lengths."""
    lengths = et.tensor([s.shape[0] for s in sequences], dtype=et.int64, device="cpu")  # lengths live on the CPU
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of unpadded sequences of a padded batch."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, lengths.tolist())]


def unpack_sequence(packed_sequences):
    """The list of sequences of a PackedSequence."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
