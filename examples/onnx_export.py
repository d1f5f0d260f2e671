"""Export a model to ONNX, check it, run it with onnxruntime and load it back into ember.

Run: python examples/onnx_export.py   (needs `pip install onnxruntime` for the runtime part)
"""
import importlib.util
import os
import tempfile

import numpy as np

import ember as torch

nn = torch.nn


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(8 * 14 * 14, 10)).eval()
    x = torch.randn(4, 1, 28, 28)
    path = os.path.join(tempfile.mkdtemp(), "model.onnx")
    torch.onnx.export(model, torch.randn(1, 1, 28, 28), path, input_names=["x"], output_names=["logits"],
                      dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})
    import onnx

    proto = onnx.load(path)
    onnx.checker.check_model(proto)
    print(onnx.helper.printable_graph(proto.graph).splitlines()[0], f"... ({len(proto.graph.node)} nodes)")
    with torch.no_grad():
        expected = model(x).numpy()
    if importlib.util.find_spec("onnxruntime"):
        import onnxruntime

        (got,) = onnxruntime.InferenceSession(path).run(None, {"x": x.numpy()})
        print("onnxruntime vs ember, max abs difference:", float(np.abs(got - expected).max()))
        assert np.allclose(got, expected, rtol=1e-4, atol=1e-5)
    reloaded = torch.onnx.load(path)
    print("ember.onnx.load vs ember, max abs difference:",
          float(np.abs(reloaded(x).detach().numpy() - expected).max()))


if __name__ == "__main__":
    main()
