"""ember's tensor printing must reproduce PyTorch's ``repr(tensor)`` byte for byte.

The table's expected strings were taken from ``repr`` of the same data in
PyTorch 2.13, so they run without torch; the oracle test at the bottom checks
random tensors against a live PyTorch when one is installed.
"""

import math
from typing import NamedTuple

import numpy as np
import pytest

from ember_tensor._printing import (
    format_tensor,
    get_printoptions,
    printoptions,
    set_printoptions,
)

nan, inf = np.nan, np.inf
DEFAULT_OPTIONS = dict(precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None)


class Case(NamedTuple):
    id: str
    values: np.ndarray
    dtype: str
    expected: str
    kwargs: dict = {}
    options: dict = {}


@pytest.fixture(autouse=True)
def default_printoptions():
    set_printoptions(profile="default")
    yield
    set_printoptions(profile="default")


CASES = [
    Case("int_1d", np.array([1, 2, 3]), "int64", "tensor([1, 2, 3])"),
    Case("int_negative_width", np.array([-100, 5, 20]), "int64", "tensor([-100,    5,   20])"),
    Case(
        "int_2d", np.arange(12).reshape(3, 4), "int64",
        "tensor([[ 0,  1,  2,  3],\n"
        "        [ 4,  5,  6,  7],\n"
        "        [ 8,  9, 10, 11]])",
    ),
    Case(
        "int_3d", np.arange(24).reshape(2, 3, 4), "int64",
        "tensor([[[ 0,  1,  2,  3],\n"
        "         [ 4,  5,  6,  7],\n"
        "         [ 8,  9, 10, 11]],\n"
        "\n"
        "        [[12, 13, 14, 15],\n"
        "         [16, 17, 18, 19],\n"
        "         [20, 21, 22, 23]]])",
    ),
    Case(
        "int_4d_blank_lines", np.arange(16).reshape(2, 2, 2, 2), "int64",
        "tensor([[[[ 0,  1],\n"
        "          [ 2,  3]],\n"
        "\n"
        "         [[ 4,  5],\n"
        "          [ 6,  7]]],\n"
        "\n"
        "\n"
        "        [[[ 8,  9],\n"
        "          [10, 11]],\n"
        "\n"
        "         [[12, 13],\n"
        "          [14, 15]]]])",
    ),
    Case(
        "int_non_contiguous", np.arange(12).reshape(3, 4).T, "int64",
        "tensor([[ 0,  4,  8],\n"
        "        [ 1,  5,  9],\n"
        "        [ 2,  6, 10],\n"
        "        [ 3,  7, 11]])",
    ),
    Case(
        "int8", np.array([-128, 0, 127], np.int8), "int8",
        "tensor([-128,    0,  127], dtype=torch.int8)",
    ),
    Case(
        "int16", np.array([-300, 7], np.int16), "int16",
        "tensor([-300,    7], dtype=torch.int16)",
    ),
    Case("int32", np.array([1, 2], np.int32), "int32", "tensor([1, 2], dtype=torch.int32)"),
    Case("uint8", np.array([0, 255], np.uint8), "uint8", "tensor([  0, 255], dtype=torch.uint8)"),
    Case(
        "float_integer_valued", np.array([1.0, 2.0, 3.0], np.float32), "float32",
        "tensor([1., 2., 3.])",
    ),
    Case(
        "float_integer_valued_negative", np.array([-1.0, 20.0, 300.0], np.float32), "float32",
        "tensor([ -1.,  20., 300.])",
    ),
    Case(
        "float_mixed", np.array([1.5, -2.25, 3.0], np.float32), "float32",
        "tensor([ 1.5000, -2.2500,  3.0000])",
    ),
    Case(
        "float_rounding", np.array([0.123456789, 1.0, -0.99999], np.float32), "float32",
        "tensor([ 0.1235,  1.0000, -1.0000])",
    ),
    Case(
        "float_sci_ratio", np.array([1.0, 10000.5], np.float32), "float32",
        "tensor([1.0000e+00, 1.0000e+04])",
    ),
    Case(
        "float_sci_tiny", np.array([1e-5, 2.5e-5], np.float32), "float32",
        "tensor([1.0000e-05, 2.5000e-05])",
    ),
    Case(
        "float_sci_huge", np.array([1.5e9, 2e9], np.float32), "float32",
        "tensor([1.5000e+09, 2.0000e+09])",
    ),
    Case(
        "float_sci_integer_valued", np.array([1e10, 1.0], np.float32), "float32",
        "tensor([1.0000e+10, 1.0000e+00])",
    ),
    Case(
        "float_ratio_exactly_1000", np.array([0.001, 1.0], np.float64), "float64",
        "tensor([0.0010, 1.0000], dtype=torch.float64)",
    ),
    Case(
        "float_nan_inf", np.array([nan, inf, -inf, 1.5], np.float32), "float32",
        "tensor([   nan,    inf,   -inf, 1.5000])",
    ),
    Case(
        "float_nan_inf_integer_valued", np.array([nan, inf, 1.0, 20.0], np.float32), "float32",
        "tensor([nan, inf,  1., 20.])",
    ),
    Case(
        "float_nan_inf_sci", np.array([nan, -inf, 1e-8, 1.0], np.float32), "float32",
        "tensor([       nan,       -inf, 1.0000e-08, 1.0000e+00])",
    ),
    Case("float_all_nan", np.array([nan, nan], np.float32), "float32", "tensor([nan, nan])"),
    Case("float_negative_zero", np.array([-0.0, 1.0], np.float32), "float32", "tensor([-0., 1.])"),
    Case(
        "float_negative_zero_mixed", np.array([-0.0, 1.5], np.float32), "float32",
        "tensor([-0.0000, 1.5000])",
    ),
    Case("float_all_zero", np.zeros(3, np.float32), "float32", "tensor([0., 0., 0.])"),
    Case(
        "float_2d_mixed", np.array([[1.5, -20.25], [300.125, 4.0]], np.float32), "float32",
        "tensor([[  1.5000, -20.2500],\n"
        "        [300.1250,   4.0000]])",
    ),
    Case(
        "float_3d", (np.arange(8, dtype=np.float32) / 3).reshape(2, 2, 2), "float32",
        "tensor([[[0.0000, 0.3333],\n"
        "         [0.6667, 1.0000]],\n"
        "\n"
        "        [[1.3333, 1.6667],\n"
        "         [2.0000, 2.3333]]])",
    ),
    Case(
        "float16", np.array([0.1, 1.0], np.float16).astype(np.float32), "float16",
        "tensor([0.1000, 1.0000], dtype=torch.float16)",
    ),
    Case(
        "bfloat16", np.array([0.10009765625, 1.0], np.float32), "bfloat16",
        "tensor([0.1001, 1.0000], dtype=torch.bfloat16)",
    ),
    Case(
        "float64", np.array([0.1, 1.0]), "float64",
        "tensor([0.1000, 1.0000], dtype=torch.float64)",
    ),
    Case(
        "float32_default_float64", np.array([1.0, 2.0], np.float32), "float32",
        "tensor([1., 2.], dtype=torch.float32)",
        {"default_dtype_name": "float64"},
    ),
    Case(
        "float64_default_float64", np.array([1.0, 2.0]), "float64",
        "tensor([1., 2.])",
        {"default_dtype_name": "float64"},
    ),
    Case("bool", np.array([True, False, True]), "bool", "tensor([ True, False,  True])"),
    Case(
        "bool_2d", np.array([[True], [False]]), "bool",
        "tensor([[ True],\n"
        "        [False]])",
    ),
    Case("scalar_float_integer", np.array(3.0, np.float32), "float32", "tensor(3.)"),
    Case("scalar_float", np.array(0.5, np.float32), "float32", "tensor(0.5000)"),
    Case("scalar_float_sci", np.array(1e-5, np.float32), "float32", "tensor(1.0000e-05)"),
    Case("scalar_nan", np.array(nan, np.float32), "float32", "tensor(nan)"),
    Case("scalar_int", np.array(7), "int64", "tensor(7)"),
    Case("scalar_int32", np.array(7, np.int32), "int32", "tensor(7, dtype=torch.int32)"),
    Case("scalar_bool", np.array(True), "bool", "tensor(True)"),
    Case("scalar_float64", np.array(-2.5), "float64", "tensor(-2.5000, dtype=torch.float64)"),
    Case("empty_float32", np.zeros(0, np.float32), "float32", "tensor([])"),
    Case("empty_2d", np.zeros((0, 3), np.float32), "float32", "tensor([], size=(0, 3))"),
    Case(
        "empty_3d_float64", np.zeros((2, 0, 3)), "float64",
        "tensor([], size=(2, 0, 3), dtype=torch.float64)",
    ),
    Case("empty_int64", np.zeros(0, np.int64), "int64", "tensor([], dtype=torch.int64)"),
    Case("empty_bool", np.zeros(0, np.bool_), "bool", "tensor([], dtype=torch.bool)"),
    Case(
        "empty_float32_default_float64", np.zeros(0, np.float32), "float32",
        "tensor([], dtype=torch.float32)",
        {"default_dtype_name": "float64"},
    ),
    Case(
        "summarize_1d", np.arange(2000), "int64",
        "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])",
    ),
    Case(
        "summarize_2d", np.arange(10000, dtype=np.float32).reshape(100, 100) / 7, "float32",
        "tensor([[0.0000e+00, 1.4286e-01, 2.8571e-01,  ..., 1.3857e+01, 1.4000e+01,\n"
        "         1.4143e+01],\n"
        "        [1.4286e+01, 1.4429e+01, 1.4571e+01,  ..., 2.8143e+01, 2.8286e+01,\n"
        "         2.8429e+01],\n"
        "        [2.8571e+01, 2.8714e+01, 2.8857e+01,  ..., 4.2429e+01, 4.2571e+01,\n"
        "         4.2714e+01],\n"
        "        ...,\n"
        "        [1.3857e+03, 1.3859e+03, 1.3860e+03,  ..., 1.3996e+03, 1.3997e+03,\n"
        "         1.3999e+03],\n"
        "        [1.4000e+03, 1.4001e+03, 1.4003e+03,  ..., 1.4139e+03, 1.4140e+03,\n"
        "         1.4141e+03],\n"
        "        [1.4143e+03, 1.4144e+03, 1.4146e+03,  ..., 1.4281e+03, 1.4283e+03,\n"
        "         1.4284e+03]])",
    ),
    Case(
        "summarize_3d", np.arange(8000).reshape(20, 20, 20), "int64",
        "tensor([[[   0,    1,    2,  ...,   17,   18,   19],\n"
        "         [  20,   21,   22,  ...,   37,   38,   39],\n"
        "         [  40,   41,   42,  ...,   57,   58,   59],\n"
        "         ...,\n"
        "         [ 340,  341,  342,  ...,  357,  358,  359],\n"
        "         [ 360,  361,  362,  ...,  377,  378,  379],\n"
        "         [ 380,  381,  382,  ...,  397,  398,  399]],\n"
        "\n"
        "        [[ 400,  401,  402,  ...,  417,  418,  419],\n"
        "         [ 420,  421,  422,  ...,  437,  438,  439],\n"
        "         [ 440,  441,  442,  ...,  457,  458,  459],\n"
        "         ...,\n"
        "         [ 740,  741,  742,  ...,  757,  758,  759],\n"
        "         [ 760,  761,  762,  ...,  777,  778,  779],\n"
        "         [ 780,  781,  782,  ...,  797,  798,  799]],\n"
        "\n"
        "        [[ 800,  801,  802,  ...,  817,  818,  819],\n"
        "         [ 820,  821,  822,  ...,  837,  838,  839],\n"
        "         [ 840,  841,  842,  ...,  857,  858,  859],\n"
        "         ...,\n"
        "         [1140, 1141, 1142,  ..., 1157, 1158, 1159],\n"
        "         [1160, 1161, 1162,  ..., 1177, 1178, 1179],\n"
        "         [1180, 1181, 1182,  ..., 1197, 1198, 1199]],\n"
        "\n"
        "        ...,\n"
        "\n"
        "        [[6800, 6801, 6802,  ..., 6817, 6818, 6819],\n"
        "         [6820, 6821, 6822,  ..., 6837, 6838, 6839],\n"
        "         [6840, 6841, 6842,  ..., 6857, 6858, 6859],\n"
        "         ...,\n"
        "         [7140, 7141, 7142,  ..., 7157, 7158, 7159],\n"
        "         [7160, 7161, 7162,  ..., 7177, 7178, 7179],\n"
        "         [7180, 7181, 7182,  ..., 7197, 7198, 7199]],\n"
        "\n"
        "        [[7200, 7201, 7202,  ..., 7217, 7218, 7219],\n"
        "         [7220, 7221, 7222,  ..., 7237, 7238, 7239],\n"
        "         [7240, 7241, 7242,  ..., 7257, 7258, 7259],\n"
        "         ...,\n"
        "         [7540, 7541, 7542,  ..., 7557, 7558, 7559],\n"
        "         [7560, 7561, 7562,  ..., 7577, 7578, 7579],\n"
        "         [7580, 7581, 7582,  ..., 7597, 7598, 7599]],\n"
        "\n"
        "        [[7600, 7601, 7602,  ..., 7617, 7618, 7619],\n"
        "         [7620, 7621, 7622,  ..., 7637, 7638, 7639],\n"
        "         [7640, 7641, 7642,  ..., 7657, 7658, 7659],\n"
        "         ...,\n"
        "         [7940, 7941, 7942,  ..., 7957, 7958, 7959],\n"
        "         [7960, 7961, 7962,  ..., 7977, 7978, 7979],\n"
        "         [7980, 7981, 7982,  ..., 7997, 7998, 7999]]])",
    ),
    Case(
        "summarize_short_dim", np.arange(2002).reshape(2, 1001), "int64",
        "tensor([[   0,    1,    2,  ...,  998,  999, 1000],\n"
        "        [1001, 1002, 1003,  ..., 1999, 2000, 2001]])",
    ),
    Case(
        # 1e-9 would force sci mode, but only the printed edge items shape the formatter.
        "summarize_edges_only", np.r_[1, 1, 1, [1e-9] * 1000, 2, 2, 2].astype(np.float32),
        "float32",
        "tensor([1., 1., 1.,  ..., 2., 2., 2.])",
    ),
    Case(
        "wrap_1d_float", np.arange(40, dtype=np.float32) / 3, "float32",
        "tensor([ 0.0000,  0.3333,  0.6667,  1.0000,  1.3333,  1.6667,  2.0000,  2.3333,\n"
        "         2.6667,  3.0000,  3.3333,  3.6667,  4.0000,  4.3333,  4.6667,  5.0000,\n"
        "         5.3333,  5.6667,  6.0000,  6.3333,  6.6667,  7.0000,  7.3333,  7.6667,\n"
        "         8.0000,  8.3333,  8.6667,  9.0000,  9.3333,  9.6667, 10.0000, 10.3333,\n"
        "        10.6667, 11.0000, 11.3333, 11.6667, 12.0000, 12.3333, 12.6667, 13.0000])",
    ),
    Case(
        "wrap_1d_int", np.arange(100), "int64",
        "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
        "        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n"
        "        36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53,\n"
        "        54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,\n"
        "        72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89,\n"
        "        90, 91, 92, 93, 94, 95, 96, 97, 98, 99])",
    ),
    Case(
        "wrap_2d", np.arange(60, dtype=np.float32).reshape(2, 30) * 1.5, "float32",
        "tensor([[ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n"
        "         12.0000, 13.5000, 15.0000, 16.5000, 18.0000, 19.5000, 21.0000, 22.5000,\n"
        "         24.0000, 25.5000, 27.0000, 28.5000, 30.0000, 31.5000, 33.0000, 34.5000,\n"
        "         36.0000, 37.5000, 39.0000, 40.5000, 42.0000, 43.5000],\n"
        "        [45.0000, 46.5000, 48.0000, 49.5000, 51.0000, 52.5000, 54.0000, 55.5000,\n"
        "         57.0000, 58.5000, 60.0000, 61.5000, 63.0000, 64.5000, 66.0000, 67.5000,\n"
        "         69.0000, 70.5000, 72.0000, 73.5000, 75.0000, 76.5000, 78.0000, 79.5000,\n"
        "         81.0000, 82.5000, 84.0000, 85.5000, 87.0000, 88.5000]])",
    ),
    Case(
        "layout", np.array([1.0, 2.0], np.float32), "float32",
        "tensor([1., 2.], layout=torch._mkldnn)",
        {"layout_suffix": "torch._mkldnn"},
    ),
    Case(
        "requires_grad", np.array([1.0, 2.0], np.float32), "float32",
        "tensor([1., 2.], requires_grad=True)",
        {"requires_grad": True},
    ),
    Case(
        "grad_fn", np.array([2.0, 4.0], np.float32), "float32",
        "tensor([2., 4.], grad_fn=<MulBackward0>)",
        {"grad_fn_name": "MulBackward0"},
    ),
    Case(
        "grad_fn_wins_over_requires_grad", np.array(3.0, np.float32), "float32",
        "tensor(3., grad_fn=<SumBackward0>)",
        {"grad_fn_name": "SumBackward0", "requires_grad": True},
    ),
    Case(
        "grad_fn_float64", np.array([2.0, 4.0]), "float64",
        "tensor([2., 4.], dtype=torch.float64, grad_fn=<MulBackward0>)",
        {"grad_fn_name": "MulBackward0"},
    ),
    Case(
        "suffix_wraps", np.arange(7) * 1.5, "float64",
        "tensor([0.0000, 1.5000, 3.0000, 4.5000, 6.0000, 7.5000, 9.0000],\n"
        "       dtype=torch.float64, grad_fn=<MulBackward0>)",
        {"grad_fn_name": "MulBackward0"},
    ),
    Case(
        "suffix_wraps_after_2d", np.arange(16, dtype=np.float64).reshape(2, 8) * 1.5, "float64",
        "tensor([[ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000],\n"
        "        [12.0000, 13.5000, 15.0000, 16.5000, 18.0000, 19.5000, 21.0000, 22.5000]],\n"
        "       dtype=torch.float64, grad_fn=<MulBackward0>)",
        {"grad_fn_name": "MulBackward0"},
    ),
    Case(
        "opt_precision", np.array([1.12345], np.float32), "float32",
        "tensor([1.12])",
        {}, {"precision": 2},
    ),
    Case(
        "opt_precision_0", np.array([1.6, 2.2], np.float32), "float32",
        "tensor([2, 2])",
        {}, {"precision": 0},
    ),
    Case(
        "opt_threshold", np.arange(10), "int64",
        "tensor([0, 1, 2,  ..., 7, 8, 9])",
        {}, {"threshold": 5},
    ),
    Case(
        "opt_threshold_2d", np.arange(64).reshape(8, 8), "int64",
        "tensor([[ 0,  1,  ...,  6,  7],\n"
        "        [ 8,  9,  ..., 14, 15],\n"
        "        ...,\n"
        "        [48, 49,  ..., 54, 55],\n"
        "        [56, 57,  ..., 62, 63]])",
        {}, {"threshold": 5, "edgeitems": 2},
    ),
    Case(
        "opt_edgeitems_0", np.arange(2000), "int64",
        "tensor([...], size=(2000,))",
        {}, {"edgeitems": 0},
    ),
    Case(
        "opt_edgeitems_0_2d", np.arange(2000).reshape(20, 100), "int64",
        "tensor([...], size=(20, 100))",
        {}, {"edgeitems": 0},
    ),
    Case(
        "opt_edgeitems_0_unsummarized", np.arange(3), "int64",
        "tensor([0, 1, 2], size=(3,))",
        {}, {"edgeitems": 0},
    ),
    Case(
        "opt_linewidth", np.arange(30), "int64",
        "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,\n"
        "         8,  9, 10, 11, 12, 13, 14, 15,\n"
        "        16, 17, 18, 19, 20, 21, 22, 23,\n"
        "        24, 25, 26, 27, 28, 29])",
        {}, {"linewidth": 40},
    ),
    Case(
        "opt_sci_mode_true", np.array([1.5, 2.0], np.float32), "float32",
        "tensor([1.5000e+00, 2.0000e+00])",
        {}, {"sci_mode": True},
    ),
    Case(
        "opt_sci_mode_true_all_zero", np.zeros(2, np.float32), "float32",
        "tensor([0., 0.])",
        {}, {"sci_mode": True},
    ),
    Case(
        "opt_sci_mode_false", np.array([1e-5, 1.0], np.float32), "float32",
        "tensor([0.0000, 1.0000])",
        {}, {"sci_mode": False},
    ),
    Case(
        "opt_sci_mode_false_huge", np.array([1e10, 1.0], np.float32), "float32",
        "tensor([10000000000.,           1.])",
        {}, {"sci_mode": False},
    ),
    Case(
        "opt_profile_short", np.arange(2000, dtype=np.float32) / 3, "float32",
        "tensor([0.00e+00, 3.33e-01,  ..., 6.66e+02, 6.66e+02])",
        {}, {"profile": "short"},
    ),
]

# A CPU-only PyTorch cannot make these tensors, so the expected strings follow
# _str_intern's suffix order: device, size, dtype, grad_fn / requires_grad.
DEVICE_CASES = [
    Case("device", np.array([1.0, 2.0], np.float32), "float32",
         "tensor([1., 2.], device='cuda:0')", {"device": "cuda:0"}),
    Case("device_cpu_is_silent", np.array([1.0, 2.0], np.float32), "float32",
         "tensor([1., 2.])", {"device": "cpu"}),
    Case("device_dtype_requires_grad", np.array([1.0, 2.0]), "float64",
         "tensor([1., 2.], device='cuda:0', dtype=torch.float64, requires_grad=True)",
         {"device": "cuda:0", "requires_grad": True}),
    Case("device_empty", np.zeros((0, 3), np.int64), "int64",
         "tensor([], device='cuda:1', size=(0, 3), dtype=torch.int64)", {"device": "cuda:1"}),
    Case(
        "device_wraps", np.full((2, 8), 1.5, np.float32), "float32",
        "tensor([[1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000],\n"
        "        [1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000]],\n"
        "       device='cuda:0')",
        {"device": "cuda:0"},
    ),
]


@pytest.mark.parametrize("case", CASES + DEVICE_CASES, ids=lambda case: case.id)
def test_matches_pytorch_repr(case):
    set_printoptions(**case.options)
    assert format_tensor(case.values, case.dtype, **case.kwargs) == case.expected


def test_get_printoptions_defaults():
    assert get_printoptions() == DEFAULT_OPTIONS


@pytest.mark.parametrize("profile, expected", [
    ("default", DEFAULT_OPTIONS),
    ("short", dict(DEFAULT_OPTIONS, precision=2, edgeitems=2)),
    ("full", dict(DEFAULT_OPTIONS, threshold=math.inf)),
])
def test_profiles(profile, expected):
    set_printoptions(precision=7, edgeitems=1, linewidth=20)
    set_printoptions(profile=profile)
    assert get_printoptions() == expected


def test_explicit_options_override_profile():
    set_printoptions(profile="short", precision=6)
    assert get_printoptions() == dict(DEFAULT_OPTIONS, precision=6, edgeitems=2)


def test_any_call_resets_sci_mode():
    # PyTorch assigns sci_mode unconditionally, so an unrelated call clears it.
    set_printoptions(sci_mode=True)
    assert get_printoptions()["sci_mode"] is True
    set_printoptions(precision=5)
    assert get_printoptions()["sci_mode"] is None


def test_get_printoptions_round_trips():
    set_printoptions(precision=2, threshold=10, edgeitems=1, linewidth=50, sci_mode=False)
    saved = get_printoptions()
    set_printoptions(profile="default")
    set_printoptions(**saved)
    assert get_printoptions() == saved


def test_printoptions_context_restores():
    set_printoptions(precision=3)
    with printoptions(precision=1, sci_mode=True):
        text = format_tensor(np.array([2.25]), "float64")
    assert text == "tensor([2.2e+00], dtype=torch.float64)"
    assert get_printoptions() == dict(DEFAULT_OPTIONS, precision=3)


def test_full_profile_never_summarizes():
    set_printoptions(profile="full")
    text = format_tensor(np.arange(2000), "int64")
    assert "..." not in text
    assert text.startswith("tensor([   0,    1,") and text.endswith("1998, 1999])")
    assert text.count(",") == 1999


def test_float_width_comes_from_python_double_of_float32():
    # 0.1f is 0.100000001490116...; printing must use that double, not 0.1.
    set_printoptions(precision=10)
    assert format_tensor(np.array([0.1], np.float32), "float32") == "tensor([0.1000000015])"


# ---- oracle: random tensors against a live PyTorch ----------------------------------

ORACLE_DTYPES = ["float16", "bfloat16", "float32", "float64",
                 "int8", "int16", "int32", "int64", "uint8", "bool"]


def _random_values(rng, dtype):
    shape = tuple(int(n) for n in rng.integers(0, 6, size=rng.integers(0, 5)))
    if rng.random() < 0.1:
        shape = tuple(int(n) for n in rng.integers(10, 40, size=rng.integers(2, 4)))
    elif rng.random() < 0.05:
        shape = (int(rng.integers(900, 2500)),)
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype not in ("float16", "bfloat16", "float32", "float64"):
        info = np.iinfo(dtype)
        bound = 10 ** int(rng.integers(0, 19))
        ints = rng.integers(max(info.min, -bound), min(info.max, bound), size=shape,
                            endpoint=True)
        return np.asarray(ints).astype(dtype)
    values = rng.standard_normal(shape) * 10.0 ** rng.integers(-12, 12)
    style = rng.integers(0, 5)
    if style == 1:  # integer-valued floats
        values = np.round(values * 10.0 ** rng.integers(0, 5))
    elif style == 2:  # wide spread of magnitudes, to trip sci mode
        values = values * 10.0 ** rng.integers(-6, 6, size=shape)
    elif style == 3:
        values = np.where(rng.random(shape) < 0.3, 0.0, values)
    if rng.random() < 0.3:
        specials = rng.choice([nan, inf, -inf, -0.0, 0.0], size=shape)
        values = np.where(rng.random(shape) < 0.2, specials, values)
    return np.asarray(values)


def _random_options(rng):
    if rng.random() < 0.6:
        return {}
    options = dict(precision=int(rng.integers(0, 8)),
                   threshold=int(rng.choice([0, 5, 50, 1000])),
                   edgeitems=int(rng.integers(0, 5)),
                   linewidth=int(rng.integers(10, 140)),
                   sci_mode=[None, True, False][rng.integers(0, 3)])
    if rng.random() < 0.3:
        options["profile"] = str(rng.choice(["default", "short", "full"]))
    return options


@pytest.mark.parametrize("seed", range(10))
def test_random_tensors_match_pytorch(seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    saved_options, saved_dtype = torch._tensor_str.get_printoptions(), torch.get_default_dtype()
    try:
        for _ in range(150):
            dtype = ORACLE_DTYPES[rng.integers(len(ORACLE_DTYPES))]
            tensor = torch.from_numpy(_random_values(rng, dtype)).to(getattr(torch, dtype))
            # float16/bfloat16 reach format_tensor as float32, as from Tensor.__repr__.
            if dtype in ("float16", "bfloat16"):
                values = tensor.float().numpy()
            else:
                values = tensor.numpy()
            kwargs = {"default_dtype_name": str(rng.choice(["float32", "float64"]))}
            if tensor.is_floating_point() and rng.random() < 0.2:
                tensor = tensor.requires_grad_()
                kwargs["requires_grad"] = True
                if rng.random() < 0.5:
                    tensor = tensor * 1
                    kwargs["grad_fn_name"] = "MulBackward0"
            options = _random_options(rng)
            torch.set_printoptions(**options)
            set_printoptions(**options)
            torch.set_default_dtype(getattr(torch, kwargs["default_dtype_name"]))
            expected = repr(tensor)
            torch.set_default_dtype(saved_dtype)
            got = format_tensor(values, dtype, **kwargs)
            assert got == expected, f"{dtype} {values.shape} {options} {kwargs}"
    finally:
        torch.set_default_dtype(saved_dtype)
        torch.set_printoptions(**saved_options)
