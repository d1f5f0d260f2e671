"""Signal processing: PyTorch's window functions (`windows`: ``torch.hann_window`` ...;
`signal_windows`: ``torch.signal.windows``) and the short-time Fourier transform and its
inverse (`stft`), composed from the FFT family so that autograd follows them."""
