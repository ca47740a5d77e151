"""Model text is inert in the terminal (issue 39, item 8).

A model writes module comments, the exceptions its code raises, replies and explanations; shown
in the terminal, none of their control characters reach it raw (escape sequences, carriage
returns, bells, the one-byte CSI, bidirectional overrides), rich markup in them is printed as
text, and no hyperlink is made of them: `inert` for one string, `InertConsole` (the consoles
every command prints through) for all of them, checked through `design`, `show`, `train` and
`export`.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
import typer
import yaml
from click.testing import Result
from rich.console import Console
from rich.table import Table
from rich.text import Text
from typer.testing import CliRunner

from gymwright.cli import app, common, design, evaluate, evolve, report, train
from gymwright.cli.inert import InertConsole, inert
from tests.design.test_design import FITS, PLANS
from tests.support.paths import MEET_ON_A_LINE

GOOD = MEET_ON_A_LINE.read_text()
HOSTILE = ("\x1b[32mPASSED\x1b[0m | \x1b]8;;file:///etc/passwd\x07see here\x1b]8;;\x07 | [bold red]alarm[/] | "
           "[link=file:///etc/passwd]link[/link] | all tests failed\rall tests passed | \x9b2J | \u202etxt.exe")
RAW = {"ESC": "\x1b", "BEL": "\x07", "CR": "\r", "CSI": "\x9b", "RLO": "\u202e"}
SHOWN = ["\\x1b[32mPASSED\\x1b[0m", "[bold red]alarm[/]", "[link=file:///etc/passwd]link[/link]", "\\u202etxt.exe"]
# what a comment can hold (Python ends a comment at a carriage return and refuses U+009B in source)
COMMENT = "\x1b[32mPASSED\x1b[0m | \x1b]8;;file:///etc/passwd\x07see here\x1b]8;;\x07 | [bold red]alarm[/] | \u202etxt.exe"
SGR = re.compile(r"\x1b\[[0-9;]*m")  # the styles rich itself writes


def raw(text: str) -> list[str]:
    """The hostile control characters found raw in `text`."""
    return [name for name, c in RAW.items() if c in text]


def hostile_module(where: str = "") -> str:
    """The good module with COMMENT in its comments, and HOSTILE raised as a ValueError in `where` (reset, step)."""
    text = f"# {COMMENT}\n{GOOD}".replace("class MeetOnALine(ParallelEnv):",
                                            f"class MeetOnALine(ParallelEnv):  # {COMMENT}")
    if where:
        anchor = f"    def {where}(self"
        head = text[text.index(anchor):].split("\n", 1)[0] + "\n"
        text = text.replace(head, head + f"        raise ValueError({HOSTILE!r})\n")
    return text


# --------------------------------------------------------------------------- one string
@pytest.mark.parametrize(("given", "shown"), [
    ("\x1b[31mred", "\\x1b[31mred"), ("bell\x07", "bell\\x07"), ("a\rb", "a\\x0db"), ("nul\x00", "nul\\x00"),
    ("back\x08", "back\\x08"), ("del\x7f", "del\\x7f"), ("csi\x9b1m", "csi\\x9b1m"), ("osc\x9d", "osc\\x9d"),
    ("\u202eabc", "\\u202eabc"), ("\u2066x\u2069", "\\u2066x\\u2069"), ("line\u2028sep", "line\\u2028sep"),
    ("keeps\nnewlines\tand tabs", "keeps\nnewlines\tand tabs"), ("é 日本 → ✓ [b]x[/b]", "é 日本 → ✓ [b]x[/b]"),
], ids=repr)
def test_inert_shows_control_characters_as_escapes(given: str, shown: str) -> None:
    assert inert(given) == shown
    assert inert(inert(given)) == shown  # once is enough: nothing left to escape


def render(console_class: type[Console], *things: object) -> str:
    buf = io.StringIO()
    console = console_class(file=buf, force_terminal=True, color_system="truecolor", width=120)
    for thing in things:
        if thing == "rule":
            console.rule(HOSTILE)
        else:
            console.print(thing)
    return buf.getvalue()


def hostile_renderables() -> list[object]:
    table = Table(title=HOSTILE)
    table.add_column(HOSTILE)
    table.add_row(HOSTILE)
    return [HOSTILE, Text(HOSTILE, style="red"), Text.assemble(("ok ", "green"), HOSTILE), table, "rule"]


def test_an_inert_console_prints_strings_texts_tables_and_rules_inert() -> None:
    printed = render(InertConsole, *hostile_renderables())
    assert raw(SGR.sub("", printed)) == [] and "\x1b]" not in printed  # no sequence but rich's own styles, no OSC 8 link
    assert raw(printed) == ["ESC"] and "\x07" not in printed  # those styles (red, green, the table's bold)
    for text in SHOWN:
        assert printed.count(text) >= 3, (text, printed)
    # the same through rich's own console: the sequences reach the terminal and the markup styles and links
    leaked = render(Console, *hostile_renderables())
    assert "\x1b[32mPASSED" in leaked and "\x1b]8;" in leaked and "[bold red]" not in leaked.split("\n")[0]


def test_every_command_prints_through_the_inert_consoles() -> None:
    for module in (common, design, evaluate, evolve, report, train):
        for name in ("out", "err"):
            if hasattr(module, name):
                assert isinstance(getattr(module, name), InertConsole), (module.__name__, name)


def test_failures_and_diagnostics_show_a_carriage_return_as_an_escape(capsys: pytest.CaptureFixture[str]) -> None:
    from gymwright.diagnostic import error

    common.print_diagnostics([error("dynamic", "code:3", "all tests failed\rall tests passed")])
    with pytest.raises(typer.Exit):
        common.fail(["the code raised: failed\r\x1b[32mPASSED"])
    captured = capsys.readouterr()
    assert "all tests failed\\x0dall tests passed" in captured.out
    assert "the code raised: failed\\x0d\\x1b[32mPASSED" in captured.err and raw(captured.err) == []


# --------------------------------------------------------------------------- through the commands
def invoke(*args: object) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def assert_inert(result: Result, *expected: str) -> None:
    output = result.output
    assert raw(output) == [], output
    assert "\x1b]" not in output
    for text in expected:
        assert text in output, (text, output)


def test_train_and_export_print_a_module_s_exception_inert(tmp_path: Path) -> None:
    path = tmp_path / "hostile.py"
    path.write_text(hostile_module("reset"))
    trained = invoke("train", path, "--num-envs", "2", "--rollout-len", "4", "--minibatches", "1", "--steps", "8",
                     "--out", tmp_path / "run")
    assert trained.exit_code == 1
    assert_inert(trained, "ValueError", *SHOWN[:3])  # the message's first line: up to the carriage return
    exported = invoke("export", path, "-o", tmp_path / "env.py")
    assert exported.exit_code == 1 and not (tmp_path / "env.py").exists()
    assert_inert(exported, "ValueError", "\\x1b[32mPASSED\\x1b[0m")


def test_design_and_show_print_module_comments_replies_and_exceptions_inert(tmp_path: Path) -> None:
    """A first module raises HOSTILE in reset; its repair carries HOSTILE in its comments."""
    script, store = tmp_path / "script.yaml", tmp_path / "store"
    replies = [{"json": {"name": "meet_on_a_line", "class": "MeetOnALine", "code": code}}
               for code in (hostile_module("reset"), hostile_module())]
    script.write_text(yaml.safe_dump([*PLANS, *replies, FITS], sort_keys=False))  # FITS: the task-fit review
    designed = invoke("design", "Two walkers must meet.", "--mode", "code", "--model", f"scripted:{script}",
                      "--store", store, "--out", tmp_path / "env.py")
    assert designed.exit_code == 0
    assert_inert(designed, "passed")
    data = json.loads(invoke("designs", "--store", store, "--json").stdout)
    shown = invoke("show", data[0]["id"], "--store", store, "--prompts")
    assert shown.exit_code == 0
    assert_inert(shown, "final module", "   1  # \\x1b[32mPASSED\\x1b[0m", "class MeetOnALine(ParallelEnv):  # \\x1b[32m",
                 "the code raised an error in `reset`: ValueError: \\x1b[32mPASSED\\x1b[0m | "
                 "\\x1b]8;;file:///etc/passwd\\x07see here", *SHOWN)
