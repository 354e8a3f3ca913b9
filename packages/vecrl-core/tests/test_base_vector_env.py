import gymnasium
import numpy as np
import pytest
from gymnasium.spaces import Box, Dict, Discrete, Graph, MultiBinary, MultiDiscrete, Sequence, Tuple
from gymnasium.vector.utils import batch_space

from vecrl import BaseVectorEnv, compat


class Idle(BaseVectorEnv):
    pass


def test_box_spaces_gain_a_leading_batch_dimension():
    env = Idle(3, Box(-1.0, 2.0, (4,), np.float32), Box(-1.0, 1.0, (2,), np.float32))
    assert isinstance(env, gymnasium.vector.VectorEnv)
    assert env.num_envs == 3
    assert env.observation_space.shape == (3, 4) and env.action_space.shape == (3, 2)
    assert env.single_observation_space == Box(-1.0, 2.0, (4,), np.float32)
    np.testing.assert_array_equal(env.observation_space.high, np.full((3, 4), 2.0))


def test_discrete_spaces_become_multidiscrete():
    env = Idle(2, Discrete(5), Discrete(3))
    assert env.observation_space == MultiDiscrete([5, 5])
    assert env.action_space == MultiDiscrete([3, 3])


def test_spaces_gymnasium_cannot_batch_densely_are_a_type_error_naming_the_space():
    with pytest.raises(TypeError, match=r"entry \[1\] is Sequence\(Discrete\(2\).*no fixed shape"):
        Idle(2, Tuple([Discrete(2), Sequence(Discrete(2))]), Discrete(2))
    with pytest.raises(TypeError, match=r"The action space is Graph\("):
        Idle(2, Discrete(2), Graph(Box(0.0, 1.0, (2,)), None))


def test_tuple_and_dict_spaces_are_batched_as_gymnasium_batches_them():
    single = Tuple([Discrete(3), Dict({"a": MultiBinary(2), "b": MultiDiscrete([2, 4])})])
    env = Idle(3, single, Dict({"move": Box(-1.0, 1.0, (2,)), "grip": Discrete(2)}))
    assert env.observation_space == batch_space(single, 3)
    assert env.action_space["grip"] == MultiDiscrete([2, 2, 2])


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3"])
def test_num_envs_must_be_a_positive_int(bad):
    with pytest.raises(ValueError, match="num_envs"):
        Idle(bad, Discrete(2), Discrete(2))


def test_same_step_autoreset_is_declared_where_gymnasium_has_modes():
    env = Idle(1, Discrete(2), Discrete(2))
    if compat.AutoresetMode is not None:
        assert env.metadata["autoreset_mode"] == compat.AutoresetMode.SAME_STEP
    else:
        assert "autoreset_mode" not in env.metadata
