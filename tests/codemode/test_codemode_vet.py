"""Static vetting of a model's module (issue 20, item 2): each refusal is a finding with the
line it is on, quoted; a good module passes; the required methods are checked."""

from __future__ import annotations

import pytest

from gymwright.codemode.vet import vet_source
from tests.support.paths import MEET_ON_A_LINE

GOOD = MEET_ON_A_LINE.read_text()
ANCHOR = "    def reset(self, seed=None, options=None):\n"
LINE = GOOD.splitlines().index(ANCHOR.rstrip("\n")) + 2  # the payload's line

REFUSED = {
    "import os": "import of `os` is not allowed",
    "from subprocess import run": "import from `subprocess` is not allowed",
    "from gymnasium import make": "`from gymnasium import make` is not allowed",
    "x = eval('1')": "`eval` is not allowed",
    "exec('x = 1')": "`exec` is not allowed",
    "c = compile('1', 'f', 'eval')": "`compile` is not allowed",
    "f = open('/etc/passwd')": "`open` is not allowed",
    "m = __import__('os')": "`__import__` is not allowed",
    "g = globals()": "`globals` is not allowed",
    "v = vars(self)": "`vars` is not allowed",
    "b = __builtins__": "the dunder name `__builtins__` is not allowed",
    "s = ().__class__": "the dunder attribute `.__class__`",
    "s = getattr(self, '__class__')": "`getattr` is allowed only with a literal public attribute name",
    "s = getattr(self, name)": "`getattr` is allowed only with a literal public attribute name",
    "r = np.random._bit_generator": "the private attribute `._bit_generator`",
    "np.savetxt('x', np.ones(2))": "the attribute `.savetxt` is not allowed",
    "m = functools.sys": "the attribute `.sys` is not allowed",
    "global SIZE": "`global` is not allowed",
    "k = '__subclasses__'": "a string naming a dunder attribute is not allowed",
    # issue 39: getattr/setattr cannot reach what the attribute syntax cannot
    "import typing; s = getattr(typing, 'sys')": "`typing.sys` is the module `sys`",
    "import dataclasses; i = getattr(dataclasses, 'inspect')": "`dataclasses.inspect` is the module `inspect`",
    "import dataclasses; i = dataclasses.inspect": "`dataclasses.inspect` is the module `inspect`",
    "from dataclasses import inspect": "`from dataclasses import inspect` is the module `inspect`",
    "import typing; setattr(typing, 'REFUSED_EVENTS', frozenset())": "`setattr` is allowed only on `self`",
    "np.random = None": "assigning or deleting `numpy.random` is not allowed",
    "f = (lambda m: m)(np)": "the module `np` may be used only as `np.name`",
    "self.m = np": "the module `np` may be used only as `np.name`",
    "delattr(self, 'x')": "`delattr` is not allowed",
    "h = hasattr(np, 'ctypeslib')": "the attribute `.ctypeslib` is not allowed",
    "setattr(self, 'modules', 1)": "the attribute `.modules` is not allowed",
}


def payload(line: str) -> str:
    return GOOD.replace(ANCHOR, ANCHOR + "        " + line + "\n")


def test_a_good_module_passes_and_its_class_is_found() -> None:
    vetted = vet_source(GOOD)
    assert vetted.passed and vetted.env_class == "MeetOnALine", [d.format() for d in vetted.diagnostics]


@pytest.mark.parametrize("line", list(REFUSED))
def test_each_refusal_is_a_finding_with_its_line(line: str) -> None:
    vetted = vet_source(payload(line))
    assert not vetted.passed
    found = [d for d in vetted.diagnostics if REFUSED[line] in d.message]
    assert found, [d.format() for d in vetted.diagnostics]
    assert found[0].path == f"code:{LINE}" and found[0].hint
    assert found[0].trace == [f"{LINE}: {line}"]


def test_getattr_and_setattr_with_ordinary_names_on_own_objects_pass() -> None:
    line = "setattr(self, 'speed', getattr(self, 'max_steps', 1)); r = getattr(np.random, 'default_rng')"
    vetted = vet_source(payload(line))
    assert vetted.passed, [d.format() for d in vetted.diagnostics]


def test_super_init_is_the_one_dunder_attribute_allowed() -> None:
    code = GOOD.replace("        self.possible_agents = [", "        super().__init__()\n        self.possible_agents = [")
    assert vet_source(code).passed


def test_a_syntax_error_names_its_line() -> None:
    vetted = vet_source("import numpy\n\ndef f(:\n")
    assert not vetted.passed and vetted.diagnostics[0].path == "code:3"
    assert "syntax error" in vetted.diagnostics[0].message


def test_missing_methods_signatures_and_init_arguments_are_findings() -> None:
    code = GOOD.replace("def step(self, actions):", "def stp(self, actions):").replace(
        "def reset(self, seed=None, options=None):", "def reset(self):").replace(
        "def __init__(self, render_mode=None, max_steps=20):", "def __init__(self, size):")
    messages = [d.message for d in vet_source(code).diagnostics]
    assert "class `MeetOnALine` defines no `step` method" in messages
    assert "`reset` lacks the parameter(s) seed, options" in messages
    assert "`__init__` must be callable without arguments" in messages


def test_top_level_code_and_a_missing_class_are_refused() -> None:
    messages = [d.message for d in vet_source("import numpy as np\nwhile True:\n    pass\n").diagnostics]
    assert "a top-level `While` statement is not allowed" in messages
    assert "expected exactly one `ParallelEnv` subclass, found 0" in messages


def test_a_module_over_the_size_limit_is_refused_before_parsing() -> None:
    vetted = vet_source("x = 1\n" * 2_000)
    assert not vetted.passed and "too long" in vetted.diagnostics[0].message


def test_the_checked_class_is_the_one_the_written_module_runs() -> None:
    # the written module, `train` and `export` run the module's one ParallelEnv subclass: a module
    # with two, or a `class` naming another, would run something other than what was checked
    second = GOOD + "\n\nclass Other(ParallelEnv):\n    possible_agents = []\n"
    messages = [d.message for d in vet_source(second, "MeetOnALine").diagnostics]
    assert "expected exactly one `ParallelEnv` subclass, found 2" in messages
    helper = GOOD + "\n\nclass Helper:\n    pass\n"
    messages = [d.message for d in vet_source(helper, "Helper").diagnostics]
    assert "`class` names `Helper`, but the module's `ParallelEnv` subclass is `MeetOnALine`" in messages
    assert vet_source(helper, "MeetOnALine").passed
