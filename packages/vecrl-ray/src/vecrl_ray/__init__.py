"""vecrl_ray: evaluate populations of vecrl policies on Ray actors, on one machine or across a cluster.

Examples:
    >>> from vecrl_ray import RayExecutor
    >>> with RayExecutor(num_actors=2) as executor:  # doctest: +SKIP
    ...     result = evaluate(policy, env, population, seed=0, executor=executor)
"""

from vecrl_ray.executor import EvaluationError, RayExecutor

__version__ = "0.1.0"

__all__ = ["EvaluationError", "RayExecutor"]
