"""LazyModuleMixin: modules whose parameter shapes are inferred from the first input.

Until the first forward the parameters are UninitializedParameters; a forward pre-hook
materializes them from the input's shape, runs ``reset_parameters`` and turns the module
into its regular class (``cls_to_become``), after which it is indistinguishable from one
built with the shapes given.
"""
from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixin for lazy modules; subclasses define ``initialize_parameters(*inputs)``."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)

    def has_uninitialized_params(self):
        """Whether some parameter or buffer still waits for its shape."""
        members = list(self._parameters.values()) + list(self._buffers.values())
        return any(is_lazy(member) for member in members)

    def initialize_parameters(self, *args, **kwargs):
        """Materialize the parameters from the shapes of the first inputs."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # Loading into a lazy module gives it its shapes, as a forward would.
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)
        if not self.has_uninitialized_params() and self.cls_to_become is not None:
            self._finish_initialization()

    def _finish_initialization(self):
        self._initialize_hook.remove()
        del self._initialize_hook
        self.__class__ = self.cls_to_become


def _infer_parameters(module, args):
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._finish_initialization()
