"""vecrl-gym imports and runs in an env holding only it and its dependencies (tests/smoke_check.py runs it)."""


def check() -> None:
    import torch

    import vecrl

    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    env.reset(seed=0)
    assert env.step(torch.tensor([0, 1]))[1].tolist() == [1.0, 1.0]
    env.close()
