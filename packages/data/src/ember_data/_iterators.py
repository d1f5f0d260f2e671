"""The main-process iterator of a DataLoader and what every iterator shares."""
from ._fetch import create_fetcher
from ._pin_memory import pin_memory, pinning_available

__all__ = ["BaseIterator", "SingleProcessIterator"]


class BaseIterator:
    """Sampler bookkeeping shared by the single- and multi-process iterators."""

    def __init__(self, loader):
        self._loader = loader
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._collate_fn = loader.collate_fn
        self._index_sampler = loader._index_sampler
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        # Decided once per iterator, as PyTorch does: pin only when there is a device.
        self._pin_memory = loader.pin_memory and pinning_available()

    def _pinned(self, data):
        """The batch as it leaves the loader: in pinned memory when that was asked for."""
        return pin_memory(data) if self._pin_memory else data

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def _next_index(self):
        return next(self._sampler_iter)


class SingleProcessIterator(BaseIterator):
    """Everything in the main process: sampler -> fetch -> collate."""

    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = create_fetcher(self._dataset_kind, self._dataset, self._auto_collation,
                                       self._collate_fn, self._drop_last)

    def __next__(self):
        data = self._fetcher.fetch(self._next_index())
        self._num_yielded += 1
        return self._pinned(data)
