"""``torch.return_types``: the named tuples ops with several results return.

``max(x, 1)`` returns ``torch.return_types.max(values=..., indices=...)``: a tuple that
also names its fields. Every such class is made by :func:`structseq` and lives in this
module under its name, so that pickle finds it by reference (``ember_tensor.return_types.max``)
and a pickled result loads back as the same class; ``<name>_out`` is the class the
``out=`` form returns, as in PyTorch.

This module imports nothing of ember's: the op families below it create their classes
here when they load.
"""

import operator

__all__ = ["structseq"]


def structseq(name, fields):
    """The tuple class ``torch.return_types.<name>`` with named `fields` (and its ``<name>_out``
    twin), created once and kept in this module; returns the class.

    >>> Pair = structseq("example_pair", ("first", "second"))
    >>> Pair(1, 2).second
    2
    """
    existing = globals().get(name)
    if existing is not None:
        if existing._fields != tuple(fields):
            raise ValueError(f"return type {name} already exists with fields {existing._fields}")
        return existing
    for class_name in (name, name + "_out"):
        cls = _make(class_name, tuple(fields))
        globals()[class_name] = cls
        __all__.append(class_name)
    return globals()[name]


def _make(class_name, fields):
    def __new__(cls, *values):
        if len(values) != len(fields):
            raise TypeError(f"torch.return_types.{class_name} takes a {len(fields)}-sequence "
                            f"({len(values)}-sequence given)")
        return tuple.__new__(cls, values)

    def __repr__(self):
        body = ",\n".join(f"{field}={value!r}" for field, value in zip(fields, self))
        return f"torch.return_types.{class_name}(\n{body})"

    def __reduce__(self):
        return (type(self), tuple(self))

    namespace = {
        "__slots__": (), "__new__": __new__, "__repr__": __repr__, "__reduce__": __reduce__,
        "__module__": __name__, "__qualname__": class_name,
        "__doc__": f"The ({', '.join(fields)}) result of {class_name}, as torch.return_types.{class_name}.",
        "_fields": fields, "n_fields": len(fields), "n_sequence_fields": len(fields), "n_unnamed_fields": 0,
    }
    for position, field in enumerate(fields):
        namespace[field] = property(operator.itemgetter(position), doc=f"The result's {field!r} field.")
    return type(class_name, (tuple,), namespace)
