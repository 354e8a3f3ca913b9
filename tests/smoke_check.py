"""Import and use each named package in an env that holds only them and their declared dependencies.

Run by ``nox -s isolation`` before any test tool is installed: a dependency a package uses without
declaring it (one that pytest happens to bring along, such as packaging) fails here.

    python tests/smoke_check.py vecrl-core vecrl-gym
"""

from __future__ import annotations

import importlib.util
import sys


def check_core() -> None:
    import numpy as np

    import vecrl

    assert vecrl.convert_to_torch(np.zeros(3)).shape == (3,)
    assert vecrl.split_env_name("CartPole-v1") == ("gym", "CartPole-v1")
    from vecrl.cli import main

    assert main(["backends"]) == 0


def check_gym() -> None:
    import torch

    import vecrl

    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    env.reset(seed=0)
    assert env.step(torch.tensor([0, 1]))[1].tolist() == [1.0, 1.0]
    env.close()


def check_brax() -> None:
    import torch

    import vecrl

    env = vecrl.make_vector_env("brax::fast", num_envs=2, episode_length=5)
    env.reset(seed=0)
    assert env.step(torch.zeros(2, 1))[0].shape == (2, 2)
    env.close()


def check_envpool() -> None:
    import torch

    import vecrl

    env = vecrl.make_vector_env("envpool::CartPole-v1", num_envs=2, num_episodes=1)
    env.reset(seed=0)
    assert env.step(torch.tensor([0, 1]))[1].tolist() == [1.0, 1.0]
    env.close()


def check_playground() -> None:
    import torch

    import vecrl

    env = vecrl.make_vector_env("playground::CartpoleBalance", num_envs=2, episode_length=3)
    env.reset(seed=0)
    assert env.step(torch.zeros(2, 1))[0].shape == (2, 5)
    env.close()


def check_policy() -> None:
    import torch

    from vecrl_policy import Policy

    policy = Policy("Linear(4, 8) >> Tanh() >> LSTM(8, 2)")
    policy.set_parameters(torch.zeros(3, policy.parameter_length))
    assert policy(torch.ones(3, 4, dtype=torch.float64)).shape == (3, 2)


def check_sb3() -> None:
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


def check_ray() -> None:
    import torch

    import vecrl
    from vecrl_policy import Policy, evaluate
    from vecrl_ray import RayExecutor

    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)  # the ray session installs the gym backend
    policy = Policy("Linear(4, 2)")
    rows = torch.zeros(3, policy.parameter_length)
    with RayExecutor(num_actors=1) as executor:  # Ray started here, and shut down
        result = evaluate(policy, env, rows, seed=0, executor=executor)
    assert torch.equal(result.steps, evaluate(policy, env, rows, seed=0).steps)
    env.close()


def check_evotorch() -> None:
    from evotorch.algorithms import PGPE

    from vecrl_evotorch import VecrlNE

    problem = VecrlNE(
        "gym::CartPole-v1", "Linear(obs_length, act_length)", num_envs=4, observation_normalization=True
    )
    PGPE(problem, popsize=4, center_learning_rate=0.1, stdev_learning_rate=0.1, stdev_init=0.1).step()
    assert problem.interaction_count == problem.obs_norm.count > 0
    problem.close()


CHECKS = {
    "vecrl-core": check_core,
    "vecrl-gym": check_gym,
    "vecrl-brax": check_brax,
    "vecrl-policy": check_policy,
    "vecrl-sb3": check_sb3,
    "vecrl-ray": check_ray,
    "vecrl-envpool": check_envpool,
    "vecrl-playground": check_playground,
    "vecrl-evotorch": check_evotorch,
}


def main(packages: list[str]) -> int:
    unknown = sorted(set(packages) - set(CHECKS))
    if unknown or not packages:
        print(
            f"usage: smoke_check.py PACKAGE...; packages: {', '.join(CHECKS)} (got {unknown})",
            file=sys.stderr,
        )
        return 2
    for tool in ("pytest", "hypothesis"):
        if importlib.util.find_spec(tool) is not None:
            print(f"smoke_check: {tool} is installed here; run this before any test tool.", file=sys.stderr)
            return 2
    for package in packages:
        CHECKS[package]()
        print(f"smoke_check: {package} imports and runs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
