"""ember-tensor indexing workloads: gather/scatter_add/index_select on 1e6 elements,
advanced indexing (read and write), sort and topk on 1e6 float32."""
from ._harness import Workload

N = 1_000_000
ROWS, COLS = 1000, 1000  # 2-d workloads hold N elements too


def _lib(name):
    if name == "ember":
        import ember_tensor as lib
    else:
        import torch as lib
    return lib


def _gather(lib):
    t = _lib(lib)
    a = t.rand(ROWS, COLS)
    index = t.randint(0, COLS, (ROWS, COLS))
    return lambda: a.gather(1, index)


def _scatter_add(lib):
    t = _lib(lib)
    a = t.zeros(ROWS, COLS)
    src = t.rand(ROWS, COLS)
    index = t.randint(0, COLS, (ROWS, COLS))
    return lambda: a.scatter_add(1, index, src)


def _index_select(lib):
    t = _lib(lib)
    a = t.rand(ROWS, COLS)
    index = t.randint(0, ROWS, (ROWS,))
    return lambda: a.index_select(0, index)


def _advanced_read(lib):
    t = _lib(lib)
    a = t.rand(N)
    index = t.randint(0, N, (N,))
    return lambda: a[index]


def _advanced_read_2d(lib):
    t = _lib(lib)
    a = t.rand(ROWS, COLS)
    rows, cols = t.randint(0, ROWS, (N,)), t.randint(0, COLS, (N,))
    return lambda: a[rows, cols]


def _mask_read(lib):
    t = _lib(lib)
    a = t.rand(N)
    mask = a > 0.5
    return lambda: a[mask]


def _advanced_write(lib):
    t = _lib(lib)
    a = t.rand(N)
    index = t.randint(0, N, (N,))
    values = t.rand(N)

    def write():
        a[index] = values
    return write


def _sort(lib):
    t = _lib(lib)
    a = t.rand(N)
    return lambda: a.sort()


def _topk(lib):
    t = _lib(lib)
    a = t.rand(N)
    return lambda: a.topk(10)


def _cumsum(lib):
    t = _lib(lib)
    a = t.rand(N)
    return lambda: a.cumsum(0)


WORKLOADS = [
    Workload("gather (1000, 1000) dim=1", _gather, group="indexing", work=20 * N, unit="B"),
    Workload("scatter_add (1000, 1000) dim=1", _scatter_add, group="indexing", work=28 * N, unit="B"),
    Workload("index_select 1000 rows of (1000, 1000)", _index_select, group="indexing", work=8 * N, unit="B"),
    Workload("a[idx] 1e6 from 1e6 f32", _advanced_read, group="indexing", work=16 * N, unit="B"),
    Workload("a[rows, cols] 1e6 from (1000, 1000)", _advanced_read_2d, group="indexing", work=24 * N, unit="B"),
    Workload("a[mask] 1e6 f32", _mask_read, group="indexing", work=5 * N, unit="B"),
    Workload("a[idx] = v 1e6 f32", _advanced_write, group="indexing", work=16 * N, unit="B"),
    Workload("sort 1e6 f32", _sort, group="sorting", repeats=5),
    Workload("topk(10) 1e6 f32", _topk, group="sorting", repeats=5),
    Workload("cumsum 1e6 f32", _cumsum, group="sorting", work=8 * N, unit="B"),
]
