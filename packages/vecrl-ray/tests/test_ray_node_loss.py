"""A Ray node removed mid-evaluation (``ray.cluster_utils.Cluster.remove_node``) loses nothing: the part its
actor held runs on the actor left, with the results of the undisturbed call, and the actor's replacement
joins once the cluster has a CPU for it."""

from __future__ import annotations

import pytest
import ray
import torch
from mid_call import Marks, once_it_exists
from ray.cluster_utils import Cluster
from ray_processes import everything_started_here_ends

import vecrl
from vecrl_evaluate import evaluate
from vecrl_policy import Policy
from vecrl_ray import RayExecutor


@pytest.fixture
def cluster():
    """A head that runs nothing and two worker nodes of one CPU each: no CPU to spare."""
    with everything_started_here_ends():
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
        try:
            nodes = [cluster.add_node(num_cpus=1) for _ in range(2)]
            cluster.wait_for_nodes()
            yield cluster, nodes
        finally:
            cluster.shutdown()


@pytest.mark.races
def test_a_node_removed_mid_call_loses_nothing_and_its_actor_is_replaced_once_a_node_joins(cluster, tmp_path):
    cluster, nodes = cluster
    env = vecrl.make_vector_env(
        "gym::CartPole-v1", num_envs=8, num_episodes=2, wrappers=[lambda env: Marks(env, str(tmp_path))]
    )
    policy = Policy("Linear(4, 2)")
    rows = 0.5 * torch.randn(16, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    try:
        with RayExecutor(address=cluster.address) as executor:
            assert executor.num_parts == 2
            node_of = lambda actor: ray.get_runtime_context().get_node_id()  # noqa: E731
            victim_node = ray.get(executor.actors[0].__ray_call__.remote(node_of))
            (victim,) = [node for node in nodes if node.node_id == victim_node]
            started = tmp_path / victim_node

            with once_it_exists(started, lambda: cluster.remove_node(victim)):
                result = evaluate(policy, env, rows, num_episodes=2, seed=5, executor=executor)
            assert started.exists() and executor.restarts == 1
            expected = evaluate(policy, env, rows, num_episodes=2, seed=5)
            for name in ("total_return", "episodes", "steps"):  # nothing lost, nothing counted twice
                assert torch.equal(getattr(result, name), getattr(expected, name)), name
            # the replacement waits for a CPU; the next call runs on the actor left meanwhile ...
            again = evaluate(policy, env, rows, num_episodes=2, seed=5, executor=executor)
            assert torch.equal(again.total_return, expected.total_return)
            # ... and once a node joins, the replacement starts there and serves
            cluster.add_node(num_cpus=1)
            cluster.wait_for_nodes()
            ray.get([actor.ready.remote() for actor in executor.actors])
            nodes_now = set(ray.get([actor.__ray_call__.remote(node_of) for actor in executor.actors]))
            assert len(nodes_now) == 2 and victim_node not in nodes_now
            last = evaluate(policy, env, rows, num_episodes=2, seed=5, executor=executor)
            assert torch.equal(last.total_return, expected.total_return) and executor.restarts == 1
    finally:
        env.close()
