"""vecrl_evaluate: vecrl's population engine, a whole population of policies on a vectorized env in one call.

Its names are imported on first use (torch with them), so that the ``vecrl`` command, which loads this
package's subcommand, answers at once.

Examples:
    >>> import torch, vecrl
    >>> from vecrl_policy import Policy
    >>> from vecrl_evaluate import evaluate
    >>> env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4)
    >>> policy = Policy("Linear(4, 2)")
    >>> result = evaluate(policy, env, torch.zeros(6, policy.parameter_length), num_episodes=1, seed=0)
    >>> result.total_return.shape
    torch.Size([6])
"""

from vecrl.lazy import attach_stub

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
