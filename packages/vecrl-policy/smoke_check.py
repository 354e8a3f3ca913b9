"""vecrl-policy imports and runs in an env holding only it and its dependencies (tests/smoke_check.py runs it)."""


def check() -> None:
    import torch

    from vecrl_policy import Policy

    policy = Policy("Linear(4, 8) >> Tanh() >> LSTM(8, 2)")
    policy.set_parameters(torch.zeros(3, policy.parameter_length))
    assert policy(torch.ones(3, 4, dtype=torch.float64)).shape == (3, 2)
