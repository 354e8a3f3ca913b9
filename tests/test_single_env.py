"""``num_envs=None`` gives one plain env on every backend, as on the gym backend: observations and flags without
the batch axis, no autoreset (reset after an episode ends), and the options of a batched env refused."""

import importlib.util

import pytest
import torch

import vecrl

BACKENDS = [
    # (env, the module that serves it, a single action, keywords that end episodes soon)
    ("gym::CartPole-v1", "vecrl_gym", torch.tensor(1), {}),
    ("envpool::CartPole-v1", "vecrl_envpool", torch.tensor(1), {}),
    ("brax::inverted_pendulum", "vecrl_brax", torch.zeros(1), {"episode_length": 20}),
    ("playground::CartpoleBalance", "vecrl_playground", torch.zeros(1), {"episode_length": 5}),
]


def installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@pytest.mark.parametrize(
    ("env_name", "module", "action", "kwargs"),
    [
        pytest.param(*case, marks=pytest.mark.skipif(not installed(case[1]), reason="not installed"))
        for case in BACKENDS
    ],
    ids=[case[0].partition("::")[0] for case in BACKENDS],
)
def test_num_envs_none_gives_one_plain_env(env_name, module, action, kwargs):
    env = vecrl.make_vector_env(env_name, **kwargs)
    assert not hasattr(env, "num_envs") and not hasattr(env.unwrapped, "single_observation_space")
    obs, info = env.reset(seed=0)
    assert tuple(obs.shape) == env.observation_space.shape and isinstance(info, dict)
    again, _ = env.reset(seed=0)
    assert torch.equal(obs, again)  # a seed reproduces the start
    ended, steps = False, 0
    while not ended:
        obs, reward, terminated, truncated, info = env.step(action)
        assert tuple(obs.shape) == env.observation_space.shape and reward.shape == terminated.shape == ()
        ended, steps = bool(terminated or truncated), steps + 1
        assert steps <= 500
    if env_name != "gym::CartPole-v1":  # (gymnasium's own env warns and steps on)
        with pytest.raises(RuntimeError, match="autoreset is disabled"):
            env.step(action)  # no autoreset: a plain env waits for reset()
    obs, _ = env.reset()
    assert tuple(obs.shape) == env.observation_space.shape
    env.step(action)
    env.close()
    for option, value in (("num_episodes", 2), ("autoreset_mode", "next_step")):
        with pytest.raises(
            ValueError, match=f"received {option}={value!r} with num_envs=None.*pass num_envs="
        ):
            vecrl.make_vector_env(env_name, **{option: value, **kwargs})
