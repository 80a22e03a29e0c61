test_that("kde_window reads GeoTIFF and GeoJSON windows and surfaces write back to GeoTIFF", {
  skip_if_no_hphawkes()
  skip_if_not(reticulate::py_module_available("rasterio") && reticulate::py_module_available("shapely"),
              "the gis extra (rasterio, shapely) is not installed")
  dir <- tempfile("kdegis")
  dir.create(dir)
  tif <- file.path(dir, "m.tif")
  gj <- file.path(dir, "a.geojson")
  py_reference(paste(
    "import json, numpy as np, rasterio",
    "from rasterio.transform import Affine",
    sprintf("tif, gj = %s, %s", deparse(tif), deparse(gj)),
    "v = np.ones((20, 30)); v[0, 0] = 0",
    "with rasterio.open(tif, 'w', driver='GTiff', height=20, width=30, count=1, dtype='float64', crs='EPSG:32633',",
    "                   transform=Affine(2.0, 0, 100.0, 0, -2.0, 540.0), nodata=-9999.0) as ds: ds.write(v, 1)",
    "ring = [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]",
    "json.dump({'type': 'Feature', 'geometry': {'type': 'Polygon', 'coordinates': [ring]}}, open(gj, 'w'))",
    "out = 0", sep = "\n"))
  win <- kde_window("geotiff", path = tif)
  expect_identical(c(win$x0, win$y0, win$cell_size), c(100, 500, 2))
  expect_identical(win$n_inside, 599L)
  expect_match(win$crs, "32633")
  pts <- cbind(seq(110, 150, length.out = 12), seq(505, 535, length.out = 12))
  fit <- kde_fit(pts, tif, method = "fixed", bandwidth = 5, backend = "cpu")
  s <- kde_surface(fit)
  out <- file.path(dir, "s.tif")
  expect_identical(kde_write_geotiff(s, out), out)
  back <- py_reference(paste(
    "import rasterio, numpy as np",
    sprintf("ds = rasterio.open(%s)", deparse(out)),
    "v = ds.read(1); v[v == ds.nodata] = np.nan",
    "out = {'v': v, 'epsg': ds.crs.to_epsg(), 't': list(ds.transform)[:6]}", sep = "\n"))
  expect_identical(back$v, s$z)
  expect_identical(back$epsg, 32633L)
  expect_identical(back$t, c(2, 0, 100, 0, -2, 540))
  vw <- kde_window("vector", path = gj, cell_size = 1)
  expect_identical(vw$n_inside, 100L)
  expect_null(vw$crs)
})
