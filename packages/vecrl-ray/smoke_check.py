"""vecrl-ray imports and runs in an env holding only it and its dependencies (tests/smoke_check.py runs it)."""


def check() -> None:
    import torch

    import vecrl
    from vecrl_evaluate import evaluate
    from vecrl_policy import Policy
    from vecrl_ray import RayExecutor

    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)  # the ray session installs the gym backend
    policy = Policy("Linear(4, 2)")
    rows = torch.zeros(3, policy.parameter_length)
    with RayExecutor(num_actors=1) as executor:  # Ray started here, and shut down
        result = evaluate(policy, env, rows, seed=0, executor=executor)
    assert torch.equal(result.steps, evaluate(policy, env, rows, seed=0).steps)
    env.close()
