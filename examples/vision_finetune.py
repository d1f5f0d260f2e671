"""Fine-tune a pretrained ResNet-18's last layer, as in PyTorch's autograd notes: freeze the
network, replace ``fc``, optimise only ``fc``; written for ``import ember_vision as torchvision``.

Run: python examples/vision_finetune.py [--steps N] [--demo-checkpoint]

``pretrained=True`` reads torchvision's checkpoint from the hub cache
(``$TORCH_HOME/hub/checkpoints/resnet18-f37072fd.pth``) or downloads it. Offline and without
the file, the error says where to put it; ``--demo-checkpoint`` instead places a stand-in
checkpoint (random weights, written by ember) in a temporary hub folder, so the script runs
as written anywhere.
"""
import argparse
import os
import tempfile
import warnings

import ember as torch
import ember.nn as nn
import ember.optim as optim
import ember_vision as torchvision
import ember_vision.transforms as transforms


def place_demo_checkpoint():
    """Point TORCH_HOME at a temporary folder holding a random ResNet-18 under torchvision's file name."""
    home = tempfile.mkdtemp(prefix="ember-hub-")
    os.environ["TORCH_HOME"] = home
    folder = os.path.join(home, "hub", "checkpoints")
    os.makedirs(folder)
    url = torchvision.models.ResNet18_Weights.IMAGENET1K_V1.url
    torch.save(torchvision.models.resnet18().state_dict(), os.path.join(folder, os.path.basename(url)))
    print(f"stand-in checkpoint (random weights) at {folder}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--demo-checkpoint", action="store_true", help="use a stand-in checkpoint (no download)")
    args = parser.parse_args()
    torch.manual_seed(0)
    if args.demo_checkpoint:
        place_demo_checkpoint()

    # --- the notes' code, unchanged ---
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torchvision's deprecation notice for pretrained=True
        model = torchvision.models.resnet18(pretrained=True)
    for param in model.parameters():
        param.requires_grad = False
    # Replace the last fully-connected layer
    # Parameters of newly constructed modules have requires_grad=True by default
    model.fc = nn.Linear(512, 100)
    # Optimize only the classifier
    optimizer = optim.SGD(model.fc.parameters(), lr=1e-2, momentum=0.9)
    # --- end of the notes' code ---

    data = torchvision.datasets.FakeData(size=args.batch_size * 4, image_size=(3, 64, 64), num_classes=100,
                                         transform=transforms.ToTensor())
    loader = torch.utils.data.DataLoader(data, batch_size=args.batch_size, shuffle=True)
    frozen = {name: p.clone() for name, p in model.named_parameters() if not name.startswith("fc.")}
    model.eval()  # frozen BatchNorm statistics too: only fc learns

    def mean_loss():
        with torch.no_grad():
            return sum(float(nn.functional.cross_entropy(model(x), y, reduction="sum")) for x, y in
                       torch.utils.data.DataLoader(data, batch_size=args.batch_size)) / len(data)

    before = mean_loss()
    losses = []
    step = 0
    while step < args.steps:
        for images, targets in loader:
            loss = nn.functional.cross_entropy(model(images), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(float(loss))
            step += 1
            if step == args.steps:
                break
    after = mean_loss()
    print(f"mean loss over the data: {before:.3f} before, {after:.3f} after {len(losses)} steps")
    unchanged = all(torch.equal(p, frozen[name]) for name, p in model.named_parameters() if name in frozen)
    print(f"frozen layers unchanged: {unchanged}; trainable: "
          f"{[name for name, p in model.named_parameters() if p.requires_grad]}")
    assert unchanged and after < before, "only fc should train, and the loss should fall"


if __name__ == "__main__":
    main()
