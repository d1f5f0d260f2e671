"""Connectionist temporal classification loss, by the forward (alpha) recursion in log
space over the blank-extended label sequence, written with differentiable ops (the
gradient is autograd's, through logsumexp)."""
import numpy as np

import ember_tensor as E

from ._util import nondeterministic_backward, through_composite_op

__all__ = ["ctc_loss"]

# A large finite stand-in for log(0): -inf would make logsumexp's gradient nan where a
# whole column of paths is impossible.
_LOG_ZERO = -1e30


def _lengths(value, n):
    if isinstance(value, E.Tensor):
        return [int(v) for v in value.reshape(-1).tolist()]
    return [int(v) for v in value]


def _sequence_loss(log_probs, labels, length, blank):
    """-log p(labels | log_probs[:length]) for one sequence; log_probs (T, C)."""
    ext = [blank]
    for label in labels:
        ext += [label, blank]
    s = len(ext)
    ext_index = E.tensor(ext, dtype=E.int64, device=log_probs.device)
    # Skipping a blank is allowed between two different labels.
    skip = np.zeros(s, bool)
    for i in range(2, s):
        skip[i] = ext[i] != blank and ext[i] != ext[i - 2]
    skip_mask = E.tensor(skip, device=log_probs.device)
    fill = E.full((2,), _LOG_ZERO, dtype=log_probs.dtype, device=log_probs.device)
    start = np.full(s, _LOG_ZERO)
    start[:2] = 0.0
    alpha = log_probs[0][ext_index] + E.tensor(start[:s], dtype=log_probs.dtype, device=log_probs.device)
    for t in range(1, length):
        shifted1 = E.cat([fill[:1], alpha[:-1]])
        shifted2 = E.where(skip_mask, E.cat([fill, alpha[:-2]]) if s > 2 else fill[:s], _LOG_ZERO)
        alpha = E.stack([alpha, shifted1, shifted2]).logsumexp(0) + log_probs[t][ext_index]
    tail = alpha[-2:] if s > 1 else alpha
    return -tail.logsumexp(0)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """CTC loss of log-probabilities (T, N, C) (or (T, C)) against `targets` (N, S)
    padded, or 1-d concatenated targets."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    # PyTorch's CUDA backward (ctc_loss_backward_gpu) adds with atomics.
    log_probs = nondeterministic_backward(log_probs, "ctc_loss_backward_gpu")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.dim() == 1 else targets
    n = log_probs.shape[1]
    in_lens, tgt_lens = _lengths(input_lengths, n), _lengths(target_lengths, n)
    flat = targets.dim() == 1
    tgt = targets.tolist()
    losses, offset = [], 0
    for b in range(n):
        if flat:
            labels = tgt[offset:offset + tgt_lens[b]]
            offset += tgt_lens[b]
        else:
            labels = tgt[b][:tgt_lens[b]]
        if in_lens[b] > log_probs.shape[0]:
            raise RuntimeError(f"Expected input_lengths to have value at most {log_probs.shape[0]}, but got "
                               f"value {in_lens[b]} (while checking arguments for ctc_loss_cpu)")
        loss = _sequence_loss(log_probs[:, b], labels, in_lens[b], blank)
        losses.append(loss)
    loss = E.stack(losses)
    impossible = loss > 1e29
    loss = E.where(impossible, 0.0 if zero_infinity else float("inf"), loss)
    if reduction == "none":
        return loss[0] if unbatched else loss
    if reduction == "sum":
        return loss.sum()
    lens = E.tensor([max(v, 1) for v in tgt_lens], dtype=loss.dtype, device=loss.device)
    return (loss / lens).mean()


# On PyTorch's CPU autocast list (float32): a composite op under ATen's name.
ctc_loss = through_composite_op("ctc_loss", ctc_loss)
