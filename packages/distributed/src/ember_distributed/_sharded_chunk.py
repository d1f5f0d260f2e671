"""ShardedChunk: one rank's rows of a tensor sharded along dim 0 (FSDP's shards, as
state dicts and distributed checkpoints see them)."""

__all__ = ["ShardedChunk"]


class ShardedChunk:
    """Rows ``[row_offset, row_offset + local.shape[0])`` of a tensor of ``global_shape``.

    ``local`` may be the sharded parameter itself: loading into the chunk (``load_state_dict``
    of FSDP, ``checkpoint.load``) writes into the parameter.
    """

    def __init__(self, local, global_shape, row_offset):
        self.local, self.global_shape, self.row_offset = local, tuple(global_shape), int(row_offset)

    def __repr__(self):
        return (f"ShardedChunk(rows {self.row_offset}:{self.row_offset + self.local.shape[0]} of "
                f"{self.global_shape})")
