"""``vecrl evolve --log``: what each backend holds after a run, read back with the backend's own reader, and a
resumed run logging to the same place as a run never stopped."""

from __future__ import annotations

import csv
import signal
from pathlib import Path

import pytest
from test_evolve import finished, ran, vecrl_command

from vecrl.cli import main
from vecrl_evotorch.runs import RunFolder

RUN = ["gym::CartPole-v1", "--popsize", "8", "--generations", "3", "--seed", "5"]


def results(folder: Path) -> list[dict[str, str]]:
    with open(folder / "results.csv", newline="") as file:
        return list(csv.DictReader(file))


def test_tensorboard_holds_every_column_by_generation_the_settings_and_the_plot(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams import plugin_data_pb2

    folder = tmp_path / "run"
    assert main(["evolve", *RUN, "--out", str(folder), "--log", "tensorboard"]) == 0
    events = EventAccumulator(str(folder / "tensorboard"))
    events.Reload()
    table = results(folder)
    for column in [name for name in table[0] if name != "generation"]:
        logged = [(event.step, event.value) for event in events.Scalars(column)]
        assert logged == [(g, pytest.approx(float(row[column]))) for g, row in enumerate(table, 1)], column
    assert "evotorch/mean_eval" in events.Tags()["scalars"]
    start = events.PluginTagToContent("hparams")["_hparams_/session_start_info"]
    hparams = plugin_data_pb2.HParamsPluginData.FromString(start).session_start_info.hparams
    assert hparams["popsize"].number_value == 8 and hparams["env"].string_value == "gym::CartPole-v1"
    assert events.Tags()["images"] == ["plot"]


def test_a_run_killed_and_resumed_logs_each_generation_once_as_a_run_never_stopped(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    whole, stopped = tmp_path / "whole", tmp_path / "stopped"
    longer = [*RUN[:-4], "--generations", "6", "--seed", "5"]
    finished("evolve", *longer, "--out", str(whole), "--log", "tensorboard", "--log", "csv")
    process = vecrl_command("evolve", *longer, "--out", str(stopped), "--log", "tensorboard", "--log", "csv")
    while not (line := process.stdout.readline()).startswith("gen    3"):
        assert line, "the run ended before it could be stopped"
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    finished("evolve", "--resume", str(stopped))
    logged = {}
    for folder in (whole, stopped):
        events = EventAccumulator(str(folder / "tensorboard"))
        events.Reload()
        with open(folder / "log.csv", newline="") as file:
            rows = list(csv.DictReader(file))
        logged[folder] = (
            [(e.step, e.value) for e in events.Scalars("center_return")],
            [{k: v for k, v in row.items() if k != "seconds"} for row in rows],
        )
    assert logged[stopped] == logged[whole]
    assert [step for step, _ in logged[whole][0]] == [1, 2, 3, 4, 5, 6]


def test_mlflow_holds_the_metrics_params_and_files_of_one_run_a_resume_goes_on_with(tmp_path, monkeypatch):
    pytest.importorskip("mlflow")
    store = tmp_path / "mlruns"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store.as_uri())
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # (MLflow's file store, in maintenance mode)
    folder = tmp_path / "run"
    finished("evolve", *RUN, "--out", str(folder), "--log", "mlflow")
    finished("evolve", "--resume", str(folder), "--generations", "4")
    from mlflow.tracking import MlflowClient

    client = MlflowClient(store.as_uri())
    (run,) = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert run.info.run_name == "run" and run.data.params["popsize"] == "8"
    history = client.get_metric_history(run.info.run_id, "mean_return")
    table = results(folder)
    assert [(m.step, m.value) for m in history] == [
        (g, float(r["mean_return"])) for g, r in enumerate(table, 1)
    ]
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"plot.png", "champion.pickle"} <= artifacts


def test_wandb_offline_holds_the_rows_and_the_config(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    folder = tmp_path / "run"
    finished("evolve", *RUN, "--out", str(folder), "--log", "wandb")
    from wandb.proto import wandb_internal_pb2

    (log,) = (tmp_path / "wandb").glob("offline-run-*/run-*.wandb")
    steps, config = {}, {}
    for data in wandb_records(log.read_bytes()):
        record = wandb_internal_pb2.Record()
        record.ParseFromString(data)
        if record.WhichOneof("record_type") == "history":
            items = {item.key or "/".join(item.nested_key): item.value_json for item in record.history.item}
            steps[int(items["_step"])] = float(items["center_return"])
        elif record.WhichOneof("record_type") in ("config", "run"):
            updates = record.config.update if record.HasField("config") else record.run.config.update
            config.update({item.key: item.value_json for item in updates})
    table = results(folder)
    assert steps == {g: float(row["center_return"]) for g, row in enumerate(table, 1)}
    assert config["popsize"] == "8"
    saved = {path.name for path in (tmp_path / "wandb").glob("offline-run-*/files/*")}
    assert {"plot.png", "champion.pickle"} <= saved


def wandb_records(log: bytes) -> list[bytes]:
    """The records of an offline W&B run's ``.wandb`` file: after a 7-byte header, LevelDB's log format (32 KiB
    blocks of records, each a 7-byte header of checksum, length and type, a record split over blocks as FIRST,
    MIDDLE and LAST parts). (wandb 0.31 reads them in its Go core only.)"""
    assert log[:4] == b":W&B"
    records, part, position, block = [], b"", 7, 32768
    while position + 7 <= len(log):
        if block - position % block < 7:  # (a block's tail too short for a header is padding)
            position += block - position % block
            continue
        length, kind = int.from_bytes(log[position + 4 : position + 6], "little"), log[position + 6]
        data, position = log[position + 7 : position + 7 + length], position + 7 + length
        part += data
        if kind in (1, 4):  # FULL, LAST
            records.append(part)
            part = b""
    return records


def test_csv_log_holds_the_results_and_evotorch_s_status(tmp_path):
    folder = tmp_path / "run"
    assert main(["evolve", *RUN, "--out", str(folder), "--log", "csv"]) == 0
    with open(folder / "log.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    assert [row["generation"] for row in rows] == ["1", "2", "3"]
    for row, result in zip(rows, results(folder), strict=True):
        assert {key: float(row[key]) for key in result} == {key: float(v) for key, v in result.items()}
        assert float(row["evotorch/iter"]) == float(row["generation"])
    assert RunFolder(folder).settings()["log"] == ["csv"]
    # --overwrite removes what the loggers wrote in the folder
    assert main(["evolve", *RUN[:-4], "--generations", "1", "--out", str(folder), "--overwrite"]) == 0
    assert not (folder / "log.csv").exists()


def test_a_logger_not_installed_is_one_line_before_anything_is_written(tmp_path, monkeypatch, capsys):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "wandb" else find_spec(name, *a)
    )
    assert main(["evolve", *RUN, "--out", str(tmp_path / "run"), "--log", "wandb"]) == 2
    assert "--log wandb: wandb is not installed (pip install wandb)" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
    assert ran("evolve", *RUN, "--out", str(tmp_path / "run"), "--log", "neptune").returncode == 2


def test_a_logger_that_cannot_start_says_where_it_logs_and_leaves_no_run(tmp_path, monkeypatch, capsys):
    pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "nosuch://nowhere")
    assert main(["evolve", *RUN, "--out", str(tmp_path / "run"), "--log", "csv", "--log", "mlflow"]) == 2
    err = capsys.readouterr().err
    assert "vecrl evolve: error: --log mlflow: cannot start logging:" in err and "MLFLOW_TRACKING_URI" in err
    assert "Traceback" not in err and not (tmp_path / "run").exists()
