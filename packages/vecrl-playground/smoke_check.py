"""vecrl-playground imports and runs in an env holding only it and its dependencies (tests/smoke_check.py runs it)."""


def check() -> None:
    import torch

    import vecrl

    env = vecrl.make_vector_env("playground::CartpoleBalance", num_envs=2, episode_length=3)
    env.reset(seed=0)
    assert env.step(torch.zeros(2, 1))[0].shape == (2, 5)
    env.close()
