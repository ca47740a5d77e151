"""`make` and `make_aec`: a gymwright environment in one call, in the spirit of `gymnasium.make`.

```python
import gymwright

env = gymwright.make("cake_negotiation", discount=0.8, max_cycles=20)  # a ParallelEnv
aec = gymwright.make_aec("specs/my_env.yaml", render_mode="ansi")          # an AECEnv
```

The first argument is a library spec's name or a spec file; keyword arguments are the spec's
params and the env options every generated env accepts (`ENV_OPTIONS`): `render_mode`,
`max_cycles` and `action_mask_in_obs` (runtime/conventions.py). An unknown name, an unknown
keyword (with the nearest params and options), a param out of its range or a bad option is a
`GymwrightError` saying what to give instead.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from gymwright.compile.build import as_spec, compile_spec
from gymwright.errors import GymwrightError
from gymwright.spec.model import EnvSpec

ENV_OPTIONS = ("render_mode", "max_cycles", "action_mask_in_obs")
"""Keywords that configure the env object rather than the spec (the rest are params)."""


def make(spec: EnvSpec | str | Path, **kwargs: Any) -> Any:
    """The `pettingzoo.ParallelEnv` of `spec` (a library name or a spec file) at the given
    params and env options."""
    compiled, options = _compiled(spec, kwargs)
    return _built(spec, compiled.parallel_env, options)


def make_aec(spec: EnvSpec | str | Path, **kwargs: Any) -> Any:
    """The AEC form (`pettingzoo.AECEnv`, with PettingZoo's order-enforcing wrapper; turns follow
    the spec) of `spec` at the given params and env options."""
    compiled, options = _compiled(spec, kwargs)
    return _built(spec, compiled.aec_env, options)


def _compiled(spec: EnvSpec | str | Path, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    es = as_spec(spec)
    options = {k: v for k, v in kwargs.items() if k in ENV_OPTIONS}
    params = {k: v for k, v in kwargs.items() if k not in ENV_OPTIONS}
    unknown = sorted(set(params) - set(es.params))
    if unknown:
        known = sorted(es.params) + list(ENV_OPTIONS)
        close = {k: difflib.get_close_matches(k, known, n=1) for k in unknown}
        guesses = " or ".join(f"`{c[0]}`" for c in close.values() if c)
        raise GymwrightError(
            f"{es.name} has no param or option {', '.join(f'`{k}`' for k in unknown)}",
            path=f"make({_shown(spec)})", value=unknown,
            hint=(f"did you mean {guesses}? " if guesses else "")
            + f"its params: {', '.join(sorted(es.params)) or 'none'}; env options: {', '.join(ENV_OPTIONS)}")
    return compile_spec(es, params), options


def _built(spec: EnvSpec | str | Path, factory: Any, options: dict[str, Any]) -> Any:
    """`factory(**options)`, with the env's own ValueError (a bad option; its message says what
    to give instead) as a GymwrightError."""
    try:
        return factory(**options)
    except ValueError as e:
        raise GymwrightError(str(e), path=f"make({_shown(spec)})", value=options) from None


def _shown(spec: EnvSpec | str | Path) -> str:
    return repr(spec.name) if isinstance(spec, EnvSpec) else repr(str(spec))
