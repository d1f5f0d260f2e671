"""ONNX export time and inference latency: ember eager against onnxruntime running ember's
export, and PyTorch's export time for the same model (issue 11).

Models: the slides' MNIST net and a ResNet-18-sized network (four stages of two basic
blocks, 64-512 channels, on 1x3x64x64 images: ResNet-18's layers and parameter count with
a smaller image so it runs quickly on two cores).

Run alone: ``python -m benchmarks.export_onnx``.
"""
import io
import statistics
import time


def _lib(name):
    if name == "ember":
        import ember as torch
    else:
        import torch
    return torch


def _mnist_net(torch):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
            self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
            self.fc1 = nn.Linear(320, 50)
            self.fc2 = nn.Linear(50, 10)

        def forward(self, x):
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.conv2(x), 2))
            x = F.relu(self.fc1(x.view(-1, 320)))
            return F.log_softmax(self.fc2(x), dim=1)
    return Net(), (1, 1, 28, 28)


def _resnet18_sized(torch):
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                         if stride != 1 or cin != cout else None)

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(out + (x if self.down is None else self.down(x)))

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                      nn.MaxPool2d(3, 2, 1))
            blocks, cin = [], 64
            for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                blocks += [Block(cin, cout, stride), Block(cout, cout, 1)]
                cin = cout
            self.blocks = nn.Sequential(*blocks)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(512, 1000)

        def forward(self, x):
            return self.fc(self.pool(self.blocks(self.stem(x))).flatten(1))
    return ResNet(), (1, 3, 64, 64)


def _median(fn, repeats=5):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def measure(libs):
    """{workload: {column: seconds}}."""
    import importlib.util

    results = {}
    for name, make in (("MNIST net", _mnist_net), ("ResNet-18-sized", _resnet18_sized)):
        row = {}
        for lib in libs:
            torch = _lib(lib)
            torch.manual_seed(0)
            model, shape = make(torch)
            model.eval()
            x = torch.randn(*shape)
            buffer = io.BytesIO()

            def export():
                buffer.seek(0)
                buffer.truncate()
                torch.onnx.export(model, (x,), buffer, input_names=["x"], dynamo=False) if lib == "torch" else \
                    torch.onnx.export(model, (x,), buffer, input_names=["x"])
            row[f"{lib} export"] = _median(export, repeats=3)
            with torch.no_grad():
                row[f"{lib} eager inference"] = _median(lambda: model(x))
            if lib == "ember" and importlib.util.find_spec("onnxruntime"):
                import onnxruntime
                export()
                session = onnxruntime.InferenceSession(buffer.getvalue())
                feed = {"x": x.numpy()}
                row["onnxruntime inference (ember's export)"] = _median(lambda: session.run(None, feed))
        results[name] = row
    return results


def main():
    import importlib.util

    libs = ["ember"] + (["torch"] if importlib.util.find_spec("torch") else [])
    for name, row in measure(libs).items():
        print(f"## {name}")
        for column, seconds in row.items():
            print(f"| {column} | {seconds * 1e3:.2f} ms |")


if __name__ == "__main__":
    main()
