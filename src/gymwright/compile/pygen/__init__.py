"""The parts of the Python backend (`generate` in `compile/python_backend.py`), one concern each."""
