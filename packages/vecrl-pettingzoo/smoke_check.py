"""vecrl-pettingzoo imports and runs in an env holding only it and its dependencies (tests/smoke_check.py runs it)."""


def check() -> None:
    import vecrl

    env = vecrl.make_vector_env("pettingzoo::pettingzoo.classic.rps_v2", num_envs=4, num_episodes=1)
    observation, info = env.reset(seed=0)
    assert tuple(observation.shape) == (4,) and info["world"].tolist() == [0, 0, 1, 1]
    env.close()
