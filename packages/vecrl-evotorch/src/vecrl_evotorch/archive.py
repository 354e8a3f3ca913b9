"""MAP-Elites in ``vecrl evolve`` (``--algorithm map-elites --measure NAME:LOW:HIGH:BINS``): the measures the
flags name, EvoTorch's ``MAPElites`` over their grid, and what a run writes of its archive each generation
(``archive.csv``; ``archive.png``, a heatmap for two measures and a line of bins for one).

A measure's NAME is a key of the env's step info (``x_velocity``) or ``obs[I]``, entry ``I`` of the flat
observation, each with ``@REDUCTION`` after it where an episode's values are not to be averaged
(``obs[0]@last``: where each episode ended; ``vecrl_evaluate.measures``).

Examples:
    >>> measure_of("obs[0]@last")
    Measure(source=ObservationAt(index=0), per_episode='last')
    >>> measure_of("x_velocity")
    Measure(source='x_velocity', per_episode='mean')
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from vecrl_evaluate.measures import Measure
from vecrl_evotorch.runs import RunFolder, pyplot, saved_figure

_OBSERVATION = re.compile(r"obs\[(\d+)\]")
#: archive.csv's own columns, beside each measure's and its NAME_bin (``save_archive``): no measure takes
#: these names.
ARCHIVE_COLUMNS = ("cell", "filled", "fitness")


@dataclass(frozen=True)
class ObservationAt:
    """Entry ``index`` of each row's flat observation: a measure's function that pickles (a run's state holds it).

    Examples:
        >>> ObservationAt(1)(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), None, None).tolist()
        [2.0, 4.0]
    """

    index: int

    def __call__(self, observation: Any, action: Any, reward: Any) -> Any:
        return observation[:, self.index]


def measure_of(name: str) -> Measure:
    """The measure a ``--measure`` NAME names (the module says how)."""
    source, _, reduction = name.partition("@")
    found = _OBSERVATION.fullmatch(source)
    return Measure(ObservationAt(int(found.group(1))) if found else source, reduction or "mean")


def measures_of(specs: Sequence[Sequence[Any]]) -> dict[str, Measure]:
    """The measures of a run's ``measures`` setting (``[[name, low, high, bins], ...]``), by name."""
    return {str(name): measure_of(str(name)) for name, *_ in specs}


def make_map_elites(problem: Any, specs: Sequence[Sequence[Any]], stdev: float) -> Any:
    """EvoTorch's ``MAPElites`` on ``problem`` (whose evaluation data are the measures of ``specs``, in order)
    over their grid, with a ``GaussianMutation`` of ``stdev``: one elite per cell."""
    from evotorch.algorithms import MAPElites
    from evotorch.operators import GaussianMutation

    grid = MAPElites.make_feature_grid(
        lower_bounds=[float(low) for _, low, _, _ in specs],
        upper_bounds=[float(high) for _, _, high, _ in specs],
        num_bins=[int(bins) for *_, bins in specs],
        dtype=problem.eval_dtype,
    )
    return MAPElites(
        problem, operators=[GaussianMutation(problem, stdev=stdev)], re_evaluate=False, feature_grid=grid
    )


def cells(specs: Sequence[Sequence[Any]]) -> int:
    """The cells of the grid of ``specs``: the population of MAP-Elites."""
    return math.prod(int(bins) for *_, bins in specs)


def best_elite(searcher: Any) -> torch.Tensor | None:
    """The parameters of the archive's best elite (None while the archive is empty)."""
    filled = searcher.filled
    if not bool(filled.any()):
        return None
    fitness = searcher.population.evals[:, 0].as_subclass(torch.Tensor)
    index = int(torch.where(filled, fitness, -torch.inf).argmax())
    return searcher.population.values[index].detach().clone().as_subclass(torch.Tensor)


def best_fitness(searcher: Any) -> float:
    """The fitness of the archive's best elite (archive.csv's best; NaN while the archive is empty)."""
    filled = searcher.filled
    fitness = searcher.population.evals[:, 0].as_subclass(torch.Tensor)
    return float(fitness[filled].max()) if bool(filled.any()) else math.nan


def coverage_and_qd_score(searcher: Any) -> tuple[float, float]:
    """The share of the archive's cells holding an elite, and its QD-score: the sum of their fitness."""
    filled = searcher.filled
    fitness = searcher.population.evals[:, 0].as_subclass(torch.Tensor)
    return float(filled.float().mean()), float(fitness[filled].sum())


def save_archive(folder: RunFolder, searcher: Any, specs: Sequence[Sequence[Any]], title: str) -> Path:
    """``archive.csv`` (each cell: whether it holds an elite, its fitness and measures, its bins) and
    ``archive.png``, both replaced at once; the CSV's path."""
    filled = searcher.filled.tolist()
    evals = searcher.population.evals.as_subclass(torch.Tensor)
    names = [str(name) for name, *_ in specs]
    shape = [int(bins) for *_, bins in specs]
    indices = [list(torch.unravel_index(torch.tensor(cell), shape)) for cell in range(len(filled))]
    index_column, filled_column, fitness = ARCHIVE_COLUMNS
    columns: dict[str, list[Any]] = {
        filled_column: [int(f) for f in filled],
        fitness: [float(e) if f else "" for e, f in zip(evals[:, 0].tolist(), filled, strict=True)],
    }
    for number, name in enumerate(names):
        values = evals[:, 1 + number].tolist()
        columns[name] = [float(v) if f else "" for v, f in zip(values, filled, strict=True)]
        columns[f"{name}_bin"] = [int(index[number]) for index in indices]
    path = folder.write_table("archive.csv", columns, index_column)
    _save_heatmap(folder.path / "archive.png", evals[:, 0], searcher.filled, specs, title)
    return path


def _edge_ticks(spec: Sequence[Any]) -> tuple[list[float], list[str]]:
    """Ticks at the edges between a measure's bins on the heatmap (a bin per unit), labelled in the measure's
    units: the edges of EvoTorch's grid for ``spec`` (``NAME, LOW, HIGH, BINS``)."""
    from evotorch.algorithms import MAPElites

    _, low, high, bins = spec
    grid = MAPElites.make_feature_grid(
        lower_bounds=[float(low)], upper_bounds=[float(high)], num_bins=[int(bins)], dtype="float64"
    )
    edges = grid[:-1, 0, 1].tolist()  # (each bin's upper edge but the last's, which is open)
    return [position + 0.5 for position in range(len(edges))], [f"{edge:.3g}" for edge in edges]


def _save_heatmap(
    path: Path, fitness: torch.Tensor, filled: torch.Tensor, specs: Sequence[Sequence[Any]], title: str
) -> None:
    """The archive's elites' fitness over the grid of its first two measures (a line of bins for one): the
    outer bins reach past LOW and HIGH; an empty cell is blank."""
    plt = pyplot()
    if plt is None:
        return
    shape = [int(bins) for *_, bins in specs]
    grid = torch.where(filled, fitness.double(), torch.nan).reshape(shape)
    if grid.ndim > 2:  # (the best of the cells beyond the first two measures)
        grid = torch.nan_to_num(grid, nan=-torch.inf).flatten(2).max(dim=2).values
        grid = torch.where(torch.isinf(grid), torch.nan, grid)
    if grid.ndim == 1:
        grid = grid[None]
    fig, ax = plt.subplots(figsize=(6.5, 5.0 if len(shape) > 1 else 2.0))
    image = ax.imshow(
        grid.T.numpy() if len(shape) > 1 else grid.numpy(), origin="lower", aspect="auto", cmap="viridis"
    )
    fig.colorbar(image, ax=ax, label="elite's return")
    name, low, high, bins = specs[0]
    ax.set_xlabel(f"{name}: {bins} bins, {low:g} to {high:g} (the outer ones past)")
    ax.set_xticks(*_edge_ticks(specs[0]))
    if len(specs) > 1:
        name, low, high, bins = specs[1]
        ax.set_ylabel(f"{name}: {bins} bins, {low:g} to {high:g}")
        ax.set_yticks(*_edge_ticks(specs[1]))
    else:
        ax.set_yticks([])
    ax.set_title(title)
    fig.tight_layout()
    saved_figure(fig, path)
