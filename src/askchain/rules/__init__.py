"""Checks and repairs as rules over one analysis of a candidate (see askchain.rules.base)."""
