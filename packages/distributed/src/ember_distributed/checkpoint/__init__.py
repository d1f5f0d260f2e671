"""``torch.distributed.checkpoint``: sharded checkpoints, each rank writing its own shards.

``save(state_dict, checkpoint_id=dir)`` and ``load(state_dict, checkpoint_id=dir)``, with
a metadata file, on ember's safetensors format (no code in the files); a checkpoint
saved on N ranks loads onto any number of ranks, or into full tensors in one process.
See _filesystem.py for the layout.
"""

from . import state_dict
from ._filesystem import FileSystemReader, FileSystemWriter, Metadata, load, save
from .state_dict import get_model_state_dict, set_model_state_dict

__all__ = ["save", "load", "FileSystemWriter", "FileSystemReader", "Metadata", "state_dict", "get_model_state_dict",
           "set_model_state_dict"]
