"""multinomial: category indices drawn from the rows of a tensor of weights.

Device-free: the op checks its arguments with PyTorch's errors, then its device's
backend (`_backends.<device>.random.multinomial`) checks the weights and samples: on
the CPU on the host from the CPU generator, on CUDA on the device from the CUDA
generator (Gumbel keys and the device top-k without replacement, inverse CDF by binary
search with it; each weight check reads back one flag, PyTorch's CUDA kernels assert
instead). The backend names the check that failed; the op raises the CPU's error.
"""
from .. import _dtype as D
from .. import _random
from .._dispatch import op
from . import _iter
from ._random_args import int_arg, new_tensor, random_backend

__all__ = ["multinomial"]

# The CPU's checks, in the order it makes them; the backend names the one that failed.
_ERRORS = {
    "not finite or negative": "probability tensor contains either `inf`, `nan` or element < 0",
    "negative": "invalid multinomial distribution (encountering probability entry < 0)",
    "infinite": "invalid multinomial distribution (encountering probability entry = infinity or NaN)",
    "zero sum": "invalid multinomial distribution (sum of probabilities <= 0)",
}


@op()
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Category indices drawn from the rows of `input` (non-negative weights).

    Without replacement each row gives distinct indices; categories of weight zero come
    only after all others. Returns int64 of shape (num_samples,) or (rows, num_samples).

    >>> import ember_tensor as torch
    >>> sorted(torch.multinomial(torch.tensor([0., 5., 0., 1.]), 2).tolist())
    [1, 3]
    """
    num_samples = int_arg(num_samples, "multinomial", "num_samples", 2)
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if input._dtype.category != D._FLOAT:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_iter.type_name(input._dtype)}")
    if out is not None and out._dtype is not D.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {_iter.type_name(out._dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_categories = input.shape[-1]
    if not replacement and num_samples > n_categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n_categories > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    gen = _random.resolve(generator, input._device, "multinomial")
    samples, problem = gen._sample(random_backend(input._device).multinomial, input._data, num_samples, replacement)
    if problem:
        raise RuntimeError(_ERRORS[problem])
    if input.dim() == 1:
        samples = samples.reshape(num_samples)
    return new_tensor(samples, D.int64, input._device, out=out)
