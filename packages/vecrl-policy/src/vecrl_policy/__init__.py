"""vecrl_policy: batches of neural-network policies driven by flat parameter vectors.

Examples:
    >>> import torch
    >>> from vecrl_policy import Policy
    >>> policy = Policy("Linear(obs, 16) >> Tanh() >> LSTM(16, act)", obs=4, act=2)
    >>> policy.set_parameters(torch.randn(8, policy.parameter_length))
    >>> policy(torch.randn(8, 4)).shape
    torch.Size([8, 2])
"""

from vecrl_policy.chain import Chain
from vecrl_policy.evaluate import EvaluationResult, evaluate
from vecrl_policy.evaluate_workers import WorkerError
from vecrl_policy.layers import GRU, LSTM, RNN, Bin, Clip, Round, Slice
from vecrl_policy.normalization import ObsNorm
from vecrl_policy.parser import NetParsingError, str_to_net
from vecrl_policy.policy import Policy

__all__ = [
    "GRU",
    "LSTM",
    "RNN",
    "Bin",
    "Chain",
    "Clip",
    "EvaluationResult",
    "NetParsingError",
    "ObsNorm",
    "Policy",
    "Round",
    "Slice",
    "WorkerError",
    "evaluate",
    "str_to_net",
]
