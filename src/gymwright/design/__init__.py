"""The designer: from task text to a verified spec (a model in four stages, or a library
template picked by a model or by the offline designer), recorded in the store.

    from gymwright.design import design, DesignOptions
    result = design("two robots divide a pie by alternating offers")   # offline by default
    result = design(task, DesignOptions(model="openai:gpt-4o-mini"))     # a model writes the spec
"""

from gymwright.design.designer import MODES, DesignOptions, DesignResult, design
from gymwright.design.session import DesignEvent, DesignStopped, Progress

__all__ = [
    # the verb
    "design", "DesignOptions", "DesignResult", "MODES",
    # progress
    "DesignEvent", "Progress", "DesignStopped",
]
