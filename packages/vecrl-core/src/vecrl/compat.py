"""What differs between gymnasium 0.29.1 and 1.x, named once for every backend.

Examples:
    >>> from vecrl import compat
    >>> compat.FINAL_OBS_KEY in ("final_obs", "final_observation")
    True
"""

from __future__ import annotations

from typing import Any

import gymnasium
import gymnasium.vector
from packaging.version import Version

GYMNASIUM_VERSION = Version(gymnasium.__version__)
GYMNASIUM_1 = Version("1.0.0a1") <= GYMNASIUM_VERSION

#: gymnasium.vector.AutoresetMode where gymnasium has it (>= 1.1), else None.
AutoresetMode: Any = getattr(gymnasium.vector, "AutoresetMode", None)

#: The base class of vector-env wrappers: ``VectorWrapper`` on gymnasium 1.x, ``VectorEnvWrapper`` on 0.29.
VECTOR_WRAPPER_BASE: type = (
    gymnasium.vector.VectorWrapper if GYMNASIUM_1 else gymnasium.vector.VectorEnvWrapper  # type: ignore[attr-defined]
)

#: The info key under which a vector env reports the last observation of a finished episode.
FINAL_OBS_KEY = "final_obs" if GYMNASIUM_1 else "final_observation"
#: The info key under which a vector env reports the last info of a finished episode.
FINAL_INFO_KEY = "final_info"
#: The info keys of the bool masks beside them, True for the sub-envs whose episode ended (gymnasium's
#: ``"_" + key`` rule for vector infos).
FINAL_OBS_MASK_KEY, FINAL_INFO_MASK_KEY = f"_{FINAL_OBS_KEY}", f"_{FINAL_INFO_KEY}"
#: Whether gymnasium's same-step vector envs batch a step's final infos together (>= 1.1); before, each
#: went through ``_add_info`` as ``{"final_info": info}``.
FINAL_INFOS_BATCHED_ONCE = Version("1.1.0") <= GYMNASIUM_VERSION


def same_step_metadata() -> dict[str, Any]:
    """The ``metadata`` entries that declare eager (same-step) autoreset on the installed gymnasium.

    Examples:
        >>> isinstance(same_step_metadata(), dict)
        True
    """
    if AutoresetMode is None:
        return {}
    return {"autoreset_mode": AutoresetMode.SAME_STEP}
