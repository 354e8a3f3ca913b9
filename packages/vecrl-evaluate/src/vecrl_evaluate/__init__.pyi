"""The public names of ``vecrl_evaluate`` (its ``__init__.py`` imports them on first use)."""

from vecrl_evaluate.evaluate_workers import WorkerError as WorkerError
from vecrl_evaluate.evaluation import EvaluationResult as EvaluationResult
from vecrl_evaluate.evaluation import evaluate as evaluate
from vecrl_evaluate.measures import Measure as Measure
from vecrl_evaluate.options import EvaluateOptions as EvaluateOptions

__version__: str

__all__ = [
    "EvaluateOptions",
    "EvaluationResult",
    "Measure",
    "WorkerError",
    "evaluate",
]
