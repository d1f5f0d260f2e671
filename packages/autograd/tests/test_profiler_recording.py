"""profile_memory, record_shapes, with_stack and with_flops against PyTorch's profiler: the
same table columns, PyTorch's FLOP counts, the bytes an op allocates, the caller's stack."""
import re

import pytest

import ember_tensor as et
from ember_autograd import profiler
from ember_autograd.scheduled_profiler import profile as scheduled_profile

torch = pytest.importorskip("torch")


def _headers(table):
    """The column headers of a profiler table (its second line)."""
    return re.split(r"\s{2,}", table.splitlines()[1].strip())


def _program(lib):
    x, w = lib.ones(64, 32), lib.ones(32, 16)
    y = lib.mm(x, w)
    return y * 2


def _torch_profile(fn, **options):
    from torch.profiler import ProfilerActivity
    with torch.profiler.profile(activities=[ProfilerActivity.CPU], **options) as prof:
        fn()
    return prof


@pytest.mark.parametrize("options, grouping", [
    (dict(profile_memory=True), {}),
    (dict(profile_memory=True, record_shapes=True, with_flops=True), dict(group_by_input_shape=True)),
    (dict(with_flops=True), {}),
    (dict(record_shapes=True), dict(group_by_input_shape=True)),
])
def test_table_columns_are_pytorchs(options, grouping):
    with profiler.profile(**options) as prof:
        _program(et)
    ours = _headers(prof.key_averages(**grouping).table())
    theirs = _headers(_torch_profile(lambda: _program(torch), **options).key_averages(**grouping).table())
    assert ours == theirs


def _ember_flops(fn):
    with profiler.profile(with_flops=True) as prof:
        fn()
    return sum(e.flops for e in prof.function_events)


def _pytorch_flops(fn):
    return sum(e.flops for e in _torch_profile(fn, with_flops=True).events() if e.flops)


MATMUL_SHAPES = [((64, 32), (32, 16)), ((3, 5, 4), (3, 4, 6)), ((2, 5, 4), (4, 6)), ((5, 4), (2, 4, 3)), ((1, 5, 4), (3, 4, 6)),
                 ((2, 1, 3, 4), (5, 4, 2)), ((4,), (4, 3)), ((5, 4), (4,)), ((4,), (4,)), ((4,), (2, 3, 4, 5))]


@pytest.mark.parametrize("a, b", MATMUL_SHAPES)
def test_matmul_flops_equal_pytorchs(a, b):
    assert _ember_flops(lambda: et.ones(*a) @ et.ones(*b)) == _pytorch_flops(lambda: torch.ones(*a) @ torch.ones(*b))


@pytest.mark.parametrize("name, shapes", [
    ("mm", [(6, 4), (4, 3)]), ("addmm", [(6, 3), (6, 4), (4, 3)]), ("bmm", [(2, 6, 4), (2, 4, 3)]),
    ("baddbmm", [(2, 6, 3), (2, 6, 4), (2, 4, 3)]), ("mul", [(6, 4), (6, 4)]), ("add", [(6, 4), (4,)]),
])
def test_gemm_and_elementwise_flops_equal_pytorchs(name, shapes):
    ours = _ember_flops(lambda: getattr(et, name)(*[et.ones(*s) for s in shapes]))
    theirs = _pytorch_flops(lambda: getattr(torch, name)(*[torch.ones(*s) for s in shapes]))
    assert ours == theirs > 0


@pytest.mark.parametrize("x, w, kwargs", [
    ((2, 3, 8, 8), (4, 3, 3, 3), {}),
    ((1, 4, 9, 7), (6, 2, 3, 2), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)),
    ((1, 2, 6, 6), (2, 2, 1, 1), dict(padding=1)),
])
def test_conv2d_flops_equal_pytorchs(x, w, kwargs):
    import ember_nn.functional as F

    ours = _ember_flops(lambda: F.conv2d(et.ones(*x), et.ones(*w), **kwargs))
    theirs = _pytorch_flops(lambda: torch.nn.functional.conv2d(torch.ones(*x), torch.ones(*w), **kwargs))
    assert ours == theirs > 0


def test_flops_of_ops_inside_a_counted_op_are_not_counted_twice():
    with profiler.profile(with_flops=True) as prof:
        et.addmm(et.ones(6, 3), et.ones(6, 4), et.ones(4, 3))
    counted = [(e.name, e.flops) for e in prof.function_events if e.flops]
    assert counted == [("aten::addmm", 2 * 6 * 4 * 3)]


def test_memory_is_the_bytes_of_the_output_as_in_pytorch():
    x, tx = et.ones(1000), torch.ones(1000)
    with profiler.profile(profile_memory=True) as prof:
        x.exp()
    exp = next(e for e in prof.function_events if e.name == "aten::exp")
    theirs = next(e for e in _torch_profile(lambda: tx.exp(), profile_memory=True).events() if e.name == "aten::exp")
    assert exp.cpu_memory_usage == exp.self_cpu_memory_usage == theirs.cpu_memory_usage == 4000


def test_memory_of_a_nested_op_is_its_own_and_its_parents_total():
    with profiler.profile(profile_memory=True) as prof:
        with profiler.record_function("block"):
            y = et.ones(8, 4, dtype=et.float64) * 2
    block = next(e for e in prof.function_events if e.name == "block")
    mul = next(e for e in prof.function_events if e.name == "aten::mul")
    assert mul.self_cpu_memory_usage == 8 * 4 * 8
    assert block.self_cpu_memory_usage == 0 and block.cpu_memory_usage == 8 * 4 * 8
    del y


def test_views_and_in_place_ops_allocate_nothing():
    x = et.ones(4, 4)
    with profiler.profile(profile_memory=True) as prof:
        x.view(16)
        x.t()
        x.add_(1)
    assert {"aten::view", "aten::t", "aten::add_"} <= {e.name for e in prof.function_events}
    assert all(e.cpu_memory_usage == 0 for e in prof.function_events)


def test_frees_are_negative_and_outside_ops_become_memory_events():
    x = et.ones(256)
    with profiler.profile(profile_memory=True) as prof:
        y = x.exp()
        del y  # freed while no op runs
        with profiler.record_function("drop"):
            z = x.neg()
            del z  # freed inside the range
    names = [(e.name, e.self_cpu_memory_usage) for e in prof.function_events]
    assert ("aten::exp", 1024) in names and ("[memory]", -1024) in names
    drop = next(e for e in prof.function_events if e.name == "drop")
    assert drop.self_cpu_memory_usage == -1024 and drop.cpu_memory_usage == 0
    assert "[memory]" in [e.key for e in prof.key_averages()]


def test_stack_names_the_calling_test_and_skips_embers_frames():
    import ember_nn.functional as F

    def caller():
        return F.relu(et.ones(3))

    with profiler.profile(with_stack=True) as prof:
        caller()
    relu = next(e for e in prof.function_events if e.name == "aten::relu")
    assert re.fullmatch(r".*test_profiler_recording\.py\(\d+\): caller", relu.stack[0])
    assert "test_stack_names_the_calling_test_and_skips_embers_frames" in relu.stack[1]
    assert not any("ember_" in entry for entry in relu.stack)
    table = prof.key_averages(group_by_stack_n=2).table()
    assert "Source Location" in _headers(table) and "caller" in table


def test_group_by_stack_n_separates_call_sites():
    x = et.ones(3)
    with profiler.profile(with_stack=True) as prof:
        x.exp()
        x.exp()
    assert [r.count for r in prof.key_averages() if r.key == "aten::exp"] == [2]
    rows = [r for r in prof.key_averages(group_by_stack_n=1) if r.key == "aten::exp"]
    assert [r.count for r in rows] == [1, 1] and rows[0].stack != rows[1].stack


def test_input_shapes_of_the_recorded_op_are_pytorchs():
    with profiler.profile(record_shapes=True) as prof:
        _program(et)
    theirs = _torch_profile(lambda: _program(torch), record_shapes=True).events()
    for name in ("aten::mm", "aten::mul"):
        ours = next(e for e in prof.function_events if e.name == name)
        assert ours.input_shapes == next(e for e in theirs if e.name == name).input_shapes


def test_nothing_extra_is_recorded_when_the_options_are_off():
    with profiler.profile() as prof:
        _program(et)
        assert profiler._Options.memory_watch is None and profiler._Options.stack_recorder is None
    assert all(e.flops == 0 and e.stack == [] and e.cpu_memory_usage == 0 for e in prof.function_events)
    assert _headers(prof.key_averages().table())[-1] == "# of Calls"


def test_torch_profiler_passes_the_options_through():
    with scheduled_profile(profile_memory=True, with_flops=True, with_stack=True) as prof:
        _program(et)
    mm = next(e for e in prof.events() if e.name == "aten::mm")
    assert mm.flops == 2 * 64 * 32 * 16 and mm.self_cpu_memory_usage == 64 * 16 * 4 and mm.stack
    assert {"CPU Mem", "Self CPU Mem", "Total KFLOPs"} <= set(_headers(prof.key_averages().table()))


def test_cuda_memory_columns_count_device_bytes():
    if not et.cuda.is_available():
        pytest.skip("no CUDA device (nor simulator)")
    a = et.ones(4, 8, device="cuda")
    with profiler.profile(profile_memory=True, use_device="cuda") as prof:
        a + 1
    add = next(e for e in prof.function_events if e.name == "aten::add")
    assert add.self_device_memory_usage == 4 * 8 * 4 and add.self_cpu_memory_usage == 0
    headers = _headers(prof.key_averages().table())
    assert headers[headers.index("Self CPU Mem") + 1:headers.index("# of Calls")] == ["CUDA Mem", "Self CUDA Mem"]


def test_memory_profiling_passes_over_sparse_tensors():
    s = et.sparse_coo_tensor(et.tensor([[0, 1], [1, 0]]), et.tensor([1.0, 2.0]), (2, 2))
    with profiler.profile(profile_memory=True) as prof:
        et.sparse.mm(s, et.ones(2, 3))
    mm = next(e for e in prof.function_events if e.name == "aten::sparse_mm")
    assert mm.self_cpu_memory_usage == 2 * 3 * 4
