"""What a process loads once and shares between questions: the models, the value indexes, the embedder and the
example store's clients. One `Resources` per process (or per test), bounded, and freed by `close()`: nothing
loaded outlives it in a module-level cache, so a test or a server that changes settings gets fresh ones."""

from __future__ import annotations

import atexit
import sys
import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

from askchain.config import Settings
from askchain.db.base import Engine
from askchain.llm.base import ChatModel

T = TypeVar("T")


class Bounded(Generic[T]):
    """A least-recently-used map that closes what it evicts (a model's weights are a gigabyte)."""

    def __init__(self, size: int, close: Callable[[T], None] = lambda value: None):
        self.size = size
        self._close = close
        self._items: OrderedDict[Hashable, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            value = self._items[key] = make()
            while len(self._items) > self.size:
                self._close(self._items.popitem(last=False)[1])
            return value

    def clear(self) -> None:
        with self._lock:
            while self._items:
                self._close(self._items.popitem()[1])

    def values(self, show: Callable[[T], str]) -> list[str]:
        with self._lock:
            return [show(value) for value in self._items.values()]


def _close_model(model: ChatModel) -> None:
    close = getattr(model, "close", None)
    if close is not None:
        close()


class Resources:
    """Loaded models by name and settings, and value indexes by database, kept up to a bound each."""

    def __init__(self, *, models: int = 2, value_indexes: int = 8):
        self._models: Bounded[ChatModel] = Bounded(models, _close_model)
        self._value_indexes = Bounded(value_indexes)

    def model(self, name: str, settings: Settings) -> ChatModel:
        """The model `name`, loaded once for the settings that shape it (context size, threads, cache)."""
        from askchain.llm.registry import get_model

        key = (name, settings.llm.model_dump_json(exclude={"model", "factual_model", "creative_model", "seed"}),
               str(settings.paths.models_dir), str(settings.paths.cache_dir))
        return self._models.get(key, lambda: get_model(name, settings))

    def loaded_models(self) -> list[str]:
        return self._models.values(lambda model: model.model_id)

    def value_index(self, engine: Engine, settings: Settings):
        """The database's value index: from memory, else from its disk cache, else built."""
        from askchain.retrieval.values import load_value_index, value_index_path

        path = value_index_path(engine, settings)
        return self._value_indexes.get(path, lambda: load_value_index(engine, settings))

    def close(self) -> None:
        """Free the models, the indexes, the embedder and the example store's server clients."""
        self._models.clear()
        self._value_indexes.clear()
        embedding, examples = (sys.modules.get(f"askchain.retrieval.{name}") for name in ("embedding", "examples"))
        if embedding is not None:
            embedding.load_embedder.cache_clear()
        if examples is not None:
            examples.close_stores()


_process: Resources | None = None
_process_lock = threading.Lock()


def process_resources() -> Resources:
    """The process's resources, created on first use and closed at exit."""
    global _process
    with _process_lock:
        if _process is None:
            _process = Resources()
            atexit.register(_process.close)
        return _process
