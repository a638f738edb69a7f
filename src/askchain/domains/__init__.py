"""Domains: packaged schema knowledge, local datasets and evaluation sets for one kind of data each."""
