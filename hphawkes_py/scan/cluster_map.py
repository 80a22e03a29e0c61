"""An interactive HTML map of the clusters (Leaflet through folium, an optional dependency).

Each cluster is drawn as its circle or ellipse polygon (:mod:`hphawkes_py.scan.geometry`) with a
popup: cluster rank, locations, observed and expected cases, relative risk, LLR, p-value and, for
space-time clusters, the time window; the locations are small dots. Lat/long data are drawn on
an OpenStreetMap base layer; Cartesian data on a blank plane (Leaflet's simple CRS, the data's
own units).

What needs the network: folium's page loads Leaflet's JavaScript and CSS (and jQuery/Bootstrap
for the popups) from public CDNs, and the base tiles from OpenStreetMap. The cluster geometry and
popups are inside the file, but without those scripts the page does not draw them; for a map that
needs no network, write GeoJSON (:func:`hphawkes_py.scan.geometry.write_geojson`) or the PNG of
:func:`hphawkes_py.scan.plot_clusters`.
"""
from __future__ import annotations

import html
from pathlib import Path

import numpy as np

__all__ = ["cluster_map"]


def _need_folium():
    try:
        import folium  # noqa: F401
    except ImportError:
        raise ImportError("the HTML cluster map needs folium: pip install folium (or write GeoJSON/KML, which need "
                          "nothing)") from None


def _popup(props: dict) -> str:
    rows = [("Cluster", props["CLUSTER"]), ("Locations", props["NUMBER_LOC"]), ("Observed cases", props["OBSERVED"]),
            ("Expected cases", f"{props['EXPECTED']:.2f}"),
            ("Relative risk", "infinity" if props["REL_RISK"] is None else f"{props['REL_RISK']:.3g}"),
            ("Log likelihood ratio", f"{props['LLR']:.6f}"), ("P-value", f"{props['P_VALUE']:.4g}")]
    if "START_DATE" in props:
        rows.append(("Time window", f"{props['START_DATE']} to {props['END_DATE']}"))
    return "<table>" + "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
                               for k, v in rows) + "</table>"


def cluster_map(result, path=None, *, max_clusters: int | None = None, n_vertices: int = 64, tiles: bool = True):
    """Build (and with ``path`` write) an interactive Leaflet map of the clusters.

    Parameters
    ----------
    result : ScanResult
    path : path, optional
        The HTML file to write.
    max_clusters : int, optional
        Draw the first ``max_clusters`` clusters only (default all).
    n_vertices : int
        Vertices of each cluster polygon.
    tiles : bool
        Lat/long data: OpenStreetMap base tiles (network); False draws the clusters on a blank map.

    Returns
    -------
    folium.Map or pathlib.Path
        The map, or ``path`` once written.

    Raises
    ------
    ImportError
        folium is not installed.

    Examples
    --------
    >>> from hphawkes_py.scan import cluster_map
    >>> g = hp.datasets.load_grave()
    >>> res = hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g["case"], 1 - g["case"], n_replicates=9,
    ...                         seed=1, backend="cpu", progress=False)
    >>> m = cluster_map.cluster_map(res)          # doctest: +SKIP
    >>> m.save("clusters.html")                           # doctest: +SKIP
    """
    _need_folium()
    import folium

    from .geometry import cluster_polygons
    from .outputs import _check_result

    _check_result(result)
    if max_clusters is not None and (isinstance(max_clusters, bool) or not isinstance(max_clusters, (int, np.integer))
                                     or max_clusters < 0):
        raise ValueError(f"max_clusters must be a whole number >= 0, got {max_clusters!r}")
    polys = cluster_polygons(result, n_vertices=n_vertices)[:max_clusters]
    latlong = result.distance == "great_circle"
    coords = np.asarray(result._loc_coords, dtype=float)
    # Leaflet points are (lat, lng): lat/long data as they are; Cartesian data (x, y) as (y, x) on a plane
    pts = coords if latlong else coords[:, ::-1]
    ring_pts = [[(y, x) for x, y in ring] for _, ring in polys]
    allp = np.vstack([pts] + [np.asarray(r) for r in ring_pts]) if ring_pts else pts
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    if latlong:
        m = folium.Map(location=[float((lo[0] + hi[0]) / 2), float((lo[1] + hi[1]) / 2)],
                       tiles="OpenStreetMap" if tiles else None)
    else:
        m = folium.Map(crs="Simple", tiles=None, location=[float((lo[0] + hi[0]) / 2), float((lo[1] + hi[1]) / 2)])
    m.fit_bounds([[float(lo[0]), float(lo[1])], [float(hi[0]), float(hi[1])]])
    dots = folium.FeatureGroup(name="locations")
    for p in pts:
        folium.CircleMarker(location=[float(p[0]), float(p[1])], radius=2, color="#555555", weight=1,
                            fill=True, fill_opacity=0.6).add_to(dots)
    dots.add_to(m)
    layer = folium.FeatureGroup(name="clusters")
    for (props, _), ring in zip(polys, ring_pts):
        significant = props["P_VALUE"] <= 0.05
        folium.Polygon(locations=[[float(a), float(b)] for a, b in ring], color="#d7191c" if significant else "#2c7bb6",
                       weight=2, fill=True, fill_opacity=0.25, tooltip=f"Cluster {props['CLUSTER']}",
                       popup=folium.Popup(_popup(props), max_width=320)).add_to(layer)
    layer.add_to(m)
    folium.LayerControl().add_to(m)
    if path is None:
        return m
    path = Path(path)
    m.save(str(path))
    return path
