"""vecrl's own errors share one base, vecrl.VecrlError, and each is still the built-in type it was."""

from __future__ import annotations

import pytest

import vecrl
from vecrl.backend import OPTIONAL_KEYWORDS
from vecrl.checks import SubEnvError
from vecrl.command import CommandError
from vecrl.registry import WELL_KNOWN_BACKENDS, installed_backends
from vecrl.testing import BackendCheckError
from vecrl_evaluate import WorkerError
from vecrl_policy import NetParsingError, str_to_net


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (SubEnvError, RuntimeError),
        (WorkerError, RuntimeError),
        (NetParsingError, ValueError),
        (CommandError, Exception),
        (BackendCheckError, AssertionError),
        (vecrl.UnknownEnvError, ValueError),
        (vecrl.UnknownKeywordError, TypeError),
    ],
)
def test_each_error_is_a_vecrl_error_and_its_builtin_type(error, builtin):
    assert issubclass(error, vecrl.VecrlError) and issubclass(error, builtin)


def test_the_ray_evaluation_error_is_one_too():
    vecrl_ray = pytest.importorskip("vecrl_ray")
    assert issubclass(vecrl_ray.EvaluationError, vecrl.VecrlError)
    assert issubclass(vecrl_ray.EvaluationError, RuntimeError)


def test_except_vecrl_error_catches_what_vecrl_raises():
    with pytest.raises(vecrl.VecrlError, match="unknown layer 'Linearr'"):
        str_to_net("Linearr(4, 2)")


# An unknown name on each backend that is installed, and the name it is closest to.
UNKNOWN_NAMES = [
    ("gym::Hoper-v5", "Hopper-v5", None),
    ("gym::hopper-v5", "Hopper-v5", None),  # only the case differs
    ("gym::CartPole-v9", "CartPole-v1", None),
    ("brax::antt", "ant", "vecrl_brax"),
    ("envpool::Hoper-v5", "Hopper-v5", "vecrl_envpool"),
    ("playground::CartpoleBalanc", "CartpoleBalance", "vecrl_playground"),
]


@pytest.mark.parametrize(("env_name", "closest", "package"), UNKNOWN_NAMES)
def test_an_unknown_env_name_is_the_same_error_on_every_backend_with_the_closest_name(
    env_name, closest, package
):
    if package:
        pytest.importorskip(package)
    with pytest.raises(vecrl.UnknownEnvError, match=f"Did you mean '{closest}'") as caught:
        vecrl.make_vector_env(env_name, num_envs=2)
    assert isinstance(caught.value, ValueError)


def test_the_gym_backend_chains_gymnasiums_own_error_and_workers_change_nothing():
    import gymnasium

    for workers in (None, 2):
        with pytest.raises(vecrl.UnknownEnvError) as caught:
            vecrl.make_vector_env("gym::Hoper-v5", num_envs=2, num_workers=workers)
        assert isinstance(caught.value.__cause__, gymnasium.error.NameNotFound)


@pytest.mark.parametrize(
    ("env_name", "package"),
    [("gym::CartPole-v1", None), ("brax::fast", "vecrl_brax"), ("envpool::CartPole-v1", "vecrl_envpool")],
)
@pytest.mark.parametrize(("keyword", "meant"), [("num_env", "num_envs"), ("num_episode", "num_episodes")])
def test_a_near_miss_of_a_vecrl_keyword_gets_a_did_you_mean_on_every_backend(
    env_name, package, keyword, meant
):
    if package:
        pytest.importorskip(package)
    with pytest.raises(vecrl.UnknownKeywordError, match=f"got {keyword}=2, .* Did you mean '{meant}'"):
        vecrl.make_vector_env(env_name, num_envs=2, **{keyword: 2})


def test_a_keyword_the_env_takes_is_untouched_and_a_near_miss_can_be_routed_to_the_env():
    env = vecrl.make_vector_env(
        "gym::CartPole-v1", num_envs=2, max_episode_steps=5
    )  # not near a vecrl keyword
    env.close()
    # routed to the env on purpose: gymnasium's own error, from the env's constructor
    with pytest.raises(TypeError, match="unexpected keyword argument 'num_env'") as caught:
        vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, gym_kwargs={"num_env": 2})
    assert not isinstance(caught.value, vecrl.VecrlError)


def shipped_backends():
    backends, _ = installed_backends()
    return [backend for backend in backends if backend.prefix in WELL_KNOWN_BACKENDS]


@pytest.mark.parametrize("backend", shipped_backends(), ids=lambda backend: backend.prefix)
def test_a_vecrl_keyword_a_backend_does_not_take_is_one_error_naming_the_backend(backend):
    assert backend.keywords is not None, f"{backend.prefix} declares no keywords"
    refused = [key for key in OPTIONAL_KEYWORDS if key not in backend.keywords]
    assert refused
    for key in refused:
        given = {key: "x"}
        for call in (given, {f"{backend.prefix}_kwargs": given}):
            with pytest.raises(vecrl.UnknownKeywordError) as caught:
                vecrl.make_vector_env(f"{backend.prefix}::Anything", num_envs=2, **call)
            message = str(caught.value)
            assert f"got {key}='x', which the {backend.prefix} backend does not take" in message
            assert "Of vecrl's keywords it takes " + ", ".join(sorted(backend.keywords)) in message


@pytest.mark.parametrize(
    ("env_name", "keyword", "says"),
    [
        ("gym::CartPole-v1", {"episode_length": 5}, "max_episode_steps="),
        ("brax::fast", {"device": "cpu"}, "JAX_PLATFORMS=cpu"),
        ("brax::fast", {"num_workers": 2}, "give more sub-envs"),
        ("brax::fast", {"wrappers": []}, "vector_wrappers"),
        ("playground::CartpoleBalance", {"wrappers": []}, "vector_wrappers"),
        ("envpool::CartPole-v1", {"num_workers": 2}, "num_threads="),
        ("envpool::CartPole-v1", {"episode_length": 5}, "max_episode_steps="),
    ],
)
def test_the_refusal_says_what_to_do_instead(env_name, keyword, says):
    prefix = env_name.partition("::")[0]
    if prefix not in {backend.prefix for backend in shipped_backends()}:
        pytest.skip(f"the {prefix} backend is not installed")
    with pytest.raises(vecrl.UnknownKeywordError, match=says):
        vecrl.make_vector_env(env_name, num_envs=2, **keyword)
