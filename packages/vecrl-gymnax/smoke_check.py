"""vecrl-gymnax imports and runs in an env holding only it and its dependencies (tests/smoke_check.py runs it)."""


def check() -> None:
    import torch

    import vecrl

    env = vecrl.make_vector_env("gymnax::CartPole-v1", num_envs=2, episode_length=5)
    env.reset(seed=0)
    assert env.step(torch.zeros(2, dtype=torch.int64))[0].shape == (2, 4)
    env.close()
