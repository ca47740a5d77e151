"""The parts of the whole-spec check (`spec.checker.check_spec`), one section each."""
