"""``torch.backends.opt_einsum``: ember's einsum contracts its operands left to right, with
no path optimizer, so opt_einsum is never available."""
__all__ = ["is_available", "get_opt_einsum", "enabled", "strategy"]

enabled = True
strategy = None


def is_available():
    """False: ember's einsum does not use opt_einsum."""
    return False


def get_opt_einsum():
    """None: the opt_einsum package is not used."""
    return None
