"""The old home of the per-example predictions reader (now :mod:`robustlab.runs.predictions`:
every study that keeps predictions reads them there); kept so earlier imports still work."""

from robustlab.runs.predictions import (  # noqa: F401
    EXAMPLE_COLUMNS,
    export_examples,
    failing_examples,
    failure_summary,
    prediction_rows,
    write_failure_report,
)
