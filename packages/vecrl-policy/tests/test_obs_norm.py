"""ObsNorm and a Policy that carries its statistics (no env: evaluate's use of them is tested in tests/)."""

import io
import pickle

import pytest
import torch

from vecrl_policy import ObsNorm, Policy


def test_statistics_are_the_mean_and_std_of_what_was_seen():
    data = torch.randn(500, 3, dtype=torch.float64) * torch.tensor([1.0, 10.0, 0.01]) + 5
    stats = ObsNorm()
    for batch in data.split(70):
        stats.update(batch)
    assert stats.count == 500
    torch.testing.assert_close(stats.mean, data.mean(dim=0))
    expected_std = data.var(dim=0, unbiased=False).clamp(min=1e-2).sqrt()  # min_variance floors entry 2
    torch.testing.assert_close(stats.std, expected_std)
    x = torch.randn(4, 3)
    torch.testing.assert_close(stats.normalize(x), ((x - data.mean(0)) / expected_std).clamp(-5, 5).float())


def test_masked_rows_and_merged_statistics_count_alike():
    data = torch.randn(10, 2)
    mask = torch.tensor([True, False] * 5)
    masked, merged = ObsNorm(), ObsNorm()
    masked.update(data, mask)
    for row in data[mask]:
        part = ObsNorm()
        part.update(row[None])
        merged.update(part)
    assert masked.count == merged.count == 5
    torch.testing.assert_close(masked.mean, merged.mean)
    torch.testing.assert_close(masked.std, merged.std)


def test_an_empty_obs_norm_leaves_observations_unchanged():
    x = torch.randn(3, 4)
    assert torch.equal(ObsNorm().normalize(x), x)
    assert torch.equal(ObsNorm(4).normalize(x), x)


def test_state_dict_and_torch_save_keep_everything():
    stats = ObsNorm(clip=3.0, min_variance=0.5)
    stats.update(torch.randn(20, 2))
    again = ObsNorm.from_state_dict(stats.state_dict())
    buffer = io.BytesIO()
    torch.save(stats, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)  # torch's safe default (weights_only=True) takes it
    for twin in (again, loaded, pickle.loads(pickle.dumps(stats))):
        assert (twin.count, twin.clip, twin.min_variance) == (20, 3.0, 0.5)
        assert torch.equal(twin.mean, stats.mean) and torch.equal(twin.std, stats.std)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: ObsNorm(0), "positive int"),
        (lambda: ObsNorm(clip=-1), "clip must be a positive number"),
        (lambda: ObsNorm(min_variance=float("nan")), "min_variance must be a positive number"),
        (lambda: ObsNorm().update(torch.zeros(3)), "2-D float tensor"),
        (lambda: ObsNorm().update(torch.zeros(3, 2, dtype=torch.int64)), "2-D float tensor"),
        (lambda: ObsNorm(2).update(torch.zeros(3, 4)), "observations of length 2"),
        (lambda: ObsNorm().load_state_dict({"count": 1}), "expects the keys"),
        (lambda: ObsNorm().mean, "has seen no observation"),
    ],
)
def test_bad_input_is_a_clear_error(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def saved(**changes):
    stats = ObsNorm()
    stats.update(torch.randn(10, 3, generator=torch.Generator().manual_seed(0)))
    return {**stats.state_dict(), **changes}


@pytest.mark.parametrize(
    ("state", "message"),
    [
        (saved(count=-3), "count that is an int >= 0, got -3"),
        (saved(count=2.5), "count that is an int >= 0, got 2.5"),  # (taken as 2 before)
        (saved(count="100"), "count that is an int >= 0, got '100'"),
        (saved(count=0), "count 0 hold sums that are not zero"),  # (the mean was the sum)
        (saved(sum=torch.tensor([float("nan"), 0.0, 0.0])), r"non-finite sum \(NaN or inf\)"),
        (saved(sum_of_squares=-torch.ones(3)), "negative sum of squares"),
        (saved(sum=torch.ones(2)), "of one length, got 2 and 3"),
        (saved(count=100, sum=None, sum_of_squares=None), "count=100 with no sums"),
        (saved(sum="x"), "the sum as a vector of numbers"),
    ],
)
def test_a_state_no_observations_could_give_is_refused_and_changes_nothing(state, message):
    stats = ObsNorm()
    stats.update(torch.ones(2, 3))
    with pytest.raises(ValueError, match=message):
        stats.load_state_dict(state)
    assert stats.count == 2 and torch.equal(stats.mean, torch.ones(3))
    assert ObsNorm.from_state_dict(saved(sum=[1.0, 2.0, 3.0])).mean.tolist() == [
        0.1,
        0.2,
        0.3,
    ]  # a list is a vector


@pytest.mark.parametrize(
    ("partial", "message"),
    [
        ((torch.tensor(-1), torch.zeros(3), torch.zeros(3)), "count that is an int >= 0"),
        ((torch.tensor(1), torch.zeros(3), torch.zeros(2)), "of one length, got 3 and 2"),
    ],
)
def test_partial_statistics_that_cannot_be_are_refused(partial, message):
    stats = ObsNorm()
    with pytest.raises(ValueError, match=message):
        stats.add_partial(*partial)
    assert stats.count == 0 and stats.size is None


def test_observations_that_are_not_finite_are_refused():
    stats = ObsNorm()
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="non-finite sum"):
            stats.update(torch.tensor([[bad, 0.0], [1.0, 1.0]]))
    assert stats.count == 0


def test_a_failed_load_changes_nothing():
    stats = ObsNorm()
    stats.update(torch.ones(2, 3))
    bad = {**ObsNorm(2).state_dict(), "clip": -1.0}
    with pytest.raises(ValueError):
        stats.load_state_dict(bad)
    assert stats.size == 3 and stats.count == 2 and stats.clip == 5.0


def test_a_policy_that_carries_its_statistics_runs_on_its_own():
    stats = ObsNorm()
    stats.update(torch.randn(100, 4) * 3 + 1)
    policy = Policy("Linear(4, 8) >> Tanh() >> LSTM(8, 2)")
    vector = torch.randn(policy.parameter_length)
    policy.set_parameters(vector)
    x = torch.randn(4)
    plain = policy.to_torch_module(vector)(stats.normalize(x[None])[0])[0]
    policy.obs_norm = stats
    stats.update(torch.full((50, 4), 100.0))  # later updates do not reach the policy's copy
    carried = policy(x)
    saved = pickle.loads(pickle.dumps(policy))
    saved.reset()
    torch.testing.assert_close(carried, plain)
    torch.testing.assert_close(saved(x), plain)
    torch.testing.assert_close(policy.to_torch_module(vector)(x)[0], plain)
    with pytest.raises(TypeError, match="policy.obs_norm must be"):
        policy.obs_norm = "stats"
