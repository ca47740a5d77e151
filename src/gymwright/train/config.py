"""`TrainConfig`: every setting of a built-in PPO run, one line of doc each."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ALGOS = ("ippo", "mappo")


@dataclass
class TrainConfig:
    """A PPO run on the batch backend (`gymwright.train.train`)."""

    spec: str | Path | dict[str, Any] = "cake_negotiation"
    """the spec: a library name, a file, or the spec's data"""
    params: dict[str, Any] | list[dict[str, Any]] = field(default_factory=dict)
    """one param dict for every copy, or a list of dicts spread over the batch (mixed configs)"""
    copies: list[int] | None = None
    """with a list of params: how many copies each config gets, in order (summing to `num_envs`);
    None: equal contiguous blocks. The log's `config{i}/...` figures are per config of the list"""
    algo: str = "ippo"
    """`ippo` (a critic on each agent's observation) or `mappo` (a centralized critic on `state()`)"""
    total_steps: int = 1_000_000
    """env steps to train for, counted as copies x steps (rounded up to whole updates)"""
    num_envs: int = 128
    """copies of the environment stepped together (small discrete games learn fastest with 64-256:
    more updates per env step; raise it for throughput, e.g. 1024, when the game needs many samples)"""
    rollout_len: int = 16
    """steps per copy collected before each update"""
    lr: float = 3e-4
    """Adam learning rate"""
    anneal_lr: bool = True
    """decay the learning rate linearly to 0 over the run"""
    gamma: float = 0.99
    """discount per env step"""
    gae_lambda: float = 0.95
    """lambda of generalized advantage estimation"""
    clip: float = 0.2
    """PPO ratio clip"""
    epochs: int = 4
    """passes over each rollout"""
    minibatches: int = 8
    """minibatches per pass (the default: 256 env steps each)"""
    ent_coef: float = 0.01
    """entropy bonus weight"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient norm clip"""
    hidden: tuple[int, ...] = (64, 64)
    """hidden layer sizes of the actor and the critic"""
    agent_index: bool = False
    """give the actor (and the IPPO critic) a one-hot of the agent's index within its role; off,
    the agents of a role share one policy of their observation (the MAPPO critic always has it)"""
    activation: str = "relu"
    """activation of the hidden layers: `relu`, or `tanh` (CleanRL's; far slower on CPU)"""
    seed: int = 0
    """seed of torch and of the environment (copy b of the batch is seeded seed * num_envs + b)"""
    init_from: str | Path | None = None
    """warm start: a checkpoint (or run folder) of the same spec and roles whose policy and value
    normalizers this run starts from (params may differ: a curriculum's next stage); the
    optimizer, the env and the step count start fresh"""
    demos: str | Path | None = None
    """demonstrations (a `gymwright.train.imitation.Demos` .npz: observations, action masks and actions of
    one-role play, e.g. a planner's) whose cross-entropy the shared actor also minimizes at every
    minibatch, weighted by `imitation_coef`: PPO that keeps imitating (as PRIMAL mixes imitation and RL)"""
    imitation_coef: float = 0.0
    """weight of the imitation loss on `demos` (constant over the run); 0 without demos"""
    checkpoint_every: int = 10
    """write a checkpoint every this many updates (and always at the end)"""
    out: str | Path = "runs/train"
    """folder for checkpoint.pt, train.jsonl and the TensorBoard events"""
    resume: bool = False
    """continue from `out/checkpoint.pt` (bit-for-bit, as if never stopped)"""
    tensorboard: bool = False
    """also write TensorBoard event files to `out/tb`"""
    threads: int = 1
    """torch threads (1 is fastest for these small networks, and makes runs reproducible)"""
    device: str = "cpu"
    """torch device of the networks: `cpu`, or `cuda` / `cuda:N` (needs a GPU and a CUDA build of torch)"""
    npc: dict[str, str] = field(default_factory=dict)
    """fixed-policy agents, not trained (`--npc ROLE=PLAYER`, repeatable): ROLE, or ROLE[I] / ROLE[I,J] /
    ROLE[I:J] for agents of the role by index; PLAYER: a scripted baseline of the spec, `random`, or a
    run folder whose frozen policy plays them"""

    @property
    def batch_steps(self) -> int:
        """Env steps (copies x steps) per update."""
        return self.num_envs * self.rollout_len

    @property
    def updates(self) -> int:
        """Updates of the run: total_steps rounded up to whole rollouts (at least 1)."""
        return max(1, -(-self.total_steps // self.batch_steps))

    def param_list(self) -> list[dict[str, Any]]:
        """The configs of the batch, one dict each."""
        return [dict(p) for p in self.params] if isinstance(self.params, list) else [dict(self.params or {})]


DEVICE_KINDS = ("cpu", "cuda")


def check_device(device: str) -> None:
    """Refuse a torch device this machine cannot train on, saying why and what to do instead."""
    from gymwright.errors import GymwrightError

    kind, colon, index = device.partition(":")
    if kind not in DEVICE_KINDS or (colon and (kind == "cpu" or not index.isdigit())):
        raise GymwrightError(f"unknown device {device!r}", path="device", value=device,
                             hint="use cpu (the default), cuda, or cuda:N for the N-th GPU")
    if kind == "cpu":
        return
    import torch

    if not torch.cuda.is_available():
        why = ("this torch build has no CUDA support" if torch.version.cuda is None
               else f"torch (built for CUDA {torch.version.cuda}) finds no usable GPU")
        raise GymwrightError(f"device {device!r}: {why} (torch {torch.__version__})", path="device", value=device,
                             hint="train on cpu (the default); for a GPU, install a CUDA build of torch on a machine with one")
    if colon and int(index) >= torch.cuda.device_count():
        raise GymwrightError(f"device {device!r}: this machine has {torch.cuda.device_count()} GPU(s), numbered from 0",
                             path="device", value=device, hint="pick an existing index, or plain cuda")
