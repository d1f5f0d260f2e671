"""ember_tensor._backends.cpu.kernels"""
