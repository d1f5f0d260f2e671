"""Op cases for the autocast tests: each builds one op from a library namespace (`T` the
tensor module, `F` its nn.functional), so the same case runs on ember and on PyTorch.

A case: (name, inputs, fn). `inputs` are shapes ("i:" prefix for int64 class indices), made
in the dtypes a test asks for; `fn(T, F, *tensors)` calls the op.
"""
CASES = [
    # PyTorch's lower-precision list
    ("mm", [(3, 4), (4, 5)], lambda T, F, a, b: T.mm(a, b)),
    ("matmul", [(2, 3, 4), (4, 5)], lambda T, F, a, b: T.matmul(a, b)),
    ("matmul_operator", [(3, 4), (4, 5)], lambda T, F, a, b: a @ b),
    ("bmm", [(2, 3, 4), (2, 4, 5)], lambda T, F, a, b: T.bmm(a, b)),
    ("addmm", [(3, 5), (3, 4), (4, 5)], lambda T, F, c, a, b: T.addmm(c, a, b)),
    ("baddbmm", [(2, 3, 5), (2, 3, 4), (2, 4, 5)], lambda T, F, c, a, b: T.baddbmm(c, a, b)),
    ("addbmm", [(3, 5), (2, 3, 4), (2, 4, 5)], lambda T, F, c, a, b: T.addbmm(c, a, b)),
    ("linear", [(3, 4), (5, 4), (5,)], lambda T, F, x, w, b: F.linear(x, w, b)),
    ("conv1d", [(1, 2, 7), (3, 2, 3), (3,)], lambda T, F, x, w, b: F.conv1d(x, w, b)),
    ("conv2d", [(1, 2, 5, 5), (3, 2, 3, 3), (3,)], lambda T, F, x, w, b: F.conv2d(x, w, b, padding=1)),
    ("conv_transpose2d", [(1, 2, 4, 4), (2, 3, 3, 3)], lambda T, F, x, w: F.conv_transpose2d(x, w)),
    # float32 list (CPU)
    ("nll_loss", [(4, 3), "i:4:3"], lambda T, F, x, y: F.nll_loss(x, y)),
    ("cross_entropy", [(4, 3), "i:4:3"], lambda T, F, x, y: F.cross_entropy(x, y)),
    ("prod", [(3, 4)], lambda T, F, a: T.prod(a)),
    ("trace", [(3, 3)], lambda T, F, a: T.trace(a)),
    ("linalg_inv", [(3, 3)], lambda T, F, a: T.linalg.inv(a + 3 * T.eye(3, dtype=a.dtype))),
    ("linalg_solve", [(3, 3), (3, 2)], lambda T, F, a, b: T.linalg.solve(a + 3 * T.eye(3, dtype=a.dtype), b)),
    ("conv1d_no_bias", [(2, 3, 6), (4, 3, 2)], lambda T, F, x, w: F.conv1d(x, w)),
    # promote list (CPU)
    ("cat", [(2, 3), (2, 3)], lambda T, F, a, b: T.cat([a, b])),
    ("stack", [(2, 3), (2, 3)], lambda T, F, a, b: T.stack([a, b])),
    ("index_copy", [(4, 3), (2, 3)], lambda T, F, a, b: a.index_copy(0, T.tensor([0, 2]), b)),
    # on no CPU list: run in the input's dtype
    ("softmax", [(3, 4)], lambda T, F, a: F.softmax(a, dim=-1)),
    ("log_softmax", [(3, 4)], lambda T, F, a: F.log_softmax(a, dim=-1)),
    ("sum", [(3, 4)], lambda T, F, a: a.sum()),
    ("exp", [(3, 4)], lambda T, F, a: T.exp(a)),
    ("relu", [(3, 4)], lambda T, F, a: F.relu(a)),
    ("layer_norm", [(3, 4), (4,), (4,)], lambda T, F, x, w, b: F.layer_norm(x, (4,), w, b)),
    ("add", [(3, 4), (3, 4)], lambda T, F, a, b: a + b),
    ("mean", [(3, 4)], lambda T, F, a: a.mean(1)),
    ("tanh", [(3, 4)], lambda T, F, a: T.tanh(a)),
    ("pow", [(3, 4)], lambda T, F, a: a ** 2),
    ("mv", [(3, 4), (4,)], lambda T, F, a, b: T.mv(a, b)),
    ("dot", [(4,), (4,)], lambda T, F, a, b: T.dot(a, b)),
    ("outer", [(3,)], lambda T, F, a: T.outer(a, a)),  # (ember's outer does not promote mixed dtypes yet)
    ("addmv", [(3,), (3, 4), (4,)], lambda T, F, c, a, b: T.addmv(c, a, b)),
    # PyTorch decomposes these into bmm/mm, which autocast lists
    ("einsum", [(3, 4), (4, 5)], lambda T, F, a, b: T.einsum("ij,jk->ik", a, b)),
    ("tensordot", [(3, 4), (4, 5)], lambda T, F, a, b: T.tensordot(a, b, 1)),
    ("inner", [(3, 4), (2, 4)], lambda T, F, a, b: T.inner(a, b)),
    ("matrix_power", [(3, 3)], lambda T, F, a: T.matrix_power(a, 2)),
]

# The losses on PyTorch's float32 lists (both CPU and CUDA, but binary_cross_entropy, which
# CUDA autocast refuses): computed in float32 even when input and target are half precision.
# Targets are floats drawn with the inputs (in the inputs' dtypes) and mapped into each
# loss's domain by ops on no list.
LOSS_CASES = [
    ("mse_loss", [(4, 3), (4, 3)], lambda T, F, x, y: F.mse_loss(x, y)),
    ("l1_loss", [(4, 3), (4, 3)], lambda T, F, x, y: F.l1_loss(x, y)),
    ("smooth_l1_loss", [(4, 3), (4, 3)], lambda T, F, x, y: F.smooth_l1_loss(x, y, beta=0.5)),
    ("huber_loss", [(4, 3), (4, 3)], lambda T, F, x, y: F.huber_loss(x, y, delta=0.5)),
    ("kl_div", [(4, 3), (4, 3)], lambda T, F, x, y: F.kl_div(F.log_softmax(x, 1), F.softmax(y, 1),
                                                              reduction="batchmean")),
    ("kl_div_log_target", [(4, 3), (4, 3)],
     lambda T, F, x, y: F.kl_div(x, F.log_softmax(y, 1), reduction="sum", log_target=True)),
    ("poisson_nll_loss", [(4, 3), (4, 3)], lambda T, F, x, y: F.poisson_nll_loss(x, y.abs())),
    ("binary_cross_entropy", [(4, 3), (4, 3)],
     lambda T, F, x, y: F.binary_cross_entropy(T.sigmoid(x), T.sigmoid(y))),
    ("binary_cross_entropy_with_logits", [(4, 3), (4, 3), (3,)],
     lambda T, F, x, y, w: F.binary_cross_entropy_with_logits(x, T.sigmoid(y), pos_weight=w.abs())),
    ("soft_margin_loss", [(4, 3), (4, 3)], lambda T, F, x, y: F.soft_margin_loss(x, T.sign(y))),
    ("hinge_embedding_loss", [(4, 3), (4, 3)], lambda T, F, x, y: F.hinge_embedding_loss(x, T.sign(y))),
    ("margin_ranking_loss", [(4,), (4,), (4,)], lambda T, F, a, b, y: F.margin_ranking_loss(a, b, T.sign(y))),
    ("cosine_embedding_loss", [(4, 3), (4, 3), (4,)],
     lambda T, F, a, b, y: F.cosine_embedding_loss(a, b, T.sign(y))),
    ("triplet_margin_loss", [(4, 3), (4, 3), (4, 3)], lambda T, F, a, p, n: F.triplet_margin_loss(a, p, n)),
    ("multi_margin_loss", [(4, 3), "i:4:3"], lambda T, F, x, y: F.multi_margin_loss(x, y)),
    ("multilabel_margin_loss", [(2, 4), "i:8:4"],
     lambda T, F, x, y: F.multilabel_margin_loss(x, y.reshape(2, 4))),
]
CASES += LOSS_CASES
