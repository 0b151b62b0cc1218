#!/usr/bin/env bash
# Screenshot a deepfix HTML report with headless Chromium, to look at the layout.
#
# Usage: scripts/screenshot_report.sh [REPORT.html] [OUT.png] [WIDTH] [HEIGHT]
#   Without REPORT.html (or when it does not exist) a realistic hand-built sample is
#   rendered first by scripts/render_sample_report.py (needs the project's venv).
# Needs Debian's chromium (apt-get install -y chromium). Every network feature of the
# browser is off: the report must render from the file alone.
set -euo pipefail

html="${1:-/tmp/report.html}"
png="${2:-${html%.html}.png}"
width="${3:-1280}"
height="${4:-2400}"
here="$(cd "$(dirname "$0")" && pwd)"

if [[ ! -f "$html" ]]; then
    python "$here/render_sample_report.py" "$html"
fi

profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --user-data-dir="$profile" --window-size="${width},${height}" \
    --screenshot="$png" "file://$(realpath "$html")" 2>/dev/null
echo "screenshot: $png"
