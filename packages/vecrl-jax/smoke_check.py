"""vecrl-jax imports and runs in an env holding only it and its dependencies (tests/smoke_check.py runs it)."""


def check() -> None:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from gymnasium.spaces import Box

    from vecrl_jax import JaxVectorEnv, Outcome

    class Drift:
        action_space = Box(-1.0, 1.0, (1,), np.float32)

        def reset(self, keys):
            return jax.vmap(lambda key: jax.random.uniform(key, (1,)))(keys)

        def step(self, state, action):
            return state + action

        def outcome(self, state):
            over = state[:, 0] > 1.0
            return Outcome(state, -state[:, 0], over, jnp.zeros_like(over))

    class DriftEnvs(JaxVectorEnv):
        @staticmethod
        def make_env(env_name, kwargs):
            return Drift()

    env = DriftEnvs("drift", num_envs=2)
    env.reset(seed=0)
    assert np.asarray(env.step(np.ones((2, 1), np.float32))[2]).all()
    env.close()
