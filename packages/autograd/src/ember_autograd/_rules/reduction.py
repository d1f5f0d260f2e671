"""Derivatives of reductions (filled in as ember_tensor's reductions land)."""
