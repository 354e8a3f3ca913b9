"""Populations that play each other: PGPE self-play with a hall of fame on MPE's push, and a team evolved on
MPE's cooperative spread, through EvoTorch and `VecrlNE(..., opponents=...)`.

`self-play` evolves one policy for both sides of `mpe2.simple_push_v3` (an agent that reaches for its goal
landmark, an adversary that pushes it away: a row per agent, the adversary's shorter observation padded with
zeros): each solution plays a match in each seat against past centers (the hall of fame; the first
generation plays itself), and its fitness is its mean return over both seats. Since its opponents improve
too, each generation's center is also scored against the first generation's center, a fixed reference:
that return rises as the policy learns both sides. `team` evolves one policy for every agent of
`mpe2.simple_spread_v3` (`opponents="team"`: parameter sharing) and compares its team with a team acting at
random. From the repository's root:

    python3.11 -m pip install -c constraints.txt packages/vecrl-core packages/vecrl-pettingzoo mpe2 packages/vecrl-policy packages/vecrl-evaluate packages/vecrl-evotorch
    python examples/self_play.py self-play --generations 30
    python examples/self_play.py team --generations 30
"""

from __future__ import annotations

import argparse

from evotorch.algorithms import PGPE
from mpe2 import simple_spread_v3

from vecrl.cli import HelpFormatter
from vecrl.command import positive_int, seed_int
from vecrl_evotorch import VecrlNE

NETWORK = "Linear(obs_length, 16) >> Tanh() >> Linear(16, act_length)"
PUSH = {"max_cycles": 25}
SPREAD = {"N": 3, "max_cycles": 25, "continuous_actions": True}  # (forces in [0, 1]: the policy's clipped)


def searcher_for(problem: VecrlNE, popsize: int) -> PGPE:
    """PGPE with ClipUp, as EvoTorch's examples set it."""
    return PGPE(
        problem,
        popsize=popsize,
        center_learning_rate=0.15,
        stdev_learning_rate=0.1,
        stdev_init=0.5,
        optimizer="clipup",
        optimizer_config={"max_speed": 0.3},
    )


def self_play(generations: int, popsize: int, seed: int) -> list[float]:
    """Evolve both sides of push against a hall of fame; the center's return against the first generation's
    center, generation after generation, after the first center's return against itself."""
    problem = VecrlNE(
        "pettingzoo::mpe2.simple_push_v3",
        NETWORK,
        env_config=PUSH,
        opponents="hall-of-fame",
        seed=seed,
    )
    searcher = searcher_for(problem, popsize)
    against_first = []
    for generation in range(1, generations + 1):
        searcher.step()
        if generation == 1:  # the first generation's center (its population's mean) against itself
            against_first.append(problem.score(problem.reference, num_episodes=4, seed=seed))
            print(f"gen   0  first center vs itself {against_first[0]:7.2f}")
        against_first.append(problem.score(searcher.status["center"], num_episodes=4, seed=seed))
        print(
            f"gen {generation:3d}  population {searcher.status['mean_eval']:7.2f}"
            f"  center vs first center {against_first[-1]:7.2f}  hall of fame {len(problem.hall_of_fame)}"
        )
    problem.close()
    return against_first


def random_team_return(episodes: int, seed: int) -> float:
    """A world's agents acting at random: their mean return per agent and episode, by PettingZoo's own loop."""
    world, total = simple_spread_v3.parallel_env(**SPREAD), 0.0
    for episode in range(episodes):
        world.reset(seed=seed + episode)
        for agent in world.possible_agents:
            world.action_space(agent).seed(seed + episode)
        while world.agents:
            actions = {agent: world.action_space(agent).sample() for agent in world.agents}
            _, rewards, _, _, _ = world.step(actions)
            total += sum(rewards.values())
    world.close()
    return total / (episodes * len(world.possible_agents))


def team(generations: int, popsize: int, seed: int) -> tuple[float, float]:
    """Evolve one policy for every agent of simple_spread; its team's return and a random team's."""
    problem = VecrlNE(
        "pettingzoo::mpe2.simple_spread_v3",
        NETWORK,
        env_config={**SPREAD, "clip_actions": True},
        opponents="team",
        seed=seed,
    )
    searcher = searcher_for(problem, popsize)
    for generation in range(1, generations + 1):
        searcher.step()
        print(f"gen {generation:3d}  population {searcher.status['mean_eval']:7.2f}")
    evolved = problem.score(searcher.status["center"], num_episodes=8, seed=seed)
    problem.close()
    return evolved, random_team_return(8, seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=HelpFormatter)
    parser.add_argument("task", choices=("self-play", "team"), help="push's two sides, or cooperative spread")
    parser.add_argument("--generations", type=positive_int, default=30, help="generations to run")
    parser.add_argument("--popsize", type=positive_int, default=32, help="solutions per generation")
    parser.add_argument("--seed", type=seed_int, default=0, help="seed of the search and the worlds")
    args = parser.parse_args()
    if args.task == "self-play":
        against_first = self_play(args.generations, args.popsize, args.seed)
        print(
            f"center vs first center: {against_first[0]:.2f} at the start, {against_first[-1]:.2f} at the end"
        )
    else:
        evolved, random = team(args.generations, args.popsize, args.seed)
        print(f"evolved team {evolved:.2f} per agent and episode, random team {random:.2f}")


if __name__ == "__main__":
    main()
