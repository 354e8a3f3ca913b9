"""evaluate(obs_norm=...) on real gymnasium envs: what the policy sees and what the statistics count."""

import gymnasium
import pytest
import torch

import vecrl
from vecrl_evaluate import evaluate
from vecrl_evaluate.randomness import row_seeds
from vecrl_policy import ObsNorm, Policy


def hand_collected(policy, rows, seed, normalize=None):
    """The observations each row sees on its own gymnasium CartPole (each from its row's seed), with the actions of the policy fed normalized ones: the specification of what evaluate counts."""
    seeds = row_seeds(seed, len(rows))
    seen, returns = [], []
    for row, env_seed in zip(rows, seeds, strict=True):
        net = policy.to_torch_module(row)
        env = gymnasium.make("CartPole-v1")
        obs, _ = env.reset(seed=int(env_seed))
        total = 0.0
        while True:
            x = torch.as_tensor(obs, dtype=torch.float32)
            seen.append(x)
            with torch.no_grad():
                action = int(net(x if normalize is None else normalize(x[None])[0]).argmax())
            obs, reward, terminated, truncated, _ = env.step(action)
            total += float(reward)
            if terminated or truncated:
                break
        returns.append(total)
    return torch.stack(seen).double(), torch.tensor(returns, dtype=torch.float64)


def test_evaluate_normalizes_with_the_statistics_of_the_call_start_and_adds_what_the_rows_saw():
    policy = Policy("Linear(4, 8) >> Tanh() >> Linear(8, 2)")
    rows = torch.randn(6, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=6, num_episodes=1)
    stats = ObsNorm()
    plain = evaluate(policy, env, rows, seed=3)
    first = evaluate(policy, env, rows, seed=3, obs_norm=stats)
    assert torch.equal(first.total_return, plain.total_return)  # empty statistics: unchanged observations
    seen, _ = hand_collected(policy, rows, seed=3)
    assert stats.count == len(seen) == int(plain.steps.sum())
    torch.testing.assert_close(stats.mean, seen.mean(dim=0))

    before = stats.copy()
    second = evaluate(policy, env, rows, seed=5, obs_norm=stats)
    seen_after, expected = hand_collected(policy, rows, seed=5, normalize=before.normalize)
    assert torch.equal(second.total_return, expected)
    assert stats.count == before.count + len(seen_after)
    torch.testing.assert_close(stats.mean, torch.cat([seen, seen_after]).mean(dim=0))


def test_spent_rows_and_spare_sub_envs_add_nothing_to_the_statistics():
    policy = Policy("Linear(4, 2)")
    rows = torch.randn(5, policy.parameter_length, generator=torch.Generator().manual_seed(1))
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4, num_episodes=2)  # 2 chunks, 3 spare sub-envs
    stats = ObsNorm()
    result = evaluate(policy, env, rows, num_episodes=2, seed=0, obs_norm=stats)
    assert stats.count == int(result.steps.sum())
    assert torch.isfinite(stats.mean).all() and torch.isfinite(stats.std).all()


@pytest.mark.parametrize(
    ("env_name", "network", "size"),
    [
        ("gym::FrozenLake-v1", "Linear(16, 4)", 16),  # Discrete observations: one-hot rows
        ("gym::Hopper-v5", "Linear(11, 3)", 11),  # MuJoCo: float64 observations
    ],
)
def test_evaluate_normalizes_discrete_and_float64_observations(env_name, network, size):
    env = vecrl.make_vector_env(env_name, num_envs=4, num_episodes=1)
    policy = Policy(network)
    rows = 0.1 * torch.randn(4, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    stats = ObsNorm()
    for seed in range(2):
        result = evaluate(policy, env, rows, seed=seed, obs_norm=stats)
        assert torch.isfinite(result.total_return).all()
    assert stats.size == size and stats.count > 0 and stats.mean.dtype == torch.float64
    env.close()


def test_evaluate_refuses_statistics_of_another_env_and_double_normalization():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    policy = Policy("Linear(4, 2)")
    rows = torch.zeros(2, policy.parameter_length)
    with pytest.raises(ValueError, match="length 3, but this env's flat observations have length 4"):
        evaluate(policy, env, rows, obs_norm=ObsNorm(3))
    with pytest.raises(TypeError, match="obs_norm must be a vecrl_policy.ObsNorm"):
        evaluate(policy, env, rows, obs_norm={"mean": 0})
    policy.obs_norm = ObsNorm(4)
    with pytest.raises(ValueError, match="normalized twice"):
        evaluate(policy, env, rows, obs_norm=ObsNorm(4))


def test_evaluate_with_a_policy_that_carries_statistics_normalizes_once():
    stats = ObsNorm()
    stats.update(torch.randn(100, 4))
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=3)
    policy = Policy("Linear(4, 2)")
    rows = torch.randn(3, policy.parameter_length, generator=torch.Generator().manual_seed(2))
    by_evaluate = evaluate(policy, env, rows, seed=1, obs_norm=stats.copy())
    policy.obs_norm = stats
    by_policy = evaluate(policy, env, rows, seed=1)
    assert torch.equal(by_policy.total_return, by_evaluate.total_return)
