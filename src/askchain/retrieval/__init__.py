"""Context retrieval for the pipeline: few-shot examples by question skeleton, schema linking, database values.

Each stage is a plain function (see `examples.retrieve_examples`, `schema.link_schema`, `values.retrieve_values`);
the vendors they use (sentence-transformers, qdrant-client, datasketch, rapidfuzz) come with the `pipeline` extra.
"""
