"""Process-wide runtime settings under PyTorch's top-level names: the thread budget
(`threads`), deterministic algorithms (`determinism`) and float32 matmul precision
(`matmul_precision`). The public modules `accelerator` and `backend_flags`
(``torch.backends``) read and write the same state.
"""
