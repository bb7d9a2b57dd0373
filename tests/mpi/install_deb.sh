#!/usr/bin/env bash
# The Debian package (README "Install"): `cpack -G DEB` in the build tree,
# unpacked with dpkg-deb -x into a temporary directory, works as an
# installed tree does (install.sh): the unpacked `tracefold` records and
# names call sites, and consumers build with find_package and pkg-config.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/install/check_prefix.bash"

# Compressed with zstd, not the configured gzip: the package holds the
# unstripped RelWithDebInfo binaries (over 600 MB), and gzip took half of
# the test's time; the contents, which the checks below read, are the same.
if (cd "$BUILD" && cpack -G DEB -B "$WORK/pkg" -D CPACK_DEBIAN_COMPRESSION_TYPE=zstd \
  >"$WORK/cpack.txt" 2>&1); then
  deb=$(ls "$WORK"/pkg/*.deb 2>/dev/null | head -n 1)
  if [[ -n $deb ]] && dpkg-deb -x "$deb" "$WORK/root"; then
    ok "cpack: $(basename "$deb"), depends: $(dpkg-deb -f "$deb" Depends | cut -c1-80)"
    # The .pc file finds its prefix from where it is, like the CLI its
    # library: the unpacked copy works where it lies.
    check_prefix deb "$WORK/root/usr"
  else
    bad "cpack made no package: $(tail -n 20 "$WORK/cpack.txt")"
  fi
else
  bad "cpack -G DEB failed: $(tail -n 20 "$WORK/cpack.txt")"
fi
finish
