"""evaluate refuses what would give a silent wrong score, and says how to fix it: broken parameter rows,
networks that are not scored alike on every call, seeds and worker counts that mean something else."""

from __future__ import annotations

import functools
import threading

import gymnasium
import numpy as np
import pytest
import torch

import vecrl
from vecrl.testing import no_process_left
from vecrl_evaluate import evaluate
from vecrl_policy import Policy


@pytest.fixture(scope="module")
def env():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4)
    yield env
    env.close()


def rows(policy: Policy, count: int = 4) -> torch.Tensor:
    return torch.randn(count, policy.parameter_length, generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_rows_with_nan_or_inf_parameters_are_refused_by_number(env, bad):
    policy = Policy("Linear(4, 2)")
    parameters = rows(policy, 12)
    parameters[3, 0] = bad
    parameters[10] = bad
    with pytest.raises(ValueError, match=r"Parameter rows 3, 10 hold NaN or inf"):
        evaluate(policy, env, parameters, seed=0)


def test_rows_of_huge_finite_parameters_are_not_refused(env):
    """A row whose sum overflows to inf holds only finite values: evaluate() runs it."""
    policy = Policy("Linear(4, 2)")
    parameters = rows(policy, 3)
    parameters[1] = 3e38
    result = evaluate(policy, env, parameters, seed=0)
    assert result.episodes.tolist() == [1, 1, 1]


def test_a_population_on_the_meta_device_is_refused(env):
    policy = Policy("Linear(4, 2)")
    with pytest.raises(ValueError, match="meta device, which holds shapes but no values"):
        evaluate(policy, env, torch.zeros(4, policy.parameter_length, device="meta"))


def test_dropout_is_off_so_a_seed_gives_one_score(env):
    policy = Policy("Linear(4, 16) >> Dropout(0.5) >> Linear(16, 2)")
    parameters = rows(policy, 8)
    first = evaluate(policy, env, parameters, seed=3)
    assert torch.equal(evaluate(policy, env, parameters, seed=3).total_return, first.total_return)
    assert not policy.wrapped_module.training


def test_batch_norm_is_refused_with_what_to_use_instead(env):
    policy = Policy("Linear(4, 8) >> BatchNorm1d(8) >> Linear(8, 2)")
    with pytest.raises(ValueError, match=r"holds BatchNorm1d.*obs_norm=vecrl_policy.ObsNorm\(\)"):
        evaluate(policy, env, rows(policy))


@pytest.mark.parametrize("policy", [None, torch.nn.Linear(4, 2), "Linear(4, 2)"])
def test_something_that_is_not_a_policy_is_refused(env, policy):
    with pytest.raises(TypeError, match="evaluate\\(\\) takes a vecrl_policy.Policy"):
        evaluate(policy, env, torch.zeros(4, 10))


@pytest.mark.parametrize(
    ("seed", "message"),
    [
        ("3", "seed must be None or an int >= 0, got '3'"),
        (-1, "seed must be None or an int >= 0"),
        (True, "seed must be None or an int >= 0"),
    ],
)
def test_bad_seeds_are_refused_naming_the_seed_given(env, seed, message):
    policy = Policy("Linear(4, 2)")
    with pytest.raises(ValueError, match=message):
        evaluate(policy, env, rows(policy, 8), seed=seed)


def test_a_seed_of_any_size_is_taken(env):
    policy = Policy("Linear(4, 2)")  # each row's reset seed is drawn from it (row_seeds), below 2**31 - 1
    evaluate(policy, env, rows(policy, 8), seed=2**70)


@pytest.mark.parametrize("num_workers", [True, 0, 1.5, "2"])
def test_num_workers_that_is_not_a_count_is_refused(env, num_workers):
    policy = Policy("Linear(4, 2)")
    with pytest.raises(ValueError, match="num_workers must be None or a positive int"):
        evaluate(policy, env, rows(policy), num_workers=num_workers)


def test_no_more_worker_processes_start_than_there_are_rows():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4)
    policy = Policy("Linear(4, 2)")
    parameters = rows(policy, 2)
    with no_process_left():
        try:
            expected = evaluate(policy, env, parameters, seed=1)
            result = evaluate(policy, env, parameters, seed=1, num_workers=6)
            assert env.__dict__["_evaluation_workers"].num_parts == 2  # this process and one worker
        finally:
            env.close()
    assert torch.equal(result.steps, expected.steps)


def test_a_bfloat16_population_runs_in_worker_processes_as_here():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4, num_episodes=1)
    policy = Policy("Linear(4, 2)")
    parameters = rows(policy, 6).to(torch.bfloat16)
    with no_process_left():
        try:
            expected = evaluate(policy, env, parameters, seed=1)
            result = evaluate(policy, env, parameters, seed=1, num_workers=2)
        finally:
            env.close()
    assert torch.equal(result.total_return, expected.total_return)


class _Locked(torch.nn.Module):
    """A network holding a lock: it does not pickle."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 2)
        self.lock = threading.Lock()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


def test_what_cannot_reach_worker_processes_is_named():
    lock = threading.Lock()
    locked_env = vecrl.make_vector_env(
        "gym::CartPole-v1", num_envs=2, wrappers=[lambda sub_env: (lock, sub_env)[1]]
    )
    plain_env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    policy = Policy("Linear(4, 2)")
    with no_process_left():
        try:
            with pytest.raises(
                TypeError,
                match=r"the env \(the arguments of make_vector_env.*cannot be sent"
                r" to evaluation worker processes.*_thread.lock",
            ):
                evaluate(policy, locked_env, rows(policy), num_workers=2)
            locked = Policy(_Locked())
            with pytest.raises(TypeError, match=r"the policy \(Policy\(_Locked.*cannot be sent"):
                evaluate(locked, plain_env, rows(locked), num_workers=2)
            evaluate(policy, plain_env, rows(policy), num_workers=2)  # the workers still serve a good call
        finally:
            locked_env.close()
            plain_env.close()


def test_an_action_space_evaluate_cannot_act_in_is_refused_before_any_step():
    import gymnasium

    class TwoSwitches(gymnasium.ActionWrapper):
        def __init__(self, env):
            super().__init__(env)
            self.action_space = gymnasium.spaces.MultiDiscrete([2, 2])

        def action(self, action):
            return int(action[0])

    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, wrappers=[TwoSwitches])
    policy = Policy("Linear(4, 2)")
    with pytest.raises(
        ValueError, match=r"this env's actions are MultiDiscrete\(\[2 2\]\). Wrap each sub-env"
    ):
        evaluate(policy, env, rows(policy))  # (the env refused the network's float outputs at its first step)
    env.close()


def test_a_closed_env_is_refused_before_any_worker_starts():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    env.close()
    policy = Policy("Linear(4, 2)")
    with (
        no_process_left(),
        pytest.raises(RuntimeError, match="evaluate\\(\\) was called on .*, which is closed"),
    ):
        evaluate(policy, env, rows(policy), num_workers=2)  # (workers started and scored it before)


class BlowsUp(gymnasium.Wrapper):
    """A sub-env whose observation turns ``bad`` (NaN or inf) at its third step; its episodes end at the fifth."""

    def __init__(self, env: gymnasium.Env, bad: float) -> None:
        super().__init__(env)
        self.bad, self.t = bad, 0

    def reset(self, **kwargs):
        self.t = 0
        return self.env.reset(**kwargs)

    def step(self, action):
        self.t += 1
        observation, reward, terminated, truncated, info = self.env.step(action)
        if self.t == 3:
            observation = np.array([self.bad, 0.0, 0.0, 0.0], np.float32)
        return observation, reward, self.t >= 5, truncated, info


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_an_observation_that_stops_being_finite_is_an_error_naming_its_row(bad):
    env = vecrl.make_vector_env(
        "gym::CartPole-v1", num_envs=2, wrappers=[functools.partial(BlowsUp, bad=bad)]
    )
    policy = Policy("Linear(4, 2)")
    with pytest.raises(vecrl.SubEnvError, match=r"Population row \d \(on sub-env \d .*NaN or inf"):
        evaluate(policy, env, rows(policy), seed=0)  # (it was scored 5.0, the NaN read as 0)
    env.close()


def test_an_env_changed_after_it_was_made_is_not_made_again_elsewhere_silently():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4)
    env.set_attr("force_mag", 40.0)
    policy = Policy("Linear(4, 2)")
    with no_process_left(), pytest.raises(ValueError, match=r"set_attr\('force_mag'.*worker processes"):
        evaluate(policy, env, rows(policy), num_workers=2)  # (10 of 13 rows scored the unchanged env)
    evaluate(policy, env, rows(policy))  # in this process, the changed env is the one stepped
    env.close()


def test_gymnasium_s_numpy_wrappers_around_a_torch_env_are_one_error_naming_vector_wrappers():
    env = gymnasium.wrappers.vector.RecordEpisodeStatistics(
        vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    )
    policy = Policy("Linear(4, 2)")
    with pytest.raises(
        TypeError, match=r"evaluate\(\) got gymnasium's RecordEpisodeStatistics .*vector_wrappers="
    ):
        evaluate(policy, env, torch.zeros(2, policy.parameter_length))
