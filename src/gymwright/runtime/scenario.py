# gymwright runtime: scenarios (`reset(seed, options={"state": {...}})`), for testing an env
# against hand-worked cases: the start values given override the random draws of `init`, after
# the same checks the spec's own declarations make (shape, type, bounds).

import math

import numpy as np


def rt_state_value(name, value, current, bounds=None, copies=None):
    """`value` as the start value of variable `name`, shaped and typed like `current`, inside
    `bounds` (lo, hi) when given; ValueError naming the variable otherwise. `copies`: a batch
    of that many copies, where `value` is one value for every copy or one per copy."""
    cur = np.asarray(current)
    arr = np.asarray(value)
    kind = cur.dtype.kind
    want = {"b": "a bool", "i": "an int", "u": "an int", "f": "a number"}[kind]
    ok = {"b": "b", "i": "iu", "u": "iu", "f": "iuf"}[kind]
    if arr.dtype.kind not in ok:
        raise ValueError(f"state `{name}` takes {want} per entry, got {value!r}")
    if kind == "f" and not np.all(np.isfinite(arr.astype(np.float64))):
        raise ValueError(f"state `{name}` = {value!r} is not finite; give finite numbers")
    shape = cur.shape if copies is None else cur.shape[1:]
    if arr.shape not in (shape, cur.shape):
        full = f" or {cur.shape} (one per copy)" if copies is not None else ""
        raise ValueError(f"state `{name}` has shape {shape}{full}, got {arr.shape}: {value!r}")
    if bounds is not None:  # (lo, hi): scalars, the declared bounds at the instance's params
        lo, hi = (float(b) for b in bounds)
        if np.any(arr < lo) or np.any(arr > hi):
            raise ValueError(f"state `{name}` = {value!r} is outside its bounds [{_num(lo)}, {_num(hi)}]")
    out = np.array(np.broadcast_to(arr, cur.shape), dtype=cur.dtype)
    if copies is None and not cur.shape and not isinstance(current, np.ndarray):
        return type(current)(out.item()) if isinstance(current, bool | int | float) else out.item()
    return out


def rt_scenario(options, names):
    """The start values in reset's `options` ({"state": {name: value}}, names declared in `names`);
    other keys are left alone, as Gymnasium's envs do (PettingZoo's API test passes one)."""
    if not hasattr(options, "items"):
        raise ValueError(f"reset options are a mapping such as {{'state': {{...}}}}, got {options!r}")
    state = options.get("state") or {}
    if not hasattr(state, "items"):
        raise ValueError(f"options['state'] must be a mapping of variable names to values, got {state!r}")
    unknown = sorted(str(k) for k in state if k not in names)
    if unknown:
        raise ValueError(f"options['state'] names no variable {', '.join(unknown)}; this env's variables: "
                         f"{', '.join(names)}")
    return state


def _num(x):
    return "inf" if x == math.inf else "-inf" if x == -math.inf else f"{x:g}"
