"""The HTML report written to each run as ``deepfix/report.html``.

One self-contained page (inline CSS and SVG, no network fetches, readable without
JavaScript) rendered from ``templates/report.html.j2`` by Jinja2 with autoescape on, so
that it can be shown safely by the MLflow UI's sandboxed artifact viewer even when
column or check names hold markup.
"""

from mlflow_deepfix.report._render import TEMPLATE_PATH, render_report

__all__ = ["TEMPLATE_PATH", "render_report"]
