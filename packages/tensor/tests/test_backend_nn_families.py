"""The nn row families (softmax, loss, normalization, and linear in matmul) are the same on
both backends: the same function names with the same parameters, so that an op calls
`_backends.get(device).<family>.<fn>` without asking which device it is on."""
import importlib
import inspect

import pytest

import ember_tensor as et
from ember_tensor import _backends
from ember_tensor._backends._families import FAMILIES as DECLARED

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

FAMILIES = ["softmax", "loss", "normalization", "matmul"]


def _family(device, name):
    return importlib.import_module(f"ember_tensor._backends.{device}.{name}")


@pytest.mark.parametrize("name", FAMILIES)
def test_a_family_has_the_same_functions_and_parameters_on_cpu_and_cuda(name):
    cpu, cuda = _family("cpu", name), _family("cuda", name)
    assert sorted(cpu.__all__) == sorted(cuda.__all__)
    for fn in cpu.__all__:
        cpu_params = list(inspect.signature(getattr(cpu, fn)).parameters)
        assert cpu_params == list(inspect.signature(getattr(cuda, fn)).parameters), fn


@pytest.mark.parametrize("name", FAMILIES)
def test_a_family_is_declared_and_loads_through_its_backend_package(name):
    assert name in DECLARED
    assert getattr(_backends.get(et.device("cpu")), name) is _family("cpu", name)
