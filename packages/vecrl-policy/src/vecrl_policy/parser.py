"""str_to_net: build a network from a string such as ``"Linear(4, 16) >> Tanh() >> Linear(16, 2)"``.

The text is parsed with Python's ``ast`` and walked against a whitelist; nothing is ever evaluated.
Allowed: layer calls ``Name(arg, ..., key=arg)`` chained with ``>>``, where each argument is a literal
(number, string, bool, None, or a tuple/list of those), a negated number, or the name of a constant
given as a keyword argument to ``str_to_net``. Comments and line breaks are free.
"""

from __future__ import annotations

import ast
import inspect
import io
import tokenize
from typing import Any, TypeAlias

import torch
from torch import nn

from vecrl.checks import did_you_mean
from vecrl.errors import VecrlError
from vecrl_policy import layers
from vecrl_policy.chain import Chain

#: Layers of vecrl_policy a network string can name; they shadow torch.nn's names (RNN, LSTM, GRU).
OWN_LAYERS: dict[str, type[nn.Module]] = {
    cls.__name__: cls
    for cls in (layers.RNN, layers.LSTM, layers.GRU, layers.Clip, layers.Bin, layers.Slice, layers.Round)
}

#: The default limit on the parameters of one network: a string that asks for more (a typo such as
#: Linear(50000, 50000), 10 GB) is refused before anything is allocated. ``max_parameters=`` raises it.
MAX_PARAMETERS = 10_000_000

# One layer call: its node, class, positional and keyword arguments.
_Layer: TypeAlias = tuple[ast.Call, type[nn.Module], list[Any], dict[str, Any]]

# The text is wrapped in parentheses on lines of their own so that it may span several lines.
_PREFIX_LINES = 1


class NetParsingError(VecrlError, ValueError):
    """A network string could not be turned into a module; ``line`` and ``column`` are 1-based."""

    def __init__(self, message: str, text: str, line: int | None = None, column: int | None = None) -> None:
        self.message = message
        self.line = line
        self.column = column
        where = "" if line is None else f" (line {line}, column {column})"
        pointer = ""
        source_lines = text.splitlines()
        if line is not None and column is not None and 1 <= line <= len(source_lines):
            pointer = f"\n    {source_lines[line - 1]}\n    {' ' * (column - 1)}^"
        super().__init__(f"Cannot parse the network string{where}: {message}{pointer}")


def str_to_net(text: str, *, max_parameters: int = MAX_PARAMETERS, **constants: Any) -> nn.Module:
    """Build the network described by ``text``; names of layers resolve to vecrl_policy, then torch.nn.

    A single layer call gives that layer; a ``>>`` chain gives a ``Chain``. Keyword arguments are
    the named constants the text may use as arguments. A network of more than ``max_parameters``
    parameters (10 million by default) is refused before it is built: the layers are first made on
    torch's meta device, which allocates nothing, and counted.

    Examples:
        >>> net = str_to_net(
        ...     '''
        ...     Linear(obs_length, 16) >> Tanh()  # hidden layer
        ...     >> LSTM(16, 8) >> Linear(8, act_length, bias=False)
        ...     ''',
        ...     obs_length=4,
        ...     act_length=2,
        ... )
        >>> len(net)
        4
    """
    if not isinstance(text, str):
        raise TypeError(f"str_to_net expects the network as a string, got {type(text).__name__}.")
    if isinstance(max_parameters, bool) or not isinstance(max_parameters, int) or max_parameters < 1:
        raise TypeError(f"max_parameters must be a positive int, got {max_parameters!r}.")
    return _Builder(text, constants, max_parameters).build()


class _Builder:
    def __init__(self, text: str, constants: dict[str, Any], max_parameters: int) -> None:
        self.text = text
        self.constants = constants
        self.used: set[str] = set()  # the constants the text names
        self.max_parameters = max_parameters

    def error(self, message: str, node: ast.expr | ast.keyword | None = None) -> NetParsingError:
        if node is None:
            return NetParsingError(message, self.text)
        return NetParsingError(message, self.text, node.lineno - _PREFIX_LINES, node.col_offset + 1)

    def build(self) -> nn.Module:
        if not self.text.strip():
            raise NetParsingError("the string is empty; expected e.g. 'Linear(4, 2) >> Tanh()'.", self.text)
        self.check_brackets()
        try:
            tree = ast.parse(f"(\n{self.text}\n)", mode="eval")
        except (RecursionError, MemoryError) as error:
            raise NetParsingError(
                "the string is nested or chained too deeply for Python's parser; build a network that"
                " large as an nn.Module in Python and pass it to Policy instead.",
                self.text,
            ) from error
        except SyntaxError as error:
            line = None if error.lineno is None else error.lineno - _PREFIX_LINES
            column = error.offset if line is not None and 1 <= line <= len(self.text.splitlines()) else None
            raise NetParsingError(
                f"invalid syntax ({error.msg}); expected layer calls chained with '>>'.",
                self.text,
                line if column is not None else None,
                column,
            ) from error
        if isinstance(tree.body, ast.Tuple) and not tree.body.elts:  # only comments and blank lines
            lines = self.text.splitlines()
            first = next(number for number, line in enumerate(lines, start=1) if line.strip())
            raise NetParsingError(
                "the string holds no layer, only comments or blank lines; expected e.g."
                " 'Linear(4, 2) >> Tanh()'.",
                self.text,
                first,
                len(lines[first - 1]) - len(lines[first - 1].lstrip()) + 1,
            )
        layers = [self.layer(node) for node in self.chain_operands(tree.body)]
        self.check_size(layers)
        self.check_placement_constants()
        modules = [self.instantiate(node, cls, args, kwargs) for node, cls, args, kwargs in layers]
        return modules[0] if len(modules) == 1 else Chain(*modules)

    def check_placement_constants(self) -> None:
        """Refuse ``device=`` or ``dtype=`` that the text does not use: they read as the policy's placement,
        which comes from its parameters, and would silently do nothing."""
        unused = [name for name in ("device", "dtype") if name in self.constants and name not in self.used]
        if unused:
            given = ", ".join(f"{name}={self.constants[name]!r}" for name in unused)
            raise TypeError(
                f"str_to_net() got {given}, which the network string does not use. A policy's network runs on the device"
                " and dtype of the parameters it is given: move those instead, e.g."
                " policy.set_parameters(population.to('cuda')) or evaluate(policy, env, population.to('cuda'))."
            )

    def check_size(self, layers: list[_Layer]) -> None:
        """Count the parameters on torch's meta device (nothing is allocated); refuse too many."""
        total = 0
        for node, cls, args, kwargs in layers:
            with torch.device("meta"):
                module = self.instantiate(node, cls, args, kwargs)
            total += sum(parameter.numel() for parameter in module.parameters())
        if total > self.max_parameters:
            raise NetParsingError(
                f"the network has {total:,} parameters, more than the limit of {self.max_parameters:,}"
                f" ({total * 4 / 2**30:.1f} GiB per network in float32). If you meant it, pass"
                f" max_parameters={total} (to str_to_net or Policy).",
                self.text,
            )

    def check_brackets(self) -> None:
        """The text must balance its own brackets: it may not close the parentheses wrapped around it."""
        openers: list[tuple[str, int, int]] = []
        try:
            for token in tokenize.generate_tokens(io.StringIO(self.text).readline):
                line, column = token.start
                if token.type == tokenize.OP and token.string in "([{":
                    openers.append((token.string, line, column + 1))
                elif token.type == tokenize.OP and token.string in ")]}":
                    if not openers:
                        raise NetParsingError(f"unbalanced {token.string!r}.", self.text, line, column + 1)
                    openers.pop()
        except (tokenize.TokenError, SyntaxError):
            pass  # an unclosed bracket is reported below; other syntax errors by ast.parse
        if openers:
            bracket, line, column = openers[-1]
            raise NetParsingError(f"{bracket!r} is never closed.", self.text, line, column)

    def chain_operands(self, node: ast.expr) -> list[ast.Call]:
        """The calls of a ``>>`` chain, left to right (walked without recursion: chains may be long)."""
        operands: list[ast.Call] = []
        pending = [node]
        while pending:
            node = pending.pop()
            if isinstance(node, ast.BinOp):
                if not isinstance(node.op, ast.RShift):
                    raise self.error(
                        f"the operator {type(node.op).__name__} is not allowed; only '>>' chains layers.",
                        node,
                    )
                pending += [node.right, node.left]
            elif isinstance(node, ast.Call):
                operands.append(node)
            else:
                raise self.error(
                    f"expected a layer call such as 'Linear(4, 2)', found {_describe(node)}.", node
                )
        return operands

    def layer(self, node: ast.Call) -> _Layer:
        """The class and the arguments of one layer call, checked against the whitelist."""
        if not isinstance(node.func, ast.Name):
            raise self.error(
                f"a layer must be called by its bare name (e.g. 'Linear(...)'), found {_describe(node.func)}.",
                node.func,
            )
        cls = self.layer_class(node.func)
        args = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.error("starred arguments ('*x') are not allowed.", arg)
            args.append(self.value(arg))
        kwargs = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise self.error("'**' keyword unpacking is not allowed.", keyword.value)
            if keyword.arg.startswith("_"):
                raise self.error(f"the keyword {keyword.arg!r} is private; it is not allowed.", keyword)
            kwargs[keyword.arg] = self.value(keyword.value)
        return node, cls, args, kwargs

    def instantiate(
        self, node: ast.Call, cls: type[nn.Module], args: list[Any], kwargs: dict[str, Any]
    ) -> nn.Module:
        self.check_no_bool_sizes(node, cls, args, kwargs)
        try:
            return cls(*args, **kwargs)
        except Exception as error:
            raise self.error(f"{cls.__name__}(...) failed: {type(error).__name__}: {error}", node) from error

    def check_no_bool_sizes(
        self, node: ast.Call, cls: type[nn.Module], args: list[Any], kwargs: dict[str, Any]
    ) -> None:
        """Refuse True or False where the layer's signature says int (torch takes ``Linear(True, 2)`` as a
        layer of input size 1)."""
        try:
            signature = inspect.signature(cls)
            bound = signature.bind_partial(*args, **kwargs).arguments
        except (TypeError, ValueError):  # no signature, or arguments it does not bind: torch's error follows
            return
        for name, value in bound.items():
            if isinstance(value, bool) and signature.parameters[name].annotation in (int, "int"):
                raise self.error(
                    f"{cls.__name__}'s {name} must be an int, but got {value}; write the number"
                    " (e.g. the observation length).",
                    node,
                )

    def layer_class(self, name_node: ast.Name) -> type[nn.Module]:
        name = name_node.id
        if name.startswith("_"):
            raise self.error(f"the name {name!r} is private; only public layer names are allowed.", name_node)
        cls = OWN_LAYERS.get(name, getattr(nn, name, None))
        if inspect.isclass(cls) and issubclass(cls, nn.modules.lazy.LazyModuleMixin):
            raise self.error(
                f"{name} makes its parameters on its first call, but a policy lays out its flat parameter vector"
                f" before that: use {name.removeprefix('Lazy')}, with its input size (e.g. {name.removeprefix('Lazy')}(obs_length, ...)).",
                name_node,
            )
        if inspect.isclass(cls) and issubclass(cls, nn.Module):
            return cls
        known = sorted(set(OWN_LAYERS) | {n for n in dir(nn) if _is_public_layer(getattr(nn, n))})
        raise self.error(
            f"unknown layer {name!r}: it is neither a vecrl_policy layer nor a torch.nn module."
            f"{did_you_mean(name, known)}",
            name_node,
        )

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool, type(None))):
            return node.value
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, (ast.USub, ast.UAdd))
            and isinstance(node.operand, ast.Constant)
            and isinstance(node.operand.value, (int, float))
            and not isinstance(node.operand.value, bool)
        ):
            return -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value
        if isinstance(node, (ast.Tuple, ast.List)):
            items = [self.value(item) for item in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Name):
            if node.id.startswith("_"):
                raise self.error(f"the name {node.id!r} is private; it is not allowed.", node)
            if node.id not in self.constants:
                available = ", ".join(sorted(self.constants)) or "none were given"
                raise self.error(
                    f"unknown constant {node.id!r} (constants: {available});"
                    f" pass it as a keyword argument, e.g. str_to_net(text, {node.id}=...).",
                    node,
                )
            self.used.add(node.id)
            return self.constants[node.id]
        if isinstance(node, ast.Call):
            raise self.error("calls are not allowed as arguments; only literals and constants are.", node)
        raise self.error(
            f"arguments must be literals or constant names, found {_describe(node)}.",
            node,
        )


def _is_public_layer(obj: Any) -> bool:
    return inspect.isclass(obj) and issubclass(obj, nn.Module) and not obj.__name__.startswith("_")


_NODE_NAMES = {
    ast.Attribute: "an attribute access",
    ast.Subscript: "a subscript",
    ast.Lambda: "a lambda",
    ast.JoinedStr: "an f-string",
    ast.Call: "a call",
    ast.BinOp: "an arithmetic expression",
    ast.Name: "a bare name",
}


def _describe(node: ast.AST) -> str:
    return _NODE_NAMES.get(type(node), f"a {type(node).__name__} expression")
