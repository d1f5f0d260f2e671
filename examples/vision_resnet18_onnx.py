"""Export torchvision's ResNet-18 to ONNX, as in PyTorch's slides, then check the file with
onnx.checker and run it with onnxruntime against ember's own output.

Run: python examples/vision_resnet18_onnx.py [--out resnet18.onnx]   (onnxruntime: optional)
"""
import argparse
import importlib.util
import os
import tempfile

import numpy as np

import ember as torch
from ember_vision import models


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(tempfile.mkdtemp(), "resnet18.onnx"))
    args = parser.parse_args()
    torch.manual_seed(0)

    # --- the slides' code, with the file name as an argument ---
    model = models.resnet18()
    example_input = torch.randn(1, 3, 224, 224)
    torch.onnx.export(model, example_input, args.out)
    # --- end of the slides' code ---

    import onnx

    proto = onnx.load(args.out)  # Load the ONNX model
    onnx.checker.check_model(proto)  # Check that the IR is well formed
    print(f"onnx.checker: ok; graph {proto.graph.name}: {len(proto.graph.node)} nodes, input {proto.graph.input[0].name}")
    with torch.no_grad():
        expected = model.eval()(example_input).numpy()
    if importlib.util.find_spec("onnxruntime"):
        import onnxruntime

        session = onnxruntime.InferenceSession(args.out)
        (got,) = session.run(None, {session.get_inputs()[0].name: example_input.numpy()})
        print("onnxruntime vs ember, max abs difference:", float(np.abs(got - expected).max()))
        assert np.allclose(got, expected, rtol=1e-3, atol=1e-4)


if __name__ == "__main__":
    main()
