"""vecrl_policy: batches of neural-network policies driven by flat parameter vectors.

Its names are imported on first use (torch with them), so that the ``vecrl`` command, which loads this
package's subcommand, answers at once.

Examples:
    >>> import torch
    >>> from vecrl_policy import Policy
    >>> policy = Policy("Linear(obs, 16) >> Tanh() >> LSTM(16, act)", obs=4, act=2)
    >>> policy.set_parameters(torch.randn(8, policy.parameter_length))
    >>> policy(torch.randn(8, 4)).shape
    torch.Size([8, 2])
"""

from typing import TYPE_CHECKING

from vecrl.lazy import lazy_attributes

if TYPE_CHECKING:
    from vecrl_policy.chain import Chain
    from vecrl_policy.evaluate_workers import WorkerError
    from vecrl_policy.evaluation import EvaluationResult, evaluate
    from vecrl_policy.layers import GRU, LSTM, RNN, Bin, Clip, Round, Slice
    from vecrl_policy.normalization import ObsNorm
    from vecrl_policy.options import EvaluateOptions
    from vecrl_policy.parser import NetParsingError, str_to_net
    from vecrl_policy.policy import Policy
    from vecrl_policy.runs import RunFolder

__version__ = "0.1.0"

__all__ = [
    "GRU",
    "LSTM",
    "RNN",
    "Bin",
    "Chain",
    "Clip",
    "EvaluateOptions",
    "EvaluationResult",
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

_LAZY = {
    "Chain": "vecrl_policy.chain",
    "EvaluateOptions": "vecrl_policy.options",
    "EvaluationResult": "vecrl_policy.evaluation",
    "GRU": "vecrl_policy.layers",
    "LSTM": "vecrl_policy.layers",
    "RNN": "vecrl_policy.layers",
    "Bin": "vecrl_policy.layers",
    "Clip": "vecrl_policy.layers",
    "Round": "vecrl_policy.layers",
    "Slice": "vecrl_policy.layers",
    "NetParsingError": "vecrl_policy.parser",
    "ObsNorm": "vecrl_policy.normalization",
    "RunFolder": "vecrl_policy.runs",
    "Policy": "vecrl_policy.policy",
    "WorkerError": "vecrl_policy.evaluate_workers",
    "evaluate": "vecrl_policy.evaluation",
    "str_to_net": "vecrl_policy.parser",
}


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
