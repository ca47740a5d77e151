# gymwright runtime: core (standalone: numpy and the standard library only; inlined into exported envs)
#
# Random numbers are counter-based: a draw is a pure function of
# (seed, episode, step, site, index), so the Python and batch backends draw the same numbers
# whatever order they evaluate things in. `site` numbers each random call in the spec.

import math
import os

import numpy as np

_MASK = 0xFFFFFFFFFFFFFFFF
_U53 = 1.0 / 9007199254740992.0


def mix64(x: int) -> int:
    """splitmix64 finalizer on a Python int (64-bit wrap)."""
    x &= _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def mix64_array(x: np.ndarray) -> np.ndarray:
    """splitmix64 finalizer on a uint64 array (wraps like mix64)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def stream_key(seed: int, episode: int, step: int, site: int) -> int:
    """The key of one draw site at one step of one episode."""
    k = mix64(seed)
    k = mix64(k + episode + 1)
    k = mix64(k + step + 1)
    return mix64(k + site + 1)


# Up to this many values, `uniforms` and `rt_manhattan_rows` compute on Python ints: the same
# integer arithmetic, without numpy's cost per call, which dominates for one env's few values.
FEW_VALUES = 8


def uniforms(seed: int, episode: int, step: int, site: int, start: int, n: int) -> np.ndarray:
    """n floats in [0, 1) for element indices start .. start+n-1."""
    if n <= FEW_VALUES:  # the same 64-bit arithmetic, on Python ints
        k = stream_key(seed, episode, step, site)
        return np.array([(mix64(i * 0x9E3779B97F4A7C15 + k) >> 11) * _U53 for i in range(start, start + n)],
                        dtype=np.float64)
    key = np.uint64(stream_key(seed, episode, step, site))
    idx = np.arange(start, start + n, dtype=np.uint64)
    h = mix64_array(idx * np.uint64(0x9E3779B97F4A7C15) + key)
    return (h >> np.uint64(11)).astype(np.float64) * _U53


def new_seed() -> int:
    """A fresh seed from the OS, for reset(seed=None) before any seeding."""
    return int.from_bytes(os.urandom(8), "little") >> 1


class Draws:
    """The random source of one env: seed, episode counter and the current step."""

    def __init__(self) -> None:
        self.seed = new_seed()
        self.episode = -1
        self.step = 0

    def reset(self, seed: "int | None") -> None:
        if seed is not None:
            self.seed = rt_seed(seed)
            self.episode = 0
        else:
            self.episode += 1
        self.step = 0

    def u(self, site: int, start: int, n: int) -> np.ndarray:
        return uniforms(self.seed, self.episode, self.step, site, start, n)


# -- what callers hand in: seeds, actions, params (checked, never coerced silently)

SEED_LIMIT = 2**63  # seeds are ints in [0, 2**63): non-negative int64, as numpy's own seeds


def rt_seed(seed) -> int:
    """A reset seed: a Python or numpy int (not a bool) in [0, 2**63); ValueError otherwise.

    Nothing is reduced modulo 2**64 or truncated, so two different seeds never replay one episode.
    """
    if seed.__class__ is not int:
        if isinstance(seed, bool | np.bool_) or not isinstance(seed, int | np.integer):
            raise ValueError(f"reset(seed=...) takes None or an int in [0, 2**63), got {seed!r} ({type(seed).__name__}); "
                             "pass an int such as seed=0 (no floats, strings or bools)")
        seed = int(seed)
    if not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"reset(seed={seed}) is out of range: a seed is an int in [0, 2**63); "
                         "pass a non-negative seed below 2**63")
    return seed


def rt_close(unknown, known) -> str:
    """' (did you mean `x`?)' for the first of `unknown` names close to one of `known`; else ''."""
    import difflib

    for name in unknown:
        close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1, cutoff=0.6)
        if close:
            return f" (did you mean `{close[0]}` for `{name}`?)"
    return ""


def rt_param(name: str, kind: str, x, lo=None, hi=None):
    """A param value of type `kind` ('bool', 'int' or 'float') in its range [lo, hi] (None: no bound),
    or ValueError naming the param, the value, the range and what to give instead. NaN and
    infinities are refused: they compare false against every range, so no range check could catch
    them later."""
    if kind == "bool":
        if isinstance(x, bool | np.bool_):
            return bool(x)
        raise ValueError(f"param `{name}` must be a bool, got {x!r} ({type(x).__name__}); give True or False")
    article = "an" if kind == "int" else "a"
    span = f"[{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
    if isinstance(x, bool | np.bool_) or not isinstance(x, int | float | np.integer | np.floating):
        raise ValueError(f"param `{name}` must be {article} {kind}, got {x!r} ({type(x).__name__}); "
                         f"give {article} {kind} in {span}")
    try:
        finite = math.isfinite(x)
    except OverflowError:  # an int too large for a float
        finite = kind == "int"
    if not finite:
        raise ValueError(f"param `{name}` = {x!r} is not a finite number (NaN and infinities compare false "
                         f"against every range); give a finite {kind} in {span}")
    if kind == "int":
        if not isinstance(x, int | np.integer) and not float(x).is_integer():
            raise ValueError(f"param `{name}` must be an int, got {x!r}; give a whole number in {span}")
        x = int(x)
    else:
        x = float(x)
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        raise ValueError(f"param `{name}` = {x!r} is out of its range {span}; give {article} {kind} in {span}")
    return x


# -- random draws: arguments are checked (ValueError), the stream is never consulted for bad ones

def _arg(x) -> str:
    x = np.asarray(x)
    return repr(x.item()) if x.ndim == 0 else repr(x.tolist()) if x.size <= 8 else f"an array of shape {x.shape}"


def _bad_draw(call: str, rule: str, **args) -> None:
    got = ", ".join(f"{k}={_arg(x)}" for k, x in args.items())
    raise ValueError(f"{call} {rule}; got {got}")


def _ordered(lo, hi, strict: bool) -> bool:
    """Finite lo <= hi (lo < hi if strict), for every element of arrays."""
    if isinstance(lo, np.ndarray) or isinstance(hi, np.ndarray):
        lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
        return bool(np.all(np.isfinite(lo) & np.isfinite(hi) & ((lo < hi) if strict else (lo <= hi))))
    return -math.inf < lo < hi < math.inf if strict else -math.inf < lo <= hi < math.inf


def _probability(p) -> bool:
    """0 <= p <= 1 (NaN is not), for every element of arrays."""
    if isinstance(p, np.ndarray):
        return bool(np.all((p >= 0) & (p <= 1)))
    return 0 <= p <= 1


def _shaped(u: np.ndarray, shape: tuple):
    return u.reshape(shape) if shape else float(u[0])


def draw_uniform(d: Draws, site: int, index: int, shape: tuple, lo=0.0, hi=1.0):
    if not _ordered(lo, hi, strict=False):
        _bad_draw("uniform(lo, hi)", "draws a float in [lo, hi), so it needs finite lo <= hi", lo=lo, hi=hi)
    n = math.prod(shape)
    return lo + (hi - lo) * _shaped(d.u(site, index * n, n), shape)


def draw_normal(d: Draws, site: int, index: int, shape: tuple, mean=0.0, std=1.0):
    if not (_ordered(0.0, std, strict=False) and _ordered(mean, mean, strict=False)):
        _bad_draw("normal(mean, std)", "needs a finite mean and a finite std >= 0", mean=mean, std=std)
    n = math.prod(shape)
    u = d.u(site, 2 * index * n, 2 * n)
    z = np.sqrt(-2.0 * np.log1p(-u[0::2])) * np.cos(2.0 * np.pi * u[1::2])
    return mean + std * _shaped(z, shape)


def draw_randint(d: Draws, site: int, index: int, shape: tuple, lo, hi):
    if not _ordered(lo, hi, strict=True):
        _bad_draw("randint(lo, hi)", "draws an int in [lo, hi) (hi exclusive), so it needs finite lo < hi", lo=lo, hi=hi)
    n = math.prod(shape)
    span = np.asarray(hi) - np.asarray(lo)
    out = np.asarray(lo) + np.floor(d.u(site, index * n, n).reshape(shape or (1,)) * span).astype(np.int64)
    return out.astype(np.int64) if shape else int(out.reshape(-1)[0])


def draw_bernoulli(d: Draws, site: int, index: int, shape: tuple, p):
    if not _probability(p):
        _bad_draw("bernoulli(p)", "is true with probability p, so it needs 0 <= p <= 1", p=p)
    n = math.prod(shape)
    out = d.u(site, index * n, n).reshape(shape or (1,)) < np.asarray(p)
    return out if shape else bool(out.reshape(-1)[0])


def draw_choice(d: Draws, site: int, index: int, a):
    a = np.asarray(a)
    i = min(int(d.u(site, index, 1)[0] * len(a)), len(a) - 1)
    return a[i].item()


def draw_permutation(d: Draws, site: int, index: int, n: int):
    return np.argsort(d.u(site, index * n, n), kind="stable").astype(np.int64)


# -- arithmetic with numpy semantics (no exceptions on division by zero)

def _arrayish(a, b) -> bool:
    return isinstance(a, np.ndarray) or isinstance(b, np.ndarray)


def rt_div(a, b):
    if _arrayish(a, b) or b == 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.true_divide(a, b)
    return a / b


def rt_floordiv(a, b):
    if _arrayish(a, b) or b == 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.floor_divide(a, b)
    return a // b


def rt_mod(a, b):
    if _arrayish(a, b) or b == 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.mod(a, b)
    return a % b


def rt_pow(a, b):
    """Powers are computed in float64; overflow gives inf, never unbounded work."""
    if not _arrayish(a, b):
        try:
            out = float(a) ** float(b)
            if not isinstance(out, complex):
                return out
        except (OverflowError, ZeroDivisionError):
            pass
    with np.errstate(all="ignore"):
        out = np.power(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    return out if out.shape else float(out)


def rt_div_s(a, b):
    """Scalar a / b; numpy's inf/nan (not an exception) when b == 0."""
    return a / b if b else rt_div(a, b)


def rt_floordiv_s(a, b):
    return a // b if b else rt_floordiv(a, b)


def rt_mod_s(a, b):
    return a % b if b else rt_mod(a, b)


def rt_pow_s(a, b):
    """Scalar power in float; overflow gives inf, a complex result nan."""
    try:
        out = float(a) ** b
    except (OverflowError, ZeroDivisionError):
        return rt_pow(a, b)
    return out if out.__class__ is float else math.nan


# -- array helpers

def rt_onehot(i, n: int):
    i = np.asarray(i)
    return (i[..., None] == np.arange(n)).astype(np.float64)


def rt_push(window, x):
    out = np.empty_like(window, dtype=np.result_type(window, np.asarray(x)))
    out[:-1] = window[1:]
    out[-1] = x
    return out


def rt_roll(x, k):
    """np.roll(x, k, axis=0), faster for the small arrays of one env."""
    n = len(x)
    k = int(k) % n
    return np.concatenate((x[n - k:], x[:n - k])) if k else x.copy()


def rt_others(x, i):
    """x without its entry i along the first axis (the rest in index order); i outside raises."""
    n = len(x)
    i = int(i)
    if not 0 <= i < n:
        raise IndexError(f"others(x, i): i = {i} is outside the {n} entries of x")
    return np.concatenate((x[:i], x[i + 1:]))


def rt_stack(*xs):
    """k values per element: the arguments broadcast to one shape, stacked along a new last axis."""
    return np.stack(np.broadcast_arrays(*xs), axis=-1)


def rt_int(x):
    return np.trunc(x).astype(np.int64) if isinstance(x, np.ndarray) else int(x)


def rt_round(x):
    return np.rint(x).astype(np.int64) if isinstance(x, np.ndarray) else int(np.rint(x))


def rt_floor(x):
    return np.floor(x).astype(np.int64) if isinstance(x, np.ndarray) else math.floor(x)


def rt_ceil(x):
    return np.ceil(x).astype(np.int64) if isinstance(x, np.ndarray) else math.ceil(x)


