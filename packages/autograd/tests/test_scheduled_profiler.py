"""torch.profiler over ember's op profiler: schedules (PyTorch's step actions), traces
handed to on_trace_ready once per cycle, ProfilerStep ranges, Chrome traces on disk."""
import gzip
import json

import pytest

import ember_autograd  # noqa: F401 - the profiler's wrapper sits on the dispatcher it installs
import ember_tensor as et
from ember_autograd.scheduled_profiler import (
    ProfilerAction, ProfilerActivity, profile, record_function, schedule, supported_activities,
    tensorboard_trace_handler,
)

A = ProfilerAction


def test_schedule_actions_are_pytorchs():
    # torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1), steps 0..10
    plan = schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    assert [plan(i) for i in range(11)] == [A.NONE, A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE,
                                             A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE, A.NONE, A.NONE]
    endless = schedule(wait=0, warmup=1, active=1)
    assert [endless(i) for i in range(4)] == [A.WARMUP, A.RECORD_AND_SAVE] * 2
    with pytest.raises(AssertionError):
        schedule(wait=0, warmup=0, active=0)


def test_each_cycle_is_handed_over_with_its_steps_only():
    traces = []

    def keep(prof):
        traces.append(sorted({e.name for e in prof.events() if e.name.startswith("ProfilerStep")}))
        traces.append(sum(e.name == "aten::exp" for e in prof.events()))

    x = et.ones(3)
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                 on_trace_ready=keep) as prof:
        for _ in range(10):
            x.exp()
            prof.step()
    assert traces == [["ProfilerStep#2", "ProfilerStep#3"], 2, ["ProfilerStep#6", "ProfilerStep#7"], 2]


def test_without_a_schedule_the_block_is_recorded_and_tabled():
    with profile(record_shapes=True) as prof:
        with record_function("my_block"):
            (et.ones(2, 2) @ et.ones(2, 2)).sum()
    names = {e.name for e in prof.events()}
    assert {"my_block", "aten::matmul", "aten::sum"} <= names
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
    assert "aten::matmul" in table and "Self CPU" in table


@pytest.mark.parametrize("use_gzip", [False, True])
def test_tensorboard_trace_handler_writes_chrome_traces(tmp_path, use_gzip):
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=1),
                 on_trace_ready=tensorboard_trace_handler(str(tmp_path), "worker0", use_gzip)) as prof:
        for _ in range(3):
            et.ones(4).exp()
            prof.step()
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].name.startswith("worker0.")
    assert files[0].name.endswith(".pt.trace.json.gz" if use_gzip else ".pt.trace.json")
    text = gzip.open(files[0]).read() if use_gzip else files[0].read_bytes()
    events = json.loads(text)["traceEvents"]
    assert any(e["name"] == "aten::exp" for e in events)


def test_results_before_a_finished_cycle_raise():
    prof = profile(schedule=schedule(wait=5, warmup=1, active=1))
    with prof:
        prof.step()
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        prof.key_averages()


def test_cpu_is_always_supported():
    assert ProfilerActivity.CPU in supported_activities()
