#!/usr/bin/env bash
# Tags a release of every module of this repository at one version.
#
#   scripts/release.sh v0.2.0          prepare and tag (local only)
#   scripts/release.sh v0.2.0 --push   and push the commit and the tags
#
# Each module requires the others at the released version (go.mod's require
# lines; the replace lines stay, for work in this tree: a module that is
# required rather than the main one has its replace lines ignored, so users
# resolve the required version). The script sets those versions and commits
# them, builds every module from a module proxy of the tree at that version
# (scripts/check-modproxy.sh), then tags the modules in dependency order: the
# core as VERSION, a module in directory DIR as DIR/VERSION (the form the go
# command looks for), each after the modules it requires.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-}
push=${2:-}
if ! [[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "usage: scripts/release.sh vMAJOR.MINOR.PATCH [--push]" >&2
  exit 2
fi
if [ -n "$push" ] && [ "$push" != --push ]; then
  echo "usage: scripts/release.sh vMAJOR.MINOR.PATCH [--push]" >&2
  exit 2
fi
if [ -n "$(git status --porcelain)" ]; then
  echo "the working tree has changes: commit or stash them first" >&2
  exit 1
fi
export GOWORK=off
mods=$(go run ./scripts/modules order)
for dir in $mods; do
  tag=$version
  [ "$dir" = . ] || tag="$dir/$version"
  if git rev-parse -q --verify "refs/tags/$tag" >/dev/null; then
    echo "tag $tag exists already" >&2
    exit 1
  fi
done

go run ./scripts/modules require "$version"
if [ -n "$(git status --porcelain)" ]; then
  git commit -q -am "release: every module requires $version of this repository's modules"
fi
scripts/check-modproxy.sh

tags=()
for dir in $mods; do
  tag=$version
  [ "$dir" = . ] || tag="$dir/$version"
  git tag -a "$tag" -m "$tag"
  tags+=("$tag")
  echo "tagged $tag"
done
if [ "$push" = --push ]; then
  git push origin HEAD "${tags[@]}"
else
  echo "to publish: git push origin HEAD ${tags[*]}"
fi
