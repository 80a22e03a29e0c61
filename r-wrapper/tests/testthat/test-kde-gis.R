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

test_that("kde_window passes crs= through (explicit reprojection) and kde_reproject_points is exact", {
  skip_if_no_hphawkes()
  skip_if_not(reticulate::py_module_available("rasterio") && reticulate::py_module_available("shapely"),
              "the gis extra (rasterio, shapely) is not installed")
  # EPSG:4326 -> EPSG:3857 in closed form (spherical Mercator, R = 6378137 m)
  ll <- rbind(c(1, 1), c(-73.98, 40.75))
  got <- kde_reproject_points(ll, "EPSG:4326", 3857L)
  R <- 6378137
  ref <- cbind(R * ll[, 1] * pi / 180, R * log(tan(pi / 4 + ll[, 2] * pi / 360)))
  expect_equal(dim(got), c(2L, 2L))
  expect_lt(max(abs(got - ref)), 1e-6)
  expect_error(kde_reproject_points(ll, "EPSG:99999999", 3857), "src_crs='EPSG:99999999' is not a known")
  dir <- tempfile("kdegis2")
  dir.create(dir)
  tif <- file.path(dir, "u.tif")
  gj <- file.path(dir, "ll.geojson")
  py_reference(paste(
    "import json, numpy as np, rasterio",
    "from rasterio.transform import Affine",
    sprintf("tif, gj = %s, %s", deparse(tif), deparse(gj)),
    "with rasterio.open(tif, 'w', driver='GTiff', height=20, width=30, count=1, dtype='float64', crs='EPSG:32633',",
    "                   transform=Affine(100.0, 0, 500000.0, 0, -100.0, 4990000.0), nodata=-9999.0) as ds:",
    "    ds.write(np.ones((20, 30)), 1)",
    "ring = [[14.0, 44.5], [16.0, 44.5], [16.0, 45.5], [14.0, 45.5], [14.0, 44.5]]",
    "json.dump({'type': 'Feature', 'geometry': {'type': 'Polygon', 'coordinates': [ring]}}, open(gj, 'w'))",
    "out = 0", sep = "\n"))
  w <- kde_window("geotiff", path = tif, crs = "EPSG:3857", cell_size = 150)
  expect_match(w$crs, "3857")
  expect_identical(w$cell_size, 150)
  # Web Mercator at ~45 N stretches areas by 1/cos^2(45 deg) = 2
  expect_lt(abs(w$area / (20 * 30 * 100^2) - 2), 0.15)
  v <- kde_window("vector", path = gj, cell_size = 1000, crs = "EPSG:32633", source_crs = "EPSG:4326")
  expect_match(v$crs, "32633")
  Rm <- 6371008.8
  area <- Rm^2 * 2 * pi / 180 * (sin(45.5 * pi / 180) - sin(44.5 * pi / 180))
  expect_lt(abs(v$area / area - 1), 0.01)
  expect_error(kde_window("vector", path = gj, cell_size = 1000, crs = "EPSG:32633"), "has no CRS.*source_crs=")
  expect_error(kde_window("geotiff", path = tif, crs = "bogus"), "crs='bogus' is not a known")
})
