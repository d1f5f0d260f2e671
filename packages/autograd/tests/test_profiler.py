"""autograd.profiler: one event per dispatched op, nesting, tables, Chrome trace."""
import json

import pytest

import ember_tensor as E
from ember_autograd import profiler


def _run_small_graph():
    x = E.ones(2, 3, requires_grad=True)
    w = E.ones(3, 4)
    with profiler.profile(record_shapes=True) as prof:
        with profiler.record_function("forward"):
            y = (x @ w).tanh().sum()
        y.backward()
    return prof


def test_every_op_becomes_one_event_with_shapes():
    x = E.ones(2, 3)
    with profiler.profile(record_shapes=True) as prof:
        a = x.exp()
        b = a + 1
        b.neg()
    assert [e.name for e in prof.function_events] == ["aten::exp", "aten::add", "aten::neg"]
    assert [e.input_shapes for e in prof.function_events] == [[[2, 3]], [[2, 3], []], [[2, 3]]]
    assert all(e.cpu_time_total >= 0 for e in prof.function_events)


def test_shapes_are_not_recorded_unless_asked():
    x = E.ones(2)
    with profiler.profile() as prof:
        x.exp()
    assert prof.function_events[0].input_shapes == []


def test_record_function_nests_the_ops_inside_it():
    prof = _run_small_graph()
    events = prof.function_events
    forward = next(e for e in events if e.name == "forward")
    assert [c.name for c in forward.cpu_children] == ["aten::matmul", "aten::tanh", "aten::sum"]
    assert forward.cpu_time_total >= sum(c.cpu_time_total for c in forward.cpu_children)
    assert forward.self_cpu_time_total == pytest.approx(
        forward.cpu_time_total - sum(c.cpu_time_total for c in forward.cpu_children))
    # backward's ops are profiled too, inside one range per node (PyTorch's names)
    tanh_node = next(e for e in events if e.name == "autograd::engine::evaluate_function: TanhBackward0")
    assert tanh_node.cpu_parent is None
    assert "aten::mul" in [c.name for c in tanh_node.cpu_children]


def test_key_averages_count_calls_and_the_table_lists_them():
    x = E.ones(3)
    with profiler.profile() as prof:
        for _ in range(4):
            x = x + 1
    averages = prof.key_averages()
    add = next(a for a in averages if a.key == "aten::add")
    assert add.count == 4
    table = averages.table(sort_by="cpu_time_total", row_limit=10)
    assert "Name" in table and "# of Calls" in table and "Self CPU time total:" in table
    assert "aten::add" in table
    assert str(prof) == prof.key_averages().table()


def test_group_by_input_shape_separates_shapes():
    with profiler.profile(record_shapes=True) as prof:
        E.ones(2).exp()
        E.ones(3).exp()
        E.ones(3).exp()
    rows = prof.key_averages(group_by_input_shape=True)
    assert sorted((r.key, r.count, str(r.input_shapes)) for r in rows) == [
        ("aten::exp", 1, "[[2]]"), ("aten::exp", 2, "[[3]]")]
    assert "Input Shapes" in rows.table()


def test_chrome_trace_loads_as_json_with_one_event_per_op(tmp_path):
    prof = _run_small_graph()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    assert len(trace) == len(prof.function_events)
    assert [e["name"] for e in trace] == [e.name for e in prof.function_events]
    for e in trace:
        assert e["ph"] == "X" and e["dur"] >= 0 and {"ts", "pid", "tid"} <= set(e)


def test_disabled_profile_records_nothing_and_profiling_stops_on_exit():
    with profiler.profile(enabled=False) as prof:
        E.ones(2).exp()
    assert prof._events == []
    with profiler.profile() as prof:
        pass
    E.ones(2).exp()
    assert len(prof.function_events) == 0


def test_results_are_refused_before_the_profile_finishes():
    with profiler.profile() as prof:
        with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
            prof.key_averages()


def test_record_function_as_decorator():
    @profiler.record_function("labelled")
    def work(t):
        return t * 2

    with profiler.profile() as prof:
        work(E.ones(2))
    assert [e.name for e in prof.function_events] == ["labelled", "aten::mul"]
