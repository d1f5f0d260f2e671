"""Stores: the same sequence of operations on ember's and PyTorch's stores gives the same
answers (in-process), timeouts raise DistStoreError, and TCPStore/FileStore work across
processes (a client in another Python process)."""

import datetime
import os
import subprocess
import sys
import threading
import time

import pytest

import ember_distributed as dist

SHORT = datetime.timedelta(seconds=0.3)


def _operations(store):
    """A script of store calls and their answers (as comparable values)."""
    answers = []
    store.set("a", "1")
    store.set("b", b"\x00bytes")
    answers += [store.get("a"), store.get("b"), store.add("n", 3), store.add("n", -1), store.num_keys()]
    answers += [store.check(["a", "n"]), store.check(["a", "missing"])]
    answers += [store.compare_set("a", "1", "2"), store.compare_set("a", "1", "3"), store.get("a")]
    answers += [store.compare_set("fresh", "", "v"), store.compare_set("absent", "x", "v"), store.check(["absent"])]
    answers += [store.delete_key("b"), store.delete_key("b"), store.num_keys()]
    store.append("log", "ab")
    store.append("log", b"cd")
    answers += [store.get("log")]
    store.multi_set(["m1", "m2"], ["x", "y"])
    answers += [store.multi_get(["m1", "m2"])]
    return answers


def _stores(tmp_path, torch_dist=None):
    """(name, factory) of each kind of store, ember's or PyTorch's."""
    module = torch_dist or dist
    return [
        ("HashStore", lambda: module.HashStore()),
        ("PrefixStore", lambda: module.PrefixStore("job", module.HashStore())),
        ("FileStore", lambda: module.FileStore(str(tmp_path / f"{'torch' if torch_dist else 'ember'}.store"), 1)),
        ("TCPStore", lambda: module.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=10))),
    ]


@pytest.mark.parametrize("kind", ["HashStore", "PrefixStore", "FileStore", "TCPStore"])
def test_store_answers_match_pytorch(kind, tmp_path):
    torch_dist = pytest.importorskip("torch.distributed")
    ours = dict(_stores(tmp_path))[kind]()
    theirs = dict(_stores(tmp_path, torch_dist))[kind]()
    assert _operations(ours) == _operations(theirs)


def _queue_operations(store, module):
    """A script of queue calls and list_keys, with the error each raises (by name)."""
    answers = [store.queue_len("q")]
    store.queue_push("q", "first")
    store.queue_push("q", b"\x00second")
    answers += [store.queue_len("q"), store.queue_pop("q"), store.queue_len("q"), store.queue_pop("q", block=False)]
    try:
        store.queue_pop("q", block=False)
    except module.QueueEmptyError as error:  # a DistStoreError, as PyTorch's
        answers += [isinstance(error, module.DistStoreError), str(error)]
    store.set("k", "v")
    store.queue_push("other", "x")
    answers += [sorted(k for k in store.list_keys() if not k.startswith("init/")), store.queue_len("other")]
    store.set_timeout(SHORT)
    try:
        store.queue_pop("empty")
    except module.DistStoreError as error:
        answers += [type(error).__name__]
    return answers


@pytest.mark.parametrize("kind", ["HashStore", "PrefixStore", "TCPStore"])
def test_queues_and_list_keys_match_pytorch(kind, tmp_path):
    torch_dist = pytest.importorskip("torch.distributed")
    ours = dict(_stores(tmp_path))[kind]()
    theirs = dict(_stores(tmp_path, torch_dist))[kind]()
    assert _queue_operations(ours, dist) == _queue_operations(theirs, torch_dist)


def test_file_store_has_no_queues_as_pytorch(tmp_path):
    store = dist.FileStore(str(tmp_path / "store"), 1)
    with pytest.raises(NotImplementedError, match="queue support is not implemented."):
        store.queue_push("q", "v")
    store.set("k", "v")
    assert "k" in store.list_keys()  # beside its bookkeeping key, as PyTorch counts it in num_keys


def test_queue_pop_wakes_when_another_thread_pushes():
    store = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=10))
    threading.Timer(0.1, lambda: store.queue_push("q", "late")).start()
    started = time.monotonic()
    assert store.queue_pop("q") == b"late" and time.monotonic() - started < 5


@pytest.mark.parametrize("kind", ["HashStore", "PrefixStore", "FileStore", "TCPStore"])
def test_wait_and_get_time_out_with_pytorchs_error(kind, tmp_path):
    store = dict(_stores(tmp_path))[kind]()
    store.set_timeout(SHORT)
    assert store.timeout == SHORT
    start = time.monotonic()
    with pytest.raises(dist.DistStoreError, match="wait timeout after 300ms, keys: .*missing"):
        store.get("missing")
    with pytest.raises(dist.DistStoreError):
        store.wait(["missing"], datetime.timedelta(seconds=0.1))
    assert time.monotonic() - start < 3
    assert issubclass(dist.DistStoreError, RuntimeError) and issubclass(dist.DistBackendError, dist.DistError)


@pytest.mark.parametrize("kind", ["HashStore", "TCPStore", "FileStore"])
def test_wait_wakes_when_another_thread_sets_the_key(kind, tmp_path):
    store = dict(_stores(tmp_path))[kind]()
    threading.Timer(0.2, lambda: store.set("late", "1")).start()
    start = time.monotonic()
    store.wait(["late"], datetime.timedelta(seconds=5))
    assert 0.15 < time.monotonic() - start < 3


def test_set_timeout_wants_a_timedelta():
    with pytest.raises(TypeError):
        dist.HashStore().set_timeout(1)


def test_tcp_client_without_a_server_raises_dist_network_error():
    with pytest.raises(dist.DistNetworkError, match=r"timed out after 300ms while trying to connect to \(127.0.0.1"):
        dist.TCPStore("127.0.0.1", 1, is_master=False, timeout=SHORT)


def test_tcp_master_waits_for_its_workers():
    with pytest.raises(dist.DistStoreError, match="waiting for clients. 1/2 clients joined"):
        dist.TCPStore("127.0.0.1", 0, 2, True, timeout=SHORT)


_CLIENT = """
import datetime, sys
import ember_distributed as dist
kind, where = sys.argv[1], sys.argv[2]
if kind == "tcp":
    store = dist.TCPStore("127.0.0.1", int(where), 2, False, timeout=datetime.timedelta(seconds=20))
else:
    store = dist.FileStore(where, 2)
store.set("from_client", "hello")
store.add("counter", 10)
print("CLIENT", store.get("from_master").decode(), flush=True)
"""


@pytest.mark.parametrize("kind", ["tcp", "file"])
def test_store_across_processes(kind, tmp_path):
    if kind == "tcp":
        store = dist.TCPStore("127.0.0.1", 0, 2, True, timeout=datetime.timedelta(seconds=20),
                              wait_for_workers=False)
        where = str(store.port)
    else:
        where = str(tmp_path / "shared.store")
        store = dist.FileStore(where, 2)
    client = subprocess.Popen([sys.executable, "-c", _CLIENT, kind, where], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ))
    store.set("from_master", "hi")
    assert store.get("from_client") == b"hello"
    store.wait(["counter"])
    assert store.add("counter", 1) == 11
    output, _ = client.communicate(timeout=60)
    assert client.returncode == 0 and "CLIENT hi" in output
    if kind == "file":
        store.close()
        assert not os.path.exists(where)  # the last of world_size users removes the file


def test_init_process_group_with_a_store_in_one_process():
    script = ("import ember_distributed as dist, ember_tensor as et\n"
              "dist.init_process_group('gloo', store=dist.HashStore(), rank=0, world_size=1)\n"
              "x = et.ones(2); dist.all_reduce(x); assert dist.get_world_size() == 1\n"
              "print('OK', x.tolist())\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "OK [1.0, 1.0]" in result.stdout, result.stderr


def _clone_operations(store, module):
    """A clone used from another thread meets the original: what each side reads."""
    twin = store.clone()
    answers = [type(twin).__name__, twin is store]
    store.set("from_original", "1")
    errors = []

    def in_another_thread():
        try:
            twin.set("from_clone", b"2")
            answers.extend([twin.get("from_original"), twin.add("n", 5)])
        except Exception as error:  # surfaced by the assertion below, not lost in the thread
            errors.append(error)

    worker = threading.Thread(target=in_another_thread)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive() and not errors, errors
    answers += [store.get("from_clone"), store.add("n", 1), twin.check(["from_original", "from_clone"])]
    if isinstance(store, module.PrefixStore):
        # the clone keeps the prefix ("job/") and writes into the same underlying store
        answers += [twin.underlying_store.get("job/from_clone"), store.underlying_store.get("job/from_clone")]
    return answers


@pytest.mark.parametrize("kind", ["HashStore", "PrefixStore", "FileStore", "TCPStore"])
def test_clone_shares_the_store_across_threads_as_pytorch(kind, tmp_path):
    torch_dist = pytest.importorskip("torch.distributed")
    ours = dict(_stores(tmp_path))[kind]()
    theirs = dict(_stores(tmp_path, torch_dist))[kind]()
    expected = _clone_operations(theirs, torch_dist)
    assert _clone_operations(ours, dist) == expected
    assert expected[1] == (kind == "HashStore")  # PyTorch's HashStore clone is the store itself


@pytest.mark.parametrize("kind", ["HashStore", "PrefixStore", "FileStore", "TCPStore"])
def test_clone_without_pytorch(kind, tmp_path):
    store = dict(_stores(tmp_path))[kind]()
    answers = _clone_operations(store, dist)
    assert answers[0] == kind and answers[2:] == [b"1", 5, b"2", 6, True] + ([b"2", b"2"] if kind == "PrefixStore" else [])


def test_clone_timeouts_follow_pytorch(tmp_path):
    # TCPStore: the clone starts with the original's timeout and then has its own.
    tcp = dist.TCPStore("127.0.0.1", 0, 1, True, timeout=datetime.timedelta(seconds=7))
    twin = tcp.clone()
    twin.set_timeout(SHORT)
    assert (tcp.timeout, twin.timeout) == (datetime.timedelta(seconds=7), SHORT)
    assert twin.port == tcp.port and tcp.num_keys() == 1  # a clone is not counted as a worker
    over_tcp = dist.PrefixStore("p", tcp).clone()  # clones the underlying client, as PyTorch
    assert isinstance(over_tcp.underlying_store, dist.TCPStore) and over_tcp.underlying_store is not tcp
    # PrefixStore: its timeout is the underlying store's, a HashStore clone is that store.
    prefixed = dist.PrefixStore("p", dist.HashStore())
    prefixed.clone().set_timeout(SHORT)
    assert prefixed.timeout == SHORT
    # FileStore: PyTorch's clone starts from the default timeout.
    store = dist.FileStore(str(tmp_path / "store"), 1)
    store.set_timeout(SHORT)
    assert store.clone().timeout == datetime.timedelta(seconds=300)


def test_file_store_clone_counts_as_a_user_of_the_file(tmp_path):
    path = str(tmp_path / "store")
    store = dist.FileStore(path, 1)
    twin = store.clone()
    store.close()
    assert os.path.exists(path)  # the clone still uses it
    twin.close()
    assert not os.path.exists(path)


def test_clone_of_a_store_written_in_python_is_its_own_to_write():
    class Custom(dist.Store):
        pass

    with pytest.raises(RuntimeError, match="Custom does not implement clone"):  # PyTorch: a RuntimeError too
        Custom().clone()
