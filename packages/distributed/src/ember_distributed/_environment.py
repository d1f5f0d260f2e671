"""What the launcher told this process, read from the environment (torchrun's variables)."""
import os

__all__ = ["get_node_local_rank", "is_torchelastic_launched"]


def get_node_local_rank(fallback_rank=None):
    """This process's rank among the processes of its node (``LOCAL_RANK``, which ember-run
    and torchrun set), else `fallback_rank`; RuntimeError when there is neither."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow `get_node_local_rank` to "
        "work, assuming you are not running in a multi-device context and want the code to run locally instead.")


def is_torchelastic_launched():
    """Whether a torchrun-style launcher started this process (``TORCHELASTIC_RUN_ID`` is set:
    ember-run sets it, as torchrun does)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None
