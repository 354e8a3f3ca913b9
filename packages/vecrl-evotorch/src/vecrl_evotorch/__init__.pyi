"""The public names of ``vecrl_evotorch`` (its ``__init__.py`` imports them on first use)."""

from vecrl_evotorch.evolve import Evolution as Evolution
from vecrl_evotorch.problem import ClipActions as ClipActions
from vecrl_evotorch.problem import VecrlNE as VecrlNE
from vecrl_evotorch.record import Recording as Recording
from vecrl_evotorch.record import record_video as record_video
from vecrl_evotorch.runs import RunFolder as RunFolder

__version__: str

__all__ = ["ClipActions", "Evolution", "Recording", "RunFolder", "VecrlNE", "record_video"]
