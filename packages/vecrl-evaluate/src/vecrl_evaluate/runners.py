"""Where the rows of one ``evaluate`` call run: ``run_part`` runs rows in this process, as one compiled
jax program where the env and network allow (``vecrl_evaluate.fused``) and by the stepped loop
otherwise (``vecrl_evaluate.row_loop``); worker processes and Ray actors call it on their parts, so a
Ray actor on a jax env runs its part fused too. ``InThisProcess`` is the executor of a call that
names none."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from vecrl_evaluate.executor import Evaluation, Part
from vecrl_evaluate.fused import fused_episodes, run_fused
from vecrl_evaluate.options import RowSettings
from vecrl_evaluate.randomness import RowSeeds
from vecrl_evaluate.row_loop import RowSource, run_rows
from vecrl_evaluate.threads import one_torch_thread
from vecrl_policy.policy import Policy


def run_part(
    policy: Policy,
    env: Any,
    rows: torch.Tensor,
    seeds: RowSeeds | None,
    settings: RowSettings,
    *,
    params: Mapping[str, np.ndarray] | None = None,
    progress: Callable[[int], None] | None = None,
    source: RowSource | None = None,
) -> tuple[torch.Tensor, ...]:
    """What ``vecrl_evaluate.row_loop.run_rows`` returns for these rows: by one compiled program where
    ``settings.options.fused`` allows it and the rows are all at hand (no ``source``), else by the stepped loop."""
    if source is None and settings.options.fused is not False:
        episodes = fused_episodes(policy, env, rows, settings)
        if not isinstance(episodes, str):
            return run_fused(episodes, policy, env.num_envs, rows, seeds, settings, params, progress)
    with one_torch_thread():
        return run_rows(policy, env, rows, seeds, settings, params, progress=progress, source=source)


class InThisProcess:
    """The executor of a call without one: its one part, run here; ``progress`` hears how many rows are
    done as they finish."""

    num_parts = 1

    def __init__(self, progress: Callable[[int], None] | None) -> None:
        self.progress = progress

    def run(self, evaluation: Evaluation, parts: Sequence[Part]) -> list[tuple[torch.Tensor, ...]]:
        (part,) = parts
        rows = evaluation.parameters[part.start : part.stop]
        return [
            evaluation.run_rows(
                evaluation.policy,
                evaluation.env,
                rows,
                part.seeds,
                params=part.params,
                progress=self.progress,
            )
        ]

    def close(self) -> None:
        pass
