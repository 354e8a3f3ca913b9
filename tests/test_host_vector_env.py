"""A backend written on ``vecrl.HostVectorEnv`` says only how to reset and step a set of its sub-envs, and
passes vecrl's whole conformance spec (``vecrl.testing``): modes, budgets, final observations, masked
resets, seeds, errors, close."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium.spaces import Box, Dict, Discrete, MultiBinary, Text, Tuple

import vecrl
from vecrl import testing
from vecrl.contract import Capabilities, EpisodeOptions
from vecrl.host_vector_env import HostVectorEnv


class RandomWalk(HostVectorEnv):
    """Each sub-env walks from a random start by +-1 and noise of its own random stream; an episode ends past
    +-3 (terminated) or after ``time_limit`` steps (truncated). Its info counts each sub-env's steps."""

    OBSERVATION_SPACE = Box(-np.inf, np.inf, (2,), np.float32)

    def __init__(
        self, num_envs: int, time_limit: int = 4, batch_size: int | None = None, **episode_options
    ) -> None:
        options = EpisodeOptions(**episode_options)
        space = self.OBSERVATION_SPACE
        super().__init__(num_envs, space, Discrete(2), episode_options=options, batch_size=batch_size)
        self.time_limit = time_limit
        self.rngs = [np.random.default_rng() for _ in range(num_envs)]
        self.position = np.zeros(num_envs, np.float32)
        self.time = np.zeros(num_envs, np.int64)
        self.stepped: list[list[int]] = []  # the sub-envs of each step_rows call

    def reset_rows(self, ids, seeds, options):
        ids = np.arange(self.num_envs) if ids is None else ids
        for k, i in enumerate(ids):
            if seeds is not None and seeds[k] is not None:
                self.rngs[i] = np.random.default_rng(seeds[k])
            self.position[i] = self.rngs[i].uniform(-1.0, 1.0)
            self.time[i] = 0
        return self._observe(ids), {"time": self.time[ids].copy()}

    def step_rows(self, actions, ids):
        ids = np.arange(self.num_envs) if ids is None else ids
        self.stepped.append(ids.tolist())
        for k, i in enumerate(ids):
            self._move(i, actions[k])
        terminated = np.abs(self.position[ids]) > 3.0
        truncated = ~terminated & (self.time[ids] >= self.time_limit)
        return (
            self._observe(ids),
            -np.abs(self.position[ids]),
            terminated,
            truncated,
            {"time": self.time[ids].copy()},
        )

    def _move(self, i, action):
        self.position[i] += 2.0 * action - 1.0 + self.rngs[i].normal(0.0, 0.1)
        self.time[i] += 1

    def _observe(self, ids):
        return np.stack([self.position[ids], self.time[ids].astype(np.float32)], axis=1)


class IntoWalk(RandomWalk):
    """The random walk writing each sub-env's results of a reset or step of some sub-envs straight into the
    engine's arrays (``reset_rows_into``, ``step_rows_into``), as vecrl-gym does."""

    def reset_rows_into(self, ids, seeds, options, out):
        observations, info = self.reset_rows(ids, seeds, options)
        for k, i in enumerate(ids.tolist()):
            out[i] = observations[k]
        return info

    def step_rows_into(self, actions, ids, out):
        observations, rewards, terminated, truncated = out
        self.stepped.append(ids.tolist())
        for k, i in enumerate(ids.tolist()):
            self._move(i, actions[k])
            observations[i] = self.position[i], self.time[i]
            rewards[i] = -abs(self.position[i])
            terminated[i] = abs(self.position[i]) > 3.0
            truncated[i] = not terminated[i] and self.time[i] >= self.time_limit
        return {"time": self.time[ids].copy()}


class DictWalk(RandomWalk):
    """The random walk observed as a Dict: the position, and a Tuple of the time and which side of 0 it is."""

    OBSERVATION_SPACE = Dict(
        {
            "position": Box(-np.inf, np.inf, (1,), np.float32),
            "clock": Tuple((Discrete(100), MultiBinary(1))),
        }
    )

    def _observe(self, ids):
        return {
            "position": self.position[ids, None].copy(),
            "clock": (self.time[ids].copy(), (self.position[ids, None] > 0).astype(np.int8)),
        }


WALKS = {"walk": RandomWalk, "dictwalk": DictWalk, "intowalk": IntoWalk}


@pytest.fixture(scope="module", params=list(WALKS))
def walk(request):
    walk_class = WALKS[request.param]
    registration = vecrl.register_backend(
        vecrl.Backend(
            request.param,
            make=lambda env_name, *, num_envs=None, **kwargs: walk_class(num_envs, **kwargs),
            keywords=("num_episodes", "autoreset_mode", "seed_rule", "batch_size"),
        )
    )
    yield testing.maker(request.param)
    registration.unregister()


def test_a_host_backend_passes_the_conformance_spec(walk):
    """With array observations, and with Dict observations of nested leaves (tuples and dicts of arrays)."""
    testing.check_backend(walk, "Walk", num_envs=3)
    testing.check_autoreset_modes(walk, "Walk", num_envs=3, num_steps=12)
    testing.check_seed_lists(walk, "Walk", num_envs=3)


def test_next_step_resets_the_ended_sub_envs_itself_and_reports_their_reset_info():
    env = RandomWalk(3, time_limit=2, autoreset_mode="next_step")
    env.reset(seed=0)
    env.step(np.ones(3, np.int64))
    _, _, terminated, truncated, _ = env.step(np.ones(3, np.int64))
    assert (terminated | truncated).all()  # every episode ends by its time limit
    observation, reward, terminated, truncated, info = env.step(np.array([1, 7, 1]))  # (7 is ignored)
    assert not (terminated | truncated).any() and (reward == 0).all() and reward.dtype == np.float64
    assert (info["time"] == 0).all() and (observation[:, 1] == 0).all()
    assert len(env.stepped) == 2  # the reset step stepped no sub-env


def test_spent_sub_envs_are_not_stepped_and_report_nan_rows():
    env = RandomWalk(3, time_limit=2, num_episodes=1)
    env.reset(seed=1)
    for _ in range(3):
        observation, reward, terminated, truncated, info = env.step(np.zeros(3, np.int64))
    assert len(env.stepped) == 2  # the third step had no live sub-env to step
    assert np.isnan(observation).all() and np.isnan(reward).all() and terminated.all() and truncated.all()
    env.reset(options={"reset_mask": np.array([False, True, False])})
    env.step(np.zeros(3, np.int64))
    assert env.stepped[-1] == [1]


def test_a_masked_reset_keeps_the_other_rows_and_widens_their_info():
    env = RandomWalk(3, autoreset_mode="disabled")
    first, _ = env.reset(seed=2)
    observation, info = env.reset(
        seed=[None, 9, None], options={"reset_mask": torch.tensor([False, True, False])}
    )
    again, _ = RandomWalk(1).reset(seed=[9])
    assert (observation[[0, 2]] == first[[0, 2]]).all() and (observation[1] == again[0]).all()
    assert info["time"].shape == (3,)


def test_nested_observations_keep_their_untouched_rows_and_report_spent_ones_in_every_leaf():
    env = DictWalk(3, time_limit=2, num_episodes=1)
    first, _ = env.reset(seed=3)
    again, _ = env.reset(seed=[None, 5, None], options={"reset_mask": np.array([False, True, False])})
    assert (again["position"][[0, 2]] == first["position"][[0, 2]]).all()
    assert (again["position"][1] == DictWalk(1).reset(seed=[5])[0]["position"][0]).all()
    for _ in range(3):
        observation, reward, terminated, truncated, info = env.step(np.zeros(3, np.int64))
    assert np.isnan(observation["position"]).all() and np.isnan(reward).all() and terminated.all()
    assert (observation["clock"][0] == 0).all() and (observation["clock"][1] == 0).all()  # integer leaves


def final_info_of(info, index):
    """Sub-env ``index``'s final info, in either of gymnasium's layouts (``vecrl.final_observations``)."""
    finals = info["final_info"]
    if isinstance(finals, dict):  # gymnasium >= 1.1: batched, with a mask per key
        keys = [key for key in finals if not key.startswith("_")]
        return {key: finals[key][index] for key in keys if finals[f"_{key}"][index]}
    return finals[index]  # before: an object array of dicts


def test_same_step_gives_final_infos_as_gymnasium_does_and_the_reset_info_in_the_rows():
    env = RandomWalk(3, time_limit=2)
    env.reset(seed=5)
    env.step(np.ones(3, np.int64))
    _, _, terminated, truncated, info = env.step(np.ones(3, np.int64))
    ended = terminated | truncated
    assert ended.all() and info["_final_info"].tolist() == ended.tolist()
    assert [final_info_of(info, i)["time"] for i in range(3)] == [2, 2, 2]  # the episodes' last infos
    assert info["time"].tolist() == [0, 0, 0]  # the restarted sub-envs' reset infos
    _, _, terminated, truncated, info = env.step(np.ones(3, np.int64))
    assert not (terminated | truncated).any() and "final_info" not in info


def test_same_step_restarts_nested_observations_and_keeps_the_finals_nested():
    env = DictWalk(2, time_limit=1)
    env.reset(seed=4)
    observation, _, _, truncated, info = env.step(np.zeros(2, np.int64))
    assert truncated.all()  # every episode ends by its time limit, and restarts
    assert (observation["clock"][0] == 0).all() and (
        info["final_obs" if "final_obs" in info else "final_observation"]["clock"][0] == 1
    ).all()


def test_observation_spaces_no_array_can_hold_are_refused():
    class TextWalk(HostVectorEnv):
        def __init__(self):
            super().__init__(2, Text(5), Discrete(2))

    with pytest.raises(TypeError, match="Text"):
        TextWalk()


class ListInfoWalk(RandomWalk):
    """The random walk giving one info dict per sub-env, as gymnasium's envs do (``infos_per_sub_env``)."""

    capabilities = Capabilities(infos_per_sub_env=True)

    def reset_rows(self, ids, seeds, options):
        observation, info = super().reset_rows(ids, seeds, options)
        return observation, [{"time": int(time)} for time in info["time"]]

    def step_rows(self, actions, ids):
        *results, info = super().step_rows(actions, ids)
        return (*results, [{"time": int(time)} for time in info["time"]])


@pytest.mark.parametrize("options", [{}, {"num_episodes": 2}], ids=["forever", "budget"])
def test_per_sub_env_infos_are_batched_as_the_batched_infos_of_the_same_steps(options):
    batched, listed = RandomWalk(3, time_limit=2, **options), ListInfoWalk(3, time_limit=2, **options)
    _, info = batched.reset(seed=6)
    assert listed.reset(seed=6)[1]["time"].tolist() == info["time"].tolist()
    for _ in range(5):
        *results, info = batched.step(np.ones(3, np.int64))
        *listed_results, listed_info = listed.step(np.ones(3, np.int64))
        for result, listed_result in zip(results, listed_results, strict=True):
            np.testing.assert_array_equal(result, listed_result)
        live = ~np.isnan(results[1])
        if not live.any():  # every budget spent: no sub-env stepped, so neither has infos
            assert info == listed_info == {}
            continue
        assert listed_info["time"][live].tolist() == info["time"][live].tolist()
        assert listed_info["_time"].tolist() == live.tolist()  # gymnasium's mask: the sub-envs with an info
        if "final_info" in info:
            assert listed_info["_final_info"].tolist() == info["_final_info"].tolist()
            for index in np.flatnonzero(info["_final_info"]):
                assert final_info_of(listed_info, index) == {"time": final_info_of(info, index)["time"]}


class FailingWalk(RandomWalk):
    """The random walk whose step raises once ``fail`` is set, after moving some sub-envs on."""

    fail = False

    def step_rows(self, actions, ids):
        results = super().step_rows(actions, ids)
        if self.fail:
            raise ValueError("the simulator diverged")
        return results


@pytest.mark.parametrize("mode", ["same_step", "next_step"])
def test_a_backend_writing_into_the_engines_arrays_steps_as_one_returning_its_own(mode):
    """``reset_rows_into`` and ``step_rows_into`` (restarts, masked resets, every step of a budget once a
    sub-env is spent, next_step's resets) change nothing seen."""
    returned = RandomWalk(4, time_limit=6, num_episodes=2, autoreset_mode=mode)
    written = IntoWalk(4, time_limit=6, num_episodes=2, autoreset_mode=mode)
    returned.reset(seed=3), written.reset(seed=3)
    for _ in range(14):
        action = np.array([1, 0, 1, 1])
        *results, info = returned.step(action)
        *written_results, written_info = written.step(action)
        for result, written_result in zip(results, written_results, strict=True):
            np.testing.assert_array_equal(result, written_result)
        assert info.keys() == written_info.keys()
        for key in ("time", "_time"):
            np.testing.assert_array_equal(info.get(key), written_info.get(key))
        np.testing.assert_array_equal(info.get("final_obs"), written_info.get("final_obs"))
    assert written.stepped == returned.stepped
    assert any(len(ids) < 4 for ids in written.stepped)  # steps of some sub-envs happened
    mask = {"reset_mask": np.array([False, True, False, True])}
    for result, written_result in zip(returned.reset(options=mask), written.reset(options=mask), strict=True):
        np.testing.assert_equal(result, written_result)


def test_a_step_that_raised_is_refused_until_a_full_reset():
    env = FailingWalk(3)
    env.reset(seed=7)
    env.fail = True
    with pytest.raises(ValueError, match="the simulator diverged"):
        env.step(np.ones(3, np.int64))
    env.fail = False
    with pytest.raises(RuntimeError, match=r"step\(\) refused: FailingWalk.step\(\) raised ValueError"):
        env.step(np.ones(3, np.int64))  # some sub-envs moved on: the batch is out of step
    with pytest.raises(RuntimeError, match="without a reset_mask"):
        env.reset(options={"reset_mask": np.array([True, False, False])})
    env.reset()
    env.step(np.ones(3, np.int64))


def test_a_backend_written_to_the_old_contract_is_told_how_to_declare_its_capabilities():
    with pytest.raises(TypeError, match=r"capabilities = vecrl.Capabilities\(steps_reset_next=True\)"):

        class OldWalk(RandomWalk):
            steps_reset_next = True


def test_episode_options_are_checked_when_made_and_must_be_an_episode_options_value():
    with pytest.raises(ValueError, match="cannot be combined with autoreset_mode='disabled'"):
        EpisodeOptions(num_episodes=2, autoreset_mode="disabled")
    with pytest.raises(ValueError, match="seed_rule='numpy' is not a seed rule"):
        EpisodeOptions(seed_rule="numpy")
    with pytest.raises(
        TypeError, match="episode_options must be a vecrl.EpisodeOptions, got {'num_episodes': 1}"
    ):
        HostVectorEnv(2, RandomWalk.OBSERVATION_SPACE, Discrete(2), episode_options={"num_episodes": 1})
    env = RandomWalk(2, num_episodes=3, autoreset_mode="next_step", seed_rule="gymnasium")
    assert env.episode_options == EpisodeOptions(3, "next_step", "gymnasium")
    assert (env.num_episodes, env.seed_rule) == (3, "gymnasium")


def test_a_backend_written_with_the_hooks_old_private_names_still_runs_warned():
    """The hooks became public names (reset_rows, step_rows, ...): a backend written before keeps working
    for a release, each old name taken as its new one with a DeprecationWarning naming both."""
    with pytest.warns(DeprecationWarning) as warned:

        class OldNames(HostVectorEnv):
            def __init__(self, num_envs):
                super().__init__(num_envs, RandomWalk.OBSERVATION_SPACE, Discrete(2))
                self.walk = RandomWalk(num_envs)

            def _reset_rows(self, ids, seeds, options):
                return self.walk.reset_rows(ids, seeds, options)

            def _step_rows(self, actions, ids):
                if self._empty_info:
                    raise AssertionError("made without empty_info")
                return self.walk.step_rows(actions, ids)

    messages = [str(w.message) for w in warned]
    assert len(messages) == 2, messages
    for old, new in (("_reset_rows", "reset_rows"), ("_step_rows", "step_rows")):
        assert any(
            f"OldNames.{old} is the old name of HostVectorEnv's hook {new}: rename it" in m for m in messages
        )
    old, new = OldNames(3), RandomWalk(3)
    for env in (old, new):
        env.reset(seed=[1, 2, 3])
    with pytest.warns(DeprecationWarning, match="_empty_info is now empty_info"):
        for _ in range(6):
            for result, expected in zip(
                old.step(np.array([1, 0, 1]))[:4], new.step(np.array([1, 0, 1]))[:4], strict=True
            ):
                np.testing.assert_array_equal(result, expected)
    with pytest.warns(DeprecationWarning, match="_failure is now failure"):
        assert old._failure is None


def test_any_host_backend_gets_async_batches_whose_trajectories_are_lockstep_s(walk):
    """The engine's async batches (vecrl.gathered_batches): the conformance check, then its mistakes."""
    testing.check_async(walk, "Walk", num_envs=4, batch_size=2)
    env = RandomWalk(4, batch_size=2)
    env.async_reset(seed=0)
    observation, reward, terminated, truncated, info = env.recv()
    assert (
        info["env_id"].tolist() == [0, 1] and info["time"].tolist() == [0, 0] and observation.shape == (2, 2)
    )
    with pytest.raises(ValueError, match=r"send\(\) got env_id \[2, 3\], which is no batch received"):
        env.send(np.zeros(2, np.int64), [2, 3])
    with pytest.raises(ValueError, match=r"send\(\) got actions for 3 sub-envs, for a batch of 2"):
        env.send(np.zeros(3, np.int64), [0, 1])
    env.send(np.zeros(2, np.int64), [0, 1])
    env.recv()
    with pytest.raises(RuntimeError, match=r"recv\(\) has no batch to hand out"):
        env.recv()
    with pytest.raises(ValueError):  # a bad action: nothing stepped, and the batch may send again
        env.send(np.array([5, 5]), [2, 3])
    env.send(np.ones(2, np.int64), [2, 3])
    assert env.recv()[-1]["time"].tolist() == [1, 1]
    with pytest.raises(ValueError, match="batch_size must be an int that divides num_envs=4"):
        RandomWalk(4, batch_size=3)
    with pytest.raises(
        AttributeError, match=r"recv\(\) steps async batches of sub-envs, which RandomWalk was made"
    ):
        RandomWalk(4).recv()
    env.close()
    with pytest.raises(RuntimeError):
        env.recv()
