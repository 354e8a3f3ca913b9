"""The names of the ways a measure's values over one episode become the episode's value, in a module of its
own without torch, so that ``vecrl evolve --measure NAME@REDUCTION`` is checked before torch loads.

Examples:
    >>> from vecrl_evaluate.reductions import REDUCTIONS
    >>> "mean" in REDUCTIONS
    True
"""

#: ``Measure(per_episode=...)``'s values (``vecrl_evaluate.measures`` computes them).
REDUCTIONS = ("sum", "mean", "last", "max", "min")
