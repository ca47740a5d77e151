"""An environment as a text game: the rules card, an observation as text, the legal actions by
name and the parser of a reply, all read from a layout (plain data: `compile/textlayout.py` makes
it from the checked spec; a generated module carries it as `TEXT_LAYOUT`).

Standalone (numpy and the standard library only): a generated module inlines what it uses, so an
exported env is played as text with no gymwright installed, the same way gymwright plays it.

A layout is a dict: `name`, `description`, `doc`, `agents`, `role_of` (per agent index), `invalid`
(the rule for a reply that names no legal action), `params` (name, value, doc) and `roles`, per role: `doc`, `count`,
`features` (name, shape, kind, doc), `actions` (the name of each flat action index),
`choices` (name, doc, the argument values per argument) and `rewards` (name, expression, weight,
doc).
"""

import json
import re

import numpy as np

# What a reply that names no legal action becomes (`invalid` of a layout): a uniformly random
# legal action, or the legal action of lowest index. Either way the reply is counted invalid.
TV_INVALID_RULES = ("random", "first")
TV_NUMBER = re.compile(r"^\s*\[?\s*(\d+)\s*\]?\s*\.?\s*$")
TV_CALL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*$", re.S)


def tv_action_name(choice, args):
    """`propose(share=0.9)`, or the choice's name where it has no arguments."""
    if not args:
        return choice
    return choice + "(" + ", ".join(f"{k}={float(x):g}" for k, x in args.items()) + ")"


def tv_value(x, kind):
    """One observed value as text: true/false, an integer, or a float to 3 significant digits."""
    if kind == "bool":
        return "true" if x >= 0.5 else "false"
    if kind == "int" or float(x).is_integer():
        return str(int(round(float(x))))
    return f"{float(x):.3g}"


def tv_cell(x, kind):
    """One cell of a map: `#`/`.` for bool, a digit for a small int, else the value."""
    if kind == "bool":
        return "#" if x >= 0.5 else "."
    return tv_value(x, kind)


def tv_feature_lines(feature, values):
    """The lines of one feature: `name = value`, a list, or a map (a 2-D feature)."""
    name, shape, kind, doc = feature[0], tuple(feature[1]), feature[2], feature[3]
    head = f"{name}" + (f" ({doc})" if doc else "")
    if not shape:
        return [f"- {head}: {tv_value(values[0], kind)}"]
    if len(shape) == 2:
        grid = np.asarray(values).reshape(shape)
        width = max(len(tv_cell(x, kind)) for x in grid.ravel()) if grid.size else 1
        rows = [" ".join(tv_cell(x, kind).rjust(width) for x in row) for row in grid]
        legend = "; # = true, . = false" if kind == "bool" else ""
        return [f"- {head}, a {shape[0]}x{shape[1]} map{legend}:"] + ["    " + r for r in rows]
    return [f"- {head}: [" + ", ".join(tv_value(x, kind) for x in np.ravel(values)) + "]"]


def tv_observation(layout, agent_index, obs):
    """The observation of agent `agent_index` (its Box vector) as text, feature by feature; the
    2-D true/false features of one shape (a grid's windows) drawn as one character map with a legend."""
    role = layout["roles"][layout["role_of"][agent_index]]
    obs = np.asarray(obs, dtype=np.float64).ravel()
    parts, at = [], 0
    for feature in role["features"]:
        size = int(np.prod(feature[1])) if feature[1] else 1
        parts.append((feature, obs[at : at + size]))
        at += size
    lines, drawn = [], set()
    for k, (feature, values) in enumerate(parts):
        if k in drawn:
            continue
        layers = tv_layers(parts, k)
        if len(layers) > 1:
            drawn.update(layers)
            lines += tv_char_map([parts[j] for j in layers])
        else:
            lines += tv_feature_lines(feature, values)
    return "\n".join(lines) if lines else "(you observe nothing)"


def tv_layers(parts, k):
    """The indices of the 2-D true/false features of feature k's shape (k's first), or [k]."""
    feature = parts[k][0]
    if feature[2] != "bool" or len(feature[1]) != 2:
        return [k]
    return [j for j, (f, _) in enumerate(parts) if j >= k and f[2] == "bool" and tuple(f[1]) == tuple(feature[1])]


def tv_char_map(layers):
    """One character map of several true/false layers: a letter per layer (the first that holds
    wins), `.` where none does, and the legend."""
    letters, legend = [], []
    for feature, _ in layers:
        letter = next((c for c in feature[0].upper() + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c.isalpha() and c not in letters), "?")
        letters.append(letter)
        legend.append(f"{letter} = {feature[0]}" + (f" ({feature[3]})" if feature[3] else ""))
    shape = tuple(layers[0][0][1])
    grids = [np.asarray(v).reshape(shape) >= 0.5 for _, v in layers]
    rows = [" ".join(next((letters[n] for n, g in enumerate(grids) if g[r, c]), ".") for c in range(shape[1]))
            for r in range(shape[0])]
    return [f"- map, {shape[0]}x{shape[1]} ({'; '.join(legend)}; . = none of these):"] + ["    " + r for r in rows]


def tv_legal(layout, agent_index, mask):
    """(flat action index, name) of every legal action of the agent, in index order."""
    names = layout["roles"][layout["role_of"][agent_index]]["actions"]
    mask = np.asarray(mask).ravel()
    return [(i, names[i]) for i in range(len(names)) if i < mask.size and mask[i]]


def tv_prompt(layout, agent_index, obs, mask):
    """One turn's message to the agent: what it observes, its legal actions, how to answer."""
    legal = tv_legal(layout, agent_index, mask)
    actions = "\n".join(f"[{i}] {name}" for i, name in legal)
    return ("You observe:\n" + tv_observation(layout, agent_index, obs)
            + "\n\nYour legal actions now:\n" + actions
            + "\n\nAnswer with exactly one legal action, written as above (e.g. " + legal[0][1]
            + ") or its number in brackets (e.g. " + str(legal[0][0]) + ").") if legal else "You have no action to take."


def tv_choice_lines(choice):
    """A choice on the rules card: its form, what it does, the values of its arguments."""
    name, doc, args = choice[0], choice[1], choice[2]
    form = name + ("(" + ", ".join(f"{a}=X" for a in args) + ")" if args else "")
    vals = "; ".join(f"{a} in {{" + ", ".join(f"{float(x):g}" for x in xs) + "}" for a, xs in args.items())
    return "- " + form + (f": {doc}" if doc else "") + (f" ({vals})" if vals else "")


def tv_rules(layout, agent_index):
    """The rules card of agent `agent_index`: the game, its role, rewards, observations, actions,
    and how to reply (the system message of a text game)."""
    agent, role_name = layout["agents"][agent_index], layout["role_of"][agent_index]
    role = layout["roles"][role_name]
    others = [a for a in layout["agents"] if a != agent]
    lines = [f"You play the game `{layout['name']}`: {layout['description']}".strip()]
    lines += [layout["doc"].strip()] if layout["doc"].strip() else []
    lines.append(f"\nYou are {agent}, of role `{role_name}`" + (f" ({role['doc']})" if role["doc"] else "")
                 + (f". The other agents: {', '.join(others)}." if others else ". You are the only agent."))
    if layout.get("params"):
        lines.append("\nSettings of this game:")
        lines += [f"- {k} = {v}" + (f": {doc}" if doc else "") for k, v, doc in layout["params"]]
    lines.append("\nYour reward each step is the sum of:")
    lines += [f"- {r[0]} = {r[2]:g} * ({r[1]})" + (f": {r[3]}" if r[3] else "") for r in role["rewards"]] or ["- nothing (reward 0)"]
    lines.append("\nEach turn you observe:")
    lines += [f"- {f[0]}" + (f": {f[3]}" if f[3] else "") for f in role["features"]] or ["- nothing"]
    lines.append("\nYour actions (only some are legal at a time; each turn lists them):")
    lines += [tv_choice_lines(c) for c in role["choices"]]
    lines.append("\n" + tv_reply_rule(layout, agent_index))
    return "\n".join(lines)


def tv_reply_rule(layout, agent_index=0):
    """How a reply is read, and what an invalid one becomes (the layout's declared rule)."""
    names = layout["roles"][layout["role_of"][agent_index]]["actions"]
    example = f"`{names[0]}`" + (f" or `{names[-1]}`" if len(names) > 1 else "")
    then = ("a random legal action is played instead" if layout["invalid"] == "random"
            else "the first legal action in the list is played instead")
    return (f"Reply with one legal action written as listed, e.g. {example}, or its "
            "number in brackets, or JSON {\"action\": \"NAME\"}. A reply that names no legal action is "
            f"invalid: {then}, and it counts against you as an invalid reply.")


def tv_parse(layout, agent_index, reply, mask):
    """(action, how, error): the flat index a reply names and how it named it (`json`, `name`,
    `index`, `mention`), or (None, '', why) when it names no legal action."""
    legal = tv_legal(layout, agent_index, mask)
    if not legal:
        return None, "", "the agent has no legal action"
    text = tv_unwrap(str(reply))
    for how, read in (("json", tv_read_json), ("name", tv_read_name), ("index", tv_read_index),
                      ("mention", tv_read_mention)):
        found = read(text, legal)
        if found is not None:
            return (found, how, "") if found >= 0 else (None, "", tv_illegal(text, legal, -2 - found))
    names = layout["roles"][layout["role_of"][agent_index]]["actions"]
    call = tv_call(text)
    known = [name for name in names if call is not None and tv_call(name) == call]
    if known:
        return None, "", f"{known[0]} is not legal now (legal: {', '.join(n for _, n in legal)})"
    return None, "", f"{text[:60]!r} names no legal action (legal: {', '.join(n for _, n in legal)})"


def tv_unwrap(text):
    """The reply without surrounding whitespace, code fences, backticks, quotes and a final period."""
    text = re.sub(r"^```[a-zA-Z]*\s*|\s*```$", "", text.strip())
    return text.strip().strip("`'\"").strip().rstrip(".").strip()


def tv_read_json(text, legal):
    """A JSON object's `action` (a name or a number); None where the reply is not such an object."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(text[start : end + 1])
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or "action" not in obj:
        return None
    value = obj["action"]
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    return tv_read_index(str(value), legal) if isinstance(value, int) else tv_read_name(value, legal)


def tv_read_name(text, legal):
    """The legal action the whole reply names (`accept`, `propose(share=0.50)`: numbers compared as
    numbers, case and spaces ignored)."""
    call = tv_call(text)
    if call is None:
        return None
    for i, name in legal:
        if tv_call(name) == call:
            return i
    return None


def tv_call(text):
    """(choice, ((arg, value), ...)) of a written action, or None where it is not one."""
    m = TV_CALL.match(text)
    if m is None:
        return None
    args = []
    for part in filter(None, (p.strip() for p in (m.group(2) or "").split(","))):
        key, eq, value = part.partition("=")
        try:
            args.append((key.strip().lower(), round(float(value), 6)))
        except ValueError:
            return None
        if not eq:
            return None
    return m.group(1).lower(), tuple(sorted(args))


def tv_read_index(text, legal):
    """The legal action whose number the whole reply is (`3`, `[3]`); -2 - n for an illegal number."""
    m = TV_NUMBER.match(text)
    if m is None:
        return None
    n = int(m.group(1))
    return n if any(i == n for i, _ in legal) else -2 - n


def tv_read_mention(text, legal):
    """The one legal action named in the reply's last line that names any (`I will accept.`);
    None when no line names exactly one."""
    for line in reversed([x for x in text.splitlines() if x.strip()]):
        calls = {tv_call(w) for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*(?:\([^)]*\))?", line)} - {None}
        found = {i for i, name in legal if tv_call(name) in calls}
        if len(found) == 1:
            return found.pop()
        if found:
            return None
    return None


def tv_illegal(text, legal, n):
    """Why a reply that names action number `n` is invalid."""
    return f"{text[:40]!r} names action [{n}], which is not legal now (legal: {', '.join(f'[{i}]' for i, _ in legal)})"


def tv_fallback(layout, legal, rng):
    """The action an invalid reply becomes under the layout's rule."""
    if layout["invalid"] == "first":
        return legal[0][0]
    return legal[int(rng.integers(len(legal)))][0]
