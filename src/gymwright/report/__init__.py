"""The report: one self-contained HTML page about a run (`gymwright report RUN -o report.html`),
or a comparison of runs (`gymwright report RUN RUN ... -o compare.html`).

One run: the task, the spec, its verification, the learning curves, the evaluation with
confidence intervals, the failure kinds, the recorded episodes (text and GIFs, with a colour
legend) and a curriculum's lineage, from what a run or curriculum folder holds; a section
without evidence says "not recorded". Several runs: grouped by what differs between them (seeds
of a group pooled), their curves with 95% bands, the evaluation as interquartile means with
stratified bootstrap intervals, every run's checks and the hyperparameters side by side.

```python
from gymwright.report import write_comparison, write_report
report = write_report("runs/mapf", "report.html")
print(report.path, report.sections, report.missing)
compared = write_comparison(["runs/lr1e-3-s0", "runs/lr1e-3-s1", "runs/lr3e-4-s0", "runs/lr3e-4-s1"],
                            "compare.html", x="time")
```
"""

from gymwright.report.cohort import Cohort, read_cohort
from gymwright.report.folder import ReportError, RunFolder, read_run
from gymwright.report.page import Report, render, render_comparison, write_comparison, write_report

__all__ = ["write_report", "write_comparison", "render", "render_comparison", "Report", "read_run", "RunFolder",
           "read_cohort", "Cohort", "ReportError"]
