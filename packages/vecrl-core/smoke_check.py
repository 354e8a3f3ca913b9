"""vecrl-core imports and runs in an env holding only it and its dependencies (tests/smoke_check.py runs it)."""


def check() -> None:
    import numpy as np

    import vecrl

    assert vecrl.convert_to_torch(np.zeros(3)).shape == (3,)
    assert vecrl.split_env_name("CartPole-v1") == ("gym", "CartPole-v1")
    from vecrl.cli import main

    assert main(["backends"]) == 0
