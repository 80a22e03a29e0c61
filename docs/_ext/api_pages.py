"""Write the API reference's module pages from each public namespace's ``__all__``.

One page per namespace (``docs/api/generated/hphawkes_py.<name>.rst``) with autosummary tables of
its functions and classes and the values of its public constants; autosummary then writes one
page per object from the templates in ``docs/_templates/autosummary``. The lists come from the
package at build time, so a renamed private module or a new public name needs no edit here.
"""
from __future__ import annotations

import importlib
import inspect
from pathlib import Path

# (namespace, title): the order of the API reference
NAMESPACES = [
    ("hphawkes_py.hawkes", "Hawkes processes"),
    ("hphawkes_py.hawkes.etas", "Space-time ETAS (Hawkes processes with magnitudes)"),
    ("hphawkes_py.hawkes.multitype", "Multitype Hawkes processes"),
    ("hphawkes_py.kde", "Adaptive kernel density estimation"),
    ("hphawkes_py.sccs", "Self-controlled case series"),
    ("hphawkes_py.scan", "Spatial and space-time scan statistics"),
    ("hphawkes_py.mixture", "Dirichlet-process Gaussian mixtures"),
    ("hphawkes_py.datasets", "Bundled data sets"),
    ("hphawkes_py", "Backends and installation status"),
]
# names of the top-level package that are namespaces or metadata, not API objects
_TOP_LEVEL_SKIP = {"hawkes", "kde", "sccs", "scan", "mixture", "datasets", "__version__"}


def _summary_line(module) -> str:
    doc = inspect.getdoc(module) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _public(module):
    names = [n for n in getattr(module, "__all__", []) if not (module.__name__ == "hphawkes_py"
                                                                 and n in _TOP_LEVEL_SKIP)]
    functions, classes, exceptions, constants = [], [], [], []
    for name in names:
        obj = getattr(module, name)
        if inspect.isclass(obj) and issubclass(obj, BaseException):
            exceptions.append(name)
        elif inspect.isclass(obj):
            classes.append(name)
        elif callable(obj):
            functions.append(name)
        else:
            constants.append(name)
    return functions, classes, exceptions, constants


def _table(title: str, names: list[str], template: str) -> list[str]:
    if not names:
        return []
    out = [title, "-" * len(title), "", ".. autosummary::", "   :toctree: .", f"   :template: {template}",
           "   :nosignatures:", ""]
    out += [f"   {n}" for n in names]
    return out + [""]


def module_page(modname: str, title: str) -> str:
    module = importlib.import_module(modname)
    functions, classes, exceptions, constants = _public(module)
    heading = f"``{modname}``: {title}"
    out = [f".. _api-{modname}:", "", heading, "=" * len(heading), "",
           f".. module:: {modname}", "",
           _summary_line(module), "", f".. currentmodule:: {modname}", ""]
    out += _table("Functions", functions, "autosummary/function.rst")
    out += _table("Classes", classes, "autosummary/class.rst")
    out += _table("Exceptions and warnings", exceptions, "autosummary/class.rst")
    if constants:
        out += ["Constants", "---------", ""]
        for name in constants:
            value = repr(getattr(module, name))
            out += [f".. py:data:: {name}", "   :no-index:", "", "   .. code-block:: python", "",
                    f"      {name} = {value}", ""]
    return "\n".join(out) + "\n"


def write_pages(app, config=None) -> None:
    out_dir = Path(app.srcdir) / "api" / "generated"
    out_dir.mkdir(parents=True, exist_ok=True)
    for modname, title in NAMESPACES:
        text = module_page(modname, title)
        target = out_dir / f"{modname}.rst"
        # rewrite only on a change, so an incremental build does not reread every page
        if not target.exists() or target.read_text() != text:
            target.write_text(text)


def setup(app):
    # at config-inited, before Sphinx lists the source files (autosummary generates stubs only
    # for pages that exist by then)
    app.connect("config-inited", write_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
