"""Recurrent layers at 2 threads: layers large enough for ember-tensor to run their time
loops on two blocks of the batch (hidden 128, batch 32, 8 steps) stay on the fused path
(one autograd node per layer and direction) and give a one-thread run's bits: outputs,
final states and every gradient, over layers, directions and batch_first."""
import numpy as np
import pytest

import ember_nn as nn
import ember_tensor as et

# (layer class, num_layers, bidirectional, batch_first, dtype)
CASES = [
    ("LSTM", 1, False, True, np.float32),      # the benchmark's layer
    ("LSTM", 2, True, False, np.float32),
    ("LSTM", 1, True, True, np.float64),
    ("GRU", 2, True, True, np.float32),
    ("GRU", 1, False, False, np.float64),
    ("RNN", 2, False, False, np.float32),
]
STEPS, BATCH, FEATURES, HIDDEN = 8, 32, 16, 128


def _run(kind, layers, bidirectional, batch_first, dtype):
    et.manual_seed(0)
    module = getattr(nn, kind)(FEATURES, HIDDEN, num_layers=layers, bidirectional=bidirectional,
                               batch_first=batch_first)
    if dtype == np.float64:
        module = module.double()
    rng = np.random.default_rng(0)
    shape = (BATCH, STEPS, FEATURES) if batch_first else (STEPS, BATCH, FEATURES)
    x = et.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)
    out, state = module(x)
    states = list(state) if isinstance(state, tuple) else [state]
    loss = sum((r * et.tensor(rng.standard_normal(tuple(r.shape)).astype(dtype))).sum() for r in [out] + states)
    loss.backward()
    nodes = _node_names(out.grad_fn)
    results = [out, *states, x.grad, *(p.grad for p in module.parameters())]
    return nodes, [r.detach().numpy() for r in results]


def _node_names(root):
    """The class names of every node of the graph below `root`, with repeats."""
    seen, names, todo = set(), [], [root]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(type(node).__name__)
        todo.extend(edge[0] for edge in node.next_functions)
    return names


def _at(threads, run):
    before = et.get_num_threads()
    et.set_num_threads(threads)
    try:
        return run()
    finally:
        et.set_num_threads(before)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}layers-{'bi' if c[2] else 'uni'}-"
                                                      f"{'bf' if c[3] else 'tf'}-{np.dtype(c[4]).name}")
def test_two_threads_give_one_threads_bits_on_the_fused_path(case):
    nodes_1, serial = _at(1, lambda: _run(*case))
    nodes_2, split = _at(2, lambda: _run(*case))
    fused = {"LSTM": "_LSTMLayerBackward", "GRU": "_GRULayerBackward", "RNN": "_RNNLayerBackward"}[case[0]]
    layers_and_directions = case[1] * (2 if case[2] else 1)
    for nodes in (nodes_1, nodes_2):  # one fused node a layer and direction, no composed step
        assert nodes.count(fused) == layers_and_directions
        assert not any(name.startswith(("Sigmoid", "Tanh", "Mm")) for name in nodes), nodes
    assert len(split) == len(serial)
    for got, expected in zip(split, serial):
        assert got.dtype == case[4]
        np.testing.assert_array_equal(got, expected)
