"""The examples run end to end (on tiny settings where they take any): a smoke test each.

They run as a user runs them: on a GPU where one is, else on the CPU. The test suite's
CUDA simulator (conftest.py) is not passed on: under it an example that picks "cuda"
when it is available (vision_grad_penalty.py's resnet18) would run every kernel as
Python threads, minutes per step.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.mark.parametrize("script, arguments, expected", [
    ("train_linear.py", [], "learned y = 3.0000x + 2.0000"),
    ("custom_kernel.py", [], "jacobi_solve(A, b):"),
    # Tiny settings: the scripts themselves fail unless their loss falls.
    ("char_lstm.py", ["--steps", "6", "--seq-len", "16", "--batch-size", "8"], "sample:"),
    ("transformer_classifier.py", ["--steps", "24", "--seq-len", "8", "--batch-size", "32"], "held-out accuracy"),
    ("mnist.py", ["--epochs", "2", "--min-accuracy", "0.85"], "Training on the 8x8 digits shipped with ember-data"),
    ("custom_function.py", [], "gradcheck(LinearFunction): True"),
    ("onnx_export.py", [], "ember.onnx.load vs ember, max abs difference"),
    # ember-vision: the autograd notes' fine-tuning and the slides' resnet18 export.
    ("vision_finetune.py", ["--steps", "4", "--batch-size", "8", "--demo-checkpoint"],
     "frozen layers unchanged: True; trainable: ['fc.weight', 'fc.bias']"),
    ("vision_resnet18_onnx.py", [], "onnx.checker: ok; graph"),
    ("vision_grad_penalty.py", ["--size", "32"], "second-order gradients in"),
])
def test_example_runs(script, arguments, expected):
    result = subprocess.run([sys.executable, str(EXAMPLES / script), *arguments], capture_output=True, text=True,
                            timeout=600, env=_as_a_user_runs_it())
    assert result.returncode == 0, result.stdout + result.stderr
    assert expected in result.stdout


def _as_a_user_runs_it():
    return {name: value for name, value in os.environ.items() if name != "NUMBA_ENABLE_CUDASIM"}


def test_ddp_example_runs_under_the_launcher():
    result = subprocess.run([sys.executable, "-m", "ember_distributed.run", "--nproc-per-node", "2",
                             str(EXAMPLES / "ddp_train.py"), "--epochs", "2"], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "epoch 1: mean loss" in result.stdout and "over 2 processes" in result.stdout
