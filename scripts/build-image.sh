#!/usr/bin/env bash
# Builds sift's container image from deploy/Containerfile: a static
# x86_64-unknown-linux-musl sift, the bundled plugin components and a static
# busybox as `cp` (the Deployment's initContainer) and `tar` (`kubectl cp`),
# FROM scratch, non-root.
#
#   bash scripts/build-image.sh [IMAGE]      # default: sift:<workspace version>
#
# Uses buildah, podman or docker, whichever is found first and works
# (BUILDER=docker to choose). The build context (target/image/) is
# prepared here, so the image build itself needs no registry or network.
# Environment:
#   BUILDER   buildah | podman | docker
#   BUSYBOX   a statically linked busybox (default: `busybox` on PATH;
#             Debian/Ubuntu: apt-get install busybox-static)
#   STORAGE_DRIVER=vfs  for buildah/podman where overlay mounts are not
#             allowed (inside a container)
# Then push it, e.g. `buildah push sift:0.1.0 docker://registry.example.com/sift:0.1.0`,
# and set that name in deploy/manifests/30-deployment.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."

die() {
  echo "build-image: $*" >&2
  exit 1
}
say() { echo "build-image: $*"; }

# Whether an ELF file needs no dynamic loader (no PT_INTERP), as an image
# FROM scratch requires. (ldd is no test: it exits 0 on static-pie.)
is_static() {
  if command -v readelf >/dev/null; then
    ! readelf -lW "$1" | grep -q 'INTERP'
  elif command -v file >/dev/null; then
    file -L "$1" | grep -Eq 'statically linked|static-pie linked'
  else
    say "note: neither readelf nor file found; not checking that $1 is static"
  fi
}

version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' Cargo.toml)
image=${1:-sift:$version}
target=x86_64-unknown-linux-musl
target_dir=${CARGO_TARGET_DIR:-target}
context=target/image

[ "$(uname -m)" = x86_64 ] || die "this builds an x86_64 image; on $(uname -m), set up an x86_64 musl cross toolchain and edit \$target"

# 1. Choose the image builder first, so a missing one fails fast.
usable() {
  case $1 in
    buildah) command -v buildah >/dev/null ;;
    podman) command -v podman >/dev/null ;;
    docker) command -v docker >/dev/null && docker info >/dev/null 2>&1 ;;
    *) die "BUILDER=$1: use buildah, podman or docker" ;;
  esac
}
if [ -n "${BUILDER:-}" ]; then
  usable "$BUILDER" || die "BUILDER=$BUILDER is not installed (or, for docker, its daemon is not reachable: docker info)"
  builder=$BUILDER
else
  builder=
  for b in buildah podman docker; do
    if usable "$b"; then
      builder=$b
      break
    fi
  done
  [ -n "$builder" ] || die "no image builder: install buildah (apt-get install buildah), podman or docker (with a running daemon)"
fi
say "image builder: $builder"

# 2. A static busybox, which runs as `cp` and `tar` in the image.
busybox=${BUSYBOX:-$(command -v busybox || true)}
[ -n "$busybox" ] && [ -f "$busybox" ] || die "no busybox: install a static one (Debian/Ubuntu: apt-get install busybox-static) or set BUSYBOX=/path/to/busybox"
if ! is_static "$busybox"; then
  die "$busybox is dynamically linked; a FROM scratch image needs a static one (Debian/Ubuntu: apt-get install busybox-static)"
fi

# 3. sift, static, for musl.
if ! rustup target list --installed | grep -qx "$target"; then
  say "adding the Rust target $target"
  rustup target add "$target" || die "cannot add the Rust target $target (rustup needs network once: rustup target add $target)"
fi
if ! command -v musl-gcc >/dev/null; then
  say "note: no musl-gcc; ring's C code is built with the system cc (if that fails: apt-get install musl-tools)"
fi
say "building sift for $target"
cargo build --quiet --release -p sift-host --target "$target"
bin=$target_dir/$target/release/sift
[ -x "$bin" ] || die "cargo built no $bin"
if ! is_static "$bin"; then
  die "$bin is dynamically linked; a FROM scratch image needs a static binary"
fi

# 4. The bundled plugin components.
bash scripts/build-plugins.sh
shopt -s nullglob
components=(target/plugins/*.wasm)
[ ${#components[@]} -gt 0 ] || die "no components in target/plugins/ after scripts/build-plugins.sh"

# 5. The build context: only what the image holds. COPY makes every file
# root's; the components are 0644 so that the initContainer's copies stay
# writable by sift's user (a component can be replaced in place).
rm -rf "$context"
mkdir -p "$context/plugins" "$context/bin" "$context/var/cache" "$context/sift-cache"
if command -v strip >/dev/null; then
  strip -o "$context/sift" "$bin" # symbols off: 57 -> 44 MB; panic messages stay
else
  cp "$bin" "$context/sift"
fi
chmod 0555 "$context/sift"
install -m 0555 "$busybox" "$context/bin/cp"
install -m 0555 "$busybox" "$context/bin/tar"
install -m 0644 "${components[@]}" "$context/plugins/"
cp deploy/Containerfile "$context/Containerfile"
say "context $context: sift $(du -h "$context/sift" | cut -f1), ${#components[@]} components, busybox as cp and tar"

# 6. The image.
case $builder in
  buildah) buildah bud --layers=false --build-arg "VERSION=$version" -f "$context/Containerfile" -t "$image" "$context" ;;
  podman) podman build --build-arg "VERSION=$version" -f "$context/Containerfile" -t "$image" "$context" ;;
  docker) docker build --build-arg "VERSION=$version" -f "$context/Containerfile" -t "$image" "$context" ;;
esac || die "$builder could not build the image (for buildah/podman inside a container, try STORAGE_DRIVER=vfs)"
say "built $image with $builder"
say "next: push it to your registry and set it as the image in deploy/manifests/30-deployment.yaml (deploy/README.md)"
