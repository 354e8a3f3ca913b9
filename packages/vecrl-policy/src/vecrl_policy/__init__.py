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

from vecrl.lazy import attach_stub
from vecrl_policy import moved

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
__getattr__ = moved.with_moved_names(globals(), __getattr__)  # the engine's old names, for one release
moved.install()  # the engine's old module paths, for one release
