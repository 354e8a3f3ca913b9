"""vecrl's jax engine on an env written to its protocol here, in pure jax (no brax, no gymnax): the whole
conformance spec through a backend registered in-process, Discrete actions, the outcome's rules, imports,
and evaluate's fused path against its stepped one on the same env."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from gymnasium.spaces import Discrete

import vecrl
from vecrl import testing
from vecrl_jax import JaxVectorEnv, Outcome, make_jax_vector_env
from vecrl_jax.keywords import JAX_KEYWORDS


@dataclass(frozen=True)
class Walk:
    """A walk on the integers from a random start in [-2, 2]: action 0, 1, 2 moves by -1, 0, +1; reaching
    +-4 terminates (reward 1 at +4), and ``length`` steps truncate."""

    length: int
    action_space = Discrete(3)

    def reset(self, keys):
        position = jax.vmap(lambda key: jax.random.randint(key, (), -2, 3))(keys)
        return position.astype(jnp.float32), jnp.zeros(len(keys), jnp.int32)

    def step(self, state, action):
        position, t = state
        return position + action.astype(jnp.float32) - 1.0, t + 1

    def outcome(self, state):
        position, t = state
        ended = jnp.abs(position) >= 4
        reward = (position >= 4).astype(jnp.float32)
        return Outcome(position[:, None], reward, ended, t >= self.length, {"t": t.astype(jnp.float32)})


class WalkVectorEnv(JaxVectorEnv):
    @staticmethod
    def make_env(env_name, kwargs):
        return Walk(kwargs.get("episode_length") or 50)


@pytest.fixture(scope="module", autouse=True)
def walk_backend():
    backend = vecrl.Backend(
        "walk",
        lambda name, **kwargs: make_jax_vector_env(WalkVectorEnv, "walk", name, **kwargs),
        keywords=JAX_KEYWORDS,
    )
    with vecrl.register_backend(backend):
        yield


@pytest.mark.parametrize("check", sorted(testing.CONFORMANCE_CHECKS))
def test_an_env_written_to_the_protocol_passes_the_whole_conformance_spec(check):
    testing.run_conformance("walk", [{"env": "line", "kwargs": {"episode_length": 4}, "checks": [check]}])


def test_an_end_on_both_counts_is_a_termination_and_the_outcome_info_reaches_the_step_info():
    env = vecrl.make_vector_env("walk::line", num_envs=2, episode_length=2, autoreset_mode="next_step")
    env.reset(seed=[0, 1])
    env.step(torch.tensor([2, 2]))
    obs, reward, terminated, truncated, info = env.step(torch.tensor([2, 2]))
    # both rows reach the time limit; row 0 (seed 0 starts it at 2) reached +4 too: it terminated
    position = torch.from_numpy(np.asarray(env.unwrapped.state[0]))  # the ends' (next_step restarts later)
    assert position.tolist() == [4.0, 1.0] and terminated.tolist() == [True, False]
    assert truncated.tolist() == [False, True]
    assert info["t"].tolist() == [2.0, 2.0]
    env.close()


def test_an_action_space_that_is_neither_box_nor_discrete_is_refused_with_what_to_give():
    from gymnasium.spaces import MultiBinary

    class Odd(WalkVectorEnv):
        @staticmethod
        def make_env(env_name, kwargs):
            return type("OddWalk", (Walk,), {"action_space": MultiBinary(2)})(3)

    with pytest.raises(
        TypeError, match="steps Box or Discrete actions, but its env's action_space is MultiBinary"
    ):
        Odd("line", num_envs=2)


def test_importing_vecrl_jax_imports_no_jax_and_no_env_library():
    code = (
        "import sys, vecrl_jax, vecrl_jax.keywords\n"
        "print(sorted(m for m in ('jax', 'brax', 'gymnax', 'mujoco') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_evaluate_runs_the_protocol_env_fused_with_the_stepped_path_s_results():
    policy_module = pytest.importorskip("vecrl_policy")
    env = vecrl.make_vector_env("walk::line", num_envs=6, num_episodes=2, episode_length=10)
    policy = policy_module.Policy("Linear(1, 8) >> Tanh() >> Linear(8, 3)")
    population = torch.randn(16, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    population = population.to("cuda" if jax.default_backend() == "gpu" else "cpu")  # on jax's device
    fused = policy_module.evaluate(policy, env, population, seed=3)
    stepped = policy_module.evaluate(policy, env, population, seed=3, fused=False)
    assert (fused.path, stepped.path) == ("fused", "stepped")
    np.testing.assert_array_equal(fused.steps.cpu().numpy(), stepped.steps.cpu().numpy())
    torch.testing.assert_close(fused.total_return, stepped.total_return)
    env.close()


@dataclass(frozen=True)
class ColumnReward(Walk):
    """A walk whose reward is a column, (n, 1), not one value per state."""

    def outcome(self, state):
        outcome = super().outcome(state)
        return outcome._replace(reward=outcome.reward[:, None])


class ColumnRewardVectorEnv(JaxVectorEnv):
    @staticmethod
    def make_env(env_name, kwargs):
        return ColumnReward(4)


def test_a_reward_of_the_wrong_shape_is_a_backend_check_error_naming_it():
    backend = vecrl.Backend(
        "column", lambda name, **kwargs: make_jax_vector_env(ColumnRewardVectorEnv, "column", name, **kwargs)
    )
    with (
        vecrl.register_backend(backend),
        pytest.raises(
            testing.BackendCheckError, match=r"ColumnReward.s outcome\(states\).reward has shape \(\d, 1\)"
        ),
    ):
        testing.run_conformance("column", [{"env": "w", "checks": ["backend"]}])
