"""The few ``torch.nn.functional`` calls the tests need, on ember-tensor's nn ops.

ember-amp stands on ember-tensor and ember-autograd only, and its tests run with just
those installed (the tox env): they call the dispatcher ops that ember-nn's functional
API calls, so autocast sees the same ops. Training with ember-nn and ember-optim is
tested in packages/ember/tests/test_amp_training.py.
"""
import ember_autograd
import ember_tensor as et
from ember_tensor import nn_ops as K


def linear(x, w, b=None):
    return K.linear(x, w, b)


def conv1d(x, w, b=None):
    return K.convolution(x, w, b)


def conv2d(x, w, b=None, padding=0):
    return K.convolution(x, w, b, 1, padding)


def conv_transpose2d(x, w):
    return K.convolution(x, w, None, 1, 0, 1, True)


def softmax(x, dim):
    return K.softmax(x, dim)


def log_softmax(x, dim):
    return K.log_softmax(x, dim)


def relu(x):
    return et.relu(x)


def nll_loss(x, y):
    return K.nll_loss(x, y)


def cross_entropy(x, y, label_smoothing=0.0):
    return K.cross_entropy_loss(x, y, None, "mean", -100, label_smoothing)


def mse_loss(x, y):
    return K.mse_loss(x, y)


def l1_loss(x, y):
    return K.l1_loss(x, y)


def smooth_l1_loss(x, y, beta=1.0):
    return K.smooth_l1_loss(x, y, "mean", beta)


def huber_loss(x, y, delta=1.0):
    return K.huber_loss(x, y, "mean", delta)


def kl_div(x, y, reduction="mean", log_target=False):
    return K.kl_div(x, y, reduction, log_target=log_target)


def poisson_nll_loss(x, y):
    return K.poisson_nll_loss(x, y)


def binary_cross_entropy(x, y, weight=None):
    return K.binary_cross_entropy(x, y, weight)


def binary_cross_entropy_with_logits(x, y, weight=None, pos_weight=None):
    return K.binary_cross_entropy_with_logits(x, y, weight, pos_weight)


def soft_margin_loss(x, y):
    return K.soft_margin_loss(x, y)


def hinge_embedding_loss(x, y):
    return K.hinge_embedding_loss(x, y)


def margin_ranking_loss(x1, x2, y):
    return K.margin_ranking_loss(x1, x2, y)


def cosine_embedding_loss(x1, x2, y):
    return K.cosine_embedding_loss(x1, x2, y)


def triplet_margin_loss(a, p, n):
    return K.triplet_margin_loss(a, p, n)


def multi_margin_loss(x, y):
    return K.multi_margin_loss(x, y)


def multilabel_margin_loss(x, y):
    return K.multilabel_margin_loss(x, y)


def layer_norm(x, shape, w=None, b=None, eps=1e-5):
    return K.native_layer_norm(x, tuple(shape), w, b, eps)[0]


class SGD:
    """Plain SGD by duck typing: what GradScaler needs of an optimizer (param_groups, step)."""

    def __init__(self, params, lr):
        self.param_groups = [{"params": list(params), "lr": lr}]

    def zero_grad(self):
        for p in self.param_groups[0]["params"]:
            p.grad = None

    def step(self):
        with ember_autograd.no_grad():
            for p in self.param_groups[0]["params"]:
                if p.grad is not None:
                    p.sub_(p.grad * self.param_groups[0]["lr"])



def softplus(x, beta=1.0, threshold=20.0):
    return K.softplus(x, beta, threshold)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    return K.cosine_similarity(x1, x2, dim, eps)


def pdist(x, p=2):
    return K.pdist(x, p)
