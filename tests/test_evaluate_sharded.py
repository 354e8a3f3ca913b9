"""evaluate's fused program split over several jax devices (here CPU devices jax is told to pretend, in a
fresh process): every row's results, the episodes' statistics included, equal those of one device, for a
population that does not divide evenly; and the mistakes a user makes with ``devices=``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

pytest.importorskip("vecrl_brax")

import vecrl
from vecrl_evaluate import evaluate
from vecrl_evaluate.runners import InThisProcess
from vecrl_policy import Policy

SHARDED = """
import jax, torch, vecrl
from vecrl_policy import ObsNorm, Policy
from vecrl_evaluate import evaluate
from vecrl_evaluate.fused import PROGRAMS

assert len(jax.devices()) == 3, jax.devices()
env = vecrl.make_vector_env("brax::inverted_pendulum", num_envs=4, num_episodes=2, episode_length=15)
policy = Policy("Linear(4, 8) >> Tanh() >> Linear(8, 1)")
population = 0.5 * torch.randn(7, policy.parameter_length, generator=torch.Generator().manual_seed(0))
results = []
for devices in (jax.devices()[:1], jax.devices()[:2], None):  # None: every device, here 3
    norm = ObsNorm()
    result = evaluate(policy, env, population, num_episodes=2, seed=5, obs_norm=norm, action_noise_stdev=0.1, devices=devices)
    assert result.path == "fused"
    results.append((result.total_return, result.episodes, result.steps, norm.count, norm.sum, norm.sum_of_squares))
for other in results[1:]:
    for one, split in zip(results[0], other):
        torch.testing.assert_close(split, one, rtol=1e-5, atol=1e-4)
print(sorted(len(settings.options.devices) for settings, _ in PROGRAMS))
print(results[0][2].tolist())
"""


def test_the_rows_split_over_two_and_three_devices_give_the_one_device_results():
    environment = {
        **os.environ,
        "XLA_FLAGS": "--xla_force_host_platform_device_count=3",
        "JAX_PLATFORMS": "cpu",
    }
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SHARDED)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    programs, steps = result.stdout.strip().splitlines()
    assert programs == "[1, 2, 3]"  # one program per device count, each over that many devices
    assert len(eval(steps)) == 7 and min(eval(steps)) > 0  # every row ran, the padding rows none


@pytest.fixture(scope="module")
def pendulum():
    env = vecrl.make_vector_env("brax::inverted_pendulum", num_envs=4, num_episodes=1, episode_length=10)
    yield env
    env.close()


def test_devices_on_a_call_that_steps_the_env_says_why_it_cannot_split(pendulum):
    import jax

    policy = Policy("Linear(4, 1)")
    population = torch.zeros(3, policy.parameter_length)
    with pytest.raises(
        ValueError, match=r"devices= splits the rows .* steps the env from Python \(fused=False\)"
    ):
        evaluate(policy, pendulum, population, fused=False, devices=jax.devices())
    with pytest.raises(
        ValueError, match="devices= splits this process's compiled program .* leave devices out"
    ):
        evaluate(policy, pendulum, population, executor=InThisProcess(None), devices=jax.devices())


@pytest.mark.parametrize(
    ("devices", "error", "message"),
    [
        ("cpu", TypeError, "devices must be a list of jax devices"),
        ([], ValueError, "devices must be a non-empty list of jax devices of one platform"),
        ([0, 1], ValueError, "devices must be a non-empty list of jax devices of one platform"),
    ],
)
def test_devices_that_are_no_list_of_jax_devices_are_refused_before_anything_runs(
    pendulum, devices, error, message
):
    policy = Policy("Linear(4, 1)")
    with pytest.raises(error, match=message):
        evaluate(policy, pendulum, torch.zeros(3, policy.parameter_length), devices=devices)


def test_a_device_named_twice_is_refused(pendulum):
    import jax

    policy = Policy("Linear(4, 1)")
    with pytest.raises(ValueError, match="devices names a device twice"):
        evaluate(policy, pendulum, torch.zeros(3, policy.parameter_length), devices=jax.devices() * 2)
