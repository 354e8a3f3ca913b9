"""vecrl-brax imports and runs in an env holding only it and its dependencies (tests/smoke_check.py runs it)."""


def check() -> None:
    import torch

    import vecrl

    env = vecrl.make_vector_env("brax::fast", num_envs=2, episode_length=5)
    env.reset(seed=0)
    assert env.step(torch.zeros(2, 1))[0].shape == (2, 2)
    env.close()
