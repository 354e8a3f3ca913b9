"""vecrl_evaluate.evaluate on real gymnasium envs, against a hand-written per-row reference."""

import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch

import vecrl
from vecrl_evaluate import evaluate
from vecrl_evaluate.randomness import episode_seed
from vecrl_policy import Policy

ROOT = Path(__file__).parent.parent


def row_seeds(seed: int, num_rows: int) -> list[int]:
    """The documented seeding rule: row r's env is reset with word r of SeedSequence(seed), mod 2**31 - 1."""
    return [int(w) % (2**31 - 1) for w in np.random.SeedSequence(seed).generate_state(num_rows, np.uint32)]


def reference_returns(policy, rows, num_episodes, seed, env_id="CartPole-v1"):
    """One plain gymnasium env and one nn.Module per row, stepped by hand (the specification): whatever
    num_envs, row r's episode e starts from a reset seeded with episode_seed(row r's seed, e)."""
    totals, steps = [], []
    for row, env_seed in zip(rows, row_seeds(seed, len(rows)), strict=True):
        module = policy.to_torch_module(row)
        env = gymnasium.make(env_id)
        total, count, h = 0.0, 0, None
        for episode in range(num_episodes):
            obs, _ = env.reset(
                seed=int(episode_seed(np.array([env_seed], np.uint32), np.array([episode], np.uint32))[0])
            )
            h = None
            while True:
                x = torch.as_tensor(obs, dtype=torch.float32)
                with torch.no_grad():
                    if is_recurrent(module):
                        out, h = module(x, h)
                    else:
                        out = module(x)
                action = int(out.argmax()) if env_id == "CartPole-v1" else out.numpy()
                obs, reward, terminated, truncated, _ = env.step(action)
                total += float(reward)
                count += 1
                if terminated or truncated:
                    break
        totals.append(total)
        steps.append(count)
    return torch.tensor(totals, dtype=torch.float64), torch.tensor(steps)


def is_recurrent(module) -> bool:
    return any(type(m).__name__ in ("LSTM", "GRU", "RNN") for m in module.modules())


@pytest.mark.parametrize(
    "network",
    ["Linear(4, 8) >> Tanh() >> Linear(8, 2)", "Linear(4, 6) >> Tanh() >> LSTM(6, 4) >> Linear(4, 2)"],
    ids=["mlp", "lstm"],
)
@pytest.mark.parametrize(
    ("population", "num_envs"),
    [(6, 6), (10, 4), (10, 16)],
    ids=["as-many-as-sub-envs", "refilled", "spare-sub-envs"],
)
def test_returns_match_a_per_row_reference(network, population, num_envs):
    torch.manual_seed(0)
    policy = Policy(network)
    rows = torch.randn(population, policy.parameter_length)
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=num_envs, num_episodes=2)
    result = evaluate(policy, env, rows, num_episodes=2, seed=7)
    expected_total, expected_steps = reference_returns(policy, rows, 2, seed=7)
    torch.testing.assert_close(result.total_return, expected_total)
    assert result.steps.tolist() == expected_steps.tolist()
    assert result.episodes.tolist() == [2] * population
    torch.testing.assert_close(result.mean_return, expected_total / 2)


def test_an_env_without_budget_gives_the_same_results():
    torch.manual_seed(1)
    policy = Policy("Linear(4, 2)")
    rows = torch.randn(5, policy.parameter_length)
    budget = evaluate(
        policy, vecrl.make_vector_env("CartPole-v1", num_envs=5, num_episodes=3), rows, num_episodes=3, seed=3
    )
    free = evaluate(policy, vecrl.make_vector_env("CartPole-v1", num_envs=5), rows, num_episodes=3, seed=3)
    torch.testing.assert_close(budget.total_return, free.total_return)
    assert torch.isfinite(budget.total_return).all()


def test_recurrent_state_is_reset_for_exactly_the_rows_whose_episode_ended():
    policy = Policy("LSTM(4, 2)")
    env = vecrl.make_vector_env("CartPole-v1", num_envs=3, num_episodes=2)
    ends, resets = [], []
    env_step, policy_reset = env.step, policy.reset

    def recording_step(action):
        result = env_step(action)
        ends.append((result[2] | result[3]).clone())
        return result

    def recording_reset(indices=None, **kwargs):
        resets.append((len(ends), torch.as_tensor(indices).clone()))
        return policy_reset(indices, **kwargs)

    env.step, policy.reset = recording_step, recording_reset
    evaluate(policy, env, torch.randn(3, policy.parameter_length), num_episodes=2, seed=0)

    finished = torch.zeros(3, dtype=torch.long)
    expected = []
    for step, ended in enumerate(ends, start=1):
        ended = ended & (finished < 2)  # past its budget a sub-env reports ended forever: not an episode end
        finished += ended
        going_on = ended & (finished < 2)  # a row done with its episodes needs no fresh state
        if going_on.any():
            expected.append((step, going_on))
    assert [step for step, _ in resets] == [step for step, _ in expected]
    for (_, mask), (_, want) in zip(resets, expected, strict=True):
        assert int(mask.sum()) == int(want.sum())
        if len(mask) == len(
            want
        ):  # later masks are over the rows the policy still holds (it drops done ones)
            assert mask.tolist() == want.tolist()


def test_continuous_actions_reach_the_env_unchanged():
    policy = Policy("Linear(3, 1) >> Tanh()")
    rows = torch.randn(4, policy.parameter_length)
    env = vecrl.make_vector_env(
        "gym::Pendulum-v1", num_envs=4, num_episodes=1, gym_kwargs={"max_episode_steps": 20}
    )
    result = evaluate(policy, env, rows, seed=5)
    assert result.steps.tolist() == [20] * 4
    assert (result.total_return < 0).all()


def test_a_smaller_env_budget_than_asked_is_refused():
    policy = Policy("Linear(4, 2)")
    env = vecrl.make_vector_env("CartPole-v1", num_envs=2, num_episodes=1)
    with pytest.raises(ValueError, match="num_episodes=1, fewer than the 2"):
        evaluate(policy, env, torch.zeros(2, policy.parameter_length), num_episodes=2)


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        (torch.zeros(10), r"2-D tensor .* got \(10,\)\. For a single policy, pass parameters\[None\]"),
        (torch.zeros(2, 3), "the policy's 10 parameters"),
        (torch.zeros(0, 10), r"at least one, got \(0, 10\)\.$"),
        (
            np.zeros((2, 10), np.float32),
            r"got ndarray\. Make it a tensor with torch\.as_tensor\(parameters\)",
        ),
    ],
)
def test_bad_parameters_are_refused(parameters, message):
    policy = Policy("Linear(4, 2)")
    env = vecrl.make_vector_env("CartPole-v1", num_envs=2)
    with pytest.raises(ValueError, match=message):
        evaluate(policy, env, parameters)


def test_the_evaluate_command_prints_the_summary():
    vecrl_script = Path(sys.executable).parent / "vecrl"
    result = subprocess.run(
        [
            str(vecrl_script),
            "evaluate",
            "gym::CartPole-v1",
            "--popsize",
            "6",
            "--episodes",
            "2",
            "--num-envs",
            "4",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "6 policies x 2 episode(s): mean return" in result.stdout and "env-steps/s" in result.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--policy", "Linear(obs_length, 4"], "bad --policy"),
        (["--policy", "__import__('os').system('echo hacked')"], "bad --policy"),
        (["--popsize", "0"], "expected a positive whole number"),
        (["--episodes", "-1"], "expected a positive whole number"),
    ],
)
def test_the_evaluate_command_refuses_bad_arguments_in_one_line(args, expected):
    vecrl_script = Path(sys.executable).parent / "vecrl"
    result = subprocess.run(
        [str(vecrl_script), "evaluate", "gym::CartPole-v1", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2
    assert expected in result.stderr and "Traceback" not in result.stderr and "hacked" not in result.stdout


class ThreadsSeen(torch.nn.Module):
    """A linear policy that notes how many torch threads each call runs on."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 2)
        self.seen: list[int] = []

    def forward(self, x):
        self.seen.append(torch.get_num_threads())
        return self.linear(x)


def test_the_loop_runs_on_one_torch_thread_and_restores_the_count():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4)
    module = ThreadsSeen()
    policy = Policy(module)
    policy.fast_path = False  # the module's own forward runs
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        evaluate(policy, env, torch.zeros(4, policy.parameter_length), seed=0)
        assert set(module.seen[1:]) == {1}  # (the first call is the fit check, before the loop)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
        env.close()


def test_common_random_numbers_start_every_row_from_row_zeros_seed():
    policy = Policy("Linear(4, 2)")
    row = torch.randn(1, policy.parameter_length, generator=torch.Generator().manual_seed(3))
    rows = row.expand(6, -1).contiguous()  # one policy six times: only the starts tell them apart
    env = vecrl.make_vector_env("CartPole-v1", num_envs=4)
    common = evaluate(policy, env, rows, seed=5, num_episodes=2, common_random_numbers=True)
    own = evaluate(policy, env, rows, seed=5, num_episodes=2)
    assert (common.total_return == common.total_return[0]).all()
    assert len(set(own.total_return.tolist())) > 1
    assert common.total_return[0] == own.total_return[0]  # row 0 keeps its own seed
    unseeded = evaluate(policy, env, rows, common_random_numbers=True)
    assert (unseeded.total_return == unseeded.total_return[0]).all()
    with pytest.raises(TypeError, match="common_random_numbers must be True or False"):
        evaluate(policy, env, rows, common_random_numbers="yes")
    env.close()
