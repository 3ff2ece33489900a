#!/usr/bin/env bash
# Set up (scripts/setup.sh) and run the default test suite. Extra arguments go to pytest
# (e.g. `-m slow` for the longer tests).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export LITELLM_LOCAL_MODEL_COST_MAP=True PREFECT_SERVER_ANALYTICS_ENABLED=false
exec .venv/bin/python -m pytest -q "$@"
