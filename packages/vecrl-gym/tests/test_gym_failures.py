"""A failing sub-env is named and nothing is half-applied; the mistakes a new user makes get vecrl's errors."""

import pickle

import gymnasium as gym
import numpy as np
import pytest
import torch

import vecrl
from vecrl.checks import SubEnvError
from vecrl_gym import SyncVectorEnv


class CountingEnv(gym.Wrapper):
    """CartPole that counts its steps and raises on the ``fail_at``-th step (or reset, with ``on="reset"``)."""

    def __init__(self, fail_at=None, on="step"):
        super().__init__(gym.make("CartPole-v1"))
        self.steps, self.resets, self.fail_at, self.on = 0, 0, fail_at, on

    def step(self, action):
        self.steps += 1
        if self.on == "step" and self.steps == self.fail_at:
            raise ValueError("the simulator diverged")
        return self.env.step(action)

    def reset(self, **kwargs):
        self.resets += 1
        if self.on == "reset" and self.resets == self.fail_at:
            raise ValueError("the simulator diverged")
        return self.env.reset(**kwargs)


def counting_env(num_envs, failing=None, **kwargs):
    """num_envs CountingEnvs; the last one fails as ``failing`` (a dict of CountingEnv's arguments) says."""
    makers = [CountingEnv] * (num_envs - 1) + [lambda: CountingEnv(**(failing or {}))]
    return SyncVectorEnv(makers, **kwargs)


def step_counts(env):
    return [sub_env.steps for sub_env in env.envs]


@pytest.mark.parametrize("mode", ["same_step", "next_step", "disabled"])
def test_a_sub_env_that_raises_is_named_and_the_env_refuses_to_step_until_reset(mode):
    env = counting_env(4, {"fail_at": 3}, autoreset_mode=mode)
    env.reset(seed=0)
    actions = np.zeros(4, np.int64)
    env.step(actions)
    env.step(actions)
    with pytest.raises(
        SubEnvError, match=r"Sub-env 3 raised ValueError in step\(\): the simulator diverged"
    ) as caught:
        env.step(actions)
    assert caught.value.index == 3 and isinstance(caught.value.__cause__, ValueError)
    with pytest.raises(RuntimeError, match=r"step\(\) refused: sub-env 3 raised ValueError"):
        env.step(actions)
    assert step_counts(env) == [3, 3, 3, 3]  # the refused step stepped nobody
    with pytest.raises(RuntimeError, match="without a reset_mask"):
        env.reset(options={"reset_mask": np.array([False, False, False, True])})
    env.reset(seed=1)
    env.step(actions)
    assert step_counts(env) == [4, 4, 4, 4]


def test_a_sub_env_that_raises_inside_its_autoreset_is_named():
    env = counting_env(3, {"fail_at": 2, "on": "reset"}, num_episodes=2)
    env.reset(seed=0)
    with pytest.raises(SubEnvError, match=r"Sub-env 2 raised ValueError in step\(\)") as caught:
        for _ in range(500):  # the first episode end of sub-env 2 autoresets it
            env.step(np.ones(3, np.int64))
    assert "diverged" in str(caught.value.__cause__)
    with pytest.raises(RuntimeError, match="refused"):
        env.step(np.ones(3, np.int64))


def test_a_sub_env_that_raises_in_reset_is_named_and_a_full_reset_recovers():
    env = counting_env(3, {"fail_at": 1, "on": "reset"})
    with pytest.raises(SubEnvError, match=r"Sub-env 2 raised ValueError in reset\(\)"):
        env.reset(seed=0)
    env.reset(seed=0)  # the sub-env resets fine the second time
    assert env.step(np.zeros(3, np.int64))[1].tolist() == [1.0, 1.0, 1.0]


def test_an_out_of_range_action_in_the_last_row_steps_no_sub_env():
    env = counting_env(4)
    env.reset(seed=0)
    with pytest.raises(
        ValueError, match=r"expected actions in \[0, 1\].*sub-envs \[3\] are \[2\].*No sub-env"
    ):
        env.step(np.array([0, 1, 0, 2]))
    with pytest.raises(ValueError, match=r"sub-envs \[0\] are \[-1\]"):
        env.step(torch.tensor([-1, 0, 0, 0]))
    assert step_counts(env) == [0, 0, 0, 0]
    env.step(np.array([0, 1, 0, 1]))  # the env is still usable: nothing was half-applied
    assert step_counts(env) == [1, 1, 1, 1]


def test_discrete_start_sets_the_action_range():
    env = SyncVectorEnv([lambda: gym.make("FrozenLake-v1")] * 2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"expected actions in \[0, 3\]"):
        env.step(np.array([4, 0]))


def test_bool_actions_for_a_discrete_space_are_refused():
    env = counting_env(2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="integer actions.*dtype bool"):
        env.step(np.array([True, False]))
    with pytest.raises(ValueError, match="integer actions.*dtype bool"):
        env.step(torch.tensor([True, False]))


def test_step_and_reset_after_close_raise_and_close_is_idempotent():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    env.reset(seed=0)
    env.close()
    env.close()
    with pytest.raises(RuntimeError, match=r"step\(\) was called on .* which is closed"):
        env.step(torch.zeros(2, dtype=torch.long))
    with pytest.raises(RuntimeError, match=r"reset\(\) was called on .* which is closed"):
        env.reset()
    inner = counting_env(2)
    inner.close()
    with pytest.raises(RuntimeError, match="closed"):
        inner.step(np.zeros(2, np.int64))
    with pytest.raises(RuntimeError, match="closed"):
        inner.reset()


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a torch without CUDA")
def test_an_unusable_device_fails_at_construction():
    with pytest.raises(ValueError, match=r"device='cuda' cannot be used by this torch .*Use device='cpu'"):
        vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, device="cuda")
    with pytest.raises(ValueError, match="not a torch device"):
        vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, device="gpu0")


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("empty_info", "no"),
        ("force_classic_api", "yes"),
        ("clip_actions", 1),
        ("discrete_to_continuous_act", "False"),
    ],
)
def test_options_must_be_bools(option, value):
    with pytest.raises(TypeError, match=f"{option} must be True or False, but got {value!r}"):
        vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, **{option: value})


@pytest.mark.parametrize("num_envs", [10**12, 10**8])
def test_a_num_envs_that_cannot_fit_fails_at_once_with_the_size_it_needs(num_envs):
    with pytest.raises(MemoryError, match=rf"num_envs={num_envs:,} would need about .* available"):
        vecrl.make_vector_env("gym::CartPole-v1", num_envs=num_envs)


def test_scores_for_discrete_to_continuous_act_need_one_column_per_action():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=3, discrete_to_continuous_act=True)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"2 columns for Discrete\(2\).*shape \(3, 3\)"):
        env.step(torch.zeros(3, 3))
    assert env.step(torch.tensor([[0.0, 1.0]] * 3))[1].tolist() == [1.0] * 3


def test_one_colon_after_a_prefix_gets_a_hint():
    with pytest.raises(ValueError, match="did you mean 'gym::CartPole-v1'"):
        vecrl.make_vector_env("gym:CartPole-v1", num_envs=2)


def test_a_gym_vector_env_pickles_and_steps_on():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=3)
    env.reset(seed=0)
    copy = pickle.loads(pickle.dumps(env))
    actions = torch.tensor([0, 1, 1])
    for _ in range(5):
        assert torch.equal(env.step(actions)[0], copy.step(actions)[0])


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_a_non_finite_box_action_steps_no_sub_env(bad):
    env = SyncVectorEnv([lambda: gym.make("Pendulum-v1")] * 3)
    before, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match=r"non-finite values \(NaN or inf\) for sub-envs \[1\].*No sub-env"):
        env.step(torch.tensor([[0.0], [bad], [0.0]]))
    after, *_ = env.step(np.zeros((3, 1), np.float32))  # nothing was half-applied: one step from the reset
    again = SyncVectorEnv([lambda: gym.make("Pendulum-v1")] * 3)
    again.reset(seed=0)
    assert np.array_equal(after, again.step(np.zeros((3, 1), np.float32))[0])


@pytest.mark.parametrize("mode", ["same_step", "next_step"])
def test_the_nan_actions_of_spent_sub_envs_are_ignored(mode):
    # a policy turns a spent sub-env's NaN observation into NaN actions: those rows do not step
    env = SyncVectorEnv(
        [lambda: gym.make("Pendulum-v1", max_episode_steps=3)] * 2, num_episodes=1, autoreset_mode=mode
    )
    env.reset(seed=0)
    for _ in range(3):
        env.step(np.zeros((2, 1), np.float32))
    _, reward, terminated, truncated, _ = env.step(np.full((2, 1), np.nan, np.float32))
    assert np.isnan(reward).all() and terminated.all() and truncated.all()


def test_the_ignored_action_of_a_next_step_reset_is_not_checked():
    # gymnasium ignores the action of a sub-env that the step resets; so does the check
    env = SyncVectorEnv(
        [lambda: gym.make("CartPole-v1", max_episode_steps=2)] * 2, autoreset_mode="next_step"
    )
    env.reset(seed=0)
    env.step(np.zeros(2, np.int64))
    _, _, _, truncated, _ = env.step(np.zeros(2, np.int64))
    assert truncated.all()
    _, reward, *_ = env.step(np.array([7, -1]))  # both reset: the actions are ignored
    assert reward.tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match=r"sub-envs \[1\] are \[7\]"):
        env.step(np.array([0, 7]))


def test_a_meta_tensor_action_says_it_has_no_values():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="meta device has no values"):
        env.step(torch.zeros(2, dtype=torch.int64, device="meta"))


def test_a_maker_that_returns_no_env_is_named():
    with pytest.raises(
        TypeError, match=r"env_makers\[0\] .* returned 3 of type int, which is not an environment"
    ):
        SyncVectorEnv([lambda: 3, lambda: 3])


def test_makers_that_return_one_shared_env_are_refused():
    shared = gym.make("CartPole-v1")
    with pytest.raises(ValueError, match=r"env_makers\[0\] and env_makers\[1\] returned the same env object"):
        SyncVectorEnv([lambda: shared] * 3)
    # two wrappers of one env (stable-baselines3's [lambda: Monitor(env)] * 2): that env stepped twice a step
    with pytest.raises(ValueError, match=r"or wrappers of one env: their .unwrapped is the same"):
        SyncVectorEnv([lambda: gym.wrappers.RecordEpisodeStatistics(shared)] * 2)


class _OwnSpace(gym.Space):
    """A space of the user's own: gymnasium batches it as a tuple of samples."""

    def sample(self, mask=None, probability=None):
        return 0

    def contains(self, x):
        return True


class _OwnSpaceEnv(gym.Env):
    observation_space = _OwnSpace()
    action_space = gym.spaces.Discrete(2)


@pytest.mark.parametrize("num_envs", [2, 3])  # from 3 on, the memory check runs before the space check
def test_a_space_vecrl_cannot_batch_is_its_type_error_whatever_the_number_of_sub_envs(num_envs):
    with pytest.raises(TypeError, match="The observation space is .* a _OwnSpace space"):
        SyncVectorEnv([_OwnSpaceEnv] * num_envs)
