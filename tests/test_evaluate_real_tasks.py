"""evaluate and `vecrl evaluate` on the envs users evolve: MuJoCo (float64), Discrete observations,
discrete and continuous actions, brax; each against a per-row reference stepped by hand."""

import re
import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch
from gymnasium.spaces import Discrete, flatdim, flatten

import vecrl
from vecrl_evaluate import evaluate
from vecrl_evaluate.evaluate_workers import STARTED_SHARE
from vecrl_evaluate.randomness import row_seeds
from vecrl_policy import Policy
from vecrl_policy.observations import observation_flattener

VECRL = str(Path(sys.executable).parent / "vecrl")

# (env id, steps cap per episode): the caps keep the reference loop short, and apply to both sides.
REAL_TASKS = [
    ("Hopper-v5", 40),  # MuJoCo: float64 observations, Box actions
    ("InvertedPendulum-v5", 40),  # MuJoCo, float64, one action
    ("Acrobot-v1", 60),  # float32 observations, Discrete(3) actions
    ("FrozenLake-v1", 30),  # Discrete(16) observations, Discrete(4) actions
    ("Blackjack-v1", 10),  # Tuple(Discrete(32), Discrete(11), Discrete(2)) observations: a tuple of tensors
]


def reference(policy, rows, env_id, max_steps, seed):
    """One gymnasium env and one nn.Module per row, stepped by hand: the specification of evaluate."""
    seeds = row_seeds(seed, len(rows))
    totals, steps = [], []
    for row, env_seed in zip(rows, seeds, strict=True):
        module = policy.to_torch_module(row)
        env = gymnasium.make(env_id, max_episode_steps=max_steps)
        obs, _ = env.reset(seed=int(env_seed))
        total, count, done = 0.0, 0, False
        while not done:
            x = torch.as_tensor(flatten(env.observation_space, obs), dtype=torch.float32)
            with torch.no_grad():
                out = module(x)
            action = int(out.argmax()) if isinstance(env.action_space, Discrete) else out.numpy()
            obs, reward, terminated, truncated, _ = env.step(action)
            total, count, done = total + float(reward), count + 1, terminated or truncated
        totals.append(total)
        steps.append(count)
    return torch.tensor(totals, dtype=torch.float64), steps


@pytest.mark.parametrize(("env_id", "max_steps"), REAL_TASKS)
def test_evaluate_matches_the_hand_stepped_reference(env_id, max_steps):
    probe = gymnasium.make(env_id)
    obs_length = flatdim(probe.observation_space)
    act_length = flatdim(probe.action_space)
    policy = Policy(f"Linear({obs_length}, 8) >> Tanh() >> Linear(8, {act_length})")
    rows = torch.randn(5, policy.parameter_length, generator=torch.Generator().manual_seed(3))
    env = vecrl.make_vector_env(f"gym::{env_id}", num_envs=5, num_episodes=1, max_episode_steps=max_steps)
    result = evaluate(policy, env, rows, seed=11)
    expected_total, expected_steps = reference(policy, rows, env_id, max_steps, seed=11)
    torch.testing.assert_close(result.total_return, expected_total)
    assert result.steps.tolist() == expected_steps


def test_the_policy_keeps_its_dtype_and_the_observation_is_brought_to_it():
    policy = Policy("Linear(11, 3)")
    rows = torch.randn(2, policy.parameter_length, dtype=torch.float64)
    env = vecrl.make_vector_env("gym::Hopper-v5", num_envs=2, num_episodes=1, max_episode_steps=5)
    result64 = evaluate(policy, env, rows, seed=0)
    result32 = evaluate(policy, env, rows.float(), seed=0)
    assert policy.parameters.dtype == torch.float32  # the last call's rows
    assert result64.steps.tolist() == result32.steps.tolist()
    policy.set_parameters(rows[0].float())
    assert policy(torch.ones(11, dtype=torch.float64)).dtype == torch.float32


def test_discrete_observations_reach_the_policy_one_hot():
    space = Discrete(5, start=2)
    flatten_batch = observation_flattener(space, torch.float32, "cpu")
    observations = torch.tensor([2, 6, 4])
    expected = np.stack([flatten(space, int(o)) for o in observations])
    assert flatten_batch(observations).tolist() == expected.tolist()


@pytest.mark.parametrize(
    "space",
    [
        gymnasium.spaces.Box(-1, 1, (2, 3), np.float64),
        gymnasium.spaces.MultiDiscrete([3, 2]),
        gymnasium.spaces.MultiBinary(4),
        gymnasium.spaces.Dict({"b": Discrete(3), "a": gymnasium.spaces.Box(0, 1, (2,))}),
        gymnasium.spaces.Tuple((Discrete(2), gymnasium.spaces.Box(0, 1, (1,)))),
    ],
    ids=["box2d", "multidiscrete", "multibinary", "dict", "tuple"],
)
def test_every_observation_space_is_flattened_as_gymnasium_flattens_it(space):
    space.seed(0)
    samples = [space.sample() for _ in range(4)]
    batch = gymnasium.vector.utils.concatenate(
        space, samples, gymnasium.vector.utils.create_empty_array(space, 4)
    )
    as_torch = _to_torch(batch)
    got = observation_flattener(space, torch.float64, "cpu")(as_torch)
    expected = np.stack([flatten(space, sample) for sample in samples]).astype(np.float64)
    np.testing.assert_allclose(got.numpy(), expected)


def _to_torch(batch):
    if isinstance(batch, dict):
        return {key: _to_torch(value) for key, value in batch.items()}
    if isinstance(batch, tuple):
        return tuple(_to_torch(value) for value in batch)
    return torch.as_tensor(batch)


def test_a_space_without_a_flat_form_is_refused_with_the_space_named():
    with pytest.raises(TypeError, match="Text"):
        observation_flattener(gymnasium.spaces.Text(5), torch.float32, "cpu")


def test_evaluate_runs_on_a_brax_env():
    pytest.importorskip("vecrl_brax")
    env = vecrl.make_vector_env("brax::fast", num_envs=4, num_episodes=1, episode_length=20)
    policy = Policy("Linear(2, 1) >> Tanh()")
    rows = torch.randn(6, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    result = evaluate(policy, env, rows, seed=1)
    assert result.episodes.tolist() == [1] * 6
    assert result.steps.tolist() == [20] * 6  # 'fast' ends by truncation only
    assert torch.isfinite(result.total_return).all()


@pytest.mark.parametrize(
    "env_name",
    ["gym::Hopper-v5", "gym::InvertedPendulum-v5", "gym::Acrobot-v1", "gym::FrozenLake-v1", "brax::fast"],
)
def test_the_evaluate_command_runs_on_real_tasks(env_name):
    if env_name.startswith("brax::"):
        pytest.importorskip("vecrl_brax")
    result = subprocess.run(
        [VECRL, "evaluate", env_name, "--popsize", "4", "--num-envs", "4"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert f"{env_name}: 4 policies x 1 episode(s): mean return" in result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("env_id", "popsize", "num_envs"), [("Hopper-v5", 10, 10), ("CartPole-v1", 9, 4), ("FrozenLake-v1", 6, 6)]
)
def test_evaluate_with_workers_equals_the_single_process_evaluate(env_id, popsize, num_envs):
    env = vecrl.make_vector_env(f"gym::{env_id}", num_envs=num_envs, num_episodes=2, max_episode_steps=50)
    space = env.single_action_space
    act_length = int(space.n) if isinstance(space, Discrete) else space.shape[0]
    policy = Policy(
        f"Linear({flatdim(env.single_observation_space)}, 8) >> Tanh() >> Linear(8, {act_length})"
    )
    rows = torch.randn(popsize, policy.parameter_length, generator=torch.Generator().manual_seed(1))
    try:
        alone = evaluate(policy, env, rows, num_episodes=2, seed=11)
        for _ in range(2):  # the second call reuses the workers, with their env and policy
            parallel = evaluate(policy, env, rows, num_episodes=2, seed=11, num_workers=2)
            for ours, theirs in zip(
                (parallel.total_return, parallel.episodes, parallel.steps),
                (alone.total_return, alone.episodes, alone.steps),
                strict=True,
            ):
                assert torch.equal(ours, theirs)
        workers = env._evaluation_workers.workers
        # Each process starts ceil(popsize / 4) rows on an env of that size (at most num_envs), the others
        # going to whichever frees a sub-env first; the caller's env is kept with the workers and closed
        # with the env.
        own_envs = list(env._evaluation_workers._envs)
        width = -(-popsize // (2 * STARTED_SHARE))
        assert [own.num_envs for own in own_envs] == ([width] if width < num_envs else [])
    finally:
        env.close()
    assert not any(worker.process.is_alive() for worker in workers)
    assert all(own.unwrapped.closed for own in own_envs)


def test_evaluate_with_workers_refuses_an_env_it_cannot_make_again():
    env = vecrl.TorchWrapper(gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2))
    policy = Policy("Linear(4, 2)")
    with pytest.raises(ValueError, match="needs a gym env made by vecrl.make_vector_env"):
        evaluate(policy, env, torch.zeros(2, policy.parameter_length), num_workers=2)
    with pytest.raises(ValueError, match="num_workers must be None or a positive int"):
        evaluate(policy, env, torch.zeros(2, policy.parameter_length), num_workers=0)


def test_the_evaluate_command_runs_with_workers_and_says_their_start_apart():
    result = subprocess.run(
        [VECRL, "evaluate", "gym::Hopper-v5", "--popsize", "6", "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    started, evaluated = result.stdout.splitlines()[-2:]
    assert re.fullmatch(
        r"starting 2 workers \(this process and 1 more\) \.\.\. ready in \d+\.\d s", started
    ), result.stdout
    assert "gym::Hopper-v5: 6 policies x 1 episode(s): mean return" in evaluated


@pytest.mark.parametrize(
    ("network", "bit_equal"),
    [
        ("Linear(11, 8) >> Tanh() >> Linear(8, 3)", True),
        ("RNN(11, 6) >> Linear(6, 3)", True),
        ("Linear(11, 8) >> Tanh() >> LSTM(8, 3)", False),
        ("GRU(11, 6) >> Linear(6, 3)", False),
    ],
    ids=["mlp", "rnn", "lstm", "gru"],
)
def test_a_hopper_row_gets_its_result_on_any_width_to_the_tolerance_the_readme_states(network, bit_equal):
    """MLPs and RNN cells give a row the same result bit for bit on any num_envs; LSTM and GRU cells to
    float32 rounding (torch computes a gate's last values of a batch with scalar code, not SIMD)."""
    policy = Policy(network)
    rows = 0.5 * torch.randn(13, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    results = []
    for num_envs in (1, 13):
        env = vecrl.make_vector_env("gym::Hopper-v5", num_envs=num_envs)
        results.append(evaluate(policy, env, rows, seed=1))
        env.close()
    alone, together = results
    assert torch.equal(alone.steps, together.steps)
    if bit_equal:
        assert torch.equal(alone.total_return, together.total_return)
    else:
        torch.testing.assert_close(alone.total_return, together.total_return, rtol=1e-5, atol=0.0)
