"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""
from collections import OrderedDict

import pytest

import ember_tensor as torch
import ember_nn as nn
from ember_nn import Parameter


class AddConst(nn.Module):
    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, x):
        return x + self.value

    def extra_repr(self):
        return f"value={self.value}"


def chain_of(*values):
    return nn.Sequential(*(AddConst(v) for v in values))


def values_of(seq):
    return [m.value for m in seq]


def test_sequential_runs_in_order_and_names_by_position():
    seq = nn.Sequential(AddConst(1), nn.Sequential(AddConst(10)))
    assert seq(torch.zeros(1)).tolist() == [11.0]
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1", "1.0"]


def test_sequential_from_ordered_dict_keeps_names():
    seq = nn.Sequential(OrderedDict([("a", AddConst(1)), ("b", AddConst(2))]))
    assert list(seq._modules) == ["a", "b"] and seq.b.value == 2


SEQUENTIAL_EDITS = [
    # (edit, resulting values)
    (lambda s: s.append(AddConst(4)), [1, 2, 3, 4]),
    (lambda s: s.insert(0, AddConst(0)), [0, 1, 2, 3]),
    (lambda s: s.insert(-1, AddConst(9)), [1, 2, 9, 3]),
    (lambda s: s.extend([AddConst(4), AddConst(5)]), [1, 2, 3, 4, 5]),
    (lambda s: s.__delitem__(1), [1, 3]),
    (lambda s: s.__delitem__(slice(0, 2)), [3]),
    (lambda s: s.__setitem__(-1, AddConst(7)), [1, 2, 7]),
    (lambda s: s.pop(0), [2, 3]),
]


@pytest.mark.parametrize("edit, expected", SEQUENTIAL_EDITS)
def test_sequential_edits(edit, expected):
    seq = chain_of(1, 2, 3)
    edit(seq)
    assert values_of(seq) == expected
    assert list(seq._modules) == [str(i) for i in range(len(expected))]


def test_sequential_indexing_slicing_and_operators():
    seq = chain_of(1, 2, 3)
    assert seq[0].value == 1 and seq[-1].value == 3 and len(seq) == 3
    sliced = seq[1:]
    assert isinstance(sliced, nn.Sequential) and values_of(sliced) == [2, 3]
    assert values_of(seq + chain_of(4)) == [1, 2, 3, 4]
    assert values_of(chain_of(1) * 3) == [1, 1, 1]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        seq[3]
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential class"):
        seq + 1
    with pytest.raises(ValueError, match="Non-positive multiplication factor 0"):
        seq * 0


def test_module_list_behaves_like_a_list():
    layers = nn.ModuleList([AddConst(i) for i in range(3)])
    assert len(layers) == 3 and [m.value for m in layers] == [0, 1, 2]
    layers.append(AddConst(3))
    layers.insert(1, AddConst(9))
    assert [m.value for m in layers] == [0, 9, 1, 2, 3]
    del layers[1]
    assert [m.value for m in layers] == [0, 1, 2, 3]
    assert list(layers._modules) == ["0", "1", "2", "3"]
    assert [m.value for m in layers[1:3]] == [1, 2] and layers[-1].value == 3
    layers += [AddConst(4)]
    assert layers.pop(-1).value == 4 and len(layers) == 4
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable, but got int"):
        layers.extend(3)
    with pytest.raises(IndexError, match="index 10 is out of range"):
        layers[10]


def test_module_list_repr_collapses_repeats():
    layers = nn.ModuleList([AddConst(0), AddConst(1), AddConst(1), AddConst(2)])
    assert repr(layers) == (
        "ModuleList(\n"
        "  (0): AddConst(value=0)\n"
        "  (1-2): 2 x AddConst(value=1)\n"
        "  (3): AddConst(value=2)\n"
        ")")
    assert repr(nn.ModuleList()) == "ModuleList()"


def test_module_dict_behaves_like_a_dict():
    d = nn.ModuleDict({"a": AddConst(1)})
    d["b"] = AddConst(2)
    d.update([("c", AddConst(3))])
    assert list(d.keys()) == ["a", "b", "c"] and "b" in d and len(d) == 3
    assert [k for k, _ in d.items()] == ["a", "b", "c"]
    assert d.pop("a").value == 1 and list(d) == ["b", "c"]
    assert [n for n, _ in d.named_modules()] == ["", "b", "c"]
    with pytest.raises(ValueError, match="element #0 has length 3; 2 is required"):
        d.update([("x", 1, 2)])
    d.clear()
    assert len(d) == 0


def test_parameter_list_wraps_tensors_and_registers():
    params = nn.ParameterList([torch.ones(2), Parameter(torch.zeros(3))])
    params.append(torch.ones(1))
    assert len(params) == 3 and all(isinstance(p, Parameter) for p in params)
    assert [n for n, _ in params.named_parameters()] == ["0", "1", "2"]
    assert params[-1].shape == (1,)
    assert "(0): Parameter containing: [torch.float32 of size 2]" in repr(params)
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        params(torch.ones(1))


def test_parameter_dict_wraps_tensors_and_registers():
    params = nn.ParameterDict({"w": torch.ones(2)})
    params["b"] = torch.zeros(1)
    assert list(params.keys()) == ["w", "b"] and isinstance(params["b"], Parameter)
    assert [n for n, _ in params.named_parameters()] == ["w", "b"]
    assert params.pop("w").shape == (2,) and list(params) == ["b"]
    assert params.get("missing") is None


@pytest.mark.parametrize("make, text", [
    (lambda: nn.ParameterList([torch.ones(2), torch.ones(2, 3, dtype=torch.float64)]),
     "ParameterList(\n    (0): Parameter containing: [torch.float32 of size 2]\n"
     "    (1): Parameter containing: [torch.float64 of size 2x3]\n)"),
    (lambda: nn.ParameterList([torch.ones(2)]), "ParameterList(  (0): Parameter containing: [torch.float32 of size 2])"),
    (lambda: nn.ParameterDict({"a": torch.ones(2)}), "ParameterDict(  (a): Parameter containing: [torch.FloatTensor of size 2])"),
])
def test_parameter_container_repr_is_pytorchs(make, text):
    assert repr(make()) == text


def test_containers_inside_a_model_give_dotted_state_dict_keys():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleDict({"x": nn.ParameterList([torch.ones(1)])})
            self.scales = nn.ParameterDict({"s": torch.ones(2)})

    assert list(Model().state_dict()) == ["heads.x.0", "scales.s"]
