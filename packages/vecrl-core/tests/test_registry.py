import importlib.util

import gymnasium
import pytest
import torch

import vecrl
from vecrl import Backend, make_vector_env, register_backend
from vecrl.testing import isolated_registry


@pytest.fixture(autouse=True)
def no_entry_points():
    """These tests see only in-process registrations, whatever plugins earlier tests loaded (entry
    points are tested in tests/)."""
    with isolated_registry():
        yield


def cartpoles(num_envs):
    """What a backend's make returns: a gymnasium vector env (one plain env for num_envs=None)."""
    if num_envs is None:
        return gymnasium.make("CartPole-v1")
    return gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * num_envs)


def recording_backend(prefix, calls):
    def make(env_name, *, num_envs=None, **kwargs):
        calls.append((env_name, {"num_envs": num_envs, **kwargs}))
        return cartpoles(num_envs)

    return Backend(prefix=prefix, make=make, description="records its calls")


def test_an_in_process_backend_is_found_and_can_be_undone():
    calls = []
    registration = register_backend(recording_backend("rec", calls))
    try:
        env = make_vector_env("rec::Thing-v0", num_envs=2)
        assert isinstance(env, vecrl.TorchWrapper) and env.num_envs == 2
        assert calls == [("Thing-v0", {"num_envs": 2})]  # the torch options are make_vector_env's, not make's
        assert "rec" in vecrl.backend_prefixes()
    finally:
        registration.unregister()
    assert "rec" not in vecrl.backend_prefixes()
    with pytest.raises(ValueError, match="'rec'"):
        make_vector_env("rec::Thing-v0")


def test_registration_works_as_a_context_manager():
    with register_backend(recording_backend("ctx", [])):
        assert vecrl.get_backend("ctx").description == "records its calls"
    assert "ctx" not in vecrl.backend_prefixes()


def test_the_name_splits_on_the_first_double_colon_only():
    calls = []
    with register_backend(recording_backend("rec", calls)):
        make_vector_env("rec::old::ant")
    assert calls[0][0] == "old::ant"


def test_a_name_without_prefix_goes_to_the_gym_backend():
    calls = []
    with register_backend(recording_backend("gym", calls)):
        make_vector_env("CartPole-v1", num_envs=3)
    assert calls == [("CartPole-v1", {**calls[0][1], "num_envs": 3})]


def test_unknown_prefix_lists_the_known_ones_and_suggests_a_close_match():
    with register_backend(recording_backend("mujoco_playground", [])), pytest.raises(ValueError) as error:
        make_vector_env("mujoco_playgrnd::Go1")
    message = str(error.value)
    assert "'mujoco_playgrnd'" in message
    assert "mujoco_playground" in message and "Did you mean 'mujoco_playground'?" in message


@pytest.mark.parametrize(("prefix", "package"), [("gym", "vecrl-gym"), ("brax", "vecrl-brax")])
def test_missing_well_known_backend_names_the_package_to_install(prefix, package):
    with pytest.raises(ValueError, match=f"pip install -c constraints.txt packages/{package}"):
        make_vector_env(f"{prefix}::anything")


def test_a_taken_prefix_cannot_be_registered_twice():
    with register_backend(recording_backend("dup", [])):
        with pytest.raises(ValueError, match="'dup'.*already provided by an in-process registration"):
            register_backend(recording_backend("dup", []))
        assert vecrl.get_backend("dup")  # the first one is untouched


def test_prefix_kwargs_reach_only_their_backend():
    calls = []
    with register_backend(recording_backend("gym", calls)), register_backend(recording_backend("toy", [])):
        make_vector_env(
            "gym::CartPole-v1",
            gym_kwargs={"max_episode_steps": 7},
            brax_kwargs={"episode_length": 9},
            toy_kwargs={"speed": 2},
            render_mode=None,
        )
    kwargs = calls[0][1]
    assert kwargs["max_episode_steps"] == 7 and kwargs["render_mode"] is None
    assert "episode_length" not in kwargs and "speed" not in kwargs and "toy_kwargs" not in kwargs


def test_a_keyword_given_twice_is_refused():
    with (
        register_backend(recording_backend("gym", [])),
        pytest.raises(ValueError, match="max_episode_steps.*both directly and in gym_kwargs"),
    ):
        make_vector_env("CartPole-v1", max_episode_steps=3, gym_kwargs={"max_episode_steps": 4})


def test_routed_kwargs_must_be_mappings():
    with (
        register_backend(recording_backend("gym", [])),
        pytest.raises(TypeError, match="gym_kwargs must be a dict"),
    ):
        make_vector_env("CartPole-v1", gym_kwargs=[("a", 1)])


@pytest.mark.parametrize("name", ["", "gym::", "::CartPole-v1"])
def test_incomplete_names_are_refused(name):
    with pytest.raises(ValueError, match="incomplete"):
        make_vector_env(name)


@pytest.mark.parametrize("prefix", ["", "a::b", "9lives", "has space"])
def test_bad_prefixes_are_refused_by_backend(prefix):
    with pytest.raises(ValueError, match="prefix"):
        Backend(prefix=prefix, make=lambda name, **kw: None)


def test_a_plugin_object_with_a_wrong_return_type_is_refused_before_registering():
    class Broken:
        @vecrl.hookimpl
        def vecrl_backends(self):
            return ["not a backend"]

    with pytest.raises(TypeError, match="list of vecrl.Backend"):
        vecrl.register_plugin(Broken())


def test_a_plugin_object_registers_and_unregisters():
    class Plugin:
        @vecrl.hookimpl
        def vecrl_backends(self):
            return [recording_backend("obj", [])]

    plugin = Plugin()
    vecrl.register_plugin(plugin, name="my-plugin")
    try:
        assert vecrl.get_backend("obj").prefix == "obj"
        assert vecrl.backend_distribution("obj") is None
    finally:
        vecrl.unregister_plugin(plugin)
    assert "obj" not in vecrl.backend_prefixes()


def test_an_isolated_registry_hides_and_then_restores_loaded_plugins():
    with register_backend(recording_backend("kept", [])):
        with isolated_registry():
            assert "kept" not in vecrl.backend_prefixes()
            register_backend(recording_backend("temporary", []))
        assert "kept" in vecrl.backend_prefixes() and "temporary" not in vecrl.backend_prefixes()


def test_a_backend_refuses_the_vecrl_keywords_it_does_not_take_before_make_is_called():
    calls = []
    declared = Backend(
        "rec",
        make=recording_backend("rec", calls).make,
        keywords=("num_episodes", "device"),
        refusals={"num_workers": "rec envs step in one call"},
    )
    with register_backend(declared):
        make_vector_env("rec::Thing-v0", num_envs=2, num_episodes=1, device="cpu", speed=3)
        assert calls[-1][1]["speed"] == 3 and calls[-1][1]["device"] == "cpu"
        for given, why in (
            ({"num_workers": 2}, ": rec envs step in one call. "),
            ({"rec_kwargs": {"num_workers": 2}}, ": rec envs step in one call. "),
            ({"seed_rule": "gymnasium"}, ". "),  # no reason given: the message says what it takes
        ):
            with pytest.raises(vecrl.UnknownKeywordError) as caught:
                make_vector_env("rec::Thing-v0", num_envs=2, **given)
            assert isinstance(caught.value, TypeError)
            key, value = next(iter(given.get("rec_kwargs", given).items()))
            assert str(caught.value) == (
                f"make_vector_env('rec::Thing-v0') got {key}={value!r}, which the rec backend does not take"
                f"{why}Of vecrl's keywords it takes device, num_episodes (and those of every backend: num_envs,"
                " force_classic_api, discrete_to_continuous_act, clip_actions, dtype)."
            )
    assert len(calls) == 1  # nothing was made for the refused calls


def test_a_backend_that_declares_no_keywords_gets_every_keyword_as_before():
    calls = []
    with register_backend(recording_backend("rec", calls)):
        make_vector_env("rec::Thing-v0", num_envs=2, num_workers=2, device="x", seed_rule="x")
    assert calls[0][1]["num_workers"] == 2 and calls[0][1]["device"] == "x"


@pytest.mark.parametrize(
    ("declared", "error", "words"),
    [
        (
            {"keywords": ("num_episode",)},
            ValueError,
            r"keywords names \['num_episode'\], which are not vecrl's",
        ),
        ({"keywords": ("num_envs",)}, ValueError, "those are autoreset_mode, batch_size, device"),
        ({"refusals": {"speed": "no"}}, ValueError, r"refusals names \['speed'\]"),
        ({"keywords": "device"}, TypeError, r"got the str 'device'; write \('device',\)"),
    ],
)
def test_a_backend_declaring_keywords_that_are_not_vecrl_s_is_refused(declared, error, words):
    with pytest.raises(error, match=words):
        Backend("rec", make=lambda name, **kw: None, **declared)


def test_jax_results_without_jax_installed_are_refused_before_make_is_called():
    if importlib.util.find_spec("jax") is not None:
        pytest.skip("jax is installed (the core isolation row has none)")
    calls = []
    with (
        register_backend(recording_backend("rec", calls)),
        pytest.raises(ImportError, match="jax is not installed: pip install jax"),
    ):
        make_vector_env("rec::Thing-v0", num_envs=2, array_type="jax")
    assert calls == []


def test_make_vector_env_applies_the_torch_options_to_what_a_backend_makes():
    with register_backend(recording_backend("rec", [])):
        env = make_vector_env(
            "rec::Thing-v0", num_envs=2, force_classic_api=True, discrete_to_continuous_act=True
        )
        assert env.reset(seed=0).shape == (2, 4)
        observation, reward, done, info = env.step(torch.tensor([[0.0, 1.0], [1.0, 0.0]]))
        assert env.single_action_space.shape == (2,) and reward.tolist() == [1.0, 1.0]
        assert type(env.env) is gymnasium.vector.SyncVectorEnv  # wrapped once
        view = make_vector_env("rec::Thing-v0", num_envs=2, array_type="numpy")
        assert type(view.reset(seed=0)[0]).__name__ == "ndarray"
        single = make_vector_env("rec::Thing-v0")
        assert single.reset(seed=0)[0].shape == (4,)


def test_a_make_that_returns_no_env_is_a_clear_error():
    with (
        register_backend(Backend("rec", make=lambda name, **kw: "made")),
        pytest.raises(
            TypeError, match="The rec backend's make returned str, not an env. A backend's make returns a"
        ),
    ):
        make_vector_env("rec::Thing-v0", num_envs=2)


def test_a_make_written_to_the_contract_before_keeps_working():
    """A make that takes the torch options and returns a TorchWrapper (vecrl-toy's, in tests/, is another)."""
    calls = []

    def make(env_name, *, num_envs=None, force_classic_api=False, discrete_to_continuous_act=False, **kwargs):
        calls.append(kwargs)
        return vecrl.TorchWrapper(
            cartpoles(num_envs),
            force_classic_api=force_classic_api,
            discrete_to_continuous_act=discrete_to_continuous_act,
        )

    with register_backend(Backend("old", make=make)):
        plain = make_vector_env("old::Thing-v0", num_envs=2)
        assert type(plain.env) is gymnasium.vector.SyncVectorEnv  # kept as it is
        env = make_vector_env(
            "old::Thing-v0", num_envs=2, force_classic_api=True, discrete_to_continuous_act=True
        )
        assert env.reset(seed=0).shape == (2, 4)
        observation, reward, done, info = env.step(torch.tensor([[0.0, 1.0], [1.0, 0.0]]))
        assert reward.tolist() == [1.0, 1.0] and env.single_action_space.shape == (2,)
    assert calls == [{}, {}]


@pytest.mark.parametrize(
    ("listed", "words"),
    [
        (lambda: 1 / 0, "raised ZeroDivisionError in vecrl_backends"),
        (lambda: ["not a backend"], "expected a list of vecrl.Backend"),
        (lambda: [Backend("no good", make=lambda name, **kw: None)], "lists a bad backend"),
    ],
)
def test_a_plugin_that_breaks_after_registering_is_named_and_the_others_still_serve(listed, words):
    class Plugin:
        broken = False

        @vecrl.hookimpl
        def vecrl_backends(self):
            return listed() if self.broken else [recording_backend("fine", [])]

    plugin = Plugin()
    vecrl.register_plugin(plugin, name="breaks-later")
    register_backend(recording_backend("other", []))
    plugin.broken = True
    assert vecrl.get_backend("other").prefix == "other"
    backends, broken = vecrl.registry.installed_backends()
    assert [b.prefix for b in backends] == ["other"]
    (error,) = broken.values()
    assert "'breaks-later'" in str(error) and words in str(error)
    with pytest.raises((TypeError, ValueError), match="breaks-later"):
        vecrl.list_backends()


def test_check_env_name_asks_the_backend_s_check_name_and_nothing_is_made():
    seen = []

    def check(name):
        seen.append(name)
        if name != "good":
            raise vecrl.UnknownEnvError(f"toy has no environment {name!r}")

    def make(name, **kwargs):
        raise AssertionError("check_env_name makes nothing")

    with isolated_registry(), register_backend(Backend("toy", make=make, check_name=check)):
        assert vecrl.check_env_name("toy::good") == "toy::good"
        with pytest.raises(vecrl.UnknownEnvError, match="toy has no environment 'bad'"):
            vecrl.check_env_name("toy::bad")
        with pytest.raises(ValueError, match="No vecrl backend serves the prefix 'toyy'"):
            vecrl.check_env_name("toyy::good")
    assert seen == ["good", "bad"]


@pytest.mark.parametrize(
    ("check_name", "error", "words"),
    [("vecrl_toy_nowhere", ValueError, "is no import path"), (3, TypeError, "check_name must be callable")],
)
def test_a_check_name_that_is_neither_a_function_nor_its_import_path_is_refused(check_name, error, words):
    with pytest.raises(error, match=words):
        Backend("toy", make="os.path:join", check_name=check_name)
