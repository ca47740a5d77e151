"""The opening of a script that proves an exported module needs no gymwright: it blocks every
import of gymwright (and fails if gymwright can still be imported), then puts the folder of the
exported `env.py` on the path."""

import textwrap

BLOCK_GYMWRIGHT = textwrap.dedent("""
    import importlib.abc
    import sys

    class NoGymwright(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "gymwright":
                raise ImportError(f"{name} is blocked in this test")
            return None

    sys.meta_path.insert(0, NoGymwright())
    try:
        import gymwright  # noqa: F401
    except ImportError:
        pass
    else:
        raise SystemExit("gymwright is importable: the test proves nothing")
    sys.path.insert(0, ".")
""")
