"""torch.utils.checkpoint inside an autocast region: the recomputation in backward casts as
the forward did (ember-amp registers its regions with ember-autograd's checkpoint)."""
import ember_amp
import ember_tensor as et



def test_a_checkpointed_region_recomputes_under_the_forwards_autocast():
    # torch.utils.checkpoint runs the region again in backward, outside the `with`: the
    # recomputation must cast as the forward did, or its saved tensors and gradients differ.
    from ember_autograd.checkpoint import checkpoint

    et.manual_seed(0)
    x = et.randn(4, 8, requires_grad=True)
    w = et.randn(8, 3, requires_grad=True)

    def region(x):
        return (x @ w).relu()

    with ember_amp.autocast("cpu", dtype=et.bfloat16):
        plain = region(x)
    plain.float().sum().backward()
    expected = (x.grad.clone(), w.grad.clone())
    x.grad = w.grad = None
    with ember_amp.autocast("cpu", dtype=et.bfloat16):
        out = checkpoint(region, x, use_reentrant=False)
    assert out.dtype is et.bfloat16
    out.float().sum().backward()
    assert et.equal(x.grad, expected[0]) and et.equal(w.grad, expected[1])
