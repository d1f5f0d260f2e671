"""The FFT family of ops: the three primitive transforms (`primitives`), what the public
transforms check and plan (`plan`), the transforms of ``torch.fft`` (`transforms`) and
the sample frequencies and shifts (`frequencies`). `ember_tensor.fft` is the public
namespace."""
