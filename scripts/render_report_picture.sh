#!/usr/bin/env bash
# Regenerates docs/report.png, the README's picture of `quarkplan report`: the
# DeepSeek-V3 plan on one MI300X, rendered in headless Chromium.
#   scripts/render_report_picture.sh      (after ./quarkplan.sh build)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
scripts/setup.sh --browser
scripts/fetch_models.sh >/dev/null
node tests/browser/report.test.js --quarkplan build/quarkplan --source . --picture docs/report.png
