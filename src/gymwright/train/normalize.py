"""Value normalization: the critic predicts returns scaled by a running mean and std."""

from __future__ import annotations

import torch


class ValueNorm:
    """Running mean and variance of the value targets (parallel Welford over batches)."""

    def __init__(self, eps: float = 1e-4) -> None:
        self.mean = torch.zeros((), dtype=torch.float64)
        self.var = torch.ones((), dtype=torch.float64)
        self.count = torch.tensor(eps, dtype=torch.float64)

    def update(self, x: torch.Tensor) -> None:
        x = x.detach().double().reshape(-1)
        if x.numel() == 0:
            return
        b_mean, b_var, b_count = x.mean(), x.var(unbiased=False), x.numel()
        delta = b_mean - self.mean
        total = self.count + b_count
        self.mean = self.mean + delta * b_count / total
        m2 = self.var * self.count + b_var * b_count + delta**2 * self.count * b_count / total
        self.var = m2 / total
        self.count = total

    @property
    def std(self) -> torch.Tensor:
        return torch.sqrt(self.var).clamp_min(1e-6)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return ((x - self.mean) / self.std).float()

    def denormalize(self, x: torch.Tensor) -> torch.Tensor:
        return (x * self.std + self.mean).float()

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"mean": self.mean.clone(), "var": self.var.clone(), "count": self.count.clone()}

    def load_state_dict(self, d: dict[str, torch.Tensor]) -> None:
        self.mean, self.var, self.count = d["mean"].clone(), d["var"].clone(), d["count"].clone()
