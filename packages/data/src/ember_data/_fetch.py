"""Fetchers: turn the indices the sampler produced into one collated batch."""

from ._collate import default_collate

__all__ = ["MapDatasetFetcher", "IterableDatasetFetcher", "create_fetcher"]


class MapDatasetFetcher:
    """``collate_fn([dataset[i] for i in indices])`` (or one index when not batching)."""

    def __init__(self, dataset, auto_collation, collate_fn):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, possibly_batched_index):
        """The collated batch for a list of indices (or the converted sample for one index)."""
        if self.auto_collation:
            batched = getattr(self.dataset, "_default_collated_batch", None)
            if batched is not None and self.collate_fn is default_collate:
                return batched(possibly_batched_index)
            getitems = getattr(self.dataset, "__getitems__", None)
            if getitems is not None:
                data = getitems(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class IterableDatasetFetcher:
    """The next ``batch_size`` items of the dataset's iterator (fewer at the end)."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        """The next batch; StopIteration once the stream is exhausted."""
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
    """The fetcher for a ``"map"`` or ``"iterable"`` dataset."""
    if kind == "map":
        return MapDatasetFetcher(dataset, auto_collation, collate_fn)
    return IterableDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)
