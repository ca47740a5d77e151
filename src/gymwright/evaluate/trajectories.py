"""Record how a policy plays: per step the actions (by name), reward by term, a text rendering;
per episode the returns and metrics. JSONL for people and tools, PNG frames and an animated GIF
for grid specs, and a selection of the best, the worst and typical failed episodes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gymwright.atomic import atomic_writer, write_atomic
from gymwright.compile import compile_spec
from gymwright.evaluate.play import Actor, act_parallel
from gymwright.train.boundary import check_agent_step


@dataclass
class Step:
    t: int
    actions: dict[str, str]  # agent -> "propose(share=0.9)"
    rewards: dict[str, float]
    terms: dict[str, dict[str, float]]  # agent -> term -> weighted value
    text: str
    notes: dict[str, str] = field(default_factory=dict)  # agent -> a language model's reply that chose its action


@dataclass
class Trajectory:
    seed: int
    steps: list[Step] = field(default_factory=list)
    returns: dict[str, float] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    frames: list[np.ndarray] = field(default_factory=list, repr=False)  # grid specs only

    @property
    def total_return(self) -> float:
        return float(sum(self.returns.values()))

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "length": len(self.steps), "returns": self.returns,
                "metrics": self.metrics,
                "steps": [vars(s) for s in self.steps]}


def noted(decision: Any) -> str:
    """A language model's reply as a trajectory keeps it; an invalid one says so and what the
    declared rule played instead."""
    if decision.valid:
        return str(decision.reply)
    return f"{decision.reply}\n[invalid reply: {decision.error}; the rule played {decision.action_name}]"


def action_name(module: Any, agent: str, a: int) -> str:
    role = module.ROLE_OF[module.AGENTS.index(agent)]
    choice, args = module.DECODE[role][a]
    given = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in args.items())
    return f"{choice}({given})" if given else choice


def weights_of(compiled: Any) -> dict[str, dict[str, float]]:
    """role -> term -> weight, from the spec."""
    return {role: {t.name: float(t.weight) for t in terms}
            for role, terms in compiled.checked.spec.rewards.items()}


def record(spec: Any, params: dict[str, Any] | None, policy: Actor, episodes: int = 20,
           seed: int = 0, deterministic: bool = False, frames: bool = False,
           max_steps: int = 1000) -> list[Trajectory]:
    """Play `episodes` episodes (seeds seed, seed+1, ...) on the Python backend and record them."""
    compiled = compile_spec(spec, params or {})
    drawn = frames and "rgb_array" in compiled.module.raw_env.metadata["render_modes"]  # a grid's frames
    env = compiled.parallel_env(render_mode="rgb_array" if drawn else "ansi")
    weights = weights_of(compiled)
    role_of = {a: compiled.module.ROLE_OF[i] for i, a in enumerate(compiled.module.AGENTS)}
    out = []
    try:
        for k in range(episodes):
            out.append(_episode(env, compiled.module, policy, seed + k, deterministic, drawn,
                                max_steps, weights, role_of))
    finally:
        env.close()
    return out


def _episode(env: Any, module: Any, policy: Actor, seed: int, deterministic: bool, drawn: bool,
             max_steps: int, weights: dict[str, dict[str, float]], role_of: dict[str, str]) -> Trajectory:
    obs, infos = env.reset(seed=seed)
    check_agent_step(env.metadata["name"], 0, obs)
    traj = Trajectory(seed, returns={a: 0.0 for a in env.possible_agents})
    if drawn:
        traj.frames.append(np.asarray(env.render()))
    said = getattr(policy, "last", None)  # a language model's decisions (`textgame.policy.LLMPolicy`)
    while env.agents and len(traj.steps) < max_steps:
        if isinstance(said, dict):
            said.clear()
        actions = act_parallel(env, policy, obs, infos, deterministic)
        obs, rewards, _, _, infos = env.step(actions)
        check_agent_step(env.metadata["name"], len(traj.steps) + 1, obs, rewards)
        terms = {a: {k: float(v) * weights[role_of[a]].get(k, 1.0) for k, v in i.get("reward_terms", {}).items()}
                 for a, i in infos.items()}
        traj.steps.append(Step(len(traj.steps), {a: action_name(module, a, x) for a, x in actions.items()},
                               {a: float(r) for a, r in rewards.items()}, terms, env.render_text(),
                               {d.agent: noted(d) for d in said.values()} if isinstance(said, dict) else {}))
        for a, r in rewards.items():
            traj.returns[a] += float(r)
        traj.metrics = next((dict(i["metrics"]) for i in infos.values() if "metrics" in i), traj.metrics)
        if drawn:
            traj.frames.append(np.asarray(env.render()))
    return traj


def write_jsonl(trajectories: list[Trajectory], path: Path) -> Path:
    """One line per step: {"episode", "seed", "t", "actions", "rewards", "terms", "text", "notes"}; the
    episode's returns and metrics on a final line with "t": "end". Written atomically."""
    lines = []
    for e, tr in enumerate(trajectories):
        for s in tr.steps:
            lines.append({"episode": e, "seed": tr.seed, **vars(s)})
        lines.append({"episode": e, "seed": tr.seed, "t": "end", "returns": tr.returns, "metrics": tr.metrics})
    write_atomic(path, "".join(json.dumps(x, default=float) + "\n" for x in lines))
    return path


def select(trajectories: list[Trajectory], task_metric: str | None, n_failures: int = 3) -> dict[str, Any]:
    """The best and worst episodes by total return, and typical failures: episodes whose task
    metric is 0 (or, without one, the bottom quarter by return), nearest their median return."""
    ranked = sorted(trajectories, key=lambda tr: tr.total_return)
    if task_metric is not None:
        failed = [tr for tr in ranked if not tr.metrics.get(task_metric)]
    else:
        failed = ranked[: max(1, len(ranked) // 4)]
    if failed:
        mid = float(np.median([tr.total_return for tr in failed]))
        failed = sorted(failed, key=lambda tr: abs(tr.total_return - mid))[:n_failures]
    return {"best": ranked[-1] if ranked else None, "worst": ranked[0] if ranked else None,
            "failures": failed}


@dataclass(frozen=True)
class LegendEntry:
    """What a colour in a frame is: an agent's disc (its goal the small square of its colour), or
    a tile kind (a grid's frames: `gymwright/mechanics/grid/render.py`)."""

    label: str
    rgb: tuple[int, int, int]
    shape: str  # disc | tile

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "rgb": list(self.rgb), "shape": self.shape}


def legend(compiled: Any) -> list[LegendEntry]:
    """The colour legend of a spec's frames, from the mechanics module that draws them; [] when
    none does."""
    from gymwright.mechanics.registry import MECHANICS

    return [LegendEntry(label, rgb, shape) for m in MECHANICS.values() if m.legend is not None
            for label, rgb, shape in m.legend(compiled.checked)]


LEGEND_ROW, LEGEND_PAD = 18, 6


def legend_strip(entries: list[LegendEntry], width: int) -> Any:
    """A white PIL image `width` wide (or wider, to fit the labels): one row per entry, a swatch
    (a disc for an agent, a square for a tile) and its label."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=12)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    need = max((int(probe.textlength(e.label, font=font)) for e in entries), default=0) + 3 * LEGEND_PAD + 12
    strip = Image.new("RGB", (max(width, need), LEGEND_PAD + LEGEND_ROW * len(entries)), (255, 255, 255))
    draw = ImageDraw.Draw(strip)
    for k, e in enumerate(entries):
        top = LEGEND_PAD + k * LEGEND_ROW
        box = (LEGEND_PAD, top + 2, LEGEND_PAD + 12, top + 14)
        (draw.ellipse if e.shape == "disc" else draw.rectangle)(box, fill=e.rgb, outline=(90, 90, 90))
        draw.text((2 * LEGEND_PAD + 12, top + 1), e.label, fill=(31, 35, 40), font=font)
    return strip


def with_legend(frame: Any, strip: Any) -> Any:
    """The frame above the legend strip, on white, as wide as the wider of the two."""
    from PIL import Image

    out = Image.new("RGB", (max(frame.width, strip.width), frame.height + strip.height), (255, 255, 255))
    out.paste(frame, (0, 0))
    out.paste(strip, (0, frame.height))
    return out


def save_frames(trajectory: Trajectory, folder: Path, name: str, fps: int = 4,
                legend_entries: list[LegendEntry] | None = None) -> dict[str, Any]:
    """PNG frames and an animated GIF of a grid episode, the GIF's frames above a colour legend
    (`legend_entries`, from `legend(compiled)`); {} when it has no frames."""
    if not trajectory.frames:
        return {}
    folder.mkdir(parents=True, exist_ok=True)
    images = frame_images(trajectory.frames)
    pngs = []
    for i, img in enumerate(images):
        path = folder / f"{name}-{i:03d}.png"
        with atomic_writer(path) as f:
            img.save(f, format="PNG")
        pngs.append(path)
    gif = write_gif(images, folder / f"{name}.gif", fps, legend_entries)
    return {"png": pngs, "gif": gif}


def frame_images(frames: list[np.ndarray], scale: int = 4) -> list[Any]:
    """RGB frames as PIL images, each pixel `scale` x `scale` (nearest: crisp cells)."""
    from PIL import Image

    return [Image.fromarray(f.astype(np.uint8)).resize((f.shape[1] * scale, f.shape[0] * scale), Image.NEAREST)
            for f in frames]


def write_gif(images: list[Any], path: Path, fps: int = 4, legend_entries: list[LegendEntry] | None = None) -> Path:
    """An animated GIF of PIL `images` (looping), each above the colour legend when given; atomic."""
    if legend_entries:
        strip = legend_strip(legend_entries, images[0].width)
        images = [with_legend(img, strip) for img in images]
    with atomic_writer(path) as f:
        images[0].save(f, format="GIF", save_all=True, append_images=images[1:], duration=int(1000 / fps), loop=0)
    return path
