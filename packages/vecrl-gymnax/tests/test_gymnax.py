"""The gymnax backend on real gymnax envs: the backend contract, every autoreset mode, the step against
gymnax's own, the time limit as truncation, Discrete and Box actions, keywords, mistakes, and evaluate
(stepped on Discrete actions, fused on Box ones).

gymnax's envs compile in a second or two on a CPU, so each test makes the envs it needs.
"""

import jax
import numpy as np
import pytest
import torch

import vecrl
from vecrl.testing import check_autoreset_modes
from vecrl_gymnax import GymnaxVectorEnv, make_gymnax_env

SHORT = {"episode_length": 4}  # episodes end within a few steps: the autoreset checks need ends


# vecrl's conformance spec runs on this backend from tests/test_backend_conformance.py (CartPole-v1, Discrete
# actions, the case its pyproject declares); here, the autoreset rules with Box actions too
def test_every_autoreset_mode_and_the_budget_follow_the_episode_rules_with_box_actions():
    check_autoreset_modes(make_gymnax_env, "Pendulum-v1", num_steps=12, **SHORT)


def test_a_step_is_gymnax_s_own_step_of_each_sub_env():
    import gymnax

    env = GymnaxVectorEnv("CartPole-v1", num_envs=3)
    env.reset(seed=0)
    state = env.state
    actions = np.array([0, 1, 1])
    gymnax_env, params = gymnax.make("CartPole-v1")

    def gymnax_step(key, env_state, action):
        return gymnax_env.step_env(jax.random.split(key)[1], env_state, action, params)

    expected_obs, _, expected_reward, expected_done, _ = jax.vmap(gymnax_step)(
        state.key, state.env_state, actions
    )
    obs, reward, terminated, truncated, _ = env.step(actions)
    # equal up to float rounding: XLA fuses the jitted batch's arithmetic its own way
    np.testing.assert_allclose(np.asarray(obs), np.asarray(expected_obs), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(np.asarray(reward), np.asarray(expected_reward))
    assert not np.asarray(expected_done).any() and not (np.asarray(terminated) | np.asarray(truncated)).any()
    env.close()


def test_the_time_limit_is_a_truncation_and_a_fall_a_termination():
    env = vecrl.make_vector_env("gymnax::CartPole-v1", num_envs=2, episode_length=3)
    assert vecrl.backend_distribution("gymnax") == ("vecrl-gymnax", "0.1.0")
    env.reset(seed=0)
    for _ in range(3):
        obs, reward, terminated, truncated, info = env.step(torch.tensor([0, 1]))
    assert truncated.all() and not terminated.any() and info["_" + vecrl.compat.FINAL_OBS_KEY].all()
    env.close()
    env = vecrl.make_vector_env("gymnax::CartPole-v1", num_envs=2)  # gymnax's own limit: 500 steps
    env.reset(seed=0)
    ended = torch.zeros(2, dtype=torch.bool)
    for _ in range(100):  # always pushing one way: the pole falls within 100 steps
        obs, reward, terminated, truncated, info = env.step(torch.tensor([0, 1]))
        assert not truncated.any()
        ended |= terminated
    assert ended.all()
    env.close()


def test_params_and_constructor_arguments_reach_the_env_and_spaces_are_gymnasium_s():
    from gymnasium.spaces import Box, Discrete

    env = GymnaxVectorEnv("CartPole-v1", num_envs=2, gravity=20.0, episode_length=7)
    params = env.jax_env.params
    assert params.gravity == 20.0 and params.max_steps_in_episode == 7
    assert env.single_action_space == Discrete(2) and env.single_observation_space.shape == (4,)
    env.close()
    pendulum = GymnaxVectorEnv("Pendulum-v1", num_envs=2)
    assert pendulum.single_action_space == Box(-2.0, 2.0, (1,), np.float32)
    pendulum.close()
    # MinAtar: a constructor argument (the full action set), and observations of several axes (bool in
    # gymnax, float32 here)
    breakout = vecrl.make_vector_env("gymnax::Breakout-MinAtar", num_envs=2, use_minimal_action_set=False)
    obs, _ = breakout.reset(seed=0)
    assert breakout.single_action_space == Discrete(6) and obs.shape == (2, 10, 10, 4)
    assert obs.dtype == torch.float32 and breakout.step(torch.tensor([5, 0]))[0].shape == (2, 10, 10, 4)
    breakout.close()


def test_seeds_per_sub_env_and_a_seed_rule():
    env = vecrl.make_vector_env("gymnax::CartPole-v1", num_envs=3, seed_rule="gymnasium")
    by_row, _ = env.reset(seed=[4, 5, 6])
    swapped, _ = env.reset(seed=[6, 5, 4])
    assert torch.equal(swapped, by_row.flip(0)) and not torch.equal(by_row[0], by_row[1])
    by_rule, _ = env.reset(seed=4)
    assert torch.equal(by_rule, by_row)
    env.close()


def test_discrete_actions_in_any_integer_form_and_bad_ones_refused_before_any_step():
    env = vecrl.make_vector_env("gymnax::CartPole-v1", num_envs=3)
    env.reset(seed=0)
    for actions in (torch.tensor([0, 1, 1]), np.array([0, 1, 1], np.int8), [0, 1, 1]):
        assert env.step(actions)[0].shape == (3, 4)
    before = env.unwrapped.state.observation
    with pytest.raises(ValueError, match=r"actions in \[0, 1\] .* sub-envs \[2\] are \[2\]"):
        env.step(torch.tensor([0, 1, 2]))
    with pytest.raises(
        ValueError,
        match=r"integer actions for the discrete action space Discrete\(2\), but received actions of dtype float32",
    ):
        env.step(torch.tensor([0.0, 1.0, 1.0]))
    with pytest.raises(
        ValueError, match=r"expected \(3,\) \(num_envs rows of the action space Discrete\(2\)\)"
    ):
        env.step(torch.zeros(3, 1, dtype=torch.int64))
    np.testing.assert_array_equal(
        np.asarray(env.unwrapped.state.observation), np.asarray(before)
    )  # nothing stepped
    env.close()


@pytest.mark.parametrize(
    ("name", "kwargs", "error", "words"),
    [
        (
            "CartPole-v2",
            {},
            vecrl.UnknownEnvError,
            "gymnax has no environment 'CartPole-v2'. Did you mean 'CartPole-v1'",
        ),
        ("CartPole-v1", {"gravty": 9.8}, TypeError, "no keyword argument 'gravty'. Did you mean 'gravity'"),
        ("CartPole-v1", {"max_steps_in_episode": 9}, TypeError, "Give the time limit as episode_length="),
        ("CartPole-v1", {"gravity": "strong"}, TypeError, "gravity must be a finite number"),
        ("CartPole-v1", {"gravity": float("nan")}, TypeError, "gravity must be a finite number"),
        ("CartPole-v1", {"params": None}, vecrl.UnknownKeywordError, "give the fields of the env's params"),
        ("CartPole-v1", {"action_repeat": 2}, vecrl.UnknownKeywordError, "one action per step"),
        ("CartPole-v1", {"episode_length": 0}, ValueError, "episode_length must be a positive int"),
        ("CartPole-v1", {"episode_length": 2**40}, ValueError, r"at most 2\*\*31 - 1 .* episode_length=None"),
        (
            "CartPole-v1",
            {"num_envs": None, "num_episodes": 1},
            ValueError,
            "num_episodes=1 with num_envs=None",
        ),
        ("CartPole-v1", {"device": "cpu"}, vecrl.UnknownKeywordError, "does not take: a jax env computes"),
        ("CartPole-v1", {"num_env": 2}, vecrl.UnknownKeywordError, "Did you mean 'num_envs'"),
    ],
)
def test_mistakes_say_what_to_do(name, kwargs, error, words):
    kwargs = {"num_envs": 2, **kwargs}
    with pytest.raises(error, match=words):
        vecrl.make_vector_env(f"gymnax::{name}", **kwargs)


@pytest.mark.parametrize(
    ("env_name", "network", "kwargs"),
    [
        ("CartPole-v1", "Linear(4, 2)", {}),  # Discrete actions: the argmax of the scores
        ("Pendulum-v1", "Linear(3, 1)", {"episode_length": 20}),  # Box actions
        ("Breakout-MinAtar", "Linear(400, 3)", {"episode_length": 30}),  # (10, 10, 4) observations, flattened
    ],
)
def test_evaluate_runs_one_compiled_program_with_the_results_of_the_stepped_loop(env_name, network, kwargs):
    engine = pytest.importorskip("vecrl_evaluate", reason="evaluate comes with vecrl-evaluate")
    Policy, evaluate = pytest.importorskip("vecrl_policy").Policy, engine.evaluate

    env = vecrl.make_vector_env(f"gymnax::{env_name}", num_envs=4, num_episodes=1, **kwargs)
    policy = Policy(network)
    rows = torch.randn(6, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    fused = evaluate(policy, env, rows, seed=1)
    again = evaluate(policy, env, rows, seed=1)
    stepped = evaluate(policy, env, rows, seed=1, fused=False)
    env.close()
    assert (fused.path, stepped.path) == ("fused", "stepped") and (fused.episodes == 1).all()
    # a row starts from the same key on either path, and gymnax's randomness (MinAtar's sticky actions)
    # rides in the state: the same episodes
    assert torch.equal(fused.steps, stepped.steps) and torch.equal(fused.total_return, again.total_return)
    torch.testing.assert_close(fused.total_return, stepped.total_return, rtol=1e-5, atol=1e-4)
    if env_name == "CartPole-v1":
        assert torch.equal(fused.total_return, fused.steps.to(fused.total_return.dtype))  # 1 a step


def test_the_docstring_examples_run():
    # `nox -s tests` runs every package's docstring examples (--doctest-modules); this package is kept out of
    # it (gymnax pins an older gymnasium), so its own row runs them here
    import doctest
    import importlib

    for name in ("batch", "make", "plugin", "render", "vector_env"):
        module = importlib.import_module(f"vecrl_gymnax.{name}")
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, name


def test_gymnasium_1_3s_episode_statistics_are_refused_where_they_would_miscount():
    import gymnasium
    from packaging.version import Version

    record = gymnasium.wrappers.vector.RecordEpisodeStatistics
    if Version("1.0.0a1") <= Version(gymnasium.__version__) < Version("1.4.0"):  # (gymnax pins gymnasium<1.4)
        with pytest.raises(ValueError, match="one step short.*autoreset_mode='next_step'"):
            vecrl.make_vector_env("gymnax::CartPole-v1", num_envs=2, vector_wrappers=[record])
    env = vecrl.make_vector_env(
        "gymnax::CartPole-v1", num_envs=2, vector_wrappers=[record], autoreset_mode="next_step"
    )
    env.reset(seed=0)
    lengths = []
    for _ in range(80):
        info = env.step(torch.zeros(2, dtype=torch.long))[4]
        if "episode" in info:
            lengths += info["episode"]["l"][info["_episode"]].tolist()
    assert lengths and all(8 <= length <= 30 for length in lengths)  # whole episodes of a pushed pole
    env.close()


def test_an_episode_is_drawn_by_gymnax_s_visualizer_through_the_rendering_member():
    """vecrl.rendering: the engine keeps sub-env 1's states and gymnax's Visualizer draws them; an env made
    without render_mode="rgb_array" says how to make it draw."""
    env = vecrl.make_vector_env("gymnax::Catch-bsuite", num_envs=2, render_mode="rgb_array")
    env.reset(seed=0)
    snapshots = [env.unwrapped.render_snapshot(1)]
    for _ in range(3):
        env.step(torch.zeros(2, dtype=torch.int64))
        snapshots.append(env.unwrapped.render_snapshot(1))
    frames = env.unwrapped.render_frames(snapshots)
    assert len(frames) == 4 and frames[0].ndim == 3 and frames[0].shape[-1] == 3
    assert any(not np.array_equal(frames[0], frame) for frame in frames[1:])  # (the ball fell: frames differ)
    with pytest.raises(vecrl.NoFrames, match="render_mode='rgb_array'"):
        vecrl.make_vector_env("gymnax::Catch-bsuite", num_envs=2).unwrapped.render_snapshot(0)


def test_fused_results_are_bit_equal_for_every_steps_per_check_and_polls(monkeypatch):
    """The fused loop's shape (vecrl_evaluate.fused): 1, 4, 16 or 64 env steps between two checks of its
    predicate, restarts by cond or by selection, polls of the host at every check or about every quarter second."""
    from vecrl_evaluate import evaluate, fused
    from vecrl_policy import Policy

    env = vecrl.make_vector_env("gymnax::Pendulum-v1", num_envs=8, num_episodes=3, episode_length=50)
    policy = Policy("Linear(3, 8) >> Tanh() >> Linear(8, 1)")
    rows = 0.5 * torch.randn(20, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    options = dict(seed=3, num_episodes=3, action_noise_stdev=0.1, decrease_rewards_by=0.5)
    results = []
    for select in (False, True):
        for index, steps in enumerate((1, 4, 16, 64)):
            monkeypatch.setattr(fused, "FIRST_POLL", 1 if index % 2 else fused.UNBOUNDED)
            monkeypatch.setattr(fused, "POLL_SECONDS", 0.0 if index % 2 else fused.POLL_SECONDS)
            result = evaluate(policy, env, rows, steps_per_check=steps, select_restarts=select, **options)
            assert result.path == "fused" and (result.episodes == 3).all()
            results.append(result)
    for result in results[1:]:
        assert torch.equal(result.total_return, results[0].total_return) and torch.equal(
            result.steps, results[0].steps
        )


def test_the_names_read_from_gymnax_s_source_are_its_built_in_envs():
    # vecrl's commands check a name before importing gymnax and jax: from the registry's source
    import gymnax

    from vecrl.checks import names_in_source

    built_in = names_in_source("gymnax/registration.py", "_builtins")
    assert built_in and set(built_in) <= set(gymnax.registered_envs)
    with pytest.raises(
        ValueError, match="gymnax has no environment 'CartPol-v1'. Did you mean 'CartPole-v1'"
    ):
        vecrl.check_env_name("gymnax::CartPol-v1")
