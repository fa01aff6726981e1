"""Every public class of the summary modules is re-exported by its package."""

from __future__ import annotations

import importlib
import inspect

import pytest

import forge_app
import forge_app.summary.transformers
import forge_domain
import forge_domain.summary
import forge_domain.tools

MODULES = [
    (forge_domain.tools, "forge_domain.tools._shell_edits"),
    (forge_domain.summary, "forge_domain.summary._summary"),
    (forge_domain.tools, "forge_domain.tools._kinds"),
    (forge_domain.tools, "forge_domain.tools._todo"),
    (forge_domain.tools, "forge_domain.tools._text_protocol"),
    (forge_domain.tools, "forge_domain.tools._catalog"),
    (forge_domain.tools, "forge_domain.tools._outcome"),
    (forge_domain.tools, "forge_domain.tools._spec"),
    (forge_app.summary.transformers, "forge_app.summary.transformers._base"),
    (forge_app.summary.transformers, "forge_app.summary.transformers._dedupe_role"),
    (forge_app.summary.transformers, "forge_app.summary.transformers._drop_role"),
    (forge_app.summary.transformers, "forge_app.summary.transformers._keep_last_operation"),
    (forge_app.summary.transformers, "forge_app.summary.transformers._strip_working_dir"),
    (forge_app.summary.transformers, "forge_app.summary.transformers._summary"),
    (forge_app, "forge_app.summary._frame"),
]


@pytest.mark.parametrize(("package", "module_name"), MODULES, ids=[m for _, m in MODULES])
def test_public_classes_are_exported(package, module_name):
    module = importlib.import_module(module_name)
    classes = {
        name
        for name, value in vars(module).items()
        if inspect.isclass(value) and value.__module__ == module_name and not name.startswith("_")
    }
    assert classes - set(package.__all__) == set()


@pytest.mark.parametrize(
    "package",
    [
        forge_domain,
        forge_domain.summary,
        forge_domain.tools,
        forge_app,
        forge_app.summary.transformers,
    ],
)
def test_all_names_resolve(package):
    missing = [name for name in package.__all__ if not hasattr(package, name)]
    assert missing == []
