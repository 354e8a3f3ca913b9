"""The API reference's words that name other code: make_vector_env's list of which shipped backends take each
of vecrl's keywords is what the installed backends declare."""

from __future__ import annotations

import inspect
import re

import vecrl
from vecrl.backend import OPTIONAL_KEYWORDS
from vecrl.registry import WELL_KNOWN_BACKENDS, installed_backends


def test_make_vector_env_names_the_backends_that_take_each_of_vecrl_s_keywords():
    listed = dict(re.findall(r"- ``(\w+)`` \(([\w, ]+)\):", inspect.getdoc(vecrl.make_vector_env) or ""))
    assert sorted(listed) == sorted(OPTIONAL_KEYWORDS)
    shipped = [backend for backend in installed_backends()[0] if backend.prefix in WELL_KNOWN_BACKENDS]
    assert shipped
    for keyword, names in listed.items():
        said = set(names.split(", "))
        assert said <= set(WELL_KNOWN_BACKENDS), keyword
        for backend in shipped:
            takes = backend.keywords is None or keyword in backend.keywords
            assert (backend.prefix in said) == takes, (keyword, backend.prefix)
