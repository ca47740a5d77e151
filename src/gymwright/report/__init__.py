"""The report: one self-contained HTML page about a run (`gymwright report RUN -o report.html`).

The task, the spec, its verification, the learning curves, the evaluation with confidence
intervals, the failure kinds, the recorded episodes (text and GIFs) and a curriculum's lineage,
from what a run or curriculum folder holds; a section without evidence says "not recorded".

```python
from gymwright.report import write_report
report = write_report("runs/mapf", "report.html")
print(report.path, report.sections, report.missing)
```
"""

from gymwright.report.folder import ReportError, RunFolder, read_run
from gymwright.report.page import Report, render, write_report

__all__ = ["write_report", "render", "Report", "read_run", "RunFolder", "ReportError"]
