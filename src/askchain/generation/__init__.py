"""Candidate SQL generation."""
