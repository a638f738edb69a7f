"""The governed semantic layer: a domain's measures, dimensions and windows as boring-semantic-layer models, and
semantic queries (a model, measures, dimensions, a window, filters) compiled to readable GoogleSQL.

Imports Ibis and boring-semantic-layer: load it where a semantic model is used, not at askchain's import.
"""

from askchain.semantic.governed.model import CompiledQuery, SemanticModel, load_semantic_model
from askchain.semantic.governed.query import Filter, Order, SemanticQuery, Window

__all__ = ["CompiledQuery", "Filter", "Order", "SemanticModel", "SemanticQuery", "Window", "load_semantic_model"]
