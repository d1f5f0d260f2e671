"""Public ops, each an Operator registered with the dispatcher."""
