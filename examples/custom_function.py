"""A custom autograd.Function: the notes' LinearFunction and MulConstant, checked by gradcheck.

Run: python examples/custom_function.py   (runs under PyTorch with `import torch` instead)
"""
import ember as torch
from ember.autograd import Function


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


def main():
    torch.manual_seed(0)
    inputs = (torch.randn(20, 20, dtype=torch.double, requires_grad=True),
              torch.randn(30, 20, dtype=torch.double, requires_grad=True),
              torch.randn(30, dtype=torch.double, requires_grad=True))
    ok = torch.autograd.gradcheck(LinearFunction.apply, inputs, eps=1e-6, atol=1e-4)
    print("gradcheck(LinearFunction):", ok)
    x = torch.ones(3, requires_grad=True)
    MulConstant.apply(x, 5.0).sum().backward()
    print("MulConstant gradient:", x.grad)
    if not ok or x.grad.tolist() != [5.0, 5.0, 5.0]:
        raise SystemExit("custom Function check failed")


if __name__ == "__main__":
    main()
