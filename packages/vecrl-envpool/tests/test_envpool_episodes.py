"""EnvpoolVectorEnv against raw envpool: the same trajectories, with vecrl's autoreset, budgets and seeding."""

import pickle

import envpool
import numpy as np
import pytest
import torch

from vecrl.compat import FINAL_OBS_KEY
from vecrl.seeding import sub_env_seeds
from vecrl_envpool import EnvpoolVectorEnv, make_envpool_env
from vecrl_envpool.vector_env import SEED_MODULUS

NUM_ENVS = 4


def raw_pool(env_id, seed, **kwargs):
    return envpool.make(env_id, env_type="gymnasium", num_envs=NUM_ENVS, seed=seed, **kwargs)


def random_actions(env, steps, seed=0):
    space = env.single_action_space
    space.seed(seed)
    return [np.stack([space.sample() for _ in range(NUM_ENVS)]) for _ in range(steps)]


@pytest.mark.parametrize(
    ("env_id", "kwargs"), [("CartPole-v1", {}), ("Hopper-v5", {"max_episode_steps": 30})]
)
def test_next_step_mode_gives_raw_envpools_trajectories(env_id, kwargs):
    env = EnvpoolVectorEnv(env_id, num_envs=NUM_ENVS, autoreset_mode="next_step", **kwargs)
    raw = raw_pool(env_id, seed=5, **kwargs)
    obs, _ = env.reset(seed=5)
    raw_obs, _ = raw.reset()
    np.testing.assert_array_equal(obs, raw_obs)
    ends = 0
    for action in random_actions(env, 80):
        ours, theirs = env.step(action), raw.step(action)
        for a, b in zip(ours[:4], theirs[:4], strict=True):
            np.testing.assert_array_equal(a, b)
        ends += int((ours[2] | ours[3]).sum())
    assert ends > 0
    env.close()


@pytest.mark.parametrize(
    ("env_id", "kwargs"), [("CartPole-v1", {}), ("Hopper-v5", {"max_episode_steps": 30})]
)
def test_same_step_mode_resets_in_the_step_and_keeps_the_final_observation(env_id, kwargs):
    """Each episode starts where raw envpool's next-step reset starts it; the last observation is in info."""
    env = EnvpoolVectorEnv(env_id, num_envs=NUM_ENVS, **kwargs)
    raw = raw_pool(env_id, seed=5, **kwargs)
    env.reset(seed=5)
    raw.reset()
    actions = random_actions(env, 200)
    raw_step = iter(actions)
    ends = 0
    for action in actions[:80]:
        obs, reward, terminated, truncated, info = env.step(action)
        raw_obs, raw_reward, raw_terminated, raw_truncated, raw_info = raw.step(next(raw_step))
        ended = terminated | truncated
        np.testing.assert_array_equal(ended, raw_terminated | raw_truncated)
        np.testing.assert_array_equal(reward, raw_reward)
        np.testing.assert_array_equal(obs[~ended], raw_obs[~ended])
        assert (FINAL_OBS_KEY in info) == ended.any()  # as gymnasium's same-step vector envs give it
        if ended.any():  # raw envpool starts the new episodes at its next step: catch it up on every row
            np.testing.assert_array_equal(info["_" + FINAL_OBS_KEY], ended)
            np.testing.assert_array_equal(info[FINAL_OBS_KEY], raw_obs)
            # the last infos in gymnasium's layout (batched from 1.1 on, else one dict per sub-env), the
            # reset's info in the rows
            np.testing.assert_array_equal(info["_final_info"], ended)
            finals = info["final_info"]
            last = [
                finals["elapsed_step"][i] if isinstance(finals, dict) else finals[i]["elapsed_step"]
                for i in np.flatnonzero(ended)
            ]
            assert last == raw_info["elapsed_step"][ended].tolist()
            assert (info["elapsed_step"][ended] == 0).all()
            ends += int(ended.sum())
            raw_obs, *_ = raw.step(actions[0])  # the action is ignored where the episode ended
            np.testing.assert_array_equal(obs[ended], raw_obs[ended])
            # the rows that did not end took one step more in raw envpool: restart the comparison
            env.reset(seed=5 + ends)
            raw = raw_pool(env_id, seed=5 + ends, **kwargs)
            raw.reset()
    assert ends > 0
    env.close()


def test_the_same_seed_gives_the_same_trajectories_and_no_seed_continues():
    env = make_envpool_env("Hopper-v5", num_envs=NUM_ENVS, max_episode_steps=20)
    actions = [torch.as_tensor(a) for a in random_actions(env, 50)]

    def run(**reset_kwargs):
        observations = [env.reset(**reset_kwargs)[0]]
        observations += [env.step(action)[0] for action in actions]
        return torch.stack(observations)

    first = run(seed=3)
    assert torch.equal(run(seed=3), first)  # the pool was built again
    assert not torch.equal(run(), first)  # reset() without a seed continues each sub-env's stream
    env.seed(3)
    assert torch.equal(run(), first)
    assert not torch.equal(run(seed=4), first)
    env.close()


def test_sub_env_seeds_match_envpools_rule_so_parts_of_a_pool_run_alone():
    """Sub-env i of reset(seed=S) is seeded S + i whatever the pool size: a part of a chunk, run on a pool of
    its own size with per-sub-env seeds, repeats those rows (how evaluate splits a population)."""
    whole = EnvpoolVectorEnv("Hopper-v5", num_envs=NUM_ENVS)
    part = EnvpoolVectorEnv("Hopper-v5", num_envs=2)
    assert whole.sub_env_seeds(9) == [9, 10, 11, 12]
    near_the_top = 2**31 - 3  # its sub-envs 2 and 3 pass envpool's int32 seeds: drawn, not wrapped onto 0, 1
    assert whole.sub_env_seeds(near_the_top)[:2] == [2**31 - 3, 2**31 - 2]
    assert set(whole.sub_env_seeds(near_the_top)[2:]).isdisjoint({0, 1})
    assert part.sub_env_seeds(near_the_top + 2) == whole.sub_env_seeds(near_the_top)[2:]
    whole_obs, _ = whole.reset(seed=9)
    part_obs, _ = part.reset(seed=whole.sub_env_seeds(9)[2:])
    np.testing.assert_array_equal(whole_obs[2:], part_obs)
    unseeded, _ = part.reset(seed=[11, None])  # None: a random seed for that sub-env
    np.testing.assert_array_equal(unseeded[0], whole_obs[2])
    for env in (whole, part):
        env.close()


def test_seed_rule_evotorch_seeds_the_sub_envs_as_the_gym_backend_does_by_default():
    ruled = EnvpoolVectorEnv("CartPole-v1", num_envs=NUM_ENVS, seed_rule="evotorch")
    plain = EnvpoolVectorEnv("CartPole-v1", num_envs=NUM_ENVS)
    evotorch_seeds = sub_env_seeds(3, NUM_ENVS, "evotorch")  # RandomState(3).randint(0, 2**32, 4)
    seeds = ruled.sub_env_seeds(3)
    for seed, wanted in zip(seeds, evotorch_seeds, strict=True):  # envpool's int32 seeds as they are
        assert seed == wanted if wanted < SEED_MODULUS else 0 <= seed < SEED_MODULUS
    assert any(wanted < SEED_MODULUS for wanted in evotorch_seeds)
    ruled_obs, _ = ruled.reset(seed=3)
    np.testing.assert_array_equal(ruled_obs, plain.reset(seed=seeds)[0])
    assert not np.array_equal(ruled_obs, plain.reset(seed=3)[0])
    with pytest.raises(ValueError, match="seed_rule='S\\+i' is not a seed rule"):
        EnvpoolVectorEnv("CartPole-v1", num_envs=NUM_ENVS, seed_rule="S+i")
    for env in (ruled, plain):
        env.close()


def test_a_seed_in_a_list_past_envpools_int32_seeds_is_refused():
    # (seeds that are no seed on any backend are refused by vecrl.testing.check_seed_lists)
    env = EnvpoolVectorEnv("CartPole-v1", num_envs=NUM_ENVS)
    with pytest.raises(ValueError, match=r"must be below 2\*\*31 - 1, but \[2147483648\] are not"):
        env.reset(seed=[1, 2, 3, 2**31])
    env.close()


@pytest.mark.parametrize("mode", ["same_step", "next_step"])
def test_a_budget_stops_each_sub_env_after_its_episodes_and_steps_only_the_live_ones(mode):
    env = EnvpoolVectorEnv("CartPole-v1", num_envs=NUM_ENVS, num_episodes=2, autoreset_mode=mode)
    raw = raw_pool("CartPole-v1", seed=1)
    env.reset(seed=1)
    raw.reset()
    episodes = np.zeros(NUM_ENVS, int)
    spent = np.zeros(NUM_ENVS, bool)
    for action in random_actions(env, 400):
        live = ~spent
        obs, reward, terminated, truncated, info = env.step(action)
        ended = (terminated | truncated) & live
        if mode == "next_step":  # the live rows follow raw envpool stepped on those rows only
            ids = np.flatnonzero(live)
            raw_obs, raw_reward, raw_terminated, raw_truncated, _ = raw.step(action[ids], ids)
            np.testing.assert_array_equal(obs[live], raw_obs)
            np.testing.assert_array_equal(reward[live], raw_reward)
            np.testing.assert_array_equal(ended[live], raw_terminated | raw_truncated)
        assert np.isnan(obs[spent]).all() and np.isnan(reward[spent]).all()
        assert terminated[spent].all() and truncated[spent].all()
        assert (info["elapsed_step"][spent] == 0).all()  # widened info: nothing stepped there
        episodes += ended
        spent |= episodes >= 2
        if spent.all():
            break
    assert spent.all() and (episodes == 2).all()
    obs, reward, terminated, truncated, info = env.step(random_actions(env, 1)[0])  # nothing left to step
    assert np.isnan(reward).all() and terminated.all() and info == {}
    obs, _ = env.reset()
    assert not np.isnan(obs).any()
    env.close()


def test_disabled_mode_refuses_finished_sub_envs_until_a_masked_reset():
    env = EnvpoolVectorEnv("CartPole-v1", num_envs=NUM_ENVS, autoreset_mode="disabled", max_episode_steps=5)
    env.reset(seed=0)
    for _ in range(5):
        obs, _, terminated, truncated, _ = env.step(np.zeros(NUM_ENVS, int))
    ended = terminated | truncated
    assert ended.all()
    with pytest.raises(RuntimeError, match=r"sub-envs \[0, 1, 2, 3\] have ended and autoreset is disabled"):
        env.step(np.zeros(NUM_ENVS, int))
    mask = np.array([True, False, True, False])
    new_obs, info = env.reset(options={"reset_mask": mask})
    np.testing.assert_array_equal(new_obs[~mask], obs[~mask])
    assert not np.array_equal(new_obs[mask], obs[mask])
    assert info["elapsed_step"].tolist() == [0, 0, 0, 0]
    with pytest.raises(RuntimeError, match=r"sub-envs \[1, 3\]"):
        env.step(np.zeros(NUM_ENVS, int))
    env.reset(options={"reset_mask": torch.tensor([False, True, False, True])})
    env.step(np.zeros(NUM_ENVS, int))
    env.close()


@pytest.mark.parametrize(
    ("env_id", "action", "words"),
    [
        ("CartPole-v1", np.array([0, 1, 2, 0]), r"actions in \[0, 1\].*sub-envs \[2\]"),
        ("CartPole-v1", np.array([0, 1]), r"expected actions of shape \(4,\)"),
        ("CartPole-v1", np.array([0.0, 1.0, 1.0, 0.0]), "integer actions"),
        ("Hopper-v5", np.zeros((4, 2)), r"expected actions of shape \(4, 3\)"),
        ("Hopper-v5", np.array([[0, 0, 0]] * 3 + [[0, np.nan, 0]]), r"non-finite values.*sub-envs \[3\]"),
        ("Hopper-v5", np.array([[np.inf, 0, 0]] + [[0, 0, 0]] * 3), r"non-finite values.*sub-envs \[0\]"),
        ("CartPole-v1", torch.zeros(4, dtype=torch.int64, device="meta"), "meta device has no values"),
    ],
)
def test_bad_actions_are_refused_before_anything_steps(env_id, action, words):
    env = EnvpoolVectorEnv(env_id, num_envs=NUM_ENVS)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=words):
        env.step(action)
    _, _, _, _, info = env.step(random_actions(env, 1)[0])
    assert info["elapsed_step"].tolist() == [1] * NUM_ENVS  # the refused step stepped nothing
    env.close()


def test_lifecycle_errors():
    env = EnvpoolVectorEnv("CartPole-v1", num_envs=2)
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(np.zeros(2, int))
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(env)
    env.reset(seed=0)
    env.close()
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.step(np.zeros(2, int))
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()


def test_seeds_past_envpools_int32_range_do_not_repeat_small_seeds():
    env = EnvpoolVectorEnv("CartPole-v1", num_envs=3)
    try:
        observations = {seed: env.reset(seed=seed)[0] for seed in (0, 1, 2**31 - 1, 2**31, 2**32 - 3)}
        again = env.reset(seed=2**31 - 1)[0]
    finally:
        env.close()
    np.testing.assert_array_equal(again, observations[2**31 - 1])  # a large seed still reproduces
    firsts = {tuple(obs[0].tolist()) for obs in observations.values()}
    assert len(firsts) == len(observations)  # no seed gives another's trajectories


def test_the_ignored_action_of_a_next_step_reset_is_not_checked():
    env = EnvpoolVectorEnv("CartPole-v1", num_envs=2, autoreset_mode="next_step", max_episode_steps=2)
    env.reset(seed=0)
    env.step(np.zeros(2, np.int64))
    assert env.step(np.zeros(2, np.int64))[3].all()  # both truncated: the next step resets them
    _, reward, *_ = env.step(np.array([7, -1]))  # their actions are ignored, as envpool ignores them
    assert reward.tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match=r"sub-envs \[1\] are \[7\]"):
        env.step(np.array([0, 7]))
    env.close()
