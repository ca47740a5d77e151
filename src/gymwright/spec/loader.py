"""Load a spec from a file, a library name, YAML/JSON text or a dict.

Every problem becomes a Diagnostic with the spec path (`rewards.bargainer[0].expr`), never a
pydantic or YAML traceback.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails
from yaml.reader import ReaderError

from gymwright.diagnostic import Diagnostic, error
from gymwright.errors import SpecError
from gymwright.spec import limits
from gymwright.spec import model as m

LIBRARY_DIR = Path(__file__).resolve().parent / "library"
STAGE = "schema"


def library_names() -> list[str]:
    return sorted(p.stem for p in LIBRARY_DIR.glob("*.yaml"))


def resolve(source: str | Path) -> Path:
    """A spec path, or the library file of that name."""
    path = Path(source)
    if _exists(path):
        return path
    shown = str(source) if len(str(source)) <= 200 else str(source)[:200] + "..."
    if isinstance(source, str) and "/" not in source and not source.endswith((".yaml", ".yml", ".json")):
        lib = LIBRARY_DIR / f"{source}.yaml"
        if _exists(lib):
            return lib
        close = difflib.get_close_matches(source, library_names(), n=2, cutoff=0.7) if len(source) <= 200 else []
        hint = f"did you mean {' or '.join(close)}?" if close else f"library specs: {', '.join(library_names())}"
        raise SpecError([error(STAGE, shown, f"no spec file or library spec named `{shown}`", hint)])
    raise SpecError([error(STAGE, shown, "file not found", "check the path")])


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):  # a name too long for the file system, or with a NUL
        return False


def read_data(source: str | Path | dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Raw spec data and a label saying where it came from, within the limits of
    `gymwright.spec.limits` (size, encoding, nesting, alias expansion)."""
    if isinstance(source, dict):
        limits.check_data(source, "<dict>")
        return source, "<dict>"
    text_given = isinstance(source, str) and ("\n" in source or source.lstrip().startswith("{"))
    if text_given:
        text, label = str(source), "<text>"
        limits.check_text_size(text, label)
    else:
        path = resolve(source)
        if path.suffix == ".py":
            raise SpecError([error(STAGE, str(path), "this is a code-mode module (Python), not a spec",
                                   "`gymwright train`, `evaluate`, `play` and `export` take a code-mode module; "
                                   "this command takes a spec file (.yaml or .json)")])
        text, label = limits.read_file(path), str(path)
    data = parse(text, label)
    if not isinstance(data, dict):
        raise SpecError([error(STAGE, label, f"a spec must be a mapping at the top level, got {type(data).__name__}",
                               "start with `gymwright: 1` and `name: ...`")])
    limits.check_data(data, label)
    return data, label


def read_document(path: str | Path, doc: limits.Document) -> tuple[Any, str]:
    """The data and the text of a YAML or JSON file that is not a spec (a `--config` file:
    `limits.CONFIG`), read as a spec file is: within the reading limits, every problem a SpecError
    whose diagnostic names the file (and line) and the fix, in `doc`'s words."""
    label = str(path)
    text = limits.read_file(Path(path), doc)
    data = parse(text, label, doc)
    limits.check_data(data, label, doc)
    return data, text


def parse(text: str, label: str, doc: limits.Document | None = None) -> Any:
    """YAML (JSON for a label ending in .json) within the reading limits; any problem is a
    SpecError naming `label`, line and column."""
    doc = doc or limits.SPEC
    stage = doc.stage
    try:
        return limits.load_yaml(text, label, doc) if not label.endswith(".json") else limits.load_json(text, label, doc)
    except ReaderError as e:
        raise SpecError([error(stage, label, f"the text contains the control character #x{e.character:04x} "
                               f"(character {e.position})", f"remove it: a {doc.noun} is printable text")]) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{label}:{mark.line + 1}:{mark.column + 1}" if mark else label
        raise SpecError([error(stage, where, f"YAML syntax error: {getattr(e, 'problem', e)}",
                               "check indentation and quoting; expressions with ':' or '#' need quotes")]) from None
    except json.JSONDecodeError as e:
        raise SpecError([error(stage, f"{label}:{e.lineno}:{e.colno}", f"JSON syntax error: {e.msg}")]) from None
    except ValueError as e:  # a number Python refuses to read, e.g. an int of more than 4300 digits
        why = str(e).split(";")[0]  # not Python's advice to raise its limit
        raise SpecError([error(stage, label, f"a value cannot be read: {why}",
                               "write numbers of at most a few dozen digits")]) from None


def load_spec(source: str | Path | dict[str, Any]) -> m.EnvSpec:
    """Parse and schema-validate a spec. Raises SpecError carrying diagnostics."""
    data, _ = read_data(source)
    slips = yaml_slips(data)
    if slips:  # the schema's own errors would only follow from these
        raise SpecError(slips)
    try:
        return m.EnvSpec.model_validate(data)
    except ValidationError as e:
        raise SpecError(schema_diagnostics(e)) from None


_TEXT_KEYS = ("doc", "description", "name")


def yaml_slips(data: Any, path: str = "") -> list[Diagnostic]:
    """Two YAML slips that the schema would report only as riddles: an unquoted text with a comma
    in a flow mapping (`{doc: hunters, who chose}` reads `who chose` as a key) and an enum written
    as one text (`enum: "a, b"` rather than a list)."""
    out: list[Diagnostic] = []
    stack: list[tuple[Any, str]] = [(data, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, list):
            stack += [(x, f"{where}[{i}]") for i, x in enumerate(node)]
            continue
        if not isinstance(node, dict):
            continue
        text_key = next((k for k in _TEXT_KEYS if isinstance(node.get(k), str)), None)
        for key, value in node.items():
            here = f"{where}.{key}" if where else str(key)
            if text_key and value is None and isinstance(key, str) and not key.isidentifier():
                out.append(error(STAGE, f"{where}.{text_key}" if where else text_key,
                                 f"the text of `{text_key}` ends at a comma: YAML read the rest, `{key}`, as a key",
                                 f"quote this text: {text_key}: \"{node[text_key]}, {key}\"", value=key))
            elif key == "enum" and isinstance(value, str):
                names = [x.strip() for x in value.split(",") if x.strip()]
                out.append(error(STAGE, here, f"`enum` is a list of names, got the text {value!r}",
                                 f"write enum: [{', '.join(names)}]", value=value))
            else:
                stack.append((value, here))
    return sorted(out, key=lambda d: d.path)


_TAGS = {"str", "int", "float", "bool", "list", "dict", "none"} | {
    name for name, obj in vars(m).items() if isinstance(obj, type) and issubclass(obj, BaseModel)
}
# the keys as a spec writes them (a field's alias, e.g. `else` for `else_`)
_FIELDS = sorted({info.alias or f for obj in vars(m).values() if isinstance(obj, type) and issubclass(obj, BaseModel)
                  for f, info in obj.model_fields.items()})
# key -> the sections that have it (an unknown key here may be a right key in another section)
_OWNERS: dict[str, list[str]] = {}
for _obj in vars(m).values():
    if isinstance(_obj, type) and issubclass(_obj, BaseModel) and _obj.__module__ == m.__name__:
        for _f, _info in _obj.model_fields.items():
            _OWNERS.setdefault(_info.alias or _f, []).append(_obj.__name__)


def _clean(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif "[" in part or part in _TAGS or part.startswith("function-"):
            continue
        else:
            out += f".{part}" if out else part
    return out


_KINDS = {
    "bool_parsing": "a bool", "bool_type": "a bool", "int_parsing": "an int", "int_type": "an int",
    "int_from_float": "an int", "float_parsing": "a number", "float_type": "a number",
    "string_type": "a string (an expression)", "list_type": "a list", "dict_type": "a mapping",
    "model_type": "a mapping", "model_attributes_type": "a mapping", "literal_error": "one of the listed words",
}


def schema_diagnostics(e: ValidationError) -> list[Diagnostic]:
    """One diagnostic per spec path (a union reports one error per alternative: merge them)."""
    grouped: dict[str, list[ErrorDetails]] = {}
    for err in e.errors():
        grouped.setdefault(_clean(err["loc"]), []).append(err)
    return [_diagnostic(path, errs) for path, errs in grouped.items()]


def _unknown_key_hint(key: str) -> str:
    """A key of another section says where it belongs; a misspelling gets the nearest key."""
    if key in _OWNERS:
        owners = " and ".join(f"`{o}`" for o in sorted(_OWNERS[key]))
        return (f"`{key}` is a key of {owners}, not of this section: move it there or remove it; "
                "see `gymwright schema`")
    close = difflib.get_close_matches(key, [f for f in _FIELDS if f != key], n=1, cutoff=0.7)
    return f"did you mean `{close[0]}`?" if close else "remove it; see `gymwright schema` for the allowed keys"


def _diagnostic(path: str, errs: list[ErrorDetails]) -> Diagnostic:
    err = errs[0]
    kind = err["type"]
    if kind == "extra_forbidden":
        key = str(err["loc"][-1])
        return error(STAGE, path, f"unknown key `{key}`", _unknown_key_hint(key))
    if kind == "missing":
        return error(STAGE, path, f"missing required key `{err['loc'][-1]}`", "see `gymwright schema`")
    typed = [e for e in errs if e["type"] in _KINDS]
    if len(typed) > 1 or (typed and len(errs) == 1 and kind != "literal_error"):
        wanted = " or ".join(dict.fromkeys(_KINDS[e["type"]] for e in typed))
        return error(STAGE, path, f"expected {wanted}, got {_short(err.get('input'))!r}",
                     "see `gymwright schema` for the type of each key", value=_short(err.get("input")))
    best = next((e for e in errs if not e["msg"].startswith("Input should be a valid")), err)
    message = best["msg"].removeprefix("Value error, ")
    return error(STAGE, path, message, _hint(best["type"]), value=_short(best.get("input")))


def _hint(kind: str) -> str:
    return {
        "string_pattern_mismatch": "names start with a letter and use letters, digits and _",
        "literal_error": "use one of the listed values",
        "too_short": "give at least one entry",
    }.get(kind, "")


def _short(value: Any) -> Any:
    text = repr(value)
    return value if len(text) <= 200 else text[:200] + "..."
