"""The public names of ``vecrl_policy`` (its ``__init__.py`` imports them on first use)."""

from vecrl_policy.chain import Chain as Chain
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
from vecrl_policy.normalization import ObsNorm as ObsNorm
from vecrl_policy.parser import NetParsingError as NetParsingError
from vecrl_policy.parser import str_to_net as str_to_net
from vecrl_policy.policy import Policy as Policy

__version__: str

__all__ = [
    "GRU",
    "LSTM",
    "RNN",
    "Bin",
    "Chain",
    "Clip",
    "NetParsingError",
    "ObsNorm",
    "Policy",
    "Round",
    "Slice",
    "str_to_net",
]
