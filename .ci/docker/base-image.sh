#!/usr/bin/env bash
# Build the local base image the Dockerfile runs on where no image registry is reachable:
# Debian bookworm (minbase, from the mirror this machine's apt uses) with its python3 (3.11)
# and venv, plus this machine's extra CA certificates so pip can reach PyPI through a
# TLS-inspecting proxy. Prints the image's tag. Cached by tag: the tag carries a hash of this
# script, so a second run builds nothing and an edited script builds anew.
#
#   bash .ci/docker/base-image.sh            # -> kafka-shim-base:bookworm-<hash>
#   docker build --network host --build-arg BASE_IMAGE=$(bash .ci/docker/base-image.sh) .
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tag="kafka-shim-base:bookworm-$(sha256sum "$here/base-image.sh" | cut -c1-12)"
if docker image inspect "$tag" >/dev/null 2>&1; then
    echo "$tag"
    exit 0
fi

# The first deb822 or one-line "deb" source naming a Debian archive (not -security).
mirror=$(sed -n -E 's#^(URIs:|deb)[[:space:]]+(\[[^]]*\][[:space:]]+)?(https?://[^[:space:]]*/debian)/?([[:space:]]|$).*#\3#p' \
    /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null | head -n 1 || true)
mirror=${mirror:-http://deb.debian.org/debian}
command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap >&2; }

rootfs=$(mktemp -d /tmp/kafka-shim-rootfs.XXXXXX)
# debootstrap can leave the target's /proc (or /sys) mounted where its own unmount failed (seen
# here: tar then read a live /proc and failed, and rm -rf walked into it); nothing under them
# belongs in the image.
unmount_pseudo_filesystems() {
    for fs in proc sys; do
        if mountpoint -q "$rootfs/$fs"; then umount -l "$rootfs/$fs"; fi
    done
}
trap 'unmount_pseudo_filesystems; rm -rf "$rootfs"' EXIT
echo "debootstrap bookworm from $mirror into $rootfs" >&2
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
    bookworm "$rootfs" "$mirror" >&2
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/"
    chroot "$rootfs" update-ca-certificates >&2
fi
# What a container never needs: package lists and caches, docs, man pages, translations.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/* "$rootfs"/usr/share/info/*
unmount_pseudo_filesystems
tar -C "$rootfs" --exclude=./proc/* --exclude=./sys/* -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
    --change 'CMD ["python3"]' \
    - "$tag" >&2
# Earlier versions of this base image are never used again.
docker images kafka-shim-base --format '{{.Repository}}:{{.Tag}}' | grep -vxF "$tag" | xargs -r docker rmi >&2 || true
echo "$tag"
