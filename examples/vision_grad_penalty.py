"""Penalise the norm of ResNet-18's weight gradients, as in the PyTorch 0.2 release notes
(higher-order gradients: ``autograd.grad(..., create_graph=True)`` then ``backward()``
through the gradients), written for ``import ember_vision as torchvision``.

Run: python examples/vision_grad_penalty.py [--size 224]
"""
import argparse

import ember as torch
from ember.autograd import Variable
from ember_vision.models import resnet18


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=224, help="image side (the notes use 224)")
    args = parser.parse_args()
    torch.manual_seed(0)
    # The notes run on a GPU; here the GPU when ember has one, else the CPU.
    device = "cuda" if torch.cuda.is_available() else "cpu"

    # --- the release notes' code, with .cuda() as .to(device) ---
    model = resnet18().to(device)

    # dummy inputs for the example
    input = Variable(torch.randn(2, 3, args.size, args.size).to(device), requires_grad=True)
    target = Variable(torch.zeros(2).long().to(device))

    # as usual
    output = model(input)
    loss = torch.nn.functional.nll_loss(output, target)

    grad_params = torch.autograd.grad(loss, model.parameters(), create_graph=True)
    # torch.autograd.grad does not accumuate the gradients into the .grad attributes
    # It instead returns the gradients as Variable tuples.

    # now compute the 2-norm of the grad_params
    grad_norm = 0
    for grad in grad_params:
        grad_norm += grad.pow(2).sum()
    grad_norm = grad_norm.sqrt()

    # take the gradients wrt grad_norm. backward() will accumulate
    # the gradients into the .grad attributes
    grad_norm.backward()
    # --- end of the notes' code ---

    # fc.bias's gradient is a constant here (nll_loss of raw outputs): nothing flows back to it.
    reached = [name for name, p in model.named_parameters() if p.grad is not None]
    print(f"grad norm {float(grad_norm):.4f}; second-order gradients in {len(reached)} of "
          f"{len(list(model.parameters()))} parameters and in the input")
    assert "conv1.weight" in reached and input.grad is not None


if __name__ == "__main__":
    main()
