"""vecrl-evaluate imports and runs in an env holding only it and its dependencies (tests/smoke_check.py runs it)."""


def check() -> None:
    import torch

    from vecrl_evaluate import EvaluateOptions, evaluate  # noqa: F401  (the engine's names import)
    from vecrl_evaluate.rollout import episode_ends

    slot_episodes, finished, _ = episode_ends(torch.tensor([True, False]), torch.tensor([0, 0]), 1)
    assert slot_episodes.tolist() == [1, 0] and finished.tolist() == [True, False]
