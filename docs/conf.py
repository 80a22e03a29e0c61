"""Sphinx configuration of the hphawkes_py documentation (built by ``bash scripts/docs.sh``).

The API reference is generated from each public namespace's ``__all__`` at build time
(``_ext/api_pages.py``), the performance and GPU tables from ``benchmarks/results/*.json``
(``_ext/perf_tables.py``), and the gallery by running ``examples/plot_*.py`` (sphinx-gallery).
"""
from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(REPO))

import hphawkes_py  # noqa: E402

# ArviZ announces a refactor on import; it is not about this project's documentation.
warnings.filterwarnings("ignore", category=FutureWarning, module="arviz")

project = "hphawkes_py"
author = "hphawkes_py contributors"
copyright = "the hphawkes_py contributors"
release = hphawkes_py.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "api_pages",
    "perf_tables",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.md5", "auto_examples/*.codeobj.json"]
root_doc = "index"
default_role = "code"

# --- API reference: autosummary stubs from the generated module pages (api_pages writes them)
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
# numpydoc: the class templates list members themselves, so numpydoc must not add a second list
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# --- gallery: every example runs at build time, so the gallery is tested with the docs
sphinx_gallery_conf = {
    "examples_dirs": str(REPO / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    # HPHAWKES_DOCS_NO_GALLERY=1 (scripts/docs.sh --no-gallery) builds the pages without running
    # the examples, for quick edits of the text
    "plot_gallery": "False" if os.environ.get("HPHAWKES_DOCS_NO_GALLERY") else "True",
    "matplotlib_animations": False,
    "show_memory": False,
    "min_reported_time": 1,
}

# --- HTML
html_theme = "pydata_sphinx_theme"
html_title = f"hphawkes_py {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_show_sourcelink = False
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "header_links_before_dropdown": 8,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_context = {"default_mode": "light"}
html_sidebars = {"index": [], "install": [], "reproducing": [], "performance": [], "gpu": [], "r_reference": []}

# The R package's help pages, rendered to HTML by scripts/r_reference.sh (docs.sh runs it into
# _build/r-extra/r/ before Sphinx); copied into the site as r/ when present.
_r_extra = DOCS / "_build" / "r-extra"
html_extra_path = [str(_r_extra)] if (_r_extra / "r" / "index.html").exists() else []
