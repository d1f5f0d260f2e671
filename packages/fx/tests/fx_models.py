"""Model definitions written once for any ``torch``-like namespace, so that the same
source can be traced by ember_fx and, where PyTorch is installed, by torch.fx."""


def define_models(torch, nn, F):
    """The test models, built on the given framework's torch, nn and functional."""

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))

        def forward(self, x):
            return F.log_softmax(self.layers(x), dim=1)

    class ConvNet(nn.Module):
        # The PyTorch MNIST example's net, at a size that runs in milliseconds.
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 8, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.fc1 = nn.Linear(8 * 2 * 2, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            return F.log_softmax(self.fc2(x), dim=1)

    class Block(nn.Module):
        # Not a leaf (its class is the test's): traced through, its parameter read in forward.
        def __init__(self, width):
            super().__init__()
            self.linear = nn.Linear(width, width)
            self.scale = nn.Parameter(torch.ones(width) * 0.5)
            self.register_buffer("shift", torch.ones(width))

        def forward(self, x):
            return torch.relu(self.linear(x)) * self.scale + self.shift

    class Nested(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = Block(6)
            self.second = Block(6)
            self.head = nn.Linear(6, 3)

        def forward(self, x):
            y = self.second(self.first(x))
            y = y.view(y.size(0), -1).transpose(0, 1).t()
            return self.head(y).sum(dim=1)

    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(4, 4)

        def forward(self, x, use_relu):
            y = self.linear(x)
            if use_relu:
                return torch.relu(y)
            return torch.tanh(y)

    return {"MLP": MLP, "ConvNet": ConvNet, "Block": Block, "Nested": Nested, "Branchy": Branchy}
