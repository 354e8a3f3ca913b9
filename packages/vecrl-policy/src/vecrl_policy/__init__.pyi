"""The public names of ``vecrl_policy`` (its ``__init__.py`` imports them on first use)."""

from vecrl_policy.chain import Chain as Chain
from vecrl_policy.evaluate_workers import WorkerError as WorkerError
from vecrl_policy.evaluation import EvaluationResult as EvaluationResult
from vecrl_policy.evaluation import evaluate as evaluate
from vecrl_policy.layers import (
    GRU as GRU,
)
from vecrl_policy.layers import (
    LSTM as LSTM,
)
from vecrl_policy.layers import (
    RNN as RNN,
)
from vecrl_policy.layers import (
    Bin as Bin,
)
from vecrl_policy.layers import (
    Clip as Clip,
)
from vecrl_policy.layers import (
    Round as Round,
)
from vecrl_policy.layers import (
    Slice as Slice,
)
from vecrl_policy.measures import Measure as Measure
from vecrl_policy.normalization import ObsNorm as ObsNorm
from vecrl_policy.options import EvaluateOptions as EvaluateOptions
from vecrl_policy.parser import NetParsingError as NetParsingError
from vecrl_policy.parser import str_to_net as str_to_net
from vecrl_policy.policy import Policy as Policy
from vecrl_policy.runs import RunFolder as RunFolder

__version__: str

__all__ = [
    "GRU",
    "LSTM",
    "RNN",
    "Bin",
    "Chain",
    "Clip",
    "EvaluateOptions",
    "EvaluationResult",
    "Measure",
    "NetParsingError",
    "ObsNorm",
    "RunFolder",
    "Policy",
    "Round",
    "Slice",
    "WorkerError",
    "evaluate",
    "str_to_net",
]
