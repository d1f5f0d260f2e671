"""Small module trees the Module-contract tests share (test_module.py, test_module_hooks.py)."""
import ember_tensor as torch
import ember_nn as nn
from ember_nn import Parameter


class Leaf(nn.Module):
    """A module with one parameter, one persistent and one non-persistent buffer."""

    def __init__(self, n=2):
        super().__init__()
        self.weight = Parameter(torch.ones(n))
        self.register_buffer("running", torch.zeros(n))
        self.register_buffer("scratch", torch.zeros(1), persistent=False)

    def forward(self, x):
        return x * self.weight

    def extra_repr(self):
        return f"n={self.weight.shape[0]}"


class Tree(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = Leaf()
        self.block = nn.Sequential(Leaf(), Leaf(3))
        self.bias = Parameter(torch.zeros(2))

    def forward(self, x):
        return self.block[0](self.first(x)) + self.bias
