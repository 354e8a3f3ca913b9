"""``vecrl evolve --log``: each generation's row of the results table (and EvoTorch's status), the run's
settings as hyper-parameters and its files (plot, champion, videos) sent to TensorBoard, MLflow, W&B or a
CSV file, as the generation is saved.

TensorBoard's event files go to the run's ``tensorboard/`` folder and the CSV to its ``log.csv``; MLflow and
W&B log where their own settings say (``MLFLOW_TRACKING_URI``, ``WANDB_MODE``, ``WANDB_PROJECT``, ...), in a
run named after the run's folder. A resumed run logs to the same run: the ids are kept in the run's state,
and generations logged after the last one saved (a run killed mid-generation) are logged again, replacing
theirs where the backend can (TensorBoard purges them, the CSV drops them).

EvoTorch's own loggers hang on the searcher, which the run pickles with its state every generation (an MLflow
client or a W&B run does not pickle), and they log at the searcher's step, before the center is scored: so
the backends are called here, once the generation's row is whole.

Examples:
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> loggers = open_loggers(["csv"], folder, {"env": "gym::CartPole-v1"}, ids={}, resumed_after=0)
    >>> loggers[0].generation(1, {"mean_return": 20.5, "env_steps": 1200})
    >>> close_loggers(loggers)
    >>> (folder / "log.csv").read_text().splitlines()
    ['generation,mean_return,env_steps', '1,20.5,1200']
"""

from __future__ import annotations

import csv
import importlib.util
import json
import math
import shutil
from collections.abc import Callable, Mapping, Sequence
from numbers import Real
from pathlib import Path
from typing import Any, Protocol

from vecrl_evotorch.run_settings import center_column

#: ``--log``'s choices: the backend -> the module it needs, and how to install it.
LOGGERS: dict[str, tuple[str, str]] = {
    "tensorboard": ("tensorboard", "pip install tensorboard"),
    "mlflow": ("mlflow", "pip install mlflow"),
    "wandb": ("wandb", "pip install wandb"),
    "csv": ("csv", ""),
}
#: Where a backend logs, said when it cannot start (its own settings, not the command's).
WHERE = {
    "mlflow": "MLflow logs where MLFLOW_TRACKING_URI says: a tracking server (http://HOST:5000), or"
    " sqlite:///mlflow.db with the whole mlflow package (pip install mlflow; mlflow-skinny has no database)",
    "wandb": "W&B logs to its server once logged in (wandb login), or offline with WANDB_MODE=offline",
}
TENSORBOARD_FOLDER = "tensorboard"
CSV_LOG = "log.csv"


class RunLogger(Protocol):
    """Where a run's generations, settings and files are logged."""

    def generation(self, generation: int, row: Mapping[str, float]) -> None: ...

    def file(self, path: Path) -> None: ...

    def close(self) -> None: ...


def missing_logger_modules(names: Sequence[str]) -> list[str]:
    """One line per backend of ``names`` whose package is not installed, saying how to install it.

    Examples:
        >>> missing_logger_modules(["csv"])
        []
    """
    return [
        f"--log {name}: {module} is not installed ({LOGGERS[name][1]})"
        for name in dict.fromkeys(names)
        if importlib.util.find_spec(module := LOGGERS[name][0]) is None
    ]


def open_loggers(
    names: Sequence[str],
    folder: Path,
    settings: Mapping[str, Any],
    ids: dict[str, str],
    resumed_after: int,
) -> list[RunLogger]:
    """The loggers ``names`` of the run in ``folder`` with ``settings``, resumed after generation
    ``resumed_after`` (0: a new run). ``ids`` holds the MLflow and W&B run ids of the run (filled here for a
    new one: the caller keeps it with the run's state)."""
    makers: dict[str, Callable[..., RunLogger]] = {
        "tensorboard": _TensorBoard,
        "mlflow": _MLflow,
        "wandb": _Wandb,
        "csv": _Csv,
    }
    loggers: list[RunLogger] = []
    for name in dict.fromkeys(names):
        try:
            loggers.append(makers[name](folder, settings, ids, resumed_after))
        except BaseException as error:
            close_loggers(loggers)
            if not isinstance(error, Exception):
                raise
            said = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            where = f" ({WHERE[name]})" if name in WHERE else ""
            raise RuntimeError(f"--log {name}: cannot start logging: {said}{where}") from error
    return loggers


def remove_logs(folder: Path) -> None:
    """Remove what the loggers wrote in the run's ``folder`` (a new run that could not start)."""
    (folder / CSV_LOG).unlink(missing_ok=True)
    events = folder / TENSORBOARD_FOLDER
    if events.is_dir():
        shutil.rmtree(events)


def close_loggers(loggers: Sequence[RunLogger]) -> None:
    """Close every logger (the first error raised after all are closed)."""
    errors = []
    for logger in loggers:
        try:
            logger.close()
        except Exception as error:  # (each backend gets its close, whatever another raised)
            errors.append(error)
    if errors:
        raise errors[0]


def status_scalars(status: Mapping[str, Any]) -> dict[str, float]:
    """The real numbers among a searcher's ``status`` (its tensors and solutions left out), named
    ``evotorch/KEY``.

    Examples:
        >>> status_scalars({"mean_eval": 1.5, "center": [0.0, 1.0], "iter": 3})
        {'evotorch/mean_eval': 1.5, 'evotorch/iter': 3.0}
    """
    scalars = {}
    for key, value in status.items():
        if hasattr(value, "numel") and value.numel() == 1:
            value = value.item()
        if isinstance(value, Real) and not isinstance(value, bool):
            scalars[f"evotorch/{key}"] = float(value)
    return scalars


def _parameters(settings: Mapping[str, Any]) -> dict[str, str | float | int | bool]:
    """The settings as hyper-parameters: numbers and words as they are, anything else (None, lists) as JSON."""
    return {
        key: value if isinstance(value, (str, int, float, bool)) else json.dumps(value)
        for key, value in settings.items()
    }


class _TensorBoard:
    """torch's ``SummaryWriter`` over the run's ``tensorboard/`` folder: scalars by generation, the settings in
    TensorBoard's HParams tab, the plot as an image."""

    def __init__(self, folder: Path, settings: Mapping[str, Any], ids: dict[str, str], resumed_after: int):
        from torch.utils.tensorboard import SummaryWriter
        from torch.utils.tensorboard.summary import hparams

        # (a resumed run purges what was logged after its last saved generation: those are run again)
        self.writer = SummaryWriter(str(folder / TENSORBOARD_FOLDER), purge_step=resumed_after + 1)
        if resumed_after == 0:
            # the settings alone, the metrics being the scalars of the same names (add_hparams would write a
            # run of its own, with one value per metric)
            file_writer = self.writer.file_writer
            assert file_writer is not None  # (made by the constructor)
            for summary in hparams(_parameters(settings), {center_column(settings): math.nan}):
                file_writer.add_summary(summary)

    def generation(self, generation: int, row: Mapping[str, float]) -> None:
        for key, value in row.items():
            self.writer.add_scalar(key, value, generation)
        self.writer.flush()

    def file(self, path: Path) -> None:
        if path.suffix == ".png":
            import matplotlib.image

            self.writer.add_image(path.stem, matplotlib.image.imread(path)[..., :3], dataformats="HWC")
            self.writer.flush()

    def close(self) -> None:
        self.writer.close()


class _MLflow:
    """An MLflow run named after the folder: metrics by generation, the settings as params, files as
    artifacts."""

    def __init__(self, folder: Path, settings: Mapping[str, Any], ids: dict[str, str], resumed_after: int):
        import mlflow

        self.mlflow = mlflow
        new = "mlflow" not in ids
        run = mlflow.start_run(run_id=ids.get("mlflow"), run_name=folder.resolve().name)
        ids["mlflow"] = run.info.run_id
        if new:  # (MLflow refuses a param logged again with another value: a resumed run's are its first)
            mlflow.log_params(_parameters(settings))

    def generation(self, generation: int, row: Mapping[str, float]) -> None:
        self.mlflow.log_metrics(dict(row), step=generation)

    def file(self, path: Path) -> None:
        self.mlflow.log_artifact(str(path))

    def close(self) -> None:
        self.mlflow.end_run()


class _Wandb:
    """A W&B run named after the folder (resumed by its id): the row by generation, the settings as its
    config, files saved with it."""

    def __init__(self, folder: Path, settings: Mapping[str, Any], ids: dict[str, str], resumed_after: int):
        import wandb

        self.folder = folder
        self.run = wandb.init(
            name=folder.resolve().name,
            config=dict(settings),
            id=ids.get("wandb"),
            resume="allow" if "wandb" in ids else None,
        )
        ids["wandb"] = self.run.id

    def generation(self, generation: int, row: Mapping[str, float]) -> None:
        self.run.log(dict(row), step=generation)

    def file(self, path: Path) -> None:
        self.run.save(str(path), base_path=str(path.parent), policy="now")

    def close(self) -> None:
        self.run.finish()


class _Csv:
    """``log.csv`` in the run's folder: a line per generation, its columns those of the first line logged."""

    def __init__(self, folder: Path, settings: Mapping[str, Any], ids: dict[str, str], resumed_after: int):
        self.path = folder / CSV_LOG
        kept: list[dict[str, str]] = []
        if resumed_after > 0 and self.path.is_file():
            with open(self.path, newline="") as file:
                kept = [row for row in csv.DictReader(file) if int(row["generation"]) <= resumed_after]
        self.columns: list[str] | None = list(kept[0]) if kept else None
        self.file_ = open(self.path, "w", newline="")  # noqa: SIM115  (open for the run: close() closes it)
        self.writer: csv.DictWriter[str] | None = None
        if self.columns is not None:
            self.writer = self._started(self.columns)
            self.writer.writerows(kept)
            self.file_.flush()

    def _started(self, columns: list[str]) -> csv.DictWriter[str]:
        writer = csv.DictWriter(self.file_, columns, extrasaction="ignore")
        writer.writeheader()
        return writer

    def generation(self, generation: int, row: Mapping[str, float]) -> None:
        if self.writer is None:
            self.writer = self._started(["generation", *row])
        self.writer.writerow({"generation": generation, **row})
        self.file_.flush()

    def file(self, path: Path) -> None:
        del path  # (the files are in the run's folder beside it)

    def close(self) -> None:
        self.file_.close()
