"""Parameter sharing, as SuperSuit's users train: one SB3 PPO acts for every agent of every world through
``SB3VecEnv``, and learns simple_spread beyond a random team."""

from __future__ import annotations

import pytest
import torch

import vecrl

pytest.importorskip("mpe2")
pytest.importorskip("vecrl_sb3")


def team_return(act, worlds: int = 32) -> float:
    """The mean return of an agent of simple_spread over one episode of ``worlds`` worlds (seeded alike)."""
    env = vecrl.make_vector_env(
        "pettingzoo::mpe2.simple_spread_v3", num_envs=3 * worlds, max_cycles=25, num_episodes=1
    )
    observation, _ = env.reset(seed=100)
    total = torch.zeros(3 * worlds)
    for _ in range(25):
        observation, reward, *_ = env.step(act(observation))
        total += torch.nan_to_num(reward)
    env.close()
    return total.mean().item()


@pytest.mark.slow
def test_a_parameter_sharing_ppo_learns_simple_spread_beyond_a_random_team():
    from stable_baselines3 import PPO

    from vecrl_sb3 import SB3VecEnv

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        env = SB3VecEnv(
            vecrl.make_vector_env("pettingzoo::mpe2.simple_spread_v3", num_envs=48, max_cycles=25)
        )
        model = PPO(
            "MlpPolicy",
            env,
            n_steps=64,
            batch_size=512,
            gamma=0.95,
            learning_rate=1e-3,
            policy_kwargs={"net_arch": [64, 64]},
            seed=0,
            device="cpu",
        )
        model.learn(total_timesteps=61_440)
        actions = torch.Generator().manual_seed(0)
        random = team_return(lambda obs: torch.randint(0, 5, (len(obs),), generator=actions))
        trained = team_return(lambda obs: torch.as_tensor(model.predict(obs.numpy(), deterministic=True)[0]))
    finally:
        torch.set_num_threads(threads)
    assert trained > random + 3, (random, trained)  # (seen: -28.0 random, -22.0 trained)
