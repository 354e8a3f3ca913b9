"""VectorEnvFromBrax on a real brax physics env (inverted_pendulum): the behaviour DESIGN.md asks for."""

from __future__ import annotations

import random
import threading

import jax
import numpy as np
import pytest
import torch
from gymnasium.spaces import Box

import vecrl
from vecrl.compat import FINAL_OBS_KEY, same_step_metadata
from vecrl.seeding import sub_env_seeds
from vecrl_brax import VectorEnvFromBrax
from vecrl_jax import BraxStyleEnv, JaxVectorEnv, engine
from vecrl_jax.compiles import programs_compiled

PENDULUM_EPISODE_LENGTH = 8
# the spring pipeline compiles in about half the time of brax's default (generalized) one
PENDULUM_KWARGS = {"episode_length": PENDULUM_EPISODE_LENGTH, "backend": "spring"}
PUSH = np.full((4, 1), 3.0, dtype=np.float32)  # full force: the pole falls within a few steps
IDLE = np.zeros((4, 1), dtype=np.float32)  # no force: the pole stays up past episode_length


@pytest.fixture(scope="module")
def pendulum() -> VectorEnvFromBrax:
    """4 inverted pendulums (jax results), episodes truncated after 8 steps; compiled once for the module."""
    env = VectorEnvFromBrax("inverted_pendulum", num_envs=4, **PENDULUM_KWARGS)
    env.reset(seed=0)
    return env


def run(env: VectorEnvFromBrax, action: np.ndarray, steps: int) -> list[tuple]:
    return [
        tuple(np.asarray(x) if not isinstance(x, dict) else x for x in env.step(action)) for _ in range(steps)
    ]


def test_spaces_are_unbounded_observations_and_the_actuator_control_range(pendulum):
    assert pendulum.single_observation_space == Box(-np.inf, np.inf, (4,), np.float32)
    assert pendulum.single_action_space == Box(-3.0, 3.0, (1,), np.float32)
    assert pendulum.observation_space.shape == (4, 4)
    assert pendulum.action_space.shape == (4, 1)


def test_metadata_declares_same_step_autoreset(pendulum):
    assert pendulum.metadata.items() >= same_step_metadata().items()


def test_reaching_episode_length_is_truncated_not_terminated(pendulum):
    pendulum.reset(seed=1)
    results = run(pendulum, IDLE, PENDULUM_EPISODE_LENGTH)
    for _, _, terminated, truncated, _ in results[:-1]:
        assert not terminated.any() and not truncated.any()
    _, _, terminated, truncated, info = results[-1]
    assert truncated.all() and not terminated.any()
    assert np.asarray(info[f"_{FINAL_OBS_KEY}"]).all()


def test_a_falling_pole_is_terminated_not_truncated(pendulum):
    pendulum.reset(seed=2)
    ended = [(term, trunc) for _, _, term, trunc, _ in run(pendulum, PUSH, PENDULUM_EPISODE_LENGTH - 1)]
    assert any(term.any() for term, _ in ended)
    assert not any(trunc.any() for _, trunc in ended)


def test_a_finished_episode_restarts_in_the_same_step_and_its_last_observation_is_in_info(pendulum):
    pendulum.reset(seed=3)
    results = run(pendulum, PUSH, PENDULUM_EPISODE_LENGTH - 1)
    obs, _, terminated, _, info = next(r for r in results if r[2].any())
    final = np.asarray(info[FINAL_OBS_KEY])
    mask = np.asarray(info[f"_{FINAL_OBS_KEY}"])
    np.testing.assert_array_equal(mask, terminated)
    # the pole of a finished episode has fallen past 0.2 rad; the new episode starts near upright
    assert (np.abs(final[mask, 1]) > 0.2).all()
    assert (np.abs(obs[mask, 1]) < 0.2).all()


def test_each_new_episode_starts_from_a_fresh_random_state(pendulum):
    first_obs, _ = pendulum.reset(seed=4)
    starts = [np.asarray(first_obs)]
    for step in range(2 * PENDULUM_EPISODE_LENGTH):
        obs, _, _, truncated, _ = pendulum.step(IDLE)
        if (step + 1) % PENDULUM_EPISODE_LENGTH == 0:
            assert np.asarray(truncated).all()
            starts.append(np.asarray(obs))
    # two consecutive episodes of one sub-env start from different states (brax's AutoResetWrapper
    # would replay the first one), and sub-envs differ from each other too
    assert not np.isclose(starts[0], starts[1]).all(axis=1).any()
    assert not np.isclose(starts[1], starts[2]).all(axis=1).any()
    assert len({tuple(row) for row in starts[1].round(6)}) == 4


# halves of 12 states: the second one made when a step could reach it (5 envs), or at reset (6)
@pytest.mark.parametrize("num_envs", [5, 6])
def test_episodes_never_start_from_the_same_fresh_state_across_many_pool_refills_and_a_seed_reproduces_them(
    monkeypatch, num_envs
):
    monkeypatch.setattr(engine, "MIN_POOL_HALF", 12)  # small halves: many refills in a short run
    env = VectorEnvFromBrax("inverted_pendulum", num_envs=num_envs, **PENDULUM_KWARGS)
    push = np.full((num_envs, 1), 3.0, dtype=np.float32)

    def start_states(seed: int) -> list[tuple]:
        obs, _ = env.reset(seed=seed)
        starts = [tuple(row) for row in np.asarray(obs)]
        for _ in range(128):
            obs, _, terminated, truncated, _ = env.step(push)
            ended = np.asarray(terminated) | np.asarray(truncated)
            starts += [tuple(row) for row in np.asarray(obs)[ended]]
        return starts

    starts = start_states(8)
    assert len(starts) > 4 * engine.pool_half(num_envs), "pushed poles fall every few steps"
    assert len(set(starts)) == len(starts)
    assert start_states(8) == starts


def test_reset_with_a_seed_reproduces_the_run_including_its_autoresets(pendulum):
    def rollout(**reset_kwargs):
        obs, _ = pendulum.reset(**reset_kwargs)
        return [np.asarray(obs)] + [r[0] for r in run(pendulum, PUSH, PENDULUM_EPISODE_LENGTH)]

    first = rollout(seed=5)
    np.testing.assert_array_equal(first, rollout(seed=5))
    pendulum.seed(5)
    np.testing.assert_array_equal(first, rollout())
    assert not np.array_equal(first[0], rollout(seed=6)[0])


def test_a_seed_per_sub_env_starts_each_from_its_own_key_wherever_it_is_in_the_batch(pendulum):
    first, _ = pendulum.reset(seed=[5, 6, 7, 8])
    first = np.asarray(first)
    assert len({tuple(row) for row in first}) == 4
    swapped, _ = pendulum.reset(seed=np.array([8, 7, 6, 5]))  # numpy arrays and torch tensors work too
    np.testing.assert_array_equal(np.asarray(swapped), first[::-1])
    run(pendulum, PUSH, 3)
    # a masked reset uses the masked rows' seeds only: row 2 is back at seed 7's start
    obs, _ = pendulum.reset(seed=[1, 2, 7, 3], options={"reset_mask": [False, False, True, False]})
    np.testing.assert_array_equal(np.asarray(obs)[2], first[2])
    assert not np.array_equal(np.asarray(obs)[0], first[0])


def test_a_seed_list_reproduces_the_run_including_its_autoresets_and_can_be_pending(pendulum):
    def rollout(**reset_kwargs):
        obs, _ = pendulum.reset(**reset_kwargs)
        return [np.asarray(obs)] + [r[0] for r in run(pendulum, PUSH, 2 * PENDULUM_EPISODE_LENGTH)]

    first = rollout(seed=torch.tensor([5, 6, 7, 8]))
    np.testing.assert_array_equal(first, rollout(seed=[5, 6, 7, 8]))
    pendulum.seed([5, 6, 7, 8])
    np.testing.assert_array_equal(first, rollout())


@pytest.mark.parametrize("rule", ["gymnasium", "evotorch"])
def test_with_a_seed_rule_an_int_seed_stands_for_the_sub_env_seeds_of_that_rule(pendulum, rule):
    ruled = vecrl.make_vector_env(
        "brax::inverted_pendulum", num_envs=4, seed_rule=rule, brax_kwargs=PENDULUM_KWARGS
    )

    def rollout(env, seed):
        obs, _ = env.reset(seed=seed)
        return [np.asarray(obs)] + [
            np.asarray(env.step(torch.from_numpy(PUSH))[0]) for _ in range(2 * PENDULUM_EPISODE_LENGTH)
        ]

    # the same states as each sub-env seeded with its seed by that rule, autoresets included
    np.testing.assert_array_equal(rollout(ruled, 5), rollout(pendulum, sub_env_seeds(5, 4, rule)))
    ruled.seed(5)  # a pending int seed too
    np.testing.assert_array_equal(rollout(ruled, None)[0], rollout(pendulum, sub_env_seeds(5, 4, rule))[0])
    ruled.close()


def test_the_jax_base_steps_the_env_its_subclass_makes_and_says_so_when_none_is_given():
    import brax.envs

    class FastEnvs(JaxVectorEnv):  # what a third-party jax backend writes: the env and its actions
        @staticmethod
        def make_env(env_name, kwargs):
            env = brax.envs.create(env_name, batch_size=None, auto_reset=False, **kwargs)
            return BraxStyleEnv(env, Box(-1.0, 1.0, (env.action_size,), np.float32))

    env = FastEnvs("fast", num_envs=3, episode_length=2, num_episodes=1)
    assert not isinstance(env, VectorEnvFromBrax) and env.single_action_space.shape == (1,)
    env.reset(seed=0)
    for _ in range(2):  # the episode rules are the base's: a budget of one episode, then NaN rows
        obs, reward, terminated, truncated, info = env.step(np.zeros((3, 1), np.float32))
    assert np.asarray(truncated).all() and not np.isnan(np.asarray(reward)).any()
    _, reward, terminated, truncated, _ = env.step(np.zeros((3, 1), np.float32))
    assert np.isnan(np.asarray(reward)).all() and np.asarray(terminated & truncated).all()
    with pytest.raises(
        vecrl.UnknownKeywordError, match=r"FastEnvs\(...\) got batch_size=2, which it does not take"
    ):
        FastEnvs("fast", num_envs=3, batch_size=2)
    with pytest.raises(NotImplementedError, match="subclass it"):
        JaxVectorEnv("fast", num_envs=2)


def test_an_unknown_seed_rule_is_refused_before_anything_is_compiled():
    with pytest.raises(ValueError, match="seed_rule='numpy' is not a seed rule. Expected 'evotorch'"):
        VectorEnvFromBrax("inverted_pendulum", num_envs=2, seed_rule="numpy")


@pytest.mark.parametrize(
    ("seed", "message"),
    [
        ([1, 2, 3], r"needs one seed per sub-env \(4\), but 3 were given"),
        ([1, 2, 3, -1], r"seed\[3\] is -1, but seeds must be ints in \[0, 2\*\*32\)"),
        ([1, 2, 3, True], r"seed\[3\] is True; each per-sub-env seed must be None or an int"),
        ("1234", r"seed must be None, an int in \[0, 2\*\*32\) or a list of num_envs=4 such ints"),
        (1.5, "seed must be None, an int"),
        ({1: 2}, "seed must be None, an int"),
    ],
)
def test_a_seed_that_is_no_int_or_list_of_one_per_sub_env_says_what_is_expected(pendulum, seed, message):
    with pytest.raises(ValueError, match=message):
        pendulum.reset(seed=seed)
    with pytest.raises(ValueError, match=message):
        pendulum.seed(seed)


def test_reset_without_a_seed_draws_a_fresh_one_from_the_env_not_from_pythons_random(pendulum):
    pendulum.seed(7)
    pendulum.seed(None)  # cancels the pending seed
    python_random = random.getstate()
    a, _ = pendulum.reset()
    b, _ = pendulum.reset()
    assert random.getstate() == python_random
    assert not np.array_equal(np.asarray(a), np.asarray(b))


def test_actions_of_the_wrong_shape_are_rejected_with_the_expected_shape(pendulum):
    pendulum.reset(seed=0)
    with pytest.raises(ValueError, match=r"expected \(4, 1\)"):
        pendulum.step(np.zeros((3, 1), np.float32))
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        pendulum.step(np.zeros(4, np.float32))


def test_the_jitted_step_compiles_once_across_resets_and_action_types(pendulum):
    actions = (IDLE, torch.zeros(4, 1), jax.numpy.zeros((4, 1)), jax.dlpack.from_dlpack(torch.zeros(4, 1)))
    pendulum.reset(seed=8)
    pendulum.step(IDLE)  # the step is compiled by now (this is the fixture's first step or a later one)
    with programs_compiled() as compiled:
        pendulum.reset(seed=9)
        for action in actions:
            for _ in range(PENDULUM_EPISODE_LENGTH + 1):  # through an autoreset too
                pendulum.step(action)
        # a second env of the same configuration shares the compiled code
        VectorEnvFromBrax("inverted_pendulum", num_envs=4, **PENDULUM_KWARGS).reset(seed=1)
    assert compiled == []


def test_the_first_reset_compiles_the_step_on_a_worker_thread_and_the_steps_reuse_that_compile():
    actions = (IDLE, torch.zeros(4, 1), jax.numpy.zeros((4, 1)))  # made first: a jax array compiles too
    here = threading.current_thread().name
    running = set(threading.enumerate())
    with programs_compiled() as compiled:
        # a configuration of its own (no other test compiles episodes of 9 steps)
        env = VectorEnvFromBrax("inverted_pendulum", num_envs=4, **{**PENDULUM_KWARGS, "episode_length": 9})
        env.reset(seed=0)
        at_reset = list(compiled)  # brax's reset and the small functions around it here, the step elsewhere
        for action in actions:
            env.step(action)
    assert [c for c in compiled if c.thread == here] == [c for c in at_reset if c.thread == here], (
        "the steps compiled again"
    )
    elsewhere = [c for c in compiled if c.thread != here]
    assert [c.program for c in elsewhere] == ["jit(packed_step)"], "one compile elsewhere: the step's"
    workers = set(threading.enumerate()) - running
    for thread in workers:  # it may still be returning from the compile the step waited for
        thread.join(timeout=10)
    assert not any(thread.is_alive() for thread in workers), "the worker thread ends with its compile"


def test_jax_results_reach_torch_without_a_copy(pendulum):
    obs, reward, _, _, _ = pendulum.step(IDLE)
    for array in (obs, reward):
        tensor = vecrl.convert_to_torch(array)
        assert tensor.data_ptr() == array.unsafe_buffer_pointer()
        assert tensor.device.type == array.devices().pop().platform


def test_step_before_reset_is_an_error():
    env = VectorEnvFromBrax("inverted_pendulum", num_envs=4, **PENDULUM_KWARGS)
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(IDLE)
    env.close()
    env.close()
