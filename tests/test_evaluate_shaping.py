"""evaluate's reward shaping and action noise (EvoTorch VecGymNE's names), on real gymnasium envs."""

import gymnasium
import pytest
import torch

import vecrl
from vecrl_evaluate import evaluate
from vecrl_evaluate.randomness import row_seeds
from vecrl_policy import Policy


def per_row_rewards(policy, rows, seed, env_id="CartPole-v1"):
    """Each row's rewards, one list per row, from a plain gymnasium env stepped by hand."""
    seeds = row_seeds(seed, len(rows))
    rewards = []
    for row, env_seed in zip(rows, seeds, strict=True):
        net = policy.to_torch_module(row)
        env = gymnasium.make(env_id)
        obs, _ = env.reset(seed=int(env_seed))
        row_rewards = []
        while True:
            with torch.no_grad():
                out = net(torch.as_tensor(obs, dtype=torch.float32))
            action = int(out.argmax()) if env_id == "CartPole-v1" else out.numpy()
            obs, reward, terminated, truncated, _ = env.step(action)
            row_rewards.append(float(reward))
            if terminated or truncated:
                break
        rewards.append(row_rewards)
    return rewards


@pytest.mark.parametrize(
    ("schedule", "bonus_of_step"),
    [
        ((5, 2.0), lambda t: 2.0 if t >= 5 else 0.0),
        ((4, 8, 1.0), lambda t: min(max((t - 4) / 4, 0.0), 1.0)),
    ],
)
def test_rewards_are_decreased_and_the_alive_bonus_follows_its_schedule(schedule, bonus_of_step):
    policy = Policy("Linear(4, 2)")
    rows = torch.randn(5, policy.parameter_length, generator=torch.Generator().manual_seed(4))
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=5, num_episodes=1)
    result = evaluate(policy, env, rows, seed=7, decrease_rewards_by=0.75, alive_bonus_schedule=schedule)
    rewards = per_row_rewards(policy, rows, seed=7)
    expected = [sum(r - 0.75 + bonus_of_step(t) for t, r in enumerate(row, start=1)) for row in rewards]
    torch.testing.assert_close(result.total_return, torch.tensor(expected, dtype=torch.float64))
    # the env's own return beside it, as vecrl evolve's results table records it
    raw = torch.tensor([sum(row) for row in rewards], dtype=torch.float64)
    torch.testing.assert_close(result.raw_return, raw)
    torch.testing.assert_close(result.mean_raw_return, raw)
    workers = evaluate(
        policy, env, rows, seed=7, decrease_rewards_by=0.75, alive_bonus_schedule=schedule, num_workers=2
    )
    torch.testing.assert_close(workers.raw_return, raw)


def test_the_alive_bonus_counts_steps_from_each_episodes_start():
    policy = Policy("Linear(4, 2)")
    rows = torch.randn(3, policy.parameter_length, generator=torch.Generator().manual_seed(5))
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=3, num_episodes=2)
    plain = evaluate(policy, env, rows, num_episodes=2, seed=1)
    shaped = evaluate(
        policy, env, rows, num_episodes=2, seed=1, decrease_rewards_by=1.0, alive_bonus_schedule=(1, 1.0)
    )
    assert torch.equal(shaped.total_return, plain.total_return)  # -1 then +1 on every step of both episodes
    assert torch.equal(plain.raw_return, plain.total_return) and torch.equal(
        shaped.raw_return, plain.total_return
    )


def test_action_noise_reproduces_for_a_seed_and_changes_the_actions():
    env = vecrl.make_vector_env("gym::Pendulum-v1", num_envs=4)
    policy = Policy("Linear(3, 1)")
    rows = torch.randn(8, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    quiet = evaluate(policy, env, rows, seed=2)
    noisy = evaluate(policy, env, rows, seed=2, action_noise_stdev=0.5)
    again = evaluate(policy, env, rows, seed=2, action_noise_stdev=0.5)
    other = evaluate(policy, env, rows, seed=3, action_noise_stdev=0.5)
    assert torch.equal(noisy.total_return, again.total_return)
    assert not torch.equal(noisy.total_return, quiet.total_return)
    assert not torch.equal(noisy.total_return, other.total_return)
    zero = evaluate(policy, env, rows, seed=2, action_noise_stdev=0.0)
    assert torch.equal(zero.total_return, quiet.total_return)


def test_action_noise_on_discrete_actions_is_refused():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    policy = Policy("Linear(4, 2)")
    with pytest.raises(
        ValueError, match="adds noise to continuous actions, but this env's actions are Discrete"
    ):
        evaluate(policy, env, torch.zeros(2, policy.parameter_length), action_noise_stdev=0.1)
