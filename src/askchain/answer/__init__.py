"""The answer stage: a result in words, a chart chosen from its shape, follow-ups made self-contained."""

from askchain.answer.chart import ChartChoice, chart_spec, choose_chart
from askchain.answer.followup import Turn, rewrite_followup
from askchain.answer.summary import summarize

__all__ = ["ChartChoice", "Turn", "chart_spec", "choose_chart", "rewrite_followup", "summarize"]
