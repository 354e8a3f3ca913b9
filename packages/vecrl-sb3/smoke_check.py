"""vecrl-sb3 imports and runs in an env holding only it and its dependencies (tests/smoke_check.py runs it)."""


def check() -> None:
    import gymnasium
    import numpy as np

    import vecrl
    from vecrl_sb3 import SB3VecEnv

    same_step = gymnasium.vector.AutoresetMode.SAME_STEP
    sync = gymnasium.vector.SyncVectorEnv(
        [lambda: gymnasium.make("CartPole-v1")] * 2, autoreset_mode=same_step
    )
    env = SB3VecEnv(vecrl.TorchWrapper(sync))
    env.reset()
    assert env.step(np.array([0, 1]))[1].tolist() == [1.0, 1.0]
    env.close()
