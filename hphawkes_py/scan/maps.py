"""Interactive HTML maps of the clusters: a self-contained SVG page, or Leaflet through folium.

Each cluster is drawn as its circle or ellipse polygon (:mod:`hphawkes_py.scan.geometry`) with a
popup: cluster rank, locations, observed and expected cases, relative risk, LLR, p-value and, for
space-time clusters, the time window; the locations are small dots; clusters with p <= 0.05 are
red, the others blue. In the SVG page a window smaller than 8 pixels across (a single location,
radius 0) is drawn as a 6-pixel ring so that it shows and can be clicked.

``engine="svg"`` (the default) writes one HTML file holding the drawing (SVG), its data and a few
lines of JavaScript (click a cluster for its popup, wheel to zoom, drag to pan): it needs no
package and no network, so it opens anywhere, offline included. Lat/long data are drawn in an
equirectangular projection (longitude scaled by the cosine of the mean latitude), without a
base map.

``engine="folium"`` builds a Leaflet map (folium, an optional dependency): lat/long data over
OpenStreetMap tiles, Cartesian data on a blank plane (Leaflet's simple CRS). That page loads
Leaflet's JavaScript and CSS (and jQuery/Bootstrap for the popups) from public CDNs and the tiles
from OpenStreetMap: without the network it does not draw the clusters.
"""
from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np

__all__ = ["cluster_map"]


def _need_folium():
    try:
        import folium  # noqa: F401
    except ImportError:
        raise ImportError("the Leaflet cluster map needs folium: pip install folium (or use engine='svg', which "
                          "needs nothing)") from None


def _rows(props: dict) -> list:
    rows = [("Cluster", props["CLUSTER"]), ("Locations", props["NUMBER_LOC"]), ("Observed cases", props["OBSERVED"])]
    if "CATEGORY" in props:  # ordinal, multinomial: the category table
        rows += [("Category", props["CATEGORY"]), ("Cases by category", props["CAT_OBS"]),
                 ("Expected by category", props["CAT_EXP"]), ("Relative risk by category", props["CAT_RR"])]
    elif "MEAN_IN" in props:  # the normal models: the means inside and outside
        rows += [("Mean inside", f"{props['MEAN_IN']:.4g}"), ("Mean outside", f"{props['MEAN_OUT']:.4g}"),
                 ("Variance", f"{props['VARIANCE']:.4g}")]
    elif props["EXPECTED"] is None:  # a model without expected cases
        pass
    else:
        rows += [("Expected cases", f"{props['EXPECTED']:.2f}"),
                 ("Relative risk", "infinity" if props["REL_RISK"] is None else f"{props['REL_RISK']:.3g}")]
    rows += [("Log likelihood ratio", f"{props['LLR']:.6f}"), ("P-value", f"{props['P_VALUE']:.4g}")]
    if "START_DATE" in props:
        rows.append(("Time window", f"{props['START_DATE']} to {props['END_DATE']}"))
    return [[str(k), str(v)] for k, v in rows]


def cluster_map(result, path=None, *, engine: str = "svg", max_clusters: int | None = None, n_vertices: int = 64,
                tiles: bool = True, width: int = 900, height: int = 650):
    """Build (and with ``path`` write) an interactive HTML map of the clusters.

    Parameters
    ----------
    result : ScanResult
    path : path, optional
        The HTML file to write.
    engine : {"svg", "folium"}
        ``"svg"``: one self-contained page (no package, no network); ``"folium"``: a Leaflet map
        (needs folium; the page loads Leaflet and the tiles from the network).
    max_clusters : int, optional
        Draw the first ``max_clusters`` clusters only (default all).
    n_vertices : int
        Vertices of each cluster polygon.
    tiles : bool
        ``engine="folium"``, lat/long data: OpenStreetMap base tiles; False draws a blank map.
    width, height : int
        ``engine="svg"``: size of the drawing, pixels.

    Returns
    -------
    str, folium.Map or pathlib.Path
        The page (``"svg"``) or the map (``"folium"``), or ``path`` once written.

    Raises
    ------
    ImportError
        ``engine="folium"`` without folium.
    ValueError
        An unknown ``engine``, a negative ``max_clusters``.

    Examples
    --------
    >>> from hphawkes_py.scan import cluster_map
    >>> g = hp.datasets.load_grave()
    >>> res = hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"], n_replicates=9,
    ...                         seed=1, backend="cpu", progress=False)
    >>> page = cluster_map(res)
    >>> page.count('<polygon class="cluster') == len(res.clusters)
    True
    """
    from .geometry import cluster_polygons
    from ._output_common import _check_result

    if engine not in ("svg", "folium"):
        raise ValueError(f"engine must be 'svg' (self-contained) or 'folium' (Leaflet), got {engine!r}")
    if engine == "folium":
        _need_folium()
    if not isinstance(tiles, (bool, np.bool_)):
        raise TypeError(f"tiles must be True or False, got {type(tiles).__name__} {tiles!r}")
    _check_result(result)
    if max_clusters is not None and (isinstance(max_clusters, bool) or not isinstance(max_clusters, (int, np.integer))
                                     or max_clusters < 0):
        raise ValueError(f"max_clusters must be a whole number >= 0, got {max_clusters!r}")
    polys = cluster_polygons(result, n_vertices=n_vertices)[:max_clusters]
    latlong = result.distance == "great_circle"
    coords = np.asarray(result._loc_coords, dtype=float)
    if engine == "folium":
        out = _folium_map(polys, coords, latlong, tiles)
        if path is None:
            return out
        path = Path(path)
        out.save(str(path))
        return path
    for v, name in ((width, "width"), (height, "height")):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 100:
            raise ValueError(f"{name} must be a whole number of pixels >= 100, got {v!r}")
    page = _svg_page(result, polys, coords, latlong, int(width), int(height))
    if path is None:
        return page
    path = Path(path)
    path.write_text(page, encoding="utf-8")
    return path


def _svg_page(result, polys, coords, latlong, width, height) -> str:
    """The self-contained page: an SVG of the locations and cluster polygons, their popups' data
    as JSON, and the script that shows a popup on click and zooms/pans the view."""
    from .result import _TITLES

    # drawing coordinates (east, north): lat/long locations are (lat, long), rings (long, lat)
    pts = coords[:, ::-1].copy() if latlong else coords.copy()
    rings = [np.asarray(r, dtype=float) for _, r in polys]
    if latlong:
        lat0 = float(np.radians(np.mean(pts[:, 1])))
        pts[:, 0] *= np.cos(lat0)
        for r in rings:
            r[:, 0] *= np.cos(lat0)
    allp = np.vstack([pts] + rings)
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    pad = 20.0
    scale = min((width - 2 * pad) / max(hi[0] - lo[0], 1e-12), (height - 2 * pad) / max(hi[1] - lo[1], 1e-12))

    def screen(a):
        return np.column_stack([pad + (a[:, 0] - lo[0]) * scale, height - pad - (a[:, 1] - lo[1]) * scale])

    dots = "".join(f'<circle cx="{x:.2f}" cy="{y:.2f}" r="2"/>' for x, y in screen(pts))
    shapes = []
    data = []
    for k, ((props, _), ring) in enumerate(zip(polys, rings)):
        xy = screen(ring[:-1])
        if np.ptp(xy, axis=0).max() < 8:
            # a window of one location (radius 0) or smaller than the dots: drawn as a 6-pixel ring so
            # that it can be seen and clicked
            t = np.linspace(0, 2 * np.pi, 24, endpoint=False)
            xy = xy.mean(axis=0) + 6 * np.column_stack([np.cos(t), np.sin(t)])
        kind = "significant" if props["P_VALUE"] <= 0.05 else "other"
        shapes.append(f'<polygon class="cluster {kind}" data-k="{k}" points="'
                      + " ".join(f"{x:.2f},{y:.2f}" for x, y in xy) + f'"><title>Cluster {props["CLUSTER"]}</title>'
                      '</polygon>')
        data.append(_rows(props))
    title = html.escape(f"{_TITLES.get(result.model, result.model)}: {len(polys)} cluster(s), "
                        f"{result.n_locations} locations")
    # the popups' data as JSON inside a script element: "</" written as "<\/" so no value can end it
    blob = json.dumps(data).replace("</", "<\\/")
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 8px; }}
svg {{ border: 1px solid #999; background: #fff; cursor: grab; }}
.locations circle {{ fill: #555; opacity: 0.6; }}
.cluster {{ stroke-width: 2; fill-opacity: 0.25; vector-effect: non-scaling-stroke; cursor: pointer; }}
.significant {{ stroke: #d7191c; fill: #d7191c; }}
.other {{ stroke: #2c7bb6; fill: #2c7bb6; }}
#popup {{ position: absolute; display: none; background: #fff; border: 1px solid #333; padding: 6px;
          font-size: 13px; box-shadow: 2px 2px 6px #888; }}
#popup th {{ text-align: left; padding-right: 8px; }}
</style></head>
<body>
<div>{title} (red: p &le; 0.05; click a cluster; wheel to zoom, drag to pan)</div>
<svg id="map" width="{width}" height="{height}" viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">
<g class="locations">{dots}</g>
<g class="clusters">{"".join(shapes)}</g>
</svg>
<div id="popup"></div>
<script type="application/json" id="cluster-data">{blob}</script>
<script>
(function () {{
  var data = JSON.parse(document.getElementById("cluster-data").textContent);
  var svg = document.getElementById("map"), pop = document.getElementById("popup");
  var vb = [0, 0, {width}, {height}];
  function show(k, ev) {{
    var t = document.createElement("table");
    data[k].forEach(function (row) {{
      var tr = t.insertRow(), th = document.createElement("th"), td = document.createElement("td");
      th.textContent = row[0]; td.textContent = row[1]; tr.appendChild(th); tr.appendChild(td);
    }});
    pop.replaceChildren(t);
    pop.style.left = (ev.pageX + 10) + "px"; pop.style.top = (ev.pageY + 10) + "px"; pop.style.display = "block";
  }}
  document.querySelectorAll(".cluster").forEach(function (p) {{
    p.addEventListener("click", function (ev) {{ ev.stopPropagation(); show(+p.dataset.k, ev); }});
  }});
  svg.addEventListener("click", function () {{ pop.style.display = "none"; }});
  svg.addEventListener("wheel", function (ev) {{
    ev.preventDefault();
    var f = ev.deltaY > 0 ? 1.25 : 0.8, r = svg.getBoundingClientRect();
    var mx = vb[0] + (ev.clientX - r.left) / r.width * vb[2], my = vb[1] + (ev.clientY - r.top) / r.height * vb[3];
    vb = [mx - (mx - vb[0]) * f, my - (my - vb[1]) * f, vb[2] * f, vb[3] * f];
    svg.setAttribute("viewBox", vb.join(" "));
  }}, {{passive: false}});
  var drag = null;
  svg.addEventListener("mousedown", function (ev) {{ drag = [ev.clientX, ev.clientY, vb[0], vb[1]]; }});
  window.addEventListener("mouseup", function () {{ drag = null; }});
  window.addEventListener("mousemove", function (ev) {{
    if (!drag) return;
    var r = svg.getBoundingClientRect();
    vb[0] = drag[2] - (ev.clientX - drag[0]) / r.width * vb[2];
    vb[1] = drag[3] - (ev.clientY - drag[1]) / r.height * vb[3];
    svg.setAttribute("viewBox", vb.join(" "));
  }});
}})();
</script>
</body></html>
"""


def _folium_map(polys, coords, latlong, tiles):
    """The Leaflet map of ``engine="folium"``."""
    import folium

    # Leaflet points are (lat, lng): lat/long data as they are; Cartesian data (x, y) as (y, x) on a plane
    pts = coords if latlong else coords[:, ::-1]
    ring_pts = [[(y, x) for x, y in ring] for _, ring in polys]
    allp = np.vstack([pts] + [np.asarray(r) for r in ring_pts]) if ring_pts else pts
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    centre = [float((lo[0] + hi[0]) / 2), float((lo[1] + hi[1]) / 2)]
    if latlong:
        m = folium.Map(location=centre, tiles="OpenStreetMap" if tiles else None)
    else:
        m = folium.Map(crs="Simple", tiles=None, location=centre)
    m.fit_bounds([[float(lo[0]), float(lo[1])], [float(hi[0]), float(hi[1])]])
    dots = folium.FeatureGroup(name="locations")
    for p in pts:
        folium.CircleMarker(location=[float(p[0]), float(p[1])], radius=2, color="#555555", weight=1,
                            fill=True, fill_opacity=0.6).add_to(dots)
    dots.add_to(m)
    layer = folium.FeatureGroup(name="clusters")
    for (props, _), ring in zip(polys, ring_pts):
        table = "<table>" + "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                                    for k, v in _rows(props)) + "</table>"
        folium.Polygon(locations=[[float(a), float(b)] for a, b in ring],
                       color="#d7191c" if props["P_VALUE"] <= 0.05 else "#2c7bb6", weight=2, fill=True,
                       fill_opacity=0.25, tooltip=f"Cluster {props['CLUSTER']}",
                       popup=folium.Popup(table, max_width=320)).add_to(layer)
    layer.add_to(m)
    folium.LayerControl().add_to(m)
    return m
