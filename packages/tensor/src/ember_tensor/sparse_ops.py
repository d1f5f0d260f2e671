"""Sparse updates the layers above need and PyTorch spells as ``dense.add_(sparse)``:
the surface ember-optim builds on (declared for the layers above, like `nn_ops`).
"""
from .sparse._ops import add_sparse_into_dense_

__all__ = ["add_sparse_into_dense_"]
