"""Evaluation harness: Spider/BIRD loaders and each installed domain's questions, result comparators, a resumable runner and reports."""

from askchain.eval.compare import COMPARATORS
from askchain.eval.datasets import Dataset, Example, load_bird, load_domain_questions, load_spider
from askchain.eval.report import write_report
from askchain.eval.runner import run_eval

__all__ = ["COMPARATORS", "Dataset", "Example", "load_bird", "load_domain_questions", "load_spider", "run_eval", "write_report"]
