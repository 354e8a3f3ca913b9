"""PPO on CartPole-v1 in the shape of CleanRL's envpool scripts, on vecrl's async batches of gym:: envs.

The env's sub-envs step in worker processes, a batch of ``--batch-size`` at a time: ``recv()`` hands over
the first batch done, the agent acts on its rows alone, and ``send()`` starts its next step while the other
batches step on (envpool's ``async_reset``/``send``/``recv``). A batch always holds the same sub-envs, so
each batch's rollout is a plain time series of its own sub-envs, and with a random generator a batch, the
whole run (returns, weights) is the same whatever order the batches come back in.

    python3.11 -m pip install -c constraints.txt packages/vecrl-core "packages/vecrl-gym[classic-control]"
    python3.11 examples/async_ppo.py --until 400

It prints the mean return of the last 20 episodes after each update and stops at ``--until``.
"""

from __future__ import annotations

import argparse
import time
from collections import deque

import numpy as np
import torch
from torch import nn

import vecrl


def layer(inputs: int, outputs: int, std: float = 2**0.5) -> nn.Linear:
    linear = nn.Linear(inputs, outputs)
    nn.init.orthogonal_(linear.weight, std)
    nn.init.constant_(linear.bias, 0.0)
    return linear


class Agent(nn.Module):
    """CleanRL's CartPole actor-critic: two 64-unit tanh MLPs."""

    def __init__(self, observations: int, actions: int) -> None:
        super().__init__()
        self.critic = nn.Sequential(
            layer(observations, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, 1, 1.0)
        )
        self.actor = nn.Sequential(
            layer(observations, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, actions, 0.01)
        )

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)

    def act(self, x: torch.Tensor, action=None, generator=None):
        logits = self.actor(x)
        distribution = torch.distributions.Categorical(logits=logits)
        if action is None:
            action = torch.multinomial(distribution.probs, 1, generator=generator).squeeze(-1)
        return action, distribution.log_prob(action), distribution.entropy(), self.value(x)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=4, help="sub-envs recv() returns at a time")
    parser.add_argument("--num-workers", type=int, default=2)
    parser.add_argument("--num-steps", type=int, default=128, help="steps a sub-env takes per rollout")
    parser.add_argument("--total-timesteps", type=int, default=300_000)
    parser.add_argument(
        "--until", type=float, default=None, help="stop once the last 20 episodes average this"
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)

    env = vecrl.make_vector_env(
        "gym::CartPole-v1", num_envs=args.num_envs, batch_size=args.batch_size, num_workers=args.num_workers
    )
    k, steps = args.batch_size, args.num_steps
    groups = args.num_envs // k
    agent = Agent(env.single_observation_space.shape[0], int(env.single_action_space.n))
    optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
    generators = [torch.Generator().manual_seed(args.seed * 1000 + g) for g in range(groups)]

    # rollout storage: [step, batch, row of the batch]
    observations = torch.zeros((steps, groups, k, *env.single_observation_space.shape))
    actions = torch.zeros((steps, groups, k), dtype=torch.long)
    log_probs, rewards, dones, values = (torch.zeros((steps, groups, k)) for _ in range(4))

    env.async_reset(seed=args.seed)
    pending: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}  # by batch: its observation and done, unsent
    for _ in range(groups):
        observation, _, terminated, truncated, info = env.recv()
        pending[int(info["env_id"][0]) // k] = (observation.float(), (terminated | truncated).float())
    episode_return = torch.zeros(args.num_envs)
    returns: deque[float] = deque(maxlen=20)
    updates = args.total_timesteps // (steps * args.num_envs)
    taken = [0] * groups  # by batch: the steps of this rollout it has taken

    def act_and_send(group: int) -> None:
        observation, done = pending.pop(group)
        t = taken[group]
        with torch.no_grad():
            action, log_prob, _, value = agent.act(observation, generator=generators[group])
        observations[t, group], dones[t, group], actions[t, group] = observation, done, action
        log_probs[t, group], values[t, group] = log_prob, value
        taken[group] += 1
        env.send(action, torch.arange(group * k, group * k + k))

    start = time.perf_counter()
    for update in range(1, updates + 1):
        optimizer.param_groups[0]["lr"] = 2.5e-4 * (1.0 - (update - 1.0) / updates)
        taken[:] = [0] * groups
        for group in sorted(pending):
            act_and_send(group)
        while len(pending) < groups:
            observation, reward, terminated, truncated, info = env.recv()
            group = int(info["env_id"][0]) // k
            done = terminated | truncated
            rewards[taken[group] - 1, group] = reward.float()
            rows = slice(group * k, group * k + k)
            episode_return[rows] += reward.float()
            returns.extend(episode_return[rows][done].tolist())
            episode_return[rows] = torch.where(done, 0.0, episode_return[rows])
            pending[group] = (observation.float(), done.float())
            if taken[group] < steps:
                act_and_send(group)

        # generalized advantage estimation, per batch (each a time series of its own sub-envs)
        with torch.no_grad():
            next_observation = torch.stack([pending[g][0] for g in range(groups)])
            next_done = torch.stack([pending[g][1] for g in range(groups)])
            next_value = agent.value(next_observation)
            advantages = torch.zeros_like(rewards)
            last = torch.zeros((groups, k))
            for t in reversed(range(steps)):
                alive = 1.0 - (next_done if t == steps - 1 else dones[t + 1])
                following = next_value if t == steps - 1 else values[t + 1]
                delta = rewards[t] + 0.99 * following * alive - values[t]
                last = delta + 0.99 * 0.95 * alive * last
                advantages[t] = last
            targets = advantages + values

        flat = [x.reshape(steps * args.num_envs, *x.shape[3:]) for x in (observations, actions, log_probs)]
        b_advantages, b_targets = advantages.reshape(-1), targets.reshape(-1)
        size = steps * args.num_envs
        for _ in range(4):
            order = torch.randperm(size)
            for chunk in order.split(size // 4):
                _, new_log_prob, entropy, new_value = agent.act(flat[0][chunk], flat[1][chunk])
                ratio = (new_log_prob - flat[2][chunk]).exp()
                advantage = b_advantages[chunk]
                advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
                policy_loss = torch.max(-advantage * ratio, -advantage * ratio.clamp(0.8, 1.2)).mean()
                value_loss = 0.5 * ((new_value - b_targets[chunk]) ** 2).mean()
                loss = policy_loss - 0.01 * entropy.mean() + 0.5 * value_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()

        mean = float(np.mean(returns)) if returns else float("nan")
        steps_done = update * size
        print(
            f"update {update:3d}  env-steps {steps_done:7,d}  mean return (last 20) {mean:6.1f}"
            f"  {steps_done / (time.perf_counter() - start):7,.0f} env-steps/s",
            flush=True,
        )
        if args.until is not None and len(returns) == returns.maxlen and mean >= args.until:
            print(f"reached {args.until:g} after {steps_done:,} env-steps")
            break
    env.close()


if __name__ == "__main__":
    main()
