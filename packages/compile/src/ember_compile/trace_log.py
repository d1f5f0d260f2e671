"""What the compiler prints while it works: the captured graph, the fused groups, the
generated kernel source, graph breaks and recompiles.

Switched on by the environment (``EMBER_COMPILE_LOG=graph,fusion,code``, read at each
compile, as PyTorch's ``TORCH_LOGS="graph_code,..."``; ``all`` turns on every topic) or by
``compile(..., options={"trace.graph": True, "trace.fusion": True, "trace.code": True})``.
Output goes to standard error.
"""
import os
import sys

__all__ = ["TOPICS", "enabled_topics", "emit"]

TOPICS = ("graph", "fusion", "code", "graph_breaks", "recompiles")


def enabled_topics(options=None):
    """The topics on for a compile with `options` (the ``compile`` argument)."""
    text = os.environ.get("EMBER_COMPILE_LOG", "")
    topics = {t.strip() for t in text.split(",") if t.strip()}
    if "all" in topics:
        topics = set(TOPICS)
    unknown = topics - set(TOPICS)
    if unknown:
        raise ValueError(f"EMBER_COMPILE_LOG: unknown topics {sorted(unknown)}; known: {', '.join(TOPICS)}, all")
    for key, value in (options or {}).items():
        if key.startswith("trace.") and value and key[len("trace."):] in TOPICS:
            topics.add(key[len("trace."):])
    return frozenset(topics)


def emit(topics, topic, title, text):
    """Print `text` under a `title` header when `topic` is in `topics`."""
    if topic in topics:
        print(f"[ember_compile {topic}] {title}\n{text.rstrip()}\n", file=sys.stderr)
