"""Params (`p.<name>`) and episode variables (`v.<name>`) of a generated env.

Generated code reads and writes them by attribute (`v.offer`). Where it must go by a name held
in a variable (param validation, restarting some copies of a batch) it uses these three
methods, so that the module itself never calls `getattr`, `setattr` or `vars`: a generated
module that does is refused by gymwright's audit. Names of dunder form are refused here too.
"""


def _plain_name(name):
    if not isinstance(name, str) or name.startswith("__"):
        raise ValueError(f"not a variable name: {name!r}")
    return name


class Namespace:
    """Attributes set and read by name (`_set`, `_get`) and listed (`_items`)."""

    def _set(self, name, value):
        setattr(self, _plain_name(name), value)

    def _get(self, name):
        return getattr(self, _plain_name(name))

    def _items(self):
        return list(vars(self).items())
