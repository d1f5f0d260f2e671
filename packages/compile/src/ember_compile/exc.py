"""The compiler's errors (``torch._dynamo.exc``'s names)."""

__all__ = ["Unsupported", "InvalidBackend"]


class Unsupported(RuntimeError):
    """What a graph cannot capture: with ``fullgraph=True`` it is raised, otherwise the
    call runs eagerly (a graph break) and ``explain`` reports the reason."""


class InvalidBackend(RuntimeError):
    """``torch._dynamo.exc.InvalidBackend``: a backend name no one registered."""
