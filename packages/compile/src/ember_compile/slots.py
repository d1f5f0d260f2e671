"""Argument templates of recorded op calls (the joint plan's and the guarded traces'): a
`Slot` stands for a numbered value of the recording, `fill` puts the values back."""

__all__ = ["Slot", "fill", "slots_in"]


class Slot:
    """A value of the recording (an input, a parameter or buffer, an op's output) in an
    argument template; equal to the Slot of the same number."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def __eq__(self, other):
        return other.__class__ is Slot and other.index == self.index

    def __hash__(self):
        return hash(self.index)

    def __repr__(self):
        return f"v{self.index}"


def fill(template, env):
    """`template` with its Slots replaced by the values in `env` (lists, tuples and dicts
    rebuilt)."""
    cls = template.__class__
    if cls is Slot:
        return env[template.index]
    if cls is list or cls is tuple:
        return cls(fill(x, env) for x in template)
    if cls is dict:
        return {k: fill(v, env) for k, v in template.items()}
    return template


def slots_in(template, found):
    """Add the indices of the Slots in `template` (lists, tuples, dicts walked) to `found`;
    returns `found`."""
    cls = template.__class__
    if cls is Slot:
        found.add(template.index)
    elif cls is list or cls is tuple:
        for x in template:
            slots_in(x, found)
    elif cls is dict:
        for x in template.values():
            slots_in(x, found)
    return found
