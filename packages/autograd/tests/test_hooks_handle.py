"""torch.utils.hooks.RemovableHandle: one class behind every register_*hook handle; it
removes its hook (once, then a no-op), works as a context manager, and does not keep its
hook table alive."""
import gc
import weakref
from collections import OrderedDict

import ember_tensor as et
import ember_autograd  # noqa: F401 -- installs backward and hooks
from ember_autograd.hooks import RemovableHandle, add_hook


def test_tensor_and_node_hooks_return_the_shared_handle():
    x = et.ones(3, requires_grad=True)
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.sum().item()))
    assert isinstance(handle, RemovableHandle)
    (x * 2).sum().backward()
    handle.remove()
    handle.remove()  # a second remove does nothing
    (x * 2).sum().backward()
    assert seen == [6.0]

    y = x * 3
    calls = []
    with y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: calls.append(1)):
        y.sum().backward()
    y2 = x * 3
    y2.sum().backward()
    assert calls == [1]


def test_hook_on_a_non_leaf_output_and_post_accumulate_hook_are_removable():
    x = et.ones(2, requires_grad=True)
    y = x * 2
    grads = []
    y.register_hook(lambda g: grads.append(g)).remove()
    y.sum().backward()
    assert grads == []
    fired = []
    x = et.ones(2, requires_grad=True)
    handle = x.register_post_accumulate_grad_hook(lambda t: fired.append(t.grad.sum().item()))
    (x * 1).sum().backward()
    handle.remove()
    (x * 1).sum().backward()
    assert fired == [2.0] and x.grad.sum().item() == 4.0  # accumulated twice, seen once


def test_extra_tables_are_emptied_and_ids_are_unique():
    table, side = OrderedDict(), OrderedDict()
    first = add_hook(table, print)
    second = RemovableHandle(table, extra_dict=side)
    table[second.id] = len
    side[second.id] = True
    assert first.id != second.id
    second.remove()
    assert list(table) == [first.id] and not side


def test_handle_refers_to_its_table_weakly():
    table = OrderedDict()
    handle = add_hook(table, print)
    ref = weakref.ref(table)
    del table
    gc.collect()
    assert ref() is None
    handle.remove()  # the table is gone: nothing to do, no error
