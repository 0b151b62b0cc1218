"""What every example prints after ``mlflow.models.evaluate``: the status line, the top
findings with their evidence and fixes, and where to browse the run.

Examples run as scripts (``python examples/<name>.py``), so this sibling module is on
``sys.path`` without installing anything.
"""

from __future__ import annotations


def print_summary(result, run, tracking_uri: str, *, top: int = 5) -> None:
    """Print the deepfix outcome of ``result`` (an ``EvaluationResult``) for ``run``."""
    findings = result.artifacts["deepfix_findings"].content
    print(f"\ndeepfix status: {findings['status'].upper()}  modality={findings['modality']}  "
          f"({findings['timings']['total_seconds']:.1f}s, run {run.info.run_id})\n")
    for finding in findings["findings"][:top]:
        print(f"#{finding['rank']} [{finding['severity']}] {finding['category']}: "
              f"{finding['title']}")
        for evidence in finding["evidence"][:3]:
            print(f"    evidence ({evidence['source']}): {evidence['detail']}")
        for step, fix in enumerate(finding["fixes"][:2], start=1):
            print(f"    fix {step}: {fix}")
        print()
    print(f"report:   {result.artifacts['deepfix_report'].uri}")
    print(f"\nBrowse it: mlflow ui --backend-store-uri {tracking_uri} --port 5000")
