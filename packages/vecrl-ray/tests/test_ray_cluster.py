"""RayExecutor joining a real multi-node cluster by its address (a head and two worker nodes on this
machine, started with ray.cluster_utils.Cluster), starting and stopping Ray itself when none runs, and the
`vecrl evaluate --ray` command."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest
import ray
import torch
from ray.cluster_utils import Cluster
from ray_processes import everything_started_here_ends

import vecrl
from vecrl_evaluate import evaluate
from vecrl_policy import Policy
from vecrl_ray import RayExecutor


# First, before the cluster below starts: with no address, ray.init() joins a cluster running on this
# machine if there is one.
def test_without_a_running_ray_it_starts_one_here_and_close_stops_it():
    assert not ray.is_initialized()
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4)
    policy = Policy("Linear(4, 2)")
    parameters = torch.randn(6, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    try:
        with everything_started_here_ends():
            executor = RayExecutor(num_actors=1)
            assert ray.is_initialized()
            result = evaluate(policy, env, parameters, seed=0, executor=executor)
            executor.close()
            executor.close()  # idempotent
            assert not ray.is_initialized()
        with pytest.raises(RuntimeError, match="This RayExecutor is closed; make a new one"):
            evaluate(policy, env, parameters, executor=executor)
        assert torch.equal(result.steps, evaluate(policy, env, parameters, seed=0).steps)
    finally:
        env.close()
    assert os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "0"  # (set by conftest: 127.0.0.1 only)


def test_vecrl_evolve_evolves_hopper_on_ray_actors_and_writes_its_plot(tmp_path):
    pytest.importorskip("vecrl_evotorch", reason="vecrl evolve's package (nox -s tests installs it)")
    out = tmp_path / "run"
    arguments = ["gym::Hopper-v5", "--ray", "--workers", "2", "--generations", "2", "--popsize", "8"]
    with everything_started_here_ends():
        done = subprocess.run(
            [sys.executable, "-m", "vecrl.cli", "evolve", *arguments, "--out", str(out)],
            capture_output=True,
            text=True,
        )
    assert done.returncode == 0, done.stderr
    assert "starting Ray on this machine" in done.stdout and "gen    2" in done.stdout
    assert "Token authentication is enabled" not in done.stderr  # (the secure default, said on every start)
    assert (out / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def cluster():
    """A head that runs nothing and two worker nodes of one CPU each."""
    with everything_started_here_ends():
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
        try:
            for _ in range(2):
                cluster.add_node(num_cpus=1)
            cluster.wait_for_nodes()
            yield cluster
        finally:
            cluster.shutdown()


def test_an_executor_joins_a_cluster_by_address_and_uses_every_node(cluster):
    env = vecrl.make_vector_env("gym::Hopper-v5", num_envs=8, num_episodes=1)
    policy = Policy("Linear(11, 8) >> Tanh() >> Linear(8, 3)")
    parameters = 0.5 * torch.randn(20, policy.parameter_length, generator=torch.Generator().manual_seed(3))
    try:
        with RayExecutor(address=cluster.address) as executor:  # one actor per free CPU: 2
            assert executor.num_parts == 2
            node_of = lambda actor: ray.get_runtime_context().get_node_id()  # noqa: E731
            nodes = ray.get([actor.__ray_call__.remote(node_of) for actor in executor.actors])
            assert len(set(nodes)) == 2  # spread: one actor on each worker node
            result = evaluate(policy, env, parameters, seed=4, executor=executor)
        assert not ray.is_initialized()  # this process left the cluster; the cluster runs on
        expected = evaluate(policy, env, parameters, seed=4)
    finally:
        env.close()
    assert torch.equal(result.total_return, expected.total_return) and torch.equal(
        result.steps, expected.steps
    )


def test_the_command_evaluates_on_the_cluster_and_says_what_is_wrong_without_a_traceback(cluster):
    command = [sys.executable, "-m", "vecrl.cli", "evaluate", "gym::CartPole-v1", "--popsize", "8"]
    done = subprocess.run([*command, "--ray", cluster.address], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "joining the Ray cluster at" in done.stdout and "8 policies x 1 episode(s)" in done.stdout
    for arguments, message in [
        (["--ray", "127.0.0.1:1"], "Nothing answers at the Ray address '127.0.0.1:1'"),
        (["--ray", cluster.address, "--workers", "3"], "3 actors of 1 CPU(s) each need 3 CPUs"),
    ]:
        done = subprocess.run([*command, *arguments], capture_output=True, text=True)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr
    missing = "import sys; sys.modules['vecrl_ray'] = None; from vecrl.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", missing, *command[3:], "--ray"], capture_output=True, text=True
    )
    assert done.returncode == 2 and "pip install -c constraints.txt packages/vecrl-ray" in done.stderr
    assert "Traceback" not in done.stderr


def test_without_an_address_it_says_it_joins_a_running_cluster_and_local_refuses(cluster, monkeypatch):
    monkeypatch.setenv("RAY_ADDRESS", cluster.address)  # as `ray start` or a job's environment leaves it
    with pytest.warns(UserWarning, match=r"joins the Ray cluster already running at .* address='local'"):
        executor = RayExecutor(num_actors=1)
    with executor:
        assert len(ray.nodes()) == 3  # the cluster's head and two workers
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no notice: the user chose
        with RayExecutor(num_actors=1, address="local") as executor:
            assert len(ray.nodes()) == 1  # a Ray of its own, on this machine alone
