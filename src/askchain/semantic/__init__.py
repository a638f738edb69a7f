"""The semantic layer: a domain's metrics, entities and time-window conventions kept as data, and the entries one
question needs, put into its prompt and reported as how the question was read."""

from askchain.semantic.layer import (
    Entry, Layer, Reading, Shorthand, compared_window, load_layer, named_filters, named_window)

__all__ = ["Entry", "Layer", "Reading", "Shorthand", "compared_window", "load_layer", "named_filters", "named_window"]
