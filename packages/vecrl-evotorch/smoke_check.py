"""vecrl-evotorch imports and runs in an env holding only it and its dependencies (tests/smoke_check.py runs it)."""


def check() -> None:
    from evotorch.algorithms import PGPE

    from vecrl_evotorch import VecrlNE

    problem = VecrlNE(
        "gym::CartPole-v1", "Linear(obs_length, act_length)", num_envs=4, observation_normalization=True
    )
    PGPE(problem, popsize=4, center_learning_rate=0.1, stdev_learning_rate=0.1, stdev_init=0.1).step()
    assert problem.interaction_count == problem.obs_norm.count > 0
    problem.close()
